"""GPU presets: the hardware a step is priced on, every number with its source.

A GPU is a :class:`GPU` record: SMs, memory capacity and bandwidth, the share of that bandwidth a
streaming copy reaches, the dense peak FLOP/s per dtype, a measured large GEMM rate and the
shape of the kernels that reach it (:class:`GemmCurve`), the rate of a fused attention kernel, the
launch cost of a kernel, and the node it usually sits in (GPUs per node, the link between them, the
network per GPU, and what nccl-tests measured on them: α and bus bandwidth inside a node and across
nodes, and NCCL's channels).  Every
number carries its source (:class:`~costmodel.references.Cited`) in ``sources``.

The presets are TOML files in ``costmodel/gpus/presets/``; a user's file has the same format.  They
are data, read with :mod:`tomllib` and the units parser, never evaluated.  Each number is a table
of its value and its source (a key of :mod:`costmodel.references`) with a locator::

    name = "a100-80gb"                  # canonical name: lower case
    title = "NVIDIA A100 SXM4 80GB"
    vendor = "nvidia"                   # nvidia | amd
    form = "sxm"                        # sxm | pcie | oam | workstation
    intra_node_link = "NVLink 3 (NVSwitch)"
    network = "InfiniBand HDR (ConnectX-6), one per GPU"
    notes = ["..."]

    [sms]                               # SMs (NVIDIA) or compute units (AMD)
    value = 108
    source = "nvidia-ampere-whitepaper"
    locator = "the A100 Tensor Core GPU implementation: 108 SMs"

    [memory]                 # capacity, a size: "80 GiB"
    [memory_bandwidth]       # the datasheet peak, a rate: "2039 GB/s"
    [memory_efficiency]      # the share of it a streaming copy reaches, 0 < e <= 1: "1737/2039"
    [launch]                 # the start cost of one kernel, a time: "2555 ns"
    [gpus_per_node]          # a count: 8
    [intra_node_bandwidth]   # per GPU, per direction, a rate: "300 GB/s"
    [network_bandwidth]      # per GPU, per direction, a rate: "200 Gb/s"
    [peak_flops.bf16]        # dense FLOP/s, one table per dtype: "312T", "989.5 TFLOP/s", 312e12
    [gemm.tile]              # value = [256, 128]: the CTA tile (tile_m, tile_n) of the large GEMMs
    [gemm.k_overhead]        # value = 128: K0 (below)
    [gemm.achieved.bf16]     # value = "264.53T" and shape = [8192, 8192, 8192]: a measured large GEMM
    [attention.achieved.bf16]  # optional: a fused attention kernel's FLOP/s, forward and backward
    [memory_kernels.norm]    # optional: the share of memory_bandwidth one kind of memory-bound kernel
                             # reaches, forward and backward (norm, softmax, dropout, activation,
                             # cross_entropy, optimizer); a kind not given moves at memory_efficiency's
    [intra_node_latency]     # optional, with the three below: α of NCCL's all-reduce in a node, "2466 ns"
    [intra_node_busbw]       # its bus bandwidth, "233.2 GB/s"; network_latency and network_busbw: across
    [intra_node_channels]    # optional: NCCL's channels in a node (one SM each), 12; network_channels: 8
    [intra_node_profile]     # optional: value = "a100-nvswitch", a profile (a preset, or a file beside
                             # this one) fitted on nccl-tests in such a node: collectives inside a node
                             # are then priced message by message on its segments

A value may also be written bare (``sms = 108``): its source is then the file itself.  Dtypes are
``fp64 fp32 tf32 bf16 fp16 fp8`` (aliases such as ``bfloat16`` and ``half`` accepted).  Unknown
keys, bad values and a measured GEMM rate above the peak are refused with the file and the line.

**A user file may start from a preset**: ``base = "a100-80gb"`` takes every value of the preset,
and the file overrides what it sets, key by key (one dtype of ``peak_flops`` or ``gemm.achieved``
at a time); the notes add up.  A value the file sets keeps the file's ``source`` when it gives a
key of :mod:`costmodel.references`; otherwise its source is the file itself, with the file's
``source`` text (free text is kept as written) and ``locator`` as the locator.  ``base`` names a
preset, not another file, so inheritance is one level deep.

**The GEMM curve** (:mod:`costmodel.gpus.curve`).  The compute model prices a product
C[m×n] = A[m×k]·B[k×n] as tiles of tile_m × tile_n outputs spread over the SMs:
``tiles = ⌈m/tm⌉·⌈n/tn⌉`` (times a batch count), ``waves = ⌈tiles / SMs⌉``, each tile's time
proportional to ``k + K0``, and the plateau rate chosen so that the curve passes through the measured
``gemm.achieved_flops`` at its shape.  K0
(``k_overhead``) is the tile's prologue (filling the pipeline's stages) and epilogue (writing the
output tile) that do not overlap its main loop, in k-equivalents: a kernel with a k-tile of 64
and 3 stages spends about 64 × (3 − 1) = 128 of k filling its pipeline.  The presets derive K0 so
from the kernel configuration of their architecture (CUTLASS's, cuBLAS's, hipBLASLt's) and say
so in the source; a calibration on the GPU fits it instead.

References
----------
.. [1] zzc0721/torch-performance-test-data, database.md: square torch.mm per GPU and dtype
   (``gemm.achieved``); S. Bekman, Machine Learning Engineering Open Book: the Maximum Achievable
   Matmul FLOPS table (fp8, and GPUs the database lacks), TFLOPS and memory tables.
.. [2] D. Ernst, gpu-benches (RRZE-HPC): gpu-stream, gpu-roofline and gpu-small-kernels results
   (``memory_efficiency``, ``launch``).
.. [3] NVIDIA datasheets and architecture whitepapers (A100, H100, H200, Ada, DGX), AMD's MI300X
   data sheet: peaks, memory, SMs, links.
.. [4] NVIDIA CUTLASS, python/cutlass_library/generator.py; AMD hipBLASLt: the kernel tiles.

Examples
--------
>>> gpu = load_gpu("a100-80gb")
>>> gpu.peak("bfloat16"), gpu.sms, gpu.gemm.tile
(Fraction(312000000000000, 1), 108, (256, 128))
>>> gpu.achieved("bf16") / gpu.peak("bf16")  # 264.53 of 312 TFLOP/s
Fraction(26453, 31200)
>>> load_gpu("a100-80gn")
Traceback (most recent call last):
    ...
costmodel.errors.UnknownNameError: unknown GPU 'a100-80gn'; did you mean 'a100-80gb'?
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from costmodel._json import JSONFields, real
from costmodel._lazy import LazyPattern
from costmodel.errors import InputError, ParseError, UnknownNameError, did_you_mean
from costmodel.gpus.curve import Roofline, TileWaves, compute_bound_rows, gemm_roofline, tile_waves
from costmodel.names import Names, normalise
from costmodel.references import (
    ABCI_BENCHMARK,
    AMD_HIPBLASLT,
    AMD_MI300X,
    AZURE_ND_MI300X,
    BEKMAN_MLE,
    CITATIONS,
    COSTMODEL_H200,
    DAO_2023,
    DGXC_BENCHMARKING,
    ERNST_GPU_BENCHES,
    IBTA_SPEC,
    IEEE_8023AN,
    NCCL,
    NCCL_TESTS_119,
    NCCL_TESTS_307,
    NCCL_TESTS_309,
    NVIDIA_A100,
    NVIDIA_ADA_WP,
    NVIDIA_AMPERE_WP,
    NVIDIA_CUTLASS,
    NVIDIA_DGX_A100,
    NVIDIA_DGX_B200,
    NVIDIA_DGX_H100,
    NVIDIA_DGX_H200,
    NVIDIA_H100,
    NVIDIA_H200,
    NVIDIA_HOPPER_WP,
    PCI_SIG_4,
    SHAH_2024,
    SUPERBENCH,
    TORCH_MATMUL_DATABASE,
    Citation,
    Cited,
)
from costmodel.tomlfile import loads
from costmodel.training.counts import DTYPES, parse_count
from costmodel.units import format_flop_rate
from costmodel.validate import is_whole

_HERE = Path(__file__).parent
"""This package's folder (its data files beside its modules)."""

