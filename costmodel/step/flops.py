"""Model FLOPs of a decoder-only transformer from its shape, per layer and per iteration.

A layer's forward pass on a micro-batch of B sequences of s tokens, hidden size h, a attention
heads of size d (``head_dim``; h/a unless given), g key-value groups (GQA; g = a is multi-head
attention) and an FFN of f·h units, counts 2 FLOPs per multiply-add of each matrix product (Narayanan
et al. SC'21, section 5.1 and appendix; Megatron-LM ``num_floating_point_operations``):

    QKV projection      2·B·s·h·(a + 2g)·d
    attention scores    2·B·s²·a·d (QKᵀ)      and   2·B·s²·a·d (scores × V)
    output projection   2·B·s·a·d·h
    MLP                 2·B·s·h·(f·h)·m        m = 2 matrices, 3 with a gated (SwiGLU) unit
    logits              2·B·s·h·V              (once per iteration, not per layer)

With d = h/a these are Narayanan et al.'s 2·B·s·h·(h + 2·h·g/a), 2·B·s²·h twice and 2·B·s·h²
exactly.  A head width other than h/a (Gemma 2: h 3584, 16 heads of 256, Team et al. 2024, arXiv
2408.00118, table 1; Mistral NeMo and Qwen3: 32 or 64 heads of 128 at h 5120; the ``head_dim`` key of
their Hugging Face configurations) makes the queries and the attention a·d wide, the keys and values
g·d, and the output projection map a·d back to h; the products are counted on those widths.

Multi-head latent attention (MLA: DeepSeek-V2, DeepSeek-AI 2024, arXiv:2405.04434, section 2.1; DeepSeek-V3,
arXiv:2412.19437, section 2.1.1; Kimi K2) compresses each token's keys and values into a latent of d_c
(``kv_rank``) channels and its queries into one of d_c' (``q_rank``), and up-projects them to every head:
a query and key head is d + d_r wide (d without the rotary embedding, d_r with it; DeepSeek's
``qk_nope_head_dim`` and ``qk_rope_head_dim``), a value head d_v.  The projections are, as
``DeepseekV3Attention`` builds them,

    q_a_proj, q_b_proj  2·B·s·(h·d_c' + d_c'·a·(d + d_r))     (q_proj 2·B·s·h·a·(d + d_r) without d_c')
    kv_a_proj_with_mqa  2·B·s·h·(d_c + d_r)                    (the latent and the keys' shared rotary part)
    kv_b_proj           2·B·s·d_c·a·(d + d_v)                  (each head's keys and values)
    attention scores    2·B·s²·a·(d + d_r)    and   2·B·s²·a·d_v (scores × V)
    output projection   2·B·s·a·d_v·h

which all count as the QKV projection of the standard layer does, one multiply-add per weight and token.

The backward pass is twice the forward (a gradient for the input and one for the weights);
full activation recomputation runs each layer's forward once more (not the logits).  With
g = a, f = 4, no gate and no causal saving this is Narayanan et al.'s equation (3),

    96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))      with full recomputation,
    72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))      without (their "model FLOPs"),

and with ``causal=True`` (the two attention products halved, the causal mask's zeros skipped)
and no recomputation it is the dense-transformer path of Megatron-LM's
``num_floating_point_operations`` (megatron/training/training.py), whose
``forward_backward_expansion_factor = 3`` and ``fma_expansion_factor = 2`` are the 3× and 2×
above.  The PaLM convention (Chowdhery et al. 2022, appendix B) counts 6·N FLOPs per token for
the N weights plus 12·l·h·s per token for attention; without recomputation or the causal
saving, ``total == six_n_flops + 12·l·a·d·s·tokens`` holds exactly (PaLM's 12·L·H·Q·T: H heads of
Q channels; a·d = h unless ``head_dim`` says otherwise; 6·l·a·(d + d_r + d_v) with latent attention) (N
counts the matrices only: no biases, norms or position embeddings; the logits share the V·h input
embedding).

A mixture-of-experts (MoE) layer replaces the MLP by a router, a T × E × h product
(2·B·s·h·E; Lepikhin et al. 2021, section 2.1), the k experts each token is routed to
(2·B·s·k·m·h·f_e: the active experts, not the E of the parameters; Fedus et al. 2022, section 2;
Jiang et al. 2024, section 2) and the S shared experts every token passes through
(2·B·s·S·m·h·f_e; Dai et al. 2024, section 3.2); the first ``dense_layers`` keep the dense MLP, and so
do the layers the ``expert_layers`` pattern marks D (experts on every other layer: GShard, Lepikhin et
al. 2021, section 2; Llama 4 Maverick, whose dense layers are twice as wide as an expert).  With
a capacity factor c each expert runs a block of c·k·T/E tokens (Fedus et al. 2022, equation (3)):
the routed experts' products count c times as much, hardware work and not model work.  N of the
6·N convention is then the active weights (router, k routed and the shared experts, attention, the
output layer), which keeps the identity above exact.  :func:`parameters` counts the parameters as
model cards publish them (embeddings, norms, every expert), total and active: the norms are h for each
of a layer's ``layer_norms`` (2; Gemma 2 and 3: 4) and the final norm, and the query and key norms
(``qk_norm``), weights and no FLOPs, so the identity above stays exact.

Sliding-window (local) attention (``window`` = w tokens, on the layers of ``window_layers``: Mistral 7B,
Jiang et al. 2023, section 2; Gemma 2's alternate layers, Gemma Team 2024, section 2) narrows a layer's
two attention products to the band of the causal mask: each query meets itself and the w − 1 tokens
before it, and the products count s·w − w²/2 query-key pairs for the causal s²/2 (the band's area,
:func:`attention_pairs`, which is s²/2 at w = s), so such a layer's attention is 4·B·a·d·(s·w − w²/2)
FLOPs.  A window needs the causal count (a shape with one counts causally by default); Megatron-LM's
``num_floating_point_operations`` has no window, torchtitan's ``quadratic_attention_flops_per_token``
caps each query's keys at min(s, w) without the causal saving, which :func:`achieved_flops` lists beside
the others.  Every layer is counted by its own kind (:class:`LayerGroup`: its FFN dense or MoE, its
attention local or global), so totals are exact whatever the pattern.

:func:`achieved_flops` divides these counts by a measured iteration time: the model FLOPs (no
recomputation) give the model FLOPs utilization (MFU), the FLOPs as run (with the recomputation)
the hardware FLOPs utilization (HFU) and Narayanan et al.'s "teraFLOP/s per GPU" (Chowdhery et
al. 2022, appendix B; Korthikanti et al. 2022).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, to_json_dict
from costmodel.errors import InputError, UnknownNameError, did_you_mean
from costmodel.exact import decimal_text, parse_number
from costmodel.references import (
    CHOWDHERY_2022,
    DAI_2024,
    DAO_2023,
    DEEPSEEK_V2,
    DEEPSEEK_V3,
    FEDUS_2022,
    GEMMA_2024,
    GEMMA_2025,
    JIANG_2023,
    JIANG_2024,
    KAPLAN_2020,
    KORTHIKANTI_2022,
    LEPIKHIN_2021,
    MEGATRON_LM,
    NARAYANAN_2021_MEGATRON,
    SMITH_2022,
    TORCHTITAN,
    Cited,
)
from costmodel.units import parse_time
from costmodel.validate import positive, whole

__all__ = ["CITED", "QK_NORMS", "RECOMPUTATION", "AchievedFlops", "FlopConvention", "LayerFlops",
           "LayerGroup", "ModelFlops", "MtpFlops", "ParameterCount", "TransformerShape", "achieved_flops",
           "attention_pairs", "capacity", "expert_pattern", "layer_pattern", "model_flops", "parameters",
           "pattern_text", "resolve_causal", "shortest_pattern", "tp_share", "window_notes", "window_pattern"]

CITED = (NARAYANAN_2021_MEGATRON, MEGATRON_LM, CHOWDHERY_2022, KAPLAN_2020, KORTHIKANTI_2022, FEDUS_2022,
         LEPIKHIN_2021, JIANG_2024, DAI_2024, SMITH_2022, JIANG_2023, DAO_2023, GEMMA_2024, GEMMA_2025,
         TORCHTITAN, DEEPSEEK_V2, DEEPSEEK_V3)

RECOMPUTATION = ("none", "full")
"""Activation recomputation the FLOP count knows: none, or every layer's forward again."""

QK_NORMS = ("none", "head", "projection")
"""Norms of the queries and keys: none, one weight vector of d per projection shared by its heads (Qwen3,
Gemma 3), or one over the whole projection, a·d and g·d (OLMo 2)."""

_RUN = re.compile(r"([0-9]*)([A-Z])")
_MAX_PATTERN = 10_000


@dataclass(frozen=True, slots=True)
class _Letters:
    """A kind of layer pattern: the parameter that holds it, its two letters (a layer with the feature, one
    without) and the words of its messages."""

    name: str
    on: str
    off: str
    meaning: str  # what the two letters are, as a message names them
    examples: str  # the hint of a pattern the grammar refuses
    short: str  # one example of a count before a letter
    none: str  # what a pattern without the first letter is refused with


_KINDS = {
    "LG": _Letters("window_layers", "L", "G",
                   "L (a layer with the sliding window) and G (a global layer)",
                   "e.g. window_layers='LG' (every other layer, from the first) or window_layers='5LG' (five "
                   "local layers, one global)", "5LG",
                   "gives the sliding window to no layer; give at least one L, or leave window= out for a "
                   "model without one"),
    "ED": _Letters("expert_layers", "E", "D",
                   "E (a layer with the mixture of experts) and D (a layer with the dense FFN)",
                   "e.g. expert_layers='DE' (the odd layers: every other layer, from the second) or "
                   "expert_layers='3D5E' (three dense layers, then five with experts)", "DE",
                   "gives the mixture of experts to no layer; give at least one E, or leave experts= out for "
                   "a dense model"),
}
"""The layer patterns a shape reads, by their letters: the sliding window's and the experts'."""

_SOURCES = (
    NARAYANAN_2021_MEGATRON.at("section 5.1, equation (3), and appendix: FLOPs per iteration"),
    MEGATRON_LM.at("megatron/training/training.py, num_floating_point_operations (dense path)"),
    CHOWDHERY_2022.at("appendix B: 6N + 12·L·H·Q·T FLOPs per token"),
)


