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
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import to_fraction
from costmodel.references import CHOWDHERY_2022, MEGATRON_LM, NARAYANAN_2021_MEGATRON, Cited
from costmodel.validate import positive

__all__ = ["CITED", "RECOMPUTATION", "LayerFlops", "ModelFlops", "TransformerShape", "model_flops"]

CITED = (NARAYANAN_2021_MEGATRON, MEGATRON_LM, CHOWDHERY_2022)

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
        factor = to_fraction(self.ffn_factor, what="an FFN factor", example="4")
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

