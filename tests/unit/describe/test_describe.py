"""Models as people describe them: presets against their papers, Hugging Face config.json, Megatron-LM
arguments, a global batch and a world size."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.describe import (
    build_shape,
    data_parallel_for,
    list_models,
    load_model,
    megatron_arguments,
    microbatches_for,
    model_preset,
    read_hf_config,
)
from costmodel.describe.hf import parse_hf_config
from costmodel.describe.models import MODEL_NAMES, parse_model
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.step import TransformerShape, parameters

DATA = Path(__file__).resolve().parents[2] / "data"

# the numbers each source publishes (source: the locator of each preset, and the papers' tables)
PUBLISHED = {
    # Brown et al. 2020, Table 2.1; Megatron-LM's padded vocabulary at tp 8 (Narayanan et al. 2021: 51200)
    "gpt-3-175b": {"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048, "vocabulary": 51200,
                   "ffn_factor": Fraction(4), "gated": False, "tied_embeddings": True},
    # Dubey et al. 2024, Table 3; vocab_size of the published config.json
    "llama-3-8b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_groups": 8, "sequence": 8192,
                   "vocabulary": 128256, "ffn_factor": Fraction(14336, 4096), "gated": True,
                   "tied_embeddings": False},
    "llama-3-70b": {"layers": 80, "hidden": 8192, "heads": 64, "kv_groups": 8, "sequence": 8192,
                    "vocabulary": 128256, "ffn_factor": Fraction(28672, 8192), "gated": True,
                    "tied_embeddings": False},
    "llama-3-405b": {"layers": 126, "hidden": 16384, "heads": 128, "kv_groups": 8, "sequence": 8192,
                     "vocabulary": 128256, "ffn_factor": Fraction(53248, 16384), "gated": True,
                     "tied_embeddings": False},
    # Jiang et al. 2024, Table 1
    "mixtral-8x7b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_groups": 8, "sequence": 32768,
                     "vocabulary": 32000, "ffn_factor": Fraction(14336, 4096), "gated": True,
                     "tied_embeddings": False, "experts": 8, "top_k": 2,
                     "expert_ffn_factor": Fraction(14336, 4096), "shared_experts": 0, "dense_layers": 0},
    # Dai et al. 2024, section 5.1, and deepseek-ai/deepseek-moe-16b-base's config.json
    "deepseek-moe-16b": {"layers": 28, "hidden": 2048, "heads": 16, "sequence": 4096, "vocabulary": 102400,
                         "ffn_factor": Fraction(10944, 2048), "gated": True, "tied_embeddings": False,
                         "experts": 64, "top_k": 6, "expert_ffn_factor": Fraction(1408, 2048),
                         "shared_experts": 2, "dense_layers": 1},
    # DeepSeek-AI 2024 (DeepSeek-V3), section 4.2, and deepseek-ai/DeepSeek-V3's config.json
    "deepseek-v3": {"layers": 61, "hidden": 7168, "heads": 128, "head_dim": 128, "sequence": 4096,
                    "vocabulary": 129280, "ffn_factor": Fraction(18432, 7168), "gated": True,
                    "tied_embeddings": False, "experts": 256, "top_k": 8,
                    "expert_ffn_factor": Fraction(2048, 7168), "shared_experts": 1, "dense_layers": 3,
                    "kv_rank": 512, "q_rank": 1536, "rope_head_dim": 64, "value_head_dim": 128,
                    "mtp_layers": 1},
}


def test_every_preset_is_listed_and_matches_its_source():
    assert set(MODEL_NAMES) == set(PUBLISHED)
    assert [m.name for m in list_models().models] == sorted(PUBLISHED)
    for name, shape in PUBLISHED.items():
        m = model_preset(name)
        assert m.shape == shape, name
        assert m.settings["causal"] is True
        assert m.source and m.locator


def test_presets_cite_their_papers():
    assert model_preset("gpt-3-175b").source.startswith("T. B. Brown")
    assert model_preset("llama-3-405b").locator.startswith("Table 3: 405B, 126 layers")
    assert "Mixtral of Experts" in model_preset("mixtral").source
    assert "DeepSeekMoE" in model_preset("deepseek-moe-16b").source
    assert "DeepSeek-V3 Technical Report" in model_preset("deepseek-v3").source


def test_llama_parameters_are_the_published_ones():
    # 8.03 B (Meta's model card): the shape counts the untied output layer itself now
    for name, published in (("llama-3-8b", 8.03e9), ("llama-3-70b", 70.6e9), ("llama-3-405b", 405.9e9)):
        shape = model_preset(name).transformer()
        assert shape.tied_embeddings is False
        count = parameters(shape)
        assert count.total == count.active
        assert f"{count.total / 1e9:.3g}" == f"{published / 1e9:.3g}", name
    # by hand: 2·V·h embeddings, 32 layers of attention h·(h + 2·h·8/32) + h² and SwiGLU 3·h·14336, 65 norms
    h, v = 4096, 128256
    by_hand = 2 * v * h + 32 * (h * (h + 2 * h * 8 // 32) + h * h + 3 * h * 14336) + 65 * h
    assert parameters(model_preset("llama-3-8b").transformer()).total == by_hand == 8_030_261_248


@pytest.mark.parametrize("name,total,active", [
    ("mixtral-8x7b", "46.7", "12.9"),  # Jiang et al. 2024, section 2: 46.7B total, 12.9B active
    ("deepseek-moe-16b", "16.4", "2.83"),  # Dai et al. 2024, section 5.1: 16.4B total, 2.8B activated
    # DeepSeek-AI 2024 (DeepSeek-V3), abstract: 671B total, 37B activated (without the 0.9B input embedding)
    ("deepseek-v3", "671", "37.6"),
])
def test_moe_presets_have_the_published_parameters(name, total, active):
    count = parameters(model_preset(name).transformer())
    # the main model's, as published; DeepSeek-V3's multi-token prediction module is counted apart
    assert f"{count.main / 1e9:.3g}" == total
    assert f"{count.main_active / 1e9:.3g}" == active


def test_mixtral_parameters_by_hand():
    # V·h twice (untied), 32 layers of attention, 8 SwiGLU experts of 3·h·14336 and an h × 8 router, 65 norms
    h, v, f = 4096, 32000, 14336
    attention = h * (h + 2 * h * 8 // 32) + h * h
    total = 2 * v * h + 32 * (attention + 8 * 3 * h * f + h * 8) + 65 * h
    active = 2 * v * h + 32 * (attention + 2 * 3 * h * f + h * 8) + 65 * h
    for m in (model_preset("mixtral-8x7b"), read_hf_config(DATA / "hf" / "mixtral-8x7b" / "config.json")):
        count = parameters(m.transformer())
        assert (count.total, count.active) == (total, active) == (46_702_792_704, 12_879_925_248)


def test_aliases_and_spellings_find_a_preset():
    assert model_preset("Llama3-8B").name == "llama-3-8b"
    assert model_preset("llama_3.1_405b").name == "llama-3-405b"
    with pytest.raises(UnknownNameError, match="did you mean 'llama-3-8b'"):
        model_preset("llama-3-9b")


def test_build_shape_builds_dense_and_moe_shapes():
    notes: list[str] = []
    shape = build_shape(model_preset("llama-3-8b").shape, notes=notes)
    assert shape == TransformerShape(layers=32, hidden=4096, heads=32, kv_groups=8, sequence=8192,
                                     vocabulary=128256, ffn_factor=Fraction(7, 2), gated=True,
                                     tied_embeddings=False)
    assert notes == []
    mixtral = build_shape(model_preset("mixtral-8x7b").shape)
    assert (mixtral.experts, mixtral.top_k, mixtral.expert_ffn_factor) == (8, 2, Fraction(7, 2))
    deepseek = build_shape(model_preset("deepseek-moe-16b").shape)
    assert (deepseek.experts, deepseek.top_k, deepseek.shared_experts, deepseek.dense_layers) == (64, 6, 2, 1)
    dense = {"layers": 2, "hidden": 64, "heads": 4, "sequence": 8, "vocabulary": 10}
    assert build_shape({**dense, "experts": 1, "top_k": 1}) == build_shape(dense)
    with pytest.raises(InputError, match=r"^shared_experts=2 describes a mixture of experts"):
        build_shape({**dense, "shared_experts": 2})


def test_a_user_file_starts_from_a_preset(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text('base = "llama-3-8b"\nname = "llama-long"\n[shape]\nsequence = 32768\n')
    m = load_model(str(path))
    assert m.name == "llama-long"
    assert m.shape == {**model_preset("llama-3-8b").shape, "sequence": 32768}
    assert m.settings == {"causal": True, "dropout": False}


@pytest.mark.parametrize("text,message", [
    ("[shape]\nlayers = 2\nhidden = 64\nheads = 4\nsequence = 8\n", "gives no vocabulary"),
    ("[shape]\nlayers = 0\nhidden = 64\nheads = 4\nsequence = 8\nvocabulary = 10\n", "layers = 0 is not"),
    ("[shape]\nlayer = 2\n", "unknown key 'layer' in [shape]; did you mean 'layers'"),
    ("[shape]\nlayers = 2\nhidden = 64\nheads = 5\nsequence = 8\nvocabulary = 10\n", "does not divide"),
    ("[shape]\nlayers = 2\nhidden = 64\nheads = 4\nsequence = 8\nvocabulary = 10\ngated = 1\n",
     "gated = 1 is not true or false"),
    ("[shape]\nlayers = 2\nhidden = 64\nheads = 4\nsequence = 8\nvocabulary = 10\n[step]\ncasual = true\n",
     "unknown key 'casual' in [step]; did you mean 'causal'"),
])
def test_a_bad_model_file_is_one_error_naming_it(text, message):
    with pytest.raises(ParseError, match=r"^m\.toml: ") as err:
        parse_model(text, path="m.toml")
    assert message in str(err.value)


def test_a_config_json_under_another_name_points_to_hf_config(tmp_path):
    path = tmp_path / "llama.cfg"
    path.write_text((DATA / "hf" / "llama-3-8b" / "config.json").read_text())
    with pytest.raises(ParseError, match=r"llama\.cfg: a model file is TOML; .* hf_config=FILE"):
        load_model(str(path))


# -- Hugging Face config.json ---------------------------------------------------------------------


def test_llama_3_8b_config_reads_as_the_preset():
    m = read_hf_config(DATA / "hf" / "llama-3-8b" / "config.json")
    assert m.shape == model_preset("llama-3-8b").shape
    assert m.settings == {"causal": True, "dropout": False}


def test_mixtral_config_reads_as_the_preset():
    m = read_hf_config(DATA / "hf" / "mixtral-8x7b" / "config.json")
    assert m.shape == model_preset("mixtral-8x7b").shape


def test_deepseek_moe_keys_map_to_the_shape_keywords():
    config = {"architectures": ["DeepseekForCausalLM"], "hidden_size": 2048, "num_hidden_layers": 28,
              "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 10944,
              "vocab_size": 102400, "max_position_embeddings": 4096, "tie_word_embeddings": False,
              "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
              "moe_intermediate_size": 1408, "first_k_dense_replace": 1, "hidden_act": "silu"}
    m = parse_hf_config(json.dumps(config))
    assert m.shape == {**PUBLISHED["deepseek-moe-16b"], "kv_groups": 16}


def test_qwen_moe_shared_expert_is_read_as_whole_experts():
    """Qwen/Qwen1.5-MoE-A2.7B: one shared expert of shared_expert_intermediate_size 5632, four of the
    routed experts' 1408, is priced as shared_experts = 4 (the same matrices and FLOPs); the model card's
    14.3B parameters and 2.7B activated.  A width that is not a whole number of experts stays a note."""
    m = read_hf_config(DATA / "hf" / "qwen1.5-moe-a2.7b" / "config.json")
    assert (m.shape["experts"], m.shape["top_k"], m.shape["shared_experts"]) == (60, 4, 4)
    assert m.notes == ("not counted: the biases of the linear layers: the parameter count is that of the weight "
                       "matrices and the norms",)  # Qwen2's query, key and value biases
    count = parameters(m.transformer())
    h, f, v, layers = 2048, 1408, 151936, 24
    attention, norms = 4 * h * h, 2 * h
    expert = 3 * h * f
    assert count.total == 2 * v * h + layers * (attention + norms + h * 60 + 64 * expert) + h
    assert count.active == count.total - layers * 56 * expert
    assert round(count.total / 1e9, 1) == 14.3 and round(count.active / 1e9, 1) == 2.7
    config = json.loads((DATA / "hf" / "qwen1.5-moe-a2.7b" / "config.json").read_text())
    odd = parse_hf_config(json.dumps({**config, "shared_expert_intermediate_size": 5000}))
    assert odd.shape["shared_experts"] == 0 and "shared_expert_intermediate_size" in odd.notes[1]
    given = parse_hf_config(json.dumps({**config, "n_shared_experts": 2}))  # the count given wins
    assert given.shape["shared_experts"] == 2 and "shared_expert_intermediate_size" in given.notes[1]

def test_a_multimodal_config_is_read_as_its_text_model():
    """Gemma 3 27B and Llama 4 Scout publish ...ForConditionalGeneration configurations whose text model is
    text_config: read as it, with a note that the vision encoder is left out.  Gemma 3's text_config leaves
    the vocabulary and the positions to Gemma3TextConfig (262208, 131072); Llama 4's MoE layers each have
    one shared expert of the routed experts' width besides the routed one (Llama4TextMoe), which no key
    gives: the model card's 17B active parameters (109B total with the vision encoder)."""
    gemma = read_hf_config(DATA / "hf" / "gemma-3-27b" / "config.json")
    assert (gemma.shape["vocabulary"], gemma.shape["sequence"], gemma.shape["window_layers"]) == \
        (262208, 131072, "5LG")
    assert gemma.settings == {"causal": True}
    assert gemma.notes[0] == ("the text model (text_config) of Gemma3ForConditionalGeneration: its vision "
                              "encoder and projector are left out")
    assert gemma.notes[1] == "vocab_size = 262208: what transformers builds for gemma3_text (the file leaves it out)"
    h, a, g, d, f, v = 5376, 32, 16, 128, 21504, 262208
    per_layer = h * (a + 2 * g) * d + a * d * h + 3 * h * f + 4 * h + 2 * d
    assert parameters(gemma.transformer()).total == v * h + 62 * per_layer + h == 27_009_346_304
    scout = read_hf_config(DATA / "hf" / "llama-4-scout" / "config.json")
    assert (scout.shape["experts"], scout.shape["top_k"], scout.shape["shared_experts"]) == (16, 1, 1)
    assert scout.shape["tied_embeddings"] is False and scout.settings == {"causal": True, "dropout": False}
    assert any(n.startswith("not modelled: attention_chunk_size: chunked attention") for n in scout.notes)
    count = parameters(scout.transformer())
    h, a, g, d, f, v = 5120, 40, 8, 128, 8192, 202048
    attention, expert = h * (a + 2 * g) * d + a * d * h, 3 * h * f
    assert count.total == 2 * v * h + 48 * (attention + 17 * expert + 16 * h + 2 * h) + h
    assert count.active == 2 * v * h + 48 * (attention + 2 * expert + 16 * h + 2 * h) + h
    assert round(count.active / 1e9) == 17 and round(count.total / 1e9) == 108
    # Qwen2-VL gives its text model's keys at the top, beside the vision_config
    config = json.loads((DATA / "hf" / "llama-3-8b" / "config.json").read_text())
    vl = parse_hf_config(json.dumps({**config, "architectures": ["Qwen2VLForConditionalGeneration"],
                                     "model_type": "qwen2_vl", "vision_config": {"depth": 32}}))
    assert vl.notes[0] == ("the text model of Qwen2VLForConditionalGeneration: its vision encoder and projector "
                           "are left out") and vl.settings["causal"] is True
    oss = read_hf_config(DATA / "hf" / "gpt-oss-120b" / "config.json")  # a key that turns biases on
    assert oss.notes[0] == ("not counted: the biases that attention_bias turns on: the parameter count is that of "
                            "the weight matrices and the norms")


