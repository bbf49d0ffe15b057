"""The ``step`` command: one training step of dp × tp × pp devices, its breakdown, overlap, memory and MFU.

Its options come from one declaration, :class:`costmodel.step.config.StepConfig`: every setting with
option names is an option here (and of ``costmodel plot step``), read by the setting's own reader, so
the command line and Python refuse the same values with the same words.  Three option groups build the
settings that are objects in Python: a transformer shape (``--layers --hidden ...``), per-layer times
(``-F -b --gradient-bytes``, one value for every layer or one per layer) and the link or the machine's
levels (``--alpha --beta --bandwidth --profile --level``).  The command makes one call to
:func:`costmodel.step.step` (or :func:`~costmodel.step.sweep_step`) and emits the result, whose human
rendering is declared here; rich loads only when it runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli import complete
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Alpha, Bandwidth, Beta, Json, Levels, Profile, option, value_parser
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
    parse_count,
)
from costmodel.units import (
    format_count,
    format_share,
    format_size,
    format_time,
    parse_size,
    parse_time,
)

if TYPE_CHECKING:
    from costmodel.step import StepResult, StepSweep

__all__ = ["OPTION_NAMES", "StepCommand", "app", "option_names", "parse_sweep", "render_step", "render_sweep",
           "step_command_parameters"]

app = typer.Typer()

_TIMES = "Model: per-layer times"
_SWEEP = "Sweep"

#: Buckets tables longer than this are left out of the human output (the JSON has them).
MAX_BUCKET_ROWS = 12


def _per_layer(parse: Any, **kwargs: Any) -> Any:
    """One value for every layer, or a comma-separated list with one per layer: ``2ms`` or ``1ms,2ms``."""
    def each(text: str) -> tuple[Fraction, ...]:
        return tuple(parse(part, **kwargs) for part in text.split(","))

    return value_parser(each)


_times = _per_layer(parse_time, require_unit=True)

# The option groups that build a step's object settings; every other option is a setting's own.
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
    "--activation-bytes", metavar="SIZE", panel=_TIMES, parser=value_parser(parse_size),
    help="Activation tensor of a micro-batch (needed with --tp or --pp > 1): 8MiB.")]
Tokens = Annotated[int | None, option("--tokens", metavar="N", panel=_TIMES, parser=value_parser(parse_count),
                                      help="Tokens per micro-batch, for tokens/s.")]
Sweep = Annotated[str | None, option(
    "--sweep", metavar="KNOB=VALUES", panel=_SWEEP,
    help="Vary one knob, the rest fixed: a setting such as dp, tp, pp, microbatches, micro-batch, schedule, "
         "chunks, recompute, attention, gpu, dtype, efficiency, framework, zero, bucket-size, profile, "
         "dp-link, tp-link, pp-link, prefetch, param-gather, pipeline-sends, tp-overlap or slowdown. VALUES: "
         "1,2,4 or ranges 1..64x2 (×2 each) and 4..32+4 (+4 each).")]

_DESCRIBED = "Model: as people describe it"
Megatron = Annotated[str | None, megatron_option(
    "--tensor-model-parallel-size, --pipeline-model-parallel-size, --num-layers ..., --global-batch-size; "
    "the options of this command override them, and the arguments it does not model are listed in a "
    "note.", panel=_DESCRIBED)]
GlobalBatch = Annotated[int | None, option(
    "--global-batch", metavar="N", panel=_DESCRIBED, parser=value_parser(parse_count),
    help="Sequences per step over all replicas: -m becomes N / (micro-batch × dp).")]
WorldSize = Annotated[int | None, option(
    "--gpus", "--world-size", metavar="N", panel=_DESCRIBED, parser=value_parser(parse_count),
    help="GPUs in all: --dp becomes N / (tp × pp × cp), as Megatron-LM derives it.")]

_GROUPS: dict[str, Any] = {
    "model": ModelName, "hf_config": HfConfig, "megatron": Megatron, "global_batch": GlobalBatch,
    "gpus": WorldSize, "layers": Layers, "hidden": Hidden, "heads": Heads, "seq": Seq, "vocab": Vocab,
    "ffn": Ffn,
    "gated": Gated, "kv_groups": KvGroups, "head_dim": HeadDim, **MOE_OPTIONS, **LAYER_OPTIONS,
    "forward": Forward,
    "backward": Backward,
    "gradient_bytes": GradientBytes, "activation_bytes": ActivationBytes, "tokens": Tokens, "alpha": Alpha,
    "beta": Beta, "bandwidth": Bandwidth, "profile": Profile, "levels": Levels}
"""The options of the groups, by parameter name (each declared once, in cli/shape.py and cli/options.py)."""

OPTION_NAMES: dict[str, tuple[str, ...]] = {
    "microbatches": ("-m", "--microbatches"),
    "schedule": ("--schedule", "-s"),
    "chunks": ("-v", "--chunks"),
    "sequence_parallel": ("--sequence-parallel", "--sp"),
    "gpu": ("--gpu", "--gpu-profile"),
    "peak_flops": ("--peak",),
    "bucket_bytes": ("--bucket-size",),
    "optimizer_s": ("--optimizer",),
}
"""The settings whose options are not ``--`` and their name with dashes (or have a short form too)."""


def option_names(name: str) -> tuple[str, ...]:
    """The options of the step setting called *name*."""
    return OPTION_NAMES.get(name, (f"--{name.replace('_', '-')}",))


def _long(name: str) -> str:
    return next(f for f in option_names(name) if f.startswith("--"))


_COMPLETE: dict[str, Callable[..., Any]] = {"schedule": complete.schedules, "tp_link": complete.profiles,
                                            "pp_link": complete.profiles, "dp_link": complete.profiles}


def _setting_option(name: str, default: Any, setting: Any) -> inspect.Parameter:
    """The option of one setting: its text (or on/off) goes to the setting's reader unchanged."""
    from costmodel.step.config import PANELS

    panel = PANELS[setting.panel]
    if setting.boolean:
        # on and off, both: a model's description (--model, --hf-config) may set what the default does
        # not, and the command line overrides it either way; unset, the description's or the default holds
        flags = tuple(f"{n}/--no-{n[2:]}" for n in option_names(name) if n.startswith("--"))
        annotation: Any = Annotated[bool | None, option(*flags, panel=panel, help=setting.help)]
    else:
        annotation = Annotated[str | None, option(*option_names(name), metavar=setting.metavar, panel=panel,
                                                   help=setting.help, autocompletion=_COMPLETE.get(name))]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)


