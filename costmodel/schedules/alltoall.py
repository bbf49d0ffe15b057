"""All-to-all and Bruck schedules: pairwise exchange, Bruck's all-to-all and all-gather.

Bruck's all-to-all is his index algorithm; his all-gather is the concatenation algorithm.

All-to-all chunk ids are ``src·p + dst``: the block rank src sends to rank dst, n/p bytes
(``units`` = p).  In the all-gather, block r (chunk id r) is rank r's.

Bruck's all-to-all gives the block that rank s sends to rank s + j (mod p) the *index*
j; a free local rotation puts the blocks in index order.  In step k (k = 0 .. ⌈log2 p⌉−1)
every rank sends rank + 2^k all the blocks it holds whose index has bit k set; the
receiver keeps them at the same index.  A block of index j therefore travels once per set
bit of j, j ranks in all, and ends at its destination: each rank sends
B(p) = Σ_{j<p} popcount(j) blocks, in ⌈log2 p⌉ steps that all carry the same count per
rank.  A last free rotation restores destination order.

References
----------
.. [1] J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby, "Efficient algorithms for
   all-to-all communications in multiport message-passing systems", IEEE TPDS
   8(11):1143-1156, 1997, sections 3 (index) and 4 (concatenation).
.. [2] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1):49-66, 2005, 'Alltoall' and 'Allgather'; MPICH
   ``alltoall_intra_pairwise.c``, ``alltoall_intra_brucks.c``, ``allgather_intra_brucks.c``.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from costmodel.schedules.model import Group, Schedule, Step, check_ranks

__all__ = [
    "BUILDERS",
    "bruck_allgather",
    "bruck_allgather_steps",
    "bruck_alltoall",
    "bruck_alltoall_steps",
    "pairwise_alltoall",
    "pairwise_alltoall_steps",
]


def pairwise_alltoall_steps(p: int) -> Iterator[Step]:
    """The p − 1 steps of the pairwise exchange: in step i rank r sends block (r, r + i) to r + i.

    Rank r receives block (r − i, r) from r − i in the same step.

    Parameters
    ----------
    p : int
        Ranks.

    Yields
    ------
    Step
        One group of p transfers of one block per step.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Alltoall'; MPICH ``alltoall_intra_pairwise.c``.

    Examples
    --------
    >>> [[(t.src, t.dst, t.chunks) for t in g.transfers()] for (g,) in pairwise_alltoall_steps(3)][0]
    [(0, 1, (1,)), (1, 2, (5,)), (2, 0, (6,))]
    """
    ranks = np.arange(p, dtype=np.int64)
    for i in range(1, p):
        dst = (ranks + i) % p
        yield (Group(ranks, dst, (ranks * p + dst)[:, None], "copy"),)


def bruck_alltoall_steps(p: int) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of Bruck's all-to-all (index algorithm).

    In step k rank r sends rank r + 2^k the blocks of every index j < p with bit k set;
    the block of index j it holds then came from rank s = r − (j mod 2^k) and is bound for
    s + j.

    Parameters
    ----------
    p : int
        Ranks.

    Yields
    ------
    Step
        One group per step; every rank sends #{j < p : bit k of j set} blocks in step k.

    References
    ----------
    .. [1] Bruck et al. 1997, section 3; MPICH ``alltoall_intra_brucks.c``.

    Examples
    --------
    >>> [g.chunks.shape for (g,) in bruck_alltoall_steps(5)]  # B(5) = 1+1+2+1 = 5 blocks per rank
    [(5, 2), (5, 2), (5, 1)]
    """
    ranks = np.arange(p, dtype=np.int64)
    index = np.arange(p, dtype=np.int64)
    for k in range((p - 1).bit_length()):
        j = index[(index >> k) & 1 == 1]
        src = (ranks[:, None] - (j & ((1 << k) - 1))[None, :]) % p
        yield (Group(ranks, (ranks + (1 << k)) % p, src * p + (src + j[None, :]) % p, "copy"),)