def test_gpt2_and_falcon_names_are_read_as_the_standard_keys():
    """GPT-2's n_embd, n_layer, n_head, n_positions and an n_inner of null (4·h); Falcon 7B's multi_query
    (one key-value head) and FFN of 4·h; the biases and GPT-2's position embedding are named as not
    counted: the released weights hold 124,439,808 and 6,921,720,704."""
    gpt2 = read_hf_config(DATA / "hf" / "gpt2" / "config.json")
    assert {k: gpt2.shape[k] for k in ("layers", "hidden", "heads", "sequence", "vocabulary", "ffn_factor")} == \
        {"layers": 12, "hidden": 768, "heads": 12, "sequence": 1024, "vocabulary": 50257, "ffn_factor": 4}
    assert gpt2.notes == ("not counted: the biases of the linear layers and the learned position embeddings: "
                          "the parameter count is that of the weight matrices and the norms",)
    h, layers = 768, 12
    biases = layers * (3 * h + h + 4 * h + h + 2 * h) + h  # QKV, projection, FFN, the LayerNorms' and ln_f's
    assert parameters(gpt2.transformer()).total + biases + 1024 * h == 124_439_808
    config = json.loads((DATA / "hf" / "gpt2" / "config.json").read_text())
    with pytest.raises(ParseError, match=r'^config.json: n_inner = "big" is not a whole number ≥ 1$'):
        parse_hf_config(json.dumps({**config, "n_inner": "big"}))  # named as the file spells it
    falcon = read_hf_config(DATA / "hf" / "falcon-7b" / "config.json")
    assert (falcon.shape["kv_groups"], falcon.shape["ffn_factor"], falcon.shape["sequence"]) == (1, 4, 2048)
    assert falcon.notes == ("max_position_embeddings = 2048: what transformers builds for falcon (the file "
                            "leaves it out)",)
    # one LayerNorm a layer (weight and bias: the two h of the count), and ln_f's bias left out
    assert parameters(falcon.transformer()).total + 4544 == 6_921_720_704

