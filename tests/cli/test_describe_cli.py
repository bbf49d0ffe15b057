"""Models as people describe them on the command line: ``models``, ``--model``, ``--hf-config``,
``--megatron``, ``--global-batch``, ``--gpus`` and ``--cp`` on ``step`` (and ``flops``, ``memory``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from costmodel.describe import model_preset
from costmodel.step import TransformerShape, achieved_flops, parameters, step

DATA = Path(__file__).resolve().parents[1] / "data"
LLAMA_8B = str(DATA / "hf" / "llama-3-8b" / "config.json")
GPT3_ARGS = (DATA / "megatron" / "gpt3-175b.args").read_text()
LLAMA_405B = ["--model", "llama-3-405b", "--megatron",
              "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --sequence-parallel "
              "--use-distributed-optimizer --bf16 --global-batch-size 2048 --micro-batch-size 1 --lr 8e-5",
              "--gpus", "16384", "--gpu", "h100-sxm", "--stage-layers", ",".join(["7", *["8"] * 14, "7"])]


def test_models_lists_the_presets_and_shows_one(cli):
    data = cli.json("models")
    assert [m["name"] for m in data["models"]] == ["deepseek-moe-16b", "deepseek-v3", "gpt-3-175b",
                                                   "llama-3-405b", "llama-3-70b", "llama-3-8b", "mixtral-8x7b"]
    one = cli.json("models", "mixtral")
    assert one["shape"]["experts"] == 8 and one["shape"]["top_k"] == 2
    out, _ = cli.text("models", "llama-3-405b", columns=80)
    assert "Table 3: 405B, 126 layers" in out and "53248 (3.25 h)" in out


def test_step_with_a_preset_is_the_step_of_its_shape(cli):
    data = cli.json("step", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--tp", "8", "--dp", "2", "-m", "4")
    m = model_preset("llama-3-8b")
    expected = step(shape=m.transformer(), gpu="h100-sxm", tp=8, dp=2, microbatches=4, **m.settings)
    assert data["step_s"] == pytest.approx(float(expected.step_s), rel=1e-15)
    assert data["notes"][0] == "model: Llama 3 8B"


def test_shape_options_override_the_preset(cli):
    data = cli.json("step", "--model", "llama-3-8b", "--seq", "4096", "--layers", "2", "--peak", "989T",
                    "--efficiency", "0.5")
    m = model_preset("llama-3-8b").with_shape(sequence=4096, layers=2)
    expected = step(shape=m.transformer(), peak_flops="989T", efficiency="0.5", **m.settings)
    assert data["step_s"] == pytest.approx(float(expected.step_s), rel=1e-15)


def test_hf_config_gives_the_presets_step_and_flops(cli):
    by_file = cli.json("step", "--hf-config", LLAMA_8B, "--gpu", "h100-sxm", "--tp", "4")
    by_name = cli.json("step", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--tp", "4")
    assert by_file["step_s"] == by_name["step_s"]
    flops = cli.json("flops", "--hf-config", LLAMA_8B, "--global-batch", "512")
    m = model_preset("llama-3-8b")
    assert flops["causal"] is m.settings["causal"] is True  # a description's setting, as step takes it
    assert flops["model_flops"] == achieved_flops(m.transformer(), batch=512, causal=True).model_flops
    off = cli.json("flops", "--hf-config", LLAMA_8B, "--global-batch", "512", "--no-causal")
    assert off["model_flops"] == achieved_flops(m.transformer(), batch=512).model_flops


def test_megatron_gpt3_script_with_the_preset(cli):
    data = cli.json("step", "--model", "gpt-3-175b", "--megatron", GPT3_ARGS, "--gpus", "1536",
                    "--gpu", "a100-80gb", "--recompute", "full", "--allow-oom")
    assert (data["tp"], data["pp"], data["dp"], data["microbatches"], data["dtype"]) == (8, 16, 12, 128, "fp16")
    assert any(n.startswith("Megatron-LM arguments not modelled: --max-position-embeddings 2048")
               for n in data["notes"])
    assert "global batch 1536 = micro-batch 1 × dp 12 × m 128" in data["notes"]


def test_llama_3_405b_as_published(cli):
    data = cli.json("step", *LLAMA_405B)
    assert (data["dp"], data["tp"], data["pp"], data["cp"], data["gpus"], data["microbatches"]) == \
        (128, 8, 16, 1, 16384, 16)
    top = max(d["total_bytes"] for d in data["memory"])
    assert top < data["memory_capacity_bytes"]


def test_context_parallel_option(cli):
    out, _ = cli.text("step", "--model", "llama-3-8b", "--seq", "32768", "--gpu", "h100-sxm", "--tp", "8",
                      "--cp", "4", columns=80)
    assert "dp 1 × tp 8 × pp 1 × cp 4 = 32 GPUs" in out
    assert "exposed CP communication" in out


@pytest.mark.parametrize("args,message", [
    (["--global-batch", "1000", "--dp", "64", "--micro-batch", "2"],
     "error: --global-batch 1000 is not a multiple of the micro-batch times the replicas, 2 × 64 = 128; give "
     "--global-batch 896 or 1024 (1000 sequences do not split evenly over 64 replicas)"),
    (["--global-batch", "64", "--dp", "8", "-m", "4"],
     "error: -m 4 and --global-batch 64 disagree: the global batch gives m = 8; pass one of them"),
    (["--gpus", "100", "--tp", "8"],
     "error: 100 GPUs are not a multiple of tp × pp × cp = 8 × 1 × 1 = 8; give --gpus 96 or 104"),
    (["--gpus", "64", "--tp", "8", "--dp", "4"],
     "error: --dp 4 and --gpus 64 disagree: --gpus gives dp = 8; pass one of them"),
    (["--cp", "3"], "error: --cp 3 does not split the sequence 8192 into 2·cp = 6 equal chunks "
                    "(Megatron-Core's load-balanced causal split); give --cp 2 or 4"),
    (["--tp", "3"], "error: --tp 3 does not divide heads = 32 of model llama-3-8b; each tp rank holds whole heads: "
                    "give --tp 2 or 4"),
    (["--tp", "16", "--kv-groups", "12", "--heads", "48", "--hidden", "6144"],
     "error: --tp 16 does not divide --kv-groups 12; each tp rank holds whole key-value heads: give --tp 12"),
    # the tp suggested divides the key-value heads too: 6 divides 48 heads, not 8 groups (Mixtral 8x22B)
    (["--tp", "7", "--kv-groups", "8", "--heads", "48", "--hidden", "6144"],
     "error: --tp 7 does not divide --heads 48; each tp rank holds whole heads: give --tp 4 or 8"),
    (["--hf-config", LLAMA_8B], "error: --model and --hf-config both describe the model; pass one of them"),
    (["--megatron", "--expert-model-parallel-size 4"],
     "error: --ep applies to a mixture of experts; give --experts and --top-k in the shape, or leave it out"),
    (["--gpus", "64", "--sweep", "dp=1,2"],
     "error: --gpus fixes dp = GPUs / (tp × pp × cp), and --sweep dp would change the GPUs: sweep tp, pp or cp "
     "on them, or give --dp instead of --gpus"),
    (["--global-batch", "64", "--sweep", "microbatches=1,2"],
     "error: --global-batch fixes the micro-batches, and --sweep microbatches would change them: sweep "
     "micro-batch, or give -m instead"),
])
def test_bad_descriptions_are_one_error_line(cli, args, message):
    _, err = cli("step", "--model", "llama-3-8b", "--peak", "989T", "--efficiency", "0.5", "--profile", "ib-hdr",
                 *args, rc=2)
    assert err.strip() == message


MIXTRAL = str(DATA / "hf" / "mixtral-8x7b" / "config.json")


@pytest.mark.parametrize("args,total,active", [
    (["--hf-config", MIXTRAL], "46.7", "12.9"),  # Jiang et al. 2024, section 2
    (["--model", "mixtral-8x7b"], "46.7", "12.9"),
    (["--model", "deepseek-moe-16b"], "16.4", "2.83"),  # Dai et al. 2024, section 5.1: 16.4B, 2.8B
    (["--model", "llama-3-8b"], "8.03", "8.03"),  # Meta's model card: 8.03B
    (["--hf-config", LLAMA_8B], "8.03", "8.03"),
])
def test_flops_counts_the_published_parameters(cli, args, total, active):
    data = cli.json("flops", *args, "--global-batch", "8")
    assert f"{data['total_parameters'] / 1e9:.3g}" == total
    assert f"{data['active_parameters'] / 1e9:.3g}" == active


def test_flops_of_a_described_moe_is_the_api_count(cli):
    shape = model_preset("mixtral-8x7b").transformer()
    data = cli.json("flops", "--model", "mixtral-8x7b", "--global-batch", "8")
    count = parameters(shape)
    assert (data["total_parameters"], data["active_parameters"]) == (count.total, count.active)
    assert data["parameters"] == shape.parameters


def test_megatron_moe_arguments_build_the_moe_shape(cli):
    args = ("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention "
            "--num-query-groups 8 --seq-length 4096 --ffn-hidden-size 14336 --swiglu --padded-vocab-size 32000 "
            "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 "
            "--untie-embeddings-and-output-weights --expert-model-parallel-size 4 "
            "--tensor-model-parallel-size 2 --context-parallel-size 2 --sequence-parallel --bf16")
    data = cli.json("step", "--megatron", args, "--gpu", "h100-sxm", "--dp", "4", "-m", "2", "--allow-oom")
    assert (data["ep"], data["cp"], data["tp"], data["dp"]) == (4, 2, 2, 4)
    mixtral = model_preset("mixtral-8x7b").transformer()
    expected = step(shape=dataclasses.replace(mixtral, sequence=4096), gpu="h100-sxm", tp=2, cp=2, ep=4, dp=4,
                    microbatches=2, sequence_parallel=True, dtype="bf16", allow_oom=True, framework="megatron")
    assert data["step_s"] == pytest.approx(float(expected.step_s), rel=1e-15)


def test_a_mixtral_step_with_cp_and_ep(cli):
    data = cli.json("step", "--model", "mixtral-8x7b", "--seq", "4096", "--gpu", "h100-sxm", "--tp", "2",
                    "--cp", "2", "--ep", "4", "--dp", "4", "-m", "2", "--sequence-parallel", "--allow-oom")
    parts = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "bubble_s", "pp_exposed_s", "dp_exposed_s",
             "contention_s", "expert_dp_s", "optimizer_s", "param_gather_s")
    assert data["step_s"] == pytest.approx(sum(data[p] for p in parts), rel=1e-12)
    assert data["ep_comm_s"] > 0 and data["expert_dp_s"] > 0 and data["gpus"] == 16
    out, _ = cli.text("step", "--model", "mixtral-8x7b", "--seq", "4096", "--gpu", "h100-sxm", "--tp", "2",
                      "--cp", "2", "--ep", "4", "--dp", "4", "-m", "2", "--sequence-parallel", "--allow-oom",
                      columns=80)
    assert "dp 4 × tp 2 × pp 1 × cp 2 = 16 GPUs · ep 4" in out
    assert "EP all-to-alls" in out and "expert gradient reduction" in out


def test_memory_takes_a_model(cli):
    """Every weight the model holds, as its card counts them: Llama 3 8B's untied output layer, and all of
    Mixtral's experts (46.7B, of which 12.9B active: memory holds them all)."""
    from costmodel.step.flops import parameters

    data = cli.json("memory", "--model", "llama-3-8b", "--dtype", "bf16", "--dp", "8", "--zero", "3")
    assert data["params"] == parameters(model_preset("llama-3-8b").transformer()).total == 8_030_261_248
    mixtral = cli.json("memory", "--model", "mixtral-8x7b", "--dtype", "bf16", "--gpu", "h100-sxm")
    assert mixtral["params"] == 46_702_792_704 and not mixtral["gpu_fit"]["fits"]
    with_batch = cli.json("memory", "--model", "llama-3-8b", "--dtype", "bf16", "--batch", "1", "--tp", "2")
    assert with_batch["activations"]["layers"] == 32


