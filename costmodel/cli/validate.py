"""The ``validate`` command: the step model against published measured runs, a row each, and the errors.

It makes one call to :func:`costmodel.validation.validate` and emits the result, whose human rendering
is declared here; rich loads only when it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.gpus import gpu_names
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.units import format_number, format_share, format_time

if TYPE_CHECKING:
    from costmodel.validation import RunDetail, TableResult, Validation

__all__ = ["ShownRun", "app", "render_shown_run", "render_validation", "step_argv"]

app = typer.Typer()


def _table_names(ctx: Any, incomplete: str) -> list[str]:
    from costmodel.validation import TABLES

    return [t for t in TABLES if t.startswith(incomplete)]


@app.command("validate")
def validate(
    tables: Annotated[list[str] | None, typer.Argument(
        help="Shipped tables (default all three) or CSV files of your own runs.", metavar="[TABLE|FILE]...",
        show_default=False, autocompletion=_table_names)] = None,
    gpu: Annotated[str, option("--gpu", metavar="NAME|FILE", autocompletion=gpu_names,
                               help="The GPU the runs are priced on (a row's gpu column overrides it): "
                                    "a preset or a GPU file.")] = "a100-80gb",
    run: Annotated[str | None, option("--run", metavar="LABEL",
                                      help="Show one run's step instead of the tables: the costmodel step "
                                           "command that prices it and where its time goes.")] = None,
    as_json: Json = False,
) -> None:
    """Price published training runs from their configurations and compare with what was measured.

    Each run is a costmodel step on one GPU preset and the links it describes, nothing set per row but
    the run's configuration; a row each with the published and predicted number and the error, and per
    table the mean |error|, the largest, and whether the predictions rank the runs as measured.
    Shipped: narayanan2021-table1, korthikanti2022-table5, narayanan2021-table2. A CSV of your own
    (docs/theory/step-vs-measured.md gives the columns; a '# default: NAME = VALUE' line sets what every
    row shares) is read the same way.

    --run LABEL prices one run (from the tables named, else the shipped ones) and shows the costmodel
    step command that reproduces it, then that step's breakdown.

    JSON: {"gpu", "tables": [{"table", "title", "quantity", "rows": [{"label", "published", "predicted",
    "error", "step_s", "gpus", "gpu", "fits"}], "mean_abs_error", "max_abs_error", "rank_order_right",
    "misranked", "sources"}]}; with --run: {"table", "title", "quantity", "row", "arguments", "command",
    "step"}.

    Example: costmodel validate

    Example: costmodel validate korthikanti2022-table5 --gpu a100-80gb

    Example: costmodel validate narayanan2021-table1 --run 39.1B
    """
    if run is not None:
        from costmodel.validation import run_detail

        detail = run_detail(run, tables or None, gpu=gpu)
        emit(ShownRun(detail=detail, command=tuple(step_argv(detail.arguments, gpu=gpu))), as_json=as_json)
        return
    from costmodel.validation import validate as priced

    emit(priced(tables or None, gpu=gpu), as_json=as_json)


_SHAPE_FLAGS = ("gated",)
"""The shape's columns that are switches on the command line (a run's arguments hold them only when on)."""


def step_argv(arguments: Sequence[tuple[str, str]], *, gpu: str) -> list[str]:
    """``costmodel step`` and its options for a run's *arguments* (setting names and text, as
    :class:`~costmodel.validation.PublishedRun` keeps them): each setting's own option, a switch on or
    off from its value, ``--gpu`` from the run (else *gpu*) and ``--allow-oom``, as :func:`validate`
    prices it."""
    from costmodel.cli.step import option_names
    from costmodel.step.config import setting_of, settings

    defaults = {n: d for n, d, _ in settings()}
    given = dict(arguments)
    argv = ["costmodel", "step"]
    for name, text in (*arguments, *((("gpu", gpu),) if "gpu" not in given else ())):
        long = next(f for f in option_names(name) if f.startswith("--"))
        if name in _SHAPE_FLAGS:
            argv.append(long)
        elif name in defaults and setting_of(name).boolean:
            on = setting_of(name).read(text, name)
            if on != defaults[name]:  # the default needs no option
                argv.append(long if on else f"--no-{long[2:]}")
        else:
            argv += [long, text]
    return [*argv, "--allow-oom"]


@dataclass(frozen=True, slots=True)
class ShownRun:
    """One run of a table as ``validate --run`` shows it: the run priced and the command that prices it."""

    detail: RunDetail
    command: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        import shlex

        from costmodel._json import to_json

        d = self.detail
        return {"table": d.table, "title": d.title, "quantity": d.quantity, "row": to_json(d.row),
                "arguments": dict(d.arguments), "command": shlex.join(self.command), "step": to_json(d.step)}


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _error(x: Any) -> str:
    return f"{'+' if x > 0 else ''}{format_number(100 * x, digits=3)}%"


def _value(quantity: str, x: Any) -> str:
    return format_time(x) if quantity == "iteration_s" else format_number(x, digits=4)


def _rows(t: TableResult, gpu: str) -> Any:
    """The table's runs; a GPU column when a row was priced on another GPU than *gpu* (its own column)."""

    own = any(r.gpu != gpu for r in t.rows)
    out = table("run", *(("GPU",) if own else ()), "GPUs", "published", "predicted", "error", "step",
                numeric=("GPUs", "published", "predicted", "error", "step"), optional=("step",))
    for r in t.rows:
        out.add_row(r.label, *((r.gpu,) if own else ()), str(r.gpus),
                    _value(t.quantity, r.published), _value(t.quantity, r.predicted), _error(r.error),
                    format_time(r.step_s))
    return out


