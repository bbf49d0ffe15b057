"""Multi-lane transfers, FlexReduce's unequal groups and RAT's rack-aware traffic.

The three calculators behind ``costmodel multilane``, ``costmodel flexreduce``
and ``costmodel rat``.  None is a composition of flat records over levels (see
:mod:`costmodel.collectives.hierarchical`): the multi-lane transfer is one
payload split over k lanes, FlexReduce is a count of entries, and RAT only
reports the bytes that :func:`~costmodel.collectives.hierarchical.hierarchical_cost`
and :func:`~costmodel.collectives.hierarchical.flat_ring` send across the core.

References
----------
.. [1] J. L. Träff, S. Hunold, "Decomposing MPI Collectives for Exploiting
   Multi-lane Communication", CLUSTER 2020.
.. [2] NVIDIA, NCCL user guide, ``NCCL_CROSS_NIC``: one ring per NIC, each on
   its own network rail (lanes).
.. [3] J. Lee, I. Hwang, S. Shah, M. Cho, "FlexReduce: Flexible All-reduce for
   Distributed Deep Learning on Asymmetric Network Topology", DAC 2020.
.. [4] X. Wan et al., "RAT - Resilient Allreduce Tree for Distributed Machine
   Learning", APNet 2020.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.collectives.evaluate import check_size
from costmodel.collectives.hierarchical import (
    LANES,
    MULTI_LANE,
    HierarchicalCost,
    flat_ring,
    hierarchical_cost,
)
from costmodel.collectives.piecewise import placed
from costmodel.errors import InputError
from costmodel.params import Link, LinkParams, PiecewiseLink, link_notes
from costmodel.references import LEE_2020, WAN_2020, Cited
from costmodel.topology import Level, Topology
from costmodel.validate import is_whole, positive

__all__ = [
    "SOURCES",
    "FlexGroup",
    "FlexReduceSplit",
    "MultiLaneTransfer",
    "RackTraffic",
    "flexreduce",
    "multilane",
    "rack_aware",
]

_FLEX = LEE_2020.at("uneven split of the gradient over groups of unequal size")
_RAT = WAN_2020.at("allreduce trees that aggregate inside each oversubscribed region before crossing it")

SOURCES: tuple[Cited, ...] = (MULTI_LANE, LANES, _FLEX, _RAT)
"""Every place this module cites (the registry tests check that each citation is used)."""



# -- multi-lane --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiLaneTransfer:
    """One payload split evenly over k parallel lanes, each α + (n/k)β, against one lane."""

    n_bytes: Fraction
    lanes: int
    link: Link
    bytes_per_lane: Fraction
    one_lane_time_s: Fraction
    time_s: Fraction
    sources: tuple[Cited, ...] = (MULTI_LANE, LANES)
    notes: tuple[str, ...] = ()

    @property
    def speedup(self) -> Fraction | None:
        """One lane's time over k lanes' (None when k lanes take no time)."""
        return None if self.time_s == 0 else self.one_lane_time_s / self.time_s

    def to_dict(self) -> dict[str, object]:
        speedup = self.speedup
        one = self.link.summary if isinstance(self.link, PiecewiseLink) else self.link
        return {
            "n_bytes": real(self.n_bytes), "lanes": self.lanes, **self.link.result_fields(),
            "bandwidth_bytes_per_s": None if one.bandwidth_bytes_per_s is None
            else real(one.bandwidth_bytes_per_s),
            "bytes_per_lane": real(self.bytes_per_lane), "one_lane_time_s": real(self.one_lane_time_s),
            "time_s": real(self.time_s), "speedup": None if speedup is None else real(speedup),
            "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes),
        }


def multilane(n: Any, *, lanes: int | None, link: Link | None = None, alpha: Any = None, beta: Any = None,
              bandwidth: Any = None, profile: Any = None) -> MultiLaneTransfer:
    """Transfer service time of an n-byte payload split over *lanes* parallel lanes.

    Each lane carries n/k bytes at the per-lane bandwidth, all at once:
    α + (n/k)β, against α + nβ on one lane.  α is needed like everywhere;
    the ideal transfer service time of the multi-lane model (Träff & Hunold
    2020) is α = 0.

    Parameters
    ----------
    n : int, Fraction or str
        The payload, bytes (``"1GB"``).
    lanes : int
        k, the parallel lanes (paths, NICs), each with the link's bandwidth.
    link : LinkParams or PiecewiseLink
        The link of one lane.  A piecewise link prices each message by the
        segment of its own size (the n bytes on one lane, the n/k on each of
        k); its segments must be placed by message size.
    alpha, beta, bandwidth, profile : optional
        The link's values instead of *link*, made into one by
        :func:`costmodel.links.as_link`.

    Raises
    ------
    InputError
        For a missing or non-positive lane count, bad link options, or a
        link whose segments price one collective's algorithm only.

    References
    ----------
    .. [1] Träff & Hunold, CLUSTER 2020 (multi-lane collectives); NCCL user
       guide, ``NCCL_CROSS_NIC``.

    Examples
    --------
    >>> from costmodel.links import link_from_options
    >>> m = multilane("1GB", lanes=4, link=link_from_options(alpha=0, bandwidth="12.5GB/s"))
    >>> m.one_lane_time_s, m.time_s  # 1 GB / 12.5 GB/s = 80 ms; 250 MB / 12.5 GB/s = 20 ms
    (Fraction(2, 25), Fraction(1, 50))
    >>> multilane("1GB", lanes=4, alpha=0, bandwidth="12.5GB/s").time_s
    Fraction(1, 50)
    """
    size = check_size(n)
    if lanes is None:
        raise InputError("no lane count given; pass lanes=K, the number of parallel paths (e.g. 4)")
    k = positive(lanes, "lanes", hint="give the number of parallel paths, e.g. lanes=4")
    from costmodel.links import as_link

    used = as_link(link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    if isinstance(used, PiecewiseLink):
        used = placed(used)  # a calibrated profile's collective sizes, as message sizes
        if not used.by_message:
            raise InputError(f"{used.only()}, not a transfer of one message; give alpha= and beta=")
    per_lane = size / k
    return MultiLaneTransfer(
        n_bytes=size, lanes=k, link=used, bytes_per_lane=per_lane,
        one_lane_time_s=_message_time(used, size), time_s=_message_time(used, per_lane),
        notes=(*link_notes(used),
               "transfer service time only: an end-to-end all-reduce adds its local collectives, start-ups "
               "and any contention; the lanes help only if their bandwidth is sustained concurrently"),
    )


def _message_time(link: Link, m: Fraction) -> Fraction:
    """α + mβ of one message of *m* bytes; on a piecewise link (in message sizes), with the segment that
    prices its size."""
    if isinstance(link, PiecewiseLink):
        return sum(link.message(m).terms(m, reduce=False), Fraction(0))
    return link.alpha_s + m * link.beta_s_per_byte


# -- FlexReduce --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FlexGroup:
    """One group of a FlexReduce split: its workers and the entries each handles."""

    workers: int
    reduced_per_worker: int
    owned_entries: int
    owned_per_worker: int

    def to_dict(self) -> dict[str, object]:
        return {"workers": self.workers, "reduced_per_worker": self.reduced_per_worker,
                "owned_entries": self.owned_entries, "owned_per_worker": self.owned_per_worker}


@dataclass(frozen=True, slots=True, kw_only=True)
class FlexReduceSplit:
    """How FlexReduce splits a tensor over groups of unequal size, and what crosses between groups.

    Phase 1 reduce-scatters inside each group (a worker of a group of s
    reduces E/s entries); the tensor is then split evenly among the m groups
    (E/m each, E/(m·s) per worker); each group sends every other group its
    partial sums for that group's range (E/m entries each way per pair); an
    all-gather finally rebuilds the result everywhere.
    """

    entries: int
    groups: tuple[FlexGroup, ...]
    exchange_entries_per_direction: int
    exchange_entries: int
    allgather_entries: int
    sources: tuple[Cited, ...] = (_FLEX,)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "entries": self.entries, "groups": [g.to_dict() for g in self.groups],
            "exchange_entries_per_direction": self.exchange_entries_per_direction,
            "exchange_entries": self.exchange_entries, "allgather_entries": self.allgather_entries,
            "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes),
        }


_COUNTS = re.compile(r"\s*[0-9]+\s*(,\s*[0-9]+\s*)*")


def _group_sizes(groups: Any) -> tuple[int, ...]:
    if isinstance(groups, str):
        if not _COUNTS.fullmatch(groups):
            raise InputError(f"{groups!r} is not a list of worker counts; write them with commas, e.g. 2,3")
        sizes = tuple(int(x) for x in groups.split(","))
    elif isinstance(groups, Iterable):
        sizes = tuple(groups)
    else:
        raise InputError(f"{groups!r} is not a list of worker counts; write them with commas, e.g. 2,3")
    if not sizes:
        raise InputError("no groups given; list the workers of each group, e.g. groups=2,3")
    for i, s in enumerate(sizes, start=1):
        if not is_whole(s) or s < 1:
            raise InputError(f"group {i} has {s!r} workers; every group needs a whole number of workers >= 1")
    if len(sizes) < 2:
        raise InputError(f"one group of {sizes[0]} is a plain all-reduce; FlexReduce needs at least two "
                         "groups")
    return sizes


def flexreduce(entries: int, *, groups: Any) -> FlexReduceSplit:
    """FlexReduce over groups of unequal size: entries each worker reduces and owns, and what crosses.

    Parameters
    ----------
    entries : int
        Tensor entries E.
    groups : str or sequence of int
        Workers per group (``"2,3"``).

    Raises
    ------
    InputError
        For fewer than two groups, an empty group, or E that the groups
        cannot split evenly (m·s must divide E for every group of s).

    References
    ----------
    .. [1] J. Lee et al., "FlexReduce", DAC 2020 (unequal groups).

    Examples
    --------
    >>> split = flexreduce(12, groups="2,3")
    >>> [(g.reduced_per_worker, g.owned_per_worker) for g in split.groups]
    [(6, 3), (4, 2)]
    >>> split.exchange_entries_per_direction
    6
    """
    e = positive(entries, "entries", hint="give the number of tensor entries, e.g. entries=12")
    sizes = _group_sizes(groups)
    m = len(sizes)
    need = math.lcm(*(m * s for s in sizes))
    if e % need:
        worst = next(s for s in sizes if e % (m * s))
        raise InputError(
            f"{e} entries do not split evenly: each of the {m} groups owns {e}/{m}, and a worker of the "
            f"{worst}-worker group would own {Fraction(e, m * worst)} entries; use a multiple of {need} "
            "entries"
        )
    share = e // m
    return FlexReduceSplit(
        entries=e,
        groups=tuple(FlexGroup(workers=s, reduced_per_worker=e // s, owned_entries=share,
                               owned_per_worker=share // s) for s in sizes),
        exchange_entries_per_direction=share,
        exchange_entries=m * (m - 1) * share,
        allgather_entries=m * (m - 1) * share,
        notes=("the cross-group exchange excludes the final all-gather, reported apart",),
    )


# -- RAT ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RackTraffic:
    """Bytes crossing each level (rack links, the shared core) for RAT and for the flat ring."""

    racks: int
    per_rack: int
    n_bytes: Fraction
    rat: HierarchicalCost
    flat_ring: HierarchicalCost
    sources: tuple[Cited, ...] = (_RAT,)
    notes: tuple[str, ...] = ()

    @property
    def p(self) -> int:
        return self.racks * self.per_rack

    @property
    def core_bytes_rat(self) -> Fraction:
        return self.rat.bytes_crossing("core")

    @property
    def core_bytes_flat_ring(self) -> Fraction:
        return self.flat_ring.bytes_crossing("core")

    def to_dict(self) -> dict[str, object]:
        return {
            "racks": self.racks, "per_rack": self.per_rack, "p": self.p, "n_bytes": real(self.n_bytes),
            "core_bytes_rat": real(self.core_bytes_rat),
            "core_bytes_flat_ring": real(self.core_bytes_flat_ring),
            "levels": [{"name": a.name, "rat_bytes": real(a.bytes_crossing),
                        "flat_ring_bytes": real(b.bytes_crossing)}
                       for a, b in zip(self.rat.levels, self.flat_ring.levels, strict=True)],
            "rat_formula": self.rat.formula,
            "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes),
        }


def rack_aware(n: Any, *, racks: int, per_rack: int) -> RackTraffic:
    """Bytes crossing the shared core for RAT (reduce inside each rack first) and for a flat ring.

    RAT reduces inside each rack to a leader, runs a tree all-reduce of the
    full vector among the leaders across the core (a leader's rack aggregate
    goes up, the result comes back), and broadcasts inside each rack: this is
    ``hierarchical-reduce-bcast`` with a ``tree`` outer all-reduce on a
    (per_rack × racks) topology.  The flat ring runs over all ranks placed
    rack by rack.  Only bytes are reported: they do not depend on the links.

    Raises
    ------
    InputError
        For fewer than 2 racks or fewer than 1 worker per rack.

    References
    ----------
    .. [1] X. Wan et al., "RAT", APNet 2020 (reduce before crossing the core).

    Examples
    --------
    >>> t = rack_aware(1, racks=2, per_rack=4)  # n = 1 byte: counts in units of n
    >>> t.core_bytes_flat_ring, t.core_bytes_rat
    (Fraction(7, 2), Fraction(2, 1))
    """
    r = positive(racks, "racks", hint="give the number of racks, e.g. racks=2")
    w = positive(per_rack, "per_rack", hint="give the workers in each rack, e.g. per_rack=4")
    if r < 2:
        raise InputError(f"racks={r} leaves nothing to cross the core; give at least 2 racks")
    size = check_size(n)
    free = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(0), source="bytes only")
    topology = Topology((Level(size=w, link=free, name="rack"), Level(size=r, link=free, name="core")))
    return RackTraffic(
        racks=r, per_rack=w, n_bytes=size,
        rat=hierarchical_cost(topology, size, algorithm="hierarchical-reduce-bcast", outer="tree"),
        flat_ring=flat_ring(topology, size),
        notes=("counts for this layout (workers placed rack by rack), not every deployment; resilience also "
               "depends on the algorithm's failure handling",),
    )
