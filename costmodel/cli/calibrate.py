"""``calibrate run|fit|report|compute``: measure or import collective times, fit α and β, write a profile;
measure the compute of a GPU, fit its GEMM curve, write a GPU file.

The numbers come from :mod:`costmodel.calibration`; this module reads files,
renders tables and progress, and writes the profile (never over an existing
file without ``--force``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel._files import check_writable, write_text
from costmodel.cli.layout import markup, table
from costmodel.cli.options import FIT, Json, LogFile, LogFiles, LogRanks, option, time_parser
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.cli.shape import (
    SHAPE_PANEL,
    Ffn,
    Gated,
    HeadDim,
    Heads,
    Hidden,
    KvGroups,
    Layers,
    MicroBatch,
    Seq,
    Vocab,
)

if TYPE_CHECKING:
    from costmodel.calibration.report import CalibrationReport

__all__ = ["app", "calibrate_app"]

app = typer.Typer()
calibrate_app = typer.Typer(no_args_is_help=True,
                            help="Measure α and β (run), or import a log and fit them (fit, report); "
                                 "measure a GPU's compute (compute).")
app.add_typer(calibrate_app, name="calibrate")

Collective = Annotated[str | None, option(
    "--collective", "-c", panel=FIT,
    help="The collective the log measured (checked against the log; needed to choose in a CSV of several).")]
Algorithm = Annotated[str | None, option(
    "--algorithm", "-a", panel=FIT,
    help="The algorithm assumed (default: ring for allreduce and the gathers, pairwise for alltoall, "
         "binomial for broadcast and reduce).")]
Segments = Annotated[int | None, option(
    "--segments", min=1, max=3, panel=FIT,
    help="Size segments to fit (default: 1 to 3, chosen by BIC; one per NCCL protocol regime).")]
InPlace = Annotated[bool, typer.Option(
    "--in-place", rich_help_panel=FIT,
    help="Fit the in-place times (default: out-of-place; in-place where a log has no other).")]
Out = Annotated[Path | None, option(
    "--out", "-o",
    help="Write the fitted profile here (TOML; use it with --profile in every command).")]
Name = Annotated[str | None, option("--name",
                                    help="The profile's name (default: the output file's stem).")]
Title = Annotated[str | None, option("--title", help="The profile's title, one line (default: the fit's "
                                                    "collective, algorithm, p, α and β).")]
Source = Annotated[str | None, option(
    "--source", help="Where the measurements come from, one line (default: the log's # source: line); a key "
                     "of costmodel's references is cited as that reference.")]
Locator = Annotated[str | None, option(
    "--locator", help="Where in --source, one line (a log's path, a table).")]
ALL = "allreduce,allgather,reduce-scatter,broadcast,alltoall,pt2pt"
Force = Annotated[bool, typer.Option("--force", help="Overwrite an existing --out or --csv file.")]


def _read(log: Path, collective: str | None, p: int | None) -> Any:
    from costmodel.calibration import read_log

    return read_log(log, collective=collective, p=p)


def _fit(log: Path, collective: str | None, p: int | None, algorithm: str | None, segments: int | None,
         in_place: bool) -> Any:
    from costmodel.calibration import fit

    return fit(_read(log, collective, p), algorithm=algorithm, p=p, segments=segments,
               in_place=in_place or None)


def _writable(path: Path | None, force: bool) -> None:
    if path is not None:
        check_writable(path, force=force)


def _write_profile(fitted: Any, out: Path | None, name: str | None, force: bool,
                   others: tuple[Any, ...] = (), title: str | None = None, source: str | None = None,
                   locator: str | None = None) -> None:
    """Write *fitted* (the fit ``[link]`` summarises) and the fits of the *others* as one profile."""
    if out is None:
        return
    _writable(out, force)
    text = fitted.to_profile_toml(name=name or out.stem, title=title, others=others, source=source,
                                  locator=locator)
    from costmodel.profiles import parse_profile

    parse_profile(text, path=str(out))  # what we write must load with --profile
    write_text(out, text)


@dataclass(frozen=True)
class _Fitted:
    fit: Any
    warnings: tuple[str, ...]
    profile: Path | None

    def to_dict(self) -> dict[str, Any]:
        out = self.fit.to_dict()
        out["warnings"] = list(self.warnings) + out["warnings"]
        out["profile"] = None if self.profile is None else str(self.profile)
        return out


@calibrate_app.command("fit")
def fit_command(
    logs: LogFiles,
    collective: Collective = None,
    p: LogRanks = None,
    algorithm: Algorithm = None,
    segments: Segments = None,
    in_place: InPlace = False,
    out: Out = None,
    name: Name = None,
    title: Title = None,
    source: Source = None,
    locator: Locator = None,
    force: Force = False,
    as_json: Json = False,
) -> None:
    """Fit α and β to measured logs, per size segment, and optionally write a profile.

    Several collectives (a costmodel CSV as calibrate run writes it, or one log per collective) are
    fitted collective by collective into one profile: all-reduce gives the profile its link table, each
    collective prices with its own segments. --collective fits one. osu_latency's and osu_bw's logs given
    together make one point-to-point fit: α from osu_latency, β from osu_bw.

    JSON: {"collective", "p", "alpha_s", "beta_s_per_byte", "segments": [{"from_bytes",
    "to_bytes", "alpha_s", "beta_s_per_byte", ...}], "median_rel_error", "target", ...}.

    Example: costmodel calibrate fit all_reduce_perf.txt --out cluster.toml

    Example: costmodel calibrate fit osu_allreduce.txt -p 256 --json

    Example: costmodel calibrate fit osu_latency.txt osu_bw.txt --out link.toml
    """
    from costmodel.calibration import fit_logs, read_logs

    groups = tuple(m for log in logs for m in read_logs(log, collective=collective, p=p))
    fits = fit_logs(groups, algorithm=algorithm, p=p, segments=segments, in_place=in_place or None)
    read = tuple(w for m in groups for w in m.warnings)
    chosen, others = _profile_fit(fits)
    _write_profile(chosen, out, name, force, others, title, source, locator)
    emit(_Run(fits, chosen, out, warnings=read) if others else _Fitted(chosen, read, out), as_json=as_json)


@calibrate_app.command("report")
def report_command(
    log: LogFile,
    collective: Collective = None,
    p: LogRanks = None,
    algorithm: Algorithm = None,
    segments: Segments = None,
    in_place: InPlace = False,
    plot: Annotated[Path | None, option(
        "--plot", help="Also draw the report (PNG, SVG or PDF; needs the plot extra).")]
    = None,
    force: Force = False,
    as_json: Json = False,
) -> None:
    """Measured against modelled, size by size: time, relative error, and bus bandwidth.

    Example: costmodel calibrate report all_reduce_perf.txt --plot report.png
    """
    from costmodel.calibration.report import calibration_report, plot_report

    report = calibration_report(_fit(log, collective, p, algorithm, segments, in_place))
    if plot is not None:
        _writable(plot, force)
        plot_report(report, plot)
    emit(report, as_json=as_json)


@calibrate_app.command("run")
def run_command(
    ranks: Annotated[int, option("--ranks", "-p", min=2, show_default=True, help="Processes to start on this "
                                 "machine (ignored under a launcher: torchrun, srun, mpirun).")] = 2,
    backend: Annotated[str, typer.Option("--backend", help="auto (nccl with GPUs, else gloo), nccl or gloo.")]
    = "auto",
    sizes: Annotated[str, typer.Option("--sizes", help="Message sizes, doubling from the first to the last.")]
    = "8B..256MiB",
    collectives: Annotated[str, typer.Option(
        "--collectives", show_default=False,
        help="Comma-separated: allreduce, allgather, reduce-scatter, broadcast, alltoall, pt2pt (ping-pong); "
             "default: all of them.")] = ALL,
    budget: Annotated[Fraction, typer.Option("--budget", metavar="TIME",
                                             parser=time_parser(at_least=Fraction(1, 1000)),
                                             help="Time spent timing each size and placement (at least 1ms).")
                    ] = "200ms",  # type: ignore[assignment]  # Typer parses the default, as it shows it
    timeout: Annotated[Fraction, typer.Option(
        "--timeout", metavar="TIME", parser=time_parser(at_least=Fraction(1)),
        help="Time without progress before the run is declared hung and stopped (at least 1s).",
    )] = "120s",  # type: ignore[assignment]  # Typer parses the default, as it shows it
    csv: Annotated[Path | None, option(
        "--csv",
        help="Raw results, written as they are measured (default: calibration-nccl.csv or "
             "calibration-gloo.csv, after the backend used).")] = None,
    timing: Annotated[str, typer.Option(
        "--timing", help="batched (nccl-tests' method: iterations back to back between two timers) or "
                         "per-iteration (each timed alone, launch included); auto: batched on GPUs, "
                         "per-iteration on CPUs.")] = "auto",
    repeat: Annotated[int, option(
        "--repeat", metavar="N", min=1, max=1000, show_default=True,
        help="Run the whole sweep N times (nccl-tests' -N); each size's mean, p50 and p95 are over "
             "the samples of every sweep.")] = 1,
    out: Out = None,
    name: Name = None,
    title: Title = None,
    force: Force = False,
    as_json: Json = False,
) -> None:
    """Measure collectives over torch.distributed (NCCL on GPUs, gloo on CPUs), fit α and β, write a profile.

    Each size is timed out of place and in place where torch.distributed has both (all-gather,
    reduce-scatter; all-reduce and broadcast run in place only), and the output lists each size's
    mean, p50 and p95 above its collective's fit; --repeat runs the whole sweep again.
    The profile's α and β come from the all-reduce when it was measured (the collective priced most),
    else from the ping-pong (pt2pt); every collective's fit is in the output and the CSV.
    Multi-node: run the same command under torchrun, srun or mpirun (with MASTER_ADDR) on every node.

    JSON: {"backend", "timing", "csv", "repeat", "sizes": [{"collective", "n_bytes", "in_place",
    "samples", "sweeps", "mean_s", "p50_s", "p95_s"}], "profile", "profile_from", "alpha_s",
    "beta_s_per_byte", "warnings", "fits": [...]}.

    Example: costmodel calibrate run --ranks 2 --sizes 8B..64MiB --out cpu.toml

    Example (on every node): torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d
    --rdzv-endpoint HOST:29500 -m costmodel calibrate run --backend nccl --out cluster.toml
    """
    import dataclasses
    import os
    import sys

    from costmodel.calibration import bench, fit
    from costmodel.calibration.launch import launch_from_env

    lo, hi = bench.parse_sizes(sizes)
    chosen = tuple(c.strip() for c in collectives.split(",") if c.strip())
    config = bench.BenchConfig(ranks=ranks, backend=backend, collectives=chosen, min_bytes=lo, max_bytes=hi,
                               budget_s=float(budget), timeout_s=float(timeout), timing=timing, repeat=repeat)
    # the backend auto chooses names the CSV, and the run then uses that one
    used = _backend_warnings(bench, lambda: bench.chosen_backend(config)).backend
    config = dataclasses.replace(config, backend=used, csv_path=csv or Path(f"calibration-{used}.csv"))
    launch = launch_from_env(os.environ)
    lead = launch is None or launch.rank == 0  # under a launcher only rank 0 writes and draws
    if lead:
        _writable(config.csv_path, force)
        _writable(out, force)
    show = lead and not as_json
    try:
        results = _backend_warnings(bench, lambda: _run_with_progress(bench, config, show=show))
    except bench.Interrupted as stop:
        if lead:
            print(str(stop), file=sys.stderr, flush=True)
        raise typer.Exit(130) from None
    if not results.measurements:  # a rank other than 0 under a launcher
        return
    fits = tuple(fit(m) for m in results.measurements)
    chosen_fit, others = _profile_fit(fits)
    _write_profile(chosen_fit, out, name, force, others, title)
    result = _Run(fits, chosen_fit, out, csv=config.csv_path, backend=used,
                  timing=bench.resolved_timing(config.timing, used), spreads=results.spreads, repeat=repeat)
    emit(result, as_json=as_json)


def _profile_fit(fits: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """(the fit ``[link]`` summarises, the others): all-reduce (priced most), else the ping-pong, else
    the first.

    The others keep their own tables in the profile; the summary's notes say so.
    """
    import dataclasses

    chosen = next((f for f in fits if f.collective == "allreduce"), None) or \
        next((f for f in fits if f.collective == "pt2pt"), fits[0])
    others = tuple(f for f in fits if f is not chosen)
    if not others:
        return chosen, others
    listed = ", ".join("the ping-pong (pt2pt)" if f.collective == "pt2pt" else f.collective for f in others)
    verb = "prices" if len(others) == 1 else "price"
    note = (f"[link] and [[segment]] are the {chosen.collective} fit; {listed} {verb} with their own "
            "[collective.NAME] tables")
    return dataclasses.replace(chosen, notes=(*chosen.notes, note)), others


def _backend_warnings(bench: Any, call: Any) -> Any:
    """``call()``, printing a backend fall-back as one ``warning:`` line on stderr."""
    import sys
    import warnings

    def show_warning(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if issubclass(category, bench.BackendWarning):
            print(f"warning: {message}", file=sys.stderr, flush=True)
        else:
            original(message, category, *args, **kwargs)

    original = warnings.showwarning
    with warnings.catch_warnings():
        warnings.simplefilter("always", bench.BackendWarning)
        warnings.showwarning = show_warning
        return call()


def _run_with_progress(bench: Any, config: Any, *, show: bool) -> Any:
    console = _stderr()
    if not show or not console.is_terminal:  # a bar on a pipe leaves a blank line before any error
        return bench.benchmark(config)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), transient=True, console=console) as bar:
        task = bar.add_task("starting ranks", total=None)

        def update(step: Any) -> None:
            from costmodel.units import format_size

            where = " in place" if step.in_place and len(bench.PLACEMENTS[step.collective]) > 1 else ""
            sweep = f" (sweep {step.sweep}/{config.repeat})" if config.repeat > 1 else ""
            size = format_size(step.n_bytes).split(" = ")[0]
            bar.update(task, total=step.total, completed=step.index,
                       description=f"{step.collective} {size}{where}{sweep}")

        return bench.benchmark(config, progress=update)


def _stderr() -> Any:
    from rich.console import Console

    return Console(stderr=True)


@dataclass(frozen=True)
class _Run:
    """Several collectives fitted into one profile: by ``calibrate run``, or ``calibrate fit`` of its CSV."""

    fits: tuple[Any, ...]
    chosen: Any
    profile: Path | None
    csv: Path | None = None
    backend: str | None = None
    timing: str | None = None
    warnings: tuple[str, ...] = ()
    spreads: tuple[Any, ...] = ()
    repeat: int = 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.csv is not None:
            out.update(backend=self.backend, timing=self.timing, csv=str(self.csv), repeat=self.repeat,
                       sizes=[s.to_dict() for s in self.spreads])
        return {**out, "profile": None if self.profile is None else str(self.profile),
                "profile_from": self.chosen.collective,
                "alpha_s": self.chosen.alpha_s, "beta_s_per_byte": self.chosen.beta_s_per_byte,
                "warnings": [*self.warnings,
                             *(f"{f.collective}: {w}" for f in self.fits for w in f.warnings)],
                "fits": [f.to_dict() for f in self.fits]}


# -- rendering -------------------------------------------------------------------------------------


def _size(n: Any) -> str:
    from costmodel.units import format_size

    return format_size(n).split(" = ")[0]


def _time(s: Any) -> str:
    from costmodel.units import format_time

    return format_time(s)


def _beta(b: Any) -> str:
    from costmodel.units import format_inverse_rate

    return format_inverse_rate(b)


def _rate(b: Any) -> str:
    from costmodel.units import format_byte_rate

    return format_byte_rate(1 / b) if b > 0 else "∞"


def _fit_body(f: Any) -> Any:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    head = markup(
        f"[bold]{f.collective}[/bold] · p = {f.p} · assumed {escape(f.algorithm)}: {escape(f.formula)}\n"
        f"[dim]{escape(f.source or f.path)}[/dim]")
    out = table("segment", "sizes", "α", "α, 95 % CI", "β", "1/β", "error", "rows", no_wrap=True,
                numeric=("segment", "α", "β", "1/β", "error", "rows"),
                optional=(("α, 95 % CI", "rows"), "1/β"))
    for i, s in enumerate(f.segments, 1):
        ci = "" if s.alpha_ci_s is None else f"{_time(s.alpha_ci_s[0])} – {_time(s.alpha_ci_s[1])}"
        slope = " (slope)" if i < len(f.segments) else ""
        out.add_row(str(i), f"{_size(s.from_bytes)} – {_size(s.to_bytes)}", _time(s.alpha_s), ci,
                      _beta(s.beta_s_per_byte), _rate(s.beta_s_per_byte) + slope, f"{s.median_rel_error:.2%}",
                      str(s.points))
    ge = "" if f.median_rel_error_ge_1mib is None else f", {f.median_rel_error_ge_1mib:.2%} from 1 MiB on"
    slope = ("; 1/β of a segment before the last is the slope of its regime, not a bandwidth"
             if len(f.segments) > 1 else "")
    summary = Text(f"median |relative error| {f.median_rel_error:.2%} over all sizes{ge}; "
                   f"the profile's [link]: α {_time(f.alpha_s)} from {f.alpha_from}, "
                   f"β {_beta(f.beta_s_per_byte)} = {_rate(f.beta_s_per_byte)} "
                   f"from {f.link_beta_from}; each segment prices the sizes it covers{slope}")
    return Group(head, Text(""), out, Text(""), summary)


@renders("costmodel.cli.calibrate._Fitted")
def _render_fitted(r: _Fitted) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    parts = [_fit_body(r.fit)]
    if r.profile is not None:
        parts += [Text(f"wrote {r.profile} (use it with --profile {r.profile})")]
    return Group(*parts), (tuple(r.warnings) + _warned(r.fit)
                           + tuple(n for n in r.fit.notes if n.startswith("note")))


def _warned(f: Any) -> tuple[str, ...]:
    """The fit's sanity warnings, as ``warning:`` lines."""
    return tuple(f"warning: {w}" for w in f.warnings)


