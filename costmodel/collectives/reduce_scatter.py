"""Reduce-scatter: the reduction of all ranks' vectors, split so each rank ends with n/p of it.

n is the full input vector each rank holds; each rank ends with one reduced
block of n/p bytes.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, 'Reduce-Scatter' and
   MPICH ``src/mpi/coll/reduce_scatter/``.
.. [2] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007, lower bounds.
.. [3] R. Rabenseifner, "Optimization of collective reduction operations", ICCS 2004.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import folded_halving, halving
from costmodel.collectives._record import Algorithm, Bound, Collective, power_of_two
from costmodel.references import CHAN_2007, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]

RING = Algorithm(
    collective="reduce-scatter",
    name="ring",
    aliases=("pairwise",),
    summary="p-1 steps; each passes one partially reduced block of n/p to the next rank",
    latency=lambda p, n, m: p - 1,
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: (p - 1) / p * n,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    schedule="ring_reduce_scatter",
    source=THAKUR_2005.at("'Reduce-Scatter'; MPICH reduce_scatter_intra_pairwise.c"),
    notes=("MPICH's pairwise exchange has the same cost: p-1 steps of n/p bytes",),
)

RECURSIVE_HALVING = Algorithm(
    collective="reduce-scatter",
    name="recursive-halving",
    aliases=("rh", "recursive_halving", "rechlv"),
    summary="log2 p exchanges with partners rank XOR p/2^i, halving the active buffer",
    latency=lambda p, n, m: m.lg(p),
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: (p - 1) / p * n,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    constraints=(power_of_two("recursive-halving-folded"),),
    messages=halving,
    schedule="recursive_halving_reduce_scatter",
    source=THAKUR_2005.at("'Reduce-Scatter'; MPICH reduce_scatter_intra_recursive_halving.c"),
)

RECURSIVE_HALVING_FOLDED = Algorithm(
    collective="reduce-scatter",
    name="recursive-halving-folded",
    adapts="recursive-halving",
    summary="extra ranks fold in, recursive halving on 2^⌊log2 p⌋ ranks, blocks sent back",
    latency=lambda p, n, m: m.flg(p) + 2 * m.folds(p),
    bandwidth=lambda p, n, m: m.folds(p) * n + (m.pow2(m.flg(p)) - 1 + m.surplus(p) + m.folds(p)) / p * n,
    compute=lambda p, n, m: m.folds(p) * n + (m.pow2(m.flg(p)) - 1 + m.surplus(p)) / p * n,
    bytes_sent=lambda p, n, m: (p - 1 + m.folds(p)) / p * n,
    messages=folded_halving,
    schedule="recursive_halving_reduce_scatter",
    source=THAKUR_2005.at("'Reduce-Scatter'; MPICH reduce_scatter_intra_recursive_halving.c"),
    notes=(
        "non-power-of-two p: each extra rank p'+i (p' = 2^⌊log2 p⌋) sends its whole vector to "
        "rank i (α + nβ + nγ); halving then splits blocks by owner, so a surviving rank that "
        "owns two blocks makes halves uneven: the heaviest exchanges carry s(p) blocks more in "
        "all; finally each extra rank receives its block (α + nβ/p); [p ≠ p′] switches the fold "
        "off at a power of two, where the record costs exactly as recursive-halving",
    ),
)

ALGORITHMS = (RING, RECURSIVE_HALVING, RECURSIVE_HALVING_FOLDED)

COLLECTIVE = Collective(
    name="reduce-scatter",
    aliases=ALIASES["reduce-scatter"],
    summary="each rank ends with one block (n/p) of the reduction of all vectors",
    meaning_of_n="n is the full input vector each rank holds; each rank ends with n/p of the result",
    reduces=True,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: (p - 1) / p * n,
        compute=lambda p, n, m: (p - 1) / p * n,
        source=CHAN_2007.at("lower bounds, reduce-scatter"),
    ),
    algorithms=ALGORITHMS,
)
