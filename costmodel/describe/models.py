"""Transformers as people name them: presets (GPT-3, Llama 3, Mixtral, DeepSeekMoE) and model files.

A :class:`ModelDescription` is a plain mapping of :class:`~costmodel.step.TransformerShape` keyword
arguments (``shape``) and the step settings the model implies (``settings``, e.g. ``causal``), with the
source of its numbers.  The presets are TOML files in ``costmodel/describe/presets/``; a user's model
file has the same format, read by :func:`costmodel.tomlfile.loads` and checked key by key::

    name = "llama-3-8b"                 # lower case
    title = "Llama 3 8B"
    aliases = ["llama3-8b"]             # optional: other names of a preset
    source = "dubey2024"                # a key of costmodel.references, or free text
    locator = "Table 3: ..."            # where in the source
    notes = ["..."]                     # optional
    base = "llama-3-8b"                 # optional (a user file only): start from a preset

    [shape]
    layers = 32            # l
    hidden = 4096          # h
    heads = 32             # a
    kv_groups = 8          # optional: key-value heads (GQA); default: heads
    head_dim = 128         # optional: channels of each head, d (default hidden/heads; Gemma 2 9B: 256)
    sequence = 8192        # s
    vocabulary = 128256    # V
    ffn_hidden = 14336     # optional: the FFN width (default 4h); ffn_factor = ffn_hidden / h, exact
    gated = true           # optional: SwiGLU (three matrices)
    tied_embeddings = false                # optional: the output layer shares the input embedding
    experts = 8                            # optional, mixture of experts: routed experts
    top_k = 2                              # routed experts per token
    expert_ffn_hidden = 14336              # a routed expert's FFN width
    shared_experts = 0                     # experts every token runs
    dense_layers = 0                       # leading layers with a dense FFN
    expert_layers = "DE"                   # optional: the layers with experts, E experts and D a dense
                                           # FFN, repeated from layer 0 (default "E", every layer)
    window = 4096          # optional: sliding-window (local) attention of w tokens (Mistral 7B: 4096)
    window_layers = "LG"   # optional, with window: the layers it applies to, L local and G global,
                           # repeated from layer 0 (default "L", every layer; Gemma 3: "5LG")
    layer_norms = 4        # optional: h-wide norms in each layer (default 2; Gemma 2 and 3: 4)
    qk_norm = "head"       # optional: query and key norms, "none" (default), "head" or "projection"
    kv_rank = 512          # optional, multi-head latent attention (DeepSeek-V2 and V3): the keys' and
                           # values' latent; head_dim is then each query and key head without its
                           # rotary part
    q_rank = 1536          # optional, with kv_rank: the queries' latent (default: none, as V2-Lite)
    rope_head_dim = 64     # optional, with kv_rank: the rotary part of each query and key head
    value_head_dim = 128   # optional, with kv_rank: each value head (default head_dim)
    mtp_layers = 1         # optional: multi-token prediction modules after the main layers (default 0;
                           # DeepSeek-V3: 1)

    [step]
    causal = true          # optional: the step settings the model implies
    dropout = false        # optional: trained without dropout

The mixture-of-experts keys map to the shape keywords ``experts``, ``top_k``, ``expert_ffn_factor``,
``shared_experts``, ``dense_layers``, ``expert_layers`` and ``tied_embeddings`` unchanged, and so do
``window``, ``window_layers``, ``layer_norms``, ``qk_norm`` and the latent attention's ``kv_rank``,
``q_rank``, ``rope_head_dim`` and ``value_head_dim``, and ``mtp_layers``; :func:`build_shape` builds the
shape from them, a mixture of experts, a sliding window, a latent attention, multi-token prediction modules
and an untied output layer included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields
from costmodel.errors import InputError, ParseError, UnknownNameError, did_you_mean
from costmodel.exact import decimal_text
from costmodel.names import Names, normalise
from costmodel.references import (
    BROWN_2020,
    CITATIONS,
    DAI_2024,
    DEEPSEEK_V3,
    DUBEY_2024,
    HF_TRANSFORMERS,
    JIANG_2024,
    Citation,
)
from costmodel.tomlfile import as_keys, loads

__all__ = ["CITED", "MODEL_NAMES", "SHAPE_KEYS", "ModelDescription", "ModelList", "build_shape",
           "list_models", "load_model", "model_preset", "parse_model"]

CITED: tuple[Citation, ...] = (BROWN_2020, DUBEY_2024, JIANG_2024, DAI_2024, DEEPSEEK_V3, HF_TRANSFORMERS)
"""The sources the presets cite."""

_PRESETS = resources.files("costmodel.describe").joinpath("presets")

MODEL_NAMES: tuple[str, ...] = tuple(sorted(e.name.removesuffix(".toml") for e in _PRESETS.iterdir()
                                            if e.name.endswith(".toml")))
"""The shipped presets, sorted."""

SHAPE_KEYS: dict[str, str] = {
    "layers": "count", "hidden": "count", "heads": "count", "kv_groups": "count", "head_dim": "count",
    "sequence": "count",
    "vocabulary": "count", "ffn_hidden": "count", "gated": "flag", "tied_embeddings": "flag",
    "experts": "count", "top_k": "count", "expert_ffn_hidden": "count", "shared_experts": "whole",
    "dense_layers": "whole", "expert_layers": "text", "window": "count", "window_layers": "text",
    "layer_norms": "whole", "qk_norm": "text", "kv_rank": "count", "q_rank": "count",
    "rope_head_dim": "whole", "value_head_dim": "count", "mtp_layers": "whole",
}
"""The keys of a model file's ``[shape]`` table and how each reads."""

