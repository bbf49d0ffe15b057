"""The command-line contract of ``costmodel flops``: JSON equal to the library's, the human rendering at
80 columns, and the counts each number uses.  Its bad inputs are in ``test_bad_input.py``."""

from __future__ import annotations

import json

from costmodel.cli.output import _json
from costmodel.step import TransformerShape, achieved_flops

# Narayanan et al. SC'21 Table 1, the 145.6-billion-parameter row: 1536 GPUs, 148 teraFLOP/s per GPU.
ROW = ["--layers", "80", "--hidden", "12288", "--heads", "96", "--seq", "2048", "--vocab", "51200",
       "--batch", "2304", "--recompute", "full"]
MEASURED = ["--time", "24.84s", "--gpus", "1536", "--peak", "312T"]
KEYS = {"shape", "batch", "tokens", "recompute", "causal", "layer", "logits_forward", "logits_backward",
        "model_flops", "hardware_flops", "model_flops_per_token", "hardware_flops_per_token", "parameters",
        "six_n_flops", "six_n_ratio", "total_parameters", "active_parameters", "capacity_factor", "dense_layer",
        "groups", "time_s", "gpus", "peak_flops_per_s", "model_flops_per_s_per_gpu",
        "hardware_flops_per_s_per_gpu", "model_flops_per_s", "hardware_flops_per_s", "mfu", "hfu", "conventions",
        "sources", "notes"}


def test_json_equals_the_library_and_has_its_keys(cli):
    data = cli.json("flops", *ROW, *MEASURED)
    shape = TransformerShape(layers=80, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    expected = achieved_flops(shape, batch=2304, recompute="full", time_s="24.84s", gpus=1536,
                              peak_flops=312 * 10**12)
    assert data == json.loads(_json(expected))
    assert set(data) == KEYS
    assert data["time_s"] == 24.84 and data["gpus"] == 1536 and data["peak_flops_per_s"] == 312e12
    assert round(data["hardware_flops_per_s_per_gpu"] / 1e12) == 148
    assert round(data["hardware_flops_per_s"] / 1e15, 1) == 227.1


def test_json_without_a_measurement_has_no_rates(cli):
    data = cli.json("flops", *ROW[:-2], "--causal")
    assert data["recompute"] == "none" and data["causal"] is True
    assert data["model_flops"] == data["hardware_flops"]
    assert all(data[k] is None for k in ("time_s", "gpus", "mfu", "hfu", "hardware_flops_per_s"))


def test_human_output_at_80_columns_piped(cli):
    out, err = cli.text("flops", *ROW, *MEASURED, columns=80)
    assert err == ""
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), out
    assert lines[0] == "flops · l 80, h 12288, a 96, s 2048, V 51200 · B 2304 · full recomputation"
    assert lines[1] == "5.642e18 FLOPs per iteration, 1.196e12 per token"
    for shown in ("with recomputation (hardware, eq. 3) 5.642e18", "model FLOPs (no recomputation)",
                  "6·N·tokens", "0.9731 × model", "measured: 24.84 s per iteration on 1536 GPUs",
                  "147.9 TFLOP/s", "227.1 PFLOP/s", "MFU (model FLOPs / 312 TFLOP/s)", "35.6%",
                  "HFU (hardware FLOPs / 312 TFLOP/s)", "47.4%", "recomputation (a forward)"):
        assert shown in out, shown


def test_human_output_without_recomputation_says_which_count(cli):
    out, _ = cli.text("flops", *ROW[:-2], "--time", "20s", "--gpus", "1536", columns=80)
    assert "no recomputation" in out.splitlines()[0]
    assert "recomputation (a forward)" not in out
    assert "FLOP/s per GPU, as run" in out and "MFU" not in out


MIXTRAL = ["--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-groups", "8", "--seq", "4096",
           "--vocab", "32000", "--gated", "--ffn", "3.5", "--experts", "8", "--top-k", "2", "--untied-embeddings",
           "--batch", "1"]


def test_a_mixture_of_experts_prints_total_and_active_parameters(cli):
    data = cli.json("flops", *MIXTRAL, "--capacity-factor", "1.25")
    shape = TransformerShape(layers=32, hidden=4096, heads=32, kv_groups=8, sequence=4096, vocabulary=32000,
                             gated=True, ffn_factor="3.5", experts=8, top_k=2, tied_embeddings=False)
    assert data == json.loads(_json(achieved_flops(shape, batch=1, capacity_factor="1.25")))
    assert (data["total_parameters"], data["active_parameters"]) == (46_702_792_704, 12_879_925_248)
    assert data["hardware_flops"] > data["model_flops"] and data["capacity_factor"] == 1.25
    out, err = cli.text("flops", *MIXTRAL, columns=80)
    assert not err and "4.67e10 parameters (1.288e10 active)" in out and "routed experts" in out