def step_command_parameters(*extra: inspect.Parameter) -> list[inspect.Parameter]:
    """The parameters of a step command: the context, every setting's option, the groups', then *extra*."""
    from costmodel.step.config import settings

    keyword = inspect.Parameter.KEYWORD_ONLY
    out = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)]
    out += [_setting_option(n, d, st) for n, d, st in settings() if st.own_option]
    out += [inspect.Parameter(n, keyword, default=None, annotation=a) for n, a in _GROUPS.items()]
    return out + list(extra)


def step_options(*extra: inspect.Parameter) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the step's options (and *extra*): its signature, which Typer reads."""
    def decorate(function: Callable[..., None]) -> Callable[..., None]:
        parameters = step_command_parameters(*extra)
        function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        function.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
        return function

    return decorate


class StepCommand:
    """The options of a step command as given, read into the settings of :func:`costmodel.step.step`."""

    def __init__(self, values: dict[str, Any], ctx: typer.Context) -> None:
        from costmodel.step.config import settings

        defaults = ("DEFAULT", "DEFAULT_MAP")
        self.given = frozenset(n for n in ctx.params
                               if getattr(ctx.get_parameter_source(n), "name", "DEFAULT") not in defaults)
        self.values = values
        # a switch is on or off as given (--x, --no-x), or not given (None): the description's or the default
        self.settings = {n: values[n] for n, _, st in settings()
                         if st.own_option and values.get(n) is not None}

    def arguments(self, sweep: Any = None) -> dict[str, Any]:
        """The keyword arguments of :func:`costmodel.step.step`, every option checked.

        *sweep*: the :class:`~costmodel.step.sweep.Knob` and values swept, whose argument is left
        out (an option that sets it too is an error).
        """
        knob, values = sweep if sweep is not None else (None, ())
        swept = "" if knob is None else knob.name
        if knob is not None:
            _not_also_given(knob, self.given)
        self._describe(knob)
        layers, shape = _model(self, shape_swept=knob is not None and knob.shape_only, swept=swept)
        sizes = {kind: max(values) if knob is not None and knob.parameter == kind else
                 self.count(kind) for kind in ("tp", "pp", "dp", "cp")}
        if "gpus" in self.held:  # each value's dp, at most the GPUs
            sizes["dp"] = self.held["gpus"]
        link, topology = _machine(self, swept=swept, sizes=sizes)
        v = self.values

        def every(values: tuple[Fraction, ...] | None) -> list[Fraction] | None:
            return None if values is None else list(values) * (layers if len(values) == 1 else 1)

        arguments: dict[str, Any] = dict(self.settings)
        if shape is not None:
            arguments["shape"] = shape
        else:
            arguments.update(forward_s=every(v["forward"]), backward_s=every(v["backward"]),
                             gradient_bytes=every(v["gradient_bytes"]),
                             activation_bytes=v["activation_bytes"], tokens=v["tokens"])
        arguments.update(link=link, topology=topology)
        if knob is not None:
            arguments.pop(knob.parameter, None)
        return {k: a for k, a in arguments.items() if a is not None}

    def count(self, name: str) -> int:
        """The count setting *name* as given (read by its setting's reader, so bad text is one error),
        else 1."""
        from costmodel.step.config import setting_of

        value = self.settings.get(name)
        return 1 if value is None else int(setting_of(name).read(value, name))

    def noted(self, result: Any) -> Any:
        """*result* with the notes of the model's description first (what was read, what was derived)."""
        import dataclasses

        notes = getattr(self, "notes", [])
        if not notes or not hasattr(result, "notes") or isinstance(result, type):
            return result
        return dataclasses.replace(result, notes=(*notes, *(n for n in result.notes if n not in notes)))

    def _describe(self, knob: Any) -> None:
        """Merge what --model, --hf-config and --megatron describe under the options given, and derive
        --dp from --gpus and -m from --global-batch."""
        from costmodel.errors import InputError

        v = self.values
        model = described(model=v["model"], hf_config=v["hf_config"], seq=v["seq"], megatron=v["megatron"])
        self.notes: list[str] = list(model.notes)
        shape, settings = model.shape, model.settings
        global_batch = model.global_batch if v["global_batch"] is None else v["global_batch"]
        self.shape_base = shape
        known = {n for n, _, _ in _settings()}
        for name in [n for n in settings if n not in known]:
            value = settings.pop(name)
            if value != 1:
                raise InputError(f"{name}={value} (from --megatron) is not modelled by this step; drop it")
        self.settings = {**settings, **self.settings}
        self.held: dict[str, int] = {}
        if knob is not None and knob.parameter in _DERIVED and {v["gpus"], global_batch} != {None}:
            self._hold(knob, gpus=v["gpus"], global_batch=global_batch)
            return
        if v["gpus"] is not None:
            from costmodel.describe.batch import data_parallel_for

            dp = data_parallel_for(v["gpus"], **{k: self.count(k) for k in ("tp", "pp", "cp")})
            if "dp" in self.settings and self.count("dp") != dp:
                raise InputError(f"--dp {self.settings['dp']} and --gpus {v['gpus']} disagree: --gpus gives "
                                 f"dp = {dp}; pass one of them")
            self.settings["dp"] = dp
        if global_batch is None:
            return
        if knob is not None and knob.parameter in ("dp", "tp", "pp", "cp", "micro_batch", "microbatches"):
            raise InputError(f"--global-batch fixes the micro-batches from --dp and --micro-batch; --sweep "
                             f"{knob.name} would change them: give -m instead")
        from costmodel.describe.batch import microbatches_for

        m = microbatches_for(global_batch, micro_batch=self.count("micro_batch"), dp=self.count("dp"))
        if "microbatches" in self.given and self.count("microbatches") != m:
            given = self.settings["microbatches"]
            raise InputError(f"-m {given} and --global-batch {global_batch} disagree: "
                             f"the global batch gives m = {m}; pass one of them")
        self.settings["microbatches"] = m
        b = self.settings.get("micro_batch", 1)
        self.notes.append(f"global batch {global_batch} = micro-batch {b} × "
                          f"dp {self.settings.get('dp', 1)} × m {m}")

    def _hold(self, knob: Any, *, gpus: int | None, global_batch: int | None) -> None:
        """A sweep of a parallel size or the micro-batch on a machine (--gpus) or a batch (--global-batch)
        held: each point derives dp and m itself (:func:`costmodel.step.sweep.sweep_step`)."""
        from costmodel.errors import InputError

        if knob.parameter == "dp" and gpus is not None:
            raise InputError("--gpus fixes dp = GPUs / (tp × pp × cp), and --sweep dp would change the GPUs: "
                             "sweep tp, pp or cp on them, or give --dp instead of --gpus")
        if knob.parameter == "microbatches" and global_batch is not None:
            raise InputError("--global-batch fixes the micro-batches, and --sweep microbatches would change "
                             "them: sweep micro-batch, or give -m instead")
        held = {"gpus": gpus, "global_batch": global_batch}
        for name, flag, source in (("dp", "--dp", "gpus"), ("microbatches", "-m", "global_batch")):
            if held[source] is not None and name in self.settings:
                raise InputError(f"{flag} and --{source.replace('_', '-')} were both given, and --sweep "
                                 f"{knob.name} derives {flag} at each value from the latter; give one")
        self.held = {k: x for k, x in held.items() if x is not None}
        derived = [d for d, k in (("dp from --gpus", "gpus"), ("m from --global-batch", "global_batch"))
                   if k in self.held]
        self.notes.append(f"each value of {knob.name} derives {' and '.join(derived)}")