def layer_pattern(text: object, *, layers: int, letters: str) -> str:
    """*text*, a pattern of the layers that have a feature, checked and written in its short form.

    *letters* are the pattern's two letters, ``"LG"`` (a layer with the sliding window, a global one: the
    shape's ``window_layers``) or ``"ED"`` (a layer with the mixture of experts, one with the dense FFN:
    ``expert_layers``).  A pattern is a sequence of the two, each after an optional count, repeated over the
    layers from layer 0; lower case is read as upper case.  The short form merges runs and leaves out
    counts of 1, and a pattern of the first letter only is that letter.  A pattern that describes more
    layers than *layers*, or has none of the first letter, is refused with an error naming the parameter.

    >>> layer_pattern("EEEEED", layers=12, letters="ED"), layer_pattern("1d1e", layers=48, letters="ED")
    ('5ED', 'DE')
    >>> layer_pattern("DD", layers=8, letters="ED")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: expert_layers='DD' gives the mixture of experts to no layer; ...
    """
    kind = _KINDS[letters]
    name = kind.name
    if not isinstance(text, str):
        raise InputError(f"{name}={text!r} is not a pattern of {kind.meaning}; e.g. {name}="
                         f"'{kind.on}{kind.off}'")
    body = text.strip().upper()
    grammar = re.compile(f"(?:[0-9]*[{kind.on}{kind.off}])+")
    if len(body) > _MAX_PATTERN or not body.isascii() or not grammar.fullmatch(body):
        raise InputError(f"{name}={text!r} is not a pattern of {kind.meaning}, each after an optional count; "
                         f"{kind.examples}")
    runs = [(int(count) if count else 1, letter) for count, letter in _RUN.findall(body)]
    if any(n < 1 for n, _ in runs):
        raise InputError(f"{name}={text!r} repeats a letter 0 times; give counts of 1 or more, e.g. "
                         f"{name}='{kind.short}'")
    period = sum(n for n, _ in runs)
    if period > layers:
        raise InputError(f"{name}={text!r} describes {period} layers, more than layers={layers}; the "
                         f"pattern repeats over the layers, so give one of at most {layers}")
    found = {letter for _, letter in runs}
    if found == {kind.off}:
        raise InputError(f"{name}={text!r} {kind.none}")
    return kind.on if found == {kind.on} else pattern_text(runs)


def window_pattern(text: object, *, layers: int) -> str:
    """*text*, the layers a sliding window applies to, checked and written in its short form
    (:func:`layer_pattern` with ``L``, a layer with the window, and ``G``, a global layer).

    >>> window_pattern("LLLLLG", layers=26), window_pattern("lg", layers=42), window_pattern("4L", layers=8)
    ('5LG', 'LG', 'L')
    >>> window_pattern("G", layers=8)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: window_layers='G' gives the sliding window to no layer; ...
    """
    return layer_pattern(text, layers=layers, letters="LG")


def expert_pattern(text: object, *, layers: int) -> str:
    """*text*, the layers with a mixture of experts, checked and written in its short form
    (:func:`layer_pattern` with ``E``, a layer with the experts, and ``D``, a layer with the dense FFN).

    >>> expert_pattern("de", layers=48), expert_pattern("3D58E", layers=61), expert_pattern("2E", layers=4)
    ('DE', '3D58E', 'E')
    """
    return layer_pattern(text, layers=layers, letters="ED")


def _runs(pattern: str) -> tuple[tuple[int, bool], ...]:
    """A checked pattern as runs of (layers, whether they have the feature: its first letter, L or E)."""
    return tuple((int(n) if n else 1, letter in "LE") for n, letter in _RUN.findall(pattern))


def _on_below(runs: tuple[tuple[int, bool], ...], end: int) -> int:
    """The layers among 0 to *end* − 1 that *runs*, repeated from layer 0, give the feature, counted without
    listing them."""
    period = sum(n for n, _ in runs)
    cycles, rest = divmod(end, period)
    count = cycles * sum(n for n, on in runs if on)
    for n, on in runs:
        count += min(n, rest) if on else 0
        rest = max(0, rest - n)
    return count


_MAX_STEPS = 10_000_000
"""The most runs :func:`_kinds` walks: two patterns whose common period holds more are refused."""


