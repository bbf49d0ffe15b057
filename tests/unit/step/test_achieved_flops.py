"""achieved_flops: the two FLOP counts of an iteration, and the FLOP/s, MFU and HFU of a measured run."""

from __future__ import annotations

from fractions import Fraction

import pytest

import costmodel
from costmodel.errors import InputError
from costmodel.step import AchievedFlops, TransformerShape, achieved_flops

# A small shape worked by hand: l = 2, h = 8, a = 2, s = 4, V = 16, batch 3 (12 tokens).
SMALL = TransformerShape(layers=2, hidden=8, heads=2, sequence=4, vocabulary=16)
# Per layer forward: QKV 2·12·8·24 = 4608, attention 2·2·3·16·8 = 1536, projection 2·12·64 = 1536,
# MLP 2·12·8·32·2 = 12288; forward 19968.  Logits 2·12·8·16 = 3072 forward.
FORWARD, LOGITS = 19968, 3072
MODEL = 2 * 3 * FORWARD + 3 * LOGITS  # 129024
HARDWARE = 2 * 4 * FORWARD + 3 * LOGITS  # 168960, one more forward per layer


def test_the_two_counts_of_a_small_shape_by_hand():
    r = achieved_flops(SMALL, batch=3, recompute="full")
    assert (r.layer.qkv, r.layer.attention, r.layer.projection, r.layer.mlp) == (4608, 1536, 1536, 12288)
    assert (r.model_flops, r.hardware_flops) == (MODEL, HARDWARE)
    assert (r.model_flops_per_token, r.hardware_flops_per_token) == (Fraction(MODEL, 12), Fraction(HARDWARE, 12))
    # N = 2·(8·24 + 64 + 2·8·32) + 16·8 = 1664; 6·N·12 tokens
    assert (r.parameters, r.six_n_flops) == (1664, 6 * 1664 * 12)
    assert r.six_n_ratio == Fraction(6 * 1664 * 12, MODEL)
    assert r.time_s is r.gpus is r.mfu is r.hfu is r.hardware_flops_per_s_per_gpu is None


def test_without_recomputation_the_two_counts_agree():
    r = achieved_flops(SMALL, batch=3)
    assert r.model_flops == r.hardware_flops == MODEL
    assert r.layer.recompute == 0


def test_the_palm_count_is_six_n_plus_the_attention_term():
    # Chowdhery et al. appendix B: 6N + 12·l·h·s FLOPs per token, exact without the causal saving
    r = achieved_flops(SMALL, batch=3)
    assert r.model_flops == r.six_n_flops + 12 * 2 * 8 * 4 * 12


def test_the_rates_mfu_and_hfu_of_a_measured_run():
    r = achieved_flops(SMALL, batch=3, time_s="2ms", gpus=4, recompute="full", peak_flops="1e8")
    assert r.time_s == Fraction(1, 500) and r.gpus == 4 and r.peak_flops_per_s == 10**8
    assert r.hardware_flops_per_s == HARDWARE * 500
    assert r.model_flops_per_s == MODEL * 500
    assert r.hardware_flops_per_s_per_gpu == Fraction(HARDWARE * 500, 4)
    assert r.model_flops_per_s_per_gpu == Fraction(MODEL * 500, 4)
    assert r.hfu == Fraction(HARDWARE * 500, 4 * 10**8)
    assert r.mfu == Fraction(MODEL * 500, 4 * 10**8)
    with pytest.raises(InputError, match=r"21.1× the peak of 1 MFLOP/s: no run is faster than its peak"):
        achieved_flops(SMALL, batch=3, time_s="2ms", gpus=4, recompute="full", peak_flops="1e6")


def test_causal_halves_the_attention_products_in_both_counts():
    r = achieved_flops(SMALL, batch=3, recompute="full", causal=True)
    assert r.layer.attention == 768
    assert r.hardware_flops == HARDWARE - 2 * 4 * 768


def test_to_dict_is_json_with_unit_suffixes():
    d = achieved_flops(SMALL, batch=3, time_s=Fraction(1, 500), gpus=4, recompute="full",
                       peak_flops=10**8).to_dict()
    assert d["model_flops"] == MODEL and d["hardware_flops"] == HARDWARE
    assert d["time_s"] == 0.002 and d["peak_flops_per_s"] == 10**8
    assert d["hardware_flops_per_s_per_gpu"] == HARDWARE * 125
    assert d["layer"]["recompute"] == FORWARD and d["shape"]["layers"] == 2


def test_exported_from_the_package():
    assert costmodel.achieved_flops is achieved_flops
    assert costmodel.AchievedFlops is AchievedFlops and costmodel.TransformerShape is TransformerShape


def test_an_ffn_factor_may_be_a_ratio():
    shape = TransformerShape(layers=1, hidden=6, heads=2, sequence=2, vocabulary=4, ffn_factor="8/3")
    assert shape.ffn_factor == Fraction(8, 3) and shape.ffn_hidden == 16


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"batch": 0}, "batch=0"),
    ({"batch": 3, "time_s": "2ms"}, "go together"),
    ({"batch": 3, "gpus": 2}, "go together"),
    ({"batch": 3, "peak_flops": 10**6}, "needs time_s"),
    ({"batch": 3, "time_s": "0s", "gpus": 2}, "positive"),
    ({"batch": 3, "time_s": "2MB", "gpus": 2}, "time_s="),
    ({"batch": 3, "time_s": "2ms", "gpus": 0}, "0 GPUs ran the iteration"),
    ({"batch": 3, "time_s": "2ms", "gpus": 2, "peak_flops": 0}, "not positive"),
    ({"batch": 3, "time_s": "2ms", "gpus": 2, "peak_flops": "fast"}, "peak_flops="),
    ({"batch": 3, "recompute": "some"}, "unknown recomputation"),
])
def test_bad_arguments_are_refused_with_one_line(kwargs, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        achieved_flops(SMALL, **kwargs)
    assert "\n" not in str(info.value)