_DERIVED = ("dp", "tp", "pp", "cp", "micro_batch", "microbatches")
"""The settings whose sweep changes the dp that --gpus gives or the m that --global-batch gives."""


def _settings() -> Any:
    from costmodel.step.config import settings

    return settings()


def _model(o: StepCommand, *, shape_swept: bool, swept: str) -> tuple[int, Any]:
    """The layer count and the transformer shape (``None`` with per-layer times), checked."""
    from costmodel.errors import InputError
    from costmodel.step.model import check_layers
    from costmodel.validate import positive

    v = o.values
    lists = {"--forward": v["forward"], "--backward": v["backward"], "--gradient-bytes": v["gradient_bytes"]}
    counted = {name: len(x) for name, x in lists.items() if x is not None and len(x) > 1}
    layers = v["layers"]
    base = getattr(o, "shape_base", {})
    if layers is None and base.get("layers") is not None:
        layers = base["layers"]
    if layers is None and counted:
        layers = next(iter(counted.values()))
    if layers is None:
        raise InputError("no --layers given; pass --layers L with a shape (--hidden H ...) or with "
                         "--forward TIME")
    positive(layers, "layers")
    check_layers(layers)  # before a time is repeated for every layer
    for name, count in counted.items():
        if count != layers:
            raise InputError(f"{name} lists {count} values for {layers} layers; give one value, or one "
                             "per layer")
    shape = described_shape(base, layers=layers, hidden=v["hidden"], heads=v["heads"], seq=v["seq"],
                            vocab=v["vocab"], ffn=v["ffn"], kv_groups=v["kv_groups"], gated=v["gated"],
                            head_dim=v["head_dim"],
                            notes=getattr(o, "notes", None),
                            **{name: v[name] for name in (*MOE_OPTIONS, *LAYER_OPTIONS)})
    if shape is not None and (v["forward"] is not None or v["backward"] is not None):
        raise InputError("both a shape (--hidden H ...) and per-layer times (--forward TIME) were given; "
                         "pass one model")
    shaped = [n for n in ("micro_batch", "gpu", "peak_flops", "efficiency", "attention", "dtype", "dropout")
              if n in o.settings]
    layered = any(v[n] is not None for n in ("ffn", "kv_groups", "head_dim", "gated", *MOE_OPTIONS,
                                             *LAYER_OPTIONS))
    if shape is None and (shaped or layered or shape_swept):
        also = f" and --sweep {swept}" if shape_swept else ""
        raise InputError(f"--gpu, --peak, --efficiency, --micro-batch, --attention, --dtype, --ffn, "
                         f"--gated, --kv-groups, --head-dim, --window and --experts{also} describe a "
                         "transformer shape; with --forward/--backward leave them out")
    if shape is None and (v["forward"] is None or v["backward"] is None):
        raise InputError("no model given; pass a shape (--hidden --heads --seq --vocab with --gpu or --peak) "
                         "or --forward TIME and --backward TIME")
    return layers, shape


