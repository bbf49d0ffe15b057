"""Multi-head latent attention (MLA): DeepSeek-V2, V2-Lite and V3, and a small shape worked by hand.

Each count is checked against a sum written out here: the small shape's weights matrix by matrix and its
FLOPs product by product, and the published models' parameters tensor by tensor as the modeling code
(transformers' ``DeepseekV3Attention``, ``DeepseekV3MoE``) names and shapes them.
Sources: DeepSeek-AI 2024, DeepSeek-V2 (arXiv:2405.04434), section 2.1 (the latent attention), section 3.1
and appendix B (236B total and 21B activated; V2-Lite 15.7B and 2.4B); DeepSeek-AI 2024, DeepSeek-V3
Technical Report (arXiv:2412.19437), the abstract and section 4.2 (671B total, 37B activated); the shapes:
deepseek-ai/DeepSeek-V3's inference/configs/config_236B.json and the Hugging Face config.json files in
tests/data/hf.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, model_flops, parameters, step
from costmodel.step.flops import achieved_flops
from costmodel.step.memory import activation_bytes
from costmodel.step.ops import layer_ops

LINK = combine_link(alpha="10us", beta="1ns/B")

# a small shape: h 64, 4 heads, each query and key head 16 channels without the rotary embedding and 8
# with it, each value head 12; the queries' latent 24, the keys' and values' 20
H, A, D, DR, DV, QR, KR, F, V, L, S = 64, 4, 16, 8, 12, 24, 20, 256, 100, 2, 32
SMALL = TransformerShape(layers=L, hidden=H, heads=A, head_dim=D, sequence=S, vocabulary=V,
                         q_rank=QR, kv_rank=KR, rope_head_dim=DR, value_head_dim=DV)

# DeepSeek-V3 (the Hugging Face config.json): 61 layers, the first 3 dense
V3 = TransformerShape(layers=61, hidden=7168, heads=128, head_dim=128, sequence=4096, vocabulary=129280,
                      ffn_factor=Fraction(18432, 7168), gated=True, experts=256, top_k=8,
                      expert_ffn_factor=Fraction(2048, 7168), shared_experts=1, dense_layers=3,
                      tied_embeddings=False, q_rank=1536, kv_rank=512, rope_head_dim=64, value_head_dim=128)
# DeepSeek-V2 (config_236B.json of deepseek-ai/DeepSeek-V3's inference code): 60 layers, the first dense
V2 = TransformerShape(layers=60, hidden=5120, heads=128, head_dim=128, sequence=4096, vocabulary=102400,
                      ffn_factor=Fraction(12288, 5120), gated=True, experts=160, top_k=6,
                      expert_ffn_factor=Fraction(1536, 5120), shared_experts=2, dense_layers=1,
                      tied_embeddings=False, q_rank=1536, kv_rank=512, rope_head_dim=64, value_head_dim=128)
# DeepSeek-V2-Lite: no queries' latent, heads of 2048/16 = 128 channels without the rotary embedding
V2_LITE = TransformerShape(layers=27, hidden=2048, heads=16, sequence=4096, vocabulary=102400,
                           ffn_factor=Fraction(10944, 2048), gated=True, experts=64, top_k=6,
                           expert_ffn_factor=Fraction(1408, 2048), shared_experts=2, dense_layers=1,
                           tied_embeddings=False, kv_rank=512, rope_head_dim=64, value_head_dim=128)


def test_small_shape_parameters_matrix_by_matrix():
    # q_a_proj 64 × 24, q_b_proj 24 × 4·(16 + 8), kv_a_proj_with_mqa 64 × (20 + 8), kv_b_proj 20 × 4·(16 + 12),
    # o_proj 4·12 × 64
    matrices = (64 * 24, 24 * 96, 64 * 28, 20 * 112, 48 * 64)
    assert matrices == (1536, 2304, 1792, 2240, 3072)
    assert SMALL.attention_matrices == matrices
    assert SMALL.attention_parameters == 10944
    assert SMALL.qkv_parameters == 10944 - 3072 == 7872
    assert SMALL.layer_parameters == 10944 + 2 * 64 * 256 == 43712  # the FFN's two matrices of 64 × 256
    assert SMALL.norm_parameters == 2 * 64 + 24 + 20 == 172  # two h-wide norms, q_a_layernorm, kv_a_layernorm
    count = parameters(SMALL)
    assert (count.embeddings, count.attention, count.dense_ffn, count.norms) == (6400, 21888, 65536, 408)
    assert count.total == count.active == 6400 + 2 * 43712 + 2 * 172 + 64 == 94232
    # N of 6·N: the layers' matrices and the tied V·h output layer
    assert SMALL.parameters == 2 * 43712 + 6400 == 93824


def test_small_shape_widths():
    assert (SMALL.head_width, SMALL.rope_width, SMALL.query_head_width, SMALL.value_head_width) == (16, 8, 24, 12)
    assert (SMALL.attention_width, SMALL.key_width, SMALL.value_width, SMALL.context_width) == (96, 96, 48, 48)
    assert SMALL.latent and SMALL.groups == A


def test_small_shape_flops_product_by_product():
    f = model_flops(SMALL, batch=2)
    t = 2 * 32  # tokens
    assert f.layer.qkv == 2 * t * 7872 == 1_007_616  # the four down- and up-projections
    # scores: 2 FLOPs a multiply-add over 2 sequences, 32 × 32 pairs, 4 heads of 16 + 8; context: of 12
    assert f.layer.attention == 2 * 2 * 32 * 32 * 4 * 24 + 2 * 2 * 32 * 32 * 4 * 12 == 589_824
    assert f.layer.projection == 2 * t * 48 * 64 == 393_216
    assert f.layer.mlp == 2 * t * 64 * 256 * 2 == 4_194_304
    assert f.layer.forward == 6_184_960
    logits = 2 * t * 64 * 100
    assert f.total == 2 * 3 * 6_184_960 + 3 * logits == 39_567_360
    assert f.six_n_flops == 6 * 93824 * t == 36_028_416
    # PaLM's convention, the attention term 6·l·a·(d + d_r + d_v)·s a token (12·l·a·d without MLA)
    assert f.total == f.six_n_flops + 6 * 2 * 4 * (16 + 8 + 12) * 32 * t
    causal = model_flops(SMALL, batch=2, causal=True)
    assert causal.layer.attention == 589_824 // 2
    full = model_flops(SMALL, batch=2, recompute="full")
    assert full.total == 2 * 4 * 6_184_960 + 3 * logits


def test_the_six_n_convention_names_the_latent_attention_term():
    r = achieved_flops(SMALL, batch=2)
    names = [c.name for c in r.conventions]
    assert "6·N·tokens + 6·l·a·(d + d_r + d_v)·s·tokens (attention)" in names
    palm = next(c for c in r.conventions if "(attention)" in c.name)
    assert palm.flops == r.model_flops
    assert any(s.citation.key == "deepseekv2" for s in r.sources)


def test_without_the_queries_latent_one_query_projection():
    shape = dataclasses.replace(SMALL, q_rank=None)
    # q_proj 64 × 4·(16 + 8), then kv_a_proj_with_mqa, kv_b_proj, o_proj as above
    assert shape.attention_matrices == (64 * 96, 1792, 2240, 3072)
    assert shape.norm_parameters == 2 * 64 + 20
    assert model_flops(shape, batch=1).layer.qkv == 2 * 32 * (6144 + 1792 + 2240)


def _deepseek_tensors(shape: TransformerShape) -> dict[str, int]:
    """The main model's weights as transformers' DeepseekV3ForCausalLM names them, each its element count
    (rows × columns), layer by layer: written from the modeling code's module list, not from the shape's
    properties."""
    h, a, vocab = shape.hidden, shape.heads, shape.vocabulary
    nope, rope, value = shape.head_dim or h // a, shape.rope_head_dim, shape.value_head_dim
    q_rank, kv_rank = shape.q_rank, shape.kv_rank
    dense, expert = int(shape.ffn_factor * h), int(shape.expert_ffn_factor * h)
    out = {"model.embed_tokens.weight": vocab * h, "model.norm.weight": h, "lm_head.weight": vocab * h}
    for i in range(shape.layers):
        p = f"model.layers.{i}."
        attn = {"input_layernorm.weight": h, "post_attention_layernorm.weight": h,
                "self_attn.kv_a_proj_with_mqa.weight": (kv_rank + rope) * h,
                "self_attn.kv_a_layernorm.weight": kv_rank,
                "self_attn.kv_b_proj.weight": a * (nope + value) * kv_rank,
                "self_attn.o_proj.weight": h * a * value}
        if q_rank is None:
            attn["self_attn.q_proj.weight"] = a * (nope + rope) * h
        else:
            attn |= {"self_attn.q_a_proj.weight": q_rank * h, "self_attn.q_a_layernorm.weight": q_rank,
                     "self_attn.q_b_proj.weight": a * (nope + rope) * q_rank}
        out |= {p + k: v for k, v in attn.items()}
        if i < shape.dense_layers:
            out |= {p + f"mlp.{m}.weight": dense * h for m in ("gate_proj", "up_proj", "down_proj")}
            continue
        out[p + "mlp.gate.weight"] = shape.experts * h
        for e in range(shape.experts):
            out |= {p + f"mlp.experts.{e}.{m}.weight": expert * h for m in ("gate_proj", "up_proj", "down_proj")}
        width = expert * shape.shared_experts
        out |= {p + f"mlp.shared_experts.{m}.weight": width * h for m in ("gate_proj", "up_proj", "down_proj")}
    return out


def _active(tensors: dict[str, int], shape: TransformerShape) -> int:
    """The tensors one token uses: all but the routed experts it is not sent to (k of E in each layer)."""
    routed = sum(v for k, v in tensors.items() if ".mlp.experts." in k)
    return sum(tensors.values()) - routed + routed * shape.top_k // shape.experts


@pytest.mark.parametrize(("shape", "total", "active", "published"), [
    (V3, 671_026_404_352, 37_552_282_624, (671e9, 37e9)),
    (V2, 235_741_434_880, 21_375_800_320, (236e9, 21e9)),
    (V2_LITE, 15_706_484_224, 2_661_150_208, (15.7e9, 2.4e9)),
], ids=["deepseek-v3", "deepseek-v2", "deepseek-v2-lite"])
def test_deepseek_parameters_tensor_by_tensor(shape, total, active, published):
    tensors = _deepseek_tensors(shape)
    assert sum(tensors.values()) == total
    assert _active(tensors, shape) == active
    count = parameters(shape)
    assert (count.total, count.active) == (total, active)
    # the published figures, rounded: within 0.5% in total; DeepSeek count the activated parameters without
    # the input embedding (a lookup), which the model card's convention here keeps
    assert abs(total / published[0] - 1) < 0.005
    lookup = shape.vocabulary * shape.hidden
    assert abs((active - lookup) / published[1] - 1) < 0.025


def test_deepseek_v3_against_its_checkpoint():
    """DeepSeek-V3's main model (its 61 layers, README_WEIGHTS.md: 671B) tensor by tensor; the checkpoint
    also holds each MoE layer's router correction bias, ``e_score_correction_bias`` (256 a layer), a bias
    the count leaves out, which makes its 671,026,419,200."""
    biases = (61 - 3) * 256
    assert parameters(V3).total + biases == 671_026_419_200
    # the 0.9B embedding and 0.9B output head of README_WEIGHTS.md
    assert V3.vocabulary * V3.hidden == 926_679_040


def test_the_old_standard_attention_count_differs():
    """Read as standard attention (heads of 7168/128 = 56, every head its own K and V), DeepSeek-V3's
    attention is 4·h² a layer; the latent attention's is 187,105,280."""
    standard = dataclasses.replace(V3, head_dim=None, q_rank=None, kv_rank=None, rope_head_dim=None,
                                   value_head_dim=None)
    assert standard.attention_parameters == 4 * 7168**2 == 205_520_896
    assert V3.attention_parameters == (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256
                                       + 128 * 128 * 7168) == 187_105_280


