"""Hierarchical all-reduce schedules over a topology: flat sub-schedules run in every group at once.

A phase at level i runs one flat schedule (a ring reduce-scatter, a binomial
reduce, ...) in every group of that level at the same time: the group of rank
b (digit i of b = 0) is b, b + t_i, ..., b + (s_i − 1)·t_i with t_i = s₀·…·s_{i−1}
ranks per unit of level i.  The groups' steps are merged step by step, so a
step of the merged schedule moves every group's transfers of that step, all
across level i's links.  Phases follow each other.

``hierarchical_allreduce`` (``units`` = p)
    Ring reduce-scatter at every inner level, an all-reduce (``ring`` or
    ``tree``) across the outermost, ring all-gather back out.  Chunk id c
    has one digit per level, the innermost level's the most significant:
    after the reduce-scatter at level i, rank r holds the chunks whose digits
    0..i are r's own.
``reduce_bcast_allreduce`` (``units`` = size of the outermost level)
    Binomial reduce of the whole vector to each group's first rank at every
    inner level (only the leaders of the level below take part), an
    all-reduce (``ring`` or ``tree``) among the outermost leaders, binomial
    broadcast back out.

Levels of size 1 are skipped.  The builders take a :class:`~costmodel.topology.Topology`
(only its sizes matter here), so they do not fit the registry's
``f(p, *, root, k)`` signature and ``BUILDERS`` stays empty; the cross-check
tests call them directly and compare ``simulate(schedule, levels=topology.links,
level_of=topology.level_of)`` with :mod:`costmodel.collectives.hierarchical`.

References
----------
.. [1] A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep
   learning in TensorFlow", arXiv:1802.05799, 2018 (its hierarchical
   all-reduce: reduce-scatter in the node, all-reduce across, all-gather).
.. [2] MPICH ``src/mpi/coll/allreduce/allreduce_intra_smp.c`` (reduce to the
   node root, all-reduce among roots, broadcast).
.. [3] J. L. Träff, S. Hunold, "Decomposing MPI Collectives for Exploiting
   Multi-lane Communication", CLUSTER 2020.

Examples
--------
>>> from costmodel.schedules import execute
>>> from costmodel.topology import Topology
>>> from costmodel.topology import topology_of
>>> topo = topology_of(["4:1us:100GB/s", "2:10us:10GB/s"])
>>> s = hierarchical_allreduce(topo)
>>> s.units, len(s.transfers()), execute(s).ok
(8, 8, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain

import numpy as np

from costmodel.errors import InputError
from costmodel.schedules.model import Group, Schedule, Step
from costmodel.schedules.ring import ring_allgather_steps, ring_reduce_scatter_steps
from costmodel.schedules.trees import binomial_broadcast_steps, binomial_reduce_steps
from costmodel.topology import Topology

__all__ = ["BUILDERS", "hierarchical_allreduce", "reduce_bcast_allreduce"]

BUILDERS: dict = {}
"""Empty: these builders take a Topology, not the registry's ``(p, *, root, k)``."""



def _ring_allreduce_steps(g: int) -> Iterable[Step]:
    return chain(ring_reduce_scatter_steps(g), ring_allgather_steps(g))


def _tree_allreduce_steps(g: int) -> Iterable[Step]:
    return chain(binomial_reduce_steps(g), binomial_broadcast_steps(g))


#: (collective, algorithm) -> (steps over local ranks 0..g-1, local chunks the vector is cut into)
_LOCAL: dict[tuple[str, str], tuple[Callable[[int], Iterable[Step]], Callable[[int], int]]] = {
    ("reduce-scatter", "ring"): (ring_reduce_scatter_steps, lambda g: g),
    ("allgather", "ring"): (ring_allgather_steps, lambda g: g),
    ("allreduce", "ring"): (_ring_allreduce_steps, lambda g: g),
    ("reduce", "binomial"): (binomial_reduce_steps, lambda g: 1),
    ("broadcast", "binomial"): (binomial_broadcast_steps, lambda g: 1),
    ("allreduce", "tree"): (_tree_allreduce_steps, lambda g: 1),
}
_OUTER = ("ring", "tree")


def _lift(local: Iterable[Step], *, bases: np.ndarray, stride: int, offsets: np.ndarray,
          width: int) -> Iterator[Step]:
    """Run *local* in every group at once.

    Local rank x of the group based at ``bases[b]`` is rank ``bases[b] + x·stride``;
    its local chunk j is the chunk ids ``offsets[b] + j·width .. + width − 1``.
    """
    span = np.arange(width, dtype=np.int64)
    for s in local:
        merged = []
        for g in s:
            src = (bases[:, None] + g.src[None, :] * stride).reshape(-1)
            dst = (bases[:, None] + g.dst[None, :] * stride).reshape(-1)
            ids = offsets[:, None, None, None] + g.chunks[None, :, :, None] * width + span
            merged.append(Group(src, dst, ids.reshape(src.size, -1), g.op))
        yield tuple(merged)


