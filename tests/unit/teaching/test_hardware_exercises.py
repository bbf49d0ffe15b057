"""Exercises on MFU and HFU, the roofline and waves of a matrix product, bus bandwidth read backwards,
expert-parallel all-to-alls and tensor/sequence-parallel traffic (exercises/hardware.toml).

Every key is recomputed here for several students' variants, by hand (the closed forms in the comments:
Narayanan et al. 2021's equation (3), 2·m·n·k over the bytes, ⌈·⌉ of the tiles, S·factor/busbw, the
ring's and the pairwise all-to-all's α–β terms) with the GPU presets' numbers, and cross-checked through
another path of the library (``product_time``, ``busbw``, ``cost``), never read back from the example;
every formula slip the examples model is diagnosed, and right answers grade correct.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import cost
from costmodel.collectives.busbw import busbw
from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import load_bank
from costmodel.gpus import load_gpu
from costmodel.gpus.curve import product_time
from costmodel.params import LinkParams
from tests.bankchecks import right_answers_correct, slips_diagnosed

BANK = load_bank()
MINE = [e for e in BANK if e.path.endswith("/hardware.toml")]
SEEDS = (None, 1, 2, 3, 5, 8, 13, 21, 34)
PETA, TERA = 10**15, 10**12
WIDTH = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def test_the_file_covers_each_topic_three_times_or_more():
    topics = [e.topic for e in MINE]
    assert len(MINE) >= 15
    for topic in ("mfu-hfu", "roofline", "expert-parallel", "tensor-parallel"):
        assert topics.count(topic) >= 3, topic
    assert topics.count("roofline") == 4
    assert topics.count("bus-bandwidth") >= 2
    assert sum(e.topic == "bus-bandwidth" for e in BANK) >= 6
    assert all(e.source for e in MINE)
    for name in ("mfu-hfu", "gemm-roofline", "gemm-batch-threshold", "gemm-waves", "busbw-times", "moe-dispatch", "tp-sp-layer"):
        assert "Source" in (get(name).compute.__doc__ or "")


def test_the_bank_has_ninety_exercises_or_the_missing_half_is_elsewhere():
    # the target counts both halves of the bank; this file adds its share
    assert len(BANK) >= 68 + 15


# -- keys, recomputed per variant ------------------------------------------------------------------


def _flops(v: dict, *, recompute: bool) -> tuple[Fraction, Fraction]:
    """(model FLOPs, 6·N·tokens) of an iteration: Narayanan et al.'s equation (3), MHA, f = 4, no gate;
    with full recomputation the hardware count 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) instead."""
    b, s, layers, h, vocab = v["batch"], v["seq"], v["layers"], v["hidden"], v["vocab"]
    if recompute:
        count = 96 * b * s * layers * h * h * (1 + Fraction(s, 6 * h) + Fraction(vocab, 16 * layers * h))
    else:
        count = 72 * b * s * layers * h * h * (1 + Fraction(s, 6 * h) + Fraction(vocab, 12 * layers * h))
    n = layers * 12 * h * h + vocab * h  # attention 4h², MLP 8h² per layer; the output layer V·h
    return count, Fraction(6 * n * b * s)


@pytest.mark.parametrize("seed", SEEDS)
def test_mfu_keys(seed):
    one = BANK.get("mfu-from-iteration-time").variant(seed)
    v = one.values
    model, six_n = _flops(v, recompute=False)
    peak = load_gpu(v["gpu"]).peak("bf16")
    assert one.expected("six-n") == six_n / PETA
    assert one.expected("model-pflop") == model / PETA
    assert one.expected("mfu") == model / (v["time"] * v["gpus"] * peak)
    assert 0.25 < one.expected("mfu") < 0.7  # the parameters keep every variant plausible

    two = BANK.get("mfu-hfu-recompute").variant(seed)
    v = two.values
    model, _ = _flops(v, recompute=False)
    hardware, _ = _flops(v, recompute=True)
    peak = load_gpu(v["gpu"]).peak("bf16")
    assert two.expected("hardware-pflop") == hardware / PETA
    assert two.expected("hfu") == hardware / (v["time"] * v["gpus"] * peak)
    assert two.expected("mfu") == model / (v["time"] * v["gpus"] * peak)
    assert 0.25 < two.expected("mfu") < two.expected("hfu") < 0.9

    three = BANK.get("mfu-target-time").variant(seed)
    v = three.values
    model, _ = _flops(v, recompute=False)
    time = model / (v["target"] * v["gpus"] * load_gpu(v["gpu"]).peak("bf16"))
    assert three.expected("time-at-target") == time
    assert three.expected("tokens-per-s") == v["batch"] * v["seq"] / time


def test_mfu_by_hand_for_the_default():
    # 24 layers, h = 2048, V = 51200, B·s = 512 × 2048, 8 A100s (312 TFLOP/s) at 10 s:
    # 72·B·s·l·h²·(1 + 2048/12288 + 51200/589824) = 9.526 PFLOP; 9.526e15 / (10 × 8 × 312e12) = 0.3817
    v = BANK.get("mfu-from-iteration-time").variant()
    assert round(float(v.expected("model-pflop")), 3) == 9.526
    assert round(float(v.expected("mfu")), 4) == 0.3817


@pytest.mark.parametrize("seed", SEEDS)
def test_roofline_keys(seed):
    for exercise_id in ("gemm-intensity", "gemm-roofline-time"):
        v = BANK.get(exercise_id).variant(seed)
        m, n, k, e = v.values["m"], v.values["n"], v.values["k"], WIDTH[v.values["dtype"]]
        gpu = load_gpu(v.values["gpu"])
        peak, bandwidth = gpu.peak(v.values["dtype"]), gpu.memory_bandwidth_bytes_per_s
        moved = e * (m * k + k * n + m * n)
        intensity = Fraction(2 * m * n * k, moved)
        assert v.expected("intensity") == intensity
        assert v.expected("ridge") == peak / bandwidth
        assert v.expected("bound") == ("compute" if intensity >= peak / bandwidth else "memory")
        time = max(2 * m * n * k / peak, moved / bandwidth)
        assert v.expected("bytes") == moved and v.expected("time") == time
        # the GEMM curve with one SM, 1 × 1 tiles and no prologue is the plain roofline
        assert time == product_time(m, n, k, sms=1, tile=(1, 1), plateau=peak, k_overhead=0,
                                    bandwidth=bandwidth, element=e)
        assert v.expected("attainable") == min(peak, intensity * bandwidth) / TERA


def test_roofline_of_the_guides_example():
    # NVIDIA's guide, section 2.3: 8192 × 128 × 8192 in fp16 has 124.1 FLOP/B, memory-bound on a V100;
    # on an H100 SXM the ridge is 989.5 TFLOP/s / 3.35 TB/s = 295.4 FLOP/B: memory-bound too
    got = get("gemm-roofline").run().answers
    assert got["intensity"].value == Fraction(8192 * 128 * 8192, 8192 * 8192 + 2 * 8192 * 128)
    assert round(float(got["ridge"].value), 1) == 295.4 and got["bound"].value == "memory"


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_threshold_keys(seed):
    v = BANK.get("decode-batch-threshold").variant(seed)
    n, k, e = v.values["n"], v.values["k"], WIDTH[v.values["dtype"]]
    gpu = load_gpu(v.values["gpu"])
    ridge = gpu.peak(v.values["dtype"]) / gpu.memory_bandwidth_bytes_per_s
    assert v.expected("ridge") == ridge
    assert v.expected("intensity-one") == Fraction(2 * n * k, e * (k + k * n + n))
    m = 1  # counted up until the intensity reaches the ridge
    while Fraction(2 * m * n * k, e * (m * k + k * n + m * n)) < ridge:
        m += 1
    assert v.expected("rows") == m


@pytest.mark.parametrize("seed", SEEDS)
def test_wave_keys(seed):
    v = BANK.get("gemm-waves").variant(seed)
    m, n, sms, tm, tn = (v.values[x] for x in ("m", "n", "sms", "tile_m", "tile_n"))
    tiles = _ceil(m, tm) * _ceil(n, tn)
    waves = _ceil(tiles, sms)
    assert (v.expected("tiles"), v.expected("waves")) == (tiles, waves)
    assert v.expected("efficiency") == Fraction(tiles, waves * sms)


def test_waves_by_hand():
    # 1664 × 2048 in 256 × 128 tiles: 7 × 16 = 112 tiles; 108 SMs take 2 waves, 112/216 of the slots busy
    got = get("gemm-waves").run().answers
    assert (got["tiles"].value, got["waves"].value, got["efficiency"].value) == (112, 2, Fraction(14, 27))


@pytest.mark.parametrize("seed", SEEDS)
def test_busbw_keys(seed):
    v = BANK.get("allgather-busbw-time").variant(seed)
    p, size, bus = v.values["p"], v.values["n"], v.values["busbw"]
    time = size * Fraction(p - 1, p) / bus
    assert v.expected("time") == time and v.expected("algbw") == size / time
    assert busbw("allgather", p=p, n=size, time=time).busbw_bytes_per_s == bus  # read forwards again
    assert v.expected("sent") == Fraction(p - 1, p) * size
    assert v.expected("sent") == cost("allgather", "ring", p=p, n=size, link=LinkParams(
        alpha_s=Fraction(0), beta_s_per_byte=Fraction(1))).bytes_sent_per_rank

    v = BANK.get("broadcast-allreduce-busbw").variant(seed)
    p, size, bus = v.values["p"], v.values["n"], v.values["busbw"]
    assert v.expected("time") == size / bus  # broadcast: factor 1
    assert v.expected("other-time") == size * Fraction(2 * (p - 1), p) / bus
    assert v.expected("ratio") == Fraction(2 * (p - 1), p)


def _pairwise(p: int, n: Fraction, alpha: Fraction, bandwidth: Fraction) -> Fraction:
    """(p − 1) rounds of one n/p block each: (p − 1)·(α + n/p / bandwidth)."""
    return (p - 1) * (alpha + n / p / bandwidth)


@pytest.mark.parametrize("seed", SEEDS)
def test_moe_keys(seed):
    for exercise_id in ("moe-dispatch-volume", "moe-capacity-padding", "moe-alltoall-time"):
        v = BANK.get(exercise_id).variant(seed)
        g = v.values
        routed = g["tokens"] * g["topk"] * g["hidden"] * 2
        buffer = g["capacity"] * routed
        assert v.expected("buffer") == buffer and v.expected("padding") == buffer - routed
        assert v.expected("leaving") == buffer * Fraction(g["ep"] - 1, g["ep"])
        assert v.expected("layer-step") == 4 * buffer * Fraction(g["ep"] - 1, g["ep"])
        one = _pairwise(g["ep"], buffer, g["alpha"], g["bandwidth"])
        assert v.expected("alltoall-time") == one and v.expected("layer-time") == 4 * one
        registry = cost("alltoall", "pairwise", p=g["ep"], n=buffer, link=LinkParams(
            alpha_s=g["alpha"], beta_s_per_byte=1 / g["bandwidth"])).time_s
        assert registry == one


def _ring_allreduce(t: int, n: Fraction, alpha: Fraction, bandwidth: Fraction) -> Fraction:
    return 2 * (t - 1) * alpha + Fraction(2 * (t - 1), t) * n / bandwidth


@pytest.mark.parametrize("seed", SEEDS)
def test_tensor_parallel_keys(seed):
    for exercise_id in ("tp-layer-comm", "sp-layer-comm", "tp-step-comm"):
        v = BANK.get(exercise_id).variant(seed)
        g = v.values
        t, sp = g["tp"], g["sp"] == "yes"
        n = Fraction(g["batch"] * g["seq"] * g["hidden"] * 2)
        assert v.expected("message") == n
        assert v.expected("collectives") == (8 if sp else 4)
        assert v.expected("sent-one") == Fraction(t - 1, t) * n * (1 if sp else 2)
        # a reduce-scatter and an all-gather send, and take, what one ring all-reduce does
        layer_sent = 4 * Fraction(2 * (t - 1), t) * n
        layer_time = 4 * _ring_allreduce(t, n, g["alpha"], g["bandwidth"])
        assert v.expected("layer-sent") == layer_sent and v.expected("layer-time") == layer_time
        steps = g["layers"] * g["microbatches"]
        assert v.expected("step-sent") == steps * layer_sent and v.expected("step-time") == steps * layer_time


# -- the formula slips the examples model ----------------------------------------------------------

FORMULA_SLIPS = [
    ("mfu-from-iteration-time", "mfu", "six-n-only"),
    ("mfu-from-iteration-time", "mfu", "achieved-for-peak"),
    ("mfu-from-iteration-time", "model-pflop", "six-n-only"),
    ("mfu-hfu-recompute", "mfu", "recompute-count"),
    ("mfu-hfu-recompute", "hfu", "recompute-count"),
    ("mfu-target-time", "time-at-target", "achieved-for-peak"),
    ("mfu-target-time", "time-at-target", "six-n-only"),
    ("gemm-roofline-time", "time", "roofline-sum"),
    ("gemm-roofline-time", "bytes", "elements-for-bytes"),
    ("gemm-intensity", "intensity", "elements-for-bytes"),
    ("decode-batch-threshold", "rows", "elements-for-bytes"),
    ("moe-alltoall-time", "alltoall-time", "alpha-only"),
    ("moe-alltoall-time", "layer-time", "beta-only"),
    ("tp-layer-comm", "layer-time", "alpha-only"),
    ("tp-layer-comm", "layer-time", "beta-only"),
    ("tp-layer-comm", "layer-sent", "own-chunk"),
    ("sp-layer-comm", "layer-time", "beta-only"),
]


@pytest.mark.parametrize(("exercise_id", "name", "mistake"), FORMULA_SLIPS, ids=str)
def test_formula_slips_are_diagnosed(exercise_id, name, mistake):
    # skipped where the slip changes nothing (a compute-bound product has nothing to add up)
    assert slips_diagnosed(BANK.get(exercise_id), name, mistake, SEEDS, rel_tol=0.02) >= 3


def test_the_slips_by_hand():
    # recompute-count swaps the counts: MFU becomes HFU; six-n-only puts 6·N·tokens for the model FLOPs
    settings = {"recompute": "full"}
    right = get("mfu-hfu").run(settings).answers
    swapped = get("mfu-hfu").run(settings, slip=Slip("recompute-count")).answers
    assert swapped["mfu"].value == right["hfu"].value and swapped["hfu"].value == right["mfu"].value
    six = get("mfu-hfu").run(slip=Slip("six-n-only")).answers
    assert six["model-pflop"].value == right["six-n"].value
    # the A100's measured 264.53 TFLOP/s for its 312: MFU 312/264.53 times higher
    achieved = get("mfu-hfu").run(slip=Slip("achieved-for-peak")).answers
    base = get("mfu-hfu").run().answers
    assert achieved["mfu"].value == base["mfu"].value * Fraction(312, 26453) * 100
    # the roofline's sum: math + memory; elements for bytes: bf16 intensity twice as high
    r = get("gemm-roofline").run()
    summed = get("gemm-roofline").run(slip=Slip("roofline-sum")).answers["time"].value
    steps = {s.text: s.value for s in r.steps}
    assert summed == steps["Math time"] + steps["Memory time"]
    assert get("gemm-roofline").run(slip=Slip("elements-for-bytes")).answers["intensity"].value == \
        2 * r.answers["intensity"].value


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_right_answers_are_correct_and_variants_differ(exercise):
    assert not any(exercise.variant(seed).worked.disagreements for seed in (None, 3, 17, 40))
    assert right_answers_correct(exercise) >= 3


def test_bad_givens_are_refused():
    with pytest.raises(Exception, match=r"target=1\.5 is not an MFU"):
        get("mfu-hfu").run({"target": "1.5"})
    with pytest.raises(Exception, match="'maybe' is not yes or no"):
        get("tp-sp-layer").run({"sp": "maybe"})
    with pytest.raises(Exception, match="no batch makes a 64 × 64 weight compute-bound"):
        get("gemm-batch-threshold").run({"n": "64", "k": "64"})
    with pytest.raises(Exception, match="capacity_factor=0 is not positive"):
        get("moe-dispatch").run({"capacity": "0"})
