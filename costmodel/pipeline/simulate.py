"""Simulation of a pipeline schedule: list scheduling of each device's order against the dependencies."""

from __future__ import annotations

import math
import re
from array import array
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel._lazy import LazyPattern
from costmodel.errors import InputError
from costmodel.exact import to_fraction
from costmodel.pipeline.orders import BUBBLE, FORMULAS, SOURCES, SPLIT, Step, order, resolve_schedule
from costmodel.pipeline.result import Bubble, PipelineOp, StageTimeline
from costmodel.validate import positive

__all__ = ["MAX_OPERATIONS", "Execute", "SimulatedPipeline", "bubble", "parse_slots", "peak_inflight",
           "settled_prefix", "simulate_devices", "simulate_pipeline", "simulate_stages"]

#: Largest number of operations (F, B and W over all devices) :func:`bubble` simulates.
MAX_OPERATIONS = 1_000_000

_SLOTS_RE = LazyPattern(r"\s*[+-]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE](?P<exp>[+-]?\d{1,9}))?"
                          r"(?:\s*/\s*\d{1,30})?\s*")


def parse_slots(value: object, *, name: str | None = None) -> Fraction:
    """A duration in slots, exactly: an int, Fraction or finite float, or text such as ``"2/3"``.

    Parameters
    ----------
    value : int, Fraction, float, Decimal or str
        The duration; text may be a decimal (``"0.5"``, ``"1e-1"``) or a
        fraction (``"2/3"``).
    name : str, optional
        Names the value in error messages (``name=value``).

    Returns
    -------
    Fraction
        The duration, 0 or between 1e-300 and 1e300.

    Raises
    ------
    InputError
        If *value* is not a number, is not finite, is negative, or is outside
        1e-300 to 1e300 (a float's range, less a margin).

    Examples
    --------
    >>> parse_slots("1.5")
    Fraction(3, 2)
    >>> parse_slots("2/3")
    Fraction(2, 3)
    >>> parse_slots("one")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 'one' is not a number of slots; write e.g. 1, 1.5 or 2/3
    >>> parse_slots(-1, name="backward_slots")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: backward_slots=-1 is negative; times are in slots and must be >= 0
    """
    shown = repr(value) if name is None else f"{name}={value!r}"
    if isinstance(value, str):
        x = _slots_text(value, shown)
    else:
        x = to_fraction(value, what="a number of slots", example="1.5", shown=shown)
    if x < 0:
        raise InputError(f"{shown} is negative; times are in slots and must be >= 0")
    if x > _LARGEST or 0 < x < 1 / _LARGEST:
        raise InputError(_outside(shown))
    return x


_LARGEST = Fraction(10**300)


def _slots_text(value: str, shown: str) -> Fraction:
    match = _SLOTS_RE.fullmatch(value)
    if not match:
        raise InputError(f"{shown} is not a number of slots; write e.g. 1, 1.5 or 2/3")
    if match["exp"] and abs(int(match["exp"])) > 400:  # refused before 10**exp is built
        raise InputError(_outside(shown))
    try:
        return Fraction(re.sub(r"\s+", "", value))
    except ZeroDivisionError:
        raise InputError(f"{shown} divides by zero; write e.g. 1, 1.5 or 2/3") from None


def _outside(shown: str) -> str:
    return (f"{shown} is outside the times costmodel takes, 1e-300 to 1e300 slots (or 0); "
            "choose the slot so that the times are near 1")


Execute = Callable[[int, str, int, int, Any], Any]
"""``execute(device, op, microbatch, chunk, start) -> end``: runs one operation that starts at *start*."""


