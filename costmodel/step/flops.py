"""Model FLOPs of a decoder-only transformer from its shape, per layer and per iteration.

A layer's forward pass on a micro-batch of B sequences of s tokens, hidden size h, a attention
heads of size d = h/a, g key-value groups (GQA; g = a is multi-head attention) and an FFN of
f·h units, counts 2 FLOPs per multiply-add of each matrix product (Narayanan et al. SC'21,
section 5.1 and appendix; Megatron-LM ``num_floating_point_operations``):

    QKV projection      2·B·s·h·(h + 2·h·g/a)
    attention scores    2·B·s²·h   (QKᵀ)      and   2·B·s²·h   (scores × V)
    output projection   2·B·s·h²
    MLP                 2·B·s·h·(f·h)·m        m = 2 matrices, 3 with a gated (SwiGLU) unit
    logits              2·B·s·h·V              (once per iteration, not per layer)

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
saving, ``total == six_n_flops + 12·l·h·s·tokens`` holds exactly (N counts the matrices only:
no biases, norms or position embeddings; the logits share the V·h input embedding).

:func:`achieved_flops` divides these counts by a measured iteration time: the model FLOPs (no
recomputation) give the model FLOPs utilization (MFU), the FLOPs as run (with the recomputation)
the hardware FLOPs utilization (HFU) and Narayanan et al.'s "teraFLOP/s per GPU" (Chowdhery et
al. 2022, appendix B; Korthikanti et al. 2022).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import parse_number
from costmodel.references import CHOWDHERY_2022, KORTHIKANTI_2022, MEGATRON_LM, NARAYANAN_2021_MEGATRON, Cited
from costmodel.units import parse_time
from costmodel.validate import positive

__all__ = ["CITED", "RECOMPUTATION", "AchievedFlops", "LayerFlops", "ModelFlops", "TransformerShape",
           "achieved_flops", "model_flops"]

CITED = (NARAYANAN_2021_MEGATRON, MEGATRON_LM, CHOWDHERY_2022, KORTHIKANTI_2022)

RECOMPUTATION = ("none", "full")
"""Activation recomputation the FLOP count knows: none, or every layer's forward again."""

