"""The ``federated`` commands: a round priced (``round``), the optimisers' arithmetic (``prox-step``,
``scaffold``, ``fednova``) and workers of unequal speed under BSP, SSP and ASP (``sync``).

Each command makes one call into :mod:`costmodel.training.federated_pricing`,
:mod:`costmodel.training.federated_steps` or :mod:`costmodel.training.synchrony` and emits the result;
the renderings are declared here and
import rich only when they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders

if TYPE_CHECKING:
    from costmodel.training.federated_pricing import FederatedRound
    from costmodel.training.federated_steps import FedNovaRound, FedProxStep, ScaffoldRound
    from costmodel.training.synchrony import SyncRun

__all__ = ["app", "federated_app"]

app = typer.Typer()
federated_app = typer.Typer(no_args_is_help=True,
                            help="Federated learning: round, prox-step, scaffold, fednova, sync.")
app.add_typer(federated_app, name="federated")

_WAIT = "When the round ends (default: every sampled client)"


@federated_app.command("round")
def federated_round(
    params: Annotated[str, option("--params", metavar="N", help="Model parameters: 25M, 1.5e6.")],
    compute: Annotated[str, option("--compute", metavar="TIMES|DIST",
                                   help="Client compute times per round: a list 1s,2s,5s (the population) "
                                        "or lognormal:MEDIAN,SHAPE, exp:SHIFT,MEAN, uniform:LOW,HIGH.")],
    uplink: Annotated[str, option("--uplink", metavar="ALPHA:RATE",
                                  help="Each client's uplink: 50ms:10Mb/s, or a profile's name.")],
    algorithm: Annotated[str, typer.Argument(metavar="ALGO", show_default=False,
                                             help="fedavg (default), scaffold, fednova, fedprox or fedpaq.")
                         ] = "fedavg",
    downlink: Annotated[str | None, option("--downlink", metavar="ALPHA:RATE",
                                           help="Each client's downlink (default: as the uplink).")] = None,
    sampled: Annotated[str | None, option("--sampled", metavar="M",
                                          help="Clients sampled per round (default: the whole list; "
                                               "needed with a distribution).")] = None,
    fastest: Annotated[str | None, option("--fastest", metavar="K", panel=_WAIT,
                                          help="End when the K fastest are done.")] = None,
    deadline: Annotated[str | None, option("--deadline", metavar="TIME", panel=_WAIT,
                                           help="End at this time (FedAvg drops stragglers; FedProx, "
                                                "FedNova keep their partial work).")] = None,
    dtype: Annotated[str, option("--dtype", metavar="DTYPE", show_default=True,
                                 help="The model's element type.")] = "fp32",
    bits: Annotated[str | None, option("--bits", metavar="B",
                                       help="FedPAQ: bits per element of an upload (default 8).")
                  ] = None,
    draws: Annotated[str, option("--draws", metavar="N", show_default=True,
                                 help="Simulated rounds.")] = "100000",
    seed: Annotated[str, option("--seed", metavar="S", show_default=True,
                                help="The simulation's seed.")] = "0",
    as_json: Json = False,
) -> None:
    """A federated round priced: bytes per client and per round, participants, expected round time.

    Each sampled client downloads the global state, computes, and uploads (α–β links, one message each
    way). The expected round time is exact where order statistics give it (a list, the shifted
    exponential, the uniform) and integrated numerically otherwise (log-normal), beside a seeded
    simulation.

    Example: costmodel federated round --params 1M --compute lognormal:2s,0.5 --sampled 8 --uplink 50ms:10Mb/s

    Example: costmodel federated round scaffold --params 1M --compute 1s,2s,5s --sampled 2 --uplink 0s:1MB/s

    With --deadline, FedProx and FedNova keep stragglers' partial work (docs/howto/federated-round.md).
    """
    from costmodel.training.federated_pricing import federated_round as price

    emit(price(algorithm, params=params, client_times=compute, uplink=uplink, downlink=downlink,
               sampled=sampled, fastest=fastest, deadline=deadline, dtype=dtype, bits=bits, draws=draws,
               seed=seed), as_json=as_json)


@federated_app.command("sync")
def sync(
    compute: Annotated[str, option("--compute", metavar="TIMES|DIST",
                                   help="Step times: a list 1s,1s,2s (worker i's fixed time; one time: "
                                        "every worker's) or lognormal:MEDIAN,SHAPE, exp:SHIFT,MEAN, "
                                        "uniform:LOW,HIGH (drawn per worker and step).")],
    workers: Annotated[int | None, option("--workers", metavar="N", min=1,
                                          help="Workers (default: the list's length; needed with a "
                                               "distribution).")] = None,
    steps: Annotated[int, option("--steps", metavar="T", show_default=True, min=1,
                                 help="Steps each worker runs.")] = 1000,
    rule: Annotated[str, option("--rule", metavar="RULE", show_default=True,
                                help="bsp, ssp, asp, or all (SSP when --bound is given).")] = "all",
    bound: Annotated[int | None, option("--bound", metavar="S", min=0,
                                        help="SSP's bound: no worker more than S steps ahead of the "
                                             "slowest.")] = None,
    seed: Annotated[int, option("--seed", metavar="S", show_default=True, min=0,
                                help="The seed of the drawn step times.")] = 0,
    as_json: Json = False,
) -> None:
    """Workers of unequal speed under BSP, SSP and ASP: throughput, idle time, staleness, simulated.

    Every rule runs on the same step times. BSP waits at a barrier each step, SSP lets no worker run more
    than --bound steps ahead of the slowest, ASP never waits; staleness counts the updates the server
    applied between a gradient's read and its own update. BSP's mean step time is shown beside the
    expected maximum of N draws.

    Example: costmodel federated sync --workers 8 --compute lognormal:1s,0.5 --bound 2

    Example: costmodel federated sync --compute 1s,1s,1s,2s --steps 100 --rule asp
    """
    from costmodel.training.synchrony import simulate_sync

    emit(simulate_sync(rule, step_times=compute, steps=steps, workers=workers, bound=bound, seed=seed),
         as_json=as_json)


Vec = Annotated[str, option("--x", metavar="V", help="The server model x: 0 or 1,0.")]
Lr = Annotated[str, option("--lr", metavar="η", help="The local learning rate η.")]


@federated_app.command("prox-step")
def prox_step(
    w: Annotated[str, option("--w", metavar="V", help="The client's current w: 1 or 1,0.")],
    anchor: Annotated[str, option("--anchor", metavar="V", help="The global model wᵗ of the round.")],
    gradient: Annotated[str, option("--gradient", metavar="V", help="∇f(w), the local gradient.")],
    lr: Lr,
    mu: Annotated[str, option("--mu", metavar="μ", help="The proximal weight μ.")],
    as_json: Json = False,
) -> None:
    """One FedProx local step w ← w − η(∇f(w) + μ(w − wᵗ)), exactly, beside plain SGD's.

    Example: costmodel federated prox-step --w 1 --anchor 0 --gradient 2 --lr 0.1 --mu 0.5
    """
    from costmodel.training.federated_steps import fedprox_step

    emit(fedprox_step(w, anchor=anchor, gradient=gradient, lr=lr, mu=mu), as_json=as_json)


@federated_app.command("scaffold")
def scaffold(
    x: Vec,
    curvatures: Annotated[str, option("--curvatures", metavar="A,A,...",
                                      help="Each client's a_i in f_i(y) = (a_i/2)‖y − b_i‖².")],
    optima: Annotated[str, option("--optima", metavar="B;B;...", help="Each client's b_i, ';' between.")],
    lr_local: Annotated[str, option("--lr-local", metavar="η_l", help="The local learning rate η_l.")],
    controls: Annotated[str | None, option("--controls", metavar="C;C;...",
                                           help="Each client's control variate c_i (default 0).")] = None,
    c: Annotated[str | None, option("--c", metavar="V", help="The server's control variate (default 0).")
                 ] = None,
    steps: Annotated[str, option("--steps", metavar="K", show_default=True, help="Local steps K.")] = "1",
    lr_global: Annotated[str, option("--lr-global", metavar="η_g", show_default=True,
                                     help="The server's learning rate η_g.")] = "1",
    population: Annotated[str | None, option("--population", metavar="N",
                                              help="Clients in all (default: those given).")] = None,
    as_json: Json = False,
) -> None:
    """One SCAFFOLD round (option II control variates) on quadratic clients, exactly.

    Example: costmodel federated scaffold --x 0 --curvatures 1,1 --optima "1;3" --steps 2 --lr-local 0.5
    """
    from costmodel.training.federated_steps import scaffold_round

    emit(scaffold_round(x, curvatures=curvatures, optima=optima, controls=controls, c=c, steps=steps,
                        lr_local=lr_local, lr_global=lr_global, population=population), as_json=as_json)


@federated_app.command("fednova")
def fednova(
    x: Vec,
    gradients: Annotated[str, option("--gradients", metavar="G;G;...",
                                     help="Each client's (constant) local gradient, ';' between.")],
    steps: Annotated[str, option("--steps", metavar="τ,τ,...", help="Each client's local steps τ_i.")],
    lr: Lr,
    sizes: Annotated[str | None, option("--sizes", metavar="N,N,...",
                                        help="Samples per client: weights p_i (default equal).")] = None,
    as_json: Json = False,
) -> None:
    """FedNova's normalised averaging beside FedAvg's for unequal local steps (objective inconsistency).

    Example: costmodel federated fednova --x 0 --gradients "1;-1" --steps 1,3 --lr 1
    """
    from costmodel.training.federated_steps import fednova_round

    emit(fednova_round(x, gradients=gradients, steps=steps, sizes=sizes, lr=lr), as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _num(x: object, digits: int = 6) -> str:
    from costmodel.units import format_number

    return str(format_number(x, digits=digits))  # type: ignore[arg-type]


def _time(x: object) -> str:
    from costmodel.units import format_time

    return str(format_time(x, digits=6))  # type: ignore[arg-type]


def _size(x: object) -> str:
    from costmodel.units import format_size

    return str(format_size(x, digits=7).split(" = ")[0])  # type: ignore[arg-type]


_NAMES = {"fedavg": "FedAvg", "scaffold": "SCAFFOLD", "fednova": "FedNova", "fedprox": "FedProx",
          "fedpaq": "FedPAQ"}


@renders("costmodel.training.federated_pricing.FederatedRound")
def render_round(r: FederatedRound) -> Rendered:
    """Bytes and links per client, participants, bytes per round, and the two round times side by side."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    rule = (f"deadline {_time(r.deadline_s)}" if r.deadline_s is not None
            else "wait for all" if r.rule == "all" else f"wait for the {r.k} fastest")
    head = markup(f"[bold]federated round[/bold] · {_NAMES[r.algorithm]} · {r.sampled} "
                  f"client{'s' if r.sampled != 1 else ''} sampled · "
                  f"{rule}\nclient compute: {escape(r.clients.describe())}")
    out = table("quantity", "value", numeric=("value",), no_wrap=("value",))
    model = f"{r.params} × {r.bytes_per_element} B" + (f", up {r.bits} bits/element" if r.bits else "")
    out.add_row("model", model)
    out.add_row("download per client", f"{_size(r.download_bytes)} in {_time(r.download_s)}")
    out.add_row("upload per client", f"{_size(r.upload_bytes)} in {_time(r.upload_s)}")
    sim_p = "" if r.simulated_participants is None else f" (simulated {_num(r.simulated_participants)})"
    out.add_row("participants", f"{_num(r.expected_participants)}{sim_p}")
    out.add_row("bytes down per round", _size(r.bytes_down_per_round))
    out.add_row("bytes up per round", _size(r.bytes_up_per_round))
    out.add_row("expected round time", _time(r.expected_round_time_s))
    simulated = f"{_time(r.simulated_round_time_s)} ± {_time(r.simulated_stderr_s)}"
    out.add_row("simulated round time", simulated)
    out.add_row("relative difference", f"{_num(r.relative_difference, 3)}")
    if r.work_share is not None:
        out.add_row("work share done", f"{_num(r.work_share)} (simulated {_num(r.simulated_work_share)})")
    text = f"expected: {escape(r.method)}\nsimulated: {r.draws} rounds, seed {r.seed}, mean ± standard error"
    return Group(head, Text(""), out, Text(""), markup(text)), r.notes


