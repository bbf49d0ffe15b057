"""A training step, whole: model FLOPs, gradient buckets and the overlap of their reduction.

:mod:`~costmodel.step.flops` counts a transformer's FLOPs from its shape,
:mod:`~costmodel.step.buckets` forms gradient buckets as PyTorch DDP, Megatron-LM and DeepSpeed
do, and :mod:`~costmodel.step.overlap` schedules their all-reduces under the backward pass.
"""

from __future__ import annotations

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
from costmodel.step.flops import LayerFlops, ModelFlops, TransformerShape, model_flops
from costmodel.step.overlap import BucketTiming, OverlapSchedule, overlap_schedule

__all__ = [
    "DDP_BUCKET_CAP_BYTES",
    "DDP_FIRST_BUCKET_BYTES",
    "DEEPSPEED_REDUCE_BUCKET_ELEMENTS",
    "Bucket",
    "BucketPlan",
    "BucketTiming",
    "LayerFlops",
    "ModelFlops",
    "OverlapSchedule",
    "TransformerShape",
    "ddp_buckets",
    "deepspeed_buckets",
    "megatron_bucket_elements",
    "megatron_buckets",
    "model_flops",
    "overlap_schedule",
]
