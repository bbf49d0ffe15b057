"""The settings of a training step, declared once: the Python API, the command line, sweeps and plots read
them.

:class:`StepConfig` is a frozen dataclass whose every field is one setting of
:func:`costmodel.step.step`; the field's metadata, a :class:`Setting`, says how a value is read
(from Python or from the command line's text: one reader for both, so a value the API refuses the
command line refuses with the same words), whether the command line offers it as an option of its own
and in which help panel, and whether a sweep may vary it (and how its values read).  So:

* ``costmodel.step(dp=8, zero=1, ...)`` is ``price_step(StepConfig.of(dp=8, zero=1, ...))``;
* ``costmodel step`` and ``costmodel plot step`` take one option per setting offered on its own
  (:func:`settings`; ``cli/step.py`` spells them), plus the option groups that build the other
  settings (a transformer shape, per-layer times, a link, a topology);
* ``--sweep KNOB=VALUES`` and :func:`costmodel.step.sweep_step` vary any setting with a sweep kind
  (:data:`costmodel.step.sweep.KNOBS` is derived from the fields).

Readers check one value each; rules that tie settings together (chunks only with the interleaved
schedule, ZeRO 3 only without a pipeline, a shape or per-layer times) are checked where the step is
priced, once, for every caller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError, UnknownNameError
from costmodel.names import Names
from costmodel.step._values import named, number
from costmodel.units import parse_size, parse_time
from costmodel.validate import is_whole, positive, whole

__all__ = ["ATTENTIONS", "DTYPES", "FRAMEWORKS", "PANELS", "PIPELINE_SENDS", "RECOMPUTE_MODES", "TP_OVERLAPS",
           "Setting", "StepConfig", "setting_of", "settings"]

PANELS = {"parallel": "Parallelism", "model": "Model: a transformer shape", "times": "Model: per-layer times",
          "hardware": "Hardware", "comm": "Communication", "link": "Link"}
"""The help panels of ``costmodel step``, by key."""

RECOMPUTE_MODES = ("none", "selective", "full")
"""Activation recomputation: none, the attention core only (Korthikanti et al. 2022, section 5), or each
layer's whole forward again."""

ATTENTIONS = ("unfused", "flash")
"""How attention runs: its scores and probabilities through memory (softmax, dropout and two batched
matrix products), or fused in one kernel that keeps them on chip (FlashAttention)."""

FRAMEWORKS = ("ddp", "fsdp", "deepspeed", "megatron", "megatron-deepspeed")
"""The training frameworks whose data-parallel schedules a step follows (:mod:`costmodel.step.frameworks`)."""

PIPELINE_SENDS = ("overlap", "blocking", "scatter-gather")
"""How a pipeline stage's activations and gradients reach the next: sent beside the compute, which goes on
(``overlap``); in an exchange that holds the device until it is done (``blocking``); or, blocking, each of
the t tensor-parallel ranks sending 1/t of the tensor and the receivers all-gathering it
(``scatter-gather``, Megatron-LM's default before Megatron-Core)."""

TP_OVERLAPS = ("none", "backward")
"""Whether a layer's tensor-parallel collectives of the backward run beside its products: not at all, or
each column-parallel layer's input-gradient all-reduce beside its weight gradient (with sequence
parallelism: the input gathered again beside the input gradient, the input gradient reduce-scattered
beside the weight gradient), as Megatron-LM has done since September 2021."""

_FRAMEWORK_NAMES = Names("framework", {
    "ddp": ("pytorch-ddp", "torch-ddp", "torch"), "fsdp": ("pytorch-fsdp", "torch-fsdp"),
    "deepspeed": ("ds",), "megatron": ("megatron-lm", "megatron-core", "mcore"),
    "megatron-deepspeed": ("megatron-ds",)})


