"""One training step, whole: compute, tensor-, pipeline- and data-parallel communication, overlap, memory.

The model runs on dp × tp × pp devices; pipeline stage s holds its layers (layers/pp each, or
``stage_layers``; layers/(pp·v) per model chunk in the interleaved schedule), each layer split over tp
ranks.  A prediction has three layers, each replaceable:

* **counts**: a transformer layer's operations with their exact FLOPs and bytes
  (:mod:`costmodel.step.ops`), the collectives and their sizes;
* **rates**: what the GPU achieves on each operation (:mod:`costmodel.step.rates`, from a preset or a
  calibrated compute profile), what the links achieve on each message (the collectives' α–β models,
  profiles);
* **the schedule** that overlaps them: the pipeline's list scheduler and each device's communication
  stream.

Per micro-batch and rank, layer i takes

    F_i = f_i + T_f,      B_i = b_i + T_b  (+ T_f again with full recomputation)

where f_i, b_i are its compute (priced per operation on a GPU, or FLOPs / tp / (peak × efficiency) as a
plain override, or given) and T_f, T_b its tensor-parallel communication: two all-reduces of the
activation tensor n = micro_batch·sequence·hidden·bytes forward and two backward (Shoeybi et al.
2019, section 3 and figure 4), or with sequence parallelism an all-gather and a reduce-scatter in their
place (Korthikanti et al. 2022, section 4.2.2: the same bytes).  They sit between the layer's matrix
products, on the critical path.  The first stage also runs the input embedding, the last the output
layer and its cross entropy.

The stages' F and B go through the list scheduler behind ``bubble``
(:func:`costmodel.pipeline.simulate.simulate_stages`; for zb-h1 the backward splits into the input
gradient B and the weight gradient W, Qi et al. 2024, section 2), with a point-to-point send of the
activation tensor, α + β·n on the pipeline link, between stages.  Each device issues the data-parallel
collectives of its framework (:mod:`costmodel.step.frameworks`) on its own stream as it runs
(:mod:`costmodel.step.device`: buckets as the backward makes them or after it, ZeRO's reduce-scatters
and all-gathers, FSDP's prefetch), priced on the data-parallel link, and may compute slower while they
run (*slowdown*).  The step is

    step = max(pipeline makespan, last collective's end on any device) + optimizer
           (+ ZeRO 1 and 2's parameter all-gather after it),

and is split exactly into compute + tensor-parallel communication (the busiest device's), bubble
(the makespan without pipeline sends less that busy time), exposed pipeline sends (the makespan less
the one without sends), exposed data-parallel communication (what it adds at full compute speed), the
compute slowdown, the optimizer and the parameter all-gather.  With a GPU, each device's memory is
checked against its capacity (:mod:`costmodel.step.memory`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from costmodel._json import JSONFields
from costmodel.collectives import piecewise
from costmodel.collectives.evaluate import cost
from costmodel.errors import InputError, UnknownNameError
from costmodel.links import resolve_link
from costmodel.params import Link, LinkParams, PiecewiseLink
from costmodel.pipeline.orders import SPLIT, order, resolve_schedule
from costmodel.pipeline.result import PipelineOp
from costmodel.pipeline.simulate import (
    peak_inflight,
    settled_prefix,
    simulate_devices,
    simulate_makespan,
    simulate_stages,
)
from costmodel.references import (
    CHOWDHERY_2022,
    KORTHIKANTI_2022,
    NARAYANAN_2021_MEGATRON,
    QI_2024,
    SHOEYBI_2019,
    THAKUR_2005,
    Cited,
)
from costmodel.step.buckets import BucketPlan, ddp_buckets, deepspeed_buckets, megatron_buckets
from costmodel.step.compute import OpTime, Work, optimizer_time, shape_work
from costmodel.step.config import StepConfig
from costmodel.step.device import ZERO_SOURCES, Device, Issued, Unit, totals
from costmodel.step.flops import model_flops
from costmodel.step.frameworks import DataParallel, data_parallel
from costmodel.step.memory import OPTIMIZER_BYTES, DeviceMemory, check_fits, step_memory
from costmodel.step.ops import SOURCES as OP_SOURCES
from costmodel.step.overlap import BucketTiming
from costmodel.step.placement import MEGATRON_ORDER, place
from costmodel.step.rates import SOURCES as RATE_SOURCES
from costmodel.step.rates import Rates
from costmodel.step.stream import SOURCE as SLOWDOWN_SOURCE
from costmodel.topology import Level, Topology

if TYPE_CHECKING:
    from costmodel.profiles import Profile

_shape_work = lru_cache(maxsize=1024)(shape_work)
_place = lru_cache(maxsize=1024)(place)
"""A layer's work and the ranks' placement, each pure and remembered: the configurations a plan or a sweep
prices share their layers and their machine."""

Timeline = tuple[tuple[PipelineOp, ...], ...]
"""Each device's pipeline operations, in order."""

__all__ = [
    "MAX_LAYERS",
    "MAX_LAYER_OPERATIONS",
    "PARAM_GATHERS",
    "ZERO_STAGES",
    "CommInterval",
    "OrderFacts",
    "StepBound",
    "StepResult",
    "estimate_step",
    "gpu_topology",
    "lower_bound",
    "memory_of",
    "order_facts",
    "price_step",
    "step",
]

_SOURCES = (
    SHOEYBI_2019.at("section 3, figure 4: two all-reduces forward and two backward per layer"),
    NARAYANAN_2021_MEGATRON.at("section 2: PTD-P, data × tensor × pipeline parallelism"),
    QI_2024.at("section 2: the backward split into B (input gradient) and W (weight gradient)"),
    THAKUR_2005.at("section 3: a message of n bytes costs α + nβ"),
    CHOWDHERY_2022.at("appendix B: model and hardware FLOPs utilization"),
)

PARAM_GATHERS = ("after", "overlap")
"""When ZeRO 1 and 2 all-gather the updated parameters: after the optimizer (DeepSpeed,
``stage_1_and_2.py``, ``step``), or overlapped with the next forward (Megatron-LM,
``megatron/core/distributed/distributed_data_parallel.py``, ``overlap_param_gather``)."""

MAX_LAYER_OPERATIONS = 1_000_000
"""Most layer operations (micro-batches × layers × 3) one replica's step simulates (seconds at most)."""

MAX_LAYERS = 10_000
"""Most layers a step prices one by one (the deepest published transformers have about a thousand)."""