def test_memory_says_what_a_config_json_leaves_out(cli):
    """The parameters memory holds are the text model's of a multimodal config.json: its notes say so, as
    flops' and step's do (memory printed the count with no note)."""
    config = str(DATA / "hf" / "llama-4-scout" / "config.json")
    data = cli.json("memory", "--hf-config", config, "--dtype", "bf16", "--dp", "8", "--zero", "3")
    flops = cli.json("flops", "--hf-config", config, "--global-batch", "1")
    told = [n for n in flops["notes"] if n.startswith(("the text model", "n_shared_experts", "not modelled"))]
    assert len(told) == 3 and data["notes"][:3] == told
    out, _ = cli.text("memory", "--hf-config", config, "--dp", "8", "--zero", "3", columns=80)
    assert "note: the text model (text_config) of Llama4ForConditionalGeneration" in out

def test_a_config_json_without_positions_takes_the_sequence_given(cli, tmp_path):
    """BLOOM's configuration (ALiBi) gives no max_position_embeddings: --seq gives the sequence, in memory
    as in flops, and without it the error says to give it."""
    import json

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["BloomForCausalLM"], "model_type": "bloom", "n_head": 16,
                                  "n_layer": 24, "hidden_size": 1024, "n_inner": None, "vocab_size": 250880}))
    _, err = cli("flops", "--hf-config", str(config), "--global-batch", "1", rc=2)
    assert err.startswith("error: ") and err.rstrip().endswith("give the sequence, e.g. --seq 2048")
    data = cli.json("memory", "--hf-config", str(config), "--seq", "2048", "--dp", "8", "--batch", "1")
    flops = cli.json("flops", "--hf-config", str(config), "--seq", "2048", "--global-batch", "1")
    assert data["params"] == flops["total_parameters"] == 250880 * 1024 + 24 * 12 * 1024**2 + 49 * 1024

