"""An error about a value the user never typed names it where it was written: the key of a config.json, the
keyword of a model file or preset, the argument inside ``--megatron``; a value the user typed over it is
named by the option they typed."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
LLAMA = str(DATA / "hf" / "llama-3-8b" / "config.json")
STEP = ["--gpu", "h100-sxm", "--gpus", "64", "--global-batch", "512"]


def test_a_config_json_value_is_named_by_its_key(cli):
    _, err = cli("step", "--hf-config", LLAMA, *STEP, "--tp", "16", rc=2)
    assert err == ("error: --tp 16 does not divide num_key_value_heads = 8 in config.json; each tp rank holds "
                   "whole key-value heads: give --tp 8\n")


def test_a_text_config_key_is_named_with_its_section(cli):
    _, err = cli("step", "--hf-config", str(DATA / "hf" / "gemma-3-27b"), *STEP, "--tp", "32", rc=2)
    assert "does not divide text_config.num_key_value_heads = 16 in config.json;" in err


def test_another_spelling_of_a_key_is_named_as_the_file_writes_it(cli, tmp_path):
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
              "n_positions": 1024, "vocab_size": 50257}
    (tmp_path / "config.json").write_text(json.dumps(config))
    _, err = cli("step", "--hf-config", str(tmp_path / "config.json"), *STEP, "--tp", "8", rc=2)
    assert "--tp 8 does not divide n_head = 12 in config.json" in err


def test_a_model_presets_value_is_named_by_its_keyword(cli):
    _, err = cli("step", "--model", "llama-3-8b", *STEP, "--tp", "16", rc=2)
    assert "--tp 16 does not divide kv_groups = 8 of model llama-3-8b;" in err


def test_a_value_typed_over_the_description_is_named_by_its_option(cli):
    _, err = cli("step", "--model", "llama-3-8b", "--kv-groups", "8", *STEP, "--tp", "16", rc=2)
    assert "--tp 16 does not divide --kv-groups 8;" in err


def test_a_megatron_argument_is_named_as_written_inside_the_string(cli):
    args = (DATA / "megatron" / "deepseek-r1.args").read_text().splitlines()[-1]
    _, err = cli("step", "--megatron", args + " --pipeline-model-parallel-size 16", "--vocab", "129280",
                 "--gpu", "h100-sxm", "--gpus", "1024", "--global-batch", "8192", rc=2)
    assert err.startswith("error: 61 layers do not split evenly over --pipeline-model-parallel-size 16 (in "
                          "--megatron); choose pp")
    assert err.count("\n") == 1


def test_a_description_that_cannot_be_read_leaves_its_own_error(cli, tmp_path):
    _, err = cli("step", "--hf-config", str(tmp_path / "missing.json"), *STEP, rc=2)
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_a_note_names_values_as_an_error_does(cli):
    """A command's notes name an option as the user typed it, and a value a description set in its source's
    words, as its errors do; JSON notes alike."""
    shape = ["--layers", "2", "--hidden", "64", "--heads", "4", "--seq", "128", "--vocab", "1000"]
    base = ["step", *shape, "--gpu", "h100-sxm", "--dp", "2", "-m", "2", "--allow-oom"]
    for typed in ("--sp", "--sequence-parallel"):
        notes = cli.json(*base, typed)["notes"]
        assert f"{typed} has no effect with --tp 1: it splits the norms and dropouts over the tensor-parallel " \
               "ranks" in notes
    text, _ = cli.text(*base, "--megatron", "--sequence-parallel --recompute-activations", columns=200)
    assert ("note: --sequence-parallel (in --megatron) has no effect with --tp 1: it splits the norms and "
            "dropouts over the tensor-parallel ranks") in text
    assert "note: --recompute-activations (in --megatron) with flash attention recomputes nothing more" in text
    script = ("TP=1\nARGS=(--tensor-model-parallel-size $TP --sequence-parallel)\n"
              "--recompute-granularity selective")
    notes = cli.json(*base, "--megatron", script)["notes"]
    assert ("--sequence-parallel (in --megatron) has no effect with --tensor-model-parallel-size 1 (in "
            "--megatron): it splits the norms and dropouts over the tensor-parallel ranks") in notes
    assert any(n.startswith("--recompute-granularity selective (in --megatron) with flash attention") for n in notes)
