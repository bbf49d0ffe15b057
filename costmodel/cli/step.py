"""The ``step`` command: one training step of dp × tp × pp devices, its breakdown, overlap and MFU.

It parses the options, makes one call to :func:`costmodel.step.step` and emits the
:class:`~costmodel.step.StepResult`, whose human rendering is declared here; rich loads only
when it runs.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli import complete
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Alpha, Bandwidth, Beta, Json, Levels, Profile, option, value_parser
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.cli.shape import (
    SHAPE_PANEL,
    Ffn,
    Heads,
    Hidden,
    KvGroups,
    Layers,
    MicroBatch,
    Peak,
    Seq,
    Vocab,
    parse_count,
    transformer_shape,
)
from costmodel.units import format_number, format_size, format_time, parse_size, parse_time

if TYPE_CHECKING:
    from costmodel.step import StepResult, StepSweep

__all__ = ["StepOptions", "app", "parse_sweep", "render_step", "render_sweep"]

app = typer.Typer()

_PAR = "Parallelism"
_TIMES = "Model: per-layer times"
_COMM = "Communication"
_LINKS = "Link"
_SWEEP = "Sweep"

#: Buckets tables longer than this are left out of the human output (the JSON has them).
MAX_BUCKET_ROWS = 12


_time = value_parser(parse_time, require_unit=True)
_size = value_parser(parse_size)


def _per_layer(parse: Any, **kwargs: Any) -> Any:
    """One value for every layer, or a comma-separated list with one per layer: ``2ms`` or ``1ms,2ms``."""
    def each(text: str) -> tuple[Fraction, ...]:
        return tuple(parse(part, **kwargs) for part in text.split(","))

    return value_parser(each)


def _link_of(text: str) -> Any:
    from costmodel.links import link_of

    return link_of(text)


def _link_option(name: str, help: str) -> Any:
    return option(name, metavar="NAME|FILE|ALPHA:RATE", panel=_LINKS, autocompletion=complete.profiles,
                  parser=value_parser(_link_of), help=help)


# The options of a step, declared once: `costmodel step` and `costmodel plot step` take them all.
Dp = Annotated[int, option("--dp", metavar="D", panel=_PAR, help="Data-parallel replicas (≥ 1).")]
Tp = Annotated[int, option("--tp", metavar="T", panel=_PAR,
                         help="Tensor-parallel ranks per layer (≥ 1; divides --heads).")]
Pp = Annotated[int, option("--pp", metavar="P", panel=_PAR,
                         help="Pipeline stages (≥ 1; at most the layers, dividing them).")]
Microbatches = Annotated[int, option("-m", "--microbatches", metavar="M", panel=_PAR,
                                   help="Micro-batches per replica per step (≥ 1).")]
Schedule = Annotated[str, option("--schedule", "-s", metavar="NAME", panel=_PAR,
                                 autocompletion=complete.schedules,
                                 help="Pipeline schedule: gpipe, 1f1b (default), interleaved, zb-h1.")]
Chunks = Annotated[int | None, option("-v", "--chunks", metavar="V", panel=_PAR,
                                    help="Model chunks per device, interleaved only (default 2).")]
Recompute = Annotated[str, option("--recompute", metavar="MODE", panel=_PAR,
                                  help="none (default) or full activation recomputation.")]
Efficiency = Annotated[str, option("--efficiency", metavar="E", panel=SHAPE_PANEL,
                                   help="Achieved share of --peak, 0 < E ≤ 1 (default 1).")]
_times = _per_layer(parse_time, require_unit=True)
Forward = Annotated[Any, option(
    "--forward", "-F", metavar="TIME[,TIME...]", panel=_TIMES, parser=_times,
    help="Forward time of a layer per micro-batch, or one per layer: 2ms or 1ms,2ms,2ms,1ms.")]
Backward = Annotated[Any, option(
    "--backward", "-b", metavar="TIME[,TIME...]", panel=_TIMES, parser=_times,
    help="Backward time of a layer, or one per layer: 4ms.")]
GradientBytes = Annotated[Any, option(
    "--gradient-bytes", metavar="SIZE[,SIZE...]", panel=_TIMES, parser=_per_layer(parse_size),
    help="Gradient of a layer on one rank, or one per layer (needed with --dp > 1): 50MB.")]
ActivationBytes = Annotated[Fraction | None, option(
    "--activation-bytes", metavar="SIZE", panel=_TIMES, parser=_size,
    help="Activation tensor of a micro-batch (needed with --tp or --pp > 1): 8MiB.")]
Tokens = Annotated[int | None, option("--tokens", metavar="N", panel=_TIMES, parser=value_parser(parse_count),
                                      help="Tokens per micro-batch, for tokens/s.")]
Buckets = Annotated[str, option("--buckets", metavar="RULE", panel=_COMM,
                                help="Gradient buckets: ddp (default), megatron, deepspeed.")]
BucketSize = Annotated[Fraction | None, option("--bucket-size", metavar="SIZE", panel=_COMM, parser=_size,
                                               help="Bucket size (default: the framework's; DDP 25MiB).")]
Zero = Annotated[str, option("--zero", metavar="STAGE", panel=_COMM,
                             help="ZeRO stage 0 (default), 1, 2, 3 or fsdp (= 3; needs --pp 1).")]
Prefetch = Annotated[int | None, option("--prefetch", metavar="N", panel=_COMM,
                                        help="ZeRO 3: layers all-gathered ahead of compute (default 1).")]
ParamGather = Annotated[str, option("--param-gather", metavar="WHEN", panel=_COMM,
                                    help="ZeRO 1/2: gather the parameters after the optimizer (default) "
                                         "or overlap them with the next forward (Megatron's).")]
Slowdown = Annotated[str, option("--slowdown", metavar="U", panel=_COMM,
                                 help="Share of compute speed lost while DP communication runs "
                                      "(0 ≤ U < 1; default 0).")]
Optimizer = Annotated[Fraction | None, option("--optimizer", metavar="TIME", panel=_COMM, parser=_time,
                                              help="Optimizer step after the last reduction.")]
Algorithm = Annotated[str, option("--algorithm", metavar="ALGO", panel=_COMM,
                                  help="All-reduce algorithm of TP and DP (default ring).")]
TpLink = Annotated[Any, _link_option("--tp-link", "Link of the tensor-parallel all-reduces: a profile or "
                                                  "2us:300GB/s (default: the link).")]
PpLink = Annotated[Any, _link_option("--pp-link", "Link of the pipeline sends (default: the link).")]
DpLink = Annotated[Any, _link_option("--dp-link",
                                     "Link of the data-parallel collectives (default: the link).")]
Order = Annotated[str, option("--order", metavar="DIMS", panel=_LINKS,
                              help="With --level: the rank order, innermost first (default tp-dp-pp, "
                                   "Megatron's).")]
Sweep = Annotated[str | None, option(
    "--sweep", metavar="KNOB=VALUES", panel=_SWEEP,
    help="Vary one knob, the rest fixed: bucket-size, dp, tp, pp, microbatches, micro-batch, schedule, "
         "chunks, efficiency, profile, dp-link, tp-link, pp-link, zero, prefetch, param-gather, slowdown. "
         "VALUES: 1,2,4 "
         "or ranges 1..64x2 (×2 each) and 4..32+4 (+4 each).")]


@dataclass(frozen=True)
class StepOptions:
    """The options of a step as given (None: not given), read into :func:`costmodel.step.step`'s arguments."""

    dp: int
    tp: int
    pp: int
    microbatches: int
    schedule: str
    chunks: int | None
    recompute: str
    layers: int | None
    hidden: int | None
    heads: int | None
    seq: int | None
    vocab: int | None
    ffn: str | None
    kv_groups: int | None
    micro_batch: int
    peak: int | None
    efficiency: str
    forward: tuple[Fraction, ...] | None
    backward: tuple[Fraction, ...] | None
    gradient_bytes: tuple[Fraction, ...] | None
    activation_bytes: Fraction | None
    tokens: int | None
    buckets: str
    bucket_size: Fraction | None
    zero: str
    prefetch: int | None
    param_gather: str
    slowdown: str
    optimizer: Fraction | None
    algorithm: str
    alpha: Fraction | None
    beta: Fraction | None
    bandwidth: Fraction | None
    profile: str | None
    tp_link: Any
    pp_link: Any
    dp_link: Any
    levels: list[Any] | None
    order: str

    given: frozenset[str] = frozenset()

    @classmethod
    def of(cls, arguments: dict[str, Any], ctx: typer.Context) -> StepOptions:
        """The options among a command's *arguments* (``locals()`` of the command, first thing); *ctx*
        tells which were given on the command line."""
        defaults = ("DEFAULT", "DEFAULT_MAP")
        given = frozenset(n for n in ctx.params
                          if getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in defaults)
        return cls(**{f.name: arguments[f.name] for f in fields(cls) if f.name != "given"}, given=given)

    def arguments(self, sweep: Any = None) -> dict[str, Any]:
        """The keyword arguments of :func:`costmodel.step.step`, every option checked.

        *sweep*: the :class:`~costmodel.step.sweep.Knob` and values swept, whose argument is left
        out (an option that sets it too is an error).
        """

        knob, values = sweep if sweep is not None else (None, ())
        swept = "" if knob is None else knob.name
        if knob is not None:
            _not_also_given(knob, self.given)
        layers, shape = _model(self, shape_swept=knob is not None and knob.shape_only, swept=swept)
        link, topology = _machine(self, swept=swept, sizes={
            kind: max(values) if swept == kind else getattr(self, kind) for kind in ("tp", "pp", "dp")})

        def every(values: tuple[Fraction, ...] | None) -> list[Fraction] | None:
            return None if values is None else list(values) * (layers if len(values) == 1 else 1)

        per_layer: dict[str, Any] = {} if shape is not None else {
            "forward_s": every(self.forward), "backward_s": every(self.backward),
            "gradient_bytes": every(self.gradient_bytes), "activation_bytes": self.activation_bytes,
            "tokens": self.tokens}
        arguments = dict(
            dp=self.dp, tp=self.tp, pp=self.pp, microbatches=self.microbatches, schedule=self.schedule,
            chunks=self.chunks, recompute=self.recompute, shape=shape, micro_batch=self.micro_batch,
            peak_flops=self.peak, efficiency=self.efficiency, link=link, tp_link=self.tp_link,
            pp_link=self.pp_link, dp_link=self.dp_link, topology=topology, order=self.order,
            buckets=self.buckets, bucket_bytes=self.bucket_size, zero=self.zero, prefetch=self.prefetch,
            param_gather=self.param_gather, slowdown=self.slowdown,
            optimizer_s=0 if self.optimizer is None else self.optimizer, algorithm=self.algorithm,
            **per_layer)
        if knob is not None:
            del arguments[knob.parameter]
        return arguments


