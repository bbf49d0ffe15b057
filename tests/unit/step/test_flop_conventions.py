"""The FLOP conventions side by side, and published TFLOP/s per GPU reproduced from measured iteration times.

MT-NLG 530B (Smith et al. 2022, section 3, the throughput table): 105 layers, hidden 20480, 128 heads,
sequence 2048, global batch 1920, activation checkpointing; 60.1 s, 50.2 s and 44.4 s per iteration on
280, 350 and 420 DGX A100 nodes (8 GPUs each) give the 126, 121 and 113 teraFLOP/s per GPU they print,
counted as Narayanan et al.'s equation (3) counts them.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.step import TransformerShape, achieved_flops
from tests.clirun import run_json

MT_NLG = TransformerShape(layers=105, hidden=20480, heads=128, sequence=2048, vocabulary=51200)
RUNS = [(280, "60.1s", 126), (350, "50.2s", 121), (420, "44.4s", 113)]


@pytest.mark.parametrize(("nodes", "time", "published"), RUNS)
def test_mt_nlg_throughput_per_gpu_to_one_percent(nodes, time, published):
    r = achieved_flops(MT_NLG, batch=1920, time_s=time, gpus=8 * nodes, recompute="full")
    per_gpu = r.hardware_flops_per_s_per_gpu / 10**12
    assert abs(per_gpu / published - 1) < Fraction(1, 100)
    assert r.conventions[0].name.startswith("hardware") and r.conventions[0].flops_per_s_per_gpu == \
        r.hardware_flops_per_s_per_gpu


def test_mt_nlg_from_the_command_line(capsys):
    data = run_json(capsys, "flops", "--layers", "105", "--hidden", "20480", "--heads", "128", "--seq", "2048",
                    "--vocab", "51200", "--global-batch", "1920", "--recompute", "full", "--time", "60.1s", "--gpus",
                    "2240", "--gpu", "a100-80gb")
    assert round(data["hardware_flops_per_s_per_gpu"] / 1e12) == 126
    names = [c["name"] for c in data["conventions"]]
    assert names[0] == "hardware: as run, recomputation included (eq. 3)" and len(names) == 5


def test_the_conventions_agree_where_they_should():
    r = achieved_flops(MT_NLG, batch=8, time_s="30s", gpus=8, peak_flops=312e12)
    by = {c.name: c for c in r.conventions}
    model = by["model: forward and backward, no recomputation"]
    palm = by["6·N·tokens + 12·l·h·s·tokens (attention)"]
    assert model.flops == r.model_flops == palm.flops  # PaLM's identity: no recomputation, no causal saving
    assert by["6·N·tokens, N the weight matrices"].flops == r.six_n_flops
    assert all(c.utilization == c.flops_per_s_per_gpu / Fraction(312 * 10**12) for c in r.conventions)
    assert not any(c.name.startswith("hardware") for c in r.conventions)  # as run = model here
    causal = achieved_flops(MT_NLG, batch=8, causal=True)
    assert causal.conventions[1].flops < causal.conventions[2].flops  # the causal saving PaLM does not take


def test_a_mixture_of_experts_counted_by_its_card_overstates():
    mixtral = TransformerShape(layers=32, hidden=4096, heads=32, kv_groups=8, sequence=4096, vocabulary=32000,
                               ffn_factor=Fraction(14336, 4096), gated=True, experts=8, top_k=2,
                               tied_embeddings=False)
    r = achieved_flops(mixtral, batch=1)
    card = r.conventions[-1]
    assert card.name.endswith("(every expert)") and card.flops == 6 * r.total_parameters * r.tokens
    assert card.flops > 3 * r.six_n_flops  # 46.7 B against 12.9 B active, less the embeddings
