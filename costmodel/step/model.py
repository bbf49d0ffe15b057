"""One training step, whole: compute, tensor-, pipeline- and data-parallel communication, overlap.

The model runs on dp × tp × pp devices; each pipeline stage holds layers/pp consecutive layers
(layers/(pp·v) per model chunk in the interleaved schedule), each layer split over tp ranks.
Per micro-batch and per rank, layer i takes

    F_i = f_i + 2·A,      B_i = b_i + 2·A  (+ f_i + 2·A with full recomputation)

where f_i, b_i are its compute times (given, or FLOPs / tp / (peak × efficiency), with the FLOPs
of :func:`~costmodel.step.flops.model_flops`: b = 2f) and A is one all-reduce over the tp ranks of
the activation tensor, n = micro_batch·sequence·hidden·bytes (Shoeybi et al. 2019, section 3 and
figure 4: Megatron's f and g operators all-reduce twice in the forward pass of a layer, after the
attention and after the MLP, and twice in the backward pass).  Tensor-parallel all-reduces sit
between the layer's matrix products, on the critical path: they are added to F and B, never
overlapped.  The logits (shape mode) run on the last stage.

The stages' F and B go through the list scheduler behind ``bubble``
(:func:`costmodel.pipeline.simulate.simulate_stages`; for zb-h1 the backward splits into equal
input- and weight-gradient halves, Qi et al. 2024, section 2), with a point-to-point send of the
activation tensor, α + β·n on the pipeline link, between stages.  Each device's gradients become
ready during the last micro-batch's backward (its W in zb-h1; every micro-batch's under ZeRO 2
and 3): a unit's gradient when that operation has passed it, in reverse layer order.  Each device
issues its data-parallel collectives on its own stream as it runs (:mod:`costmodel.step.device`:
buckets, ZeRO's reduce-scatters and all-gathers, FSDP's prefetch), priced on the data-parallel
link, and may compute slower while they run (*slowdown*).  The step is

    step = max(pipeline makespan, last collective's end on any device) + optimizer
           (+ ZeRO 1 and 2's parameter all-gather after it),

and is split exactly into compute + tensor-parallel communication (the busiest device's),
bubble (the makespan without pipeline sends less that busy time), exposed pipeline sends (the
makespan less the one without sends), exposed data-parallel communication (at full compute
speed), the compute slowdown, the optimizer and the parameter all-gather.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.collectives.evaluate import cost
from costmodel.errors import InputError, UnknownNameError
from costmodel.links import resolve_link
from costmodel.params import Link, LinkParams, PiecewiseLink, link_at
from costmodel.pipeline.orders import SPLIT, order, resolve_schedule
from costmodel.pipeline.result import PipelineOp
from costmodel.pipeline.simulate import simulate_devices, simulate_makespan, simulate_stages
from costmodel.profiles import Profile
from costmodel.references import (
    CHOWDHERY_2022,
    NARAYANAN_2021_MEGATRON,
    QI_2024,
    SHOEYBI_2019,
    THAKUR_2005,
    Cited,
)
from costmodel.step._values import each, named, number
from costmodel.step.buckets import BucketPlan, ddp_buckets, deepspeed_buckets, megatron_buckets
from costmodel.step.device import ZERO_SOURCES, Device, Issued, Unit, totals
from costmodel.step.flops import RECOMPUTATION, TransformerShape, model_flops
from costmodel.step.memory import DeviceMemory, step_memory
from costmodel.step.overlap import BucketTiming
from costmodel.step.placement import MEGATRON_ORDER, place
from costmodel.step.stream import SOURCE as SLOWDOWN_SOURCE
from costmodel.topology import Topology
from costmodel.units import parse_size, parse_time
from costmodel.validate import positive, whole

__all__ = ["BUCKET_RULES", "FSDP_PREFETCH", "MAX_LAYER_OPERATIONS", "PARAM_GATHERS", "ZERO_STAGES",
           "CommInterval", "StepResult", "estimate_step", "step"]

BUCKET_RULES = ("ddp", "megatron", "deepspeed")
"""The gradient-bucket rules :func:`step` knows (see :mod:`costmodel.step.buckets`)."""

_SOURCES = (
    SHOEYBI_2019.at("section 3, figure 4: two all-reduces forward and two backward per layer"),
    NARAYANAN_2021_MEGATRON.at("section 2: PTD-P, data × tensor × pipeline parallelism"),
    QI_2024.at("section 2: the backward split into B (input gradient) and W (weight gradient)"),
    THAKUR_2005.at("section 3: a message of n bytes costs α + nβ"),
    CHOWDHERY_2022.at("appendix B: model FLOPs utilization"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult(JSONFields):
    """One training step: its time, the exact breakdown, the overlap, throughput and utilization.

    ``step_s = compute_s + tp_comm_s + bubble_s + pp_exposed_s + dp_exposed_s + contention_s
    + optimizer_s + param_gather_s``.  *dp_exposed_s* is what the data-parallel collectives add to
    the pipeline at full compute speed, *contention_s* what the compute slowdown adds on top,
    *param_gather_s* the ZeRO-1/2 parameter all-gather after the optimizer.  *buckets* are the
    gradient reductions of device *dp_stage* (the one that ends last) in its last micro-batch.
    ``tokens_per_s`` and ``mfu`` are ``None`` when the tokens or the FLOPs are not known (per-layer
    times without ``tokens`` or a shape).  ``scaling_efficiency`` is the step with dp = 1 over this
    one (weak scaling: each replica keeps its micro-batches).
    """

    dp: int
    tp: int
    pp: int
    gpus: int
    microbatches: int
    schedule: str
    chunks: int
    recompute: str
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
    mfu: Fraction | None
    scaling_efficiency: Fraction
    buckets: tuple[BucketTiming, ...]
    memory: tuple[DeviceMemory, ...] | None
    timeline: tuple[tuple[PipelineOp, ...], ...]
    communication: tuple[tuple[CommInterval, ...], ...]
    notes: tuple[str, ...] = ()
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


def _times(values: Any, name: str) -> tuple[Fraction, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise InputError(f"{name}={values!r} is not a non-empty list of times; give one per layer")
    return each(parse_time, values, name)


def _sizes(values: Any, name: str, count: int) -> tuple[Fraction, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence) or len(values) != count:
        raise InputError(f"{name}={values!r} is not a list of {count} sizes, one per layer")
    return each(parse_size, values, name)


def _positive_number(value: Any, name: str, example: str) -> Fraction:
    x = number(value, name)
    if x <= 0:
        raise InputError(f"{name}={value!r} is not positive; e.g. {name}={example}")
    return x


def _link(given: Any, default: Any, name: str, why: str) -> Link | Profile:
    """The link given for this traffic, else *default*: a link, or a profile priced per collective."""
    used = default if given is None else given
    if used is None:
        raise InputError(f"no link for {why}; pass link= or {name}= (LinkParams, PiecewiseLink or Profile)")
    if not isinstance(used, (LinkParams, PiecewiseLink, Profile)):
        name = name if given is not None else "link"
        raise InputError(f"{name}={used!r} is not a link; pass LinkParams, PiecewiseLink or Profile")
    return used


def _for(source: Link | Profile, collective: str) -> Link:
    """*source* as it prices *collective*: a profile's own segments for it when it was calibrated on it
    (:func:`costmodel.links.resolve_link`), a link as it is."""
    return resolve_link(collective, profile=source) if isinstance(source, Profile) else source


def _send(link: Link, n: Fraction) -> Fraction:
    params, _ = link_at(link, n)
    return params.alpha_s + params.beta_s_per_byte * n


def _buckets(rule: str, sizes: list[Fraction], *, dp: int, bucket_bytes: Any, bytes_per_element: Fraction
             ) -> BucketPlan:
    if rule == "ddp":
        if bucket_bytes is None:
            return ddp_buckets(sizes)
        return ddp_buckets(sizes, bucket_cap_bytes=bucket_bytes)
    if rule == "megatron":
        elements = None if bucket_bytes is None else max(1, int(parse_size(bucket_bytes) / bytes_per_element))
        return megatron_buckets(sizes, dp=dp, bytes_per_element=bytes_per_element, bucket_elements=elements)
    if bucket_bytes is None:
        return deepspeed_buckets(sizes, bytes_per_element=bytes_per_element)
    return deepspeed_buckets(sizes, bytes_per_element=bytes_per_element,
                             reduce_bucket_size=max(1, int(parse_size(bucket_bytes) / bytes_per_element)))


@dataclass(frozen=True, slots=True)
class _Model:
    """Per-layer compute times and gradients of one rank, and what throughput needs."""

    forward: tuple[Fraction, ...]
    backward: tuple[Fraction, ...]
    gradients: tuple[Fraction, ...]
    activation_bytes: Fraction
    micro_tokens: int | None
    logits: Unit | None = None
    flops: Fraction | None = None
    peak: Fraction | None = None


def _parallelism(dp: Any, tp: Any, pp: Any, microbatches: Any, *, schedule: str, chunks: Any
                 ) -> tuple[int, int, int, int, str, int]:
    dp, tp, pp = positive(dp, "dp"), positive(tp, "tp"), positive(pp, "pp")
    m = positive(microbatches, "microbatches")
    name = resolve_schedule(schedule)
    if name == "interleaved":
        v = 2 if chunks is None else positive(chunks, "chunks")
        if m % pp:
            raise InputError(f"microbatches={m} is not a multiple of pp={pp}; interleaved 1F1B needs one, "
                             f"e.g. microbatches={m + pp - m % pp}, or use schedule='1f1b'")
    elif chunks is not None and chunks != 1:
        raise InputError(f"chunks={chunks!r} applies only to schedule='interleaved'; drop it")
    else:
        v = 1
    return dp, tp, pp, m, name, v


def _from_shape(shape: Any, *, micro_batch: Any, peak_flops: Any, efficiency: Any, causal: bool, tp: int,
                pp: int, batch: int, element: Fraction) -> _Model:
    if not isinstance(shape, TransformerShape):
        raise InputError(f"shape={shape!r} is not a TransformerShape")
    b = positive(micro_batch, "micro_batch")
    if shape.heads % tp:
        raise InputError(f"tp={tp} does not divide heads={shape.heads}; each tp rank holds whole heads")
    if peak_flops is None:
        raise InputError("no peak_flops given; shape mode prices compute as "
                         "FLOPs / (peak_flops × efficiency)")
    peak = _positive_number(peak_flops, "peak_flops", "989e12")
    eff = _positive_number(efficiency, "efficiency", "0.5")
    if eff > 1:
        raise InputError(f"efficiency={efficiency!r} is above 1; it is the achieved share of peak_flops")
    per = model_flops(shape, batch=b, causal=causal)
    rate = peak * eff
    layers = shape.layers
    grads = [Fraction(shape.layer_parameters, tp) * element] * layers
    embedding = Fraction(shape.vocabulary * shape.hidden, tp) * element
    grads[0] += embedding  # the input embedding's gradient, ready after layer 0's backward
    logit = Fraction(per.logits_forward, tp) / rate
    return _Model(
        forward=(per.layer.forward / tp / rate,) * layers,
        backward=(per.layer.backward / tp / rate,) * layers,
        gradients=tuple(grads), activation_bytes=b * shape.sequence * shape.hidden * element,
        micro_tokens=b * shape.sequence,
        logits=Unit(forward=logit, backward=2 * logit, weight=logit,
                     gradient_bytes=embedding if pp > 1 else Fraction(0)),
        flops=model_flops(shape, batch=b * batch, causal=causal).total, peak=peak)


def _from_times(forward_s: Any, backward_s: Any, gradient_bytes: Any, activation_bytes: Any, tokens: Any, *,
                dp: int, tp: int, pp: int) -> _Model:
    if forward_s is None or backward_s is None:
        raise InputError("no model given; pass shape= (with peak_flops=) or forward_s= and backward_s=")
    fwd = _times(forward_s, "forward_s")
    bwd = _times(backward_s, "backward_s")
    layers = len(fwd)
    if len(bwd) != layers:
        raise InputError(f"backward_s has {len(bwd)} times and forward_s {layers}; give one per layer")
    if gradient_bytes is None:
        if dp > 1:
            raise InputError(f"dp={dp} needs gradient_bytes= (each layer's gradient on one rank) to price "
                             "the data-parallel reduction")
        grads: tuple[Fraction, ...] = (Fraction(0),) * layers
    else:
        grads = _sizes(gradient_bytes, "gradient_bytes", layers)
    if activation_bytes is None and (tp > 1 or pp > 1):
        raise InputError("tp or pp above 1 needs activation_bytes= (micro_batch·sequence·hidden·bytes) "
                         "to price the tensor-parallel all-reduces and pipeline sends")
    act = Fraction(0) if activation_bytes is None else parse_size(activation_bytes)
    return _Model(forward=fwd, backward=bwd, gradients=grads, activation_bytes=act,
                  micro_tokens=None if tokens is None else positive(tokens, "tokens"))


def _model(*, shape: Any, micro_batch: Any, peak_flops: Any, efficiency: Any, causal: bool,
           forward_s: Any, backward_s: Any, gradient_bytes: Any, activation_bytes: Any, tokens: Any,
           dp: int, tp: int, pp: int, v: int, m: int, element: Fraction) -> _Model:
    if shape is not None:
        if forward_s is not None or backward_s is not None or gradient_bytes is not None:
            raise InputError("shape= and forward_s=/backward_s=/gradient_bytes= were both given; "
                             "pass a shape or per-layer times, not both")
        model = _from_shape(shape, micro_batch=micro_batch, peak_flops=peak_flops, efficiency=efficiency,
                            causal=causal, tp=tp, pp=pp, batch=m * dp, element=element)
    else:
        model = _from_times(forward_s, backward_s, gradient_bytes, activation_bytes, tokens,
                            dp=dp, tp=tp, pp=pp)
    layers = len(model.forward)
    if pp > layers:
        raise InputError(f"pp={pp} is above the {layers} layers; each pipeline stage needs a layer")
    if layers % (pp * v):
        split_by = f"pp={pp} × chunks={v}" if v > 1 else f"pp={pp}"
        raise InputError(f"{layers} layers do not split evenly over {split_by}; choose pp (and chunks) "
                         "dividing the layers")
    events = m * layers * 3
    if events > MAX_LAYER_OPERATIONS:
        raise InputError(f"microbatches={m} × {layers} layers give {events} layer operations (F, B, W) per "
                         f"replica, more than {MAX_LAYER_OPERATIONS} to simulate; use fewer micro-batches")
    return model


def _stages(model: _Model, *, allreduce: Fraction, redo: bool, split: bool, stages: int) -> list[list[Unit]]:
    """Each virtual stage's units: its layers with their tp all-reduces, the logits on the last."""
    units = [
        Unit(forward=f + 2 * allreduce,
              backward=bk + 2 * allreduce + ((f + 2 * allreduce) if redo else 0),
              weight=bk / 2 if split else Fraction(0), gradient_bytes=g)
        for f, bk, g in zip(model.forward, model.backward, model.gradients, strict=True)]
    per = len(units) // stages
    out = [units[vs * per:(vs + 1) * per] for vs in range(stages)]
    if model.logits is not None:
        out[-1].append(model.logits)
    return out


