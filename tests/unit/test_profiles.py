"""Link profiles: the embedded presets (values checked by hand) and user TOML files."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel import (
    InputError,
    ParseError,
    Profile,
    UnknownNameError,
    list_profiles,
    load_profile,
    profiles,
)
from costmodel.links import link_from_options
from costmodel.references import CITATIONS

F = Fraction

# name: (α, β, citation key); β = 1/(bytes per second)
PRESETS = {
    "textbook": (F(5, 10**6), F(8, 10**11), "ieee802.3"),  # 5 µs, 0.08 ns/B = 100 Gb/s
    "100gbe": (F(5, 10**6), F(1, 12_500_000_000), "ieee802.3"),  # 100 Gb/s = 12.5e9 B/s
    "ib-hdr": (F(1, 10**6), F(1, 25 * 10**9), "ibta"),  # 200 Gb/s = 25e9 B/s
    "ib-ndr": (F(1, 10**6), F(1, 50 * 10**9), "ibta"),  # 400 Gb/s = 50e9 B/s
    "nvlink3": (F(2, 10**6), F(1, 300 * 10**9), "nvidia-a100"),  # 600 GB/s both ways: 300 GB/s each
    "nvlink4": (F(2, 10**6), F(1, 450 * 10**9), "nvidia-h100"),  # 900 GB/s both ways: 450 GB/s each
    # fitted on nccl-tests logs of one node: [link] is the all-reduce fit's α and β (2.466 µs, 233.2 GB/s;
    # 0.9286 µs, 475.3 GB/s)
    "a100-nvswitch": (F(246643, 10**11), F(428805, 10**17), "superbench"),
    "h100-nvswitch": (F(928571, 10**12), F(210407, 10**17), "dgxc-benchmarking"),
}

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs" / "nccl-tests"
FITTED = {
    "a100-nvswitch": ([LOGS / f"{c}_a100x8_1node_nvswitch_superbench.txt"
                       for c in ("allreduce", "allgather", "reducescatter")],
                      "8 A100 SXM4 on NVSwitch, as nccl-tests measured: all-reduce, all-gather, reduce-scatter",
                      "superbench",
                      "all_reduce_perf, all_gather_perf and reduce_scatter_perf, 1 B..8 GiB, on one 8x "
                      "A100-SXM4-40GB NVSwitch node (tests/data/logs/nccl-tests/*_a100x8_1node_nvswitch_"
                      "superbench.txt), fitted by costmodel calibrate fit"),
    "h100-nvswitch": ([LOGS / "allreduce_h100x8_1node_nvswitch_dgxc.txt"],
                      "8 H100 SXM on NVSwitch (NVLink SHARP), as nccl-tests measured: all-reduce",
                      "dgxc-benchmarking",
                      "all_reduce_perf, 8 B..16 GiB, on one 8x H100 80GB HBM3 NVSwitch node "
                      "(tests/data/logs/nccl-tests/allreduce_h100x8_1node_nvswitch_dgxc.txt), fitted by costmodel "
                      "calibrate fit"),
}
"""The shipped profiles fitted on logs: the logs, the title, the source and the locator they were written with."""


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_preset(name: str) -> None:
    alpha, beta, key = PRESETS[name]
    profile = load_profile(name)
    assert profile.name == name
    assert profile.link.alpha_s == alpha
    assert profile.link.beta_s_per_byte == beta
    assert profile.link.gamma_s_per_byte == 0
    assert profile.link.source == f"profile {name}"
    assert profile.title.strip()
    # the source is the cited reference, followed by where in it
    assert profile.source.startswith(str(CITATIONS[key]))
    assert len(profile.source) > len(str(CITATIONS[key]))
    assert profile.path == ""
    data = profile.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_only_the_textbook_preset_is_not_an_estimate() -> None:
    assert {name: load_profile(name).alpha_estimate for name in PRESETS} == {
        "textbook": False, "100gbe": True, "ib-hdr": True, "ib-ndr": True, "nvlink3": True, "nvlink4": True,
        "a100-nvswitch": False, "h100-nvswitch": False,
    }


@pytest.mark.parametrize("name", sorted(FITTED))
def test_a_fitted_profile_is_what_calibrate_fit_writes_from_its_logs(name: str, tmp_path: Path, capsys) -> None:
    """Each shipped fitted profile is today's fit of its logs, written by the command its locator names."""
    from tests.clirun import run

    logs, title, source, locator = FITTED[name]
    out = tmp_path / f"{name}.toml"
    run(capsys, "calibrate", "fit", *map(str, logs), "--out", str(out), "--title", title, "--source", source,
        "--locator", locator)
    shipped = Path(profiles.__file__).parent / f"{name}.toml"
    assert out.read_text(encoding="utf-8") == shipped.read_text(encoding="utf-8")
    profile = load_profile(name)
    assert [f.collective for f in profile.fits] == (["allreduce", "allgather", "reduce-scatter"]
                                                     if name == "a100-nvswitch" else ["allreduce"])


def test_list_profiles() -> None:
    listed = list_profiles()
    profiles = getattr(listed, "profiles", listed)
    names = [p.name for p in profiles]
    assert names == sorted(names)
    assert set(names) == set(PRESETS)
    assert all(isinstance(p, Profile) for p in profiles)


def test_unknown_preset() -> None:
    with pytest.raises(UnknownNameError, match="unknown profile 'textbok'; did you mean 'textbook'"):
        load_profile("textbok")
    with pytest.raises(UnknownNameError, match="choose from"):
        load_profile("zzzzzzzz")