def _vec(v: tuple[object, ...]) -> str:
    from costmodel.units import format_exact

    return "(" + ", ".join(str(format_exact(x, decimal=True)) for x in v) + ")"  # type: ignore[arg-type]


def _q(x: object) -> str:
    from costmodel.units import format_exact

    return str(format_exact(x, decimal=True))  # type: ignore[arg-type]


@renders("costmodel.training.federated_steps.FedProxStep")
def render_prox(s: FedProxStep) -> Rendered:
    """The step term by term."""
    lines = [
        "[bold]FedProx local step[/bold] · w ← w − η(∇f(w) + μ(w − wᵗ)) (Li et al. 2020, eq. 2)",
        "",
        f"proximal term  μ(w − wᵗ) = {_q(s.mu)} × ({_vec(s.w)} − {_vec(s.anchor)}) = {_vec(s.proximal)}",
        f"total gradient ∇f(w) + μ(w − wᵗ) = {_vec(s.gradient)} + {_vec(s.proximal)} = {_vec(s.total)}",
        f"new w = {_vec(s.w)} − {_q(s.lr)} × {_vec(s.total)} = [bold]{_vec(s.new_w)}[/bold]",
        f"plain SGD (μ = 0) would give {_vec(s.plain_sgd)}: the proximal term pulls w back towards wᵗ",
    ]
    return markup("\n".join(lines)), ()