__all__ = [
    "CITED",
    "FILE_KEY",
    "FLOP_DTYPES",
    "FORMS",
    "GPU",
    "GPU_NAMES",
    "MEMORY_KERNELS",
    "VENDORS",
    "GPUList",
    "GemmCurve",
    "GemmOnGpu",
    "gemm_on_gpu",
    "gpus_query",
    "is_file_source",
    "list_gpus",
    "load_gpu",
    "parse_gemm_shape",
    "parse_gpu",
    "resolve_dtype",
    "source_dict",
]

CITED: tuple[Citation, ...] = (
    NVIDIA_A100, NVIDIA_H100, NVIDIA_AMPERE_WP, NVIDIA_HOPPER_WP, NVIDIA_H200, NVIDIA_ADA_WP, NVIDIA_DGX_A100,
    NVIDIA_DGX_H100, NVIDIA_DGX_H200, NVIDIA_DGX_B200, NVIDIA_CUTLASS, AMD_MI300X, AMD_HIPBLASLT,
    AZURE_ND_MI300X, BEKMAN_MLE, ERNST_GPU_BENCHES, NCCL_TESTS_307, PCI_SIG_4, IEEE_8023AN, IBTA_SPEC,
    TORCH_MATMUL_DATABASE, DAO_2023, SHAH_2024, SUPERBENCH, ABCI_BENCHMARK, NCCL_TESTS_119, NCCL_TESTS_309,
    DGXC_BENCHMARKING, NCCL, COSTMODEL_H200,
)
"""The sources the presets cite (a test checks that each is cited by some preset, and nothing else)."""

FLOP_DTYPES = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")
"""The dtypes a rate is given for, canonical names (those of :data:`costmodel.training.counts.DTYPES`
and ``tf32``, the tensor-core mode of fp32 inputs)."""

VENDORS = ("nvidia", "amd")
FORMS = ("sxm", "pcie", "oam", "workstation")

MEMORY_KERNELS = ("norm", "softmax", "dropout", "activation", "cross_entropy", "optimizer")
"""The kinds of memory-bound kernel a GPU file may give a share of the memory bandwidth for
(``[memory_kernels.KIND]``): layer and RMS norms, softmax, dropout (with a bias and residual add fused),
activations (GeLU, SwiGLU), the fp32 cross entropy over the vocabulary, and the optimizer step; the
step model's operations say which kind each is (:mod:`costmodel.step.ops`), and every other
memory-bound kernel (residual adds, copies, transposes) moves at a streaming copy's share,
``memory_efficiency``."""

_DTYPES = Names("dtype", {d: DTYPES[d].aliases if d in DTYPES else ("tensorfloat32", "tensorfloat-32")
                          for d in FLOP_DTYPES})

_PRESETS = _HERE.joinpath("presets")

GPU_NAMES: tuple[str, ...] = tuple(sorted(e.name.removesuffix(".toml") for e in _PRESETS.iterdir()
                                          if e.name.endswith(".toml")))
"""The names of the shipped presets, sorted (:func:`load_gpu` takes each)."""

_ALIASES = {"h100-sxm5": "h100-sxm", "h200-sxm": "h200", "b200-sxm": "b200", "4090": "rtx-4090",
            "geforce-rtx-4090": "rtx-4090", "a100-sxm4-40gb": "a100-40gb", "a100-sxm4-80gb": "a100-80gb",
            "a100-sxm-40gb": "a100-40gb", "a100-sxm-80gb": "a100-80gb"}
"""Other spellings of preset names (normalised: lower case, ``-`` for ``_`` and spaces)."""

_AMBIGUOUS = {"a100": ("a100-40gb", "a100-80gb"), "h100": ("h100-sxm", "h100-pcie")}
"""Names that fit several presets: refused with the choices."""


def resolve_dtype(name: str) -> str:
    """The canonical name of the dtype *name* (``bfloat16`` → ``bf16``, ``half`` → ``fp16``).

    Raises
    ------
    UnknownNameError
        For a name that is no floating-point dtype, with a did-you-mean.
    InputError
        For an integer dtype (``int8``): its operations are not FLOPs.

    Examples
    --------
    >>> resolve_dtype("BFloat16"), resolve_dtype("half"), resolve_dtype("tf32")
    ('bf16', 'fp16', 'tf32')
    >>> resolve_dtype("bf61")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnknownNameError: unknown dtype 'bf61'; did you mean 'bf16'?
    """
    if not isinstance(name, str):
        raise InputError(f"{name!r} is not a dtype; use one of {', '.join(FLOP_DTYPES)}")
    found = _DTYPES.get(name)
    if found is None and normalise(name) in ("int8", "i8", "int32", "i32"):
        raise InputError(f"{name!r} is an integer dtype: its operations are not FLOPs; use one of "
                         f"{', '.join(FLOP_DTYPES)}")
    return found if found is not None else _DTYPES.resolve(name)


