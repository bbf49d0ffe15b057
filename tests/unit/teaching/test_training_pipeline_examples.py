"""Worked examples and exercises on training and pipelines: seed numbers, slips, variants, diagnosis.

Every expected value is derived here by hand (the arithmetic is in the comments) or through a
different path of the library than the example's own, never read back from the example.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import Submission, grade_answer, load_bank

GB = 10**9
MB = 10**6

TRAINING = ("weighted-loss", "weighted-gradient", "allreduce-common-update", "fedavg", "dp-memory",
            "zero-stages", "cast-ratios", "topk", "error-feedback", "ps-vs-ring", "tp-allreduces",
            "moe-alltoalls")
PIPELINE = ("pipeline-bubble", "bubble-target", "pipeline-inflight", "pipeline-schedules")


def answers(name: str, settings: dict | None = None, slip: Slip | None = None) -> dict:
    return {k: a.value for k, a in get(name).run(settings, slip=slip).answers.items()}


# -- the examples reproduce the seeds -------------------------------------------------------------


def test_every_example_cites_its_source_and_runs():
    for name in TRAINING + PIPELINE:
        example = get(name)
        assert example.source and example.compute.__doc__ and "Source" in example.compute.__doc__
        worked = example.run()
        assert worked.to_markdown() and worked.to_dict()["answers"]


def test_weighted_loss_unequal_shards():
    # DSGD §1: weights 600/1000, 300/1000, 100/1000; 0.6·0.2 + 0.3·0.5 + 0.1·0.9 = 0.36
    got = answers("weighted-loss")
    assert got["weighted"] == Fraction(36, 100)
    # the plain mean (0.2 + 0.5 + 0.9)/3 = 1.6/3 = 8/15 ≈ 0.533; the gap 8/15 − 9/25 = 13/75
    assert got["plain"] == Fraction(8, 15) and round(float(got["plain"]), 3) == 0.533
    assert got["gap"] == Fraction(13, 75)
    # equal shards: both means agree
    assert answers("weighted-loss", {"sizes": "5,5,5"})["gap"] == 0


def test_weighted_loss_slip_is_the_plain_mean():
    got = answers("weighted-loss", slip=Slip("unweighted-mean"))
    assert got["weighted"] == Fraction(8, 15) and got["gap"] == 0


def test_weighted_gradient_unequal_batches():
    # 16/64·(1, 0) + 16/64·(2, 1) + 32/64·(4, −1) = (1/4 + 1/2 + 2, 1/4 − 1/2) = (11/4, −1/4)
    got = answers("weighted-gradient")
    assert (got["g1"], got["g2"]) == (Fraction(11, 4), Fraction(-1, 4))
    # equal batches: the plain mean (7/3, 0)
    equal = answers("weighted-gradient", {"batches": "32,32,32"})
    assert (equal["g1"], equal["g2"]) == (Fraction(7, 3), 0)
    slipped = answers("weighted-gradient", slip=Slip("unweighted-mean"))
    assert (slipped["g1"], slipped["g2"]) == (Fraction(7, 3), 0)


def test_allreduce_gives_every_worker_the_common_gradient():
    # DSGD §2 and practice question 2: one common global gradient on every worker, no server
    got = answers("allreduce-common-update")
    assert got["same"] == got["is-sum"] == "yes"
    assert got["steps"] == 2 * (4 - 1)  # ring: p − 1 reduce-scatter + p − 1 all-gather steps
    rd = answers("allreduce-common-update", {"p": "8", "algorithm": "recursive-doubling", "seed": "5"})
    assert rd["same"] == "yes" and rd["steps"] == 3  # log₂ 8 exchanges
    for algorithm in ("tree", "rabenseifner", "naive"):
        assert answers("allreduce-common-update", {"p": "6", "algorithm": algorithm})["same"] == "yes"


def test_fedavg_weighted_and_partial():
    # McMahan et al.: 100/1000·(1, 0) + 300/1000·(2, 1) + 600/1000·(4, −1) = (3.1, −0.3)
    got = answers("fedavg")
    assert (got["theta1"], got["theta2"], got["answered"]) == (Fraction(31, 10), Fraction(-3, 10), 1000)
    # client 1 drops out: 100/700·(1, 0) + 600/700·(4, −1) = (25/7, −6/7)
    out = answers("fedavg", {"dropped": "1"})
    assert (out["theta1"], out["theta2"], out["answered"]) == (Fraction(25, 7), Fraction(-6, 7), 700)
    # the slip: the plain mean of the answering clients, (1 + 2 + 4)/3 = 7/3 and (1 + 4)/2 = 5/2
    assert answers("fedavg", slip=Slip("unweighted-mean"))["theta1"] == Fraction(7, 3)
    assert answers("fedavg", {"dropped": "1"}, slip=Slip("unweighted-mean"))["theta1"] == Fraction(5, 2)


def test_data_parallel_memory():
    # Patterns: 70e9 parameters × 4 bytes × 4 workers = 1.12 TB; 280 GB per replica, ⌈280/80⌉ = 4 GPUs
    got = answers("dp-memory")
    assert (got["per-replica"], got["total"], got["gpus-per-replica"]) == (280 * GB, 1120 * GB, 4)
    half = answers("dp-memory", {"dtype": "bf16", "workers": "8", "params": "7.5"})
    assert (half["per-replica"], half["total"], half["gpus-per-replica"]) == (15 * GB, 120 * GB, 1)


def test_zero_figure_1():
    # Ψ = 7.5e9, N = 64: 16Ψ; 4Ψ + 12Ψ/64; 2Ψ + 14Ψ/64; 16Ψ/64
    psi = 7_500_000_000
    got = answers("zero-stages")
    assert [got[f"stage{s}"] for s in range(4)] == [16 * psi, 4 * psi + Fraction(12 * psi, 64),
                                                   2 * psi + Fraction(14 * psi, 64), Fraction(16 * psi, 64)]
    # the paper's 120 / 31.4 / 16.6 / 1.9 GB
    assert [round(float(got[f"stage{s}"]) / GB, 1) for s in range(4)] == [120.0, 31.4, 16.6, 1.9]
    assert got["fits"] == "1"  # 31.4 GB ≤ 32 GB < 120 GB
    assert answers("zero-stages", {"gpu": "1 GB"})["fits"] == "none"
    assert answers("zero-stages", {"gpus": "8"})["stage3"] == Fraction(16 * psi, 8)


def test_zero_bookkeeping_slip():
    psi = 7_500_000_000
    got = answers("zero-stages", slip=Slip("zero-bookkeeping"))
    # stage 0 with fp32 weights and gradients: (4 + 4 + 12)Ψ; stage s ≥ 1 leaves its new partition whole
    assert got["stage0"] == 20 * psi
    assert got["stage1"] == 16 * psi
    assert got["stage2"] == 4 * psi + Fraction(12 * psi, 64)
    assert got["stage3"] == 2 * psi + Fraction(14 * psi, 64)


def test_cast_ratios():
    # 25e6 elements: fp32 100 MB, fp16 50 MB, int8 25 MB, 1-bit 25e6/8 + 4 B
    got = answers("cast-ratios")
    assert (got["fp32-bytes"], got["fp16-bytes"], got["int8-bytes"]) == (100 * MB, 50 * MB, 25 * MB)
    assert got["onebit-bytes"] == 3_125_004
    # the seed's "FP16 → INT8 (4×)" is 2×; 4× holds from fp32
    assert (got["fp32-fp16"], got["fp16-int8"], got["fp32-int8"]) == (2, 2, 4)
    assert answers("cast-ratios", {"n": "1"})["onebit-bytes"] == 125_000 + 4


def test_topk_with_and_without_indices():
    # k = 0.01 × 25e6 = 250,000; k·(4 + 4) = 2 MB; 100 MB / 2 MB = 50
    got = answers("topk")
    assert (got["k"], got["bytes"], got["ratio"]) == (250_000, 2 * MB, 50)
    assert answers("topk", {"density": "0.001"})["ratio"] == 500  # 4/(0.001 × 8)
    assert answers("topk", {"density": "0.05"})["ratio"] == 10  # the seed's 10× needs k/n = 0.05
    # the slip: k·4 = 1 MB, ratio 1/density = 100
    slipped = answers("topk", slip=Slip("index-overhead"))
    assert (slipped["bytes"], slipped["ratio"]) == (1 * MB, 100)


def _error_feedback(g: list[Fraction], steps: int) -> tuple[Fraction, list[Fraction], list[Fraction]]:
    """The seed's pseudocode, by hand: g += residual; send sign·mean|g|; residual = g − sent."""
    residual = [Fraction(0)] * len(g)
    sent_total = [Fraction(0)] * len(g)
    first_scale = None
    for _ in range(steps):
        x = [a + r for a, r in zip(g, residual, strict=True)]
        scale = sum(abs(v) for v in x) / len(x)
        first_scale = scale if first_scale is None else first_scale
        sent = [scale if v >= 0 else -scale for v in x]
        residual = [v - s for v, s in zip(x, sent, strict=True)]
        sent_total = [t + s for t, s in zip(sent_total, sent, strict=True)]
    return first_scale, residual, sent_total


