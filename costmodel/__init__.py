"""costmodel: exact α–β–γ cost models of the collectives of distributed training.

The public Python API.  Everything here is pure: functions take plain values
or small frozen dataclasses and return result dataclasses with ``to_dict()``.

>>> import costmodel
>>> link = costmodel.link_from_options(alpha="5us", beta="0.08ns/B")
>>> costmodel.crossover("allreduce", "rd", "rab", p=16, link=link).crossovers[0].n_bytes
Fraction(2000000, 17)
"""

from __future__ import annotations

import sys
from typing import Any

from costmodel._codecache import install as _keep_dataclass_code
from costmodel._deferred import install as _defer_dataclass_methods
from costmodel._lazy import lazy_exports

_keep_dataclass_code()  # the code dataclasses compiles for this package is kept beside its bytecode
_defer_dataclass_methods()  # and compiled, or read, when a method is first used

# name -> module that defines it.  Submodules are imported on first use
# (PEP 562), so ``costmodel cost`` does not pay for crossover, profiles or
# sympy, and ``import costmodel`` stays cheap.
_EXPORTS = {
    "COLLECTIVES": "costmodel.collectives._registry",
    "algorithms": "costmodel.collectives._registry",
    "collective": "costmodel.collectives._registry",
    "resolve": "costmodel.collectives._registry",
    "bound": "costmodel.collectives.evaluate",
    "catalog": "costmodel.collectives.catalog",
    "compare": "costmodel.collectives.evaluate",
    "cost": "costmodel.collectives.evaluate",
    "FlexReduceSplit": "costmodel.collectives.multilane",
    "HierarchicalCost": "costmodel.collectives.hierarchical",
    "HierarchicalTable": "costmodel.collectives.hierarchical",
    "MultiLaneTransfer": "costmodel.collectives.multilane",
    "RackTraffic": "costmodel.collectives.multilane",
    "compare_hierarchical": "costmodel.collectives.hierarchical",
    "flat_ring": "costmodel.collectives.hierarchical",
    "flexreduce": "costmodel.collectives.multilane",
    "hierarchical_cost": "costmodel.collectives.hierarchical",
    "multilane": "costmodel.collectives.multilane",
    "rack_aware": "costmodel.collectives.multilane",
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
    "LinkSegment": "costmodel.params",
    "PiecewiseLink": "costmodel.params",
    "combine_link": "costmodel.params",
    "as_link": "costmodel.links",
    "link_from_options": "costmodel.links",
    "resolve_link": "costmodel.links",
    "topology_from_options": "costmodel.links",
    "Profile": "costmodel.profiles",
    "list_profiles": "costmodel.profiles",
    "load_profile": "costmodel.profiles",
    "sweep": "costmodel.sweeps",
    "Level": "costmodel.topology",
    "Topology": "costmodel.topology",
    "topology_of": "costmodel.topology",
    "parse_level": "costmodel.topology",
    "Bubble": "costmodel.pipeline",
    "bubble": "costmodel.pipeline",
    "format_timeline": "costmodel.pipeline",
    "StepResult": "costmodel.step",
    "estimate_step": "costmodel.step",
    "AchievedFlops": "costmodel.step",
    "TransformerShape": "costmodel.step",
    "achieved_flops": "costmodel.step",
    "StepSweep": "costmodel.step",
    "sweep_step": "costmodel.step",
    "model_preset": "costmodel.describe",
    "load_model": "costmodel.describe",
    "list_models": "costmodel.describe",
    "read_hf_config": "costmodel.describe",
    "megatron_arguments": "costmodel.describe",
    "microbatches_for": "costmodel.describe",
    "data_parallel_for": "costmodel.describe",
    "plan": "costmodel.step",
    "Plan": "costmodel.step",
    "parse_count": "costmodel.training.counts",
    "parse_dtype": "costmodel.training.counts",
    "Dtype": "costmodel.training.counts",
    "DTYPES": "costmodel.training.counts",
    "weighted_loss": "costmodel.training.loss",
    "weighted_gradient": "costmodel.training.loss",
    "sample_weights": "costmodel.training.loss",
    "WeightedLoss": "costmodel.training.loss",
    "WeightedGradient": "costmodel.training.loss",
    "fedavg": "costmodel.training.federated",
    "FedAvgRound": "costmodel.training.federated",
    "training_memory": "costmodel.training.memory",
    "zero_memory": "costmodel.training.memory",
    "activation_memory": "costmodel.training.memory",
    "MemoryReport": "costmodel.training.memory",
    "ZeroMemory": "costmodel.training.memory",
    "ActivationMemory": "costmodel.training.memory",
    "ActivationVariant": "costmodel.training.memory",
    "ZERO_STAGES": "costmodel.training.memory",
    "ps_traffic": "costmodel.training.traffic",
    "tensor_parallel_traffic": "costmodel.training.traffic",
    "moe_traffic": "costmodel.training.traffic",
    "staleness": "costmodel.training.traffic",
    "PSTraffic": "costmodel.training.traffic",
    "TensorParallelTraffic": "costmodel.training.traffic",
    "MoETraffic": "costmodel.training.traffic",
    "Staleness": "costmodel.training.traffic",
    "compress": "costmodel.training.compression",
    "error_feedback": "costmodel.training.compression",
    "Compression": "costmodel.training.compression",
    "CompressionMethod": "costmodel.training.compression",
    "EFStep": "costmodel.training.compression",
    "ErrorFeedbackRun": "costmodel.training.compression",
    "METHODS": "costmodel.training.compression",
    "dsgd_step": "costmodel.consensus.gossip",
    "gossip_vs_allreduce": "costmodel.consensus.gossip",
    "ConsensusRun": "costmodel.consensus.gossip",
    "DSGDStep": "costmodel.consensus.gossip",
    "GossipComparison": "costmodel.consensus.gossip",
    "spectrum": "costmodel.consensus.spectral",
    "rounds_to_target": "costmodel.consensus.spectral",
    "Spectrum": "costmodel.consensus.spectral",
    "mixing_matrix": "costmodel.consensus.mixing",
    "Mixing": "costmodel.consensus.mixing",
    "Graph": "costmodel.consensus.graphs",
}

