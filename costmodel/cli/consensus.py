"""Gossip and decentralised SGD: ``consensus``, ``gossip-step`` and ``gossip-vs-allreduce``.

The commands parse, make one core call into :mod:`costmodel.consensus`, and emit;
the renderings of their results are declared here (:func:`costmodel.cli.render.renders`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any

import typer
from rich.console import Group
from rich.markup import escape
from rich.text import Text

from costmodel.cli import complete
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Alpha, Bandwidth, Beta, Gamma, Json, Profile, option, size_option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.cli.render_cost import link_line
from costmodel.consensus.gossip import GOSSIP_MODEL, ConsensusRun, DSGDStep, GossipComparison
from costmodel.units import format_exact, format_number, format_size, format_time

app = typer.Typer()

_GRAPH = "Graph"
_RUN = "Run"

GraphName = Annotated[str, typer.Argument(
    metavar="GRAPH", show_default=False, autocompletion=complete.graphs,
    help="ring, k-ring, torus, hypercube, complete, star, exponential, random-regular, erdos-renyi, "
         "edges (with --edges FILE), or matrix (the graph of --weights FILE).")]
Workers = Annotated[int | None, option(
    "-p", "--ranks", "--workers", metavar="P", panel=_GRAPH,
    help="Number of workers (≥ 2); taken from the file for edges and matrix.")]
Weights = Annotated[str, typer.Option(
    "--weights", "-w", metavar="SCHEME|FILE",
    help="uniform (1/(d+1)), metropolis (1/(1+max(d_i,d_j))), lazy (½(I+W)), best-constant "
         "(Xiao–Boyd α*), or a matrix file (rows of numbers; 1/3 and 0.25 are exact).")]
Degree = Annotated[int | None, option(
    "--degree", "-k", metavar="K", panel=_GRAPH,
    help="Degree: of random-regular; 2k for k-ring; expected degree for erdos-renyi.")]
Rows = Annotated[int | None, option(
    "--rows", metavar="R", panel=_GRAPH,
    help="Rows of the torus (default: the squarest).")]
Prob = Annotated[str | None, option(
    "--prob", metavar="Q", panel=_GRAPH,
    help="Edge probability of erdos-renyi (or give --degree).")]
Seed = Annotated[int | None, option(
    "--seed", metavar="S", panel=_GRAPH,
    help="Seed of random-regular and erdos-renyi (default 0).")]
Edges = Annotated[str | None, option(
    "--edges", metavar="FILE", panel=_GRAPH,
    help="Edge-list file for the edges graph: one 'u v' per line, # comments.")]
Init = Annotated[str | None, option(
    "--init", metavar="V,V,...", panel=_RUN,
    help="Initial values, one per worker (default 0, 1, …, p − 1).")]
Rounds = Annotated[int | None, option(
    "--rounds", "-r", metavar="R", panel=_RUN,
    help="Rounds to simulate (default: the rounds to the target, at most 20; none past 1000 workers).")]
Target = Annotated[str, typer.Option(
    "--target", "-e", metavar="EPS",
    help="Shrink the disagreement by this factor: 0.01, 1e-3, 1/100 or 100x.")]


@app.command("consensus")
def consensus(
    graph: GraphName,
    ranks: Workers = None,
    weights: Weights = "uniform",
    degree: Degree = None,
    rows: Rows = None,
    prob: Prob = None,
    seed: Seed = None,
    edges: Edges = None,
    init: Init = None,
    rounds: Rounds = None,
    target: Target = "0.01",
    as_json: Json = False,
) -> None:
    """Neighbour averaging on a graph: ρ, the spectral gap, rounds to a target, and a trajectory.

    Example: costmodel consensus ring -p 4 --init 0,3,6,9
    """
    from costmodel.consensus.gossip import consensus as run

    emit(run(graph, ranks, weights=weights, degree=degree, rows=rows, prob=prob, seed=seed, edges=edges,
             init=init, rounds=rounds, target=target), as_json=as_json)


@app.command("gossip-step")
def gossip_step(
    value: Annotated[str, option("--value", "-x", metavar="X", help="The worker's own model value.")],
    neighbours: Annotated[str, option("--neighbours", "--neighbors", metavar="X,X,...",
                                      help="Its neighbours' values.")],
    grad: Annotated[str, option("--grad", "-g", metavar="G",
                                help="Gradient at the worker's own model, before mixing.")],
    lr: Annotated[str, option("--lr", metavar="LR", help="Learning rate.")],
    weights: Annotated[str | None, option(
        "--weights", "-w", metavar="W,W,...",
        help="Mixing weights, the worker's own first; they must sum to 1 (default: equal).")] = None,
    as_json: Json = False,
) -> None:
    """One decentralised SGD step: mix with the neighbours, then step along the old gradient.

    Example: costmodel gossip-step --value 6 --neighbours 3,12 --grad 2 --lr 0.5
    """
    from costmodel.consensus.gossip import dsgd_step

    emit(dsgd_step(value, neighbours, grad=grad, lr=lr, weights=weights), as_json=as_json)


@app.command("gossip-vs-allreduce")
def gossip_vs_allreduce(
    graph: GraphName,
    size: Annotated[Fraction, size_option(
        "The model each worker holds: 100MB, 1.5GiB (bytes); gossip sends it whole to each neighbour, "
        "the all-reduce reduces it.")],
    ranks: Workers = None,
    target: Target = "0.01",
    weights: Weights = "uniform",
    degree: Degree = None,
    rows: Rows = None,
    prob: Prob = None,
    seed: Seed = None,
    edges: Edges = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Gossip until the disagreement shrinks by EPS, against one ring all-reduce: rounds, bytes, time.

    Example: costmodel gossip-vs-allreduce ring -p 16 -n 100MB --alpha 5us --bandwidth 12.5GB/s
    """
    from costmodel.consensus.gossip import gossip_vs_allreduce as compare
    from costmodel.links import link_from_options

    link = link_from_options(alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, profile=profile)
    emit(compare(graph, ranks, n=size, link=link, target=target, weights=weights, degree=degree, rows=rows,
                 prob=prob, seed=seed, edges=edges), as_json=as_json)


