"""Tests of costmodel.units: parsing and formatting quantities with units."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from costmodel.errors import UnitError
from costmodel.units import (
    format_exact,
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

GOOD_SIZES = [
    ("64MiB", 67108864),
    ("64 MiB", 67108864),
    ("1.5e3 B", 1500),
    ("1.5E+3B", 1500),
    ("1024", 1024),
    ("  2 kB  ", 2000),
    ("1 KiB", 1024),
    ("3 GiB", 3 * 2**30),
    ("2 TiB", 2 * 2**40),
    ("1 PiB", 2**50),
    ("4 GB", 4 * 10**9),
    ("1 TB", 10**12),
    ("1 PB", 10**15),
    ("0.5 B", Fraction(1, 2)),
    (".5 MB", 500_000),
    ("1. B", 1),
    ("+7 bytes", 7),
    ("1 byte", 1),
    ("0", 0),
    ("-0 B", 0),
    ("1e6", 10**6),
    ("1e30", 10**30),
    ("0.1 kB", 100),
    ("5\tMB", 5 * 10**6),
    (4096, 4096),
    (Fraction(3, 2), Fraction(3, 2)),
    (0.5, Fraction(1, 2)),
    (Decimal("1.25"), Fraction(5, 4)),
]

GOOD_TIMES = [
    ("5us", Fraction(5, 10**6)),
    ("5 µs", Fraction(5, 10**6)),
    ("5\u00b5s", Fraction(5, 10**6)),
    ("5\u03bcs", Fraction(5, 10**6)),
    ("20.96 ms", Fraction(2096, 100_000)),
    ("1 s", 1),
    ("3 ns", Fraction(3, 10**9)),
    ("250 ps", Fraction(1, 4 * 10**9)),
    ("5e-6", Fraction(5, 10**6)),
    ("0", 0),
    (2, 2),
]

GOOD_RATES = [
    ("100 Gb/s", 12_500_000_000),
    ("100Gbps", 12_500_000_000),
    ("12.5 GB/s", 12_500_000_000),
    ("12.5 GB / s", 12_500_000_000),
    ("1 GiB/s", 2**30),
    ("1 MB/ms", 10**9),
    ("1 kB/us", 10**9),
    ("8 b/s", 1),
    ("8 bit/s", 1),
    ("8 bps", 1),
    ("1 kbps", 125),
    ("1 Mbps", 125_000),
    ("1 Tbps", 125_000_000_000),
    ("1 Tb/s", 125_000_000_000),
    ("1 Kib/s", 128),
    ("1e9", 10**9),
    (10**9, 10**9),
]

GOOD_INVERSE_RATES = [
    ("0.08ns/B", Fraction(8, 10**11)),
    ("0.08 ns/B", Fraction(8, 10**11)),
    ("1 s/GB", Fraction(1, 10**9)),
    ("1 us/B", Fraction(1, 10**6)),
    ("1 ns/b", Fraction(8, 10**9)),
    ("2 ns/byte", Fraction(2, 10**9)),
    ("1 s/B", 1),
    ("1 ps/B", Fraction(1, 10**12)),
    ("5e-10", Fraction(5, 10**10)),
    ("0", 0),
]


@pytest.mark.parametrize(("text", "expected"), GOOD_SIZES)
def test_parse_size(text, expected):
    result = parse_size(text)
    assert type(result) is Fraction
    assert result == expected


@pytest.mark.parametrize(("text", "expected"), GOOD_TIMES)
def test_parse_time(text, expected):
    result = parse_time(text)
    assert type(result) is Fraction
    assert result == expected


@pytest.mark.parametrize(("text", "expected"), GOOD_RATES)
def test_parse_rate(text, expected):
    result = parse_rate(text)
    assert type(result) is Fraction
    assert result == expected


@pytest.mark.parametrize(("text", "expected"), GOOD_INVERSE_RATES)
def test_parse_inverse_rate(text, expected):
    result = parse_inverse_rate(text)
    assert type(result) is Fraction
    assert result == expected


def test_documented_equalities():
    assert (
        parse_time("5us")
        == parse_time("5 µs")
        == parse_time("5μs")
        == Fraction(5, 10**6)
    )
    assert parse_rate("100Gbps") == 12.5e9
    assert parse_rate("100 Gb/s") == parse_rate("12.5 GB/s")
    assert parse_inverse_rate("1 ns/b") == parse_inverse_rate("8 ns/B")


def test_decimal_input_is_exact():
    assert parse_size("0.1 kB") == 100
    assert parse_time("0.1 s") == Fraction(1, 10)
    assert parse_time("0.1") != 0.1  # not the nearest binary float


def test_allow_zero():
    assert parse_rate("0", allow_zero=True) == 0
    with pytest.raises(UnitError, match="must be positive"):
        parse_size("0 B", allow_zero=False)
    with pytest.raises(UnitError, match="must be positive"):
        parse_time(0, allow_zero=False)
    with pytest.raises(UnitError, match="must be positive"):
        parse_inverse_rate("0 ns/B", allow_zero=False)


BAD = [
    (parse_size, "12 KB", "is ambiguous; write 12 kB (1000 B) or 12 KiB (1024 B)"),
    (parse_rate, "12 KB/s", "is ambiguous; write 12 kB/s"),
    (parse_inverse_rate, "1 s/KB", "is ambiguous"),
    (parse_size, "5 mb", "unknown unit 'mb'"),
    (parse_size, "5 mb", "did you mean 'MB'"),
    (parse_rate, "5 mb/s", "did you mean 'MB/s' or 'Mb/s'"),
    (parse_rate, "5 GB/sec", "did you mean 'GB/s'"),
    (parse_time, "5 sec", "did you mean 's'"),
    (parse_size, "5 m", "unknown unit 'm'"),
    (parse_time, "5MB", "'5MB' is a size, not a time; write a time such as 5us"),
    (parse_size, "5 us", "is a time, not a size"),
    (parse_size, "5 GB/s", "is a rate, not a size"),
    (
        parse_rate,
        "0.08 ns/B",
        "is an inverse rate, not a rate; write its reciprocal, 12.5 GB/s",
    ),
    (
        parse_inverse_rate,
        "12.5 GB/s",
        "is a rate, not an inverse rate; write its reciprocal, 0.08 ns/B",
    ),
    (parse_size, "-1 kB", "is negative; a size must be >= 0"),
    (parse_rate, "-1 GB/s", "is negative"),
    (parse_size, -1, "is negative"),
    (parse_size, "nan", "is not a finite number"),
    (parse_size, "NaN MB", "is not a finite number"),
    (parse_time, "inf", "is not a finite number"),
    (parse_time, "-Infinity s", "is not a finite number"),
    (parse_rate, "+inf GB/s", "is not a finite number"),
    (parse_size, float("nan"), "is not a finite number"),
    (parse_time, float("inf"), "is not a finite number"),
    (parse_size, Decimal("NaN"), "is not a finite number"),
    (parse_size, "", "is empty"),
    (parse_size, "   ", "is empty"),
    (parse_size, "1,5 MB", "comma"),
    (parse_size, "1,5 MB", "use a decimal point: 1.5 MB"),
    (
        parse_size,
        "800 Mb",
        (
            "'800 Mb' is in bits; sizes are bytes: write 100 MB (800 Mb / 8) "
            "or, if you meant bytes, 800 MB"
        ),
    ),
    (parse_size, "8 bits", "is in bits"),
    (parse_size, "1 Kib", "write 0.125 KiB"),
    (parse_size, "1e999999999", "exponent"),
    (parse_size, "1e-61 B", "exponent"),
    (parse_size, "1" * 300, "too many digits"),
    (parse_size, "1e31 B", "is too large"),
    (parse_size, "1e28 PB", "is too large"),
    (parse_rate, "0", "must be positive"),
    (parse_rate, 0, "must be positive"),
    (parse_size, "5 parsecs", "has an unknown unit 'parsecs'"),
    (parse_size, "GB", "has no number"),
    (parse_size, "1.2.3 MB", "malformed number"),
    (parse_size, "1 000 MB", "malformed number"),
    (parse_size, "5e MB", "malformed number"),
    (parse_size, "+-5", "does not start with a number"),
    (parse_size, "5 M B", "unknown unit"),
    (parse_rate, "5 MBps", "did you mean 'MB/s' or 'Mbps'"),
    (parse_size, True, "is a bool"),
    (parse_size, None, "is not a size"),
    (parse_size, [1], "is not a size"),
]


@pytest.mark.parametrize(("parse", "text", "message"), BAD)
def test_bad_input(parse, text, message):
    with pytest.raises(UnitError) as info:
        parse(text)
    assert message in str(info.value)


@pytest.mark.parametrize(("parse", "text", "message"), BAD)
def test_message_shape(parse, text, message):
    with pytest.raises(UnitError) as info:
        parse(text)
    message = str(info.value)
    assert "\n" not in message
    # <value!r> <what is wrong>; <hint>: the message opens with the value, never a capital
    assert message.startswith(repr(text)[:20])
    assert not message.endswith(".")
    assert "; " in message


def test_unit_error_is_value_error():
    with pytest.raises(ValueError):
        parse_size("12 KB")


def test_long_input_is_shortened_in_message():
    with pytest.raises(UnitError) as info:
        parse_size("5 " + "x" * 10_000)
    assert len(str(info.value)) < 500


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Fraction(2_000_000, 17), "117.6 kB = 114.9 KiB"),
        (67108864, "67.11 MB = 64 MiB"),
        (8192, "8.192 kB = 8 KiB"),
        (512, "512 B"),
        (100, "100 B"),
        (Fraction(1, 2), "0.5 B"),
        (0, "0 B"),
        (10**9, "1 GB"),
        (1500, "1.5 kB"),
        (999_999, "1 MB = 976.6 KiB"),
        (2**20, "1.049 MB = 1 MiB"),
        (1.5e12, "1.5 TB"),
    ],
)
def test_format_size(value, expected):
    assert format_size(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Fraction(2096, 100_000), "20.96 ms"),
        (0, "0 s"),
        (5e-6, "5 \u00b5s"),
        (Fraction(3, 10**9), "3 ns"),
        (Fraction(1, 4 * 10**9), "250 ps"),
        (1, "1 s"),
        (3600, "3600 s"),
        (Fraction(9999999, 10**10), "1 ms"),
    ],
)
def test_format_time(value, expected):
    assert format_time(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12.5e9, "12.5 GB/s (100 Gb/s)"),
        (125, "125 B/s (1 kb/s)"),
        (0, "0 B/s"),
    ],
)
def test_format_rate(value, expected):
    assert format_rate(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (8e-11, "0.08 ns/B"),
        (Fraction(8, 10**11), "0.08 ns/B"),
        (Fraction(1, 10**12), "0.001 ns/B"),
        (Fraction(5, 10**13), "0.5 ps/B"),
        (Fraction(2, 10**9), "2 ns/B"),
        (Fraction(3, 10**6), "3 \u00b5s/B"),
        (Fraction(1, 1000), "1 ms/B"),
        (5, "5 s/B"),
        (0, "0 ns/B"),
    ],
)
def test_format_inverse_rate(value, expected):
    assert format_inverse_rate(value) == expected


@pytest.mark.parametrize(
    ("value", "kwargs", "expected"),
    [
        (117.647, {}, "117.6"),
        (20.96, {}, "20.96"),
        (8, {}, "8"),
        (8.0, {}, "8"),
        (0, {}, "0"),
        (-0.0, {}, "0"),
        (-2.5, {}, "-2.5"),
        (0.001, {}, "0.001"),
        (0.00025, {}, "2.5e-4"),
        (1.5e8, {}, "1.5e8"),
        (9999999.6, {}, "1e7"),
        (Fraction(1, 3), {"digits": 10}, "0.3333333333"),
        (Fraction(5, 1000), {"digits": 1}, "0.005"),
        (Fraction(25, 1000), {"digits": 1}, "0.03"),  # half away from zero
        (2**5000, {}, "1.412e1505"),
    ],
)
def test_format_number(value, kwargs, expected):
    assert format_number(value, **kwargs) == expected


@pytest.mark.parametrize(
    "fmt", [format_number, format_size, format_time, format_rate, format_inverse_rate]
)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_format_refuses_non_finite(fmt, value):
    with pytest.raises(ValueError, match="not a finite number"):
        fmt(value)


@pytest.mark.parametrize("digits", [0, -1, 1.5, True])
def test_format_refuses_bad_digits(digits):
    with pytest.raises(ValueError, match="digits"):
        format_number(1, digits=digits)


@pytest.mark.parametrize(
    ("fmt", "parse", "value"),
    [
        (format_time, parse_time, Fraction(2096, 100_000)),
        (format_rate, parse_rate, Fraction(25, 2) * 10**9),
        (format_inverse_rate, parse_inverse_rate, Fraction(8, 10**11)),
        (format_size, parse_size, 8192 * 10**6),
    ],
)
def test_format_then_parse(fmt, parse, value):
    text = fmt(value).split(" (")[0].split(" = ")[0]
    assert parse(text) == value


def test_format_exact_forms():
    assert [format_exact(Fraction(8, 15)), format_exact(3), format_exact(Fraction(-1, 7))] == ["8/15", "3", "-1/7"]
    assert [format_exact(x, decimal=True) for x in (Fraction(1, 100), Fraction(1, 3), Fraction(-5, 2), 7,
                                                    Fraction(1, 8))] == ["0.01", "1/3", "-2.5", "7", "0.125"]
    assert format_exact(Fraction(3, 11), approx=True, digits=4) == "3/11 ≈ 0.2727"
    assert format_exact(Fraction(1, 4), approx=True, decimal=True) == "0.25"
    assert format_exact(0.1) == "0.1"  # a float computed in floating point keeps its repr


def test_float_input_is_the_number_typed():
    """Floats are read by their shortest repr, as everywhere in costmodel (costmodel.exact)."""
    assert parse_time(0.1) == Fraction(1, 10)
    assert parse_size(1e-3) == Fraction(1, 1000)
    assert format_number(2.675, digits=3) == "2.68"  # 2.675 rounds half away from zero, as typed


def _round_sig_by_fractions(x: Fraction, digits: int) -> tuple[int, int]:
    """The rounding to significant digits as written in Fractions (the reference the integer one keeps)."""
    import math

    if x == 0:
        return 0, 0
    ax, e = abs(x), 0
    while Fraction(10) ** e > ax:
        e -= 1
    while Fraction(10) ** (e + 1) <= ax:
        e += 1
    q = math.floor(ax * Fraction(10) ** (digits - 1 - e) + Fraction(1, 2))
    if q >= 10**digits:
        q //= 10
        e += 1
    return (q if x > 0 else -q), e


def test_rounding_in_integers_is_the_rounding_in_fractions():
    """Formatting rounds in integers (a Fraction per step cost a table of 10⁵ rows seconds): the same digits."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from costmodel.units import _round_sig

    @settings(max_examples=2000, deadline=None)
    @given(st.fractions(min_value=Fraction(-10**30), max_value=Fraction(10**30)), st.integers(1, 8))
    def check(x: Fraction, digits: int) -> None:
        assert _round_sig(x, digits) == _round_sig_by_fractions(x, digits)

    check()
    for x in (Fraction(95, 10), Fraction(-9995, 1000), Fraction(1, 3 * 10**40), Fraction(10**40 - 1)):
        assert _round_sig(x, 3) == _round_sig_by_fractions(x, 3)
