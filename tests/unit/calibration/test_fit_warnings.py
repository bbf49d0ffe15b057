"""The fit's sanity warnings: each fires on the data that call for it, and not on clean data."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from costmodel.calibration import fit, parse_log
from costmodel.calibration.fit import ALPHA_FLOOR_S
from costmodel.calibration.logs import Measurements, Row
from costmodel.units import format_time

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


# --------------------------------------------------------------------------- the target


def _limit(median, sizes):
    # the worst of `sizes` Laplace errors of median |error| `median` exceeds x with chance 5 %:
    # P(|e| > x) = 2^(-x/median) per size, so 1 - (1 - 2^(-x/median))^sizes = 0.05
    return median * math.log2(1 / (1 - 0.95 ** (1 / sizes)))


def test_a_fit_on_its_target_says_nothing_of_it():
    result = fit(measured({2**k: ring(2**k) for k in range(3, 31)}))
    assert result.target.met and result.target.misses == ()
    assert not any(w.startswith("target missed") for w in result.warnings)
    assert result.target.size_limit == pytest.approx(_limit(0.05, 28), rel=1e-12)
    assert result.target.size_limit_ge_1mib == pytest.approx(_limit(0.03, 11), rel=1e-12)  # 1 MiB .. 1 GiB
    assert "target_met = true" in result.to_profile_toml(name="clean")


def test_one_size_far_off_misses_the_target_in_one_line_and_the_profile_records_it():
    # the held-out case: 64 MiB measured fast enough that the model is 38 % above it, every other size exact
    times = {2**k: ring(2**k) for k in range(3, 31)}
    times[2**26] = ring(2**26) / Fraction(138, 100)
    result = fit(measured(times))
    target = result.target
    assert not target.met
    assert (target.worst_n_bytes, target.worst_rel_error) == (2**26, pytest.approx(0.38, rel=1e-9))
    limit = _limit(0.03, 11)  # 11 sizes from 1 MiB on: 0.03·log2(1/0.004652) = 23.2 %
    line = f"target missed: 67.11 MB is +38.0% off (at most {limit:.1%} from 1 MiB on)"
    assert result.warnings[0] == line and limit == pytest.approx(0.2324, abs=1e-4)
    assert sum(w.startswith("target missed") for w in result.warnings) == 1

    from costmodel.profiles import parse_profile

    text = result.to_profile_toml(name="held-out")
    assert "target_met = false\nworst_bytes = 67108864\nworst_error = 0.38\n" in text
    (fitted,) = parse_profile(text, path="held-out.toml").fits
    assert (fitted.target_met, fitted.worst_n_bytes, fitted.worst_rel_error) == (False, 2**26, 0.38)
    assert fitted.warnings[0] == line


def test_a_median_above_the_target_is_said_with_its_limit():
    # sizes in turn 10 % slow, on the line, 10 % fast: the L1 line keeps the middle ones, median |error| 9.09 %
    times = {2**k: ring(2**k) * (Fraction(11, 10), 1, Fraction(9, 10))[k % 3] for k in range(3, 31)}
    result = fit(measured(times), segments=1)
    assert not result.target.met
    assert result.target.misses == ("median |error| 9.09% (at most 5%)",
                                    "median |error| from 1 MiB on 9.09% (at most 3%)")
    assert result.warnings[0] == "target missed: " + "; ".join(result.target.misses)


# --------------------------------------------------------------------------- α that is no latency


def test_the_capped_alpha_says_why_where_it_is_given():
    times = {2**k: ring(2**k) for k in range(3, 31)}
    times[8] = times[8] / 2  # the fastest run is half the line's start-up
    result = fit(measured(times), segments=1)
    fastest = times[8]
    assert result.alpha_s == pytest.approx(float(fastest / 14), rel=1e-12)
    seg = result.segments[0].alpha_s
    assert result.alpha_from == (f"segment 1 (its {format_time(seg)} capped at the fastest run over a(p): "
                                 f"{format_time(float(fastest))} at 8 B / 14)")
    assert fit(measured({2**k: ring(2**k) for k in range(3, 31)})).alpha_from == "segment 1"


def test_alpha_from_osu_bw_is_said_to_be_no_latency():
    text = ("# OSU MPI Bandwidth Test v5.8\n# Size      Bandwidth (MB/s)\n"
            + "".join(f"{2**k} {2**k / (0.25 + 2**k / 12000):.2f}\n" for k in range(23)))
    result = fit(parse_log(text))
    found = [w for w in result.warnings if "osu_bw" in w]
    assert len(found) == 1 and "streams a window of messages" in found[0] and "osu_latency" in found[0]


def test_alpha_below_the_floor_is_said_and_a_plausible_one_is_not():
    p = 256
    tiny = Measurements(tool="osu", collective="allreduce", p=p, path="osu.txt", rows=tuple(
        Row(n_bytes=2**k, time_s=2 * (p - 1) * Fraction(20, 10**9) + Fraction(2 * (p - 1), p) * 2**k * BETA)
        for k in range(2, 21)))
    found = [w for w in fit(tiny).warnings if "below 50 ns" in w]
    assert len(found) == 1 and found[0].startswith("α = 20 ns per step (a(p) = 510 of them)")
    assert "algorithm=NAME" in found[0]
    assert not any("below 50 ns" in w for w in fit(measured({2**k: ring(2**k) for k in range(3, 31)})).warnings)
    assert ALPHA_FLOOR_S == 50e-9


def test_a_log_of_large_sizes_only_measures_no_alpha():
    """OCI's MI355X doc kept 8 and 16 GiB: the fastest run is bytes at the bandwidth, not start-up, so
    it does not stand in for α (36.96 ms / 14 would be a 2.6 ms start-up); α stays 0, with a warning."""
    from costmodel.calibration import read_log

    result = fit(read_log("tests/data/excerpts/allreduce_mi355x8_1node_rccl_largest_ocigpuquickstarts.txt"))
    assert result.alpha_s == 0
    assert result.alpha_from == ("no size (segment 1's α is 0, and the fastest run, 36.96 ms at 8.59 GB, moves its "
                                 "bytes at the log's bandwidth: no start-up to read)")
    found = [w for w in result.warnings if w.startswith("α is 0, not measured")]
    assert found == ["α is 0, not measured: the smallest size, 8.59 GB, already runs at the log's bandwidth, "
                     "so the log holds no start-up time; measure small sizes too (nccl-tests -b 8) to fit α"]
    # 2·7 start-ups of 5 µs and sizes from 8 B: the stand-in still comes from a start-up-bound run
    small = {2**k: ring(2**k) for k in range(3, 31)}
    assert not any(w.startswith("α is 0") for w in fit(measured(small)).warnings)
