"""The hierarchical all-reduces as data: the flat collectives each runs down the levels and back up.

Both :mod:`~costmodel.collectives.hierarchical` (the cost on a topology) and
:mod:`~costmodel.collectives.hierarchical_formula` (the closed form) compose
these schemes, and the registry's :func:`~costmodel.collectives._registry.resolve`
names them when a user asks for one on a single link.  So this module sits
below all three: it reads no record and prices nothing.

References
----------
.. [1] A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep
   learning in TensorFlow", arXiv:1802.05799, 2018.
.. [2] NVIDIA, NCCL user guide, ``NCCL_CROSS_NIC``.
.. [3] MPICH, ``src/mpi/coll/allreduce/allreduce_intra_smp.c``.
.. [4] J. L. Träff, S. Hunold, "Decomposing MPI Collectives for Exploiting
   Multi-lane Communication", CLUSTER 2020.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from costmodel.errors import InputError, did_you_mean
from costmodel.names import Names, normalise
from costmodel.references import MPICH_SMP, NCCL, SERGEEV_2018, TRAFF_2020, Cited

__all__ = ["ALGORITHMS", "HOROVOD", "LANES", "MULTI_LANE", "NAMES", "OUTER", "REDUCE_BCAST", "RS_AR_AG",
           "SCHEMES", "SMP", "Scheme", "inner_algorithm", "is_hierarchical", "needs_topology", "scheme_named",
           "senders"]

HOROVOD = SERGEEV_2018.at(
    "Horovod's hierarchical all-reduce, NCCLHierarchicalAllreduce in horovod/common/ops/nccl_operations.cc: "
    "NCCL reduce-scatter in the node, MPI all-reduce across nodes, NCCL all-gather")
LANES = NCCL.at("NCCL_CROSS_NIC (user guide, environment variables): one ring per NIC, each on its own rail")
MULTI_LANE = TRAFF_2020.at("multi-lane decomposition: reduce-scatter in the node, one slice per lane "
                           "across nodes, all-gather in the node")
SMP = MPICH_SMP.at("MPIR_Allreduce_intra_smp: reduce to the node's local root, all-reduce among the "
                   "node roots, broadcast in the node")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Scheme:
    """A hierarchical algorithm: the flat collectives it runs down the levels and back up."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    down: str
    up: str
    inner: Mapping[str, tuple[str, str]]
    inner_aliases: Mapping[str, str]
    default_inner: str
    sources: tuple[Cited, ...]


RS_AR_AG = Scheme(
    name="hierarchical",
    aliases=("hier", "rs-ar-ag", "horovod", "multi-lane", "multilane"),
    summary="reduce-scatter inside each level, all-reduce of the slices across the outermost, "
            "all-gather back",
    down="reduce-scatter",
    up="allgather",
    inner={"ring": ("ring", "ring"), "recursive": ("recursive-halving", "recursive-doubling")},
    inner_aliases={"recursive-halving": "recursive", "recursive-doubling": "recursive", "rh": "recursive",
                   "rd": "recursive", "halving-doubling": "recursive"},
    default_inner="ring",
    sources=(HOROVOD, MULTI_LANE, LANES),
)
REDUCE_BCAST = Scheme(
    name="hierarchical-reduce-bcast",
    aliases=("smp", "hierarchical-reduce-broadcast", "reduce-bcast-hierarchical", "leader", "leaders"),
    summary="reduce to a leader inside each level, all-reduce among the outermost leaders, broadcast back",
    down="reduce",
    up="broadcast",
    inner={"binomial": ("binomial", "binomial")},
    inner_aliases={"tree": "binomial", "binomial-tree": "binomial"},
    default_inner="binomial",
    sources=(SMP, MULTI_LANE),
)
SCHEMES = (RS_AR_AG, REDUCE_BCAST)
ALGORITHMS: tuple[str, ...] = tuple(s.name for s in SCHEMES)
"""The hierarchical all-reduce algorithms, by canonical name."""
NAMES = Names("hierarchical algorithm", {s.name: s.aliases for s in SCHEMES})

OUTER = ("ring", "tree", "recursive-doubling", "rabenseifner", "naive", "double-binary-tree")
"""The all-reduce records composed across the outermost level."""


def scheme_named(name: Any) -> Scheme | None:
    """The scheme *name* (or an alias) names, or None."""
    key = NAMES.get(name)
    for scheme in SCHEMES:
        if key == scheme.name:
            return scheme
    return None


def is_hierarchical(name: str) -> bool:
    """Whether *name* (or an alias) names a hierarchical algorithm.

    >>> is_hierarchical("hier"), is_hierarchical("ring")
    (True, False)
    """
    return name in NAMES


def needs_topology(name: str) -> str:
    """Why the hierarchical all-reduce *name* has no cost on one link, and what to run instead.

    >>> needs_topology("hier").split(":")[0]
    "'hier' (hierarchical) is a hierarchical all-reduce"
    """
    canonical = NAMES.resolve(name, context="for allreduce")
    called = "" if normalise(name) == canonical else f" ({canonical})"
    return (f"{name!r}{called} is a hierarchical all-reduce: priced level by level on a topology, not on one "
            f"link; see its formula with formula('allreduce', '{canonical}'), and cost it with "
            f"compare_hierarchical('allreduce', ['{canonical}'], "
            "topology=topology_of(['SIZE:ALPHA:RATE', ...]))")


def inner_algorithm(scheme: Scheme, inner: str | None) -> str:
    """The canonical inner algorithm of *scheme* (its default for None)."""
    if inner is None:
        return scheme.default_inner
    key = normalise(str(inner))
    key = scheme.inner_aliases.get(key, key)
    if key not in scheme.inner:
        choices = sorted(scheme.inner)
        hint = did_you_mean(key, choices)
        tail = f"did you mean {hint!r}?" if hint else f"choose {' or '.join(choices)}"
        raise InputError(f"inner algorithm {inner!r} does not apply to {scheme.name}; {tail}")
    return key


def senders(scheme: Scheme, down: Sequence[Any], middle: Any, up: Sequence[Any]) -> tuple[Any, ...]:
    """The phases in which the busiest rank sends, each its record's busiest rank's bytes.

    Every rank sends the same in the inner phases of reduce-scatter/all-gather;
    an outermost leader is the busiest rank of reduce-bcast, and it sends only
    in the all-reduce and the broadcasts (see
    :func:`~costmodel.collectives.hierarchical.hierarchical_cost`).
    """
    return (*down, middle, *up) if scheme is RS_AR_AG else (middle, *up)
