"""A training step drawn: a Gantt chart of every device's compute and communication, or a sweep.

:func:`step_chart` lists the bars of a :class:`~costmodel.step.StepResult`: per pipeline stage
(device), its compute row, the F / B / W operations of its ``timeline`` with their micro-batch,
and its communication row, the collectives of its ``communication`` stream with their labels.
:func:`draw_step_chart` draws them on one time axis, the optimizer and the step's end marked;
:func:`draw_step_sweep` draws a :class:`~costmodel.step.StepSweep`: step time and MFU against
the knob, the best point (the most work per GPU-second) marked.

References
----------
.. [1] P. Qi, X. Wan, G. Huang, M. Lin, "Zero Bubble Pipeline Parallelism",
   ICLR 2024, figure 3 (the F / B / W chart the compute rows follow).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields, to_json_dict
from costmodel.plots._figure import HATCHES, MARKERS, check_output, figure_style, save
from costmodel.plots.pipeline import OPERATIONS
from costmodel.step.model import StepResult
from costmodel.step.sweep import StepSweep, format_value
from costmodel.units import format_time

__all__ = ["StepBar", "StepChart", "draw_step_chart", "draw_step_sweep", "step_chart"]

COLLECTIVES = {"allreduce": "all-reduce", "reduce-scatter": "reduce-scatter", "allgather": "all-gather"}
"""The collectives a step issues, as the legend names them; each keeps one colour and hatch."""

_LABEL_POINTS = 9.5
"""The least height of a row, in points, for text on its bars (9 pt labels)."""

_MAX_TICKS = 16
"""The most values of a sweep with a tick each; more get the axis's own ticks."""

_MAX_INCHES = 24.0
"""The tallest chart: more stages get thinner rows (and lose their labels) rather than a taller page."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepBar(JSONFields):
    """A bar of the chart: on *stage*'s ``compute`` row an operation (*kind* F, B or W) of *microbatch*
    in model *chunk*, or on its ``communication`` row a collective (*kind*, e.g. ``allreduce``)."""

    stage: int
    row: str
    kind: str
    label: str
    microbatch: int | None
    chunk: int | None
    start_s: Fraction
    end_s: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class StepChart:
    """The Gantt chart of one step: every device's bars, and where the optimizer and the step end."""

    step: StepResult

    @property
    def bars(self) -> tuple[StepBar, ...]:
        """Stage by stage: its operations in the simulated order, then its collectives."""
        out: list[StepBar] = []
        for s, ops in enumerate(self.step.timeline):
            out.extend(StepBar(stage=s, row="compute", kind=o.op, label=str(o.microbatch),
                               microbatch=o.microbatch, chunk=o.chunk, start_s=o.start, end_s=o.end)
                       for o in ops)
            comm = self.step.communication[s] if s < len(self.step.communication) else ()
            out.extend(StepBar(stage=s, row="communication", kind=c.collective, label=c.label,
                               microbatch=None, chunk=None, start_s=c.start_s, end_s=c.end_s) for c in comm)
        return tuple(out)

    @property
    def collectives(self) -> tuple[str, ...]:
        """The collectives drawn, in the order they first appear."""
        return tuple(dict.fromkeys(b.kind for b in self.bars if b.row == "communication"))

    @property
    def optimizer_start_s(self) -> Fraction:
        """When the optimizer starts: before ZeRO 1 and 2's parameter all-gather, which ends the step."""
        return self.step.step_s - self.step.param_gather_s - self.step.optimizer_s

    @property
    def notes(self) -> tuple[str, ...]:
        return self.step.notes

    @property
    def title(self) -> str:
        r = self.step
        chunks = f", v = {r.chunks}" if r.chunks > 1 else ""
        return (f"Training step: dp {r.dp} × tp {r.tp} × pp {r.pp} = {r.gpus} GPUs, {r.schedule}{chunks}, "
                f"M = {r.microbatches}: {format_time(r.step_s)}")

    def to_dict(self) -> dict[str, object]:
        shown = ("dp", "tp", "pp", "gpus", "microbatches", "schedule", "chunks", "step_s", "pipeline_s",
                 "optimizer_s")
        return {"plot": "step", **to_json_dict(self.step, shown),
                **to_json_dict(self, ("title", "optimizer_start_s", "collectives", "bars", "notes"))}


def step_chart(result: StepResult) -> StepChart:
    """The bars of *result*'s Gantt chart (see :class:`StepChart`).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> from costmodel.step import step
    >>> r = step(forward_s=["1ms"] * 2, backward_s=["2ms"] * 2, gradient_bytes=["1MB"] * 2, dp=2,
    ...          link=combine_link(alpha=0, beta="1ns/B"))
    >>> [(b.row, b.kind, b.label, float(b.start_s), float(b.end_s)) for b in step_chart(r).bars]
    [('compute', 'F', '0', 0.0, 0.002), ('compute', 'B', '0', 0.002, 0.006), \
('communication', 'allreduce', 'bucket 0', 0.006, 0.008)]
    """
    if not isinstance(result, StepResult):
        raise TypeError(f"step_chart takes a StepResult, not {type(result).__name__}")
    return StepChart(step=result)


