"""The fit's sanity warnings: each fires on the data that call for it, and not on clean data."""

from __future__ import annotations

from fractions import Fraction

from costmodel.calibration import fit
from costmodel.calibration.logs import Measurements, Row

ALPHA, BETA = Fraction(5, 10**6), Fraction(8, 10**11)  # 5 µs, 0.08 ns/B


def ring(n: int, p: int = 8) -> Fraction:
    return 2 * (p - 1) * ALPHA + Fraction(2 * (p - 1), p) * n * BETA


def measured(times: dict[int, Fraction]) -> Measurements:
    rows = tuple(Row(n_bytes=n, time_s=t) for n, t in sorted(times.items()))
    return Measurements(tool="costmodel-csv", collective="allreduce", p=8, rows=rows, path="log.csv")


def warnings(times: dict[int, Fraction]) -> list[str]:
    return list(fit(measured(times)).warnings)


def test_clean_data_warn_of_nothing():
    assert warnings({2**k: ring(2**k) for k in range(3, 31)}) == []


def test_two_modes_of_noise_are_bimodal():
    # every third size runs 20 % slow: two clusters of errors with a gap and nothing between
    times = {2**k: ring(2**k) * (Fraction(6, 5) if k % 3 == 0 else 1) for k in range(3, 31)}
    found = [w for w in warnings(times) if w.startswith("bimodal noise")]
    assert len(found) == 1 and "rows run" in found[0]


def test_one_outlier_is_not_bimodal():
    times = {2**k: ring(2**k) for k in range(3, 31)}
    times[2**12] *= 2
    assert not any(w.startswith("bimodal") for w in warnings(times))


def test_a_bandwidth_never_reached_is_said():
    # a 20 µs floor on sizes up to 64 KiB: the line's slope promises far more than any size achieved
    times = {2**k: Fraction(20, 10**6) + Fraction(2**k, 10**10) * (1 + Fraction(k % 2, 50)) for k in range(3, 17)}
    found = [w for w in warnings(times) if "1/β gives a bus bandwidth" in w]
    assert len(found) == 1 and "the best measured" in found[0]


def test_a_start_up_above_the_fastest_time_is_said():
    times = {2**k: ring(2**k) for k in range(3, 31)}
    times[8] = times[8] / 2  # the smallest size ran twice as fast as the line's intercept
    found = [w for w in fit(measured(times), segments=1).warnings if "exceeds the smallest measured time" in w]
    assert len(found) == 1 and found[0].startswith("segment 1: α·a(p)")


def test_warnings_reach_the_profile():
    times = {2**k: ring(2**k) * (Fraction(6, 5) if k % 3 == 0 else 1) for k in range(3, 31)}
    text = fit(measured(times)).to_profile_toml(name="noisy")
    from costmodel.profiles import parse_profile

    (fitted,) = parse_profile(text, path="noisy.toml").fits
    assert any(w.startswith("bimodal noise") for w in fitted.warnings)
