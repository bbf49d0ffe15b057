"""The α/β fitter: exact recovery, segments, confidence intervals, the targets on real logs, profiles."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration import (
    DEFAULT_ALGORITHMS,
    Measurements,
    Row,
    coefficients,
    fit,
    parse_log,
    read_log,
)
from costmodel.errors import CalibrationError, InputError, UnknownNameError
from costmodel.profiles import parse_profile

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs"
NCCL_LOGS = sorted((LOGS / "nccl-tests").glob("*.txt"))
MIB = 1 << 20


def _measurements(times: dict[int, Fraction | float], *, collective="allreduce", p=8, tool="costmodel-csv"):
    rows = tuple(Row(n_bytes=n, time_s=Fraction(t), line=i + 2) for i, (n, t) in enumerate(sorted(times.items())))
    return Measurements(tool=tool, collective=collective, p=p, rows=rows)


def _ring(alpha, beta, p=8):
    return lambda n: 2 * (p - 1) * alpha + Fraction(2 * (p - 1), p) * n * beta


# --------------------------------------------------------------------------- the targets on real logs


IN_NETWORK = {
    # NCCL's CollNet (SHARP reduces in the InfiniBand switches) and NVLS/NVLSTree (NVLink SHARP) are not the
    # ring's cost curve: their times step where the algorithm changes, which a 3-segment fit follows less well
    "allreduce_a100x16_2node_4xhdr_sharp_abci.txt",
    "allreduce_h100x16_2node_8xndr_nccltests309.txt",
}
HELD_OUT = {
    # 2 x p4d (A100, EFA), aws/aws-ofi-nccl#65: six sizes from 8 MiB, the 64 MiB one 41 % below its
    # neighbours' busbw; no cause was found in the thread.  A fit must say it misses its target (below)
    "allreduce_a100x16_2node_efa_p4d_awsofinccl65.txt",
}
NOT_A_LINE = {
    # 1024 ranks on 128 nodes over RoCE, Ring and LL128 forced, NCCL_MIN_NCHANNELS=32, nccl-tests#322: its
    # 1 and 2 GiB take the same 20 ms, then the time grows with the size; no α–β line fits its five sizes
    "allreduce_h100x1024_roce_nccltests322.txt",
}
RING_LOGS = [p for p in NCCL_LOGS if p.name not in IN_NETWORK | HELD_OUT | NOT_A_LINE]


@pytest.mark.parametrize("name", sorted(NOT_A_LINE))
def test_a_log_no_line_fits_says_so_in_its_first_warning(name):
    result = fit(read_log(LOGS / "nccl-tests" / name))
    assert not result.target.met and result.target.worst_n_bytes == 2**30
    assert result.warnings[0].startswith("target missed: median |error| 11.31% (at most 5%)")


def test_the_held_out_efa_log_misses_its_target_in_one_line_and_the_profile_records_it():
    from costmodel.profiles import parse_profile

    (name,) = HELD_OUT
    m = read_log(LOGS / "nccl-tests" / name)
    assert (m.collective, m.p, len(m.select())) == ("allreduce", 16, 6)
    result = fit(m)
    assert len(result.segments) == 1  # six sizes: too few to split (a segment needs 4 of 12)
    target = result.target
    assert not target.met
    assert target.worst_n_bytes == 2**26  # the 64 MiB dip of the issue
    assert target.worst_rel_error == pytest.approx(-0.4397, abs=5e-5)
    missed = [w for w in result.warnings if w.startswith("target missed")]
    assert missed == [result.warnings[0]] and "\n" not in missed[0]
    assert missed[0].startswith("target missed: 67.11 MB is -44.0% off (at most 20.6% from 1 MiB on)")
    text = result.to_profile_toml(name="p4d")
    assert "target_met = false\nworst_bytes = 67108864\nworst_error = -0.4397\n" in text
    (fitted,) = parse_profile(text, path="p4d.toml").fits
    assert (fitted.target_met, fitted.worst_n_bytes) == (False, 2**26)
    assert fitted.warnings[0] == missed[0]


@pytest.mark.parametrize("path", RING_LOGS, ids=lambda p: p.name)
def test_targets_on_real_nccl_tests_logs(path):
    result = fit(read_log(path))
    assert 1 <= len(result.segments) <= 3
    assert result.median_rel_error <= 0.05, result.median_rel_error
    assert result.median_rel_error_ge_1mib is not None
    assert result.median_rel_error_ge_1mib <= 0.03, result.median_rel_error_ge_1mib
    # every out-of-place row has a residual, in order, each in exactly one segment
    m = read_log(path)
    assert [r.n_bytes for r in result.residuals] == [r.n_bytes for r in m.select()]
    assert sum(s.points for s in result.segments) == len(result.residuals)
    for seg, after in zip(result.segments, result.segments[1:], strict=False):
        assert seg.to_bytes < after.from_bytes
    # the summary link is physical: α from the small messages, β from the large ones
    smallest = min(float(r.measured_s) for r in result.residuals)
    assert 0 < result.alpha_s <= result.segments[0].alpha_s
    assert result.alpha_s * float(result.latency_coefficient) <= smallest
    assert result.beta_s_per_byte == result.segments[-1].beta_s_per_byte > 0
    assert result.algorithm == "ring"


@pytest.mark.parametrize("name", sorted(IN_NETWORK))
def test_in_network_reduction_logs_fit_within_ten_percent(name):
    assert name in {p.name for p in NCCL_LOGS}
    result = fit(read_log(LOGS / "nccl-tests" / name))
    assert 1 <= len(result.segments) <= 3 and result.algorithm == "ring"
    assert result.median_rel_error <= 0.10, result.median_rel_error
    assert result.median_rel_error_ge_1mib is not None and result.median_rel_error_ge_1mib <= 0.10
    assert 0 < result.alpha_s <= result.segments[0].alpha_s


def test_real_log_values_are_plausible():
    h100 = fit(read_log(LOGS / "nccl-tests" / "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt"))
    # ring busbw at 8 GiB is 338.82 GB/s; 1/β of the bandwidth regime is close to it
    assert 300e9 < h100.bandwidth_bytes_per_s < 400e9
    h200 = fit(read_log(LOGS / "nccl-tests" / "allreduce_h200x2_2node_1nic_rdma_gke.txt"))
    assert 30e9 < h200.bandwidth_bytes_per_s < 33e9  # busbw 31.89 GB/s on one 400 Gb/s NIC


@pytest.mark.parametrize(("name", "p"), [("osu_allreduce_archer2_2node_256rank_slingshot.txt", 256),
                                         ("osu_allreduce_kind_2pod_2rank_tcp.txt", 2)])
def test_osu_logs_fit_with_p_passed_in(name, p):
    m = read_log(LOGS / "osu" / name)
    with pytest.raises(InputError, match="give the number of ranks"):
        fit(m)
    result = fit(m, p=p)
    assert result.p == p and result.collective == "allreduce" and result.algorithm == "ring"
    assert result.latency_coefficient == 2 * (p - 1)
    assert result.bandwidth_coefficient == Fraction(2 * (p - 1), p)
    assert len(result.residuals) == 19
    assert result.median_rel_error <= 0.05
    # the target from 1 MiB on is met, or the fit says why not: the log has one size there
    if result.median_rel_error_ge_1mib > 0.03:
        assert "only 1 size from 1 MiB on" in " ".join(result.warnings)
    assert fit(read_log(LOGS / "osu" / name, p=p)).to_dict() == result.to_dict()


def test_p_must_agree_with_the_log():
    m = read_log(LOGS / "nccl-tests" / "allreduce_v100x8_nvlink_oldformat.txt")
    assert fit(m, p=8).p == 8
    with pytest.raises(InputError, match="differs from the p=8 the log states"):
        fit(m, p=16)


def test_in_place_times():
    m = read_log(LOGS / "nccl-tests" / "allgather_b200x2_2node_rdma_gke.txt")
    out, inp = fit(m), fit(m, in_place=True)
    assert inp.in_place and not out.in_place
    assert inp.residuals[-1].measured_s == Fraction("11892") / 10**6
    assert out.residuals[-1].measured_s == Fraction("14640") / 10**6
    assert "fitted to the in-place times" in inp.notes
    osu = read_log(LOGS / "osu" / "osu_allreduce_kind_2pod_2rank_tcp.txt", p=2)
    with pytest.raises(CalibrationError, match="in-place"):
        fit(osu, in_place=True)


def test_a_log_of_in_place_times_only_is_fitted_on_them_by_default():
    """calibrate run's all-reduce: torch.distributed has no out-of-place all-reduce."""
    from dataclasses import replace

    m = read_log(LOGS / "nccl-tests" / "allgather_b200x2_2node_rdma_gke.txt")
    only_in = replace(m, rows=m.select(in_place=True))
    by_default, asked = fit(only_in), fit(only_in, in_place=True)
    assert by_default.in_place and by_default.residuals == asked.residuals
    assert by_default.alpha_s == asked.alpha_s and by_default.beta_s_per_byte == asked.beta_s_per_byte
    assert "fitted to the in-place times, the only ones the log has" in " ".join(by_default.notes)
    assert "fitted to the in-place times" in asked.notes
    with pytest.raises(CalibrationError, match="0 out-of-place rows"):
        fit(only_in, in_place=False)
    # a log with both kinds keeps the out-of-place times by default
    assert fit(m).residuals == fit(m, in_place=False).residuals and not fit(m).in_place