def test_an_unknown_architecture_is_read_from_its_keys():
    config = {"architectures": ["NewModelForCausalLM"], "hidden_size": 256, "num_hidden_layers": 4,
              "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 5000,
              "max_position_embeddings": 512, "hidden_act": "gelu", "resid_pdrop": 0.1}
    m = parse_hf_config(json.dumps(config), sequence=128)
    assert m.shape["gated"] is False and m.shape["sequence"] == 128 and m.shape["tied_embeddings"] is True
    assert m.settings == {"causal": True, "dropout": True}


@pytest.mark.parametrize("change,message", [
    ({"hidden_size": None}, "config.json: hidden_size is missing"),
    ({"num_attention_heads": "32"}, 'config.json: num_attention_heads = "32" is not a whole number ≥ 1'),
    ({"num_hidden_layers": True}, "config.json: num_hidden_layers = true is not a whole number ≥ 1"),
    ({"tie_word_embeddings": "no"}, 'config.json: tie_word_embeddings = "no" is not true or false'),
    ({"num_local_experts": 8}, "config.json: num_experts_per_tok is missing"),
    ({"attention_dropout": 2}, "config.json: attention_dropout = 2 is not a dropout rate"),
])
def test_a_bad_config_is_one_error_naming_the_key(change, message):
    config = json.loads((DATA / "hf" / "llama-3-8b" / "config.json").read_text())
    for key, value in change.items():
        if value is None:
            del config[key]
        else:
            config[key] = value
    with pytest.raises(ParseError) as err:
        parse_hf_config(json.dumps(config))
    assert str(err.value) == message or str(err.value).startswith(message)


