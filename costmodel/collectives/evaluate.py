"""Exact evaluation of the registry: the cost of an algorithm at one point.

Everything here is exact: p is an integer, n and the link parameters are
:class:`~fractions.Fraction`, and so are the results.  Sympy is not imported.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005.
.. [2] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007 (lower bounds).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any

from costmodel.collectives import piecewise
from costmodel.collectives._math import EXACT, TEXT, Term
from costmodel.collectives._record import Algorithm, Coefficient
from costmodel.collectives._registry import algorithms as registered
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import record, resolve
from costmodel.collectives.result import AlgorithmCost, CostTable, LowerBound, PricedMessage
from costmodel.errors import ConstraintError, InputError
from costmodel.params import Link, LinkParams, PiecewiseLink, link_notes
from costmodel.units import format_size, format_time, parse_size
from costmodel.validate import positive, whole

__all__ = [
    "applicable",
    "bound",
    "bound_text",
    "check_extra",
    "check_given",
    "check_ranks",
    "check_size",
    "choose",
    "coefficient_text",
    "compare",
    "cost",
    "cost_breaks",
    "line_from",
    "linear_terms",
    "placed",
    "price",
    "terms_at",
    "text_formula",
    "time_at",
    "tuned",
]


def check_ranks(p: Any) -> int:
    """Validate a rank count: an integer ≥ 2.

    >>> check_ranks(16)
    16
    """
    return whole(p, "p", low=2, high=2**40, hint="give the number of ranks, e.g. p=16",
                 small="a collective needs at least 2 ranks", large="costmodel models at most 2^40 ranks")


def check_size(n: Any) -> Fraction:
    """Validate a message size given by a user: at least one byte.

    The model is continuous in n, but a message below one byte (or of none) is
    no message: ``cost``, ``compare``, ``bound`` and ``schedule`` refuse it.

    >>> check_size("1KiB")
    Fraction(1024, 1)
    >>> check_size("0.5B")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: n = 0.5 B is too small: a message size must be at least 1 B
    """
    size = parse_size(n)
    if size < 1:
        raise InputError(f"n = {format_size(size)} is too small: a message size must be at least 1 B")
    return size


def applicable(algo: Algorithm, p: int) -> tuple[Algorithm, tuple[str, ...]]:
    """The record that runs at *p*: *algo* itself, or the adaptation its constraints name.

    An adaptation asked for where the record it adapts holds (``-folded`` at a
    power of two) is itself, with a note: its fold steps vanish there, so it
    costs exactly as that record.

    Raises
    ------
    ConstraintError
        When a constraint fails and names no adaptation.
    """
    if algo.adapts:
        parent = record(algo.collective, algo.adapts)
        if all(c.holds(p) for c in parent.constraints):
            needs = " and ".join(c.name for c in parent.constraints)
            return algo, (f"{algo.name}: p={p} meets {needs}, so nothing folds and it costs exactly as "
                          f"{parent.name}",)
    for constraint in algo.constraints:
        if constraint.holds(p):
            continue
        if constraint.otherwise is None:
            raise ConstraintError(
                f"algorithm {algo.name!r} for {algo.collective} needs {constraint.name}: "
                f"{constraint.failure(p)}",
                algorithm=algo.name, constraint=constraint.name, value=p,
            )
        adapted = record(algo.collective, constraint.otherwise)
        note = (f"{algo.name}: {constraint.failure(p)}; costed as {adapted.name} "
                f"(formula('{algo.collective}', '{algo.name}'))")
        return adapted, (note,)
    return algo, ()


@cache
def text_formula(algo: Algorithm) -> str:
    """The cost of *algo* as one readable line, from the same definition as the numbers.

    >>> from costmodel.collectives._registry import resolve
    >>> text_formula(resolve("allreduce", "ring"))
    '2(p − 1)·α + 2(p − 1)/p·n·β + (p − 1)/p·n·γ'
    """
    extra = {e.symbol: Term(e.symbol) for e in algo.extra}
    return _time_text(algo.latency, algo.bandwidth, algo.compute, **extra)


def _time_text(latency: Coefficient, bandwidth: Coefficient, compute: Coefficient, **extra: Any) -> str:
    p, n = Term("p"), Term("n")
    terms = (Term.lift(f(p, n, TEXT, **extra)) * Term(s) for f, s in
             ((latency, "α"), (bandwidth, "β"), (compute, "γ")))
    return str(sum(terms, Term.lift(0)))


def coefficient_text(fn: Coefficient, algo: Algorithm) -> str:
    """One coefficient of *algo* (rounds, bytes sent, ...) as readable text.

    >>> from costmodel.collectives._registry import resolve
    >>> coefficient_text(resolve("allreduce", "ring").rounds, resolve("allreduce", "ring"))
    '2(p − 1)'
    """
    extra = {e.symbol: Term(e.symbol) for e in algo.extra}
    return str(Term.lift(fn(Term("p"), Term("n"), TEXT, **extra)))


def _values(algo: Algorithm, params: Mapping[str, int]) -> dict[str, Any]:
    return {e.symbol: Fraction(params[e.name]) for e in algo.extra}


Rates = tuple[Any, Any, Any]
"""(α, β, γ): Fractions for exact answers, floats for fast scans."""


@lru_cache(maxsize=64)
def _rates(link: LinkParams, *, exact: bool = True) -> Rates:
    values = (link.alpha_s, link.beta_s_per_byte, link.gamma_s_per_byte)
    return values if exact else (float(values[0]), float(values[1]), float(values[2]))


def _time(algo: Algorithm, p: int, n: Any, rates: Rates, extra: Mapping[str, Any]) -> Any:
    exact = isinstance(n, Fraction)
    lat, bw, comp = algo.coefficients(Fraction(p) if exact else p, n, EXACT, **extra)
    return lat * rates[0] + bw * rates[1] + comp * rates[2]


def _best_integer(at: Any, upper: int) -> int:
    """The smallest integer k in [1, *upper*] minimising ``at(k) = a + b·k + c/k``.

    Three evaluations give a, b and c; the integer optimum is next to √(c/b).
    Every tuned parameter has this form (a registry test checks it).
    """
    t1, t2, t4 = at(1), at(2), at(4)
    c = 4 * ((t4 - t2) - 2 * (t2 - t1)) / 3
    b = (t2 - t1) + c / 2
    if c <= 0:
        guess = 1.0
    elif b <= 0:
        guess = float(upper)
    else:
        guess = math.sqrt(float(c) / float(b))
    near = range(max(1, math.floor(min(guess, upper)) - 1), min(upper, math.ceil(guess) + 1) + 1)
    return min({1, upper, *near}, key=lambda k: (at(k), k))


def _tune_on(algo: Algorithm, p: int, n: Any, link: Link, given: Mapping[str, int], *,
             below: bool = False) -> dict[str, int]:
    """:func:`_tune` on either kind of link (a piecewise one prices exactly, message by message)."""
    if isinstance(link, PiecewiseLink) and link.by_message:
        size = Fraction(n) if isinstance(n, (int, Fraction)) else n
        return piecewise.tune(algo, p, size, link, check_given(algo, p, n, given), below=below)
    if isinstance(link, PiecewiseLink):
        raise InputError(f"{link.source}: its segments are collective sizes; it prices sizes one at a time")
    return _tune(algo, p, n, _rates(link, exact=isinstance(n, Fraction)), given)


def _tune(algo: Algorithm, p: int, n: Any, rates: Rates, given: Mapping[str, int]) -> dict[str, int]:
    """The extra parameters: those given (validated), the rest the best integers."""
    chosen: dict[str, int] = check_given(algo, p, n, given)
    for e in algo.extra:
        if e.name in given:
            continue
        upper = e.upper(p, n)
        number = Fraction if isinstance(n, Fraction) else int

        def at(k: int, e: Any = e, number: Any = number) -> Any:
            trial = {x.symbol: number(chosen.get(x.name, 1)) for x in algo.extra}
            return _time(algo, p, n, rates, {**trial, e.symbol: number(k)})

        chosen[e.name] = _best_integer(at, upper)
    return chosen


def check_given(algo: Algorithm, p: int, n: Any, given: Mapping[str, int]) -> dict[str, int]:
    """The given values of *algo*'s extra parameters, each a positive integer n allows.

    Raises
    ------
    InputError
        For a value that is not a positive integer, or more segments or blocks
        than n bytes allow (each at least one byte, or two for the two trees).
    """
    chosen: dict[str, int] = {}
    for e in algo.extra:
        if e.name not in given:
            continue
        value = given[e.name]
        positive(value, e.name)
        upper = e.upper(p, n)
        if value > upper:
            raise InputError(f"{e.name}={value} is more than n={n} bytes allows for {algo.name}; "
                             f"use at most {upper}")
        chosen[e.name] = value
    return chosen


def _coefficient(fn: Coefficient, p: int, n: Fraction, extra: Mapping[str, Any]) -> Fraction:
    return Fraction(fn(Fraction(p), n, EXACT, **extra))


def cost(
    collective: str,
    algorithm: str | Algorithm,
    *,
    p: int,
    n: Any,
    link: Link,
    extra: Mapping[str, int] | None = None,
    whole_bytes: bool = False,
    chunk_note: bool = True,
) -> AlgorithmCost:
    """The modelled time of one algorithm, exactly.

    Parameters
    ----------
    collective, algorithm : str
        Names or aliases (``"allreduce"``, ``"rab"``).
    p : int
        Number of ranks, at least 2.
    n : int, Fraction or str
        Message size in bytes, at least 1 (a string may carry a unit:
        ``"64MiB"``); its meaning depends on the collective (see
        ``Collective.meaning_of_n``).
    link : LinkParams or PiecewiseLink
        α, β and γ; a piecewise link prices every message on the critical path
        with the segment that covers the message's size (see
        :mod:`costmodel.collectives.piecewise`; its notes join the result's,
        with one saying which segments priced which messages).
    extra : mapping, optional
        Fixed values of extra parameters (``{"segments": 8}``); the others are
        chosen to minimise the cost.
    whole_bytes : bool
        Price whole-byte chunks: when n (a whole number of bytes) is not a
        multiple of the algorithm's chunk count u, every chunk is priced at
        ⌈n/u⌉ bytes, the largest one a real schedule sends, so the β and γ terms
        (and the bytes sent) are upper bounds; the latency is unchanged.  By
        default the model is the continuous textbook one (chunks of n/u).
    chunk_note : bool
        Note when n does not split evenly into the algorithm's chunks (default); a caller that prices
        modelled sizes, not messages of whole bytes (a training step's buckets), leaves it out.

    Returns
    -------
    AlgorithmCost

    Raises
    ------
    UnknownNameError, ConstraintError, InputError

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> c = cost("allreduce", "rabenseifner", p=16, n="1MiB", link=link)
    >>> c.time_s, c.rounds
    (Fraction(15413, 78125000), 8)
    >>> cost("allreduce", "ring", p=3, n=7, link=link, whole_bytes=True).bytes_sent_per_rank
    Fraction(12, 1)
    """
    size = check_size(n)
    result = price(collective, algorithm, p=p, n=size, link=link, extra=extra, whole_bytes=whole_bytes,
                   chunk_note=chunk_note)
    notes = link_notes(link, p)
    return dataclasses.replace(result, notes=result.notes + notes) if notes else result


def price(
    collective: str,
    algorithm: str | Algorithm,
    *,
    p: int,
    n: Any,
    link: Link,
    extra: Mapping[str, int] | None = None,
    whole_bytes: bool = False,
    chunk_note: bool = True,
) -> AlgorithmCost:
    """:func:`cost` at any size n ≥ 0, for the phases of composite algorithms (without the link's notes).

    A phase of a hierarchical all-reduce carries a share of the user's n, which
    may be below one byte; only the user's own size must be at least 1 B.
    """
    spec = find_collective(collective)
    algo = algorithm if isinstance(algorithm, Algorithm) else resolve(spec.name, algorithm)
    check_extra(spec.name, [algo], extra)
    size = parse_size(n)
    link = placed(link)
    lower = _bound(spec.name, check_ranks(p), size, link)
    return _cost(algo, p, n=size, link=link, given=dict(extra or {}), bound_s=lower.time_s,
                 whole_bytes=whole_bytes, chunk_note=chunk_note)


def _whole(size: Fraction, whole_bytes: bool) -> None:
    if whole_bytes and size.denominator != 1:
        raise InputError(f"n = {format_size(size)} is not a whole number of bytes; whole_bytes=True prices "
                         "whole-byte chunks of a whole-byte message")


def _chunking(algo: Algorithm, p: int, n: Fraction, extra: Mapping[str, Any],
              whole_bytes: bool) -> tuple[Fraction, Fraction, str | None]:
    """(u, the size the β and γ terms are priced at, a note's detail) for n cut into u chunks.

    Continuous model: n itself.  Whole bytes: u·⌈n/u⌉, every chunk priced at the
    largest one a real schedule sends, ⌈n/u⌉ bytes.  The detail names the
    algorithm and its chunks when n (whole) is not a multiple of u.
    """
    units = _coefficient(algo.chunks, p, n, extra)
    if n.denominator != 1 or n % units == 0:
        return units, n, None
    largest = -(-n // units)
    u = coefficient_text(algo.chunks, algo)
    over = u if u.isalpha() or u == "p′" else f"({u})"
    detail = f"{algo.name}: {u} = {units} chunks of up to ⌈n/{over}⌉ = {format_size(largest)}"
    return units, units * largest if whole_bytes else n, detail


def _chunk_note(n: Fraction, details: Sequence[str], whole_bytes: bool) -> tuple[str, ...]:
    """One note on the chunk sizes behind the numbers, for one result or a whole table."""
    if not details:
        return ()
    uneven = f"n = {format_size(n)} does not split evenly into chunks ({'; '.join(details)})"
    if whole_bytes:
        return (f"whole bytes: {uneven}; every chunk is priced at the largest, so the β and γ terms are "
                "upper bounds",)
    return (f"{uneven}: real schedules send such whole-byte chunks, while this continuous model prices "
            "equal fractional ones; whole_bytes=True prices every chunk at the largest",)


def _cost(algo: Algorithm, p: int, *, n: Fraction, link: Link, given: Mapping[str, int],
          bound_s: Fraction, whole_bytes: bool = False, chunk_note: bool = True,
          at_p: tuple[Algorithm, tuple[str, ...]] | None = None) -> AlgorithmCost:
    """*algo*'s cost at validated values; *at_p* is :func:`applicable`'s answer where already known."""
    _whole(n, whole_bytes)
    asked = algo
    algo, notes = applicable(algo, p) if at_p is None else at_p
    if isinstance(link, PiecewiseLink):
        piecewise.check(link, asked, algo)
        if not link.by_message:
            return _cost_by_n(algo, p, n=n, link=link, given=given, bound_s=bound_s, whole_bytes=whole_bytes,
                              chunk_note=chunk_note, notes=notes)
    params = _tune_on(algo, p, n, link, given)
    extra = _values(algo, params)
    units, priced, detail = _chunking(algo, p, n, extra, whole_bytes)
    if isinstance(link, PiecewiseLink):
        latency_s, bandwidth_s, compute_s = piecewise.terms(algo, p, priced, link, extra)
        used = _priced_messages(algo, p, priced, link, extra)
    else:
        lat = _coefficient(algo.latency, p, n, extra)
        bw, comp = (_coefficient(f, p, priced, extra) for f in (algo.bandwidth, algo.compute))
        latency_s, bandwidth_s = lat * link.alpha_s, bw * link.beta_s_per_byte
        compute_s = comp * link.gamma_s_per_byte
        used = ()
    rounds = _coefficient(algo.rounds or algo.latency, p, n, extra)
    for e in algo.extra:
        how = "given" if e.name in given else "the integer that minimises the cost"
        if whole_bytes and e.name not in given:
            how += " in the continuous model"
        notes += (f"{algo.name}: {e.symbol} = {params[e.name]} {e.name} ({e.description}; {how})",)
    if chunk_note:
        notes += _chunk_note(n, [detail] if detail else [], whole_bytes)
    if isinstance(link, PiecewiseLink):
        notes += (_segments_note(algo.name, used),)
        total = latency_s + bandwidth_s + compute_s
        notes += _boundary_note(algo, p, n=n, link=link, given=given, time_s=total, used=used)
    return AlgorithmCost(
        algorithm=algo.name,
        latency_s=latency_s,
        bandwidth_s=bandwidth_s,
        compute_s=compute_s,
        rounds=int(rounds),
        bytes_sent_per_rank=_coefficient(algo.bytes_sent, p, priced, extra),
        chunks=int(units),
        chunk_bytes=priced / units,
        formula=text_formula(algo),
        bound_s=bound_s,
        parameters=params,
        notes=notes,
        messages=used,
    )


def _priced_messages(algo: Algorithm, p: int, n: Fraction, link: PiecewiseLink,
                     extra: Mapping[str, Any]) -> tuple[PricedMessage, ...]:
    """Every message of *algo* at n with the segment that priced it (numbered from 1)."""
    out = []
    for m in piecewise.messages(algo, p, extra):
        piece = link.message(m.share * n, reduce=m.reduce)
        out.append(PricedMessage(count=m.count, message_bytes=m.share * n, reduce=m.reduce,
                                 segment=piece.segment + 1, padded_bytes=piece.padded_bytes))
    return tuple(out)


def _segments_note(name: str, used: Sequence[PricedMessage]) -> str:
    """Which segment priced which messages, in words: "ring: 30 messages of 4.096 kB on segment 2"."""
    groups: dict[tuple[int, Fraction | None], list[PricedMessage]] = {}
    for m in used:
        groups.setdefault((m.segment, m.padded_bytes), []).append(m)
    parts = []
    for (segment, padded), ms in sorted(groups.items(), key=lambda g: min(m.message_bytes for m in g[1])):
        count = sum(m.count for m in ms)
        sizes = sorted({m.message_bytes for m in ms})
        size = " to ".join(_size_text(x) for x in (sizes[0], sizes[-1])[:len(sizes)])
        what = f"{count} message{'s' if count != 1 else ''} of {size}"
        how = (f"on segment {segment}" if padded is None else
               f"priced as {_size_text(padded)} on segment {segment}, which costs less")
        parts.append(f"{what} {how}")
    return f"{name}: " + "; ".join(parts)


def _size_text(n: Fraction) -> str:
    return format_size(n).split(" = ")[0]


def _boundary_note(algo: Algorithm, p: int, *, n: Fraction, link: PiecewiseLink, given: Mapping[str, int],
                   time_s: Fraction, used: Sequence[PricedMessage]) -> tuple[str, ...]:
    """A note when n puts one of *algo*'s messages on the first size of a segment and the cost jumps there:
    the cost just below n and at n."""
    starts = {s.from_bytes: k for k, s in enumerate(link.segments) if k}
    on = sorted({(m.message_bytes, starts[m.message_bytes]) for m in used if m.message_bytes in starts})
    if not on:
        return ()
    below = time_at(algo, p, n, link, given, below=True)
    if below == time_s:
        return ()
    which = ", ".join(f"{_size_text(b)} start segment {k + 1}" for b, k in on)
    return (f"{algo.name}: n = {_size_text(n)} sits on a segment boundary (its messages of {which}): just "
            f"below n it costs {format_time(below)}, at n {format_time(time_s)}",)


def _cost_by_n(algo: Algorithm, p: int, *, n: Fraction, link: PiecewiseLink, given: Mapping[str, int],
               bound_s: Fraction, whole_bytes: bool, chunk_note: bool,
               notes: tuple[str, ...]) -> AlgorithmCost:
    """:func:`_cost` on a link of collective sizes: the segment of n, or a later segment's first size when
    that costs less (a larger collective never costs less)."""
    segment, size = _by_n(algo, p, n, link, given)
    own = _cost(algo, p, n=n, link=link.at(n), given=given, bound_s=bound_s, whole_bytes=whole_bytes,
                chunk_note=chunk_note, at_p=(algo, notes))
    k = link.index(n)
    if size != n:
        larger = _cost(algo, p, n=size, link=link.at(size), given=given, bound_s=bound_s, at_p=(algo, ()))
        own = dataclasses.replace(
            own, latency_s=larger.latency_s, bandwidth_s=larger.bandwidth_s, compute_s=larger.compute_s,
            parameters=larger.parameters,
            notes=(*own.notes, f"{algo.name}: priced as n = {_size_text(size)} on segment {segment + 1}, "
                               f"which costs less than segment {k + 1}'s line at n"))
    notes = (f"{algo.name}: priced by the segment of n: segment {segment + 1}",)
    if k and n == link.segments[k].from_bytes:
        below = time_at(algo, p, n, link, given, below=True)
        if below != own.time_s:
            notes += (f"{algo.name}: n = {_size_text(n)} sits on a segment boundary (segment {k + 1} starts "
                      f"there): just below n it costs {format_time(below)}, at n {format_time(own.time_s)}",)
    return dataclasses.replace(own, notes=own.notes + notes)


def _by_n(algo: Algorithm, p: int, n: Fraction, link: PiecewiseLink, given: Mapping[str, int], *,
          below: bool = False) -> tuple[int, Fraction]:
    """(segment, size): *algo* at n on a link of collective sizes costs what it costs at that size on
    that segment: n on its own segment, or the first size of a later one that costs less."""
    k = link.index(n)
    if below and k and n == link.segments[k].from_bytes:
        k -= 1
    best = (time_at(algo, p, n, link.segments[k].link, given), k, n)
    for j in range(k + 1, len(link.segments)):
        start = link.segments[j].from_bytes
        t = time_at(algo, p, start, link.segments[j].link, given)
        if t < best[0]:
            best = (t, j, start)
    return best[1], best[2]


def compare(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    p: int,
    n: Any,
    link: Link,
    extra: Mapping[str, int] | None = None,
    whole_bytes: bool = False,
) -> CostTable:
    """The modelled time of several algorithms of one collective, fastest first.

    With *algorithms* ``None`` (or empty) every registered algorithm is
    compared; non-power-of-two p uses each algorithm's adaptation.  n must be
    at least 1 B; *whole_bytes* as in :func:`cost`.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> table = compare("allreduce", ["ring", "rd", "rab"], p=16, n="8KiB", link=link)
    >>> table.best
    'recursive-doubling'
    """
    spec = find_collective(collective)
    p = check_ranks(p)
    size = check_size(n)
    _whole(size, whole_bytes)
    link = placed(link)
    chosen, known, skipped = _choose(spec.name, algorithms, p=p)
    if isinstance(link, PiecewiseLink) and not algorithms:
        chosen, refused = _priceable(chosen, known, link)
        skipped += refused
    given = check_extra(spec.name, chosen, extra)
    notes_of_link = link_notes(link, p)
    lower = _bound(spec.name, p, size, link)
    at_p = [known.get(a.name) or applicable(a, p) for a in chosen]
    results = sorted(
        (_cost(a, p, n=size, link=link, given=given, bound_s=lower.time_s, whole_bytes=whole_bytes,
               chunk_note=False, at_p=at) for a, at in zip(chosen, at_p, strict=True)),
        key=lambda r: (r.time_s, r.algorithm),
    )
    details = [d for a, _ in at_p if (d := _detail(a, p, size, results)) is not None]
    skipped += _chunk_note(size, details, whole_bytes) + notes_of_link
    return CostTable(
        collective=spec.name, p=p, n_bytes=size, link=link, meaning_of_n=spec.meaning_of_n,
        results=tuple(results), bound=lower, notes=skipped, whole_bytes=whole_bytes,
    )


def placed(link: Link) -> Link:
    """*link* as the pricing functions use it: a piecewise one with its segments placed by message size
    (:func:`costmodel.collectives.piecewise.placed`), any other as it is."""
    return piecewise.placed(link) if isinstance(link, PiecewiseLink) else link


def _priceable(chosen: list[Algorithm], known: Mapping[str, tuple[Algorithm, tuple[str, ...]]],
               link: PiecewiseLink) -> tuple[list[Algorithm], tuple[str, ...]]:
    """The default list's algorithms *link* can price, and a note naming those left out."""
    kept = [a for a in chosen if link.refuses(a.name, known[a.name][0].name) is None]
    out = [a.name for a in chosen if a not in kept]
    return kept, ((f"{', '.join(out)} left out: {link.only()}",) if out else ())


def _detail(at_p: Algorithm, p: int, n: Fraction, results: Sequence[AlgorithmCost]) -> str | None:
    """The chunk detail of the record *at_p* runs at *p*, among *results* (its parameters as chosen)."""
    (result,) = (r for r in results if r.algorithm == at_p.name)
    return _chunking(at_p, p, n, _values(at_p, result.parameters), False)[2]


def choose(collective: str, names: Iterable[str] | None, *,
           p: int) -> tuple[list[Algorithm], tuple[str, ...]]:
    """The algorithms to compare: those named, or every registered one that can run at *p*.

    A named algorithm that cannot run at *p* raises :class:`ConstraintError`;
    from the default list it is left out with a note saying why.
    """
    chosen, _, skipped = _choose(collective, names, p=p)
    return chosen, skipped


def _choose(collective: str, names: Iterable[str] | None, *, p: int) -> tuple[
        list[Algorithm], dict[str, tuple[Algorithm, tuple[str, ...]]], tuple[str, ...]]:
    """:func:`choose`'s answer, with :func:`applicable`'s for each algorithm it already ran it on."""
    wanted = list(names or [])
    if wanted:
        return list(dict.fromkeys(resolve(collective, a) for a in wanted)), {}, ()
    chosen, known, skipped = [], {}, []
    for algo in registered(collective):
        try:
            known[algo.name] = applicable(algo, p)
        except ConstraintError as exc:
            skipped.append(f"{algo.name} left out: {exc}")
        else:
            chosen.append(algo)
    return chosen, known, tuple(skipped)


def check_extra(collective: str, chosen: Iterable[Algorithm],
                extra: Mapping[str, int] | None) -> dict[str, int]:
    """The extra parameters given, each checked to belong to one of the *chosen* algorithms."""
    given = dict(extra or {})
    known = {e.name for a in chosen for e in a.extra}
    for name in given:
        if name not in known:
            spec = find_collective(collective)
            users = sorted({a.name for a in spec.algorithms for e in a.extra if e.name == name})
            hint = f"it applies to {', '.join(users)}" if users else f"{spec.name} has no such parameter"
            raise InputError(f"{name!r} is not a parameter of the chosen algorithms; {hint}")
    return given


def bound(collective: str, *, p: int, n: Any, link: Link) -> LowerBound:
    """The lower bound of a collective: each of the α, β and γ terms bounded separately (n ≥ 1 B).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> b = bound("allreduce", p=16, n="1MiB", link=link)
    >>> b.latency_s, b.bandwidth_s
    (Fraction(1, 50000), Fraction(1536, 9765625))
    """
    size = check_size(n)
    result = _bound(collective, check_ranks(p), size, placed(link))
    notes = link_notes(link, p)
    return dataclasses.replace(result, notes=result.notes + notes) if notes else result


def _bound(collective: str, p: int, size: Fraction, link: Link) -> LowerBound:
    """The bound on *link*; on a piecewise one with the smallest α, β and γ of its segments, since every
    message costs at least that much whatever its size."""
    spec = find_collective(collective)
    b = spec.bound
    notes = b.notes
    if isinstance(link, PiecewiseLink):
        link = link.lowest()
        notes += ("the link's α, β and γ depend on the message size: each term is bounded with the smallest "
                  "of its segments'",)
    lat, bw, comp = (_coefficient(f, p, size, {}) for f in (b.latency, b.bandwidth, b.compute))
    text = bound_text(spec.name)
    return LowerBound(
        collective=spec.name, p=p, n_bytes=size, link=link,
        latency_s=lat * link.alpha_s, bandwidth_s=bw * link.beta_s_per_byte,
        compute_s=comp * link.gamma_s_per_byte, formula=str(text),
        meaning_of_n=spec.meaning_of_n, source=b.source, notes=notes,
    )


@cache
def bound_text(collective: str) -> str:
    """The lower bound of *collective* as one readable line, as :func:`text_formula` writes a record.

    >>> bound_text("allgather")
    '⌈log₂p⌉·α + (p − 1)/p·n·β'
    """
    b = find_collective(collective).bound
    return _time_text(b.latency, b.bandwidth, b.compute)


def linear_terms(algo: Algorithm, p: int, link: LinkParams,
                 extra: Mapping[str, int] | None = None) -> tuple[Fraction, Fraction] | None:
    """(A, B) with time = A + B·n for every n, or ``None`` if the cost is not linear in n.

    Records without free extra parameters are linear in n (their latency does
    not depend on n, their β and γ coefficients are proportional to it).
    """
    algo, _ = applicable(algo, p)
    given = dict(extra or {})
    if any(e.name not in given for e in algo.extra):
        return None
    values = {e.symbol: Fraction(given[e.name]) for e in algo.extra}
    a = _time(algo, p, Fraction(0), _rates(link), values)
    return a, _time(algo, p, Fraction(1), _rates(link), values) - a


def time_at(algo: Algorithm, p: int, n: Any, link: Link,
            extra: Mapping[str, int] | None = None, *, exact: bool = True, below: bool = False) -> Any:
    """The time of *algo* at (p, n), tuning free extra parameters.

    Exact (a Fraction) by default; with ``exact=False`` *n* and the link are
    floats, for scans that only need signs and are refined exactly afterwards
    (a piecewise link is priced exactly, then rounded).  *below* (piecewise links
    only) gives the limit of the time as the size rises to *n*: where the cost
    jumps at n, its value just below.
    """
    algo, link = _applied(algo, p, link)
    given = dict(extra or {})
    if isinstance(link, PiecewiseLink):
        size = Fraction(n)
        if not link.by_message:
            segment, at = _by_n(algo, p, size, link, given, below=below)
            return time_at(algo, p, at, link.segments[segment].link, given, exact=exact)
        if not exact:
            params = _tune_on(algo, p, float(n), link, given, below=below)
            return piecewise.time_float(algo, p, float(n), link, _values(algo, params), below=below)
        params = _tune_on(algo, p, size, link, given, below=below)
        return sum(piecewise.terms(algo, p, size, link, _values(algo, params), below=below), Fraction(0))
    n = Fraction(n) if exact else float(n)
    rates = _rates(link, exact=exact)
    params = _tune(algo, p, n, rates, given)
    return _time(algo, p, n, rates, _values(algo, params))


def _applied(algo: Algorithm, p: int, link: Link) -> tuple[Algorithm, Link]:
    """The algorithm that runs at *p* (:func:`applicable`) and the link, a piecewise one placed by message
    size and checked to price that algorithm (:func:`piecewise.placed`, :func:`piecewise.check`)."""
    ran, _ = applicable(algo, p)
    if isinstance(link, PiecewiseLink):
        link = piecewise.placed(link)
        piecewise.check(link, algo, ran)
    return ran, link


def terms_at(algo: Algorithm, p: int, n: Fraction, link: Link,
             extra: Mapping[str, int] | None = None) -> tuple[Fraction, Fraction, Fraction]:
    """(latency, bandwidth, compute) of *algo* at (p, n), exactly, tuning free extra parameters."""
    algo, link = _applied(algo, p, link)
    given = dict(extra or {})
    if isinstance(link, PiecewiseLink):
        if not link.by_message:
            segment, size = _by_n(algo, p, n, link, given)
            return terms_at(algo, p, size, link.segments[segment].link, given)
        return piecewise.terms(algo, p, n, link, _values(algo, _tune_on(algo, p, n, link, given)))
    values = _values(algo, _tune(algo, p, n, _rates(link), given))
    lat, bw, comp = (_coefficient(f, p, n, values) for f in (algo.latency, algo.bandwidth, algo.compute))
    return lat * link.alpha_s, bw * link.beta_s_per_byte, comp * link.gamma_s_per_byte


def tuned(algo: Algorithm, p: int, n: Any, link: Link,
          extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """The extra parameters *algo* runs with at (p, n): given ones, else the best integers."""
    algo, _ = applicable(algo, p)
    if isinstance(link, PiecewiseLink):
        return _tune_on(algo, p, Fraction(n), piecewise.placed(link), dict(extra or {}))
    return _tune(algo, p, Fraction(n), _rates(link), dict(extra or {}))


def line_from(algo: Algorithm, p: int, n: Any, link: Link,
              extra: Mapping[str, int] | None = None) -> tuple[Fraction, Fraction]:
    """(A, B): the time is A + B·x for x from *n* up to the next of :func:`cost_breaks` (on one link, for
    every x).  Every extra parameter must be given.

    Raises
    ------
    InputError
        When a free parameter is not given (its cost is not one line), or the link's segments are collective
        sizes (which price one algorithm only, size by size).
    """
    asked = algo
    algo, _ = applicable(algo, p)
    given = dict(extra or {})
    missing = [e.name for e in algo.extra if e.name not in given]
    if missing:
        raise InputError(f"{algo.name}: its cost is one line in n only for fixed {', '.join(missing)}")
    if not isinstance(link, PiecewiseLink):
        terms = linear_terms(algo, p, link, given)
        assert terms is not None  # every parameter is given
        return terms
    link = piecewise.placed(link)
    piecewise.check(link, asked, algo)
    if not link.by_message:
        raise InputError(f"{link.source}: its segments are collective sizes of one algorithm; it prices "
                         "sizes one at a time")
    return piecewise.line(algo, p, Fraction(n), link, _values(algo, given))


def cost_breaks(algo: Algorithm, p: int, *, link: Link, extra: Mapping[str, int] | None, lo: Fraction,
                hi: Fraction | None) -> list[Fraction]:
    """The sizes in (*lo*, *hi*) where *algo*'s cost (every extra given) may change line or jump: none on
    one link; on a piecewise one, where one of its messages reaches a new piece of the link's prices."""
    if not isinstance(link, PiecewiseLink):
        return []
    algo, _ = applicable(algo, p)
    link = piecewise.placed(link)
    if not link.by_message:
        return []
    return piecewise.breaks(algo, p, link=link, values=_values(algo, dict(extra or {})), lo=lo, hi=hi)
