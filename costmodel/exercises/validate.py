"""Reading an answers file back without grading it: how each answer was understood, for a student
to check a file before submitting it (``costmodel check FILE --validate``).

Every entry is read exactly as grading reads it (:func:`costmodel.exercises.grading.read_answers`,
then the value parsed in the answer's unit or, for a formula, by the restricted grammar); nothing
is compared with the expected answer, so nothing about it is revealed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from costmodel._json import with_present
from costmodel.errors import InputError
from costmodel.examples.kinds import NAME
from costmodel.exercises.bank import Bank
from costmodel.exercises.grading import Submission, dimension_of, parse_given
from costmodel.exercises.model import article

__all__ = ["ReadBack", "Reading", "read_back"]


@dataclass(frozen=True)
class Reading:
    """One entry as read: the value in the answer's unit (or the formula), or why it cannot be read."""

    submission: Submission
    name: str | None
    read: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        s = self.submission
        out: dict[str, Any] = {"exercise": s.exercise, "seed": s.seed, "name": self.name,
                               "given": "" if s.value is None else str(s.value), "read": self.read}
        return with_present(out, line=s.line, error=self.error)


@dataclass(frozen=True)
class ReadBack:
    """Every entry of a file as read; ``ok`` when all of them read."""

    readings: tuple[Reading, ...]
    path: str = ""

    @property
    def errors(self) -> tuple[Reading, ...]:
        return tuple(r for r in self.readings if r.error is not None)

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.ok, "problems": len(self.errors),
                "answers": [r.to_dict() for r in self.readings]}


def read_back(submissions: Iterable[Submission], bank: Bank) -> ReadBack:
    """How each submission reads, without grading it.

    >>> from costmodel.exercises import load_bank
    >>> r = read_back([Submission("ring-bytes", "1,240 megabytes", name="sent")], load_bank())
    >>> r.readings[0].read
    '1240 MB'
    """
    return ReadBack(tuple(_reading(s, bank) for s in submissions))


def _reading(s: Submission, bank: Bank) -> Reading:
    try:
        if s.error is not None:
            raise InputError(s.error)
        exercise = bank.get(s.exercise)
        spec = exercise.answer(s.name)
    except InputError as e:
        return Reading(s, s.name, error=str(e))
    try:
        answer = exercise.variant(s.seed).answers[spec.name]
        kind = answer.kind
        if kind.name == "formula":
            from costmodel.expressions import parse_expression, show_expression

            return Reading(s, spec.name, read=show_expression(parse_expression(str(s.value))))
        value, dimension = parse_given(s.value, spec, kind, answer.label,
                                       whole=spec.precision(kind, answer.value) == "exact integer")
        want = "name" if kind is NAME else dimension_of(kind)
        if dimension != want:
            unit = f", in {spec.unit}" if spec.unit else ""
            return Reading(s, spec.name, error=f"{s.value} is {article(dimension)}; the answer is "
                                               f"{article(want)}{unit}")
        return Reading(s, spec.name, read=spec.shown(value, kind))
    except InputError as e:
        return Reading(s, spec.name, error=str(e))
    except (ArithmeticError, ValueError, TypeError, RecursionError) as e:
        return Reading(s, spec.name, error=f"this answer cannot be read ({type(e).__name__})")