def test_error_feedback():
    g = [Fraction(1, 2), Fraction(-6, 5), Fraction(3, 10)]
    scale, residual, sent = _error_feedback(g, 3)
    got = answers("error-feedback")
    assert got["scale"] == scale == Fraction(2, 3)  # (0.5 + 1.2 + 0.3)/3
    assert (got["residual1"], got["sent1"]) == (residual[0], sent[0])
    assert got["sent1"] + got["residual1"] == 3 * Fraction(1, 2)  # nothing lost, only delayed
    one = answers("error-feedback", {"steps": "1"})
    assert one["residual1"] == Fraction(1, 2) - Fraction(2, 3)


def test_parameter_server_against_ring():
    # 16 pushes of 400 MB into one server: 6.4 GB; ring: 2 × 15/16 × 400 MB = 750 MB
    got = answers("ps-vs-ring")
    assert (got["server-in"], got["server-out"], got["ring-sent"]) == (6400 * MB, 6400 * MB, 750 * MB)
    assert got["ratio"] == Fraction(6400, 750)
    # two shards (the seed's PS 0 and PS 1): 3.2 GB each
    assert answers("ps-vs-ring", {"servers": "2"})["server-in"] == 3200 * MB
    # own-chunk: 2n = 800 MB sent, ratio 8
    slipped = answers("ps-vs-ring", slip=Slip("own-chunk"))
    assert (slipped["ring-sent"], slipped["ratio"]) == (800 * MB, 8)


