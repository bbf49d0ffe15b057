"""The step model's inputs read once each, an error naming the parameter (and item) it came from."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, TypeVar

from costmodel.errors import InputError

__all__ = ["each", "named", "number"]

T = TypeVar("T")


def named(parse: Callable[[Any], T], value: Any, name: str) -> T:
    """``parse(value)``, its error prefixed with ``name=value``.

    >>> from costmodel.units import parse_time
    >>> named(parse_time, "2ms", "optimizer_s")
    Fraction(1, 500)
    """
    try:
        return parse(value)
    except InputError as exc:
        raise InputError(f"{name}={value.strip() if isinstance(value, str) else value!r}: {exc}") from None


def each(parse: Callable[[Any], Fraction], values: Sequence[Any], name: str) -> tuple[Fraction, ...]:
    """Every item of *values* parsed, an error naming ``name[i]``."""
    return tuple(named(parse, v, f"{name}[{i}]") for i, v in enumerate(values))


def number(value: Any, name: str) -> Fraction:
    """An exact number (``0.15``, ``1/4``, ``312e12``), its error prefixed with ``name=value``.

    >>> number(" 1/4 ", "slowdown")
    Fraction(1, 4)
    """
    from costmodel.exact import parse_number

    return named(lambda v: parse_number(v.strip() if isinstance(v, str) else v, what=name), value, name)