def _machine(o: StepCommand, *, swept: str, sizes: dict[str, int]) -> tuple[Any, Any]:
    """The one link, or the topology of levels, that prices what has no link of its own."""
    from costmodel.errors import InputError
    from costmodel.links import resolve_link, topology_from_options

    v = o.values
    link: Any = None
    topology: Any = None
    options = (v["alpha"], v["beta"], v["bandwidth"])
    if any(x is not None for x in (*options, v["profile"])):
        if v["levels"]:
            raise InputError("--level and a link (--alpha, --beta, --bandwidth, --profile) were both given; "
                             "describe the machine by its levels or by one link")
        profile = None
        if v["profile"] is not None:
            from costmodel.profiles import load_profile  # loaded only when a profile is named

            profile = load_profile(v["profile"])
        if profile is not None and all(x is None for x in options) and profile.levels:
            topology = topology_from_options(profile=profile)  # a machine's levels: place the groups
        elif profile is not None and all(x is None for x in options):
            link = profile  # priced per collective, on each one's calibrated segments
        else:
            link = resolve_link("allreduce", alpha=v["alpha"], beta=v["beta"], bandwidth=v["bandwidth"],
                                profile=profile)
    elif v["levels"]:
        topology = topology_from_options(levels=v["levels"])
    for kind, size in sizes.items():
        if (size > 1 and f"{kind}_link" not in o.settings and link is None and topology is None
                and "gpu" not in o.settings and swept not in (f"{kind}-link", "profile", "gpu")):
            raise InputError(f"--{kind} {size} communicates but no link was given; pass --gpu NAME (its "
                             "nodes' "
                             f"links), --alpha TIME with --beta TIME/B or --bandwidth RATE, --profile NAME, "
                             f"--level SIZE:ALPHA:RATE per level, or --{kind}-link ALPHA:RATE")
    return link, topology


