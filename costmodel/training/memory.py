"""Memory of data-parallel training: replicated weights, ZeRO model states, transformer activations.

* **Weights.** Data parallelism keeps a full copy of the model on every
  worker: Ψ parameters × bytes per parameter × D workers in total (e.g.
  70B × 4 B × 4 = 1.12 TB).
* **ZeRO model states** (Rajbhandari et al. 2020, section 3 and Figure 1).
  Mixed-precision Adam keeps, per parameter, 2 bytes of fp16 weights, 2 of
  fp16 gradients and K = 12 of optimizer state (an fp32 copy of the weights,
  the momentum and the variance).  Over N_d data-parallel GPUs, stage 1
  partitions the optimizer states, stage 2 also the gradients, stage 3 also
  the weights:

      stage 0: (2 + 2 + K)·Ψ      stage 1: (2 + 2)·Ψ + K·Ψ/N_d
      stage 2: 2Ψ + (2 + K)·Ψ/N_d stage 3: (2 + 2 + K)·Ψ/N_d

* **ZeRO communication per step** (Rajbhandari et al. 2020, section 7.2;
  :data:`ZERO_COLLECTIVES`).  Plain data parallelism all-reduces the
  gradients, a reduce-scatter and an all-gather of Ψ elements each.  Stages
  1 and 2 run the same two halves (reduce-scatter the gradients, all-gather
  the updated weights), so they send as much.  Stage 3 all-gathers the
  weights before the forward and again before the backward, and
  reduce-scatters the gradients: three collectives of Ψ, 1.5 times the
  baseline.  PyTorch FSDP's sharding strategies map onto the stages
  (Zhao et al. 2023, section 3.2: ``FULL_SHARD`` is stage 3,
  ``SHARD_GRAD_OP`` keeps the gathered weights through the backward, stage
  2, and ``NO_SHARD`` is plain data parallelism): :data:`FSDP_STRATEGIES`.

* **Activations per transformer layer** (Korthikanti et al. 2022, Table 2),
  in bytes, for sequence length s, micro-batch b, hidden size h, a attention
  heads and tensor-parallel size t, with 2-byte activations and 1-byte
  dropout masks:

      no parallelism                    sbh(34 + 5as/h)
      tensor parallel                   sbh(10 + 24/t + 5as/(ht))
      tensor + sequence parallel        sbh(34/t + 5as/(ht))
      tensor parallel, selective recompute            sbh(10 + 24/t)
      tensor + sequence parallel, selective recompute sbh(34/t)
      full recompute                    2sbh

References
----------
.. [1] S. Rajbhandari, J. Rasley, O. Ruwase, Y. He, "ZeRO: Memory
   Optimizations Toward Training Trillion Parameter Models", SC20, 2020,
   section 3.1 and Figure 1 (Ψ = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB,
   16.6 GB, 1.9 GB).
.. [2] V. Korthikanti, J. Casper, S. Lym, L. McAfee, M. Andersch, M. Shoeybi,
   B. Catanzaro, "Reducing Activation Recomputation in Large Transformer
   Models", arXiv:2205.05198, 2022 (MLSys 2023), section 4 and Table 2.
.. [3] Rajbhandari et al. 2020, section 1: data parallelism replicates the
   model states on every device.
.. [4] Rajbhandari et al. 2020, section 7.2 (communication of ZeRO-DP: 2Ψ for
   stages 1 and 2, 3Ψ for stage 3); Y. Zhao et al., "PyTorch FSDP", PVLDB
   16(12), 2023, section 3.2 (sharding strategies).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from costmodel._json import JSONFields, real, to_json_dict
from costmodel.errors import InputError, UnknownNameError
from costmodel.references import KORTHIKANTI_2022, RAJBHANDARI_2020, Cited
from costmodel.training._common import positive_int
from costmodel.training.counts import Dtype, parse_count, parse_dtype
from costmodel.validate import is_whole

if TYPE_CHECKING:
    from costmodel.gpus import GPU

__all__ = [
    "CITED",
    "FSDP_STRATEGIES",
    "RECOMPUTE",
    "ZERO_COLLECTIVES",
    "ZERO_STAGES",
    "ActivationMemory",
    "ActivationVariant",
    "MemoryFit",
    "MemoryReport",
    "ModelLayer",
    "ZeroMemory",
    "activation_memory",
    "layer_words",
    "memory_fit",
    "training_memory",
    "zero_memory",
]

CITED = (RAJBHANDARI_2020, KORTHIKANTI_2022)

ZERO_STAGES: dict[int, tuple[str, str]] = {
    0: ("baseline", "no partitioning: every GPU holds all model states"),
    1: ("P_os", "optimizer states partitioned over the data-parallel GPUs"),
    2: ("P_os+g", "optimizer states and gradients partitioned"),
    3: ("P_os+g+p", "optimizer states, gradients and parameters partitioned"),
}
"""ZeRO stage -> (the paper's name, what is partitioned)."""

ZERO_COLLECTIVES: dict[int, tuple[tuple[str, str], ...]] = {
    0: (("allreduce", "all-reduce of the gradients"),),
    1: (("reduce-scatter", "reduce-scatter of the gradients"),
        ("allgather", "all-gather of the updated weights")),
    2: (("reduce-scatter", "reduce-scatter of the gradients"),
        ("allgather", "all-gather of the updated weights")),
    3: (("allgather", "all-gather of the weights before the forward"),
        ("allgather", "all-gather of the weights before the backward"),
        ("reduce-scatter", "reduce-scatter of the gradients")),
}
"""ZeRO stage -> the collectives of one training step over the data-parallel GPUs, each of the
whole model's Ψ elements (Rajbhandari et al. 2020, section 7.2: 2Ψ for stages 0-2, 3Ψ for stage 3).

>>> [len(ZERO_COLLECTIVES[s]) for s in range(4)]
[1, 2, 2, 3]
"""

FSDP_STRATEGIES: dict[str, int] = {"no-shard": 0, "shard-grad-op": 2, "full-shard": 3}
"""PyTorch FSDP's sharding strategy -> the ZeRO stage whose model states it holds during the forward
and backward passes and whose collectives it runs (Zhao et al. 2023, section 3.2: ``FULL_SHARD``
gathers the weights for the forward and again for the backward; ``SHARD_GRAD_OP`` keeps them
gathered from the forward to the end of the backward, and shards them only between steps)."""

RECOMPUTE = ("none", "selective", "full")
"""Activation recomputation choices of Korthikanti et al. 2022."""

_ZERO_SOURCE = RAJBHANDARI_2020.at("section 3.1 and Figure 1")
_ACT_SOURCE = KORTHIKANTI_2022.at("section 4, Table 2")
_REPLICA_SOURCE = RAJBHANDARI_2020.at("section 1: data parallelism replicates the model states on "
                                         "every device")


# -- ZeRO ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ZeroStage(JSONFields):
    """One row of the ZeRO comparison: a stage and its model-state bytes per GPU."""

    stage: int
    name: str
    model_state_bytes_per_gpu: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class ZeroMemory:
    """Model-state memory per GPU under one ZeRO stage (weights, gradients, optimizer states).

    ``params`` is Ψ on one model-parallel rank (Ψ/t with tensor parallelism t).
    """

    stage: int
    gpus: int
    params: Fraction
    tp: int = 1
    weight_bytes_per_param: int
    grad_bytes_per_param: int
    optimizer_bytes_per_param: int
    parameters_bytes_per_gpu: Fraction
    gradients_bytes_per_gpu: Fraction
    optimizer_states_bytes_per_gpu: Fraction
    stages: tuple[ZeroStage, ...]
    source: Cited = _ZERO_SOURCE

    @property
    def name(self) -> str:
        return ZERO_STAGES[self.stage][0]

    @property
    def model_state_bytes_per_gpu(self) -> Fraction:
        return (self.parameters_bytes_per_gpu + self.gradients_bytes_per_gpu
                + self.optimizer_states_bytes_per_gpu)

    @property
    def formula(self) -> str:
        w, g, k = self.weight_bytes_per_param, self.grad_bytes_per_param, self.optimizer_bytes_per_param
        terms = [(w, self.stage >= 3), (g, self.stage >= 2), (k, self.stage >= 1)]
        whole = sum(b for b, split in terms if not split)
        split = sum(b for b, split in terms if split)
        over = "" if self.tp == 1 else "/t"  # what each GPU holds of Ψ before partitioning
        parts = (([f"{whole}Ψ{over}"] if whole else [])
                 + ([f"{split}Ψ/N" if self.tp == 1 else f"{split}Ψ/(t·N)"] if split else []))
        return " + ".join(parts)

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("stage", "name")), "partitioned": ZERO_STAGES[self.stage][1],
                **to_json_dict(self, ("gpus", "params", "tp", "weight_bytes_per_param",
                                      "grad_bytes_per_param", "optimizer_bytes_per_param",
                                      "parameters_bytes_per_gpu", "gradients_bytes_per_gpu",
                                      "optimizer_states_bytes_per_gpu", "model_state_bytes_per_gpu",
                                      "formula", "stages", "source"))}


