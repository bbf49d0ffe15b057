"""Exercise files: TOML data, read and checked key by key, never executed.

The bank shipped with costmodel lives in ``costmodel/exercises/bank/`` (also
reachable as ``exercises/`` at the top of the repository); instructors add
their own files or folders with ``--exercises PATH``.  One file holds any
number of exercises::

    [[exercise]]
    id = "ring-bytes"                 # unique, lower case, digits and dashes
    topic = "rounds-and-bytes"
    title = "Bytes each worker sends in ring all-reduce"
    example = "ring-bytes"            # the worked example that computes it
    source = "Patarasuk & Yuan 2009"  # optional: where its numbers or formulas come from
    formerly = "old-id"               # optional: the id it had; still accepted, with a warning,
                                      # and its variants are drawn as before (handouts keep their numbers)
    domain = { p = "powers of two" }  # optional: p is a power of two (its formulas are compared there,
                                      # and every p it gives is checked to be one); default: any p ≥ 1
    statement = "A ring all-reduce runs on {p} workers over {n}. ..."

    [exercise.defaults]               # optional: the exercise's own numbers
    p = "8"
    n = "64 MB"

    [exercise.parameters]             # the givens that vary per student
    p = { choices = [4, 8, 16, 32] }
    n = { from = "16 MB", to = "512 MB", step = "16 MB" }
    sizes = { from = 100, to = 900, step = 50, length = 3 }   # a list given

    [[exercise.answer]]
    name = "sent"                     # an answer of the example
    unit = "MB"                       # the unit it is graded and shown in
    rtol = 0.01                       # or atol = "1 MB", sigfigs = 3, exact = true
    points = 1
    mistakes = ["factor-two", "own-chunk"]   # optional: the mistakes that can occur (default: the
                                             # example's formula slips and mistakes.VALUE_SLIPS)
    partial = { binary-prefix = 0.5 }        # optional: credit for a diagnosed slip

    [[exercise.answer.slip]]          # optional: a mistake of the author's own
    id = "all-workers"
    factor = "p"                      # or value = "n": formulas of the givens and `answer`
    message = "the bytes of all p workers together"
    hint = "the bytes of every worker counted"   # optional: what a student is told when expected
                                      # values are hidden (no digit: the kind of slip, not its factor)
    credit = 0.25                     # optional

``{name}`` in a statement is replaced by the value of that given as the
student sees it; nothing else in the text is interpreted.

Authoring mistakes are caught when a file is read, naming file and line: an
unknown key, given, placeholder or answer name, a non-boolean ``exact``, a unit
whose dimension is not the answer's, and an exercise whose answers cannot be
computed for its own numbers or, for files other than the shipped bank (which
the test suite checks), for seeds :data:`LINT_SEEDS`.  :func:`lint_exercises`
lists every such problem of a file instead of stopping at the first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from costmodel._files import read_text
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.exact import parse_number
from costmodel.examples import get as get_example
from costmodel.examples.kinds import COUNT, COUNTS, NAME, NUMBERS
from costmodel.exercises.mistakes import MISTAKES, AuthorSlip
from costmodel.exercises.model import (
    DOMAINS,
    PLACEHOLDER,
    POWERS_OF_TWO,
    AnswerSpec,
    Exercise,
    Parameter,
    Tolerance,
    article,
)
from costmodel.renames import resolve
from costmodel.tomlfile import header_lines, loads
from costmodel.units import parse_quantity, unit_of

__all__ = ["LINT_SEEDS", "Bank", "exercise_files", "lint_exercises", "load_bank", "parse_exercises"]

_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_EXERCISE_KEYS = {"id", "topic", "title", "example", "source", "statement", "defaults", "parameters",
                  "answer", "formerly", "domain"}
_PARAMETER_KEYS = {"choices", "from", "to", "step", "length"}
_ANSWER_KEYS = {"name", "unit", "rtol", "atol", "sigfigs", "exact", "points", "mistakes", "partial", "slip"}
_SLIP_KEYS = {"id", "factor", "value", "message", "hint", "credit"}
_MAX_CHOICES = 10_000
_MAX_LENGTH = 64
_UNIT_KINDS = ("size", "time", "rate", "inverse rate")

LINT_SEEDS = range(20)
"""The seeds whose variants are computed when a file is checked (the exercise's own numbers too)."""


class _AnswerError(InputError):
    """A problem of one answer of an exercise, reported at that answer's own line (*answer*: its index)."""

    def __init__(self, message: str, *, answer: int) -> None:
        super().__init__(message)
        self.answer = answer


class Bank:
    """Exercises by id, in file order."""

    def __init__(self, exercises: Iterable[Exercise]) -> None:
        self._by_id: dict[str, Exercise] = {}
        for exercise in exercises:
            if exercise.id in self._by_id:
                other = self._by_id[exercise.id].path
                raise ParseError(f"exercise id {exercise.id!r} is also defined in {other}",
                                 path=exercise.path)
            self._by_id[exercise.id] = exercise
        self._renamed = {e.formerly: e.id for e in self._by_id.values() if e.formerly}
        for old, new in self._renamed.items():
            if old in self._by_id:
                raise ParseError(f"exercise {new!r} was formerly {old!r}, which is also an exercise id",
                                 path=self._by_id[new].path)

    def __iter__(self) -> Any:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, exercise_id: object) -> bool:
        return exercise_id in self._by_id

    def resolve(self, exercise_id: str) -> str:
        """The current id of *exercise_id*: itself, or the new id of a renamed exercise (with a warning)."""
        return resolve("exercise", exercise_id, self._renamed)

    def get(self, exercise_id: str) -> Exercise:
        """The exercise *exercise_id*; a former id still finds it, with a deprecation warning."""
        try:
            return self._by_id[self.resolve(exercise_id)]
        except KeyError:
            raise UnknownNameError("exercise", exercise_id, self._by_id) from None

    def topics(self) -> list[str]:
        return sorted({e.topic for e in self})