ZERO_STAGES = (0, 1, 2, 3)
"""The ZeRO stages :func:`step` models (3 is also PyTorch FSDP's ``FULL_SHARD``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult(JSONFields):
    """One training step: its time, the exact breakdown, the overlap, throughput, utilization and memory.

    ``step_s = compute_s + tp_comm_s + bubble_s + pp_exposed_s + dp_exposed_s + contention_s
    + optimizer_s + param_gather_s``.  *dp_exposed_s* is what the data-parallel collectives add to
    the pipeline at full compute speed, *contention_s* what the compute slowdown adds on top,
    *param_gather_s* the ZeRO-1/2 parameter all-gather after the optimizer.  *dp_hidden_s* is the part of
    device *dp_stage*'s collectives that does not lengthen the step (never below 0).  *buckets* are the
    gradient reductions of that device (the one that ends last) in its last micro-batch.  ``mfu`` counts
    the model FLOPs (no recomputation), ``hfu`` the hardware FLOPs (with it), both over the peak;
    ``six_n_flops`` is the 6·N·tokens convention for the same step.  Throughput and utilizations are
    ``None`` when the tokens or the FLOPs are not known (per-layer times without ``tokens`` or a shape).
    ``scaling_efficiency`` is the step with dp = 1 over this one (weak scaling: each replica keeps its
    micro-batches).
    """

    dp: int
    tp: int
    pp: int
    gpus: int
    microbatches: int
    schedule: str
    chunks: int
    recompute: str
    sequence_parallel: bool
    stage_layers: tuple[int, ...]
    framework: str
    mode: str
    gpu: str | None
    dtype: str
    compute_model: str
    step_s: Fraction
    compute_s: Fraction
    tp_comm_s: Fraction
    bubble_s: Fraction
    pp_exposed_s: Fraction
    dp_exposed_s: Fraction
    optimizer_s: Fraction
    pipeline_s: Fraction
    tp_allreduce_s: Fraction
    pp_send_s: Fraction
    dp_comm_s: Fraction
    dp_hidden_s: Fraction
    contention_s: Fraction
    param_gather_s: Fraction
    dp_stage: int
    zero: int
    prefetch: int
    param_gather: str
    slowdown: Fraction
    bucket_rule: str
    tokens_per_s: Fraction | None
    model_flops: Fraction | None
    hardware_flops: Fraction | None
    six_n_flops: Fraction | None
    peak_flops: Fraction | None
    mfu: Fraction | None
    hfu: Fraction | None
    scaling_efficiency: Fraction
    buckets: tuple[BucketTiming, ...]
    memory: tuple[DeviceMemory, ...] | None
    memory_capacity_bytes: Fraction | None
    layer_ops: tuple[OpTime, ...]
    timeline: Timeline
    communication: tuple[tuple[CommInterval, ...], ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    sources: tuple[Cited, ...] = _SOURCES


@dataclass(frozen=True, slots=True, kw_only=True)
class CommInterval(JSONFields):
    """One collective on a device's data-parallel communication stream, times from the step's start.

    *label* names what it carries (``bucket 3``); *ready_s* is when it could have started, *start_s*
    and *end_s* when it ran.
    """

    stage: int
    collective: str
    label: str
    bytes: Fraction
    ready_s: Fraction
    start_s: Fraction
    end_s: Fraction


# -- links ----------------------------------------------------------------------------------------


def _link(given: Any, default: Any, name: str, why: str) -> Link | Profile:
    """The link given for this traffic, else *default*: a link, or a profile priced per collective."""
    used = default if given is None else given
    if used is None:
        raise InputError(f"no link for {why}; pass link= or {name}= (LinkParams, PiecewiseLink or Profile)")
    if isinstance(used, (LinkParams, PiecewiseLink)):
        return used
    from costmodel.profiles import Profile  # loaded only when a profile prices the traffic

    if not isinstance(used, Profile):
        name = name if given is not None else "link"
        raise InputError(f"{name}={used!r} is not a link; pass LinkParams, PiecewiseLink or Profile")
    return used


def _for(source: Link | Profile, collective: str) -> Link:
    """*source* as it prices *collective*: a profile's own segments for it when it was calibrated on it
    (:func:`costmodel.links.resolve_link`), a link as it is."""
    if isinstance(source, (LinkParams, PiecewiseLink)):
        return source
    return resolve_link(collective, profile=source)


def _send(link: Link, n: Fraction) -> Fraction:
    """One message of n bytes: α + nβ, on a piecewise link with the segment of its size."""
    if isinstance(link, PiecewiseLink):
        link = piecewise.placed(link)
        if not link.by_message:
            raise InputError(str(link.refuses("a point-to-point message")))
        alpha, beta, _ = link.message(n).terms(n, reduce=False)
        return alpha + beta
    return link.alpha_s + link.beta_s_per_byte * n


def _buckets(rule: str, sizes: list[Fraction], *, dp: int, bucket_bytes: Fraction | None,
             bytes_per_element: Fraction) -> BucketPlan:
    if rule == "ddp":
        if bucket_bytes is None:
            return ddp_buckets(sizes)
        return ddp_buckets(sizes, bucket_cap_bytes=bucket_bytes)
    if rule == "megatron":
        elements = None if bucket_bytes is None else max(1, int(bucket_bytes / bytes_per_element))
        return megatron_buckets(sizes, dp=dp, bytes_per_element=bytes_per_element, bucket_elements=elements)
    if bucket_bytes is None:
        return deepspeed_buckets(sizes, bytes_per_element=bytes_per_element)
    return deepspeed_buckets(sizes, bytes_per_element=bytes_per_element,
                             reduce_bucket_size=max(1, int(bucket_bytes / bytes_per_element)))


# -- the model's units ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Model:
    """Per-layer compute and gradients of one rank, the first and last stages' extra work, and what
    throughput, utilization and memory need."""

    layers: tuple[Work, ...]
    gradients: tuple[Fraction, ...]
    element: Fraction  # bytes of an activation
    grad_element: Fraction  # bytes of a gradient element reduced
    activation_bytes: Fraction
    micro_tokens: int | None
    logits: Work | None = None
    logits_gradient: Fraction = Fraction(0)
    embedding: Work | None = None
    model_flops: Fraction | None = None
    hardware_flops: Fraction | None = None
    six_n_flops: Fraction | None = None
    peak: Fraction | None = None
    rates: Rates | None = None
    ops: tuple[OpTime, ...] = ()
    extra_tp: bool = False  # the embedding's and output layer's tensor-parallel collectives are priced


def _parallelism(c: StepConfig) -> tuple[str, int]:
    name = resolve_schedule(c.schedule)
    if name == "interleaved":
        v = 2 if c.chunks is None else c.chunks
        if c.microbatches % c.pp:
            m = c.microbatches
            raise InputError(f"microbatches={m} is not a multiple of pp={c.pp}; interleaved 1F1B needs one, "
                             f"e.g. microbatches={m + c.pp - m % c.pp}, or use schedule='1f1b'")
        return name, v
    if c.chunks is not None and c.chunks != 1:
        raise InputError(f"chunks={c.chunks!r} applies only to schedule='interleaved'; drop it")
    return name, 1


def _rates(c: StepConfig, notes: list[str]) -> Rates:
    """The rates of a shape's compute: per operation on the GPU, or FLOPs at an efficiency of a peak."""
    peak = c.peak_flops
    if c.gpu is not None and peak is None:
        peak = Fraction(c.gpu.peak(c.dtype))
    if peak is None:
        raise InputError("a transformer shape needs gpu= (a preset such as 'a100-80gb', or a compute "
                         "profile) "
                         "or peak_flops= with efficiency= to price its compute")
    if c.efficiency is not None or c.gpu is None:
        if c.efficiency is None:
            notes.append("every FLOP at the peak (efficiency=1): give gpu= to price each operation")
        return Rates.efficiency(peak, Fraction(1) if c.efficiency is None else c.efficiency, c.dtype)
    if c.peak_flops is not None:
        raise InputError("peak_flops= and gpu= were both given; the GPU's peak for the dtype is used, or "
                         "give "
                         "efficiency= to price every FLOP at a share of peak_flops")
    return Rates.of(c.gpu, c.dtype)


