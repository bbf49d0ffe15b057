"""Where each parallel group of a step lies on a topology, and so which link it uses.

The dp × tp × pp ranks are numbered with the dimensions of *order* from the innermost (fastest
running) out: Megatron-LM's default ``tp-ep-dp-pp`` puts a tensor-parallel group on consecutive
ranks, a data-parallel group at a stride of tp and a pipeline group at a stride of tp·dp
(``megatron/core/parallel_state.py``, ``initialize_model_parallel``, ``order="tp-cp-ep-dp-pp"``).
Expert parallelism splits the dp replicas into ep expert-parallel ranks (holding E/ep experts each)
times dp/ep expert-data-parallel ones (holding the same experts): Megatron-Core's expert grid
expert-tp × ep × expert-dp × pp over the same ranks, with the expert tensor parallelism equal to tp.
So ep sits next to dp in the order, and the whole data-parallel group is the block of the two.
A group of size n and stride st starting at rank b holds b, b + st, ..., b + (n − 1)·st; the
ranks between its first and last share every level above the outermost level those two differ
in (:meth:`~costmodel.topology.Topology.level_of`), so that level is the outermost any two of its
members cross, and the group's collectives are priced on its link: the slowest the group uses.
The group's level is the outermost over all its groups (a group that straddles two nodes makes
the whole dimension cross nodes: each step waits for its slowest group).
"""

from __future__ import annotations

from dataclasses import dataclass

from costmodel.errors import InputError
from costmodel.params import LinkParams
from costmodel.references import MEGATRON_LM, Cited
from costmodel.topology import Topology

__all__ = ["DIMENSIONS", "MEGATRON_ORDER", "SOURCE", "Placement", "canonical_order", "place"]

DIMENSIONS = ("tp", "ep", "dp", "pp")
MEGATRON_ORDER = "tp-ep-dp-pp"
"""Megatron-LM's default rank order without context parallelism, innermost first."""

SOURCE: Cited = MEGATRON_LM.at("megatron/core/parallel_state.py, initialize_model_parallel: "
                               "order='tp-cp-ep-dp-pp', tensor-parallel ranks consecutive; the expert grid "
                               "expert-tp × ep × expert-dp × pp")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Each dimension's level on the topology (``None`` for a dimension of size 1) and its link.

    With expert parallelism (ep > 1) *levels* and *links* also hold ``ep``, the expert-parallel group, and
    ``edp``, the expert-data-parallel group (the ranks holding the same experts); ``dp`` is the whole
    data-parallel group, ep × edp ranks.  Without it *order* leaves ep out.
    """

    order: tuple[str, ...]
    levels: dict[str, int | None]
    links: dict[str, LinkParams]

    def describe(self, topology: Topology) -> str:
        """``tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)``."""
        where = [f"{d} on {topology.names[lv]}" for d in self.order if (lv := self.levels[d]) is not None]
        return f"{', '.join(where)} (rank order {'-'.join(self.order)})" if where else ""


def canonical_order(order: str) -> tuple[str, ...]:
    """*order* as its dimensions, innermost first, ep placed just inside dp when it is left out.

    >>> canonical_order("tp-dp-pp")
    ('tp', 'ep', 'dp', 'pp')
    """
    names = tuple(x.strip().lower() for x in str(order).replace(",", "-").split("-"))
    if "ep" not in names and sorted(names) == sorted(("tp", "dp", "pp")):
        i = names.index("dp")
        names = (*names[:i], "ep", *names[i:])
    if sorted(names) != sorted(DIMENSIONS):
        raise InputError(f"order={order!r} is not an order of tp, dp and pp (and ep); give each once, "
                         f"innermost first, e.g. order={MEGATRON_ORDER}")
    if abs(names.index("ep") - names.index("dp")) != 1:
        raise InputError(f"order={order!r} parts ep from dp; the expert-parallel ranks split the "
                         f"data-parallel replicas, so ep sits next to dp, e.g. order={MEGATRON_ORDER}")
    return names


def _level(topology: Topology, ranks: int, n: int, stride: int) -> int:
    """The outermost level any group of *n* ranks at *stride* crosses (the groups tile the ranks)."""
    block = stride * n
    return max(int(topology.level_of(q * block + r, q * block + r + (n - 1) * stride))
               for q in range(ranks // block) for r in range(stride))


def place(topology: Topology, *, order: str = MEGATRON_ORDER, tp: int, dp: int, pp: int, ep: int = 1
          ) -> Placement:
    """The level and link of each dimension of dp × tp × pp ranks on *topology* (see the module notes).

    With *ep* > 1 the dp replicas are ep expert-parallel ranks × dp/ep expert-data-parallel ones, placed
    as *order* says (Megatron-Core's expert grid).

    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["8:2us:300GB/s:nvlink", "64:5us:25GB/s:ib"])
    >>> place(topo, tp=8, dp=16, pp=4).describe(topo)
    'tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)'
    >>> place(topo, tp=2, dp=4, pp=1).describe(topo)
    'tp on nvlink, dp on nvlink (rank order tp-dp-pp)'
    >>> place(topo, tp=1, dp=64, pp=1, ep=8).describe(topo)
    'ep on nvlink, dp on ib (rank order tp-ep-dp-pp)'
    """
    names = canonical_order(order)
    if ep < 1 or dp % ep:
        raise InputError(f"ep={ep} does not divide dp={dp}; the expert-parallel ranks split the "
                         "data-parallel replicas")
    sizes = {"tp": tp, "ep": ep, "dp": dp // ep, "pp": pp}
    ranks = tp * dp * pp
    if ranks > topology.p:
        raise InputError(f"the topology holds {topology.p} ranks ({topology}) and dp × tp × pp = {ranks}; "
                         "give levels that hold every rank")
    levels: dict[str, int | None] = {}
    strides: dict[str, int] = {}
    stride = 1
    for name in names:
        n = sizes[name]
        strides[name] = stride
        levels[name] = None if n == 1 else _level(topology, ranks, n, stride)
        stride *= n
    if ep > 1:
        levels["edp"] = levels["dp"]
        inner = min(strides["ep"], strides["dp"])  # the two are next to each other: one block of dp ranks
        levels["dp"] = _level(topology, ranks, dp, inner)
        shown = names
    else:
        del levels["ep"]
        shown = tuple(n for n in names if n != "ep")
    links = {name: topology.links[lv] for name, lv in levels.items() if lv is not None}
    return Placement(order=shown, levels=levels, links=links)
