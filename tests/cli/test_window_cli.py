"""A sliding window on the command line: ``--window`` and ``--window-layers`` on flops, step and plan, read
from a config.json too, and what the user reads (the JSON is the library's, the text names the window)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from costmodel.step import TransformerShape, achieved_flops, model_flops, step
from costmodel.step.planner import plan

HF = Path(__file__).resolve().parents[1] / "data" / "hf"
MISTRAL = str(HF / "mistral-7b-v0.1" / "config.json")
GEMMA_2 = str(HF / "gemma-2-9b" / "config.json")
SMALL = ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "256", "--vocab", "1024"]


def test_flops_of_mistral_7b_count_the_band_on_every_layer(cli):
    data = cli.json("flops", "--hf-config", MISTRAL, "--global-batch", "2")
    shape = TransformerShape(layers=32, hidden=4096, heads=32, kv_groups=8, sequence=32768, vocabulary=32000,
                             ffn_factor=Fraction(14336, 4096), gated=True, tied_embeddings=False, window=4096)
    expected = achieved_flops(shape, batch=2)
    assert data["model_flops"] == expected.model_flops
    assert data["causal"] is True and data["notes"] == []
    assert [(g["layers"], g["window"]) for g in data["groups"]] == [(32, True)]
    assert data["total_parameters"] == 7_241_732_096
    # the same by the options, the window's causal count the default
    by_options = cli.json("flops", "--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-groups", "8",
                          "--seq", "32768", "--vocab", "32000", "--ffn", "3.5", "--gated", "--untied-embeddings",
                          "--window", "4096", "--global-batch", "2")
    assert by_options["model_flops"] == data["model_flops"] and by_options["causal"] is True


def test_a_window_over_a_models_keeps_its_layers_and_one_of_the_sequence_is_noted(cli):
    narrow = cli.json("flops", "--hf-config", GEMMA_2, "--global-batch", "1", "--window", "1024")
    assert (narrow["shape"]["window"], narrow["shape"]["window_layers"]) == (1024, "LG")
    wide = cli.json("flops", "--hf-config", GEMMA_2, "--global-batch", "1", "--window", "8192")
    assert wide["notes"] == ["sliding window: 8192 tokens is not shorter than the sequence of 8192, so every "
                             "query of its layers meets its whole causal prefix; they count as global attention"]
    shape = TransformerShape(layers=42, hidden=3584, heads=16, kv_groups=8, head_dim=256, sequence=8192,
                             vocabulary=256000, gated=True)
    assert wide["model_flops"] == model_flops(shape, batch=1, causal=True).total
    _, err = cli("flops", "--hf-config", GEMMA_2, "--global-batch", "1", "--no-causal", rc=2)
    assert err.startswith("error: --no-causal with sliding_window = 4096 in config.json: a sliding window is a band of the causal mask")
    assert err.count("\n") == 1


def test_the_text_names_the_window_and_totals_each_kind_of_layer(cli):
    out, err = cli.text("flops", "--hf-config", GEMMA_2, "--global-batch", "1", columns=80)
    assert err == ""
    assert "w 4096 (LG)" in out and "9.242e9 parameters" in out
    assert "one layer with the sliding window: QKV projection" in out
    assert "21 layers with the sliding window" in out and "21 layers with global attention" in out
    assert "(torchtitan)" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_step_prices_each_stage_with_its_own_layers(cli):
    data = cli.json("step", "--hf-config", GEMMA_2, "--gpu", "h100-sxm", "--tp", "8", "--pp", "2", "-m", "4",
                    "--stage-layers", "20,22")
    note = next(n for n in data["notes"] if n.startswith("sliding window"))
    assert note == ("sliding window: 4096 tokens on 21 of the 42 layers (pattern LG); their attention is priced "
                    "on the band of the causal mask, s·w − w²/2 query-key pairs for s²/2; each stage prices its "
                    "own layers, windowed ones by stage: 10 on stage 0, 11 on stage 1")
    shape = TransformerShape(layers=42, hidden=3584, heads=16, kv_groups=8, head_dim=256, sequence=8192,
                             vocabulary=256000, gated=True, window=4096, window_layers="LG", layer_norms=4)
    r = step(shape=shape, gpu="h100-sxm", tp=8, pp=2, microbatches=4, stage_layers=(20, 22), dropout=False,
             causal=True)
    assert data["step_s"] == float(r.step_s)
    unfused = cli.json("step", "--hf-config", GEMMA_2, "--gpu", "h100-sxm", "--tp", "8", "--attention",
                       "unfused", "--allow-oom")
    assert any("the whole s × s matrix all the same" in n for n in unfused["notes"])


def test_plan_takes_the_window(cli):
    machine = ["--gpu", "a100-80gb", "--nodes", "1", "--global-batch", "16", "--top", "2"]
    data = cli.json("plan", *SMALL, "--window", "64", "--window-layers", "LG", *machine)
    shape = TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024, window=64,
                             window_layers="LG")
    p = plan(shape, gpu="a100-80gb", nodes=1, global_batch=16, top=2)
    assert [r["step_s"] for r in data["rows"]] == [float(r.step_s) for r in p.rows]


def test_a_model_file_shows_its_window(cli, tmp_path):
    path = tmp_path / "local.toml"
    path.write_text('name = "local"\n[shape]\nlayers = 6\nhidden = 64\nheads = 4\nsequence = 4096\n'
                    'vocabulary = 1000\nwindow = 512\nwindow_layers = "5LG"\nlayer_norms = 4\nqk_norm = "head"\n',
                    encoding="utf-8")
    out, _ = cli.text("models", str(path), columns=80)
    for row in ("sliding window", "512 window", "windowed layers", "5LG window_layers", "norms a layer",
                "query-key norms", "head qk_norm"):
        assert row in " ".join(out.split()), row
