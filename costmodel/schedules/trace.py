"""Who holds what after each step: a symbolic run of a schedule, for display.

Each (rank, chunk) carries the set of ranks whose data it contains, as a
bit mask: a reduce ORs the sender's set into the receiver's, a copy replaces
it.  This shows partial sums growing (the textbook 4-GPU ring picture); the
numeric check of correctness is :func:`costmodel.schedules.execute`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from costmodel.schedules.model import Schedule, Step
from costmodel.schedules.spec import SPECS, start

__all__ = ["MAX_TRACE_RANKS", "trace"]

MAX_TRACE_RANKS = 62
"""Bit masks in int64: traces are for small p (displays), not for verification."""


def _owners(schedule: Schedule) -> np.ndarray:
    """Whose data each chunk id is at the start, for the copy collectives."""
    p, units = schedule.p, schedule.units
    if schedule.collective == "alltoall":
        return np.arange(p * p) // p
    if schedule.collective in ("broadcast", "scatter"):
        return np.full(units, schedule.root)
    return np.arange(units) // max(1, units // p)


def trace(schedule: Schedule) -> Iterator[tuple[Step, np.ndarray]]:
    """Yield (step, masks) after each step; masks[rank, chunk] has bit r set if rank r's data is in it.

    A mask of 0 means the rank does not hold the chunk.

    Examples
    --------
    >>> from costmodel.schedules import build
    >>> masks = [m for _, m in trace(build("ring_allreduce", "allreduce", p=2))]
    >>> masks[0].tolist()  # after the reduce-scatter step rank r holds the full chunk r
    [[3, 1], [2, 3]]
    """
    p = schedule.p
    if p > MAX_TRACE_RANKS:
        raise ValueError(f"p={p} is too large to trace; at most {MAX_TRACE_RANKS} ranks")
    held = start(schedule.collective, p, schedule.units, schedule.root)
    if SPECS[schedule.collective].reduces:
        masks = np.where(held, (np.int64(1) << np.arange(p, dtype=np.int64))[:, None], 0)
    else:
        masks = np.where(held, np.int64(1) << _owners(schedule)[None, :], 0)
    masks = masks.astype(np.int64)
    for s in schedule.steps():
        incoming = [masks[g.src[:, None], g.chunks] for g in s]
        for g, payload in zip(s, incoming, strict=True):
            if g.op == "reduce":
                masks[g.dst[:, None], g.chunks] |= payload
            else:
                masks[g.dst[:, None], g.chunks] = payload
        yield s, masks.copy()
