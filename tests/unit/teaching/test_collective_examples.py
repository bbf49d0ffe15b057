"""The collective examples and exercises reproduce the seeds, recompute, model their slips, and grade.

Expected values are rederived here by hand (the arithmetic is in the comments),
not by calling the examples' own code: the seed numbers of DSGD §5-§9 and
Patterns, and nccl-tests' bus bandwidth factors.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

from costmodel import symbols as sym
from costmodel.errors import InputError
from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import Submission, grade_answer, load_bank
from costmodel.units import format_size, format_time

MB, GB = 10**6, 10**9
KiB, MiB = 2**10, 2**20
ALPHA = Fraction(5, 10**6)  # 5 µs
BETA = Fraction(8, 10**11)  # 0.08 ns/B = 1/(12.5 GB/s)
US, MS = Fraction(1, 10**6), Fraction(1, 1000)


def answers(name: str, settings: dict[str, str] | None = None, slip: Slip | None = None) -> dict:
    return {k: a.value for k, a in get(name).run(settings, slip=slip).answers.items()}


# -- examples: seeds reproduced, settings recomputed, slips modelled -----------------------------------


def test_allreduce_sum_dsgd_5():
    got = answers("allreduce-sum")
    # 1 + 2 + 3 = 6 on every worker, 6/3 = 2; the ring takes 2(3 − 1) = 4 steps
    assert (got["sum"], got["mean"], got["rounds"], got["same"]) == (6, 2, 4, "yes")
    got = answers("allreduce-sum", {"x": "0.5, 1.5, 2, 4"})
    assert (got["sum"], got["mean"], got["rounds"]) == (8, 2, 6)
    with pytest.raises(InputError, match="at least two"):
        get("allreduce-sum").run({"x": "5"})


def test_ring_bytes_dsgd_6_and_practice_4_5():
    got = answers("ring-bytes")
    # p = 4, n = 100 MB: chunks of 25 MB, 2·3 = 6 rounds, 6 · 25 MB = 150 MB
    assert (got["chunk"], got["rounds"], got["sent"], got["received"]) == (25 * MB, 6, 150 * MB, 150 * MB)
    got = answers("ring-bytes", {"p": "8", "n": "64 MB"})
    # practice 4: 7 + 7 = 14 rounds; practice 5: 2 · 7/8 · 64 MB = 112 MB
    assert (got["phase-rounds"], got["rounds"], got["sent"]) == (7, 14, 112 * MB)
    slipped = answers("ring-bytes", slip=Slip("own-chunk"))
    # the own chunk sent too: 2p = 8 rounds of 25 MB = 200 MB = 2n
    assert (slipped["rounds"], slipped["sent"]) == (8, 200 * MB)


def test_ring_vs_naive_dsgd_6_and_patterns():
    got = answers("ring-vs-naive")
    # ring: 2 · 3/4 · 100 MB = 150 MB at 12.5 GB/s = 12 ms; naive root: 2 · 3 · 100 MB = 600 MB → 48 ms
    assert (got["ring"], got["naive"], got["ratio"]) == (12 * MS, 48 * MS, 4)
    assert (got["ring-sent"], got["root-bytes"]) == (150 * MB, 600 * MB)
    # Patterns: the ring meets the bound 2(N − 1)/N·D/B when α = 0
    assert (got["bound"], got["bound-ratio"]) == (12 * MS, 1)
    # "N× worse": the ratio is p
    assert answers("ring-vs-naive", {"p": "13", "n": "7 MB"})["ratio"] == 13
    # with α = 5 µs the ring pays 2·3 start-ups, the bound only ⌈log₂4⌉ = 2
    got = answers("ring-vs-naive", {"alpha": "5 us"})
    assert got["ring"] == 6 * ALPHA + 12 * MS
    assert got["bound-ratio"] == (6 * ALPHA + 12 * MS) / (2 * ALPHA + 12 * MS)
    # alpha-only with α = 5 µs: both pay 2(p − 1) = 6 start-ups, ratio 1
    assert answers("ring-vs-naive", {"alpha": "5 us"}, Slip("alpha-only"))["ratio"] == 1
    # with α = 0 the alpha-only slip has no time at all: the example says it cannot divide
    with pytest.raises(InputError, match="divide by zero"):
        get("ring-vs-naive").run(slip=Slip("alpha-only"))


def test_four_formulas_dsgd_7():
    n = 8 * KiB
    got = answers("four-formulas")
    assert got["ring"] == 30 * ALPHA + Fraction(15, 8) * n * BETA == Fraction(1512288, 10**10)
    assert got["tree"] == 8 * (ALPHA + n * BETA) == Fraction(4524288, 10**11)
    assert got["recursive-doubling"] == 4 * (ALPHA + n * BETA) == Fraction(2262144, 10**11)
    assert got["rabenseifner"] == 8 * ALPHA + Fraction(15, 8) * n * BETA
    assert got["best"] == "recursive-doubling"
    big = answers("four-formulas", {"p": "64", "n": "64 MiB"})
    # at 64 MiB Rabenseifner: 12α + 2·63/64·nβ
    assert big["rabenseifner"] == 12 * ALPHA + Fraction(63, 32) * 64 * MiB * BETA
    assert big["best"] == "rabenseifner"
    # slips: p for log₂p, ln for log₂, one term only
    assert answers("four-formulas", slip=Slip("p-for-log-p"))["recursive-doubling"] == 16 * (ALPHA + n * BETA)
    ln = answers("four-formulas", slip=Slip("log-base", "ln"))["tree"]
    assert ln == pytest.approx(2 * math.log(16) * float(ALPHA + n * BETA))
    assert answers("four-formulas", slip=Slip("alpha-only"))["ring"] == 30 * ALPHA
    assert answers("four-formulas", slip=Slip("beta-only"))["ring"] == Fraction(15, 8) * n * BETA


def test_tree_levels_dsgd_8():
    got = answers("tree-levels")
    # 2 log₂1024 = 20 levels against 2(1024 − 1) = 2046 rounds
    assert (got["depth"], got["tree-rounds"], got["ring-rounds"], got["ratio"]) == (10, 20, 2046, Fraction(2046, 20))
    # integer depth: ⌈log₂1000⌉ = 10
    assert (answers("tree-levels", {"p": "1000"})["tree-rounds"], answers("tree-levels", {"p": "1000"})["ring-rounds"]) == (20, 1998)
    assert answers("tree-levels", slip=Slip("p-for-log-p"))["tree-rounds"] == 2048
    # counts are whole: 2 ln 1024 = 13.86 is written 14
    assert answers("tree-levels", slip=Slip("log-base", "ln"))["tree-rounds"] == 14


def test_recursive_doubling_dsgd_8():
    got = answers("recursive-doubling-bytes")
    # XOR 1, 2, 4: three exchanges of the whole 64 MB tensor = 3n = 192 MB
    assert (got["rounds"], got["multiple"], got["sent"]) == (3, 3, 192 * MB)
    assert answers("recursive-doubling-bytes", {"p": "16", "n": "10 MB"})["sent"] == 40 * MB
    slipped = answers("recursive-doubling-bytes", slip=Slip("p-for-log-p"))
    assert (slipped["rounds"], slipped["sent"]) == (8, 8 * 64 * MB)


def test_recursive_halving_dsgd_8():
    got = answers("recursive-halving-bytes")
    # n/2 + n/4 + n/8 = 7n/8 = 56 MB of 64 MB, in 3 rounds
    assert (got["sent"], got["fraction"], got["rounds"]) == (56 * MB, Fraction(7, 8), 3)
    assert answers("recursive-halving-bytes", {"p": "16"})["sent"] == 60 * MB  # 15/16 · 64 MB
    assert answers("recursive-halving-bytes", slip=Slip("own-chunk"))["sent"] == 64 * MB  # 7n/8 + n/8
    assert answers("recursive-halving-bytes", slip=Slip("p-for-log-p"))["rounds"] == 8


def test_rabenseifner_vs_ring_dsgd_8_and_practice_6():
    got = answers("rabenseifner-vs-ring")
    # 2 · 7/8 · 64 MB = 112 MB for both; 2 log₂8 = 6 rounds against 2 · 7 = 14
    assert (got["rab-sent"], got["rab-rounds"], got["ring-sent"], got["ring-rounds"]) == (112 * MB, 6, 112 * MB, 14)
    assert got["rounds-saved"] == 8
    got = answers("rabenseifner-vs-ring", {"p": "1024"})
    assert (got["rab-rounds"], got["ring-rounds"]) == (20, 2046)
    slipped = answers("rabenseifner-vs-ring", slip=Slip("own-chunk"))
    assert (slipped["rab-sent"], slipped["ring-sent"], slipped["ring-rounds"]) == (128 * MB, 128 * MB, 16)
    assert answers("rabenseifner-vs-ring", slip=Slip("p-for-log-p"))["rab-rounds"] == 16


def test_choose_by_size_dsgd_9():
    got = answers("choose-by-size")
    assert got["recursive-doubling"] == Fraction(2262144, 10**11) and got["best"] == "recursive-doubling"
    got = answers("choose-by-size", {"n": "64 MiB"})
    # payload 1.875 · 67108864 · 0.08 ns = 10.0663296 ms; Rabenseifner 8α more, the ring 30α
    assert got["rabenseifner"] == 8 * ALPHA + Fraction(1006632960, 10**11)
    assert got["ring"] == 30 * ALPHA + Fraction(1006632960, 10**11)
    assert got["best"] == "rabenseifner"


def test_ring_calculation_dsgd_9():
    got = answers("ring-calculation")
    # 2(16 − 1) = 30 start-ups = 150 µs; 2 · 15/16 · 8192 B = 15360 B at 0.08 ns/B = 1.2288 µs
    assert (got["startups"], got["latency"], got["sent"]) == (30, 150 * US, 15360)
    assert got["payload"] == Fraction(12288, 10**10)
    assert got["total"] == Fraction(1512288, 10**10)  # 151.2288 µs
    assert answers("ring-calculation", {"p": "8"})["sent"] == 14336  # 2 · 7/8 · 8192
    assert answers("ring-calculation", slip=Slip("alpha-only"))["total"] == 150 * US
    assert answers("ring-calculation", slip=Slip("beta-only"))["total"] == Fraction(12288, 10**10)
    slipped = answers("ring-calculation", slip=Slip("own-chunk"))
    # 2p = 32 start-ups, 2n = 16384 B
    assert (slipped["startups"], slipped["latency"], slipped["sent"]) == (32, 160 * US, 16384)
    assert slipped["payload"] == 16384 * BETA


def test_startups_decide_practice_7():
    got = answers("startups-decide")
    # four exchanges against the ring's thirty; 20 µs of start-ups against 2.62144 µs of payload
    assert (got["rd-startups"], got["ring-startups"], got["best"], got["dominant"]) == (4, 30, "recursive-doubling", "latency")
    assert got["rd-latency-share"] == 4 * ALPHA / (4 * ALPHA + 4 * 8192 * BETA)
    # at 128 KiB the payload 4 · 131072 · 0.08 ns = 41.94 µs outweighs 20 µs
    assert answers("startups-decide", {"n": "128 KiB"})["dominant"] == "bandwidth"
    assert answers("startups-decide", slip=Slip("beta-only"))["dominant"] == "bandwidth"
    assert answers("startups-decide", slip=Slip("p-for-log-p"))["rd-startups"] == 16


def test_crossover_rd_rab_dsgd_9():
    got = answers("crossover-rd-rab")
    # 4α + 4nβ = 8α + 1.875nβ ⇒ n = 4α / (2.125β) = 2e6/17 B ≈ 118 kB = 115 KiB
    assert got["crossover"] == Fraction(2_000_000, 17)
    assert format_size(got["crossover"], digits=3) == "118 kB = 115 KiB"
    # p = 64: 6α / ((6 − 126/64)β)
    assert answers("crossover-rd-rab", {"p": "64"})["crossover"] == 6 * ALPHA / ((6 - Fraction(126, 64)) * BETA)


def test_ring_vs_rabenseifner_dsgd_9():
    got = answers("ring-vs-rabenseifner")
    # payload 2 · 1023/1024 · 64 MiB · 0.08 ns = 10.72693248 ms; ring + 2046α = 10.23 ms, Rabenseifner + 20α
    assert got["ring"] == Fraction(2095693248, 10**11)
    assert got["rabenseifner"] == Fraction(1082693248, 10**11)
    assert (format_time(got["ring"]), format_time(got["rabenseifner"])) == ("20.96 ms", "10.83 ms")
    assert got["ring-latency"] == 2046 * ALPHA
    assert got["difference"] == 2026 * ALPHA and got["best"] == "rabenseifner"
    assert answers("ring-vs-rabenseifner", slip=Slip("beta-only"))["ring"] == Fraction(1072693248, 10**11)
    assert answers("ring-vs-rabenseifner", slip=Slip("alpha-only"))["rabenseifner"] == 20 * ALPHA
    assert answers("ring-vs-rabenseifner", slip=Slip("p-for-log-p"))["rabenseifner"] == 2048 * ALPHA + Fraction(1072693248, 10**11)


def test_crossover_pair():
    got = answers("crossover-pair")
    # rd 4α + 4nβ against ring 30α + 15/8·nβ: n = 26α / (17/8·β) = 13e6/17 B
    assert got["crossover"] == 26 * ALPHA / (Fraction(17, 8) * BETA) == Fraction(13_000_000, 17)
    assert got["time"] == 4 * ALPHA + 4 * got["crossover"] * BETA
    assert (got["below"], got["above"]) == ("recursive-doubling", "ring")
    # tree 8α + 8nβ against ring: 22α / (49/8·β); the order of a and b does not matter
    tree = answers("crossover-pair", {"a": "ring", "b": "binomial"})
    assert tree["crossover"] == 22 * ALPHA / (Fraction(49, 8) * BETA)
    assert (tree["below"], tree["above"]) == ("tree", "ring")
    # the slip: rd with 16 for log₂16: 14α / ((16 − 15/8)β)
    assert answers("crossover-pair", slip=Slip("p-for-log-p"))["crossover"] == 14 * ALPHA / (Fraction(113, 8) * BETA)
    with pytest.raises(InputError, match="do not cross"):  # the same start-ups, the tree sends more
        get("crossover-pair").run({"a": "tree", "b": "rabenseifner"})
    with pytest.raises(InputError, match="tuned parameters"):
        get("crossover-pair").run({"a": "double-binary-tree"})
    with pytest.raises(InputError, match="same algorithm"):
        get("crossover-pair").run({"a": "ring", "b": "ring"})


def test_bus_bandwidth_nccl_tests():
    got = answers("bus-bandwidth")
    # 1 GB / 10 ms = 100 GB/s; × 2·7/8 = 175 GB/s; 175/200 of the peak; 1 GB · 7/4 / 200 GB/s = 8.75 ms
    assert (got["algbw"], got["factor"], got["busbw"]) == (100 * GB, Fraction(7, 4), 175 * GB)
    assert (got["efficiency"], got["ideal-time"]) == (Fraction(7, 8), Fraction(875, 10**5))
    got = answers("bus-bandwidth", {"collective": "bcast", "p": "16"})
    assert (got["factor"], got["busbw"]) == (1, 100 * GB)
    slipped = answers("bus-bandwidth", slip=Slip("own-chunk"))
    # (p − 1)/p left out: factor 2, 200 GB/s, the time at the peak 10 ms
    assert (slipped["factor"], slipped["busbw"], slipped["ideal-time"]) == (2, 200 * GB, 10 * MS)
    assert answers("bus-bandwidth", {"collective": "reduce"}, Slip("own-chunk"))["factor"] == 1


def test_model_busbw():
    n = 64 * MiB
    time_s = 30 * ALPHA + Fraction(15, 8) * n * BETA  # 10.2163296 ms
    got = answers("model-busbw")
    assert got["time"] == time_s == Fraction(102163296, 10**10)
    assert got["algbw"] == n / time_s
    assert got["busbw"] == n / time_s * Fraction(15, 8)
    assert got["link-fraction"] == n / time_s * Fraction(15, 8) * BETA
    # without start-ups the ring runs at the link speed: busbw = 1/β
    assert answers("model-busbw", {"alpha": "0 s"})["link-fraction"] == 1
    assert answers("model-busbw", slip=Slip("beta-only"))["link-fraction"] == 1


# -- exercises ----------------------------------------------------------------------------------------

BANK = load_bank()
OURS = [e for e in BANK if e.path.endswith("collectives.toml")]

# the exercise's own numbers, worked by hand
DEFAULTS = {
    "ring-bytes": {"sent": 112 * MB, "rounds": 14},
    "ring-allreduce-rounds": {"phase-rounds": 7, "rounds": 14},
    "ring-allreduce-bytes": {"chunk": 8 * MB, "sent": 112 * MB},
    "rabenseifner-bytes-rounds": {"rab-sent": 112 * MB, "rab-rounds": 6, "ring-rounds": 14},
    "allreduce-sum": {"sum": 6, "mean": 2},
    "tree-levels": {"tree-rounds": 20, "ring-rounds": 2046},
    "recursive-doubling-bytes": {"rounds": 3, "sent": 192 * MB},
    "recursive-halving-bytes": {"sent": 56 * MB, "rounds": 3},
    "ring-vs-naive-root": {"ring": 12 * MS, "naive": 48 * MS, "ratio": 4},
    "allreduce-lower-bound": {"bound": 12 * MS, "bound-ratio": 1},
    "four-formulas": {"ring": 30 * ALPHA + Fraction(15, 8) * MiB * BETA, "tree": 8 * (ALPHA + MiB * BETA),
                      "recursive-doubling": 4 * (ALPHA + MiB * BETA),
                      "rabenseifner": 8 * ALPHA + Fraction(15, 8) * MiB * BETA},
    "choose-small-message": {"recursive-doubling": Fraction(2262144, 10**11), "best": "recursive-doubling"},
    "choose-large-message": {"ring": 30 * ALPHA + Fraction(1006632960, 10**11),
                             "rabenseifner": 8 * ALPHA + Fraction(1006632960, 10**11), "best": "rabenseifner"},
    "ring-calculation": {"startups": 30, "latency": 150 * US, "sent": 15360, "payload": Fraction(12288, 10**10),
                         "total": Fraction(1512288, 10**10)},
    "small-message-startups": {"rd-startups": 4, "ring-startups": 30, "dominant": "latency"},
    "ring-vs-rabenseifner-at-scale": {"ring": Fraction(2095693248, 10**11), "rabenseifner": Fraction(1082693248, 10**11),
                                      "ring-latency": Fraction(1023, 100_000)},
    "crossover-rd-rab": {"crossover": Fraction(2_000_000, 17)},
    "crossover-rd-ring": {"crossover": Fraction(13_000_000, 17), "below": "recursive-doubling", "above": "ring"},
    "crossover-tree-ring": {"crossover": Fraction(11_000_000, 49), "below": "tree"},
    "busbw-allreduce": {"algbw": 100 * GB, "busbw": 175 * GB},
    "busbw-collectives": {"factor": Fraction(7, 8), "busbw": Fraction(175, 2) * GB},  # reduce-scatter, p = 8
    "busbw-efficiency": {"efficiency": Fraction(7, 8), "ideal-time": Fraction(875, 10**5)},
    # ring all-reduce, by hand: 2(p − 1)α + 2(p − 1)/p·n·β in 2(p − 1) rounds
    "cost-formula": {"time": 2 * (sym.p - 1) * sym.ALPHA + 2 * (sym.p - 1) / sym.p * sym.n * sym.BETA,
                     "rounds": 2 * sym.p - 2},
    "busbw-model": {"time": Fraction(102163296, 10**10),
                    "busbw": 64 * MiB / Fraction(102163296, 10**10) * Fraction(15, 8),
                    "link-fraction": 64 * MiB / Fraction(102163296, 10**10) * Fraction(15, 8) * BETA},
}


def test_the_file_has_every_topic_and_the_practice_questions():
    assert len(OURS) >= 18
    assert {e.topic for e in OURS} == {"alpha-beta", "crossovers", "rounds-and-bytes", "bus-bandwidth"}
    ids = {e.id for e in OURS}
    assert {"ring-bytes", "ring-allreduce-rounds", "ring-allreduce-bytes",
            "rabenseifner-bytes-rounds", "small-message-startups"} <= ids
    assert set(DEFAULTS) == ids


@pytest.mark.parametrize("exercise", OURS, ids=lambda e: e.id)
def test_default_variant_is_the_hand_computation(exercise):
    v = exercise.variant()
    got = {a.name: v.expected(a.name) for a in exercise.answers}
    want = DEFAULTS[exercise.id]
    assert set(got) == set(want)
    for name, value in want.items():  # formulas compare by value: sympy keeps 2(p - 1) and 2p - 2 apart
        assert sympy.simplify(got[name] - value) == 0 if hasattr(value, "free_symbols") else got[name] == value


def _right(value, spec) -> str | int:
    """The right answer as a student would write it, in the answer's unit."""
    if isinstance(value, str):
        return value
    if hasattr(value, "free_symbols"):  # a formula, typed back
        return str(sympy.expand(value))
    if not spec.unit:
        return int(value) if value == int(value) else repr(float(value))
    return f"{float(value / spec.scale)!r} {spec.unit}"


