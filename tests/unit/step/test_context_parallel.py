"""Context parallelism in the step: s/cp of the work and activations per rank, ring attention's K and V
sends against the block compute, gradients over dp × cp, and the published Llama 3 405B run."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.describe import megatron_arguments, microbatches_for, model_preset
from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, step
from costmodel.step.flops import model_flops
from costmodel.step.memory import activation_bytes
from costmodel.step.ops import layer_ops
from costmodel.step.placement import place
from costmodel.topology import topology_of

SHAPE = TransformerShape(layers=4, hidden=1024, heads=16, kv_groups=4, sequence=4096, vocabulary=32000,
                         gated=True, ffn_factor=Fraction(7, 2))
LINK = combine_link(alpha="5us", beta="0.04ns/B")  # 25 GB/s
FLAT = {"shape": SHAPE, "peak_flops": 10**15, "efficiency": "1/2", "link": LINK, "causal": True}


@pytest.mark.parametrize("cp", [1, 2, 4, 8])
def test_each_rank_does_one_cp_th_of_the_layer(cp):
    ops = layer_ops(SHAPE, micro_batch=2, tp=2, causal=True, cp=cp)
    forward = sum(o.flops for o in ops if o.phase == "forward")
    assert forward * 2 * cp == model_flops(SHAPE, batch=2, causal=True).layer.forward


@pytest.mark.parametrize("cp", [2, 4])
def test_activations_are_divided_by_cp(cp):
    for recompute in ("none", "selective", "full"):
        for attention in ("flash", "unfused"):
            kw = {"micro_batch": 1, "tp": 2, "sequence_parallel": True, "recompute": recompute,
                  "attention": attention}
            assert activation_bytes(SHAPE, cp=cp, **kw) * cp == activation_bytes(SHAPE, **kw)


def _ring_by_hand(cp: int, *, b: int = 1, tp: int = 1) -> tuple[Fraction, Fraction]:
    """The exposed ring-attention time of one layer, forward and backward, from the module's formula."""
    d, e = SHAPE.hidden // SHAPE.heads, 2
    kv = 2 * Fraction(b * SHAPE.sequence, cp) * (SHAPE.groups // tp) * d * e  # K and V of s/cp tokens
    alpha, beta = Fraction(5, 10**6), Fraction(4, 10**11)
    rate = Fraction(10**15, 2)
    attention = model_flops(SHAPE, batch=b, causal=True).layer.attention / (tp * cp) / rate
    forward = (cp - 1) * max(Fraction(0), alpha + beta * kv - attention / cp)
    backward = (cp - 1) * max(Fraction(0), alpha + beta * 2 * kv - 2 * attention / cp)
    return forward, backward


@pytest.mark.parametrize("cp", [2, 4, 8])
def test_ring_attention_exposure_matches_the_formula(cp):
    r = step(cp=cp, **FLAT)
    forward, backward = _ring_by_hand(cp)
    assert r.cp_comm_s == SHAPE.layers * (forward + backward)
    assert r.cp_send_s == Fraction(5, 10**6) + Fraction(4, 10**11) * 2 * Fraction(4096, cp) * 4 * 64 * 2
    assert r.gpus == cp


def test_ring_attention_hides_behind_a_long_block():
    # a fast link: each send is shorter than a block of attention, nothing is exposed
    r = step(cp=2, **{**FLAT, "link": combine_link(alpha="1us", beta="0.001ns/B")})
    assert r.cp_comm_s == 0
    assert r.cp_send_s > 0


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4]))
def test_compute_per_rank_scales_with_cp(cp, tp):
    one = step(tp=tp, **FLAT)
    split = step(tp=tp, cp=cp, **FLAT)
    assert split.compute_s * cp == one.compute_s
    assert split.step_s == (split.compute_s + split.tp_comm_s + split.cp_comm_s + split.bubble_s
                            + split.pp_exposed_s + split.dp_exposed_s + split.contention_s + split.optimizer_s
                            + split.param_gather_s)


