"""A device's data-parallel communication stream, and compute that slows while it is busy.

Collectives on one stream run one at a time, in the order they are issued (PyTorch DDP, FSDP,
Megatron-LM and DeepSpeed each issue their gradient and parameter collectives on dedicated NCCL
streams; here they share one, as they share the network):

    start_k = max(issued_k, end_{k-1}),    end_k = start_k + T_k.

While a collective is in flight the device computes at 1 − u of its speed, u the share of the
processor the communication takes (Calculon's ``processor_usage``: ``calculon/llm/layers.py``,
``compute_processing_time``, ``flop_time / (1 - processor_usage)``; its system files use 0.15 for
NVLink and 0.02 for InfiniBand; Isaev et al., SC 2023).  With u = 0 compute never slows.  The
speed is constant between the stream's events, so the end of w seconds of work started at t is
exact: the free stretches count in full, the busy ones at 1 − u.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from costmodel.references import ISAEV_2023, Cited

__all__ = ["CITED", "SOURCE", "CommStream"]

CITED = (ISAEV_2023,)

SOURCE: Cited = ISAEV_2023.at("calculon/llm/layers.py, compute_processing_time: "
                              "flop_time / (1 - processor_usage)")


class CommStream:
    """One device's collective stream: FIFO collectives, and the compute they slow down.

    Issue collectives and run compute in the order of time: :meth:`compute` from t assumes no
    collective will later be issued before t (the step's device simulation issues each one at the
    moment the device reaches it).

    Examples
    --------
    >>> s = CommStream(Fraction(1, 2))
    >>> s.issue(Fraction(1), Fraction(2))
    (Fraction(1, 1), Fraction(3, 1))
    >>> s.compute(Fraction(0), Fraction(2))  # 1 s at full speed, 1 s of work at half speed in [1, 3]
    Fraction(3, 1)
    """

    __slots__ = ("_busy", "_cursor", "_slows", "free", "rate")

    def __init__(self, slowdown: Fraction = Fraction(0), *, origin: Any = Fraction(0)) -> None:
        """*origin* is the time the stream starts at: ``Fraction(0)``, or ``0`` for times in integer ticks
        (exact without a slowdown, whose rate would divide them)."""
        self.rate = 1 - slowdown
        self._slows = bool(slowdown)
        self.free = origin
        self._busy: list[tuple[Fraction, Fraction]] = []  # merged busy intervals, in time order
        self._cursor = 0

    def issue(self, at: Fraction, duration: Fraction) -> tuple[Fraction, Fraction]:
        """Queue a collective of *duration* issued at *at*; its start and end."""
        start = max(at, self.free)
        end = start + duration
        if duration:
            self.free = end
            if self._busy and self._busy[-1][1] == start:
                self._busy[-1] = (self._busy[-1][0], end)
            else:
                self._busy.append((start, end))
        return start, end

    def compute(self, start: Fraction, work: Fraction) -> Fraction:
        """The end of *work* seconds (at full speed) of compute started at *start*."""
        if not self._slows or not work or start >= self.free:  # nothing in flight from start on
            return start + work
        busy = self._busy
        while self._cursor < len(busy) and busy[self._cursor][1] <= start:
            self._cursor += 1
        t, left = start, work
        for k in range(self._cursor, len(busy)):
            a, b = busy[k]
            if a > t:
                if left <= a - t:
                    return t + left
                left -= a - t
                t = a
            room = (b - t) * self.rate
            if left <= room:
                return t + left / self.rate
            left -= room
            t = b
        return t + left