@renders("costmodel.calibration.report.CalibrationReport")
def _render_report(report: CalibrationReport) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    busbw = ("busbw measured", "busbw model")
    out = table("size", "measured", "model", "error", *busbw, "segment", no_wrap=True,
                numeric=("measured", "model", "error", *busbw, "segment"), optional=(busbw,))
    for r in report.rows:
        out.add_row(_size(r.n_bytes), _time(r.measured_s), _time(r.model_s), f"{r.rel_error:+.1%}",
                      f"{r.busbw_measured_bytes_per_s / 1e9:.3g} GB/s",
                      f"{r.busbw_model_bytes_per_s / 1e9:.3g} GB/s",
                      str(r.segment))
    return Group(_fit_body(report.fit), Text(""), out), _warned(report.fit)


def _spread_table(collective: str, spreads: list[Any], repeat: int) -> Any:
    """What calibrate run measured for one collective: each size's mean, p50 and p95."""
    from rich.console import Group

    sweeps = f"{repeat} sweeps" if repeat > 1 else "1 sweep"
    head = markup(f"[bold]{collective}[/bold] · measured, {sweeps}: the mean, p50 and p95 of every timed "
                  "sample, each at its slowest rank")
    out = table("size", "placement", "mean", "p50", "p95", "samples", no_wrap=True,
                numeric=("mean", "p50", "p95", "samples"), optional=("samples",))
    for s in spreads:
        placement = "in place" if s.in_place else "out of place"
        out.add_row(_size(s.n_bytes), placement, *(_time(t) for t in (s.mean_s, s.p50_s, s.p95_s)),
                    str(s.samples))
    return Group(head, out)


