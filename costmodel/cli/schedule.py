"""The ``schedule`` command: an algorithm's explicit schedule, step by step."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated

import typer

from costmodel.cli.options import (
    Alpha,
    Bandwidth,
    Beta,
    Blocks,
    Collective,
    Gamma,
    Json,
    Levels,
    OptionalRanks,
    OptionalSize,
    Outer,
    Profile,
    Segments,
    algorithm_argument,
    link_from_options,
)
from costmodel.cli.output import emit
from costmodel.errors import InputError

if TYPE_CHECKING:
    from costmodel.params import Link

app = typer.Typer()


@app.command("schedule")
def schedule(
    collective: Collective,
    algorithm: Annotated[str, algorithm_argument("Algorithm name or alias (hierarchical ones with --level).",
                                                 topology=True)],
    ranks: OptionalRanks = None,
    size: OptionalSize = None,
    verify: Annotated[bool, typer.Option(help="Run it on random data; compare with the formula.")] = False,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None, segments: Segments = None, blocks: Blocks = None,
    level: Levels = None, outer: Outer = None, as_json: Json = False,
) -> int:
    """Show an algorithm's schedule step by step: who sends which chunk, who holds which partial sum.

    The message size defaults to 1 MiB (at least 1 B). Exit status 1 when --verify finds the schedule
    wrong or its cost different from the formula's (the output says "NOT verified"; --json has
    "verified": false).

    Size limits, checked from the formula before anything is built: at most 10^8 chunk sends in all
    (p × the busiest rank's chunks), and with --verify at most 2 GiB of state (33 B per rank and
    chunk id; all-to-all has p² chunk ids). --segments and --blocks obey the same rule as in cost.

    Example: costmodel schedule allreduce ring -p 4 -n 100MB --verify

    Example: costmodel schedule allreduce hierarchical --level 2:1us:100GB/s --level 2:5us:10GB/s --verify
    """
    from costmodel.cli.options import extra_parameters
    from costmodel.walkthrough import schedule_report

    link, link_notes = (None, ()) if level else _link(alpha, beta, bandwidth, gamma, profile,
                                                       collective=collective, p=ranks)
    extra = extra_parameters(segments=segments, blocks=blocks)
    if ranks is None and not level:
        _needs_ranks(algorithm)
    report = schedule_report(collective, algorithm, p=ranks, n=size, link=link, levels=level, outer=outer,
                             profile=profile if level is None else None, extra=extra, verify=verify)
    if link_notes:
        import dataclasses

        report = dataclasses.replace(report, notes=report.notes + link_notes)
    emit(report, as_json=as_json)
    return 1 if report.verified is False else 0


def _needs_ranks(algorithm: str) -> None:
    """Refuse a flat algorithm without -p, in Click's wording as for every other missing option."""
    from costmodel.collectives.hierarchical import is_hierarchical

    if not is_hierarchical(algorithm):
        raise InputError("Missing option '-p' / '--ranks'.")


def _link(alpha: Fraction | None, beta: Fraction | None, bandwidth: Fraction | None,
          gamma: Fraction | None, profile: str | None, *,
          collective: str, p: int | None = None) -> tuple[Link | None, tuple[str, ...]]:
    """(the link that prices the transfers, its notes) if any part of one was given, else (None, ())."""
    if all(v is None for v in (alpha, beta, bandwidth, gamma, profile)):
        return None, ()
    from costmodel.params import link_notes

    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    return link, link_notes(link, p)
