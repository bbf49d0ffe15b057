"""Reduce: the root ends with the element-wise reduction of all ranks' vectors.

n is the full vector each rank holds.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, 'Reduce', and MPICH
   ``src/mpi/coll/reduce/``.
.. [2] R. Rabenseifner, "Optimization of collective reduction operations",
   ICCS 2004.
.. [3] E. Chan et al., "Collective communication: theory, practice, and
   experience", CCPE 19(13), 2007, lower bounds.
"""

from __future__ import annotations

from costmodel.collective_names import ALIASES
from costmodel.collectives._messages import Message, doubling, folded, halving, survivors
from costmodel.collectives._record import Algorithm, Bound, Collective, power_of_two
from costmodel.references import CHAN_2007, RABENSEIFNER_2004, THAKUR_2005

__all__ = ["ALGORITHMS", "COLLECTIVE"]


def _rabenseifner_folded(p: int) -> tuple[Message, ...]:
    """Fold in, then halve and gather on the p′ survivors."""
    q = survivors(p)
    return tuple(folded(p, (*halving(q), *doubling(q)), into=True, back=False))


BINOMIAL = Algorithm(
    collective="reduce",
    name="binomial",
    aliases=("tree", "binomial-tree"),
    summary="⌈log2 p⌉ steps; half the active ranks send their partial vector to the other half",
    latency=lambda p, n, m: m.clg(p),
    bandwidth=lambda p, n, m: m.clg(p) * n,
    compute=lambda p, n, m: m.clg(p) * n,
    bytes_sent=lambda p, n, m: n,
    chunks=lambda p, n, m: 1,
    schedule="binomial_reduce",
    source=THAKUR_2005.at("'Reduce'; MPICH reduce_intra_binomial.c"),
)

RABENSEIFNER = Algorithm(
    collective="reduce",
    name="rabenseifner",
    aliases=("rab", "reduce-scatter-gather"),
    summary="recursive-halving reduce-scatter, then binomial gather of the blocks to the root",
    latency=lambda p, n, m: 2 * m.lg(p),
    bandwidth=lambda p, n, m: 2 * (p - 1) / p * n,
    compute=lambda p, n, m: (p - 1) / p * n,
    bytes_sent=lambda p, n, m: (p - 1) / p * n + n / 2,
    chunks=lambda p, n, m: m.pow2(m.flg(p)),
    constraints=(power_of_two("rabenseifner-folded"),),
    messages=lambda p: (*halving(p), *doubling(p)),
    schedule="rabenseifner_reduce",
    source=RABENSEIFNER_2004.at("reduce-scatter then gather; MPICH reduce_intra_reduce_scatter_gather.c"),
)

RABENSEIFNER_FOLDED = Algorithm(
    collective="reduce",
    name="rabenseifner-folded",
    adapts="rabenseifner",
    summary="extra ranks fold in, then Rabenseifner's reduce on 2^⌊log2 p⌋ ranks",
    latency=lambda p, n, m: 2 * m.flg(p) + m.folds(p),
    bandwidth=lambda p, n, m: (m.folds(p) + 2 * (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p))) * n,
    compute=lambda p, n, m: (m.folds(p) + (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p))) * n,
    bytes_sent=lambda p, n, m: (m.pow2(m.flg(p)) - 1) / m.pow2(m.flg(p)) * n + n / 2,
    chunks=lambda p, n, m: m.pow2(m.flg(p)),
    messages=_rabenseifner_folded,
    schedule="rabenseifner_reduce",
    source=THAKUR_2005.at("'Reduce'; MPICH reduce_intra_reduce_scatter_gather.c"),
    notes=(
        "non-power-of-two p: each of the r = p - p' extra ranks (p' = 2^⌊log2 p⌋) first sends "
        "its vector to a partner (α + nβ + nγ); only the root needs the result, so nothing is "
        "sent back; [p ≠ p′] switches the fold off at a power of two, where the record costs "
        "exactly as rabenseifner",
    ),
)

ALGORITHMS = (BINOMIAL, RABENSEIFNER, RABENSEIFNER_FOLDED)

COLLECTIVE = Collective(
    name="reduce",
    aliases=ALIASES["reduce"],
    summary="the root ends with the reduction of all ranks' vectors",
    meaning_of_n="n is the full vector each rank holds (the root ends with the reduced one)",
    reduces=True,
    bound=Bound(
        latency=lambda p, n, m: m.clg(p),
        bandwidth=lambda p, n, m: n,
        compute=lambda p, n, m: (p - 1) / p * n,
        source=CHAN_2007.at("lower bounds, reduce"),
    ),
    algorithms=ALGORITHMS,
)