def test_tensor_parallel_allreduces():
    n = 1 * 2048 * 12288 * 2  # b·s·h in bf16
    got = answers("tp-allreduces")
    assert (got["forward"], got["per-block"], got["bytes"]) == (2, 4, n)
    assert got["sent-per-block"] == 4 * 2 * Fraction(7, 8) * n  # 4 ring all-reduces on t = 8
    assert answers("tp-allreduces", {"tp": "2"})["sent-per-block"] == 4 * n  # 4 × 2 × 1/2 × n
    assert answers("tp-allreduces", slip=Slip("own-chunk"))["sent-per-block"] == 8 * n


def test_moe_alltoalls():
    buffer = 4096 * 4096 * 2
    got = answers("moe-alltoalls")
    assert (got["forward"], got["buffer"], got["fraction"]) == (2, buffer, Fraction(7, 8))
    assert got["leaving-layer"] == 2 * Fraction(7, 8) * buffer
    two = answers("moe-alltoalls", {"ep": "4", "topk": "2"})
    assert two["leaving-layer"] == 2 * Fraction(3, 4) * 2 * buffer


def test_pipeline_bubble_p4_m4():
    # Patterns: (P − 1)/(M + P − 1) = 3/7; (M + P − 1)·(F + B) = 7 × 3 = 21 slots, 3 × 3 idle per stage
    got = answers("pipeline-bubble")
    assert (got["bubble"], got["total-slots"], got["idle"]) == (Fraction(3, 7), 21, 9)
    assert answers("pipeline-bubble", {"schedule": "1f1b", "microbatches": "8"})["bubble"] == Fraction(3, 11)
    # the other definition: idle/busy = (P − 1)/M = 3/4
    assert answers("pipeline-bubble", slip=Slip("bubble-definition"))["bubble"] == Fraction(3, 4)


