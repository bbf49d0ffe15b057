"""The names of the collectives and their aliases, declared once, below everything that reads them.

The registry (:mod:`costmodel.collectives._registry`) gives each collective the aliases
:data:`ALIASES` lists (and checks it registers exactly these collectives, in this order); a profile
file (:mod:`costmodel.profiles`) and a benchmark log (:mod:`costmodel.calibration.logs`) name
collectives too, plus point-to-point (:data:`PT2PT`), and read them with
:func:`canonical_collective` without loading the models.

>>> canonical_collective("all_reduce"), canonical_collective("p2p")
('allreduce', 'pt2pt')
"""

from __future__ import annotations

from costmodel.errors import UnknownNameError
from costmodel.names import Names

__all__ = ["ALIASES", "COLLECTIVE_NAMES", "PT2PT", "PT2PT_NAMES", "canonical_collective"]

ALIASES: dict[str, tuple[str, ...]] = {
    "allreduce": ("all-reduce", "all_reduce", "ar"),
    "reduce-scatter": ("reducescatter", "reduce_scatter", "rs"),
    "allgather": ("all-gather", "all_gather", "ag"),
    "broadcast": ("bcast",),
    "reduce": ("reduce-to-one",),
    "alltoall": ("all-to-all", "all_to_all", "a2a"),
    "gather": (),
    "scatter": (),
}
"""Each collective the registry models (in the registry's order) and its aliases."""

COLLECTIVE_NAMES = Names("collective", ALIASES)
"""The collectives' names and aliases, resolved as every name a user types is."""

PT2PT = "pt2pt"
"""The collective name of point-to-point logs (osu_latency, osu_bw, nccl-tests sendrecv_perf)."""

PT2PT_NAMES = Names("collective", {PT2PT: ("p2p", "point-to-point", "pointtopoint", "sendrecv", "send-recv",
                                           "pingpong")})
"""The names of point-to-point logs (the collectives' own names are :data:`COLLECTIVE_NAMES`)."""


def canonical_collective(name: str) -> str:
    """The canonical collective name of *name*, accepting aliases and ``pt2pt``.

    >>> canonical_collective("Reduce_Scatter"), canonical_collective("sendrecv")
    ('reduce-scatter', 'pt2pt')

    Raises
    ------
    UnknownNameError
        With a did-you-mean hint.
    """
    if PT2PT_NAMES.get(name) is not None:
        return PT2PT
    found = COLLECTIVE_NAMES.get(name)
    if found is None:
        raise UnknownNameError("collective", name, [*COLLECTIVE_NAMES, PT2PT])
    return found
