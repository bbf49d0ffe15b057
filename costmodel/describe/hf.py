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
intermediate_size_mlp   ffn_factor (Llama 4)                 the dense layers' FFN, intermediate_size
                                                             then the experts' (default 16384)
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
shared_expert_          shared_experts                       Qwen-MoE's one shared expert, as
intermediate_size                                            width / moe_intermediate_size experts when
                                                             that is whole (without n_shared_experts)
first_k_dense_replace   dense_layers                         default 0
moe_layers,             expert_layers                        see below; every layer from dense_layers on
interleave_moe_layer_step,                                   when none is given
decoder_sparse_step,
mlp_only_layers,
moe_layer_freq
sliding_window          window                               the local attention's width, on the layers
                                                             below
layer_types,            window_layers                        see below
sliding_window_pattern,
use_sliding_window,
max_window_layers
kv_lora_rank            kv_rank                              multi-head latent attention (DeepSeek-V2
                                                             and V3, Kimi K2): the keys' and values'
                                                             latent; absent or null: none
q_lora_rank             q_rank                               the queries' latent; null (or 0): none,
                                                             the queries projected from the hidden state
                                                             (DeepSeek-V2-Lite)
qk_nope_head_dim        head_dim                             with kv_lora_rank: each query and key head
                                                             without the rotary part (in place of
                                                             head_dim)
qk_rope_head_dim        rope_head_dim                        with kv_lora_rank: the rotary part
v_head_dim              value_head_dim                       with kv_lora_rank: each value head
num_nextn_predict_      mtp_layers                           multi-token prediction modules (DeepSeek-V3,
layers                                                       GLM-4.5), counted as trained: the embedding
                                                             and output head shared, not again
architectures           layer_norms, qk_norm                 Gemma 2 and 3: four norms a layer; Qwen3,
                                                             Gemma 3: query and key norms of head_dim;
                                                             OLMo 2: over the whole projections
attention_dropout, ...  the step's dropout                   off when every dropout rate given is 0
======================  ===================================  ==========================================