def _simulate(name: str, p: int, m: int, v: int, *, durations: Sequence[Mapping[str, int]] = (),
              comm: Any, execute: Execute | None = None, settled: Sequence[Sequence[tuple[Any, Any]]] = ()
              ) -> tuple[tuple[tuple[Step, ...], ...], list[list[tuple[Any, Any]]]]:
    """Each device's order of schedule *name* (p devices, m micro-batches, v chunks) and the start and end
    of every operation in it (integer ticks, or any exact numbers).

    ``durations[vs][op]`` is the time of *op* on virtual stage vs (chunk·p + device); *execute*, when
    given, replaces them: it is called once per operation, in each device's order and with starts
    that never decrease on a device, and returns the operation's end.  *settled[s]*, when given, holds
    the (start, end) of device s's first operations, already known (see :func:`settled_prefix`): they
    are taken as they are, not run again.

    Each device runs its list in order; an operation starts when the device is
    free and every input has arrived (its producer's end, plus ``comm`` when the
    producer is on another device).  Raises RuntimeError on a deadlock, which a
    correct order never has.
    """
    orders, plans, width, sequence = _schedule(name, p, m, v)
    done: list[Any] = [None] * (3 * p * v * width)  # the end of each (op, virtual stage, micro-batch)
    times: list[list[tuple[Any, Any]]] = [list(settled[s]) if settled else [] for s in range(p)]
    for plan, at in zip(plans, times, strict=True):
        for step, (_, end) in zip(plan, at, strict=False):
            done[step[0]] = end
    spans = [[durations[c * p + s][op] for op, _, c in order] if durations else ()
             for s, order in enumerate(orders)]
    kept = [len(at) for at in times]
    free: list[Any] = [at[-1][1] if at else 0 for at in times]  # when each device is next free
    nxt = [0] * p
    if execute is None and not any(kept):  # fixed durations: the loop below, with nothing to skip or call
        for s in sequence:
            i = nxt[s]
            nxt[s] = i + 1
            key, inputs = plans[s][i]
            start = free[s]
            for d, far in inputs:
                end = done[d] + comm if far else done[d]
                if end > start:  # noqa: PLR1730 (a comparison, not a call of max: the step's hottest loop)
                    start = end
            t = start + spans[s][i]
            times[s].append((start, t))
            done[key] = t
            free[s] = t
        return orders, times
    for s in sequence:  # every operation after its inputs (see _sequence)
        i = nxt[s]
        nxt[s] = i + 1
        if i < kept[s]:
            continue
        key, inputs = plans[s][i]
        start = free[s]
        for d, far in inputs:
            end = done[d]
            if far and comm:
                end = end + comm
            start = max(start, end)
        if execute is None:
            t = start + spans[s][i]
        else:
            op, j, chunk = orders[s][i]
            t = execute(s, op, j, chunk, start)
        times[s].append((start, t))
        done[key] = t
        free[s] = t
    return orders, times


def _sequence(plans: Sequence[_Plan], p: int, size: int) -> array[int]:
    """The devices in the order the list scheduling runs their operations, one entry an operation (each
    device's own in its order): every device runs until an input has not been made, then its neighbours
    (the only devices it exchanges with) take their turn.  Which operation can run depends on which
    have run, never on their times, so the order is the schedule's own, made once for every pricing
    of it; each device's operation depends on its own state and its inputs, so any such order gives
    the same times.  Raises RuntimeError on a deadlock, which a correct order never has."""
    made = [False] * size
    at = [0] * p
    out = array("I")
    pending = deque(range(p))
    queued = [True] * p
    while pending:
        s = pending.popleft()
        queued[s] = False
        plan, i = plans[s], at[s]
        first = i
        while i < len(plan) and all(made[d] for d, _ in plan[i][1]):
            made[plan[i][0]] = True
            out.append(s)
            i += 1
        at[s] = i
        if i > first:
            for u in ((s - 1) % p, (s + 1) % p):
                if not queued[u] and at[u] < len(plans[u]):
                    queued[u] = True
                    pending.append(u)
    if any(at[s] < len(plans[s]) for s in range(p)):
        raise RuntimeError("pipeline schedule deadlocked; its operation order is inconsistent")
    return out


_Plan = tuple[tuple[int, tuple[tuple[int, bool], ...]], ...]
_Schedule = tuple[tuple[tuple[Step, ...], ...], tuple[_Plan, ...], int, "array[int]"]
"""Each device's order, each of its operations' :func:`_plan`, the micro-batch count the keys use, and the
order of the devices' operations that :func:`_simulate` runs (:func:`_sequence`)."""