def _zero_parts(stage: int, psi: Fraction, *, n: int, w: int, g: int, k: int) -> tuple[Fraction, ...]:
    return (w * psi / (n if stage >= 3 else 1), g * psi / (n if stage >= 2 else 1),
            k * psi / (n if stage >= 1 else 1))


def _stage(value: Any) -> int:
    if not is_whole(value) or value not in ZERO_STAGES:
        raise InputError(f"ZeRO stage {value!r} does not exist; use 0 (none), 1 (optimizer states), "
                         "2 (+ gradients) or 3 (+ parameters)")
    return value


def zero_memory(params: Any, *, gpus: int, stage: int, weight_bytes: int = 2, grad_bytes: int = 2,
                optimizer_bytes: int = 12, tp: int = 1) -> ZeroMemory:
    """Model-state bytes per GPU under ZeRO stage 0-3 (mixed-precision Adam by default).

    Parameters
    ----------
    params : int or str
        Ψ, the model's parameter count (``"7.5B"``).
    gpus : int
        N_d, the data-parallel degree over which states are partitioned.
    stage : int
        0 (plain data parallelism), 1, 2 or 3.
    weight_bytes, grad_bytes : int, default 2
        Bytes per parameter of the working weights and the gradients (fp16).
    optimizer_bytes : int, default 12
        K, optimizer-state bytes per parameter: 12 for mixed-precision Adam
        (fp32 weights, momentum and variance).
    tp : int, default 1
        Tensor-parallel size: each GPU's share of the model is Ψ/t.

    Returns
    -------
    ZeroMemory

    Raises
    ------
    InputError
        For a stage other than 0-3, or non-positive counts.

    References
    ----------
    .. [1] Rajbhandari et al., SC20, section 3.1 and Figure 1.

    Examples
    --------
    >>> [zero_memory("7.5B", gpus=64, stage=s).model_state_bytes_per_gpu for s in range(4)]
    [Fraction(120000000000, 1), Fraction(31406250000, 1), Fraction(16640625000, 1), Fraction(1875000000, 1)]
    """
    psi = Fraction(parse_count(params), positive_int(tp, what="tp", hint="give the tensor-parallel size"))
    n = positive_int(gpus, what="gpus", hint="give the data-parallel degree N_d, e.g. gpus=64")
    s = _stage(stage)
    w = positive_int(weight_bytes, what="weight_bytes", hint="bytes per weight, e.g. 2 for fp16")
    g = positive_int(grad_bytes, what="grad_bytes", hint="bytes per gradient, e.g. 2 for fp16")
    k = positive_int(optimizer_bytes, what="optimizer_bytes", hint="K, e.g. 12 for mixed-precision Adam",
                     allow_zero=True)
    parts = _zero_parts(s, psi, n=n, w=w, g=g, k=k)
    stages = tuple(ZeroStage(stage=i, name=ZERO_STAGES[i][0], model_state_bytes_per_gpu=sum(
        _zero_parts(i, psi, n=n, w=w, g=g, k=k), Fraction(0))) for i in ZERO_STAGES)
    return ZeroMemory(stage=s, gpus=n, params=psi, tp=int(tp), weight_bytes_per_param=w,
                      grad_bytes_per_param=g, optimizer_bytes_per_param=k, parameters_bytes_per_gpu=parts[0],
                      gradients_bytes_per_gpu=parts[1], optimizer_states_bytes_per_gpu=parts[2],
                      stages=stages)


