"""The tree, chain and all-to-all schedules: hand-worked 4-rank examples, shapes, edge cases.

Expected values are derived by hand (the transfer lists) or as closed forms written out
below in plain integers; none comes from the formula records or the simulator.
With L = ⌈log2 p⌉ and B(p) = Σ_{j<p} popcount(j), counting chunks of n/units bytes:

=============================  =====  ==========  ==================  ==========  ===================
builder                        units  steps       critical chunks     reduced     busiest sender
=============================  =====  ==========  ==================  ==========  ===================
binomial_broadcast             1      L           L                   0           L (the root)
binomial_reduce                1      L           L                   L           1
binomial_gather                p      L           p − 1               0           max(p − 2^(L−1), 2^(L−2))
binomial_scatter               p      L           p − 1               0           p − 1 (the root)
tree_allreduce                 1      2L          2L                  L           L (the root)
naive_allreduce                1      2(p − 1)    2(p − 1)            p − 1       p − 1 (the root)
naive_gather                   p      p − 1       p − 1               0           1
naive_scatter                  p      p − 1       p − 1               0           p − 1
scatter_allgather_broadcast    p      L + p − 1   2(p − 1)            0           2(p − 1) (the root)
pipelined_chain_broadcast      k      p + k − 2   p + k − 2           0           k
pairwise_alltoall              p      p − 1       p − 1               0           p − 1
bruck_alltoall                 p      L           B(p)                0           B(p)
bruck_allgather                p      L           p − 1               0           p − 1
=============================  =====  ==========  ==================  ==========  ===================
"""

from __future__ import annotations

import inspect
from fractions import Fraction

import pytest

from costmodel import LinkParams
from costmodel.errors import InputError
from costmodel.schedules import BUILDERS, Schedule, execute, simulate
from costmodel.schedules.alltoall import bruck_alltoall
from costmodel.schedules.trees import binomial_gather_steps, binomial_scatter_steps

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11),
                  gamma_s_per_byte=Fraction(1, 10**11))
N = Fraction(10**6 + 7)


def _lg(p):
    """⌈log2 p⌉ by doubling."""
    steps, reach = 0, 1
    while reach < p:
        steps, reach = steps + 1, reach * 2
    return steps


def _popsum(p):
    return sum(bin(j).count("1") for j in range(p))


def _gather_busiest(p):
    top = _lg(p)
    return max(p - 2 ** (top - 1), 2 ** (top - 2) if top >= 2 else 0)


# name: (collective, algorithm, units, steps, critical chunks, reduced chunks, busiest sender)
SHAPES = {
    "binomial_broadcast": ("broadcast", "binomial", lambda p, k: (1, _lg(p), _lg(p), 0, _lg(p))),
    "binomial_reduce": ("reduce", "binomial", lambda p, k: (1, _lg(p), _lg(p), _lg(p), 1)),
    "binomial_gather": ("gather", "binomial", lambda p, k: (p, _lg(p), p - 1, 0, _gather_busiest(p))),
    "binomial_scatter": ("scatter", "binomial", lambda p, k: (p, _lg(p), p - 1, 0, p - 1)),
    "tree_allreduce": ("allreduce", "tree", lambda p, k: (1, 2 * _lg(p), 2 * _lg(p), _lg(p), _lg(p))),
    "naive_allreduce": ("allreduce", "naive", lambda p, k: (1, 2 * (p - 1), 2 * (p - 1), p - 1, p - 1)),
    "naive_gather": ("gather", "naive", lambda p, k: (p, p - 1, p - 1, 0, 1)),
    "naive_scatter": ("scatter", "naive", lambda p, k: (p, p - 1, p - 1, 0, p - 1)),
    "scatter_allgather_broadcast": (
        "broadcast", "scatter-allgather", lambda p, k: (p, _lg(p) + p - 1, 2 * (p - 1), 0, 2 * (p - 1))),
    "pipelined_chain_broadcast": (
        "broadcast", "pipelined-chain", lambda p, k: (k, p + k - 2, p + k - 2, 0, k)),
    "pairwise_alltoall": ("alltoall", "pairwise", lambda p, k: (p, p - 1, p - 1, 0, p - 1)),
    "bruck_alltoall": ("alltoall", "bruck", lambda p, k: (p, _lg(p), _popsum(p), 0, _popsum(p))),
    "bruck_allgather": ("allgather", "bruck", lambda p, k: (p, _lg(p), p - 1, 0, p - 1)),
}
TUNED = {"pipelined_chain_broadcast"}
ROOTED = {"broadcast", "reduce", "gather", "scatter"}


