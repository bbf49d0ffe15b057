"""Conversion of result values to JSON-native values (never inf or NaN).

`real` turns one number into an ``int`` or a finite ``float``; `to_json` does the same for
any result value (nested results, tuples, mappings, paths); `to_json_dict` builds a result's
``to_dict`` from its fields, and `JSONFields` gives a result class that ``to_dict``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from numbers import Real
from pathlib import PurePath
from typing import Any

__all__ = ["JSONFields", "MeasuredFields", "real", "to_json", "to_json_dict", "with_present"]


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


def to_json(value: Any, *, keep_floats: bool = False) -> Any:
    """Return *value* as JSON-native data.

    ``None``, ``bool`` and ``str`` stay as they are; numbers go through `real` (with
    *keep_floats*, a ``float`` is kept as it is: a measured 2.0 stays 2.0); a value with a
    ``to_dict`` gives its dict; a path becomes
    its text, a mapping a dict and a tuple or list a list, their items converted alike.

    Raises
    ------
    TypeError
        For any other value, rather than writing something JSON cannot read back.

    Examples
    --------
    >>> to_json((Fraction(1, 2), None, 3, True))
    [0.5, None, 3, True]
    >>> to_json({"a": 2.0}), to_json({"a": 2.0}, keep_floats=True)
    ({'a': 2}, {'a': 2.0})
    """
    if value is None or isinstance(value, bool | str) or (keep_floats and isinstance(value, float)):
        return value
    if isinstance(value, Real):
        return real(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Mapping):
        return {k: to_json(v, keep_floats=keep_floats) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [to_json(v, keep_floats=keep_floats) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def to_json_dict(obj: Any, names: Iterable[str] | None = None, *, skip: Iterable[str] = (),
                 rename: Mapping[str, str] | None = None, keep_floats: bool = False) -> dict[str, Any]:
    """Return the attributes *names* of *obj* as a JSON-native dict, in that order.

    *names* may name fields or properties; by default they are the dataclass fields of
    *obj* in the order they are declared, less private ones (``_name``). *skip* leaves some
    out, *rename* maps an attribute to the key it is written under, and each value goes
    through `to_json` (with *keep_floats*). A result whose keys are not its attributes keeps
    a hand-written ``to_dict``, often spreading this dict into its own.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Cost:
    ...     name: str
    ...     time_s: Fraction
    ...     sizes: tuple[int, ...]
    >>> to_json_dict(Cost("ring", Fraction(3, 2), (1, 2)))
    {'name': 'ring', 'time_s': 1.5, 'sizes': [1, 2]}
    >>> to_json_dict(Cost("ring", Fraction(3), ()), ("time_s", "name"), rename={"name": "algorithm"})
    {'time_s': 3, 'algorithm': 'ring'}
    """
    if names is None:
        names = (f.name for f in dataclasses.fields(obj) if not f.name.startswith("_"))
    left_out = frozenset(skip)
    keys = rename or {}
    return {keys.get(name, name): to_json(getattr(obj, name), keep_floats=keep_floats)
            for name in names if name not in left_out}


class JSONFields:
    """Mixin: ``to_dict()`` writes the dataclass fields in order, through `to_json`.

    For a result whose JSON keys are exactly its public fields; one with renamed, extra or
    reordered keys writes its own ``to_dict`` (with `to_json_dict` where that is shorter).
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The result's fields in order as JSON-native values (see `to_json`)."""
        return to_json_dict(self)


class MeasuredFields(JSONFields):
    """Mixin: as `JSONFields`, but a ``float`` field is written as it is (a measured 2.0 stays 2.0)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The result's fields in order as JSON-native values, floats kept (see `to_json`)."""
        return to_json_dict(self, keep_floats=True)


def with_present(out: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """*out* with those of *fields* that are not None added, in order.

    >>> with_present({"a": 1}, line=None, error="bad")
    {'a': 1, 'error': 'bad'}
    """
    out.update((k, v) for k, v in fields.items() if v is not None)
    return out
