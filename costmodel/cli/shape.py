"""The options that describe a transformer's shape, shared by ``step``, ``plot step`` and ``flops``.

Each is declared once here as an ``Annotated`` alias; :func:`transformer_shape` turns the given
ones into a :class:`~costmodel.step.TransformerShape`, or ``None`` when none was given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from costmodel.cli.options import option, value_parser

if TYPE_CHECKING:
    from costmodel.step import TransformerShape

__all__ = [
    "LAYER_OPTIONS",
    "MOE_OPTIONS",
    "SHAPE_PANEL",
    "DenseLayers",
    "Described",
    "ExpertFfn",
    "ExpertLayers",
    "Experts",
    "Ffn",
    "Gated",
    "HeadDim",
    "Heads",
    "HfConfig",
    "Hidden",
    "KvGroups",
    "KvRank",
    "LayerNorms",
    "Layers",
    "MicroBatch",
    "ModelName",
    "MtpLayers",
    "Peak",
    "QRank",
    "QkNorm",
    "RopeHeadDim",
    "Seq",
    "SharedExperts",
    "TopK",
    "UntiedEmbeddings",
    "ValueHeadDim",
    "Vocab",
    "Window",
    "WindowLayers",
    "described",
    "described_shape",
    "parse_count",
    "transformer_shape",
]

SHAPE_PANEL = "Model: a transformer shape"


def parse_count(text: str) -> int:
    """A count with an SI or B/T suffix: ``51200``, ``50k``, ``312T`` (loads the counts module on use)."""
    from costmodel.training.counts import parse_count as parse

    return parse(text)


def _int(*names: str, metavar: str, help: str) -> Any:
    return option(*names, metavar=metavar, panel=SHAPE_PANEL, help=help)


Layers = Annotated[int | None, _int("--layers", metavar="L", help="Transformer layers (both model forms).")]
Hidden = Annotated[int | None, _int("--hidden", metavar="H", help="Hidden size h.")]
Heads = Annotated[int | None, _int("--heads", metavar="A", help="Attention heads a.")]
Seq = Annotated[int | None, _int("--seq", metavar="S", help="Sequence length s.")]
_counted = value_parser(parse_count)
Vocab = Annotated[int | None, option("--vocab", metavar="V", panel=SHAPE_PANEL, parser=_counted,
                                     help="Vocabulary size: 51200, 50k.")]
Ffn = Annotated[str | None, option("--ffn", metavar="F", panel=SHAPE_PANEL,
                                   help="FFN width over h (default 4; 8/3 allowed).")]
Gated = Annotated[bool | None, option("--gated", panel=SHAPE_PANEL,
                                      help="A gated FFN (SwiGLU: three matrices, as Llama's); --ffn is then "
                                           "its width over h, e.g. 3.25 for Llama 3 405B.")]
KvGroups = Annotated[int | None, _int("--kv-groups", metavar="G",
                                      help="Key-value groups (GQA; default: --heads).")]
HeadDim = Annotated[int | None, _int("--head-dim", metavar="D",
                                     help="Channels of each attention head (default: --hidden / --heads; "
                                          "Gemma 2 9B: 256 at --hidden 3584 --heads 16).")]
Experts = Annotated[int | None, _int("--experts", metavar="E",
                                    help="Routed experts of each mixture-of-experts layer (default: a dense "
                                         "FFN).")]
TopK = Annotated[int | None, _int("--top-k", metavar="K",
                                  help="Experts each token is routed to (with --experts).")]
ExpertFfn = Annotated[str | None, option("--expert-ffn", metavar="F", panel=SHAPE_PANEL,
                                         help="Each expert's FFN width over h (default: --ffn), e.g. 11/16.")]
SharedExperts = Annotated[int | None, _int("--shared-experts", metavar="S",
                                           help="Experts every token also passes through (DeepSeekMoE's "
                                                "shared).")]
DenseLayers = Annotated[int | None, _int("--dense-layers", metavar="N",
                                         help="The first N layers keep a dense FFN of --ffn (DeepSeekMoE: "
                                              "1).")]
ExpertLayers = Annotated[str | None, option(
    "--expert-layers", metavar="PATTERN", panel=SHAPE_PANEL,
    help="The layers with the --experts: E experts, D a dense FFN of --ffn, a count repeating a letter, the "
         "pattern repeated from layer 0 (after the --dense-layers): E (default, every layer), DE (Llama 4 "
         "Maverick: the odd layers), ED (the even layers), 3D5E.")]
UntiedEmbeddings = Annotated[bool | None, option("--untied-embeddings", panel=SHAPE_PANEL,
                                                 help="The output layer has its own V·h matrix (Llama 3, "
                                                      "Mixtral): counted in the parameters, no FLOPs.")]
MOE_OPTIONS: dict[str, Any] = {"experts": Experts, "top_k": TopK, "expert_ffn": ExpertFfn,
                               "shared_experts": SharedExperts, "dense_layers": DenseLayers,
                               "expert_layers": ExpertLayers, "untied_embeddings": UntiedEmbeddings}
"""The options of a mixture of experts (and of untied embeddings), by parameter name."""


def parse_window(text: str) -> int:
    """A sliding window's width: a whole number of tokens ≥ 1 (``4096``; full-width digits read as theirs,
    as every count does)."""
    import re

    from costmodel.errors import InputError
    from costmodel.exact import half_width

    body = half_width(text).strip()
    if not body.isascii() or not re.fullmatch(r"[+-]?[0-9]{1,30}", body):
        raise InputError(f"{text!r} is not a whole number of tokens; e.g. --window 4096")
    value = int(body)
    if value < 1:
        raise InputError(f"{value} is below 1: a query attends at least to its own token; e.g. --window 4096")
    return value


Window = Annotated[int | None, option(
    "--window", metavar="W", panel=SHAPE_PANEL, parser=value_parser(parse_window),
    help="Sliding-window (local) attention of W tokens: each query meets itself and the W − 1 tokens before "
         "it (Mistral 7B: 4096). Causal; a window of at least --seq changes nothing.")]
WindowLayers = Annotated[str | None, option(
    "--window-layers", metavar="PATTERN", panel=SHAPE_PANEL,
    help="The layers with the --window: L local, G global, a count repeating a letter, the pattern repeated "
         "from layer 0: L (default, every layer), LG (Gemma 2: the even layers), 5LG (Gemma 3), 28G8L.")]
LayerNorms = Annotated[int | None, option(
    "--layer-norms", metavar="N", panel=SHAPE_PANEL, min=0,
    help="Norms of width --hidden in each layer, counted in the parameters (default 2; Gemma 2 and 3: 4).")]
QkNorm = Annotated[str | None, option(
    "--qk-norm", metavar="KIND", panel=SHAPE_PANEL,
    help="Query and key norms, counted in the parameters: none (default), head (one of --head-dim each: "
         "Qwen3, Gemma 3) or projection (over the whole projections: OLMo 2).")]
KvRank = Annotated[int | None, option(
    "--kv-rank", metavar="R", panel=SHAPE_PANEL,
    help="Multi-head latent attention (DeepSeek-V2 and V3): the width of the latent each token's keys and "
         "values are compressed into (512); --head-dim is then each query and key head without its rotary "
         "part (128).")]
QRank = Annotated[int | None, option(
    "--q-rank", metavar="R", panel=SHAPE_PANEL,
    help="With --kv-rank: the width of the queries' latent (DeepSeek-V3: 1536; default none, the queries "
         "projected from the hidden state, as DeepSeek-V2-Lite's).")]
RopeHeadDim = Annotated[int | None, option(
    "--rope-head-dim", metavar="D", panel=SHAPE_PANEL,
    help="With --kv-rank: the rotary channels of each query and key head, beside --head-dim (DeepSeek: 64; "
         "default 0).")]
ValueHeadDim = Annotated[int | None, option(
    "--value-head-dim", metavar="D", panel=SHAPE_PANEL,
    help="With --kv-rank: the channels of each value head (DeepSeek: 128; default --head-dim).")]
MtpLayers = Annotated[int | None, option(
    "--mtp-layers", metavar="D", panel=SHAPE_PANEL, min=0,
    help="Multi-token prediction modules after the main layers (DeepSeek-V3: 1), each a layer of the last "
         "layer's kind, a 2h → h projection and its own logits through the shared output layer; on the last "
         "pipeline stage (default 0).")]
LAYER_OPTIONS: dict[str, Any] = {"window": Window, "window_layers": WindowLayers, "layer_norms": LayerNorms,
                                 "qk_norm": QkNorm, "kv_rank": KvRank, "q_rank": QRank,
                                 "rope_head_dim": RopeHeadDim, "value_head_dim": ValueHeadDim,
                                 "mtp_layers": MtpLayers}
"""The options of a layer's attention (its window, its latent attention) and norms, and of the
multi-token prediction modules, by parameter name."""
MicroBatch = Annotated[int, _int("--micro-batch", metavar="B", help="Sequences per micro-batch (default 1).")]


def megatron_option(reads: str, *, panel: str = SHAPE_PANEL) -> Any:
    """The ``--megatron`` option (``Annotated[str | None, megatron_option(...)]``) of a command that *reads*
    what its help names from Megatron-LM's arguments (:func:`described`)."""
    return option("--megatron", metavar="ARGS", panel=panel,
                  help=f"Megatron-LM's arguments, quoted, or @FILE for a file of them (a launch script "
                       f"reads too): {reads}")


