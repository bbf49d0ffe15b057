"""The ``models`` command: the model presets, or one model (a preset or a model file) with its sources.

It makes one call to :func:`costmodel.describe.list_models` or :func:`costmodel.describe.load_model` and
emits the result, whose human renderings are declared here; rich loads only when they run.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.units import format_number

if TYPE_CHECKING:
    from costmodel.describe.models import ModelDescription, ModelList

__all__ = ["app", "model_names"]

app = typer.Typer()


def model_names(ctx: Any, incomplete: str) -> list[str]:
    """The presets, for shell completion."""
    from costmodel.describe.models import MODEL_NAMES

    return [n for n in MODEL_NAMES if n.startswith(incomplete)]


@app.command("models")
def models(
    name: Annotated[str | None, typer.Argument(help="A preset name, a model TOML file or a Hugging Face "
                                                       "config.json to show.",
                                                  metavar="NAME|FILE", show_default=False,
                                                  autocompletion=model_names)] = None,
    as_json: Json = False,
) -> None:
    """List the model presets (GPT-3, Llama 3, Mixtral, DeepSeekMoE), or show one model with its source.

    A model file has the same TOML format (a \\[shape] table of layers, hidden, heads, sequence,
    vocabulary, ...; base = "llama-3-8b" starts from a preset); --model NAME|FILE uses one in step,
    flops and memory. A Hugging Face config.json shows what --hf-config reads from it, with its notes.

    Example: costmodel models

    Example: costmodel models llama-3-405b
    """
    from costmodel.describe.models import list_models, load_model

    if name is not None and name.endswith(".json"):
        from costmodel.describe.hf import read_hf_config

        emit(read_hf_config(name), as_json=as_json)
        return
    emit(load_model(name) if name else list_models(), as_json=as_json)


def _count(n: int) -> str:
    return str(n)


def _width(factor: Any, hidden: int) -> str:
    return "–" if factor is None else str(int(Fraction(factor) * hidden))


@renders("costmodel.describe.models.ModelList")
def render_models(ml: ModelList) -> Rendered:
    """One row per preset: its name and shape."""
    from rich.console import Group
    from rich.text import Text

    numbers = ("l", "h", "a", "kv", "s", "V", "FFN", "experts")
    out = table("name", *numbers, numeric=numbers, no_wrap=True, optional=("experts",))
    for m in ml.models:
        s = m.shape
        experts = "–" if not s.get("experts") else f"{s['experts']} top-{s.get('top_k')}"
        out.add_row(m.name, str(s["layers"]), str(s["hidden"]), str(s["heads"]),
                    str(s.get("kv_groups", s["heads"])), str(s["sequence"]), str(s["vocabulary"]),
                    _width(s.get("ffn_factor", 4), s["hidden"]), experts)
    footer = ("[dim]l layers, h hidden, a heads, kv key-value heads, s sequence, V vocabulary, FFN width\n"
              "costmodel models NAME shows one with its source; use one with --model NAME (step, flops, "
              "memory)[/dim]")
    return Group(out, Text(""), markup(footer)), ()


_LABELS = (("layers", "layers l"), ("hidden", "hidden h"), ("heads", "attention heads a"),
           ("kv_groups", "key-value heads"), ("head_dim", "head width d"),
           ("kv_rank", "key-value latent d_c"), ("q_rank", "query latent d_c'"),
           ("rope_head_dim", "rotary head width d_r"),
           ("value_head_dim", "value head width d_v"), ("sequence", "sequence s"),
           ("vocabulary", "vocabulary V"),
           ("ffn_factor", "FFN width"), ("gated", "gated FFN (SwiGLU)"),
           ("tied_embeddings", "tied embeddings"), ("experts", "routed experts"),
           ("top_k", "experts per token"), ("expert_ffn_factor", "expert FFN width"),
           ("shared_experts", "shared experts"), ("dense_layers", "dense FFN layers"),
           ("expert_layers", "layers with experts"),
           ("window", "sliding window"), ("window_layers", "windowed layers"),
           ("layer_norms", "norms a layer"), ("qk_norm", "query-key norms"),
           ("mtp_layers", "multi-token prediction modules"))


@renders("costmodel.describe.models.ModelDescription")
def render_model(m: ModelDescription) -> Rendered:
    """The model's shape keywords, the step settings it implies, and where its numbers come from."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    s = m.shape
    out = table("quantity", "value", "keyword", numeric=("value",), no_wrap=True)
    for key, label in _LABELS:
        if key not in s:
            continue
        value = s[key]
        if key in ("ffn_factor", "expert_ffn_factor"):
            shown = f"{_width(value, s['hidden'])} ({format_number(value)} h)"
        elif isinstance(value, bool):
            shown = "yes" if value else "no"
        elif isinstance(value, str):
            shown = escape(value)
        else:
            shown = _count(value)
        latent = key == "head_dim" and "kv_rank" in s  # each query and key head without its rotary part
        out.add_row("head width d, without d_r" if latent else label, shown, key)
    for key, value in m.settings.items():
        out.add_row(f"step: {key}", "yes" if value is True else "no" if value is False else str(value), key)
    head = markup(f"[bold]{escape(m.title)}[/bold] · {escape(m.name)}")
    source = markup(f"[bold]source[/bold]\n  {escape(m.source)}" + (f"\n  {escape(m.locator)}"
                                                                     if m.locator else ""))
    return Group(head, Text(""), out, Text(""), source), m.notes