@lru_cache(maxsize=8)
def _schedule(name: str, p: int, m: int, v: int) -> _Schedule:
    """The orders of *name* on p devices, m micro-batches and v chunks, planned for :func:`_simulate`
    (a step simulates one schedule several times: with and without its sends and its data-parallel
    traffic)."""
    orders = tuple(tuple(order(name, s, stages=p, microbatches=m, chunks=v)) for s in range(p))
    width = 1 + max((j for o in orders for _, j, _ in o), default=0)
    plans = tuple(_plan(o, s, p=p, v=v, width=width) for s, o in enumerate(orders))
    return orders, plans, width, _sequence(plans, p, 3 * p * v * width)


def _plan(order: Sequence[Step], s: int, *, p: int, v: int, width: int) -> _Plan:
    """Device s's operations as ``(key, inputs)``: each operation's slot in the simulation's table of
    ends, and the slots of the operations it waits for, each with whether it runs on another device."""
    last = p * v - 1
    f_at, b_at = 0, p * v * width
    offset = {"F": f_at, "B": b_at, "W": 2 * b_at}
    out = []
    for op, j, chunk in order:
        vs = chunk * p + s
        inputs: tuple[tuple[int, bool], ...]
        if op == "F":
            inputs = () if vs == 0 else ((f_at + (vs - 1) * width + j, (vs - 1) % p != s),)
        elif op == "B":
            inputs = ((f_at + vs * width + j, False),) if vs == last else \
                ((f_at + vs * width + j, False), (b_at + (vs + 1) * width + j, (vs + 1) % p != s))
        else:
            inputs = ((b_at + vs * width + j, False),)
        out.append((offset[op] + vs * width + j, inputs))
    return tuple(out)


def peak_inflight(ops: Iterable[str], *, split: bool) -> int:
    """Most chunk-micro-batches a device holds at once, its operations' names in order: +1 when F
    starts, -1 when B (or W, in the split schedules) ends.

    >>> peak_inflight("FFBFBB", split=False)
    2
    """
    release = "W" if split else "B"
    held = peak = 0
    for op in ops:
        if op == "F":
            held += 1
            peak = max(peak, held)
        elif op == release:
            held -= 1
    return peak