@pytest.mark.parametrize("tp", [1, 2, 4])
@pytest.mark.parametrize("sequence_parallel", [False, True])
@pytest.mark.parametrize("attention", ["flash", "unfused"])
def test_layer_ops_run_the_latent_projections_as_megatron_core_does(tp, sequence_parallel, attention):
    b = 2
    ops = layer_ops(SMALL, micro_batch=b, tp=tp, sequence_parallel=sequence_parallel, attention=attention)
    forward = {o.name: o for o in ops if o.phase == "forward" and o.flops}
    t = b * S
    rows = t // tp if sequence_parallel and tp > 1 else t  # the duplicated down-projections' tokens
    shapes = {name: (o.m, o.n, o.k) for name, o in forward.items() if o.kind == "gemm" and o.batch == 1}
    assert shapes == {"Q down": (rows, QR, H), "Q up": (t, A // tp * (D + DR), QR),
                      "KV down": (rows, KR + DR, H), "KV up": (t, A // tp * (D + DV), KR),
                      "output projection": (t, H, A // tp * DV), "FFN in": (t, F // tp, H), "FFN out": (t, H, F // tp)}
    if attention == "unfused":
        assert (forward["attention scores"].n, forward["attention scores"].k) == (S, D + DR)
        assert (forward["attention context"].n, forward["attention context"].k) == (DV, S)
        assert forward["attention scores"].batch == b * A // tp
    layer = model_flops(SMALL, batch=b).layer
    down = 2 * t * (H * QR + H * (KR + DR))  # computed whole on every rank without sequence parallelism
    extra = 0 if sequence_parallel or tp == 1 else down - Fraction(down, tp)
    assert sum(o.flops for o in forward.values()) == layer.forward / tp + extra
    norms = {o.name: o.bytes for o in ops if o.phase == "forward" and "latent norm" in o.name}
    assert norms == {"Q latent norm": 2 * 2 * rows * QR, "KV latent norm": 2 * 2 * rows * KR}


def test_layer_ops_without_the_queries_latent():
    shape = dataclasses.replace(SMALL, q_rank=None)
    ops = layer_ops(shape, micro_batch=1, tp=2)
    names = [o.name for o in ops if o.phase == "forward"]
    assert "Q" in names and "Q down" not in names and "Q latent norm" not in names
    q = next(o for o in ops if o.name == "Q")
    assert (q.m, q.n, q.k) == (S, A // 2 * (D + DR), H)


def test_flash_attention_moves_the_heads_keys_and_values():
    (flash,) = [o for o in layer_ops(SMALL, micro_batch=1, tp=2) if o.name == "flash attention"]
    e, heads = 2, A // 2
    # Q in and the output out, K and V: (d + d_r) and d_v channels for each of the rank's heads
    assert flash.bytes == e * (heads * S * (D + DR + DV) + heads * S * (D + DR + DV))
    assert flash.flops == 2 * heads * (D + DR + DV) * S * S


@pytest.mark.parametrize("tp,sequence_parallel", [(1, False), (2, False), (2, True)])
def test_activation_memory_of_the_latent_attention(tp, sequence_parallel):
    s, b, e = S, 1, 2
    sp = tp if sequence_parallel else 1
    # norms and inputs, two masks; Q and K a·(d + d_r) each, V and the projection's input a·d_v each; the FFN's
    # inside 2·e·s·b·f (GeLU: its input and output); FlashAttention's statistics 4·a·s·b; the two latents,
    # each stored twice (the norm's input and the up-projection's), whole on each rank without sequence
    # parallelism
    expected = (Fraction((4 * e + 2) * s * b * H, sp)
                + Fraction(e * (2 * A * (D + DR) + 2 * A * DV) * s * b + e * 2 * s * b * F, tp)
                + Fraction(4 * A * s * b, tp) + Fraction(2 * e * (QR + KR) * s * b, sp))
    assert activation_bytes(SMALL, micro_batch=b, tp=tp, sequence_parallel=sequence_parallel,
                            recompute="none", attention="flash") == expected
    full = activation_bytes(SMALL, micro_batch=b, tp=tp, sequence_parallel=sequence_parallel,
                            recompute="full", attention="flash")
    assert full == Fraction(e * s * b * H, sp)


def test_a_step_prices_the_latent_attention():
    run = {"peak_flops": "989e12", "efficiency": "1/2", "tp": 2, "dp": 2, "micro_batch": 1, "link": LINK}
    r = step(shape=SMALL, **run)
    assert r.model_flops == model_flops(SMALL, batch=r.to_dict()["microbatches"] * 2, causal=False).total
    assert r.step_s > step(shape=dataclasses.replace(SMALL, layers=1), **run).step_s


def test_ring_attention_sends_each_heads_keys_and_values():
    shape = dataclasses.replace(SMALL, sequence=64)
    r = step(shape=shape, peak_flops="989e12", efficiency="1/2", cp=2, tp=2, link=LINK, causal=True)
    # a K and a V block of s/cp tokens of the rank's a/t heads: (d + d_r) + d_v channels, 2 bytes each
    block = Fraction(64, 2) * (A // 2) * (D + DR + DV) * 2
    assert r.cp_send_s == Fraction(10, 10**6) + Fraction(1, 10**9) * block


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"q_rank": 16}, r"^q_rank=16 describes multi-head latent attention; give kv_rank="),
    ({"rope_head_dim": 8}, r"^rope_head_dim=8 describes multi-head latent attention; give kv_rank="),
    ({"value_head_dim": 8}, r"^value_head_dim=8 describes multi-head latent attention; give kv_rank="),
    ({"kv_rank": 0}, r"^kv_rank=0 is not a positive integer; give the width of the keys' and values' latent"),
    ({"kv_rank": 8, "q_rank": -1}, r"^q_rank=-1 is not a positive integer; give the width of the queries'"),
    ({"kv_rank": 8, "rope_head_dim": -1}, r"^rope_head_dim=-1 is not a non-negative integer; give the rotary"),
    ({"kv_rank": 8, "value_head_dim": 2.5}, r"^value_head_dim=2.5 is not a positive integer; give the"),
    ({"kv_rank": True}, r"^kv_rank=True is not a positive integer"),
    ({"kv_rank": 8, "kv_groups": 2}, r"^kv_groups=2 with kv_rank=8: latent attention gives each of the 4 "
                                     r"heads its own keys and values, up-projected from the latent; drop kv_groups=$"),
    ({"kv_rank": 8, "qk_norm": "head"}, r"^qk_norm='head' with kv_rank=8: latent attention's norms"),
])
def test_bad_latent_attention_fields_are_one_line_errors(kwargs, message):
    with pytest.raises(InputError, match=message) as caught:
        TransformerShape(layers=1, hidden=64, heads=4, sequence=8, vocabulary=8, **kwargs)
    assert "\n" not in str(caught.value)


def test_kv_groups_equal_to_the_heads_and_a_rotary_part_of_zero_are_allowed():
    shape = TransformerShape(layers=1, hidden=64, heads=4, kv_groups=4, sequence=8, vocabulary=8, kv_rank=8,
                             rope_head_dim=0)
    # no rotary part, values as wide as the keys' heads (16): kv_b_proj 8 × 4·(16 + 16)
    assert shape.attention_matrices == (64 * 64, 64 * 8, 8 * 128, 64 * 64)
