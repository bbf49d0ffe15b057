"""Where results go: one JSON object on stdout, or rich tables (notes on stderr)."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["emit"]


def emit(result: Any, *, as_json: bool) -> None:
    """Print *result*: ``to_dict()`` as JSON, or its rendering with rich."""
    if as_json:
        sys.stdout.write(json.dumps(result.to_dict(), allow_nan=False, ensure_ascii=False) + "\n")
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
