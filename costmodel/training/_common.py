"""Small shared pieces of :mod:`costmodel.training`: exact list parsers, JSON helpers, the link.

The list parsers are deliberately small and restricted (a regular expression
per number, no ``eval``): ``"0.2,0.5,0.9"`` is a list of numbers,
``"1,0;2,1;4,-1"`` a list of vectors (``;`` between vectors, ``,`` between
components).  Every number is exact, by the package's one rule
(:mod:`costmodel.exact`): decimals (``0.1`` is one tenth), an exponent
(``2.5e-3``) or a ratio of integers (``1/3``); Python floats by their shortest
``repr``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.errors import InputError
from costmodel.exact import list_items, parse_list, parse_number, parse_numbers, show
from costmodel.validate import is_whole, whole

__all__ = [
    "optional_link",
    "parse_counts",
    "parse_indices",
    "parse_number",
    "parse_numbers",
    "parse_vectors",
    "positive_int",
    "reals",
]

def parse_vectors(value: Any, *, what: str,
                  example: str = "1,0;2,1;4,-1") -> tuple[tuple[Fraction, ...], ...]:
    """A list of equally long vectors from ``"1,0;2,1;4,-1"`` (``;`` between vectors) or nested sequences.

    A single number per vector may be written without commas: ``"0.5;1;2"``.

    Examples
    --------
    >>> parse_vectors("1,0; 2,1", what="models")
    ((Fraction(1, 1), Fraction(0, 1)), (Fraction(2, 1), Fraction(1, 1)))
    >>> parse_vectors("1,0;2", what="models")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: vector 1 of the models has 1 component, vector 0 has 2; every vector ...
    """
    rows = list_items(value, ";", what=what, example=example)
    vectors = []
    for i, row in enumerate(rows):
        row_items = row if isinstance(row, (str, Iterable)) else [row]
        items = list_items(row_items, ",", what=f"vector {i} of the {what}", example=example)
        values = []
        for j, item in enumerate(items):
            try:
                values.append(parse_number(item, what=what))
            except InputError as exc:
                raise InputError(f"vector {i}, component {j} of the {what}: {exc}") from None
        vectors.append(tuple(values))
    width = len(vectors[0])
    for i, v in enumerate(vectors):
        if len(v) != width:
            noun = "component" if len(v) == 1 else "components"
            raise InputError(f"vector {i} of the {what} has {len(v)} {noun}, vector 0 has {width}; "
                             "every vector needs the same length")
    return tuple(vectors)


def positive_int(value: Any, *, what: str, hint: str, allow_zero: bool = False) -> int:
    """*value* as an int ≥ 1 (or ≥ 0), refusing bools, floats and strings.

    >>> positive_int(4, what="dp", hint="give the data-parallel degree")
    4
    """
    return whole(value, what, low=0 if allow_zero else 1, high=10**18, hint=hint, large=hint,
                 expected="a whole number >= 0" if allow_zero else "a positive whole number")


def parse_counts(value: Any, *, what: str, example: str = "600,300,100",
                 allow_zero: bool = False) -> tuple[int, ...]:
    """A list of whole counts (samples, tokens) from ``"600,300,100"``, ``"60k,30k"`` or a sequence.

    Examples
    --------
    >>> parse_counts("600, 300,1k", what="sizes")
    (600, 300, 1000)
    >>> parse_counts("600,-3", what="sizes")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: item 1 of the sizes: '-3' is negative; a count must be a positive ...
    """
    from costmodel.training.counts import parse_count

    return parse_list(value, lambda part: parse_count(part, allow_zero=allow_zero), what=what,
                      example=example)


def parse_indices(value: Any, *, n: int, what: str) -> tuple[int, ...]:
    """0-based indices into a list of *n*, from ``"1"`` or ``"0,2"`` or a sequence; sorted, no repeats.

    Examples
    --------
    >>> parse_indices("2,0", n=3, what="dropped clients")
    (0, 2)
    >>> parse_indices("3", n=3, what="dropped clients")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 3 is out of range for the dropped clients; indices are 0-based: 0 to 2 ...
    """
    if value is None:
        return ()
    if is_whole(value):
        value = [value]
    parts = list_items(value, ",", what=what, example="1 or 0,2")
    seen: list[int] = []
    for part in parts:
        text = part.strip() if isinstance(part, str) else part
        if isinstance(text, str) and re.fullmatch(r"[+-]?[0-9]{1,18}", text):
            text = int(text)
        if not is_whole(text):
            raise InputError(f"{show(part)} is not an index; write 0-based client indices with commas, "
                             "e.g. 1 or 0,2")
        if not 0 <= text < n:
            raise InputError(f"{text} is out of range for the {what}; indices are 0-based: 0 to {n - 1} "
                             f"for {n} clients")
        if text in seen:
            raise InputError(f"{text} is listed twice in the {what}; list each index once")
        seen.append(text)
    return tuple(sorted(seen))


def reals(values: Sequence[Fraction | int]) -> list[int | float]:
    """JSON-native numbers of a vector."""
    return [real(v) for v in values]


def optional_link(*, link: Any = None, alpha: Any = None, beta: Any = None, bandwidth: Any = None,
                  profile: Any = None) -> Any:
    """The link if any part of one was given (then :func:`costmodel.links.as_link`'s, as everywhere), else
    ``None``: the models that price time only when given a link.

    Examples
    --------
    >>> optional_link() is None
    True
    >>> optional_link(alpha=0, bandwidth="12.5GB/s").beta_s_per_byte
    Fraction(1, 12500000000)
    """
    if all(v is None for v in (link, alpha, beta, bandwidth, profile)):
        return None

    from costmodel.links import as_link

    return as_link(link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
