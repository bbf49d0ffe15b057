"""Multi-head latent attention on the command line: ``--kv-rank``, ``--q-rank``, ``--rope-head-dim`` and
``--value-head-dim`` on flops, step and plan, DeepSeek-V3's config.json and preset, their errors as one line
naming the options, and what the user reads (the JSON is the library's, the text names the latent widths)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.params import combine_link
from costmodel.step import TransformerShape, achieved_flops, step
from costmodel.step.planner import plan

HF = Path(__file__).resolve().parents[1] / "data" / "hf"
V3 = str(HF / "deepseek-v3" / "config.json")
V2_LITE = str(HF / "deepseek-v2-lite" / "config.json")
SMALL = ["--layers", "2", "--hidden", "64", "--heads", "4", "--head-dim", "16", "--seq", "32", "--vocab", "100"]
LATENT = ["--kv-rank", "20", "--q-rank", "24", "--rope-head-dim", "8", "--value-head-dim", "12"]
SHAPE = TransformerShape(layers=2, hidden=64, heads=4, head_dim=16, sequence=32, vocabulary=100, kv_rank=20,
                         q_rank=24, rope_head_dim=8, value_head_dim=12)


def test_flops_of_the_options_are_the_librarys(cli):
    data = cli.json("flops", *SMALL, *LATENT, "--global-batch", "2")
    assert data["model_flops"] == achieved_flops(SHAPE, batch=2).model_flops == 39_567_360
    assert data["total_parameters"] == 94232  # tests/unit/step/test_latent_attention.py, matrix by matrix
    shape = data["shape"]
    assert (shape["kv_rank"], shape["q_rank"], shape["rope_head_dim"], shape["value_head_dim"]) == (20, 24, 8, 12)


def test_deepseek_v3_flops_as_published(cli):
    data = cli.json("flops", "--hf-config", V3, "--seq", "4096", "--global-batch", "1")
    # the main model's as published, and its multi-token prediction module's besides
    assert (data["main_parameters"], data["main_active_parameters"]) == (671_026_404_352, 37_552_282_624)
    assert data["total_parameters"] == 671_026_404_352 + data["mtp_parameters"]
    assert data["causal"] is True
    (note,) = data["notes"]
    assert note.startswith("multi-token prediction: num_nextn_predict_layers = 1")
    preset = cli.json("flops", "--model", "deepseek-v3", "--global-batch", "1")
    assert preset["model_flops"] == data["model_flops"]  # the preset is the file at the 4K sequence
    # an option over the preset's value: half the queries' latent, in the 61 layers and the module's
    half = cli.json("flops", "--model", "deepseek-v3", "--q-rank", "768", "--global-batch", "1")
    assert half["main_parameters"] == 671_026_404_352 - 61 * (7168 + 128 * 192) * 768 - 61 * 768
    assert half["total_parameters"] == data["total_parameters"] - 62 * ((7168 + 128 * 192) * 768 + 768)


def test_the_text_names_the_latent_widths(cli):
    out, err = cli.text("flops", "--hf-config", V3, "--seq", "4096", "--global-batch", "1", columns=80)
    assert err == ""
    text = " ".join(out.split())
    assert "d 128, MLA d_r 64 d_v 128 d_c 512 d_c' 1536" in text
    assert "one MoE layer: Q and KV down- and up-projections" in text
    assert "6·N·tokens + 6·(l + D)·a·(d + d_r + d_v)·s·tokens" in text  # PaLM's, with the module's layer
    assert max(len(line) for line in out.splitlines()) <= 80
    lite, _ = cli.text("flops", "--hf-config", V2_LITE, "--global-batch", "1", columns=80)
    assert "MLA d 128 d_r 64 d_v 128 d_c 512," in " ".join(lite.split())  # d = h/a, no queries' latent


def test_models_shows_the_latent_attention(cli):
    out, _ = cli.text("models", V3, columns=80)
    text = " ".join(out.split())
    for row in ("head width d, without d_r 128 head_dim", "key-value latent d_c 512 kv_rank",
                "query latent d_c' 1536 q_rank", "rotary head width d_r 64 rope_head_dim",
                "value head width d_v 128 value_head_dim"):
        assert row in text, row
    assert "q_lora_rank" not in text  # read, not noted as left out


def test_memory_describes_the_latent_layer(cli):
    out, _ = cli.text("memory", "--model", "deepseek-v3", "--batch", "1", "--tp", "8", "--sp", columns=100)
    assert "MLA d 128 d_r 64 d_v 128 d_c 512 d_c' 1536" in " ".join(out.split())


def test_step_with_the_latent_attention_is_the_librarys(cli):
    data = cli.json("step", *SMALL, *LATENT, "--peak", "989T", "--efficiency", "0.5", "--tp", "2", "--dp", "2",
                    "--alpha", "10us", "--beta", "1ns/B")
    r = step(shape=SHAPE, peak_flops="989e12", efficiency="1/2", tp=2, dp=2,
             link=combine_link(alpha="10us", beta="1ns/B"))
    assert data["step_s"] == float(r.step_s)
    on_gpu = cli.json("step", "--model", "deepseek-v3", "--gpu", "h100-sxm", "--tp", "8", "--pp", "1",
                      "--ep", "8", "--dp", "8", "--sp", "--recompute", "full", "--allow-oom")
    assert any(s["key"] == "deepseekv2" for s in on_gpu["sources"])


def test_plan_takes_the_latent_attention(cli):
    machine = ["--gpu", "a100-80gb", "--nodes", "1", "--global-batch", "16", "--top", "2"]
    data = cli.json("plan", *SMALL, *LATENT, *machine)
    p = plan(SHAPE, gpu="a100-80gb", nodes=1, global_batch=16, top=2)
    assert [r["step_s"] for r in data["rows"]] == [float(r.step_s) for r in p.rows]


def test_a_model_file_with_the_latent_attention(cli, tmp_path):
    path = tmp_path / "mla.toml"
    path.write_text('name = "mla"\n[shape]\nlayers = 2\nhidden = 64\nheads = 4\nhead_dim = 16\nsequence = 32\n'
                    'vocabulary = 100\nkv_rank = 20\nq_rank = 24\nrope_head_dim = 8\nvalue_head_dim = 12\n',
                    encoding="utf-8")
    assert cli.json("flops", "--model", str(path), "--global-batch", "2")["total_parameters"] == 94232


@pytest.mark.parametrize(("args", "message"), [
    (["--q-rank", "24"], "error: --q-rank 24 describes multi-head latent attention; give --kv-rank (the width of "
                         "the keys' and values' latent, e.g. 512) with it, or leave it out"),
    (["--value-head-dim", "8"], "error: --value-head-dim 8 describes multi-head latent attention; give "
                                "--kv-rank (the width of the keys' and values' latent, e.g. 512) with it, or "
                                "leave it out"),
    (["--kv-rank", "0"], "error: --kv-rank 0 is not a positive integer; give the width of the keys' and "
                         "values' latent, e.g. 512"),
    (["--kv-rank", "8", "--rope-head-dim", "-1"], "error: --rope-head-dim -1 is not a non-negative integer; "
                                                  "give the rotary channels of each query and key head, e.g. 64"),
    (["--kv-rank", "8", "--kv-groups", "2"], "error: --kv-groups 2 with --kv-rank 8: latent attention gives each "
                                             "of the 4 heads its own keys and values, up-projected from the "
                                             "latent; drop --kv-groups"),
    (["--kv-rank", "8", "--qk-norm", "head"], "error: --qk-norm 'head' with --kv-rank 8: latent attention's "
                                              "norms are those of its two latents, counted with them; drop "
                                              "--qk-norm"),
    (["--kv-rank", "x"], "error: Invalid value for '--kv-rank': 'x' is not a valid int."),
])
@pytest.mark.parametrize("command", ["flops", "step"])
def test_bad_latent_options_are_one_error_line(cli, command, args, message):
    run = ["--global-batch", "2"] if command == "flops" else ["--peak", "989T", "--efficiency", "0.5"]
    _, err = cli(command, *SMALL, *args, *run, rc=2)
    assert err.strip() == message


def test_the_options_are_in_each_commands_help(cli):
    for command in ("flops", "step", "plan"):
        out, _ = cli.text(command, "--help", columns=200)
        for option in ("--kv-rank", "--q-rank", "--rope-head-dim", "--value-head-dim"):
            assert option in out, (command, option)


def test_v2_lite_step_runs_without_the_queries_latent(cli):
    data = cli.json("step", "--hf-config", V2_LITE, "--seq", "4096", "--gpu", "h100-sxm", "--tp", "2",
                    "--ep", "4", "--dp", "4", "--sp", "--allow-oom")
    shape = TransformerShape(layers=27, hidden=2048, heads=16, kv_groups=16, sequence=4096, vocabulary=102400,
                             ffn_factor=Fraction(10944, 2048), gated=True, experts=64, top_k=6,
                             expert_ffn_factor=Fraction(1408, 2048), shared_experts=2, dense_layers=1,
                             tied_embeddings=False, kv_rank=512, rope_head_dim=64, value_head_dim=128)
    r = step(shape=shape, gpu="h100-sxm", tp=2, ep=4, dp=4, sequence_parallel=True, allow_oom=True, causal=True,
             dropout=False)
    assert data["step_s"] == float(r.step_s)
