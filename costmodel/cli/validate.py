"""The ``validate`` command: the step model against published measured runs, a row each, and the errors.

It makes one call to :func:`costmodel.validation.validate` and emits the result, whose human rendering
is declared here; rich loads only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.gpus import gpu_names
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.units import format_number, format_share, format_time

if TYPE_CHECKING:
    from costmodel.validation import TableResult, Validation

__all__ = ["app", "render_validation"]

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
    as_json: Json = False,
) -> None:
    """Price published training runs from their configurations and compare with what was measured.

    Each run is a costmodel step on one GPU preset and the links it describes, nothing set per row but
    the run's configuration; a row each with the published and predicted number and the error, and per
    table the mean |error|, the largest, and whether the predictions rank the runs as measured.
    Shipped: narayanan2021-table1, korthikanti2022-table5, narayanan2021-table2. A CSV of your own
    (docs/theory/step-vs-measured.md gives the columns) is read the same way.

    JSON: {"gpu", "tables": [{"table", "title", "quantity", "rows": [{"label", "published", "predicted",
    "error", "step_s", "gpus", "gpu"}], "mean_abs_error", "max_abs_error", "rank_order_right", "misranked",
    "sources"}]}.

    Example: costmodel validate

    Example: costmodel validate korthikanti2022-table5 --gpu a100-80gb
    """
    from costmodel.validation import validate as run

    emit(run(tables or None, gpu=gpu), as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _error(x: Any) -> str:
    return f"{'+' if x > 0 else ''}{format_number(100 * x, digits=3)}%"


def _value(quantity: str, x: Any) -> str:
    return format_time(x) if quantity == "iteration_s" else format_number(x, digits=4)


def _rows(t: TableResult, gpu: str) -> Any:
    """The table's runs; a GPU column when a row was priced on another GPU than *gpu* (its own column)."""
    from rich.markup import escape

    own = any(r.gpu != gpu for r in t.rows)
    out = table("run", *(("GPU",) if own else ()), "GPUs", "published", "predicted", "error", "step",
                numeric=("GPUs", "published", "predicted", "error", "step"), optional=("step",))
    for r in t.rows:
        out.add_row(escape(r.label), *((escape(r.gpu),) if own else ()), str(r.gpus),
                    _value(t.quantity, r.published), _value(t.quantity, r.predicted), _error(r.error),
                    format_time(r.step_s))
    return out


def _order(t: TableResult) -> str:
    if t.rank_order_right:
        return "right"
    return f"{len(t.misranked)} pair{'s' if len(t.misranked) > 1 else ''} swapped"


@renders("costmodel.validation.Validation")
def render_validation(v: Validation) -> Rendered:
    """Each table's runs, then one line per table: its mean and largest |error| and the rank order."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.validation import MEASURES

    drawn: list[Any] = []
    for t in v.tables:
        swapped = "; ".join(f"{a} and {b}" for a, b in t.misranked)
        order = "right" if t.rank_order_right else f"{escape(swapped)} swapped"
        drawn += [markup(f"[bold]{escape(t.title)}[/bold] · {escape(t.table)} · {MEASURES[t.quantity]}"),
                  _rows(t, v.gpu),
                  markup(f"[dim]mean |error| {format_share(t.mean_abs_error)}, largest "
                         f"{format_share(t.max_abs_error)}; rank order {order}[/dim]"), Text("")]
    summary = table("table", "runs", "mean |error|", "max |error|", "rank order",
                    numeric=("runs", "mean |error|", "max |error|"), no_wrap=True)
    for t in v.tables:
        summary.add_row(escape(t.table), str(len(t.rows)), format_share(t.mean_abs_error),
                        format_share(t.max_abs_error), _order(t))
    own = any(r.gpu != v.gpu for t in v.tables for r in t.rows)
    where = f"{escape(v.gpu)} or the GPU its row names" if own else escape(v.gpu)
    head = markup(f"[bold]validate[/bold] · each run priced by costmodel step on {where}, nothing fitted to "
                  "these tables")
    notes = (f"error: predicted / published − 1; the GPU's rates, links and sources: costmodel gpus {v.gpu}",)
    return Group(head, Text(""), *drawn, summary), (*notes, *v.notes)
