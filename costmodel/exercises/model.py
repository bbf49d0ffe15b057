"""Exercises: a worked example, a statement, parameters to vary per student, and graded answers.

An exercise is data (a table in a TOML file, see :mod:`costmodel.exercises.bank`).
It names the worked example that computes it; its parameters say which givens
vary per student and over which values; its answers name the example's answers
with the unit to grade in and a tolerance.  Nothing is typed twice: the answer,
the worked solution and the mistakes a student can make all come from running
the example with the variant's givens.

Variants are deterministic: seed *S* of exercise *E* draws from
``random.Random("E/S")``, which does not depend on the Python process or
version (a renamed exercise draws under its former id, so its variants stay).
A drawn value is written as the student sees it (four significant digits) and
read back, so the answer is computed from the rounded value.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

from costmodel.errors import InputError
from costmodel.exact import decimal_text
from costmodel.examples import Example
from costmodel.examples import get as get_example
from costmodel.examples.kinds import COUNT, COUNTS, NUMBER, NUMBERS, Kind, show_exact
from costmodel.examples.work import Answer, Worked
from costmodel.exercises.mistakes import AuthorSlip, sentence
from costmodel.units import floor_log10, format_number, unit_of

__all__ = ["DOMAINS", "PLACEHOLDER", "POWERS_OF_TWO", "AnswerSpec", "Exercise", "Parameter", "Tolerance",
           "Variant", "article", "compact"]

POWERS_OF_TWO = "powers of two"
"""The domain of p an exercise may declare (``domain = { p = "powers of two" }``); by default p is any
whole number ≥ 1."""
DOMAINS = {"p": ("whole numbers", POWERS_OF_TWO)}
"""What an exercise's domain may say: each symbol's ranges, the default first."""

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""A given's place in a statement, ``{name}``: the bank checks them, :meth:`Exercise.render` fills them."""
_MAX_GRID = 10**6

_ARTICLE = {"size": "a size", "time": "a time", "rate": "a rate", "inverse rate": "an inverse rate",
            "number": "a plain number", "name": "a word", "percentage": "a percentage"}


def article(dimension: str) -> str:
    """A dimension of an answer with its article, as messages name it (any other word as it is).

    >>> article("inverse rate"), article("number"), article("name")
    ('an inverse rate', 'a plain number', 'a word')
    """
    return _ARTICLE.get(dimension, dimension)


@lru_cache(maxsize=65536)
def compact(value: Any, kind: Kind) -> str:
    """A value as a student reads it in a statement, in one form that the kind's parser reads back.

    >>> from costmodel.examples.kinds import SIZE, RATE
    >>> compact(Fraction(67108864), SIZE), compact(Fraction(12_500_000_000), RATE)
    ('67.11 MB', '12.5 GB/s')
    """
    return kind.show(value).split(" = ")[0].split(" (")[0]