def test_models_shows_what_a_config_json_reads_as(cli):
    """costmodel models config.json shows the shape, settings and notes --hf-config reads (it was read as
    TOML: 'invalid TOML: invalid statement'); --model config.json says to use --hf-config."""
    config = str(DATA / "hf" / "gemma-3-27b" / "config.json")
    data = cli.json("models", config)
    assert data["shape"]["layers"] == 62 and data["shape"]["window_layers"] == "5LG"
    assert data["notes"][0].startswith("the text model (text_config) of Gemma3ForConditionalGeneration")
    out, _ = cli.text("models", config, columns=80)
    assert "sliding window" in out and "note: vocab_size = 262208" in out
    _, err = cli("flops", "--model", config, "--global-batch", "1", rc=2)
    assert err == (f"error: {config}: a model file is TOML; a Hugging Face config.json is read with --hf-config "
                   "FILE (costmodel models FILE shows what is read from it)\n")

@pytest.mark.parametrize("option", ["--cp", "--tp", "--dp"])
def test_a_parallel_size_that_is_no_count_is_one_error(cli, option):
    _, err = cli("step", "--model", "llama-3-8b", "--peak", "989T", "--efficiency", "0.5", "--profile", "ib-hdr",
                 "--gpus", "64", option, "abc", rc=2)
    assert err.startswith(f"error: {option} 'abc': 'abc' is not a count")


