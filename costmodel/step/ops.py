"""The operations of one transformer layer on one tensor-parallel rank, counted exactly: the counts layer.

A layer of a decoder-only transformer on a micro-batch of b sequences of s tokens (T = b·s), hidden
size h, a heads of size d (h/a unless the shape's ``head_dim`` gives it), g key-value groups, an FFN of
width f (``ffn_hidden``, gated: SwiGLU), split over t tensor-parallel ranks as Megatron-LM splits it
(Shoeybi et al. 2019, section 3: the QKV and first FFN matrices by columns, the output projection and
second FFN matrix by rows), runs on each rank:

=================  ==============================================  ==========================
operation          forward                                         kind
=================  ==============================================  ==========================
input norm         read and write the T·h activations              memory
QKV                T × (a + 2g)·d/t × h                            matrix product
attention          scores b·a/t × [s×d]·[d×s], softmax, dropout,   unfused: two batched
                   probabilities × values [s×s]·[s×d]              products + memory;
                                                                   flash: one kernel
output projection  T × h × a·d/t                                   matrix product
dropout + residual bias, dropout, residual add (fused)             memory
norm               read and write the activations                  memory
FFN in             T × m·f/t × h  (m = 2 gated, 1 otherwise)        matrix product
activation         GeLU (bias fused) or SwiGLU                     memory
FFN out            T × h × f/t                                     matrix product
dropout + residual                                                 memory
=================  ==============================================  ==========================

With d = h/a the QKV product is T × (h + 2hg/a)/t × h and the output projection T × h × h/t
(Narayanan et al. 2021); a ``head_dim`` of its own (Gemma 2: 16 heads of 256 at h = 3584, Team et al.
2024, arXiv 2408.00118, table 1) makes the queries and the context a·d wide and the keys and values g·d.

Multi-head latent attention (a shape's ``kv_rank``; DeepSeek-AI 2024, arXiv:2405.04434, section 2.1) runs
in place of the QKV product what Megatron-Core's ``MLASelfAttention``
(megatron/core/transformer/multi_latent_attention.py, with the layer specs of
megatron/core/models/gpt/gpt_layer_specs.py) runs:

=================  ==============================================  ==========================
operation          forward                                         split over the t ranks
=================  ==============================================  ==========================
Q down             T_d × d_c' × h                                  duplicated (``TELinear``,
Q latent norm      read and write T_d·d_c'                         ``parallel_mode``
                                                                   ``duplicated``)
Q up               T × a·(d + d_r)/t × d_c'                        by columns (heads)
KV down            T_d × (d_c + d_r) × h                           duplicated
KV latent norm     read and write T_d·d_c                          duplicated
KV up              T × a·(d + d_v)/t × d_c                         by columns (heads)
attention          scores [s×(d + d_r)]·[(d + d_r)×s] and          a/t heads
                   probabilities × values [s×s]·[s×d_v]
output projection  T × h × a·d_v/t                                 by rows
=================  ==============================================  ==========================

(without d_c' one product, Q, T × a·(d + d_r)/t × h, by columns).  The duplicated down-projections see the
rank's own T_d = T/t tokens with sequence parallelism, where the rank's slice of the sequence is the input
and the latents are gathered for the up-projections, and all T tokens without it: every rank then computes
them whole, so a rank's forward FLOPs exceed the count over t by (1 − 1/t) of theirs.

An MoE layer (a shape with experts, on the layers its ``dense_layers`` and ``expert_layers`` give them)
runs in place of the FFN a router (T_r × E × h, T_r the rank's tokens: T/t with sequence parallelism),
its softmax and top-k, the permutation of each token's k copies into expert order, the products of
the E/ep experts this rank holds on the routed rows from every rank of the expert-parallel group
(c·k·T·ep/E rows each, a capacity factor c or 1, as one batched product of T × m·f_e/t × h and
T × h × f_e/t, Megatron-Core's grouped GEMM; the rows rounded up to a whole one for the kernel, the FLOPs
exact), the activation on those rows, the unpermutation weighted by the router's probabilities, and the
shared experts as one FFN of width S·f_e (Megatron-Core's ``SharedExpertMLP``).  The expert tensor
parallelism is t.

Each matrix product C = A·B has two in the backward pass: the input gradient dA = dC·Bᵀ and the weight
gradient dB = Aᵀ·dC (accumulated into fp32 main gradients: 8 bytes of C per element); the batched
products of unfused attention have two each too.  Memory-bound kernels move the bytes counted below
(e bytes an element; masks one byte) in the forward pass and about twice as much backward (the
gradient read, the saved input read, the input gradient written), and say their kind (norm, softmax,
dropout, activation, cross entropy: :data:`costmodel.gpus.MEMORY_KERNELS`), which a GPU file or a
``calibrate compute`` profile may give a bandwidth of its own.  With sequence parallelism the norms,
dropouts and residual adds see T/t tokens (Korthikanti et al. 2022, section 4.2.2).  Recomputation
adds to the backward pass the whole forward (``full``) or the attention core: its two products,
softmax and dropout (``selective``, Korthikanti et al. 2022, section 5).  FlashAttention's kernel counts
the two products' FLOPs forward and 2.5 times as many backward (it recomputes the scores; Dao 2023,
section 3.1), and moves only Q, K, V and the output.

A layer with a sliding window of w < s tokens (a shape's ``window``, on the layers of its
``window_layers``) runs its fused kernel over the band of the causal mask: FlashAttention skips the blocks
outside the window as it skips those above the diagonal, so its products count s·w − w²/2 query-key
pairs instead of s²/2 (:func:`costmodel.step.flops.attention_pairs`).  Unfused attention, the two
batched products with the masked softmax between them (Megatron-LM's ``FusedScaleMaskSoftmax``), computes
and stores the whole s × s matrix whatever the mask, so a window changes neither its products nor its
softmax, dropout and their memory: they are priced on s² as for a global layer.

:func:`layer_ops` lists them; :func:`logits_ops` the output layer and its cross entropy (the last
stage), :func:`embedding_ops` the input embedding (the first stage), :func:`mtp_ops` a multi-token
prediction module's norms and projection (the last stage, beside a layer, the logits and the embedding
lookup of its own), :func:`optimizer_bytes` what an Adam step moves per parameter.  The FLOPs of the
products add up to :func:`costmodel.step.flops.model_flops`'s count, which a test checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.references import (
    DAO_2023,
    DEEPSEEK_V2,
    KORTHIKANTI_2022,
    LIU_2023_RING,
    MEGATRON_LM,
    MICIKEVICIUS_2018,
    SHOEYBI_2019,
)
from costmodel.step.flops import TransformerShape, attention_pairs, tp_share

__all__ = ["CITED", "GRADIENT_ZERO_BYTES", "LATENT_SOURCES", "SOURCES", "Op", "embedding_ops", "layer_ops",
           "logits_ops", "mtp_ops", "optimizer_bytes"]

SOURCES = (
    SHOEYBI_2019.at("section 3: the column and row splits of the attention and MLP matrices"),
    KORTHIKANTI_2022.at("sections 4.2.2 and 5: sequence parallelism and selective recomputation"),
    DAO_2023.at("section 3.1: the backward pass recomputes the scores, 2.5 times the forward's FLOPs"),
    MICIKEVICIUS_2018.at("section 3: fp32 master weights and the optimizer's reads and writes"),
    LIU_2023_RING.at("section 3: blockwise attention, a rank's queries meeting every K and V block in turn"),
)
LATENT_SOURCES = (
    DEEPSEEK_V2.at("section 2.1: multi-head latent attention's down- and up-projections"),
    MEGATRON_LM.at("megatron/core/transformer/multi_latent_attention.py, MLASelfAttention: the "
                   "down-projections duplicated on every tensor-parallel rank, the up-projections split by "
                   "columns"),
)
"""The sources of a layer with multi-head latent attention's operations."""
CITED = tuple(s.citation for s in SOURCES + LATENT_SOURCES)


