"""The cheapest algorithm over a grid of ranks p and message sizes n, as a map of regions.

:func:`region_map` evaluates every algorithm on the grid with
:func:`costmodel.sweep` (float64) and keeps the cheapest at each point;
:func:`draw_region_map` colours and hatches the regions.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, section 4 (the
   algorithm chosen by message size and number of processes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costmodel._json import to_json_dict
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives.evaluate import check_ranks
from costmodel.errors import InputError
from costmodel.params import Link
from costmodel.plots._figure import HATCHES, check_output, figure_style, link_caption, save, size_grid
from costmodel.units import parse_size

__all__ = ["MAX_ROWS", "RegionMap", "draw_region_map", "region_map"]

MAX_ROWS = 1024
"""Largest number of p values on the grid: beyond it, p is sampled geometrically (powers of two kept)."""
_PER_OCTAVE = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class RegionMap:
    """The cheapest algorithm at each (p, n): ``best[i][j]`` indexes ``algorithms``, at p[i] and n_bytes[j].

    Ties go to the algorithm listed first (registry order).
    """

    collective: str
    link: Link
    meaning_of_n: str
    p: tuple[int, ...]
    n_bytes: tuple[float, ...]
    algorithms: tuple[str, ...]
    best: tuple[tuple[int, ...], ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.collective}: the cheapest algorithm by ranks p and message size n"

    def best_at(self, p: int, n: Any) -> str:
        """The cheapest algorithm at grid point (*p*, *n*); *n* in bytes, a grid size.

        Raises
        ------
        InputError
            When (p, n) is not on the grid.
        """
        size = float(parse_size(n))
        if p not in self.p or size not in self.n_bytes:
            raise InputError(f"(p={p}, n={size:g} B) is not on the grid; give a p and an n it holds")
        return self.algorithms[self.best[self.p.index(p)][self.n_bytes.index(size)]]

    def to_dict(self) -> dict[str, object]:
        return {"plot": "regions", **to_json_dict(self, ("title", "collective", "meaning_of_n")),
                **self.link.result_fields(),
                **to_json_dict(self, ("p", "n_bytes", "algorithms", "best", "notes"))}


def _ranks(p_min: int, p_max: int) -> list[int]:
    lo, hi = check_ranks(p_min), check_ranks(p_max)
    if hi < lo:
        raise InputError(f"p_max={hi} is below p_min={lo}; give p_min ≤ p_max")
    if hi - lo + 1 <= MAX_ROWS:
        return list(range(lo, hi + 1))
    import numpy as np

    sampled = {round(float(q)) for q in np.geomspace(lo, hi, MAX_ROWS)}
    powers = {2**k for k in range(lo.bit_length() - 1, hi.bit_length()) if lo <= 2**k <= hi}
    return sorted(sampled | powers | {lo, hi})


def region_map(
    collective: str,
    algorithms: Iterable[str] | None = None,
    *,
    link: Link,
    p_min: int = 2,
    p_max: int = 1024,
    min_bytes: Any = 1,
    max_bytes: Any = 2**30,
) -> RegionMap:
    """The cheapest algorithm at every p from *p_min* to *p_max* and at 4 sizes per octave.

    Parameters
    ----------
    collective : str
        Name or alias.
    algorithms : iterable of str, optional
        The candidates (default every registered algorithm; one that cannot run at some p,
        such as the double binary tree below p = 4, is no candidate there).
    link : LinkParams
    p_min, p_max : int
        The ranks: every integer between them (sampled geometrically beyond 1024 values, powers
        of two kept).
    min_bytes, max_bytes : size
        The sizes: both ends and every power 2^(k/4) between (so every power of two).

    Examples
    --------
    >>> from costmodel.params import LinkParams
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> regions = region_map("allreduce", link=link, p_min=2, p_max=64, max_bytes="1GiB")
    >>> regions.best_at(16, "8KiB"), regions.best_at(16, "64MiB")
    ('recursive-doubling', 'rabenseifner')
    """
    import numpy as np

    from costmodel.sweeps import sweep

    spec = find_collective(collective)
    ranks = _ranks(p_min, p_max)
    lo, hi = parse_size(min_bytes), parse_size(max_bytes)
    sizes = size_grid(lo, hi, per_octave=_PER_OCTAVE)
    frame = sweep(spec.name, list(algorithms or []) or None, p=ranks, n=list(sizes), link=link)
    names = tuple(frame.columns)
    times = frame.to_numpy().reshape(len(ranks), len(sizes), len(names))
    filled = np.where(np.isnan(times), np.inf, times)
    best = filled.argmin(axis=2)
    notes = []
    never = [names[k] for k in range(len(names)) if not (best == k).any()]
    if never:
        notes.append(f"never the cheapest on this grid: {', '.join(never)}")
    return RegionMap(collective=spec.name, link=link, meaning_of_n=spec.meaning_of_n, p=tuple(ranks),
                     n_bytes=sizes, algorithms=names, best=tuple(tuple(int(k) for k in row) for row in best),
                     notes=tuple(notes))


def draw_region_map(regions: RegionMap, path: str | Path, *, force: bool = False) -> Path:
    """Draw *regions* to *path* (.png or .svg): n across, p up (both logarithmic), one colour per algorithm.

    Needs matplotlib (the ``plot`` extra).
    """
    target = check_output(path, force=force)
    import numpy as np

    with figure_style() as plt:
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch
        from matplotlib.ticker import EngFormatter, LogLocator, ScalarFormatter

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        k = len(regions.algorithms)
        palette = [colours[i % len(colours)] for i in range(k)]
        best = np.array(regions.best, dtype=float)
        n = np.array(regions.n_bytes)
        p = np.array(regions.p, dtype=float)
        x_edges = _edges(n)
        y_edges = _edges(p)
        fig, ax = plt.subplots(figsize=(9, 5.5), layout="constrained")
        ax.pcolormesh(x_edges, y_edges, best, cmap=ListedColormap(palette), vmin=-0.5, vmax=k - 0.5,
                      shading="flat", rasterized=True)
        # hatches over the colours, so that the regions also read in grey
        # (contours through the cell centres, padded out to the outer edges)
        xs = np.concatenate([[x_edges[0]], n, [x_edges[-1]]])
        ys = np.concatenate([[y_edges[0]], p, [y_edges[-1]]])
        padded = np.pad(best, 1, mode="edge")
        for i in range(k):
            if HATCHES[i % len(HATCHES)] and (best == i).any():
                ax.contourf(xs, ys, (padded == i).astype(float), levels=[0.5, 1.5], colors="none",
                            hatches=[HATCHES[i % len(HATCHES)]])
        ax.set_xscale("log")
        ax.set_yscale("log", base=2)
        ax.set_xlim(x_edges[0], x_edges[-1])
        ax.set_ylim(y_edges[0], y_edges[-1])
        ax.xaxis.set_major_formatter(EngFormatter(unit="B"))
        ax.yaxis.set_major_locator(LogLocator(base=2))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        meaning = regions.meaning_of_n.removeprefix("n is ")
        ax.set_xlabel(f"message size n (bytes): {meaning}")
        ax.set_ylabel("ranks p (every integer; other than powers of two, adapted)")
        ax.set_title(f"{regions.title}\n{link_caption(regions.link)}")
        shown = [i for i in range(k) if (best == i).any()]
        ax.legend(handles=[Patch(facecolor=palette[i], edgecolor="black", hatch=HATCHES[i % len(HATCHES)],
                                 label=regions.algorithms[i]) for i in shown],
                  loc="upper left", bbox_to_anchor=(1.01, 1), title="cheapest", handleheight=1.6,
                  handlelength=2.4)
        return save(fig, target, regions.title)


def _edges(centres: Any) -> Any:
    """Cell edges around *centres* (sorted, positive) at their geometric midpoints."""
    import numpy as np

    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] / 1.2, c[0] * 1.2])
    mid = np.sqrt(c[:-1] * c[1:])
    return np.concatenate([[c[0] ** 2 / mid[0]], mid, [c[-1] ** 2 / mid[-1]]])