# --------------------------------------------------------------------------- synthetic data


def test_exact_ring_data_give_alpha_and_beta_back():
    alpha, beta = Fraction(23, 10**6), Fraction(412, 10**13)  # 23 µs, 0.0412 ns/B
    model = _ring(alpha, beta)
    result = fit(_measurements({2**k: model(2**k) for k in range(34)}))
    assert len(result.segments) == 1
    assert result.latency_coefficient == 14 and result.bandwidth_coefficient == Fraction(7, 4)
    assert result.alpha_s == pytest.approx(float(alpha), rel=1e-9)
    assert result.beta_s_per_byte == pytest.approx(float(beta), rel=1e-9)
    assert result.median_rel_error < 1e-12
    seg = result.segments[0]
    assert (seg.from_bytes, seg.to_bytes) == (1, 2**33)
    assert not seg.alpha_at_bound and not seg.beta_at_bound
    assert seg.alpha_ci_s[0] <= float(alpha) * (1 + 1e-9) and seg.alpha_ci_s[1] >= float(alpha) * (1 - 1e-9)
    assert result.predict(2**20) == pytest.approx(float(model(2**20)), rel=1e-9)
    assert result.predict("1MiB") == result.predict(2**20)


@pytest.mark.parametrize("collective", ["allgather", "reduce-scatter", "alltoall", "broadcast", "reduce"])
def test_exact_data_for_each_default_algorithm(collective):
    p = 12
    name, a, b, _, _ = coefficients(collective, None, p)
    assert name == DEFAULT_ALGORITHMS[collective]
    alpha, beta = Fraction(7, 10**6), Fraction(1, 10**10)
    times = {2**k: a * alpha + b * 2**k * beta for k in range(2, 30)}
    result = fit(_measurements(times, collective=collective, p=p))
    assert result.alpha_s == pytest.approx(float(alpha), rel=1e-9)
    assert result.beta_s_per_byte == pytest.approx(float(beta), rel=1e-9)


