"""Where one algorithm overtakes another: crossovers in n and in p, best-algorithm ranges.

Two costs that are linear in n, T = A + B·n, cross at n* = (A_b - A_a)/(B_a - B_b):
solved exactly, in rationals.  Costs with a tuned integer parameter (the
pipelined chain's segments, the double binary tree's blocks) are piecewise
linear in n; their crossovers are bracketed by a scan and bisection, then
solved exactly on the linear piece (``exact=False`` only when the tuned
parameter changes inside the final bracket).

References
----------
.. [1] Seed text "Distributed SGD and All-Reduce", section 9 ("Find a
   Crossover"): recursive doubling 4α + 4nβ against Rabenseifner 8α + 1.875nβ at
   p = 16 cross at n = 4α/(2.125β).
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

from costmodel._json import real
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import (
    applicable,
    check_extra,
    check_ranks,
    check_size,
    choose,
    linear_terms,
    time_at,
    tuned,
)
from costmodel.errors import InputError
from costmodel.params import LinkParams
from costmodel.units import parse_size

__all__ = [
    "BestRange",
    "BestRanges",
    "Crossover",
    "CrossoverInP",
    "CrossoverPoint",
    "PRange",
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
    """A message size where two costs are equal."""

    n_bytes: Fraction
    time_s: Fraction
    exact: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "n_bytes": real(self.n_bytes),
            "n_bytes_exact": f"{self.n_bytes.numerator}/{self.n_bytes.denominator}" if self.exact else None,
            "time_s": real(self.time_s),
            "exact": self.exact,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Crossover:
    """The crossovers in n of two algorithms at fixed p and link.

    ``relation`` is ``"crossover"`` (see ``crossovers``), ``"none"`` (one is
    never more expensive for n ≥ 0) or ``"identical"`` (equal for every n);
    ``reason`` says why in words.  ``below`` is the cheaper algorithm for sizes
    under the first crossover, ``above`` for sizes past the last one (``None``
    when they tie).
    """

    collective: str
    a: str
    b: str
    p: int
    link: LinkParams
    meaning_of_n: str
    crossovers: tuple[CrossoverPoint, ...]
    below: str | None
    above: str | None
    relation: str
    reason: str
    symbolic: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "collective": self.collective,
            "a": self.a,
            "b": self.b,
            "p": self.p,
            "meaning_of_n": self.meaning_of_n,
            **self.link.result_fields(),
            "crossovers": [c.to_dict() for c in self.crossovers],
            "below": self.below,
            "above": self.above,
            "relation": self.relation,
            "reason": self.reason,
            "symbolic": self.symbolic,
            "notes": list(self.notes),
        }


def _cheaper(a: str, b: str, ta: Fraction, tb: Fraction) -> str | None:
    return a if ta < tb else b if tb < ta else None


def crossover(
    collective: str,
    a: str,
    b: str,
    *,
    p: int,
    link: LinkParams,
    extra: Mapping[str, int] | None = None,
    symbolic: bool = False,
    max_bytes: Any = DEFAULT_MAX_BYTES,
) -> Crossover:
    """The message sizes where algorithms *a* and *b* cost the same.

    Parameters
    ----------
    collective, a, b : str
        Names or aliases.
    p : int
        Ranks (non-powers of two use each algorithm's adaptation).
    link : LinkParams
    extra : mapping, optional
        Fixed extra parameters; free ones are tuned at every n.
    symbolic : bool
        Also solve the crossover in α, β, γ with sympy (slower to import).
    max_bytes : size
        Upper end of the scan for costs that are not linear in n.

    Examples
    --------
    >>> link = LinkParams.from_options(alpha="5us", beta="0.08ns/B")
    >>> x = crossover("allreduce", "rd", "rabenseifner", p=16, link=link)
    >>> x.crossovers[0].n_bytes, x.below, x.above
    (Fraction(2000000, 17), 'recursive-doubling', 'rabenseifner')
    """
    spec = find_collective(collective)
    p = check_ranks(p)
    ra, rb = resolve(spec.name, a), resolve(spec.name, b)
    check_extra(spec.name, [ra, rb], extra)
    if ra is rb:
        raise InputError(f"{a!r} and {b!r} are the same algorithm ({ra.name}); compare two different ones")
    (ea, notes_a), (eb, notes_b) = applicable(ra, p), applicable(rb, p)
    la, lb = linear_terms(ra, p, link, extra), linear_terms(rb, p, link, extra)
    if la is not None and lb is not None:
        points, below, above, relation, reason = _linear(ea.name, eb.name, la, lb)
    else:
        points, below, above, relation, reason = _scanned(ra, rb, p=p, link=link, extra=extra,
                                                          top=parse_size(max_bytes))
    text = _symbolic(ea, eb, p) if symbolic else None
    return Crossover(
        collective=spec.name, a=ea.name, b=eb.name, p=p, link=link, meaning_of_n=spec.meaning_of_n,
        crossovers=points, below=below, above=above, relation=relation, reason=reason,
        symbolic=text, notes=notes_a + notes_b,
    )


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


def _sign(ra: Algorithm, rb: Algorithm, n: float, *, p: int, link: LinkParams,
          extra: Mapping[str, int] | None) -> int:
    """The sign of T_a(n) - T_b(n): in floats, or exactly when floats cannot tell."""
    ta = time_at(ra, p, n, link, extra, exact=False)
    tb = time_at(rb, p, n, link, extra, exact=False)
    if abs(ta - tb) <= 1e-9 * max(abs(ta), abs(tb)):
        exact = time_at(ra, p, n, link, extra) - time_at(rb, p, n, link, extra)
        return (exact > 0) - (exact < 0)
    return (ta > tb) - (ta < tb)


def _bisect(ra: Algorithm, rb: Algorithm, lo: float, hi: float, *, p: int, link: LinkParams,
            extra: Mapping[str, int] | None) -> CrossoverPoint:
    """The crossover of *ra* and *rb* bracketed by [lo, hi], solved exactly where possible."""
    start = _sign(ra, rb, lo, p=p, link=link, extra=extra)
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if _sign(ra, rb, mid, p=p, link=link, extra=extra) == start else (lo, mid)
    return _refine(ra, rb, p=p, link=link, extra=extra, lo=Fraction(lo), hi=Fraction(hi))


def _scanned(ra: Algorithm, rb: Algorithm, *, p: int, link: LinkParams,
             extra: Mapping[str, int] | None, top: Fraction) -> tuple[
        tuple[CrossoverPoint, ...], str | None, str | None, str, str]:
    """Crossovers of costs with a tuned parameter: scan, bisect, then solve exactly.

    The scan runs in floats; a difference too small to trust in floats is
    recomputed exactly.  Between two scan points where the tuned parameters
    do not change, both costs are lines in n, so the bracketed crossover is
    solved exactly; otherwise it is reported to float precision.
    """
    a, b = applicable(ra, p)[0].name, applicable(rb, p)[0].name
    signs = [(n, _sign(ra, rb, n, p=p, link=link, extra=extra)) for n in _grid(0.0, float(top))]
    nonzero = [(n, sg) for n, sg in signs if sg]
    if not nonzero:
        return (), None, None, "identical", f"{a} and {b} cost the same at every size scanned"
    points: list[CrossoverPoint] = []
    for (n0, s0), (n1, s1) in pairwise(nonzero):
        if s0 == s1:
            continue
        ties = [n for n, sg in signs if n0 < n < n1 and sg == 0]
        if ties:
            tie = Fraction(ties[0])
            points.append(CrossoverPoint(n_bytes=tie, time_s=time_at(ra, p, tie, link, extra), exact=True))
        else:
            points.append(_bisect(ra, rb, n0, n1, p=p, link=link, extra=extra))
    first, last = nonzero[0][1], nonzero[-1][1]
    below, above = (a if first < 0 else b), (a if last < 0 else b)
    if not points:
        reason = f"{below} is cheaper at every size scanned (0 B to {float(top):.6g} B)"
        return (), below, below, "none", reason
    return tuple(points), below, above, "crossover", (
        f"found by scanning 0 B to {float(top):.6g} B: a tuned parameter makes the cost "
        "piecewise linear in n")


def _refine(ra: Algorithm, rb: Algorithm, *, p: int, link: LinkParams, extra: Mapping[str, int] | None,
            lo: Fraction, hi: Fraction) -> CrossoverPoint:
    """The exact crossover inside [lo, hi] when the tuned parameters hold still there."""
    fixed_a, fixed_b = tuned(ra, p, lo, link, extra), tuned(rb, p, lo, link, extra)
    if fixed_a == tuned(ra, p, hi, link, extra) and fixed_b == tuned(rb, p, hi, link, extra):
        la = linear_terms(ra, p, link, {**(extra or {}), **fixed_a})
        lb = linear_terms(rb, p, link, {**(extra or {}), **fixed_b})
        if la is not None and lb is not None and la[1] != lb[1]:
            n_star = (lb[0] - la[0]) / (la[1] - lb[1])
            if lo <= n_star <= hi:
                return CrossoverPoint(n_bytes=n_star, time_s=la[0] + la[1] * n_star, exact=True)
    return CrossoverPoint(n_bytes=hi, time_s=time_at(ra, p, hi, link, extra), exact=False)


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
class PRange:
    """A range of rank counts over which one algorithm is cheaper (``None``: they tie)."""

    from_p: int
    to_p: int
    cheaper: str | None

    def to_dict(self) -> dict[str, object]:
        return {"from_p": self.from_p, "to_p": self.to_p, "cheaper": self.cheaper}


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossoverInP:
    """Which of two algorithms is cheaper at each p in a range, for a fixed n."""

    collective: str
    a: str
    b: str
    n_bytes: Fraction
    link: LinkParams
    meaning_of_n: str
    ranges: tuple[PRange, ...]

    @property
    def crossovers(self) -> tuple[int, ...]:
        """The first p of every range after the first: where the cheaper one changes."""
        return tuple(r.from_p for r in self.ranges[1:])

    def to_dict(self) -> dict[str, object]:
        return {
            "collective": self.collective,
            "a": self.a,
            "b": self.b,
            "n_bytes": real(self.n_bytes),
            "meaning_of_n": self.meaning_of_n,
            **self.link.result_fields(),
            "crossovers_p": list(self.crossovers),
            "ranges": [r.to_dict() for r in self.ranges],
        }


def crossover_in_p(
    collective: str,
    a: str,
    b: str,
    *,
    n: Any,
    link: LinkParams,
    p_min: int = 2,
    p_max: int = 1024,
    extra: Mapping[str, int] | None = None,
) -> CrossoverInP:
    """Ranges of p (every integer from *p_min* to *p_max*) where *a* or *b* is cheaper.

    Non-power-of-two p use the adaptations, so there may be several crossovers.

    Examples
    --------
    >>> link = LinkParams.from_options(alpha="5us", beta="0.08ns/B")
    >>> x = crossover_in_p("allreduce", "ring", "rab", n="64MiB", link=link, p_max=64)
    >>> [(r.from_p, r.to_p, r.cheaper) for r in x.ranges][:3]
    [(2, 2, None), (3, 3, 'ring'), (4, 4, 'rabenseifner')]
    """
    spec = find_collective(collective)
    lo, hi = check_ranks(p_min), check_ranks(p_max)
    if hi < lo:
        raise InputError(f"p_max={hi} is below p_min={lo}")
    if hi - lo > 100_000:
        raise InputError(f"{hi - lo + 1} rank counts are too many to scan; narrow the range to 100000")
    ra, rb = resolve(spec.name, a), resolve(spec.name, b)
    size = parse_size(n)
    ranges: list[PRange] = []
    for p in range(lo, hi + 1):
        ta, tb = time_at(ra, p, size, link, extra), time_at(rb, p, size, link, extra)
        cheaper = _cheaper(ra.name, rb.name, ta, tb)
        if ranges and ranges[-1].cheaper == cheaper:
            ranges[-1] = PRange(from_p=ranges[-1].from_p, to_p=p, cheaper=cheaper)
        else:
            ranges.append(PRange(from_p=p, to_p=p, cheaper=cheaper))
    return CrossoverInP(collective=spec.name, a=ra.name, b=rb.name, n_bytes=size, link=link,
                        meaning_of_n=spec.meaning_of_n, ranges=tuple(ranges))


@dataclass(frozen=True, slots=True, kw_only=True)
class BestRange:
    """A size interval over which one algorithm is cheapest (``tied`` lists equals)."""

    algorithm: str
    from_bytes: Fraction
    to_bytes: Fraction
    tied: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "from_bytes": real(self.from_bytes),
                "to_bytes": real(self.to_bytes), "tied": list(self.tied)}


@dataclass(frozen=True, slots=True, kw_only=True)
class BestRanges:
    """The cheapest algorithm of a collective over a size interval."""

    collective: str
    p: int
    link: LinkParams
    meaning_of_n: str
    ranges: tuple[BestRange, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "collective": self.collective,
            "p": self.p,
            "meaning_of_n": self.meaning_of_n,
            **self.link.result_fields(),
            "ranges": [r.to_dict() for r in self.ranges],
            "notes": list(self.notes),
        }


def best(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    p: int,
    link: LinkParams,
    min_bytes: Any = 1,
    max_bytes: Any = DEFAULT_MAX_BYTES,
    extra: Mapping[str, int] | None = None,
) -> BestRanges:
    """The cheapest algorithm for every message size in [*min_bytes*, *max_bytes*].

    The interval is cut at every exact crossover of two costs linear in n; when
    a cost has a tuned parameter, a scan of the cheapest algorithm adds the
    crossovers where it changes.  Each piece is won by the algorithm cheapest
    at its midpoint.

    Examples
    --------
    >>> link = LinkParams.from_options(alpha="5us", beta="0.08ns/B")
    >>> r = best("allreduce", ["ring", "rd", "rab"], p=16, link=link, max_bytes="64MiB")
    >>> [(x.algorithm, x.to_bytes) for x in r.ranges]
    [('recursive-doubling', Fraction(2000000, 17)), ('rabenseifner', Fraction(67108864, 1))]
    """
    spec = find_collective(collective)
    p = check_ranks(p)
    lo, hi = check_size(min_bytes), parse_size(max_bytes)
    if hi <= lo:
        raise InputError(f"the size range is empty: --min {float(lo):g} B is not below --max {float(hi):g} B")
    chosen, skipped = choose(spec.name, algorithms, p=p)
    check_extra(spec.name, chosen, extra)
    if len(chosen) < 2:
        raise InputError("best needs at least two algorithms to compare")
    cuts = {lo, hi}
    lines = {r: linear_terms(r, p, link, extra) for r in chosen}
    for i, ra in enumerate(chosen):
        for rb in chosen[i + 1:]:
            la, lb = lines[ra], lines[rb]
            if la is not None and lb is not None:
                points = _linear(ra.name, rb.name, la, lb)[0]
                cuts.update(c.n_bytes for c in points if lo < c.n_bytes < hi)
    straight = [line for line in lines.values() if line is not None]
    contenders = [r for r, line in lines.items() if line is None
                  and _may_win(r, straight, sorted(cuts), p=p, link=link, extra=extra)]
    if contenders:
        scanned = [r for r in chosen if lines[r] is not None or r in contenders]
        cuts.update(_envelope_cuts(scanned, sorted(cuts), p=p, link=link, extra=extra))
    edges = sorted(cuts)
    ranges: list[BestRange] = []
    notes = list(skipped)
    for left, right in pairwise(edges):
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
    return BestRanges(collective=spec.name, p=p, link=link, meaning_of_n=spec.meaning_of_n,
                      ranges=tuple(ranges), notes=tuple(notes))


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


def _envelope_cuts(chosen: list[Algorithm], cuts: list[Fraction], *, p: int, link: LinkParams,
                   extra: Mapping[str, int] | None) -> set[Fraction]:
    """Where the cheapest algorithm changes, found by a scan of all of them at once."""
    grid = sorted({float(c) for c in cuts} | set(_grid(float(cuts[0]), float(cuts[-1]))))
    lines = {r: linear_terms(r, p, link, extra) for r in chosen}
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
            point = _bisect(w0, w1, n0, n1, p=p, link=link, extra=extra).n_bytes
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
    link: LinkParams,
    extra: Mapping[str, int] | None = None,
    symbolic: bool = False,
    p_min: int = 2,
    p_max: int = 1024,
) -> Crossover | CrossoverInP:
    """:func:`crossover` in n when *p* is given, :func:`crossover_in_p` when *n* is.

    Raises
    ------
    InputError
        Unless exactly one of *p* and *n* is given.
    """
    if (p is None) == (n is None):
        raise InputError("give either -p (to solve for the size n*) or -n (to scan p), not both or neither")
    if p is not None:
        return crossover(collective, a, b, p=p, link=link, extra=extra, symbolic=symbolic)
    return crossover_in_p(collective, a, b, n=n, link=link, extra=extra, p_min=p_min, p_max=p_max)
