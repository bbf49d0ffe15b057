"""Mixture of experts on some layers only: the ``expert_layers`` pattern (E experts, D a dense FFN, repeated
from layer 0) with ``dense_layers``, and everything that follows it layer by layer.

Expected values are written out here: the counts of a small interleaved shape by hand, the kinds of each
layer by expanding the pattern letter by letter (not through the shape's own counting), and a DE shape's
FLOPs from a dense shape's and an all-MoE shape's.  Sources: Lepikhin et al. 2021 (GShard, section 2:
experts on every other layer); Llama 4 Maverick's ``interleave_moe_layer_step`` of 2 (the odd layers,
``Llama4TextConfig``: ``range(step − 1, layers, step)``).
"""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction
from pathlib import Path

import pytest
import tomllib
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, model_flops, parameters, step
from costmodel.step.flops import expert_pattern, layer_pattern
from costmodel.step.ops import layer_ops

MODELS = tomllib.loads((Path(__file__).parents[2] / "data" / "moe_parameters.toml").read_text())


def _expand(pattern: str) -> str:
    """A pattern written out letter by letter over one period ("3DE" is "DDDE")."""
    return "".join(letter * int(n or 1) for n, letter in re.findall(r"([0-9]*)([A-Z])", pattern))


def _kind(pattern: str | None, index: int) -> bool:
    """Whether *pattern*, repeated from layer 0, says E at layer *index* (every layer without one)."""
    if pattern is None:
        return True
    letters = _expand(pattern)
    return letters[index % len(letters)] == "E"


# -- the pattern ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "layers", "dense", "stored", "moe"), [
    ("E", 6, 0, None, [0, 1, 2, 3, 4, 5]),
    ("6E", 6, 1, None, [1, 2, 3, 4, 5]),  # every layer: stored as no pattern, today's shape
    ("de", 6, 0, "DE", [1, 3, 5]),  # Llama 4 Maverick's interleave_moe_layer_step = 2
    ("ED", 7, 0, "ED", [0, 2, 4, 6]),  # every other layer, from the first
    ("ED", 8, 2, "ED", [2, 4, 6]),  # DeepSeek: i >= first_k_dense_replace and i % moe_layer_freq == 0
    ("EEEEED", 14, 0, "5ED", [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13]),  # cut at the end
    ("2D3E", 5, 0, "2D3E", [2, 3, 4]),
    ("1E1D1E1D", 8, 0, "EDED", [0, 2, 4, 6]),  # the period as given
])
def test_the_pattern_gives_each_layer_its_ffn(pattern, layers, dense, stored, moe):
    shape = TransformerShape(layers=layers, hidden=64, heads=4, sequence=16, vocabulary=100, experts=4, top_k=2,
                             dense_layers=dense, expert_layers=pattern)
    assert shape.expert_layers == stored
    assert [i for i in range(layers) if shape.is_moe_layer(i)] == moe
    assert shape.moe_layers == len(moe)
    assert shape.first_moe_layer == moe[0]
    dense_ones = [i for i in range(layers) if i not in moe]
    assert shape.first_dense_layer == (dense_ones[0] if dense_ones else None)


def test_the_short_form_is_the_window_patterns():
    assert expert_pattern(" dddde ", layers=8) == "4DE"
    assert expert_pattern("3D58E", layers=61) == "3D58E"
    assert layer_pattern("LLG", layers=3, letters="LG") == "2LG"


_BASE = {"layers": 4, "hidden": 64, "heads": 4, "sequence": 16, "vocabulary": 100}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"expert_layers": "DE"}, r"^expert_layers='DE' describes a mixture of experts; give experts="),
    ({"experts": 4, "top_k": 2, "expert_layers": "DX"},
     r"^expert_layers='DX' is not a pattern of E \(a layer with the mixture of experts\) and D \(a layer "
     r"with the dense FFN\), each after an optional count; e.g. expert_layers='DE'"),
    ({"experts": 4, "top_k": 2, "expert_layers": "LG"}, r"^expert_layers='LG' is not a pattern of E"),
    ({"experts": 4, "top_k": 2, "expert_layers": "E2"}, r"^expert_layers='E2' is not a pattern of E"),
    ({"experts": 4, "top_k": 2, "expert_layers": ""}, r"^expert_layers='' is not a pattern of E"),
    ({"experts": 4, "top_k": 2, "expert_layers": "DD"},
     r"^expert_layers='DD' gives the mixture of experts to no layer; give at least one E, or leave experts= "
     r"out for a dense model$"),
    ({"experts": 4, "top_k": 2, "expert_layers": "0E"}, r"^expert_layers='0E' repeats a letter 0 times"),
    ({"experts": 4, "top_k": 2, "expert_layers": "3DE2D"},
     r"^expert_layers='3DE2D' describes 6 layers, more than layers=4; the pattern repeats over the layers"),
    ({"experts": 4, "top_k": 2, "expert_layers": 2}, r"^expert_layers=2 is not a pattern of E"),
    ({"experts": 4, "top_k": 2, "expert_layers": "EEED", "dense_layers": 3},
     r"^expert_layers='3ED' with dense_layers=3 leaves no layer with experts among the 4: a layer has them "
     r"when it comes after the first 3 and the pattern, repeated from layer 0, says E for it; give fewer "
     r"dense layers or more E$"),
])
def test_bad_patterns(kwargs, message):
    with pytest.raises(InputError, match=message) as caught:
        TransformerShape(**_BASE, **kwargs)
    assert "\n" not in str(caught.value)