def test_bubble_target():
    # 3/(M + 3) ≤ 1/10 ⇔ M ≥ 27; the slip: 3/M ≤ 1/10 ⇔ M ≥ 30
    assert answers("bubble-target")["microbatches"] == 27
    assert answers("bubble-target", slip=Slip("bubble-definition"))["microbatches"] == 30
    # 7/(M + 7) ≤ 1/4 ⇔ M ≥ 21
    got = answers("bubble-target", {"stages": "8", "target": "0.25", "schedule": "gpipe"})
    assert (got["microbatches"], got["bubble"]) == (21, Fraction(1, 4))


def test_pipeline_inflight():
    # GPipe holds all M = 8; 1F1B at most P = 4 (on the first stage); the same bubble 3/11
    got = answers("pipeline-inflight")
    assert (got["gpipe-peak"], got["1f1b-peak"], got["saving"]) == (8, 4, 2)
    assert got["bubble-gpipe"] == got["bubble-1f1b"] == Fraction(3, 11)
    assert answers("pipeline-inflight", slip=Slip("bubble-definition"))["bubble-1f1b"] == Fraction(3, 8)


def test_interleaved_and_zero_bubble():
    # P = 4, M = 8: 1F1B 3/11; interleaved v = 2: idle 3·3/2, total 24 + 9/2: 3/19; ZB-H1: idle 3·1 of 27: 1/9
    got = answers("pipeline-schedules")
    assert (got["1f1b"], got["interleaved"], got["zb-h1"], got["best"]) == (
        Fraction(3, 11), Fraction(3, 19), Fraction(1, 9), "zb-h1")
    # v = 4: (P − 1)/(vM + P − 1) = 3/35 beats ZB-H1's 1/9
    assert answers("pipeline-schedules", {"chunks": "4"})["best"] == "interleaved"
    slipped = answers("pipeline-schedules", slip=Slip("bubble-definition"))
    assert (slipped["1f1b"], slipped["interleaved"], slipped["zb-h1"]) == (
        Fraction(3, 8), Fraction(3, 16), Fraction(1, 8))


# -- the exercises -----------------------------------------------------------------------------------

BANK = load_bank()
MINE = [e for e in BANK if e.path.endswith(("/training.toml", "/pipeline.toml"))]

DEFAULTS = {
    # DSGD practice question 1: 0.36
    "weighted-loss": {"weighted": Fraction(36, 100)},
    "weighted-loss-gap": {"plain": Fraction(8, 15), "gap": Fraction(13, 75)},
    "weighted-gradient": {"g1": Fraction(11, 4), "g2": Fraction(-1, 4)},
    "allreduce-common-update": {"same": "yes"},
    # (100·1 + 300·2 + 600·4)/1000 = 3.1; client 1 out: (100·1 + 600·4)/700 = 25/7
    "fedavg": {"theta1": Fraction(31, 10)},
    "fedavg-dropout": {"answered": 700, "theta1": Fraction(25, 7)},
    "dp-memory": {"per-replica": 280 * GB, "total": 1120 * GB},
    "dp-memory-gpus": {"gpus-per-replica": 4},
    "zero-stages": {"stage0": 120 * GB, "stage1": Fraction(31_406_250_000), "stage2": Fraction(16_640_625_000),
                    "stage3": Fraction(1_875_000_000)},
    "zero-fit": {"fits": "1"},
    "cast-ratios": {"fp16-bytes": 50 * MB, "int8-bytes": 25 * MB, "fp16-int8": 2},
    "topk-ratio": {"k": 250_000, "bytes": 2 * MB, "ratio": 50},
    "error-feedback": {"scale": Fraction(2, 3), "residual1": _error_feedback(
        [Fraction(1, 2), Fraction(-6, 5), Fraction(3, 10)], 3)[1][0]},
    "ps-traffic": {"server-in": 6400 * MB, "ring-sent": 750 * MB},
    "ps-sharded": {"server-in": 3200 * MB, "ratio": Fraction(3200, 750)},
    "tp-allreduces": {"forward": 2, "per-block": 4, "bytes": 50_331_648, "sent-per-block": 7 * 50_331_648},
    "moe-alltoalls": {"forward": 2, "fraction": Fraction(7, 8), "leaving-layer": Fraction(7, 4) * 33_554_432},
    "pipeline-bubble": {"total-slots": 21, "bubble": Fraction(3, 7)},
    "bubble-target": {"microbatches": 27},
    "pipeline-inflight": {"gpipe-peak": 8, "1f1b-peak": 4, "bubble-1f1b": Fraction(3, 11)},
    "interleaved-bubble": {"1f1b": Fraction(3, 11), "interleaved": Fraction(3, 19)},
    "zero-bubble": {"zb-h1": Fraction(1, 9), "best": "zb-h1"},
}


