"""The machinery of worked examples: givens, steps, answers, and the slips students make.

An :class:`Example` is a small function that computes with the library and
records what it does on a :class:`Work` sheet: the givens with units, each step
as text, the formula it uses, the numbers substituted and the value, and the
named answers.  Running it gives a :class:`Worked`, which the command line
renders (rich, Markdown or JSON) and the grader reads its answers from.

The same function also computes what a student who makes a known mistake would
get: run with a :class:`Slip`, the sheet's helpers (:meth:`Work.lg`,
:meth:`Work.link`, :meth:`Work.cost`) apply the mistake to the formula itself
(log₂ read as ln, the β term forgotten, ...), and examples that model a
topic-specific mistake (the unweighted mean, the other bubble definition)
branch on :meth:`Work.slipped`.  That is how the grader diagnoses a wrong answer:
by re-evaluating the exercise's formula with each mistake applied.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple

from costmodel._json import real
from costmodel.errors import InputError, UnknownNameError
from costmodel.examples import kinds
from costmodel.examples.kinds import Kind
from costmodel.units import format_inverse_rate, format_time

if TYPE_CHECKING:
    from costmodel.collectives._math import MathBackend

__all__ = ["FORMULA_SLIPS", "Answer", "Example", "Given", "Slip", "Step", "Work", "Worked", "sentence"]


def sentence(text: str) -> str:
    """*text* with its first word capitalised, unless that word is a symbol (``p``, ``ρ``, ``kB``).

    >>> sentence("twice the value"), sentence("p workers"), sentence("kB and KiB confused")
    ('Twice the value', 'p workers', 'kB and KiB confused')
    >>> sentence("a rate"), sentence("all-reduce time"), sentence("α term")
    ('A rate', 'All-reduce time', 'α term')
    """
    word = text.split(" ", 1)[0].replace("-", "")
    if word != "a" and (len(word) < 2 or not word.isascii() or not word.isalpha() or not word.islower()):
        return text
    return text[:1].upper() + text[1:]


FORMULA_SLIPS: dict[str, tuple[str, ...]] = {
    "log-base": ("ln", "log10"),
    "p-for-log-p": ("",),
    "alpha-only": ("",),
    "beta-only": ("",),
    "own-chunk": ("",),
    "unweighted-mean": ("",),
    "bubble-definition": ("",),
    "zero-bookkeeping": ("",),
    "index-overhead": ("",),
    "six-n-only": ("",),
    "recompute-count": ("",),
    "achieved-for-peak": ("",),
    "roofline-sum": ("",),
    "elements-for-bytes": ("",),
    "wait-for-all": ("",),
    "no-composition": ("",),
    "batch-for-rate": ("",),
    "noise-for-sigma": ("",),
    "mean-for-max": ("",),
    "deadline-without-links": ("",),
    "second-eigenvalue": ("",),
    "gap-for-log": ("",),
}
"""Mistakes made in the formula (not in the units), with their variants; an example lists
those it models in :attr:`Example.slips`."""


class Slip(NamedTuple):
    """One mistake applied while computing: its name and, for some, a variant (``log-base``: ``ln``)."""

    mistake: str
    variant: str = ""


@dataclass(frozen=True)
class Given:
    """One input of an example: the name ``--set`` uses, a label, its kind and default."""

    name: str
    label: str
    kind: Kind
    default: Any
    symbol: str = ""

    def parse(self, value: Any) -> Any:
        if isinstance(value, (str, int)):  # text read before (variants share "64 MB")
            return _parse_text(self, value)
        return _parse(self, value)


def _parse(given: Given, value: Any) -> Any:
    try:
        return given.kind.parse(value)
    except InputError as e:
        raise InputError(f"{given.name}: {e}") from None


_parse_text = lru_cache(maxsize=65536)(_parse)


class Step(NamedTuple):
    """One line of a worked solution: what is done, the expression, the value and its kind."""

    text: str
    expression: str = ""
    value: Any = None
    kind: Kind | None = None


class Answer(NamedTuple):
    """A named result of an example (what exercises ask for)."""

    name: str
    label: str
    value: Any
    kind: Kind


def _json_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "free_symbols"):  # a sympy formula
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_json_value(v) for v in value]
    return real(value)


def show_value(value: Any, kind: Kind | None) -> str:
    """A step's value as shown to a reader (tables, sheets, ``exercise show``); a fraction with no
    short decimal gets its decimal beside it.

    >>> show_value(Fraction(1, 3), kinds.NUMBER), show_value(Fraction(3, 4), kinds.NUMBER)
    ('1/3 ≈ 0.3333', '0.75')
    """
    if value is None:
        return ""
    if kind is None:
        return value if isinstance(value, str) else kinds.show_exact(value)
    text = kind.show(value)
    if kind is kinds.NUMBER and isinstance(value, Fraction) and "/" in text:
        text += f" ≈ {float(value):.4g}"
    return text


@dataclass(frozen=True)
class Worked:
    """An example worked with one set of givens: what every renderer and the grader read."""

    name: str
    title: str
    source: str
    givens: tuple[tuple[Given, Any], ...]
    steps: tuple[Step, ...]
    answers: Mapping[str, Answer]
    principal: str
    #: worked steps that disagreed with the library's own computation (:meth:`Work.check`);
    #: empty unless the example has a bug, which the tests look for in every example they run
    disagreements: tuple[str, ...] = ()

    @property
    def answer(self) -> Answer:
        return self.answers[self.principal]

    def to_markdown(self, *, heading: str = "##") -> str:
        """The worked example as Markdown: givens, numbered steps, answers."""
        lines = [f"{heading} {self.title}", "", f"*{self.source}*" if self.source else "", "",
                 "| given | value |", "|---|---|"]
        lines += [f"| {g.label}{f' ({g.symbol})' if g.symbol else ''} | {show_value(v, g.kind)} |"
                  for g, v in self.givens]
        lines.append("")
        for i, s in enumerate(self.steps, 1):
            shown = show_value(s.value, s.kind)
            expression = f": {s.expression}" if s.expression else ""
            result = f" = **{shown}**" if shown and s.expression else (f": **{shown}**" if shown else "")
            lines.append(f"{i}. {s.text}{expression}{result}")
        lines.append("")
        lines += [f"**{sentence(a.label)}: {show_value(a.value, a.kind)}**  "
                  for a in self.answers.values()]
        return "\n".join(lines).rstrip() + "\n"

    def _repr_markdown_(self) -> str:
        """The worked example as a notebook shows it: :meth:`to_markdown`."""
        return self.to_markdown()

    def to_dict(self) -> dict[str, Any]:
        def answer(a: Answer) -> dict[str, Any]:
            return {"name": a.name, "label": a.label, "value": _json_value(a.value), "unit": a.kind.unit,
                    "text": show_value(a.value, a.kind)}

        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "givens": [{"name": g.name, "label": g.label, "value": _json_value(v), "unit": g.kind.unit,
                        "text": show_value(v, g.kind)} for g, v in self.givens],
            "steps": [{"text": s.text, "expression": s.expression, "value": _json_value(s.value),
                       "unit": s.kind.unit if s.kind else "", "shown": show_value(s.value, s.kind)}
                      for s in self.steps],
            "answer": answer(self.answer),
            "answers": [answer(a) for a in self.answers.values()],
        }


class Cost(NamedTuple):
    """The α–β–γ time of one algorithm, as :meth:`Work.cost` computed it."""

    latency_s: Any
    bandwidth_s: Any
    compute_s: Any
    rounds: Any
    bytes_sent: Any

    @property
    def time_s(self) -> Any:
        return self.latency_s + self.bandwidth_s + self.compute_s


class Work:
    """The sheet an example writes on; helpers here apply the active :class:`Slip`, if any."""

    def __init__(self, values: Mapping[str, Any], slip: Slip | None = None, *, quiet: bool = False) -> None:
        self._values = dict(values)
        self.slip = slip
        self.quiet = quiet  # answers only: the grader needs no steps
        self.steps: list[Step] = []
        self.answers: dict[str, Answer] = {}
        self.disagreements: list[str] = []

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def values(self, *names: str) -> tuple[Any, ...]:
        return tuple(self._values[n] for n in names)

    @property
    def checking(self) -> bool:
        """Whether to cross-check against another library path: when working for a reader, not
        when grading (quiet) or modelling a slip."""
        return self.slip is None and not self.quiet

    def check(self, what: str, worked: Any, library: Any) -> None:
        """Cross-check a worked value against the library's; a slip's values are not checked.

        A disagreement is recorded on the :class:`Worked`, not raised at the reader; the tests
        run every example and fail on any.
        """
        if self.slip is None and worked != library:
            self.disagreements.append(f"{what}: worked {worked!r}, library {library!r}")

    def slipped(self, mistake: str) -> bool:
        """Whether the mistake being modelled is *mistake* (for mistakes particular to a topic)."""
        return self.slip is not None and self.slip.mistake == mistake

    # -- recording -------------------------------------------------------------------------

    def step(self, text: str, expression: str = "", value: Any = None, kind: Kind | None = None) -> Any:
        if not self.quiet:
            self.steps.append(Step(text, expression, value, kind))
        return value

    def answer(self, name: str, label: str, value: Any, kind: Kind, expression: str = "") -> Any:
        """Record a named answer (and show it as a step)."""
        if not self.quiet:
            self.steps.append(Step(sentence(label), expression, value, kind))
        self.answers[name] = Answer(name, label, value, kind)
        return value

    # -- slip-aware math -------------------------------------------------------------------

    @property
    def _log_slip(self) -> Slip | None:
        return self.slip if self.slip is not None and self.slip.mistake in _LOG_SLIPS else None

    def lg(self, x: Any) -> Any:
        """log₂ x, exact for a power of two; as the slip reads it (ln, log10, or x itself)."""
        return _log2(x, self._log_slip)

    def clg(self, x: Any) -> Any:
        """⌈log₂ x⌉; under a logarithm slip, the slip's (unrounded) logarithm."""
        return self.lg(x) if self._log_slip else (int(x) - 1).bit_length()

    def link(self, alpha: Any, beta: Any) -> tuple[Any, Any]:
        """(α, β) as used: the alpha-only slip drops β, the beta-only slip drops α."""
        if self.slipped("alpha-only"):
            return alpha, 0
        if self.slipped("beta-only"):
            return 0, beta
        return alpha, beta

    def cost(self, collective: str, algorithm: str, *, p: int, n: Any, alpha: Any, beta: Any,
             gamma: Any = 0, show: bool = True, label: str = "") -> Cost:
        """The registry's α–β–γ cost of one algorithm, evaluated with the active slip, with steps.

        The formula is the record's own definition (see ``costmodel formula``):
        the same coefficient functions, evaluated with a math namespace whose
        logarithm is the slip's, and with α or β dropped for the one-term slips.
        """
        from costmodel.collectives.evaluate import text_formula

        coefficients = _coefficients(collective, algorithm, p, Fraction(n), self._log_slip)
        algo, lat, bw, comp, rounds, sent = coefficients
        a, b = self.link(alpha, beta)
        g = 0 if self.slipped("alpha-only") else gamma
        result = Cost(lat * a, bw * b, comp * g, rounds, sent)
        if show and not self.quiet:
            from costmodel.collectives._math import TEXT, Term

            name = label or algo.name
            latency_text = Term.lift(algo.latency(Term(str(p)), Term("n"), TEXT)).as_factor()
            bandwidth_text = Term.lift(algo.bandwidth(Term(str(p)), Term("n"), TEXT)).as_factor()
            self.step(f"{name}: the model", text_formula(algo))
            exact = kinds.show_exact
            self.step(f"{name}: start-ups", f"{latency_text}·α = {exact(lat)} × {format_time(alpha)}",
                      result.latency_s, kinds.TIME)
            self.step(f"{name}: payload", f"{bandwidth_text}·β = {exact(bw)} B × {format_inverse_rate(beta)}",
                      result.bandwidth_s, kinds.TIME)
            if comp and gamma:
                self.step(f"{name}: reduction", "γ term", result.compute_s, kinds.TIME)
            self.step(f"{name}: total", "start-ups + payload", result.time_s, kinds.TIME)
        return result


