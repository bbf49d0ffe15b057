"""Algorithms priced on a link whose α, β and γ depend on the message size, message by message.

A calibrated profile's :class:`~costmodel.params.PiecewiseLink` has one α–β
line per segment of message sizes.  An algorithm's cost on it is the sum over
its rounds of α + mβ (+ mγ when reduced), each round priced by the segment that
covers the size m of *its* message (:mod:`costmodel.collectives._messages`):
recursive doubling's rounds carry all n bytes, a ring's n/p, Rabenseifner's
n/2, ..., n/p.  Parameters measured per message size are PLogP's model [1]_;
the segments come from a fit of one algorithm, placed by the size of that
algorithm's messages (see :meth:`costmodel.profiles.Profile.link_for`).

Each message's price never falls as it grows (the envelope of
:class:`~costmodel.params.PiecewiseLink`), and every message grows with n, so
every algorithm's cost is non-decreasing in n (for a tuned block or segment
count, as on one link: see docs/design.md).  Between two sizes where no message
crosses a piece of the envelope the cost is a line in n: :func:`line` gives it
and :func:`breaks` the sizes where it changes, which the crossover and
best-range solvers cut at.

A link whose segments are collective sizes of one algorithm (fitted on one whose
messages differ in size, ``by_message`` false) prices that algorithm only, at
the segment of n, with the same rule: n never costs more than a larger size.

References
----------
.. [1] T. Kielmann, H. E. Bal, K. Verstoep, "Fast Measurement of LogP
   Parameters for Message Passing Platforms", IPDPS Workshops 2000: parameters
   as functions of the message size, measured piece by piece.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel.collectives._math import EXACT
from costmodel.collectives._messages import Message
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import record, resolve
from costmodel.errors import CostmodelError, InputError
from costmodel.params import FittedOn, PiecewiseLink
from costmodel.references import KIELMANN_2000

__all__ = ["CITED", "breaks", "check", "line", "messages", "placed", "terms", "tune", "uniform_share"]

CITED = (KIELMANN_2000,)
"""Parameters as functions of the message size (PLogP)."""

Values = Mapping[str, Fraction]
"""An algorithm's extra parameters by symbol (``{"k": Fraction(4)}``), as its coefficients take them."""


def messages(algo: Algorithm, p: int, values: Values | None = None) -> tuple[Message, ...]:
    """The messages on *algo*'s critical path at *p*: its own list, or the one size its coefficients give.

    >>> from costmodel.collectives._registry import resolve
    >>> [(m.count, m.share, m.reduce) for m in messages(resolve("allreduce", "ring"), 4)]
    [(Fraction(3, 1), Fraction(1, 4), True), (Fraction(3, 1), Fraction(1, 4), False)]
    >>> [m.share for m in messages(resolve("allreduce", "rabenseifner"), 8)]
    [Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 2), Fraction(1, 4), Fraction(1, 8)]
    """
    return _listed(algo, p, values)[0]


def _listed(algo: Algorithm, p: int, values: Values | None) -> tuple[tuple[Message, ...],
                                                                      tuple[tuple[float, float, bool], ...]]:
    """:func:`messages`, and the same as (count, share, reduce) in float64, made once."""
    key = (id(algo), p, tuple(sorted((values or {}).items())))
    found = _LISTS.get(key)
    if found is None or found[0] is not algo:
        if len(_LISTS) > 4096:
            _LISTS.clear()
        listed = _messages(algo, p, dict(values or {}))
        floats = tuple((float(m.count), float(m.share), m.reduce) for m in listed)
        found = _LISTS[key] = (algo, listed, floats)
    return found[1], found[2]


_LISTS: dict[tuple[int, int, tuple[tuple[str, Fraction], ...]],
             tuple[Algorithm, tuple[Message, ...], tuple[tuple[float, float, bool], ...]]] = {}
"""The lists made so far, by record (its id: records are hashed field by field, slowly), p and parameters."""


def _messages(algo: Algorithm, p: int, extra: dict[str, Fraction]) -> tuple[Message, ...]:
    if algo.messages is not None:
        return tuple(algo.messages(p, **extra))
    ranks, one = Fraction(p), Fraction(1)
    count = Fraction(algo.latency(ranks, one, EXACT, **extra))
    if count == 0:
        return ()
    share = Fraction(algo.bandwidth(ranks, one, EXACT, **extra)) / count
    reduced = Fraction(algo.compute(ranks, one, EXACT, **extra)) / share if share else Fraction(0)
    out = [Message(reduced, share, True)] if reduced else []
    if count > reduced:
        out.append(Message(count - reduced, share, False))
    return tuple(out)


