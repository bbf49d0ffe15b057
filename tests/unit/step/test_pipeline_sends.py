"""Pipeline sends beside the compute, blocking the device, and scatter-gather (Megatron-LM before
Megatron-Core), against hand-derived makespans and the schedule simulator."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel import cost
from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import step
from costmodel.step.frameworks import pipeline_sends

LINK = combine_link(alpha="10us", beta="1ns/B")
MIB = 2**20
MS = Fraction(1, 1000)
SEND = Fraction(1, 10**5) + Fraction(MIB, 10**9)  # α + n·β of one activation tensor on LINK


def _times(**more):
    return {"forward_s": ["1ms"] * 4, "backward_s": ["2ms"] * 4, "activation_bytes": MIB, "link": LINK, **more}


def test_blocking_sends_hold_the_sender_two_stages_of_1f1b_by_hand():
    """pp = 2, 1F1B: stage 0's forwards hold it F + x, stage 1's backwards B + x, and each stage keeps
    pace with the other (F + x + B per micro-batch), so the step is (F + x) + m·(F + B + x) + B."""
    m = 6
    r = step(**_times(pp=2, microbatches=m, pipeline_sends="blocking"))
    f, b = 2 * MS, 4 * MS  # two layers per stage
    assert r.pipeline_sends == "blocking" and r.pp_send_s == SEND and r.pp_gather_s == 0
    assert r.step_s == (f + SEND) + m * (f + b + SEND) + b
    overlap = step(**_times(pp=2, microbatches=m, pipeline_sends="overlap"))
    assert f + m * (f + b) + b < overlap.step_s < r.step_s
    for x in (r, overlap):
        assert x.compute_s == m * (f + b)
        assert x.compute_s + x.bubble_s + x.pp_exposed_s == x.step_s


def test_scatter_gather_sends_one_tp_share_and_gathers_it():
    """Each of the t ranks sends n/t; the receiver all-gathers n over the t ranks (on the tp link)."""
    tp_link = combine_link(alpha="2us", beta="0.01ns/B")
    r = step(**_times(pp=2, microbatches=4, tp=4, tp_link=tp_link, pipeline_sends="scatter-gather"))
    assert r.pp_send_s == Fraction(1, 10**5) + Fraction(MIB, 4 * 10**9)
    assert r.pp_gather_s == cost("allgather", "ring", p=4, n=MIB, link=tp_link).time_s
    assert any("scatter-gather: each of the tp=4 ranks sends 1/4" in n for n in r.notes)
    sp = step(**_times(pp=2, microbatches=4, tp=4, tp_link=tp_link, pipeline_sends="scatter-gather",
                       sequence_parallel=True))
    assert sp.pp_gather_s == 0 and sp.pp_send_s == r.pp_send_s  # already split: nothing to gather
    assert any("nothing to gather" in n for n in sp.notes)


def test_each_framework_sends_as_it_does():
    assert pipeline_sends(None, schedule="1f1b") == "overlap"
    assert pipeline_sends("megatron", schedule="1f1b") == "blocking"
    assert pipeline_sends("megatron", schedule="interleaved") == "overlap"  # overlap_p2p_comm
    # DeepSpeed's engine partitions what it sends over the tensor-parallel ranks (pipe_partitioned)
    assert pipeline_sends("deepspeed", schedule="1f1b") == pipeline_sends("megatron-deepspeed",
                                                                          schedule="1f1b") == "scatter-gather"
    assert pipeline_sends("megatron", schedule="interleaved", given="scatter-gather") == "scatter-gather"
    r = step(**_times(pp=2, microbatches=4, dp=2, gradient_bytes=[MIB] * 4, framework="megatron"))
    assert r.pipeline_sends == "blocking" and any("block the device" in n for n in r.notes)
    assert step(**_times(microbatches=4)).pipeline_sends == ""  # one stage: nothing sent


def test_an_unknown_way_of_sending_is_refused_with_the_names():
    with pytest.raises(InputError, match="overlap, blocking, scatter-gather"):
        step(**_times(pp=2, microbatches=4, pipeline_sends="async"))


@settings(max_examples=40, deadline=None)
@given(schedule=st.sampled_from(["gpipe", "1f1b", "interleaved", "zb-h1"]), m=st.integers(4, 9),
       dp=st.sampled_from([1, 2]), overlap=st.booleans(), zero=st.sampled_from([0, 1]),
       gather=st.sampled_from(["after", "overlap"]))
def test_a_blocking_send_never_makes_a_step_faster(*, schedule, m, dp, overlap, zero, gather):
    """Blocking only lengthens the sender's operations (every start is a maximum of ends), so a step with
    blocking sends takes at least as long as with sends beside the compute, and its parts still add up."""
    if schedule == "interleaved" and m % 2:
        m += 1
    if gather == "overlap" and (zero == 0 or dp == 1):
        gather = "after"
    base = _times(pp=2, microbatches=m, schedule=schedule, dp=dp, gradient_bytes=[MIB] * 4,
                  overlap_grad_reduce=overlap, zero=zero, param_gather=gather)
    beside = step(**base, pipeline_sends="overlap")
    held = step(**base, pipeline_sends="blocking")
    assert held.step_s >= beside.step_s and held.compute_s == beside.compute_s
    assert held.pipeline_s >= beside.pipeline_s
    # an exchange holds the device but has no gradient: the buckets are the layers' alone
    assert [(b.layers, b.bytes) for b in held.buckets] == [(b.layers, b.bytes) for b in beside.buckets]
    for r in (held, beside):
        assert (r.compute_s + r.bubble_s + r.pp_exposed_s + r.dp_exposed_s + r.contention_s + r.optimizer_s
                + r.param_gather_s) == r.step_s
