"""Where results go: one JSON object on stdout, or rich tables (notes on stderr)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["emit", "table"]


def table(*columns: str, numeric: Iterable[str] = (), no_wrap: bool | Iterable[str] | None = None) -> Any:
    """A rich table in the house style: bold headers, no box, no padding at the edges.

    *numeric* columns are right-aligned.  *no_wrap* says which columns stay on one line: the
    numeric ones (default), all (``True``), none (``False``), or the columns named.
    """
    from rich.table import Table

    right = set(numeric)
    kept = right if no_wrap is None else set(columns) if no_wrap is True else set() if no_wrap is False \
        else set(no_wrap)
    out = Table(header_style="bold", box=None, pad_edge=False, show_edge=False, collapse_padding=True)
    for column in columns:
        out.add_column(column, justify="right" if column in right else "left", no_wrap=column in kept)
    return out


def emit(result: Any, *, as_json: bool) -> None:
    """Print *result*: ``to_dict()`` as JSON, or its rendering with rich."""
    if as_json:
        from costmodel.renames import collected

        data = result.to_dict()
        if collected():  # old names used (already said on stderr)
            data["deprecations"] = list(collected())
        sys.stdout.write(json.dumps(data, allow_nan=False, ensure_ascii=False) + "\n")
        return
    from rich.console import Console

    from costmodel.cli.render import render

    body, notes = render(result)
    Console(highlight=False).print(body)
    if notes:
        err = Console(stderr=True, highlight=False)
        for note in notes:
            err.print(f"[dim]note:[/dim] {_escape(note)}")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
