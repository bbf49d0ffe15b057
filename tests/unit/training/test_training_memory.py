"""Data-parallel weights, ZeRO model states and activation memory per layer."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from costmodel.errors import InputError, UnknownNameError
from costmodel.training import activation_memory, training_memory, zero_memory

GB = 10**9


def test_data_parallel_weights():
    m = training_memory("70B", dtype="fp32", dp=4)
    assert m.weights_bytes_per_replica == 70 * GB * 4
    assert m.weights_bytes_total == 70 * GB * 4 * 4
    d = m.to_dict()
    assert d["weights_bytes_total"] == 1_120_000_000_000
    assert d["model_state_bytes_per_gpu"] is None
    assert d["activation_bytes_per_layer"] is None
    assert json.dumps(d, allow_nan=False)


@pytest.mark.parametrize(("stage", "expected"), [
    # Ψ = 7.5e9, N = 64, K = 12: (2 + 2 + 12)Ψ; 4Ψ + 12Ψ/N; 2Ψ + 14Ψ/N; 16Ψ/N
    (0, 16 * Fraction(75, 10) * GB),
    (1, 4 * Fraction(75, 10) * GB + 12 * Fraction(75, 10) * GB / 64),
    (2, 2 * Fraction(75, 10) * GB + 14 * Fraction(75, 10) * GB / 64),
    (3, 16 * Fraction(75, 10) * GB / 64),
])
def test_zero_stages(stage, expected):
    z = zero_memory("7.5B", gpus=64, stage=stage)
    assert z.model_state_bytes_per_gpu == expected
    assert z.parameters_bytes_per_gpu + z.gradients_bytes_per_gpu + z.optimizer_states_bytes_per_gpu == expected
    assert z.stages[stage].model_state_bytes_per_gpu == expected


def test_zero_formula_text():
    assert [zero_memory("1B", gpus=8, stage=s).formula for s in range(4)] == [
        "16Ψ", "4Ψ + 12Ψ/N", "2Ψ + 14Ψ/N", "16Ψ/N"]


def test_the_zero_formula_is_the_one_evaluated_under_tensor_parallelism():
    formulas = ["16Ψ/t", "4Ψ/t + 12Ψ/(t·N)", "2Ψ/t + 14Ψ/(t·N)", "16Ψ/(t·N)"]
    psi, t, n = 70 * 10**9, 8, 8
    for stage, (formula, whole, split) in enumerate(zip(formulas, (16, 4, 2, 0), (0, 12, 14, 16),
                                                        strict=True)):
        z = zero_memory("70B", gpus=n, stage=stage, tp=t)
        assert z.formula == formula
        assert z.model_state_bytes_per_gpu == Fraction(whole * psi, t) + Fraction(split * psi, t * n)


def test_zero_with_tensor_parallelism_and_other_precisions():
    # Ψ/t per GPU before partitioning: 16·(8e9/2)/4
    assert zero_memory("8B", gpus=4, stage=3, tp=2).model_state_bytes_per_gpu == 16 * 4 * GB / 4
    # plain fp32 Adam: 4 + 4 + 8 bytes per parameter, nothing partitioned
    assert zero_memory("1B", gpus=4, stage=0, weight_bytes=4, grad_bytes=4,
                       optimizer_bytes=8).model_state_bytes_per_gpu == 16 * GB


def test_memory_with_zero_defaults_to_mixed_precision():
    m = training_memory("7.5B", dp=64, zero=2)
    assert m.dtype.name == "fp16"
    assert m.zero.model_state_bytes_per_gpu == 16_640_625_000
    assert m.to_dict()["model_state_bytes_per_gpu"] == 16_640_625_000
    fp32 = training_memory("7.5B", dtype="fp32", dp=64, zero=0)
    assert fp32.zero.model_state_bytes_per_gpu == (4 + 4 + 12) * 7_500_000_000
    assert any("2-byte weights" in n for n in fp32.notes)


def test_activation_memory_without_parallelism():
    s, b, h, a = 2048, 1, 12288, 96
    act = activation_memory(seq=s, batch=b, hidden=h, heads=a)
    # sbh(34 + 5as/h): 5·96·2048/12288 = 80, so sbh·114
    assert act.bytes_per_layer == s * b * h * 114
    assert act.formula == "sbh(34 + 5as/h)"
    assert [v.name for v in act.variants] == ["no parallelism", "selective recompute", "full recompute"]


@pytest.mark.parametrize(("sp", "recompute", "expected"), [
    # t = 8: sbh(10 + 24/8 + 80/8) = 23 sbh; sbh(34/8 + 80/8) = 14.25 sbh; sbh(10 + 3) = 13 sbh;
    # 34/8 sbh = 4.25 sbh; full recompute 2 sbh
    (False, "none", 23), (True, "none", Fraction(57, 4)), (False, "selective", 13),
    (True, "selective", Fraction(17, 4)), (False, "full", 2), (True, "full", 2),
])
def test_activation_memory_with_tensor_parallelism(sp, recompute, expected):
    sbh = 2048 * 1 * 12288
    act = activation_memory(seq=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=sp,
                            recompute=recompute, layers=96)
    assert act.bytes_per_layer == sbh * expected
    assert act.bytes_total == 96 * sbh * expected
    assert sum(v.chosen for v in act.variants) == 1


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({}, "nothing to compute"),
    ({"params": "70GB"}, "is a size, not a count"),
    ({"params": "-70B"}, "is negative"),
    ({"params": "70B", "dtype": "fp33"}, "did you mean 'fp32'"),
    ({"params": "70B", "zero": 4}, "ZeRO stage 4 does not exist"),
    ({"params": "70B", "dp": 0}, "dp=0 is not a positive whole number"),
    ({"zero": 1}, "zero= needs the parameter count"),
    ({"seq": 2048, "batch": 1}, "missing hidden=, heads="),
    ({"seq": 2048, "batch": 1, "hidden": 4096, "heads": 32, "tp": 3}, "does not divide the 32 attention heads"),
    ({"seq": 2050, "batch": 1, "hidden": 4096, "heads": 32, "tp": 4, "sequence_parallel": True},
     "does not divide the sequence length"),
])
def test_bad_memory_input(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        training_memory(**kwargs)


def test_unknown_recompute():
    with pytest.raises(UnknownNameError, match="recompute mode 'partial'"):
        activation_memory(seq=1, batch=1, hidden=1, heads=1, recompute="partial")


def test_zero3_partitions_the_weights():
    # ZeRO paper, Figure 1, P_os+g+p: (2 + 2 + K)Ψ/N_d, of which 2Ψ/N_d are the fp16 weights
    m = training_memory("7.5B", dp=64, zero=3)
    assert m.weights_bytes_per_gpu == 2 * 7_500_000_000 // 64 == 234_375_000
    assert m.weights_bytes_per_gpu == m.zero.parameters_bytes_per_gpu
    assert m.weights_bytes_total == 15 * GB  # one copy shared by the 64 GPUs, not 64 copies
    d = m.to_dict()
    assert (d["weights_bytes_per_gpu"], d["weights_bytes_total"]) == (234_375_000, 15 * GB)
    # with t = 2 as well: 2·7.5e9/(2·64)
    assert training_memory("7.5B", dp=64, zero=3, tp=2).weights_bytes_per_gpu == 117_187_500
    # stages 0-2 keep a whole replica (Ψ/t) per GPU
    for stage in (0, 1, 2):
        m = training_memory("7.5B", dp=64, zero=stage, tp=2)
        assert (m.weights_bytes_per_gpu, m.weights_bytes_total) == (7_500_000_000, 64 * 15 * GB)


def test_memory_defaults_are_the_documented_ones():
    m = training_memory("7.5B", zero=0)
    assert (m.dp, m.zero.optimizer_bytes_per_param) == (1, 12)
    assert any("N = 1 GPU partitions nothing" in n for n in m.notes)
    act = training_memory(seq=2048, batch=1, hidden=4096, heads=32).activations
    assert act.recompute == "none"


@pytest.mark.parametrize(("kwargs", "note"), [
    ({"params": "7B", "sequence_parallel": True}, "sequence_parallel=True has no effect without the activation sizes"),
    ({"params": "7B", "recompute": "full"}, "recompute= has no effect without the activation sizes"),
    ({"params": "7B", "layers": 3}, "layers= has no effect without the activation sizes"),
    ({"params": "7B", "optimizer_bytes": 8}, "optimizer_bytes= has no effect without zero="),
    ({"seq": 2048, "batch": 1, "hidden": 4096, "heads": 32, "dp": 4}, "dp= has no effect without params="),
    ({"seq": 2048, "batch": 1, "hidden": 4096, "heads": 32, "dtype": "fp16"},
     "dtype= has no effect without params="),
    ({"seq": 2048, "batch": 1, "hidden": 4096, "heads": 32, "sequence_parallel": True},
     "sequence_parallel=True has no effect with tp=1"),
    ({"seq": 2048, "batch": 1, "hidden": 4096, "heads": 32, "tp": 2, "sequence_parallel": True,
      "recompute": "full"}, "sequence_parallel=True has no effect with recompute=full"),
])
def test_options_without_effect_are_noted(kwargs, note):
    m = training_memory(**kwargs)
    assert any(n.startswith(note) for n in m.notes), m.notes


def test_options_with_effect_are_not_noted():
    m = training_memory("7B", dp=4, zero=1, optimizer_bytes=8, tp=2, seq=2048, batch=1, hidden=4096, heads=32,
                        sequence_parallel=True, recompute="selective", layers=4)
    assert not [n for n in m.notes if "no effect" in n]


@pytest.mark.parametrize(("kwargs", "fragment"), [
    # refused even where the option would have no effect
    ({"params": "7B", "optimizer_bytes": -1}, "optimizer_bytes=-1 is not a whole number >= 0"),
    ({"params": "7B", "zero": 1, "optimizer_bytes": -1}, "optimizer_bytes=-1 is not a whole number >= 0"),
    ({"params": "7B", "layers": -1}, "layers=-1 is not a positive whole number"),
    ({"params": "7B", "layers": 0}, "layers=0 is not a positive whole number"),
    ({"params": "7B", "recompute": "partial"}, "recompute mode 'partial'"),
    ({"params": "7B", "tp": 0}, "tp=0 is not a positive whole number"),
    ({"seq": 1, "batch": 1, "hidden": 1, "heads": 1, "dp": -1}, "dp=-1 is not a positive whole number"),
    ({"seq": 1, "batch": 1, "hidden": 1, "heads": 1, "dtype": "fp33"}, "did you mean 'fp32'"),
])
def test_options_that_cannot_apply_are_refused(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        training_memory(**kwargs)


def test_a_gpt_layer_counted_as_step_counts_it_is_korthikantis_table():
    """A model's layer goes through costmodel.step's count; for a GPT layer with attention through memory
    and dropout that count is Table 2's formulas, variant by variant (an independent computation), except
    the layer input kept under full recomputation, which sequence parallelism splits over the t ranks where
    Table 2 lists it whole (2sbh)."""
    from costmodel.cli.training import _model_layer
    from costmodel.step import TransformerShape
    from costmodel.training.memory import activation_memory

    gpt = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
    for t, sp in ((1, False), (8, False), (8, True)):
        for recompute in ("none", "selective", "full"):
            table = activation_memory(seq=2048, batch=2, hidden=12288, heads=96, tp=t, sequence_parallel=sp,
                                      recompute=recompute)
            layer = activation_memory(seq=2048, batch=2, hidden=12288, heads=96, tp=t, sequence_parallel=sp,
                                      recompute=recompute, layer=_model_layer(gpt, attention="unfused",
                                                                              dropout=True))
            split = t if sp else 1
            expected = [v.bytes_per_layer / (split if v.name == "full recompute" else 1) for v in table.variants]
            assert [v.bytes_per_layer for v in layer.variants] == expected
            assert layer.bytes_per_layer == table.bytes_per_layer / (split if recompute == "full" else 1)


def test_memory_of_a_model_agrees_with_step_on_its_layer(capsys):
    """Llama 3 8B (flash attention, no dropout, 8 kv heads, SwiGLU): memory said 138 GiB per GPU where step
    said 61 GiB, counting a GPT layer's attention matrix and masks."""
    from costmodel import model_preset
    from costmodel.step.memory import activation_bytes
    from tests.clirun import run_json

    data = run_json(capsys, "memory", "--model", "llama-3-8b", "--batch", "1", "--seq", "4096", "--dp", "8", "--zero",
                    "1", "--gpu", "h100-sxm")
    shape = model_preset("llama-3-8b").with_shape(sequence=4096).transformer()
    per_layer = activation_bytes(shape, micro_batch=1, tp=1, sequence_parallel=False, recompute="none",
                                 attention="flash", dropout=False)
    assert data["activation_bytes_per_layer"] == per_layer
    assert data["gpu_fit"]["fits"] is True


@pytest.mark.parametrize("extra", [("--heads", "16"), ("--heads", "64"), ("--hidden", "8192"),
                                   ("--sp", "--recompute", "full")])
def test_memory_of_a_model_takes_the_options_given_as_step_does(capsys, extra):
    """--heads, --hidden (and --sp under full recomputation) change the model's layer, as in step."""
    from costmodel import model_preset
    from costmodel.step.memory import activation_bytes
    from tests.clirun import run_json

    data = run_json(capsys, "memory", "--model", "llama-3-8b", "--batch", "1", "--tp", "8", *extra)
    given = dict(zip(extra[::2], extra[1::2], strict=False)) if "--sp" not in extra else {}
    m = model_preset("llama-3-8b")
    shape = m.with_shape(heads=int(given.get("--heads", 32)), hidden=int(given.get("--hidden", 4096))).transformer()
    per_layer = activation_bytes(shape, micro_batch=1, tp=8, sequence_parallel="--sp" in extra,
                                 recompute="full" if "full" in extra else "none", attention="flash",
                                 dropout=False)
    assert data["activation_bytes_per_layer"] == per_layer