_LOG_SLIPS = ("log-base", "p-for-log-p")


def _log2(x: Any, slip: Slip | None) -> Any:
    """log₂ x, exact for a power of two, or as a logarithm slip reads it (ln, log10, or x itself)."""
    if slip is None:
        k = int(x).bit_length() - 1
        return k if x == 2**k else math.log2(x)
    if slip.mistake == "p-for-log-p":
        return x
    return math.log(x) if slip.variant == "ln" else math.log10(x)


@lru_cache(maxsize=65536)
def _coefficients(collective: str, algorithm: str, p: int, n: Fraction, log: Slip | None) -> tuple[Any, ...]:
    """(record, latency, bandwidth, compute, rounds, bytes sent) coefficients of one algorithm at (p, n).

    They depend on neither α nor β, so variants and slips that share (p, n) share them; *log*
    is the logarithm slip in force (``None``: exact log₂).
    """
    from costmodel.collectives._registry import resolve
    from costmodel.collectives.evaluate import applicable, check_ranks

    algo, _ = applicable(resolve(collective, algorithm), check_ranks(p))
    m = _namespace(log)
    fp = Fraction(p)
    lat, bw, comp = algo.coefficients(fp, n, m)
    return algo, lat, bw, comp, (algo.rounds or algo.latency)(fp, n, m), algo.bytes_sent(fp, n, m)


