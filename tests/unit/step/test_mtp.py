"""Multi-token prediction (MTP) modules (DeepSeek-AI 2024, DeepSeek-V3 Technical Report, arXiv:2412.19437,
section 2.2): their parameters, FLOPs and place in a step, checked against counts written here from the
report and against Megatron-LM's own FLOP formula."""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.step import TransformerShape, model_flops, parameters
from costmodel.step.model import uneven, with_mtp

V3 = TransformerShape(layers=61, hidden=7168, heads=128, head_dim=128, sequence=4096, vocabulary=129280,
                      ffn_factor=Fraction(18432, 7168), gated=True, experts=256, top_k=8,
                      expert_ffn_factor=Fraction(2048, 7168), shared_experts=1, dense_layers=3,
                      tied_embeddings=False, q_rank=1536, kv_rank=512, rope_head_dim=64, value_head_dim=128,
                      mtp_layers=1)
MAIN = dataclasses.replace(V3, mtp_layers=0)


def _moe_layer_weights() -> int:
    """One DeepSeek-V3 MoE layer's weights, tensor by tensor as ``model.layers.61`` of the checkpoint holds
    them: the latent attention, the router, 256 routed and one shared SwiGLU expert of 2048, and the norms
    (two of h, the latents' of 1536 and 512)."""
    h = 7168
    attention = h * 1536 + 1536 * 128 * 192 + h * (512 + 64) + 512 * 128 * 256 + 128 * 128 * h
    experts = (256 + 1) * 3 * h * 2048
    return attention + h * 256 + experts + 2 * h + 1536 + 512


def test_the_module_is_a_layer_a_projection_and_three_norms():
    h = 7168
    module = _moe_layer_weights() + 2 * h * h + 3 * h  # eh_proj, enorm, hnorm, shared_head.norm
    count = parameters(V3)
    assert count.mtp == module == 11_610_067_968
    assert count.main == parameters(MAIN).total == 671_026_404_352  # the published 671B
    assert count.total == 671_026_404_352 + 11_610_067_968 == 682_636_472_320
    # a token uses the attention, the router, 8 routed and the shared expert of the module
    active = module - (256 - 8) * 3 * h * 2048
    assert (count.mtp_active, count.main_active) == (active, 37_552_282_624)
    assert count.active == 37_552_282_624 + active
    assert parameters(MAIN).to_dict().keys().isdisjoint({"main", "mtp"})  # none without the modules


def test_the_checkpoints_685b_holds_the_modules_copies_of_the_embedding_and_head():
    """The report (section 2.2 and the model card): 685B on Hugging Face, 671B of the main model and 14B of
    the MTP module; README_WEIGHTS.md: 11.5B unique weights besides the shared 0.9B embedding and 0.9B output
    head.  The checkpoint stores a copy of both for the module (``model.layers.61.embed_tokens`` and
    ``shared_head.head``), which training shares and this count leaves out."""
    count = parameters(V3)
    copies = 2 * 129280 * 7168
    with_copies = count.mtp + copies
    assert with_copies == 13_463_426_048
    # 14B and 685B as published are rounded sums of rounded parts (671 + 14): within 4% and 0.1%
    assert abs(with_copies / 14e9 - 1) < 0.04
    assert abs((count.total + copies) / 685e9 - 1) < 0.001
    # README_WEIGHTS.md's 11.5B is the module's transformer layer (11.507B); the 2h² projection adds 0.1B
    assert round(_moe_layer_weights() / 1e9, 1) == 11.5
    assert count.total == count.main + count.mtp  # what the step trains: no copy


def _megatron_flops(*, batch: int, seq: int, mtp: int) -> int:
    """Megatron-LM's ``num_floating_point_operations`` (megatron/training/training.py, ``transformer_flops``)
    for DeepSeek-V3's arguments (multi-latent attention, --moe-layer-freq [0]*3+[1]*58, one shared expert of
    2048, --mtp-num-layers), rewritten here term by term in exact integers (its /2 of the causal mask
    kept as a halving)."""
    h, heads, vocab, ffn, moe_ffn, topk = 7168, 128, 129280, 18432, 2048, 8
    q_lora, kv_lora, qk, rope, v = 1536, 512, 128, 64, 128
    layers, dense, moe = 61, 3, 58
    moe += 1 * mtp  # last_layer_is_moe * mtp_num_layers
    n_layers = layers + mtp
    f, fma, swiglu = 3, 2, 3
    q_term = q_lora * (h + heads * (qk + rope) + 1)
    attn = f * fma * (q_term + kv_lora * (h + heads * (qk + v) + 1) + h * rope + heads * v * h)
    core2 = f * fma * (heads * (qk + rope) + heads * v)  # twice the per-layer core term, whose /2 is causal
    tokens = batch * seq
    linear = tokens * (f * fma * h * (ffn * swiglu * dense + moe_ffn * topk * swiglu * moe
                                      + moe_ffn * swiglu * moe)
                       + attn * n_layers
                       + f * fma * mtp * (3 * h + 2 * h * h)
                       + f * fma * h * vocab * (mtp + 1))
    return linear + batch * seq * seq * core2 * n_layers // 2