# -- activations ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivationVariant(JSONFields):
    """One row of Korthikanti et al.'s Table 2 at the given sizes."""

    name: str
    formula: str
    bytes_per_layer: Fraction
    chosen: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivationMemory:
    """Activation bytes of one transformer layer (and of *layers* layers), Korthikanti et al. 2022."""

    seq: int
    batch: int
    hidden: int
    heads: int
    tp: int
    sequence_parallel: bool
    recompute: str
    bytes_per_layer: Fraction
    formula: str
    layers: int | None
    variants: tuple[ActivationVariant, ...]
    source: Cited = _ACT_SOURCE

    @property
    def bytes_total(self) -> Fraction | None:
        return None if self.layers is None else self.layers * self.bytes_per_layer

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("seq", "batch", "hidden", "heads", "tp", "sequence_parallel", "recompute",
                                   "bytes_per_layer", "formula", "layers", "bytes_total", "variants",
                                   "source"),
                            rename={"bytes_per_layer": "activation_bytes_per_layer",
                                    "bytes_total": "activation_bytes_total"})


def _variants(s: int, b: int, h: int, a: int, t: int) -> list[tuple[str, str, Fraction, tuple[bool, str]]]:
    sbh = Fraction(s * b * h)
    attn = Fraction(5 * a * s, h * t)
    return [
        ("tensor parallel" if t > 1 else "no parallelism",
         "sbh(10 + 24/t + 5as/(ht))" if t > 1 else "sbh(34 + 5as/h)",
         sbh * (10 + Fraction(24, t) + attn), (False, "none")),
        ("tensor + sequence parallel", "sbh(34/t + 5as/(ht))", sbh * (Fraction(34, t) + attn),
         (True, "none")),
        ("tensor parallel, selective recompute" if t > 1 else "selective recompute",
         "sbh(10 + 24/t)" if t > 1 else "34sbh", sbh * (10 + Fraction(24, t)), (False, "selective")),
        ("tensor + sequence parallel, selective recompute", "34sbh/t", sbh * Fraction(34, t),
         (True, "selective")),
        ("full recompute", "2sbh", 2 * sbh, (False, "full")),
    ]


