"""A step priced per operation on a GPU: the operations' counts, the GEMM curve, the frameworks' schedules,
memory that must fit, unequal stages and both utilizations.

Expected values are computed here from their definitions (the papers' FLOP and activation formulas,
the curve's tiles and waves, the preset's datasheet numbers), not read back from the model.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.gpus import load_gpu
from costmodel.params import combine_link
from costmodel.step import TransformerShape, step
from costmodel.step.flops import model_flops
from costmodel.step.memory import activation_bytes
from costmodel.step.ops import layer_ops
from costmodel.step.rates import Rates

GPT3 = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
LLAMA3_405B = TransformerShape(layers=126, hidden=16384, heads=128, sequence=8192, vocabulary=128256,
                               kv_groups=8, ffn_factor=Fraction(13, 4), gated=True)
SMALL = TransformerShape(layers=8, hidden=1024, heads=16, sequence=2048, vocabulary=32000)
FREE = combine_link(alpha=0, beta="0ns/B")


# -- the operations of a layer --------------------------------------------------------------------


@pytest.mark.parametrize("shape", [GPT3, LLAMA3_405B, SMALL], ids=["gpt3", "llama3-405b", "small"])
@pytest.mark.parametrize("attention", ["unfused", "flash"])
@pytest.mark.parametrize(("tp", "b"), [(1, 1), (8, 2)])
def test_the_forward_operations_count_the_layers_flops_over_tp(shape, attention, tp, b):
    ops = layer_ops(shape, micro_batch=b, tp=tp, attention=attention)
    forward = sum(o.flops for o in ops if o.phase == "forward")
    assert forward == Fraction(model_flops(shape, batch=b).layer.forward, tp)
    # the backward is twice the forward: the matrices' two gradients; flash attention recomputes the
    # scores (2.5 times its forward), one attention forward more
    backward = sum(o.flops for o in ops if o.phase == "backward")
    attention_forward = Fraction(4 * b * shape.sequence**2 * shape.hidden, tp)
    assert backward == 2 * forward + (attention_forward / 2 if attention == "flash" else 0)


def test_recomputation_runs_the_forward_again_or_the_attention_core():
    full = layer_ops(GPT3, micro_batch=1, tp=8, attention="unfused", recompute="full")
    forward = [o for o in full if o.phase == "forward"]
    again = [o for o in full if o.phase == "recompute"]
    assert [(o.name, o.flops, o.bytes) for o in again] == [(o.name, o.flops, o.bytes) for o in forward]
    selective = layer_ops(GPT3, micro_batch=1, tp=8, attention="unfused", recompute="selective")
    assert {o.name for o in selective if o.phase == "recompute"} == {
        "attention scores", "softmax", "attention dropout", "attention context"}
    # FlashAttention keeps no score matrix: selective recomputation has nothing more to run
    assert not [o for o in layer_ops(GPT3, micro_batch=1, tp=8, recompute="selective") if o.phase == "recompute"]


# -- the GEMM curve ---------------------------------------------------------------------------------


def test_the_curve_passes_through_the_measured_gemm():
    for name in ("a100-80gb", "h100-sxm", "b200", "mi300x"):
        gpu = load_gpu(name)
        rates = Rates.of(gpu, "bf16")
        m, n, k = gpu.gemm.shape_for("bf16")
        measured = Fraction(2 * m * n * k) / gpu.achieved("bf16")
        if rates.plateau < rates.peak:
            assert rates.math_time(m, n, k) == measured
        assert rates.plateau <= gpu.peak("bf16")


def test_tiles_waves_and_k0_by_hand():
    """A100: 108 SMs, 256 × 128 tiles, K0 = 128; the plateau through 8192³ at 264.53 TFLOP/s."""
    rates = Rates.of(load_gpu("a100-80gb"), "bf16")
    # 8192³: 32·64 = 2048 tiles, 19 waves of 108; each tile 2·256·128·(8192 + 128) FLOP-equivalents
    waves = math.ceil(2048 / 108)
    plateau = Fraction(26453, 100) * 10**12 * waves * 2 * 256 * 128 * (8192 + 128) * 108 / (2 * 8192**3)
    assert rates.plateau == plateau
    # one wave of 108 tiles less one: the same time as a full wave (wave quantization)
    assert rates.math_time(256 * 107, 128, 4096) == rates.math_time(256 * 108, 128, 4096)
    # short k runs at k/(k + K0) of the plateau
    full, short = rates.math_time(8192, 8192, 8192), rates.math_time(8192, 8192, 128)
    assert full / short == Fraction(8192 + 128, 128 + 128)


def test_a_skinny_product_is_memory_bound():
    gpu = load_gpu("h100-sxm")
    rates = Rates.of(gpu, "bf16")
    m, n, k = 16, 16384, 16384  # a decode-like product: reads a 16384² matrix for 16 rows
    moved = 2 * (m * k + k * n + m * n)
    bandwidth = gpu.memory_bandwidth_bytes_per_s * gpu.memory_efficiency
    assert rates.gemm(m, n, k) == Fraction(moved) / bandwidth + gpu.launch_s


# -- frameworks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("framework", "mode"), [
    ("ddp", "PyTorch DDP, ddp buckets all-reduced as the backward makes them"),
    ("fsdp", "PyTorch FSDP, FULL_SHARD, each layer all-gathered and reduce-scattered"),
    ("deepspeed", "DeepSpeed, deepspeed buckets all-reduced after the backward"),
    ("megatron", "Megatron-LM, megatron buckets all-reduced after the backward"),
    ("megatron-deepspeed", "Megatron-DeepSpeed, deepspeed buckets all-reduced after the backward"),
])
def test_each_framework_is_named_with_its_schedule(framework, mode):
    r = step(shape=SMALL, dp=4, gpu="a100-80gb", framework=framework, dtype="fp16")
    assert r.mode == mode and r.framework == framework


@pytest.mark.parametrize("framework", ["deepspeed", "megatron-deepspeed"])
def test_bf16_without_zero_on_deepspeeds_engine_is_its_bf16_optimizer(framework):
    """DeepSpeed's engine with bf16 and no ZeRO runs BF16_Optimizer (fp32 gradient accumulation): the fp32
    gradients all-reduced after the backward, the fp32 states partitioned over the data-parallel ranks, the
    bf16 parameters all-gathered after the step; fp16 keeps ZeRO 0's all-reduce of fp16 gradients."""
    from costmodel.collectives.evaluate import cost

    dp = 4
    kw = {"shape": SMALL, "dp": dp, "gpu": "a100-80gb", "framework": framework, "link": combine_link(
        alpha="1us", beta="0.05ns/B")}
    bf16, fp16, zero1 = step(**kw), step(**kw, dtype="fp16"), step(**kw, zero=1)
    assert bf16.mode.split(", ")[1:] == ["BF16_Optimizer", "deepspeed buckets all-reduced in fp32 after the "
                                         "backward", "parameters gathered after the optimizer"]
    assert bf16.zero == 0 and "BF16_Optimizer" not in fp16.mode and fp16.param_gather_s == 0
    (device,) = bf16.memory
    assert device.gradient_bytes == 4 * device.parameters  # the fp32 buffer, whole on every rank
    assert device.optimizer_bytes == zero1.memory[0].optimizer_bytes < fp16.memory[0].optimizer_bytes
    link = kw["link"]
    gathered = sum(cost("allgather", "ring", p=dp, n=b.bytes / 2, link=link).time_s for b in bf16.buckets)
    assert bf16.param_gather_s == gathered  # bf16 parameters: half the fp32 gradient's bytes
    reduced = sum(cost("allreduce", "ring", p=dp, n=b.bytes, link=link).time_s for b in bf16.buckets)
    assert bf16.dp_comm_s == reduced + gathered and sum(b.bytes for b in bf16.buckets) == 4 * device.parameters


