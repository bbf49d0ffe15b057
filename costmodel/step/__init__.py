"""A training step, whole: model FLOPs, gradient buckets and the overlap of their reduction.

:mod:`~costmodel.step.flops` counts a transformer's FLOPs from its shape (and the FLOP/s of a measured
iteration, :func:`~costmodel.step.flops.achieved_flops`),
:mod:`~costmodel.step.buckets` forms gradient buckets as PyTorch DDP, Megatron-LM and DeepSpeed
do, :mod:`~costmodel.step.overlap` schedules their all-reduces under the backward pass, and
:mod:`~costmodel.step.model` puts them together with the pipeline schedule into one step,
:func:`~costmodel.step.model.step` (also ``costmodel.estimate_step``), whose settings
:class:`~costmodel.step.config.StepConfig` declares once, and
:mod:`~costmodel.step.sweep` varies one knob of it, :func:`~costmodel.step.sweep.sweep_step`, and
:mod:`~costmodel.step.planner` searches every parallel configuration of a model on a machine for the
fastest, :func:`~costmodel.step.planner.plan`.
Each pipeline device runs event by event (:mod:`~costmodel.step.device`, with its communication
stream in :mod:`~costmodel.step.stream`), placed on a machine's levels by
:mod:`~costmodel.step.placement`, with the data-parallel schedule of its framework
(:mod:`~costmodel.step.frameworks`); :mod:`~costmodel.step.memory` gives each device's memory.  A
transformer's compute is priced per operation: :mod:`~costmodel.step.ops` counts each kernel of a
layer, :mod:`~costmodel.step.rates` says what a GPU achieves on it, :mod:`~costmodel.step.compute` adds
them up.

The package itself can be called: ``costmodel.step(dp=..., ...)`` is
:func:`~costmodel.step.model.step`.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from costmodel._lazy import lazy_exports

if TYPE_CHECKING:  # the names as the type checker sees them
    from costmodel.step.buckets import (
        BUCKET_RULES,
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
    from costmodel.step.config import (
        StepConfig,
    )
    from costmodel.step.flops import (
        AchievedFlops,
        LayerFlops,
        LayerGroup,
        ModelFlops,
        MtpFlops,
        ParameterCount,
        TransformerShape,
        achieved_flops,
        attention_pairs,
        model_flops,
        parameters,
    )
    from costmodel.step.model import (
        CommInterval,
        StepResult,
        estimate_step,
        price_step,
        step,
    )
    from costmodel.step.overlap import (
        BucketTiming,
        OverlapSchedule,
        overlap_schedule,
    )
    from costmodel.step.planner import (
        Plan,
        PlanRow,
        plan,
    )
    from costmodel.step.sweep import (
        KNOBS,
        StepSweep,
        SweepPoint,
        sweep_step,
    )

_EXPORTS: dict[str, str] = {
    "AchievedFlops": "costmodel.step.flops",
    "BUCKET_RULES": "costmodel.step.buckets",
    "Bucket": "costmodel.step.buckets",
    "BucketPlan": "costmodel.step.buckets",
    "BucketTiming": "costmodel.step.overlap",
    "CommInterval": "costmodel.step.model",
    "DDP_BUCKET_CAP_BYTES": "costmodel.step.buckets",
    "DDP_FIRST_BUCKET_BYTES": "costmodel.step.buckets",
    "DEEPSPEED_REDUCE_BUCKET_ELEMENTS": "costmodel.step.buckets",
    "KNOBS": "costmodel.step.sweep",
    "LayerFlops": "costmodel.step.flops",
    "LayerGroup": "costmodel.step.flops",
    "ModelFlops": "costmodel.step.flops",
    "MtpFlops": "costmodel.step.flops",
    "OverlapSchedule": "costmodel.step.overlap",
    "ParameterCount": "costmodel.step.flops",
    "Plan": "costmodel.step.planner",
    "PlanRow": "costmodel.step.planner",
    "StepConfig": "costmodel.step.config",
    "StepResult": "costmodel.step.model",
    "StepSweep": "costmodel.step.sweep",
    "SweepPoint": "costmodel.step.sweep",
    "TransformerShape": "costmodel.step.flops",
    "achieved_flops": "costmodel.step.flops",
    "attention_pairs": "costmodel.step.flops",
    "ddp_buckets": "costmodel.step.buckets",
    "deepspeed_buckets": "costmodel.step.buckets",
    "estimate_step": "costmodel.step.model",
    "megatron_bucket_elements": "costmodel.step.buckets",
    "megatron_buckets": "costmodel.step.buckets",
    "model_flops": "costmodel.step.flops",
    "overlap_schedule": "costmodel.step.overlap",
    "parameters": "costmodel.step.flops",
    "plan": "costmodel.step.planner",
    "price_step": "costmodel.step.model",
    "step": "costmodel.step.model",
    "sweep_step": "costmodel.step.sweep",
}
"""Each name the package exports and its module, imported when first used: the command line reads
:mod:`~costmodel.step.config` without loading the model."""

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
    "LayerGroup",
    "ModelFlops",
    "MtpFlops",
    "OverlapSchedule",
    "ParameterCount",
    "Plan",
    "PlanRow",
    "StepConfig",
    "StepResult",
    "StepSweep",
    "SweepPoint",
    "TransformerShape",
    "achieved_flops",
    "attention_pairs",
    "ddp_buckets",
    "deepspeed_buckets",
    "estimate_step",
    "megatron_bucket_elements",
    "megatron_buckets",
    "model_flops",
    "overlap_schedule",
    "parameters",
    "plan",
    "price_step",
    "step",
    "sweep_step",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)


class _Callable(types.ModuleType):
    """The package's type: calling ``costmodel.step(...)`` prices a step, as :func:`step` does."""

    def __call__(self, *args: Any, **settings: Any) -> Any:
        from costmodel.step.model import step

        return step(*args, **settings)


sys.modules[__name__].__class__ = _Callable
