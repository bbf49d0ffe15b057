"""Grading: read an answers file, compare each answer in its unit, diagnose the misses.

An answers file is TOML data with one ``[[answer]]`` table per answer::

    student = "s1234"          # optional, for every answer of the file
    seed = 17                  # optional, for every answer of the file without a seed of its own

    [[answer]]
    exercise = "ring-bytes"
    seed = 17                  # the student's variant; omit for the exercise's own numbers
    name = "sent"              # only when the exercise has several answers
    value = "150 MB"           # a string with its unit, or a number
    student = "s1234"          # optional, per answer

Units are converted before comparing (``"0.15 GB"`` is 150 MB; a bare number is
read in the answer's unit); a value of the wrong dimension is reported as
``wrong-unit``; integer answers (rounds) must be exact.  A miss is re-worked
with every known slip (:mod:`costmodel.exercises.mistakes`) and each slip that
reproduces it is reported, with the partial credit configured for it.  One bad
entry is reported and the others are graded.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

from costmodel._files import read_text
from costmodel._json import real, with_present
from costmodel.errors import CostmodelError, InputError, ParseError
from costmodel.examples import get as get_example
from costmodel.examples.kinds import COUNT, COUNTS, INVERSE_RATE, NAME, RATE, Kind
from costmodel.examples.work import FORMULA_SLIPS, Slip
from costmodel.exercises.bank import Bank, load_bank
from costmodel.exercises.mistakes import (
    MISTAKES,
    AuthorSlip,
    Diagnosis,
    applicable,
    diagnose,
    hint,
    marked,
    sentence,
    value_slips,
)
from costmodel.exercises.model import AnswerSpec, Exercise, Tolerance, Variant, article
from costmodel.exercises.model import example_answers as _answers
from costmodel.tomlfile import header_lines, loads
from costmodel.units import NUMBER, parse_quantity
from costmodel.validate import positive

__all__ = ["Grade", "GradeReport", "Submission", "check", "dimension_of", "grade_answer", "parse_given",
           "read_answers", "unreadable_gradescope"]

_ANSWER_KEYS = {"exercise", "seed", "name", "value", "student"}
_MAX_ANSWERS = 200_000
_MAX_SEED = 2**63
_DIMENSION = {"size": "size", "time": "time", "rate": "rate", "inverse rate": "inverse rate"}


@dataclass(frozen=True)
class Submission:
    """One answer as read from a file (or built in Python)."""

    exercise: str
    value: Any
    seed: int | None = None
    name: str | None = None
    student: str | None = None
    line: int | None = None
    error: str | None = None  # set when the entry itself is malformed
    seed_line: int | None = None  # where the seed is written, when the file gives it for every answer


@dataclass(frozen=True)
class Grade:
    """The grade of one answer."""

    submission: Submission
    correct: bool
    score: Fraction
    max_score: Fraction
    expected: str = ""
    given: str = ""
    name: str | None = None
    diagnosis: tuple[Diagnosis, ...] = ()
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        s = self.submission
        out: dict[str, Any] = {
            "exercise": s.exercise, "seed": s.seed, "name": self.name, "correct": self.correct,
            "expected": self.expected, "given": self.given,
            "diagnosis": [d.to_dict() for d in self.diagnosis],
            "score": real(self.score), "max_score": real(self.max_score),
        }
        return with_present(out, student=s.student, line=s.line, error=self.error)

    def hidden(self) -> Grade:
        """This grade as a student sees it when the expected values are hidden: no expected value,
        and each diagnosis names the kind of slip without its factor, ratio or value."""
        return replace(self, expected="", diagnosis=tuple(d.hidden() for d in self.diagnosis))


@dataclass(frozen=True)
class GradeReport:
    """Every grade of a batch, with the totals.

    Graded against an assignment (:mod:`costmodel.exercises.assignment`), it also names the
    *assignment* and the *student*, and its *notes* say what was ignored (duplicates, entries
    outside the assignment, a seed or a student written in the file).
    """

    grades: tuple[Grade, ...]
    path: str = ""
    students: Mapping[str, tuple[Fraction, Fraction]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    student: str | None = None
    assignment: str | None = None
    hidden: bool = False  # the expected values left out (see :meth:`hide_expected`)
    student_from: str | None = None  # where the student's identity came from (one source)
    late_factor: Fraction = Fraction(1)  # the assignment's late policy: the total is multiplied by it

    def hide_expected(self) -> GradeReport:
        """The report as a student sees it under ``--hide-expected``: no expected value anywhere,
        and each diagnosis names the kind of slip, never the factor, ratio or value that would
        turn the answer given into the expected one (the instructor's report keeps both)."""
        return replace(self, grades=tuple(g.hidden() for g in self.grades), hidden=True)

    @property
    def score(self) -> Fraction:
        return sum((g.score for g in self.grades), Fraction(0)) * self.late_factor

    @property
    def max_score(self) -> Fraction:
        return sum((g.max_score for g in self.grades), Fraction(0))

    @property
    def errors(self) -> tuple[Grade, ...]:
        return tuple(g for g in self.grades if g.error is not None)

    def to_dict(self) -> dict[str, Any]:
        results = [g.to_dict() for g in self.grades]
        if self.hidden:
            for r in results:
                del r["expected"]
        out: dict[str, Any] = {"score": real(self.score), "max_score": real(self.max_score),
                               "results": results}
        if self.hidden:
            out["expected_hidden"] = True
        if self.assignment is not None:
            out = {"assignment": self.assignment, "student": self.student, **out}
            if self.student_from is not None:
                out["student_from"] = self.student_from
        if self.assignment is not None or self.notes:
            out["notes"] = list(self.notes)
        if self.students:
            out["students"] = {k: {"score": real(a), "max_score": real(b)}
                               for k, (a, b) in self.students.items()}
        return out

    def to_gradescope(self, *, hide_expected: bool = False) -> dict[str, Any]:
        """Gradescope's ``results.json``: one test per answer, the score, and a summary.

        *hide_expected* leaves the expected values out of what the student sees, and each
        diagnosis names the kind of slip without its factor (see :meth:`hide_expected`).
        """
        if hide_expected and not self.hidden:
            return self.hide_expected().to_gradescope(hide_expected=True)
        hide_expected = hide_expected or self.hidden
        tests = []
        for number, g in enumerate(self.grades, 1):
            s = g.submission
            label = f"{s.exercise}" + (f" (seed {s.seed})" if s.seed is not None else "") + \
                (f": {g.name}" if g.name else "")
            if s.value is None and g.error is None:
                lines = ["no answer"]
            elif g.correct:
                lines = [f"{g.given}: correct"]
            else:
                lines = [f"given {g.given}: wrong" if hide_expected else
                         f"expected {g.expected}, given {g.given}"]
            lines += [f"{d.mistake}: {d.message}" for d in g.diagnosis]
            if g.error:
                lines = [f"error: {g.error}"]
            tests.append({"name": label, "number": str(number), "score": real(g.score),
                          "max_score": real(g.max_score), "status": "passed" if g.correct else "failed",
                          "output": "\n".join(lines), "visibility": "visible"})
        right = sum(1 for g in self.grades if g.correct)
        summary = f"{right} of {len(self.grades)} answers correct; " \
                  f"score {_text(self.score)} of {_text(self.max_score)}"
        out: dict[str, Any] = {"score": real(self.score)}
        if self.assignment is not None:
            out["max_score"] = real(self.max_score)
        out.update({"output": "\n".join([summary, *self.notes]),
                    "visibility": "visible", "stdout_visibility": "hidden", "tests": tests})
        return out


def unreadable_gradescope(message: str) -> dict[str, Any]:
    """Gradescope's ``results.json`` for a submission that cannot be read or graded: score 0 and why."""
    return {"score": 0, "output": f"error: {message}\nNothing was graded: fix the file and submit again.",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def _text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


# -- reading ---------------------------------------------------------------------------------------


def read_answers(content: str, *, path: str) -> list[Submission]:
    """The answers of one file; a malformed entry becomes a :class:`Submission` with its error."""
    data = loads(content, path=path)
    unknown = set(data) - {"answer", "student", "seed"}
    if unknown:
        raise ParseError(f"unknown key {sorted(unknown)[0]!r}; an answers file holds [[answer]] tables "
                         "(and optionally student = ... and seed = ...)", path=path)
    student = data.get("student")
    if student is not None and not isinstance(student, str):
        raise ParseError("student must be a string", path=path)
    seed = data.get("seed")
    seed_line = _top_level_line(content, "seed") if seed is not None else None
    if seed is not None and not (type(seed) is int and 0 <= seed < _MAX_SEED):
        raise ParseError(f"seed {seed!r} is not a whole number from 0 to 2^63", path=path, line=seed_line)
    entries = data.get("answer", [])
    if not isinstance(entries, list) or not entries:
        raise ParseError("no answers: write one [[answer]] table per answer", path=path, line=1)
    if len(entries) > _MAX_ANSWERS:
        raise ParseError(f"too many answers ({len(entries)}; at most {_MAX_ANSWERS})", path=path)
    lines = header_lines(content, "answer")
    subs = [_submission(e, student, lines[i] if i < len(lines) else None) for i, e in enumerate(entries)]
    if seed is None:
        return subs
    return [replace(s, seed=seed, seed_line=seed_line) if s.seed is None and s.error is None else s
            for s in subs]


def _top_level_line(content: str, key: str) -> int | None:
    """The 1-based line of a top-level ``key = ...`` of *content* (before its first table)."""
    pattern = re.compile(rf"\s*{re.escape(key)}\s*=")
    for i, line in enumerate(content.removeprefix("\ufeff").splitlines(), 1):
        if line.lstrip().startswith("["):
            return None
        if pattern.match(line):
            return i
    return None


def load_answers(path: str | Path) -> list[Submission]:
    """The answers of the file *path*, read by :func:`costmodel._files.read_text` (see :func:`read_answers`).

    Raises
    ------
    ParseError
        When the file cannot be read (its path in the message) or is not an answers file.

    >>> load_answers("/nonexistent/answers.toml")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: /nonexistent/answers.toml: cannot read answers: No such file or directory
    """
    name = str(path)
    content = read_text(path, what="answers")
    try:
        return read_answers(content, path=name)
    except RecursionError:
        raise ParseError("the file is nested too deeply to read", path=name) from None


def _submission(entry: Any, student: str | None, line: int | None) -> Submission:
    try:
        return _fields(entry, student, line)
    except InputError as e:
        if not isinstance(entry, dict):
            return Submission(exercise="?", value=None, student=student, line=line, error=str(e))
        exercise, seed, name, value = (entry.get(k) for k in ("exercise", "seed", "name", "value"))
        if value is not None and type(value) not in (str, int, float):
            value = _as_written(value)  # shown as the file writes it, never graded
        return Submission(exercise=exercise if isinstance(exercise, str) else "?", value=value,
                          seed=seed if type(seed) is int else None,
                          name=name if isinstance(name, str) else None, student=student, line=line,
                          error=str(e))


def _fields(entry: Any, student: str | None, line: int | None) -> Submission:
    if not isinstance(entry, dict):
        raise InputError("an answer must be a table")
    unknown = set(entry) - _ANSWER_KEYS
    if unknown:
        raise InputError(f"unknown key {sorted(unknown)[0]!r}; expected {', '.join(sorted(_ANSWER_KEYS))}")
    exercise, seed, name = entry.get("exercise"), entry.get("seed"), entry.get("name")
    who = entry.get("student", student)
    value = entry.get("value")
    checks = (
        (isinstance(exercise, str) and exercise, "exercise is missing (the id of the exercise answered)"),
        (seed is None or (type(seed) is int and 0 <= seed < _MAX_SEED),
         f"seed {seed!r} is not a whole number from 0 to 2^63"),
        (name is None or isinstance(name, str), "name must be a string"),
        (who is None or isinstance(who, str), "student must be a string"),
        ("value" in entry, "value is missing (write e.g. value = \"150 MB\")"),
        (type(value) in (str, int, float),
         f"value {_as_written(value)} is {_toml_kind(value)}, not a number or a string such as \"150 MB\""),
        (not isinstance(value, str) or len(value) <= 200, "value is too long (at most 200 characters)"),
        (not isinstance(value, str) or len(f"{value}.".splitlines()) == 1,
         f"value {value!r} holds a line break; write the answer on one line"),
        (not isinstance(value, float) or math.isfinite(value), f"value {value!r} is not a finite number"),
    )
    for ok, message in checks:
        if not ok:
            raise InputError(message)
    return Submission(exercise=str(exercise), value=value, seed=seed, name=name, student=who, line=line)


def _toml_kind(value: Any) -> str:
    """What a TOML value is, in the file's words: ``a date``, ``a boolean``, ``a table``."""
    import datetime

    kinds = ((bool, "a boolean"), (datetime.datetime, "a date-time"), (datetime.date, "a date"),
             (datetime.time, "a time of day"), (list, "a list"), (dict, "a table"))
    return next((kind for cls, kind in kinds if isinstance(value, cls)), "not a number")


def _as_written(value: Any) -> str:
    """A TOML value as a file writes it (``1979-05-27``, ``true``), at most 60 characters."""
    import datetime

    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, (datetime.date, datetime.time)):
        text = value.isoformat().replace("+00:00", "Z")
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- grading ---------------------------------------------------------------------------------------


def dimension_of(kind: Kind) -> str:
    """The dimension an answer of *kind* is given in (``number`` for a kind without a unit)."""
    return _DIMENSION.get(kind.name, NUMBER)


def parse_given(value: Any, spec: AnswerSpec, kind: Kind, label: str = "", *, whole: bool = False
                ) -> tuple[Any, str]:
    """The student's value in base units, and its dimension.

    An answer without a unit (a count, a plain number) may carry a word of its own *label*, as
    the sheet prints it: ``"93 slots"`` for "time of one mini-batch, in slots", ``"14 rounds"``
    (see :func:`label_words`).  A percentage is a plain number (``"25 %"`` is 0.25), but not for a
    count or another answer the sheet asks as an exact integer (*whole*): its dimension is then
    ``percentage``, the wrong one, as ``"62 MB"`` is for 62 rounds.
    """
    if kind is NAME:
        return str(value), "name"
    if not isinstance(value, str):
        quantity = parse_quantity(value)
        number = quantity.value
        return (number * spec.scale if spec.unit else number), dimension_of(kind) if spec.unit else NUMBER
    if not spec.unit and label:
        value = _without_label_word(value, label)
    quantity = parse_quantity(value)
    if quantity.unit == "%" and (whole or kind in (COUNT, COUNTS)):
        return quantity.value, PERCENTAGE
    if quantity.dimension == NUMBER and quantity.unit != "%" and spec.unit:
        return quantity.value * spec.scale, dimension_of(kind)
    return quantity.value, quantity.dimension


PERCENTAGE = "percentage"
"""The dimension of a percentage given for a count: never right (see :func:`parse_given`)."""


_TRAILING_WORD = re.compile(r"\s*(?P<number>.*?[0-9.)])\s*(?P<word>[^\W\d_][\w-]*)\s*")
_LABEL_WORD = re.compile(r"[^\W\d_][\w-]*")
_NOT_UNITS = frozenset({"a", "an", "and", "or", "of", "the", "in", "on", "to", "by", "per", "each", "one",
                        "all", "over", "with", "after", "what", "which", "its", "it", "is", "at", "least",
                        "most", "first", "new"})


def _forms(word: str) -> set[str]:
    """*word* and its singular forms (rounds, entries, exchanges): a plural and its singular match."""
    w = word.lower()
    forms = {w}
    if w.endswith("ies"):
        forms.add(w[:-3] + "y")
    if w.endswith("es"):
        forms.add(w[:-2])
    if w.endswith("s"):
        forms.add(w[:-1])
    return forms


def label_words(label: str) -> frozenset[str]:
    """The words of an answer's label that a student may write after the number, singular forms too.

    >>> sorted(label_words("time of one mini-batch, in slots"))
    ['mini-batch', 'slot', 'slots', 'time']
    """
    out: set[str] = set()
    for word in _LABEL_WORD.findall(label):
        if len(word) > 1 and word.lower() not in _NOT_UNITS:
            out |= _forms(word)
    return frozenset(out)


def _without_label_word(value: str, label: str) -> str:
    """*value* without a trailing word of *label* (``"93 slots"`` -> ``"93"``); as it is otherwise."""
    found = _TRAILING_WORD.fullmatch(value)
    if found is None or not _forms(found["word"]) & label_words(label):
        return value
    return found["number"]


@lru_cache(maxsize=262144)
def _slipped(key: tuple[str, tuple[tuple[str, str], ...]], slip: Slip) -> Mapping[str, Any] | None:
    """The answers of the example worked with *slip*, for the givens in *key* (see ``Variant.key``)."""
    example = get_example(key[0])
    values, _ = _answers(*key)
    try:
        worked = example.run(values=values, slip=slip, quiet=True)
    except (CostmodelError, ArithmeticError, ValueError):
        return None
    return {k: a.value for k, a in worked.answers.items()}


@lru_cache(maxsize=65536)
def _author_slip(slip: AuthorSlip, key: tuple[str, tuple[tuple[str, str], ...]], name: str) -> Any:
    """The value an author's slip gives for the givens in *key* (see ``Variant.key``)."""
    values, answers = _answers(*key)
    return slip.wrong(answers[name].value, values)


def _formula_values(exercise: Exercise, variant: Variant, name: str) -> list[tuple[str, str, Any]]:
    out = [(slip.id, slip.message, _author_slip(slip, variant.key, name))
           for slip in exercise.answer(name).slips]
    for mistake in exercise.worked_example.slips:
        for how_variant in FORMULA_SLIPS[mistake]:
            answers = _slipped(variant.key, Slip(mistake, how_variant))
            if answers is not None and name in answers:
                how = MISTAKES[mistake] + (f" ({how_variant})" if how_variant else "")
                out.append((mistake, how, answers[name]))
    return out


def known_factors(exercise: Exercise, variant: Variant, name: str) -> list[float]:
    """The factors by which each single known slip scales the right value of answer *name*
    (value slips of its dimension, and each formula slip's value over the right one)."""
    spec = exercise.answer(name)
    answer = variant.answers[name]
    expected = answer.value
    if isinstance(expected, str) or not expected:
        return []
    allow = _applicable(exercise, spec, answer.kind, variant)
    out = [float(f) for m, f, _ in value_slips(dimension_of(answer.kind), spec.unit) if m in allow]
    out += [float(v) / float(expected) for m, _, v in _formula_values(exercise, variant, name)
            if m in allow and isinstance(v, (int, float, Fraction)) and v]
    return out


def grade_answer(exercise: Exercise, submission: Submission, *,
                 partial: Mapping[str, Fraction] | None = None) -> Grade:
    """Grade one answer against its variant of *exercise* (``partial`` overrides the exercise's credit)."""
    spec = exercise.answer(submission.name)
    variant: Variant = exercise.variant(submission.seed)
    answer = variant.answers[spec.name]
    kind, expected = answer.kind, answer.value
    tolerance = spec.tolerance_for(kind)
    shown_expected = spec.shown(expected, kind)
    given_text = submission.value if isinstance(submission.value, str) else real(submission.value)
    base = Grade(submission=submission, correct=False, score=Fraction(0), max_score=spec.points,
                 expected=shown_expected, given=str(given_text), name=spec.name)
    if kind.name == "formula":
        return _grade_formula(submission, spec, expected, partial, base, powers_of_two=exercise.powers_of_two)
    try:
        given, dimension = parse_given(submission.value, spec, kind, answer.label,
                                       whole=spec.precision(kind, expected) == "exact integer")
    except InputError as e:
        return replace(base, correct=False, score=Fraction(0), error=str(e))
    want = "name" if kind is NAME else dimension_of(kind)
    if dimension != want:
        kinds = f"{submission.value} is {article(dimension)}; the answer is {article(want)}"
        d = Diagnosis(("wrong-unit",), f"{kinds} ({shown_expected})", hint=kinds)
        return replace(base, correct=False, score=spec.points * _credit(("wrong-unit",), spec, partial),
                       diagnosis=(d,))

    def accepts(s: Any, t: Any) -> bool:
        return tolerance.accepts(s, t, scale=spec.scale)

    if accepts(given, expected):
        return replace(base, correct=True, score=spec.points)
    rtol = _diagnosis_rtol(tolerance)

    def near(s: Any, t: Any) -> bool:
        if isinstance(t, str) or isinstance(s, str):
            return accepts(s, t)
        return abs(s - t) <= rtol * abs(t) if rtol else s == t

    found = diagnose(given, expected, dimension=want, accepts=near, unit=spec.unit,
                     allowed=_applicable(exercise, spec, kind, variant),
                     formula_values=_formula_values(exercise, variant, spec.name))
    found = _hinted(found, spec)
    return replace(base, correct=False, score=spec.points * _diagnosed_credit(found, spec, partial),
                   diagnosis=tuple(found))


def _hinted(found: list[Diagnosis], spec: AnswerSpec) -> list[Diagnosis]:
    """Each diagnosis with its hint: the kinds of its slips, without a factor or a value."""
    hints = {slip.id: slip.hint for slip in spec.slips if slip.hint}
    return [replace(d, hint=hint(d.mistakes, hints)) for d in found]


def _applicable(exercise: Exercise, spec: AnswerSpec, kind: Kind, variant: Variant) -> frozenset[str]:
    """The mistakes that can occur in this answer (:func:`applicable`), the author's own too; by
    default bits for bytes in a time only where the time comes from a rate (a bandwidth, a β): a
    sum of start-ups has no byte to read as a bit."""
    own = {slip.id for slip in spec.slips}  # the author's own mistakes always apply
    dimension = dimension_of(kind)
    allowed = applicable(dimension, exercise.worked_example.slips, spec.mistakes) | own
    if spec.mistakes is None and dimension == "time" and "bits-bytes" in allowed \
            and not _rated(variant.key, spec.name):
        allowed -= {"bits-bytes"}
    return allowed


@lru_cache(maxsize=65536)
def _rated(key: tuple[str, tuple[tuple[str, str], ...]], name: str) -> bool:
    """Whether answer *name* of the example worked for the givens in *key* (see ``Variant.key``) comes
    from one of its rates: it changes when a rate or a time per byte given is doubled (or cannot be
    worked so)."""
    example = get_example(key[0])
    values, answers = _answers(*key)
    for given in example.givens:
        if given.kind not in (RATE, INVERSE_RATE) or not isinstance(values.get(given.name), (int, Fraction)):
            continue
        try:
            worked = example.run(values={**values, given.name: 2 * values[given.name]}, quiet=True)
        except (CostmodelError, ArithmeticError, ValueError):
            return True  # cannot tell: the slip stays possible
        if name not in worked.answers or worked.answers[name].value != answers[name].value:
            return True
    return False


def _diagnosed_credit(found: list[Diagnosis], spec: AnswerSpec,
                      partial: Mapping[str, Fraction] | None) -> Fraction:
    """Partial credit for one unambiguous single slip only: never for a guess or a chain of two."""
    if len(found) != 1 or found[0].ambiguous or len(found[0].mistakes) != 1:
        return Fraction(0)
    return _credit(found[0].mistakes, spec, partial)


def _formula_slips(expected: Any) -> list[tuple[tuple[str, ...], str, Any]]:
    """The formula a student gets with each slip, applied to the expected formula itself."""
    import sympy

    from costmodel import symbols as s

    def log_as(f: Any) -> Any:
        return expected.replace(s.lg, f).replace(s.clg, f).replace(s.flg, f)

    return [
        (("alpha-only",), MISTAKES["alpha-only"], expected.subs({s.BETA: 0, s.GAMMA: 0})),
        (("beta-only",), MISTAKES["beta-only"], expected.subs(s.ALPHA, 0)),
        (("p-for-log-p",), MISTAKES["p-for-log-p"], log_as(lambda x: x)),
        (("log-base",), MISTAKES["log-base"] + " (ln)", log_as(sympy.log)),
        (("log-base",), MISTAKES["log-base"] + " (log10)", log_as(lambda x: sympy.log(x, 10))),
        (("own-chunk",), MISTAKES["own-chunk"], expected * s.p / (s.p - 1)),
        (("factor-two",), "twice the right formula", 2 * expected),
        (("factor-two",), "half the right formula", expected / 2),
    ]


def _grade_formula(submission: Submission, spec: AnswerSpec, expected: Any,
                   partial: Mapping[str, Fraction] | None, base: Grade, *,
                   powers_of_two: bool = False) -> Grade:
    """A symbolic answer: parsed by the restricted grammar, compared on the exercise's domain (p a power
    of two where it says so; see :func:`costmodel.exercises.symbolic.equivalent`), slips tried."""
    from costmodel.exercises.symbolic import equivalent, undefined_in_domain
    from costmodel.expressions import parse_expression

    try:
        given = parse_expression(str(submission.value))
    except InputError as e:
        return replace(base, correct=False, score=Fraction(0), error=str(e))
    undefined = undefined_in_domain(str(submission.value), expected, powers_of_two=powers_of_two)
    if undefined is not None:  # 2(p − 1)(p − 2)/(p − 2) at p = 2: sympy cancels it when it reads it
        return replace(base, correct=False, score=Fraction(0), error=undefined)
    if equivalent(given, expected, powers_of_two=powers_of_two):
        return replace(base, correct=True, score=spec.points)
    allowed = set(MISTAKES if spec.mistakes is None else spec.mistakes)
    found, seen = [], set()
    for mistakes, message, formula in _formula_slips(expected):
        if set(mistakes) <= allowed and mistakes not in seen and formula != expected \
                and equivalent(given, formula, powers_of_two=powers_of_two):
            seen.add(mistakes)
            found.append(Diagnosis(mistakes, sentence(message)))
    found = marked(_hinted(found, spec))
    return replace(base, correct=False, score=spec.points * _diagnosed_credit(found, spec, partial),
                   diagnosis=tuple(found))


def _diagnosis_rtol(tolerance: Tolerance) -> float:
    """How close a slip's value must be: the answer's relative tolerance, kept within 0.2 %–0.5 %.

    Wide enough for a student's rounding, narrow enough that two slips whose
    factors differ by a few per cent (MiB against GiB) are told apart; 0 for
    exact answers.
    """
    if tolerance.exact:
        return 0.0
    rtol = float(tolerance.rtol)
    if tolerance.sigfigs is not None:
        rtol = 0.5 * 10.0 ** (1 - tolerance.sigfigs)
    return min(max(rtol, 0.002), 0.005)


def _credit(mistakes: Iterable[str], spec: AnswerSpec, partial: Mapping[str, Fraction] | None) -> Fraction:
    table = {**(spec.partial or {}), **(partial or {})}
    return min((table.get(m, Fraction(0)) for m in mistakes), default=Fraction(0))


PARALLEL_FROM = 2000
"""Batches at least this large are graded by several processes (where ``fork`` is available)."""


def check(submissions: Iterable[Submission], *, bank: Bank | None = None,
          partial: Mapping[str, Fraction] | None = None, path: str = "",
          jobs: int | None = None) -> GradeReport:
    """Grade every submission; an entry that cannot be graded is reported with its error, not raised.

    *jobs* processes grade a large batch (default: one per CPU from :data:`PARALLEL_FROM` answers
    on, where the ``fork`` start method exists; 1 grades in this process).  The grades, their order
    and the totals are the same either way.
    """
    bank = bank if bank is not None else load_bank()
    batch, notes = _once([_current_id(s, bank) for s in submissions])  # old ids warn here, not in workers
    workers = _workers(jobs, len(batch))
    grades = _grade_parallel(batch, bank, partial, workers) if workers > 1 else \
        [_grade_one(s, bank, partial) for s in batch]
    students: dict[str, tuple[Fraction, Fraction]] = {}
    for s, grade in zip(batch, grades, strict=True):
        if s.student is not None:
            got, out_of = students.get(s.student, (Fraction(0), Fraction(0)))
            students[s.student] = (got + grade.score, out_of + grade.max_score)
    return GradeReport(tuple(grades), path=path, students=students, notes=notes)


def _once(batch: list[Submission]) -> tuple[list[Submission], tuple[str, ...]]:
    """Each question answered once: a student's second answer to the same exercise, seed and answer
    name is left out (the first is graded), and an answer without a seed is said to be graded against
    the exercise's own numbers; both are reported in the notes."""
    first: dict[tuple[Any, ...], Submission] = {}
    kept: list[Submission] = []
    notes: list[str] = []
    unseeded: list[Submission] = []
    for s in batch:
        where = f"line {s.line}: " if s.line else ""
        if s.error is None:
            key = (s.student, s.exercise, s.seed, s.name)
            if key in first and _blank(first[key]) and not _blank(s):
                at = f"line {first[key].line}" if first[key].line else "the first entry"
                name = s.exercise + (f": {s.name}" if s.name else "")
                notes.append(f"{where}{name} graded here; the blank entry at {at} is ignored")
                kept[next(i for i, k in enumerate(kept) if k is first[key])] = s
                unseeded = [s if u is first[key] else u for u in unseeded]
                first[key] = s
                continue
            if key in first:
                at = f" (line {first[key].line})" if first[key].line else ""
                name = s.exercise + (f": {s.name}" if s.name else "")
                notes.append(f"{where}second answer to {name} ignored; the first{at} is graded")
                continue
            first[key] = s
            if s.seed is None:
                unseeded.append(s)
        kept.append(s)
    if unseeded:
        lines = [str(s.line) for s in unseeded if s.line]
        where = (f"line {lines[0]}: " if len(lines) == 1 else f"lines {', '.join(lines)}: ") if lines else ""
        notes.insert(0, f"{where}no seed: graded against the exercise's own numbers")
    return kept, tuple(notes)


def _blank(s: Submission) -> bool:
    """An entry left as a template wrote it: an empty string for its value."""
    return isinstance(s.value, str) and not s.value.strip()


def _current_id(s: Submission, bank: Bank) -> Submission:
    current = bank.resolve(s.exercise)
    return s if current == s.exercise else replace(s, exercise=current)


def _grade_one(s: Submission, bank: Bank, partial: Mapping[str, Fraction] | None) -> Grade:
    """Grade one answer in isolation: whatever goes wrong scores this answer 0 with a message,
    and the other answers are graded."""
    try:
        if s.error is not None:
            raise InputError(s.error)
        return grade_answer(bank.get(s.exercise), s, partial=partial)
    except InputError as e:
        error = str(e)
    except (ArithmeticError, ValueError, TypeError, RecursionError, MemoryError) as e:
        error = f"this answer could not be graded ({type(e).__name__}: {str(e)[:120]}); it scores 0"
    return Grade(submission=s, correct=False, score=Fraction(0), max_score=_points(s, bank),
                 given=str(s.value)[:200] if s.value is not None else "", name=s.name, error=error)


def _points(s: Submission, bank: Bank) -> Fraction:
    """What the question *s* answers is worth: 0 when the entry names no question of the bank."""
    if s.error is not None:
        return Fraction(0)
    try:
        return bank.get(s.exercise).answer(s.name).points
    except InputError:
        return Fraction(0)


def _workers(jobs: int | None, count: int) -> int:
    import multiprocessing
    import os

    if jobs is not None:
        positive(jobs, "jobs", expected="a positive whole number")
    elif count < PARALLEL_FROM:
        return 1
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return min(jobs or os.cpu_count() or 1, max(1, count // 100))


_BATCH: tuple[Bank, Mapping[str, Fraction] | None] | None = None


def _grade_chunk(chunk: list[tuple[int, Submission]]) -> list[tuple[int, Grade]]:
    assert _BATCH is not None
    bank, partial = _BATCH
    return [(i, _grade_one(s, bank, partial)) for i, s in chunk]


def _grade_parallel(batch: list[Submission], bank: Bank, partial: Mapping[str, Fraction] | None,
                    workers: int) -> list[Grade]:
    """Grade in *workers* forked processes; answers to one exercise go to the same process, so that
    its variants and slips are worked once there."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _BATCH  # noqa: PLW0603 - inherited by the forked workers, never pickled
    order = sorted(range(len(batch)), key=lambda i: (batch[i].exercise, batch[i].seed or 0))
    size = -(-len(order) // (workers * 4))
    chunks = [[(i, batch[i]) for i in order[k:k + size]] for k in range(0, len(order), size)]
    _BATCH = (bank, partial)
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            done = [pair for part in pool.map(_grade_chunk, chunks) for pair in part]
    finally:
        _BATCH = None
    grades: list[Grade | None] = [None] * len(batch)
    for i, grade in done:
        grades[i] = grade
    return grades  # type: ignore[return-value]