def _build(name, p, **options):
    _, builder = BUILDERS[name]
    if name in TUNED:
        options.setdefault("k", 3)
    return builder(p, **options)


def _listing(schedule):
    return [[(t.src, t.dst, t.chunks, t.op) for t in step] for step in schedule.transfers()]


def _copies(*transfers):
    return [(s, d, c, "copy") for s, d, c in transfers]


def _reduces(*transfers):
    return [(s, d, (0,), "reduce") for s, d in transfers]


# The 4-rank schedules, worked out by hand from each algorithm's description.
FOUR_RANKS = {
    "binomial_broadcast": [_copies((0, 2, (0,))), _copies((0, 1, (0,)), (2, 3, (0,)))],
    "binomial_reduce": [_reduces((1, 0), (3, 2)), _reduces((2, 0))],
    "binomial_gather": [_copies((1, 0, (1,)), (3, 2, (3,))), _copies((2, 0, (2, 3)))],
    "binomial_scatter": [_copies((0, 2, (2, 3))), _copies((0, 1, (1,)), (2, 3, (3,)))],
    "tree_allreduce": [_reduces((1, 0), (3, 2)), _reduces((2, 0)),
                       _copies((0, 2, (0,))), _copies((0, 1, (0,)), (2, 3, (0,)))],
    "naive_allreduce": [_reduces((1, 0)), _reduces((2, 0)), _reduces((3, 0)),
                        _copies((0, 1, (0,))), _copies((0, 2, (0,))), _copies((0, 3, (0,)))],
    "naive_gather": [_copies((1, 0, (1,))), _copies((2, 0, (2,))), _copies((3, 0, (3,)))],
    "naive_scatter": [_copies((0, 1, (1,))), _copies((0, 2, (2,))), _copies((0, 3, (3,)))],
    "scatter_allgather_broadcast": [
        _copies((0, 2, (2, 3))), _copies((0, 1, (1,)), (2, 3, (3,))),
        # ring all-gather: in step s rank r passes block r − s on to r + 1
        _copies((0, 1, (0,)), (1, 2, (1,)), (2, 3, (2,)), (3, 0, (3,))),
        _copies((0, 1, (3,)), (1, 2, (0,)), (2, 3, (1,)), (3, 0, (2,))),
        _copies((0, 1, (2,)), (1, 2, (3,)), (2, 3, (0,)), (3, 0, (1,))),
    ],
    "pipelined_chain_broadcast": [  # k = 2 segments: p + k − 2 = 4 steps
        _copies((0, 1, (0,))), _copies((0, 1, (1,)), (1, 2, (0,))),
        _copies((1, 2, (1,)), (2, 3, (0,))), _copies((2, 3, (1,))),
    ],
    "pairwise_alltoall": [  # block (r, d) is chunk 4r + d
        _copies((0, 1, (1,)), (1, 2, (6,)), (2, 3, (11,)), (3, 0, (12,))),
        _copies((0, 2, (2,)), (1, 3, (7,)), (2, 0, (8,)), (3, 1, (13,))),
        _copies((0, 3, (3,)), (1, 0, (4,)), (2, 1, (9,)), (3, 2, (14,))),
    ],
    "bruck_alltoall": [
        # bit 0: indices 1 and 3, rank r's own blocks for r + 1 and r + 3
        _copies((0, 1, (1, 3)), (1, 2, (6, 4)), (2, 3, (11, 9)), (3, 0, (12, 14))),
        # bit 1: index 2 (own block for r + 2) and index 3 (rank r − 1's block for r + 2)
        _copies((0, 2, (2, 14)), (1, 3, (7, 3)), (2, 0, (8, 4)), (3, 1, (13, 9))),
    ],
    "bruck_allgather": [
        _copies((0, 3, (0,)), (1, 0, (1,)), (2, 1, (2,)), (3, 2, (3,))),
        _copies((0, 2, (0, 1)), (1, 3, (1, 2)), (2, 0, (2, 3)), (3, 1, (3, 0))),
    ],
}