ModelName = Annotated[str | None, option(
    "--model", metavar="NAME|FILE", panel=SHAPE_PANEL,
    help="A model preset (costmodel models lists them: gpt-3-175b, llama-3-8b, ...) or a model TOML file; "
         "shape options given too override its values.")]
HfConfig = Annotated[str | None, option(
    "--hf-config", metavar="FILE", panel=SHAPE_PANEL,
    help="A Hugging Face config.json (or the model's folder that holds it): hidden_size, "
         "num_hidden_layers, num_attention_heads, ... (its max_position_embeddings is the default --seq).")]
Peak = Annotated[int | None, option("--peak", metavar="FLOP/S", panel=SHAPE_PANEL, parser=_counted,
                                    help="Peak FLOP/s of one device: 312T, 989e12.")]


def transformer_shape(*, layers: int | None, hidden: int | None, heads: int | None, seq: int | None,
                      vocab: int | None, ffn: str | None = None, kv_groups: int | None = None,
                      head_dim: int | None = None, gated: bool | None = None, experts: int | None = None,
                      top_k: int | None = None,
                      expert_ffn: str | None = None, shared_experts: int | None = None,
                      dense_layers: int | None = None, untied_embeddings: bool | None = None,
                      window: int | None = None, window_layers: str | None = None,
                      layer_norms: int | None = None, qk_norm: str | None = None, kv_rank: int | None = None,
                      q_rank: int | None = None, rope_head_dim: int | None = None,
                      value_head_dim: int | None = None, expert_layers: str | None = None,
                      mtp_layers: int | None = None) -> TransformerShape | None:
    """The shape the options describe; ``None`` when none of --hidden --heads --seq --vocab was given.

    Raises :class:`~costmodel.errors.InputError` naming the options still missing when only some were.
    """
    from costmodel.errors import InputError
    from costmodel.step import TransformerShape

    given = {"layers": layers, "hidden": hidden, "heads": heads, "seq": seq, "vocab": vocab}
    if all(given[n] is None for n in ("hidden", "heads", "seq", "vocab")):
        return None
    missing = [n for n, v in given.items() if v is None]
    if missing:
        raise InputError(f"a transformer shape needs {', '.join(f'--{m} N' for m in missing)}")
    extra: dict[str, Any] = {} if ffn is None else {"ffn_factor": ffn}
    moe = {"experts": experts, "top_k": top_k, "expert_ffn_factor": expert_ffn,
           "shared_experts": shared_experts, "dense_layers": dense_layers, "expert_layers": expert_layers,
           "window": window,
           "window_layers": window_layers, "layer_norms": layer_norms, "qk_norm": qk_norm, "kv_rank": kv_rank,
           "q_rank": q_rank, "rope_head_dim": rope_head_dim, "value_head_dim": value_head_dim,
           "mtp_layers": mtp_layers}
    extra.update((name, value) for name, value in moe.items() if value is not None)
    assert layers is not None and hidden is not None and heads is not None and seq is not None
    assert vocab is not None
    return TransformerShape(layers=layers, hidden=hidden, heads=heads, sequence=seq, vocabulary=vocab,
                            kv_groups=kv_groups, head_dim=head_dim, gated=bool(gated),
                            tied_embeddings=not untied_embeddings,
                            **extra)