def _unit(seconds: Fraction) -> tuple[float, str]:
    """The scale and name of a time axis reaching *seconds*: s, ms or µs."""
    if seconds >= 1:
        return 1.0, "s"
    if seconds >= Fraction(1, 1000):
        return 1e3, "ms"
    return 1e6, "µs"


def draw_step_chart(chart: StepChart, path: str | Path, *, force: bool = False) -> Path:
    """Draw *chart* to *path* (.png or .svg): two rows per stage, compute above communication.

    Compute bars are coloured and hatched as in ``plot pipeline`` (lighter for a second model
    chunk) and carry their micro-batch where it fits; communication bars are coloured by collective
    and carry their label (or its number) where it fits.  Rows too thin for text lose it, bars too
    narrow for an outline lose that.  Needs matplotlib.
    """
    target = check_output(path, force=force)
    r = chart.step
    pp = len(r.timeline)
    scale, unit = _unit(r.step_s)
    with figure_style() as plt:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        width = 11.0
        height = min(2.4 + 0.5 * _PITCH * pp, _MAX_INCHES)
        fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
        known = {c: 3 + k for k, c in enumerate(COLLECTIVES)}  # each collective keeps its style across charts
        extra = [c for c in chart.collectives if c not in known]
        slot = {c: known.get(c, 3 + len(COLLECTIVES) + (extra.index(c) if c in extra else 0))
                for c in chart.collectives}
        styles = {c: (colours[slot[c] % len(colours)], HATCHES[slot[c] % len(HATCHES)])
                  for c in chart.collectives}
        _draw_bars(ax, chart, colours, styles, scale=scale, row_points=(height - 2.4) * 72 / (_PITCH * pp),
                   points_per_s=(width - 1.6) * 72 / float(r.step_s or 1))
        end = float(r.step_s) * scale
        if r.optimizer_s:
            start = chart.optimizer_start_s
            ax.axvspan(float(start) * scale, float(start + r.optimizer_s) * scale, color="0.85", hatch="++",
                       zorder=0)
        ax.axvline(end, color="black", linestyle="--", linewidth=1)
        ax.text(end, 1.0, f"step end {format_time(r.step_s)}", ha="right", va="bottom", fontsize=9,
                transform=ax.get_xaxis_transform())
        every = max(1, -(-pp // 24))
        ticks = [t for s in range(pp) for t in ((s * _PITCH, f"stage {s}"), (s * _PITCH + 0.75, "comm"))] \
            if pp <= 16 else [(s * _PITCH + 0.375, f"stage {s}") for s in range(0, pp, every)]
        ax.set_yticks([t for t, _ in ticks], [label for _, label in ticks])
        ax.set_ylim(pp * _PITCH - 0.3, -0.7)
        ax.set_xlim(0, end * 1.01)
        ax.set_xlabel(f"time from the step's start ({unit})")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        handles = _legend(chart, colours, styles)
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
                   title="compute row: the number on a bar is its micro-batch; "
                         "communication row: its bucket or layer")
        fig.suptitle(chart.title)
        return save(fig, target, chart.title)


_PITCH = 1.4
"""The height of a stage's two rows on the y axis: compute (0.8) at its top, communication (0.45) below."""


def _draw_bars(ax: Any, chart: StepChart, colours: list[Any], styles: dict[str, tuple[Any, str]], *,
               scale: float, row_points: float, points_per_s: float) -> None:
    """Every bar, grouped into one ``broken_barh`` per row and style; the labels that fit."""
    from matplotlib.colors import to_rgba

    groups: dict[tuple[str, str, bool, float, float], list[tuple[float, float]]] = {}
    narrowest: dict[tuple[str, str, bool, float, float], float] = {}
    for bar in chart.bars:
        compute = bar.row == "compute"
        y, h = (bar.stage * _PITCH, 0.8) if compute else (bar.stage * _PITCH + 0.75, 0.45)
        start, span = float(bar.start_s) * scale, float(bar.end_s - bar.start_s) * scale
        key = (bar.row, bar.kind, bool(bar.chunk), y, h)
        groups.setdefault(key, []).append((start, span))
        room = float(bar.end_s - bar.start_s) * points_per_s
        narrowest[key] = min(narrowest.get(key, room), room)
        if h * row_points < _LABEL_POINTS:
            continue
        text = next((t for t in (bar.label, bar.label.rsplit(" ", 1)[-1]) if room >= 6.5 * len(t) + 3), None)
        if text is not None:
            ax.text(start + span / 2, y, text, ha="center", va="center", fontsize=9,
                    bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none", "alpha": 0.75})
    for key, spans in groups.items():
        row, kind, later, y, h = key
        if row == "compute":
            _, k, hatch = OPERATIONS.get(kind, ("", 0, ""))
            face = to_rgba(colours[k], 0.5 if later else 1.0)
        else:
            colour, hatch = styles[kind]
            face = to_rgba(colour, 0.85)
        outline = 0.4 if narrowest[key] >= 3 else 0.0
        ax.broken_barh(spans, (y - h / 2, h), facecolors=face, hatch=hatch, edgecolor="black",
                       linewidth=outline)


def _legend(chart: StepChart, colours: list[Any], styles: dict[str, tuple[Any, str]]) -> list[Any]:
    """A patch per operation (and chunk) drawn, per collective, and the optimizer's."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    handles = []
    seen = {(b.kind, bool(b.chunk)) for b in chart.bars if b.row == "compute"}
    for op in ("F", "B", "W"):
        name, k, hatch = OPERATIONS[op]
        for later in (False, True):
            if (op, later) in seen:
                suffix = ", second chunk" if later else (", first chunk" if (op, True) in seen else "")
                handles.append(Patch(facecolor=to_rgba(colours[k], 0.5 if later else 1.0), hatch=hatch,
                                     edgecolor="black", label=f"{op}: {name}{suffix}"))
    handles += [Patch(facecolor=to_rgba(colour, 0.85), hatch=hatch, edgecolor="black",
                      label=f"{COLLECTIVES.get(c, c)} (data-parallel)")
                for c, (colour, hatch) in styles.items()]
    if chart.step.optimizer_s:
        handles.append(Patch(facecolor="0.85", hatch="++", label="optimizer"))
    return handles


def draw_step_sweep(sweep: StepSweep, path: str | Path, *, force: bool = False) -> Path:
    """Draw *sweep* to *path* (.png or .svg): step time (left axis) and MFU (right) against the knob.

    Counts, sizes and numbers are placed by value (a log axis when they span 16× or more), names
    one after another; skipped values are left out; the best point is starred.  Needs matplotlib.
    """
    target = check_output(path, force=force)
    priced = [p for p in sweep.points if p.step_s is not None]
    longest = max(p.step_s for p in priced if p.step_s is not None)
    scale, unit = _unit(longest)
    names = sweep.kind == "name"
    values = [float(p.value) if not names else float(i) for i, p in enumerate(sweep.points)]
    x = [v for v, p in zip(values, sweep.points, strict=True) if p.step_s is not None]
    with figure_style() as plt:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        fig, ax = plt.subplots(figsize=(8.0, 5.0), layout="constrained")
        ax.plot(x, [float(p.step_s or 0) * scale for p in priced], marker=MARKERS[0], color=colours[0],
                label="step time")
        ax.set_ylabel(f"step time ({unit})", color=colours[0])
        ax.set_ylim(0, float(longest) * scale * 1.08)
        best = sweep.best_point
        bx = values[sweep.best]
        ax.plot([bx], [float(best.step_s or 0) * scale], marker="*", markersize=16, color=colours[3],
                linestyle="none", label=f"best: {format_value(best.value, sweep.kind)}", zorder=5)
        lines = ax.get_legend_handles_labels()
        if any(p.mfu is not None for p in priced):
            right = ax.twinx()
            right.plot(x, [100 * float(p.mfu or 0) for p in priced], marker=MARKERS[1], linestyle="--",
                       color=colours[1], label="MFU")
            right.set_ylabel("MFU (%)", color=colours[1])
            right.set_ylim(0, 108 * max(float(p.mfu or 0) for p in priced) or 1)
            more = right.get_legend_handles_labels()
            lines = (lines[0] + more[0], lines[1] + more[1])
        if names:
            ax.set_xticks(values, [format_value(p.value, sweep.kind) for p in sweep.points])
        else:
            from matplotlib.ticker import FuncFormatter

            if min(x) > 0 and max(x) / min(x) >= 16:
                ax.set_xscale("log", base=2)
            if len(x) <= _MAX_TICKS:
                ax.set_xticks(x, [format_value(p.value, sweep.kind) for p in priced])
                ax.minorticks_off()
            else:
                ax.xaxis.set_major_formatter(FuncFormatter(
                    lambda v, _: format_value(Fraction(v).limit_denominator(1000), sweep.kind)))
        if len(x) > _MAX_TICKS // 2:
            plt.setp(ax.get_xticklabels(), rotation=45, ha="right")
        ax.set_xlabel(sweep.knob)
        ax.grid(True, alpha=0.3)
        ax.legend(*lines, loc="best")
        fig.suptitle(sweep.title)
        return save(fig, target, sweep.title)
