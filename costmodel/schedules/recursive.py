"""Recursive schedules: recursive doubling and halving, and Rabenseifner.

**Power-of-two groups.**  The step generators here work on any list of q = 2^j
ranks (``ranks[j]`` is the rank at position j), so that hierarchical schedules
can run them inside a node or across nodes.  Recursive doubling exchanges with
the position at distance 1, 2, 4, ... (partner j XOR d); recursive halving
exchanges with distance q/2, q/4, ..., 1 and keeps the aligned half of its
window that contains j, so after it position j holds the sum of its own
blocks; the all-gather retraces the windows in the other direction.

**The fold (non-powers of two).**  With p' = 2^⌊log2 p⌋ and r = p − p', extra
rank p'+i hands its data to rank i first (MPICH pairs even/odd neighbours
instead; the cost is the same) and, where the collective needs it, gets its
result back at the end.  Ranks are relative to the root, (rank − root) mod p,
so the root is always one of the p' survivors.  Where survivors own unequal
data (reduce-scatter and all-gather over p blocks), rank i < r owns blocks i
and p'+i, and an exchange carries every block its window owns: the heaviest
window of size w holds min(r, w) extra blocks.  A broadcast has nothing to fold in (the
extra ranks hold no data): its p' survivors scatter and all-gather p' blocks, and the
extra ranks only receive the whole vector at the end.  At a power of two r = 0 and
every fold step vanishes, so a ``-folded`` record costs exactly as the one it adapts.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1):49-66, 2005: 'Allreduce',
   'Reduce-Scatter', 'Allgather', 'Broadcast', 'Reduce', and MPICH
   ``allreduce_intra_recursive_doubling.c``,
   ``allreduce_intra_reduce_scatter_allgather.c``,
   ``reduce_scatter_intra_recursive_halving.c``,
   ``allgather_intra_recursive_doubling.c``,
   ``bcast_intra_scatter_recursive_doubling_allgather.c``,
   ``reduce_intra_reduce_scatter_gather.c``.
.. [2] R. Rabenseifner, "Optimization of collective reduction operations",
   ICCS 2004, LNCS 3036, pp. 1-9.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

import numpy as np

from costmodel.errors import InputError
from costmodel.intmath import floor_log2, is_power_of_two
from costmodel.schedules.model import Group, Op, Schedule, Step, check_ranks
from costmodel.schedules.trees import binomial_scatter_steps

__all__ = [
    "BUILDERS",
    "rabenseifner_allreduce",
    "rabenseifner_reduce",
    "recursive_doubling_allgather",
    "recursive_doubling_allgather_steps",
    "recursive_doubling_allreduce",
    "recursive_doubling_steps",
    "recursive_gather_steps",
    "recursive_halving_reduce_scatter",
    "recursive_halving_steps",
    "scatter_recursive_doubling_broadcast",
]

RankList = Sequence[int] | np.ndarray
ChunkTable = Sequence[Sequence[int]] | np.ndarray


# -- checks ------------------------------------------------------------------------------


def _group_ranks(ranks: RankList) -> np.ndarray:
    """*ranks* as an int64 array of distinct ranks whose length is a power of two."""
    out = np.asarray(ranks, dtype=np.int64).reshape(-1)
    if not is_power_of_two(out.size):
        raise InputError(f"{out.size} ranks is not a power-of-two group; fold the extra ranks in first")
    if np.unique(out).size != out.size:
        raise InputError(f"ranks {out.tolist()!r} repeat a rank; list each rank of the group once")
    return out


def _block_table(blocks: ChunkTable, q: int) -> np.ndarray:
    """*blocks* as a (q, b) int64 table, -1 padding allowed, each row owning at least one chunk."""
    table = np.asarray(blocks, dtype=np.int64)
    if table.ndim == 1:
        table = table.reshape(-1, 1)
    if table.ndim != 2 or table.shape[0] != q:
        raise InputError(f"blocks of shape {table.shape} do not give one row per rank of the {q}; "
                         "pass a (q, b) table of chunk ids")
    if (table < -1).any() or not (table >= 0).any(axis=1).all():
        raise InputError("a row of blocks owns no chunk (or uses an id below -1); "
                         "give every rank at least one chunk id, pad with -1")
    return table


def _group_and_blocks(ranks: RankList, blocks: ChunkTable) -> tuple[np.ndarray, np.ndarray]:
    """The checked ranks of a power-of-two group and its checked (q, b) table of blocks."""
    group_ranks = _group_ranks(ranks)
    return group_ranks, _block_table(blocks, group_ranks.size)


def _fold(p: int) -> tuple[int, int]:
    """(p', r): the power-of-two group size 2^⌊log2 p⌋ and the number of extra ranks."""
    q = 1 << floor_log2(p)
    return q, p - q


def _absolute(rel: np.ndarray, p: int, root: int) -> np.ndarray:
    return (rel + root) % p


# -- step generators over one power-of-two group -----------------------------------------


def _send_windows(ranks: np.ndarray, table: np.ndarray, *, size: int, src: np.ndarray,
                  dst: np.ndarray, window: np.ndarray, op: Op) -> Step:
    """Position src[i] sends position dst[i] every chunk owned by window[i] (aligned, *size* wide).

    One group per distinct message length (windows own unequal numbers of chunks
    when some positions own padded rows).
    """
    q, width = table.shape
    flat = table.reshape(q // size, size * width)
    valid = flat >= 0
    per = valid.sum(axis=1)[window]
    groups = []
    for count in np.unique(per).tolist():
        pick = per == count
        wins, inverse = np.unique(window[pick], return_inverse=True)
        rows = flat[wins][valid[wins]].reshape(wins.size, count)
        groups.append(Group(ranks[src[pick]], ranks[dst[pick]], rows[inverse.reshape(-1)], op))
    return tuple(groups)


def _exchange_windows(ranks: RankList, blocks: ChunkTable, *, halving: bool) -> Iterator[Step]:
    """Every position j exchanges an aligned window of d positions with j XOR d, one step per d.

    Doubling (d = 1, 2, ..., q/2) copies the window that contains j; halving, the same
    steps run backwards (d = q/2, ..., 1), reduces into j XOR d the window that contains
    j XOR d, the one j gives up.
    """
    group_ranks, table = _group_and_blocks(ranks, blocks)
    q = group_ranks.size
    position = np.arange(q, dtype=np.int64)
    levels = range(floor_log2(q))
    for i in reversed(levels) if halving else levels:
        d = 1 << i
        partner = position ^ d
        window = (partner if halving else position) // d
        yield _send_windows(group_ranks, table, size=d, src=position, dst=partner, window=window,
                            op="reduce" if halving else "copy")


def recursive_doubling_steps(ranks: RankList, chunks: Sequence[int] | np.ndarray, *,
                             op: Op = "reduce") -> Iterator[Step]:
    """log2 q steps in which every rank of the group exchanges *chunks* with its partner.

    In step i (i = 0, 1, ...) position j sends the chunks to position j XOR 2^i, which
    adds them to its own (``op="reduce"``: an all-reduce of those chunks over the group)
    or copies them.

    Parameters
    ----------
    ranks : sequence of int
        The q ranks of the group, q a power of two; ``ranks[j]`` is position j.
    chunks : sequence of int
        The chunk ids every rank sends in every step (the full vector: all of them).
    op : {"reduce", "copy"}
        What the receiver does with the chunks.

    Yields
    ------
    Step
        One group of q transfers per step.

    Raises
    ------
    InputError
        If q is not a power of two or a rank repeats.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Allreduce'; MPICH ``allreduce_intra_recursive_doubling.c``.

    Examples
    --------
    >>> [[(t.src, t.dst) for t in g.transfers()] for (g,) in recursive_doubling_steps([5, 7], [0])]
    [[(5, 7), (7, 5)]]
    >>> [g.dst.tolist() for (g,) in recursive_doubling_steps(range(4), [0])]
    [[1, 0, 3, 2], [2, 3, 0, 1]]
    """
    group_ranks = _group_ranks(ranks)
    ids = np.asarray(chunks, dtype=np.int64).reshape(1, -1)
    q = group_ranks.size
    position = np.arange(q, dtype=np.int64)
    payload = np.repeat(ids, q, axis=0)
    for i in range(floor_log2(q)):
        yield (Group(group_ranks, group_ranks[position ^ (1 << i)], payload, op),)


def recursive_halving_steps(ranks: RankList, blocks: ChunkTable) -> Iterator[Step]:
    """log2 q reduce steps after which position j holds the sum (over the group) of blocks[j].

    In the step with distance d (d = q/2, q/4, ..., 1) position j sends position
    j XOR d the chunks owned by the aligned window of d positions that contains j XOR d,
    and keeps the window that contains j.  Rows may own unequal numbers of chunks (pad
    with -1); a message then carries every chunk its window owns.

    Parameters
    ----------
    ranks : sequence of int
        The q ranks of the group, q a power of two.
    blocks : (q, b) table of int
        ``blocks[j]``: the chunk ids position j ends with, reduced; -1 pads short rows.

    Yields
    ------
    Step
        One group per distinct message length in each step.

    Raises
    ------
    InputError
        If q is not a power of two, a rank repeats, or *blocks* has the wrong shape.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Reduce-Scatter'; MPICH ``reduce_scatter_intra_recursive_halving.c``.

    Examples
    --------
    >>> steps = recursive_halving_steps(range(4), [[0], [1], [2], [3]])
    >>> for (g,) in steps:
    ...     print([(t.src, t.dst, t.chunks) for t in g.transfers()])
    [(0, 2, (2, 3)), (1, 3, (2, 3)), (2, 0, (0, 1)), (3, 1, (0, 1))]
    [(0, 1, (1,)), (1, 0, (0,)), (2, 3, (3,)), (3, 2, (2,))]
    """
    yield from _exchange_windows(ranks, blocks, halving=True)


def recursive_doubling_allgather_steps(ranks: RankList, blocks: ChunkTable) -> Iterator[Step]:
    """log2 q copy steps after which every position holds every block of the group.

    Position j starts with the chunks ``blocks[j]``.  In the step with distance d
    (d = 1, 2, ..., q/2) it sends everything of the aligned window of d positions that
    contains j to position j XOR d.

    Parameters
    ----------
    ranks : sequence of int
        The q ranks of the group, q a power of two.
    blocks : (q, b) table of int
        ``blocks[j]``: the chunk ids position j holds at the start; -1 pads short rows.

    Yields
    ------
    Step
        One group per distinct message length in each step.

    Raises
    ------
    InputError
        If q is not a power of two, a rank repeats, or *blocks* has the wrong shape.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Allgather'; MPICH ``allgather_intra_recursive_doubling.c``.

    Examples
    --------
    >>> steps = recursive_doubling_allgather_steps([3, 1], [[1], [3]])
    >>> [[(t.src, t.dst, t.chunks) for t in g.transfers()] for (g,) in steps]
    [[(3, 1, (1,)), (1, 3, (3,))]]
    """
    yield from _exchange_windows(ranks, blocks, halving=False)


def recursive_gather_steps(ranks: RankList, blocks: ChunkTable) -> Iterator[Step]:
    """log2 q copy steps after which ``ranks[0]`` holds every block of the group.

    The gather half of recursive doubling: in the step with distance d (d = 1, 2, ...,
    q/2) each position j ≡ d (mod 2d) sends the chunks of positions j .. j + d − 1 to
    position j − d.

    Parameters
    ----------
    ranks : sequence of int
        The q ranks of the group, q a power of two; ``ranks[0]`` receives everything.
    blocks : (q, b) table of int
        ``blocks[j]``: the chunk ids position j holds at the start; -1 pads short rows.

    Yields
    ------
    Step
        One group per distinct message length in each step.

    Raises
    ------
    InputError
        If q is not a power of two, a rank repeats, or *blocks* has the wrong shape.

    References
    ----------
    .. [1] Rabenseifner 2004; MPICH ``reduce_intra_reduce_scatter_gather.c``.

    Examples
    --------
    >>> steps = recursive_gather_steps(range(4), [[0], [1], [2], [3]])
    >>> [[(t.src, t.dst, t.chunks) for t in g.transfers()] for (g,) in steps]
    [[(1, 0, (1,)), (3, 2, (3,))], [(2, 0, (2, 3))]]
    """
    group_ranks, table = _group_and_blocks(ranks, blocks)
    q = group_ranks.size
    for i in range(floor_log2(q)):
        d = 1 << i
        src = np.arange(d, q, 2 * d, dtype=np.int64)
        yield _send_windows(group_ranks, table, size=d, src=src, dst=src - d, window=src // d, op="copy")


# -- the fold ----------------------------------------------------------------------------


def _whole(src: np.ndarray, dst: np.ndarray, chunks: np.ndarray, op: Op) -> Step:
    """One group: every src[i] sends the same *chunks* to dst[i]."""
    return (Group(src, dst, np.repeat(chunks.reshape(1, -1), src.size, axis=0), op),)


def _fold_pairs(p: int, root: int) -> tuple[np.ndarray, np.ndarray]:
    """(extras, partners): absolute ranks of relative p'+i and i, i = 0 .. r−1."""
    q, r = _fold(p)
    partners = np.arange(r, dtype=np.int64)
    return _absolute(partners + q, p, root), _absolute(partners, p, root)


def _folded(p: int, root: int, survivors: Iterable[Step], *, into: np.ndarray | None = None,
            back: np.ndarray | None = None) -> Iterator[Step]:
    """The steps of the p' survivors wrapped in the fold: nothing more when p is a power of two.

    Extra rank p'+i first reduces the chunks *into* into rank i, and rank i finally copies
    the chunks *back* to extra rank p'+i: the same chunks to every extra rank when *back*
    is one row, row i to extra rank p'+i when it is an (r, m) table.
    """
    _, r = _fold(p)
    extras, partners = _fold_pairs(p, root)
    if r and into is not None:
        yield _whole(extras, partners, into, "reduce")
    yield from survivors
    if r and back is not None:
        rows = back if back.ndim == 2 else np.repeat(back.reshape(1, -1), r, axis=0)
        yield (Group(partners, extras, rows, "copy"),)


def _owner_blocks(p: int, root: int) -> np.ndarray:
    """(p', 2) table for p blocks over the p' survivors: survivor i owns its block and extra p'+i's.

    Block ids are absolute ranks (rank r's block is chunk r); -1 pads survivors without an
    extra.
    """
    q, r = _fold(p)
    rel = np.arange(q, dtype=np.int64)
    table = np.full((q, 2), -1, dtype=np.int64)
    table[:, 0] = _absolute(rel, p, root)
    table[:r, 1] = _absolute(rel[:r] + q, p, root)
    return table


def _all_but_own(extras: np.ndarray, p: int) -> np.ndarray:
    """(r, p − 1) table: for each extra rank e (whose block is chunk e), every chunk but e."""
    others = np.arange(p - 1, dtype=np.int64)[None, :]
    return others + (others >= extras[:, None])


def _folded_allgather_steps(p: int, root: int) -> Iterator[Step]:
    """All-gather of p blocks (rank r holds chunk r) by recursive doubling, folded for any p.

    The extra ranks hand their block in, the p' survivors double, and each survivor sends
    its extra rank the p − 1 blocks it lacks (not the extra's own block again).
    """
    q, r = _fold(p)
    extras, partners = _fold_pairs(p, root)
    if r:
        yield (Group(extras, partners, extras[:, None], "copy"),)
    survivors = _absolute(np.arange(q, dtype=np.int64), p, root)
    yield from recursive_doubling_allgather_steps(survivors, _owner_blocks(p, root))
    if r:
        yield (Group(partners, extras, _all_but_own(extras, p), "copy"),)


# -- builders ----------------------------------------------------------------------------


def _name(base: str, p: int) -> str:
    return base if is_power_of_two(p) else f"{base}-folded"


def recursive_doubling_allreduce(p: int, *, root: int = 0) -> Schedule:
    """Recursive-doubling all-reduce of the full vector: log2 p exchanges of α + nβ + nγ.

    For p not a power of two (``recursive-doubling-folded``) extra rank p'+i first
    reduces its vector into rank i, the p' = 2^⌊log2 p⌋ survivors run recursive doubling,
    and rank i sends the result back: ⌊log2 p⌋ + 2 steps.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Ignored (all-reduce has no root); must name a rank.

    Returns
    -------
    Schedule
        ``units`` = 1: every message is the whole vector.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Allreduce'; MPICH ``allreduce_intra_recursive_doubling.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = recursive_doubling_allreduce(6)
    >>> s.algorithm, [[(t.src, t.dst, t.op) for t in step] for step in s.transfers()][0]
    ('recursive-doubling-folded', [(4, 0, 'reduce'), (5, 1, 'reduce')])
    >>> len(s.transfers()), execute(s).ok
    (4, True)
    """
    check_ranks(p, root=root)
    survivors = np.arange(_fold(p)[0], dtype=np.int64)
    whole = np.zeros(1, dtype=np.int64)
    return Schedule(collective="allreduce", algorithm=_name("recursive-doubling", p), p=p, units=1,
                    generate=lambda: _folded(p, 0, recursive_doubling_steps(survivors, whole), into=whole,
                                             back=whole))


def rabenseifner_allreduce(p: int, *, root: int = 0) -> Schedule:
    """Rabenseifner all-reduce: recursive-halving reduce-scatter, then recursive-doubling all-gather.

    The vector is cut into p' = 2^⌊log2 p⌋ blocks: 2 log2 p' steps move 2(p'−1)/p'·n on
    the critical path.  For p not a power of two (``rabenseifner-folded``) extra rank
    p'+i first reduces its whole vector into rank i and gets the whole result back at
    the end.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Ignored (all-reduce has no root); must name a rank.

    Returns
    -------
    Schedule
        ``units`` = p'.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Allreduce'; MPICH ``allreduce_intra_reduce_scatter_allgather.c``.
    .. [2] Rabenseifner 2004.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = rabenseifner_allreduce(8)
    >>> [max(len(t.chunks) for t in step) for step in s.transfers()]  # blocks of n/8
    [4, 2, 1, 1, 2, 4]
    >>> execute(rabenseifner_allreduce(12)).ok
    True
    """
    check_ranks(p, root=root)
    q, _ = _fold(p)
    survivors = np.arange(q, dtype=np.int64)

    def generate() -> Iterator[Step]:
        halves = chain(recursive_halving_steps(survivors, survivors),
                       recursive_doubling_allgather_steps(survivors, survivors))
        yield from _folded(p, 0, halves, into=survivors, back=survivors)

    return Schedule(collective="allreduce", algorithm=_name("rabenseifner", p), p=p, units=q,
                    generate=generate)


def recursive_halving_reduce_scatter(p: int, *, root: int = 0) -> Schedule:
    """Recursive-halving reduce-scatter: log2 p steps, (p−1)/p·n on the critical path.

    For p not a power of two (``recursive-halving-folded``) extra rank p'+i first reduces
    its whole vector into rank i, which then owns blocks i and p'+i; halving splits the
    blocks by owner, so windows that hold doubled ranks are heavier (min(r, w) extra
    blocks in a window of w); finally rank i sends block p'+i to rank p'+i.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Ignored (reduce-scatter has no root); must name a rank.

    Returns
    -------
    Schedule
        ``units`` = p; rank r ends with the sum of chunk r.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Reduce-Scatter'; MPICH ``reduce_scatter_intra_recursive_halving.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> [max(len(t.chunks) for t in step) for step in recursive_halving_reduce_scatter(8).transfers()]
    [4, 2, 1]
    >>> s = recursive_halving_reduce_scatter(6)  # p' = 4: ranks 0 and 1 own two blocks each
    >>> [max(len(t.chunks) for t in step) for step in s.transfers()], execute(s).ok
    ([6, 4, 2, 1], True)
    """
    check_ranks(p, root=root)
    q, _ = _fold(p)
    extras, _ = _fold_pairs(p, 0)

    def generate() -> Iterator[Step]:
        halving = recursive_halving_steps(np.arange(q, dtype=np.int64), _owner_blocks(p, 0))
        yield from _folded(p, 0, halving, into=np.arange(p, dtype=np.int64), back=extras[:, None])

    return Schedule(collective="reduce-scatter", algorithm=_name("recursive-halving", p), p=p, units=p,
                    generate=generate)


def recursive_doubling_allgather(p: int, *, root: int = 0) -> Schedule:
    """Recursive-doubling all-gather: log2 p steps, (p−1)/p·n on the critical path.

    For p not a power of two (``recursive-doubling-folded``) extra rank p'+i first hands
    its block to rank i (α + nβ/p); the windows holding doubled ranks are heavier (the
    window of w positions holding min(r, w) extra blocks: (p'−1 + s(p))/p·n in all); rank
    i finally sends rank p'+i the p − 1 blocks it lacks (α + (p−1)/p·n; its own block is
    not sent back).

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Ignored (all-gather has no root); must name a rank.

    Returns
    -------
    Schedule
        ``units`` = p; rank r contributes chunk r.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Allgather'; MPICH ``allgather_intra_recursive_doubling.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> [max(len(t.chunks) for t in step) for step in recursive_doubling_allgather(8).transfers()]
    [1, 2, 4]
    >>> s = recursive_doubling_allgather(7)
    >>> s.algorithm, [max(len(t.chunks) for t in step) for step in s.transfers()], execute(s).ok
    ('recursive-doubling-folded', [1, 2, 4, 6], True)
    """
    check_ranks(p, root=root)
    return Schedule(collective="allgather", algorithm=_name("recursive-doubling", p), p=p, units=p,
                    generate=lambda: _folded_allgather_steps(p, 0))


def rabenseifner_reduce(p: int, *, root: int = 0) -> Schedule:
    """Rabenseifner reduce: recursive-halving reduce-scatter, then a gather of the blocks to the root.

    The vector is cut into p' = 2^⌊log2 p⌋ blocks; both phases take log2 p' steps and
    move (p'−1)/p'·n on the critical path; the busiest rank (relative rank p'/2) sends
    (p'−1)/p'·n + n/2.  For p not a power of two (``rabenseifner-folded``) extra rank
    p'+i first reduces its whole vector into rank i; nothing is sent back.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that ends with the sum; ranks are taken relative to it.

    Returns
    -------
    Schedule
        ``units`` = p'.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Rabenseifner 2004; Thakur et al. 2005, 'Reduce'; MPICH
       ``reduce_intra_reduce_scatter_gather.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = rabenseifner_reduce(4, root=1)
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in s.transfers()][2:]
    [[(2, 1, (1,)), (0, 3, (3,))], [(3, 1, (2, 3))]]
    >>> execute(s).ok, execute(rabenseifner_reduce(11, root=7)).ok
    (True, True)
    """
    check_ranks(p, root=root)
    q, _ = _fold(p)
    survivors = _absolute(np.arange(q, dtype=np.int64), p, root)
    blocks = np.arange(q, dtype=np.int64)

    def generate() -> Iterator[Step]:
        halves = chain(recursive_halving_steps(survivors, blocks), recursive_gather_steps(survivors, blocks))
        yield from _folded(p, root, halves, into=blocks)

    return Schedule(collective="reduce", algorithm=_name("rabenseifner", p), p=p, units=q, root=root,
                    generate=generate)


def scatter_recursive_doubling_broadcast(p: int, *, root: int = 0) -> Schedule:
    """Broadcast as a binomial scatter, then a recursive-doubling all-gather.

    For p a power of two the root scatters p blocks of n/p (log2 p steps, (p−1)/p·n on
    the critical path) and the ranks all-gather them by recursive doubling (the same
    again).  For other p (``scatter-recursive-doubling-folded``) the r = p − p' extra
    ranks have no data to contribute, so nothing folds in: the vector is cut into
    p' = 2^⌊log2 p⌋ blocks, scattered over the p' survivors (relative ranks 0 .. p'−1)
    and all-gathered among them, and survivor i then sends the whole vector to extra
    rank p'+i: 2 log2 p' + 1 steps, 2(p'−1)/p'·n + n.  (Scattering p blocks to every
    rank and folding the all-gather would cost ⌈log2 p⌉ + ⌊log2 p⌋ + 2 steps and more
    than 2n; MPICH switches to the ring all-gather for such p.)

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank whose vector is broadcast; ranks are taken relative to it.

    Returns
    -------
    Schedule
        ``units`` = p' (= p for a power of two); survivor j (relative) receives chunk
        (j + root) mod p' in the scatter.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Broadcast'; MPICH
       ``bcast_intra_scatter_recursive_doubling_allgather.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = scatter_recursive_doubling_broadcast(8)
    >>> [max(len(t.chunks) for t in step) for step in s.transfers()]
    [4, 2, 1, 1, 2, 4]
    >>> s = scatter_recursive_doubling_broadcast(10, root=3)  # p' = 8 blocks, then 2 whole vectors
    >>> s.algorithm, [max(len(t.chunks) for t in step) for step in s.transfers()], execute(s).ok
    ('scatter-recursive-doubling-folded', [4, 2, 1, 1, 2, 4, 8], True)
    """
    check_ranks(p, root=root)
    q, _ = _fold(p)
    survivors = _absolute(np.arange(q, dtype=np.int64), p, root)
    label = (np.arange(q, dtype=np.int64) + root) % q  # survivor j's block

    def scatter_allgather() -> Iterator[Step]:
        for s in binomial_scatter_steps(q):  # relative ranks and blocks over the survivors
            yield tuple(Group(survivors[g.src], survivors[g.dst], label[g.chunks], g.op) for g in s)
        yield from recursive_doubling_allgather_steps(survivors, label[:, None])

    def generate() -> Iterator[Step]:
        yield from _folded(p, root, scatter_allgather(), back=np.arange(q, dtype=np.int64))

    return Schedule(collective="broadcast", algorithm=_name("scatter-recursive-doubling", p), p=p, units=q,
                    root=root, generate=generate)


BUILDERS = {
    "recursive_doubling_allreduce": ("allreduce", recursive_doubling_allreduce),
    "rabenseifner_allreduce": ("allreduce", rabenseifner_allreduce),
    "recursive_halving_reduce_scatter": ("reduce-scatter", recursive_halving_reduce_scatter),
    "recursive_doubling_allgather": ("allgather", recursive_doubling_allgather),
    "rabenseifner_reduce": ("reduce", rabenseifner_reduce),
    "scatter_recursive_doubling_broadcast": ("broadcast", scatter_recursive_doubling_broadcast),
}
"""Builders by name: the ``schedule`` field of a formula record names one of these."""
