"""Exact numbers from text: the one restricted parser behind every list of numbers users type.

No ``eval``: a regular expression per number.  Decimals are exact (``0.1`` is
one tenth), an exponent is allowed (``2.5e-3``, at most ±60), and so is a
ratio of integers (``1/3``).  Python floats are read by their shortest
``repr``, so ``0.2`` is ``Fraction(1, 5)``, the number the user typed.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError

__all__ = ["decimal_text", "parse_number", "show"]

_NUMBER = re.compile(
    r"\s*(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]{1,3}))?)"
    r"(?:\s*/\s*(?P<den>[0-9]+))?\s*"
)
_MAX_EXPONENT = 60
_MAX_DIGITS = 200


def show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_number(value: Any, *, what: str = "value") -> Fraction:
    """One exact number: a decimal string, ``a/b``, an int, a Fraction, a Decimal or a finite float.

    Examples
    --------
    >>> parse_number("0.2"), parse_number("1/3"), parse_number(0.1)
    (Fraction(1, 5), Fraction(1, 3), Fraction(1, 10))
    >>> parse_number("x", what="loss")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 'x' is not a number; write a decimal such as 0.25 or a ratio such as 1/4
    """
    if isinstance(value, bool):
        raise InputError(f"{value!r} is a bool, not a number; write the {what} as a number such as 0.25")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, Decimal) and value.is_finite():
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{value!r} is not a finite number; the {what} must be finite")
        return Fraction(repr(value))
    if isinstance(value, str):
        m = _NUMBER.fullmatch(value)
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
