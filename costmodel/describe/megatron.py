"""A Megatron-LM argument string read into a model's shape, a step's settings and a global batch.

The string is split as a shell splits it (:mod:`shlex`, never evaluated; ``#`` comments and lines
continued by a backslash read as the shell reads them), so the arguments of a real training script
(``pretrain_gpt.py ARGS``) can be pasted whole, or kept in a file given as ``@PATH`` (:func:`megatron_text`):
a launch script's variables with literal values are put in their places and its quoted array elements
split (:func:`_expanded`), its other words left out.
Each argument ``--name VALUE`` (or ``--name=VALUE``) or switch ``--name`` that
``megatron/training/arguments.py`` defines and the step model knows maps to one value:

==========================================  ===============================================================
Megatron-LM                                 costmodel
==========================================  ===============================================================
tensor-model-parallel-size T                tp
expert-tensor-parallel-size T               (only checked: equal to tp, Megatron-LM's default, or a
                                            note that the experts are priced split as tp splits them)
pipeline-model-parallel-size P              pp
num-layers-per-virtual-pipeline-stage L     chunks = layers / (pp · L), schedule interleaved
virtual-pipeline-model-parallel-size V      chunks = V, schedule interleaved
sequence-parallel                           sequence_parallel
context-parallel-size C                     cp
expert-model-parallel-size E                ep
recompute-granularity selective|full        recompute
recompute-activations                       recompute selective (Megatron's shorthand)
use-distributed-optimizer                   zero 1
use-megatron-fsdp with                      framework fsdp at ZeRO 2 (optim_grads) or 3
data-parallel-sharding-strategy S           (optim_grads_params, the default); optim: zero 1,
                                            no_shard: zero 0
use-torch-fsdp2                             framework fsdp, zero 3
overlap-grad-reduce, overlap-param-gather   overlap_grad_reduce, param_gather overlap
no-overlap-p2p-communication                pipeline_sends blocking (the interleaved schedule's
                                            default overlaps them)
no-async-tensor-model-parallel-allreduce    tp_overlap none (releases of 2021-2023 had the switch)
global-batch-size N, micro-batch-size B     the global batch; micro_batch
bf16, fp16, fp8-format                      dtype
attention-dropout 0 and hidden-dropout 0    dropout off (Megatron-LM's default is 0.1 each)
seq-length, num-layers, hidden-size,        sequence, layers, hidden, heads
num-attention-heads
group-query-attention, num-query-groups G   kv_groups (Megatron reads G only with the switch)
ffn-hidden-size F                           ffn_factor = F / hidden (default 4h; with swiglu
                                            Megatron's int(8h/3 / 64) · 64)
swiglu                                      gated
untie-embeddings-and-output-weights         tied_embeddings False
num-experts, moe-router-topk,               experts, top_k, expert_ffn_factor
moe-ffn-hidden-size
moe-shared-expert-intermediate-size S       shared_experts = S / moe-ffn-hidden-size (whole)
moe-layer-freq N or a list expression       expert_layers: layer i has experts when i % N = 0, or where
                                            the list ("([0]*3+[1]*58)", read by a grammar of lists,
                                            repetitions and sums, never evaluated) has a 1
multi-latent-attention, q-lora-rank,        kv_rank, q_rank, head_dim, rope_head_dim, value_head_dim
kv-lora-rank, qk-head-dim,                  (Megatron-LM's defaults where not given: kv-lora-rank 32,
qk-pos-emb-head-dim, v-head-dim             qk-head-dim 128, qk-pos-emb-head-dim 64, v-head-dim 128,
                                            no q-lora-rank)
vocab-size V, padded-vocab-size V           vocabulary (vocab-size padded as Megatron pads it: to a
                                            multiple of make-vocab-size-divisible-by (128) × tp)
decoder-first-pipeline-num-layers F,        stage_layers: F and L on the first and last stages, the
decoder-last-pipeline-num-layers L          rest spread evenly between (with V chunks, each stage's
                                            layers over its chunks)
account-for-embedding-in-pipeline-split,    stage_layers: the embedding and the loss counted as a
account-for-loss-in-pipeline-split          layer of the first and last stages
pipeline-model-parallel-layout LAYOUT       stage_layers, chunks and mtp_layers: the t (layers) and m
                                            (prediction modules) of each virtual stage, read by a
                                            grammar of marks, x*N and (...)*N, never evaluated
mtp-num-layers D                            mtp_layers (multi-token prediction modules); with
                                            mtp-use-repeated-layer the D modules share one layer's
                                            weights, which the count does not model: refused for D > 1
==========================================  ===============================================================

The settings always name the framework ``megatron``: its data-parallel schedule and its pipeline
sends are the defaults Megatron-LM's arguments leave.  Every other argument is kept, by name, in
``unread``: a script's learning rate or data paths are no error.  :class:`MegatronArguments` keeps the
shape keywords and the settings apart; the caller merges them under its own explicit values.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.errors import InputError
from costmodel.references import MEGATRON_LM, Cited

__all__ = ["MAX_BYTES", "SOURCE", "MegatronArguments", "megatron_arguments", "megatron_text"]

SOURCE = MEGATRON_LM.at("megatron/training/arguments.py: the arguments' names and defaults; "
                        "_add_network_size_args: ffn_hidden_size = 4h, or int(4h · 2/3 / 64) · 64 with "
                        "swiglu; "
                        "megatron/training/tokenizer: vocabulary padded to make_vocab_size_divisible_by × tp")

_COUNTS = {
    "tensor-model-parallel-size": "tp", "pipeline-model-parallel-size": "pp",
    "context-parallel-size": "cp", "expert-model-parallel-size": "ep",
    "expert-tensor-parallel-size": "etp",
    "num-layers-per-virtual-pipeline-stage": "layers_per_chunk",
    "virtual-pipeline-model-parallel-size": "chunks",
    "global-batch-size": "global_batch", "micro-batch-size": "micro_batch",
    "seq-length": "sequence", "num-layers": "layers", "hidden-size": "hidden",
    "num-attention-heads": "heads", "num-query-groups": "query_groups", "ffn-hidden-size": "ffn_hidden",
    "num-experts": "experts", "moe-router-topk": "top_k", "moe-ffn-hidden-size": "expert_ffn_hidden",
    "vocab-size": "vocab_size", "padded-vocab-size": "padded_vocab_size",
    "make-vocab-size-divisible-by": "vocab_divisor",
    "moe-shared-expert-intermediate-size": "shared_ffn_hidden",
    "q-lora-rank": "q_rank", "kv-lora-rank": "kv_rank", "qk-head-dim": "head_dim",
    "qk-pos-emb-head-dim": "rope_head_dim", "v-head-dim": "value_head_dim",
    "mtp-num-layers": "mtp_layers",
    "decoder-first-pipeline-num-layers": "first_stage_layers",
    "decoder-last-pipeline-num-layers": "last_stage_layers",
}
"""The arguments that take a whole number, by Megatron-LM's name, and the value each sets."""

