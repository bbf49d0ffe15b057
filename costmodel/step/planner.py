"""Every parallel configuration of a training step on a machine, searched exactly, the best ranked.

:func:`plan` takes a model (a transformer shape), a GPU, the nodes and their GPUs, and a global batch, and
enumerates every configuration that uses all the GPUs: tensor, pipeline, context and data parallelism,
expert parallelism for a mixture of experts (Megatron-Core's: ep splits the dp × cp ranks), the
micro-batch size (the micro-batches follow from the global batch), the schedule (1F1B, or interleaved
1F1B with its model chunks), activation recomputation, sequence parallelism and the ZeRO stages of the
framework (ZeRO 1 is Megatron-LM's distributed optimizer).  The settings it varies are one table,
:data:`DIMENSIONS`: each a setting of :class:`~costmodel.step.config.StepConfig`, the values to try given
the settings chosen before it, and the check that refuses a value with its reason.  Adding a kind of
parallelism is adding a row.

Each configuration the table accepts is checked against the GPU's memory exactly as
:func:`~costmodel.step.model.price_step` checks it (:func:`~costmodel.step.model.memory_of`: the same
function, without pricing), and those that fit are searched by branch and bound (Land and Doig 1960):
each has a proven lower bound of its step time (:func:`~costmodel.step.model.lower_bound`: the busiest
device's compute and the communication on its critical path (tensor-parallel collectives, ring
attention's sends beyond the attention they overlap, the experts' all-to-alls), then the first
micro-batch's way in and the last backward's way out of the pipeline, then, when the gradients are
reduced after the backward, one collective of all of them, then the experts' gradient reduction and the
optimizer; nothing simulated),
the configurations are taken in increasing order of their bound, and each taken is priced by
:func:`~costmodel.step.model.price_step`, until the next bound is no less than the N-th best step found.
Every configuration left unpriced then has a step at least as long as the N-th best, so **the pruning
is exact: the N rows are the true N fastest configurations** of the table (one tied with the N-th may
be left out).  The bounds come in two levels: the busiest device's work, the same for every schedule and
ZeRO stage (computed once for them all; cp and ep change it, through ring attention's sends and the
all-to-alls, so they are among the settings it is computed for), and the pipeline's, computed only for
the configurations whose work bound did not stop the search.

Every configuration uses the same GPUs for the same global batch, so the fastest step is also the most
tokens per GPU-second and the highest MFU.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.errors import InputError
from costmodel.references import LAND_1960, NARAYANAN_2021_MEGATRON
from costmodel.step.config import StepConfig
from costmodel.step.frameworks import pipeline_schedules, ring_attention, zero_stages
from costmodel.step.model import StepResult, lower_bound, memory_of, step_time, uneven, work_bound
from costmodel.validate import positive

__all__ = ["CITED", "DIMENSIONS", "MICRO_BATCH_SIZES", "Dimension", "Plan", "PlanPoint", "PlanRow", "Refusal",
           "Space", "plan"]

CITED = (LAND_1960, NARAYANAN_2021_MEGATRON)

_SOURCES = (
    LAND_1960.at("section 2: branch and bound, each branch dropped when its bound cannot beat the best "
                 "found"),
    NARAYANAN_2021_MEGATRON.at("section 3: the trade-offs of tensor, pipeline and data parallelism, the "
                               "micro-batch size and the interleaved schedule; takeaways 1-3"),
)

MICRO_BATCH_SIZES = (1, 2, 4)
"""The micro-batch sizes tried unless others are given."""

BOUND = ("each configuration's step is at least its busiest device's compute and the communication on "
         "its critical path (TP collectives, exposed CP sends, EP all-to-alls), plus the first "
         "micro-batch's way into the pipeline and the last backward's way out, plus (gradients reduced "
         "after the backward) one reduction and one gather of all its gradients, plus the experts' "
         "reduction and the optimizer; nothing simulated")
"""The lower bound the search prunes with, in words (:func:`costmodel.step.model.lower_bound`)."""


_BATCH = "the global batch is not a multiple of dp × micro-batch"


@dataclass(frozen=True, slots=True)
class Space:
    """What the planner searches over: the model, the GPUs, the global batch, the micro-batch sizes, and the
    settings held fixed (*base*: every other setting of the step, read once)."""

    base: StepConfig
    gpus: int
    global_batch: int
    micro_batch_sizes: tuple[int, ...]
    fixed: frozenset[str]

    @property
    def shape(self) -> Any:
        return self.base.shape


Chosen = Mapping[str, Any]
"""The settings chosen so far, by name."""


@dataclass(frozen=True, slots=True)
class Dimension:
    """One setting the planner varies: the :class:`~costmodel.step.config.StepConfig` field *name*.

    *candidates* gives the values to try, from the search space and the settings chosen before it (a
    derived setting gives one); *check* returns why the value just chosen is refused, or ``None``.
    *ranks*: the setting splits the GPUs (the data-parallel size is the GPUs over the product of these,
    and a value that leaves no whole share of them is refused); *derived* says how its value follows from
    the others (such a setting cannot be held); *empty* is the reason when no value is left to try.
    """

    name: str
    candidates: Callable[[Space, Chosen], Iterable[Any]]
    check: Callable[[Space, Chosen], str | None] = lambda space, chosen: None
    ranks: bool = False
    derived: str = ""
    empty: str = ""


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def _split(chosen: Chosen) -> int:
    """The product of the settings chosen that split the GPUs."""
    out = 1
    for d in DIMENSIONS:
        if d.ranks and d.name in chosen:
            out *= chosen[d.name]
    return out


def _recompute(space: Space, chosen: Chosen) -> str | None:
    c = space.base
    flat = c.efficiency is not None or c.gpu is None
    if chosen["recompute"] == "selective" and c.attention == "flash" and not flat:
        return "selective recomputation with flash attention recomputes nothing: the same step as none"
    return None


def _cp_check(space: Space, chosen: Chosen) -> str | None:
    cp = chosen["cp"]
    if cp > 1 and space.shape.sequence % (2 * cp):
        return "cp does not split the sequence into 2·cp equal chunks"
    return None


def _experts(space: Space, chosen: Chosen) -> list[int]:
    """The expert-parallel sizes: 1 for a dense model, else the common divisors of the experts and dp·cp
    (Megatron-Core's expert grid carves ep out of the dp × cp ranks)."""
    shape = space.shape
    if not shape.moe:
        return [1]
    return _divisors(math.gcd(shape.experts, chosen["dp"] * chosen["cp"]))


def _ep_check(space: Space, chosen: Chosen) -> str | None:
    ep, shape = chosen["ep"], space.shape
    if ep == 1:
        return None
    if not shape.moe:
        return "ep applies to a mixture of experts"
    if shape.experts % ep:
        return "ep does not divide the experts"
    if (chosen["dp"] * chosen["cp"]) % ep:
        return "ep does not divide dp·cp"
    return None


DIMENSIONS: tuple[Dimension, ...] = (
    Dimension("tp", lambda sp, ch: _divisors(sp.gpus), ranks=True,
              check=lambda sp, ch: "tp does not divide the heads" if sp.shape.heads % ch["tp"] else None),
    Dimension("pp", lambda sp, ch: _divisors(sp.gpus // _split(ch)), ranks=True,
              check=lambda sp, ch: "pp is above the layers" if ch["pp"] > sp.shape.layers else None),
    Dimension("cp", lambda sp, ch: _divisors(sp.gpus // _split(ch)) if ring_attention(sp.base.framework)
              else (1,), ranks=True, check=_cp_check),
    Dimension("dp", lambda sp, ch: (sp.gpus // _split(ch),),
              derived="follows from the GPUs over tp × pp × cp"),
    Dimension("ep", _experts, check=_ep_check),
    Dimension("micro_batch", lambda sp, ch: sp.micro_batch_sizes,
              check=lambda sp, ch: _BATCH
              if sp.global_batch % (ch["dp"] * ch["micro_batch"]) else None),
    Dimension("microbatches", lambda sp, ch: (sp.global_batch // (ch["dp"] * ch["micro_batch"]),),
              derived="follows from the global batch over dp × micro-batch"),
    Dimension("schedule", lambda sp, ch: ("1f1b", "interleaved") if ch["pp"] > 1 and
              sp.shape.layers % ch["pp"] == 0 and pipeline_schedules(sp.base.framework) is None
              else ("1f1b",),
              check=lambda sp, ch: "interleaved: the micro-batches are not a multiple of pp"
              if ch["schedule"] == "interleaved" and ch["microbatches"] % ch["pp"] else None),
    Dimension("chunks", lambda sp, ch: (None,) if ch["schedule"] != "interleaved" else
              [v for v in _divisors(sp.shape.layers // ch["pp"]) if v > 1],
              empty="interleaved: no chunk count above 1 splits a stage's layers"),
    Dimension("recompute", lambda sp, ch: ("none", "selective", "full"), check=_recompute),
    Dimension("sequence_parallel", lambda sp, ch: (False, True) if ch["tp"] > 1 else (False,),
              check=lambda sp, ch: "sequence parallelism: the sequence does not split over tp"
              if ch["sequence_parallel"] and sp.shape.sequence % ch["tp"] else None),
    Dimension("zero", lambda sp, ch: zero_stages(sp.base.framework),
              check=lambda sp, ch: "ZeRO 3 with a pipeline is not modelled"
              if ch["zero"] == 3 and ch["pp"] > 1 else None),
)
"""The settings :func:`plan` varies, in the order it chooses them (see the module notes)."""

_LEVEL0_VARIES = ("schedule", "chunks", "zero")
"""The settings the first bound (the busiest device's work) does not depend on.  cp and ep are not among
them: ring attention's exposed sends and the all-to-alls are part of that work."""


@dataclass(frozen=True, slots=True)
class Refusal(JSONFields):
    """Configurations the planner did not price: *kind* is ``invalid`` (a setting refused, the search not
    expanded below it: one count for its whole branch), ``memory`` (does not fit the GPU) or ``pruned``
    (its lower bound is no less than the N-th best step); *reason* says why, *count* how many."""

    kind: str
    reason: str
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRow(JSONFields):
    """One ranked configuration: its settings, its step as :func:`~costmodel.step.model.price_step` prices
    it, the busiest GPU's memory, MFU, and what it loses to the best (*behind_s*, and as a share of the best
    step, *behind*)."""

    rank: int
    config: StepConfig
    result: StepResult
    step_s: Fraction
    memory_bytes: Fraction
    mfu: Fraction | None
    behind_s: Fraction
    behind: Fraction

    def settings(self) -> dict[str, Any]:
        """The settings the planner chose, by name."""
        return {d.name: getattr(self.config, d.name) for d in DIMENSIONS}

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        parts = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "bubble_s", "pp_exposed_s",
                 "dp_exposed_s", "contention_s", "expert_dp_s", "optimizer_s", "param_gather_s")
        split = None if self.config.stage_layers is None else list(self.config.stage_layers)
        return {"rank": self.rank, **self.settings(), "stage_layers": split, "framework": r.framework,
                "step_s": real(self.step_s),
                "memory_bytes": real(self.memory_bytes), "mfu": None if self.mfu is None else real(self.mfu),
                "behind_s": real(self.behind_s), "behind": real(self.behind),
                "tokens_per_s": None if r.tokens_per_s is None else real(r.tokens_per_s),
                "breakdown": {p: real(getattr(r, p)) for p in parts}}


@dataclass(frozen=True, slots=True)
class PlanPoint(JSONFields):
    """A priced configuration on the frontier plot: its step, the busiest GPU's memory, whether no other
    priced configuration is both faster and smaller (*pareto*), and whether it is one of the rows."""

    label: str
    step_s: Fraction
    memory_bytes: Fraction
    pareto: bool
    ranked: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan(JSONFields):
    """The ranked configurations of a model on a machine (see the module notes).

    *considered* counts every configuration the table led to (a branch refused at a setting counts once);
    *refused* says why the others were not priced; *fitting* is how many fit in memory, *priced* how
    many were priced, *bounded* how many needed their pipeline bound.  *points* are the priced
    configurations (the frontier of step time against memory).
    """

    gpu: str
    nodes: int
    gpus_per_node: int
    gpus: int
    global_batch: int
    sequence: int
    micro_batch_sizes: tuple[int, ...]
    framework: str
    top: int
    rows: tuple[PlanRow, ...]
    considered: int
    fitting: int
    bounded: int
    priced: int
    refused: tuple[Refusal, ...]
    bound: str
    exact: bool
    points: tuple[PlanPoint, ...]
    notes: tuple[str, ...] = ()
    sources: tuple[Any, ...] = _SOURCES

    @property
    def best(self) -> PlanRow:
        return self.rows[0]

    @property
    def title(self) -> str:
        return (f"Plan: {self.gpus} × {self.gpu}, global batch {self.global_batch}: {self.priced} of "
                f"{self.considered} configurations priced")

    def refused_count(self, kind: str) -> int:
        """How many configurations were refused for *kind* (``invalid``, ``memory``, ``pruned``)."""
        return sum(r.count for r in self.refused if r.kind == kind)


def _enumerate(space: Space, refused: dict[tuple[str, str], int],
               dimensions: Sequence[Dimension] = DIMENSIONS) -> Iterator[dict[str, Any]]:
    """Every complete choice of *dimensions* (depth first, in table order); a refused value is counted under
    its reason and not expanded."""
    def walk(i: int, chosen: dict[str, Any]) -> Iterator[dict[str, Any]]:
        if i == len(dimensions):
            yield dict(chosen)
            return
        d = dimensions[i]
        values = ((getattr(space.base, d.name),) if d.name in space.fixed
                  else tuple(d.candidates(space, chosen)))
        if not values:
            key = ("invalid", d.empty or f"no value of {d.name} to try")
            refused[key] = refused.get(key, 0) + 1
            return
        for value in values:
            chosen[d.name] = value
            reason = (f"{d.name} does not divide the GPUs" if d.ranks and space.gpus % _split(chosen)
                      else d.check(space, chosen))
            if reason is not None:
                refused[("invalid", reason)] = refused.get(("invalid", reason), 0) + 1
                continue
            yield from walk(i + 1, chosen)
        del chosen[d.name]

    return walk(0, {})


def _label(c: StepConfig) -> str:
    """A configuration in a few words: ``tp8 pp8 dp8 b1 int2 sel sp z1``."""
    schedule = f"int{c.chunks}" if c.schedule == "interleaved" else c.schedule
    recompute = {"selective": "sel", "full": "full"}.get(c.recompute, "")
    extra = [x for x, on in ((recompute, c.recompute != "none"),
                             ("sp", c.sequence_parallel), (f"z{c.zero}", c.zero > 0)) if on]
    ranks = [x for x, on in ((f"tp{c.tp}", True), (f"cp{c.cp}", c.cp > 1), (f"pp{c.pp}", True),
                             (f"dp{c.dp}", True), (f"ep{c.ep}", c.ep > 1)) if on]
    return " ".join([*ranks, f"b{c.micro_batch}", schedule, *extra])


def _reason(exc: InputError) -> str:
    """The first clause of a refusal, as a reason shared by configurations."""
    return str(exc).split(";")[0]


def _nearest_batches(space: Space) -> str:
    """The global batches nearest to the one given that some configuration's dp × micro-batch divides."""
    upto = next(i for i, d in enumerate(DIMENSIONS) if d.name == "dp") + 1  # the dimensions dp follows from
    steps = {chosen["dp"] * b for chosen in _enumerate(space, {}, DIMENSIONS[:upto])
             for b in space.micro_batch_sizes}
    if not steps:
        return ""
    b = space.global_batch
    below = max((b // s * s for s in steps if b // s), default=None)
    above = min(-(-b // s) * s for s in steps)
    near = [f"global_batch={x}" for x in dict.fromkeys((below, above)) if x is not None]
    return f"; nearest valid: {' or '.join(near)}"


def _pareto(points: Sequence[tuple[Fraction, Fraction]]) -> list[bool]:
    """Whether each (step, memory) point has no other at most as slow and as large and better in one."""
    order = sorted(range(len(points)), key=lambda i: (points[i][1], points[i][0]))
    front = [False] * len(points)
    fastest: Fraction | None = None
    for i in order:
        if fastest is None or points[i][0] < fastest:
            front[i] = True
            fastest = points[i][0]
    return front


_NOT_HELD = {"shape": "is an argument of its own", "gpu": "is an argument of its own",
             "allow_oom": "would rank configurations that do not fit"}
"""The settings :func:`plan` does not hold besides the derived dimensions, and why."""


def _machine(nodes: int | None, gpus: int | None) -> None:
    """One of *nodes* and *gpus*, a positive count."""
    if (nodes is None) == (gpus is None):
        raise InputError("give the machine as nodes=N or as a GPU count, one of them" if nodes is None else
                         f"nodes={nodes} and {gpus} GPUs were both given; give the machine one way")
    positive(nodes if gpus is None else gpus, "nodes" if gpus is None else "gpus")


def _micro_batches(sizes: Sequence[int] | None, held: int | None) -> tuple[int, ...]:
    """The micro-batch sizes searched: *sizes* (default 1, 2, 4), or the one *held*."""
    if held is not None:
        if sizes is not None:
            raise InputError(f"the micro-batch is held at {held} and micro_batch_sizes= lists sizes to try; "
                             "give one of them")
        return (held,)
    sizes = tuple(MICRO_BATCH_SIZES if sizes is None else sizes)
    if not sizes:
        raise InputError("micro_batch_sizes=() is empty; give the micro-batch sizes to try, e.g. (1, 2, 4)")
    for b in sizes:
        positive(b, "micro_batch_sizes")
    return sizes


def _space(shape: Any, *, gpu: Any, nodes: int | None, global_batch: int, gpus_per_node: int | None,
           micro_batch_sizes: Sequence[int] | None, top: int, fixed: dict[str, Any],
           gpus: int | None = None) -> Space:
    """The search space of :func:`plan`'s arguments, each checked."""
    if hasattr(shape, "transformer") and hasattr(shape, "settings"):  # a model's description (describe/)
        fixed = {**shape.settings, **fixed}
        shape = shape.transformer()
    _machine(nodes, gpus)
    positive(global_batch, "global_batch")
    positive(top, "top")
    for name, why in {**{d.name: d.derived for d in DIMENSIONS if d.derived}, **_NOT_HELD}.items():
        if name in fixed:
            raise InputError(f"{name}= {why}; it cannot be held for the search, drop it")
    base = StepConfig.of(shape=shape, gpu=gpu, **{"framework": "megatron", **fixed})
    if base.shape is None:
        raise InputError("plan() needs shape= (a TransformerShape)")
    sizes = _micro_batches(micro_batch_sizes, base.micro_batch if "micro_batch" in fixed else None)
    if gpus_per_node is not None:
        positive(gpus_per_node, "gpus_per_node")
    if gpus is not None:  # whole nodes, or part of one
        per = gpus_per_node or base.gpu.gpus_per_node
        if gpus < per and gpus_per_node is None:
            gpus_per_node = gpus
        elif gpus % per:
            raise InputError(f"{gpus} GPUs are not a whole number of nodes of {per} GPUs; give a multiple of "
                             f"{per}, or gpus_per_node=")
        nodes = gpus // (gpus_per_node or per)
    if gpus_per_node is not None and gpus_per_node != base.gpu.gpus_per_node:
        base = dataclasses.replace(base, gpu=dataclasses.replace(base.gpu, gpus_per_node=gpus_per_node))
    assert nodes is not None
    return Space(base=base, gpus=nodes * base.gpu.gpus_per_node, global_batch=global_batch,
                 micro_batch_sizes=tuple(sorted(set(sizes))), fixed=frozenset(fixed) - {"framework"})


def _copies(config: StepConfig) -> Callable[[Mapping[str, Any]], StepConfig]:
    """``dataclasses.replace(config, **changes)`` as a function of *changes*, made by StepConfig's
    ``__init__`` from *config*'s fields read once: replace reads and checks every field on each copy, and a
    plan copies its base once a configuration (StepConfig has no field left out of ``__init__``, so the
    two are the same)."""
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(StepConfig)}
    return lambda changes: StepConfig(**{**fields, **changes})


def _fitting(space: Space, leaves: list[dict[str, Any]], refused: dict[tuple[str, str], int]
             ) -> list[tuple[StepConfig, Fraction]]:
    """The configurations of *leaves* that fit the GPU's memory, each with its busiest device's memory (as
    :func:`~costmodel.step.model.price_step` computes it); the others counted in *refused*."""
    base = space.base
    capacity = Fraction(base.gpu.memory_bytes)
    fitting: list[tuple[StepConfig, Fraction]] = []
    smallest: Fraction | None = None
    no_fit = ("memory", f"does not fit the {base.gpu.name}'s memory")
    layers = base.shape.layers
    copy = _copies(base)
    for chosen in leaves:
        pp = chosen["pp"]
        # the fewer layers at the ends, the multi-token prediction modules counted on the last
        split: dict[str, Any] = ({"stage_layers": uneven(layers, pp, mtp=base.shape.mtp_layers)}
                                 if layers % pp and "stage_layers" not in space.fixed else {})
        config = copy({**chosen, **split})
        try:
            # the first device (the most micro-batches in flight) and the last (the logits) first: most
            # that do not fit are known from them; then of the others those that may hold the most
            memory, _ = memory_of(config, stages=sorted({0, config.pp - 1}))
            assert memory is not None
            if max(d.total_bytes for d in memory) <= capacity and config.pp > 2:
                inner, _ = memory_of(config, stages=range(1, config.pp - 1), largest=True)
                assert inner is not None
                memory += inner
        except InputError as exc:
            key = ("invalid", _reason(exc))
            refused[key] = refused.get(key, 0) + 1
            continue
        assert memory is not None
        peak = max(d.total_bytes for d in memory)
        if peak > capacity:
            refused[no_fit] = refused.get(no_fit, 0) + 1
            smallest = peak if smallest is None else min(smallest, peak)
            continue
        fitting.append((config, peak))
    if not fitting:
        from costmodel.units import format_size

        least = "" if smallest is None else f"; the smallest needs {format_size(smallest).split(' = ')[0]}"
        raise InputError(f"no configuration of {space.gpus} GPUs is valid and fits: "
                         f"{_refusals_text(refused)}{least}")
    return fitting


def plan(shape: Any, *, gpu: Any, nodes: int | None = None, global_batch: int,
         gpus_per_node: int | None = None, micro_batch_sizes: Sequence[int] | None = None, top: int = 10,
         gpus: int | None = None, **fixed: Any) -> Plan:
    """The *top* fastest configurations of *shape* on *nodes* nodes of *gpu* for *global_batch* sequences.

    Parameters
    ----------
    shape : TransformerShape or ModelDescription
        The model: a shape, or a model's description (:func:`costmodel.describe.load_model`: a preset such
        as ``"gpt-3-175b"``, a model file, or :func:`costmodel.describe.read_hf_config`), whose step
        settings (``dropout=False`` for Mixtral) are held unless *fixed* gives them.
    gpu : str or GPU
        A GPU preset's name (``costmodel gpus``) or a GPU: it prices each operation and its node network
        prices the communication (:func:`~costmodel.step.model.gpu_topology`), its memory bounds each
        configuration.
    nodes, gpus_per_node : int
        The machine: every configuration uses nodes × gpus_per_node GPUs (default: the GPU's node).
    gpus : int
        The machine as a GPU count instead of *nodes*: whole nodes of gpus_per_node, or fewer GPUs
        than a node holds (one node of them).
    global_batch : int
        Sequences per step; each configuration runs it as dp × micro-batch × micro-batches.
    micro_batch_sizes : sequence of int
        The micro-batch sizes tried (default 1, 2, 4).
    top : int
        How many configurations to rank (≥ 1).
    **fixed
        Any other setting of :class:`~costmodel.step.config.StepConfig`, held for every configuration
        (``framework`` defaults to ``"megatron"``); a setting the planner varies, given here, is held at
        that value (``tp=8``), except ``dp`` and ``microbatches``, which follow from the others.

    Raises
    ------
    InputError
        A value refused (nodes=0, an unknown GPU), a global batch that no configuration divides (naming
        the nearest that some do), or no configuration that fits in memory.

    Examples
    --------
    >>> from costmodel.step import TransformerShape
    >>> small = TransformerShape(layers=8, hidden=1024, heads=16, sequence=1024, vocabulary=32000)
    >>> p = plan(small, gpu="a100-80gb", nodes=1, global_batch=32, top=3)
    >>> len(p.rows), p.exact, p.rows[0].behind_s
    (3, True, Fraction(0, 1))
    """
    space = _space(shape, gpu=gpu, nodes=nodes, global_batch=global_batch, gpus_per_node=gpus_per_node,
                   micro_batch_sizes=micro_batch_sizes, top=top, fixed=fixed, gpus=gpus)
    base = space.base
    refused: dict[tuple[str, str], int] = {}
    leaves = list(_enumerate(space, refused))
    considered = len(leaves) + sum(refused.values())
    if not leaves and refused.get(("invalid", _BATCH)):
        raise InputError(f"global_batch={global_batch} is not a multiple of dp × micro-batch for any "
                         f"configuration of {space.gpus} GPUs{_nearest_batches(space)}")
    fitting = _fitting(space, leaves, refused)
    rows, points, counts = _search(fitting, top=top)
    for kind, count in (("pruned", counts["pruned"]),):
        if count:
            refused[(kind, "its lower bound is no less than the N-th best step")] = count
    for reason, count in counts["invalid"].items():
        refused[("invalid", reason)] = refused.get(("invalid", reason), 0) + count
    order = {"invalid": 0, "memory": 1, "pruned": 2}
    refusals = tuple(Refusal(kind, reason, count) for (kind, reason), count in
                     sorted(refused.items(), key=lambda kv: (order[kv[0][0]], -kv[1], kv[0][1])))
    notes = ("exact: every configuration not priced has a lower bound no less than the last row's step, so "
             "the rows are the fastest of all that fit (one tied with the last may be left out)",
             *dict.fromkeys(f"pp {r.config.pp} does not divide the {base.shape.layers} layers: its stages "
                            f"hold {','.join(map(str, r.config.stage_layers))}, the fewer at the ends, which "
                            "also hold the embedding and the output layer" for r in rows
                            if r.config.stage_layers is not None and "stage_layers" not in space.fixed))
    per = base.gpu.gpus_per_node
    return Plan(gpu=base.gpu.name, nodes=space.gpus // per, gpus_per_node=per, gpus=space.gpus,
                global_batch=global_batch, sequence=base.shape.sequence,
                micro_batch_sizes=space.micro_batch_sizes,
                framework=base.framework or "generic", top=top, rows=rows, considered=considered,
                fitting=len(fitting), bounded=counts["bounded"], priced=counts["priced"], refused=refusals,
                bound=BOUND, exact=True, points=points, notes=notes)


def _refusals_text(refused: Mapping[tuple[str, str], int]) -> str:
    return ", ".join(f"{reason} ({count})" for (_, reason), count in
                     sorted(refused.items(), key=lambda kv: -kv[1]))


def _search(fitting: list[tuple[StepConfig, Fraction]], *, top: int
            ) -> tuple[tuple[PlanRow, ...], tuple[PlanPoint, ...], dict[str, Any]]:
    """Branch and bound over the configurations that fit (module notes): the top rows, the priced points,
    and the counts (priced, bounded, pruned, invalid by reason)."""
    work: dict[tuple[Any, ...], Fraction] = {}
    heap: list[tuple[Fraction, int, int]] = []  # (bound, index, level): level 0 work, 1 pipeline
    invalid: dict[str, int] = {}
    for i, (config, _) in enumerate(fitting):
        key = tuple(getattr(config, d.name) for d in DIMENSIONS if d.name not in _LEVEL0_VARIES)
        if key not in work:
            try:
                work[key] = work_bound(dataclasses.replace(config, schedule="1f1b", chunks=None))
            except InputError:
                work[key] = Fraction(0)  # refused when its own bound is computed
        heap.append((work[key], i, 0))
    heapq.heapify(heap)
    best: list[tuple[Fraction, int]] = []  # the top priced so far, as a max-heap of (-step, -index)
    priced: dict[int, Fraction] = {}  # each priced configuration's step
    results: dict[int, Callable[[], StepResult]] = {}  # and its whole result, made for the rows alone
    bounded = 0
    while heap:
        bound, i, level = heap[0]
        if len(best) >= top and bound >= -best[0][0]:
            break
        heapq.heappop(heap)
        config = fitting[i][0]
        try:
            if level == 0:
                bounded += 1
                heapq.heappush(heap, (max(bound, lower_bound(config).step_s), i, 1))
                continue
            priced[i], results[i] = step_time(config)
        except InputError as exc:
            invalid[_reason(exc)] = invalid.get(_reason(exc), 0) + 1
            continue
        heapq.heappush(best, (-priced[i], -i))
        if len(best) > top:
            heapq.heappop(best)
    if not priced:
        raise InputError("no configuration that fits could be priced: "
                         + ", ".join(f"{reason} ({count})" for reason, count in invalid.items()))
    ranked = sorted(priced, key=lambda k: (priced[k], k))[:top]
    first = priced[ranked[0]]
    shown = {k: results[k]() for k in ranked}
    rows = tuple(PlanRow(rank=n + 1, config=fitting[k][0], result=shown[k], step_s=priced[k],
                         memory_bytes=fitting[k][1], mfu=shown[k].mfu, behind_s=priced[k] - first,
                         behind=(priced[k] - first) / first) for n, k in enumerate(ranked))
    keys = sorted(priced)
    front = _pareto([(priced[k], fitting[k][1]) for k in keys])
    points = tuple(PlanPoint(label=_label(fitting[k][0]), step_s=priced[k], memory_bytes=fitting[k][1],
                             pareto=on, ranked=k in shown) for k, on in zip(keys, front, strict=True))
    return rows, points, {"priced": len(priced), "bounded": bounded, "pruned": len(heap), "invalid": invalid}