def bruck_allgather_steps(p: int) -> Iterator[Step]:
    """The ⌈log2 p⌉ steps of Bruck's all-gather (concatenation algorithm).

    Before step i rank r holds blocks r .. r + 2^i − 1 (mod p); it sends the first
    min(2^i, p − 2^i) of them to r − 2^i, so that every rank has received p − 1 blocks
    after the last step.

    Parameters
    ----------
    p : int
        Ranks (and blocks).

    Yields
    ------
    Step
        One group of p transfers per step.

    References
    ----------
    .. [1] Bruck et al. 1997, section 4; MPICH ``allgather_intra_brucks.c``.

    Examples
    --------
    >>> [[(t.src, t.dst, t.chunks) for t in g.transfers()] for (g,) in bruck_allgather_steps(3)][1]
    [(0, 1, (0,)), (1, 2, (1,)), (2, 0, (2,))]
    """
    ranks = np.arange(p, dtype=np.int64)
    for i in range((p - 1).bit_length()):
        count = min(1 << i, p - (1 << i))
        # row r is r, r+1, ..., r+count-1 (mod p): a read-only sliding window over 0..p+count-2
        # (mod p), so that the late steps cost O(p) memory, not the p·count of a full array
        chunks = sliding_window_view(np.arange(p + count - 1, dtype=np.int64) % p, count)
        yield (Group(ranks, (ranks - (1 << i)) % p, chunks, "copy"),)


def pairwise_alltoall(p: int, *, root: int = 0) -> Schedule:
    """Pairwise-exchange all-to-all: p − 1 steps of one n/p block per rank.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Accepted for the builder signature and ignored (all-to-all has no root).

    Returns
    -------
    Schedule
        ``units`` = p, chunk ids src·p + dst.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Thakur et al. 2005, 'Alltoall'; MPICH ``alltoall_intra_pairwise.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = pairwise_alltoall(4)
    >>> [[(t.src, t.dst) for t in step] for step in s.transfers()][2]
    [(0, 3), (1, 0), (2, 1), (3, 2)]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="alltoall", algorithm="pairwise", p=p, units=p,
                    generate=lambda: pairwise_alltoall_steps(p))


def bruck_alltoall(p: int, *, root: int = 0) -> Schedule:
    """Bruck's all-to-all: ⌈log2 p⌉ steps, B(p) blocks of n/p sent per rank.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Accepted for the builder signature and ignored (all-to-all has no root).

    Returns
    -------
    Schedule
        ``units`` = p, chunk ids src·p + dst; the local rotations before and after are
        free and not part of the steps.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Bruck et al. 1997, section 3 (index algorithm); MPICH ``alltoall_intra_brucks.c``.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = bruck_alltoall(4)
    >>> s.transfers()[1][0]  # its own block for rank 2, and rank 3's for rank 2 (id 3·4 + 2)
    Transfer(src=0, dst=2, chunks=(2, 14), op='copy')
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="alltoall", algorithm="bruck", p=p, units=p,
                    generate=lambda: bruck_alltoall_steps(p))


def bruck_allgather(p: int, *, root: int = 0) -> Schedule:
    """Bruck's all-gather: ⌈log2 p⌉ steps, p − 1 blocks of n/p sent per rank.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        Accepted for the builder signature and ignored (all-gather has no root).

    Returns
    -------
    Schedule
        ``units`` = p; the final local rotation is free and not part of the steps.

    Raises
    ------
    InputError
        If p < 1 or root is not a rank.

    References
    ----------
    .. [1] Bruck et al. 1997, section 4 (concatenation algorithm); Thakur et al. 2005,
       'Allgather'.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = bruck_allgather(5)
    >>> [g.chunks.shape[1] for (g,) in s.steps()]  # 1 + 2 + 1 = p − 1 blocks
    [1, 2, 1]
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    return Schedule(collective="allgather", algorithm="bruck", p=p, units=p,
                    generate=lambda: bruck_allgather_steps(p))


BUILDERS = {
    "pairwise_alltoall": ("alltoall", pairwise_alltoall),
    "bruck_alltoall": ("alltoall", bruck_alltoall),
    "bruck_allgather": ("allgather", bruck_allgather),
}
"""Builders by name: the ``schedule`` field of a formula record names one of these."""