def uniform_share(algo: Algorithm, p: int, values: Values | None = None) -> Fraction | None:
    """The size of every message of *algo* at *p* per byte of n, or ``None`` when they differ.

    >>> from costmodel.collectives._registry import resolve
    >>> uniform_share(resolve("allreduce", "ring"), 8), uniform_share(resolve("allreduce", "rab"), 8)
    (Fraction(1, 8), None)
    """
    shares = {m.share for m in messages(algo, p, values)}
    return shares.pop() if len(shares) == 1 else None


@lru_cache(maxsize=64)
def placed(link: PiecewiseLink) -> PiecewiseLink:
    """*link* with its segments in message sizes: a fit's collective sizes n times the size of each of the
    fitted algorithm's messages per byte of n (b/a of its model a·α + b·n·β: a ring all-reduce's 1/p).

    A link already in message sizes is itself; one fitted on an algorithm whose messages differ in size
    stays in collective sizes (it prices that algorithm only).

    Raises
    ------
    InputError
        When the fit does not say enough to place its segments: no algorithm, an unknown one, or
        neither p nor the coefficients.
    """
    f = link.fitted
    if link.by_message or f is None:
        return link
    share = _share(f, link.source)
    if share is None:
        return link
    segments = tuple(replace(s, from_bytes=s.from_bytes * share, to_bytes=s.to_bytes * share)
                     for s in link.segments)
    return replace(link, segments=segments, sizes="message", fitted=replace(f, message_share=share))


def _share(f: FittedOn, source: str) -> Fraction | None:
    """b/a of the fitted algorithm when its messages all have one size at the fit's p, else ``None``."""
    if f.collective == "pt2pt":
        return Fraction(1)  # one message of n bytes
    if not f.algorithm:
        raise InputError(f"{source}: the fit names no algorithm, so its segments cannot be placed by message "
                         "size; add algorithm = \"ring\" (the model it was fitted under) to the profile")
    try:
        algo = resolve(f.collective, f.algorithm)
    except CostmodelError as exc:
        raise InputError(f"{source}: {exc}") from None
    a, b = f.latency_coefficient, f.bandwidth_coefficient
    if f.p is None:
        if algo.messages is None and a and b is not None:
            return b / a  # one size at every p
        raise InputError(f"{source}: the fit names no p, so the size of {f.algorithm}'s messages is unknown; "
                         "add p = RANKS to the profile")
    for constraint in algo.constraints:
        if not constraint.holds(f.p) and constraint.otherwise is not None:
            algo = record(f.collective, constraint.otherwise)
    share = uniform_share(algo, f.p, {e.symbol: Fraction(1) for e in algo.extra})
    if share is None:
        return None
    if a and b is not None:
        return b / a  # the model the fit used (a tuned algorithm's fixed parameter included)
    if algo.extra:
        raise InputError(f"{source}: the fit of {f.algorithm} gives no latency_coefficient and "
                         "bandwidth_coefficient, so the size of its messages is unknown; add them")
    return share


def check(link: PiecewiseLink, *records: Algorithm) -> None:
    """Raise when *link* cannot price these records (an algorithm and the adaptation it runs as).

    Raises
    ------
    InputError
        For a link whose segments are in collective sizes of another algorithm.
    """
    reason = link.refuses(*(r.name for r in records))
    if reason is not None:
        raise InputError(reason)


def terms(algo: Algorithm, p: int, n: Fraction, link: PiecewiseLink, values: Values | None = None, *,
          below: bool = False) -> tuple[Fraction, Fraction, Fraction]:
    """(latency, bandwidth, compute) in seconds: every message priced by the segment of its size.

    *below* prices each message just below its size: the limit of the cost as the size rises to *n*.
    """
    lat = bw = comp = Fraction(0)
    for msg in messages(algo, p, values):
        size = msg.share * n
        a, b, c = link.message(size, reduce=msg.reduce, below=below).terms(size, reduce=msg.reduce)
        lat += msg.count * a
        bw += msg.count * b
        comp += msg.count * c
    return lat, bw, comp


