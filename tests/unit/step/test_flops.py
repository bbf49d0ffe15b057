"""Transformer FLOPs against Narayanan et al. SC'21 equation (3), Megatron-LM's count and PaLM's 6N."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.step import TransformerShape, model_flops

# Narayanan et al. SC'21, Table 1: the 175B GPT-3 row (V = 51200 and s = 2048 for every row)
GPT3 = {"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048, "vocabulary": 51200}
GPT3_BATCH = 1536


def _paper(*, batch, s, layers, h, vocab, recompute):
    """Equation (3), with the 72 of their model FLOPs (no recomputation) read off the same terms."""
    if recompute:
        return 96 * batch * s * layers * h**2 * (1 + Fraction(s, 6 * h) + Fraction(vocab, 16 * layers * h))
    return 72 * batch * s * layers * h**2 * (1 + Fraction(s, 6 * h) + Fraction(vocab, 12 * layers * h))


def _megatron(*, batch, seq, layers, hidden, heads, groups, ffn_hidden, swiglu, vocab):
    """Megatron-LM num_floating_point_operations, dense transformer, BSHD, no MoE/MTP/MLA/gate,
    transcribed term by term (kv_channels = hidden/heads)."""
    kv_channels = hidden // heads
    fwd_bwd, fma = 3, 2
    ffn_expansion = 3 if swiglu else 2
    q = kv_channels * heads
    k = v = kv_channels * groups
    self_attn_term = fwd_bwd * fma * (hidden * (q + k + v) + q * hidden) * layers
    core_term = Fraction(fwd_bwd * fma * q, 2) * 2 * layers
    tokens = batch * seq
    return (tokens * (fwd_bwd * fma * hidden * (ffn_hidden * ffn_expansion) * layers
                      + self_attn_term + fwd_bwd * fma * hidden * vocab)
            + batch * seq * seq * core_term)


def test_gpt3_175b_reproduces_equation_3_with_and_without_recomputation():
    shape = TransformerShape(**GPT3)
    full = model_flops(shape, batch=GPT3_BATCH, recompute="full")
    none = model_flops(shape, batch=GPT3_BATCH)
    args = {"batch": GPT3_BATCH, "s": 2048, "layers": 96, "h": 12288, "vocab": 51200}
    assert full.total == _paper(**args, recompute=True)
    assert none.total == _paper(**args, recompute=False)
    # 4.51e18 FLOPs per iteration with recomputation: 6·N·tokens = 3.30e18, times 4/3, plus attention
    assert full.total == 4_510_970_753_323_106_304
    assert abs(Fraction(full.six_n_flops, 10**18) * Fraction(4, 3) - Fraction(44, 10)) < Fraction(1, 10)
    assert full.layer.backward == 2 * full.layer.forward
    assert full.layer.recompute == full.layer.forward and none.layer.recompute == 0


@pytest.mark.parametrize(("shape", "swiglu_ffn"), [
    ({"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048, "vocabulary": 51200}, None),
    ({"layers": 80, "hidden": 8192, "heads": 64, "sequence": 4096, "vocabulary": 128256, "kv_groups": 8,
          "ffn_factor": Fraction(7, 2), "gated": True}, 28672),
    ({"layers": 2, "hidden": 6, "heads": 3, "sequence": 5, "vocabulary": 7, "kv_groups": 1, "ffn_factor": Fraction(1, 3)}, None),
])
@pytest.mark.parametrize("batch", [1, 3, 512])
def test_causal_count_without_recomputation_is_megatrons(shape, swiglu_ffn, batch):
    s = TransformerShape(**shape)
    ours = model_flops(s, batch=batch, causal=True)
    theirs = _megatron(batch=batch, seq=s.sequence, layers=s.layers, hidden=s.hidden, heads=s.heads,
                       groups=s.groups, ffn_hidden=swiglu_ffn or s.ffn_hidden, swiglu=s.gated,
                       vocab=s.vocabulary)
    assert ours.total == theirs


@pytest.mark.parametrize("shape", [
    dict(GPT3),
    {"layers": 80, "hidden": 8192, "heads": 64, "sequence": 4096, "vocabulary": 128256, "kv_groups": 8,
         "ffn_factor": Fraction(7, 2), "gated": True},
])
def test_palm_convention_is_6n_plus_the_attention_term(shape):
    s = TransformerShape(**shape)
    f = model_flops(s, batch=4)
    # PaLM appendix B: 6N + 12·L·H·Q·T per token, H·Q = hidden, T = sequence
    assert f.total == f.six_n_flops + 12 * s.layers * s.hidden * s.sequence * f.tokens
    assert f.six_n_flops == 6 * s.parameters * 4 * s.sequence


def test_gpt3_parameter_count_is_175b():
    # 12·l·h² + V·h = 174.6e9 (Narayanan et al. section 5.1: P = 12lh²(1 + 13/(12h) + (V+s)/(12lh)) with biases)
    assert TransformerShape(**GPT3).parameters == 12 * 96 * 12288**2 + 51200 * 12288


def test_to_dict_is_json_native():
    d = model_flops(TransformerShape(**GPT3), batch=1).to_dict()
    assert d["shape"]["ffn_factor"] == 4 and d["recompute"] == "none"
    assert [s["key"] for s in d["sources"]] == ["narayanan2021megatron", "megatronlm", "chowdhery2022"]


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(GPT3, layers=0), "layers=0"),
    (dict(GPT3, heads=5), "heads=5 does not divide hidden=12288"),
    (dict(GPT3, kv_groups=7), "kv_groups=7 does not divide heads=96"),
    (dict(GPT3, ffn_factor=Fraction(1, 7)), "ffn_factor=1/7 is not a positive factor"),
    (dict(GPT3, ffn_factor=-4), "ffn_factor=-4"),
    (dict(GPT3, sequence=True), "sequence=True"),
    (dict(GPT3, gated="yes"), "gated='yes'"),
])
def test_bad_shapes_name_the_parameter(kwargs, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TransformerShape(**kwargs)


def test_bad_arguments():
    shape = TransformerShape(**GPT3)
    with pytest.raises(InputError, match="batch=0"):
        model_flops(shape, batch=0)
    with pytest.raises(InputError, match="did you mean 'full'"):
        model_flops(shape, batch=1, recompute="ful")
