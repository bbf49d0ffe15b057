"""Help panels that never cut an option's name: typer's option tables, stacked when too narrow.

Typer prints a command's options as a table per panel: the names, the value's type, the help.  In a
narrow terminal rich shrinks every column of that table alike, so ``--microbatches`` prints as
``--micro…`` and ``NAME|FILE|ALPHA:RATE`` folds over two lines.  Here a panel whose names and types
do not fit beside a help column of at least :data:`MIN_HELP` columns is stacked instead, as the
house tables are (docs/design.md, "Rendering"): per option a line of its names and type, then its
help indented below.  A panel that fits is left to typer, unchanged.

:func:`install` costs nothing at start-up: it wraps typer's ``format_help`` (typer.core is loaded
anyway), and the wrapper replaces the panel printer of ``typer.rich_utils`` (rich, markdown: tens
of milliseconds) the first time a help is printed.  It relies on typer's ``_print_options_panel``,
which typer 0.26–0.28 (the versions pyproject allows) define alike; tests/cli/test_widths.py checks
every command's help at 40, 60 and 80 columns.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["MIN_HELP", "install", "typer_rich_utils"]

MIN_HELP = 20
"""Narrowest help column (in columns) beside the names and types; narrower, the panel is stacked."""

_INDENT = 4
"""Indentation of an option's help under its names, in a stacked panel."""

_INSTALLED = "_costmodel_fits_width"
"""Attribute marking the functions this module put in typer's place (so installing twice is harmless)."""


def install() -> None:
    """Have every help printed from now on stack the option panels that would not fit the width."""
    from typer.core import TyperCommand, TyperGroup

    for cls in (TyperCommand, TyperGroup):
        if not getattr(cls.format_help, _INSTALLED, False):
            setattr(cls, "format_help", _fitting(cls.format_help))  # noqa: B010 - mypy refuses assigning a method


def _fitting(format_help: Callable[..., None]) -> Callable[..., None]:
    """*format_help* that first puts :func:`_print_panel` in typer's place."""

    @functools.wraps(format_help)
    def wrapper(self: Any, ctx: Any, formatter: Any) -> None:
        rich_utils = typer_rich_utils()
        printer = rich_utils._print_options_panel
        if not getattr(printer, _INSTALLED, False):
            rich_utils._print_options_panel = functools.partial(_print_panel, printer)
            setattr(rich_utils._print_options_panel, _INSTALLED, True)
        format_help(self, ctx, formatter)

    setattr(wrapper, _INSTALLED, True)
    return wrapper