def _model(o: StepOptions, *, shape_swept: bool, swept: str) -> tuple[int, Any]:
    """The layer count and the transformer shape (``None`` with per-layer times), checked."""
    from costmodel.errors import InputError
    from costmodel.exact import parse_number
    from costmodel.validate import positive

    lists = {"--forward": o.forward, "--backward": o.backward, "--gradient-bytes": o.gradient_bytes}
    counted = {name: len(v) for name, v in lists.items() if v is not None and len(v) > 1}
    layers = o.layers
    if layers is None and counted:
        layers = next(iter(counted.values()))
    if layers is None:
        raise InputError("no --layers given; pass --layers L with a shape (--hidden H ...) or with "
                         "--forward TIME")
    positive(layers, "layers")
    for name, count in counted.items():
        if count != layers:
            raise InputError(f"{name} lists {count} values for {layers} layers; give one value, or one "
                             "per layer")
    shape = transformer_shape(layers=layers, hidden=o.hidden, heads=o.heads, seq=o.seq, vocab=o.vocab,
                              ffn=o.ffn, kv_groups=o.kv_groups)
    if shape is not None and (o.forward is not None or o.backward is not None):
        raise InputError("both a shape (--hidden H ...) and per-layer times (--forward TIME) were given; "
                         "pass one model")
    if shape is not None and o.peak is None:
        raise InputError("a transformer shape needs --peak FLOP/S (e.g. 312T) to price its compute")
    if shape is None and (o.peak is not None or o.efficiency != "1" or o.micro_batch != 1
                          or o.ffn is not None or o.kv_groups is not None or shape_swept):
        also = f" and --sweep {swept}" if shape_swept else ""
        raise InputError(f"--peak, --efficiency, --micro-batch, --ffn and --kv-groups{also} describe a "
                         "transformer shape; with --forward/--backward leave them out")
    if not 0 < parse_number(o.efficiency, what="an efficiency") <= 1:
        raise InputError(f"--efficiency {o.efficiency} is not a share of --peak; give 0 < E ≤ 1, e.g. 0.5")
    if shape is None and (o.forward is None or o.backward is None):
        raise InputError("no model given; pass a shape (--hidden --heads --seq --vocab --peak) or "
                         "--forward TIME and --backward TIME")
    return layers, shape


