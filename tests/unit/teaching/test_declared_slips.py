"""Declared slips: every slip an exercise declares is diagnosed, on several variants, and no random
wrong answer is diagnosed as anything, for every exercise of the bank (a random factor away from
every known slip's factor, and every product of two: a formula slip, then a unit slip)."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from costmodel.exercises import Submission, grade_answer, load_bank
from costmodel.exercises.grading import known_factors

_BANK = load_bank()
_SEEDS = (None, 1, 2, 3, 5, 8, 13)


def _text(value, spec) -> str:
    x = Fraction(value) / spec.scale if not isinstance(value, float) else value / float(spec.scale)
    number = str(x.numerator) if isinstance(x, Fraction) and x.denominator == 1 else f"{float(x):.12g}"
    return f"{number} {spec.unit}".strip()


def _declared():
    for exercise in _BANK:
        for spec in exercise.answers:
            for slip in spec.slips:
                yield exercise.id, spec.name, slip.id


def test_the_frequent_mistakes_are_declared():
    """One phase of a two-phase algorithm, the bubble left out, the large-p shortcut, the whole tensor
    sent once and the algorithm bandwidth for the bus bandwidth."""
    declared = {(e, n, s) for e, n, s in _declared()}
    for case in (("ring-bytes", "rounds", "one-phase"), ("ring-allreduce-rounds", "rounds", "one-phase"),
                 ("tree-levels", "tree-rounds", "one-phase"), ("pipeline-bubble", "total-slots", "no-bubble"),
                 ("four-formulas", "ring", "large-p"), ("allreduce-lower-bound", "bound", "large-p"),
                 ("ring-vs-naive-root", "ring", "large-p"), ("busbw-model", "time", "large-p"),
                 ("ring-bytes", "sent", "tensor-once"), ("rabenseifner-bytes-rounds", "rab-sent", "tensor-once"),
                 ("busbw-allreduce", "busbw", "algbw-for-busbw"), ("busbw-collectives", "busbw", "algbw-for-busbw")):
        assert case in declared


@pytest.mark.parametrize(("exercise_id", "name", "slip_id"), sorted(set(_declared())))
def test_every_declared_slip_is_diagnosed(exercise_id, name, slip_id):
    exercise = _BANK.get(exercise_id)
    spec = exercise.answer(name)
    slip = next(s for s in spec.slips if s.id == slip_id)
    diagnosed = 0
    for seed in _SEEDS:
        variant = exercise.variant(seed)
        expected = variant.expected(name)
        wrong = slip.wrong(expected, variant.values)
        kind = variant.answers[name].kind
        if wrong is None or spec.tolerance_for(kind).accepts(wrong, expected, scale=spec.scale):
            continue  # the slip gives the right value for these numbers (large p)
        grade = grade_answer(exercise, Submission(exercise_id, _text(wrong, spec), seed=seed, name=name))
        assert not grade.correct and slip_id in {m for d in grade.diagnosis for m in d.mistakes}, \
            (seed, grade.given, grade.expected, grade.diagnosis)
        diagnosed += 1
    assert diagnosed >= 3


@pytest.mark.parametrize("exercise_id", [e.id for e in _BANK])
def test_no_random_wrong_answer_is_diagnosed(exercise_id):
    exercise = _BANK.get(exercise_id)
    rng = random.Random(f"wrong/{exercise_id}")
    tried = 0
    for seed in _SEEDS[:4]:
        variant = exercise.variant(seed)
        for spec in exercise.answers:
            answer = variant.answers[spec.name]
            expected = answer.value
            if isinstance(expected, str) or answer.kind.name == "formula" or not expected:
                continue
            single = [f for f in known_factors(exercise, variant, spec.name) if f > 0]
            factors = single + [a * b for a in single for b in single]  # a slip, then a unit slip
            for _ in range(4):
                factor = rng.uniform(0.03, 30)
                if any(abs(factor / f - 1) < 0.03 for f in factors) or abs(factor - 1) < 0.05:
                    continue
                wrong = Fraction(expected) * Fraction(factor).limit_denominator(10**6)
                if answer.kind.name in ("count", "counts") or spec.tolerance_for(answer.kind).exact:
                    wrong = Fraction(round(wrong))
                    if any(abs(float(wrong) / (f * float(expected)) - 1) < 1e-9 for f in factors) \
                            or wrong == expected:
                        continue
                grade = grade_answer(exercise, Submission(exercise_id, _text(wrong, spec), seed=seed,
                                                          name=spec.name))
                assert not grade.correct and grade.diagnosis == (), (seed, spec.name, grade.given, grade.diagnosis)
                tried += 1
    if tried == 0:
        assert all(isinstance(variant.expected(s.name), str) or variant.answers[s.name].kind.name == "formula"
                   for s in exercise.answers)