def time_float(algo: Algorithm, p: int, n: float, link: PiecewiseLink, values: Values | None = None, *,
               below: bool = False) -> float:
    """:func:`terms` summed, in float64: for scans, whose answers are refined exactly."""
    total = 0.0
    for count, share, reduce in _listed(algo, p, values)[1]:
        total += count * link.price_float(share * n, reduce=reduce, below=below)[1]
    return total


def line(algo: Algorithm, p: int, n: Fraction, link: PiecewiseLink,
         values: Values | None = None) -> tuple[Fraction, Fraction]:
    """(A, B): the cost is A + B·x for x from *n* up to the next of :func:`breaks` (every extra fixed)."""
    a0 = a1 = Fraction(0)
    for msg in messages(algo, p, values):
        a, b = link.message(msg.share * n, reduce=msg.reduce).line(reduce=msg.reduce)
        a0 += msg.count * a
        a1 += msg.count * b * msg.share
    return a0, a1


def breaks(algo: Algorithm, p: int, *, link: PiecewiseLink, values: Values | None, lo: Fraction,
           hi: Fraction | None) -> list[Fraction]:
    """The sizes n in (*lo*, *hi*) where one of *algo*'s messages reaches a new piece of the link's
    envelope: where its cost (every extra fixed) may change line or jump."""
    found = set()
    for msg in messages(algo, p, values):
        if msg.share == 0:
            continue
        for piece in link.envelope(reduce=msg.reduce)[1:]:
            n = piece.from_bytes / msg.share
            if lo < n and (hi is None or n < hi):
                found.add(n)
    return sorted(found)


def tune(algo: Algorithm, p: int, n: Any, link: PiecewiseLink, chosen: Mapping[str, int], *,
         below: bool = False) -> dict[str, int]:
    """The free extra parameter that minimises the cost on *link* (the others fixed in *chosen*).

    For a fixed piece of the envelope under every message the cost is a + b·k + c/k
    in the parameter k, as on one link; as k grows each message shrinks, so the
    pieces change along runs of k, found by bisection (in float64, each run's ends
    then checked exactly).  The best integer of each run is found as on one link,
    and the cheapest of those (the smallest k on a tie) is the answer.  Exact for a
    Fraction *n*; in float64 for a float one (scans).
    """
    out = dict(chosen)
    free = [e for e in algo.extra if e.name not in chosen]
    if not free:
        return out
    if len(free) > 1:
        raise InputError(f"{algo.name}: a piecewise link tunes one parameter; fix all but one of "
                         f"{', '.join(e.name for e in free)}")
    (e,) = free
    search = _Search(algo, p, n=n, link=link, ints={x.symbol: chosen[x.name] for x in algo.extra
                                                   if x.name in chosen}, symbol=e.symbol, below=below)
    upper = max(1, int(e.upper(p, n)))
    best: tuple[Any, int] | None = None
    start = 1
    while start <= upper:
        low = search.run(start, upper, search.near)  # in floats, then checked exactly (else searched so)
        if search.exact and (search.where(low) != search.where(start)
                             or (low < upper and search.where(low + 1) == search.where(low))):
            low = search.run(start, upper, search.where)
        k = _best_between(search.at, start, low)
        if best is None or (search.at(k), k) < best:
            best = (search.at(k), k)
        start = low + 1
    assert best is not None
    out[e.name] = best[1]
    return out


