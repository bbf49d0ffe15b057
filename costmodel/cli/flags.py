"""The core's messages in the command line's words: ``alpha=TIME`` becomes ``--alpha TIME``.

The library names what is wrong by its Python parameters (``pass alpha=TIME``,
``drop p=``, ``e.g. lanes=4``, ``whole_bytes=True prices ...``); this layer
knows the options, so it puts them in their place.  A parameter is rewritten
where the message tells the user what to pass:

- followed by a METAVAR in capitals or by no value at all (``pass alpha=TIME``,
  ``drop p=``);
- set to ``True``: a switch, its option alone (``verify=True`` is ``--verify``);
- with a value after a word that asks for it (``e.g. lanes=4``, ``give tp=2 or
  more``, ``use outer=ring or tree``, ``at most lanes=8``, ``no effect with
  tp=1``, ``needs ep=2 or more``, ``give ep=2 or ep=4``), except the parameters whose Python examples
  the command line shows as they are (``e.g. p=32`` for a topology, ``e.g.
  seed=0`` for a graph);
- with any value, for the few parameters whose values the command line states
  as options (:data:`_STATED`: ``min_bytes=1 MB is not below max_bytes=1 kB``
  is ``--min 1 MB is not below --max 1 kB``).

A value the message only shows (``p=12 does not match``, ``at p=16``) stays as
it is, unless an error is about it (:data:`_STATED_IN_ERRORS`) or it is the
value the user gave that option: ``stages=0 is not a positive integer`` after
``-P 0`` is ``-P 0 is not a positive integer``.  Each
option is named as it was typed, where it has several spellings (``-P`` or
``--stages``, ``-F`` or ``--forward``; see :func:`typed_options`).  A parameter
inside a quoted value (``--set 'p='``) is the user's text, never rewritten.  A
call of the library that a message suggests (:data:`_COMMANDS`) is the command
that does the same: ``formula('allreduce', 'hierarchical')`` is ``costmodel
formula allreduce hierarchical``.

An error raised as :class:`Worded` already names what the user typed (an
example's givens are set with ``--set NAME=VALUE``, so ``layers=30`` is their
own words) and is printed as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from costmodel._lazy import LazyPattern
from costmodel.errors import InputError

__all__ = ["DESCRIBING", "FLAGS", "Typed", "Worded", "cli_message", "typed_options"]


class Worded(InputError):
    """An error whose message names what the user typed, in the user's own words: printed as it is.

    An example's givens are set with ``--set NAME=VALUE``, so ``layers=30`` in its message is what
    the user wrote, not a parameter for :func:`cli_message` to turn into an option.
    """

FLAGS = {
    "activation_bytes": "--activation-bytes",
    "algo": "--algo",
    "algorithm": "--algorithm",
    "align_param_gather": "--align-param-gather",
    "allow_bank_change": "--allow-bank-change",
    "out_format": "--out-format",
    "allow_oom": "--allow-oom",
    "alpha": "--alpha",
    "arch": "--arch",
    "attention": "--attention",
    "backend": "--backend",
    "backward_s": "--backward",
    "bandwidth": "--bandwidth",
    "batch": "--batch",
    "batches": "--batches",
    "beta": "--beta",
    "blocks": "--blocks",
    "bucket_bytes": "--bucket-size",
    "buckets": "--buckets",
    "bw_inter": "--bw-inter",
    "bw_intra": "--bw-intra",
    "capacity_factor": "--capacity-factor",
    "causal": "--causal",
    "channels": "--channels",
    "chunks": "--chunks",
    "collective": "--collective",
    "collnet": "--collnet",
    "cpu": "--cpu",
    "cutoff": "--cutoff",
    "cp": "--cp",
    "cp_link": "--cp-link",
    "dense_layers": "--dense-layers",
    "density": "--density",
    "dp": "--dp",
    "dropout": "--dropout",
    "dp_link": "--dp-link",
    "dtype": "--dtype",
    "efficiency": "--efficiency",
    "entries": "--entries",
    "ep": "--ep",
    "exercises": "--exercises",
    "expert_ffn_factor": "--expert-ffn",
    "expert_layers": "--expert-layers",
    "experts": "--experts",
    "ffn_factor": "--ffn",
    "force": "--force",
    "late_penalty_per_day": "--late-penalty-per-day",
    "forward_s": "--forward",
    "forward_slots": "--forward",
    "backward_slots": "--backward",
    "weight_slots": "--weight",
    "comm_slots": "--comm",
    "framework": "--framework",
    "gamma": "--gamma",
    "gpu": "--gpu",
    "gemm": "--gemm",
    "hf_config": "--hf-config",
    "global_batch": "--global-batch",
    "gpus": "--dp",
    "gpus_per_node": "--gpus-per-node",
    "gradient_bytes": "--gradient-bytes",
    "groups": "--groups",
    "head_dim": "--head-dim",
    "heads": "--heads",
    "hidden": "--hidden",
    "inner": "--inner",
    "intra": "--intra",
    "kv_groups": "--kv-groups",
    "lanes": "--lanes",
    "layers": "--layers",
    "hosts_per_node": "--hosts-per-node",
    "levels": "--level",
    "max_bytes": "--max",
    "method": "--method",
    "micro_batch": "--micro-batch",
    "micro_batch_sizes": "--micro-batch-sizes",
    "microbatches": "-m",
    "min_bytes": "--min",
    "mtp_layers": "--mtp-layers",
    "n": "-n",
    "net_latency": "--net-latency",
    "nodes": "--nodes",
    "nvls": "--nvls",
    "optimizer_bytes": "--optimizer-bytes",
    "optimizer_s": "--optimizer",
    "order": "--order",
    "outer": "--outer",
    "overlap_grad_reduce": "--overlap-grad-reduce",
    "overrides": "--overrides",
    "question": "--question",
    "score": "--score",
    "reason": "--reason",
    "p": "-p",
    "p_max": "--p-max",
    "p_min": "--p-min",
    "param_gather": "--param-gather",
    "params": "--params",
    "peak_flops": "--peak",
    "per_rack": "--per-rack",
    "pipeline_sends": "--pipeline-sends",
    "tp_overlap": "--tp-overlap",
    "points": "--points",
    "pp": "--pp",
    "pp_link": "--pp-link",
    "prefetch": "--prefetch",
    "preset": "--preset",
    "profile": "--profile",
    "proto": "--proto",
    "racks": "--racks",
    "ranks": "--ranks",
    "recompute": "--recompute",
    "rounds": "--rounds",
    "schedule": "--schedule",
    "seed": "--seed",
    "segments": "--segments",
    "seq": "--seq",
    "sequence": "--seq",
    "sequence_parallel": "--sp",
    "servers": "--servers",
    "shared_experts": "--shared-experts",
    "size": "--random",
    "sizes": "--sizes",
    "slowdown": "--slowdown",
    "source": "--from",
    "stage_layers": "--stage-layers",
    "steps": "--steps",
    "student": "--student",
    "tied_embeddings": "--untied-embeddings",
    "timeout_s": "--timeout",
    "tokens": "--tokens",
    "top_k": "--top-k",
    "top": "--top",
    "tp": "--tp",
    "tp_link": "--tp-link",
    "vector": "--vector",
    "verify": "--verify",
    "version": "--nccl-version",
    "vocabulary": "--vocab",
    "weights": "--weights",
    "window": "--window",
    "window_layers": "--window-layers",
    "layer_norms": "--layer-norms",
    "qk_norm": "--qk-norm",
    "kv_rank": "--kv-rank",
    "q_rank": "--q-rank",
    "rope_head_dim": "--rope-head-dim",
    "value_head_dim": "--value-head-dim",
    "whole_bytes": "--whole-bytes",
    "workers": "--workers",
    "world_size": "--gpus",
    "zero": "--zero",
    # privacy (DP-SGD accounting)
    "q": "-q",
    "noise_multiplier": "--noise",
    "epochs": "--epochs",
    "dataset": "--dataset",
    "phases": "--phases",
    "delta": "--delta",
    "target_epsilon": "--target-epsilon",
    "clip": "--clip",
    "clients_per_round": "--clients-per-round",
    "orders": "--orders",
    "conversion": "--conversion",
    "population": "--population",
    # federated round
    "client_times": "--compute",
    "uplink": "--uplink",
    "downlink": "--downlink",
    "sampled": "--sampled",
    "fastest": "--fastest",
    "deadline": "--deadline",
    "bits": "--bits",
    "draws": "--draws",
    # federated sync
    "step_times": "--compute",
    "bound": "--bound",
    "bounds": "--bounds",
    "lr": "--lr",
    "lr_local": "--lr-local",
    "lr_global": "--lr-global",
    "mu": "--mu",
    # consensus graphs
    "degree": "--degree",
    "edges": "--edges",
    "prob": "--prob",
    "rows": "--rows",
    "target": "--target",
    # the rest, each set by the option of its name
    "attention_kernel": "--attention-kernel",
    "collectives": "--collectives",
    "csv_path": "--csv",
    "gated": "--gated",
    "index_bytes": "--index-bytes",
    "limit_s": "--limit",
    "megatron": "--megatron",
    "name": "--name",
    "scheme": "--scheme",
    "stages": "--stages",
    "student_from": "--student-from",
    "time_s": "--time",
}
"""Each parameter a core message may name, and the option that sets it."""

_EXAMPLES = {
    "levels=['8:1us:150GB/s', '4:5us:25GB/s']": "--level 8:1us:150GB/s --level 4:5us:25GB/s",
}
"""Example values written as Python, and as options."""

_SHOWN = {"p", "seed"}
"""Parameters whose example values messages already show in Python's words."""

