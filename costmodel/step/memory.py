"""The memory of each device of a step: model states as ``costmodel memory`` prices them, and the
activations of the micro-batches the schedule holds at once.

A device of pipeline stage s holds the parameters of its layers (layers/pp of them) and the
V·h word embedding on the first stage, plus its copy on the last stage when pp > 1 (Megatron-LM
keeps the output layer's copy there and all-reduces the two gradients: Narayanan et al. 2021,
section 2).  Its model states and one layer's activations per micro-batch are
:func:`costmodel.training.memory.training_memory`'s (Rajbhandari et al. 2020, figure 1:
(2 + 2 + K)·Ψ/N_d under ZeRO; Korthikanti et al. 2022, table 2: the activations of a layer), with
K = 12 (mixed-precision Adam).  The activations held are one layer's times the layers of a model
chunk times the most chunk-micro-batches the device holds at once in the simulated schedule (the
first stage of 1F1B holds min(pp, M): Narayanan et al. 2021, section 2.2.1).  With pp = 1 and one
micro-batch this is exactly ``training_memory(params, dp=, zero=, tp=, seq=, batch=, hidden=, heads=,
recompute=, layers=)``: its model states plus its activations.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.pipeline.result import PipelineOp
from costmodel.pipeline.simulate import peak_inflight
from costmodel.step.flops import TransformerShape
from costmodel.training.counts import DTYPES
from costmodel.training.memory import training_memory

__all__ = ["OPTIMIZER_BYTES", "DeviceMemory", "step_memory"]

OPTIMIZER_BYTES = 12
"""K, optimizer-state bytes per parameter: fp32 master weights, momentum and variance (Adam)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceMemory(JSONFields):
    """One pipeline device's peak memory: model states and activations, in bytes per GPU.

    *parameters* is Ψ of the device's layers (before tensor parallelism divides it), *layers* its
    layer count, *inflight* the most chunk-micro-batches it holds at once.
    """

    stage: int
    parameters: int
    model_state_bytes: Fraction
    activation_bytes_per_layer: Fraction
    layers: int
    inflight: int
    activation_bytes: Fraction
    total_bytes: Fraction


def step_memory(shape: TransformerShape, timeline: tuple[tuple[PipelineOp, ...], ...], *, dp: int, tp: int,
                chunks: int, zero: int, micro_batch: int, recompute: str, split: bool,
                bytes_per_element: Fraction) -> tuple[DeviceMemory, ...] | None:
    """Each device's memory (see the module notes); ``None`` when no dtype has *bytes_per_element*."""
    dtype = next((d for d in DTYPES.values() if d.bytes_per_element == bytes_per_element), None)
    if dtype is None:
        return None
    pp = len(timeline)
    per_chunk = shape.layers // (pp * chunks)
    embedding = shape.vocabulary * shape.hidden
    out = []
    for s, ops in enumerate(timeline):
        params = shape.layers // pp * shape.layer_parameters
        params += embedding * ((s == 0) + (pp > 1 and s == pp - 1))
        report = training_memory(params, dtype=dtype.name, dp=dp, zero=zero, optimizer_bytes=OPTIMIZER_BYTES,
                                 tp=tp, seq=shape.sequence, batch=micro_batch, hidden=shape.hidden,
                                 heads=shape.heads, recompute=recompute, layers=per_chunk)
        assert report.zero is not None and report.activations is not None
        held = peak_inflight((o.op for o in ops), split=split)
        per_layer = Fraction(report.activations.bytes_per_layer)
        states = Fraction(report.zero.model_state_bytes_per_gpu)
        activations = per_layer * per_chunk * held
        out.append(DeviceMemory(stage=s, parameters=params, model_state_bytes=states,
                                activation_bytes_per_layer=per_layer, layers=per_chunk * chunks,
                                inflight=held, activation_bytes=activations,
                                total_bytes=states + activations))
    return tuple(out)