_EXAMPLES = {"window_layers": "LG", "expert_layers": "DE", "qk_norm": "head"}
"""An example value of each text key of ``[shape]``."""

_REQUIRED = ("layers", "hidden", "heads", "sequence", "vocabulary")
_STEP_KEYS = ("causal", "dropout")
_TOP = ("name", "title", "aliases", "source", "locator", "notes", "base", "shape", "step")

_DENSE: dict[str, Any] = {"experts": None, "top_k": None, "expert_ffn_factor": None, "shared_experts": 0,
                          "dense_layers": 0, "expert_layers": None}
"""Values of the mixture-of-experts keywords that describe a dense model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelDescription(JSONFields):
    """A transformer as a preset, a model file, a Hugging Face ``config.json`` or Megatron-LM's arguments
    describe it.

    *shape* holds :class:`~costmodel.step.TransformerShape` keyword arguments (``ffn_factor`` and
    ``expert_ffn_factor`` exact fractions of the hidden size), *settings* the step settings the model
    implies; *source* and *locator* say where the numbers come from.
    """

    name: str
    title: str
    shape: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    locator: str = ""
    notes: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def with_shape(self, **overrides: Any) -> ModelDescription:
        """A copy whose shape keywords *overrides* replace (``None`` values are ignored)."""
        shape = {**self.shape, **{k: v for k, v in overrides.items() if v is not None}}
        return dataclasses.replace(self, shape=shape)

    def transformer(self, notes: list[str] | None = None) -> Any:
        """The :class:`~costmodel.step.TransformerShape` of the description (:func:`build_shape`)."""
        return build_shape(self.shape, notes=notes)


@dataclass(frozen=True, slots=True)
class ModelList(JSONFields):
    """The shipped model presets, as ``costmodel models`` lists them."""

    models: tuple[ModelDescription, ...]


def build_shape(shape: Mapping[str, Any], *, notes: list[str] | None = None) -> Any:
    """A :class:`~costmodel.step.TransformerShape` from keyword arguments *shape*.

    The mixture-of-experts keywords (``experts``, ``top_k``, ``expert_ffn_factor``, ``shared_experts``,
    ``dense_layers``, ``expert_layers``) and ``tied_embeddings`` pass to the shape as they are; ``experts``
    of 0 or 1 (a single FFN) describes a dense model, and its other expert keywords are then left out.
    *notes* (a description's notes, which callers collect) gets nothing from the keywords: the shape holds
    them all.
    """
    from costmodel.step.flops import TransformerShape

    taken = {f.name for f in dataclasses.fields(TransformerShape)}
    missing = [k for k in ("layers", "hidden", "heads", "sequence", "vocabulary") if shape.get(k) is None]
    if missing:
        raise InputError(f"the model gives no {', '.join(missing)}; give {missing[0]}=N")
    dense = shape.get("experts") in (None, 0, 1)
    kwargs: dict[str, Any] = {}
    for key, value in shape.items():
        if key not in taken:
            raise UnknownNameError("shape keyword", key, tuple(taken))
        if dense and key in _DENSE:
            if value != _DENSE[key] and key not in ("experts", "top_k"):
                shown = decimal_text(value) or str(value) if isinstance(value, Fraction) else repr(value)
                raise InputError(f"{key}={shown} describes a mixture of experts, and experts="
                                 f"{shape.get('experts')} a dense model; give experts= (2 or more) and "
                                 "top_k= too, or leave the expert settings out")
            continue
        if value is not None:
            kwargs[key] = value
    return TransformerShape(**kwargs)


# -- reading a model file -------------------------------------------------------------------------


def _fail(message: str, path: str) -> ParseError:
    return ParseError(as_keys(message), path=path)


def _count(value: Any, key: str, path: str, *, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _fail(f"[shape] {key}={value!r} is not a whole number ≥ {low}", path)
    return value


def _read_shape(table: Any, path: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise _fail("shape is not a table; write [shape] with layers, hidden, heads, sequence, vocabulary",
                    path)
    out: dict[str, Any] = {}
    for key, value in table.items():
        kind = SHAPE_KEYS.get(key)
        if kind is None:
            raise _unknown(key, tuple(SHAPE_KEYS), "in [shape]", path)
        if kind == "flag":
            if not isinstance(value, bool):
                raise _fail(f"[shape] {key}={value!r} is not true or false", path)
            out[key] = value
        elif kind == "text":
            if not isinstance(value, str):
                raise _fail(f"[shape] {key}={value!r} is not text; e.g. {key} = \"{_EXAMPLES[key]}\"", path)
            out[key] = value
        else:
            out[key] = _count(value, key, path, low=0 if kind == "whole" else 1)
    return out


def _kwargs(raw: dict[str, Any], path: str) -> dict[str, Any]:
    """A ``[shape]`` table's values as TransformerShape keywords (widths as exact factors of h)."""
    out = {k: v for k, v in raw.items() if k not in ("ffn_hidden", "expert_ffn_hidden")}
    hidden = raw.get("hidden")
    for key, name in (("ffn_hidden", "ffn_factor"), ("expert_ffn_hidden", "expert_ffn_factor")):
        if key in raw:
            if hidden is None:
                raise _fail(f"[shape] {key} needs hidden to give the width as a factor of h", path)
            out[name] = Fraction(raw[key], hidden)
    return out


def _text(value: Any, key: str, path: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{key}={value!r} is not text", path)
    return value


def _unknown(key: str, known: tuple[str, ...], where: str, path: str) -> ParseError:
    hint = did_you_mean(key, known)
    tail = f"did you mean {hint!r}?" if hint else f"expected {', '.join(known)}"
    return _fail(f"unknown key {key!r} {where}; {tail}", path)


def _raw(content: str, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A model file's top level and its ``[shape]`` table as written (widths, not factors)."""
    data = loads(content, path=path, shipped=path.startswith("<preset "))
    for key in data:
        if key not in _TOP:
            raise _unknown(key, _TOP, "at the top level", path)
    return data, _read_shape(data.get("shape", {}), path)


def parse_model(content: str, *, path: str) -> ModelDescription:
    """The description a model file's text holds (module notes); *path* names it in errors.

    A user's file may start from a preset (``base = "llama-3-8b"``) and change its ``[shape]`` key by key.

    >>> m = parse_model('name = "tiny"\\n[shape]\\nlayers = 2\\nhidden = 64\\nheads = 4\\n'
    ...                 'sequence = 128\\nvocabulary = 1000\\nffn_hidden = 176\\ngated = true', path="t.toml")
    >>> m.shape["ffn_factor"], m.transformer().parameters
    (Fraction(11, 4), 164352)
    """
    data, raw = _raw(content, path)
    preset = path.startswith("<preset ")
    base: ModelDescription | None = None
    if "base" in data:
        if preset:
            raise _fail("base is for a user's file; a preset gives every value", path)
        name = _text(data["base"], "base", path)
        base_name = _preset_names().resolve(name)
        base = model_preset(base_name)
        raw = {**_raw(_preset_text(base_name), f"<preset {base_name}>")[1], **raw}
    shape = _kwargs(raw, path)
    if missing := [k for k in _REQUIRED if k not in shape]:
        raise _fail(f"[shape] gives no {', '.join(missing)}; a model needs layers, hidden, heads, sequence "
                    "and vocabulary", path)
    step = data.get("step", {})
    if not isinstance(step, dict):
        raise _fail("step is not a table; write [step] with causal = true or false", path)
    settings = dict(base.settings) if base is not None else {}
    for key, value in step.items():
        if key not in _STEP_KEYS:
            raise _unknown(key, _STEP_KEYS, "in [step]", path)
        if not isinstance(value, bool):
            raise _fail(f"[step] {key}={value!r} is not true or false", path)
        settings[key] = value
    notes = _texts(data.get("notes", []), "notes", path)
    aliases = _texts(data.get("aliases", []), "aliases", path)
    stem = Path(path).stem if not preset else path.removeprefix("<preset ").removesuffix(">")
    name = normalise(_text(data.get("name", stem), "name", path))
    default_title = f"{base.title} ({Path(path).name})" if base is not None else name
    title = _text(data.get("title", default_title), "title", path)
    source = _text(data.get("source", base.source if base is not None else path), "source", path)
    locator = _text(data.get("locator", base.locator if base is not None else ""), "locator", path)
    if source in CITATIONS:
        source = str(CITATIONS[source])
    description = ModelDescription(name=name, title=title, shape=shape, settings=settings, source=source,
                                   locator=locator, notes=(*(base.notes if base is not None else ()), *notes),
                                   aliases=aliases if preset else ())
    try:  # every value checked now, not when a step is priced
        built = build_shape(shape)
    except InputError as exc:
        raise _fail(str(exc), path) from None
    # the layer patterns as the shape writes them back ("dddE" is 3DE; experts on every layer, none)
    written: dict[str, Any] = {k: getattr(built, k) for k in ("window_layers", "expert_layers") if k in shape}
    if written:
        shape = {k: v for k, v in {**shape, **written}.items() if v is not None}
        description = dataclasses.replace(description, shape=shape)
    return description


def _texts(value: Any, key: str, path: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{key} is not a list of text", path)
    return tuple(value)


def _preset_names() -> Names:
    """The presets' names and aliases."""
    table: dict[str, tuple[str, ...]] = {}
    for name in MODEL_NAMES:
        aliases = loads(_preset_text(name), path=f"<preset {name}>", shipped=True).get("aliases", [])
        table[name] = tuple(aliases)
    return Names("model", table)


def _preset_text(name: str) -> str:
    return _PRESETS.joinpath(f"{name}.toml").read_text(encoding="utf-8")


def model_preset(name: str) -> ModelDescription:
    """The shipped preset called *name* (its aliases and any spelling :func:`~costmodel.names.normalise`
    accepts).

    >>> m = model_preset("Llama-3-8B")
    >>> m.shape["layers"], m.shape["ffn_factor"], m.source.startswith("A. Dubey")
    (32, Fraction(7, 2), True)
    """
    if not isinstance(name, str):
        raise InputError(f"{name!r} is not a model's name; e.g. 'llama-3-8b'")
    canonical = _preset_names().resolve(name)
    return parse_model(_preset_text(canonical), path=f"<preset {canonical}>")


def load_model(name_or_path: str | Path) -> ModelDescription:
    """A preset by name, or a model file by path (anything with a path separator or ending in ``.toml``).

    Raises :class:`~costmodel.errors.UnknownNameError` for an unknown preset (with a did-you-mean) and
    :class:`~costmodel.errors.ParseError` for a bad file, naming it.
    """
    text = str(name_or_path)
    json = ParseError("a model file is TOML; a Hugging Face config.json is read with hf_config=FILE "
                      "(costmodel models FILE shows what is read from it)", path=text)
    if text.endswith(".json"):  # read as TOML it fails on its first line, which says nothing of the cause
        raise json
    if isinstance(name_or_path, Path) or "/" in text or "\\" in text or text.endswith(".toml"):
        from costmodel._files import read_text
        from costmodel.tomlfile import MAX_BYTES

        content = read_text(text, what="the model file", limit=MAX_BYTES)
        if content.lstrip("\ufeff \t\r\n").startswith("{"):  # JSON under another name
            raise json
        return parse_model(content, path=text)
    return model_preset(text)


def list_models() -> ModelList:
    """Every shipped preset, sorted by name.

    >>> [m.name for m in list_models().models]  # doctest: +NORMALIZE_WHITESPACE
    ['deepseek-moe-16b', 'deepseek-v3', 'gpt-3-175b', 'llama-3-405b', 'llama-3-70b', 'llama-3-8b',
     'mixtral-8x7b']
    """
    return ModelList(tuple(model_preset(name) for name in MODEL_NAMES))
