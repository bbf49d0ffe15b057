"""An algorithm's schedule, step by step, checked against its formula.

:func:`schedule_report` builds the explicit schedule of a registry record at
one p, traces who holds which partial result after each step (for display),
and with ``verify=True`` runs it on random data and compares the simulator's
rounds, busiest-rank bytes and time with the formula's.

References
----------
.. [1] P. Patarasuk, X. Yuan, JPDC 2009 (the ring); docs/teaching.md (the
   mistake of adding chunks again during the all-gather).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from costmodel._json import real, to_json_dict
from costmodel.collectives import piecewise
from costmodel.collectives._math import EXACT
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import (
    applicable,
    check_extra,
    check_given,
    check_ranks,
    check_size,
    cost,
    placed,
    tuned,
)
from costmodel.collectives.hierarchical import is_hierarchical
from costmodel.errors import InputError
from costmodel.params import Link, LinkParams, PiecewiseLink
from costmodel.schedules import Schedule, Transfer, build, execute, simulate
from costmodel.schedules.trace import MAX_TRACE_RANKS, trace
from costmodel.units import format_size

__all__ = ["ScheduleReport", "Verification", "check_work", "schedule_report"]

DEFAULT_SIZE = Fraction(2**20)
MAX_LISTED_TRANSFERS = 100_000
"""Beyond this many transfers the steps are summarised, not listed."""
MAX_CHUNK_SENDS = 10**8
"""Largest schedule built: chunk sends in all, estimated as p × the busiest rank's (a few seconds)."""
MAX_STATE_BYTES = 2 * 2**30
"""Largest state ``--verify`` may hold: 2 GiB."""
STATE_BYTES_PER_CELL = 33
"""What --verify keeps per (rank, chunk id): two int32 values, a flag and three int64 indices."""

_REFERENCE = LinkParams(alpha_s=Fraction(1, 10**6), beta_s_per_byte=Fraction(1, 10**9),
                        gamma_s_per_byte=Fraction(1, 10**10), source="reference link for verification")


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """The schedule run on data and priced, against the formula."""

    executed_ok: bool
    problems: tuple[str, ...]
    simulated: dict[str, Fraction | int]
    formula: dict[str, Fraction | int]

    @property
    def matches(self) -> bool:
        return self.simulated == self.formula

    @property
    def verified(self) -> bool:
        return self.executed_ok and self.matches

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("executed_ok", "problems", "simulated", "formula")),
                "matches_formula": self.matches}


