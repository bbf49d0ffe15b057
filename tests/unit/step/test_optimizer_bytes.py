"""The optimizer step's memory traffic: Megatron-Core's mixed-precision step, counted per parameter.

An independent count from the framework's source (megatron/core/optimizer/optimizer.py and
megatron/core/distributed/param_and_grad_buffer.py): the gradient norm reads the fp32 gradient (4 B), the
fused Adam reads the gradient, master weight and both moments and writes the weight and moments (16 + 12),
the copy to the model's bf16 weights reads the master weight and writes 2 B; and before the next step's
backward the whole fp32 gradient buffer is zeroed (4 B a parameter, unsharded below ZeRO 2).
"""

from __future__ import annotations

from fractions import Fraction

from costmodel.gpus import load_gpu
from costmodel.step import step
from costmodel.step.compute import optimizer_time
from costmodel.step.flops import TransformerShape
from costmodel.step.ops import GRADIENT_ZERO_BYTES, optimizer_bytes
from costmodel.step.rates import Rates

SHAPE = TransformerShape(layers=4, hidden=1024, heads=16, sequence=1024, vocabulary=32000)


def test_bytes_per_parameter_follow_megatrons_step():
    norm, adam, copy_back = 4, 4 + 4 + 4 + 4 + 4 + 4 + 4, 4 + 2
    assert optimizer_bytes(Fraction(2)) == norm + adam + copy_back == 38
    assert optimizer_bytes(Fraction(4)) == 40  # an fp32 model copy written
    assert GRADIENT_ZERO_BYTES == 4


def test_the_step_adds_the_zeroing_of_the_whole_gradient_buffer():
    gpu = load_gpu("h200")
    rates = Rates.of(gpu, "bf16")
    params = Fraction(10**9)
    adam = params * 38 / (gpu.memory_bandwidth_bytes_per_s * gpu.memory_kernels["optimizer"])
    zero = params * 4 / (gpu.memory_bandwidth_bytes_per_s * gpu.memory_efficiency)
    assert optimizer_time(params, rates) == adam + rates.launch
    assert optimizer_time(params, rates, params) == adam + zero + 2 * rates.launch


def test_zero_1_shards_the_update_but_not_the_gradient_buffer():
    kw = {"shape": SHAPE, "gpu": "h200", "micro_batch": 1}
    alone, one, two = step(**kw), step(dp=4, zero=1, **kw), step(dp=4, zero=2, **kw)
    rates = Rates.of(load_gpu("h200"), "bf16")
    n = Fraction(alone.memory[0].parameters)
    assert alone.optimizer_s == optimizer_time(n, rates, n)
    assert one.optimizer_s == optimizer_time(n / 4, rates, n)
    assert two.optimizer_s == optimizer_time(n / 4, rates, n / 4)
    assert alone.optimizer_s > one.optimizer_s > two.optimizer_s
