"""Topology-aware all-reduce, composed from the flat records level by level.

Nothing here is a new hand-typed cost formula: every phase of a hierarchical
algorithm is a flat record of the registry, evaluated by
:func:`~costmodel.collectives.evaluate.cost` with the p, the n and the link of
the level it runs on, and the phases add up (they run one after the other;
within a phase, every group of the level runs it at the same time, which the
one-port model allows because each rank belongs to exactly one group).

``hierarchical`` (Horovod, NCCL, the multi-lane version)
    Reduce-scatter inside each inner level (n, then n/s₀, n/(s₀s₁), ...),
    all-reduce of the slices across the outermost level (every rank its own
    slice of n/G, G = ranks per outermost unit, all at the same time), then
    all-gather back out.  Generalised to any number of levels recursively.
    ``inner`` is ``ring`` (default) or ``recursive`` (recursive halving and
    doubling, for power-of-two inner levels); ``outer`` is any all-reduce
    record (default ``ring``).
``hierarchical-reduce-bcast`` (MPICH's SMP-aware all-reduce)
    Binomial reduce of the full vector to a leader at each inner level,
    all-reduce of the full vector among the outermost leaders, binomial
    broadcast back.  Only the leaders cross the outer levels.

Levels of size 1 are skipped (nothing crosses them).  With one level of more
than one unit, both algorithms are the flat ``outer`` all-reduce.

Lanes
-----
β of a level is 1/(the rate one rank gets across it): with 8 GPUs per node
and 8 NICs (one lane per GPU, "rail-optimised"), every local rank's slice
crosses on its own lane.  ``lanes`` = k < G says the G concurrent slices share
k lanes: the busiest lane carries ⌈G/k⌉ of them, so the outermost phase runs
with β·⌈G/k⌉ (α unchanged: the streams start together).  The default is k = G,
one lane per local rank, which is what β per rank means; k must lie in
1 ≤ k ≤ G, because a rank has one port.  ``hierarchical-reduce-bcast`` always
crosses on the leader's one port.

Bytes crossing a level
----------------------
Every result reports, per level, the bytes that cross it: the bytes sent by
all the transfers that use that level's links, summed.  For a phase that is
(groups) × (bytes all ranks of one group send).  Where every rank of a record
sends what its busiest rank sends (ring, recursive halving and doubling,
Rabenseifner at a power of two) that is p × the record's ``bytes_sent``; the
others are written out in ``_TRAFFIC`` with their derivation (the records
carry only the busiest rank's bytes).

Flat ring on the topology
-------------------------
Every result is compared with the flat ring over all p ranks in rank order,
placed level by level.  Its steps are synchronous, so each lasts as long as
its slowest transfer: the reduce-scatter is the flat ``reduce-scatter ring``
record priced with the slowest link any ring link crosses, and the all-gather
likewise (two records, no new formula).  Ring link r → r+1 carries what rank
r sends, so level i carries (its ring links, :meth:`Topology.ring_links`) ×
(the record's bytes per rank).  A test checks both against the simulated ring
schedule (``simulate(..., levels=, level_of=)``); the core does not simulate,
which would cost O(p²) work (a p = 65,536 ring has 131,070 steps).

References
----------
.. [1] A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep
   learning in TensorFlow", arXiv:1802.05799, 2018; its hierarchical
   all-reduce (``NCCLHierarchicalAllreduce``): NCCL reduce-scatter in the node,
   MPI all-reduce across nodes, NCCL all-gather.
.. [2] NVIDIA, NCCL user guide, ``NCCL_CROSS_NIC``: one ring per NIC, each on
   its own network rail (lanes).
.. [3] MPICH, ``src/mpi/coll/allreduce/allreduce_intra_smp.c``: reduce to the
   node's root, all-reduce among the roots, broadcast in the node.
.. [4] J. L. Träff, S. Hunold, "Decomposing MPI Collectives for Exploiting
   Multi-lane Communication", CLUSTER 2020 (the multi-lane version).

Examples
--------
>>> from costmodel.topology import Topology
>>> from costmodel.topology import topology_of
>>> topo = topology_of(["8:1us:150GB/s", "4:5us:25GB/s"])
>>> table = compare_hierarchical("allreduce", n="1GiB", topology=topo)
>>> [r.algorithm for r in table.results]
['hierarchical', 'hierarchical-reduce-bcast']
>>> [(lv.name, lv.bytes_crossing / 2**30) for lv in table.results[0].levels]
[('intra', Fraction(56, 1)), ('inter', Fraction(6, 1))]
>>> [(lv.name, lv.bytes_crossing / 2**30) for lv in table.flat_ring.levels]
[('intra', Fraction(217, 4)), ('inter', Fraction(31, 4))]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, real, to_json_dict
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import resolve
from costmodel.collectives._schemes import (
    ALGORITHMS,
    HOROVOD,
    LANES,
    MULTI_LANE,
    NAMES,
    OUTER,
    RS_AR_AG,
    SCHEMES,
    SMP,
    Scheme,
    inner_algorithm,
    is_hierarchical,
    scheme_named,
    senders,
)
from costmodel.collectives.evaluate import check_size, price
from costmodel.collectives.result import AlgorithmCost, times_slower
from costmodel.errors import InputError, UnknownNameError
from costmodel.intmath import floor_log2, is_power_of_two
from costmodel.params import LinkParams
from costmodel.references import PATARASUK_2009, Cited
from costmodel.topology import Level, Topology
from costmodel.validate import positive

__all__ = [
    "ALGORITHMS",
    "LANES",
    "MULTI_LANE",
    "SOURCES",
    "HierarchicalCost",
    "HierarchicalTable",
    "LevelTraffic",
    "Phase",
    "compare_hierarchical",
    "find_scheme",
    "flat_ring",
    "hierarchical_cost",
    "is_hierarchical",
    "outer_algorithm",
]

# -- what this module cites -------------------------------------------------------------------

_FLAT = PATARASUK_2009.at("ring algorithm over all ranks, each step priced at the slowest link it crosses")

SOURCES: tuple[Cited, ...] = (HOROVOD, LANES, MULTI_LANE, SMP, _FLAT)
"""Every place this module cites (the registry tests check that each citation is used)."""

# Bytes that all ranks of one group send together, per record, where they are not p × the
# busiest rank's bytes.  p′ = 2^⌊log2 p⌋, r = p − p′.
_SYMMETRIC = {
    ("reduce-scatter", "ring"), ("reduce-scatter", "recursive-halving"),
    ("allgather", "ring"), ("allgather", "recursive-doubling"),
    ("allreduce", "ring"), ("allreduce", "recursive-doubling"), ("allreduce", "rabenseifner"),
}
_TRAFFIC: dict[tuple[str, str], Callable[[int, Fraction], Fraction]] = {
    # binomial reduce: every rank but the root sends its (partial) vector once
    ("reduce", "binomial"): lambda p, n: (p - 1) * n,
    # binomial broadcast: every rank but the root receives the vector once
    ("broadcast", "binomial"): lambda p, n: (p - 1) * n,
    # binomial reduce, then binomial broadcast, of the full vector
    ("allreduce", "tree"): lambda p, n: 2 * (p - 1) * n,
    # the root receives p − 1 vectors, then sends p − 1
    ("allreduce", "naive"): lambda p, n: 2 * (p - 1) * n,
    # 2 trees, each spanning all p ranks: every non-root sends its n/2 up (in k blocks) once and
    # receives n/2 down once: 2 · (p − 1) · (n/2 + n/2)
    ("allreduce", "double-binary-tree"): lambda p, n: 2 * (p - 1) * n,
    # r vectors fold in, p′·log2 p′ exchanges of n, r results go back
    ("allreduce", "recursive-doubling-folded"):
        lambda p, n: (2**floor_log2(p) * floor_log2(p) + 2 * (p - 2**floor_log2(p))) * n,
    # r vectors fold in, Rabenseifner on p′ moves 2(p′ − 1)n, r results go back: 2(p − 1)n
    ("allreduce", "rabenseifner-folded"): lambda p, n: 2 * (p - 1) * n,
}


def _traffic(collective: str, c: AlgorithmCost, p: int, n: Fraction) -> Fraction:
    """Bytes all p ranks of one group send together when they run record *c* on n bytes."""
    if (collective, c.algorithm) in _SYMMETRIC:
        return p * c.bytes_sent_per_rank
    return Fraction(_TRAFFIC[collective, c.algorithm](p, n))


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelTraffic(JSONFields):
    """Bytes that cross one level: all the transfers over that level's links, summed."""

    name: str
    bytes_crossing: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class Phase:
    """One phase of a composition: a flat record run by ``groups`` groups of ``p`` ranks at once.

    ``cost`` is the record's cost for one group (all groups take the same
    time); ``n_bytes`` is the record's n, ``fraction_of_n`` that n over the
    all-reduce's; ``bytes_crossing`` is what all groups together send across
    ``level``, the level whose link prices the phase.
    """

    level: str
    collective: str
    cost: AlgorithmCost
    p: int
    n_bytes: Fraction
    fraction_of_n: Fraction
    groups: int
    link: LinkParams
    bytes_crossing: Fraction

    @property
    def text(self) -> str:
        """``allreduce ring(p=4, n/8) @ inter``."""
        share = self.fraction_of_n
        size = "n" if share == 1 else f"n/{1 / share}" if share.numerator == 1 else f"{share}·n"
        return f"{self.collective} {self.cost.algorithm}(p={self.p}, {size}) @ {self.level}"

    def to_dict(self) -> dict[str, object]:
        c = self.cost
        return {
            "level": self.level, "collective": self.collective, "algorithm": c.algorithm, "p": self.p,
            "n_bytes": real(self.n_bytes), "fraction_of_n": real(self.fraction_of_n), "groups": self.groups,
            **self.link.result_fields(),
            "time_s": real(c.time_s), "latency_s": real(c.latency_s), "bandwidth_s": real(c.bandwidth_s),
            "compute_s": real(c.compute_s), "rounds": c.rounds,
            "bytes_sent_per_rank": real(c.bytes_sent_per_rank), "bytes_crossing": real(self.bytes_crossing),
            "parameters": dict(c.parameters), "formula": c.formula,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class HierarchicalCost:
    """Modelled time of an all-reduce composed over a topology's levels; seconds and bytes.

    The time, its α, β and γ parts, and the rounds are the sums over the
    phases; ``levels`` gives the bytes crossing each level of the topology.
    """

    algorithm: str
    summary: str
    phases: tuple[Phase, ...]
    levels: tuple[LevelTraffic, ...]
    bytes_sent_per_rank: Fraction
    parameters: dict[str, object] = field(default_factory=dict)
    sources: tuple[Cited, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def latency_s(self) -> Fraction:
        return sum((ph.cost.latency_s for ph in self.phases), Fraction(0))

    @property
    def bandwidth_s(self) -> Fraction:
        return sum((ph.cost.bandwidth_s for ph in self.phases), Fraction(0))

    @property
    def compute_s(self) -> Fraction:
        return sum((ph.cost.compute_s for ph in self.phases), Fraction(0))

    @property
    def time_s(self) -> Fraction:
        return self.latency_s + self.bandwidth_s + self.compute_s

    @property
    def rounds(self) -> int:
        return sum(ph.cost.rounds for ph in self.phases)

    @property
    def formula(self) -> str:
        """The composition, one term per phase: ``reduce-scatter ring(p=8, n) @ intra + ...``."""
        return " + ".join(ph.text for ph in self.phases)

    def bytes_crossing(self, level: str) -> Fraction:
        """Bytes crossing the level called *level*."""
        for lv in self.levels:
            if lv.name == level:
                return lv.bytes_crossing
        raise UnknownNameError("level", level, [lv.name for lv in self.levels])

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
                                   "bytes_sent_per_rank", "levels", "phases", "parameters", "formula",
                                   "summary", "sources", "notes"))


