"""``nccl``: what NCCL's own tuning model chooses and predicts, a log compared with it, presets.

``costmodel nccl COLLECTIVE ...`` is ``costmodel nccl predict COLLECTIVE ...``: the group reads an
unknown first word as the collective (:class:`CollectiveGroup`), so the collective and the
sub-commands ``compare``, ``preset`` and ``presets`` share one word.  The numbers come from
:mod:`costmodel.nccl`, the results each command shows from :mod:`costmodel.nccl.reports`; this
module reads the options into a :class:`~costmodel.nccl.System` and renders the results (never
over an existing file without ``--force``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from costmodel.cli.layout import markup, prose, table
from costmodel.cli.options import Json, MaxSize, MinSize, OptionalSize, option, value_parser
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.errors import InputError

if TYPE_CHECKING:
    from costmodel.nccl.check import Check
    from costmodel.nccl.compare import Comparison
    from costmodel.nccl.reports import Calibrated, Predicted, PresetList, PresetText, Ranges

__all__ = ["COLLECTIVES", "CollectiveGroup", "app", "nccl_app"]

COLLECTIVES = ("allreduce", "allgather", "reduce-scatter", "broadcast", "reduce")
"""The collectives NCCL's tuning model covers, by costmodel's names."""


class CollectiveGroup(TyperGroup):
    """A group whose first word, when it names no sub-command, is the collective of ``predict``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            from costmodel.collectives._registry import collective
            from costmodel.errors import UnknownNameError

            try:
                collective(args[0])
            except InputError:  # what this group accepts: the modelled collectives and its commands
                raise UnknownNameError(
                    "collective or command", args[0], (*COLLECTIVES, *self.commands)
                ) from None
            args = ["predict", *args]
        return super().resolve_command(ctx, args)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        from click.shell_completion import CompletionItem

        return [
            *super().shell_complete(ctx, incomplete),
            *(CompletionItem(c) for c in COLLECTIVES if c.startswith(incomplete)),
        ]


app = typer.Typer()
nccl_app = typer.Typer(
    cls=CollectiveGroup,
    no_args_is_help=True,
    help="What NCCL's own tuning model (2.30, 2.21) chooses and predicts.\n\n"
    "costmodel nccl COLLECTIVE ... is costmodel nccl predict COLLECTIVE ...: one size (-n) or the "
    "size ranges of each choice (--min/--max). compare sets a nccl-tests log beside the model; "
    "preset builds a hardware description from an NCCL_DEBUG=INFO log; presets lists the shipped "
    "ones.",
)
app.add_typer(nccl_app, name="nccl")

_HARDWARE = "Hardware (what NCCL's topology search finds)"
_NCCL = "NCCL"


_BARE = re.compile(r"\s*[+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?(?:\s*/\s*[0-9]+)?\s*")
"""Text that is a number alone, read by the package's rule (:func:`costmodel.exact.parse_number`): a
decimal, an exponent of at most ±60 (as with a unit; 1e99999999 would take minutes to expand), a ratio."""


def _bare(text: str) -> Fraction | None:
    """*text* as a bare number, or None for text with a unit."""
    from costmodel.exact import parse_number

    return parse_number(text) if _BARE.fullmatch(text) else None


def _gb_per_s(text: str) -> Fraction:
    """GB/s per channel: a bare number, as NCCL prints it, or a rate with its unit."""
    bare = _bare(text)
    if bare is not None:
        return bare
    from costmodel.units import parse_rate

    return Fraction(parse_rate(text, require_unit=True)) / 10**9


def _microseconds(text: str) -> Fraction:
    """µs: a bare number, as NCCL's tables are written, or a time with its unit."""
    bare = _bare(text)
    if bare is not None:
        return bare
    from costmodel.units import parse_time

    return Fraction(parse_time(text, require_unit=True)) * 10**6


def _complete_presets(ctx: Any, incomplete: str) -> list[str]:
    from costmodel.nccl import preset_names

    return [n for n in preset_names() if n.startswith(incomplete)]


def _complete_collectives(ctx: Any, incomplete: str) -> list[str]:
    return [c for c in COLLECTIVES if c.startswith(incomplete)]


