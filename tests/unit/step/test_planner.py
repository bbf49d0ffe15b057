"""The planner: its pruning is exact (the same top rows as pricing every configuration), each row is priced
as ``step`` prices it, the bounds it prunes with hold, and its memory is the step's."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import costmodel
from costmodel.cli import main
from costmodel.errors import InputError
from costmodel.step import StepConfig, TransformerShape, price_step
from costmodel.step.model import lower_bound, memory_of, order_facts, step_time
from costmodel.step.planner import DIMENSIONS, plan

SMALL = TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024)
"""A small model: each step prices in milliseconds."""

SMALL_MOE = TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024, experts=4, top_k=2)
"""A small mixture of experts: four routed experts, two per token."""

MACHINE = {"gpu": "a100-80gb", "nodes": 1, "global_batch": 16, "micro_batch_sizes": (1, 2)}
"""One node of 8 A100s."""


def _every(shape: TransformerShape, **machine) -> list[StepConfig]:
    """Every configuration the planner's table leads to, the ones it refuses left out."""
    p = plan(shape, top=10_000, **machine)
    return [r.config for r in p.rows]


def test_pruning_is_exact_against_pricing_every_configuration():
    every = plan(SMALL, top=10_000, **MACHINE)
    assert every.refused_count("pruned") == 0 and every.priced == every.fitting
    exhaustive = sorted(price_step(r.config).step_s for r in every.rows)
    for top in (1, 3, 10):
        p = plan(SMALL, top=top, **MACHINE)
        assert [r.step_s for r in p.rows] == exhaustive[:top]
        assert p.priced < p.fitting  # something was pruned
        assert p.refused_count("pruned") + p.priced + p.refused_count("invalid") - every.refused_count(
            "invalid") == p.fitting
        assert p.considered == every.considered and p.exact


def test_pruning_is_exact_across_nodes():
    """Two nodes: data and pipeline parallelism on the network, whose reduction the bound counts."""
    machine = {"gpu": "a100-80gb", "nodes": 2, "global_batch": 16, "micro_batch_sizes": (1,)}
    every = plan(SMALL, top=10_000, **machine)
    exhaustive = sorted(price_step(r.config).step_s for r in every.rows)
    p = plan(SMALL, top=5, **machine)
    assert [r.step_s for r in p.rows] == exhaustive[:5] and p.priced < every.priced
    for r in every.rows:
        assert lower_bound(r.config).step_s <= r.step_s


def test_fifty_random_rows_are_priced_as_step_and_the_command_line_price_them(capsys):
    p = plan(SMALL, top=10_000, **MACHINE)
    assert len(p.rows) >= 50
    rng = random.Random(24)
    shape = ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "256", "--vocab", "1024"]
    for row in rng.sample(p.rows, 50):
        c = row.config
        assert costmodel.step(c).step_s == row.step_s
        settings = {d.name: getattr(c, d.name) for d in DIMENSIONS}
        assert costmodel.step(shape=SMALL, gpu=c.gpu, framework="megatron", **settings).step_s == row.step_s
        options = [f"--{k.replace('_', '-')}" if k not in ("microbatches", "chunks") else
                   {"microbatches": "-m", "chunks": "-v"}[k] for k in settings]
        argv = ["step", *shape, "--gpu", "a100-80gb", "--framework", "megatron", "--json"]
        for option, (name, value) in zip(options, settings.items(), strict=True):
            if name == "sequence_parallel":
                argv += [option] if value else []
            elif value is not None:
                argv += [option, str(value)]
        assert main(argv) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["step_s"] == float(row.step_s)  # the JSON's float of the same exact time
        assert max(d["total_bytes"] for d in out["memory"]) == float(row.memory_bytes)


def test_rows_rank_and_lose_to_the_best():
    p = plan(SMALL, top=5, **MACHINE)
    assert [r.rank for r in p.rows] == [1, 2, 3, 4, 5]
    best = p.rows[0].step_s
    for r in p.rows:
        assert r.behind_s == r.step_s - best and r.behind == (r.step_s - best) / best
        assert r.memory_bytes <= r.config.gpu.memory_bytes
        assert r.mfu == r.result.mfu
    assert all(a.step_s <= b.step_s for a, b in zip(p.rows, p.rows[1:], strict=False))
    data = p.to_dict()
    assert data["rows"][0]["behind_s"] == 0 and data["exact"] is True
    assert {"invalid", "pruned"} <= {r["kind"] for r in data["refused"]}


