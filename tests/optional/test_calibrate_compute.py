"""``costmodel calibrate compute`` run for real on this machine's CPU, and the file it writes used by step.

It measures (seconds: ``--quick`` and a tiny model), so it needs PyTorch; without it the module is
skipped with the reason.  What the numbers are is not checked (a CPU under load times what it
times): that the file loads, carries what was measured, and prices a step.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="calibrate compute needs PyTorch: pip install 'costmodel-collectives[calibrate]'")

import torch

from costmodel.gpus import MEMORY_KERNELS, load_gpu
from tests.clirun import run, run_json

TINY = ["--layers", "1", "--hidden", "128", "--heads", "2", "--seq", "64", "--vocab", "256"]
COMPUTE = ["calibrate", "compute", "--device", "cpu", "--base", "a100-80gb", "--quick", "--limit", "60s", *TINY]


def test_a_cpu_run_writes_a_profile_that_step_uses(capsys, tmp_path):
    path = tmp_path / "cpu.toml"
    data = run_json(capsys, *COMPUTE, "--out", str(path))
    assert (data["device"], data["dtype"], data["base"], data["name"]) == ("cpu", "fp32", "a100-80gb",
                                                                          "a100-80gb-calibrated")
    assert data["profile"] == str(path) and data["stopped"] is None
    assert data["threads"] == torch.get_num_threads() == data["sms"] and data["tile"] == [1, 1]
    labels = {g["label"] for g in data["gemms"]}
    assert {"square", "k sweep", "QKV", "FFN in wgrad", "attention scores", "logits dgrad"} <= labels
    assert all(g["time_s"] > 0 and g["flops_per_s"] > 0 and g["model_time_s"] > 0 for g in data["gemms"])
    assert any(g["batch"] == 2 for g in data["gemms"])  # the attention products of 2 heads: torch.bmm
    assert 0 <= data["k_overhead"] <= 2048
    assert 0 < data["memory_efficiency"] <= 1 and data["launch_s"] > 0
    assert data["memory_bandwidth_bytes_per_s"] == pytest.approx(data["copy_bytes"] / data["copy_s"])
    kernels = data["memory_kernels"]
    assert [k["kind"] for k in kernels] == list(MEMORY_KERNELS)
    assert all(k["time_s"] > 0 and 0 < k["share"] <= 1 for k in kernels)
    assert all(k["bandwidth_bytes_per_s"] == pytest.approx(k["bytes"] / k["time_s"]) for k in kernels)

    fused = data["attention"]  # the layer's causal attention: 2 heads of 64, 64 tokens, PyTorch's CPU kernel
    assert (fused["kernel"], fused["shape"]["heads"], fused["shape"]["seq"], fused["shape"]["head_dim"]) == \
        ("cpu", 2, 64, 64)
    assert fused["shape"]["flops"] == 7 * 1 * 2 * 64 * 64**2  # 2·b·a·2d·s²/2 forward, 2.5 times it backward
    assert fused["flops_per_s"] == pytest.approx(fused["shape"]["flops"] / fused["time_s"])
    assert fused["achieved_flops_per_s"] == round(fused["flops_per_s"])

    longer = data["attention_curve"]  # the same attention at four times the sequence, for the curve's K
    assert (longer["shape"]["seq"], longer["shape"]["flops"]) == (256, 16 * fused["shape"]["flops"])
    assert data["attention_k_overhead"] >= 0

    gpu = load_gpu(path)
    assert gpu.attention_flops["fp32"] == fused["achieved_flops_per_s"]
    assert gpu.attention_shapes["fp32"] == (1, 2, 64, 64) and gpu.attention_k_overhead == data["attention_k_overhead"]
    assert (gpu.name, gpu.base) == ("a100-80gb-calibrated", "a100-80gb")
    assert gpu.gemm.k_overhead == data["k_overhead"] and gpu.sms == data["sms"] and gpu.gemm.tile == (1, 1)
    assert float(gpu.achieved("fp32")) == pytest.approx(data["achieved_flops_per_s"], rel=1e-9)
    assert list(gpu.gemm.shape_for("fp32")) == data["achieved_shape"]
    assert float(gpu.launch_s) == pytest.approx(data["launch_s"], rel=1e-3)
    assert "a CPU dry run" in " ".join(gpu.notes)
    assert gpu.memory_kernels == {k["kind"]: pytest.approx(k["share"], rel=1e-5) for k in kernels}

    step = run_json(capsys, "step", *TINY, "--gpu-profile", str(path), "--dtype", "fp32")
    assert step["gpu"] == "a100-80gb-calibrated"
    assert "a100-80gb-calibrated" in step["compute_model"] and step["compute_s"] > 0
    assert "kernels at their own bandwidth" in step["compute_model"]
    shown, _ = run(capsys, "gpus", str(path))
    assert "a100-80gb-calibrated" in shown and "this file" in shown

    _, err = run(capsys, *COMPUTE, "--out", str(path), rc=2)  # refused before anything is measured
    assert err.startswith("error: ") and "exists; pass --force" in err


def test_the_human_output_says_what_was_measured(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out, _ = run(capsys, *COMPUTE)
    words = " ".join(out.split())  # folded at 80 columns
    assert "fp32 (the default on a CPU: what CPUs run fast)" in words
    for said in ("product", "measured", "model", "error", "memory:", "launch:", "fit: K0 =", "(gemm.achieved)",
                 "attention:", "F.scaled_dot_product_attention (cpu, causal) forward and backward at 1×2×64×64",
                 "(attention.achieved)",
                 "memory-bound kernels, forward and backward: norm", "(memory_kernels)",
                 "note: a CPU dry run"):
        assert said in words
    assert "wrote" not in words
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize(("argv", "message"), [
    (["calibrate", "compute", "--device", "cpu"], "on a CPU there is no GPU to start from; pass --base PRESET"),
    (["calibrate", "compute", "--device", "cpu", "--base", "a100-80gb", "--dtype", "tf32"],
     "dtype 'tf32' is a mode of NVIDIA tensor cores"),
    (["calibrate", "compute", "--device", "cpu", "--base", "a100-80gb", "--attention-kernel", "xformers"],
     "--attention-kernel 'xformers' is not one of flash, cudnn"),
])
def test_cpu_refusals_are_one_error_line(capsys, argv, message):
    _, err = run(capsys, *argv, rc=2)
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_cuda_device_where_there_is_none(capsys):
    _, err = run(capsys, "calibrate", "compute", "--device", "cuda:0", "--base", "a100-80gb", rc=2)
    assert "no CUDA device is visible to this process" in err
