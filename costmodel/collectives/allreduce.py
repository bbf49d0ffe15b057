"""All-reduce: every rank ends with the element-wise reduction of all ranks' vectors.

n is the full vector each rank holds (nccl-tests' size S).

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1):49-66, 2005, 'Allreduce'
   and MPICH ``src/mpi/coll/allreduce/``.
.. [2] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007, lower bounds.
.. [3] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", JPDC 69(2), 2009 (ring).
.. [4] P. Sanders, J. Speck, J. L. Träff, "Two-tree algorithms for full
   bandwidth broadcast, reduction and scan", Parallel Computing 35(12), 2009.
.. [5] docs/theory/alpha-beta.md: the α–β model and these formulas, side by side.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import Message, folded, halving, survivors
from costmodel.collectives._record import Algorithm, Bound, Collective, Constraint, Extra, power_of_two
from costmodel.references import (
    CHAN_2007,
    PATARASUK_2009,
    SANDERS_2009,
    THAKUR_2005,
)

__all__ = ["ALGORITHMS", "COLLECTIVE"]


def _rabenseifner_folded(p: int) -> tuple[Message, ...]:
    """Fold in, halve and double on the p′ survivors, send the result back."""
    q = survivors(p)
    return tuple(folded(p, (*halving(q), *halving(q, reduce=False)), into=True, back=True))


RING = Algorithm(
    collective="allreduce",
    name="ring",
    summary="ring reduce-scatter then ring all-gather, p-1 steps each",
    latency=lambda p, n, m: 2 * (p - 1),
    bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
    compute=lambda p, n, m: (p - 1) / p * n,
    bytes_sent=lambda p, n, m: 2 * (p - 1) / p * n,
    schedule="ring_allreduce",
    source=PATARASUK_2009.at("ring algorithm"),
)

TREE = Algorithm(
    collective="allreduce",
    name="tree",
    aliases=("binomial", "reduce-broadcast", "reduce-bcast"),
    summary="unpipelined binomial reduce of the full vector, then binomial broadcast",
    latency=lambda p, n, m: 2 * m.clg(p),
    bandwidth=lambda p, n, m: 2 * m.clg(p) * n,
    compute=lambda p, n, m: m.clg(p) * n,
    bytes_sent=lambda p, n, m: m.clg(p) * n,
    chunks=lambda p, n, m: 1,
    schedule="tree_allreduce",
    source=THAKUR_2005.at("binomial-tree reduce, then binomial-tree broadcast, of the full vector"),
    notes=(
        "the basic full-vector tree; pipelined trees are far cheaper "
        "(see double-binary-tree)",
    ),
)

RECURSIVE_DOUBLING = Algorithm(
    collective="allreduce",
    name="recursive-doubling",
    aliases=("rd", "recursive_doubling", "recdbl"),
    summary="log2 p exchanges of the full vector with partners rank XOR 2^i",
    latency=lambda p, n, m: m.lg(p),
    bandwidth=lambda p, n, m: m.lg(p) * n,
    compute=lambda p, n, m: m.lg(p) * n,
    bytes_sent=lambda p, n, m: m.lg(p) * n,
    chunks=lambda p, n, m: 1,
    constraints=(power_of_two("recursive-doubling-folded"),),
    schedule="recursive_doubling_allreduce",
    source=THAKUR_2005.at("'Allreduce'; MPICH allreduce_intra_recursive_doubling.c"),
)

RECURSIVE_DOUBLING_FOLDED = Algorithm(
    collective="allreduce",
    name="recursive-doubling-folded",
    adapts="recursive-doubling",
    summary="r = p - 2^⌊log2 p⌋ extra ranks fold in, recursive doubling, result sent back",
    latency=lambda p, n, m: m.flg(p) + 2 * m.folds(p),
    bandwidth=lambda p, n, m: (m.flg(p) + 2 * m.folds(p)) * n,
    compute=lambda p, n, m: (m.flg(p) + m.folds(p)) * n,
    bytes_sent=lambda p, n, m: (m.flg(p) + m.folds(p)) * n,
    chunks=lambda p, n, m: 1,
    schedule="recursive_doubling_allreduce",
    source=THAKUR_2005.at("'Allreduce'; MPICH allreduce_intra_recursive_doubling.c"),
    notes=(
        "non-power-of-two p: each of the r = p - 2^⌊log2 p⌋ extra ranks first sends its "
        "vector to a partner (α + nβ + nγ) and receives the result at the end (α + nβ); "
        "[p ≠ p′] switches these two steps off at a power of two, where the record costs "
        "exactly as recursive-doubling",
    ),
)

RABENSEIFNER = Algorithm(
    collective="allreduce",
    name="rabenseifner",
    aliases=("rab", "reduce-scatter-allgather", "rsag"),
    summary="recursive-halving reduce-scatter, then recursive-doubling all-gather",
    latency=lambda p, n, m: 2 * m.lg(p),
    bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
    compute=lambda p, n, m: (p - 1) / p * n,
    bytes_sent=lambda p, n, m: 2 * (p - 1) / p * n,
    chunks=lambda p, n, m: m.pow2(m.flg(p)),
    constraints=(power_of_two("rabenseifner-folded"),),
    messages=lambda p: (*halving(p), *halving(p, reduce=False)),
    schedule="rabenseifner_allreduce",
    source=THAKUR_2005.at("'Allreduce'; MPICH allreduce_intra_reduce_scatter_allgather.c"),
)

RABENSEIFNER_FOLDED = Algorithm(
    collective="allreduce",
    name="rabenseifner-folded",
    adapts="rabenseifner",
    summary="extra ranks fold in, Rabenseifner on 2^⌊log2 p⌋ ranks, result sent back",
    latency=lambda p, n, m: 2 * m.flg(p) + 2 * m.folds(p),
    bandwidth=lambda p, n, m: (2 * m.folds(p) + 2 * (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p))) * n,
    compute=lambda p, n, m: (m.folds(p) + (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p))) * n,
    bytes_sent=lambda p, n, m: (m.folds(p) + 2 * (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p))) * n,
    chunks=lambda p, n, m: m.pow2(m.flg(p)),
    messages=_rabenseifner_folded,
    schedule="rabenseifner_allreduce",
    source=THAKUR_2005.at("'Allreduce'; MPICH allreduce_intra_reduce_scatter_allgather.c"),
    notes=(
        "non-power-of-two p: each of the r = p - p' extra ranks (p' = 2^⌊log2 p⌋) first sends "
        "its vector to a partner (α + nβ + nγ), the p' others run Rabenseifner, and the partner "
        "sends the result back (α + nβ); [p ≠ p′] switches the fold off at a power of two, "
        "where the record costs exactly as rabenseifner",
    ),
)

NAIVE = Algorithm(
    collective="allreduce",
    name="naive",
    aliases=("root", "naive-root", "gather-broadcast"),
    summary="a root receives every full vector in turn, reduces, and sends the result to each",
    latency=lambda p, n, m: 2 * (p - 1),
    bandwidth=lambda p, n, m: 2 * (p - 1) * n,
    compute=lambda p, n, m: (p - 1) * n,
    bytes_sent=lambda p, n, m: (p - 1) * n,
    chunks=lambda p, n, m: 1,
    schedule="naive_allreduce",
    source=THAKUR_2005.at("α–β cost model, applied to a root that receives and then sends p − 1 full "
                           "vectors one at a time"),
    notes=(
        "the root serialises p-1 receipts and p-1 sends of full vectors, exactly p times the "
        "ring's bandwidth term (2(p-1)nβ, often rounded up to 2pnβ)",
    ),
)

DOUBLE_BINARY_TREE = Algorithm(
    collective="allreduce",
    name="double-binary-tree",
    aliases=("dbt", "two-tree", "double-tree", "nccl-tree"),
    summary="pipelined reduce then broadcast over two complementary binary trees, n/2 each",
    latency=lambda p, n, m, k: 4 * (m.flg(p) + k - 1),
    bandwidth=lambda p, n, m, k: 2 * (m.flg(p) + k - 1) / k * n,
    compute=lambda p, n, m, k: (m.flg(p) + k - 1) / k * n,
    bytes_sent=lambda p, n, m, k: 2 * n,
    chunks=lambda p, n, m, k: 2 * k,
    constraints=(
        Constraint(
            "p ≥ 4", lambda p: p >= 4, None,
            lambda p: f"p={p}: below 4 ranks no rank is inner in one tree and a leaf in the other; "
                      "try 'ring'",
        ),
    ),
    extra=(
        Extra(
            symbol="k",
            name="blocks",
            description="blocks per tree; each block is n/(2k) bytes",
            upper=lambda p, n: max(1, int(n // 2)),
        ),
    ),
    schedule="double_binary_tree_allreduce",
    source=SANDERS_2009.at("two-tree reduction and broadcast"),
    notes=(
        "trees of height h = ⌊log2 p⌋; every rank is inner in one tree and a leaf in the other, "
        "so a block of each tree moves up (or down) one level per 2 steps of α + nβ/(2k): "
        "T(k) = 4(h + k - 1)(α + nβ/(2k)) + (h + k - 1)nγ/k; with γ = 0 the continuous optimum "
        "is k* = √((h-1)nβ/(2α)); costmodel uses the best integer k",
        "NCCL 2.4 and later use this design for their tree all-reduce",
        "the schedule advances one tree level per pair of steps; a greedier two-tree schedule "
        "can save two rounds at some p, so this is an upper bound for the best one",
    ),
)

ALGORITHMS = (
    RING,
    TREE,
    RECURSIVE_DOUBLING,
    RECURSIVE_DOUBLING_FOLDED,
    RABENSEIFNER,
    RABENSEIFNER_FOLDED,
    NAIVE,
    DOUBLE_BINARY_TREE,
)

COLLECTIVE = Collective(
    name="allreduce",
    aliases=ALIASES["allreduce"],
    summary="every rank ends with the reduction of all ranks' vectors",
    meaning_of_n="n is the full vector each rank holds (and ends with, reduced)",
    reduces=True,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
        compute=lambda p, n, m: (p - 1) / p * n,
        source=CHAN_2007.at("lower bounds, allreduce"),
    ),
    algorithms=ALGORITHMS,
)
