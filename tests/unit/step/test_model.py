"""The whole-step model against the definitions: free links, one bucket, a long backward, bubble, MFU."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.pipeline import bubble
from costmodel.step import TransformerShape, step

FREE = combine_link(alpha=0, beta=0)
LINK = combine_link(alpha="10us", beta="1ns/B")
MIB = 2**20


def _parts(r):
    return (r.compute_s + r.tp_comm_s + r.bubble_s + r.pp_exposed_s + r.dp_exposed_s + r.contention_s
            + r.optimizer_s + r.param_gather_s)


def _ring(p: int, n: int, alpha: Fraction, beta: Fraction) -> Fraction:
    """Ring all-reduce by hand: 2(p − 1) steps of α + (n/p)·β (Patarasuk & Yuan 2009)."""
    return 2 * (p - 1) * (alpha + Fraction(n, p) * beta)


def test_free_links_give_the_sum_of_compute_and_the_optimizer():
    f = [Fraction(1, 1000), Fraction(2, 1000), Fraction(3, 1000)]
    b = [2 * x for x in f]
    r = step(forward_s=f, backward_s=b, gradient_bytes=[MIB] * 3, activation_bytes=MIB, dp=4, tp=2,
             microbatches=3, link=FREE, optimizer_s="5ms")
    assert r.step_s == 3 * (sum(f) + sum(b)) + Fraction(5, 1000)
    assert r.dp_exposed_s == r.tp_comm_s == r.bubble_s == 0
    assert r.scaling_efficiency == 1
    assert _parts(r) == r.step_s


def test_one_bucket_exposes_the_whole_allreduce():
    r = step(forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, gradient_bytes=[MIB] * 4, dp=8, link=LINK,
             bucket_bytes="1GiB", buckets="deepspeed")
    assert len(r.buckets) == 1
    whole = _ring(8, 4 * MIB, Fraction(1, 10**5), Fraction(1, 10**9))
    assert r.dp_exposed_s == r.dp_comm_s == whole
    assert r.dp_hidden_s == 0
    assert r.step_s == Fraction(12, 1000) + whole
    assert r.scaling_efficiency == Fraction(12, 1000) / r.step_s


def test_a_long_backward_hides_all_but_the_last_bucket():
    r = step(forward_s=["1s"] * 6, backward_s=["2s"] * 6, gradient_bytes=[4 * MIB] * 6, dp=4, link=LINK,
             buckets="megatron", bucket_bytes="4MiB")
    assert [b.layers for b in r.buckets] == [(i,) for i in reversed(range(6))]
    last = _ring(4, 4 * MIB, Fraction(1, 10**5), Fraction(1, 10**9))
    assert r.dp_exposed_s == last
    assert r.dp_hidden_s == 5 * last
    assert r.step_s == 18 + last


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b", "interleaved", "zb-h1"])
def test_pipeline_only_reproduces_bubble(schedule):
    send = Fraction(1, 10**5) + Fraction(MIB, 10**9)
    r = step(forward_s=["1ms"] * 8, backward_s=["2ms"] * 8, pp=4, microbatches=8, schedule=schedule,
             activation_bytes=MIB, link=LINK)
    half = {"backward_slots": Fraction(2, 1000), "weight_slots": Fraction(2, 1000)} if schedule == "zb-h1" \
        else {"backward_slots": Fraction(4, 1000)}
    ref = bubble(schedule, 4, microbatches=8, forward_slots=Fraction(2, 1000), comm_slots=send, **half)
    assert r.step_s == r.pipeline_s == ref.total_slots
    assert [tuple((o.op, o.microbatch, o.chunk, o.start, o.end) for o in ops) for ops in r.timeline] == \
        [tuple((o.op, o.microbatch, o.chunk, o.start, o.end) for o in s.ops) for s in ref.timeline]
    quiet = bubble(schedule, 4, microbatches=8, forward_slots=Fraction(2, 1000), **half).total_slots
    assert r.pp_exposed_s == ref.total_slots - quiet
    assert r.bubble_s == quiet - 8 * Fraction(6, 1000)
    assert _parts(r) == r.step_s


TINY = TransformerShape(layers=2, hidden=4, heads=2, sequence=4, vocabulary=8)


def test_mfu_of_a_tiny_model_by_hand():
    # Per layer and sequence: QKV 2·4·4·12 = 384, attention 4·4·4·4 = 256, projection 2·4·16 = 128,
    # MLP 2·4·4·16·2 = 1024, so F = 1792; logits 2·4·4·8 = 256.  Model FLOPs 2·3·1792 + 3·256 = 11520.
    peak = Fraction(10**6)
    r = step(shape=TINY, peak_flops=peak, efficiency="1/2", tp=2, link=FREE)
    assert r.model_flops == 11520
    assert r.step_s == Fraction(11520, 2) / (peak / 2)
    assert r.mfu == Fraction(1, 2)
    assert r.tokens_per_s == 4 / r.step_s
    # Full recomputation runs each layer's forward again: hardware 2·4·1792 + 3·256 = 15104.
    redo = step(shape=TINY, peak_flops=peak, efficiency="1/2", tp=2, link=FREE, recompute="full")
    assert redo.step_s == Fraction(15104, 2) / (peak / 2)
    assert redo.mfu == Fraction(45, 118)


def test_tensor_parallel_allreduces_are_on_the_critical_path():
    act = 2 * MIB
    r = step(forward_s=["1ms"] * 2, backward_s=["2ms"] * 2, activation_bytes=act, tp=4, link=LINK,
             microbatches=2, recompute="full")
    a = _ring(4, act, Fraction(1, 10**5), Fraction(1, 10**9))
    assert r.tp_allreduce_s == a
    assert r.tp_comm_s == 2 * 2 * (2 + 2 + 2) * a
    assert r.step_s == 2 * 2 * Fraction(4, 1000) + r.tp_comm_s
    assert _parts(r) == r.step_s


def test_a_large_step_is_consistent_and_quick():
    gpt3 = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    r = step(shape=gpt3, dp=64, tp=8, pp=8, microbatches=8, schedule="interleaved", peak_flops="312e12",
             efficiency="0.5", link=combine_link(alpha="5us", bandwidth="100GB/s"), recompute="full")
    assert _parts(r) == r.step_s
    assert 0 < r.mfu < Fraction(1, 2)
    assert 0 < r.scaling_efficiency < 1
    assert r.to_dict()["step_s"] == float(r.step_s)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"forward_s": [], "backward_s": []}, "forward_s=[] is not a non-empty list"),
    ({"shape": TINY, "peak_flops": 1, "tp": 4, "link": FREE}, "tp=4 does not divide heads=2"),
    ({"forward_s": [1, 1], "backward_s": [1, 1], "pp": 3, "activation_bytes": 1, "link": FREE},
     "pp=3 is above the 2 layers"),
    ({"forward_s": [1, -1], "backward_s": [1, 1]}, "forward_s[1]=-1"),
    ({"forward_s": [1, 1], "backward_s": [1, 1], "dp": 2}, "dp=2 needs gradient_bytes="),
    ({"forward_s": [1, 1], "backward_s": [1, 1], "dp": 2, "gradient_bytes": [1, 1]}, "no link for the data"),
    ({"shape": TINY, "peak_flops": 1, "efficiency": 2}, "efficiency=2 is not a share of the peak"),
    ({"forward_s": [1, 1], "backward_s": [1, 1], "schedule": "1f1b", "chunks": 2}, "chunks=2 is set, and applies only"),
])
def test_bad_input_is_one_line_naming_the_parameter(kwargs, message):
    with pytest.raises(InputError) as caught:
        step(**kwargs)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_zero_layers_are_refused():
    with pytest.raises(InputError, match="layers"):
        TransformerShape(layers=0, hidden=4, heads=2, sequence=4, vocabulary=8)


def test_each_stage_reduces_after_its_last_backward():
    # 1F1B, P = M = 2, F = 1 s, B = 2 s per stage: stage 1 runs F0 1-2, B0 2-4, F1 4-5, B1 5-7 and
    # stage 0 F0 0-1, F1 1-2, B0 4-6, B1 7-9.  A 3e9-byte ring all-reduce over 2 at 1 ns/B takes 3 s.
    link = combine_link(alpha=0, beta="1ns/B")
    both = step(forward_s=[1, 1], backward_s=[2, 2], gradient_bytes=[3 * 10**9] * 2, activation_bytes=0,
                pp=2, dp=2, microbatches=2, link=link)
    assert (both.pipeline_s, both.step_s, both.dp_stage, both.dp_exposed_s, both.dp_hidden_s) == (9, 12, 0, 3, 0)
    last = step(forward_s=[1, 1], backward_s=[2, 2], gradient_bytes=[0, 3 * 10**9], activation_bytes=0,
                pp=2, dp=2, microbatches=2, link=link)
    assert (last.step_s, last.dp_stage, last.dp_exposed_s, last.dp_hidden_s) == (10, 1, 1, 2)
    assert _parts(last) == last.step_s


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"optimizer_s": -1}, "optimizer_s=-1"),
    ({"link": "fast", "tp": 2, "activation_bytes": 8}, "link='fast': unknown profile 'fast'"),
    ({"link": 3, "tp": 2, "activation_bytes": 8}, "link=3 is not a link"),
])
def test_messages_name_the_parameter_given(kwargs, message):
    with pytest.raises(InputError, match=message):
        step(forward_s=[1], backward_s=[1], **kwargs)


def test_layers_that_do_not_split_evenly_are_refused_with_a_split_that_does():
    """Llama 3 405B's 126 layers on 16 stages: one fewer on the first and last stage (Dubey et al. 2024)."""
    from costmodel.step.model import uneven

    with pytest.raises(InputError, match=r"give stage_layers=7,8,8,8,8,8,8,8,8,8,8,8,8,8,8,7 "):
        step(forward_s=[1] * 126, backward_s=[2] * 126, pp=16, activation_bytes="1MB")
    for layers in range(1, 60):
        for stages in range(1, layers + 1):
            split = uneven(layers, stages)
            assert sum(split) == layers and max(split) - min(split) <= 1 and len(split) == stages
            assert split == split[::-1] or split[0] <= split[-1]  # the fewer at the ends, the first first
