"""Topologies: levels, the SIZE:ALPHA:RATE[:NAME] parser, rank digits, and profile [[level]] tables.

Expected values are worked out by hand: β = 1/rate, digits d_i(r) = ⌊r/(s₀⋯s_{i−1})⌋ mod s_i,
and a message crosses the outermost level whose digit differs.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel import (
    InputError,
    Level,
    LinkParams,
    ParseError,
    Topology,
    UnitError,
    load_profile,
    parse_level,
)
from costmodel.links import link_from_options, topology_from_options

F = Fraction
LINK = LinkParams(alpha_s=F(1), beta_s_per_byte=F(1))


def topo(*sizes: int) -> Topology:
    return Topology(tuple(Level(size=s, link=LINK) for s in sizes))


# -- parse_level ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size", "alpha", "beta", "name"),
    [
        ("8:1us:150GB/s", 8, F(1, 10**6), F(1, 150 * 10**9), ""),
        ("8:1us:150GB/s:nvlink", 8, F(1, 10**6), F(1, 150 * 10**9), "nvlink"),
        # an inverse rate is β itself: 0.04 ns/B = 1/(25 GB/s)
        ("4:5us:0.04ns/B", 4, F(5, 10**6), F(1, 25 * 10**9), ""),
        # 200 Gb/s = 25 GB/s
        ("4:5us:200Gb/s:ib", 4, F(5, 10**6), F(1, 25 * 10**9), "ib"),
        (" 2 : 1.5 µs : 1 GB/s : rack ", 2, F(3, 2 * 10**6), F(1, 10**9), "rack"),
        ("1:0s:1GB/s", 1, F(0), F(1, 10**9), ""),
    ],
)
def test_parse_level(text, size, alpha, beta, name):
    level = parse_level(text)
    assert (level.size, level.link.alpha_s, level.link.beta_s_per_byte, level.name) == (size, alpha, beta, name)
    assert level.link.gamma_s_per_byte == 0
    assert level.link.source == f"--level {text}"


def test_parse_level_passes_a_level_through():
    level = Level(size=2, link=LINK, name="x")
    assert parse_level(level) is level


BAD_LEVELS = [
    ("8:1us", "has 2 fields, a level needs 3 or 4"),
    ("8", "has 1 field, a level needs 3 or 4"),
    ("", "has 1 field"),
    ("8:1us:1GB/s:a:b", "has 5 fields"),
    ("x:1us:1GB/s", "size 'x', not a whole number"),
    ("-2:1us:1GB/s", "size '-2'"),
    ("8.5:1us:1GB/s", "size '8.5'"),
    ("0:1us:1GB/s", "has size 0; a level groups at least 1 unit"),
    ("8:1parsec:1GB/s", "bad latency: '1parsec' has an unknown unit"),
    ("8:5GB/s:1us", "bad latency"),
    ("8:1us:5MB", "bad bandwidth: '5MB' is a size, not a rate"),
    ("8:1us:0GB/s", "bad bandwidth: '0GB/s' is zero"),
    ("8:1us:12KB/s", "ambiguous"),
    ("8:1us:1GB/s:", "has an empty name"),
]


@pytest.mark.parametrize(("text", "needle"), BAD_LEVELS, ids=[t or "empty" for t, _ in BAD_LEVELS])
def test_bad_levels_are_one_line_input_errors(text, needle):
    with pytest.raises(InputError) as info:
        parse_level(text)
    message = str(info.value)
    assert needle in message
    assert message.startswith(repr(text))
    assert "\n" not in message
    assert isinstance(info.value, ValueError)


def test_unit_errors_stay_unit_errors():
    with pytest.raises(UnitError):
        parse_level("8:1parsec:1GB/s")


def test_a_non_string_is_not_a_level():
    with pytest.raises(InputError, match="is not a level"):
        parse_level(8)  # type: ignore[arg-type]


# -- Level and Topology --------------------------------------------------------------------------


@pytest.mark.parametrize(("size", "needle"), [(0, "too small"), (-1, "too small"), (True, "not an integer"),
                                              (2.0, "not an integer")])
def test_level_size_is_checked(size, needle):
    with pytest.raises(InputError, match=needle):
        Level(size=size, link=LINK)


def test_level_link_is_checked():
    with pytest.raises(InputError, match="not a LinkParams"):
        Level(size=2, link="1us")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sizes", "names"),
    [((8,), ("level0",)), ((8, 4), ("intra", "inter")), ((2, 2, 2), ("level0", "level1", "level2"))],
)
def test_default_names(sizes, names):
    assert topo(*sizes).names == names


def test_given_names_are_kept_and_others_named_by_position():
    t = Topology((Level(size=8, link=LINK, name="nvlink"), Level(size=4, link=LINK)))
    assert t.names == ("nvlink", "inter")


def test_topology_properties():
    t = topo(8, 4)
    assert t.p == 32
    assert t.sizes == (8, 4)
    assert t.strides == (1, 8)
    assert t.links == (LINK, LINK)
    assert str(t) == "8 intra × 4 inter"
    assert t.index("inter") == 1


@pytest.mark.parametrize(
    ("levels", "needle"),
    [
        ((), "at least one level"),
        ((Level(size=1, link=LINK),), "p=1 rank"),
        ((Level(size=1, link=LINK), Level(size=1, link=LINK)), "p=1 rank"),
        ((Level(size=2, link=LINK, name="a"), Level(size=2, link=LINK, name="a")), "'a' is used twice"),
        ((Level(size=2**21, link=LINK), Level(size=2**20, link=LINK)), r"at most 2\^40"),
        (("8:1us:1GB/s",), "is not a Level"),
    ],
)
def test_bad_topologies(levels, needle):
    with pytest.raises(InputError, match=needle):
        Topology(levels)


def test_unknown_level_name():
    with pytest.raises(InputError, match="unknown level 'intar'; did you mean 'intra'"):
        topo(8, 4).index("intar")


@pytest.mark.parametrize(("rank", "digits"), [(0, (0, 0)), (5, (5, 0)), (8, (0, 1)), (13, (5, 1)), (31, (7, 3))])
def test_digits_innermost_fastest(rank, digits):
    assert topo(8, 4).digits(rank) == digits


@pytest.mark.parametrize("rank", [-1, 32, True, 1.0])
def test_digits_refuse_non_ranks(rank):
    with pytest.raises(InputError, match="is not a rank"):
        topo(8, 4).digits(rank)


def test_level_of_by_hand():
    t = topo(2, 2, 2)
    # rank 0 = (0,0,0); 1 = (1,0,0); 2 = (0,1,0); 3 = (1,1,0); 4..7 have digit 2 = 1
    assert [int(t.level_of(0, dst)) for dst in range(8)] == [0, 0, 1, 1, 2, 2, 2, 2]
    assert int(t.level_of(1, 3)) == 1  # (1,0,0) → (1,1,0)
    assert int(t.level_of(6, 7)) == 0  # (0,1,1) → (1,1,1)
    assert int(t.level_of(3, 4)) == 2  # (1,1,0) → (0,0,1)


def test_level_of_is_vectorised():
    t = topo(8, 4)
    src = np.array([0, 7, 8, 31, 15], dtype=np.int64)
    dst = np.array([1, 8, 16, 0, 8], dtype=np.int64)
    got = t.level_of(src, dst)
    assert isinstance(got, np.ndarray)
    assert got.shape == (5,)
    assert got.tolist() == [0, 1, 1, 1, 0]


def test_level_of_skips_levels_of_size_one():
    t = topo(4, 1, 3)  # the middle digit is always 0
    assert int(t.level_of(3, 4)) == 2
    assert int(t.level_of(0, 3)) == 0


@pytest.mark.parametrize(
    ("sizes", "links"),
    [
        # (s_i − 1)·s_{i+1}⋯ links per level, plus the wrap-around at the outermost level of size > 1
        ((4, 2), (6, 2)),  # 3·2, 1·1 + 1
        ((8, 4), (28, 4)),  # 7·4, 3·1 + 1
        ((2, 3, 2), (6, 4, 2)),  # 1·3·2, 2·2, 1 + 1
        ((4, 1, 3), (9, 0, 3)),  # 3·1·3, 0, 2 + 1
        ((3, 1), (3, 0)),  # 2·1 + 1 (the wrap-around stays inside the only real level), 0
        ((5,), (5,)),
    ],
)
def test_ring_links(sizes, links):
    t = topo(*sizes)
    assert t.ring_links() == links
    assert sum(links) == t.p
    # and by brute force over the ring's links r → r + 1 (mod p)
    counts = [0] * len(sizes)
    for r in range(t.p):
        counts[int(t.level_of(r, (r + 1) % t.p))] += 1
    assert tuple(counts) == links


def test_to_dict_is_json_native():
    data = topology_from_options(levels=["8:1us:150GB/s:nvlink", "4:5us:25GB/s"]).to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["p"] == 32
    first = data["levels"][0]
    assert {"name", "size", "alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "bandwidth_bytes_per_s",
            "source"} <= set(first)
    assert (first["name"], first["size"], first["bandwidth_bytes_per_s"]) == ("nvlink", 8, 150 * 10**9)


# -- from_options --------------------------------------------------------------------------------


def test_from_options_levels_and_p():
    t = topology_from_options(levels=["8:1us:150GB/s", "4:5us:25GB/s"], p=32)
    assert t.sizes == (8, 4)
    assert t.links[1].beta_s_per_byte == F(1, 25 * 10**9)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"levels": ["8:1us:150GB/s", "4:5us:25GB/s"], "p": 30},
         "p=30 does not match the levels: 8 × 4 = 32 ranks; drop p="),
        ({"levels": ["8:1us:150GB/s"], "p": True}, "not an integer"),
        ({}, "no topology given; pass levels=SIZE:ALPHA:RATE"),
        ({"levels": []}, "no topology given"),
        ({"levels": ["8:1us"]}, "2 fields"),
        ({"profile": "textbook"}, "profile 'textbook' has no [[level]] tables"),
    ],
)
def test_from_options_errors(kwargs, needle):
    with pytest.raises(InputError) as info:
        topology_from_options(**kwargs)
    assert needle in str(info.value)


def test_gamma_applies_to_every_level():
    t = topology_from_options(levels=["8:1us:150GB/s", "4:5us:25GB/s"], gamma="0.01ns/B")
    assert [link.gamma_s_per_byte for link in t.links] == [F(1, 10**11)] * 2


def test_levels_may_be_level_objects():
    t = topology_from_options(levels=[Level(size=2, link=LINK), "3:1us:1GB/s"])
    assert t.p == 6


# -- profiles with [[level]] tables --------------------------------------------------------------

LEVELS = """\
[profile]
name = "dgx"
title = "8 GPUs on NVLink per node, 4 nodes on InfiniBand"

