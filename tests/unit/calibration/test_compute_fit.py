"""The GEMM-curve fit of ``calibrate compute`` on synthetic products, and the compute profile it writes.

The synthetic times come from the model of the step's rates layer, written out again here from its
definition (tiles of tm × tn over the SMs, waves, split-k below one wave, K0 added to k; the larger of
math and memory, plus the launch), not from the module under test.  Nothing here needs PyTorch.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest

from costmodel.calibration.compute import (
    K0_MAX,
    ComputeConfig,
    ComputeMeasurements,
    GemmMeasurement,
    GemmShape,
    KernelMeasurement,
    calibrate_compute,
    choose_base,
    compute_calibration,
    fit_gemm,
    guess_base,
    sweep_shapes,
)
from costmodel.errors import InputError
from costmodel.gpus import load_gpu, parse_gpu
from costmodel.gpus.curve import MIN_SPLIT_K, product_time
from costmodel.step.rates import Rates


def model(m, n, k, batch=1, *, sms, tile, plateau, k0, bandwidth=None, launch=0, element=2):
    """The time of one product, from the model's definition (exact with Fraction inputs)."""
    times = []
    for tm, tn in {tuple(tile), tuple(tile)[::-1]}:
        tiles = math.ceil(m / tm) * math.ceil(n / tn) * batch
        splits = max(1, min(sms // tiles, k // 256)) if tiles < sms else 1
        waves = math.ceil(tiles * splits / sms)
        # each SM runs at P/sms; a tile computes 2·tm·tn FLOPs per unit of k, for k/splits + K0 of k
        times.append(waves * 2 * tm * tn * (Fraction(k, splits) + k0) / (Fraction(plateau) / sms))
    t = min(times)
    if bandwidth is not None:
        t = max(t, Fraction(batch * element * (m * k + k * n + m * n)) / Fraction(bandwidth))
    return t + Fraction(launch)


# an A100-like GPU: 108 SMs, 256 × 128 tiles; the shapes a calibration measures
A100 = {"sms": 108, "tile": (256, 128)}
SHAPES = [
    *((s, s, s, 1) for s in (1024, 2048, 4096, 8192)),
    *((8192, 8192, k, 1) for k in (64, 128, 256, 512, 1024, 2048)),
    (4096, 12288, 4096, 1), (4096, 4096, 4096 * 4, 1), (12288, 4096, 4096, 1),  # QKV, FFN out, a wgrad
    (2048, 2048, 128, 64), (2048, 128, 2048, 64),  # unfused attention: scores and context, 64 heads
    (100, 200, 300, 1),  # fewer tiles than SMs: split-k
]


def rows(shapes, **machine):
    return [(*s, model(*s, **machine)) for s in shapes]


@pytest.mark.parametrize(("plateau", "k0", "geometry"), [
    (Fraction(250 * 10**12), 128, A100),
    (Fraction(760 * 10**12), 192, {"sms": 132, "tile": (128, 256)}),  # H100-like
    (Fraction(3 * 10**11), 0, {"sms": 16, "tile": (1, 1)}),  # a CPU pseudo-GPU without overhead
    (Fraction(10**12), K0_MAX, {"sms": 8, "tile": (64, 64)}),
])
def test_exact_rows_give_back_k0_and_the_plateau_exactly(plateau, k0, geometry):
    fit = fit_gemm(rows(SHAPES, plateau=plateau, k0=k0, **geometry), **geometry)
    assert fit.k_overhead == k0
    assert fit.plateau_flops_per_s == plateau  # exact: Fraction times, the curve through the fastest row
    assert fit.median_rel_error < 1e-12
    assert all(abs(r.rel_error) < 1e-12 for r in fit.rows)


def test_the_achieved_point_is_the_fastest_unbatched_row():
    data = rows(SHAPES, plateau=250e12, k0=128, **A100)
    fit = fit_gemm(data, **A100)
    rate = {tuple(s): Fraction(2 * s[0] * s[1] * s[2] * s[3]) / t for *s, t in data}
    unbatched = {s: r for s, r in rate.items() if s[3] == 1}
    best = max(unbatched, key=unbatched.get)
    assert fit.achieved_shape == best[:3] and fit.achieved_flops_per_s == unbatched[best]
    assert data[fit.achieved_row][:3] == best[:3]
    # a batched product may run faster; the file's gemm.achieved is one m×n×k product all the same
    faster = [(4096, 4096, 4096, 16, data[0][4])]
    assert fit_gemm([*faster, *data], **A100).achieved_shape == best[:3]


def test_memory_term_and_launch_are_priced_and_k0_still_found():
    """With a launch the curve through the fastest product (launch included, as the rates layer reads
    gemm.achieved) runs that little slower: K0 within 2 of the truth, P within 0.1 %, errors < 1 %."""
    machine = {"plateau": Fraction(250 * 10**12), "k0": 128, "bandwidth": Fraction(10**12),
               "launch": Fraction(2555, 10**12), **A100}
    data = rows([*SHAPES, (8192, 8192, 8, 1)], **machine)
    fit = fit_gemm(data, bandwidth=machine["bandwidth"], launch=machine["launch"], **A100)
    assert abs(fit.k_overhead - 128) <= 2
    assert fit.plateau_flops_per_s == pytest.approx(250e12, rel=1e-3)
    assert fit.median_rel_error < 0.01
    # k = 8 moves 2 bytes of C per 2·(8 + 128) FLOPs: memory-bound at 1 TB/s (134 µs against 73 µs)
    thin = fit.rows[-1]
    assert thin.bound == "memory" and thin.bound != fit.rows[0].bound
    assert thin.model_time_s == pytest.approx(2 * (2 * 8192 * 8 + 8192**2) / 1e12 + 2555e-12, rel=1e-12)


def test_the_plateau_is_capped_at_the_peak():
    data = rows(SHAPES, plateau=300e12, k0=128, **A100)
    fit = fit_gemm(data, peak=200e12, **A100)
    assert fit.capped and fit.plateau_flops_per_s == 200 * 10**12
    assert any("capped at the peak" in w for w in fit.warnings)


def test_k0_at_the_end_of_the_grid_is_warned():
    fit = fit_gemm(rows(SHAPES, plateau=1e12, k0=K0_MAX + 500, sms=8, tile=(64, 64)), sms=8, tile=(64, 64))
    assert fit.k_overhead == K0_MAX and any("end of the grid" in w for w in fit.warnings)


def test_model_time_is_the_rates_layers():
    """The curve the fit prices with is the rates layer's, shape by shape, and the definition's."""
    assert MIN_SPLIT_K == 256
    plateau, bandwidth, launch = Fraction(250 * 10**12), Fraction(1737 * 10**9), Fraction(2555, 10**12)
    rates = Rates(name="x", peak=Fraction(312 * 10**12), plateau=plateau, sms=108, tile=(256, 128),
                  k_overhead=128, bandwidth=bandwidth, launch=launch, attention=plateau, element=Fraction(2))
    for m, n, k, b in [*SHAPES, (1, 1, 1, 1), (300, 7, 9000, 3), (128, 256, 4096, 1)]:
        ours = product_time(m, n, k, b, sms=108, tile=(256, 128), plateau=plateau, k_overhead=128,
                               bandwidth=bandwidth, launch=launch, element=2)
        assert ours == rates.gemm(m, n, k, batch=b)
        assert ours == model(m, n, k, b, plateau=plateau, k0=128, bandwidth=bandwidth, launch=launch, **A100)


BAD_ROWS = [
    ([], "0 rows cannot fit"),
    ([(1024, 1024, 1024, 1, 1e-3), (1024, 1024, 512, 1, 6e-4)], "2 rows cannot fit"),
    ([(1024, 1024, 1024, 1, 1e-3)] * 3, "every row has k=1024"),
    ([(1024, 1024, k, 2, 1e-3) for k in (256, 512, 1024)], "no row has batch=1"),
    ([(0, 1024, 1024, 1, 1e-3)], "row 1: m=0 is not a whole number >= 1"),
    ([(1024, 1024.0, 1024, 1, 1e-3)], "n=1024.0 is not a whole number"),
    ([(1024, 1024, True, 1, 1e-3)], "k=True is not a whole number"),
    ([(1024, 1024, 1024, 0, 1e-3)], "batch=0 is not a whole number"),
    ([(8, 8, 8, 1, 1e-3), (8, 8, 8, 1, 0)], "row 2: seconds=0 is not a positive finite time"),
    ([(8, 8, 8, 1, -1e-3)], "seconds=-0.001"),
    ([(8, 8, 8, 1, math.nan)], "seconds=nan"),
    ([(8, 8, 8, 1, math.inf)], "seconds=inf"),
    ([(8, 8, 8, 1, "1ms")], "seconds='1ms'"),
    ([(8, 8, 8, 1)], "is not (m, n, k, batch, seconds)"),
    (["8x8x8"], "is not (m, n, k, batch, seconds)"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_ROWS, ids=[m for _, m in BAD_ROWS])
def test_bad_rows_are_refused(bad, message):
    with pytest.raises(InputError) as info:
        fit_gemm(bad, **A100)
    assert message in str(info.value)


GOOD = rows(SHAPES[:6], plateau=250e12, k0=128, **A100)


@pytest.mark.parametrize(("machine", "message"), [
    ({"sms": 0, "tile": (256, 128)}, "sms=0"),
    ({"sms": 108, "tile": (256, 0)}, "tile=(256, 0) is not two whole numbers"),
    ({"sms": 108, "tile": (256,)}, "tile=(256,)"),
    ({**A100, "peak": 0}, "peak=0 is not a positive finite rate"),
    ({**A100, "bandwidth": -1.0}, "bandwidth=-1.0"),
    ({**A100, "launch": -1e-6}, "launch=-1e-06 is not a time >= 0"),
    ({**A100, "element": 0}, "element=0"),
])
def test_bad_machines_are_refused(machine, message):
    with pytest.raises(InputError) as info:
        fit_gemm(GOOD, **machine)
    assert message in str(info.value)


# -- the profile written from measurements -----------------------------------------------------------


def measurements(shapes, *, plateau, k0, sms, tile, bandwidth, launch, device="cuda:0", dtype="bf16"):
    gemms = tuple(GemmMeasurement(shape=GemmShape(m=m, n=n, k=k, batch=b, label="x"),
                                  time_s=float(model(m, n, k, b, plateau=plateau, k0=k0, sms=sms, tile=tile,
                                                     bandwidth=bandwidth, launch=launch)),
                                  calls=10, samples=20) for m, n, k, b in shapes)
    copy_bytes = 2 << 30
    return ComputeMeasurements(
        device=device, device_name="NVIDIA A100-SXM4-80GB" if device != "cpu" else "a test CPU", dtype=dtype,
        threads=None if device != "cpu" else sms, torch_version="2.5.1", accelerator="CUDA 12.4",
        measured_at="2025-01-02T03:04:05Z", gemms=gemms, copy_bytes=copy_bytes,
        copy_s=copy_bytes / float(bandwidth), launch_s=float(launch), launch_calls=1000, planned=len(gemms),
        elapsed_s=12.0, limit_s=120.0)


def test_the_profile_loads_and_step_prices_with_the_fitted_curve(tmp_path):
    """What is written is read back by load_gpu, and the rates layer then solves the fitted plateau."""
    launch, bandwidth = Fraction(2600, 10**12), Fraction(1700 * 10**9)
    measured = measurements(SHAPES, plateau=Fraction(240 * 10**12), k0=160, bandwidth=bandwidth, launch=launch,
                            **A100)
    calibration = compute_calibration(measured, base="a100-80gb")
    path = tmp_path / "a100.toml"
    path.write_text(calibration.to_gpu_toml(), encoding="utf-8")
    gpu = load_gpu(path)
    fit = calibration.fit
    assert (gpu.name, gpu.base) == ("a100-80gb-calibrated", "a100-80gb")
    assert gpu.gemm.k_overhead == fit.k_overhead == calibration.to_dict()["k_overhead"]
    assert gpu.gemm.shape_for("bf16") == fit.achieved_shape
    assert gpu.achieved("bf16") == round(fit.achieved_flops_per_s)
    assert (gpu.sms, gpu.gemm.tile) == (108, (256, 128))  # a GPU keeps its preset's geometry
    assert gpu.memory_efficiency == pytest.approx(1700 / 2039, rel=1e-6)
    assert gpu.launch_s == Fraction(2600, 10**12)
    assert gpu.peak("bf16") == load_gpu("a100-80gb").peak("bf16")  # the rest is the preset's
    rates = Rates.of(gpu, "bf16")
    assert float(rates.plateau) == pytest.approx(float(fit.plateau_flops_per_s), rel=1e-12)
    for (m, n, k, b), row in zip(SHAPES, fit.rows, strict=True):
        assert float(rates.gemm(m, n, k, batch=b)) == pytest.approx(row.model_time_s, rel=1e-9)
    for key in ("gemm.achieved_flops.bf16", "gemm.k_overhead", "memory_efficiency", "launch_s"):
        source = gpu.sources[key]
        assert source.citation.key == "file" and "costmodel calibrate compute" in source.locator
        assert "NVIDIA A100-SXM4-80GB (cuda:0), 2025-01-02T03:04:05Z, torch 2.5.1, CUDA 12.4" in source.locator
    assert gpu.sources["sms"].citation.key != "file"


def test_a_cpu_profile_is_a_pseudo_gpu_of_its_threads():
    measured = measurements(SHAPES[:8], plateau=Fraction(10**11), k0=32, sms=4, tile=(1, 1),
                            bandwidth=Fraction(20 * 10**9), launch=Fraction(3, 10**6), device="cpu",
                            dtype="fp32")
    calibration = compute_calibration(measured, base="h100-sxm", name="my-cpu")
    gpu = parse_gpu(calibration.to_gpu_toml(), path="cpu.toml")
    assert (gpu.name, gpu.sms, gpu.gemm.tile, gpu.gemm.k_overhead) == ("my-cpu", 4, (1, 1), 32)
    assert gpu.achieved("fp32") == round(calibration.fit.achieved_flops_per_s)
    assert gpu.achieved("bf16") == load_gpu("h100-sxm").achieved("bf16")
    # the share of the datasheet bandwidth that gives the CPU's: 20 GB/s of 3.35 TB/s
    assert gpu.achieved_memory_bandwidth_bytes_per_s == pytest.approx(20e9, rel=1e-5)
    assert any("a CPU dry run" in n for n in gpu.notes)


@pytest.mark.parametrize(("change", "message"), [
    ({"gemms": (), "stopped": "limit"}, "0 of 16 products were measured within the limit of 120 s: too few"),
    ({"gemms": ()}, "0 of 16 products were measured: too few to fit"),
    ({"copy_s": None}, "the run stopped before the copy was timed"),
])
def test_too_little_to_fit_is_a_calibration_error(change, message):
    from dataclasses import replace

    from costmodel.errors import CalibrationError

    measured = replace(measurements(SHAPES, plateau=2e14, k0=128, bandwidth=Fraction(1700 * 10**9),
                                    launch=Fraction(0), **A100), **change)
    with pytest.raises(CalibrationError, match=message):
        compute_calibration(measured, base="a100-80gb")


def test_an_interrupt_before_enough_was_measured_writes_nothing():
    from dataclasses import replace

    from costmodel.calibration.compute import ComputeInterrupted

    full = measurements(SHAPES, plateau=2e14, k0=128, bandwidth=Fraction(1700 * 10**9), launch=Fraction(0), **A100)
    with pytest.raises(ComputeInterrupted) as info:
        compute_calibration(replace(full, gemms=full.gemms[:2], stopped="interrupted"), base="a100-80gb")
    assert str(info.value) == "interrupted; 2 of 16 products measured, too few to fit (nothing written)"
    kept = compute_calibration(replace(full, gemms=full.gemms[:8], stopped="interrupted"), base="a100-80gb")
    assert "interrupted after 8 of 16 products; the fit uses those" in kept.warnings


def test_a_rate_above_the_base_peak_names_the_wrong_base():
    from costmodel.errors import CalibrationError

    measured = measurements(SHAPES, plateau=Fraction(700 * 10**12), k0=128, bandwidth=Fraction(3 * 10**12),
                            launch=Fraction(0), **A100)
    with pytest.raises(CalibrationError, match=r"above a100-80gb's bf16 peak of 312 TFLOP/s.*start the file from its own preset"):
        compute_calibration(measured, base="a100-80gb")


# -- inputs checked before anything is measured (no torch needed) ------------------------------------


@pytest.mark.parametrize(("name", "preset"), [
    ("NVIDIA H200", "h200"), ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H100 PCIe", "h100-pcie"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"), ("NVIDIA A100-SXM4-40GB", "a100-40gb"), ("NVIDIA B200", "b200"),
    ("AMD Instinct MI300X", "mi300x"), ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("NVIDIA A100 80GB PCIe", None), ("NVIDIA H100 NVL", None), ("NVIDIA L40S", None), ("Tesla V100-SXM2-16GB", None),
])
def test_guess_base(name, preset):
    assert guess_base(name) == preset
    if preset is not None:
        assert load_gpu(preset).name == preset


def test_choose_base_asks_for_one_where_none_can_be_guessed():
    assert choose_base("cuda:1", "NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert choose_base("cuda:0", "NVIDIA L40S", "rtx-4090") == "rtx-4090"
    with pytest.raises(InputError, match=r"^on a CPU there is no GPU to start from; pass base=PRESET \(a100-40gb"):
        choose_base("cpu", "AMD EPYC")
    with pytest.raises(InputError, match=r"^no preset is a 'NVIDIA L40S'; pass the closest as --base PRESET"):
        choose_base("cuda:0", "NVIDIA L40S", ask="--base PRESET")


def test_sweeps_have_several_k_and_stay_small_on_a_cpu():
    for gpu in (True, False):
        for quick in (True, False):
            shapes = sweep_shapes(gpu=gpu, quick=quick)
            assert len({s.k for s in shapes}) >= 4 and all(s.batch == 1 for s in shapes)
    assert max(s.flops for s in sweep_shapes(gpu=False)) == 2 * 1024**3


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"device": "gpu0"}, "device 'gpu0' is not a device; use auto, cpu, cuda or cuda:N"),
    ({"dtype": "fp8"}, "torch.mm has no fp8 product to time"),
    ({"dtype": "bf61"}, "did you mean 'bf16'?"),
    ({"limit_s": 0}, "limit_s=0 is not a positive number of seconds"),
    ({"limit_s": math.inf}, "limit_s=inf"),
    ({"shapes": [GemmShape(m=1, n=1, k=1)]}, "is not a tuple of GemmShape"),
])
def test_bad_configs_are_refused(kwargs, message):
    with pytest.raises(InputError) as info:
        ComputeConfig(**kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"m": 0, "n": 1, "k": 1}, "m=0 is not a whole number in [1, 16777216]"),
    ({"m": 1, "n": 1, "k": 1, "layout": "tt"}, "layout 'tt' is not one of nn, nt, tn"),
])
def test_bad_shapes_are_refused(kwargs, message):
    with pytest.raises(InputError) as info:
        GemmShape(**kwargs)
    assert message in str(info.value)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"base": "my.toml"}, "base 'my.toml' is not a preset"),
    ({"base": "a100-80gn"}, "did you mean 'a100-80gb'?"),
    ({"base": "a100-80gb", "name": "My GPU"}, "name 'My GPU' is not a GPU name"),
])
def test_calibrate_refuses_a_bad_base_or_name_before_measuring(kwargs, message):
    with pytest.raises(InputError) as info:
        calibrate_compute(ComputeConfig(), **kwargs)
    assert message in str(info.value)


