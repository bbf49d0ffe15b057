"""Reduce: n is the full vector each rank holds; the root ends with the reduction."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound, cost
from tests.unit.collectives._support import ALPHA, BETA, GAMMA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # binomial: ⌈log2 p⌉ steps of the full vector, each reduced; every non-root sends once
    ("binomial", 2, expect(1, N, N, 1, N)),
    ("binomial", 5, expect(3, 3 * N, 3 * N, 3, N)),
    # Rabenseifner, p = 8: recursive-halving reduce-scatter (3 steps, 7/8 n, reduced) then a
    # binomial gather (3 steps, 7/8 n); rank 4 sends 7/8 n and then its half, n/2
    ("rabenseifner", 8, expect(6, F(7, 4) * N, F(7, 8) * N, 6, F(7, 8) * N + N / 2)),
    # p = 2: n/2 and n/2: rank 1 sends n in all
    ("rabenseifner", 2, expect(2, N, F(1, 2) * N, 2, N)),
    # folded, p = 12, p' = 8: fold-in (α + nβ + nγ), then Rabenseifner's reduce on 8 ranks;
    # nothing is sent back: (2·3 + 1)α + (1 + 2·7/8)nβ + (1 + 7/8)nγ; rank 4 sends 7/8 n + n/2
    ("rabenseifner", 12, expect(7, F(11, 4) * N, F(15, 8) * N, 7, F(11, 8) * N)),
    # p = 3, p' = 2: 3α + 2nβ + 3/2 nγ; the extra rank and rank 1 both send n
    ("rabenseifner", 3, expect(3, 2 * N, F(3, 2) * N, 3, N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("reduce", algorithm, p) == expected


def test_folded_note() -> None:
    result = cost("reduce", "rab", p=12, n=N, link=LINK)
    assert result.algorithm == "rabenseifner-folded"
    assert "rabenseifner-folded" in result.notes[0]


def test_lower_bound() -> None:
    b = bound("reduce", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + nβ + 11/12·nγ (Chan et al. 2007)
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, N * BETA, F(11, 12) * N * GAMMA)