def activation_memory(*, seq: Any, batch: Any, hidden: Any, heads: Any, tp: int = 1,
                      sequence_parallel: bool = False, recompute: str = "none",
                      layers: int | None = None, layer: ModelLayer | None = None) -> ActivationMemory:
    """Activation bytes per transformer layer (Korthikanti et al. 2022, Table 2).

    Parameters
    ----------
    seq, batch, hidden, heads : int or str
        s (sequence length), b (micro-batch size), h (hidden size), a
        (attention heads); counts, so ``"2k"`` is 2000.
    tp : int, default 1
        t, the tensor-parallel size; it must divide the heads.
    sequence_parallel : bool, default False
        Megatron sequence parallelism (splits layer norm and dropout along
        the sequence; t must divide s).
    recompute : {"none", "selective", "full"}
        Activation recomputation.
    layers : int, optional
        Multiply by this many layers (one micro-batch in flight).
    layer : ModelLayer, optional
        A model's own layer (its attention kernels, dropout, key-value groups, gated FFN, experts), of
        sequence *seq* and hidden size *hidden*: each variant is then its count, as
        :func:`costmodel.step.step` counts that layer, not the formulas of a GPT layer with attention
        through memory and dropout that Table 2 gives (which that count reproduces for such a layer).

    Returns
    -------
    ActivationMemory

    Raises
    ------
    InputError
        For non-positive sizes, t not dividing a (or s with sequence
        parallelism), or an unknown *recompute*.

    Notes
    -----
    Activations are 2 bytes (fp16/bf16) and dropout masks 1 byte; the 34
    and 5 of the formulas count those bytes.  Full recomputation stores only
    each layer's input, 2sbh (Table 2 lists it without a sequence-parallel
    split).

    References
    ----------
    .. [1] Korthikanti et al., arXiv:2205.05198, section 4 and Table 2.

    Examples
    --------
    >>> act = activation_memory(seq=2048, batch=1, hidden=12288, heads=96)
    >>> act.bytes_per_layer == 2048 * 1 * 12288 * (34 + 5 * 96 * 2048 // 12288)
    True
    >>> activation_memory(seq=2048, batch=1, hidden=12288, heads=96, tp=8, sequence_parallel=True).formula
    'sbh(34/t + 5as/(ht))'
    """
    s = parse_count(seq)
    b = parse_count(batch)
    h = parse_count(hidden)
    a = parse_count(heads)
    t = positive_int(tp, what="tp", hint="give the tensor-parallel size, e.g. tp=8")
    if a % t:
        raise InputError(f"tp={t} does not divide the {a} attention heads; tensor parallelism splits the "
                         "heads, so t must divide a")
    if sequence_parallel and s % t:
        raise InputError(f"tp={t} does not divide the sequence length {s}; sequence parallelism splits the "
                         "sequence, so t must divide s")
    if recompute not in RECOMPUTE:
        raise UnknownNameError("recompute mode", str(recompute), RECOMPUTE)
    split = sequence_parallel and t > 1  # with t = 1 there is nothing to split
    key = (split and recompute != "full", recompute)
    rows = [row for row in _variants(s, b, h, a, t) if t > 1 or not row[3][0]]
    if layer is not None:  # the model's own layer, as step counts it: its layer input split too under full
        # recomputation with sequence parallelism (Table 2's 2sbh row keeps it whole)
        rows = [(name, layer.words, layer.bytes_of(b, t, k[0] or (k[1] == "full" and split), k[1]), k)
                for name, _, _, k in rows]
    variants = tuple(ActivationVariant(name=name, formula=formula, bytes_per_layer=value, chosen=k == key)
                     for name, formula, value, k in rows)
    chosen = next(v for v in variants if v.chosen)
    if layers is not None:
        layers = positive_int(layers, what="layers", hint="give the number of transformer layers")
    return ActivationMemory(seq=s, batch=b, hidden=h, heads=a, tp=t, sequence_parallel=sequence_parallel,
                            recompute=recompute, bytes_per_layer=chosen.bytes_per_layer,
                            formula=chosen.formula, layers=layers, variants=variants)


