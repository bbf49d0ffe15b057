"""Parse and format quantities with units: sizes, times, rates and inverse rates.

Every parser returns an exact :class:`fractions.Fraction` in SI base units:
bytes, seconds, bytes per second, or seconds per byte.  Decimal input is
parsed exactly (``"0.1"`` is one tenth, not the nearest binary float).

Grammar
-------
A quantity is a number, optional whitespace, and an optional unit::

    64MiB   1.5e3 B   .5 GB/s   100Gbps   0.08 ns/B   5 µs

* number: optional sign, digits with an optional decimal point, optional
  exponent (``1``, ``1.5``, ``.5``, ``1e6``, ``5E-6``, ``1.5e+3``); exponents
  beyond +-60 are refused, as are values above 1e30 in base units;
* sizes: ``B byte bytes``, decimal ``kB MB GB TB PB`` (powers of 1000) and
  binary ``KiB MiB GiB TiB PiB`` (powers of 1024).  ``KB`` is refused as
  ambiguous, and a size in bits (``b bit bits kb Mb Gb ... Kib Mib ...``) is
  refused with its byte equivalent in the hint;
* times: ``s ms us µs μs ns ps``;
* rates: a size unit, ``/`` and a time unit (``GB/s``, ``Mb/ms``, ``bit/s``),
  or ``bps kbps Mbps Gbps Tbps Pbps``.  Bit rates are converted to bytes per
  second (divided by 8);
* inverse rates: a time unit, ``/`` and a size unit (``ns/B``, ``s/GB``,
  ``ns/b``; per bit is multiplied by 8).

Units are case-sensitive: ``MB`` is megabytes, ``Mb`` megabits, ``mb`` is an
error.  A bare number is in the base unit.  ``int``, ``Fraction``, finite
``float`` (read by its shortest repr: ``0.1`` is one tenth) and ``Decimal`` values are
accepted as numbers in the base unit;
``bool`` is refused.  Every bad input raises :class:`~costmodel.errors.UnitError`.

Examples
--------
>>> parse_size("64 MiB")
Fraction(67108864, 1)
>>> parse_rate("100 Gb/s") == parse_rate("12.5 GB/s")
True
>>> format_size(parse_size("64MiB"))
'67.11 MB = 64 MiB'
>>> format_inverse_rate(parse_inverse_rate("0.08 ns/B"))
'0.08 ns/B'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache
from typing import NamedTuple

from costmodel._lazy import LazyPattern
from costmodel.errors import UnitError, did_you_mean
from costmodel.exact import decimal_text, half_width, to_fraction

__all__ = [
    "Quantity",
    "floor_log10",
    "format_byte_rate",
    "format_count",
    "format_exact",
    "format_flop_rate",
    "format_inverse_rate",
    "format_number",
    "format_rate",
    "format_share",
    "format_size",
    "format_time",
    "is_unit",
    "parse_inverse_rate",
    "parse_quantity",
    "parse_rate",
    "parse_size",
    "parse_time",
    "unit_of",
]

# --------------------------------------------------------------------------
# unit tables
# --------------------------------------------------------------------------

_SIZE = "size"
_TIME = "time"
_RATE = "rate"
_INVERSE = "inverse rate"

_MAX_EXPONENT = 60
_MAX_DIGITS = 200
_MAX_MAGNITUDE = Fraction(10**30)

_DECIMAL_PREFIXES = (
    ("k", 10**3),
    ("M", 10**6),
    ("G", 10**9),
    ("T", 10**12),
    ("P", 10**15),
)
_BINARY_PREFIXES = (
    ("Ki", 2**10),
    ("Mi", 2**20),
    ("Gi", 2**30),
    ("Ti", 2**40),
    ("Pi", 2**50),
)
_PREFIXES = _DECIMAL_PREFIXES + _BINARY_PREFIXES

#: byte units -> bytes
_BYTE_UNITS: dict[str, int] = {"B": 1, "byte": 1, "bytes": 1}
_BYTE_UNITS.update({p + "B": f for p, f in _PREFIXES})
#: bit units -> bits
_BIT_UNITS: dict[str, int] = {"b": 1, "bit": 1, "bits": 1}
_BIT_UNITS.update({p + "b": f for p, f in _PREFIXES})
#: bit unit -> the byte unit with the same prefix
_BYTE_NAME_OF_BIT = {"b": "B", "bit": "B", "bits": "B"}
_BYTE_NAME_OF_BIT.update({p + "b": p + "B" for p, _ in _PREFIXES})
#: time units -> seconds
_TIME_UNITS: dict[str, Fraction] = {
    "s": Fraction(1),
    "ms": Fraction(1, 10**3),
    "us": Fraction(1, 10**6),
    "\u00b5s": Fraction(1, 10**6),  # MICRO SIGN
    "\u03bcs": Fraction(1, 10**6),  # GREEK SMALL LETTER MU
    "ns": Fraction(1, 10**9),
    "ps": Fraction(1, 10**12),
}
#: bits-per-second units -> bits per second
_BPS_UNITS: dict[str, int] = {"bps": 1}
_BPS_UNITS.update({p + "bps": f for p, f in _DECIMAL_PREFIXES})
#: ambiguous size units -> what they would count
_AMBIGUOUS_SIZES = {"KB": "B", "Kb": "bits"}

#: per dimension: base unit, an example unit for hints, and the noun with its article
_BASE = {_SIZE: "B", _TIME: "s", _RATE: "B/s", _INVERSE: "s/B"}
_EXAMPLE_UNIT = {_SIZE: "MB", _TIME: "us", _RATE: "GB/s", _INVERSE: "ns/B"}
_EXAMPLE = {_SIZE: "64 MiB", _TIME: "5 us", _RATE: "100 Gb/s", _INVERSE: "0.08 ns/B"}
_ARTICLE = {
    _SIZE: "a size",
    _TIME: "a time",
    _RATE: "a rate",
    _INVERSE: "an inverse rate",
}
_ACCEPTED = {
    _SIZE: "B, kB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB",
    _TIME: "s, ms, us (or \u00b5s), ns, ps",
    _RATE: "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s, b/s, kb/s, Mb/s, "
    "Gb/s, Tb/s, bps, kbps, Mbps, Gbps, Tbps (any time unit may follow the slash)",
    _INVERSE: "s/B, ms/B, us/B, ns/B, ps/B (any size unit may follow the slash)",
}
#: common spellings that are not accepted, and the unit to suggest instead
_ALIASES = {
    "sec": "s",
    "secs": "s",
    "second": "s",
    "seconds": "s",
    "msec": "ms",
    "usec": "us",
    "nsec": "ns",
    "psec": "ps",
}


class _Unit:
    """What a unit token means: its dimension and its factor to base units."""

    __slots__ = ("ambiguous", "bits", "dim", "factor")

    def __init__(
        self,
        dim: str,
        factor: Fraction | None,
        *,
        bits: bool = False,
        ambiguous: bool = False,
    ) -> None:
        self.dim = dim
        self.factor = factor  # None when ambiguous
        self.bits = bits  # the unit counts bits
        self.ambiguous = ambiguous


class _UnitTable:
    """Every unit token and its meaning.  The simple units (sizes, times, bit rates) are made when the
    table is; a compound one (``GB/s``, ``ns/B``: a size unit by a time unit, about 700 of them) the
    first time it is looked up, as its two parts say.  ``items`` lists them all."""

    __slots__ = ("_sizes", "_table")

    def __init__(self) -> None:
        self._sizes: dict[str, tuple[Fraction, bool]] = {}
        for name, f in _BYTE_UNITS.items():
            self._sizes[name] = (Fraction(f), False)
        for name, f in _BIT_UNITS.items():
            self._sizes[name] = (Fraction(f, 8), True)
        table: dict[str, _Unit] = {name: _Unit(_SIZE, factor, bits=bits)
                                   for name, (factor, bits) in self._sizes.items()}
        for name, t in _TIME_UNITS.items():
            table[name] = _Unit(_TIME, t)
        for name, f in _BPS_UNITS.items():
            table[name] = _Unit(_RATE, Fraction(f, 8), bits=True)
        for name in _AMBIGUOUS_SIZES:
            table[name] = _Unit(_SIZE, None, ambiguous=True)
        self._table = table

    def get(self, token: str) -> _Unit | None:
        unit = self._table.get(token)
        if unit is None and token.count("/") == 1:
            unit = self._compound(*token.split("/"))
            if unit is not None:
                self._table[token] = unit
        return unit

    def _compound(self, left: str, right: str) -> _Unit | None:
        if right in _TIME_UNITS:  # a rate: size per time
            if left in _AMBIGUOUS_SIZES:
                return _Unit(_RATE, None, ambiguous=True)
            if left in self._sizes:
                factor, bits = self._sizes[left]
                return _Unit(_RATE, factor / _TIME_UNITS[right], bits=bits)
        if left in _TIME_UNITS:  # a time per size
            if right in _AMBIGUOUS_SIZES:
                return _Unit(_INVERSE, None, ambiguous=True)
            if right in self._sizes:
                factor, bits = self._sizes[right]
                return _Unit(_INVERSE, _TIME_UNITS[left] / factor, bits=bits)
        return None

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __getitem__(self, token: str) -> _Unit:
        unit = self.get(token)
        if unit is None:
            raise KeyError(token)
        return unit

    def items(self) -> list[tuple[str, _Unit]]:
        """Every token: each size unit followed by its compounds, then times, bit rates and the ambiguous
        sizes with theirs."""
        tokens: list[str] = []
        for name in self._sizes:
            tokens.append(name)
            for tname in _TIME_UNITS:
                tokens += [f"{name}/{tname}", f"{tname}/{name}"]
        tokens += [*_TIME_UNITS, *_BPS_UNITS]
        for name in _AMBIGUOUS_SIZES:
            tokens.append(name)
            for tname in _TIME_UNITS:
                tokens += [f"{name}/{tname}", f"{tname}/{name}"]
        return [(t, self[t]) for t in tokens]


@cache
def _units() -> _UnitTable:
    """Every unit token and its meaning (made on the first unit parsed: a command given only whole
    numbers never needs it)."""
    return _UnitTable()


@cache
def _suggestion_keys() -> dict[str, dict[str, list[str]]]:
    """Per dimension: lower-cased accepted token -> the tokens spelled that way."""
    keys: dict[str, dict[str, list[str]]] = {d: {} for d in _BASE}
    for name, unit in _units().items():
        if unit.ambiguous or (unit.dim == _SIZE and unit.bits):
            continue  # never suggest a unit that is refused anyway
        keys[unit.dim].setdefault(name.lower(), []).append(name)
    return keys


# --------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------

_NUMBER_RE = re.compile(
    r"""
    (?P<sign>[+-]?)
    (?:
        (?P<int>[0-9]+)(?:\.(?P<frac>[0-9]*))?
      | \.(?P<frac_only>[0-9]+)
    )
    (?:[eE](?P<esign>[+-]?)(?P<exp>[0-9]+))?
    """,
    re.VERBOSE,
)
_NONFINITE_RE = re.compile(r"[+-]?(?:nan|inf(?:inity)?)(?![a-z])", re.IGNORECASE)
_SLASH_RE = re.compile(r"\s*/\s*")
_BAD_NUMBER_TAIL_RE = re.compile(r"[0-9._]|[eE][+-]?(?:[0-9.]|$|\s)")
_BPS_TYPO_RE = LazyPattern(r"(k|K|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?Bps")


def _show(value: object) -> str:
    """Return ``repr(value)``, shortened when long, for an error message."""
    text = repr(value)
    if len(text) <= 80:
        return text
    if isinstance(value, str):
        return repr(value[:60]) + "..."
    return text[:77] + "..."


def _number_from_match(m: re.Match[str], shown: str) -> Fraction:
    int_part = m.group("int") or ""
    frac_part = m.group("frac") or m.group("frac_only") or ""
    exp_text = (m.group("exp") or "0").lstrip("0") or "0"
    if len(exp_text) > 3 or int(exp_text) > _MAX_EXPONENT:
        raise UnitError(
            f"{shown} has an exponent out of range; "
            f"exponents must be between -{_MAX_EXPONENT} and {_MAX_EXPONENT}"
        )
    if len(int_part) + len(frac_part) > _MAX_DIGITS:
        raise UnitError(
            f"{shown} has too many digits; use at most {_MAX_DIGITS} digits, "
            "or an exponent such as 1.5e9"
        )
    exp = int(exp_text)
    if m.group("esign") == "-":
        exp = -exp
    exp -= len(frac_part)
    mantissa = int(int_part + frac_part)
    value = Fraction(mantissa * 10**exp) if exp >= 0 else Fraction(mantissa, 10**-exp)
    return -value if m.group("sign") == "-" else value


_SPELT_RE = LazyPattern(r"(?<![A-Za-z])(k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?(bits?|[Bb]ytes?)(?![A-Za-z])")


def _unspelt(unit: str) -> str:
    """*unit* with spelt-out bits and bytes and time names abbreviated: ``Gbit/sec`` -> ``Gb/s``."""
    short = _SPELT_RE.sub(lambda m: (m.group(1) or "") + ("b" if m.group(2).startswith("bit") else "B"), unit)
    left, slash, right = short.partition("/")
    return f"{_ALIASES.get(left, left)}{slash}{_ALIASES.get(right, right)}"


def _suggest(unit: str, dim: str) -> list[str]:
    """Return accepted tokens of *dim* close to *unit*, best first (maybe none)."""
    alias = _ALIASES.get(unit)
    if alias is not None:
        return [alias] if _units()[alias].dim == dim else []
    if dim == _RATE:
        bps = _BPS_TYPO_RE.fullmatch(unit)
        if bps:
            prefix = bps.group(1) or ""
            if prefix == "K":
                return ["kB/s", "KiB/s", "kbps"]
            if "i" in prefix:
                return [prefix + "B/s"]
            return [prefix + "B/s", prefix + "bps"]
    spelt = _unspelt(unit)
    known = _units().get(spelt)
    if spelt != unit and known is not None and known.dim == dim and not known.ambiguous:
        return [spelt]  # a spelt-out bit or byte, e.g. Gbit/s -> Gb/s, GByte -> GB
    if dim in (_RATE, _INVERSE) and "/" in unit:
        # a spelt-out time part, e.g. GB/sec -> GB/s
        left, _, right = unit.partition("/")
        if dim == _RATE:
            fixed = f"{left}/{_ALIASES.get(right, right)}"
        else:
            fixed = f"{_ALIASES.get(left, left)}/{right}"
        known = _units().get(fixed)
        if known is not None and known.dim == dim and not known.ambiguous:
            return [fixed]
    if len(unit) > 40:
        return []
    if dim != _RATE and ("/" in unit) != (dim == _INVERSE):
        return []  # a size or time is not close to a compound unit, nor the reverse
    keys = _suggestion_keys()[dim]
    key = unit.lower()
    if key in keys:
        return list(keys[key])  # a case error: offer every spelling
    close = did_you_mean(unit, keys)
    if close is None:
        return []
    tokens = keys[close]
    import difflib  # only on the error path

    ratios = [difflib.SequenceMatcher(None, unit, t).ratio() for t in tokens]
    best = max(ratios)
    return [t for t, r in zip(tokens, ratios, strict=True) if r == best]


def _unknown_unit(shown: str, unit: str, dim: str) -> UnitError:
    choices = _suggest(unit, dim)
    if choices:
        options = " or ".join(repr(c) for c in choices)
        case = (
            "units are case-sensitive; " if unit.lower() == choices[0].lower() else ""
        )
        hint = f"{case}did you mean {options}?"
    else:
        hint = f"{_ARTICLE[dim]} takes one of {_ACCEPTED[dim]}"
    return UnitError(f"{shown} has an unknown unit {_show(unit)}; {hint}")


def _ambiguous(shown: str, number: str, sep: str, unit: str) -> UnitError:
    if "KB" in unit:
        dec, binary = unit.replace("KB", "kB"), unit.replace("KB", "KiB")
    else:
        dec, binary = unit.replace("Kb", "kb"), unit.replace("Kb", "Kib")
    if unit in _AMBIGUOUS_SIZES:
        what = _AMBIGUOUS_SIZES[unit]
        notes = (f" (1000 {what})", f" (1024 {what})")
    else:
        notes = (" (k = 1000)", " (Ki = 1024)")
    return UnitError(
        f"{shown} is ambiguous; write {number}{sep}{dec}{notes[0]} "
        f"or {number}{sep}{binary}{notes[1]}"
    )


def _wrong_dimension(
    shown: str, number: str, *, sep: str, value: Fraction | None, got: str, dim: str
) -> UnitError:
    hint = f"write {_ARTICLE[dim]} such as {number}{sep}{_EXAMPLE_UNIT[dim]}"
    if value is not None and value > 0 and {got, dim} == {_RATE, _INVERSE}:
        reciprocal = 1 / value
        if dim == _RATE:
            hint = f"write its reciprocal, {_format_rate_bytes(reciprocal, 4)}"
        else:
            hint = f"write its reciprocal, {format_inverse_rate(reciprocal)}"
    return UnitError(f"{shown} is {_ARTICLE[got]}, not {_ARTICLE[dim]}; {hint}")


def _in_bits(shown: str, number: str, num: Fraction, sep: str, unit: str) -> UnitError:
    byte_unit = _BYTE_NAME_OF_BIT[unit]
    eighth = format_number(num / 8, digits=15)
    return UnitError(
        f"{shown} is in bits; sizes are bytes: write {eighth}{sep}{byte_unit} "
        f"({number}{sep}{unit} / 8) or, if you meant bytes, {number}{sep}{byte_unit}"
    )


_BARE_HINT = {_TIME: ("us", "s"), _RATE: ("GB/s", "B/s"), _INVERSE: ("ns/B", "s/B")}


def _parse_text(text: str, dim: str, require_unit: bool = False) -> Fraction:
    """Parse a string quantity of dimension *dim* to base units (no sign checks).

    With *require_unit*, a bare number other than 0 is refused (the command
    line's rule for times and rates: a bare ``5`` is too easily 5 µs meant as 5 s).
    """
    shown = _show(text)
    what = _ARTICLE[dim]
    body = half_width(text).strip()
    if not body:
        raise UnitError(f"{shown} is empty; write {what} such as {_EXAMPLE[dim]}")
    if _NONFINITE_RE.match(body):
        raise UnitError(
            f"{shown} is not a finite number; write {what} such as {_EXAMPLE[dim]}"
        )
    m = _NUMBER_RE.match(body)
    if m is None:
        unit = _SLASH_RE.sub("/", body)
        known = _units().get(unit)
        if known is not None or body[0].isalpha():
            example = f"1 {unit}" if known is not None and known.dim == dim else _EXAMPLE[dim]
            raise UnitError(
                f"{shown} has no number; write a number before the unit, e.g. {example}"
            )
        raise UnitError(
            f"{shown} does not start with a number; write {what} such as {_EXAMPLE[dim]}"
        )
    number = m.group(0)
    rest = body[m.end() :]
    stripped = rest.lstrip()
    if stripped.startswith(","):
        fixed = " ".join(body.replace(",", ".", 1).split())
        example = fixed if len(fixed) <= 40 else _EXAMPLE[dim]
        raise UnitError(
            f"{shown} has a comma in the number; use a decimal point: {example} "
            "(and no thousands separators)"
        )
    if _BAD_NUMBER_TAIL_RE.match(rest) or (stripped and stripped[0] in "0123456789._"):
        raise UnitError(
            f"{shown} has a malformed number; write one number such as 1.5 or 2e6, "
            f"then the unit, e.g. {_EXAMPLE[dim]}"
        )
    num = _number_from_match(m, shown)
    if not stripped:
        if require_unit and num != 0:
            small, base = _BARE_HINT[dim]
            raise UnitError(f"{shown} has no unit: write {number}{small} or {number}{base}")
        return num
    sep = " " if rest != stripped else ""
    unit_text = _SLASH_RE.sub("/", stripped)
    known = _units().get(unit_text)
    if known is None:
        raise _unknown_unit(shown, unit_text, dim)
    value = None if known.factor is None else num * known.factor
    if known.dim != dim:
        raise _wrong_dimension(shown, number, sep=sep, value=value, got=known.dim, dim=dim)
    if value is None:
        raise _ambiguous(shown, number, sep, unit_text)
    if dim == _SIZE and known.bits:
        raise _in_bits(shown, number, num, sep, unit_text)
    return value


def _parse(text: object, dim: str, allow_zero: bool, require_unit: bool = False) -> Fraction:
    value = (_parse_text(text, dim, require_unit) if isinstance(text, str)
             else to_fraction(text, what=_ARTICLE[dim], example=_EXAMPLE[dim], error=UnitError))
    shown = _show(text)
    what = _ARTICLE[dim]
    if value < 0:
        bound = ">= 0" if allow_zero else "positive"
        raise UnitError(f"{shown} is negative; {what} must be {bound}")
    if value == 0 and not allow_zero:
        raise UnitError(
            f"{shown} is zero; {what} must be positive, e.g. {_EXAMPLE[dim]}"
        )
    if value > _MAX_MAGNITUDE:
        raise UnitError(
            f"{shown} is too large; {what} must be at most 1e30 {_BASE[dim]}"
        )
    return value


def is_unit(text: str) -> bool:
    """Whether *text* is a unit's name alone (``MiB``, ``us``, ``GB/s``): the tail of a quantity whose
    number and unit a shell split at a space (``-n 64 MiB``).

    >>> is_unit("MiB"), is_unit("GB / s"), is_unit("ring")
    (True, True, False)
    """
    return _SLASH_RE.sub("/", text.strip()) in _units()


def parse_size(text: str | float | Fraction, *, allow_zero: bool = True) -> Fraction:
    """Parse a data size to bytes.

    Parameters
    ----------
    text : str, int, Fraction or float
        A quantity such as ``"64 MiB"``, ``"1.5e3 B"`` or ``"4GB"``; a bare
        number (string or numeric) is in bytes.
    allow_zero : bool, default True
        Whether a size of zero is accepted.

    Returns
    -------
    Fraction
        The size in bytes, exact for exact decimal input.

    Raises
    ------
    UnitError
        If *text* is not a valid size: unknown or ambiguous unit (``KB``), a
        size in bits (``Mb``), another dimension, negative, not finite, or
        above 1e30 B.

    Examples
    --------
    >>> parse_size("64MiB")
    Fraction(67108864, 1)
    >>> parse_size("1.5 kB")
    Fraction(1500, 1)
    >>> parse_size(4096)
    Fraction(4096, 1)
    >>> parse_size("12 KB")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '12 KB' is ambiguous; write 12 kB (1000 B) or 12 KiB (1024 B)
    """
    return _parse(text, _SIZE, allow_zero)


def parse_time(
    text: str | float | Fraction, *, allow_zero: bool = True, require_unit: bool = False
) -> Fraction:
    """Parse a duration to seconds.

    Parameters
    ----------
    text : str, int, Fraction or float
        A quantity such as ``"5 us"``, ``"5µs"`` or ``"1.2e-3 s"``; a bare
        number (string or numeric) is in seconds.
    allow_zero : bool, default True
        Whether a duration of zero is accepted.
    require_unit : bool, default False
        Refuse a bare number string other than ``"0"`` (the command line sets it).

    Returns
    -------
    Fraction
        The duration in seconds, exact for exact decimal input.

    Raises
    ------
    UnitError
        If *text* is not a valid duration.

    Examples
    --------
    >>> parse_time("5us")
    Fraction(1, 200000)
    >>> parse_time("20.96 ms")
    Fraction(131, 6250)
    >>> parse_time("5", require_unit=True)
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '5' has no unit: write 5us or 5s
    >>> parse_time("5MB")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '5MB' is a size, not a time; write a time such as 5us
    """
    return _parse(text, _TIME, allow_zero, require_unit)


def parse_rate(
    text: str | float | Fraction, *, allow_zero: bool = False, require_unit: bool = False
) -> Fraction:
    """Parse a bandwidth to bytes per second.

    Bit rates (``Gb/s``, ``Gbps``) are divided by 8.

    Parameters
    ----------
    text : str, int, Fraction or float
        A quantity such as ``"12.5 GB/s"``, ``"100 Gb/s"``, ``"100Gbps"`` or
        ``"3 MiB/ms"``; a bare number (string or numeric) is in bytes per
        second.
    allow_zero : bool, default False
        Whether a rate of zero is accepted.
    require_unit : bool, default False
        Refuse a bare number string (the command line sets it).

    Returns
    -------
    Fraction
        The rate in bytes per second, exact for exact decimal input.

    Raises
    ------
    UnitError
        If *text* is not a valid rate, or is zero and *allow_zero* is false.

    Examples
    --------
    >>> parse_rate("100 Gb/s")
    Fraction(12500000000, 1)
    >>> parse_rate("100Gbps") == parse_rate("12.5 GB/s")
    True
    >>> parse_rate("0")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '0' is zero; a rate must be positive, e.g. 100 Gb/s
    """
    return _parse(text, _RATE, allow_zero, require_unit)


class Quantity(NamedTuple):
    """A number with the dimension its unit gave it, in base units (see :func:`parse_quantity`)."""

    value: Fraction
    dimension: str  # "size", "time", "rate", "inverse rate" or "number"
    unit: str  # the unit as written ("" for a bare number)
    bits: bool  # the unit counted bits (the value is converted to bytes all the same)


_RATIO_RE = LazyPattern(r"([+-]?[0-9]{1,30})\s*/\s*([1-9][0-9]{0,29})")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_POWER_RE = LazyPattern("10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})")
#: a power of ten as written by hand: 3.2×10^-5, 3.2 x 10^-5, 3.2·10⁻⁵, 3.2*10**-5 (the mantissa optional)
_TIMES_TEN_RE = LazyPattern(
    r"(?P<m>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?\s*(?(m)[×x·*]\s*)10\s*(?:\^|\*\*)\s*"
    r"(?P<e>[+-]?[0-9]{1,3})(?![0-9.])")
_THOUSANDS_RE = LazyPattern(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?(?![0-9,])")
_DECIMAL_COMMA_RE = LazyPattern(r"([+-]?[0-9]+),([0-9]+)(?![0-9,])")
_SPELT_PREFIXES = {"kilo": "k", "mega": "M", "giga": "G", "tera": "T", "peta": "P",
                   "kibi": "Ki", "mebi": "Mi", "gibi": "Gi", "tebi": "Ti", "pebi": "Pi"}
_SPELT_TIMES = {"": "s", "milli": "ms", "micro": "us", "µ": "us", "u": "us", "m": "ms", "nano": "ns",
                "n": "ns", "pico": "ps", "p": "ps"}
_WORD_UNIT_RE = LazyPattern(r"(?P<prefix>[a-zµ]*?)(?P<base>bytes?|bits?|seconds?|secs?)")


def _typed_unit(unit: str) -> str:
    """A unit as students write it, in costmodel's notation: ``megabytes`` -> ``MB``,
    ``gigabits per second`` -> ``Gb/s``, ``GBps`` -> ``GB/s``, ``usec`` -> ``us``, ``Gbit/s`` -> ``Gb/s``.

    Units not written one of these ways are returned as they are.
    """
    if unit in _units():
        return unit
    return "/".join(_typed_part(part) for part in re.split(r"\s*/\s*|\s+per\s+", unit, maxsplit=1))


def _typed_part(part: str) -> str:
    word = _WORD_UNIT_RE.fullmatch(part if not part.istitle() else part.lower())  # Megabytes
    if word is not None:
        prefix, base = word.group("prefix"), word.group("base")
        if base.startswith("sec") and prefix in _SPELT_TIMES:
            return _SPELT_TIMES[prefix]
        if not base.startswith("sec") and (prefix in _SPELT_PREFIXES or prefix == ""):
            return _SPELT_PREFIXES.get(prefix, "") + ("B" if base.startswith("byte") else "b")
    short = _unspelt(part)
    bps = _BPS_TYPO_RE.fullmatch(short)
    if bps is not None and bps.group(1) != "K":  # GBps: the capital B says bytes
        return f"{bps.group(1) or ''}B/s"
    return short


def _typed(body: str) -> tuple[str, str]:
    """The number of a typed answer made plain, and the rest: the Unicode minus, a power of ten
    written ×10^-5 or ·10⁻⁵, thousands separators (``1,240``)."""
    power = _TIMES_TEN_RE.match(body)
    if power is not None:
        return f"{power.group('m') or '1'}e{power.group('e')}", body[power.end():]
    grouped = _THOUSANDS_RE.match(body)
    if grouped is not None:
        return grouped.group(0).replace(",", ""), body[grouped.end():]
    m = _NUMBER_RE.match(body)
    return (body, "") if m is None else (m.group(0), body[m.end():])

NUMBER = "number"
"""The dimension of a bare number (a count, a ratio, a loss)."""


def unit_of(unit: str) -> tuple[str, Fraction]:
    """The dimension of a unit and its factor to base units; ``""`` is a plain number, ``%`` a hundredth.

    >>> unit_of("MiB"), unit_of("ms"), unit_of("%")
    (('size', Fraction(1048576, 1)), ('time', Fraction(1, 1000)), ('number', Fraction(1, 100)))
    """
    if unit in ("", "1"):
        return NUMBER, Fraction(1)
    if unit == "%":
        return NUMBER, Fraction(1, 100)
    known = _units().get(_SLASH_RE.sub("/", unit.strip()))
    if known is None or known.factor is None:
        raise UnitError(f"{_show(unit)} is not a unit costmodel knows; use e.g. B, MB, MiB, ms, GB/s or ns/B")
    return known.dim, known.factor


def parse_quantity(text: str | float | Fraction) -> Quantity:
    """Parse a number with any unit (or none), keeping its dimension: for grading typed answers.

    Unlike the other parsers, the dimension is found, not required; sizes in
    bits are accepted and converted to bytes (``bits`` records that), a
    trailing ``%`` makes a hundredth, a ratio of integers (``1/3``) is a plain
    number, and negative values are allowed.

    It also reads numbers and units as students write them, which the command
    line's options do not: thousands separators (``1,240 MB``; a decimal comma
    such as ``32,5 MB`` is refused with a hint), a power of ten written
    ``3.2×10^-5``, ``3.2 x 10^-5`` or ``3.2·10⁻⁵``, the Unicode minus, units
    spelt out (``megabytes``, ``microseconds``, ``gigabits per second``),
    ``Gbit/s``, ``GBps`` (bytes, the capital B says), ``usec`` and ``GB/sec``.
    ``KB`` stays refused as ambiguous.

    Examples
    --------
    >>> parse_quantity("150 MB")
    Quantity(value=Fraction(150000000, 1), dimension='size', unit='MB', bits=False)
    >>> parse_quantity("1200Mb").value, parse_quantity("27%").value, parse_quantity("-0.5").dimension
    (Fraction(150000000, 1), Fraction(27, 100), 'number')
    >>> parse_quantity("1/3").value
    Fraction(1, 3)
    >>> parse_quantity("1,240 megabytes").value, parse_quantity("3.2×10^-5 s").value
    (Fraction(1240000000, 1), Fraction(1, 31250))
    >>> parse_quantity("32,5 MB")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '32,5 MB' has a decimal comma; write 32.5 MB (a comma only separates ...
    >>> parse_quantity("12 parsecs")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '12 parsecs' has an unknown unit 'parsecs'; use e.g. MB, MiB, ms or GB/s
    """
    shown = _show(text)
    if not isinstance(text, str):
        number = to_fraction(text, what=_ARTICLE[_SIZE], example=_EXAMPLE[_SIZE], error=UnitError)
        if abs(number) > _MAX_MAGNITUDE:
            raise UnitError(f"{shown} is too large; numbers must be at most 1e30")
        return Quantity(number, NUMBER, "", False)
    body = _SUPERSCRIPT_POWER_RE.sub(lambda p: "10^" + p.group(1).translate(_SUPERSCRIPT),
                                     text.strip().removeprefix("\ufeff").replace("\u2212", "-"))
    if not body or _NONFINITE_RE.match(body):
        raise UnitError(f"{shown} is not a number; write a value such as 150 MB, 12 ms or 0.36")
    ratio = _RATIO_RE.fullmatch(body)
    if ratio is not None:  # an exact ratio of integers, a plain number: "1/3"
        return Quantity(Fraction(int(ratio.group(1)), int(ratio.group(2))), NUMBER, "", False)
    written, rest = _typed(body)
    m = _NUMBER_RE.fullmatch(written)
    if m is None:
        raise UnitError(f"{shown} does not start with a number; write a value such as 150 MB, 12 ms or 0.36")
    comma = _DECIMAL_COMMA_RE.match(body)
    if comma is not None and rest.lstrip().startswith(","):
        fixed = f"{comma.group(1)}.{comma.group(2)}{body[comma.end():]}"
        raise UnitError(f"{shown} has a decimal comma; write {fixed} (a comma only separates thousands, "
                        "as in 1,240 MB)")
    unit = _typed_unit(_SLASH_RE.sub("/", rest.strip()))
    if rest.lstrip().startswith(",") or _BAD_NUMBER_TAIL_RE.match(rest) or unit[:1] in tuple("0123456789._"):
        raise UnitError(f"{shown} has a malformed number; write one number such as 1.5 or 2e6, then the unit")
    number = _number_from_match(m, shown)
    if unit in ("KB", "Kb") or unit.startswith(("KB/", "Kb/")) or unit.endswith(("/KB", "/Kb")):
        raise UnitError(f"{shown} uses the ambiguous unit {unit}; write kB (1000 B) or KiB (1024 B)")
    try:
        dimension, factor = unit_of(unit)
    except UnitError:
        raise UnitError(f"{shown} has an unknown unit {unit!r}; use e.g. MB, MiB, ms or GB/s") from None
    value = number * factor
    if abs(value) > _MAX_MAGNITUDE:
        raise UnitError(f"{shown} is too large; values must be at most 1e30 in base units")
    known = _units().get(unit)
    return Quantity(value, dimension, unit, bool(known is not None and known.bits))


def parse_inverse_rate(
    text: str | float | Fraction, *, allow_zero: bool = True, require_unit: bool = False
) -> Fraction:
    """Parse an inverse bandwidth (the per-byte cost, β) to seconds per byte.

    Per-bit values (``ns/b``) are multiplied by 8.

    Parameters
    ----------
    text : str, int, Fraction or float
        A quantity such as ``"0.08 ns/B"``, ``"1 s/GB"`` or ``"0.01 ns/b"``;
        a bare number (string or numeric) is in seconds per byte.
    allow_zero : bool, default True
        Whether zero is accepted.
    require_unit : bool, default False
        Refuse a bare number string other than ``"0"`` (the command line sets it).

    Returns
    -------
    Fraction
        The inverse rate in seconds per byte, exact for exact decimal input.

    Raises
    ------
    UnitError
        If *text* is not a valid inverse rate.

    Examples
    --------
    >>> parse_inverse_rate("0.08ns/B")
    Fraction(1, 12500000000)
    >>> parse_inverse_rate("1 ns/b") == parse_inverse_rate("8 ns/B")
    True
    >>> parse_inverse_rate("12.5 GB/s")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnitError: '12.5 GB/s' is a rate, not an inverse rate; write its reciprocal, 0.08 ns/B
    """
    return _parse(text, _INVERSE, allow_zero, require_unit)


# --------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------


def _pow10(e: int) -> Fraction:
    return Fraction(10**e) if e >= 0 else Fraction(1, 10**-e)


def floor_log10(x: Fraction) -> int:
    """Return floor(log10(x)) exactly, for x > 0.

    >>> floor_log10(Fraction(999, 1000)), floor_log10(Fraction(1000))
    (-1, 3)
    """
    return _floor_log10(x.numerator, x.denominator)


def _at_least_pow10(n: int, d: int, e: int) -> bool:
    """Whether n/d >= 10**e (n, d > 0), in integers."""
    return n >= d * 10**e if e >= 0 else n * 10**-e >= d


def _floor_log10(n: int, d: int) -> int:
    """floor(log10(n/d)) for positive integers, exactly (in integers: a Fraction per step costs a gcd)."""
    e = math.floor((n.bit_length() - d.bit_length()) * 0.30102999566398120)
    while not _at_least_pow10(n, d, e):
        e -= 1
    while _at_least_pow10(n, d, e + 1):
        e += 1
    return e


def _round_sig(x: Fraction, digits: int) -> tuple[int, int]:
    """Round *x* to *digits* significant digits, half away from zero.

    Returns ``(q, e)`` with ``x ~= q * 10**(e - digits + 1)`` and
    ``10**(digits-1) <= |q| < 10**digits``; ``(0, 0)`` for zero.
    """
    return _round_ratio(x.numerator, x.denominator, digits)


def _round_ratio(numerator: int, denominator: int, digits: int) -> tuple[int, int]:
    """:func:`_round_sig` of numerator/denominator (denominator > 0), in integers."""
    if numerator == 0:
        return 0, 0
    n, d = abs(numerator), denominator
    e = _floor_log10(n, d)
    k = digits - 1 - e  # q = floor(n/d × 10**k + 1/2)
    q = (2 * n * 10**k + d) // (2 * d) if k >= 0 else (2 * n + d * 10**-k) // (2 * d * 10**-k)
    if q >= 10**digits:  # rounded up to the next power of ten
        q //= 10
        e += 1
    return (q if numerator > 0 else -q), e


def _rounded(x: Fraction, digits: int) -> Fraction:
    q, e = _round_sig(x, digits)
    return q * _pow10(e - digits + 1)


def _render(q: int, e: int, digits: int) -> str:
    """Write ``q * 10**(e - digits + 1)`` without trailing zeros."""
    if q == 0:
        return "0"
    sign = "-" if q < 0 else ""
    s = str(abs(q)).rstrip("0") or "0"
    if -3 <= e < 7:
        point = e + 1  # digits before the decimal point
        if point <= 0:
            return f"{sign}0.{'0' * -point}{s}"
        if point >= len(s):
            return f"{sign}{s}{'0' * (point - len(s))}"
        return f"{sign}{s[:point]}.{s[point:]}"
    mantissa = s[0] + ("." + s[1:] if len(s) > 1 else "")
    return f"{sign}{mantissa}e{e}"


def _check_digits(digits: object) -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"{digits!r} is not a valid number of digits; use an int >= 1")
    return digits


def _scaled(
    x: Fraction, ladder: tuple[tuple[str, Fraction], ...], digits: int, start: int
) -> str:
    """Format *x* in the unit of *ladder* (ascending) that keeps the mantissa in [1, step).

    In integers: x/factor and the rounded value against the next step, cross-multiplied (a Fraction
    per operation costs a gcd, and a table formats a value per cell)."""
    n, d = x.numerator, x.denominator
    an = abs(n)
    i = start
    while i + 1 < len(ladder) and ladder[i + 1][1].numerator * d <= an * ladder[i + 1][1].denominator:
        i += 1
    while True:
        name, factor = ladder[i]
        q, e = _round_ratio(n * factor.denominator, d * factor.numerator, digits)
        if i + 1 < len(ladder):
            step = ladder[i + 1][1]  # |q| × 10**s × factor >= step, s = e − digits + 1
            s = e - digits + 1
            left = abs(q) * factor.numerator * step.denominator
            right = step.numerator * factor.denominator
            if (left * 10**s >= right) if s >= 0 else (left >= right * 10**-s):
                i += 1
                continue
        return f"{_render(q, e, digits)} {name}"


def _ladder(
    names_factors: Sequence[tuple[str, int | Fraction]],
) -> tuple[tuple[str, Fraction], ...]:
    return tuple((n, Fraction(f)) for n, f in names_factors)


_DECIMAL_BYTES = _ladder([("B", 1)] + [(p + "B", f) for p, f in _DECIMAL_PREFIXES])
_BINARY_BYTES = _ladder([(p + "B", f) for p, f in _BINARY_PREFIXES])
_TIMES = _ladder(
    [
        ("ps", Fraction(1, 10**12)),
        ("ns", Fraction(1, 10**9)),
        ("\u00b5s", Fraction(1, 10**6)),
        ("ms", Fraction(1, 10**3)),
        ("s", 1),
    ]
)
_BYTE_RATES = tuple((n + "/s", f) for n, f in _DECIMAL_BYTES)
_BIT_RATES = tuple((n[:-1] + "b/s", f) for n, f in _DECIMAL_BYTES)
_INVERSE_RATES = tuple((n + "/B", f) for n, f in _TIMES)


def format_share(x: float | Fraction, *, digits: int = 3) -> str:
    """A share (0.5 is half) as a percentage with *digits* significant digits: ``50%``.

    >>> format_share(Fraction(1, 3)), format_share(Fraction(1737, 2039), digits=4)
    ('33.3%', '85.19%')
    """
    return f"{format_number(100 * x, digits=digits)}%"


def format_count(x: float | Fraction, *, digits: int = 4) -> str:
    """A count (tokens/s, parameters) to *digits* significant digits, its thousands grouped as the
    tables of counts group them: ``505,700``; below 1000, or 10¹⁵ and up, as :func:`format_number`.

    >>> format_count(505712.4), format_count(Fraction(2019437, 1)), format_count(812.25)
    ('505,700', '2,019,000', '812.3')
    """
    exact = Fraction(x)
    if not 1000 <= abs(exact) < 10**15:
        return format_number(x, digits=digits)
    rounded = _rounded(exact, digits)
    return f"{int(rounded):,}" if rounded.denominator == 1 else format_number(x, digits=digits)


def format_number(x: float | Fraction, *, digits: int = 4) -> str:
    """Write *x* with *digits* significant digits and no trailing zeros.

    Rounds half away from zero.  Values with ``1e-3 <= |x| < 1e7`` (after
    rounding) are written plainly, others as ``<mantissa>e<exponent>``, which
    the parsers of this module read back.

    Parameters
    ----------
    x : int, Fraction or float
        A finite number.
    digits : int, default 4
        Significant digits to keep.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If *x* is not finite or *digits* is not a positive int.

    Examples
    --------
    >>> format_number(117.647)
    '117.6'
    >>> format_number(Fraction(2096, 100))
    '20.96'
    >>> format_number(8.0)
    '8'
    >>> format_number(0)
    '0'
    >>> format_number(1.5e8), format_number(0.00025)
    ('1.5e8', '2.5e-4')
    """
    digits = _check_digits(digits)
    q, e = _round_sig(to_fraction(x), digits)
    return _render(q, e, digits)


def format_exact(x: float | Fraction, *, approx: bool = False, decimal: bool = False, digits: int = 6) -> str:
    """Write an exact number exactly: ``4``, ``13/3``, ``-1/7``; the one way costmodel shows a Fraction.

    A float (a value already computed in floating point) is written by its ``repr``.
    With *decimal*, a fraction with a terminating decimal expansion is written as
    that decimal (``0.25``; ``1/3`` stays a ratio).  With *approx*, a fraction
    written as a ratio is followed by ``≈`` and its value to *digits* significant
    digits (:func:`format_number`).

    Examples
    --------
    >>> format_exact(Fraction(13, 3)), format_exact(Fraction(4)), format_exact(7), format_exact(0.5)
    ('13/3', '4', '7', '0.5')
    >>> format_exact(Fraction(3, 11), approx=True), format_exact(Fraction(8, 2), approx=True)
    ('3/11 ≈ 0.272727', '4')
    >>> format_exact(Fraction(-5, 2), decimal=True), format_exact(Fraction(1, 3), decimal=True)
    ('-2.5', '1/3')
    """
    if isinstance(x, float):
        return repr(x)
    q = to_fraction(x)
    shown = decimal_text(q) if decimal or q.denominator == 1 else None
    if shown is not None:
        return shown
    text = f"{q.numerator}/{q.denominator}"
    return f"{text} ≈ {format_number(q, digits=digits)}" if approx else text


def _format_nonzero(value: float | Fraction, digits: object, zero: str,
                    write: Callable[[Fraction, int], str]) -> str:
    """Check *digits*, then write *value* as *zero* when it is 0, else as ``write(x, digits)``."""
    checked = _check_digits(digits)
    x = to_fraction(value)
    return zero if x == 0 else write(x, checked)


def format_size(n_bytes: float | Fraction, *, digits: int = 4) -> str:
    """Write a size in bytes with a decimal unit, and its binary form when useful.

    The decimal unit (B, kB, MB, GB, TB, PB) keeps the mantissa in
    [1, 1000).  From 1000 B up, `` = <binary form>`` (KiB ... PiB) is
    appended, except when the decimal form is exact and the binary form is
    not (``1 GB`` stays ``1 GB``).

    Parameters
    ----------
    n_bytes : int, Fraction or float
        The size in bytes.
    digits : int, default 4
        Significant digits.

    Returns
    -------
    str

    Examples
    --------
    >>> format_size(512)
    '512 B'
    >>> format_size(Fraction(1, 2))
    '0.5 B'
    >>> format_size(8192)
    '8.192 kB = 8 KiB'
    >>> format_size(67108864)
    '67.11 MB = 64 MiB'
    >>> format_size(Fraction(2_000_000, 17))
    '117.6 kB = 114.9 KiB'
    >>> format_size(10**9)
    '1 GB'
    """
    return _format_nonzero(n_bytes, digits, "0 B", _format_size)


def _format_size(x: Fraction, digits: int) -> str:
    text = _scaled(x, _DECIMAL_BYTES, digits, 0)
    if abs(x) < 1000:
        return text
    binary = _scaled(x, _BINARY_BYTES, digits, 0)
    dec_exact = _exact_in(x, _DECIMAL_BYTES, text, digits)
    bin_exact = _exact_in(x, _BINARY_BYTES, binary, digits)
    if dec_exact and not bin_exact:
        return text
    return f"{text} = {binary}"


def _exact_in(
    x: Fraction, ladder: tuple[tuple[str, Fraction], ...], text: str, digits: int
) -> bool:
    """Whether *text* (as made by :func:`_scaled`) states *x* exactly."""
    name = text.rsplit(" ", 1)[1]
    factor = dict(ladder)[name]
    m = x / factor
    return _rounded(m, digits) == m


def format_time(seconds: float | Fraction, *, digits: int = 4) -> str:
    """Write a duration with the unit (s, ms, µs, ns, ps) that keeps it in [1, 1000).

    Parameters
    ----------
    seconds : int, Fraction or float
        The duration in seconds.
    digits : int, default 4
        Significant digits.

    Returns
    -------
    str

    Examples
    --------
    >>> format_time(Fraction(2096, 100000))
    '20.96 ms'
    >>> format_time(5e-6)
    '5 µs'
    >>> format_time(0)
    '0 s'
    >>> format_time(3600)
    '3600 s'
    """
    return _format_nonzero(seconds, digits, "0 s", lambda x, d: _scaled(x, _TIMES, d, 0))


def _format_rate_bytes(x: Fraction, digits: int) -> str:
    return _scaled(x, _BYTE_RATES, digits, 0)


def format_rate(bytes_per_s: float | Fraction, *, digits: int = 4) -> str:
    """Write a bandwidth in decimal bytes per second, with the bit rate in parentheses.

    Parameters
    ----------
    bytes_per_s : int, Fraction or float
        The rate in bytes per second.
    digits : int, default 4
        Significant digits.

    Returns
    -------
    str

    Examples
    --------
    >>> format_rate(12.5e9)
    '12.5 GB/s (100 Gb/s)'
    >>> format_rate(Fraction(1, 8))
    '0.125 B/s (1 b/s)'
    >>> format_rate(0)
    '0 B/s'
    """
    return _format_nonzero(bytes_per_s, digits, "0 B/s",
                           lambda x, d: f"{_format_rate_bytes(x, d)} ({_scaled(8 * x, _BIT_RATES, d, 0)})")


def format_byte_rate(bytes_per_s: float | Fraction, *, digits: int = 4) -> str:
    """Write a bandwidth in decimal bytes per second alone, without :func:`format_rate`'s bit rate.

    >>> format_byte_rate(12.5e9), format_byte_rate(0)
    ('12.5 GB/s', '0 B/s')
    """
    return _format_nonzero(bytes_per_s, digits, "0 B/s", _format_rate_bytes)


_FLOP_RATES = _ladder([("FLOP/s", 1), *((p + "FLOP/s", f) for p, f in _DECIMAL_PREFIXES),
                       ("EFLOP/s", 10**18)])


def format_flop_rate(flops_per_s: float | Fraction, *, digits: int = 4) -> str:
    """Write a compute rate in FLOP/s with the decimal prefix (k … E) that keeps it in [1, 1000).

    Examples
    --------
    >>> format_flop_rate(312e12), format_flop_rate(502.0075e15), format_flop_rate(Fraction(3, 2) * 10**21)
    ('312 TFLOP/s', '502 PFLOP/s', '1500 EFLOP/s')
    >>> format_flop_rate(0)
    '0 FLOP/s'
    """
    return _format_nonzero(flops_per_s, digits, "0 FLOP/s", lambda x, d: _scaled(x, _FLOP_RATES, d, 0))


def format_inverse_rate(s_per_byte: float | Fraction, *, digits: int = 4) -> str:
    """Write an inverse bandwidth (seconds per byte), preferably in ns/B.

    ns/B is kept while the mantissa is in [0.001, 1000); smaller values use
    ps/B, larger ones µs/B, ms/B or s/B.

    Parameters
    ----------
    s_per_byte : int, Fraction or float
        The inverse rate in seconds per byte.
    digits : int, default 4
        Significant digits.

    Returns
    -------
    str

    Examples
    --------
    >>> format_inverse_rate(8e-11)
    '0.08 ns/B'
    >>> format_inverse_rate(Fraction(5, 10**13))
    '0.5 ps/B'
    >>> format_inverse_rate(Fraction(3, 10**6))
    '3 µs/B'
    >>> format_inverse_rate(0)
    '0 ns/B'
    """
    return _format_nonzero(s_per_byte, digits, "0 ns/B", _format_inverse_rate)


def _format_inverse_rate(x: Fraction, digits: int) -> str:
    ns = 1  # index of ns/B in _INVERSE_RATES
    _, e = _round_sig(x / _INVERSE_RATES[ns][1], digits)
    if e < -3:  # below 0.001 ns/B
        return _scaled(x, _INVERSE_RATES, digits, 0)
    return _scaled(x, _INVERSE_RATES, digits, ns)