def test_a_model_folder_is_read_through_its_config_json(tmp_path):
    """A downloaded model's folder holds its config.json: the folder is read through it; one without is
    refused as a folder."""
    assert read_hf_config(DATA / "hf" / "llama-3-8b").shape == model_preset("llama-3-8b").shape
    with pytest.raises(ParseError, match="a folder, not a regular file"):
        read_hf_config(tmp_path)


def test_config_json_that_is_not_json():
    with pytest.raises(ParseError, match=r"^config.json:1: invalid JSON"):
        parse_hf_config("{hidden_size: 1}")
    with pytest.raises(ParseError, match="not a JSON object"):
        parse_hf_config("[1, 2]")


# -- Megatron-LM arguments ------------------------------------------------------------------------


def test_megatron_gpt3_175b_example_script():
    m = megatron_arguments((DATA / "megatron" / "gpt3-175b.args").read_text())
    assert m.shape == {"layers": 96, "hidden": 12288, "heads": 96, "sequence": 2048}
    assert m.settings == {"tp": 8, "pp": 16, "micro_batch": 1, "dtype": "fp16", "framework": "megatron"}
    assert m.global_batch == 1536
    assert "--lr 6.0e-5" in m.unread and "--data-path $DATA_PATH" in m.unread
    assert not any(u.startswith(("--tensor-model", "--num-layers", "--global")) for u in m.unread)


def test_megatron_parallelism_recompute_and_optimizer():
    m = megatron_arguments(
        "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention "
        "--num-query-groups 8 --swiglu --untie-embeddings-and-output-weights --vocab-size 128256 "
        "--tensor-model-parallel-size=4 --pipeline-model-parallel-size 4 "
        "--num-layers-per-virtual-pipeline-stage 2 --context-parallel-size 2 --expert-model-parallel-size 1 "
        "--sequence-parallel --recompute-activations --use-distributed-optimizer --overlap-grad-reduce "
        "--overlap-param-gather --bf16 --attention-dropout 0.0 --hidden-dropout 0")
    assert m.shape == {"layers": 32, "hidden": 4096, "heads": 32, "kv_groups": 8, "gated": True,
                       "tied_embeddings": False, "ffn_factor": Fraction(10880, 4096), "vocabulary": 128512}
    assert m.settings == {"tp": 4, "pp": 4, "cp": 2, "ep": 1, "schedule": "interleaved", "chunks": 4,
                          "recompute": "selective", "zero": 1, "framework": "megatron",
                          "sequence_parallel": True, "overlap_grad_reduce": True, "param_gather": "overlap",
                          "dropout": False, "dtype": "bf16"}
    assert any("int(8h/3 / 64) · 64" in n for n in m.notes)  # 10880 = int(4096·8/3 / 64)·64
    assert any("padded to a multiple of 512" in n for n in m.notes)


def test_megatron_moe_arguments_map_to_the_shape_keywords():
    m = megatron_arguments("--hidden-size 4096 --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 "
                           "--expert-model-parallel-size 8 --recompute-granularity full")
    assert m.shape == {"hidden": 4096, "experts": 8, "top_k": 2, "expert_ffn_factor": Fraction(7, 2)}
    assert m.settings == {"ep": 8, "recompute": "full", "framework": "megatron"}


def test_megatron_arguments_run_megatron_and_its_pipeline_sends():
    """Megatron-LM's arguments name its framework; the interleaved schedule overlaps its sends unless
    told not to."""
    args = "--num-layers 8 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 2"
    assert "pipeline_sends" not in megatron_arguments(args).settings
    m = megatron_arguments(args + " --no-overlap-p2p-communication --no-async-tensor-model-parallel-allreduce")
    assert m.settings["pipeline_sends"] == "blocking" and m.settings["framework"] == "megatron"
    assert m.settings["tp_overlap"] == "none" and not m.unread


@pytest.mark.parametrize("text,message", [
    ("--tensor-model-parallel-size", "--tensor-model-parallel-size needs a value"),
    ("--tensor-model-parallel-size x", "'x' is not a whole number"),
    ("--tensor-model-parallel-size 0", "'0' is not a whole number ≥ 1"),
    ("--recompute-granularity most", "'most' is not one of selective, full"),
    ("--bf16 --fp16", "bf16 and fp16 were both given"),
    ("--swiglu", "needs hidden-size too"),
    ("--num-layers 10 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2",
     "is not a multiple of"),
    ("--lr 'unclosed", "does not split into arguments"),
])
def test_bad_megatron_arguments(text, message):
    with pytest.raises(InputError, match=message):
        megatron_arguments(text)


