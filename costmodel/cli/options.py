"""Shared command-line options, spelled once (``-p/--ranks``, ``-n/--size``, ...).

Each option's parser is a :mod:`costmodel.units` function; an
:class:`~costmodel.errors.InputError` becomes a Typer ``BadParameter``, so the
message names the option: ``Invalid value for '-n' / '--size': '12 KB' is
ambiguous; ...``.

On the command line a time, a time per byte or a rate needs its unit (only 0
may go bare): the parsers are called with ``require_unit=True``, so ``--alpha 5``
is refused instead of meaning 5 s.  A bare size is bytes.  The Python API
keeps SI numbers and bare strings.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer

from costmodel.cli import complete
from costmodel.errors import InputError
from costmodel.units import parse_inverse_rate, parse_rate, parse_size, parse_time

__all__ = [
    "FIT",
    "Algorithm",
    "Algorithms",
    "Alpha",
    "Bandwidth",
    "Beta",
    "Blocks",
    "Collective",
    "Gamma",
    "Inner",
    "Json",
    "Lanes",
    "Levels",
    "LogFile",
    "LogFiles",
    "LogRanks",
    "MaxSize",
    "MinSize",
    "OptionalRanks",
    "OptionalSize",
    "Outer",
    "Partial",
    "Profile",
    "Ranks",
    "Segments",
    "Size",
    "algorithm_argument",
    "extra_parameters",
    "option",
    "size_option",
    "time_parser",
    "value_parser",
]


def option(*names: str, help: str, metavar: str | None = None, panel: str | None = None,
           parser: Callable[[str], object] | None = None, show_default: bool = False,
           min: int | None = None, max: int | None = None, **settings: Any) -> Any:
    """A ``typer.Option`` as the commands declare theirs: no default shown unless asked, in the help
    panel *panel* (none: the plain Options panel); *min* and *max* bound a whole number, refused in the
    project's words (:func:`whole_parser`); *settings* are any other ``typer.Option`` settings."""
    if min is not None or max is not None:
        parser = whole_parser(low=min, high=max)
    return typer.Option(*names, help=help, metavar=metavar, rich_help_panel=panel, parser=parser,
                        show_default=show_default, **settings)


def retired(short: str, *, now: str, means: str) -> Any:
    """A hidden short option that only says where its meaning went: a short option means one thing in
    every command (``-B`` is the bandwidth), so a command that once used it for something else refuses it
    with the option to use instead.  Declare it as a parameter of type ``str | None`` defaulting to None."""
    def refuse(ctx: Any, param: Any, value: Any) -> Any:
        if value is not None and not ctx.resilient_parsing:
            raise typer.BadParameter(f"{short} is {means}; use {now}")
        return value

    return typer.Option(short, hidden=True, callback=refuse, show_default=False)


def whole_parser(*, low: int | None, high: int | None) -> Callable[[str], object]:
    """The parser of a whole-number option between *low* and *high* (None: unbounded): ``0`` for a
    minimum of 2 is "0 is below 2; give 2 or more", not Click's ``0 is not in the range x>=2``."""
    want = (f"give {low} to {high}" if low is not None and high is not None and high < 10**9 else
            f"give {low} or more" if low is not None else f"give at most {high}")

    def convert(text: str) -> object:
        if not isinstance(text, str):  # defaults are already parsed
            return text
        from costmodel.exact import half_width

        body = half_width(text).strip()
        if not body.lstrip("+-").isdigit() or not body.isascii() or len(body) > 30:
            raise typer.BadParameter(f"{text!r} is not a whole number; {want}")
        value = int(body)
        if low is not None and value < low:
            raise typer.BadParameter(f"{value} is below {low}; {want}")
        if high is not None and value > high:
            raise typer.BadParameter(f"{value} is above {high}; {want}")
        return value

    return convert


def _parse_level(text: str, *, require_unit: bool = False) -> object:
    """A topology level (the topology module loads only when --level is used)."""
    from costmodel.topology import parse_level

    return parse_level(text, require_unit=require_unit)


def value_parser(parse: Callable[..., object], **kwargs: object) -> Callable[[str], object]:
    """The option parser that calls ``parse(text, **kwargs)``; its :class:`InputError` becomes Typer's
    ``BadParameter``, so Click names the option."""
    def convert(text: str) -> object:
        if not isinstance(text, str):  # defaults are already parsed
            return text
        try:
            return parse(text, **kwargs)
        except InputError as exc:
            raise typer.BadParameter(str(exc)) from None

    return convert


