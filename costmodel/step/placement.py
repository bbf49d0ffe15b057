"""Where each parallel group of a step lies on a topology, and so which link it uses.

The dp × tp × pp ranks are numbered with the dimensions of *order* from the innermost (fastest
running) out: Megatron-LM's default ``tp-dp-pp`` puts a tensor-parallel group on consecutive
ranks, a data-parallel group at a stride of tp and a pipeline group at a stride of tp·dp
(``megatron/core/parallel_state.py``, ``initialize_model_parallel``, ``order="tp-cp-ep-dp-pp"``).
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

__all__ = ["DIMENSIONS", "MEGATRON_ORDER", "SOURCE", "Placement", "place"]

DIMENSIONS = ("tp", "dp", "pp")
MEGATRON_ORDER = "tp-dp-pp"
"""Megatron-LM's default rank order without context and expert parallelism, innermost first."""

SOURCE: Cited = MEGATRON_LM.at("megatron/core/parallel_state.py, initialize_model_parallel: "
                               "order='tp-cp-ep-dp-pp', tensor-parallel ranks consecutive")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Each dimension's level on the topology (``None`` for a dimension of size 1) and its link."""

    order: tuple[str, ...]
    levels: dict[str, int | None]
    links: dict[str, LinkParams]

    def describe(self, topology: Topology) -> str:
        """``tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)``."""
        where = [f"{d} on {topology.names[lv]}" for d in self.order if (lv := self.levels[d]) is not None]
        return f"{', '.join(where)} (rank order {'-'.join(self.order)})" if where else ""


def _order(order: str) -> tuple[str, ...]:
    names = tuple(x.strip().lower() for x in str(order).replace(",", "-").split("-"))
    if sorted(names) != sorted(DIMENSIONS):
        raise InputError(f"order={order!r} is not an order of tp, dp and pp; give each once, innermost "
                         f"first, e.g. order={MEGATRON_ORDER}")
    return names


def place(topology: Topology, *, order: str = MEGATRON_ORDER, tp: int, dp: int, pp: int) -> Placement:
    """The level and link of each dimension of dp × tp × pp ranks on *topology* (see the module notes).

    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["8:2us:300GB/s:nvlink", "64:5us:25GB/s:ib"])
    >>> place(topo, tp=8, dp=16, pp=4).describe(topo)
    'tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)'
    >>> place(topo, tp=2, dp=4, pp=1).describe(topo)
    'tp on nvlink, dp on nvlink (rank order tp-dp-pp)'
    """
    names = _order(order)
    sizes = {"tp": tp, "dp": dp, "pp": pp}
    ranks = tp * dp * pp
    if ranks > topology.p:
        raise InputError(f"the topology holds {topology.p} ranks ({topology}) and dp × tp × pp = {ranks}; "
                         "give levels that hold every rank")
    levels: dict[str, int | None] = {}
    stride = 1
    for name in names:
        n = sizes[name]
        if n == 1:
            levels[name] = None
        else:
            block = stride * n
            levels[name] = max(int(topology.level_of(q * block + r, q * block + r + (n - 1) * stride))
                               for q in range(ranks // block) for r in range(stride))
        stride *= n
    links = {name: topology.links[lv] for name, lv in levels.items() if lv is not None}
    return Placement(order=names, levels=levels, links=links)
