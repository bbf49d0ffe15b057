"""Tree and root schedules: binomial and naive rooted collectives, tree and naive all-reduce.

Also the van de Geijn broadcast (binomial scatter, then ring all-gather).  The naive
schedules serve one rank at a time from (or into) the root.

Binomial trees are built on ranks relative to the root, q = (rank − root) mod p, as in
MPICH: with L = ⌈log2 p⌉, the root first serves relative rank 2^(L−1), then 2^(L−2), and
so on; every rank that holds the data serves one more rank per step, so the data reaches
all p ranks (any p, power of two or not) in L steps.  Reduce and gather run the same
tree leaves-first.  Blocks are numbered by absolute rank: block r (chunk id r when
``units`` = p) is the one rank r owns or ends with.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1):49-66, 2005, 'Broadcast', 'Reduce', and MPICH
   ``bcast_intra_binomial.c``, ``reduce_intra_binomial.c``, ``gather_intra_binomial.c``,
   ``scatter_intra_binomial.c``, ``bcast_intra_scatter_ring_allgather.c``.
.. [2] E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
   theory, practice, and experience", CCPE 19(13):1749-1783, 2007 (linear gather and
   scatter; the scatter/collect broadcast).
.. [3] Thakur, Rabenseifner & Gropp 2005: the α–β model of the naive root and of
   the basic unpipelined tree all-reduce (binomial reduce, then broadcast).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from costmodel.schedules.model import Group, Op, Schedule, Step, check_ranks, reversed_steps
from costmodel.schedules.ring import ring_allgather_steps

__all__ = [
    "BUILDERS",
    "binomial_broadcast",
    "binomial_broadcast_steps",
    "binomial_gather",
    "binomial_gather_steps",
    "binomial_reduce",
    "binomial_reduce_steps",
    "binomial_scatter",
    "binomial_scatter_steps",
    "naive_allreduce",
    "naive_gather",
    "naive_scatter",
    "scatter_allgather_broadcast",
    "tree_allreduce",
]


def _masks_down(p: int) -> list[int]:
    """2^(L−1), ..., 2, 1 with L = ⌈log2 p⌉ (empty for p = 1)."""
    return [1 << i for i in reversed(range((p - 1).bit_length()))]


def _blocks(p: int, root: int, *, src: np.ndarray, dst: np.ndarray, first: np.ndarray,
            count: np.ndarray) -> Step:
    """Relative rank src[i] sends dst[i] the blocks of relative ranks first[i] .. first[i] + count[i] − 1.

    One group per distinct count; ranks and blocks are turned into absolute ones.
    """
    groups = []
    for c in np.unique(count).tolist():
        pick = count == c
        rel = first[pick][:, None] + np.arange(c, dtype=np.int64)[None, :]
        groups.append(Group((src[pick] + root) % p, (dst[pick] + root) % p, (rel + root) % p, "copy"))
    return tuple(groups)


def _naive_steps(p: int, root: int, *, to_root: bool, own_block: bool, op: Op) -> Iterator[Step]:
    """The p − 1 steps of a naive root: in step i rank root + i sends to the root or receives from it.

    Rank root + i sends to the root when *to_root*, else the root sends to it.  The message
    is that rank's own block (chunk root + i, ``units`` = p) when *own_block*, else the
    whole vector (chunk 0, ``units`` = 1).
    """
    at_root = np.array([root], dtype=np.int64)
    for i in range(1, p):
        rank = np.array([(root + i) % p], dtype=np.int64)
        chunks = rank[:, None] if own_block else np.zeros((1, 1), dtype=np.int64)
        yield (Group(rank, at_root, chunks, op) if to_root else Group(at_root, rank, chunks, op),)


def binomial_broadcast_steps(p: int, *, root: int = 0) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of a binomial broadcast of chunk 0 from *root* (``units`` = 1).

    In the step with mask 2^i (i = L−1 down to 0) each relative rank q that is a multiple
    of 2^(i+1) sends chunk 0 to q + 2^i, when that rank exists.

    Parameters
    ----------
    p : int
        Ranks.
    root : int
        The rank that holds the vector at the start.

    Yields
    ------
    Step
        One group per step.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Broadcast'; MPICH ``bcast_intra_binomial.c``.

    Examples
    --------
    >>> [[(int(s), int(d)) for s, d in zip(g.src, g.dst)] for (g,) in binomial_broadcast_steps(4)]
    [[(0, 2)], [(0, 1), (2, 3)]]
    """
    for mask in _masks_down(p):
        q = np.arange(0, p - mask, 2 * mask, dtype=np.int64)
        yield (Group((q + root) % p, (q + mask + root) % p, np.zeros((q.size, 1), dtype=np.int64), "copy"),)


