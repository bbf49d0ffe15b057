"""Gossip and decentralised SGD: graphs, mixing matrices, spectral gaps, consensus runs.

Generators apart from algorithms, as in networkx:

* :mod:`~costmodel.consensus.graphs`: ring, k-ring, torus, hypercube, complete, star,
  exponential, random regular, Erdős–Rényi and edge-list graphs (plain adjacency);
* :mod:`~costmodel.consensus.mixing`: uniform, Metropolis, lazy, best-constant and
  user mixing matrices, with their checks;
* :mod:`~costmodel.consensus.spectral`: ρ, the spectral gap and rounds to a target,
  in closed form where one exists;
* :mod:`~costmodel.consensus.gossip`: consensus runs, one D-SGD step, gossip against
  a ring all-reduce.

Nothing here imports numpy or scipy until a numeric path needs them.

Examples
--------
>>> from costmodel.consensus import consensus
>>> run = consensus("ring", 4, init="0,3,6,9", rounds=1)
>>> run.spectrum.rho_exact, run.rounds.rounds, [str(v) for v in run.trajectory[1].values]
(Fraction(1, 3), 5, ['4', '3', '6', '5'])
"""

from __future__ import annotations

from costmodel.consensus.citations import CITED
from costmodel.consensus.gossip import (
    GOSSIP_MODEL,
    ConsensusRound,
    ConsensusRun,
    DSGDStep,
    GossipComparison,
    consensus,
    dsgd_step,
    gossip_vs_allreduce,
    simulate,
)
from costmodel.consensus.graphs import (
    GRAPHS,
    Graph,
    complete,
    erdos_renyi,
    exponential,
    from_edges,
    generate,
    hypercube,
    k_ring,
    load_edge_list,
    parse_edge_list,
    random_regular,
    ring,
    star,
    torus,
)
from costmodel.consensus.laplacian import LaplacianExtremes, laplacian_extremes
from costmodel.consensus.mixing import WEIGHTS, Mixing, from_matrix, load_matrix, mixing_matrix, parse_matrix
from costmodel.consensus.spectral import (
    RoundsToTarget,
    Spectrum,
    parse_target,
    rounds_to_target,
    spectrum,
)

__all__ = [
    "CITED",
    "GOSSIP_MODEL",
    "GRAPHS",
    "WEIGHTS",
    "ConsensusRound",
    "ConsensusRun",
    "DSGDStep",
    "GossipComparison",
    "Graph",
    "LaplacianExtremes",
    "Mixing",
    "RoundsToTarget",
    "Spectrum",
    "complete",
    "consensus",
    "dsgd_step",
    "erdos_renyi",
    "exponential",
    "from_edges",
    "from_matrix",
    "generate",
    "gossip_vs_allreduce",
    "hypercube",
    "k_ring",
    "laplacian_extremes",
    "load_edge_list",
    "load_matrix",
    "mixing_matrix",
    "parse_edge_list",
    "parse_matrix",
    "parse_target",
    "random_regular",
    "ring",
    "rounds_to_target",
    "simulate",
    "spectrum",
    "star",
    "torus",
]
