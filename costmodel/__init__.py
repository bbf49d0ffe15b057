"""costmodel: exact α–β–γ cost models of the collectives of distributed training.

The public Python API.  Everything here is pure: functions take plain values
or small frozen dataclasses and return result dataclasses with ``to_dict()``.

>>> import costmodel
>>> link = costmodel.LinkParams.from_options(alpha="5us", beta="0.08ns/B")
>>> costmodel.crossover("allreduce", "rd", "rab", p=16, link=link).crossovers[0].n_bytes
Fraction(2000000, 17)
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it.  Submodules are imported on first use
# (PEP 562), so ``costmodel cost`` does not pay for crossover, profiles or
# sympy, and ``import costmodel`` stays cheap.
_EXPORTS = {
    "COLLECTIVES": "costmodel.collectives._registry",
    "algorithms": "costmodel.collectives._registry",
    "collective": "costmodel.collectives._registry",
    "resolve": "costmodel.collectives._registry",
    "bound": "costmodel.collectives.evaluate",
    "catalog": "costmodel.collectives.evaluate",
    "compare": "costmodel.collectives.evaluate",
    "cost": "costmodel.collectives.evaluate",
    "FlexReduceSplit": "costmodel.collectives.hierarchical",
    "HierarchicalCost": "costmodel.collectives.hierarchical",
    "HierarchicalTable": "costmodel.collectives.hierarchical",
    "MultiLaneTransfer": "costmodel.collectives.hierarchical",
    "RackTraffic": "costmodel.collectives.hierarchical",
    "compare_hierarchical": "costmodel.collectives.hierarchical",
    "flat_ring": "costmodel.collectives.hierarchical",
    "flexreduce": "costmodel.collectives.hierarchical",
    "hierarchical_cost": "costmodel.collectives.hierarchical",
    "multilane": "costmodel.collectives.hierarchical",
    "rack_aware": "costmodel.collectives.hierarchical",
    "AlgorithmCost": "costmodel.collectives.result",
    "CostTable": "costmodel.collectives.result",
    "LowerBound": "costmodel.collectives.result",
    "formula": "costmodel.collectives.formula",
    "Formula": "costmodel.collectives.formula",
    "BestRanges": "costmodel.crossovers",
    "Crossover": "costmodel.crossovers",
    "CrossoverInP": "costmodel.crossovers",
    "best": "costmodel.crossovers",
    "crossover": "costmodel.crossovers",
    "crossover_in_p": "costmodel.crossovers",
    "CalibrationError": "costmodel.errors",
    "ConstraintError": "costmodel.errors",
    "CostmodelError": "costmodel.errors",
    "InputError": "costmodel.errors",
    "MissingDependency": "costmodel.errors",
    "ParseError": "costmodel.errors",
    "UnitError": "costmodel.errors",
    "UnknownNameError": "costmodel.errors",
    "LinkParams": "costmodel.params",
    "Profile": "costmodel.profiles",
    "list_profiles": "costmodel.profiles",
    "load_profile": "costmodel.profiles",
    "sweep": "costmodel.sweeps",
    "Level": "costmodel.topology",
    "Topology": "costmodel.topology",
    "parse_level": "costmodel.topology",
}

__all__ = [
    "COLLECTIVES",
    "AlgorithmCost",
    "BestRanges",
    "CalibrationError",
    "ConstraintError",
    "CostTable",
    "CostmodelError",
    "Crossover",
    "CrossoverInP",
    "FlexReduceSplit",
    "Formula",
    "HierarchicalCost",
    "HierarchicalTable",
    "InputError",
    "Level",
    "LinkParams",
    "LowerBound",
    "MissingDependency",
    "MultiLaneTransfer",
    "ParseError",
    "Profile",
    "RackTraffic",
    "Topology",
    "UnitError",
    "UnknownNameError",
    "__version__",
    "algorithms",
    "best",
    "bound",
    "catalog",
    "collective",
    "compare",
    "compare_hierarchical",
    "cost",
    "crossover",
    "crossover_in_p",
    "flat_ring",
    "flexreduce",
    "formula",
    "hierarchical_cost",
    "list_profiles",
    "load_profile",
    "multilane",
    "parse_level",
    "rack_aware",
    "resolve",
    "sweep",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'costmodel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
