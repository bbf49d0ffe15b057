"""What each collective starts from and must end with (msccl-style specifications).

Every rank has ``data[rank, chunk]``: a distinct random vector per rank and
chunk id.  The specification says which (rank, chunk) each rank holds before
the schedule runs, and which value each rank must hold after it: for the
reductions, the sum over all ranks; for the others, the owner's original
vector.

Each collective is one :class:`Spec` object, as msccl-tools writes one class per
collective that knows its buffers, its initial state and its postcondition:
where its data starts (every rank, the root, or each rank's own block), where
the result must end (every rank, the root, or each rank's own block), and
whose value that is (the sum, the root's, or the block owner's).

References
----------
.. [1] MPI Forum, "MPI: A Message-Passing Interface Standard", version 4.0,
   chapter 6 (collective communication): the definitions of each operation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["SPECS", "Spec", "required", "start"]

Held = Callable[[int, int, int], np.ndarray]
"""``held(p, units, root)``: held[rank, chunk] before the schedule runs."""
Needed = Callable[[int, int, int], tuple[np.ndarray, np.ndarray]]
"""``needed(p, units, root)``: the (ranks, chunks) that must hold the right value at the end."""
Owners = Callable[[np.ndarray, int, int, int], np.ndarray]
"""``owners(chunks, p, units, root)``: whose original vector each needed chunk must be; -1 means the sum."""


def _block(units: int, p: int, rank: int) -> range:
    """Chunk ids of rank's block when *units* chunks are split into p equal blocks."""
    size = units // p
    return range(rank * size, (rank + 1) * size)


def _by_everyone(p: int, units: int, root: int) -> np.ndarray:
    return np.ones((p, units), dtype=bool)


def _by_root(p: int, units: int, root: int) -> np.ndarray:
    held = np.zeros((p, units), dtype=bool)
    held[root, :] = True
    return held


def _own_block(p: int, units: int, root: int) -> np.ndarray:
    held = np.zeros((p, units), dtype=bool)
    for rank in range(p):
        held[rank, list(_block(units, p, rank))] = True
    return held


def _everyone_all(p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(np.arange(p), units), np.tile(np.arange(units), p)


def _root_all(p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(units, root), np.arange(units)


def _each_own_block(p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray]:
    block = max(1, units // p)
    return np.repeat(np.arange(p), block), np.arange(p * block)


def _sum(chunks: np.ndarray, p: int, units: int, root: int) -> np.ndarray:
    return np.full(chunks.size, -1)


def _root(chunks: np.ndarray, p: int, units: int, root: int) -> np.ndarray:
    return np.full(chunks.size, root)


def _block_owner(chunks: np.ndarray, p: int, units: int, root: int) -> np.ndarray:
    return chunks // max(1, units // p)


# all-to-all: rank s starts with p blocks, ids s·p .. s·p + p − 1; rank d must end with block d of every s


def _own_row(p: int, units: int, root: int) -> np.ndarray:
    held = np.zeros((p, p * p), dtype=bool)
    for src in range(p):
        held[src, src * p:(src + 1) * p] = True
    return held


def _transposed(p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray]:
    dst, src = np.repeat(np.arange(p), p), np.tile(np.arange(p), p)
    return dst, src * p + dst


def _row_owner(chunks: np.ndarray, p: int, units: int, root: int) -> np.ndarray:
    return chunks // p


@dataclass(frozen=True, slots=True)
class Spec:
    """A collective's pre- and postcondition over chunk ids."""

    name: str
    reduces: bool
    held: Held
    needed: Needed
    owners: Owners

    def start(self, p: int, units: int, root: int) -> np.ndarray:
        """held[rank, chunk] before the schedule runs."""
        return self.held(p, units, root)

    def required(self, p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ranks, chunks, owners) that must hold the right value at the end; owner -1 means the sum."""
        ranks, chunks = self.needed(p, units, root)
        return ranks, chunks, self.owners(chunks, p, units, root)


SPECS: dict[str, Spec] = {spec.name: spec for spec in (
    Spec("allreduce", True, _by_everyone, _everyone_all, _sum),
    Spec("reduce-scatter", True, _by_everyone, _each_own_block, _sum),
    Spec("reduce", True, _by_everyone, _root_all, _sum),
    Spec("allgather", False, _own_block, _everyone_all, _block_owner),
    Spec("broadcast", False, _by_root, _everyone_all, _root),
    Spec("gather", False, _own_block, _root_all, _block_owner),
    Spec("scatter", False, _by_root, _each_own_block, _root),
    Spec("alltoall", False, _own_row, _transposed, _row_owner),
)}


def _spec(collective: str) -> Spec:
    spec = SPECS.get(collective)
    if spec is None:
        raise ValueError(f"no specification for {collective!r}")
    return spec


def start(collective: str, p: int, units: int, root: int) -> np.ndarray:
    """held[rank, chunk] before the schedule runs."""
    return _spec(collective).start(p, units, root)


def required(collective: str, p: int, units: int, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ranks, chunks, owners) that must hold the right value at the end; owner -1 means the sum."""
    return _spec(collective).required(p, units, root)