def _not_also_given(knob: Any, given: frozenset[str]) -> None:
    """An error when an option given sets what *knob* sweeps (``--dp 8 --sweep dp=...``)."""
    from costmodel.errors import InputError

    for name in ("alpha", "beta", "bandwidth", "profile") if knob.name == "profile" else (knob.parameter,):
        if name in given:
            option = _long(name)
            raise InputError(f"{option} is given and --sweep {knob.name}=... varies it; "
                             f"drop {option} or sweep another knob")


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


_JSON = inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Json)
_SWEEP_PARAMETER = inspect.Parameter("sweep", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Sweep)


@app.command("step")
@step_options(_SWEEP_PARAMETER, _JSON)
def step_command(ctx: typer.Context, **values: Any) -> None:
    """Price one training step: compute per operation on a GPU, TP, pipeline and DP communication, memory.

    The model is a transformer shape (--layers --hidden --heads --seq --vocab with --gpu, whose achieved
    rates price each operation, or --peak with --efficiency) or per-layer times (--forward --backward
    --layers). The DP gradient reduction follows --framework; the step is split exactly into its parts.
    With --sweep KNOB=VALUES, one step per value, as a table with the best marked.

    Example: costmodel step --dp 4 --layers 8 -F 2ms -b 4ms --gradient-bytes 50MB --profile ib-hdr

    Example: costmodel step --pp 4 -m 8 --layers 8 -F 2ms -b 4ms --activation-bytes 8MiB --profile ib-hdr

    Example: costmodel step --layers 8 -F 2ms -b 4ms --gradient-bytes 50MB --profile ib-hdr --sweep dp=1..8x2

    A model as people describe it: --model NAME (costmodel models), --hf-config config.json or --megatron
    "ARGS"; --gpus N and --global-batch N derive --dp and -m.

    Example: costmodel step --model llama-3-8b --gpu h100-sxm --tp 8 --cp 2 --gpus 64 --global-batch 256

    A mixture of experts: --experts E --top-k K with the shape, and --ep to spread the experts over the
    dp × cp ranks (docs/howto/estimate-step.md, "Mixture of experts").
    """
    command = StepCommand(values, ctx)
    sweep, as_json = values["sweep"], values["as_json"]
    if sweep is None:
        from costmodel.step import step

        emit(command.noted(step(**command.arguments())), as_json=as_json)
        return
    from costmodel.step import sweep_step

    knob, swept = parse_sweep(sweep)
    arguments = command.arguments((knob, swept))
    emit(command.noted(sweep_step(knob.name, swept, **command.held, **arguments)), as_json=as_json)


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
    return "—" if not whole else format_share(part / whole)


