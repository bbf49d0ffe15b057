"""Memory-bound kernels by kind: each operation says its kind, and a GPU that gives a kind its own share of
the bandwidth prices exactly that kind's bytes at it."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.gpus import MEMORY_KERNELS, load_gpu, parse_gpu
from costmodel.step import TransformerShape, step
from costmodel.step.compute import optimizer_time, shape_work
from costmodel.step.ops import embedding_ops, layer_ops, logits_ops, optimizer_bytes
from costmodel.step.rates import Rates

DENSE = TransformerShape(layers=2, hidden=1024, heads=16, sequence=2048, vocabulary=32000)
GATED = TransformerShape(layers=2, hidden=1024, heads=16, sequence=2048, vocabulary=32000, gated=True,
                         ffn_factor=Fraction(11, 4), kv_groups=4)
MOE = TransformerShape(layers=2, hidden=1024, heads=16, sequence=2048, vocabulary=32000, experts=8, top_k=2,
                       shared_experts=1)

KIND_OF = {"input norm": "norm", "norm": "norm", "softmax": "softmax", "attention dropout": "dropout",
           "dropout + residual": "dropout", "dropout + residual 2": "dropout", "GeLU": "activation",
           "SwiGLU": "activation", "attention transpose": "", "router softmax + top-k": "softmax",
           "permute": "", "unpermute": "", "expert GeLU": "activation", "shared GeLU": "activation",
           "final norm": "norm", "cross entropy": "cross_entropy", "embedding": "",
           "gradient accumulation": ""}
"""Each memory-bound kernel's kind, by its forward's name (its backward's is the same)."""


def _all_ops(shape, **kw):
    return (*layer_ops(shape, micro_batch=2, **kw), *logits_ops(shape, micro_batch=2),
            *embedding_ops(shape, micro_batch=2))


@pytest.mark.parametrize("shape", [DENSE, GATED, MOE], ids=["dense", "gated", "moe"])
@pytest.mark.parametrize("attention", ["unfused", "flash"])
def test_every_memory_bound_kernel_says_its_kind(shape, attention):
    for recompute in ("none", "full"):
        for o in _all_ops(shape, attention=attention, recompute=recompute, accumulate=Fraction(4)):
            if o.kind != "memory":
                assert o.kernel == "", o.name
                continue
            assert o.kernel == KIND_OF[o.name.removesuffix(" backward")], o.name
            assert o.kernel in ("", *MEMORY_KERNELS)


def test_without_dropout_the_residual_adds_are_plain_adds():
    ops = layer_ops(DENSE, micro_batch=2, attention="unfused", dropout=False)
    assert {o.kernel for o in ops if o.name.startswith("dropout + residual")} == {""}
    assert not any(o.name == "attention dropout" for o in ops)


def _gpu(shares: dict[str, str], base: str = "a100-80gb") -> object:
    kinds = "".join(f"{k} = {v!r}\n" for k, v in shares.items())
    return parse_gpu(f'base = "{base}"\nname = "kinds"\n[memory_kernels]\n{kinds}', path="kinds.toml")


COPY = dict.fromkeys(MEMORY_KERNELS, "1737/2039")
"""The A100's every kind at its streaming copy's share (the preset's own shares are a proxy's)."""


def test_a_kind_with_its_own_share_is_priced_at_it_and_nothing_else_moves():
    """Per operation: a kind's bytes over its own bandwidth instead of the copy's, exactly; every other
    operation (products, other kinds, plain copies) priced as before."""
    preset, own = _gpu(COPY), _gpu({**COPY, "norm": "1/2", "dropout": "1/4", "optimizer": "3/5"})
    base, mine = Rates.of(preset, "bf16"), Rates.of(own, "bf16")
    copy = preset.memory_bandwidth_bytes_per_s * preset.memory_efficiency
    shares = {"norm": Fraction(1, 2), "dropout": Fraction(1, 4)}
    kw = {"micro_batch": 2, "tp": 2, "sequence_parallel": False, "attention": "unfused", "recompute": "full",
          "causal": True, "element": Fraction(2)}
    *_, before = shape_work(DENSE, rates=base, **kw)
    *_, after = shape_work(DENSE, rates=mine, **kw)
    ops = layer_ops(DENSE, micro_batch=2, tp=2, attention="unfused", recompute="full", causal=True)
    moved = 0
    for o, b, a in zip(ops, before, after, strict=True):
        if o.kind == "memory" and o.kernel in shares:
            assert a.time_s - b.time_s == o.bytes / (2039 * 10**9 * shares[o.kernel]) - o.bytes / copy, o.name
            moved += 1
        else:
            assert a.time_s == b.time_s, o.name
    assert moved == 15  # 2 norms and 3 dropouts, each forward, backward, and the recomputed forward
    params = Fraction(10**9)
    assert optimizer_time(params, mine) == params * optimizer_bytes(Fraction(2)) / (2039 * 10**9 * Fraction(3, 5)) \
        + mine.launch


def test_every_kind_at_the_copys_share_prices_the_presets_step():
    preset = load_gpu("mi300x")  # a preset without shares of its own
    same = _gpu(dict.fromkeys(MEMORY_KERNELS, str(preset.memory_efficiency)), base="mi300x")
    kw = {"shape": DENSE, "dp": 2, "tp": 2, "pp": 2, "microbatches": 4, "attention": "unfused"}
    a, b = step(gpu=preset, **kw), step(gpu=same, **kw)
    assert a.step_s == b.step_s and a.compute_s == b.compute_s
    assert "kernels at their own bandwidth" in b.compute_model and "own bandwidth" not in a.compute_model
