"""The pipeline schedules: their names, sources, and the order each device runs its operations in.

An order is a list of steps ``(op, microbatch, chunk)`` per device; timing is
:mod:`costmodel.pipeline.simulate`'s job.

References
----------
.. [1] Y. Huang et al., "GPipe", NeurIPS 2019, figure 2(c).
.. [2] D. Narayanan et al., "Memory-Efficient Pipeline-Parallel DNN Training",
   ICML 2021 (PipeDream-Flush).
.. [3] D. Narayanan et al., "Efficient Large-Scale Language Model Training on
   GPU Clusters Using Megatron-LM", SC '21, section 2.2.2; Megatron-LM's
   ``forward_backward_pipelining_with_interleaving`` as of commit 4295be1a6c
   (2024-11-01, first in Megatron Core 0.10.0) with the default micro-batch group
   of P per virtual stage.
.. [4] P. Qi, X. Wan, G. Huang, M. Lin, "Zero Bubble Pipeline Parallelism",
   ICLR 2024, section 3.1, figure 3.
"""

from __future__ import annotations

from costmodel.errors import InputError
from costmodel.names import Names
from costmodel.references import (
    HUANG_2019,
    NARAYANAN_2021_FLUSH,
    NARAYANAN_2021_MEGATRON,
    QI_2024,
    Citation,
)

__all__ = ["BUBBLE", "CITED", "FORMULAS", "SCHEDULES", "SOURCES", "SPLIT", "Step", "order",
           "resolve_schedule"]


#: The citations this module uses (defined in :mod:`costmodel.references`).
CITED: tuple[Citation, ...] = (HUANG_2019, NARAYANAN_2021_FLUSH, NARAYANAN_2021_MEGATRON, QI_2024)

_NAMES = Names("schedule", {
    "gpipe": (),
    "1f1b": ("pipedream-flush", "one-f-one-b"),
    "interleaved": ("interleaved-1f1b", "1f1b-interleaved", "vpp"),
    "zb-h1": ("zb", "zbh1", "zero-bubble"),
})
#: Canonical schedule names, in the order the CLI lists them.
SCHEDULES: tuple[str, ...] = _NAMES.canonical
SPLIT = frozenset({"zb-h1"})  # schedules that split the backward into B and W
SOURCES = {
    "gpipe": HUANG_2019.at("section 2.2, figure 2(c)"),
    "1f1b": NARAYANAN_2021_FLUSH.at("PipeDream-Flush (weight updates with flushes)"),
    "interleaved": NARAYANAN_2021_MEGATRON.at("section 2.2.2, schedule with interleaved stages"),
    "zb-h1": QI_2024.at("section 3.1, figure 3 (ZB-H1)"),
}
BUBBLE = HUANG_2019.at("section 2.2: bubble overhead (K-1)/(M+K-1) for K stages and M micro-batches")
FORMULAS = {
    "gpipe": "without communication: idle (P-1)(F+B) per stage; bubble fraction (P-1)/(M+P-1)",
    "1f1b": "without communication: idle (P-1)(F+B) per stage; bubble fraction (P-1)/(M+P-1)",
    "interleaved": "without communication: idle (P-1)(F+B)/v per stage; bubble over ideal (P-1)/(v·M)",
    "zb-h1": "without communication, with M ≥ P and W ≤ F, B: idle (P-1)(F+B-W) per stage, "
             "against 1F1B's (P-1)(F+B+W)",
}


def resolve_schedule(name: object) -> str:
    """The canonical name of a schedule given by name or alias.

    Raises
    ------
    UnknownNameError
        If *name* is neither a schedule nor an alias (with a did-you-mean).

    Examples
    --------
    >>> resolve_schedule("PipeDream-Flush"), resolve_schedule("zero_bubble")
    ('1f1b', 'zb-h1')
    >>> resolve_schedule("gpip")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnknownNameError: unknown schedule 'gpip'; did you mean 'gpipe'?
    """
    if not isinstance(name, str):
        raise InputError(f"{name!r} is not a schedule name; choose from {', '.join(SCHEDULES)}")
    return _NAMES.resolve(name, choices=(*_NAMES.canonical, *_NAMES.aliases))