# -- a global batch and a world size --------------------------------------------------------------


def test_global_batch_of_the_published_runs():
    assert microbatches_for(1536, micro_batch=1, dp=12) == 128  # GPT-3 175B on 1536 GPUs, tp 8, pp 16
    assert microbatches_for(2048, micro_batch=1, dp=128) == 16  # Llama 3 405B, Dubey et al. Table 4
    assert data_parallel_for(16384, tp=8, pp=16) == 128
    assert data_parallel_for(16384, tp=8, pp=16, cp=16) == 8


def test_a_global_batch_that_does_not_divide_names_the_nearest():
    with pytest.raises(InputError, match=r"^global_batch=2000 is not a multiple of the micro-batch times the "
                                         r"replicas, 1 × 128 = 128; give global_batch=1920 or 2048 \(2000 "):
        microbatches_for(2000, micro_batch=1, dp=128)
    # 1536 sequences over 12 replicas: 128 each, which micro-batches of 2 or 4 divide
    with pytest.raises(InputError, match=r"give global_batch=1500 or 1560, or micro_batch=2 or 4$"):
        microbatches_for(1536, micro_batch=5, dp=12)
    with pytest.raises(InputError, match=r"^100 GPUs are not a multiple of tp × pp × cp = 8 × 1 × 1 = 8; "
                                         r"give world_size=96 or 104$"):
        data_parallel_for(100, tp=8)


@given(st.integers(1, 10**6), st.integers(1, 64), st.integers(1, 512))
def test_microbatches_divide_or_the_suggestions_do(n, b, d):
    try:
        m = microbatches_for(n, micro_batch=b, dp=d)
    except InputError as exc:
        assert n % (b * d)
        suggested = str(exc).split("give global_batch=")[1].split(",")[0].split(" (")[0].split(" or ")
        assert all(int(x) % (b * d) == 0 and int(x) > 0 for x in suggested)
    else:
        assert m * b * d == n


@given(st.integers(1, 10**5), st.integers(1, 16), st.integers(1, 16), st.integers(1, 8))
def test_world_size_divides_or_the_suggestions_do(g, t, p, c):
    try:
        dp = data_parallel_for(g, tp=t, pp=p, cp=c)
    except InputError as exc:
        suggested = str(exc).split("give world_size=")[1].split(" or ")
        assert all(int(x) % (t * p * c) == 0 for x in suggested)
    else:
        assert dp * t * p * c == g


def test_a_config_that_sets_what_the_shape_does_not_model_says_so():
    """Qwen-MoE's shared expert of its own width: read, priced as the standard transformer, and named;
    DeepSeek-V3's multi-token prediction, latent attention and a head dimension other than hidden/heads are
    modelled (the shape's mtp_layers, kv_rank, q_rank and head_dim), so no note calls them not modelled."""
    from costmodel.describe.hf import parse_hf_config

    base = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 176,
            "vocab_size": 1000, "max_position_embeddings": 128, "architectures": ["LlamaForCausalLM"]}
    assert parse_hf_config(json.dumps(base)).notes == ()
    latent = parse_hf_config(json.dumps({**base, "q_lora_rank": 32, "kv_lora_rank": 16,
                                         "qk_nope_head_dim": 32, "qk_rope_head_dim": 8, "v_head_dim": 16,
                                         "num_nextn_predict_layers": 1}))
    (note,) = latent.notes  # the multi-token prediction module is modelled now: the note says how
    assert note.startswith("multi-token prediction: num_nextn_predict_layers = 1, counted as trained")
    assert "not modelled" not in note and "latent" not in note
    assert (latent.shape["head_dim"], latent.shape["q_rank"], latent.shape["kv_rank"]) == (32, 32, 16)
    assert latent.shape["mtp_layers"] == 1
    qwen = parse_hf_config(json.dumps({**base, "num_experts": 4, "num_experts_per_tok": 1,
                                       "moe_intermediate_size": 32, "shared_expert_intermediate_size": 48}))
    assert any(n.startswith("not modelled: shared_expert_intermediate_size") for n in qwen.notes)
    off = parse_hf_config(json.dumps({**base, "sliding_window": 4096, "use_sliding_window": False,
                                      "num_nextn_predict_layers": 0}))
    assert off.notes == ()


def test_megatron_deepseek_arguments_give_the_deepseek_v3_shape():
    """DeepSeek-R1's arguments to Megatron-LM (its latent attention, shared expert and --moe-layer-freq
    list) describe the deepseek-v3 preset's model: the same parameters, counted from a shape whose dense
    first layers come from a list instead of first_k_dense_replace."""
    from costmodel.describe import build_shape, load_model
    from costmodel.step import parameters

    m = megatron_arguments((DATA / "megatron" / "deepseek-r1.args").read_text())
    assert m.shape == {"layers": 61, "hidden": 7168, "heads": 128, "sequence": 4096, "experts": 256, "top_k": 8,
                       "ffn_factor": Fraction(18432, 7168), "expert_ffn_factor": Fraction(2048, 7168),
                       "gated": True, "tied_embeddings": False, "kv_rank": 512, "q_rank": 1536, "head_dim": 128,
                       "rope_head_dim": 64, "value_head_dim": 128, "shared_experts": 1, "expert_layers": "3D58E"}
    assert m.settings["recompute"] == "selective" and m.settings["sequence_parallel"] and not m.notes
    assert "--moe-layer-freq" not in " ".join(m.unread) and "--kv-lora-rank" not in " ".join(m.unread)
    preset = build_shape(dict(load_model("deepseek-v3").shape))
    read = build_shape({**m.shape, "vocabulary": preset.vocabulary})
    # the script (a post-training one) gives no --mtp-num-layers: its model is the preset's main model,
    # without the multi-token prediction module the preset trains
    assert "mtp_layers" not in m.shape and preset.mtp_layers == 1
    assert parameters(read).total == parameters(preset).main == 671_026_404_352
    assert parameters(read).active == parameters(preset).main_active
    trained = megatron_arguments((DATA / "megatron" / "deepseek-r1.args").read_text() + " --mtp-num-layers 1")
    assert parameters(build_shape({**trained.shape, "vocabulary": preset.vocabulary})) == parameters(preset)


