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

Every slip that reproduces the student's value within the answer's tolerance
is reported; a value in the wrong dimension (a time for a size) is reported as
``wrong-unit`` without comparing numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

__all__ = ["MISTAKES", "Diagnosis", "value_slips"]

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
    "bubble-definition": "the other bubble definition: idle time over busy time, (P−1)/M",
    "zero-bookkeeping": "a ZeRO bookkeeping slip (a state not partitioned, or in the wrong precision)",
    "index-overhead": "the compressed size without the bytes of the indices",
    "wrong-unit": "a value of the wrong dimension (a time for a size, ...)",
}
"""Every mistake the grader can report, with what it means."""


@dataclass(frozen=True)
class Diagnosis:
    """One explanation of a wrong answer: the mistakes that reproduce it and a sentence for the student."""

    mistakes: tuple[str, ...]
    message: str

    @property
    def mistake(self) -> str:
        return self.mistakes[0] if len(self.mistakes) == 1 else "+".join(self.mistakes)

    def to_dict(self) -> dict[str, Any]:
        return {"mistake": self.mistake, "mistakes": list(self.mistakes), "message": self.message}


Transform = tuple[str, Fraction, str]
"""(mistake, factor to multiply the right value by, how to say it)."""

_PREFIXES = (("k", "Ki", 1), ("M", "Mi", 2), ("G", "Gi", 3), ("T", "Ti", 4))


@cache
def value_slips(dimension: str) -> tuple[Transform, ...]:
    """The value slips that make sense for an answer of *dimension* (``size``, ``time``, ...).

    >>> sorted({m for m, _, _ in value_slips("time")})
    ['bits-bytes', 'factor-two', 'power-of-ten']
    """
    slips: list[Transform] = []
    if dimension in ("size", "rate", "inverse rate"):
        unit = {"size": "{}B", "rate": "{}B/s", "inverse rate": "s/{}B"}[dimension]
        for dec, binary, k in _PREFIXES:
            ratio = Fraction(1024, 1000) ** k
            pair = f"{unit.format(dec)} and {unit.format(binary)} confused"
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
    slips.append(("factor-two", Fraction(2), "twice the right value (sent and received both counted?)"))
    slips.append(("factor-two", Fraction(1, 2), "half the right value (a factor 2 dropped?)"))
    return tuple(slips)


def diagnose(
    given: Any,
    expected: Any,
    *,
    dimension: str,
    formula_values: Iterable[tuple[str, str, Any]],
    accepts: Callable[[Any, Any], bool],
    allowed: Iterable[str] | None = None,
) -> list[Diagnosis]:
    """Every slip, or formula slip followed by one value slip, that turns the working into *given*.

    Single slips are reported when any fits; pairs only when none does.

    *formula_values* are ``(mistake, description, value)`` from re-running the
    example with each formula slip; *accepts(given, candidate)* says whether
    two values (floats, base units; or words) are close enough to call it that
    slip; *allowed* restricts the mistakes reported.
    """
    allow = set(MISTAKES if allowed is None else allowed)
    numeric = not isinstance(expected, str) and not isinstance(given, str)
    if not numeric:
        return [Diagnosis((m,), f"{d}") for m, d, v in formula_values
                if m in allow and isinstance(v, str) and accepts(given, v)]
    # closeness, not exactness, is the question here: floats are plenty and fast
    bases: list[tuple[tuple[str, ...], str, float]] = [((), "", float(expected))]
    bases += [((m,), d, float(v)) for m, d, v in formula_values
              if m in allow and isinstance(v, (int, float, Fraction)) and v != expected]
    transforms = [(m, float(f), d) for m, f, d in value_slips(dimension) if m in allow]
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
    return single or found  # the simplest explanations: two slips only when no single one fits


def _add(found: list[Diagnosis], seen: set[tuple[str, ...]], mistakes: tuple[str, ...], text: str) -> None:
    if mistakes not in seen:
        seen.add(mistakes)
        found.append(Diagnosis(mistakes, text[:1].upper() + text[1:]))
