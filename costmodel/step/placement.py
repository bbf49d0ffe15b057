"""Where each parallel group of a step lies on a topology, and so which link it uses.

The dp × tp × pp × cp ranks are numbered with the dimensions of *order* from the innermost (fastest
running) out, as Megatron-Core builds its groups (``megatron/core/parallel_state.py``,
``initialize_model_parallel``, ``order="tp-cp-ep-dp-pp"``): its default puts a tensor-parallel group on
consecutive ranks, a context-parallel group at a stride of tp, a data-parallel group at a stride of
tp·cp and a pipeline group at a stride of tp·cp·dp; an order that leaves cp out has it right after tp,
and one that leaves ep out has it just inside dp, which gives Megatron-Core's default.  The gradients
are reduced over the dp × cp ranks that hold the same weights (Megatron-Core's data-parallel group
"with context parallelism"), so the ``dp`` level is that group's.

Expert parallelism is carved out of those same dp × cp ranks: Megatron-Core builds a second, expert
grid over the same world with ``RankGenerator(tp=expert_tp, ep=ep, dp=expert_dp, pp=pp, cp=1,
order=order)``, where ``expert_dp = world // (expert_tp · ep · pp)``; with the expert tensor
parallelism equal to tp that is expert_dp = dp·cp/ep, so ep must divide dp·cp.  The ep ranks hold
E/ep experts each and the expert-data-parallel group (``edp``) the ranks holding the same experts; the
two tile the dp × cp block, so cp, ep and dp sit next to each other in the order.
A group of size n and stride st starting at rank b holds b, b + st, ..., b + (n − 1)·st; the
ranks between its first and last share every level above the outermost level those two differ
in (:meth:`~costmodel.topology.Topology.level_of`), so that level is the outermost any two of its
members cross, and the group's collectives are priced on its link: the slowest the group uses.
The group's level is the outermost over all its groups (a group that straddles two nodes makes
the whole dimension cross nodes: each step waits for its slowest group).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from costmodel.errors import InputError
from costmodel.params import LinkParams
from costmodel.references import MEGATRON_LM, Cited
from costmodel.topology import Topology

__all__ = ["DIMENSIONS", "MEGATRON_ORDER", "SOURCE", "Placement", "canonical_order", "place"]

DIMENSIONS = ("tp", "cp", "ep", "dp", "pp")
MEGATRON_ORDER = "tp-cp-ep-dp-pp"
"""Megatron-Core's default rank order, innermost first (``initialize_model_parallel``'s ``order``)."""

SOURCE: Cited = MEGATRON_LM.at("megatron/core/parallel_state.py, initialize_model_parallel: "
                               "order='tp-cp-ep-dp-pp', tensor-parallel ranks consecutive; the expert grid "
                               "RankGenerator(tp=expert_tp, ep=ep, dp=expert_dp, pp=pp, cp=1) with "
                               "expert_dp = world // (expert_tp·ep·pp)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Each dimension's level on the topology (``None`` for a dimension of size 1) and its link; ``dp``'s
    is the gradient reduction's group, dp × cp ranks.

    With expert parallelism (ep > 1) *levels* and *links* also hold ``ep``, the expert-parallel group, and
    ``edp``, the expert-data-parallel group (the ranks holding the same experts, dp·cp/ep of them).  The
    order and the levels leave out cp when cp = 1 and ep when ep = 1.
    """

    order: tuple[str, ...]
    levels: dict[str, int | None]
    links: dict[str, LinkParams]
    together: dict[str, int] = field(default_factory=dict)
    """For a dimension above the innermost level: how many ranks of its first group share the first
    domain of the level below its own (for a group that crosses nodes, its ranks in one node)."""

    def describe(self, topology: Topology) -> str:
        """``tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)``."""
        where = [f"{d} on {topology.names[lv]}" for d in self.order if (lv := self.levels[d]) is not None]
        return f"{', '.join(where)} (rank order {'-'.join(self.order)})" if where else ""