def test_megatron_after_the_backward_exposes_every_bucket():
    after = step(shape=SMALL, dp=4, gpu="a100-80gb", framework="megatron")
    overlapped = step(shape=SMALL, dp=4, gpu="a100-80gb", framework="megatron", overlap_grad_reduce=True)
    assert after.dp_hidden_s == 0 and after.dp_exposed_s == after.dp_comm_s
    assert overlapped.dp_hidden_s > 0 and overlapped.step_s < after.step_s
    assert "as the backward makes them" in overlapped.mode


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("schedule", ["1f1b", "interleaved"])
def test_an_overlapped_parameter_gather_never_hides_negative_time_nor_loses_on_free_links(align, schedule):
    kw = {"shape": SMALL, "dp": 4, "pp": 4, "microbatches": 8, "gpu": "a100-80gb", "framework": "megatron",
          "zero": 1, "schedule": schedule, "align_param_gather": align}
    link = combine_link(alpha="5us", bandwidth="5GB/s")  # slow: the gathers take longer than a layer
    for links in ({"link": link}, {"link": FREE}):
        overlap = step(**kw, **links, param_gather="overlap")
        after = step(**kw, **links, param_gather="after")
        assert overlap.dp_hidden_s >= 0 and after.dp_hidden_s >= 0
        if links["link"] is FREE:
            assert overlap.step_s <= after.step_s
    aligned = step(**{**kw, "align_param_gather": True}, link=link, param_gather="overlap")
    staggered = step(**{**kw, "align_param_gather": False}, link=link, param_gather="overlap")
    assert aligned.step_s <= staggered.step_s


