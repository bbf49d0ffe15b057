"""The overlap schedule: the issue's vectors, and a discrete-event loop written here on random cases."""

from __future__ import annotations

import heapq
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import Bucket, ddp_buckets, overlap_schedule

MiB = 2**20


def _ring(p, n, alpha, beta):
    """Ring all-reduce (Patarasuk & Yuan 2009): 2(p−1)α + 2(p−1)/p·n·β."""
    return 2 * (p - 1) * alpha + Fraction(2 * (p - 1), p) * n * beta if p > 1 and n else Fraction(0)


def test_free_communication_leaves_the_compute():
    plan = ddp_buckets([3 * MiB, 5 * MiB, 7 * MiB, 30 * MiB])
    s = overlap_schedule(backward_s=["2ms", "3ms", "5ms", "7ms"], forward_s=["1ms", "2ms", "3ms", "4ms"],
                         optimizer_s="4ms", buckets=plan, dp=64, link=combine_link(alpha=0, beta=0))
    assert s.step_s == Fraction(10 + 17 + 4, 1000)
    assert s.exposed_s == 0 and s.communication_s == 0 and s.hidden_s == 0


def test_one_bucket_is_exposed_whole():
    alpha, beta = Fraction(5, 10**6), Fraction(1, 10**10)
    plan = ddp_buckets(["1MiB"] * 8, first_bucket_bytes="1GiB")
    assert len(plan) == 1
    s = overlap_schedule(backward_s=["1ms"] * 8, forward_s="4ms", buckets=plan, dp=16,
                         link=combine_link(alpha=alpha, beta=beta))
    t = _ring(16, 8 * MiB, alpha, beta)
    assert s.exposed_s == s.communication_s == t and s.hidden_s == 0
    assert s.step_s == Fraction(12, 1000) + t
    assert s.buckets[0].start_s == Fraction(12, 1000)


def test_a_long_backward_hides_all_but_the_last_bucket():
    alpha, beta = Fraction(1, 10**6), Fraction(1, 10**11)
    plan = ddp_buckets(["10MiB"] * 12)
    s = overlap_schedule(backward_s=["50ms"] * 12, buckets=plan, dp=8, link=combine_link(alpha=alpha, beta=beta))
    last = _ring(8, plan.buckets[-1].bytes, alpha, beta)
    assert s.exposed_s == last == s.buckets[-1].exposed_s
    assert all(b.exposed_s == 0 and b.start_s == b.ready_s for b in s.buckets[:-1])
    assert s.step_s == Fraction(600, 1000) + last


def test_a_busy_channel_delays_the_next_bucket():
    # two 1 MiB buckets, 1 ms backward each, 1.048576 ms all-reduce at p = 2, β = 1 ns/B
    plan = ddp_buckets(["1MiB", "1MiB"])
    s = overlap_schedule(backward_s=["1ms", "1ms"], buckets=plan, dp=2, link=combine_link(alpha=0, beta="1ns/B"))
    first, second = s.buckets
    assert (first.ready_s, first.start_s, first.end_s) == (Fraction(1, 1000), Fraction(1, 1000),
                                                          Fraction(1, 1000) + Fraction(MiB, 10**9))
    assert second.ready_s == Fraction(2, 1000) and second.start_s == first.end_s
    assert first.hidden_s == Fraction(1, 1000) and first.exposed_s == Fraction(MiB, 10**9) - Fraction(1, 1000)
    assert s.exposed_s == sum(b.exposed_s for b in s.buckets) == 2 * Fraction(MiB, 10**9) - Fraction(1, 1000)


def test_one_replica_communicates_nothing_and_to_dict_is_json():
    s = overlap_schedule(backward_s=[1, 2], buckets=ddp_buckets([MiB, MiB]), dp=1,
                         link=combine_link(alpha="5us", beta="1ns/B"))
    assert s.step_s == 3 and s.communication_s == 0
    d = s.to_dict()
    assert d["buckets"][1]["layers"] == [0] and d["step_s"] == 3 and d["source"]["key"] == "li2020ddp"