def test_the_bounds_hold_and_the_memory_is_the_steps():
    for c in _every(SMALL, **MACHINE):
        r = price_step(c)
        b = lower_bound(c)
        assert b.work_s == r.compute_s + r.tp_comm_s + r.cp_comm_s + r.ep_comm_s
        assert b.work_s <= b.pipeline_s and b.step_s <= r.step_s
        assert memory_of(c) == (r.memory, r.memory_capacity_bytes)


SCHEDULES = st.sampled_from([("1f1b", None), ("gpipe", None), ("zb-h1", None), ("interleaved", 2),
                             ("interleaved", 4)])


CONFIGS = st.fixed_dictionaries({
    "tp": st.sampled_from([1, 2, 4]), "pp": st.sampled_from([1, 2, 4]), "dp": st.sampled_from([1, 2, 4]),
    "microbatches": st.sampled_from([4, 8]), "recompute": st.sampled_from(["none", "full"]),
    "zero": st.sampled_from([0, 1, 2]), "framework": st.sampled_from([None, "megatron", "deepspeed", "ddp"]),
    "sequence_parallel": st.booleans(), "cp": st.sampled_from([1, 2, 4]), "ep": st.sampled_from([1, 2, 4])})

SHAPES = st.sampled_from([
    TransformerShape(layers=8, hidden=512, heads=8, sequence=256, vocabulary=1024),
    TransformerShape(layers=8, hidden=512, heads=8, sequence=256, vocabulary=1024, experts=4, top_k=2),
    TransformerShape(layers=8, hidden=512, heads=8, kv_groups=2, sequence=256, vocabulary=1024, gated=True,
                     ffn_factor=Fraction(7, 2), experts=8, top_k=2, shared_experts=1, dense_layers=1,
                     tied_embeddings=False)])
"""A dense model, a plain mixture of experts, and one with shared experts and a dense first layer."""


@settings(max_examples=60, deadline=None)
@given(chosen=CONFIGS, schedule=SCHEDULES, shape=SHAPES)
def test_the_lower_bound_holds_for_any_schedule_and_framework(chosen, schedule, shape):
    """With cp's ring-attention sends and ep's all-to-alls and expert reduction too."""
    name, chunks = schedule
    if not shape.moe:
        chosen = {**chosen, "ep": 1}
    if (chosen["framework"] == "megatron" and chosen["zero"] == 2) or chosen["framework"] == "ddp":
        chosen = {**chosen, "zero": 0}  # the stages each has
    try:
        c = StepConfig.of(shape=shape, gpu="a100-80gb", schedule=name, chunks=chunks, allow_oom=True, **chosen)
        r = price_step(c)
    except InputError:
        return
    b = lower_bound(c)
    assert b.work_s == r.compute_s + r.tp_comm_s + r.cp_comm_s + r.ep_comm_s
    assert b.work_s <= b.pipeline_s and b.step_s <= r.step_s
    assert b.expert_dp_s == r.expert_dp_s and b.optimizer_s == r.optimizer_s
    assert memory_of(c) == (r.memory, r.memory_capacity_bytes)
    step_s, result = step_time(c)  # the planner's: the timeline made only for the rows
    assert step_s == r.step_s and result() == r


@settings(max_examples=60, deadline=None)
@given(chosen=CONFIGS, schedule=SCHEDULES, shape=SHAPES, pp=st.sampled_from([3, 4, 8]),
       split=st.sampled_from([None, "uneven", "first"]))