@dataclass(frozen=True, slots=True, kw_only=True)
class HierarchicalTable:
    """Hierarchical all-reduce algorithms on one topology, fastest first, and the flat ring beside them."""

    collective: str
    p: int
    n_bytes: Fraction
    topology: Topology
    meaning_of_n: str
    results: tuple[HierarchicalCost, ...]
    flat_ring: HierarchicalCost
    notes: tuple[str, ...] = ()

    @property
    def best(self) -> str:
        return self.results[0].algorithm

    def vs_best(self, result: HierarchicalCost) -> Fraction | None:
        """How many times slower than the fastest *result* is (None when the fastest takes no time)."""
        return times_slower(result.time_s, self.results[0].time_s)

    def speedup(self, result: HierarchicalCost) -> Fraction | None:
        """The flat ring's time over *result*'s (None when *result* takes no time)."""
        return times_slower(self.flat_ring.time_s, result.time_s)

    def to_dict(self) -> dict[str, object]:
        def ratio(x: Fraction | None) -> int | float | None:
            return None if x is None else real(x)

        return {
            "collective": self.collective,
            "p": self.p,
            "n_bytes": real(self.n_bytes),
            "meaning_of_n": self.meaning_of_n,
            "topology": self.topology.to_dict(),
            "results": [{**r.to_dict(), "vs_best": ratio(self.vs_best(r)),
                         "speedup_vs_flat_ring": ratio(self.speedup(r))} for r in self.results],
            "best": self.best,
            "flat_ring": self.flat_ring.to_dict(),
            "notes": list(self.notes),
        }