PARAM_GATHERS = ("after", "overlap")
"""When ZeRO 1 and 2 all-gather the updated parameters: after the optimizer (DeepSpeed,
``stage_1_and_2.py``, ``step``), or overlapped with the next forward (Megatron-LM,
``megatron/core/distributed/distributed_data_parallel.py``, ``overlap_param_gather``)."""

MAX_LAYER_OPERATIONS = 1_000_000
"""Most layer operations (micro-batches × layers × 3) one replica's step simulates (seconds at most)."""

ZERO_STAGES = (0, 1, 2, 3)
"""The ZeRO stages :func:`step` models (3 is also PyTorch FSDP's ``FULL_SHARD``)."""

FSDP_PREFETCH = 1
"""Units whose all-gather runs ahead of the compute under ZeRO 3: FSDP keeps one
(``backward_prefetch=BackwardPrefetch.BACKWARD_PRE``, ``limit_all_gathers=True``:
``torch/distributed/fsdp/fully_sharded_data_parallel.py``)."""


def _zero(zero: Any, prefetch: Any, *, pp: int, slowdown: Any, param_gather: Any
          ) -> tuple[int, int, Fraction]:
    """The ZeRO stage (``"fsdp"`` is 3), the prefetch depth and the slowdown, checked (and param_gather)."""
    if isinstance(zero, str) and zero.strip().lower() in ("fsdp", *map(str, ZERO_STAGES)):
        zero = 3 if zero.strip().lower() == "fsdp" else int(zero)
    if isinstance(zero, bool) or zero not in ZERO_STAGES:
        raise InputError(f"zero={zero!r} is not a ZeRO stage; give 0, 1, 2, 3 or 'fsdp' (ZeRO 3: FSDP's "
                         "FULL_SHARD)")
    if zero == 3 and pp > 1:
        raise InputError(f"zero=3 with pp={pp}: parameter sharding across a pipeline is not modelled "
                         "(DeepSpeed's pipeline engine refuses ZeRO 2 and 3); use zero=1 with pp > 1")
    depth = FSDP_PREFETCH if prefetch is None else whole(prefetch, "prefetch", low=0,
                                                         hint="the layers gathered ahead, e.g. prefetch=1")
    if param_gather not in PARAM_GATHERS:
        raise UnknownNameError("parameter gather", str(param_gather), PARAM_GATHERS)
    if param_gather == "overlap" and zero not in (1, 2):
        raise InputError(f"param_gather='overlap' applies to zero=1 or 2 (the parameters gathered after the "
                         f"optimizer); zero={zero} gathers none, drop it")
    if prefetch is not None and zero != 3:
        raise InputError(f"prefetch={prefetch!r} applies only to zero=3 (the parameter all-gathers); drop it")
    u = number(slowdown, "slowdown")
    if not 0 <= u < 1:
        raise InputError(f"slowdown={slowdown!r} is not a share of the compute; give 0 ≤ slowdown < 1, "
                         "e.g. slowdown=0.15")
    return zero, depth, u


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
                priced = cost(collective, algorithm, p=dp, n=n, link=link)
            except UnknownNameError:
                if collective == "allreduce":
                    raise
                priced = cost(collective, "ring", p=dp, n=n, link=link)
                note = f"the {collective}s are priced as ring: algorithm={algorithm!r} has no {collective}"
                if note not in notes:
                    notes.append(note)
            seen[key] = priced.time_s
            notes.extend(x for x in priced.notes if x not in notes)
        return seen[key]

    return price