Collective = Annotated[
    str,
    typer.Argument(
        metavar="COLLECTIVE",
        help="allreduce, allgather, reduce-scatter, broadcast or reduce (aliases accepted).",
        show_default=False,
        autocompletion=_complete_collectives,
    ),
]
Ranks = Annotated[int | None, option("--ranks", "-p", help="nRanks: GPUs in the communicator (≥ 2).")]
Nodes = Annotated[
    int | None, option("--nodes", help="nNodes (default: ranks / GPUs per node of the preset, else 1).")
]
Preset = Annotated[
    str | None,
    option(
        "--preset",
        metavar="NAME|FILE",
        panel=_HARDWARE,
        autocompletion=_complete_presets,
        help="A shipped preset (see `costmodel nccl presets`) or a preset TOML file.",
    ),
]
Arch = Annotated[
    str | None,
    option(
        "--arch",
        metavar="SM",
        panel=_HARDWARE,
        help="Compute capability: sm80 (A100), sm90 (H100), sm100 (B200).",
    ),
]
Channels = Annotated[
    int | None,
    option(
        "--channels", metavar="C", panel=_HARDWARE, help="Channels of the ring and tree graphs (1 to 64)."
    ),
]
BwIntra = Annotated[
    Fraction | None,
    option(
        "--bw-intra",
        metavar="GB/s",
        panel=_HARDWARE,
        parser=value_parser(_gb_per_s),
        help="Bandwidth per channel inside a node, GB/s (bare, as NCCL prints it) or with a unit.",
    ),
]
BwInter = Annotated[
    Fraction | None,
    option(
        "--bw-inter",
        metavar="GB/s",
        panel=_HARDWARE,
        parser=value_parser(_gb_per_s),
        help="Bandwidth per channel across nodes (needed on several nodes).",
    ),
]
Intra = Annotated[
    str,
    option(
        "--intra", metavar="nvlink|pci", panel=_HARDWARE, show_default=True, help="The link inside a node."
    ),
]
NetLatency = Annotated[
    Fraction,
    option(
        "--net-latency",
        metavar="US",
        panel=_HARDWARE,
        parser=value_parser(_microseconds),
        show_default=True,
        help="Extra network latency the network plugin reports and NCCL's tuning adds across nodes "
        "(latencyInter; aws-ofi-nccl reports 75 µs on p4d and p5), µs bare or with a unit; with --preset, "
        "added to its network.",
    ),
]
Cpu = Annotated[
    str,
    option(
        "--cpu",
        metavar="intel|amd|arm",
        panel=_HARDWARE,
        show_default=True,
        help="Host CPU: an x86 vendor (intel, amd, zhaoxin), or arm (Grace) or power (NCCL's network "
             "overhead depends on it).",
    ),
]
Nvls = Annotated[
    bool,
    typer.Option(
        "--nvls", rich_help_panel=_HARDWARE, help="NVLink SHARP usable (an NVLS graph of 16 channels)."
    ),
]
CollNet = Annotated[
    bool, typer.Option("--collnet", rich_help_panel=_HARDWARE, help="CollNet (SHARP in the network) enabled.")
]
HostsPerNode = Annotated[
    int,
    option(
        "--hosts-per-node",
        metavar="H",
        panel=_HARDWARE,
        min=1,
        show_default=True,
        help="Hosts one node spans: one NVLink domain over several hosts (Multi-Node NVLink, a GB200 or "
             "GB300 NVL72 rack of 18), which NCCL counts as one node; the log's hosts then count no nodes.",
    ),
]
Algo = Annotated[
    str | None,
    option(
        "--algo",
        metavar="LIST",
        panel=_NCCL,
        help="NCCL_ALGO: ring,tree  ^nvls  allreduce:tree;broadcast:ring.",
    ),
]
Proto = Annotated[
    str | None, option("--proto", metavar="LIST", panel=_NCCL, help="NCCL_PROTO: LL,LL128  ^LL128.")
]
Version = Annotated[
    str,
    option(
        "--nccl-version",
        metavar="V",
        panel=_NCCL,
        show_default=True,
        help="The NCCL release modelled: 2.30 or 2.21.",
    ),
]
Overrides = Annotated[
    Path | None,
    option(
        "--overrides",
        metavar="TOML",
        panel=_NCCL,
        help="Constants a tuner plugin would set (base_latencies, hw_latencies, the bandwidth caps).",
    ),
]
AsMeasured = Annotated[
    bool,
    option(
        "--as-measured",
        panel=_NCCL,
        help="Predict what nccl-tests measures: NCCL's choice with a per-call overhead and each protocol's "
        "achieved share of its bandwidth (calibrated on published logs; see --overheads).",
    ),
]
OverheadsFile = Annotated[
    Path | None,
    option(
        "--overheads",
        metavar="TOML",
        panel=_NCCL,
        help="The overheads of --as-measured from a file `costmodel nccl calibrate` wrote (default: "
        "the shipped ones).",
    ),
]

GpusPerThread = Annotated[
    int | None,
    option(
        "--gpus-per-thread",
        metavar="G",
        min=1,
        max=1024,
        panel=_NCCL,
        help="nccl-tests' -g: the GPUs each of its threads drives, which --as-measured prices (default 1, "
        "one process per GPU as mpirun or srun runs it; a single process for a node is -g 8).",
    ),
]


