"""Run a schedule on real data and check the collective's postcondition.

Every rank starts with distinct random integers for every chunk it holds
(integers, so that sums are exact and a chunk added twice is caught, not
rounded away).  Steps run as the model says: all transfers of a step read the
state before the step, then write; a copy overwrites, a reduce adds.  At the
end every (rank, chunk) the specification requires is compared with the
expected value: the sum over all ranks for reductions, the owner's original
data otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel.schedules.model import Schedule, ScheduleError
from costmodel.schedules.spec import required, start

__all__ = ["Execution", "execute"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Execution:
    """The outcome of running a schedule: whether every rank ended right, and the first misses."""

    collective: str
    algorithm: str
    p: int
    ok: bool
    checked: int
    problems: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"collective": self.collective, "algorithm": self.algorithm, "p": self.p, "ok": self.ok,
                "checked": self.checked, "problems": list(self.problems)}


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
    rng = np.random.default_rng(seed)
    data = rng.integers(-(2**20), 2**20, size=(p, ids, width), dtype=np.int64)
    held = start(schedule.collective, p, schedule.units, schedule.root)
    values = np.where(held[..., None], data, 0)
    for index, s in enumerate(schedule.steps(), start=1):
        payloads = []
        for g in s:
            have = held[g.src[:, None], g.chunks]
            if not have.all():
                t, c = np.argwhere(~have)[0]
                raise ScheduleError(
                    f"step {index}: rank {g.src[t]} sends chunk {g.chunks[t, c]} it does not hold")
            payloads.append(values[g.src[:, None], g.chunks])
        for g, payload in zip(s, payloads, strict=True):
            if g.op == "reduce":
                have = held[g.dst[:, None], g.chunks]
                if not have.all():
                    t, c = np.argwhere(~have)[0]
                    raise ScheduleError(
                        f"step {index}: rank {g.dst[t]} reduces into chunk {g.chunks[t, c]} it does not hold")
                values[g.dst[:, None], g.chunks] += payload
            else:
                values[g.dst[:, None], g.chunks] = payload
                held[g.dst[:, None], g.chunks] = True
    ranks, chunks, owners = required(schedule.collective, p, schedule.units, schedule.root)
    total = data.sum(axis=0)
    expect = np.where((owners < 0)[:, None], total[chunks], data[np.maximum(owners, 0), chunks])
    missing = ~held[ranks, chunks]
    wrong = ~missing & (values[ranks, chunks] != expect).any(axis=1)
    problems = []
    for i in np.flatnonzero(missing | wrong)[:5].tolist():
        rank, chunk, owner = int(ranks[i]), int(chunks[i]), int(owners[i])
        if missing[i]:
            problems.append(f"rank {rank} never received chunk {chunk}")
        else:
            what = "the sum over all ranks" if owner < 0 else f"rank {owner}'s data"
            problems.append(f"rank {rank} holds a wrong chunk {chunk}: expected {what}")
    return Execution(collective=schedule.collective, algorithm=schedule.algorithm, p=p,
                     ok=not problems, checked=int(ranks.size), problems=tuple(problems))