def test_the_devices_that_may_hold_the_most_hold_the_largest_memory(chosen, schedule, shape, pp, split):
    """memory_of(largest=True) leaves out devices alike but for holding fewer micro-batches: the same peak
    as every device's, whatever the schedule (gpipe and zb-h1 too), the stages' layers and the layers'
    kinds (dense first layers, routed experts)."""
    name, chunks = schedule
    v = chunks or 1
    layers = {None: None, "uneven": [1] + [2] * (pp * v - 2) + [1],
              "first": [2] + [1] * (pp * v - 2) + [2]}[split]
    chosen = {**chosen, "pp": pp, "zero": min(chosen["zero"], 1),
              "framework": chosen["framework"] if chosen["framework"] != "ddp" else None}
    if not shape.moe:
        chosen = {**chosen, "ep": 1}
    shape = TransformerShape(**{**{f: getattr(shape, f) for f in ("hidden", "heads", "kv_groups", "sequence",
                                                                   "vocabulary", "gated", "ffn_factor",
                                                                   "experts", "top_k", "shared_experts",
                                                                   "dense_layers", "tied_embeddings")},
                                "layers": sum(layers) if layers else 8 * v * pp // 4})
    try:
        c = StepConfig.of(shape=shape, gpu="a100-80gb", schedule=name, chunks=chunks, allow_oom=True,
                          stage_layers=layers, **chosen)
        every, _ = memory_of(c)
    except InputError:
        return
    assert every is not None
    inner, _ = memory_of(c, stages=range(1, pp - 1), largest=True)
    largest, _ = memory_of(c, largest=True)
    assert inner is not None and largest is not None
    assert set(largest) <= set(every) and set(inner) <= set(every[1:-1])
    assert max(d.total_bytes for d in largest) == max(d.total_bytes for d in every)
    assert max(d.total_bytes for d in inner) == max(d.total_bytes for d in every[1:-1])


@pytest.mark.parametrize("settings", [
    {"dp": 1, "pp": 4, "microbatches": 8},  # no data parallelism: the pipeline alone
    {"dp": 4, "pp": 2, "microbatches": 8, "framework": "megatron"},  # reduced after the backward, blocking sends
    {"dp": 4, "pp": 2, "microbatches": 8, "framework": "ddp"},  # buckets overlapped: the compute slowed
    {"dp": 8, "microbatches": 4, "framework": "fsdp"},  # ZeRO 3: every device waits for its gathers
    {"dp": 2, "pp": 2, "microbatches": 4, "zero": 1, "param_gather": "overlap", "framework": "megatron"}])
def test_the_planners_step_time_is_the_steps(settings):
    """step_time gives price_step's step, and its whole result when asked: the timeline and the pipeline
    without sends made then."""
    c = StepConfig.of(shape=SMALL, gpu="a100-80gb", **settings)
    r = price_step(c)
    step_s, result = step_time(c)
    assert step_s == r.step_s and result() == r and r.timeline


@pytest.mark.parametrize("shape", [
    TransformerShape(layers=8, hidden=512, heads=8, sequence=256, vocabulary=1024, experts=8, top_k=2,
                     dense_layers=1),
    TransformerShape(layers=8, hidden=512, heads=8, sequence=256, vocabulary=1024)])
@pytest.mark.parametrize("zero", [0, 1])
def test_a_later_stage_reducing_more_gradients_does_not_wait_for_the_backward_way_out(shape, zero):
    """The first stage's dense layer (or a short first stage) leaves a later stage the most gradients: its
    reduction starts when its own compute ends, before the backward has left the stages before it."""
    layers = {} if shape.moe else {"stage_layers": (1, 7)}
    c = StepConfig.of(shape=shape, gpu="h100-sxm", pp=2, dp=4, microbatches=8, framework="megatron", zero=zero,
                      allow_oom=True, **layers)
    r, b = price_step(c), lower_bound(c)
    assert r.dp_exposed_s > 0 and b.step_s <= r.step_s


def test_pruning_is_exact_for_a_mixture_of_experts_with_cp_and_ep():
    """Expert parallelism over dp·cp, context parallelism and their communication, pruned exactly."""
    every = plan(SMALL_MOE, top=10_000, **MACHINE)
    assert every.refused_count("pruned") == 0
    assert {r.config.ep for r in every.rows} == {1, 2, 4} and {r.config.cp for r in every.rows} >= {1, 2, 4}
    exhaustive = sorted(price_step(r.config).step_s for r in every.rows)
    for top in (1, 5):
        p = plan(SMALL_MOE, top=top, **MACHINE)
        assert [r.step_s for r in p.rows] == exhaustive[:top] and p.priced < p.fitting
    for r in every.rows:
        c = r.config
        assert c.dp * c.cp % c.ep == 0 and SMALL_MOE.experts % c.ep == 0
        assert c.tp * c.cp * c.pp * c.dp == 8
        b = lower_bound(c)
        assert b.step_s <= r.step_s and memory_of(c) == (r.result.memory, r.result.memory_capacity_bytes)


def test_the_first_bound_level_groups_only_what_it_does_not_depend_on():
    """The busiest device's work is the same across schedules, chunks and ZeRO stages (_LEVEL0_VARIES), and
    cp and ep change it (ring attention's sends, the all-to-alls), so they stay in its key."""
    import dataclasses

    from costmodel.step.model import work_bound

    rows = plan(SMALL_MOE, top=10_000, **MACHINE).rows
    for r in rows:
        once = work_bound(dataclasses.replace(r.config, schedule="1f1b", chunks=None))
        assert lower_bound(r.config).work_s == once == work_bound(r.config)
    by_rest: dict[tuple, set] = {}
    for r in rows:
        c = r.config
        rest = (c.tp, c.pp, c.dp * c.cp, c.micro_batch * c.cp, c.recompute, c.sequence_parallel)
        by_rest.setdefault(rest, set()).add((c.cp, c.ep, work_bound(c)))
    varies = [works for works in by_rest.values() if len({w for _, _, w in works}) > 1]
    assert varies  # the same GPUs and tokens per rank, another cp or ep: another work


def test_cp_and_ep_are_refused_where_they_do_not_apply():
    odd = TransformerShape(layers=4, hidden=512, heads=8, sequence=250, vocabulary=1024)  # 250 = 2·125
    p = plan(odd, top=10_000, **MACHINE)
    assert {r.config.cp for r in p.rows} == {1}  # 2·cp = 4 and 8 do not divide 250
    assert {r.config.ep for r in p.rows} == {1}  # a dense model
    reasons = {r.reason for r in p.refused}
    assert "cp does not split the sequence into 2·cp equal chunks" in reasons
    with pytest.raises(InputError, match=r"ep= applies to a mixture of experts|no configuration"):
        plan(SMALL, ep=2, **MACHINE)
    held = plan(SMALL_MOE, top=3, ep=4, cp=2, **MACHINE)
    assert {(r.config.ep, r.config.cp) for r in held.rows} == {(4, 2)}


def test_a_model_description_is_planned_with_its_settings():
    from costmodel.describe import load_model

    mixtral = load_model("mixtral-8x7b").with_shape(layers=4, sequence=256)
    p = plan(mixtral, gpu="h100-sxm", nodes=1, global_batch=16, micro_batch_sizes=(1,), top=2)
    assert p.rows[0].config.dropout is False and p.rows[0].config.shape.experts == 8
    assert plan(mixtral, gpu="h100-sxm", nodes=1, global_batch=16, micro_batch_sizes=(1,), top=2,
                dropout=True).rows[0].config.dropout is True


def test_the_closed_forms_of_1f1b_and_interleaved_are_the_orders():
    from costmodel.pipeline.orders import order
    from costmodel.pipeline.simulate import peak_inflight

    for p in (2, 3, 4, 8, 16):
        for v in (1, 2, 3, 4):
            name = "interleaved" if v > 1 else "1f1b"
            for m in [*range(p, 5 * p + 1, p), *((1, 2, 3, 5) if v == 1 else ())]:
                orders = [order(name, s, stages=p, microbatches=m, chunks=v) for s in range(p)]
                facts = order_facts(name, p, microbatches=m, chunks=v)
                assert facts.inflight == tuple(peak_inflight((op for op, _, _ in o), split=False) for o in orders)
                assert facts.last == tuple(o[-1] for o in orders)


def test_inflight_is_the_simulated_timelines():
    from costmodel.pipeline.simulate import peak_inflight, simulate_stages

    for name, p, m, v in [("1f1b", 4, 8, 1), ("gpipe", 3, 5, 1), ("zb-h1", 4, 6, 1), ("interleaved", 4, 8, 2),
                          ("interleaved", 2, 6, 3)]:
        ones = [Fraction(1)] * (p * v)
        timeline = simulate_stages(name, p, microbatches=m, chunks=v, forward=ones, backward=ones, weight=ones)
        assert order_facts(name, p, microbatches=m, chunks=v).inflight == tuple(
            peak_inflight((o.op for o in ops), split=name == "zb-h1") for ops in timeline)


def test_memory_refusals_are_counted():
    big = TransformerShape(layers=8, hidden=8192, heads=64, sequence=2048, vocabulary=51200)
    p = plan(big, gpu="a100-80gb", nodes=1, global_batch=16, top=3)
    assert p.refused_count("memory") > 0
    assert all(r.memory_bytes <= r.config.gpu.memory_bytes for r in p.rows)


def test_fixed_settings_hold():
    p = plan(SMALL, top=3, tp=2, recompute="full", **MACHINE)
    assert {(r.config.tp, r.config.recompute) for r in p.rows} == {(2, "full")}


@pytest.mark.parametrize(("arguments", "message"), [
    ({"nodes": 0}, "nodes=0"),
    ({"global_batch": 0}, "global_batch=0"),
    ({"top": 0}, "top=0"),
    ({"micro_batch_sizes": ()}, "micro_batch_sizes=() is empty"),
    ({"dp": 2}, "dp= follows from the GPUs"),
    ({"microbatches": 2}, "microbatches= follows from the global batch"),
    ({"gpu": "a100"}, "a100"),
])
def test_bad_input(arguments, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(SMALL, **{**MACHINE, **arguments})


def test_a_batch_no_configuration_divides_names_the_nearest():
    shape = TransformerShape(layers=2, hidden=512, heads=2, sequence=250, vocabulary=1024)
    # 16 GPUs, tp ≤ 2, pp ≤ 2 and cp = 1 (2·cp does not divide 250 for cp > 1): dp is at least 4, so 18
    # divides by no dp × micro-batch
    with pytest.raises(InputError) as e:
        plan(shape, gpu="a100-80gb", nodes=2, global_batch=18, micro_batch_sizes=(1,))
    assert str(e.value) == ("global_batch=18 is not a multiple of dp × micro-batch for any configuration of 16 "
                            "GPUs; nearest valid: global_batch=16 or global_batch=20")


def test_no_configuration_that_can_be_priced_is_one_error():
    deep = TransformerShape(layers=1000, hidden=128, heads=2, sequence=64, vocabulary=1024)
    with pytest.raises(InputError, match=r"^no configuration that fits could be priced: 1024 micro-batches × "
                                         r"1000 layers give 3072000 layer operations"):
        plan(deep, gpu="a100-80gb", nodes=1, gpus_per_node=1, global_batch=1024, micro_batch_sizes=(1,))


@pytest.mark.parametrize("framework", ["deepspeed", "megatron-deepspeed"])
def test_deepspeed_runs_1f1b_and_no_ring_attention(framework):
    """DeepSpeed's pipeline engine has one training schedule, in 1F1B's order: the step refuses the others
    with a pipeline (and takes any without one), and the planner proposes none of them; nor context
    parallelism, which DeepSpeed does with Ulysses' all-to-alls rather than ring attention."""
    for schedule, chunks in (("interleaved", 2), ("gpipe", None), ("zb-h1", None)):
        with pytest.raises(InputError, match=f"schedule='{schedule}' is not one framework='{framework}' runs"):
            costmodel.step(shape=SMALL, gpu="a100-80gb", pp=2, microbatches=4, schedule=schedule, chunks=chunks,
                           framework=framework)
    assert costmodel.step(shape=SMALL, gpu="a100-80gb", schedule="gpipe", framework=framework).pp == 1
    p = plan(SMALL, top=10_000, framework=framework, **MACHINE)
    assert {r.config.schedule for r in p.rows} == {"1f1b"} and any(r.config.pp > 1 for r in p.rows)
    assert {r.config.cp for r in p.rows} == {1}  # its sequence split is Ulysses', not ring attention
    with pytest.raises(InputError, match=f"cp=2 is ring attention, which framework='{framework}' does not run"):
        costmodel.step(shape=SMALL, gpu="a100-80gb", cp=2, framework=framework)
    generic = plan(SMALL, top=10_000, **MACHINE).rows
    assert "interleaved" in {r.config.schedule for r in generic} and {r.config.cp for r in generic} != {1}


def test_a_pipeline_that_does_not_divide_the_layers_splits_them_with_the_fewer_at_the_ends():
    """Llama 3 405B's 126 layers ran on 16 stages: pp need not divide the layers; the planner prices the
    split costmodel step is refused with a suggestion of (the fewer layers on the first and last stages)."""
    from costmodel.step import step

    shape = TransformerShape(layers=10, hidden=1024, heads=16, sequence=1024, vocabulary=32000)
    p = plan(shape, gpu="a100-80gb", nodes=1, global_batch=32, top=3, pp=4)
    assert all(r.config.pp == 4 and r.config.stage_layers == (2, 3, 3, 2) for r in p.rows)
    assert all(r.config.schedule == "1f1b" for r in p.rows)  # interleaving needs equal stages
    best = p.rows[0]
    assert best.step_s == step(gpu="a100-80gb", framework="megatron",
                               **{**best.settings(), "shape": shape, "stage_layers": (2, 3, 3, 2)}).step_s
    assert any("pp 4 does not divide the 10 layers: its stages hold 2,3,3,2" in n for n in p.notes)
    assert best.to_dict()["stage_layers"] == [2, 3, 3, 2]