def test_a_sweep_of_ep_with_cp_names_both_in_its_head(cli):
    out, _ = cli.text("step", "--model", "mixtral-8x7b", "--seq", "4096", "--gpu", "h100-sxm", "--tp", "2",
                      "--cp", "2", "--dp", "4", "-m", "4", "--sp", "--zero", "1", "--sweep", "ep=4,8", columns=80)
    assert "dp 4 × tp 2 × pp 1 × cp 2 = 16 GPUs · ep 8 · 1f1b" in out


def test_a_sweep_of_the_parallel_sizes_keeps_the_gpus_and_the_batch(cli):
    """--gpus and --global-batch hold the machine and the batch: each tp or pp derives its dp and m."""
    data = cli.json("step", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--tp", "8", "--gpus", "64",
                    "--global-batch", "256", "--sweep", "pp=1,2,4,3")
    priced = [p for p in data["points"] if p["skipped"] is None]
    assert [p["value"] for p in priced] == [1, 2, 4] and {p["gpus"] for p in priced} == {64}
    assert "GPUs are not a multiple" in data["points"][3]["skipped"]  # 64 / (8 × 3)
    for p in priced:  # the same step as its own options give
        one = cli.json("step", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--tp", "8", "--pp", str(p["value"]),
                       "--gpus", "64", "--global-batch", "256")
        assert one["step_s"] == p["step_s"]
    assert any("each value of pp derives dp from --gpus and m from --global-batch" in n for n in data["notes"])


def test_top_k_on_a_dense_model_is_refused(cli):
    for command in (["flops", "--global-batch", "1"], ["step", "--gpu", "h100-sxm"]):
        _, err = cli(*command, "--model", "llama-3-8b", "--top-k", "2", rc=2)
        assert err == ("error: --top-k 2 describes a mixture of experts, and the model is dense; give --experts "
                       "with it, or leave it out\n")