_NAMED_PAIRS = 4
"""Swapped pairs a table's line names; a larger table's line counts the others."""


def _order(t: TableResult) -> str:
    if len(t.rows) < 2:
        return "— (one run)"
    if t.rank_order_right:
        return "right"
    pairs = len(t.rows) * (len(t.rows) - 1) // 2
    return f"{len(t.misranked)} of {pairs} pairs swapped"


def _swapped(t: TableResult) -> str:
    """The table line's rank order: right, or the swapped pairs, the first few by name."""
    if len(t.rows) < 2 or t.rank_order_right:
        return _order(t)
    named = "; ".join(f"{a} and {b}" for a, b in t.misranked[:_NAMED_PAIRS])
    more = len(t.misranked) - _NAMED_PAIRS
    return f"{named} swapped" + (f", and {more} more pairs ({_order(t)})" if more > 0 else "")


def _command_lines(argv: Sequence[str], width: int = 78) -> list[str]:
    """*argv* as shell lines of at most *width* characters, each option with its value, continued with a
    backslash: a command to copy.  A value too long for a line (a pipeline's 72 stage counts) is cut
    after a comma and continued at the start of the next line, which a shell joins into one word (a
    backslash before the line's end removes both); a quoted one stays whole."""
    import re
    import shlex

    words: list[str] = []
    for word in map(shlex.quote, argv):
        if words and not word.startswith("-") and words[-1].startswith("-") and " " not in words[-1]:
            words[-1] += " " + word  # an option and its value stay together
        else:
            words.append(word)
    lines = ["$"]
    for word in words:
        if len(lines[-1]) + 1 + len(word) > width - 2 and lines[-1] != "$":
            lines[-1] += " \\"
            lines.append("   ")
        if len(lines[-1]) + 1 + len(word) > width - 2 and "'" not in word:
            head, line = lines.pop() + " ", ""
            for piece in re.split(r"(?<=,)", word):
                if line and len(head) + len(line) + len(piece) > width - 1:
                    lines.append(head + line + "\\")
                    head, line = "", ""
                line += piece
            lines.append(head + line)
            continue
        lines[-1] += " " + word
    return lines


_UNIT = {"iteration_s": "per iteration"}
"""What follows a value already written with its unit (a time), instead of the quantity's name."""


@renders("costmodel.cli.validate.ShownRun")
def render_shown_run(shown: ShownRun) -> Rendered:
    """The run's published and predicted numbers, the command that prices it, then its step's rendering."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.cli.render import render
    from costmodel.validation import MEASURES

    d = shown.detail
    r = d.row
    title = f"{escape(d.title)}\n" if d.title != d.table else ""
    head = markup(f"[bold]validate[/bold] · run {escape(r.label)} of {escape(d.table)} on {escape(r.gpu)}\n"
                  f"{title}"
                  f"published {_value(d.quantity, r.published)}, predicted {_value(d.quantity, r.predicted)} "
                  f"{_UNIT.get(d.quantity, MEASURES[d.quantity])}: error {_error(r.error)}")
    body, notes = render(d.step)
    return Group(head, Text(""), _Command(shown.command), Text(""), body), notes


class _Command:
    """A command to copy, laid out as shell lines at the width it is drawn at (at most 78 columns)."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = argv

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        for line in _command_lines(self.argv, width=min(78, options.max_width)):
            yield Text(line, no_wrap=True, overflow="fold")


@renders("costmodel.validation.Validation")
def render_validation(v: Validation) -> Rendered:
    """Each table's runs, then one line per table: its mean and largest |error| and the rank order."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.validation import MEASURES

    drawn: list[Any] = []
    for t in v.tables:
        order = escape(_swapped(t))
        named = f" · {escape(t.table)}" if t.title != t.table else ""  # a file without a title: its path once
        drawn += [markup(f"[bold]{escape(t.title)}[/bold]{named} · {MEASURES[t.quantity]}"),
                  _rows(t, v.gpu),
                  markup(f"[dim]mean |error| {format_share(t.mean_abs_error)}, largest "
                         f"{format_share(t.max_abs_error)}; rank order {order}[/dim]"), Text("")]
    summary = table("table", "runs", "mean |error|", "max |error|", "rank order",
                    numeric=("runs", "mean |error|", "max |error|"), no_wrap=True)
    for t in v.tables:
        summary.add_row(t.table, str(len(t.rows)), format_share(t.mean_abs_error),
                        format_share(t.max_abs_error), _order(t))
    used = list(dict.fromkeys(r.gpu for t in v.tables for r in t.rows)) or [v.gpu]  # the GPUs priced on
    few = len(used) <= 3
    where = escape(" or ".join(used)) if few else f"{escape(v.gpu)} or the GPU its row names"
    head = markup(f"[bold]validate[/bold] · each run priced by costmodel step on {where}, nothing fitted to "
                  "these tables")
    sources = "; ".join(f"costmodel gpus {g}" for g in (used if few else [v.gpu]))
    notes = (f"error: predicted / published − 1; the GPU's rates, links and sources: {sources}",
             *(f"warning: {t.table}: {_listed([r.label for r in t.rows if not r.fits])} do not fit the "
               "memory of the GPU priced on, in the model; priced anyway (they ran, so the GPU or the "
               "model's memory is not theirs)" for t in v.tables if any(not r.fits for r in t.rows)))
    return Group(head, Text(""), *drawn, summary), (*notes, *v.notes)


def _listed(labels: Sequence[str]) -> str:
    """A few labels by name, the count of the rest."""
    shown = ", ".join(labels[:4])
    return shown + (f" and {len(labels) - 4} more runs" if len(labels) > 4 else "")
