"""Multi-head latent attention under tensor parallelism, as Megatron-Core runs it: its collectives and the
weights every tensor-parallel rank holds whole, worked by hand on a small shape at tp = 2.

Sources: megatron/core/transformer/multi_latent_attention.py (``MLASelfAttention``: the down-projections
``TELinear`` with ``parallel_mode="duplicated"``; ``get_query_key_value_tensors``: with sequence parallelism
the rotary key gathered by ``gather_from_sequence_parallel_region``), megatron/core/models/gpt/
gpt_layer_specs.py (the up-projections ``TELayerNormColumnParallelLinear``, which gather their input over
the sequence with sequence parallelism and all-reduce its gradient without), megatron/core/extensions/
transformer_engine.py (a duplicated weight marked ``sequence_parallel``) and megatron/core/distributed/
finalize_model_grads.py (those gradients all-reduced over the tensor-parallel group).

Every collective here is a ring over p = 2 ranks on a link of α = 10 µs and β = 1 ns/B: an all-gather or a
reduce-scatter of n bytes (the whole gathered tensor, or each rank's whole input) takes α + β·n/2, an
all-reduce 2α + β·n.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from costmodel.gpus import load_gpu
from costmodel.params import combine_link
from costmodel.step import TransformerShape, step
from costmodel.step.compute import optimizer_time
from costmodel.step.ops import layer_ops
from costmodel.step.rates import Rates

ALPHA, BETA = Fraction(10, 10**6), Fraction(1, 10**9)
LINK = combine_link(alpha="10us", beta="1ns/B")

# h 64, 4 heads of 16 channels (and 8 rotary) for queries and keys, 12 for values; latents of 24 (queries)
# and 20 (keys and values); an FFN of 256; 2 layers of 32 tokens
H, A, D, DR, DV, QR, KR, F, V, S = 64, 4, 16, 8, 12, 24, 20, 256, 100, 32
SMALL = TransformerShape(layers=2, hidden=H, heads=A, head_dim=D, sequence=S, vocabulary=V, q_rank=QR,
                         kv_rank=KR, rope_head_dim=DR, value_head_dim=DV)
STANDARD = dataclasses.replace(SMALL, head_dim=None, q_rank=None, kv_rank=None, rope_head_dim=None,
                               value_head_dim=None)
RUN = {"peak_flops": "989e12", "efficiency": "1/2", "tp": 2, "link": LINK, "bytes_per_element": 2}

# one micro-batch of one sequence, 2 bytes an element: the bytes of each tensor the collectives move
HIDDEN = S * H * 2  # 4096: what a standard layer gathers
Q_LATENT, KV_LATENT, ROPE_KEY = S * QR * 2, S * KR * 2, S * DR * 2  # 1536, 1280 and 512

# the down-projections, q_a_proj h × d_c' and kv_a_proj_with_mqa h × (d_c + d_r), whole on both ranks
DOWN = H * QR + H * (KR + DR)  # 3328 a layer
LAYER = 43712  # a layer's matrices: 10944 of attention and the FFN's 2 × 64 × 256


def gather(n: int) -> Fraction:  # an all-gather, or a reduce-scatter, of n bytes over 2 ranks
    return ALPHA + BETA * Fraction(n, 2)


def allreduce(n: int) -> Fraction:
    return 2 * ALPHA + BETA * n


def test_the_shape_counts_its_down_projections_as_duplicated():
    assert SMALL.duplicated_matrices == (True, False, True, False, False)
    assert SMALL.duplicated_parameters == DOWN == 1536 + 1792
    without_queries = dataclasses.replace(SMALL, q_rank=None)
    assert without_queries.duplicated_matrices == (False, True, False, False)
    assert without_queries.duplicated_parameters == H * (KR + DR)
    assert STANDARD.duplicated_parameters == 0 and STANDARD.duplicated_matrices == (False, False)


def test_with_sequence_parallelism_the_attention_gathers_its_latents():
    """Forward, each layer all-gathers the query latent, the key-value latent and the rotary key (where a
    standard layer gathers the hidden state) and reduce-scatters the output projection's output; the FFN
    gathers and reduce-scatters the hidden state.  Backward, the output projection and the FFN's second
    product gather their output gradients, the two up-projections and the FFN's first product gather their
    input again and reduce-scatter its gradient, and the rotary key's gradient is reduce-scattered.  After
    the backward the down-projections' gradients, each rank's from its own 16 tokens, are all-reduced: 2
    layers × 3328 weights × 2 bytes."""
    r = step(shape=SMALL, sequence_parallel=True, **RUN)
    forward = gather(Q_LATENT) + gather(KV_LATENT) + gather(ROPE_KEY) + gather(HIDDEN) + 2 * gather(HIDDEN)
    assert forward == 6 * ALPHA + BETA * 7808
    backward = (2 * gather(HIDDEN) + gather(ROPE_KEY)
                + 2 * gather(Q_LATENT) + 2 * gather(KV_LATENT) + 2 * gather(HIDDEN))
    assert backward == 9 * ALPHA + BETA * 11264
    grads = allreduce(2 * DOWN * 2)
    assert grads == 2 * ALPHA + BETA * 13312
    assert r.tp_comm_s == 2 * (forward + backward) + grads == Fraction(371456, 10**9)
    assert r.tp_allreduce_s == 2 * gather(HIDDEN)  # the FFN's h-wide pair, as before
    assert any("gathers over the tp ranks the query latent (1.536 kB" in n for n in r.notes)
    assert any("down-projections' gradients" in n and "13.31 kB" in n for n in r.notes)
    parts = (r.compute_s + r.tp_comm_s + r.cp_comm_s + r.ep_comm_s + r.bubble_s + r.pp_exposed_s
             + r.dp_exposed_s + r.contention_s + r.expert_dp_s + r.optimizer_s + r.param_gather_s)
    assert parts == r.step_s and r.param_gather_s == 0


def test_without_sequence_parallelism_the_latents_gradients_are_all_reduced():
    """Every rank runs the down-projections on the whole sequence: the attention's forward all-reduces the
    output projection's output alone, and its backward the two up-projections' input gradients (the
    latents', not the hidden state's); nothing is summed after the backward."""
    r = step(shape=SMALL, **RUN)
    forward = 2 * allreduce(HIDDEN)
    backward = allreduce(Q_LATENT) + allreduce(KV_LATENT) + allreduce(HIDDEN)
    assert r.tp_comm_s == 2 * (forward + backward) == Fraction(230208, 10**9)
    assert not any("down-projections' gradients" in n for n in r.notes)


def test_without_the_queries_latent_the_queries_input_is_the_hidden_state():
    shape = dataclasses.replace(SMALL, q_rank=None)
    forward = gather(HIDDEN) + gather(KV_LATENT) + gather(ROPE_KEY) + 2 * gather(HIDDEN) + gather(HIDDEN)
    backward = 2 * gather(HIDDEN) + gather(ROPE_KEY) + 2 * gather(HIDDEN) + 2 * gather(KV_LATENT) \
        + 2 * gather(HIDDEN)
    grads = allreduce(2 * H * (KR + DR) * 2)
    assert step(shape=shape, sequence_parallel=True, **RUN).tp_comm_s == 2 * (forward + backward) + grads
    no_sp = 2 * (2 * allreduce(HIDDEN) + allreduce(HIDDEN) + allreduce(KV_LATENT) + allreduce(HIDDEN))
    assert step(shape=shape, **RUN).tp_comm_s == no_sp


@pytest.mark.parametrize("sequence_parallel", [False, True])
def test_a_standard_layer_keeps_its_two_hidden_wide_collectives(sequence_parallel):
    r = step(shape=STANDARD, sequence_parallel=sequence_parallel, **RUN)
    if sequence_parallel:  # 2 gathers and 2 reduce-scatters forward, 4 gathers and 2 reduce-scatters back
        assert r.tp_comm_s == 2 * 10 * gather(HIDDEN)
    else:
        assert r.tp_comm_s == 2 * 4 * allreduce(HIDDEN)
    assert not any("latent" in n for n in r.notes)


def test_the_rotary_key_is_not_gathered_when_it_has_no_channels():
    shape = dataclasses.replace(SMALL, rope_head_dim=0)
    forward = gather(Q_LATENT) + gather(KV_LATENT) + 3 * gather(HIDDEN)
    backward = 4 * gather(HIDDEN) + 2 * gather(Q_LATENT) + 2 * gather(KV_LATENT)
    grads = allreduce(2 * (H * QR + H * KR) * 2)
    assert step(shape=shape, sequence_parallel=True, **RUN).tp_comm_s == 2 * (forward + backward) + grads


def test_each_up_projection_overlaps_its_collectives_with_its_own_products():
    """With Megatron-LM's overlap each column-parallel product's gather runs beside its input gradient and
    its reduce-scatter beside its weight gradient: the two up-projections' and the FFN's first product's,
    each with its own latent's (or hidden state's) collectives."""
    run = {"shape": SMALL, "gpu": "a100-80gb", "tp": 2, "link": LINK, "dtype": "bf16", "bytes_per_element": 2,
           "sequence_parallel": True}
    none = step(**run, tp_overlap="none")
    back = step(**run, tp_overlap="backward")
    times = {(o.name, o.phase): o.time_s for o in back.layer_ops}
    u = Fraction(12, load_gpu("a100-80gb").sms)  # NCCL's channels on the A100's SMs

    def beside(c: Fraction, product: Fraction) -> Fraction:
        return max(c * u, c - product)

    hidden = sum((2 * gather(n) - beside(gather(n), times[f"{name} dgrad", "backward"])
                  - beside(gather(n), times[f"{name} wgrad", "backward"]))
                 for name, n in (("Q up", Q_LATENT), ("KV up", KV_LATENT), ("FFN in", HIDDEN)))
    assert none.tp_comm_s - back.tp_comm_s == 2 * hidden  # 2 layers, one micro-batch
    assert none.compute_s == back.compute_s


def test_every_rank_holds_the_down_projections_whole():
    """Per rank: the layers' matrices over 2 but the down-projections whole, and half the tied embedding:
    (2·43712 − 2·3328)/2 + 2·3328 + 6400/2 = 50240 weights, and as many gradients and optimizer states;
    the data-parallel buckets reduce those gradients."""
    per_rank = Fraction(2 * LAYER - 2 * DOWN, 2) + 2 * DOWN + Fraction(V * H, 2)
    assert per_rank == 50240
    r = step(shape=SMALL, dp=2, **RUN)
    (memory,) = r.memory or ()
    assert memory.parameters == 2 * LAYER + V * H  # the device's weights, counted once
    assert (memory.weight_bytes, memory.gradient_bytes, memory.optimizer_bytes) == (2 * per_rank, 2 * per_rank,
                                                                                    12 * per_rank)
    assert sum(b.bytes for b in r.buckets) == 2 * per_rank
    standard = step(shape=SMALL, dp=2, **{**RUN, "tp": 1})
    assert standard.memory is not None and standard.memory[0].weight_bytes == 2 * (2 * LAYER + V * H)


def test_the_optimizer_updates_the_whole_down_projections():
    r = step(shape=SMALL, gpu="a100-80gb", tp=2, link=LINK, dtype="bf16")
    # the Adam step and the zeroing of the gradients, both over the rank's 50240 parameters (no ZeRO)
    rates = Rates.of(load_gpu("a100-80gb"), "bf16")
    assert r.optimizer_s == optimizer_time(Fraction(50240), rates, Fraction(50240))


def test_gradient_accumulation_reads_and_writes_the_whole_down_projections():
    ops = layer_ops(SMALL, micro_batch=1, tp=2, accumulate=Fraction(4))
    (accumulation,) = [o for o in ops if o.name == "gradient accumulation"]
    assert accumulation.bytes == (2 + 2 * 4) * (Fraction(LAYER - DOWN, 2) + DOWN)
