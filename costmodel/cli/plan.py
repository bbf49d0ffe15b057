"""The ``plan`` command: every parallel configuration of a model on a machine, the fastest ranked.

It reads a transformer shape (the options of ``step``, cli/shape.py: a preset with ``--model``, a Hugging
Face ``config.json`` with ``--hf-config``, or the shape's options, a mixture of experts' included), a GPU,
the nodes and a global batch, makes one call to :func:`costmodel.step.planner.plan` and emits the
:class:`~costmodel.step.planner.Plan`, whose human rendering is declared here: the best configuration,
the ranked table, what was refused and why, and the bound the search pruned with.
``costmodel plot plan`` takes the same options (:data:`PLAN_OPTIONS`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.cli.shape import (
    LAYER_OPTIONS,
    MOE_OPTIONS,
    Ffn,
    Gated,
    HeadDim,
    Heads,
    HfConfig,
    Hidden,
    KvGroups,
    Layers,
    ModelName,
    Seq,
    Vocab,
    described,
    described_shape,
    megatron_option,
)
from costmodel.units import format_share, format_size, format_time

if TYPE_CHECKING:
    from costmodel.step.planner import Plan, PlanRow

__all__ = ["EXAMPLE", "PLAN_OPTIONS", "app", "plan_arguments", "plan_from_options", "plan_options",
           "render_plan", "schedule_text"]

app = typer.Typer()

_MACHINE = "Machine and batch"
_SEARCH = "Search"


def _sizes(text: str) -> tuple[int, ...]:
    """``1,2,4``: the micro-batch sizes, each a count ≥ 1."""
    from costmodel.errors import InputError

    items = [t.strip() for t in text.split(",")]
    if not all(t.isdigit() and int(t) > 0 for t in items):
        raise InputError(f"--micro-batch-sizes {text} is not a list of sizes ≥ 1; e.g. 1,2,4")
    return tuple(int(t) for t in items)


def _fix(text: str) -> tuple[str, str]:
    """``SETTING=VALUE``: a setting of the step held for every configuration, named as ``costmodel step``'s
    option is (``bucket-size``, ``sp``, ``peak``, with or without its dashes); the setting's name and the
    value's text."""
    import dataclasses

    from costmodel.cli.step import option_names
    from costmodel.errors import InputError, UnknownNameError
    from costmodel.step.config import StepConfig

    name, equals, value = text.partition("=")
    if not equals or not name.strip() or not value.strip():
        raise InputError(f"--fix '{text}' is not SETTING=VALUE; e.g. --fix tp=8 or "
                         "--fix overlap-grad-reduce=true")
    flag = "--" + name.strip().lstrip("-").replace("_", "-")  # bucket_size as bucket-size
    if (own := flag[2:].replace("-", "_")) in _OWN_OPTIONS:  # refused with the option that gives it
        return own, value.strip()
    settings = {f.name: option_names(f.name) for f in dataclasses.fields(StepConfig)
                if f.metadata["setting"].own_option}
    for setting, flags in settings.items():
        if flag in flags or flag == f"--{setting.replace('_', '-')}":
            try:  # the value read as step reads it, refused in the words typed
                StepConfig.of(**{setting: value.strip()})
            except InputError as exc:
                said = str(exc)
                shown = f"{setting}={value.strip()}"
                for prefix in (shown, f"{setting}={value.strip()!r}"):  # the colon after it goes below
                    if said.startswith(prefix):
                        said = said[len(prefix):].lstrip(": ")
                        break
                joined = " " if said.startswith(("is ", "are ")) else ": "
                raise InputError(f"--fix {text.strip()}{joined}{said}") from None
            if setting == "peak_flops":
                raise InputError(f"--fix {text.strip()} and --gpu both give the peak: plan prices every "
                                 "configuration at the GPU's own rates; drop --fix peak")
            return setting, value.strip()
    options = tuple(dict.fromkeys(next(f for f in flags if f.startswith("--"))[2:]
                                  for flags in settings.values()))
    raise UnknownNameError("--fix setting (an option of costmodel step)", flag[2:], options)


Gpu = Annotated[str, option("--gpu", metavar="NAME|FILE", panel=_MACHINE,
                            help="GPU preset (costmodel gpus) or GPU file: prices each operation; its node "
                                 "network prices the communication and its memory bounds each "
                                 "configuration.")]
Nodes = Annotated[int | None, option("--nodes", metavar="N", panel=_MACHINE,
                                     help="Nodes; every configuration uses all their GPUs (or give --gpus).")]
Gpus = Annotated[int | None, option("--gpus", metavar="N", panel=_MACHINE,
                                    help="GPUs instead of --nodes: whole nodes, or fewer than a node holds.")]