class Described:
    """What --model, --hf-config and --megatron describe: shape keywords, step settings, notes (the
    model's name, then *told*: what the description sets and the shape does not model or count), and the
    global batch Megatron-LM's arguments give (``None`` if they give none)."""

    def __init__(self, shape: dict[str, Any], settings: dict[str, Any], notes: list[str],
                 told: tuple[str, ...] = (), global_batch: int | None = None) -> None:
        self.shape = shape
        self.settings = settings
        self.notes = notes
        self.told = told
        self.global_batch = global_batch


def described(*, model: str | None, hf_config: str | None, seq: int | None = None,
              megatron: str | None = None) -> Described:
    """The shape keywords and settings of --model or --hf-config (one of them), with Megatron-LM's
    arguments (:func:`costmodel.describe.megatron.megatron_arguments`) over them; empty without any."""
    from costmodel.errors import InputError

    if model is not None and hf_config is not None:
        raise InputError("--model and --hf-config both describe the model; pass one of them")
    out = Described({}, {}, [])
    if model is not None:
        from costmodel.describe.models import load_model

        preset = load_model(model)
        out = Described(dict(preset.shape), dict(preset.settings), [f"model: {preset.title}"])
    elif hf_config is not None:
        from costmodel.describe.hf import read_hf_config

        found = read_hf_config(hf_config, sequence=seq)
        told = tuple(found.notes)  # what a config.json sets and the shape does not model
        out = Described(dict(found.shape), dict(found.settings), [f"model: {found.title}", *told], told)
    if megatron is not None:
        from costmodel.describe.megatron import megatron_arguments

        args = megatron_arguments(megatron)
        out.shape.update(args.shape)
        out.settings.update(args.settings)
        out.global_batch = args.global_batch
        unread: tuple[str, ...] = ()
        if args.unread:
            unread = ("Megatron-LM arguments not modelled: " + " ".join(args.unread),)
        if args.words:
            count = len(args.words)
            unread += (f"{count} word{'s' if count > 1 else ''} that {'are' if count > 1 else 'is'} no "
                       f"Megatron-LM argument left out (a script's commands and shell syntax), from "
                       f"{' '.join(args.words[:3])}{' …' if count > 3 else ''}",)
        out.notes.extend((*args.notes, *unread))
        out.told = (*out.told, *args.notes, *unread)
    return out


