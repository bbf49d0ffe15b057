"""Pipeline schedules: the simulated timelines checked against the dependencies and the closed forms.

Every timeline is first checked on its own terms (``check_timeline``): every operation present
once, durations as given, no device running two operations at once, every dependency respected
(plus the communication time between devices), and no operation started later than its device
and inputs allow.  The makespans and bubbles are then compared with the closed forms of the
papers, derived in the comments:

* GPipe and 1F1B: the first micro-batch needs (P−1)F to reach the last stage and the last one
  (P−1)B to come back; in between every stage is busy M(F+B): total (M+P−1)(F+B), idle
  (P−1)(F+B) per stage, bubble fraction (P−1)/(M+P−1), over the ideal (P−1)/M.
* Interleaved with v chunks (Narayanan et al. 2021, §2.2.2): the ramp-up and ramp-down pass
  through chunks of 1/v the work: idle (P−1)(F+B)/v per stage, over the ideal (P−1)/(vM).
* ZB-H1 (Qi et al. 2024, §3.1): the W passes fill the tail: idle (P−1)(F+B−W) per stage, for
  M ≥ P and W ≤ F, B, against 1F1B's (P−1)(F+B+W).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError, UnknownNameError
from costmodel.pipeline import (
    CITED,
    DEFINITIONS,
    MAX_OPERATIONS,
    SCHEDULES,
    Bubble,
    bubble,
    chart_scale,
    format_timeline,
    parse_slots,
)
from costmodel.pipeline.orders import order, resolve_schedule
from costmodel.pipeline.text import MAX_CHART_WIDTH

times = st.fractions(min_value=Fraction(1, 4), max_value=4, max_denominator=4)
small = st.integers(min_value=1, max_value=7)


def check_timeline(b: Bubble) -> None:
    """The timeline obeys the model: derived from the result alone, not from the simulator."""
    p, m, v = b.stages, b.microbatches, b.chunks
    split = b.schedule == "zb-h1"
    length = {"F": b.forward_slots / v, "W": b.weight_slots / v,
              "B": (b.backward_slots if split else b.backward_slots + b.weight_slots) / v}
    ops = {}
    for stage in b.timeline:
        prev = Fraction(0)
        for op in stage.ops:
            assert op.end - op.start == length[op.op]
            assert op.start >= prev, "a device runs one operation at a time, in order"
            prev = op.end
            key = (op.op, op.chunk * p + stage.stage, op.microbatch)
            assert key not in ops
            ops[key] = (stage.stage, op)
        assert stage.busy_slots == m * (b.forward_slots + b.backward_slots + b.weight_slots)
        assert stage.busy_slots + stage.idle_slots == b.total_slots
    kinds = "FBW" if split else "FB"
    assert set(ops) == {(k, vs, j) for k in kinds for vs in range(p * v) for j in range(m)}
    assert b.total_slots == max(op.end for _, op in ops.values())

    def inputs(kind: str, vs: int, j: int) -> list[tuple[str, int, int]]:
        if kind == "F":
            return [("F", vs - 1, j)] if vs else []
        if kind == "B":
            return [("F", vs, j)] + ([("B", vs + 1, j)] if vs + 1 < p * v else [])
        return [("B", vs, j)]

    for stage in b.timeline:
        prev = Fraction(0)
        for op in stage.ops:
            earliest = prev
            for dep in inputs(op.op, op.chunk * p + stage.stage, op.microbatch):
                where, before = ops[dep]
                arrives = before.end + (b.comm_slots if where != stage.stage else 0)
                assert op.start >= arrives, f"{op} starts before its input {before} arrives"
                earliest = max(earliest, arrives)
            assert op.start == earliest, f"{op} could start at {earliest}"
            prev = op.end


# -- closed forms ---------------------------------------------------------------------------------


@given(p=small, m=st.integers(1, 12), f=times, b=times)
def test_gpipe_and_1f1b_closed_form(p, m, f, b):
    for schedule in ("gpipe", "1f1b"):
        result = bubble(schedule, p, microbatches=m, forward_slots=f, backward_slots=b)
        check_timeline(result)
        assert result.total_slots == (m + p - 1) * (f + b)
        assert all(s.idle_slots == (p - 1) * (f + b) for s in result.timeline)
        assert result.bubble_fraction == Fraction(p - 1, m + p - 1)
        assert result.bubble_over_ideal == Fraction(p - 1, m)


@given(p=small, m=st.integers(1, 12))
def test_defaults_give_three_slots_per_microbatch(p, m):
    # F = 1, B = 2: (M + P − 1)·3 slots
    assert bubble("1f1b", p, microbatches=m).total_slots == 3 * (m + p - 1)


@given(p=small, k=st.integers(1, 4), v=st.integers(1, 4), f=times, b=times)
def test_interleaved_closed_form(p, k, v, f, b):
    m = k * p
    result = bubble("interleaved", p, microbatches=m, chunks=v, forward_slots=f, backward_slots=b)
    check_timeline(result)
    # the bubble time (P−1)(F+B) of 1F1B shrinks v-fold
    assert all(s.idle_slots == Fraction(p - 1, v) * (f + b) for s in result.timeline)
    assert result.total_slots == m * (f + b) + Fraction(p - 1, v) * (f + b)
    assert result.bubble_over_ideal == Fraction(p - 1, v * m)
    assert result.bubble_fraction == Fraction(p - 1, v * m + p - 1)


@given(p=small, extra=st.integers(0, 8), f=times, b=times, w=times)
def test_zb_h1_closed_form(p, extra, f, b, w):
    m = p + extra
    w = min(w, f, b)  # the paper's regime: W no longer than F or B
    result = bubble("zb-h1", p, microbatches=m, forward_slots=f, backward_slots=b, weight_slots=w)
    check_timeline(result)
    assert all(s.idle_slots == (p - 1) * (f + b - w) for s in result.timeline)
    assert result.total_slots == m * (f + b + w) + (p - 1) * (f + b - w)
    # 1F1B on the same work (B + W as one backward) idles (P−1)(F+B+W)
    flush = bubble("1f1b", p, microbatches=m, forward_slots=f, backward_slots=b, weight_slots=w)
    assert all(s.idle_slots == (p - 1) * (f + b + w) for s in flush.timeline)
    assert flush.idle_slots - result.idle_slots == 2 * p * (p - 1) * w


@given(schedule=st.sampled_from(SCHEDULES), p=small, m=st.integers(1, 10),
       durations=st.tuples(times, times, st.sampled_from([Fraction(0), Fraction(1, 2), Fraction(1)]), times))
def test_every_timeline_obeys_the_dependencies(schedule, p, m, durations):
    f, b, w, c = durations
    if schedule == "interleaved":
        m = p * ((m + p - 1) // p)
    result = bubble(schedule, p, microbatches=m, forward_slots=f, backward_slots=b, weight_slots=w,
                    comm_slots=c)
    check_timeline(result)
    # the first micro-batch crosses P − 1 links forward and P − 1 back, on top of the comm-free makespan
    free = bubble(schedule, p, microbatches=m, forward_slots=f, backward_slots=b, weight_slots=w)
    assert result.total_slots >= free.total_slots + 2 * (p - 1) * c
    if schedule == "gpipe":  # GPipe's two phases are each one chain: exactly that much longer
        assert result.total_slots == free.total_slots + 2 * (p - 1) * c


def test_zb_h1_beats_1f1b_by_the_papers_ratio():
    # F = B = W = 1 (the paper's setting): ZB-H1 idles (P−1)·1, 1F1B (P−1)·3: a third
    zb = bubble("zb-h1", 8, microbatches=24)
    flush = bubble("1f1b", 8, microbatches=24, backward_slots=1, weight_slots=1)
    assert zb.idle_slots * 3 == flush.idle_slots
    assert zb.timeline[0].idle_slots == 7


def test_one_stage_has_no_bubble():
    for schedule in SCHEDULES:
        result = bubble(schedule, 1, microbatches=3)
        assert result.bubble_fraction == result.bubble_over_ideal == 0
        assert result.total_slots == result.ideal_slots


def test_interleaved_with_one_chunk_is_1f1b():
    a = bubble("interleaved", 4, microbatches=8, chunks=1)
    b = bubble("1f1b", 4, microbatches=8)
    assert [s.ops for s in a.timeline] == [s.ops for s in b.timeline]
    assert "plain 1F1B" in a.notes[0]


def test_interleaved_wraps_from_the_last_device_to_the_first():
    result = bubble("interleaved", 2, microbatches=2, chunks=2)
    first = {(op.op, op.microbatch, op.chunk): op for op in result.timeline[0].ops}
    last = {(op.op, op.microbatch, op.chunk): op for op in result.timeline[1].ops}
    # micro-batch 0: chunk 0 on GPU 0 (½ slot), on GPU 1, then chunk 1 back on GPU 0
    assert first["F", 0, 0].end == Fraction(1, 2)
    assert last["F", 0, 0].start == Fraction(1, 2)
    assert first["F", 0, 1].start >= last["F", 0, 0].end == 1


# -- in-flight micro-batches ----------------------------------------------------------------------


@given(p=small, m=st.integers(1, 12))
def test_peak_inflight(p, m):
    assert bubble("gpipe", p, microbatches=m).peak_inflight_microbatches == (m,) * p
    flush = bubble("1f1b", p, microbatches=m)
    assert flush.peak_inflight_microbatches == tuple(min(p - s, m) for s in range(p))
    assert flush.max_inflight_microbatches == min(p, m)
    if m >= p:  # ZB-H1 keeps 1F1B's peak of P, and holds it on every stage until the W passes
        assert bubble("zb-h1", p, microbatches=m).peak_inflight_microbatches == (p,) * p


def test_interleaved_holds_more_than_1f1b():
    # P = 4, v = 2, M = 8: GPU 0 warms up with 2(P−1) + (v−1)P = 10 chunk-forwards and runs an 11th
    # before its first backward; a chunk is half a stage: 11/2 micro-batches
    result = bubble("interleaved", 4, microbatches=8, chunks=2)
    assert result.peak_inflight_microbatches == (Fraction(11, 2), Fraction(9, 2), Fraction(7, 2), Fraction(5, 2))
    # M = P: the same warm-up count (Megatron-LM since 4295be1a6c), capped at the M·v = 8
    # chunk-forwards there are: stages 0 and 1 run all 8 first (4 micro-batches), stage 2 warms up
    # with 6 and runs a 7th before its first backward (7/2), stage 3 with 4 and a 5th (5/2)
    flat = bubble("interleaved", 4, microbatches=4, chunks=2)
    assert flat.peak_inflight_microbatches == (4, 4, Fraction(7, 2), Fraction(5, 2))
    # ... in the same total time as running every forward first did, the closed form's
    assert flat.total_slots == 4 * 3 + Fraction(3, 2) * 3


def megatron_interleaved(p: int, m: int, v: int, rank: int) -> list[tuple[str, int, int]]:
    """Megatron-LM's forward_backward_pipelining_with_interleaving, transcribed: the schedule table
    (get_schedule_table), the warm-up count (get_pp_rank_microbatches), the warm-up, 1F1B and
    cool-down loops, and backwards popping each chunk's oldest input (input_tensors[c].pop(0));
    microbatch_group_size_per_vp_stage at its default, P."""
    group = p  # ModelParallelConfig.__post_init__: microbatch_group_size_per_vp_stage = P
    if group > m or group < p:
        raise ValueError("The number of contiguous micro-batches in a virtual pipeline stage ...")
    if 0 < m % group < p:
        raise RuntimeError("The remainder of M ... should be 0, or larger than or equal to P")
    table = []
    for lo in range(0, m, group):
        hi = m if lo + group >= m else lo + group
        table += [(j, c) for c in range(v) for j in range(lo, hi)]
    total = m * v
    warmup = (p - rank - 1) * 2 + (v - 1) * group
    warmup = min(warmup, total)  # get_pp_rank_microbatches: all warm-up when it covers every step
    remaining = total - warmup
    held: list[list[int]] = [[] for _ in range(v)]
    steps: list[tuple[str, int, int]] = []

    def forward(k: int) -> None:
        j, c = table[k]
        held[c].append(j)
        steps.append(("F", j, c))

    def backward(k: int) -> None:
        c = v - table[k % total][1] - 1
        steps.append(("B", held[c].pop(0), c))

    for k in range(warmup):
        forward(k)
    for k in range(remaining):
        forward(k + warmup)
        backward(k)
    for k in range(remaining, total):
        backward(k)
    return steps


@pytest.mark.parametrize("p", [2, 3, 4, 5])
@pytest.mark.parametrize("v", [2, 3, 4])
@pytest.mark.parametrize("m", range(1, 16))
def test_interleaved_is_megatrons_order_and_refuses_what_it_refuses(p, m, v):
    try:
        expected = [megatron_interleaved(p, m, v, s) for s in range(p)]
    except (ValueError, RuntimeError):
        with pytest.raises(InputError, match="is not a multiple of stages"):
            bubble("interleaved", p, microbatches=m, chunks=v)
        return
    assert [order("interleaved", s, stages=p, microbatches=m, chunks=v) for s in range(p)] == expected
    result = bubble("interleaved", p, microbatches=m, chunks=v)
    check_timeline(result)
    assert [[(o.op, o.microbatch, o.chunk) for o in s.ops] for s in result.timeline] == expected


# -- orders ---------------------------------------------------------------------------------------


def test_orders():
    def text(*args, **kwargs):
        return " ".join(f"{op}{j}" + (f":{c}" if c else "") for op, j, c in order(*args, **kwargs))

    assert text("gpipe", 1, stages=3, microbatches=3) == "F0 F1 F2 B0 B1 B2"
    assert text("1f1b", 0, stages=3, microbatches=5) == "F0 F1 F2 B0 F3 B1 F4 B2 B3 B4"
    assert text("1f1b", 2, stages=3, microbatches=5) == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4"
    # ZB-H1 stage 0 of 3: 2 warm-up forwards, then F B W triples, then B W pairs
    assert text("zb-h1", 0, stages=3, microbatches=4) == "F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3"
    # ... and stage 2 delays its W by 2: W0 after B2
    assert text("zb-h1", 2, stages=3, microbatches=4) == "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3"
    # Megatron-LM interleaved, P = 2, v = 2, M = 4, GPU 1: warm-up (v−1)P = 2 chunk-forwards
    assert text("interleaved", 1, stages=2, microbatches=4, chunks=2) == \
        "F0 F1 F0:1 B0:1 F1:1 B1:1 F2 B0 F3 B1 F2:1 B2:1 F3:1 B3:1 B2 B3"


@pytest.mark.parametrize(("name", "canonical"), [
    ("gpipe", "gpipe"), ("GPipe", "gpipe"), ("1f1b", "1f1b"), ("pipedream-flush", "1f1b"),
    ("PipeDream_Flush", "1f1b"), ("interleaved", "interleaved"), ("interleaved-1f1b", "interleaved"),
    ("vpp", "interleaved"), ("zb-h1", "zb-h1"), ("zb", "zb-h1"), ("zero-bubble", "zb-h1"), ("ZB_H1", "zb-h1"),
])
def test_aliases(name, canonical):
    assert resolve_schedule(name) == canonical
    assert bubble(name, 2, microbatches=2).schedule == canonical


# -- results --------------------------------------------------------------------------------------


def test_exact_fractions_for_rational_input():
    result = bubble("1f1b", 3, microbatches=5, forward_slots="1/3", backward_slots="2/3")
    # (5 + 3 − 1)·(1/3 + 2/3) = 7
    assert result.total_slots == 7
    assert isinstance(result.total_slots, Fraction)
    assert result.timeline[2].ops[0].start == Fraction(2, 3)
    assert bubble("gpipe", 2, microbatches=2, forward_slots=Decimal("0.5")).forward_slots == Fraction(1, 2)
    assert bubble("gpipe", 2, microbatches=2, forward_slots=0.25).forward_slots == Fraction(1, 4)


def test_to_dict_is_json_native_with_both_definitions():
    data = bubble("1f1b", 4, microbatches=8).to_dict()
    json.dumps(data, allow_nan=False)
    assert data["bubble_fraction"] == pytest.approx(3 / 11)
    assert data["bubble_fraction_exact"] == "3/11"
    assert data["bubble_over_ideal"] == 3 / 8
    assert data["bubble_over_ideal_exact"] == "3/8"
    assert data["definitions"] == DEFINITIONS
    assert data["definitions"]["bubble_fraction"].startswith("idle / total")
    assert data["definitions"]["bubble_over_ideal"].startswith("idle / ideal")
    assert (data["total_slots"], data["ideal_slots"], data["idle_slots"], data["busy_slots"]) == (33, 24, 36, 96)
    assert data["peak_inflight_microbatches"] == [4, 3, 2, 1]
    assert data["max_inflight_microbatches"] == 4
    assert data["per_stage"][0] == {"stage": 0, "busy_slots": 24, "idle_slots": 9, "peak_inflight_microbatches": 4}
    assert data["timeline"][3][:2] == [{"op": "F", "microbatch": 0, "chunk": 0, "start": 3, "end": 4},
                                       {"op": "B", "microbatch": 0, "chunk": 0, "start": 4, "end": 6}]
    assert [s["key"] for s in data["sources"]] == ["narayanan2021flush", "huang2019"]


def test_interleaved_to_dict_has_fractional_values():
    data = bubble("interleaved", 4, microbatches=8, chunks=2).to_dict()
    assert data["total_slots"] == 28.5
    assert data["peak_inflight_microbatches"] == [5.5, 4.5, 3.5, 2.5]
    assert data["timeline"][0][0] == {"op": "F", "microbatch": 0, "chunk": 0, "start": 0, "end": 0.5}


def test_communication_note():
    assert "idle" in bubble("gpipe", 2, microbatches=2, comm_slots=1).notes[0]
    assert bubble("gpipe", 2, microbatches=2).notes == ()


def test_few_microbatches_notes():
    assert "every forward" in bubble("1f1b", 4, microbatches=2).notes[0]
    assert "M ≥ P" in bubble("zb-h1", 4, microbatches=2).notes[0]


def test_citations():
    keys = [c.key for c in CITED]
    assert keys == ["huang2019", "narayanan2021flush", "narayanan2021megatron", "qi2024"]
    used = {cited.citation.key for s in SCHEDULES for cited in bubble(s, 2, microbatches=2).sources}
    assert set(keys) <= used
    assert all(c.url and c.year and c.venue for c in CITED)


# -- text timelines -------------------------------------------------------------------------------


def test_format_timeline_to_scale():
    lines = format_timeline(bubble("gpipe", 2, microbatches=2))
    # F = 1 slot = 3 characters, B = 2 slots = 6, one · per idle slot: GPU 0's B0 waits for
    # GPU 1's, which ends at 1 + 1 + 1 + 2 = 5; GPU 1 idles while GPU 0 runs B1 (7 to 9)
    assert lines == ("GPU 0: F0 F1 ·  ·  ·  B0─── B1───",
                     "GPU 1: ·  F0 F1 B0─── B1─── ·  ·")


def test_format_timeline_with_fractions_and_chunks():
    lines = format_timeline(bubble("interleaved", 2, microbatches=2, chunks=2))
    assert lines[0].startswith("GPU 0: F0── F1── F0:1")
    # zero-time weight gradients are left out
    assert "W" not in "".join(format_timeline(bubble("zb-h1", 2, microbatches=2, weight_slots=0)))
    assert format_timeline(bubble("zb-h1", 2, microbatches=2), to_scale=False)[1] == "GPU 1: · F0 B0 F1 B1 W0 W1"


def test_format_timeline_is_the_same_for_times_scaled_by_a_constant():
    base = bubble("1f1b", 4, microbatches=4)
    for factor in ("1e-31", "1e99"):
        k = Fraction(factor)
        scaled = bubble("1f1b", 4, microbatches=4, forward_slots=k, backward_slots=2 * k)
        assert scaled.total_slots == 21 * k
        assert format_timeline(scaled) == format_timeline(base)
        assert chart_scale(scaled, 80) == (k * chart_scale(base, 80)[0], True)


@pytest.mark.parametrize(("kwargs", "width"), [
    ({"forward_slots": "1e-7"}, 80), ({"forward_slots": "1e-31"}, 60), ({"forward_slots": "1e99"}, 80),
    ({"comm_slots": "1e-9"}, 80), ({"backward_slots": "1.0001"}, 100), ({"comm_slots": "1e-300"}, 80),
])
def test_format_timeline_in_proportion_fits_the_width(kwargs, width):
    b = bubble("1f1b", 4, microbatches=4, **kwargs)
    lines = format_timeline(b, width=width)
    assert max(map(len, lines)) <= width
    head = len("GPU 0: ")
    k = Fraction(width - head) / b.total_slots  # columns per slot
    for line, stage in zip(lines, b.timeline, strict=True):
        for op in stage.ops:
            start, end = int(op.start * k), int(op.end * k)
            if end - start > len(op.label):  # drawn with its label where the simulation put it
                assert line[head + start:head + start + len(op.label)] == op.label
    default = format_timeline(b)  # no width: at most MAX_CHART_WIDTH columns, never one per tiny tick
    assert max(map(len, default)) <= head + MAX_CHART_WIDTH


def test_chart_scale_says_when_a_chart_cannot_show_the_labels():
    b = bubble("1f1b", 4, microbatches=4, forward_slots="1e-7")
    assert chart_scale(b, 80) is None  # the forwards are narrower than a column
    slots, on_grid = chart_scale(bubble("1f1b", 4, microbatches=4, comm_slots="1e-9"), 80)
    assert not on_grid and slots == Fraction(2100000001, 100000000) / 73


def test_format_timeline_pads_the_stage_numbers():
    lines = format_timeline(bubble("gpipe", 11, microbatches=1), to_scale=False)
    assert lines[0].startswith("GPU  0: F0")
    assert lines[10].startswith("GPU 10: · F0")


# -- input ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "value"), [
    ("1", Fraction(1)), ("1.5", Fraction(3, 2)), (" 2/3 ", Fraction(2, 3)), ("1e-1", Fraction(1, 10)),
    ("0", Fraction(0)), (".5", Fraction(1, 2)), (3, Fraction(3)), (Fraction(1, 7), Fraction(1, 7)),
])
def test_parse_slots(text, value):
    assert parse_slots(text) == value


BAD = [
    # (arguments, exception, message fragment)
    (("1f1b", 0), {}, InputError, "stages=0 is not a positive integer; a pipeline has at least 1 stage"),
    (("1f1b", -2), {}, InputError, "stages=-2 is not a positive integer"),
    (("1f1b", 2.5), {}, InputError, "stages=2.5 is not a positive integer"),
    (("1f1b", True), {}, InputError, "stages=True is not a positive integer"),
    (("1f1b", 4), {"microbatches": 0}, InputError, "microbatches=0 is not a positive integer"),
    (("gpip", 4), {}, UnknownNameError, "unknown schedule 'gpip'; did you mean 'gpipe'?"),
    (("zero-bubbles", 4), {}, UnknownNameError, "did you mean 'zero-bubble'?"),
    (("frobnicate", 4), {}, UnknownNameError, "unknown schedule 'frobnicate'; choose from gpipe, 1f1b"),
    ((None, 4), {}, InputError, "None is not a schedule name"),
    (("interleaved", 4), {"microbatches": 6}, InputError,
     "microbatches=6 is not a multiple of stages=4; interleaved 1F1B needs one, e.g. microbatches=8, or use 1f1b"),
    (("interleaved", 4), {"chunks": 0}, InputError, "chunks=0 is not a positive integer"),
    (("1f1b", 4), {"chunks": 2}, InputError, "chunks=2 applies only to the interleaved schedule"),
    (("1f1b", 4), {"forward_slots": -1}, InputError, "forward_slots=-1 is negative; times are in slots"),
    (("1f1b", 4), {"backward_slots": "-0.5"}, InputError, "backward_slots='-0.5' is negative"),
    (("zb-h1", 4), {"weight_slots": -1}, InputError, "weight_slots=-1 is negative"),
    (("1f1b", 4), {"comm_slots": -1}, InputError, "comm_slots=-1 is negative"),
    (("1f1b", 4), {"forward_slots": 0}, InputError, "forward_slots=0 is zero; every operation takes time"),
    (("1f1b", 4), {"backward_slots": 0}, InputError, "backward_slots=0 is zero"),
    (("1f1b", 4), {"forward_slots": "fast"}, InputError, "forward_slots='fast' is not a number of slots"),
    (("1f1b", 4), {"forward_slots": "1/0"}, InputError, "forward_slots='1/0' divides by zero"),
    (("1f1b", 4), {"forward_slots": "1e999"}, InputError, "outside the times costmodel takes"),
    (("1f1b", 4), {"forward_slots": "1e-301"}, InputError, "outside the times costmodel takes"),
    (("1f1b", 4), {"comm_slots": "1e999999999"}, InputError, "outside the times costmodel takes"),
    (("1f1b", 4), {"forward_slots": float("nan")}, InputError, "forward_slots=nan is not a finite number"),
    (("1f1b", 4), {"forward_slots": float("inf")}, InputError, "is not a finite number"),
    (("1f1b", 4), {"forward_slots": Decimal("NaN")}, InputError, "is not a finite number"),
    (("1f1b", 4), {"forward_slots": True}, InputError, "forward_slots=True is a bool"),
    (("1f1b", 4), {"forward_slots": [1]}, InputError, "forward_slots=[1] is not a number of slots"),
    (("1f1b", 1000), {"microbatches": 1000}, InputError, f"more than {MAX_OPERATIONS} to simulate"),
]


@pytest.mark.parametrize(("args", "kwargs", "exc", "message"), BAD, ids=[b[3][:50] for b in BAD])
def test_bad_input(args, kwargs, exc, message):
    kwargs = {"microbatches": 4, **kwargs}
    with pytest.raises(exc) as info:
        bubble(*args, **kwargs)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


@given(st.text(max_size=20))
def test_parse_slots_raises_only_input_error(text):
    with contextlib.suppress(InputError):
        assert parse_slots(text) >= 0


def test_import_is_light():
    code = ("import sys, costmodel.pipeline; "
            "print(sorted(m for m in ('numpy', 'sympy', 'rich', 'typer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