def _from_shape(c: StepConfig, mode: DataParallel, *, batch: int, notes: list[str]) -> _Model:
    shape, tp, b = c.shape, c.tp, c.micro_batch
    if shape.heads % tp:
        raise InputError(f"tp={tp} does not divide heads={shape.heads}; each tp rank holds whole heads")
    if c.sequence_parallel and tp > 1 and shape.sequence % tp:
        raise InputError(f"sequence_parallel=True with tp={tp}: the sequence {shape.sequence} does not split "
                         "over the tp ranks")
    rates = _rates(c, notes)
    element = _activation_element(c)
    if c.recompute == "selective" and c.attention == "flash" and not rates.flat:
        notes.append("recompute='selective' with flash attention recomputes nothing more: FlashAttention "
                     "keeps no attention matrix and rebuilds it in its own backward")
    layer, logits, embedding, priced = _shape_work(
        shape, micro_batch=b, tp=tp, rates=rates, sequence_parallel=c.sequence_parallel and tp > 1,
        attention=c.attention, recompute=c.recompute, causal=c.causal, element=element,
        accumulate=mode.accumulate)
    grad = _grad_element(c, mode)
    grads = [Fraction(shape.layer_parameters, tp) * grad] * shape.layers
    embedding_grad = Fraction(shape.vocabulary * shape.hidden, tp) * grad
    grads[0] += embedding_grad  # the input embedding's gradient, ready after layer 0's backward
    full = model_flops(shape, batch=b * batch, causal=c.causal)
    run = full if c.recompute == "none" else model_flops(shape, batch=b * batch, causal=c.causal,
                                                         recompute="full")
    hardware = run.total
    if c.recompute == "selective":  # the attention core once more, not the whole forward
        hardware = full.total + shape.layers * full.layer.attention
    return _Model(layers=(layer,) * shape.layers, gradients=tuple(grads), element=element, grad_element=grad,
                  activation_bytes=b * shape.sequence * shape.hidden * element,
                  micro_tokens=b * shape.sequence,
                  logits=logits, logits_gradient=embedding_grad if c.pp > 1 else Fraction(0),
                  embedding=embedding, model_flops=full.total, hardware_flops=hardware,
                  six_n_flops=Fraction(full.six_n_flops), peak=rates.peak, rates=rates, ops=priced,
                  extra_tp=not rates.flat)


def _activation_element(c: StepConfig) -> Fraction:
    """Bytes of an activation: ``bytes_per_element`` when given, else 2 (bf16 and fp16, and fp8 training,
    whose activations stay bf16) or 4 (fp32 and tf32)."""
    if c.bytes_per_element is not None:
        return c.bytes_per_element
    return Fraction(4) if c.dtype in ("fp32", "tf32") else Fraction(2)


def _grad_element(c: StepConfig, mode: DataParallel) -> Fraction:
    """Bytes of a gradient element reduced: ``bytes_per_element`` when given, else the framework's."""
    return c.bytes_per_element if c.bytes_per_element is not None else mode.grad_element


def _from_times(c: StepConfig) -> _Model:
    if c.forward_s is None or c.backward_s is None:
        raise InputError("no model given; pass shape= (with gpu= or peak_flops=) or forward_s= and "
                         "backward_s=")
    for name in ("micro_batch", "causal", "attention", "gpu", "dtype", "peak_flops", "efficiency"):
        if getattr(c, name) != StepConfig.__dataclass_fields__[name].default:
            raise InputError(f"{name}= describes a transformer shape (shape=); with forward_s= and "
                             "backward_s= leave it out")
    if c.recompute == "selective":
        raise InputError("recompute='selective' recomputes the attention core of a transformer shape; with "
                         "per-layer times give recompute='full' or 'none'")
    fwd, bwd = c.forward_s, c.backward_s
    layers = len(fwd)
    if len(bwd) != layers:
        raise InputError(f"backward_s has {len(bwd)} times and forward_s {layers}; give one per layer")
    if c.gradient_bytes is None:
        if c.dp > 1:
            raise InputError(f"dp={c.dp} needs gradient_bytes= (each layer's gradient on one rank) to price "
                             "the data-parallel reduction")
        grads: tuple[Fraction, ...] = (Fraction(0),) * layers
    else:
        if len(c.gradient_bytes) != layers:
            raise InputError(f"gradient_bytes={list(map(str, c.gradient_bytes))!r} is not a list of {layers} "
                             "sizes, one per layer")
        grads = c.gradient_bytes
    if c.activation_bytes is None and (c.tp > 1 or c.pp > 1):
        raise InputError("tp or pp above 1 needs activation_bytes= (micro_batch·sequence·hidden·bytes) "
                         "to price the tensor-parallel all-reduces and pipeline sends")
    redo = c.recompute == "full"
    works = tuple(Work(forward=f, backward=b + (f if redo else 0), weight=b / 2,
                       recompute=f if redo else Fraction(0)) for f, b in zip(fwd, bwd, strict=True))
    element = c.bytes_per_element if c.bytes_per_element is not None else Fraction(2)
    return _Model(layers=works, gradients=grads, element=element, grad_element=element,
                  activation_bytes=Fraction(0) if c.activation_bytes is None else c.activation_bytes,
                  micro_tokens=c.tokens)


def _model(c: StepConfig, mode: DataParallel, *, notes: list[str]) -> _Model:
    if c.shape is not None:
        if c.forward_s is not None or c.backward_s is not None or c.gradient_bytes is not None:
            raise InputError("shape= and forward_s=/backward_s=/gradient_bytes= were both given; "
                             "pass a shape or per-layer times, not both")
        return _from_shape(c, mode, batch=c.microbatches * c.dp, notes=notes)
    return _from_times(c)