class _Layout:
    """Digits of every rank, and the levels that have more than one unit."""

    def __init__(self, topology: Topology) -> None:
        if not isinstance(topology, Topology):
            raise InputError(f"{topology!r} is not a Topology; build one with "
                             "topology_of([...])")
        self.sizes = topology.sizes
        self.strides = topology.strides
        self.p = topology.p
        self.ranks = np.arange(self.p, dtype=np.int64)
        self.digits = [(self.ranks // t) % s for t, s in zip(self.strides, self.sizes, strict=True)]
        used = [i for i, s in enumerate(self.sizes) if s > 1]
        self.top, self.below = used[-1], used[:-1]

    def phase(self, level: int, collective: str, algorithm: str, *, bases: np.ndarray, offsets: np.ndarray,
              vector: int) -> Iterator[Step]:
        """The flat (collective, algorithm) at *level*, in the groups based at *bases*, on *vector* ids."""
        steps, units = _LOCAL[collective, algorithm]
        size = self.sizes[level]
        return _lift(steps(size), bases=bases, stride=self.strides[level], offsets=offsets,
                     width=vector // units(size))

    def in_outer_out(self, phase: Callable[[int, str, str], Iterator[Step]], *, inward: tuple[str, str],
                     outer: str, outward: tuple[str, str]) -> Iterator[Step]:
        """The *inward* (collective, algorithm) phase at each inner level, innermost first, the
        all-reduce *outer* at the top level, then the *outward* phase at each inner level back in."""
        for level in self.below:
            yield from phase(level, *inward)
        yield from phase(self.top, "allreduce", outer)
        for level in reversed(self.below):
            yield from phase(level, *outward)


def _outer(outer: str) -> str:
    if outer not in _OUTER:
        raise InputError(f"outer={outer!r} has no hierarchical schedule; choose {' or '.join(_OUTER)}")
    return outer


def hierarchical_allreduce(topology: Topology, *, outer: str = "ring") -> Schedule:
    """Reduce-scatter in, all-reduce of the slices across the outermost level, all-gather out.

    Parameters
    ----------
    topology : Topology
        Levels innermost first; only the sizes are used.
    outer : {"ring", "tree"}
        The all-reduce across the outermost level.

    Returns
    -------
    Schedule
        ``units`` = p; Σ 2(s_i − 1) ring steps over the inner levels plus the
        outer all-reduce's steps.

    Raises
    ------
    InputError
        For something that is not a Topology, or another outer algorithm.

    Examples
    --------
    >>> from costmodel.topology import Topology
    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["2:1us:1GB/s", "2:1us:1GB/s"])
    >>> [[(t.src, t.dst, t.chunks) for t in step] for step in hierarchical_allreduce(topo).transfers()][0]
    [(0, 1, (2, 3)), (1, 0, (0, 1)), (2, 3, (2, 3)), (3, 2, (0, 1))]
    """
    lay = _Layout(topology)
    algorithm = _outer(outer)
    weights = [lay.p // lay.strides[i] // lay.sizes[i] for i in range(len(lay.sizes))]  # Π_{j>i} s_j

    def phase(level: int, collective: str, name: str) -> Iterator[Step]:
        bases = lay.ranks[lay.digits[level] == 0]
        offsets = sum((lay.digits[k][bases] * weights[k] for k in range(level)),
                      np.zeros(bases.size, dtype=np.int64))
        return lay.phase(level, collective, name, bases=bases, offsets=offsets,
                         vector=lay.sizes[level] * weights[level])

    return Schedule(collective="allreduce", algorithm="hierarchical", p=lay.p, units=lay.p,
                    generate=lambda: lay.in_outer_out(phase, inward=("reduce-scatter", "ring"),
                                                      outer=algorithm, outward=("allgather", "ring")))


def reduce_bcast_allreduce(topology: Topology, *, outer: str = "ring") -> Schedule:
    """Binomial reduce to leaders in, all-reduce among the outermost leaders, binomial broadcast out.

    Parameters
    ----------
    topology : Topology
        Levels innermost first; only the sizes are used.
    outer : {"ring", "tree"}
        The all-reduce among the outermost leaders.

    Returns
    -------
    Schedule
        ``units`` = the outermost level's size; the leaders of level i are
        the ranks whose digits 0..i − 1 are 0.

    Raises
    ------
    InputError
        For something that is not a Topology, or another outer algorithm.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> from costmodel.topology import Topology
    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["3:1us:1GB/s", "2:1us:1GB/s"])
    >>> s = reduce_bcast_allreduce(topo)
    >>> [[(t.src, t.dst) for t in step] for step in s.transfers()][:3]
    [[(1, 0), (4, 3)], [(2, 0), (5, 3)], [(0, 3), (3, 0)]]
    >>> execute(s).ok
    True
    """
    lay = _Layout(topology)
    algorithm = _outer(outer)
    units = lay.sizes[lay.top]

    def phase(level: int, collective: str, name: str) -> Iterator[Step]:
        span = lay.strides[level] * lay.sizes[level]
        bases = lay.ranks[lay.ranks % span == 0]  # digits 0..level are 0: the leaders' leaders
        return lay.phase(level, collective, name, bases=bases, offsets=np.zeros(bases.size, dtype=np.int64),
                         vector=units)

    return Schedule(collective="allreduce", algorithm="hierarchical-reduce-bcast", p=lay.p, units=units,
                    generate=lambda: lay.in_outer_out(phase, inward=("reduce", "binomial"),
                                                      outer=algorithm, outward=("broadcast", "binomial")))