# -- name resolution ---------------------------------------------------------------------------


def find_scheme(name: str) -> Scheme:
    """The hierarchical all-reduce *name* (or an alias) names.

    Raises
    ------
    InputError
        For a flat all-reduce (priced on a topology only as the flat ring
        beside the hierarchical ones), with its canonical name.
    UnknownNameError
        For any other name, with a did-you-mean hint.
    """
    if not isinstance(name, str):
        raise InputError(f"{name!r} is not an algorithm name; choose {' or '.join(ALGORITHMS)}")
    scheme = scheme_named(name)
    if scheme is not None:
        return scheme
    try:
        flat = resolve("allreduce", name).name
    except UnknownNameError:
        flat = ""
    if not flat:
        NAMES.resolve(name, context="for allreduce")
    raise InputError(
        f"{flat!r} is a flat algorithm; with a topology choose {' or '.join(ALGORITHMS)} "
        "(the flat ring on the same topology is always reported)"
    )


def outer_algorithm(outer: str | None) -> str:
    """The canonical all-reduce record run across the outermost level (``ring`` for None)."""
    algo = resolve("allreduce", "ring" if outer is None else outer)
    if algo.name not in OUTER:
        raise InputError(f"outer algorithm {outer!r} is not composed across levels; choose from "
                         f"{', '.join(OUTER)}")
    return algo.name


