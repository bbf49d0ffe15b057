"""Broadcast: n is the full vector at the root."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import InputError, LinkParams, bound, cost
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # binomial: ⌈log2 p⌉ steps of the full vector; the root sends it ⌈log2 p⌉ times
    ("binomial", 2, expect(1, N, 0, 1, N)),
    ("binomial", 5, expect(3, 3 * N, 0, 3, 3 * N)),
    ("binomial", 16, expect(4, 4 * N, 0, 4, 4 * N)),
    # scatter (⌈log2 p⌉ steps, (p-1)/p·n) then ring all-gather (p-1 steps, (p-1)/p·n)
    ("scatter-allgather", 5, expect(3 + 4, F(8, 5) * N, 0, 7, F(8, 5) * N)),
    ("scatter-allgather", 16, expect(4 + 15, F(15, 8) * N, 0, 19, F(15, 8) * N)),
    # scatter then recursive-doubling all-gather: 2·log2 p steps
    ("scatter-recursive-doubling", 16, expect(8, F(15, 8) * N, 0, 8, F(15, 8) * N)),
    # folded, p = 12, p' = 8: the root scatters 8 blocks of n/8 over ranks 0..7 (3 steps, 7/8 n),
    # they double (3 steps, 7/8 n), ranks 0..3 send n to ranks 8..11 (1 step): 7 α, (7/4 + 1) n β;
    # the root sends all of it (7/8 + 7/8 + 1) n. Before the fix: 9 α and 38/12 n β
    ("scatter-recursive-doubling", 12, expect(3 + 3 + 1, F(11, 4) * N, 0, 7, F(11, 4) * N)),
    # p = 9: the same 8 blocks, one extra rank
    ("scatter-recursive-doubling", 9, expect(7, F(11, 4) * N, 0, 7, F(11, 4) * N)),
    # pipelined chain with k segments: (p + k - 2)(α + nβ/k); p = 8, k = 4: 10α + 10/4 nβ
    ("pipelined-chain", 8, expect(10, F(10, 4) * N, 0, 10, N), {"segments": 4}),
    # p = 2, k = 1: one message
    ("pipelined-chain", 2, expect(1, N, 0, 1, N), {"segments": 1}),
]


@pytest.mark.parametrize(
    ("algorithm", "p", "expected", "extra"),
    [c if len(c) == 4 else (*c, {}) for c in CASES],
    ids=[f"{c[0]}-p{c[1]}" for c in CASES],
)
def test_cost(algorithm: str, p: int, expected: Terms, extra: dict[str, int]) -> None:
    assert terms("broadcast", algorithm, p, **extra) == expected


def test_folded_scatter_recursive_doubling_is_noted() -> None:
    result = cost("bcast", "scatter-rd", p=12, n=N, link=LINK)
    assert result.algorithm == "scatter-recursive-doubling-folded"
    assert "scatter-recursive-doubling-folded" in result.notes[0]


# -- the tuned pipelined chain ---------------------------------------------------------------

TUNE_LINK = LinkParams(alpha_s=F(1, 10**6), beta_s_per_byte=F(1, 10**8))


def chain_time(p: int, n: Fraction, k: int, link: LinkParams) -> Fraction:
    return (p + k - 2) * (link.alpha_s + n * link.beta_s_per_byte / k)


@pytest.mark.parametrize("p", [2, 3, 8, 17, 100])
@pytest.mark.parametrize("n", [1, 2, 3, 10, 100, 1000, 5000])
def test_chain_picks_the_best_segment_count(p: int, n: int) -> None:
    size = F(n)
    candidates = range(1, max(1, n) + 1)  # segments of n/k ≥ 1 byte
    best_k = min(candidates, key=lambda k: chain_time(p, size, k, TUNE_LINK))
    result = cost("broadcast", "pipelined-chain", p=p, n=size, link=TUNE_LINK)
    assert result.time_s == chain_time(p, size, best_k, TUNE_LINK)
    assert result.parameters == {"segments": best_k}
    assert result.rounds == p + best_k - 2


def test_chain_optimum_near_the_continuous_one() -> None:
    # k* = √((p-2)nβ/α) = √(6 · 10^6 · 10^-8 / 10^-6) = √60000 ≈ 244.9: the best integer is 245 or 244
    result = cost("broadcast", "chain", p=8, n=10**6, link=TUNE_LINK)
    assert result.parameters["segments"] in (244, 245)
    assert result.time_s == min(chain_time(8, F(10**6), k, TUNE_LINK) for k in (244, 245))


def test_chain_segments_are_validated() -> None:
    with pytest.raises(InputError, match="segments=0 is not a positive integer"):
        cost("broadcast", "chain", p=8, n=100, link=LINK, extra={"segments": 0})
    with pytest.raises(InputError, match="segments=101 is more than"):
        cost("broadcast", "chain", p=8, n=100, link=LINK, extra={"segments": 101})
    with pytest.raises(InputError):
        cost("broadcast", "chain", p=8, n=100, link=LINK, extra={"segments": 2.5})
    with pytest.raises(InputError):
        cost("broadcast", "chain", p=8, n=100, link=LINK, extra={"segments": True})
    # the bound is n: exactly n segments of one byte is allowed
    assert cost("broadcast", "chain", p=8, n=100, link=LINK, extra={"segments": 100}).rounds == 106


def test_lower_bound() -> None:
    b = bound("broadcast", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + nβ
    assert (b.latency_s, b.bandwidth_s, b.compute_s) == (4 * ALPHA, N * BETA, 0)