def _devices(stage_units: list[list[Unit]], *, name: str, pp: int, v: int, m: int, dp: int, zero: int,
             prefetch: int, slowdown: Fraction, price: Callable[[str, Fraction], Fraction], rule: str,
             bucket_bytes: Any, element: Fraction, overlap: bool) -> list[Device]:
    def plan(sizes: list[Fraction]) -> BucketPlan:
        return _buckets(rule, sizes, dp=dp, bucket_bytes=bucket_bytes, bytes_per_element=element)

    return [Device([stage_units[c * pp + s] for c in range(v)],
                   order=order(name, s, stages=pp, microbatches=m, chunks=v), microbatches=m,
                   split=name in SPLIT, zero=zero, prefetch=prefetch, dp=dp, price=price, plan=plan,
                   slowdown=slowdown, overlap_param_gather=overlap) for s in range(pp)]


def _run(devices: list[Device], *, name: str, pp: int, v: int, m: int, send: Fraction
         ) -> tuple[tuple[PipelineOp, ...], ...]:
    return simulate_devices(name, pp, microbatches=m, chunks=v, comm=send,
                            execute=lambda s, op, j, c, start: devices[s].run(op, j, c, start))


def _replay(devices: list[Device], timeline: tuple[tuple[PipelineOp, ...], ...]) -> None:
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