LogNodes = Annotated[
    int | None,
    option("--nodes", help="nNodes, when the log's # Rank lines do not name every rank (checked against them "
           "otherwise)."),
]
LogRanks = Annotated[
    int | None,
    option("--ranks", min=2, help="The ranks, when the log does not say them: no # Rank lines, or lines "
           "cut short, and a busbw/algbw that allows several."),
]
LogCollective = Annotated[
    str | None,
    option("--collective", metavar="NAME",
           help="The collective, when the log does not name its test (all_reduce_perf, ...)."),
]
LogVersion = Annotated[
    str | None,
    option("--nccl-version", metavar="V", panel=_NCCL,
           help="The NCCL release modelled, 2.30 or 2.21 (default: the nearest to the release the log ran, "
           "else 2.30)."),
]


def _measured(as_measured: bool, overheads: Path | None, gpus_per_thread: int | None = None) -> Any:
    """The overheads to predict with (None: NCCL's estimate alone)."""
    if overheads is not None and not as_measured:
        raise InputError("--overheads sets the constants of --as-measured; add --as-measured")
    if gpus_per_thread is not None and not as_measured:
        raise InputError("--gpus-per-thread sets the launch --as-measured prices; add --as-measured")
    if not as_measured:
        return None
    from costmodel.nccl.measured import load_overheads

    return load_overheads(overheads).launched(gpus_per_thread)


def _hardware(*given: Any) -> Any:
    """The :class:`~costmodel.nccl.hardware.Hardware` of the hardware options, in their order."""
    from costmodel.nccl.hardware import Hardware

    return Hardware(*given)


def _overrides(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _where(system: Any) -> str:
    """``16 ranks on 2 nodes × 8 · preset dgx-h100``."""
    nodes = f"{system.nodes} node" + ("s" if system.nodes > 1 else "")
    per = f" × {system.ranks_per_node}" if system.nodes > 1 else ""
    source = "explicit hardware" if system.name == "explicit" else f"preset {system.name}"
    return f"{system.ranks} ranks on {nodes}{per} · {source}"


@nccl_app.command("predict")
def predict_command(
    collective: Collective,
    size: OptionalSize = None,
    min_size: MinSize = None,
    max_size: MaxSize = None,
    ranks: Ranks = None,
    nodes: Nodes = None,
    preset: Preset = None,
    arch: Arch = None,
    channels: Channels = None,
    bw_intra: BwIntra = None,
    bw_inter: BwInter = None,
    intra: Intra = "nvlink",
    net_latency: NetLatency = Fraction(0),
    cpu: Cpu = "intel",
    nvls: Nvls = False,
    collnet: CollNet = False,
    hosts_per_node: HostsPerNode = 1,
    algo: Algo = None,
    proto: Proto = None,
    nccl_version: Version = "2.30",
    overrides: Overrides = None,
    as_measured: AsMeasured = False,
    overheads: OverheadsFile = None,
    gpus_per_thread: GpusPerThread = None,
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Show the chosen entry's formulas with NCCL's constants substituted."),
    ] = False,
    as_json: Json = False,
) -> None:
    """Which algorithm and protocol NCCL's tuning model chooses, and the time it predicts.

    With -n: every (algorithm, protocol) of the collective, enabled or not (and why), its latency,
    bandwidth and time; the choice, its channels and threads, algbw and busbw as nccl-tests prints
    them. With --min/--max instead: the size ranges of each choice, with the exact switch sizes.
    With --as-measured, the time is what nccl-tests would measure for that choice (docs/calibration.md,
    "What nccl-tests will measure"), run with one GPU a thread unless --gpus-per-thread says otherwise.
    `costmodel nccl COLLECTIVE ...` is the same command.

    An entry marked fallback is one NCCL 2.21 times but runs only when no other entry is enabled.

    JSON: {"algorithm", "protocol", "time_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "channels",
    "threads", "entries": [{..., "fallback"}], "steps": [...], "notes", "system"}; with --min/--max
    {"ranges": [{"algorithm", "protocol", "from_bytes", "to_bytes", "fallback", "from_time_s",
    "to_time_s"}], "notes", ...}.

    Example: costmodel nccl allreduce -n 8MiB --ranks 16 --preset dgx-h100

    Example: costmodel nccl allreduce --min 8B --max 8GiB --ranks 16 --preset dgx-h100
    """
    from costmodel.nccl.reports import predicted, ranges

    hw = _hardware(preset, arch, channels, bw_intra, bw_inter, intra, net_latency, cpu, nvls, collnet,
                   hosts_per_node)
    ranged = min_size is not None or max_size is not None
    if size is not None and ranged:
        raise InputError("give -n SIZE (one prediction) or --min/--max (the size ranges), not both")
    if size is None and not ranged:
        raise InputError("no size given; pass -n SIZE, or --min SIZE --max SIZE for the size ranges")
    if explain and ranged:
        raise InputError("--explain explains one size; pass -n SIZE instead of --min/--max")
    system = hw.system(ranks=ranks, nodes=nodes)
    if gpus_per_thread is not None and system.ranks % gpus_per_thread:
        raise InputError(f"--gpus-per-thread {gpus_per_thread} does not divide the {system.ranks} ranks: "
                         "nccl-tests runs processes × threads × GPUs per thread ranks")
    settings: dict[str, Any] = {
        "version": nccl_version,
        "algo": algo,
        "proto": proto,
        "overrides": _overrides(overrides),
        "overheads": _measured(as_measured, overheads, gpus_per_thread),
    }
    if size is not None:
        emit(predicted(collective, size, system, explain=explain, **settings), as_json=as_json)
        return
    low = 1 if min_size is None else min_size
    high = 2**30 if max_size is None else max_size
    emit(ranges(collective, low, high, system, **settings), as_json=as_json)


