"""Where results go: one JSON object on stdout, or the human rendering, notes included, on stdout.

Every command prints its result with :func:`emit`, in one of four forms: JSON (``--json``), Markdown
(``--markdown``) or LaTeX (``--latex``), where a command offers them, or the human rendering, fitted
to the width
(docs/design.md, "Rendering"; the layout rules are :mod:`costmodel.cli.layout`'s):

* The width is the terminal's, or ``COLUMNS`` when set.  Output that is not a terminal (a file, a
  pipe) is not wrapped at all unless ``COLUMNS`` is set.
* Notes follow the answer on stdout (``note: ...``, hanging indent); no line ends in spaces.

rich is imported only to render, never to print JSON.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from costmodel.cli.flags import DESCRIBING, cli_message
from costmodel.cli.layout import fitted, prose, tables_in
from costmodel.cli.render import render

__all__ = ["emit", "show", "worded"]

_UNWRAPPED = 1 << 16
"""The width of output that is not a terminal, COLUMNS unset: wide enough that nothing wraps."""

_NARROWEST = 20
"""The narrowest width rendered (COLUMNS=0 would print nothing)."""


def _console() -> Any:
    """Console on stdout: the terminal's width or COLUMNS (:data:`_NARROWEST` at least); not a terminal
    and no COLUMNS: no wrapping."""
    from rich.console import Console

    wraps = "COLUMNS" in os.environ or sys.stdout.isatty()
    console = Console(highlight=False, width=None if wraps else _UNWRAPPED)
    console.width = max(console.width, _NARROWEST)
    return console


class _Wording:
    """How this command's notes name what they are about: as the user typed each option, and a value a
    model description set (``--model``, ``--hf-config``, ``--megatron``) in its source's words, as its
    errors name them (:func:`~costmodel.cli.flags.cli_message`); worked out on the first note."""

    def __init__(self, typed: Callable[[], Any]) -> None:
        self.find_typed = typed
        self.typed: Any = None
        self.origins: Any = None

    def __call__(self, note: str) -> str:
        if self.typed is None:
            self.typed = self.find_typed()
            self.origins = {}
            if DESCRIBING & self.typed.keys():
                from costmodel.cli.origins import origins

                self.origins = origins(self.typed)
        return cli_message(note, self.typed, origins=self.origins)


_WORDING: list[_Wording] = []
"""The wording of the command running (none outside a command: a notebook's)."""


@contextmanager
def worded(typed: Callable[[], Any]) -> Iterator[None]:
    """Within the block, notes name options as the command line *typed* (a function that gives
    :func:`~costmodel.cli.flags.typed_options`) gave them."""
    _WORDING.append(_Wording(typed))
    try:
        yield
    finally:
        _WORDING.pop()


def _said(note: str) -> str:
    """*note* in the words of the command running, else with the parameters' options."""
    return _WORDING[-1](note) if _WORDING else cli_message(note)


_TRAILING = re.compile(r"(?: |\x1b\[[0-9;]*m)+$")
_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def _rstrip(line: str) -> str:
    """*line* without trailing spaces, its closing escape codes kept."""
    found = _TRAILING.search(line)
    return line if found is None else line[:found.start()] + "".join(_STYLE.findall(found.group()))


def _json(result: Any) -> str:
    """``to_dict()`` as one line of JSON, with the old names used (already said on stderr), if any."""
    import json

    from costmodel.renames import collected

    data = _in_options(result.to_dict())
    if collected():
        data["deprecations"] = list(collected())
    return json.dumps(data, allow_nan=False, ensure_ascii=False) + "\n"


_MESSAGES = frozenset({"notes", "note", "warnings", "reason"})
"""The keys of a result's JSON that hold the core's messages, said in the command line's words here."""


def _in_options(data: Any, *, message: bool = False) -> Any:
    """*data* with the strings under :data:`_MESSAGES` keys naming options instead of parameters."""
    if isinstance(data, dict):
        return {k: _in_options(v, message=message or k in _MESSAGES) for k, v in data.items()}
    if isinstance(data, list):
        return [_in_options(v, message=message) for v in data]
    return _said(data) if message and isinstance(data, str) else data


def emit(result: Any, *, as_json: bool, markdown: bool = False, latex: bool = False) -> None:
    """Print *result* on stdout.

    *markdown*, *latex*: the result's document in that form (even with *as_json*), from the renderer
    declared for it (``@renders(name, form="markdown")``), as it is.  *as_json*: ``to_dict()`` as
    JSON, or the result's own ``to_json()`` where it is a document of another program's format
    (Gradescope's results.json), printed as that program reads it.  Otherwise its rendering
    (:func:`~costmodel.cli.render.render`) fitted to the width, followed by its notes and those of
    the tables that left columns out, each ``note: ...`` (``warning: ...`` for a note that starts so).
    """
    if markdown or latex:
        sys.stdout.write(render(result, "markdown" if markdown else "latex"))
        return
    if as_json:
        own = getattr(result, "to_json", None)
        sys.stdout.write(_json(result) if own is None else own() + "\n")
        return
    console = _console()
    with console.capture() as captured:
        show(result, console)
    sys.stdout.write("".join(_rstrip(line) + "\n" for line in captured.get().splitlines()))


def show(result: Any, console: Any) -> None:
    """Print the human rendering of *result* on the rich *console*, fitted to its width, followed by
    its notes and those of the tables that left columns out, each ``note: ...`` (``warning: ...``);
    what :func:`emit` prints, and what a notebook shows (:mod:`costmodel.notebook`)."""
    from rich.text import Text

    body, notes = render(result)
    notes = tuple(map(_said, notes))  # the core's notes name parameters; the options here
    body = fitted(body)
    console.print(body)
    notes = (*notes, *dict.fromkeys(t.note() for t in tables_in(body) if t.left_out))  # said once
    for note in notes:
        label, style = ("warning:", "yellow") if note.startswith("warning: ") else ("note:", "dim")
        text = note.removeprefix("warning: ")
        console.print(prose(Text.assemble((label, style), " ", text), hang=len(label) + 1))