_RATES = {"attention-dropout": "attention_dropout", "hidden-dropout": "hidden_dropout"}
"""The arguments that take a rate from 0 to 1 (Megatron-LM's default 0.1 each)."""

_CHOICES = {"recompute-granularity": ("recompute", ("selective", "full")),
            "fp8-format": ("fp8", ("e4m3", "hybrid")),
            "data-parallel-sharding-strategy": ("sharding", ("no_shard", "optim", "optim_grads",
                                                             "optim_grads_params"))}

_SWITCHES = {
    "sequence-parallel": "sequence_parallel", "recompute-activations": "recompute_activations",
    "use-distributed-optimizer": "distributed_optimizer", "overlap-grad-reduce": "overlap_grad_reduce",
    "overlap-param-gather": "overlap_param_gather", "bf16": "bf16", "fp16": "fp16",
    "swiglu": "swiglu", "untie-embeddings-and-output-weights": "untied",
    "group-query-attention": "gqa", "no-overlap-p2p-communication": "blocking_sends",
    "no-async-tensor-model-parallel-allreduce": "no_async_allreduce",
    "multi-latent-attention": "mla", "mtp-use-repeated-layer": "mtp_repeated",
    "use-megatron-fsdp": "megatron_fsdp", "use-torch-fsdp2": "torch_fsdp2",
    "account-for-embedding-in-pipeline-split": "embedding_in_split",
    "account-for-loss-in-pipeline-split": "loss_in_split",
}
"""The arguments that are on/off switches."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MegatronArguments(JSONFields):
    """What a Megatron-LM argument string says (module notes).

    *shape*: :class:`~costmodel.step.TransformerShape` keywords it gives; *settings*: step settings
    (``tp``, ``pp``, ``cp``, ``ep``, ``chunks``, ``schedule``, ``recompute``, ``zero``, ``dtype`` ...);
    *global_batch*: the global batch in sequences, if given; *unread*: the arguments it does not model,
    as written (each with its value); *notes*: how values were derived; *words*: the words that are no
    argument nor the value of one (a script's commands, its shell syntax), left out; *written*: the names of
    the arguments given, each once in the order written (``num-layers``, ``bf16``: no dashes, ``_`` as
    ``-``), read or not.
    """

    shape: dict[str, Any]
    settings: dict[str, Any]
    global_batch: int | None
    unread: tuple[str, ...]
    notes: tuple[str, ...]
    source: Cited = SOURCE
    words: tuple[str, ...] = ()
    written: tuple[str, ...] = ()


MAX_BYTES = 1 << 22
"""The largest file of arguments read: a launch script is kilobytes (4 MiB holds 10⁵ arguments)."""


def megatron_text(value: str) -> str:
    """The argument string *value* gives: its own text, or the text of the file it names (``@PATH``, or a
    single word that is a file's path), read by :func:`costmodel._files.read_text`.

    >>> megatron_text("--num-layers 4")
    '--num-layers 4'
    >>> megatron_text("@/nonexistent")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: /nonexistent: cannot read Megatron-LM arguments: No such file or directory
    """
    if not isinstance(value, str):
        raise InputError(f"megatron={value!r} is not text; give Megatron-LM's arguments as one string")
    word = value.strip()
    path = word[1:] if word.startswith("@") else word
    if word.startswith("@") or (path and not path.startswith("-") and not any(c.isspace() for c in path)
                                and os.path.exists(path)):
        from costmodel._files import read_text

        return read_text(path, what="Megatron-LM arguments", limit=MAX_BYTES)
    return value


def _tokens(text: str, notes: list[str]) -> list[str]:
    text = megatron_text(text)
    # a backslash before a line's end continues the line, as in the shell a script is written for
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError as exc:
        raise InputError(f"megatron={_short(text)} does not split into arguments: {exc}") from None
    tokens = _expanded(tokens, notes)
    if not any(token.startswith("--") for token in tokens):
        raise InputError(f"megatron={_short(text)} holds no Megatron-LM argument (each starts with --) and "
                         "names no file; give the arguments, or @FILE for a file of them")
    return tokens


_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([^$`()\s]*)")
"""A shell variable given a literal value (``NUM_LAYERS=32``, ``DTYPE=fp8``): no substitution, command or
arithmetic in it."""

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}$`]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
"""A variable's use: ``$NAME``, ``${NAME}`` or ``${NAME:-default}``."""

_NAMED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
"""The start of an assignment."""


def _expanded(tokens: list[str], notes: list[str]) -> list[str]:
    """*tokens* as a training script runs them: each ``$NAME``, ``${NAME}`` or ``${NAME:-default}`` whose
    variable an earlier token assigns a literal value (``NAME=value``, or a value that is literal once
    the variables in it are put in their places) replaced by that value (a default where it is assigned
    none), and the words of an array element quoted whole (``"--fp8-format hybrid"``,
    which the script expands unquoted, ``${ARGS[@]}``) split.  Nothing is evaluated: a value that holds a
    substitution, a command or arithmetic is no literal, and its uses stay as written."""
    values: dict[str, str] = {}
    used: dict[str, str] = {}

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name in values:
            used[name] = values[name]
            return values[name]
        default = match.group(2)
        return match.group(0) if default is None else default

    out: list[str] = []
    for written in _arrays(tokens):
        token = _VARIABLE.sub(value, written) if "$" in written else written
        assigned = _ASSIGNMENT.fullmatch(token)
        if assigned and assigned.group(2):
            values[assigned.group(1)] = assigned.group(2)
        elif _NAMED.match(token):
            values.pop(token.split("=")[0], None)  # no literal (a command's output): unknown from here
        out.extend(token.split() if token.startswith("--") and any(c.isspace() for c in token) else (token,))
    if used:
        notes.append("shell variables read from their assignments: "
                     + ", ".join(f"{k}={v}" for k, v in used.items()))
    return out


_OPENED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*\+?=)\((.+)")
"""An array written on one line, its first element joined to its opening (``ARGS=(--bf16``)."""


def _arrays(tokens: list[str]) -> list[str]:
    """*tokens* with an array's brackets apart from its first and last elements, as the shell reads
    ``ARGS=(--micro-batch-size 1 --bf16)``: ``ARGS=(``, the elements, ``)``.  Balanced brackets (a
    ``--moe-layer-freq`` list expression) stay in their word."""
    out: list[str] = []
    for written in tokens:
        opened = _OPENED.fullmatch(written)
        token = written
        if opened:
            out.append(opened.group(1) + "(")
            token = opened.group(2)
        closing = len(token) - len(token.rstrip(")"))
        extra = token.count(")") - token.count("(")
        if 0 < extra <= closing and len(token) > extra:
            out.extend((token[:-extra], ")"))
        else:
            out.append(token)
    return out


_LISTS = {"recompute-modules": "recompute_modules"}
"""The arguments that take a list of words, by Megatron-LM's name (read to name them in a note)."""

_SHELL = re.compile(r"[()\[\];&|{}]+|[A-Za-z_][A-Za-z0-9_]*\+?=.*|.*\[@\].*|\$\(.*|then|fi|else|do|done|if")
"""A word that belongs to the script's shell, never an argument's value: brackets, ``NAME=(``, an array's
expansion (``${ARGS[@]}``), a command or arithmetic, keywords."""


def _short(text: str, limit: int = 60) -> str:
    """*text* quoted, cut to *limit* characters for an error."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _read(tokens: list[str]) -> tuple[dict[str, Any], list[str], list[str], dict[str, None]]:
    """The known arguments' values by their costmodel key, the others as written, the words that are
    neither arguments nor their values, and the names of the arguments given, in order."""
    values: dict[str, Any] = {}
    unread: list[str] = []
    words: list[str] = []
    written: dict[str, None] = {}
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--"):
            if (unread and unread[-1].startswith("--") and " " not in unread[-1]
                    and (tokens[i - 2] == unread[-1]) and not _SHELL.fullmatch(token)):
                unread[-1] += f" {token}"  # the value of an argument not read
            else:
                words.append(token)
            continue
        name, equals, inline = token[2:].partition("=")
        name = name.replace("_", "-")
        written[name] = None
        if name in _LISTS:  # a list of words (Megatron-LM's nargs="*"), kept as written
            listed = [inline] if equals else []
            while i < len(tokens) and not tokens[i].startswith("--") and not _SHELL.fullmatch(tokens[i]):
                listed.append(tokens[i])
                i += 1
            values[_LISTS[name]] = tuple(listed)
            unread.append(" ".join([token.partition("=")[0], *listed]))
            continue
        if name in _SWITCHES:
            if equals:
                raise InputError(f"Megatron-LM's {token} is a switch; it takes no value")
            values[_SWITCHES[name]] = True
            continue
        if name not in _COUNTS and name not in _CHOICES and name not in _RATES and name not in (_FREQUENCY,
                                                                                                _LAYOUT):
            unread.append(token)
            continue
        if equals:
            value = inline
        elif i < len(tokens) and not tokens[i].startswith("--"):
            value = tokens[i]
            i += 1
        else:
            raise InputError(f"Megatron-LM's {token} needs a value")
        key, read = _value(name, token, value)
        values[key] = read
    return values, unread, words, written


def _value(name: str, token: str, value: str) -> tuple[str, Any]:
    """The costmodel key and the value of one argument that takes a value."""
    if name == _FREQUENCY:
        return "expert_flags", _layer_frequency(token, value)
    if name == _LAYOUT:
        return "layout", _pipeline_layout(token, value)
    if name in _RATES:
        try:
            rate = float(value)
        except ValueError:
            rate = -1.0
        if not 0 <= rate < 1:
            raise InputError(f"Megatron-LM's {token} {value!r} is not a dropout rate from 0 to 1")
        return _RATES[name], rate
    if name in _CHOICES:
        key, allowed = _CHOICES[name]
        if value not in allowed:
            raise InputError(f"Megatron-LM's {token} {value!r} is not one of {', '.join(allowed)}")
        return key, value
    text = value.strip()
    least = 0 if name in _NONE_ALLOWED else 1
    if not text.isdigit() or int(text) < least:
        raise InputError(f"Megatron-LM's {token} {value!r} is not a whole number ≥ {least}")
    return _COUNTS[name], int(text)


_NONE_ALLOWED = frozenset({"mtp-num-layers"})
"""The counts that may be 0 (no multi-token prediction module, as a script's variable may say)."""


def _shape(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The shape keywords the arguments give."""
    shape: dict[str, Any] = {k: values[k] for k in ("layers", "hidden", "heads", "sequence", "experts",
                                                     "top_k") if k in values}
    hidden = values.get("hidden")
    if "ffn_hidden" in values or values.get("swiglu"):
        if hidden is None:
            raise InputError("Megatron-LM's FFN width (ffn-hidden-size or swiglu) needs hidden-size too: "
                             "costmodel keeps it as a factor of the hidden size")
        width = values.get("ffn_hidden")
        if width is None:  # Megatron-LM's default with swiglu
            width = int(Fraction(8 * hidden, 3) / 64) * 64
            notes.append(f"ffn_hidden={width}: Megatron-LM's default with swiglu, int(8h/3 / 64) · 64")
        shape["ffn_factor"] = Fraction(width, hidden)
    if "expert_ffn_hidden" in values:
        if hidden is None:
            raise InputError("Megatron-LM's moe-ffn-hidden-size needs hidden-size too")
        shape["expert_ffn_factor"] = Fraction(values["expert_ffn_hidden"], hidden)
    if values.get("swiglu"):
        shape["gated"] = True
    if values.get("untied"):
        shape["tied_embeddings"] = False
    shape.update(_latent(values, notes), **_expert_layers(values, shape, notes), **_mtp(values, notes))
    if values.get("etp", values.get("tp", 1)) != values.get("tp", 1):
        notes.append(f"expert-tensor-parallel-size {values['etp']} with tensor-model-parallel-size "
                     f"{values.get('tp', 1)}: costmodel splits each expert over the tensor-parallel ranks, "
                     "as Megatron-LM does when the two are equal (its default); the experts' products, "
                     "memory and all-to-alls are priced so, not as this run splits them")
    if "query_groups" in values:
        if values.get("gqa"):
            shape["kv_groups"] = values["query_groups"]
        else:
            notes.append("num-query-groups without group-query-attention: Megatron-LM ignores it, and so "
                         "does this reading")
    return {**shape, **_vocabulary(values, notes)}


_FREQUENCY = "moe-layer-freq"
"""The argument whose value is a number or a list expression of the layers with experts."""

def _cut(text: str) -> str:
    """*text* as a grammar's refusal shows it: whole up to 60 characters, else its first 57 and "..."."""
    return text if len(text) <= 60 else text[:57] + "..."


_LAYOUT = "pipeline-model-parallel-layout"
"""The argument whose value places each layer on a virtual pipeline stage."""

_LAYOUT_MARKS = "ELtm"
"""The layout's marks: the embedding, the loss, a transformer layer, a multi-token prediction module."""


def _pipeline_layout(token: str, text: str) -> tuple[str, ...]:
    """Megatron-LM's pipeline layout, each virtual stage's marks in layer order
    (``PipelineParallelLayerLayout.parse_str_to_list`` of megatron/core/transformer/
    pipeline_parallel_layer_layout.py): ``E`` the embedding, ``t`` a transformer layer, ``m`` a
    multi-token prediction module, ``L`` the loss, ``|`` between stages, ``x*N`` and ``(...)*N``
    repetitions, commas for the eye.  Read by a small grammar, never evaluated; at most
    :data:`_MAX_LISTED_LAYERS` marks once unrolled."""
    def fail(why: str) -> InputError:
        return InputError(f"Megatron-LM's {token} {_cut(text)!r} is not a pipeline layout ({why}); write "
                          "stages of E, t, m and L between |, with x*N and (...)*N, e.g. Et|(tt|)*30mL")

    if len(text) > _MAX_LIST_TEXT:
        raise fail(f"longer than {_MAX_LIST_TEXT} characters")
    source = text.replace(",", "").replace(" ", "")
    at = 0

    def count() -> int:
        nonlocal at
        start = at
        while at < len(source) and source[at].isdigit():
            at += 1
        if start == at:
            raise fail("a number must follow *")
        return int(source[start:at])

    def sequence(depth: int) -> str:
        nonlocal at
        out: list[str] = []
        size = 0
        while at < len(source) and source[at] != ")":
            mark = source[at]
            if mark == "(":
                if depth > 20:
                    raise fail("brackets nested too deep")
                at += 1
                item = sequence(depth + 1)
                if at >= len(source) or source[at] != ")":
                    raise fail("a bracket is not closed")
                at += 1
            elif mark in _LAYOUT_MARKS or mark == "|":
                item = mark
                at += 1
            else:
                raise fail(f"{mark!r} is no layer mark")
            times = 1
            if at < len(source) and source[at] == "*":
                at += 1
                times = count()
            size += len(item) * times
            if size > _MAX_LISTED_LAYERS:
                raise fail(f"more than {_MAX_LISTED_LAYERS} marks once its repetitions are unrolled")
            out.append(item * times)
        return "".join(out)

    marks = sequence(0)
    if at != len(source):
        raise fail("a bracket closes that was not opened")
    return tuple(marks.split("|"))


def _layout_split(values: dict[str, Any]) -> tuple[int, tuple[int, ...]]:
    """The model chunks and each virtual stage's transformer layers of a pipeline layout, checked as
    Megatron-LM's ``validate_layer_layout`` checks it (its modules are :func:`_mtp`'s)."""
    stages, pp = values["layout"], values.get("pp", 1)
    token = _LAYOUT
    if len(stages) % pp:
        raise InputError(f"Megatron-LM's {token} has {len(stages)} stages, not a multiple of "
                         f"pipeline-model-parallel-size {pp}")
    flat = "".join(stages)
    if flat.count("E") != 1 or flat.count("L") != 1 or not flat.startswith("E") or not flat.endswith("L"):
        raise InputError(f"Megatron-LM's {token} must start with the embedding (E) and end with the loss "
                         "(L), each once")
    layers = values.get("layers")
    if layers is not None and flat.count("t") != layers:
        raise InputError(f"Megatron-LM's {token} places {flat.count('t')} transformer layers (t), and "
                         f"num-layers is {layers}")
    if "m" in flat and "t" in flat[flat.index("m"):]:
        raise InputError(f"Megatron-LM's {token} places a transformer layer after a multi-token prediction "
                         "module; the modules come after every layer")
    return len(stages) // pp, tuple(stage.count("t") for stage in stages)


_MLA_DEFAULTS = {"kv_rank": 32, "head_dim": 128, "rope_head_dim": 64, "value_head_dim": 128}
"""Megatron-LM's defaults of the latent attention's widths (``_add_mla_args``: kv-lora-rank 32,
qk-head-dim 128, qk-pos-emb-head-dim 64, v-head-dim 128; q-lora-rank None, a full query projection)."""

def _mtp(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The multi-token prediction modules of mtp-num-layers; mtp-use-repeated-layer (one layer's weights
    for every module, Megatron-Core's ``mtp_use_repeated_layer``) is refused for more than one module, whose
    weights the count would hold D times, and noted for one, where it changes nothing."""
    depth = values.get("mtp_layers")
    if "layout" in values:
        placed = "".join(values["layout"]).count("m")
        if depth is not None and placed != depth:
            raise InputError(f"Megatron-LM's {_LAYOUT} places {placed} multi-token prediction modules (m), "
                             f"and mtp-num-layers is {depth}")
        if placed and values["layout"][-1].count("m") != placed:
            notes.append(f"{_LAYOUT} puts the multi-token prediction modules on a stage before the "
                         "loss's; costmodel runs them on the last stage, with the output layer")
        depth = placed or depth
    if values.get("mtp_repeated"):
        if depth is not None and depth > 1:
            raise InputError(f"Megatron-LM's mtp-use-repeated-layer with mtp-num-layers {depth}: the "
                             f"{depth} modules share one layer's weights, which this model does not count "
                             "(it gives each module its own layer); drop the switch to price separate layers")
        notes.append("mtp-use-repeated-layer: "
                     + ("with one module it changes nothing" if depth == 1 else
                        "without mtp-num-layers Megatron-LM builds no multi-token prediction module"))
    return {} if depth is None else {"mtp_layers": depth}


def _latent(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The latent attention's shape keywords: with multi-latent-attention, each width given or Megatron-LM's
    default; without it, none (the widths given are named in a note: Megatron-LM ignores them)."""
    given = [k for k in ("q_rank", *_MLA_DEFAULTS) if k in values]
    if not values.get("mla"):
        if given:
            notes.append(f"{', '.join(given)} without multi-latent-attention: Megatron-LM builds a standard "
                         "attention and ignores them, and so does this reading")
        return {}
    out = {key: values.get(key, default) for key, default in _MLA_DEFAULTS.items()}
    if "q_rank" in values:
        out["q_rank"] = values["q_rank"]
    taken = [f"{k}={v}" for k, v in _MLA_DEFAULTS.items() if k not in values]
    if taken:
        notes.append(f"{', '.join(taken)}: Megatron-LM's defaults of the latent attention")
    return out


def _expert_layers(values: dict[str, Any], shape: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The shared experts and the layers with experts (moe-layer-freq) the arguments give."""
    from costmodel.step.flops import shortest_pattern

    out: dict[str, Any] = {}
    if "experts" not in shape:
        given = [name for key, name in (("shared_ffn_hidden", "moe-shared-expert-intermediate-size"),
                                        ("expert_flags", _FREQUENCY)) if key in values]
        if given:
            notes.append(f"{', '.join(given)} without num-experts: Megatron-LM builds dense layers and "
                         "ignores it, and so does this reading")
        return out
    if "shared_ffn_hidden" in values:
        width = values.get("expert_ffn_hidden", values.get("ffn_hidden"))
        if width is None or values["shared_ffn_hidden"] % width:
            shared = values["shared_ffn_hidden"]
            raise InputError(f"Megatron-LM's moe-shared-expert-intermediate-size {shared} is not a whole "
                             "number of experts of moe-ffn-hidden-size"
                             + ("" if width is None else f" {width}")
                             + "; costmodel counts shared experts of the routed experts' width")
        out["shared_experts"] = values["shared_ffn_hidden"] // width
    flags = values.get("expert_flags")
    if flags is None:
        return out
    layers = shape.get("layers")
    if isinstance(flags, int):
        if flags == 1:
            return out
        if layers is None:
            raise InputError("Megatron-LM's moe-layer-freq needs num-layers too")
        flags = [i % flags == 0 for i in range(min(flags, layers))]
    elif layers is not None and len(flags) != layers:
        raise InputError(f"Megatron-LM's moe-layer-freq lists {len(flags)} layers, and num-layers is "
                         f"{layers}")
    pattern = shortest_pattern(flags, "ED")
    if not pattern:
        notes.append("moe-layer-freq gives no layer experts: the model is read as dense")
        shape.pop("experts", None)
        shape.pop("top_k", None)
        shape.pop("expert_ffn_factor", None)
        out.pop("shared_experts", None)
        return out
    if pattern != "E":
        out["expert_layers"] = pattern
    return out


def _layer_frequency(token: str, text: str) -> int | list[bool]:
    """moe-layer-freq: a whole number N ≥ 1, or a list expression of 0 and 1 (``([0]*3+[1]*58)``, ``[1,0]*4``)
    read by a grammar of lists, products by a whole number and sums, as Megatron-LM's ``moe_freq_type``
    accepts them, never evaluated.

    >>> _layer_frequency("--moe-layer-freq", "2")
    2
    >>> _layer_frequency("--moe-layer-freq", "([0]*2+[1]*3)")
    [False, False, True, True, True]
    """
    body = text.strip()
    if body.isdigit():
        if int(body) < 1:
            raise InputError(f"Megatron-LM's {token} {text!r} is not a whole number ≥ 1")
        return int(body)
    runs, _ = _ListExpression(body, token).read()
    return [bool(bit) for bit, n in runs for _ in range(n)]


_MAX_LIST_TEXT = 10_000
"""The longest moe-layer-freq list expression read (a model's explicit list of 0 and 1 is a few hundred)."""
_MAX_LISTED_LAYERS = 1_000_000
"""The most layers a moe-layer-freq list may give."""

_Runs = tuple[list[tuple[int, int]], int]
"""Runs of (bit, count), and their total count."""


class _ListExpression:
    """A recursive-descent reader of Megatron-LM's layer lists: ``expr = term ("+" term)*``, ``term =
    atom ("*" N)* | N "*" term``, ``atom = "[" bit ("," bit)* "]" | "(" expr ")"``, a bit 0 or 1; the value
    kept as runs of (bit, count) with their total, so a long repetition is neither listed nor unbounded."""

    def __init__(self, text: str, token: str) -> None:
        self.text, self.token, self.at = text.replace(" ", ""), token, 0
        if len(self.text) > _MAX_LIST_TEXT:
            raise self.fail(f"longer than {_MAX_LIST_TEXT} characters")

    def fail(self, why: str) -> InputError:
        return InputError(f"Megatron-LM's {self.token} {_cut(self.text)!r} is not a list of layers this "
                          f"reader knows ({why}); give a whole number, or a list of 0 and 1 such as "
                          "([0]*3+[1]*58)")

    def read(self) -> _Runs:
        runs = self.expression()
        if self.at != len(self.text):
            raise self.fail(f"{self.text[self.at:self.at + 20]!r} left over")
        return runs

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def expression(self) -> _Runs:
        runs = self.term()
        while self.peek() == "+":
            self.at += 1
            runs = self.joined(runs, self.term())
        return runs

    def number(self) -> int:
        start = self.at
        while self.peek().isdigit():
            self.at += 1
        if start == self.at or self.at - start > 9:
            raise self.fail("a repetition needs a whole number")
        return int(self.text[start:self.at])

    def term(self) -> _Runs:
        if self.peek().isdigit():
            times = self.number()
            if self.peek() != "*":
                raise self.fail("a number that repeats nothing")
            self.at += 1
            return self.repeated(self.term(), times)
        runs = self.atom()
        while self.peek() == "*":
            self.at += 1
            runs = self.repeated(runs, self.number())
        return runs

    def atom(self) -> _Runs:
        if self.peek() == "(":
            self.at += 1
            runs = self.expression()
            if self.peek() != ")":
                raise self.fail("a '(' without its ')'")
            self.at += 1
            return runs
        if self.peek() != "[":
            raise self.fail("expected '[' or '('")
        self.at += 1
        listed: _Runs = ([], 0)
        while True:
            bit = self.peek()
            if bit not in ("0", "1"):
                raise self.fail("each entry is 0 (dense) or 1 (experts)")
            self.at += 1
            listed = self.joined(listed, ([(int(bit), 1)], 1))
            if self.peek() == "]":
                self.at += 1
                return listed
            if self.peek() != ",":
                raise self.fail("entries are separated by commas")
            self.at += 1

    def joined(self, a: _Runs, b: _Runs) -> _Runs:
        """Runs *a* then *b*, the runs where they meet merged (in place of *a*'s list)."""
        (first, n), (second, m) = a, b
        if n + m > _MAX_LISTED_LAYERS:
            raise self.fail(f"more than {_MAX_LISTED_LAYERS} layers")
        if first and second and first[-1][0] == second[0][0]:
            first[-1] = (first[-1][0], first[-1][1] + second[0][1])
            first.extend(second[1:])
        else:
            first.extend(second)
        return first, n + m

    def repeated(self, runs: _Runs, times: int) -> _Runs:
        """*runs* repeated *times* over."""
        listed, n = runs
        if times < 1:
            raise self.fail("a repetition of 0")
        if n * times > _MAX_LISTED_LAYERS:
            raise self.fail(f"more than {_MAX_LISTED_LAYERS} layers")
        if len(listed) == 1:
            return [(listed[0][0], listed[0][1] * times)], n * times
        out: _Runs = (list(listed), n)
        for _ in range(times - 1):
            out = self.joined(out, (list(listed), n))
        return out


def _vocabulary(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The vocabulary: padded-vocab-size as it is, vocab-size padded as Megatron-LM pads it."""
    if "padded_vocab_size" in values:
        return {"vocabulary": values["padded_vocab_size"]}
    if "vocab_size" not in values:
        return {}
    step = values.get("vocab_divisor", 128) * values.get("tp", 1)
    padded = -(-values["vocab_size"] // step) * step
    if padded != values["vocab_size"]:
        notes.append(f"vocabulary={padded}: vocab-size {values['vocab_size']} padded to a multiple of "
                     f"{step} (make-vocab-size-divisible-by × tp), as Megatron-LM pads it")
    return {"vocabulary": padded}


def _chunks(values: dict[str, Any]) -> int:
    """The model chunks per device the virtual pipeline arguments give."""
    chunks = values.get("chunks")
    if chunks is not None:
        return int(chunks)
    per, pp, layers = values["layers_per_chunk"], values.get("pp", 1), values.get("layers")
    if layers is None:
        raise InputError("Megatron-LM's num-layers-per-virtual-pipeline-stage needs num-layers too, "
                         "to give the model chunks per device")
    if layers % (pp * per):
        raise InputError(f"num-layers {layers} is not a multiple of pipeline-model-parallel-size × "
                         f"num-layers-per-virtual-pipeline-stage = {pp} × {per}")
    return int(layers // (pp * per))


def _stage_split(values: dict[str, Any], chunks: int) -> tuple[int, ...] | None:
    """The layers of each virtual stage that Megatron-LM's uneven pipeline arguments give
    (``get_num_layers_to_build`` of megatron/core/transformer/transformer_block.py): the first and last
    stages' layers given and the rest spread evenly over the stages between, or the embedding and the loss
    counted as a layer each of the first and the last stages; ``None`` without them."""
    first, last = values.get("first_stage_layers"), values.get("last_stage_layers")
    embedding, loss = bool(values.get("embedding_in_split")), bool(values.get("loss_in_split"))
    if first is None and last is None and not embedding and not loss:
        return None
    pp, layers = values.get("pp", 1), values.get("layers")
    if layers is None:
        raise InputError("Megatron-LM's uneven pipeline arguments need num-layers too")
    if first is not None or last is not None:
        if embedding or loss:
            raise InputError("Megatron-LM refuses decoder-first/last-pipeline-num-layers with "
                             "account-for-embedding/loss-in-pipeline-split; give one of the two")
        given = [n for n in (first, last) if n is not None]
        rest, between = layers - sum(given), pp - len(given)
        if pp < 2 or rest < 0 or (between == 0 and rest) or (between and rest % between):
            raise InputError(f"Megatron-LM's uneven pipeline: num-layers {layers} less the first and last "
                             f"stages' {' and '.join(map(str, given))} does not spread evenly over the "
                             f"{max(between, 0)} stages between of pipeline-model-parallel-size {pp}")
        stages = [rest // between if between else 0] * pp
        stages[0] = stages[0] if first is None else first
        stages[-1] = stages[-1] if last is None else last
    else:
        counted = layers + embedding + loss
        if counted % pp:
            raise InputError(f"Megatron-LM's pipeline split: num-layers {layers} with the embedding and the "
                             f"loss counted as layers ({counted}) is not a multiple of "
                             f"pipeline-model-parallel-size {pp}")
        stages = [counted // pp] * pp
        stages[0] -= embedding
        stages[-1] -= loss
    if any(n % chunks for n in stages):
        raise InputError(f"Megatron-LM's uneven pipeline: the stages' layers {','.join(map(str, stages))} do "
                         f"not split into {chunks} model chunks each")
    return tuple(n // chunks for _ in range(chunks) for n in stages)


def _step_settings(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The step settings the arguments give (*notes*: what recomputation and sharding they were read as)."""
    settings: dict[str, Any] = {k: values[k] for k in ("tp", "pp", "cp", "ep", "micro_batch") if k in values}
    settings["framework"] = "megatron"
    chunks = 1
    if "layers_per_chunk" in values or "chunks" in values:
        chunks = _chunks(values)
        if chunks > 1:
            settings.update(schedule="interleaved", chunks=chunks)
    split = _stage_split(values, chunks)
    if "layout" in values:
        if split is not None or "layers_per_chunk" in values or "chunks" in values:
            raise InputError(f"Megatron-LM refuses {_LAYOUT} with other arguments that split the "
                             "pipeline (decoder-first/last-pipeline-num-layers, account-for-embedding/"
                             "loss-in-pipeline-split, the virtual pipeline sizes): the layout gives the "
                             "split; give it alone")
        chunks, split = _layout_split(values)
        if chunks > 1:
            settings.update(schedule="interleaved", chunks=chunks)
    if split is not None:
        settings["stage_layers"] = split
    if "recompute" in values:
        settings["recompute"] = values["recompute"]
    elif values.get("recompute_activations"):
        settings["recompute"] = "selective"
    modules = values.get("recompute_modules")
    if modules and settings.get("recompute") == "selective":
        notes.append(f"recompute-modules {' '.join(modules)}: costmodel's selective recomputation rebuilds "
                     "the attention core alone (Korthikanti et al. 2022), so these modules' activations are "
                     "counted as kept and their recomputation as not run; recompute=full bounds them")
    if values.get("distributed_optimizer"):
        settings["zero"] = 1
    settings.update(_sharded(values, notes))
    switches = {"sequence_parallel": ("sequence_parallel", True),
                "overlap_grad_reduce": ("overlap_grad_reduce", True),
                "overlap_param_gather": ("param_gather", "overlap"),
                "blocking_sends": ("pipeline_sends", "blocking"),
                "no_async_allreduce": ("tp_overlap", "none")}
    settings.update(dict(v for k, v in switches.items() if values.get(k)))
    if settings.get("framework") == "fsdp":  # FSDP's own schedule overlaps both, always
        settings.pop("overlap_grad_reduce", None)
        settings.pop("param_gather", None)
    return {**settings, **_precision(values)}


_SHARDING_ZERO = {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}
"""Megatron-FSDP's sharding strategies as the ZeRO stages they are (Rajbhandari et al. 2020: the optimizer
states, then the gradients, then the parameters sharded over the data-parallel ranks)."""


def _sharded(values: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The settings of a fully sharded data parallelism: Megatron-FSDP (use-megatron-fsdp, its
    data-parallel-sharding-strategy, default optim_grads_params) or PyTorch FSDP2 (use-torch-fsdp2, full
    sharding).  Gradients or parameters sharded run FSDP's schedule (``framework="fsdp"``: parameters
    gathered before each layer's forward and backward, gradients reduce-scattered as the backward makes
    them) at that ZeRO stage; the optimizer alone sharded is the distributed optimizer's ZeRO 1."""
    if values.get("torch_fsdp2"):
        return {"framework": "fsdp", "zero": 3}
    if not values.get("megatron_fsdp"):
        return {}
    strategy = values.get("sharding", "optim_grads_params")
    zero = _SHARDING_ZERO[strategy]
    schedule = (", priced with FSDP's schedule (each layer's parameters gathered before its forward and "
                "backward, its gradients reduce-scattered as the backward makes them)" if zero >= 2 else "")
    notes.append(f"use-megatron-fsdp with data-parallel-sharding-strategy {strategy}: ZeRO {zero}{schedule}")
    return {"framework": "fsdp", "zero": zero} if zero >= 2 else {"zero": zero}


def _precision(values: dict[str, Any]) -> dict[str, Any]:
    """The dtype and dropout the arguments give."""
    out: dict[str, Any] = {}
    if values.get("attention_dropout", 0.1) == 0 and values.get("hidden_dropout", 0.1) == 0:
        out["dropout"] = False
    if values.get("bf16") and values.get("fp16"):
        raise InputError("Megatron-LM's bf16 and fp16 were both given; give one")
    for dtype in ("fp8", "bf16", "fp16"):  # fp8 training keeps bf16 or fp16 for the rest
        if values.get(dtype):
            out["dtype"] = dtype
            break
    return out


def megatron_arguments(text: str) -> MegatronArguments:
    """Read a Megatron-LM argument string (module notes).

    Examples
    --------
    >>> m = megatron_arguments("--num-layers 96 --hidden-size 12288 --num-attention-heads 96 "
    ...                        "--seq-length 2048 --tensor-model-parallel-size 8 "
    ...                        "--pipeline-model-parallel-size 16 --global-batch-size 1536 --lr 6.0e-5")
    >>> m.shape["layers"], m.settings["tp"], m.settings["pp"], m.global_batch, m.unread
    (96, 8, 16, 1536, ('--lr 6.0e-5',))
    """
    notes: list[str] = []
    values, unread, words, written = _read(_tokens(text, notes))
    shape = _shape(values, notes)
    settings = _step_settings(values, notes)
    return MegatronArguments(shape=shape, settings=settings, global_batch=values.get("global_batch"),
                             unread=tuple(unread), notes=tuple(notes), words=tuple(words),
                             written=tuple(written))