@nccl_app.command("compare")
def compare_command(
    log: Annotated[Path, typer.Argument(metavar="LOG", help="nccl-tests output (text or -J JSON).")],
    nodes: LogNodes = None,
    ranks: LogRanks = None,
    collective: LogCollective = None,
    preset: Preset = None,
    arch: Arch = None,
    channels: Channels = None,
    bw_intra: BwIntra = None,
    bw_inter: BwInter = None,
    intra: Intra = "nvlink",
    net_latency: NetLatency = Fraction(0),
    cpu: Cpu = "intel",
    nvls: Nvls = False,
    collnet: CollNet = False,
    hosts_per_node: HostsPerNode = 1,
    algo: Algo = None,
    proto: Proto = None,
    nccl_version: LogVersion = None,
    overrides: Overrides = None,
    as_measured: AsMeasured = False,
    overheads: OverheadsFile = None,
    as_json: Json = False,
) -> None:
    """A measured nccl-tests log against NCCL's model: time and busbw size by size, and the errors.

    Ranks come from the log (--ranks when it has no # Rank lines), nodes from the distinct hosts of its
    # Rank lines (--nodes when they do not name every rank). The release modelled, NCCL_ALGO and
    NCCL_PROTO follow the log where it prints them (nccl-library=, "NCCL version", "NCCL_ALGO set by
    environment to", a network plugin's "Setting NCCL_PROTO to"), each said in a note; an
    rccl-tests log is refused (RCCL's tuning is not NCCL's). Each size shows the model's (algorithm,
    protocol); a regime is a run of sizes with the same choice, and its median |relative error| is
    given, as is the whole log's, and the median |busbw error| at sizes from 1 MiB and below. With
    --as-measured the model is what nccl-tests would measure, not NCCL's estimate alone, for the
    launch the log prints (its nGpus, the GPUs each thread drove).

    JSON: {"collective", "ranks", "nodes", "nccl_version", "as_measured", "median_abs_rel_error",
    "median_abs_busbw_error_from_1mib", "median_abs_busbw_error_below_1mib", "regimes": [...], "rows":
    [{"n_bytes", "measured_s", "predicted_s", "rel_error", "measured_busbw_bytes_per_s",
    "predicted_busbw_bytes_per_s", "algorithm", "protocol", "regime"}], "notes"}.

    Example: costmodel nccl compare all_reduce_perf.txt --preset dgx-a100
    """
    from costmodel.nccl.compare import compare, log_shape
    from costmodel.nccl.reports import log_system

    measured = _measured(as_measured, overheads)
    measurements, facts = log_shape(log, collective=collective)
    hw = _hardware(preset, arch, channels, bw_intra, bw_inter, intra, net_latency, cpu, nvls, collnet,
                   hosts_per_node)
    measurements, system = log_system(measurements, facts, hw, ranks=ranks, nodes=nodes, log=log)
    emit(
        compare(
            measurements,
            system,
            version=nccl_version,
            algo=algo,
            proto=proto,
            overrides=_overrides(overrides),
            facts=facts,
            overheads=measured,
        ),
        as_json=as_json,
    )


