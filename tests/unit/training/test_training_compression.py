"""Compressed payloads and ratios, the time saved, and the error-feedback simulation."""

from __future__ import annotations

import json
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
    assert d["collective_model"] == "allgather"
    assert d["compressed"]["collective"] == "allgather"
    assert d["speedup"] == pytest.approx(float(c.dense.time_s / c.compressed.time_s))


def test_time_saved_fp16_is_an_allreduce_of_half_the_bytes():
    c = compress(1_000_000, method="fp16", p=8, link=LINK)
    a, b = LINK.alpha_s, LINK.beta_s_per_byte
    assert c.compressed.time_s == 2 * 7 * (a + Fraction(2_000_000, 8) * b)
    assert c.to_dict()["collective_model"] == "allreduce"


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
