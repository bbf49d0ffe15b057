"""``costmodel gpus`` (the list at 80 columns, one GPU, --json) and ``--gpu`` on ``flops`` and ``memory``.

Expected values are the datasheet and MAMF figures as the sources print them (see
tests/unit/gpus/test_gpus.py for where each comes from).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.gpus import GPU_NAMES
from tests.clirun import run, run_json, run_text

T = 10**12
GiB = 2**30

# name: bf16 peak, measured bf16 GEMM, its share of the peak, memory, bandwidth, SMs, as the list shows them
# (GEMM: the torch-matmul database's square torch.mm, e.g. 264.53 / 312 = 84.79 %; mi300x: the MAMF table)
ROWS = {
    "a100-40gb": ("312 TFLOP/s", "246.3 TFLOP/s", "78.95%", "40 GiB", "1.555 TB/s", "108"),
    "a100-80gb": ("312 TFLOP/s", "264.5 TFLOP/s", "84.79%", "80 GiB", "2.039 TB/s", "108"),
    "b200": ("2.25 PFLOP/s", "1.696 PFLOP/s", "75.38%", "180 GiB", "8 TB/s", "148"),
    "h100-pcie": ("756.5 TFLOP/s", "545.3 TFLOP/s", "72.08%", "80 GiB", "2 TB/s", "114"),
    "h100-sxm": ("989.5 TFLOP/s", "713.2 TFLOP/s", "72.08%", "80 GiB", "3.35 TB/s", "132"),
    "h200": ("989.5 TFLOP/s", "713.2 TFLOP/s", "72.08%", "141 GiB", "4.8 TB/s", "132"),
    "mi300x": ("1.307 PFLOP/s", "668.4 TFLOP/s", "51.12%", "192 GiB", "5.3 TB/s", "304"),
    "rtx-4090": ("165.2 TFLOP/s", "133.9 TFLOP/s", "81.05%", "24 GiB", "1.008 TB/s", "128"),
}
GPT = ["flops", "--layers", "24", "--hidden", "2304", "--heads", "24", "--seq", "2048", "--vocab", "51200",
       "--global-batch", "512", "--recompute", "full", "--time", "3.528s", "--gpus", "32"]


def test_the_list_fits_80_columns_with_every_number_whole(capsys, monkeypatch):
    assert set(ROWS) == set(GPU_NAMES)
    out, _ = run_text(capsys, monkeypatch, "gpus", columns=80)
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    for name, cells in ROWS.items():
        row = next(line for line in lines if line.startswith(name + " "))
        for cell in cells:
            assert f" {cell}" in row + " ", (name, cell, row)
    assert "note: GPU left out to fit 80 columns" in out  # the titles, shown from 85 columns
    wide, _ = run_text(capsys, monkeypatch, "gpus", columns=100)
    assert "NVIDIA A100 SXM4 80GB" in wide and "left out" not in wide


def test_the_list_piped_is_not_wrapped(capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    out, _ = run(capsys, "gpus")
    assert "NVIDIA GeForce RTX 4090" in out and "left out" not in out


def test_list_json(capsys):
    data = run_json(capsys, "gpus")
    assert [g["name"] for g in data["gpus"]] == list(GPU_NAMES)
    h200 = next(g for g in data["gpus"] if g["name"] == "h200")
    assert h200["memory_bytes"] == 141 * GiB and h200["peak_flops_per_s"]["fp8"] == 1979 * T


def test_one_gpu_json_keys_and_si_values(capsys):
    d = run_json(capsys, "gpus", "a100-80gb")
    assert {"name", "title", "vendor", "form", "sms", "memory_bytes", "memory_bandwidth_bytes_per_s",
            "memory_efficiency", "achieved_memory_bandwidth_bytes_per_s", "peak_flops_per_s", "gemm", "launch_s",
            "gpus_per_node", "intra_node_link", "intra_node_bandwidth_bytes_per_s", "network",
            "network_bandwidth_bytes_per_s", "intra_node_latency_s", "intra_node_busbw_bytes_per_s",
            "network_latency_s", "network_busbw_bytes_per_s", "intra_node_channels", "network_channels",
            "intra_node_profile", "attention_flops_per_s", "attention_shapes", "attention_k_overhead",
            "memory_kernels", "sources", "notes", "path", "base"} == set(d)
    assert (d["attention_shapes"], d["attention_k_overhead"]) == ({}, 0)  # one rate: no curve
    # a proxy: each kind at the share of the copy it reached on an H200 (norm 0.498687 of 0.885919), times 1737/2039
    assert d["memory_kernels"]["norm"] == float(f"{0.498687 / 0.885919 * 1737 / 2039:.6g}") == 0.479531
    assert d["sources"]["memory_kernels.norm"]["key"] == "costmodel-h200"
    assert d["memory_bytes"] == 80 * GiB  # the datasheet's 80GB, as GiB
    assert d["memory_bandwidth_bytes_per_s"] == 2039 * 10**9
    assert d["achieved_memory_bandwidth_bytes_per_s"] == 1737 * 10**9
    assert d["peak_flops_per_s"] == {"fp64": 19.5e12, "fp32": 19.5e12, "tf32": 156 * T, "bf16": 312 * T,
                                     "fp16": 312 * T}
    assert d["gemm"]["achieved_flops_per_s"]["bf16"] == 264.53e12 and d["gemm"]["tile"] == [256, 128]
    assert d["gemm"]["shapes"]["bf16"] == [8192, 8192, 8192] and d["gemm"]["k_overhead"] == 128
    assert d["launch_s"] == 2.555e-6 and d["gpus_per_node"] == 8
    assert d["intra_node_bandwidth_bytes_per_s"] == 300 * 10**9 and d["network_bandwidth_bytes_per_s"] == 25 * 10**9
    assert d["sources"]["gemm.achieved_flops.bf16"]["key"] == "torch-matmul-database"
    assert (d["intra_node_latency_s"], d["intra_node_busbw_bytes_per_s"]) == (2.466e-6, 233.2e9)
    assert (d["network_latency_s"], d["network_busbw_bytes_per_s"]) == (1.079e-6, 24e9)
    assert (d["intra_node_channels"], d["network_channels"]) == (12, 8)
    assert d["intra_node_profile"] == "a100-nvswitch" and d["sources"]["intra_node_profile"]["key"] == "superbench"
    assert set(d["sources"]["sms"]) == {"key", "reference", "locator"}


def test_one_gpu_shows_every_number_with_its_unit_and_source(capsys, monkeypatch):
    out, _ = run_text(capsys, monkeypatch, "gpus", "h100-sxm", columns=80)
    assert all(len(line) <= 80 for line in out.splitlines())
    for text in ("132", "85.9 GB = 80 GiB", "3.35 TB/s", "79.35% = 2.658 TB/s", "67 TFLOP/s", "494.5 TFLOP/s",
                 "989.5 TFLOP/s", "1.979 PFLOP/s", "713.2 TFLOP/s = 72.08% of peak", "2048×4096×16384",
                 "1.403 PFLOP/s = 70.87% of peak", "1024×9216×14336", "128 × 256", "100", "2.433 µs",
                 "norm kernels", "costmodel-h200", "309.7 TFLOP/s = 31.3% of peak",
                 "450 GB/s (3.6 Tb/s) each way", "50 GB/s (400 Gb/s) each way",
                 "nvidia-h100", "nvidia-hopper-whitepaper", "bekman-ml-engineering", "rrze-gpu-benches",
                 "nvidia-cutlass", "nvidia-dgx-h100", "note: memory_efficiency: a proxy",
                 "928.6 ns", "475.3 GB/s", "831 ns", "761.8 TFLOP/s", "torch-matmul-database",
                 "dgxc-benchmarking", "nccl-tests-309"):
        assert text in out, text


def test_a_file_of_ones_own(capsys, monkeypatch, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('base = "h100-sxm"\n[launch]\nvalue = "3.1 us"\nlocator = "measured"\n', encoding="utf-8")
    out, _ = run_text(capsys, monkeypatch, "gpus", str(path), columns=100)
    assert "from the preset h100-sxm" in out and "3.1 µs" in out and "this file" in out
    d = run_json(capsys, "gpus", str(path))
    assert (d["name"], d["base"], d["path"], d["launch_s"]) == ("mine", "h100-sxm", str(path), 3.1e-6)
    assert d["sources"]["launch_s"] == {"key": "file", "reference": str(path), "locator": "measured"}


@pytest.mark.parametrize(("text", "needle"), [
    ('base = "h100-sxm"\nlaunchh = "1 us"\n', "mine.toml:2: unknown key 'launchh' in the top level; did you mean"),
    ('base = "h100-sxm"\n[memory]\nvalue = "80 KB"\n', "mine.toml:3: memory: '80 KB' is ambiguous"),
    ('base = "h100-sxm"\n[gemm.achieved.bf16]\nvalue = "2P"\nshape = [1, 1, 1]\n', "cannot beat the peak"),
    ('base = "h100-sxm"\nx = \n', "mine.toml:2: invalid TOML"),
    ("", "mine.toml: missing name, vendor"),
])
def test_a_bad_file_is_one_error_line(capsys, tmp_path, text, needle):
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    for argv in (["gpus", str(path)], ["memory", "--params", "7B", "--gpu", str(path)],
                 [*GPT, "--gpu", str(path)]):
        out, err = run(capsys, *argv, rc=2)
        assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
        assert needle in err, err


def test_flops_takes_the_peak_of_a_gpu(capsys):
    by_gpu = run_json(capsys, *GPT, "--gpu", "a100-80gb")
    by_peak = run_json(capsys, *GPT, "--peak", "312T")
    assert by_gpu["peak_flops_per_s"] == 312 * T
    assert by_gpu["mfu"] == by_peak["mfu"] and by_gpu["hfu"] == by_peak["hfu"]
    # MFU = model FLOPs / (time × GPUs × peak), the model FLOPs of the result
    assert Fraction(by_gpu["mfu"]).limit_denominator(10**12) == pytest.approx(
        by_gpu["model_flops"] / (3.528 * 32 * 312e12), rel=1e-12)
    assert (by_gpu["gpu"], by_gpu["peak_dtype"]) == ("a100-80gb", "bf16")
    assert by_gpu["peak_source"]["key"] == "nvidia-a100"
    fp8 = run_json(capsys, *GPT, "--gpu", "H100_SXM", "--dtype", "float8")
    assert fp8["peak_flops_per_s"] == 1979 * T and fp8["peak_dtype"] == "fp8"


def test_flops_says_where_the_peak_comes_from(capsys, monkeypatch):
    out, _ = run_text(capsys, monkeypatch, *GPT, "--gpu", "a100-80gb", columns=100)
    assert "MFU (model FLOPs / 312 TFLOP/s)" in out
    assert "note: peak: 312 TFLOP/s, the dense bf16 peak of one NVIDIA A100 SXM4 80GB (nvidia-a100:" in out


def test_memory_fits_or_says_by_how_much_it_does_not(capsys, monkeypatch):
    # ZeRO-1 over 8 GPUs: 4Ψ + 12Ψ/8 = 5.5 × 7.5e9 = 41.25 GB per GPU, under the A100's 40 GiB = 42.95 GB
    fits = run_json(capsys, "memory", "--params", "7.5B", "--dp", "8", "--zero", "1", "--gpu", "a100-40gb")
    assert fits["gpu_fit"]["fits"] is True
    assert fits["gpu_fit"]["required_bytes"] == 41_250_000_000
    assert fits["gpu_fit"]["free_bytes"] == 40 * GiB - 41_250_000_000 and fits["gpu_fit"]["excess_bytes"] == 0
    # stage 0: 16 bytes a parameter, 120 GB: 120e9 − 80 GiB over an 80 GB A100
    over = run_json(capsys, "memory", "--params", "7.5B", "--dp", "8", "--zero", "0", "--gpu", "a100-80gb")
    assert over["gpu_fit"]["fits"] is False and over["gpu_fit"]["excess_bytes"] == 120 * 10**9 - 80 * GiB
    assert over["gpu_fit"]["capacity_bytes"] == 80 * GiB
    out, _ = run_text(capsys, monkeypatch, "memory", "--params", "7.5B", "--dp", "8", "--zero", "0", "--gpu",
                      "a100-80gb", columns=200)
    assert "does not fit one NVIDIA A100 SXM4 80GB" in out and "34.1 GB = 31.76 GiB over its memory" in out
    out, _ = run_text(capsys, monkeypatch, "memory", "--params", "7B", "--gpu", "h100-sxm", columns=200)
    assert "fits one NVIDIA H100 SXM5 80GB" in out and "note: only the weights are counted: pass --zero" in out
    assert run_json(capsys, "memory", "--params", "7B")["gpu_fit"] is None


def test_a_product_on_a_gpu(capsys, monkeypatch):
    # the guide's 8192 × 128 × 8192: 4096/33 ≈ 124.1 FLOP/B under the H100's 989.5 / 3.35 ≈ 295.4: memory-bound
    data = run_json(capsys, "gpus", "h100-sxm", "--gemm", "8192x128x8192")
    assert (data["gpu"], data["dtype"], data["roofline"]["bound"]) == ("h100-sxm", "bf16", "memory")
    assert data["roofline"]["flops"] == 2 * 8192 * 128 * 8192 and data["compute_bound_rows"] is None
    assert data["waves"] == {"tiles": 64, "waves": 1, "sms": 132, "tile": [128, 256], "efficiency": 64 / 132}
    out, _ = run_text(capsys, monkeypatch, "gpus", "h100-sxm", "--gemm", "8192x128x8192", columns=80)
    assert all(len(line) <= 80 for line in out.splitlines())
    for fragment in ("4096/33 ≈ 124.121", "19790/67 ≈ 295.373", "memory", "41.32 µs", "415.8 TFLOP/s", "64"):
        assert fragment in out, fragment
    fp8 = run_json(capsys, "gpus", "h100-sxm", "--gemm", "4096x4096x4096", "--dtype", "fp8")
    assert fp8["element_bytes"] == 1 and fp8["roofline"]["bound"] == "compute"


@pytest.mark.parametrize(("args", "needle"), [
    (("gpus", "--gemm", "1x1x1"), "--gemm '1x1x1' needs a GPU"),
    (("gpus", "h100-sxm", "--dtype", "fp8"), "give --gemm with --dtype"),
    (("gpus", "h100-sxm", "--gemm", "8192x128"), "is not a product shape; write MxNxK"),
    (("gpus", "a100-80gb", "--gemm", "1x1x1", "--dtype", "fp8"), "'fp8' has no peak on a100-80gb"),
])
def test_bad_products_are_one_error_line(capsys, args, needle):
    out, err = run(capsys, *args, rc=2)
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ") and needle in err, err