def test_two_regimes_are_split_at_the_breakpoint():
    small = _ring(Fraction(5, 10**6), Fraction(5, 10**10))  # slow protocol, low start-up
    large = _ring(Fraction(40, 10**6), Fraction(5, 10**12))  # fast protocol, higher start-up
    rng = random.Random(7)
    times = {2**k: (small if k < 17 else large)(2**k) * (1 + rng.uniform(-0.01, 0.01)) for k in range(3, 31)}
    result = fit(_measurements(times))
    assert len(result.segments) == 2
    first, second = result.segments
    assert (first.from_bytes, first.to_bytes, second.from_bytes, second.to_bytes) == (8, 2**16, 2**17, 2**30)
    assert second.alpha_s == pytest.approx(40e-6, rel=0.1)
    assert second.beta_s_per_byte == pytest.approx(5e-12, rel=0.02)
    assert first.beta_s_per_byte == pytest.approx(5e-10, rel=0.05)
    assert result.median_rel_error < 0.01
    counts = {c.segments: c for c in result.selection}
    assert counts[2].bic < counts[1].bic and counts[2].breakpoints == (2**17,)
    # predict uses the segment covering the size
    assert result.predict(2**10) == pytest.approx(float(small(2**10)), rel=0.05)
    assert result.predict(2**25) == pytest.approx(float(large(2**25)), rel=0.05)


