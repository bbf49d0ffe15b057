"""Diagnoses that can be trusted: only slips that can occur in the question, ambiguity said, no credit for guesses.

The false-diagnosis rate is measured as ``benchmarks/bench_diagnosis.py`` does, on a smaller
deterministic sample: wrong answers made by factors at least 3 % away from every known slip of
their answer must almost never be diagnosed.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from costmodel.exercises import Submission, grade_answer, load_bank
from costmodel.exercises.grading import known_factors
from costmodel.exercises.mistakes import applicable, sentence, value_slips

BANK = load_bank()


def grade(exercise_id, name, value, **kw):
    return grade_answer(BANK.get(exercise_id), Submission(exercise_id, value, name=name), **kw)


def test_unrelated_wrong_answers_are_almost_never_diagnosed():
    rng = random.Random(12)
    tried = diagnosed = 0
    for exercise in BANK:
        for spec in exercise.answers:
            for seed in range(3):
                variant = exercise.variant(seed)
                value = variant.answers[spec.name].value
                if isinstance(value, str) or hasattr(value, "free_symbols") or not value:
                    continue
                known = [1.0, *known_factors(exercise, variant, spec.name)]
                factor = rng.uniform(0.2, 5)
                while any(abs(factor / k - 1) < 0.03 for k in known):
                    factor = rng.uniform(0.2, 5)
                given = float(value / spec.scale if spec.unit else value) * factor
                g = grade_answer(exercise, Submission(exercise.id, f"{given!r} {spec.unit}".strip(),
                                                      seed=seed, name=spec.name))
                tried += 1
                diagnosed += bool(g.diagnosis) and not g.correct
    assert tried > 300
    assert diagnosed / tried <= 0.01, (diagnosed, tried)


@pytest.mark.parametrize(("exercise", "name", "value"), [
    ("consensus-rounds-ring", "rho", "0.6667"),  # 2ρ: no "sent and received" in a ρ
    ("consensus-rounds-ring", "rho", "0.1667"),
    ("consensus-rounds-graphs", "rho", "1.2"),
    ("zero-stages", "stage0", "240 GB"),  # memory: nothing is sent twice
    ("dp-memory", "per-replica", "560 GB"),
    ("ring-bytes", "sent", "114.69 MB"),  # 112 KiB·1024 written as MB: not this answer's prefix
])
def test_slips_that_cannot_occur_in_the_question_are_not_offered(exercise, name, value):
    g = grade(exercise, name, value)
    assert not g.correct and g.diagnosis == (), [d.to_dict() for d in g.diagnosis]


def test_prefix_slips_stay_in_the_answers_unit_and_say_kB():
    (d,) = grade("crossover-rd-rab", "crossover", "114.9 kB").diagnosis
    assert d.mistake == "binary-prefix" and d.message.startswith("kB and KiB confused")
    (d,) = grade("dp-memory", "per-replica", "260.8 GB").diagnosis
    assert d.message.startswith("GB and GiB confused")
    assert {d.split(" (")[0] for m, _, d in value_slips("size", "GB") if m == "binary-prefix"} == \
        {"GB and GiB confused"}
    assert not [m for m, _, _ in value_slips("size", "B") if m == "binary-prefix"]


def test_applicability_is_data():
    assert applicable("number", (), None) == frozenset()
    assert applicable("size", ("own-chunk",), None) >= {"own-chunk", "binary-prefix", "factor-two"}
    assert applicable("size", ("own-chunk",), ("bits-bytes",)) == {"bits-bytes"}


def test_ambiguous_explanations_are_marked_and_earn_nothing():
    # 1 MB: 250,000 values × 4 B without their indices, or half of 2 MB: both fit
    g = grade("topk-ratio", "bytes", "1 MB", partial={"index-overhead": Fraction(1, 2)})
    assert {d.mistake for d in g.diagnosis} == {"index-overhead", "factor-two"}
    assert all(d.ambiguous and d.to_dict()["ambiguous"] for d in g.diagnosis)
    assert all(d.message.endswith("(ambiguous: another mistake gives the same value)") for d in g.diagnosis)
    assert g.score == 0


def test_a_chain_of_two_slips_earns_nothing_and_one_slip_does():
    partial = {"own-chunk": Fraction(1, 2), "binary-prefix": Fraction(1, 2)}
    chained = grade("ring-bytes", "sent", "122.07 MB", partial=partial)
    assert [d.mistakes for d in chained.diagnosis] == [("own-chunk", "binary-prefix")]
    assert chained.score == 0
    single = grade("ring-bytes", "sent", "128 MB", partial=partial)
    assert [d.mistake for d in single.diagnosis] == ["own-chunk"] and single.score == Fraction(1, 2)
    assert "ambiguous" not in single.diagnosis[0].to_dict()


def test_messages_keep_a_symbol_in_lower_case():
    (d,) = grade("rabenseifner-bytes-rounds", "rab-rounds", 16).diagnosis
    assert d.message.startswith("p used where")
    assert sentence("ρ of the mixing matrix") == "ρ of the mixing matrix"
    assert sentence("the mean") == "The mean"


def _seeded(exercise_id, name, value, seed):
    return grade_answer(BANK.get(exercise_id), Submission(exercise_id, value, name=name, seed=seed))


def test_the_whole_tensor_sent_once_is_named_not_a_chain_of_two_slips():
    # seed 17: p = 32, n = 176 MB; each worker sends 2·31/32·176 MB = 341 MB; 176 MB is n, sent once
    # (the own chunk, p/(p − 1), then half is n as well, for every p: the named slip is the one said)
    g = _seeded("ring-bytes", "sent", "176 MB", 17)
    assert g.expected == "341 MB"
    assert [d.mistakes for d in g.diagnosis] == [("tensor-once",)] and not g.diagnosis[0].ambiguous


def test_the_algorithm_bandwidth_for_the_bus_bandwidth_is_named():
    # seed 1: 512 MB in 68 ms on 32 GPUs: algbw = 512e6/0.068 B/s = 7.529 GB/s, busbw = algbw·2·31/32
    algbw = Fraction(512 * 10**6) / Fraction(68, 1000)
    assert _seeded("busbw-allreduce", "busbw", "1 GB/s", 1).expected == \
        f"{float(algbw * Fraction(62, 32)) / 1e9:.6g} GB/s"
    g = _seeded("busbw-allreduce", "busbw", f"{float(algbw) / 1e9:.4f} GB/s", 1)
    assert [d.mistakes for d in g.diagnosis] == [("algbw-for-busbw",)]
    # any collective: the bus factor left out is n/t, whatever the collective's factor; where the
    # factor is (p − 1)/p, the own chunk counted gives n/t too, and both are said, as ambiguous
    exercise = BANK.get("busbw-collectives")
    told = set()
    for seed in range(40):
        v = exercise.variant(seed)
        n, t, factor = v.values["n"], v.values["t"], v.answers["factor"].value
        p = v.values["p"]
        if factor == 1 or p == 2:
            continue  # broadcast, reduce: busbw is algbw; at p = 2 a factor 1/2 is also twice the value
        g = _seeded("busbw-collectives", "busbw", f"{float(n / t) / 1e9!r} GB/s", seed)
        both = factor == Fraction(p - 1, p)
        assert sorted(d.mistakes for d in g.diagnosis) == \
            ([("algbw-for-busbw",), ("own-chunk",)] if both else [("algbw-for-busbw",)]), (seed, v.shown)
        assert all(d.ambiguous == both for d in g.diagnosis)
        told.add(both)
    assert told == {True, False}  # an all-reduce among them


def test_bits_for_bytes_only_where_a_rate_is_worked_in():
    # seed 1: 2(p − 1) = 46 start-ups of 9.5 µs, 437 µs; 8 times that is no bits-for-bytes slip:
    # no rate (nor time per byte) goes into the start-ups
    g = _seeded("ring-calculation", "latency", "3496 us", 1)
    assert g.expected == "437 us" and g.diagnosis == ()
    # the payload, 46/24·4 KiB·0.16 ns/B, comes from β: 8 times it is still bits for bytes
    payload = BANK.get("ring-calculation").variant(1).answers["payload"].value
    g = _seeded("ring-calculation", "payload", f"{float(payload * 8) * 1e6!r} us", 1)
    assert "bits-bytes" in {m for d in g.diagnosis for m in d.mistakes}


def test_a_single_named_slip_is_preferred_to_a_chain_of_two():
    from costmodel.exercises.mistakes import diagnose

    # 64 is twice 32 (factor-two) and the author's own "whole" slip, each alone; no chain is said
    def close(s, t):
        return abs(s - t) <= 1e-9 * abs(t)

    found = diagnose(64, 32, dimension="size", unit="MB", accepts=close, allowed={"own-chunk", "factor-two", "whole"},
                     formula_values=[("own-chunk", "the own chunk", Fraction(128)), ("whole", "n", 64)])
    assert sorted(d.mistakes for d in found) == [("factor-two",), ("whole",)]
    found = diagnose(64, 32, dimension="size", unit="MB", accepts=close, allowed={"own-chunk", "factor-two"},
                     formula_values=[("own-chunk", "the own chunk", Fraction(128))])
    assert [d.mistakes for d in found] == [("factor-two",)]  # not own-chunk then half