@dataclass(frozen=True)
class Tolerance:
    """How close is right: ``|s − t| ≤ atol + rtol·|t|``, or *sigfigs* significant figures, or exact."""

    rtol: Fraction = Fraction(1, 100)
    atol: Fraction = Fraction(0)
    sigfigs: int | None = None
    exact: bool = False

    def accepts(self, given: Any, expected: Any, *, scale: Fraction = Fraction(1)) -> bool:
        """Whether *given* is right for *expected* (both in base units; *scale* is the display unit).

        >>> Tolerance(rtol=Fraction(1, 100)).accepts(Fraction(1505, 10), 150)
        True
        >>> Tolerance(sigfigs=2).accepts(Fraction(53, 100), Fraction(8, 15))
        True
        >>> Tolerance(exact=True).accepts(14, 14), Tolerance(exact=True).accepts(Fraction(29, 2), 14)
        (True, False)
        """
        if isinstance(expected, str) or isinstance(given, str):
            return isinstance(given, str) and isinstance(expected, str) and \
                given.strip().lower() == expected.strip().lower()
        if self.exact:
            return given == expected
        s, t = given / scale, expected / scale
        if self.sigfigs is not None:
            if t == 0:
                return s == 0
            unit = Fraction(10) ** (floor_log10(abs(Fraction(t))) - self.sigfigs + 1)
            return abs(Fraction(s) - Fraction(t)) <= unit / 2
        return abs(s - t) <= self.atol + self.rtol * abs(t)

    def text(self) -> str:
        """The tolerance exactly, as a manifest records it and :meth:`parse` reads it back.

        >>> Tolerance(rtol=Fraction(1, 100), atol=Fraction(1, 3)).text()
        'rtol 0.01, atol 1/3'
        >>> Tolerance.parse("rtol 0.01, atol 1/3") == Tolerance(rtol=Fraction(1, 100), atol=Fraction(1, 3))
        True
        """
        if self.exact:
            return "exact"
        if self.sigfigs is not None:
            return f"{self.sigfigs} significant figures"
        parts = [f"rtol {_exact_text(self.rtol)}"] if self.rtol else []
        parts += [f"atol {_exact_text(self.atol)}"] if self.atol else []
        return ", ".join(parts) or "exact"

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        """A tolerance written as :meth:`text` writes it: ``exact``, ``3 significant figures``, or
        ``rtol R``, ``atol A`` or both, comma-separated (A in the answer's unit).

        >>> Tolerance.parse("3 significant figures").sigfigs, Tolerance.parse("exact").exact
        (3, True)
        """
        from costmodel.exact import parse_number

        words = " ".join(str(text).split()).lower()
        if words == "exact":
            return cls(exact=True)
        figures = re.fullmatch(r"(\d{1,2}) significant figures?", words)
        if figures is not None and 1 <= int(figures[1]) <= 15:
            return cls(sigfigs=int(figures[1]))
        found: dict[str, Fraction] = {}
        for part in words.split(","):
            name, _, number = part.strip().partition(" ")
            if name not in ("rtol", "atol") or name in found or not number.strip():
                raise InputError(f"tolerance {text!r} is not exact, N significant figures, or rtol R and/or "
                                 "atol A (e.g. rtol 0.01, atol 0.5)")
            value = parse_number(number.strip(), what=name)
            if value < 0 or (name == "rtol" and value >= 1):
                bound = "from 0 to below 1" if name == "rtol" else "at least 0"
                raise InputError(f"tolerance {text!r}: {name} must be {bound}")
            found[name] = value
        return cls(rtol=found.get("rtol", Fraction(0)), atol=found.get("atol", Fraction(0)))

    def describe(self) -> str:
        if self.exact:
            return "exact"
        if self.sigfigs is not None:
            return f"{self.sigfigs} significant figures"
        parts = [f"rtol {format_number(self.rtol)}"] if self.rtol else []
        parts += [f"atol {format_number(self.atol)}"] if self.atol else []
        return ", ".join(parts) or "exact"


@dataclass(frozen=True)
class Parameter:
    """A given that varies per student: a list of *choices*, or a grid ``start..stop`` by *step*.

    For a list-valued given (numbers, counts) each element is drawn from the
    choices or grid, *length* elements in all.
    """

    name: str
    kind: Kind
    choices: tuple[Any, ...] = ()
    start: Fraction | None = None
    stop: Fraction | None = None
    step: Fraction | None = None
    length: int | None = None
    default: str | None = None

    def draw(self, rng: random.Random) -> str:
        """One value as shown to the student (text the kind parses)."""
        if self.length is not None:
            element = NUMBER if self.kind is NUMBERS else COUNT
            return ", ".join(self._one(rng, element) for _ in range(self.length))
        return self._one(rng, self.kind)

    def _one(self, rng: random.Random, kind: Kind) -> str:
        if self.choices:
            choice = self.choices[rng.randrange(len(self.choices))]
            return choice if isinstance(choice, str) else show_exact(choice)
        assert self.start is not None and self.stop is not None and self.step is not None
        steps = int((self.stop - self.start) / self.step)
        value = self.start + self.step * rng.randrange(steps + 1)
        return compact(value, kind) if kind.unit else show_exact(value)


