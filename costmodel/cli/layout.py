"""How a rendering is laid out: the house table, prose wrapped at spaces, and rich markup.

How a rendering fits the width (docs/design.md, "Rendering"):

* The width is the terminal's, or ``COLUMNS`` when set (:func:`costmodel.cli.output.emit` decides).
* A table never cuts a number or a name: its numeric columns (and those named in ``no_wrap``) stay on
  one line, the others (prose: formulas, descriptions) wrap at spaces, never inside a word.
* A table that cannot fit so leaves out its ``optional`` columns, with a note saying which and how to
  see them; one that still cannot fit is stacked: a block per row, one ``column: value`` line per cell.
* Prose lines wrap at spaces; a wrapped line keeps its indentation (indented lines hang 2 more).

rich is imported inside the functions, so that a command importing this module for ``--json`` output
loads no rich.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["Table", "fitted", "markup", "one_line", "prose", "table", "tables_in"]

_MIN_PROSE = 16
"""Narrowest a prose column gets (unless all its text is narrower); narrower, the table is stacked."""

_HANG = 2
"""Extra indentation of the continuation of a wrapped indented line, and of a stacked row's cells."""

_WORD = re.compile(r"\S*\d (?:[pnµumkKMGTPE]i?)?[Bbs](?:/[sB])?[)\],;:.]*(?=\s|$)|\S+")
"""What a line breaks between: runs of non-spaces, a number and its unit (``400 Gb/s``) kept together."""


_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
"""A line break, as ``str.splitlines`` finds them."""


def one_line(text: str) -> str:
    """*text* on one line, each line break written ``⏎``: a value from a file, shown in one cell
    (a value of two lines would otherwise read as two rows).

    >>> one_line("341MB\\n342MB")
    '341MB⏎342MB'
    """
    return _BREAK.sub("⏎", text)


def markup(text: str) -> Any:
    """*text* in rich markup (``[bold]…[/bold]``) as a rich ``Text``, emoji codes left alone: a name
    such as ``:fire:`` (a student id, a log's path) prints as written, and rich's emoji table is not
    loaded.  What the text interpolates from a user or a file is escaped by its caller
    (``rich.markup.escape``); text that is still no valid markup prints as written, never an error."""
    from rich.errors import MarkupError
    from rich.text import Text

    try:
        return Text.from_markup(text, emoji=False)
    except MarkupError:
        return Text(text)


def table(*columns: str, numeric: Iterable[str] = (), no_wrap: bool | Iterable[str] | None = None,
          optional: Iterable[str | tuple[str, ...]] = (), centred: Iterable[str] = (),
          header: bool = True) -> Table:
    """A table in the house style: bold headers, no box, one space between columns, fitted to the width.

    *numeric* columns are right-aligned (*centred* ones centred).  *no_wrap* says which columns stay
    on one line: the numeric ones (default), all (``True``), none (``False``), or the columns named;
    the others wrap at spaces.  *optional* columns are left out, with a note, when the table does not
    fit the width otherwise: one entry (a column, or a tuple of columns that go together) after
    another until it fits.  Names of columns not in *columns* are ignored (a renderer may name a column
    it shows only sometimes).  Fill it with :meth:`Table.add_row`.
    """
    right, centre = set(numeric), set(centred)
    kept = right if no_wrap is None else set(columns) if no_wrap is True else set() if no_wrap is False \
        else set(no_wrap)
    justify = ["right" if c in right else "center" if c in centre else "left" for c in columns]
    groups = [[columns.index(c) for c in ((o,) if isinstance(o, str) else o) if c in columns]
              for o in optional]
    return Table(columns, justify, [c in kept for c in columns], [g for g in groups if g], header=header)