def test_confidence_intervals_cover_the_truth_under_noise():
    # 95 % intervals: over 20 independent noisy logs at least 16 must cover each parameter
    alpha, beta = 10e-6, 2e-11
    covered = [0, 0]
    for seed in range(20):
        rng = random.Random(seed)
        times = {int(2 ** (k / 2)): (14 * alpha + 1.75 * 2 ** (k / 2) * beta) * (1 + rng.gauss(0, 0.02))
                 for k in range(6, 60)}
        seg = fit(_measurements(times), segments=1).segments[0]
        covered[0] += seg.alpha_ci_s[0] < alpha < seg.alpha_ci_s[1]
        covered[1] += seg.beta_ci_s_per_byte[0] < beta < seg.beta_ci_s_per_byte[1]
        assert seg.alpha_ci_s[1] - seg.alpha_ci_s[0] < alpha  # informative, not a blanket
    assert min(covered) >= 16, covered
    # deterministic: the bootstrap has a fixed seed
    assert fit(_measurements(times), segments=1).to_dict() == fit(_measurements(times), segments=1).to_dict()


def test_parameter_at_its_bound_is_flagged():
    # a time that grows faster than linearly: the best intercept is negative, the LP holds α at 0
    times = {2**k: Fraction(2**k * 2**k, 10**12) + Fraction(2**k, 10**9) for k in range(10, 20)}
    result = fit(_measurements(times), segments=1)
    seg = result.segments[0]
    assert seg.alpha_s == 0 and seg.alpha_at_bound
    assert seg.alpha_ci_s[0] == 0
    assert any("segment 1: alpha is at its bound 0" in n for n in result.notes)
    # these times hold no start-up (the smallest size moves its bytes fastest): the link's α is 0, said
    assert result.alpha_s == 0 and result.alpha_from.startswith("no size (segment 1's α is 0")
    assert any("[link] alpha: 0, not measured" in n for n in result.notes)


def test_segment_choice_and_errors():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    times = {2**k: model(2**k) for k in range(3, 15)}  # 12 sizes
    assert len(fit(_measurements(times), segments=3).segments) == 3
    with pytest.raises(InputError, match="segments=4 is not 1, 2 or 3"):
        fit(_measurements(times), segments=4)
    with pytest.raises(InputError, match="needs at least 12 distinct sizes"):
        fit(_measurements(dict(list(times.items())[:11])), segments=3)
    with pytest.raises(CalibrationError, match="at least 2 sizes"):
        fit(_measurements({1024: Fraction(1, 10**5)}))
    two = fit(_measurements({1024: model(1024), 4096: model(4096)}))
    assert len(two.segments) == 1 and two.segments[0].alpha_ci_s is None
    assert two.alpha_s == pytest.approx(5e-6, rel=1e-9)
    assert any("only 2 sizes" in w for w in two.warnings)


