"""Exercises on ZeRO and FSDP, activations, pipeline stages, federated stragglers, a two-link hierarchical
all-reduce and gossip weights (memory.toml and rounds.toml).

Every key is checked, on many variants, against a computation that does not run the exercise's
example: by hand (the arithmetic in the comments) or through another path of the library
(``collectives.evaluate.cost``, ``training_memory``, ``step.memory.activation_bytes``,
``hierarchical_cost``, numpy's eigenvalues of the graph's own matrices).  Every formula slip the
examples model is diagnosed on several variants; the declared slips and the random wrong answers
are covered for the whole bank by test_declared_slips and test_hidden_leaks.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from costmodel.collectives.evaluate import cost
from costmodel.collectives.hierarchical import hierarchical_cost
from costmodel.consensus.graphs import generate
from costmodel.errors import InputError
from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import load_bank
from costmodel.params import LinkParams
from costmodel.step.flops import TransformerShape
from costmodel.step.memory import activation_bytes
from costmodel.topology import Level, Topology
from costmodel.training import training_memory
from tests.bankchecks import right_answers_correct, slips_diagnosed

BANK = load_bank()
MINE = [e for e in BANK if e.path.endswith(("/memory.toml", "/rounds.toml"))]
SEEDS = (None, *range(0, 60, 3))
GB, MB = 10**9, 10**6
FREE = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1))

EXAMPLES = ("zero-traffic", "fsdp-strategy", "activation-layer", "pipeline-activations", "interleaved-activations",
            "fl-expected-max", "fl-expected-kth", "fl-deadline", "ring-self-weight", "best-constant-mixing")


def answers(name: str, settings: dict | None = None, slip: Slip | None = None) -> dict:
    return {k: a.value for k, a in get(name).run(settings, slip=slip).answers.items()}


def variants(exercise_id: str):
    exercise = BANK.get(exercise_id)
    for seed in SEEDS:
        v = exercise.variant(seed)
        yield v.values, {name: v.expected(name) for name in (a.name for a in exercise.answers)}


def test_the_files_hold_the_fourteen_exercises():
    assert {e.id: e.topic for e in MINE} == {
        "zero-stage3-traffic": "zero", "zero3-trade": "zero", "fsdp-strategies": "zero",
        "activation-per-layer": "memory", "pipeline-stage-activations": "bubbles",
        "interleaved-activations": "bubbles", "interleaved-bubble-busy": "bubbles", "fl-slowest-exponential": "federated-round",
        "fl-slowest-uniform": "federated-round", "fl-kth-uniform": "federated-round",
        "fl-deadline-dropping": "federated-round", "hierarchical-two-links": "hierarchical",
        "ring-self-weight": "consensus", "best-constant-weight": "consensus"}
    assert all(e.source for e in MINE)
    for name in EXAMPLES:
        example = get(name)
        assert example.source and "Source" in example.compute.__doc__
        assert get(name).run().disagreements == ()


# -- the examples' own numbers, by hand ---------------------------------------------------------------


def test_zero_traffic_defaults():
    # Ψ = 7.5e9, N = 64: the fp16 model is 15 GB; stages 0-2 send 2·63/64·15 GB, stage 3 3·63/64·15 GB
    got = answers("zero-traffic")
    assert got["baseline"] == Fraction(2 * 63 * 15 * GB, 64) == Fraction(29_531_250_000)
    assert got["stage3"] == Fraction(3 * 63 * 15 * GB, 64) and got["ratio"] == Fraction(3, 2)
    assert got["extra"] == Fraction(63 * 15 * GB, 64) and got["extra-time"] == Fraction(63 * 15, 64 * 25)
    # ZeRO Figure 1: 16.6 GB at stage 2, 1.9 GB at stage 3; the difference is 2Ψ − 2Ψ/N
    assert got["saved"] == 15 * GB - Fraction(15 * GB, 64)
    # forgetting (N − 1)/N: the whole payload per collective
    slipped = answers("zero-traffic", slip=Slip("own-chunk"))
    assert slipped["baseline"] == 2 * 15 * GB and slipped["stage3"] == 3 * 15 * GB
    with pytest.raises(InputError, match="gpus=1"):
        answers("zero-traffic", {"gpus": "1"})


def test_fsdp_strategy_defaults_and_slip():
    assert answers("fsdp-strategy") == {"states": Fraction(16 * 75 * 10**8, 64), "collectives": 3,
                                         "sent": Fraction(3 * 63 * 15 * GB, 64)}
    grad_op = answers("fsdp-strategy", {"strategy": "SHARD_GRAD_OP"})
    assert grad_op["states"] == 2 * 75 * 10**8 + Fraction(14 * 75 * 10**8, 64) and grad_op["collectives"] == 2
    # the slip: the weights left whole under full-shard gives shard-grad-op's states
    assert answers("fsdp-strategy", slip=Slip("zero-bookkeeping"))["states"] == grad_op["states"]
    # no-shard counted in fp32: (4 + 4 + 12)Ψ instead of 16Ψ
    assert answers("fsdp-strategy", {"strategy": "no-shard"}, Slip("zero-bookkeeping"))["states"] == 20 * 75 * 10**8
    with pytest.raises(InputError, match="hybrid"):
        answers("fsdp-strategy", {"strategy": "hybrid"})


def test_activation_layer_is_table_2():
    # s = 2048, b = 1, h = 12288, a = 96, t = 8: sbh = 25 165 824 and 5as/h = 80
    got = answers("activation-layer")
    sbh = 2048 * 12288
    assert got["plain"] == sbh * (34 + 80)
    assert got["tp"] == sbh * (10 + Fraction(24, 8) + Fraction(80, 8))
    assert got["tp-sp"] == sbh * (Fraction(34, 8) + Fraction(80, 8))
    assert got["selective"] == sbh * Fraction(34, 8) and got["saving"] == Fraction(114 * 8, 34)


def test_pipeline_activations_defaults():
    # P = 4, M = 8, L = 32: 8 layers a stage of sbh(34 + 5as/h) = 2048·4096·(34 + 80) bytes each
    got = answers("pipeline-activations")
    layer = 2048 * 4096 * (34 + 5 * 32 * 2048 // 4096)
    assert got["microbatch"] == 8 * layer and got["inflight-1f1b"] == 4 and got["inflight-gpipe"] == 8
    assert got["stage-1f1b"] == 4 * 8 * layer and got["stage-gpipe"] == 8 * 8 * layer and got["last-1f1b"] == 1
    with pytest.raises(InputError, match="layers=30"):
        answers("pipeline-activations", {"layers": "30"})


def test_interleaved_activations_defaults():
    # P = 4, v = 2: idle 3·3 = 9 slots, 9/2 interleaved; Megatron-LM's warm-up of (P − 1)·2 + (v − 1)·P
    # = 10 chunk forwards, plus the one in the steady state: 11 chunks of 1/2 micro-batch each
    got = answers("interleaved-activations")
    assert (got["idle-1f1b"], got["idle-interleaved"]) == (9, Fraction(9, 2))
    assert (got["held-1f1b"], got["held-interleaved"], got["memory-ratio"]) == (4, Fraction(11, 2),
                                                                                 Fraction(11, 8))
    # idle over busy: (P − 1)/M = 3/8, and 3/16 interleaved, which 1F1B reaches at M = 16
    assert (got["busy-1f1b"], got["busy-interleaved"], got["equivalent"]) == (Fraction(3, 8), Fraction(3, 16), 16)


def test_federated_defaults():
    # M = 20 MB: 2 s down at 10 MB/s, 10 s up at 2 MB/s; 1 s + Exp(2 s): E[max of 10] = 1 + 2·H_10
    h10 = sum(Fraction(1, i) for i in range(1, 11))
    got = answers("fl-expected-max")
    assert got["compute"] == 1 + 2 * h10 and got["round"] == 13 + 2 * h10
    assert answers("fl-expected-max", slip=Slip("mean-for-max"))["compute"] == 3  # the mean, 1 + 2
    uniform = answers("fl-expected-max", {"shape": "uniform", "a": "2 s", "b": "10 s", "sampled": "3"})
    assert uniform["compute"] == 2 + Fraction(8 * 3, 4)  # a + (b − a)·m/(m + 1)
    # uniform on [2 s, 12 s], the 8th of 10: 2 + 10·8/11
    assert answers("fl-expected-kth")["compute"] == 2 + Fraction(80, 11)
    with pytest.raises(InputError, match="fastest=11"):
        answers("fl-expected-kth", {"fastest": "11"})
    with pytest.raises(InputError, match="shape"):
        answers("fl-expected-max", {"shape": "pareto"})
    # the deadline: 20 s − 12 s of links leaves 8 s: clients of 4, 6 and 7 s make it
    assert answers("fl-deadline") == {"download": 2, "upload": 10, "participants": 3, "uploaded": 60 * MB,
                                      "round": 20}
    # comparing the compute times with 20 s itself lets the 9 s, 15 s and 20 s clients in too
    assert answers("fl-deadline", slip=Slip("deadline-without-links"))["participants"] == 6


def test_gossip_defaults():
    # p = 6, w₀ = 0.2: λ = 0.2 + 0.8·cos(2πk/6): λ₂ = 0.6, λ_min = −0.6, so ρ = 0.6, 0.6^10 ≤ 0.01 < 0.6^9
    got = answers("ring-self-weight")
    assert (got["lambda2"], got["lambda-min"], got["rho"], got["rounds-to-target"]) == (
        Fraction(3, 5), Fraction(-3, 5), Fraction(3, 5), 10)
    # p = 4, w₀ = 0.1: λ₂ = 0.1 but λ_min = −0.8 rules; the slip keeps λ₂
    assert answers("ring-self-weight", {"p": "4", "self": "0.1"})["rho"] == Fraction(4, 5)
    assert answers("ring-self-weight", {"p": "4", "self": "0.1"}, Slip("second-eigenvalue"))["rho"] == \
        Fraction(1, 10)
    # ln(100)/(1 − 0.6) = 11.5: 12 rounds under the approximation
    assert answers("ring-self-weight", slip=Slip("gap-for-log"))["rounds-to-target"] == 12
    # a 4 × 4 torus: ℓ_min = 2, ℓ_max = 8, α* = 0.2, ρ = 6/10
    got = answers("best-constant-mixing", {"graph": "torus", "p": "16"})
    assert (got["alpha"], got["rho-best"], got["rounds-best"]) == (Fraction(1, 5), Fraction(3, 5), 10)
    with pytest.raises(InputError, match="'star' is not one of"):
        answers("best-constant-mixing", {"graph": "star"})


# -- every variant's key against another computation -------------------------------------------------


def _ring_sent(collective: str, p: int, n: Fraction) -> Fraction:
    return Fraction(cost(collective, "ring", p=p, n=n, link=FREE).bytes_sent_per_rank)


def test_zero_keys():
    for values, key in variants("zero-stage3-traffic"):
        n, p = 2 * values["params"] * GB, values["gpus"]
        assert key["baseline"] == _ring_sent("allreduce", p, n)
        assert key["stage3"] == 2 * _ring_sent("allgather", p, n) + _ring_sent("reduce-scatter", p, n)
        assert key["ratio"] == Fraction(3, 2)
    for values, key in variants("zero3-trade"):
        psi, p = values["params"] * GB, values["gpus"]
        states = [training_memory(int(psi), dp=p, zero=s).zero.model_state_bytes_per_gpu for s in (2, 3)]
        assert key["saved"] == states[0] - states[1]
        assert key["extra"] == Fraction(p - 1, p) * 2 * psi
        assert key["extra-time"] == key["extra"] / values["bandwidth"]
    calls = {"no-shard": ("allreduce",), "shard-grad-op": ("reduce-scatter", "allgather"),
             "full-shard": ("allgather", "allgather", "reduce-scatter")}
    stages = {"no-shard": 0, "shard-grad-op": 2, "full-shard": 3}
    for values, key in variants("fsdp-strategies"):
        psi, p, strategy = int(values["params"] * GB), values["gpus"], values["strategy"]
        memory = training_memory(psi, dp=p, zero=stages[strategy], dtype="bf16")
        assert key["states"] == memory.zero.model_state_bytes_per_gpu
        assert key["collectives"] == len(calls[strategy])
        assert key["sent"] == sum(_ring_sent(c, p, Fraction(2 * psi)) for c in calls[strategy])


def test_activation_keys_against_the_step_model():
    for values, key in variants("activation-per-layer"):
        s, b, h, a, t = (values[k] for k in ("seq", "batch", "hidden", "heads", "tp"))
        shape = TransformerShape(layers=1, hidden=h, heads=a, sequence=s, vocabulary=32000)

        def stored(tp: int, sp: bool, recompute: str, shape=shape, b=b) -> Fraction:
            return activation_bytes(shape, micro_batch=b, tp=tp, sequence_parallel=sp, recompute=recompute,
                                    attention="unfused")

        assert key["plain"] == stored(1, False, "none") == s * b * h * (34 + Fraction(5 * a * s, h))
        assert key["tp-sp"] == stored(t, True, "none")
        assert key["selective"] == stored(t, True, "selective") == Fraction(34 * s * b * h, t)


def test_pipeline_keys():
    for values, key in variants("pipeline-stage-activations"):
        s, b, h, a = (values[k] for k in ("seq", "batch", "hidden", "heads"))
        p, m, layers = values["stages"], values["microbatches"], values["layers"]
        layer = s * b * h * (34 + Fraction(5 * a * s, h))
        assert key["inflight-1f1b"] == min(p, m)
        assert key["stage-1f1b"] == min(p, m) * (layers // p) * layer
        assert key["stage-gpipe"] == m * (layers // p) * layer
    for values, key in variants("interleaved-activations"):
        p, v = values["stages"], values["chunks"]
        warmup = (p - 1) * 2 + (v - 1) * p  # Megatron-LM's warm-up chunk forwards on the first stage
        assert key["idle-interleaved"] == Fraction(3 * (p - 1), v)
        assert key["held-interleaved"] == Fraction(warmup + 1, v)
        assert key["memory-ratio"] == Fraction(warmup + 1, v * p)
    for values, key in variants("interleaved-bubble-busy"):
        p, m, v = values["stages"], values["microbatches"], values["chunks"]
        assert key["busy-1f1b"] == Fraction(p - 1, m) and key["busy-interleaved"] == Fraction(p - 1, v * m)
        assert key["equivalent"] == v * m


def test_federated_keys():
    def links(values: dict) -> tuple[Fraction, Fraction]:
        model = 4 * values["params"] * MB
        return model / values["downlink"], model / values["uplink"]

    for values, key in variants("fl-slowest-exponential"):
        down, up = links(values)
        expected = values["a"] + values["b"] * sum(Fraction(1, i) for i in range(1, values["sampled"] + 1))
        assert key["compute"] == expected and key["round"] == down + expected + up
    for values, key in variants("fl-slowest-uniform"):
        down, up = links(values)
        m = values["sampled"]
        expected = values["a"] + (values["b"] - values["a"]) * Fraction(m, m + 1)
        assert key["compute"] == expected and key["round"] == down + expected + up
    for values, key in variants("fl-kth-uniform"):
        down, up = links(values)
        k, m = values["fastest"], values["sampled"]
        expected = values["a"] + (values["b"] - values["a"]) * Fraction(k, m + 1)
        assert key["compute"] == expected and key["round"] == down + expected + up
    for values, key in variants("fl-deadline-dropping"):
        down, up = links(values)
        made = sum(1 for t in values["times"] if down + t + up <= values["deadline"])
        assert key["participants"] == made
        assert key["uploaded"] == made * 4 * values["params"] * MB
        assert key["round"] == min(values["deadline"], down + max(values["times"]) + up)


def test_hierarchical_key():
    for values, key in variants("hierarchical-two-links"):
        g, nodes, d = values["gpus"], values["nodes"], values["d"]
        a1, b1 = values["intra_alpha"], 1 / values["intra_bw"]
        a2, b2 = values["inter_alpha"], 1 / values["inter_bw"]
        inside = (g - 1) * a1 + Fraction(g - 1, g) * d * b1  # a ring reduce-scatter (or all-gather) of D
        across = 2 * (nodes - 1) * a2 + Fraction(2 * (nodes - 1), nodes) * (d / g) * b2
        assert key["chunk"] == d / g
        assert key["hier-time"] == 2 * inside + across
        topology = Topology((Level(size=g, link=LinkParams(alpha_s=a1, beta_s_per_byte=b1)),
                             Level(size=nodes, link=LinkParams(alpha_s=a2, beta_s_per_byte=b2))))
        assert key["hier-time"] == hierarchical_cost(topology, d).time_s


def _least_rounds(rho: float, eps: Fraction) -> int:
    r = 1
    while rho**r > float(eps) * (1 + 1e-12):
        r += 1
    return r


def _laplacian(graph) -> np.ndarray:
    lap = np.zeros((graph.p, graph.p))
    for i, neighbours in enumerate(graph.neighbours):
        for j in neighbours:
            lap[i, j] -= 1
            lap[i, i] += 1
    return lap


def test_gossip_keys_against_numpy():
    for values, key in variants("ring-self-weight"):
        p, w0 = values["p"], float(values["self"])
        dense = w0 * np.eye(p) + (1 - w0) / 2 * (np.roll(np.eye(p), 1, axis=1) + np.roll(np.eye(p), -1, axis=1))
        moduli = sorted(abs(np.linalg.eigvalsh(dense)))[::-1]
        rho = moduli[1]  # the largest but the consensus eigenvalue 1
        assert math.isclose(float(key["rho"]), rho, abs_tol=1e-9)
        assert key["rounds-to-target"] == _least_rounds(rho, values["target"])
    for values, key in variants("best-constant-weight"):
        spectrum = np.linalg.eigvalsh(_laplacian(generate(values["graph"], values["p"])))
        low, high = spectrum[1], spectrum[-1]
        assert math.isclose(float(key["alpha"]), 2 / (low + high), rel_tol=1e-9)
        rho = (high - low) / (high + low)
        assert math.isclose(float(key["rho-best"]), rho, rel_tol=1e-9)
        assert key["rounds-best"] == _least_rounds(rho, values["target"])


# -- grading -----------------------------------------------------------------------------------------

FORMULA_SLIPS = [("zero-stage3-traffic", "baseline", "own-chunk"), ("zero-stage3-traffic", "stage3", "own-chunk"),
                 ("fsdp-strategies", "states", "zero-bookkeeping"), ("fsdp-strategies", "sent", "own-chunk"),
                 ("fl-slowest-exponential", "compute", "mean-for-max"),
                 ("fl-slowest-exponential", "round", "mean-for-max"),
                 ("fl-slowest-uniform", "compute", "mean-for-max"), ("fl-kth-uniform", "compute", "mean-for-max"),
                 ("fl-deadline-dropping", "participants", "deadline-without-links"),
                 ("fl-deadline-dropping", "uploaded", "deadline-without-links"),
                 ("hierarchical-two-links", "hier-time", "beta-only"),
                 ("ring-self-weight", "rho", "second-eigenvalue"),
                 ("ring-self-weight", "rounds-to-target", "gap-for-log"),
                 ("best-constant-weight", "rounds-best", "gap-for-log")]


@pytest.mark.parametrize(("exercise_id", "name", "mistake"), FORMULA_SLIPS, ids=str)
def test_formula_slips_are_diagnosed(exercise_id, name, mistake):
    # a slip that changes nothing for some numbers (every client makes the deadline, ...) is skipped there
    assert slips_diagnosed(BANK.get(exercise_id), name, mistake, SEEDS) >= 3


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_right_answers_are_correct_and_variants_differ(exercise):
    assert right_answers_correct(exercise) >= 3