@dataclass(frozen=True, slots=True, kw_only=True)
class ScheduleReport:
    """One algorithm's schedule at one p: its steps, who holds what, and optionally its check."""

    collective: str
    algorithm: str
    p: int
    n_bytes: Fraction
    units: int
    meaning_of_n: str
    parameters: dict[str, int | str]
    steps: tuple[tuple[Transfer, ...], ...] | None
    holdings: tuple[np.ndarray, ...] | None
    reduces: bool
    rounds: int
    bytes_sent_per_rank: Fraction
    time_s: Fraction | None
    link: Link | None
    verification: Verification | None
    levels: tuple[tuple[str, Fraction], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def chunk_bytes(self) -> Fraction:
        return self.n_bytes / self.units

    @property
    def verified(self) -> bool | None:
        return None if self.verification is None else self.verification.verified

    def to_dict(self) -> dict[str, object]:
        steps = None
        if self.steps is not None:
            steps = [[{"src": t.src, "dst": t.dst, "chunk": chunk_label(t.chunks, self),
                       "chunks": list(t.chunks), "op": t.op, "bytes": real(len(t.chunks) * self.chunk_bytes)}
                      for t in s] for s in self.steps]
        return {
            "collective": self.collective,
            "algorithm": self.algorithm,
            "p": self.p,
            "n_bytes": real(self.n_bytes),
            "meaning_of_n": self.meaning_of_n,
            "units": self.units,
            "chunk_bytes": real(self.chunk_bytes),
            "parameters": dict(self.parameters),
            "steps": steps,
            "rounds": self.rounds,
            "bytes_sent_per_rank": real(self.bytes_sent_per_rank),
            "time_s": None if self.time_s is None else real(self.time_s),
            **({} if self.link is None else self.link.result_fields()),
            "levels": [{"name": name, "bytes_crossing": real(b)} for name, b in self.levels],
            "verified": self.verified,
            "verification": None if self.verification is None else self.verification.to_dict(),
            "notes": list(self.notes),
        }


def chunk_label(chunks: tuple[int, ...], report: ScheduleReport) -> str:
    """A short name for a set of chunks: letters A, B, ... (or numbers past Z), ranges joined."""
    def name(c: int) -> str:
        if report.collective == "alltoall":
            return f"{c // report.p}→{c % report.p}"
        return chr(ord("A") + c) if report.units <= 26 else str(c)

    ordered = sorted(chunks)
    if len(ordered) > 2 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{name(ordered[0])}–{name(ordered[-1])}"
    return ",".join(name(c) for c in ordered)


def schedule_report(
    collective: str,
    algorithm: str,
    *,
    p: int | None = None,
    n: Any = None,
    link: Link | None = None,
    levels: Sequence[Any] | None = None,
    profile: Any = None,
    outer: str | None = None,
    extra: Mapping[str, int] | None = None,
    verify: bool = False,
    seed: int = 0,
) -> ScheduleReport:
    """The explicit schedule of *algorithm* at *p*, traced, and checked when *verify*.

    Parameters
    ----------
    collective, algorithm : str
        Names or aliases; a non-power-of-two p uses the record's adaptation.
    p : int
        Ranks.
    n : size, optional
        Message size in bytes (default 1 MiB), for the byte counts and the time.
    link : LinkParams or PiecewiseLink, optional
        For the time; without it ``time_s`` is None (verification then uses a
        fixed reference link: the comparison is exact either way).  A piecewise
        link prices every transfer by the segment of its message's size.
    levels, profile, outer : optional
        For the hierarchical all-reduces: the topology (``--level`` texts or a
        profile with ``[[level]]`` tables; p is then their product) and the
        all-reduce across the outermost level (``ring`` or ``tree``).
    extra : mapping, optional
        Segments or blocks; without them (and without a link) they default to 4.
    verify : bool
        Run the schedule on random data and compare the simulation with the formula.

    Examples
    --------
    >>> r = schedule_report("allreduce", "ring", p=4, n="100MB", verify=True)
    >>> r.rounds, r.bytes_sent_per_rank, r.verified
    (6, Fraction(150000000, 1), True)
    """
    size = DEFAULT_SIZE if n is None else check_size(n)
    if is_hierarchical(algorithm):
        return _hierarchical_report(collective, algorithm, p=p, n=size, levels=levels, profile=profile,
                                    outer=outer, verify=verify, seed=seed)
    if levels:
        raise InputError(f"levels= describes a topology for the hierarchical all-reduces, not for "
                         f"{algorithm!r}; drop levels= or choose hierarchical")
    if p is None:
        raise InputError("no rank count given; pass p=N (a flat algorithm runs on p ranks)")
    spec = find_collective(collective)
    record = resolve(spec.name, algorithm)
    p = check_ranks(p)
    given = check_extra(spec.name, [record], extra)
    at_p, notes = applicable(record, p)
    check_given(at_p, p, size, given)
    if at_p.schedule is None:
        raise InputError(f"{record.name!r} has no explicit schedule; {' '.join(at_p.notes)}")
    if at_p.extra and not all(e.name in given for e in at_p.extra):
        if link is not None:
            given = {**tuned(record, p, size, link, given), **given}
        else:
            given = {e.name: given.get(e.name, min(4, e.upper(p, size))) for e in at_p.extra}
            chosen = ", ".join(f"{k} = {v}" for k, v in given.items())
            notes += (f"{chosen} (give a link to choose the best)",)
    options = {"k": given[at_p.extra[0].name]} if at_p.extra else {}
    check_work(at_p, p, given, verify=verify)
    schedule = build(at_p.schedule, spec.name, p=p, **options)
    transfers = _for_transfers(link, size, record, at_p)
    priced = simulate(schedule, n=size, link=transfers or _REFERENCE)
    steps, holdings = _listed(schedule, p, priced.rounds)
    verification = None
    if verify:
        reference = transfers or _REFERENCE
        sim = priced if link is not None else simulate(schedule, n=size, link=reference)
        formula = cost(spec.name, record, p=p, n=size, link=reference, extra=given)
        verification = _verification(schedule, seed, sim, formula)
    return ScheduleReport(
        collective=spec.name, algorithm=at_p.name, p=p, n_bytes=size, units=schedule.units,
        meaning_of_n=spec.meaning_of_n, parameters=dict(given), steps=steps, holdings=holdings,
        reduces=spec.reduces, rounds=priced.rounds, bytes_sent_per_rank=priced.bytes_sent_per_rank,
        time_s=priced.time_s if link is not None else None, link=placed(link) if link else None,
        verification=verification,
        notes=notes,
    )


def _for_transfers(link: Link | None, n: Fraction, record: Algorithm, at_p: Algorithm) -> Link | None:
    """*link* as the simulator prices transfers: a piecewise one placed by message size, or, fitted on
    this algorithm in collective sizes, its segment of n."""
    if not isinstance(link, PiecewiseLink):
        return link
    link = piecewise.placed(link)
    if link.by_message:
        return link
    reason = link.refuses(record.name, at_p.name)
    if reason:
        raise InputError(reason)
    return link.at(n)


def check_work(algo: Algorithm, p: int, extra: Mapping[str, int], *, verify: bool) -> tuple[int, int]:
    """(chunk sends, bytes of --verify state) of *algo*'s schedule at *p*, refused above the budget.

    Estimated from the record, without building anything: its busiest rank
    sends C chunks (``bytes_sent`` at n = chunks), so the schedule moves at most
    p·C chunks in all; --verify holds p × (chunk ids) cells, the chunk ids being
    the record's chunks (p² blocks for all-to-all).

    Raises
    ------
    InputError
        Above :data:`MAX_CHUNK_SENDS` chunk sends, or with *verify* above
        :data:`MAX_STATE_BYTES` of state.

    Examples
    --------
    >>> from costmodel.collectives._registry import resolve
    >>> check_work(resolve("allreduce", "ring"), 4, {}, verify=True)  # 4 ranks × 6 chunks; 4 × 4 cells
    (24, 528)
    """
    values = {e.symbol: Fraction(extra[e.name]) for e in algo.extra}
    units = Fraction(algo.chunks(Fraction(p), Fraction(1), EXACT, **values))
    busiest = Fraction(algo.bytes_sent(Fraction(p), units, EXACT, **values))
    sends = p * math.ceil(busiest)
    if sends > MAX_CHUNK_SENDS:
        raise InputError(f"the {algo.collective} {algo.name} schedule at p={p} would move about {sends:.3g} "
                         f"chunks (p × {math.ceil(busiest):,} for the busiest rank), above the limit of "
                         f"{MAX_CHUNK_SENDS:.0e}; use fewer ranks, segments or blocks")
    ids = p * p if algo.collective == "alltoall" else int(units)
    state = p * ids * STATE_BYTES_PER_CELL
    if verify and state > MAX_STATE_BYTES:
        raise InputError(f"verify=True at p={p} would hold about {format_size(state)} ({p:,} ranks × {ids:,} "
                         f"chunk ids), above the limit of {format_size(MAX_STATE_BYTES)}; drop verify= "
                         "or use fewer ranks")
    return sends, state


def _listed(schedule: Schedule, p: int, rounds: int
            ) -> tuple[tuple[tuple[Transfer, ...], ...] | None, tuple[np.ndarray, ...] | None]:
    """The transfers and the per-round holdings of *schedule*, each ``None`` when too large to list."""
    steps = None
    if rounds * p <= MAX_LISTED_TRANSFERS:
        steps = tuple(tuple(t) for t in schedule.transfers())
    holdings = None
    if p <= min(16, MAX_TRACE_RANKS) and rounds <= 64:
        holdings = tuple(masks for _, masks in trace(schedule))
    return steps, holdings


def _verification(schedule: Schedule, seed: int, simulated: Any, formula: Any) -> Verification:
    """Run *schedule* on data and set the rounds, bytes and time of *simulated* against *formula*."""
    run = execute(schedule, seed=seed)
    return Verification(executed_ok=run.ok, problems=run.problems,
                        simulated=_totals(simulated), formula=_totals(formula))


def _totals(priced: Any) -> dict[str, Fraction | int]:
    return {"rounds": priced.rounds, "bytes_sent_per_rank": priced.bytes_sent_per_rank,
            "time_s": priced.time_s}


def _hierarchical_report(collective: str, algorithm: str, *, p: int | None, n: Fraction, levels: Any,
                         profile: Any, outer: str | None, verify: bool, seed: int) -> ScheduleReport:
    """The schedule of a hierarchical all-reduce on a topology, priced per level."""
    from costmodel.collectives.hierarchical import hierarchical_cost
    from costmodel.schedules.hierarchical import hierarchical_allreduce, reduce_bcast_allreduce

    spec = find_collective(collective)
    if spec.name != "allreduce":
        raise InputError(f"{algorithm!r} is an all-reduce; use it with allreduce, not {spec.name}")
    if not levels and profile is None:
        raise InputError(f"{algorithm!r} needs a topology; give levels=SIZE:ALPHA:RATE once per level")
    from costmodel.links import topology_from_options

    topology = topology_from_options(levels=levels, profile=profile, p=p)
    formula = hierarchical_cost(topology, n, algorithm=algorithm, outer=outer)
    outer_name = str(formula.parameters.get("outer", outer or "ring"))
    if outer_name not in ("ring", "tree"):
        raise InputError(f"outer={outer_name!r} has no hierarchical schedule; use outer=ring or tree")
    build_it = hierarchical_allreduce if formula.algorithm == "hierarchical" else reduce_bcast_allreduce
    schedule = build_it(topology, outer=outer_name)
    priced = simulate(schedule, n=n, levels=tuple(topology.links), level_of=topology.level_of)
    steps, holdings = _listed(schedule, topology.p, priced.rounds)
    verification = _verification(schedule, seed, priced, formula) if verify else None
    names = tuple(topology.names)
    return ScheduleReport(
        collective="allreduce", algorithm=formula.algorithm, p=topology.p, n_bytes=n, units=schedule.units,
        meaning_of_n=spec.meaning_of_n, parameters={"outer": outer_name}, steps=steps, holdings=holdings,
        reduces=True, rounds=priced.rounds, bytes_sent_per_rank=priced.bytes_sent_per_rank,
        time_s=priced.time_s, link=None, verification=verification,
        levels=tuple(zip(names, priced.bytes_per_level, strict=True)), notes=formula.notes,
    )