GpusPerNode = Annotated[int | None, option("--gpus-per-node", metavar="G", panel=_MACHINE,
                                           help="GPUs per node (default: the GPU preset's node, 8).")]
GlobalBatch = Annotated[int | None, option("--global-batch", metavar="B", panel=_MACHINE,
                                           help="Sequences per step: dp × micro-batch × micro-batches "
                                                "(needed unless --megatron gives it).")]
Megatron = Annotated[str | None, megatron_option(
    "the model, the global batch and the settings the plan does not search; the layout they give (tp, "
    "pp, ...) is searched, not held (--fix holds a setting).")]
MicroBatchSizes = Annotated[str | None, option(
    "--micro-batch-sizes", metavar="B,B,...", panel=_SEARCH,
    help="Micro-batch sizes to try (default 1,2,4).")]
Framework = Annotated[str, option("--framework", metavar="NAME", panel=_SEARCH,
                                  help="Data-parallel schedule: megatron (default; ZeRO 0 or its "
                                       "distributed optimizer), deepspeed, fsdp, ddp or "
                                       "megatron-deepspeed; its ZeRO stages are tried.")]
Fix = Annotated[list[str] | None, option(
    "--fix", metavar="SETTING=VALUE", panel=_SEARCH,
    help="Hold a setting of `costmodel step` for every configuration, e.g. tp=8, recompute=full, "
         "overlap-grad-reduce=true, attention=unfused (repeat for more).")]
Top = Annotated[int, option("--top", metavar="N", panel=_SEARCH, help="Configurations to rank (default 10).")]


_OWN_OPTIONS = {
    "framework": "--framework NAME", "gpu": "--gpu NAME", "gpus": "--gpus N", "nodes": "--nodes N",
    "gpus_per_node": "--gpus-per-node G", "global_batch": "--global-batch B",
    "micro_batch_sizes": "--micro-batch-sizes B,B,...", "top": "--top N",
    "shape": "--model NAME or the shape's options", "model": "--model NAME", "hf_config": "--hf-config FILE",
    **{name: f"--{name.replace('_', '-')} N" for name in ("layers", "hidden", "heads", "seq", "vocab", "ffn",
                                                        "kv_groups", "head_dim", "experts", "top_k",
                                                        "window", "layer_norms", "kv_rank", "q_rank",
                                                        "rope_head_dim", "value_head_dim",
                                                        "mtp_layers")},
    "window_layers": "--window-layers PATTERN", "qk_norm": "--qk-norm KIND",
    "expert_layers": "--expert-layers PATTERN",
}
"""The plan's own arguments, which --fix cannot hold, and the option that gives each."""


def plan_from_options(*, model: str | None = None, hf_config: str | None = None, megatron: str | None = None,
                      layers: int | None,
                      hidden: int | None, heads: int | None, seq: int | None, vocab: int | None,
                      ffn: str | None, kv_groups: int | None, gated: bool | None, gpu: str, nodes: int | None,
                      head_dim: int | None = None,
                      gpus_per_node: int | None, global_batch: int | None, micro_batch_sizes: str | None,
                      framework: str, fix: list[str] | None, top: int, gpus: int | None = None,
                      **moe: Any) -> Plan:
    """The plan the options describe (one call of :func:`costmodel.step.planner.plan`); *moe* holds the
    options of a mixture of experts (:data:`costmodel.cli.shape.MOE_OPTIONS`) and of the layers' window and
    norms (:data:`costmodel.cli.shape.LAYER_OPTIONS`)."""
    import dataclasses

    from costmodel.errors import InputError
    from costmodel.step.planner import plan
    from costmodel.validate import positive

    if layers is not None:
        positive(layers, "layers")
    if unknown := set(moe) - set(MOE_OPTIONS) - set(LAYER_OPTIONS):
        raise TypeError(f"unknown options {sorted(unknown)}")
    description = described(model=model, hf_config=hf_config, seq=seq, megatron=megatron)
    notes = list(description.notes)
    if megatron is not None:
        notes.extend(_searched(description.settings))
    global_batch = description.global_batch if global_batch is None else global_batch
    if global_batch is None:
        raise InputError("no global batch given; pass --global-batch B (sequences per step)")
    shape = described_shape(description.shape, layers=layers, hidden=hidden, heads=heads, seq=seq,
                            vocab=vocab, ffn=ffn, kv_groups=kv_groups, head_dim=head_dim, gated=gated,
                            notes=notes,
                            **{name: moe.get(name) for name in (*MOE_OPTIONS, *LAYER_OPTIONS)})
    if shape is None:
        raise InputError("plan needs a transformer shape: --model NAME, --hf-config FILE, or --layers "
                         "--hidden --heads --seq --vocab")
    fixed: dict[str, Any] = {}
    for name, value in map(_fix, fix or ()):
        if name in fixed:
            raise InputError(f"--fix {name.replace('_', '-')} is given twice; give each setting once")
        fixed[name] = value
    if own := sorted(fixed.keys() & _OWN_OPTIONS.keys()):
        raise InputError(f"{own[0].replace('_', '-')} is an option of its own, {_OWN_OPTIONS[own[0]]}; drop "
                         "it from --fix")
    sizes = None if micro_batch_sizes is None else _sizes(micro_batch_sizes)
    held = {**description.settings, **fixed}  # the model's settings (Mixtral: no dropout), --fix over them
    found = plan(shape, gpu=gpu, nodes=nodes, gpus=gpus, gpus_per_node=gpus_per_node,
                 global_batch=global_batch, micro_batch_sizes=sizes, top=top, framework=framework, **held)
    return dataclasses.replace(found, notes=(*notes, *found.notes)) if notes else found