_STATED = {"cutoff", "late_penalty_per_day",
           "stages", "chunks", "forward_slots", "backward_slots", "weight_slots", "comm_slots", "lanes",
           "rounds", "degree",
           "arch", "bits", "bucket_bytes", "bw_inter", "bw_intra", "channels", "clients_per_round", "clip",
           "cpu", "dataset", "deadline", "delta", "dense_layers", "draws", "efficiency", "ep", "epochs",
           "experts", "fastest", "framework", "gemm", "global_batch", "gpus_per_node", "inner", "intra",
           "layers",
           "lr", "lr_global", "lr_local", "max_bytes", "micro_batch_sizes", "min_bytes", "mu", "net_latency",
           "nodes", "noise_multiplier", "outer", "p_max", "p_min", "param_gather", "peak_flops", "points",
           "pipeline_sends", "population", "prefetch", "q", "ranks", "recompute", "sampled", "schedule",
           "sequence", "kv_groups", "head_dim", "microbatches", "capacity_factor", "optimizer_bytes",
           "ffn_factor", "window", "window_layers", "expert_layers", "layer_norms", "kv_rank", "q_rank",
           "rope_head_dim", "value_head_dim", "mtp_layers",
           "shared_experts", "slowdown", "stage_layers", "target_epsilon", "top", "top_k", "tp_overlap",
           "zero"}