def bubble(
    schedule: str,
    stages: int,
    *,
    microbatches: int,
    chunks: int | None = None,
    forward_slots: object = 1,
    backward_slots: object = None,
    weight_slots: object = None,
    comm_slots: object = 0,
) -> Bubble:
    """Simulate a pipeline schedule; return its timeline, makespan, bubble and in-flight micro-batches.

    Parameters
    ----------
    schedule : str
        ``gpipe``, ``1f1b``, ``interleaved`` or ``zb-h1``; aliases
        ``pipedream-flush``, ``interleaved-1f1b``, ``vpp``, ``zb``,
        ``zero-bubble``.
    stages : int
        Pipeline stages P (one per device), ≥ 1.
    microbatches : int
        Micro-batches M per mini-batch, ≥ 1; a multiple of P for
        ``interleaved``, which follows Megatron-LM's order since commit
        4295be1a6c (2024-11-01) with its default micro-batch group of P
        (see :mod:`costmodel.pipeline.orders`), and refuses the M it refuses.
    chunks : int, optional
        Model chunks v per device, for ``interleaved`` only (default 2); v = 1
        is plain 1F1B.
    forward_slots : int, Fraction, float or str, default 1
        Forward time F of one micro-batch on one stage (all its chunks), > 0.
    backward_slots : int, Fraction, float or str, optional
        Backward time B, > 0: the whole backward (default 2), or for ``zb-h1``
        its input-gradient half (default 1).
    weight_slots : int, Fraction, float or str, optional
        Weight-gradient time W, ≥ 0: for ``zb-h1`` a separate operation
        (default 1); for the other schedules it is added to each backward
        (default 0), so ``backward_slots=1, weight_slots=1`` compares 1F1B and
        ZB-H1 on equal work.
    comm_slots : int, Fraction, float or str, default 0
        Time to send activations or gradients to the next device, ≥ 0.

    Returns
    -------
    Bubble
        The timeline per stage and the totals, exact for exact inputs.

    Raises
    ------
    InputError
        If a count is not a positive integer, a time is negative (or F or B
        zero), ``chunks`` is given for a schedule other than ``interleaved``,
        M is not a multiple of P for ``interleaved``, or the schedule has more
        than :data:`MAX_OPERATIONS` operations.
    UnknownNameError
        If the schedule is not known (with a did-you-mean).

    Notes
    -----
    The simulation is exact list scheduling: each device runs the schedule's
    order, each operation as early as its device and inputs allow.  Busy time
    per stage is M·(F+B+W); everything else, communication included, is idle.

    References
    ----------
    .. [1] D. Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN
       Training", ICML 2021 (PipeDream-Flush, 1F1B).
    .. [2] Y. Huang et al., "GPipe", NeurIPS 2019.
    .. [3] D. Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN
       Training", ICML 2021 (PipeDream-Flush).
    .. [4] D. Narayanan et al., "Efficient Large-Scale Language Model
       Training on GPU Clusters Using Megatron-LM", SC '21.
    .. [5] P. Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024.

    Examples
    --------
    The textbook 1F1B pipeline, P = 4, M = 4 (F = 1, B = 2): 21 slots, 3/7 idle.

    >>> b = bubble("1f1b", 4, microbatches=4)
    >>> b.total_slots, b.bubble_fraction, b.bubble_over_ideal
    (Fraction(21, 1), Fraction(3, 7), Fraction(3, 4))
    >>> b.peak_inflight_microbatches
    (Fraction(4, 1), Fraction(3, 1), Fraction(2, 1), Fraction(1, 1))
    >>> " ".join(op.label for op in b.timeline[1].ops)
    'F0 F1 F2 B0 F3 B1 B2 B3'
    >>> bubble("gpipe", 4, microbatches=4).peak_inflight_microbatches
    (Fraction(4, 1), Fraction(4, 1), Fraction(4, 1), Fraction(4, 1))

    Interleaving v = 2 chunks halves the bubble; ZB-H1 (F = B = W = 1) leaves (P-1)(F+B-W):

    >>> bubble("interleaved", 4, microbatches=8, chunks=2).timeline[0].idle_slots
    Fraction(9, 2)
    >>> bubble("zb", 4, microbatches=8).timeline[0].idle_slots
    Fraction(3, 1)
    """
    name = resolve_schedule(schedule)
    p = positive(stages, "stages", hint="a pipeline has at least 1 stage")
    m = positive(microbatches, "microbatches", hint="a mini-batch has at least 1 micro-batch")
    split = name in SPLIT
    notes: list[str] = []
    if name == "interleaved":
        hint = "each device holds at least 1 model chunk"
        v = 2 if chunks is None else positive(chunks, "chunks", hint=hint)
        if m % p:
            raise InputError(
                f"microbatches={m} is not a multiple of stages={p}; interleaved 1F1B needs one, "
                f"e.g. microbatches={m + p - m % p}, or use 1f1b"
            )
        if v == 1:
            notes.append("interleaved with 1 chunk per device is plain 1F1B")
    elif chunks is not None and chunks != 1:
        raise InputError(f"chunks={chunks!r} applies only to the interleaved schedule; "
                         "drop it or use interleaved")
    else:
        v = 1
    f = parse_slots(forward_slots, name="forward_slots")
    b = parse_slots((1 if split else 2) if backward_slots is None else backward_slots, name="backward_slots")
    w = parse_slots((1 if split else 0) if weight_slots is None else weight_slots, name="weight_slots")
    c = parse_slots(comm_slots, name="comm_slots")
    for label, x, default in (("forward_slots", f, 1), ("backward_slots", b, 2 - split)):
        if x == 0:
            raise InputError(f"{label}=0 is zero; every operation takes time, e.g. {label}={default}")
    count = p * m * v * (3 if split else 2)
    if count > MAX_OPERATIONS:
        raise InputError(
            f"stages={p}, microbatches={m}, chunks={v} give {count} operations, more than "
            f"{MAX_OPERATIONS} to simulate; use fewer stages or micro-batches"
        )

    # Simulate in integer ticks: 1/scale slot, so every duration is an integer.
    spans = {"F": f / v, "B": (b if split else b + w) / v, "W": w / v}
    scale = math.lcm(*(x.denominator for x in (*spans.values(), c)))
    durations = {op: int(x * scale) for op, x in spans.items()}
    orders, times = _simulate(name, p, m, v, durations=[durations] * (p * v), comm=int(c * scale))

    total = Fraction(max(at[-1][1] for at in times), scale)
    busy = m * (f + b + w)
    slots: dict[int, Fraction] = {}  # tick -> slot, made once: Fraction() normalizes with a gcd

    def slot(t: int) -> Fraction:
        x = slots.get(t)
        if x is None:
            x = slots[t] = Fraction(t, scale)
        return x

    timeline = tuple(
        StageTimeline(
            stage=s,
            ops=tuple(PipelineOp(op=op, microbatch=j, chunk=chunk, start=slot(t0), end=slot(t1))
                      for (op, j, chunk), (t0, t1) in zip(orders[s], times[s], strict=True)),
            busy_slots=busy,
            idle_slots=total - busy,
            peak_inflight_microbatches=Fraction(peak_inflight((o for o, _, _ in orders[s]), split=split), v),
        )
        for s in range(p)
    )
    if c:
        notes.append("communication between stages is counted as idle time")
    if name == "1f1b" and m < p:
        notes.append(f"fewer micro-batches than stages: stages 0..{p - 1 - m} run every forward "
                     "before their first backward")
    if name == "zb-h1" and m < p:
        notes.append("fewer micro-batches than stages: ZB-H1's (P-1)(F+B-W) assumes M ≥ P")
    return Bubble(
        schedule=name, stages=p, microbatches=m, chunks=v, forward_slots=f, backward_slots=b,
        weight_slots=w, comm_slots=c, total_slots=total, timeline=timeline,
        sources=(SOURCES[name], BUBBLE) if name in {"gpipe", "1f1b"} else (SOURCES[name],),
        formula=FORMULAS[name], notes=tuple(notes),
    )