def canonical_order(order: str) -> tuple[str, ...]:
    """*order* as its dimensions, innermost first: cp placed right after tp and ep just inside dp when
    they are left out (Megatron-Core's default).

    >>> canonical_order("tp-dp-pp")
    ('tp', 'cp', 'ep', 'dp', 'pp')
    """
    names = tuple(x.strip().lower() for x in str(order).replace(",", "-").split("-"))
    if "cp" not in names and "tp" in names:
        at = names.index("tp") + 1
        names = (*names[:at], "cp", *names[at:])
    if "ep" not in names and "dp" in names:
        at = names.index("dp")
        names = (*names[:at], "ep", *names[at:])
    if sorted(names) != sorted(DIMENSIONS):
        raise InputError(f"order={order!r} is not an order of tp, dp and pp (and cp, ep); give each once, "
                         f"innermost first, e.g. order={MEGATRON_ORDER}")
    return names


def _strides(sizes: dict[str, int], names: tuple[str, ...]) -> dict[str, int]:
    """The rank stride of each dimension, *names* innermost first."""
    strides: dict[str, int] = {}
    stride = 1
    for name in names:
        strides[name] = stride
        stride *= sizes[name]
    return strides


def _group_level(topology: Topology, sizes: dict[str, int], names: tuple[str, ...], within: set[str]) -> int:
    """The outermost level any group of the dimensions *within* crosses: the ranks that share every other
    coordinate form a group, and its first and last rank tell its level (levels nest).  A group's first
    rank f has every coordinate of *within* at 0 and its last, f + span, has each at its largest; the
    group crosses level i (whose domains hold T ranks) when f and f + span lie in two of them, that is
    when f mod T + span ≥ T.  Only the residues of the first ranks mod T matter, so a dimension whose
    stride T divides adds nothing and the others are summed mod T, each over one period of its multiples of
    the stride mod T: the outermost level crossed is found without enumerating every group."""
    strides = _strides(sizes, names)
    span = sum((sizes[n] - 1) * strides[n] for n in within)
    for level in range(len(topology.sizes) - 1, 0, -1):
        domain = topology.strides[level]
        residues = {0}
        for n in names:
            if n not in within and strides[n] % domain:
                period = domain // math.gcd(strides[n], domain)  # k·stride mod T repeats after it
                residues = {(r + k * strides[n]) % domain for r in residues
                            for k in range(min(sizes[n], period))}
        if max(residues) + span >= domain:
            return level
    return 0


def _together(topology: Topology, sizes: dict[str, int], names: tuple[str, ...], within: set[str],
              level: int) -> int:
    """How many ranks of the group of rank 0 over the dimensions *within* lie in rank 0's domain of the level
    below *level* (its node, for a group that crosses nodes).

    The group's ranks are the mixed-radix numbers whose digits outside *within* are 0, and a dimension's
    stride exceeds the largest offset of the dimensions inside it, so they are counted digit by digit from
    the outermost, without listing the group (a dp of 10^9 is counted as fast as one of 8)."""
    strides = _strides(sizes, names)
    below = math.prod(topology.sizes[:level])
    count, inner = 0, math.prod(sizes[n] for n in names if n in within)
    for n in reversed([n for n in names if n in within]):  # outermost first
        inner //= sizes[n]
        digit = below // strides[n]
        count += min(digit, sizes[n]) * inner
        if digit >= sizes[n]:
            break
        below -= digit * strides[n]
    else:
        count += below > 0  # the group's rank 0 itself: every digit 0
    return count


def _grid_levels(topology: Topology, sizes: dict[str, int], names: tuple[str, ...]) -> dict[str, int | None]:
    """The level of each dimension of one grid (``None`` for a dimension of size 1)."""
    return {n: None if sizes[n] == 1 else _group_level(topology, sizes, names, {n}) for n in names}


