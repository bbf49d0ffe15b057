"""Which function renders a result: one registry, declared with :func:`renders`, loaded lazily.

``render(result)`` returns ``(renderable, notes)``; :func:`~costmodel.cli.output.emit` prints the
renderable and then the notes on stdout, fitted to the width.  A renderer is declared in one way
only, next to the code that knows the result::

    @renders("costmodel.collectives.result.CostTable")
    def _(table: CostTable) -> Rendered: ...

A result that is also a document of its own (``--markdown``, ``--latex``) declares that form's
renderer the same way, ``@renders("costmodel.collectives.result.Catalog", form="markdown")``,
returning the document's text, which ``emit`` prints as it is.

The type is named, not imported, and the module holding its renderer is imported only when a
result of that type is first shown: :data:`RENDERED_IN` says where the renderers of the core's
results live; a type the command line defines itself is rendered by its own module, loaded already.
So showing a cost table loads neither the topology, crossover and profile code nor the renderers
of the other commands (start-up time, docs/performance.md).  This module imports no rich.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["FORMS", "RENDERED_IN", "Rendered", "render", "renders", "watch"]

Rendered = tuple[Any, tuple[str, ...]]
Renderer = Callable[[Any], Any]
_R = TypeVar("_R", bound=Callable[..., Any])

FORMS = ("text", "markdown", "latex")
"""The forms a result is rendered in: the human rendering (a :data:`Rendered`), or a document."""

_IN: dict[str, tuple[str, ...]] = {
    "costmodel.cli.render_cost": (
        "costmodel.collectives.result.CostTable", "costmodel.collectives.result.AlgorithmCost",
        "costmodel.collectives.result.LowerBound",
        "costmodel.collectives.result.Catalog", "costmodel.collectives.formula.Formula",
        "costmodel.collectives.hierarchical_formula.HierarchicalFormula",
        "costmodel.collectives.hierarchical.HierarchicalTable",
        "costmodel.collectives.multilane.MultiLaneTransfer",
        "costmodel.collectives.multilane.FlexReduceSplit",
        "costmodel.collectives.multilane.RackTraffic",
        "costmodel.crossovers.Crossover", "costmodel.crossovers.CrossoverInP",
        "costmodel.crossovers.BestRanges", "costmodel.profiles.ProfileList"),
    "costmodel.cli.render_schedule": ("costmodel.walkthrough.ScheduleReport",),
    "costmodel.cli.consensus": (
        "costmodel.consensus.gossip.ConsensusRun", "costmodel.consensus.gossip.DSGDStep",
        "costmodel.consensus.gossip.GossipComparison"),
    "costmodel.cli.pipeline": ("costmodel.pipeline.result.Bubble",),
    "costmodel.cli.privacy": (
        "costmodel.training.privacy.PrivacyAccount", "costmodel.training.privacy.NoiseSolution",
        "costmodel.training.privacy.ClientNoiseTable"),
    "costmodel.cli.federated": (
        "costmodel.training.federated_pricing.FederatedRound",
        "costmodel.training.federated_steps.FedProxStep", "costmodel.training.federated_steps.ScaffoldRound",
        "costmodel.training.federated_steps.FedNovaRound", "costmodel.training.synchrony.SyncRun"),
    "costmodel.cli.step": ("costmodel.step.model.StepResult", "costmodel.step.sweep.StepSweep"),
    "costmodel.cli.plan": ("costmodel.step.planner.Plan",),
    "costmodel.cli.flops": ("costmodel.step.flops.AchievedFlops",),
    "costmodel.cli.training": (
        "costmodel.training.loss.WeightedLoss", "costmodel.training.loss.WeightedGradient",
        "costmodel.training.federated.FedAvgRound", "costmodel.training.memory.MemoryReport",
        "costmodel.training.traffic.PSTraffic", "costmodel.training.traffic.TensorParallelTraffic",
        "costmodel.training.traffic.MoETraffic", "costmodel.training.traffic.Staleness",
        "costmodel.training.compression.Compression", "costmodel.training.compression.ErrorFeedbackRun"),
    "costmodel.cli.teaching": (
        "costmodel.examples.work.Worked", "costmodel.exercises.grading.GradeReport",
        "costmodel.exercises.validate.ReadBack"),
    "costmodel.cli.assignment": ("costmodel.exercises.gradebook.ClassReport",),
    "costmodel.cli.calibrate": ("costmodel.calibration.report.CalibrationReport",),
    "costmodel.cli.nccl": (
        "costmodel.nccl.compare.Comparison", "costmodel.nccl.check.Check",
        "costmodel.nccl.reports.Predicted", "costmodel.nccl.reports.Ranges",
        "costmodel.nccl.reports.Calibrated", "costmodel.nccl.reports.PresetText",
        "costmodel.nccl.reports.PresetList"),
    "costmodel.cli.gpus": ("costmodel.gpus.GPUList", "costmodel.gpus.GPU", "costmodel.gpus.GemmOnGpu"),
    "costmodel.cli.models": ("costmodel.describe.models.ModelList",
                             "costmodel.describe.models.ModelDescription"),
    "costmodel.cli.validate": ("costmodel.validation.Validation",),
}

RENDERED_IN: dict[str, str] = {name: module for module, names in _IN.items() for name in names}
"""The module declaring the renderer of each result type of the core, by the type's full name."""

_BY_NAME: dict[str, dict[str, Renderer]] = {}
"""The renderers declared so far, by the full name of the type they render, then by form."""


def renders(name: str, form: str = "text") -> Callable[[_R], _R]:
    """Declare the decorated function the renderer of the type called *name* (``module.Class``) in
    *form* (one of :data:`FORMS`).

    A type of the core is also listed in :data:`RENDERED_IN` (a test checks both ways); a type the
    command line defines is rendered by the module defining it.
    """
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}")

    def register(fn: _R) -> _R:
        new = name not in _BY_NAME and name not in RENDERED_IN
        _BY_NAME.setdefault(name, {})[form] = fn
        for watcher in _WATCHERS if new else ():
            watcher(name)
        return fn

    return register


_WATCHERS: list[Callable[[str], None]] = []


def watch(watcher: Callable[[str], None]) -> None:
    """Call *watcher* with the full name of every type that has a renderer: now for those of
    :data:`RENDERED_IN` and those declared so far, later for each type a module declares a renderer
    for when it is imported (a type the command line defines).  A notebook registers its display
    formatters so (:mod:`costmodel.notebook`), without importing a renderer.
    """
    _WATCHERS.append(watcher)
    for name in dict.fromkeys([*RENDERED_IN, *_BY_NAME]):
        watcher(name)


def _name(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def render(result: Any, form: str = "text") -> Any:
    """Render a core result in *form* with the renderer declared for its type (or the nearest base
    type that has one), importing the module that declares it on first use.

    The human rendering (``"text"``) is a :data:`Rendered`; a document form is its text.
    """
    for kind in type(result).__mro__:
        name = _name(kind)
        if name not in _BY_NAME and name in RENDERED_IN:
            importlib.import_module(RENDERED_IN[name])
        found = _BY_NAME.get(name, {}).get(form)
        if found is not None:
            return found(result)
    raise TypeError(f"no rendering for {type(result).__name__}" + ("" if form == "text" else f" as {form}"))
