"""The sheet's own words are accepted: the words of an answer's label after its number ("93 slots"),
and formulas as the sheet prints them (log₂p, ⌈log₂ p⌉, ·, ×), checked on the exercise's domain."""

from __future__ import annotations

import pytest

from costmodel import symbols as s
from costmodel.exercises import Submission, check, grade_answer, load_bank
from costmodel.exercises.grading import label_words
from costmodel.exercises.symbolic import equivalent
from costmodel.expressions import parse_expression

_BANK = load_bank()
RING = 2 * (s.p - 1) * s.ALPHA + 2 * (s.p - 1) / s.p * s.n * s.BETA


def _unitless_numeric_answers():
    for exercise in _BANK:
        variant = exercise.variant()
        for spec in exercise.answers:
            answer = variant.answers[spec.name]
            if not spec.unit and answer.kind.name in ("count", "number"):
                yield exercise, spec, answer


@pytest.mark.parametrize(("exercise_id", "name"),
                         [(e.id, spec.name) for e, spec, _ in _unitless_numeric_answers()])
def test_every_word_of_the_label_is_accepted_after_the_number(exercise_id, name):
    exercise = _BANK.get(exercise_id)
    spec = exercise.answer(name)
    answer = exercise.variant().answers[name]
    shown = spec.shown(answer.value, answer.kind)
    words = [w for w in answer.label.replace(",", " ").replace("(", " ").replace(")", " ").split()
             if w.lower() in label_words(answer.label)]
    for word in words:
        grade = grade_answer(exercise, Submission(exercise_id, f"{shown} {word}", name=name))
        assert grade.correct, (word, grade.error, grade.diagnosis)


def test_ninety_three_slots():
    """The issue's case: the sheet asks for a time 'in slots' and "N slots" is right."""
    exercise = _BANK.get("pipeline-bubble")
    variant = exercise.variant(93)
    total = variant.expected("total-slots")
    for text in (f"{total} slots", f"{total} slot", f"{total}slots", f"{total}"):
        assert grade_answer(exercise, Submission("pipeline-bubble", text, seed=93, name="total-slots")).correct
    for text in (f"{total} MB", f"{total} parsecs", f"{total} slots of fun"):
        assert not grade_answer(exercise, Submission("pipeline-bubble", text, seed=93, name="total-slots")).correct


def test_words_of_the_label_only():
    assert sorted(label_words("rounds in all")) == ["round", "rounds"]
    assert "entry" in label_words("entries each worker of group 1 owns")
    report = check([Submission("ring-bytes", "14 workers", name="rounds")])
    assert report.grades[0].error is not None and "unknown unit" in report.grades[0].error


@pytest.mark.parametrize("text", [
    "2·log₂p·α + 2(p − 1)/p·n·β",
    "2 log₂ p × α + 2(p − 1)/p × n × β",
    "2⌈log₂ p⌉α + 2(p−1)/p·nβ",
    "2·log_2(p)·alpha + 2*(p-1)*n*beta/p",
])
def test_a_formula_as_the_sheet_prints_it(text):
    seed = next(k for k in range(50) if _BANK.get("cost-formula").variant(k).shown["algorithm"] == "rabenseifner")
    grade = grade_answer(_BANK.get("cost-formula"), Submission("cost-formula", text, seed=seed, name="time"))
    assert grade.correct, (grade.error, grade.expected)


@pytest.mark.parametrize("text", ["2(p − 1)α + 2(p − 1)/p·n·β", "2(p−1)·α + 2(p − 1)/p × n × β"])
def test_the_ring_as_the_sheet_prints_it(text):
    assert grade_answer(_BANK.get("cost-formula"), Submission("cost-formula", text, name="time")).correct


@pytest.mark.parametrize(("text", "on_powers_of_two"), [
    ("2*(p-1)*(1 + ⌈log₂ p⌉ - ⌊log₂ p⌋)*alpha + 2*(p-1)/p*n*beta", True),  # right at powers of two only
    ("2*(p-1)*alpha + 2*(p-1)/p*n*beta*⌈log₂ p⌉/⌊log₂ p⌋", True),  # right at powers of two only
    ("2*(p-1)*alpha + 2*(p-1)/p*n*beta + (p-1)*(p-2)*(p-4)*alpha", False),  # right at p = 1, 2, 4 only
])
def test_a_ring_formula_wrong_at_other_p_fails(text, on_powers_of_two):
    assert not equivalent(parse_expression(text), RING)
    # the exercise says p is a power of two: a formula right at every power of two is right there
    assert equivalent(parse_expression(text), RING, powers_of_two=True) is on_powers_of_two
    grade = grade_answer(_BANK.get("cost-formula"), Submission("cost-formula", text, name="time"))
    # ⌈log₂ p⌉/⌊log₂ p⌋ divides by zero at p = 1, a power of two the ring's formula is defined at
    undefined = "/⌊log₂ p⌋" in text
    assert grade.correct is (on_powers_of_two and not undefined)
    assert ("it divides by zero at p = 1" in (grade.error or "")) is undefined


def test_points_include_p_one_two_three_and_others():
    assert equivalent(parse_expression("(p-1)*alpha"), (s.p - 1) * s.ALPHA)
    # 0 at p = 1 and p = 2 only: a power-of-two-only check at p >= 4 would have refused it anyway;
    # this one differs from 0 at p = 3 alone among p <= 4
    assert not equivalent(parse_expression("(p-1)*(p-2)*(p-4)*alpha"), 0 * s.ALPHA)


def test_points_where_the_key_is_undefined_are_skipped():
    assert not equivalent(parse_expression("alpha + alpha/(p-1) - alpha/(p-1)"), s.ALPHA * 2)
    assert equivalent(parse_expression("alpha/(p-1)"), s.ALPHA / (s.p - 1))  # p = 1 skipped for both
