"""Exact numbers from what callers give: the one coercion rule of the package.

Every number a user or a caller hands to costmodel becomes a Fraction by one rule:

* an int, a Fraction (any ``numbers.Rational``) or a finite Decimal is taken exactly;
* a finite Python float (or another real, such as a NumPy float) is read by its
  shortest ``repr``, so ``0.1`` is ``Fraction(1, 10)``: the number the user typed,
  not the binary double nearest to it;
* a string is read by a restricted grammar (a regular expression, no ``eval``):
  a decimal (``0.1`` is one tenth), an exponent (``2.5e-3``, at most ±60) or a
  ratio of integers (``1/3``);
* bools, NaN and infinities are refused with an :class:`~costmodel.errors.InputError`.

:func:`to_fraction` is the rule for Python numbers, :func:`parse_number` adds the
text grammar and :func:`parse_numbers` reads lists.  :mod:`costmodel.units` reads
quantities with units on top of :func:`to_fraction`, and its
:func:`~costmodel.units.format_exact` is the one way an exact number is shown.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeVar

from costmodel.errors import InputError

__all__ = ["Number", "decimal_text", "exact_sum", "half_width", "list_items", "median", "parse_list",
           "parse_number", "parse_numbers", "show", "to_fraction"]

#: A computed value: exact, or a float where exact arithmetic was given up (documented where it is).
Number = Fraction | float

_FULL_WIDTH = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}


def half_width(text: str) -> str:
    """*text* with its full-width forms (``１MiB``, ``８``, as an East Asian input method types them) in
    their ASCII letters, digits and signs, and the ideographic space a space: every number a user types is
    read so, whatever its kind.

    >>> half_width("１２８ＭｉＢ")
    '128MiB'
    """
    return text.translate(_FULL_WIDTH)

_NUMBER = re.compile(
    r"\s*(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]{1,3}))?)"
    r"(?:\s*/\s*(?P<den>[0-9]+))?\s*"
)
_MAX_EXPONENT = 60
_MAX_DIGITS = 200
_MAX_ITEMS = 100_000
T = TypeVar("T")
_MAX_DECIMAL_EXPONENT = 400


def show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_fraction(value: object, *, what: str = "a number", example: str = "0.25",
                error: type[InputError] = InputError, shown: str | None = None) -> Fraction:
    """A Python number (not text) exactly, by the package's one rule (see the module notes).

    *what* and *example* word the error (``"a time"``, ``"5 us"``), *shown* names the
    value in it (default its shortened ``repr``); *error* is the InputError subclass
    raised (:class:`~costmodel.errors.UnitError` for units).  A Decimal beyond
    10^±400 is refused before its digits are built.

    Examples
    --------
    >>> to_fraction(0.1), to_fraction(3), to_fraction(Decimal("2.5"))
    (Fraction(1, 10), Fraction(3, 1), Fraction(5, 2))
    >>> to_fraction(True)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: True is a bool, not a number; give a number or a string such as '0.25'
    """
    if isinstance(value, Fraction):  # the common case first, before any message is worded
        return value
    shown = show(value) if shown is None else shown
    if isinstance(value, bool):
        raise error(f"{shown} is a bool, not {what}; give a number or a string such as {example!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, (Decimal, numbers.Real)):
        finite = value.is_finite() if isinstance(value, Decimal) else math.isfinite(float(value))
        if not finite:
            raise error(f"{shown} is not a finite number; write {what} such as {example}")
        if isinstance(value, Decimal):
            if value and abs(value.adjusted()) > _MAX_DECIMAL_EXPONENT:
                raise error(f"{shown} is out of range; give {what} between 1e-{_MAX_DECIMAL_EXPONENT} "
                            f"and 1e{_MAX_DECIMAL_EXPONENT}")
            return Fraction(value)
        return Fraction(repr(float(value)))
    raise error(f"{shown} is not {what}; give a number or a string such as {example!r}")


def parse_number(value: Any, *, what: str = "value") -> Fraction:
    """One exact number: a decimal string, ``a/b``, or a Python number by :func:`to_fraction`.

    Examples
    --------
    >>> parse_number("0.2"), parse_number("1/3"), parse_number(0.1)
    (Fraction(1, 5), Fraction(1, 3), Fraction(1, 10))
    >>> parse_number("x", what="loss")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 'x' is not a number; write a decimal such as 0.25 or a ratio such as 1/4
    """
    if not isinstance(value, str):
        return to_fraction(value, what=f"the {what}")
    m = _NUMBER.fullmatch(half_width(value))
    if m is not None and len(m.group("num")) <= _MAX_DIGITS:
        if m.group("exp") is not None and abs(int(m.group("exp"))) > _MAX_EXPONENT:
            raise InputError(f"{show(value)} has an exponent out of range; "
                             f"exponents must be between -{_MAX_EXPONENT} and {_MAX_EXPONENT}")
        number = Fraction(m.group("num"))
        if m.group("den") is None:
            return number
        den = int(m.group("den"))
        if den == 0:
            raise InputError(f"{show(value)} divides by zero; write a ratio such as 1/4")
        return number / den
    raise InputError(f"{show(value)} is not a number; write a decimal such as 0.25 or a ratio such as 1/4")


def list_items(value: Any, sep: str, *, what: str, example: str) -> list[Any]:
    """The items of a list given as text split at *sep*, or as a sequence; refuses empty and huge lists."""
    if isinstance(value, str):
        if not value.strip():
            raise InputError(f"{show(value)} is empty; write the {what} with commas, e.g. {example}")
        parts = value.split(sep)
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, dict)):
        parts = list(value)
    else:
        raise InputError(f"{show(value)} is not a list; write the {what} with commas, e.g. {example}")
    if not parts:
        raise InputError(f"no {what} given; write them with commas, e.g. {example}")
    if len(parts) > _MAX_ITEMS:
        raise InputError(f"{len(parts)} {what} given; costmodel takes at most {_MAX_ITEMS}")
    return parts


def parse_numbers(value: Any, *, what: str, example: str = "0.2,0.5,0.9") -> tuple[Fraction, ...]:
    """A list of exact numbers from ``"0.2,0.5,0.9"`` or a sequence of numbers (*what* is plural).

    Examples
    --------
    >>> parse_numbers("0.2, 0.5 ,1/2", what="losses")
    (Fraction(1, 5), Fraction(1, 2), Fraction(1, 2))
    """
    return parse_list(value, lambda part: parse_number(part, what=what), what=what, example=example)


def parse_list(value: Any, parse: Callable[[Any], T], *, what: str, example: str) -> tuple[T, ...]:
    """Each item of a comma-separated list (or a sequence) through *parse*; errors name the item."""
    out = []
    for i, part in enumerate(list_items(value, ",", what=what, example=example)):
        try:
            out.append(parse(part))
        except InputError as exc:
            raise InputError(f"item {i} of the {what}: {exc}") from None
    return tuple(out)


def decimal_text(x: Fraction | int) -> str | None:
    """*x* as an exact decimal when it has a finite one (its denominator is 2^a·5^b), else ``None``.

    >>> decimal_text(Fraction(1, 100)), decimal_text(Fraction(-5, 2)), decimal_text(7)
    ('0.01', '-2.5', '7')
    >>> decimal_text(Fraction(1, 3)) is None
    True
    """
    x = Fraction(x)
    d = x.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d != 1:
        return None
    places = max(twos, fives)
    if places == 0:
        return str(x.numerator)
    digits = str(abs(x.numerator) * 10**places // x.denominator).rjust(places + 1, "0")
    return f"{'-' if x < 0 else ''}{digits[:-places]}.{digits[-places:]}"


def median(values: Iterable[Fraction]) -> Fraction:
    """The median of exact numbers, exactly (the mean of the middle two for an even count), sorted by
    their float values first so that a long list is not sorted by Fraction comparisons alone (ties
    of the floats are ordered exactly).

    >>> median([Fraction(1, 3), Fraction(1, 2), Fraction(1, 10**30)])
    Fraction(1, 3)
    >>> median([Fraction(1), Fraction(2)])
    Fraction(3, 2)
    """
    ordered = [x for _, x in sorted((float(x), x) for x in values)]
    if not ordered:
        raise ValueError("median of no values")
    half = len(ordered) // 2
    return Fraction(ordered[half]) if len(ordered) % 2 else (ordered[half - 1] + ordered[half]) / 2


def exact_sum(values: Iterable[Fraction | int], counts: Iterable[int] | None = None) -> Fraction:
    """The sum of exact numbers as a Fraction, each times its count when *counts* are given:
    ``sum(values, Fraction(0))``, or ``sum((n * x for n, x in zip(counts, values)), Fraction(0))``, computed
    over the common denominator (the numerators of each denominator added as integers, then brought to the
    least common multiple of the denominators, one division at the end) instead of one reduced Fraction
    per term, which takes a few times longer over a step's many operation times.

    >>> exact_sum([Fraction(1, 3), Fraction(1, 6), 2])
    Fraction(5, 2)
    >>> exact_sum([Fraction(1, 3), Fraction(1, 6)], [3, 2])
    Fraction(4, 3)
    >>> exact_sum([])
    Fraction(0, 1)
    """
    by: dict[int, int] = {}
    if counts is None:
        for x in values:
            by[x.denominator] = by.get(x.denominator, 0) + x.numerator
    else:
        for x, n in zip(values, counts, strict=True):
            by[x.denominator] = by.get(x.denominator, 0) + n * x.numerator
    if len(by) == 1:  # one denominator: no common multiple to find
        ((d, n),) = by.items()
        return Fraction(n, d)
    common = math.lcm(*by) if by else 1
    return Fraction(sum(n * (common // d) for d, n in by.items()), common)