def binomial_reduce_steps(p: int, *, root: int = 0) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of a binomial reduce of chunk 0 to *root* (``units`` = 1).

    In the step with mask 2^i (i = 0 up to L−1) each relative rank q ≡ 2^i (mod 2^(i+1))
    sends its partial vector to q − 2^i, which adds it to its own: the binomial broadcast
    run backwards (:func:`~costmodel.schedules.model.reversed_steps`).

    Parameters
    ----------
    p : int
        Ranks.
    root : int
        The rank that ends with the sum.

    Yields
    ------
    Step
        One group of reduce transfers per step.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Reduce'; MPICH ``reduce_intra_binomial.c``.

    Examples
    --------
    >>> [[(int(s), int(d)) for s, d in zip(g.src, g.dst)] for (g,) in binomial_reduce_steps(4)]
    [[(1, 0), (3, 2)], [(2, 0)]]
    """
    yield from reversed_steps(binomial_broadcast_steps(p, root=root), "reduce")


def binomial_scatter_steps(p: int, *, root: int = 0) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of a binomial scatter of p blocks from *root* (``units`` = p).

    Block r (chunk id r) is rank r's.  In the step with mask 2^i (i = L−1 down to 0) each
    relative rank q that is a multiple of 2^(i+1) sends the blocks of relative ranks
    q + 2^i .. min(q + 2^(i+1), p) − 1 to q + 2^i.  At most one sender per step sends fewer
    than 2^i blocks, and the root always sends the most, so a step lasts as long as the
    root's message: p − 2^(L−1) blocks, then 2^(L−2), ..., 1, in all p − 1.

    Parameters
    ----------
    p : int
        Ranks (and blocks).
    root : int
        The rank that holds all p blocks at the start.

    Yields
    ------
    Step
        One or two groups per step (full and short messages).

    References
    ----------
    .. [1] Thakur et al. 2005; MPICH ``scatter_intra_binomial.c``.

    Examples
    --------
    >>> [[(t.src, t.dst, t.chunks) for g in s for t in g.transfers()] for s in binomial_scatter_steps(3)]
    [[(0, 2, (2,))], [(0, 1, (1,))]]
    """
    for mask in _masks_down(p):
        q = np.arange(0, p - mask, 2 * mask, dtype=np.int64)
        yield _blocks(p, root, src=q, dst=q + mask, first=q + mask, count=np.minimum(mask, p - q - mask))


