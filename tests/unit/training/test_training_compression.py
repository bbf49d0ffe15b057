"""Compressed payloads and ratios, the time saved, and the error-feedback simulation."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from costmodel.errors import InputError, UnknownNameError
from costmodel.params import LinkParams
from costmodel.training import METHODS, compress, error_feedback

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11))  # 5 µs, 12.5 GB/s


@pytest.mark.parametrize("case", [
    ("topk", "fp32", "0.1", 1000, 100 * (4 + 4), 5),      # top-10 %: 4n / (0.1n·8) = 5, not 10
    ("topk", "fp32", "0.01", 25_000_000, 250_000 * 8, 50),
    ("topk", "fp16", "0.01", 1000, 10 * (2 + 4), Fraction(2000, 60)),
    ("top-k", "fp32", "1/3", 10, 4 * 8, Fraction(40, 32)),  # k = ⌈10/3⌉ = 4
    ("fp16", "fp32", None, 1000, 2000, 2),
    ("bf16", "fp32", None, 1000, 2000, 2),
    ("int8", "fp32", None, 1000, 1000, 4),
    ("int8", "fp16", None, 1000, 1000, 2),                 # the seed's "FP16 → INT8 (4×)" is 2×
    ("fp8", "bf16", None, 1000, 1000, 2),
    ("onebit", "fp32", None, 1000, 125 + 4, Fraction(4000, 129)),
    ("1bit", "fp32", None, 1001, 126 + 4, Fraction(4004, 130)),  # ⌈1001/8⌉ = 126 bytes of signs
])
def test_payload_and_ratio(case):
    method, source, density, n, payload, ratio = case
    c = compress(n, method=method, source=source, density=density)
    assert c.bytes == payload
    assert c.ratio == ratio
    assert c.dense_bytes == n * {"fp32": 4, "fp16": 2, "bf16": 2}[source]
    assert json.dumps(c.to_dict(), allow_nan=False)


def test_index_bytes():
    assert compress(1000, method="topk", density="0.1", index_bytes=2).bytes == 100 * 6


def test_int8_note_corrects_the_common_slip():
    c = compress(1000, method="int8", source="fp16")
    assert any("FP16 → INT8 is 2×" in n for n in c.notes)


def test_time_saved_topk():
    p, n = 16, 25_000_000
    c = compress(n, method="topk", density="0.01", p=p, link=LINK)
    dense = 4 * n
    payload = 250_000 * 8
    a, b = LINK.alpha_s, LINK.beta_s_per_byte
    # dense ring all-reduce 2(p − 1)(α + (D/p)β); ring all-gather of p payloads (p − 1)(α + cβ)
    assert c.dense.time_s == 2 * (p - 1) * (a + Fraction(dense, p) * b)
    assert c.compressed.time_s == (p - 1) * (a + payload * b)
    assert c.time_saved_s == c.dense.time_s - c.compressed.time_s
    d = c.to_dict()
    assert d["scheme"] == "allgather"
    assert d["compressed"]["collective"] == "allgather"
    assert d["speedup"] == pytest.approx(float(c.dense.time_s / c.compressed.time_s))


def test_time_saved_fp16_is_an_allreduce_of_half_the_bytes():
    c = compress(1_000_000, method="fp16", p=8, link=LINK)
    a, b = LINK.alpha_s, LINK.beta_s_per_byte
    assert c.compressed.time_s == 2 * 7 * (a + Fraction(2_000_000, 8) * b)
    assert c.to_dict()["scheme"] == "allreduce"


# -- the two exchange schemes, priced against an independent count ----------------------------------

P16, N25M = 16, 25_000_000


def _deepspeed_tally(n: int, p: int) -> tuple[list[int], int]:
    """Bytes each rank sends in DeepSpeed's compressed_allreduce (nccl.py), call by call, counted message by
    message: the padding found by search, the all-to-all as p − 1 chunk messages, each ring all-gather as
    p − 1 forwarded blocks."""
    divider = int(p * 8 / math.gcd(p, 8))  # onebit/adam.py
    padded = n
    while padded % (p * divider):
        padded += 1
    chunk = padded // p // 8  # packed sign bytes of one rank's chunk
    sent = [0] * p
    for r in range(p):
        sent[r] += sum(chunk for j in range(p) if j != r)  # phase 1: all_to_all_single of the signs
        sent[r] += sum(4 for _ in range(p - 1))  # phase 1: all_gather of the worker scales (ring)
        sent[r] += sum(chunk for _ in range(p - 1))  # phase 2: all_gather of the server signs (ring)
        sent[r] += sum(4 for _ in range(p - 1))  # phase 2: all_gather of the server scales (ring)
    return sent, padded


def test_onebit_reduce_scatter_is_about_32x_at_16_ranks():
    c = compress(N25M, method="onebit", p=P16, link=LINK)
    assert c.scheme == "reduce-scatter"
    # N = ⌈25e6/256⌉·256 = 25,000,192; chunk = N/128 = 195,314 B; per rank 15·(2·195,314 + 8) = 5,859,540
    assert c.compressed.padded_elements == 25_000_192
    assert c.compressed.bytes_sent_per_rank == 5_859_540
    assert c.dense.bytes_sent_per_rank == 187_500_000  # 2·15/16·100 MB
    ratio = c.dense.bytes_sent_per_rank / c.compressed.bytes_sent_per_rank
    assert ratio == Fraction(3_125_000, 97_659)
    assert 31 < ratio < 32
    a, b = LINK.alpha_s, LINK.beta_s_per_byte
    assert c.compressed.time_s == 4 * 15 * a + 5_859_540 * b  # 4 calls of 15 rounds each
    sent, padded = _deepspeed_tally(N25M, P16)
    assert padded == c.compressed.padded_elements
    assert set(sent) == {c.compressed.bytes_sent_per_rank}
    d = c.to_dict()
    assert d["scheme"] == "reduce-scatter" and d["compressed"]["scheme"] == "reduce-scatter"
    assert [s["collective"] for s in d["compressed"]["steps"]] == ["alltoall", "allgather", "allgather",
                                                                   "allgather"]
    assert d["bytes_ratio_per_rank"] == pytest.approx(float(ratio))
    assert any(s["key"] == "tang2021" for s in d["sources"])
    assert any(s["key"] == "deepspeed" for s in d["sources"])


def test_onebit_allgather_saves_only_4x_at_16_ranks():
    c = compress(N25M, method="onebit", p=P16, link=LINK, scheme="allgather")
    assert c.scheme == "allgather"
    assert c.compressed.bytes_sent_per_rank == 15 * 3_125_004  # (p − 1) × payload
    assert c.dense.bytes_sent_per_rank / c.compressed.bytes_sent_per_rank == Fraction(3_125_000, 781_251)
    assert c.compressed.padded_elements is None


def test_int8_reduce_scatter_is_no_longer_slower_than_dense():
    rs = compress(N25M, method="int8", p=P16, link=LINK)
    ag = compress(N25M, method="int8", p=P16, link=LINK, scheme="gather")
    a, b = LINK.alpha_s, LINK.beta_s_per_byte
    assert rs.scheme == "reduce-scatter" and ag.scheme == "allgather"
    # reduce-scatter: all-to-all + all-gather of 25 MB, 15/16 of it each: 2·15·α + 2·15/16·25e6·β
    assert rs.compressed.bytes_sent_per_rank == 46_875_000
    assert rs.compressed.time_s == 30 * a + 46_875_000 * b
    assert rs.dense.time_s == 30 * a + 187_500_000 * b
    assert rs.time_saved_s == 140_625_000 * b > 0
    assert not any("slower" in n for n in rs.notes)
    # all-gather: 15 × 25 MB per rank, twice the dense ring all-reduce's bytes
    assert ag.compressed.bytes_sent_per_rank == 375_000_000
    assert ag.time_saved_s < 0 and any("slower" in n for n in ag.notes)


@pytest.mark.parametrize(("method", "scheme"), [("onebit", None), ("onebit", "allgather"), ("int8", None),
                                                ("fp8", "allgather"), ("topk", None), ("fp16", None)])
def test_exchange_matches_the_schedule_simulator(method, scheme):
    from costmodel.schedules import build
    from costmodel.schedules.simulator import simulate

    schedules = {"alltoall": "pairwise_alltoall", "allgather": "ring_allgather", "allreduce": "ring_allreduce"}
    c = compress(1_000_003, method=method, p=12, link=LINK, scheme=scheme,
                 density="0.01" if method == "topk" else None, source="fp32")
    time = sent = Fraction(0)
    for s in c.compressed.steps:
        sim = simulate(build(schedules[s.collective], s.collective, p=12), n=s.n_bytes, link=LINK)
        time += sim.time_s
        sent += sim.bytes_sent_per_rank
        assert set(sim.bytes_sent) == {sim.bytes_sent_per_rank}  # every rank sends the same
    assert (time, sent) == (c.compressed.time_s, c.compressed.bytes_sent_per_rank)


def test_onebit_padding_follows_deepspeed():
    # p = 12: lcm(12, 8) = 24, so N is a multiple of 288; p = 16: 256; p = 3: 72
    c12 = compress(1000, method="onebit", p=12)
    assert c12.compressed.padded_elements == 1152
    assert c12.compressed.bytes_sent_per_rank == 11 * (Fraction(1152, 48) + 8)
    assert compress(256, method="onebit", p=16).compressed.padded_elements == 256
    assert compress(1, method="onebit", p=3).compressed.padded_elements == 72
    sent, padded = _deepspeed_tally(1000, 12)
    assert padded == 1152 and set(sent) == {c12.compressed.bytes_sent_per_rank}


def test_scheme_without_p_is_named_but_unpriced():
    c = compress(1000, method="onebit")
    assert c.scheme == "reduce-scatter" and c.compressed is None
    assert c.to_dict()["bytes_ratio_per_rank"] is None


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"method": "fp16", "scheme": "allgather"}, "sums in its own format"),
    ({"method": "bf16", "scheme": "reduce-scatter"}, "sums in its own format"),
    ({"method": "topk", "density": "0.1", "scheme": "rs"}, "all-gather of every worker's payload only"),
    ({"method": "int8", "scheme": "allreduce"}, "do not sum in their own format"),
])
def test_bad_scheme(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        compress(1000, **kwargs)


def test_unknown_scheme():
    with pytest.raises(UnknownNameError, match="did you mean 'allgather'"):
        compress(1000, method="onebit", scheme="allgater")


def test_compressed_can_be_slower():
    # keeping everything doubles the payload (values and indices), and the gather moves (p − 1)·8n bytes per
    # rank against the ring's 2(p − 1)/p·4n
    c = compress(10**6, method="topk", density="1", p=8, link=LINK)
    assert c.ratio == Fraction(1, 2)
    assert c.time_saved_s < 0
    assert any("slower" in n for n in c.notes)


def test_bytes_per_rank_without_a_link():
    c = compress(1000, method="fp16", p=4)
    assert c.compressed.bytes_sent_per_rank == 2 * Fraction(3, 4) * 2000
    assert c.to_dict()["dense_time_s"] is None


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"method": "topk"}, "top-k needs a density"),
    ({"method": "topk", "density": "0"}, "outside \\(0, 1\\]"),
    ({"method": "topk", "density": "1.5"}, "outside \\(0, 1\\]"),
    ({"method": "fp16", "density": "0.1"}, "applies to top-k only"),
    ({"method": "fp16", "index_bytes": 4}, "applies to top-k only"),
    ({"method": "fp16", "source": "fp16"}, "saves nothing"),
    ({"method": "int8", "alpha": "0", "bandwidth": "1GB/s"}, "no worker count"),
    ({"method": "int8", "p": 1, "alpha": "0", "bandwidth": "1GB/s"}, "p=1 is too small"),
])
def test_bad_compress_input(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        compress(1000, **kwargs)


def test_unknown_method():
    with pytest.raises(UnknownNameError, match="did you mean 'topk'"):
        compress(1000, method="topp", density="0.1")
    assert set(METHODS) == {"topk", "fp16", "bf16", "fp8", "int8", "onebit"}


def test_error_feedback_onebit_by_hand():
    run = error_feedback("0.5,-1.2,0.3", steps=2)
    s1, s2 = run.steps
    # step 1: scale = (0.5 + 1.2 + 0.3)/3 = 2/3; residual = g − sign·2/3
    assert s1.scale == Fraction(2, 3)
    assert s1.transmitted == (Fraction(2, 3), Fraction(-2, 3), Fraction(2, 3))
    assert s1.residual == (Fraction(-1, 6), Fraction(-8, 15), Fraction(-11, 30))
    # step 2: g + residual = (1/3, −26/15, −1/15); scale = (5 + 26 + 1)/45 = 32/45
    assert s2.corrected == (Fraction(1, 3), Fraction(-26, 15), Fraction(-1, 15))
    assert s2.scale == Fraction(32, 45)
    assert s2.transmitted == (Fraction(32, 45), Fraction(-32, 45), Fraction(-32, 45))


@pytest.mark.parametrize("kwargs", [
    {"vector": "0.5,-1.2,0.3,0", "steps": 7},
    {"size": 20, "seed": 4, "steps": 9},
    {"vector": "1,2,3,4", "steps": 5, "method": "topk", "density": "0.25"},
])
def test_error_feedback_loses_nothing(kwargs):
    run = error_feedback(**kwargs)
    steps = len(run.steps)
    # Σ gradients − Σ transmitted = the final residual, exactly
    for g, sent, r in zip(run.vector, run.total_transmitted, run.steps[-1].residual, strict=True):
        assert steps * g - sent == r
    assert json.dumps(run.to_dict(), allow_nan=False)


def test_error_feedback_sign_of_zero_is_plus():
    run = error_feedback("0,0", steps=1)
    assert run.steps[0].transmitted == (0, 0)  # scale 0
    run = error_feedback("0,2", steps=1)
    assert run.steps[0].transmitted == (1, 1)


def test_error_feedback_topk_ties_and_carry():
    run = error_feedback("1,-1,0.5", steps=2, method="topk", density="0.34")
    # k = ⌈0.34·3⌉ = 2: |1| = |−1| both kept; then (2, −2, 1) keeps the first two again
    assert run.k == 2
    assert run.steps[0].residual == (0, 0, Fraction(1, 2))
    assert run.steps[1].corrected == (1, -1, 1)
    assert run.steps[1].transmitted == (1, -1, 0)


def test_random_vector_is_seeded():
    a = error_feedback(size=5, seed=7, steps=1)
    b = error_feedback(size=5, seed=7, steps=1)
    assert a.vector == b.vector
    assert all(-1 <= x <= 1 and (x * 1000).denominator == 1 for x in a.vector)
    assert a.to_dict()["seed"] == 7


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({}, "give exactly one of vector="),
    ({"vector": "1,2", "size": 3, "seed": 1}, "give exactly one of vector="),
    ({"size": 3}, "needs a seed"),
    ({"vector": "1,2", "seed": 1}, "seed= applies to a random vector"),
    ({"vector": "1,2", "method": "fp16"}, "simulates onebit or topk"),
    ({"vector": "1,2", "method": "topk"}, "needs a density"),
    ({"vector": "1,2", "density": "0.5"}, "applies to top-k only"),
    ({"vector": "1,2", "steps": 0}, "steps=0"),
    ({"vector": "1,2", "steps": 101}, "too many"),
    ({"size": 1001, "seed": 1}, "too long"),
    ({"vector": "1,x"}, "item 1 of the vector"),
])
def test_bad_error_feedback_input(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        error_feedback(**kwargs)