def _simulate(forward, backward, layers_of, durations, optimizer):
    """Discrete events: gradients become ready one by one; one channel runs buckets in order."""
    bucket_of = {layer: k for k, layers in enumerate(layers_of) for layer in layers}
    waiting = [len(layers) for layers in layers_of]
    events, t = [], forward
    for layer in reversed(range(len(backward))):
        t += backward[layer]
        heapq.heappush(events, (t, 1, layer))
    compute_end = t
    ready, starts, ends, busy = [False] * len(layers_of), [], [], False
    while events:
        now, kind, what = heapq.heappop(events)
        if kind == 0:
            busy = False
        else:
            waiting[bucket_of[what]] -= 1
            ready[bucket_of[what]] = waiting[bucket_of[what]] == 0
        nxt = len(starts)
        if not busy and nxt < len(layers_of) and ready[nxt]:
            starts.append(now)
            ends.append(now + durations[nxt])
            busy = True
            heapq.heappush(events, (ends[-1], 0, nxt))
    last = ends[-1] if ends else compute_end
    return starts, ends, max(compute_end, last) + optimizer, max(Fraction(0), last - compute_end)


times = st.fractions(min_value=0, max_value=20, max_denominator=4)


@given(backward=st.lists(times, min_size=1, max_size=9), forward=times, optimizer=times,
       sizes=st.lists(st.integers(0, 40), min_size=9, max_size=9), first=st.integers(1, 30),
       cap=st.integers(1, 60), dp=st.integers(1, 9), alpha=times, beta=st.fractions(0, 1, max_denominator=8))
def test_schedule_matches_a_discrete_event_loop(  # noqa: PLR0917 - hypothesis draws each by name
        backward, forward, optimizer, sizes, first, cap, dp, alpha, beta):
    sizes = sizes[:len(backward)]
    plan = ddp_buckets(sizes, first_bucket_bytes=first, bucket_cap_bytes=cap)
    s = overlap_schedule(backward_s=backward, forward_s=forward, optimizer_s=optimizer, buckets=plan, dp=dp,
                         link=combine_link(alpha=alpha, beta=beta))
    durations = [_ring(dp, b.bytes, alpha, beta) for b in plan]
    starts, ends, step, exposed = _simulate(forward, backward, [b.layers for b in plan], durations, optimizer)
    assert [b.start_s for b in s.buckets] == starts and [b.end_s for b in s.buckets] == ends
    assert s.step_s == step and s.exposed_s == exposed
    assert s.hidden_s + s.exposed_s == s.communication_s == sum(durations)
    assert sum(b.exposed_s for b in s.buckets) == exposed


def test_bad_input_names_the_parameter():
    link = combine_link(alpha=0, beta=0)
    plan = ddp_buckets([1, 1])
    with pytest.raises(InputError, match="backward_s\\[1\\]='-1ms'"):
        overlap_schedule(backward_s=["1ms", "-1ms"], buckets=plan, dp=2, link=link)
    with pytest.raises(InputError, match="backward_s=\\[\\]"):
        overlap_schedule(backward_s=[], buckets=(), dp=2, link=link)
    with pytest.raises(InputError, match="dp=0"):
        overlap_schedule(backward_s=[1, 1], buckets=plan, dp=0, link=link)
    with pytest.raises(InputError, match="buckets hold layers \\[0\\], not each of the 2 layers"):
        overlap_schedule(backward_s=[1, 1], buckets=[Bucket(layers=(0,), bytes=Fraction(1), limit_bytes=Fraction(1))],
                         dp=2, link=link)
    with pytest.raises(InputError, match="optimizer_s='soon'"):
        overlap_schedule(backward_s=[1, 1], buckets=plan, dp=2, link=link, optimizer_s="soon")
