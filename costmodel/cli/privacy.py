"""The ``privacy`` command: DP-SGD's (ε, δ) by RDP accounting, σ for a target ε, DP-FedAvg's trade-off.

It makes one call to :func:`costmodel.training.privacy.privacy` and emits the result; the renderings
of its three results are declared here and import rich only when they run.  The accounting is pure
Python (``math``): the command imports neither numpy nor scipy.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders

if TYPE_CHECKING:
    from costmodel.training.privacy import ClientNoiseTable, NoiseSolution, PrivacyAccount

__all__ = ["app"]

app = typer.Typer()

_RATE = "Sampling rate (give -q, or --batch with --dataset)"
_LENGTH = "Length (give --steps, or --epochs with --batch and --dataset)"
_FED = "DP-FedAvg: noise per update against clients per round"


@app.command("privacy")
def privacy(
    delta: Annotated[str, option("--delta", metavar="δ", help="δ of (ε, δ)-DP, 0 < δ < 1: 1e-5.")],
    q: Annotated[str | None, option("-q", "--sampling-rate", metavar="Q", panel=_RATE,
                                    help="Probability an example is in a step's batch: 0.01 or "
                                         "256/60000.")] = None,
    batch: Annotated[str | None, option("--batch", metavar="B", panel=_RATE,
                                        help="Batch (lot) size B: q = B/dataset; with --clip, the noise "
                                             "σC/B.")] = None,
    dataset: Annotated[str | None, option("--dataset", metavar="N", panel=_RATE,
                                          help="Examples in the dataset N.")] = None,
    noise: Annotated[str | None, option("--noise", metavar="σ",
                                        help="Noise multiplier σ (noise std over the clipping norm): 1.1. "
                                             "Leave out with --target-epsilon.")] = None,
    steps: Annotated[str | None, option("--steps", metavar="T", panel=_LENGTH,
                                        help="Training steps (rounds for DP-FedAvg).")] = None,
    epochs: Annotated[str | None, option("--epochs", metavar="E", panel=_LENGTH,
                                         help="Epochs: ⌈E·N/B⌉ steps.")] = None,
    phases: Annotated[str | None, option("--phases", metavar="q,σ,T;...",
                                         help="Heterogeneous phases, ';' between them: "
                                              "1e-5,1.0,10;1e-4,3.0,4.")] = None,
    target_epsilon: Annotated[str | None, option("--target-epsilon", metavar="ε",
                                                 help="Find the noise multiplier σ for this ε (bisection).")
                              ] = None,
    clip: Annotated[str | None, option("--clip", metavar="C",
                                       help="Clipping norm C: with --batch, the noise std σC/B on the "
                                            "averaged gradient.")] = None,
    clients_per_round: Annotated[str | None, option("--clients-per-round", metavar="M,M,...", panel=_FED,
                                                    help="Clients per round m (q = m/population): "
                                                         "10,100,1000.")] = None,
    population: Annotated[str | None, option("--population", metavar="N", panel=_FED,
                                             help="Clients in the population.")] = None,
    orders: Annotated[str | None, option("--orders", metavar="LIST",
                                         help="Rényi orders, e.g. 2-64 or 1.5,2-32; default dp_accounting's "
                                              "156 (1.1 to 10.9 by tenths, 11-63, 128-1024).")] = None,
    conversion: Annotated[str, option("--conversion", metavar="KIND", show_default=True,
                                      help="RDP to (ε, δ): improved (Balle et al. 2020) or classic "
                                           "(Mironov 2017).")] = "improved",
    as_json: Json = False,
) -> None:
    """DP-SGD's ε for a δ by Rényi DP accounting of the sampled Gaussian mechanism (Mironov et al. 2019).

    Composes over steps and phases, converts to (ε, δ) at the best order and shows each step; with
    --target-epsilon finds the noise multiplier σ instead; with --clients-per-round tabulates DP-FedAvg's
    noise per update σS/m against the clients per round. Pure Python: no numpy, no scipy.

    Example: costmodel privacy --batch 256 --dataset 60000 --noise 1.1 --epochs 60 --delta 1e-5

    Example: costmodel privacy --phases "1e-5,1.0,10;1e-4,3.0,4" --delta 1e-5 --orders 2-32

    Example: costmodel privacy -q 0.01 --steps 10000 --target-epsilon 2 --delta 1e-5 --orders 2-64

    DP-FedAvg's table: --clients-per-round 10,100 --population 10000 --steps 500 --target-epsilon 2
    --delta 1e-6 (docs/howto/dp-accounting.md).
    """
    from costmodel.training.privacy import privacy as ask

    emit(ask(q=q, noise_multiplier=noise, steps=steps, epochs=epochs, dataset=dataset, batch=batch,
             phases=phases, delta=delta, target_epsilon=target_epsilon, clip=clip,
             clients_per_round=clients_per_round, population=population, orders=orders,
             conversion=conversion), as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _g(x: float, digits: int = 6) -> str:
    """A float with *digits* significant digits, ``∞`` if infinite."""
    from costmodel.units import format_number

    return "∞" if math.isinf(x) else format_number(x, digits=digits)


def _exact(x: object) -> str:
    from costmodel.units import format_exact

    return str(format_exact(x, decimal=True))  # type: ignore[arg-type]


_CONVERTED = {"improved": "improved bound (Balle et al. 2020, Theorem 21)",
              "classic": "classic bound (Mironov 2017, Proposition 3)"}


def _conversion_step(rdp: float, order: float, delta: float, kind: str, epsilon: float) -> str:
    a = _g(order)
    if kind == "classic":
        return f"ε = rdp − log δ/(α − 1) = {_g(rdp)} − log({_g(delta)})/{_g(order - 1)} = {_g(epsilon)}"
    return (f"ε = rdp + log(1 − 1/α) − log(δ·α)/(α − 1) = {_g(rdp)} + log(1 − 1/{a}) − "
            f"log({_g(delta)}·{a})/{_g(order - 1)} = {_g(epsilon)}")


@renders("costmodel.training.privacy.PrivacyAccount")
def render_account(a: PrivacyAccount) -> Rendered:
    """The phases, the orders around the best one, and the worked steps at the best order."""
    from rich.console import Group
    from rich.text import Text as RichText

    steps = sum(p.steps for p in a.phases)
    head = markup(f"[bold]privacy[/bold] · DP-SGD, RDP of the sampled Gaussian mechanism · {steps} steps"
                  f"{f' in {len(a.phases)} phases' if len(a.phases) > 1 else ''} · δ = {_g(a.delta)} · "
                  f"{_CONVERTED[a.conversion]}")
    phases = table("phase", "q", "σ", "steps", numeric=("phase", "q", "σ", "steps"))
    for i, p in enumerate(a.phases):
        phases.add_row(str(i + 1), _exact(p.q), _exact(p.noise_multiplier), str(p.steps))
    many = len(a.phases) > 1
    per_step = tuple(f"rdp/step {i + 1}" if many else "rdp per step" for i in range(len(a.phases)))
    orders = table("α", *per_step, "rdp (composed)", "ε", "", numeric=("α", *per_step, "rdp (composed)", "ε"),
                   optional=per_step)
    k = next(i for i, r in enumerate(a.rows) if r.order == a.best_order)
    shown = a.rows[max(0, k - 3): k + 4]
    for r in shown:
        orders.add_row(_g(r.order), *(_g(x) for x in r.rdp_per_step), _g(r.rdp), _g(r.epsilon),
                       "◀ best" if r.order == a.best_order else "")
    best = a.best
    terms = " + ".join(f"{p.steps} × {_g(x)}" for p, x in zip(a.phases, best.rdp_per_step, strict=True))
    lines = [f"[bold]at the best order α = {_g(a.best_order)}[/bold]",
             f"  rdp = Σ steps × rdp per step = {terms} = {_g(best.rdp)}",
             f"  {_conversion_step(best.rdp, a.best_order, a.delta, a.conversion, a.epsilon)}",
             f"[bold]ε = {_g(a.epsilon)}[/bold] for δ = {_g(a.delta)} "
             f"(the least ε over {len(a.rows)} orders; {len(shown)} shown, --json lists them all)"]
    if a.noise_std is not None:
        p = a.phases[0]
        lines.append(f"noise on the averaged gradient: σ·C/B = {_exact(p.noise_multiplier)} × "
                     f"{_exact(a.clip)} / {a.batch} = {_g(a.noise_std)} per coordinate")
    blank = RichText("")
    return Group(head, blank, phases, blank, orders, blank, markup("\n".join(lines))), a.notes


@renders("costmodel.training.privacy.NoiseSolution")
def render_noise(s: NoiseSolution) -> Rendered:
    """The noise multiplier found, its ε and order, and the search."""
    from rich.console import Group
    from rich.text import Text as RichText

    head = markup(f"[bold]privacy[/bold] · the noise multiplier σ for ε ≤ {_g(s.target_epsilon)} · "
                  f"q = {_exact(s.q)} · {s.steps} steps · δ = {_g(s.delta)} · {_CONVERTED[s.conversion]}")
    out = table("quantity", "value", numeric=("value",))
    out.add_row("noise multiplier σ", _g(s.noise_multiplier, 7))
    out.add_row("ε at that σ", _g(s.epsilon, 7))
    out.add_row("best order α", _g(s.best_order))
    out.add_row("bracket's lower end", _g(s.lower, 7))
    out.add_row("bisection steps", str(s.iterations))
    if s.noise_std is not None:
        out.add_row("noise std σ·C/B", _g(s.noise_std))
    text = (f"ε falls as σ grows: σ doubled (or halved) from 1 to bracket the target, then bisected until "
            f"the bracket is within {_g(s.tolerance)} of σ relative; σ is the bracket's upper end, whose "
            f"ε is at most the target")
    return Group(head, RichText(""), out, RichText(""), markup(text)), s.notes


@renders("costmodel.training.privacy.ClientNoiseTable")
def render_clients(t: ClientNoiseTable) -> Rendered:
    """One row per client count: q, σ for the target ε, and the noise on the averaged update."""
    from rich.console import Group
    from rich.text import Text as RichText

    head = markup(f"[bold]privacy[/bold] · DP-FedAvg at ε ≤ {_g(t.target_epsilon)}, δ = {_g(t.delta)} over "
                  f"{t.rounds} rounds · population {t.population} · clip S = {_exact(t.clip)}")
    out = table("clients m", "q = m/N", "σ", "ε", "α", "noise σS/m",
                numeric=("clients m", "q = m/N", "σ", "ε", "α", "noise σS/m"), optional=("α",))
    for r in t.rows:
        out.add_row(str(r.clients_per_round), _g(float(r.q)), _g(r.noise_multiplier), _g(r.epsilon),
                    _g(r.best_order), _g(r.noise_std))
    text = ("each round samples each client with probability q = m/N; more clients per round need a larger σ "
            "for the same ε, but the average divides the noise by m (McMahan et al. 2018, Algorithm 1)")
    return Group(head, RichText(""), out, RichText(""), markup(text)), t.notes
