"""What a given or an answer is: how to read it from text, how to show it, its unit.

A :class:`Kind` ties one quantity type to the restricted parser that reads it
(``costmodel.units`` for sizes, times and rates, ``costmodel.exact`` for
plain numbers), to the formatter that shows it to a reader, and to the SI base
unit its value is stored in.  The same kinds serve ``--set name=value`` on the
command line, the parameters of exercise files and the answers of students.

>>> SIZE.parse("100 MB"), SIZE.show(SIZE.parse("64MiB"))
(Fraction(100000000, 1), '67.11 MB = 64 MiB')
>>> NUMBERS.parse("0.2, 0.5, 0.9"), NUMBERS.show(NUMBERS.parse("1/3,2"))
((Fraction(1, 5), Fraction(1, 2), Fraction(9, 10)), '1/3, 2')
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.exact import decimal_text, parse_number
from costmodel.units import (
    format_inverse_rate,
    format_number,
    format_rate,
    format_size,
    format_time,
    parse_inverse_rate,
    parse_rate,
    parse_size,
    parse_time,
)
from costmodel.validate import is_whole

__all__ = [
    "COUNT",
    "COUNTS",
    "FORMULA",
    "INVERSE_RATE",
    "KINDS",
    "NAME",
    "NUMBER",
    "NUMBERS",
    "RATE",
    "SIZE",
    "TIME",
    "Kind",
    "quiet",
    "show_exact",
]

_MAX_ITEMS = 4096
_MAX_COUNT = 2**40


def show_exact(x: Any, *, digits: int = 4) -> str:
    """An exact number as people write it: ``3``, ``0.36``, ``1/3`` (a decimal when it terminates shortly).

    >>> show_exact(Fraction(9, 25)), show_exact(Fraction(1, 3)), show_exact(7), show_exact(0.5331)
    ('0.36', '1/3', '7', '0.5331')
    """
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if isinstance(x, Fraction):
        decimal = decimal_text(x) if x.denominator <= 10**6 else None
        if decimal is not None and len(decimal) <= 14:
            return decimal
        if x.denominator <= 1000:
            return f"{x.numerator}/{x.denominator}"
    return format_number(x, digits=digits)


def _count(value: Any) -> int:
    number = value if is_whole(value) else parse_number(value)
    if isinstance(number, Fraction):
        if number.denominator != 1:
            raise InputError(f"{value!r} is not a whole number; give a count such as 8")
        number = number.numerator
    if number < 1:
        raise InputError(f"{value!r} is not positive; give a count such as 8")
    if number > _MAX_COUNT:
        raise InputError(f"{value!r} is too large; counts are at most 2^40")
    return int(number)


def _items(value: Any, one: Callable[[Any], Any]) -> tuple[Any, ...]:
    parts = value.split(",") if isinstance(value, str) else list(value)
    if not parts or (isinstance(value, str) and not value.strip()):
        raise InputError("the list is empty; give values separated by commas, e.g. 0.2,0.5,0.9")
    if len(parts) > _MAX_ITEMS:
        raise InputError(f"the list has {len(parts)} values; at most {_MAX_ITEMS} are allowed")
    return tuple(one(p.strip() if isinstance(p, str) else p) for p in parts)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 64:
        raise InputError(f"{value!r} is not a name; give a word such as ring")
    return value.strip()


_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar("costmodel_quiet_work", default=False)


@dataclass(frozen=True)
class Kind:
    """One type of quantity: parser, formatter and SI base unit (``""`` for pure numbers)."""

    name: str
    unit: str
    parse: Callable[[Any], Any]
    format: Callable[[Any], str]

    def show(self, value: Any) -> str:
        """*value* written for a reader; ``""`` while an example is worked quietly (answers only)."""
        return "" if _QUIET.get() else self.format(value)

    def term(self, value: Any) -> str:
        """*value* in one form only, to stand inside an expression (``50.33 MB``, not
        ``50.33 MB = 48 MiB``, which would read as an equality of the expression)."""
        return self.show(value).split(" = ")[0].split(" (")[0]

    def __repr__(self) -> str:
        return f"Kind({self.name!r})"


@contextmanager
def quiet() -> Iterator[None]:
    """Within this block :meth:`Kind.show` writes nothing: a worked example's text is not needed."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


COUNT = Kind("count", "", _count, str)
SIZE = Kind("size", "B", parse_size, format_size)
TIME = Kind("time", "s", parse_time, format_time)
RATE = Kind("rate", "B/s", parse_rate, format_rate)
INVERSE_RATE = Kind("inverse rate", "s/B", parse_inverse_rate, format_inverse_rate)
NUMBER = Kind("number", "", parse_number, show_exact)
NUMBERS = Kind("numbers", "", lambda v: _items(v, parse_number),
               lambda xs: ", ".join(show_exact(x) for x in xs))
COUNTS = Kind("counts", "", lambda v: _items(v, _count), lambda xs: ", ".join(str(x) for x in xs))
NAME = Kind("name", "", _name, str)


def _formula(value: Any) -> Any:
    from costmodel.expressions import parse_expression

    return value if hasattr(value, "free_symbols") else parse_expression(value)


FORMULA = Kind("formula", "", _formula, str)
"""A symbolic formula in p, n, α, β, γ (sympy), read by costmodel's restricted grammar."""

KINDS = {k.name: k for k in (COUNT, SIZE, TIME, RATE, INVERSE_RATE, NUMBER, NUMBERS, COUNTS, NAME, FORMULA)}
"""Every kind by name, as exercise files spell them."""