def _placed(topology: Any, order: str, *, link: Any, links: tuple[Any, Any, Any], sizes: tuple[int, int, int],
            notes: list[str]) -> tuple[Any, Any, Any]:
    """The tp, pp and dp links: those given, else their levels' on *topology* (noted)."""
    if topology is None:
        if order != MEGATRON_ORDER:
            raise InputError(f"order={order!r} places the ranks on a topology; pass topology= too")
        return links
    if link is not None:
        raise InputError("link= and topology= were both given; pass the machine's levels or one link")
    if not isinstance(topology, Topology):
        raise InputError(f"topology={topology!r} is not a Topology; build one with topology_of(levels)")
    tp, pp, dp = sizes
    placed = place(topology, order=order, tp=tp, dp=dp, pp=pp)
    if placed.describe(topology):
        notes.append("placement: " + placed.describe(topology))
    tp_link, pp_link, dp_link = links
    return (placed.links.get("tp") if tp_link is None else tp_link,
            placed.links.get("pp") if pp_link is None else pp_link,
            placed.links.get("dp") if dp_link is None else dp_link)


def _model_parallel(act: Fraction, *, tp: int, pp: int, link: Any, tp_link: Any, pp_link: Any, algorithm: str,
                    notes: list[str]) -> tuple[Fraction, Fraction]:
    """One tensor-parallel all-reduce and one pipeline send of the activation tensor (a calibrated
    profile prices the send with its all-reduce fit's α and β at that size)."""
    allreduce = send = Fraction(0)
    if tp > 1 and act > 0:
        source = _link(tp_link, link, "tp_link", "the tensor-parallel all-reduces")
        priced = cost("allreduce", algorithm, p=tp, n=act, link=_for(source, "allreduce"))
        allreduce = priced.time_s
        notes.extend(priced.notes)
    if pp > 1 and act > 0:
        send = _send(_for(_link(pp_link, link, "pp_link", "the pipeline sends"), "allreduce"), act)
    return allreduce, send


