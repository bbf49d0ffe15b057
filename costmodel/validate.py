"""Reusable checks of a user's argument, in the spirit of attrs' validators.

Each check returns the value it accepts and raises :class:`~costmodel.errors.InputError`
with one line ``<name>=<value!r> <problem>; <hint>`` otherwise.  Bounds and words differ
by argument, not by copy: a rank count, a seed and a number of segments are all
:func:`whole` with their own ``low``, ``high`` and hint.

>>> whole(16, "p", low=2)
16
>>> whole(True, "p", low=2)
Traceback (most recent call last):
    ...
costmodel.errors.InputError: p=True is not an integer ≥ 2
>>> positive(0, "k", hint="give the number of segments")
Traceback (most recent call last):
    ...
costmodel.errors.InputError: k=0 is not a positive integer; give the number of segments
"""

from __future__ import annotations

from typing import Any, TypeGuard

from costmodel.errors import InputError

__all__ = ["is_whole", "positive", "whole"]


def is_whole(value: object) -> TypeGuard[int]:
    """Whether *value* is an ``int`` and not a ``bool`` (``True`` is an int to Python, never a count).

    >>> is_whole(3), is_whole(True), is_whole(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def whole(value: Any, name: str = "", *, low: int | None = None, high: int | None = None, hint: str = "",
          expected: str | None = None, problem: str | None = None, small: str | None = None,
          large: str | None = None) -> int:
    """*value* if it is an int (not a bool) with ``low ≤ value ≤ high``; an InputError otherwise.

    Parameters
    ----------
    value : object
        What the user gave.
    name : str, optional
        Shown as ``name=value``; without it the value alone is shown.
    low, high : int, optional
        Inclusive bounds; ``None`` means unbounded.
    hint : str, optional
        What to give instead, after ``; `` in the message.
    expected : str, optional
        What a good value is, for ``is not <expected>``; by default worked out from the
        bounds (``a positive integer``, ``an integer ≥ 2``, ``an integer from 0 to 9``).
    problem : str, optional
        The whole problem phrase instead of ``is not <expected>``.
    small, large : str, optional
        If given, a value below *low* (above *high*) reads ``<name>=<value> is too small;
        <small>`` (``too large; <large>``) instead of the general message.

    Raises
    ------
    InputError
        One line naming the value and the rule.

    Examples
    --------
    >>> whole(5, "p", low=2, high=4, small="need 2", large="at most 4 ranks")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: p=5 is too large; at most 4 ranks
    >>> whole("3", "root", low=0, high=3)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: root='3' is not an integer from 0 to 3
    """
    shown = f"{name}={value!r}" if name else repr(value)
    if is_whole(value):
        if low is not None and value < low and small is not None:
            raise InputError(f"{shown} is too small; {small}")
        if high is not None and value > high and large is not None:
            raise InputError(f"{shown} is too large; {large}")
        if (low is None or value >= low) and (high is None or value <= high):
            return value
    what = problem or f"is not {expected or _expected(low, high)}"
    raise InputError(f"{shown} {what}; {hint}" if hint else f"{shown} {what}")


def positive(value: Any, name: str = "", **rules: Any) -> int:
    """*value* if it is an int ≥ 1 (and meets any further :func:`whole` rules).

    >>> positive(8, "m")
    8
    """
    return whole(value, name, low=1, **rules)


def _expected(low: int | None, high: int | None) -> str:
    if low is None and high is None:
        return "an integer"
    if low is None:
        return f"an integer ≤ {high}"
    if high is None:
        return {0: "a non-negative integer", 1: "a positive integer"}.get(low, f"an integer ≥ {low}")
    return f"an integer from {low} to {high}"
