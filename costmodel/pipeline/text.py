"""Text timelines of a simulated pipeline, one line per device, like textbook diagrams."""

from __future__ import annotations

import math
from fractions import Fraction

from costmodel.pipeline.result import Bubble, PipelineOp

__all__ = ["format_timeline"]

def format_timeline(result: Bubble, *, to_scale: bool = True) -> tuple[str, ...]:
    """The timeline as text, one line per device, like textbook diagrams.

    To scale (the default), an operation spans its duration: its label, then
    ``─`` up to its end; each idle tick (the largest time dividing every
    duration) is a ``·``.  Not to scale, the operations are listed in order and
    each idle gap is one ``·``.  Zero-time operations (``W`` with
    ``weight_slots=0``) are left out.

    Parameters
    ----------
    result : Bubble
        A simulated schedule.
    to_scale : bool, default True
        Whether widths are proportional to time.

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
    """
    width = len(str(result.stages - 1))
    rows = [(f"GPU {s.stage:>{width}}: ", [op for op in s.ops if op.end > op.start]) for s in result.timeline]
    if not to_scale:
        return tuple(head + " ".join(_tokens(ops, result.total_slots)) for head, ops in rows)
    spans = [op.end - op.start for _, ops in rows for op in ops]
    tick = _gcd(*spans, *([result.comm_slots] if result.comm_slots else []))
    label = max(len(op.label) for _, ops in rows for op in ops)
    cell = math.ceil((label + 1) / (min(spans) / tick))  # characters per tick
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