@dataclass(frozen=True, slots=True, kw_only=True)
class Op(JSONFields):
    """One kernel of a layer's pass on one rank: a matrix product (``m``, ``n``, ``k``, ``batch``) or a
    memory-bound kernel (``bytes``), or fused attention (both).

    *phase* is ``forward``, ``backward`` or ``recompute``; *weight* marks a weight-gradient product (the
    W of split schedules); *flops* counts 2 per multiply-add; *kernel* is a memory-bound kernel's kind
    (one of :data:`costmodel.gpus.MEMORY_KERNELS`, which a GPU may give a bandwidth of its own; "": a
    plain copy, add or transpose); *keys* the keys each query of a fused attention meets on average (its
    rate's curve, :mod:`costmodel.step.rates`; 0 for every other kernel).
    """

    name: str
    phase: str
    kind: str  # "gemm", "memory" or "attention"
    flops: Fraction = Fraction(0)
    bytes: Fraction = Fraction(0)
    m: int = 0
    n: int = 0
    k: int = 0
    batch: int = 1
    weight: bool = False
    output_bytes: Fraction | None = None
    kernel: str = ""
    keys: Fraction = Fraction(0)


def _gemm(name: str, phase: str, m: int, n: int, k: int, *, batch: int = 1, weight: bool = False,
          output_bytes: Fraction | None = None) -> Op:
    return Op(name=name, phase=phase, kind="gemm", flops=Fraction(2 * m * n * k * batch), m=m, n=n, k=k,
              batch=batch, weight=weight, output_bytes=output_bytes)


