"""The restricted parsers of costmodel.training: counts, dtypes, number lists, vectors, indices."""

from __future__ import annotations

import contextlib
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError, UnknownNameError
from costmodel.training import DTYPES, parse_count, parse_dtype
from costmodel.training._common import (
    optional_link,
    parse_counts,
    parse_indices,
    parse_number,
    parse_numbers,
    parse_vectors,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("70B", 70 * 10**9),
    ("70b", 70 * 10**9),
    ("7.5e9", 7_500_000_000),
    ("7.5B", 7_500_000_000),
    ("25M", 25_000_000),
    ("60k", 60_000),
    ("60K", 60_000),
    ("1.2T", 1_200_000_000_000),
    ("3G", 3 * 10**9),
    (" 600 ", 600),
    ("1e3", 1000),
    (600, 600),
])
def test_parse_count(text, expected):
    assert parse_count(text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    ("70GB", "write 70B for 70 billion"),
    ("25MB", "write 25M for 25 million"),
    ("7GiB", "is a size"),
    ("70 bytes", "is a size"),
    ("25m", "m is milli"),
    ("25Q", "unknown multiplier"),
    ("1.5", "not a whole number"),
    ("-3", "is negative"),
    ("0", "is zero"),
    ("", "is not a count"),
    ("abc", "is not a count"),
    ("1e61", "exponent out of range"),
    ("1e40", "too large"),
    (True, "is a bool"),
    (1.5, "is not a count"),
])
def test_parse_count_refuses(text, fragment):
    with pytest.raises(InputError, match=fragment.replace("(", r"\(")):
        parse_count(text)


def test_parse_count_allows_zero_when_asked():
    assert parse_count("0", allow_zero=True) == 0


@pytest.mark.parametrize(("name", "canonical", "size"), [
    ("fp32", "fp32", 4), ("float32", "fp32", 4), ("FP32", "fp32", 4), ("bf16", "bf16", 2),
    ("bfloat16", "bf16", 2), ("fp16", "fp16", 2), ("half", "fp16", 2), ("fp8", "fp8", 1), ("e4m3", "fp8", 1),
    ("int8", "int8", 1), ("int32", "int32", 4), ("fp64", "fp64", 8), ("fp8_e5m2", "fp8", 1),
])
def test_parse_dtype(name, canonical, size):
    d = parse_dtype(name)
    assert (d.name, d.bytes_per_element) == (canonical, size)


def test_unknown_dtype_suggests():
    with pytest.raises(UnknownNameError) as info:
        parse_dtype("fp33")
    assert str(info.value) == "unknown dtype 'fp33'; did you mean 'fp32'?"
    assert isinstance(info.value, ValueError)
    assert set(info.value.choices) == set(DTYPES)


def test_parse_number_is_exact():
    assert parse_number("0.1") == Fraction(1, 10)
    assert parse_number("1/3") == Fraction(1, 3)
    assert parse_number("-2.5e-3") == Fraction(-1, 400)
    assert parse_number(0.2) == Fraction(1, 5)  # a float's shortest repr, not its binary value
    assert parse_number(Decimal("0.3")) == Fraction(3, 10)
    assert parse_number(Fraction(2, 7)) == Fraction(2, 7)


@pytest.mark.parametrize("bad", ["x", "", "1/0", "1e99", "nan", "inf", "1,5", "2**3", True, float("nan"), None])
def test_parse_number_refuses(bad):
    with pytest.raises(InputError):
        parse_number(bad)


def test_lists_and_vectors():
    assert parse_numbers("0.2, 0.5,0.9", what="losses") == (Fraction(1, 5), Fraction(1, 2), Fraction(9, 10))
    assert parse_numbers([1, "0.5"], what="losses") == (Fraction(1), Fraction(1, 2))
    assert parse_vectors("1,0;2,1;4,-1", what="models") == ((1, 0), (2, 1), (4, -1))
    assert parse_vectors("0.5;1", what="gradients") == ((Fraction(1, 2),), (Fraction(1),))
    assert parse_vectors([[1, 2], [3, 4]], what="models") == ((1, 2), (3, 4))
    assert parse_vectors([1, 2], what="gradients") == ((1,), (2,))
    assert parse_counts("600,300,1k", what="sizes") == (600, 300, 1000)


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: parse_numbers("", what="losses"), "is empty"),
    (lambda: parse_numbers("0.2,,0.9", what="losses"), "item 1 of the losses"),
    (lambda: parse_numbers(5, what="losses"), "is not a list"),
    (lambda: parse_vectors("1,0;2", what="models"), "vector 1 of the models has 1 component"),
    (lambda: parse_vectors("1,0;2,y", what="models"), "vector 1, component 1 of the models"),
    (lambda: parse_counts("600,-3", what="sizes"), "item 1 of the sizes: '-3' is negative"),
    (lambda: parse_indices("3", n=3, what="dropped clients"), "3 is out of range"),
    (lambda: parse_indices("-1", n=3, what="dropped clients"), "-1 is out of range"),
    (lambda: parse_indices("1,1", n=3, what="dropped clients"), "listed twice"),
    (lambda: parse_indices("a", n=3, what="dropped clients"), "is not an index"),
    (lambda: parse_indices(True, n=3, what="dropped clients"), "is not a list"),
])
def test_list_errors(call, fragment):
    with pytest.raises(InputError, match=fragment):
        call()


def test_indices():
    assert parse_indices(None, n=3, what="x") == ()
    assert parse_indices(1, n=3, what="x") == (1,)
    assert parse_indices("2, 0", n=3, what="x") == (0, 2)




def test_optional_link():
    assert optional_link() is None
    link = optional_link(alpha="0", bandwidth="12.5GB/s")
    assert (link.alpha_s, link.beta_s_per_byte) == (0, Fraction(1, 12_500_000_000))
    with pytest.raises(InputError, match="no latency given"):  # the one rule: α is said, never assumed
        optional_link(bandwidth="12.5GB/s")
    assert optional_link(alpha="5us", beta="0.08ns/B").alpha_s == Fraction(1, 200_000)
    with pytest.raises(InputError, match="both link= and alpha= were given"):
        optional_link(link=link, alpha="1us")
    with pytest.raises(InputError, match="only one of beta= or bandwidth="):
        optional_link(beta="1ns/B", bandwidth="1GB/s")


@given(st.text(max_size=40))
def test_parsers_raise_only_input_errors(text):
    for parse in (parse_count, lambda t: parse_numbers(t, what="x"), lambda t: parse_vectors(t, what="x"),
                  lambda t: parse_indices(t, n=5, what="x"), parse_dtype):
        with contextlib.suppress(InputError):
            parse(text)


@given(st.integers(min_value=1, max_value=10**15), st.sampled_from(["", "k", "M", "B", "T"]))
def test_count_round_trip(n, suffix):
    scale = {"": 1, "k": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}[suffix]
    assert parse_count(f"{n}{suffix}") == n * scale
