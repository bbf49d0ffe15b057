"""Where the time goes: each algorithm's α (latency), β (bandwidth) and γ (compute) terms, stacked.

:func:`time_breakdown` takes the exact terms from :func:`costmodel.compare`
(``AlgorithmCost.latency_s``, ``bandwidth_s`` and ``compute_s``);
:func:`draw_breakdown` draws them as stacked horizontal bars, fastest on top.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._json import real, to_json_dict
from costmodel.collectives.evaluate import compare
from costmodel.params import Link
from costmodel.plots._figure import HATCHES, check_output, figure_style, link_caption, save, size_label

__all__ = ["Breakdown", "BreakdownBar", "draw_breakdown", "time_breakdown"]

_TERMS = (("latency_s", "α: latency (start-ups)"), ("bandwidth_s", "β: bandwidth (bytes)"),
          ("compute_s", "γ: compute (reduction)"))


@dataclass(frozen=True, slots=True, kw_only=True)
class BreakdownBar:
    """One algorithm's time split into its three terms (seconds, exact)."""

    algorithm: str
    latency_s: Fraction
    bandwidth_s: Fraction
    compute_s: Fraction

    @property
    def time_s(self) -> Fraction:
        return self.latency_s + self.bandwidth_s + self.compute_s

    def share(self, term: str) -> Fraction | None:
        """The share of *term* (``"latency_s"``, ...) in the time, or None when the time is 0."""
        return None if self.time_s == 0 else getattr(self, term) / self.time_s

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s")),
                **{f"{term.removesuffix('_s')}_share": None if (share := self.share(term)) is None
                   else real(share) for term, _ in _TERMS}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Breakdown:
    """The bars of ``costmodel plot breakdown``, fastest first."""

    collective: str
    p: int
    n_bytes: Fraction
    link: Link
    meaning_of_n: str
    bars: tuple[BreakdownBar, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.collective}, p = {self.p}, n = {size_label(self.n_bytes)}: where the time goes"

    def to_dict(self) -> dict[str, object]:
        return {"plot": "breakdown",
                **to_json_dict(self, ("title", "collective", "p", "n_bytes", "meaning_of_n")),
                **self.link.result_fields(), **to_json_dict(self, ("bars", "notes"))}


def time_breakdown(collective: str, algorithms: Iterable[str] | None = None, *, p: int, n: Any,
                   link: Link) -> Breakdown:
    """The α, β and γ terms of each algorithm at (*p*, *n*), fastest first (as :func:`costmodel.compare`).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> bars = time_breakdown("allreduce", ["ring"], p=4, n="1MB", link=link).bars
    >>> bars[0].latency_s, bars[0].bandwidth_s  # 6α and 1.5 n β
    (Fraction(3, 100000), Fraction(3, 25000))
    """
    table = compare(collective, algorithms, p=p, n=n, link=link)
    bars = tuple(BreakdownBar(algorithm=r.algorithm, latency_s=r.latency_s, bandwidth_s=r.bandwidth_s,
                              compute_s=r.compute_s) for r in table.results)
    notes = (*table.notes, *(note for r in table.results for note in r.notes))
    return Breakdown(collective=table.collective, p=table.p, n_bytes=table.n_bytes, link=table.link,
                     meaning_of_n=table.meaning_of_n, bars=bars, notes=tuple(dict.fromkeys(notes)))


def _tick(bar: BreakdownBar, terms: list[str]) -> str:
    """``ring`` over ``326.9 µs: α 46%, β 48%, γ 6%``."""
    from costmodel.units import format_time

    shares = [(term[0], bar.share(term)) for term in terms]
    letters = {"l": "α", "b": "β", "c": "γ"}
    text = ", ".join(f"{letters[t]} {float(s):.0%}" for t, s in shares if s is not None)
    return f"{bar.algorithm}\n{format_time(bar.time_s)}" + (f": {text}" if text else "")


def draw_breakdown(breakdown: Breakdown, path: str | Path, *, force: bool = False) -> Path:
    """Draw *breakdown* to *path* (.png or .svg): one stacked bar per algorithm, fastest on top.

    Needs matplotlib (the ``plot`` extra).
    """
    target = check_output(path, force=force)
    with figure_style() as plt:
        from matplotlib.ticker import EngFormatter

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        bars = breakdown.bars
        fig, ax = plt.subplots(figsize=(9, 1.6 + 0.55 * max(3, len(bars))), layout="constrained")
        rows = range(len(bars))
        left = [0.0] * len(bars)
        shown: list[str] = []
        longest = max((float(b.time_s) for b in bars), default=0.0) or 1.0
        for k, (term, label) in enumerate(_TERMS):
            widths = [float(getattr(b, term)) for b in bars]
            if not any(widths) and term == "compute_s":
                continue  # no γ: leave it out of the legend too
            shown.append(term)
            ax.barh(rows, widths, left=left, height=0.62, color=colours[k],
                    hatch=HATCHES[k * 2 % len(HATCHES)], edgecolor="black", linewidth=0.6, label=label)
            left = [x + w for x, w in zip(left, widths, strict=True)]
        ax.set_yticks(list(rows), [_tick(b, shown) for b in bars])
        ax.invert_yaxis()
        ax.set_xlim(0, longest * 1.02)
        ax.xaxis.set_major_formatter(EngFormatter(unit="s"))
        ax.set_xlabel("modelled time (seconds)")
        ax.set_ylabel("algorithm (fastest on top)")
        ax.set_title(f"{breakdown.title}\n{link_caption(breakdown.link)}")
        ax.grid(True, axis="x", alpha=0.35)
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), title="term")
        return save(fig, target, breakdown.title)
