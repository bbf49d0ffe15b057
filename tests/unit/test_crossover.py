"""Crossovers in n and in p, and best-algorithm ranges, against hand-solved values.

Two costs linear in n, A_a + B_a·n and A_b + B_b·n, cross at n* = (A_b - A_a)/(B_a - B_b).
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from costmodel import InputError, LinkParams, UnknownNameError, best, crossover, crossover_in_p

F = Fraction

ALPHA = F(5, 10**6)  # 5 µs
BETA = F(8, 10**11)  # 0.08 ns/B
GAMMA = F(1, 10**10)  # 0.1 ns/B
SEED = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA)
WITH_GAMMA = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA, gamma_s_per_byte=GAMMA)


# -- crossovers in n -----------------------------------------------------------------------------


def test_rd_and_rabenseifner_at_p16() -> None:
    x = crossover("allreduce", "recursive-doubling", "rabenseifner", p=16, link=SEED)
    # 4α + 4nβ = 8α + 15/8·nβ  ⇔  n = 4α/(17/8·β) = 2e6/17
    assert x.relation == "crossover"
    assert [c.n_bytes for c in x.crossovers] == [F(2_000_000, 17)]
    assert (x.a, x.b, x.below, x.above) == ("recursive-doubling", "rabenseifner", "recursive-doubling",
                                            "rabenseifner")
    assert x.meaning_of_n.startswith("n is the full vector")


def test_rd_and_rabenseifner_at_p16_with_gamma() -> None:
    x = crossover("allreduce", "rd", "rab", p=16, link=WITH_GAMMA)
    # 4α + 4nβ + 4nγ = 8α + 15/8·nβ + 15/16·nγ  ⇔  n = 4α/(17/8·β + 49/16·γ)
    # = 2e-5/(1.7e-10 + 3.0625e-10) = 2e-5/4.7625e-10 = 160000/3.81
    n_star = 4 * ALPHA / (F(17, 8) * BETA + F(49, 16) * GAMMA)
    assert n_star == F(16_000_000, 381)
    assert x.crossovers[0].n_bytes == n_star
    assert x.crossovers[0].time_s == 4 * ALPHA + 4 * n_star * (BETA + GAMMA)


def test_rd_and_rabenseifner_folded_at_p12() -> None:
    x = crossover("allreduce", "rd", "rab", p=12, link=SEED)
    # folded: rd 5α + 5nβ, Rabenseifner 8α + (2 + 7/4)nβ: 3α = 5/4·nβ ⇔ n = 12α/(5β) = 150,000 B
    assert x.crossovers[0].n_bytes == 12 * ALPHA / (5 * BETA) == 150_000
    assert (x.a, x.b) == ("recursive-doubling-folded", "rabenseifner-folded")
    assert (x.below, x.above) == ("recursive-doubling-folded", "rabenseifner-folded")
    assert len(x.notes) == 2


def test_ring_and_rabenseifner_never_cross() -> None:
    x = crossover("allreduce", "ring", "rabenseifner", p=16, link=WITH_GAMMA)
    # same β and γ terms (15/8·n, 15/16·n); Rabenseifner saves 30α - 8α = 22α = 110 µs
    assert x.relation == "none"
    assert x.crossovers == ()
    assert x.below == x.above == "rabenseifner"
    assert "110 µs" in x.reason


def test_allgather_ring_and_bruck_never_cross() -> None:
    x = crossover("allgather", "ring", "bruck", p=8, link=SEED)
    # same β term 7/8·n; ring 7α against bruck 3α: bruck is never more expensive
    assert x.relation == "none"
    assert x.below == x.above == "bruck"


def test_allgather_bruck_and_recursive_doubling_are_identical_at_a_power_of_two() -> None:
    x = crossover("allgather", "bruck", "recursive-doubling", p=8, link=SEED)
    # both 3α + 7/8·nβ
    assert x.relation == "identical"
    assert (x.crossovers, x.below, x.above) == ((), None, None)


def test_allgather_bruck_beats_folded_recursive_doubling() -> None:
    x = crossover("allgather", "bruck", "rd", p=12, link=SEED)
    # bruck 4α + 11/12·nβ; folded rd 5α + (1 + 15/12)nβ: bruck is cheaper at every n ≥ 0
    assert x.relation == "none"
    assert x.below == x.above == "bruck"


def test_lines_meeting_at_zero_do_not_cross() -> None:
    x = crossover("allreduce", "ring", "tree", p=2, link=SEED)
    # p = 2: ring 2α + nβ, tree 2α + 2nβ: equal at n = 0 only
    assert x.relation == "none"
    assert x.crossovers == ()
    assert x.below == x.above == "ring"


def test_broadcast_binomial_and_scatter_allgather() -> None:
    x = crossover("broadcast", "binomial", "scatter-allgather", p=16, link=SEED)
    # 4α + 4nβ = 19α + 15/8·nβ  ⇔  n = 15α/(17/8·β) = 120/17 · 62500 = 7.5e6/17
    assert x.crossovers[0].n_bytes == F(7_500_000, 17)
    assert (x.below, x.above) == ("binomial", "scatter-allgather")


def test_alltoall_bruck_and_pairwise() -> None:
    x = crossover("alltoall", "pairwise", "bruck", p=8, link=SEED)
    # pairwise 7α + 7/8·nβ, bruck 3α + 12/8·nβ: 4α = 5/8·nβ ⇔ n = 32α/(5β) = 400,000 B
    assert x.crossovers[0].n_bytes == 400_000
    assert (x.below, x.above) == ("bruck", "pairwise")


def test_crossover_to_dict() -> None:
    data = crossover("allreduce", "rd", "rab", p=16, link=SEED).to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    (point,) = data["crossovers"]
    assert point["n_bytes"] == pytest.approx(2_000_000 / 17)
    assert point["n_bytes_exact"] == "2000000/17"
    assert point["exact"] is True
    assert data["below"] == "recursive-doubling"
    assert data["alpha_s"] == pytest.approx(5e-6)


def test_symbolic_crossover() -> None:
    x = crossover("allreduce", "rd", "rab", p=16, link=SEED, symbolic=True)
    assert x.symbolic is not None
    # n* = 4α/(17/8·β + 49/16·γ) = 64α/(34β + 49γ)
    text = x.symbolic.replace(" ", "").replace("·", "*")
    for name, letter in (("alpha", "α"), ("beta", "β"), ("gamma", "γ")):
        text = text.replace(name, letter)
    assert text == "n*=64*α/(34*β+49*γ)"


# -- tuned costs: scanned, not exact -------------------------------------------------------------


def chain_best(p: int, n: Fraction, link: LinkParams) -> Fraction:
    # (p + k - 2)(α + nβ/k), convex in k; the optimum here is far below 2000
    return min((p + k - 2) * (link.alpha_s + n * link.beta_s_per_byte / k) for k in range(1, min(int(n), 2000) + 1))


def test_binomial_and_pipelined_chain() -> None:
    x = crossover("broadcast", "binomial", "pipelined-chain", p=16, link=SEED, max_bytes="16MiB")
    assert x.relation == "crossover"
    (point,) = x.crossovers
    assert (x.below, x.above) == ("binomial", "pipelined-chain")
    # binomial: 4α + 4nβ; chain: min over k of (14 + k)(α + nβ/k).  By hand, k = 13 at
    # n = 747,500 B: 27·(5 µs + 59.8 µs/13) = 27 · 9.6 µs = 259.2 µs = 4 · 5 µs + 4 · 59.8 µs
    # (k(k+1) = 14nβ/α = 167.4 lies between 12·13 and 13·14: k = 13 holds around n*, so n* is exact)
    n = point.n_bytes
    assert 4 * ALPHA + 4 * 747_500 * BETA == 27 * (ALPHA + 747_500 * BETA / 13) == F(81, 312_500)
    assert point.exact
    assert n == 747_500
    assert point.time_s == F(81, 312_500)
    # the sign changes around the reported point
    below, above = n * F(99, 100), n * F(101, 100)
    assert 4 * ALPHA + 4 * below * BETA < chain_best(16, below, SEED)
    assert 4 * ALPHA + 4 * above * BETA > chain_best(16, above, SEED)


def test_binomial_and_pipelined_chain_at_p8() -> None:
    x = crossover("broadcast", "chain", "binomial", p=8, link=SEED)
    # binomial 3α + 3nβ; chain (6 + k)(α + nβ/k) = 6α + kα + nβ + 6nβ/k, best k where
    # k(k+1) ≈ 6nβ/α.  With k = 7: 13α + 13/7·nβ = 3α + 3nβ ⇔ n = 70α/(8β) = 546,875 B, where
    # 6nβ/α = 52.5 lies between 6·7 and 7·8, so k = 7 indeed
    (point,) = x.crossovers
    assert point.exact
    assert point.n_bytes == 70 * ALPHA / (8 * BETA) == 546_875
    assert point.time_s == 3 * ALPHA + 3 * point.n_bytes * BETA
    assert (x.below, x.above) == ("binomial", "pipelined-chain")


def test_double_binary_tree_and_ring_at_p8() -> None:
    x = crossover("allreduce", "dbt", "ring", p=8, link=SEED)
    # ring 14α + 7/4·nβ; tree of height 3 with k blocks: 8α + 4kα + 2nβ + 4nβ/k, best k = 1 while
    # nβ/α < 1·2 (n < 125,000 B): 12α + 6nβ = 14α + 7/4·nβ ⇔ n = 8α/(17β) = 500,000/17 B
    (point,) = x.crossovers
    assert point.exact
    assert point.n_bytes == 8 * ALPHA / (17 * BETA) == F(500_000, 17)
    assert (x.below, x.above) == ("double-binary-tree", "ring")


def dbt_best(p: int, n: Fraction, link: LinkParams, near: int) -> Fraction:
    # 4(h + k - 1)(α + nβ/(2k)), h = ⌊log2 p⌋, by brute force over a window around the optimum
    h = p.bit_length() - 1
    return min(4 * (h + k - 1) * (link.alpha_s + n * link.beta_s_per_byte / (2 * k))
               for k in range(max(1, near - 500), near + 500))


def test_ring_and_double_binary_tree_at_p65536_cross_near_2_tb() -> None:
    # ring 2(p-1)α + 2(p-1)/p·nβ against the tree's √n-shaped cost: the tree wins up to ~2.2 TB
    x = crossover("allreduce", "ring", "dbt", p=65536, link=SEED, max_bytes="4TB")
    (point,) = x.crossovers
    assert point.exact
    assert point.n_bytes == F(366_132_621_312_000_000, 166_547)  # ≈ 2.198 TB
    assert (x.below, x.above, x.relation, x.exhausted) == ("double-binary-tree", "ring", "crossover", False)
    n = point.n_bytes
    ring = 2 * 65535 * ALPHA + 2 * F(65535, 65536) * n * BETA
    # by hand: k* ≈ √((h - 1)nβ/(2α)) = √(15 · 2.198e12 B · 8e-11 s/B / 1e-5 s) ≈ 16,240
    k = 16_240
    assert dbt_best(65536, n, SEED, k) == ring == point.time_s
    below, above = n * F(999, 1000), n * F(1001, 1000)
    assert dbt_best(65536, below, SEED, k) < 2 * 65535 * ALPHA + 2 * F(65535, 65536) * below * BETA
    assert dbt_best(65536, above, SEED, k) > 2 * 65535 * ALPHA + 2 * F(65535, 65536) * above * BETA


def test_a_scan_that_finds_nothing_says_so() -> None:
    x = crossover("allreduce", "ring", "dbt", p=65536, link=SEED)
    assert (x.relation, x.exhausted, x.crossovers) == ("none", True, ())
    assert (x.min_bytes, x.max_bytes) == (0, 16 * 2**30)
    assert x.reason.startswith("no crossover between 0 B and 17.18 GB") and x.reason.endswith("widen max_bytes=")
    assert x.to_dict()["exhausted"] is True


def test_chain_and_binomial_tie_at_p3() -> None:
    # p = 3: binomial 2α + 2nβ; chain with k = 1 is the same 2α + 2nβ, and k = 2 (3α + 3/2·nβ) is
    # cheaper once α < nβ/2, i.e. n > 2α/β = 125,000 B exactly: a tie, then the chain
    x = crossover("broadcast", "chain", "binomial", p=3, link=SEED)
    assert [(r.from_bytes, r.to_bytes, r.cheaper) for r in x.ranges] == [
        (0, 125_000, None), (125_000, 16 * 2**30, "pipelined-chain")]
    assert 2 * ALPHA / BETA == 125_000
    (point,) = x.crossovers
    assert point.exact and point.n_bytes == 125_000 and point.time_s == 2 * ALPHA + 2 * 125_000 * BETA
    assert (x.below, x.above) == (None, "pipelined-chain")
    data = x.to_dict()
    assert data["ranges"][0] == {"from_bytes": 0, "to_bytes": 125000, "cheaper": None, "equal": True}


def test_best_edges_are_exact_at_tuned_breaks() -> None:
    # p = 3 broadcast: chain's k changes at n = α·k(k+1)/β: 125 kB (1 → 2) and 375 kB (2 → 3); the
    # scatter-allgather tie ends at 750 kB.  Every edge an exact integer, not 125000.00000000001
    r = best("broadcast", p=3, link=SEED)
    edges = [x.from_bytes for x in r.ranges] + [r.ranges[-1].to_bytes]
    assert edges == [1, 125_000, 375_000, 750_000, 16 * 2**30]
    assert all(isinstance(e, Fraction) and e.denominator == 1 for e in edges)


def test_min_and_max_bound_a_closed_form_crossover() -> None:
    x = crossover("allreduce", "rd", "rab", p=16, link=SEED, max_bytes="100kB")
    assert (x.relation, x.crossovers, x.exhausted) == ("none", (), False)
    assert x.below == x.above == "recursive-doubling"
    assert "117.6 kB" in x.reason  # the lines do cross, at 2e6/17 B, outside the range
    x = crossover("allreduce", "rd", "rab", p=16, link=SEED, min_bytes="100kB", max_bytes="1MB")
    assert [c.n_bytes for c in x.crossovers] == [F(2_000_000, 17)]
    assert (x.min_bytes, x.max_bytes) == (100_000, 1_000_000)
    with pytest.raises(InputError, match="size range is empty"):
        crossover("allreduce", "rd", "rab", p=16, link=SEED, min_bytes="1MB", max_bytes="1kB")


# -- errors --------------------------------------------------------------------------------------


def test_the_same_algorithm_twice_is_refused() -> None:
    with pytest.raises(InputError, match="same algorithm"):
        crossover("allreduce", "rab", "rabenseifner", p=16, link=SEED)
    with pytest.raises(InputError, match="same algorithm"):
        crossover("allreduce", "ring", "RING", p=16, link=SEED)


def test_unknown_names_and_bad_ranks() -> None:
    with pytest.raises(UnknownNameError):
        crossover("allreduce", "ring", "rign", p=16, link=SEED)
    with pytest.raises(InputError):
        crossover("allreduce", "ring", "rab", p=1, link=SEED)


# -- crossovers in p -----------------------------------------------------------------------------


def ranges_of(x: object) -> list[tuple[int, int, str | None]]:
    return [(r.from_p, r.to_p, r.cheaper) for r in x.ranges]  # type: ignore[attr-defined]


def test_allgather_ring_and_bruck_in_p() -> None:
    x = crossover_in_p("allgather", "ring", "bruck", n="1MB", link=SEED, p_max=64)
    # same β term; ring p-1 start-ups, bruck ⌈log2 p⌉: equal at p = 2, 3, bruck from p = 4 on
    assert ranges_of(x) == [(2, 3, None), (4, 64, "bruck")]
    assert x.crossovers == (4,)


def test_ring_and_rabenseifner_in_p_at_64mib() -> None:
    x = crossover_in_p("allreduce", "ring", "rab", n="64MiB", link=SEED, p_max=8)
    # p = 2: 2α + nβ both.  p = 3: ring 4α + 4/3·nβ, folded rab 4α + 3nβ.  p = 4: rab saves 2α.
    # p = 5..7: folded rab pays (2 + 2(p'-1)/p')n against ring's 2(p-1)/p·n.  p = 8: rab saves 8α.
    assert ranges_of(x) == [(2, 2, None), (3, 3, "ring"), (4, 4, "rabenseifner"), (5, 7, "ring"),
                            (8, 8, "rabenseifner")]
    assert x.crossovers == (3, 4, 5, 8)
    assert x.n_bytes == 64 * 2**20


def test_ring_and_rabenseifner_in_p_at_1kib() -> None:
    x = crossover_in_p("allreduce", "ring", "rab", n=1024, link=SEED, p_min=2, p_max=8)
    # p = 5: ring 8α + 8/5·nβ, folded rab 6α + 7/2·nβ: 2α = 10 µs > 19/10·1024·β = 0.156 µs: rab
    assert ranges_of(x) == [(2, 2, None), (3, 3, "ring"), (4, 8, "rabenseifner")]


def test_crossover_in_p_window() -> None:
    x = crossover_in_p("allgather", "ring", "bruck", n=10, link=SEED, p_min=100, p_max=110)
    assert ranges_of(x) == [(100, 110, "bruck")]
    assert x.crossovers == ()
    data = x.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_crossover_in_p_errors() -> None:
    with pytest.raises(InputError, match="below"):
        crossover_in_p("allreduce", "ring", "rab", n=1, link=SEED, p_min=10, p_max=9)
    with pytest.raises(InputError, match="too many"):
        crossover_in_p("allreduce", "ring", "rab", n=1, link=SEED, p_min=2, p_max=200_000)
    with pytest.raises(InputError):
        crossover_in_p("allreduce", "ring", "rab", n=1, link=SEED, p_min=1, p_max=9)


# -- best ranges ---------------------------------------------------------------------------------


def test_best_allreduce_at_p16() -> None:
    r = best("allreduce", ["ring", "rd", "rab"], p=16, link=SEED, min_bytes=1, max_bytes="64MiB")
    # recursive doubling up to 2e6/17 B, then Rabenseifner (ring is 22α above it everywhere)
    assert [(x.algorithm, x.from_bytes, x.to_bytes, x.tied) for x in r.ranges] == [
        ("recursive-doubling", 1, F(2_000_000, 17), ()),
        ("rabenseifner", F(2_000_000, 17), 64 * 2**20, ()),
    ]
    assert r.notes == ()


def test_best_at_a_non_power_of_two_names_the_adaptations() -> None:
    r = best("allreduce", ["rd", "rab"], p=12, link=SEED, max_bytes="1MB")
    # folded: rd below 150,000 B, rab above
    assert [(x.algorithm, x.from_bytes, x.to_bytes) for x in r.ranges] == [
        ("recursive-doubling-folded", 1, 150_000),
        ("rabenseifner-folded", 150_000, 10**6),
    ]
    assert len(r.notes) == 2


def test_best_reports_ties() -> None:
    r = best("allgather", ["ring", "rd", "bruck"], p=8, link=SEED, max_bytes="1GB")
    # bruck and recursive doubling are both 3α + 7/8·nβ at p = 8
    assert [(x.algorithm, x.tied) for x in r.ranges] == [("recursive-doubling", ("bruck",))]
    data = r.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_best_errors() -> None:
    with pytest.raises(InputError, match="at least two"):
        best("allreduce", ["rab", "rabenseifner"], p=16, link=SEED)
    with pytest.raises(InputError, match="at least two"):
        best("allreduce", ["ring"], p=16, link=SEED)
    with pytest.raises(InputError, match="empty"):
        best("allreduce", ["ring", "rab"], p=16, link=SEED, min_bytes="1MB", max_bytes="1MB")
    with pytest.raises(InputError, match="empty"):
        best("allreduce", ["ring", "rab"], p=16, link=SEED, min_bytes="2MB", max_bytes="1MB")
    with pytest.raises(UnknownNameError):
        best("allreduce", ["ring", "rign"], p=16, link=SEED)
