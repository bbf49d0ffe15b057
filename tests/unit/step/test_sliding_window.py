"""Sliding-window (local) attention: the band of the causal mask, layer by layer, stage by stage.

The band's count is checked against the mask itself (numpy, key by key) and against its area integrated
piece by piece; the models' counts against sums written out here layer by layer.  Sources: Jiang et al.
2023 (Mistral 7B, arXiv:2310.06825, section 2 and Table 1: a window of 4096 on every layer); Gemma Team
2024 (Gemma 2, arXiv:2408.00118, section 2: local and global layers alternating, a window of 4096); Gemma
Team 2025 (Gemma 3, arXiv:2503.19786, section 2: five local layers for each global one); the Hugging Face
config.json files under tests/data/hf (each names its URL in its ``_source`` key).
"""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from costmodel.describe.hf import read_hf_config
from costmodel.errors import InputError
from costmodel.step import TransformerShape, achieved_flops, model_flops, parameters, step
from costmodel.step.flops import attention_pairs, window_pattern
from costmodel.step.ops import layer_ops

HF = Path(__file__).resolve().parents[2] / "data" / "hf"


def _mask_pairs(s: int, w: int | None) -> int:
    """The query-key pairs the causal mask (with a window of w: Hugging Face's ``kv_idx > q_idx - w``)
    lets through, counted on the s × s mask itself."""
    q, k = np.arange(s)[:, None], np.arange(s)[None, :]
    allowed = k <= q
    if w is not None:
        allowed &= k > q - w
    return int(allowed.sum())


def _area(s: int, w: int) -> Fraction:
    """∫₀ˢ min(x, w) dx, integrated one unit at a time (exact: the integrand is linear between integers)."""
    return sum((Fraction(min(x, w) + min(x + 1, w), 2) for x in range(s)), Fraction(0))


# -- the band -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("s", "w", "pairs"), [
    (8192, 4096, Fraction(8192 * 4096 - 4096**2 // 2)),  # w < s: s·w − w²/2 = 25,165,824
    (8192, 8192, Fraction(8192**2, 2)),                  # w = s: the causal triangle s²/2
    (8192, 10**9, Fraction(8192**2, 2)),                 # w > s: no window at all
    (8192, 1, Fraction(8192 - Fraction(1, 2))),          # each query meets itself only
    (7, 3, Fraction(7 * 3) - Fraction(9, 2)),            # odd sizes stay exact
])
def test_the_band_of_the_causal_mask(s, w, pairs):
    assert attention_pairs(s, window=w) == pairs
    assert attention_pairs(8192, window=4096) == 25_165_824
    assert attention_pairs(s) == Fraction(s * s, 2)
    assert attention_pairs(s, causal=False) == s * s


@pytest.mark.parametrize(("s", "w"), [(64, 16), (64, 1), (64, 63), (64, 64), (64, 200), (97, 13)])
def test_the_band_against_the_mask_counted_key_by_key(s, w):
    """Σ over queries i (from 1) of min(i, w) keys, counted on the mask, is s·w − w(w − 1)/2 for w ≤ s: the
    continuous band the count uses is that less w/2, as the causal s²/2 is the mask's s(s + 1)/2 less s/2."""
    counted = _mask_pairs(s, w)
    assert counted == sum(min(i, w) for i in range(1, s + 1))
    assert attention_pairs(s) == _mask_pairs(s, None) - Fraction(s, 2)
    assert attention_pairs(s, window=w) == counted - Fraction(min(w, s), 2)
    assert attention_pairs(s, window=w) == _area(s, w)


def test_the_band_grows_with_the_window_up_to_the_causal_triangle():
    s = 512
    counts = [attention_pairs(s, window=w) for w in range(1, 2 * s)]
    assert all(a < b for a, b in itertools.pairwise(counts[:s]))  # strictly up to w = s
    assert set(counts[s - 1:]) == {Fraction(s * s, 2)}  # then flat


