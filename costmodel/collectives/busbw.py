"""Algorithm bandwidth and bus bandwidth of a measured collective, as nccl-tests reports them.

nccl-tests prints two bandwidths for every size it times.  The *algorithm
bandwidth* is the plain size over time, ``algbw = S/t``.  The *bus bandwidth*
scales it by a factor that depends on the collective and the rank count p, so
that a collective running at the hardware's speed reports that speed whatever
p is: ``busbw = algbw × factor``.

==============  =============  ============================================
collective      factor         why
==============  =============  ============================================
allreduce       2(p − 1)/p     every element is added p − 1 times and
                               assigned p − 1 times, over p links
reduce-scatter  (p − 1)/p      only the additions of all-reduce
allgather       (p − 1)/p      only the assignments of all-reduce
alltoall        (p − 1)/p      each rank keeps 1/p of its buffer
gather          (p − 1)/p      the root receives all blocks but its own
scatter         (p − 1)/p      the root sends all blocks but its own
broadcast       1              all data leaves the root's one link
reduce          1              all data enters the root's one link
==============  =============  ============================================

S is the size of the whole array, which is costmodel's ``n`` for every one of
these collectives (for reduce-scatter and all-gather the full vector, not one
rank's share).  The factor is also the lower-bound bandwidth coefficient of the
collective divided by n, so a bandwidth-optimal algorithm with no start-ups
(α = 0) reports exactly busbw = 1/β.

All values are exact fractions when the inputs are exact.

References
----------
.. [1] NVIDIA, nccl-tests, ``doc/PERFORMANCE.md`` ("Performance reported by NCCL
   tests": algorithm bandwidth, bus bandwidth, and the summary of factors).
   https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
.. [2] NVIDIA, nccl-tests, ``src/gather.cu`` and ``src/scatter.cu`` (``GatherGetBw``,
   ``ScatterGetBw``: the factor (nranks − 1)/nranks, which PERFORMANCE.md does not list).

Examples
--------
A 1 GB all-reduce over 8 GPUs measured at 10 ms: algbw 100 GB/s, busbw 175 GB/s.

>>> b = busbw("allreduce", p=8, n="1GB", time="10ms")
>>> b.algbw_bytes_per_s, b.factor, b.busbw_bytes_per_s
(Fraction(100000000000, 1), Fraction(7, 4), Fraction(175000000000, 1))
>>> bus_factor("all-gather", 4), bus_factor("bcast", 64)
(Fraction(3, 4), Fraction(1, 1))

The time that a given bus bandwidth implies, the same relation read backwards:

>>> time_for_busbw("allreduce", p=8, n="1GB", busbw="175GB/s")
Fraction(1, 100)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives.evaluate import check_ranks
from costmodel.errors import InputError
from costmodel.units import parse_rate, parse_size, parse_time

__all__ = ["FACTORS", "BusBandwidth", "bus_factor", "busbw", "time_for_busbw"]

FACTORS: dict[str, tuple[str, Callable[[Fraction], Fraction]]] = {
    "allreduce": ("2(p − 1)/p", lambda p: 2 * (p - 1) / p),
    "reduce-scatter": ("(p − 1)/p", lambda p: (p - 1) / p),
    "allgather": ("(p − 1)/p", lambda p: (p - 1) / p),
    "alltoall": ("(p − 1)/p", lambda p: (p - 1) / p),
    "gather": ("(p − 1)/p", lambda p: (p - 1) / p),
    "scatter": ("(p − 1)/p", lambda p: (p - 1) / p),
    "broadcast": ("1", lambda p: Fraction(1)),
    "reduce": ("1", lambda p: Fraction(1)),
}
"""Canonical collective name → (the factor as text, the factor as a function of p), per nccl-tests."""


def _canonical(collective: str) -> str:
    name = find_collective(collective).name
    if name not in FACTORS:
        raise InputError(f"nccl-tests defines no bus bandwidth factor for {name}; "
                         f"use one of {', '.join(FACTORS)}")
    return name


def bus_factor(collective: str, p: int) -> Fraction:
    """The factor busbw/algbw of *collective* at *p* ranks (aliases accepted).

    >>> bus_factor("allreduce", 16), bus_factor("rs", 16)
    (Fraction(15, 8), Fraction(15, 16))

    Raises
    ------
    UnknownNameError
        For an unknown collective.
    InputError
        For a bad p.
    """
    name = _canonical(collective)
    return FACTORS[name][1](Fraction(check_ranks(p)))


@dataclass(frozen=True, slots=True, kw_only=True)
class BusBandwidth(JSONFields):
    """One measurement read the nccl-tests way: size, time, algbw, the factor and busbw."""

    collective: str
    p: int
    n_bytes: Fraction
    time_s: Fraction
    algbw_bytes_per_s: Fraction
    factor: Fraction
    factor_text: str
    busbw_bytes_per_s: Fraction


def busbw(collective: str, *, p: int, n: Any, time: Any) -> BusBandwidth:
    """Algorithm and bus bandwidth of *collective* on *p* ranks moving *n* bytes in *time*.

    *n* and *time* take units (``"64MiB"``, ``"1.5ms"``) or are bytes and seconds.

    Raises
    ------
    InputError
        For a non-positive time or size, a bad p, or a collective without a factor.

    Examples
    --------
    >>> b = busbw("reduce-scatter", p=4, n=1000, time="1us")
    >>> b.algbw_bytes_per_s, b.busbw_bytes_per_s  # 1 GB/s; × 3/4
    (Fraction(1000000000, 1), Fraction(750000000, 1))
    """
    name = _canonical(collective)
    ranks = check_ranks(p)
    size = parse_size(n, allow_zero=False)
    seconds = parse_time(time, allow_zero=False)
    text, factor_of = FACTORS[name]
    factor = factor_of(Fraction(ranks))
    algbw = size / seconds
    return BusBandwidth(collective=name, p=ranks, n_bytes=size, time_s=seconds, algbw_bytes_per_s=algbw,
                        factor=factor, factor_text=text, busbw_bytes_per_s=algbw * factor)


def time_for_busbw(collective: str, *, p: int, n: Any, busbw: Any) -> Fraction:
    """The time at which *collective* of *n* bytes on *p* ranks reports bus bandwidth *busbw*.

    ``t = S·factor/busbw``: with busbw the link's speed, the collective's best bandwidth term.

    >>> time_for_busbw("allgather", p=4, n="1GB", busbw="100GB/s")  # 3/4 · 10 ms
    Fraction(3, 400)
    """
    size = parse_size(n, allow_zero=False)
    rate = parse_rate(busbw)
    return size * bus_factor(collective, p) / rate