@renders("costmodel.step.model.StepResult")
def render_step(r: StepResult) -> Rendered:
    """The heading, the breakdown of the step, DP overlap, throughput and the buckets of a step."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    chunks = f" · v = {r.chunks}" if r.chunks > 1 else ""
    recompute = {"full": " · full "
                         "recomputation", "selective": " · selective recomputation"}.get(r.recompute, "")
    sp = " · sequence parallel" if r.sequence_parallel and r.tp > 1 else ""
    gpus = f"{r.gpus} GPU{'s' if r.gpus > 1 else ''}"
    cp = f" × cp {r.cp}" if r.cp > 1 else ""
    ep = f" · ep {r.ep}" if r.ep > 1 else ""
    head = markup(f"[bold]step[/bold] · dp {r.dp} × tp {r.tp} × pp {r.pp}{cp} = {gpus}{ep} · "
                  f"{r.schedule}{chunks} · M = {r.microbatches}{recompute}{sp}\n"
                  f"[bold]{format_time(r.step_s)}[/bold] per step\n"
                  f"compute: {escape(r.compute_model)}\n"
                  f"data parallel: {escape(r.mode)}")
    drawn: list[Any] = [head, Text(""), _parts(r), Text(""), _summary(r)]
    notes = [f"warning: {w}" for w in r.warnings] + list(r.notes)
    if r.dp > 1 and len(r.buckets) <= MAX_BUCKET_ROWS:
        last = " in the last micro-batch" if r.zero >= 2 and r.microbatches > 1 else ""
        what = "DP buckets" if r.zero < 3 else "DP reduce-scatters"
        drawn += [Text(""), Text(f"{what} of stage {r.dp_stage}{last}, times from the step's start",
                                 style="dim"), _buckets(r)]
    elif r.dp > 1:
        notes.append(f"buckets table left out: {len(r.buckets)} buckets; --json lists them")
    return Group(*drawn), tuple(notes)


def _parts(r: StepResult) -> Any:
    """The step's time, part by part."""
    parts = table("part", "time", "share", numeric=("time", "share"))
    rows = [("compute", r.compute_s), ("TP communication", r.tp_comm_s)]
    if r.cp > 1:
        rows.append(("exposed CP communication", r.cp_comm_s))
    if r.ep > 1:
        rows.append(("EP all-to-alls", r.ep_comm_s))
    rows += [("pipeline bubble", r.bubble_s), ("exposed PP sends", r.pp_exposed_s),
             ("exposed DP communication", r.dp_exposed_s)]
    if r.contention_s:
        rows.append(("compute slowdown", r.contention_s))
    if r.expert_dp_s:
        rows.append(("expert gradient reduction", r.expert_dp_s))
    rows.append(("optimizer", r.optimizer_s))
    if r.dp > 1 and r.param_gather == "after" and (r.zero in (1, 2) or r.param_gather_s):
        rows.append(("parameter all-gather", r.param_gather_s))  # ZeRO 1 and 2's, DeepSpeed BF16_Optimizer's
    for name, value in rows:
        parts.add_row(name, format_time(value), _share(value, r.step_s))
    parts.add_row("step", format_time(r.step_s), "100%")
    return parts