@dataclass(frozen=True)
class AnswerSpec:
    """One graded answer: the example's answer *name*, the unit to grade in, tolerance and points."""

    name: str
    unit: str
    tolerance: Tolerance
    points: Fraction = Fraction(1)
    mistakes: tuple[str, ...] | None = None  # None: every mistake that applies
    partial: Mapping[str, Fraction] | None = None
    slips: tuple[AuthorSlip, ...] = ()  # the author's own mistakes, diagnosed as well

    @property
    def scale(self) -> Fraction:
        return unit_of(self.unit)[1] if self.unit else Fraction(1)

    def tolerance_for(self, kind: Kind) -> Tolerance:
        """Counts (rounds, steps) and words are graded exactly, whatever the file says."""
        exact = kind in (COUNT, COUNTS) or kind.name in ("name", "formula")
        return Tolerance(exact=True) if exact else self.tolerance

    def precision(self, kind: Kind, value: Any = None) -> str:
        """What counts as right, as a student reads it on a sheet: ``exact integer``, ``±1 %``, ...

        >>> wide = Tolerance(rtol=Fraction(1, 1000), atol=Fraction(1, 100))
        >>> AnswerSpec("t", "ms", wide).precision(NUMBER)
        '±(0.1 % + 0.01 ms)'
        >>> AnswerSpec("r", "", Tolerance()).precision(COUNT)
        'exact integer'
        >>> AnswerSpec("c", "kB", Tolerance(sigfigs=3)).precision(NUMBER)
        '3 significant figures'
        """
        tolerance = self.tolerance_for(kind)
        whole = isinstance(value, (int, Fraction)) and Fraction(value).denominator == 1
        if kind in (COUNT, COUNTS) or (tolerance.exact and whole and kind is NUMBER):
            return "exact integer"
        if tolerance.exact:
            return "exact"
        if tolerance.sigfigs is not None:
            return f"{tolerance.sigfigs} significant figures"
        parts = [f"{format_number(tolerance.rtol * 100)} %"] if tolerance.rtol else []
        parts += [f"{format_number(tolerance.atol)} {self.unit}".strip()] if tolerance.atol else []
        return "exact" if not parts else f"±{parts[0]}" if len(parts) == 1 else f"±({' + '.join(parts)})"

    def blank(self, label: str, kind: Kind, value: Any = None) -> str:
        """The line a sheet asks this answer with: its label, the name to answer under, unit and precision.

        >>> AnswerSpec("sent", "MB", Tolerance()).blank("bytes each worker sends", NUMBER)
        'Bytes each worker sends (answer `sent`, in MB, ±1 %)'
        """
        unit = f", in {self.unit}" if self.unit else ""
        return f"{sentence(label)} (answer `{self.name}`{unit}, {self.precision(kind, value)})"

    def shown(self, value: Any, kind: Kind) -> str:
        """*value* (base units) written in this answer's unit."""
        if isinstance(value, str) or kind.name == "formula":
            return str(value)
        if kind in (COUNT, COUNTS) or (kind is NUMBER and not self.unit):
            return show_exact(value) if not isinstance(value, float) else format_number(value)
        number = value / self.scale
        text = format_number(number, digits=6) if not isinstance(number, Fraction) or \
            number.denominator != 1 else str(number.numerator)
        return f"{text} {self.unit}".strip()