@dataclass(frozen=True, slots=True)
class Setting:
    """How one setting of a step is read and offered.

    *read* takes the value as given (Python, or the command line's text) and the setting's name, and
    returns its canonical value or raises :class:`~costmodel.errors.InputError` naming the setting.
    *own_option*: the command line offers it as an option of its own (False: it is built from a group of
    values, such as a shape from its layers and width, or set from Python only); *metavar* names its
    value there, and *boolean* makes it an on/off switch.  *sweep* is how a sweep's values read
    (``count``, ``size``, ``number`` or ``name``; ``None``: not swept), under the knob name *knob*
    (default: the setting's name with dashes).  *keeps_baseline*: the step with dp = 1 is the same
    whatever its value; *shape_only*: it matters only for a transformer shape.
    """

    read: Callable[[Any, str], Any]
    help: str
    panel: str = "parallel"
    own_option: bool = True
    metavar: str | None = None
    boolean: bool = False
    sweep: str | None = None
    knob: str | None = None
    keeps_baseline: bool = False
    shape_only: bool = False

    def knob_name(self, name: str) -> str | None:
        """The name sweeps give the setting called *name*, or None when it is not swept."""
        if self.sweep is None:
            return None
        return self.knob if self.knob is not None else name.replace("_", "-")


def _setting(default: Any, read: Callable[[Any, str], Any], help: str, **options: Any) -> Any:
    return field(default=default, metadata={"setting": Setting(read, help, **options)})


# -- readers: one value each ----------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A value as a message shows it: text as typed, anything else as Python writes it."""
    return value.strip() if isinstance(value, str) else repr(value)


def count(value: Any, name: str) -> int:
    """A count ≥ 1: an int, or text such as ``8`` or ``2k``."""
    if isinstance(value, str):
        from costmodel.training.counts import parse_count

        value = named(lambda v: Fraction(parse_count(v.strip())), value, name)
        value = int(value)
    return positive(value, name)


def _optional_count(value: Any, name: str) -> int | None:
    return None if value is None else count(value, name)