def simulate_stages(schedule: str, stages: int, *, microbatches: int, chunks: int,
                    forward: Sequence[Fraction], backward: Sequence[Fraction], weight: Sequence[Fraction],
                    comm: Fraction = Fraction(0)) -> tuple[tuple[PipelineOp, ...], ...]:
    """Each device's operations, simulated with a time per virtual stage (for unequal stages).

    The list scheduling of :func:`bubble` with ``forward[vs]``, ``backward[vs]`` and ``weight[vs]``
    the F, B and W of one micro-batch on virtual stage vs = chunk·stages + device (each ≥ 0, exact);
    in the schedules that do not split the backward, one ``B`` takes ``backward[vs] + weight[vs]``.
    The caller validates the schedule's name and counts (as :func:`bubble` does); with every stage
    equal the operations are :func:`bubble`'s.
    """
    return simulate_pipeline(schedule, stages, microbatches=microbatches, chunks=chunks, forward=forward,
                             backward=backward, weight=weight, comm=comm).operations()


@dataclass(frozen=True, slots=True)
class SimulatedPipeline:
    """A pipeline simulated by :func:`simulate_pipeline`: each device's order and its operations' (start,
    end) in integer ticks of 1/*scale* seconds (its callers only read them), and its model chunks; the
    operations are made from them only when asked for."""

    orders: Sequence[Sequence[Step]]
    times: list[list[tuple[Any, Any]]]
    scale: int
    chunks: int

    def makespan(self) -> Fraction:
        """The end of the last operation."""
        return Fraction(max(at[-1][1] for at in self.times), self.scale)

    def operations(self, keep: Sequence[Collection[tuple[str, int]]] | None = None
                   ) -> tuple[tuple[PipelineOp, ...], ...]:
        """Each device's operations (:func:`simulate_stages`'s); *keep*, when given, says which to make:
        device s's ``(op, microbatch)`` in ``keep[s]`` (each chunk's), and each device's last."""
        scale = self.scale
        seconds: dict[int, Fraction] = {}  # one Fraction a tick value: an operation often starts as one ends
        out = []
        for s, (steps, times) in enumerate(zip(self.orders, self.times, strict=True)):
            ops = []
            ran: Iterable[tuple[Step, tuple[Any, Any]]] = zip(steps, times, strict=True)
            if keep is not None:
                ran = self._kept(steps, times, keep[s])
            for (op, j, chunk), (t0, t1) in ran:
                start = seconds.get(t0)
                if start is None:
                    start = seconds[t0] = Fraction(t0, scale)
                end = seconds.get(t1)
                if end is None:
                    end = seconds[t1] = Fraction(t1, scale)
                ops.append(_operation(op, j, chunk, start, end))
            out.append(tuple(ops))
        return tuple(out)

    def _kept(self, steps: Sequence[Step], times: Sequence[tuple[Any, Any]],
              wanted: Collection[tuple[str, int]]) -> list[tuple[Step, tuple[Any, Any]]]:
        """A device's operations in *wanted* and its last, in order: looked for from the last backwards,
        until all of them are found (an ``(op, microbatch)`` runs once on each chunk)."""
        need, found = len(wanted) * self.chunks, []
        for k in reversed(range(len(steps))):
            step = steps[k]
            if (step[0], step[1]) in wanted:
                found.append(k)
                if len(found) == need:
                    break
        last = len(steps) - 1
        return [(steps[k], times[k]) for k in sorted({*found, last})]


