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
    ({"zero": 1}, "--zero needs the parameter count"),
    ({"seq": 2048, "batch": 1}, "missing --hidden, --heads"),
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
