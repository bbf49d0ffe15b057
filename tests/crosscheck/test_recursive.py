"""Recursive schedules: the seeds' figures, message shapes, the fold, the two trees, bad input.

Expected values are worked out by hand in the comments (p' = 2^⌊log2 p⌋, r = p − p',
h = ⌊log2 p⌋), never taken from the formula records.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from costmodel.errors import InputError
from costmodel.params import LinkParams
from costmodel.schedules import Group, Schedule, build, execute, simulate
from costmodel.schedules.double_tree import double_binary_tree_allreduce, two_trees
from costmodel.schedules.recursive import (
    BUILDERS,
    rabenseifner_allreduce,
    rabenseifner_reduce,
    recursive_doubling_allgather,
    recursive_doubling_allgather_steps,
    recursive_doubling_allreduce,
    recursive_doubling_steps,
    recursive_gather_steps,
    recursive_halving_reduce_scatter,
    recursive_halving_steps,
    scatter_recursive_doubling_broadcast,
)

ALPHA, BETA, GAMMA = Fraction(5, 10**6), Fraction(8, 10**11), Fraction(1, 10**11)
LINK = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA, gamma_s_per_byte=GAMMA)
N = Fraction(10**6 + 7)
MB = 10**6

ROOTED = ["rabenseifner_reduce", "scatter_recursive_doubling_broadcast"]


def _longest(schedule: Schedule) -> list[int]:
    """Chunks in the longest message of each step."""
    return [max(g.chunks.shape[1] for g in s) for s in schedule.steps()]


# -- the seeds' p = 8 examples ----------------------------------------------------------------


def test_recursive_doubling_sends_3n_per_worker_at_p8():
    sim = simulate(recursive_doubling_allreduce(8), n=N, link=LINK)
    assert sim.rounds == 3
    assert set(sim.bytes_sent) == {3 * N}  # log2 8 full vectors, every worker alike


def test_recursive_halving_sends_seven_eighths_at_p8():
    sim = simulate(recursive_halving_reduce_scatter(8), n=N, link=LINK)
    assert sim.rounds == 3
    assert set(sim.bytes_sent) == {N * 7 / 8}  # n/2 + n/4 + n/8


def test_rabenseifner_sends_112_mb_in_6_rounds_at_p8():
    sim = simulate(rabenseifner_allreduce(8), n=64 * MB, link=LINK)
    assert sim.rounds == 6
    assert sim.bytes_sent_per_rank == 112 * MB  # 2 · 7/8 · 64 MB
    # 6α + 112 MB·β + 56 MB·γ (only the halving half reduces)
    assert sim.time_s == 6 * ALPHA + 112 * MB * BETA + 56 * MB * GAMMA


# -- shapes: chunks in the longest message of each step ----------------------------------------


@pytest.mark.parametrize(("builder", "p", "expected"), [
    (recursive_doubling_allreduce, 8, [1, 1, 1]),
    (recursive_doubling_allreduce, 12, [1, 1, 1, 1, 1]),  # fold in, 3 exchanges, fold out
    (rabenseifner_allreduce, 8, [4, 2, 1, 1, 2, 4]),
    (rabenseifner_allreduce, 12, [8, 4, 2, 1, 1, 2, 4, 8]),  # units = p' = 8
    (recursive_halving_reduce_scatter, 8, [4, 2, 1]),
    # p = 12, r = 4: all 12 blocks in; windows of w = 4, 2, 1 carry w + min(4, w); block out
    (recursive_halving_reduce_scatter, 12, [12, 8, 4, 2, 1]),
    # p = 9, r = 1: the window holding rank 0 carries one block more: 4+1, 2+1, 1+1
    (recursive_halving_reduce_scatter, 9, [9, 5, 3, 2, 1]),
    (recursive_doubling_allgather, 8, [1, 2, 4]),
    # p = 12: block in, windows of w = 1, 2, 4 carry w + min(4, w), then the 11 blocks the extra lacks
    (recursive_doubling_allgather, 12, [1, 2, 4, 8, 11]),
    (recursive_doubling_allgather, 9, [1, 2, 3, 5, 8]),
    (rabenseifner_reduce, 8, [4, 2, 1, 1, 2, 4]),
    (rabenseifner_reduce, 12, [8, 4, 2, 1, 1, 2, 4]),  # nothing goes back
    (scatter_recursive_doubling_broadcast, 8, [4, 2, 1, 1, 2, 4]),
    # p = 12: p' = 8 blocks scattered over ranks 0..7 and doubled among them, then all 8 blocks
    # (the whole vector) to each of the 4 extra ranks
    (scatter_recursive_doubling_broadcast, 12, [4, 2, 1, 1, 2, 4, 8]),
])
def test_message_lengths(builder, p, expected):
    assert _longest(builder(p)) == expected


def test_fold_pairs_extra_ranks_with_the_first_ones():
    steps = recursive_doubling_allreduce(11).transfers()
    assert [(t.src, t.dst, t.op) for t in steps[0]] == [(8, 0, "reduce"), (9, 1, "reduce"), (10, 2, "reduce")]
    assert [(t.src, t.dst, t.op) for t in steps[-1]] == [(0, 8, "copy"), (1, 9, "copy"), (2, 10, "copy")]
    assert [sorted((t.src, t.dst) for t in s)[:2] for s in steps[1:-1]] == [
        [(0, 1), (1, 0)], [(0, 2), (1, 3)], [(0, 4), (1, 5)]]


def test_folded_reduce_scatter_returns_each_extra_block():
    last = recursive_halving_reduce_scatter(13).transfers()[-1]  # r = 5
    assert sorted((t.src, t.dst, t.chunks) for t in last) == [(i, 8 + i, (8 + i,)) for i in range(5)]


def test_folded_costs_at_p12():
    # p = 12, p' = 8, r = 4, s(12) = 1 + 2 + 4 = 7 (windows of 1, 2, 4 hold min(4, w) extras)
    sims = {name: simulate(build(name, collective, p=12), n=N, link=LINK)
            for name, (collective, _) in BUILDERS.items() if name != "double_binary_tree_allreduce"}
    assert sims["recursive_doubling_allreduce"].bytes_sent_per_rank == 4 * N  # 3 exchanges + send back
    assert sims["rabenseifner_allreduce"].bytes_sent_per_rank == N + 2 * N * 7 / 8
    assert sims["recursive_halving_reduce_scatter"].bytes_sent_per_rank == N  # the extras' whole vectors
    # rank 0 sends 7 + 7 blocks of n/12 while doubling, then the 11 blocks rank 8 lacks
    assert sims["recursive_doubling_allgather"].bytes_sent_per_rank == N * 11 / 12 + N * 14 / 12
    assert sims["rabenseifner_reduce"].bytes_sent_per_rank == N * 7 / 8 + N / 2
    # the root: 7/8 n scattered, 7/8 n while doubling, then the whole vector to rank 8
    assert sims["scatter_recursive_doubling_broadcast"].bytes_sent_per_rank == N * 7 / 8 + N * 7 / 8 + N
    assert {name: sim.rounds for name, sim in sims.items()} == {
        "recursive_doubling_allreduce": 1 + 3 + 1,
        "rabenseifner_allreduce": 1 + 3 + 3 + 1,
        "recursive_halving_reduce_scatter": 1 + 3 + 1,
        "recursive_doubling_allgather": 1 + 3 + 1,
        "rabenseifner_reduce": 1 + 3 + 3,
        "scatter_recursive_doubling_broadcast": 3 + 3 + 1,
    }


# -- every builder, every p, any root ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(set(BUILDERS) - {"double_binary_tree_allreduce"}))
def test_runs_correctly_for_any_p(name):
    collective, builder = BUILDERS[name]
    for p in [*range(1, 41), 63, 64, 65, 100]:
        schedule = builder(p)
        folded = p & (p - 1) != 0
        assert schedule.algorithm.endswith("-folded") == folded
        assert schedule.collective == collective
        run = execute(schedule, seed=p)
        assert run.ok, (p, run.problems)


@pytest.mark.parametrize("name", ROOTED)
@pytest.mark.parametrize("p", [2, 3, 5, 8, 12, 13, 16, 31])
def test_rooted_schedules_any_root(name, p):
    _, builder = BUILDERS[name]
    for root in {1 % p, p // 2, p - 1}:
        schedule = builder(p, root=root)
        assert schedule.root == root
        run = execute(schedule, seed=root)
        assert run.ok, (root, run.problems)
    # the rotation changes who sends, not what anything costs
    base = simulate(builder(p), n=N, link=LINK)
    moved = simulate(builder(p, root=p - 1), n=N, link=LINK)
    assert (moved.rounds, moved.time_s, moved.bytes_sent_per_rank) == (
        base.rounds, base.time_s, base.bytes_sent_per_rank)


def test_recursive_doubling_at_65536_ranks():
    sim = simulate(recursive_doubling_allreduce(65536), n=N, link=LINK)
    assert sim.rounds == 16
    assert sim.bytes_sent_per_rank == 16 * N
    assert sim.time_s == 16 * (ALPHA + N * BETA + N * GAMMA)
    folded = simulate(recursive_doubling_allreduce(65535), n=N, link=LINK)  # p' = 32768
    assert folded.rounds == 17
    assert folded.time_s == 17 * (ALPHA + N * BETA) + 16 * N * GAMMA  # the send-back only copies


# -- the generators over an arbitrary group of ranks ---------------------------------------------


PERMUTED = [6, 2, 7, 3, 0, 4, 1, 5]


def test_generators_over_permuted_ranks():
    p, ranks = 8, np.array(PERMUTED)
    allreduce = Schedule(collective="allreduce", algorithm="recursive-doubling", p=p, units=1,
                         generate=lambda: recursive_doubling_steps(ranks, [0]))
    assert execute(allreduce).ok
    # position j ends with (or starts with) the block of rank ranks[j]
    reduce_scatter = Schedule(collective="reduce-scatter", algorithm="recursive-halving", p=p, units=p,
                              generate=lambda: recursive_halving_steps(ranks, ranks))
    assert execute(reduce_scatter).ok
    allgather = Schedule(collective="allgather", algorithm="recursive-doubling", p=p, units=p,
                         generate=lambda: recursive_doubling_allgather_steps(ranks, ranks))
    assert execute(allgather).ok
    gather = Schedule(collective="gather", algorithm="binomial", p=p, units=p, root=ranks[0],
                      generate=lambda: recursive_gather_steps(ranks, ranks))
    assert execute(gather).ok


def test_two_groups_then_across():
    # a hierarchical pattern: two groups of 4 double side by side (one port each), then
    # rank j and j + 4 exchange their group sums: an all-reduce over all 8
    left = list(recursive_doubling_steps([0, 1, 2, 3], [0]))
    right = list(recursive_doubling_steps([4, 5, 6, 7], [0]))
    assert [(g.src.tolist(), g.dst.tolist()) for (g,) in left] == [([0, 1, 2, 3], [1, 0, 3, 2]),
                                                                   ([0, 1, 2, 3], [2, 3, 0, 1])]
    pairs = Group(np.arange(8), (np.arange(8) + 4) % 8, np.zeros((8, 1), dtype=np.int64), "reduce")
    both = Schedule(collective="allreduce", algorithm="recursive-doubling", p=8, units=1,
                    generate=lambda: [*((*a, *b) for a, b in zip(left, right, strict=True)), (pairs,)])
    assert execute(both).ok
    alone = Schedule(collective="allreduce", algorithm="recursive-doubling", p=8, units=1,
                     generate=lambda: [(*a, *b) for a, b in zip(left, right, strict=True)])
    assert not execute(alone).ok  # each group summed only its own four vectors


def test_uneven_rows_group_by_length():
    # position 0 owns chunks 0 and 2, position 1 owns chunk 1: 2 + 1 chunks in one step
    (step,) = list(recursive_halving_steps([0, 1], [[0, 2], [1, -1]]))
    assert sorted((t.src, t.dst, t.chunks) for g in step for t in g.transfers()) == [(0, 1, (1,)), (1, 0, (0, 2))]


# -- the double binary tree --------------------------------------------------------------------


def _h(p: int) -> int:
    return p.bit_length() - 1


@pytest.mark.parametrize("p", [*range(4, 70), 100, 127, 128, 129])
def test_two_trees_are_complementary_and_shallow(p):
    parents, depths, colours = two_trees(p)
    for t in (0, 1):
        assert (parents[t] < 0).sum() == 1  # one root
        assert depths[t].max() == _h(p)  # height ⌊log2 p⌋
        assert np.bincount(parents[t][parents[t] >= 0], minlength=p).max() <= 2  # binary
    children = [np.bincount(parents[t][parents[t] >= 0], minlength=p) for t in (0, 1)]
    assert ((children[0] > 0) & (children[1] > 0)).sum() == 0  # inner in at most one tree
    assert ((children[0] == 0) & (children[1] == 0)).sum() == p % 2  # odd p: one rank leaf twice
    # one-port colouring: a rank's two up-edges differ, and so do its two child edges
    both = (parents[0] >= 0) & (parents[1] >= 0)
    assert (colours[0][both] != colours[1][both]).all()
    for t in (0, 1):
        kids = np.flatnonzero(parents[t] >= 0)
        for parent in np.unique(parents[t][kids]):
            pair = colours[t][parents[t] == parent]
            assert pair.size == 1 or pair[0] != pair[1]


@pytest.mark.parametrize("p", [4, 5, 6, 7, 8, 9, 11, 16, 17, 31, 32, 33, 64, 100])
@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_double_binary_tree_cost(p, k):
    schedule = double_binary_tree_allreduce(p, k=k)
    assert schedule.algorithm == "double-binary-tree"
    assert schedule.units == 2 * k
    assert execute(schedule, seed=p + k).ok
    sim = simulate(schedule, n=N, link=LINK)
    h, block = _h(p), N / (2 * k)
    # h + k − 1 pairs of steps up (each reduces one block), as many down (each copies one)
    assert sim.rounds == 4 * (h + k - 1)
    assert sim.time_s == 4 * (h + k - 1) * (ALPHA + block * BETA) + 2 * (h + k - 1) * block * GAMMA
    # an inner rank with two children: n/2 up each tree, then n/2 to each child
    assert sim.bytes_sent_per_rank == 2 * N


def test_double_binary_tree_splits_the_vector_between_the_trees():
    first = double_binary_tree_allreduce(6, k=2).transfers()[0]
    parents, _, _ = two_trees(6)
    for t in first:
        tree = t.chunks[0] // 2  # chunks 0, 1 ride tree 0; chunks 2, 3 tree 1
        assert parents[tree, t.src] == t.dst


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: recursive_doubling_allreduce(0), "p=0 is not a number of ranks"),
    (lambda: rabenseifner_allreduce(2.0), "p=2.0 is not a number of ranks"),
    (lambda: recursive_halving_reduce_scatter(True), "p=True is not a number of ranks"),
    (lambda: rabenseifner_reduce(4, root=4), "root=4 is not one of the 4 ranks"),
    (lambda: scatter_recursive_doubling_broadcast(4, root=-1), "root=-1 is not one of the 4 ranks"),
    (lambda: recursive_doubling_allgather(4, root=None), "root=None is not one of the 4 ranks"),
    (lambda: double_binary_tree_allreduce(3, k=1), "p=3: below 4 ranks"),
    (lambda: double_binary_tree_allreduce(8), "k=None"),
    (lambda: double_binary_tree_allreduce(8, k=0), "k=0 is not a number of blocks"),
    (lambda: double_binary_tree_allreduce(8, k=1.5), "k=1.5 is not a number of blocks"),
    (lambda: two_trees(1), "p=1 is too few ranks"),
    (lambda: list(recursive_doubling_steps([0, 1, 2], [0])), "3 ranks is not a power-of-two group"),
    (lambda: list(recursive_halving_steps([0, 1, 1, 2], [0, 1, 2, 3])), "repeat a rank"),
    (lambda: list(recursive_halving_steps([0, 1], [[0], [1], [2]])), r"blocks of shape \(3, 1\)"),
    (lambda: list(recursive_doubling_allgather_steps([0, 1], [[0, -1], [-1, -1]])), "owns no chunk"),
    (lambda: list(recursive_gather_steps([0, 1], [[0], [-2]])), "owns no chunk"),
])
def test_bad_input(call, message):
    with pytest.raises(InputError, match=message):
        call()
