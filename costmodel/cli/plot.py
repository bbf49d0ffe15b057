"""``plot time|regions|breakdown|consensus|pipeline|calibration|nccl|step|plan|staleness|ssp-throughput``: the
models drawn to PNG or SVG.

Each command computes its data with :mod:`costmodel.plots` (one call), draws it to
``--out FILE.png|FILE.svg`` (never over an existing file without ``--force``; needs the
``plot`` extra, matplotlib) and, with ``--json``, prints the plotted data as one JSON
object in SI units; ``--json`` without ``--out`` prints the data only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer

from costmodel.cli import complete
from costmodel.cli.nccl import (
    Algo,
    Arch,
    BwInter,
    BwIntra,
    Channels,
    CollNet,
    Cpu,
    HostsPerNode,
    Intra,
    NetLatency,
    Nvls,
    Overrides,
    Preset,
    Proto,
    Version,
)
from costmodel.cli.nccl import Collective as NcclCollective
from costmodel.cli.nccl import Nodes as NcclNodes
from costmodel.cli.nccl import Ranks as NcclRanks
from costmodel.cli.options import (
    FIT,
    Alpha,
    Bandwidth,
    Beta,
    Gamma,
    LogFile,
    LogRanks,
    MaxSize,
    MinSize,
    Profile,
    Ranks,
    Size,
    link_from_options,
    option,
)
from costmodel.cli.output import emit
from costmodel.cli.pipeline import Backward, Chunks, Forward, Microbatches, Stages, Weight
from costmodel.cli.plan import EXAMPLE as PLAN_EXAMPLE
from costmodel.cli.plan import plan_arguments, plan_from_options, plan_options
from costmodel.cli.render import Rendered, renders
from costmodel.cli.step import StepCommand, parse_sweep, step_options
from costmodel.cli.step import Sweep as StepSweepOption
from costmodel.errors import InputError

__all__ = ["app", "plot_app"]

app = typer.Typer()
plot_app = typer.Typer(no_args_is_help=True,
                       help="Draw the models: time against size, best-algorithm regions, α/β/γ "
                            "breakdown, gossip, pipeline Gantt charts, calibration fits, NCCL's model, "
                            "a training step, a plan's frontier, staleness under BSP/SSP/ASP, SSP's "
                            "throughput (PNG or SVG; needs the plot extra).")
app.add_typer(plot_app, name="plot")

_OUTPUT = "Output"
Out = Annotated[Path | None, option(
    "--out", "-o", metavar="FILE.png|FILE.svg", panel=_OUTPUT,
    help="The image to write, PNG or SVG by its suffix (required unless --json).")]
Force = Annotated[bool, typer.Option("--force", rich_help_panel=_OUTPUT,
                                     help="Overwrite an existing --out file.")]
Json = Annotated[bool, typer.Option(
    "--json", rich_help_panel=_OUTPUT,
    help="Print the plotted data as one JSON object (SI units); with --out the image is drawn too.")]
Collective = Annotated[str, typer.Argument(help="allreduce, reduce-scatter, allgather, broadcast, reduce, "
                                                "alltoall, gather or scatter (aliases accepted).",
                                           show_default=False, autocompletion=complete.collectives)]
Algorithms = Annotated[list[str] | None, typer.Argument(
    help="Algorithms to draw (default: every one that can run).", show_default=False,
    autocompletion=complete.algorithms)]

_GIB = Fraction(2**30)

LogCollective = Annotated[str | None, option(
    "--collective", "-c", panel=FIT,
    help="The collective the log measured (checked against the log; chooses within a CSV of several).")]
FitAlgorithm = Annotated[str | None, option(
    "--algorithm", "-a", panel=FIT,
    help="The algorithm assumed (default: as `costmodel calibrate fit`).")]


@dataclass(frozen=True)
class _Plotted:
    """The plotted data, its title, and where the image went (None with --json alone)."""

    kind: str
    title: str
    data: Any
    out: Path | None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"plot": self.kind, "title": self.title, **self.data.to_dict(),
                "out": None if self.out is None else str(self.out)}


def _target(out: Path | None, force: bool, as_json: bool) -> Path | None:
    """The checked output path, before any work; matplotlib is looked for here too."""
    from costmodel.plots import check_output
    from costmodel.plots._figure import pyplot

    if out is None:
        if as_json:
            return None
        raise InputError("no --out given; name the image, e.g. --out plot.png or --out plot.svg "
                         "(or pass --json for the data only)")
    target = check_output(out, force=force)
    pyplot()
    return target


def _finish(kind: str, data: Any, draw: Callable[..., Path], target: Path | None, *, force: bool,
            as_json: bool, title: str | None = None) -> None:
    if target is not None:
        draw(data, target, force=force)
    notes = tuple(getattr(data, "notes", ()))
    emit(_Plotted(kind, title or data.title, data, target, notes), as_json=as_json)


@plot_app.command("time")
def time_command(
    collective: Collective,
    ranks: Ranks,
    algorithms: Algorithms = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None,
    min_size: MinSize = Fraction(1),
    max_size: MaxSize = _GIB,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """Time against message size (log–log) for each algorithm, every crossover marked and labelled.

    Default sizes 1 B to 1 GiB. The crossovers are exact (as `costmodel crossover`); filled ones are
    where the cheapest algorithm changes.

    Example: costmodel plot time allreduce -p 16 --alpha 5us --beta 0.08ns/B --out time.png
    """
    from costmodel.plots import draw_time_plot, time_plot

    target = _target(out, force, as_json)
    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    data = time_plot(collective, algorithms, p=ranks, link=link, min_bytes=min_size, max_bytes=max_size)
    _finish("time", data, draw_time_plot, target, force=force, as_json=as_json)


@plot_app.command("regions")
def regions_command(
    collective: Collective,
    algorithms: Algorithms = None,
    p_min: Annotated[int, typer.Option("--p-min", help="Smallest number of ranks.")] = 2,
    p_max: Annotated[int, typer.Option("--p-max", help="Largest number of ranks (every p between; sampled "
                                       "beyond 1024 values).")] = 1024,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None,
    min_size: MinSize = Fraction(1),
    max_size: MaxSize = _GIB,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """The cheapest algorithm over ranks p and message size n, as a map of coloured, hatched regions.

    The grid: every p from --p-min to --p-max, and 4 sizes per octave (every power of two) from --min to
    --max (default 1 B to 1 GiB). JSON: "best" is a p × n table of indices into "algorithms".

    Example: costmodel plot regions allreduce --p-max 1024 --alpha 5us --beta 0.08ns/B --out regions.svg
    """
    from costmodel.plots import draw_region_map, region_map

    target = _target(out, force, as_json)
    data = region_map(collective, algorithms,
                      link=link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective),
                      p_min=p_min, p_max=p_max, min_bytes=min_size, max_bytes=max_size)
    _finish("regions", data, draw_region_map, target, force=force, as_json=as_json)


@plot_app.command("breakdown")
def breakdown_command(
    collective: Collective,
    ranks: Ranks,
    size: Size,
    algorithms: Algorithms = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """Each algorithm's time split into its α (latency), β (bandwidth) and γ (compute) terms, as stacked bars.

    Example: costmodel plot breakdown allreduce -p 16 -n 1MiB --profile textbook --gamma 0.02ns/B --out bd.png
    """
    from costmodel.plots import draw_breakdown, time_breakdown

    target = _target(out, force, as_json)
    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    data = time_breakdown(collective, algorithms, p=ranks, n=size, link=link)
    _finish("breakdown", data, draw_breakdown, target, force=force, as_json=as_json)


@plot_app.command("consensus")
def consensus_command(
    graphs: Annotated[str, typer.Argument(
        metavar="GRAPH[,GRAPH...]", show_default=False, autocompletion=complete.graph_lists,
        help="Graphs to compare: ring, k-ring, torus, hypercube, complete, star, exponential, "
             "random-regular, erdos-renyi.")],
    ranks: Ranks,
    rounds: Annotated[int, option("--rounds", "-r", metavar="R", min=1, show_default=True,
                                  help="Rounds to simulate.")] = 30,
    weights: Annotated[str, typer.Option(
        "--weights", "-w", metavar="SCHEME", help="uniform, metropolis, lazy or best-constant.")] = "uniform",
    degree: Annotated[int | None, option(
        "--degree", "-k", metavar="K",
        help="Degree, for the graphs that take one (k-ring, random-regular, erdos-renyi).")] = None,
    seed: Annotated[int | None, option(
        "--seed", metavar="S", help="Seed of the random graphs (default 0).")] = None,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """Disagreement against rounds of gossip on several graphs (log axis), each with its ρ^r·d₀ envelope.

    Every graph starts from the same vector x₀ = (0, 1, …, p − 1).

    Example: costmodel plot consensus ring,torus,hypercube,exponential -p 16 --rounds 30 --out gossip.png
    """
    from costmodel.plots import consensus_plot, draw_consensus_plot

    target = _target(out, force, as_json)
    data = consensus_plot(graphs, ranks, rounds=rounds, weights=weights, degree=degree, seed=seed)
    _finish("consensus", data, draw_consensus_plot, target, force=force, as_json=as_json)


@plot_app.command("pipeline")
def pipeline_command(
    stages: Stages,
    microbatches: Microbatches,
    schedule: Annotated[str, typer.Option(
        "--schedule", "-s", metavar="NAME",
        help="gpipe, 1f1b, interleaved, zb-h1, or all (one panel each).")] = "all",
    chunks: Chunks = None,
    forward: Forward = None, backward: Backward = None, weight: Weight = None,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """Gantt charts of pipeline schedules: a row per stage, F / B / W bars with their micro-batch, idle grey.

    Example: costmodel plot pipeline -P 4 -m 8 --schedule all --out pipeline.png
    """
    from costmodel.plots import draw_pipeline_plot, pipeline_plot

    target = _target(out, force, as_json)
    data = pipeline_plot(schedule, stages, microbatches=microbatches, chunks=chunks,
                         forward_slots=1 if forward is None else forward, backward_slots=backward,
                         weight_slots=weight)
    _finish("pipeline", data, draw_pipeline_plot, target, force=force, as_json=as_json)


@plot_app.command("calibration")
def calibration_command(
    log: LogFile,
    p: LogRanks = None,
    collective: LogCollective = None,
    algorithm: FitAlgorithm = None,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """A benchmark log against its fitted α–β model: time, bus bandwidth and residuals by size.

    JSON: the calibration report (as `costmodel calibrate report --json`).

    Example: costmodel plot calibration all_reduce_perf.txt --out fit.png
    """
    from costmodel.plots import calibration_plot, calibration_title, draw_calibration_plot

    target = _target(out, force, as_json)
    data = calibration_plot(log, p=p, collective=collective, algorithm=algorithm)
    _finish("calibration", data, draw_calibration_plot, target, force=force, as_json=as_json,
            title=calibration_title(data))


@plot_app.command("nccl")
def nccl_command(
    collective: NcclCollective,
    ranks: NcclRanks = None,
    nodes: NcclNodes = None,
    preset: Preset = None,
    arch: Arch = None, channels: Channels = None, bw_intra: BwIntra = None, bw_inter: BwInter = None,
    intra: Intra = "nvlink",
    net_latency: NetLatency = Fraction(0),
    cpu: Cpu = "intel", nvls: Nvls = False, collnet: CollNet = False,
    hosts_per_node: HostsPerNode = 1,
    algo: Algo = None, proto: Proto = None, nccl_version: Version = "2.30", overrides: Overrides = None,
    min_size: MinSize = Fraction(1),
    max_size: MaxSize = _GIB,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """NCCL's model against message size (log–log): every (algorithm, protocol) it considers, its choice.

    The hardware as `costmodel nccl` takes it. Default sizes 1 B to 1 GiB; the switches of the choice
    are exact (as `costmodel nccl COLLECTIVE --min --max`).

    Example: costmodel plot nccl allreduce --ranks 16 --preset dgx-h100 --max 8GiB --out nccl.png
    """
    from costmodel.nccl.hardware import Hardware
    from costmodel.plots import draw_nccl_plot, nccl_plot

    target = _target(out, force, as_json)
    hardware = Hardware(preset, arch, channels, bw_intra, bw_inter, intra, net_latency, cpu, nvls, collnet,
                        hosts_per_node)
    system = hardware.system(ranks=ranks, nodes=nodes)
    data = nccl_plot(collective, system, min_bytes=min_size, max_bytes=max_size, version=nccl_version,
                     algo=algo, proto=proto, overrides=None if overrides is None else str(overrides))
    _finish("nccl", data, draw_nccl_plot, target, force=force, as_json=as_json)


_KEYWORD = inspect.Parameter.KEYWORD_ONLY


@plot_app.command("step")
@step_options(inspect.Parameter("sweep", _KEYWORD, default=None, annotation=StepSweepOption),
              inspect.Parameter("out", _KEYWORD, default=None, annotation=Out),
              inspect.Parameter("force", _KEYWORD, default=False, annotation=Force),
              inspect.Parameter("as_json", _KEYWORD, default=False, annotation=Json))
def step_command(ctx: typer.Context, **values: Any) -> None:
    """A training step as a Gantt chart: per stage a compute row (F / B / W) and a communication row.

    The options are those of `costmodel step`. Each stage's compute row shows its operations with
    their micro-batch, its communication row the data-parallel collectives with their bucket; the
    optimizer and the step's end are marked. With --sweep KNOB=VALUES: step time and MFU against
    the knob, the fastest value starred.

    Example: costmodel plot step --dp 4 --layers 4 -F 1s -b 2s --gradient-bytes 9GB --profile ib-hdr -o s.png
    """
    from costmodel.plots import draw_step_chart, draw_step_sweep, step_chart
    from costmodel.step import step, sweep_step

    out, force, as_json, sweep = values["out"], values["force"], values["as_json"], values["sweep"]
    target = _target(out, force, as_json)
    command = StepCommand(values, ctx)
    if sweep is None:
        _finish("step", step_chart(step(**command.arguments())), draw_step_chart, target, force=force,
                as_json=as_json)
        return
    knob, swept = parse_sweep(sweep)
    data = sweep_step(knob.name, swept, **command.arguments((knob, swept)))
    _finish("step sweep", data, draw_step_sweep, target, force=force, as_json=as_json)


_PLAN_HELP = f"""A plan's frontier: each configuration it priced, step time against memory per GPU, the front.