def _summary(r: StepResult) -> Any:
    """DP overlap, throughput, utilization, memory and scaling."""
    one = Fraction(1)
    summary = table("quantity", "value", header=False)
    if r.dp > 1:
        summary.add_row("DP communication", f"{format_time(r.dp_comm_s)} on stage {r.dp_stage}: "
                                            f"{_collectives(r)}")
        summary.add_row("  hidden", f"{format_time(r.dp_hidden_s)} ({_share(r.dp_hidden_s, r.dp_comm_s)})")
        summary.add_row("  exposed", f"{format_time(r.dp_exposed_s)} ({_share(r.dp_exposed_s, r.dp_comm_s)})")
    if r.ep > 1:
        alltoalls = 6 if r.recompute == "full" else 4
        summary.add_row("EP all-to-all", f"{format_time(r.ep_alltoall_s)} each, {alltoalls} per MoE layer; "
                                         f"{format_size(r.ep_alltoall_bytes)} per rank")
    if r.tokens_per_s is not None:
        summary.add_row("tokens/s", format_count(r.tokens_per_s))
    if r.mfu is not None:
        summary.add_row("MFU", f"{_share(r.mfu, one)} (model FLOPs, no recomputation)")
    if r.hfu is not None and r.recompute != "none":
        summary.add_row("HFU", f"{_share(r.hfu, one)} (hardware FLOPs, with recomputation)")
    if r.six_n_flops is not None and r.model_flops:
        summary.add_row("6·N·tokens", f"{_share(r.six_n_flops / r.model_flops, one)} of the model FLOPs")
    if r.memory is not None:
        top = max(r.memory, key=lambda d: d.total_bytes)
        unit = f"{'chunk-' if r.chunks > 1 else ''}micro-batch{'es' if top.inflight > 1 else ''}"
        where = f" (stage {top.stage})" if r.pp > 1 else ""
        of = ""
        if r.memory_capacity_bytes is not None:
            fits = "fits" if top.total_bytes <= r.memory_capacity_bytes else "does not fit"
            of = f" of {format_size(r.memory_capacity_bytes)}: {fits}"

        def short(n: Fraction) -> str:
            return str(format_size(n).split(" = ")[0])

        summary.add_row("memory per GPU", format_size(top.total_bytes) + where + of)
        summary.add_row("  model states", f"{format_size(top.model_state_bytes)} (weights "
                        f"{short(top.weight_bytes)}, gradients {short(top.gradient_bytes)}, optimizer "
                        f"{short(top.optimizer_bytes)})")
        summary.add_row("  activations", f"{format_size(top.activation_bytes)} ({top.inflight} {unit})")
    summary.add_row("scaling efficiency", f"{_share(r.scaling_efficiency, one)} (against dp = 1)")
    return summary


def _buckets(r: StepResult) -> Any:
    """The critical stage's buckets (ZeRO 3: layers), from ready to end."""
    columns = ("bucket" if r.zero < 3 else "layer", "size", "ready", "start", "end", "exposed")
    buckets = table(*columns, numeric=columns)
    for b in r.buckets:
        buckets.add_row(str(b.index if r.zero < 3 else b.layers[0]), format_size(b.bytes),
                        format_time(b.ready_s), format_time(b.start_s), format_time(b.end_s),
                        format_time(b.exposed_s))
    return buckets


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
    cp = f" × cp {b.cp}" if b.cp > 1 else ""
    ep = f" · ep {b.ep}" if b.ep > 1 else ""
    head = markup(f"[bold]step sweep[/bold] of {r.knob} · {len(r.points)} values\n"
                  f"best: {r.knob} = {format_value(best.value, r.kind)} ({_best_by(r)}), "
                  f"[bold]{format_time(best.step_s)}[/bold] per step\n"
                  f"  dp {b.dp} × tp {b.tp} × pp {b.pp}{cp} = {b.gpus} GPU{'s' if b.gpus > 1 else ''}{ep} · "
                  f"{b.schedule}{chunks} · M = {b.microbatches}")
    columns = (r.knob, "step", "compute", "MP comm", "DP added", "bubble", "tokens/s", "MFU", "scaling", "")
    numeric = columns[1:-1] if r.kind == "name" else columns[:-1]
    rows = table(*columns, numeric=numeric, no_wrap=True, optional=("tokens/s", "compute", "bubble"))
    for i, p in enumerate(r.points):
        value = format_value(p.value, r.kind)
        if p.step_s is None:
            rows.add_row(value, "skipped", "", "", "", "", "", "", "", "")
            continue
        assert p.compute_s is not None and p.data_parallel_s is not None and p.bubble_s is not None
        assert p.model_parallel_s is not None
        rows.add_row(value, format_time(p.step_s), format_time(p.compute_s), format_time(p.model_parallel_s),
                     format_time(p.data_parallel_s),
                     format_time(p.bubble_s),
                     "—" if p.tokens_per_s is None else format_count(p.tokens_per_s),
                     "—" if p.mfu is None else _share(p.mfu, Fraction(1)),
                     _share(p.scaling_efficiency or Fraction(0), Fraction(1)), "best" if i == r.best else "")
    notes = ("MP comm: the busiest device's tensor-, context- and expert-parallel collectives and the "
             "exposed pipeline sends",
             "DP added: exposed data-parallel communication, compute slowdown, ZeRO's parameter "
             "all-gather and the experts' gradient reduction",
             "scaling: the step with dp = 1 over the step (weak scaling)", *r.notes)
    return Group(head, Text(""), rows), notes