def exercise_files(path: Path) -> list[Path]:
    """The exercise files *path* names: itself, or the ``*.toml`` files of a folder, sorted."""
    if path.is_dir():
        return sorted(path.glob("*.toml"))
    if path.is_file():
        return [path]
    raise InputError(f"{str(path)!r} is not a file or folder of exercises")


@lru_cache(maxsize=8)
def _load(extra: tuple[str, ...], builtin: bool) -> Bank:
    exercises: list[Exercise] = []
    if builtin:
        folder = resources.files("costmodel.exercises") / "bank"
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                content = entry.read_text(encoding="utf-8")
                exercises += parse_exercises(content, path=f"exercises/{entry.name}", seeds=None)
    for name in extra:
        for file in exercise_files(Path(name)):
            content = read_text(file, what="exercises")
            exercises += parse_exercises(content, path=str(file))
    return Bank(exercises)


def load_bank(paths: Iterable[str | Path] = (), *, builtin: bool = True) -> Bank:
    """The shipped exercises (unless *builtin* is false) and those in *paths* (files or folders)."""
    return _load(tuple(str(p) for p in paths), builtin)


def parse_exercises(content: str, *, path: str,
                    seeds: Iterable[int] | None = LINT_SEEDS) -> list[Exercise]:
    """Read the exercises of one file (see the module docstring for the format); the first problem
    found is raised, after the answers of each exercise are computed for its own numbers and *seeds*
    (``None``: nothing is computed, as for the shipped bank, whose variants the tests compute)."""
    exercises, problems = _read(content, path, None if seeds is None else tuple(seeds))
    if problems:
        raise problems[0]
    return exercises


def lint_exercises(content: str, *, path: str,
                   seeds: Iterable[int] = LINT_SEEDS) -> tuple[list[Exercise], list[ParseError]]:
    """The good exercises of one file, and every problem of the others, each naming file and line."""
    return _read(content, path, tuple(seeds))


