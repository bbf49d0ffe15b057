"""Attention heads whose width is not hidden/heads (``head_dim``): Gemma 2 9B, a Mistral NeMo 12B shape.

Each count is checked against a sum written out here tensor by tensor or matrix product by matrix
product, and a head_dim equal to hidden/heads changes nothing.
Sources: Team et al. 2024 (Gemma 2), arXiv:2408.00118, Table 1 (d_model 3584, 42 layers, 16 heads of
256, 8 KV heads); the ``head_dim`` key of the Hugging Face configurations (google/gemma-2-9b,
mistralai/Mistral-Nemo-Base-2407: hidden 5120, 40 layers, 32 heads of 128, 8 KV heads).
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.describe.hf import parse_hf_config, read_hf_config
from costmodel.describe.models import parse_model
from costmodel.errors import InputError, ParseError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, model_flops, parameters, step
from costmodel.step.memory import activation_bytes
from costmodel.step.ops import layer_ops

LINK = combine_link(alpha="10us", beta="1ns/B")
GEMMA_CONFIG = Path(__file__).resolve().parents[2] / "data" / "hf" / "gemma-2-9b" / "config.json"

# Gemma 2 9B, tensor by tensor (the checkpoint's shapes; Gemma 2 has an RMSNorm before and after both the
# attention and the FFN of every layer, and a final one)
H, L, A, G, D, F, V = 3584, 42, 16, 8, 256, 14336, 256000
GEMMA_PER_LAYER = {
    "q_proj": H * A * D, "k_proj": H * G * D, "v_proj": H * G * D, "o_proj": A * D * H,
    "gate_proj": H * F, "up_proj": H * F, "down_proj": F * H,
    "input_layernorm": H, "post_attention_layernorm": H, "pre_feedforward_layernorm": H,
    "post_feedforward_layernorm": H,
}
GEMMA_PUBLISHED = V * H + L * sum(GEMMA_PER_LAYER.values()) + H  # embed_tokens (tied), layers, final norm
GEMMA_POST_NORMS = L * 2 * H  # post_attention_layernorm and post_feedforward_layernorm: layer_norms=4

GEMMA = TransformerShape(layers=L, hidden=H, heads=A, kv_groups=G, head_dim=D, sequence=8192, vocabulary=V,
                         ffn_factor=Fraction(F, H), gated=True)

# Mistral NeMo 12B's shape (mistralai/Mistral-Nemo-Base-2407 config.json; untied embeddings)
NEMO = TransformerShape(layers=40, hidden=5120, heads=32, kv_groups=8, head_dim=128, sequence=8192,
                        vocabulary=131072, ffn_factor=Fraction(14336, 5120), gated=True, tied_embeddings=False)


def _products(hidden, heads, groups, d, ffn, vocab, layers, *, batch, s, causal, gated=True):  # noqa: PLR0917 - h, a, g, d, f, V, l
    """One iteration's FLOPs without recomputation, matrix product by matrix product: 2·m·n·k each,
    forward once and backward twice."""
    t = batch * s
    matrices = [(hidden, heads * d), (hidden, groups * d), (hidden, groups * d), (heads * d, hidden),
                *([(hidden, ffn)] * (2 if gated else 1)), (ffn, hidden)]
    per_layer = sum(2 * t * n * k for n, k in matrices)
    # QKᵀ: a heads of [s×d]·[d×s]; probabilities × V: a heads of [s×s]·[s×d]
    core = Fraction(2 * batch * heads * s * s * d + 2 * batch * heads * s * s * d, 2 if causal else 1)
    return 3 * (layers * (per_layer + core) + 2 * t * hidden * vocab)


def test_gemma_2_9b_parameters_by_tensor():
    assert GEMMA_PUBLISHED == 9_241_705_984  # the model card's 9.24B
    count = parameters(GEMMA)
    assert count.embeddings == V * H
    assert count.attention == L * (H * A * D + 2 * H * G * D + A * D * H)
    assert count.dense_ffn == L * 3 * H * F
    assert count.norms == (2 * L + 1) * H  # a pre-norm before attention and FFN, and the final norm
    # two norms a layer by default, as for Llama: Gemma 2's post-norms are the difference
    assert count.total == GEMMA_PUBLISHED - GEMMA_POST_NORMS == 9_241_404_928
    assert GEMMA_POST_NORMS == 301_056
    # with its four norms a layer the count is the model card's
    four = parameters(dataclasses.replace(GEMMA, layer_norms=4))
    assert four.norms == (4 * L + 1) * H
    assert four.total == GEMMA_PUBLISHED == 9_241_705_984


def test_gemma_2_9b_config_reads_head_dim():
    m = read_hf_config(GEMMA_CONFIG)
    assert m.shape["head_dim"] == 256 and m.shape["kv_groups"] == 8 and m.shape["gated"] is True
    # its sliding window on the even layers and its four norms a layer are the shape's too
    assert m.transformer() == dataclasses.replace(GEMMA, window=4096, window_layers="LG", layer_norms=4)
    assert m.notes == ()  # nothing the shape does not model


@pytest.mark.parametrize("causal", [False, True])
def test_gemma_2_9b_flops_matrix_by_matrix(causal):
    f = model_flops(GEMMA, batch=2, causal=causal)
    assert f.total == _products(H, A, G, D, F, V, L, batch=2, s=8192, causal=causal)
    t = 2 * 8192
    assert f.layer.qkv == 2 * t * H * (A + 2 * G) * D
    assert f.layer.projection == 2 * t * A * D * H
    assert f.layer.attention == Fraction(4 * 2 * 8192**2 * A * D, 2 if causal else 1)
    assert f.six_n_flops == 6 * t * (L * (H * (A + 2 * G) * D + A * D * H + 3 * H * F) + V * H)
    if not causal:  # PaLM: 6N + 12·L·H·Q·T per token, H heads of Q channels
        assert f.total == f.six_n_flops + 12 * L * A * D * 8192 * t


def test_gemma_2_9b_flops_against_megatron_with_kv_channels():
    """Megatron-LM's num_floating_point_operations with --kv-channels 256 (query_projection_size =
    kv_channels·heads), dense path, causal, transcribed term by term."""
    kv_channels, batch, seq = 256, 4, 8192
    q, kv = kv_channels * A, kv_channels * G
    self_attn = 3 * 2 * (H * (q + 2 * kv) + q * H) * L
    core = Fraction(3 * 2 * q, 2) * 2 * L
    expected = (batch * seq * (3 * 2 * H * (F * 3) * L + self_attn + 3 * 2 * H * V)
                + batch * seq * seq * core)
    assert model_flops(GEMMA, batch=batch, causal=True).total == expected


def test_mistral_nemo_shape_parameters_and_flops():
    h, a, g, d, f, v, layers = 5120, 32, 8, 128, 14336, 131072, 40
    per_layer = h * a * d + 2 * h * g * d + a * d * h + 3 * h * f + 2 * h
    assert parameters(NEMO).total == 2 * v * h + layers * per_layer + h == 12_247_782_400
    assert NEMO.attention_width == 4096 != NEMO.hidden and NEMO.kv_width == 1024
    for causal in (False, True):
        assert model_flops(NEMO, batch=1, causal=causal).total == _products(
            h, a, g, d, f, v, layers, batch=1, s=8192, causal=causal)


@pytest.mark.parametrize("shape", [GEMMA, NEMO], ids=["gemma-2-9b", "nemo"])
@pytest.mark.parametrize("tp", [1, 2, 8])
@pytest.mark.parametrize("attention", ["flash", "unfused"])
def test_layer_ops_use_the_head_width(shape, tp, attention):
    ops = layer_ops(shape, micro_batch=1, tp=tp, attention=attention, causal=attention == "flash")
    forward = {o.name: o for o in ops if o.phase == "forward" and o.flops}
    qkv, proj = forward["QKV"], forward["output projection"]
    assert qkv.n == (shape.heads + 2 * shape.groups) * shape.head_width // tp and qkv.k == shape.hidden
    assert proj.n == shape.hidden and proj.k == shape.attention_width // tp
    layer = model_flops(shape, batch=1, causal=attention == "flash").layer
    assert sum(o.flops for o in forward.values()) == layer.forward / tp


def test_activation_memory_counts_q_k_v_at_the_head_width():
    s, b, e = GEMMA.sequence, 1, 2
    # norms and inputs of QKV and FFN, two masks; Q and the projection's input s·b·a·d, K and V s·b·g·d;
    # the gated FFN's inside 3·e·s·b·f; FlashAttention's statistics 4·a·s·b
    expected = ((4 * e + 2) * s * b * H + e * (2 * s * b * A * D + 2 * s * b * G * D) + e * 3 * s * b * F
                + 4 * A * s * b)
    assert activation_bytes(GEMMA, micro_batch=b, tp=1, sequence_parallel=False, recompute="none",
                            attention="flash") == expected
    unfused = activation_bytes(GEMMA, micro_batch=b, tp=1, sequence_parallel=False, recompute="none",
                               attention="unfused")
    assert unfused == expected - 4 * A * s * b + (e + (e + 1)) * A * s * s * b


SHAPES = [
    {"layers": 2, "hidden": 4096, "heads": 32, "kv_groups": 8, "sequence": 2048, "vocabulary": 32000,
     "ffn_factor": Fraction(7, 2), "gated": True},
    {"layers": 3, "hidden": 1024, "heads": 16, "sequence": 512, "vocabulary": 5000},
    {"layers": 4, "hidden": 2048, "heads": 16, "kv_groups": 16, "sequence": 1024, "vocabulary": 32000,
     "experts": 8, "top_k": 2, "dense_layers": 1, "expert_ffn_factor": Fraction(11, 16), "shared_experts": 2},
]


@pytest.mark.parametrize("kwargs", SHAPES)
def test_head_dim_of_hidden_over_heads_changes_nothing(kwargs):
    plain = TransformerShape(**kwargs)
    same = TransformerShape(**kwargs, head_dim=kwargs["hidden"] // kwargs["heads"])
    assert parameters(same) == parameters(plain)
    assert same.attention_parameters == plain.attention_parameters
    for causal in (False, True):
        for recompute in ("none", "full"):
            a = model_flops(plain, batch=3, causal=causal, recompute=recompute)
            b = model_flops(same, batch=3, causal=causal, recompute=recompute)
            assert (a.total, a.layer, a.dense_layer, a.six_n_flops) == (b.total, b.layer, b.dense_layer,
                                                                        b.six_n_flops)
    for attention in ("flash", "unfused"):
        for tp in (1, 2):
            assert (layer_ops(plain, micro_batch=2, tp=tp, attention=attention)
                    == layer_ops(same, micro_batch=2, tp=tp, attention=attention))
            for recompute in ("none", "selective"):
                settings = {"micro_batch": 2, "tp": tp, "sequence_parallel": tp > 1, "recompute": recompute,
                            "attention": attention, "moe": plain.moe}
                assert activation_bytes(plain, **settings) == activation_bytes(same, **settings)
    run = {"peak_flops": "989e12", "efficiency": "1/2", "tp": 2, "dp": 2, "micro_batch": 1, "link": LINK}
    assert step(shape=plain, **run).to_dict() == step(shape=same, **run).to_dict()


def test_head_dim_is_checked():
    with pytest.raises(InputError, match=r"heads=24 does not divide hidden=3584; .*head_dim="):
        TransformerShape(layers=1, hidden=3584, heads=24, sequence=8, vocabulary=8)
    assert TransformerShape(layers=1, hidden=3584, heads=24, head_dim=128, sequence=8,
                            vocabulary=8).attention_width == 3072
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="head_dim"):
            TransformerShape(layers=1, hidden=64, heads=4, head_dim=bad, sequence=8, vocabulary=8)


def test_tensor_parallelism_still_divides_the_heads():
    with pytest.raises(InputError, match=r"^tp=32 does not divide heads=16"):
        step(shape=GEMMA, peak_flops="989e12", efficiency="1/2", tp=32, link=LINK)
    assert step(shape=GEMMA, peak_flops="989e12", efficiency="1/2", tp=8, link=LINK).step_s > 0


@pytest.mark.parametrize("value,message", [
    ("0", "head_dim = 0 is not a whole number ≥ 1"),
    ('"256"', 'head_dim = "256" is not a whole number ≥ 1'),
    ("2.5", "head_dim = 2.5 is not a whole number ≥ 1"),
])
def test_a_bad_head_dim_in_a_config_is_one_error(value, message):
    config = json.loads(GEMMA_CONFIG.read_text())
    text = json.dumps(config).replace('"head_dim": 256', f'"head_dim": {value}')
    with pytest.raises(ParseError, match=f"^config.json: {message}$"):
        parse_hf_config(text)


def test_a_config_without_head_dim_needs_heads_that_divide_hidden():
    config = json.loads(GEMMA_CONFIG.read_text())
    del config["head_dim"]
    config["num_attention_heads"] = 24
    with pytest.raises(ParseError, match="num_attention_heads = 24 does not divide hidden_size = 3584"):
        parse_hf_config(json.dumps(config))
    # a head_dim equal to hidden/heads (Mistral 7B's 128 at 4096 and 32 heads) leaves the shape as it was
    config.update(num_attention_heads=16, head_dim=3584 // 16)
    assert "head_dim" not in parse_hf_config(json.dumps(config)).shape


def test_a_model_file_takes_head_dim():
    m = parse_model('name = "gemma-2-9b"\n[shape]\nlayers = 42\nhidden = 3584\nheads = 16\nkv_groups = 8\n'
                    'head_dim = 256\nsequence = 8192\nvocabulary = 256000\nffn_hidden = 14336\ngated = true\n',
                    path="gemma.toml")
    assert m.transformer() == GEMMA
    with pytest.raises(ParseError, match=r"^x.toml: \[shape\] head_dim = 0 is not a whole number ≥ 1$"):
        parse_model('name = "x"\n[shape]\nlayers = 1\nhidden = 64\nheads = 4\nhead_dim = 0\nsequence = 8\n'
                    'vocabulary = 8\n', path="x.toml")
