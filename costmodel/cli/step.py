"""The ``step`` command: one training step of dp × tp × pp devices, its breakdown, overlap and MFU.

It parses the options, makes one call to :func:`costmodel.step.step` and emits the
:class:`~costmodel.step.StepResult`, whose human rendering is declared here; rich loads only
when it runs.
"""

from __future__ import annotations

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
    from costmodel.step import StepResult

__all__ = ["app", "render_step"]

app = typer.Typer()

_PAR = "Parallelism"
_TIMES = "Model: per-layer times"
_COMM = "Communication"
_LINKS = "Link"

#: Buckets tables longer than this are left out of the human output (the JSON has them).
MAX_BUCKET_ROWS = 12


def _int(*names: str, metavar: str, help: str, panel: str) -> Any:
    return option(*names, metavar=metavar, panel=panel, help=help)


_time = value_parser(parse_time, require_unit=True)
_size = value_parser(parse_size)


def _per_layer(parse: Any, **kwargs: Any) -> Any:
    """One value for every layer, or a comma-separated list with one per layer: ``2ms`` or ``1ms,2ms``."""
    def each(text: str) -> tuple[Fraction, ...]:
        return tuple(parse(part, **kwargs) for part in text.split(","))

    return value_parser(each)


def _link_text(text: str) -> Any:
    """A link given as ``ALPHA:RATE`` (``2us:300GB/s``), or a profile's name or file."""
    from costmodel.links import resolve_link
    from costmodel.topology import parse_link

    if (":" in text or text[:1].isdigit()) and not text.lower().endswith(".toml"):
        return parse_link(text)
    return resolve_link("allreduce", profile=text)


def _model(layers: int | None, *, forward: tuple[Fraction, ...] | None, backward: tuple[Fraction, ...] | None,
           gradient_bytes: tuple[Fraction, ...] | None, shape_options: dict[str, Any], peak: int | None,
           efficiency: str, micro_batch: int) -> tuple[int, Any]:
    """The layer count and the transformer shape (``None`` with per-layer times), checked."""
    from costmodel.errors import InputError
    from costmodel.exact import parse_number
    from costmodel.validate import positive

    lists = {"--forward": forward, "--backward": backward, "--gradient-bytes": gradient_bytes}
    counted = {name: len(v) for name, v in lists.items() if v is not None and len(v) > 1}
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
    shape = transformer_shape(layers=layers, **shape_options)
    if shape is not None and (forward is not None or backward is not None):
        raise InputError("both a shape (--hidden H ...) and per-layer times (--forward TIME) were given; "
                         "pass one model")
    if shape is not None and peak is None:
        raise InputError("a transformer shape needs --peak FLOP/S (e.g. 312T) to price its compute")
    if shape is None and (peak is not None or efficiency != "1" or micro_batch != 1
                          or shape_options["ffn"] is not None or shape_options["kv_groups"] is not None):
        raise InputError("--peak, --efficiency, --micro-batch, --ffn and --kv-groups describe a transformer "
                         "shape; with --forward/--backward leave them out")
    if not 0 < parse_number(efficiency, what="an efficiency") <= 1:
        raise InputError(f"--efficiency {efficiency} is not a share of --peak; give 0 < E ≤ 1, e.g. 0.5")
    if shape is None and (forward is None or backward is None):
        raise InputError("no model given; pass a shape (--hidden --heads --seq --vocab --peak) or "
                         "--forward TIME and --backward TIME")
    return layers, shape


