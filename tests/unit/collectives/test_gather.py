"""Gather: n is the root's whole buffer after the gather; each rank contributes n/p."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # binomial: ⌈log2 p⌉ steps, (p-1)/p·n into the root; the busiest sender is the root's
    # child with the largest subtree
    ("binomial", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),  # rank 1 sends its block
    ("binomial", 3, expect(2, F(2, 3) * N, 0, 2, F(1, 3) * N)),  # children 1 and 2, one block each
    ("binomial", 5, expect(3, F(4, 5) * N, 0, 3, F(2, 5) * N)),  # subtree of 2 = {2, 3}: 2 blocks
    ("binomial", 7, expect(3, F(6, 7) * N, 0, 3, F(3, 7) * N)),  # subtree of 4 = {4, 5, 6}
    ("binomial", 8, expect(3, F(7, 8) * N, 0, 3, F(4, 8) * N)),  # subtree of 4 = {4..7}
    ("binomial", 12, expect(4, F(11, 12) * N, 0, 4, F(4, 12) * N)),  # max(12 - 8, 4) = 4 blocks
    ("binomial", 13, expect(4, F(12, 13) * N, 0, 4, F(5, 13) * N)),  # subtree of 8 = {8..12}
    # naive: every rank sends its block straight to the root, which receives p-1 in turn
    ("naive", 5, expect(4, F(4, 5) * N, 0, 4, F(1, 5) * N)),
    ("naive", 16, expect(15, F(15, 16) * N, 0, 15, F(1, 16) * N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("gather", algorithm, p) == expected


def test_lower_bound() -> None:
    b = bound("gather", p=5, n=N, link=LINK)
    # ⌈log2 5⌉α + 4/5·nβ
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (3 * ALPHA, F(4, 5) * N * BETA, 0)
