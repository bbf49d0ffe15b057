"""Worked examples and exercises on topology-aware all-reduce, consensus and decentralised SGD.

Each example reproduces the numbers of the seeds ("DSGD": distributed-sgd-and-allreduce.txt,
"Patterns": collective-communication-patterns.txt) with its defaults; the expected values are
worked out here by hand (the arithmetic is in the comments), not taken from the example's code.
The exercises of ``topology.toml`` and ``consensus.toml`` compute for every seed drawn, grade the
right answer as right, and diagnose the slips their examples model.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import load_bank
from costmodel.exercises.grading import Submission, grade_answer

MB = 10**6
GB = 10**9
US = Fraction(1, 10**6)
MS = Fraction(1, 1000)
THIRD = Fraction(1, 3)


def answers(name, settings=None, slip=None):
    return {k: a.value for k, a in get(name).run(settings, slip=slip).answers.items()}


# -- DSGD §10: multi-lane ---------------------------------------------------------------------------


def test_multilane_reproduces_the_seed():
    a = answers("multilane-transfer")
    assert a["per-lane"] == 250 * MB  # 1 GB / 4
    assert a["one-lane"] == 80 * MS  # 1 GB / 12.5 GB/s
    assert a["time"] == 20 * MS  # 250 MB / 12.5 GB/s
    assert a["speedup"] == 4


def test_multilane_settings_recompute():
    a = answers("multilane-transfer", {"lanes": "8", "alpha": "10 us"})
    # 10 µs + 125 MB / 12.5 GB/s = 10 µs + 10 ms; one lane: 10 µs + 80 ms
    assert a["time"] == 10 * US + 10 * MS
    assert a["speedup"] == (10 * US + 80 * MS) / (10 * US + 10 * MS)


def test_multilane_slips():
    settings = {"alpha": "10 us"}
    assert answers("multilane-transfer", settings, Slip("alpha-only"))["time"] == 10 * US
    assert answers("multilane-transfer", settings, Slip("beta-only"))["time"] == 20 * MS
    assert answers("multilane-transfer", settings, Slip("beta-only"))["speedup"] == 4


# -- DSGD §10: FlexReduce ---------------------------------------------------------------------------


def test_flexreduce_reproduces_the_seed():
    a = answers("flexreduce-split")
    # 12/2 = 6 and 12/3 = 4 reduced per worker; half the tensor (6) per subtree: 6/2 = 3, 6/3 = 2 owned
    assert (a["reduced-1"], a["reduced-2"]) == (6, 4)
    assert (a["owned-1"], a["owned-2"], a["owned-entries"]) == (3, 2, 6)
    assert a["exchange"] == 6  # each subtree's 6 partial sums for the other's half, each way
    assert a["exchange-total"] == 12


def test_flexreduce_settings_recompute():
    a = answers("flexreduce-split", {"entries": "24", "groups": "2,4"})
    # 24/2 = 12 and 24/4 = 6; 12 per group: 12/2 = 6 and 12/4 = 3 owned; 12 cross each way
    assert (a["reduced-1"], a["reduced-2"], a["owned-1"], a["owned-2"], a["exchange"]) == (12, 6, 6, 3, 12)


# -- DSGD §10: RAT --------------------------------------------------------------------------------


def test_rat_reproduces_the_seed():
    a = answers("rat-core-bytes")
    n = 100 * MB
    # RAT: one rack aggregate up (n), the result back (n): 2n.  Flat ring over 8 in rack order: the
    # links 3 → 4 and 7 → 0 cross the core, each carrying 2·7/8·n = 1.75n: 3.5n
    assert a["rat"] == 2 * n
    assert a["flat"] == Fraction(7, 2) * n
    assert (a["rat-factor"], a["flat-factor"]) == (2, Fraction(7, 2))


def test_rat_settings_recompute():
    a = answers("rat-core-bytes", {"racks": "3", "per_rack": "4", "n": "10 MB"})
    # tree among 3 leaders: 2 aggregates up, 2 results down: 4n; ring over 12: 3 core links × 2·11/12·n
    assert a["rat"] == 40 * MB
    assert a["flat"] == 3 * Fraction(22, 12) * 10 * MB


def test_rat_own_chunk_slip():
    # each core link counted as carrying 2n (all p chunks, the own one too): 2 × 2n = 4n
    assert answers("rat-core-bytes", slip=Slip("own-chunk"))["flat"] == 400 * MB


# -- Patterns and DSGD §10: hierarchical all-reduce -----------------------------------------------


def test_hierarchical_reproduces_patterns():
    a = answers("hierarchical-allreduce")  # 3 nodes × 4 GPUs, 900 GB/s and 50 GB/s, D = 12 MB
    assert a["chunk"] == 3 * MB  # D/4
    assert a["inter-per-gpu"] == 4 * MB  # 2·(2/3)·3 MB = D/3
    assert a["inter-per-node"] == 16 * MB
    assert a["hier-inter"] == 48 * MB  # 12 GPUs × D/3 = 4D
    # RS: 3/4 · 12 MB / 900 GB/s = 10 µs, twice; AR: 2·(2/3)·3 MB / 50 GB/s = 80 µs
    assert a["hier-time"] == 100 * US
    # flat ring over 12 at 50 GB/s: 2 · 11/12 · 12 MB / 50 GB/s = 440 µs
    assert a["flat-time"] == 440 * US
    assert a["speedup"] == Fraction(22, 5)
    # 3 ring links cross nodes, each 2·11/12·12 MB = 22 MB
    assert a["flat-inter"] == 66 * MB


def test_hierarchical_reproduces_dsgd_section_ten():
    settings = {"gpus": "8", "nodes": "4", "d": "1 GB", "intra_alpha": "1 us", "intra_bw": "150 GB/s",
                "inter_alpha": "5 us", "inter_bw": "25 GB/s"}
    a = answers("hierarchical-allreduce", settings)
    # 32 GPUs each send 2·3/4·n/8 across nodes: 6n; the flat ring: 4 links × 2·31/32·n = 31n/4
    assert a["hier-inter"] == 6 * GB
    assert a["flat-inter"] == Fraction(31, 4) * GB
    assert a["bytes-ratio"] == Fraction(31, 24)  # not 8, the GPUs per node
    # start-ups: 2·7 × 1 µs + 2·3 × 5 µs = 44 µs; flat: 2·31 × 5 µs = 310 µs
    assert (a["hier-rounds"], a["flat-rounds"]) == (20, 62)
    assert a["hier-latency"] == 44 * US
    assert a["flat-latency"] == 310 * US


def test_hierarchical_slips():
    own = answers("hierarchical-allreduce", slip=Slip("own-chunk"))
    assert own["inter-per-gpu"] == 6 * MB  # 2·D/g: the own slice sent too
    settings = {"intra_alpha": "1 us", "inter_alpha": "5 us"}
    alpha = answers("hierarchical-allreduce", settings, Slip("alpha-only"))
    assert alpha["hier-time"] == 2 * 3 * US + 2 * 2 * 5 * US  # 2(g − 1)α₁ + 2(N − 1)α₂ = 26 µs
    beta = answers("hierarchical-allreduce", settings, Slip("beta-only"))
    assert beta["hier-time"] == 100 * US


# -- DSGD §3 and practice question 3: one D-SGD update --------------------------------------------


def test_dsgd_update_reproduces_the_seed():
    a = answers("dsgd-update")
    assert a["mixed"] == 7  # (6 + 3 + 12)/3
    assert a["next"] == 6  # 7 − 0.5 × 2
    assert a["without-mixing"] == 5  # 6 − 0.5 × 2


def test_dsgd_practice_question_three():
    a = answers("dsgd-update", {"value": "3", "neighbours": "6,12"})
    assert (a["mixed"], a["next"]) == (7, 6)  # (3 + 6 + 12)/3 = 7; 7 − 1 = 6


def test_dsgd_weighted_and_the_unweighted_slip():
    settings = {"weights": "1/2,1/4,1/4"}
    assert answers("dsgd-update", settings)["mixed"] == Fraction(27, 4)  # 3 + 3/4 + 3
    slipped = answers("dsgd-update", settings, Slip("unweighted-mean"))
    assert (slipped["mixed"], slipped["next"]) == (7, 6)  # the plain mean (6 + 3 + 12)/3


# -- DSGD §4: consensus on the four-worker ring -----------------------------------------------------


def test_consensus_ring_reproduces_the_seed():
    a = answers("consensus-ring")
    assert [a[f"next-{i}"] for i in range(1, 5)] == [4, 3, 6, 5]  # W1: (9 + 0 + 3)/3 = 4
    # disagreement: √45 = 3√5, √5, √5/3
    assert a["disagreement-0"] == pytest.approx(math.sqrt(45))
    assert a["disagreement-1"] == pytest.approx(math.sqrt(5))
    assert a["disagreement-2"] == pytest.approx(math.sqrt(5) / 3)
    assert [round(a[f"disagreement-{r}"], 3) for r in range(3)] == [6.708, 2.236, 0.745]
    assert a["rho"] == THIRD
    assert a["doubly-stochastic"] == "yes"
    assert (a["mean"], a["mean-preserved"]) == (Fraction(9, 2), "yes")
    assert THIRD**4 > Fraction(1, 100) >= THIRD**5  # 1/81 > 1/100 ≥ 1/243
    assert a["rounds-to-target"] == 5


def test_consensus_on_a_star_does_not_keep_the_mean():
    a = answers("consensus-ring", {"graph": "star", "rounds": "1"})
    # hub 0 averages all four: 4.5; leaves average with the hub: 1.5, 3, 4.5; mean 13.5/4
    assert [a[f"next-{i}"] for i in range(1, 5)] == [Fraction(9, 2), Fraction(3, 2), 3, Fraction(9, 2)]
    assert (a["doubly-stochastic"], a["mean"], a["mean-preserved"]) == ("no", Fraction(27, 8), "no")


@pytest.mark.parametrize(("graph", "p", "rho", "rounds"), [
    ("ring", 4, THIRD, 5),  # 3^4 = 81 < 100 ≤ 243
    ("ring", 6, Fraction(2, 3), 12),  # (2/3)^11 = 0.0116, (2/3)^12 = 0.0077
    ("hypercube", 8, Fraction(1, 2), 7),  # 2^-6 = 1/64 > 1/100 ≥ 1/128
    ("torus", 16, Fraction(3, 5), 10),  # 0.6^9 = 0.0101, 0.6^10 = 0.0060
])
def test_consensus_rounds_exact(graph, p, rho, rounds):
    a = answers("consensus-rounds", {"graph": graph, "p": str(p)})
    assert a["rho"] == rho
    assert a["gap"] == 1 - rho
    assert a["rounds-to-target"] == rounds


def test_consensus_rounds_on_a_ring_of_eight():
    a = answers("consensus-rounds", {"p": "8"})
    # ring, equal weights: 1 − ρ = (4/3)·sin²(π/p)
    rho = 1 - 4 / 3 * math.sin(math.pi / 8) ** 2
    assert a["rho"] == pytest.approx(rho)
    assert a["rounds-to-target"] == math.ceil(math.log(100) / math.log(1 / rho)) == 22
    assert a["degree"] == 2


# -- DSGD §6 and §3: gossip against all-reduce ------------------------------------------------------


def test_gossip_vs_allreduce_reproduces_the_seed():
    a = answers("gossip-vs-allreduce")
    n = 100 * MB
    assert (a["allreduce-rounds"], a["allreduce-bytes"]) == (6, 150 * MB)  # 2·3/4·100 MB
    assert (a["gossip-rounds"], a["degree"]) == (5, 2)
    assert a["gossip-round-bytes"] == 2 * n
    assert a["gossip-bytes"] == 5 * 2 * n
    # gossip: 5 rounds × 2 × 100 MB / 12.5 GB/s = 80 ms; all-reduce 150 MB / 12.5 GB/s = 12 ms
    assert (a["gossip-time"], a["allreduce-time"]) == (80 * MS, 12 * MS)
    assert a["time-ratio"] == Fraction(20, 3)
    assert a["faster"] == "allreduce"


def test_gossip_round_bytes_do_not_grow_with_p():
    small, large = answers("gossip-vs-allreduce", {"p": "8"}), answers("gossip-vs-allreduce", {"p": "64"})
    assert small["gossip-round-bytes"] == large["gossip-round-bytes"] == 200 * MB
    assert large["gossip-rounds"] > small["gossip-rounds"]


def test_gossip_vs_allreduce_slips():
    settings = {"alpha": "5 us"}
    alpha = answers("gossip-vs-allreduce", settings, Slip("alpha-only"))
    assert (alpha["gossip-time"], alpha["allreduce-time"]) == (5 * 2 * 5 * US, 6 * 5 * US)
    beta = answers("gossip-vs-allreduce", settings, Slip("beta-only"))
    assert (beta["gossip-time"], beta["allreduce-time"]) == (80 * MS, 12 * MS)
    own = answers("gossip-vs-allreduce", settings, Slip("own-chunk"))
    assert (own["allreduce-rounds"], own["allreduce-bytes"]) == (8, 200 * MB)  # 2p rounds, 2n bytes
    assert own["allreduce-time"] == 8 * 5 * US + 16 * MS


def test_one_gossip_round_against_one_allreduce():
    a = answers("gossip-one-round")
    assert [a[f"next-{i}"] for i in range(1, 5)] == [4, 3, 6, 5]
    assert a["gossip-identical"] == "no"  # practice question 8
    assert a["gossip-disagreement"] == pytest.approx(math.sqrt(5))
    assert (a["allreduce-value"], a["allreduce-identical"]) == (Fraction(9, 2), "yes")  # 18/4
    # on a complete graph one equal-weight round is the exact average
    assert answers("gossip-one-round", {"graph": "complete"})["gossip-identical"] == "yes"


# -- the exercises --------------------------------------------------------------------------------

OURS = {
    # topology.toml (DSGD §10, Patterns)
    "multilane-lanes": {"one-lane": 80 * MS, "time": 20 * MS},
    # 10 MB / 12.5 GB/s = 800 µs, over 4 lanes 200 µs; each plus α = 50 µs: 850 µs against 250 µs
    "multilane-startup": {"time": 250 * US, "speedup": Fraction(850, 250)},
    "flexreduce-split": {"reduced-1": 6, "reduced-2": 4, "owned-1": 3, "owned-2": 2, "exchange": 6},
    "rat-core": {"rat": 200 * MB, "flat": 350 * MB},
    "hierarchical-nvlink-network": {"inter-per-gpu": 4 * MB, "hier-time": 100 * US, "flat-time": 440 * US},
    "hierarchical-network-bytes": {"hier-inter": 6 * GB, "flat-inter": Fraction(31, 4) * GB,
                                   "bytes-ratio": Fraction(31, 24)},
    "hierarchical-startups": {"hier-rounds": 20, "flat-rounds": 62, "hier-latency": 44 * US,
                              "flat-latency": 310 * US},
    # consensus.toml (DSGD §3, §4, §6, practice questions 3 and 8)
    "mix-then-step": {"mixed": 7, "next": 6},
    "dsgd-one-update": {"mixed": 7, "next": 6, "without-mixing": 5},
    "dsgd-weighted-mixing": {"mixed": Fraction(27, 4), "next": Fraction(23, 4)},  # 27/4 − 1
    "consensus-ring-round": {"next-1": 4, "next-2": 3, "next-3": 6, "next-4": 5},
    "consensus-ring-disagreement": {"disagreement-0": math.sqrt(45), "disagreement-1": math.sqrt(5),
                                    "disagreement-2": math.sqrt(5) / 3, "mean": Fraction(9, 2),
                                    "rho": THIRD},
    "consensus-rounds-ring": {"rho": THIRD, "rounds-to-target": 5},
    "consensus-rounds-graphs": {"degree": 4, "rho": Fraction(3, 5), "rounds-to-target": 10},  # 4-cube
    "gossip-vs-allreduce-ring": {"gossip-rounds": 5, "gossip-bytes": GB, "allreduce-bytes": 150 * MB,
                                 "faster": "allreduce"},
    # 5 rounds × 2 × (5 µs + 8 ms); 6 × 5 µs + 12 ms
    "gossip-times": {"gossip-round-bytes": 200 * MB, "gossip-time": 10 * (5 * US + 8 * MS),
                     "allreduce-time": 30 * US + 12 * MS},
    "gossip-identical": {"gossip-identical": "no", "gossip-disagreement": math.sqrt(5)},
    "ring-allreduce-vs-gossip": {"allreduce-value": Fraction(9, 2), "allreduce-identical": "yes",
                                 "next-1": 4, "gossip-identical": "no"},
}


@pytest.fixture(scope="module")
def bank():
    return load_bank()


def grade(bank, exercise, name, value, seed=None):
    return grade_answer(bank.get(exercise), Submission(exercise=exercise, seed=seed, name=name, value=value))


def mistakes(g):
    return {m for d in g.diagnosis for m in d.mistakes}


def test_every_exercise_of_these_files_is_listed(bank):
    mine = {e.id for e in bank if e.path.endswith(("/topology.toml", "/consensus.toml"))}
    assert mine == set(OURS)
    topics = {e.topic for e in bank if e.id in OURS}
    assert topics == {"hierarchical", "consensus", "dsgd"}
    assert all(bank.get(i).source for i in OURS)


@pytest.mark.parametrize("exercise", sorted(OURS))
def test_default_variant_matches_the_hand_computation(bank, exercise):
    v = bank.get(exercise).variant()
    for name, want in OURS[exercise].items():
        got = v.expected(name)
        if isinstance(want, float):
            assert got == pytest.approx(want)
        else:
            assert got == want, name


@pytest.mark.parametrize("exercise", sorted(OURS))
def test_every_seed_computes_and_its_right_answer_is_right(bank, exercise):
    e = bank.get(exercise)
    for seed in range(200):
        v = e.variant(seed)
        assert "{" not in v.statement
        for spec in e.answers:
            value = v.expected(spec.name)
            assert value is not None
            if seed % 25 == 0:
                kind = v.worked.answers[spec.name].kind
                # answers are written as students write them: with a unit, a word, or a decimal
                text = spec.shown(value, kind) if spec.unit else value if isinstance(value, str) else \
                    str(value) if isinstance(value, int) else repr(float(value))
                g = grade(bank, exercise, spec.name, text, seed)
                assert g.correct and not g.diagnosis, (seed, spec.name)


def test_practice_question_eight_is_no_for_every_variant(bank):
    for seed in range(200):
        assert bank.get("gossip-identical").variant(seed).expected("gossip-identical") == "no"
    assert grade(bank, "gossip-identical", "gossip-identical", "No").correct
    wrong = grade(bank, "gossip-identical", "gossip-identical", "yes")
    assert not wrong.correct and not wrong.diagnosis


def test_rat_own_chunk_is_diagnosed(bank):
    for seed in (0, 1, 2):
        values = bank.get("rat-core").variant(seed).values
        # the flat ring's core links (one per rack boundary, the wrap-around included) each at 2n
        wrong = values["racks"] * 2 * values["n"]
        g = grade(bank, "rat-core", "flat", f"{float(wrong / MB)} MB", seed)
        assert not g.correct and "own-chunk" in mistakes(g)


def test_hierarchical_own_chunk_and_alpha_slips_are_diagnosed(bank):
    values = bank.get("hierarchical-nvlink-network").variant(4).values
    wrong = 2 * values["d"] / values["gpus"]  # 2·D/g: the own slice counted too
    g = grade(bank, "hierarchical-nvlink-network", "inter-per-gpu", f"{float(wrong / MB)} MB", 4)
    assert mistakes(g) == {"own-chunk"}
    values = bank.get("multilane-startup").variant(5).values
    g = grade(bank, "multilane-startup", "time", f"{float(values['alpha'] / US)} us", 5)
    assert "alpha-only" in mistakes(g)
    g = grade(bank, "multilane-startup", "speedup", str(values["lanes"]), 5)
    assert "beta-only" in mistakes(g)


def test_gossip_slips_are_diagnosed(bank):
    values = bank.get("gossip-vs-allreduce-ring").variant(2).values
    g = grade(bank, "gossip-vs-allreduce-ring", "allreduce-bytes", f"{float(2 * values['n'] / MB)} MB", 2)
    assert mistakes(g) == {"own-chunk"}  # 2n: the own chunk sent in both phases
    e = bank.get("gossip-times")

    def parts(seed):
        p, n, alpha, bandwidth = (e.variant(seed).values[k] for k in ("p", "n", "alpha", "bandwidth"))
        # the ring all-reduce's start-ups 2(p − 1)·α and payload 2(p − 1)/p·n/bandwidth
        return 2 * (p - 1) * alpha, 2 * Fraction(p - 1, p) * n / bandwidth

    # a variant where each term is more than the 1 % tolerance of the total
    seed = next(s for s in range(200) if min(parts(s)) > sum(parts(s)) / 50)
    latency, payload = parts(seed)
    g = grade(bank, "gossip-times", "allreduce-time", f"{float(payload / MS)} ms", seed)
    assert mistakes(g) == {"beta-only"}
    g = grade(bank, "gossip-times", "allreduce-time", f"{float(latency / MS)} ms", seed)
    assert mistakes(g) == {"alpha-only"}


def test_the_unweighted_mean_is_diagnosed(bank):
    e = bank.get("dsgd-weighted-mixing")

    def plain(seed):
        values = e.variant(seed).values
        return (values["value"] + sum(values["neighbours"])) / 3  # the plain mean of the three

    seed = next(s for s in range(200) if plain(s) != e.variant(s).expected("mixed"))
    v = e.variant(seed)
    g = grade(bank, "dsgd-weighted-mixing", "mixed", str(float(plain(seed))), seed)
    assert not g.correct and "unweighted-mean" in mistakes(g)
    right = grade(bank, "dsgd-weighted-mixing", "mixed", str(float(v.expected("mixed"))), seed)
    assert right.correct and not right.diagnosis