# -- the records ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmCurve(JSONFields):
    """The measured best GEMM rate per dtype and the kernel shape that prices other shapes from it.

    ``achieved_flops`` maps a dtype to the best measured dense large-GEMM FLOP/s (for example the
    "maximum achievable matmul FLOPS"); ``shapes`` the (m, n, k) each was measured at, and
    ``shape`` the one of bf16 (or, without a bf16 measurement, of the first dtype measured).
    ``tile`` is (tile_m, tile_n), the CTA tile of the large GEMM kernels; ``k_overhead`` is K0, the
    tile's prologue and epilogue in k-equivalents (see the module notes).
    """

    achieved_flops: dict[str, Fraction]
    shape: tuple[int, int, int]
    tile: tuple[int, int]
    k_overhead: int
    shapes: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    def shape_for(self, dtype: str) -> tuple[int, int, int]:
        """The (m, n, k) at which the rate of *dtype* was measured.

        Raises :class:`~costmodel.errors.InputError` for a dtype with no measurement.
        """
        name = resolve_dtype(dtype)
        if name not in self.shapes:
            raise InputError(f"{dtype!r} has no measured GEMM; measured: {', '.join(self.shapes)}")
        return self.shapes[name]

    def to_dict(self) -> dict[str, Any]:
        return {
            "achieved_flops_per_s": {d: real(v) for d, v in self.achieved_flops.items()},
            "shape": list(self.shape),
            "shapes": {d: list(s) for d, s in self.shapes.items()},
            "tile": list(self.tile),
            "k_overhead": self.k_overhead,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class GPU(JSONFields):
    """One GPU as the step model prices it: every number in SI units, with its source.

    ``sources`` holds a :class:`~costmodel.references.Cited` for every number, keyed by the field
    (``sms``, ``memory_bytes``, ``memory_bandwidth_bytes_per_s``, ``memory_efficiency``,
    ``launch_s``, ``gpus_per_node``, ``intra_node_bandwidth_bytes_per_s``,
    ``network_bandwidth_bytes_per_s``, ``gemm.tile``, ``gemm.k_overhead``) or by the field and
    the dtype (``peak_flops.bf16``, ``gemm.achieved_flops.bf16``).  ``path`` is the file a user's
    GPU was read from ("" for a preset) and ``base`` the preset it started from.
    """

    name: str
    title: str
    vendor: str
    form: str
    sms: int
    memory_bytes: Fraction
    memory_bandwidth_bytes_per_s: Fraction
    memory_efficiency: Fraction
    peak_flops: dict[str, Fraction]
    gemm: GemmCurve
    launch_s: Fraction
    gpus_per_node: int
    intra_node_link: str
    intra_node_bandwidth_bytes_per_s: Fraction
    network: str
    network_bandwidth_bytes_per_s: Fraction
    sources: dict[str, Cited]
    intra_node_latency_s: Fraction | None = None
    intra_node_busbw_bytes_per_s: Fraction | None = None
    network_latency_s: Fraction | None = None
    network_busbw_bytes_per_s: Fraction | None = None
    intra_node_channels: int | None = None
    network_channels: int | None = None
    intra_node_profile: str | None = None
    attention_flops: dict[str, Fraction] = field(default_factory=dict)
    attention_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    attention_k_overhead: int = 0
    memory_kernels: dict[str, Fraction] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    path: str = ""
    base: str = ""

    def peak(self, dtype: str) -> Fraction:
        """The dense peak FLOP/s of *dtype* (aliases accepted).

        Raises
        ------
        InputError
            For a dtype the GPU has no rate for (an unknown name: :class:`UnknownNameError`).

        Examples
        --------
        >>> load_gpu("h100-sxm").peak("fp8")
        Fraction(1979000000000000, 1)
        >>> load_gpu("a100-40gb").peak("fp8")
        Traceback (most recent call last):
            ...
        costmodel.errors.InputError: 'fp8' has no peak on a100-40gb (NVIDIA A100 SXM4 40GB); it has fp64, ...
        """
        name = resolve_dtype(dtype)
        if name not in self.peak_flops:
            raise InputError(f"{dtype!r} has no peak on {self.name} ({self.title}); it has "
                             f"{', '.join(self.peak_flops)}")
        return self.peak_flops[name]

    def achieved(self, dtype: str) -> Fraction:
        """The best measured dense GEMM FLOP/s of *dtype* (at ``gemm.shape_for(dtype)``).

        Raises
        ------
        InputError
            For a dtype without a measurement (an unknown name: :class:`UnknownNameError`).
        """
        name = resolve_dtype(dtype)
        if name not in self.gemm.achieved_flops:
            raise InputError(f"{dtype!r} has no measured GEMM rate on {self.name}; measured: "
                             f"{', '.join(self.gemm.achieved_flops)} (a GPU file can add "
                             f"[gemm.achieved.{name}])")
        return self.gemm.achieved_flops[name]

    def gemm_efficiency(self, dtype: str) -> Fraction:
        """The measured GEMM rate of *dtype* over its peak (≤ 1)."""
        return self.achieved(dtype) / self.peak(dtype)

    @property
    def achieved_memory_bandwidth_bytes_per_s(self) -> Fraction:
        """The bandwidth a streaming copy reaches: the peak times ``memory_efficiency``."""
        return self.memory_bandwidth_bytes_per_s * self.memory_efficiency

    def kernel_bandwidth(self, kind: str = "") -> Fraction:
        """The bandwidth memory-bound kernels of *kind* (one of :data:`MEMORY_KERNELS`) reach: the peak times
        their share when the GPU gives one, else a streaming copy's."""
        share = self.memory_kernels.get(kind, self.memory_efficiency)
        return self.memory_bandwidth_bytes_per_s * share

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "vendor": self.vendor, "form": self.form,
            "sms": self.sms,
            "memory_bytes": real(self.memory_bytes),
            "memory_bandwidth_bytes_per_s": real(self.memory_bandwidth_bytes_per_s),
            "memory_efficiency": real(self.memory_efficiency),
            "achieved_memory_bandwidth_bytes_per_s": real(self.achieved_memory_bandwidth_bytes_per_s),
            "peak_flops_per_s": {d: real(v) for d, v in self.peak_flops.items()},
            "gemm": {**self.gemm.to_dict(),
                     "efficiency": {d: real(self.gemm_efficiency(d)) for d in self.gemm.achieved_flops}},
            "launch_s": real(self.launch_s),
            "gpus_per_node": self.gpus_per_node,
            "intra_node_link": self.intra_node_link,
            "intra_node_bandwidth_bytes_per_s": real(self.intra_node_bandwidth_bytes_per_s),
            "network": self.network,
            "network_bandwidth_bytes_per_s": real(self.network_bandwidth_bytes_per_s),
            "intra_node_latency_s": _maybe(self.intra_node_latency_s),
            "intra_node_busbw_bytes_per_s": _maybe(self.intra_node_busbw_bytes_per_s),
            "network_latency_s": _maybe(self.network_latency_s),
            "network_busbw_bytes_per_s": _maybe(self.network_busbw_bytes_per_s),
            "intra_node_channels": self.intra_node_channels,
            "network_channels": self.network_channels,
            "intra_node_profile": self.intra_node_profile,
            "attention_flops_per_s": {d: real(v) for d, v in self.attention_flops.items()},
            "attention_shapes": {d: list(v) for d, v in self.attention_shapes.items()},
            "attention_k_overhead": self.attention_k_overhead,
            "memory_kernels": {k: real(v) for k, v in self.memory_kernels.items()},
            "sources": {k: source_dict(c) for k, c in self.sources.items()},
            "notes": list(self.notes),
            "path": self.path,
            "base": self.base,
        }