@renders("costmodel.cli.calibrate._Run")
def _render_run(run: _Run) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    parts: list[Any] = []
    for f in run.fits:
        measured = [s for s in run.spreads if s.collective == f.collective]
        if measured:
            parts += [_spread_table(f.collective, measured, run.repeat), Text("")]
        parts += [_fit_body(f), Text("")]
    if run.csv is not None:
        parts.append(Text(f"raw results: {run.csv} ({run.backend}, {run.timing} timing)"))
    if run.profile is not None:
        parts.append(Text(f"wrote {run.profile}: [link] from the {run.chosen.collective} fit, every "
                          f"collective with its own segments (use it with --profile {run.profile})"))
    elif run.csv is None:
        parts.pop()  # the blank line after the last fit
    notes = tuple(run.warnings) + tuple(f"warning: {f.collective}: {w}" for f in run.fits for w in f.warnings)
    return Group(*parts), notes



# -- calibrate compute -----------------------------------------------------------------------------

COMPUTE = "Measurement"
_GPU_MODEL = {"hidden": 4096, "heads": 32, "seq": 2048, "vocab": 51200}
"""The products measured on a GPU when no shape is given: a layer of GPT-3 6.7B (h 4096, a 32, s 2048)."""
_CPU_MODEL = {"hidden": 1024, "heads": 16, "seq": 512, "vocab": 32000}
"""On a CPU: a small layer, so that a run takes seconds."""