@renders("costmodel.training.federated_steps.ScaffoldRound")
def render_scaffold(r: ScaffoldRound) -> Rendered:
    """Each client's local run and control variate, then the server's update."""
    from rich.console import Group
    from rich.text import Text

    head = markup(f"[bold]SCAFFOLD round[/bold] (option II) · x = {_vec(r.x)}, c = {_vec(r.c)} · "
                  f"K = {r.steps}, η_l = {_q(r.lr_local)}, η_g = {_q(r.lr_global)} · "
                  f"{len(r.clients)} of {r.population} clients\n"
                  "client i: f_i(y) = (a_i/2)‖y − b_i‖², y ← y − η_l(a_i(y − b_i) − c_i + c)")
    out = table("client", "a_i", "b_i", "c_i", "y after K", "c_i⁺", "Δy", "Δc",
                numeric=("client",), optional=("b_i", "c_i"))
    for i, cl in enumerate(r.clients):
        out.add_row(str(i), _q(cl.curvature), _vec(cl.optimum), _vec(cl.control), _vec(cl.iterates[-1]),
                    _vec(cl.new_control), _vec(cl.delta_y), _vec(cl.delta_c))
    share = f"{len(r.clients)}/{r.population}"
    text = ("c_i⁺ = c_i − c + (x − y)/(K·η_l): the mean gradient along the client's path\n"
            f"server: x ← x + η_g·mean Δy = [bold]{_vec(r.new_x)}[/bold]; "
            f"c ← c + {share}·mean Δc = [bold]{_vec(r.new_c)}[/bold]")
    return Group(head, Text(""), out, Text(""), markup(text)), ()


