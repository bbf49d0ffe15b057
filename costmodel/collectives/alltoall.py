"""All-to-all: rank i's j-th block ends up as rank j's i-th block.

n is each rank's whole send buffer: p blocks of n/p bytes, its own included.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, 'Alltoall', and
   MPICH ``src/mpi/coll/alltoall/``.
.. [2] J. Bruck et al., "Efficient algorithms for all-to-all communications in
   multiport message-passing systems", IEEE TPDS 8(11), 1997.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import bruck_alltoall
from costmodel.collectives._record import Algorithm, Bound, Collective
from costmodel.references import BRUCK_1997, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]

PAIRWISE = Algorithm(
    collective="alltoall",
    name="pairwise",
    aliases=("pairwise-exchange",),
    summary="p-1 steps; in step i rank r sends block r+i to rank r+i and receives from r-i",
    latency=lambda p, n, m: p - 1,
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    schedule="pairwise_alltoall",
    source=THAKUR_2005.at("'Alltoall'; MPICH alltoall_intra_pairwise.c"),
)

BRUCK = Algorithm(
    collective="alltoall",
    name="bruck",
    aliases=("log", "index"),
    summary="⌈log2 p⌉ steps; in step i each rank forwards the blocks whose index has bit i set",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: m.popsum(p) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: m.popsum(p) / p * n,
    messages=bruck_alltoall,
    schedule="bruck_alltoall",
    source=BRUCK_1997.at("index algorithm; MPICH alltoall_intra_brucks.c"),
    notes=(
        "B(p) = Σ popcount(j) over j < p blocks per rank, p·log2(p)/2 for a power of two, "
        "so the β term is (n/2)·log2 p there; local rotations are not charged",
    ),
)

ALGORITHMS = (PAIRWISE, BRUCK)

COLLECTIVE = Collective(
    name="alltoall",
    aliases=ALIASES["alltoall"],
    summary="every rank sends a distinct block to every other rank",
    meaning_of_n="n is each rank's whole send buffer: p blocks of n/p, its own included",
    reduces=False,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: (p - 1) / p * n,
        compute=lambda p, n, m: 0,
        source=BRUCK_1997.at("lower bounds for the index operation"),
        notes=(
            "each rank must receive p-1 blocks of n/p, and in r one-port rounds information "
            "from at most 2^r ranks can reach it",
        ),
    ),
    algorithms=ALGORITHMS,
)
