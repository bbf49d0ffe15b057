"""Scatter: the root's buffer is split into p blocks and rank i ends with block i.

n is the full buffer at the root; each rank ends with n/p.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, and MPICH
   ``src/mpi/coll/scatter/scatter_intra_binomial.c``.
.. [2] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007, lower bounds.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import tree
from costmodel.collectives._record import Algorithm, Bound, Collective
from costmodel.references import CHAN_2007, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]

BINOMIAL = Algorithm(
    collective="scatter",
    name="binomial",
    aliases=("tree", "binomial-tree"),
    summary="⌈log2 p⌉ steps down a binomial tree; each rank passes on its subtree's blocks",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    messages=tree,
    schedule="binomial_scatter",
    source=THAKUR_2005.at("MPICH scatter_intra_binomial.c"),
)

NAIVE = Algorithm(
    collective="scatter",
    name="naive",
    aliases=("linear", "flat"),
    summary="the root sends each rank its block in turn",
    latency=lambda p, n, m: p - 1,
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    schedule="naive_scatter",
    source=CHAN_2007.at("short-vector (linear) scatter"),
)

ALGORITHMS = (BINOMIAL, NAIVE)

COLLECTIVE = Collective(
    name="scatter",
    aliases=ALIASES["scatter"],
    summary="rank i ends with block i of the root's buffer",
    meaning_of_n="n is the full buffer at the root; each rank ends with n/p",
    reduces=False,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: (p - 1) / p * n,
        compute=lambda p, n, m: 0,
        source=CHAN_2007.at("lower bounds, scatter"),
    ),
    algorithms=ALGORITHMS,
)