"""Parameters whose values messages state as the command line shows them, as options with a value
(the size and rank ranges searched, the phases of a hierarchical all-reduce, an assignment's points, the
hardware NCCL's model is given, a step's settings read from the command line's text, a pipeline's
stages, chunks and slot times, a graph's degree, a run's rounds and lanes)."""


_STATED_IN_ERRORS = _STATED | {"forward_s", "backward_s", "optimizer_s", "hidden", "heads", "vocabulary",
                               "tp", "pp", "dp", "cp", "chunks", "expert_ffn_factor", "megatron"}
"""In an error, the settings too whose value is the one the user gave and the error is about (``tp=3 does
not divide heads=16`` is ``--tp 3 does not divide --heads 16``); a note that shows such a value (``each
of the tp=8 ranks``) keeps it as it is."""

_SWITCHES = ("causal", "dropout", "overlap_grad_reduce", "align_param_gather", "allow_oom")
"""Switches whose ``False`` a message may name: ``causal=False`` is ``--no-causal``."""
_SWITCHED_OFF = re.compile(r"(?<![\w'\"-])(" + "|".join(_SWITCHES) + r")=False\b")

_COMMANDS = {"formula": "formula", "compare_hierarchical": "cost", "load_profile": "profiles"}
"""The library's functions that messages suggest calling, and the command doing the same."""

_CALL = re.compile(r"\b(" + "|".join(_COMMANDS) + r")\(((?:[^()]|\([^()]*\))*)\)")
_ARGUMENT = LazyPattern(r"(?:[^,(\[]|\([^()]*\)|\[[^\]]*\])+")
_EXTRA = re.compile(r"extra=\{'(\w+)': [A-Z]+\}")
"""An algorithm's extra parameter, ``extra={'blocks': K}``: its own option, ``--blocks``."""
_LEVELS = LazyPattern(r"topology=topology_of\(\[(.*)\]\)")


def _words(argument: str) -> str:
    """One argument of a suggested call as the command line writes it."""
    argument = argument.strip()
    levels = _LEVELS.fullmatch(argument)
    if levels:  # each level's text; a trailing ... is "once per level"
        texts = [t.strip() for t in levels[1].split(",")]
        shown = " ".join(f"--level {t.strip(chr(39))}" for t in texts if t != "...")
        return shown + (", once per level" if "..." in texts else "")
    name, _, value = argument.rpartition("=")
    value = value.strip("[]'")
    return f"{FLAGS[name]} {value}" if name else value