def test_calibrate_compute_without_torch_is_one_line_with_the_install_command():
    from tests.hidden import run_without

    done = run_without("torch", "from costmodel.cli import main; "
                                "sys.argv = ['costmodel', 'calibrate', 'compute', '--base', 'a100-80gb']; "
                                "sys.exit(main())")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: calibrate compute needs PyTorch")
    assert "pip install 'costmodel-collectives[calibrate]'" in done.stderr


def test_memory_kernels_are_shares_of_the_datasheet_that_step_prices_with():
    """Each kind timed is written as its share of the base's datasheet bandwidth (capped at 1, with a
    warning), with what ran in the locator; the rates layer then moves that kind's bytes at it."""
    launch, bandwidth = Fraction(2600, 10**12), Fraction(1700 * 10**9)
    measured = measurements(SHAPES, plateau=Fraction(240 * 10**12), k0=160, bandwidth=bandwidth, launch=launch,
                            **A100)
    norm = KernelMeasurement(kind="norm", shape=(32768, 2048), dtype="bf16", bytes=5 * 2 * 32768 * 2048,
                             time_s=5 * 2 * 32768 * 2048 / 1.1e12, calls=20, samples=20)
    dropout = KernelMeasurement(kind="dropout", shape=(32768, 2048), dtype="bf16", bytes=10 * 32768 * 2048,
                                time_s=10 * 32768 * 2048 / 2.5e12, calls=20, samples=20)  # above 2039 GB/s
    calibration = compute_calibration(dataclasses.replace(measured, kernels=(norm, dropout)), base="a100-80gb")
    assert calibration.memory_kernels == (("norm", Fraction("0.539480")), ("dropout", Fraction(1)))
    assert any("dropout kernels reached 2500 GB/s" in w and "capped at 1" in w for w in calibration.warnings)
    assert [k["share"] for k in calibration.to_dict()["memory_kernels"]] == [0.53948, 1]
    gpu = parse_gpu(calibration.to_gpu_toml(), path="a100.toml")
    # the kinds not measured keep the base's shares (the preset's proxy)
    assert gpu.memory_kernels == {**load_gpu("a100-80gb").memory_kernels, "norm": Fraction("0.53948"),
                                  "dropout": Fraction(1)}
    assert "F.layer_norm forward" in gpu.sources["memory_kernels.norm"].locator
    assert "memory_kernels.norm, memory_kernels.dropout" in calibration.notes[0]
    rates = Rates.of(gpu, "bf16")
    assert rates.memory(10**9, "norm") == Fraction(10**9) / (2039 * 10**9 * Fraction("0.53948")) + launch
    assert rates.memory(10**9, "softmax") == \
        Fraction(10**9) / (2039 * 10**9 * gpu.memory_kernels["softmax"]) + launch
    assert rates.memory(10**9) == Fraction(10**9) / (2039 * 10**9 * gpu.memory_efficiency) + launch


def test_calibrate_compute_times_every_kind_a_gpu_file_takes():
    """The kinds measured are the kinds a GPU file names and the step's operations carry, in one order."""
    from costmodel.calibration.compute import KERNELS
    from costmodel.gpus import MEMORY_KERNELS

    assert tuple(KERNELS) == MEMORY_KERNELS