@dataclass(frozen=True)
class Variant:
    """One exercise with one seed: the givens as shown, the worked example, and the answers."""

    exercise: Exercise
    seed: int | None
    shown: Mapping[str, str]
    values: Mapping[str, Any]
    answers: Mapping[str, Answer]

    @cached_property
    def worked(self) -> Worked:
        """The example worked step by step with this variant's givens (for solutions and sheets)."""
        return _worked(*self.key)

    @property
    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What the working depends on: the example and the givens as shown (not the seed)."""
        return self.exercise.example, tuple(sorted(self.shown.items()))

    @property
    def statement(self) -> str:
        return self.exercise.render(self.shown, self.values)

    def parameters(self) -> dict[str, str]:
        """Every given of the exercise as the student reads it (drawn or fixed)."""
        return {g.name: self.shown.get(g.name) or _text(self.values[g.name], g.kind)
                for g in self.exercise.worked_example.givens}

    def expected(self, name: str) -> Any:
        return self.answers[name].value

    def to_dict(self) -> dict[str, Any]:
        answers = []
        for spec in self.exercise.answers:
            value = self.expected(spec.name)
            number = value if isinstance(value, str) else str(value) if hasattr(value, "free_symbols") \
                else _real(value / spec.scale if spec.unit else value)
            answers.append({"name": spec.name, "value": number, "unit": spec.unit,
                            "text": spec.shown(value, self.answers[spec.name].kind),
                            "tolerance": spec.precision(self.answers[spec.name].kind, value),
                            "points": _real(spec.points)})
        return {
            "id": self.exercise.id, "seed": self.seed, "topic": self.exercise.topic,
            "title": self.exercise.title, "statement": self.statement,
            "parameters": self.parameters(), "answers": answers,
            "solution": self.worked.to_dict(),
        }


def _exact_text(x: Fraction) -> str:
    """*x* as a decimal where it ends, else as a ratio: read back exactly by ``parse_number``."""
    return decimal_text(x) or f"{x.numerator}/{x.denominator}"


def _text(value: Any, kind: Kind) -> str:
    return compact(value, kind) if kind.unit else kind.show(value)


def _real(x: Any) -> Any:
    from costmodel._json import real

    return real(x)


@dataclass(frozen=True, eq=False)
class Exercise:
    """An exercise as read from its file (see :mod:`costmodel.exercises.bank` for the format)."""

    id: str
    topic: str
    title: str
    example: str
    statement: str
    parameters: tuple[Parameter, ...]
    answers: tuple[AnswerSpec, ...]
    source: str = ""
    defaults: Mapping[str, str] | None = None
    path: str = ""
    formerly: str = ""  # the id it was renamed from: variants are drawn under that id, as before
    domain: Mapping[str, str] | None = None  # what its symbols range over: {"p": "powers of two"}

    @property
    def powers_of_two(self) -> bool:
        """Whether the exercise says p is a power of two: its formulas are compared there only."""
        return (self.domain or {}).get("p") == POWERS_OF_TWO

    @property
    def worked_example(self) -> Example:
        return get_example(self.example)

    def answer(self, name: str | None) -> AnswerSpec:
        if name is None:
            if len(self.answers) > 1:
                names = ", ".join(a.name for a in self.answers)
                raise InputError(f"exercise {self.id} has several answers ({names}); "
                                 "say which with name = ...")
            return self.answers[0]
        for spec in self.answers:
            if spec.name == name:
                return spec
        from costmodel.errors import UnknownNameError

        raise UnknownNameError("answer", name, [a.name for a in self.answers],
                               context=f"of exercise {self.id}")

    def variant(self, seed: int | None = None) -> Variant:
        """The variant of *seed*; ``None`` gives the exercise's own numbers (those of its source)."""
        return _variant(self, seed)

    def render(self, shown: Mapping[str, str], values: Mapping[str, Any]) -> str:
        example = self.worked_example

        def fill(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in shown:
                return shown[name]
            return _text(values[name], example.given(name).kind)

        text = PLACEHOLDER.sub(fill, self.statement).strip()
        return "\n\n".join(" ".join(part.split()) for part in re.split(r"\n\s*\n", text))


@lru_cache(maxsize=65536)
def _variant(exercise: Exercise, seed: int | None) -> Variant:
    shown = dict(exercise.defaults or {})
    if seed is not None:
        rng = random.Random(f"{exercise.formerly or exercise.id}/{seed}")
        for parameter in exercise.parameters:
            shown[parameter.name] = parameter.draw(rng)
    values, answers = example_answers(exercise.example, tuple(sorted(shown.items())))
    return Variant(exercise, seed, shown, values, answers)


@lru_cache(maxsize=65536)
def example_answers(example_name: str, shown: tuple[tuple[str, str], ...]) -> tuple[Mapping[str, Any],
                                                                                 Mapping[str, Answer]]:
    """The givens and answers of the example for these shown givens (variants and grading): seeds
    drawing the same numbers share them, and no step is written (see :meth:`Example.run`'s *quiet*)."""
    example = get_example(example_name)
    values = example.values(dict(shown))
    return values, example.run(values=values, quiet=True).answers


@lru_cache(maxsize=1024)
def _worked(example_name: str, shown: tuple[tuple[str, str], ...]) -> Worked:
    example = get_example(example_name)
    return example.run(dict(shown))
