"""The event-level step against a brute-force clock: every device advanced tick by tick.

Small pipelines with integer times, compute at half speed while a device's all-reduce runs: the
clock moves in ticks of 1/64 ms, each device does 2 units of work per tick (1 while its stream is
busy), gradients start their bucket's all-reduce the tick they are done, and operations start
when their inputs have arrived. Its step must equal :func:`costmodel.step.step` exactly.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.params import combine_link
from costmodel.pipeline.orders import order
from costmodel.step import step

TICKS = 64  # per ms
ALLREDUCE_MS = 2  # a ring all-reduce over 2 ranks at α = 1 ms, β = 0: 2(p − 1)α


def _clock(schedule: str, pp: int, m: int, *, forward: list[int], backward: list[int], send: int) -> Fraction:
    """The step's end in ms; *forward*/*backward* are each layer's ms, layers split evenly over pp."""
    per = len(forward) // pp
    layers = [list(range(s * per, (s + 1) * per)) for s in range(pp)]
    orders = [order(schedule, s, stages=pp, microbatches=m) for s in range(pp)]
    done: dict[tuple[str, int, int], int] = {}  # (op, stage, microbatch) -> end tick
    nxt = [0] * pp  # index of each device's next operation
    running: list[tuple | None] = [None] * pp  # (op, j, remaining units, work left in the unit)
    queue: list[list[tuple[int, int]]] = [[] for _ in range(pp)]  # (issued, ticks) FIFO
    spans: list[list[tuple[int, int]]] = [[] for _ in range(pp)]  # all-reduces as run
    free = [0] * pp
    t = 0

    def ready(s: int, op: str, j: int) -> bool:
        deps = []
        if op == "F" and s > 0:
            deps.append((("F", s - 1, j), send))
        if op == "B":
            deps.append((("F", s, j), 0))
            if s < pp - 1:
                deps.append((("B", s + 1, j), send))
        return all(k in done and done[k] + d <= t for k, d in deps)

    def busy(s: int) -> bool:
        return any(a <= t < b for a, b in spans[s])

    while any(nxt[s] < len(orders[s]) or running[s] for s in range(pp)) or any(queue):
        for s in range(pp):  # the stream starts what is queued, in order
            while queue[s] and max(queue[s][0][0], free[s]) <= t:
                issued, ticks = queue[s].pop(0)
                start = max(issued, free[s])
                spans[s].append((start, start + ticks))
                free[s] = start + ticks
        for s in range(pp):
            if running[s] is None and nxt[s] < len(orders[s]):
                op, j, _ = orders[s][nxt[s]]
                if ready(s, op, j):
                    units = layers[s] if op == "F" else layers[s][::-1]
                    times = forward if op == "F" else backward
                    running[s] = (op, j, units[1:], 2 * TICKS * times[units[0]], units[0], times)
                    nxt[s] += 1
        for s in range(pp):
            if running[s] is None:
                continue
            op, j, rest, left, unit, times = running[s]
            left -= 1 if busy(s) else 2
            assert left >= 0, "an event fell between ticks; choose aligned times"
            if left:
                running[s] = (op, j, rest, left, unit, times)
                continue
            if op == "B" and j == m - 1:  # the last micro-batch's gradient: its own bucket
                queue[s].append((t + 1, ALLREDUCE_MS * TICKS))
            if rest:
                running[s] = (op, j, rest[1:], 2 * TICKS * times[rest[0]], rest[0], times)
            else:
                running[s] = None
                done[op, s, j] = t + 1
        t += 1
    end = max([*done.values(), *free])
    return Fraction(end, TICKS)


CASES = [  # (pp, m, forward ms per layer, backward ms per layer, send ms)
    (1, 1, [1, 2, 1], [2, 4, 2], 0),
    (2, 2, [1, 1, 2, 1], [2, 3, 4, 2], 1),
    (2, 3, [2, 1], [3, 2], 0),
    (3, 4, [1, 2, 1], [2, 2, 3], 1),
    (2, 4, [1, 2, 1, 2], [2, 3, 2, 4], 1),
    (2, 2, [2, 1, 1, 1, 2, 1], [4, 2, 3, 2, 2, 3], 2),
]


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize("case", CASES, ids=[f"pp{c[0]}-m{c[1]}-l{len(c[2])}" for c in CASES])
def test_slowed_steps_match_the_clock(schedule, case):
    pp, m, forward, backward, send = case
    link = combine_link(alpha="1ms", beta=0)  # every all-reduce over 2 ranks takes 2 ms
    r = step(forward_s=[Fraction(x, 1000) for x in forward], backward_s=[Fraction(x, 1000) for x in backward],
             gradient_bytes=["1MB"] * len(forward), activation_bytes="1MB" if pp > 1 else None, dp=2, pp=pp,
             microbatches=m, schedule=schedule, link=link, pp_link=combine_link(alpha=f"{send}ms", beta=0),
             buckets="megatron", bucket_bytes="1B", slowdown="1/2")  # a bucket per layer
    assert r.step_s * 1000 == _clock(schedule, pp, m, forward=forward, backward=backward, send=send * TICKS)
    assert (r.contention_s > 0) == (len(forward) > pp)  # a device with one layer overlaps nothing
