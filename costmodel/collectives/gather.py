"""Gather: the root ends with every rank's block.

n is the full buffer at the root after the gather; each rank contributes n/p.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, and MPICH
   ``src/mpi/coll/gather/gather_intra_binomial.c``.
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
    collective="gather",
    name="binomial",
    aliases=("tree", "binomial-tree"),
    summary="⌈log2 p⌉ steps up a binomial tree; each rank forwards its whole subtree's blocks",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (
        m.max(p - m.pow2(m.clg(p) - 1), m.pow2(m.clg(p) - 2)) / p * n
    ),
    messages=tree,
    schedule="binomial_gather",
    source=THAKUR_2005.at("MPICH gather_intra_binomial.c"),
    notes=(
        "the busiest sender is the root's child with the largest subtree, "
        "max(p - 2^(⌈log2 p⌉-1), 2^(⌈log2 p⌉-2)) blocks",
    ),
)

NAIVE = Algorithm(
    collective="gather",
    name="naive",
    aliases=("linear", "flat"),
    summary="every rank sends its block straight to the root, which receives them in turn",
    latency=lambda p, n, m: p - 1,
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: n / p,
    schedule="naive_gather",
    source=CHAN_2007.at("short-vector (linear) gather"),
)

ALGORITHMS = (BINOMIAL, NAIVE)

COLLECTIVE = Collective(
    name="gather",
    aliases=ALIASES["gather"],
    summary="the root ends with every rank's block",
    meaning_of_n="n is the full buffer at the root; each rank contributes n/p",
    reduces=False,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: (p - 1) / p * n,
        compute=lambda p, n, m: 0,
        source=CHAN_2007.at("lower bounds, gather"),
    ),
    algorithms=ALGORITHMS,
)
