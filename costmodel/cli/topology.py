"""Calculators of topology-aware all-reduce: multi-lane transfers, FlexReduce splits, RAT core traffic.

The hierarchical all-reduce itself is ``costmodel cost allreduce hierarchical --level ...``
(see :mod:`costmodel.cli.cost`); these commands answer the smaller questions of topology-aware all-reduce.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated

import typer

from costmodel.cli.options import Alpha, Bandwidth, Beta, Json, Lanes, Profile, option, size_option
from costmodel.cli.output import emit

app = typer.Typer()

Payload = Annotated[Fraction, size_option(
    "The payload to transfer: 1GB, 64MiB (bytes); split evenly over the lanes.")]
Vector = Annotated[Fraction, size_option("The vector each worker all-reduces: 100MB, 64MiB (bytes).")]


@app.command("multilane")
def multilane(
    size: Payload,
    lanes: Lanes = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Transfer time of a payload split over K parallel lanes, against one lane.

    --alpha 0 gives the ideal transfer service time (start-ups left out).

    Example: costmodel multilane -n 1GB --lanes 4 --alpha 0 --bandwidth 12.5GB/s
    """
    from costmodel.collectives.multilane import multilane as split
    from costmodel.links import resolve_link

    link = resolve_link(None, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    emit(split(size, lanes=lanes, link=link), as_json=as_json)


@app.command("flexreduce")
def flexreduce(
    groups: Annotated[str, option("--groups", metavar="S,S,...",
                                  help="Workers in each group, e.g. 2,3.")],
    entries: Annotated[int, option("--entries", metavar="E",
                                   help="Entries of the tensor.")],
    as_json: Json = False,
) -> None:
    """FlexReduce over groups of unequal size: entries each worker reduces and owns, and what crosses.

    Example: costmodel flexreduce --groups 2,3 --entries 12
    """
    from costmodel.collectives.multilane import flexreduce as split

    emit(split(entries, groups=groups), as_json=as_json)


@app.command("rat")
def rat(
    size: Vector,
    racks: Annotated[int, option("--racks", metavar="R", help="Racks (≥ 2).")],
    per_rack: Annotated[int, option("--per-rack", metavar="W",
                                    help="Workers in each rack.")],
    as_json: Json = False,
) -> None:
    """Bytes crossing the shared core: RAT (reduce inside each rack first) against a flat ring.

    Example: costmodel rat --racks 2 --per-rack 4 -n 100MB
    """
    from costmodel.collectives.multilane import rack_aware

    emit(rack_aware(size, racks=racks, per_rack=per_rack), as_json=as_json)