# -- memory -------------------------------------------------------------------------------------------


def test_activations_are_korthikantis_formulas():
    """Korthikanti et al. 2022, section 4 (bf16, unfused attention): per layer on one rank."""
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    sbh = s * b * h

    def acts(**kw):
        return activation_bytes(GPT3, micro_batch=b, tp=t, attention="unfused", **kw)

    assert acts(sequence_parallel=False, recompute="none") == sbh * (10 + Fraction(24, t) + Fraction(5 * a * s, h * t))
    assert acts(sequence_parallel=True, recompute="none") == Fraction(sbh, t) * (34 + Fraction(5 * a * s, h))
    assert acts(sequence_parallel=True, recompute="selective") == Fraction(34 * sbh, t)
    assert acts(sequence_parallel=False, recompute="full") == 2 * sbh


@pytest.mark.parametrize(("label", "kw"), [
    ("Llama 3 405B, no recomputation", {"shape": LLAMA3_405B, "dp": 8, "tp": 8, "pp": 16, "microbatches": 16,
                                         "gpu": "h100-sxm", "framework": "megatron", "zero": 1,
                                         "stage_layers": [7, *[8] * 14, 7]}),
    ("GPT-3 175B on one node", {"shape": GPT3, "tp": 8, "gpu": "a100-80gb"}),
    ("1T on 64 GPUs", {"shape": TransformerShape(layers=128, hidden=25600, heads=160, sequence=2048,
                                                  vocabulary=51200), "tp": 8, "pp": 8, "gpu": "a100-80gb",
                       "recompute": "full"}),
])
def test_a_step_that_does_not_fit_is_refused_with_its_breakdown(label, kw):
    with pytest.raises(InputError) as info:
        step(**kw)
    message = str(info.value)
    for part in ("per GPU", "more than the", "weights", "gradients", "optimizer states", "activations",
                 "in flight", "allow_oom=True"):
        assert part in message, (label, part)
    priced = step(**kw, allow_oom=True)
    assert priced.warnings and "priced anyway" in priced.warnings[0]
    top = max(priced.memory, key=lambda d: d.total_bytes)
    assert top.total_bytes > priced.memory_capacity_bytes == load_gpu(kw["gpu"]).memory_bytes


def test_a_step_that_fits_prints_its_peak():
    r = step(shape=LLAMA3_405B, dp=8, tp=8, pp=16, microbatches=16, gpu="h100-sxm", framework="megatron",
             zero=1, sequence_parallel=True, recompute="full",
             stage_layers=[7, *[8] * 14, 7])
    top = max(r.memory, key=lambda d: d.total_bytes)
    assert not r.warnings and top.total_bytes <= r.memory_capacity_bytes == 80 * 2**30
    # every device's model states: its layers' parameters (and the embedding on the first, the output
    # layer on the last), bf16 weights, fp32 gradients, the optimizer's 12 bytes sharded over dp
    first, middle = r.memory[0], r.memory[1]
    assert middle.parameters == 8 * LLAMA3_405B.layer_parameters
    assert first.parameters == 7 * LLAMA3_405B.layer_parameters + LLAMA3_405B.vocabulary * LLAMA3_405B.hidden
    assert middle.weight_bytes == Fraction(2 * middle.parameters, 8)
    assert middle.gradient_bytes == Fraction(4 * middle.parameters, 8)


