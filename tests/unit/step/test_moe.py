"""Mixture-of-experts shapes: parameters as model cards count them, FLOPs with the active experts, and
expert parallelism in a step (all-to-alls, experts divided in memory, their gradients over dp/ep)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import pytest
import tomllib
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, model_flops, step
from costmodel.step.flops import parameters
from costmodel.step.ops import layer_ops

MODELS = tomllib.loads((Path(__file__).parents[2] / "data" / "moe_parameters.toml").read_text())


def _shape(name: str, *, sequence: int = 4096) -> TransformerShape:
    m = MODELS[name]
    moe = {}
    if "experts" in m:
        moe = {"experts": m["experts"], "top_k": m["top_k"], "shared_experts": m.get("shared_experts", 0),
               "dense_layers": m.get("dense_layers", 0)}
        if "expert_ffn" in m:
            moe["expert_ffn_factor"] = Fraction(m["expert_ffn"], m["hidden"])
    return TransformerShape(layers=m["layers"], hidden=m["hidden"], heads=m["heads"], kv_groups=m["kv_groups"],
                            sequence=sequence, vocabulary=m["vocabulary"], gated=True,
                            ffn_factor=Fraction(m["ffn"], m["hidden"]), tied_embeddings=m["tied"], **moe)


def _three(x: int) -> float:
    """*x* to three significant figures."""
    return float(f"{x:.3g}")


# -- parameters -----------------------------------------------------------------------------------


def test_llama3_8b_counts_its_released_weights():
    count = parameters(_shape("llama3_8b"))
    # 32 × (attention 4096·(4096 + 2·1024) + 4096² + SwiGLU 3·4096·14336) + 2 × 128256·4096 + 65 norms of 4096
    assert count.total == 32 * (4096 * 6144 + 4096**2 + 3 * 4096 * 14336) + 2 * 128256 * 4096 + 65 * 4096
    assert count.total == count.active == MODELS["llama3_8b"]["exact"] == 8_030_261_248
    assert _three(count.total) == MODELS["llama3_8b"]["total"]
    assert count.routed_experts == count.router == count.shared_experts == 0


def test_mixtral_8x7b_total_and_active():
    count = parameters(_shape("mixtral_8x7b"))
    expert = 3 * 4096 * 14336
    assert count.routed_experts == 32 * 8 * expert and count.active_routed_experts == 32 * 2 * expert
    assert count.router == 32 * 4096 * 8 and count.embeddings == 2 * 32000 * 4096
    assert count.total == MODELS["mixtral_8x7b"]["exact"] == 46_702_792_704
    assert count.active == count.total - 32 * 6 * expert == 12_879_925_248
    assert (_three(count.total), _three(count.active)) == (MODELS["mixtral_8x7b"]["total"],
                                                           MODELS["mixtral_8x7b"]["active"])


def test_deepseek_moe_16b_total_and_active():
    count = parameters(_shape("deepseek_moe_16b"))
    expert = 3 * 2048 * 1408
    attention = 28 * 4 * 2048**2
    dense = 3 * 2048 * 10944  # the first layer's FFN
    moe_total = 27 * (64 * expert + 2 * expert + 2048 * 64)
    moe_active = 27 * ((6 + 2) * expert + 2048 * 64)
    rest = attention + dense + 2 * 102400 * 2048 + 57 * 2048
    assert count.total == rest + moe_total == 16_375_728_128
    assert count.active == rest + moe_active == 2_828_650_496
    assert _three(count.total) == MODELS["deepseek_moe_16b"]["total"]
    assert round(count.active / 1e9, 1) * 1e9 == MODELS["deepseek_moe_16b"]["active"]  # published as 2.8B


def test_tied_embeddings_count_the_matrix_once_and_change_no_flops():
    untied = _shape("mixtral_8x7b")
    tied = dataclasses.replace(untied, tied_embeddings=True)
    assert parameters(untied).total - parameters(tied).total == 32000 * 4096
    a, b = model_flops(untied, batch=2), model_flops(tied, batch=2)
    assert (a.total, a.six_n_flops, a.layer) == (b.total, b.six_n_flops, b.layer)


# -- FLOPs ----------------------------------------------------------------------------------------

# l = 2 (the first dense), h = 8, a = 2 (MHA), s = 4, V = 16, SwiGLU (m = 3), f = 16, E = 4, k = 2,
# f_e = 4, one shared expert; B = 3 sequences, T = 12 tokens.
SMALL = TransformerShape(layers=2, hidden=8, heads=2, sequence=4, vocabulary=16, gated=True, ffn_factor=2,
                         experts=4, top_k=2, expert_ffn_factor=Fraction(1, 2), shared_experts=1, dense_layers=1)


def test_small_moe_flops_by_hand():
    f = model_flops(SMALL, batch=3)
    qkv = 2 * 12 * 8 * (8 + 2 * 8)  # 4608
    attention = 2 * 2 * 3 * 4 * 4 * 8  # 1536
    projection = 2 * 12 * 8 * 8  # 1536
    dense_mlp = 2 * 12 * 8 * 16 * 3  # 9216
    router = 2 * 12 * 8 * 4  # 768: T × E × h
    routed = 12 * 2 * (2 * 8 * 4 * 3)  # 4608: each token's 2 experts, 192 FLOPs each
    shared = 12 * 1 * (2 * 8 * 4 * 3)  # 2304
    assert (f.layer.router, f.layer.experts, f.layer.shared) == (768, 4608, 2304)
    assert f.layer.mlp == router + routed + shared == 7680
    assert f.dense_layer is not None and f.dense_layer.mlp == dense_mlp
    logits = 2 * 12 * 8 * 16  # 3072
    assert f.total == 3 * (qkv + attention + projection) * 2 + 3 * (dense_mlp + 7680) + 3 * logits == 105984
    # with a capacity factor of 3/2 the experts run 1.5 times the rows: hardware work, not model work
    padded = model_flops(SMALL, batch=3, capacity_factor="1.5")
    assert padded.layer.experts == 6912 and padded.total == 105984 + 3 * (6912 - 4608)


def test_six_n_uses_the_active_weights():
    for shape in (SMALL, _shape("mixtral_8x7b", sequence=512), _shape("deepseek_moe_16b", sequence=512)):
        f = model_flops(shape, batch=2)
        # PaLM's identity, exact for MoE too when N is the active matrices (router included)
        assert f.total == f.six_n_flops + 12 * shape.layers * shape.hidden * shape.sequence * f.tokens
        assert f.parameters < parameters(shape).active  # no norms, no input embedding lookup


def test_a_dense_shape_counts_as_before():
    gpt = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    f = model_flops(gpt, batch=1536, recompute="full")
    assert f.total == 96 * 1536 * 2048 * 96 * 12288**2 * (1 + Fraction(2048, 6 * 12288)
                                                         + Fraction(51200, 16 * 96 * 12288))
    assert f.dense_layer is None and f.layer.router == f.layer.shared == 0 and f.layer.experts == 0
    assert gpt.parameters == 96 * 12 * 12288**2 + 51200 * 12288


@pytest.mark.parametrize(("tp", "ep"), [(1, 1), (1, 4), (2, 2)])
def test_the_layer_operations_add_up_to_the_model_count(tp, ep):
    f = model_flops(SMALL, batch=2)
    ops = layer_ops(SMALL, micro_batch=2, tp=tp, sequence_parallel=True, ep=ep)
    assert sum(o.flops for o in ops if o.phase == "forward") * tp == f.layer.forward
    dense = layer_ops(SMALL, micro_batch=2, tp=tp, sequence_parallel=True, moe=False)
    assert f.dense_layer is not None
    assert sum(o.flops for o in dense if o.phase == "forward") * tp == f.dense_layer.forward
    experts = [o for o in ops if o.name == "expert FFN in" and o.phase == "forward"]
    # E/ep local experts, each on k·T·ep/E = 2·8·ep/4 rows, weights h × m'·f_e/tp
    assert [(o.batch, o.m, o.n, o.k) for o in experts] == [(4 // ep, 4 * ep, 2 * 4 // tp, 8)]


@given(st.integers(1, 8), st.integers(1, 8), st.integers(1, 3), st.sampled_from([None, "0.5", "1.25"]))
def test_more_experts_per_token_never_lower_the_flops(experts, k, shared, capacity):
    k2 = min(experts, k + 1)
    k1 = min(k, k2)

    def shape(top_k: int) -> TransformerShape:
        return TransformerShape(layers=2, hidden=16, heads=2, sequence=8, vocabulary=32, experts=experts,
                                top_k=top_k, shared_experts=shared)

    low, high = (model_flops(shape(x), batch=1, capacity_factor=capacity) for x in (k1, k2))
    assert high.total >= low.total and high.six_n_flops >= low.six_n_flops
    assert parameters(shape(k2)).active >= parameters(shape(k1)).active
    assert parameters(shape(k2)).total == parameters(shape(k1)).total


# -- bad values -----------------------------------------------------------------------------------

_BASE = {"layers": 4, "hidden": 64, "heads": 4, "sequence": 16, "vocabulary": 100}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"experts": 8, "top_k": 9}, "top_k=9 is not an integer from 1 to 8"),
    ({"experts": 8}, "experts=8 needs top_k="),
    ({"top_k": 2}, "top_k=2 describes a mixture of experts; give experts="),
    ({"shared_experts": 1}, "shared_experts=1 describes a mixture of experts"),
    ({"experts": 0, "top_k": 1}, "experts=0 is not a positive integer"),
    ({"experts": 8, "top_k": 2, "dense_layers": 4}, "dense_layers=4 is not an integer from 0 to 3"),
    ({"experts": 8, "top_k": 2, "expert_ffn_factor": "1/128"}, "expert_ffn_factor='1/128' is not a positive"),
    ({"experts": 8, "top_k": 2, "shared_experts": -1}, "shared_experts=-1 is not a non-negative integer"),
    ({"tied_embeddings": "no"}, "tied_embeddings='no' is not True or False"),
])
def test_bad_shapes(kwargs, message):
    with pytest.raises(InputError) as caught:
        TransformerShape(**_BASE, **kwargs)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


MOE = TransformerShape(**_BASE, experts=8, top_k=2)
LINK = combine_link(alpha="1us", beta="1ns/B")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"ep": 3, "dp": 8}, "ep=3 does not divide experts=8; give ep=2 or ep=4"),
    ({"ep": 16, "dp": 16}, "ep=16 does not divide experts=8; give ep=8"),
    ({"ep": 4, "dp": 2}, "ep=4 does not divide dp=2"),
    ({"capacity_factor": 0}, "capacity_factor=0 is not positive"),
    ({"capacity_factor": "-1"}, "capacity_factor=-1 is not positive"),
    ({"ep": 2, "dp": 2, "shape": TransformerShape(**_BASE)}, "ep= applies to a mixture of experts"),
    ({"capacity_factor": "1.25", "shape": TransformerShape(**_BASE)},
     "capacity_factor= applies to a mixture of experts"),
])
def test_bad_expert_settings(kwargs, message):
    with pytest.raises(InputError) as caught:
        step(**{"shape": MOE, "peak_flops": 10**12, "efficiency": 1, "link": LINK, **kwargs})
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


# -- a step with expert parallelism ---------------------------------------------------------------


def _moe_step(ep: int, **kw):
    return step(shape=MOE, dp=8, ep=ep, microbatches=2, peak_flops=10**12, efficiency=1, link=LINK,
                bytes_per_element=2, **kw)


def test_the_all_to_alls_move_what_the_dispatch_sends():
    one, eight = _moe_step(1), _moe_step(8)
    assert one.ep_comm_s == one.ep_alltoall_s == one.ep_alltoall_bytes == 0
    n = 2 * 16 * 64 * 2  # k · T · h · 2 bytes: each token's 2 copies leave for their experts
    assert eight.ep_alltoall_bytes == n
    # pairwise all-to-all: ep − 1 rounds, each sending one block n/ep
    alltoall = 7 * (Fraction(1, 10**6) + Fraction(n, 8) / 10**9)
    assert eight.ep_alltoall_s == alltoall
    # dispatch and combine forward, their gradients backward: 4 per MoE layer and micro-batch
    assert eight.ep_comm_s == 4 * 4 * 2 * alltoall
    assert one.compute_s == eight.compute_s  # same FLOPs on every rank: the routed rows spread evenly
    parts = ("compute_s", "tp_comm_s", "ep_comm_s", "bubble_s", "pp_exposed_s", "dp_exposed_s", "contention_s",
             "expert_dp_s", "optimizer_s", "param_gather_s")
    for r in (one, eight):
        assert r.step_s == sum(getattr(r, p) for p in parts)


def test_a_capacity_factor_pads_the_dispatch():
    padded = _moe_step(8, capacity_factor="1.25")
    assert padded.ep_alltoall_bytes == Fraction(5, 4) * 2 * 16 * 64 * 2
    assert padded.hardware_flops > padded.model_flops == _moe_step(8).model_flops


def test_experts_are_divided_in_memory():
    ep1, ep8 = _moe_step(1), _moe_step(8)
    assert ep1.memory is not None and ep8.memory is not None
    routed = 4 * 8 * 2 * 64 * 256  # 4 layers × 8 experts × 2 matrices × h × 4h
    assert ep1.memory[0].weight_bytes - ep8.memory[0].weight_bytes == 2 * Fraction(routed * 7, 8)
    assert ep1.memory[0].parameters - ep8.memory[0].parameters == routed * 7 // 8


def test_expert_gradients_are_reduced_over_dp_over_ep():
    r = _moe_step(2)
    # each rank holds 4 of the 8 experts; the 4 ranks holding the same ones all-reduce their gradients
    n = Fraction(4 * 4 * 2 * 64 * 256 * 2)
    assert r.expert_dp_s == 2 * 3 * (Fraction(1, 10**6) + n / 4 / 10**9)
    assert _moe_step(8).expert_dp_s == 0  # one replica per expert set: nothing to reduce
    assert _moe_step(1).expert_dp_s == 0  # ep = 1: the experts join the other gradients' buckets


def test_the_ep_group_sits_on_its_level():
    from costmodel.topology import topology_of

    topo = topology_of(["8:1us:300GB/s:nvlink", "4:5us:25GB/s:ib"])
    r = step(shape=MOE, dp=32, ep=8, peak_flops=10**12, efficiency=1, topology=topo)
    assert "placement: ep on nvlink, dp on ib (rank order tp-ep-dp-pp)" in r.notes
    n = 2 * 16 * 64 * 2
    assert r.ep_alltoall_s == 7 * (Fraction(1, 10**6) + Fraction(n, 8) / (300 * 10**9))


# -- expert parallelism with context parallelism ---------------------------------------------------

_PARTS = ("compute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "bubble_s", "pp_exposed_s", "dp_exposed_s",
          "contention_s", "expert_dp_s", "optimizer_s", "param_gather_s")


def test_ep_divides_dp_times_cp():
    # Megatron-Core carves the expert grid out of the tp × cp × dp ranks: expert-dp = dp·cp/ep
    r = step(shape=MOE, dp=2, cp=2, ep=4, peak_flops=10**12, efficiency=1, link=LINK)
    assert r.ep == 4 and r.cp == 2 and r.gpus == 4
    with pytest.raises(InputError, match=r"^ep=8 does not divide dp·cp = 2·2 = 4: .*; give ep=4, or more dp"):
        step(shape=MOE, dp=2, cp=2, ep=8, peak_flops=10**12, efficiency=1, link=LINK)


def test_cp_divides_the_dispatch_and_the_expert_reduction():
    r = step(shape=MOE, dp=2, cp=2, ep=2, microbatches=2, peak_flops=10**12, efficiency=1, link=LINK,
             bytes_per_element=2)
    n = 2 * (16 // 2) * 64 * 2  # k · T · h · 2 bytes with T = s/cp tokens on a rank
    assert r.ep_alltoall_bytes == n
    assert r.ep_alltoall_s == 1 * (Fraction(1, 10**6) + Fraction(n, 2) / 10**9)
    # each rank holds 4 of the 8 experts; dp·cp/ep = 2 ranks hold the same ones and all-reduce them
    grads = Fraction(4 * 4 * 2 * 64 * 256 * 2)
    assert r.expert_dp_s == 2 * 1 * (Fraction(1, 10**6) + grads / 2 / 10**9)
    assert r.step_s == sum(getattr(r, p) for p in _PARTS)


@given(dp=st.sampled_from([1, 2, 4]), cp=st.sampled_from([1, 2, 4]), ep=st.sampled_from([1, 2, 4, 8]),
       zero=st.sampled_from([0, 1, 3]))
def test_a_step_with_cp_and_ep_sums_exactly(dp, cp, ep, zero):
    if (dp * cp) % ep:
        return
    r = step(shape=MOE, dp=dp, cp=cp, ep=ep, zero=zero, microbatches=2, peak_flops=10**12, efficiency=1,
             link=LINK, bytes_per_element=2)
    assert r.step_s == sum(getattr(r, p) for p in _PARTS)
    assert r.gpus == dp * cp


def test_a_mixtral_step_with_cp_2_and_ep_4():
    shape = _shape("mixtral_8x7b", sequence=4096)
    kw = {"shape": shape, "gpu": "h100-sxm", "tp": 2, "dp": 4, "microbatches": 2, "sequence_parallel": True,
          "allow_oom": True}
    r = step(cp=2, ep=4, zero=1, **kw)
    assert r.step_s == sum(getattr(r, p) for p in _PARTS)
    assert r.ep_comm_s > 0 and r.expert_dp_s > 0 and r.gpus == 16
    where = "tp on intra, cp on intra, ep on intra, dp on network (rank order tp-cp-ep-dp-pp)"
    assert f"placement: {where}" in r.notes
    # a rank sends k·(s/cp/tp)·h·2 bytes per all-to-all
    assert r.ep_alltoall_bytes == 2 * (4096 // 2 // 2) * 4096 * 2
    # memory: the replicated weights over tp, the experts over tp·ep; ZeRO 1 shards the replicated states
    # over the dp·cp = 8 ranks holding them and the experts' over the dp·cp/ep = 2 holding the same experts
    replicated = sum(shape.layer_weights(i)[0] for i in range(shape.layers)) + 2 * shape.vocabulary * shape.hidden
    routed = sum(shape.layer_weights(i)[1] for i in range(shape.layers))
    assert parameters(shape).total == replicated + routed + (2 * shape.layers + 1) * shape.hidden  # + norms
    mem, plain = r.memory[0], step(cp=2, ep=4, zero=0, **kw).memory[0]
    assert mem.parameters == replicated + routed // 4
    held = Fraction(replicated, 2) + Fraction(routed, 2 * 4)
    assert mem.weight_bytes == plain.weight_bytes == 2 * held  # bf16 weights
    assert mem.optimizer_bytes / plain.optimizer_bytes == (Fraction(replicated, 2 * 8)
                                                           + Fraction(routed, 2 * 4 * 2)) / held
    # the activations: each cp rank holds s/cp of every sequence
    whole = step(cp=1, ep=4, zero=1, **kw).memory[0]
    assert whole.activation_bytes_per_layer == 2 * mem.activation_bytes_per_layer
