"""Chain schedules: the pipelined chain broadcast.

The ranks form a chain in relative order root, root + 1, ..., root + p − 1 (mod p) and
the vector is cut into k segments.  Relative rank i forwards segment j to i + 1 in step
i + j, so the last rank receives the last segment in step (p − 2) + (k − 1): the
broadcast takes p + k − 2 steps of α + nβ/k, and every rank but the last sends the whole
vector once.

References
----------
.. [1] E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
   theory, practice, and experience", CCPE 19(13):1749-1783, 2007, the pipelined
   broadcast.
.. [2] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
   Operations in MPICH", IJHPCA 19(1):49-66, 2005, 'Broadcast'.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from costmodel.errors import InputError
from costmodel.schedules.model import Group, Schedule, Step, check_ranks
from costmodel.validate import positive

__all__ = ["BUILDERS", "pipelined_chain_broadcast", "pipelined_chain_steps"]


def pipelined_chain_steps(p: int, *, k: int, root: int = 0) -> Iterator[Step]:
    """The p + k − 2 steps of a pipelined chain broadcast of k segments (``units`` = k).

    In step t relative rank i (0 ≤ i ≤ p − 2) sends segment t − i to i + 1, when
    0 ≤ t − i < k.

    Parameters
    ----------
    p : int
        Ranks.
    k : int
        Segments (chunk ids 0 .. k − 1).
    root : int
        The rank at the head of the chain.

    Yields
    ------
    Step
        One group per step.

    References
    ----------
    .. [1] Chan et al. 2007, the pipelined broadcast.

    Examples
    --------
    >>> [[(t.src, t.dst, t.chunks) for t in g.transfers()] for (g,) in pipelined_chain_steps(3, k=2)]
    [[(0, 1, (0,))], [(0, 1, (1,)), (1, 2, (0,))], [(1, 2, (1,))]]
    """
    if p < 2:
        return
    for t in range(p + k - 2):
        i = np.arange(max(0, t - k + 1), min(t, p - 2) + 1, dtype=np.int64)
        yield (Group((i + root) % p, (i + 1 + root) % p, (t - i)[:, None], "copy"),)


def pipelined_chain_broadcast(p: int, *, root: int = 0, k: int | None = None) -> Schedule:
    """Pipelined chain broadcast in k segments: p + k − 2 steps of α + nβ/k.

    Parameters
    ----------
    p : int
        Ranks, any p ≥ 1.
    root : int
        The rank whose vector is broadcast; it heads the chain.
    k : int
        Segments, k ≥ 1 (the record's extra parameter; required, since the best k depends
        on n and the link).

    Returns
    -------
    Schedule
        ``units`` = k.

    Raises
    ------
    InputError
        If p < 1, root is not a rank, or k is missing or below 1.

    References
    ----------
    .. [1] Chan et al. 2007, the pipelined broadcast; Thakur et al. 2005, 'Broadcast'.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = pipelined_chain_broadcast(4, k=3)
    >>> len(s.transfers())  # p + k − 2
    5
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    if k is None:
        raise InputError("k=None: the pipelined chain needs its number of segments; pass k ≥ 1")
    positive(k, "k", expected="a number of segments", hint="use an integer k ≥ 1")
    return Schedule(collective="broadcast", algorithm="pipelined-chain", p=p, units=k, root=root,
                    generate=lambda: pipelined_chain_steps(p, k=k, root=root))


BUILDERS = {
    "pipelined_chain_broadcast": ("broadcast", pipelined_chain_broadcast),
}
"""Builders by name: the ``schedule`` field of a formula record names one of these."""
