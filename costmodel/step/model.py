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
products, on the critical path.  A layer of multi-head latent attention computes its down-projections
whole on every rank (Megatron-Core's ``MLASelfAttention``): without sequence parallelism its attention
all-reduces the output projection's output forward and the up-projections' input gradients, d_c' and d_c
wide (h without a query latent), backward; with it, it gathers the two latents and the rotary key,
d_c' + d_c + d_r channels where a standard layer gathers h, and reduce-scatters their gradients, and
after the backward the down-projections' gradients, each rank's from its own s/t tokens, are all-reduced
over the tp ranks once a step (``finalize_model_grads``), counted with the tensor-parallel communication.
The first stage also runs the input embedding, the last the output layer and its cross entropy.

An MoE layer with expert parallelism (ep > 1: the dp replicas split into ep ranks holding E/ep
experts each, Megatron-Core's expert grid) adds four all-to-alls, the dispatch and combine forward
and their gradients backward (six with full recomputation), each of each rank's send buffer of
n = c·k·T·h·e bytes (its tokens' k copies, T/tp tokens with sequence parallelism, capacity factor c
or 1), priced as a pairwise all-to-all over the ep ranks on the ep group's link (Lepikhin et al. 2021,
section 3.2; Megatron-Core's ``MoEAlltoAllTokenDispatcher``), on the critical path like the
tensor-parallel collectives.  With context parallelism a rank holds s/cp of each sequence, so T is
b·s/cp (over tp with sequence parallelism).  The ep ranks are carved out of the dp × cp ranks, as
Megatron-Core's expert grid over the same world is (``megatron/core/parallel_state.py``), so ep
divides dp·cp.  The experts' gradients are reduced over the dp·cp/ep ranks holding the same experts
(Megatron-Core's expert-data-parallel group, world/(ep·tp·pp) ranks with the expert tensor
parallelism equal to tp) after the backward, before the optimizer, not overlapped; the other
weights' over all dp × cp ranks as before (with ep = 1 the experts' join them).

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

With context parallelism (cp ranks, Megatron-Core's ring attention: Liu et al. 2023; Megatron-LM's
context_parallel guide) each rank holds s/cp of every sequence in 2·cp chunks (the causal load balance),
so its compute, activations, tensor-parallel collectives and pipeline sends are those of s/cp tokens
(attention: 1/cp of the products).  Each attention layer passes the K and V blocks of s/cp tokens round
the cp ranks in cp − 1 steps forward, and K, V and their gradients (twice the bytes) backward, each
step α + β·n on the context-parallel link and overlapped with one block of the attention compute, so a
layer's exposed context-parallel time is

    forward (cp − 1)·max(0, send(n_kv) − A_f/cp),   backward (cp − 1)·max(0, send(2·n_kv) − A_b/cp)

(A_f, A_b the rank's attention forward and backward compute, n_kv = 2·b·(s/cp)·(g/t)·d·e; with latent
attention the heads' keys and values as the attention core meets them, b·(s/cp)·(a/t)·(d + d_r + d_v)·e).  The
gradients are reduced over dp × cp ranks (Megatron-LM's data-parallel group with context parallelism),
on that group's link, and ZeRO shards over them.

The step is split exactly into compute + tensor-parallel communication (the busiest device's), exposed
context-parallel communication, bubble
(the makespan without pipeline sends less that busy time), exposed pipeline sends (the makespan less
the one without sends), exposed data-parallel communication (what it adds at full compute speed), the
compute slowdown, the optimizer and the parameter all-gather.  With a GPU, each device's memory is
checked against its capacity (:mod:`costmodel.step.memory`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from costmodel._gc import fewer_collections
from costmodel._json import JSONFields
from costmodel.collectives import piecewise
from costmodel.collectives.evaluate import cost as collective_cost
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import exact_sum
from costmodel.links import resolve_link
from costmodel.params import Link, LinkParams, PiecewiseLink
from costmodel.pipeline.orders import SPLIT, order, resolve_schedule
from costmodel.pipeline.result import PipelineOp
from costmodel.pipeline.simulate import (
    SimulatedPipeline,
    peak_inflight,
    settled_prefix,
    simulate_devices,
    simulate_pipeline,
)
from costmodel.references import (
    CHOWDHERY_2022,
    FEDUS_2022,
    KORTHIKANTI_2022,
    LEPIKHIN_2021,
    LIU_2023_RING,
    MEGATRON_LM,
    NARAYANAN_2021_MEGATRON,
    QI_2024,
    SHOEYBI_2019,
    THAKUR_2005,
    Cited,
)
from costmodel.step.buckets import BucketPlan, ddp_buckets, deepspeed_buckets, megatron_buckets
from costmodel.step.compute import OpTime, Work, mtp_work, optimizer_time, shape_work
from costmodel.step.config import StepConfig
from costmodel.step.device import ZERO_SOURCES, Device, Issued, Unit, runs, totals
from costmodel.step.flops import model_flops, resolve_causal, tp_share, window_notes
from costmodel.step.frameworks import (
    DEEPSPEED_ENGINE,
    SENDS_SOURCES,
    TP_OVERLAP_SOURCES,
    DataParallel,
    data_parallel,
    pipeline_schedules,
    pipeline_sends,
    ring_attention,
    tp_overlap,
)
from costmodel.step.memory import OPTIMIZER_BYTES, DeviceMemory, check_fits, step_memory
from costmodel.step.ops import LATENT_SOURCES as OP_LATENT_SOURCES
from costmodel.step.ops import SOURCES as OP_SOURCES
from costmodel.step.overlap import BucketTiming
from costmodel.step.placement import MEGATRON_ORDER, Placement, canonical_order, place
from costmodel.step.rates import SOURCES as RATE_SOURCES
from costmodel.step.rates import Rates
from costmodel.step.stream import SOURCE as SLOWDOWN_SOURCE
from costmodel.topology import MAX_RANKS, Level, Topology
from costmodel.units import format_size, format_time

if TYPE_CHECKING:
    from costmodel.collectives.result import AlgorithmCost
    from costmodel.profiles import Profile

_shape_work = lru_cache(maxsize=1024)(shape_work)
_model_flops = lru_cache(maxsize=256)(model_flops)
"""A layer's work and the model's FLOPs, each pure and remembered: the configurations a plan or a sweep
prices share their layers and their global batch."""

_T = TypeVar("_T")


def _held(cache: dict[tuple[Any, ...], tuple[Any, Any]], anchor: Any, key: tuple[Any, ...],
          make: Callable[[], _T], *, size: int = 64) -> _T:
    """``make()``, remembered in *cache* under *anchor*'s identity and *key*: for what is computed from an
    object that is no key of its own (a GPU holds dicts) or long to hash (a profile, a link, a GPU's rates),
    which the configurations a plan or a sweep prices share.  The anchor is held beside the value, so that
    no other object takes its id while the entry lasts; a cache keeps at most *size* entries (then starts
    again)."""
    full = (id(anchor), *key)
    found = cache.get(full)
    if found is None or found[0] is not anchor:
        if len(cache) >= size:
            cache.clear()
        found = cache[full] = (anchor, make())
    return found[1]


def cost(collective: str, algorithm: str, *, p: int, n: Fraction, link: Link, chunk_note: bool = True
         ) -> AlgorithmCost:
    """:func:`costmodel.collectives.evaluate.cost` of one of a step's collectives, remembered by the link
    (:func:`_held`): the configurations a plan prices share their collectives.  The result is shared by the
    calls that ask for it, which only read it."""
    return _held(_COSTS, link, (collective, algorithm, p, n, chunk_note),
                 lambda: collective_cost(collective, algorithm, p=p, n=n, link=link, chunk_note=chunk_note),
                 size=4096)


_COSTS: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _place(topology: Topology, *, order: str, tp: int, dp: int, pp: int, cp: int, ep: int) -> Placement:
    """:func:`~costmodel.step.placement.place`, remembered by the topology (:func:`_held`): the
    configurations a plan prices share their machine."""
    return _held(_PLACEMENTS, topology, (order, tp, dp, pp, cp, ep),
                 lambda: place(topology, order=order, tp=tp, dp=dp, pp=pp, cp=cp, ep=ep), size=1024)


_PLACEMENTS: dict[tuple[Any, ...], tuple[Any, Any]] = {}

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
    "layer_operations",
    "lower_bound",
    "memory_of",
    "order_facts",
    "price_step",
    "step",
    "work_bound",
]

_SOURCES = (
    SHOEYBI_2019.at("section 3, figure 4: two all-reduces forward and two backward per layer"),
    NARAYANAN_2021_MEGATRON.at("section 2: PTD-P, data × tensor × pipeline parallelism"),
    QI_2024.at("section 2: the backward split into B (input gradient) and W (weight gradient)"),
    THAKUR_2005.at("section 3: a message of n bytes costs α + nβ"),
    CHOWDHERY_2022.at("appendix B: model and hardware FLOPs utilization"),
)

_EXPERT_SOURCES = (
    LEPIKHIN_2021.at("section 3.2: the dispatch and combine all-to-alls of an MoE layer over the expert-"
                     "parallel devices"),
    FEDUS_2022.at("section 2.1 and figure 3: expert capacity = capacity factor × tokens per expert"),
    MEGATRON_LM.at("megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher; "
                   "megatron/core/parallel_state.py: the expert-data-parallel group of world/(ep·tp·pp) "
                   "ranks"),
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

    ``step_s = compute_s + tp_comm_s + cp_comm_s + ep_comm_s + bubble_s + pp_exposed_s + dp_exposed_s
    + contention_s + expert_dp_s + optimizer_s + param_gather_s``; *cp_comm_s* is the exposed
    context-parallel communication of the busiest device, *cp_send_s* one send of a K and V block.
    *pp_send_s* is one send between pipeline stages, *pp_gather_s* the all-gather that follows it with
    scatter-gather sends, and *pipeline_sends* how they run (``overlap``, ``blocking``,
    ``scatter-gather``: :func:`~costmodel.step.frameworks.pipeline_sends`); a blocking exchange is
    part of *pp_exposed_s*.  *tp_overlap* says whether the backward's tensor-parallel collectives run
    beside its products (``none``, ``backward``; ``""`` with tp = 1); *tp_comm_s* counts what is exposed,
    and with sequence parallelism the all-reduce over the tp ranks, after the backward, of the gradients of
    the weights every tp rank holds whole (latent attention's down-projections; the slowest device's).
    *tp_allreduce_s* is one h-wide all-reduce (or reduce-scatter and all-gather) of a layer.
    *ep_comm_s* is the busiest device's expert-parallel all-to-alls (each *ep_alltoall_s*, of
    *ep_alltoall_bytes* per rank), *expert_dp_s* the reduction of the experts' gradients over the
    dp·cp/ep ranks holding the same experts after the backward.  *dp_exposed_s* is what the data-parallel
    collectives add to the pipeline at full compute speed, *contention_s* what the compute slowdown adds
    on top,
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
    cp: int
    gpus: int
    ep: int
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
    cp_comm_s: Fraction
    ep_comm_s: Fraction
    bubble_s: Fraction
    pp_exposed_s: Fraction
    dp_exposed_s: Fraction
    expert_dp_s: Fraction
    optimizer_s: Fraction
    pipeline_s: Fraction
    tp_allreduce_s: Fraction
    ep_alltoall_s: Fraction
    ep_alltoall_bytes: Fraction
    pp_send_s: Fraction
    pp_gather_s: Fraction
    pipeline_sends: str
    tp_overlap: str
    cp_send_s: Fraction
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

    @property
    def fits(self) -> bool:
        """Whether every device's memory fits its GPU's (:func:`~costmodel.step.memory.check_fits`); true
        where the step has no GPU or no shape to count memory with."""
        if self.memory is None or self.memory_capacity_bytes is None:
            return True
        return check_fits(self.memory, capacity=self.memory_capacity_bytes, gpu=self.gpu or "") is None


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
    return _held(_PROFILE_LINKS, source, (collective,), lambda: resolve_link(collective, profile=source))


_PROFILE_LINKS: dict[tuple[Any, ...], tuple[Any, Any]] = {}
"""The links of the profiles last priced on, by profile (:func:`_held`) and collective."""


def _send(link: Link, n: Fraction) -> Fraction:
    """One message of n bytes: α + nβ, on a piecewise link with the segment of its size (remembered by the
    link: :func:`_held`)."""
    if isinstance(link, PiecewiseLink):
        return _held(_SENDS, link, (n,), lambda: _piecewise_send(link, n), size=1024)
    return link.alpha_s + link.beta_s_per_byte * n


_SENDS: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _piecewise_send(link: PiecewiseLink, n: Fraction) -> Fraction:
    placed = piecewise.placed(link)
    if not placed.by_message:
        raise InputError(str(placed.refuses("a point-to-point message")))
    alpha, beta, _ = placed.message(n).terms(n, reduce=False)
    return alpha + beta


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
    embedding_gradient: Fraction = Fraction(0)  # the input embedding's share of gradients[0]
    model_flops: Fraction | None = None
    hardware_flops: Fraction | None = None
    six_n_flops: Fraction | None = None
    peak: Fraction | None = None
    rates: Rates | None = None
    ops: tuple[OpTime, ...] = ()
    extra_tp: bool = False  # the embedding's and output layer's tensor-parallel collectives are priced
    kv_bytes: Fraction = Fraction(0)  # the K and V block a context-parallel step sends
    attention_forward: Fraction = Fraction(0)  # one layer's attention compute on a rank, forward
    attention_backward: Fraction = Fraction(0)  # and backward
    routed: tuple[bool, ...] = ()  # each layer: a mixture of experts (its all-to-alls priced)
    expert_gradients: tuple[Fraction, ...] = ()  # each layer's routed experts' gradient on one rank
    dispatch_bytes: Fraction = Fraction(0)  # n of one dispatch (or combine) all-to-all on one rank
    mtp: int = 0  # the multi-token prediction modules, the last entries of layers (the last stage's)


def _parallelism(c: StepConfig) -> tuple[str, int]:
    name = resolve_schedule(c.schedule)
    if c.cp > 1 and not ring_attention(c.framework):
        raise InputError(f"cp={c.cp} is ring attention, which framework={c.framework!r} does not run: "
                         "DeepSpeed splits a sequence with Ulysses' all-to-alls, not modelled; use cp=1, "
                         "or framework='megatron'")
    runs = pipeline_schedules(c.framework)
    if c.pp > 1 and runs is not None and name not in runs:
        raise InputError(f"schedule={name!r} is not one framework={c.framework!r} runs: DeepSpeed's pipeline "
                         f"engine has one training schedule, in 1F1B's order; use schedule=1f1b, or "
                         f"framework='megatron' for Megatron-LM's schedules")
    if name == "interleaved":
        v = 2 if c.chunks is None else c.chunks
        if c.microbatches % c.pp:
            m = c.microbatches
            raise InputError(f"microbatches={m} is not a multiple of pp={c.pp}; interleaved 1F1B needs one, "
                             f"e.g. microbatches={m + c.pp - m % c.pp}, or use schedule=1f1b")
        return name, v
    if c.chunks is not None and c.chunks != 1:
        raise InputError(f"chunks={c.chunks} is set, and applies only to schedule=interleaved; drop chunks=")
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
        raise InputError("peak_flops= and gpu= were both given; give one: the GPU prices each operation "
                         "at its own rates, or peak_flops= with efficiency= prices every FLOP at a share of "
                         "that peak")
    # the same Rates for the same GPU: it remembers the prices of its products and kernels, which the
    # configurations a plan prices on one GPU share
    return _held(_GPU_RATES, c.gpu, (c.dtype,), lambda: Rates.of(c.gpu, c.dtype))


_GPU_RATES: dict[tuple[Any, ...], tuple[Any, Any]] = {}
"""The rates of the GPUs last priced, by GPU (:func:`_held`) and dtype."""


def _from_shape(c: StepConfig, mode: DataParallel, *, batch: int, notes: list[str],
                operations: bool = True) -> _Model:
    """The model of a shape's step; *operations*: with the first layer's priced operations (``ops``, which
    a step shows), else without them (``ops`` empty: all a bound needs)."""
    shape, tp, b, cp = c.shape, c.tp, c.micro_batch, c.cp
    if shape.heads % tp:  # the tp it suggests divide the key-value heads too (they divide the heads)
        raise InputError(f"tp={tp} does not divide heads={shape.heads}; each tp rank holds whole heads: "
                         f"give tp={_nearest_divisors(shape.groups, tp)}")
    if shape.groups % tp:  # Megatron-Core divides the query groups over the tp ranks (no replication)
        raise InputError(f"tp={tp} does not divide kv_groups={shape.groups}; each tp rank holds whole "
                         f"key-value heads: give tp={_nearest_divisors(shape.groups, tp)}")
    if cp > 1 and shape.sequence % (2 * cp):
        halves = shape.sequence // 2 if shape.sequence % 2 == 0 else 0
        fits = f"give cp={_nearest_divisors(halves, cp)}" if halves else "give an even sequence"
        raise InputError(f"cp={cp} does not split the sequence {shape.sequence} into 2·cp = {2 * cp} equal "
                         f"chunks (Megatron-Core's load-balanced causal split); {fits}")
    if c.sequence_parallel and tp > 1 and shape.sequence % tp:
        raise InputError(f"sequence_parallel=True with tp={tp}: the sequence {shape.sequence} does not split "
                         "over the tp ranks")
    causal = resolve_causal(shape, c.causal)
    if cp > 1 and shape.window is not None and shape.window < shape.sequence:
        raise InputError(f"cp={cp} with a sliding window of {shape.window} tokens: the ring attention priced "
                         "here sends every K and V block round the cp ranks, and a windowed layer needs only "
                         "the blocks inside its window, which this model does not price; give cp=1")
    _check_experts(c)
    rates = _rates(c, notes)
    element = _activation_element(c)
    if c.recompute == "selective" and c.attention == "flash" and not rates.flat:
        notes.append("recompute=selective with flash attention recomputes nothing more: FlashAttention "
                     "keeps no attention matrix and rebuilds it in its own backward")
    work: dict[str, Any] = {
        "micro_batch": b, "tp": tp, "rates": rates, "sequence_parallel": c.sequence_parallel and tp > 1,
        "attention": c.attention, "recompute": c.recompute, "causal": causal, "element": element,
        "accumulate": mode.accumulate, "cp": cp, "dropout": c.dropout, "ep": c.ep,
        "capacity_factor": c.capacity_factor}
    kind, logits, embedding, priced, core = _layers(shape, work, operations=operations)
    routed = _layer_kinds(shape)[2] + (shape.mtp_moe,) * shape.mtp_layers
    grad = _grad_element(c, mode)
    split = _layer_weights(shape)
    # without expert parallelism the experts' gradients join the others' buckets (the groups are the same);
    # each distinct layer's gradients computed once (the layers are alike but for dense first ones); latent
    # attention's down-projections are whole on every tp rank
    whole = shape.duplicated_parameters
    kinds = {pair: (tp_share(pair[0] + (pair[1] if c.ep == 1 else 0), tp=tp, duplicated=whole) * grad,
                    Fraction(0 if c.ep == 1 else pair[1], tp * c.ep) * grad) for pair in set(split)}
    grads = [kinds[pair][0] for pair in split]
    experts = tuple(kinds[pair][1] for pair in split)
    embedding_grad = Fraction(shape.vocabulary * shape.hidden, tp) * grad
    grads[0] += embedding_grad  # the input embedding's gradient, ready after layer 0's backward
    if shape.mtp_layers and c.pp > 1:  # the last stage's copy of the embedding the modules look up
        grads[shape.layers] += embedding_grad
    output = c.pp > 1 or not shape.tied_embeddings  # the output layer's own matrix (a copy, or untied)
    full = _model_flops(shape, batch=b * batch, causal=causal)
    run = _model_flops(shape, batch=b * batch, causal=causal, capacity_factor=c.capacity_factor,
                      recompute="full" if c.recompute == "full" else "none")
    hardware = run.total
    if c.recompute == "selective":  # the attention core once more, not the whole forward: each layer's own
        hardware = run.total + run.attention
    attention_f, attention_b = _attention_times(c, shape, core, rates=rates, causal=causal)
    kv_heads = max(1, shape.groups // tp)
    # a rank's tokens: s/cp of each sequence (context parallelism), 1/tp of those with sequence parallelism
    tokens = Fraction(b * shape.sequence, cp * (tp if c.sequence_parallel and tp > 1 else 1))
    dispatch = Fraction(0)
    if shape.moe:
        assert shape.top_k is not None
        cf = Fraction(1) if c.capacity_factor is None else c.capacity_factor
        dispatch = cf * shape.top_k * tokens * shape.hidden * element
    return _Model(layers=kind, gradients=tuple(grads),
                  element=element, grad_element=grad,
                  activation_bytes=Fraction(b * shape.sequence * shape.hidden, cp) * element,
                  micro_tokens=b * shape.sequence,
                  logits=logits, logits_gradient=embedding_grad if output else Fraction(0),
                  embedding=embedding, embedding_gradient=embedding_grad, model_flops=full.total,
                  hardware_flops=hardware,
                  six_n_flops=Fraction(full.six_n_flops), peak=rates.peak, rates=rates, ops=priced,
                  extra_tp=not rates.flat,
                  kv_bytes=Fraction(b * shape.sequence, cp) * kv_heads * element
                  * (shape.query_head_width + shape.value_head_width),  # a K and a V block: 2·d each
                  attention_forward=attention_f, attention_backward=attention_b,
                  routed=routed, expert_gradients=experts, dispatch_bytes=dispatch, mtp=shape.mtp_layers)


def _layers(shape: Any, work: dict[str, Any], *, operations: bool
            ) -> tuple[tuple[Work, ...], Work, Work, tuple[OpTime, ...], tuple[Fraction, Fraction]]:
    """Each layer's work (*work*: the arguments of :func:`shape_work` but the layer's kind), the output
    layer's and the embedding's, the priced operations of the first layer of the model's kind (its first
    MoE layer; none without *operations*), and that layer's attention core's forward and backward times.

    Each kind of layer is priced once (FFN dense or MoE, attention global or windowed), then each layer by
    its own kind, so a pipeline stage holds exactly the layers it runs."""
    main, groups, routed, windowed_layers = _layer_kinds(shape)
    priced: tuple[OpTime, ...] = ()
    if operations:
        layer, logits, embedding, priced = _shape_work(shape, window=main[1], **work)
        core = _core_times(priced)
    else:
        layer, logits, embedding, core = _layer_work(shape, window=main[1], **work)
    works = {main: layer}
    # a dense layer's work does not depend on the experts' parallelism or capacity: one key for them all
    dense = {**work, "ep": 1, "capacity_factor": None}
    for moe, windowed in groups:
        if (moe, windowed) not in works:
            works[moe, windowed] = _layer_work(shape, dense=not moe, window=windowed,
                                               **(work if moe else dense))[0]
    kind = tuple(works[moe, windowed] for moe, windowed in zip(routed, windowed_layers, strict=True))
    if shape.mtp_layers:
        kind += (_mtp_module(shape, works[shape.mtp_moe, shape.mtp_window], work),) * shape.mtp_layers
    return kind, logits, embedding, priced, core


def _mtp_module(shape: Any, layer: Work, work: dict[str, Any]) -> Work:
    """One multi-token prediction module's work: its layer's (*layer*, the last main layer's kind) and
    :func:`~costmodel.step.compute.mtp_work`'s, its norms, projection, logits and embedding lookup,
    remembered by the rates as a layer's work is."""
    keys = ("micro_batch", "tp", "sequence_parallel", "element", "cp")
    head = _held(_LAYER_WORKS, work["rates"], ("mtp", shape, *(work[k] for k in keys)),
                 lambda: mtp_work(shape, rates=work["rates"], **{k: work[k] for k in keys}), size=8192)
    return Work(forward=layer.forward + head.forward, backward=layer.backward + head.backward,
                weight=layer.weight + head.weight, recompute=layer.recompute, column=layer.column)


_ATTENTION_OPS = ("flash attention", "attention scores", "softmax", "attention dropout", "attention context")
"""The operations of the attention core (forward, and with ``backward`` or ``dgrad`` their gradients)."""


def _attention_times(c: StepConfig, shape: Any, core: tuple[Fraction, Fraction], *, rates: Rates,
                     causal: bool) -> tuple[Fraction, Fraction]:
    """One layer's attention compute on a rank, forward and backward: what ring attention overlaps its
    K and V sends with (*core*, priced per operation: :func:`_core_times`)."""
    if c.cp == 1:
        return Fraction(0), Fraction(0)
    if rates.flat:
        per = model_flops(shape, batch=c.micro_batch, causal=causal).layer.attention / (c.tp * c.cp)
        return per / rates.plateau, 2 * per / rates.plateau
    return core


def _core_times(priced: Sequence[OpTime]) -> tuple[Fraction, Fraction]:
    """The forward and backward times of a layer's attention core among its priced operations."""
    core = [p for p in priced if p.name.startswith(_ATTENTION_OPS)]
    return (sum((p.time_s for p in core if p.phase == "forward"), Fraction(0)),
            sum((p.time_s for p in core if p.phase == "backward"), Fraction(0)))


def _layer_work(shape: Any, *, rates: Rates, **work: Any
                ) -> tuple[Work, Work, Work, tuple[Fraction, Fraction]]:
    """:func:`shape_work` without its priced operations, and with its attention core's times
    (:func:`_core_times`): what a plan's bounds need of each configuration, remembered for many of them by
    the rates (:func:`_held`; a plan meets thousands of distinct layers, whose priced operations would hold
    far more)."""
    def make() -> tuple[Work, Work, Work, tuple[Fraction, Fraction]]:
        if work.get("recompute") == "full":
            # full recomputation runs the layer's forward operations again at the start of its backward,
            # priced as they are forward: the work without it, its forward added to the backward (the
            # output layer, the embedding and the attention core's forward and backward are the same)
            plain, logits, embedding, core = _layer_work(shape, rates=rates, **{**work, "recompute": "none"})
            layer = Work(forward=plain.forward, backward=plain.backward + plain.forward, weight=plain.weight,
                         recompute=plain.forward, column=plain.column)
            return layer, logits, embedding, core
        layer, logits, embedding, priced = shape_work(shape, rates=rates, **work)
        return layer, logits, embedding, _core_times(priced)

    return _held(_LAYER_WORKS, rates, (shape, *sorted(work.items())), make, size=8192)


_LAYER_WORKS: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _nearest_divisors(n: int, near: int) -> str:
    """The divisors of *n* either side of *near*: the largest below it and the smallest above (``2 or 4``)."""
    fits = [x for x in range(1, n + 1) if n % x == 0] if n <= 10**7 else [1, n]
    below = [x for x in fits if x < near]
    above = [x for x in fits if x > near]
    return " or ".join(str(x) for x in (below[-1:] + above[:1]))



def _nearest(value: int, valid: Sequence[int]) -> str:
    """The valid values nearest *value*: the largest below and the smallest above (``ep=2 or ep=4``)."""
    below = [v for v in valid if v < value]
    above = [v for v in valid if v > value]
    near = ([max(below)] if below else []) + ([min(above)] if above else [])
    return " or ".join(f"ep={v}" for v in near)


def _check_experts(c: StepConfig) -> None:
    """Expert parallelism and the capacity factor against the shape: ep divides the experts and the dp·cp
    ranks (Megatron-Core carves its expert grid, expert-tp × ep × expert-dp × pp, out of the same ranks
    as tp × cp × dp × pp, so expert-dp = dp·cp/ep)."""
    shape = c.shape
    if not shape.moe:
        for name, default in (("ep", 1), ("capacity_factor", None)):
            if getattr(c, name) != default:
                raise InputError(f"{name}= applies to a mixture of experts; give experts= and top_k= in the "
                                 "shape, or leave it out")
        return
    experts, ep, ranks = shape.experts, c.ep, c.dp * c.cp
    if experts % ep == 0 and ranks % ep == 0:
        return
    valid = [v for v in range(1, min(experts, ranks) + 1) if experts % v == 0 and ranks % v == 0]
    if experts % ep:
        raise InputError(f"ep={ep} does not divide experts={experts}; give {_nearest(ep, valid)}")
    held = f"dp·cp = {c.dp}·{c.cp} = {ranks}" if c.cp > 1 else f"dp={c.dp}"
    raise InputError(f"ep={ep} does not divide {held}: the expert-parallel ranks split the "
                     f"data-parallel{' and context-parallel' if c.cp > 1 else ''} ranks; give "
                     f"{_nearest(ep, valid)}, or more dp")


def _activation_element(c: StepConfig) -> Fraction:
    """Bytes of an activation: ``bytes_per_element`` when given, else 2 (bf16 and fp16, and fp8 training,
    whose activations stay bf16) or 4 (fp32 and tf32)."""
    if c.bytes_per_element is not None:
        return c.bytes_per_element
    return _FOUR if c.dtype in ("fp32", "tf32") else _TWO


_TWO, _FOUR, _ONE = Fraction(2), Fraction(4), Fraction(1)
"""Element sizes and shares used by every configuration, one object each: the memory's remembered results
are looked up by them."""


def _grad_element(c: StepConfig, mode: DataParallel) -> Fraction:
    """Bytes of a gradient element reduced: ``bytes_per_element`` when given, else the framework's."""
    return c.bytes_per_element if c.bytes_per_element is not None else mode.grad_element


def _from_times(c: StepConfig) -> _Model:
    if c.forward_s is None or c.backward_s is None:
        raise InputError("no model given; pass shape= (with gpu= or peak_flops=) or forward_s= and "
                         "backward_s=")
    for name in ("micro_batch", "causal", "dropout", "attention", "gpu", "dtype", "peak_flops", "efficiency",
                 "ep", "capacity_factor"):
        if getattr(c, name) != StepConfig.__dataclass_fields__[name].default:
            raise InputError(f"{name}= describes a transformer shape (shape=); with forward_s= and "
                             "backward_s= leave it out")
    if c.recompute == "selective":
        raise InputError("recompute=selective recomputes the attention core of a transformer shape; with "
                         "per-layer times give recompute=full or recompute=none")
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


def _model(c: StepConfig, mode: DataParallel, *, notes: list[str], operations: bool = True) -> _Model:
    if c.shape is not None:
        if c.forward_s is not None or c.backward_s is not None or c.gradient_bytes is not None:
            raise InputError("shape= and forward_s=/backward_s=/gradient_bytes= were both given; "
                             "pass a shape or per-layer times, not both")
        return _from_shape(c, mode, batch=c.microbatches * c.dp, notes=notes, operations=operations)
    if c.cp > 1:
        raise InputError(f"cp={c.cp} splits a transformer's sequence; with forward_s= and backward_s= give "
                         "shape= instead")
    return _from_times(c)


def _layout(c: StepConfig, layers: int, v: int) -> tuple[int, ...]:
    """The layers of each virtual stage (chunk·pp + device), checked."""
    stages = c.pp * v
    if c.stage_layers is not None:
        given = c.stage_layers
        if len(given) != stages:
            what = f"pp={c.pp} × chunks={v} = {stages}" if v > 1 else f"pp={c.pp}"
            raise InputError(f"stage_layers= lists {len(given)} stages for {what}; give one count per "
                             "(virtual) stage")
        if sum(given) != layers:
            raise InputError(f"stage_layers={','.join(map(str, given))} holds {sum(given)} layers, not the "
                             f"model's {layers}")
        return given
    if c.pp > layers:
        raise InputError(f"pp={c.pp} is above the {layers} layers; each pipeline stage needs a layer")
    if layers % stages:
        split_by = f"pp={c.pp} × chunks={v}" if v > 1 else f"pp={c.pp}"
        split = ",".join(map(str, uneven(layers, stages, mtp=c.shape.mtp_layers if c.shape else 0)))
        ends = ("embedding and the output layer" if not c.shape or not c.shape.mtp_layers else
                "embedding, the output layer and the multi-token prediction modules")
        raise InputError(f"{layers} layers do not split evenly over {split_by}; choose pp (and chunks) "
                         f"dividing the layers, or give stage_layers={split} (the fewer layers at the ends, "
                         f"whose stages also hold the {ends})")
    return (layers // stages,) * stages


def uneven(layers: int, stages: int, *, mtp: int = 0) -> tuple[int, ...]:
    """*layers* over *stages* as evenly as they go, the stages with one layer fewer taken from the ends
    inwards (the first and last, then the second and the second to last ...): the first and last stages
    also hold the embedding and the output layer (Llama 3 405B's 126 layers on 16 stages: Dubey et al.
    2024, section 3.3.2, one layer fewer on the first and the last).  The last stage also runs the *mtp*
    multi-token prediction modules, a layer each: the layers and the modules are spread so, and the last
    stage holds its share less the modules (DeepSeek-V3's 61 layers and one module on 32 stages: two
    layers on each but the ends, one on the first, and the module alone on the last, beside the output
    layer).

    >>> uneven(126, 16)
    (7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7)
    >>> uneven(11, 4)
    (2, 3, 3, 3)
    >>> uneven(61, 32, mtp=1)[:3], uneven(61, 32, mtp=1)[-2:]
    ((1, 2, 2), (2, 0))
    """
    q, r = divmod(layers + mtp, stages)
    ends = [i for pair in zip(range(stages), reversed(range(stages)), strict=True) for i in pair]
    fewer = set(list(dict.fromkeys(ends))[:stages - r])
    out = [q if s in fewer else q + 1 for s in range(stages)]
    s = stages - 1
    while mtp:  # the modules take the last stages' places, from the last one back
        taken = min(mtp, out[s])
        out[s] -= taken
        mtp -= taken
        s -= 1
    return tuple(out)


def with_mtp(layout: Sequence[int], mtp: int) -> tuple[int, ...]:
    """*layout* (the main layers of each virtual stage) with the *mtp* multi-token prediction modules on
    the last virtual stage, after its layers (Megatron-Core's ``MultiTokenPredictionBlock``, built where
    ``post_process`` is: the last pipeline stage): the units each virtual stage runs.

    >>> with_mtp((1, 2, 2, 1), 1)
    (1, 2, 2, 2)
    """
    return (*layout[:-1], layout[-1] + mtp) if mtp else tuple(layout)


@dataclass(frozen=True, slots=True)
class _TensorParallel:
    """One layer's tensor-parallel collectives, priced: the forward's, and the backward's as each
    column-parallel product's pair, in the order the layer runs them (the gather of its input again for its
    weight gradient, 0 without sequence parallelism; the reduction of its input gradient), and the rest,
    beside no product (the row-parallel products' output-gradient gathers, latent attention's rotary-key
    reduce-scatter)."""

    forward: Fraction
    column: tuple[tuple[Fraction, Fraction], ...]
    rest: Fraction


def _tp_comm(c: StepConfig, act: Fraction, *, link: Any, tp_link: Any, notes: list[str]
             ) -> tuple[Fraction, Fraction, _TensorParallel | None]:
    """:func:`_priced_tp_comm`, remembered by the links (:func:`_held`) with its notes: the configurations a
    plan prices share their tensor-parallel collectives."""
    if c.tp == 1 or not act:
        return Fraction(0), Fraction(0), None
    key = (c.shape, c.tp, c.sequence_parallel, c.algorithm, act)  # the link used is the anchor
    found, said = _held(_TP_COMMS, tp_link if tp_link is not None else link, key,
                        lambda: _priced_tp_comm(c, act, link=link, tp_link=tp_link), size=1024)
    notes.extend(x for x in said if x not in notes)
    return found


_TP_COMMS: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _priced_tp_comm(c: StepConfig, act: Fraction, *, link: Any, tp_link: Any
                    ) -> tuple[tuple[Fraction, Fraction, _TensorParallel | None], tuple[str, ...]]:
    """:func:`_layer_tp_comm` and the notes it makes."""
    notes: list[str] = []
    found = _layer_tp_comm(c, act, link=link, tp_link=tp_link, notes=notes)
    return found, tuple(notes)


def _layer_tp_comm(c: StepConfig, act: Fraction, *, link: Any, tp_link: Any, notes: list[str]
                   ) -> tuple[Fraction, Fraction, _TensorParallel | None]:
    """One layer's forward tensor-parallel communication, one all-reduce (or reduce-scatter and all-gather)
    of the h-wide activation tensor *act* alone, and the layer's collectives (:class:`_TensorParallel`;
    ``None`` without any).

    A standard layer runs two h-wide collectives forward, the attention's and the FFN's: all-reduces, or
    with sequence parallelism an all-gather before each column-parallel product and a reduce-scatter after
    each row-parallel one.  A layer of multi-head latent attention, as Megatron-Core's ``MLASelfAttention``
    runs it (``get_query_key_value_tensors``), computes its down-projections on every rank's own input,
    whole (``TELinear``, ``parallel_mode="duplicated"``): without sequence parallelism that input is the
    whole sequence and the attention's forward is the output projection's all-reduce alone; with it the
    rank's s/t tokens, and the up-projections (``TELayerNormColumnParallelLinear``) gather their latents,
    d_c' (the queries' input, h without a query latent) and d_c wide, and
    ``gather_from_sequence_parallel_region`` the rotary key, d_r wide, in place of the h-wide gather."""
    shape = c.shape
    if c.tp == 1 or not act:
        return Fraction(0), Fraction(0), None
    source = _link(tp_link, link, "tp_link", "the tensor-parallel collectives")
    seen: dict[tuple[str, Fraction], Fraction] = {}

    def price(collective: str, width: int | None = None) -> Fraction:
        n = act if width is None else act * Fraction(width, shape.hidden)
        if (collective, n) not in seen:
            priced = cost(collective, c.algorithm if collective == "allreduce" else "ring", p=c.tp, n=n,
                          link=_for(source, collective), chunk_note=False)
            said = (f"tp {collective} {x}" if x.startswith(f"{priced.algorithm}:") else x
                    for x in priced.notes)
            if width is None:  # the latents' collectives are summed up in one note of their own
                notes.extend(x for x in said if x not in notes)
            seen[collective, n] = priced.time_s
        return seen[collective, n]

    sp = c.sequence_parallel
    if sp:
        scatter, gather = price("reduce-scatter"), price("allgather")
        one = scatter + gather
        ffn = (gather, scatter)
    else:
        scatter = gather = Fraction(0)
        one = price("allreduce")
        ffn = (Fraction(0), one)
    if shape is None or not shape.latent:
        return 2 * one, one, _TensorParallel(forward=2 * one, column=(ffn, ffn), rest=2 * gather)
    queries = "query latent" if shape.q_rank is not None else "hidden state for the queries"
    widths = (shape.hidden if shape.q_rank is None else shape.q_rank, shape.kv_rank)
    sizes = [f"the {queries} ({format_size(act * Fraction(widths[0], shape.hidden))})",
             f"the key-value latent ({format_size(act * Fraction(widths[1], shape.hidden))})"]
    if not sp:
        column = tuple((Fraction(0), price("allreduce", w)) for w in widths)
        notes.append("latent attention without sequence parallelism: every rank runs the down-projections "
                     "on the whole sequence, so the attention's forward all-reduces only the output "
                     f"projection's output, and its backward the up-projections' input gradients, "
                     f"{' and '.join(sizes)}, "
                     f"where QKV's would be the hidden state's ({format_size(act)}) (Megatron-Core's "
                     "MLASelfAttention)")
        return 2 * one, one, _TensorParallel(forward=2 * one, column=(*column, ffn), rest=Fraction(0))
    column = tuple((price("allgather", w), price("reduce-scatter", w)) for w in widths)
    dr = shape.rope_width
    rope = (price("allgather", dr), price("reduce-scatter", dr)) if dr else (Fraction(0), Fraction(0))
    if dr:
        sizes.append(f"the rotary key ({format_size(act * Fraction(dr, shape.hidden))})")
    notes.append("latent attention with sequence parallelism: the attention gathers over the tp ranks "
                 f"{', '.join(sizes[:-1])} and {sizes[-1]}, where a standard layer gathers the hidden state "
                 f"({format_size(act)}), and reduce-scatters their gradients in the backward; its output "
                 "projection reduce-scatters as a standard layer's (Megatron-Core's MLASelfAttention)")
    forward = sum((g for g, _ in column), Fraction(0)) + rope[0] + scatter + one
    return forward, one, _TensorParallel(forward=forward, column=(*column, ffn), rest=2 * gather + rope[1])


def _tp_backward(plan: _TensorParallel | None, overlap: str,
                 slow: Fraction = Fraction(0)) -> Callable[[Work], Fraction]:
    """A layer's tensor-parallel communication in its backward, as exposed (:class:`_TensorParallel`).
    Each column-parallel product (QKV, or latent attention's up-projections, and the FFN's first) sums its
    input gradient over the ranks: an all-reduce, or with sequence parallelism a reduce-scatter, which needs
    the product's input gathered again for its weight gradient; each row-parallel product's backward with
    sequence parallelism gathers its output gradient, and latent attention's rotary key, gathered forward,
    is reduce-scattered.  With *overlap* ``backward`` the all-reduce (or reduce-scatter) runs beside the
    weight gradient and the gather beside the input gradient
    (:func:`~costmodel.step.frameworks.tp_overlap`), the product slowed by *slow* while the collective
    runs (NCCL's channels take their SMs): a collective of C beside a product of G adds
    max(C·slow, C − G) to it (the product's end moves by C·slow while the collective ends first, else the
    collective ends last).  A product not priced per operation (an MoE layer's FFN) has its collectives
    whole."""
    def beside(collective: Fraction, product: Fraction) -> Fraction:
        return max(collective * slow, collective - product)

    if plan is None:
        return lambda work: Fraction(0)
    whole = [gather + reduce for gather, reduce in plan.column]
    if overlap == "none":
        return lambda work: plan.rest + sum(whole, Fraction(0))

    def exposed(work: Work) -> Fraction:
        pairs = zip(plan.column, work.column, strict=False)  # in the layer's order; the unpriced ones last
        return (plan.rest + sum((beside(gather, d) + beside(reduce, w) for (gather, reduce), (d, w) in pairs),
                                Fraction(0))
                + sum(whole[len(work.column):], Fraction(0)))
    return exposed


def _tp_gather(c: StepConfig, act: Fraction, *, tp_link: Any) -> Fraction:
    """The all-gather of a received activation tensor over the tensor-parallel ranks (scatter-gather
    pipeline sends)."""
    source = _link(tp_link, c.link, "tp_link", "the tensor-parallel collectives")
    return cost("allgather", "ring", p=c.tp, n=act, link=_for(source, "allgather"), chunk_note=False).time_s


def _exchanges(stage_units: list[list[Unit]], *, send: Fraction, gather: Fraction) -> None:
    """Blocking pipeline exchanges, appended to each virtual stage as a unit of their own: a forward
    receives (and gathers) its input unless it is the first virtual stage and sends its output unless it is
    the last; a backward the other way round."""
    last = len(stage_units) - 1
    made: dict[tuple[bool, bool], Unit] = {}  # the inner stages' exchanges alike: one unit
    for vs, units in enumerate(stage_units):
        ends = (vs < last, vs > 0)
        if ends not in made:
            forward = (send if vs < last else 0) + (gather if vs > 0 else 0)
            backward = (send if vs > 0 else 0) + (gather if vs < last else 0)
            made[ends] = Unit(forward=Fraction(forward), backward=Fraction(backward), weight=Fraction(0),
                              gradient_bytes=Fraction(0), pp=Fraction(forward + backward))
        units.append(made[ends])


def _plus(*terms: Fraction | int) -> Fraction:
    """The sum of *terms* as a Fraction, its zeros (most of a step's parts, in most steps) left out."""
    nonzero = [x for x in terms if x]
    if len(nonzero) == 1 and isinstance(nonzero[0], Fraction):
        return nonzero[0]
    if len(nonzero) == 2:  # one addition is quicker than the common denominator
        total = nonzero[0] + nonzero[1]
        return total if isinstance(total, Fraction) else Fraction(total)
    return exact_sum(nonzero)


def _units(model: _Model, layout: Sequence[int], *, tp_layer: Fraction, tp_one: Fraction, redo: bool,
           split: bool, cp: tuple[Fraction, Fraction] = (Fraction(0), Fraction(0)),
           alltoall: Fraction = Fraction(0),
           tp_backward: Callable[[Work], Fraction] | None = None) -> list[list[Unit]]:
    """Each virtual stage's units: its layers with their tensor-parallel communication, exposed
    context-parallel communication (*cp*: forward, backward) and an MoE layer's all-to-alls (dispatch and
    combine forward, their gradients backward, again with full recomputation), the embedding's work on
    the first, the output layer on the last.  A first stage of no layers runs the embedding alone (as
    DeepSpeed's partition by type:transformer|embedding can place it)."""
    units: list[Unit] = []
    alone = model.embedding is not None and layout[0] == 0  # the embedding is stage 0's only work
    extra = tp_one if model.extra_tp else Fraction(0)  # the embedding's and the output layer's collective
    cp_f, cp_b = cp
    cp_b = _plus(cp_b, cp_f if redo else 0)
    cp_both = _plus(cp_f, cp_b)
    again = tp_layer if redo else 0  # the forward's collectives again with full recomputation
    routed = model.routed or (False,) * len(model.layers)
    first_mtp = len(model.layers) - model.mtp  # the modules' logits run the output layer's collective too
    made: dict[tuple[int, int, bool], Unit] = {}  # layers of the same work and gradient (most) share a unit
    for i, (w, g, moe) in enumerate(zip(model.layers, model.gradients, routed, strict=True)):
        alike = (id(w), id(g), moe)
        if i and alike in made:
            units.append(made[alike])
            continue
        back = tp_layer if tp_backward is None else tp_backward(w)  # the backward's, as exposed
        a2a = 2 * alltoall if moe else Fraction(0)
        a2a_again = a2a if redo else 0
        embedding = model.embedding if i == 0 and not alone else None  # layer 0's unit holds it too
        forward = _plus(w.forward, tp_layer, cp_f, a2a,
                        *((embedding.forward, extra) if embedding is not None else ()))
        head = extra if i >= first_mtp else 0
        backward = _plus(w.backward, back, again, cp_b, a2a, a2a_again, head,
                         embedding.backward if embedding is not None else 0)
        tp = _plus(tp_layer, back, again, head, extra if embedding is not None else 0)
        own = g - model.embedding_gradient if i == 0 and alone else g  # the embedding's on its own unit
        units.append(Unit(forward=forward, backward=backward, weight=w.weight if split else Fraction(0),
                          gradient_bytes=own, tp=tp, recompute=_plus(w.recompute, again, a2a_again,
                                                                     cp_f if redo else 0),
                          cp=cp_both, ep=_plus(2 * a2a, a2a_again)))
        if i:  # layer 0's unit holds the embedding too
            made[alike] = units[-1]
    out: list[list[Unit]] = []
    start = 0
    for count in layout:
        out.append(units[start:start + count])
        start += count
    if alone:
        assert model.embedding is not None  # for mypy: alone holds only with an embedding
        out[0].append(Unit(forward=model.embedding.forward + extra, backward=model.embedding.backward,
                           weight=Fraction(0), gradient_bytes=model.embedding_gradient, tp=extra))
    if model.logits is not None:
        lg = model.logits
        out[-1].append(Unit(forward=lg.forward, backward=lg.backward + extra,
                            weight=lg.weight if split else Fraction(0), gradient_bytes=model.logits_gradient,
                            tp=extra))
    if empty := [s for s, stage in enumerate(out) if not stage]:
        raise InputError(f"stage_layers={','.join(map(str, layout))} leaves stage {empty[0]} with nothing to "
                         "run; give it a layer")
    return out


# -- data parallelism -----------------------------------------------------------------------------


def _matrices(shape: Any, tp: int = 1) -> tuple[Fraction, ...]:
    """A layer's matrices as shares of its parameters on one of *tp* ranks (QKV, or latent attention's down-
    and up-projections, projection, FFN in, FFN out): the pieces DeepSpeed's ZeRO 3 fetches one collective
    each, one piece ahead.  Latent attention's down-projections are whole on every rank, the others 1/tp."""
    if shape is None:
        return (Fraction(1),)
    h, f = shape.hidden, shape.ffn_hidden
    # QKV, h·(h + 2h·g/a) when d = h/a, and the output projection (latent attention: each of its matrices);
    # tp times a rank's share of each
    attention = (x * (tp if whole else 1)
                 for x, whole in zip(shape.attention_matrices, shape.duplicated_matrices, strict=True))
    sizes = (*attention, (2 if shape.gated else 1) * f * h, f * h)
    return tuple(Fraction(x, sum(sizes)) for x in sizes)


def _by_matrix(units: list[Unit], shares: tuple[Fraction, ...]) -> list[Unit]:
    """Each unit as the pieces DeepSpeed's ZeRO 3 fetches one at a time (its matrices), its work and
    parameters shared among them as their parameters are."""
    return [Unit(forward=u.forward * w, backward=u.backward * w, weight=u.weight * w,
                 gradient_bytes=u.gradient_bytes * w, tp=u.tp * w, recompute=u.recompute * w, cp=u.cp * w,
                 ep=u.ep * w)
            for u in units for w in shares]


def _framework(c: StepConfig) -> DataParallel:
    return _data_parallel_of(framework=c.framework, zero=c.zero, buckets=c.buckets,
                             bucket_bytes=c.bucket_bytes, overlap_grad_reduce=c.overlap_grad_reduce,
                             param_gather=c.param_gather, align_param_gather=c.align_param_gather,
                             prefetch=c.prefetch, dtype=c.dtype, pp=c.pp)


_data_parallel_of = lru_cache(maxsize=256)(data_parallel)
"""The framework's schedule, remembered (pure, and asked for by every configuration of a plan)."""


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
             element: Fraction, scale: int | None = None) -> list[Device]:
    def plan(sizes: list[Fraction]) -> BucketPlan:
        return _buckets(mode.rule, sizes, dp=dp, bucket_bytes=mode.bucket_bytes, bytes_per_element=element)

    return [Device([stage_units[c * pp + s] for c in range(v)],
                   order=order(name, s, stages=pp, microbatches=m, chunks=v), microbatches=m,
                   split=name in SPLIT, zero=mode.zero, prefetch=mode.prefetch, dp=dp, price=price, plan=plan,
                   slowdown=slowdown, overlap_param_gather=mode.param_gather == "overlap",
                   overlap_grad_reduce=mode.overlap, align_param_gather=mode.align, regather=mode.regather,
                   gathers=mode.gathers, param_ratio=mode.param_ratio, scale=scale)
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
    return _held(_TOPOLOGIES, gpu, (ranks,), lambda: _gpu_topology(gpu, ranks))


_TOPOLOGIES: dict[tuple[Any, ...], tuple[Any, Any]] = {}
"""The machines of the GPUs last priced, by GPU (:func:`_held`) and GPUs."""


def _gpu_topology(gpu: Any, ranks: int) -> Topology:
    per_node = gpu.gpus_per_node
    if ranks > MAX_RANKS:  # said as the step's GPUs, not as levels the user did not give
        raise InputError(f"dp × tp × pp × cp = {ranks} GPUs, more than the 2^40 costmodel models; give "
                         "smaller parallel sizes")
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


def _placed(c: StepConfig, *, notes: list[str]) -> dict[str, Any]:
    """The tp, pp, dp and cp links (and ep's and the expert-data-parallel group's, edp): those given, else
    their levels' on the topology (noted); with neither a link nor a topology, the machine of the GPU
    preset (:func:`gpu_topology`); and under ``placed`` whether the ranks were placed on a topology (then
    the dp = 1 step is placed anew).  The dp link is the gradient reduction's, over dp × cp ranks.  Without
    a topology the expert groups, carved out of the dp × cp ranks, use the dp link."""
    topology: Topology | None = c.topology
    from_gpu = False
    if topology is None and c.link is None and c.gpu is not None:
        wanted = {"tp": c.tp_link, "pp": c.pp_link, "dp": c.dp_link, "cp": c.cp_link, "ep": c.dp_link}
        if any(getattr(c, kind) > 1 and link is None for kind, link in wanted.items()) or (
                c.cp > 1 and c.dp_link is None):
            topology = gpu_topology(c.gpu, c.dp * c.tp * c.pp * c.cp)
            from_gpu = True
    if topology is None:
        if canonical_order(c.order) != canonical_order(MEGATRON_ORDER):
            raise InputError(f"order={c.order!r} places the ranks on a topology; pass topology= too")
        return {"tp": c.tp_link, "pp": c.pp_link, "dp": c.dp_link, "cp": c.cp_link, "ep": c.dp_link,
                "edp": c.dp_link, "placed": False}
    if c.link is not None:
        raise InputError("link= and topology= were both given; pass the machine's levels or one link")
    placed = _place(topology, order=c.order, tp=c.tp, dp=c.dp, pp=c.pp, cp=c.cp, ep=c.ep)
    if described := placed.describe(topology):
        notes.append("placement: " + described)
    if from_gpu and c.dp_link is None and placed.levels.get("dp") == 1 and placed.together.get("dp", 1) > 1:
        k = placed.together["dp"]
        notes.append(_held(_NODE_NOTES, c.gpu, (k,), lambda: _shared_nodes_note(c.gpu, k)))
    given = {"tp": c.tp_link, "pp": c.pp_link, "dp": c.dp_link, "cp": c.cp_link, "ep": None, "edp": c.dp_link}
    group = {kind: kind if kind in placed.levels else "dp" for kind in given}  # whose level a kind takes
    out: dict[str, Any] = {kind: placed.links.get(group[kind]) if link is None else link
                           for kind, link in given.items()}
    if from_gpu and c.gpu.intra_node_profile is not None:
        inside = [kind for kind, link in given.items()
                  if link is None and placed.levels.get(group[kind]) == 0]
        if inside:
            from costmodel.profiles import load_profile

            profile = load_profile(c.gpu.intra_node_profile)
            out.update(dict.fromkeys(inside, profile))
            shown = [kind for kind in placed.order if kind in inside]
            if shown:
                notes.append(f"{', '.join(shown)} inside a node: each collective priced message by message "
                             f"on profile {profile.name} ({profile.title})")
    return {**out, "placed": True}


_NODE_NOTES: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _shared_nodes_note(gpu: Any, k: int) -> str:
    """What pricing a data-parallel group with *k* ranks in each node at one GPU's network rate assumes,
    and the link that prices it at the k ranks' NICs together."""
    from costmodel.units import format_byte_rate, format_time

    rate = min(k * gpu.network_busbw_bytes_per_s, gpu.intra_node_busbw_bytes_per_s)
    link = format_time(gpu.network_latency_s).replace(" ", "") + ":" + format_byte_rate(rate).replace(" ", "")
    one = format_byte_rate(gpu.network_busbw_bytes_per_s)
    return (f"dp: {k} ranks of each group share a node, and its network steps are priced at one GPU's "
            f"rate, {one} (the rate the 2021 ZeRO-3 runs that costmodel validate reproduces reached); "
            f"NCCL can run a ring over those {k} GPUs' NICs at once: to price that, pass dp_link={link}")


def _slowdown(c: StepConfig, model: _Model, group: str = "dp") -> Fraction:
    """The compute lost while a collective of *group* (``dp``: the data-parallel one; ``tp``) runs: for dp as
    given, else with a GPU priced per operation the share of its SMs that NCCL's channels take (one thread
    block each: ``network_channels`` when the group crosses nodes, ``intra_node_channels`` inside one),
    else 0."""
    if group == "dp" and c.slowdown is not None:
        return c.slowdown
    size = c.dp * c.cp if group == "dp" else c.tp
    if c.gpu is None or size == 1 or model.rates is None or model.rates.flat:
        return Fraction(0)
    gpu = c.gpu
    placed = _place(gpu_topology(gpu, c.dp * c.tp * c.pp * c.cp), order=c.order, tp=c.tp, dp=c.dp, pp=c.pp,
                    cp=c.cp, ep=c.ep)
    channels = gpu.network_channels if placed.levels[group] == 1 else gpu.intra_node_channels
    return Fraction(0) if channels is None else Fraction(channels, gpu.sms)


def _busiest(stage_units: list[list[Unit]], *, pp: int, v: int,
             m: int) -> tuple[Fraction, Fraction, Fraction, Fraction, Fraction]:
    """The busiest device's compute time over the step, and its tensor-parallel, exposed context-parallel,
    expert-parallel and blocking pipeline-exchange parts."""
    def device(s: int) -> list[Unit]:
        return [x for c in range(v) for x in stage_units[c * pp + s]]

    def busy(s: int) -> Fraction:
        return sum((x.forward + x.backward - x.pp for x in device(s)), Fraction(0))

    busiest = device(max(range(pp), key=busy))
    return (m * sum((x.forward + x.backward for x in busiest), Fraction(0)),
            m * sum((x.tp for x in busiest), Fraction(0)), m * sum((x.cp for x in busiest), Fraction(0)),
            m * sum((x.ep for x in busiest), Fraction(0)), m * sum((x.pp for x in busiest), Fraction(0)))


def _optimizer(c: StepConfig, model: _Model, layout: Sequence[int], *, v: int, dp: int,
               zero: int) -> Fraction:
    """The optimizer step: given, else, on the device that takes longest, an Adam step over its parameters
    (after ZeRO) and the zeroing of its gradients (all of them below ZeRO 2, its shard from ZeRO 2) on the
    GPU's memory, else 0."""
    if c.optimizer_s is not None:
        return c.optimizer_s
    rates = model.rates
    if rates is None or c.shape is None:
        return Fraction(0)
    weights = _device_weights(c, layout, v=v)
    alike = {w: s for s, w in enumerate(weights)}  # devices of the same weights (most are) counted once

    def device(s: int) -> Fraction:
        shard = _device_parameters(c, layout, s, v=v, dp=dp, zero=zero)
        zeroed = shard if zero >= 2 else _device_parameters(c, layout, s, v=v, dp=dp, zero=0)
        return optimizer_time(shard, rates, zeroed)

    return max(device(s) for s in alike.values())


def _device_layers(c: StepConfig, layout: Sequence[int], s: int, *, v: int) -> list[int]:
    """The layers (indices) of pipeline device *s*: its chunks' layers."""
    starts = [sum(layout[:k]) for k in range(len(layout))]
    return [i for ch in range(v) for k in (ch * c.pp + s,) for i in range(starts[k], starts[k] + layout[k])]


def _device_weights(c: StepConfig, layout: Sequence[int], *, v: int) -> tuple[tuple[int, int], ...]:
    """Each pipeline device's (replicated, routed-expert) parameters before tensor and expert parallelism:
    its layers', and the embedding (and the output layer's matrix) on the first (last) stage."""
    return _stage_weights(c.shape, tuple(layout), c.pp, v)


@lru_cache(maxsize=64)
def _layer_kinds(shape: Any) -> tuple[tuple[bool, bool], tuple[tuple[bool, bool], ...], tuple[bool, ...],
                                      tuple[bool, ...]]:
    """The kind (MoE, windowed) of the layers whose operations a step shows (the first of the model's kind:
    its first MoE layer), the kinds of the layers in the order they appear, and whether each layer has a
    mixture of experts and whether each has the sliding window, remembered per shape."""
    first = shape.first_moe_layer
    return ((shape.is_moe_layer(first), shape.is_windowed_layer(first)),
            tuple((moe, windowed) for moe, windowed, _ in shape.layer_groups()),
            tuple(shape.is_moe_layer(i) for i in range(shape.layers)),
            tuple(shape.is_windowed_layer(i) for i in range(shape.layers)))


@lru_cache(maxsize=64)
def _layer_weights(shape: Any) -> tuple[tuple[int, int], ...]:
    """Each layer's (replicated, routed-expert) parameters (:meth:`TransformerShape.layer_weights`), then
    each multi-token prediction module's (:attr:`TransformerShape.mtp_weights`), remembered per shape."""
    layers = tuple(shape.layer_weights(i) for i in range(shape.layers))
    return layers + (shape.mtp_weights,) * shape.mtp_layers


@lru_cache(maxsize=1024)
def _stage_weights(shape: Any, layout: tuple[int, ...], pp: int, v: int) -> tuple[tuple[int, int], ...]:
    """:func:`_device_weights` of *shape* cut into *layout*'s virtual stages on *pp* devices, remembered:
    the configurations a plan prices share their shape and their cuts."""
    weights = _layer_weights(shape)
    starts = [sum(layout[:k]) for k in range(len(layout))]
    out = []
    for s in range(pp):
        replicated = routed = 0
        for k in range(s, pp * v, pp):
            for a, b in weights[starts[k]:starts[k] + layout[k]]:
                replicated, routed = replicated + a, routed + b
        heads = (s == 0) + (s == pp - 1 and (pp > 1 or not shape.tied_embeddings))
        heads += s == pp - 1 and pp > 1 and shape.mtp_layers > 0  # the modules' copy of the embedding
        out.append((replicated + shape.vocabulary * shape.hidden * heads, routed))
    return tuple(out)


def _device_parameters(c: StepConfig, layout: Sequence[int], s: int, *, v: int, dp: int,
                       zero: int) -> Fraction:
    """The parameters device *s* updates on one rank: its layers' replicated weights and its E/ep experts
    over tp (latent attention's down-projections whole on every tp rank), and the embedding (and the output
    layer's matrix) on the first (last) stage; ZeRO shards the
    replicated ones over the *dp* ranks holding them (dp × cp) and the experts over the *dp*/ep holding
    the same experts."""
    replicated, routed = _device_weights(c, layout, v=v)[s]
    ep = c.ep if dp > 1 else 1
    whole = len(_device_layers(c, layout, s, v=v)) * c.shape.duplicated_parameters
    own = tp_share(replicated, tp=c.tp, duplicated=whole) / (dp if zero >= 1 else 1)
    return own + Fraction(routed, c.tp * ep) / (dp // ep if zero >= 1 else 1)


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
        :class:`costmodel.gpus.GPU`) whose achieved rates price each operation, and the dtype.  *shape* may
        be a model's description (:func:`costmodel.describe.model_preset`, ``load_model``,
        ``read_hf_config``): its transformer, and its settings (``causal``, ``dropout``) unless given.
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
    described: Any = settings.get("shape")
    if hasattr(described, "transformer") and hasattr(described, "settings"):  # a model's description
        settings = {**described.settings, **settings, "shape": described.transformer()}
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
    gather: Fraction
    blocking: bool
    sends: str
    tp_overlap: str
    tp_hidden: Fraction  # what the backward's overlap hides of one layer's tensor-parallel collectives
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
    tp_one: Fraction = Fraction(0)  # one h-wide all-reduce (or reduce-scatter and all-gather) of a layer
    duplicated: Fraction = Fraction(0)  # the whole weights' gradients all-reduced over tp after the backward
    kv_send: Fraction = Fraction(0)
    ep_link: Any = None
    edp_link: Any = None
    alltoall: Fraction = Fraction(0)

    @property
    def edge(self) -> Fraction:
        """The time between a stage's end and the next stage's start: a send beside the compute (a blocking
        exchange is inside the operations, :func:`_exchanges`)."""
        return Fraction(0) if self.blocking else self.send

    def spans(self, *, send: bool = True) -> dict[str, Any]:
        units = self.stage_units if send or not self.blocking else \
            [[u for u in us if not u.pp] for us in self.stage_units]
        # stages of the same units (most are: a unit is shared by the layers alike) summed once
        seen: dict[tuple[int, ...], tuple[Fraction, Fraction, Fraction]] = {}
        stages = []
        for us in units:
            key = tuple(map(id, us))
            if key not in seen:
                seen[key] = totals(us)
            stages.append(seen[key])
        forward, backward, weight = (list(x) for x in zip(*stages, strict=True))
        return {"microbatches": self.m, "chunks": self.v, "forward": forward, "backward": backward,
                "weight": weight}

    def simulated(self, *, send: bool = True) -> SimulatedPipeline:
        """The pipeline without data-parallel traffic, with or without the sends between stages, simulated
        (:func:`~costmodel.pipeline.simulate.simulate_pipeline`)."""
        return simulate_pipeline(self.name, self.pp, comm=self.edge if send else Fraction(0),
                                 **self.spans(send=send))

    def makespan(self, *, send: bool = True) -> Fraction:
        """The pipeline's end without data-parallel traffic, with or without the sends between stages."""
        return self.simulated(send=send).makespan()

    def timeline(self, keep: Sequence[Collection[tuple[str, int]]] | None = None) -> Timeline:
        """The pipeline's operations without data-parallel traffic (*keep*: only those it accepts and each
        device's last, :meth:`~costmodel.pipeline.simulate.SimulatedPipeline.operations`)."""
        return self.simulated().operations(keep)


def layer_operations(c: StepConfig) -> int:
    """The layer operations one replica's step simulates: F, B and W of each micro-batch on each layer (and
    each multi-token prediction module)."""
    layers = c.shape.layers + c.shape.mtp_layers if c.shape is not None else len(c.forward_s or ())
    return c.microbatches * layers * 3


def _prepare(c: StepConfig, *, notes: list[str], operations: bool = True) -> _Prepared:
    """Everything before the simulation: the schedule, the framework, the model priced per layer, the
    stages, the links, the tensor-parallel and pipeline communication; without *operations*, without the
    priced operations of a layer (``model.ops``), which only a step's result shows."""
    name, v = _parallelism(c)
    mode = _framework(c)
    layers = c.shape.layers if c.shape is not None else len(c.forward_s or ())
    check_layers(layers)
    mtp = c.shape.mtp_layers if c.shape is not None else 0
    events = layer_operations(c)
    if events > MAX_LAYER_OPERATIONS:  # before anything is priced per layer
        units = f"{layers + mtp} layers and prediction modules" if mtp else f"{layers} layers"
        raise InputError(f"{c.microbatches} micro-batches × {units} give {events} layer operations "
                         f"(F, B, W) per replica, more than {MAX_LAYER_OPERATIONS} to simulate; use fewer "
                         "micro-batches")
    model = _model(c, mode, notes=notes, operations=operations)
    main = _layout(c, len(model.layers) - mtp, v)
    notes.extend(_window_notes(c, main, v))
    notes.extend(_expert_notes(c, main, v))
    notes.extend(_mtp_notes(c))
    layout = with_mtp(main, mtp)  # the modules run on the last stage, after its layers
    links = _placed(c, notes=notes)
    tp_link, pp_link, dp_link, placed = links["tp"], links["pp"], links["dp"], links["placed"]
    act = model.activation_bytes
    tp_layer, tp_one, plan = _tp_comm(c, act, link=c.link, tp_link=tp_link, notes=notes)
    overlap = tp_overlap(mode.framework, given=c.tp_overlap)
    tp_slow = _slowdown(c, model, "tp") if overlap != "none" and plan is not None else Fraction(0)
    sends = pipeline_sends(mode.framework, schedule=name, given=c.pipeline_sends)
    send = gather = Fraction(0)
    if c.pp > 1 and act > 0:
        split = c.tp > 1 and (c.sequence_parallel or sends == "scatter-gather")
        sent = act / c.tp if split else act
        send = _send(_for(_link(pp_link, c.link, "pp_link", "the pipeline sends"), "allreduce"), sent)
        if sends == "scatter-gather" and c.tp > 1 and not c.sequence_parallel:
            gather = _tp_gather(c, act, tp_link=tp_link)
    kv_send, cp_exposed = _cp_comm(c, model, links["cp"])
    alltoall = _alltoall(c, model, link=links["ep"], notes=notes)
    tp_backward = _tp_backward(plan, overlap, tp_slow)
    stage_units = _units(model, layout, tp_layer=tp_layer, tp_one=tp_one, redo=c.recompute == "full",
                         split=name in SPLIT, cp=cp_exposed, alltoall=alltoall, tp_backward=tp_backward)
    blocking = sends != "overlap" and bool(send)
    if blocking:
        _exchanges(stage_units, send=send, gather=gather)
    hidden = Fraction(0)  # what the overlap hides of the first layer's backward collectives, for the note
    if plan is not None and model.layers:
        first = model.layers[0]
        hidden = _tp_backward(plan, "none")(first) - tp_backward(first)
    return _Prepared(name=name, pp=c.pp, v=v, m=c.microbatches, send=send, gather=gather, blocking=blocking,
                     sends=sends, tp_overlap=overlap, tp_hidden=hidden, mode=mode, model=model,
                     layout=layout, stage_units=stage_units, tp_link=tp_link, pp_link=pp_link,
                     dp_link=dp_link, placed=placed,
                     slowdown=_slowdown(c, model), tp_layer=tp_layer, tp_one=tp_one, kv_send=kv_send,
                     ep_link=links["ep"], edp_link=links["edp"], alltoall=alltoall,
                     duplicated=_duplicated_reduction(c, layout, v=v, tp_link=tp_link,
                                                      grad_element=model.grad_element, notes=notes))


def _window_notes(c: StepConfig, layout: Sequence[int], v: int) -> list[str]:
    """How a sliding window was priced: on which layers, and how many each pipeline device holds."""
    shape = c.shape
    if shape is None or shape.window is None:
        return []
    if shape.window >= shape.sequence:
        return list(window_notes(shape))
    local = shape.windowed_layers
    how = ("the band of the causal mask, s·w − w²/2 query-key pairs for s²/2" if c.attention == "flash" else
           "the whole s × s matrix all the same: unfused attention computes and stores it whatever the mask")
    note = (f"sliding window: {shape.window} tokens on {local} of the {shape.layers} layers (pattern "
            f"{shape.window_layers}); their attention is priced on {how}")
    if c.pp > 1 and local < shape.layers:
        held = [sum(shape.is_windowed_layer(i) for i in _device_layers(c, layout, s, v=v))
                for s in range(c.pp)]
        note += (f"; each stage prices its own layers, windowed ones by stage: "
                 f"{', '.join(f'{k} on stage {i}' for i, k in enumerate(held))}")
    return [note]


def _expert_notes(c: StepConfig, layout: Sequence[int], v: int) -> list[str]:
    """Which layers have the experts when a pattern leaves some dense, and how many each pipeline device
    holds (its weights, all-to-alls and expert gradients are its own layers')."""
    shape = c.shape
    if shape is None or shape.expert_layers is None:
        return []
    dense = f", after the first {shape.dense_layers}" if shape.dense_layers else ""
    note = (f"experts: on {shape.moe_layers} of the {shape.layers} layers (pattern {shape.expert_layers}"
            f"{dense}); the others run a dense FFN of {shape.ffn_hidden}")
    if c.pp > 1:
        held = [sum(shape.is_moe_layer(i) for i in _device_layers(c, layout, s, v=v)) for s in range(c.pp)]
        note += (f"; each stage prices its own layers, those with experts by stage: "
                 f"{', '.join(f'{k} on stage {i}' for i, k in enumerate(held))}")
    return [note]


def _mtp_notes(c: StepConfig) -> list[str]:
    """Where the multi-token prediction modules run and how they are priced."""
    shape = c.shape
    if shape is None or not shape.mtp_layers:
        return []
    d = shape.mtp_layers
    kind = "an MoE layer" if shape.mtp_moe else "a dense layer" if shape.moe else "a layer"
    where = ("on the last pipeline stage, after the last of the main layers" if c.pp > 1 else
             "after the last main layer")
    copy = (", and the stage holds a copy of the embedding they look up, whose gradient it reduces"
            if c.pp > 1 else "")
    return [f"multi-token prediction: {d} module{'s' if d > 1 else ''} {where}, each {kind} (the last "
            "layer's kind), its two norms and 2h → h projection (column-parallel over the tp ranks), and "
            f"logits of its own through the shared output layer (Megatron-Core's default placement){copy}"]


def _main_layers(c: StepConfig, layout: Sequence[int]) -> tuple[int, ...]:
    """The main layers of each virtual stage: *layout* without the multi-token prediction modules on the
    last (:func:`with_mtp`)."""
    mtp = c.shape.mtp_layers if c.shape is not None else 0
    return (*layout[:-1], layout[-1] - mtp) if mtp else tuple(layout)


def _cp_comm(c: StepConfig, model: _Model, cp_link: Any) -> tuple[Fraction, tuple[Fraction, Fraction]]:
    """One ring-attention send of a K and V block, and one layer's exposed context-parallel time forward
    and backward: cp − 1 steps, each a send overlapped with one block of the attention compute (module
    notes)."""
    if c.cp == 1 or not model.kv_bytes:
        return Fraction(0), (Fraction(0), Fraction(0))
    link = _for(_link(cp_link, c.link, "cp_link", "the context-parallel sends"), "allreduce")
    one, two = _send(link, model.kv_bytes), _send(link, 2 * model.kv_bytes)
    steps = c.cp - 1
    forward = steps * max(Fraction(0), one - model.attention_forward / c.cp)
    backward = steps * max(Fraction(0), two - model.attention_backward / c.cp)
    return one, (forward, backward)



def _alltoall(c: StepConfig, model: _Model, *, link: Any, notes: list[str]) -> Fraction:
    """One dispatch (or combine) all-to-all of an MoE layer over the ep ranks: each rank's send buffer of
    n = c·k·T·h·e bytes (its tokens' k copies, to capacity; T its tokens, 1/tp of them with sequence
    parallelism), of which (ep − 1)/ep leaves it (Lepikhin et al. 2021, section 3.2; Megatron-Core's
    ``MoEAlltoAllTokenDispatcher``); 0 without expert parallelism."""
    if c.ep == 1 or not model.dispatch_bytes:
        return Fraction(0)
    source = _link(link, c.link, "dp_link", "the expert-parallel all-to-alls")
    priced = cost("alltoall", "pairwise", p=c.ep, n=model.dispatch_bytes, link=_for(source, "alltoall"),
                  chunk_note=False)
    notes.extend(x for x in priced.notes if x not in notes)
    return priced.time_s


def check_layers(layers: int) -> None:
    """Refuse more than :data:`MAX_LAYERS` layers, before anything is built per layer."""
    if layers > MAX_LAYERS:
        raise InputError(f"layers={layers} is more than the {MAX_LAYERS} layers a step prices one by one")


def _baseline(c: StepConfig, run: _Prepared, makespan: Fraction) -> Fraction:
    """The step with dp = 1 and the same links: the pipeline alone (*makespan*) and the optimizer over
    unsharded states; placed anew when the ranks sit on a machine's levels and the tensor- or
    pipeline-parallel links move."""
    alone = replace(c, dp=1, ep=1, allow_oom=True)
    if c.ep > 1:  # one replica holds every expert: no all-to-alls
        run = _prepare(alone, notes=[], operations=False)
        makespan = run.makespan()
    elif run.placed:
        links = _placed(alone, notes=[])
        if (links["tp"], links["pp"]) != (run.tp_link, run.pp_link):
            run = _prepare(alone, notes=[], operations=False)
            makespan = run.makespan()
    return (makespan + run.duplicated
            + _optimizer(alone, run.model, run.layout, v=run.v, dp=c.cp, zero=run.mode.sharding))


@fewer_collections()
def price_step(config: StepConfig, *, baseline_s: Fraction | None = None) -> StepResult:
    """The step of *config* (see :func:`step`); *baseline_s*, when known, is its dp = 1 step's time, which
    the scaling efficiency divides (a sweep over a knob the dp = 1 step does not depend on prices it once).
    Garbage is collected less often while it runs (:func:`costmodel._gc.fewer_collections`: its exact
    simulation allocates a number for every start and end, all kept to the end).
    """
    return _price(config, baseline_s=baseline_s)[0]


def step_time(config: StepConfig) -> tuple[Fraction, Callable[[], StepResult]]:
    """``price_step(config).step_s``, and a function that returns ``price_step(config)``: the timeline, which
    the step's time does not need, is made only when that is called (a plan prices many steps and shows
    few).  Raises where :func:`price_step` raises."""
    with fewer_collections():
        result, finish = _price(config, deferred=True)

    def priced() -> StepResult:
        with fewer_collections():
            return finish()

    return result.step_s, priced


def _price(config: StepConfig, *, baseline_s: Fraction | None = None, deferred: bool = False
           ) -> tuple[StepResult, Callable[[], StepResult]]:
    """:func:`price_step`'s result, and a function that returns it whole: with *deferred* the result holds
    no timeline, which the function makes."""
    c = config
    dp, tp, pp, cp, m = c.dp, c.tp, c.pp, c.cp, c.microbatches
    reducers = dp * cp  # the ranks that hold the same weights: the gradients are reduced over them
    notes: list[str] = []
    warnings: list[str] = []
    run = _prepare(c, notes=notes)
    mode, model, layout, v, u, send = run.mode, run.model, run.layout, run.v, run.slowdown, run.send
    zero = mode.zero
    devices, timeline, end, end_plain, makespan = _devices_run(c, run, notes=notes, deferred=deferred)
    quiet = _quiet(run, makespan)
    optimizer = _optimizer(c, model, layout, v=v, dp=reducers, zero=mode.sharding)
    experts = _expert_reduction(c, run, notes=notes)
    total = max([end + experts + run.duplicated + optimizer,
                 *(d.gather_parameters(d.end + experts + run.duplicated + optimizer) for d in devices)])
    if not total:
        raise InputError("the step takes 0 s: forward_s=0 and backward_s=0 with nothing to communicate or "
                         "update leave no time to divide its tokens or FLOPs by; give a forward or backward "
                         "time above 0")
    critical = max(range(len(devices)), key=lambda k: (devices[k].end, -k)) if devices else 0
    busy, tp_comm, cp_comm, ep_comm, pp_comm = _busiest(run.stage_units, pp=pp, v=v, m=m)
    busy -= pp_comm
    gpus = dp * tp * pp * cp
    scaling: Fraction = Fraction(1)
    if dp > 1:
        scaling = (_baseline(c, run, makespan) if baseline_s is None else baseline_s) / total
        if scaling > 1 and mode.sharding >= 1:
            notes.append(f"scaling efficiency above 100 %: ZeRO {mode.sharding} shares the optimizer's "
                         f"update over the {dp} replicas, which one replica alone (the dp = 1 step) runs "
                         "whole")
    notes.extend(_shape_notes(c, zero=zero, overlap=run.tp_overlap))
    notes.extend(_tp_notes(c, run))
    notes.extend(_send_notes(c, run))
    notes.extend(_pace_note(c, run))
    notes.extend(_bucket_note(c, model, zero=zero))
    if c.ep > 1 and dp > 1:
        notes.append("the scaling efficiency compares one replica holding every expert (ep=1): its experts' "
                     "optimizer step and smaller expert products can put it above 100%")
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
    moe = _EXPERT_SOURCES if c.shape is not None and c.shape.moe else ()
    latent = OP_LATENT_SOURCES if c.shape is not None and c.shape.latent else ()
    ring = (LIU_2023_RING.at("section 3: blockwise attention with K and V blocks passed round a ring of "
                             "hosts, each send overlapped with a block's compute"),
            MEGATRON_LM.at("docs/user-guide/features/context_parallel.md and "
                           "megatron/core/parallel_state.py: context parallelism, the dp × cp gradient "
                           "group")) if cp > 1 else ()
    sources = (_SOURCES + (ZERO_SOURCES.get(zero, ()) if reducers > 1 else ())
               + ((SLOWDOWN_SOURCE,) if u else ())
               + (mode.sources if reducers > 1 else ()) + (RATE_SOURCES + OP_SOURCES if per_op else ()) + sp
               + ring + moe + latent + (SENDS_SOURCES[run.sends] if send else ())
               + (TP_OVERLAP_SOURCES if tp > 1 and run.tp_overlap != "none" else ()))

    def utilization(flops: Fraction | int | None) -> Fraction | None:
        return None if flops is None or peak is None else flops / (total * gpus * peak)

    result = StepResult(
        dp=dp, tp=tp, pp=pp, cp=cp, gpus=gpus, ep=c.ep, microbatches=m, schedule=run.name, chunks=v,
        recompute=c.recompute,
        sequence_parallel=c.sequence_parallel, stage_layers=_main_layers(c, layout),
        framework=mode.framework,
        mode=mode.mode if reducers > 1 else "no data parallelism", gpu=None if c.gpu is None else c.gpu.name,
        dtype=c.dtype, compute_model=_compute_model(c, model),
        step_s=total, compute_s=busy - tp_comm - cp_comm - ep_comm,
        tp_comm_s=tp_comm + run.duplicated, cp_comm_s=cp_comm,
        ep_comm_s=ep_comm, bubble_s=quiet - busy, pp_exposed_s=makespan - quiet, dp_exposed_s=exposed,
        expert_dp_s=experts, optimizer_s=optimizer, pipeline_s=makespan, tp_allreduce_s=run.tp_one,
        ep_alltoall_s=run.alltoall, ep_alltoall_bytes=model.dispatch_bytes if c.ep > 1 else Fraction(0),
        pp_send_s=send, pp_gather_s=run.gather, pipeline_sends=run.sends if pp > 1 else "",
        tp_overlap=run.tp_overlap if tp > 1 else "",
        cp_send_s=run.kv_send, dp_comm_s=dp_comm,
        dp_hidden_s=max(Fraction(0), dp_comm - exposed), contention_s=end - end_plain,
        param_gather_s=total - end - experts - run.duplicated - optimizer, dp_stage=critical, zero=zero,
        prefetch=mode.prefetch,
        param_gather=mode.param_gather, slowdown=u, bucket_rule=mode.rule, tokens_per_s=tokens_per_s,
        model_flops=model.model_flops, hardware_flops=model.hardware_flops, six_n_flops=model.six_n_flops,
        peak_flops=peak, mfu=utilization(model.model_flops), hfu=utilization(model.hardware_flops),
        scaling_efficiency=scaling, buckets=_bucket_rows(devices[critical]) if devices else (), memory=memory,
        memory_capacity_bytes=capacity, layer_ops=model.ops,
        timeline=timeline if isinstance(timeline, tuple) else (),
        communication=tuple(_intervals(s, d.issued) for s, d in enumerate(devices)),
        notes=tuple(notes), warnings=tuple(warnings), sources=sources)
    if not deferred:
        return result, lambda: result

    def finish() -> StepResult:
        return replace(result, timeline=timeline if isinstance(timeline, tuple) else timeline.operations())

    return result, finish


def _devices_run(c: StepConfig, run: _Prepared, *, notes: list[str], deferred: bool
                 ) -> tuple[list[Device], Timeline | SimulatedPipeline, Fraction, Fraction, Fraction]:
    """:func:`_data_parallel` with dp × cp ranks, else no devices and the pipeline's timeline: the devices,
    the timeline (when *deferred* and the pipeline's own, the simulated pipeline that makes it), the step's
    end, its end without the slowdown, and the pipeline's end."""
    if c.dp * c.cp > 1:
        devices, timeline, end, end_plain, makespan = _data_parallel(c, run, notes=notes, deferred=deferred)
        return devices, run.simulated() if timeline is None else timeline, end, end_plain, makespan
    if not deferred:
        timeline = run.timeline()
        end = max(ops[-1].end for ops in timeline)
        return [], timeline, end, end, end
    pipeline = run.simulated()
    end = pipeline.makespan()
    return [], pipeline, end, end, end


def _quiet(run: _Prepared, makespan: Fraction) -> Fraction:
    """The pipeline's end without the sends between stages (*makespan* with them): a blocking exchange is
    ``pp_exposed_s``."""
    return run.makespan(send=False) if run.send else makespan


def _expert_reduction(c: StepConfig, run: _Prepared, *, notes: list[str]) -> Fraction:
    """The routed experts' gradients reduced over the dp·cp/ep ranks that hold the same experts
    (Megatron-Core's expert-data-parallel group, world/(ep·tp·pp) ranks), after the backward and before
    the optimizer, the slowest device's: one all-reduce of its experts' gradients (ZeRO 1 and up: a
    reduce-scatter, and for ZeRO 1 and 2 the all-gather of the updated experts after it)."""
    model = run.model
    replicas = c.dp * c.cp // c.ep
    if replicas == 1 or not any(model.expert_gradients):
        return Fraction(0)
    source = _link(run.edp_link, c.link, "dp_link", "the experts' gradient reduction")
    zero = run.mode.zero

    def price(collective: str, n: Fraction) -> Fraction:
        priced = cost(collective, c.algorithm if collective == "allreduce" else "ring", p=replicas, n=n,
                      link=_for(source, collective), chunk_note=False)
        notes.extend(x for x in priced.notes if x not in notes)
        return priced.time_s

    slowest = Fraction(0)
    for s in range(c.pp):
        n = sum((model.expert_gradients[i] for i in _device_layers(c, run.layout, s, v=run.v)), Fraction(0))
        if not n:
            continue
        if zero == 0:
            t = price("allreduce", n)
        else:
            t = price("reduce-scatter", n) + (price("allgather", n) if zero < 3 else 0)
        slowest = max(slowest, t)
    over = "dp·cp/ep" if c.cp > 1 else "dp/ep"
    notes.append(f"the experts' gradients are reduced over the {over} = {replicas} ranks holding the same "
                 "experts after the backward, not overlapped with it (Megatron-Core's expert-data-parallel "
                 "group)")
    return slowest


def _duplicated_reduction(c: StepConfig, layout: Sequence[int], *, v: int, tp_link: Any,
                          grad_element: Fraction, notes: list[str]) -> Fraction:
    """With sequence parallelism, the gradients of the weights every tensor-parallel rank holds whole
    (latent attention's down-projections), each rank's from its own s/t tokens, summed over the tp ranks
    after the backward and before the optimizer, the slowest device's: one all-reduce of its layers' on the
    tensor-parallel link (Megatron-Core's ``TELinear`` marks a duplicated weight ``sequence_parallel``, and
    ``finalize_model_grads`` all-reduces those gradients over the tp group).  Without sequence parallelism
    every rank computes them on the whole sequence: nothing to sum."""
    shape = c.shape
    if c.tp == 1 or not c.sequence_parallel or shape is None or not shape.duplicated_parameters:
        return Fraction(0)
    layers = max(len(_device_layers(c, layout, s, v=v)) for s in range(c.pp))
    n = layers * shape.duplicated_parameters * grad_element
    source = _link(tp_link, c.link, "tp_link", "the tensor-parallel collectives")
    priced = cost("allreduce", c.algorithm, p=c.tp, n=n, link=_for(source, "allreduce"), chunk_note=False)
    notes.append(f"latent attention with sequence parallelism: the down-projections' gradients, each rank's "
                 f"from its own tokens, are all-reduced over the {c.tp} tensor-parallel ranks after the "
                 f"backward ({format_size(n)} on a device of {layers} layers, {format_time(priced.time_s)}), "
                 "counted in the TP communication (Megatron-Core's finalize_model_grads)")
    return priced.time_s


def memory_of(config: StepConfig, *, stages: Sequence[int] | None = None, largest: bool = False
              ) -> tuple[tuple[DeviceMemory, ...] | None, Fraction | None]:
    """Each device's memory of *config*'s step and the GPU's capacity (``None`` without a GPU), exactly as
    :func:`price_step` reports them in ``memory`` and ``memory_capacity_bytes``, without pricing the step:
    the memory needs the layers of each stage and the micro-batches in flight, which the schedule's order
    fixes (:func:`order_facts`).  ``(None, None)`` with per-layer times.  A step that does not fit is not
    refused here; compare the largest ``total_bytes`` with the capacity.  *stages*: only those pipeline
    devices' (in order; one over the capacity is enough to know a step does not fit).

    *largest*: of those devices, only the ones that may hold the most, the same largest ``total_bytes``
    from fewer devices.  A device's memory is its weights' states and its activations, those of its largest
    chunk's layers times the micro-batches it holds (with the layer rebuilt by full recomputation when it
    holds a layer), the first device's embedding among its weights and the last's logits besides: each
    grows with its weights, its micro-batches in flight and its chunks' layers.  So of the devices with the
    same weights and chunks (the inner stages of a pipeline mostly are), the one with the most
    micro-batches in flight holds at least as much as any of the others, which are left out.

    Raises :class:`~costmodel.errors.InputError` for settings that contradict each other (as
    :func:`price_step` would for the same reasons).
    """
    c = config
    if c.shape is None:
        return None, None
    name, v = _parallelism(c)
    mode = _framework(c)
    check_layers(c.shape.layers)
    _check_experts(c)
    layout = with_mtp(_layout(c, c.shape.layers, v), c.shape.mtp_layers)
    memory = _device_memory(c, mode, _activation_element(c), _grad_element(c, mode), layout, name=name, v=v,
                            stages=stages, largest=largest)
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

    1F1B, and interleaved 1F1B with the micro-batches a multiple of the stages, are counted in closed
    form: device s runs min(pp − s, m) forwards (1F1B), or min(2(pp − s − 1) + (v − 1)·pp + 1, m·v)
    chunk-forwards (interleaved: Megatron-LM's warm-up, then one more), before its first backward
    (Narayanan et al. 2021, sections 2.2.1 and 2.2.2), and ends with the last micro-batch's backward of its
    first chunk; a test checks both against the orders.
    """
    if schedule == "1f1b" or (schedule == "interleaved" and stages > 1 and microbatches % stages == 0):
        v = chunks if schedule == "interleaved" else 1
        warm = ([min(stages - s, microbatches) for s in range(stages)] if v == 1 else
                [min(2 * (stages - s - 1) + (v - 1) * stages + 1, microbatches * v) for s in range(stages)])
        return OrderFacts(inflight=tuple(warm), last=(("B", microbatches - 1, 0),) * stages)
    orders = [order(schedule, s, stages=stages, microbatches=microbatches, chunks=chunks)
              for s in range(stages)]
    return OrderFacts(inflight=tuple(peak_inflight((op for op, _, _ in o), split=schedule in SPLIT)
                                     for o in orders),
                      last=tuple(o[-1] for o in orders))


@dataclass(frozen=True, slots=True, kw_only=True)
class StepBound(JSONFields):
    """Proven lower bounds of a step's time (:func:`lower_bound`):
    ``work_s ≤ pipeline_s ≤ step_s − optimizer_s``.

    *work_s* is the busiest device's compute and the communication on its critical path over the step
    (``compute_s + tp_comm_s + cp_comm_s + ep_comm_s`` of :class:`StepResult`: the tensor-parallel
    collectives, ring attention's exposed sends, the experts' all-to-alls), which neither the schedule nor
    the ZeRO stage changes; *pipeline_s* adds the time the first micro-batch needs to reach each device and
    the last backward to leave it; *expert_dp_s* is the experts' gradient reduction after the backward
    (``expert_dp_s`` of :class:`StepResult`) and *optimizer_s* the step's optimizer, which follow everything.
    """

    work_s: Fraction
    pipeline_s: Fraction
    expert_dp_s: Fraction = Fraction(0)
    optimizer_s: Fraction

    @property
    def step_s(self) -> Fraction:
        """The bound of the step: the pipeline's, then the experts' reduction and the optimizer."""
        return self.pipeline_s + self.expert_dp_s + self.optimizer_s


def lower_bound(config: StepConfig) -> StepBound:
    """Proven lower bounds of ``price_step(config).step_s``, from the pipeline's compute alone: no
    simulation, no data-parallel traffic.

    Device s's first operation is micro-batch 0's forward of its first model chunk, which waits for that
    forward on the stages before it, each sent on: it starts no earlier than Σ_{k<s} (F_k + send).  It then
    runs its whole work, m · Σ_chunks (F + B), one operation at a time (the communication on the critical
    path included: the tensor-parallel collectives, ring attention's sends beyond the attention they
    overlap, an MoE layer's all-to-alls, each priced as :func:`price_step` prices it).  In the schedules
    that do not split the backward its last operation is the backward of some micro-batch on its first
    chunk (a backward on a later chunk is followed, on the same device, by that micro-batch's backward on
    the chunk before), after which the stages before it each run that backward in turn:
    Σ_{k<s} (send + B_k).  So the pipeline ends no earlier than

        max_s  Σ_{k<s} (F_k + send) + m · Σ_chunks (F + B)_s + Σ_{k<s} (B_k + send)

    (the exact makespan of 1F1B with equal stages and no sends, (m + pp − 1)(F + B)).  Data-parallel
    traffic (over the dp × cp ranks) only delays the compute (every start is a maximum of ends, which a
    longer operation only moves later) or ends after it, and the experts' reduction over the dp·cp/ep ranks
    holding the same experts and the optimizer follow it, so the step is at least this plus those two.

    When the gradients are reduced after the backward (ZeRO 0 or 1, no overlap, a schedule that does not
    split the backward) on a plain α–β link with ring collectives, and device s's last operation is a
    backward of the last micro-batch, the device issues all its buckets when its compute ends, one after
    another on its stream, and with ZeRO 1 gathers the parameters bucket by bucket after the optimizer.
    A ring collective's time is affine in its bytes with a non-negative constant, so the buckets take at
    least one collective of all of them: the device's end is at least its own compute's end,
    Σ_{k<s} (F_k + send) + m · Σ_chunks (F + B)_s, plus R_s, the reduction of all its gradient bytes, and
    the step at least that plus the optimizer plus G_s, their all-gather (the data-parallel part of
    *pipeline_s*, which takes the larger of R_s + G_s and the backward's way out, Σ_{k<s} (B_k + send):
    the stages before s are not waited for by s's own reduction).  Raises
    :class:`~costmodel.errors.InputError` where :func:`price_step` would refuse the settings (memory
    apart).
    """
    c = config
    run = _prepare(c, notes=[], operations=False)
    p, v, m = run.pp, run.v, run.m
    split = run.name in SPLIT
    forward, backward, weight = _stage_totals(run)
    works = _works(run)
    after_s = [Fraction(0)] * p  # device s's own reduction (and gather) after its compute
    optimizer = _optimizer(c, run.model, run.layout, v=v, dp=c.dp * c.cp, zero=run.mode.sharding)
    experts = _expert_reduction(c, run, notes=[])
    after = _after_backward(c, run)
    if after is not None:
        reduce, gather = after
        last = order_facts(run.name, p, microbatches=m, chunks=v).last
        seen: dict[tuple[int, ...], Fraction] = {}  # devices of the same units (most are) priced once
        for s in range(p):
            if last[s][0] == "B" and last[s][1] == m - 1:
                units = [u for ch in range(v) for u in run.stage_units[ch * p + s]]
                key = tuple(map(id, units))
                if key not in seen:
                    ran = runs(units)
                    grads = exact_sum((u.gradient_bytes for u, _ in ran), [n for _, n in ran])
                    seen[key] = Fraction(0) if not grads else reduce(grads) + (
                        gather(grads * run.mode.param_ratio) if run.mode.sharding == 1 else 0)
                after_s[s] = seen[key]
    # device s ends no earlier than Σ_{k<s} (F_k + send) + its work + the larger of Σ_{k<s} (B_k + send)
    # and its own reduction: summed as s grows, in integer ticks of 1/scale s (exact)
    scale = math.lcm(*{x.denominator for x in (*forward, *backward, *weight, *works, *after_s, run.send)})

    def ticks(x: Fraction) -> int:
        return x.numerator * (scale // x.denominator)

    send, head, tail, end = ticks(run.send), 0, 0, 0
    for s in range(p):
        end = max(end, head + ticks(works[s]) + max(0 if split else tail, ticks(after_s[s])))
        head += ticks(forward[s]) + send
        tail += ticks(backward[s]) + (0 if split else ticks(weight[s])) + send
    return StepBound(work_s=max(works), pipeline_s=Fraction(end, scale), expert_dp_s=experts,
                     optimizer_s=optimizer)


def work_bound(config: StepConfig) -> Fraction:
    """``lower_bound(config).work_s`` alone: the busiest device's work over the step (its compute and the
    communication on its critical path), the same for every schedule and ZeRO stage."""
    return max(_works(_prepare(config, notes=[], operations=False)))


def _stage_totals(run: _Prepared) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """Each virtual stage's F, B and W of one micro-batch (:func:`~costmodel.step.device.totals`), blocking
    pipeline exchanges left out (they only add time, and whether they block depends on the schedule)."""
    spans = run.spans(send=False)
    return spans["forward"], spans["backward"], spans["weight"]


def _pace_note(c: StepConfig, run: _Prepared) -> list[str]:
    """A note when one pipeline device's work per micro-batch (its forward and backward, :func:`_works`)
    is over 10 % above the median device's: in a pipeline the slowest stage sets the pace of every
    micro-batch (Narayanan et al. 2021, section 2.2: stages of equal work balance the pipeline)."""
    if c.pp < 2:
        return []
    works = _works(run)
    median = sorted(works)[(len(works) - 1) // 2]  # the lower median: the other of two stages
    busiest = max(range(len(works)), key=lambda s: (works[s], -s))
    if not median or works[busiest] * 10 <= median * 11:
        return []
    mtp = c.shape.mtp_layers if c.shape is not None else 0
    holds = ("the embedding" if busiest == 0 else
             "the output layer" + (" and the multi-token prediction modules" if mtp else "")
             if busiest == c.pp - 1 else "")
    held = f" (with {holds})" if holds else ""
    over = (works[busiest] / median - 1) * 100
    return [f"pipeline stage {busiest}{held} computes {format_time(works[busiest] / run.m)} a micro-batch, "
            f"{float(over):.0f} % above the median stage's {format_time(median / run.m)}: the slowest stage "
            "paces the pipeline; stage_layers= can move layers off it"]


def _works(run: _Prepared) -> list[Fraction]:
    """Each device's work over the step, m · Σ_chunks (F + B + W): m times its units' forward and backward
    (blocking pipeline exchanges left out, as in :func:`_stage_totals`)."""
    p, v = run.pp, run.v
    seen: dict[tuple[int, ...], Fraction] = {}  # devices of the same units (most are) summed once
    out = []
    for s in range(p):
        units = [u for ch in range(v) for u in run.stage_units[ch * p + s] if not (run.blocking and u.pp)]
        key = tuple(map(id, units))
        if key not in seen:
            ran = runs(units)
            times = [*(u.forward for u, _ in ran), *(u.backward for u, _ in ran)]
            seen[key] = run.m * exact_sum(times, [n for _, n in ran] * 2)
        out.append(seen[key])
    return out


def _after_backward(c: StepConfig, run: _Prepared
                    ) -> tuple[Callable[[Fraction], Fraction], Callable[[Fraction], Fraction]] | None:
    """The time of one reduction, and of one all-gather, of n gradient bytes over the dp × cp ranks, when
    the gradients are reduced after the backward on a plain α–β link with ring collectives (see
    :func:`lower_bound`); else None."""
    mode = run.mode
    if (c.dp * c.cp == 1 or mode.zero not in (0, 1) or mode.overlap or run.name in SPLIT
            or mode.param_gather != "after" or c.algorithm != "ring"):
        return None
    source = _link(run.dp_link, c.link, "dp_link", "the data-parallel reduction")
    collective = "allreduce" if mode.zero == 0 else "reduce-scatter"
    if not all(isinstance(_for(source, x), LinkParams) for x in (collective, "allgather")):
        return None
    price = _pricer(source, dp=c.dp * c.cp, algorithm="ring", notes=[])
    return (lambda n: price(collective, n)), (lambda n: price("allgather", n))


def _bucket_note(c: StepConfig, model: _Model, *, zero: int) -> list[str]:
    """Why a bucket size below one layer's gradients changes nothing: buckets hold whole layers (PyTorch
    DDP's Reducer, Megatron-LM's and DeepSpeed's buckets alike never split a parameter)."""
    if c.bucket_bytes is None or c.dp * c.cp == 1 or zero == 3 or not model.gradients:
        return []
    largest = max(model.gradients)
    if largest < c.bucket_bytes:
        return []
    return [f"bucket_bytes={format_size(c.bucket_bytes)} is not above a layer's gradients (up to "
            f"{format_size(largest)} on a rank): a bucket never splits a layer, so such layers are buckets "
            "of their own and no smaller size changes them"]


def _send_notes(c: StepConfig, run: _Prepared) -> list[str]:
    """How the pipeline sends are priced."""
    if not run.send:
        return []
    each = format_time(run.send)
    if run.sends == "overlap":
        return [f"pipeline sends are α + β·n of the activation tensor between stages ({each} each), beside "
                "the compute: the next stage waits for a send, the sender goes on"]
    deepspeed = c.framework in DEEPSPEED_ENGINE
    how = "send and recv, async_op=False" if deepspeed else "batch_isend_irecv, wait, synchronize"
    note = (f"pipeline sends block the device ({how}): each forward and backward holds it for its exchange, "
            f"α + β·n of the activation tensor ({each})")
    if run.sends == "scatter-gather" and c.tp > 1:
        note = (f"pipeline sends scatter-gather: each of the tp={c.tp} ranks sends 1/{c.tp} of the "
                f"activation tensor (α + β·n/t, {each}) and the receivers all-gather it over the "
                f"tensor-parallel ranks ({format_time(run.gather)}), blocking the device ({how})")
        if c.sequence_parallel:
            note += "; with sequence parallelism the tensor is already split: nothing to gather"
    if deepspeed:
        note += ("; DeepSpeed's pipeline engine: on Megatron-DeepSpeed runs held out from every constant "
                 "(MT-NLG 530B; BigScience's 112 runs on A100s, BLOOM-176B's among them) this model's steps "
                 "are shorter than measured on every one, by 4-38 %, 15 % at the median "
                 "(docs/theory/step-vs-measured.md)")
    return [note]


def _tp_notes(c: StepConfig, run: _Prepared) -> list[str]:
    """How the backward's tensor-parallel collectives are priced, when they are."""
    if c.tp == 1 or not run.tp_layer or c.shape is None:
        return []
    sp = c.sequence_parallel
    if run.tp_overlap == "none":
        return ["tp backward with sequence parallelism: each column-parallel product gathers its input "
                "again for its weight gradient, between its products"] if sp else []
    shape = c.shape
    column = ("QKV" if not shape.latent else "the up-projections" if shape.q_rank is not None
              else "Q and the KV up-projection")
    how = (f"each column-parallel product ({column}, the FFN's first) gathers its input again beside its "
           "input gradient and reduce-scatters that gradient beside its weight gradient, each row-parallel "
           "one gathers its output gradient" if sp else
           f"each input-gradient all-reduce of {column} and the FFN's first product runs beside that "
           "product's weight gradient (Megatron-LM's asynchronous all-reduce)")
    return [f"tp backward: {how}; {format_time(run.tp_hidden)} of a layer's collectives hidden"]


def _shape_notes(c: StepConfig, *, zero: int, overlap: str = "none") -> list[str]:
    """What the step's shape alone says about how it is priced."""
    return [note for note, on in (
        ("tensor-parallel collectives are on the critical path of each layer, not overlapped",
         c.tp > 1 and overlap == "none"),
        ("the forward's tensor-parallel collectives are on the critical path of each layer",
         c.tp > 1 and overlap != "none"),
        ("Megatron-LM runs a mixture of experts with tensor parallelism only with sequence_parallel=True; "
         "without it each tensor-parallel rank routes and dispatches all the micro-batch's tokens",
         c.shape is not None and c.shape.moe and c.tp > 1 and not c.sequence_parallel),
        ("expert parallelism: 2 all-to-alls per MoE layer forward (dispatch, combine) and 2 backward "
         f"over the ep={c.ep} ranks, on the critical path, tokens spread evenly over the experts", c.ep > 1),
        (f"ZeRO {zero}: the bucket rule does not apply; each layer is all-gathered and reduce-scattered "
         "on its own", zero == 3 and c.dp > 1 and c.buckets not in (None, "ddp")),
        (f"zero={zero} with dp=1 shards nothing", zero > 0 and c.dp * c.cp == 1),
        ("context-parallel sends of K and V overlap each block's attention; only what they take beyond it "
         "is exposed", c.cp > 1),
        ("sequence_parallel=True has no effect with tp=1: it splits the norms and dropouts over the "
         "tensor-parallel ranks", c.sequence_parallel and c.tp == 1)) if on]


def _data_parallel(c: StepConfig, run: _Prepared, *, notes: list[str], deferred: bool = False
                   ) -> tuple[list[Device], Timeline | None, Fraction, Fraction, Fraction]:
    """The devices with their data-parallel streams, the timeline they run, the step's end, its end
    without the slowdown (the same when there is none), and the pipeline's end without data-parallel
    traffic.  *deferred*: ``None`` in place of the timeline when it is the pipeline's own
    (``run.timeline()`` makes it), which is then not made.

    The data-parallel traffic changes the compute only when it overlaps it: buckets reduced as the backward
    makes them, or after each micro-batch (ZeRO 2), slow the compute while they run; ZeRO 3's gathers and an
    overlapped parameter gather hold it up.  Otherwise each device's collectives start after its last
    computation, and the devices' compute runs as the pipeline alone: their timeline is the pipeline's, and
    only the operations that make gradients are run again, to issue their buckets.
    """
    mode = run.mode
    price = _pricer(_link(run.dp_link, c.link, "dp_link", "the data-parallel reduction"), dp=c.dp * c.cp,
                    algorithm=c.algorithm, notes=notes)
    units = run.stage_units
    if mode.zero >= 3 and mode.framework == "deepspeed":
        units = [_by_matrix(us, _matrices(c.shape, c.tp)) for us in units]

    def build(slow: Fraction, scale: int | None = None) -> list[Device]:
        return _devices(units, name=run.name, pp=run.pp, v=run.v, m=run.m, dp=c.dp * c.cp, mode=mode,
                        slowdown=slow, price=price, element=run.model.grad_element, scale=scale)

    alone: list[Timeline] = []  # the pipeline's timeline without data-parallel traffic, made when needed

    def pipeline() -> Timeline:
        if not alone:
            alone.append(run.timeline())
        return alone[0]

    makespan = run.makespan()

    def simulate(devices: list[Device], *, ops: bool = True, scale: int | None = None) -> Timeline:
        """The devices run operation by operation from the first that meets a collective; before it
        (and before what waits for it on other devices) each runs as the pipeline alone.  Without *ops*
        only the devices keep what ran (their ends, their collectives); with *scale* they count time in
        integer ticks of 1/scale s, which holds when every device meets a collective at its first
        operation (nothing is then taken from the pipeline's timeline, in seconds)."""
        first = [d.first_interaction() for d in devices]
        assert scale is None or not any(first), "a device in ticks would take operations in seconds"
        settled = settled_prefix(pipeline(), first, chunks=run.v) if any(first) else ()
        return simulate_devices(run.name, run.pp, microbatches=run.m, chunks=run.v,
                                comm=run.edge if scale is None else int(run.edge * scale),
                                execute=lambda s, op, j, ch, start: devices[s].run(op, j, ch, start),
                                settled=settled, ops=ops)

    def making(devices: list[Device]) -> Timeline:
        """The pipeline's operations that make gradients on *devices*, all a replay runs again (and each
        device's last)."""
        return alone[0] if alone else run.timeline(keep=[d.producing() for d in devices])

    waits = mode.zero >= 3 or mode.param_gather == "overlap"
    slows = bool(run.slowdown) and (mode.overlap or mode.zero == 2 or waits)
    devices = build(run.slowdown if slows else Fraction(0))
    timeline: Timeline | None
    if slows or waits:
        timeline = simulate(devices)
    else:
        timeline = None if deferred else pipeline()
        _replay(devices, making(devices))
    end = max(d.end for d in devices)
    if not slows:
        return devices, timeline, end, end, makespan
    if not waits:  # without the slowdown nothing holds the compute up: the pipeline's timeline, replayed
        plain = build(Fraction(0))
        _replay(plain, making(plain))
        return devices, timeline, end, max(d.end for d in plain), makespan
    # every device waits for a collective from its first operation (ZeRO 3's gathers, or the parameter
    # gathers of micro-batch 0's forward): the run without the slowdown is the same simulation in integer
    # ticks, its times needing no division
    scale = _tick_scale(units, devices, run.edge)
    plain = build(Fraction(0), scale)
    simulate(plain, ops=False, scale=scale)
    return devices, timeline, end, Fraction(max(d.end for d in plain), scale), makespan


def _tick_scale(units: list[list[Unit]], devices: list[Device], edge: Fraction) -> int:
    """The least common denominator of every work of *units*, every collective *devices* issued (the same
    collectives as a run without the slowdown issues) and the time between stages: a tick that divides
    them all."""
    denominators = {edge.denominator}
    for us in units:
        for u in us:
            denominators.update((u.forward.denominator, u.backward.denominator, u.weight.denominator,
                                 u.recompute.denominator))
    for d in devices:
        denominators.update((x.end - x.start).denominator for x in d.issued)
    return math.lcm(*denominators)


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
        warnings.append(refusal.split("; shard more")[0] + " (priced anyway: allow_oom=True)")
    return memory, capacity


def _device_memory(c: StepConfig, mode: DataParallel, element: Fraction, grad_element: Fraction,
                   layout: Sequence[int], *, name: str, v: int, stages: Sequence[int] | None = None,
                   largest: bool = False) -> tuple[DeviceMemory, ...] | None:
    """Each device's memory (a shape only; see :func:`_memory`), or *stages*' only; with *largest*, of
    those only the ones that may hold the most (:func:`memory_of`)."""
    if c.shape is None:
        return None
    pp, tp = c.pp, c.tp
    per_device = [[layout[ch * pp + s] for ch in range(v)] for s in range(pp)]
    inflight = order_facts(name, pp, microbatches=c.microbatches, chunks=v).inflight
    weights = _device_weights(c, layout, v=v)
    if largest:  # of the devices alike but for their micro-batches in flight, the one with the most
        alike: dict[tuple[Any, ...], int] = {}
        for s in range(pp) if stages is None else stages:
            key = (weights[s], tuple(per_device[s]), s == 0, s == pp - 1)
            if key not in alike or inflight[s] > inflight[alike[key]]:
                alike[key] = s
        stages = sorted(alike.values())
    # the weights in the framework's dtype (AMP's fp32 parameters under DDP: a gradient's element)
    weight_element = (grad_element if mode.framework == "ddp" or mode.param_element is None
                      else mode.param_element)
    return step_memory(
        c.shape, inflight, layers=per_device,
        dp=c.dp * c.cp, tp=tp, zero=mode.sharding, micro_batch=c.micro_batch, recompute=c.recompute,
        sequence_parallel=c.sequence_parallel and tp > 1, attention=c.attention, element=element,
        weight_element=weight_element, grad_element=grad_element,
        optimizer_element=_DDP_OPTIMIZER if mode.framework == "ddp" else _OPTIMIZER, prefetch=mode.prefetch,
        cp=c.cp, dropout=c.dropout, ep=c.ep, capacity_factor=c.capacity_factor,
        weights=weights, stages=stages,
        unit_share=max(_matrices(c.shape, tp)) if mode.regather else _ONE)  # DeepSpeed: one module


_OPTIMIZER, _DDP_OPTIMIZER = Fraction(OPTIMIZER_BYTES), Fraction(8)
"""K, Adam's optimizer states in bytes a parameter (8 under DDP's AMP, whose fp32 parameters are the master
weights)."""


def _compute_model(c: StepConfig, model: _Model) -> str:
    if model.rates is None:
        return "per-layer times"
    if model.rates.flat:
        return f"FLOPs at {model.rates.plateau / model.rates.peak} of the peak"
    kinds = ", ".join(kind.replace("_", " ") for kind, _ in model.rates.kernels)
    measured = f"; {kinds} kernels at their own bandwidth" if kinds else ""
    return f"per operation on {model.rates.name} ({c.dtype}, {c.attention} attention{measured})"


estimate_step = step
"""Another name of :func:`step` (``costmodel.estimate_step``); calling the package, ``costmodel.step(...)``,
is the same."""