@dataclass(frozen=True, slots=True)
class ModelLayer:
    """A model's own layer for :func:`activation_memory`: in a few words (:func:`layer_words`), and its
    stored bytes for (micro-batch, tp, sequence parallel, recompute), as the caller counts them (the command
    line: :func:`costmodel.step.memory.activation_bytes` of the model's shape, the step's own count)."""

    words: str
    bytes_of: Callable[[int, int, bool, str], Fraction]


def layer_words(shape: Any, *, attention: str, dropout: bool) -> str:
    """A model's layer (a transformer shape) in a few words: what its activations depend on beyond s, b,
    h and a."""
    words = [f"{attention} attention", "dropout" if dropout else "no dropout"]
    if shape.groups != shape.heads:
        words.append(f"{shape.groups} kv heads")
    if shape.latent:  # latent attention's widths, as flops heads its count
        query = f" d_c' {shape.q_rank}" if shape.q_rank is not None else ""
        words.append(f"MLA d {shape.head_width} d_r {shape.rope_width} d_v {shape.value_head_width} "
                     f"d_c {shape.kv_rank}{query}")
    elif shape.head_dim is not None and shape.attention_width != shape.hidden:
        words.append(f"heads of {shape.head_dim}")
    if shape.gated:
        words.append("gated FFN")
    if shape.moe:
        words.append(f"{shape.experts} experts top-{shape.top_k}")
    return ", ".join(words)


# -- the combined report --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFit(JSONFields):
    """Whether the memory a report counts per GPU fits one GPU's memory, and by how much it misses.

    ``required_bytes`` is the sum of ``counted`` (what the report holds per GPU: the weights, or the
    ZeRO model states, and the activations); ``excess_bytes`` is what is over the capacity (0 when
    it fits), ``free_bytes`` what is left (0 when it does not).
    """

    gpu: str
    title: str
    capacity_bytes: Fraction
    required_bytes: Fraction
    counted: tuple[str, ...]
    fits: bool
    excess_bytes: Fraction
    free_bytes: Fraction
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryReport:
    """Weights of a data-parallel model, and optionally ZeRO model states and activation memory."""

    params: int | None
    dtype: Dtype
    dp: int
    tp: int
    zero: ZeroMemory | None
    activations: ActivationMemory | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()
    fit: MemoryFit | None = None
    """With a GPU: whether the memory per GPU fits it (:func:`memory_fit`)."""

    @property
    def weights_bytes_per_replica(self) -> int | None:
        return None if self.params is None else self.params * self.dtype.bytes_per_element

    @property
    def weights_partitioned(self) -> bool:
        """ZeRO stage 3: the data-parallel GPUs share one copy of the weights instead of one each."""
        return self.zero is not None and self.zero.stage >= 3

    @property
    def weights_bytes_total(self) -> int | None:
        """Weights held by all GPUs together: dp copies, or one copy under ZeRO-3."""
        per = self.weights_bytes_per_replica
        return None if per is None else per * (1 if self.weights_partitioned else self.dp)

    @property
    def weights_bytes_per_gpu(self) -> Fraction | None:
        """Weights on one GPU: Ψ/t of the model, and a 1/N_d share of that under ZeRO-3.

        Rajbhandari et al. 2020, Figure 1 (P_os+g+p): with the parameters
        partitioned each GPU keeps 2Ψ/N_d bytes of fp16 weights, the first
        term of (2 + 2 + K)Ψ/N_d.
        """
        per = self.weights_bytes_per_replica
        if per is None:
            return None
        return Fraction(per, self.tp * (self.dp if self.weights_partitioned else 1))

    def to_dict(self) -> dict[str, object]:
        def opt(x: Fraction | int | None) -> int | float | None:
            return None if x is None else real(x)

        return {
            "params": self.params,
            "dtype": self.dtype.name,
            "bytes_per_param": self.dtype.bytes_per_element,
            "dp": self.dp,
            "tp": self.tp,
            "weights_bytes_per_replica": opt(self.weights_bytes_per_replica),
            "weights_bytes_per_gpu": opt(self.weights_bytes_per_gpu),
            "weights_bytes_total": opt(self.weights_bytes_total),
            "zero_stage": None if self.zero is None else self.zero.stage,
            "model_state_bytes_per_gpu": None if self.zero is None
            else real(self.zero.model_state_bytes_per_gpu),
            "activation_bytes_per_layer": None if self.activations is None
            else real(self.activations.bytes_per_layer),
            "activation_bytes_total": None if self.activations is None else opt(self.activations.bytes_total),
            "zero": None if self.zero is None else self.zero.to_dict(),
            "activations": None if self.activations is None else self.activations.to_dict(),
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
            "gpu_fit": None if self.fit is None else self.fit.to_dict(),
        }