def _machine(*, alpha: Any, beta: Any, bandwidth: Any, profile: Any, levels: list[Any] | None,
             own: dict[str, tuple[int, Any]]) -> tuple[Any, Any]:
    """The one link, or the topology of levels, that prices what has no link of its own."""
    from costmodel.errors import InputError
    from costmodel.links import resolve_link, topology_from_options

    link = topology = None
    if any(v is not None for v in (alpha, beta, bandwidth, profile)):
        if levels:
            raise InputError("--level and a link (--alpha, --beta, --bandwidth, --profile) were both given; "
                             "describe the machine by its levels or by one link")
        link = resolve_link("allreduce", alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    elif levels:
        topology = topology_from_options(levels=levels)
    for kind, (size, given) in own.items():
        if size > 1 and given is None and link is None and topology is None:
            raise InputError(f"--{kind} {size} communicates but no link was given; pass --alpha TIME with "
                             f"--beta TIME/B or --bandwidth RATE, --profile NAME, --level SIZE:ALPHA:RATE "
                             f"per level, or --{kind}-link ALPHA:RATE")
    return link, topology


@app.command("step")
def step_command(
    dp: Annotated[int, _int("--dp", metavar="D", panel=_PAR, help="Data-parallel replicas (≥ 1).")] = 1,
    tp: Annotated[int, _int("--tp", metavar="T", panel=_PAR,
                            help="Tensor-parallel ranks per layer (≥ 1; divides --heads).")] = 1,
    pp: Annotated[int, _int("--pp", metavar="P", panel=_PAR,
                            help="Pipeline stages (≥ 1; at most the layers, dividing them).")] = 1,
    microbatches: Annotated[int, _int("-m", "--microbatches", metavar="M", panel=_PAR,
                                      help="Micro-batches per replica per step (≥ 1).")] = 1,
    schedule: Annotated[str, option(
        "--schedule", "-s", metavar="NAME", panel=_PAR, autocompletion=complete.schedules,
        help="Pipeline schedule: gpipe, 1f1b (default), interleaved, zb-h1.")] = "1f1b",
    chunks: Annotated[int | None, _int("-v", "--chunks", metavar="V", panel=_PAR,
                                       help="Model chunks per device, interleaved only (default 2).")] = None,
    recompute: Annotated[str, option("--recompute", metavar="MODE", panel=_PAR,
                                     help="none (default) or full activation recomputation.")] = "none",
    layers: Layers = None, hidden: Hidden = None, heads: Heads = None, seq: Seq = None, vocab: Vocab = None,
    ffn: Ffn = None, kv_groups: KvGroups = None, micro_batch: MicroBatch = 1, peak: Peak = None,
    efficiency: Annotated[str, option("--efficiency", metavar="E", panel=SHAPE_PANEL,
                                      help="Achieved share of --peak, 0 < E ≤ 1 (default 1).")] = "1",
    forward: Annotated[Any, option(
        "--forward", "-F", metavar="TIME[,TIME...]", panel=_TIMES,
        parser=_per_layer(parse_time, require_unit=True),
        help="Forward time of a layer per micro-batch, or one per layer: 2ms or 1ms,2ms,2ms,1ms.")] = None,
    backward: Annotated[Any, option(
        "--backward", "-b", metavar="TIME[,TIME...]", panel=_TIMES,
        parser=_per_layer(parse_time, require_unit=True),
        help="Backward time of a layer, or one per layer: 4ms.")] = None,
    gradient_bytes: Annotated[Any, option(
        "--gradient-bytes", metavar="SIZE[,SIZE...]", panel=_TIMES, parser=_per_layer(parse_size),
        help="Gradient of a layer on one rank, or one per layer (needed with --dp > 1): 50MB.")] = None,
    activation_bytes: Annotated[Fraction | None, option(
        "--activation-bytes", metavar="SIZE", panel=_TIMES, parser=_size,
        help="Activation tensor of a micro-batch (needed with --tp or --pp > 1): 8MiB.")] = None,
    tokens: Annotated[int | None, option("--tokens", metavar="N", panel=_TIMES,
                                         parser=value_parser(parse_count),
                                         help="Tokens per micro-batch, for tokens/s.")] = None,
    buckets: Annotated[str, option("--buckets", metavar="RULE", panel=_COMM,
                                   help="Gradient buckets: ddp (default), megatron, deepspeed.")] = "ddp",
    bucket_size: Annotated[Fraction | None, option(
        "--bucket-size", metavar="SIZE", panel=_COMM, parser=_size,
        help="Bucket size (default: the framework's; DDP 25MiB).")] = None,
    zero: Annotated[str, option("--zero", metavar="STAGE", panel=_COMM,
                                help="ZeRO stage 0 (default), 1, 2, 3 or fsdp (= 3; needs --pp 1).")] = "0",
    prefetch: Annotated[int | None, option("--prefetch", metavar="N", panel=_COMM,
                                           help="ZeRO 3: layers all-gathered ahead of compute (default 1).")
                        ] = None,
    slowdown: Annotated[str, option("--slowdown", metavar="U", panel=_COMM,
                                    help="Share of compute speed lost while DP communication runs "
                                         "(0 ≤ U < 1; default 0).")] = "0",
    optimizer: Annotated[Fraction | None, option("--optimizer", metavar="TIME", panel=_COMM, parser=_time,
                                                 help="Optimizer step after the last reduction.")] = None,
    algorithm: Annotated[str, option("--algorithm", metavar="ALGO", panel=_COMM,
                                     help="All-reduce algorithm of TP and DP (default ring).")] = "ring",
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    tp_link: Annotated[Any, option("--tp-link", metavar="NAME|FILE|ALPHA:RATE", panel=_LINKS,
                                   autocompletion=complete.profiles, parser=value_parser(_link_text),
                                   help="Link of the tensor-parallel all-reduces: a profile or 2us:300GB/s "
                                        "(default: the link).")] = None,
    pp_link: Annotated[Any, option("--pp-link", metavar="NAME|FILE|ALPHA:RATE", panel=_LINKS,
                                   autocompletion=complete.profiles, parser=value_parser(_link_text),
                                   help="Link of the pipeline sends (default: the link).")] = None,
    dp_link: Annotated[Any, option("--dp-link", metavar="NAME|FILE|ALPHA:RATE", panel=_LINKS,
                                   autocompletion=complete.profiles, parser=value_parser(_link_text),
                                   help="Link of the data-parallel collectives (default: the link).")] = None,
    levels: Levels = None,
    order: Annotated[str, option("--order", metavar="DIMS", panel=_LINKS,
                                 help="With --level: the rank order, innermost first (default tp-dp-pp, "
                                      "Megatron's).")] = "tp-dp-pp",
    as_json: Json = False,
) -> None:
    """Price one training step: compute, TP all-reduces, pipeline bubble and sends, bucketed DP reduction.

    The model is a transformer shape (--layers --hidden --heads --seq --vocab with --peak) or
    per-layer times (--forward --backward --layers). The DP gradient reduction runs in buckets
    overlapped with the backward pass; the step is split exactly into its parts.

    Example: costmodel step --dp 4 --layers 8 -F 2ms -b 4ms --gradient-bytes 50MB --profile ib-hdr

    Example: costmodel step --pp 4 -m 8 --layers 8 -F 2ms -b 4ms --activation-bytes 8MiB --profile ib-hdr
    """
    from costmodel.step import step

    layers, shape = _model(layers, forward=forward, backward=backward, gradient_bytes=gradient_bytes,
                           shape_options={"hidden": hidden, "heads": heads, "seq": seq, "vocab": vocab,
                                          "ffn": ffn, "kv_groups": kv_groups},
                           peak=peak, efficiency=efficiency, micro_batch=micro_batch)
    link, topology = _machine(alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile, levels=levels,
                              own={"tp": (tp, tp_link), "pp": (pp, pp_link), "dp": (dp, dp_link)})

    def every(values: tuple[Fraction, ...] | None) -> list[Fraction] | None:
        return None if values is None else list(values) * (layers if len(values) == 1 else 1)

    per_layer: dict[str, Any] = {} if shape is not None else {
        "forward_s": every(forward), "backward_s": every(backward), "gradient_bytes": every(gradient_bytes),
        "activation_bytes": activation_bytes, "tokens": tokens}
    result = step(dp=dp, tp=tp, pp=pp, microbatches=microbatches, schedule=schedule, chunks=chunks,
                  recompute=recompute, shape=shape, micro_batch=micro_batch, peak_flops=peak,
                  efficiency=efficiency, link=link, tp_link=tp_link, pp_link=pp_link, dp_link=dp_link,
                  topology=topology, order=order, buckets=buckets, bucket_bytes=bucket_size,
                  zero=zero, prefetch=prefetch, slowdown=slowdown,
                  optimizer_s=0 if optimizer is None else optimizer, algorithm=algorithm, **per_layer)
    emit(result, as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _collectives(r: StepResult) -> str:
    """What the critical device's gradient traffic was: ``8 all-reduces of ddp buckets``."""
    issued = [x.collective for x in r.communication[r.dp_stage] if not x.label.startswith("params")]
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
    if r.zero in (1, 2) and r.dp > 1:
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