Tp = Annotated[int, option("--tp", metavar="T", min=1, panel=SHAPE_PANEL,
                           help="Tensor-parallel ranks: the products of one rank (default 1).")]
ComputeName = Annotated[str | None, option(
    "--name", help="The GPU's name in the file (default: <base>-calibrated).")]
GpuForce = Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")]
GpuOut = Annotated[Path | None, option(
    "--out", "-o", help="Write the compute profile here (a GPU file; use it with step --gpu-profile FILE).")]


def _transformer(model: dict[str, Any]) -> Any:
    """The transformer shape of a model's options (one layer unless it gives more)."""
    from costmodel.cli.shape import transformer_shape

    shape = transformer_shape(layers=model.get("layers") or 1, hidden=model["hidden"], heads=model["heads"],
                              seq=model["seq"], vocab=model["vocab"], ffn=model.get("ffn"),
                              kv_groups=model.get("kv_groups"), head_dim=model.get("head_dim"),
                              gated=model.get("gated"))
    assert shape is not None
    return shape


def _transformer_gemms(model: dict[str, Any], micro_batch: int, tp: int) -> tuple[Any, ...]:
    """The matrix products of one layer and of the logits on one tensor-parallel rank, unique, as shapes to
    measure: ``nn.Linear``'s layouts (forward x·Wᵀ, input gradient dY·W, weight gradient dYᵀ·x)."""
    from costmodel.calibration.compute import GemmShape
    from costmodel.errors import InputError
    from costmodel.step.ops import layer_ops, logits_ops

    shape = _transformer(model)
    if shape.heads % tp:
        raise InputError(f"--tp {tp} does not divide --heads {shape.heads}; each tp rank holds whole heads")
    ops = (*layer_ops(shape, micro_batch=micro_batch, tp=tp, attention="unfused"),
           *logits_ops(shape, micro_batch=micro_batch, tp=tp))
    out = []
    for o in ops:
        if o.kind != "gemm":
            continue
        layout = ("nn" if o.batch > 1 or " dgrad" in o.name else "tn" if o.name.endswith("wgrad") else "nt")
        out.append(GemmShape(m=o.m, n=o.n, k=o.k, batch=o.batch, layout=layout, label=o.name))
    return tuple(out)