def place(topology: Topology, *, order: str = MEGATRON_ORDER, tp: int, dp: int, pp: int, cp: int = 1,
          ep: int = 1) -> Placement:
    """The level and link of each dimension of dp × tp × pp × cp ranks on *topology* (see the module notes).

    With *ep* > 1 the dp × cp ranks are also ep expert-parallel ranks × dp·cp/ep expert-data-parallel
    ones, numbered as *order* says with cp left out (Megatron-Core's expert grid).

    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["8:2us:300GB/s:nvlink", "64:5us:25GB/s:ib"])
    >>> place(topo, tp=8, dp=16, pp=4).describe(topo)
    'tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)'
    >>> place(topo, tp=2, dp=4, pp=1).describe(topo)
    'tp on nvlink, dp on nvlink (rank order tp-dp-pp)'
    >>> place(topo, tp=4, cp=2, dp=8, pp=1).describe(topo)
    'tp on nvlink, cp on nvlink, dp on ib (rank order tp-cp-dp-pp)'
    >>> place(topo, tp=1, dp=64, pp=1, ep=8).describe(topo)
    'ep on nvlink, dp on ib (rank order tp-ep-dp-pp)'
    >>> p = place(topo, tp=2, cp=2, dp=16, pp=1, ep=8)
    >>> p.describe(topo), topo.names[p.levels["edp"]]
    ('tp on nvlink, cp on nvlink, ep on ib, dp on ib (rank order tp-cp-ep-dp-pp)', 'ib')
    """
    names = canonical_order(order)
    if ep < 1 or (dp * cp) % ep:
        raise InputError(f"ep={ep} does not divide dp·cp = {dp * cp}; the expert-parallel ranks split the "
                         "data-parallel and context-parallel ranks")
    ranks = tp * dp * pp * cp
    if ranks > topology.p:
        what = "dp × tp × pp × cp" if cp > 1 else "dp × tp × pp"
        raise InputError(f"the topology holds {topology.p} ranks ({topology}) and {what} = {ranks}; "
                         "give levels that hold every rank")
    block = ("cp", "ep", "dp") if cp > 1 else ("ep", "dp")
    if ep > 1 and not any(names[i:i + len(block)] == tuple(sorted(block, key=names.index))
                          for i in range(len(names))):
        also, ranks_of = ((" and cp", "data-parallel and context-parallel") if cp > 1
                          else ("", "data-parallel"))
        raise InputError(f"order={order!r} parts ep from dp{also}; the expert-parallel ranks split the "
                         f"{ranks_of} ranks, so ep sits next to them, e.g. order={MEGATRON_ORDER}")
    dense = tuple(n for n in names if n != "ep")
    sizes = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
    levels = _grid_levels(topology, sizes, dense)
    if cp > 1 and dp > 1:  # the gradients are reduced over dp × cp ranks
        levels["dp"] = _group_level(topology, sizes, dense, {"dp", "cp"})
    elif cp > 1:
        levels["dp"] = levels["cp"]
    if ep > 1:  # Megatron-Core's expert grid over the same ranks: expert-tp = tp, cp = 1
        expert = tuple(n for n in names if n != "cp")
        expert_levels = _grid_levels(topology, {"tp": tp, "ep": ep, "dp": dp * cp // ep, "pp": pp}, expert)
        levels["ep"] = expert_levels["ep"]
        levels["edp"] = expert_levels["dp"]
    shown = tuple(n for n in names if not (n == "cp" and cp == 1) and not (n == "ep" and ep == 1))
    levels = {n: levels[n] for n in (*shown, "edp") if n in levels}
    links = {name: topology.links[lv] for name, lv in levels.items() if lv is not None}
    together = {n: _together(topology, sizes, dense, {"dp", "cp"} if n == "dp" else {n}, lv)
                for n, lv in levels.items() if lv and n in sizes}
    return Placement(order=shown, levels=levels, links=links, together=together)