def _layout(c: StepConfig, layers: int, v: int) -> tuple[int, ...]:
    """The layers of each virtual stage (chunk·pp + device), checked."""
    stages = c.pp * v
    if c.stage_layers is not None:
        given = c.stage_layers
        if len(given) != stages:
            what = f"pp={c.pp} × chunks={v}" if v > 1 else f"pp={c.pp}"
            raise InputError(f"stage_layers lists {len(given)} stages for {what} = {stages}; give one count "
                             "per (virtual) stage")
        if sum(given) != layers:
            raise InputError(f"stage_layers={','.join(map(str, given))} holds {sum(given)} layers, not the "
                             f"model's {layers}")
        return given
    if c.pp > layers:
        raise InputError(f"pp={c.pp} is above the {layers} layers; each pipeline stage needs a layer")
    if layers % stages:
        split_by = f"pp={c.pp} × chunks={v}" if v > 1 else f"pp={c.pp}"
        raise InputError(f"{layers} layers do not split evenly over {split_by}; choose pp (and chunks) "
                         "dividing the layers, or give stage_layers=")
    return (layers // stages,) * stages


def _tp_comm(c: StepConfig, act: Fraction, *, link: Any, tp_link: Any, notes: list[str]
             ) -> tuple[Fraction, Fraction]:
    """One layer's forward tensor-parallel communication (two all-reduces, or with sequence parallelism two
    all-gathers and two reduce-scatters), and one all-reduce (or reduce-scatter and all-gather) alone."""
    if c.tp == 1 or not act:
        return Fraction(0), Fraction(0)
    source = _link(tp_link, link, "tp_link", "the tensor-parallel collectives")

    def price(collective: str) -> Fraction:
        priced = cost(collective, c.algorithm if collective == "allreduce" else "ring", p=c.tp, n=act,
                      link=_for(source, collective), chunk_note=False)
        notes.extend(x for x in priced.notes if x not in notes)
        return priced.time_s

    one = price("reduce-scatter") + price("allgather") if c.sequence_parallel else price("allreduce")
    return 2 * one, one


def _units(model: _Model, layout: Sequence[int], *, tp_layer: Fraction, tp_one: Fraction, redo: bool,
           split: bool) -> list[list[Unit]]:
    """Each virtual stage's units: its layers with their tensor-parallel communication, the embedding's work
    on the first, the output layer on the last."""
    units: list[Unit] = []
    for i, (w, g) in enumerate(zip(model.layers, model.gradients, strict=True)):
        tp = 2 * tp_layer + (tp_layer if redo else 0)
        forward, backward = w.forward + tp_layer, w.backward + tp_layer + (tp_layer if redo else 0)
        if i == 0 and model.embedding is not None:
            forward += model.embedding.forward + (tp_one if model.extra_tp else 0)
            backward += model.embedding.backward
            tp += tp_one if model.extra_tp else 0
        units.append(Unit(forward=forward, backward=backward, weight=w.weight if split else Fraction(0),
                          gradient_bytes=g, tp=tp, recompute=w.recompute + (tp_layer if redo else 0)))
    out: list[list[Unit]] = []
    start = 0
    for count in layout:
        out.append(units[start:start + count])
        start += count
    if model.logits is not None:
        lg = model.logits
        extra = tp_one if model.extra_tp else Fraction(0)
        out[-1].append(Unit(forward=lg.forward, backward=lg.backward + extra,
                            weight=lg.weight if split else Fraction(0), gradient_bytes=model.logits_gradient,
                            tp=extra))
    if empty := [s for s, stage in enumerate(out) if not stage]:
        raise InputError(f"stage_layers={','.join(map(str, layout))} leaves stage {empty[0]} with nothing to "
                         "run; give it a layer")
    return out


# -- data parallelism -----------------------------------------------------------------------------


def _matrices(shape: Any) -> tuple[Fraction, ...]:
    """A layer's matrices as shares of its parameters (QKV, projection, FFN in, FFN out): the pieces
    DeepSpeed's ZeRO 3 fetches one collective each, one piece ahead."""
    if shape is None:
        return (Fraction(1),)
    h, f = shape.hidden, shape.ffn_hidden
    sizes = (h * (h + 2 * h * shape.groups // shape.heads), h * h, (2 if shape.gated else 1) * f * h, f * h)
    return tuple(Fraction(x, sum(sizes)) for x in sizes)


def _by_matrix(units: list[Unit], shares: tuple[Fraction, ...]) -> list[Unit]:
    """Each unit as the pieces DeepSpeed's ZeRO 3 fetches one at a time (its matrices), its work and
    parameters shared among them as their parameters are."""
    return [Unit(forward=u.forward * w, backward=u.backward * w, weight=u.weight * w,
                 gradient_bytes=u.gradient_bytes * w, tp=u.tp * w, recompute=u.recompute * w)
            for u in units for w in shares]


def _framework(c: StepConfig) -> DataParallel:
    return data_parallel(framework=c.framework, zero=c.zero, buckets=c.buckets, bucket_bytes=c.bucket_bytes,
                         overlap_grad_reduce=c.overlap_grad_reduce, param_gather=c.param_gather,
                         align_param_gather=c.align_param_gather, prefetch=c.prefetch, dtype=c.dtype, pp=c.pp)


def _pricer(source: Link | Profile, *, dp: int, algorithm: str, notes: list[str]
            ) -> Callable[[str, Fraction], Fraction]:
    """The time of a collective of n bytes over the dp ranks; cached, as buckets repeat their sizes.

    A calibrated profile prices each collective on its own segments."""
    seen: dict[tuple[str, Fraction], Fraction] = {}
    links: dict[str, Link] = {}

    def price(collective: str, n: Fraction) -> Fraction:
        key = (collective, n)
        if key not in seen:
            link = links.get(collective) or links.setdefault(collective, _for(source, collective))
            try:
                priced = cost(collective, algorithm, p=dp, n=n, link=link, chunk_note=False)
            except UnknownNameError:
                if collective == "allreduce":
                    raise
                priced = cost(collective, "ring", p=dp, n=n, link=link, chunk_note=False)
                note = f"the {collective}s are priced as ring: algorithm={algorithm!r} has no {collective}"
                if note not in notes:
                    notes.append(note)
            seen[key] = priced.time_s
            notes.extend(x for x in priced.notes if x not in notes)
        return seen[key]

    return price


def _devices(stage_units: list[list[Unit]], *, name: str, pp: int, v: int, m: int, dp: int,
             mode: DataParallel, slowdown: Fraction, price: Callable[[str, Fraction], Fraction],
             element: Fraction) -> list[Device]:
    def plan(sizes: list[Fraction]) -> BucketPlan:
        return _buckets(mode.rule, sizes, dp=dp, bucket_bytes=mode.bucket_bytes, bytes_per_element=element)

    return [Device([stage_units[c * pp + s] for c in range(v)],
                   order=order(name, s, stages=pp, microbatches=m, chunks=v), microbatches=m,
                   split=name in SPLIT, zero=mode.zero, prefetch=mode.prefetch, dp=dp, price=price, plan=plan,
                   slowdown=slowdown, overlap_param_gather=mode.param_gather == "overlap",
                   overlap_grad_reduce=mode.overlap, align_param_gather=mode.align, regather=mode.regather)
            for s in range(pp)]


def _replay(devices: list[Device], timeline: Timeline) -> None:
    """Run each device's gradient-making operations at their times in *timeline* (the others issue
    nothing, and the compute does not wait for the stream): the same collectives as running all."""
    for device, ops in zip(devices, timeline, strict=True):
        for o in ops:
            if device.produces(o.op, o.microbatch):
                end = device.run(o.op, o.microbatch, o.chunk, o.start)
                assert end == o.end, "a replayed operation ended apart from its timeline"
        device.compute_end = ops[-1].end


def _bucket_rows(device: Device) -> tuple[BucketTiming, ...]:
    """The gradient reductions of a device's last micro-batch, with the part hidden under its compute."""
    last = max((x.microbatch for x in device.issued if x.gradient), default=None)
    rows = [x for x in device.issued if x.gradient and x.microbatch == last]
    out = []
    for k, x in enumerate(rows):
        hidden = max(Fraction(0), min(x.end, device.compute_end) - x.start)
        out.append(BucketTiming(index=k, layers=x.layers, bytes=x.bytes, ready_s=x.ready, start_s=x.start,
                                end_s=x.end, communication_s=x.end - x.start, hidden_s=hidden,
                                exposed_s=x.end - x.start - hidden))
    return tuple(out)


def _intervals(s: int, issued: list[Issued]) -> tuple[CommInterval, ...]:
    return tuple(CommInterval(stage=s, collective=x.collective, label=x.label, bytes=x.bytes, ready_s=x.ready,
                              start_s=x.start, end_s=x.end) for x in issued)


def gpu_topology(gpu: Any, ranks: int) -> Topology:
    """The machine a GPU preset describes, for *ranks* GPUs: its nodes of ``gpus_per_node`` on the
    intra-node link, and the nodes on its network (each GPU's own port), innermost first.  Each level's
    α and rate are what nccl-tests measured on that hardware (the preset's ``*_latency`` and ``*_busbw``,
    fitted by ``costmodel calibrate fit``): a ring's bus bandwidth is the rate each rank gets."""
    per_node = gpu.gpus_per_node
    nodes = max(1, -(-ranks // per_node))
    measured = {"intra_node_latency": gpu.intra_node_latency_s,
                "intra_node_busbw": gpu.intra_node_busbw_bytes_per_s,
                "network_latency": gpu.network_latency_s, "network_busbw": gpu.network_busbw_bytes_per_s}
    if missing := [key for key, value in measured.items() if value is None]:
        raise InputError(f"GPU {gpu.name!r} gives no {', '.join(missing)}: add them to its file (costmodel "
                         "calibrate fit on an nccl-tests log measures them), or pass the links")

    def level(size: int, alpha: Fraction, bandwidth: Fraction, name: str) -> Level:
        return Level(size=size, link=LinkParams(alpha_s=alpha, beta_s_per_byte=1 / bandwidth), name=name)

    return Topology((level(per_node, gpu.intra_node_latency_s, gpu.intra_node_busbw_bytes_per_s, "intra"),
                     level(nodes, gpu.network_latency_s, gpu.network_busbw_bytes_per_s, "network")))


def _placed(c: StepConfig, *, notes: list[str]) -> tuple[Any, Any, Any, bool]:
    """The tp, pp and dp links: those given, else their levels' on the topology (noted); with neither a
    link nor a topology, the machine of the GPU preset (:func:`gpu_topology`); and whether the ranks were
    placed on a topology (then the dp = 1 step is placed anew)."""
    topology: Topology | None = c.topology
    if topology is None and c.link is None and c.gpu is not None:
        wanted = {"tp": c.tp_link, "pp": c.pp_link, "dp": c.dp_link}
        if any(getattr(c, kind) > 1 and link is None for kind, link in wanted.items()):
            topology = gpu_topology(c.gpu, c.dp * c.tp * c.pp)
    if topology is None:
        if c.order != MEGATRON_ORDER:
            raise InputError(f"order={c.order!r} places the ranks on a topology; pass topology= too")
        return c.tp_link, c.pp_link, c.dp_link, False
    if c.link is not None:
        raise InputError("link= and topology= were both given; pass the machine's levels or one link")
    placed = _place(topology, order=c.order, tp=c.tp, dp=c.dp, pp=c.pp)
    if placed.describe(topology):
        notes.append("placement: " + placed.describe(topology))
    return (placed.links.get("tp") if c.tp_link is None else c.tp_link,
            placed.links.get("pp") if c.pp_link is None else c.pp_link,
            placed.links.get("dp") if c.dp_link is None else c.dp_link, True)


def _slowdown(c: StepConfig, model: _Model) -> Fraction:
    """The compute lost while a data-parallel collective runs: as given, else with a GPU priced per operation
    the share of its SMs that NCCL's channels take (one thread block each: ``network_channels`` when the
    data-parallel group crosses nodes, ``intra_node_channels`` inside one), else 0."""
    if c.slowdown is not None:
        return c.slowdown
    if c.gpu is None or c.dp == 1 or model.rates is None or model.rates.flat:
        return Fraction(0)
    gpu = c.gpu
    placed = _place(gpu_topology(gpu, c.dp * c.tp * c.pp), order=c.order, tp=c.tp, dp=c.dp, pp=c.pp)
    channels = gpu.network_channels if placed.levels["dp"] == 1 else gpu.intra_node_channels
    return Fraction(0) if channels is None else Fraction(channels, gpu.sms)


def _busiest(stage_units: list[list[Unit]], *, pp: int, v: int, m: int) -> tuple[Fraction, Fraction]:
    """The busiest device's compute time over the step, and the tensor-parallel part of it."""
    def device(s: int) -> list[Unit]:
        return [x for c in range(v) for x in stage_units[c * pp + s]]

    def busy(s: int) -> Fraction:
        return sum((x.forward + x.backward for x in device(s)), Fraction(0))

    busiest = device(max(range(pp), key=busy))
    return (m * sum((x.forward + x.backward for x in busiest), Fraction(0)),
            m * sum((x.tp for x in busiest), Fraction(0)))


def _optimizer(c: StepConfig, model: _Model, layout: Sequence[int], *, v: int, dp: int,
               zero: int) -> Fraction:
    """The optimizer step: given, else an Adam step over the largest device's parameters (after ZeRO) on
    the GPU's memory, else 0."""
    if c.optimizer_s is not None:
        return c.optimizer_s
    if model.rates is None or c.shape is None:
        return Fraction(0)
    shape = c.shape
    per_device = [sum(layout[ch * c.pp + s] for ch in range(v)) for s in range(c.pp)]
    params = max(n * shape.layer_parameters + shape.vocabulary * shape.hidden * ((s == 0) + (c.pp > 1 and
                                                                                      s == c.pp - 1))
                 for s, n in enumerate(per_device))
    share = Fraction(params, c.tp) / (dp if zero >= 1 else 1)
    return optimizer_time(share, model.rates)


def step(config: StepConfig | None = None, /, **settings: Any) -> StepResult:
    """The time of one training step of dp × tp × pp devices (see the module notes).

    Every keyword is a setting of :class:`~costmodel.step.config.StepConfig` (its docstring and
    ``costmodel step --help`` describe each); a :class:`StepConfig` may be passed first, the keywords then
    changing it.  The main ones:

    Parameters
    ----------
    dp, tp, pp, microbatches : int
        Data-, tensor- and pipeline-parallel sizes, and micro-batches per replica per step (M).
    schedule, chunks, stage_layers : str, int, list of int
        The pipeline schedule as in :func:`costmodel.pipeline.bubble` (gpipe, 1f1b, interleaved,
        zb-h1), the model chunks per device (interleaved, default 2) and, optionally, each (virtual)
        stage's layers.
    recompute, sequence_parallel : str, bool
        Activation recomputation (none, selective, full) and Megatron's sequence parallelism.
    shape, micro_batch, gpu, dtype : TransformerShape, int, GPU or str, str
        Shape mode: the transformer, sequences per micro-batch, the GPU (a preset's name, a file, or a
        :class:`costmodel.gpus.GPU`) whose achieved rates price each operation, and the dtype.
    attention : {"flash", "unfused"}
        FlashAttention (default) or attention through memory, as Megatron-LM before it.
    peak_flops, efficiency
        The plain override: every FLOP at ``peak_flops × efficiency`` (the GPU's peak when only a GPU is
        given), memory-bound work free.
    forward_s, backward_s, gradient_bytes, activation_bytes, tokens
        Time mode (instead of *shape*): each layer's compute times per micro-batch on one tp rank, its
        gradient bytes on one rank, the activation tensor a tp all-reduce and a pipeline send move
        (needed when tp or pp > 1), and the tokens of one micro-batch (for tokens/s).
    link, tp_link, pp_link, dp_link, topology, order
        The link of each kind of communication (LinkParams, PiecewiseLink, Profile, or text: a profile's
        name or ``ALPHA:RATE``), or the machine's levels and the rank order.
    framework, zero, buckets, bucket_bytes, overlap_grad_reduce, prefetch, param_gather, align_param_gather
        The data-parallel schedule (:mod:`costmodel.step.frameworks`).
    slowdown, optimizer_s, algorithm, allow_oom
        Compute lost while DP communication runs; the optimizer's time (default: priced on the GPU); the
        collectives' algorithm; price a step that does not fit the GPU's memory (with a warning).

    Raises
    ------
    InputError
        An unknown setting (with a did-you-mean), a value a setting refuses, settings that contradict each
        other, or, with a GPU, a step whose memory exceeds the GPU's (unless ``allow_oom``).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> r = step(forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, gradient_bytes=["1MiB"] * 4, dp=2,
    ...          link=combine_link(alpha=0, beta="1ns/B"), bucket_bytes="4MiB")
    >>> [b.layers for b in r.buckets], float(r.step_s), float(r.dp_exposed_s)
    ([(3,), (2, 1, 0)], 0.015145728, 0.003145728)
    """
    if config is None:
        return price_step(StepConfig.of(**settings))
    if not isinstance(config, StepConfig):
        raise InputError(f"{config!r} is not a StepConfig; pass the settings as keywords")
    return price_step(config.replace(**settings) if settings else config)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """A step's pipeline, ready to simulate: the schedule, the units of each virtual stage, the send time,
    and the links the data-parallel traffic and the dp = 1 step need."""

    name: str
    pp: int
    v: int
    m: int
    send: Fraction
    mode: DataParallel
    model: _Model
    layout: tuple[int, ...]
    stage_units: list[list[Unit]]
    tp_link: Any
    pp_link: Any
    dp_link: Any
    placed: bool
    slowdown: Fraction
    tp_layer: Fraction

    def spans(self) -> dict[str, Any]:
        forward, backward, weight = (list(x) for x in zip(*map(totals, self.stage_units), strict=True))
        return {"microbatches": self.m, "chunks": self.v, "forward": forward, "backward": backward,
                "weight": weight}

    def makespan(self, *, send: bool = True) -> Fraction:
        """The pipeline's end without data-parallel traffic, with or without the sends between stages."""
        return simulate_makespan(self.name, self.pp, comm=self.send if send else Fraction(0), **self.spans())

    def timeline(self) -> Timeline:
        """The pipeline's operations without data-parallel traffic."""
        return simulate_stages(self.name, self.pp, comm=self.send, **self.spans())


def _prepare(c: StepConfig, *, notes: list[str]) -> _Prepared:
    """Everything before the simulation: the schedule, the framework, the model priced per layer, the
    stages, the links, the tensor-parallel and pipeline communication."""
    name, v = _parallelism(c)
    mode = _framework(c)
    layers = c.shape.layers if c.shape is not None else len(c.forward_s or ())
    check_layers(layers)
    events = c.microbatches * layers * 3
    if events > MAX_LAYER_OPERATIONS:  # before anything is priced per layer
        raise InputError(f"microbatches={c.microbatches} × {layers} layers give {events} layer operations "
                         f"(F, B, W) per replica, more than {MAX_LAYER_OPERATIONS} to simulate; use fewer "
                         "micro-batches")
    model = _model(c, mode, notes=notes)
    layout = _layout(c, len(model.layers), v)
    tp_link, pp_link, dp_link, placed = _placed(c, notes=notes)
    act = model.activation_bytes
    tp_layer, tp_one = _tp_comm(c, act, link=c.link, tp_link=tp_link, notes=notes)
    send = Fraction(0)
    if c.pp > 1 and act > 0:
        sent = act / c.tp if c.sequence_parallel and c.tp > 1 else act
        send = _send(_for(_link(pp_link, c.link, "pp_link", "the pipeline sends"), "allreduce"), sent)
    stage_units = _units(model, layout, tp_layer=tp_layer, tp_one=tp_one, redo=c.recompute == "full",
                         split=name in SPLIT)
    return _Prepared(name=name, pp=c.pp, v=v, m=c.microbatches, send=send, mode=mode, model=model,
                     layout=layout, stage_units=stage_units, tp_link=tp_link, pp_link=pp_link,
                     dp_link=dp_link, placed=placed,
                     slowdown=_slowdown(c, model), tp_layer=tp_layer)


def check_layers(layers: int) -> None:
    """Refuse more than :data:`MAX_LAYERS` layers, before anything is built per layer."""
    if layers > MAX_LAYERS:
        raise InputError(f"layers={layers} is more than the {MAX_LAYERS} layers a step prices one by one")


def _baseline(c: StepConfig, run: _Prepared, makespan: Fraction) -> Fraction:
    """The step with dp = 1 and the same links: the pipeline alone (*makespan*) and the optimizer over
    unsharded states; placed anew when the ranks sit on a machine's levels and the tensor- or
    pipeline-parallel links move."""
    if run.placed:
        alone = replace(c, dp=1, allow_oom=True)
        tp_link, pp_link, _, _ = _placed(alone, notes=[])
        if (tp_link, pp_link) != (run.tp_link, run.pp_link):
            run = _prepare(alone, notes=[])
            makespan = run.makespan()
    return makespan + _optimizer(c, run.model, run.layout, v=run.v, dp=1, zero=run.mode.zero)


def price_step(config: StepConfig, *, baseline_s: Fraction | None = None) -> StepResult:
    """The step of *config* (see :func:`step`); *baseline_s*, when known, is its dp = 1 step's time, which
    the scaling efficiency divides (a sweep over a knob the dp = 1 step does not depend on prices it once).
    """
    c = config
    dp, tp, pp, m = c.dp, c.tp, c.pp, c.microbatches
    notes: list[str] = []
    warnings: list[str] = []
    run = _prepare(c, notes=notes)
    mode, model, layout, v, u, send = run.mode, run.model, run.layout, run.v, run.slowdown, run.send
    zero = mode.zero
    if dp > 1:
        devices, timeline, end, end_plain, makespan = _data_parallel(c, run, notes=notes)
    else:
        devices, timeline = [], run.timeline()
        end = end_plain = makespan = max(ops[-1].end for ops in timeline)
    quiet = run.makespan(send=False) if send else makespan
    optimizer = _optimizer(c, model, layout, v=v, dp=dp, zero=zero)
    total = max([end + optimizer, *(d.gather_parameters(d.end + optimizer) for d in devices)])
    critical = max(range(len(devices)), key=lambda k: (devices[k].end, -k)) if devices else 0
    busy, tp_comm = _busiest(run.stage_units, pp=pp, v=v, m=m)
    gpus = dp * tp * pp
    scaling: Fraction = Fraction(1)
    if dp > 1:
        scaling = (_baseline(c, run, makespan) if baseline_s is None else baseline_s) / total
    notes.extend(_shape_notes(c, zero=zero, send=send))
    memory, capacity = _memory(c, mode, model.element, model.grad_element, layout, name=run.name, v=v,
                               warnings=warnings)
    comm = [x for x in devices[critical].issued if x.end <= devices[critical].end] if devices else []
    dp_comm = sum((x.end - x.start for x in comm), Fraction(0))
    exposed = end_plain - makespan
    if exposed > dp_comm:
        notes.append("the data-parallel collectives delay the pipeline by more than they take: each stage "
                     "waits for its first parameter bucket in turn (align_param_gather=True starts every "
                     "stage's gathers with the step)")
    peak = model.peak
    tokens_per_s = None if model.micro_tokens is None else Fraction(dp * m * model.micro_tokens) / total
    per_op = model.rates is not None and not model.rates.flat
    sp = (KORTHIKANTI_2022.at("section 4.2.2: sequence parallelism"),) if c.sequence_parallel else ()
    sources = (_SOURCES + (ZERO_SOURCES.get(zero, ()) if dp > 1 else ()) + ((SLOWDOWN_SOURCE,) if u else ())
               + (mode.sources if dp > 1 else ()) + (RATE_SOURCES + OP_SOURCES if per_op else ()) + sp)

    def utilization(flops: Fraction | int | None) -> Fraction | None:
        return None if flops is None or peak is None else flops / (total * gpus * peak)

    return StepResult(
        dp=dp, tp=tp, pp=pp, gpus=gpus, microbatches=m, schedule=run.name, chunks=v, recompute=c.recompute,
        sequence_parallel=c.sequence_parallel, stage_layers=tuple(layout), framework=mode.framework,
        mode=mode.mode if dp > 1 else "no data parallelism", gpu=None if c.gpu is None else c.gpu.name,
        dtype=c.dtype, compute_model=_compute_model(c, model),
        step_s=total, compute_s=busy - tp_comm, tp_comm_s=tp_comm, bubble_s=quiet - busy,
        pp_exposed_s=makespan - quiet, dp_exposed_s=exposed, optimizer_s=optimizer,
        pipeline_s=makespan, tp_allreduce_s=run.tp_layer / 2, pp_send_s=send, dp_comm_s=dp_comm,
        dp_hidden_s=max(Fraction(0), dp_comm - exposed), contention_s=end - end_plain,
        param_gather_s=total - end - optimizer, dp_stage=critical, zero=zero, prefetch=mode.prefetch,
        param_gather=mode.param_gather, slowdown=u, bucket_rule=mode.rule, tokens_per_s=tokens_per_s,
        model_flops=model.model_flops, hardware_flops=model.hardware_flops, six_n_flops=model.six_n_flops,
        peak_flops=peak, mfu=utilization(model.model_flops), hfu=utilization(model.hardware_flops),
        scaling_efficiency=scaling, buckets=_bucket_rows(devices[critical]) if devices else (), memory=memory,
        memory_capacity_bytes=capacity, layer_ops=model.ops,
        timeline=timeline, communication=tuple(_intervals(s, d.issued) for s, d in enumerate(devices)),
        notes=tuple(notes), warnings=tuple(warnings), sources=sources)


def memory_of(config: StepConfig) -> tuple[tuple[DeviceMemory, ...] | None, Fraction | None]:
    """Each device's memory of *config*'s step and the GPU's capacity (``None`` without a GPU), exactly as
    :func:`price_step` reports them in ``memory`` and ``memory_capacity_bytes``, without pricing the step:
    the memory needs the layers of each stage and the micro-batches in flight, which the schedule's order
    fixes (:func:`costmodel.step.memory.inflight`).  ``(None, None)`` with per-layer times.  A step that does
    not fit is not refused here; compare the largest ``total_bytes`` with the capacity.

    Raises :class:`~costmodel.errors.InputError` for settings that contradict each other (as
    :func:`price_step` would for the same reasons).
    """
    c = config
    if c.shape is None:
        return None, None
    name, v = _parallelism(c)
    mode = _framework(c)
    check_layers(c.shape.layers)
    layout = _layout(c, c.shape.layers, v)
    memory = _device_memory(c, mode, _activation_element(c), _grad_element(c, mode), layout, name=name, v=v)
    return memory, None if c.gpu is None else Fraction(c.gpu.memory_bytes)


@dataclass(frozen=True, slots=True)
class OrderFacts:
    """What a schedule's order of operations alone fixes, per device: the most chunk-micro-batches it holds
    at once (+1 when a forward starts, −1 when its backward, or W in the split schedules, ends), and its
    last operation ``(op, microbatch, chunk)``."""

    inflight: tuple[int, ...]
    last: tuple[tuple[str, int, int], ...]


@lru_cache(maxsize=256)
def order_facts(schedule: str, stages: int, *, microbatches: int, chunks: int) -> OrderFacts:
    """The :class:`OrderFacts` of *schedule* (a canonical name) on *stages* devices, from each device's order
    (:func:`costmodel.pipeline.orders.order`), whatever the operations' times.

    >>> order_facts("1f1b", 4, microbatches=8, chunks=1).inflight
    (4, 3, 2, 1)
    """
    orders = [order(schedule, s, stages=stages, microbatches=microbatches, chunks=chunks)
              for s in range(stages)]
    return OrderFacts(inflight=tuple(peak_inflight((op for op, _, _ in o), split=schedule in SPLIT)
                                     for o in orders),
                      last=tuple(o[-1] for o in orders))


@dataclass(frozen=True, slots=True, kw_only=True)
class StepBound(JSONFields):
    """Proven lower bounds of a step's time (:func:`lower_bound`):
    ``work_s ≤ pipeline_s ≤ step_s − optimizer_s``.

    *work_s* is the busiest device's compute and tensor-parallel communication over the step
    (``compute_s + tp_comm_s`` of :class:`StepResult`), which neither the schedule nor the ZeRO stage
    changes; *pipeline_s* adds the time the first micro-batch needs to reach each device and the last
    backward to leave it; *optimizer_s* is the step's optimizer, which follows everything.
    """

    work_s: Fraction
    pipeline_s: Fraction
    optimizer_s: Fraction

    @property
    def step_s(self) -> Fraction:
        """The bound of the step: the pipeline's, then the optimizer."""
        return self.pipeline_s + self.optimizer_s


def lower_bound(config: StepConfig) -> StepBound:
    """Proven lower bounds of ``price_step(config).step_s``, from the pipeline's compute alone: no
    simulation, no data-parallel traffic.

    Device s's first operation is micro-batch 0's forward of its first model chunk, which waits for that
    forward on the stages before it, each sent on: it starts no earlier than Σ_{k<s} (F_k + send).  It then
    runs its whole work, m · Σ_chunks (F + B), one operation at a time (tensor-parallel communication
    included, on the critical path).  In the schedules that do not split the backward its last operation is
    the backward of some micro-batch on its first chunk (a backward on a later chunk is followed, on the same
    device, by that micro-batch's backward on the chunk before), after which the stages before it each run
    that backward in turn: Σ_{k<s} (send + B_k).  So the pipeline ends no earlier than

        max_s  Σ_{k<s} (F_k + send) + m · Σ_chunks (F + B)_s + Σ_{k<s} (B_k + send)

    (the exact makespan of 1F1B with equal stages and no sends, (m + pp − 1)(F + B)).  Data-parallel
    traffic only delays the compute (every start is a maximum of ends, which a longer operation only
    moves later) or ends after it, and the optimizer follows, so the step is at least this plus the
    optimizer.

    When the gradients are reduced after the backward (ZeRO 0 or 1, no overlap, a schedule that does not
    split the backward) on a plain α–β link with ring collectives, and device s's last operation is a
    backward of the last micro-batch, the device issues all its buckets when its compute ends, one after
    another on its stream, and with ZeRO 1 gathers the parameters bucket by bucket after the optimizer.
    A ring collective's time is affine in its bytes with a non-negative constant, so the buckets take at
    least one collective of all of them: the device's end is at least its pipeline bound plus R_s, the
    reduction of all its gradient bytes, and the step at least that plus the optimizer plus G_s, their
    all-gather (the data-parallel part of *pipeline_s*).  Raises :class:`~costmodel.errors.InputError`
    where :func:`price_step` would refuse the settings (memory apart).
    """
    c = config
    run = _prepare(c, notes=[])
    p, v, m = run.pp, run.v, run.m
    split = run.name in SPLIT
    forward, backward, weight = (list(x) for x in zip(*map(totals, run.stage_units), strict=True))
    op_b = backward if split else [b + w for b, w in zip(backward, weight, strict=True)]
    works, ends = [], []
    for s in range(p):
        work = m * sum((forward[ch * p + s] + backward[ch * p + s] + weight[ch * p + s] for ch in range(v)),
                       Fraction(0))
        head = sum((forward[k] + run.send for k in range(s)), Fraction(0))
        tail = Fraction(0) if split else sum((op_b[k] + run.send for k in range(s)), Fraction(0))
        works.append(work)
        ends.append(head + work + tail)
    optimizer = _optimizer(c, run.model, run.layout, v=v, dp=c.dp, zero=run.mode.zero)
    after = _after_backward(c, run)
    if after is not None:
        reduce, gather = after
        last = order_facts(run.name, p, microbatches=m, chunks=v).last
        for s in range(p):
            if last[s][0] == "B" and last[s][1] == m - 1:
                grads = sum((u.gradient_bytes for ch in range(v) for u in run.stage_units[ch * p + s]),
                            Fraction(0))
                if grads:
                    ends[s] += reduce(grads) + (gather(grads) if run.mode.zero == 1 else 0)
    return StepBound(work_s=max(works), pipeline_s=max(ends), optimizer_s=optimizer)


def _after_backward(c: StepConfig, run: _Prepared
                    ) -> tuple[Callable[[Fraction], Fraction], Callable[[Fraction], Fraction]] | None:
    """The time of one reduction, and of one all-gather, of n gradient bytes over the dp ranks, when the
    gradients are reduced after the backward on a plain α–β link with ring collectives (see
    :func:`lower_bound`); else None."""
    mode = run.mode
    if (c.dp == 1 or mode.zero not in (0, 1) or mode.overlap or run.name in SPLIT
            or mode.param_gather != "after" or c.algorithm != "ring"):
        return None
    source = _link(run.dp_link, c.link, "dp_link", "the data-parallel reduction")
    collective = "allreduce" if mode.zero == 0 else "reduce-scatter"
    if not all(isinstance(_for(source, x), LinkParams) for x in (collective, "allgather")):
        return None
    price = _pricer(source, dp=c.dp, algorithm="ring", notes=[])
    return (lambda n: price(collective, n)), (lambda n: price("allgather", n))


def _shape_notes(c: StepConfig, *, zero: int, send: Fraction) -> list[str]:
    """What the step's shape alone says about how it is priced."""
    return [note for note, on in (
        ("tensor-parallel collectives are on the critical path of each layer, not overlapped", c.tp > 1),
        ("pipeline sends are α + β·n of the activation tensor between stages", bool(send)),
        (f"ZeRO {zero}: the bucket rule does not apply; each layer is all-gathered and reduce-scattered "
         "on its own", zero == 3 and c.dp > 1 and c.buckets not in (None, "ddp")),
        (f"zero={zero} with dp=1 shards nothing", zero > 0 and c.dp == 1),
        ("sequence_parallel=True has no effect with tp=1: it splits the norms and dropouts over the "
         "tensor-parallel ranks", c.sequence_parallel and c.tp == 1)) if on]


def _data_parallel(c: StepConfig, run: _Prepared, *, notes: list[str]
                   ) -> tuple[list[Device], Timeline, Fraction, Fraction, Fraction]:
    """The devices with their data-parallel streams, the timeline they run, the step's end, its end
    without the slowdown (the same when there is none), and the pipeline's end without data-parallel
    traffic.

    The data-parallel traffic changes the compute only when it overlaps it: buckets reduced as the backward
    makes them, or after each micro-batch (ZeRO 2), slow the compute while they run; ZeRO 3's gathers and an
    overlapped parameter gather hold it up.  Otherwise each device's collectives start after its last
    computation, and the devices' compute runs as the pipeline alone: their timeline is the pipeline's, and
    only the operations that make gradients are run again, to issue their buckets.
    """
    mode = run.mode
    price = _pricer(_link(run.dp_link, c.link, "dp_link", "the data-parallel reduction"), dp=c.dp,
                    algorithm=c.algorithm, notes=notes)
    units = run.stage_units
    if mode.zero >= 3 and mode.framework == "deepspeed":
        units = [_by_matrix(us, _matrices(c.shape)) for us in units]

    def build(slow: Fraction) -> list[Device]:
        return _devices(units, name=run.name, pp=run.pp, v=run.v, m=run.m, dp=c.dp, mode=mode,
                        slowdown=slow, price=price, element=run.model.grad_element)

    pipeline = run.timeline()
    makespan = max(ops[-1].end for ops in pipeline)

    def simulate(devices: list[Device]) -> Timeline:
        """The devices run operation by operation from the first that meets a collective; before it
        (and before what waits for it on other devices) each runs as the pipeline alone."""
        first = [d.first_interaction(ops) for d, ops in zip(devices, pipeline, strict=True)]
        return simulate_devices(run.name, run.pp, microbatches=run.m, chunks=run.v, comm=run.send,
                                execute=lambda s, op, j, ch, start: devices[s].run(op, j, ch, start),
                                settled=settled_prefix(pipeline, first, chunks=run.v))

    waits = mode.zero >= 3 or mode.param_gather == "overlap"
    slows = bool(run.slowdown) and (mode.overlap or mode.zero == 2 or waits)
    devices = build(run.slowdown if slows else Fraction(0))
    timeline = pipeline
    if slows or waits:
        timeline = simulate(devices)
    else:
        _replay(devices, pipeline)
    end = max(d.end for d in devices)
    if not slows:
        return devices, timeline, end, end, makespan
    plain = build(Fraction(0))
    if waits:
        simulate(plain)
    else:  # without the slowdown nothing holds the compute up: the pipeline's timeline, replayed
        _replay(plain, pipeline)
    return devices, timeline, end, max(d.end for d in plain), makespan


def _memory(c: StepConfig, mode: DataParallel, element: Fraction, grad_element: Fraction,
            layout: Sequence[int], *, name: str, v: int,
            warnings: list[str]) -> tuple[tuple[DeviceMemory, ...] | None, Fraction | None]:
    """The memory of each device (a shape only), and the GPU's capacity; a step that does not fit is
    refused, or priced with a warning when ``allow_oom``.  *element* and *grad_element* are the bytes of an
    activation and of a gradient element; the micro-batches in flight follow from the schedule's order."""
    memory = _device_memory(c, mode, element, grad_element, layout, name=name, v=v)
    if memory is None or c.gpu is None:
        return memory, None
    capacity = Fraction(c.gpu.memory_bytes)
    refusal = check_fits(memory, capacity=capacity, gpu=c.gpu.name)
    if refusal is not None:
        if not c.allow_oom:
            raise InputError(refusal)
        warnings.append(refusal.split("; shard more")[0] + " (priced anyway: allow_oom)")
    return memory, capacity


def _device_memory(c: StepConfig, mode: DataParallel, element: Fraction, grad_element: Fraction,
                   layout: Sequence[int], *, name: str, v: int) -> tuple[DeviceMemory, ...] | None:
    """Each device's memory (a shape only; see :func:`_memory`)."""
    if c.shape is None:
        return None
    pp, tp = c.pp, c.tp
    per_device = [[layout[ch * pp + s] for ch in range(v)] for s in range(pp)]
    weight_element = grad_element if mode.framework == "ddp" else (
        Fraction(2) if c.dtype in ("bf16", "fp16", "fp8") else Fraction(4))
    return step_memory(
        c.shape, order_facts(name, pp, microbatches=c.microbatches, chunks=v).inflight, layers=per_device,
        dp=c.dp, tp=tp, zero=mode.zero, micro_batch=c.micro_batch, recompute=c.recompute,
        sequence_parallel=c.sequence_parallel and tp > 1, attention=c.attention, element=element,
        weight_element=weight_element, grad_element=grad_element,
        optimizer_element=Fraction(8 if mode.framework == "ddp" else OPTIMIZER_BYTES), prefetch=mode.prefetch)


def _compute_model(c: StepConfig, model: _Model) -> str:
    if model.rates is None:
        return "per-layer times"
    if model.rates.flat:
        return f"FLOPs at {model.rates.plateau / model.rates.peak} of the peak"
    return f"per operation on {model.rates.name} ({c.dtype}, {c.attention} attention)"


estimate_step = step
"""Another name of :func:`step` (``costmodel.estimate_step``); calling the package, ``costmodel.step(...)``,
is the same."""