@pytest.mark.parametrize("freq,layers,pattern", [
    ("1", 8, None), ("2", 8, "ED"), ("4", 6, "E3D"), ("9", 6, "E5D"),
    ("([1]*3+[0]*1)*3", 12, "3ED"), ("[0]*3+[1]*58", 61, "3D58E"), ("[0,1]*2", 4, "DE"),
    ("2*[1,0]", 4, "ED"), ("([0]+[1]*23)", 24, "D23E"),
])
def test_megatron_moe_layer_freq(freq, layers, pattern):
    """A number N puts experts on the layers i with i % N = 0, Megatron-LM's rule; a list gives each
    layer its own (1: experts), read by a grammar, never evaluated."""
    m = megatron_arguments(f"--num-layers {layers} --hidden-size 64 --num-experts 4 --moe-router-topk 1 "
                           f"--moe-layer-freq {freq}")
    assert m.shape.get("expert_layers") == pattern
    assert "experts" in m.shape


@pytest.mark.parametrize("freq,message", [
    ("[1]*10000000", "more than 1000000 layers"),
    ("([1,0]*600)*1000", "more than 1000000 layers"),
    ("[2]", "each entry is 0 .dense. or 1"),
    ("(", "expected '\\[' or '\\('"),
    ("([1]", "without its '\\)'"),
    ("[1]*0", "a repetition of 0"),
    ("[1,]", "each entry is 0"),
    ("[1]+", "expected"),
    ("__import__('os')", "not a list of layers this reader knows"),
    ("[1]*3", "lists 3 layers, and num-layers is 4"),
    ("0", "is not a whole number ≥ 1"),
])
def test_bad_megatron_moe_layer_freq(freq, message):
    with pytest.raises(InputError, match=message):
        megatron_arguments(f"--num-layers 4 --hidden-size 64 --num-experts 4 --moe-router-topk 1 "
                           f"--moe-layer-freq '{freq}'")


def test_megatron_latent_attention_takes_megatrons_defaults_and_needs_its_switch():
    m = megatron_arguments("--hidden-size 1024 --num-attention-heads 16 --multi-latent-attention")
    assert (m.shape["kv_rank"], m.shape["head_dim"], m.shape["rope_head_dim"], m.shape["value_head_dim"]) == (
        32, 128, 64, 128)
    assert "q_rank" not in m.shape and any("Megatron-LM's defaults of the latent attention" in n for n in m.notes)
    m = megatron_arguments("--hidden-size 1024 --num-attention-heads 16 --kv-lora-rank 64")
    assert "kv_rank" not in m.shape and any("without multi-latent-attention" in n for n in m.notes)


def test_megatron_shared_experts_and_a_dense_model():
    m = megatron_arguments("--hidden-size 1024 --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 512 "
                           "--moe-shared-expert-intermediate-size 1024")
    assert m.shape["shared_experts"] == 2
    with pytest.raises(InputError, match="is not a whole number of experts of moe-ffn-hidden-size 512"):
        megatron_arguments("--hidden-size 1024 --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 512 "
                           "--moe-shared-expert-intermediate-size 700")
    m = megatron_arguments("--num-layers 4 --hidden-size 64 --moe-layer-freq 2")
    assert "expert_layers" not in m.shape and any("without num-experts" in n for n in m.notes)
    m = megatron_arguments("--num-layers 4 --hidden-size 64 --num-experts 4 --moe-router-topk 1 "
                           "--moe-layer-freq [0]*4")
    assert "experts" not in m.shape and any("no layer experts" in n for n in m.notes)


def test_megatron_arguments_from_a_file_and_from_a_script_with_continued_lines(tmp_path):
    """@PATH, or a path alone, reads the arguments from the file; a backslash at a line's end continues the
    line as the shell reads it, so a script's argument block reads as its one line does."""
    path = DATA / "megatron" / "deepseek-r1.args"
    whole = megatron_arguments(path.read_text())
    assert megatron_arguments(f"@{path}") == megatron_arguments(str(path)) == whole
    script = tmp_path / "train.sh"
    script.write_text("# launch\ntorchrun pretrain_gpt.py \\\n  --num-layers 4 \\\n  --hidden-size 512 \\\n"
                      "  --num-attention-heads 8 --lr 1e-4 \\\n  --fp16 \\\n  --use-flash-attn\n")
    read = megatron_arguments(f"@{script}")
    assert read.shape == {"layers": 4, "hidden": 512, "heads": 8}
    assert read.unread == ("--lr 1e-4", "--use-flash-attn") and read.words == ("torchrun", "pretrain_gpt.py")


@pytest.mark.parametrize("text,words", [
    ("foo", "megatron='foo' holds no Megatron-LM argument (each starts with --) and names no file"),
    ("nothing here", "megatron='nothing here' holds no Megatron-LM argument"),
    ("", "megatron='' holds no Megatron-LM argument"),
    ("--num-layers '4", "does not split into arguments: No closing quotation"),
    ("@/nonexistent/args", "/nonexistent/args: cannot read Megatron-LM arguments: No such file or directory"),
])
def test_megatron_text_that_holds_no_argument_is_refused(text, words):
    from costmodel.errors import CostmodelError

    with pytest.raises(CostmodelError) as caught:
        megatron_arguments(text)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_long_megatron_text_is_cut_in_its_error():
    from costmodel.errors import InputError

    with pytest.raises(InputError, match=r"^megatron='x{60}…' holds no"):
        megatron_arguments("x" * 10_000)


