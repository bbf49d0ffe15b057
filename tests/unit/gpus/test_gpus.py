"""The GPU presets and files: every number sourced, the datasheet values as typed, files refused line by line.

Expected values are the datasheet and benchmark figures themselves (each test names its source), or
derived from the chip's configuration where such a derivation exists (SMs × tensor cores × FMAs per
clock × 2 × clock); never read back from costmodel.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.gpus import (
    CITED,
    FLOP_DTYPES,
    GPU,
    GPU_NAMES,
    is_file_source,
    list_gpus,
    load_gpu,
    parse_gpu,
    resolve_dtype,
)
from costmodel.references import CITATIONS
from costmodel.training.memory import memory_fit, training_memory

ROOT = Path(__file__).resolve().parents[3]
PRESETS = ROOT / "costmodel" / "gpus" / "presets"
T = 10**12
GiB = 2**30

SCALARS = ("sms", "memory_bytes", "memory_bandwidth_bytes_per_s", "memory_efficiency", "launch_s",
           "gpus_per_node", "intra_node_bandwidth_bytes_per_s", "network_bandwidth_bytes_per_s",
           "gemm.tile", "gemm.k_overhead")
LINKS = ("intra_node_latency_s", "intra_node_busbw_bytes_per_s", "network_latency_s", "network_busbw_bytes_per_s",
         "intra_node_channels", "network_channels")
FITTED = {"a100-40gb": "a100-nvswitch", "a100-80gb": "a100-nvswitch", "h100-sxm": "h100-nvswitch",
          "h200": "h100-nvswitch"}
"""The presets whose node an nccl-tests log measured over all sizes, and the profile fitted on it."""


# -- every preset ---------------------------------------------------------------------------------


def test_the_presets_shipped():
    assert set(GPU_NAMES) >= {"a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200", "mi300x",
                              "rtx-4090"}
    assert sorted(p.stem for p in PRESETS.glob("*.toml")) == list(GPU_NAMES)
    assert [g.name for g in list_gpus().gpus] == list(GPU_NAMES)


@pytest.mark.parametrize("name", GPU_NAMES)
def test_every_preset_loads_with_a_cited_source_for_every_number(name):
    g = load_gpu(name)
    assert g.name == name and g.path == "" and g.base == ""
    assert g.intra_node_profile == FITTED.get(name)
    expected = {*SCALARS, *LINKS, *(("intra_node_profile",) if name in FITTED else ()),
                *(f"peak_flops.{d}" for d in g.peak_flops),
                *(f"gemm.achieved_flops.{d}" for d in g.gemm.achieved_flops),
                *(f"attention_flops.{d}" for d in g.attention_flops),
                *(f"memory_kernels.{k}" for k in g.memory_kernels),
                *(("attention_k_overhead",) if g.attention_k_overhead else ())}
    assert set(g.sources) == expected
    for key, cited in g.sources.items():
        assert not is_file_source(cited), key
        assert CITATIONS[cited.citation.key] is cited.citation, key
        assert len(cited.locator) > 10, key


@pytest.mark.parametrize("name", GPU_NAMES)
def test_every_preset_is_consistent(name):
    g = load_gpu(name)
    assert g.vendor in ("nvidia", "amd") and g.form in ("sxm", "pcie", "oam", "workstation")
    assert g.sms > 0 and g.gpus_per_node > 0 and g.gemm.k_overhead >= 0
    for value in (g.memory_bytes, g.memory_bandwidth_bytes_per_s, g.launch_s, g.intra_node_bandwidth_bytes_per_s,
                  g.network_bandwidth_bytes_per_s):
        assert value > 0
    assert 0 < g.memory_efficiency <= 1
    assert set(g.peak_flops) <= set(FLOP_DTYPES) and "bf16" in g.peak_flops
    assert "bf16" in g.gemm.achieved_flops and g.gemm.shape == g.gemm.shapes["bf16"]
    for dtype, rate in g.gemm.achieved_flops.items():
        assert 0 < rate <= g.peak_flops[dtype], dtype
        assert all(x > 0 for x in g.gemm.shape_for(dtype))
    # the NVLink/xGMI fabric of a node is faster than its network, per GPU
    assert g.intra_node_bandwidth_bytes_per_s > g.network_bandwidth_bytes_per_s
    # what nccl-tests measures stays under the link's rate, the network's under the node's fabric
    # (NVLink SHARP reduces inside the switch, so an NVSwitch all-reduce may pass the link's rate a little)
    assert 0 < g.intra_node_busbw_bytes_per_s <= g.intra_node_bandwidth_bytes_per_s * Fraction(11, 10)
    if g.intra_node_busbw_bytes_per_s > g.intra_node_bandwidth_bytes_per_s:
        assert "SHARP" in g.sources["intra_node_busbw_bytes_per_s"].locator or "H100 NVSwitch" in \
            g.sources["intra_node_busbw_bytes_per_s"].locator
    assert 0 < g.network_busbw_bytes_per_s <= g.network_bandwidth_bytes_per_s
    assert g.network_busbw_bytes_per_s < g.intra_node_busbw_bytes_per_s
    assert 0 < g.intra_node_latency_s < Fraction(10, 10**6) and 0 < g.network_latency_s < Fraction(10, 10**6)
    assert 0 < g.network_channels <= g.intra_node_channels < g.sms
    # fused attention: on the GEMM dtypes, under the peak
    assert set(g.attention_flops) == set(g.gemm.achieved_flops) - {"fp8"}
    assert all(0 < rate <= g.peak_flops[d] for d, rate in g.attention_flops.items())


def test_the_presets_cite_exactly_the_listed_sources():
    cited = {c.citation.key for g in list_gpus().gpus for c in g.sources.values()}
    assert cited == {c.key for c in CITED}


@pytest.mark.parametrize("name", GPU_NAMES)
def test_every_proxy_is_named_in_the_notes(name):
    g = load_gpu(name)
    for key, cited in g.sources.items():
        if cited.locator.startswith("proxy"):
            words = {"memory_efficiency": "memory_efficiency", "launch_s": "launch",
                     "attention_k_overhead": "attention.k_overhead"}
            shown = words.get(key, "gemm.achieved" if key.startswith("gemm.achieved") else key)
            if key in (*LINKS, "intra_node_profile") or key.startswith("attention_flops."):
                continue  # their locators say "proxy" and name what stands in
            assert any(shown.split(".")[0] in note for note in g.notes), (key, g.notes)


# -- the values as the sources give them ----------------------------------------------------------


def test_a100_against_its_datasheet_and_its_configuration():
    # NVIDIA A100 datasheet: 312 TFLOPS BF16/FP16 dense, 156 TF32, 19.5 FP32 and FP64 Tensor Core;
    # 40GB: 1,555 GB/s, 80GB: 2,039 GB/s; NVLink 600 GB/s both directions together.
    a40, a80 = load_gpu("a100-40gb"), load_gpu("a100-80gb")
    for g in (a40, a80):
        assert g.peak_flops == {"fp64": Fraction(195, 10) * T, "fp32": Fraction(195, 10) * T, "tf32": 156 * T,
                                "bf16": 312 * T, "fp16": 312 * T}
        assert g.sms == 108
        assert g.intra_node_bandwidth_bytes_per_s == 600 * 10**9 / 2
        assert g.network_bandwidth_bytes_per_s == 200 * 10**9 / 8  # DGX A100: one HDR 200 Gb/s per GPU
        assert g.gpus_per_node == 8
        # CUTLASS's SM80 256x128x64 tile, 3 stages: K0 = 64 (3 - 1)
        assert g.gemm.tile == (256, 128) and g.gemm.k_overhead == 64 * (3 - 1)
        assert g.gemm.shape == g.gemm.shapes["fp16"] == (8192, 8192, 8192)
        # FlashAttention-2: 50-73 % of peak on A100; the low end
        assert g.attention_flops == {"bf16": 156 * T, "fp16": 156 * T}
        # DGX A100: 12 NCCL channels in the node (6 rings doubled), one per HDR port out of it
        assert (g.intra_node_channels, g.network_channels) == (12, 8)
    # torch-matmul database, square bf16 | fp16 torch.mm: A100 SXM4 80GB 264.53 | 258.74; A100 40GB 246.33 | 247.63
    assert (a80.achieved("bf16"), a80.achieved("fp16")) == (Fraction(26453, 100) * T, Fraction(25874, 100) * T)
    assert (a40.achieved("bf16"), a40.achieved("fp16")) == (Fraction(24633, 100) * T, Fraction(24763, 100) * T)
    # nccl-tests fits: superbench 8x A100 NVSwitch (2.466 us, 233.2 GB/s), ABCI 2x8 A100 over HDR (1.079 us),
    # nccl-tests issue 119: 96 GB/s busbw over 4 HDR ports, 24 GB/s a port
    assert (a80.intra_node_latency_s, a80.intra_node_busbw_bytes_per_s) == (Fraction(2466, 10**9),
                                                                            Fraction(2332, 10) * 10**9)
    assert (a80.network_latency_s, a80.network_busbw_bytes_per_s) == (Fraction(1079, 10**9), 24 * 10**9)
    # the peak from the chip: 108 SMs × 4 tensor cores × 256 dense FP16 FMA/clock × 2 × 1410 MHz
    derived = 108 * 4 * 256 * 2 * 1410 * 10**6
    assert derived == 311_869_440_000_000 and round(Fraction(derived, T)) == 312
    assert (a40.memory_bytes, a80.memory_bytes) == (40 * GiB, 80 * GiB)
    assert (a40.memory_bandwidth_bytes_per_s, a80.memory_bandwidth_bytes_per_s) == (1555 * 10**9, 2039 * 10**9)
    # gpu-benches gpu-stream, scale kernel: 1382 GB/s (A100 40GB), 1737 GB/s (A100 80GB)
    assert a40.achieved_memory_bandwidth_bytes_per_s == 1382 * 10**9
    assert a80.achieved_memory_bandwidth_bytes_per_s == 1737 * 10**9
    assert a80.launch_s == Fraction(2555, 10**9)  # gpu-small-kernels fit, A100_80: a = 2555 ns


def test_hopper_against_its_datasheets_and_its_configuration():
    # H100 datasheet (SXM | PCIe), with sparsity: BF16 1,979 | 1,513, FP8 3,958 | 3,026, TF32 989 | 756;
    # dense: half.  FP32 and FP64 Tensor Core: 67 | 51.
    sxm, pcie, h200 = load_gpu("h100-sxm"), load_gpu("h100-pcie"), load_gpu("h200")
    for g in (sxm, h200):
        assert g.peak_flops == {"fp64": 67 * T, "fp32": 67 * T, "tf32": Fraction(989, 2) * T,
                                "bf16": Fraction(1979, 2) * T, "fp16": Fraction(1979, 2) * T, "fp8": 1979 * T}
        assert g.sms == 132 and g.intra_node_bandwidth_bytes_per_s == 900 * 10**9 / 2
        assert g.network_bandwidth_bytes_per_s == 400 * 10**9 / 8  # DGX H100/H200: one NDR 400 Gb/s per GPU
    assert pcie.peak_flops == {"fp64": 51 * T, "fp32": 51 * T, "tf32": 378 * T, "bf16": Fraction(1513, 2) * T,
                               "fp16": Fraction(1513, 2) * T, "fp8": 1513 * T}
    assert pcie.sms == 114 and pcie.intra_node_bandwidth_bytes_per_s == 128 * 10**9 / 2  # PCIe Gen5 128 GB/s
    # the peak from the chip: 132 SMs × 4 tensor cores × 512 dense FP16 FMA/clock × 2 × 1830 MHz = 989.43 T,
    # the datasheet's 989.5 to its rounding
    derived = Fraction(132 * 4 * 512 * 2 * 1830 * 10**6)
    assert abs(derived / sxm.peak("bf16") - 1) < Fraction(1, 10**4)
    assert (sxm.memory_bandwidth_bytes_per_s, pcie.memory_bandwidth_bytes_per_s,
            h200.memory_bandwidth_bytes_per_s) == (3350 * 10**9, 2000 * 10**9, 4800 * 10**9)
    assert (sxm.memory_bytes, pcie.memory_bytes, h200.memory_bytes) == (80 * GiB, 80 * GiB, 141 * GiB)
    # torch-matmul database, square torch.mm fp16 (bursts, not measured here): H100 80GB HBM3 761.84, H200 759.40
    assert sxm.achieved("fp16") == Fraction(76184, 100) * T and h200.achieved("fp16") == Fraction(7594, 10) * T
    # FlashAttention-3 in the same spirit as the A100's: half the peak (fp16, not measured)
    assert sxm.attention_flops["fp16"] == sxm.peak("fp16") / 2 and h200.attention_flops["fp16"] == h200.peak("fp16") / 2
    # bf16 on the H100s: proxies of the same chip's sustained rates on the H200; the PCIe card at its peak's share
    assert sxm.achieved("bf16") == h200.achieved("bf16")
    assert (sxm.gemm.shape_for("bf16"), sxm.gemm.k_overhead, pcie.gemm.k_overhead) == ((2048, 4096, 16384), 100, 100)
    assert sxm.attention_flops["bf16"] == h200.attention_flops["bf16"]
    assert pcie.achieved("bf16") == Fraction(f"{71319 / 98950 * 756.5:.1f}") * T == Fraction(5453, 10) * T
    assert pcie.attention_flops["bf16"] == Fraction(f"{30969 / 98950 * 756.5:.2f}") * T
    # the H200's bf16 compute, measured by calibrate compute on one (docs/theory/step-vs-measured.md): sustained
    # at its 700 W cap, the fastest product 713.19 T at 2048×4096×16384, K0 100, cuDNN attention 309.69 T
    assert h200.achieved("bf16") == Fraction(71319, 100) * T and h200.gemm.shape_for("bf16") == (2048, 4096, 16384)
    assert h200.gemm.k_overhead == 100 and h200.attention_flops["bf16"] == Fraction(30969, 100) * T
    assert h200.launch_s == Fraction(67051, 10**10)  # 6705.1 ns
    assert h200.achieved_memory_bandwidth_bytes_per_s == Fraction("0.885919") * 4800 * 10**9
    # the norm's and the softmax's bytes as their kernels move them (7 and 8 elements a row element, not 5):
    # the same times, re-counted
    assert h200.memory_kernels["norm"] == Fraction(f"{0.356205 * 7 / 5:.6g}")
    assert h200.memory_kernels["softmax"] == Fraction(f"{0.407198 * 8 / 5:.6g}")
    assert h200.memory_kernels == {"norm": Fraction("0.498687"), "softmax": Fraction("0.651517"),
                                   "dropout": Fraction("0.710025"), "activation": Fraction("0.663174"),
                                   "cross_entropy": Fraction("0.585748"), "optimizer": Fraction("0.691968")}
    assert {c.citation.key for k, c in h200.sources.items() if k.startswith("memory_kernels")} == {"costmodel-h200"}
    # nccl-tests fits: DGX Cloud 8x H100 NVLS (0.9286 us, 475.3 GB/s), 2x8 H100 over NDR (0.831 us)
    assert (sxm.intra_node_latency_s, sxm.intra_node_busbw_bytes_per_s) == (Fraction(9286, 10**10),
                                                                            Fraction(4753, 10) * 10**9)
    assert sxm.network_latency_s == Fraction(831, 10**9)
    # MAMF table (fp8 only: the database has none): H100 1402.6, H200 1453.4
    assert sxm.achieved("fp8") == Fraction(14026, 10) * T and sxm.gemm.shape_for("fp8") == (1024, 9216, 14336)
    assert h200.achieved("fp8") == Fraction(14534, 10) * T and h200.gemm.shape_for("fp8") == (1280, 4096, 12032)
    # the PCIe card's fp16 GEMM rate is a proxy: the SXM's database share of its peak on the card's, to 0.1 T
    assert abs(pcie.achieved("fp16") - Fraction(76184, 98950) * Fraction(1513, 2) * T) < Fraction(1, 10) * T
    # CUTLASS's SM90 128x256x64 tile: a stage is (128 + 256) × 64 × 2 B = 48 KiB, 4 fit 227 KiB: K0 = 64 × 3
    assert (128 + 256) * 64 * 2 == 48 * 1024 and 4 * 48 <= 227 < 5 * 48
    assert sxm.gemm.tile == (128, 256) and h200.gemm.k_overhead == sxm.gemm.k_overhead == 100
    # the H100s' K0 is the H200's fitted one (100), below that derivation's 192


def test_b200_against_its_sources():
    g = load_gpu("b200")
    # ml-engineering TFLOPS table (DGX B200 datasheet), dense: fp32 80, tf32 1125, bf16/fp16 2250, fp8 4500;
    # FP64: 296 TFLOPS per 8-GPU HGX B200 board
    assert g.peak_flops == {"fp64": Fraction(296, 8) * T, "fp32": 80 * T, "tf32": 1125 * T, "bf16": 2250 * T,
                            "fp16": 2250 * T, "fp8": 4500 * T}
    assert g.sms == 148 and g.memory_bytes == 180 * GiB and g.memory_bandwidth_bytes_per_s == 8 * T
    assert g.intra_node_bandwidth_bytes_per_s == Fraction(144, 10) * T / 8 / 2  # 14.4 TB/s NVLink over 8 GPUs
    # torch-matmul database, B200 180GB square torch.mm: bf16 1696.03, fp16 1627.64;
    # MAMF table (fp8 only): 3432.5 at 15360x4096x3072
    assert g.achieved("bf16") == Fraction(169603, 100) * T and g.gemm.shape == (8192, 8192, 8192)
    assert g.achieved("fp16") == Fraction(162764, 100) * T
    assert g.achieved("fp8") == Fraction(34325, 10) * T and g.gemm.shape_for("fp8") == (15360, 4096, 3072)


def test_mi300x_against_its_data_sheet_and_its_configuration():
    g = load_gpu("mi300x")
    # AMD MI300X data sheet, dense: FP64 matrix 163.4, FP32 163.4, TF32 653.7, BF16/FP16 1307.4, FP8 2614.9
    assert g.peak_flops == {"fp64": Fraction(1634, 10) * T, "fp32": Fraction(1634, 10) * T,
                            "tf32": Fraction(6537, 10) * T, "bf16": Fraction(13074, 10) * T,
                            "fp16": Fraction(13074, 10) * T, "fp8": Fraction(26149, 10) * T}
    # from the chip: 304 CUs × 4 matrix cores × 256 BF16 FMA/clock × 2 × 2100 MHz = 1307.44 T
    derived = 304 * 4 * 256 * 2 * 2100 * 10**6
    assert round(Fraction(derived, T), 1) == Fraction(13074, 10)
    assert g.sms == 304 and g.memory_bytes == 192 * GiB and g.memory_bandwidth_bytes_per_s == Fraction(53, 10) * T
    assert g.intra_node_bandwidth_bytes_per_s == 7 * 128 * 10**9 / 2  # 7 links of 128 GB/s both ways together
    assert g.achieved("bf16") == Fraction(6684, 10) * T and g.gemm.shape == (10240, 15360, 8192)
    assert g.achieved_memory_bandwidth_bytes_per_s == 4058 * 10**9  # gpu-stream scale kernel
    with pytest.raises(InputError, match=r"'fp8' has no measured GEMM rate on mi300x"):
        g.achieved("fp8")


def test_rtx4090_against_the_ada_whitepaper():
    g = load_gpu("rtx-4090")
    # Ada whitepaper: FP16/BF16 tensor with FP32 accumulate 165.2 (with FP16 accumulate 330.3: twice as fast),
    # TF32 82.6, FP32 82.6; 24 GB GDDR6X, 384-bit at 21 Gbps
    assert g.peak_flops == {"fp32": Fraction(826, 10) * T, "tf32": Fraction(826, 10) * T,
                            "bf16": Fraction(1652, 10) * T, "fp16": Fraction(1652, 10) * T}
    assert abs(2 * g.peak("fp16") - Fraction(3303, 10) * T) <= Fraction(1, 10) * T
    assert g.memory_bandwidth_bytes_per_s == 384 * 21 * 10**9 // 8 == 1008 * 10**9
    assert g.sms == 128 and g.form == "workstation" and g.memory_bytes == 24 * GiB
    assert g.intra_node_bandwidth_bytes_per_s == 16 * 10**9 * 16 // 8  # PCIe 4.0 x16, per direction
    assert any("half the FP16-accumulate rate" in n for n in g.notes)
    with pytest.raises(InputError, match=r"'fp8' has no peak on rtx-4090"):
        g.peak("fp8")


# -- names and dtypes -----------------------------------------------------------------------------


def test_names_are_case_insensitive_with_aliases_and_a_did_you_mean():
    assert load_gpu("H100_SXM").name == load_gpu("h100-sxm5").name == "h100-sxm"
    assert load_gpu(" RTX 4090 ").name == "rtx-4090"
    with pytest.raises(UnknownNameError, match=r"unknown GPU 'b300'; did you mean 'b200'\?") as info:
        load_gpu("b300")
    assert info.value.choices == GPU_NAMES
    with pytest.raises(InputError, match=r"'H100' names several GPUs; choose one of h100-sxm, h100-pcie"):
        load_gpu("H100")


def test_dtypes_take_aliases_and_refuse_what_is_not_there():
    g = load_gpu("a100-80gb")
    assert g.peak("bfloat16") == g.peak("BF16") == g.peak("bf16")
    assert g.peak("half") == g.peak("float16") == g.peak("fp16")
    assert g.peak("float32") == g.peak("fp32") and g.peak("TF32") == 156 * T
    assert [resolve_dtype(d) for d in ("e4m3", "double", "tensorfloat32")] == ["fp8", "fp64", "tf32"]
    with pytest.raises(InputError, match=r"'int8' is an integer dtype: its operations are not FLOPs"):
        g.peak("int8")
    with pytest.raises(UnknownNameError, match=r"unknown dtype 'bf61'; did you mean 'bf16'\?"):
        g.peak("bf61")
    with pytest.raises(InputError, match=r"'tf32' has no measured GEMM rate on a100-80gb; measured: bf16, fp16"):
        g.achieved("tf32")
    with pytest.raises(InputError, match=r"'fp8' has no peak on a100-80gb \(NVIDIA A100 SXM4 80GB\)"):
        g.peak("fp8")


def test_to_dict_is_json_native_with_si_keys():
    import json

    d = load_gpu("a100-80gb").to_dict()
    json.dumps(d, allow_nan=False)
    assert d["memory_bytes"] == 80 * GiB and d["peak_flops_per_s"]["bf16"] == 312 * T
    assert d["gemm"]["achieved_flops_per_s"]["bf16"] == 264.53e12 and d["gemm"]["shape"] == [8192, 8192, 8192]
    assert d["intra_node_latency_s"] == 2.466e-6 and d["network_channels"] == 8
    assert d["attention_flops_per_s"] == {"bf16": 156e12, "fp16": 156e12}
    assert d["launch_s"] == 2.555e-6 and d["memory_efficiency"] == 1737 / 2039
    assert d["sources"]["peak_flops.bf16"]["key"] == "nvidia-a100"


# -- files ----------------------------------------------------------------------------------------


def _write(tmp_path: Path, text: str, name: str = "my.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_file_starts_from_a_preset_and_overrides_key_by_key(tmp_path):
    path = _write(tmp_path, 'base = "a100-80gb"\nnotes = ["measured on node 17"]\n\n'
                            '[launch]\nvalue = "4 us"\nlocator = "torch.cuda.Event"\n\n'
                            '[gemm.achieved.bf16]\nvalue = "280T"\nshape = [8192, 8192, 8192]\n'
                            'source = "bekman-ml-engineering"\nlocator = "mamf-finder on our node"\n\n'
                            '[peak_flops]\nfp8 = { value = "624T", source = "my notes" }\n', name="calib.toml")
    g = load_gpu(path)
    preset = load_gpu("a100-80gb")
    assert (g.name, g.base, g.path) == ("calib", "a100-80gb", path)
    assert g.launch_s == Fraction(4, 10**6) and g.achieved("bf16") == 280 * T
    assert g.gemm.shape == (8192, 8192, 8192) and g.gemm.shapes["fp16"] == preset.gemm.shapes["fp16"]
    assert g.peak("fp8") == 624 * T and g.peak("bf16") == preset.peak("bf16")
    assert g.notes == (*preset.notes, "measured on node 17")
    # a value without a citation key has the file as its source; a key keeps its citation; the rest inherit
    assert is_file_source(g.sources["launch_s"]) and g.sources["launch_s"].locator == "torch.cuda.Event"
    assert g.sources["peak_flops.fp8"].locator == "my notes"
    assert g.sources["gemm.achieved_flops.bf16"].citation.key == "bekman-ml-engineering"
    assert g.sources["sms"] == preset.sources["sms"]
    assert g.to_dict()["sources"]["launch_s"] == {"key": "file", "reference": path, "locator": "torch.cuda.Event"}
    assert isinstance(g, GPU) and g.title == "NVIDIA A100 SXM4 80GB (calib.toml)"


def _doc_examples() -> list[str]:
    page = (ROOT / "docs" / "reference" / "gpus.md").read_text(encoding="utf-8")
    return re.findall(r"```toml\n(.*?)```", page, flags=re.DOTALL)


def test_the_documented_files_load(tmp_path):
    complete, based = _doc_examples()
    g = parse_gpu(complete, path="my-a100-pcie.toml")
    assert (g.name, g.form, g.sms, g.achieved("bf16")) == ("a100-pcie-80gb", "pcie", 108, Fraction(2529, 10) * T)
    assert g.memory_bandwidth_bytes_per_s == 1935 * 10**9 and g.memory_efficiency == Fraction(85, 100)
    assert is_file_source(g.sources["launch_s"]) and not is_file_source(g.sources["sms"])
    assert "base" not in complete
    h = parse_gpu(based, path="my-h100.toml")
    assert (h.name, h.base, h.launch_s, h.achieved("bf16")) == ("my-h100", "h100-sxm", Fraction(31, 10**7), 760 * T)
    assert h.sources["gemm.achieved_flops.bf16"].locator.startswith("mamf-finder.py")
    # the error the page shows is the one a typo in the complete file gives
    page = (ROOT / "docs" / "reference" / "gpus.md").read_text(encoding="utf-8")
    shown = re.search(r"error: (my-a100-pcie\.toml:\d+: unknown key 'valeu'.*)", page).group(1)
    with pytest.raises(ParseError) as info:
        parse_gpu(complete.replace('value = "2.6 us"', 'valeu = "2.6 us"'), path="my-a100-pcie.toml")
    assert str(info.value) == shown


def _error(text: str, path: str = "g.toml") -> str:
    with pytest.raises(ParseError) as info:
        parse_gpu(text, path=path)
    return str(info.value)


BASE = 'base = "h100-sxm"\n'

BAD = [
    # typos: refused with the line and a did-you-mean
    (BASE + 'lanuch = "3 us"\n', "g.toml:2: unknown key 'lanuch' in the top level; did you mean 'launch'?"),
    (BASE + '[sms]\nvalu = 100\n', "g.toml:3: unknown key 'valu' in [sms]; did you mean 'value'?"),
    (BASE + '[gemm.tiles]\nvalue = [1, 2]\n', "g.toml:2: unknown key 'tiles' in [gemm]; did you mean 'tile'?"),
    (BASE + '[peak_flops.bf61]\nvalue = "1T"\n', "g.toml:2: peak_flops: unknown dtype 'bf61'; did you mean"),
    (BASE + '[gemm.achieved.bf16]\nvalue = "1T"\nshape = [1, 1, 1]\nsorce = "x"\n',
     "g.toml:5: unknown key 'sorce' in [gemm.achieved.bf16]; did you mean 'source'?"),
    # bad numbers
    (BASE + 'sms = 0\n', "g.toml:2: sms = 0 is not a whole number >= 1"),
    (BASE + '[sms]\nvalue = 1.5\n', "g.toml:3: sms = 1.5 is not a whole number >= 1"),
    (BASE + 'memory = "80 KB"\n', "memory: '80 KB' is ambiguous"),
    (BASE + 'memory = "-80 GiB"\n', "memory: '-80 GiB' is negative"),
    (BASE + 'memory_bandwidth = 3000\n', "memory_bandwidth = 3000 has no unit"),
    (BASE + 'memory_bandwidth = "3 TB"\n', "memory_bandwidth: '3 TB' is a size, not a rate"),
    (BASE + 'memory_efficiency = 1.2\n', "memory_efficiency: 1.2 is not a share"),
    (BASE + 'memory_efficiency = "0"\n', "memory_efficiency: '0' is not a share"),
    (BASE + 'launch = "0 s"\n', "launch: '0 s' is zero"),
    (BASE + 'launch = "2 MB"\n', "launch: '2 MB' is a size, not a time"),
    (BASE + '[gemm.tile]\nvalue = [128]\n', "g.toml:3: gemm.tile = [128] is not a list of 2 whole numbers"),
    (BASE + '[gemm.k_overhead]\nvalue = -1\n', "gemm.k_overhead = -1 is not a whole number >= 0"),
    (BASE + '[gemm.achieved.bf16]\nvalue = "700T"\n', "[gemm.achieved.bf16] has no shape"),
    (BASE + '[gemm.achieved.bf16]\nvalue = "700T"\nshape = [1, 0, 1]\n', "is not a list of 3 whole numbers"),
    (BASE + '[peak_flops.bf16]\nvalue = "-1T"\n', "peak_flops.bf16: '-1T' is negative"),
    (BASE + '[peak_flops.bf16]\nvalue = "989 GB"\n', "peak_flops.bf16: '989 GB' is a size, not a count"),
    (BASE + '[peak_flops]\nbf16 = "1T"\nbfloat16 = "2T"\n', "'bfloat16' and 'bf16' are both bf16; keep one"),
    (BASE + 'vendor = "intel"\n', "g.toml:2: vendor = 'intel' is not one of nvidia, amd"),
    (BASE + 'form = "mxm"\n', "form = 'mxm' is not one of sxm, pcie, oam, workstation"),
    (BASE + 'name = "My GPU"\n', "name = 'My GPU' is not a GPU name"),
    (BASE + 'notes = "x"\n', "notes must be a list of strings"),
    (BASE + '[sms]\nvalue = 100\nsource = "nvidia-h10"\n', "source 'nvidia-h10' is not a citation key; did you mean"),
    # a measured rate above the peak, from the file or from the preset it lowers
    (BASE + '[gemm.achieved.bf16]\nvalue = "1000T"\nshape = [1, 1, 1]\n',
     "g.toml:3: gemm.achieved.bf16 = 1 PFLOP/s is above peak_flops.bf16 = 989.5 TFLOP/s"),
    (BASE + '[peak_flops.bf16]\nvalue = "500T"\n', "g.toml:3: gemm.achieved.bf16 = 713.2 TFLOP/s is above"),
    # memory-bound kernels by kind
    (BASE + '[memory_kernels.layernorm]\nvalue = 0.5\n',
     "g.toml:2: unknown key 'layernorm' in [memory_kernels]; did you mean 'norm'?"),
    (BASE + '[memory_kernels.gemm]\nvalue = 0.5\n',
     "g.toml:2: unknown key 'gemm' in [memory_kernels]; expected norm, softmax, dropout, activation"),
    (BASE + '[memory_kernels]\nsoftmx = 0.5\n', "g.toml:3: unknown key 'softmx' in [memory_kernels]; did you "
                                               "mean 'softmax'?"),
    (BASE + '[memory_kernels]\nnorm = 1.5\n', "g.toml:3: memory_kernels.norm: 1.5 is not a share"),
    (BASE + 'memory_kernels = 0.5\n', "g.toml:2: memory_kernels must be a table of kinds"),
    # files
    ('base = "h100-sxm.toml"\n', "g.toml:1: base = 'h100-sxm.toml' is a file; base names a preset"),
    ('name = "x"\n', "g.toml: missing vendor, form, intra_node_link, network, sms, memory, memory_bandwidth"),
    ('a = 1\nb = ?\n', "g.toml:2: invalid TOML"),
    ('base = "h200"\n[attention.k_overhead]\nvalue = -3\n',
     "g.toml:3: attention.k_overhead = -3 is not a whole number of keys in [0, 1048576]"),
    ('base = "h200"\n[attention.achieved.bf16]\nvalue = "300T"\nshape = [1, 32, 2048]\n',
     "g.toml:4: attention.achieved.bf16.shape"),
    ('base = "h200"\n[attention.curve]\nvalue = 1\n', "g.toml:2: unknown key 'curve' in [attention]; expected achieved, k_overhead"),
]


@pytest.mark.parametrize(("text", "needle"), BAD, ids=[n[:50] for _, n in BAD])
def test_bad_files_are_refused_with_their_line(text, needle):
    assert needle in _error(text)


def test_a_measured_dtype_without_a_peak_is_refused(tmp_path):
    text = 'base = "a100-80gb"\n[gemm.achieved.fp8]\nvalue = "1T"\nshape = [1, 1, 1]\n'
    assert "gemm.achieved.fp8 has no peak to compare with; add [peak_flops.fp8]" in _error(text)


def test_an_unknown_base_and_a_preset_with_a_bad_source_are_refused():
    with pytest.raises(UnknownNameError, match=r"unknown GPU 'h100-sxn'; did you mean 'h100-sxm'\?"):
        parse_gpu('base = "h100-sxn"\n', path="g.toml")
    # in a preset a source must be a citation key: a typo there is no free text
    preset = (PRESETS / "h100-sxm.toml").read_text(encoding="utf-8").replace('"nvidia-dgx-h100"', '"nvidia-dgx"', 1)
    with pytest.raises(ParseError, match=r"<preset h100-sxm>:\d+: gpus_per_node: source 'nvidia-dgx' is not a key"):
        parse_gpu(preset, path="<preset h100-sxm>")


def test_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(ParseError, match=r"nope\.toml: cannot read the GPU file"):
        load_gpu(tmp_path / "nope.toml")
    with pytest.raises(ParseError, match=r"a folder, not a regular file"):
        load_gpu(str(tmp_path) + "/")


# -- memory against a GPU's capacity --------------------------------------------------------------


def test_memory_fit_counts_the_report_per_gpu():
    # 7B bf16 weights: 14 GB on a 40 GiB A100 fit, 40 × 2^30 − 14e9 left
    fit = memory_fit(training_memory("7B", dtype="bf16"), "a100-40gb")
    assert fit.fits and fit.required_bytes == 14 * 10**9 and fit.free_bytes == 40 * GiB - 14 * 10**9
    assert fit.excess_bytes == 0 and fit.counted == ("weights per GPU",)
    # ZeRO stage 0, mixed-precision Adam: 16 bytes × 7.5e9 = 120 GB on an 80 GiB A100
    report = training_memory("7.5B", dp=8, zero=0, gpu="a100-80gb")
    assert report.fit is not None and not report.fit.fits
    assert report.fit.excess_bytes == 120 * 10**9 - 80 * GiB and report.fit.free_bytes == 0
    assert report.to_dict()["gpu_fit"]["excess_bytes"] == 120 * 10**9 - 80 * GiB
    # activations: of one layer without --layers (and a note), of all with it: 2sbh per layer with full recompute
    one = training_memory(seq=2048, batch=1, hidden=4096, heads=32, recompute="full", gpu="h100-sxm").fit
    assert one is not None and one.required_bytes == 2 * 2048 * 4096 and one.counted == ("activations of 1 layer",)
    assert any("one layer only" in n for n in one.notes)
    many = training_memory(seq=2048, batch=1, hidden=4096, heads=32, recompute="full", layers=32, gpu="h100-sxm")
    assert many.fit is not None and many.fit.required_bytes == 32 * 2 * 2048 * 4096
    assert training_memory("7B").fit is None and training_memory("7B").to_dict()["gpu_fit"] is None


@pytest.mark.parametrize("name", sorted(FITTED))
def test_a_fitted_nodes_latency_and_busbw_are_its_profiles_link(name):
    """[intra_node_latency] and [intra_node_busbw] are the [link] of the profile fitted on the same log, to the
    four digits the preset writes."""
    from costmodel.profiles import load_profile
    from costmodel.units import format_rate, format_time

    g = load_gpu(name)
    link = load_profile(g.intra_node_profile).link
    assert format_time(link.alpha_s) == format_time(g.intra_node_latency_s)
    assert format_rate(1 / link.beta_s_per_byte) == format_rate(g.intra_node_busbw_bytes_per_s)


def test_a_gpu_file_names_a_profile_or_a_file_beside_it(tmp_path, monkeypatch):
    beside = tmp_path / "node.toml"
    beside.write_text((Path(__file__).resolve().parents[3] / "costmodel" / "profiles" / "a100-nvswitch.toml")
                      .read_text(encoding="utf-8"), encoding="utf-8")
    mine = tmp_path / "mine.toml"
    mine.write_text('base = "h100-sxm"\nintra_node_profile = "node.toml"\n', encoding="utf-8")
    assert load_gpu(mine).intra_node_profile == str(beside)
    (tmp_path / "node").write_text(beside.read_text(encoding="utf-8"), encoding="utf-8")
    mine.write_text('base = "h100-sxm"\nintra_node_profile = "node"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    from costmodel.profiles import load_profile

    assert load_profile(load_gpu("mine.toml").intra_node_profile).name == "a100-nvswitch"
    assert load_gpu(mine).sources["intra_node_profile"].citation.key == "file"
    (tmp_path / "notes.txt").write_text("not a profile\n", encoding="utf-8")
    for value, needle in (('"a100-nvswitc"', "is not a profile (did you mean 'a100-nvswitch'?)"),
                          ('"missing.toml"', "no file"), ("3", "is not a profile's name or file"),
                          ('"notes.txt"', "notes.txt': "), ('"mine.toml"', "unknown table 'base'")):
        mine.write_text(f'base = "h100-sxm"\nintra_node_profile = {value}\n', encoding="utf-8")
        with pytest.raises(ParseError, match=r"mine\.toml:2: intra_node_profile = .*" + re.escape(needle)):
            load_gpu(mine)


def test_a_kind_of_memory_bound_kernel_moves_at_its_own_share(tmp_path):
    """[memory_kernels.KIND] gives one kind its share of the datasheet bandwidth; the others keep the copy's
    (or the base's own share). The file's value and source show in the JSON and in costmodel gpus."""
    path = _write(tmp_path, 'base = "mi300x"\n[memory_kernels.dropout]\nvalue = "1/2"\nsource = "our bench"\n'
                            'locator = "F.dropout"\n[memory_kernels]\nnorm = 0.6\n')
    g = load_gpu(path)
    assert g.memory_kernels == {"dropout": Fraction(1, 2), "norm": Fraction(3, 5)}
    assert g.kernel_bandwidth("dropout") == 5300 * 10**9 / 2
    assert g.kernel_bandwidth("softmax") == g.kernel_bandwidth("") == g.achieved_memory_bandwidth_bytes_per_s
    assert g.to_dict()["memory_kernels"] == {"dropout": 0.5, "norm": 0.6}
    assert g.sources["memory_kernels.dropout"].locator == "our bench; F.dropout"
    assert list(g.memory_kernels) == ["norm", "dropout"]  # in the order of MEMORY_KERNELS, sources too
    assert list(g.sources).index("memory_kernels.norm") < list(g.sources).index("memory_kernels.dropout")
    assert load_gpu("mi300x").memory_kernels == {}
    # on a base with shares of its own (the NVIDIA presets' proxy), a file changes the kinds it gives
    a100 = load_gpu(_write(tmp_path, 'base = "a100-80gb"\n[memory_kernels]\nnorm = 0.6\n', "b.toml"))
    assert a100.memory_kernels == {**load_gpu("a100-80gb").memory_kernels, "norm": Fraction(3, 5)}