@pytest.mark.parametrize("exercise", OURS, ids=lambda e: e.id)
def test_every_seed_computes_and_its_right_answers_grade_correct(exercise):
    for seed in range(200):
        v = exercise.variant(seed)
        assert "{" not in v.statement
        for spec in exercise.answers:
            value = v.expected(spec.name)
            assert value is not None
            g = grade_answer(exercise, Submission(exercise=exercise.id, seed=seed, name=spec.name,
                                                  value=_right(value, spec)))
            assert g.correct and not g.diagnosis, (seed, spec.name, g.to_dict())


# (exercise, answer, wrong value at the exercise's own numbers, the mistake that explains it)
WRONG = [
    ("ring-bytes", "sent", "128 MB", "own-chunk"),  # 2n
    ("ring-bytes", "rounds", 16, "own-chunk"),  # 2p
    ("ring-bytes", "sent", "106.8 MB", "binary-prefix"),  # 112 MB written in MiB
    ("ring-allreduce-rounds", "phase-rounds", 8, "own-chunk"),
    ("ring-allreduce-bytes", "sent", "224 MB", "factor-two"),  # sent and received
    ("rabenseifner-bytes-rounds", "rab-sent", "128 MB", "own-chunk"),
    ("rabenseifner-bytes-rounds", "rab-rounds", 16, "p-for-log-p"),  # 2·8
    ("rabenseifner-bytes-rounds", "rab-rounds", 4, "log-base"),  # 2 ln 8 = 4.16, a count: 4
    ("rabenseifner-bytes-rounds", "ring-rounds", 16, "own-chunk"),
    ("allreduce-sum", "mean", 4, "factor-two"),
    ("tree-levels", "tree-rounds", 2048, "p-for-log-p"),
    ("tree-levels", "tree-rounds", 14, "log-base"),  # 2 ln 1024 = 13.86, a count: 14
    ("recursive-doubling-bytes", "sent", "512 MB", "p-for-log-p"),
    ("recursive-doubling-bytes", "rounds", 2, "log-base"),  # ln 8 = 2.08, a count: 2
    ("recursive-doubling-bytes", "sent", "133.1 MB", "log-base"),  # ln 8 · 64 MB
    ("recursive-halving-bytes", "sent", "64 MB", "own-chunk"),
    ("recursive-halving-bytes", "rounds", 8, "p-for-log-p"),
    ("ring-vs-naive-root", "ring", "24 ms", "factor-two"),
    ("ring-vs-naive-root", "naive", "48 s", "power-of-ten"),
    ("allreduce-lower-bound", "bound", "1.2 ms", "power-of-ten"),
    ("four-formulas", "ring", "0.15 ms", "alpha-only"),  # 30 · 5 µs
    ("four-formulas", "ring", "0.157286 ms", "beta-only"),  # 15/8 · 2^20 · 0.08 ns
    ("four-formulas", "recursive-doubling", "1.422177 ms", "p-for-log-p"),  # 16(α + 2^20·β)
    ("four-formulas", "tree", f"{2 * math.log(16) * (5e-3 + 2**20 * 8e-8) / 1000:.6f} ms", "log-base"),
    ("choose-small-message", "recursive-doubling", f"{math.log(16) * (5 + 8192 * 8e-5):.5f} us", "log-base"),
    ("choose-large-message", "rabenseifner", "0.04 ms", "alpha-only"),
    ("ring-calculation", "total", "150 us", "alpha-only"),
    ("ring-calculation", "sent", "16384 B", "own-chunk"),
    ("ring-calculation", "startups", 32, "own-chunk"),
    ("ring-calculation", "payload", "1.31072 us", "own-chunk"),
    ("small-message-startups", "rd-startups", 16, "p-for-log-p"),
    ("small-message-startups", "dominant", "bandwidth", "beta-only"),
    ("ring-vs-rabenseifner-at-scale", "ring", "10.72693 ms", "beta-only"),
    ("ring-vs-rabenseifner-at-scale", "rabenseifner", "20.96693 ms", "p-for-log-p"),  # 2048α + payload
    ("crossover-rd-rab", "crossover", "193 kB", "log-base"),  # ln 16 α / ((ln 16 − 1.875)β)
    ("crossover-rd-ring", "crossover", "61.9 kB", "p-for-log-p"),  # 14α / ((16 − 15/8)β)
    ("crossover-tree-ring", "crossover", f"{(30 - 2 * math.log(16)) * 5e-6 / ((2 * math.log(16) - 1.875) * 8e-11) / 1000:.4g} kB",
     "log-base"),
    ("busbw-allreduce", "busbw", "200 GB/s", "own-chunk"),
    ("busbw-allreduce", "algbw", "800 GB/s", "bits-bytes"),
    ("busbw-collectives", "factor", 1, "own-chunk"),
    ("busbw-collectives", "busbw", "100 GB/s", "own-chunk"),
    ("busbw-efficiency", "ideal-time", "10 ms", "own-chunk"),
    ("busbw-model", "time", "0.15 ms", "alpha-only"),
    ("busbw-model", "link-fraction", 1, "beta-only"),
]