def test_the_files_hold_the_expected_exercises_and_topics():
    topics = {"weighted-loss", "fedavg", "memory", "zero", "compression", "ps-vs-allreduce", "parallelism",
              "bubbles"}
    assert {e.id for e in MINE} == set(DEFAULTS)
    assert len(MINE) >= 18
    assert {e.topic for e in MINE} == topics
    assert all(e.source for e in MINE)


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_default_variant_answers(exercise):
    variant = exercise.variant()
    assert {a.name for a in exercise.answers} == set(DEFAULTS[exercise.id])
    for name, value in DEFAULTS[exercise.id].items():
        assert variant.expected(name) == value, name


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_every_seed_computes(exercise):
    for seed in range(200):
        v = exercise.variant(seed)
        assert "{" not in v.statement
        for a in exercise.answers:
            assert v.expected(a.name) is not None


def grade(exercise_id: str, name: str, value: str, seed: int | None = None):
    return grade_answer(BANK.get(exercise_id), Submission(exercise=exercise_id, seed=seed, name=name, value=value))


def diagnosed(g) -> set[str]:
    return {d.mistake for d in g.diagnosis}


# (exercise, answer, a wrong value for the default variant worked out by hand, the mistake it shows)
WRONG = [
    ("weighted-loss", "weighted", "0.5333", "unweighted-mean"),  # (0.2 + 0.5 + 0.9)/3
    ("weighted-loss-gap", "gap", "0", "unweighted-mean"),  # the plain mean taken as the global one
    ("weighted-gradient", "g1", "2.3333", "unweighted-mean"),  # (1 + 2 + 4)/3
    ("fedavg", "theta1", "2.3333", "unweighted-mean"),  # (1 + 2 + 4)/3
    ("fedavg-dropout", "theta1", "2.5", "unweighted-mean"),  # (1 + 4)/2
    ("zero-stages", "stage0", "150 GB", "zero-bookkeeping"),  # (4 + 4 + 12) × 7.5e9
    ("zero-stages", "stage1", "120 GB", "zero-bookkeeping"),  # optimizer state not divided by 64
    ("zero-stages", "stage2", "31.4 GB", "zero-bookkeeping"),  # gradients not divided
    ("zero-stages", "stage3", "16.64 GB", "zero-bookkeeping"),  # parameters not divided
    ("zero-fit", "fits", "2", "zero-bookkeeping"),  # with the slipped stages, 31.4 GB first fits at 2
    ("topk-ratio", "bytes", "1 MB", "index-overhead"),  # 250,000 × 4 B
    ("topk-ratio", "ratio", "100", "index-overhead"),  # 1/density
    ("ps-traffic", "ring-sent", "800 MB", "own-chunk"),  # 2n
    ("ps-sharded", "ratio", "4", "own-chunk"),  # 3.2 GB / 800 MB
    ("tp-allreduces", "sent-per-block", "402.65 MB", "own-chunk"),  # 4 × 2n
    ("pipeline-bubble", "bubble", "0.75", "bubble-definition"),  # 3/4
    ("bubble-target", "microbatches", "30", "bubble-definition"),  # 3/M ≤ 0.1
    ("pipeline-inflight", "bubble-1f1b", "0.375", "bubble-definition"),  # 3/8
    ("interleaved-bubble", "interleaved", "0.1875", "bubble-definition"),  # 3/16
    ("zero-bubble", "zb-h1", "0.125", "bubble-definition"),  # 3/24
    ("dp-memory", "total", "1.018 TB", "binary-prefix"),  # 1.12e12 B = 1.0186 TiB, written as TB
    ("cast-ratios", "fp16-bytes", "400 MB", "bits-bytes"),  # 50 MB in bits
]


@pytest.mark.parametrize(("exercise_id", "name", "value", "mistake"), WRONG,
                         ids=[f"{w[0]}:{w[1]}:{w[3]}" for w in WRONG])