@nccl_app.command("check")
def check_command(
    log: Annotated[Path, typer.Argument(metavar="LOG", help="nccl-tests output (text or -J JSON).")],
    nodes: LogNodes = None,
    ranks: LogRanks = None,
    collective: LogCollective = None,
    preset: Preset = None,
    arch: Arch = None,
    channels: Channels = None,
    bw_intra: BwIntra = None,
    bw_inter: BwInter = None,
    intra: Intra = "nvlink",
    net_latency: NetLatency = Fraction(0),
    cpu: Cpu = "intel",
    nvls: Nvls = False,
    collnet: CollNet = False,
    hosts_per_node: HostsPerNode = 1,
    algo: Algo = None,
    proto: Proto = None,
    nccl_version: LogVersion = None,
    overheads: OverheadsFile = None,
    as_json: Json = False,
) -> None:
    """Is this cluster healthy? An nccl-tests log against what it should measure on the hardware given.

    Each size is set beside the prediction of what nccl-tests measures (--as-measured: NCCL's choice
    with the calibrated overheads). Below 1 MiB and from 1 MiB, the median measured busbw over the
    median expected gives a verdict: low when more than twice the prediction's target error (15 % from
    1 MiB, 30 % below) under the expected, suspicious when the log shows wrong results, a collapse or an
    in-place gap, else healthy. Known patterns are named with the public threads their causes come
    from: tree at 2 nodes and NVLS (busbw above what a ring carries: explained), a ring above it (the
    hardware is described short), fewer NICs or channels, a slow network (TCP sockets), P2P off or
    PCIe only, wrong results, separate runs (processes that never formed one communicator), a
    collapse, an in-place gap. The exit status is 0 when healthy, 1 when
    low or suspicious (2 for bad input).

    JSON: {"verdict", "path", "source", "bands": [{"name", "from_bytes", "to_bytes", "sizes",
    "expected_busbw_bytes_per_s", "measured_busbw_bytes_per_s", "ratio", "verdict", "reason"}],
    "findings": [{"pattern", "fault", "text", "sources"}], "comparison": {...as compare, or null when no
    row is valid}, "notes"}.

    Example: costmodel nccl check all_reduce_perf_2x8.txt --preset dgx-h100
    """
    from costmodel.errors import SeparateRuns, WrongResults
    from costmodel.nccl.check import check, unreadable
    from costmodel.nccl.compare import log_shape
    from costmodel.nccl.reports import log_system

    measured = _measured(True, overheads)
    try:
        measurements, facts = log_shape(log, collective=collective)
    except (WrongResults, SeparateRuns) as error:
        from costmodel.calibration.logs.measurements import read_log_text, source_line, split_lines

        source = source_line(split_lines(read_log_text(log)))
        emit(unreadable(str(log), error, source), as_json=as_json)
        raise typer.Exit(1) from None
    hw = _hardware(preset, arch, channels, bw_intra, bw_inter, intra, net_latency, cpu, nvls, collnet,
                   hosts_per_node)
    measurements, system = log_system(measurements, facts, hw, ranks=ranks, nodes=nodes, log=log)
    result = check(measurements, system, version=nccl_version, algo=algo, proto=proto, facts=facts,
                   overheads=measured)
    emit(result, as_json=as_json)
    if result.verdict != "healthy":
        raise typer.Exit(1)


