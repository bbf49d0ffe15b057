"""All-to-all: n is each rank's whole send buffer, p blocks of n/p (its own included)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # pairwise: p-1 steps of one block n/p
    ("pairwise", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    ("pairwise", 5, expect(4, F(4, 5) * N, 0, 4, F(4, 5) * N)),
    ("pairwise", 12, expect(11, F(11, 12) * N, 0, 11, F(11, 12) * N)),
    # bruck: ⌈log2 p⌉ steps; block j is forwarded once per set bit of j, so each rank sends
    # B(p) = Σ_{j<p} popcount(j) blocks of n/p
    # B(2) = popcount(0, 1) = 0 + 1 = 1
    ("bruck", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    # B(5) = 0 + 1 + 1 + 2 + 1 = 5: 5/5·n = n
    ("bruck", 5, expect(3, N, 0, 3, N)),
    # B(8) = 0+1+1+2+1+2+2+3 = 12 = 8·log2(8)/2: 12/8·n = (n/2)·log2 8
    ("bruck", 8, expect(3, F(12, 8) * N, 0, 3, F(3, 2) * N)),
    # B(12) = 12 + popcount(8..11) = 12 + 1+2+2+3 = 20: 20/12·n
    ("bruck", 12, expect(4, F(20, 12) * N, 0, 4, F(5, 3) * N)),
    # B(1024) = 1024·10/2 = 5120: 5·n
    ("bruck", 1024, expect(10, 5 * N, 0, 10, 5 * N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("alltoall", algorithm, p) == expected


def test_bruck_moves_more_bytes_but_fewer_startups_than_pairwise() -> None:
    pairwise, bruck = terms("alltoall", "pairwise", 64), terms("alltoall", "bruck", 64)
    # 63 against 6 start-ups; 63/64·n against (64·6/2)/64·n = 3n
    assert (pairwise.alpha, bruck.alpha) == (63, 6)
    assert (pairwise.beta, bruck.beta) == (F(63, 64) * N, 3 * N)


def test_lower_bound() -> None:
    b = bound("all-to-all", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + 11/12·nβ
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, F(11, 12) * N * BETA, 0)