def test_repeated_sizes_stay_in_one_segment():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    rows = tuple(Row(n_bytes=2**k, time_s=model(2**k) * (1 + Fraction(j - 1, 100)))
                 for k in range(3, 20) for j in range(3))
    result = fit(Measurements(tool="costmodel-csv", collective="allreduce", p=8, rows=rows))
    assert len(result.residuals) == len(rows)
    for seg in result.segments:
        assert seg.points % 3 == 0


def test_algorithm_choice_and_pt2pt():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    m = _measurements({2**k: model(2**k) for k in range(3, 20)})
    rd = fit(m, algorithm="rd")
    assert rd.algorithm == "recursive-doubling" and rd.latency_coefficient == 3
    folded = fit(_measurements({2**k: model(2**k) for k in range(3, 20)}, p=12), algorithm="rd")
    assert folded.algorithm == "recursive-doubling-folded"
    assert any("not a power of two" in n for n in folded.notes)
    with pytest.raises(UnknownNameError, match="did you mean 'ring'"):
        fit(m, algorithm="rign")
    with pytest.raises(InputError, match="free parameter"):
        fit(_measurements({2**k: model(2**k) for k in range(3, 20)}, collective="broadcast"),
            algorithm="pipelined-chain")
    chain = fit(_measurements({2**k: model(2**k) for k in range(3, 20)}, collective="broadcast"),
                algorithm="pipelined-chain", extra={"segments": 4})
    assert chain.latency_coefficient == 8 + 4 - 2
    latency = parse_log("# OSU MPI Latency Test v5.8\n# Size          Latency (us)\n"
                       + "".join(f"{2**k}  {1.5 + 2**k * 1e-4:.2f}\n" for k in range(20)))
    pt = fit(latency)
    assert (pt.collective, pt.algorithm, pt.latency_coefficient, pt.bandwidth_coefficient) == ("pt2pt", "pt2pt", 1, 1)
    assert pt.segments[0].alpha_s == pytest.approx(1.5e-6, rel=0.01)
    with pytest.raises(InputError, match="does not apply to pt2pt"):
        fit(latency, algorithm="ring")


# --------------------------------------------------------------------------- results and profiles


def test_to_dict_has_the_agreed_keys_and_is_json():
    result = fit(read_log(LOGS / "nccl-tests" / "allreduce_a100x16_2node_rdma_oci.txt"))
    data = result.to_dict()
    assert {"collective", "p", "alpha_s", "beta_s_per_byte", "segments", "median_rel_error"} <= set(data)
    for seg in data["segments"]:
        assert {"from_bytes", "to_bytes", "alpha_s", "beta_s_per_byte", "ci", "median_rel_error"} <= set(seg)
    assert (data["collective"], data["p"], data["gamma_s_per_byte"]) == ("allreduce", 16, 0)
    assert data["segments"][-1]["to_bytes"] == 8589934592
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["residuals"][0]["n_bytes"] == 8
    assert any("gamma is not separable" in n for n in data["notes"])


def test_predict_picks_the_segment_covering_the_size():
    result = fit(read_log(LOGS / "nccl-tests" / "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt"))
    for r in result.residuals:
        assert result.predict(r.n_bytes) == pytest.approx(r.model_s, rel=1e-12)
    first, *_, last = result.segments
    assert result.segment_for(1) is first and result.segment_for(2**40) is last
    with pytest.raises(InputError):
        result.predict(-5)


@pytest.mark.parametrize("path", [*NCCL_LOGS, *sorted((LOGS / "osu").glob("*.txt"))], ids=lambda p: p.name)
def test_profile_toml_loads(path):
    m = read_log(path)
    result = fit(m, p=None if m.p else 16)
    text = result.to_profile_toml(name="measured")
    profile = parse_profile(text, path="measured.toml")
    assert profile.name == "measured" and profile.alpha_estimate is False
    assert float(profile.link.alpha_s) == pytest.approx(result.alpha_s, rel=1e-5)
    assert float(profile.link.beta_s_per_byte) == pytest.approx(result.beta_s_per_byte, rel=1e-5)
    assert profile.link.gamma_s_per_byte == 0
    assert profile.source == m.source.removeprefix("# source:").strip()
    assert len([n for n in profile.notes if n.startswith("segment ")]) >= len(result.segments)
    assert any("median |relative error|" in n for n in profile.notes)
    with pytest.raises(InputError):
        result.to_profile_toml(name=" ")


