"""Where one algorithm overtakes another: crossovers in n and in p, best-algorithm ranges.

Two costs that are linear in n, T = A + B·n, cross at n* = (A_b - A_a)/(B_a - B_b):
solved exactly, in rationals, wherever it lies.  Costs with a tuned integer
parameter (the pipelined chain's segments, the double binary tree's blocks)
are piecewise linear in n; their crossovers are searched for between a
smallest and a largest size (by default 0 B to 16 GiB): bracketed by a scan
and a bisection in floats, then solved exactly on the linear pieces of the
final bracket, whose ends (where the tuned parameter changes) are found
exactly too.  A crossover is ``exact=False`` only when that fails.  Where the
two costs are equal over a whole range of sizes, the range is a tie: neither
is "cheaper" there.

References
----------
.. [1] Thakur, Rabenseifner & Gropp 2005 (MPICH switches algorithms by message
   size): recursive doubling 4α + 4nβ against Rabenseifner 8α + 1.875nβ at
   p = 16 cross at n = 4α/(2.125β) (docs/howto/find-crossover.md).
.. [2] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005 (switch points).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Any

from costmodel._frames import frame
from costmodel._json import JSONFields, real, to_json_dict
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import (
    applicable,
    check_extra,
    check_ranks,
    check_size,
    choose,
    cost_breaks,
    line_from,
    linear_terms,
    placed,
    time_at,
    tuned,
)
from costmodel.errors import InputError
from costmodel.params import Link, LinkParams, PiecewiseLink, link_notes
from costmodel.units import format_size, format_time, parse_size

__all__ = [
    "BestRange",
    "BestRanges",
    "Crossover",
    "CrossoverInP",
    "CrossoverPoint",
    "PRange",
    "SizeRange",
    "best",
    "crossover",
    "crossover_in_p",
    "find_crossover",
]

DEFAULT_MAX_BYTES = Fraction(16 * 2**30)
_SCAN_PER_OCTAVE = 8
_BISECTIONS = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossoverPoint:
    """A message size where two costs are equal, or (``segment_boundary``) where the cheaper one switches
    without the costs meeting: on a piecewise link, one of the algorithms' messages reaches a new segment
    there and a cost jumps.  ``time_s`` and ``b_time_s`` are the two costs at that size (equal where they
    meet), ``below_s`` their limits just below it (at a switch; ``None`` where they meet)."""

    n_bytes: Fraction
    time_s: Fraction
    exact: bool
    segment_boundary: bool = False
    b_time_s: Fraction | None = None
    below_s: tuple[Fraction, Fraction] | None = None

    def to_dict(self) -> dict[str, object]:
        below = self.below_s
        return {
            "n_bytes": real(self.n_bytes),
            "n_bytes_exact": f"{self.n_bytes.numerator}/{self.n_bytes.denominator}" if self.exact else None,
            "time_s": real(self.time_s),
            "b_time_s": real(self.time_s if self.b_time_s is None else self.b_time_s),
            "exact": self.exact,
            "segment_boundary": self.segment_boundary,
            "a_below_s": None if below is None else real(below[0]),
            "b_below_s": None if below is None else real(below[1]),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeRange:
    """Sizes over which one algorithm is cheaper, or (``cheaper`` is ``None``) both cost the same."""

    from_bytes: Fraction
    to_bytes: Fraction | None  # None: no end (a closed-form comparison holds for every larger n)
    cheaper: str | None

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self), "equal": self.cheaper is None}


@dataclass(frozen=True, slots=True, kw_only=True)
class Crossover:
    """The crossovers in n of two algorithms at fixed p and link.

    ``relation`` is ``"crossover"`` (see ``crossovers``), ``"none"`` (no
    crossover in the sizes searched) or ``"identical"`` (equal at every size
    searched); ``reason`` says why in words.  ``ranges`` splits the sizes
    searched, ``min_bytes`` to ``max_bytes`` (``None``: no upper end, the costs
    are lines compared exactly), into pieces where one is cheaper or they are
    equal (a tie).  ``below`` is the cheaper algorithm at the smallest size,
    ``above`` at the largest (``None`` for a tie).  ``exhausted`` is true when a
    scan reached ``max_bytes`` without finding a crossover: a larger
    ``max_bytes`` may find one.
    """

    collective: str
    a: str
    b: str
    p: int
    link: Link
    meaning_of_n: str
    crossovers: tuple[CrossoverPoint, ...]
    below: str | None
    above: str | None
    relation: str
    reason: str
    min_bytes: Fraction = Fraction(0)
    max_bytes: Fraction | None = None
    ranges: tuple[SizeRange, ...] = ()
    scanned: bool = False
    exhausted: bool = False
    symbolic: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("collective", "a", "b", "p", "meaning_of_n")),
                **self.link.result_fields(), **to_json_dict(self, ("min_bytes", "max_bytes")),
                "method": "scan" if self.scanned else "closed form",
                **to_json_dict(self, ("crossovers", "ranges", "below", "above", "relation", "exhausted",
                                      "reason", "symbolic", "notes"))}


def _cheaper(a: str, b: str, ta: Fraction, tb: Fraction) -> str | None:
    return a if ta < tb else b if tb < ta else None


def crossover(
    collective: str,
    a: str,
    b: str,
    *,
    p: int,
    link: Link,
    extra: Mapping[str, int] | None = None,
    symbolic: bool = False,
    min_bytes: Any = None,
    max_bytes: Any = None,
) -> Crossover:
    """The message sizes where algorithms *a* and *b* cost the same.

    Parameters
    ----------
    collective, a, b : str
        Names or aliases.
    p : int
        Ranks (non-powers of two use each algorithm's adaptation).
    link : LinkParams or PiecewiseLink
        A piecewise link prices every message by its size, so each cost is a
        line between the sizes where one of its messages reaches a new segment;
        it is solved exactly line by line, and where a cost jumps the cheaper
        one may switch without the costs meeting (a ``segment_boundary`` point).
    extra : mapping, optional
        Fixed extra parameters; free ones are tuned at every n.
    symbolic : bool
        Also solve the crossover in α, β, γ with sympy (slower to import).
    min_bytes, max_bytes : size, optional
        The sizes searched.  Two lines are solved exactly: by default for
        every n ≥ 0, else only crossovers inside the range count.  A tuned
        cost is scanned from *min_bytes* (default 0 B) to *max_bytes*
        (default 16 GiB); ``exhausted`` says when the scan found nothing.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> x = crossover("allreduce", "rd", "rabenseifner", p=16, link=link)
    >>> x.crossovers[0].n_bytes, x.below, x.above
    (Fraction(2000000, 17), 'recursive-doubling', 'rabenseifner')
    >>> x = crossover("broadcast", "chain", "binomial", p=3, link=link)
    >>> [(r.from_bytes, r.cheaper) for r in x.ranges]  # a tie up to 125 kB, then the chain is cheaper
    [(Fraction(0, 1), None), (Fraction(125000, 1), 'pipelined-chain')]
    """
    spec = find_collective(collective)
    p = check_ranks(p)
    ra, rb = resolve(spec.name, a), resolve(spec.name, b)
    check_extra(spec.name, [ra, rb], extra)
    if ra is rb:
        raise InputError(f"{a!r} and {b!r} are the same algorithm ({ra.name}); compare two different ones")
    lo = Fraction(0) if min_bytes is None else parse_size(min_bytes)
    bounded = max_bytes is not None
    hi = parse_size(max_bytes) if bounded else None
    if hi is not None and hi <= lo:
        raise InputError(f"the size range is empty: min_bytes={format_size(lo)} is not below "
                         f"max_bytes={format_size(hi)}")
    if isinstance(link, PiecewiseLink):
        return _piecewise_crossover(spec.name, ra, rb, p=p, link=placed(link), extra=extra,
                                    symbolic=symbolic, lo=lo, hi=hi)
    (ea, notes_a), (eb, notes_b) = applicable(ra, p), applicable(rb, p)
    la, lb = linear_terms(ra, p, link, extra), linear_terms(rb, p, link, extra)
    if la is not None and lb is not None:
        ranges, inexact = _line_ranges(ea.name, eb.name, la, lb, lo=lo, hi=hi), set[Fraction]()
        scanned = False
    else:
        hi = DEFAULT_MAX_BYTES if hi is None else hi
        if hi <= lo:
            raise InputError(f"the size range is empty: min_bytes={format_size(lo)} is not below the "
                             f"default max_bytes={format_size(hi)}; give a larger max_bytes=")
        ranges, inexact = _scanned(ra, rb, p=p, link=link, extra=extra, lo=lo, hi=hi)
        scanned = True
    points = tuple(CrossoverPoint(n_bytes=r.from_bytes, time_s=time_at(ra, p, r.from_bytes, link, extra),
                                  b_time_s=time_at(rb, p, r.from_bytes, link, extra),
                                  exact=r.from_bytes not in inexact) for r in ranges[1:])
    relation, reason, exhausted = _describe(ea.name, eb.name, ranges, la, lb, scanned=scanned,
                                            bounded=bounded)
    text = _symbolic(ea, eb, p) if symbolic else None
    return Crossover(
        collective=spec.name, a=ea.name, b=eb.name, p=p, link=link, meaning_of_n=spec.meaning_of_n,
        crossovers=points, below=ranges[0].cheaper, above=ranges[-1].cheaper, relation=relation,
        reason=reason, min_bytes=lo, max_bytes=hi, ranges=ranges, scanned=scanned, exhausted=exhausted,
        symbolic=text, notes=notes_a + notes_b,
    )


def _piecewise_crossover(collective: str, ra: Algorithm, rb: Algorithm, *, p: int, link: Link,
                         extra: Mapping[str, int] | None, symbolic: bool, lo: Fraction,
                         hi: Fraction | None) -> Crossover:
    """:func:`crossover` on a piecewise link: exactly, line by line between the sizes where a message of
    either algorithm reaches a new segment; by a scan when a parameter is tuned."""
    spec = find_collective(collective)
    (ea, notes_a), (eb, notes_b) = applicable(ra, p), applicable(rb, p)
    _check_priceable(link, [(ra, ea), (rb, eb)])
    fixed = dict(extra or {})
    scanned = any(e.name not in fixed for e in (*ea.extra, *eb.extra))
    inexact: set[Fraction] = set()
    top: Fraction | None
    if scanned:
        top = DEFAULT_MAX_BYTES if hi is None else hi
        if top <= lo:
            raise InputError(f"the size range is empty: min_bytes={format_size(lo)} is not below the "
                             f"default max_bytes={format_size(top)}; give a larger max_bytes=")
        ranges, inexact = _scanned(ra, rb, p=p, link=link, extra=extra, lo=lo, hi=top)
    else:
        top = hi
        cuts = sorted({*cost_breaks(ra, p, link=link, extra=extra, lo=lo, hi=hi),
                       *cost_breaks(rb, p, link=link, extra=extra, lo=lo, hi=hi)})
        pieces = [r for u, w in zip([lo, *cuts], [*cuts, hi], strict=True)
                  for r in _line_ranges(ea.name, eb.name, line_from(ra, p, u, link, extra),
                                        line_from(rb, p, u, link, extra), lo=u, hi=w)]
        ranges = _joined(pieces)
    points = []
    for r in ranges[1:]:
        n = r.from_bytes
        ta, tb = time_at(ra, p, n, link, extra), time_at(rb, p, n, link, extra)
        if ta == tb or n in inexact:
            points.append(CrossoverPoint(n_bytes=n, time_s=ta, b_time_s=tb, exact=n not in inexact))
        else:  # the cheaper one changes where a cost jumps: no meeting
            below = (time_at(ra, p, n, link, extra, below=True), time_at(rb, p, n, link, extra, below=True))
            points.append(CrossoverPoint(n_bytes=n, time_s=ta, b_time_s=tb, exact=True, segment_boundary=True,
                                         below_s=below))
    jumps = any(c.segment_boundary for c in points)
    exhausted = False
    if len(ranges) > 1:
        relation, reason = "crossover", (
            "the link's α and β depend on the message size: each cost is a line between the sizes where one "
            "of its messages reaches a new segment, solved exactly line by line" + (
                "; where a cost jumps the cheaper one switches without the costs meeting" if jumps else ""))
    elif ranges[0].cheaper is None:
        relation, reason = "identical", f"{ea.name} and {eb.name} cost the same at every size"
    else:
        exhausted = scanned
        relation, reason = "none", (f"no crossover: {ranges[0].cheaper} is cheaper at every size"
                                    + ("; widen max_bytes=" if scanned else ""))
    notes = tuple(dict.fromkeys(notes_a + notes_b)) + link_notes(link, p)
    return Crossover(
        collective=spec.name, a=ea.name, b=eb.name, p=p, link=link, meaning_of_n=spec.meaning_of_n,
        crossovers=tuple(points), below=ranges[0].cheaper, above=ranges[-1].cheaper, relation=relation,
        reason=reason, min_bytes=lo, max_bytes=top, ranges=ranges, scanned=scanned, exhausted=exhausted,
        symbolic=_symbolic(ea, eb, p) if symbolic else None, notes=notes,
    )


def _check_priceable(link: Link, records: list[tuple[Algorithm, Algorithm]]) -> None:
    """Refuse algorithms a link of collective sizes cannot price (fitted on another one), then such a link
    for a range of sizes: it prices one algorithm, one size at a time."""
    if not isinstance(link, PiecewiseLink):
        return
    for asked, at_p in records:
        reason = link.refuses(asked.name, at_p.name)
        if reason:
            raise InputError(reason)
    if not link.by_message:
        raise InputError(f"{link.source}: its segments are collective sizes of one algorithm, which it "
                         "prices one size at a time; compare algorithms on a link of message sizes")


def _joined(pieces: Iterable[SizeRange]) -> tuple[SizeRange, ...]:
    """Neighbouring ranges with the same cheaper algorithm as one."""
    out: list[SizeRange] = []
    for r in pieces:
        if out and out[-1].cheaper == r.cheaper:
            out[-1] = SizeRange(from_bytes=out[-1].from_bytes, to_bytes=r.to_bytes, cheaper=r.cheaper)
        else:
            out.append(r)
    return tuple(out)


def _describe(a: str, b: str, ranges: tuple[SizeRange, ...], la: tuple[Fraction, Fraction] | None,
              lb: tuple[Fraction, Fraction] | None, *, scanned: bool, bounded: bool) -> tuple[str, str, bool]:
    """(relation, reason, exhausted) in words."""
    first, last = ranges[0], ranges[-1]
    if last.to_bytes is not None:
        span = f"between {format_size(first.from_bytes)} and {format_size(last.to_bytes)}"
    else:
        span = "for n ≥ 0" if first.from_bytes == 0 else f"for n ≥ {format_size(first.from_bytes)}"
    if len(ranges) > 1:
        how = ("found by scanning, then solved on the linear pieces: a tuned parameter makes the cost "
               "piecewise linear in n") if scanned else "the costs are lines in n"
        return "crossover", how, False
    if first.cheaper is None:
        return "identical", f"{a} and {b} cost the same {span}", False
    if scanned:
        return "none", f"no crossover {span}: {first.cheaper} is cheaper throughout; widen max_bytes=", True
    assert la is not None and lb is not None
    crossing = _line_crossing(la, lb)
    if crossing is None or crossing <= 0:
        if la[1] == lb[1]:
            gap = abs(la[0] - lb[0])
            why = (f"same cost per byte; {first.cheaper} is cheaper by a constant {format_time(gap)} "
                   "for every n")
        else:
            why = f"{first.cheaper} is never more expensive for n ≥ 0"
        return "none", why if not bounded else f"no crossover {span}: {why}", False
    return "none", (f"no crossover {span}: {first.cheaper} is cheaper throughout; the lines cross at "
                    f"n = {format_size(crossing)}, outside the range"), False


def _line_crossing(la: tuple[Fraction, Fraction], lb: tuple[Fraction, Fraction]) -> Fraction | None:
    """Where two lines A + B·n meet (``None`` if parallel)."""
    (a0, a1), (b0, b1) = la, lb
    return None if a1 == b1 else (b0 - a0) / (a1 - b1)


def _line_ranges(a: str, b: str, la: tuple[Fraction, Fraction], lb: tuple[Fraction, Fraction], *,
                 lo: Fraction, hi: Fraction | None) -> tuple[SizeRange, ...]:
    """Who is cheaper over [lo, hi] (hi ``None``: for every larger n) for two lines, exactly."""
    def cheaper(n: Fraction) -> str | None:
        return _cheaper(a, b, la[0] + la[1] * n, lb[0] + lb[1] * n)

    crossing = _line_crossing(la, lb)
    if crossing is not None and lo < crossing and (hi is None or crossing < hi):
        return (SizeRange(from_bytes=lo, to_bytes=crossing, cheaper=cheaper(lo)),
                SizeRange(from_bytes=crossing, to_bytes=hi, cheaper=cheaper(crossing + 1)))
    inside = lo + 1 if hi is None else (lo + hi) / 2  # no crossing inside: one answer for the whole range
    return (SizeRange(from_bytes=lo, to_bytes=hi, cheaper=cheaper(inside)),)


def _linear(a: str, b: str, la: tuple[Fraction, Fraction], lb: tuple[Fraction, Fraction]) -> tuple[
        tuple[CrossoverPoint, ...], str | None, str | None, str, str]:
    (a0, a1), (b0, b1) = la, lb
    if a1 == b1:
        if a0 == b0:
            return (), None, None, "identical", f"{a} and {b} cost the same for every n"
        cheaper = _cheaper(a, b, a0, b0)
        gap = abs(a0 - b0)
        return (), cheaper, cheaper, "none", (
            f"same cost per byte; {cheaper} is cheaper by a constant {float(gap):.6g} s for every n")
    n_star = (b0 - a0) / (a1 - b1)
    # slope decides the winner for large n; the intercept for small n
    above = a if a1 < b1 else b
    below = b if above == a else a
    if n_star <= 0:
        return (), above, above, "none", (
            f"{above} is never more expensive for n ≥ 0 (the lines would cross at n = "
            f"{float(n_star):.6g} B)")
    point = CrossoverPoint(n_bytes=n_star, time_s=a0 + a1 * n_star, exact=True)
    return (point,), below, above, "crossover", (
        f"{below} is cheaper below n*, {above} above: the costs are lines in n that cross once")


def _grid(lo: float, hi: float) -> list[float]:
    """Scan points: *lo*, *hi* and every ⅛ octave between them."""
    top = math.ceil(math.log2(max(hi, 2)) * _SCAN_PER_OCTAVE)
    inner = (2 ** (i / _SCAN_PER_OCTAVE) for i in range(top + 1))
    return [lo, *(x for x in inner if lo < x < hi), hi]


def _sign(ra: Algorithm, rb: Algorithm, n: float | Fraction, *, p: int, link: Link,
          extra: Mapping[str, int] | None) -> int:
    """The sign of T_a(n) - T_b(n): in floats, or exactly when floats cannot tell."""
    ta = time_at(ra, p, n, link, extra, exact=False)
    tb = time_at(rb, p, n, link, extra, exact=False)
    if abs(ta - tb) <= 1e-9 * max(abs(ta), abs(tb)):
        exact = time_at(ra, p, n, link, extra) - time_at(rb, p, n, link, extra)
        return (exact > 0) - (exact < 0)
    return (ta > tb) - (ta < tb)


def _scanned(ra: Algorithm, rb: Algorithm, *, p: int, link: Link,
             extra: Mapping[str, int] | None, lo: Fraction, hi: Fraction) -> tuple[
        tuple[SizeRange, ...], set[Fraction]]:
    """Who is cheaper over [lo, hi] when a cost has a tuned parameter: scan, bisect, then solve exactly.

    Returns the ranges and the range starts only located to float precision.

    The scan runs in floats (a difference too small to trust in floats is
    recomputed exactly); every change of sign between two scan points is
    located by :func:`_transition`.  Two crossings between neighbouring scan
    points (⅛ octave apart) would go unseen.
    """
    a, b = applicable(ra, p)[0].name, applicable(rb, p)[0].name
    names = {-1: a, 1: b, 0: None}
    grid: list[float | Fraction] = [*_grid(float(lo), float(hi))]
    grid[0], grid[-1] = lo, hi  # the ends exactly
    signs = [_sign(ra, rb, n, p=p, link=link, extra=extra) for n in grid]
    starts: list[tuple[Fraction, int]] = [(Fraction(lo), signs[0])]
    inexact: set[Fraction] = set()
    for (n0, s0), (n1, s1) in pairwise(zip(grid, signs, strict=True)):
        left, sign = Fraction(n0), s0
        for _ in range(8):  # a change of sign may pass through a tie: at most a few steps
            if sign == s1:
                break
            left, sign, exact = _transition(ra, rb, left, Fraction(n1), sign, p=p, link=link, extra=extra)
            if not exact:
                inexact.add(left)
            if left >= Fraction(n1):
                sign = s1
            if starts[-1][0] == left:  # an empty range (a crossing exactly at a scan point)
                starts[-1] = (left, sign)
            starts.append((left, sign))
    merged: list[tuple[Fraction, int]] = []
    for start, sign in starts:
        if merged and merged[-1][0] == start:
            merged[-1] = (start, sign)
        elif not merged or merged[-1][1] != sign:
            merged.append((start, sign))
    ends = [start for start, _ in merged[1:]] + [Fraction(hi)]
    return tuple(SizeRange(from_bytes=start, to_bytes=end, cheaper=names[sign])
                 for (start, sign), end in zip(merged, ends, strict=True)), inexact


def _transition(ra: Algorithm, rb: Algorithm, lo: Fraction, hi: Fraction, sign: int, *, p: int,
                link: Link, extra: Mapping[str, int] | None) -> tuple[Fraction, int, bool]:
    """The first size in (lo, hi] where the sign of T_a - T_b stops being *sign*, the sign after it,
    and whether that size is exact.

    A bisection in floats narrows [lo, hi]; then both costs are split into
    their linear pieces there (:func:`_pieces`), and the change is solved
    exactly: at a root of a piece's difference, or at a piece's end (where a
    tie ends, or a tuned parameter jumps).  If that fails the bracket's top is
    returned, not exact.
    """
    x0, x1 = float(lo), float(hi)
    for _ in range(_BISECTIONS):
        mid = (x0 + x1) / 2
        if mid in (x0, x1):
            break
        if _sign(ra, rb, mid, p=p, link=link, extra=extra) == sign:
            x0 = mid
        else:
            x1 = mid
    left, right = max(lo, Fraction(x0)), min(hi, Fraction(x1))
    pieces_a = _pieces(ra, left, right, p=p, link=link, extra=extra)
    pieces_b = _pieces(rb, left, right, p=p, link=link, extra=extra)
    cuts = sorted({left, right, *(s for s, _ in pieces_a), *(s for s, _ in pieces_b)})
    for u, w in pairwise(cuts):
        (a0, a1), (b0, b1) = _line_at(pieces_a, u), _line_at(pieces_b, u)
        c, d = a0 - b0, a1 - b1  # T_a - T_b = c + d·n on [u, w]
        at_u = c + d * u
        after_u = _signum(at_u) if at_u else _signum(d)
        if sign == 0:
            if c or d:
                return u, after_u, True
            continue
        if after_u != sign:
            return u, after_u, True
        at_w = c + d * w
        if _signum(at_w) != sign:
            root = -c / d
            return root, _signum(d) if root < w else 0, True
    after = _sign(ra, rb, right, p=p, link=link, extra=extra)
    if isinstance(link, PiecewiseLink) and after != sign:
        return right, after, True  # no change before *right* on the pieces: a cost jumps at right itself
    return right, _sign(ra, rb, float(right), p=p, link=link, extra=extra), False


def _signum(x: Fraction) -> int:
    return (x > 0) - (x < 0)


_Line = tuple[Fraction, Fraction]


def _line_at(pieces: list[tuple[Fraction, _Line]], n: Fraction) -> _Line:
    """The line of the piece that holds *n* (pieces sorted by their start)."""
    line = pieces[0][1]
    for start, piece in pieces:
        if start <= n:
            line = piece
    return line


def _pieces(algo: Algorithm, lo: Fraction, hi: Fraction, *, p: int, link: Link,
            extra: Mapping[str, int] | None, depth: int = 0) -> list[tuple[Fraction, _Line]]:
    """The cost of *algo* on [lo, hi] as linear pieces: (start, (A, B)) with T = A + B·n from start on.

    A tuned cost is the lower envelope of one line per value of its
    parameter.  If the lines best at *lo* and at *hi* meet on the envelope,
    that meeting point is the one break between them; otherwise the interval
    is split there (or halved) and each half solved the same way.  On a
    piecewise link each of those costs is itself a line only between the sizes
    where a message reaches a new segment: the interval is first cut there.
    """
    fixed = dict(extra or {})
    k_lo = tuned(algo, p, lo, link, extra)
    k_hi = tuned(algo, p, hi, link, extra)
    if isinstance(link, PiecewiseLink) and depth < 48:
        cuts = sorted({*cost_breaks(algo, p, link=link, extra={**fixed, **k_lo}, lo=lo, hi=hi),
                       *cost_breaks(algo, p, link=link, extra={**fixed, **k_hi}, lo=lo, hi=hi)})
        if cuts:
            out: list[tuple[Fraction, _Line]] = []
            for u, w in pairwise([lo, *cuts, hi]):
                part = _pieces(algo, u, w, p=p, link=link, extra=extra, depth=depth + 1)
                out += part[1:] if out and out[-1][1] == part[0][1] else part
            return out
    line_lo = line_from(algo, p, lo, link, {**fixed, **k_lo})
    if k_lo == k_hi:
        return [(lo, line_lo)]
    line_hi = line_from(algo, p, lo, link, {**fixed, **k_hi})
    meet = _line_crossing(line_lo, line_hi)
    if depth >= 48:
        return [(lo, line_lo), (hi, line_hi)]
    if meet is not None and lo <= meet <= hi and \
            time_at(algo, p, meet, link, extra) == line_lo[0] + line_lo[1] * meet:
        # both lines lie on the envelope at lo, meet and hi: by concavity they are the envelope
        return [piece for piece in ((lo, line_lo), (meet, line_hi)) if piece[0] < hi and
                not (piece[1] is line_lo and meet == lo)]
    split = meet if meet is not None and lo < meet < hi else (lo + hi) / 2
    left = _pieces(algo, lo, split, p=p, link=link, extra=extra, depth=depth + 1)
    right = _pieces(algo, split, hi, p=p, link=link, extra=extra, depth=depth + 1)
    if left[-1][1] == right[0][1]:
        right = right[1:]
    return left + right


def _symbolic(a: Algorithm, b: Algorithm, p: int) -> str | None:
    """n* as a formula in α, β, γ at this p (sympy), or ``None`` for non-linear costs."""
    if a.extra or b.extra:
        return None
    import sympy

    from costmodel.collectives._math import symbolic as sympy_math
    from costmodel.symbols import ALPHA, BETA, GAMMA, n

    m = sympy_math()
    pp = sympy.Integer(p)

    def total(algo: Algorithm) -> Any:
        lat, bw, comp = algo.coefficients(pp, n, m)
        return lat * ALPHA + bw * BETA + comp * GAMMA

    solutions = sympy.solve(sympy.Eq(total(a), total(b)), n)
    if len(solutions) != 1:
        return None
    from costmodel.collectives.formula import plain_text

    return f"n* = {plain_text(sympy.simplify(solutions[0]))}"


@dataclass(frozen=True, slots=True, kw_only=True)
class PRange(JSONFields):
    """A range of rank counts over which one algorithm is cheaper (``None``: they tie)."""

    from_p: int
    to_p: int
    cheaper: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossoverInP:
    """Which of two algorithms is cheaper at each p in a range, for a fixed n."""

    collective: str
    a: str
    b: str
    n_bytes: Fraction
    link: Link
    meaning_of_n: str
    ranges: tuple[PRange, ...]
    notes: tuple[str, ...] = ()

    @property
    def crossovers(self) -> tuple[int, ...]:
        """The first p of every range after the first: where the cheaper one changes."""
        return tuple(r.from_p for r in self.ranges[1:])

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("collective", "a", "b", "n_bytes", "meaning_of_n")),
                **self.link.result_fields(),
                **to_json_dict(self, ("crossovers", "ranges", "notes"),
                               rename={"crossovers": "crossovers_p"})}


def crossover_in_p(
    collective: str,
    a: str,
    b: str,
    *,
    n: Any,
    link: Link,
    p_min: int = 2,
    p_max: int = 1024,
    extra: Mapping[str, int] | None = None,
) -> CrossoverInP:
    """Ranges of p (every integer from *p_min* to *p_max*) where *a* or *b* is cheaper.

    Non-power-of-two p use the adaptations, so there may be several crossovers.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> x = crossover_in_p("allreduce", "ring", "rab", n="64MiB", link=link, p_max=64)
    >>> [(r.from_p, r.to_p, r.cheaper) for r in x.ranges][:3]
    [(2, 2, None), (3, 3, 'ring'), (4, 4, 'rabenseifner')]
    """
    spec = find_collective(collective)
    lo, hi = check_ranks(p_min), check_ranks(p_max)
    if hi < lo:
        raise InputError(f"p_max={hi} is below p_min={lo}; give p_min ≤ p_max")
    if hi - lo > 100_000:
        raise InputError(f"{hi - lo + 1} rank counts are too many to scan; narrow the range to 100000")
    ra, rb = resolve(spec.name, a), resolve(spec.name, b)
    size = parse_size(n)
    link = placed(link)
    notes = link_notes(link, lo, hi)
    ranges: list[PRange] = []
    for p in range(lo, hi + 1):
        ta, tb = time_at(ra, p, size, link, extra), time_at(rb, p, size, link, extra)
        cheaper = _cheaper(ra.name, rb.name, ta, tb)
        if ranges and ranges[-1].cheaper == cheaper:
            ranges[-1] = PRange(from_p=ranges[-1].from_p, to_p=p, cheaper=cheaper)
        else:
            ranges.append(PRange(from_p=p, to_p=p, cheaper=cheaper))
    return CrossoverInP(collective=spec.name, a=ra.name, b=rb.name, n_bytes=size, link=link,
                        meaning_of_n=spec.meaning_of_n, ranges=tuple(ranges), notes=notes)


@dataclass(frozen=True, slots=True, kw_only=True)
class BestRange(JSONFields):
    """A size interval over which one algorithm is cheapest (``tied`` lists equals)."""

    algorithm: str
    from_bytes: Fraction
    to_bytes: Fraction
    tied: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class BestRanges:
    """The cheapest algorithm of a collective over a size interval."""

    collective: str
    p: int
    link: Link
    meaning_of_n: str
    ranges: tuple[BestRange, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("collective", "p", "meaning_of_n")), **self.link.result_fields(),
                **to_json_dict(self, ("ranges", "notes"))}

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame``, one row per size range, smallest first: ``algorithm``,
        ``from_bytes``, ``to_bytes`` and ``tied`` (names joined by ", "); ``df.attrs`` hold
        ``collective``, ``p``, ``meaning_of_n`` and the link."""
        data = self.to_dict()
        attrs = {k: v for k, v in data.items() if k not in ("ranges", "notes")}
        return frame((r.to_dict() for r in self.ranges), ("algorithm", "from_bytes", "to_bytes", "tied"),
                     attrs=attrs)


def _typed(given: Any, size: Fraction) -> str:
    """A size as it was given: text as typed, a number as a size."""
    return given.strip() if isinstance(given, str) else format_size(size)


def best(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    p: int,
    link: Link,
    min_bytes: Any = 1,
    max_bytes: Any = DEFAULT_MAX_BYTES,
    extra: Mapping[str, int] | None = None,
) -> BestRanges:
    """The cheapest algorithm for every message size in [*min_bytes*, *max_bytes*].

    The interval is cut at every exact crossover of two costs linear in n; when
    a cost has a tuned parameter, a scan of the cheapest algorithm adds the
    crossovers where it changes.  Each piece is won by the algorithm cheapest
    at its midpoint.  On a piecewise link the interval is also cut wherever a
    message of an algorithm reaches a new segment (between those sizes each
    cost is a line).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> r = best("allreduce", ["ring", "rd", "rab"], p=16, link=link, max_bytes="64MiB")
    >>> [(x.algorithm, x.to_bytes) for x in r.ranges]
    [('recursive-doubling', Fraction(2000000, 17)), ('rabenseifner', Fraction(67108864, 1))]
    """
    spec = find_collective(collective)
    p = check_ranks(p)
    lo, hi = check_size(min_bytes), parse_size(max_bytes)
    if hi <= lo:
        raise InputError(f"the size range is empty: min_bytes={_typed(min_bytes, lo)} is not below "
                         f"max_bytes={_typed(max_bytes, hi)}")
    link = placed(link)
    chosen, skipped = choose(spec.name, algorithms, p=p)
    if isinstance(link, PiecewiseLink) and not algorithms:
        chosen, skipped = _priceable(chosen, skipped, p=p, link=link)
    check_extra(spec.name, chosen, extra)
    if len(chosen) >= 2:
        _check_priceable(link, [(r, applicable(r, p)[0]) for r in chosen])
    if len(chosen) < 2:
        why = f"; {link.only()}" if isinstance(link, PiecewiseLink) and not link.by_message else ""
        raise InputError(f"best needs at least two algorithms to compare{why}")
    cuts = _cuts(chosen, p=p, link=link, extra=extra, lo=lo, hi=hi)
    ranges: list[BestRange] = []
    notes = list(skipped)
    for left, right in pairwise(sorted(cuts)):
        mid = (left + right) / 2
        times = [(time_at(r, p, mid, link, extra), i, applicable(r, p)[0].name) for i, r in enumerate(chosen)]
        fastest = min(times)[0]
        winners = [name for t, _, name in sorted(times, key=lambda x: x[1]) if t == fastest]
        head, tied = winners[0], tuple(winners[1:])
        if ranges and ranges[-1].algorithm == head and ranges[-1].tied == tied:
            start = ranges[-1].from_bytes
            ranges[-1] = BestRange(algorithm=head, from_bytes=start, to_bytes=right, tied=tied)
        else:
            ranges.append(BestRange(algorithm=head, from_bytes=left, to_bytes=right, tied=tied))
    for r in chosen:
        notes.extend(applicable(r, p)[1])
    if isinstance(link, PiecewiseLink):
        notes.extend(_switch_note(ranges, chosen, p=p, link=link, extra=extra))
        notes.extend(link.notes_at(p))
    return BestRanges(collective=spec.name, p=p, link=link, meaning_of_n=spec.meaning_of_n,
                      ranges=tuple(ranges), notes=tuple(dict.fromkeys(notes)))


def _cuts(chosen: list[Algorithm], *, p: int, link: Link, extra: Mapping[str, int] | None, lo: Fraction,
          hi: Fraction) -> set[Fraction]:
    """Sizes that cut [lo, hi] into pieces each won by one algorithm: where two lines cross, where a cost
    changes line (a message reaching a new segment of a piecewise link), where a tuned cost overtakes."""
    fixed = dict(extra or {})
    free = {r: any(e.name not in fixed for e in applicable(r, p)[0].extra) for r in chosen}
    straight = [r for r in chosen if not free[r]]
    edges = sorted({lo, hi, *(x for r in straight
                              for x in cost_breaks(r, p, link=link, extra=extra, lo=lo, hi=hi))})
    cuts = set(edges)
    for u, w in pairwise(edges):
        lines = {r: line_from(r, p, u, link, extra) for r in straight}
        for i, ra in enumerate(straight):
            for rb in straight[i + 1:]:
                points = _linear(ra.name, rb.name, lines[ra], lines[rb])[0]
                cuts.update(c.n_bytes for c in points if u < c.n_bytes < w)
    if isinstance(link, PiecewiseLink):
        contenders = [r for r in chosen if free[r]]
    else:
        known = [line_from(r, p, lo, link, extra) for r in straight]
        contenders = [r for r in chosen
                      if free[r] and _may_win(r, known, sorted(cuts), p=p, link=link, extra=extra)]
    if contenders:
        cuts.update(_envelope_cuts(straight + contenders, sorted(cuts), p=p, link=link, extra=extra))
    return cuts


def _priceable(chosen: list[Algorithm], skipped: tuple[str, ...], *, p: int,
               link: PiecewiseLink) -> tuple[list[Algorithm], tuple[str, ...]]:
    """The default list's algorithms *link* can price, and the notes with one naming those left out."""
    kept = [r for r in chosen if link.refuses(r.name, applicable(r, p)[0].name) is None]
    out = [r.name for r in chosen if r not in kept]
    return kept, skipped + ((f"{', '.join(out)} left out: {link.only()}",) if out else ())


def _switch_note(ranges: list[BestRange], chosen: list[Algorithm], *, p: int, link: Link,
                 extra: Mapping[str, int] | None) -> tuple[str, ...]:
    """A note on the sizes where the cheapest changes without two costs meeting (a cost jumps there)."""
    by_name = {applicable(r, p)[0].name: r for r in chosen}
    jumps = [b.from_bytes for a, b in pairwise(ranges)
             if time_at(by_name[a.algorithm], p, b.from_bytes, link, extra)
             != time_at(by_name[b.algorithm], p, b.from_bytes, link, extra)]
    if not jumps:
        return ()
    listed = ", ".join(format_size(n).split(" = ")[0] for n in jumps)
    return (f"the cheapest changes at {listed} without the costs meeting: there a message reaches a new "
            "segment of the link and a cost jumps",)


def _may_win(algo: Algorithm, lines: list[tuple[Fraction, Fraction]], edges: list[Fraction], *,
             p: int, link: LinkParams, extra: Mapping[str, int] | None) -> bool:
    """Whether a tuned cost can dip below the cheapest of the linear ones somewhere in the range.

    With T(k, n) = a + b·k + (s + t/k)·n (a registry test checks this form), the
    line T(1, 0) + s·n lies below T for every k; s = 2·slope(k=2) − slope(k=1).
    The linear envelope bends only at the *edges*, so comparing there suffices.
    """
    free = [e for e in applicable(algo, p)[0].extra if e.name not in (extra or {})]
    if len(free) != 1 or not lines:
        return True

    def fixed(k: int) -> tuple[Fraction, Fraction]:
        line = linear_terms(algo, p, link, {**(extra or {}), free[0].name: k})
        assert line is not None  # every parameter is fixed
        return line

    (a, s1), (_, s2) = fixed(1), fixed(2)
    slope = 2 * s2 - s1
    return any(a + slope * x < min(l0 + l1 * x for l0, l1 in lines) for x in edges)


def _envelope_cuts(chosen: list[Algorithm], cuts: list[Fraction], *, p: int, link: Link,
                   extra: Mapping[str, int] | None) -> set[Fraction]:
    """Where the cheapest algorithm changes, found by a scan of all of them at once."""
    grid = sorted({float(c) for c in cuts} | set(_grid(float(cuts[0]), float(cuts[-1]))))
    lines = {} if isinstance(link, PiecewiseLink) else {r: linear_terms(r, p, link, extra) for r in chosen}
    floats = {r: (float(line[0]), float(line[1])) for r, line in lines.items() if line is not None}

    def at(r: Algorithm, n: float) -> float:
        if r in floats:
            return floats[r][0] + floats[r][1] * n
        return time_at(r, p, n, link, extra, exact=False)

    def cheapest(n: float) -> Algorithm:
        return min(chosen, key=lambda r: at(r, n))

    winners = [cheapest(n) for n in grid]
    found = set()
    for (n0, w0), (n1, w1) in pairwise(zip(grid, winners, strict=True)):
        if w0 is not w1:
            start = Fraction(n0)
            sign = _sign(w0, w1, n0, p=p, link=link, extra=extra)
            point = _transition(w0, w1, start, Fraction(n1), sign, p=p, link=link, extra=extra)[0]
            if cuts[0] < point < cuts[-1]:
                found.add(point)
    return found


def find_crossover(
    collective: str,
    a: str,
    b: str,
    *,
    p: int | None = None,
    n: Any = None,
    link: Link,
    extra: Mapping[str, int] | None = None,
    symbolic: bool = False,
    p_min: int = 2,
    p_max: int = 1024,
    min_bytes: Any = None,
    max_bytes: Any = None,
) -> Crossover | CrossoverInP:
    """:func:`crossover` in n when *p* is given, :func:`crossover_in_p` when *n* is.

    Raises
    ------
    InputError
        Unless exactly one of *p* and *n* is given.
    """
    if (p is None) == (n is None):
        raise InputError("give either p= (to solve for the size n*) or n= (to scan p), not both or neither")
    if p is not None:
        return crossover(collective, a, b, p=p, link=link, extra=extra, symbolic=symbolic,
                         min_bytes=min_bytes, max_bytes=max_bytes)
    if min_bytes is not None or max_bytes is not None:
        raise InputError("min_bytes= and max_bytes= bound the sizes searched with p=; with n= the scan is "
                         "over p: use p_min= and p_max=")
    return crossover_in_p(collective, a, b, n=n, link=link, extra=extra, p_min=p_min, p_max=p_max)
