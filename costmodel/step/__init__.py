"""A training step, whole: model FLOPs, gradient buckets and the overlap of their reduction.

:mod:`~costmodel.step.flops` counts a transformer's FLOPs from its shape (and the FLOP/s of a measured
iteration, :func:`~costmodel.step.flops.achieved_flops`),
:mod:`~costmodel.step.buckets` forms gradient buckets as PyTorch DDP, Megatron-LM and DeepSpeed
do, :mod:`~costmodel.step.overlap` schedules their all-reduces under the backward pass, and
:mod:`~costmodel.step.model` puts them together with the pipeline schedule into one step,
:func:`~costmodel.step.model.step` (also ``costmodel.estimate_step``), and
:mod:`~costmodel.step.sweep` varies one knob of it, :func:`~costmodel.step.sweep.sweep_step`.
Each pipeline device runs event by event (:mod:`~costmodel.step.device`, with its communication
stream in :mod:`~costmodel.step.stream`), placed on a machine's levels by
:mod:`~costmodel.step.placement`; :mod:`~costmodel.step.memory` gives each device's memory.

The package itself can be called: ``costmodel.step(dp=..., ...)`` is
:func:`~costmodel.step.model.step`.
"""

from __future__ import annotations

import sys
import types

from costmodel.step.buckets import (
    DDP_BUCKET_CAP_BYTES,
    DDP_FIRST_BUCKET_BYTES,
    DEEPSPEED_REDUCE_BUCKET_ELEMENTS,
    Bucket,
    BucketPlan,
    ddp_buckets,
    deepspeed_buckets,
    megatron_bucket_elements,
    megatron_buckets,
)
from costmodel.step.flops import (
    AchievedFlops,
    LayerFlops,
    ModelFlops,
    TransformerShape,
    achieved_flops,
    model_flops,
)
from costmodel.step.model import BUCKET_RULES, CommInterval, StepResult, estimate_step, step
from costmodel.step.overlap import BucketTiming, OverlapSchedule, overlap_schedule
from costmodel.step.sweep import KNOBS, StepSweep, SweepPoint, sweep_step

__all__ = [
    "BUCKET_RULES",
    "DDP_BUCKET_CAP_BYTES",
    "DDP_FIRST_BUCKET_BYTES",
    "DEEPSPEED_REDUCE_BUCKET_ELEMENTS",
    "KNOBS",
    "AchievedFlops",
    "Bucket",
    "BucketPlan",
    "BucketTiming",
    "CommInterval",
    "LayerFlops",
    "ModelFlops",
    "OverlapSchedule",
    "StepResult",
    "StepSweep",
    "SweepPoint",
    "TransformerShape",
    "achieved_flops",
    "ddp_buckets",
    "deepspeed_buckets",
    "estimate_step",
    "megatron_bucket_elements",
    "megatron_buckets",
    "model_flops",
    "overlap_schedule",
    "step",
    "sweep_step",
]


class _Callable(types.ModuleType):
    """The package's type: calling ``costmodel.step(...)`` prices a step, as :func:`step` does."""

    __call__ = staticmethod(step)


sys.modules[__name__].__class__ = _Callable