def test_profile_without_source_uses_the_path():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    m = _measurements({2**k: model(2**k) for k in range(3, 20)})
    text = fit(m).to_profile_toml(name="x", title='quote " and \\ backslash')
    profile = parse_profile(text, path="x.toml")
    assert profile.source == "<text>" and profile.title == 'quote " and \\ backslash'
    assert profile.link.alpha_s == Fraction(5, 10**6)
    assert math.isclose(float(profile.link.beta_s_per_byte), 8e-11, rel_tol=1e-12)


# --------------------------------------------------------------------------- the robust objective


def _vertex_lad(x, t):
    """Exact least absolute relative error by enumeration: the optimum of a 2-parameter LAD
    with θ ≥ 0 lies where two of {residual i = 0, α = 0, β = 0} hold (a vertex of the LP)."""
    import numpy as np

    w = x / t[:, None]
    candidates = [np.array([1 / w[i, 0], 0.0]) for i in range(len(t))]
    candidates += [np.array([0.0, 1 / w[i, 1]]) for i in range(len(t)) if w[i, 1] > 0]
    for i in range(len(t)):
        for j in range(i + 1, len(t)):
            m = w[[i, j]]
            if abs(np.linalg.det(m)) > 1e-300:
                theta = np.linalg.solve(m, np.ones(2))
                if (theta >= 0).all():
                    candidates.append(theta)
    return min(candidates, key=lambda th: np.abs(w @ th - 1).sum())


def test_lp_finds_the_same_optimum_as_vertex_enumeration():
    import numpy as np

    from costmodel.calibration.fit import _design, _lad

    rng = np.random.default_rng(3)
    for _ in range(5):
        n = 2.0 ** np.arange(3, 28)
        t = (14 * 5e-6 + 1.75 * n * 8e-11) * np.exp(rng.normal(0, 0.05, len(n)))
        x = _design(n, 14, 1.75)
        theta, sae = _lad(x, t)
        exact = _vertex_lad(x, t)
        assert sae == pytest.approx(np.abs((x @ exact) / t - 1).sum(), rel=1e-9)
        assert theta == pytest.approx(exact, rel=1e-6)


def _lad_problems(seed):
    """Programmes like those the fit solves: noisy lines, two regimes, rounded times, bootstrap resamples
    (repeated rows), times with an additive floor; 2 to 2,000 rows."""
    import numpy as np

    from costmodel.calibration.fit import _design

    rng = np.random.default_rng(seed)
    for trial in range(60):
        m = int(rng.choice([2, 3, 5, 8, 20, 40, 100, 300, 2000]))
        kind = trial % 6
        n = np.sort(rng.uniform(1, 2**33, m)) if kind != 3 else np.sort(2.0 ** rng.integers(0, 34, m))
        x = _design(n, 14, 1.75)
        alpha, beta = rng.choice([0, 5e-6, 4e-5]), rng.choice([5e-12, 5e-10])
        t = x @ [alpha, beta]
        if kind == 0:
            t = t * np.exp(rng.normal(0, 0.02, m))
        elif kind == 1:
            t = t * np.exp(rng.normal(0, 0.3, m))
        elif kind == 2:
            t = t + rng.uniform(0, 1e-5, m)
        elif kind == 3:
            t = np.round(t * np.exp(rng.normal(0, 0.02, m)), 8) + 1e-8
        elif kind == 4:
            pick = rng.integers(0, m, m)
            x, t = x[pick], (t * np.exp(rng.normal(0, 0.05, m)))[pick]
        else:
            t = t * (1 + 0.5 * (n > np.median(n))) * np.exp(rng.normal(0, 0.01, m))
        if len(np.unique(x[:, 1])) > 1:  # one size has no single best line; the fit never asks
            yield x, t, rng.uniform(0, 1e-5, 2) if trial % 2 else None


