"""costmodel: exact α–β–γ cost models of the collectives of distributed training.

The public Python API.  Everything here is pure: functions take plain values
or small frozen dataclasses and return result dataclasses with ``to_dict()``.

>>> import costmodel
>>> link = costmodel.LinkParams.from_options(alpha="5us", beta="0.08ns/B")
>>> costmodel.crossover("allreduce", "rd", "rab", p=16, link=link).crossovers[0].n_bytes
Fraction(2000000, 17)
"""

from __future__ import annotations

from typing import Any

from costmodel.collectives._registry import COLLECTIVES, algorithms, collective, resolve
from costmodel.collectives.evaluate import bound, compare, cost
from costmodel.collectives.result import AlgorithmCost, CostTable, LowerBound
from costmodel.crossover import (
    BestRanges,
    Crossover,
    CrossoverInP,
    best,
    crossover,
    crossover_in_p,
)
from costmodel.errors import (
    CalibrationError,
    ConstraintError,
    CostmodelError,
    InputError,
    MissingDependency,
    ParseError,
    UnitError,
    UnknownNameError,
)
from costmodel.params import LinkParams
from costmodel.profiles import Profile, list_profiles, load_profile

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
    "InputError",
    "LinkParams",
    "LowerBound",
    "MissingDependency",
    "ParseError",
    "Profile",
    "UnitError",
    "UnknownNameError",
    "__version__",
    "algorithms",
    "best",
    "bound",
    "collective",
    "compare",
    "cost",
    "crossover",
    "crossover_in_p",
    "formula",
    "list_profiles",
    "load_profile",
    "resolve",
    "sweep",
]

__version__ = "0.1.0"


def sweep(collective: str, **kwargs: Any) -> Any:
    """Costs over grids of p and n as a pandas DataFrame; see :func:`costmodel.sweep.sweep`."""
    from costmodel.sweep import sweep as _sweep

    return _sweep(collective, **kwargs)


def formula(collective: str, algorithm: str, **kwargs: Any) -> Any:
    """The symbolic cost of an algorithm; see :func:`costmodel.collectives.formula.formula`."""
    from costmodel.collectives.formula import formula as _formula

    return _formula(collective, algorithm, **kwargs)
