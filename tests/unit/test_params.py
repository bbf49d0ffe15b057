"""LinkParams: α, β, γ from command-line style options, profiles and overrides."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from costmodel import InputError, LinkParams, UnknownNameError, load_profile
from costmodel.links import link_from_options

F = Fraction


def test_alpha_and_beta() -> None:
    link = link_from_options(alpha="5us", beta="0.08ns/B")
    # 5 µs = 1/200000 s; 0.08 ns/B = 8e-11 s/B = 1/12.5e9
    assert link.alpha_s == F(1, 200_000)
    assert link.beta_s_per_byte == F(1, 12_500_000_000)
    assert link.gamma_s_per_byte == 0
    assert link.source == "options"


@pytest.mark.parametrize(
    ("bandwidth", "beta"),
    [
        ("12.5 GB/s", F(1, 12_500_000_000)),
        ("100 Gb/s", F(8, 100 * 10**9)),  # 100e9 bit/s = 12.5e9 B/s
        ("100Gbps", F(8, 100 * 10**9)),
        ("1 GiB/s", F(1, 2**30)),
        ("450 GB/s", F(1, 450 * 10**9)),
        (F(10**9), F(1, 10**9)),  # a bare number is bytes per second
    ],
)
def test_alpha_and_bandwidth(bandwidth: object, beta: Fraction) -> None:
    link = link_from_options(alpha="1 us", bandwidth=bandwidth)
    assert link.alpha_s == F(1, 10**6)
    assert link.beta_s_per_byte == beta
    assert link.bandwidth_bytes_per_s == 1 / beta


def test_gamma() -> None:
    link = link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.1 ns/B")
    assert link.gamma_s_per_byte == F(1, 10**10)


def test_numbers_are_si_base_units() -> None:
    link = link_from_options(alpha=F(1, 200_000), beta=F(8, 10**11), gamma=0)
    assert (link.alpha_s, link.beta_s_per_byte, link.gamma_s_per_byte) == (F(1, 200_000), F(8, 10**11), 0)


def test_beta_and_bandwidth_together_are_refused() -> None:
    with pytest.raises(InputError, match="beta=") as info:
        link_from_options(alpha="5us", beta="0.08ns/B", bandwidth="12.5GB/s")
    assert "bandwidth=" in str(info.value)
    # even when they agree, and even over a profile
    with pytest.raises(InputError):
        link_from_options(profile="textbook", beta="0.08ns/B", bandwidth="12.5GB/s")


def test_missing_alpha_is_refused() -> None:
    with pytest.raises(InputError, match="alpha="):
        link_from_options(beta="0.08ns/B")
    with pytest.raises(InputError, match="alpha="):
        link_from_options(bandwidth="12.5GB/s")


def test_missing_beta_is_refused() -> None:
    with pytest.raises(InputError, match="beta=") as info:
        link_from_options(alpha="5us")
    assert "bandwidth=" in str(info.value)


def test_nothing_at_all_is_refused() -> None:
    with pytest.raises(InputError):
        link_from_options()


@pytest.mark.parametrize(
    "options",
    [
        {"alpha": "5 GB", "beta": "0.08ns/B"},  # a size, not a time
        {"alpha": "5us", "beta": "12.5 GB/s"},  # a rate where the inverse is expected
        {"alpha": "5us", "bandwidth": "0.08 ns/B"},
        {"alpha": "5us", "bandwidth": "0 GB/s"},  # infinite β
        {"alpha": "-5us", "beta": "0.08ns/B"},
        {"alpha": "5us", "beta": "-1 ns/B"},
        {"alpha": "5us", "beta": "0.08ns/B", "gamma": "-0.1 ns/B"},
        {"alpha": "five", "beta": "0.08ns/B"},
        {"alpha": True, "beta": "0.08ns/B"},
    ],
    ids=repr,
)
def test_bad_values_are_input_errors(options: dict[str, object]) -> None:
    with pytest.raises(InputError):
        link_from_options(**options)


def test_profile_alone() -> None:
    link = link_from_options(profile="ib-hdr")
    # 1 µs; 200 Gb/s = 25e9 B/s
    assert (link.alpha_s, link.beta_s_per_byte) == (F(1, 10**6), F(1, 25 * 10**9))
    assert link.source == "profile ib-hdr"


def test_profile_with_overrides() -> None:
    link = link_from_options(profile="textbook", alpha="1us")
    # α from the option, β from the profile
    assert (link.alpha_s, link.beta_s_per_byte) == (F(1, 10**6), F(1, 12_500_000_000))
    assert link.source == "profile textbook with options"
    link = link_from_options(profile="textbook", bandwidth="25 GB/s", gamma="1 ns/B")
    assert (link.alpha_s, link.beta_s_per_byte, link.gamma_s_per_byte) == (F(1, 200_000), F(1, 25 * 10**9),
                                                                          F(1, 10**9))
    link = link_from_options(profile="textbook", beta="1 ns/B")
    assert link.beta_s_per_byte == F(1, 10**9)


def test_profile_object() -> None:
    profile = load_profile("nvlink4")
    link = link_from_options(profile=profile)
    assert link == profile.link


def test_unknown_profile() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'textbook'"):
        link_from_options(profile="textbok")


def test_constructor_checks() -> None:
    assert LinkParams(alpha_s=1, beta_s_per_byte=0).alpha_s == 1
    for bad in (-1, F(-1, 3), 0.5, True, "5us", None):
        with pytest.raises(InputError):
            LinkParams(alpha_s=bad, beta_s_per_byte=F(0))  # type: ignore[arg-type]
        with pytest.raises(InputError):
            LinkParams(alpha_s=F(0), beta_s_per_byte=F(0), gamma_s_per_byte=bad)  # type: ignore[arg-type]


def test_infinite_bandwidth() -> None:
    link = LinkParams(alpha_s=F(1), beta_s_per_byte=F(0))
    assert link.bandwidth_bytes_per_s is None
    assert link.to_dict()["bandwidth_bytes_per_s"] is None


def test_to_dict() -> None:
    data = link_from_options(alpha="5us", bandwidth="100Gb/s").to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["alpha_s"] == pytest.approx(5e-6)
    assert data["beta_s_per_byte"] == pytest.approx(8e-11)
    assert data["bandwidth_bytes_per_s"] == 12_500_000_000
    assert data["gamma_s_per_byte"] == 0
    assert data["source"] == "options"


def test_as_link_takes_a_link_or_its_values() -> None:
    from costmodel.links import as_link
    from costmodel.params import LinkSegment, PiecewiseLink

    link = LinkParams(alpha_s=F(1, 10**6), beta_s_per_byte=F(1, 10**9))
    assert as_link(link) is link
    made = as_link(alpha="1us", bandwidth="1GB/s")  # the same values, spelled as options
    assert (made.alpha_s, made.beta_s_per_byte, made.source) == (F(1, 10**6), F(1, 10**9), "options")
    piecewise = PiecewiseLink(segments=(LinkSegment(from_bytes=F(1), to_bytes=F(1), link=link),),
                              summary=link, source="one segment")
    assert as_link(piecewise) is piecewise
    with pytest.raises(InputError, match="both link= and bandwidth= were given"):
        as_link(link, bandwidth="1GB/s")
    with pytest.raises(InputError, match="'5us' is not a link; pass a LinkParams"):
        as_link("5us")
    with pytest.raises(InputError, match="no latency given"):
        as_link()