def test_every_builder_of_these_modules_is_covered():
    from costmodel.schedules import alltoall, chain, trees

    mine = {*trees.BUILDERS, *chain.BUILDERS, *alltoall.BUILDERS}
    assert mine == set(SHAPES) == set(FOUR_RANKS)
    assert all(BUILDERS[name] == module.BUILDERS[name]
               for module in (trees, chain, alltoall) for name in module.BUILDERS)


@pytest.mark.parametrize("name", sorted(FOUR_RANKS))
def test_four_ranks_by_hand(name):
    schedule = _build(name, 4, **({"k": 2} if name in TUNED else {}))
    assert _listing(schedule) == FOUR_RANKS[name]
    assert execute(schedule).ok


def test_binomial_broadcast_from_another_root():
    # relative ranks 0..4 are 2, 3, 4, 0, 1: relative 0→4, 0→2, then 0→1 and 2→3
    schedule = _build("binomial_broadcast", 5, root=2)
    assert _listing(schedule) == [_copies((2, 1, (0,))), _copies((2, 4, (0,))),
                                  _copies((2, 3, (0,)), (4, 0, (0,)))]


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("p", [*range(2, 20), 31, 32, 33, 100])
def test_shape_run_and_price(name, p):
    """Each builder runs correctly, and its price is the closed form of the table above."""
    collective, algorithm, shape = SHAPES[name]
    for k in (1, 2, 5) if name in TUNED else (None,):
        schedule = _build(name, p, **({"k": k} if k else {}))
        units, steps, critical, reduced, busiest = shape(p, k)
        assert (schedule.collective, schedule.algorithm, schedule.units) == (collective, algorithm, units)
        if collective != "alltoall" or p <= 33:
            run = execute(schedule, seed=p)
            assert run.ok, run.problems
        sim = simulate(schedule, n=N, link=LINK)
        chunk = N / units
        assert sim.rounds == steps
        assert sim.latency_s == steps * LINK.alpha_s
        assert sim.bandwidth_s == critical * chunk * LINK.beta_s_per_byte
        assert sim.compute_s == reduced * chunk * LINK.gamma_s_per_byte
        assert sim.bytes_sent_per_rank == busiest * chunk


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_one_rank_moves_nothing(name):
    schedule = _build(name, 1)
    assert list(schedule.steps()) == []
    assert execute(schedule).ok
    assert simulate(schedule, n=N, link=LINK).time_s == 0


@pytest.mark.parametrize("name", sorted(n for n, (c, _, _) in SHAPES.items() if c in ROOTED))
@pytest.mark.parametrize("p", [2, 3, 5, 6, 7, 8, 9, 12])
def test_every_root(name, p):
    for root in range(p):
        schedule = _build(name, p, root=root)
        assert schedule.root == root
        run = execute(schedule, seed=root)
        assert run.ok, (root, run.problems)


@pytest.mark.parametrize("name", ["tree_allreduce", "naive_allreduce"])
def test_allreduce_root_is_the_tree_root(name):
    # every rank ends with the sum, whichever rank the tree hangs from
    assert all(execute(_build(name, 6, root=root)).ok for root in range(6))


@pytest.mark.parametrize("name", ["pairwise_alltoall", "bruck_alltoall", "bruck_allgather"])
def test_unrooted_builders_ignore_root(name):
    assert _listing(_build(name, 5, root=3)) == _listing(_build(name, 5))


def _largest_message_per_step(steps):
    return [max(g.chunks.shape[1] for g in s) for s in steps]


