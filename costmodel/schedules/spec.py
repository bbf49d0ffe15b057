"""What each collective starts from and must end with (msccl-style specifications).

Every rank has ``data[rank, chunk]``: a distinct random vector per rank and
chunk id.  The specification says which (rank, chunk) each rank holds before
the schedule runs, and which value each rank must hold after it: for the
reductions, the sum over all ranks; for the others, the owner's original
vector.

References
----------
.. [1] MPI Forum, "MPI: A Message-Passing Interface Standard", version 4.0,
   chapter 6 (collective communication): the definitions of each operation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SPECS", "Spec", "required", "start"]


@dataclass(frozen=True, slots=True)
class Spec:
    """A collective's pre- and postcondition over chunk ids."""

    name: str
    reduces: bool


SPECS = {
    name: Spec(name, reduces)
    for name, reduces in (
        ("allreduce", True), ("reduce-scatter", True), ("reduce", True), ("allgather", False),
        ("broadcast", False), ("gather", False), ("scatter", False), ("alltoall", False),
    )
}


def _block(units: int, p: int, rank: int) -> range:
    """Chunk ids of rank's block when *units* chunks are split into p equal blocks."""
    size = units // p
    return range(rank * size, (rank + 1) * size)


def start(collective: str, p: int, units: int, root: int) -> np.ndarray:
    """held[rank, chunk] before the schedule runs."""
    ids = p * p if collective == "alltoall" else units
    held = np.zeros((p, ids), dtype=bool)
    if SPECS[collective].reduces:
        held[:, :] = True
    elif collective in ("broadcast", "scatter"):
        held[root, :] = True
    elif collective == "alltoall":
        for src in range(p):
            held[src, src * p:(src + 1) * p] = True
    else:  # allgather, gather: each rank holds its own block
        for rank in range(p):
            held[rank, list(_block(units, p, rank))] = True
    return held


def required(collective: str, p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ranks, chunks, owners) that must hold the right value at the end; owner -1 means the sum."""
    ids = p * p if collective == "alltoall" else units
    every, block = np.arange(p), max(1, units // p)
    if collective in ("allreduce", "allgather", "broadcast"):
        ranks, chunks = np.repeat(every, ids), np.tile(np.arange(ids), p)
    elif collective in ("reduce", "gather"):
        ranks, chunks = np.full(ids, root), np.arange(ids)
    elif collective in ("reduce-scatter", "scatter"):
        ranks, chunks = np.repeat(every, block), np.arange(p * block)
    elif collective == "alltoall":
        dst, src = np.repeat(every, p), np.tile(every, p)
        return dst, src * p + dst, src
    else:
        raise ValueError(f"no specification for {collective!r}")
    if SPECS[collective].reduces:
        owners = np.full(ranks.size, -1)
    elif collective in ("broadcast", "scatter"):
        owners = np.full(ranks.size, root)
    else:  # allgather, gather: the block's owner
        owners = chunks // block
    return ranks, chunks, owners