class _Search:
    """The cost of a tuned record at each value k of its parameter, and which pieces its messages are on."""

    def __init__(self, algo: Algorithm, p: int, *, n: Any, link: PiecewiseLink, ints: Mapping[str, int],
                 symbol: str, below: bool) -> None:
        self.algo, self.p, self.n, self.link, self.below = algo, p, n, link, below
        self.ints, self.symbol = dict(ints), symbol
        self.exact = isinstance(n, Fraction)
        self.size = float(n)
        self.flags, self.one_size = _shape(algo, p, ints, symbol)
        self.seen: dict[int, Any] = {}

    def values(self, k: int) -> dict[str, Fraction]:
        return {**{s: Fraction(v) for s, v in self.ints.items()}, self.symbol: Fraction(k)}

    def at(self, k: int) -> Any:
        """The cost at k: exact, or in float64 for a float n."""
        if k not in self.seen:
            if self.exact:
                parts = terms(self.algo, self.p, self.n, self.link, self.values(k), below=self.below)
                total: Any = sum(parts, Fraction(0))
            elif self.one_size:
                total = self._quick(k)
            else:
                total = time_float(self.algo, self.p, self.n, self.link, self.values(k), below=self.below)
            self.seen[k] = total
        return self.seen[k]

    def _coefficients(self, k: int) -> tuple[float, float, float]:
        """(rounds, bytes, reduced bytes) per byte of n at k, in float64."""
        extra = {**self.ints, self.symbol: k}
        lat, bw, comp = self.algo.coefficients(self.p, 1, EXACT, **extra)
        return float(lat), float(bw), float(comp)

    def _quick(self, k: int) -> float:
        """:func:`time_float` of a record of one message size, from its coefficients."""
        count, sent, reduced = self._coefficients(k)
        share = sent / count
        total = 0.0
        for reduce in self.flags:
            rounds = reduced / share if reduce else count - reduced / share
            total += rounds * self.link.price_float(share * self.size, reduce=reduce, below=self.below)[1]
        return total

    def where(self, k: int) -> tuple[int, ...]:
        """The pieces of the envelope the messages at k are on, exactly."""
        link, n, below = self.link, self.n, self.below
        if self.one_size:  # the one size from the coefficients, without listing the messages
            extra, ranks, unit = self.values(k), Fraction(self.p), Fraction(1)
            share = (Fraction(self.algo.bandwidth(ranks, unit, EXACT, **extra))
                     / Fraction(self.algo.latency(ranks, unit, EXACT, **extra)))
            return tuple(link.message_index(share * n, reduce=reduce, below=below) for reduce in self.flags)
        return tuple(link.message_index(m.share * n, reduce=m.reduce, below=below)
                     for m in messages(self.algo, self.p, self.values(k)))

    def near(self, k: int) -> tuple[int, ...]:
        """:meth:`where` in float64."""
        if not self.one_size:
            return self.where(k)
        count, sent, _ = self._coefficients(k)
        return tuple(self.link.price_float(sent / count * self.size, reduce=reduce, below=self.below)[0]
                     for reduce in self.flags)

    @staticmethod
    def run(start: int, upper: int, key: Callable[[int], tuple[int, ...]]) -> int:
        """The last k of the run of equal keys that starts at *start* (keys change monotonically)."""
        first, low, high = key(start), start, upper
        while low < high:
            mid = (low + high + 1) // 2
            if key(mid) == first:
                low = mid
            else:
                high = mid - 1
        return low


def _shape(algo: Algorithm, p: int, ints: Mapping[str, int], symbol: str) -> tuple[tuple[bool, ...], bool]:
    """(whether each message is reduced, whether all have one size) of a tuned record at p: the same
    for every value of its parameter (the registry tests check it), so found at 1 and kept."""
    key = (id(algo), p, tuple(sorted(ints.items())))
    found = _SHAPES.get(key)
    if found is None or found[0] is not algo:
        values = {**{s: Fraction(v) for s, v in ints.items()}, symbol: Fraction(1)}
        listed = messages(algo, p, values)
        found = _SHAPES[key] = (algo, tuple(m.reduce for m in listed), len({m.share for m in listed}) == 1)
        if len(_SHAPES) > 4096:
            _SHAPES.clear()
    return found[1], found[2]


_SHAPES: dict[tuple[int, int, tuple[tuple[str, int], ...]], tuple[Algorithm, tuple[bool, ...], bool]] = {}


def _best_between(at: Callable[[int], Any], lo: int, hi: int) -> int:
    """The smallest integer k in [*lo*, *hi*] minimising ``at(k) = a + b·k + c/k``.

    Three evaluations give a, b and c; the integer optimum is next to √(c/b).
    """
    if hi - lo < 4:
        return min(range(lo, hi + 1), key=lambda k: (at(k), k))
    k1, k2, k3 = lo, lo + 1, lo + 3
    t1, t2, t3 = at(k1), at(k2), at(k3)
    d12, d23 = (t2 - t1) / (k2 - k1), (t3 - t2) / (k3 - k2)
    c = (d23 - d12) * k1 * k2 * k3 / (k3 - k1)
    b = d12 + c / (k1 * k2)
    if c <= 0:
        guess = float(lo)
    elif b <= 0:
        guess = float(hi)
    else:
        guess = math.sqrt(float(c) / float(b))
    near = range(max(lo, math.floor(min(guess, hi)) - 1), min(hi, math.ceil(max(guess, lo)) + 1) + 1)
    return min({lo, hi, *near}, key=lambda k: (at(k), k))