_SOURCES = (
    NARAYANAN_2021_MEGATRON.at("section 5.1, equation (3), and appendix: FLOPs per iteration"),
    MEGATRON_LM.at("megatron/training/training.py, num_floating_point_operations (dense path)"),
    CHOWDHERY_2022.at("appendix B: 6N + 12·L·H·Q·T FLOPs per token"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformerShape(JSONFields):
    """The shape of a decoder-only transformer.

    Parameters
    ----------
    layers, hidden, heads, sequence, vocabulary : int
        l, h, a, s and V, each ≥ 1; *heads* divides *hidden*.
    ffn_factor : number, default 4
        The FFN width over h (f, exact: ``Fraction(8, 3)`` is allowed when f·h is whole).
    kv_groups : int, optional
        Key-value groups g of grouped-query attention, dividing *heads*; default *heads* (MHA).
    gated : bool, default False
        A gated FFN (SwiGLU: three matrices instead of two).
    """

    layers: int
    hidden: int
    heads: int
    sequence: int
    vocabulary: int
    ffn_factor: Fraction = Fraction(4)
    kv_groups: int | None = None
    gated: bool = False

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "sequence", "vocabulary"):
            positive(getattr(self, name), name)
        if self.hidden % self.heads:
            raise InputError(f"heads={self.heads!r} does not divide hidden={self.hidden!r}; "
                             "each head has hidden/heads channels")
        try:
            factor = parse_number(self.ffn_factor, what="FFN factor")
        except InputError as exc:
            raise InputError(f"ffn_factor={self.ffn_factor!r}: {exc}") from None
        if factor <= 0 or (factor * self.hidden).denominator != 1:
            raise InputError(f"ffn_factor={self.ffn_factor!r} is not a positive number with a whole "
                             f"ffn_factor·hidden; give 4, or 8/3 with hidden a multiple of 3")
        object.__setattr__(self, "ffn_factor", factor)
        if self.kv_groups is not None:
            positive(self.kv_groups, "kv_groups")
            if self.heads % self.kv_groups:
                raise InputError(f"kv_groups={self.kv_groups!r} does not divide heads={self.heads!r}; "
                                 "each key-value group serves heads/kv_groups query heads")
        if not isinstance(self.gated, bool):
            raise InputError(f"gated={self.gated!r} is not True or False")

    @property
    def groups(self) -> int:
        """g: the key-value groups (the heads when none are given)."""
        return self.heads if self.kv_groups is None else self.kv_groups

    @property
    def ffn_hidden(self) -> int:
        """f·h, the FFN width."""
        return int(self.ffn_factor * self.hidden)

    @property
    def layer_parameters(self) -> int:
        """Weights of one layer's matrices: h·(h + 2h·g/a) + h² + m·h·f·h."""
        h = self.hidden
        kv = h * self.groups // self.heads
        return h * (h + 2 * kv) + h * h + (3 if self.gated else 2) * h * self.ffn_hidden

    @property
    def parameters(self) -> int:
        """N: every layer's matrices and the V·h embedding (shared with the logits)."""
        return self.layers * self.layer_parameters + self.vocabulary * self.hidden


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerFlops(JSONFields):
    """Forward FLOPs of one transformer layer on one batch, by part, and its training total."""

    qkv: int
    attention: Fraction
    projection: int
    mlp: int
    forward: Fraction
    backward: Fraction
    recompute: Fraction
    total: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFlops(JSONFields):
    """Model FLOPs of one iteration (forward, backward, recomputation) on *batch* sequences.

    ``total = layers·layer.total + logits_forward + logits_backward``; ``six_n_flops`` is the
    PaLM convention's 6·N·tokens, without the attention term.
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
    sources: tuple[Cited, ...] = _SOURCES

    @property
    def per_token(self) -> Fraction:
        """FLOPs per token of the batch."""
        return self.total / self.tokens


def model_flops(shape: TransformerShape, *, batch: int, recompute: str = "none",
                causal: bool = False) -> ModelFlops:
    """FLOPs of one training iteration of *shape* on *batch* sequences (see the module notes).

    Parameters
    ----------
    shape : TransformerShape
    batch : int
        B, the sequences of the iteration (the global batch for a whole iteration, a
        micro-batch for one micro-step), ≥ 1.
    recompute : {"none", "full"}
        ``"full"`` adds one forward pass of every layer (not of the logits).
    causal : bool
        Count only the unmasked half of the two attention products, as Megatron-LM does.

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
    if not isinstance(causal, bool):
        raise InputError(f"causal={causal!r} is not True or False")
    h, s = shape.hidden, shape.sequence
    tokens = batch * s
    kv = h * shape.groups // shape.heads
    qkv = 2 * tokens * h * (h + 2 * kv)
    attention = Fraction(2 * 2 * batch * s * s * h, 2 if causal else 1)
    projection = 2 * tokens * h * h
    mlp = 2 * tokens * h * shape.ffn_hidden * (3 if shape.gated else 2)
    forward = qkv + attention + projection + mlp
    redo = forward if recompute == "full" else Fraction(0)
    layer = LayerFlops(qkv=qkv, attention=attention, projection=projection, mlp=mlp, forward=forward,
                       backward=2 * forward, recompute=redo, total=3 * forward + redo)
    logits = 2 * tokens * h * shape.vocabulary
    return ModelFlops(
        shape=shape, batch=batch, recompute=recompute, causal=causal, tokens=tokens, layer=layer,
        logits_forward=logits, logits_backward=2 * logits,
        total=shape.layers * layer.total + 3 * logits,
        parameters=shape.parameters, six_n_flops=6 * shape.parameters * tokens)



_ACHIEVED_SOURCES = (
    *_SOURCES,
    NARAYANAN_2021_MEGATRON.at("section 5.1, Table 1: teraFLOP/s per GPU with the equation (3) count"),
    CHOWDHERY_2022.at("appendix B: model and hardware FLOPs utilization"),
    KORTHIKANTI_2022.at("model FLOPs utilization (MFU) and hardware FLOPs utilization (HFU)"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AchievedFlops(JSONFields):
    """The FLOPs of one training iteration and, given its measured time, the FLOP/s achieved.

    Two counts: ``model_flops`` (forward and backward, no recomputation: the model FLOPs of MFU)
    and ``hardware_flops`` (as run, the recomputation included: the hardware FLOPs of HFU, and
    with full recomputation Narayanan et al.'s equation (3)).  *layer* is one layer's count as
    run.  The rates are ``None`` without *time_s* and *gpus*, the utilizations without
    *peak_flops_per_s* (the peak of one GPU).  ``six_n_ratio`` is 6·N·tokens over
    ``model_flops``.
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
    time_s: Fraction | None
    gpus: int | None
    peak_flops_per_s: Fraction | None
    model_flops_per_s_per_gpu: Fraction | None
    hardware_flops_per_s_per_gpu: Fraction | None
    model_flops_per_s: Fraction | None
    hardware_flops_per_s: Fraction | None
    mfu: Fraction | None
    hfu: Fraction | None
    sources: tuple[Cited, ...] = _ACHIEVED_SOURCES


def _peak(value: object) -> Fraction:
    try:
        peak = parse_number(value, what="peak FLOP/s")
    except InputError as exc:
        raise InputError(f"peak_flops={value!r}: {exc}") from None
    if peak <= 0:
        raise InputError(f"peak_flops={value!r} is not positive; give one GPU's peak, e.g. 312e12")
    return peak


def achieved_flops(shape: TransformerShape, *, batch: int, time_s: object = None, gpus: int | None = None,
                   recompute: str = "none", causal: bool = False, peak_flops: object = None) -> AchievedFlops:
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
    causal : bool
        Count only the unmasked half of the attention products (Megatron-LM's count).
    peak_flops : number, optional
        The peak FLOP/s of one GPU (e.g. 312e12 for an A100 in bf16), for MFU and HFU.

    Returns
    -------
    AchievedFlops
        model FLOP/s per GPU = model_flops / (time_s · gpus), hardware FLOP/s per GPU =
        hardware_flops / (time_s · gpus), mfu and hfu those over *peak_flops*.

    Raises
    ------
    InputError
        A batch, time or GPU count that is not positive, only one of *time_s* and *gpus*, or
        *peak_flops* without them.

    References
    ----------
    .. [1] Narayanan et al. SC'21, section 5.1, equation (3) and Table 1.
    .. [2] Chowdhery et al. 2022 (PaLM), appendix B: MFU and HFU.
    .. [3] Korthikanti et al. 2022, model and hardware FLOPs utilization.

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
    run = model_flops(shape, batch=batch, recompute=recompute, causal=causal)
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
        gpu = positive(gpus, "gpus")
        model_rate, run_rate = model.total / time, run.total / time
        if peak_flops is not None:
            peak = _peak(peak_flops)
            mfu, hfu = model_rate / gpu / peak, run_rate / gpu / peak
    return AchievedFlops(
        shape=shape, batch=batch, tokens=run.tokens, recompute=recompute, causal=causal, layer=run.layer,
        logits_forward=run.logits_forward, logits_backward=run.logits_backward, model_flops=model.total,
        hardware_flops=run.total, model_flops_per_token=model.per_token,
        hardware_flops_per_token=run.per_token,
        parameters=run.parameters, six_n_flops=run.six_n_flops, six_n_ratio=run.six_n_flops / model.total,
        time_s=time, gpus=gpu, peak_flops_per_s=peak,
        model_flops_per_s_per_gpu=None if gpu is None or model_rate is None else model_rate / gpu,
        hardware_flops_per_s_per_gpu=None if gpu is None or run_rate is None else run_rate / gpu,
        model_flops_per_s=model_rate, hardware_flops_per_s=run_rate, mfu=mfu, hfu=hfu)
