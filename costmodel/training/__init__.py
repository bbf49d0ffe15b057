"""Training-level models: weighted objectives, FedAvg, memory, traffic patterns and compression.

Each module holds one topic and lists its references; every result is a
frozen dataclass with ``to_dict()`` (SI units in the keys, exact values where
the inputs are exact).

* :mod:`~costmodel.training.counts`: ``70B``-style counts and dtypes;
* :mod:`~costmodel.training.loss`: the sample-weighted loss and gradient;
* :mod:`~costmodel.training.federated`: federated averaging with dropped clients;
* :mod:`~costmodel.training.memory`: data-parallel weights, ZeRO, activations;
* :mod:`~costmodel.training.traffic`: parameter servers, tensor and expert
  parallelism, staleness;
* :mod:`~costmodel.training.compression`: compressed payloads, time saved,
  error feedback.

>>> from costmodel.training import weighted_loss
>>> weighted_loss(sizes="600,300,100", losses="0.2,0.5,0.9").weighted
Fraction(9, 25)
"""

from __future__ import annotations

from costmodel.training.compression import (
    METHODS,
    Compression,
    CompressionMethod,
    EFStep,
    ErrorFeedbackRun,
    compress,
    error_feedback,
)
from costmodel.training.counts import DTYPES, Dtype, parse_count, parse_dtype
from costmodel.training.federated import FedAvgRound, fedavg
from costmodel.training.loss import (
    WeightedGradient,
    WeightedLoss,
    sample_weights,
    weighted_gradient,
    weighted_loss,
)
from costmodel.training.memory import (
    ZERO_STAGES,
    ActivationMemory,
    ActivationVariant,
    MemoryReport,
    ZeroMemory,
    activation_memory,
    training_memory,
    zero_memory,
)
from costmodel.training.traffic import (
    MoETraffic,
    PSTraffic,
    Staleness,
    TensorParallelTraffic,
    moe_traffic,
    ps_traffic,
    staleness,
    tensor_parallel_traffic,
)

__all__ = [
    "DTYPES",
    "METHODS",
    "ZERO_STAGES",
    "ActivationMemory",
    "ActivationVariant",
    "Compression",
    "CompressionMethod",
    "Dtype",
    "EFStep",
    "ErrorFeedbackRun",
    "FedAvgRound",
    "MemoryReport",
    "MoETraffic",
    "PSTraffic",
    "Staleness",
    "TensorParallelTraffic",
    "WeightedGradient",
    "WeightedLoss",
    "ZeroMemory",
    "activation_memory",
    "compress",
    "error_feedback",
    "fedavg",
    "moe_traffic",
    "parse_count",
    "parse_dtype",
    "ps_traffic",
    "sample_weights",
    "staleness",
    "tensor_parallel_traffic",
    "training_memory",
    "weighted_gradient",
    "weighted_loss",
    "zero_memory",
]