def _transformer_attention(model: dict[str, Any], micro_batch: int, tp: int) -> Any:
    """The causal fused attention of one layer on one tensor-parallel rank (its heads, and its key-value
    heads, at least one), with the FLOPs the step model counts for it forward and backward."""
    from costmodel.calibration.compute import AttentionShape
    from costmodel.step.ops import layer_ops

    shape = _transformer(model)
    ops = layer_ops(shape, micro_batch=micro_batch, tp=tp, attention="flash", causal=True)
    flops = sum(o.flops for o in ops if o.kind == "attention")
    return AttentionShape(batch=micro_batch, heads=shape.heads // tp, kv_heads=max(1, shape.groups // tp),
                          seq=shape.sequence, head_dim=shape.head_width, flops=round(flops))


def _of_model(measure: Callable[[dict[str, Any], int, int], Any], given: dict[str, Any], micro_batch: int,
              tp: int) -> Any:
    """*measure* of the model the options give, or (none given) a function of the device: of the default
    model of a GPU or of a CPU."""
    if any(given[k] is not None for k in ("hidden", "heads", "seq", "vocab")):
        return measure(given, micro_batch, tp)  # all four, or an error naming those missing
    return lambda gpu: measure({**(_GPU_MODEL if gpu else _CPU_MODEL)}, micro_batch, tp)


