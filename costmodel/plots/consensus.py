"""Gossip on several graphs: the disagreement ‖x_r − mean‖₂ round by round, with its ρ^r envelope.

:func:`consensus_plot` runs :func:`costmodel.consensus.gossip.consensus` on each
graph from the same deterministic initial vector x₀ = (0, 1, …, p − 1) and
keeps the trajectory and ρ; the envelope of a graph is ρ^r·d₀, with d₀ the
initial disagreement (a bound for symmetric W, such as uniform weights on a
regular graph or Metropolis weights, and the asymptotic rate otherwise).
:func:`draw_consensus_plot` draws them on a log y axis.

References
----------
.. [1] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", 2004
   (‖x_r − x̄‖ ≤ ρ^r ‖x₀ − x̄‖ for symmetric W).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from costmodel._json import to_json_dict
from costmodel.consensus.gossip import consensus
from costmodel.consensus.graphs import resolve_graph
from costmodel.errors import InputError
from costmodel.plots._figure import LINESTYLES, MARKERS, check_output, figure_style, save
from costmodel.validate import positive

__all__ = ["ConsensusCurve", "ConsensusPlot", "consensus_plot", "draw_consensus_plot"]

INIT = "x₀ = (0, 1, …, p − 1)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsensusCurve:
    """One graph: its label, ρ, and per round the disagreement and the envelope ρ^r·d₀."""

    graph: str
    label: str
    rho: float
    disagreement: tuple[float, ...]
    envelope: tuple[float, ...]

    @property
    def rounds(self) -> tuple[int, ...]:
        return tuple(range(len(self.disagreement)))

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("graph", "label", "rho", "rounds", "disagreement", "envelope"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsensusPlot:
    """The curves of ``costmodel plot consensus``, one per graph, in the order given."""

    p: int
    weights: str
    rounds: int
    curves: tuple[ConsensusCurve, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"Gossip on p = {self.p} workers ({self.weights} weights): disagreement by round"

    def to_dict(self) -> dict[str, object]:
        return {"plot": "consensus", **to_json_dict(self, ("title", "p", "weights", "rounds")), "init": INIT,
                **to_json_dict(self, ("curves", "notes"))}


def consensus_plot(
    graphs: Iterable[str] | str,
    p: int,
    *,
    rounds: int = 30,
    weights: str = "uniform",
    degree: int | None = None,
    seed: int | None = None,
) -> ConsensusPlot:
    """Disagreement and ρ^r·d₀ for *rounds* rounds of gossip on each of *graphs*, from x₀ = 0, 1, …, p − 1.

    Parameters
    ----------
    graphs : str or iterable of str
        Graph names (``"ring,torus,hypercube"`` or a list), as :func:`costmodel.consensus.gossip.consensus`.
    p : int
        Workers.
    rounds : int
        Rounds of x ← Wx to simulate (≥ 1).
    weights : str
        ``uniform``, ``metropolis``, ``lazy`` or ``best-constant``.
    degree, seed : int, optional
        Passed to the graphs that take them (``k-ring``, ``random-regular``, ``erdos-renyi``).

    Examples
    --------
    >>> plot = consensus_plot("ring,complete", 4, rounds=2)
    >>> [(c.graph, round(c.rho, 4), round(c.disagreement[1], 4)) for c in plot.curves]  # d₀ = √5
    [('ring', 0.3333, 0.7454), ('complete', 0.0, 0.0)]
    """
    names = [g.strip() for g in (graphs.split(",") if isinstance(graphs, str) else graphs)]
    if not names or not all(names):
        raise InputError(f"{graphs!r} names no graph; give e.g. ring,torus,hypercube")
    positive(rounds, "rounds", hint="plot at least one round")
    curves: list[ConsensusCurve] = []
    notes: list[str] = []
    for name in dict.fromkeys(names):
        takes = resolve_graph(name).options
        run = consensus(name, p, weights=weights, rounds=rounds, degree=degree if "degree" in takes else None,
                        seed=seed if "seed" in takes else None)
        rho = float(run.spectrum.rho_exact) if run.spectrum.rho_exact is not None else run.spectrum.rho
        d0 = run.trajectory[0].disagreement
        curves.append(ConsensusCurve(graph=run.graph.name, label=run.graph.label, rho=rho,
                                     disagreement=tuple(r.disagreement for r in run.trajectory),
                                     envelope=tuple(rho**r * d0 for r in range(rounds + 1))))
        notes.extend(f"{run.graph.name}: {note}" for note in run.notes)
    return ConsensusPlot(p=p, weights=weights, rounds=rounds, curves=tuple(curves), notes=tuple(notes))


def draw_consensus_plot(plot: ConsensusPlot, path: str | Path, *, force: bool = False) -> Path:
    """Draw *plot* to *path* (.png or .svg): disagreement on a log axis, envelopes dashed.

    Rounds where a disagreement or envelope is exactly 0 (e.g. the complete graph after one
    round) cannot be shown on a log axis; the line stops there.  Needs matplotlib.
    """
    target = check_output(path, force=force)
    with figure_style() as plt:
        from matplotlib.lines import Line2D

        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        fig, ax = plt.subplots(figsize=(10, 5.5), layout="constrained")
        handles = []
        for i, c in enumerate(plot.curves):
            colour, marker = colours[i % len(colours)], MARKERS[i % len(MARKERS)]
            shown = [(r, d) for r, d in zip(c.rounds, c.disagreement, strict=True) if d > 0]
            bound = [(r, e) for r, e in zip(c.rounds, c.envelope, strict=True) if e > 0]
            every = max(2, len(c.rounds) // 12)
            start = (i * every) // max(1, len(plot.curves))  # equal curves still show every marker
            if shown:
                ax.plot(*zip(*shown, strict=True), color=colour, marker=marker, ms=5, lw=1.6,
                        ls=LINESTYLES[0], markevery=(start, every))
            if bound:
                ax.plot(*zip(*bound, strict=True), color=colour, lw=1.3, ls=(0, (4, 2.5)), zorder=3)
            handles.append(Line2D([], [], color=colour, marker=marker, ms=5, lw=1.6,
                                  label=f"{c.label}: ρ = {c.rho:.4g}"))
        handles.append(Line2D([], [], color="0.35", lw=1.2, ls=(0, (4, 2.5)),
                              label=r"$\rho^{r}\,d_0$ envelope (dashed, same colour)"))
        ax.set_yscale("log")
        from matplotlib.ticker import LogFormatterSciNotation

        ax.yaxis.set_minor_formatter(LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        ax.set_xlim(0, plot.rounds)
        ax.set_xlabel("round r (one x ← Wx mixing step per round)")
        ax.set_ylabel("disagreement ‖x_r − mean(x)‖₂ (units of x)")
        fig.suptitle(plot.title)
        ax.set_title(f"from {INIT}; a disagreement of exactly 0 is not drawn (log axis)", fontsize=10)
        ax.grid(True, which="major", alpha=0.35)
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), title="graph")
        return save(fig, target, plot.title)