@renders("costmodel.training.federated_steps.FedNovaRound")
def render_fednova(r: FedNovaRound) -> Rendered:
    """Per client: weight, steps, FedAvg's effective weight; then both new models."""
    from rich.console import Group
    from rich.text import Text

    head = markup(f"[bold]FedNova vs FedAvg[/bold] · x = {_vec(r.x)} · η = {_q(r.lr)} · "
                  f"τ_eff = Σ p_i τ_i = {_q(r.tau_eff)}")
    numbers = ("client", "p_i", "τ_i", "FedAvg's weight")
    out = table("client", "p_i", "τ_i", "g_i", "FedAvg's weight", numeric=numbers)
    for i, (p, t, g, w) in enumerate(zip(r.weights, r.steps, r.gradients, r.fedavg_weights, strict=True)):
        out.add_row(str(i), _q(p), str(t), _vec(g), _q(w))
    text = (f"FedAvg: x − η Σ p_i τ_i g_i = [bold]{_vec(r.fedavg_x)}[/bold]: it weighs client i by "
            "p_i τ_i / Σ p_j τ_j and so optimises a different objective (Wang et al. 2020, Theorem 1)\n"
            f"FedNova: x − η τ_eff Σ p_i g_i = [bold]{_vec(r.fednova_x)}[/bold]: each update normalised by "
            "its steps, the weights p_i kept")
    return Group(head, Text(""), out, Text(""), markup(text)), ()