def _model_attention(given: dict[str, Any], micro_batch: int, tp: int) -> Any:
    """The attention of the model the options give, or of the default one (the options are checked by
    :func:`_model_shapes` first)."""
    return _of_model(_transformer_attention, given, micro_batch, tp)


def _model_shapes(given: dict[str, Any], micro_batch: int, tp: int) -> Any:
    """The products of the model the options give, or (none given) a function of the device: the
    default model of a GPU or of a CPU."""
    from costmodel.errors import InputError

    if micro_batch < 1:
        raise InputError(f"--micro-batch {micro_batch} is not a whole number of sequences >= 1")
    if given.get("layers") is not None and given["layers"] < 1:
        raise InputError(f"--layers {given['layers']} is not a whole number of layers >= 1")
    named = any(given[k] is not None for k in ("hidden", "heads", "seq", "vocab"))
    if not named and any(given.get(k) is not None for k in ("ffn", "kv_groups", "head_dim", "gated")):
        raise InputError("--ffn, --kv-groups, --head-dim and --gated describe a transformer shape; give "
                         "--hidden --heads --seq --vocab with them")
    return _of_model(_transformer_gemms, given, micro_batch, tp)


@dataclass(frozen=True)
class _Compute:
    """A compute calibration and where its file was written."""

    result: Any
    profile: Path | None

    def to_dict(self) -> dict[str, Any]:
        return {**self.result.to_dict(), "profile": None if self.profile is None else str(self.profile)}


