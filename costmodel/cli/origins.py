"""Where a setting the user did not type came from, in the words of its source.

``--model``, ``--hf-config`` and ``--megatron`` set values the command line never names: a message
about ``kv_groups=8`` read from a Llama ``config.json`` should say ``num_key_value_heads = 8 in
config.json``, not ``--kv-groups 8``, an option the user never gave.  :func:`origins` reads the
descriptions the command line named again (only when a message needs them: an error's, or a
command's first note, :func:`costmodel.cli.output.worded`) and returns,
for each parameter one of them set, the value as the library's messages print it and the words that
name it where it was written; :func:`costmodel.cli.flags.cli_message` puts those words in place of a
``name=value`` whose value is that one, where the user did not type the option themselves.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["HF_KEYS", "Origins", "origins"]

Origins = Mapping[str, tuple[str, str]]
"""A parameter → (its value as a message prints it, the words that name it at its source)."""

HF_KEYS = {
    "layers": ("num_hidden_layers", "n_layer"),
    "hidden": ("hidden_size", "n_embd", "n_embed"),
    "heads": ("num_attention_heads", "n_head"),
    "kv_groups": ("num_key_value_heads", "num_kv_heads"),
    "head_dim": ("head_dim", "qk_nope_head_dim"),
    "vocabulary": ("vocab_size",),
    "sequence": ("max_position_embeddings", "n_positions"),
    "experts": ("num_local_experts", "n_routed_experts", "num_experts"),
    "top_k": ("num_experts_per_tok",),
    "shared_experts": ("n_shared_experts",),
    "dense_layers": ("first_k_dense_replace",),
    "window": ("sliding_window",),
    "kv_rank": ("kv_lora_rank",),
    "q_rank": ("q_lora_rank",),
    "rope_head_dim": ("qk_rope_head_dim",),
    "value_head_dim": ("v_head_dim",),
    "mtp_layers": ("num_nextn_predict_layers",),
}
"""The shape keywords a ``config.json`` gives under a key of its own, and the keys (with the other
spellings :mod:`costmodel.describe.hf` reads) that give each."""

_MEGATRON = {
    "tp": "tensor-model-parallel-size", "pp": "pipeline-model-parallel-size", "cp": "context-parallel-size",
    "ep": "expert-model-parallel-size", "micro_batch": "micro-batch-size", "layers": "num-layers",
    "hidden": "hidden-size", "heads": "num-attention-heads", "sequence": "seq-length",
    "experts": "num-experts", "top_k": "moe-router-topk", "kv_groups": "num-query-groups",
    "kv_rank": "kv-lora-rank", "q_rank": "q-lora-rank", "rope_head_dim": "qk-pos-emb-head-dim",
    "value_head_dim": "v-head-dim", "head_dim": "qk-head-dim", "vocabulary": "padded-vocab-size",
    "sequence_parallel": "sequence-parallel", "mtp_layers": "mtp-num-layers",
}
"""The settings and shape keywords Megatron-LM's arguments give, by the argument that gives each."""


def _shown(value: Any) -> str:
    """*value* as the library's messages print it after ``name=``."""
    return str(value)


def _model(name: str) -> dict[str, tuple[str, str]]:
    from costmodel.describe.models import load_model

    found = load_model(name)
    where = f"model file {name}" if "/" in name or "\\" in name or name.endswith(".toml") else f"model {name}"
    return {key: (_shown(value), f"{key} = {_shown(value)} of {where}")
            for key, value in {**found.shape, **found.settings}.items()
            if isinstance(value, (int, str)) and not isinstance(value, bool)}


def _hf(path: str) -> dict[str, tuple[str, str]]:
    from costmodel._files import read_text
    from costmodel.describe.hf import MAX_BYTES as HF_MAX_BYTES
    from costmodel.describe.hf import read_hf_config

    described = read_hf_config(path)
    shape = described.shape
    source = Path(described.source)
    config = json.loads(read_text(source, what="the Hugging Face config", limit=HF_MAX_BYTES))
    inner = config.get("text_config") if isinstance(config.get("text_config"), dict) else None
    out = {}
    for name, keys in HF_KEYS.items():
        if name not in shape:
            continue
        value = _shown(shape[name])
        for key in keys:
            if inner is not None and key in inner:
                out[name] = (value, f"text_config.{key} = {value} in {source.name}")
                break
            if key in config:
                out[name] = (value, f"{key} = {value} in {source.name}")
                break
    return out


def _megatron(text: str) -> dict[str, tuple[str, str]]:
    from costmodel.describe.megatron import megatron_arguments

    read = megatron_arguments(text)
    given = {**read.shape, **read.settings}
    written = read.written
    out = {}
    for name, argument in _MEGATRON.items():
        if name not in given or argument not in written:
            continue
        value = given[name]
        words = f"--{argument} (in --megatron)" if value is True else f"--{argument} {value} (in --megatron)"
        out[name] = (_shown(value), words)
    for name, switch in _MEGATRON_SWITCHED.items():  # settings a switch gives, not a value of their own
        if name in given and switch in written:
            out[name] = (_shown(given[name]), f"--{switch} (in --megatron)")
    if "recompute" in given and "recompute-granularity" in written:  # the granularity wins, as it is read
        out["recompute"] = (_shown(given["recompute"]),
                            f"--recompute-granularity {given['recompute']} (in --megatron)")
    return out


_MEGATRON_SWITCHED = {"recompute": "recompute-activations", "param_gather": "overlap-param-gather",
                      "overlap_grad_reduce": "overlap-grad-reduce"}
"""The settings Megatron-LM's switches give (selective recomputation, the overlaps), by the switch that gives
each (not the distributed optimizer's ZeRO 1: messages name zero=1 as a condition, not as the run's
value)."""


def origins(given: Mapping[str, tuple[str, tuple[str, ...]]]) -> dict[str, tuple[str, str]]:
    """The parameters that ``--model``, ``--hf-config`` and ``--megatron`` set, as :data:`Origins`, from the
    options the user typed (:func:`costmodel.cli.flags.typed_options`); ``--megatron``'s win over the
    model's, as the commands merge them.  A description that cannot be read gives nothing (its own error
    is the one the user sees)."""
    from costmodel.errors import CostmodelError

    out: dict[str, tuple[str, str]] = {}
    readers = (("--model", _model), ("--hf-config", _hf), ("--megatron", _megatron))
    for option, read in readers:
        values = given.get(option, ("", ()))[1]
        if not values:
            continue
        try:
            out.update(read(values[-1]))
        except (CostmodelError, OSError, ValueError):
            continue
    return out