[[level]]
name = "nvlink"
size = 8
alpha = "2 us"
bandwidth = "450 GB/s"
gamma = "0.01 ns/B"

[[level]]
size = 4
alpha = "5 us"
beta = "0.02 ns/B"
"""

BOTH = LEVELS + '\n[link]\nalpha = "5 us"\nbandwidth = "50 GB/s"\n'


def write(tmp_path: Path, text: str, name: str = "cluster.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_profile_with_levels_only(tmp_path):
    profile = load_profile(write(tmp_path, LEVELS))
    assert profile.link is None
    assert [lv.name for lv in profile.levels] == ["nvlink", "inter"]  # the unnamed one by position
    nvlink, inter = profile.levels
    # 450 GB/s → β = 1/(450e9); 0.02 ns/B = 1/(50e9)
    assert (nvlink.size, nvlink.link.alpha_s, nvlink.link.beta_s_per_byte) == (8, F(2, 10**6), F(1, 450 * 10**9))
    assert nvlink.link.gamma_s_per_byte == F(1, 10**11)
    assert (inter.size, inter.link.alpha_s, inter.link.beta_s_per_byte) == (4, F(5, 10**6), F(1, 50 * 10**9))
    assert nvlink.link.source == "profile dgx level nvlink"
    assert inter.link.source == "profile dgx level 1"
    data = profile.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["alpha_s"] is None
    assert [lv["size"] for lv in data["levels"]] == [8, 4]


def test_profile_with_link_and_levels(tmp_path):
    profile = load_profile(write(tmp_path, BOTH))
    assert profile.link is not None
    assert profile.link.beta_s_per_byte == F(1, 50 * 10**9)
    assert len(profile.levels) == 2


def test_topology_from_a_profile(tmp_path):
    path = write(tmp_path, LEVELS)
    t = topology_from_options(profile=str(path), p=32)
    assert t.names == ("nvlink", "inter")
    assert topology_from_options(profile=load_profile(path)).p == 32
    # given levels replace the profile's
    assert topology_from_options(levels=["2:1us:1GB/s"], profile=str(path)).p == 2


def test_a_level_only_profile_gives_no_flat_link(tmp_path):
    with pytest.raises(InputError, match="no latency given"):
        link_from_options(profile=str(write(tmp_path, LEVELS)))


def test_existing_profiles_have_no_levels():
    assert load_profile("textbook").levels == ()


LEVEL_TABLE = '[[level]]\nsize = 8\nalpha = "1 us"\nbandwidth = "1 GB/s"\n'


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[level]]\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', r"\[\[level\]\] 1: size = None is not a whole number"),
        ('[[level]]\nsize = 0\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', "size = 0"),
        ('[[level]]\nsize = "8"\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', "size = '8'"),
        ('[[level]]\nsize = true\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', "size = True"),
        (LEVEL_TABLE + '[[level]]\nsize = 2\nbandwidth = "1 GB/s"\n', r"\[\[level\]\] 2: no latency given; set alpha"),
        (LEVEL_TABLE.replace("size = 8", "size = 8\ncolour = 3"), "unknown key 'colour'"),
        (LEVEL_TABLE.replace("1 us", "1 parsec"), "parsec"),
        (LEVEL_TABLE + 'name = ""\n', "name = '' is not a non-empty string"),
        (LEVEL_TABLE + "name = 3\n", "name = 3"),
        ('[level]\nsize = 8\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', "array of tables"),
        ("level = 3\n", "array of tables"),
        ('[[level]]\nsize = 1\nalpha = "1 us"\nbandwidth = "1 GB/s"\n', "p=1 rank"),
        (LEVEL_TABLE + 'name = "a"\n' + LEVEL_TABLE + 'name = "a"\n', "'a' is used twice"),
        ('[[levels]]\nsize = 2\n', "unknown table 'levels'"),
    ],
    ids=lambda x: x if len(x) < 30 else None,
)
def test_bad_level_tables(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(ParseError, match=needle) as info:
        load_profile(path)
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)
    assert "--" not in str(info.value)  # a file's errors do not talk about options


# -- properties ----------------------------------------------------------------------------------

FIELD = st.one_of(st.text(max_size=12), st.sampled_from(["8", "0", "1us", "5 µs", "150GB/s", "0.04ns/B", "x", ""]))


@given(st.one_of(st.text(max_size=40), st.lists(FIELD, min_size=0, max_size=6).map(":".join)))
def test_parse_level_never_crashes(text):
    try:
        level = parse_level(text)
    except InputError as exc:
        assert "\n" not in str(exc)
    else:
        assert level.size >= 1
        assert level.link.beta_s_per_byte >= 0


@given(st.lists(st.integers(1, 6), min_size=1, max_size=4).filter(lambda s: np.prod(s) >= 2), st.data())
def test_level_of_matches_the_digits(sizes, data):
    t = topo(*sizes)
    src = data.draw(st.integers(0, t.p - 1))
    dst = data.draw(st.integers(0, t.p - 1))
    differ = [i for i, (a, b) in enumerate(zip(t.digits(src), t.digits(dst), strict=True)) if a != b]
    assert int(t.level_of(src, dst)) == (max(differ) if differ else 0)