Which layers have the sliding window, as ``transformers`` builds each family's ``layer_types``
(``src/transformers/models/*/configuration_*.py``): a ``layer_types`` list, when the file gives one, is
the authority (``sliding_attention`` has the window, ``full_attention`` not); otherwise Gemma 2 and
gpt-oss alternate from layer 0 (``(i + 1) % 2``: the even layers local), Gemma 3 and Cohere 2 make layer
i global when (i + 1) % ``sliding_window_pattern`` is 0 (6 and 4 by default), Qwen2 and Qwen3 apply
``sliding_window`` only with ``use_sliding_window`` true and then to the layers from
``max_window_layers`` on (28 by default; ``use_sliding_window: false`` turns any family's off), and
Mistral, Mixtral, Phi-3 and Starcoder2 to every layer.  A window on no layer is no window;
``sliding_window: null`` is none.  A family not named applies it to every layer, and a note says so.

Which layers have the mixture of experts, as each family's modeling file builds them: Llama 4's
``moe_layers`` list, when the file gives one, is the authority, and otherwise ``Llama4TextConfig`` makes
it ``range(interleave_moe_layer_step − 1, layers, interleave_moe_layer_step)`` (Maverick's 2: the odd
layers, whose dense neighbours have an FFN of ``intermediate_size_mlp``); Qwen2-MoE and Qwen3-MoE give
layer i experts when i is not in ``mlp_only_layers`` and (i + 1) % ``decoder_sparse_step`` is 0; DeepSeek's
``modeling_deepseek.py`` when i ≥ ``first_k_dense_replace`` and i % ``moe_layer_freq`` is 0 (the
``DeepseekV2``/``V3`` classes of ``transformers`` leave ``moe_layer_freq`` out; the published files set
it to 1).  Each key's default (none, 1, []) puts experts on every layer, and a file sets only its
family's; they are read together (a layer has experts when every rule gives them) into the shape's
``expert_layers`` pattern, the shortest that repeats to the layers' list, with ``first_k_dense_replace``
as ``dense_layers``.  A configuration whose rules leave no layer with experts is read as a dense model,
and a note says so.

Other spellings and configurations: GPT-2's, BLOOM's, StarCoder's and Falcon's names (``n_embd``,
``n_layer``, ``n_head``, ``n_positions``, ``n_inner``, ``ffn_hidden_size``, ``num_kv_heads``:
:data:`_ALIASES`) are read as the standard keys; their FFN is 4·hidden_size wide when no width is given
(:data:`_FFN_4H`), and ``multi_query`` (without Falcon's ``new_decoder_architecture``) is one key-value head.
A multimodal configuration (Gemma 3's, Llama 4's ``...ForConditionalGeneration``) is read as its text
model, ``text_config``, with the outer ``tie_word_embeddings``; a note says the vision encoder is left out
(also when the text model's keys are at the top, as Qwen2-VL's are).
A key a family's published file leaves to ``transformers`` takes the value it builds (:data:`_DEFAULTS`:
Gemma 3's vocabulary, Llama 4's shared expert; the latent attention's widths of DeepSeek-V2's and V3's
configuration classes, :data:`_LATENT_DEFAULTS`), named in a note; so are the biases the parameter count
leaves out (:data:`_BIASED`, or ``attention_bias``, ``mlp_bias``, ``bias`` true).

JSON is parsed by :mod:`json` (never evaluated); other keys (``_source``, ``rope_theta``, ...) are
ignored, and an architecture the table does not name is read when its keys are there, except that a key
that changes the architecture in a way the shape does not model (DeepSeek-V3's multi-token prediction
module, Qwen-MoE's shared expert of a width that is not a whole number of experts, a
layer type other than sliding or full attention) is named in a note (:data:`_UNMODELLED`).  A key
missing or of the wrong type is one error naming the file and the key (``config.json: hidden_size is
missing``).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel.describe.models import ModelDescription
from costmodel.errors import ParseError
from costmodel.references import HF_TRANSFORMERS

__all__ = ["GATED_FAMILIES", "MAX_BYTES", "SOURCE", "parse_hf_config", "read_hf_config"]

MAX_BYTES = 1 << 20
"""The largest config.json read (a model's own is a few kilobytes; a multimodal one's tens)."""

SOURCE = HF_TRANSFORMERS.at("PretrainedConfig and the decoder families' configurations: hidden_size, "
                            "num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, "
                            "intermediate_size, "
                            "vocab_size, max_position_embeddings, tie_word_embeddings, the MoE keys, "
                            "sliding_window and the layer_types each family builds")

GATED_FAMILIES = ("llama", "mistral", "mixtral", "qwen", "deepseek", "gemma", "phi3", "olmo", "yi")
"""Architectures (``architectures`` or ``model_type``, lower case, by prefix) whose FFN is gated."""

_GATED_ACTIVATIONS = ("silu", "swish", "swiglu")

_DROPOUTS = ("attention_dropout", "hidden_dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop", "dropout",
             "hidden_dropout_prob", "attention_probs_dropout_prob")
"""The dropout rates a configuration may give: all 0 (Llama's attention_dropout = 0.0) is a model trained
without dropout."""


_UNMODELLED = {
    "shared_expert_intermediate_size": "a shared expert whose width is not a whole number of experts "
                                       "(Qwen-MoE)",
    "attention_chunk_size": "chunked attention (Llama 4: a query attends within its chunk on three layers "
                            "in four; priced here as causal over the whole sequence)",
    "use_bidirectional_attention": "bidirectional attention (priced here as causal)",
}
"""Keys that change the architecture in ways the shape does not model, and what each is: a configuration
that sets one (to a value other than its off value) gets a note naming it, so no number hides it."""


def _unmodelled(config: dict[str, Any], *, modelled: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The note on what *config* sets that the shape does not model (none when nothing); the keys
    *modelled* were read into the shape after all (a shared expert whose width is a whole number of
    experts)."""
    found = {k: v for k, v in config.items() if k in _UNMODELLED and k not in modelled
             and v not in (None, 0, False, [])}
    what = list(dict.fromkeys(_UNMODELLED[k] for k in found))
    if not found:
        return ()
    return (f"not modelled: {', '.join(sorted(found))}: {'; '.join(what)}; the numbers are those of the "
            "standard transformer of the other keys",)


_NORMS = {
    "Gemma2For": (4, "none"),
    "Gemma3For": (4, "head"),
    "Qwen3For": (2, "head"),
    "Qwen3MoeFor": (2, "head"),
    "Olmo2For": (2, "projection"),
}
"""Architectures whose norms are not two of width h a layer, by the prefix of their name: (h-wide norms a
layer, query and key norms), as their ``transformers`` modeling files build them: Gemma 2 and 3's
``input_layernorm``, ``post_attention_layernorm``, ``pre_feedforward_layernorm`` and
``post_feedforward_layernorm``; Gemma 3's and Qwen 3's ``q_norm`` and ``k_norm`` of ``head_dim``; OLMo 2's
``q_norm`` of heads × head_dim and ``k_norm`` of kv-heads × head_dim (with its two norms after the
attention and the FFN)."""

_ALTERNATING = ("gemma2", "gpt_oss")
"""Families whose default ``layer_types`` alternate from a local layer 0 (``(i + 1) % 2``)."""

_PATTERNED = {"gemma3": 6, "gemma3_text": 6, "cohere2": 4}
"""Families whose layer i is global when (i + 1) % ``sliding_window_pattern`` is 0, and the default."""

_EVERY_LAYER = ("mistral", "mixtral", "phi3", "starcoder2")
"""Families that apply ``sliding_window`` to every layer."""

_SWITCHED = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")
"""Families with ``use_sliding_window`` (default off) and ``max_window_layers`` (default 28)."""


def _family(config: dict[str, Any]) -> str:
    """The ``model_type`` of *config*, lower case, or its architecture's family (``Gemma2ForCausalLM``:
    ``gemma2``) when it gives none."""
    kind = config.get("model_type")
    if isinstance(kind, str) and kind:
        return kind.lower()
    names = config.get("architectures") or []
    name = names[0] if names and isinstance(names[0], str) else ""
    return re.sub(r"(For[A-Z].*|Model)$", "", name).lower()


def _window(config: dict[str, Any], where: str, layers: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The shape keywords of *config*'s sliding window (``window``, ``window_layers``; none without one)
    and the notes on how its layers were read (module notes)."""
    from costmodel.step.flops import shortest_pattern

    family = _family(config)
    types = config.get("layer_types")
    width = config.get("sliding_window")
    switch = config.get("use_sliding_window", False if family in _SWITCHED else None)
    if switch is False:
        return {}, ()  # transformers sets sliding_window to None unless use_sliding_window is true
    if width is None:
        return {}, ()  # no width: each layer attends to its whole causal prefix, whatever its type
    notes: list[str] = []
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise ParseError(f"layer_types = {json.dumps(types)} is not a list of layer types", path=where)
        if len(types) != layers:
            raise ParseError(f"layer_types lists {len(types)} layers, and num_hidden_layers = {layers}",
                             path=where)
        other = sorted({t for t in types if t not in ("sliding_attention", "full_attention")})
        if other:
            notes.append(f"not modelled: layer_types {', '.join(other)}: priced here as full attention; the "
                         "numbers are those of the standard transformer of the other keys")
        pattern = shortest_pattern([t == "sliding_attention" for t in types], "LG")
    elif family in _ALTERNATING:
        pattern = "LG" if layers > 1 else "L"
    elif family in _PATTERNED:
        every = _whole(config, "sliding_window_pattern", where, default=_PATTERNED[family])
        pattern = "" if every == 1 else "L" if layers < every else f"{every - 1}LG"
    elif family in _SWITCHED:
        start = _whole(config, "max_window_layers", where, low=0, default=28)
        pattern = "" if start >= layers else f"{start}G{layers - start}L" if start else "L"
    else:
        pattern = "L"
        if family not in _EVERY_LAYER:
            notes.append(f"sliding_window = {width} applied to every layer: the configuration gives no "
                         "layer_types and its family's rule is not known here")
    if "L" not in pattern:
        return {}, tuple(notes)
    window = _whole(config, "sliding_window", where)
    return {"window": window, "window_layers": pattern}, tuple(notes)


_MAX_LISTED = 1_000_000
"""The most layers the reader lists one by one to find which have experts."""


def _layers(config: dict[str, Any], key: str, where: str, layers: int) -> set[int]:
    """The layer indices of *config*'s list *key* (none when it gives none), each from 0 to layers − 1."""
    listed = config.get(key)
    if listed is None:
        return set()
    if not isinstance(listed, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in listed):
        raise ParseError(f"{key} = {json.dumps(listed)} is not a list of layer indices", path=where)
    if outside := [i for i in listed if not 0 <= i < layers]:
        raise ParseError(f"{key} lists layer {outside[0]}, and num_hidden_layers = {layers} (layers 0 to "
                         f"{layers - 1})", path=where)
    return set(listed)


def _experts(config: dict[str, Any], where: str, *, hidden: int, layers: int, ffn: int
             ) -> tuple[dict[str, Any], frozenset[str], tuple[str, ...]]:
    """The mixture-of-experts keywords of *config* (none for a dense FFN), with the FFN's width when
    Llama 4's dense layers give it their own; the keys read into the shape that :data:`_UNMODELLED` names;
    and a note when the file's rules leave no layer with experts (module notes)."""
    experts = None
    for key in ("num_local_experts", "n_routed_experts", "num_experts"):
        if config.get(key) is not None:
            experts = _whole(config, key, where)
            break
    if experts is None or experts < 2:
        return {}, frozenset(), ()
    expert_ffn = _whole(config, "moe_intermediate_size", where, default=ffn)
    shared = _whole(config, "n_shared_experts", where, low=0, default=None)
    width = _whole(config, "shared_expert_intermediate_size", where, low=0, default=0)
    modelled = frozenset[str]()
    if shared is None and width and width % expert_ffn == 0:
        # Qwen-MoE's one shared expert of width w: w / moe_intermediate_size experts' matrices
        shared, modelled = width // expert_ffn, frozenset({"shared_expert_intermediate_size"})
    top_k = _whole(config, "num_experts_per_tok", where)
    if top_k > experts:
        raise ParseError(f"num_experts_per_tok = {top_k} is more than the {experts} experts", path=where)
    dense = _whole(config, "first_k_dense_replace", where, low=0, default=0)
    pattern, routed = _experts_on(config, where, layers, dense)
    # Llama 4's dense layers have an FFN of their own width, intermediate_size_mlp
    out: dict[str, Any] = {"ffn_factor": Fraction(_whole(config, "intermediate_size_mlp", where, default=ffn),
                                                  hidden)}
    if not routed:
        keys = [k for k in _LAYER_KEYS if config.get(k) is not None
                and (k == "moe_layers" or config[k] not in (0, 1, []))]
        verb = "leaves" if len(keys) == 1 else "leave"
        return out, modelled, (f"no layer has experts: {' and '.join(keys)} {verb} each of the {layers} "
                               f"layers a dense FFN, so the {experts} experts are left out",)
    out.update(experts=experts, top_k=top_k, expert_ffn_factor=Fraction(expert_ffn, hidden),
               shared_experts=shared or 0, dense_layers=dense)
    if pattern is not None:
        out["expert_layers"] = pattern
    return out, modelled, ()


_LAYER_KEYS = ("moe_layers", "interleave_moe_layer_step", "decoder_sparse_step", "mlp_only_layers",
               "moe_layer_freq", "first_k_dense_replace")
"""The keys that say which layers have experts (module notes)."""


def _experts_on(config: dict[str, Any], where: str, layers: int, dense: int) -> tuple[str | None, bool]:
    """The shape's ``expert_layers`` pattern for *config* (``None``: every layer from *dense* on), and
    whether any layer has experts (module notes: each family's rule, read together)."""
    from math import lcm

    from costmodel.step.flops import shortest_pattern

    step = _whole(config, "interleave_moe_layer_step", where, default=1)
    sparse = _whole(config, "decoder_sparse_step", where, default=1)
    freq = _whole(config, "moe_layer_freq", where, default=1)
    listed = _layers(config, "moe_layers", where, layers) if config.get("moe_layers") is not None else None
    dense_only = _layers(config, "mlp_only_layers", where, layers)
    # the rules repeat every lcm of their steps; a list is a whole model's
    period = layers if listed is not None or dense_only else min(layers, lcm(step, sparse, freq))
    if period > _MAX_LISTED:
        raise ParseError(f"num_hidden_layers = {layers}: which of them have experts repeats only over "
                         f"{period} layers, more than the {_MAX_LISTED} the reader lists", path=where)
    on = [(i in listed if listed is not None else (i + 1) % step == 0)
          and (i + 1) % sparse == 0 and i % freq == 0 and i not in dense_only for i in range(period)]
    count = sum(on) * (layers // period) + sum(on[:layers % period])
    below = sum(on) * (dense // period) + sum(on[:dense % period])
    pattern = shortest_pattern(on, "ED")
    return (None if pattern in ("", "E") else pattern), count > below


def _norms(config: dict[str, Any]) -> dict[str, Any]:
    """The norm keywords of *config*'s architecture (:data:`_NORMS`), none for two h-wide norms a layer."""
    names = [n for n in config.get("architectures") or [] if isinstance(n, str)]
    for prefix, (norms, qk) in _NORMS.items():
        if any(n.startswith(prefix) for n in names):
            return {k: v for k, v in (("layer_norms", norms), ("qk_norm", qk)) if (k, v) not in
                    (("layer_norms", 2), ("qk_norm", "none"))}
    return {}


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


_LATENT_KEYS = {"q_lora_rank": "q_rank", "qk_nope_head_dim": "head_dim", "qk_rope_head_dim": "rope_head_dim",
                "v_head_dim": "value_head_dim"}
"""The keys of multi-head latent attention beside ``kv_lora_rank`` (``kv_rank``), and the shape keyword of
each."""

_LATENT_DEFAULTS = {"q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}
"""What ``DeepseekV2Config`` and ``DeepseekV3Config`` build for a latent attention key the file leaves out."""

_LATENT_FAMILIES = ("deepseek_v2", "deepseek_v3")
"""Families whose configuration class fills in :data:`_LATENT_DEFAULTS`."""


def _latent(config: dict[str, Any], where: str, heads: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The shape keywords of *config*'s multi-head latent attention (none without a ``kv_lora_rank``), and
    the notes on the keys that took their family's defaults.

    DeepSeek's configurations give each head's widths (``qk_nope_head_dim``, ``qk_rope_head_dim``,
    ``v_head_dim``) and the latents' (``kv_lora_rank``, and ``q_lora_rank``: null, or 0 in DeepSeek's own
    inference configurations, when the queries are projected from the hidden state, as DeepSeek-V2-Lite's
    are); a ``head_dim`` key is not the attention's width there (``transformers`` sets it to the rotary
    part), so ``qk_nope_head_dim`` replaces it.
    """
    if config.get("kv_lora_rank") in (None, 0):
        return {}, ()
    rank = _whole(config, "kv_lora_rank", where)
    family = _family(config)
    notes: list[str] = []
    out: dict[str, Any] = {"kv_rank": rank}
    for key, name in _LATENT_KEYS.items():
        if key not in config and family in _LATENT_FAMILIES:
            out[name] = _LATENT_DEFAULTS[key]
            notes.append(f"{key} = {_LATENT_DEFAULTS[key]}: what transformers builds for {family} (the file "
                         "leaves it out)")
        elif key == "q_lora_rank":
            if config.get(key) not in (None, 0):  # null (or 0): the queries projected from the hidden state
                out[name] = _whole(config, key, where)
        else:
            low = 0 if key == "qk_rope_head_dim" else 1
            if key not in config:
                raise ParseError(f"{key} is missing: multi-head latent attention (kv_lora_rank = {rank}) "
                                 "needs each head's widths, qk_nope_head_dim, qk_rope_head_dim and "
                                 "v_head_dim", path=where)
            out[name] = _whole(config, key, where, low=low)
    groups = config.get("num_key_value_heads", heads)
    if groups != heads:
        raise ParseError(f"num_key_value_heads = {json.dumps(groups)} with kv_lora_rank = {rank}: latent "
                         f"attention up-projects keys and values for each of the {heads} heads", path=where)
    return out, tuple(notes)


def _attention(config: dict[str, Any], where: str, hidden: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The attention's shape keywords (:func:`_heads`, and :func:`_latent`'s for multi-head latent
    attention, whose ``qk_nope_head_dim`` is the heads' width), and the notes on the defaults taken."""
    latent, notes = _latent(config, where, _whole(config, "num_attention_heads", where))
    if latent:  # a head_dim key is the rotary part there (transformers' DeepseekV3Config)
        config = {**config, "head_dim": latent.pop("head_dim")}
    return {**_heads(config, where, hidden), **latent}, notes


_ALIASES = {"n_embd": "hidden_size", "n_embed": "hidden_size", "n_layer": "num_hidden_layers",
            "n_head": "num_attention_heads", "n_positions": "max_position_embeddings",
            "n_inner": "intermediate_size", "ffn_hidden_size": "intermediate_size",
            "num_kv_heads": "num_key_value_heads"}
"""Other spellings of the standard keys, as the ``attribute_map`` of GPT-2's, BLOOM's, GPT-J's, StarCoder's
(``gpt_bigcode``) and Falcon's configurations (and their ``__init__`` arguments: BLOOM's ``n_embed``,
Falcon's ``ffn_hidden_size`` and ``num_kv_heads``) map them; the standard key wins when both are given."""

_FFN_4H = ("gpt2", "gpt_bigcode", "gptj", "bloom", "falcon")
"""Families whose FFN is 4·hidden_size wide when the file gives no width (GPT-2's ``n_inner: null``; BLOOM's
``4 * hidden_size``; Falcon's ``ffn_hidden_size`` default)."""

_DEFAULTS: dict[str, dict[str, int]] = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072},
    "falcon": {"max_position_embeddings": 2048},
    "llama4_text": {"n_shared_experts": 1, "intermediate_size_mlp": 16384},
}
"""Values ``transformers`` fills in for a key a family's published files leave out (Gemma 3's
``Gemma3TextConfig``; Falcon's ``FalconConfig``; the dense layers' FFN of ``Llama4TextConfig``), and
Llama 4's one shared expert of the routed experts' width in every MoE layer
(``Llama4TextMoe.shared_expert``), which no key gives."""

_BIASED = ("gpt2", "gpt_bigcode", "gpt_neox", "gptj", "bloom", "phi", "qwen2", "qwen2_moe", "qwen2_vl",
           "qwen2_5_vl", "starcoder2")
"""Families whose linear layers (or whose attention projections: Qwen2's) carry biases, which the
parameter count leaves out."""


def _text_model(config: dict[str, Any], where: str) -> tuple[dict[str, Any], tuple[str, ...], bool]:
    """*config* with its standard keys (module notes): the text model's ``text_config`` of a multimodal
    configuration (Gemma 3, Llama 4), the aliases of :data:`_ALIASES`, the defaults of :data:`_DEFAULTS` and
    :data:`_FFN_4H`, and one key-value head for ``multi_query``; the notes on what was read so; and whether
    the configuration is a multimodal one's (its text model a decoder, as a CausalLM's)."""
    notes: list[str] = []
    text = config.get("text_config")
    outer = config.get("architectures") or [config.get("model_type") or "the model"]
    encoders = [k.removesuffix("_config") for k in ("vision_config", "audio_config") if config.get(k)]
    left = f": its {' and '.join(encoders)} encoder and projector are left out" if encoders else ""
    multimodal = bool(encoders)  # the text model's keys at the top (Qwen2-VL), or text_config below
    if isinstance(text, dict) and "hidden_size" not in config:
        multimodal = True
        notes.append(f"the text model (text_config) of {outer[0]}{left}")
        outside: dict[str, Any] = {k: config[k] for k in ("architectures", "tie_word_embeddings")
                                   if k in config}
        config = {**text, **outside}  # the outer model's lm_head is tied (or not) to the text embedding
    elif encoders:  # the text model's keys at the top (Qwen2-VL): the same model, the same encoders left out
        notes.append(f"the text model of {outer[0]}{left}")
    config = dict(config)
    for alias, key in _ALIASES.items():
        if config.get(key) is None and config.get(alias) is not None:
            config[key] = _whole(config, alias, where)  # checked under the name the file gives it
    family = _family(config)
    for key, value in _DEFAULTS.get(family, {}).items():
        if config.get(key) is None:
            config[key] = value
            notes.append(f"{key} = {value}: what transformers builds for {family} (the file leaves it out)")
    if config.get("intermediate_size") is None and family in _FFN_4H:
        config["intermediate_size"] = 4 * _whole(config, "hidden_size", where)
    if config.get("multi_query") is True and not config.get("new_decoder_architecture"):
        config["num_key_value_heads"] = 1  # one key-value head (GPT-BigCode, Falcon 7B)
    biased = [k for k in ("attention_bias", "mlp_bias", "bias") if config.get(k) is True]
    if family in _BIASED or biased:
        verb = "turns" if len(biased) == 1 else "turn"
        which = "of the linear layers" if family in _BIASED else f"that {' and '.join(biased)} {verb} on"
        positions = " and the learned position embeddings" if "n_positions" in config else ""
        notes.append(f"not counted: the biases {which}{positions}: the parameter count is that of the weight "
                     "matrices and the norms")
    return config, tuple(notes), multimodal


def _sequence(config: dict[str, Any], where: str, sequence: int | None) -> int:
    """*sequence*, else the default sequence of *config*: its ``max_position_embeddings``."""
    if sequence is not None:
        return sequence
    if config.get("max_position_embeddings") is None:
        raise ParseError("max_position_embeddings is missing, the default sequence (a model with ALiBi, as "
                         "BLOOM, has none); give the sequence, e.g. sequence=2048", path=where)
    return int(_whole(config, "max_position_embeddings", where))


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
    config, read, multimodal = _text_model(config, path)
    hidden = _whole(config, "hidden_size", path)
    layers = _whole(config, "num_hidden_layers", path)
    attention, defaults = _attention(config, path, hidden)
    ffn = _whole(config, "intermediate_size", path)
    vocab = _whole(config, "vocab_size", path)
    seq = _sequence(config, path, sequence)
    tied = config.get("tie_word_embeddings", True)
    if not isinstance(tied, bool):
        raise ParseError(f"tie_word_embeddings = {json.dumps(tied)} is not true or false", path=path)
    shape: dict[str, Any] = {"layers": layers, "hidden": hidden, **attention, "sequence": seq,
                             "vocabulary": vocab, "ffn_factor": Fraction(ffn, hidden),
                             "gated": _gated(config, path), "tied_embeddings": tied}
    moe, modelled, none = _experts(config, path, hidden=hidden, layers=layers, ffn=ffn)
    shape.update(moe)
    window, told = _window(config, path, layers)
    shape.update(window, **_norms(config))
    mtp, counted = _mtp(config, path, layers)
    shape.update(mtp)
    names = config.get("architectures") or [config.get("model_type") or "a transformer"]
    title = f"{names[0]} ({Path(path).name})"
    settings: dict[str, Any] = {}
    if any(str(n).endswith(("ForCausalLM", "LMHeadModel")) for n in names) or multimodal:
        settings["causal"] = True
    rates = {k: config[k] for k in _DROPOUTS if k in config and config[k] is not None}
    for key, rate in rates.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate < 1:
            raise ParseError(f"{key} = {json.dumps(rate)} is not a dropout rate from 0 to 1", path=path)
    if rates:
        settings["dropout"] = any(rate > 0 for rate in rates.values())
    return ModelDescription(name=Path(path).parent.name or Path(path).stem, title=title, shape=shape,
                            settings=settings, source=path, locator=str(SOURCE),
                            notes=(*read, *defaults, *none, *_unmodelled(config, modelled=modelled), *told,
                                   *counted))


def _mtp(config: dict[str, Any], where: str, layers: int) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The multi-token prediction modules of ``num_nextn_predict_layers`` (DeepSeek-V3, GLM-4.5), and the
    note that says how they are counted: trained with the main model, each sharing its embedding and output
    head, which a checkpoint stores again for each module (DeepSeek-V3's ``model.layers.61.embed_tokens``
    and ``shared_head.head``) and the count does not."""
    depth = _whole(config, "num_nextn_predict_layers", where, low=0, default=0)
    if not depth:
        return {}, ()
    if depth > layers:
        raise ParseError(f"num_nextn_predict_layers = {depth} is more than the {layers} hidden layers; give "
                         "the multi-token prediction modules, 0 to num_hidden_layers", path=where)
    return {"mtp_layers": depth}, (
        f"multi-token prediction: num_nextn_predict_layers = {depth}, counted as trained (a layer of the "
        "last layer's kind, a 2h → h projection and three norms each); each module shares the main model's "
        "embedding and output head, so the checkpoint's copies of them for the module are not counted",)


def read_hf_config(path: str | Path, *, sequence: int | None = None) -> ModelDescription:
    """The description a Hugging Face ``config.json`` at *path* gives (:func:`parse_hf_config`); a folder
    that holds one (a model's download, as ``huggingface_hub`` lays it out) is read through it."""
    from costmodel._files import read_text

    text = str(path)
    if Path(text).is_dir() and (Path(text) / "config.json").is_file():
        text = str(Path(text) / "config.json")
    return parse_hf_config(read_text(text, what="the Hugging Face config", limit=MAX_BYTES), path=text,
                           sequence=sequence)
