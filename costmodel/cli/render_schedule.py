"""Rendering of a schedule report: the steps, a chunk grid after each, and the check.

Found by :func:`costmodel.cli.render.render` when a schedule report is shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Group
from rich.markup import escape
from rich.text import Text

from costmodel.cli.layout import Table, markup, table
from costmodel.cli.render import Rendered, renders
from costmodel.cli.render_cost import link_line
from costmodel.units import format_size, format_time
from costmodel.walkthrough import ScheduleReport, chunk_label

__all__: list[str] = []


def _cell(mask: int, report: ScheduleReport) -> str:
    if mask == 0:
        return "[dim]·[/dim]"
    if not report.reduces:
        return "■"
    if mask == (1 << report.p) - 1:
        return markup("[bold green]Σ[/bold green]")
    ranks = [r for r in range(report.p) if mask >> r & 1]
    return "+".join(map(str, ranks)) if len(ranks) <= 4 else f"{len(ranks)} ranks"


def _grid(masks: np.ndarray, report: ScheduleReport) -> Table:
    columns = range(masks.shape[1])
    labels = [chunk_label((c,), report) for c in columns]
    grid = table("rank", *labels, numeric=("rank",), centred=labels)
    for rank in range(report.p):
        grid.add_row(str(rank), *(_cell(int(masks[rank, c]), report) for c in columns))
    return grid


def _transfers(step: tuple[Any, ...], report: ScheduleReport) -> str:
    marks = {"reduce": " (+)", "copy": ""}
    return ", ".join(f"{t.src}→{t.dst} {chunk_label(t.chunks, report)}{marks[t.op]}" for t in step)


@renders("costmodel.walkthrough.ScheduleReport")
def _(r: ScheduleReport) -> Rendered:
    head = [
        f"[bold]{r.collective} {r.algorithm}[/bold] · p = {r.p} · n = {format_size(r.n_bytes)} · "
        f"{r.units} chunks of {format_size(r.chunk_bytes)}",
        f"[dim]{escape(r.meaning_of_n)}; (+): the receiver adds the chunks to its partial sums; "
        "a cell lists the ranks whose data it holds, Σ all of them[/dim]",
    ]
    if r.parameters:
        head.append(", ".join(f"{k} = {v}" for k, v in r.parameters.items()))
    parts: list[Any] = [markup("\n".join(head)), Text("")]
    if r.steps is not None and r.holdings is not None:
        grid_ok = r.collective != "alltoall"
        for index, (step, masks) in enumerate(zip(r.steps, r.holdings, strict=True), start=1):
            parts.append(markup(f"[bold]step {index}[/bold]: {escape(_transfers(step, r))}"))
            if grid_ok:
                parts.append(_grid(masks, r))
            parts.append(Text(""))
    elif r.steps is not None:
        parts.append(Text(f"{r.rounds} steps (too many ranks or steps to draw; --json lists them)"))
    else:
        parts.append(Text(f"{r.rounds} steps (too many transfers to list)"))
    time = "" if r.time_s is None else f" · time {format_time(r.time_s)}\npriced on {link_line(r.link)}"
    parts.append(markup(
        f"rounds {r.rounds} · busiest rank sends {format_size(r.bytes_sent_per_rank)}{time}"))
    if r.levels:
        crossing = " · ".join(f"{name} {format_size(b)}" for name, b in r.levels)
        parts.append(Text(f"bytes crossing each level: {crossing}"))
    if r.verification is not None:
        v = r.verification
        check = table("", "simulated", "formula", "", numeric=("", "simulated", "formula"))
        rows = (("rounds", "rounds", str), ("bytes_sent_per_rank", "busiest rank sends", format_size),
                ("time_s", "time", format_time))
        for key, label, show in rows:
            same = v.simulated[key] == v.formula[key]
            check.add_row(label, show(v.simulated[key]), show(v.formula[key]),
                          markup("[green]=[/green]" if same else "[bold red]≠[/bold red]"))
        run = "[green]every rank holds the right result[/green]" if v.executed_ok else (
            "[bold red]wrong result[/bold red]: " + escape("; ".join(v.problems)))
        verdict = "[bold green]verified[/bold green]" if v.verified else "[bold red]NOT verified[/bold red]"
        parts += [Text(""), markup(f"executed on random data: {run}"), check,
                  markup(verdict)]
    return Group(*parts), r.notes
