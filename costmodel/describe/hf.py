"""A Hugging Face ``config.json`` read into a model description.

The standard keys of ``transformers``' model configurations (``PretrainedConfig`` and the decoder
families' ``LlamaConfig``, ``MistralConfig``, ``MixtralConfig``, ``Qwen2Config``, DeepSeek's
configuration), each type-checked:

======================  ===================================  ==========================================
key                     shape keyword                        note
======================  ===================================  ==========================================
hidden_size             hidden                               required
num_hidden_layers       layers                               required
num_attention_heads     heads                                required
num_key_value_heads     kv_groups                            default: the heads (multi-head attention)
head_dim                head_dim                             default: hidden/heads (Gemma 2 and 3,
                                                             Mistral NeMo, Qwen3 give their own)
intermediate_size       ffn_factor = intermediate / hidden   required (exact)
vocab_size              vocabulary                           required
max_position_embeddings sequence                             the default sequence; *sequence* overrides
tie_word_embeddings     tied_embeddings                      default true (``PretrainedConfig``'s)
hidden_act,             gated                                the SwiGLU families (Llama, Mistral,
architectures                                                Mixtral, Qwen, DeepSeek, Gemma, Phi-3) or
                                                             a ``silu`` activation are gated
num_local_experts,      experts                              Mixtral's, DeepSeek's (and Qwen-MoE's)
n_routed_experts,                                            routed experts
num_experts
num_experts_per_tok     top_k
moe_intermediate_size   expert_ffn_factor                    default: intermediate_size (Mixtral)
n_shared_experts        shared_experts                       default 0
first_k_dense_replace   dense_layers                         default 0
attention_dropout, ...  the step's dropout                   off when every dropout rate given is 0
======================  ===================================  ==========================================

JSON is parsed by :mod:`json` (never evaluated); other keys (``_source``, ``rope_theta``, ...) are
ignored, and an architecture the table does not name is read when its keys are there, except that a key
that changes the architecture in a way the shape does not model (DeepSeek's latent attention and
multi-token prediction, Qwen-MoE's shared expert of its own width, sliding-window attention) is named
in a note (:data:`_UNMODELLED`).  A key missing or of the wrong type is one error naming the file and
the key (``config.json: hidden_size is missing``).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel.describe.models import ModelDescription
from costmodel.errors import ParseError
from costmodel.references import HF_TRANSFORMERS

__all__ = ["GATED_FAMILIES", "SOURCE", "parse_hf_config", "read_hf_config"]

SOURCE = HF_TRANSFORMERS.at("PretrainedConfig and the decoder families' configurations: hidden_size, "
                            "num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, "
                            "intermediate_size, "
                            "vocab_size, max_position_embeddings, tie_word_embeddings, the MoE keys")

GATED_FAMILIES = ("llama", "mistral", "mixtral", "qwen", "deepseek", "gemma", "phi3", "olmo", "yi")
"""Architectures (``architectures`` or ``model_type``, lower case, by prefix) whose FFN is gated."""

_GATED_ACTIVATIONS = ("silu", "swish", "swiglu")

_DROPOUTS = ("attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "dropout",
             "hidden_dropout_prob", "attention_probs_dropout_prob")
"""The dropout rates a configuration may give: all 0 (Llama's attention_dropout = 0.0) is a model trained
without dropout."""


_UNMODELLED = {
    "q_lora_rank": "multi-head latent attention (DeepSeek-V2/V3: low-rank query and key-value projections)",
    "kv_lora_rank": "multi-head latent attention (DeepSeek-V2/V3: low-rank query and key-value projections)",
    "num_nextn_predict_layers": "multi-token prediction layers (DeepSeek-V3)",
    "shared_expert_intermediate_size": "a shared expert of its own width (Qwen-MoE)",
    "decoder_sparse_step": "experts in every n-th layer only (Qwen-MoE)",
    "moe_layer_freq": "experts in every n-th layer only",
    "mlp_only_layers": "dense layers among the expert layers (Qwen-MoE)",
    "sliding_window": "sliding-window attention (priced here as full causal attention)",
}
"""Keys that change the architecture in ways the shape does not model, and what each is: a configuration
that sets one (to a value other than its off value) gets a note naming it, so no number hides it."""


def _unmodelled(config: dict[str, Any]) -> tuple[str, ...]:
    """The note on what *config* sets that the shape does not model (none when nothing)."""
    every = ("decoder_sparse_step", "moe_layer_freq")  # 1: experts in every layer, as modelled
    found = {k: v for k, v in config.items()
             if k in _UNMODELLED and v not in (None, 0, False, []) and not (k in every and v == 1)}
    if config.get("use_sliding_window") is False:
        found.pop("sliding_window", None)
    what = list(dict.fromkeys(_UNMODELLED[k] for k in found))
    names = [str(n) for n in config.get("architectures") or [] if isinstance(n, str)]
    extra = tuple(note for prefix, note in _NORMS_NOT_COUNTED.items()
                  if any(n.startswith(prefix) for n in names))
    if not found:
        return extra
    return (f"not modelled: {', '.join(sorted(found))}: {'; '.join(what)}; the numbers are those of the "
            "standard transformer of the other keys", *extra)


_NORMS_NOT_COUNTED = {
    "Gemma2": "parameters: Gemma 2's post-attention and post-FFN norms (2·h weights a layer) are not counted "
              "(two norms a layer and the final one are)",
    "Gemma3": "parameters: Gemma 3's post-attention and post-FFN norms (2·h weights a layer) and its query "
              "and key norms (2·head_dim) are not counted (two norms a layer and the final one are)",
    "Qwen3": "parameters: Qwen 3's query and key norms (2·head_dim weights a layer) are not counted (two "
             "norms a layer and the final one are)",
}
"""Architectures whose norm weights differ from the two a layer costmodel counts: a few thousand weights
a layer, named so that a parameter count a little below the card's is explained."""


def _whole(config: dict[str, Any], key: str, where: str, *, low: int = 1, default: Any = ...) -> Any:
    if key not in config or config[key] is None:
        if default is ...:
            raise ParseError(f"{key} is missing", path=where)
        return default
    value = config[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ParseError(f"{key} = {json.dumps(value)} is not a whole number ≥ {low}", path=where)
    return value


def _gated(config: dict[str, Any], where: str) -> bool:
    names = config.get("architectures", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ParseError(f"architectures = {json.dumps(names)} is not a list of names", path=where)
    kind = config.get("model_type", "")
    if not isinstance(kind, str):
        raise ParseError(f"model_type = {json.dumps(kind)} is not a name", path=where)
    family = [n.lower() for n in (*names, kind)]
    if any(f.startswith(GATED_FAMILIES) for f in family):
        return True
    act = config.get("hidden_act", config.get("activation_function", ""))
    if not isinstance(act, str):
        raise ParseError(f"hidden_act = {json.dumps(act)} is not a name", path=where)
    return act.lower() in _GATED_ACTIVATIONS


def _heads(config: dict[str, Any], where: str, hidden: int) -> dict[str, int]:
    """The attention's shape keywords: heads, kv_groups, and head_dim when a head is not hidden/heads wide
    (Gemma 2 9B: 16 heads of 256 at hidden 3584; Team et al. 2024, arXiv:2408.00118, table 1)."""
    heads = _whole(config, "num_attention_heads", where)
    kv = _whole(config, "num_key_value_heads", where, default=heads)
    if heads % kv:
        raise ParseError(f"num_key_value_heads = {kv} does not divide num_attention_heads = {heads}: each "
                         "key-value head serves a whole group of query heads", path=where)
    head_dim = _whole(config, "head_dim", where, default=None)
    if head_dim is None and hidden % heads:
        raise ParseError(f"num_attention_heads = {heads} does not divide hidden_size = {hidden} and no "
                         "head_dim gives the width of a head", path=where)
    out = {"heads": heads, "kv_groups": kv}
    if head_dim is not None and head_dim * heads != hidden:  # a head_dim of hidden/heads changes nothing
        out["head_dim"] = head_dim
    return out


def parse_hf_config(text: str, *, path: str = "config.json", sequence: int | None = None) -> ModelDescription:
    """The description the text of a ``config.json`` gives (module notes); *sequence* replaces
    ``max_position_embeddings`` as the sequence length.

    >>> m = parse_hf_config('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
    ...                     '"intermediate_size": 176, "vocab_size": 1000, "max_position_embeddings": 128, '
    ...                     '"architectures": ["LlamaForCausalLM"]}')
    >>> m.shape["ffn_factor"], m.shape["gated"], m.shape["kv_groups"]
    (Fraction(11, 4), True, 4)
    >>> parse_hf_config('{"num_hidden_layers": 2}')
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: config.json: hidden_size is missing
    """
    try:
        config = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise ParseError(f"invalid JSON: {detail}", path=path, line=line) from None
    if not isinstance(config, dict):
        raise ParseError("the file is not a JSON object of a model's configuration", path=path)
    hidden = _whole(config, "hidden_size", path)
    layers = _whole(config, "num_hidden_layers", path)
    attention = _heads(config, path, hidden)
    ffn = _whole(config, "intermediate_size", path)
    vocab = _whole(config, "vocab_size", path)
    seq = sequence if sequence is not None else _whole(config, "max_position_embeddings", path)
    tied = config.get("tie_word_embeddings", True)
    if not isinstance(tied, bool):
        raise ParseError(f"tie_word_embeddings = {json.dumps(tied)} is not true or false", path=path)
    shape: dict[str, Any] = {"layers": layers, "hidden": hidden, **attention, "sequence": seq,
                             "vocabulary": vocab, "ffn_factor": Fraction(ffn, hidden),
                             "gated": _gated(config, path), "tied_embeddings": tied}
    experts = None
    for key in ("num_local_experts", "n_routed_experts", "num_experts"):
        if config.get(key) is not None:
            experts = _whole(config, key, path)
            break
    if experts is not None and experts > 1:
        expert_ffn = _whole(config, "moe_intermediate_size", path, default=ffn)
        shape.update(experts=experts, top_k=_whole(config, "num_experts_per_tok", path),
                     expert_ffn_factor=Fraction(expert_ffn, hidden),
                     shared_experts=_whole(config, "n_shared_experts", path, low=0, default=0),
                     dense_layers=_whole(config, "first_k_dense_replace", path, low=0, default=0))
        if shape["top_k"] > experts:
            raise ParseError(f"num_experts_per_tok = {shape['top_k']} is more than the {experts} experts",
                             path=path)
    names = config.get("architectures") or [config.get("model_type") or "a transformer"]
    title = f"{names[0]} ({Path(path).name})"
    settings: dict[str, Any] = {}
    if any(str(n).endswith(("ForCausalLM", "LMHeadModel")) for n in names):
        settings["causal"] = True
    rates = {k: config[k] for k in _DROPOUTS if k in config and config[k] is not None}
    for key, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ParseError(f"{key} = {json.dumps(rate)} is not a dropout rate from 0 to 1", path=path)
    if rates:
        settings["dropout"] = any(rate > 0 for rate in rates.values())
    return ModelDescription(name=Path(path).parent.name or Path(path).stem, title=title, shape=shape,
                            settings=settings, source=path, locator=str(SOURCE),
                            notes=_unmodelled(config))


def read_hf_config(path: str | Path, *, sequence: int | None = None) -> ModelDescription:
    """The description a Hugging Face ``config.json`` at *path* gives (:func:`parse_hf_config`)."""
    from costmodel._files import read_text

    text = str(path)
    return parse_hf_config(read_text(text, what="the Hugging Face config", limit=2**20), path=text,
                           sequence=sequence)