# -- user files ----------------------------------------------------------------------------------

VALID = """\
[profile]
name = "lab"
title = "Our lab cluster"
source = "chan2007"
locator = "table 1"

[link]
alpha = "2.5 us"
alpha_estimate = true
bandwidth = "25 GB/s"
gamma = "0.25 ns/B"
notes = ["measured with osu_latency", "second note"]
"""


def write(tmp_path: Path, text: str, name: str = "lab.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_file(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    profile = load_profile(path)
    # 2.5 µs; 25 GB/s = 1/(25e9) s/B; 0.25 ns/B
    assert profile.link.alpha_s == F(25, 10**7)
    assert profile.link.beta_s_per_byte == F(1, 25 * 10**9)
    assert profile.link.gamma_s_per_byte == F(1, 4 * 10**9)
    assert profile.name == "lab"
    assert profile.title == "Our lab cluster"
    assert profile.source == f"{CITATIONS['chan2007']} table 1"
    assert profile.alpha_estimate is True
    assert profile.notes == ("measured with osu_latency", "second note")
    assert profile.path == str(path)
    # the same file through a string path and through from_options
    assert load_profile(str(path)).link == profile.link
    assert link_from_options(profile=str(path)).alpha_s == F(25, 10**7)


def test_minimal_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n', name="tiny.toml")
    profile = load_profile(path)
    assert profile.name == "tiny"  # from the file name
    assert (profile.link.alpha_s, profile.link.beta_s_per_byte) == (F(1, 10**6), F(1, 10**9))
    assert profile.alpha_estimate is False
    assert profile.notes == ()


def test_free_text_source(tmp_path: Path) -> None:
    text = '[profile]\nsource = "our measurements, May 2025"\n[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n'
    assert load_profile(write(tmp_path, text)).source == "our measurements, May 2025"


INVALID_TOML = '[link]\nalpha = "5 us"\nbeta = = 3\n'


def test_invalid_toml_names_the_path(tmp_path: Path) -> None:
    path = write(tmp_path, INVALID_TOML)
    with pytest.raises(ParseError, match="invalid TOML") as info:
        load_profile(path)
    assert info.value.path == str(path)
    assert str(info.value).startswith(f"{path}")


def test_invalid_toml_names_the_line(tmp_path: Path) -> None:
    # the error is on line 3: ParseError's message starts with "path:line:"
    path = write(tmp_path, INVALID_TOML)
    with pytest.raises(ParseError) as info:
        load_profile(path)
    assert info.value.line == 3
    assert str(info.value).startswith(f"{path}:3: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[link]\nalpha = "1 us"\nbeta = "1 ns/B"\ncolour = "red"\n', "unknown key 'colour' in \\[link\\]"),
        ('[profile]\nauthor = "me"\n[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n', "unknown key 'author'"),
        ('[links]\nalpha = "1 us"\n', "unknown table 'links'"),
        ('[profile]\nname = "x"\n', "needs a \\[link\\] table"),
        ("", "needs a \\[link\\] table"),
        ("link = 3\n", "needs a \\[link\\] table"),
        ('[link]\nalpha = "5 parsecs"\nbeta = "1 ns/B"\n', "parsecs"),
        ('[link]\nalpha = "1 us"\nbeta = "1 GB/s"\n', "rate"),
        ('[link]\nalpha = "1 us"\nbandwidth = "5 MB"\n', "5 MB"),
        ('[link]\nalpha = "1 us"\nbeta = "1 ns/B"\nbandwidth = "1 GB/s"\n', "beta"),
        ('[link]\nbeta = "1 ns/B"\n', "alpha"),
        ('[link]\nalpha = "1 us"\n', "beta"),
        ('[link]\nalpha = true\nbeta = "1 ns/B"\n', "not a quantity"),
        ('[link]\nalpha = "1 us"\nbeta = "1 ns/B"\nalpha_estimate = "yes"\n', "not true or false"),
        ('[link]\nalpha = "1 us"\nbeta = "1 ns/B"\nnotes = "one"\n', "list of strings"),
        ('[link]\nalpha = "1 us"\nbeta = "1 ns/B"\nnotes = [1]\n', "list of strings"),
    ],
    ids=lambda x: x if len(x) < 30 else None,
)
def test_bad_files(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ParseError, match=message) as info:
        load_profile(path)
    assert str(info.value).startswith(str(path))
    assert info.value.path == str(path)
    # a ParseError is an InputError, one line long
    assert isinstance(info.value, InputError)
    assert "\n" not in str(info.value)


def test_missing_alpha_in_a_file_does_not_mention_options(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as info:
        load_profile(write(tmp_path, '[link]\nbeta = "1 ns/B"\n'))
    assert "--" not in str(info.value)


def test_non_existent_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    with pytest.raises(ParseError, match="cannot read profile") as info:
        load_profile(path)
    assert info.value.path == str(path)
    with pytest.raises(ParseError):
        link_from_options(profile=str(path))


def test_a_directory_is_not_a_profile(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="cannot read profile"):
        load_profile(tmp_path)


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes('[profile]\ntitle = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(ParseError, match="cannot read profile"):
        load_profile(path)


def test_bare_numbers_are_read_as_written(tmp_path: Path) -> None:
    path = write(tmp_path, '[link]\nalpha = 5e-6\nbeta = 8e-11\n')
    link = load_profile(path).link
    assert (link.alpha_s, link.beta_s_per_byte) == (F(1, 200_000), F(8, 10**11))
