"""Mistake diagnosis: which known slip turns the right working into the student's number.

Two families of mistakes are modelled.

*Formula slips* change the calculation itself: log₂ read as ln or log10, p
written for log₂ p, only the α or only the β term kept, the own chunk counted
again (a factor p/(p−1)), the unweighted mean of unequal shards, the other
bubble definition, ZeRO bookkeeping slips, compression without its index
bytes.  The exercise's worked example is run again with the slip applied (see
:class:`costmodel.examples.work.Slip`), so the wrong value comes from the same
formula, not from a guess.

*Value slips* change only the number at the end: MB read as MiB (and the k, G
and T variants), bits for bytes, a power of ten, a factor two (sent plus
received counted, or duplex bandwidth).  They are tried on the right value and
on every formula slip's value, so "forgot the α term *and* wrote MiB" is found
too.

Which slips can occur is data, per answer (:func:`applicable`): the formula
slips its worked example models, and the value slips of its dimension in
:data:`VALUE_SLIPS` (a ρ, a ratio or a count takes none); an exercise file may
list an answer's ``mistakes`` instead.  Unit slips stay within the answer's own
unit: a GB answer is never told "kB and KiB".  A slip that reproduces the
student's value within a narrow tolerance is reported; when explanations that
name different mistakes fit equally, each is reported as *ambiguous*, and only
a single unambiguous slip may earn partial credit.  A value in the wrong
dimension (a time for a size) is reported as ``wrong-unit`` without comparing
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

from costmodel.examples.work import sentence

__all__ = ["HINTS", "MISTAKES", "VALUE_SLIPS", "AuthorSlip", "Diagnosis", "applicable", "hint", "marked",
           "sentence", "value_slips"]

MISTAKES: dict[str, str] = {
    "binary-prefix": "decimal and binary prefixes confused (MB and MiB, kB and KiB, GB and GiB)",
    "bits-bytes": "bits and bytes confused (a factor of 8)",
    "power-of-ten": "off by a power of ten (a unit prefix slipped)",
    "factor-two": "off by a factor of two (sent and received both counted, or duplex bandwidth)",
    "own-chunk": "the own chunk counted as well: p/(p−1) times too much",
    "log-base": "a logarithm in the wrong base (ln or log10 instead of log₂)",
    "p-for-log-p": "p used where the formula has log₂ p",
    "alpha-only": "only the start-up (α) term counted",
    "beta-only": "only the bandwidth (β) term counted",
    "unweighted-mean": "a plain mean where a weighted one is needed (unequal shards or weights)",
    "bubble-definition": "the other bubble definition: idle over busy time, (P−1)/M (Narayanan et al. "
                         "2021's), where the question asks for idle over total time",
    "zero-bookkeeping": "a ZeRO bookkeeping slip (a state not partitioned, or in the wrong precision)",
    "index-overhead": "the compressed size without the bytes of the indices",
    "six-n-only": "the model FLOPs taken as 6·N·tokens, the attention's s² products left out",
    "recompute-count": "the recomputed forward counted in MFU, or left out of HFU (the two FLOP counts "
                       "swapped)",
    "achieved-for-peak": "utilization taken against the GPU's measured GEMM rate instead of its datasheet "
                         "peak",
    "roofline-sum": "the math time and the memory time added, where the roofline takes the larger",
    "elements-for-bytes": "elements counted where bytes are asked (the element size left out)",
    "wait-for-all": "the round waits for every client, where it ends when the K fastest are done",
    "no-composition": "the privacy loss of one step, not composed over all the steps",
    "batch-for-rate": "the batch used where the sampling rate q = B/N goes (q = 1: no amplification "
                      "by sampling)",
    "noise-for-sigma": "the noise's standard deviation σC used as the noise multiplier σ (not divided "
                       "by the clipping norm C)",
    "mean-for-max": "the mean client's time where the round waits for the slowest (or the K-th fastest) "
                    "of the sampled clients: an order statistic, not a mean",
    "deadline-without-links": "the deadline compared with the compute time alone, without the download "
                              "and the upload that share it",
    "second-eigenvalue": "the second-largest eigenvalue λ₂ taken for ρ, where ρ is the largest magnitude of "
                         "the non-consensus eigenvalues (a negative one can be larger)",
    "gap-for-log": "ln(1/ρ) replaced by the spectral gap 1 − ρ: the approximation ln(1/ε)/(1 − ρ), not the "
                   "rounds ⌈ln(1/ε)/ln(1/ρ)⌉",
    "wrong-unit": "a value of the wrong dimension (a time for a size, ...)",
}
"""Every mistake the grader can report, with what it means."""

HINTS: dict[str, str] = {
    "binary-prefix": "decimal and binary unit prefixes confused",
    "bits-bytes": "bits and bytes confused",
    "power-of-ten": "a unit prefix slipped",
    "factor-two": "sent and received both counted, duplex bandwidth, one phase of two counted, or a "
                  "constant factor dropped",
    "own-chunk": "the own chunk counted as well",
    "log-base": "a logarithm in the wrong base",
    "p-for-log-p": "p used where the formula has a logarithm",
    "alpha-only": "only the start-up term counted",
    "beta-only": "only the bandwidth term counted",
    "unweighted-mean": "a plain mean where a weighted one is needed",
    "bubble-definition": "the other bubble definition",
    "zero-bookkeeping": "a ZeRO bookkeeping slip",
    "index-overhead": "the compressed size without the bytes of the indices",
    "six-n-only": "the attention FLOPs left out of the model count",
    "recompute-count": "the recomputation counted in the wrong utilization",
    "achieved-for-peak": "a measured rate used in place of the peak",
    "roofline-sum": "the math and memory times added instead of overlapped",
    "elements-for-bytes": "the element size left out of the bytes",
    "wait-for-all": "the round waited for every client",
    "no-composition": "the privacy loss of one step, not composed over the steps",
    "batch-for-rate": "the batch size used in place of the sampling rate",
    "noise-for-sigma": "the noise's standard deviation and the noise multiplier confused",
    "mean-for-max": "a mean where the round waits for an order statistic",
    "deadline-without-links": "the links' time left out of the deadline",
    "second-eigenvalue": "the second-largest eigenvalue taken for the largest magnitude",
    "gap-for-log": "the spectral gap used in place of the logarithm",
    "wrong-unit": "a value of the wrong dimension",
}
"""What a student is told of each mistake when the expected values are hidden: the kind of slip,
never a factor, a ratio or a value (``check --hide-expected``); see :func:`hint`."""

VALUE_SLIPS: dict[str, tuple[str, ...]] = {
    "size": ("binary-prefix", "bits-bytes", "power-of-ten", "factor-two"),
    "rate": ("binary-prefix", "bits-bytes", "power-of-ten", "factor-two"),
    "inverse rate": ("binary-prefix", "bits-bytes", "power-of-ten", "factor-two"),
    "time": ("bits-bytes", "power-of-ten", "factor-two"),
}
"""The value slips an answer of each dimension can show by default.  A plain number (ρ, a
ratio, a mean) and a count take none; a size that is not traffic (memory) should list its
``mistakes`` without ``factor-two`` in its exercise file."""


def applicable(dimension: str, formula_slips: Iterable[str],
               declared: Iterable[str] | None) -> frozenset[str]:
    """The mistakes that can occur in one answer: *declared* (its exercise file's list) when given,
    else the formula slips of its worked example and the value slips of its dimension.

    >>> sorted(applicable("number", ["own-chunk"], None))
    ['own-chunk']
    >>> sorted(applicable("time", [], None))
    ['bits-bytes', 'factor-two', 'power-of-ten']
    """
    if declared is not None:
        return frozenset(declared)
    return frozenset((*formula_slips, *VALUE_SLIPS.get(dimension, ())))


@dataclass(frozen=True)
class AuthorSlip:
    """A mistake an exercise's author declares for one answer (``[[exercise.answer.slip]]``).

    The wrong value is the right one times *factor*, or *value* itself: each a formula of the
    example's givens (in base units: bytes, seconds) and ``answer`` (the right value), read by
    the restricted grammar of :mod:`costmodel.exercises.symbolic`, never evaluated as code.
    """

    id: str
    message: str
    factor: str = ""
    value: str = ""
    credit: Fraction | None = None
    hint: str = ""  # the kind of slip without its factor or value (hidden expected values)

    def wrong(self, expected: Any, givens: Mapping[str, Any]) -> Fraction | float | None:
        """The value a student who makes this slip writes (base units), or None where undefined."""
        import sympy

        from costmodel.expressions import parse_expression

        numbers = {k: v for k, v in givens.items()
                   if isinstance(v, (int, Fraction, float)) and not isinstance(v, bool)}
        names = {k: sympy.Rational(str(Fraction(v))) if not isinstance(v, float) else sympy.Float(v)
                 for k, v in {**numbers, "answer": expected}.items()}
        try:
            result = sympy.sympify(parse_expression(self.factor or self.value, names))
        except (ArithmeticError, ValueError, TypeError):
            return None
        if not result.is_number or not result.is_real or result.has(sympy.zoo, sympy.nan, sympy.oo):
            return None
        if result.is_Rational:
            number: Fraction | float = Fraction(int(result.p), int(result.q))
        else:
            number = float(result)
            if not math.isfinite(number):
                return None
        if self.factor:
            return expected * number if isinstance(number, Fraction) and not isinstance(expected, float) \
                else float(expected) * float(number)
        return number


@dataclass(frozen=True)
class Diagnosis:
    """One explanation of a wrong answer: the mistakes that reproduce it and a sentence for the student.

    *ambiguous*: another explanation, naming other mistakes, fits as well.
    """

    mistakes: tuple[str, ...]
    message: str
    ambiguous: bool = False
    hint: str = ""  # the message without any factor, ratio or value (see :func:`hint`)

    @property
    def mistake(self) -> str:
        return self.mistakes[0] if len(self.mistakes) == 1 else "+".join(self.mistakes)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mistake": self.mistake, "mistakes": list(self.mistakes),
                               "message": self.message}
        if self.ambiguous:
            out["ambiguous"] = True
        return out

    def hidden(self, hints: Mapping[str, str] | None = None) -> Diagnosis:
        """This diagnosis as a student sees it when the expected values are hidden: the kinds of
        its slips, never a factor or a value (*hints*: the author's slips' own, by id)."""
        text = self.hint or hint(self.mistakes, hints)
        if self.ambiguous:
            text += " (ambiguous: another mistake fits as well)"
        ids = tuple("slip" if _digits(m) else m for m in self.mistakes)  # an author's id may say "x8"
        return Diagnosis(ids, text, self.ambiguous, text)


def hint(mistakes: Iterable[str], hints: Mapping[str, str] | None = None) -> str:
    """The kinds of *mistakes*, in order, without a factor or a value; an author's slip without a
    hint of its own is named by its id.

    >>> hint(("own-chunk", "power-of-ten"))
    'The own chunk counted as well, then a unit prefix slipped'
    >>> hint(("half-rounds",))
    'A known slip (half-rounds)'
    """
    table = {**HINTS, **(hints or {})}
    return sentence(", then ".join(table.get(m) or ("a known slip" if _digits(m) else f"a known slip ({m})")
                                   for m in mistakes))


def _digits(text: str) -> bool:
    return any(c.isdigit() for c in text)


Transform = tuple[str, Fraction, str]
"""(mistake, factor to multiply the right value by, how to say it)."""

_PREFIXES = (("k", "Ki", 1), ("M", "Mi", 2), ("G", "Gi", 3), ("T", "Ti", 4))


@cache
def value_slips(dimension: str, unit: str = "") -> tuple[Transform, ...]:
    """The value slips of an answer of *dimension* (``size``, ``time``, ...) graded in *unit*.

    Prefixes are confused only within the answer's own unit (``MB`` and ``MiB`` for an answer
    in MB; none for one in plain bytes).

    >>> sorted({m for m, _, _ in value_slips("time")})
    ['bits-bytes', 'factor-two', 'power-of-ten']
    >>> sorted({d.split(" (")[0] for m, _, d in value_slips("size", "kB") if m == "binary-prefix"})
    ['kB and KiB confused']
    """
    slips: list[Transform] = []
    if dimension in ("size", "rate", "inverse rate"):
        form = {"size": "{}B", "rate": "{}B/s", "inverse rate": "s/{}B"}[dimension]
        for dec, binary, k in _PREFIXES:
            if unit != form.format(dec):
                continue
            ratio = Fraction(1024, 1000) ** k
            pair = f"{form.format(dec)} and {form.format(binary)} confused"
            slips.append(("binary-prefix", 1 / ratio, f"{pair} (a factor {float(ratio):.4g} too small)"))
            slips.append(("binary-prefix", ratio, f"{pair} (a factor {float(ratio):.4g} too large)"))
        slips.append(("bits-bytes", Fraction(8), "bits counted where bytes are asked (8 times too large)"))
        slips.append(("bits-bytes", Fraction(1, 8), "bytes divided by 8 as if they were bits"))
    elif dimension == "time":
        slips.append(("bits-bytes", Fraction(8), "a rate in bytes read as bits (8 times too long)"))
        slips.append(("bits-bytes", Fraction(1, 8), "a rate in bits read as bytes (8 times too short)"))
    for e in (1, 2, 3, 6, 9, 12):
        slips.append(("power-of-ten", Fraction(10) ** e, f"10^{e} times too large"))
        slips.append(("power-of-ten", Fraction(1, 10**e), f"10^{e} times too small"))
    traffic = dimension in ("size", "rate", "inverse rate", "time")
    twice = "twice the right value" + (" (sent and received both counted?)" if traffic else "")
    slips.append(("factor-two", Fraction(2), twice))
    half = "half the right value (a factor 2 dropped" + \
        (", or one phase of two counted?)" if traffic else "?)")
    slips.append(("factor-two", Fraction(1, 2), half))
    return tuple(slips)


def diagnose(
    given: Any,
    expected: Any,
    *,
    dimension: str,
    formula_values: Iterable[tuple[str, str, Any]],
    accepts: Callable[[Any, Any], bool],
    allowed: Iterable[str] | None = None,
    unit: str = "",
) -> list[Diagnosis]:
    """Every slip, or formula slip followed by one value slip, that turns the working into *given*.

    Single slips are reported when any fits; pairs only when none does.  When the explanations found name
    different mistakes, each is marked *ambiguous*.

    *formula_values* are ``(mistake, description, value)`` from re-running the
    example with each formula slip; *accepts(given, candidate)* says whether
    two values (floats, base units; or words) are close enough to call it that
    slip; *allowed* are the mistakes that can occur in this answer (see
    :func:`applicable`; default all); *unit* is the answer's unit (for prefix slips).
    """
    allow = set(MISTAKES if allowed is None else allowed)
    numeric = not isinstance(expected, str) and not isinstance(given, str)
    if not numeric:
        return marked([Diagnosis((m,), sentence(d)) for m, d, v in formula_values
                        if m in allow and isinstance(v, str) and accepts(given, v)])
    # closeness, not exactness, is the question here: floats are plenty and fast
    bases: list[tuple[tuple[str, ...], str, float]] = [((), "", float(expected))]
    bases += [((m,), d, float(v)) for m, d, v in formula_values
              if m in allow and isinstance(v, (int, float, Fraction)) and v != expected]
    transforms = [(m, float(f), d) for m, f, d in value_slips(dimension, unit) if m in allow]
    s = float(given)
    found: list[Diagnosis] = []
    seen: set[tuple[str, ...]] = set()
    for mistakes, description, value in bases:
        if mistakes and accepts(s, value):
            _add(found, seen, mistakes, description)
        for mistake, factor, how in transforms:
            if accepts(s, value * factor):
                chain = (*mistakes, mistake)
                _add(found, seen, chain, f"{description}, then {how}" if description else how)
    single = [d for d in found if len(d.mistakes) == 1]
    return marked(single or found)  # the simplest explanations: two slips only when no single one fits


def marked(found: list[Diagnosis]) -> list[Diagnosis]:
    """*found*, each marked ambiguous (in its message too) when they name different mistakes."""
    if len({d.mistakes for d in found}) < 2:
        return found
    return [Diagnosis(d.mistakes, f"{d.message} (ambiguous: another mistake gives the same value)",
                      ambiguous=True, hint=d.hint) for d in found]


def _add(found: list[Diagnosis], seen: set[tuple[str, ...]], mistakes: tuple[str, ...], text: str) -> None:
    if mistakes not in seen:
        seen.add(mistakes)
        found.append(Diagnosis(mistakes, sentence(text)))