def _memory(name: str, phase: str, nbytes: Fraction, kernel: str = "") -> Op:
    return Op(name=name, phase=phase, kind="memory", bytes=Fraction(nbytes), kernel=kernel)


_MAIN_GRAD = Fraction(8)  # a weight gradient read and written in fp32 main gradients


def _product(name: str, m: int, n: int, k: int, batch: int = 1, *, weights: bool = True,
             fused: bool = True) -> list[Op]:
    """A product's forward, and its input and weight gradients (batched products: both inputs'); a weight
    gradient *fused* into fp32 main gradients reads and writes them."""
    out = [_gemm(name, "forward", m, n, k, batch=batch),
           _gemm(f"{name} dgrad", "backward", m, k, n, batch=batch)]
    if weights:
        out.append(_gemm(f"{name} wgrad", "backward", k, n, m, batch=batch, weight=True,
                         output_bytes=_MAIN_GRAD if fused else None))
    else:
        out.append(_gemm(f"{name} dgrad 2", "backward", k, n, m, batch=batch))
    return out


@dataclass
class _Passes:
    """A layer's kernels as they are added: forward, backward, and the attention core (what selective
    recomputation runs again)."""

    fused: bool
    forward: list[Op] = field(default_factory=list)
    backward: list[Op] = field(default_factory=list)
    core: list[Op] = field(default_factory=list)

    def memory(self, name: str, fwd: Fraction, bwd: Fraction, *, in_core: bool = False,
               kernel: str = "") -> None:
        op = _memory(name, "forward", fwd, kernel)
        self.forward.append(op)
        self.backward.append(_memory(f"{name} backward", "backward", bwd, kernel))
        if in_core:
            self.core.append(op)

    def product(self, name: str, m: int, n: int, k: int, *, batch: int = 1, weights: bool = True,
                in_core: bool = False) -> None:
        fwd, *bwd = _product(name, m, n, k, batch, weights=weights, fused=self.fused)
        self.forward.append(fwd)
        self.backward.extend(bwd)
        if in_core:
            self.core.append(fwd)