def _searched(settings: dict[str, Any]) -> list[str]:
    """Drop from *settings* (Megatron-LM's arguments') what the plan searches, and say so: the plan ranks
    every layout, the arguments' own among them, unless --fix holds one."""
    from costmodel.step.planner import DIMENSIONS

    settings.pop("framework", None)  # the plan's own --framework (Megatron-LM's by default)
    searched = {d.name for d in DIMENSIONS} | {"stage_layers"}
    dropped = {name: settings.pop(name) for name in list(settings) if name in searched}
    if not dropped:
        return []

    def text(v: Any) -> str:
        if isinstance(v, bool):
            return "on" if v else "off"
        return ",".join(map(str, v)) if isinstance(v, tuple) else str(v)

    shown = ", ".join(f"{name.replace('_', '-')} {text(v)}" for name, v in dropped.items())
    return [f"the layout Megatron-LM's arguments give ({shown}) is one the plan searches, not held; "
            "--fix SETTING=VALUE holds a setting"]


_KEYWORD = inspect.Parameter.KEYWORD_ONLY
PLAN_OPTIONS: tuple[inspect.Parameter, ...] = tuple(
    inspect.Parameter(name, _KEYWORD, default=default, annotation=annotation)
    for name, annotation, default in (
        ("model", ModelName, None), ("hf_config", HfConfig, None), ("megatron", Megatron, None),
        ("layers", Layers, None), ("hidden", Hidden, None), ("heads", Heads, None), ("seq", Seq, None),
        ("vocab", Vocab, None), ("ffn", Ffn, None), ("kv_groups", KvGroups, None),
        ("head_dim", HeadDim, None), ("gated", Gated, None),
        *((name, annotation, None) for name, annotation in MOE_OPTIONS.items()),
        *((name, annotation, None) for name, annotation in LAYER_OPTIONS.items()),
        ("gpu", Gpu, inspect.Parameter.empty), ("nodes", Nodes, None), ("gpus", Gpus, None),
        ("gpus_per_node", GpusPerNode, None), ("global_batch", GlobalBatch, None),
        ("micro_batch_sizes", MicroBatchSizes, None), ("framework", Framework, "megatron"),
        ("fix", Fix, None),
        ("top", Top, 10)))
"""The options of ``plan`` and ``plot plan``, declared once."""


def plan_options(*extra: inspect.Parameter) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the plan's options (and *extra*): its signature, which Typer reads."""
    def decorate(function: Callable[..., None]) -> Callable[..., None]:
        parameters = [*PLAN_OPTIONS, *extra]
        function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
        return function

    return decorate


