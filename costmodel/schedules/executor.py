"""Run a schedule on real data and check the collective's postcondition.

Every rank starts with distinct random integers for every chunk it holds
(integers small enough that no sum overflows, so sums are exact and a chunk
added twice is caught, not rounded away).  Steps run as the model says: all transfers of a step read the
state before the step, then write; a copy overwrites, a reduce adds.  At the
end every (rank, chunk) the specification requires is compared with the
expected value: the sum over all ranks for reductions, the owner's original
data otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel._json import JSONFields
from costmodel.schedules.model import Schedule, ScheduleError
from costmodel.schedules.spec import required, start

__all__ = ["Execution", "execute"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution(JSONFields):
    """The outcome of running a schedule: whether every rank ended right, and the first misses."""

    collective: str
    algorithm: str
    p: int
    ok: bool
    checked: int
    problems: tuple[str, ...]


def execute(schedule: Schedule, *, seed: int = 0, width: int = 2) -> Execution:
    """Run *schedule* on random integer data (*width* numbers per chunk) and check the result.

    Raises
    ------
    ScheduleError
        When a rank sends, or reduces into, a chunk it does not hold.

    Examples
    --------
    >>> from costmodel.schedules import build
    >>> execute(build("ring_allreduce", "allreduce", p=4)).ok
    True
    """
    p, ids = schedule.p, schedule.chunk_ids
    values = _random_data(p, ids, width, seed=seed)
    held = start(schedule.collective, p, schedule.units, schedule.root)
    ranks, chunks, owners = required(schedule.collective, p, schedule.units, schedule.root)
    # what each required chunk must end as, taken before the run changes the data in place
    total = values.sum(axis=0, dtype=np.int32) if (owners < 0).any() else None
    origin = np.zeros((ids, width), dtype=np.int32)
    first = np.unique(chunks, return_index=True)[1]
    first = first[owners[first] >= 0]
    origin[chunks[first]] = values[owners[first], chunks[first]]
    _run(schedule, values, held)
    problems = _compare(values, held, (ranks, chunks, owners), total=total, origin=origin)
    return Execution(collective=schedule.collective, algorithm=schedule.algorithm, p=p,
                     ok=not problems, checked=int(ranks.size), problems=problems)


def _random_data(p: int, ids: int, width: int, *, seed: int) -> np.ndarray:
    """Distinct random int32 per (rank, chunk), with |x| < 2^bits ≤ 2^30/p so no sum overflows.

    Raw random bits shifted down are much faster to draw than bounded integers.
    """
    bits = max(1, 30 - (p - 1).bit_length())
    count = p * ids * width
    raw = np.random.default_rng(seed).bit_generator.random_raw((count + 1) // 2).view(np.int32)[:count]
    return (raw >> (31 - bits)).reshape(p, ids, width)


def _run(schedule: Schedule, values: np.ndarray, held: np.ndarray) -> None:
    """Apply the steps to *values* and *held* in place (flat views index faster)."""
    ids, width = values.shape[1], values.shape[2]
    everywhere = bool(held.all())  # the reductions: every rank holds every chunk throughout
    rows, flags = values.reshape(-1, width), held.reshape(-1)

    def check(ranks: np.ndarray, chunks: np.ndarray, where: np.ndarray, index: int, what: str) -> None:
        if everywhere or flags[where].all():
            return
        t, c = divmod(int(np.flatnonzero(~flags[where])[0]), chunks.shape[1])
        raise ScheduleError(f"step {index}: rank {ranks[t]} {what} chunk {chunks[t, c]} it does not hold")

    for index, s in enumerate(schedule.steps(), start=1):
        payloads = []
        for g in s:
            source = (g.src[:, None] * ids + g.chunks).ravel()
            check(g.src, g.chunks, source, index, "sends")
            payloads.append(rows.take(source, axis=0))
        for g, payload in zip(s, payloads, strict=True):
            target = (g.dst[:, None] * ids + g.chunks).ravel()
            if g.op == "reduce":
                check(g.dst, g.chunks, target, index, "reduces into")
                rows[target] += payload
            else:
                rows[target] = payload
                flags[target] = True


def _compare(values: np.ndarray, held: np.ndarray, wanted: tuple[np.ndarray, np.ndarray, np.ndarray], *,
             total: np.ndarray | None, origin: np.ndarray) -> tuple[str, ...]:
    """The first few required (rank, chunk) that are missing or wrong, rank by rank."""
    ranks, chunks, owners = wanted
    ids = values.shape[1]
    problems: list[str] = []
    for block in np.split(np.arange(ranks.size), np.flatnonzero(np.diff(ranks)) + 1):
        if not block.size:
            continue
        rank, cs, os = int(ranks[block[0]]), chunks[block], owners[block]
        summed = os < 0
        if summed.all() and cs.size == ids and (cs == np.arange(ids)).all():  # the whole reduced vector
            expect = total
        else:
            expect = origin[cs]
            if summed.any() and total is not None:
                expect[summed] = total[cs[summed]]
        missing = ~held[rank, cs]
        wrong = ~missing & (values[rank, cs] != expect).any(axis=1)
        for i in np.flatnonzero(missing | wrong)[: 5 - len(problems)].tolist():
            chunk, owner = int(cs[i]), int(os[i])
            if missing[i]:
                problems.append(f"rank {rank} never received chunk {chunk}")
            else:
                what = "the sum over all ranks" if owner < 0 else f"rank {owner}'s data"
                problems.append(f"rank {rank} holds a wrong chunk {chunk}: expected {what}")
        if len(problems) >= 5:
            break
    return tuple(problems)
