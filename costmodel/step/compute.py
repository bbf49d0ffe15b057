"""The compute of a step's units on one rank: per-operation prices of a transformer, or FLOPs at an
efficiency.

Two ways to price a transformer layer's forward and backward pass for one micro-batch on one
tensor-parallel rank:

* **per operation** (a GPU is given): the layer's kernels (:func:`costmodel.step.ops.layer_ops`) each
  priced by :class:`costmodel.step.rates.Rates`, so a small model's short matrix products, its
  memory-bound norms, softmax and dropout, and every kernel's launch take the time they take;
* **at an efficiency** (``efficiency`` given, or a peak without a GPU): every FLOP of
  :func:`costmodel.step.flops.model_flops` at ``peak × efficiency`` and everything else free, the
  model's first form, kept as a plain override.

:class:`Work` holds one unit's times; :func:`shape_work` returns a layer's, the output layer's (the
last stage: final norm, logits, cross entropy) and the input embedding's (the first stage), with the
priced operations for the breakdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.exact import exact_sum
from costmodel.step.flops import TransformerShape, model_flops
from costmodel.step.ops import (
    GRADIENT_ZERO_BYTES,
    Op,
    embedding_ops,
    layer_ops,
    logits_ops,
    mtp_ops,
    optimizer_bytes,
)
from costmodel.step.rates import Rates

__all__ = ["COLUMN_PRODUCTS", "OpTime", "Work", "mtp_work", "optimizer_time", "shape_work"]

COLUMN_PRODUCTS = ("QKV", "Q", "Q up", "KV up", "FFN in")
"""A dense layer's column-parallel products, in the order a layer runs them: their input gradients are
summed over the tensor-parallel ranks in the backward (Megatron-LM's ColumnParallelLinear); latent
attention's are its query and key-value up-projections (or its one Q product without a query latent) in
place of QKV."""


@dataclass(frozen=True, slots=True)
class Work:
    """One unit's compute on one rank for one micro-batch, communication left out.

    *backward* is the whole backward pass (input and weight gradients, and the recomputation);
    *weight* its weight-gradient part (the W of split schedules), *recompute* its recomputation part;
    *column* the input- and weight-gradient products of its column-parallel layers (:data:`COLUMN_PRODUCTS`:
    QKV, or latent attention's up-projections, and the FFN's first product, when priced per operation),
    which a tensor-parallel backward overlaps its collectives with.
    """

    forward: Fraction
    backward: Fraction
    weight: Fraction
    recompute: Fraction
    column: tuple[tuple[Fraction, Fraction], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OpTime(JSONFields):
    """One operation of a layer priced: its name, phase, kind, FLOPs, bytes and seconds on one rank."""

    name: str
    phase: str
    kind: str
    flops: Fraction
    bytes: Fraction
    time_s: Fraction


def _price(op: Op, rates: Rates) -> Fraction:
    if op.kind == "gemm":
        return rates.gemm(op.m, op.n, op.k, batch=op.batch, output_bytes=op.output_bytes)
    if op.kind == "attention":
        return rates.fused_attention(op.flops, op.bytes, op.keys)
    return rates.memory(op.bytes, op.kernel)


def _work(ops: Sequence[Op], rates: Rates, *, priced: bool = True) -> tuple[Work, tuple[OpTime, ...]]:
    """The :class:`Work` of *ops*, and each operation priced (none without *priced*)."""
    times = [_price(o, rates) for o in ops]
    phases: dict[str, list[Fraction]] = {"forward": [], "backward": [], "recompute": []}
    for o, t in zip(ops, times, strict=True):
        phases.setdefault(o.phase, []).append(t)
    recompute = exact_sum(phases["recompute"])
    by_name = {(o.name, o.phase): t for o, t in zip(ops, times, strict=True)}
    column = tuple((by_name[f"{name} dgrad", "backward"], by_name[f"{name} wgrad", "backward"])
                   for name in COLUMN_PRODUCTS if (f"{name} wgrad", "backward") in by_name)
    work = Work(forward=exact_sum(phases["forward"]), backward=exact_sum(phases["backward"]) + recompute,
                weight=exact_sum(t for o, t in zip(ops, times, strict=True) if o.weight), recompute=recompute,
                column=column)
    if not priced:
        return work, ()
    return work, tuple(OpTime(name=o.name, phase=o.phase, kind=o.kind, flops=o.flops, bytes=o.bytes, time_s=t)
                       for o, t in zip(ops, times, strict=True))


def shape_work(shape: TransformerShape, *, micro_batch: int, tp: int, rates: Rates, sequence_parallel: bool,
               attention: str, recompute: str, causal: bool, element: Fraction,
               accumulate: Fraction | None = None, cp: int = 1, dropout: bool = True, dense: bool = False,
               ep: int = 1, capacity_factor: Fraction | None = None, window: bool = False
               ) -> tuple[Work, Work, Work, tuple[OpTime, ...]]:
    """One layer's, the output layer's and the input embedding's :class:`Work`, and the layer's priced
    operations (see the module notes).  With flat *rates* (an efficiency) the layer's FLOPs are
    :func:`~costmodel.step.flops.model_flops`'s, the backward twice the forward, and the weight gradient
    half of the backward.  *cp* context-parallel ranks share each sequence: each rank's FLOPs are 1/cp of
    them (:func:`~costmodel.step.ops.layer_ops`).  For a mixture of experts the layer is an MoE layer on
    *ep* expert-parallel ranks with *capacity_factor*, or with *dense* one of its first, dense layers; with
    *window* a layer with the shape's sliding window (its attention over the band of the causal mask)."""
    if rates.flat:
        per = model_flops(shape, batch=micro_batch, causal=causal,
                          capacity_factor=capacity_factor if shape.moe else None)
        rate = rates.plateau
        one = per.kind(moe=shape.moe and not dense, window=window)
        f = one.forward / (tp * cp) / rate
        redo = f if recompute == "full" else Fraction(0)
        if recompute == "selective":
            redo = one.attention / (tp * cp) / rate
        layer = Work(forward=f, backward=2 * f + redo, weight=f, recompute=redo)
        lf = Fraction(per.logits_forward, tp * cp) / rate
        logits = Work(forward=lf, backward=2 * lf, weight=lf, recompute=Fraction(0))
        return layer, logits, Work(Fraction(0), Fraction(0), Fraction(0), Fraction(0)), ()
    ops = layer_ops(shape, micro_batch=micro_batch, tp=tp, sequence_parallel=sequence_parallel,
                    attention=attention, recompute=recompute, causal=causal, element=element,
                    accumulate=accumulate, cp=cp, dropout=dropout, moe=shape.moe and not dense, ep=ep,
                    capacity_factor=capacity_factor, window=window)
    layer, priced = _work(ops, rates)
    logits, _ = _work(logits_ops(shape, micro_batch=micro_batch, tp=tp, sequence_parallel=sequence_parallel,
                                 element=element, cp=cp), rates, priced=False)
    embedding, _ = _work(embedding_ops(shape, micro_batch=micro_batch, tp=tp, element=element, cp=cp), rates,
                         priced=False)
    return layer, logits, embedding, priced


def mtp_work(shape: TransformerShape, *, micro_batch: int, tp: int, rates: Rates, sequence_parallel: bool,
             element: Fraction, cp: int = 1) -> Work:
    """One multi-token prediction module's :class:`Work` besides its layer (which :func:`shape_work` prices
    as a layer of the last main layer's kind): its norms and 2h → h projection
    (:func:`~costmodel.step.ops.mtp_ops`), its logits and cross entropy through the shared output layer
    (:func:`~costmodel.step.ops.logits_ops`) and its lookup of the shared embedding
    (:func:`~costmodel.step.ops.embedding_ops`).  With flat *rates* the projection's and the logits' FLOPs
    (:class:`~costmodel.step.flops.MtpFlops`) at the rate, the backward twice the forward."""
    if rates.flat:
        tokens = micro_batch * shape.sequence
        flops = 2 * tokens * (shape.mtp_projection_parameters + shape.hidden * shape.vocabulary)
        f = Fraction(flops, tp * cp) / rates.plateau
        return Work(forward=f, backward=2 * f, weight=f, recompute=Fraction(0))
    ops = (*mtp_ops(shape, micro_batch=micro_batch, tp=tp, sequence_parallel=sequence_parallel,
                    element=element, cp=cp),
           *logits_ops(shape, micro_batch=micro_batch, tp=tp, sequence_parallel=sequence_parallel,
                       element=element, cp=cp),
           *embedding_ops(shape, micro_batch=micro_batch, tp=tp, element=element, cp=cp))
    return _work(ops, rates, priced=False)[0]


def optimizer_time(parameters: Fraction, rates: Rates, gradients: Fraction = Fraction(0)) -> Fraction:
    """An Adam step over *parameters* (on one rank, after ZeRO's sharding) at the achieved memory
    bandwidth (:func:`costmodel.step.ops.optimizer_bytes` per parameter), and the zeroing of the fp32
    gradients of *gradients* parameters for the next step (:data:`~costmodel.step.ops.GRADIENT_ZERO_BYTES`
    each, a streaming write); 0 under a plain efficiency."""
    if rates.bandwidth is None or not parameters:
        return Fraction(0)
    zeroing = rates.memory(gradients * GRADIENT_ZERO_BYTES) if gradients else Fraction(0)
    return rates.memory(parameters * optimizer_bytes(rates.element), "optimizer") + zeroing