# -- renderings -------------------------------------------------------------------------------------------

_SHOWN_VALUES = 8


def _num(x: Any, digits: int = 4) -> str:
    if isinstance(x, Fraction):
        shown = str(x)
        return shown if len(shown) <= 12 else format_number(x, digits=digits)
    return format_number(x, digits=digits)


def _values(values: Any) -> str:
    if values is None:
        return "–"
    shown = ", ".join(_num(v) for v in values[:_SHOWN_VALUES])
    return shown + (f", … ({len(values)} values)" if len(values) > _SHOWN_VALUES else "")


def _exact(value: float, exact: Fraction | None) -> str:
    return format_number(value, digits=6) if exact is None else format_exact(exact, approx=True)


def _rho(spec: Any) -> str:
    """ρ, written as 1 − gap where six digits would round it to 1 (a ring of 10⁶: 1 − 1.316e-11)."""
    shown = _exact(spec.rho, spec.rho_exact)
    if spec.rho_exact is None and shown == "1" and spec.spectral_gap > 0:
        return f"1 − {format_number(spec.spectral_gap, digits=4)}"
    return shown


def _target(eps: Any) -> str:
    if isinstance(eps, Fraction) and eps.numerator == 1:
        return f"{eps.denominator}×"
    return f"by ε = {_num(eps)}"


@renders("costmodel.consensus.gossip.ConsensusRun")
def _(run: ConsensusRun) -> Rendered:
    spec, mix, reach = run.spectrum, run.mixing, run.rounds
    checks = [("doubly stochastic" if mix.doubly_stochastic else "row- but not column-stochastic"),
              "symmetric" if mix.symmetric else "not symmetric",
              "non-negative" if mix.nonnegative else "has negative weights"]
    if reach.rounds is None:
        rounds = "never (ρ ≥ 1)"
    elif reach.low != reach.high:
        rounds = f"{reach.rounds} (between {reach.low} and {reach.high or '∞'})"
    else:
        rounds = str(reach.rounds)
    head = markup(
        f"[bold]consensus[/bold] · {escape(run.graph.label)} · {escape(run.weights_text)} weights\n"
        f"ρ = [bold]{_rho(spec)}[/bold] · spectral gap 1 − ρ = "
        f"{_exact(spec.spectral_gap, spec.spectral_gap_exact)}   [dim]({escape(spec.method)})[/dim]\n"
        f"W: {', '.join(checks)}\n"
        f"rounds to shrink the disagreement {_target(reach.target)}: [bold]{rounds}[/bold]")
    if not run.trajectory:
        return head, run.notes
    out = table("round", "values", "mean", "‖x − x̄‖₂", "exact", "ratio",
                 numeric=("round", "mean", "‖x − x̄‖₂", "ratio"))
    rates = (None, *run.observed_rates)
    for r, rate in zip(run.trajectory, rates, strict=True):
        out.add_row(str(r.round), _values(r.values), _num(r.mean),
                    format_number(r.disagreement, digits=4),
                    r.disagreement_exact or "", "" if rate is None else format_number(rate, digits=4))
    return Group(head, Text(""), out), run.notes


