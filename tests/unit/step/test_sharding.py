"""ZeRO stages, FSDP prefetch, the compute slowdown and the memory of a step, by hand and against
independent computations: the single-replica overlap schedule, the pipeline scheduler, the memory
calculator, and the integral of the compute rate."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.pipeline.simulate import simulate_devices, simulate_stages
from costmodel.step import TransformerShape, ddp_buckets, overlap_schedule, step
from costmodel.step.stream import CommStream
from costmodel.training.memory import training_memory

MS = Fraction(1, 1000)
MIB = 2**20
LINK = combine_link(alpha=0, beta="1ns/B")  # a 1 MiB ring all-reduce over 2 ranks takes 1.048576 ms
HALF = Fraction(MIB, 10**9) / 2  # a 1 MiB ring reduce-scatter or all-gather over 2 ranks
TWO = {"forward_s": ["1ms"] * 2, "backward_s": ["2ms"] * 2, "gradient_bytes": [MIB] * 2, "dp": 2,
       "link": LINK, "bucket_bytes": "1B"}


def _parts(r):
    return (r.compute_s + r.tp_comm_s + r.bubble_s + r.pp_exposed_s + r.dp_exposed_s + r.contention_s
            + r.optimizer_s + r.param_gather_s)


def _spans(r, stage=0):
    return [(x.label, x.start_s, x.end_s) for x in r.communication[stage]]


# -- the device simulation against the single-replica overlap schedule and the pipeline scheduler ----------


@pytest.mark.parametrize("rule", ["ddp", "megatron", "deepspeed"])
@pytest.mark.parametrize("cap", ["1MiB", "3MiB", "64MiB"])
def test_one_device_matches_the_overlap_schedule(rule, cap):
    f = [Fraction(k, 1000) for k in (1, 2, 3, 1, 2)]
    b = [2 * x for x in f]
    grads = [MIB, 2 * MIB, MIB, 3 * MIB, MIB]
    r = step(forward_s=f, backward_s=b, gradient_bytes=grads, dp=4, link=LINK, bucket_bytes=cap, buckets=rule)
    plan = ddp_buckets(grads, bucket_cap_bytes=cap) if rule == "ddp" else None
    if plan is not None:
        s = overlap_schedule(backward_s=b, buckets=plan, dp=4, link=LINK, forward_s=sum(f))
        assert [(t.start_s, t.end_s) for t in s.buckets] == [(x.start_s, x.end_s) for x in r.buckets]
        assert r.step_s == s.step_s
    assert _parts(r) == r.step_s


@pytest.mark.parametrize("schedule,chunks", [("gpipe", None), ("1f1b", None), ("interleaved", 2), ("zb-h1", None)])
def test_devices_run_as_the_pipeline_scheduler_when_nothing_interferes(schedule, chunks):
    v = chunks or 1
    forward = [Fraction(k + 1, 7) for k in range(3 * v)]
    backward = [2 * x for x in forward]
    weight = [x / 3 for x in forward]
    spans = {"F": forward, "B": backward if schedule == "zb-h1" else [b + w for b, w in zip(backward, weight, strict=True)],
             "W": weight}
    ref = simulate_stages(schedule, 3, microbatches=6, chunks=v, forward=forward, backward=backward,
                          weight=weight, comm=Fraction(1, 5))
    got = simulate_devices(schedule, 3, microbatches=6, chunks=v, comm=Fraction(1, 5),
                           execute=lambda s, op, j, c, start: start + spans[op][c * 3 + s])
    assert got == ref


# -- the compute slowdown ------------------------------------------------------------------------------------


def test_slowdown_by_hand():
    # F 0–2 ms; layer 1's backward 2–4 ms, its bucket all-reduces 4–5.048576 ms while layer 0's 2 ms
    # of backward run at half speed for 1.048576 ms (0.524288 ms of work), then 1.475712 ms at full.
    r = step(slowdown="1/2", **TWO)
    ar = Fraction(MIB, 10**9)
    assert _spans(r) == [("bucket 0", 4 * MS, 4 * MS + ar), ("bucket 1", 6 * MS + ar / 2, 6 * MS + 3 * ar / 2)]
    assert r.step_s == 6 * MS + 3 * ar / 2
    assert r.contention_s == ar / 2 and r.dp_exposed_s == ar
    assert _parts(r) == r.step_s


def test_without_communication_nothing_slows():
    r = step(slowdown="0.9", **{**TWO, "link": combine_link(alpha=0, beta=0)})
    assert r.step_s == 6 * MS and r.contention_s == 0


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_slowdown_only_lengthens_the_step(zero):
    shape = TransformerShape(layers=8, hidden=1024, heads=16, sequence=1024, vocabulary=32000)
    kw = {"shape": shape, "dp": 8, "pp": 1 if zero == 3 else 2, "microbatches": 4, "peak_flops": "100e12",
          "zero": zero, "link": combine_link(alpha="20us", bandwidth="10GB/s")}
    plain, slow = step(**kw), step(slowdown="0.2", **kw)
    assert slow.step_s > plain.step_s if zero < 3 else slow.step_s >= plain.step_s  # ZeRO 3 waits on links
    assert slow.step_s - plain.step_s == slow.contention_s
    assert _parts(slow) == slow.step_s
    for a, b in zip(plain.timeline, slow.timeline, strict=True):
        assert all(y.end >= x.end for x, y in zip(a, b, strict=True))


@given(busy=st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10)), max_size=6),
       start=st.integers(0, 40), work=st.integers(0, 40), u=st.fractions(0, Fraction(9, 10)))
def test_compute_does_its_work_at_the_integrated_rate(busy, start, work, u):
    stream = CommStream(u)
    intervals = [stream.issue(Fraction(at), Fraction(d)) for at, d in busy]
    end = stream.compute(Fraction(start), Fraction(work))

    def done(t0, t1):  # the work the rate allows between t0 and t1, interval by interval
        slow = sum((max(Fraction(0), min(t1, b) - max(t0, a)) for a, b in intervals), Fraction(0))
        return (t1 - t0) - slow * u

    assert end >= start
    assert done(Fraction(start), end) == work


# -- ZeRO 1, 2 and 3 -------------------------------------------------------------------------------------------


def test_zero1_reduce_scatters_once_and_gathers_the_parameters_after_the_optimizer():
    r = step(zero=1, microbatches=2, optimizer_s="1ms", **TWO)
    # the last micro-batch's backward ends at 12 ms; its buckets are ready at 10 and 12 ms
    assert [(x.collective, x.start_s, x.end_s) for x in r.communication[0]] == [
        ("reduce-scatter", 10 * MS, 10 * MS + HALF), ("reduce-scatter", 12 * MS, 12 * MS + HALF),
        ("allgather", 13 * MS + HALF, 13 * MS + 2 * HALF), ("allgather", 13 * MS + 2 * HALF, 13 * MS + 3 * HALF)]
    assert r.dp_exposed_s == HALF and r.param_gather_s == 2 * HALF
    assert r.step_s == 13 * MS + 3 * HALF == _parts(r)


def test_megatron_overlaps_the_parameter_gather_with_the_next_forward():
    # a bucket per layer; layer 0's bucket (the second formed) is gathered first, at 0–h; layer 0 waits
    # for it; layer 1's is gathered one bucket ahead, h–2h, hidden under layer 0's forward
    kw = {**TWO, "buckets": "megatron", "zero": 1, "microbatches": 2}
    after, overlap = step(**kw), step(param_gather="overlap", **kw)
    h = HALF
    assert [(x.label, x.start_s, x.end_s) for x in overlap.communication[0]][:2] == [
        ("params 1", 0, h), ("params 0", h, 2 * h)]
    assert overlap.timeline[0][0].end == 2 * MS + h  # the forward waited h for its first bucket
    assert overlap.param_gather_s == 0 and after.param_gather_s == 2 * h
    assert overlap.step_s == 12 * MS + 2 * h == after.step_s - h  # the first gather and the last reduce-scatter
    assert overlap.dp_exposed_s == 2 * h and _parts(overlap) == overlap.step_s


def test_zero2_reduce_scatters_every_micro_batch():
    r = step(zero=2, microbatches=2, **TWO)
    assert [(x.collective, x.start_s) for x in r.communication[0]][:4] == [
        ("reduce-scatter", 4 * MS), ("reduce-scatter", 6 * MS), ("reduce-scatter", 10 * MS),
        ("reduce-scatter", 12 * MS)]
    assert r.step_s == 12 * MS + 3 * HALF


def test_fsdp_one_layer_ahead_by_hand():
    # AG0 0–h, AG1 h–2h (prefetched), F0 h–1+h, AG1' at 1+h, F1 1+h–2+h, AG0' at 2+h, B1 2+h–4+h,
    # RS1 4+h–4+2h, B0 4+h–6+h, RS0 6+h–6+2h (ms, h = 0.524288 ms).
    r = step(zero=3, **TWO)
    h = HALF
    assert _spans(r) == [
        ("AG 0 fwd", 0, h), ("AG 1 fwd", h, 2 * h), ("AG 1 bwd", MS + h, MS + 2 * h),
        ("AG 0 bwd", 2 * MS + h, 2 * MS + 2 * h), ("RS 1", 4 * MS + h, 4 * MS + 2 * h),
        ("RS 0", 6 * MS + h, 6 * MS + 2 * h)]
    assert r.step_s == 6 * MS + 2 * h == _parts(r)
    assert r.dp_exposed_s == 2 * h  # the first all-gather and the last reduce-scatter
    assert r.dp_comm_s == 6 * h


def test_fsdp_is_zero_3():
    assert step(zero="fsdp", **TWO) == step(zero=3, **TWO) == step(zero="3", **TWO)


def test_fsdp_without_prefetch_waits_for_every_gather():
    r = step(zero=3, prefetch=0, **TWO)
    h = HALF
    # each all-gather is issued when the device reaches its layer; RS1 goes before AG0's backward gather
    assert r.step_s == 6 * MS + 6 * h
    assert [x.label for x in r.communication[0]] == ["AG 0 fwd", "AG 1 fwd", "AG 1 bwd", "RS 1", "AG 0 bwd",
                                                      "RS 0"]


def test_fsdp_with_a_long_backward_exposes_the_first_gather_and_the_last_reduce_scatter():
    r = step(zero=3, prefetch=1, forward_s=["10ms"] * 6, backward_s=["20ms"] * 6, gradient_bytes=[MIB] * 6,
             dp=2, link=LINK, microbatches=3)
    assert r.dp_exposed_s == 2 * HALF


@pytest.mark.parametrize("kwargs,message", [
    ({"zero": 4}, "zero=4 is not a ZeRO stage"),
    ({"zero": True}, "zero=True is not a ZeRO stage"),
    ({"zero": 3, "pp": 2, "activation_bytes": "1MiB"}, "zero=3 with pp=2"),
    ({"prefetch": 2}, "prefetch=2 applies only to zero=3"),
    ({"zero": 3, "prefetch": -1}, "prefetch"),
    ({"slowdown": 1}, "slowdown=1 is not a share"),
    ({"slowdown": "-0.1"}, "slowdown=-0.1 is not a share"),
    ({"slowdown": "fast"}, "slowdown='fast'"),
    ({"param_gather": "overlap"}, "param_gather=overlap applies to zero=1 or 2"),
    ({"param_gather": "later", "zero": 1}, "unknown parameter gather 'later'"),
])
def test_bad_sharding_input(kwargs, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        step(**{**TWO, **kwargs})


# -- memory -------------------------------------------------------------------------------------------------------


SHAPE = TransformerShape(layers=24, hidden=2048, heads=16, sequence=2048, vocabulary=51200)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
@pytest.mark.parametrize("recompute", ["none", "full"])
def test_memory_of_one_stage_is_the_memory_calculators(zero, recompute):
    # unfused attention stores what Korthikanti et al.'s table 2 counts; the last stage also holds one
    # micro-batch's logits and their fp32 copy, (2 + 4)·s·b·V/t, and full recomputation rebuilds one whole layer
    r = step(shape=SHAPE, dp=8, tp=2, zero=zero, recompute=recompute, micro_batch=2, peak_flops="312e12",
             link=LINK, attention="unfused")
    m = training_memory(SHAPE.parameters, dtype="bf16", dp=8, zero=zero, tp=2, seq=2048, batch=2, hidden=2048,
                        heads=16, recompute=recompute, layers=24)
    whole = training_memory(SHAPE.parameters, dtype="bf16", dp=8, zero=zero, tp=2, seq=2048, batch=2,
                            hidden=2048, heads=16, layers=1)
    logits = 6 * 2048 * 2 * Fraction(SHAPE.vocabulary, 2)
    rebuilt = whole.activations.bytes_total if recompute == "full" else 0
    # ZeRO 3 also holds the gathered weights of the layer computing and the one prefetched (bf16), and one
    # layer's unsharded gradient
    gathered = (2 * 2 + 2) * Fraction(SHAPE.layer_parameters, 2) if zero == 3 else 0
    (device,) = r.memory
    assert device.model_state_bytes == m.zero.model_state_bytes_per_gpu + gathered
    assert device.activation_bytes == m.activations.bytes_total + logits + rebuilt
    assert device.total_bytes == device.model_state_bytes + device.activation_bytes


def test_memory_of_a_pipeline_holds_the_micro_batches_in_flight():
    r = step(shape=SHAPE, dp=2, pp=4, microbatches=8, peak_flops="312e12", link=LINK, zero=1, attention="unfused")
    assert [d.inflight for d in r.memory] == [4, 3, 2, 1]  # 1F1B: stage s holds pp − s (Narayanan et al.)
    per_stage = 6 * SHAPE.layer_parameters
    embedding = SHAPE.vocabulary * SHAPE.hidden
    assert [d.parameters for d in r.memory] == [per_stage + embedding, per_stage, per_stage, per_stage + embedding]
    one = training_memory(per_stage, dtype="bf16", dp=2, zero=1, seq=2048, batch=1, hidden=2048, heads=16,
                          layers=6)
    assert r.memory[1].total_bytes == one.zero.model_state_bytes_per_gpu + 3 * one.activations.bytes_total


def test_time_mode_has_no_memory():
    assert step(**TWO).memory is None


@pytest.mark.parametrize(("schedule", "v"), [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("zb-h1", 1)])
@pytest.mark.parametrize(("zero", "overlap", "slowdown"), [
    (0, None, Fraction(0)), (1, None, Fraction(0)), (2, None, Fraction(0)),
    (0, False, Fraction(1, 10)), (1, False, Fraction(1, 10))])
def test_replaying_the_gradient_operations_issues_what_running_every_device_does(schedule, v, zero, overlap,
                                                                                   slowdown):
    # the shortcut a step takes when the data-parallel traffic leaves the compute alone (no slowdown, or
    # ZeRO 0 and 1 reducing after the backward, when a device has nothing left to compute), against the
    # devices run operation by operation inside the pipeline scheduler
    from costmodel.pipeline.orders import SPLIT
    from costmodel.pipeline.simulate import simulate_devices
    from costmodel.step import model
    from costmodel.step.device import Unit
    from costmodel.step.frameworks import data_parallel

    pp, m = 2, 4
    units = [[Unit(forward=Fraction(k + 1, 1000), backward=Fraction(2 * k + 3, 1000),
                   weight=Fraction(k + 1, 1000) if schedule in SPLIT else Fraction(0),
                   gradient_bytes=Fraction((k % 3 + 1) * MIB)) for k in range(vs * 2, vs * 2 + 2)]
             for vs in range(pp * v)]
    send = Fraction(1, 1000)
    price = model._pricer(LINK, dp=4, algorithm="ring", notes=[])
    mode = data_parallel(framework=None, zero=zero, buckets="ddp", bucket_bytes=Fraction(3 * MIB),
                         overlap_grad_reduce=overlap, param_gather="after", align_param_gather=True,
                         prefetch=None, dtype="bf16", pp=pp)
    kw = {"name": schedule, "pp": pp, "v": v, "m": m, "dp": 4, "mode": mode, "price": price,
          "element": Fraction(2)}
    ran = model._devices(units, **kw, slowdown=slowdown)
    timeline = simulate_devices(schedule, pp, microbatches=m, chunks=v, comm=send,
                                execute=lambda s, op, j, c, start: ran[s].run(op, j, c, start))
    replayed = model._devices(units, **kw, slowdown=Fraction(0))
    forward = [sum((u.forward for u in us), Fraction(0)) for us in units]
    weight = [sum((u.weight for u in us), Fraction(0)) for us in units]
    backward = [sum((u.backward for u in us), Fraction(0)) - w for us, w in zip(units, weight, strict=True)]
    pipeline = simulate_stages(schedule, pp, microbatches=m, chunks=v, forward=forward, backward=backward,
                               weight=weight, comm=send)
    assert pipeline == timeline
    model._replay(replayed, pipeline)
    assert [d.issued for d in replayed] == [d.issued for d in ran]
    assert [d.end for d in replayed] == [d.end for d in ran]
    assert all(d.issued for d in ran)


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("zb-h1", 1)])
@pytest.mark.parametrize("kw", [
    {"zero": 0, "slowdown": "0.1"},
    {"zero": 2, "slowdown": "0.2"},
    {"zero": 1, "param_gather": "overlap", "slowdown": "0.1", "framework": "megatron"},
    {"zero": 1, "param_gather": "overlap", "align_param_gather": False, "framework": "megatron"},
], ids=["ddp-slowed", "zero2-slowed", "gather-aligned", "gather-staggered"])
def test_the_settled_prefix_changes_nothing(schedule, v, kw, monkeypatch):
    """The devices simulated from their first collective on, against every operation simulated."""
    from costmodel.step import model

    args = {"forward_s": [f"{k + 1}ms" for k in range(8)], "backward_s": [f"{2 * k + 3}ms" for k in range(8)],
            "gradient_bytes": ["3MiB", "1MiB"] * 4, "activation_bytes": "1MiB", "dp": 4, "pp": 2,
            "microbatches": 4, "schedule": schedule, "link": LINK, "bucket_bytes": "2MiB",
            **({"chunks": v} if v > 1 else {}), **kw}
    kept = []

    def recorded(timeline, first, chunks):
        prefix = real(timeline, first, chunks=chunks)
        kept.append(sum(map(len, prefix)))
        return prefix

    real = model.settled_prefix
    monkeypatch.setattr(model, "settled_prefix", recorded)
    fast = step(**args)
    # without parameter gathers (each stage's first forward waits for one) the first operations are the
    # pipeline's and are taken from it; with them every device meets a collective at once, and the pipeline's
    # timeline is not even made
    assert (sum(kept) > 0) == ("param_gather" not in kw)
    monkeypatch.setattr(model, "settled_prefix", lambda timeline, first, chunks: ())
    full = step(**args)
    assert fast.timeline == full.timeline and fast.communication == full.communication
    assert fast.step_s == full.step_s and fast.contention_s == full.contention_s


@pytest.mark.parametrize(("schedule", "v"), [("1f1b", 1), ("interleaved", 2), ("zb-h1", 1)])
@pytest.mark.parametrize("kw", [
    {"zero": 1, "param_gather": "overlap", "framework": "megatron", "overlap_grad_reduce": True},
    {"zero": 1, "param_gather": "overlap", "align_param_gather": False, "framework": "megatron"},
    {"zero": 3, "framework": "fsdp"},
], ids=["gather-aligned", "gather-staggered", "fsdp"])
def test_the_run_without_the_slowdown_in_integer_ticks_is_the_step_without_it(schedule, v, kw):
    """The slowed step's end less what the slowdown adds (its run without the slowdown, simulated in
    integer ticks) is the end of the same step priced without a slowdown (simulated in fractions)."""
    if kw["zero"] == 3 and schedule != "1f1b":
        pytest.skip("ZeRO 3 runs one pipeline stage")
    args = {"forward_s": [f"{k + 1}ms" for k in range(8)], "backward_s": [f"{2 * k + 3}ms" for k in range(8)],
            "gradient_bytes": ["3MiB", "1MiB"] * 4, "activation_bytes": "1MiB", "dp": 4,
            "pp": 1 if kw["zero"] == 3 else 2, "microbatches": 4, "schedule": schedule, "link": LINK,
            "bucket_bytes": "2MiB", **({"chunks": v} if v > 1 else {}), **kw}
    slowed = step(**args, slowdown="1/7")
    plain = step(**args, slowdown="0")
    assert slowed.contention_s > 0
    assert slowed.step_s - slowed.contention_s == plain.step_s
    assert slowed.dp_exposed_s == plain.dp_exposed_s
