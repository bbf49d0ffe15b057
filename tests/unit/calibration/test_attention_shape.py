"""The fused attention ``calibrate compute`` times: its shape on a tensor-parallel rank and its FLOPs,
counted independently of the step model (FlashAttention's forward is two products over the causal pairs,
2·b·a·d·s² FLOPs for s²/2 pairs; its backward recomputes the scores, 2.5 times the forward: Dao 2023)."""

from __future__ import annotations

import pytest

from costmodel.calibration.compute import AttentionShape
from costmodel.cli.calibrate import _model_attention, _transformer_attention
from costmodel.errors import InputError

GPT3_6_7B = {"hidden": 4096, "heads": 32, "seq": 2048, "vocab": 51200}


def test_the_default_gpu_model_is_a_gpt3_6_7b_layer():
    a = _model_attention(dict.fromkeys(("layers", "hidden", "heads", "seq", "vocab", "ffn", "kv_groups",
                                        "head_dim", "gated")), 1, 1)(True)
    assert (a.batch, a.heads, a.kv_heads, a.seq, a.head_dim) == (1, 32, 32, 2048, 128)
    assert a.flops == 7 * 1 * 32 * 128 * 2048**2 == 120_259_084_288
    assert a.text() == "1×32×2048×128"


def test_tensor_parallel_ranks_split_the_heads_and_keep_a_kv_head():
    llama = {**GPT3_6_7B, "kv_groups": 8, "seq": 8192, "gated": True, "ffn": "3.5"}
    a = _transformer_attention(llama, 2, 8)
    assert (a.batch, a.heads, a.kv_heads, a.seq, a.head_dim) == (2, 4, 1, 8192, 128)
    assert a.flops == 7 * 2 * 4 * 128 * 8192**2
    assert a.text() == "2×4×8192×128, 1 KV heads"


@pytest.mark.parametrize(("fields", "said"), [
    ({"heads": 6, "kv_heads": 4}, "kv_heads=4 does not divide heads=6"),
    ({"seq": 0}, "seq=0 is not a whole number >= 1"),
    ({"batch": 4096, "seq": 1 << 20}, "too large to measure"),
])
def test_bad_shapes_are_one_clear_error(fields, said):
    base = {"batch": 1, "heads": 4, "kv_heads": 4, "seq": 16, "head_dim": 8, "flops": 1}
    with pytest.raises(InputError, match=said):
        AttentionShape(**{**base, **fields})


def test_the_keys_and_the_longer_sequence_count_as_the_step_model_does():
    from fractions import Fraction

    from costmodel.step.flops import attention_pairs

    a = _transformer_attention(GPT3_6_7B, 1, 1)
    assert a.keys == attention_pairs(2048) / 2048 == 1024
    longer = a.stretched(8192)
    assert (longer.seq, longer.heads, longer.keys) == (8192, 32, 4096)
    assert longer.flops == _transformer_attention({**GPT3_6_7B, "seq": 8192}, 1, 1).flops
    assert Fraction(longer.flops, a.flops) == attention_pairs(8192) / attention_pairs(2048) == 16