def memory_fit(report: MemoryReport, gpu: GPU | str) -> MemoryFit:
    """Whether the memory *report* counts per GPU fits the memory of *gpu* (a GPU, a preset or a file).

    The bytes per GPU are the ZeRO model states (which hold the weights) when the report has them,
    else the weights per GPU, plus the activations: of all layers when the report has a layer count,
    else of one layer.  Anything the report does not count (gradients and optimizer states without
    ZeRO, buffers, fragmentation) is not in the sum: the notes say so.

    Examples
    --------
    >>> fit = memory_fit(training_memory("7B", dtype="bf16"), "a100-40gb")
    >>> fit.fits, fit.required_bytes, fit.capacity_bytes - fit.required_bytes == fit.free_bytes
    (True, Fraction(14000000000, 1), True)
    >>> memory_fit(training_memory("7.5B", dp=1, zero=0), "a100-80gb").excess_bytes  # 16 × 7.5e9 − 80 GiB
    Fraction(34100654080, 1)
    """
    from costmodel.gpus import GPU, load_gpu

    device = gpu if isinstance(gpu, GPU) else load_gpu(gpu)
    counted: list[str] = []
    notes: list[str] = []
    required = Fraction(0)
    if report.zero is not None:
        required += report.zero.model_state_bytes_per_gpu
        counted.append(f"ZeRO-{report.zero.stage} model states per GPU")
    elif report.weights_bytes_per_gpu is not None:
        required += report.weights_bytes_per_gpu
        counted.append("weights per GPU")
        notes.append("only the weights are counted: pass zero=0 (or 1-3) for the gradients and the optimizer "
                     "states of mixed-precision Adam too")
    act = report.activations
    if act is not None:
        if act.bytes_total is not None:
            required += act.bytes_total
            counted.append(f"activations of {act.layers} layers")
        else:
            required += act.bytes_per_layer
            counted.append("activations of 1 layer")
            notes.append("the activations of one layer only: pass layers=L for all of them")
    notes.append("buffers, workspaces and allocator fragmentation are not counted; a program can allocate a "
                 "little less than the capacity")
    capacity = device.memory_bytes
    return MemoryFit(gpu=device.name, title=device.title, capacity_bytes=capacity, required_bytes=required,
                     counted=tuple(counted), fits=required <= capacity,
                     excess_bytes=max(required - capacity, Fraction(0)),
                     free_bytes=max(capacity - required, Fraction(0)), notes=tuple(notes))


_ACTIVATION_OPTIONS = ("seq", "batch", "hidden", "heads")