def _read(content: str, path: str, seeds: tuple[int, ...] | None) -> tuple[list[Exercise], list[ParseError]]:
    try:
        data = loads(content, path=path)
    except ParseError as e:
        return [], [e]
    unknown = set(data) - {"exercise"}
    if unknown:
        return [], [ParseError(f"unknown table {sorted(unknown)[0]!r}; an exercise file holds [[exercise]] "
                               "tables", path=path)]
    tables = data.get("exercise", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        return [], [ParseError("exercises must be [[exercise]] tables", path=path)]
    lines = header_lines(content, "exercise")
    answer_lines = header_lines(content, "exercise.answer")
    counts = [len(t["answer"]) if isinstance(t.get("answer"), list) else 0 for t in tables]
    if sum(counts) != len(answer_lines):
        answer_lines = []  # answers written some other way: name the exercise's line instead
    exercises, problems = [], []
    for i, table in enumerate(tables):
        line = lines[i] if i < len(lines) else None
        first = sum(counts[:i])
        own = answer_lines[first:first + counts[i]] if answer_lines else []
        name = table.get("id", i + 1)
        try:
            exercise = _exercise(table, path)
        except InputError as e:
            where = own[e.answer] if isinstance(e, _AnswerError) and own else line
            problems.append(ParseError(f"exercise {name!r}: {e}", path=path, line=where))
            continue
        found = _verify(exercise, table.get("statement", ""), seeds)
        problems += [ParseError(f"exercise {name!r}: {message}", path=path,
                                line=own[k] if k is not None and own else line) for k, message in found]
        if not found:
            exercises.append(exercise)
    return exercises, problems


def _verify(exercise: Exercise, statement: str,
            seeds: tuple[int, ...] | None) -> list[tuple[int | None, str]]:
    """The problems only the example can reveal, as (answer index or None, message): unknown
    placeholders and answer names, units of the wrong dimension, variants that cannot be computed."""
    example = exercise.worked_example
    givens = {g.name for g in example.givens}
    problems: list[tuple[int | None, str]] = []
    for placeholder in dict.fromkeys(PLACEHOLDER.findall(statement)):
        if placeholder not in givens:
            problems.append((None, f"the statement's {{{placeholder}}} is not a given of example "
                                   f"{example.name!r} ({', '.join(sorted(givens))})"))
    if seeds is None:
        return problems
    try:
        answers = exercise.variant(None).answers
    except Exception as e:  # whatever the example raises, the author needs to hear it
        return [*problems, (None, f"its answers cannot be computed for its own numbers: {_why(e)}")]
    for k, spec in enumerate(exercise.answers):
        if spec.name not in answers:
            problems.append((k, f"answer {spec.name!r} is not an answer of example {example.name!r} "
                                f"({', '.join(answers)})"))
            continue
        kind = answers[spec.name].kind
        dimension = unit_of(spec.unit)[0] if spec.unit else "number"
        want = kind.name if kind.name in _UNIT_KINDS else "number"
        if spec.unit and dimension != want:
            fix = f'e.g. unit = "{_UNIT_EXAMPLE[want]}"' if want in _UNIT_EXAMPLE else "leave unit out"
            problems.append((k, f"answer {spec.name!r}: unit {spec.unit!r} is {article(dimension)}, but the "
                                f"answer is {article(want)} ({fix})"))
    for seed in seeds:
        try:
            exercise.variant(seed)
        except Exception as e:  # as above
            problems.append((None, f"its answers cannot be computed for seed {seed}: {_why(e)}"))
            break
    return problems


_UNIT_EXAMPLE = {"size": "MB", "time": "us", "rate": "GB/s", "inverse rate": "ns/B"}


def _why(error: Exception) -> str:
    return str(error) if isinstance(error, InputError) else f"{type(error).__name__}: {error}"


def _text(table: dict[str, Any], key: str, *, required: bool = True, limit: int = 4000) -> str:
    value = table.get(key, None if required else "")
    if value is None:
        raise InputError(f"{key} is missing")
    if not isinstance(value, str) or len(value) > limit:
        raise InputError(f"{key} must be a string of at most {limit} characters")
    return value


def _exercise(table: dict[str, Any], path: str) -> Exercise:
    exercise = _read_exercise(table, path)
    if any(spec.slips for spec in exercise.answers):
        _check_slips(exercise)
    return exercise


def _check_slips(exercise: Exercise) -> None:
    """Every author's slip must give a number for the exercise's own numbers."""
    variant = exercise.variant(None)
    for k, spec in enumerate(exercise.answers):
        expected = variant.answers[spec.name].value
        for slip in spec.slips:
            problem = None
            if isinstance(expected, str) or hasattr(expected, "free_symbols"):
                problem = "a slip needs an answer that is a number"
            elif slip.wrong(expected, variant.values) is None:
                problem = f"{slip.factor or slip.value!r} has no finite value for the exercise's own numbers"
            if problem is not None:
                raise _AnswerError(f"answer {spec.name}: slip {slip.id}: {problem}", answer=k)


def _read_exercise(table: dict[str, Any], path: str) -> Exercise:
    unknown = set(table) - _EXERCISE_KEYS
    if unknown:
        raise InputError(f"unknown key {sorted(unknown)[0]!r}; expected {', '.join(sorted(_EXERCISE_KEYS))}")
    ident = _text(table, "id", limit=64)
    if not _ID.fullmatch(ident):
        raise InputError(f"id {ident!r} must be lower case letters, digits and dashes")
    formerly = _text(table, "formerly", required=False, limit=64)
    if formerly and (not _ID.fullmatch(formerly) or formerly == ident):
        raise InputError(f"formerly {formerly!r} must be another id: lower case letters, digits and dashes")
    example = get_example(_text(table, "example", limit=64))
    defaults = table.get("defaults", {})
    if not isinstance(defaults, dict):
        raise InputError("defaults must be a table of given = value")
    for name, value in defaults.items():
        example.given(name).parse(value)
    parameters = table.get("parameters", {})
    if not isinstance(parameters, dict):
        raise InputError("parameters must be a table")
    answers = table.get("answer")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, dict) for a in answers):
        raise InputError("an exercise needs at least one [[exercise.answer]] table")
    drawn = tuple(_parameter(name, spec, example) for name, spec in parameters.items())
    return Exercise(
        id=ident,
        topic=_text(table, "topic", limit=64),
        title=_text(table, "title", limit=200),
        example=example.name,
        statement=_text(table, "statement"),
        parameters=drawn,
        answers=tuple(_indexed(k, a, example) for k, a in enumerate(answers)),
        source=_text(table, "source", required=False, limit=200),
        defaults={k: str(v) for k, v in defaults.items()},
        path=path,
        formerly=formerly,
        domain=_domain(table.get("domain", {}), example, defaults, drawn),
    )


