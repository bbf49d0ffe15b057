"""Text timelines of a simulated pipeline, one line per device, like textbook diagrams."""

from __future__ import annotations

import math
from fractions import Fraction

from costmodel.pipeline.result import Bubble, PipelineOp

__all__ = ["MAX_CHART_WIDTH", "chart_scale", "format_timeline"]

#: Widest to-scale chart, in characters after the ``GPU s: `` head, when no width is given.
MAX_CHART_WIDTH = 1000


def format_timeline(result: Bubble, *, to_scale: bool = True, width: int | None = None) -> tuple[str, ...]:
    """The timeline as text, one line per device, like textbook diagrams.

    To scale (the default), an operation spans its duration: its label, then
    ``─`` up to its end.  The chart is laid out from the times *relative to the
    makespan*, so multiplying every time by a constant draws the same chart,
    and it is never wider than *width*:

    * when it fits, on a grid of ticks (the largest time dividing every
      duration), each idle tick a ``·``, every label shown;
    * otherwise in proportion, each column 1/*width* of the makespan:
      operations get their columns rounded down from their start and end,
      the label and ``─`` when it fits, else their letter (``FFF``), nothing
      when they are shorter than a column; idle columns are ``·``.

    Not to scale, the operations are listed in order and each idle gap is one
    ``·``.  Zero-time operations (``W`` with ``weight_slots=0``) are left out.

    Parameters
    ----------
    result : Bubble
        A simulated schedule.
    to_scale : bool, default True
        Whether widths are proportional to time.
    width : int, optional
        The widest line to draw to scale, head included (default: the head
        plus :data:`MAX_CHART_WIDTH`).

    Returns
    -------
    tuple of str
        ``"GPU s: ..."`` for each stage s.

    Examples
    --------
    >>> from costmodel.pipeline import bubble
    >>> for line in format_timeline(bubble("gpipe", 2, microbatches=2, backward_slots=1)):
    ...     print(line)
    GPU 0: F0 F1 ·  ·  B0 B1
    GPU 1: ·  F0 F1 B0 B1 ·
    >>> for line in format_timeline(bubble("1f1b", 2, microbatches=2)):
    ...     print(line)
    GPU 0: F0 F1 ·  ·  B0─── ·  B1───
    GPU 1: ·  F0 B0─── F1 B1─── ·  ·
    >>> format_timeline(bubble("1f1b", 2, microbatches=2), to_scale=False)
    ('GPU 0: F0 F1 · B0 · B1', 'GPU 1: · F0 B0 F1 B1 ·')

    A forward 10⁻⁷ of the backward: in proportion, the forwards too short to draw.

    >>> for line in format_timeline(bubble("1f1b", 2, microbatches=2, forward_slots="1e-7"), width=30):
    ...     print(line)
    GPU 0: ·······B0───── B1─────
    GPU 1: B0──── B1───── ········
    """
    head = len(f"GPU {result.stages - 1}: ")
    rows = _rows(result)
    if not to_scale:
        return tuple(head + " ".join(_tokens(ops, result.total_slots)) for head, ops in rows)
    columns = max(1, (MAX_CHART_WIDTH if width is None else width - head))
    grid = _grid(result, rows)
    if grid is not None and grid[0] * grid[1] <= columns:
        return _on_grid(result, rows, *grid)
    return _in_proportion(result, rows, columns)


def chart_scale(result: Bubble, width: int) -> tuple[Fraction, bool] | None:
    """How :func:`format_timeline` draws *result* to scale within *width* characters, head included.

    Returns
    -------
    (Fraction, bool) or None
        The slots per character column and whether the chart is on the tick
        grid (else in proportion); None when a chart that narrow cannot show
        every operation's label (then list the order, ``to_scale=False``).

    Examples
    --------
    >>> from costmodel.pipeline import bubble
    >>> chart_scale(bubble("1f1b", 2, microbatches=2), 80)  # a tick of 1 slot, 3 characters each
    (Fraction(1, 3), True)
    >>> chart_scale(bubble("1f1b", 2, microbatches=2), 20) is None
    True
    """
    head = len(f"GPU {result.stages - 1}: ")
    rows = _rows(result)
    columns = width - head
    grid = _grid(result, rows)
    if grid is not None and grid[0] * grid[1] <= columns:
        return grid[2] / grid[1], True
    if columns < 1:
        return None
    k = Fraction(columns) / result.total_slots
    if all(math.floor(op.end * k) - math.floor(op.start * k) > len(op.label)
           for _, ops in rows for op in ops):
        return 1 / k, False
    return None


def _rows(result: Bubble) -> list[tuple[str, list[PipelineOp]]]:
    width = len(str(result.stages - 1))
    return [(f"GPU {s.stage:>{width}}: ", [op for op in s.ops if op.end > op.start]) for s in result.timeline]


def _grid(result: Bubble, rows: list[tuple[str, list[PipelineOp]]]) -> tuple[int, int, Fraction] | None:
    """(ticks in the makespan, characters per tick, the tick), or None when there is nothing to draw."""
    spans = [op.end - op.start for _, ops in rows for op in ops]
    if not spans:
        return None
    tick = _gcd(*spans, *([result.comm_slots] if result.comm_slots else []))
    label = max(len(op.label) for _, ops in rows for op in ops)
    cell = math.ceil((label + 1) / (min(spans) / tick))  # characters per tick
    return int(result.total_slots / tick), cell, tick


def _on_grid(result: Bubble, rows: list[tuple[str, list[PipelineOp]]], ticks: int, cell: int,
             tick: Fraction) -> tuple[str, ...]:
    idle = "·".ljust(cell)
    lines = []
    for head, ops in rows:
        text, now = [head], Fraction(0)
        for op in ops:
            text.append(idle * int((op.start - now) / tick))
            text.append(op.label.ljust(int((op.end - op.start) / tick) * cell - 1, "─") + " ")
            now = op.end
        text.append(idle * int((result.total_slots - now) / tick))
        lines.append("".join(text).rstrip())
    return tuple(lines)


def _in_proportion(result: Bubble, rows: list[tuple[str, list[PipelineOp]]], columns: int) -> tuple[str, ...]:
    k = Fraction(columns) / result.total_slots  # columns per slot
    lines = []
    for head, ops in rows:
        chars = ["·"] * columns
        for op in ops:
            start, end = math.floor(op.start * k), min(columns, math.floor(op.end * k))
            n = end - start
            text = op.label.ljust(n - 1, "─") + " " if n > len(op.label) else op.op * n
            chars[start:end] = text
        lines.append(head + "".join(chars).rstrip())
    return tuple(lines)


def _tokens(ops: list[PipelineOp], total: Fraction) -> list[str]:
    tokens, now = [], Fraction(0)
    for op in ops:
        if op.start > now:
            tokens.append("·")
        tokens.append(op.label)
        now = op.end
    if total > now:
        tokens.append("·")
    return tokens


def _gcd(*xs: Fraction) -> Fraction:
    """The largest rational dividing every x (all > 0)."""
    den = math.lcm(*(x.denominator for x in xs))
    return Fraction(math.gcd(*(int(x * den) for x in xs)), den)
