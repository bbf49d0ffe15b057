"""BSP, SSP and ASP drawn: the staleness histogram of each rule, and throughput against SSP's bound s.

The data come from :func:`costmodel.training.synchrony.simulate_sync` (a :class:`SyncRun`, every rule on
the same seeded step times) and :func:`costmodel.training.synchrony.ssp_sweep`; this module only draws.

References
----------
.. [1] Q. Ho et al., NIPS 2013, section 2 (SSP); I. Mitliagkas et al., Allerton 2016 (staleness).
"""

from __future__ import annotations

from pathlib import Path

from costmodel.plots._figure import MARKERS, check_output, figure_style, save
from costmodel.training.synchrony import SspSweep, SyncRun

__all__ = ["draw_ssp_sweep", "draw_staleness_plot"]


def draw_staleness_plot(run: SyncRun, path: str | Path, *, force: bool = False) -> Path:
    """Draw the staleness histogram of each rule in *run* to *path* (.png or .svg): the share of gradients
    at each staleness, one panel per rule, its mean marked.  Needs matplotlib."""
    target = check_output(path, force=force)
    with figure_style() as plt:
        runs = run.runs
        fig, axes = plt.subplots(len(runs), 1, figsize=(9, 2.2 + 2.2 * len(runs)), layout="constrained",
                                 sharex=True, squeeze=False)
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (ax, r) in enumerate(zip(axes[:, 0], runs, strict=True)):
            total = sum(r.staleness_counts)
            shares = [c / total for c in r.staleness_counts]
            ax.bar(range(len(shares)), shares, width=0.85, color=colours[i % len(colours)],
                   label=f"{r.label}: mean {r.staleness_mean:.3g}, most {r.staleness_max}")
            ax.axvline(r.staleness_mean, color="0.2", lw=1.2, ls="--")
            ax.set_ylabel("share of gradients")
            ax.legend(loc="upper right")
            ax.grid(True, axis="y", alpha=0.35)
        axes[-1, 0].set_xlabel("staleness: updates applied between a gradient's read and its own update")
        fig.suptitle(run.title)
        axes[0, 0].set_title(f"step times: {run.step_times_label}; dashed: the mean", fontsize=10)
        return save(fig, target, run.title)


def draw_ssp_sweep(sweep: SspSweep, path: str | Path, *, force: bool = False) -> Path:
    """Draw updates per second against SSP's bound s to *path* (.png or .svg), with BSP's and ASP's as
    horizontal lines.  Needs matplotlib."""
    target = check_output(path, force=force)
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(9, 5), layout="constrained")
        ax.plot(sweep.bounds, sweep.ssp_updates_per_s, marker=MARKERS[0], lw=1.6, label="SSP with bound s")
        ax.axhline(sweep.bsp_updates_per_s, color="0.35", ls="--", lw=1.3,
                   label=f"BSP: {sweep.bsp_updates_per_s:.4g} updates/s")
        ax.axhline(sweep.asp_updates_per_s, color="0.35", ls=":", lw=1.5,
                   label=f"ASP: {sweep.asp_updates_per_s:.4g} updates/s")
        ax.set_xlabel("SSP's bound s (steps a worker may run ahead of the slowest)")
        ax.set_ylabel("updates per second (gradients applied)")
        ax.set_xticks(list(sweep.bounds))
        ax.grid(True, alpha=0.35)
        ax.legend(loc="lower right")
        fig.suptitle(sweep.title)
        ax.set_title(f"step times: {sweep.step_times_label}; the same times for every s", fontsize=10)
        return save(fig, target, sweep.title)