def _pipeline(stage_units: list[list[Unit]], *, name: str, pp: int, v: int, m: int, send: Fraction
              ) -> tuple[Fraction, tuple[tuple[PipelineOp, ...], ...]]:
    """The makespan without pipeline sends, and the timeline with them (no data-parallel traffic)."""
    forward, backward, weight = (list(t) for t in zip(*map(totals, stage_units), strict=True))
    timeline = simulate_stages(name, pp, microbatches=m, chunks=v, forward=forward, backward=backward,
                               weight=weight, comm=send)
    if not send:
        return max(ops[-1].end for ops in timeline), timeline
    return simulate_makespan(name, pp, microbatches=m, chunks=v, forward=forward, backward=backward,
                             weight=weight), timeline


def _busiest(stage_units: list[list[Unit]], *, pp: int, v: int, m: int, logits: Unit | None,
             per_layer_tp: Fraction) -> tuple[Fraction, Fraction]:
    """The busiest device's compute time over the step, and the tensor-parallel part of it."""
    def device(s: int) -> list[Unit]:
        return [x for c in range(v) for x in stage_units[c * pp + s]]

    def busy(s: int) -> Fraction:
        return sum((x.forward + x.backward for x in device(s)), Fraction(0))

    busiest = device(max(range(pp), key=busy))
    tp_comm = m * sum((per_layer_tp for x in busiest if x is not logits), Fraction(0))
    return m * sum((x.forward + x.backward for x in busiest), Fraction(0)), tp_comm


