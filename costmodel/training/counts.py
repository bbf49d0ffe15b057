"""Counts of parameters, elements and tokens (``70B``, ``7.5e9``, ``25M``) and data types with their sizes.

A *count* is a whole number with an optional multiplier: ``k``/``K`` thousand,
``M`` million, ``B``/``b``/``G`` billion, ``T`` trillion.  Here ``B`` means
billion, as in "a 70B model", never bytes; a size such as ``70GB`` is refused
with a hint, and so is ``m`` (milli, not million).

A *dtype* is one of :data:`DTYPES` (``fp32``, ``bf16``, ``fp16``, ``fp8``,
``int8``, ``int32``, ``fp64``), with common spellings (``float32``, ``half``,
``bfloat16``, ``e4m3``) accepted as aliases.

References
----------
.. [1] IEEE Std 754-2019, binary64/binary32/binary16 formats.
.. [2] P. Micikevicius et al., "FP8 Formats for Deep Learning", arXiv:2209.05433, 2022
   (E4M3 and E5M2, one byte each).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from costmodel._json import to_json_dict
from costmodel.errors import InputError
from costmodel.names import Names
from costmodel.references import Citation

__all__ = ["CITED", "DTYPES", "Dtype", "parse_count", "parse_dtype"]

CITED: tuple[Citation, ...] = ()  # storage sizes only; the docstring names the formats' sources

_COUNT = re.compile(
    r"\s*(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exp>[+-]?[0-9]{1,3}))?)"
    r"\s*(?P<suffix>[A-Za-z]*)\s*"
)
_SCALE = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "b": 10**9, "G": 10**9, "T": 10**12}
_SUFFIXES = "k (thousand), M (million), B or G (billion), T (trillion)"
_MAX = 10**30


def parse_count(value: Any, *, allow_zero: bool = False) -> int:
    """Parse a whole count: ``"70B"`` (billion), ``"7.5e9"``, ``"25M"``, ``"60k"`` or an int.

    Parameters
    ----------
    value : str or int
        The count; a string may carry one multiplier suffix (see the module).
    allow_zero : bool, default False
        Whether 0 is accepted.

    Returns
    -------
    int

    Raises
    ------
    InputError
        For a size (``70GB``), an unknown suffix, a fraction (``1.5``), a
        negative number, zero (unless allowed), or more than 10^30.

    Examples
    --------
    >>> parse_count("70B"), parse_count("7.5e9"), parse_count("25M"), parse_count(600)
    (70000000000, 7500000000, 25000000, 600)
    >>> parse_count("70GB")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: '70GB' is a size, not a count; write 70B for 70 billion (B means billion ...
    """
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    if isinstance(value, bool):
        raise InputError(f"{shown} is a bool, not a count; give a whole number such as 70B or 600")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str):
        number = _count_text(value, shown)
    else:
        raise InputError(f"{shown} is not a count; give a whole number such as 70B, 25M or 600")
    if number < 0:
        raise InputError(f"{shown} is negative; a count must be a positive whole number")
    if number == 0 and not allow_zero:
        raise InputError(f"{shown} is zero; a count must be a positive whole number")
    if number > _MAX:
        raise InputError(f"{shown} is too large; a count must be at most 1e30")
    return number


def _count_text(text: str, shown: str) -> int:
    from fractions import Fraction

    from costmodel.exact import half_width

    m = _COUNT.fullmatch(half_width(text))
    if m is None or len(m.group("num")) > 100:
        raise InputError(f"{shown} is not a count; write a whole number with an optional {_SUFFIXES}, "
                         "e.g. 70B or 25M")
    suffix = m.group("suffix")
    if suffix not in _SCALE:
        if suffix.endswith("B") or "i" in suffix or suffix.lower() in ("bytes", "byte"):
            raise InputError(f"{shown} is a size, not a count; {_count_hint(m.group('num'), suffix)}")
        if suffix == "m":
            raise InputError(f"{shown} is ambiguous: m is milli; write {m.group('num')}M for million")
        raise InputError(f"{shown} has an unknown multiplier {suffix!r}; use {_SUFFIXES}")
    if m.group("exp") is not None and abs(int(m.group("exp"))) > 60:
        raise InputError(f"{shown} has an exponent out of range; exponents must be between -60 and 60")
    value = Fraction(m.group("num")) * _SCALE[suffix]
    if value.denominator != 1:
        raise InputError(f"{shown} is not a whole number; a count takes whole numbers, "
                         "e.g. 7.5B = 7500000000")
    return value.numerator


_WORDS = {"k": ("k", "thousand"), "K": ("k", "thousand"), "M": ("M", "million"), "G": ("B", "billion"),
          "T": ("T", "trillion")}


def _count_hint(number: str, suffix: str) -> str:
    """What to write instead of a size such as 25MB or 70GiB."""
    word = _WORDS.get(suffix[:1])
    if word is None:
        return f"write a plain count such as {number} or {number}M (B means billion here, not bytes)"
    return f"write {number}{word[0]} for {number} {word[1]} (B means billion here, not bytes)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Dtype:
    """A data type and its storage size per element."""

    name: str
    bytes_per_element: int
    summary: str
    aliases: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, skip=("aliases",))


DTYPES: dict[str, Dtype] = {
    d.name: d
    for d in (
        Dtype(name="fp64", bytes_per_element=8, summary="IEEE 754 binary64",
              aliases=("float64", "double", "f64")),
        Dtype(name="fp32", bytes_per_element=4, summary="IEEE 754 binary32",
              aliases=("float32", "float", "single", "f32")),
        Dtype(name="bf16", bytes_per_element=2, summary="bfloat16 (8-bit exponent, 7-bit mantissa)",
              aliases=("bfloat16",)),
        Dtype(name="fp16", bytes_per_element=2, summary="IEEE 754 binary16",
              aliases=("float16", "half", "f16")),
        Dtype(name="fp8", bytes_per_element=1, summary="FP8 (E4M3 or E5M2)",
              aliases=("float8", "e4m3", "e5m2", "fp8-e4m3", "fp8-e5m2")),
        Dtype(name="int32", bytes_per_element=4, summary="32-bit integer", aliases=("i32",)),
        Dtype(name="int8", bytes_per_element=1, summary="8-bit integer", aliases=("i8",)),
    )
}
"""The data types costmodel knows, by canonical name."""

_NAMES = Names("dtype", {d.name: d.aliases for d in DTYPES.values()})


def parse_dtype(name: Any) -> Dtype:
    """Resolve a dtype name or alias (case-insensitive; ``_`` and ``-`` are the same).

    Raises
    ------
    UnknownNameError
        For an unknown name, with a did-you-mean.

    Examples
    --------
    >>> parse_dtype("bfloat16").name, parse_dtype("FP32").bytes_per_element
    ('bf16', 4)
    >>> parse_dtype("fp33")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnknownNameError: unknown dtype 'fp33'; did you mean 'fp32'?
    """
    if isinstance(name, Dtype):
        return name
    if not isinstance(name, str):
        raise InputError(f"{name!r} is not a dtype name; use one of {', '.join(DTYPES)}")
    return DTYPES[_NAMES.resolve(name)]
