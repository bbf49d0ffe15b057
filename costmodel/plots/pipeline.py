"""Pipeline schedules as Gantt charts: one row per stage, F / B / W bars with their micro-batch, idle in grey.

:func:`pipeline_plot` simulates the schedules with :func:`costmodel.bubble`
and lists every operation's bar (start and end in slots) and every idle gap;
:func:`draw_pipeline_plot` draws one panel per schedule on a shared time axis.

References
----------
.. [1] P. Qi, X. Wan, G. Huang, M. Lin, "Zero Bubble Pipeline Parallelism",
   ICLR 2024, figure 3 (the F / B / W chart this plot follows).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields, to_json_dict
from costmodel.errors import InputError
from costmodel.pipeline import SCHEDULES, Bubble, bubble
from costmodel.plots._figure import HATCHES, check_output, figure_style, save
from costmodel.units import format_exact

__all__ = ["OPERATIONS", "GanttBar", "PipelinePanel", "PipelinePlot", "draw_pipeline_plot", "pipeline_plot"]

OPERATIONS = {"F": ("forward", 0, HATCHES[0]), "B": ("backward", 1, HATCHES[1]),
              "W": ("weight gradient", 2, HATCHES[2])}
"""Each pipeline operation's name, colour index and hatch, for the Gantt charts of pipelines and steps."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GanttBar(JSONFields):
    """One bar of the chart: *op* of *microbatch* (in model *chunk*) on *stage*, or an idle gap (``idle``)."""

    stage: int
    op: str
    microbatch: int | None
    chunk: int | None
    start_slots: Fraction
    end_slots: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelinePanel:
    """One simulated schedule: its :class:`~costmodel.pipeline.Bubble`, its bars and its idle gaps."""

    bubble: Bubble

    @property
    def bars(self) -> tuple[GanttBar, ...]:
        """Every operation, stage by stage, in the simulated order."""
        return tuple(GanttBar(stage=s.stage, op=o.op, microbatch=o.microbatch, chunk=o.chunk,
                              start_slots=o.start, end_slots=o.end)
                     for s in self.bubble.timeline for o in s.ops)

    @property
    def idle(self) -> tuple[GanttBar, ...]:
        """Every gap between 0 and the makespan where a stage does nothing."""
        gaps = []
        for s in self.bubble.timeline:
            at = Fraction(0)
            for o in (*s.ops, None):
                start = self.bubble.total_slots if o is None else o.start
                if start > at:
                    gaps.append(GanttBar(stage=s.stage, op="idle", microbatch=None, chunk=None,
                                         start_slots=at, end_slots=start))
                if o is not None:
                    at = max(at, o.end)
        return tuple(gaps)

    @property
    def title(self) -> str:
        b = self.bubble
        chunks = f", v = {b.chunks}" if b.schedule == "interleaved" else ""
        share = f"{float(b.bubble_fraction):.1%}"
        exact = _exact(b.bubble_fraction)
        return (f"{b.schedule}{chunks}: makespan {_slots(b.total_slots)} slots, bubble "
                f"{share if exact is None else f'{exact} = {share}'} idle / total")

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self.bubble, ("schedule", "stages", "microbatches", "chunks", "total_slots",
                                             "bubble_fraction")),
                **to_json_dict(self, ("bars", "idle"))}


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelinePlot:
    """The panels of ``costmodel plot pipeline``, one per schedule."""

    stages: int
    microbatches: int
    panels: tuple[PipelinePanel, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"Pipeline schedules: P = {self.stages} stages, M = {self.microbatches} micro-batches"

    def to_dict(self) -> dict[str, object]:
        return {"plot": "pipeline", **to_json_dict(self, ("title", "stages", "microbatches")),
                "time_unit": "slot: one forward of one micro-batch on one stage",
                **to_json_dict(self, ("panels", "notes"))}


def _exact(x: Fraction) -> str | None:
    """``3/7``, or None for a fraction of more than 12 digits (times far apart: 1e-7 and 2 slots)."""
    return None if len(str(x.numerator)) + len(str(x.denominator)) > 12 else format_exact(x)


def _slots(x: Fraction) -> str:
    return str(x) if x.denominator == 1 and x < 10**12 else f"{float(x):g}"


def pipeline_plot(
    schedule: str,
    stages: int,
    *,
    microbatches: int,
    chunks: int | None = None,
    forward_slots: Any = 1,
    backward_slots: Any = None,
    weight_slots: Any = None,
) -> PipelinePlot:
    """Simulate *schedule* (or ``"all"`` of them) and list the bars of its Gantt chart.

    With ``"all"``, a schedule that cannot run with these numbers (interleaved needs M a
    multiple of P) is left out with a note; the times are as :func:`costmodel.bubble` takes them.

    Examples
    --------
    >>> plot = pipeline_plot("gpipe", 2, microbatches=2)
    >>> [(b.stage, b.op, b.microbatch, int(b.start_slots), int(b.end_slots)) for b in plot.panels[0].bars]
    [(0, 'F', 0, 0, 1), (0, 'F', 1, 1, 2), (0, 'B', 0, 5, 7), (0, 'B', 1, 7, 9), \
(1, 'F', 0, 1, 2), (1, 'F', 1, 2, 3), (1, 'B', 0, 3, 5), (1, 'B', 1, 5, 7)]
    >>> [(b.stage, int(b.start_slots), int(b.end_slots)) for b in plot.panels[0].idle]
    [(0, 2, 5), (1, 0, 1), (1, 7, 9)]
    """
    every = schedule.strip().lower() == "all"
    names = SCHEDULES if every else (schedule,)
    panels, notes = [], []
    for name in names:
        try:
            result = bubble(name, stages, microbatches=microbatches, chunks=chunks,
                            forward_slots=forward_slots, backward_slots=backward_slots,
                            weight_slots=weight_slots)
        except InputError as exc:
            if not every:
                raise
            notes.append(f"{name} left out: {exc}")
            continue
        panels.append(PipelinePanel(bubble=result))
        notes.extend(result.notes)
    if not panels:
        raise InputError(f"no schedule can run with P={stages}, M={microbatches}: {'; '.join(notes)}")
    return PipelinePlot(stages=stages, microbatches=microbatches, panels=tuple(panels),
                        notes=tuple(dict.fromkeys(notes)))


def draw_pipeline_plot(plot: PipelinePlot, path: str | Path, *, force: bool = False) -> Path:
    """Draw *plot* to *path* (.png or .svg): one Gantt panel per schedule, on a shared time axis.

    Bars are coloured and hatched by operation (F, B, W), lighter for a second model chunk,
    and carry their micro-batch number where it fits.  Needs matplotlib.
    """
    target = check_output(path, force=force)
    with figure_style() as plt:
        from matplotlib.colors import to_rgba
        from matplotlib.patches import Patch

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        heights = [p.bubble.stages + 1.2 for p in plot.panels]
        width = 11.0
        fig, axes = plt.subplots(len(plot.panels), 1, figsize=(width, 1.3 + 0.36 * sum(heights)), sharex=True,
                                 squeeze=False, layout="constrained", gridspec_kw={"height_ratios": heights})
        longest = max(float(p.bubble.total_slots) for p in plot.panels)
        points_per_slot = (width - 1.6) * 72 / longest
        seen: set[tuple[str, bool]] = set()
        for ax, panel in zip(axes[:, 0], plot.panels, strict=True):
            b = panel.bubble
            for gap in panel.idle:
                ax.barh(gap.stage, float(gap.end_slots - gap.start_slots), left=float(gap.start_slots),
                        height=0.8, color="0.86", edgecolor="0.6", linewidth=0.4)
            for bar in panel.bars:
                name, k, hatch = OPERATIONS[bar.op]
                later = bool(bar.chunk)
                face = to_rgba(colours[k], 0.5 if later else 1.0)
                span = float(bar.end_slots - bar.start_slots)
                ax.barh(bar.stage, span, left=float(bar.start_slots), height=0.8, color=face, hatch=hatch,
                        edgecolor="black", linewidth=0.5)
                seen.add((bar.op, later))
                text = str(bar.microbatch)
                if span * points_per_slot >= 6.5 * len(text) + 3:
                    ax.text(float(bar.start_slots) + span / 2, bar.stage, text, ha="center", va="center",
                            fontsize=9, bbox={"boxstyle": "square,pad=0.05", "fc": "white", "ec": "none",
                                              "alpha": 0.75})
            ax.set_yticks(range(b.stages), [f"stage {s}" for s in range(b.stages)])
            ax.set_ylim(b.stages - 0.5, -0.5)
            ax.set_title(panel.title, loc="left", fontsize=10)
            ax.set_xlim(0, longest)
            ax.grid(True, axis="x", alpha=0.3)
            ax.set_axisbelow(True)
        axes[-1, 0].set_xlabel("time (slots; one slot = one forward of one micro-batch on one stage)")
        handles = []
        for op in ("F", "B", "W"):
            name, k, hatch = OPERATIONS[op]
            for later in (False, True):
                if (op, later) in seen:
                    suffix = ", second chunk" if later else (", first chunk" if (op, True) in seen else "")
                    handles.append(Patch(facecolor=to_rgba(colours[k], 0.5 if later else 1.0), hatch=hatch,
                                         edgecolor="black", label=f"{op}: {name}{suffix}"))
        handles.append(Patch(facecolor="0.86", edgecolor="0.6", label="idle"))
        fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4),
                   title="operation (the number on a bar is its micro-batch, from 0)")
        fig.suptitle(plot.title)
        return save(fig, target, plot.title)