# -- unequal stages -----------------------------------------------------------------------------------


def test_unequal_stages_put_their_layers_where_they_are_given():
    layout = [7, *[8] * 14, 7]
    r = step(shape=LLAMA3_405B, dp=8, tp=8, pp=16, microbatches=16, gpu="h100-sxm", framework="megatron",
             zero=1, sequence_parallel=True, recompute="full", stage_layers=layout)
    assert r.stage_layers == tuple(layout) and sum(layout) == 126
    assert [d.layers for d in r.memory] == layout
    with pytest.raises(InputError, match=r"stage_layers=7,8 holds 15 layers, not the model.s 126"):
        step(shape=LLAMA3_405B, tp=8, pp=2, gpu="h100-sxm", stage_layers=[7, 8], allow_oom=True)
    with pytest.raises(InputError, match=r"leaves stage 1 with nothing to run"):
        step(shape=SMALL, pp=3, stage_layers=[4, 0, 4], gpu="a100-80gb", link=FREE)


def test_a_first_or_last_stage_of_no_layers_runs_the_embedding_or_the_output_layer_alone():
    """DeepSpeed's partition by type:transformer|embedding counts the embeddings as layers, so at pp = layers
    + 2 (BLOOM's resume at pipeline 72) the first stage holds the embedding alone and the last the output
    layer: their weights, their gradients' buckets, and each stage's work where it is."""
    v, h = SMALL.vocabulary, SMALL.hidden
    alone = step(shape=SMALL, dp=2, pp=3, microbatches=8, stage_layers=[0, 4, 4], gpu="a100-80gb", link=FREE)
    first, middle, last = alone.memory
    assert (first.layers, first.parameters) == (0, v * h)
    assert middle.parameters == 4 * SMALL.layer_parameters and last.parameters == 4 * SMALL.layer_parameters + v * h
    grad = alone.buckets[0].bytes / (v * h)  # stage 0's only bucket: the embedding's gradient
    assert alone.dp_stage == 0 and len(alone.buckets) == 1 and grad in (2, 4)
    together = step(shape=SMALL, dp=2, pp=3, microbatches=8, stage_layers=[1, 3, 4], gpu="a100-80gb", link=FREE)
    assert sum(b.bytes for b in together.buckets) == (v * h + SMALL.layer_parameters) * grad
    # the output layer alone on the last stage, the embedding with the first stage's layers
    out = step(shape=SMALL, pp=3, microbatches=8, stage_layers=[4, 4, 0], gpu="a100-80gb", link=FREE)
    assert [d.layers for d in out.memory] == [4, 4, 0] and out.memory[2].parameters == v * h
    # a stage of no layers within the pipeline still has nothing to run
    with pytest.raises(InputError, match=r"leaves stage 1 with nothing to run"):
        step(shape=SMALL, pp=4, stage_layers=[0, 0, 4, 4], gpu="a100-80gb", link=FREE)


# -- utilizations ---------------------------------------------------------------------------------------


def test_mfu_and_hfu_are_the_two_counts_over_the_step():
    r = step(shape=GPT3, dp=8, tp=8, pp=8, microbatches=32, gpu="a100-80gb", recompute="full",
             schedule="interleaved", chunks=2)
    peak, gpus = load_gpu("a100-80gb").peak("bf16"), 8 * 8 * 8
    batch = 8 * 32
    assert r.model_flops == model_flops(GPT3, batch=batch).total
    assert r.hardware_flops == model_flops(GPT3, batch=batch, recompute="full").total
    assert r.mfu == r.model_flops / (r.step_s * gpus * peak)
    assert r.hfu == r.hardware_flops / (r.step_s * gpus * peak)
    assert r.hfu / r.mfu == Fraction(r.hardware_flops, r.model_flops) > Fraction(4, 3) - Fraction(1, 100)
    plain = step(shape=GPT3, dp=8, tp=8, pp=8, microbatches=32, gpu="a100-80gb", allow_oom=True)
    assert plain.mfu == plain.hfu


def test_sequence_parallelism_without_tensor_parallelism_is_noted():
    r = step(shape=SMALL, gpu="a100-80gb", sequence_parallel=True)
    assert any("sequence_parallel=True has no effect with tp=1" in n for n in r.notes)
    assert r.step_s == step(shape=SMALL, gpu="a100-80gb").step_s