def test_wrong_answers_are_diagnosed(exercise_id, name, value, mistake):
    g = grade(exercise_id, name, value)
    assert not g.correct and mistake in diagnosed(g), g.diagnosis


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_right_answers_are_correct(exercise):
    for seed in (None, 3, 17):
        v = exercise.variant(seed)
        for spec in exercise.answers:
            value = v.expected(spec.name)
            text = value if isinstance(value, str) else f"{float(value / spec.scale):.10g} {spec.unit}".strip()
            g = grade(exercise.id, spec.name, text, seed)
            assert g.correct and not g.diagnosis, (spec.name, text, g.expected)


# seeded variants: the wrong value rederived by hand from the variant's givens

def test_seeded_weighted_loss_unweighted_mean():
    for seed in range(0, 200, 13):
        v = BANK.get("weighted-loss").variant(seed)
        losses = v.values["losses"]
        sizes = v.values["sizes"]
        weighted = sum(n * x for n, x in zip(sizes, losses, strict=True)) / sum(sizes)
        plain = sum(losses) / 3
        assert v.expected("weighted") == weighted
        if abs(plain - weighted) > weighted / 50:
            g = grade("weighted-loss", "weighted", f"{float(plain):.6g}", seed)
            assert "unweighted-mean" in diagnosed(g)


def test_seeded_bubble_definition():
    for seed in range(0, 200, 11):
        v = BANK.get("pipeline-bubble").variant(seed)
        p, m = v.values["stages"], v.values["microbatches"]
        assert v.expected("bubble") == Fraction(p - 1, m + p - 1)
        assert v.expected("total-slots") == 3 * (m + p - 1)
        if p > 1:
            g = grade("pipeline-bubble", "bubble", f"{(p - 1) / m:.6g}", seed)
            assert "bubble-definition" in diagnosed(g)


def test_seeded_bubble_target():
    for seed in range(0, 200, 9):
        v = BANK.get("bubble-target").variant(seed)
        p, t = v.values["stages"], v.values["target"]
        assert v.expected("microbatches") == max(1, math.ceil((p - 1) * (1 - t) / t))
        slipped = math.ceil((p - 1) / t)
        g = grade("bubble-target", "microbatches", str(slipped), seed)
        assert "bubble-definition" in diagnosed(g)


def test_seeded_zero_and_topk():
    for seed in range(0, 200, 17):
        v = BANK.get("zero-stages").variant(seed)
        psi, n = v.values["params"] * GB, v.values["gpus"]
        assert v.expected("stage1") == 4 * psi + 12 * psi / n
        g = grade("zero-stages", "stage1", f"{float(16 * psi) / GB:.6g} GB", seed)
        assert "zero-bookkeeping" in diagnosed(g)
        t = BANK.get("topk-ratio").variant(seed)
        elements = t.values["n"] * MB
        k = math.ceil(t.values["density"] * elements)
        value_bytes = 4 if t.values["dtype"] == "fp32" else 2
        assert t.expected("bytes") == k * (value_bytes + 4)
        g = grade("topk-ratio", "bytes", f"{k * value_bytes / MB:.8g} MB", seed)
        assert "index-overhead" in diagnosed(g)


def test_seeded_fedavg_dropout():
    for seed in range(0, 200, 7):
        v = BANK.get("fedavg-dropout").variant(seed)
        sizes, models, out = v.values["sizes"], v.values["models"], int(v.values["dropped"])
        kept = [k for k in range(3) if k != out]
        total = sum(sizes[k] for k in kept)
        assert v.expected("answered") == total
        assert v.expected("theta1") == sum(sizes[k] * models[k] for k in kept) / total


def test_allreduce_question_is_yes_for_every_variant():
    exercise = BANK.get("allreduce-common-update")
    assert {exercise.variant(s).expected("same") for s in range(200)} == {"yes"}
    assert grade("allreduce-common-update", "same", "Yes").correct
    assert not grade("allreduce-common-update", "same", "no").correct


def test_error_feedback_variants_by_hand():
    rng = random.Random(0)
    for seed in rng.sample(range(200), 10):
        v = BANK.get("error-feedback").variant(seed)
        scale, residual, _ = _error_feedback(list(v.values["gradient"]), v.values["steps"])
        assert (v.expected("scale"), v.expected("residual1")) == (scale, residual[0])