# -- the shape ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "layers", "canonical", "local"), [
    ("L", 32, "L", list(range(32))),
    ("lg", 6, "LG", [0, 2, 4]),
    ("LLLLLG", 14, "5LG", [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13]),  # the pattern repeats, cut at the end
    ("5L1G", 8, "5LG", [0, 1, 2, 3, 4, 6, 7]),
    ("3G5L", 8, "3G5L", [3, 4, 5, 6, 7]),
    ("2L2L", 4, "L", [0, 1, 2, 3]),
    ("GL", 3, "GL", [1]),
])
def test_the_pattern_gives_each_layer_its_kind(pattern, layers, canonical, local):
    shape = TransformerShape(layers=layers, hidden=64, heads=4, sequence=128, vocabulary=100, window=32,
                             window_layers=pattern)
    assert shape.window_layers == canonical
    assert [i for i in range(layers) if shape.is_windowed_layer(i)] == local
    assert shape.windowed_layers == len(local)


def test_the_layer_groups_are_counted_without_listing_the_layers():
    shape = TransformerShape(layers=10**9, hidden=64, heads=4, sequence=128, vocabulary=100, window=32,
                             window_layers="5LG")
    assert shape.layer_groups() == ((False, True, 833_333_334), (False, False, 166_666_666))
    moe = TransformerShape(layers=7, hidden=64, heads=4, sequence=128, vocabulary=100, experts=4, top_k=2,
                           dense_layers=2, window=32, window_layers="GL")
    # layer 0 dense global, 1 dense local, 2 MoE global, 3 local, 4 global, 5 local, 6 global
    assert moe.layer_groups() == ((False, False, 1), (False, True, 1), (True, False, 3), (True, True, 2))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"window": 0}, r"^window=0 is not a positive integer; give the sliding window's width in tokens"),
    ({"window": -5}, r"^window=-5 is not a positive integer"),
    ({"window": 1e30}, r"^window=1e\+30 is not a positive integer"),
    ({"window": "128"}, r"^window='128' is not a positive integer"),
    ({"window": True}, r"^window=True is not a positive integer"),
    ({"window_layers": "LG"}, r"^window_layers='LG' says which layers have a sliding window; give window="),
    ({"window": 32, "window_layers": "G"}, r"gives the sliding window to no layer"),
    ({"window": 32, "window_layers": "ＬＧ"}, r"is not a pattern of L"),
    ({"window": 32, "window_layers": "L2"}, r"is not a pattern of L"),
    ({"window": 32, "window_layers": "0L"}, r"repeats a letter 0 times"),
    ({"window": 32, "window_layers": "9LG"}, r"describes 10 layers, more than layers=4"),
    ({"window": 32, "window_layers": 2}, r"^window_layers=2 is not a pattern"),
    ({"qk_norm": "heads"}, r"^qk_norm='heads' is not a kind of query and key norm; did you mean 'head'\?"),
    ({"layer_norms": -1}, r"^layer_norms=-1 is not a non-negative integer"),
])
def test_bad_windows_and_norms(kwargs, message):
    with pytest.raises(InputError, match=message):
        TransformerShape(layers=4, hidden=64, heads=4, sequence=128, vocabulary=100, **kwargs)


# -- FLOPs, layer by layer -------------------------------------------------------------------------------


def _forward(h, a, g, d, f, *, tokens, batch, pairs, gated=True):
    """One layer's forward FLOPs, product by product: QKV, the two attention products over *pairs*
    query-key pairs of each head, the output projection, the FFN."""
    return (2 * tokens * h * (a + 2 * g) * d + 2 * 2 * batch * a * d * pairs + 2 * tokens * a * d * h
            + 2 * tokens * h * f * (3 if gated else 2))


def test_a_window_without_causal_attention_is_refused_and_causal_is_its_default():
    shape = TransformerShape(layers=2, hidden=64, heads=4, sequence=128, vocabulary=100, window=32)
    assert model_flops(shape, batch=1).causal is True
    assert model_flops(shape, batch=1, causal=True).total == model_flops(shape, batch=1).total
    with pytest.raises(InputError, match=r"^causal=False with window=32: a sliding window is a band of the "
                                         r"causal mask .* drop causal=False, or the window$"):
        model_flops(shape, batch=1, causal=False)
    plain = dataclasses.replace(shape, window=None, window_layers=None)
    assert model_flops(plain, batch=1).causal is False  # without a window the default is as before