def step(*, dp: int = 1, tp: int = 1, pp: int = 1, microbatches: int = 1, schedule: str = "1f1b",
         chunks: int | None = None, recompute: str = "none",
         shape: TransformerShape | None = None, micro_batch: int = 1, peak_flops: Any = None,
         efficiency: Any = 1, causal: bool = False,
         forward_s: Sequence[Any] | None = None, backward_s: Sequence[Any] | None = None,
         gradient_bytes: Sequence[Any] | None = None, activation_bytes: Any = None, tokens: int | None = None,
         bytes_per_element: Any = 2, link: Link | None = None, tp_link: Link | None = None,
         pp_link: Link | None = None, dp_link: Link | None = None, buckets: str = "ddp",
         bucket_bytes: Any = None, zero: int | str = 0, prefetch: int | None = None, slowdown: Any = 0,
         optimizer_s: Any = 0, algorithm: str = "ring", topology: Topology | None = None,
         order: str = MEGATRON_ORDER, param_gather: str = "after") -> StepResult:
    """The time of one training step of dp × tp × pp devices (see the module notes).

    Parameters
    ----------
    dp, tp, pp : int
        Data-, tensor- and pipeline-parallel sizes, each ≥ 1.
    microbatches : int
        Micro-batches per replica per step (M), ≥ 1.
    schedule, chunks : str, int
        The pipeline schedule as in :func:`costmodel.pipeline.bubble` (gpipe, 1f1b, interleaved,
        zb-h1) and, for interleaved, the model chunks per device (default 2).
    recompute : {"none", "full"}
        Full activation recomputation adds one forward (and its two tp all-reduces) to each backward.
    shape, micro_batch, peak_flops, efficiency, causal
        Shape mode: the transformer, sequences per micro-batch, the peak FLOP/s of one device and
        the fraction of it achieved; compute time = FLOPs / tp / (peak_flops × efficiency).
    forward_s, backward_s, gradient_bytes, activation_bytes, tokens
        Time mode (instead of *shape*): each layer's compute times per micro-batch on one tp rank,
        its gradient bytes on one rank, the bytes of the activation tensor a tp all-reduce and a
        pipeline send move (needed when tp or pp > 1), and the tokens of one micro-batch (for
        tokens/s).
    bytes_per_element : number, default 2
        Bytes of an activation and of a gradient element in shape mode (bf16).
    link, tp_link, pp_link, dp_link : LinkParams, PiecewiseLink or Profile
        The link of each kind of communication; *link* (or the topology) for those not given.  A
        profile calibrated on several collectives (:mod:`costmodel.profiles`) prices each one on its
        own segments: the reduce-scatters and all-gathers of ZeRO too.
    topology, order : Topology, str
        Instead of *link*: the levels of the machine (:func:`costmodel.topology.topology_of`) and
        the rank order, innermost first (default ``tp-dp-pp``, Megatron-LM's); each group uses the
        link of the outermost level it spans (:mod:`costmodel.step.placement`).
    buckets, bucket_bytes : str, size
        The gradient-bucket rule (ddp, megatron, deepspeed) and its size, default the framework's.
    zero : {0, 1, 2, 3, "fsdp"}
        The ZeRO stage of the data-parallel replicas (:mod:`costmodel.step.device`): 0 all-reduces
        the buckets, 1 and 2 reduce-scatter them (2 in every micro-batch) and all-gather the
        parameters after the optimizer, 3 (FSDP) all-gathers each layer before it computes and
        reduce-scatters its gradient; 3 needs pp = 1.
    prefetch : int, optional
        ZeRO 3: all-gathers issued this many layers ahead of the compute (default 1, FSDP's).
    param_gather : {"after", "overlap"}
        ZeRO 1 and 2: all-gather the updated parameters after the optimizer, exposed (DeepSpeed), or
        in the next step's first forward, a bucket ahead of the layers that need it (Megatron-LM's
        ``overlap_param_gather``; the step is then the steady state, its first layers waiting for
        their bucket).
    slowdown : number, default 0
        The share of compute speed lost while a data-parallel collective is in flight (Calculon's
        ``processor_usage``), 0 ≤ slowdown < 1.
    optimizer_s : time
        The optimizer step after the last reduction, as it runs on one GPU (sharded under ZeRO).
    algorithm : str
        The all-reduce algorithm of tp and dp (default ring); reduce-scatters and all-gathers use
        it when the registry has it for them, ring otherwise.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> r = step(forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, gradient_bytes=["1MiB"] * 4, dp=2,
    ...          link=combine_link(alpha=0, beta="1ns/B"), bucket_bytes="4MiB")
    >>> [b.layers for b in r.buckets], float(r.step_s), float(r.dp_exposed_s)
    ([(3,), (2, 1, 0)], 0.015145728, 0.003145728)
    """
    given = dict(locals())
    dp, tp, pp, m, name, v = _parallelism(dp, tp, pp, microbatches, schedule=schedule, chunks=chunks)
    if recompute not in RECOMPUTATION:
        raise UnknownNameError("recomputation", str(recompute), RECOMPUTATION)
    if buckets not in BUCKET_RULES:
        raise UnknownNameError("bucket rule", str(buckets), BUCKET_RULES)
    zero, depth, u = _zero(zero, prefetch, pp=pp, slowdown=slowdown, param_gather=param_gather)
    element = _positive_number(bytes_per_element, "bytes_per_element", "2")
    optimizer = named(parse_time, optimizer_s, "optimizer_s")
    model = _model(shape=shape, micro_batch=micro_batch, peak_flops=peak_flops, efficiency=efficiency,
                   causal=causal, forward_s=forward_s, backward_s=backward_s, gradient_bytes=gradient_bytes,
                   activation_bytes=activation_bytes, tokens=tokens, dp=dp, tp=tp, pp=pp, v=v, m=m,
                   element=element)
    notes: list[str] = []
    tp_link, pp_link, dp_link = _placed(topology, order, link=link, links=(tp_link, pp_link, dp_link),
                                        sizes=(tp, pp, dp), notes=notes)
    allreduce, send = _model_parallel(model.activation_bytes, tp=tp, pp=pp, link=link, tp_link=tp_link,
                                      pp_link=pp_link, algorithm=algorithm, notes=notes)
    redo = recompute == "full"
    stage_units = _stages(model, allreduce=allreduce, redo=redo, split=name in SPLIT, stages=pp * v)
    # Unless the data-parallel traffic slows or holds up the compute, the devices' compute runs as the
    # pipeline alone: their timeline is the pipeline's, and only the operations that make gradients
    # are run again, to issue their buckets.
    interferes = bool(u) or zero >= 3 or param_gather == "overlap"
    quiet, timeline = _pipeline(stage_units, name=name, pp=pp, v=v, m=m, send=send)
    makespan = max(ops[-1].end for ops in timeline)
    devices: list[Device] = []
    if dp > 1:
        price = _pricer(_link(dp_link, link, "dp_link", "the data-parallel reduction"), dp=dp,
                        algorithm=algorithm, notes=notes)

        def build(slow: Fraction) -> list[Device]:
            return _devices(stage_units, name=name, pp=pp, v=v, m=m, dp=dp, zero=zero, prefetch=depth,
                            slowdown=slow, price=price, rule=buckets, bucket_bytes=bucket_bytes,
                            element=element, overlap=param_gather == "overlap")

        devices = build(u)
        if interferes:
            timeline = _run(devices, name=name, pp=pp, v=v, m=m, send=send)
        else:
            _replay(devices, timeline)
    end = end_plain = makespan
    if devices:
        end = max(d.end for d in devices)
        if u:
            plain = build(Fraction(0))
            _run(plain, name=name, pp=pp, v=v, m=m, send=send)
            end_plain = max(d.end for d in plain)
        else:
            end_plain = end
    total = max([end + optimizer, *(d.gather_parameters(d.end + optimizer) for d in devices)])
    critical = max(range(len(devices)), key=lambda k: (devices[k].end, -k)) if devices else 0
    busy, tp_comm = _busiest(stage_units, pp=pp, v=v, m=m, logits=model.logits,
                             per_layer_tp=(6 if redo else 4) * allreduce)
    gpus = dp * tp * pp
    scaling: Fraction = Fraction(1)
    if dp > 1:  # the dp = 1 step: with the same links, the pipeline alone (placed anew on a topology)
        alone = makespan + optimizer if topology is None else None
        scaling = (_BASELINE.get() or alone or step(**{**given, "dp": 1}).step_s) / total
    notes.extend(note for note, on in (
        ("tensor-parallel all-reduces are on the critical path of each layer, not overlapped", tp > 1),
        ("pipeline sends are α + β·n of the activation tensor between stages", bool(send)),
        (f"ZeRO {zero}: the bucket rule does not apply; each layer is all-gathered and reduce-scattered "
         "on its own", zero == 3 and dp > 1 and buckets != "ddp"),
        (f"zero={zero} with dp=1 shards nothing", zero > 0 and dp == 1)) if on)
    memory = None if shape is None else step_memory(
        shape, timeline, dp=dp, tp=tp, chunks=v, zero=zero, micro_batch=micro_batch, recompute=recompute,
        split=name in SPLIT, bytes_per_element=element)
    comm = [x for x in devices[critical].issued if x.end <= devices[critical].end] if devices else []
    dp_comm = sum((x.end - x.start for x in comm), Fraction(0))
    return StepResult(
        dp=dp, tp=tp, pp=pp, gpus=gpus, microbatches=m, schedule=name, chunks=v, recompute=recompute,
        step_s=total, compute_s=busy - tp_comm, tp_comm_s=tp_comm, bubble_s=quiet - busy,
        pp_exposed_s=makespan - quiet, dp_exposed_s=end_plain - makespan, optimizer_s=optimizer,
        pipeline_s=makespan, tp_allreduce_s=allreduce, pp_send_s=send, dp_comm_s=dp_comm,
        dp_hidden_s=dp_comm - (end_plain - makespan), contention_s=end - end_plain,
        param_gather_s=total - end - optimizer, dp_stage=critical, zero=zero, prefetch=depth,
        param_gather=param_gather, slowdown=u,
        bucket_rule=buckets,
        tokens_per_s=None if model.micro_tokens is None else Fraction(dp * m * model.micro_tokens) / total,
        model_flops=model.flops,
        mfu=None if model.flops is None or model.peak is None else model.flops / (total * gpus * model.peak),
        scaling_efficiency=scaling, buckets=_bucket_rows(devices[critical]) if devices else (), memory=memory,
        timeline=timeline, communication=tuple(_intervals(s, d.issued) for s, d in enumerate(devices)),
        notes=tuple(notes),
        sources=_SOURCES + (ZERO_SOURCES.get(zero, ()) if dp > 1 else ()) + ((SLOWDOWN_SOURCE,) if u else ()))


estimate_step = step
"""Another name of :func:`step` (``costmodel.estimate_step``); calling the package, ``costmodel.step(...)``,
is the same."""

_BASELINE: ContextVar[Fraction | None] = ContextVar("_BASELINE", default=None)


@contextmanager
def known_baseline(step_s: Fraction) -> Iterator[None]:
    """Within it, :func:`step` with dp > 1 takes *step_s* as its dp = 1 step instead of pricing it.

    For a caller that has priced that step already and knows it is the same for every call inside
    (:func:`costmodel.step.sweep.sweep_step` over a knob the dp = 1 step does not depend on).
    """
    token = _BASELINE.set(step_s)
    try:
        yield
    finally:
        _BASELINE.reset(token)