@pytest.mark.parametrize(("exercise", "name", "value", "mistake"), WRONG, ids=str)
def test_wrong_answers_are_diagnosed(exercise, name, value, mistake):
    g = grade_answer(BANK.get(exercise), Submission(exercise=exercise, name=name, value=value))
    assert not g.correct
    assert mistake in {m for d in g.diagnosis for m in d.mistakes}, [d.to_dict() for d in g.diagnosis]


def test_slips_are_diagnosed_in_students_variants():
    """For every seed, the slipped value (worked by hand from the variant's givens) is diagnosed."""
    checks = 0
    for seed in range(0, 200, 5):
        v = BANK.get("ring-bytes").variant(seed)
        n = v.values["n"]
        g = grade_answer(BANK.get("ring-bytes"), Submission("ring-bytes", f"{float(2 * n / MB)!r} MB", seed=seed,
                                                             name="sent"))
        assert "own-chunk" in {d.mistake for d in g.diagnosis}
        v = BANK.get("four-formulas").variant(seed)
        p, alpha, beta, n = (v.values[k] for k in ("p", "alpha", "beta", "n"))
        right, slipped = v.expected("ring"), 2 * (p - 1) * alpha  # alpha-only: 2(p − 1)·α
        assert right == slipped + 2 * Fraction(p - 1, p) * n * beta
        if abs(slipped - right) > right / 500:
            g = grade_answer(BANK.get("four-formulas"), Submission("four-formulas", f"{float(slipped / MS)!r} ms",
                                                                   seed=seed, name="ring"))
            assert "alpha-only" in {d.mistake for d in g.diagnosis}, (seed, g.to_dict())
            checks += 1
        v = BANK.get("rabenseifner-bytes-rounds").variant(seed)
        g = grade_answer(BANK.get("rabenseifner-bytes-rounds"),
                         Submission("rabenseifner-bytes-rounds", 2 * v.values["p"], seed=seed, name="rab-rounds"))
        assert "p-for-log-p" in {d.mistake for d in g.diagnosis}
    assert checks > 20