def _depth(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text.isdigit():
            raise InputError(f"{name}={_shown(value)} is not a count of layers; e.g. {name}=1")
        value = int(text)
    return whole(value, name, low=0, hint=f"the layers gathered ahead, e.g. {name}=1")


def _size(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    size = named(parse_size, value, name)
    if size <= 0:
        raise InputError(f"{name}={_shown(value)} is not a positive size; e.g. 25MiB")
    return size


def _bytes(value: Any, name: str) -> Fraction | None:
    """A size ≥ 0 (0: nothing to send)."""
    return None if value is None else named(parse_size, value, name)


def _time_read(value: Any) -> Fraction:
    """A time: a number is seconds; text, from a command line or a file, needs its unit (only 0 goes bare)."""
    return parse_time(value, require_unit=isinstance(value, str))


def _optional_time(value: Any, name: str) -> Fraction | None:
    return None if value is None else named(_time_read, value, name)


def _share_below_one(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    x = number(value, name)
    if not 0 <= x < 1:
        raise InputError(f"{name}={_shown(value)} is not a share of the compute; give 0 ≤ {name} < 1, e.g. "
                         "0.15")
    return x


def _efficiency(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    x = number(value, name)
    if not 0 < x <= 1:
        raise InputError(f"{name}={_shown(value)} is not a share of the peak; give 0 < {name} ≤ 1, e.g. 0.5")
    return x


def _peak(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip()[-1:].isalpha():  # 312T: a count with its suffix
        from costmodel.training.counts import parse_count

        value = named(lambda v: Fraction(parse_count(v.strip())), value, name)
    x = number(value, name)
    if x <= 0:
        raise InputError(f"{name}={_shown(value)} is not positive; give one GPU's peak FLOP/s, e.g. "
                         f"{name}=312e12")
    return x


def _capacity(value: Any, name: str) -> Fraction | None:
    from costmodel.step.flops import capacity

    return capacity(value, name)


def _flag(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise InputError(f"{name}={_shown(value)} is not on or off; give true or false")


def _optional_flag(value: Any, name: str) -> bool | None:
    return None if value is None else _flag(value, name)


def _choice(choices: tuple[str, ...], kind: str) -> Callable[[Any, str], str]:
    names = Names(kind, dict.fromkeys(choices, ()))

    def read(value: Any, name: str) -> str:
        if not isinstance(value, str):
            raise InputError(f"{name}={_shown(value)} is not a {kind}; give one of {', '.join(choices)}")
        return names.resolve(value)

    return read


def _schedule(value: Any, name: str) -> str:
    from costmodel.pipeline.orders import resolve_schedule

    return resolve_schedule(str(value).strip())


def _framework(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"{name}={_shown(value)} is not a framework; give one of {', '.join(FRAMEWORKS)}")
    return _FRAMEWORK_NAMES.resolve(value)


def _zero(value: Any, name: str) -> int:
    text = str(value).strip().lower() if not isinstance(value, bool) else ""
    if text == "fsdp":
        return 3
    if text in ("0", "1", "2", "3"):
        return int(text)
    raise InputError(f"{name}={_shown(value)} is not a ZeRO stage; give 0, 1, 2, 3 or 'fsdp' (ZeRO 3: FSDP's "
                     "FULL_SHARD)")


def _link(value: Any, name: str) -> Any:
    """A link for one kind of traffic: a LinkParams, PiecewiseLink or Profile, or text (a profile's name
    or file, or ``ALPHA:RATE``)."""
    if value is None:
        return None
    from costmodel.params import LinkParams, PiecewiseLink
    from costmodel.profiles import Profile

    if isinstance(value, (LinkParams, PiecewiseLink, Profile)):
        return value
    if isinstance(value, str):
        from costmodel.links import link_of

        return named(link_of, value, name)
    raise InputError(f"{name}={_shown(value)} is not a link; pass LinkParams, PiecewiseLink, Profile, a "
                     "profile's name or ALPHA:RATE")


def _topology(value: Any, name: str) -> Any:
    if value is None:
        return None
    from costmodel.topology import Topology

    if not isinstance(value, Topology):
        raise InputError(f"{name}={_shown(value)} is not a Topology; build one with topology_of(levels)")
    return value


def _shape(value: Any, name: str) -> Any:
    if value is None:
        return None
    from costmodel.step.flops import TransformerShape

    if not isinstance(value, TransformerShape):
        raise InputError(f"{name}={_shown(value)} is not a TransformerShape")
    return value


def _gpu(value: Any, name: str) -> Any:
    """A GPU: a :class:`~costmodel.gpus.GPU`, or a preset's name or a GPU file (a calibrated compute
    profile is one)."""
    if value is None:
        return None
    from costmodel.gpus import GPU, load_gpu

    if isinstance(value, GPU):
        return value
    if isinstance(value, str) or hasattr(value, "__fspath__"):
        return load_gpu(value)
    raise InputError(f"{name}={_shown(value)} is not a GPU; give a preset's name (costmodel gpus) or a GPU "
                     "file")


_DTYPES = Names("training dtype", {"bf16": ("bfloat16",), "fp16": ("float16", "half"),
                                   "fp8": ("float8", "e4m3", "fp8-e4m3"), "tf32": ("tensorfloat32",),
                                   "fp32": ("float32", "float")})
DTYPES = _DTYPES.canonical
"""The dtypes a step's matrix products run in (tf32: fp32 data on the tensor cores)."""


def _dtype(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}={_shown(value)} is not a dtype; e.g. {name}='bf16'")
    return _DTYPES.resolve(value)


def _each(parse: Callable[[Any], Fraction], values: Sequence[Any], name: str) -> tuple[Fraction, ...]:
    """Each of *values* read by *parse*, an error naming the item; a value repeated (one time for every
    layer) is read once."""
    read: dict[Any, Fraction] = {}
    out = []
    for i, v in enumerate(values):
        key = (type(v), v)
        if key not in read:
            read[key] = named(parse, v, f"{name}[{i}]")
        out.append(read[key])
    return tuple(out)


def _times(value: Any, name: str) -> tuple[Fraction, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise InputError(f"{name}={_shown(value)} is not a non-empty list of times; give one per layer")
    return _each(_time_read, value, name)


def _sizes(value: Any, name: str) -> tuple[Fraction, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise InputError(f"{name}={_shown(value)} is not a non-empty list of sizes; give one per layer")
    return _each(parse_size, value, name)


def _stage_layers(value: Any, name: str) -> tuple[int, ...] | None:
    """Layers per pipeline stage, a list (``7,8,8,7``), each ≥ 0."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",")]
        if not all(items) or not all(v.isdigit() for v in items):
            raise InputError(f"{name}={_shown(value)} is not a list of layer counts; e.g. {name}=7,8,8,7")
        value = [int(v) for v in items]
    if not isinstance(value, Sequence) or not value or not all(is_whole(v) and v >= 0 for v in value):
        raise InputError(f"{name}={_shown(value)} is not a list of layer counts ≥ 0; e.g. {name}=[7, 8, 8, "
                         "7]")
    return tuple(value)


def _optional_positive_int(value: Any, name: str) -> int | None:
    return None if value is None else positive(value, name)


def _element_bytes(value: Any, name: str) -> Fraction | None:
    if value is None:
        return None
    x = number(value, name)
    if x <= 0:
        raise InputError(f"{name}={_shown(value)} is not positive; e.g. {name}=2 (bf16)")
    return x


def _algorithm(value: Any, name: str) -> str:
    """An algorithm's name that some collective of a step knows (a collective that does not has its
    default, with a note); a name none knows is a typo, refused with a did-you-mean."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name}={_shown(value)} is not an algorithm's name; e.g. {name}='ring'")
    from costmodel.collectives._registry import algorithms, resolve

    text, known = value.strip(), []
    for collective in ("allreduce", "reduce-scatter", "allgather", "broadcast", "alltoall"):
        try:
            resolve(collective, text)
        except UnknownNameError:
            known += [a.name for a in algorithms(collective)]
            continue
        except InputError:  # known, but not priced on one link (a hierarchical all-reduce)
            pass
        return text
    raise UnknownNameError("algorithm", text, dict.fromkeys(known), context=f"for {name}=")


def _order(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}={_shown(value)} is not a rank order; e.g. {name}='tp-cp-ep-dp-pp'")
    return value.strip()


def _bucket_rule(value: Any, name: str) -> str | None:
    if value is None:
        return None
    from costmodel.step.buckets import BUCKET_RULES

    return _choice(BUCKET_RULES, "bucket rule")(value, name)


def _param_gather(value: Any, name: str) -> str:
    return _choice(("after", "overlap"), "parameter gather")(value, name)


def _pipeline_sends(value: Any, name: str) -> str | None:
    return None if value is None else _choice(PIPELINE_SENDS, "way of sending")(value, name)


def _tp_overlap(value: Any, name: str) -> str | None:
    return None if value is None else _choice(TP_OVERLAPS, "tensor-parallel overlap")(value, name)


# -- the settings ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StepConfig:
    """Every setting of one training step (see the module notes); build it with :meth:`of`.

    The fields are the keyword arguments of :func:`costmodel.step.step`; each field's metadata is its
    :class:`Setting`.  Defaults: 1F1B, no recomputation, FlashAttention in bf16, and a generic data-parallel
    schedule (DDP's buckets reduced as the backward makes them) unless a framework is named.
    """

    # parallelism
    dp: int = _setting(1, count, "Data-parallel replicas (≥ "
                                 "1).", metavar="D", sweep="count", keeps_baseline=True)
    tp: int = _setting(1, count, "Tensor-parallel ranks per layer (≥ 1; divides the heads).", metavar="T",
                       sweep="count")
    pp: int = _setting(1, count, "Pipeline stages (≥ 1; at most the layers).", metavar="P", sweep="count")
    cp: int = _setting(1, count, "Context-parallel ranks (≥ 1): each holds s/cp of every sequence, ring "
                                 "attention passes K and V (Megatron-Core's; 2·cp divides the sequence).",
                       metavar="C", sweep="count")
    ep: int = _setting(1, count, "Expert-parallel ranks (≥ 1; divides the experts and dp·cp, the "
                                 "ranks that hold the experts).", metavar="EP", sweep="count")
    microbatches: int = _setting(1, count, "Micro-batches per replica per step (≥ 1).", metavar="M",
                                 sweep="count")
    schedule: str = _setting("1f1b", _schedule, "Pipeline schedule: gpipe, 1f1b (default), interleaved, "
                                                "zb-h1.",
                             metavar="NAME", sweep="name")
    chunks: int | None = _setting(None, _optional_count, "Model chunks per device, interleaved only (default "
                                                         "2).",
                                  metavar="V", sweep="count")
    stage_layers: tuple[int, ...] | None = _setting(
        None, _stage_layers, "Layers of each pipeline stage (one per virtual stage with chunks), e.g. "
        "7,8,8,7 (a first or last 0: the embedding or output layer alone); default: equal.",
        metavar="L,L,...")
    recompute: str = _setting("none", _choice(RECOMPUTE_MODES, "recomputation"),
                              "Activation recomputation: none (default), selective (the attention core) or "
                              "full.", metavar="MODE", sweep="name")
    sequence_parallel: bool = _setting(False, _flag, "Sequence parallelism with tensor parallelism "
                                                     "(Megatron's): "
                                       "norms and dropouts on 1/t of the sequence; reduce-scatter + "
                                       "all-gather.",
                                       boolean=True)

    # the model
    shape: Any = _setting(None, _shape, "The transformer "
                                        "(TransformerShape).", panel="model", own_option=False)
    micro_batch: int = _setting(1, count, "Sequences per micro-batch (default "
                                          "1).", panel="model", metavar="B",
                                sweep="count", shape_only=True)
    capacity_factor: Fraction | None = _setting(
        None, _capacity, "Tokens an expert takes over its fair share k·T/E: its token blocks are padded "
        "or cut to that (default: none dropped, tokens spread evenly).", panel="model", metavar="C",
        shape_only=True)
    causal: bool | None = _setting(None, _optional_flag, "Causal attention: count half the attention "
                                   "products, as Megatron-LM does (default: on with a sliding window, else "
                                   "off).", panel="model", boolean=True)
    dropout: bool = _setting(True, _flag, "Dropout after attention and the FFN (and on the attention "
                             "probabilities when unfused): its masks and kernels; off for models trained "
                             "without it (Llama 3).", panel="model", boolean=True, shape_only=True)
    attention: str = _setting("flash", _choice(ATTENTIONS, "attention"),
                              "Attention kernels: flash (default) or unfused (softmax and dropout through "
                              "memory, as Megatron-LM before FlashAttention).", panel="model", metavar="KIND",
                              sweep="name", shape_only=True)
    forward_s: tuple[Fraction, ...] | None = _setting(None, _times, "Per-layer forward times.", panel="times",
                                                      own_option=False)
    backward_s: tuple[Fraction, ...] | None = _setting(None, _times, "Per-layer backward "
                                                                     "times.", panel="times",
                                                       own_option=False)
    gradient_bytes: tuple[Fraction, ...] | None = _setting(None, _sizes, "Per-layer gradient bytes on one "
                                                                         "rank.",
                                                           panel="times", own_option=False)
    activation_bytes: Fraction | None = _setting(None, _bytes, "Activation tensor of a micro-batch.",
                                                 panel="times", own_option=False)
    tokens: int | None = _setting(None, _optional_positive_int, "Tokens per micro-batch.", panel="times",
                                  own_option=False)
    bytes_per_element: Fraction | None = _setting(None, _element_bytes, "Bytes of an activation and gradient "
                                                  "element (default: the dtype's).", panel="model",
                                                  own_option=False)

    # hardware
    gpu: Any = _setting(None, _gpu, "GPU preset (costmodel gpus) or GPU file, e.g. a compute profile from "
                        "`calibrate compute`: prices each operation.", panel="hardware", metavar="NAME|FILE",
                        sweep="name", shape_only=True)
    dtype: str = _setting("bf16", _dtype, "Training dtype of the matrix products: bf16 (default), fp16, fp8, "
                          "tf32 or fp32.", panel="hardware", metavar="DTYPE", sweep="name", shape_only=True)
    peak_flops: Fraction | None = _setting(None, _peak, "Peak FLOP/s of one device, in place of a GPU "
                                           "preset (every FLOP at the efficiency's share): 312T.",
                                           panel="hardware", metavar="FLOP/S", shape_only=True)
    efficiency: Fraction | None = _setting(None, _efficiency, "Price every FLOP at this share of the peak "
                                           "instead of per operation (0 < E ≤ 1).", panel="hardware",
                                           metavar="E", sweep="number", shape_only=True)
    allow_oom: bool = _setting(False, _flag, "Price a step whose memory exceeds the GPU's, with a warning, "
                               "instead of refusing it.", panel="hardware", boolean=True)

    # communication
    framework: str | None = _setting(None, _framework, "Data-parallel schedule of ddp, fsdp, deepspeed, "
                                                       "megatron "
                                     "or megatron-deepspeed (default: buckets reduced as the backward makes "
                                     "them, ZeRO as given).", panel="comm", metavar="NAME", sweep="name",
                                     keeps_baseline=True)
    zero: int = _setting(0, _zero, "ZeRO stage 0 (default), 1, 2, 3 or fsdp (= 3; one pipeline stage only).",
                         panel="comm", metavar="STAGE", sweep="name", keeps_baseline=True)
    buckets: str | None = _setting(None, _bucket_rule, "Gradient buckets: ddp, megatron or deepspeed "
                                   "(default: the "
                                   "framework's).", panel="comm", metavar="RULE", keeps_baseline=True)
    bucket_bytes: Fraction | None = _setting(None, _size, "Bucket size (default: the framework's; DDP "
                                                          "25MiB); a bucket holds whole layers, so a size "
                                                          "below one layer's gradients changes nothing.",
                                             panel="comm", metavar="SIZE", sweep="size", knob="bucket-size",
                                             keeps_baseline=True)
    overlap_grad_reduce: bool | None = _setting(
        None, _optional_flag, "Reduce gradient buckets as the backward makes them (default: the framework's; "
        "Megatron-LM's and DeepSpeed's default is after the backward).", panel="comm", boolean=True,
        keeps_baseline=True)
    prefetch: int | None = _setting(None, _depth, "ZeRO 3: layers all-gathered ahead of compute (default 1).",
                                    panel="comm", metavar="N", sweep="count", keeps_baseline=True)
    param_gather: str = _setting("after", _param_gather, "ZeRO 1/2: gather the parameters after the "
                                                         "optimizer "
                                 "(default) or overlap them with the next forward (Megatron-LM's "
                                 "overlap-param-gather).", panel="comm", metavar="WHEN", sweep="name",
                                 keeps_baseline=True)
    align_param_gather: bool = _setting(True, _flag, "Parameter gathers overlapped on several stages: every "
                                        "stage starts its gathers at the step's start (Megatron-LM's "
                                        "align-param-gather); off: each at its first forward.", panel="comm",
                                        boolean=True, keeps_baseline=True)
    slowdown: Fraction | None = _setting(None, _share_below_one, "Share of compute speed lost while DP "
                                         "communication runs (0 ≤ U < 1; default: the SMs NCCL's channels "
                                         "take "
                                         "on the GPU, else 0).", panel="comm", metavar="U", sweep="number",
                                         keeps_baseline=True)
    optimizer_s: Fraction | None = _setting(None, _optional_time, "Optimizer step after the last reduction "
                                            "(default: priced on the GPU's memory, else 0).", panel="comm",
                                            metavar="TIME")
    pipeline_sends: str | None = _setting(
        None, _pipeline_sends, "Pipeline sends: overlap (beside the compute), blocking (the exchange holds "
        "the device, as Megatron-LM's and DeepSpeed's do) or scatter-gather (blocking, 1/t of the tensor per "
        "tensor-parallel rank, then an all-gather: Megatron-LM before Megatron-Core); default: the "
        "framework's.", panel="comm", metavar="MODE", sweep="name")
    tp_overlap: str | None = _setting(
        None, _tp_overlap, "Tensor-parallel collectives of the backward beside the products: none, or "
        "backward (each input-gradient all-reduce beside its layer's weight gradient; with sequence "
        "parallelism the gathers and reduce-scatters beside the gradients: Megatron-LM's); default: the "
        "framework's.", panel="comm", metavar="MODE", sweep="name")
    algorithm: str = _setting("ring", _algorithm, "All-reduce algorithm of TP and DP (default ring).",
                              panel="comm", metavar="ALGO")

    # links
    link: Any = _setting(None, _link, "The link of every kind of traffic without its own.", panel="link",
                         own_option=False, sweep="name", knob="profile")
    tp_link: Any = _setting(None, _link, "Link of the tensor-parallel collectives: a profile or 2us:300GB/s "
                            "(default: the "
                            "link).", panel="link", metavar="NAME|FILE|ALPHA:RATE", sweep="name")
    pp_link: Any = _setting(None, _link, "Link of the pipeline sends (default: the link).", panel="link",
                            metavar="NAME|FILE|ALPHA:RATE", sweep="name")
    dp_link: Any = _setting(None, _link, "Link of the data-parallel collectives (default: the link).",
                            panel="link", metavar="NAME|FILE|ALPHA:RATE", sweep="name", keeps_baseline=True)
    cp_link: Any = _setting(None, _link, "Link of the context-parallel sends of K and V (default: the "
                            "link).", panel="link", metavar="NAME|FILE|ALPHA:RATE", sweep="name")
    topology: Any = _setting(None, _topology, "The machine's levels "
                                              "(Topology).", panel="link", own_option=False)
    order: str = _setting("tp-cp-ep-dp-pp", _order, "With the machine's levels: the rank order, innermost "
                          "first (default tp-cp-ep-dp-pp, Megatron-Core's; cp after tp and ep inside dp when "
                          "left out).", panel="link", metavar="DIMS")

    @classmethod
    def of(cls, **settings: Any) -> StepConfig:
        """The configuration with *settings* read and checked one by one (the others at their default).

        Raises :class:`~costmodel.errors.UnknownNameError` (with a did-you-mean) for a name that is no
        setting, and the setting's own :class:`~costmodel.errors.InputError` for a value it refuses.

        >>> StepConfig.of(dp="8", zero="fsdp").zero
        3
        """
        known = _FIELDS
        for name in settings:
            if name not in known:
                raise UnknownNameError("step setting", name, tuple(known))
        return cls(**{name: known[name].read(value, name) for name, value in settings.items()})

    def replace(self, **settings: Any) -> StepConfig:
        """A copy with *settings* read as :meth:`of` reads them."""
        return _replace(self, settings)

    def given(self) -> dict[str, Any]:
        """The settings that differ from their default."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != f.default}


def _replace(config: StepConfig, settings: Mapping[str, Any]) -> StepConfig:
    read = StepConfig.of(**settings)
    return dataclasses.replace(config, **{name: getattr(read, name) for name in settings})


_FIELDS: dict[str, Setting] = {f.name: f.metadata["setting"] for f in fields(StepConfig)}


def settings() -> Iterator[tuple[str, Any, Setting]]:
    """Every setting of a step: its name, default and :class:`Setting`, in declaration order."""
    for f in fields(StepConfig):
        yield f.name, f.default, f.metadata["setting"]


def setting_of(name: str) -> Setting:
    """The :class:`Setting` called *name* (a field of :class:`StepConfig`)."""
    if name not in _FIELDS:
        raise UnknownNameError("step setting", name, tuple(_FIELDS))
    return _FIELDS[name]
