"""All-gather: every rank ends with the concatenation of all ranks' blocks.

n is the full gathered output; each rank contributes a block of n/p bytes.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, 'Allgather' and
   MPICH ``src/mpi/coll/allgather/``.
.. [2] J. Bruck et al., "Efficient algorithms for all-to-all communications in
   multiport message-passing systems", IEEE TPDS 8(11), 1997.
.. [3] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007, lower bounds.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import doubling, folded_doubling, tree
from costmodel.collectives._record import Algorithm, Bound, Collective, power_of_two
from costmodel.references import BRUCK_1997, CHAN_2007, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]

RING = Algorithm(
    collective="allgather",
    name="ring",
    summary="p-1 steps; each forwards the block received in the previous step",
    latency=lambda p, n, m: p - 1,
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    schedule="ring_allgather",
    source=THAKUR_2005.at("'Allgather'; MPICH allgather_intra_ring.c"),
)

RECURSIVE_DOUBLING = Algorithm(
    collective="allgather",
    name="recursive-doubling",
    aliases=("rd", "recursive_doubling", "recdbl"),
    summary="log2 p exchanges with partners rank XOR 2^i, doubling the data held",
    latency=lambda p, n, m: m.lg(p),
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    constraints=(power_of_two("recursive-doubling-folded"),),
    messages=doubling,
    schedule="recursive_doubling_allgather",
    source=THAKUR_2005.at("'Allgather'; MPICH allgather_intra_recursive_doubling.c"),
)

RECURSIVE_DOUBLING_FOLDED = Algorithm(
    collective="allgather",
    name="recursive-doubling-folded",
    adapts="recursive-doubling",
    summary="extra ranks hand their block in, recursive doubling, the other blocks sent back",
    latency=lambda p, n, m: m.flg(p) + 2 * m.folds(p),
    bandwidth=lambda p, n, m: m.folds(p) * n + (m.pow2(m.flg(p)) - 1 + m.surplus(p)) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (m.pow2(m.flg(p)) - 1 + m.surplus(p) + m.folds(p) * (p - 1)) / p * n,
    messages=folded_doubling,
    schedule="recursive_doubling_allgather",
    source=THAKUR_2005.at("'Allgather' (non-power-of-two recursive doubling)"),
    notes=(
        "non-power-of-two p: each extra rank p'+i (p' = 2^⌊log2 p⌋) sends its block to rank i "
        "(α + nβ/p); in recursive doubling the windows holding doubled ranks are heavier, "
        "s(p) blocks more in all ((p' - 1 + s(p))nβ/p); rank i sends back the p - 1 blocks rank "
        "p'+i lacks (α + (p - 1)nβ/p, not its own block again): the fold adds 2α + nβ in all. "
        "[p ≠ p′] switches the fold off at a power of two, where the record costs exactly as "
        "recursive-doubling. MPICH uses a different fix-up of at most 2⌊log2 p⌋ steps; Bruck "
        "handles any p in ⌈log2 p⌉ steps",
    ),
)

BRUCK = Algorithm(
    collective="allgather",
    name="bruck",
    aliases=("dissemination",),
    summary="⌈log2 p⌉ steps; in step i each rank sends what it holds to rank - 2^i",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (p - 1) / p * n,
    messages=tree,
    schedule="bruck_allgather",
    source=BRUCK_1997.at("concatenation algorithm; Thakur et al. 2005 'Allgather'"),
    notes=("any p; the final local rotation of blocks is not charged",),
)

ALGORITHMS = (RING, RECURSIVE_DOUBLING, RECURSIVE_DOUBLING_FOLDED, BRUCK)

COLLECTIVE = Collective(
    name="allgather",
    aliases=ALIASES["allgather"],
    summary="every rank ends with all ranks' blocks",
    meaning_of_n="n is the full gathered output; each rank contributes n/p",
    reduces=False,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: (p - 1) / p * n,
        compute=lambda p, n, m: 0,
        source=CHAN_2007.at("lower bounds, allgather"),
    ),
    algorithms=ALGORITHMS,
)
