"""Where each parallel group of a step lies on a topology, and so which link it uses.

The dp × tp × pp × cp ranks are numbered with the dimensions of *order* from the innermost (fastest
running) out: Megatron-LM's default ``tp-cp-ep-dp-pp`` puts a tensor-parallel group on consecutive
ranks, a context-parallel group at a stride of tp, a data-parallel group at a stride of tp·cp and a
pipeline group at a stride of tp·cp·dp (``megatron/core/parallel_state.py``,
``initialize_model_parallel``, ``order="tp-cp-ep-dp-pp"``); an order that leaves cp out has it right
after tp, as Megatron-LM does.  The gradients are reduced over the dp × cp ranks that hold the same
weights (Megatron-LM's data-parallel group "with context parallelism"), so the ``dp`` level is that
group's.
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

DIMENSIONS = ("tp", "cp", "dp", "pp")
MEGATRON_ORDER = "tp-dp-pp"
"""Megatron-LM's default rank order without context and expert parallelism, innermost first."""

SOURCE: Cited = MEGATRON_LM.at("megatron/core/parallel_state.py, initialize_model_parallel: "
                               "order='tp-cp-ep-dp-pp', tensor-parallel ranks consecutive")


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """Each dimension's level on the topology (``None`` for a dimension of size 1) and its link; ``dp``'s
    is the gradient reduction's group, dp × cp ranks.  Without context parallelism (cp = 1) the order
    and the levels leave cp out."""

    order: tuple[str, ...]
    levels: dict[str, int | None]
    links: dict[str, LinkParams]

    def describe(self, topology: Topology) -> str:
        """``tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)``."""
        where = [f"{d} on {topology.names[lv]}" for d in self.order if (lv := self.levels[d]) is not None]
        return f"{', '.join(where)} (rank order {'-'.join(self.order)})" if where else ""


def _order(order: str) -> tuple[str, ...]:
    names = tuple(x.strip().lower() for x in str(order).replace(",", "-").split("-"))
    if "cp" not in names and "tp" in names:
        at = names.index("tp") + 1
        names = (*names[:at], "cp", *names[at:])
    if sorted(names) != sorted(DIMENSIONS):
        raise InputError(f"order={order!r} is not an order of tp, dp and pp (and cp); give each once, "
                         f"innermost first, e.g. order={MEGATRON_ORDER}")
    return names


def _group_level(topology: Topology, sizes: dict[str, int], names: tuple[str, ...], within: set[str]) -> int:
    """The outermost level any group of the dimensions *within* crosses: the ranks that share every other
    coordinate form a group, and its first and last rank tell its level (levels nest)."""
    strides: dict[str, int] = {}
    stride = 1
    for name in names:
        strides[name] = stride
        stride *= sizes[name]
    ranks = stride
    low: dict[int, int] = {}
    high: dict[int, int] = {}
    for rank in range(ranks):
        key = sum(((rank // strides[n]) % sizes[n]) * strides[n] for n in names if n not in within)
        low.setdefault(key, rank)
        high[key] = rank
    return max(int(topology.level_of(low[k], high[k])) for k in low)


def place(topology: Topology, *, order: str = MEGATRON_ORDER, tp: int, dp: int, pp: int,
          cp: int = 1) -> Placement:
    """The level and link of each dimension of dp × tp × pp × cp ranks on *topology* (see the module notes).

    >>> from costmodel.topology import topology_of
    >>> topo = topology_of(["8:2us:300GB/s:nvlink", "64:5us:25GB/s:ib"])
    >>> place(topo, tp=8, dp=16, pp=4).describe(topo)
    'tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)'
    >>> place(topo, tp=2, dp=4, pp=1).describe(topo)
    'tp on nvlink, dp on nvlink (rank order tp-dp-pp)'
    >>> place(topo, tp=4, cp=2, dp=8, pp=1).describe(topo)
    'tp on nvlink, cp on nvlink, dp on ib (rank order tp-cp-dp-pp)'
    """
    names = _order(order)
    if cp == 1:  # no context parallelism: the order of tp, dp and pp
        names = tuple(n for n in names if n != "cp")
    sizes = {"tp": tp, "dp": dp, "pp": pp, "cp": cp}
    ranks = tp * dp * pp * cp
    if ranks > topology.p:
        what = "dp × tp × pp × cp" if cp > 1 else "dp × tp × pp"
        raise InputError(f"the topology holds {topology.p} ranks ({topology}) and {what} = {ranks}; "
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
    if cp > 1 and dp > 1:  # the gradients are reduced over dp × cp ranks
        levels["dp"] = _group_level(topology, sizes, names, {"dp", "cp"})
    elif cp > 1:
        levels["dp"] = levels["cp"]
    links = {name: topology.links[lv] for name, lv in levels.items() if lv is not None}
    return Placement(order=names, levels=levels, links=links)