def _kinds(ffn: tuple[tuple[int, bool], ...], attention: tuple[tuple[int, bool], ...], start: int,
           end: int) -> dict[tuple[bool, bool], list[int]]:
    """Layers *start* to *end* − 1 by kind, (the *ffn* pattern's flag, the *attention* pattern's): each
    kind's [layers, first layer], counted without listing the layers.

    Both patterns repeat from layer 0, so the pair of flags repeats with their common period P (the least
    common multiple of the two periods).  The walk goes run by run over at most one period from *start*;
    the layers after it are whole periods, each counted as the first, and a last part, counted as the first
    period's beginning."""
    from bisect import bisect_right
    from math import lcm

    patterns = (ffn, attention)
    periods = [sum(n for n, _ in runs) for runs in patterns]
    ends = [[sum(n for n, _ in runs[:k + 1]) for k in range(len(runs))] for runs in patterns]
    common = lcm(*periods)
    span = min(common, end - start)
    steps = sum((span // p + 1) * len(runs) for p, runs in zip(periods, patterns, strict=True))
    if steps > _MAX_STEPS:
        raise InputError(f"expert_layers and window_layers repeat together every {common} layers, with "
                         f"{steps} runs to count in that period; give patterns with a shorter common period")
    rest = (end - start) % span if span else 0
    found: dict[tuple[bool, bool], list[int]] = {}
    part: dict[tuple[bool, bool], int] = {}
    i = start
    while i < start + span:
        flags, left = [], start + span - i
        for p, runs, bounds in zip(periods, patterns, ends, strict=True):
            k = bisect_right(bounds, i % p)
            flags.append(runs[k][1])
            left = min(left, bounds[k] - i % p)
        kind = (flags[0], flags[1])
        found.setdefault(kind, [0, i])[0] += left
        if i - start < rest:
            part[kind] = part.get(kind, 0) + min(left, rest - (i - start))
        i += left
    if span < end - start:  # whole periods, and a last part like the first period's beginning
        for kind, entry in found.items():
            entry[0] = entry[0] * ((end - start) // span) + part.get(kind, 0)
    return found


def shortest_pattern(flags: Sequence[bool], letters: str) -> str:
    """The shortest layer pattern in *letters* (``"LG"``, ``"ED"``) that, repeated from layer 0, gives each
    layer of *flags* its kind (the first letter where true); ``""`` when none is true.  The period is the
    list's shortest, found in one pass (Knuth–Morris–Pratt's failure function: the list less its longest
    border).

    >>> shortest_pattern([True, False, True, False, True], "ED")
    'ED'
    >>> shortest_pattern([False] * 3 + [True] * 58, "ED")
    '3D58E'
    """
    if not any(flags):
        return ""
    border = [0] * len(flags)
    for i in range(1, len(flags)):
        k = border[i - 1]
        while k and flags[i] != flags[k]:
            k = border[k - 1]
        border[i] = k + (flags[i] == flags[k])
    period = len(flags) - border[-1]
    return pattern_text((1, letters[0] if flag else letters[1]) for flag in flags[:period])


def pattern_text(runs: Iterable[tuple[int, str]]) -> str:
    """A layer pattern's short form from its runs of (layers, letter): neighbouring runs of one letter
    merged, counts of 1 left out.

    >>> pattern_text([(2, "L"), (3, "L"), (1, "G")])
    '5LG'
    """
    merged: list[list[Any]] = []
    for n, letter in runs:
        if merged and merged[-1][1] == letter:
            merged[-1][0] += n
        else:
            merged.append([n, letter])
    return "".join(f"{n if n > 1 else ''}{letter}" for n, letter in merged)


def attention_pairs(sequence: int, *, window: int | None = None, causal: bool = True) -> Fraction:
    """The query-key pairs the two attention products of one sequence and head count, exactly.

    Without the causal saving every query meets every key, s²; with it the products count the causal
    mask's lower triangle as Megatron-LM does, s²/2; with a sliding window w < s the band of the mask that
    the window leaves, s·w − w²/2.  A window of at least s is no window (s²/2).

    Notes
    -----
    The band is the continuous area under the causal mask: a query at position x ∈ [0, s] meets the keys
    in [max(0, x − w), x], min(x, w) of them, and ∫₀ˢ min(x, w) dx = w²/2 + (s − w)·w = s·w − w²/2, which
    is s²/2 at w = s, so windowed and global layers are counted on the same footing.  Counted key by key,
    query i (from 1) meets min(i, w) keys (it and the w − 1 before it: Hugging Face's
    ``sliding_window_overlay``, ``kv_idx > q_idx - sliding_window``), Σ min(i, w) = s·w − w(w − 1)/2:
    the band exceeds the continuous area by w/2 as the causal triangle's s(s + 1)/2 exceeds s²/2 by s/2,
    and the project counts the continuous areas throughout.  FlashAttention-2 skips the blocks the causal
    mask leaves empty (Dao 2023, section 3.1) and, called with ``window_size=(w − 1, 0)``, those outside
    the band: the local attention of Mistral 7B (Jiang et al. 2023, section 2).  torchtitan's count
    (``quadratic_attention_flops_per_token``) gives each query min(s, w) keys without the causal saving,
    s·min(s, w) a sequence; the band is that count less the w²/2 pairs the first w queries, short of a
    full window, do not have.

    References
    ----------
    .. [1] A. Q. Jiang et al. (2023), Mistral 7B, arXiv:2310.06825, section 2 (sliding window attention).
    .. [2] T. Dao (2023), FlashAttention-2, arXiv:2307.08691, section 3.1 (the causal mask's blocks).
    .. [3] Megatron-LM, megatron/training/training.py, ``num_floating_point_operations``: the causal s²/2.
    .. [4] torchtitan, torchtitan/models/utils.py, ``quadratic_attention_flops_per_token``.

    Examples
    --------
    >>> attention_pairs(8192), attention_pairs(8192, window=4096), attention_pairs(8192, causal=False)
    (Fraction(33554432, 1), Fraction(25165824, 1), Fraction(67108864, 1))
    >>> attention_pairs(4096, window=4096) == attention_pairs(4096, window=10**9) == attention_pairs(4096)
    True
    """
    s = Fraction(sequence)
    if not causal:
        return s * s
    if window is None or window >= sequence:
        return s * s / 2
    return s * window - Fraction(window * window, 2)


def resolve_causal(shape: TransformerShape, causal: object) -> bool:
    """Whether *shape*'s attention is counted causally: *causal* as given, or, given as ``None``, causal when
    the shape has a sliding window and full otherwise; a window with ``causal=False`` is refused (a window
    is a band of the causal mask)."""
    if causal is None:
        return shape.window is not None
    if not isinstance(causal, bool):
        raise InputError(f"causal={causal!r} is not True or False")
    if not causal and shape.window is not None:
        raise InputError(f"causal=False with window={shape.window}: a sliding window is a band of the causal "
                         "mask (each query attends to itself and the w − 1 tokens before it), so it needs "
                         "causal attention; drop causal=False, or the window")
    return causal


def window_notes(shape: TransformerShape) -> tuple[str, ...]:
    """What a reader of the counts should know about *shape*'s sliding window: one of at least the sequence
    changes nothing."""
    if shape.window is None or shape.window < shape.sequence:
        return ()
    return (f"sliding window: {shape.window} tokens is not shorter than the sequence of {shape.sequence}, so "
            "every query of its layers meets its whole causal prefix; they count as global attention",)


def _shown(x: object) -> str:
    """A setting as a message shows it: a fraction as its exact decimal (3.5) or p/q (8/3), never a repr."""
    if isinstance(x, Fraction):
        return decimal_text(x) or str(x)
    return repr(x)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformerShape(JSONFields):
    """The shape of a decoder-only transformer.

    Parameters
    ----------
    layers, hidden, heads, sequence, vocabulary : int
        l, h, a, s and V, each ≥ 1; *heads* divides *hidden* unless *head_dim* is given.
    ffn_factor : number, default 4
        The FFN width over h (f, exact: ``Fraction(8, 3)`` is allowed when f·h is whole).
    kv_groups : int, optional
        Key-value groups g of grouped-query attention, dividing *heads*; default *heads* (MHA).
    head_dim : int, optional
        d, the channels of each attention head (query, key and value), ≥ 1; default h/a.  Given, the
        queries are a·d wide and the keys and values g·d, whatever h is: Gemma 2 9B has h = 3584 and
        16 heads of 256 (Team et al. 2024, arXiv 2408.00118, table 1), Mistral NeMo 12B h = 5120 and 32
        heads of 128 (the ``head_dim`` of their Hugging Face configurations).
    gated : bool, default False
        A gated FFN (SwiGLU: three matrices instead of two); the experts' FFNs too.
    experts : int, optional
        E, the routed experts of each mixture-of-experts (MoE) layer; ``None``: a dense FFN.
    top_k : int, optional
        k, the experts each token is routed to, 1 ≤ k ≤ E; required with *experts*.
    expert_ffn_factor : number, optional
        Each expert's FFN width over h (default *ffn_factor*): 11/16 for DeepSeekMoE's 1408 of 2048.
    shared_experts : int, default 0
        Experts every token passes through besides its k routed ones (DeepSeekMoE's shared experts),
        each of the experts' width.
    dense_layers : int, default 0
        The first layers keep a dense FFN of width ffn_factor·h (DeepSeekMoE's first layer).
    expert_layers : str, optional
        Which layers have the mixture of experts: a pattern of ``E`` (experts) and ``D`` (a dense FFN of
        width ffn_factor·h) repeated over the layers from layer 0, a count before a letter repeating it, in
        *window_layers*' grammar: ``E`` every layer (the default), ``DE`` the odd layers (Llama 4 Maverick's
        ``interleave_moe_layer_step`` of 2), ``ED`` the even ones, ``3D58E`` each of 61 layers as listed.  It
        combines with *dense_layers*: layer i has experts when i ≥ dense_layers and the pattern, counted
        from layer 0, says ``E`` at i (DeepSeek's ``first_k_dense_replace`` and ``moe_layer_freq``).
        Written back in *window_layers*' short form, and ``None`` for experts on every layer; a pattern
        longer than the layers, or that leaves no layer with experts, is refused.
    tied_embeddings : bool, default True
        The input embedding is the output layer's matrix; ``False`` counts V·h twice in
        :func:`parameters` and changes no FLOPs.
    window : int, optional
        w, the sliding window of local attention in tokens, ≥ 1: a query attends to itself and the w − 1
        tokens before it (Mistral 7B: 4096 on every layer, Jiang et al. 2023, section 2; Gemma 2: 4096 on
        every other layer, Gemma Team 2024, section 2).  ``None`` (default): every layer attends to its
        whole causal prefix.  A window needs causal attention; one of at least the sequence changes nothing.
    window_layers : str, optional
        Which layers have the window: a pattern of ``L`` (local, windowed) and ``G`` (global) repeated over
        the layers from layer 0, a count before a letter repeating it: ``L`` every layer (the default with
        *window*), ``LG`` the even layers (Gemma 2, gpt-oss), ``5LG`` five local layers then a global one
        (Gemma 3), ``28G8L`` the first 28 global and the next 8 local.  Written back in that form (runs
        merged, ``LLLLLG`` is ``5LG``); a pattern longer than the layers, or with no ``L``, is refused.
    layer_norms : int, default 2
        The norms of width h in each layer, counted in :func:`parameters` (h weights each): 2 before the
        attention and the FFN (Llama; OLMo 2's after them), 4 with the post-norms of Gemma 2 and 3.  No
        FLOPs (the 6·N convention counts matrices only).
    qk_norm : {"none", "head", "projection"}, default "none"
        Norms of the queries and keys: ``"head"``, one weight vector of d shared by the heads for each
        (Qwen3, Gemma 3: 2·d weights a layer); ``"projection"``, over the whole projections (OLMo 2: a·d
        and g·d).  Counted in :func:`parameters`, no FLOPs.
    kv_rank : int, optional
        d_c, the width of the latent that multi-head latent attention (MLA: DeepSeek-V2 and V3, Kimi K2)
        compresses each token's keys and values into, ≥ 1; ``None`` (default): standard attention.  Given,
        *head_dim* is the part of each query and key head without the rotary embedding (d, DeepSeek's
        ``qk_nope_head_dim``) and every head has its own keys and values (*kv_groups* is the heads).
    q_rank : int, optional
        d_c', the width of the queries' latent (DeepSeek-V2 and V3: 1536), ≥ 1, with *kv_rank*; ``None``:
        the queries are projected from the hidden state directly (DeepSeek-V2-Lite).
    rope_head_dim : int, optional
        d_r, the channels of each query and key head that carry the rotary embedding (DeepSeek's decoupled
        RoPE: 64), ≥ 0, with *kv_rank*; ``None``: 0.  The keys' part is one per token, shared by the heads.
    value_head_dim : int, optional
        d_v, the channels of each value head and so of each head's attention output, ≥ 1, with *kv_rank*;
        ``None``: *head_dim*.
    mtp_layers : int, default 0
        D, the multi-token prediction (MTP) modules trained after the main layers, 0 to *layers*
        (DeepSeek-V3 trains one: DeepSeek-AI 2024, arXiv:2412.19437, section 2.2).  Module k normalises the
        previous depth's hidden state and the embedding of the token k ahead, projects their concatenation
        2h → h, runs one transformer layer of the last main layer's kind (its FFN an MoE one when the last
        layer has experts, as Megatron-Core's ``MultiTokenPredictionBlock`` builds it) and predicts through
        a final norm and the output layer, both matrices shared with the main model (:attr:`mtp_parameters`).
    """

    layers: int
    hidden: int
    heads: int
    sequence: int
    vocabulary: int
    ffn_factor: Fraction = Fraction(4)
    kv_groups: int | None = None
    head_dim: int | None = None
    gated: bool = False
    experts: int | None = None
    top_k: int | None = None
    expert_ffn_factor: Fraction | None = None
    shared_experts: int = 0
    dense_layers: int = 0
    expert_layers: str | None = None
    tied_embeddings: bool = True
    window: int | None = None
    window_layers: str | None = None
    layer_norms: int = 2
    qk_norm: str = "none"
    q_rank: int | None = None
    kv_rank: int | None = None
    rope_head_dim: int | None = None
    value_head_dim: int | None = None
    mtp_layers: int = 0

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "sequence", "vocabulary"):
            positive(getattr(self, name), name)
        if self.head_dim is not None:
            positive(self.head_dim, "head_dim")
        elif self.hidden % self.heads:
            raise InputError(f"heads={self.heads!r} does not divide hidden={self.hidden!r}; "
                             "each head has hidden/heads channels unless head_dim= gives its width")
        try:
            factor = parse_number(self.ffn_factor, what="FFN factor")
        except InputError as exc:
            raise InputError(f"ffn_factor={self.ffn_factor!r}: {exc}") from None
        if factor <= 0 or (factor * self.hidden).denominator != 1:
            raise InputError(f"ffn_factor={_shown(factor)} is not a positive factor that gives a whole FFN "
                             f"width with hidden={self.hidden}; give 4, or 8/3 with hidden a multiple of 3")
        object.__setattr__(self, "ffn_factor", factor)
        if self.kv_groups is not None:
            positive(self.kv_groups, "kv_groups")
            if self.heads % self.kv_groups:
                raise InputError(f"kv_groups={self.kv_groups!r} does not divide heads={self.heads!r}; "
                                 "each key-value group serves heads/kv_groups query heads")
        if not isinstance(self.gated, bool):
            raise InputError(f"gated={self.gated!r} is not True or False")
        if not isinstance(self.tied_embeddings, bool):
            raise InputError(f"tied_embeddings={self.tied_embeddings!r} is not True or False")
        self._check_experts()
        self._check_window()
        whole(self.layer_norms, "layer_norms", low=0,
              hint="give the h-wide norms of each layer, e.g. layer_norms=2 (Llama) or layer_norms=4 "
                   "(Gemma 2)")
        if self.qk_norm not in QK_NORMS:
            hint = did_you_mean(str(self.qk_norm), QK_NORMS)
            raise InputError(f"qk_norm={self.qk_norm!r} is not a kind of query and key norm; "
                             + (f"did you mean {hint!r}?" if hint else
                                "give 'none', 'head' (one of head_dim each, Qwen3 and Gemma 3) or "
                                "'projection' (over the whole projections, OLMo 2)"))
        self._check_latent()
        whole(self.mtp_layers, "mtp_layers", low=0, high=self.layers,
              hint=f"give the multi-token prediction modules trained after the {self.layers} main layers, 0 "
                   "(none) to the main layers, e.g. mtp_layers=1 (DeepSeek-V3)")

    def _check_latent(self) -> None:
        """The latent attention's fields: none without *kv_rank*, else widths ≥ 1 (the rotary part ≥ 0) and
        no key-value groups or query-key norms of standard attention's."""
        names = ("q_rank", "rope_head_dim", "value_head_dim")
        if self.kv_rank is None:
            given = [f"{name}={getattr(self, name)!r}" for name in names if getattr(self, name) is not None]
            if given:
                raise InputError(f"{given[0]} describes multi-head latent attention; give kv_rank= (the "
                                 "width of the keys' and values' latent, e.g. 512) with it, or leave it out")
            return
        positive(self.kv_rank, "kv_rank", hint="give the width of the keys' and values' latent, e.g. 512")
        if self.q_rank is not None:
            positive(self.q_rank, "q_rank", hint="give the width of the queries' latent, e.g. 1536, or leave "
                                                 "it out for queries projected from the hidden state")
        if self.rope_head_dim is not None:
            whole(self.rope_head_dim, "rope_head_dim", low=0,
                  hint="give the rotary channels of each query and key head, e.g. 64")
        if self.value_head_dim is not None:
            positive(self.value_head_dim, "value_head_dim",
                     hint="give the channels of each value head, e.g. 128")
        if self.kv_groups is not None and self.kv_groups != self.heads:
            raise InputError(f"kv_groups={self.kv_groups!r} with kv_rank={self.kv_rank}: latent attention "
                             f"gives each of the {self.heads} heads its own keys and values, up-projected "
                             "from the latent; drop kv_groups=")
        if self.qk_norm != "none":
            raise InputError(f"qk_norm={self.qk_norm!r} with kv_rank={self.kv_rank}: latent attention's "
                             "norms are those of its two latents, counted with them; drop qk_norm=")

    def _check_window(self) -> None:
        """The sliding window: none, or a width ≥ 1 and a pattern of the layers it applies to."""
        if self.window is None:
            if self.window_layers is not None:
                raise InputError(f"window_layers={self.window_layers!r} says which layers have a sliding "
                                 "window; give window= (its width in tokens) with it, or leave it out")
            return
        positive(self.window, "window", hint="give the sliding window's width in tokens, e.g. window=4096")
        pattern = "L" if self.window_layers is None else self.window_layers
        object.__setattr__(self, "window_layers", window_pattern(pattern, layers=self.layers))

    def _check_experts(self) -> None:
        """The mixture-of-experts fields: all at their defaults for a dense FFN, else consistent."""
        if self.experts is None:
            given = [f"{name}={_shown(getattr(self, name))}" for name, default in (
                ("top_k", None), ("expert_ffn_factor", None), ("shared_experts", 0), ("dense_layers", 0),
                ("expert_layers", None)) if getattr(self, name) != default]
            if given:
                raise InputError(f"{given[0]} describes a mixture of experts; give experts= (the routed "
                                 "experts per MoE layer) with it, or leave it out for a dense FFN")
            return
        experts = positive(self.experts, "experts")
        if self.top_k is None:
            raise InputError(f"experts={experts} needs top_k= (the experts each token is routed to, 1 to "
                             f"{experts}); e.g. top_k=2 as Mixtral")
        whole(self.top_k, "top_k", low=1, high=experts,
              hint=f"each token is routed to 1 to {experts} of the experts=, e.g. top_k=2")
        if self.expert_ffn_factor is not None:
            try:
                factor = parse_number(self.expert_ffn_factor, what="expert FFN factor")
            except InputError as exc:
                raise InputError(f"expert_ffn_factor={self.expert_ffn_factor!r}: {exc}") from None
            if factor <= 0 or (factor * self.hidden).denominator != 1:
                raise InputError(f"expert_ffn_factor={_shown(self.expert_ffn_factor)} is not a positive "
                                 "number with a whole expert_ffn_factor·hidden; e.g. 11/16 for 1408 of "
                                 "hidden 2048")
            object.__setattr__(self, "expert_ffn_factor", factor)
        whole(self.shared_experts, "shared_experts", low=0,
              hint="give the always-active experts of each MoE layer, e.g. shared_experts=2")
        whole(self.dense_layers, "dense_layers", low=0, high=self.layers - 1,
              hint=f"the first layers keep a dense FFN and at least one of the {self.layers} layers is a "
                   "mixture of experts; e.g. dense_layers=1")
        if self.expert_layers is None:
            return
        pattern = expert_pattern(self.expert_layers, layers=self.layers)
        object.__setattr__(self, "expert_layers", None if pattern == "E" else pattern)
        if not self.moe_layers:
            raise InputError(f"expert_layers={pattern!r} with dense_layers={self.dense_layers} leaves no "
                             f"layer with experts among the {self.layers}: a layer has them when it comes "
                             f"after the first {self.dense_layers} and the pattern, repeated from layer 0, "
                             "says E for it; give fewer dense layers or more E")

    @property
    def groups(self) -> int:
        """g: the key-value groups (the heads when none are given)."""
        return self.heads if self.kv_groups is None else self.kv_groups

    @property
    def head_width(self) -> int:
        """d: the channels of one attention head, *head_dim* or h/a (with latent attention, the part of each
        query and key head without the rotary embedding)."""
        return self.hidden // self.heads if self.head_dim is None else self.head_dim

    @property
    def latent(self) -> bool:
        """Whether the attention is multi-head latent attention (a *kv_rank* is given)."""
        return self.kv_rank is not None

    @property
    def rope_width(self) -> int:
        """d_r: the rotary channels of each query and key head of latent attention (0 without)."""
        return self.rope_head_dim or 0

    @property
    def query_head_width(self) -> int:
        """The channels of one query (and key) head in the attention scores: d, or d + d_r with latent
        attention."""
        return self.head_width + self.rope_width

    @property
    def value_head_width(self) -> int:
        """The channels of one value head and of its attention output: d, or d_v with latent attention."""
        return self.head_width if self.value_head_dim is None else self.value_head_dim

    @property
    def attention_width(self) -> int:
        """a·d: the width of the queries (h when d = h/a; a·(d + d_r) with latent attention)."""
        return self.heads * self.query_head_width

    @property
    def kv_width(self) -> int:
        """g·d: the width of the keys and of the values (h·g/a when d = h/a); latent attention's differ,
        :attr:`key_width` and :attr:`value_width`."""
        return self.groups * self.head_width

    @property
    def key_width(self) -> int:
        """The width of the keys the attention scores meet: g·d, or a·(d + d_r) with latent attention."""
        return self.groups * self.query_head_width

    @property
    def value_width(self) -> int:
        """The width of the values: g·d, or a·d_v with latent attention."""
        return self.groups * self.value_head_width

    @property
    def context_width(self) -> int:
        """The width of the attention's output, the output projection's input: a·d, or a·d_v with latent
        attention."""
        return self.heads * self.value_head_width

    @property
    def attention_matrices(self) -> tuple[int, ...]:
        """The weights of each of one layer's attention matrices, the output projection last.

        Standard attention: Q, K and V, h·(a + 2g)·d, and the output projection a·d·h.  Multi-head latent
        attention, as DeepSeek's modeling code builds it (DeepSeek-AI 2024, arXiv:2405.04434, section 2.1;
        ``DeepseekV3Attention``): ``q_a_proj`` h × d_c' and ``q_b_proj`` d_c' × a·(d + d_r) (or ``q_proj``
        h × a·(d + d_r) without *q_rank*), ``kv_a_proj_with_mqa`` h × (d_c + d_r), ``kv_b_proj``
        d_c × a·(d + d_v) and ``o_proj`` a·d_v × h.
        """
        h, a = self.hidden, self.heads
        output = self.context_width * h
        if self.kv_rank is None:
            return h * (self.attention_width + self.key_width + self.value_width), output
        queries = ((self.attention_width * h,) if self.q_rank is None
                   else (h * self.q_rank, self.q_rank * self.attention_width))
        return (*queries, h * (self.kv_rank + self.rope_width),
                self.kv_rank * a * (self.head_width + self.value_head_width), output)

    @property
    def duplicated_matrices(self) -> tuple[bool, ...]:
        """Which of :attr:`attention_matrices` every tensor-parallel rank holds whole: latent attention's
        down-projections (``q_a_proj`` and ``kv_a_proj_with_mqa``), which Megatron-Core's
        ``MLASelfAttention`` builds as ``TELinear`` with ``parallel_mode="duplicated"``; none of standard
        attention's, which tensor parallelism splits by heads."""
        if self.kv_rank is None:
            return (False, False)
        queries = (False,) if self.q_rank is None else (True, False)
        return (*queries, True, False, False)

    @property
    def duplicated_parameters(self) -> int:
        """Weights of one layer that every tensor-parallel rank holds whole (:attr:`duplicated_matrices`):
        h·d_c' + h·(d_c + d_r) with latent attention (h·(d_c + d_r) without *q_rank*), 0 without."""
        return sum(x for x, whole in zip(self.attention_matrices, self.duplicated_matrices, strict=True)
                   if whole)

    @property
    def ffn_hidden(self) -> int:
        """f·h, the FFN width."""
        return int(self.ffn_factor * self.hidden)

    @property
    def matrices(self) -> int:
        """m: the matrices of an FFN (and of each expert), 3 gated (SwiGLU), else 2."""
        return 3 if self.gated else 2

    @property
    def qkv_parameters(self) -> int:
        """Weights of the matrices that make one layer's queries, keys and values: h·(a + 2g)·d, or latent
        attention's down- and up-projections (:attr:`attention_matrices` but the output projection)."""
        return sum(self.attention_matrices[:-1])

    @property
    def attention_parameters(self) -> int:
        """Weights of one layer's attention matrices: h·(a + 2g)·d for Q, K and V, and a·d·h for the output
        projection; h·(h + 2h·g/a) + h² with d = h/a (Narayanan et al. 2021, appendix); latent attention's
        are its down- and up-projections and a·d_v·h (:attr:`attention_matrices`)."""
        return sum(self.attention_matrices)

    @property
    def layer_parameters(self) -> int:
        """Weights of one dense layer's matrices: h·(a + 2g)·d + a·d·h + m·h·f·h."""
        return self.attention_parameters + self.matrices * self.hidden * self.ffn_hidden

    @property
    def moe(self) -> bool:
        """Whether the FFN of (some) layers is a mixture of experts."""
        return self.experts is not None

    @property
    def moe_layers(self) -> int:
        """The layers with a mixture of experts (0 for a dense shape), counted without listing them."""
        return self._moe_below(self.layers)

    def _expert_runs(self) -> tuple[tuple[int, bool], ...]:
        """The expert pattern as runs of (layers, with experts): every layer without a pattern."""
        return ((1, True),) if self.expert_layers is None else _runs(self.expert_layers)

    def _moe_below(self, end: int) -> int:
        """The layers with experts among layers 0 to *end* − 1: those from ``dense_layers`` on that the
        pattern gives them."""
        if not self.moe or end <= self.dense_layers:
            return 0
        runs = self._expert_runs()
        return _on_below(runs, end) - _on_below(runs, self.dense_layers)

    @property
    def first_moe_layer(self) -> int:
        """The first layer with a mixture of experts (0 for a dense shape: its first layer, of the shape's
        kind)."""
        if not self.moe:
            return 0
        runs = self._expert_runs()
        period = sum(n for n, _ in runs)
        start, index = self.dense_layers, self.dense_layers // period * period
        for n, on in runs * 2:  # from dense_layers' place in the pattern, at most a period on
            if on and index + n > start:
                return max(index, start)
            index += n
        raise AssertionError("a checked shape has a layer with experts")  # pragma: no cover

    @property
    def first_dense_layer(self) -> int | None:
        """The first layer with the dense FFN (0 for a dense shape; ``None`` when every layer has experts)."""
        if not self.moe:
            return 0
        if self.dense_layers:
            return 0
        runs = self._expert_runs()
        return next((sum(n for n, _ in runs[:k]) for k, (_, on) in enumerate(runs) if not on), None)

    @property
    def expert_ffn_hidden(self) -> int:
        """The FFN width of one routed or shared expert (the dense FFN's when no factor is given)."""
        factor = self.ffn_factor if self.expert_ffn_factor is None else self.expert_ffn_factor
        return int(factor * self.hidden)

    @property
    def expert_parameters(self) -> int:
        """Weights of one expert's matrices: m·h·f_e."""
        return self.matrices * self.hidden * self.expert_ffn_hidden

    def _window_runs(self) -> tuple[tuple[int, bool], ...]:
        """The window pattern as runs of (layers, windowed): no layer without a window."""
        return ((1, False),) if self.window_layers is None else _runs(self.window_layers)

    def is_windowed_layer(self, index: int) -> bool:
        """Whether layer *index* (from 0) has the sliding window (its pattern repeated over the layers)."""
        return self._windowed_below(index + 1) > self._windowed_below(index)

    def _windowed_below(self, end: int) -> int:
        """The layers with the window among layers 0 to *end* − 1, counted without listing them."""
        return 0 if self.window is None else _on_below(self._window_runs(), end)

    @property
    def windowed_layers(self) -> int:
        """The layers with the sliding window (0 without one)."""
        return self._windowed_below(self.layers)

    def layer_groups(self) -> tuple[tuple[bool, bool, int], ...]:
        """The layers in groups alike, as (MoE, sliding window, layers), in the order each kind first
        appears: the FFN (in a mixture of experts, dense on the first ``dense_layers`` and where the expert
        pattern says D) and the attention (the window's pattern) of each layer, counted without listing
        them: the two patterns repeat together over their common period."""
        attention = self._window_runs()
        dense: tuple[tuple[int, bool], ...] = ((1, False),)
        segments = [(dense, 0, self.dense_layers if self.moe else self.layers)]
        if self.moe:
            segments.append((self._expert_runs(), self.dense_layers, self.layers))
        found: dict[tuple[bool, bool], list[int]] = {}
        for ffn, start, end in segments:
            if end > start:
                for kind, (n, first) in _kinds(ffn, attention, start, end).items():
                    entry = found.setdefault(kind, [0, first])
                    entry[0] += n
        return tuple((moe, windowed, found[moe, windowed][0])
                     for moe, windowed in sorted(found, key=lambda kind: found[kind][1]))

    def is_moe_layer(self, index: int) -> bool:
        """Whether layer *index* (from 0) has a mixture of experts: from ``dense_layers`` on, where the
        expert pattern says E."""
        return self._moe_below(index + 1) > self._moe_below(index)

    def layer_weights(self, index: int) -> tuple[int, int]:
        """Layer *index*'s matrices as (replicated, routed-expert) weights: the attention and the dense FFN,
        or the attention, router and shared experts, and the E routed experts (which expert parallelism
        divides)."""
        if not self.is_moe_layer(index):
            return self.layer_parameters, 0
        assert self.experts is not None
        replicated = (self.attention_parameters + self.hidden * self.experts
                      + self.shared_experts * self.expert_parameters)
        return replicated, self.experts * self.expert_parameters

    @property
    def active_layer_parameters(self) -> int:
        """Weights of one MoE layer's matrices a token uses: attention, router, k routed and the shared
        experts (a dense layer's for a dense shape)."""
        if not self.moe:
            return self.layer_parameters
        assert self.experts is not None and self.top_k is not None
        return (self.attention_parameters + self.hidden * self.experts
                + (self.top_k + self.shared_experts) * self.expert_parameters)

    @property
    def norm_parameters(self) -> int:
        """The norm weights of one layer: h for each of its *layer_norms*, the query and key norms, 2·d
        (``head``) or a·d + g·d (``projection``), and latent attention's norms of its latents, d_c' + d_c."""
        qk = {"none": 0, "head": 2 * self.head_width,
              "projection": self.attention_width + self.kv_width}[self.qk_norm]
        latent = (self.q_rank or 0) + (self.kv_rank or 0)  # q_a_layernorm and kv_a_layernorm
        return self.layer_norms * self.hidden + qk + latent

    @property
    def parameters(self) -> int:
        """N of the 6·N convention: the matrices each token multiplies, every layer's (for a mixture of
        experts the active ones: router, k routed and the shared experts) and the V·h output layer (the
        input embedding is a lookup), and each multi-token prediction module's layer and projection
        (:attr:`mtp_active_matrices`) with the V·h output layer once more, which each module multiplies
        again.  :func:`parameters` counts the parameters as model cards do."""
        return (self.moe_layers * self.active_layer_parameters
                + (self.layers - self.moe_layers) * self.layer_parameters + self.vocabulary * self.hidden
                + self.mtp_layers * (self.mtp_active_matrices + self.vocabulary * self.hidden))

    @property
    def mtp_moe(self) -> bool:
        """Whether the multi-token prediction modules' layer has a mixture of experts: the last main layer's
        kind (Megatron-LM's ``num_floating_point_operations`` counts ``last_layer_is_moe``)."""
        return self.is_moe_layer(self.layers - 1)

    @property
    def mtp_window(self) -> bool:
        """Whether the multi-token prediction modules' layer has the sliding window: the last main layer's."""
        return self.is_windowed_layer(self.layers - 1)

    @property
    def mtp_projection_parameters(self) -> int:
        """M_k of one multi-token prediction module, h × 2h: 2h² weights (DeepSeek-AI 2024, arXiv:2412.19437,
        section 2.2, equation (21); ``eh_proj`` in DeepSeek-V3's checkpoint)."""
        return 2 * self.hidden * self.hidden

    @property
    def mtp_weights(self) -> tuple[int, int]:
        """One multi-token prediction module's matrices as (replicated, routed-expert) weights: its layer's
        (:meth:`layer_weights` of the last main layer) and the 2h² projection with the replicated ones."""
        replicated, routed = self.layer_weights(self.layers - 1)
        return replicated + self.mtp_projection_parameters, routed

    @property
    def mtp_active_matrices(self) -> int:
        """The matrices of one multi-token prediction module a token multiplies, the shared output layer
        left out: its layer's (active experts only) and the 2h² projection."""
        layer = self.active_layer_parameters if self.mtp_moe else self.layer_parameters
        return layer + self.mtp_projection_parameters

    @property
    def mtp_norm_parameters(self) -> int:
        """The norm weights of one multi-token prediction module: its layer's (:attr:`norm_parameters`) and
        three of h, the norms of the hidden state and of the embedding before the projection and the final
        norm before the shared output layer (``hnorm``, ``enorm`` and ``shared_head.norm``)."""
        return self.norm_parameters + 3 * self.hidden

    @property
    def mtp_parameters(self) -> int:
        """The weights of one multi-token prediction module that the main model does not hold: its layer's
        matrices (every routed expert), the projection and its norms.  The embedding and the output layer
        are the main model's, shared (section 2.2: "shared embedding layer" and "shared output head"), so
        they are not counted again; a checkpoint that stores a copy of each for the module (DeepSeek-V3's
        ``model.layers.61.embed_tokens`` and ``shared_head.head``) holds 2·V·h more."""
        replicated, routed = self.mtp_weights
        return replicated + routed + self.mtp_norm_parameters

    @property
    def mtp_active_parameters(self) -> int:
        """The weights of one multi-token prediction module a token uses, the shared embedding and output
        layer left out: :attr:`mtp_parameters` with the k routed experts in place of E."""
        return self.mtp_active_matrices + self.mtp_norm_parameters


def tp_share(parameters: int, *, tp: int, duplicated: int = 0) -> Fraction:
    """The weights one of *tp* tensor-parallel ranks holds of *parameters*: 1/tp of them, but for the
    *duplicated* ones among them (:attr:`TransformerShape.duplicated_parameters` of its layers), which each
    rank holds whole.

    >>> tp_share(100, tp=4), tp_share(100, tp=4, duplicated=20)
    (Fraction(25, 1), Fraction(40, 1))
    """
    return Fraction(parameters + (tp - 1) * duplicated, tp)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParameterCount(JSONFields):
    """The parameters of a transformer as model cards count them, by part (see :func:`parameters`).

    *routed_experts* holds every routed expert (E per MoE layer), *active_routed_experts* the k a token
    uses; ``total`` is the sum of the parts, ``active`` the same with the k routed experts in place of E.
    The parts are the main model's; *mtp* is the multi-token prediction modules' own weights (their layers,
    projections and norms, the shared embedding and output layer not again), *mtp_active* what a token uses
    of them, and *main* and *main_active* the main model's counts, the published ones (DeepSeek-V3: 671B
    and 37B): ``total = main + mtp``, ``active = main_active + mtp_active``.
    """

    embeddings: int
    attention: int
    dense_ffn: int
    routed_experts: int
    shared_experts: int
    router: int
    norms: int
    active_routed_experts: int
    total: int
    active: int
    sources: tuple[Cited, ...] = ()
    main: int = 0
    main_active: int = 0
    mtp: int = 0
    mtp_active: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-native values; the main model's and the multi-token prediction modules'
        counts only for a shape with such modules (without, ``total`` and ``active`` are the main model's)."""
        return to_json_dict(self, skip=() if self.mtp else ("main", "main_active", "mtp", "mtp_active"))


_MOE_SOURCES = (
    FEDUS_2022.at("section 2.1, equation (3) and figure 3: the router and the expert capacity"),
    LEPIKHIN_2021.at("section 2.1 and algorithm 1: top-2 gating over E experts, the router's h × E weights"),
    JIANG_2024.at("section 2 and table 1: 8 experts of a SwiGLU FFN, top-2, 46.7B and 12.9B parameters"),
    DAI_2024.at("sections 3 and 5.1: shared and fine-grained routed experts, the first layer dense; 16.4B "
                "total and 2.8B activated parameters"),
)


_LATENT_SOURCES = (
    DEEPSEEK_V2.at("section 2.1: multi-head latent attention, low-rank key-value and query compression and "
                   "the decoupled rotary embedding"),
    DEEPSEEK_V3.at("section 2.1.1: multi-head latent attention; the abstract and section 4.2: 671B total and "
                   "37B activated parameters"),
)


_MTP_SOURCES = (
    DEEPSEEK_V3.at("section 2.2, equations (21) to (25): multi-token prediction modules of a shared "
                   "embedding, two norms, a 2h → h projection, one transformer block and the shared output "
                   "head; section 4.2: the depth D = 1"),
    MEGATRON_LM.at("megatron/training/training.py, num_floating_point_operations: the MTP norms and "
                   "projection, (1 + mtp_num_layers) logits, and last_layer_is_moe × mtp_num_layers more "
                   "layers"),
)


_WINDOW_SOURCES = (
    JIANG_2023.at("section 2: sliding window attention, each token attending to the W before it"),
    DAO_2023.at("section 3.1: the blocks the mask leaves empty are skipped"),
    GEMMA_2024.at("section 2: local sliding window and global attention in alternating layers"),
    GEMMA_2025.at("section 2: five local layers for each global one, a window of 1024"),
    TORCHTITAN.at("torchtitan/models/utils.py, quadratic_attention_flops_per_token: min(s, w) keys a query"),
)


def parameters(shape: TransformerShape) -> ParameterCount:
    """The parameters of *shape* as model cards publish them: total, and active (what one token uses).

    Counted: the input embedding V·h and the output layer's V·h unless they are tied; each layer's
    attention h·(a + 2g)·d + a·d·h, which is h·(h + 2h·g/a) + h² with d = h/a (a head width of its own:
    Gemma 2, Team et al. 2024, arXiv:2408.00118, table 1; the ``head_dim`` of Hugging Face
    configurations); a dense layer's FFN m·h·f; an MoE layer's router h·E (Lepikhin et al. 2021), its E
    routed experts and S shared experts of m·h·f_e each (Dai et al. 2024); and the RMSNorm weights: h for
    each of a layer's ``layer_norms`` (2, before the attention and the FFN; 4 with Gemma 2's and 3's
    post-norms, Gemma Team 2024, table 1) and for the final norm, and the query and key norms (``qk_norm``:
    2·d a layer shared by the heads, Qwen3 and Gemma 3; a·d + g·d over the whole projections, OLMo 2; the
    ``q_norm`` and ``k_norm`` of their Hugging Face modeling files).  Multi-head latent attention counts its
    down- and up-projections in place of Q, K and V, h·d_c' + d_c'·a·(d + d_r) + h·(d_c + d_r) +
    d_c·a·(d + d_v), its output projection a·d_v·h, and the norms of its two latents, d_c' + d_c
    (:attr:`TransformerShape.attention_matrices`; DeepSeek-AI 2024, section 2.1).  No biases (the published
    models have none).  The active count replaces the E routed experts by the k a token is routed to (Fedus
    et al. 2022; Jiang et al. 2024).

    References
    ----------
    .. [1] Jiang et al. 2024 (Mixtral of Experts), section 2 and table 1.
    .. [2] Dai et al. 2024 (DeepSeekMoE), section 5.1: 16.4B total, 2.8B activated parameters.
    .. [3] Lepikhin et al. 2021 (GShard), section 2.1; Fedus et al. 2022 (Switch Transformers), section 2.1.
    .. [4] Gemma Team 2024 (Gemma 2), table 1: pre-norm and post-norm; 9B: 9,241,705,984 parameters.
    .. [5] DeepSeek-AI 2024 (DeepSeek-V2), arXiv:2405.04434, section 2.1: multi-head latent attention;
       DeepSeek-AI 2024 (DeepSeek-V3), arXiv:2412.19437, section 2.1 and the abstract: 671B parameters,
       37B activated.

    Examples
    --------
    Mixtral 8×7B (Jiang et al. 2024): 46.7B parameters, 12.9B active.

    >>> mixtral = TransformerShape(layers=32, hidden=4096, heads=32, kv_groups=8, sequence=4096,
    ...                            vocabulary=32000, ffn_factor=Fraction(7, 2), gated=True, experts=8,
    ...                            top_k=2, tied_embeddings=False)
    >>> count = parameters(mixtral)
    >>> count.total, count.active
    (46702792704, 12879925248)

    Gemma 2 9B, four norms a layer (the model card's 9,241,705,984):

    >>> gemma = TransformerShape(layers=42, hidden=3584, heads=16, kv_groups=8, head_dim=256, sequence=8192,
    ...                          vocabulary=256000, ffn_factor=4, gated=True, layer_norms=4)
    >>> parameters(gemma).total
    9241705984

    DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437: 671B parameters, 37B activated), with multi-head
    latent attention:

    >>> v3 = TransformerShape(layers=61, hidden=7168, heads=128, head_dim=128, sequence=4096,
    ...                       vocabulary=129280, ffn_factor=Fraction(18432, 7168), gated=True, experts=256,
    ...                       top_k=8, expert_ffn_factor=Fraction(2048, 7168), shared_experts=1,
    ...                       dense_layers=3, tied_embeddings=False, q_rank=1536, kv_rank=512,
    ...                       rope_head_dim=64, value_head_dim=128)
    >>> count = parameters(v3)
    >>> count.total, count.active
    (671026404352, 37552282624)
    """
    if not isinstance(shape, TransformerShape):
        raise InputError(f"shape={shape!r} is not a TransformerShape")
    h, layers, moe = shape.hidden, shape.layers, shape.moe_layers
    experts, top_k = shape.experts or 0, shape.top_k or 0
    parts = {
        "embeddings": shape.vocabulary * h * (1 if shape.tied_embeddings else 2),
        "attention": layers * shape.attention_parameters,
        "dense_ffn": (layers - moe) * shape.matrices * h * shape.ffn_hidden,
        "routed_experts": moe * experts * shape.expert_parameters,
        "shared_experts": moe * shape.shared_experts * shape.expert_parameters,
        "router": moe * h * experts,
        "norms": layers * shape.norm_parameters + h,
    }
    active_routed = moe * top_k * shape.expert_parameters
    main = sum(parts.values())
    main_active = main - parts["routed_experts"] + active_routed
    mtp, mtp_active = shape.mtp_layers * shape.mtp_parameters, shape.mtp_layers * shape.mtp_active_parameters
    return ParameterCount(**parts, active_routed_experts=active_routed, total=main + mtp,
                          active=main_active + mtp_active, main=main, main_active=main_active, mtp=mtp,
                          mtp_active=mtp_active,
                          sources=((_MOE_SOURCES if shape.moe else ())
                                   + (_LATENT_SOURCES if shape.latent else ())
                                   + (_MTP_SOURCES if shape.mtp_layers else ())))


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerFlops(JSONFields):
    """Forward FLOPs of one transformer layer on one batch, by part, and its training total.

    In an MoE layer *mlp* is the sum of the *router*, the routed *experts* (as run: with a capacity
    factor, capacity-sized blocks) and the *shared* experts; in a dense layer those three are 0.
    """

    qkv: int
    attention: Fraction
    projection: int
    mlp: Fraction
    forward: Fraction
    backward: Fraction
    recompute: Fraction
    total: Fraction
    router: int = 0
    experts: Fraction = Fraction(0)
    shared: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerGroup(JSONFields):
    """The layers of a model that are alike: how many (*layers*), whether their FFN is a mixture of experts
    (*moe*) and their attention has the sliding window (*window*), and one layer's count (*flops*)."""

    layers: int
    moe: bool
    window: bool
    flops: LayerFlops


@dataclass(frozen=True, slots=True, kw_only=True)
class MtpFlops(JSONFields):
    """The FLOPs of a shape's D multi-token prediction modules in one iteration.

    *layer* is one module's transformer layer (the last main layer's kind, its recomputation as a main
    layer's), *projection_forward* one module's 2h → h projection forward, 2·T·2h·h, and *logits_forward*
    its logits through the shared output layer, 2·T·h·V (T the iteration's tokens: each module runs on all
    s positions of a sequence, as Megatron-Core rolls the labels and the input ids one place a depth);
    ``total = modules·(layer.total + 3·(projection_forward + logits_forward))``: the backward twice the
    forward, neither the projection nor the logits recomputed (as the main model's logits are not).
    """

    modules: int
    moe: bool
    window: bool
    layer: LayerFlops
    projection_forward: int
    logits_forward: int
    total: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFlops(JSONFields):
    """Model FLOPs of one iteration (forward, backward, recomputation) on *batch* sequences.

    ``total = Σ group.layers·group.flops.total + logits_forward + logits_backward`` over *groups*, the
    layers alike (:meth:`TransformerShape.layer_groups`: a dense shape without a window has one,
    ``layers·layer.total``); ``six_n_flops`` is the PaLM convention's 6·N·tokens, without the attention
    term, with N the active weights (:attr:`TransformerShape.parameters`).  *layer* is the first layer of
    the model's kind (the first MoE layer of a mixture of experts), and *dense_layer* the first of a
    mixture of experts' dense layers (the first ``dense_layers`` and those its ``expert_layers`` pattern
    leaves dense, when there are any): without a sliding window
    ``total = moe_layers·layer.total + (layers − moe_layers)·dense_layer.total + logits``.
    *capacity_factor* is the experts' capacity the count runs with (``None``: each token's k experts,
    nothing padded or dropped).  *causal* is the count's (a shape with a sliding window counts causally).
    *mtp* is the multi-token prediction modules' count (:class:`MtpFlops`; ``None`` without them), which
    *total* includes besides the layers and the logits.
    """

    shape: TransformerShape
    batch: int
    recompute: str
    causal: bool
    tokens: int
    layer: LayerFlops
    logits_forward: int
    logits_backward: int
    total: Fraction
    parameters: int
    six_n_flops: int
    dense_layer: LayerFlops | None = None
    capacity_factor: Fraction | None = None
    groups: tuple[LayerGroup, ...] = ()
    sources: tuple[Cited, ...] = _SOURCES
    mtp: MtpFlops | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-native values; ``mtp`` only for a shape with multi-token prediction modules."""
        return to_json_dict(self, skip=() if self.mtp is not None else ("mtp",))

    @property
    def per_token(self) -> Fraction:
        """FLOPs per token of the batch."""
        return self.total / self.tokens

    def kind(self, *, moe: bool, window: bool) -> LayerFlops:
        """One layer's count for a layer of that kind (its FFN an MoE one or dense, its attention with the
        sliding window or not)."""
        for g in self.groups:
            if g.moe == moe and g.window == window:
                return g.flops
        raise InputError(f"the model has no {'MoE' if moe else 'dense'} layer "
                         f"{'with' if window else 'without'} the sliding window")

    @property
    def attention(self) -> Fraction:
        """The forward FLOPs of every layer's two attention products, each layer by its own kind."""
        return sum((g.layers * g.flops.attention for g in self.groups), Fraction(0))


def capacity(value: object, name: str = "capacity_factor") -> Fraction | None:
    """A capacity factor read: ``None``, or a number > 0 (the tokens an expert takes over its fair share)."""
    if value is None:
        return None
    try:
        factor = parse_number(value, what="capacity factor")
    except InputError as exc:
        raise InputError(f"{name}={value!r}: {exc}") from None
    if factor <= 0:
        shown = value.strip() if isinstance(value, str) else repr(value)
        raise InputError(f"{name}={shown} is not positive; give the tokens an expert takes over its fair "
                         f"share k·T/E, e.g. {name}=1.25 (Switch Transformers), or none for no dropping")
    return factor


def _layer(shape: TransformerShape, *, batch: int, tokens: int, moe: bool, causal: bool, redo: bool,
           capacity_factor: Fraction | None, window: bool = False) -> LayerFlops:
    h, s = shape.hidden, shape.sequence
    # h·(a + 2g)·d weights for Q, K and V (h·(h + 2h·g/a) when d = h/a), or latent attention's down- and
    # up-projections: one multiply-add per weight and token
    qkv = 2 * tokens * shape.qkv_parameters
    # QKᵀ, 2·d FLOPs per query-key pair and head (2·(d + d_r) with latent attention), and the scores × V,
    # 2·d (2·d_v): 4·B·a·d·s²/2 causal
    pairs = attention_pairs(s, window=shape.window if window else None, causal=causal)
    attention = 2 * batch * (shape.attention_width + shape.context_width) * pairs
    projection = 2 * tokens * shape.context_width * h
    router, experts, shared = 0, Fraction(0), 0
    if moe:
        assert shape.experts is not None and shape.top_k is not None
        router = 2 * tokens * h * shape.experts
        expert = 2 * h * shape.expert_ffn_hidden * shape.matrices  # one token through one expert
        experts = Fraction(tokens * shape.top_k * expert)
        if capacity_factor is not None:
            experts *= capacity_factor
        shared = tokens * shape.shared_experts * expert
        mlp = router + experts + shared
    else:
        mlp = Fraction(2 * tokens * h * shape.ffn_hidden * shape.matrices)
    forward = qkv + attention + projection + mlp
    again = forward if redo else Fraction(0)
    return LayerFlops(qkv=qkv, attention=attention, projection=projection, mlp=mlp, forward=forward,
                      backward=2 * forward, recompute=again, total=3 * forward + again, router=router,
                      experts=experts, shared=shared)


def model_flops(shape: TransformerShape, *, batch: int, recompute: str = "none",
                causal: bool | None = None, capacity_factor: object = None) -> ModelFlops:
    """FLOPs of one training iteration of *shape* on *batch* sequences (see the module notes).

    Parameters
    ----------
    shape : TransformerShape
    batch : int
        B, the sequences of the iteration (the global batch for a whole iteration, a
        micro-batch for one micro-step), ≥ 1.
    recompute : {"none", "full"}
        ``"full"`` adds one forward pass of every layer (not of the logits).
    causal : bool, optional
        Count only the unmasked half of the two attention products, as Megatron-LM does; ``None``
        (default): causal for a shape with a sliding window (whose layers count the band of the causal
        mask, :func:`attention_pairs`), else not.  ``False`` with a window is refused.
    capacity_factor : number, optional
        A mixture of experts' capacity factor c > 0: each expert runs a block of c·k·T/E tokens
        (Fedus et al. 2022, equation (3)), padded or with tokens dropped, so the routed experts' products
        count c times each token's k; ``None`` (default) counts the k experts of every token, the model
        FLOPs.

    Notes
    -----
    An MoE layer's FFN is its router, a T × E × h product (2·T·h·E; Lepikhin et al. 2021, section 2.1),
    the k routed experts of every token, 2·T·k·m·h·f_e (not the E of the parameters: Fedus et al. 2022,
    section 2), and the S shared experts, 2·T·S·m·h·f_e (Dai et al. 2024, section 3.2).  With dense
    shapes the count is unchanged (Narayanan et al.'s equation (3) exactly), and 6·N·tokens with N the
    active weights keeps ``total == six_n_flops + 12·l·a·d·s·tokens`` without recomputation, causal
    saving or capacity factor (a·d = h unless *head_dim* gives another head width).  Each layer is counted
    by its own kind (:class:`LayerGroup`): a layer with the sliding window counts its two attention
    products over the band of the causal mask, s·w − w²/2 query-key pairs instead of s²/2
    (:func:`attention_pairs`); its other products are a global layer's.

    Each of a shape's D multi-token prediction modules (DeepSeek-AI 2024, arXiv:2412.19437, section 2.2)
    adds, per token, its layer's forward (the last main layer's kind), its projection's 2·2h·h and its
    logits' 2·h·V, three times with the backward, and its layer's recomputation (:class:`MtpFlops`), as
    Megatron-LM's ``num_floating_point_operations`` counts them but for the norms, which it counts as
    6·3h FLOPs a token and module and this count, as everywhere, leaves out.  N of 6·N then holds each
    module's active matrices and the output layer once more, so the identity above reads
    ``total == six_n_flops + 12·(l + D)·a·d·s·tokens``.

    Examples
    --------
    >>> gpt3 = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    >>> f = model_flops(gpt3, batch=1536, recompute="full")
    >>> f.total == 96 * 1536 * 2048 * 96 * 12288**2 * (1 + Fraction(2048, 6 * 12288)
    ...                                                + Fraction(51200, 16 * 96 * 12288))
    True
    """
    if not isinstance(shape, TransformerShape):
        raise InputError(f"shape={shape!r} is not a TransformerShape")
    positive(batch, "batch")
    if recompute not in RECOMPUTATION:
        raise UnknownNameError("recomputation", str(recompute), RECOMPUTATION)
    causal = resolve_causal(shape, causal)
    factor = capacity(capacity_factor)
    if factor is not None and not shape.moe:
        raise InputError("capacity_factor= applies to a mixture of experts; give experts= and top_k= in the "
                         "shape, or leave it out")
    h, s = shape.hidden, shape.sequence
    tokens = batch * s
    redo = recompute == "full"
    groups = tuple(LayerGroup(layers=n, moe=moe, window=window, flops=_layer(
        shape, batch=batch, tokens=tokens, moe=moe, causal=causal, redo=redo,
        capacity_factor=factor if moe else None, window=window))
        for moe, window, n in shape.layer_groups())
    first, plain = shape.first_moe_layer, shape.first_dense_layer
    kinds = {(g.moe, g.window): g.flops for g in groups}
    layer = kinds[shape.is_moe_layer(first), shape.is_windowed_layer(first)]
    dense = kinds[False, shape.is_windowed_layer(plain)] if shape.moe and plain is not None else None
    total = sum((g.layers * g.flops.total for g in groups), Fraction(0))
    logits = 2 * tokens * h * shape.vocabulary
    mtp = None
    if shape.mtp_layers:
        moe, window = shape.mtp_moe, shape.mtp_window
        block = kinds[moe, window]  # the last main layer's kind, one of the groups
        projection = 2 * tokens * shape.mtp_projection_parameters  # [h; h] (2h) → h, equation (21)
        d = shape.mtp_layers
        mtp = MtpFlops(modules=d, moe=moe, window=window, layer=block, projection_forward=projection,
                       logits_forward=logits, total=d * (block.total + 3 * (projection + logits)))
        total += mtp.total
    return ModelFlops(
        shape=shape, batch=batch, recompute=recompute, causal=causal, tokens=tokens, layer=layer,
        logits_forward=logits, logits_backward=2 * logits, total=total + 3 * logits,
        parameters=shape.parameters, six_n_flops=6 * shape.parameters * tokens, dense_layer=dense,
        capacity_factor=factor, groups=groups,
        sources=_SOURCES + (_MOE_SOURCES if shape.moe else ()) + (_WINDOW_SOURCES if shape.window else ())
        + (_LATENT_SOURCES if shape.latent else ()) + (_MTP_SOURCES if shape.mtp_layers else ()), mtp=mtp)


_ACHIEVED_SOURCES = (
    *_SOURCES,
    NARAYANAN_2021_MEGATRON.at("section 5.1, Table 1: teraFLOP/s per GPU with the equation (3) count"),
    CHOWDHERY_2022.at("appendix B: model and hardware FLOPs utilization"),
    KORTHIKANTI_2022.at("model FLOPs utilization (MFU) and hardware FLOPs utilization (HFU)"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlopConvention(JSONFields):
    """One way of counting an iteration's FLOPs, and what it implies for a measured run.

    *flops* is the count; *flops_per_s_per_gpu* (given a time and the GPUs) and *utilization* (given a
    peak too) are what a paper using this convention would print for the same run.
    """

    name: str
    flops: Fraction
    flops_per_s_per_gpu: Fraction | None
    utilization: Fraction | None
    source: Cited


@dataclass(frozen=True, slots=True, kw_only=True)
class AchievedFlops(JSONFields):
    """The FLOPs of one training iteration and, given its measured time, the FLOP/s achieved.

    Two counts: ``model_flops`` (forward and backward, no recomputation: the model FLOPs of MFU)
    and ``hardware_flops`` (as run, the recomputation included: the hardware FLOPs of HFU, and
    with full recomputation Narayanan et al.'s equation (3)).  *layer* is one layer's count as
    run.  The rates are ``None`` without *time_s* and *gpus*, the utilizations without
    *peak_flops_per_s* (the peak of one GPU).  ``six_n_ratio`` is 6·N·tokens over
    ``model_flops``.  *total_parameters* and *active_parameters* are :func:`parameters`' counts (the model
    card's: embeddings and norms included); a *capacity_factor* changes the hardware count only (padded
    or dropped expert rows), not the model count.  *groups* are the layers alike as run
    (:class:`LayerGroup`: with a sliding window, its layers and the global ones apart).
    """

    shape: TransformerShape
    batch: int
    tokens: int
    recompute: str
    causal: bool
    layer: LayerFlops
    logits_forward: int
    logits_backward: int
    model_flops: Fraction
    hardware_flops: Fraction
    model_flops_per_token: Fraction
    hardware_flops_per_token: Fraction
    parameters: int
    six_n_flops: int
    six_n_ratio: Fraction
    total_parameters: int
    active_parameters: int
    capacity_factor: Fraction | None
    dense_layer: LayerFlops | None
    groups: tuple[LayerGroup, ...]
    time_s: Fraction | None
    gpus: int | None
    peak_flops_per_s: Fraction | None
    model_flops_per_s_per_gpu: Fraction | None
    hardware_flops_per_s_per_gpu: Fraction | None
    model_flops_per_s: Fraction | None
    hardware_flops_per_s: Fraction | None
    mfu: Fraction | None
    hfu: Fraction | None
    conventions: tuple[FlopConvention, ...] = ()
    sources: tuple[Cited, ...] = _ACHIEVED_SOURCES
    notes: tuple[str, ...] = ()
    main_parameters: int = 0
    main_active_parameters: int = 0
    mtp_parameters: int = 0
    mtp_active_parameters: int = 0
    mtp: MtpFlops | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-native values; the main model's and the multi-token prediction modules' counts
        only for a shape with such modules."""
        skip = () if self.mtp is not None else ("main_parameters", "main_active_parameters", "mtp_parameters",
                                                "mtp_active_parameters", "mtp")
        return to_json_dict(self, skip=skip)


def _peak(value: object) -> Fraction:
    try:
        peak = parse_number(value, what="peak FLOP/s")
    except InputError as exc:
        raise InputError(f"peak_flops={value!r}: {exc}") from None
    if peak <= 0:
        raise InputError(f"peak_flops={value!r} is not positive; give one GPU's peak, e.g. 312e12")
    return peak


def achieved_flops(shape: TransformerShape, *, batch: int, time_s: object = None, gpus: int | None = None,
                   recompute: str = "none", causal: bool | None = None, peak_flops: object = None,
                   capacity_factor: object = None) -> AchievedFlops:
    """FLOPs of one iteration of *shape* on *batch* sequences, and the FLOP/s of a measured run.

    Parameters
    ----------
    shape : TransformerShape
    batch : int
        The global batch B (sequences per iteration), ≥ 1.
    time_s : time, optional
        The measured time of one iteration (seconds, or text such as ``"37.6s"``), > 0.
    gpus : int, optional
        The GPUs that ran it, ≥ 1; given with *time_s*.
    recompute : {"none", "full"}
        The activation recomputation of the run: it adds to the hardware count, not the model count.
    causal : bool, optional
        Count only the unmasked half of the attention products (Megatron-LM's count); ``None`` (default):
        causal for a shape with a sliding window (the band of the mask), else not.
    peak_flops : number, optional
        The peak FLOP/s of one GPU (e.g. 312e12 for an A100 in bf16), for MFU and HFU.
    capacity_factor : number, optional
        A mixture of experts' capacity factor: the experts run capacity-sized token blocks (hardware
        FLOPs), the model FLOPs still count each token's k experts.

    Returns
    -------
    AchievedFlops
        model FLOP/s per GPU = model_flops / (time_s · gpus), hardware FLOP/s per GPU =
        hardware_flops / (time_s · gpus), mfu and hfu those over *peak_flops*.

    Raises
    ------
    InputError
        A batch, time or GPU count that is not positive, only one of *time_s* and *gpus*,
        *peak_flops* without them, or a run faster than its peak (HFU above 1).

    References
    ----------
    .. [1] Narayanan et al. SC'21, section 5.1, equation (3) and Table 1.
    .. [2] Chowdhery et al. 2022 (PaLM), appendix B: MFU and HFU.
    .. [3] Korthikanti et al. 2022, model and hardware FLOPs utilization.
    .. [4] Smith et al. 2022 (MT-NLG 530B): the 126, 121 and 113 teraFLOP/s per GPU of their 60.1 s,
       50.2 s and 44.4 s iterations on 2240, 2800 and 3360 GPUs are this hardware count.

    Examples
    --------
    Narayanan et al.'s 1-trillion-parameter row (Table 1): 502.0 petaFLOP/s on 3072 GPUs.

    >>> t = TransformerShape(layers=128, hidden=25600, heads=160, sequence=2048, vocabulary=51200)
    >>> r = achieved_flops(t, batch=3072, time_s="102.37s", gpus=3072, recompute="full",
    ...                    peak_flops=312e12)
    >>> per_gpu = float(r.hardware_flops_per_s_per_gpu) / 1e12
    >>> print(f"{float(r.hardware_flops_per_s) / 1e15:.1f} PFLOP/s, {per_gpu:.0f} TFLOP/s per GPU")
    502.0 PFLOP/s, 163 TFLOP/s per GPU
    >>> round(100 * r.hfu), r.hfu > r.mfu
    (52, True)
    """
    model = model_flops(shape, batch=batch, causal=causal)
    run = model_flops(shape, batch=batch, recompute=recompute, causal=model.causal,
                      capacity_factor=capacity_factor)
    count = parameters(shape)
    if (time_s is None) != (gpus is None):
        raise InputError("time_s and gpus go together: the FLOP/s per GPU need the measured time of "
                         "an iteration and the GPUs that ran it")
    if peak_flops is not None and time_s is None:
        raise InputError("peak_flops needs time_s and gpus: MFU and HFU compare the achieved FLOP/s "
                         "with the peak")
    time = peak = None
    gpu: int | None = None
    model_rate = run_rate = mfu = hfu = None
    if time_s is not None and gpus is not None:
        try:
            time = parse_time(time_s, allow_zero=False)  # type: ignore[arg-type]
        except InputError as exc:
            raise InputError(f"time_s={time_s!r}: {exc}") from None
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
            raise InputError(f"{gpus!r} GPUs ran the iteration? give the GPU count, a whole number ≥ 1")
        gpu = gpus
        model_rate, run_rate = model.total / time, run.total / time
        if peak_flops is not None:
            peak = _peak(peak_flops)
            mfu, hfu = model_rate / gpu / peak, run_rate / gpu / peak
            if hfu > 1:
                from costmodel.units import format_flop_rate

                raise InputError(f"{float(time):g} s an iteration on {gpu} GPUs is "
                                 f"{format_flop_rate(run_rate / gpu)} per GPU, {float(hfu):.3g}× the peak of "
                                 f"{format_flop_rate(peak)}: no run is faster than its peak; check the time, "
                                 "the GPUs, the batch and the dtype the peak is for")
    gpu_seconds = None if time is None or gpu is None else time * gpu
    conventions = _conventions(shape, run=run.total, model=model.total, six_n=run.six_n_flops,
                               card=count.total, tokens=run.tokens, recompute=recompute,
                               capacity=capacity_factor is not None, gpu_seconds=gpu_seconds, peak=peak)
    sources = (*_ACHIEVED_SOURCES, *(_MOE_SOURCES if shape.moe else ()),
               *(_WINDOW_SOURCES if shape.window else ()), *(_LATENT_SOURCES if shape.latent else ()),
               *(_MTP_SOURCES if shape.mtp_layers else ()))
    return AchievedFlops(
        shape=shape, batch=batch, tokens=run.tokens, recompute=recompute, causal=run.causal, layer=run.layer,
        logits_forward=run.logits_forward, logits_backward=run.logits_backward, model_flops=model.total,
        hardware_flops=run.total, model_flops_per_token=model.per_token,
        hardware_flops_per_token=run.per_token,
        parameters=run.parameters, six_n_flops=run.six_n_flops, six_n_ratio=run.six_n_flops / model.total,
        total_parameters=count.total, active_parameters=count.active, capacity_factor=run.capacity_factor,
        dense_layer=run.dense_layer, groups=run.groups,
        time_s=time, gpus=gpu, peak_flops_per_s=peak,
        model_flops_per_s_per_gpu=None if gpu is None or model_rate is None else model_rate / gpu,
        hardware_flops_per_s_per_gpu=None if gpu is None or run_rate is None else run_rate / gpu,
        model_flops_per_s=model_rate, hardware_flops_per_s=run_rate, mfu=mfu, hfu=hfu,
        conventions=conventions, sources=sources, notes=window_notes(shape), main_parameters=count.main,
        main_active_parameters=count.main_active, mtp_parameters=count.mtp,
        mtp_active_parameters=count.mtp_active, mtp=run.mtp)


def _conventions(shape: TransformerShape, *, run: Fraction, model: Fraction, six_n: int, card: int,
                 tokens: int, recompute: str, capacity: bool, gpu_seconds: Fraction | None,
                 peak: Fraction | None) -> tuple[FlopConvention, ...]:
    """The counts papers use for one iteration, side by side (Narayanan et al. 2021 eq. 3; Chowdhery et al.
    2022 appendix B; Kaplan et al. 2020's 6·N), each with the rate it implies for the run."""
    # PaLM: 12·L·H·Q·T per token, H heads of Q channels (h without a head_dim of its own); with latent
    # attention the scores' heads are d + d_r wide and the values' d_v: 6·L·a·(d + d_r + d_v)·s
    width = shape.attention_width + shape.context_width  # 2·a·d
    layers = shape.layers + shape.mtp_layers  # each multi-token prediction module's layer attends too
    attention = 6 * layers * width * shape.sequence * tokens
    counts: list[tuple[str, Fraction, Cited]] = []
    if recompute == "full" or capacity:
        redo = ", recomputation included (eq. 3)" if recompute == "full" else ""
        counts.append((f"hardware: as run{redo}", run,
                       NARAYANAN_2021_MEGATRON.at("section 5.1, equation (3)")))
    counts += [
        ("model: forward and backward, no recomputation", model,
         CHOWDHERY_2022.at("appendix B: model FLOPs utilization")),
        ("6·N·tokens, N the weight matrices" + (" (active)" if shape.moe else ""), Fraction(six_n),
         KAPLAN_2020.at("section 2.1: C ≈ 6NBS")),
        (f"6·N·tokens + {_attention_term(shape)}·s·tokens (attention)",
         Fraction(six_n + attention),
         CHOWDHERY_2022.at("appendix B: 6N + 12·L·H·Q·T FLOPs per token")),
        ("6·N·tokens, N the model card's count" + (" (every expert)" if shape.moe else ""),
         Fraction(6 * card * tokens), KAPLAN_2020.at("section 2.1: C ≈ 6NBS, with N as published")),
    ]
    if shape.window is not None:  # torchtitan caps each query's keys at the window: Σ over the layers
        local = shape.windowed_layers + (shape.mtp_layers if shape.mtp_window else 0)
        capped = 6 * width * tokens * (
            (layers - local) * shape.sequence + local * min(shape.window, shape.sequence))
        term = "6·a·(d + d_r + d_v)" if shape.latent else "12·a·d"
        counts.append((f"6·N·tokens + {term}·Σ min(s, w)·tokens (torchtitan)",
                       Fraction(six_n + capped),
                       TORCHTITAN.at("torchtitan/models/utils.py, quadratic_attention_flops_per_token")))
    return tuple(FlopConvention(
        name=name, flops=flops, flops_per_s_per_gpu=None if gpu_seconds is None else flops / gpu_seconds,
        utilization=None if gpu_seconds is None or peak is None else flops / gpu_seconds / peak,
        source=source) for name, flops, source in counts)


def _attention_term(shape: TransformerShape) -> str:
    """The attention's per-token factor in PaLM's convention as a label: 12·l·h, 12·l·a·d with heads of their
    own width, 6·l·a·(d + d_r + d_v) with latent attention."""
    layers = "(l + D)" if shape.mtp_layers else "l"
    if shape.latent:
        return f"6·{layers}·a·(d + d_r + d_v)"
    return f"12·{layers}·{'h' if shape.attention_width == shape.hidden else 'a·d'}"