@calibrate_app.command("compute")
def compute_command(
    base: Annotated[str | None, option(
        "--base", metavar="PRESET",
        help="The preset the file starts from (costmodel gpus); default on a GPU: the preset its name "
             "matches; required on a CPU.")] = None,
    dtype: Annotated[str | None, option(
        "--dtype", metavar="DTYPE", panel=COMPUTE,
        help="bf16 (the default on a GPU), fp16, fp32 (the default on a CPU) or tf32.")] = None,
    device: Annotated[str, option("--device", metavar="DEVICE", panel=COMPUTE,
                                  help="auto (the first GPU, else the CPU), cpu, cuda or cuda:N.")] = "auto",
    limit: Annotated[Fraction, typer.Option(
        "--limit", metavar="TIME", parser=time_parser(at_least=Fraction(1)), rich_help_panel=COMPUTE,
        help="Time the measurement may take (at least 1s); it stops between two products and fits "
             "what it measured.")] = "120s",  # type: ignore[assignment]  # Typer parses the default
    quick: Annotated[bool, typer.Option("--quick", rich_help_panel=COMPUTE,
                                        help="Fewer sweep products, samples and bytes: seconds, for CI.")]
    = False,
    attention_kernel: Annotated[str, option(
        "--attention-kernel", metavar="KERNEL", panel=COMPUTE,
        help="The fused attention kernel timed on a GPU: flash (FlashAttention-2, what PyTorch's SDPA runs "
             "first) or cudnn (cuDNN's, what Transformer Engine runs on Hopper).")] = "flash",
    layers: Layers = None, hidden: Hidden = None, heads: Heads = None, seq: Seq = None, vocab: Vocab = None,
    ffn: Ffn = None, kv_groups: KvGroups = None, head_dim: HeadDim = None, gated: Gated = None,
    micro_batch: MicroBatch = 1, tp: Tp = 1,
    out: GpuOut = None,
    name: ComputeName = None,
    force: GpuForce = False,
    as_json: Json = False,
) -> None:
    """Measure this GPU's matrix products, memory bandwidth and kernel launch; fit K0; write a GPU file.

    Times torch.mm over a transformer's products (the shape options; default a GPT-3 6.7B layer on a
    GPU, a small one on a CPU), square products and a sweep of k, then a streaming copy, the
    memory-bound kernels of a layer by kind (norm, softmax, dropout, activation, cross entropy, the
    optimizer), the layer's causal fused attention forward and backward, and a tiny kernel. The file
    starts from --base and sets gemm.achieved (the fastest product), gemm.k_overhead (K0, fitted),
    memory_efficiency, memory_kernels, attention.achieved and launch: step --gpu-profile FILE prices
    with them.

    Example (on a GPU): costmodel calibrate compute --out h100.toml

    Example (on a CPU, a dry run): costmodel calibrate compute --base a100-80gb --quick --out cpu.toml
    """
    import sys

    from costmodel.calibration.compute import ComputeConfig, ComputeInterrupted

    _writable(out, force)
    given = {"layers": layers, "hidden": hidden, "heads": heads, "seq": seq, "vocab": vocab, "ffn": ffn,
             "kv_groups": kv_groups, "head_dim": head_dim, "gated": gated}
    config = ComputeConfig(device=device, dtype=dtype, shapes=_model_shapes(given, micro_batch, tp),
                           quick=quick, limit_s=float(limit), attention_kernel=attention_kernel,
                           attention=_model_attention(given, micro_batch, tp))
    try:
        result = _compute_with_progress(config, _base(config, base), name, show=not as_json)
    except ComputeInterrupted as stop:
        print(str(stop), file=sys.stderr, flush=True)
        raise typer.Exit(130) from None
    _write_gpu_file(result, out, force)
    emit(_Compute(result, out), as_json=as_json)
    if result.measurements.stopped == "interrupted":
        raise typer.Exit(130)


def _base(config: Any, base: str | None) -> str:
    """The preset to start from: --base, else the one this GPU's name matches."""
    if base is not None:
        return base  # checked by the core before anything is measured
    from costmodel.calibration.compute import choose_base, compute_device

    return choose_base(*compute_device(config.device), ask="--base PRESET")


def _write_gpu_file(result: Any, out: Path | None, force: bool) -> None:
    """Write the compute profile, checked first: what is written must load with --gpu-profile."""
    if out is None:
        return
    _writable(out, force)
    text = result.to_gpu_toml()
    from costmodel.gpus import parse_gpu

    parse_gpu(text, path=str(out))
    write_text(out, text)