@pytest.mark.parametrize("seed", [0, 1])
def test_the_descent_finds_the_optimum_of_the_programme(seed):
    # against two independent solvers: vertex enumeration (small) and HiGHS's LP (any size)
    import numpy as np

    from costmodel.calibration.fit import _descend, _lad_highs

    for x, t, start in _lad_problems(seed):
        solved = _descend(x / t[:, None], start)
        assert solved is not None
        theta, sae = solved
        assert (theta >= 0).all()
        references = [_lad_highs(x, t)]
        if len(t) <= 40:
            exact = _vertex_lad(x, t)
            references.append((exact, float(np.abs((x @ exact) / t - 1).sum())))
        for other, other_sae in references:
            # never worse; HiGHS stops within its tolerances (1e-7), so on a few nearly exact lines of
            # 2,000 rows the descent's sum is lower than the LP's by up to 2e-7 of it
            assert sae <= other_sae * (1 + 1e-9) + 1e-12
            if other_sae > 1e-9 and sae >= other_sae * (1 - 1e-9):  # the same, unique optimum: the same line
                assert theta == pytest.approx(other, rel=1e-7, abs=1e-9 * np.abs(other).max())


def test_the_vertex_table_solves_every_range_and_resample_of_a_short_log():
    # a short log's search and bootstrap read their optima from one table of all its rows' vertices:
    # against the enumeration of each range's or resample's own vertices, and never worse than HiGHS
    import numpy as np

    from costmodel.calibration.fit import _lad_highs, _Vertices

    def check(total, theta, x, t):
        exact = _vertex_lad(x, t)
        exact_sae = float(np.abs((x @ exact) / t - 1).sum())
        assert total == pytest.approx(exact_sae, rel=1e-9, abs=1e-12)
        if exact_sae > 1e-9:  # noisy rows: a unique optimum, the same line
            assert theta == pytest.approx(exact, rel=1e-7, abs=1e-9 * np.abs(exact).max())
        assert total <= _lad_highs(x, t)[1] * (1 + 1e-9) + 1e-12

    rng = np.random.default_rng(11)
    for x, t, _ in _lad_problems(11):
        if len(t) > 40:
            continue
        table = _Vertices(x / t[:, None])
        lo, hi = sorted(rng.choice(len(t) + 1, 2, replace=False))
        if len(np.unique(x[lo:hi, 1])) > 1:
            theta, total = table.best((np.arange(len(t)) >= lo) & (np.arange(len(t)) < hi))
            assert table.least(lo, hi) == pytest.approx(total, rel=1e-12)
            check(total, theta, x[lo:hi], t[lo:hi])
        picks = [p for p in (rng.integers(0, len(t), len(t)) for _ in range(5)) if len(np.unique(x[p, 1])) > 1]
        if picks:
            thetas, sums = table.best(np.array([np.bincount(p, minlength=len(t)) for p in picks]))
            for p, theta, total in zip(picks, thetas, sums, strict=True):
                check(total, theta, x[p], t[p])


def test_highs_takes_over_if_the_descent_does_not_settle(monkeypatch):
    import sys

    fit_module = sys.modules["costmodel.calibration.fit"]  # the package's name `fit` is the function
    log = LOGS / "nccl-tests" / "allreduce_a100x16_2node_rdma_oci.txt"
    usual = fit(read_log(log))
    monkeypatch.setattr(fit_module, "_MAX_STEPS", 0)
    assert fit_module._descend(fit_module._design([8, 16], 1, 1), None) is None
    by_highs = fit(read_log(log))
    assert len(by_highs.segments) == len(usual.segments)
    for a, b in zip(by_highs.segments, usual.segments, strict=True):
        assert (a.from_bytes, a.to_bytes) == (b.from_bytes, b.to_bytes)
        assert a.alpha_s == pytest.approx(b.alpha_s, rel=1e-9)
        assert a.beta_s_per_byte == pytest.approx(b.beta_s_per_byte, rel=1e-9)


