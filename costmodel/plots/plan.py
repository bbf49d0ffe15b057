"""A plan drawn: every priced configuration's step time against its memory per GPU, the frontier marked.

:func:`draw_plan_frontier` draws a :class:`~costmodel.step.planner.Plan`'s points (the configurations the
search priced): each a dot at (memory per GPU, step time), the ranked rows filled, the Pareto front (no
other priced configuration is both faster and smaller) joined by a step line, the best starred and the
GPU's memory drawn as a vertical line.  Only priced configurations are drawn: those the bound pruned are
slower than the last row but may be smaller, so the front is that of the priced set.
"""

from __future__ import annotations

from pathlib import Path

from costmodel.plots._figure import MARKERS, check_output, figure_style, save
from costmodel.step.planner import Plan

__all__ = ["draw_plan_frontier"]


def draw_plan_frontier(plan: Plan, path: str | Path, *, force: bool = False) -> Path:
    """Draw *plan*'s priced configurations to *path* (.png or .svg): step time against memory per GPU, the
    ranked rows filled, the Pareto front joined, the best starred.  Needs matplotlib."""
    target = check_output(path, force=force)
    gib = 2 ** 30
    points = plan.points
    slowest = max(float(p.step_s) for p in points)
    scale, unit = (1.0, "s") if slowest >= 1 else (1e3, "ms")
    with figure_style() as plt:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        fig, ax = plt.subplots(figsize=(8.0, 5.0), layout="constrained")
        others = [p for p in points if not p.ranked]
        ranked = [p for p in points if p.ranked]
        if others:
            ax.plot([float(p.memory_bytes) / gib for p in others], [float(p.step_s) * scale for p in others],
                    marker=MARKERS[0], linestyle="none", markerfacecolor="none", color=colours[0],
                    label="priced")
        ax.plot([float(p.memory_bytes) / gib for p in ranked], [float(p.step_s) * scale for p in ranked],
                marker=MARKERS[0], linestyle="none", color=colours[1], label=f"top {len(plan.rows)}")
        front = sorted((p for p in points if p.pareto), key=lambda p: p.memory_bytes)
        ax.step([float(p.memory_bytes) / gib for p in front], [float(p.step_s) * scale for p in front],
                where="post", color=colours[2], label="Pareto front")
        best = plan.best
        ax.plot([float(best.memory_bytes) / gib], [float(best.step_s) * scale], marker="*", markersize=16,
                color=colours[3], linestyle="none", label=f"best: {_label(plan)}", zorder=5)
        capacity = float(best.config.gpu.memory_bytes) / gib
        if max(float(p.memory_bytes) / gib for p in points) > capacity / 2:  # else it squeezes the points
            ax.axvline(capacity, color="grey", linestyle=":", label=f"{plan.gpu} memory")
        ax.set_xlabel("memory per GPU (GiB)")
        ax.set_ylabel(f"step time ({unit})")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best")
        fig.suptitle(plan.title)
        return save(fig, target, plan.title)


def _label(plan: Plan) -> str:
    c = plan.best.config
    schedule = f"interleaved ×{c.chunks}" if c.schedule == "interleaved" else c.schedule
    return f"tp {c.tp} · pp {c.pp} · dp {c.dp} · b {c.micro_batch} · {schedule}"