def time_parser(*, at_least: Fraction) -> Callable[[str], object]:
    """The parser of a duration option (a wall-clock time, with its unit) of at least *at_least* seconds."""
    def convert(text: str) -> object:
        value = value_parser(parse_time, require_unit=True)(text)
        if isinstance(text, str) and value < at_least:  # type: ignore[operator]
            from costmodel.units import format_time

            raise typer.BadParameter(f"{text!r} is less than {format_time(at_least)}")
        return value

    return convert


def _check_collective(ctx: Any, param: Any, value: str | None) -> str | None:
    """Names first: a misspelt collective is reported before a missing link or a bad option.

    The name arguments are eager, so Click checks them before any option's value (``--help`` aside).
    """
    if value is not None and not ctx.resilient_parsing:
        from costmodel.collectives._registry import check_names

        check_names(value)
    return value


def _algorithm_check(*, topology: bool) -> Callable[[Any, Any, Any], Any]:
    """The callback that checks algorithm names against the collective given before them."""
    def check(ctx: Any, param: Any, value: Any) -> Any:
        collective = ctx.params.get("collective")
        if value and collective is not None and not ctx.resilient_parsing:
            from costmodel.collectives._registry import check_names
            from costmodel.units import is_unit

            names = [value] if isinstance(value, str) else value
            unit = next((name for name in names if is_unit(name)), None)
            if unit is not None:  # `-n 64 MiB`: the shell split the size at its space
                raise InputError(f"{unit!r} is a unit, not an algorithm: write sizes and times without a "
                                 f"space: 64{unit.strip()}, not 64 {unit.strip()}")
            check_names(collective, names, topology=topology)
        return value

    return check


Collective = Annotated[str, typer.Argument(
    help="allreduce, reduce-scatter, allgather, broadcast, reduce, alltoall, gather or scatter "
         "(aliases accepted).",
    show_default=False, callback=_check_collective, is_eager=True, autocompletion=complete.collectives)]
Algorithms = Annotated[list[str] | None, typer.Argument(
    help="Algorithms to compare (default: all).", show_default=False,
    callback=_algorithm_check(topology=False), is_eager=True, autocompletion=complete.algorithms)]


def algorithm_argument(help: str, *, topology: bool = False) -> Any:
    """One algorithm argument, checked against the collective and completed from its algorithms;
    *topology* accepts the hierarchical all-reduces too."""
    return typer.Argument(help=help, show_default=False, callback=_algorithm_check(topology=topology),
                          is_eager=True,
                          autocompletion=complete.algorithms_on_topology if topology else complete.algorithms)


Algorithm = Annotated[str, algorithm_argument("Algorithm name or alias.")]

_LINK = "Link"
_TOPOLOGY = "Topology"

Ranks = Annotated[int, typer.Option("-p", "--ranks", help="Number of ranks (≥ 2).", show_default=False)]
OptionalRanks = Annotated[int | None, option(
    "-p", "--ranks",
    help="Number of ranks (≥ 2). Optional with --level; then it must equal the product of the level sizes.")]
Levels = Annotated[list[Any] | None, option(
    "--level", parser=value_parser(_parse_level, require_unit=True), metavar="SIZE:ALPHA:RATE[:NAME]",
    panel=_TOPOLOGY,
    help="One level of a topology, innermost first; repeat per level: "
         "--level 8:1us:150GB/s:nvlink --level 4:5us:25GB/s:ib. RATE is per rank.")]
Inner = Annotated[str | None, option(
    "--inner", metavar="ALGO", panel=_TOPOLOGY,
    help="Inner levels' algorithm: ring or recursive (hierarchical), binomial (reduce-bcast).")]
Outer = Annotated[str | None, option(
    "--outer", metavar="ALGO", panel=_TOPOLOGY,
    help="All-reduce across the outermost level: ring (default), tree, rd, rab, naive, dbt.")]
Lanes = Annotated[int | None, option(
    "--lanes", metavar="K", panel=_TOPOLOGY,
    help="Parallel lanes out of each outermost unit (default: one per local rank).")]


def size_option(help: str) -> Any:
    """``-n/--size`` with a *help* that says what the size is for this command."""
    return option("-n", "--size", parser=value_parser(parse_size), metavar="SIZE", show_default=True,
                  help=help)


