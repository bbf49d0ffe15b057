"""The ``federated`` commands: a federated round priced (``federated round``).

Each command makes one call into :mod:`costmodel.training.federated_pricing` and emits the result; the
rendering is declared here and imports rich only when it runs.
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

__all__ = ["app", "federated_app"]

app = typer.Typer()
federated_app = typer.Typer(no_args_is_help=True, help="Federated learning priced: round.")
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
    head = markup(f"[bold]federated round[/bold] · {_NAMES[r.algorithm]} · {r.sampled} clients sampled · "
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
