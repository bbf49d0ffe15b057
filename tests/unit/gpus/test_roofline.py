"""The roofline of a matrix product and its waves of tiles (costmodel.gpus.curve), and a product on a GPU
preset (costmodel.gpus.gemm_on_gpu).

Expected values are worked by hand: NVIDIA's Matrix Multiplication Background guide, section 2.3, gives
8192 × 128 × 8192 in fp16 an intensity of 124.1 FLOP/B against a V100's 125 TFLOP/s / 900 GB/s = 138.9;
the rest is 2·m·n·k over e·(m·k + k·n + m·n) and ⌈·⌉ of the tiles.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError, UnknownNameError
from costmodel.gpus import gemm_on_gpu, gpus_query, load_gpu, parse_gemm_shape
from costmodel.gpus.curve import compute_bound_rows, gemm_roofline, product_time, tile_waves

V100 = {"peak": 125 * 10**12, "bandwidth": 900 * 10**9}


def test_the_guides_example_is_memory_bound_on_a_v100():
    r = gemm_roofline(8192, 128, 8192, **V100)
    assert r.flops == 2 * 8192 * 128 * 8192
    assert r.n_bytes == 2 * (8192 * 8192 + 8192 * 128 + 128 * 8192)
    assert r.intensity_flops_per_byte == Fraction(4096, 33)  # 124.1
    assert r.ridge_flops_per_byte == Fraction(1250, 9)  # 138.9
    assert r.bound == "memory" and r.time_s == r.memory_s == Fraction(r.n_bytes, 900 * 10**9)
    assert r.attainable_flops_per_s == r.intensity_flops_per_byte * 900 * 10**9


def test_a_square_product_is_compute_bound_and_the_ridge_is_where_they_meet():
    r = gemm_roofline(4096, 4096, 4096, **V100)
    assert r.intensity_flops_per_byte == Fraction(4096, 3) and r.bound == "compute"
    assert r.time_s == r.math_s == Fraction(2 * 4096**3, 125 * 10**12)
    assert r.attainable_flops_per_s == 125 * 10**12
    # intensity exactly at the ridge counts as compute-bound: 2mnk = R·e·(mk + kn + mn) with m = n = k = 3R/... :
    # m = n = k = 6, e = 2 gives 432 / 216 = 2 FLOP/B; a ridge of 2 FLOP/B
    at = gemm_roofline(6, 6, 6, peak=2, bandwidth=1)
    assert at.intensity_flops_per_byte == at.ridge_flops_per_byte == 2 and at.bound == "compute"


def test_the_roofline_is_the_gemm_curve_with_one_sm_and_unit_tiles():
    for m, n, k in ((1, 4096, 4096), (512, 512, 8192), (8192, 8192, 8192)):
        r = gemm_roofline(m, n, k, batch=3, peak=989 * 10**12, bandwidth=3 * 10**12, element=1, output_bytes=2)
        assert r.time_s == product_time(m, n, k, 3, sms=1, tile=(1, 1), plateau=989 * 10**12, k_overhead=0,
                                        bandwidth=3 * 10**12, element=1, output_bytes=2)


@pytest.mark.parametrize(("n", "k", "element"), [(4096, 4096, 2), (8192, 28672, 2), (5120, 4096, 1),
                                                 (300, 300, 2), (280, 280, 2), (14336, 4096, 4)])
def test_the_fewest_compute_bound_rows_by_search(n, k, element):
    # the intensity 2mnk/(e(mk + kn + mn)) by hand, m counted up until it reaches the V100's ridge 1250/9
    ridge = Fraction(1250, 9)
    limit = Fraction(2 * n * k, element * (n + k))
    got = compute_bound_rows(n, k, element=element, **V100)
    if limit <= ridge:
        assert got is None
        return
    m = 1
    while Fraction(2 * m * n * k, element * (m * k + k * n + m * n)) < ridge:
        m += 1
    assert got == m
    assert gemm_roofline(m, n, k, element=element, **V100).bound == "compute"


@pytest.mark.parametrize(("product", "sms", "tile", "tiles", "waves"), [
    ((1664, 2048), 108, (256, 128), 7 * 16, 2),  # 112 tiles: one full wave of 108 and 4 more
    ((6912, 2048), 108, (256, 128), 27 * 16, 4),  # 432 = 4 × 108: no partial wave
    ((1, 1), 132, (128, 256), 1, 1),
    ((4096, 4096), 132, (128, 256), 32 * 16, 4),  # 512 tiles over 132 SMs: ⌈3.88⌉
])
def test_tiles_and_waves(product, sms, tile, tiles, waves):
    m, n = product
    w = tile_waves(m, n, sms=sms, tile=tile)
    assert (w.tiles, w.waves) == (tiles, waves)
    assert w.efficiency == Fraction(tiles, waves * sms)
    assert tile_waves(m, n, 2, sms=sms, tile=tile).tiles == 2 * tiles


@pytest.mark.parametrize(("call", "message"), [
    (lambda: gemm_roofline(0, 1, 1, **V100), "m=0"),
    (lambda: gemm_roofline(1, 1, 1, peak=0, bandwidth=1), "peak=0 is not positive"),
    (lambda: gemm_roofline(1, 1, 1, peak=1, bandwidth=-1), "bandwidth=-1 is not positive"),
    (lambda: tile_waves(1, 1, sms=0, tile=(1, 1)), "sms=0"),
    (lambda: compute_bound_rows(0, 1, **V100), "n=0"),
    (lambda: compute_bound_rows(1, 1, peak=-1, bandwidth=1), "peak=-1 is not positive"),
    (lambda: tile_waves(1, 1, sms=1, tile=(0, 1)), "tile_m=0"),
    (lambda: parse_gemm_shape("8192x128"), "is not a product shape"),
    (lambda: parse_gemm_shape("1x-1x1"), "is not a product shape"),
    (lambda: parse_gemm_shape("0x1x1"), "is not a product shape"),
    (lambda: gemm_on_gpu("a100-80gb", "1x1x1", dtype="fp8"), "'fp8' has no peak"),
    (lambda: gpus_query(None, gemm="1x1x1"), "needs a GPU"),
    (lambda: gpus_query("h100-sxm", dtype="fp8"), "is the dtype of a matrix product"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_a_product_on_a_preset():
    gpu = load_gpu("h100-sxm")
    r = gemm_on_gpu("h100-sxm", "8192×128×8192")  # the multiplication sign is accepted too
    assert (r.gpu, r.dtype, r.element_bytes) == ("h100-sxm", "bf16", 2)
    assert r.roofline.ridge_flops_per_byte == Fraction(989_500, 3_350)  # 989.5 TFLOP/s / 3.35 TB/s
    assert r.roofline.intensity_flops_per_byte == Fraction(4096, 33) and r.roofline.bound == "memory"
    # the H100's 128 × 256 tiles: ⌈8192/128⌉ × ⌈128/256⌉ = 64 tiles, one wave on 132 SMs
    assert (r.waves.tiles, r.waves.waves, r.waves.tile, r.waves.sms) == (64, 1, (128, 256), gpu.sms)
    # n = 128 caps the intensity at 2·128·8192 / (2·8320) = 126 < 295.4: no m is compute-bound
    assert r.compute_bound_rows is None
    assert gemm_on_gpu(gpu, "1x8192x8192").compute_bound_rows == compute_bound_rows(
        8192, 8192, peak=gpu.peak("bf16"), bandwidth=gpu.memory_bandwidth_bytes_per_s) == 319
    fp8 = gemm_on_gpu(gpu, (8192, 128, 8192), dtype="float8")
    assert fp8.element_bytes == 1 and fp8.roofline.intensity_flops_per_byte == Fraction(8192, 33)
    assert gpus_query("h100-sxm", gemm="1x1x1").dtype == "bf16"
    assert gpus_query().gpus and gpus_query("a100-80gb").name == "a100-80gb"
    with pytest.raises(UnknownNameError):
        gemm_on_gpu("h100-sxn", "1x1x1")
    d = r.to_dict()
    assert d["roofline"]["bound"] == "memory" and d["waves"]["tile"] == [128, 256]