def _weighted_sum(weights: Any, values: Any) -> str:
    """w₁·x₁ + w₂·x₂ ... as written by hand: a negative weight subtracts, a negative value is bracketed.

    >>> from fractions import Fraction
    >>> _weighted_sum([Fraction(3, 2), Fraction(-1, 4)], [Fraction(6), Fraction(-3)])
    '3/2·6 − 1/4·(−3)'
    """
    def value(x: Any) -> str:
        shown = _num(x)
        return f"(−{shown[1:]})" if shown.startswith("-") else shown

    out = ""
    for k, (w, x) in enumerate(zip(weights, values, strict=True)):
        shown = _num(w)
        negative = shown.startswith("-")
        term = f"{shown[1:] if negative else shown}·{value(x)}"
        out += (("−" if negative else "") if k == 0 else (" − " if negative else " + ")) + term
    return out


@renders("costmodel.consensus.gossip.DSGDStep")
def _(step: DSGDStep) -> Rendered:
    pairs = _weighted_sum(step.weights, (step.value, *step.neighbours))
    out = table("quantity", "value", "how", numeric=("value",))
    out.add_row("mixed", _num(step.mixed), pairs)
    out.add_row("next", _num(step.next), f"mixed − lr × grad = {_num(step.mixed)} − {_num(step.lr)} × "
                f"{_num(step.grad)}")
    out.add_row("without mixing", _num(step.without_mixing),
                f"value − lr × grad = {_num(step.value)} − {_num(step.lr)} × {_num(step.grad)}")
    head = markup("[bold]D-SGD step[/bold] · the gradient is taken at the worker's own model, "
                  "before mixing")
    return Group(head, Text(""), out), step.notes


@renders("costmodel.consensus.gossip.GossipComparison")
def _(c: GossipComparison) -> Rendered:
    run, ar = c.run, c.allreduce
    rounds = "never" if run.rounds.rounds is None else str(run.rounds.rounds)
    out = table("", "rounds", "sent per worker", "time", numeric=("rounds", "sent per worker", "time"))
    gossip_bytes = "–" if c.gossip_bytes_per_worker is None else format_size(c.gossip_bytes_per_worker)
    gossip_time = "never" if c.gossip_time_s is None else format_time(c.gossip_time_s)
    out.add_row(f"gossip ({c.degree} sends/round)", rounds, gossip_bytes, gossip_time)
    out.add_row("ring all-reduce", str(ar.rounds), format_size(ar.bytes_sent_per_rank),
                format_time(ar.time_s))
    ratio = c.time_ratio
    verdict = f"faster: [bold]{c.faster}[/bold]"
    if ratio is not None:
        verdict += f" · gossip takes {format_number(ratio, digits=3)}× the all-reduce's time"
    head = markup(
        f"[bold]gossip vs all-reduce[/bold] · {escape(run.graph.label)} · n = {format_size(c.n_bytes)}\n"
        f"ρ = {_exact(run.spectrum.rho, run.spectrum.rho_exact)} · shrink the disagreement "
        f"{_target(run.rounds.target)} · gossip round = {format_time(c.gossip_round_time_s)}\n"
        f"{link_line(c.link)}")
    model = markup(f"[dim]model: {escape(GOSSIP_MODEL)}[/dim]")
    return Group(head, Text(""), out, Text(""), markup(verdict), model), c.notes
