"""Scatter: n is the root's whole buffer; rank i ends with block i of n/p."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # binomial: ⌈log2 p⌉ steps; the root sends (p-1) blocks of n/p down the tree
    ("binomial", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    ("binomial", 5, expect(3, F(4, 5) * N, 0, 3, F(4, 5) * N)),  # ⌈log2 5⌉ = 3
    ("binomial", 16, expect(4, F(15, 16) * N, 0, 4, F(15, 16) * N)),
    # naive: the root sends each of the p-1 others its block, one after another
    ("naive", 5, expect(4, F(4, 5) * N, 0, 4, F(4, 5) * N)),
    ("naive", 16, expect(15, F(15, 16) * N, 0, 15, F(15, 16) * N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("scatter", algorithm, p) == expected


def test_aliases() -> None:
    assert terms("scatter", "tree", 5) == terms("scatter", "binomial", 5)
    assert terms("scatter", "linear", 5) == terms("scatter", "naive", 5)


def test_lower_bound() -> None:
    b = bound("scatter", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + 11/12·nβ
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, F(11, 12) * N * BETA, 0)