SCRIPT = """#!/bin/bash
# a launch script as training scripts are written: variables, arrays, a condition, quoted elements
export CUDA_DEVICE_MAX_CONNECTIONS=1
OUT=${1:-"runs/out"}
NODE_RANK=${RANK:-0}
LAYERS=16
TP=2
MBS=1
GBS=64
PRECISION="fp8"
WORLD=$((8*2))
MODEL=(
    --num-layers $LAYERS
    --hidden-size 2048 --num-attention-heads 16
    --seq-length ${SEQ:-4096}
    --vocab-size 32000
    --use-mcore-models
)
TRAIN=(--micro-batch-size $MBS --global-batch-size ${GBS} --lr 3e-4 --bf16)
EXTRA=()
if [[ "$PRECISION" == "fp8" ]]; then
    EXTRA+=("--fp8-format hybrid" "--fp8-amax-history-len 1024")
fi
PARALLEL=(
    --tensor-model-parallel-size $TP
    # --pipeline-model-parallel-size 4
    --sequence-parallel
)
torchrun --nproc_per_node 8 --node_rank $NODE_RANK pretrain_gpt.py \\
    ${MODEL[@]} ${TRAIN[@]} ${EXTRA[@]} ${PARALLEL[@]} --save "$OUT" --world $WORLD
"""


def test_a_launch_script_reads_as_the_shell_would_run_it(tmp_path):
    """A script's literal variables are put in their places (${NAME:-default} takes its default when the
    script assigns none), array elements quoted whole split into their words, and the rest of the shell
    (commands, brackets, assignments, values that hold a substitution) is left out as words."""
    path = tmp_path / "train.sh"
    path.write_text(SCRIPT)
    read = megatron_arguments(f"@{path}")
    assert read.shape == {"layers": 16, "hidden": 2048, "heads": 16, "sequence": 4096, "vocabulary": 32000}
    assert (read.settings["tp"], read.settings["dtype"], read.settings["sequence_parallel"]) == (2, "fp8", True)
    assert "pp" not in read.settings  # commented out
    assert read.global_batch == 64
    assert set(read.notes[0].removeprefix("shell variables read from their assignments: ").split(", ")) == \
        {"LAYERS=16", "MBS=1", "GBS=64", "PRECISION=fp8", "TP=2", "NODE_RANK=0"}  # ${RANK:-0}: RANK unset
    assert "--fp8-amax-history-len 1024" in read.unread and "--lr 3e-4" in read.unread
    assert "--node_rank 0" in read.unread and "--world $WORLD" in read.unread  # $((8*2)) is no literal
    assert {"torchrun", "pretrain_gpt.py", "MODEL=(", ")", "${MODEL[@]}"} <= set(read.words)
    assert not any(word.startswith("--") for word in read.words)


def test_a_variable_the_text_does_not_assign_stays_as_written():
    from costmodel.errors import InputError

    with pytest.raises(InputError, match=r"--num-layers '\$LAYERS' is not a whole number"):
        megatron_arguments("--num-layers $LAYERS --hidden-size 64")
    assert megatron_arguments("L=4 --num-layers $L").shape == {"layers": 4}
    assert megatron_arguments("L=$(nproc) --num-layers ${L:-2}").shape == {"layers": 2}  # no literal: default
    assert megatron_arguments("L=4 L=$(nproc) --num-layers ${L:-2}").shape == {"layers": 2}  # unknown again
    assert megatron_arguments("--num-layers 4 --moe-layer-freq ([1]*3+[0]*1)").shape["layers"] == 4


@pytest.mark.parametrize("arguments,split", [
    # the first and last stages' layers, the rest spread evenly (DeepSeek-V3's 61 on 16: 4 first, 1 last)
    ("--num-layers 61 --pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 4 "
     "--decoder-last-pipeline-num-layers 1", (4,) * 15 + (1,)),
    ("--num-layers 10 --pipeline-model-parallel-size 4 --decoder-last-pipeline-num-layers 1", (3, 3, 3, 1)),
    ("--num-layers 6 --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 2 "
     "--decoder-last-pipeline-num-layers 4", (2, 4)),
    # the embedding and the loss counted as a layer each: Llama 3 405B's 126 on 16 as Dubey et al. put them
    ("--num-layers 126 --pipeline-model-parallel-size 16 --account-for-embedding-in-pipeline-split "
     "--account-for-loss-in-pipeline-split", (7,) + (8,) * 14 + (7,)),
    ("--num-layers 7 --pipeline-model-parallel-size 4 --account-for-loss-in-pipeline-split", (2, 2, 2, 1)),
    # with model chunks, each stage's layers split over them, chunk by chunk (one entry per virtual stage)
    ("--num-layers 30 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 6 "
     "--decoder-last-pipeline-num-layers 8 --virtual-pipeline-model-parallel-size 2", (3, 4, 4, 4) * 2),
])
def test_megatron_uneven_pipeline_arguments_give_the_stages_layers(arguments, split):
    """Megatron-LM's get_num_layers_to_build (megatron/core/transformer/transformer_block.py)."""
    assert megatron_arguments(arguments).settings["stage_layers"] == split


@pytest.mark.parametrize("arguments,words", [
    ("--num-layers 61 --pipeline-model-parallel-size 16 --decoder-first-pipeline-num-layers 3",
     "num-layers 61 less the first and last stages' 3 does not spread evenly over the 15 stages between"),
    ("--num-layers 8 --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 3 "
     "--decoder-last-pipeline-num-layers 3", "over the 0 stages between"),
    ("--num-layers 8 --pipeline-model-parallel-size 4 --account-for-loss-in-pipeline-split",
     "(9) is not a multiple of pipeline-model-parallel-size 4"),
    ("--num-layers 8 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 2 "
     "--account-for-loss-in-pipeline-split", "give one of the two"),
    ("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 2", "need num-layers too"),
    ("--num-layers 12 --pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 3 "
     "--virtual-pipeline-model-parallel-size 2", "do not split into 2 model chunks each"),
])
def test_megatron_uneven_pipeline_arguments_that_do_not_split_are_refused(arguments, words):
    from costmodel.errors import InputError

    with pytest.raises(InputError) as caught:
        megatron_arguments(arguments)
    assert words in str(caught.value)


