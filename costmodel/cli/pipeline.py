"""The ``bubble`` command: a pipeline schedule simulated, its bubble, in-flight micro-batches and timeline.

The human rendering of :class:`~costmodel.pipeline.Bubble` is declared here with
:func:`costmodel.cli.render.renders`; it imports rich only when it runs, so JSON
output loads neither rich nor the other renderings.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli import complete
from costmodel.cli.layout import markup, prose, table
from costmodel.cli.options import Json, option, retired
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.errors import InputError
from costmodel.pipeline import Bubble, bubble, chart_scale, format_timeline, parse_slots
from costmodel.units import format_exact, format_number

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.text import Text

    from costmodel.references import Cited

__all__ = ["Drawn", "app", "render_bubble"]

app = typer.Typer()

#: Timelines with more operations than this are left out of the human output (the JSON has them).
MAX_DRAWN_OPERATIONS = 2000

_TIMES = "Times (slots)"


def _slots(text: str | Fraction) -> Fraction:
    if isinstance(text, Fraction):
        return text
    try:
        return parse_slots(text)
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from None


def _time_option(*names: str, help: str) -> Any:
    return option(*names, parser=_slots, metavar="SLOTS", panel=_TIMES, help=help)


Stages = Annotated[int, option("-P", "--stages", metavar="P", help="Pipeline stages, one per device (≥ 1).")]
Microbatches = Annotated[int, option("-m", "--microbatches", metavar="M",
                                     help="Micro-batches per mini-batch (≥ 1).")]
Schedule = Annotated[str, typer.Option(
    "--schedule", "-s", metavar="NAME", autocompletion=complete.schedules,
    help="gpipe, 1f1b (pipedream-flush), interleaved (Megatron-LM, needs M a multiple of P), "
         "zb-h1 (zb, zero-bubble).")]
Chunks = Annotated[int | None, option("-v", "--chunks", metavar="V",
                                      help="Model chunks per device, interleaved only (default 2).")]
Forward = Annotated[Fraction | None, _time_option("--forward", "-F", help="Forward time per micro-batch "
                                                  "per stage (default 1: the slot).")]
Backward = Annotated[Fraction | None, _time_option(
    "--backward", "-b", help="Backward time (default 2); for zb-h1 its input-gradient half B (default 1).")]
Weight = Annotated[Fraction | None, _time_option(
    "--weight", "-W", help="Weight-gradient time W: its own operation in zb-h1 (default 1), added to the "
                           "backward in the others (default 0).")]
Comm = Annotated[Fraction | None, _time_option(
    "--comm", help="Time to pass activations or gradients to the next stage (default 0).")]


@app.command("bubble")
def bubble_command(
    stages: Stages,
    microbatches: Microbatches,
    schedule: Schedule = "1f1b",
    chunks: Chunks = None,
    forward: Forward = None, backward: Backward = None, weight: Weight = None, comm: Comm = None,
    timeline: Annotated[bool, typer.Option(
        "--timeline", help="Draw every device's timeline (the JSON always lists it).")] = False,
    as_json: Json = False,
    _b: Annotated[str | None, retired("-B", now="-b or --backward",
                                      means="the bandwidth (cost, step)")] = None,
) -> None:
    """Simulate a pipeline schedule: its bubble, peak in-flight micro-batches and (--timeline) timeline.

    The bubble is given both as idle / total (GPipe's definition) and as idle / ideal. Times
    are in slots, by default one forward.

    Example: costmodel bubble -P 4 -m 8 --schedule 1f1b

    Example: costmodel bubble -P 4 -m 8 --schedule zb-h1 --forward 1 --backward 1 --weight 1 --timeline
    """
    result = bubble(schedule, stages, microbatches=microbatches, chunks=chunks,
                    forward_slots=1 if forward is None else forward, backward_slots=backward,
                    weight_slots=weight, comm_slots=0 if comm is None else comm)
    emit(Drawn(result, timeline=timeline), as_json=as_json)


@dataclass(frozen=True, slots=True)
class Drawn:
    """A simulated schedule and whether to draw its timeline; the JSON is the schedule's."""

    bubble: Bubble
    timeline: bool = False

    def to_dict(self) -> dict[str, object]:
        return self.bubble.to_dict()


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _exact(x: Fraction) -> str:
    """``3``, ``28.5``, ``1e99`` (short and exact), ``3/11 ≈ 0.2727``, or ``≈ 21`` when the fraction is long.

    The JSON keeps every value exactly (``*_exact`` keys); a fraction of more than
    :data:`_SHORT` digits (times of 1e-9 slot and 2 slots together) is shown rounded.
    """
    if x.denominator == 1 and x.numerator < 10**_SHORT:
        return str(x.numerator)
    decimal = format_number(x)
    if Fraction(decimal) == x:
        return decimal
    if len(str(x.numerator)) + len(str(x.denominator)) <= _SHORT:
        return format_exact(x, approx=True, digits=4)
    return f"≈ {format_number(x, digits=6)}"


_SHORT = 12


def _equals(x: Fraction) -> str:
    """``= 24`` or ``≈ 4e99``."""
    shown = _exact(x)
    return shown if shown.startswith("≈") else f"= {shown}"


_STYLES = ((r"F\d+(:\d+)?─*", "green"), (r"B\d+(:\d+)?─*", "cyan"), (r"W\d+(:\d+)?─*", "magenta"),
           (r"·", "dim"))


class _Timeline:
    """The per-device timeline: to scale when it fits the console, else in order (not to scale)."""

    def __init__(self, result: Bubble) -> None:
        self.result = result

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        from rich.text import Text

        width = options.max_width
        scale = chart_scale(self.result, width)
        if scale is None:
            yield Text("not to scale (too wide for the terminal); · is an idle gap", style="dim")
            lines = format_timeline(self.result, to_scale=False)
        else:
            if not scale[1]:
                yield Text(f"to scale: one column is {format_number(scale[0])} slots", style="dim")
            lines = format_timeline(self.result, width=width)
        for line in lines:
            text = Text(line)
            for pattern, style in _STYLES:
                text.highlight_regex(pattern, style)
            yield prose(text, hang=line.index(":") + 2)  # under the first slot, past "GPU 0: "


def _source(cited: Cited) -> str:
    """``Huang et al. (2019), GPipe: ..., section 2.2``: short, for the heading."""
    c = cited.citation
    names = c.authors.split(", ")
    surname = names[0].split()[-1] + (" et al." if len(names) > 2 else f" and {names[1].split()[-1]}"
                                      if len(names) == 2 else "")
    return f"{surname} ({c.year}), {c.title}, {cited.locator}"


def _times(b: Bubble) -> str:
    parts = [f"F = {_exact(b.forward_slots)}"]
    if b.schedule == "zb-h1":
        parts += [f"B = {_exact(b.backward_slots)}", f"W = {_exact(b.weight_slots)}"]
    elif b.weight_slots:
        parts.append(f"B = {_exact(b.backward_slots)} + W {_exact(b.weight_slots)}")
    else:
        parts.append(f"B = {_exact(b.backward_slots)}")
    if b.comm_slots:
        parts.append(f"comm = {_exact(b.comm_slots)}")
    return ", ".join(parts) + " slots per micro-batch per stage"


@renders("costmodel.cli.pipeline.Drawn")
def _(d: Drawn) -> Rendered:
    return render_bubble(d.bubble, timeline=d.timeline)


@renders("costmodel.pipeline.result.Bubble")
def render_bubble(b: Bubble, *, timeline: bool = True) -> Rendered:
    """The heading, timeline (when asked), bubble summary and per-stage table of a simulated schedule."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    chunks = f" · v = {b.chunks} chunks per device" if b.schedule == "interleaved" else ""
    head = markup(
        f"[bold]{b.schedule}[/bold] · P = {b.stages} stages · M = {b.microbatches} micro-batches{chunks}\n"
        f"{_times(b)}\n[dim]{escape('; '.join(map(_source, b.sources)))}[/dim]"
    )
    summary = table("quantity", "value", "meaning", numeric=("value",), no_wrap=("quantity", "value"),
                    header=False)
    ideal = "M·(F+B+W)" if b.weight_slots else "M·(F+B)"  # the W of the split schedules only when given
    summary.add_row("total", f"{_exact(b.total_slots)} slots", f"ideal {ideal} {_equals(b.ideal_slots)}")
    summary.add_row("bubble fraction", _exact(b.bubble_fraction), "idle / total (GPipe's definition)")
    summary.add_row("bubble over ideal", _exact(b.bubble_over_ideal), "idle / ideal (idle over busy time)")
    held = ("micro-batches whose activations a stage holds" if b.chunks == 1 else
            f"micro-batches of activations a stage holds (one chunk's: 1/{b.chunks})")
    summary.add_row("peak in flight", _exact(b.max_inflight_microbatches), held)
    columns = ("stage", "busy (slots)", "idle (slots)", "peak in flight")
    stages = table(*columns, numeric=columns)
    for s in b.timeline:
        stages.add_row(str(s.stage), _exact(s.busy_slots), _exact(s.idle_slots),
                       _exact(s.peak_inflight_microbatches))
    operations = sum(len(s.ops) for s in b.timeline)
    notes = b.notes
    peak = b.max_inflight_microbatches
    if peak.denominator > 1:
        notes = (*notes, f"a peak in flight of {_exact(peak)} counts activations in micro-batches through a "
                         f"whole stage: a device holds v = {b.chunks} model chunks of 1/{b.chunks} of its "
                         f"layers each, so one micro-batch in one chunk counts 1/{b.chunks}; "
                         f"{peak * b.chunks} chunk activations are {_exact(peak)} micro-batches")
    drawn: list[Any] = []
    if timeline and operations <= MAX_DRAWN_OPERATIONS:
        legend = "F forward, B backward" + (", W weight gradient" if b.schedule == "zb-h1" else "")
        legend += ", Fj:c micro-batch j in chunk c" if b.chunks > 1 else ""
        drawn = [Text(f"{legend}; · idle", style="dim"), _Timeline(b), Text("")]
    elif timeline:
        notes = (*notes, f"timeline left out: {operations} operations; --json lists them")
    formula = Text(f"textbook: {b.formula}", style="dim")
    return Group(head, Text(""), *drawn, summary, Text(""), stages, Text(""), formula), notes