def _domain(domain: Any, example: Any, defaults: dict[str, Any],
            drawn: tuple[Parameter, ...]) -> dict[str, str]:
    """The exercise's ``domain`` table: what p ranges over in its formulas, and in its numbers, each of
    which the exercise can give (its own and every one drawn) checked to be in it."""
    if not isinstance(domain, dict):
        raise InputError('domain must be a table such as domain = { p = "powers of two" }')
    for name, what in domain.items():
        if name not in DOMAINS:
            raise InputError(f"domain: {name!r} cannot be declared; declare p (p = \"{POWERS_OF_TWO}\")")
        if what not in DOMAINS[name]:
            choices = " or ".join(f'"{d}"' for d in DOMAINS[name])
            raise InputError(f"domain: p = {what!r} is not {choices}")
    if domain.get("p") == POWERS_OF_TWO and "p" in {g.name for g in example.givens}:
        given = example.given("p")
        for value in _values(given, defaults, drawn):
            if not (Fraction(value).denominator == 1 and value >= 1 and int(value) & (int(value) - 1) == 0):
                raise InputError(f"domain: p is a power of two, but the exercise can give p = {value}")
    return dict(domain)


def _values(given: Any, defaults: dict[str, Any], drawn: tuple[Parameter, ...]) -> list[Any]:
    """Every value the exercise can give *given*: its own and each one its parameter can draw."""
    own = defaults.get(given.name, given.default)
    values = [given.parse(own)] if own is not None else []
    for parameter in drawn:
        if parameter.name != given.name:
            continue
        if parameter.choices:
            values += [given.parse(c) for c in parameter.choices]
        else:
            assert parameter.start is not None and parameter.stop is not None and parameter.step is not None
            steps = int((parameter.stop - parameter.start) / parameter.step)
            values += [parameter.start + parameter.step * k for k in range(steps + 1)]
    return values