def _compute_with_progress(config: Any, base: str | None, name: str | None, *, show: bool) -> Any:
    from costmodel.calibration.compute import calibrate_compute

    console = _stderr()
    if not show or not console.is_terminal:
        return calibrate_compute(config, base=base, name=name)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), transient=True, console=console) as bar:
        task = bar.add_task("starting", total=None)

        def update(step: Any) -> None:
            bar.update(task, total=step.total, completed=step.index, description=step.label)

        return calibrate_compute(config, base=base, name=name, progress=update)


def _flops(rate: Any) -> str:
    from costmodel.units import format_flop_rate

    return format_flop_rate(rate)


@renders("costmodel.cli.calibrate._Compute")
def _render_compute(c: _Compute) -> Rendered:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    r = c.result
    m, f = r.measurements, r.fit
    default = "" if m.gpu or m.dtype != "fp32" else " (the default on a CPU: what CPUs run fast)"
    threads = f", {m.threads} threads" if m.threads else ""
    head = markup(f"[bold]calibrate compute[/bold] · {escape(m.device_name)} ({m.device}{threads}) · "
                  f"{m.dtype}{default} · base {r.base}\n[dim]{escape(m.software())}, {m.measured_at}[/dim]")
    rows = table("product", "m×n×k", "measured", "model", "error", "bound", no_wrap=("m×n×k",),
                 numeric=("measured", "model", "error"), optional=("bound",))
    for g, row in zip(m.gemms, f.rows, strict=True):
        s = g.shape
        batch = f" ×{s.batch}" if s.batch > 1 else ""
        rows.add_row(s.label, f"{s.m}×{s.n}×{s.k}{batch}", _flops(row.flops_per_s),
                     _flops(row.model_flops_per_s), f"{row.rel_error:+.1%}", row.bound)
    best = "×".join(map(str, f.achieved_shape))
    lines = [
        f"memory: {_rate_text(m.bandwidth_bytes_per_s)} by out.copy_(x) ({_size(m.copy_bytes)} read and "
        f"written) = {float(r.memory_efficiency):.2%} of the {_rate_text(r.datasheet_bandwidth_bytes_per_s)} "
        f"of {r.base} (memory_efficiency)",
        *([("memory-bound kernels, forward and backward: " + ", ".join(
            f"{k.kind.replace('_', ' ')} {_rate_text(k.bandwidth_bytes_per_s)} = {float(share):.2%}"
            for k, (_, share) in zip(m.kernels, r.memory_kernels, strict=True)) + " (memory_kernels)")]
          if m.kernels else []),
        *([_attention_line(r)] if m.attention is not None and r.attention_flops_per_s is not None else []),
        f"launch: {_time(m.launch_s)} per tiny kernel (x.add_(1), {m.launch_calls} back to back)",
        f"fit: K0 = {f.k_overhead}, plateau {_flops(f.plateau_flops_per_s)} through the fastest product, "
        f"{best} at {_flops(f.achieved_flops_per_s)} (gemm.achieved); median |error| "
        f"{f.median_rel_error:.1%} over {len(f.rows)} products; {f.sms} SMs, tile {f.tile[0]} × {f.tile[1]}",
    ]
    if c.profile is not None:
        flag = "" if m.dtype == "bf16" else f" --dtype {m.dtype}"
        lines.append(f"wrote {c.profile} (use it with costmodel step --gpu-profile {c.profile}{flag})")
    notes = tuple(f"warning: {w}" for w in r.warnings) + tuple(r.notes[2:])
    return Group(head, Text(""), rows, Text(""), *(Text(line) for line in lines)), notes


def _attention_line(r: Any) -> str:
    """The fused attention's measured rate, as a share of the peak where the fit has one."""
    m, peak, rate = r.measurements, r.fit.peak_flops_per_s, r.attention_flops_per_s
    share = f" = {float(rate / peak):.2%} of the {m.dtype} peak" if peak else ""
    curve = m.attention_curve
    longer = "" if curve is None else (
        f"; {_flops(curve.flops_per_s)} at {curve.shape.seq} tokens: each block of queries' fixed work worth "
        f"{r.attention_k_overhead} keys (attention.k_overhead)")
    return (f"attention: {_flops(rate)}{share}, F.scaled_dot_product_attention ({m.attention.kernel}, "
            f"causal) forward and backward at {m.attention.shape.text()} (attention.achieved){longer}")


def _rate_text(rate: Any) -> str:
    from costmodel.units import format_byte_rate

    return format_byte_rate(rate)
