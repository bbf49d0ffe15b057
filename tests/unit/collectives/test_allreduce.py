"""All-reduce: n is the full vector each rank holds (and ends with, reduced)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from costmodel import LinkParams, bound, compare, cost
from costmodel.errors import ConstraintError
from tests.unit.collectives._support import ALPHA, BETA, GAMMA, LINK, N, Terms, expect, terms

F = Fraction

CASES = [
    # ring: reduce-scatter and all-gather, p-1 steps of n/p each
    ("ring", 2, expect(2, N, F(1, 2) * N, 2, N)),
    ("ring", 5, expect(8, F(8, 5) * N, F(4, 5) * N, 8, F(8, 5) * N)),
    ("ring", 16, expect(30, F(15, 8) * N, F(15, 16) * N, 30, F(15, 8) * N)),
    # tree (the seeds' basic one): 2⌈log2 p⌉(α + nβ), ⌈log2 p⌉ full reductions; the busiest
    # sender broadcasts ⌈log2 p⌉ times
    ("tree", 2, expect(2, 2 * N, N, 2, N)),
    ("tree", 5, expect(6, 6 * N, 3 * N, 6, 3 * N)),
    ("tree", 16, expect(8, 8 * N, 4 * N, 8, 4 * N)),
    # recursive doubling, p = 8: 3 full-vector exchanges, each reduced
    ("recursive-doubling", 8, expect(3, 3 * N, 3 * N, 3, 3 * N)),
    # folded, p = 12: the 4 extra ranks send n in (α + nβ + nγ), 3 exchanges among 8, the result
    # goes back (α + nβ): (⌊log2 12⌋ + 2) = 5 α, 5nβ, 4nγ; ranks 0..3 send 3n + n = 4n
    ("recursive-doubling", 12, expect(5, 5 * N, 4 * N, 5, 4 * N)),
    # p = 3: 1 + 1 + 1 = 3 α, 3nβ, 2nγ; rank 0 sends one exchange and the result: 2n
    ("recursive-doubling", 3, expect(3, 3 * N, 2 * N, 3, 2 * N)),
    # Rabenseifner, p = 16: 2·4 α, 2·15/16 nβ, 15/16 nγ
    ("rabenseifner", 16, expect(8, F(15, 8) * N, F(15, 16) * N, 8, F(15, 8) * N)),
    ("rabenseifner", 2, expect(2, N, F(1, 2) * N, 2, N)),
    # folded, p = 12, p' = 8: fold-in (α + nβ + nγ), Rabenseifner on 8 ranks
    # (6α + 2·7/8 nβ + 7/8 nγ), result back (α + nβ): (2·3 + 2)α + (2 + 2·7/8)nβ + (1 + 7/8)nγ;
    # ranks 0..3 send 2·7/8 n + n
    ("rabenseifner", 12, expect(8, (2 + F(7, 4)) * N, (1 + F(7, 8)) * N, 8, (1 + F(7, 4)) * N)),
    # p = 3, p' = 2: 4α + (2 + 1)nβ + (1 + 1/2)nγ; rank 0 sends n/2 + n/2 + n
    ("rabenseifner", 3, expect(4, 3 * N, F(3, 2) * N, 4, 2 * N)),
    # p = 1000, p' = 512: (2·9 + 2)α + (2 + 2·511/512)nβ + (1 + 511/512)nγ
    ("rabenseifner", 1000, expect(20, (2 + F(511, 256)) * N, (1 + F(511, 512)) * N, 20, (1 + F(511, 256)) * N)),
    # naive root: receives p-1 full vectors, reduces them, sends p-1
    ("naive", 5, expect(8, 8 * N, 4 * N, 8, 4 * N)),
    # double binary tree with k blocks, h = ⌊log2 p⌋: 4(h + k - 1) steps of α + nβ/(2k),
    # (h + k - 1)nγ/k; each rank sends n/2 up one tree, n/2 to each of two children: 2n.
    # p = 8, k = 4: h = 3: 24 α, 24·n/8 = 3n β, 6/4 nγ
    ("double-binary-tree", 8, expect(24, 3 * N, F(3, 2) * N, 24, 2 * N), {"blocks": 4}),
    # p = 12, k = 1: h = 3: 12 α, 12·n/2 = 6n β, 3nγ
    ("double-binary-tree", 12, expect(12, 6 * N, 3 * N, 12, 2 * N), {"blocks": 1}),
]


@pytest.mark.parametrize(
    ("algorithm", "p", "expected", "extra"),
    [c if len(c) == 4 else (*c, {}) for c in CASES],
    ids=[f"{c[0]}-p{c[1]}" for c in CASES],
)
def test_cost(algorithm: str, p: int, expected: Terms, extra: dict[str, int]) -> None:
    assert terms("allreduce", algorithm, p, **extra) == expected


@pytest.mark.parametrize(("name", "adapted"), [("rd", "recursive-doubling-folded"),
                                               ("rab", "rabenseifner-folded")])
@pytest.mark.parametrize("p", [3, 5, 12, 1000])
def test_non_power_of_two_notes_name_the_folded_record(name: str, adapted: str, p: int) -> None:
    result = cost("allreduce", name, p=p, n=N, link=LINK)
    assert result.algorithm == adapted
    assert len(result.notes) == 1
    note = result.notes[0]
    assert f"p={p}" in note
    assert re.search(r"power.of.two", note)
    assert adapted in note


def test_power_of_two_is_not_folded() -> None:
    for name in ("rd", "rab"):
        assert cost("allreduce", name, p=1024, n=N, link=LINK).notes == ()


# -- the tuned double binary tree ------------------------------------------------------------

TUNE_LINK = LinkParams(alpha_s=F(1, 10**6), beta_s_per_byte=F(1, 10**8), gamma_s_per_byte=F(1, 10**9))


def dbt_time(p: int, n: Fraction, k: int, link: LinkParams) -> Fraction:
    h = p.bit_length() - 1  # ⌊log2 p⌋
    steps = h + k - 1
    return 4 * steps * link.alpha_s + F(2 * steps, k) * n * link.beta_s_per_byte + F(steps, k) * n * link.gamma_s_per_byte


@pytest.mark.parametrize("p", [2, 3])
def test_double_binary_tree_needs_four_ranks(p: int) -> None:
    with pytest.raises(ConstraintError, match="needs p ≥ 4"):
        cost("allreduce", "double-binary-tree", p=p, n=1000, link=LINK)
    table = compare("allreduce", p=p, n=1000, link=LINK)  # the default list leaves it out, with a note
    assert "double-binary-tree" not in [r.algorithm for r in table.results]
    assert any(note.startswith("double-binary-tree left out") for note in table.notes)


@pytest.mark.parametrize("p", [4, 5, 8, 12, 64])
@pytest.mark.parametrize("n", [1, 2, 3, 10, 100, 1000, 4097])
def test_double_binary_tree_picks_the_best_block_count(p: int, n: int) -> None:
    size = F(n)
    candidates = range(1, max(1, n // 2) + 1)  # blocks of n/(2k) ≥ 1 byte
    best_k = min(candidates, key=lambda k: dbt_time(p, size, k, TUNE_LINK))
    result = cost("allreduce", "double-binary-tree", p=p, n=size, link=TUNE_LINK)
    assert result.time_s == dbt_time(p, size, best_k, TUNE_LINK)
    assert result.parameters == {"blocks": best_k}
    assert any("blocks" in note and "minimises" in note for note in result.notes)


def test_double_binary_tree_given_blocks_is_noted() -> None:
    result = cost("allreduce", "dbt", p=8, n=100, link=LINK, extra={"blocks": 5})
    assert result.parameters == {"blocks": 5}
    assert any("given" in note for note in result.notes)


# -- the table and the bound -----------------------------------------------------------------


def test_compare_sorts_fastest_first_and_skips_adaptations() -> None:
    table = compare("allreduce", None, p=16, n=N, link=LINK)
    names = [r.algorithm for r in table.results]
    assert sorted(names) == sorted(["ring", "tree", "recursive-doubling", "rabenseifner", "naive",
                                    "double-binary-tree"])
    times = [r.time_s for r in table.results]
    assert times == sorted(times)
    assert table.best == names[0]
    assert table.n_bytes == N
    assert table.meaning_of_n.startswith("n is the full vector")


def test_compare_at_non_power_of_two_uses_the_adaptations() -> None:
    table = compare("allreduce", ["rd", "rab", "ring"], p=12, n=N, link=LINK)
    assert {r.algorithm for r in table.results} == {"recursive-doubling-folded", "rabenseifner-folded", "ring"}


def test_compare_drops_duplicates() -> None:
    table = compare("allreduce", ["rab", "rabenseifner", "RAB", "ring"], p=16, n=N, link=LINK)
    assert sorted(r.algorithm for r in table.results) == ["rabenseifner", "ring"]


def test_lower_bound() -> None:
    b = bound("allreduce", p=12, n=N, link=LINK)
    # ⌈log2 12⌉α + 2·11/12·nβ + 11/12·nγ
    assert b.latency_s == 4 * ALPHA
    assert b.bandwidth_s == F(22, 12) * N * BETA
    assert b.compute_s == F(11, 12) * N * GAMMA
    assert b.time_s == b.latency_s + b.bandwidth_s + b.compute_s
    assert b.source.citation.key == "chan2007"


def test_bound_ratio() -> None:
    result = cost("allreduce", "ring", p=16, n=N, link=LINK)
    # ring: 30α + 15/8 nβ + 15/16 nγ over 4α + 15/8 nβ + 15/16 nγ
    ring = 30 * ALPHA + F(15, 8) * N * BETA + F(15, 16) * N * GAMMA
    lower = 4 * ALPHA + F(15, 8) * N * BETA + F(15, 16) * N * GAMMA
    assert result.bound_s == lower
    assert result.bound_ratio == ring / lower


def test_bound_ratio_is_none_for_a_zero_bound() -> None:
    free = LinkParams(alpha_s=F(0), beta_s_per_byte=F(0))
    assert cost("allreduce", "ring", p=4, n=N, link=free).bound_ratio is None