def test_gradients_are_reduced_over_dp_times_cp():
    # the gradient reduction of dp × cp = 4 ranks equals a plain dp = 4 step's (same bytes, same link)
    kw = {**FLAT, "recompute": "none"}
    with_cp = step(dp=2, cp=2, **kw)
    plain = step(dp=4, **kw)
    assert with_cp.dp_comm_s == plain.dp_comm_s
    one = step(cp=2, **kw)  # dp = 1: the two cp ranks still reduce their gradients
    assert one.dp_comm_s > 0 and one.mode != "no data parallelism"


def test_zero_shards_over_dp_times_cp():
    kw = {**FLAT, "zero": 1, "framework": "megatron"}
    assert step(dp=2, cp=2, **kw).memory[0].optimizer_bytes == step(dp=4, **kw).memory[0].optimizer_bytes


@pytest.mark.parametrize("cp,nearest", [(3, "2 or 4"), (5, "4 or 8"), (3000, "2048")])
def test_cp_must_split_the_sequence_in_two_cp_chunks(cp, nearest):
    with pytest.raises(InputError, match=rf"^cp={cp} does not split the sequence 4096 into 2·cp = {2 * cp} "
                                         rf"equal chunks \(Megatron-Core's load-balanced causal split\); give "
                                         rf"cp={nearest}$"):
        step(cp=cp, **FLAT)


def test_tp_must_divide_heads_and_kv_heads():
    with pytest.raises(InputError, match=r"^tp=3 does not divide heads=16; .* give tp=2 or 4$"):
        step(tp=3, **FLAT)
    shape = TransformerShape(layers=2, hidden=1536, heads=24, kv_groups=8, sequence=256, vocabulary=100)
    with pytest.raises(InputError, match=r"^tp=6 does not divide kv_groups=8; .* give tp=4 or 8$"):
        step(tp=6, **{**FLAT, "shape": shape})


def test_cp_placement_follows_megatrons_rank_order():
    topo = topology_of(["8:2us:300GB/s:nvlink", "64:5us:25GB/s:ib"])
    p = place(topo, tp=4, cp=2, dp=4, pp=2)
    assert p.order == ("tp", "cp", "dp", "pp")
    assert p.levels == {"tp": 0, "cp": 0, "dp": 1, "pp": 1}  # dp: the dp × cp group of 8 spans nodes
    p = place(topo, tp=2, cp=2, dp=2, pp=1)
    assert p.levels == {"tp": 0, "cp": 0, "dp": 0, "pp": None}  # 8 ranks: one node
    assert place(topo, tp=8, cp=2, dp=1, pp=1, order="tp-dp-pp").levels["cp"] == 1


# -- the published Llama 3 405B configuration -------------------------------------------------------

LLAMA_405B = ("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --context-parallel-size 1 "
              "--sequence-parallel --use-distributed-optimizer --bf16 --seq-length 8192 "
              "--global-batch-size 2048 --micro-batch-size 1")
"""Dubey et al. 2024, Table 4 (16,384 GPUs: TP 8, CP 1, PP 16, DP 128, 8192 tokens, 16M tokens a batch)."""


def test_llama_3_405b_as_published_fits_an_h100():
    m = model_preset("llama-3-405b")
    args = megatron_arguments(LLAMA_405B)
    dp = 16384 // (8 * 16)
    shape = m.transformer()
    # 126 layers on 16 stages: one layer fewer on the first and the last (Dubey et al. 2024, section 3.3.2)
    layers = (7, *(8,) * 14, 7)
    r = step(shape=shape, gpu="h100-sxm", dp=dp, stage_layers=layers,
             microbatches=microbatches_for(args.global_batch, micro_batch=1, dp=dp),
             **{**m.settings, **args.settings})
    assert (r.dp, r.tp, r.pp, r.cp, r.gpus, r.microbatches) == (128, 8, 16, 1, 16384, 16)
    assert r.tokens_per_s * r.step_s == 2048 * 8192  # 16M tokens a step
    top = max(d.total_bytes for d in r.memory)
    assert top < r.memory_capacity_bytes == 80 * 2**30  # the H100's 80 GB (80 GiB)
    assert top < Fraction(80 * 10**9) * Fraction(105, 100)
    assert r.mfu is not None and Fraction(1, 4) < r.mfu < Fraction(1, 2)
