"""The registry of collectives and their algorithms, validated once when built.

Names typed by users go through :func:`collective` and :func:`resolve`, which
accept aliases (``all_reduce``, ``rd``, ``rab``) and suggest the closest name
on a typo; inside the code only canonical names are used.  The collectives' names
and aliases are declared in :mod:`costmodel.collective_names`, which the modules
below the models read too; :func:`_build` checks the registry holds exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable

from costmodel.collective_names import ALIASES, COLLECTIVE_NAMES
from costmodel.collectives import (
    _schemes,
    allgather,
    allreduce,
    alltoall,
    broadcast,
    gather,
    reduce,
    reduce_scatter,
    scatter,
)
from costmodel.collectives._record import Algorithm, Collective
from costmodel.errors import InputError
from costmodel.names import Names

__all__ = ["COLLECTIVES", "algorithms", "check_names", "collective", "record", "resolve"]

_MODULES = (allreduce, reduce_scatter, allgather, broadcast, reduce, alltoall, gather, scatter)


def _build() -> tuple[dict[str, Collective], dict[tuple[str, str], Algorithm], dict[str, Names]]:
    collectives: dict[str, Collective] = {}
    records: dict[tuple[str, str], Algorithm] = {}
    for module in _MODULES:
        spec: Collective = module.COLLECTIVE
        if spec.algorithms != module.ALGORITHMS:
            raise RuntimeError(f"{module.__name__}: COLLECTIVE.algorithms differs from ALGORITHMS")
        if spec.name in collectives:
            raise RuntimeError(f"collective {spec.name!r} registered twice")
        collectives[spec.name] = spec
        for algo in spec.algorithms:
            if algo.collective != spec.name:
                raise RuntimeError(f"{algo.name!r} in {module.__name__} says it is {algo.collective}")
            if algo.key in records:
                raise RuntimeError(f"algorithm {algo.key} registered twice")
            records[algo.key] = algo
    _check_references(records)
    if [(c.name, c.aliases) for c in collectives.values()] != list(ALIASES.items()):
        raise RuntimeError("the registered collectives and their aliases differ from "
                           "costmodel.collective_names.ALIASES")
    algorithm_names = {c.name: Names("algorithm", {a.name: a.aliases for a in c.algorithms})
                       for c in collectives.values()}
    return collectives, records, algorithm_names


def _check_references(records: dict[tuple[str, str], Algorithm]) -> None:
    """Every record cites a place in its source and refers only to records that exist."""
    for algo in records.values():
        if not algo.source.locator:
            raise RuntimeError(f"{algo.key} cites no place in its source")
        targets = [c.otherwise for c in algo.constraints if c.otherwise] + [algo.adapts or ""]
        for target in filter(None, targets):
            if (algo.collective, target) not in records:
                raise RuntimeError(f"{algo.key} refers to unknown record {target!r}")
        if algo.adapts and algo.constraints:
            raise RuntimeError(f"{algo.key} adapts another record and must hold for every p")


COLLECTIVES, _RECORDS, _ALGORITHM_NAMES = _build()


def collective(name: str) -> Collective:
    """The collective called *name* (aliases accepted).

    Raises
    ------
    UnknownNameError
        If no collective has that name; the message suggests the closest one.

    Examples
    --------
    >>> collective("all_reduce").name
    'allreduce'
    """
    return COLLECTIVES[COLLECTIVE_NAMES.resolve(name)]


def algorithms(name: str, *, adaptations: bool = False) -> tuple[Algorithm, ...]:
    """The algorithms of a collective; adaptations (``*-folded``) only if asked for.

    >>> [a.name for a in algorithms("reduce-scatter")]
    ['ring', 'recursive-halving']
    """
    spec = collective(name)
    return tuple(a for a in spec.algorithms if adaptations or a.adapts is None)


def resolve(collective_name: str, name: str) -> Algorithm:
    """The algorithm *name* of a collective (aliases accepted).

    Raises
    ------
    UnknownNameError
        With a did-you-mean hint, e.g. ``unknown algorithm 'rign' for allreduce;
        did you mean 'ring'?`` (the hierarchical all-reduces count among the
        names it suggests).
    InputError
        For a hierarchical all-reduce (``hierarchical``, ``smp``, ...): a known
        name, but not a record priced on one link; the message says how to
        cost it on a topology.

    Examples
    --------
    >>> resolve("allreduce", "rab").name
    'rabenseifner'
    """
    spec = collective(collective_name)
    canonical = _ALGORITHM_NAMES[spec.name].get(name)
    if canonical is None:
        choices = [a.name for a in spec.algorithms]
        if _schemes.is_hierarchical(name):
            if spec.name == "allreduce":
                raise InputError(_schemes.needs_topology(name))
            raise InputError(f"{name!r} is a hierarchical all-reduce; {spec.name} has no hierarchical "
                             f"algorithm: choose from {', '.join(choices)}")
        if spec.name == "allreduce":
            choices += _schemes.ALGORITHMS
        canonical = _ALGORITHM_NAMES[spec.name].resolve(name, choices=choices, context=f"for {spec.name}")
    return _RECORDS[(spec.name, canonical)]


def check_names(collective_name: str, names: Iterable[str] = (), *, topology: bool = False) -> None:
    """Check a collective's name and its algorithms' before anything else is looked at.

    Commands call it first, so that a typo is reported (with its did-you-mean)
    before a missing link or a bad option.  With *topology*, the hierarchical
    all-reduces are accepted too (``cost`` and ``schedule`` price them on
    ``--level``s).

    Raises
    ------
    UnknownNameError, InputError
        As :func:`collective` and :func:`resolve`.
    """
    spec = collective(collective_name)
    for name in names:
        try:
            resolve(spec.name, name)
        except InputError:
            if topology and spec.name == "allreduce" and _schemes.is_hierarchical(name):
                continue
            raise


def record(collective_name: str, name: str) -> Algorithm:
    """The record with canonical *name*; for code that follows a record's references."""
    return _RECORDS[(collective(collective_name).name, name)]
