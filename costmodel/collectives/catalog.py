"""The catalog: every registered algorithm with its formula, and the hierarchical all-reduces' on request.

It sits above both :mod:`~costmodel.collectives.evaluate` (the flat records'
formulas as text) and :mod:`~costmodel.collectives.hierarchical_formula` (the
compositions' closed forms, which read the flat formulas from ``evaluate``),
so that neither needs the other back.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005 (the flat records
   and their lower bounds).
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives._registry import algorithms as registered
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._schemes import ALGORITHMS
from costmodel.collectives.evaluate import bound_text, coefficient_text, text_formula
from costmodel.collectives.result import Catalog, CatalogEntry

__all__ = ["catalog"]


def catalog(collective: str | None = None, *, adaptations: bool = False,
            hierarchical: bool = False) -> Catalog:
    """The registered algorithms (of one collective, or all), with their formulas.

    With *hierarchical*, the hierarchical all-reduces' compositions and closed
    forms too (where all-reduce is listed; they take sympy, about 0.4 s).

    >>> [e.algorithm for e in catalog("alltoall").entries]
    ['pairwise', 'bruck']
    """
    specs = [find_collective(collective)] if collective else list(COLLECTIVES.values())
    entries = tuple(
        CatalogEntry(
            collective=spec.name, algorithm=a.name, aliases=a.aliases, summary=a.summary,
            formula=text_formula(a), rounds=coefficient_text(a.rounds or a.latency, a),
            bytes_sent=coefficient_text(a.bytes_sent, a), adapts=a.adapts, source=a.source, notes=a.notes,
            constraints=tuple(f"{c.name} (else {c.otherwise or 'refused'})" for c in a.constraints),
        )
        for spec in specs
        for a in registered(spec.name, adaptations=adaptations)
    )
    bounds = {s.name: bound_text(s.name) for s in specs}
    composed: tuple[Any, ...] = ()
    if hierarchical and any(s.name == "allreduce" for s in specs):
        from costmodel.collectives.hierarchical_formula import hierarchical_formula  # sympy, on request

        composed = tuple(hierarchical_formula(name) for name in ALGORITHMS)
    return Catalog(meanings={s.name: s.meaning_of_n for s in specs}, bounds=bounds, entries=entries,
                   hierarchical=composed)
