"""Property tests of costmodel.units (hypothesis)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.errors import UnitError
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

PARSERS = [parse_size, parse_time, parse_rate, parse_inverse_rate]

SIZE_UNITS = [
    "B",
    "kB",
    "MB",
    "GB",
    "TB",
    "PB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "PiB",
    "byte",
    "bytes",
]
TIME_UNITS = ["s", "ms", "us", "\u00b5s", "\u03bcs", "ns", "ps"]
BIT_UNITS = [
    "b",
    "bit",
    "bits",
    "kb",
    "Mb",
    "Gb",
    "Tb",
    "Pb",
    "Kib",
    "Mib",
    "Gib",
    "Tib",
]
RATE_UNITS = [f"{s}/{t}" for s in SIZE_UNITS + BIT_UNITS for t in TIME_UNITS] + [
    "bps",
    "kbps",
    "Mbps",
    "Gbps",
    "Tbps",
]
INVERSE_UNITS = [f"{t}/{s}" for t in TIME_UNITS for s in SIZE_UNITS + BIT_UNITS]
UNITS = {
    parse_size: SIZE_UNITS,
    parse_time: TIME_UNITS,
    parse_rate: RATE_UNITS,
    parse_inverse_rate: INVERSE_UNITS,
}

# text that looks a little like a quantity, to reach deeper than st.text() alone
quantity_like = st.builds(
    "".join,
    st.lists(
        st.sampled_from(
            [
                "1",
                "0",
                "9",
                ".",
                "e",
                "E",
                "-",
                "+",
                " ",
                ",",
                "/",
                "K",
                "i",
                "B",
                "b",
                "s",
                "M",
                "G",
                "n",
                "u",
                "\u00b5",
                "p",
                "inf",
                "nan",
                "bps",
                "e99",
            ]
        ),
        max_size=12,
    ),
)


def _check_outcome(parse, text):
    try:
        result = parse(text)
    except UnitError as exc:
        message = str(exc)
        assert message
        assert "\n" not in message
        assert not message.endswith(".")
    else:
        assert type(result) is Fraction
        assert 0 <= result <= 10**30


@settings(deadline=None, max_examples=300)
@given(st.sampled_from(PARSERS), st.text())
def test_arbitrary_text_gives_fraction_or_unit_error(parse, text):
    _check_outcome(parse, text)


@settings(deadline=None, max_examples=300)
@given(st.sampled_from(PARSERS), quantity_like)
def test_quantity_like_text_gives_fraction_or_unit_error(parse, text):
    _check_outcome(parse, text)


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=10**30))
def test_integer_bytes_round_trip(n):
    assert parse_size(f"{n} B") == n
    assert parse_size(f"{n}") == n
    assert parse_size(n) == n


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=10**9))
def test_kib(k):
    assert parse_size(f"{k} KiB") == 1024 * k
    assert parse_size(f"{k}KiB") == 1024 * k


@settings(deadline=None)
@given(st.fractions(min_value=0, max_value=10**6, max_denominator=10**6))
def test_fraction_input_is_returned_exactly(x):
    assert parse_size(x) == x
    assert parse_time(x) == x


@settings(deadline=None, max_examples=300)
@given(
    st.sampled_from(PARSERS).flatmap(
        lambda p: st.tuples(st.just(p), st.sampled_from(UNITS[p]))
    ),
    st.decimals(
        min_value=0, max_value=10**6, allow_nan=False, allow_infinity=False, places=6
    ),
    st.sampled_from(["", " ", "  "]),
)
def test_decimal_numbers_with_any_unit_are_non_negative(parse_unit, number, sep):
    parse, unit = parse_unit
    text = f"{number}{sep}{unit}"
    if parse is parse_size and unit in BIT_UNITS:
        return
    try:
        result = parse(text)
    except UnitError as exc:
        # only a zero rate, or a value above the documented cap of 1e30 base units, may be refused
        assert (parse is parse_rate and number == 0) or "is too large" in str(exc), exc
    else:
        assert result >= 0
        assert result == parse(text.replace(" ", ""))


@settings(deadline=None)
@given(st.sampled_from(BIT_UNITS), st.integers(min_value=0, max_value=10**6))
def test_sizes_in_bits_are_refused_with_byte_hint(unit, n):
    try:
        parse_size(f"{n} {unit}")
    except UnitError as exc:
        assert "is in bits" in str(exc)
    else:
        raise AssertionError("a size in bits was accepted")


finite = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40),
    st.fractions(max_denominator=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(deadline=None)
@given(finite, st.integers(min_value=1, max_value=20))
def test_format_number_round_trips_within_precision(x, digits):
    text = format_number(x, digits=digits)
    back = Fraction(text)
    exact = Fraction(repr(x)) if isinstance(x, float) else Fraction(x)  # a float is the number its repr shows
    assert abs(back - exact) <= abs(exact) * Fraction(1, 10 ** (digits - 1)) / 2
    assert not text.endswith(".")
    assert "." not in text or not text.split("e")[0].endswith("0")


@settings(deadline=None)
@given(finite)
def test_formatters_accept_any_finite_number(x):
    for fmt in (format_size, format_time, format_rate, format_inverse_rate):
        text = fmt(x)
        assert isinstance(text, str)
        assert text


@settings(deadline=None)
@given(
    st.fractions(min_value=Fraction(1, 10**9), max_value=10**15, max_denominator=10**9)
)
def test_format_size_mantissa_in_range(x):
    decimal_part = format_size(x).split(" = ")[0]
    mantissa, unit = decimal_part.split(" ")
    assert unit in SIZE_UNITS
    if unit not in {"B", "PB"}:
        assert 1 <= Fraction(mantissa) < 1000