def plan_arguments(values: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`plan_from_options` among a command's *values*."""
    return {p.name: values[p.name] for p in PLAN_OPTIONS}


EXAMPLE = "--layers 4 --hidden 512 --heads 8 --seq 256 --vocab 1k --gpu a100-80gb --nodes 1 --global-batch 16"
"""A small model on one node, as the help examples of ``plan`` and ``plot plan`` give it."""

_HELP = f"""Rank every parallel configuration of a model on a machine: the fastest that fit, searched exactly.

Every configuration that uses all the GPUs (tp, pp, cp, dp, ep for a mixture of experts, micro-batch size,
1F1B or interleaved with its chunks, recomputation, sequence parallelism, the framework's ZeRO stages) is
checked against the GPU's
memory and, by branch and bound on a proven lower bound of its step, priced as `costmodel step` prices it
only when it could still make the top N: the ranking is exact.

Example: costmodel plan {EXAMPLE} --top 5

Example: costmodel plan --model mixtral --layers 4 --seq 4096 --gpu h100-sxm --nodes 1 --global-batch 64
"""


@app.command("plan")
@plan_options(inspect.Parameter("as_json", _KEYWORD, default=False, annotation=Json))
def plan_command(**values: Any) -> None:
    emit(plan_from_options(**plan_arguments(values)), as_json=values["as_json"])


plan_command.__doc__ = _HELP  # the example's shape is declared once, EXAMPLE


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def schedule_text(row: PlanRow) -> str:
    """``1f1b`` or ``interleaved ×4`` (its model chunks)."""
    c = row.config
    return f"interleaved ×{c.chunks}" if c.schedule == "interleaved" else c.schedule


def _short(n: Fraction) -> str:
    return str(format_size(n).split(" = ")[-1])


@renders("costmodel.step.planner.Plan")
def render_plan(p: Plan) -> Rendered:
    """The best configuration, the ranked table, the counts and the bound."""
    from rich.console import Group
    from rich.text import Text

    best = p.best
    b, r = best.config, best.result
    cp = f" × cp {b.cp}" if b.cp > 1 else ""
    ep = f" · ep {b.ep}" if b.ep > 1 else ""
    sp = " · sequence parallel" if b.sequence_parallel else ""
    recompute = "" if b.recompute == "none" else f" · {b.recompute} recomputation"
    mfu = "" if best.mfu is None else f" · MFU {format_share(best.mfu)}"
    head = markup(
        f"[bold]plan[/bold] · {p.gpus} × {p.gpu} ({p.nodes} node{'s' if p.nodes > 1 else ''} × "
        f"{p.gpus_per_node}) · global batch {p.global_batch} · {p.framework}\n"
        f"best: dp {b.dp} × tp {b.tp} × pp {b.pp}{cp}{ep} · {schedule_text(best)} · "
        f"micro-batch {b.micro_batch} × "
        f"{b.microbatches}{recompute}{sp} · ZeRO {b.zero}\n"
        f"  [bold]{format_time(best.step_s)}[/bold] per step{mfu} · {_short(best.memory_bytes)} per GPU · "
        f"{r.mode}")
    # cp and ep get a column when some row has them
    ranks = [k for k in ("cp", "ep") if any(getattr(row.config, k) > 1 for row in p.rows)]
    dims = ("tp", *ranks[:1 if "cp" in ranks else 0], "pp", "dp", *(["ep"] if "ep" in ranks else []))
    columns = ("#", *dims, "b", "M", "schedule", "recompute", "sp", "ZeRO", "step", "memory", "MFU", "behind",
               "%")
    rows = table(*columns, numeric=("#", *dims, "b", "M", "ZeRO", "step", "memory", "MFU", "behind", "%"),
                 no_wrap=True, optional=(("M",), ("recompute",), ("%",)))
    for row in p.rows:
        c = row.config
        rows.add_row(str(row.rank), *(str(getattr(c, d)) for d in dims), str(c.micro_batch),
                     str(c.microbatches),
                     schedule_text(row), c.recompute, "yes" if c.sequence_parallel else "no", str(c.zero),
                     format_time(row.step_s), _short(row.memory_bytes),
                     "—" if row.mfu is None else format_share(row.mfu),
                     "—" if not row.behind_s else "+" + format_time(row.behind_s),
                     "—" if not row.behind_s else format_share(row.behind))
    parts = table("part of the best step", "time", "share", numeric=("time", "share"))
    for name, value in (("compute", r.compute_s), ("TP communication", r.tp_comm_s),
                        ("exposed CP communication", r.cp_comm_s), ("EP all-to-alls", r.ep_comm_s),
                        ("pipeline bubble", r.bubble_s),
                        ("exposed PP sends", r.pp_exposed_s), ("exposed DP communication", r.dp_exposed_s),
                        ("compute slowdown", r.contention_s), ("expert gradient reduction", r.expert_dp_s),
                        ("optimizer", r.optimizer_s),
                        ("parameter all-gather", r.param_gather_s)):
        if value:
            parts.add_row(name, format_time(value), format_share(value / r.step_s))
    invalid, memory, pruned = (p.refused_count(k) for k in ("invalid", "memory", "pruned"))
    counts = Text(f"{p.considered} configurations considered: {invalid} invalid, {memory} do not fit in "
                  f"memory, {pruned} pruned by the bound, {p.priced} priced ({p.bounded} pipeline bounds "
                  f"computed)")
    notes = [f"{r.kind}: {r.count} × {r.reason}" for r in p.refused if r.kind != "pruned"]
    notes += [f"bound: {p.bound}", *p.notes, "behind: what a row loses to the best, in time and as a share "
              "of the best step; --json has each row's breakdown"]
    return Group(head, Text(""), rows, Text(""), parts, Text(""), counts), tuple(notes)