def _machine(o: StepOptions, *, swept: str, sizes: dict[str, int]) -> tuple[Any, Any]:
    """The one link, or the topology of levels, that prices what has no link of its own."""
    from costmodel.errors import InputError
    from costmodel.links import resolve_link, topology_from_options
    from costmodel.profiles import load_profile

    link: Any = None
    topology: Any = None
    options = (o.alpha, o.beta, o.bandwidth)
    if any(v is not None for v in (*options, o.profile)):
        if o.levels:
            raise InputError("--level and a link (--alpha, --beta, --bandwidth, --profile) were both given; "
                             "describe the machine by its levels or by one link")
        profile = None if o.profile is None else load_profile(o.profile)
        if profile is not None and all(v is None for v in options) and profile.levels:
            topology = topology_from_options(profile=profile)  # a machine's levels: place the groups
        elif profile is not None and all(v is None for v in options):
            link = profile  # priced per collective, on each one's calibrated segments
        else:
            link = resolve_link("allreduce", alpha=o.alpha, beta=o.beta, bandwidth=o.bandwidth,
                                profile=profile)
    elif o.levels:
        topology = topology_from_options(levels=o.levels)
    for kind, size in sizes.items():
        own = getattr(o, f"{kind}_link")
        if (size > 1 and own is None and link is None and topology is None
                and swept not in (f"{kind}-link", "profile")):
            raise InputError(f"--{kind} {size} communicates but no link was given; pass --alpha TIME with "
                             f"--beta TIME/B or --bandwidth RATE, --profile NAME, --level SIZE:ALPHA:RATE "
                             f"per level, or --{kind}-link ALPHA:RATE")
    return link, topology


