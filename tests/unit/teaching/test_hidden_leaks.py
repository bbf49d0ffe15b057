"""Under --hide-expected nothing a student sees lets a script recover the expected value.

The attacker reads only the student's view (the text table, --json and Gradescope's results.json)
and tries every number the grader printed beyond what the student already knew (the value given,
the seed, the question's name, the points and score), and every product and quotient of a number
it can read with such a number (the value given times a printed factor, over a printed ratio, ...).
None may land within the answer's tolerance of the key, for every exercise of the bank, given each
declared slip's answer and random wrong ones.
"""

from __future__ import annotations

import json
import random
import re
from fractions import Fraction

import pytest

from costmodel.cli.output import emit
from costmodel.exercises import Submission, check, load_bank
from costmodel.exercises.grading import known_factors
from costmodel.exercises.model import Exercise

_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SEED = 271_828_183  # the variant graded; printed, so one of the numbers tried (far from 2^k and 10^k)


def _numbers(text: str) -> set[float]:
    return {float(m) for m in _NUMBER.findall(text)}


def _recovered(numbers: set[float], known: set[float], accepts) -> list[float]:
    """Every number the grader added, and product and quotient of any number read with one such,
    that the key accepts (*known*: the numbers the student knew before grading)."""
    added = numbers - known
    found = [x for x in added if accepts(x)]
    for x in numbers:
        for f in added:
            if f == 0:
                continue
            found += [c for c in (x * f, x / f) if accepts(c)]
    return found


def _numeric_answers(exercise: Exercise):
    variant = exercise.variant(_SEED)
    for spec in exercise.answers:
        answer = variant.answers[spec.name]
        value = answer.value
        if isinstance(value, (int, Fraction, float)) and not isinstance(value, bool) and value:
            yield spec, answer, value


def _candidates(exercise: Exercise, spec, value, rng: random.Random) -> list[Fraction]:
    """The slip answers (each known factor applied) and random wrong ones, in the answer's unit."""
    t = Fraction(value) / spec.scale
    slips = [t * Fraction(f).limit_denominator(10**9) for f in
             known_factors(exercise, exercise.variant(_SEED), spec.name)]
    wrong = [t * Fraction(rng.uniform(0.05, 20)).limit_denominator(1000) for _ in range(6)]
    return [c for c in slips + wrong if c != t]


def _shown(report, capsys) -> str:
    hidden = report.hide_expected()
    emit(hidden, as_json=False)
    emit(hidden, as_json=True)
    out = capsys.readouterr().out
    return out + json.dumps(hidden.to_gradescope(), ensure_ascii=False)


_BANK = load_bank()


@pytest.mark.parametrize("exercise_id", [e.id for e in _BANK])
def test_no_hidden_output_recovers_the_expected_value(exercise_id, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    exercise = _BANK.get(exercise_id)
    rng = random.Random(exercise_id)
    tried = 0
    for spec, answer, value in _numeric_answers(exercise):
        tolerance = spec.tolerance_for(answer.kind)
        scale = spec.scale

        def accepts(x: float, tolerance=tolerance, scale=scale, value=value) -> bool:
            return tolerance.accepts(Fraction(x) * scale, Fraction(value), scale=scale) if \
                not tolerance.exact else abs(x * float(scale) - float(value)) <= 1e-9 * abs(float(value))

        for candidate in _candidates(exercise, spec, value, rng):
            if accepts(float(candidate)):
                continue  # a right answer, not a wrong one
            text = f"{float(candidate):.6g}" + (f" {spec.unit}" if spec.unit else "")
            report = check([Submission(exercise.id, text, seed=_SEED, name=spec.name)], bank=_BANK)
            shown = _shown(report, capsys)
            assert "expected" not in json.loads(shown.splitlines()[-2])["results"][0]
            grade = report.grades[0]
            known = _numbers(" ".join((text, exercise.id, spec.name, str(_SEED), str(grade.score),
                                       str(grade.max_score), "0 1")))
            leaks = _recovered(_numbers(shown), known, accepts)
            assert not leaks, f"{exercise.id}: {spec.name}: given {text}, the key is recovered from:\n{shown}"
            tried += 1
    if any(True for _ in _numeric_answers(exercise)):
        assert tried > 0


def test_the_hidden_diagnosis_names_the_kind_of_slip():
    """The slips of the issue: MB read as MiB is named, without the factor 1.049 it was printed with."""
    exercise = _BANK.get("ring-bytes")
    expected = exercise.variant(_SEED).expected("sent") / 10**6
    given = f"{float(expected) / 1.048576:.6g} MB"
    report = check([Submission("ring-bytes", given, seed=_SEED, name="sent")], bank=_BANK)
    open_view = report.grades[0].diagnosis[0]
    assert "1.049" in open_view.message
    hidden = report.hide_expected().grades[0]
    assert hidden.expected == "" and hidden.diagnosis[0].mistake == "binary-prefix"
    assert hidden.diagnosis[0].message == "Decimal and binary unit prefixes confused"
    assert report.grades[0].expected  # the instructor's report keeps the expected value
