"""Broadcast: the root's vector ends up on every rank.

n is the full vector at the root.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, 'Broadcast', and
   MPICH ``src/mpi/coll/bcast/``.
.. [2] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007: lower bounds and the long-vector
   scatter/collect broadcast of van de Geijn et al.
"""

from __future__ import annotations

from fractions import Fraction

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import Message, doubling, folded, halving, survivors, tree
from costmodel.collectives._record import Algorithm, Bound, Collective, Extra, power_of_two
from costmodel.references import CHAN_2007, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]


def _scatter_doubling_folded(p: int) -> tuple[Message, ...]:
    """Scatter and all-gather on the p′ survivors, then the whole vector to each extra rank."""
    q = survivors(p)
    return tuple(folded(p, (*halving(q, reduce=False), *doubling(q)), into=False, back=True))


BINOMIAL = Algorithm(
    collective="broadcast",
    name="binomial",
    aliases=("tree", "binomial-tree"),
    summary="⌈log2 p⌉ steps; every rank holding the vector sends it to one more rank",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: m.clg(p) * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: m.clg(p) * n,
    chunks=lambda p, n, m: 1,
    schedule="binomial_broadcast",
    source=THAKUR_2005.at("'Broadcast'; MPICH bcast_intra_binomial.c"),
)

SCATTER_ALLGATHER = Algorithm(
    collective="broadcast",
    name="scatter-allgather",
    aliases=("van-de-geijn", "scatter-ring-allgather", "scatter-ring"),
    summary="binomial scatter of n/p blocks, then ring all-gather (van de Geijn)",
    latency=lambda p, n, m: m.clg(p) + p - 1,
    bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: 2 * (p - 1) / p * n,
    messages=lambda p: (*tree(p), Message(Fraction(p - 1), Fraction(1, p))),
    schedule="scatter_allgather_broadcast",
    source=THAKUR_2005.at("'Broadcast'; MPICH bcast_intra_scatter_ring_allgather.c"),
    notes=(
        "latency (⌈log2 p⌉ + p - 1)α as in MPICH (Thakur et al. 2005); Chan et al. 2007 "
        "count (p + ⌈log2 p⌉)α for the same scatter/collect broadcast",
    ),
)

SCATTER_RECURSIVE_DOUBLING = Algorithm(
    collective="broadcast",
    name="scatter-recursive-doubling",
    aliases=("scatter-rd", "scatter-recursive-doubling-allgather"),
    summary="binomial scatter of n/p blocks, then recursive-doubling all-gather",
    latency=lambda p, n, m: 2 * m.lg(p),
    bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: 2 * (p - 1) / p * n,
    constraints=(power_of_two("scatter-recursive-doubling-folded"),),
    messages=lambda p: (*halving(p, reduce=False), *doubling(p)),
    schedule="scatter_recursive_doubling_broadcast",
    source=THAKUR_2005.at("'Broadcast'; MPICH bcast_intra_scatter_recursive_doubling_allgather.c"),
)

SCATTER_RECURSIVE_DOUBLING_FOLDED = Algorithm(
    collective="broadcast",
    name="scatter-recursive-doubling-folded",
    adapts="scatter-recursive-doubling",
    summary="scatter n/p′ blocks to p′ = 2^⌊log2 p⌋ ranks, recursive doubling, whole vector to the rest",
    latency=lambda p, n, m: 2 * m.flg(p) + m.folds(p),
    bandwidth=lambda p, n, m: (2 * (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p)) + m.folds(p)) * n,
    compute=lambda p, n, m: 0,
    bytes_sent=lambda p, n, m: (2 * (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p)) + m.folds(p)) * n,
    chunks=lambda p, n, m: m.pow2(m.flg(p)),
    messages=_scatter_doubling_folded,
    schedule="scatter_recursive_doubling_broadcast",
    source=THAKUR_2005.at("'Broadcast'; MPICH bcast_intra_scatter_recursive_doubling_allgather.c"),
    notes=(
        "non-power-of-two p: the r = p - p' extra ranks (p' = 2^⌊log2 p⌋) hold no data a "
        "broadcast needs, so nothing folds in: the root scatters p' blocks of n/p' over the p' "
        "others (log2 p' steps, (p' - 1)/p'·n), they all-gather by recursive doubling (the same "
        "again), and rank i sends the whole vector to extra rank p'+i (α + nβ): "
        "2⌊log2 p⌋ + 1 steps and 2(p' - 1)/p'·n + n. [p ≠ p′] switches the last step off at a "
        "power of two, where the record costs exactly as scatter-recursive-doubling",
        "for long vectors at such p MPICH uses scatter-allgather (a ring all-gather, "
        "2(p - 1)/p·n) instead; this fold trades that bandwidth for ⌈log2 p⌉ + p - 2⌊log2 p⌋ - 2 "
        "fewer rounds",
    ),
)

PIPELINED_CHAIN = Algorithm(
    collective="broadcast",
    name="pipelined-chain",
    aliases=("chain", "pipeline", "pipelined"),
    summary="ranks in a chain; the vector flows down it in k segments",
    latency=lambda p, n, m, k: p + k - 2,
    bandwidth=lambda p, n, m, k: (p + k - 2) / k * n,
    compute=lambda p, n, m, k: 0,
    bytes_sent=lambda p, n, m, k: n,
    chunks=lambda p, n, m, k: k,
    extra=(
        Extra(
            symbol="k",
            name="segments",
            description="segments of n/k bytes",
            upper=lambda p, n: max(1, int(n)),
        ),
    ),
    schedule="pipelined_chain_broadcast",
    source=CHAN_2007.at("'pipelined' broadcast; Thakur et al. 2005 'Broadcast'"),
    notes=(
        "T(k) = (p + k - 2)(α + nβ/k); the continuous optimum is k* = √((p-2)nβ/α) with "
        "T* = (√((p-2)α) + √(nβ))²; costmodel uses the best integer k",
    ),
)

ALGORITHMS = (
    BINOMIAL,
    SCATTER_ALLGATHER,
    SCATTER_RECURSIVE_DOUBLING,
    SCATTER_RECURSIVE_DOUBLING_FOLDED,
    PIPELINED_CHAIN,
)

COLLECTIVE = Collective(
    name="broadcast",
    aliases=ALIASES["broadcast"],
    summary="the root's vector ends up on every rank",
    meaning_of_n="n is the full vector at the root",
    reduces=False,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: n,
        compute=lambda p, n, m: 0,
        source=CHAN_2007.at("lower bounds, broadcast"),
    ),
    algorithms=ALGORITHMS,
)