@renders("costmodel.training.synchrony.SyncRun")
def render_sync(r: SyncRun) -> Rendered:
    """A column per rule: run time, throughput, idle time, staleness; then BSP against E[max of N]."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    plural = "s" if r.workers != 1 else ""
    head = markup(f"[bold]BSP, SSP and ASP simulated[/bold] · {r.workers} worker{plural}"
                  f" · {r.steps} step{'s' if r.steps != 1 else ''} each\n"
                  f"step times: {escape(r.step_times_label)}")
    labels = [x.label for x in r.runs]
    out = table("quantity", *labels, numeric=labels, no_wrap=("quantity", *labels))

    def row(name: str, values: list[str]) -> None:
        out.add_row(name, *values)

    row("run time", [_time(x.run_time_s) for x in r.runs])
    row("steps/s", [_num(x.steps_per_s, 4) for x in r.runs])
    row("updates/s", [_num(x.updates_per_s, 4) for x in r.runs])
    row("mean step time", [_time(x.mean_step_s) for x in r.runs])
    row("waiting, mean", [_time(sum(x.waiting_s) / len(x.waiting_s)) for x in r.runs])
    row("idle, mean", [_time(sum(x.idle_s) / len(x.idle_s)) for x in r.runs])
    row("idle, most", [_time(max(x.idle_s)) for x in r.runs])
    row("staleness, mean", [_num(x.staleness_mean, 4) for x in r.runs])
    row("after step 0", ["–" if x.staleness_steady_mean is None else _num(x.staleness_steady_mean, 4)
                         for x in r.runs])
    row("staleness, most", [str(x.staleness_max) for x in r.runs])
    lines = ["steps/s: T over the run time; updates/s: gradients applied, N·T over it",
             "idle: waiting for the rule, and after a worker's last step until the run ends"]
    if r.bsp_relative_difference is not None:
        bsp = r.run("bsp")
        against = ("the slowest worker's time" if r.step_times.kind == "list"
                   else f"E\\[max of {r.workers} draws] ({escape(r.method)})")
        lines.append(f"BSP's mean step time {_time(bsp.mean_step_s)} against {against} "
                     f"{_time(r.expected_bsp_step_s)}: relative difference "
                     f"{_num(r.bsp_relative_difference, 3)}")
    notes = tuple(n for n in r.notes if not n.startswith("idle:"))
    return Group(head, Text(""), out, Text(""), markup("\n".join(lines))), notes