def _attention(passes: _Passes, *, attention: str, b: int, s: int, d: int, heads: int, kv: int, causal: bool,
               e: Fraction, cp: int = 1, dropout: bool = True, window: int | None = None,
               dv: int | None = None) -> None:
    """The attention core: two batched products with a softmax and a dropout between them through memory
    (and the context transposed back), or one fused kernel (its backward recomputes the scores: 2.5 times
    the forward's FLOPs, and twice its traffic).  With context parallelism the rank's s/cp queries meet
    all s keys, block by block (ring attention): 1/cp of the products, K and V of every block read.  A
    sliding *window* narrows the fused kernel's products to the band of the causal mask; the unfused
    products and softmax run on the whole s × s matrix whatever the mask (module notes).  *d* is a query
    and key head's width, *dv* a value head's (default *d*; latent attention's d_v)."""
    dv = d if dv is None else dv
    q = s // cp  # the queries of this rank
    tokens = b * q
    if attention == "unfused":
        scores = Fraction(b * heads * q * s)  # elements of the attention matrix on this rank
        passes.product("attention scores", q, s, d, batch=b * heads, weights=False, in_core=True)
        passes.memory("softmax", 2 * e * scores, 3 * e * scores, in_core=True, kernel="softmax")
        if dropout:
            passes.memory("attention dropout", (2 * e + 1) * scores, (2 * e + 1) * scores, in_core=True,
                          kernel="dropout")
        passes.product("attention context", q, dv, s, batch=b * heads, weights=False, in_core=True)
        passes.memory("attention transpose", 2 * e * tokens * heads * dv, 2 * e * tokens * heads * dv)
        return
    pairs = attention_pairs(s, window=window, causal=causal)
    flops = 2 * b * heads * (d + dv) * pairs / cp
    moved = e * b * (d + dv) * (heads * q + kv * s)  # Q in and the output out; K and V of every block
    keys = pairs / s  # the keys a query meets on average, whichever rank holds it
    op = Op(name="flash attention", phase="forward", kind="attention", flops=flops, bytes=moved, keys=keys)
    passes.forward.append(op)
    passes.backward.append(Op(name="flash attention backward", phase="backward", kind="attention",
                              flops=flops * Fraction(5, 2), bytes=2 * moved, keys=keys))
    passes.core.append(op)


def _latent(passes: _Passes, shape: TransformerShape, *, tokens: int, tp: int, sequence_parallel: bool,
            e: Fraction) -> None:
    """Multi-head latent attention's projections on one rank, as Megatron-Core's ``MLASelfAttention`` runs
    them (module notes): the down-projections to the latents and their norms duplicated on every rank (on
    the rank's T/t tokens with sequence parallelism, on all T without), the up-projections split by
    heads."""
    assert shape.kv_rank is not None
    h, heads = shape.hidden, shape.heads // tp
    rows = tokens // tp if sequence_parallel and tp > 1 else tokens  # what the duplicated projections see
    d, dr, dv = shape.head_width, shape.rope_width, shape.value_head_width
    if shape.q_rank is None:
        passes.product("Q", tokens, heads * (d + dr), h)
    else:
        passes.product("Q down", rows, shape.q_rank, h)
        latent = rows * shape.q_rank
        passes.memory("Q latent norm", 2 * e * latent, 5 * e * latent, kernel="norm")
        passes.product("Q up", tokens, heads * (d + dr), shape.q_rank)
    passes.product("KV down", rows, shape.kv_rank + dr, h)
    latent = rows * shape.kv_rank
    passes.memory("KV latent norm", 2 * e * latent, 5 * e * latent, kernel="norm")
    passes.product("KV up", tokens, heads * (d + dv), shape.kv_rank)


def _exact(ops: list[Op], flops: Fraction) -> list[Op]:
    """A product's passes with their FLOPs set to *flops* (each pass does as many): its m rounded up to a
    whole row prices the kernel, the count stays exact."""
    return [replace(o, flops=flops) for o in ops]


