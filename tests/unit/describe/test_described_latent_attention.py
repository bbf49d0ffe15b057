"""DeepSeek's multi-head latent attention as a Hugging Face config.json, a model file and the deepseek-v3
preset describe it: DeepSeek-V3 and V2-Lite as published (tests/data/hf), the defaults of transformers'
DeepseekV2Config and DeepseekV3Config, and the errors of a description that gives it only in part.

Sources: DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv:2412.19437), the abstract and section 4.2:
671B parameters, 37B activated; DeepSeek-AI 2024, DeepSeek-V2 (arXiv:2405.04434), appendix B: V2-Lite
15.7B parameters, 2.4B activated.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.describe.hf import parse_hf_config, read_hf_config
from costmodel.describe.models import model_preset, parse_model
from costmodel.errors import ParseError
from costmodel.step import TransformerShape, parameters

DATA = Path(__file__).resolve().parents[2] / "data" / "hf"
V3_CONFIG = DATA / "deepseek-v3" / "config.json"
V2_LITE_CONFIG = DATA / "deepseek-v2-lite" / "config.json"

V3 = TransformerShape(layers=61, hidden=7168, heads=128, kv_groups=128, head_dim=128, sequence=163840,
                      vocabulary=129280, ffn_factor=Fraction(18432, 7168), gated=True, experts=256, top_k=8,
                      expert_ffn_factor=Fraction(2048, 7168), shared_experts=1, dense_layers=3,
                      tied_embeddings=False, q_rank=1536, kv_rank=512, rope_head_dim=64, value_head_dim=128,
                      mtp_layers=1)


def test_deepseek_v3_config_is_read_with_its_latent_attention():
    m = read_hf_config(V3_CONFIG)
    assert m.transformer() == V3
    assert m.settings == {"causal": True, "dropout": False}
    # the multi-token prediction module is modelled, and the note says how it is counted
    (note,) = m.notes
    assert note.startswith("multi-token prediction: num_nextn_predict_layers = 1, counted as trained")
    assert "not counted" in note and "not modelled" not in note
    count = parameters(m.transformer())
    # 671B and 37B published for the main model (the activated count without the 0.9B input embedding:
    # 36.6B); the module's own weights besides
    assert (count.main, count.main_active) == (671_026_404_352, 37_552_282_624)
    assert count.main_active - 129280 * 7168 == 36_625_603_584
    assert (count.total, count.active) == (count.main + count.mtp, count.main_active + count.mtp_active)


def test_deepseek_v2_lite_config_has_no_queries_latent():
    m = read_hf_config(V2_LITE_CONFIG)
    shape = m.transformer()
    assert shape.q_rank is None and shape.kv_rank == 512 and shape.head_width == 2048 // 16 == 128
    assert "head_dim" not in m.shape and "q_rank" not in m.shape  # 128 = hidden/heads; q_lora_rank null
    assert (shape.rope_head_dim, shape.value_head_dim, shape.dense_layers) == (64, 128, 1)
    assert m.notes == ()
    count = parameters(shape)
    # 15.7B and 2.4B published (the activated count without the 0.2B input embedding: 2.45B)
    assert (count.total, count.active) == (15_706_484_224, 2_661_150_208)


BASE = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 176,
        "vocab_size": 1000, "max_position_embeddings": 128, "kv_lora_rank": 16}


def test_deepseek_families_take_their_configuration_class_defaults():
    m = parse_hf_config(json.dumps({**BASE, "model_type": "deepseek_v3", "q_lora_rank": None}))
    assert (m.shape["kv_rank"], m.shape["head_dim"], m.shape["rope_head_dim"], m.shape["value_head_dim"]) == (
        16, 128, 64, 128)
    assert "q_rank" not in m.shape  # null: given, the queries projected from the hidden state
    assert [n.split(":")[0] for n in m.notes] == ["qk_nope_head_dim = 128", "qk_rope_head_dim = 64",
                                                  "v_head_dim = 128"]
    assert all(n.endswith("what transformers builds for deepseek_v3 (the file leaves it out)")
               for n in m.notes)
    left_out = parse_hf_config(json.dumps({**BASE, "model_type": "deepseek_v2", "qk_nope_head_dim": 16,
                                           "qk_rope_head_dim": 8, "v_head_dim": 16}))
    assert left_out.shape["q_rank"] == 1536
    assert left_out.notes == ("q_lora_rank = 1536: what transformers builds for deepseek_v2 (the file leaves "
                              "it out)",)


def test_a_head_dim_key_beside_the_latent_attention_is_not_the_heads_width():
    """transformers' DeepseekV3Config sets head_dim to the rotary part; qk_nope_head_dim is the width."""
    m = parse_hf_config(json.dumps({**BASE, "qk_nope_head_dim": 32, "qk_rope_head_dim": 8, "v_head_dim": 16,
                                    "head_dim": 8}))
    assert m.shape["head_dim"] == 32


