"""All-gather: n is the full gathered output; each rank contributes n/p."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import bound, cost
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # ring: p-1 steps of one block
    ("ring", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    ("ring", 5, expect(4, F(4, 5) * N, 0, 4, F(4, 5) * N)),
    # recursive doubling at a power of two: log2 p steps of 1, 2, 4, ... blocks
    ("recursive-doubling", 8, expect(3, F(7, 8) * N, 0, 3, F(7, 8) * N)),
    ("recursive-doubling", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    # folded, p = 12 = 8 + 4: ranks 8..11 hand their block to ranks 0..3 (1 block), doubling
    # moves windows of 1, 2, 4 ranks holding 2, 4, 8 blocks (7 + s(12) = 7 + 7 = 14 blocks),
    # ranks 0..3 send back the 11 blocks ranks 8..11 lack: n/12 + 14n/12 + 11n/12 = 26n/12 = 13n/6.
    # Rank 0 sends 14 blocks and 11: 25n/12
    ("recursive-doubling", 12, expect(3 + 2, F(13, 6) * N, 0, 5, F(25, 12) * N)),
    # p = 9 = 8 + 1: windows hold 2, 3, 5 blocks = 10 = 7 + s(9) with s(9) = 1+1+1 = 3;
    # n/9 + 10n/9 + 8n/9 = 19n/9; rank 0 sends 10 blocks and the 8 rank 8 lacks: 18n/9 = 2n
    ("recursive-doubling", 9, expect(5, F(19, 9) * N, 0, 5, 2 * N)),
    # p = 3 = 2 + 1: rank 2 hands in its block, ranks 0 and 1 swap 2 blocks and 1, rank 0
    # sends back the 2 blocks rank 2 lacks: n/3 + 2n/3 + 2n/3 = 5n/3; rank 0 sends 4n/3
    ("recursive-doubling", 3, expect(1 + 2, F(5, 3) * N, 0, 3, F(4, 3) * N)),
    # bruck: ⌈log2 p⌉ steps for any p, (p-1)/p·n
    ("bruck", 2, expect(1, F(1, 2) * N, 0, 1, F(1, 2) * N)),
    ("bruck", 5, expect(3, F(4, 5) * N, 0, 3, F(4, 5) * N)),
    ("bruck", 12, expect(4, F(11, 12) * N, 0, 4, F(11, 12) * N)),
    ("bruck", 1000, expect(10, F(999, 1000) * N, 0, 10, F(999, 1000) * N)),
]


@pytest.mark.parametrize(("algorithm", "p", "expected"), CASES, ids=[f"{a}-p{p}" for a, p, _ in CASES])
def test_cost(algorithm: str, p: int, expected: Terms) -> None:
    assert terms("allgather", algorithm, p) == expected


@pytest.mark.parametrize("p", [3, 9, 12, 100])
def test_folded_record_is_named_in_the_result(p: int) -> None:
    result = cost("allgather", "rd", p=p, n=N, link=LINK)
    assert result.algorithm == "recursive-doubling-folded"
    assert len(result.notes) == 1
    assert f"p={p}" in result.notes[0]
    assert "recursive-doubling-folded" in result.notes[0]


def test_power_of_two_has_no_notes() -> None:
    result = cost("allgather", "rd", p=16, n=N, link=LINK)
    assert result.algorithm == "recursive-doubling"
    assert result.notes == ()


def test_lower_bound() -> None:
    b = bound("all_gather", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + 11/12·nβ, nothing to reduce
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, F(11, 12) * N * BETA, 0)