#: One operation before timing: (op, microbatch, chunk), op one of "F", "B", "W".
Step = tuple[str, int, int]


def order(schedule: str, stage: int, *, stages: int, microbatches: int, chunks: int = 1) -> list[Step]:
    """The operations device *stage* runs, in the order *schedule* runs them.

    Parameters
    ----------
    schedule : str
        A canonical name from :data:`SCHEDULES` (see :func:`resolve_schedule`).
    stage : int
        The device, 0 ≤ stage < stages.
    stages, microbatches, chunks : int
        P, M and, for ``interleaved``, the model chunks v per device; the
        caller has checked them.

    Returns
    -------
    list of (op, microbatch, chunk)

    Examples
    --------
    >>> " ".join(f"{op}{j}" for op, j, _ in order("1f1b", 2, stages=4, microbatches=4))
    'F0 F1 B0 F2 B1 F3 B2 B3'
    >>> " ".join(f"{op}{j}" for op, j, _ in order("zb-h1", 1, stages=3, microbatches=3))
    'F0 F1 B0 F2 B1 W0 B2 W1 W2'
    """
    if schedule == "interleaved":
        return _interleaved(stages, microbatches, stage, chunks)
    return _ORDERS[schedule](stages, microbatches, stage)


def _gpipe(p: int, m: int, s: int) -> list[Step]:
    del p, s
    return [("F", j, 0) for j in range(m)] + [("B", j, 0) for j in range(m)]


def _one_f_one_b(p: int, m: int, s: int) -> list[Step]:
    warmup = min(p - s - 1, m)
    order = [("F", j, 0) for j in range(warmup)]
    for i in range(m - warmup):
        order += [("F", warmup + i, 0), ("B", i, 0)]
    return order + [("B", j, 0) for j in range(m - warmup, m)]


def _zb_h1(p: int, m: int, s: int) -> list[Step]:
    # Step x holds F_x, B_{x-(p-1-s)} and W_{x-(p-1)} (those in range), in that
    # order: P-s-1 lone forwards, s (F, B) pairs, (F, B, W) triples, P-s-1
    # (B, W) pairs, s lone W (Qi et al. 2024, figure 3).
    order: list[Step] = []
    for x in range(m + p - 1):
        for op, j in (("F", x), ("B", x - (p - 1 - s)), ("W", x - (p - 1))):
            if 0 <= j < m:
                order.append((op, j, 0))
    return order


def _interleaved(p: int, m: int, s: int, v: int) -> list[Step]:
    # Megatron-LM's forward_backward_pipelining_with_interleaving as of
    # commit 4295be1a6c (2024-11-01; Megatron Core 0.10.0 to 0.15), with its
    # default micro-batch group of P per virtual stage
    # (microbatch_group_size_per_vp_stage = P, which makes it require M a
    # multiple of P): the k-th forward on a device is micro-batch
    # (k // pv)·p + k % p in chunk (k % pv) // p; backwards run the chunks
    # in reverse.  Stage s warms up with min(2(p-s-1) + (v-1)p, mv) forwards
    # (get_pp_rank_microbatches) for every M, M = P included: the rule of
    # running every forward first when M = P was dropped in that commit.
    if v == 1:
        return _one_f_one_b(p, m, s)
    total = m * v
    group = p * v

    def forward(k: int) -> Step:
        return ("F", (k // group) * p + k % p, (k % group) // p)

    def backward(k: int) -> Step:
        return ("B", (k // group) * p + k % p, v - 1 - (k % group) // p)

    warmup = min(total, 2 * (p - s - 1) + (v - 1) * p)
    order = [forward(k) for k in range(warmup)]
    for i in range(total - warmup):
        order += [forward(warmup + i), backward(i)]
    return order + [backward(k) for k in range(total - warmup, total)]


_ORDERS = {"gpipe": _gpipe, "1f1b": _one_f_one_b, "zb-h1": _zb_h1}
