"""Results shown in Jupyter and IPython as the command line shows them.

``import costmodel`` inside IPython (a Jupyter kernel, the IPython shell) calls :func:`register`,
as do ``%load_ext costmodel`` and ``costmodel.notebook.register()`` themselves: every result type the
command line renders (:data:`costmodel.cli.render.RENDERED_IN`, and the types a command-line module
defines, as it declares their renderers) then displays as an HTML table in the command line's
layout, 100 columns wide, notes included, and as the same text in a terminal.

The formatters are registered by the types' names: registering imports no result module, no
renderer, no rich; the renderer and rich are loaded when a result is first displayed.  Formulas
also show as LaTeX (``Formula._repr_latex_``) and worked examples as Markdown, without this.
"""

from __future__ import annotations

import io
import sys
import weakref
from typing import Any

__all__ = ["WIDTH", "html", "load_ipython_extension", "register", "text"]

WIDTH = 100
"""The width a notebook's tables are laid out for, as a terminal of 100 columns."""

_PRE = ('<pre style="white-space:pre;overflow-x:auto;line-height:normal;'
        "font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace\">{code}</pre>")
"""The HTML around rich's exported lines: a block of monospace text, as in a terminal."""

_REGISTERED: weakref.WeakSet[Any] = weakref.WeakSet()
"""The display formatters (one per shell) registered already: once each."""


def _console(*, colour: bool) -> Any:
    from rich.console import Console

    # force_jupyter=False: in a kernel, rich would otherwise display what it prints itself
    return Console(record=True, width=WIDTH, file=io.StringIO(), highlight=False, force_jupyter=False,
                   color_system="truecolor" if colour else None, force_terminal=colour)


def _shown(result: Any, *, colour: bool) -> Any:
    """A recording console that has printed *result* as the command line renders it."""
    from costmodel.cli.output import show

    console = _console(colour=colour)
    show(result, console)
    return console


def html(result: Any) -> str:
    """*result* rendered as the command line renders it, as HTML (a ``<pre>`` with inline styles).

    Raises
    ------
    TypeError
        For a value the command line does not render.
    """
    return _shown(result, colour=True).export_html(inline_styles=True, code_format=_PRE)


def text(result: Any) -> str:
    """*result* rendered as the command line renders it, as plain text 100 columns wide.

    Raises
    ------
    TypeError
        For a value the command line does not render.
    """
    return "\n".join(line.rstrip() for line in _shown(result, colour=False).export_text().splitlines())


def _pretty(result: Any, printer: Any, cycle: bool) -> None:
    """IPython's plain-text printer protocol."""
    printer.text(repr(result) if cycle else text(result))


def register(shell: Any = None) -> bool:
    """Register the HTML and plain-text formatters of every rendered result type in IPython's *shell*
    (default: the running one); False when there is none (a plain interpreter).  Registering twice
    changes nothing."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        if shell is None:
            return False
    if shell.display_formatter in _REGISTERED:
        return True
    _REGISTERED.add(shell.display_formatter)
    formatters = shell.display_formatter.formatters
    from costmodel.cli.render import watch

    def add(name: str) -> None:
        module, _, qualname = name.rpartition(".")
        formatters["text/html"].for_type_by_name(module, qualname, html)
        formatters["text/plain"].for_type_by_name(module, qualname, _pretty)

    watch(add)
    return True


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext costmodel.notebook``: :func:`register` in *shell*."""
    register(shell)