_SLOTS = tuple(getattr(PipelineOp, name).__set__ for name in ("op", "microbatch", "chunk", "start", "end"))


def _operation(op: str, microbatch: int, chunk: int, start: Fraction, end: Fraction) -> PipelineOp:
    """``PipelineOp(op=op, microbatch=microbatch, chunk=chunk, start=start, end=end)``, each slot set as the
    frozen dataclass's own ``__init__`` sets it: a step's timeline makes tens of thousands, and the keyword
    call took a third of their time."""
    made = object.__new__(PipelineOp)
    set_op, set_microbatch, set_chunk, set_start, set_end = _SLOTS
    set_op(made, op)
    set_microbatch(made, microbatch)
    set_chunk(made, chunk)
    set_start(made, start)
    set_end(made, end)
    return made


def simulate_pipeline(schedule: str, stages: int, *, microbatches: int, chunks: int,
                      forward: Sequence[Fraction], backward: Sequence[Fraction], weight: Sequence[Fraction],
                      comm: Fraction = Fraction(0)) -> SimulatedPipeline:
    """:func:`simulate_stages`'s run, its operations made only when asked for
    (:meth:`SimulatedPipeline.operations`); the last few runs are remembered (a step simulates its pipeline
    for its makespan and again for its timeline)."""
    name = resolve_schedule(schedule)
    p, v = stages, chunks
    if not len(forward) == len(backward) == len(weight) == p * v:
        raise InputError(f"forward, backward and weight hold {len(forward)}, {len(backward)} and "
                         f"{len(weight)} times, not one per virtual stage ({p * v})")
    return _simulated(name, p, microbatches=microbatches, chunks=v, forward=tuple(forward),
                      backward=tuple(backward), weight=tuple(weight), comm=comm)


