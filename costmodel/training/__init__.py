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
  error feedback;
* :mod:`~costmodel.training.federated_pricing`: a federated round priced (bytes,
  participants, the expected round time exact and simulated);
* :mod:`~costmodel.training.federated_steps`: FedProx's local step, a SCAFFOLD
  round, FedNova's normalised average, exact;
* :mod:`~costmodel.training.synchrony`: BSP, SSP and ASP simulated (throughput,
  idle time, staleness);
* :mod:`~costmodel.training.privacy`: DP-SGD's (ε, δ) by RDP accounting, the
  noise for a target ε, DP-FedAvg's noise per client count.

>>> from costmodel.training import weighted_loss
>>> weighted_loss(sizes="600,300,100", losses="0.2,0.5,0.9").weighted
Fraction(9, 25)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel._lazy import lazy_exports

if TYPE_CHECKING:  # the names as the type checker sees them
    from costmodel.training.compression import (
        METHODS,
        Compression,
        CompressionMethod,
        EFStep,
        ErrorFeedbackRun,
        compress,
        error_feedback,
    )
    from costmodel.training.counts import (
        DTYPES,
        Dtype,
        parse_count,
        parse_dtype,
    )
    from costmodel.training.federated import (
        FedAvgRound,
        fedavg,
    )
    from costmodel.training.federated_pricing import (
        ClientTimes,
        FederatedRound,
        federated_round,
        parse_client_times,
    )
    from costmodel.training.federated_steps import (
        FedNovaRound,
        FedProxStep,
        ScaffoldRound,
        fednova_round,
        fedprox_step,
        scaffold_round,
    )
    from costmodel.training.loss import (
        WeightedGradient,
        WeightedLoss,
        sample_weights,
        weighted_gradient,
        weighted_loss,
    )
    from costmodel.training.memory import (
        FSDP_STRATEGIES,
        ZERO_COLLECTIVES,
        ZERO_STAGES,
        ActivationMemory,
        ActivationVariant,
        MemoryReport,
        ZeroMemory,
        activation_memory,
        training_memory,
        zero_memory,
    )
    from costmodel.training.privacy import (
        ClientNoiseTable,
        NoiseSolution,
        PrivacyAccount,
        client_noise,
        privacy_account,
        rdp_sampled_gaussian,
        solve_noise,
    )
    from costmodel.training.synchrony import (
        SspSweep,
        SyncRun,
        simulate_sync,
        ssp_sweep,
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

_EXPORTS: dict[str, str] = {
    "ActivationMemory": "costmodel.training.memory",
    "ActivationVariant": "costmodel.training.memory",
    "ClientNoiseTable": "costmodel.training.privacy",
    "ClientTimes": "costmodel.training.federated_pricing",
    "Compression": "costmodel.training.compression",
    "CompressionMethod": "costmodel.training.compression",
    "DTYPES": "costmodel.training.counts",
    "Dtype": "costmodel.training.counts",
    "EFStep": "costmodel.training.compression",
    "ErrorFeedbackRun": "costmodel.training.compression",
    "FedAvgRound": "costmodel.training.federated",
    "FedNovaRound": "costmodel.training.federated_steps",
    "FedProxStep": "costmodel.training.federated_steps",
    "FederatedRound": "costmodel.training.federated_pricing",
    "METHODS": "costmodel.training.compression",
    "MemoryReport": "costmodel.training.memory",
    "MoETraffic": "costmodel.training.traffic",
    "NoiseSolution": "costmodel.training.privacy",
    "PSTraffic": "costmodel.training.traffic",
    "PrivacyAccount": "costmodel.training.privacy",
    "ScaffoldRound": "costmodel.training.federated_steps",
    "Staleness": "costmodel.training.traffic",
    "SspSweep": "costmodel.training.synchrony",
    "SyncRun": "costmodel.training.synchrony",
    "TensorParallelTraffic": "costmodel.training.traffic",
    "WeightedGradient": "costmodel.training.loss",
    "WeightedLoss": "costmodel.training.loss",
    "FSDP_STRATEGIES": "costmodel.training.memory",
    "ZERO_COLLECTIVES": "costmodel.training.memory",
    "ZERO_STAGES": "costmodel.training.memory",
    "ZeroMemory": "costmodel.training.memory",
    "activation_memory": "costmodel.training.memory",
    "client_noise": "costmodel.training.privacy",
    "compress": "costmodel.training.compression",
    "error_feedback": "costmodel.training.compression",
    "fedavg": "costmodel.training.federated",
    "federated_round": "costmodel.training.federated_pricing",
    "fednova_round": "costmodel.training.federated_steps",
    "fedprox_step": "costmodel.training.federated_steps",
    "moe_traffic": "costmodel.training.traffic",
    "parse_client_times": "costmodel.training.federated_pricing",
    "parse_count": "costmodel.training.counts",
    "parse_dtype": "costmodel.training.counts",
    "privacy_account": "costmodel.training.privacy",
    "ps_traffic": "costmodel.training.traffic",
    "rdp_sampled_gaussian": "costmodel.training.privacy",
    "sample_weights": "costmodel.training.loss",
    "scaffold_round": "costmodel.training.federated_steps",
    "solve_noise": "costmodel.training.privacy",
    "staleness": "costmodel.training.traffic",
    "simulate_sync": "costmodel.training.synchrony",
    "ssp_sweep": "costmodel.training.synchrony",
    "tensor_parallel_traffic": "costmodel.training.traffic",
    "training_memory": "costmodel.training.memory",
    "weighted_gradient": "costmodel.training.loss",
    "weighted_loss": "costmodel.training.loss",
    "zero_memory": "costmodel.training.memory",
}
"""Each name the package exports and its module, imported when first used (a command needing one
module loads no other)."""

__all__ = [
    "DTYPES",
    "FSDP_STRATEGIES",
    "METHODS",
    "ZERO_COLLECTIVES",
    "ZERO_STAGES",
    "ActivationMemory",
    "ActivationVariant",
    "ClientNoiseTable",
    "ClientTimes",
    "Compression",
    "CompressionMethod",
    "Dtype",
    "EFStep",
    "ErrorFeedbackRun",
    "FedAvgRound",
    "FedNovaRound",
    "FedProxStep",
    "FederatedRound",
    "MemoryReport",
    "MoETraffic",
    "NoiseSolution",
    "PSTraffic",
    "PrivacyAccount",
    "ScaffoldRound",
    "SspSweep",
    "Staleness",
    "SyncRun",
    "TensorParallelTraffic",
    "WeightedGradient",
    "WeightedLoss",
    "ZeroMemory",
    "activation_memory",
    "client_noise",
    "compress",
    "error_feedback",
    "fedavg",
    "federated_round",
    "fednova_round",
    "fedprox_step",
    "moe_traffic",
    "parse_client_times",
    "parse_count",
    "parse_dtype",
    "privacy_account",
    "ps_traffic",
    "rdp_sampled_gaussian",
    "sample_weights",
    "scaffold_round",
    "simulate_sync",
    "solve_noise",
    "ssp_sweep",
    "staleness",
    "tensor_parallel_traffic",
    "training_memory",
    "weighted_gradient",
    "weighted_loss",
    "zero_memory",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
