"""Builders by name: the ``schedule`` field of a formula record names one of these.

A builder is ``build(p, *, root=0, k=None) -> Schedule`` for one collective;
it returns the schedule the record realises at that p (the folded variant
when p is not a power of two, for the recursive algorithms).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from costmodel.errors import UnknownNameError
from costmodel.schedules import alltoall, chain, double_tree, recursive, ring, trees
from costmodel.schedules.model import Schedule

__all__ = ["BUILDERS", "build"]

Builder = Callable[..., Schedule]

BUILDERS: dict[str, tuple[str, Builder]] = {}
"""name -> (collective, builder)."""

for _module in (ring, trees, chain, alltoall, recursive, double_tree):
    for _name, (_collective, _builder) in _module.BUILDERS.items():
        if _name in BUILDERS:
            raise RuntimeError(f"schedule builder {_name!r} defined twice")
        BUILDERS[_name] = (_collective, _builder)


def build(name: str, collective: str, *, p: int, **options: Any) -> Schedule:
    """The schedule *name* of *collective* at *p* (options: ``root``, ``k``)."""
    entry = BUILDERS.get(name)
    if entry is None or entry[0] != collective:
        choices = sorted(n for n, (c, _) in BUILDERS.items() if c == collective)
        raise UnknownNameError("schedule", name, choices, context=f"for {collective}")
    return entry[1](p, **options)
