"""Hypothesis strategies shared by the property tests.

* :func:`ranks`: rank counts 2..4096, with powers of two drawn often (they
  switch the recursive algorithms between their plain and folded records);
* :func:`sizes`: exact message sizes in bytes, as ints or Fractions ≥ 1;
* :func:`links`: :class:`~costmodel.LinkParams` with exact α ∈ [0, 1 ms],
  β ∈ [0, 10 ns/B] and γ ∈ [0, 1 ns/B];
* :func:`unit_strings`: text shaped like a quantity with a unit, or arbitrary;

and what the cost properties share: :data:`PAIRS` (every collective and algorithm), :func:`runs`
(whether an algorithm runs at p) and :func:`costs_at_two_sizes`.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from costmodel import LinkParams, algorithms, cost
from costmodel.collectives._registry import COLLECTIVES, resolve
from costmodel.collectives.evaluate import applicable
from costmodel.errors import ConstraintError

__all__ = [
    "ALPHA_MAX",
    "BETA_MAX",
    "GAMMA_MAX",
    "MAX_RANKS",
    "PAIRS",
    "PAIR_IDS",
    "costs_at_two_sizes",
    "exact_between",
    "links",
    "powers_of_two",
    "ranks",
    "runs",
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


PAIRS = [(c, a.name) for c in COLLECTIVES for a in algorithms(c)]
PAIR_IDS = [f"{c}/{a}" for c, a in PAIRS]


def runs(collective: str, algorithm: str, p: int) -> bool:
    """Whether the algorithm can run at p (the double binary tree needs p >= 4)."""
    try:
        applicable(resolve(collective, algorithm), p)
    except ConstraintError:
        return False
    return True


def costs_at_two_sizes(collective: str, algorithm: str, p: int, sizes: tuple[Fraction, Fraction],
                       link: object) -> tuple:
    """The costs at the two *sizes* (small, large) that a monotone model must order: tuned freely, or, where the
    larger size's tuned block or segment count is more than the smaller size allows (whole bytes per
    block cap k at the smaller size, so the tuned optimum may dip there: docs/design.md), both at the
    counts the smaller size allows, for which the cost is monotone."""
    small, large = sizes
    t_large = cost(collective, algorithm, p=p, n=large, link=link)
    spec = next(a for a in algorithms(collective) if a.name == algorithm)
    if any(t_large.parameters[e.name] > e.upper(p, small) for e in spec.extra):
        fixed = {e.name: e.upper(p, small) for e in spec.extra}
        return (cost(collective, algorithm, p=p, n=small, link=link, extra=fixed),
                cost(collective, algorithm, p=p, n=large, link=link, extra=fixed))
    return cost(collective, algorithm, p=p, n=small, link=link), t_large