@dataclass(frozen=True, slots=True)
class GPUList(JSONFields):
    """The shipped presets, as ``costmodel gpus`` lists them."""

    gpus: tuple[GPU, ...]


FILE_KEY = "file"
"""The citation key of a value whose source is the GPU file itself (its path is the citation's title)."""


def _file_citation(path: str) -> Citation:
    return Citation(key=FILE_KEY, authors="local file", title=path, venue="a GPU file given to costmodel",
                    year=0)


def is_file_source(cited: Cited) -> bool:
    """Whether *cited* names the GPU file itself rather than a publication."""
    return cited.citation.key == FILE_KEY


def _maybe(value: Fraction | None) -> float | int | None:
    return None if value is None else real(value)


def source_dict(cited: Cited) -> dict[str, str]:
    """*cited* as JSON: ``{"key", "reference", "locator"}``; a file's reference is its path."""
    if is_file_source(cited):
        return {"key": FILE_KEY, "reference": cited.citation.title, "locator": cited.locator}
    return cited.to_dict()


# -- reading a file -------------------------------------------------------------------------------

_QUANTITIES: dict[str, tuple[str, str]] = {
    "sms": ("sms", "count"),
    "memory": ("memory_bytes", "size"),
    "memory_bandwidth": ("memory_bandwidth_bytes_per_s", "rate"),
    "memory_efficiency": ("memory_efficiency", "share"),
    "launch": ("launch_s", "time"),
    "gpus_per_node": ("gpus_per_node", "count"),
    "intra_node_bandwidth": ("intra_node_bandwidth_bytes_per_s", "rate"),
    "network_bandwidth": ("network_bandwidth_bytes_per_s", "rate"),
    "intra_node_latency": ("intra_node_latency_s", "time"),
    "intra_node_busbw": ("intra_node_busbw_bytes_per_s", "rate"),
    "network_latency": ("network_latency_s", "time"),
    "network_busbw": ("network_busbw_bytes_per_s", "rate"),
    "intra_node_channels": ("intra_node_channels", "count"),
    "network_channels": ("network_channels", "count"),
}
"""Each numeric key of a GPU file: the field it sets and how its value is read."""

_TEXTS = ("name", "title", "vendor", "form", "intra_node_link", "network")
_TOP = (*_TEXTS, "base", "notes", *_QUANTITIES, "intra_node_profile", "peak_flops", "gemm", "attention",
        "memory_kernels")