def test_outliers_are_ignored_by_the_lad_fit_but_not_by_least_squares():
    import numpy as np

    alpha, beta = Fraction(7, 10**6), Fraction(3, 10**11)
    model = _ring(alpha, beta)
    times = {2**k: model(2**k) for k in range(3, 31)}
    for k in (6, 12, 20):  # three fast outliers, as a cached or mis-timed run gives
        times[2**k] = times[2**k] / 3
    result = fit(_measurements(times), segments=1)
    assert result.segments[0].alpha_s == pytest.approx(float(alpha), rel=1e-9)
    assert result.beta_s_per_byte == pytest.approx(float(beta), rel=1e-9)
    assert [r.n_bytes for r in result.residuals if r.outlier] == [2**6, 2**12, 2**20]
    assert any("outliers" in w and "4.096 kB" in w for w in result.warnings)
    # the least-squares relative fit (what the fitter did before) is pulled off by the same rows
    n = np.array(sorted(times), dtype=float)
    t = np.array([float(times[k]) for k in sorted(times)])
    w = np.column_stack([np.full_like(n, 14.0), 1.75 * n]) / t[:, None]
    ls = np.linalg.lstsq(w, np.ones(len(n)), rcond=None)[0]
    assert abs(ls[0] / float(alpha) - 1) > 0.1


def test_clean_single_line_gets_one_segment_even_with_noise():
    alpha, beta = 10e-6, 2e-11
    rng = random.Random(5)
    for noise in (0.0, 0.01, 0.03, 0.05):
        times = {2**k: (14 * alpha + 1.75 * 2**k * beta) * (1 + rng.gauss(0, noise)) for k in range(3, 34)}
        result = fit(_measurements(times))
        assert len(result.segments) == 1, (noise, [c.to_dict() for c in result.selection])


def test_at_least_four_sizes_per_segment_and_a_warning_below():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    for k in range(3, 10):
        times = {2**j: model(2**j) for j in range(3, 3 + k)}
        result = fit(_measurements(times))
        assert all(s.points >= 4 for s in result.segments) or len(times) < 4
    three = fit(_measurements({2**j: model(2**j) for j in range(3, 6)}))
    assert len(three.segments) == 1 and any("only 3 sizes" in w for w in three.warnings)


def test_a_collapse_is_a_warning_not_a_segment():
    model = _ring(Fraction(5, 10**6), Fraction(8, 10**11))
    times = {2**k: model(2**k) * (10 if k >= 25 else 1) for k in range(3, 31)}
    result = fit(_measurements(times))
    collapse = [w for w in result.warnings if w.startswith("collapse")]
    assert len(collapse) == 1 and "from 16.78 MB to 33.55 MB" in collapse[0], collapse
    clean = fit(_measurements({2**k: model(2**k) for k in range(3, 31)}))
    assert not clean.warnings


def test_ten_thousand_rows_fit_and_stay_exact():
    # the split search runs over a coarse grid and a subsample: a long log is fast and still exact
    alpha, beta = Fraction(5, 10**6), Fraction(8, 10**11)
    model = _ring(alpha, beta)
    rows = tuple(Row(n_bytes=8 + 97 * i, time_s=model(8 + 97 * i)) for i in range(10_000))
    result = fit(Measurements(tool="costmodel-csv", collective="allreduce", p=8, rows=rows))
    assert len(result.segments) == 1
    assert result.alpha_s == pytest.approx(float(alpha), rel=1e-6)
    assert result.beta_s_per_byte == pytest.approx(float(beta), rel=1e-6)
