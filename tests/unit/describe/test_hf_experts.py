"""Which layers of a Hugging Face config.json have the experts, family by family, and Llama 4 Maverick.

Each rule is the family's own modeling code: ``Llama4TextConfig`` makes ``moe_layers`` (when the file gives
none) ``range(interleave_moe_layer_step - 1, num_hidden_layers, interleave_moe_layer_step)``, and
``Llama4TextDecoderLayer`` gives the other layers a ``Llama4TextMLP`` of ``intermediate_size_mlp``;
``Qwen2MoeDecoderLayer`` and ``Qwen3MoeDecoderLayer`` use the sparse block when ``layer_idx not in
mlp_only_layers`` and ``(layer_idx + 1) % decoder_sparse_step == 0``; DeepSeek's ``modeling_deepseek.py``
when ``layer_idx >= first_k_dense_replace and layer_idx % moe_layer_freq == 0``.  The expected layers
are written out here as those rules list them.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.describe.hf import parse_hf_config, read_hf_config
from costmodel.errors import ParseError
from costmodel.step import parameters

HF = Path(__file__).resolve().parents[2] / "data" / "hf"

BASE = {"hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 4, "intermediate_size": 176,
        "vocab_size": 1000, "max_position_embeddings": 4096, "num_experts_per_tok": 2}
QWEN = {"model_type": "qwen2_moe", "architectures": ["Qwen2MoeForCausalLM"], "num_experts": 8,
        "moe_intermediate_size": 32}
LLAMA4 = {"model_type": "llama4_text", "num_local_experts": 8, "intermediate_size_mlp": 256}
DEEPSEEK = {"model_type": "deepseek_v2", "n_routed_experts": 8, "moe_intermediate_size": 32}


def _moe(**keys) -> list[int]:
    """The layers with experts of the configuration BASE with *keys*, by the shape read from it."""
    shape = parse_hf_config(json.dumps({**BASE, **keys})).transformer()
    return [i for i in range(shape.layers) if shape.is_moe_layer(i)]


@pytest.mark.parametrize(("keys", "pattern", "layers"), [
    # Qwen-MoE: (i + 1) % decoder_sparse_step == 0 and i not in mlp_only_layers
    ({**QWEN, "decoder_sparse_step": 1}, None, list(range(12))),
    ({**QWEN, "decoder_sparse_step": 2}, "DE", [1, 3, 5, 7, 9, 11]),
    ({**QWEN, "mlp_only_layers": [0, 5]}, "D4ED6E", [1, 2, 3, 4, 6, 7, 8, 9, 10, 11]),
    ({**QWEN, "decoder_sparse_step": 3, "mlp_only_layers": [2]}, "5DE2DE2DE", [5, 8, 11]),
    # Llama 4: range(step - 1, layers, step), or the moe_layers list, which wins
    ({**LLAMA4, "interleave_moe_layer_step": 2}, "DE", [1, 3, 5, 7, 9, 11]),
    ({**LLAMA4, "interleave_moe_layer_step": 4}, "3DE", [3, 7, 11]),
    ({**LLAMA4, "interleave_moe_layer_step": 5}, "4DE", [4, 9]),  # the pattern cut at the last layer
    ({**LLAMA4, "interleave_moe_layer_step": 2, "moe_layers": [0, 5]}, "E4DE6D", [0, 5]),
    ({**LLAMA4, "interleave_moe_layer_step": 2, "moe_layers": list(range(1, 12, 2))}, "DE", [1, 3, 5, 7, 9, 11]),
    ({**LLAMA4, "moe_layers": list(range(12))}, None, list(range(12))),
    # DeepSeek: i >= first_k_dense_replace and i % moe_layer_freq == 0
    ({**DEEPSEEK, "first_k_dense_replace": 1, "moe_layer_freq": 1}, None, list(range(1, 12))),
    ({**DEEPSEEK, "first_k_dense_replace": 1, "moe_layer_freq": 2}, "ED", [2, 4, 6, 8, 10]),
    ({**DEEPSEEK, "first_k_dense_replace": 3, "moe_layer_freq": 3}, "E2D", [3, 6, 9]),
])
def test_each_family_puts_its_experts_where_transformers_does(keys, pattern, layers):
    m = parse_hf_config(json.dumps({**BASE, **keys}))
    assert m.shape.get("expert_layers") == pattern
    assert _moe(**keys) == layers
    assert not any(n.startswith("not modelled") for n in m.notes)  # the layers' keys are read, not noted


def test_llama_4s_dense_layers_have_an_ffn_of_their_own():
    m = parse_hf_config(json.dumps({**BASE, **LLAMA4, "interleave_moe_layer_step": 2}))
    assert (m.shape["ffn_factor"], m.shape["expert_ffn_factor"]) == (Fraction(256, 64), Fraction(176, 64))
    count = parameters(m.transformer())
    assert count.dense_ffn == 6 * 3 * 64 * 256 and count.routed_experts == 6 * 8 * 3 * 64 * 176
    left = parse_hf_config(json.dumps({**BASE, **{k: v for k, v in LLAMA4.items() if k != "intermediate_size_mlp"},
                                       "interleave_moe_layer_step": 2}))
    assert left.shape["ffn_factor"] == Fraction(16384, 64)
    assert ("intermediate_size_mlp = 16384: what transformers builds for llama4_text (the file leaves it out)"
            in left.notes)


def test_rules_that_leave_no_layer_with_experts_read_a_dense_model():
    m = parse_hf_config(json.dumps({**BASE, **LLAMA4, "interleave_moe_layer_step": 13}))
    assert "experts" not in m.shape and m.shape["ffn_factor"] == Fraction(256, 64)
    assert ("no layer has experts: interleave_moe_layer_step leaves each of the 12 layers a dense FFN, so the 8 "
            "experts are left out") in m.notes
    m = parse_hf_config(json.dumps({**BASE, **LLAMA4, "moe_layers": []}))
    assert "experts" not in m.shape and any(n.startswith("no layer has experts: moe_layers leaves") for n in m.notes)
    m = parse_hf_config(json.dumps({**BASE, **DEEPSEEK, "first_k_dense_replace": 11, "moe_layer_freq": 2}))
    assert "experts" not in m.shape  # layer 11 is odd
    assert any(n.startswith("no layer has experts: moe_layer_freq and first_k_dense_replace leave") for n in m.notes)


@pytest.mark.parametrize(("keys", "message"), [
    ({"moe_layers": "1,3"}, 'moe_layers = "1,3" is not a list of layer indices'),
    ({"moe_layers": [1, True]}, "moe_layers = [1, true] is not a list of layer indices"),
    ({"moe_layers": [1, 12]}, "moe_layers lists layer 12, and num_hidden_layers = 12 (layers 0 to 11)"),
    ({"mlp_only_layers": [-1]}, "mlp_only_layers lists layer -1, and num_hidden_layers = 12 (layers 0 to 11)"),
    ({"decoder_sparse_step": 0}, "decoder_sparse_step = 0 is not a whole number ≥ 1"),
    ({"interleave_moe_layer_step": 1.5}, "interleave_moe_layer_step = 1.5 is not a whole number ≥ 1"),
    ({"moe_layer_freq": [0, 1]}, "moe_layer_freq = [0, 1] is not a whole number ≥ 1"),
])
def test_bad_layer_keys(keys, message):
    with pytest.raises(ParseError) as caught:
        parse_hf_config(json.dumps({**BASE, **LLAMA4, **keys}))
    assert str(caught.value) == f"config.json: {message}"


def test_llama_4_maverick_has_experts_on_every_other_layer():
    """meta-llama/Llama-4-Maverick-17B-128E: 48 layers, experts on the odd 24 (interleave_moe_layer_step 2), 128
    routed experts of 8192 and one shared, top-1; the 24 dense layers' SwiGLU is 16384 wide.  Meta's model card
    gives 17B active and 400B total parameters, the total with the vision encoder (Llama4VisionConfig's 34
    layers of 1408 and the projector: about 0.87B by their shapes) and rounded to 400B; the text model counts
    400.7B, 0.18% above it, and a tolerance of 0.5% holds the rounding, not a 2× error."""
    m = read_hf_config(HF / "llama-4-maverick" / "config.json")
    assert (m.shape["experts"], m.shape["top_k"], m.shape["shared_experts"]) == (128, 1, 1)
    assert (m.shape["expert_layers"], m.shape["dense_layers"], m.shape["tied_embeddings"]) == ("DE", 0, False)
    shape = m.transformer()
    assert shape.moe_layers == 24 and [i for i in range(4) if shape.is_moe_layer(i)] == [1, 3]
    h, a, g, d, v = 5120, 40, 8, 128, 202048
    attention = h * (a + 2 * g) * d + a * d * h
    dense, expert, router = 3 * h * 16384, 3 * h * 8192, h * 128
    outside = 2 * v * h + h  # untied embeddings and the final norm
    count = parameters(shape)
    assert count.total == outside + 48 * (attention + 2 * h) + 24 * dense + 24 * (129 * expert + router)
    assert count.active == outside + 48 * (attention + 2 * h) + 24 * dense + 24 * (2 * expert + router)
    assert (count.total, count.active) == (400_711_848_960, 17_184_691_200)
    assert round(count.active / 1e9) == 17 and abs(count.total / 400e9 - 1) < 0.005
    assert not any("interleave_moe_layer_step" in n for n in m.notes)


def test_llama_4_scout_counts_as_before():
    """Scout has experts on all 48 layers (interleave_moe_layer_step 1, moe_layers 0 to 47): no pattern, and
    the counts of test_describe (17B active; 109B total with the vision encoder)."""
    m = read_hf_config(HF / "llama-4-scout" / "config.json")
    assert "expert_layers" not in m.shape and m.transformer().moe_layers == 48
    assert m.shape["ffn_factor"] == Fraction(16384, 5120)  # the dense FFN width no layer of Scout uses
    count = parameters(m.transformer())
    assert (count.total, count.active) == (107_769_861_120, 17_172_894_720)