_GEMM = ("tile", "k_overhead", "achieved")
_ENTRY = ("value", "source", "locator")
_ACHIEVED = ("value", "shape", "source", "locator")
_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]{0,63}")
_FLOPS_UNIT = re.compile(r"\s*(?:flop/s|flops)\s*$", re.IGNORECASE)
_PETA = re.compile(r"(?<=\d)\s*P$")
_HEADER = LazyPattern(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_ASSIGNED = LazyPattern(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*[=.]""")


class _Value(NamedTuple):
    """One value read from a file, its source, and where it was written (for later errors)."""

    value: Any
    source: Cited | None
    path: str
    line: int | None


class _File:
    """The text of one GPU file, for the lines of its keys (indexed when an error first names one)."""

    def __init__(self, content: str, path: str) -> None:
        self.path = path
        self.preset = path.startswith("<preset ")
        self.content = content

    @cached_property
    def lines(self) -> dict[tuple[tuple[str, ...], str | None], int]:
        """The first line of each table header, (table, None), and of each key, (table, key)."""
        lines: dict[tuple[tuple[str, ...], str | None], int] = {}
        table: tuple[str, ...] = ()
        for number, line in enumerate(self.content.removeprefix("\ufeff").splitlines(), start=1):
            header = _HEADER.match(line)
            if header:
                table = tuple(p.strip().strip("\"'") for p in header.group(1).split("."))
                lines.setdefault((table, None), number)
                continue
            key = _ASSIGNED.match(line)
            if key:
                lines.setdefault((table, key.group(1).strip("\"'")), number)
        return lines

    def line(self, *keys: str) -> int | None:
        """The line that sets ``a.b.c`` (*keys*): the key itself, else the first header of a table under it,
        else the same for its parent."""
        for i in range(len(keys) - 1, -1, -1):
            found = self.lines.get((keys[:i], keys[i]))
            if found is None:
                prefix = keys[: i + 1]
                found = min((n for (table, key), n in self.lines.items()
                             if key is None and table[: len(prefix)] == prefix), default=None)
            if found is not None:
                return found
        return None

    def error(self, message: str, *keys: str) -> ParseError:
        return ParseError(message, path=self.path, line=self.line(*keys) if keys else None)


def _unknown(f: _File, keys: Any, known: tuple[str, ...], where: tuple[str, ...]) -> None:
    """Refuse the first of *keys* not in *known*, with a did-you-mean."""
    for key in keys:
        if key not in known:
            table = f"[{'.'.join(where)}]" if where else "the top level"
            hint = did_you_mean(str(key), known)
            tail = f"did you mean {hint!r}?" if hint else f"expected {', '.join(known)}"
            raise f.error(f"unknown key {key!r} in {table}; {tail}", *where, str(key))


def _source(f: _File, table: dict[str, Any], keys: tuple[str, ...]) -> Cited:
    """The source of one value: a citation key with its locator, or the file itself."""
    source, locator = table.get("source"), table.get("locator", "")
    for name, text in (("source", source), ("locator", locator)):
        if text is not None and not isinstance(text, str):
            raise f.error(f"{'.'.join(keys)}.{name} = {text!r} is not text", *keys, name)
    if source in CITATIONS:
        if not locator:
            raise f.error(f"{'.'.join(keys)}: source {source!r} needs a locator (the page, table or "
                          "section the value is on)", *keys, "source")
        return CITATIONS[source].at(locator)
    if f.preset:
        hint = did_you_mean(str(source), CITATIONS) if source else None
        raise f.error(f"{'.'.join(keys)}: source {source!r} is not a key of costmodel.references"
                      + (f"; did you mean {hint!r}?" if hint else ""), *keys, "source")
    if source and re.fullmatch(r"[a-z0-9.+-]+", source):
        hint = did_you_mean(source, CITATIONS)
        if hint:
            raise f.error(f"{'.'.join(keys)}: source {source!r} is not a citation key; did you mean "
                          f"{hint!r}? (text with spaces is kept as written)", *keys, "source")
    said = "; ".join(t for t in (source, locator) if t)
    return _file_citation(f.path).at(said or "set in this file")


def _number(f: _File, value: Any, kind: str, keys: tuple[str, ...]) -> Any:
    """*value* of one numeric key read as *kind* (*keys* locate it; a table's ``value`` is named by its
    table)."""
    from costmodel.exact import parse_number
    from costmodel.units import parse_rate, parse_size, parse_time

    dotted = ".".join(keys).removesuffix(".value")
    if kind == "count":
        if not is_whole(value) or value < 1:
            raise f.error(f"{dotted} = {value!r} is not a whole number >= 1", *keys)
        return value
    if kind in ("rate", "time") and not isinstance(value, str):
        example = "'300 GB/s'" if kind == "rate" else "'2.5 us'"
        raise f.error(f"{dotted} = {value!r} has no unit; write it as a string with its unit, e.g. "
                      f"{example}", *keys)
    if kind == "size" and not (isinstance(value, str) or is_whole(value)):
        raise f.error(f"{dotted} = {value!r} is not a size; write it as a string with its unit, e.g. "
                      "'80 GiB'", *keys)
    try:
        if kind == "size":
            return parse_size(value, allow_zero=False)
        if kind == "rate":
            return parse_rate(value, require_unit=True)
        if kind == "time":
            return parse_time(value, allow_zero=False, require_unit=True)
        if kind == "share":
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise InputError(f"{value!r} is not a number")
            share = parse_number(value, what=dotted)
            if not 0 < share <= 1:
                raise InputError(f"{value!r} is not a share; give 0 < {dotted} <= 1 (0.85 is 85 %)")
            return share
        return _flops(value)
    except InputError as exc:
        raise f.error(f"{dotted}: {exc}", *keys) from None


def _flops(value: Any) -> Fraction:
    """A FLOP/s count: ``312T``, ``989.5 TFLOP/s``, ``2.25P``, ``312e12`` or a number."""
    if isinstance(value, str):
        value = _PETA.sub("e15", _FLOPS_UNIT.sub("", value))
    elif isinstance(value, float):
        value = repr(value)
    return Fraction(parse_count(value))


def _whole_list(f: _File, value: Any, size: int, keys: tuple[str, ...], example: str) -> tuple[int, ...]:
    if (not isinstance(value, list) or len(value) != size
            or not all(is_whole(v) and v >= 1 for v in value)):
        raise f.error(f"{'.'.join(keys).removesuffix('.value')} = {value!r} is not a list of {size} whole "
                      f"numbers >= 1, e.g. {example}", *keys)
    return tuple(value)


def _entry(f: _File, raw: Any, keys: tuple[str, ...], read: Any, *, allowed: tuple[str, ...] = _ENTRY,
           table_only: bool = False) -> tuple[Any, Cited, dict[str, Any], int | None]:
    """One value written bare or as a table of value, source and locator: (value, source, table, line)."""
    if isinstance(raw, dict):
        _unknown(f, raw, allowed, keys)
        if "value" not in raw:
            raise f.error(f"[{'.'.join(keys)}] has no value; add value = ...", *keys)
        return read(raw["value"], (*keys, "value")), _source(f, raw, keys), raw, f.line(*keys, "value")
    if table_only:
        raise f.error(f"{'.'.join(keys)} must be a table with value, shape, source and locator", *keys)
    return read(raw, keys), _source(f, {}, keys), {}, f.line(*keys)


def _dtype_tables(f: _File, data: Any, keys: tuple[str, ...]) -> dict[str, tuple[str, Any]]:
    """The per-dtype tables of *keys* by canonical dtype: (the key as written, its raw value)."""
    if not isinstance(data, dict):
        raise f.error(f"{'.'.join(keys)} must be a table of dtypes: write [{'.'.join(keys)}.bf16]", *keys)
    found: dict[str, tuple[str, Any]] = {}
    for key, raw in data.items():
        try:
            name = resolve_dtype(key)
        except InputError as exc:
            raise f.error(f"{'.'.join(keys)}: {exc}", *keys, key) from None
        if name in found:
            raise f.error(f"{'.'.join(keys)}: {key!r} and {found[name][0]!r} are both {name}; keep one",
                          *keys, key)
        found[name] = (key, raw)
    return found


def _read(data: dict[str, Any], f: _File) -> dict[str, _Value]:
    """Every key a file sets, checked one by one: field (or ``peak_flops.DTYPE``, ...) → value."""
    _unknown(f, data, _TOP, ())
    out: dict[str, _Value] = {}
    for key in _TEXTS:
        if key in data:
            value = data[key]
            if not isinstance(value, str) or not value.strip():
                raise f.error(f"{key} = {value!r} is not a non-empty string", key)
            out[key] = _Value(value.strip(), None, f.path, f.line(key))
    notes = data.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise f.error("notes must be a list of strings", "notes")
    out["notes"] = _Value(tuple(notes), None, f.path, f.line("notes"))
    for key, (name, kind) in _QUANTITIES.items():
        if key in data:
            value, cited, _, line = _entry(f, data[key], (key,),
                                           lambda v, k, kind=kind: _number(f, v, kind, k))
            out[name] = _Value(value, cited, f.path, line)
    for dtype, (key, raw) in _dtype_tables(f, data.get("peak_flops", {}), ("peak_flops",)).items():
        value, cited, _, line = _entry(f, raw, ("peak_flops", key), lambda v, k: _number(f, v, "flops", k))
        out[f"peak_flops.{dtype}"] = _Value(value, cited, f.path, line)
    if "intra_node_profile" in data:
        value, cited, _, line = _entry(f, data["intra_node_profile"], ("intra_node_profile",),
                                       lambda v, k: _profile_ref(f, v, k))
        out["intra_node_profile"] = _Value(value, cited, f.path, line)
    _read_gemm(data, f, out)
    _read_attention(data, f, out)
    _read_memory_kernels(data, f, out)
    return out


def _profile_ref(f: _File, value: Any, keys: tuple[str, ...]) -> str:
    """A profile's name (a shipped one), or its file's path, relative to the GPU file's folder."""
    from costmodel.profiles import preset_names

    where = ".".join(keys).removesuffix(".value")
    if not isinstance(value, str) or not value.strip():
        raise f.error(f"{where} = {value!r} is not a profile's name or file, e.g. \"a100-nvswitch\"", *keys)
    text = value.strip()
    path = Path(text) if f.preset or Path(text).is_absolute() else Path(f.path).parent / text
    if "/" in text or "\\" in text or text.endswith(".toml") or (not f.preset and path.is_file()):
        if not path.is_file():
            raise f.error(f"{where} = {value!r}: no file {path}", *keys)
        from costmodel.profiles import load_profile

        whole = str(path.absolute())  # a path load_profile reads as a file, wherever the step runs
        try:
            load_profile(whole)
        except InputError as exc:  # checked here, where the GPU file names it
            raise f.error(f"{where} = {value!r}: {exc}", *keys) from None
        return whole
    names = preset_names()
    if text not in names:
        hint = did_you_mean(text, names)
        tail = f"did you mean {hint!r}?" if hint else "costmodel profiles lists them"
        raise f.error(f"{where} = {value!r} is not a profile ({tail})", *keys)
    return text


def _read_gemm(data: dict[str, Any], f: _File, out: dict[str, _Value]) -> None:
    """The ``[gemm]`` tables: tile, K0 and the measured rates, each with its shape."""
    gemm = data.get("gemm", {})
    if not isinstance(gemm, dict):
        raise f.error("gemm must be a table: write [gemm.tile], [gemm.k_overhead] and [gemm.achieved.bf16]",
                      "gemm")
    _unknown(f, gemm, _GEMM, ("gemm",))
    if "tile" in gemm:
        value, cited, _, line = _entry(f, gemm["tile"], ("gemm", "tile"),
                                       lambda v, k: _whole_list(f, v, 2, k, "[256, 128]"))
        out["gemm.tile"] = _Value(value, cited, f.path, line)
    if "k_overhead" in gemm:
        def k0(v: Any, k: tuple[str, ...]) -> int:
            if not is_whole(v) or v < 0:
                raise f.error(f"{'.'.join(k).removesuffix('.value')} = {v!r} is not a whole number >= 0 (K0, "
                              "in k-equivalents)", *k)
            return v

        value, cited, _, line = _entry(f, gemm["k_overhead"], ("gemm", "k_overhead"), k0)
        out["gemm.k_overhead"] = _Value(value, cited, f.path, line)
    for dtype, (key, raw) in _dtype_tables(f, gemm.get("achieved", {}), ("gemm", "achieved")).items():
        keys = ("gemm", "achieved", key)
        value, cited, table, line = _entry(f, raw, keys, lambda v, k: _number(f, v, "flops", k),
                                           allowed=_ACHIEVED, table_only=True)
        if "shape" not in table:
            raise f.error(f"[{'.'.join(keys)}] has no shape; add shape = [m, n, k], the GEMM it was measured "
                          "on", *keys)
        shape = _whole_list(f, table["shape"], 3, (*keys, "shape"), "[8192, 8192, 8192]")
        out[f"gemm.achieved_flops.{dtype}"] = _Value((value, shape), cited, f.path, line)


def _read_attention(data: dict[str, Any], f: _File, out: dict[str, _Value]) -> None:
    """The ``[attention.achieved]`` rates of a fused attention kernel, by dtype, each with the causal
    attention it was measured on (``shape = [batch, heads, sequence, head channels]``, optional), and
    ``[attention.k_overhead]``, the keys each query's fixed work is worth (the curve of
    :mod:`costmodel.step.rates`; 0 or absent: one rate at every shape)."""
    attention = _table(data, f, "attention", "a table: write [attention.achieved.bf16]")
    _unknown(f, attention, ("achieved", "k_overhead"), ("attention",))
    if "k_overhead" in attention:
        def keys(v: Any, k: tuple[str, ...]) -> int:
            if not is_whole(v) or not 0 <= v <= 1 << 20:
                raise f.error(f"{'.'.join(k).removesuffix('.value')} = {v!r} is not a whole number of keys "
                              "in [0, 1048576]", *k)
            return v

        value, cited, _, line = _entry(f, attention["k_overhead"], ("attention", "k_overhead"), keys)
        out["attention_k_overhead"] = _Value(value, cited, f.path, line)
    rates = _dtype_tables(f, attention.get("achieved", {}), ("attention", "achieved"))
    for dtype, (key, raw) in rates.items():
        where = ("attention", "achieved", key)
        value, cited, table, line = _entry(f, raw, where, lambda v, k: _number(f, v, "flops", k),
                                           allowed=_ACHIEVED)
        out[f"attention_flops.{dtype}"] = _Value(value, cited, f.path, line)
        shape = None  # a rate without its shape replaces a base's rate and shape both
        if "shape" in table:
            shape = _whole_list(f, table["shape"], 4, (*where, "shape"), "[1, 32, 2048, 128]")
        out[f"attention_shapes.{dtype}"] = _Value(shape, None, f.path, line)


def _read_memory_kernels(data: dict[str, Any], f: _File, out: dict[str, _Value]) -> None:
    """The ``[memory_kernels]`` shares of the memory bandwidth, by kind of kernel."""
    kernels = _table(data, f, "memory_kernels", "a table of kinds: write [memory_kernels.norm]")
    _unknown(f, kernels, MEMORY_KERNELS, ("memory_kernels",))
    _read_entries(f, kernels, out, "memory_kernels", "share", table=("memory_kernels",))


def _table(data: dict[str, Any], f: _File, key: str, what: str) -> dict[str, Any]:
    """The top-level table *key* of a file (empty when absent), refused when it is not one."""
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise f.error(f"{key} must be {what}", key)
    return table


def _read_entries(f: _File, entries: dict[str, Any], out: dict[str, _Value], field: str, kind: str, *,
                  table: tuple[str, ...], written: dict[str, str] | None = None) -> None:
    """Each entry of a table of values (``[field.NAME]``, read as *kind*) into *out* as ``field.NAME``;
    *written* maps a name to its key as the file wrote it (a dtype's alias)."""
    for name, raw in entries.items():
        shown = (written or {}).get(name, name)
        value, cited, _, line = _entry(f, raw, (*table, shown), lambda v, k: _number(f, v, kind, k))
        out[f"{field}.{name}"] = _Value(value, cited, f.path, line)


_MEASURED_LINKS = ("intra_node_latency_s", "intra_node_busbw_bytes_per_s", "network_latency_s",
                   "network_busbw_bytes_per_s", "intra_node_channels", "network_channels",
                   "intra_node_profile")
"""The optional keys: what nccl-tests measured on the GPU's links, NCCL's channel counts and the profile
fitted in a node (a file without them prices a step on links given to it)."""

_REQUIRED = ("name", "vendor", "form", "intra_node_link", "network",
             *(n for n, _ in _QUANTITIES.values() if n not in _MEASURED_LINKS), "gemm.tile",
             "gemm.k_overhead")


def _build(values: dict[str, _Value], *, path: str, base: str) -> GPU:
    """The GPU the (merged) values describe; cross-field checks with the file and line of the culprit."""
    def fail(message: str, key: str) -> ParseError:
        v = values.get(key)
        return ParseError(message, path=v.path if v else path, line=v.line if v else None)

    missing = [k for k in _REQUIRED if k not in values]
    peaks = {k.removeprefix("peak_flops."): v for k, v in values.items() if k.startswith("peak_flops.")}
    achieved = {k.removeprefix("gemm.achieved_flops."): v for k, v in values.items()
                if k.startswith("gemm.achieved_flops.")}
    if not peaks:
        missing.append("peak_flops.DTYPE")
    if not achieved:
        missing.append("gemm.achieved.DTYPE")
    if missing:
        keys = {name: key for key, (name, _) in _QUANTITIES.items()}
        shown = ", ".join(keys.get(k, k).replace("gemm.achieved_flops", "gemm.achieved") for k in missing)
        raise ParseError(f"missing {shown}; a GPU file sets them all, or starts from a preset with "
                         "base = \"NAME\"", path=path)
    name = values["name"].value
    if not _NAME.fullmatch(name):
        raise fail(f"name = {name!r} is not a GPU name; use lower case letters, digits and - . +, "
                   "e.g. \"a100-80gb\"", "name")
    for key, choices in (("vendor", VENDORS), ("form", FORMS)):
        if values[key].value not in choices:
            raise fail(f"{key} = {values[key].value!r} is not one of {', '.join(choices)}", key)
    _check_rates(values, peaks, achieved, path=path, fail=fail)
    order = [d for d in FLOP_DTYPES if d in achieved]
    shapes = {d: achieved[d].value[1] for d in order}
    first = "bf16" if "bf16" in shapes else order[0]
    sources = {k: v.source for k, v in values.items() if v.source is not None}
    return GPU(
        name=name,
        title=values["title"].value if "title" in values else name,
        vendor=values["vendor"].value,
        form=values["form"].value,
        sms=values["sms"].value,
        memory_bytes=values["memory_bytes"].value,
        memory_bandwidth_bytes_per_s=values["memory_bandwidth_bytes_per_s"].value,
        memory_efficiency=values["memory_efficiency"].value,
        peak_flops={d: peaks[d].value for d in FLOP_DTYPES if d in peaks},
        gemm=GemmCurve(achieved_flops={d: achieved[d].value[0] for d in order}, shape=shapes[first],
                       tile=values["gemm.tile"].value, k_overhead=values["gemm.k_overhead"].value,
                       shapes=shapes),
        launch_s=values["launch_s"].value,
        gpus_per_node=values["gpus_per_node"].value,
        intra_node_link=values["intra_node_link"].value,
        intra_node_bandwidth_bytes_per_s=values["intra_node_bandwidth_bytes_per_s"].value,
        network=values["network"].value,
        network_bandwidth_bytes_per_s=values["network_bandwidth_bytes_per_s"].value,
        **{key: values[key].value for key in _MEASURED_LINKS if key in values},
        attention_flops={k.removeprefix("attention_flops."): v.value for k, v in values.items()
                         if k.startswith("attention_flops.")},
        attention_shapes={k.removeprefix("attention_shapes."): v.value for k, v in values.items()
                          if k.startswith("attention_shapes.") and v.value is not None},
        attention_k_overhead=values["attention_k_overhead"].value if "attention_k_overhead" in values else 0,
        memory_kernels={k: values[f"memory_kernels.{k}"].value for k in MEMORY_KERNELS
                        if f"memory_kernels.{k}" in values},
        sources=dict(sorted(sources.items(), key=lambda kv: _source_order(kv[0]))),
        notes=values["notes"].value,
        path="" if path.startswith("<preset ") else path,
        base=base,
    )


def _check_rates(values: dict[str, _Value], peaks: dict[str, _Value], achieved: dict[str, _Value], *,
                 path: str, fail: Callable[[str, str], ParseError]) -> None:
    """Every measured rate has a peak of its dtype and stays under it (the file's own value is blamed)."""
    for dtype, v in achieved.items():
        rate, _ = v.value
        if dtype not in peaks:
            raise fail(f"gemm.achieved.{dtype} has no peak to compare with; add [peak_flops.{dtype}]",
                       f"gemm.achieved_flops.{dtype}")
        if rate > peaks[dtype].value:
            culprit = f"gemm.achieved_flops.{dtype}"  # the one this file set, when it set only one of the two
            if v.path != path and peaks[dtype].path == path:
                culprit = f"peak_flops.{dtype}"
            raise fail(f"gemm.achieved.{dtype} = {format_flop_rate(rate)} is above peak_flops.{dtype} = "
                       f"{format_flop_rate(peaks[dtype].value)}; a measured rate cannot beat the peak: check "
                       "the dtype and the units", culprit)
    for key, v in values.items():
        if key.startswith("attention_flops."):
            dtype = key.removeprefix("attention_flops.")
            if dtype not in peaks or v.value > peaks[dtype].value:
                raise fail(f"attention.achieved.{dtype} has no peak_flops.{dtype} to stay under, or is above "
                           "it",
                           key)


def _source_order(key: str) -> tuple[int, int]:
    """Sources in the order of the fields, dtypes in :data:`FLOP_DTYPES` order."""
    fields = ["sms", "memory_bytes", "memory_bandwidth_bytes_per_s", "memory_efficiency", "peak_flops",
              "gemm.achieved_flops", "gemm.tile", "gemm.k_overhead", "launch_s", "gpus_per_node",
              "intra_node_bandwidth_bytes_per_s", "network_bandwidth_bytes_per_s", "intra_node_latency_s",
              "intra_node_busbw_bytes_per_s", "network_latency_s", "network_busbw_bytes_per_s",
              "intra_node_channels", "network_channels", "intra_node_profile", "attention_flops",
              "attention_k_overhead", "memory_kernels"]
    per_dtype = key.startswith(("peak_flops.", "gemm.achieved", "attention_flops.", "memory_kernels."))
    head, _, dtype = key.rpartition(".") if per_dtype else (key, "", "")
    within = FLOP_DTYPES.index(dtype) if dtype in FLOP_DTYPES else \
        MEMORY_KERNELS.index(dtype) if dtype in MEMORY_KERNELS else 0
    return fields.index(head) if head in fields else len(fields), within


# -- loading --------------------------------------------------------------------------------------


def parse_gpu(content: str, *, path: str) -> GPU:
    """The GPU the text of a GPU file describes (see the module notes for the format).

    *path* names the file in error messages (``<preset NAME>`` for a shipped preset).

    Raises
    ------
    ParseError
        For bad TOML, an unknown key (with a did-you-mean), a bad or missing value, or a measured GEMM
        rate above the peak; the message names the file and the line.
    UnknownNameError
        For a ``base`` that is no preset.

    Examples
    --------
    >>> parse_gpu('base = "h100-sxm"\\nname = "my-h100"\\nlaunch = "4 us"', path="my.toml").launch_s
    Fraction(1, 250000)
    >>> parse_gpu('base = "h100-sxm"\\nlaunch_s = "4 us"', path="my.toml")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: my.toml:2: unknown key 'launch_s' in the top level; did you mean 'launch'?
    """
    f = _File(content, path)
    data = loads(content, path=path, shipped=f.preset)
    base = data.get("base")
    values = _read(data, f)
    if base is None:
        return _build(values, path=path, base="")
    if not isinstance(base, str) or f.preset:
        raise f.error(f"base = {base!r} is not a preset name; use one of {', '.join(GPU_NAMES)}", "base")
    if "/" in base or "\\" in base or base.endswith(".toml"):
        raise f.error(f"base = {base!r} is a file; base names a preset ({', '.join(GPU_NAMES)}): a file "
                      "starts from a preset, not from another file", "base")
    preset = _preset_name(base)
    where, text = f"<preset {preset}>", _preset_text(preset)
    inherited = _read(loads(text, path=where, shipped=True), _File(text, where))
    merged = {**inherited, **values}
    own_link = {"intra_node_latency_s", "intra_node_busbw_bytes_per_s"} & set(values)
    if own_link and "intra_node_profile" not in values:
        merged.pop("intra_node_profile", None)  # the file's own intra-node link replaces the base's fit
    merged["notes"] = _Value(inherited["notes"].value + values["notes"].value, None, path, None)
    if "name" not in values:
        merged["name"] = _Value(normalise(Path(path).stem), None, path, None)
    if "title" not in values:
        merged["title"] = _Value(f"{inherited['title'].value} ({Path(path).name})", None, path, None)
    return _build(merged, path=path, base=preset)


def _preset_name(name: str) -> str:
    key = normalise(name)
    key = _ALIASES.get(key, key)
    if key in _AMBIGUOUS:
        raise InputError(f"{name!r} names several GPUs; choose one of {', '.join(_AMBIGUOUS[key])}")
    if key not in GPU_NAMES:
        raise UnknownNameError("GPU", name, GPU_NAMES)
    return key


def _preset_text(name: str) -> str:
    return _PRESETS.joinpath(f"{name}.toml").read_text(encoding="utf-8")


def load_gpu(name_or_path: str | Path) -> GPU:
    """A preset by name (case-insensitive, common spellings accepted), or a GPU file by path.

    Anything containing a path separator or ending in ``.toml`` (or a :class:`~pathlib.Path`) is a
    file.

    Raises
    ------
    UnknownNameError
        For an unknown preset name, with a did-you-mean.
    InputError
        For a name that fits several presets (``a100``: 40 or 80 GB).
    ParseError
        For an unreadable file or a bad value in it, with its path and line.

    Examples
    --------
    >>> load_gpu("H100_SXM").name, load_gpu("h100-sxm5").title
    ('h100-sxm', 'NVIDIA H100 SXM5 80GB')
    >>> load_gpu("a100")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 'a100' names several GPUs; choose one of a100-40gb, a100-80gb
    """
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or "\\" in text or text.endswith(".toml"):
        from costmodel._files import read_text
        from costmodel.tomlfile import MAX_BYTES

        return parse_gpu(read_text(text, what="the GPU file", limit=MAX_BYTES), path=text)
    if not isinstance(name_or_path, str):
        raise InputError(f"{name_or_path!r} is not a GPU; give a preset's name or a GPU file")
    name = _preset_name(text)
    return parse_gpu(_preset_text(name), path=f"<preset {name}>")


def list_gpus() -> GPUList:
    """Every shipped preset, sorted by name.

    >>> [g.name for g in list_gpus().gpus][:3]
    ['a100-40gb', 'a100-80gb', 'b200']
    """
    return GPUList(tuple(load_gpu(name) for name in GPU_NAMES))


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmOnGpu(JSONFields):
    """One matrix product on one GPU (``costmodel gpus NAME --gemm MxNxK``): its roofline against the
    datasheet peak and memory bandwidth, the fewest rows m at which a product of that n and k is
    compute-bound (``None``: at none), and its waves of the preset's GEMM tiles on the SMs."""

    gpu: str
    title: str
    dtype: str
    element_bytes: int
    peak_flops_per_s: Fraction
    memory_bandwidth_bytes_per_s: Fraction
    roofline: Roofline
    compute_bound_rows: int | None
    waves: TileWaves


_ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
"""Bytes of one element of a matrix in each dtype of :data:`FLOP_DTYPES` (tf32 reads fp32 inputs)."""

_GEMM_SHAPE = LazyPattern(r"\s*(\d+)\s*[x×,]\s*(\d+)\s*[x×,]\s*(\d+)\s*")


def parse_gemm_shape(text: str) -> tuple[int, int, int]:
    """(m, n, k) of a product written ``MxNxK`` (``×`` or ``,`` also separate), each ≥ 1.

    >>> parse_gemm_shape("8192x128x8192")
    (8192, 128, 8192)
    >>> parse_gemm_shape("8192x128")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: gemm='8192x128' is not a product shape; write MxNxK, e.g. 8192x8192x8192 ...
    """
    match = _GEMM_SHAPE.fullmatch(text) if isinstance(text, str) else None
    if match is None or any(int(g) < 1 for g in match.groups()):
        raise InputError(f"gemm={text!r} is not a product shape; write MxNxK, e.g. 8192x8192x8192 "
                         "(C is m × n, the inner dimension k)")
    m, n, k = (int(g) for g in match.groups())
    return m, n, k


def gemm_on_gpu(gpu: str | Path | GPU, gemm: str | tuple[int, int, int], *, dtype: str = "bf16") -> GemmOnGpu:
    """The product *gemm* (``"MxNxK"`` or (m, n, k)) on *gpu* (a preset, a file or a :class:`GPU`) in *dtype*.

    The roofline (:func:`costmodel.gpus.curve.gemm_roofline`) takes the dense peak of *dtype* and the
    datasheet memory bandwidth, with A, B and C of *dtype*; the waves
    (:func:`costmodel.gpus.curve.tile_waves`) the preset's GEMM tile and SMs.

    Raises
    ------
    InputError
        For a shape that is not MxNxK of positive integers, a dtype without a peak on the GPU, an unknown
        GPU (:class:`UnknownNameError`).

    Examples
    --------
    >>> r = gemm_on_gpu("h100-sxm", "8192x128x8192")
    >>> r.roofline.bound, round(float(r.roofline.ridge_flops_per_byte), 1), r.waves.tiles
    ('memory', 295.4, 64)
    """
    g = gpu if isinstance(gpu, GPU) else load_gpu(gpu)
    m, n, k = parse_gemm_shape(gemm) if isinstance(gemm, str) else gemm
    name = resolve_dtype(dtype)
    peak = g.peak(name)
    element = _ELEMENT_BYTES[name]
    roofline = gemm_roofline(m, n, k, peak=peak, bandwidth=g.memory_bandwidth_bytes_per_s, element=element)
    return GemmOnGpu(gpu=g.name, title=g.title, dtype=name, element_bytes=element, peak_flops_per_s=peak,
                     memory_bandwidth_bytes_per_s=g.memory_bandwidth_bytes_per_s, roofline=roofline,
                     compute_bound_rows=compute_bound_rows(n, k, peak=peak, element=element,
                                                           bandwidth=g.memory_bandwidth_bytes_per_s),
                     waves=tile_waves(m, n, sms=g.sms, tile=g.gemm.tile))


def gpus_query(name: str | Path | None = None, *, gemm: str | None = None,
               dtype: str | None = None) -> GPUList | GPU | GemmOnGpu:
    """What ``costmodel gpus`` shows: every preset (no *name*), one GPU, or a product on it (*gemm*).

    Raises
    ------
    InputError
        For *gemm* without a GPU, or *dtype* without *gemm* (the dtype is the product's).
    """
    if gemm is None:
        if dtype is not None:
            raise InputError(f"{dtype!r} is the dtype of a matrix product; give gemm= with dtype= (a GPU "
                             "shows every dtype's peak)")
        return load_gpu(name) if name else list_gpus()
    if not name:
        raise InputError(f"gemm={gemm!r} needs a GPU to run on; name a preset or a GPU file")
    return gemm_on_gpu(name, gemm, dtype="bf16" if dtype is None else dtype)