@nccl_app.command("calibrate")
def calibrate_command(
    manifest: Annotated[
        Path,
        typer.Argument(metavar="MANIFEST",
                       help="A TOML file of \\[\\[log]] tables: each log and its hardware."),
    ],
    out: Annotated[Path | None, option("--out", "-o", help="Write the overheads here (TOML).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    as_json: Json = False,
) -> None:
    """Calibrate what --as-measured adds to NCCL's estimate on nccl-tests logs, and each log's error.

    Each \\[\\[log]] names a log (path, relative to the manifest) and its hardware as compare takes it
    (preset, or arch, channels, bw_intra, bw_inter; nodes, algo where the log does not say; why). The
    per-call overhead (of one GPU a thread, and what each further GPU a thread drives adds, from the
    logs run with nccl-tests -g above 1) and the achieved share of each protocol are medians over the
    logs; each log's
    median |busbw error| is shown for NCCL's estimate, with the calibrated overheads, and held out
    (calibrated on the other logs). A log with held_out = true is priced but never calibrated on.
    --out writes a file --overheads reads.

    JSON: {"overheads": {"call_s", "gpu_s", "share_ll", "share_ll128", "share_simple"}, "logs": [{"name",
    "ranks", "nodes", "hardware", "sizes", "model_large", "model_small", "in_sample_large",
    "in_sample_small", "held_out_large", "held_out_small", "held_out", "gpus_per_thread"}], "notes",
    "out"}: *_large at
    sizes from 1 MiB, *_small below.

    Example: costmodel nccl calibrate tests/data/logs/nccl-tests/manifest.toml
    """
    import dataclasses

    from costmodel._files import check_writable, write_text
    from costmodel.nccl.reports import calibrate_manifest

    target = None if out is None else check_writable(out, force=force)
    result = calibrate_manifest(manifest)
    if target is not None:
        write_text(target, result.calibration.overheads.toml())
    emit(dataclasses.replace(result, out=target), as_json=as_json)


@nccl_app.command("preset")
def preset_command(
    log: Annotated[
        Path,
        typer.Argument(
            metavar="LOG", help="A log of a run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING."
        ),
    ],
    out: Annotated[Path | None, option("--out", "-o", help="Write the preset here (TOML).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing --out file.")] = False,
    name: Annotated[
        str | None,
        option("--name", help="The preset's name (default: the --out file's stem, else from-log)."),
    ] = None,
    as_json: Json = False,
) -> None:
    """A hardware preset from an NCCL_DEBUG=INFO log: the graphs NCCL's search printed, the CPU, NVLS.

    Without --out the TOML is printed. Every value the log did not show is named in the preset's
    assumptions (and in the notes here).

    Example: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING ./all_reduce_perf -b 8 -e 1G > run.log 2>&1

    Example: costmodel nccl preset run.log --out mybox.toml
    """
    import dataclasses

    from costmodel._files import check_writable, write_text
    from costmodel.nccl.reports import preset_from_log

    if out is not None:
        check_writable(out, force=force)
    result = preset_from_log(log, name or (out.stem if out is not None else "from-log"))
    if out is not None:
        write_text(out, result.toml)
    elif not as_json:  # the TOML as it is (not fitted to the width), the notes as its comments
        import sys

        comments = (f"# {n if n.startswith('warning: ') else 'note: ' + n}\n" for n in result.notes)
        sys.stdout.write("".join(comments) + result.toml)
        return
    emit(dataclasses.replace(result, out=out), as_json=as_json)


@nccl_app.command("presets")
def presets_command(as_json: Json = False) -> None:
    """The shipped hardware presets: what each describes and where its numbers come from.

    Example: costmodel nccl presets
    """
    from costmodel.nccl.reports import preset_list

    emit(preset_list(), as_json=as_json)


# -- rendering -------------------------------------------------------------------------------------


def _time(s: Any) -> str:
    from costmodel.units import format_time

    return format_time(s)


def _rate(r: Any) -> str:
    from costmodel.units import format_byte_rate

    return format_byte_rate(r)


def _size(n: Any) -> str:
    from costmodel.units import format_size

    return format_size(n).split(" = ")[-1] if n >= 1024 else format_size(n).split(" = ")[0]


def _span(low: Any, high: Any, sizes: int) -> str:
    """A run of sizes and how many: ``8 B – 512 KiB (17)``, one size alone ``8 GiB (1)``."""
    return f"{_size(low)} ({sizes})" if low == high else f"{_size(low)} – {_size(high)} ({sizes})"


def _full_size(n: Any) -> str:
    from costmodel.units import format_size

    return format_size(n)


def _heading(function: str, what: str, system: Any, version: str) -> Any:
    from rich.markup import escape

    return markup(
        f"[bold]{function}[/bold] · {escape(what)} · NCCL {version}\n[dim]{escape(_where(system))}[/dim]"
    )


@renders("costmodel.nccl.reports.Predicted")
def _render_predicted(r: Predicted) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    p = r.prediction
    out = table(
        "algorithm",
        "protocol",
        "latency",
        "bandwidth",
        "time",
        "",
        no_wrap=True,
        numeric=("latency", "bandwidth", "time"),
    )
    off: dict[tuple[str, str], list[str]] = {}
    fallbacks: dict[tuple[str, str], list[str]] = {}
    for e in p.entries:
        if e.time_s is None:
            off.setdefault((e.algorithm, e.reason), []).append(e.protocol)
            continue
        chosen = (e.algorithm, e.protocol) == (p.algorithm, p.protocol)
        if e.fallback:
            why = e.reason or f"every {p.function} entry was disabled; the ring's bandwidths are put back"
            fallbacks.setdefault((e.algorithm, why), []).append(e.protocol)
        mark = "◀ chosen" if chosen else ""
        if e.fallback:
            mark = f"{mark} (fallback)" if chosen else "fallback"
        out.add_row(
            e.algorithm,
            e.protocol,
            _time(e.latency_s),
            _rate(e.bandwidth_bytes_per_s),
            _time(e.time_s),
            mark,
        )
    disabled = [
        prose(Text(f"  {algorithm} {', '.join(protocols)}: {reason}"), hang=4)
        for (algorithm, reason), protocols in off.items()
    ]
    fallen = [
        prose(Text(f"  {algorithm} {', '.join(protocols)}: {reason}"), hang=4)
        for (algorithm, reason), protocols in fallbacks.items()
    ]
    factor = {"AllReduce": "2(p−1)/p", "AllGather": "(p−1)/p", "ReduceScatter": "(p−1)/p"}.get(
        p.function, "1"
    )
    choice = Text.assemble(
        "NCCL chooses ",
        (f"{p.algorithm}/{p.protocol}", "bold"),
        f": {_time(p.time_s)}"
        + ("" if p.estimate_s is None else f" as nccl-tests measures it (estimate {_time(p.estimate_s)})")
        + f" on {p.channels} channel{'s' if p.channels != 1 else ''} × {p.threads} threads\n"
        f"algbw {_rate(p.algbw_bytes_per_s)} · busbw {_rate(p.busbw_bytes_per_s)} "
        f"(nccl-tests' terms: algbw = n / time, busbw = algbw × {factor})",
    )
    parts: list[Any] = [
        _heading(p.function, f"n = {_full_size(p.n_bytes)}", r.system, p.version),
        Text(""),
        out,
        Text(""),
        choice,
    ]
    if fallen:
        parts += [
            Text(""),
            prose(Text("fallback: NCCL 2.21 uses these only when no other entry is enabled:", style="bold")),
            *fallen,
        ]
    if disabled:
        parts += [Text(""), Text("not considered:", style="bold"), *disabled]
    if r.explain:
        parts += [Text(""), Text(f"why {p.algorithm}/{p.protocol} takes {_time(p.time_s)}:", style="bold")]
        parts += [Text(f"  {s.text}: {s.expression}") for s in p.steps]
    return Group(*parts), tuple(p.notes)


@renders("costmodel.nccl.reports.Ranges")
def _render_ranges(r: Ranges) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    s = r.sweep
    out = table(
        "from",
        "to",
        "algorithm",
        "protocol",
        "time at from",
        "time at to",
        no_wrap=True,
        numeric=("from", "to", "time at from", "time at to"),
    )
    for rng, (a, b) in zip(s.ranges, r.ends, strict=True):
        out.add_row(
            _size(rng.from_bytes),
            _size(rng.to_bytes),
            rng.algorithm,
            f"{rng.protocol} (fallback)" if rng.fallback else rng.protocol,
            _time(a.time_s),
            _time(b.time_s),
        )
    what = "NCCL's choice by message size"
    switches = [f"{_size(x.from_bytes)} ({x.from_bytes} B)" for x in s.ranges[1:]]
    notes: tuple[str, ...] = (
        (f"the choice switches at {', '.join(switches)}: the first size of each range",) if switches else ()
    )
    if any(rng.fallback for rng in s.ranges):
        notes += ("(fallback): NCCL 2.21 runs it only because no other entry is enabled",)
    notes += s.notes
    return Group(_heading(s.function, what, r.system, s.version), Text(""), out), notes


@renders("costmodel.nccl.compare.Comparison")
def _render_comparison(c: Comparison) -> Rendered:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    busbw = ("busbw measured", "busbw model")
    out = table(
        "size",
        "measured",
        "model",
        "error",
        *busbw,
        "NCCL's choice",
        no_wrap=True,
        numeric=("size", "measured", "model", "error", *busbw),
        optional=(busbw,),
    )
    for row in c.rows:
        out.add_row(
            _size(row.n_bytes),
            _time(row.measured_s),
            _time(row.predicted_s),
            f"{float(row.rel_error):+.1%}",
            _rate(row.measured_busbw_bytes_per_s),
            _rate(row.predicted_busbw_bytes_per_s),
            f"{row.algorithm}/{row.protocol}",
        )
    regimes = table(
        "regime", "sizes", "choice", "median |error|", no_wrap=True, numeric=("regime", "median |error|")
    )
    for k, g in enumerate(c.regimes, 1):
        regimes.add_row(
            str(k),
            _span(g.from_bytes, g.to_bytes, g.sizes),
            f"{g.algorithm}/{g.protocol}",
            f"{float(g.median_abs_rel_error):.1%}",
        )
    nodes = f"{c.nodes} node" + ("s" if c.nodes > 1 else "")
    head = markup(
        f"[bold]{c.collective}[/bold] · {c.ranks} ranks on {nodes} · measured against NCCL "
        f"{c.version}'s model{', as nccl-tests measures' if c.as_measured else ''}\n"
        f"[dim]{escape(c.source or c.path)}[/dim]"
    )
    bands = [f"{float(e[0]):.1%} at {what} ({e[1]} size{'s' if e[1] > 1 else ''})"
             for e, what in zip(c.busbw_errors(), ("≥ 1 MiB", "< 1 MiB"), strict=True) if e is not None]
    summary = Text(
        f"median |relative error| {float(c.median_abs_rel_error):.1%} over {len(c.rows)} "
        f"size{'s' if len(c.rows) > 1 else ''} "
        "(error = (model − measured) / measured)\n"
        f"median |busbw error| {', '.join(bands)}"
    )
    return Group(head, Text(""), out, Text(""), regimes, Text(""), summary), tuple(c.notes)


@renders("costmodel.nccl.reports.Calibrated")
def _render_calibrated(r: Calibrated) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    from costmodel.nccl.measured import LARGE_TARGET, SMALL_TARGET

    c, o = r.calibration, r.calibration.overheads
    pct = lambda x: "–" if x is None else f"{float(x):.1%}"
    bands = ("NCCL ≥1MiB", "NCCL <1MiB", "fit ≥1MiB", "fit <1MiB", "held out ≥1MiB", "held out <1MiB")
    out = table("log", "ranks", *bands, numeric=("ranks", *bands), optional=(bands[:2], bands[2:4]))
    for a in c.logs:
        errors = (a.model_large, a.model_small, a.in_sample_large, a.in_sample_small, a.held_out_large,
                  a.held_out_small)
        launch = f", -g {a.gpus_per_thread}" if a.gpus_per_thread > 1 else ""
        out.add_row(a.name + (" *" if a.held_out else ""), f"{a.ranks} on {a.nodes}{launch}",
                    *map(pct, errors))
    us, per_gpu = o.call_s * 10**6, o.gpu_s * 10**6
    kept = sum(a.held_out for a in c.logs)
    count = f"{len(c.logs) - kept} logs" + (f", {kept} more held out (*)" if kept else "")
    head = Text.assemble(
        ("overheads of --as-measured", "bold"),
        f" · {count}\nper-call overhead {float(us):.1f} µs, +{float(per_gpu):.1f} µs per further GPU "
        "a thread drives (-g)\nachieved share of the bandwidth: "
        f"LL {float(o.ll):.3f}, LL128 {float(o.ll128):.3f}, Simple {float(o.simple):.3f}",
    )
    large = [a.held_out_large for a in c.logs if a.held_out_large is not None]
    small = [a.held_out_small for a in c.logs if a.held_out_small is not None]
    within_large = sum(e <= LARGE_TARGET for e in large)
    within_small = sum(e <= SMALL_TARGET for e in small)
    meets = Text(
        f"held out, median |busbw error| ≤ {100 * LARGE_TARGET} % at ≥ 1 MiB on {within_large} of "
        f"{len(large)} logs, ≤ {100 * SMALL_TARGET} % below 1 MiB on {within_small} of {len(small)}"
    )
    parts: list[Any] = [head, Text(""), out, Text(""), meets]
    if r.out is not None:
        parts.append(Text(f"wrote {r.out} (use it with --as-measured --overheads {r.out})"))
    notes = ("error: median over a log's sizes of |predicted busbw / measured busbw − 1|; NCCL: the tuning "
             "model's estimate; fit: with the overheads above; held out: with overheads calibrated on the "
             "other logs", *(("*: held_out in the manifest: priced with the overheads above, which never "
                              "saw it",) if kept else ()), *c.notes)
    return Group(*parts), notes


@renders("costmodel.nccl.check.Check")
def _render_check(r: Check) -> Rendered:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    c = r.comparison
    if c is None:
        head = markup(f"[bold]check[/bold] · [bold]{r.verdict}[/bold]: no valid row\n"
                      f"[dim]{escape(r.source or r.path)}[/dim]")
        found = [line for f in r.findings for line in _finding(f)]
        return Group(head, Text(""), Text("findings:", style="bold"), *found), tuple(r.notes)
    columns = ("expected busbw", "measured busbw", "measured/expected")
    out = table("sizes", *columns, "verdict", no_wrap=True, numeric=columns)
    for b in r.bands:
        out.add_row(_span(b.from_bytes, b.to_bytes, b.sizes),
                    _rate(b.expected_busbw_bytes_per_s), _rate(b.measured_busbw_bytes_per_s),
                    f"{float(b.ratio):.2f}", b.verdict)
    nodes = f"{c.nodes} node" + ("s" if c.nodes > 1 else "")
    head = markup(
        f"[bold]check[/bold] · {c.collective} · {c.ranks} ranks on {nodes} · NCCL {c.version} as nccl-tests "
        f"measures · [bold]{r.verdict}[/bold]\n[dim]{escape(r.source or r.path)}[/dim]"
    )
    parts: list[Any] = [head, Text(""), out, Text("")]
    parts += [prose(Text(f"{b.name}: {b.verdict}, {b.reason}"), hang=2) for b in r.bands]
    if r.findings:
        parts += [Text(""), Text("findings:", style="bold")]
        parts += [line for f in r.findings for line in _finding(f)]
    else:
        parts += [Text(""), Text("findings: none of the known patterns")]
    return Group(*parts), tuple(r.notes)


def _finding(f: Any) -> list[Any]:
    """A finding of ``check``: its pattern, what it is (a fault, a description or explained) and its text,
    then a line for each source."""
    from rich.text import Text

    kind = "fault" if f.fault else "description" if f.pattern == "above-described" else "explained"
    return [prose(Text.assemble("  ", (f.pattern, "bold"), f" ({kind}): {f.text}"), hang=4),
            *(prose(Text(f"    source: {s}"), hang=6) for s in f.sources)]


@renders("costmodel.nccl.reports.PresetText")
def _render_preset(r: PresetText) -> Rendered:
    from rich.text import Text

    return Text(f"wrote {r.out} (use it with --preset {r.out})"), tuple(r.notes)


@renders("costmodel.nccl.reports.PresetList")
def _render_presets(r: PresetList) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    out = table(
        "preset",
        "GPUs",
        "arch",
        "nodes",
        "description",
        no_wrap=("preset", "GPUs", "arch", "nodes"),
        numeric=("GPUs", "arch"),
    )
    for p in r.presets:
        halves = " and ".join(h for h, key in (("one", "single"), ("several", "multi")) if key in p)
        out.add_row(p["name"], str(p["gpus_per_node"]), f"sm{p['arch']}", halves, p["description"])
    sources = [Text(""), Text("sources:", style="bold")]
    for p in r.presets:
        sources += [Text(f"  {p['name']}: {s}") for s in p["sources"]]
    return Group(out, *sources), ()