def described_shape(base: dict[str, Any], *, layers: int | None, hidden: int | None, heads: int | None,
                    seq: int | None, vocab: int | None, ffn: str | None = None, kv_groups: int | None = None,
                    head_dim: int | None = None, gated: bool | None = None, notes: list[str] | None = None,
                    experts: int | None = None,
                    top_k: int | None = None, expert_ffn: str | None = None,
                    shared_experts: int | None = None,
                    dense_layers: int | None = None, untied_embeddings: bool | None = None,
                    window: int | None = None, window_layers: str | None = None,
                    layer_norms: int | None = None, qk_norm: str | None = None, kv_rank: int | None = None,
                    q_rank: int | None = None, rope_head_dim: int | None = None,
                    value_head_dim: int | None = None, expert_layers: str | None = None,
                    mtp_layers: int | None = None) -> TransformerShape | None:
    """The shape of *base* (shape keywords a model description gave) with the options given over it; with
    no *base*, :func:`transformer_shape` of the options alone.  A --window over a model's keeps the layers
    its pattern gives them, unless --window-layers gives others."""
    layered: dict[str, Any] = {"window": window, "window_layers": window_layers, "layer_norms": layer_norms,
                               "qk_norm": qk_norm, "kv_rank": kv_rank, "q_rank": q_rank,
                               "rope_head_dim": rope_head_dim, "value_head_dim": value_head_dim,
                               "mtp_layers": mtp_layers}
    if not base:
        return transformer_shape(layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab, ffn=ffn,
                                 kv_groups=kv_groups, head_dim=head_dim, gated=gated, experts=experts,
                                 top_k=top_k,
                                 expert_ffn=expert_ffn, shared_experts=shared_experts,
                                 dense_layers=dense_layers, untied_embeddings=untied_embeddings,
                                 expert_layers=expert_layers, **layered)
    from costmodel.describe.models import build_shape
    from costmodel.exact import parse_number

    given: dict[str, Any] = {"layers": layers, "hidden": hidden, "heads": heads, "sequence": seq,
                             "vocabulary": vocab, "kv_groups": kv_groups, "head_dim": head_dim,
                             "gated": gated, "experts": experts, "top_k": top_k,
                             "shared_experts": shared_experts, "dense_layers": dense_layers,
                             "expert_layers": expert_layers,
                             "tied_embeddings": False if untied_embeddings else None, **layered}
    if ffn is not None:
        given["ffn_factor"] = parse_number(ffn, what="FFN factor")
    if expert_ffn is not None:
        given["expert_ffn_factor"] = parse_number(expert_ffn, what="expert FFN factor")
    merged = {**base, **{k: v for k, v in given.items() if v is not None}}
    if top_k is not None and merged.get("experts") in (None, 0, 1):  # a model file's may go, not an option
        from costmodel.errors import InputError

        raise InputError(f"top_k={top_k} describes a mixture of experts, and the model is dense; give "
                         "experts= with it, or leave it out")
    shape: TransformerShape = build_shape(merged, notes=notes)
    return shape
