"""Experts on some layers only from the command line: ``--expert-layers`` on flops, step and plan, read from a
config.json or a model file too, its errors, and what the user reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.step import TransformerShape, achieved_flops, step
from costmodel.step.planner import plan

HF = Path(__file__).resolve().parents[1] / "data" / "hf"
MAVERICK = str(HF / "llama-4-maverick" / "config.json")
SMALL = ["--layers", "4", "--hidden", "64", "--heads", "4", "--seq", "128", "--vocab", "1000"]
MOE = [*SMALL, "--experts", "8", "--top-k", "2"]
SHAPE = {"layers": 4, "hidden": 64, "heads": 4, "sequence": 128, "vocabulary": 1000, "experts": 8, "top_k": 2}


def test_flops_take_the_pattern(cli):
    data = cli.json("flops", *MOE, "--expert-layers", "de", "--global-batch", "2")
    shape = TransformerShape(**SHAPE, expert_layers="DE")
    assert data["shape"]["expert_layers"] == "DE"
    assert data["model_flops"] == achieved_flops(shape, batch=2).model_flops
    assert [(g["layers"], g["moe"]) for g in data["groups"]] == [(2, False), (2, True)]
    every = cli.json("flops", *MOE, "--expert-layers", "E", "--global-batch", "2")
    plain = cli.json("flops", *MOE, "--global-batch", "2")
    assert every == plain and every["shape"]["expert_layers"] is None


@pytest.mark.parametrize(("options", "message"), [
    (["--expert-layers", "DX"],
     "error: --expert-layers 'DX' is not a pattern of E (a layer with the mixture of experts) and D (a layer "
     "with the dense FFN), each after an optional count; e.g. --expert-layers 'DE' (the odd layers: every "
     "other layer, from the second) or --expert-layers '3D5E' (three dense layers, then five with experts)"),
    (["--expert-layers", "DD"],
     "error: --expert-layers 'DD' gives the mixture of experts to no layer; give at least one E, or leave "
     "--experts out for a dense model"),
    (["--expert-layers", "2D3E"],
     "error: --expert-layers '2D3E' describes 5 layers, more than --layers 4; the pattern repeats over the "
     "layers, so give one of at most 4"),
    (["--expert-layers", "EEED", "--dense-layers", "3"],
     "error: --expert-layers '3ED' with --dense-layers 3 leaves no layer with experts among the 4: a layer has "
     "them when it comes after the first 3 and the pattern, repeated from layer 0, says E for it; give fewer "
     "dense layers or more E"),
])
def test_bad_patterns_are_one_line_errors(cli, options, message):
    _, err = cli("flops", *MOE, *options, "--global-batch", "1", rc=2)
    assert err == message + "\n"


def test_a_pattern_without_experts_is_refused(cli):
    _, err = cli("flops", *SMALL, "--expert-layers", "DE", "--global-batch", "1", rc=2)
    assert err.startswith("error: --expert-layers 'DE' describes a mixture of experts; give --experts")
    assert err.count("\n") == 1


def test_maverick_reads_its_layers_and_the_text_names_them(cli):
    out, err = cli.text("flops", "--hf-config", MAVERICK, "--seq", "8192", "--global-batch", "1", columns=80)
    assert err == ""
    flat = " ".join(out.split())
    assert "E 128 k 1 on 24 layers (DE)" in flat and "4.007e11 parameters (1.718e10 active)" in flat
    assert "24 dense layers" in flat and "24 MoE layers" in flat
    assert max(len(line) for line in out.splitlines()) <= 80
    shown, _ = cli.text("models", MAVERICK, columns=80)
    assert "layers with experts DE expert_layers" in " ".join(shown.split())
    assert "FFN width 16384 (3.2 h) ffn_factor" in " ".join(shown.split())
    data = cli.json("models", MAVERICK)
    assert data["shape"]["expert_layers"] == "DE" and not any("not modelled: interleave" in n
                                                             for n in data["notes"])


def test_step_notes_the_layers_with_experts_on_each_stage(cli):
    data = cli.json("step", *MOE, "--expert-layers", "3DE", "--pp", "2", "--dp", "2", "--ep", "2", "-m", "2",
                    "--peak", "312T", "--efficiency", "0.5", "--alpha", "1us", "--bandwidth", "100GB/s")
    assert ("experts: on 1 of the 4 layers (pattern 3DE); the others run a dense FFN of 256; each stage prices "
            "its own layers, those with experts by stage: 0 on stage 0, 1 on stage 1") in data["notes"]
    from costmodel.params import combine_link

    shape = TransformerShape(**SHAPE, expert_layers="3DE")
    r = step(shape=shape, pp=2, dp=2, ep=2, microbatches=2, peak_flops=312 * 10**12, efficiency="0.5",
             link=combine_link(alpha="1us", bandwidth="100GB/s"))
    assert data["step_s"] == float(r.step_s)
    assert data["memory"][0]["parameters"] != data["memory"][1]["parameters"]


def test_plan_takes_the_pattern(cli):
    machine = ["--gpu", "a100-80gb", "--nodes", "1", "--global-batch", "16", "--top", "2"]
    data = cli.json("plan", *MOE, "--expert-layers", "DE", *machine)
    p = plan(TransformerShape(**SHAPE, expert_layers="DE"), gpu="a100-80gb", nodes=1, global_batch=16, top=2)
    assert [r["step_s"] for r in data["rows"]] == [float(r.step_s) for r in p.rows]


def test_a_model_file_carries_the_pattern(cli, tmp_path):
    path = tmp_path / "interleaved.toml"
    path.write_text('name = "interleaved"\n[shape]\nlayers = 4\nhidden = 64\nheads = 4\nsequence = 128\n'
                    'vocabulary = 1000\nexperts = 8\ntop_k = 2\nexpert_layers = "dddE"\n', encoding="utf-8")
    out, _ = cli.text("models", str(path), columns=80)
    assert "layers with experts 3DE expert_layers" in " ".join(out.split())
    data = cli.json("flops", "--model", str(path), "--global-batch", "1")
    assert data["shape"]["expert_layers"] == "3DE" and [g["moe"] for g in data["groups"]] == [False, True]
    path.write_text(path.read_text(encoding="utf-8").replace('"dddE"', "3"), encoding="utf-8")
    _, err = cli("models", str(path), rc=2)
    assert err.rstrip().endswith('[shape] expert_layers = 3 is not text; e.g. expert_layers = "DE"')