def test_a_descriptions_settings_have_both_switches(cli):
    """A preset sets causal (GPT-3) and dropout off (Llama 3); the command line turns either back."""
    base = ["step", "--model", "gpt-3-175b", "--gpu", "a100-80gb", "--dp", "8", "--tp", "8", "--pp", "16", "-m",
            "64", "--allow-oom"]
    as_preset, off = cli.json(*base), cli.json(*base, "--no-causal")
    assert as_preset["step_s"] == cli.json(*base, "--causal")["step_s"] < off["step_s"]
    llama = ["step", "--model", "llama-3-8b", "--gpu", "h100-sxm", "--gpus", "8", "--global-batch", "64",
             "--allow-oom"]
    peak = [max(d["total_bytes"] for d in cli.json(*llama, *on)["memory"]) for on in ((), ("--dropout",))]
    assert peak[1] > peak[0] == max(d["total_bytes"] for d in cli.json(*llama, "--no-dropout")["memory"])


def test_step_takes_a_models_description_as_its_shape():
    from costmodel import step

    m = model_preset("gpt-3-175b")
    kwargs = {"gpu": "a100-80gb", "dp": 8, "tp": 8, "pp": 16, "microbatches": 64, "allow_oom": True}
    assert step(shape=m, **kwargs).step_s == step(shape=m.transformer(), **m.settings, **kwargs).step_s


def test_a_config_whose_kv_heads_do_not_divide_the_heads_names_its_keys(cli, tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, '
                    '"num_key_value_heads": 5, "intermediate_size": 14336, "vocab_size": 128256, '
                    '"max_position_embeddings": 8192}', encoding="utf-8")
    _, err = cli("flops", "--hf-config", str(path), "--global-batch", "1", rc=2)
    assert "num_key_value_heads = 5 does not divide num_attention_heads = 32" in err


GEMMA_2_9B = str(DATA / "hf" / "gemma-2-9b" / "config.json")
GEMMA_OPTIONS = ["--layers", "42", "--hidden", "3584", "--heads", "16", "--kv-groups", "8", "--head-dim", "256",
                 "--seq", "8192", "--vocab", "256000", "--ffn", "4", "--gated", "--window", "4096",
                 "--window-layers", "LG", "--layer-norms", "4"]


def test_gemma_2_config_and_head_dim_option_price_heads_of_256(cli):
    """Gemma 2 9B's 16 heads of 256 at hidden 3584 (Team et al. 2024, arXiv:2408.00118, Table 1), its window
    of 4096 on the even layers and its four norms a layer: the config.json and the options give the same
    counts; without head_dim the heads would be 224 wide."""
    by_file = cli.json("flops", "--hf-config", GEMMA_2_9B, "--global-batch", "8")
    by_options = cli.json("flops", *GEMMA_OPTIONS, "--global-batch", "8")
    shape = TransformerShape(layers=42, hidden=3584, heads=16, kv_groups=8, head_dim=256, sequence=8192,
                             vocabulary=256000, gated=True, window=4096, window_layers="LG", layer_norms=4)
    expected = achieved_flops(shape, batch=8, causal=True)
    for data in (by_file, by_options):
        assert data["model_flops"] == expected.model_flops
        assert data["causal"] is True  # the window's default
        assert data["total_parameters"] == 9_241_705_984  # the model card's
        assert data["shape"]["head_dim"] == 256
        assert (data["shape"]["window"], data["shape"]["window_layers"]) == (4096, "LG")
    assert by_file["notes"] == []
    out, _ = cli.text("flops", *GEMMA_OPTIONS, "--global-batch", "8", columns=80)
    assert "g 8, d 256, w 4096 (LG)" in out
    step_file = cli.json("step", "--hf-config", GEMMA_2_9B, "--gpu", "h100-sxm", "--tp", "8")
    step_options = cli.json("step", *GEMMA_OPTIONS, "--causal", "--no-dropout", "--gpu", "h100-sxm", "--tp", "8")
    assert step_file["step_s"] == step_options["step_s"]
    _, err = cli("step", *GEMMA_OPTIONS, "--gpu", "h100-sxm", "--tp", "32", rc=2)
    assert "--tp 32 does not divide --heads 16" in err


def test_norms_a_config_has_beyond_two_a_layer_are_counted(cli, tmp_path):
    """Qwen 3's query and key norms (one of head_dim each a layer) are counted from its architecture: Qwen3-8B
    has 8,190,735,360 parameters, the total of its published safetensors
    (https://huggingface.co/api/models/Qwen/Qwen3-8B, ``safetensors.total``), and no note is left."""
    path = tmp_path / "config.json"
    path.write_text('{"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 36, '
                    '"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, '
                    '"intermediate_size": 12288, "vocab_size": 151936, "max_position_embeddings": 40960, '
                    '"tie_word_embeddings": false}', encoding="utf-8")
    data = cli.json("flops", "--hf-config", str(path), "--global-batch", "1")
    assert data["notes"] == []
    assert data["total_parameters"] == 8_190_735_360
    plain = cli.json("flops", "--hf-config", str(path), "--global-batch", "1", "--qk-norm", "none")
    assert data["total_parameters"] - plain["total_parameters"] == 36 * 2 * 128
    assert data["model_flops"] == plain["model_flops"]  # norm weights are no matrices: no FLOPs