@lru_cache(maxsize=4)
def _simulated(name: str, p: int, *, microbatches: int, chunks: int, forward: tuple[Fraction, ...],
               backward: tuple[Fraction, ...], weight: tuple[Fraction, ...], comm: Fraction
               ) -> SimulatedPipeline:
    """:func:`simulate_pipeline` of checked arguments, in integer ticks."""
    split = name in SPLIT
    spans = [{"F": f, "B": b if split else b + w, "W": w}
             for f, b, w in zip(forward, backward, weight, strict=True)]
    scale = math.lcm(*(x.denominator for span in spans for x in span.values()), comm.denominator)
    durations = [{op: int(x * scale) for op, x in span.items()} for span in spans]
    orders, times = _simulate(name, p, microbatches, chunks, durations=durations, comm=int(comm * scale))
    return SimulatedPipeline(orders, times, scale, chunks)


def simulate_devices(schedule: str, stages: int, *, microbatches: int, chunks: int, execute: Execute,
                     comm: Fraction | int = Fraction(0), settled: Sequence[Sequence[PipelineOp]] = (),
                     ops: bool = True) -> tuple[tuple[PipelineOp, ...], ...]:
    """Each device's operations when each operation's duration is decided as it runs.

    The list scheduling of :func:`bubble`: each device runs its schedule's order, an operation
    starting when the device is free and its inputs have arrived (plus *comm* across devices);
    ``execute(device, op, microbatch, chunk, start)`` returns the operation's end (it may depend on
    the start and on what ran before on that device: a device's communication stream, say).
    With ``execute`` returning ``start + span`` this is :func:`simulate_stages`.  *settled[s]*, when
    given, are device s's first operations as they are known to run (a prefix of its order, from
    :func:`settled_prefix`); only the rest are executed.  With *ops* False nothing is returned (``()``):
    the caller wants only what *execute* saw (it may then count time in integer ticks, *comm* too).
    """
    name = resolve_schedule(schedule)
    known = [[(o.start, o.end) for o in ops] for ops in settled] if settled else ()
    orders, times = _simulate(name, stages, microbatches, chunks, comm=comm, execute=execute, settled=known)
    if not ops:
        return ()
    out = []
    for s in range(stages):
        kept = tuple(settled[s]) if settled else ()
        ran = zip(orders[s][len(kept):], times[s][len(kept):], strict=True)
        out.append((*kept, *(_operation(op, j, chunk, _exact(t0), _exact(t1))
                             for (op, j, chunk), (t0, t1) in ran)))
    return tuple(out)


def _exact(x: Any) -> Fraction:
    return x if type(x) is Fraction else Fraction(x)


def settled_prefix(timeline: Sequence[Sequence[PipelineOp]], first: Sequence[int], *, chunks: int
                   ) -> tuple[tuple[PipelineOp, ...], ...]:
    """The operations of *timeline* that run the same whatever happens from each device's operation
    *first[s]* on: device s's operations before it whose inputs all come from such operations.

    *timeline* is the schedule run with fixed durations (:func:`simulate_stages`); an operation runs as
    there when it, and everything it waits for, does: each device's prefix is cut at its first operation
    that waits for an operation outside another device's prefix, until no cut moves.
    """
    p, v = len(timeline), chunks
    last = p * v - 1
    cut = [min(f, len(ops)) for f, ops in zip(first, timeline, strict=True)]
    index = [{(o.op, o.microbatch, o.chunk): i for i, o in enumerate(ops)} for ops in timeline]

    def inside(op: str, j: int, vs: int) -> bool:
        s, chunk = vs % p, vs // p
        return index[s].get((op, j, chunk), len(timeline[s])) < cut[s]

    moved = True
    while moved:
        moved = False
        for s, ops in enumerate(timeline):
            for i in range(cut[s]):
                o = ops[i]
                vs = o.chunk * p + s
                needs = ([("F", vs - 1)] if o.op == "F" and vs > 0 else
                         [("F", vs)] + ([("B", vs + 1)] if vs < last else []) if o.op == "B" else
                         [("B", vs)] if o.op == "W" else [])
                if not all(inside(kind, o.microbatch, u) for kind, u in needs):
                    cut[s] = i
                    moved = True
                    break
    return tuple(tuple(ops[:c]) for ops, c in zip(timeline, cut, strict=True))
