"""The memory of each device of a step: model states, activations of the micro-batches in flight, and the
check that they fit.

**Model states** of a device's parameters Ψ (its layers' matrices, the input embedding on the first
stage and the output layer's copy of it on the last when pp > 1, Narayanan et al. 2021, section 2; each
split over the tp ranks but latent attention's down-projections, which Megatron-Core's
``MLASelfAttention`` duplicates on every tp rank: h·(d_c' + d_c + d_r) a layer held whole): weights,
gradients and Adam's states (Rajbhandari et al. 2020, section 3.1: 16 bytes a parameter for mixed
precision, 2 + 2 + 12),

    weights w·Ψ,   gradients g·Ψ,   optimizer K·Ψ,

with w the bytes of a weight (2 in bf16 or fp16; 4 under PyTorch's automatic mixed precision, whose
parameters stay fp32 and double as the master weights, so K = 8), g a gradient's (the framework's:
4 when Megatron-LM accumulates bf16 gradients in fp32) and K = 12 (fp32 master weights, momentum,
variance).  ZeRO divides the optimizer states by dp (stage 1), the gradients too (2), the weights too
(3; Rajbhandari et al. 2020, figure 1), and ZeRO 3 holds the gathered weights of the units in flight
(the one computing and the ones prefetched) and one unit's unsharded gradient, a unit being what the
framework gathers at once: a layer under FSDP (its wrapped module), one matrix under DeepSpeed, which
fetches module by module (:mod:`costmodel.step.frameworks`).

With a mixture of experts each rank holds the replicated weights and E/ep of the routed experts (ep
expert-parallel ranks); ZeRO shards the replicated states over the dp × cp ranks and the experts' over
the dp·cp/ep ranks holding the same experts.  An MoE layer's FFN term is its experts' on the routed
rows, (e·c·k + e(m + 1)·(f_e/h)·(c·k + S) + 4E/h)·sbh/t: the permuted tokens, the experts' insides
on c·k rows a token (capacity factor c or 1) and the S shared experts', the router's fp32
probabilities; a device holds the larger of a dense and an MoE layer's for each layer.

**Activations** of one layer for one micro-batch of b sequences of s tokens, hidden h, a heads, t
tensor-parallel ranks, e bytes an activation and one byte a dropout mask (Korthikanti et al. 2022,
section 4, table 2, which is this with e = 2: sbh(34 + 5as/h) without parallelism)::

    norms and inputs of QKV and FFN, two dropout masks   (4e + 2)·sbh       ÷ t with sequence parallelism
    Q, K, V, the projection's input, the FFN's inside    (e(2a·d + 2g·d)/h + e(m + 1)f/h)·sbh / t
    unfused attention: softmax, its dropout and mask     (2e + 1)·as²b / t  (none with FlashAttention,
                                                                             which keeps 4·asb/t bytes)

g key-value groups of heads of d channels, an FFN of width f, m = 2 for a gated FFN: Q and the
projection's input are s·b·a·d each, K and V s·b·g·d each, which is Korthikanti et al.'s
e(2 + 2g/a)·sbh with d = h/a, and is a·d- and g·d-wide for a head width of its own (Gemma 2's ``head_dim``
256 at h = 3584 and 16 heads: Team et al. 2024, arXiv 2408.00118, table 1).  Multi-head latent attention
(DeepSeek-AI 2024, arXiv:2405.04434, section 2.1) stores each head's query and key, a·(d + d_r) each, its
value and the projection's input, a·d_v each (divided by t: Megatron-Core's ``MLASelfAttention`` splits the
up-projections by heads), and its two latents twice, the norm's input and the up-projection's input,
2e·(d_c' + d_c)·sb, which its down-projections compute whole on every tensor-parallel rank (divided by t
only with sequence parallelism, where each rank projects its own s/t tokens).  A sliding window stores
no less: FlashAttention keeps no s × s matrix whatever the mask (its 4·asb/t bytes are the softmax's
statistics), and unfused attention computes and stores the whole matrix and masks it, so a windowed
layer's activations are a global layer's.  Selective recomputation drops the
attention term; full recomputation keeps only each layer's input, e·sbh (÷ t with sequence
parallelism), and rebuilds one layer at a time in the backward pass.  A device holds these for the
most micro-batches (chunk-micro-batches) its schedule has in flight at once, from the simulated
timeline (1F1B's first stage holds min(pp, M): Narayanan et al. 2021, section 2.2.1); the last stage
also holds one micro-batch's logits and their fp32 copy for the cross entropy, (e + 4)·sbV/t
(Korthikanti et al. 2022, section 4.3).  The last stage runs a shape's multi-token prediction modules too
(Megatron-Core's ``MultiTokenPredictionBlock``, built with the output layer): each holds a layer's
activations (counted among the stage's layers), the inputs of its two norms and of its 2h → h projection,
4e·sbh (÷ t with sequence parallelism), and logits of its own, (e + 4)·sbV/t; its weights are a layer's and
the projection's 2h², and with pp > 1 the stage holds a copy of the embedding the modules look up.

:func:`step_memory` returns each device's :class:`DeviceMemory`; :func:`check_fits` compares the
largest with a GPU's capacity.  The micro-batches in flight follow from each device's order of operations
alone (:func:`costmodel.step.model.order_facts`), so the memory of a step is known before its schedule
is simulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel._json import JSONFields
from costmodel.references import KORTHIKANTI_2022, NARAYANAN_2021_MEGATRON, RAJBHANDARI_2020
from costmodel.step.flops import TransformerShape, tp_share
from costmodel.units import format_size

__all__ = ["OPTIMIZER_BYTES", "SOURCES", "DeviceMemory", "activation_bytes", "check_fits", "step_memory"]

OPTIMIZER_BYTES = 12
"""K, optimizer-state bytes per parameter: fp32 master weights, momentum and variance (Adam)."""

SOURCES = (
    RAJBHANDARI_2020.at("section 3.1 and figure 1: 2 + 2 + K bytes a parameter, divided by ZeRO's stages"),
    KORTHIKANTI_2022.at("section 4 and table 2: activation memory per layer with tensor and sequence "
                        "parallelism and recomputation; section 4.3: the output layer"),
    NARAYANAN_2021_MEGATRON.at("section 2.2.1: 1F1B holds at most pp micro-batches in flight"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceMemory(JSONFields):
    """One pipeline device's peak memory, in bytes per GPU.

    *parameters* is Ψ of the device (before tensor parallelism divides it), *layers* its layer count,
    *inflight* the most chunk-micro-batches it holds at once; ``total_bytes = model_state_bytes +
    activation_bytes``.
    """

    stage: int
    parameters: int
    weight_bytes: Fraction
    gradient_bytes: Fraction
    optimizer_bytes: Fraction
    model_state_bytes: Fraction
    activation_bytes_per_layer: Fraction
    layers: int
    inflight: int
    activation_bytes: Fraction
    total_bytes: Fraction


def activation_bytes(shape: TransformerShape, *, micro_batch: int, tp: int, sequence_parallel: bool,
                     recompute: str, attention: str, element: Fraction = Fraction(2), cp: int = 1,
                     dropout: bool = True, moe: bool = False,
                     capacity_factor: Fraction | None = None) -> Fraction:
    """One layer's stored activations for one micro-batch on one rank (module notes); with *cp*
    context-parallel ranks each holds s/cp of every sequence, and every term is divided by cp (the
    attention matrix's rows too: its s/cp queries).  Without *dropout* there are no masks (the two of the
    residual adds, the attention probabilities'), nor the probabilities' dropped copy.  With *moe* an MoE
    layer's, whose FFN term is its experts' on the routed rows.

    Examples
    --------
    Korthikanti et al.'s sbh(34 + 5as/h) at t = 1, unfused attention, bf16:

    >>> g = TransformerShape(layers=1, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    >>> a = activation_bytes(g, micro_batch=1, tp=1, sequence_parallel=False, recompute="none",
    ...                      attention="unfused")
    >>> a == 2048 * 12288 * (34 + Fraction(5 * 96 * 2048, 12288))
    True
    """
    b, s, h, t, e = micro_batch, shape.sequence, shape.hidden, tp, element
    sbh = Fraction(s * b * h)
    sp = t if sequence_parallel else 1
    if recompute == "full":
        return e * sbh / sp / cp
    gated = 2 if shape.gated else 1
    mask = 1 if dropout else 0
    shared = (4 * e + 2 * mask) * sbh / sp
    ffn = e * (gated + 1) * Fraction(shape.ffn_hidden, h)
    if moe and shape.moe:
        assert shape.experts is not None and shape.top_k is not None
        cf = Fraction(1) if capacity_factor is None else capacity_factor
        rows = cf * shape.top_k  # routed rows per token
        width = Fraction(shape.expert_ffn_hidden, h)
        ffn = (e * rows  # the permuted tokens, the experts' input
               + e * (gated + 1) * width * (rows + shape.shared_experts)) + Fraction(4 * shape.experts, h)
    # Q and the projection's input (a·d wide), K and V (g·d): e(2 + 2g/a)·sbh when d = h/a; with latent
    # attention Q and K a·(d + d_r), V and the projection's input a·d_v
    attn = e * Fraction(shape.attention_width + shape.key_width + shape.value_width + shape.context_width, h)
    split = (attn + ffn) * sbh / t
    if shape.latent:  # each latent's norm input and the up-projection's input: whole on every tp rank
        shared += 2 * e * Fraction((shape.q_rank or 0) + (shape.kv_rank or 0), h) * sbh / sp
    if attention == "flash":
        scores = Fraction(4 * shape.heads * s * b, t)
    elif recompute == "selective":
        scores = Fraction(0)
    else:
        scores = (e + (e + 1) * mask) * shape.heads * s * s * b / t
    return (shared + split + scores) / cp


_activation_bytes = lru_cache(maxsize=1024)(activation_bytes)
""":func:`activation_bytes`, remembered: a plan's many configurations share a few micro-batch shapes."""


@lru_cache(maxsize=4096)
def _model_states(shape: TransformerShape, replicated: int, routed: int, *, tp: int, ep: int, dp: int,
                  zero: int, prefetch: int, weight_element: Fraction, grad_element: Fraction,
                  optimizer_element: Fraction, unit_share: Fraction = Fraction(1), duplicated: int = 0
                  ) -> tuple[Fraction, Fraction, Fraction]:
    """A device's weights, gradients and optimizer states in bytes (module notes: ZeRO shards the replicated
    ones over the *dp* ranks, the routed experts over the dp/ep holding the same experts; the *duplicated*
    ones among the replicated, latent attention's down-projections, are whole on every tp rank),
    remembered: the schedules and micro-batch sizes of a plan share them."""
    psi, psi_e = tp_share(replicated, tp=tp, duplicated=duplicated), Fraction(routed, tp * ep)
    edp = max(1, dp // ep)
    weight, grads = weight_element * (psi + psi_e), grad_element * (psi + psi_e)
    states = optimizer_element * (psi + psi_e)
    if zero >= 1:
        states = optimizer_element * (psi / dp + psi_e / edp)
    if zero >= 2:
        grads = grad_element * (psi / dp + psi_e / edp)
    if zero >= 3:
        whole = shape.duplicated_parameters
        unit = tp_share(shape.layer_parameters, tp=tp, duplicated=whole)
        if shape.moe:
            unit = max(tp_share(a, tp=tp, duplicated=whole) + Fraction(b, tp * ep)
                       for a, b in (shape.layer_weights(i) for i in range(shape.layers)))
        unit *= unit_share
        weight = weight_element * (psi / dp + psi_e / edp) + weight_element * unit * (1 + prefetch)
        grads += grad_element * unit
    return weight, grads, states


def step_memory(shape: TransformerShape, inflight: Sequence[int], *,
                layers: Sequence[Sequence[int]], dp: int, tp: int, zero: int, micro_batch: int,
                recompute: str, sequence_parallel: bool, attention: str, element: Fraction,
                weight_element: Fraction, grad_element: Fraction, optimizer_element: Fraction,
                prefetch: int, cp: int = 1, dropout: bool = True, ep: int = 1,
                capacity_factor: Fraction | None = None, unit_share: Fraction = Fraction(1),
                weights: Sequence[tuple[int, int]] | None = None,
                stages: Sequence[int] | None = None) -> tuple[DeviceMemory, ...]:
    """Each device's memory (module notes); *layers[s]* lists the layer counts of device s's chunks and
    *inflight[s]* the most chunk-micro-batches it holds at once (from its order of operations:
    :func:`costmodel.step.model.order_facts`).  *dp* is the ranks ZeRO shards over (Megatron-LM's
    distributed optimizer: dp × cp), *cp* the context-parallel ranks that divide the activations.

    With a mixture of experts *weights[s]* is device s's (replicated, routed-expert) parameters: the *ep*
    expert-parallel ranks hold E/ep of the routed experts each, and ZeRO shards those over the dp/ep
    ranks holding the same experts (dp·cp/ep, as *dp* counts the cp ranks); the activations are an MoE
    layer's (the larger when the first layers are dense).  *stages*: only those devices' memory, in order
    (default: every device's).  *unit_share*: the share of a layer's parameters ZeRO 3 gathers at once
    (1: the layer; DeepSpeed's largest matrix).
    """
    pp = len(inflight)
    h, vocab = shape.hidden, shape.vocabulary
    kinds: dict[str, Any] = {"micro_batch": micro_batch, "tp": tp, "sequence_parallel": sequence_parallel,
                             "recompute": recompute, "attention": attention, "element": element, "cp": cp,
                             "dropout": dropout}
    per_layer = _activation_bytes(shape, **kinds)
    if shape.moe:
        moe_layer = _activation_bytes(shape, moe=True, capacity_factor=capacity_factor, **kinds)
        per_layer = max(per_layer, moe_layer)
    working = Fraction(0)
    if recompute == "full":  # the layer rebuilt in the backward pass
        rebuilt = {**kinds, "recompute": "none"}
        working = _activation_bytes(shape, **rebuilt)
        if shape.moe:
            working = max(working,
                          _activation_bytes(shape, moe=True, capacity_factor=capacity_factor, **rebuilt))
    tokens = micro_batch * shape.sequence // cp
    # each multi-token prediction module (on the last stage, its layer among the stage's): the inputs of its
    # two norms and its 2h-wide projection's, 4e·sbh, and its own logits with their fp32 copy
    sp = tp if sequence_parallel else 1
    logits = (element + 4) * tokens * Fraction(vocab, tp)  # the last stage's logits and their fp32 copy
    mtp = shape.mtp_layers * (4 * element * Fraction(tokens * h, sp) + logits) if shape.mtp_layers else 0
    duplicated = shape.duplicated_parameters
    out = []
    for s in range(pp) if stages is None else stages:
        held = inflight[s]
        count = sum(layers[s])
        if weights is None:
            replicated = count * shape.layer_parameters + vocab * h * ((s == 0) + (pp > 1 and s == pp - 1))
            routed = 0
        else:
            replicated, routed = weights[s]
        params = replicated + routed // ep
        weight, grads, states = _model_states(shape, replicated, routed, tp=tp, ep=ep, dp=dp, zero=zero,
                                              prefetch=prefetch, weight_element=weight_element,
                                              grad_element=grad_element, optimizer_element=optimizer_element,
                                              unit_share=unit_share,
                                              duplicated=count * duplicated)
        acts = per_layer * max(layers[s]) * held + (working if count else 0)
        if s == pp - 1:
            acts += logits + mtp
        states_total = weight + grads + states
        out.append(DeviceMemory(stage=s, parameters=params, weight_bytes=weight, gradient_bytes=grads,
                                optimizer_bytes=states, model_state_bytes=states_total,
                                activation_bytes_per_layer=per_layer, layers=count, inflight=held,
                                activation_bytes=acts, total_bytes=states_total + acts))
    return tuple(out)


def check_fits(memory: Sequence[DeviceMemory], *, capacity: Fraction, gpu: str) -> str | None:
    """None when every device fits in *capacity* bytes; else a one-line refusal with the largest device's
    breakdown (what ``allow_oom`` turns into a warning)."""
    top = max(memory, key=lambda d: d.total_bytes)
    if top.total_bytes <= capacity:
        return None
    where = f" (stage {top.stage})" if len(memory) > 1 else ""
    held = f"{top.inflight} micro-batch{'es' if top.inflight != 1 else ''}"
    return (f"the step needs {_size(top.total_bytes)} per GPU{where}, more than the {_size(capacity)} of "
            f"{gpu}: weights {_size(top.weight_bytes)}, gradients {_size(top.gradient_bytes)}, optimizer "
            f"states {_size(top.optimizer_bytes)}, activations {_size(top.activation_bytes)} "
            f"({held} in flight); shard more (zero, tp, pp), recompute, or allow_oom=True to price it anyway")


def _size(n: Fraction) -> str:
    return format_size(n).split(" = ")[0]