def test_gemma_2_9b_counts_each_layer_by_its_own_attention():
    m = read_hf_config(HF / "gemma-2-9b" / "config.json")
    shape = m.transformer()
    assert (shape.window, shape.window_layers, shape.layer_norms) == (4096, "LG", 4)
    assert [shape.is_windowed_layer(i) for i in range(4)] == [True, False, True, False]  # even layers local
    h, a, g, d, f, s, v = 3584, 16, 8, 256, 14336, 8192, 256000
    local = _forward(h, a, g, d, f, tokens=s, batch=1, pairs=Fraction(s * 4096 - 4096 * 4096 // 2))
    full = _forward(h, a, g, d, f, tokens=s, batch=1, pairs=Fraction(s * s, 2))
    flops = model_flops(shape, batch=1)
    assert flops.total == 3 * (21 * local + 21 * full + 2 * s * h * v) == 514_829_139_836_928
    assert [(x.layers, x.window, x.flops.forward) for x in flops.groups] == [(21, True, local), (21, False, full)]
    # a window of the whole sequence is none: every layer global
    wide = model_flops(dataclasses.replace(shape, window=s), batch=1)
    assert wide.total == 3 * (42 * full + 2 * s * h * v) == model_flops(
        dataclasses.replace(shape, window=None, window_layers=None), batch=1, causal=True).total
    assert parameters(shape).total == 9_241_705_984  # the model card's (Gemma Team 2024)


def test_torchtitans_convention_caps_each_querys_keys_at_the_window():
    """torchtitan's quadratic_attention_flops_per_token: 6·heads·(qk_dim + v_dim)·min(s, w) a token and
    layer, no causal saving; beside 6·N·tokens it is listed as a convention of the run."""
    shape = read_hf_config(HF / "gemma-2-9b" / "config.json").transformer()
    r = achieved_flops(shape, batch=2)
    row = next(c for c in r.conventions if c.name.endswith("(torchtitan)"))
    tokens, a, d = 2 * 8192, 16, 256
    per_token = sum(6 * a * (d + d) * min(8192, 4096 if i % 2 == 0 else 8192) for i in range(42))
    assert row.flops == r.six_n_flops + per_token * tokens
    plain = achieved_flops(dataclasses.replace(shape, window=None, window_layers=None), batch=2)
    assert not any(c.name.endswith("(torchtitan)") for c in plain.conventions)


def test_gemma_3_1b_has_a_global_layer_in_six():
    """google/gemma-3-1b-pt: 26 layers, sliding_window 512, sliding_window_pattern 6 (layer i global when
    (i + 1) % 6 == 0: layers 5, 11, 17 and 23); four norms a layer and query and key norms of head_dim."""
    shape = read_hf_config(HF / "gemma-3-1b" / "config.json").transformer()
    assert (shape.window, shape.window_layers, shape.layer_norms, shape.qk_norm) == (512, "5LG", 4, "head")
    assert [i for i in range(26) if not shape.is_windowed_layer(i)] == [5, 11, 17, 23]
    h, a, g, d, f, s, v = 1152, 4, 1, 256, 6912, 32768, 262144
    tokens = 2 * s  # two sequences: the products scale with the tokens, the attention with the sequences
    local = _forward(h, a, g, d, f, tokens=tokens, batch=2, pairs=Fraction(s * 512 - 512 * 512 // 2))
    full = _forward(h, a, g, d, f, tokens=tokens, batch=2, pairs=Fraction(s * s, 2))
    assert model_flops(shape, batch=2).total == 3 * (22 * local + 4 * full + 2 * tokens * h * v)
    # 262144·1152 embedding (tied), 26 layers of attention, FFN, 4·h + 2·d norms, the final norm
    per_layer = h * (a + 2 * g) * d + a * d * h + 3 * h * f + 4 * h + 2 * d
    assert parameters(shape).total == v * h + 26 * per_layer + h == 999_885_952  # the published count


def test_mistral_7b_has_the_window_on_every_layer():
    shape = read_hf_config(HF / "mistral-7b-v0.1" / "config.json").transformer()
    assert (shape.window, shape.window_layers, shape.windowed_layers) == (4096, "L", 32)
    h, a, g, d, f, s, v = 4096, 32, 8, 128, 14336, 32768, 32000
    local = _forward(h, a, g, d, f, tokens=s, batch=1, pairs=Fraction(s * 4096 - 4096 * 4096 // 2))
    assert model_flops(shape, batch=1).total == 3 * (32 * local + 2 * s * h * v)
    # the band is 15/64 of the causal triangle at s = 32768 = 8w: (8·w² − w²/2) / (32·w²)
    assert attention_pairs(s, window=4096) / attention_pairs(s) == Fraction(15, 64)
    assert parameters(shape).total == 7_241_732_096  # 7.24B, mistralai/Mistral-7B-v0.1's safetensors


def test_gpt_oss_layer_types_are_the_authority():
    """openai/gpt-oss-120b lists its 36 layers' types: sliding and full attention alternating, a window of
    128 tokens; a mixture of 128 experts, 4 a token, in every layer."""
    m = read_hf_config(HF / "gpt-oss-120b" / "config.json")
    shape = m.transformer()
    assert (shape.window, shape.window_layers, shape.windowed_layers) == (128, "LG", 18)
    assert (shape.experts, shape.top_k, shape.moe_layers) == (128, 4, 36)
    groups = model_flops(shape, batch=1).groups
    assert [(x.layers, x.moe, x.window) for x in groups] == [(18, True, True), (18, True, False)]
    s, ad = 131072, 64 * 64
    assert groups[0].flops.attention == 4 * ad * (s * 128 - 128 * 128 // 2)
    assert groups[1].flops.attention == 4 * ad * Fraction(s * s, 2)
    assert groups[0].flops.mlp == groups[1].flops.mlp  # the experts are the same on both


def test_qwen3_8b_norms_and_no_window():
    """Qwen/Qwen3-8B: use_sliding_window false (no window) and a query and a key norm of head_dim (128) a
    layer: 8,190,735,360 parameters, the total of its published safetensors
    (https://huggingface.co/api/models/Qwen/Qwen3-8B, safetensors.total)."""
    m = read_hf_config(HF / "qwen3-8b" / "config.json")
    shape = m.transformer()
    assert shape.window is None and shape.qk_norm == "head" and m.notes == ()
    h, a, g, d, f, v, layers = 4096, 32, 8, 128, 12288, 151936, 36
    per_layer = h * (a + 2 * g) * d + a * d * h + 3 * h * f + 2 * h + 2 * d
    assert parameters(shape).total == 2 * v * h + layers * per_layer + h == 8_190_735_360
    # norm weights are no matrices: the FLOPs and the 6·N identity are those without them
    bare = dataclasses.replace(shape, qk_norm="none")
    assert model_flops(shape, batch=1).total == model_flops(bare, batch=1).total
    assert shape.parameters == bare.parameters
    assert parameters(shape).total - parameters(bare).total == layers * 2 * d


def test_olmo_2_norms_its_whole_projections():
    """OLMo 2 (transformers' Olmo2Attention): q_norm over heads·head_dim, k_norm over kv_heads·head_dim, and
    two h-wide norms a layer (after the attention and the FFN)."""
    shape = TransformerShape(layers=2, hidden=64, heads=4, kv_groups=2, sequence=128, vocabulary=100,
                             qk_norm="projection")
    bare = dataclasses.replace(shape, qk_norm="none")
    assert parameters(shape).total - parameters(bare).total == 2 * (4 * 16 + 2 * 16)
    assert parameters(shape).norms == 2 * (2 * 64 + 4 * 16 + 2 * 16) + 64


# -- the per-operation count and the step ---------------------------------------------------------------


SMALL = TransformerShape(layers=4, hidden=256, heads=4, sequence=1024, vocabulary=1000, window=128,
                         window_layers="2L2G")


@pytest.mark.parametrize("tp", [1, 2])
def test_flash_attention_runs_the_band_and_unfused_the_whole_matrix(tp):
    band = Fraction(1024 * 128 - 128 * 128 // 2)
    local = {o.name: o for o in layer_ops(SMALL, micro_batch=2, tp=tp, causal=True, window=True)}
    full = {o.name: o for o in layer_ops(SMALL, micro_batch=2, tp=tp, causal=True, window=False)}
    heads, d = 4 // tp, 64
    assert local["flash attention"].flops == 4 * 2 * heads * d * band
    assert full["flash attention"].flops == 4 * 2 * heads * d * Fraction(1024 * 1024, 2)
    assert local["flash attention backward"].flops == Fraction(5, 2) * local["flash attention"].flops
    assert layer_ops(SMALL, micro_batch=2, tp=tp, causal=True) == tuple(local.values())  # layer 0 is local
    # unfused: the s × s scores computed, softmaxed and stored whatever the mask
    unfused = layer_ops(SMALL, micro_batch=2, tp=tp, causal=True, attention="unfused", window=True)
    assert unfused == layer_ops(SMALL, micro_batch=2, tp=tp, causal=True, attention="unfused", window=False)
    scores = next(o for o in unfused if o.name == "attention scores" and o.phase == "forward")
    assert scores.flops == 2 * 2 * heads * 1024 * 1024 * d


def test_the_forward_products_add_up_to_the_model_count_layer_by_layer():
    flops = model_flops(SMALL, batch=2)
    for window in (True, False):
        ops = layer_ops(SMALL, micro_batch=2, causal=True, window=window)
        counted = sum(o.flops for o in ops if o.phase == "forward" and o.kind in ("gemm", "attention"))
        assert counted == flops.kind(moe=False, window=window).forward


def test_each_pipeline_stage_is_priced_with_the_layers_it_holds():
    """Layers 0 and 1 local, 2 and 3 global, on two stages: every FLOP at the peak, each forward of stage 0
    takes its two local layers' FLOPs over the peak, each of stage 1 its two global layers' and the logits'
    (no averaging over the stages)."""
    peak = 10**15
    r = step(shape=SMALL, pp=2, microbatches=4, peak_flops=peak, efficiency=1, link="0s:1TB/s")
    band, triangle = Fraction(1024 * 128 - 128 * 128 // 2), Fraction(1024 * 1024, 2)
    local = _forward(256, 4, 4, 64, 1024, tokens=1024, batch=1, pairs=band, gated=False)
    full = _forward(256, 4, 4, 64, 1024, tokens=1024, batch=1, pairs=triangle, gated=False)
    logits = 2 * 1024 * 256 * 1000
    forwards = [{o.end - o.start for o in ops if o.op == "F"} for ops in r.timeline]
    assert forwards == [{2 * local / peak}, {(2 * full + logits) / peak}]
    assert r.model_flops == model_flops(SMALL, batch=4).total == 3 * (2 * local + 2 * full + logits) * 4
    # the same layers on one stage take the same work in all
    one = step(shape=SMALL, pp=1, microbatches=4, peak_flops=peak, efficiency=1)
    assert {o.end - o.start for o in one.timeline[0] if o.op == "F"} == {(2 * local + 2 * full + logits) / peak}


def test_unequal_stages_hold_their_own_windowed_layers():
    shape = dataclasses.replace(SMALL, layers=6, window_layers="LG")
    r = step(shape=shape, pp=2, microbatches=2, stage_layers=(1, 5), peak_flops=10**15, efficiency=1,
             link="0s:1TB/s")
    note = next(n for n in r.notes if n.startswith("sliding window"))
    assert note.endswith("each stage prices its own layers, windowed ones by stage: 1 on stage 0, 2 on stage 1")


def test_context_parallelism_with_a_window_is_refused_and_a_window_of_the_sequence_is_noted():
    with pytest.raises(InputError, match=r"^cp=2 with a sliding window of 128 tokens: .*; give cp=1$"):
        step(shape=SMALL, cp=2, peak_flops=10**15, efficiency=1, link="0s:1TB/s")
    wide = dataclasses.replace(SMALL, window=1024)
    r = step(shape=wide, cp=2, peak_flops=10**15, efficiency=1, link="0s:1TB/s")
    assert any(n.startswith("sliding window: 1024 tokens is not shorter than the sequence") for n in r.notes)
    with pytest.raises(InputError, match=r"^causal=False with window=128"):
        step(shape=SMALL, causal=False, peak_flops=10**15, efficiency=1)


def test_patterns_are_written_in_their_short_form():
    assert window_pattern(" lllllg ", layers=6) == "5LG"
    assert window_pattern("1L1G1L1G", layers=4) == "LGLG"  # the period as given: the same layers as LG
    assert window_pattern("28G8L", layers=36) == "28G8L"


def test_the_planner_stays_exact_with_a_window():
    """Every configuration priced against the pruned search: the same best three, each bound below its step,
    and no context parallelism (refused with a window)."""
    from costmodel.step import price_step
    from costmodel.step.model import lower_bound
    from costmodel.step.planner import plan

    shape = TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024, window=64,
                             window_layers="LG")
    machine = {"gpu": "a100-80gb", "nodes": 1, "global_batch": 16, "micro_batch_sizes": (1, 2)}
    every = plan(shape, top=10_000, **machine)
    exhaustive = sorted(price_step(r.config).step_s for r in every.rows)
    assert [r.step_s for r in plan(shape, top=3, **machine).rows] == exhaustive[:3]
    assert all(lower_bound(r.config).step_s <= r.step_s for r in every.rows)
    assert {r.config.cp for r in every.rows} == {1}