def training_memory(params: Any = None, *, dtype: Any = None, dp: int | None = None, zero: int | None = None,
                    optimizer_bytes: int | None = None, tp: int = 1, seq: Any = None, batch: Any = None,
                    hidden: Any = None, heads: Any = None, sequence_parallel: bool = False,
                    recompute: str | None = None, layers: int | None = None,
                    gpu: GPU | str | None = None, layer: ModelLayer | None = None) -> MemoryReport:
    """Memory of data-parallel training: weights, and optionally ZeRO model states and activations.

    Parameters
    ----------
    params : int or str, optional
        Ψ, the parameter count: ``"70B"`` (B is billion), ``"7.5e9"``.
    dtype : str, optional
        Bytes per weight (and per gradient under ZeRO): fp32 by default,
        fp16 when *zero* is given (ZeRO's mixed precision).
    dp : int, optional
        Data-parallel workers (replicas); ZeRO's N_d.  1 when not given.
    zero : {0, 1, 2, 3}, optional
        Report the model states per GPU under this ZeRO stage; stage 3 also
        partitions the weights, so the weights per GPU become 1/N_d of a
        replica's.
    optimizer_bytes : int, optional
        K, optimizer-state bytes per parameter (12, mixed-precision Adam,
        when not given); only ZeRO's model states use it.
    tp : int, default 1
        Tensor-parallel size: a GPU holds Ψ/t of the weights and model states.
    seq, batch, hidden, heads : optional
        Give all four for the activation memory per layer
        (:func:`activation_memory`); *sequence_parallel*, *recompute* and
        *layers* go with them.
    gpu : GPU or str, optional
        A GPU (a preset's name, a GPU file, or a :class:`~costmodel.gpus.GPU`): the report then says
        whether the memory per GPU fits its memory (:func:`memory_fit`), in ``fit``.
    layer : ModelLayer, optional
        A model's own layer for the activations (:func:`activation_memory`).

    Returns
    -------
    MemoryReport
        Its notes name every option that was given but has no effect on the
        numbers asked for (``--sp`` without the activation sizes, say).

    Raises
    ------
    InputError
        When nothing is asked (neither *params* nor the activation sizes),
        when only some activation sizes are given, or for bad values (checked
        whether or not the option takes effect).

    References
    ----------
    .. [1] Rajbhandari et al. 2020, section 1 (data parallelism replicates the
       model states): 70B × 4 bytes × 4 workers = 1.12 TB.
    .. [2] Rajbhandari et al., SC20, Figure 1: (2 + 2 + K)Ψ/N_d under
       P_os+g+p; Korthikanti et al., arXiv:2205.05198.

    Examples
    --------
    >>> m = training_memory("70B", dtype="fp32", dp=4)
    >>> m.weights_bytes_total  # 70e9 × 4 B × 4 replicas = 1.12 TB
    1120000000000
    >>> training_memory("7.5B", dp=64, zero=1).zero.model_state_bytes_per_gpu  # 31.4 GB in the ZeRO paper
    Fraction(31406250000, 1)
    >>> training_memory("7.5B", dp=64, zero=3).weights_bytes_per_gpu  # 2 B × 7.5e9 / 64
    Fraction(234375000, 1)
    """
    given = _activation_sizes_given(params, zero, seq, batch, hidden, heads)
    psi = None if params is None else parse_count(params)
    replicas = 1 if dp is None else positive_int(
        dp, what="dp", hint="give the number of data-parallel workers, e.g. dp=4")
    t = positive_int(tp, what="tp", hint="give the tensor-parallel size, e.g. tp=8")
    k = 12 if optimizer_bytes is None else positive_int(
        optimizer_bytes, what="optimizer_bytes", allow_zero=True,
        hint="K, optimizer-state bytes per parameter, e.g. 12 for mixed-precision Adam, 0 for plain SGD")
    if recompute is not None and recompute not in RECOMPUTE:
        raise UnknownNameError("recompute mode", str(recompute), RECOMPUTE)
    if layers is not None:
        layers = positive_int(layers, what="layers", hint="give the number of transformer layers")
    kind = parse_dtype(dtype if dtype is not None else ("fp16" if zero is not None else "fp32"))
    z = None
    if zero is not None and psi is not None:
        w = kind.bytes_per_element
        z = zero_memory(psi, gpus=replicas, stage=_stage(zero), weight_bytes=w, grad_bytes=w,
                        optimizer_bytes=k, tp=t)
    notes: list[str] = []
    sources: list[Cited] = []
    if psi is not None:
        notes.append(_weights_note(z, replicas, t))
        sources.append(_REPLICA_SOURCE)
    if z is not None:
        sources.append(z.source)
        notes += _zero_notes(z, kind, dtype_given=dtype is not None, tp=t)
    act = None
    if given:
        act = activation_memory(seq=seq, batch=batch, hidden=hidden, heads=heads, tp=t,
                                sequence_parallel=sequence_parallel, recompute=recompute or "none",
                                layers=layers, layer=layer)
        sources.append(act.source)
        notes.append("activations: 2-byte (fp16/bf16) activations and 1-byte dropout masks, as in "
                     "Korthikanti et al. Table 2; independent of dtype=" if layer is None else
                     f"activations: the model's layer ({layer.words}) as costmodel step counts it, 2-byte "
                     "activations and 1-byte masks (Korthikanti et al. Table 2's formulas are a GPT layer's, "
                     "unfused attention with dropout); independent of dtype=")
        if sequence_parallel and t == 1:
            notes.append("sequence_parallel=True has no effect with tp=1: sequence parallelism splits "
                         "along the tensor-parallel group")
        elif sequence_parallel and recompute == "full":
            notes.append("sequence_parallel=True has no effect with recompute=full: only each layer's "
                         "input, 2sbh, is stored (Korthikanti et al. Table 2)")
    notes += _ignored(params=psi, activations=act is not None, zero=z is not None, dtype=dtype, dp=dp,
                      optimizer_bytes=optimizer_bytes, sequence_parallel=sequence_parallel,
                      recompute=recompute, layers=layers)
    report = MemoryReport(params=psi, dtype=kind, dp=replicas, tp=t, zero=z, activations=act,
                          sources=tuple(sources), notes=tuple(notes))
    if gpu is None:
        return report
    return replace(report, fit=memory_fit(report, gpu))