# -- the layers alike, against a listing of every layer -------------------------------------------------


@st.composite
def _shapes(draw):
    layers = draw(st.integers(1, 60))
    dense = draw(st.integers(0, layers - 1))
    runs = draw(st.lists(st.tuples(st.integers(1, 7), st.sampled_from("ED")), min_size=1, max_size=5))
    pattern = "".join(f"{n}{letter}" for n, letter in runs)
    letters = _expand(pattern)
    if len(letters) > layers or not any(letters[i % len(letters)] == "E" for i in range(dense, layers)):
        pattern = None  # experts on every layer from dense_layers on
    window = draw(st.one_of(st.none(), st.lists(st.tuples(st.integers(1, 7), st.sampled_from("LG")),
                                                min_size=1, max_size=4)))
    local = None if window is None else "".join(f"{n}{letter}" for n, letter in window)
    if local is not None and (len(_expand(local)) > layers or "L" not in _expand(local)):
        local = None
    return TransformerShape(layers=layers, hidden=8, heads=2, sequence=16, vocabulary=32, experts=4, top_k=2,
                            dense_layers=dense, expert_layers=pattern,
                            **({} if local is None else {"window": 4, "window_layers": local})), pattern, local


@given(_shapes())
def test_the_layer_groups_match_a_listing_of_every_layer(drawn):
    shape, pattern, local = drawn
    listing = []
    for i in range(shape.layers):
        moe = i >= shape.dense_layers and _kind(pattern, i)
        windowed = local is not None and _expand(local)[i % len(_expand(local))] == "L"
        listing.append((moe, windowed))
    expected: dict[tuple[bool, bool], int] = {}
    for kind in listing:  # in the order each kind first appears
        expected[kind] = expected.get(kind, 0) + 1
    assert shape.layer_groups() == tuple((moe, w, n) for (moe, w), n in expected.items())
    assert [shape.is_moe_layer(i) for i in range(shape.layers)] == [m for m, _ in listing]
    assert shape.moe_layers == sum(m for m, _ in listing)
    assert shape.first_moe_layer == next(i for i, (m, _) in enumerate(listing) if m)
    assert shape.first_dense_layer == next((i for i, (m, _) in enumerate(listing) if not m), None)
    # the parameters and the FLOPs count each layer by its own FFN
    count = parameters(shape)
    moe, dense = shape.moe_layers, shape.layers - shape.moe_layers
    assert count.routed_experts == moe * 4 * 2 * 8 * 32 and count.router == moe * 8 * 4
    assert count.dense_ffn == dense * 2 * 8 * 32
    flops = model_flops(shape, batch=1)
    assert flops.total == sum(g.layers * g.flops.total for g in flops.groups) + 3 * flops.logits_forward
    assert sum(g.layers for g in flops.groups if g.moe) == moe


def test_the_groups_of_a_billion_layers_are_counted_over_the_common_period():
    shape = TransformerShape(layers=10**9, hidden=64, heads=4, sequence=128, vocabulary=100, experts=4, top_k=2,
                             expert_layers="DE", window=32, window_layers="5LG")
    # one common period of 6 layers: 0 (dense, local), 1 (MoE, local), 2 (dense, local), 3 (MoE, local),
    # 4 (dense, local), 5 (MoE, global); 10⁹ = 166,666,666 periods and the first 4 layers of one more
    assert shape.layer_groups() == ((False, True, 3 * 166_666_666 + 2), (True, True, 2 * 166_666_666 + 2),
                                    (True, False, 166_666_666))
    assert shape.moe_layers == 500_000_000


