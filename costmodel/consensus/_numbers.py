"""Exact numbers for the consensus package: lists, conversions and exact display.

Single numbers are parsed by :func:`costmodel.exact.parse_number` (decimals,
exponents and ratios such as ``1/3`` become Fractions; ``nan`` and ``inf`` are
refused; no eval).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction

from costmodel.errors import InputError
from costmodel.exact import parse_number

__all__ = [
    "exact_sqrt",
    "format_decimal",
    "format_exact",
    "is_exact",
    "parse_number",
    "parse_numbers",
    "to_number",
    "to_numbers",
]

Number = Fraction | float


def parse_numbers(text: str, *, what: str = "value") -> tuple[Fraction, ...]:
    """A comma-separated list of numbers (``"0,3,6,9"``), each exact.

    Examples
    --------
    >>> parse_numbers("0, 3, 1/3")
    (Fraction(0, 1), Fraction(3, 1), Fraction(1, 3))
    """
    parts = text.split(",")
    if not text.strip() or any(not part.strip() for part in parts):
        raise InputError(f"{text!r} is not a list of numbers; separate {what}s with commas, e.g. 0,3,6,9")
    return tuple(parse_number(part, what=what) for part in parts)


def to_number(value: object, *, what: str = "value") -> Number:
    """A number given in Python (or as text) as a Fraction, or a float when it is a float.

    Examples
    --------
    >>> to_number(3), to_number("0.25"), to_number(0.5)
    (Fraction(3, 1), Fraction(1, 4), 0.5)
    """
    if isinstance(value, str):
        return parse_number(value, what=what)
    if isinstance(value, bool):
        raise InputError(f"{value!r} is a bool, not a {what}; give a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InputError(f"{value!r} is not a finite {what}; give a number")
        return Fraction(value)
    if isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x):
            raise InputError(f"{value!r} is not a finite {what}; give a number")
        return x
    raise InputError(f"{value!r} is not a {what}; give a number")


def to_numbers(values: str | Iterable[object], *, what: str = "value") -> tuple[Number, ...]:
    """A comma-separated string or an iterable of numbers, each through :func:`to_number`."""
    if isinstance(values, str):
        return parse_numbers(values, what=what)
    return tuple(to_number(v, what=what) for v in values)


def format_exact(x: Number) -> str:
    """A Fraction as ``"13/3"`` (an integer as ``"4"``); a float with repr.

    >>> format_exact(Fraction(13, 3)), format_exact(Fraction(4)), format_exact(0.5)
    ('13/3', '4', '0.5')
    """
    return str(x) if isinstance(x, Fraction) else repr(float(x))


def format_decimal(x: Number) -> str:
    """A Fraction with a terminating decimal expansion as a decimal (``0.3``), else as ``1/3``.

    >>> format_decimal(Fraction(3, 10)), format_decimal(Fraction(1, 3)), format_decimal(Fraction(5))
    ('0.3', '1/3', '5')
    """
    if not isinstance(x, Fraction):
        return repr(float(x))
    den = x.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1 or max(twos, fives) > 30:
        return str(x)
    scale = 10 ** max(twos, fives)
    return format(Decimal(x.numerator * scale // x.denominator).scaleb(-max(twos, fives)).normalize(), "f")


def exact_sqrt(q: Fraction) -> str:
    """√q in simplest radical form: ``3√5`` for 45, ``√5/3`` for 5/9, ``2`` for 4.

    >>> [exact_sqrt(Fraction(q)) for q in ("45", "5/9", "4", "1/2")]
    ['3√5', '√5/3', '2', '√2/2']
    """
    if q < 0:
        raise ValueError(f"{q} is negative")
    # √(a/b) = √(a·b)/b
    radicand, den = q.numerator * q.denominator, q.denominator
    outside, inside = _split_square(radicand)
    g = math.gcd(outside, den)
    outside, den = outside // g, den // g
    head = str(outside) if inside == 1 else ("" if outside == 1 else str(outside)) + f"√{inside}"
    return head if den == 1 else f"{head}/{den}"


def _split_square(n: int) -> tuple[int, int]:
    """n = outside² · inside with inside square-free (trial division; n is small in practice)."""
    if n == 0:
        return 0, 1
    root = math.isqrt(n)
    if root * root == n:
        return root, 1
    outside, inside, f = 1, n, 2
    while f * f <= inside and f < 10**6:
        while inside % (f * f) == 0:
            inside //= f * f
            outside *= f
        f += 1
    return outside, inside


def is_exact(values: Sequence[object]) -> bool:
    """Whether every value is a Fraction (or an int)."""
    return all(isinstance(v, (Fraction, int)) and not isinstance(v, bool) for v in values)