_DEFERRED = (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback"))
"""What typer.rich_utils imports and a help screen never uses (Markdown: only with typer's markdown markup
mode, which this app does not set; Traceback: only for an uncaught exception): modules that load
markdown_it, pygments and attrs, most of the help screen's start-up."""


class _StandIn(type):
    """A stand-in for a class of a module not yet imported: using it (calling it, reading an attribute)
    imports the module and forwards to the real class."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._where
        return getattr(importlib.import_module(module), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)


def typer_rich_utils() -> Any:
    """``typer.rich_utils``, imported without the modules of :data:`_DEFERRED`.

    While it is imported, each of them that is not loaded yet is a module holding a :class:`_StandIn`
    stand-in of its class; the stand-ins leave ``sys.modules`` right after, so any later import of those
    modules (typer printing a traceback) loads the real ones, and the stand-ins forward to them.
    """
    if "typer.rich_utils" in sys.modules:
        return sys.modules["typer.rich_utils"]
    stubs: dict[str, ModuleType] = {}
    for module, name in _DEFERRED:
        if module not in sys.modules:
            stub = ModuleType(module)
            setattr(stub, name, _StandIn(name, (), {"_where": (module, name)}))
            stubs[module] = stub
    sys.modules.update(stubs)
    try:
        from typer import rich_utils
    finally:
        for module, stub in stubs.items():
            if sys.modules.get(module) is stub:
                del sys.modules[module]
    return rich_utils


def _print_panel(original: Callable[..., None], *, name: str, params: list[Any], ctx: Any,
                 markup_mode: Any, console: Any) -> None:
    """Typer's panel of *params*, or, where its names and types would be cut, the stacked panel."""
    from rich.cells import cell_len
    from rich.measure import Measurement

    if not params:
        return
    rows = [_Row.of(param, ctx, markup_mode) for param in params]
    required = any(row.required for row in rows)
    fixed = [max(widths) + 2 for widths in zip(*(row.widths for row in rows), strict=True)]  # space each side
    fixed[0] -= 0 if required else 1  # none left of the first column
    if required:
        fixed.insert(0, 2)  # the asterisk
    helps = [Measurement.get(console, console.options, item) for row in rows
             for item in getattr(row.help, "renderables", (row.help,))]  # a Columns: measure its items
    widest, longest_word = max(m.maximum for m in helps) + 1, max(m.minimum for m in helps) + 1
    # rich takes the excess of a table too wide from its widest column first, down to the next widest
    # (rich.table.Table._collapse_widths): the help column shrinks to the widest other column before
    # a name is cut; and a word wider than the help column is cut too (--tensor-model-paral…).
    room = console.width - 4 - sum(fixed)  # the panel's border and padding take 4
    titled = cell_len(name) + 2 <= console.width - 4  # rich cuts a longer title, without a mark
    if titled and room >= max(min(widest, max(*fixed, MIN_HELP + 1)), longest_word):
        original(name=name, params=params, ctx=ctx, markup_mode=markup_mode, console=console)
    else:
        _print_stacked(name, rows, console=console)


class _Row:
    """An option (or argument) as its help shows it.  (A plain class: a dataclass costs start-up time.)"""

    __slots__ = ("help", "names", "negative", "required", "types")

    def __init__(self, required: bool, names: list[str], negative: list[str], types: Any, help: Any) -> None:
        self.required = required
        self.names = names  # long names first, then short ones (an argument: its metavar)
        self.negative = negative  # of a flag: --no-causal
        self.types = types  # rich Text: the value's metavar and range
        self.help = help  # typer's help cell (a rich Columns: the help, the default, [required])

    @classmethod
    def of(cls, param: Any, ctx: Any, markup_mode: Any) -> _Row:
        """*param*'s row, made as typer makes it (typer.rich_utils._print_options_panel)."""
        from rich.text import Text
        from typer import rich_utils
        from typer.core import TyperArgument

        if isinstance(param, TyperArgument):
            kind = param.type.get_metavar(param=param, ctx=ctx) or f"<{param.type.name}>"
        else:
            kind = param.make_metavar(ctx=ctx)
        types = Text(style=rich_utils.STYLE_TYPES)
        if kind and "bool" not in kind.lower():
            types.append(kind)
        describe = getattr(param.type, "_describe_range", None)
        counted = getattr(param, "count", False) and param.type.min == 0 and param.type.max is None
        if describe is not None and not counted and describe():
            types.append(rich_utils.RANGE_STRING.format(describe()))
        shown = (param.metavar or param.name or "") if isinstance(param, TyperArgument) else ""

        def ordered(opts: list[str]) -> list[str]:
            return [o for o in opts if "--" in o] + [shown or o for o in opts if "--" not in o]

        help_cell = rich_utils._get_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode)
        return cls(bool(param.required), ordered(param.opts), ordered(param.secondary_opts),
                   rich_utils.types_highlighter(types), help_cell)

    @property
    def widths(self) -> tuple[int, ...]:
        """Widths of the cells of typer's table: long names, short names, the same negative, types."""
        from rich.cells import cell_len

        cells = [[n for n in names if n.startswith("--") == long]
                 for names in (self.names, self.negative) for long in (True, False)]
        return (*(cell_len(",".join(c)) for c in cells), self.types.cell_len)


def _print_stacked(name: str, rows: list[_Row], *, console: Any) -> None:
    """The panel as a list: per option, a line of its names and type, then its help indented.

    A title too wide for the frame keeps there what fits (up to its parenthesis: ``Sampling rate``);
    the rest opens the panel.
    """
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.text import Text
    from typer import rich_utils

    from costmodel.cli.layout import prose

    title, rest = _title(name, console.width - 6)
    blocks: list[Any] = [prose(Text(rest))] if rest else []
    starred = any(row.required for row in rows)
    for row in rows:
        line = Text()
        if starred:
            star = rich_utils.REQUIRED_SHORT_STRING if row.required else " "
            line.append(f"{star} ", style=rich_utils.STYLE_REQUIRED_SHORT)
        line.append_text(rich_utils.highlighter(", ".join(row.names)))
        if row.negative:
            line.append(" / ").append_text(rich_utils.negative_highlighter(", ".join(row.negative)))
        if row.types.plain:
            line.append("  ").append_text(row.types)
        blocks.append(prose(line, hang=_INDENT))
        items = getattr(row.help, "renderables", [row.help])
        if all(isinstance(item, Text) for item in items):  # wrapped at spaces, as the house prose
            blocks.append(Padding(prose(Text(" ").join(items)), (0, 0, 0, _INDENT)))
        else:
            blocks.append(Padding(row.help, (0, 0, 0, _INDENT)))
    console.print(Panel(Group(*blocks), border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER, title=title,
                        title_align=rich_utils.ALIGN_OPTIONS_PANEL))


def _title(name: str, width: int) -> tuple[str, str]:
    """*name* as a panel's title of at most *width* columns, and the rest of it (empty if it fits)."""
    from rich.cells import cell_len

    if cell_len(name) <= width:
        return name, ""
    head, paren, tail = name.partition(" (")
    if paren and cell_len(head) <= width:
        return head, f"({tail}"
    words = name.split(" ")
    k = max([1, *(i for i in range(1, len(words)) if cell_len(" ".join(words[:i])) <= width)])
    return " ".join(words[:k]), " ".join(words[k:])
