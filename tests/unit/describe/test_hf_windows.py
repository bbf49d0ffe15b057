"""Which layers of a Hugging Face config.json have the sliding window, family by family, and its norms.

Each rule is ``transformers``' own (``src/transformers/models/*/configuration_*.py``, each family's
``layer_types`` default): Gemma 2 and gpt-oss ``"sliding_attention" if bool((i + 1) % 2)``; Gemma 3
``bool((i + 1) % sliding_window_pattern)`` (default 6), Cohere 2 the same with 4; Qwen2 and Qwen3
``sliding_window if use_sliding_window`` and then ``i >= max_window_layers`` (default 28); a
``layer_types`` list given in the file wins over every default.
"""

from __future__ import annotations

import json

import pytest

from costmodel.describe.hf import parse_hf_config
from costmodel.describe.models import parse_model
from costmodel.errors import ParseError

BASE = {"hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 4, "intermediate_size": 176,
        "vocab_size": 1000, "max_position_embeddings": 4096}


def _read(**keys):
    m = parse_hf_config(json.dumps({**BASE, **keys}))
    notes = tuple(n for n in m.notes if not n.startswith("not counted: the biases"))  # Qwen2's q, k, v biases
    return m.shape.get("window"), m.shape.get("window_layers"), notes


def _local(pattern: str | None, window: int | None = 128, layers: int = 12) -> list[int]:
    from costmodel.step import TransformerShape

    shape = TransformerShape(layers=layers, hidden=64, heads=4, sequence=4096, vocabulary=1000, window=window,
                             window_layers=pattern)
    return [i for i in range(layers) if shape.is_windowed_layer(i)]


@pytest.mark.parametrize(("keys", "window", "pattern"), [
    # Mistral, Mixtral, Phi-3, Starcoder2: every layer
    ({"model_type": "mistral", "sliding_window": 4096}, 4096, "L"),
    ({"model_type": "mixtral", "sliding_window": None}, None, None),
    ({"model_type": "phi3", "sliding_window": 2047}, 2047, "L"),
    # Gemma 2 and gpt-oss: the even layers
    ({"architectures": ["Gemma2ForCausalLM"], "sliding_window": 4096}, 4096, "LG"),
    ({"model_type": "gpt_oss", "sliding_window": 128}, 128, "LG"),
    # Gemma 3: global when (i + 1) % pattern == 0, 6 by default; Cohere 2: 4 by default
    ({"model_type": "gemma3_text", "sliding_window": 512, "sliding_window_pattern": 6}, 512, "5LG"),
    ({"model_type": "gemma3_text", "sliding_window": 1024}, 1024, "5LG"),
    ({"model_type": "gemma3_text", "sliding_window": 1024, "sliding_window_pattern": 3}, 1024, "2LG"),
    ({"model_type": "gemma3_text", "sliding_window": 1024, "sliding_window_pattern": 1}, None, None),
    ({"model_type": "gemma3_text", "sliding_window": 1024, "sliding_window_pattern": 20}, 1024, "L"),
    ({"model_type": "cohere2", "sliding_window": 4096}, 4096, "3LG"),
    # Qwen2 and Qwen3: off unless use_sliding_window, then from max_window_layers on
    ({"model_type": "qwen2", "sliding_window": 4096}, None, None),
    ({"model_type": "qwen2", "sliding_window": 4096, "use_sliding_window": False}, None, None),
    ({"model_type": "qwen2", "sliding_window": 4096, "use_sliding_window": True, "max_window_layers": 8},
     4096, "8G4L"),
    ({"model_type": "qwen3", "sliding_window": 4096, "use_sliding_window": True, "max_window_layers": 0},
     4096, "L"),
    ({"model_type": "qwen3", "sliding_window": 4096, "use_sliding_window": True}, None, None),  # 28 ≥ 12
    ({"model_type": "llama", "sliding_window": 4096, "use_sliding_window": False}, None, None),
    # layer_types, when given, is the authority
    ({"model_type": "gemma2", "sliding_window": 64, "layer_types": ["full_attention"] * 6
      + ["sliding_attention"] * 6}, 64, "6G6L"),
    ({"model_type": "mistral", "sliding_window": 64, "layer_types": ["full_attention"] * 12}, None, None),
    ({"model_type": "qwen3", "sliding_window": 64, "use_sliding_window": True,
      "layer_types": ["sliding_attention", "sliding_attention", "full_attention"] * 4}, 64, "2LG"),
    ({"model_type": "gpt_oss", "sliding_window": None, "layer_types": ["sliding_attention"] * 12}, None,
     None),
])
def test_each_family_puts_the_window_on_its_layers(keys, window, pattern):
    got_window, got_pattern, notes = _read(**keys)
    assert (got_window, got_pattern) == (window, pattern)
    assert notes == ()


