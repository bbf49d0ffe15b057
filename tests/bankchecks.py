"""Checks every exercise of the bank must pass, shared by the tests of each topic's exercises: a declared
slip is diagnosed by name, and the right answer, written as a student would, is graded correct."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from costmodel.examples.work import Slip
from costmodel.exercises import Submission, grade_answer


def slips_diagnosed(exercise: Any, name: str, mistake: str, seeds: Iterable[int | None], *,
                    rel_tol: float = 0.05) -> int:
    """How many variants of *exercise* (over *seeds*) diagnose *mistake* in answer *name*, asserting each
    one that the slip changes (by more than *rel_tol*) is refused and named."""
    spec = exercise.answer(name)
    diagnosed = 0
    for seed in seeds:
        variant = exercise.variant(seed)
        wrong = exercise.worked_example.run(values=variant.values, slip=Slip(mistake), quiet=True).answers[name].value
        expected = variant.expected(name)
        if math.isclose(float(wrong), float(expected), rel_tol=rel_tol):
            continue  # the slip changes nothing for these numbers
        text = f"{float(wrong) / float(spec.scale):.10g} {spec.unit}".strip()
        grade = grade_answer(exercise, Submission(exercise.id, text, seed=seed, name=name))
        assert not grade.correct and mistake in {m for d in grade.diagnosis for m in d.mistakes}, \
            (seed, grade.given, grade.expected, grade.diagnosis)
        diagnosed += 1
    return diagnosed


def right_answers_correct(exercise: Any, seeds: Iterable[int | None] = (None, 3, 17, 40)) -> int:
    """The number of different statements over *seeds*, asserting every answer of every variant, written
    to 12 digits with its unit (a word as it is), is graded correct and no placeholder is left in a statement."""
    seen = set()
    for seed in seeds:
        v = exercise.variant(seed)
        assert "{" not in v.statement
        seen.add(v.statement)
        for spec in exercise.answers:
            expected = v.expected(spec.name)
            text = expected if isinstance(expected, str) else \
                f"{float(expected) / float(spec.scale):.12g} {spec.unit}".strip()
            grade = grade_answer(exercise, Submission(exercise.id, text, seed=seed, name=spec.name))
            assert grade.correct, (seed, spec.name, text)
    return len(seen)