def test_megatron_arguments_from_a_file(cli, tmp_path):
    """--megatron @FILE (or the path alone) reads the arguments from the file; a word that is neither an
    argument nor a file is one error, not a model without layers."""
    text = cli.json("step", "--model", "gpt-3-175b", "--megatron", GPT3_ARGS, "--gpus", "1536",
                    "--gpu", "a100-80gb", "--recompute", "full", "--allow-oom")
    path = str(DATA / "megatron" / "gpt3-175b.args")
    for given in (f"@{path}", path):
        read = cli.json("step", "--model", "gpt-3-175b", "--megatron", given, "--gpus", "1536",
                        "--gpu", "a100-80gb", "--recompute", "full", "--allow-oom")
        assert read == text
    _, err = cli("step", "--megatron", "train.sh", "--gpu", "h100-sxm", rc=2)
    assert err == ("error: --megatron 'train.sh' holds no Megatron-LM argument (each starts with --) and names "
                   "no file; give the arguments, or @FILE for a file of them\n")
    _, err = cli("step", "--megatron", f"@{tmp_path}", "--gpu", "h100-sxm", rc=2)
    assert err == f"error: {tmp_path}: cannot read Megatron-LM arguments: a folder, not a regular file\n"


def test_flops_reads_megatron_arguments(cli):
    """flops --megatron takes the shape, the global batch, full recomputation and the dtype of the peak
    from the arguments; the command's own options override them, and selective recomputation is named
    as counted without it."""
    path = f"@{DATA / 'megatron' / 'gpt3-175b.args'}"
    read = cli.json("flops", "--megatron", path, "--vocab", "51200", "--causal")
    preset = cli.json("flops", "--model", "gpt-3-175b", "--global-batch", "1536")
    assert read["model_flops"] == preset["model_flops"] and read["total_parameters"] == preset["total_parameters"]
    on_gpu = cli.json("flops", "--megatron", path, "--vocab", "51200", "--gpu", "a100-80gb", "--time", "30s",
                      "--gpus", "1536")
    assert on_gpu["peak_dtype"] == "fp16"
    tiny = ("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --vocab-size 1000 "
            "--global-batch-size 8 --recompute-granularity {}")
    full = cli.json("flops", "--megatron", tiny.format("full"))
    assert (full["recompute"], full["batch"]) == ("full", 8)
    assert cli.json("flops", "--megatron", tiny.format("full"), "--recompute", "none",
                    "--global-batch", "4")["batch"] == 4
    selective = cli.json("flops", "--megatron", tiny.format("selective"))
    assert selective["recompute"] == "none" and any("recompute selective" in n for n in selective["notes"])
    _, err = cli("flops", "--megatron", "--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
                 "--seq-length 128 --vocab-size 1000", rc=2)
    assert err == "error: no global batch given; pass --global-batch B (sequences per iteration)\n"


def test_megatron_uneven_pipeline_split_prices_as_the_stage_layers_option(cli):
    """--account-for-embedding/loss-in-pipeline-split in --megatron prices the step that --stage-layers
    7,8,...,8,7 prices: Llama 3 405B's layers on 16 stages."""
    given = cli.json("step", "--model", "llama-3-405b", "--megatron",
                     "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --num-layers 126 "
                     "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split "
                     "--sequence-parallel --use-distributed-optimizer --bf16 --global-batch-size 2048",
                     "--gpus", "16384", "--gpu", "h100-sxm")
    typed = cli.json("step", "--model", "llama-3-405b", "--tp", "8", "--pp", "16", "--sequence-parallel",
                     "--zero", "1", "--dtype", "bf16", "--framework", "megatron", "--global-batch", "2048",
                     "--gpus", "16384", "--gpu", "h100-sxm", "--stage-layers", "7" + ",8" * 14 + ",7")
    assert given["stage_layers"] == [7] + [8] * 14 + [7]
    assert given["step_s"] == typed["step_s"]
