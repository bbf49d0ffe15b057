"""Gradient buckets split by hand from each framework's rule."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.step import (
    DDP_BUCKET_CAP_BYTES,
    DDP_FIRST_BUCKET_BYTES,
    DEEPSPEED_REDUCE_BUCKET_ELEMENTS,
    ddp_buckets,
    deepspeed_buckets,
    megatron_bucket_elements,
    megatron_buckets,
)

MiB = 2**20


def _split(plan):
    return [(b.layers, b.bytes) for b in plan]


def test_defaults_are_the_frameworks():
    assert DDP_FIRST_BUCKET_BYTES == 1048576 and DDP_BUCKET_CAP_BYTES == 26214400
    assert DEEPSPEED_REDUCE_BUCKET_ELEMENTS == 500_000_000
    assert [megatron_bucket_elements(dp) for dp in (1, 40, 41, 1024)] == [40_000_000, 40_000_000, 41_000_000,
                                                                         1_024_000_000]


def test_ddp_first_bucket_is_small_then_the_cap():
    # layers 0..4 of 5, 20, 3, 1/2, 1/4 MiB; reverse order 1/4 + 1/2 + 3 reaches 1 MiB at layer 2,
    # then 20 + 5 reaches 25 MiB at layer 0
    plan = ddp_buckets([5 * MiB, 20 * MiB, 3 * MiB, MiB // 2, MiB // 4])
    assert _split(plan) == [((4, 3, 2), Fraction(15, 4) * MiB), ((1, 0), 25 * MiB)]
    assert [b.limit_bytes for b in plan] == [MiB, 25 * MiB]
    assert plan.rule == "ddp" and len(plan) == 2 and plan.layers == 5


def test_ddp_a_layer_above_the_cap_closes_its_bucket_alone():
    plan = ddp_buckets(["1KiB", "30MiB", "2MiB"])
    assert _split(plan) == [((2,), 2 * MiB), ((1,), 30 * MiB), ((0,), 1024)]


def test_ddp_custom_cap():
    plan = ddp_buckets(["10MiB"] * 4, bucket_cap_bytes="15MiB", first_bucket_bytes="20MiB")
    assert _split(plan) == [((3, 2), 20 * MiB), ((1, 0), 20 * MiB)]


def test_megatron_counts_elements_and_grows_with_dp():
    layers = [60_000_000] * 5  # 30e6 bf16 elements each
    assert [b.layers for b in megatron_buckets(layers, dp=8)] == [(4, 3), (2, 1), (0,)]
    # dp = 128: 128e6 elements = 256e6 bytes, more than all five layers' 300e6 only at the last
    assert [b.layers for b in megatron_buckets(layers, dp=128)] == [(4, 3, 2, 1, 0)]
    # fp32 gradients: 40e6 elements are 160e6 bytes, reached by three 60e6-byte layers
    assert [b.layers for b in megatron_buckets(layers, dp=8, bytes_per_element=4)] == [(4, 3, 2), (1, 0)]


def test_deepspeed_reduces_before_overflowing():
    # limit 100 elements × 2 B = 200 B; layers 0..4 of 100, 100, 150, 50, 250 bytes
    plan = deepspeed_buckets([100, 100, 150, 50, 250], reduce_bucket_size=100)
    assert _split(plan) == [((4,), 250), ((3, 2), 200), ((1, 0), 200)]


def test_deepspeed_and_megatron_differ_at_the_boundary():
    # 100 then 150 bytes against 200: DeepSpeed reduces the 100 first, Megatron takes both (250 ≥ 200)
    assert [b.layers for b in deepspeed_buckets([150, 100], reduce_bucket_size=100)] == [(1,), (0,)]
    assert [b.layers for b in megatron_buckets([150, 100], dp=1, bucket_elements=100)] == [(1, 0)]


def test_to_dict():
    d = ddp_buckets([MiB, MiB]).to_dict()
    assert d["buckets"][0] == {"layers": [1], "bytes": MiB, "limit_bytes": MiB}
    assert d["source"]["key"] == "li2020ddp"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: ddp_buckets([]), "layer_bytes=\\[\\]"),
    (lambda: ddp_buckets("4MiB"), "layer_bytes='4MiB'"),
    (lambda: ddp_buckets([1, -3]), "layer_bytes\\[1\\]=-3"),
    (lambda: ddp_buckets([1, "4 MiBB"]), "layer_bytes\\[1\\]"),
    (lambda: ddp_buckets([1], bucket_cap_bytes=0), "bucket_cap_bytes=0"),
    (lambda: megatron_buckets([1], dp=0), "dp=0"),
    (lambda: megatron_buckets([1], dp=2, bytes_per_element=0), "bytes_per_element=0"),
    (lambda: deepspeed_buckets([1], reduce_bucket_size=0), "reduce_bucket_size=0"),
])
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises(InputError, match=message):
        call()