def _parameter(name: str, spec: Any, example: Any) -> Parameter:
    given = example.given(name)
    if not isinstance(spec, dict) or not spec:
        raise InputError(f"parameter {name}: give choices = [...] or from/to/step")
    unknown = set(spec) - _PARAMETER_KEYS
    if unknown:
        raise InputError(f"parameter {name}: unknown key {sorted(unknown)[0]!r}")
    length = spec.get("length")
    listed = given.kind in (NUMBERS, COUNTS)
    if listed != (length is not None):
        raise InputError(f"parameter {name}: length is {'required' if listed else 'only'} for a list given")
    if length is not None and (not isinstance(length, int) or not 1 <= length <= _MAX_LENGTH):
        raise InputError(f"parameter {name}: length must be an integer from 1 to {_MAX_LENGTH}")
    element = given.kind if not listed else (COUNT if given.kind is COUNTS else None)
    parse = element.parse if element is not None else parse_number
    if "choices" in spec:
        if set(spec) - {"choices", "length"}:
            raise InputError(f"parameter {name}: give either choices or from/to/step, not both")
        choices = spec["choices"]
        if not isinstance(choices, list) or not choices or len(choices) > _MAX_CHOICES:
            raise InputError(f"parameter {name}: choices must be a non-empty list")
        for choice in choices:
            if isinstance(choice, bool) or not isinstance(choice, (str, int, float)):
                raise InputError(f"parameter {name}: choice {choice!r} is not a number or a string")
            parse(choice) if listed else given.parse(choice)
        return Parameter(name, given.kind, choices=tuple(choices), length=length)
    if given.kind is NAME:
        raise InputError(f"parameter {name}: a name given takes choices = [...]")
    try:
        start, stop, step = (parse(spec[k]) for k in ("from", "to", "step"))
    except KeyError as e:
        raise InputError(f"parameter {name}: {e.args[0]} is missing") from None
    if not step > 0 or stop < start or (stop - start) / step > 10**6:
        raise InputError(f"parameter {name}: need from <= to and 0 < step, with at most 10^6 steps")
    return Parameter(name, given.kind, start=Fraction(start), stop=Fraction(stop), step=Fraction(step),
                     length=length)


def _fraction(value: Any, key: str) -> Fraction:
    number = parse_number(value, what=key)
    if number < 0:
        raise InputError(f"{key} must not be negative")
    return number


def _indexed(k: int, table: dict[str, Any], example: Any) -> AnswerSpec:
    """Answer *k*, an error in it marked with *k* so that it names the answer's own line."""
    try:
        return _answer(table, example)
    except _AnswerError:
        raise
    except InputError as e:
        raise _AnswerError(str(e), answer=k) from None


