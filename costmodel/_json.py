"""Conversion of result values to JSON-native values (never inf or NaN)."""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real

__all__ = ["real"]


def real(x: Real | Fraction | int | float) -> int | float:
    """Return *x* as an ``int`` when it is integral, else as a finite ``float``.

    Raises
    ------
    ValueError
        If *x* is infinite or NaN: results never carry those.

    Examples
    --------
    >>> real(Fraction(6, 2))
    3
    >>> real(Fraction(1, 8))
    0.125
    """
    if isinstance(x, bool):
        raise TypeError(f"{x!r} is a bool, not a number")
    if isinstance(x, int):
        return x
    if isinstance(x, Fraction):
        return x.numerator if x.denominator == 1 else x.numerator / x.denominator
    value = float(x)
    if not math.isfinite(value):
        raise ValueError(f"{x!r} is not finite; results never carry inf or nan")
    return int(value) if value.is_integer() and abs(value) < 2**53 else value