def _namespace(log: Slip | None) -> MathBackend:
    """The registry's math namespace, with log₂ as the slip *log* reads it (exact without one)."""
    from costmodel.collectives._math import EXACT, with_logs

    if log is None:
        return EXACT
    return with_logs(EXACT, partial(_log2, slip=log))


@dataclass(frozen=True)
class Example:
    """A worked example: its name, title, source, givens, the function that works it, and its slips."""

    name: str
    title: str
    source: str
    topic: str
    givens: tuple[Given, ...]
    compute: Callable[[Work], None]
    principal: str
    slips: tuple[str, ...] = ()
    _by_name: dict[str, Given] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {g.name: g for g in self.givens})
        unknown = set(self.slips) - set(FORMULA_SLIPS)
        if unknown:
            raise ValueError(f"{self.name}: unknown slips {sorted(unknown)}")

    def given(self, name: str) -> Given:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownNameError("given", name, self._by_name,
                                   context=f"of example {self.name!r}") from None

    def values(self, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The givens' values: defaults, replaced by *settings* (text or values, parsed by kind)."""
        values = {g.name: g.parse(g.default) for g in self.givens}
        for name, value in (settings or {}).items():
            values[name] = self.given(name).parse(value)
        return values

    def run(self, settings: Mapping[str, Any] | None = None, *, slip: Slip | None = None,
            values: Mapping[str, Any] | None = None, quiet: bool = False) -> Worked:
        """Work the example; *values* (already parsed) skips parsing, *slip* models a mistake,
        *quiet* records the answers only (no steps: what grading needs, faster)."""
        chosen = dict(values) if values is not None else self.values(settings)
        work = Work(chosen, slip, quiet=quiet)
        try:
            with kinds.quiet() if quiet else nullcontext():
                self.compute(work)
        except ZeroDivisionError:
            raise InputError(f"example {self.name}: these givens divide by zero") from None
        if self.principal not in work.answers:
            raise AssertionError(f"example {self.name} did not record its answer {self.principal!r}")
        return Worked(self.name, self.title, self.source, tuple((g, chosen[g.name]) for g in self.givens),
                      tuple(work.steps), work.answers, self.principal, tuple(work.disagreements))
