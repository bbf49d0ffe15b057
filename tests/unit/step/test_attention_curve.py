"""The fused attention's curve: a rate measured at one shape, and the keys each block of queries' fixed work
is worth (``attention.k_overhead``), price a kernel of F FLOPs whose queries meet κ keys in F/P·(1 + K/κ).

Checked against the numbers the H200 preset was measured with (cuDNN, causal, forward and backward:
309.69 TFLOP/s at 1×32×2048×128, 503.58 at 1×16×8192×128), which the curve must reproduce.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.calibration.compute import fit_attention
from costmodel.gpus import load_gpu, parse_gpu
from costmodel.step.flops import TransformerShape
from costmodel.step.ops import layer_ops
from costmodel.step.rates import Rates

T = 10**12


def _math(rates: Rates, flops: Fraction, keys: Fraction) -> Fraction:
    return rates.fused_attention(flops, Fraction(0), keys) - rates.launch


def test_the_measured_shape_runs_at_the_measured_rate_and_a_longer_one_faster():
    h200 = load_gpu("h200")
    assert (h200.attention_shapes["bf16"], h200.attention_k_overhead) == ((1, 32, 2048, 128), 1080)
    rates = Rates.of(h200, "bf16")
    flops = Fraction(120_259_084_288)  # 1×32×2048×128, causal, forward and backward
    assert _math(rates, flops, Fraction(1024)) == flops / (Fraction(30969, 100) * T)
    # the plateau is solved through the measured point, and the second measurement is on the curve
    assert rates.attention == Fraction(30969, 100) * T * (1 + Fraction(1080, 1024))
    at_8192 = flops * 8  # 1×16×8192×128: half the heads, 16 times the pairs
    measured = Fraction(50358, 100) * T
    assert abs(at_8192 / _math(rates, at_8192, Fraction(4096)) / measured - 1) < Fraction(1, 1000)
    # without keys (a caller that does not know them), the plateau alone
    assert _math(rates, flops, Fraction(0)) == flops / rates.attention


def test_a_gpu_without_a_measured_shape_keeps_one_rate():
    a100 = Rates.of(load_gpu("a100-80gb"), "bf16")
    assert a100.attention_overhead == 0
    assert _math(a100, Fraction(10**12), Fraction(512)) == _math(a100, Fraction(10**12), Fraction(8192))
    # a file that gives its own rate without a shape replaces the base's rate and shape: no curve
    own = parse_gpu('base = "h200"\n[attention.achieved.bf16]\nvalue = "400T"\n', path="own.toml")
    assert own.attention_shapes == {} and own.attention_k_overhead == 1080
    assert Rates.of(own, "bf16").attention_overhead == 0


@pytest.mark.parametrize(("causal", "window", "keys"), [(True, None, 1024), (False, None, 2048),
                                                         (True, 512, Fraction(2048 * 512 - 512**2 // 2, 2048))])
def test_each_fused_attention_carries_the_keys_its_queries_meet(causal, window, keys):
    shape = TransformerShape(layers=2, hidden=1024, heads=8, sequence=2048, vocabulary=32000, window=window)
    for cp in (1, 2):
        ops = [o for o in layer_ops(shape, micro_batch=1, causal=causal, cp=cp) if o.kind == "attention"]
        assert [o.phase for o in ops] == ["forward", "backward"] and {o.keys for o in ops} == {keys}


def test_the_fit_goes_through_both_points():
    k = fit_attention((Fraction(1024), Fraction(30969, 100)), (Fraction(4096), Fraction(50358, 100)))
    assert k is not None and round(k) == 1080
    plateau = Fraction(30969, 100) * (1 + k / 1024)
    assert plateau / (1 + k / 4096) == Fraction(50358, 100)
    assert fit_attention((Fraction(1024), Fraction(300)), (Fraction(4096), Fraction(290))) is None  # slower
    assert fit_attention((Fraction(1024), Fraction(300)), (Fraction(1024), Fraction(310))) is None  # one κ