def test_q_lora_rank_zero_is_none_as_deepseeks_own_configurations_write_it():
    m = parse_hf_config(json.dumps({**BASE, "q_lora_rank": 0, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8,
                                    "v_head_dim": 16}))
    assert "q_rank" not in m.shape and m.transformer().latent


@pytest.mark.parametrize(("extra", "message"), [
    ({"qk_rope_head_dim": 8, "v_head_dim": 16}, "qk_nope_head_dim is missing: multi-head latent attention "
                                                "(kv_lora_rank = 16) needs each head's widths"),
    ({"qk_nope_head_dim": 16, "v_head_dim": 16}, "qk_rope_head_dim is missing"),
    ({"qk_nope_head_dim": 16, "qk_rope_head_dim": 8}, "v_head_dim is missing"),
    ({"qk_nope_head_dim": 0, "qk_rope_head_dim": 8, "v_head_dim": 16},
     "qk_nope_head_dim = 0 is not a whole number ≥ 1"),
    ({"qk_nope_head_dim": 16, "qk_rope_head_dim": -1, "v_head_dim": 16},
     "qk_rope_head_dim = -1 is not a whole number ≥ 0"),
    ({"qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16, "q_lora_rank": "8"},
     'q_lora_rank = "8" is not a whole number ≥ 1'),
    ({"qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16, "num_key_value_heads": 2},
     "num_key_value_heads = 2 with kv_lora_rank = 16: latent attention up-projects keys and values for each "
     "of the 4 heads"),
])
def test_a_latent_attention_given_in_part_is_one_error(extra, message):
    with pytest.raises(ParseError, match=f"^config.json: {re.escape(message)}") as caught:
        parse_hf_config(json.dumps({**BASE, **extra}))
    assert "\n" not in str(caught.value)


def test_kv_lora_rank_null_is_standard_attention():
    m = parse_hf_config(json.dumps({**BASE, "kv_lora_rank": None, "q_lora_rank": None}))
    assert "kv_rank" not in m.shape and not m.transformer().latent and m.notes == ()


def test_the_preset_is_the_published_configuration_at_its_pre_training_sequence():
    """DeepSeek-V3 pre-trained on sequences of 4K tokens (section 4.2); the config.json's default sequence is
    its 163840-token context."""
    import dataclasses

    preset = model_preset("deepseek-v3").transformer()
    assert preset == dataclasses.replace(V3, kv_groups=None, sequence=4096)
    assert parameters(preset) == parameters(V3)


MODEL = ('name = "tiny-mla"\n[shape]\nlayers = 2\nhidden = 64\nheads = 4\nhead_dim = 16\nsequence = 32\n'
         'vocabulary = 100\nkv_rank = 20\nq_rank = 24\nrope_head_dim = 8\nvalue_head_dim = 12\n')


def test_a_model_file_takes_the_latent_attention():
    shape = parse_model(MODEL, path="tiny.toml").transformer()
    assert (shape.kv_rank, shape.q_rank, shape.rope_head_dim, shape.value_head_dim) == (20, 24, 8, 12)
    assert parameters(shape).total == 94232  # tests/unit/step/test_latent_attention.py, matrix by matrix
    derived = parse_model('base = "deepseek-v3"\n[shape]\nq_rank = 768\n', path="half.toml").transformer()
    assert derived.q_rank == 768 and derived.kv_rank == 512


@pytest.mark.parametrize(("text", "message"), [
    (MODEL.replace("kv_rank = 20", "kv_rank = 0"), "[shape] kv_rank = 0 is not a whole number ≥ 1"),
    (MODEL.replace("rope_head_dim = 8", "rope_head_dim = -1"), "[shape] rope_head_dim = -1 is not a whole "
                                                                "number ≥ 0"),
    (MODEL.replace("kv_rank = 20\n", ""), "q_rank = 24 describes multi-head latent attention; give kv_rank="),
])
def test_a_bad_latent_attention_in_a_model_file_is_one_error(text, message):
    with pytest.raises(ParseError, match=f"^tiny.toml: {re.escape(message)}"):
        parse_model(text, path="tiny.toml")
