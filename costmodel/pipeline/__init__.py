"""Pipeline-parallel schedules: simulated timelines, bubbles and in-flight micro-batches.

A model is cut into P stages, one per device; a mini-batch into M
micro-batches.  A schedule fixes the order in which each device runs its
operations: the forward ``F`` of a micro-batch, its backward ``B`` and, for the
zero-bubble schedules, the weight-gradient half ``W`` of the backward split
off from the input-gradient half ``B``.  :func:`bubble` *simulates* that order
against the data dependencies (it does not evaluate a bubble formula):

* ``F`` of micro-batch j on stage s waits for ``F`` of j on stage s-1;
* ``B`` of j on stage s waits for ``B`` of j on stage s+1 and ``F`` of j on s;
* ``W`` of j on stage s waits for ``B`` of j on s;

and each device starts its next operation as soon as the device is free and
the operation's inputs have arrived (plus ``comm_slots`` when they come from
another device).  The closed forms of the textbooks, e.g. a bubble fraction of
(P-1)/(M+P-1) for GPipe and 1F1B, are what the tests check the simulation
against.

Times are in *slots*, the unit of ``forward_slots`` (by default one forward of
one micro-batch on one stage).  Inputs that are integers or fractions give
exact :class:`~fractions.Fraction` results.

Schedules (canonical names, then the accepted aliases):

``gpipe``
    All forwards, then all backwards [2]_.  Every stage holds all M
    micro-batches' activations.
``1f1b`` (``pipedream-flush``)
    Stage s runs P-s-1 warm-up forwards, then alternates one forward and one
    backward, then drains the remaining backwards [3]_.  Same bubble as GPipe,
    but stage s holds at most P-s micro-batches.
``interleaved`` (``interleaved-1f1b``, ``vpp``)
    Megatron-LM's interleaved 1F1B: each device holds v model chunks (virtual
    stages s, s+P, ..., s+(v-1)P), each taking 1/v of the stage's time; the
    bubble shrinks v-fold to (P-1)(F+B)/v [4]_.  Needs M to be a multiple of P.
    The order is current Megatron-LM's (since commit 4295be1a6c, 2024-11-01):
    stage s warms up with 2(P-s-1) + (v-1)P chunk-forwards for every M,
    M = P included.
``zb-h1`` (``zb``, ``zero-bubble``)
    Zero Bubble's handcrafted ZB-H1: the backward split into B (input
    gradient, on the critical path) and W (weight gradient, deferred into the
    bubbles); bubble (P-1)(F+B-W) against 1F1B's (P-1)(F+B+W), with 1F1B's
    peak of P micro-batches in flight [5]_.

Two definitions of "bubble" are in use, and :class:`Bubble` reports both:
``bubble_fraction`` is idle / total (idle stage-slots over P x the makespan;
GPipe's (P-1)/(M+P-1)), ``bubble_over_ideal`` is idle / ideal (idle over
busy stage-slots; (P-1)/M for GPipe and 1F1B, the Megatron-LM paper's "bubble
time fraction").

References
----------
.. [1] Y. Huang et al., "GPipe", NeurIPS 2019, section 2.2: bubble
   (P-1)/(M+P-1); docs/theory/pipeline-bubbles.md.
.. [2] Y. Huang et al., "GPipe: Efficient Training of Giant Neural Networks
   using Pipeline Parallelism", NeurIPS 2019, section 2.2 and figure 2.
.. [3] D. Narayanan, A. Phanishayee, K. Shi, X. Chen, M. Zaharia,
   "Memory-Efficient Pipeline-Parallel DNN Training", ICML 2021: PipeDream-Flush, the
   weight-update-with-flushes schedule.
.. [4] D. Narayanan et al., "Efficient Large-Scale Language Model Training on
   GPU Clusters Using Megatron-LM", SC '21, section 2.2.2 (the schedule with
   interleaved stages; bubble time fraction (1/v)·(p-1)/m).
.. [5] P. Qi, X. Wan, G. Huang, M. Lin, "Zero Bubble Pipeline Parallelism",
   ICLR 2024, section 3.1 (ZB-H1) and figure 3.
"""

from __future__ import annotations

from costmodel.pipeline.orders import CITED, SCHEDULES
from costmodel.pipeline.result import DEFINITIONS, Bubble, PipelineOp, StageTimeline
from costmodel.pipeline.simulate import MAX_OPERATIONS, bubble, parse_slots
from costmodel.pipeline.text import chart_scale, format_timeline

__all__ = [
    "CITED",
    "DEFINITIONS",
    "MAX_OPERATIONS",
    "SCHEDULES",
    "Bubble",
    "PipelineOp",
    "StageTimeline",
    "bubble",
    "chart_scale",
    "format_timeline",
    "parse_slots",
]