# -- exact counts of a small interleaved shape ----------------------------------------------------------

# l = 4, h = 8, a = 2 (MHA, d = 4), s = 4, V = 16 (tied), SwiGLU (m = 3), f = 16, E = 4, k = 2, f_e = 4,
# one shared expert; experts on the odd layers (DE): layers 0 and 2 dense, 1 and 3 MoE.  B = 3, T = 12.
SMALL = TransformerShape(layers=4, hidden=8, heads=2, sequence=4, vocabulary=16, gated=True, ffn_factor=2,
                         experts=4, top_k=2, expert_ffn_factor=Fraction(1, 2), shared_experts=1,
                         expert_layers="DE")


def test_small_interleaved_parameters_by_hand():
    count = parameters(SMALL)
    attention = 8 * (2 + 2 * 2) * 4 + 2 * 4 * 8  # 256: h·(a + 2g)·d + a·d·h
    dense_ffn = 3 * 8 * 16  # 384
    expert = 3 * 8 * 4  # 96
    router = 8 * 4  # 32
    norms = 4 * 2 * 8 + 8  # 72: two a layer and the final one
    embedding = 16 * 8  # 128, tied
    assert count.dense_ffn == 2 * dense_ffn and count.routed_experts == 2 * 4 * expert
    assert count.shared_experts == 2 * expert and count.router == 2 * router
    total = embedding + 4 * attention + 2 * dense_ffn + 2 * (4 * expert + expert + router) + norms
    assert count.total == total == 3016
    assert count.active == total - 2 * (4 - 2) * expert == 2632
    # N of 6·N: the matrices a token uses, the output layer's V·h (the input embedding is a lookup)
    assert SMALL.parameters == 2 * (attention + dense_ffn) + 2 * (attention + router + 3 * expert) + 128 == 2560


def test_small_interleaved_flops_by_hand():
    f = model_flops(SMALL, batch=3)
    qkv = 2 * 12 * 8 * (8 + 2 * 8)  # 4608
    attention = 2 * 2 * 3 * 4 * 4 * 8  # 1536: 4·B·a·d·s², not causal
    projection = 2 * 12 * 8 * 8  # 1536
    dense_mlp = 2 * 12 * 8 * 16 * 3  # 9216
    router = 2 * 12 * 8 * 4  # 768: T × E × h
    routed = 12 * 2 * (2 * 8 * 4 * 3)  # 4608: each token's 2 experts
    shared = 12 * 1 * (2 * 8 * 4 * 3)  # 2304
    dense_layer = qkv + attention + projection + dense_mlp  # 16896
    moe_layer = qkv + attention + projection + router + routed + shared  # 15360
    logits = 2 * 12 * 8 * 16  # 3072
    assert f.layer.mlp == router + routed + shared and f.dense_layer is not None
    assert (f.layer.forward, f.dense_layer.forward) == (moe_layer, dense_layer)
    assert f.total == 3 * (2 * dense_layer + 2 * moe_layer) + 3 * logits == 202752
    # PaLM's identity with N the active matrices: 6·N·T + 12·l·h·s·T
    assert f.total == 6 * 2560 * 12 + 12 * 4 * 8 * 4 * 12


def test_a_de_shape_weighs_a_dense_and_an_all_moe_shape_by_their_layers():
    """The FLOPs of experts on every other layer are the dense model's per-layer count on half the layers
    and the all-MoE model's on the other half (each computed on its own shape), plus the logits."""
    for base in (SMALL, dataclasses.replace(SMALL, layers=48, ffn_factor=Fraction(13, 4), sequence=64)):
        dense = dataclasses.replace(base, experts=None, top_k=None, expert_ffn_factor=None, shared_experts=0,
                                    expert_layers=None)
        every = dataclasses.replace(base, expert_layers=None)
        moe = base.layers // 2  # the odd layers
        for recompute in ("none", "full"):
            got, d, e = (model_flops(x, batch=3, recompute=recompute, causal=True) for x in (base, dense, every))
            logits = d.logits_forward + d.logits_backward
            per_dense, per_moe = (Fraction(x.total - logits, base.layers) for x in (d, e))
            assert got.total == (base.layers - moe) * per_dense + moe * per_moe + logits
        # the 6·N weights and the model card's count weigh the two shapes' layers the same way
        vh = base.vocabulary * base.hidden
        assert base.parameters == Fraction((base.layers - moe) * (dense.parameters - vh)
                                           + moe * (every.parameters - vh), base.layers) + vh
        outside = vh + base.hidden  # the tied embedding and the final norm
        assert parameters(base).total == Fraction(
            (base.layers - moe) * (parameters(dense).total - outside)
            + moe * (parameters(every).total - outside), base.layers) + outside