def _command(m: re.Match[str]) -> str:
    return " ".join(["costmodel", _COMMANDS[m[1]], *map(_words, _ARGUMENT.findall(m[2]))])


_AS_TYPED = r"(?<!--fix )(?<!--fix ')(?<!--set )(?<!--set ')(?<!--sweep )"
"""After ``--fix`` (plan), ``--set`` (an exercise) and ``--sweep``, SETTING=VALUE is the command line's own
notation."""


def _names(names: Iterable[str]) -> str:
    """The parameters *names* as a message names them, ``name=``: not inside a quoted value, nor after an
    option whose values are SETTING=VALUE (:data:`_AS_TYPED`)."""
    return r"(?<![\w'\"-])" + _AS_TYPED + "(" + "|".join(sorted(names, key=len, reverse=True)) + r")="


_ASKED = (r"(?:(?<=e\.g\. )|(?<=give )|(?<=pass )|(?<=use )|(?<=try )|(?<=add )|(?<=at most )|(?<=one of )"
          r"|(?<=with )|(?<=needs )|(?<= or ))")


@cache
def _parameter(error: bool = False) -> re.Pattern[str]:
    """The parameters of :data:`FLAGS` as a message names them: a METAVAR, True or nothing after the
    ``=``, a value asked for, or a value stated (in an *error*, :data:`_STATED_IN_ERRORS`).  Compiled on the
    first message with an ``=`` in it (the alternation of every name is the costliest pattern a command
    would otherwise compile at start)."""
    return re.compile(
        _names(FLAGS) + r"(?:(True)\b|(?=([A-Z]))|(?=[\s,;:)]|$))"
        r"|" + _ASKED + _names(FLAGS.keys() - _SHOWN)
        + r"|" + _names(_STATED_IN_ERRORS if error else _STATED))


@cache
def _quoted() -> re.Pattern[str]:
    """A parameter with a quoted value, as a message shows what was given (``dp='0'``)."""
    return re.compile(_names(FLAGS) + r"(?=')")


def _option(m: re.Match[str]) -> str:
    if m[4] or m[5]:
        return FLAGS[m[4] or m[5]] + " "
    return FLAGS[m[1]] + (" " if m[3] else "")


Typed = Mapping[str, tuple[str, tuple[str, ...]]]
"""Each spelling of an option the user typed → the spelling typed and the values given to it."""


def typed_options(args: Sequence[str], options: Iterable[tuple[Sequence[str], bool]]) -> Typed:
    """The options of *args* that the user typed: each spelling of one of *options* (its spellings and
    whether it takes a value) → the spelling typed and the values given (``-P 8``, ``--stages=8`` and
    ``-P8`` alike).

    >>> options = [(("-P", "--stages"), True), (("--forward", "-F"), True)]
    >>> typed = typed_options(["bubble", "-P", "8", "-F0"], options)
    >>> typed["--stages"], typed["--forward"]
    (('-P', ('8',)), ('-F', ('0',)))
    >>> cli_message("microbatches=12 is not a multiple of stages=8; e.g. forward_slots=1", typed)
    '-m 12 is not a multiple of -P 8; e.g. -F 1'
    """
    spellings = {name: (tuple(names), takes) for names, takes in options for name in names}
    found: dict[tuple[str, ...], tuple[str, list[str]]] = {}
    words = list(args)
    for i, word in enumerate(words):
        if word == "--":
            break
        name, value = word, None
        if word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
        elif not word.startswith("--") and len(word) > 2 and word[:2] in spellings and word[0] == "-":
            name, value = word[:2], word[2:]
        if name not in spellings:
            continue
        names, takes = spellings[name]
        if takes and value is None:
            value = words[i + 1] if i + 1 < len(words) else None
        values = found.setdefault(names, (name, []))[1]
        if takes and value is not None:
            values.append(value)
        found[names] = (name, values)
    return {spelling: (typed, tuple(values))
            for names, (typed, values) in found.items() for spelling in names}


