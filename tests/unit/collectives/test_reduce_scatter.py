"""Reduce-scatter: n is the full input per rank; each rank ends with n/p of the result."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound, cost
from tests.unit.collectives._support import ALPHA, BETA, GAMMA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # ring: p-1 steps passing one partially reduced block n/p, reduced on arrival
    ("ring", 2, expect(1, F(1, 2) * N, F(1, 2) * N, 1, F(1, 2) * N)),
    ("ring", 5, expect(4, F(4, 5) * N, F(4, 5) * N, 4, F(4, 5) * N)),
    # recursive halving, p = 8: n/2 + n/4 + n/8 = 7n/8 in 3 steps
    ("recursive-halving", 8, expect(3, F(7, 8) * N, F(7, 8) * N, 3, F(7, 8) * N)),
    ("recursive-halving", 2, expect(1, F(1, 2) * N, F(1, 2) * N, 1, F(1, 2) * N)),
    # folded, p = 12 = 8 + 4: ranks 8..11 send n to ranks 0..3 (α + nβ + nγ); ranks 0..3 then
    # own two blocks of n/12 each.  Halving over 8 ranks moves 8, 4, 2 blocks on rank 0's path
    # (4 + min(4,4), 2 + min(4,2), 1 + min(4,1): 7 + s(12), s(12) = 1 + 2 + 4 = 7), and ranks
    # 0..3 send back one block each: β: n + (8 + 7)/12·n; γ: n + 14/12·n.  The busiest sender
    # is an extra rank (n); rank 0 sends 4 + 4 + 2 + 1 = 11 blocks.
    ("recursive-halving", 12,
     expect(3 + 2, N + F(8 + 7, 12) * N, N + F(14, 12) * N, 5, N)),
    # p = 3 = 2 + 1: rank 2 sends n to rank 0, rank 1 sends rank 0 its 2 blocks, rank 0
    # sends rank 2 its block: β: n + 2n/3 + n/3 = 2n; γ: n + 2n/3
    ("recursive-halving", 3, expect(3, 2 * N, F(5, 3) * N, 3, N)),
    # p = 9 = 8 + 1: 5 + 3 + 2 = 10 = 7 + s(9) blocks, s(9) = 3: β: n + 11n/9; γ: n + 10n/9
    ("recursive-halving", 9, expect(5, N + F(11, 9) * N, N + F(10, 9) * N, 5, N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("reduce-scatter", algorithm, p) == expected


def test_pairwise_is_the_ring() -> None:
    assert terms("reduce-scatter", "pairwise", 7) == terms("reduce-scatter", "ring", 7)


def test_folded_note() -> None:
    result = cost("reduce-scatter", "rh", p=12, n=N, link=LINK)
    assert result.algorithm == "recursive-halving-folded"
    assert "recursive-halving-folded" in result.notes[0]
    assert "p=12" in result.notes[0]


def test_lower_bound() -> None:
    b = bound("reduce_scatter", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + 11/12·nβ + 11/12·nγ
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, F(11, 12) * N * BETA, F(11, 12) * N * GAMMA)