# -- today's numbers with experts on every layer ---------------------------------------------------------


def _moe_shape(name: str, **kw) -> TransformerShape:
    m = MODELS[name]
    extra = {"expert_ffn_factor": Fraction(m["expert_ffn"], m["hidden"])} if "expert_ffn" in m else {}
    return TransformerShape(layers=m["layers"], hidden=m["hidden"], heads=m["heads"], kv_groups=m["kv_groups"],
                            sequence=512, vocabulary=m["vocabulary"], gated=True,
                            ffn_factor=Fraction(m["ffn"], m["hidden"]), tied_embeddings=m["tied"],
                            experts=m["experts"], top_k=m["top_k"], shared_experts=m.get("shared_experts", 0),
                            dense_layers=m.get("dense_layers", 0), **extra, **kw)


@pytest.mark.parametrize("name", ["mixtral_8x7b", "deepseek_moe_16b"])
@pytest.mark.parametrize("every", ["E", "e", "2E", "EEEE"])
def test_a_pattern_of_experts_on_every_layer_is_todays_shape(name, every):
    plain, patterned = _moe_shape(name), _moe_shape(name, expert_layers=every)
    assert patterned == plain and patterned.expert_layers is None
    count = parameters(patterned)
    if "exact" in MODELS[name]:
        assert count.total == MODELS[name]["exact"]  # Mixtral 8x7B's released 46,702,792,704
    else:  # DeepSeekMoE 16B, as test_moe writes it out
        assert (count.total, count.active) == (16_375_728_128, 2_828_650_496)
    a, b = model_flops(plain, batch=2), model_flops(patterned, batch=2)
    assert (a.total, a.groups, a.layer, a.dense_layer) == (b.total, b.groups, b.layer, b.dense_layer)


# -- a step: stages, memory and all-to-alls follow the layers -------------------------------------------

LINK = combine_link(alpha="1us", beta="1ns/B")


def test_pipeline_stages_hold_their_own_layers_weights():
    """With 2D2E on 4 layers and two stages, stage 0 holds the dense layers (and the input embedding),
    stage 1 the MoE ones (and the output layer's matrix): their parameters differ."""
    shape = dataclasses.replace(SMALL, expert_layers="2D2E")
    r = step(shape=shape, pp=2, microbatches=2, peak_flops=10**12, efficiency=1, link=LINK, allow_oom=True)
    assert r.memory is not None
    attention, dense_ffn, expert, router = 256, 384, 96, 32
    assert r.memory[0].parameters == 2 * (attention + dense_ffn) + 16 * 8 == 1408
    assert r.memory[1].parameters == 2 * (attention + router + expert) + 2 * 4 * expert + 16 * 8 == 1664
    assert any(n.startswith("experts: on 2 of the 4 layers (pattern 2D2E); the others run a dense FFN of 16; "
                            "each stage prices its own layers, those with experts by stage: 0 on stage 0, "
                            "2 on stage 1") for n in r.notes)


def test_the_all_to_alls_run_on_the_moe_layers_only():
    every = TransformerShape(**_BASE, experts=8, top_k=2)
    half = dataclasses.replace(every, expert_layers="ED")
    kw = {"dp": 8, "ep": 8, "microbatches": 2, "peak_flops": 10**12, "efficiency": 1, "link": LINK,
          "bytes_per_element": 2}
    a, b = step(shape=every, **kw), step(shape=half, **kw)
    assert a.ep_alltoall_s == b.ep_alltoall_s > 0
    # dispatch and combine forward, their gradients backward: 4 per MoE layer and micro-batch
    assert a.ep_comm_s == 4 * 4 * 2 * a.ep_alltoall_s and b.ep_comm_s == 4 * 2 * 2 * b.ep_alltoall_s


def test_the_layer_operations_default_to_the_first_moe_layer():
    shape = dataclasses.replace(SMALL, expert_layers="DE", window=2, window_layers="LG")
    # layer 1 is the first with experts, and global; layer 0 the first dense one, local
    moe = layer_ops(shape, micro_batch=3, causal=True)
    assert any(o.name == "router" for o in moe)
    flops = model_flops(shape, batch=3)
    assert sum(o.flops for o in moe if o.phase == "forward") == flops.kind(moe=True, window=False).forward
    dense = layer_ops(shape, micro_batch=3, causal=True, moe=False)
    assert sum(o.flops for o in dense if o.phase == "forward") == flops.kind(moe=False, window=True).forward