def _slips(name: str, tables: Any, example: Any) -> tuple[AuthorSlip, ...]:
    """The author's own mistakes of one answer: ``[[exercise.answer.slip]]`` tables."""
    from costmodel.expressions import parse_expression

    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables) or len(tables) > 32:
        raise InputError(f"answer {name}: slips are [[exercise.answer.slip]] tables (at most 32)")
    numeric = {g.name for g in example.givens if g.kind not in (NAME, NUMBERS, COUNTS)}
    out: list[AuthorSlip] = []
    for table in tables:
        unknown = set(table) - _SLIP_KEYS
        if unknown:
            raise InputError(f"answer {name}: slip: unknown key {sorted(unknown)[0]!r}; "
                             f"expected {', '.join(sorted(_SLIP_KEYS))}")
        ident = table.get("id")
        if not isinstance(ident, str) or not _ID.fullmatch(ident) or ident in MISTAKES:
            raise InputError(f"answer {name}: slip id {ident!r} must be lower case letters, digits and "
                             "dashes, and not a built-in mistake")
        if ident in {s.id for s in out}:
            raise InputError(f"answer {name}: slip id {ident!r} is given twice")
        if ("factor" in table) == ("value" in table):
            raise InputError(f"answer {name}: slip {ident}: give either factor or value (a formula)")
        key = "factor" if "factor" in table else "value"
        formula = table[key]
        if isinstance(formula, (int, float)) and not isinstance(formula, bool):
            formula = str(formula)
        if not isinstance(formula, str):
            raise InputError(f"answer {name}: slip {ident}: {key} must be a formula such as "
                             "\"2\" or \"p/(p-1)\"")
        symbols = sorted(numeric | {"answer"})
        try:
            parse_expression(formula, {k: _symbol(k) for k in symbols})  # refuses degrees above 64 too
        except InputError as e:
            raise InputError(f"answer {name}: slip {ident}: {key}: {e} (names: "
                             f"{', '.join(symbols)})") from None
        credit = _fraction(table["credit"], f"slip {ident} credit") if "credit" in table else None
        if credit is not None and credit > 1:
            raise InputError(f"answer {name}: slip {ident}: credit is a fraction from 0 to 1")
        message = table.get("message")
        if not isinstance(message, str) or not message.strip() or len(message) > 200:
            raise InputError(f"answer {name}: slip {ident}: message is missing (a sentence for the student, "
                             "at most 200 characters)")
        hint = table.get("hint", "")
        if not isinstance(hint, str) or len(hint) > 200 or any(c.isdigit() for c in hint):
            raise InputError(f"answer {name}: slip {ident}: hint is the kind of slip in words, without a "
                             "digit (a factor or a value would tell the answer), at most 200 characters")
        out.append(AuthorSlip(ident, message, credit=credit, hint=hint.strip(), **{key: formula}))
    return tuple(out)


def _symbol(name: str) -> Any:
    import sympy

    return sympy.Symbol(f"given_{name}")


def _answer(table: dict[str, Any], example: Any) -> AnswerSpec:
    unknown = set(table) - _ANSWER_KEYS
    if unknown:
        expected = ", ".join(sorted(_ANSWER_KEYS))
        raise InputError(f"answer: unknown key {sorted(unknown)[0]!r}; expected {expected}")
    name = _text(table, "name", limit=64)
    unit = _text(table, "unit", required=False, limit=16)
    if unit:
        unit_of(unit)
    if "sigfigs" in table:
        sigfigs = table["sigfigs"]
        if isinstance(sigfigs, bool) or not isinstance(sigfigs, int) or not 1 <= sigfigs <= 15:
            raise InputError("sigfigs must be an integer from 1 to 15")
        tolerance = Tolerance(rtol=Fraction(0), sigfigs=sigfigs)
    elif not isinstance(table.get("exact", False), bool):
        raise InputError(f"answer {name}: exact must be true or false, not {table['exact']!r}")
    elif table.get("exact", False):
        tolerance = Tolerance(exact=True)
    else:
        atol = table.get("atol", 0)
        if isinstance(atol, str) and unit and any(c.isalpha() for c in atol):
            atol = parse_quantity(atol).value / unit_of(unit)[1]
        tolerance = Tolerance(rtol=_fraction(table.get("rtol", "0.01"), "rtol"), atol=_fraction(atol, "atol"))
    mistakes = table.get("mistakes")
    if mistakes is not None:
        if not isinstance(mistakes, list) or not all(m in MISTAKES for m in mistakes):
            raise InputError(f"answer {name}: mistakes must be a list drawn from {', '.join(MISTAKES)}")
        mistakes = tuple(mistakes)
    partial = table.get("partial", {})
    if not isinstance(partial, dict) or not all(k in MISTAKES for k in partial):
        raise InputError(f"answer {name}: partial must map mistakes ({', '.join(MISTAKES)}) to credit")
    credit = {k: _fraction(v, f"partial.{k}") for k, v in partial.items()}
    if any(v > 1 for v in credit.values()):
        raise InputError(f"answer {name}: partial credit is a fraction from 0 to 1")
    points = _fraction(table.get("points", 1), "points")
    slips = _slips(name, table["slip"], example) if "slip" in table else ()
    credit |= {slip.id: slip.credit for slip in slips if slip.credit is not None}
    return AnswerSpec(name=name, unit=unit, tolerance=tolerance, points=points, mistakes=mistakes,
                      partial=credit, slips=slips)
