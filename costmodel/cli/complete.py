"""Values for shell completion: collectives, algorithms, profiles, examples, exercises, graphs, schedules.

Each function is a Typer ``autocompletion`` callback, ``(ctx, incomplete)
-> names``; the registry it reads is imported inside it, so only a completion
request (``_COSTMODEL_COMPLETE`` set, see :mod:`costmodel.cli.shell`) pays for
the import, never a normal run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "algorithms",
    "algorithms_on_topology",
    "collectives",
    "examples",
    "exercises",
    "graph_lists",
    "graphs",
    "profiles",
    "schedules",
    "shells",
]

Completer = Callable[[Any, str], list[str]]


SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")
"""The shells ``completion`` writes a script for (``costmodel completion SHELL``)."""

def _starting(names: Iterable[str], incomplete: str) -> list[str]:
    return [n for n in dict.fromkeys(names) if n.startswith(incomplete)]


def collectives(ctx: Any, incomplete: str) -> list[str]:
    """The canonical collective names."""
    from costmodel.collectives._registry import COLLECTIVES

    return _starting(COLLECTIVES, incomplete)


def _algorithms(ctx: Any, incomplete: str, *, topology: bool) -> list[str]:
    from costmodel.collectives._registry import COLLECTIVES, collective
    from costmodel.collectives._registry import algorithms as registered
    from costmodel.errors import InputError

    try:
        specs = [collective(ctx.params["collective"])]
    except (KeyError, TypeError, InputError):  # no collective typed yet, or a wrong one: all of them
        specs = list(COLLECTIVES.values())
    names = [a.name for spec in specs for a in registered(spec.name)]
    if topology and any(spec.name == "allreduce" for spec in specs):
        from costmodel.collectives.hierarchical import ALGORITHMS

        names += ALGORITHMS
    return _starting(names, incomplete)


def algorithms(ctx: Any, incomplete: str) -> list[str]:
    """The algorithms of the collective already typed (of every collective before one is)."""
    return _algorithms(ctx, incomplete, topology=False)


def algorithms_on_topology(ctx: Any, incomplete: str) -> list[str]:
    """As :func:`algorithms`, with the hierarchical all-reduces (``cost`` and ``schedule`` take them)."""
    return _algorithms(ctx, incomplete, topology=True)


def profiles(ctx: Any, incomplete: str) -> list[str]:
    """The embedded profile presets (a TOML path is completed by the shell, not here)."""
    from costmodel.profiles import preset_names

    return _starting(preset_names(), incomplete)


def examples(ctx: Any, incomplete: str) -> list[str]:
    """The worked examples' names."""
    from costmodel.examples import all_examples

    return _starting((e.name for e in all_examples()), incomplete)


def exercises(ctx: Any, incomplete: str) -> list[str]:
    """The built-in exercises' ids."""
    from costmodel.exercises.bank import load_bank

    return _starting((e.id for e in load_bank()), incomplete)


def graphs(ctx: Any, incomplete: str) -> list[str]:
    """The graph kinds of consensus and gossip."""
    from costmodel.consensus.graphs import GRAPHS

    return _starting(GRAPHS, incomplete)


def graph_lists(ctx: Any, incomplete: str) -> list[str]:
    """A comma-separated list of graph kinds: the last one completed, the ones before kept."""
    from costmodel.consensus.graphs import GRAPHS

    done, _, last = incomplete.rpartition(",")
    head = f"{done}," if done else ""
    return [head + g for g in _starting(GRAPHS, last)]


def schedules(ctx: Any, incomplete: str) -> list[str]:
    """The pipeline schedules."""
    from costmodel.pipeline.orders import SCHEDULES

    return _starting(SCHEDULES, incomplete)


def shells(ctx: Any, incomplete: str) -> list[str]:
    """The shells ``completion`` writes a script for."""
    return _starting(SHELLS, incomplete)
