"""NCCL's model against message size: every enabled (algorithm, protocol), the chosen envelope, the switches.

:func:`nccl_plot` gathers the data: each entry's time (:func:`costmodel.nccl.predict`'s table, on a
grid of sizes, float64) where NCCL considers it, the time of the chosen entry, and the exact switch
sizes of :func:`costmodel.nccl.sweep`. :func:`draw_nccl_plot` draws them, log–log.

References
----------
.. [1] NVIDIA, NCCL ``src/graph/tuning.cc`` and ``src/enqueue.cc``, tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costmodel._json import MeasuredFields, real
from costmodel.plots._figure import LINESTYLES, check_output, figure_style, save, size_grid, size_label
from costmodel.units import parse_size

__all__ = ["NcclPlot", "NcclSeries", "NcclSwitch", "draw_nccl_plot", "nccl_plot"]

_PER_OCTAVE = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class NcclSeries(MeasuredFields):
    """One (algorithm, protocol): its time (seconds) at each size (bytes); None where NCCL skips it."""

    algorithm: str
    protocol: str
    n_bytes: tuple[float, ...]
    time_s: tuple[float | None, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class NcclSwitch(MeasuredFields):
    """Where the choice changes: the first size of the new choice, exact, and its time there."""

    n_bytes: int
    time_s: float
    before: str
    after: str
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class NcclPlot:
    """The series, the envelope and the switches of ``costmodel plot nccl``."""

    collective: str
    function: str
    ranks: int
    nodes: int
    version: str
    system: str
    min_bytes: int
    max_bytes: int
    series: tuple[NcclSeries, ...]
    chosen: NcclSeries
    switches: tuple[NcclSwitch, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        nodes = f"{self.nodes} node" + ("s" if self.nodes > 1 else "")
        return f"{self.function}, {self.ranks} ranks on {nodes}: NCCL {self.version}'s model"

    def to_dict(self) -> dict[str, object]:
        return {
            "plot": "nccl",
            "title": self.title,
            "collective": self.collective,
            "function": self.function,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "nccl_version": self.version,
            "system": self.system,
            "min_bytes": real(self.min_bytes),
            "max_bytes": real(self.max_bytes),
            "series": [s.to_dict() for s in self.series],
            "chosen": self.chosen.to_dict(),
            "switches": [s.to_dict() for s in self.switches],
            "notes": list(self.notes),
        }


def nccl_plot(
    collective: str,
    system: Any,
    *,
    min_bytes: Any = 1,
    max_bytes: Any = 2**30,
    version: str = "2.30",
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
) -> NcclPlot:
    """Every (algorithm, protocol) NCCL considers, from *min_bytes* to *max_bytes*, and its choice.

    Examples
    --------
    >>> from costmodel.nccl import System
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> [w.n_bytes for w in nccl_plot("allreduce", s, max_bytes="1GiB").switches]
    [2714423, 62634667]
    """
    from costmodel.nccl import predict, sweep

    lo, hi = parse_size(min_bytes), parse_size(max_bytes)
    grid = size_grid(lo, hi, per_octave=_PER_OCTAVE)
    settings: dict[str, Any] = {"version": version, "algo": algo, "proto": proto, "overrides": overrides}
    ranges = sweep(collective, lo, hi, system, **settings)
    times: dict[tuple[str, str], list[float | None]] = {}
    chosen: list[float | None] = []
    for n in grid:
        p = predict(collective, max(1, round(n)), system, **settings)
        for e in p.entries:
            times.setdefault((e.algorithm, e.protocol), []).append(
                None if e.time_s is None else float(e.time_s)
            )
        chosen.append(float(p.time_s))
    series = tuple(
        NcclSeries(algorithm=a, protocol=q, n_bytes=grid, time_s=tuple(t))
        for (a, q), t in times.items()
        if any(x is not None for x in t)
    )
    switches = []
    for before, after in zip(ranges.ranges, ranges.ranges[1:], strict=False):
        at = predict(collective, after.from_bytes, system, **settings)
        switches.append(
            NcclSwitch(
                n_bytes=after.from_bytes,
                time_s=float(at.time_s),
                before=f"{before.algorithm}/{before.protocol}",
                after=f"{after.algorithm}/{after.protocol}",
                label=f"{after.algorithm}/{after.protocol} from {size_label(after.from_bytes)}",
            )
        )
    return NcclPlot(
        collective=ranges.collective,
        function=ranges.function,
        ranks=system.ranks,
        nodes=system.nodes,
        version=ranges.version,
        system=system.name,
        min_bytes=ranges.min_bytes,
        max_bytes=ranges.max_bytes,
        series=series,
        chosen=NcclSeries(algorithm="chosen", protocol="", n_bytes=grid, time_s=tuple(chosen)),
        switches=tuple(switches),
    )


def draw_nccl_plot(plot: NcclPlot, path: str | Path, *, force: bool = False) -> Path:
    """Draw *plot* to *path* (.png or .svg): a line per entry, the chosen envelope in black, the switches.

    Needs matplotlib (the ``plot`` extra).
    """
    target = check_output(path, force=force)
    with figure_style() as plt:
        from matplotlib.ticker import EngFormatter

        fig, ax = plt.subplots(figsize=(10, 5.5), layout="constrained")
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        algorithms = list(dict.fromkeys(s.algorithm for s in plot.series))
        protocols = ("LL", "LL128", "Simple")
        for s in plot.series:
            xs = [x for x, t in zip(s.n_bytes, s.time_s, strict=True) if t is not None]
            ys = [t for t in s.time_s if t is not None]
            ax.plot(
                xs,
                ys,
                lw=1.2,
                alpha=0.8,
                color=colours[algorithms.index(s.algorithm) % len(colours)],
                ls=LINESTYLES[protocols.index(s.protocol) % len(LINESTYLES)],
                label=f"{s.algorithm}/{s.protocol}",
            )
        ax.plot(
            plot.chosen.n_bytes,
            plot.chosen.time_s,
            lw=3,
            color="black",
            alpha=0.45,
            zorder=4,
            label="NCCL's choice",
        )
        for k, w in enumerate(plot.switches, 1):
            ax.plot([w.n_bytes], [w.time_s], "o", ms=7, mfc="black", mec="black", zorder=5)
            ax.annotate(
                str(k),
                (w.n_bytes, w.time_s),
                xytext=(-6, 8),
                textcoords="offset points",
                ha="right",
                fontsize=9,
                fontweight="bold",
                zorder=6,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(float(plot.min_bytes), float(plot.max_bytes))
        ax.xaxis.set_major_formatter(EngFormatter(unit="B"))
        ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.set_xlabel("message size n (bytes, nccl-tests' size)")
        ax.set_ylabel("NCCL's predicted time (seconds)")
        source = "explicit hardware" if plot.system == "explicit" else f"preset {plot.system}"
        ax.set_title(f"{plot.title}\n{source}")
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), title="algorithm/protocol", fontsize=8)
        if plot.switches:
            text = "\n".join(f"{k}  {w.label}" for k, w in enumerate(plot.switches, 1))
            ax.text(1.01, 0, f"switches (exact)\n{text}", transform=ax.transAxes, fontsize=8, va="bottom")
        return save(fig, target, plot.title)