@pytest.mark.parametrize(("p", "expected"), [
    (13, [5, 4, 2, 1]),  # the root sends p − 2^(L−1) = 13 − 8, then 4, 2, 1
    (16, [8, 4, 2, 1]),
    (9, [1, 4, 2, 1]),   # first step: only relative rank 8 is served, one block
])
def test_binomial_scatter_critical_messages(p, expected):
    assert _largest_message_per_step(binomial_scatter_steps(p, root=p // 2)) == expected


@pytest.mark.parametrize(("p", "expected"), [
    (13, [1, 2, 4, 5]),  # last step: relative rank 8 forwards ranks 8..12
    (16, [1, 2, 4, 8]),
    (9, [1, 2, 4, 1]),
])
def test_binomial_gather_critical_messages(p, expected):
    assert _largest_message_per_step(binomial_gather_steps(p)) == expected


def test_binomial_scatter_steps_is_reusable():
    # the scatter-recursive-doubling broadcast imports it: p blocks, units = p, keyword root
    params = inspect.signature(binomial_scatter_steps).parameters
    assert list(params) == ["p", "root"]
    assert params["root"].kind is inspect.Parameter.KEYWORD_ONLY and params["root"].default == 0
    schedule = Schedule(collective="scatter", algorithm="binomial", p=7, units=7, root=3,
                        generate=lambda: binomial_scatter_steps(7, root=3))
    assert execute(schedule).ok


@pytest.mark.parametrize("p", [2, 3, 5, 6, 7, 8, 12, 13])
def test_bruck_alltoall_moves_each_block_once_per_set_bit(p):
    # block (s, d) has index j = d − s mod p and is forwarded popcount(j) times
    sent = {}
    for step in bruck_alltoall(p).transfers():
        for t in step:
            for chunk in t.chunks:
                sent[chunk] = sent.get(chunk, 0) + 1
    expected = {s * p + d: bin((d - s) % p).count("1") for s in range(p) for d in range(p) if d != s}
    assert sent == expected
    assert sum(expected.values()) == p * _popsum(p)


@pytest.mark.parametrize("name", sorted(n for n, (c, _, _) in SHAPES.items() if c != "alltoall"))
def test_log_p_and_linear_schedules_at_a_thousand_ranks(name):
    _, _, shape = SHAPES[name]
    units, steps, critical, _, busiest = shape(1000, 3)
    sim = simulate(_build(name, 1000), n=N, link=LINK)
    assert (sim.rounds, sim.bandwidth_s, sim.bytes_sent_per_rank) == (
        steps, critical * N / units * LINK.beta_s_per_byte, busiest * N / units)


def test_bruck_allgather_late_steps_stay_small():
    # the last step sends p/2 blocks from every rank; the chunk table is a window view, not p²/2 ints
    *_, last = _build("bruck_allgather", 4096).steps()
    (g,) = last
    assert g.chunks.shape == (4096, 2048)
    assert g.chunks.strides == (8, 8)  # row r starts one int after row r − 1: an O(p) window
    assert not g.chunks.flags.writeable


BAD = [
    ("binomial_broadcast", {"p": 0}, "p=0 is not a number of ranks"),
    ("binomial_gather", {"p": 2.5}, "p=2.5 is not a number of ranks"),
    ("naive_scatter", {"p": True}, "p=True is not a number of ranks"),
    ("binomial_scatter", {"p": 4, "root": 4}, "root=4 is not one of the 4 ranks"),
    ("tree_allreduce", {"p": 4, "root": -1}, "root=-1 is not one of the 4 ranks"),
    ("bruck_alltoall", {"p": -3}, "p=-3 is not a number of ranks"),
    ("pairwise_alltoall", {"p": 3, "root": 3}, "root=3 is not one of the 3 ranks"),
    ("pipelined_chain_broadcast", {"p": 4, "k": None}, "needs its number of segments"),
    ("pipelined_chain_broadcast", {"p": 4, "k": 0}, "k=0 is not a number of segments"),
    ("pipelined_chain_broadcast", {"p": 4, "k": 1.5}, "k=1.5 is not a number of segments"),
    ("pipelined_chain_broadcast", {"p": 4, "root": 9, "k": 2}, "root=9 is not one of the 4 ranks"),
]


@pytest.mark.parametrize(("name", "options", "message"), BAD, ids=[f"{b[0]}-{b[1]}" for b in BAD])
def test_bad_input(name, options, message):
    _, builder = BUILDERS[name]
    options = dict(options)
    p = options.pop("p")
    with pytest.raises(InputError, match=message):
        builder(p, **options)