class Table:
    """Rows of cells (plain text, printed as written, or a styled ``Text``, e.g. :func:`markup`'s), laid out
    for the width when rendered.  A cell's text is never read as markup: a value from a user or a file
    (``[run1].txt``, an answer of ``[/]``) shows as it is.

    After rendering, :attr:`left_out` names the optional columns that were left out to fit.
    """

    def __init__(self, columns: tuple[str, ...], justify: list[str], kept: list[bool],
                 optional: list[list[int]], *, header: bool) -> None:
        self.columns, self.justify, self.kept, self.optional = columns, justify, kept, optional
        self.header = header
        self.rows: list[tuple[Any, ...]] = []
        self.left_out: tuple[str, ...] = ()
        self.width = 0
        self.wanted = 0

    def add_row(self, *cells: Any) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(cells)

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.text import Text

        width = options.max_width
        # a plain cell stays a str (a table of 10⁵ rows: a Text per cell, measured and wrapped by rich,
        # was most of a command's time); one that is not plain (tabs, line breaks, controls) becomes a Text
        cells = [[c if isinstance(c, Text) or _plain(c) else Text(c) for c in row] for row in self.rows]
        heads = [Text(c, style="bold") for c in self.columns]
        lo, hi = self._measure(console, options, heads, cells)
        shown = list(range(len(self.columns)))
        self.width, self.wanted = width, sum(lo) + len(lo) - 1
        for group in [[], *self.optional]:
            shown = [i for i in shown if i not in group]
            widths = _allot([lo[i] for i in shown], [hi[i] for i in shown], width)
            if widths is not None:
                self.left_out = tuple(c for i, c in enumerate(self.columns) if i not in shown)
                yield self._grid(shown, widths, heads, cells)
                return
        yield from self._stacked([[_text(c) for c in row] for row in cells], width)

    def _measure(self, console: Any, options: Any, heads: list[Any], cells: list[list[Any]]
                 ) -> tuple[list[int], list[int]]:
        """Per column, the narrowest width cutting no word (no cell, if kept on one line), and the widest."""
        from rich.cells import cell_len
        from rich.measure import Measurement

        room = options.max_width

        def widest_line(cell: Any) -> int:  # Measurement.get's maximum, of a plain str without a Text
            if isinstance(cell, str):
                return min(cell_len(cell), room) if room >= 1 else 0
            return Measurement.get(console, options, cell).maximum

        lo, hi = [], []
        for i, head in enumerate(heads):
            widest = max(Measurement.get(console, options, head).maximum if self.header else 0,
                         max((widest_line(row[i]) for row in cells), default=0))
            if self.kept[i]:  # the header too: wrapped, it would leave a lone "×" above the column
                narrowest = widest
            else:
                texts = ([head] if self.header else []) + [row[i] for row in cells]
                narrowest = max(*(_longest_word(t if isinstance(t, str) else t.plain) for t in texts),
                                min(widest, _MIN_PROSE))
            lo.append(narrowest)
            hi.append(widest)
        return lo, hi

    def _grid(self, shown: list[int], widths: list[int], heads: list[Any], cells: list[list[Any]]) -> Any:
        """The *shown* columns at these *widths*, one space apart: prose cells wrapped at spaces, every
        cell justified in its column, the lines of a row's cells side by side.  A row of plain cells that
        fit is one str, written as it is (:class:`_Lines`)."""
        from rich.cells import cell_len
        from rich.text import Text

        rows = [heads, *cells] if self.header else cells
        columns = list(zip(shown, widths, strict=True))
        lines: list[Any] = []
        for row in rows:
            written = self._written(row, columns, cell_len)
            if written is not None:
                lines.append(written)
                continue
            row = [_text(c) for c in row]  # noqa: PLW2901 - the row as rich Texts
            parts = [[row[i]] if self.kept[i] else _paragraph(row[i], w).split("\n")
                     for i, w in zip(shown, widths, strict=True)]
            for k in range(max(map(len, parts))):
                line = Text()
                for j, (i, w) in enumerate(zip(shown, widths, strict=True)):
                    cell = parts[j][k] if k < len(parts[j]) else Text()
                    room = w - cell.cell_len
                    left = {"right": room, "center": room // 2}.get(self.justify[i], 0)
                    line.append(" " * (left + (j > 0))).append_text(cell).append(" " * (room - left))
                lines.append(line)
        return _Lines(lines)

    def _written(self, row: Any, columns: list[tuple[int, int]], cell_len: Any) -> str | None:
        """The line of a *row* of plain cells (str) that each fit their column, justified as
        :meth:`_grid` justifies a Text's; None for any other row."""
        pieces = []
        for j, (i, w) in enumerate(columns):
            cell = row[i]
            if not isinstance(cell, str) or (n := cell_len(cell)) > w:
                return None
            room = w - n
            left = {"right": room, "center": room // 2}.get(self.justify[i], 0)
            pieces.append(f"{' ' * (left + (j > 0))}{cell}{' ' * (room - left)}")
        return "".join(pieces)

    def _stacked(self, cells: list[list[Any]], width: int) -> Iterator[Any]:
        """One block per row: its first cell, then a ``column: value`` line per other (non-empty) cell."""
        from rich.text import Text

        labels = [f"{c}: " if self.header and c else "" for c in self.columns]
        aligned = max(map(len, labels[1:]), default=0)
        if width - _HANG - aligned < _MIN_PROSE:
            aligned = 0
        for r, row in enumerate(cells):
            if r:
                yield Text("")
            if row[0].plain:  # a number is named by its column: "round 3", "stage 0"
                title = Text(f"{self.columns[0]} ").append_text(row[0]) if self.justify[0] == "right" \
                    and self.header and self.columns[0] else row[0]
                yield from _wrap(title, width, _HANG)
            for i in range(1, len(row)):
                if not row[i].plain:
                    continue
                label = labels[i].ljust(aligned)
                hang = _HANG + (len(label) if aligned else _HANG)
                line = Text(" " * _HANG + label, style="bold") if labels[i] else Text(" " * _HANG)
                if self.kept[i] and _HANG + len(label) + row[i].cell_len > width >= hang + row[i].cell_len:
                    yield line  # a number that fits only on a line of its own
                    yield Text(" " * hang).append_text(row[i])
                    continue
                yield from _wrap(line.append_text(row[i]), width, hang)

    def note(self) -> str:
        """The note on the columns left out (after rendering)."""
        names = " and ".join(", ".join(self.left_out).rsplit(", ", 1))
        return (f"{names} left out to fit {self.width} columns; they show from {self.wanted} columns "
                f"(a wider terminal, or COLUMNS={self.wanted}) and in --json")


def _plain(cell: Any) -> bool:
    """Whether *cell* is a str a table writes as it is: printable, one line, no tab (what a Text would
    change: it drops control characters and expands tabs)."""
    return isinstance(cell, str) and cell.isprintable()


def _text(cell: Any) -> Any:
    """*cell* as a rich Text (a str as written, never read as markup)."""
    from rich.text import Text

    return cell if isinstance(cell, Text) else Text(cell)


class _Lines:
    """A table's lines: a rich Text each, or a str written as it is, a line of plain text that fits (rich
    would wrap it to the same line, at a cost per line that a table of 10⁵ rows feels)."""

    def __init__(self, lines: list[Any]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.segment import Segment

        end = Segment.line()
        for line in self.lines:
            if isinstance(line, str):
                yield Segment(line)
                yield end
            else:
                yield line


def _allot(lo: list[int], hi: list[int], width: int) -> list[int] | None:
    """Column widths within *width* (one space between columns), the widest shrunk first; None: no fit."""
    room = width - (len(lo) - 1)
    if sum(lo) > room:
        return None
    widths = list(hi)
    while sum(widths) > room:
        i = max((j for j in range(len(widths)) if widths[j] > lo[j]), key=lambda j: widths[j])
        widths[i] -= 1
    return widths


def _longest_word(plain: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(w.group()) for w in _WORD.finditer(plain)), default=0)


def _paragraph(text: Any, width: int) -> Any:
    """*text* wrapped at *width* (no indentation), its lines joined again."""
    from rich.text import Text

    return Text("\n").join(piece for line in text.split("\n") for piece in _wrap(line, width, 0))


def _wrap(text: Any, width: int, hang: int) -> list[Any]:
    """*text* (one line) wrapped at spaces into lines of *width*; continuations indented by *hang*.

    A word wider than a line is cut into pieces (only then).
    """
    from rich.cells import cell_len
    from rich.text import Text

    hang = max(0, min(hang, width // 2))
    plain, pieces = text.plain, []
    start, end, room = 0, -1, width
    used = 0  # the cells of plain[start:end], grown word by word (a line's width is never measured whole)
    for word in _WORD.finditer(plain):
        if end >= 0:
            grown = used + cell_len(plain[end:word.end()])
            if grown <= room:
                used, end = grown, word.end()
                continue
            pieces.append((start, end))
            start, room = word.start(), width - hang
        used = cell_len(plain[start:word.end()])
        while used > room:  # a word wider than the line, cut
            cut = _fitting(plain, start, word.end(), room)
            pieces.append((start, cut))
            used -= cell_len(plain[start:cut])
            start, room = cut, width - hang
        end = word.end()
    pieces.append((start, max(end, start)))
    if text.spans:  # one division for every piece (slicing a Text divides the whole of it each time)
        parts = text.divide([at for piece in pieces for at in piece])
        lines = [parts[2 * k + 1] for k in range(len(pieces))]
    else:
        lines = [text.blank_copy(plain[a:b]) for a, b in pieces]
    return [line if k == 0 else Text(" " * hang).append_text(line) for k, line in enumerate(lines)]


def _fitting(s: str, start: int, stop: int, room: int) -> int:
    """Where the characters of ``s[start:stop]`` that fit in *room* cells end (at least one of them)."""
    from rich.cells import cell_len

    used = 0
    for k in range(start, stop):
        used += cell_len(s[k])
        if used > room:
            return max(k, start + 1)
    return stop


class _Prose:
    """Lines of text wrapped at spaces, each keeping its indentation (see :func:`prose`)."""

    def __init__(self, text: Any, hang: int | None = None) -> None:
        self.text, self.hang = text, hang

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        for line in self.text.split("\n"):
            indent = len(line.plain) - len(line.plain.lstrip(" "))
            hang = self.hang if self.hang is not None else indent + _HANG if indent else 0
            yield from _wrap(line, options.max_width, hang)


def prose(text: Any, hang: int | None = None) -> Any:
    """*text* (a rich ``Text``) wrapped at spaces to the width, continuations indented by *hang* (by
    default: as deep as their line, 2 more if it is indented).  A ``Text`` in a rendering's groups is
    wrapped so without asking; a custom renderable yields this instead of its lines."""
    return _Prose(text, hang)


def fitted(renderable: Any) -> Any:
    """*renderable* with its lines of text made :class:`_Prose` (inside groups too)."""
    from rich.console import Group
    from rich.text import Text

    if isinstance(renderable, Text):
        return _Prose(renderable)
    if isinstance(renderable, Group):
        return Group(*map(fitted, renderable.renderables))
    return renderable


def tables_in(renderable: Any) -> Iterator[Table]:
    """The :class:`Table` objects in *renderable*, inside groups too."""
    if isinstance(renderable, Table):
        yield renderable
    for child in getattr(renderable, "renderables", ()):
        yield from tables_in(child)