__all__ = [
    "COLLECTIVES",
    "DTYPES",
    "METHODS",
    "ZERO_STAGES",
    "AchievedFlops",
    "ActivationMemory",
    "ActivationVariant",
    "AlgorithmCost",
    "BestRanges",
    "Bubble",
    "CalibrationError",
    "Compression",
    "CompressionMethod",
    "ConsensusRun",
    "ConstraintError",
    "CostTable",
    "CostmodelError",
    "Crossover",
    "CrossoverInP",
    "DSGDStep",
    "Dtype",
    "EFStep",
    "ErrorFeedbackRun",
    "FedAvgRound",
    "FlexReduceSplit",
    "Formula",
    "GossipComparison",
    "Graph",
    "HierarchicalCost",
    "HierarchicalTable",
    "InputError",
    "Level",
    "LinkParams",
    "LinkSegment",
    "LowerBound",
    "MemoryReport",
    "MissingDependency",
    "Mixing",
    "MoETraffic",
    "MultiLaneTransfer",
    "PSTraffic",
    "ParseError",
    "PiecewiseLink",
    "Plan",
    "Profile",
    "RackTraffic",
    "Spectrum",
    "Staleness",
    "StepResult",
    "StepSweep",
    "TensorParallelTraffic",
    "Topology",
    "TransformerShape",
    "UnitError",
    "UnknownNameError",
    "WeightedGradient",
    "WeightedLoss",
    "ZeroMemory",
    "__version__",
    "achieved_flops",
    "activation_memory",
    "algorithms",
    "as_link",
    "best",
    "bound",
    "bubble",
    "catalog",
    "collective",
    "combine_link",
    "compare",
    "compare_hierarchical",
    "compress",
    "cost",
    "crossover",
    "crossover_in_p",
    "data_parallel_for",
    "dsgd_step",
    "error_feedback",
    "estimate_step",
    "fedavg",
    "flat_ring",
    "flexreduce",
    "format_timeline",
    "formula",
    "gossip_vs_allreduce",
    "hierarchical_cost",
    "link_from_options",
    "list_models",
    "list_profiles",
    "load_model",
    "load_profile",
    "megatron_arguments",
    "microbatches_for",
    "mixing_matrix",
    "model_preset",
    "moe_traffic",
    "multilane",
    "parse_count",
    "parse_dtype",
    "parse_level",
    "plan",
    "ps_traffic",
    "rack_aware",
    "read_hf_config",
    "resolve",
    "resolve_link",
    "rounds_to_target",
    "sample_weights",
    "spectrum",
    "staleness",
    "step",
    "sweep",
    "sweep_step",
    "tensor_parallel_traffic",
    "topology_from_options",
    "topology_of",
    "training_memory",
    "weighted_gradient",
    "weighted_loss",
    "zero_memory",
]

__version__ = "0.1.0"


_PACKAGES = frozenset({"step"})
"""Subpackages exported as they are: ``costmodel.step(...)`` prices a training step (the package is
callable; see :mod:`costmodel.step`)."""


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, packages=_PACKAGES)


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext costmodel``: results display as the command line shows them
    (:func:`costmodel.notebook.register`)."""
    from costmodel.notebook import register

    register(shell)


def _in_ipython() -> None:
    """In a notebook or the IPython shell, results display as the command line shows them."""
    from costmodel.notebook import register

    register()


if "IPython" in sys.modules:
    _in_ipython()