def _experts(passes: _Passes, shape: TransformerShape, *, tokens: int, region: int, tp: int, ep: int,
             capacity_factor: Fraction | None, e: Fraction) -> None:
    """An MoE layer's FFN on one rank: the router, the permutation of the routed tokens, the local experts'
    products, the unpermutation, and the shared experts (module notes)."""
    assert shape.experts is not None and shape.top_k is not None
    experts, k, h = shape.experts, shape.top_k, shape.hidden
    cf = Fraction(1) if capacity_factor is None else capacity_factor
    gated = 2 if shape.gated else 1
    width = shape.expert_ffn_hidden // tp
    routed_here = cf * k * region  # the routed rows this rank sends (its tokens' k copies, to capacity)
    passes.product("router", region, experts, h)
    passes.memory("router softmax + top-k", (e + 4) * region * experts, 2 * (e + 4) * region * experts,
                  kernel="softmax")
    passes.memory("permute", e * h * (region + routed_here), e * h * (region + routed_here))
    rows = cf * k * tokens  # the rows this rank's E/ep experts run, from every rank of the ep group
    local = experts // ep
    per_expert = rows / local
    m = -(-per_expert.numerator // per_expert.denominator)
    fwd, *bwd = _product("expert FFN in", m, gated * width, h, local, fused=passes.fused)
    exact = 2 * rows * gated * width * h
    passes.forward.append(replace(fwd, flops=exact))
    passes.backward.extend(_exact(bwd, exact))
    passes.memory("expert SwiGLU" if shape.gated else "expert GeLU", (gated + 1) * e * rows * width,
                  (2 * gated + 2) * e * rows * width, kernel="activation")
    fwd, *bwd = _product("expert FFN out", m, h, width, local, fused=passes.fused)
    exact = 2 * rows * h * width
    passes.forward.append(replace(fwd, flops=exact))
    passes.backward.extend(_exact(bwd, exact))
    passes.memory("unpermute", e * h * (region + routed_here) + 4 * k * region,
                  e * h * (region + routed_here) + 4 * k * region)
    if shape.shared_experts:
        shared = shape.shared_experts * width
        passes.product("shared FFN in", tokens, gated * shared, h)
        passes.memory("shared SwiGLU" if shape.gated else "shared GeLU", (gated + 1) * e * tokens * shared,
                      (2 * gated + 2) * e * tokens * shared, kernel="activation")
        passes.product("shared FFN out", tokens, h, shared)


def layer_ops(shape: TransformerShape, *, micro_batch: int, tp: int = 1, sequence_parallel: bool = False,
              attention: str = "flash", recompute: str = "none", causal: bool = False,
              element: Fraction = Fraction(2), accumulate: Fraction | None = None, cp: int = 1,
              dropout: bool = True, moe: bool | None = None, ep: int = 1,
              capacity_factor: Fraction | None = None, window: bool | None = None) -> tuple[Op, ...]:
    """The kernels of one layer on one tensor-parallel rank for one micro-batch (see the module notes).

    The FLOPs of the ``forward`` matrix products (and fused attention) equal one layer's forward count of
    :func:`costmodel.step.flops.model_flops` divided by *tp* (with latent attention and *tp* > 1 without
    sequence parallelism, plus the (1 − 1/tp) share of the down-projections every rank computes whole).
    *accumulate* is how weight gradients reach the gradient buffer: ``None``, fused into the weight-gradient
    products (Megatron-LM's ``gradient_accumulation_fusion``: the products read and write fp32 main
    gradients), or the bytes of a gradient element added by a kernel of its own for each weight (autograd's
    ``AccumulateGrad``, Megatron-LM's ``main_grad.add_`` hook: the new gradient and the buffer read, the
    buffer written).
    *cp*: context-parallel ranks, each holding s/cp of every sequence (every operation but attention sees
    b·s/cp tokens; attention as :func:`_attention` says), so the forward FLOPs are the count's over tp·cp.
    Without *dropout* the residual adds write no mask and unfused attention has no dropout kernel.
    *moe* and *window* say which of the shape's layers this is (an MoE layer or a dense one, with the
    sliding window or not); by default the first layer of the shape's kind (its first MoE layer), the layer
    of :attr:`costmodel.step.flops.ModelFlops.layer`.

    Examples
    --------
    >>> s = TransformerShape(layers=1, hidden=1024, heads=16, sequence=2048, vocabulary=32000)
    >>> ops = layer_ops(s, micro_batch=1, attention="unfused")
    >>> [o.name for o in ops if o.phase == "forward" and o.kind == "gemm"]
    ['QKV', 'attention scores', 'attention context', 'output projection', 'FFN in', 'FFN out']
    """
    b, s, h, t = micro_batch, shape.sequence, shape.hidden, tp
    tokens = b * s // cp
    d = shape.head_width
    heads = shape.heads // t
    kv = max(1, shape.groups // t)  # key-value heads on this rank (replicated when fewer than t)
    e = element
    region = Fraction(tokens * h, t if sequence_parallel and t > 1 else 1)  # norm/dropout/residual elements
    ffn = shape.ffn_hidden // t
    gated = 2 if shape.gated else 1
    layer = _Passes(fused=accumulate is None)
    # norms backward: the input gradient and the weight gradients each read the gradient and the input (apex's
    # cuComputeGradInput and cuComputePartGradGammaBeta), and the residual stream's two gradients are summed
    layer.memory("input norm", 2 * e * region, 5 * e * region + 3 * e * region, kernel="norm")
    if shape.latent:
        _latent(layer, shape, tokens=tokens, tp=t, sequence_parallel=sequence_parallel, e=e)
    else:
        layer.product("QKV", tokens, (heads + 2 * kv) * d, h)
    routed = shape.moe if moe is None else moe and shape.moe
    if window is None:  # the first layer of its kind
        first = shape.first_moe_layer if routed else shape.first_dense_layer
        window = shape.is_windowed_layer(first or 0)
    _attention(layer, attention=attention, b=b, s=s, d=shape.query_head_width, heads=heads, kv=kv,
               causal=causal, e=e, cp=cp, dropout=dropout, window=shape.window if window else None,
               dv=shape.value_head_width)
    mask = 1 if dropout else 0  # the dropout mask's byte per element
    fused = "dropout" if dropout else ""  # bias, dropout and residual add in one kernel; without: an add
    layer.product("output projection", tokens, h, heads * shape.value_head_width)
    layer.memory("dropout + residual", (3 * e + mask) * region, (3 * e + mask) * region, kernel=fused)
    layer.memory("norm", 2 * e * region, 8 * e * region, kernel="norm")
    if routed:
        _experts(layer, shape, tokens=tokens, region=tokens // t if sequence_parallel and t > 1 else tokens,
                 tp=t, ep=ep, capacity_factor=capacity_factor, e=e)
    else:
        layer.product("FFN in", tokens, gated * ffn, h)
        layer.memory("SwiGLU" if shape.gated else "GeLU", (gated + 1) * e * tokens * ffn,
                     (2 * gated + 2) * e * tokens * ffn, kernel="activation")
        layer.product("FFN out", tokens, h, ffn)
    layer.memory("dropout + residual 2", (3 * e + mask) * region, (3 * e + mask) * region, kernel=fused)
    if accumulate is not None:
        replicated, experts = (shape.layer_weights(shape.first_moe_layer) if routed
                               else (shape.layer_parameters, 0))
        weights = (tp_share(replicated, tp=t, duplicated=shape.duplicated_parameters)
                   + Fraction(experts, t * ep))
        layer.backward.append(_memory("gradient accumulation", "backward", (e + 2 * accumulate) * weights))
    again: list[Op] = []
    if recompute == "full":
        again = layer.forward
    elif recompute == "selective" and attention == "unfused":
        again = layer.core
    recomputed = [replace(o, phase="recompute") for o in again]  # forward operations: no weight gradient
    return (*layer.forward, *layer.backward, *recomputed)


def logits_ops(shape: TransformerShape, *, micro_batch: int, tp: int = 1, sequence_parallel: bool = False,
               element: Fraction = Fraction(2), cp: int = 1) -> tuple[Op, ...]:
    """The final norm, the output layer (T × V/t × h, its weight the input embedding's) and a cross
    entropy in fp32 over the vocabulary, as Megatron-LM's ``vocab_parallel_cross_entropy`` runs it
    (forward: convert, max, subtract, exp, sum, divide; backward: scale, convert back); s/cp tokens with
    context parallelism."""
    tokens = micro_batch * shape.sequence // cp
    e = element
    region = Fraction(tokens * shape.hidden, tp if sequence_parallel and tp > 1 else 1)
    vocab = -(-shape.vocabulary // tp)
    logits = Fraction(tokens * vocab)
    out = [_memory("final norm", "forward", 2 * e * region, "norm"),
           _memory("final norm backward", "backward", 3 * e * region, "norm")]
    out += _product("logits", tokens, vocab, shape.hidden)
    out += [_memory("cross entropy", "forward", (e + 36) * logits, "cross_entropy"),
            _memory("cross entropy backward", "backward", (12 + e) * logits, "cross_entropy")]
    return tuple(out)


def mtp_ops(shape: TransformerShape, *, micro_batch: int, tp: int = 1, sequence_parallel: bool = False,
            element: Fraction = Fraction(2), cp: int = 1) -> tuple[Op, ...]:
    """The operations of one multi-token prediction module besides its layer (:func:`layer_ops` of the last
    main layer's kind), its logits (:func:`logits_ops`) and its embedding lookup (:func:`embedding_ops`):
    the norms of the previous depth's hidden state and of the embedding, their concatenation, and the
    projection M_k of the 2h-wide concatenation back to h (DeepSeek-AI 2024, arXiv:2412.19437, section
    2.2, equation (21); Megatron-Core's ``MultiTokenPredictionLayer``: ``enorm``, ``hnorm``, ``eh_proj``).

    Assumed: the projection is split over the tp ranks as a column-parallel product, T × h/t × 2h on each
    rank (its output is gathered back to h with the module's other tensor-parallel collectives, priced as a
    layer's); the norms and the concatenation see T/t tokens with sequence parallelism, as a layer's norms
    do.  s/cp tokens with context parallelism."""
    tokens = micro_batch * shape.sequence // cp
    e = element
    h = shape.hidden
    region = Fraction(tokens * h, tp if sequence_parallel and tp > 1 else 1)
    out = [_memory("MTP norms", "forward", 4 * e * region, "norm"),  # two h-wide norms: read and write
           _memory("MTP norms backward", "backward", 10 * e * region, "norm"),
           _memory("MTP concatenation", "forward", 4 * e * region),  # 2h read, 2h written
           _memory("MTP concatenation backward", "backward", 4 * e * region)]
    out += _product("MTP projection", tokens, -(-h // tp), 2 * h)
    return tuple(out)


def embedding_ops(shape: TransformerShape, *, micro_batch: int, tp: int = 1,
                  element: Fraction = Fraction(2), cp: int = 1) -> tuple[Op, ...]:
    """The input embedding: a lookup and dropout forward, a scatter-add into fp32 gradients backward (s/cp
    tokens with context parallelism)."""
    tokens = micro_batch * shape.sequence // cp
    e = element
    acts = Fraction(tokens * shape.hidden)
    return (_memory("embedding", "forward", (2 * e + 1) * acts + e * acts),
            _memory("embedding backward", "backward", (e + 1) * acts + 8 * acts))


def optimizer_bytes(element: Fraction = Fraction(2)) -> Fraction:
    """Bytes an Adam step moves per parameter with fp32 master weights: the fp32 gradient read twice (its
    norm, the update), master weight, momentum and variance read and written, then the master weight read
    again and written to the model's copy in the low precision: 4·2 + 3·8 + 4 + e (Micikevicius et al.
    2018, section 3; Kingma and Ba 2015, algorithm 1; Megatron-Core's ``MixedPrecisionOptimizer.step``:
    ``clip_grad_norm``, the inner Adam step, then ``_copy_main_params_to_model_params`` through a
    ``multi_tensor_scale`` of 1.0 from the fp32 main parameters to the model's)."""
    return 8 + 24 + 4 + element


GRADIENT_ZERO_BYTES = Fraction(4)
"""Bytes per parameter of the fp32 gradient buffer that is zeroed before each step's first backward
(Megatron-Core's ``zero_grad_buffer``: ``grad_data.zero_()`` over the whole buffer of every bucket,
megatron/core/distributed/param_and_grad_buffer.py; DeepSpeed zeroes its gradient partitions alike)."""
