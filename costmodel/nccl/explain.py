"""The latency of one tuning-table entry written out with NCCL's constants substituted.

The steps are the ones :func:`costmodel.nccl.tuning.tune` computes the entry's latency with
(:func:`costmodel.nccl.latency.entry_latency`, ncclTopoTuneModel's formula for that algorithm in
``src/graph/tuning.cc``), so the value of the last step is the entry's ``latency_us``.
"""

from __future__ import annotations

from costmodel.nccl.latency import Step, entry_latency, number_text
from costmodel.nccl.tuning import TuningEntry, TuningTable, algorithm_graph

__all__ = ["Step", "latency_steps", "number_text"]


def latency_steps(table: TuningTable, e: TuningEntry) -> tuple[Step, ...]:
    """Steps deriving ``e.latency_us`` from the constants.

    Examples
    --------
    >>> from costmodel.nccl import CONSTANTS, System, tune
    >>> table = tune(System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5),
    ...              CONSTANTS["2.30"])
    >>> print(latency_steps(table, table.entry("AllReduce", "Tree", "LL"))[-1].expression)
    base 6.8 µs + 2 × ((8 − 1) × 0.6 µs + log2(2) × 5 µs) = 25.2 µs
    """
    c, s = table.constants, table.system
    return entry_latency(s, c, algorithm_graph(s, c, e.algorithm), (e.function, e.algorithm, e.protocol))