def test_megatron_pipeline_layout_gives_the_stages_the_chunks_and_the_prediction_modules():
    """--pipeline-model-parallel-layout: each virtual stage's transformer layers (t), in Megatron-Core's
    order (stage k of the layout is chunk k // pp of rank k % pp), the chunks from the stages per rank,
    and the multi-token prediction modules (m), after every layer."""
    one = megatron_arguments("--num-layers 61 --pipeline-model-parallel-size 16 "
                             "--pipeline-model-parallel-layout 'Et*3|(tttt|)*14,ttmL'")
    assert one.settings["stage_layers"] == (3,) + (4,) * 14 + (2,) and one.shape["mtp_layers"] == 1
    assert "schedule" not in one.settings and one.notes == ()
    # Megatron-Core's own example: a module and the loss on stages of their own, four chunks a rank
    four = megatron_arguments("--num-layers 61 --pipeline-model-parallel-size 8 --mtp-num-layers 1 "
                              "--pipeline-model-parallel-layout 'Ettt|(tt|)*29,m|L'")
    assert four.settings["stage_layers"] == (3,) + (2,) * 29 + (0, 0)
    assert (four.settings["schedule"], four.settings["chunks"]) == ("interleaved", 4)
    assert "on a stage before the loss's" in four.notes[0]


@pytest.mark.parametrize("layout,words", [
    ("Ex|L", "'x' is no layer mark"), ("Et(t|L", "a bracket is not closed"), ("Et)L", "closes that was not"),
    ("Et*|L", "a number must follow *"), ("((t*1000)*1000)*1000", "more than 1000000 marks"),
    ("tE|L", "must start with the embedding (E)"), ("Et|ttLL", "each once"),
    ("Etm|ttL", "places a transformer layer after a multi-token prediction module"),
    ("Et|t|tL", "3 stages, not a multiple of pipeline-model-parallel-size 2"),
    ("Et|tttL", "places 4 transformer layers (t), and num-layers is 3"),
    ("Et|ttmmL", "places 2 multi-token prediction modules (m), and mtp-num-layers is 1"),
])
def test_megatron_pipeline_layouts_megatron_would_refuse_are_refused(layout, words):
    from costmodel.errors import InputError

    extra = " --mtp-num-layers 1" if "mm" in layout else ""
    with pytest.raises(InputError) as caught:
        megatron_arguments(f"--num-layers 3 --pipeline-model-parallel-size 2 "
                           f"--pipeline-model-parallel-layout '{layout}'{extra}")
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_an_expert_tensor_parallel_size_other_than_tp_is_named():
    """Megatron-LM's experts take tp's split unless expert-tensor-parallel-size says otherwise; the step
    model splits them as tp does, and says so when the arguments ask for another split."""
    other = megatron_arguments("--tensor-model-parallel-size 2 --expert-tensor-parallel-size 1 --num-layers 2")
    assert other.notes[0].startswith("expert-tensor-parallel-size 1 with tensor-model-parallel-size 2: "
                                     "costmodel splits each expert over the tensor-parallel ranks")
    assert not any("--expert-tensor" in u for u in other.unread)
    assert megatron_arguments("--tensor-model-parallel-size 2 --expert-tensor-parallel-size 2").notes == ()
    assert megatron_arguments("--expert-tensor-parallel-size 1 --num-layers 2").notes == ()


def test_a_file_of_arguments_larger_than_a_script_can_be_is_refused(tmp_path):
    from costmodel.describe.megatron import MAX_BYTES
    from costmodel.errors import ParseError

    big = tmp_path / "args"
    with big.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: nothing written or read
    with pytest.raises(ParseError, match="larger than the 4 MiB costmodel reads"):
        megatron_arguments(f"@{big}")


@pytest.mark.parametrize("arguments,settings", [
    ("--use-megatron-fsdp", {"framework": "fsdp", "zero": 3}),  # optim_grads_params, the default
    ("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", {"framework": "fsdp", "zero": 2}),
    ("--use-megatron-fsdp --data-parallel-sharding-strategy optim", {"framework": "megatron", "zero": 1}),
    ("--use-megatron-fsdp --data-parallel-sharding-strategy no_shard --use-distributed-optimizer",
     {"framework": "megatron", "zero": 0}),
    ("--use-torch-fsdp2", {"framework": "fsdp", "zero": 3}),
    # FSDP's own schedule overlaps the gradients' reduction and the parameters' gathering: the switches go
    ("--use-megatron-fsdp --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather",
     {"framework": "fsdp", "zero": 3}),
])
def test_fully_sharded_data_parallelism_reads_as_its_zero_stage(arguments, settings):
    read = megatron_arguments(f"--num-layers 2 {arguments}")
    assert {k: read.settings[k] for k in ("framework", "zero")} == settings
    assert "overlap_grad_reduce" not in read.settings or settings["framework"] != "fsdp"
    assert "param_gather" not in read.settings or settings["framework"] != "fsdp"


def test_an_unknown_sharding_strategy_is_refused():
    from costmodel.errors import InputError

    with pytest.raises(InputError, match="is not one of no_shard, optim, optim_grads, optim_grads_params"):
        megatron_arguments("--use-megatron-fsdp --data-parallel-sharding-strategy full")


def test_recomputed_modules_are_read_as_a_list_and_named_as_not_modelled():
    """--recompute-modules takes several words (Megatron-LM's nargs="*"): they stay together among the
    arguments not modelled, and a note says what selective recomputation counts here instead."""
    read = megatron_arguments("--num-layers 2 --recompute-granularity selective --recompute-modules mlp moe "
                              "layernorm --bf16")
    assert "--recompute-modules mlp moe layernorm" in read.unread and read.words == ()
    assert read.settings["dtype"] == "bf16"
    assert read.notes[0].startswith("recompute-modules mlp moe layernorm: costmodel's selective "
                                    "recomputation rebuilds the attention core alone")
    assert megatron_arguments("--num-layers 2 --recompute-modules mlp").notes == ()  # nothing recomputed