def _activation_sizes_given(params: Any, zero: Any, *sizes: Any) -> bool:
    """Whether the activation sizes were given (all four); refuses a request with nothing to compute."""
    given = [name for name, v in zip(_ACTIVATION_OPTIONS, sizes, strict=True) if v is not None]
    if zero is not None and params is None:
        raise InputError("zero= needs the parameter count; give params=N, e.g. params=7.5B")
    if params is None and not given:
        raise InputError("nothing to compute; give params=N for the weights (and zero=STAGE for ZeRO), "
                         "or seq=, batch=, hidden= and heads= for the activations")
    if given and len(given) < len(_ACTIVATION_OPTIONS):
        missing = ", ".join(f"{n}=" for n in _ACTIVATION_OPTIONS if n not in given)
        raise InputError(f"activation memory needs seq=, batch=, hidden= and heads=; missing {missing}")
    return bool(given)


def _weights_note(z: ZeroMemory | None, replicas: int, t: int) -> str:
    if z is None or z.stage < 3:
        return "data parallelism: every replica holds the whole model, so weights grow as dp × model"
    share = "(t·N)" if t > 1 else "N"
    return (f"ZeRO-3 partitions the weights too: the {replicas} data-parallel GPUs share one copy, "
            f"{z.weight_bytes_per_param}Ψ/{share} each, the first term of "
            f"({z.weight_bytes_per_param} + {z.grad_bytes_per_param} + K)Ψ/N "
            "(gathered layer by layer when used)")


def _zero_notes(z: ZeroMemory, kind: Dtype, *, dtype_given: bool, tp: int) -> list[str]:
    notes = []
    w = z.weight_bytes_per_param
    if not dtype_given:
        notes.append("ZeRO's mixed-precision Adam: fp16 weights and gradients (2 + 2 bytes per "
                     f"parameter) and K = {z.optimizer_bytes_per_param} bytes of optimizer state; "
                     f"N = {z.gpus}, the data-parallel degree (dp=)")
    elif w != 2:
        notes.append(f"ZeRO's figures assume 2-byte weights and gradients; with {kind.name} they take "
                     f"{w} bytes each, and K = {z.optimizer_bytes_per_param} still counts an fp32 "
                     "master copy (pass optimizer_bytes=8 for plain fp32 Adam: momentum and "
                     "variance only)")
    if z.gpus == 1:
        notes.append("ZeRO over N = 1 GPU partitions nothing: every stage holds the baseline's "
                     "model states; give the data-parallel degree with dp=")
    if tp > 1:
        notes.append(f"tensor parallelism: each GPU holds Ψ/t = Ψ/{tp} of the model before ZeRO partitioning")
    return notes


def _ignored(*, params: int | None, activations: bool, zero: bool, dtype: Any, dp: int | None,
             optimizer_bytes: int | None, sequence_parallel: bool, recompute: str | None,
             layers: int | None) -> list[str]:
    """Notes for the options given that have no effect on what is computed."""
    unused = []
    if params is None:
        unused += [f"{name}= has no effect without params=: the activation memory does not depend on it"
                   for name, value in (("dtype", dtype), ("dp", dp)) if value is not None]
    if optimizer_bytes is not None and not zero:
        unused.append("optimizer_bytes= has no effect without zero=: only ZeRO's model states count the "
                      "optimizer state")
    if not activations:
        unused += [f"{name} has no effect without the activation sizes seq=, batch=, hidden= and heads="
                   for name, value in (("sequence_parallel=True", sequence_parallel or None),
                                       ("recompute=", recompute), ("layers=", layers)) if value is not None]
    return unused
