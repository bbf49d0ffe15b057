"""Hypothesis strategies shared by the property tests.

* :func:`ranks`: rank counts 2..4096, with powers of two drawn often (they
  switch the recursive algorithms between their plain and folded records);
* :func:`sizes`: exact message sizes in bytes, as ints or Fractions ≥ 1;
* :func:`links`: :class:`~costmodel.LinkParams` with exact α ∈ [0, 1 ms],
  β ∈ [0, 10 ns/B] and γ ∈ [0, 1 ns/B];
* :func:`unit_strings`: text shaped like a quantity with a unit, or arbitrary.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from costmodel import LinkParams

__all__ = [
    "ALPHA_MAX",
    "BETA_MAX",
    "GAMMA_MAX",
    "MAX_RANKS",
    "exact_between",
    "links",
    "powers_of_two",
    "ranks",
    "sizes",
    "unit_strings",
]

MAX_RANKS = 4096
ALPHA_MAX = Fraction(1, 10**3)  # 1 ms start-up
BETA_MAX = Fraction(1, 10**8)  # 10 ns/B, i.e. 100 MB/s
GAMMA_MAX = Fraction(1, 10**9)  # 1 ns/B reduction


def powers_of_two(lo: int = 2, hi: int = MAX_RANKS) -> st.SearchStrategy[int]:
    """Powers of two in [lo, hi]."""
    return st.integers(lo.bit_length() - 1, hi.bit_length() - 1).map(lambda e: 2**e).filter(
        lambda q: lo <= q <= hi
    )


def ranks(lo: int = 2, hi: int = MAX_RANKS) -> st.SearchStrategy[int]:
    """Rank counts in [lo, hi]; powers of two are drawn about half of the time."""
    return st.one_of(st.integers(lo, hi), powers_of_two(lo, hi))


def exact_between(lo: Fraction, hi: Fraction) -> st.SearchStrategy[Fraction]:
    """Exact rationals in [lo, hi], with the end points and 0 likely."""
    return st.one_of(
        st.sampled_from(sorted({lo, hi})),
        st.fractions(min_value=lo, max_value=hi, max_denominator=10**12),
    )


def sizes(hi: int = 2**36) -> st.SearchStrategy[Fraction | int]:
    """Exact sizes in bytes in [1, hi] (a message is at least 1 B): ints (small ones likely) and Fractions."""
    return st.one_of(
        st.integers(1, 64),
        st.integers(1, hi),
        st.fractions(min_value=1, max_value=hi, max_denominator=1000),
    )


def links(
    alpha_max: Fraction = ALPHA_MAX, beta_max: Fraction = BETA_MAX, gamma_max: Fraction = GAMMA_MAX
) -> st.SearchStrategy[LinkParams]:
    """Exact link parameters, each term possibly 0."""
    return st.builds(
        lambda a, b, g: LinkParams(alpha_s=a, beta_s_per_byte=b, gamma_s_per_byte=g),
        exact_between(Fraction(0), alpha_max),
        exact_between(Fraction(0), beta_max),
        exact_between(Fraction(0), gamma_max),
    )


_NUMBERS = r"[+-]?(\d{1,6}(\.\d{0,4})?|\.\d{1,4})([eE][+-]?\d{1,3})?"
_UNITS = r"(B|b|bit|kB|MB|GB|KiB|MiB|GiB|KB|s|ms|us|µs|ns|Gb/s|GB/s|ns/B|s/B)?"


def unit_strings() -> st.SearchStrategy[str]:
    """Strings shaped like ``<number><space?><unit>``, mixed with arbitrary text."""
    return st.one_of(st.from_regex(rf"\A\s?{_NUMBERS}\s?{_UNITS}\s?\Z"), st.text(max_size=20))