def binomial_gather_steps(p: int, *, root: int = 0) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of a binomial gather of p blocks to *root* (``units`` = p).

    Rank r starts with block r.  In the step with mask 2^i (i = 0 up to L−1) each relative
    rank q ≡ 2^i (mod 2^(i+1)) sends the blocks of its subtree, relative ranks
    q .. min(q + 2^i, p) − 1, to q − 2^i: the binomial scatter run backwards
    (:func:`~costmodel.schedules.model.reversed_steps`).

    Parameters
    ----------
    p : int
        Ranks (and blocks).
    root : int
        The rank that ends with all p blocks.

    Yields
    ------
    Step
        One or two groups per step (full and short messages).

    References
    ----------
    .. [1] Thakur et al. 2005; MPICH ``gather_intra_binomial.c``.

    Examples
    --------
    >>> [[(t.src, t.dst, t.chunks) for g in s for t in g.transfers()] for s in binomial_gather_steps(3)]
    [[(1, 0, (1,))], [(2, 0, (2,))]]
    """
    yield from reversed_steps(binomial_scatter_steps(p, root=root), "copy")


def binomial_broadcast(p: int, *, root: int = 0) -> Schedule:
    """Binomial-tree broadcast of the full vector: ⌈log2 p⌉ steps of α + nβ.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank whose vector is broadcast.

    Returns
    -------
    Schedule
        ``units`` = 1; the root sends the whole vector in every step.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Broadcast'; MPICH ``bcast_intra_binomial.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = binomial_broadcast(5, root=2)
    >>> [[(t.src, t.dst) for t in step] for step in s.transfers()]
    [[(2, 1)], [(2, 4)], [(2, 3), (4, 0)]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="broadcast", algorithm="binomial", p=p, units=1, root=root,
                    generate=lambda: binomial_broadcast_steps(p, root=root))


def binomial_reduce(p: int, *, root: int = 0) -> Schedule:
    """Binomial-tree reduce of the full vector: ⌈log2 p⌉ steps of α + nβ + nγ.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that ends with the sum.

    Returns
    -------
    Schedule
        ``units`` = 1; every rank but the root sends its partial sum once.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Reduce'; MPICH ``reduce_intra_binomial.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = binomial_reduce(4)
    >>> [[(t.src, t.dst, t.op) for t in step] for step in s.transfers()]
    [[(1, 0, 'reduce'), (3, 2, 'reduce')], [(2, 0, 'reduce')]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="reduce", algorithm="binomial", p=p, units=1, root=root,
                    generate=lambda: binomial_reduce_steps(p, root=root))


def binomial_gather(p: int, *, root: int = 0) -> Schedule:
    """Binomial-tree gather: ⌈log2 p⌉ steps, each rank forwarding its subtree's blocks.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that ends with every block.

    Returns
    -------
    Schedule
        ``units`` = p.  The busiest sender is the root's child with the largest subtree,
        max(p − 2^(L−1), 2^(L−2)) blocks; the critical path carries p − 1 blocks.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005; MPICH ``gather_intra_binomial.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = binomial_gather(4)
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in s.transfers()]
    [[(1, 0, (1,)), (3, 2, (3,))], [(2, 0, (2, 3))]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="gather", algorithm="binomial", p=p, units=p, root=root,
                    generate=lambda: binomial_gather_steps(p, root=root))


def binomial_scatter(p: int, *, root: int = 0) -> Schedule:
    """Binomial-tree scatter: ⌈log2 p⌉ steps, each rank passing on its subtree's blocks.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that holds all blocks at the start.

    Returns
    -------
    Schedule
        ``units`` = p; the root sends p − 1 blocks in all, the most of any rank.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005; MPICH ``scatter_intra_binomial.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = binomial_scatter(4)
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in s.transfers()]
    [[(0, 2, (2, 3))], [(0, 1, (1,)), (2, 3, (3,))]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="scatter", algorithm="binomial", p=p, units=p, root=root,
                    generate=lambda: binomial_scatter_steps(p, root=root))


def tree_allreduce(p: int, *, root: int = 0) -> Schedule:
    """Unpipelined tree all-reduce: binomial reduce of the full vector, then binomial broadcast.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank the tree is rooted at (every root costs the same).

    Returns
    -------
    Schedule
        ``units`` = 1; 2⌈log2 p⌉ steps, ⌈log2 p⌉ of them reducing.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Reduce' and 'Broadcast' (basic unpipelined full-tensor
       reduce and broadcast).

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = tree_allreduce(4)
    >>> [[(t.src, t.dst, t.op) for t in step] for step in s.transfers()][1:3]
    [[(2, 0, 'reduce')], [(0, 2, 'copy')]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)

    def generate() -> Iterator[Step]:
        yield from binomial_reduce_steps(p, root=root)
        yield from binomial_broadcast_steps(p, root=root)

    return Schedule(collective="allreduce", algorithm="tree", p=p, units=1, root=root, generate=generate)


