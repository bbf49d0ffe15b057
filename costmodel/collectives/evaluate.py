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

from costmodel.collectives._math import EXACT, TEXT, Term
from costmodel.collectives._record import Algorithm, Coefficient
from costmodel.collectives._registry import algorithms as registered
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import record, resolve
from costmodel.collectives.result import AlgorithmCost, CostTable, LowerBound
from costmodel.errors import ConstraintError, InputError
from costmodel.params import Link, LinkParams, link_at
from costmodel.units import format_size, parse_size
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
    "linear_terms",
    "price",
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
        α, β and γ; a piecewise link prices n with the segment that covers it
        (its notes join the result's).
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
    priced, notes = link_at(link, size, p=p)
    result = price(collective, algorithm, p=p, n=size, link=priced, extra=extra, whole_bytes=whole_bytes,
                   chunk_note=chunk_note)
    return dataclasses.replace(result, notes=result.notes + notes) if notes else result


def price(
    collective: str,
    algorithm: str | Algorithm,
    *,
    p: int,
    n: Any,
    link: LinkParams,
    extra: Mapping[str, int] | None = None,
    whole_bytes: bool = False,
    chunk_note: bool = True,
) -> AlgorithmCost:
    """:func:`cost` at any size n ≥ 0, for the phases of composite algorithms.

    A phase of a hierarchical all-reduce carries a share of the user's n, which
    may be below one byte; only the user's own size must be at least 1 B.
    """
    spec = find_collective(collective)
    algo = algorithm if isinstance(algorithm, Algorithm) else resolve(spec.name, algorithm)
    check_extra(spec.name, [algo], extra)
    size = parse_size(n)
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


def _cost(algo: Algorithm, p: int, *, n: Fraction, link: LinkParams, given: Mapping[str, int],
          bound_s: Fraction, whole_bytes: bool = False, chunk_note: bool = True,
          at_p: tuple[Algorithm, tuple[str, ...]] | None = None) -> AlgorithmCost:
    """*algo*'s cost at validated values; *at_p* is :func:`applicable`'s answer where already known."""
    _whole(n, whole_bytes)
    algo, notes = applicable(algo, p) if at_p is None else at_p
    params = _tune(algo, p, n, _rates(link), given)
    extra = _values(algo, params)
    units, priced, detail = _chunking(algo, p, n, extra, whole_bytes)
    lat = _coefficient(algo.latency, p, n, extra)
    bw, comp = (_coefficient(f, p, priced, extra) for f in (algo.bandwidth, algo.compute))
    rounds = _coefficient(algo.rounds or algo.latency, p, n, extra)
    for e in algo.extra:
        how = "given" if e.name in given else "the integer that minimises the cost"
        if whole_bytes and e.name not in given:
            how += " in the continuous model"
        notes += (f"{algo.name}: {e.symbol} = {params[e.name]} {e.name} ({e.description}; {how})",)
    if chunk_note:
        notes += _chunk_note(n, [detail] if detail else [], whole_bytes)
    return AlgorithmCost(
        algorithm=algo.name,
        latency_s=lat * link.alpha_s,
        bandwidth_s=bw * link.beta_s_per_byte,
        compute_s=comp * link.gamma_s_per_byte,
        rounds=int(rounds),
        bytes_sent_per_rank=_coefficient(algo.bytes_sent, p, priced, extra),
        chunks=int(units),
        chunk_bytes=priced / units,
        formula=text_formula(algo),
        bound_s=bound_s,
        parameters=params,
        notes=notes,
    )


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
    chosen, known, skipped = _choose(spec.name, algorithms, p=p)
    given = check_extra(spec.name, chosen, extra)
    link, link_notes = link_at(link, size, p=p)
    lower = _bound(spec.name, p, size, link)
    at_p = [known.get(a.name) or applicable(a, p) for a in chosen]
    results = sorted(
        (_cost(a, p, n=size, link=link, given=given, bound_s=lower.time_s, whole_bytes=whole_bytes,
               chunk_note=False, at_p=at) for a, at in zip(chosen, at_p, strict=True)),
        key=lambda r: (r.time_s, r.algorithm),
    )
    details = [d for a, _ in at_p if (d := _detail(a, p, size, results)) is not None]
    skipped += _chunk_note(size, details, whole_bytes) + link_notes
    return CostTable(
        collective=spec.name, p=p, n_bytes=size, link=link, meaning_of_n=spec.meaning_of_n,
        results=tuple(results), bound=lower, notes=skipped, whole_bytes=whole_bytes,
    )


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
    priced, notes = link_at(link, size, p=p)
    result = _bound(collective, check_ranks(p), size, priced)
    return dataclasses.replace(result, notes=result.notes + notes) if notes else result


def _bound(collective: str, p: int, size: Fraction, link: LinkParams) -> LowerBound:
    spec = find_collective(collective)
    b = spec.bound
    lat, bw, comp = (_coefficient(f, p, size, {}) for f in (b.latency, b.bandwidth, b.compute))
    text = bound_text(spec.name)
    return LowerBound(
        collective=spec.name, p=p, n_bytes=size, link=link,
        latency_s=lat * link.alpha_s, bandwidth_s=bw * link.beta_s_per_byte,
        compute_s=comp * link.gamma_s_per_byte, formula=str(text),
        meaning_of_n=spec.meaning_of_n, source=b.source, notes=b.notes,
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


def time_at(algo: Algorithm, p: int, n: Any, link: LinkParams,
            extra: Mapping[str, int] | None = None, *, exact: bool = True) -> Any:
    """The time of *algo* at (p, n), tuning free extra parameters.

    Exact (a Fraction) by default; with ``exact=False`` *n* and the link are
    floats, for scans that only need signs and are refined exactly afterwards.
    """
    algo, _ = applicable(algo, p)
    n = Fraction(n) if exact else float(n)
    rates = _rates(link, exact=exact)
    params = _tune(algo, p, n, rates, dict(extra or {}))
    return _time(algo, p, n, rates, _values(algo, params))


def tuned(algo: Algorithm, p: int, n: Any, link: LinkParams,
          extra: Mapping[str, int] | None = None) -> dict[str, int]:
    """The extra parameters *algo* runs with at (p, n): given ones, else the best integers."""
    algo, _ = applicable(algo, p)
    return _tune(algo, p, Fraction(n), _rates(link), dict(extra or {}))