# -- the compositions --------------------------------------------------------------------------


def _phase(level: Level, collective: str, algorithm: str, *, p: int, n: Fraction, share: Fraction,
           groups: int, link: LinkParams | None = None,
           extra: Mapping[str, int] | None = None) -> Phase:
    """Record *algorithm* of *collective* on one group of *p* ranks of *level*, run by *groups* groups."""
    used = link or level.link
    c = price(collective, algorithm, p=p, n=n, link=used, extra=extra)
    return Phase(level=level.name, collective=collective, cost=c, p=p, n_bytes=n, fraction_of_n=share,
                 groups=groups, link=used, bytes_crossing=groups * _traffic(collective, c, p, n))


def _crossing(topology: Topology, phases: Iterable[Phase]) -> tuple[LevelTraffic, ...]:
    totals = dict.fromkeys(topology.names, Fraction(0))
    for ph in phases:
        totals[ph.level] += ph.bytes_crossing
    return tuple(LevelTraffic(name=name, bytes_crossing=b) for name, b in totals.items())


def hierarchical_cost(
    topology: Topology,
    n: Any,
    *,
    algorithm: str = "hierarchical",
    inner: str | None = None,
    outer: str | None = None,
    lanes: int | None = None,
    extra: Mapping[str, int] | None = None,
) -> HierarchicalCost:
    """The cost of a hierarchical all-reduce on *topology*, composed from flat records.

    Parameters
    ----------
    topology : Topology
        Levels innermost first.
    n : int, Fraction or str
        The full vector each rank holds, in bytes (a string may carry a unit).
    algorithm : str
        ``hierarchical`` (reduce-scatter / all-reduce / all-gather) or
        ``hierarchical-reduce-bcast`` (reduce / all-reduce / broadcast), or
        an alias.
    inner : str, optional
        The inner levels' algorithm: ``ring`` (default) or ``recursive`` for
        ``hierarchical``; ``binomial`` for ``hierarchical-reduce-bcast``.
    outer : str, optional
        The all-reduce record across the outermost level (default ``ring``).
    lanes : int, optional
        Parallel lanes out of each outermost unit, 1 ≤ k ≤ G (ranks per
        outermost unit); default G, one per local rank.  ``hierarchical``
        only.
    extra : mapping, optional
        Extra parameters of the outer record (``{"blocks": 4}``).

    Returns
    -------
    HierarchicalCost

    Raises
    ------
    InputError
        For an unknown or flat algorithm, an inner or outer algorithm that
        does not apply, ``recursive`` on a level that is not a power of two,
        or lanes outside 1..G.

    Notes
    -----
    Phases add: T = Σ T_record(p_level, n_phase) with each level's α, β, γ.
    For ``hierarchical`` every rank sends the same in the inner phases, so
    the busiest rank sends Σ (bytes of each phase's busiest rank).  For
    ``hierarchical-reduce-bcast`` the busiest rank is an outermost leader: as
    the root of every binomial reduce it sends nothing, as the root of every
    binomial broadcast it sends ⌈log2 s⌉·n, and other ranks send at most n +
    (⌈log2 s⌉ − 1)·n at the level where they stop leading.

    References
    ----------
    .. [1] Sergeev & Del Balso 2018 (Horovod), NCCL, MPICH SMP-aware
       collectives; Träff & Hunold 2020 (multi-lane).

    Examples
    --------
    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["4:1us:100GB/s", "2:10us:10GB/s"])
    >>> c = hierarchical_cost(topo, 8 * 10**6)
    >>> print(c.formula)
    reduce-scatter ring(p=4, n) @ intra + allreduce ring(p=2, n/4) @ inter + allgather ring(p=4, n) @ intra
    >>> c.time_s  # 2·(3·1 µs + (3/4)·8 MB/(100 GB/s)) + 2·10 µs + 2·(1/2)·2 MB/(10 GB/s) = 346 µs
    Fraction(173, 500000)
    """
    scheme = find_scheme(algorithm)
    _check_topology(topology)
    size = check_size(n)
    inner_name = inner_algorithm(scheme, inner)
    outer_name = outer_algorithm(outer)
    used = [lv for lv in topology.levels if lv.size > 1]
    top, below = used[-1], used[:-1]
    if inner_name == "recursive":
        _check_powers_of_two(below)
    local = math.prod(lv.size for lv in below)
    notes = [f"level {lv.name!r} has 1 unit: nothing crosses it" for lv in topology.levels if lv.size == 1]
    k = _lanes(scheme, lanes, local, notes)
    down, up, share, groups = _inner_phases(scheme, inner_name, below, p=topology.p, n=size)
    link = _lane_link(top, local, k, notes) if scheme is RS_AR_AG else top.link
    middle = _phase(top, "allreduce", outer_name, p=top.size, n=share * size, share=share,
                    groups=groups // top.size, link=link, extra=extra)
    phases = (*down, middle, *reversed(up))
    busiest = sum((ph.cost.bytes_sent_per_rank for ph in senders(scheme, down, middle, up)), Fraction(0))
    if not below:
        notes.append(f"only level {top.name!r} has more than one unit: this is the flat {outer_name} "
                     "all-reduce")
    notes += [note for ph in phases for note in ph.cost.notes]
    parameters: dict[str, object] = {"inner": inner_name if below else None, "outer": outer_name}
    if scheme is RS_AR_AG:
        parameters["lanes"] = k
    parameters.update(middle.cost.parameters)
    return HierarchicalCost(
        algorithm=scheme.name, summary=scheme.summary, phases=phases, levels=_crossing(topology, phases),
        bytes_sent_per_rank=busiest, parameters=parameters, sources=scheme.sources,
        notes=tuple(dict.fromkeys(notes)),
    )


def _check_topology(topology: Any) -> None:
    if not isinstance(topology, Topology):
        raise InputError(f"{topology!r} is not a Topology; build one with "
                         "topology_of([...])")


def _check_powers_of_two(levels: Iterable[Level]) -> None:
    for lv in levels:
        if not is_power_of_two(lv.size):
            raise InputError(f"level {lv.name!r} has {lv.size} units; inner=recursive needs a power of "
                             "two at every inner level, try inner=ring")


def _inner_phases(scheme: Scheme, inner: str, below: Sequence[Level], *, p: int,
                  n: Fraction) -> tuple[list[Phase], list[Phase], Fraction, int]:
    """The phases down and back up the inner levels, the share of n left, and the ranks still taking part.

    Reduce-scatter/all-gather: all p ranks take part at every level, and the
    vector shrinks by each level's size.  Reduce/broadcast: only the leaders
    of the level below take part, on the full vector.
    """
    down_name, up_name = scheme.inner[inner]
    down: list[Phase] = []
    up: list[Phase] = []
    share, ranks = Fraction(1), p
    for lv in below:
        groups = ranks // lv.size
        for phases, collective, name in ((down, scheme.down, down_name), (up, scheme.up, up_name)):
            phases.append(_phase(lv, collective, name, p=lv.size, n=share * n, share=share, groups=groups))
        if scheme is RS_AR_AG:
            share /= lv.size
        else:
            ranks = groups
    return down, up, share, ranks


def _lane_link(top: Level, local: int, k: int, notes: list[str]) -> LinkParams:
    """The outermost link when *local* concurrent slices share *k* lanes: β·⌈local/k⌉."""
    streams = -(-local // k)
    if streams == 1:
        return top.link
    notes.append(f"{local} local ranks share {k} lanes out of each {top.name} unit: the busiest lane "
                 f"carries {streams} slices, so the {top.name} phase runs at 1/{streams} of the lane rate")
    return replace(top.link, beta_s_per_byte=top.link.beta_s_per_byte * streams,
                   source=f"{top.link.source}; {streams} streams per lane")


def _lanes(scheme: Scheme, lanes: int | None, local: int, notes: list[str]) -> int:
    """The lane count: 1 ≤ k ≤ G, default G (one lane per local rank)."""
    if lanes is None:
        return local
    k = positive(lanes, "lanes",
                 hint="give the number of parallel lanes out of each outermost unit, e.g. lanes=4")
    if scheme is not RS_AR_AG:
        notes.append(f"{scheme.name} crosses on the leader's one port; lanes={k} does not apply")
        return 1
    if k > local:
        ranks = f"{local} local rank{'s' if local > 1 else ''}"
        raise InputError(f"lanes={k} is more than the {ranks} that cross at the outermost level; each rank "
                         f"has one port, so use at most lanes={local}")
    return k


def flat_ring(topology: Topology, n: Any) -> HierarchicalCost:
    """The flat ring all-reduce over all ranks of *topology* in rank order, each step at its slowest link.

    Parameters
    ----------
    topology : Topology
    n : int, Fraction or str
        The full vector each rank holds, in bytes.

    Returns
    -------
    HierarchicalCost
        Two phases (reduce-scatter and all-gather over all p ranks), each
        priced with the slowest link its steps cross, and the bytes crossing
        each level.

    Examples
    --------
    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["4:1us:100GB/s", "2:10us:10GB/s"])
    >>> ring = flat_ring(topo, 8 * 10**6)
    >>> [(lv.name, lv.bytes_crossing) for lv in ring.levels]  # 6 and 2 links, 2·(7/8)·8 MB each
    [('intra', Fraction(84000000, 1)), ('inter', Fraction(28000000, 1))]
    """
    _check_topology(topology)
    size = check_size(n)
    p = topology.p
    counts = topology.ring_links()
    crossed = [lv for lv, c in zip(topology.levels, counts, strict=True) if c]
    phases = []
    for collective in ("reduce-scatter", "allgather"):
        level, c = None, None
        for lv in crossed:  # the slowest link; on a tie the innermost, as the simulator picks
            trial = price(collective, "ring", p=p, n=size, link=lv.link)
            if c is None or trial.time_s > c.time_s:
                level, c = lv, trial
        assert level is not None and c is not None  # a topology has p ≥ 2, so some link is crossed
        phases.append(Phase(level=level.name, collective=collective, cost=c, p=p, n_bytes=size,
                            fraction_of_n=Fraction(1), groups=1, link=level.link,
                            bytes_crossing=p * c.bytes_sent_per_rank))
    per_link = sum((ph.cost.bytes_sent_per_rank for ph in phases), Fraction(0))
    levels = tuple(LevelTraffic(name=lv.name, bytes_crossing=count * per_link)
                   for lv, count in zip(topology.levels, counts, strict=True))
    used = ", ".join(f"{count} cross {lv.name}" for lv, count in zip(topology.levels, counts, strict=True))
    notes = (f"flat ring over all {p} ranks in rank order; of its {p} links {used}; every step lasts as long "
             f"as its slowest transfer: {phases[0].level} prices the reduce-scatter, {phases[1].level} the "
             "all-gather",)
    return HierarchicalCost(
        algorithm="ring", summary="flat ring over all ranks, placed level by level", phases=tuple(phases),
        levels=levels, bytes_sent_per_rank=per_link, parameters={}, sources=(_FLAT,), notes=notes,
    )


def compare_hierarchical(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    n: Any,
    topology: Topology,
    inner: str | None = None,
    outer: str | None = None,
    lanes: int | None = None,
    extra: Mapping[str, int] | None = None,
) -> HierarchicalTable:
    """Hierarchical all-reduce algorithms on *topology*, fastest first, with the flat ring beside them.

    With *algorithms* ``None`` (or empty), every hierarchical algorithm that
    accepts *inner* is compared.

    Raises
    ------
    InputError
        For a collective other than all-reduce, a flat or unknown algorithm
        name, and everything :func:`hierarchical_cost` refuses.

    Examples
    --------
    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["8:1us:150GB/s", "4:5us:25GB/s"])
    >>> table = compare_hierarchical("allreduce", ["hierarchical"], n="1GiB", topology=topo)
    >>> table.best, round(float(table.speedup(table.results[0])), 2)
    ('hierarchical', 4.05)
    """
    spec = find_collective(collective)
    if spec.name != "allreduce":
        raise InputError(f"{collective!r} has no hierarchical algorithms; costmodel composes them for "
                         "allreduce")
    _check_topology(topology)
    size = check_size(n)
    wanted = list(algorithms or [])
    if wanted:
        schemes = list(dict.fromkeys(find_scheme(name) for name in wanted))
    else:
        schemes = [s for s in SCHEMES if inner is None or _accepts(s, inner)] or [RS_AR_AG]
    results = sorted(
        (hierarchical_cost(topology, size, algorithm=s.name, inner=inner, outer=outer, lanes=lanes,
                           extra=extra) for s in schemes),
        key=lambda r: (r.time_s, r.algorithm),
    )
    return HierarchicalTable(
        collective=spec.name, p=topology.p, n_bytes=size, topology=topology, meaning_of_n=spec.meaning_of_n,
        results=tuple(results), flat_ring=flat_ring(topology, size),
    )


def _accepts(scheme: Scheme, inner: str) -> bool:
    try:
        inner_algorithm(scheme, inner)
    except InputError:
        return False
    return True
