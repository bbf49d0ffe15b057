"""Sweeps of one knob of a step: each point is the step priced alone, the best does the most work per
GPU-second, bad points skip."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.links import resolve_link
from costmodel.params import combine_link
from costmodel.step import KNOBS, TransformerShape, step, sweep_step
from costmodel.step.sweep import parse_values

LINK = combine_link(alpha="10us", beta="1ns/B")
TIMES = {"forward_s": ["1ms"] * 8, "backward_s": ["2ms"] * 8, "gradient_bytes": ["4MiB"] * 8,
         "activation_bytes": "1MiB", "tokens": 2048, "link": LINK}
SHAPE = {"shape": TransformerShape(layers=8, hidden=1024, heads=16, sequence=512, vocabulary=32000),
         "peak_flops": 312 * 10**12, "efficiency": "0.5", "link": resolve_link("allreduce", profile="nvlink4"),
         "dp_link": resolve_link("allreduce", profile="ib-hdr")}

MOE = {**SHAPE, "shape": TransformerShape(layers=8, hidden=1024, heads=16, sequence=512, vocabulary=32000, experts=8,
                                          top_k=2)}


def _but(fixed: dict, name: str) -> dict:
    return {k: v for k, v in fixed.items() if k != name}


_NUMBERS = ("step_s", "compute_s", "tp_comm_s", "cp_comm_s", "bubble_s", "pp_exposed_s", "dp_exposed_s", "contention_s",
            "optimizer_s", "param_gather_s", "dp_comm_s", "ep_comm_s", "expert_dp_s", "gpus", "tokens_per_s", "mfu",
            "scaling_efficiency")

# (knob, values, fixed arguments): every knob of the table, each point compared with step() alone
CASES = [
    ("bucket-size", "1MiB..64MiBx4", {**TIMES, "dp": 4}),
    ("dp", "1..16x2", {**TIMES, "microbatches": 2}),
    ("ep", "1..8x2", {**MOE, "dp": 4}),
    ("tp", "1,2,4", {**SHAPE, "dp": 2}),
    ("pp", "1..8", {**TIMES, "dp": 2, "microbatches": 8}),
    ("microbatches", "2..8+2", {**TIMES, "pp": 2, "dp": 2}),
    ("micro-batch", "1,2,4", {**SHAPE, "dp": 2, "tp": 2}),
    ("schedule", "gpipe,1f1b,interleaved,zb", {**TIMES, "pp": 2, "microbatches": 4, "dp": 2}),
    ("chunks", "1..4", {**TIMES, "pp": 2, "microbatches": 4, "schedule": "interleaved", "dp": 2}),
    ("efficiency", "0.25..1+0.25", {**_but(SHAPE, "efficiency"), "dp": 2}),
    ("profile", "ib-hdr,nvlink4", {**_but(TIMES, "link"), "dp": 4, "pp": 2, "microbatches": 4}),
    ("dp-link", "ib-hdr,100gbe", {**_but(SHAPE, "dp_link"), "dp": 8}),
    ("tp-link", "ib-hdr,nvlink4", {**SHAPE, "tp": 4, "dp": 2}),
    ("pp-link", "ib-hdr,nvlink4", {**SHAPE, "pp": 2, "microbatches": 4, "dp": 2}),
    ("cp", "1,2,4", {**SHAPE, "dp": 2}),
    ("cp-link", "ib-hdr,nvlink4", {**SHAPE, "cp": 2, "dp": 2}),
    ("zero", "0,1,2,3,fsdp", {**TIMES, "dp": 4, "microbatches": 2}),
    ("prefetch", "0,1,2", {**TIMES, "dp": 4, "zero": 3}),
    ("slowdown", "0..0.6+0.2", {**TIMES, "dp": 4, "microbatches": 2}),
    ("param-gather", "after,overlap", {**TIMES, "dp": 4, "zero": 1, "microbatches": 2}),
    ("pipeline-sends", "overlap,blocking,scatter-gather", {**SHAPE, "pp": 2, "tp": 2, "microbatches": 4, "dp": 2}),
    ("tp-overlap", "none,backward", {**_but(_but(SHAPE, "efficiency"), "peak_flops"), "gpu": "a100-80gb", "tp": 2,
                                     "dp": 2}),
    ("recompute", "none,selective,full", {**SHAPE, "dp": 2}),
    ("attention", "flash,unfused", {**_but(_but(SHAPE, "efficiency"), "peak_flops"), "gpu": "a100-80gb", "dp": 2}),
    ("gpu", "a100-80gb,h100-sxm,mi300x", {**_but(_but(SHAPE, "efficiency"), "peak_flops"), "dp": 2}),
    ("dtype", "bf16,fp16,fp8", {**_but(_but(SHAPE, "efficiency"), "peak_flops"), "gpu": "h100-sxm", "dp": 2}),
    ("framework", "ddp,fsdp,deepspeed,megatron,megatron-deepspeed", {**TIMES, "dp": 4, "microbatches": 2}),
]


def test_every_knob_has_a_case():
    assert {c[0] for c in CASES} == set(KNOBS)


@pytest.mark.parametrize(("name", "values", "fixed"), CASES, ids=[c[0] for c in CASES])
def test_each_point_is_the_step_priced_alone(name, values, fixed):
    sweep = sweep_step(name, values, **fixed)
    knob = KNOBS[name]
    assert sweep.knob == name and sweep.parameter == knob.parameter
    assert len(sweep.points) == len(parse_values(name, values)) >= 2
    for point in sweep.points:
        argument = point.value if knob.argument is None else knob.argument(point.value)
        try:
            alone = step(**fixed, **{knob.parameter: argument})
        except InputError as exc:
            assert point.skipped == str(exc)
            continue
        assert point.skipped is None
        assert {n: getattr(point, n) for n in _NUMBERS} == {n: getattr(alone, n) for n in _NUMBERS}
        assert point.result == alone  # the whole step, timeline and all, exactly
    # the best does the most work per GPU-second: tokens (shape mode) or micro-batches of all replicas
    def rate(p):
        work = p.tokens_per_s * p.step_s if p.tokens_per_s is not None else p.result.dp * p.result.microbatches
        return work / (p.step_s * p.result.gpus)

    priced = [p for p in sweep.points if p.skipped is None]
    top = max(rate(p) for p in priced)
    assert rate(sweep.best_point) == top
    assert sweep.points.index(sweep.best_point) == min(i for i, p in enumerate(sweep.points)
                                                       if p.skipped is None and rate(p) == top)
    if name in ("bucket-size", "schedule", "chunks", "profile", "dp-link", "tp-link", "pp-link", "zero",
                "prefetch", "slowdown", "efficiency"):  # the same work on the same GPUs: the fastest
        assert sweep.best_point.step_s == min(p.step_s for p in priced)


def test_a_sweep_of_the_bucket_size_prices_the_dp_1_step_once(monkeypatch):
    from costmodel.step import model
    from costmodel.topology import topology_of

    calls = []
    real = model._baseline

    def counted(config, run, makespan):
        calls.append(run.placed)
        return real(config, run, makespan)

    monkeypatch.setattr(model, "_baseline", counted)
    # with its links given, the dp = 1 step is the pipeline alone: no second step is priced
    sweep = sweep_step("bucket-size", "1MiB..64MiBx2", **TIMES, dp=4)
    assert len(sweep.points) == 7 and calls == [False]
    assert all(p.scaling_efficiency == p.result.scaling_efficiency for p in sweep.points)
    # on a topology the replica is placed anew: priced once, for the first point only
    calls.clear()
    levels = topology_of(["4:1us:100GB/s", "4:5us:10GB/s"])
    sweep = sweep_step("bucket-size", "1MiB..64MiBx2", **{**_but(TIMES, "link"), "topology": levels}, dp=4)
    assert len(sweep.points) == 7 and calls == [True]
    assert all(p.scaling_efficiency == p.result.scaling_efficiency for p in sweep.points)


def test_the_dp_1_step_is_the_pipeline_alone():
    r = step(**TIMES, dp=4, pp=2, microbatches=4, optimizer_s="1ms")
    alone = step(**TIMES, dp=1, pp=2, microbatches=4, optimizer_s="1ms")
    assert r.scaling_efficiency == alone.step_s / r.step_s == (r.pipeline_s + r.optimizer_s) / r.step_s


def test_ties_go_to_the_first_value():
    # with a free link the bucket size changes nothing: every point ties, the first is the best
    free = {**TIMES, "link": combine_link(alpha=0, beta=0)}
    sweep = sweep_step("bucket-size", "4MiB,1MiB,16MiB", dp=4, **free)
    assert len({p.step_s for p in sweep.points}) == 1 and sweep.best == 0


def test_values_that_the_step_refuses_are_skipped_with_their_reason():
    sweep = sweep_step("pp", [1, 3, 2, 16], **TIMES, microbatches=4)
    assert [p.value for p in sweep.points] == [1, 3, 2, 16]
    assert [p.skipped is None for p in sweep.points] == [True, False, True, False]
    assert "do not split evenly over pp=3" in sweep.points[1].skipped
    assert "pp=16 is above the 8 layers" in sweep.points[3].skipped
    assert sweep.points[1].step_s is None and sweep.points[1].result is None
    assert sweep.best_point.value == 1  # pp = 2 is faster, but on twice the GPUs and with a bubble
    assert sweep.notes == ("pp=3 skipped: 8 layers do not split evenly over pp=3",
                           "pp=16 skipped: pp=16 is above the 8 layers")
    data = sweep.to_dict()
    assert data["points"][1] == {"value": 3, "skipped": sweep.points[1].skipped,
                                 **dict.fromkeys(_NUMBERS)}


def test_the_same_reason_is_one_note():
    sweep = sweep_step("pp", "1..8", **TIMES, microbatches=4)
    assert [p.value for p in sweep.points if p.skipped] == [3, 5, 6, 7]
    assert sweep.notes == ("pp=3, 5, 6, 7 skipped: 8 layers do not split evenly over pp=…",)


def test_a_sweep_with_no_step_is_an_error():
    with pytest.raises(InputError, match=r"no value of pp gives a step: pp=3: .*; pp=5: "):
        sweep_step("pp", "3,5", **TIMES)
    with pytest.raises(InputError, match=r"^no value of dp gives a step: no link for the data-parallel"):
        sweep_step("dp", "2,4", **{**TIMES, "link": None})


def test_a_sweep_with_no_step_names_the_first_reasons_only():
    """Sixty values refused each for its own reason were sixty reasons on one line (several kilobytes): the
    error names the first three and counts the rest."""
    with pytest.raises(InputError) as err:
        sweep_step("pp", "3,5,6,7,9,10", **TIMES)
    message = str(err.value)
    assert message.startswith("no value of pp gives a step: pp=3: ") and "; pp=5: " in message
    assert "pp=7" not in message and message.endswith("; and 3 more values refused")
    with pytest.raises(InputError) as err:
        sweep_step("pp", "3,5,6,7", **TIMES)  # one more: named rather than counted
    assert "pp=7: " in str(err.value) and "more values" not in str(err.value)


@pytest.mark.parametrize(("text", "values"), [
    ("1,2,4", (1, 2, 4)),
    ("1..64x2", (1, 2, 4, 8, 16, 32, 64)),
    ("1..100x3", (1, 3, 9, 27, 81)),
    ("4..32+4", (4, 8, 12, 16, 20, 24, 28, 32)),
    ("1..4", (1, 2, 3, 4)),
    (" 8 , 2..3", (8, 2, 3)),
    ("7..7x2", (7,)),
])
def test_value_grammar(text, values):
    assert parse_values("dp", text) == values


def test_value_grammar_of_sizes_names_and_numbers():
    assert parse_values("bucket-size", "1MiB..4MiBx2,25MB") == (2**20, 2**21, 2**22, 25 * 10**6)
    assert parse_values("efficiency", "0.3..0.5+0.1") == (Fraction(3, 10), Fraction(2, 5), Fraction(1, 2))
    assert parse_values("schedule", "1F1B,zb") == ("1f1b", "zb-h1")
    assert parse_values("tp_link", "ib-hdr") == ("ib-hdr",)
    assert parse_values("dp", [1, "2", 4]) == (1, 2, 4)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("frob", "1", "unknown knob 'frob'"),
    ("dp", "", "empty value"),
    ("dp", "1,,2", "empty value"),
    ("dp", "0", "zero"),
    ("dp", "-2", "negative"),
    ("dp", "1.5", "not a whole number"),
    ("dp", "1e308", "out of range"),
    ("dp", "1..64x1", "not above 1"),
    ("dp", "1..64x0.5", "not above 1"),
    ("dp", "64..1", "runs downwards"),
    ("dp", "1..8..16", "two '..'"),
    ("dp", "1..1000000", "more than 1000 values"),
    ("dp", "1..10+0.5", "not a whole number"),
    ("dp", "2..9x1.5", "not whole numbers"),
    ("bucket-size", "0", "not a positive size"),
    ("bucket-size", "1MB..2MB+0", "not a positive size"),
    ("efficiency", "1.5", "not a share"),
    ("schedule", "nope", "unknown schedule"),
    ("profile", "nope", "unknown profile"),
    ("profile", "a..b", "a range needs a numeric knob"),
])
def test_bad_values_are_errors(name, text, message):
    with pytest.raises(InputError, match=message):
        parse_values(name, text)


def test_the_knob_s_own_argument_cannot_be_fixed_too():
    with pytest.raises(InputError, match="dp= is swept by knob dp"):
        sweep_step("dp", "1,2", **TIMES, dp=4)
    with pytest.raises(InputError, match="applies to a transformer shape"):
        sweep_step("efficiency", "0.5,1", **TIMES)


def test_a_sweep_as_a_frame_has_one_row_per_point():
    pytest.importorskip("pandas")
    from costmodel.step import sweep_step

    r = sweep_step("dp", [1, 2, 4], forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, gradient_bytes=["50MB"] * 4,
                   link="5us:25GB/s")
    df = r.to_frame()
    assert list(df["dp"]) == [1, 2, 4] and len(df) == len(r.points)
    assert list(df["step_s"]) == [float(p.step_s) for p in r.points]
    assert list(df["best"]) == [i == r.best for i in range(3)]
    assert df.attrs == {"knob": "dp", "parameter": "dp", "kind": "count"}