The options are those of `costmodel plan`. The ranked rows are filled, the best starred, the front of the
priced configurations joined and the GPU's memory drawn; configurations the bound pruned are slower than
the last row and are not drawn.

Example: costmodel plot plan {PLAN_EXAMPLE} -o plan.png
"""


@plot_app.command("plan")
@plan_options(inspect.Parameter("out", _KEYWORD, default=None, annotation=Out),
              inspect.Parameter("force", _KEYWORD, default=False, annotation=Force),
              inspect.Parameter("as_json", _KEYWORD, default=False, annotation=Json))
def plan_command(**values: Any) -> None:
    from costmodel.plots import draw_plan_frontier

    out, force, as_json = values["out"], values["force"], values["as_json"]
    target = _target(out, force, as_json)
    data = plan_from_options(**plan_arguments(values))
    _finish("plan", data, draw_plan_frontier, target, force=force, as_json=as_json)


plan_command.__doc__ = _PLAN_HELP  # its example names the shape of costmodel plan's help


@renders("costmodel.cli.plot._Plotted")
def _render(result: _Plotted) -> Rendered:
    from rich.text import Text

    return Text(f"wrote {result.out}: {result.title}"), result.notes


SyncCompute = Annotated[str, option(
    "--compute", metavar="TIMES|DIST",
    help="Step times: a list 1s,1s,2s (worker i's fixed time) or lognormal:MEDIAN,SHAPE, exp:SHIFT,MEAN, "
         "uniform:LOW,HIGH (drawn per worker and step).")]
SyncWorkers = Annotated[int | None, option(
    "--workers", metavar="N", min=1,
    help="Workers (default: the list's length; needed with a distribution).")]
SyncSteps = Annotated[int, option("--steps", metavar="T", show_default=True, min=1,
                                  help="Steps each worker runs.")]
SyncSeed = Annotated[int, option("--seed", metavar="S", show_default=True, min=0,
                                 help="The seed of the drawn step times.")]


@plot_app.command("staleness")
def staleness_command(
    compute: SyncCompute,
    workers: SyncWorkers = None,
    steps: SyncSteps = 1000,
    rule: Annotated[str, option("--rule", metavar="RULE", show_default=True,
                                help="bsp, ssp, asp, or all (SSP when --bound is given).")] = "all",
    bound: Annotated[int | None, option("--bound", metavar="S", min=0,
                                        help="SSP's bound: no worker more than S steps ahead.")] = None,
    seed: SyncSeed = 0,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """The staleness histogram of BSP, SSP and ASP, a panel per rule, from `costmodel federated sync`.

    Example: costmodel plot staleness --workers 8 --compute lognormal:1s,0.5 --bound 2 --out stale.png
    """
    from costmodel.plots import draw_staleness_plot
    from costmodel.training.synchrony import simulate_sync

    target = _target(out, force, as_json)
    data = simulate_sync(rule, step_times=compute, steps=steps, workers=workers, bound=bound, seed=seed)
    _finish("staleness", data, draw_staleness_plot, target, force=force, as_json=as_json)


@plot_app.command("ssp-throughput")
def ssp_throughput_command(
    compute: SyncCompute,
    workers: SyncWorkers = None,
    steps: SyncSteps = 1000,
    bounds: Annotated[str | None, option("--bounds", metavar="S,S,...",
                                         help="SSP's bounds to run (default 0 to 8).")] = None,
    seed: SyncSeed = 0,
    out: Out = None, force: Force = False, as_json: Json = False,
) -> None:
    """Updates per second against SSP's bound s, with BSP's and ASP's, all on the same step times.

    Example: costmodel plot ssp-throughput --workers 8 --compute lognormal:1s,0.5 --out ssp.png
    """
    from costmodel.plots import draw_ssp_sweep
    from costmodel.training.synchrony import ssp_sweep

    target = _target(out, force, as_json)
    data = ssp_sweep(step_times=compute, bounds=bounds, steps=steps, workers=workers, seed=seed)
    _finish("ssp-throughput", data, draw_ssp_sweep, target, force=force, as_json=as_json)