def _as_given(message: str, typed: Typed) -> str:
    """*message* with each parameter stated at the value the user gave its option, ``stages=8`` after
    ``-P 8`` and ``entries=0`` after ``--entries 0``, written as that option: ``-P 8``, ``--entries 0``
    (``p=8`` after ``-p 8``, a short option spelled as the parameter, reads as typed)."""
    for name, option in FLAGS.items():
        if option not in typed or f"{name}=" not in message:
            continue
        spelling, values = typed[option]
        if not spelling.startswith("--") and spelling.lstrip("-") == name:
            continue
        for value in sorted({v for v in values if v.strip()}, key=len, reverse=True):
            written = f"{spelling} {value}".replace("\\", "\\\\")
            message = re.sub(r"(?<![\w'\"-])" + re.escape(f"{name}={value}") + r"(?![\w.])", written, message)
    return message


def _as_typed(message: str, typed: Typed) -> str:
    """*message* with each option named as the user typed it (``-P`` where it says ``--stages``)."""
    for spelling, (used, _) in typed.items():
        if spelling != used:
            message = re.sub(r"(?<![\w-])" + re.escape(spelling) + r"(?![\w-])", used, message)
    return message


def _as_described(message: str, origins: Mapping[str, tuple[str, str]], typed: Typed | None) -> str:
    """*message* with each ``name=value`` that a model description set (and the user did not type the
    option of) in its source's words (:func:`costmodel.cli.origins.origins`)."""
    for name, (value, words) in origins.items():
        if f"{name}=" not in message or (typed and FLAGS.get(name) in typed):
            continue
        message = re.sub(r"(?<![\w'\"-])" + re.escape(f"{name}={value}") + r"(?![\w.])",
                         words.replace("\\", "\\\\"), message)
    return message


DESCRIBING = frozenset({"--model", "--hf-config", "--megatron"})
"""The options whose descriptions set values the command line never names (:mod:`costmodel.cli.origins`)."""


def cli_message(message: str, typed: Typed | None = None, *, error: bool = False,
                origins: Mapping[str, tuple[str, str]] | None = None) -> str:
    """*message* with the parameters it names replaced by their options (as *typed*, when given: see
    :func:`typed_options`); an *error* names the options of the values it is about too
    (:data:`_STATED_IN_ERRORS`).  A value that ``--model``, ``--hf-config`` or ``--megatron`` set is named
    as its source names it, where *origins* (:func:`costmodel.cli.origins.origins`) gives it.

    >>> cli_message("no latency given; pass alpha=TIME or profile=NAME")
    'no latency given; pass --alpha TIME or --profile NAME'
    >>> cli_message("p=12 does not match the levels; drop p= or change them")
    'p=12 does not match the levels; drop -p or change them'
    >>> cli_message("give the number of parallel lanes, e.g. lanes=4")
    'give the number of parallel lanes, e.g. --lanes 4'
    >>> cli_message("verify=True at p=16 would hold too much; drop verify=")
    '--verify at p=16 would hold too much; drop --verify'
    >>> cli_message("dp='0': '0' is zero")
    "--dp '0': '0' is zero"
    >>> cli_message("sequence_parallel=True has no effect with tp=1")
    '--sp has no effect with --tp 1'
    >>> cli_message("causal=False with window=4096 needs causal attention; drop causal=False", error=True)
    '--no-causal with --window 4096 needs causal attention; drop --no-causal'
    >>> cli_message("the size range is empty: min_bytes=1 MB is not below max_bytes=1 kB")
    'the size range is empty: --min 1 MB is not below --max 1 kB'
    >>> cli_message("the integer that minimises it, or extra={'segments': K}")
    'the integer that minimises it, or --segments'
    >>> print(cli_message("see formula('allreduce', 'hier');\\ncost it with compare_hierarchical("
    ...       "'allreduce', ['hier'], outer='tree', topology=topology_of(['SIZE:ALPHA:RATE', ...]))"))
    see costmodel formula allreduce hier;
    cost it with costmodel cost allreduce hier --outer tree --level SIZE:ALPHA:RATE, once per level
    """
    if origins:
        message = _as_described(message, origins, typed)
    if typed:
        message = _as_given(message, typed)
    message = _SWITCHED_OFF.sub(lambda m: "--no-" + FLAGS[m[1]][2:], message)
    for python, options in _EXAMPLES.items():
        message = message.replace(python, options)
    message = _CALL.sub(_command, message)
    message = _EXTRA.sub(lambda m: FLAGS[m[1]], message)
    if "=" in message:
        message = _quoted().sub(lambda m: FLAGS[m[1]] + " ", message)  # the value given, quoted, stays
        message = _parameter(error).sub(_option, message)
    return _as_typed(message, typed) if typed else message
