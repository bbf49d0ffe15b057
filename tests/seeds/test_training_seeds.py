"""The seeds' training numbers: weighted loss, data-parallel memory, compression, parameter servers, FedAvg.

Each test reproduces a statement of ``shared/seeds/distributed-sgd-and-allreduce.txt`` ("DSGD") or of
``shared/seeds/collective-communication-patterns.txt`` ("Patterns"); its id is the section title and
the arithmetic is in a comment.  The ZeRO figures come from Rajbhandari et al. (SC20), Figure 1.

Not reproduced as written:

* Patterns, 'Gradient Compression': "FP16 → INT8 (4×)".  INT8 is 1 byte against FP16's 2: 2×
  (4× holds from FP32); ``compress`` says so in a note.
* Patterns, 'Gradient Compression': top-K "reduces volume by 10–100× ... when K/N ≈ 0.001–0.01".
  Sending K values of 4 bytes with 4-byte indices out of N fp32 values gives 4/(8·K/N): 50× at
  K/N = 0.01 and 500× at 0.001; 10× needs K/N = 0.05.  (The seed also credits "Deep Gradient
  Compression" to Aji & Heafield 2017; DGC is Lin et al. 2018, Aji & Heafield wrote "Sparse
  Communication for Distributed Gradient Descent".)
* Patterns, 'Gradient Compression': "1-bit (ternary: {-1, 0, +1})": one bit cannot hold three
  values; the model sends signs only (sign(0) = +1) and one fp32 scale.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.training import (
    compress,
    error_feedback,
    fedavg,
    moe_traffic,
    ps_traffic,
    staleness,
    tensor_parallel_traffic,
    training_memory,
    weighted_gradient,
    weighted_loss,
    zero_memory,
)

GB = 10**9
MB = 10**6


def seed(title: str) -> pytest.MarkDecorator:
    """Give the test the seed section title as its id."""
    return pytest.mark.parametrize("section", [title], ids=[title])


@seed("DSGD 1. One Objective, Distributed Data: Worked Example: Unequal Shards")
def test_unequal_shards(section):
    r = weighted_loss(sizes="600,300,100", losses="0.2,0.5,0.9")
    # weights 600/1000, 300/1000, 100/1000; 0.6·0.2 + 0.3·0.5 + 0.1·0.9 = 0.36
    assert r.weights == (Fraction(3, 5), Fraction(3, 10), Fraction(1, 10))
    assert r.weighted == Fraction(36, 100)
    # "a plain average ... gives approximately 0.533": (0.2 + 0.5 + 0.9)/3 = 1.6/3 = 8/15
    assert r.unweighted == Fraction(8, 15)
    assert round(float(r.unweighted), 3) == 0.533


@seed("DSGD 1. One Objective, Distributed Data: equal and unequal mini-batches")
def test_mini_batch_weights(section):
    # "Equal local mini-batches can use equal weights; unequal mini-batches require sample weighting."
    equal = weighted_gradient(gradients="1,0;2,1;4,-1", batches="32,32,32")
    assert equal.weights == (Fraction(1, 3),) * 3
    assert equal.weighted == equal.unweighted == (Fraction(7, 3), Fraction(0))
    unequal = weighted_gradient(gradients="1,0;2,1;4,-1", batches="16,16,32")
    # 1/4·(1, 0) + 1/4·(2, 1) + 1/2·(4, −1) = (11/4, −1/4), not the plain mean (7/3, 0)
    assert unequal.weighted == (Fraction(11, 4), Fraction(-1, 4))
    assert unequal.weighted != unequal.unweighted


@seed("Patterns Data Parallelism: Memory scaling, 70B x 4 bytes x 4 workers = 1.12 TB")
def test_data_parallel_memory(section):
    m = training_memory("70B", dtype="fp32", dp=4)
    # 70e9 parameters × 4 bytes × 4 replicas = 1.12e12 bytes
    assert m.weights_bytes_total == 1_120_000_000_000
    assert m.weights_bytes_per_replica == 280 * GB


@seed("ZeRO (Rajbhandari et al. 2020) Figure 1: 7.5B parameters on 64 GPUs")
def test_zero_figure_1(section):
    psi, n = 7_500_000_000, 64
    exact = [zero_memory("7.5B", gpus=n, stage=s).model_state_bytes_per_gpu for s in range(4)]
    # (2 + 2 + 12)Ψ; (2 + 2)Ψ + 12Ψ/N; 2Ψ + (2 + 12)Ψ/N; (2 + 2 + 12)Ψ/N
    assert exact == [16 * psi, 4 * psi + Fraction(12 * psi, n), 2 * psi + Fraction(14 * psi, n),
                     Fraction(16 * psi, n)]
    assert exact == [120 * GB, Fraction(31_406_250_000), Fraction(16_640_625_000), Fraction(1_875_000_000)]
    # the paper's figure: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    assert [round(float(x) / GB, 1) for x in exact] == [120.0, 31.4, 16.6, 1.9]


@seed("Patterns Gradient Compression: FP32 -> FP16 (2x)")
def test_fp32_to_fp16(section):
    assert compress("25M", method="fp16", source="fp32").ratio == 2


@seed("Patterns Gradient Compression: FP16 -> INT8 (the seed says 4x; it is 2x, 4x from FP32)")
def test_fp16_to_int8(section):
    assert compress("25M", method="int8", source="fp16").ratio == 2
    assert compress("25M", method="int8", source="fp32").ratio == 4


@seed("Patterns Gradient Compression: Sparsification (Top-K), index overhead")
def test_top_k(section):
    # top-10 % of fp32 with int32 indices: n·4 / (0.1n·(4 + 4)) = 5, not 10
    assert compress("25M", method="topk", density="0.1").ratio == 5
    # K/N = 0.01: 4/(0.01·8) = 50; K/N = 0.001: 500
    assert compress("25M", method="topk", density="0.01").ratio == 50
    assert compress("25M", method="topk", density="0.001").ratio == 500


@seed("Patterns Gradient Compression: 1-bit quantization with error feedback")
def test_one_bit_error_feedback(section):
    # n/8 bytes of signs plus one fp32 scale: 25e6/8 + 4
    assert compress("25M", method="onebit").bytes == 3_125_000 + 4
    # the pseudocode: gradient += residual; sign; residual = gradient − sign·scale
    run = error_feedback("0.5,-1.2,0.3", steps=3)
    residual = (Fraction(0),) * 3
    for step in run.steps:
        g = tuple(Fraction(x) + r for x, r in zip((Fraction(1, 2), Fraction(-6, 5), Fraction(3, 10)),
                                                 residual, strict=True))
        scale = sum(abs(x) for x in g) / 3
        residual = tuple(x - (scale if x >= 0 else -scale) for x in g)
        assert step.corrected == g
        assert step.residual == residual


@seed("Patterns Parameter Server Architecture: N gradient pushes and N parameter pulls per step")
def test_parameter_server(section):
    t = ps_traffic("400MB", workers=16)
    # 16 pushes and 16 pulls of 400 MB at the server: 6.4 GB each way
    assert t.server_bytes_in == t.server_bytes_out == 16 * 400 * MB
    # "all-reduce has O(1) communication at the PS (no hotspot)": 2(N − 1)/N·n = 750 MB per worker
    assert t.ring_bytes_sent_per_worker == 750 * MB
    sharded = ps_traffic("400MB", workers=16, servers=2)
    # PS 0 holds params 0..N/2: each of 2 servers sees 16 × 200 MB
    assert sharded.server_bytes_in == 3_200 * MB


@seed("Patterns Tensor (Intra-Layer) Parallelism: attention + MLP = 2 all-reduces per block")
def test_tensor_parallel_allreduces(section):
    tp = tensor_parallel_traffic(batch=1, seq=2048, hidden=12288, tp=8)
    assert tp.allreduces_forward == 2  # the seed's count: forward pass
    assert tp.allreduces_per_block == 4  # Megatron-LM: 2 forward + 2 backward
    assert tp.allreduce_bytes == 2048 * 12288 * 2  # b·s·h in bf16


@seed("Patterns Expert Parallelism (Mixture of Experts): two all-to-all operations per MoE layer")
def test_moe_alltoalls(section):
    m = moe_traffic(tokens=4096, hidden=4096, experts=8)
    assert m.alltoalls_forward == 2
    assert m.fraction_leaving == Fraction(7, 8)  # E = 8 experts on 8 GPUs, uniform routing


@seed("Patterns Async vs. Synchronous SGD: SSP max_staleness = 3; ASP staleness")
def test_staleness(section):
    s = staleness(workers=16, bound=3)
    assert s.to_dict()["ssp_max_staleness"] == 3
    assert s.to_dict()["bsp_staleness"] == 0
    assert s.asp_expected_staleness == 15  # N − 1 for N equal-speed workers


@seed("Patterns Federated Learning (FL): FedAvg theta = sum |D_k|/|D| theta_k")
def test_fedavg(section):
    r = fedavg("1,0;2,1;4,-1", sizes="100,300,600")
    # 100/1000·(1, 0) + 300/1000·(2, 1) + 600/1000·(4, −1) = (3.1, −0.3)
    assert r.global_model == (Fraction(31, 10), Fraction(-3, 10))


@seed("Patterns Stragglers and dropouts: aggregate from whoever responds")
def test_fedavg_partial_participation(section):
    r = fedavg("1,0;2,1;4,-1", sizes="100,300,600", dropped="1")
    # clients 0 and 2 answer: 100/700·(1, 0) + 600/700·(4, −1) = (25/7, −6/7)
    assert r.global_model == (Fraction(25, 7), Fraction(-6, 7))
    assert r.weights == (Fraction(1, 7), 0, Fraction(6, 7))