Size = Annotated[Fraction, size_option(
    "Message size: 8KiB, 64MiB, 1.5e6 (bytes). Its meaning depends on the collective.")]
OptionalSize = Annotated[Fraction | None, size_option("Message size: 8KiB, 64MiB, 1.5e6 (bytes).")]


def _link_option(*names: str, parse: Callable[..., object], metavar: str, help: str) -> Any:
    """A link option (--alpha, --beta, --bandwidth, --gamma): a value with its unit, in the Link panel."""
    return option(*names, parser=value_parser(parse, require_unit=True), metavar=metavar, panel=_LINK,
                  show_default=True, help=help)


Alpha = Annotated[Fraction | None, _link_option(
    "--alpha", parse=parse_time, metavar="TIME",
    help="Start-up latency per message, with its unit: 5us, 1.5µs, 2e-6s (0 for none).")]
Beta = Annotated[Fraction | None, _link_option(
    "--beta", parse=parse_inverse_rate, metavar="TIME/B",
    help="Time per byte, with its unit: 0.08ns/B. Or give --bandwidth.")]
Bandwidth = Annotated[Fraction | None, _link_option(
    "--bandwidth", "-B", parse=parse_rate, metavar="RATE",
    help="Usable bandwidth: 12.5GB/s, 100Gb/s, 100Gbps. Or give --beta.")]
Gamma = Annotated[Fraction | None, _link_option(
    "--gamma", parse=parse_inverse_rate, metavar="TIME/B",
    help="Local reduction time per byte, with its unit: 0.01ns/B (default 0).")]
Profile = Annotated[str | None, option(
    "--profile", metavar="NAME|FILE", panel=_LINK, autocompletion=complete.profiles, show_default=True,
    help="Link preset (see `costmodel profiles`) or a profile TOML file (a link, topology "
         "levels, or both); --alpha, --beta, --bandwidth and --gamma override it.")]
Partial = Annotated[list[str] | None, option(
    "--partial", metavar="MISTAKE=CREDIT",
    help="Credit for an answer with this diagnosed mistake, e.g. binary-prefix=0.5 (repeatable).")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object (SI units) instead of a table.")]
Segments = Annotated[int | None, option(
    "--segments", "-k", metavar="K", show_default=True,
    help="Segments of the pipelined chain (default: best).")]
Blocks = Annotated[int | None, option(
    "--blocks", metavar="K", show_default=True,
    help="Blocks per tree of the double binary tree (default: best).")]
MinSize = Annotated[Fraction | None, option(
    "--min", parser=value_parser(parse_size), metavar="SIZE", show_default=True,
    help="Smallest message size.")]
MaxSize = Annotated[Fraction | None, option(
    "--max", parser=value_parser(parse_size), metavar="SIZE", show_default=True,
    help="Largest message size.")]


# a benchmark log and its fit (calibrate fit|report, plot calibration)
FIT = "Fit"
LogFile = Annotated[Path, typer.Argument(
    metavar="LOG", help="nccl-tests output (text or -J JSON), OSU osu_* output, or costmodel's CSV.")]
LogFiles = Annotated[list[Path], typer.Argument(
    metavar="LOG...", help="One log or more, one per collective (osu_latency's and osu_bw's go together): "
                           "nccl-tests output (text or -J JSON), OSU osu_* output, or costmodel's CSV.")]
LogRanks = Annotated[int | None, option(
    "-p", "--ranks", min=2, panel=FIT,
    help="Ranks, when the log does not say (OSU); checked against it otherwise.")]


def link_from_options(alpha: Fraction | None, beta: Fraction | None, bandwidth: Fraction | None,
                      gamma: Fraction | None, profile: str | None, *, collective: str | None = None) -> Any:
    """The link the options describe (a profile, overridden) for *collective*: a
    :class:`~costmodel.params.PiecewiseLink` from a calibrated profile, else
    :class:`~costmodel.params.LinkParams`."""
    from costmodel.links import resolve_link

    return resolve_link(collective, alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, profile=profile)


def extra_parameters(*, segments: int | None = None, blocks: int | None = None) -> dict[str, int]:
    """The extra-parameter options that were given, keyed by the records' names."""
    given = {"segments": segments, "blocks": blocks}
    return {name: value for name, value in given.items() if value is not None}