def test_flops_against_megatron_lms_formula():
    """With --mtp-num-layers 1 Megatron-LM counts one more MoE layer, the MTP projection and norms and a
    second logits; our count equals it but for what the conventions count differently, each term stated:
    the router (2·h·E a token and MoE layer, which Megatron leaves out), the latent norms (Megatron counts
    d_c' + d_c multiply-adds a token and layer) and the module's three norms (3h), which this count, as
    everywhere, leaves out as weights without FLOPs."""
    b, s = 2, 4096
    ours = model_flops(V3, batch=b, causal=True)
    tokens = b * s
    router = 3 * 2 * tokens * 7168 * 256 * (58 + 1)
    latent_norms = 3 * 2 * tokens * (1536 + 512) * (61 + 1)
    mtp_norms = 3 * 2 * tokens * 3 * 7168
    megatron = _megatron_flops(batch=b, seq=s, mtp=1)
    assert ours.total == megatron + router - latent_norms - mtp_norms
    # and the module alone: what Megatron adds for it, the same way
    extra = _megatron_flops(batch=b, seq=s, mtp=1) - _megatron_flops(batch=b, seq=s, mtp=0)
    assert ours.mtp is not None
    assert ours.mtp.total == extra + 3 * 2 * tokens * 7168 * 256 - 3 * 2 * tokens * (1536 + 512) - mtp_norms
    assert ours.total - model_flops(MAIN, batch=b, causal=True).total == ours.mtp.total


def test_the_module_per_token():
    """Per token, forward: the layer's, 2·2h·h for the projection, 2·h·V for the logits; three times with
    the backward; the sequence is s (each module runs on every position, the labels rolled)."""
    f = model_flops(V3, batch=1, causal=True)
    assert f.mtp is not None
    layer = f.kind(moe=True, window=False)
    assert f.mtp.layer == layer
    assert f.mtp.projection_forward == 2 * 4096 * 2 * 7168 * 7168
    assert f.mtp.logits_forward == 2 * 4096 * 7168 * 129280
    assert f.mtp.total == 3 * layer.forward + 3 * (f.mtp.projection_forward + f.mtp.logits_forward)
    # the 6·N identity with the module's layer and the output layer once more in N
    plain = model_flops(V3, batch=1)
    attention = 6 * (61 + 1) * 128 * (128 + 64 + 128) * 4096 * 4096
    assert plain.total == plain.six_n_flops + attention
    full = model_flops(V3, batch=1, causal=True, recompute="full")  # the layer's forward once more
    assert full.mtp is not None and full.mtp.total == f.mtp.total + layer.forward


def test_a_dense_last_layer_makes_a_dense_module():
    shape = TransformerShape(layers=4, hidden=64, heads=4, sequence=32, vocabulary=100, experts=4, top_k=1,
                             expert_layers="ED", mtp_layers=2)
    assert not shape.mtp_moe
    count = parameters(shape)
    assert count.mtp == 2 * (shape.layer_parameters + 2 * 64 * 64 + 2 * 64 + 3 * 64)
    assert count.mtp_active == count.mtp


@pytest.mark.parametrize(("value", "message"), [
    (-1, "mtp_layers=-1"), (1.5, "mtp_layers=1.5"), (True, "mtp_layers=True"), (10**9, "mtp_layers=1000000000"),
    ("1", "mtp_layers='1'"),
])
def test_bad_depths_are_one_line_errors(value, message):
    with pytest.raises(InputError) as info:
        dataclasses.replace(MAIN, mtp_layers=value)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_last_stage_runs_the_modules():
    assert uneven(61, 32, mtp=1) == (1, *(2,) * 30, 0)
    assert uneven(126, 16) == uneven(126, 16, mtp=0)
    assert with_mtp((1, 2, 2, 0), 1) == (1, 2, 2, 1)
    from costmodel.step import step

    common = {"shape": dataclasses.replace(V3, layers=8, dense_layers=1), "gpu": "h100-sxm", "tp": 2, "pp": 2,
              "ep": 4, "microbatches": 4, "dp": 4, "zero": 1, "recompute": "full", "allow_oom": True}
    base = step(**{**common, "shape": dataclasses.replace(common["shape"], mtp_layers=0)})
    more = step(**common)
    assert more.stage_layers == base.stage_layers == (4, 4)
    assert more.memory is not None and base.memory is not None
    assert more.memory[0] == base.memory[0]  # the first stage holds none of it
    assert more.memory[1].parameters > base.memory[1].parameters
    assert more.memory[1].activation_bytes > base.memory[1].activation_bytes
    assert more.step_s > base.step_s


def test_megatron_arguments_give_the_depth():
    from costmodel.describe.megatron import megatron_arguments

    base = "--num-layers 4 --hidden-size 64 --num-attention-heads 4"
    assert megatron_arguments(f"{base} --mtp-num-layers 2").shape["mtp_layers"] == 2
    assert megatron_arguments(f"{base} --mtp-num-layers 0").shape["mtp_layers"] == 0  # none, as a script may say
    with pytest.raises(InputError, match="is not a whole number ≥ 0"):
        megatron_arguments(f"{base} --mtp-num-layers -1")
    one = megatron_arguments(f"{base} --mtp-num-layers 1 --mtp-use-repeated-layer")
    assert one.shape["mtp_layers"] == 1 and any("changes nothing" in n for n in one.notes)
    with pytest.raises(InputError, match="mtp-use-repeated-layer with mtp-num-layers 2: the 2 modules share"):
        megatron_arguments(f"{base} --mtp-num-layers 2 --mtp-use-repeated-layer")
