"""Price a schedule under the α–β–γ model, step by step.

Ranks are one-port and full-duplex (a rank sends at most one message and
receives at most one per step; the schedule checks it), and steps are
synchronous: a step lasts as long as its slowest transfer, α + mβ for m bytes,
plus mγ when the receiver reduces them.  The time is the sum over steps.  With
a topology, α and β are those of the outermost level the transfer crosses.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, section 3 (the
   cost model and its per-step accounting).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from costmodel._json import real, to_json_dict
from costmodel.params import LinkParams, PiecewiseLink
from costmodel.schedules.model import Schedule

__all__ = ["Simulation", "simulate"]

LevelOf = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``level_of(src, dst)``: the index of the link level each transfer crosses."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Simulation:
    """What a schedule costs: rounds, bytes per rank, and the critical-path time."""

    collective: str
    algorithm: str
    p: int
    n_bytes: Fraction
    rounds: int
    bytes_sent: tuple[Fraction, ...]
    bytes_received: tuple[Fraction, ...]
    time_s: Fraction
    latency_s: Fraction
    bandwidth_s: Fraction
    compute_s: Fraction
    bytes_per_level: tuple[Fraction, ...] = ()

    @property
    def bytes_sent_per_rank(self) -> Fraction:
        """Bytes sent by the busiest rank."""
        return max(self.bytes_sent)

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("collective", "algorithm", "p", "n_bytes", "rounds", "time_s",
                                      "bytes_sent_per_rank")),
                "bytes_received_per_rank": real(max(self.bytes_received))}


def simulate(schedule: Schedule, *, n: Any, link: LinkParams | PiecewiseLink | None = None,
             levels: tuple[LinkParams, ...] = (), level_of: LevelOf | None = None,
             whole_bytes: bool = False) -> Simulation:
    """The cost of *schedule* for an n-byte message, exactly.

    Give either one *link* for every transfer, or *levels* (α, β, γ per level)
    with *level_of* to say which level each transfer crosses.  A piecewise
    *link* (segments of message sizes) prices every transfer by the size of its
    message (:meth:`~costmodel.params.PiecewiseLink.for_message`).

    By default every chunk is n/units bytes (the continuous model).  With
    *whole_bytes* (n a whole number of bytes, one *link*) the chunks are
    whole-byte pieces as a real schedule cuts them: chunk c (c mod units for
    all-to-all blocks) is ⌈n/units⌉ bytes for c < n mod units and ⌊n/units⌋
    after; each step lasts as long as its largest message.

    Examples
    --------
    >>> from costmodel.schedules import build
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> sim = simulate(build("ring_allreduce", "allreduce", p=4), n=100_000_000, link=link)
    >>> sim.rounds, sim.bytes_sent_per_rank
    (6, Fraction(150000000, 1))
    """
    size = Fraction(n)
    if isinstance(link, PiecewiseLink) and not link.by_message:
        raise ValueError("a piecewise link prices transfers by message size: place its segments first")
    if whole_bytes:
        if size.denominator != 1 or link is None:
            raise ValueError("whole-byte chunks need a whole number of bytes and one link")
        return _simulate_whole(schedule, int(size), link)
    by_size = link if isinstance(link, PiecewiseLink) else None
    if link is not None:
        levels, level_of = (link.summary if isinstance(link, PiecewiseLink) else link,), None
    if not levels:
        raise ValueError("simulate needs a link or levels")
    chunk = size / schedule.units
    p = schedule.p
    counts = _Counter(p)
    crossing = [0] * len(levels)
    rounds = 0
    time = latency = bandwidth = compute = Fraction(0)
    priced: dict[tuple[int, int, str], tuple[Fraction, Fraction, Fraction, Fraction]] = {}

    def price(level: int, m: int, op: str) -> tuple[Fraction, Fraction, Fraction, Fraction]:
        key = (level, m, op)
        if key not in priced:
            lp = levels[level] if by_size is None else by_size.for_message(m * chunk, reduce=op == "reduce")
            parts = (lp.alpha_s, m * chunk * lp.beta_s_per_byte,
                     m * chunk * lp.gamma_s_per_byte if op == "reduce" else Fraction(0))
            priced[key] = (sum(parts, Fraction(0)), *parts)
        return priced[key]

    for s in schedule.steps():
        rounds += 1
        slowest: tuple[Fraction, Fraction, Fraction, Fraction] | None = None
        for g in s:
            m = g.chunks.shape[1]
            counts.add(g.src, g.dst, m)
            if level_of is None:
                per_level = {0: g.size}
            else:
                tally = np.bincount(level_of(g.src, g.dst), minlength=len(levels))
                per_level = {lv: int(c) for lv, c in enumerate(tally.tolist()) if c}
            for level, how_many in per_level.items():
                crossing[level] += m * how_many
                candidate = price(level, m, g.op)
                if slowest is None or candidate[0] > slowest[0]:
                    slowest = candidate
        assert slowest is not None  # a validated step moves something
        time += slowest[0]
        latency += slowest[1]
        bandwidth += slowest[2]
        compute += slowest[3]
    sent, received = counts.totals()
    return Simulation(
        collective=schedule.collective, algorithm=schedule.algorithm, p=p, n_bytes=size, rounds=rounds,
        bytes_sent=tuple(int(x) * chunk for x in sent),
        bytes_received=tuple(int(x) * chunk for x in received),
        time_s=time, latency_s=latency, bandwidth_s=bandwidth, compute_s=compute,
        bytes_per_level=tuple(c * chunk for c in crossing),
    )


class _Counter:
    """Chunks sent and received per rank, counted in batches (one bincount per batch, not per group)."""

    _BATCH = 1 << 22

    def __init__(self, p: int) -> None:
        self.p = p
        self.sent = np.zeros(p, dtype=np.int64)
        self.received = np.zeros(p, dtype=np.int64)
        self.pending: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self.size = 0

    def add(self, src: np.ndarray, dst: np.ndarray, m: int) -> None:
        sources, targets = self.pending.setdefault(m, ([], []))
        sources.append(src)
        targets.append(dst)
        self.size += src.size
        if self.size >= self._BATCH:
            self._flush()

    def _flush(self) -> None:
        for m, (sources, targets) in self.pending.items():
            self.sent += np.bincount(np.concatenate(sources), minlength=self.p) * m
            self.received += np.bincount(np.concatenate(targets), minlength=self.p) * m
        self.pending.clear()
        self.size = 0

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        self._flush()
        return self.sent, self.received


def _simulate_whole(schedule: Schedule, n: int, link: LinkParams | PiecewiseLink) -> Simulation:
    """:func:`simulate` with whole-byte chunks: the first n mod units chunks are one byte larger."""
    units, p = schedule.units, schedule.p
    base, big = divmod(n, units)
    sent, received = [0] * p, [0] * p
    chunks_sent, chunks_received = np.zeros(p, dtype=np.int64), np.zeros(p, dtype=np.int64)
    big_sent, big_received = np.zeros(p, dtype=np.int64), np.zeros(p, dtype=np.int64)
    rounds = 0
    latency = bandwidth = compute = Fraction(0)
    for s in schedule.steps():
        rounds += 1
        slowest = (Fraction(-1), Fraction(0), Fraction(0), Fraction(0))
        for g in s:
            m = g.chunks.shape[1]
            large = ((g.chunks % units) < big).sum(axis=1)
            chunks_sent += np.bincount(g.src, minlength=p) * m
            chunks_received += np.bincount(g.dst, minlength=p) * m
            big_sent += np.bincount(g.src, weights=large, minlength=p).astype(np.int64)
            big_received += np.bincount(g.dst, weights=large, minlength=p).astype(np.int64)
            largest = m * base + int(large.max())
            lp = link if isinstance(link, LinkParams) else link.for_message(largest, reduce=g.op == "reduce")
            parts = (lp.alpha_s, largest * lp.beta_s_per_byte,
                     largest * lp.gamma_s_per_byte if g.op == "reduce" else Fraction(0))
            total = parts[0] + parts[1] + parts[2]
            if total > slowest[0]:
                slowest = (total, *parts)
        latency += slowest[1]
        bandwidth += slowest[2]
        compute += slowest[3]
    sent = [int(c) * base + int(b) for c, b in zip(chunks_sent.tolist(), big_sent.tolist(), strict=True)]
    received = [int(c) * base + int(b) for c, b in zip(chunks_received.tolist(), big_received.tolist(),
                                                       strict=True)]
    return Simulation(
        collective=schedule.collective, algorithm=schedule.algorithm, p=p, n_bytes=Fraction(n), rounds=rounds,
        bytes_sent=tuple(Fraction(x) for x in sent), bytes_received=tuple(Fraction(x) for x in received),
        time_s=latency + bandwidth + compute, latency_s=latency, bandwidth_s=bandwidth, compute_s=compute,
    )