def naive_allreduce(p: int, *, root: int = 0) -> Schedule:
    """Naive all-reduce: the root receives each full vector in turn, then sends the sum to each rank.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that collects and redistributes.

    Returns
    -------
    Schedule
        ``units`` = 1; 2(p − 1) steps of one transfer each, the first p − 1 reducing.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, α–β model applied to a root that collects every
       vector, then sends the result to each.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = naive_allreduce(3)
    >>> [[(t.src, t.dst, t.op) for t in step] for step in s.transfers()]
    [[(1, 0, 'reduce')], [(2, 0, 'reduce')], [(0, 1, 'copy')], [(0, 2, 'copy')]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)

    def generate() -> Iterator[Step]:
        yield from _naive_steps(p, root, to_root=True, own_block=False, op="reduce")
        yield from _naive_steps(p, root, to_root=False, own_block=False, op="copy")

    return Schedule(collective="allreduce", algorithm="naive", p=p, units=1, root=root, generate=generate)


def naive_gather(p: int, *, root: int = 0) -> Schedule:
    """Linear gather: in step i the rank root + i sends its block to the root.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that ends with every block.

    Returns
    -------
    Schedule
        ``units`` = p; p − 1 steps of one block each.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Chan et al. 2007, short-vector (linear) gather.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = naive_gather(3, root=1)
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in s.transfers()]
    [[(2, 1, (2,))], [(0, 1, (0,))]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="gather", algorithm="naive", p=p, units=p, root=root,
                    generate=lambda: _naive_steps(p, root, to_root=True, own_block=True, op="copy"))


def naive_scatter(p: int, *, root: int = 0) -> Schedule:
    """Linear scatter: in step i the root sends rank root + i its block.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank that holds every block at the start.

    Returns
    -------
    Schedule
        ``units`` = p; p − 1 steps of one block each.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Chan et al. 2007, short-vector (linear) scatter.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = naive_scatter(3)
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in s.transfers()]
    [[(0, 1, (1,))], [(0, 2, (2,))]]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="scatter", algorithm="naive", p=p, units=p, root=root,
                    generate=lambda: _naive_steps(p, root, to_root=False, own_block=True, op="copy"))


def scatter_allgather_broadcast(p: int, *, root: int = 0) -> Schedule:
    """Van de Geijn broadcast: binomial scatter of p blocks, then a ring all-gather.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank whose vector is broadcast.

    Returns
    -------
    Schedule
        ``units`` = p; ⌈log2 p⌉ + p − 1 steps, p − 1 blocks on the critical path in each
        phase.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Broadcast'; MPICH ``bcast_intra_scatter_ring_allgather.c``.
    .. [2] Chan et al. 2007, the scatter/collect broadcast.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = scatter_allgather_broadcast(4)
    >>> len(s.transfers())  # ⌈log2 4⌉ + 4 − 1
    5
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)

    def generate() -> Iterator[Step]:
        yield from binomial_scatter_steps(p, root=root)
        yield from ring_allgather_steps(p)

    return Schedule(collective="broadcast", algorithm="scatter-allgather", p=p, units=p, root=root,
                    generate=generate)


BUILDERS = {
    "binomial_broadcast": ("broadcast", binomial_broadcast),
    "binomial_reduce": ("reduce", binomial_reduce),
    "binomial_gather": ("gather", binomial_gather),
    "binomial_scatter": ("scatter", binomial_scatter),
    "tree_allreduce": ("allreduce", tree_allreduce),
    "naive_allreduce": ("allreduce", naive_allreduce),
    "naive_gather": ("gather", naive_gather),
    "naive_scatter": ("scatter", naive_scatter),
    "scatter_allgather_broadcast": ("broadcast", scatter_allgather_broadcast),
}
"""Builders by name: the ``schedule`` field of a formula record names one of these."""
