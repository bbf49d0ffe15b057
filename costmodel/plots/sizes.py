"""Time against message size: each algorithm's modelled time on log–log axes, every crossover marked.

:func:`time_plot` gathers the data: the times from :func:`costmodel.sweep`
(float64, on a grid of sizes) and the crossovers of every pair of algorithms
from :func:`costmodel.crossover` (exact where the costs are linear in n).
:func:`draw_time_plot` draws them.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005 (the α–β–γ model;
   choosing the algorithm by message size).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

from costmodel._json import MeasuredFields, real, to_json_dict
from costmodel.collectives import piecewise
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives.evaluate import applicable, check_ranks, choose, time_at
from costmodel.crossovers import crossover
from costmodel.params import Link, PiecewiseLink
from costmodel.plots._figure import (
    LINESTYLES,
    MARKERS,
    check_output,
    figure_style,
    link_caption,
    save,
    short_name,
    size_grid,
    size_label,
)
from costmodel.units import parse_size

__all__ = ["CrossoverMark", "Series", "TimePlot", "draw_time_plot", "time_plot"]

_PER_OCTAVE = 8
# where a crossover's number may go: offset from the point in points, and the text's alignment
_LABEL_AT = (((-6, 8), "right"), ((6, -9), "left"), ((6, 8), "left"), ((-6, -9), "right"),
             ((0, 13), "center"), ((0, -14), "center"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Series(MeasuredFields):
    """One algorithm's modelled time (seconds) at each size (bytes)."""

    algorithm: str
    short: str
    n_bytes: tuple[float, ...]
    time_s: tuple[float, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossoverMark:
    """Where algorithms *a* and *b* cost the same; ``best`` when they are the cheapest there."""

    a: str
    b: str
    label: str
    n_bytes: Fraction
    time_s: Fraction
    exact: bool
    best: bool

    def to_dict(self) -> dict[str, object]:
        exact = f"{self.n_bytes.numerator}/{self.n_bytes.denominator}" if self.exact else None
        return {"a": self.a, "b": self.b, "label": self.label, "n_bytes": real(self.n_bytes),
                "n_bytes_exact": exact, "time_s": real(self.time_s), "exact": self.exact, "best": self.best}


@dataclass(frozen=True, slots=True, kw_only=True)
class TimePlot:
    """The series and crossovers of ``costmodel plot time``."""

    collective: str
    p: int
    link: Link
    meaning_of_n: str
    min_bytes: Fraction
    max_bytes: Fraction
    series: tuple[Series, ...]
    crossovers: tuple[CrossoverMark, ...]
    notes: tuple[str, ...] = ()
    segment_starts: tuple[Fraction, ...] = ()
    """Inside the range, the sizes n where the algorithm a calibrated link was fitted on reaches its next
    segment (the profile's ``from_bytes``); every other curve steps where its own messages do."""

    @property
    def title(self) -> str:
        return f"{self.collective}, p = {self.p}: modelled time against message size"

    def to_dict(self) -> dict[str, object]:
        return {"plot": "time", **to_json_dict(self, ("title", "collective", "p", "meaning_of_n")),
                **self.link.result_fields(),
                **to_json_dict(self, ("min_bytes", "max_bytes", "series", "crossovers", "segment_starts",
                                      "notes"), rename={"segment_starts": "segment_starts_bytes"})}


def time_plot(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    p: int,
    link: Link,
    min_bytes: Any = 1,
    max_bytes: Any = 2**30,
) -> TimePlot:
    """Each algorithm's time from *min_bytes* to *max_bytes*, and every crossover in that range.

    Parameters
    ----------
    collective : str
        Name or alias.
    algorithms : iterable of str, optional
        Names or aliases; default every registered algorithm that can run at *p*.
    p : int
        Ranks (non-powers of two use each algorithm's adaptation).
    link : LinkParams or PiecewiseLink
        A piecewise link prices each size with the segment that covers it (the
        curves may step where a segment starts).
    min_bytes, max_bytes : size
        The size range in bytes (numbers or ``"64MiB"``), 0 < min < max.

    Returns
    -------
    TimePlot
        Series on a grid of 8 sizes per octave (float64, as :func:`costmodel.sweep`), and the
        crossovers of every pair (exact :class:`~fractions.Fraction` sizes, as
        :func:`costmodel.crossover`), smallest size first.

    Examples
    --------
    >>> from costmodel.params import LinkParams
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> plot = time_plot("allreduce", ["rd", "rab"], p=16, link=link)
    >>> [(c.label, c.n_bytes) for c in plot.crossovers]
    [('rd × rab: 117.6 kB', Fraction(2000000, 17))]
    """
    from costmodel.sweeps import sweep

    spec = find_collective(collective)
    p = check_ranks(p)
    lo, hi = parse_size(min_bytes), parse_size(max_bytes)
    grid = size_grid(lo, hi, per_octave=_PER_OCTAVE)
    chosen, skipped = choose(spec.name, algorithms, p=p)
    if isinstance(link, PiecewiseLink):
        link = piecewise.placed(link)
    if isinstance(link, PiecewiseLink) and not algorithms:
        refused = [a.name for a in chosen if link.refuses(a.name, applicable(a, p)[0].name)]
        if refused:
            skipped += (f"{', '.join(refused)} left out: {link.only()}",)
        chosen = [a for a in chosen if a.name not in refused]
    names = [a.name for a in chosen]
    frame = sweep(spec.name, names, p=[p], n=list(grid), link=link).loc[p]
    series = tuple(Series(algorithm=a.name, short=short_name(a), n_bytes=grid,
                          time_s=tuple(float(t) for t in frame[a.name])) for a in chosen)
    marks = []
    notes = list(skipped)
    for a, b in combinations(chosen, 2):
        found = crossover(spec.name, a.name, b.name, p=p, link=link, max_bytes=hi)
        notes.extend(found.notes)
        for point in found.crossovers:
            if point.segment_boundary or not lo <= point.n_bytes <= hi:
                continue  # a cost jumping past another (a message reaching a new segment) is no crossover
            times = [time_at(c, p, point.n_bytes, link) for c in chosen]
            slack = 0 if point.exact else Fraction(1, 10**9) * point.time_s
            marks.append(CrossoverMark(
                a=a.name, b=b.name, label=f"{short_name(a)} × {short_name(b)}: {'' if point.exact else '≈ '}"
                      f"{size_label(point.n_bytes)}",
                n_bytes=point.n_bytes, time_s=point.time_s, exact=point.exact,
                best=point.time_s <= min(times) + slack))
    marks.sort(key=lambda m: (m.n_bytes, m.a, m.b))
    starts = _fit_starts(link, lo, hi)
    return TimePlot(collective=spec.name, p=p, link=link, meaning_of_n=spec.meaning_of_n, min_bytes=lo,
                    max_bytes=hi, series=series, crossovers=tuple(marks), notes=tuple(dict.fromkeys(notes)),
                    segment_starts=starts)


def _fit_starts(link: Link, lo: Fraction, hi: Fraction) -> tuple[Fraction, ...]:
    """The collective sizes where the fitted algorithm's messages start segment 2, 3, ... (in the range)."""
    if not isinstance(link, PiecewiseLink):
        return ()
    link = piecewise.placed(link)
    share = link.fitted.message_share if link.fitted is not None else None
    if link.by_message and share is None:
        return ()  # segments of message sizes, not fitted on one algorithm
    starts = (s.from_bytes / share if share is not None else s.from_bytes for s in link.segments[1:])
    return tuple(n for n in starts if lo < n < hi)


def _label_place(point: Any, taken: list[Any], chars: int) -> tuple[tuple[int, int], str]:
    """The place in :data:`_LABEL_AT` farthest from the other points and the labels placed so far."""
    import numpy as np

    width = 5.5 * chars  # points, at 9 pt bold

    def room(place: tuple[tuple[int, int], str]) -> float:
        (dx, dy), ha = place
        centre = np.add(point, (dx + {"left": width / 2, "right": -width / 2, "center": 0}[ha], dy))
        others = [t for t in taken if not np.array_equal(t, point)]
        return min((float(np.hypot(*(centre - t))) for t in others), default=0.0)

    return max(_LABEL_AT, key=room)


def draw_time_plot(plot: TimePlot, path: str | Path, *, force: bool = False) -> Path:
    """Draw *plot* to *path* (.png or .svg): log–log lines, numbered crossovers and their list.

    Needs matplotlib (the ``plot`` extra).
    """
    target = check_output(path, force=force)
    with figure_style() as plt:
        import numpy as np
        from matplotlib.lines import Line2D
        from matplotlib.ticker import EngFormatter

        fig, ax = plt.subplots(figsize=(10, 5.5), layout="constrained")
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        handles = []
        every = max(1, len(plot.series[0].n_bytes) // 10) if plot.series else 1
        for i, s in enumerate(plot.series):
            style = {"color": colours[i % len(colours)], "ls": LINESTYLES[i % len(LINESTYLES)],
                     "marker": MARKERS[i % len(MARKERS)]}
            start = (i * every) // max(1, len(plot.series))  # stagger the markers of overlapping lines
            ax.plot(s.n_bytes, s.time_s, lw=1.6, ms=5, markevery=(start, every), **style)
            handles.append(Line2D([], [], lw=1.6, ms=5, label=s.algorithm, **style))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(float(plot.min_bytes), float(plot.max_bytes))
        ax.autoscale_view()
        for k, boundary in enumerate(plot.segment_starts, 2):
            ax.axvline(float(boundary), color="grey", ls=":", lw=1)
            ax.annotate(f"segment {k}", (float(boundary), 1), xycoords=("data", "axes fraction"),
                        xytext=(3, -3), textcoords="offset points", ha="left", va="top", fontsize=8,
                        color="dimgrey")
        marks = []
        points = [ax.transData.transform((float(c.n_bytes), float(c.time_s))) * 72 / fig.dpi
                  for c in plot.crossovers]
        taken = list(points)
        for k, c in enumerate(plot.crossovers, 1):
            x, y = float(c.n_bytes), float(c.time_s)
            face = "black" if c.best else "white"
            ax.plot([x], [y], "o", ms=8, mfc=face, mec="black", mew=1.3, zorder=5)
            (dx, dy), ha = _label_place(points[k - 1], taken, len(str(k)))
            taken.append(np.add(points[k - 1], (dx, dy)))
            ax.annotate(str(k), (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va="center",
                        fontsize=9, fontweight="bold", zorder=6,
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
            marks.append(Line2D([], [], ls="", marker="o", ms=7, mfc=face, mec="black",
                                label=f"{k}  {c.label}"))
        ax.xaxis.set_major_formatter(EngFormatter(unit="B"))
        ax.yaxis.set_major_formatter(EngFormatter(unit="s"))
        meaning = plot.meaning_of_n.removeprefix("n is ")
        ax.set_xlabel(f"message size n (bytes): {meaning}")
        ax.set_ylabel("modelled time (seconds)")
        ax.set_title(f"{plot.title}\n{link_caption(plot.link)}")
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        first = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), title="algorithm")
        if marks:
            ax.add_artist(first)
            scanned = "; ≈ found by a scan" if not all(c.exact for c in plot.crossovers) else ""
            ax.legend(handles=marks, loc="lower left", bbox_to_anchor=(1.01, 0),
                      title=f"crossovers, exact{scanned}\n(● where the best algorithm changes)")
        return save(fig, target, plot.title)
