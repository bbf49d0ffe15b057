"""Models as people describe them: presets, model files, Hugging Face ``config.json``, Megatron-LM's
arguments, and a global batch.

Each reader returns plain keyword arguments: a :class:`~costmodel.step.TransformerShape`'s (``shape``)
and the step settings the description implies (``settings``), so that the command line and Python
merge them the same way, explicit values last:

* :func:`model_preset`, :func:`load_model`, :func:`list_models` (:mod:`costmodel.describe.models`):
  GPT-3 175B, Llama 3 8B/70B/405B, Mixtral 8x7B, DeepSeekMoE 16B, each with its source, and a user's
  model file of the same TOML format;
* :func:`read_hf_config` (:mod:`costmodel.describe.hf`): the standard keys of a Hugging Face
  ``config.json``;
* :func:`megatron_arguments` (:mod:`costmodel.describe.megatron`): a Megatron-LM argument string;
* :func:`microbatches_for` and :func:`data_parallel_for` (:mod:`costmodel.describe.batch`): the
  micro-batches per replica a global batch gives, and the replicas a GPU count gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel._lazy import lazy_exports

if TYPE_CHECKING:
    from costmodel.describe.batch import data_parallel_for, microbatches_for
    from costmodel.describe.hf import read_hf_config
    from costmodel.describe.megatron import MegatronArguments, megatron_arguments
    from costmodel.describe.models import (
        ModelDescription,
        ModelList,
        build_shape,
        list_models,
        load_model,
        model_preset,
    )

_EXPORTS: dict[str, str] = {
    "MegatronArguments": "costmodel.describe.megatron",
    "ModelDescription": "costmodel.describe.models",
    "ModelList": "costmodel.describe.models",
    "build_shape": "costmodel.describe.models",
    "data_parallel_for": "costmodel.describe.batch",
    "list_models": "costmodel.describe.models",
    "load_model": "costmodel.describe.models",
    "megatron_arguments": "costmodel.describe.megatron",
    "microbatches_for": "costmodel.describe.batch",
    "model_preset": "costmodel.describe.models",
    "read_hf_config": "costmodel.describe.hf",
}

__all__ = [
    "MegatronArguments",
    "ModelDescription",
    "ModelList",
    "build_shape",
    "data_parallel_for",
    "list_models",
    "load_model",
    "megatron_arguments",
    "microbatches_for",
    "model_preset",
    "read_hf_config",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
