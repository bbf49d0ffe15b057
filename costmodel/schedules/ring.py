"""Ring schedules: reduce-scatter, all-gather and all-reduce.

Rank r sends to r+1 and receives from r-1.  The vector is cut into p chunks;
in reduce-scatter step s (s = 0 .. p-2) rank r sends chunk (r - s - 1) mod p,
which its successor adds to its own partial sum, so after p-1 steps rank r
holds the full sum of chunk r.  All-gather then circulates the finished chunks
for p-1 more steps, copying (never adding) them.

References
----------
.. [1] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", JPDC 69(2), 2009.
.. [2] docs/theory/alpha-beta.md (the ring's rounds and bytes).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from costmodel.schedules.model import Group, Schedule, Step

__all__ = ["BUILDERS", "ring_allgather_steps", "ring_reduce_scatter_steps"]


def ring_reduce_scatter_steps(p: int, *, offset: int = 0) -> Iterator[Step]:
    """p-1 steps after which rank r holds the sum of chunk (r + offset) mod p."""
    ranks = np.arange(p, dtype=np.int64)
    successor = (ranks + 1) % p
    for s in range(p - 1):
        chunk = (ranks + offset - s - 1) % p
        yield (Group(ranks, successor, chunk[:, None], "reduce"),)


def ring_allgather_steps(p: int, *, offset: int = 0) -> Iterator[Step]:
    """p-1 steps; rank r starts with chunk (r + offset) mod p and ends with all of them."""
    ranks = np.arange(p, dtype=np.int64)
    successor = (ranks + 1) % p
    for s in range(p - 1):
        chunk = (ranks + offset - s) % p
        yield (Group(ranks, successor, chunk[:, None], "copy"),)


def ring_allreduce(p: int, *, root: int = 0) -> Schedule:
    """Ring all-reduce: reduce-scatter, then all-gather of the reduced chunks."""

    def generate() -> Iterator[Step]:
        yield from ring_reduce_scatter_steps(p)
        yield from ring_allgather_steps(p)

    return Schedule(collective="allreduce", algorithm="ring", p=p, units=p, generate=generate)


def ring_reduce_scatter(p: int, *, root: int = 0) -> Schedule:
    """Ring reduce-scatter: rank r ends with the reduced chunk r."""
    return Schedule(collective="reduce-scatter", algorithm="ring", p=p, units=p,
                    generate=lambda: ring_reduce_scatter_steps(p))


def ring_allgather(p: int, *, root: int = 0) -> Schedule:
    """Ring all-gather: every rank ends with every block."""
    return Schedule(collective="allgather", algorithm="ring", p=p, units=p,
                    generate=lambda: ring_allgather_steps(p))


BUILDERS = {
    "ring_allreduce": ("allreduce", ring_allreduce),
    "ring_reduce_scatter": ("reduce-scatter", ring_reduce_scatter),
    "ring_allgather": ("allgather", ring_allgather),
}