def _not_also_given(knob: Any, given: frozenset[str]) -> None:
    """An error when an option given sets what *knob* sweeps (``--dp 8 --sweep dp=...``)."""
    from costmodel.errors import InputError

    own = knob.name.replace("-", "_")
    for name in ("alpha", "beta", "bandwidth", "profile") if knob.name == "profile" else (own,):
        if name in given:
            option = name.replace("_", "-")
            raise InputError(f"--{option} is given and --sweep {knob.name}=... varies it; "
                             f"drop --{option} or sweep another knob")


def parse_sweep(text: str) -> tuple[Any, tuple[Any, ...]]:
    """``KNOB=VALUES`` as the knob and its values (:func:`costmodel.step.sweep.parse_values`)."""
    from costmodel.errors import InputError
    from costmodel.step.sweep import knob, parse_values

    name, equals, values = text.partition("=")
    if not equals or not name.strip():
        raise InputError(f"--sweep {text!r} is not KNOB=VALUES; e.g. --sweep dp=1,2,4,8 or "
                         "--sweep bucket-size=1MiB..256MiBx4")
    k = knob(name)
    return k, parse_values(k.name, values)


@app.command("step")
def step_command(
    ctx: typer.Context,
    dp: Dp = 1, tp: Tp = 1, pp: Pp = 1, microbatches: Microbatches = 1, schedule: Schedule = "1f1b",
    chunks: Chunks = None, recompute: Recompute = "none",
    layers: Layers = None, hidden: Hidden = None, heads: Heads = None, seq: Seq = None, vocab: Vocab = None,
    ffn: Ffn = None, kv_groups: KvGroups = None, micro_batch: MicroBatch = 1, peak: Peak = None,
    efficiency: Efficiency = "1",
    forward: Forward = None, backward: Backward = None, gradient_bytes: GradientBytes = None,
    activation_bytes: ActivationBytes = None, tokens: Tokens = None,
    buckets: Buckets = "ddp", bucket_size: BucketSize = None, zero: Zero = "0", prefetch: Prefetch = None,
    param_gather: ParamGather = "after", slowdown: Slowdown = "0", optimizer: Optimizer = None,
    algorithm: Algorithm = "ring",
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    tp_link: TpLink = None, pp_link: PpLink = None, dp_link: DpLink = None, levels: Levels = None,
    order: Order = "tp-dp-pp",
    sweep: Sweep = None,
    as_json: Json = False,
) -> None:
    """Price one training step: compute, TP all-reduces, pipeline bubble and sends, bucketed DP reduction.

    The model is a transformer shape (--layers --hidden --heads --seq --vocab with --peak) or
    per-layer times (--forward --backward --layers). The DP gradient reduction runs in buckets
    overlapped with the backward pass; the step is split exactly into its parts. With --sweep
    KNOB=VALUES, one step per value, as a table with the best marked.

    Example: costmodel step --dp 4 --layers 8 -F 2ms -b 4ms --gradient-bytes 50MB --profile ib-hdr

    Example: costmodel step --pp 4 -m 8 --layers 8 -F 2ms -b 4ms --activation-bytes 8MiB --profile ib-hdr

    Example: costmodel step --layers 8 -F 2ms -b 4ms --gradient-bytes 50MB --profile ib-hdr --sweep dp=1..8x2
    """
    options = StepOptions.of(locals(), ctx)
    if sweep is None:
        from costmodel.step import step

        emit(step(**options.arguments()), as_json=as_json)
        return
    from costmodel.step import sweep_step

    knob, values = parse_sweep(sweep)
    emit(sweep_step(knob.name, values, **options.arguments((knob, values))), as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _collectives(r: StepResult) -> str:
    """What the critical device's gradient traffic was: ``8 all-reduces of ddp buckets``."""
    after = r.param_gather == "after"  # the parameter all-gathers then follow the optimizer
    issued = [x.collective for x in r.communication[r.dp_stage]
              if not (after and x.label.startswith("params"))]
    words = {"allreduce": "all-reduce", "allgather": "all-gather", "reduce-scatter": "reduce-scatter"}
    counts = [f"{issued.count(c)} {w}{'s' if issued.count(c) > 1 else ''}"
              for c, w in words.items() if c in issued]
    return ", ".join(counts) + (f" of {r.bucket_rule} buckets" if r.zero < 3 else " of layers")


def _share(part: Fraction, whole: Fraction) -> str:
    return "—" if not whole else f"{format_number(100 * part / whole, digits=3)}%"


@renders("costmodel.step.model.StepResult")
def render_step(r: StepResult) -> Rendered:
    """The heading, the breakdown of the step, DP overlap, throughput and the buckets of a step."""
    from rich.console import Group
    from rich.text import Text

    chunks = f" · v = {r.chunks}" if r.chunks > 1 else ""
    recompute = " · full recomputation" if r.recompute == "full" else ""
    zero = f" · ZeRO {r.zero}" if r.zero else ""
    if r.zero in (1, 2) and r.param_gather == "overlap":
        zero += ", overlapped gather"
    gpus = f"{r.gpus} GPU{'s' if r.gpus > 1 else ''}"
    head = markup(f"[bold]step[/bold] · dp {r.dp} × tp {r.tp} × pp {r.pp} = {gpus} · "
                  f"{r.schedule}{chunks} · M = {r.microbatches}{recompute}{zero}\n"
                  f"[bold]{format_time(r.step_s)}[/bold] per step")
    parts = table("part", "time", "share", numeric=("time", "share"))
    parts_rows = [("compute", r.compute_s), ("TP communication", r.tp_comm_s),
                  ("pipeline bubble", r.bubble_s), ("exposed PP sends", r.pp_exposed_s),
                  ("exposed DP communication", r.dp_exposed_s)]
    if r.slowdown:
        parts_rows.append(("compute slowdown", r.contention_s))
    parts_rows.append(("optimizer", r.optimizer_s))
    if r.zero in (1, 2) and r.dp > 1 and r.param_gather == "after":
        parts_rows.append(("parameter all-gather", r.param_gather_s))
    for name, value in parts_rows:
        parts.add_row(name, format_time(value), _share(value, r.step_s))
    parts.add_row("step", format_time(r.step_s), "100%")
    summary = table("quantity", "value", header=False)
    if r.dp > 1:
        summary.add_row("DP communication",
                        f"{format_time(r.dp_comm_s)} on stage {r.dp_stage}: {_collectives(r)}")
        summary.add_row("  hidden", f"{format_time(r.dp_hidden_s)} ({_share(r.dp_hidden_s, r.dp_comm_s)})")
        summary.add_row("  exposed", f"{format_time(r.dp_exposed_s)} ({_share(r.dp_exposed_s, r.dp_comm_s)})")
    if r.tokens_per_s is not None:
        summary.add_row("tokens/s", format_number(r.tokens_per_s))
    if r.mfu is not None:
        summary.add_row("MFU", _share(r.mfu, Fraction(1)))
    if r.memory is not None:
        top = max(r.memory, key=lambda d: d.total_bytes)
        unit = f"{'chunk-' if r.chunks > 1 else ''}micro-batch{'es' if top.inflight > 1 else ''}"
        where = f" (stage {top.stage})" if r.pp > 1 else ""
        summary.add_row("memory per GPU", format_size(top.total_bytes) + where)
        summary.add_row("  model states", format_size(top.model_state_bytes))
        summary.add_row("  activations", f"{format_size(top.activation_bytes)} ({top.inflight} {unit})")
    summary.add_row("scaling efficiency", f"{_share(r.scaling_efficiency, Fraction(1))} (against dp = 1)")
    drawn: list[Any] = [head, Text(""), parts, Text(""), summary]
    notes = list(r.notes)
    rows = r.buckets
    if r.dp > 1 and len(rows) <= MAX_BUCKET_ROWS:
        columns = ("bucket" if r.zero < 3 else "layer", "size", "ready", "start", "end", "exposed")
        buckets = table(*columns, numeric=columns)
        for b in rows:
            buckets.add_row(str(b.index if r.zero < 3 else b.layers[0]), format_size(b.bytes),
                            format_time(b.ready_s), format_time(b.start_s), format_time(b.end_s),
                            format_time(b.exposed_s))
        last = " in the last micro-batch" if r.zero >= 2 and r.microbatches > 1 else ""
        what = "DP buckets" if r.zero < 3 else "DP reduce-scatters"
        drawn += [Text(""), Text(f"{what} of stage {r.dp_stage}{last}, times from the step's start",
                                 style="dim"), buckets]
    elif r.dp > 1:
        notes.append(f"buckets table left out: {len(rows)} buckets; --json lists them")
    return Group(*drawn), tuple(notes)


def _best_by(r: StepSweep) -> str:
    """What made the best point best, in words: with the same work on the same GPUs, its speed."""
    if r.same_work:
        return "the fastest step"
    return "the most tokens/s per GPU" if r.by_tokens else "the most micro-batches per GPU-second"


@renders("costmodel.step.sweep.StepSweep")
def render_sweep(r: StepSweep) -> Rendered:
    """A row per value of the knob (the best marked), the configuration of the best above."""
    from rich.console import Group
    from rich.text import Text

    from costmodel.step.sweep import format_value

    best = r.best_point
    b = best.result
    assert b is not None and best.step_s is not None
    chunks = f" · v = {b.chunks}" if b.chunks > 1 else ""
    head = markup(f"[bold]step sweep[/bold] of {r.knob} · {len(r.points)} values\n"
                  f"best: {r.knob} = {format_value(best.value, r.kind)} ({_best_by(r)}), "
                  f"[bold]{format_time(best.step_s)}[/bold] per step\n"
                  f"  dp {b.dp} × tp {b.tp} × pp {b.pp} = {b.gpus} GPU{'s' if b.gpus > 1 else ''} · "
                  f"{b.schedule}{chunks} · M = {b.microbatches}")
    columns = (r.knob, "step", "compute", "DP added", "bubble", "tokens/s", "MFU", "scaling", "")
    numeric = columns[1:-1] if r.kind == "name" else columns[:-1]
    rows = table(*columns, numeric=numeric, no_wrap=True, optional=("compute", "bubble", "tokens/s"))
    for i, p in enumerate(r.points):
        value = format_value(p.value, r.kind)
        if p.step_s is None:
            rows.add_row(value, "skipped", "", "", "", "", "", "", "")
            continue
        assert p.compute_s is not None and p.data_parallel_s is not None and p.bubble_s is not None
        rows.add_row(value, format_time(p.step_s), format_time(p.compute_s), format_time(p.data_parallel_s),
                     format_time(p.bubble_s),
                     "—" if p.tokens_per_s is None else format_number(p.tokens_per_s),
                     "—" if p.mfu is None else _share(p.mfu, Fraction(1)),
                     _share(p.scaling_efficiency or Fraction(0), Fraction(1)), "best" if i == r.best else "")
    notes = ("DP added: exposed data-parallel communication, compute slowdown and ZeRO's parameter "
             "all-gather", "scaling: the step with dp = 1 over the step (weak scaling)", *r.notes)
    return Group(head, Text(""), rows), notes