def test_the_patterns_read_give_the_layers_transformers_builds():
    # Gemma 3: layers 5 and 11 global of 12
    assert _local(_read(model_type="gemma3_text", sliding_window=512)[1]) == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]
    # Qwen2 with max_window_layers 8: layers 8 to 11
    assert _local(_read(model_type="qwen2", sliding_window=64, use_sliding_window=True,
                        max_window_layers=8)[1]) == [8, 9, 10, 11]
    # an irregular list keeps every layer's kind
    types = ["sliding_attention", "full_attention", "full_attention", "sliding_attention"] * 2 + [
        "sliding_attention", "sliding_attention", "full_attention", "sliding_attention"]
    _, pattern, _ = _read(model_type="gemma2", sliding_window=64, layer_types=types)
    assert _local(pattern) == [i for i, t in enumerate(types) if t == "sliding_attention"]


def test_what_the_reader_cannot_place_is_noted():
    _, pattern, notes = _read(model_type="newfamily", sliding_window=256)
    assert pattern == "L"
    assert notes == ("sliding_window = 256 applied to every layer: the configuration gives no layer_types "
                     "and its family's rule is not known here",)
    types = ["sliding_attention", "chunked_attention"] * 6
    _, pattern, notes = _read(model_type="x", sliding_window=256, layer_types=types)
    assert pattern == "LG"
    (note,) = notes
    assert note.startswith("not modelled: layer_types chunked_attention: priced here as full attention")


@pytest.mark.parametrize(("keys", "message"), [
    ({"model_type": "mistral", "sliding_window": 0}, "sliding_window = 0 is not a whole number ≥ 1"),
    ({"model_type": "mistral", "sliding_window": 4096.5}, "sliding_window = 4096.5 is not a whole number ≥ 1"),
    ({"model_type": "mistral", "sliding_window": "4096"}, 'sliding_window = "4096" is not a whole number ≥ 1'),
    ({"model_type": "gemma3_text", "sliding_window": 512, "sliding_window_pattern": 0},
     "sliding_window_pattern = 0 is not a whole number ≥ 1"),
    ({"model_type": "qwen2", "sliding_window": 64, "use_sliding_window": True, "max_window_layers": -1},
     "max_window_layers = -1 is not a whole number ≥ 0"),
    ({"model_type": "gemma2", "sliding_window": 64, "layer_types": ["sliding_attention"] * 3},
     "layer_types lists 3 layers, and num_hidden_layers = 12"),
    ({"model_type": "gemma2", "sliding_window": 64, "layer_types": "sliding_attention"},
     'layer_types = "sliding_attention" is not a list of layer types'),
    ({"model_type": "gemma2", "sliding_window": 64, "layer_types": [1] * 12},
     "layer_types = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] is not a list of layer types"),
])
def test_bad_window_keys_name_the_key(keys, message):
    with pytest.raises(ParseError, match=f"^config.json: {message}$".replace("[", r"\[").replace("]", r"\]")):
        parse_hf_config(json.dumps({**BASE, **keys}))


@pytest.mark.parametrize(("architecture", "norms", "qk"), [
    ("LlamaForCausalLM", None, None),
    ("Gemma2ForCausalLM", 4, None),
    ("Gemma3ForCausalLM", 4, "head"),
    ("Qwen3ForCausalLM", None, "head"),
    ("Qwen3MoeForCausalLM", None, "head"),
    ("Olmo2ForCausalLM", None, "projection"),
])
def test_the_norms_of_each_architecture(architecture, norms, qk):
    m = parse_hf_config(json.dumps({**BASE, "architectures": [architecture]}))
    assert (m.shape.get("layer_norms"), m.shape.get("qk_norm")) == (norms, qk)
    assert m.notes == ()


HEAD = 'name = "local"\n[shape]\nlayers = 6\nhidden = 64\nheads = 4\nsequence = 4096\nvocabulary = 1000\n'


def test_a_model_file_gives_the_window_and_the_norms():
    text = HEAD + 'window = 512\nwindow_layers = "lllllg"\nlayer_norms = 4\nqk_norm = "head"\n'
    shape = parse_model(text, path="local.toml").transformer()
    assert (shape.window, shape.window_layers, shape.layer_norms, shape.qk_norm) == (512, "5LG", 4, "head")


@pytest.mark.parametrize(("lines", "message"), [
    ('window = "512"', "[shape] window = '512' is not a whole number ≥ 1"),
    ("window = 0", "[shape] window = 0 is not a whole number ≥ 1"),
    ("window = 512\nwindow_layers = 5", '[shape] window_layers = 5 is not text; e.g. window_layers = "LG"'),
    ('window_layers = "LG"', "window_layers = 'LG' says which layers have a sliding window; give window= (its "
                             "width in tokens) with it, or leave it out"),
    ('window = 512\nwindow_layers = "7L"', "window_layers = '7L' describes 7 layers, more than layers = 6; the "
                                            "pattern repeats over the layers, so give one of at most 6"),
    ('qk_norm = "heads"', "qk_norm = 'heads' is not a kind of query and key norm; did you mean 'head'?"),
    ("layer_norms = -2", "[shape] layer_norms = -2 is not a whole number ≥ 0"),
])
def test_bad_window_and_norm_keys_of_a_model_file(lines, message):
    with pytest.raises(ParseError) as info:
        parse_model(HEAD + lines + "\n", path="local.toml")
    assert str(info.value) == f"local.toml: {message}"
