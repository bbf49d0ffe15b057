"""Measure what one GPU achieves on matrix products, memory and launches, and fit its GEMM curve.

The core of ``costmodel calibrate compute``: it measures, on the machine it runs on, the constants the
step model's rates layer (:mod:`costmodel.step.rates`) prices compute with, and writes them as a GPU
file (a *compute profile*, the format of :mod:`costmodel.gpus`) that ``costmodel step --gpu-profile
FILE`` loads.  It needs PyTorch; the fit (:func:`fit_gemm`) does not.

What is measured
----------------
* **Matrix products**: ``torch.mm`` (``torch.bmm`` for a batch) of random matrices in the dtype asked
  (``bf16`` by default on a GPU; ``fp32`` on a CPU, which is what CPUs run fast), over the products of
  a transformer layer (QKV, output projection, FFN in and out, the logits, each with its input and
  weight gradients, and the batched attention products of unfused attention: the shapes
  :func:`costmodel.step.ops.layer_ops` lists; the command line turns its shape options into them) and
  two sweeps (:func:`sweep_shapes`): square products, and a fixed m = n with k from small to large
  (the small-k fall-off K0 describes).  The weight products keep the layouts of ``nn.Linear``
  (forward ``x·Wᵀ``, input gradient ``dY·W``, weight gradient ``dYᵀ·x``).  Each shape: two untimed
  calls, one call timed to size a sample, then ``repeats`` samples of back-to-back calls lasting at
  least ``target`` each (CUDA events around them on a GPU; ``time.perf_counter`` on a CPU, whose calls
  block); the time is the **median** sample over its calls, as the maximum-achievable-matmul-FLOPS
  finder times its shapes [1]_.
* **Memory bandwidth**: ``out.copy_(x)`` of float32 buffers far larger than the caches (1 GiB on a
  GPU, 256 MiB on a CPU; a quarter with ``quick``), bytes read plus written over the median time: one
  load and one store stream, the kernel the presets' ``memory_efficiency`` comes from [2]_.
* **Launch**: ``x.add_(1)`` on a one-element tensor, 1000 calls back to back (200 with ``quick``), the
  median time per call: the start of a kernel as an eager PyTorch program sees it (the host's dispatch
  where it is slower than the GPU's start).
* **Memory-bound kernels by kind** (:data:`KERNELS`): the forward and backward of ``F.layer_norm``,
  ``F.softmax`` (rows of 2048), ``F.dropout``, ``F.gelu`` (in the dtype measured), ``F.cross_entropy``
  over fp32 logits, and one ``torch.optim.Adam`` step over fp32 parameters (fused on a GPU), each on
  64 Mi elements on a GPU (4 Mi on a CPU; a quarter with ``quick``): the bytes their kernels read and
  write (counted below, per element) over the median time, as a share of the datasheet bandwidth
  (``memory_kernels``).  The step model then moves each kind's bytes at its own share (a
  streaming copy's for any other kernel): dropout's random numbers, a norm's or a softmax's
  reductions and an optimizer's several streams rarely reach a copy's bandwidth.

Before anything is timed a GPU runs its largest product for a second (0.2 s with ``quick``),
so that its clocks have settled.  The products run in order of priority (squares, the k sweep, then
the transformer's); ``limit_s`` stops the run between two shapes, and Ctrl-C stops it at once: either
way what was measured is kept and fitted (:attr:`ComputeMeasurements.stopped` says which).

The fit
-------
The rates layer prices a product m×n×k (a batch of b) with the GEMM curve of
:mod:`costmodel.gpus.curve` (waves of tm × tn tiles over ``sms`` SMs, K0, split-k, the memory term and
the launch; NVIDIA's GEMM guide [3]_), the same functions this fit uses,
and solves the plateau P so that the curve passes through the GPU's ``gemm.achieved`` rate at its
shape: that is what the file records, so P is not free.  :func:`fit_gemm` therefore takes the fastest
measured unbatched product as ``gemm.achieved`` (its rate and shape), and for every K0 on the grid 0,
1, ..., :data:`K0_MAX` the plateau that passes through it (a closed form, capped at the peak as the
rates layer caps it), prices every measured shape with the memory term and the launch measured, and
keeps the K0 with the least sum of squared relative errors (ties: the smaller K0).  The errors it
reports are those of the curve ``step`` will use.  Shapes of one k alone cannot tell K0 apart: the
fit needs at least two values of k.

On a CPU
--------
A CPU is no preset, so none is guessed: ``base`` must name the preset the file starts from, and the
file is a dry run of the method, not a model of that GPU.  The fit treats the CPU as a *pseudo-GPU*:
one "SM" per thread torch computes with and a 1 × 1 tile (no tile or wave quantization: a CPU BLAS
blocks for its caches, not for a grid of SMs), so that only the plateau and K0 shape the curve; the
file writes that geometry (``sms``, ``gemm.tile``) over the preset's, so that ``step`` prices with the
curve that was fitted.  ``memory_efficiency`` is the CPU's copy bandwidth over the preset's datasheet
bandwidth, so that their product, what ``step`` prices memory-bound kernels with, is the CPU's.  The
preset's other numbers (memory, links, the peaks, other dtypes' GEMM rates) stay the GPU's.

References
----------
.. [1] S. Bekman, Machine Learning Engineering Open Book, compute/accelerator/benchmarks/
   mamf-finder.py: warm-ups, then the mean or median of many timed matmuls per shape.
.. [2] D. Ernst, gpu-benches (RRZE-HPC): gpu-stream's scale kernel (one load, one store stream) and
   gpu-small-kernels (many queued tiny kernels: the start cost of one).
.. [3] NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001), sections 2.3, 3.1, 3.2:
   tiles, tile quantization, wave quantization.

Examples
--------
Three products timed on a GPU of 4 SMs running 256 × 256 tiles (m, n, k, batch, seconds):

>>> rows = [(1024, 1024, 1024, 1, 2.5e-5), (1024, 1024, 256, 1, 8e-6), (2048, 2048, 2048, 1, 1.8e-4)]
>>> fit = fit_gemm(rows, sms=4, tile=(256, 256))
>>> fit.k_overhead, fit.achieved_shape, f"{fit.median_rel_error:.2%}"
(135, (2048, 2048, 2048), '0.75%')
>>> guess_base("NVIDIA H100 80GB HBM3"), guess_base("NVIDIA A100-SXM4-40GB"), guess_base("NVIDIA L4")
('h100-sxm', 'a100-40gb', None)
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, MeasuredFields, real
from costmodel.errors import CalibrationError, InputError, MissingDependency
from costmodel.gpus.curve import orientations, product_time
from costmodel.validate import is_whole

__all__ = [
    "ATTENTION_KERNELS",
    "COMPUTE_DTYPES",
    "CPU_TILE",
    "K0_MAX",
    "KERNELS",
    "LAYOUTS",
    "AttentionMeasurement",
    "AttentionShape",
    "ComputeCalibration",
    "ComputeConfig",
    "ComputeInterrupted",
    "ComputeMeasurements",
    "ComputeProgress",
    "FitRow",
    "GemmFit",
    "GemmMeasurement",
    "GemmShape",
    "KernelMeasurement",
    "calibrate_compute",
    "choose_base",
    "compute_calibration",
    "compute_device",
    "curve_sequence",
    "fit_attention",
    "fit_gemm",
    "guess_base",
    "measure_compute",
    "sweep_shapes",
]

COMPUTE_DTYPES = ("bf16", "fp16", "fp32", "tf32")
"""The dtypes ``torch.mm`` is measured in (``tf32``: fp32 inputs on the tensor cores of NVIDIA GPUs)."""

LAYOUTS = ("nn", "nt", "tn")
"""How the operands of a product are stored: ``nt`` is ``A·Bᵀ`` with B stored n×k (``nn.Linear``'s
forward), ``tn`` is ``Aᵀ·B`` with A stored k×m (its weight gradient), ``nn`` both as multiplied."""

K0_MAX = 2048
"""The largest K0 the fit tries (the presets derive 64 to 320)."""

CPU_TILE = (1, 1)
"""The tile of the CPU pseudo-GPU: no tile or wave quantization (see the module notes)."""

SOURCE = "costmodel calibrate compute"
"""The ``source`` text of every value a compute profile sets (the file itself is the source)."""

_ELEMENT = {"bf16": 2, "fp16": 2, "fp32": 4, "tf32": 4}
"""Bytes of an element of each dtype's matrices (the rates layer's, for these dtypes)."""

KERNELS: dict[str, tuple[str, Callable[[int], int]]] = {
    "norm": ("F.layer_norm forward (x read, y written) and backward: the input gradient (dy and x read, dx "
             "written) and the weight gradients (dy and x read again), two kernels", lambda e: 7 * e),
    "softmax": ("F.softmax over rows forward (x read, y written) and backward: dy·y in a kernel of its own "
                "(two read, one written), then that product and y read, dx written", lambda e: 8 * e),
    "dropout": ("F.dropout forward (x read, y and a one-byte mask written) and backward (dy and the mask "
                "read, dx written)", lambda e: 4 * e + 2),
    "activation": ("F.gelu forward (x read, y written) and backward (x and dy read, dx written)",
                   lambda e: 5 * e),
    "cross_entropy": ("F.cross_entropy over fp32 logits: log-softmax forward (read, written), the loss's "
                      "dense gradient written, log-softmax backward (two read, one written)", lambda e: 24),
    "optimizer": ("torch.optim.Adam step over fp32 parameters: parameter, gradient and both moments read, "
                  "parameter and moments written", lambda e: 28),
}
"""What ``calibrate compute`` runs for each kind of memory-bound kernel
(:data:`costmodel.gpus.MEMORY_KERNELS`) and the bytes it counts per element for the element size e of the
dtype measured: what the kernels PyTorch launches for the call move, kernel by kernel
(``benchmarks/gpu_kernels.py`` lists them; PyTorch 2.11 on an H200: ``vectorized_layer_norm_kernel``,
``layer_norm_grad_input_kernel_vectorized`` and ``GammaBetaBackwardCUDAKernelTemplate`` for a norm;
``softmax_warp_forward``, an elementwise product and ``cunn_SoftMaxBackwardSmem`` for a softmax over rows
of 2048), so that a kind's share is the bandwidth its kernels reach; the step model then moves each
operation's own bytes (:mod:`costmodel.step.ops`) at that share."""

_DEVICE = re.compile(r"auto|cpu|cuda(?::(\d{1,3}))?")
_NAME = re.compile(r"[a-z0-9][a-z0-9.+-]{0,63}")
_MIN_ROWS = 3
_MAX_CALLS = 1000
_INSTALL_HINT = ("calibrate compute needs PyTorch: pip install 'costmodel-collectives[calibrate]' "
                 "(on a CPU the CPU-only build of torch is enough; docs/calibration.md gives the command)")


# -- shapes ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmShape(JSONFields):
    """One matrix product to measure: C[m×n] = A[m×k]·B[k×n], *batch* of them, operands in *layout*.

    *label* says where it comes from (``"FFN in wgrad"``, ``"square"``, ``"k sweep"``).

    >>> GemmShape(m=4, n=8, k=2, label="x").flops
    128
    """

    m: int
    n: int
    k: int
    batch: int = 1
    layout: str = "nn"
    label: str = ""

    def __post_init__(self) -> None:
        for name in ("m", "n", "k", "batch"):
            value = getattr(self, name)
            if not is_whole(value) or not 1 <= value <= 1 << 24:
                raise InputError(f"{name}={value!r} is not a whole number in [1, 16777216]; a product "
                                 "m×n×k needs positive sizes")
        if self.layout not in LAYOUTS:
            raise InputError(f"layout {self.layout!r} is not one of {', '.join(LAYOUTS)}")

    @property
    def flops(self) -> int:
        """2·m·n·k·batch: a multiply-add is two FLOPs."""
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def key(self) -> tuple[int, int, int, int, str]:
        return (self.m, self.n, self.k, self.batch, self.layout)


def sweep_shapes(*, gpu: bool, quick: bool = False) -> tuple[GemmShape, ...]:
    """The sweeps measured besides a model's products: squares, then k at fixed m = n.

    On a GPU the squares go from 1024 to 16384 and the k sweep runs m = n = 8192 (2048 tiles of 256 ×
    128: every SM busy) from k = 64 to 4096; on a CPU they stay small (128 to 1024; m = n = 512, k from
    16), so that a CPU run takes seconds.  *quick* keeps a few of each.

    >>> [(s.m, s.k) for s in sweep_shapes(gpu=False, quick=True)]
    [(512, 512), (256, 256), (128, 128), (512, 32), (512, 128)]
    """
    squares: tuple[int, ...]
    ks: tuple[int, ...]
    if gpu:
        squares = (16384, 8192, 4096, 2048, 1024) if not quick else (8192, 2048)
        mn, ks = 8192, (64, 128, 256, 512, 1024, 2048, 4096) if not quick else (128, 512, 2048)
    else:
        squares = (1024, 512, 256, 128) if not quick else (512, 256, 128)
        mn, ks = 512, (16, 32, 64, 128, 256, 1024) if not quick else (32, 128)
    return (*(GemmShape(m=s, n=s, k=s, label="square") for s in squares),
            *(GemmShape(m=mn, n=mn, k=k, label="k sweep") for k in ks))


def _unique(shapes: Iterable[GemmShape]) -> tuple[GemmShape, ...]:
    """*shapes* without repeats (same sizes and layout), the first label kept."""
    seen: dict[tuple[int, int, int, int, str], GemmShape] = {}
    for s in shapes:
        seen.setdefault(s.key, s)
    return tuple(seen.values())


ATTENTION_KERNELS = ("flash", "cudnn")
"""The fused attention kernels ``F.scaled_dot_product_attention`` is held to on a GPU: FlashAttention-2
(PyTorch's own build, what its SDPA picks first) or cuDNN's fused attention (what Transformer Engine, and
so Megatron-Core, runs on Hopper).  On a CPU, PyTorch's own choice."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionShape(JSONFields):
    """The fused attention of one layer on one tensor-parallel rank, to measure: *batch* sequences of *seq*
    tokens, *heads* query heads over *kv_heads* key-value heads of *head_dim* channels, causal.  *flops*
    is what the step model counts for its forward and backward together (the two products of its
    forward over the causal pairs, 2.5 times as many backward: :func:`costmodel.step.ops.layer_ops`),
    so that the rate measured is the rate the step model prices it at.

    >>> AttentionShape(batch=1, heads=2, kv_heads=1, seq=4, head_dim=8, flops=320).label
    'attention'
    """

    batch: int
    heads: int
    kv_heads: int
    seq: int
    head_dim: int
    flops: int
    label: str = "attention"

    def __post_init__(self) -> None:
        for name in ("batch", "heads", "kv_heads", "seq", "head_dim", "flops"):
            value = getattr(self, name)
            if not is_whole(value) or value < 1:
                raise InputError(f"{name}={value!r} is not a whole number >= 1")
        if self.heads % self.kv_heads:
            raise InputError(f"kv_heads={self.kv_heads} does not divide heads={self.heads}")
        if self.batch * self.heads * self.seq * self.head_dim > 1 << 31:
            raise InputError(f"an attention of {self.batch}×{self.heads}×{self.seq}×{self.head_dim} "
                             "elements is too large to measure; give a shorter sequence or a smaller batch")

    @property
    def keys(self) -> Fraction:
        """The keys a query meets on average: the causal pairs s²/2 over the sequence, s/2 (the step
        model's count, :func:`costmodel.step.flops.attention_pairs`)."""
        return Fraction(self.seq, 2)

    def stretched(self, seq: int) -> AttentionShape:
        """The same attention over *seq* tokens, its FLOPs scaled with the causal pairs (as s²)."""
        flops = Fraction(self.flops) * Fraction(seq, self.seq) ** 2
        return replace(self, seq=seq, flops=round(flops), label=f"attention at s {seq}")

    def text(self) -> str:
        """``1×32×2048×128`` (batch × heads × sequence × head channels), ``, 8 KV heads`` with GQA."""
        groups = f", {self.kv_heads} KV heads" if self.kv_heads != self.heads else ""
        return f"{self.batch}×{self.heads}×{self.seq}×{self.head_dim}{groups}"


# -- the model and the fit ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FitRow(MeasuredFields):
    """One measured product against the fitted curve; *bound* is ``math`` or ``memory`` (the larger term)."""

    m: int
    n: int
    k: int
    batch: int
    time_s: float
    model_time_s: float
    flops_per_s: float
    model_flops_per_s: float
    rel_error: float
    bound: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmFit(MeasuredFields):
    """K0 and the plateau fitted to measured products, and each product against the curve.

    ``achieved_flops_per_s`` at ``achieved_shape`` is the fastest unbatched product measured (row
    ``achieved_row`` of ``rows``, from 0): what a GPU file records as ``gemm.achieved``;
    ``plateau_flops_per_s`` is P, the curve through it with ``k_overhead`` (K0), capped at the peak
    (``capped``).  ``rel_error`` of a row is model/measured − 1;
    ``median_rel_error`` the median of their absolute values.
    """

    sms: int
    tile: tuple[int, int]
    k_overhead: int
    plateau_flops_per_s: Fraction
    achieved_flops_per_s: Fraction
    achieved_shape: tuple[int, int, int]
    achieved_row: int
    peak_flops_per_s: Fraction | None
    capped: bool
    bandwidth_bytes_per_s: Fraction | None
    launch_s: Fraction
    element_bytes: int
    median_rel_error: float
    rows: tuple[FitRow, ...]
    warnings: tuple[str, ...] = ()


def _rows(rows: Iterable[Any]) -> list[tuple[int, int, int, int, Fraction]]:
    """The rows checked: (m, n, k, batch, seconds) each, seconds as an exact Fraction."""
    checked = []
    for i, row in enumerate(rows, 1):
        if isinstance(row, str | bytes) or not isinstance(row, Sequence) or len(row) != 5:
            raise InputError(f"row {i}: {row!r} is not (m, n, k, batch, seconds)")
        *sizes, seconds = row
        for name, value in zip(("m", "n", "k", "batch"), sizes, strict=True):
            if not is_whole(value) or value < 1:
                raise InputError(f"row {i}: {name}={value!r} is not a whole number >= 1")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float | Fraction) \
                or not math.isfinite(seconds) or seconds <= 0:
            raise InputError(f"row {i}: seconds={seconds!r} is not a positive finite time")
        checked.append((*sizes, Fraction(seconds)))
    return checked


def _check_machine(*, sms: Any, tile: Any, peak: Any, bandwidth: Any, launch: Any, element: Any
                   ) -> tuple[int, int]:
    """The tile as a tuple, once every constant of the machine is checked."""
    if not is_whole(sms) or sms < 1:
        raise InputError(f"sms={sms!r} is not a whole number >= 1")
    if (not isinstance(tile, tuple | list) or len(tile) != 2
            or not all(is_whole(t) and t >= 1 for t in tile)):
        raise InputError(f"tile={tile!r} is not two whole numbers >= 1, e.g. (256, 128)")
    for name, value in (("peak", peak), ("bandwidth", bandwidth)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float | Fraction)
                                  or not value > 0 or not math.isfinite(value)):
            raise InputError(f"{name}={value!r} is not a positive finite rate")
    if (isinstance(launch, bool) or not isinstance(launch, int | float | Fraction) or not launch >= 0
            or not math.isfinite(launch)):
        raise InputError(f"launch={launch!r} is not a time >= 0 in seconds")
    if not is_whole(element) or element < 1:
        raise InputError(f"element={element!r} is not a whole number of bytes >= 1")
    return (tile[0], tile[1])


def fit_gemm(rows: Iterable[Sequence[Any]], *, sms: int, tile: tuple[int, int],
             peak: Fraction | float | None = None, bandwidth: Fraction | float | None = None,
             launch: Fraction | float = 0, element: int = 2) -> GemmFit:
    """Fit K0 and the plateau P of the GEMM curve to measured products (see the module notes).

    Parameters
    ----------
    rows : iterable of (m, n, k, batch, seconds)
        Measured products: sizes as whole numbers ≥ 1, the time of one in seconds.
    sms : int
        Streaming multiprocessors (a CPU pseudo-GPU: its threads).
    tile : (int, int)
        The kernels' tile (tile_m, tile_n).
    peak : FLOP/s, optional
        The dtype's peak: the plateau is capped there, as the rates layer caps it.
    bandwidth : bytes/s, optional
        The achieved memory bandwidth of the memory term (None: no memory term).
    launch : seconds
        Added to every product.
    element : int
        Bytes of an element of A, B and C (the memory term's).

    Returns
    -------
    GemmFit
        K0 (``k_overhead``), the plateau, the fastest unbatched product (``gemm.achieved``) and every
        row priced by the curve, in the order given.

    Raises
    ------
    InputError
        For a row that is not five positive numbers (sizes whole), fewer than 3 rows, rows of a single
        k (K0 cannot be told apart), no unbatched row, or a bad *sms*, *tile*, *peak*, *bandwidth*,
        *launch* or *element*.

    Notes
    -----
    For each K0 in 0..:data:`K0_MAX` the plateau is the one through the fastest unbatched row (math
    term alone, as :meth:`costmodel.step.rates.Rates.of` solves it); the K0 kept minimises
    Σ (model/measured − 1)².  Rows generated by the model with launch 0 are recovered exactly.

    References
    ----------
    .. [1] NVIDIA, Matrix Multiplication Background User's Guide, sections 3.1 and 3.2.

    Examples
    --------
    >>> P, K0 = 100e12, 128
    >>> shapes = [(4096, 4096, k, 1) for k in (256, 1024, 4096)]
    >>> rows = [(*s, float(product_time(*s, sms=8, tile=(256, 128), plateau=P, k_overhead=K0)))
    ...         for s in shapes]
    >>> f = fit_gemm(rows, sms=8, tile=(256, 128))
    >>> f.k_overhead, round(float(f.plateau_flops_per_s) / 1e12, 9), f.median_rel_error < 1e-12
    (128, 100.0, True)
    """
    import numpy as np

    checked = _rows(rows)
    tile = _check_machine(sms=sms, tile=tile, peak=peak, bandwidth=bandwidth, launch=launch, element=element)
    if len(checked) < _MIN_ROWS:
        raise InputError(f"{len(checked)} row{'s' if len(checked) != 1 else ''} cannot fit K0 and the "
                         f"plateau; measure at least {_MIN_ROWS} products, of two values of k or more")
    if len({r[2] for r in checked}) < 2:
        raise InputError(f"every row has k={checked[0][2]}: K0 (the cost of a tile beyond its k) cannot "
                         "be told apart from the plateau; measure products of two values of k or more")
    single = [i for i, r in enumerate(checked) if r[3] == 1]
    if not single:
        raise InputError("no row has batch=1: the file's gemm.achieved is one product m×n×k; measure "
                         "an unbatched product too")
    best = max(single, key=lambda i: (Fraction(2 * checked[i][0] * checked[i][1] * checked[i][2])
                                      / checked[i][4], -i))

    grid = np.arange(K0_MAX + 1, dtype=float)
    times = np.array([float(r[4]) for r in checked])
    work = np.array([np.min([c * (float(kk) + grid) for c, kk in orientations(*r[:4], sms=sms, tile=tile)],
                            axis=0)
                     for r in checked])  # rows × grid: the math time at a plateau of 1 FLOP/s
    plateau = work[best] / times[best]
    if peak is not None:
        plateau = np.minimum(plateau, float(peak))
    model = work / plateau
    if bandwidth is not None:
        moved = np.array([r[3] * element * (r[0] * r[2] + r[2] * r[1] + r[0] * r[1]) for r in checked])
        model = np.maximum(model, (moved / float(bandwidth))[:, None])
    model = model + float(launch)
    errors = ((model / times[:, None] - 1) ** 2).sum(axis=0)
    k0 = int(np.argmin(errors))

    m, n, k, _, t = checked[best]
    exact_work = min(c * (kk + k0) for c, kk in orientations(m, n, k, 1, sms=sms, tile=tile))
    through = exact_work / t
    capped = peak is not None and through > Fraction(peak)
    chosen = Fraction(peak) if peak is not None and capped else through
    fitted = []
    for m_, n_, k_, b_, t_ in checked:
        model_s = product_time(m_, n_, k_, b_, sms=sms, tile=tile, plateau=chosen, k_overhead=k0,
                                  bandwidth=bandwidth, launch=launch, element=element)
        math_s = product_time(m_, n_, k_, b_, sms=sms, tile=tile, plateau=chosen, k_overhead=k0)
        flops = 2 * m_ * n_ * k_ * b_
        fitted.append(FitRow(m=m_, n=n_, k=k_, batch=b_, time_s=float(t_), model_time_s=float(model_s),
                             flops_per_s=float(flops / t_), model_flops_per_s=float(flops / model_s),
                             rel_error=float(model_s / t_ - 1),
                             bound="math" if math_s + Fraction(launch) >= model_s else "memory"))
    median = statistics.median(abs(r.rel_error) for r in fitted)
    warnings = []
    if k0 == K0_MAX:
        warnings.append(f"K0 is at the end of the grid ({K0_MAX}): the small-k products run slower "
                        "than the model's fall-off allows; check them")
    if capped:
        warnings.append("the curve through the fastest product would run above the peak; the plateau is "
                        "capped at the peak")
    if median > 0.1:
        warnings.append(f"the median |error| is {median:.1%}: the curve describes these products "
                        "poorly; look at the rows far off")
    return GemmFit(sms=sms, tile=tile, k_overhead=k0, plateau_flops_per_s=chosen,
                   achieved_flops_per_s=Fraction(2 * m * n * k) / t, achieved_shape=(m, n, k),
                   achieved_row=best, peak_flops_per_s=None if peak is None else Fraction(peak),
                   capped=capped,
                   bandwidth_bytes_per_s=None if bandwidth is None else Fraction(bandwidth),
                   launch_s=Fraction(launch), element_bytes=element, median_rel_error=median,
                   rows=tuple(fitted), warnings=tuple(warnings))


# -- the base preset ---------------------------------------------------------------------------------


_GUESSES: tuple[tuple[str, str | None], ...] = (
    (r"h200", "h200"),
    (r"h100.*(pcie)", "h100-pcie"),
    (r"h100.*(nvl)", None),
    (r"h100.*(sxm|hbm3)", "h100-sxm"),
    (r"a100.*(pcie)", None),
    (r"a100.*40\s*gb", "a100-40gb"),
    (r"a100.*80\s*gb", "a100-80gb"),
    (r"b200", "b200"),
    (r"mi300x", "mi300x"),
    (r"rtx\s*4090", "rtx-4090"),
)
"""Device names (as ``torch.cuda.get_device_name`` prints them, lower case) and their preset; None: a
GPU with no preset (the A100 PCIe, the H100 NVL)."""


def guess_base(device_name: str) -> str | None:
    """The preset a GPU of this name is, or None when no preset fits.

    >>> guess_base("NVIDIA H200"), guess_base("NVIDIA H100 PCIe"), guess_base("NVIDIA A100 80GB PCIe")
    ('h200', 'h100-pcie', None)
    """
    text = device_name.lower()
    for pattern, preset in _GUESSES:
        if re.search(pattern, text):
            return preset
    return None


def choose_base(device: str, device_name: str, base: str | None = None, *, ask: str = "base=PRESET") -> str:
    """The preset a compute profile of *device* (``cpu`` or ``cuda:N``, named *device_name*) starts
    from: *base* when given, else the preset the GPU's name matches.  *ask* is how a message asks for
    a base (the command line's option there).

    Raises
    ------
    InputError
        On a CPU without *base* (a CPU is no preset), or for a GPU whose name matches no preset.

    Examples
    --------
    >>> choose_base("cuda:0", "NVIDIA H200"), choose_base("cpu", "AMD EPYC", "a100-80gb")
    ('h200', 'a100-80gb')
    """
    from costmodel.gpus import GPU_NAMES

    if base is not None:
        return base
    if device == "cpu":
        raise InputError(f"on a CPU there is no GPU to start from; pass {ask} ({', '.join(GPU_NAMES)}): "
                         "the CPU's measurements then stand in for that GPU's compute, a dry run of the "
                         "method")
    guessed = guess_base(device_name)
    if guessed is None:
        raise InputError(f"no preset is a {device_name!r}; pass the closest as {ask} "
                         f"({', '.join(GPU_NAMES)}): the file takes the GPU's other numbers (memory, links, "
                         "peaks) from it")
    return guessed


def compute_device(device: str = "auto") -> tuple[str, str]:
    """(the device, its name) that *device* (``auto``, ``cpu``, ``cuda`` or ``cuda:N``) names here:
    ``("cuda:0", "NVIDIA H200")``, ``("cpu", "AMD EPYC 7763")``.

    Raises
    ------
    MissingDependency
        Without PyTorch.
    InputError
        For a device this process does not see.
    """
    ComputeConfig(device=device)  # checks the spelling
    torch = _import_torch()
    found = _resolve_device(torch, device.strip().lower())
    return str(found), _device_name(torch, found)


def _base_preset(base: str) -> Any:
    from costmodel.gpus import GPU_NAMES, load_gpu

    if not isinstance(base, str) or "/" in base or "\\" in base or base.endswith(".toml"):
        raise InputError(f"base {base!r} is not a preset; a compute profile starts from a preset "
                         f"({', '.join(GPU_NAMES)})")
    return load_gpu(base)


# -- measuring ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeConfig:
    """What :func:`measure_compute` measures and for how long.

    Attributes
    ----------
    device : str
        ``auto`` (the first CUDA device when one is visible, else the CPU), ``cpu``, ``cuda`` or
        ``cuda:N``.
    dtype : str or None
        One of :data:`COMPUTE_DTYPES` (aliases accepted); None: bf16 on a GPU, fp32 on a CPU.
    shapes : tuple of GemmShape, or a function of one bool
        A model's products (the transformer's), or a function giving them for a GPU (True) or a CPU
        (False); :func:`sweep_shapes` are measured too.
    quick : bool
        Fewer sweep shapes, samples and bytes: a run of seconds, for CI.
    limit_s : float
        Seconds the measurement may take; it stops between two shapes after that.
    attention : AttentionShape, a function of one bool giving one, or None
        The model's fused attention, timed forward and backward (None: not measured).
    attention_kernel : str
        One of :data:`ATTENTION_KERNELS`: the kernel the attention is held to on a GPU.
    """

    device: str = "auto"
    dtype: str | None = None
    shapes: tuple[GemmShape, ...] | Callable[[bool], tuple[GemmShape, ...]] = ()
    quick: bool = False
    limit_s: float = 120.0
    attention: AttentionShape | Callable[[bool], AttentionShape] | None = None
    attention_kernel: str = "flash"

    def __post_init__(self) -> None:
        if not isinstance(self.device, str) or not _DEVICE.fullmatch(self.device.strip().lower()):
            raise InputError(f"device {self.device!r} is not a device; use auto, cpu, cuda or cuda:N")
        object.__setattr__(self, "device", self.device.strip().lower())
        if self.dtype is not None:
            object.__setattr__(self, "dtype", _compute_dtype(self.dtype))
        if not callable(self.shapes) and (not isinstance(self.shapes, tuple)
                                          or not all(isinstance(s, GemmShape) for s in self.shapes)):
            raise InputError(f"shapes={self.shapes!r} is not a tuple of GemmShape, or a function of the "
                             "device (True: a GPU) giving one")
        if (isinstance(self.limit_s, bool) or not isinstance(self.limit_s, int | float | Fraction)
                or not 0 < self.limit_s < math.inf):
            raise InputError(f"limit_s={self.limit_s!r} is not a positive number of seconds; give e.g. 120")
        object.__setattr__(self, "limit_s", float(self.limit_s))
        if self.attention is not None and not callable(self.attention) \
                and not isinstance(self.attention, AttentionShape):
            raise InputError(f"attention={self.attention!r} is not an AttentionShape, or a function of the "
                             "device giving one")
        if self.attention_kernel not in ATTENTION_KERNELS:
            raise InputError(f"attention_kernel={self.attention_kernel!r} is not one of "
                             f"{', '.join(ATTENTION_KERNELS)}")


def _compute_dtype(name: str) -> str:
    from costmodel.gpus import resolve_dtype

    dtype = resolve_dtype(name)
    if dtype not in COMPUTE_DTYPES:
        raise InputError(f"dtype {name!r} is not measured: torch.mm has no {dtype} product to time; "
                         f"choose one of {', '.join(COMPUTE_DTYPES)}")
    return dtype


@dataclass(frozen=True, slots=True, kw_only=True)
class _Timed(MeasuredFields):
    """Work of a *shape* that counts its FLOPs, timed: the median ``time_s`` of ``samples`` samples of
    ``calls`` back-to-back calls."""

    shape: Any
    time_s: float
    calls: int
    samples: int

    @property
    def flops_per_s(self) -> float:
        return float(self.shape.flops / self.time_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class GemmMeasurement(_Timed):
    """One product timed (its ``shape``, a :class:`GemmShape`)."""

    shape: GemmShape

    @property
    def row(self) -> tuple[int, int, int, int, float]:
        """(m, n, k, batch, seconds): a row of :func:`fit_gemm`."""
        s = self.shape
        return (s.m, s.n, s.k, s.batch, self.time_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class KernelMeasurement(MeasuredFields):
    """One kind of memory-bound kernel timed (:data:`KERNELS`): its forward and backward on a tensor of
    *shape* (*dtype*), the bytes they read and write as counted, and the median seconds of both."""

    kind: str
    shape: tuple[int, ...]
    dtype: str
    bytes: int
    time_s: float
    calls: int
    samples: int

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bytes / self.time_s


@dataclass(frozen=True, slots=True, kw_only=True)
class AttentionMeasurement(_Timed):
    """The fused attention timed: ``F.scaled_dot_product_attention`` (causal) forward and backward on
    *shape* (an :class:`AttentionShape`) with *kernel* (``flash`` or ``cudnn`` on a GPU, ``cpu`` for
    PyTorch's choice on a CPU)."""

    shape: AttentionShape
    kernel: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeProgress:
    """Reported before each measurement: the ``index``-th of ``total``, and what it is."""

    index: int
    total: int
    label: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeMeasurements(MeasuredFields):
    """What :func:`measure_compute` measured, on which device, when, with which software.

    ``device`` is ``cpu`` or ``cuda:N``; ``device_name`` its name (the CPU's model);
    ``threads`` the threads torch computes with on a CPU (None on a GPU); ``accelerator`` the CUDA
    (``CUDA 12.4``) or ROCm version of torch's build (None on a CPU build).  ``copy_bytes`` is the
    bytes one copy moves (read plus written), ``copy_s`` its median time, ``launch_s`` the median time
    of a tiny kernel; None when the run stopped before them.  ``stopped`` is None, ``limit`` or
    ``interrupted``; ``planned`` the products the run meant to measure; ``kernels`` the memory-bound
    kernels timed, by kind; ``attention`` the fused attention (None when none was asked for, or it was
    skipped: ``skipped`` says why) and ``attention_curve`` the same at a second sequence
    (:func:`curve_sequence`), which the attention curve's K is solved from.
    """

    device: str
    device_name: str
    dtype: str
    threads: int | None
    torch_version: str
    accelerator: str | None
    measured_at: str
    gemms: tuple[GemmMeasurement, ...]
    copy_bytes: int | None
    copy_s: float | None
    launch_s: float | None
    launch_calls: int
    planned: int
    elapsed_s: float
    limit_s: float
    stopped: str | None = None
    skipped: tuple[str, ...] = ()
    kernels: tuple[KernelMeasurement, ...] = ()
    attention: AttentionMeasurement | None = None
    attention_curve: AttentionMeasurement | None = None

    @property
    def gpu(self) -> bool:
        return self.device != "cpu"

    @property
    def bandwidth_bytes_per_s(self) -> float | None:
        """Bytes read and written by the copy over its time."""
        return None if self.copy_s is None or self.copy_bytes is None else self.copy_bytes / self.copy_s

    def software(self) -> str:
        """``torch 2.5.1, CUDA 12.4`` (a CPU build: ``torch 2.5.1+cpu``)."""
        return f"torch {self.torch_version}" + (f", {self.accelerator}" if self.accelerator else "")

    def where(self) -> str:
        """The device and when: ``NVIDIA H200 (cuda:0), 2025-06-01T12:00:00Z, torch 2.5.1, CUDA 12.4``."""
        threads = f", {self.threads} threads" if self.threads else ""
        return f"{self.device_name} ({self.device}{threads}), {self.measured_at}, {self.software()}"


class ComputeInterrupted(KeyboardInterrupt):
    """Ctrl-C before enough was measured to fit: ``kept`` products of ``planned``."""

    def __init__(self, kept: int, planned: int) -> None:
        super().__init__(kept, planned)
        self.kept, self.planned = kept, planned

    def __str__(self) -> str:
        return (f"interrupted; {self.kept} of {self.planned} products measured, too few to fit "
                "(nothing written)")


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependency(_INSTALL_HINT) from None
    return torch


def _resolve_device(torch: Any, requested: str) -> Any:
    """The torch.device *requested* names, checked against the devices this process sees."""
    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = 0 if requested in ("auto", "cuda") else int(requested.partition(":")[2])
    if count == 0:
        raise InputError(f"device {requested!r}: no CUDA device is visible to this process (torch "
                         f"{torch.__version__}, CUDA {torch.version.cuda}); use device cpu, or check "
                         "CUDA_VISIBLE_DEVICES and the driver")
    if index >= count:
        raise InputError(f"device {requested!r}: this process sees {count} CUDA device"
                         f"{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})")
    return torch.device("cuda", index)


def _cpu_name() -> str:
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _device_name(torch: Any, device: Any) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else _cpu_name()


class _Bench:
    """Times callables on one device: CUDA events on a GPU, ``perf_counter`` on a CPU."""

    def __init__(self, torch: Any, device: Any, quick: bool) -> None:
        self.torch, self.device, self.gpu = torch, device, device.type == "cuda"
        self.repeats = (7 if quick else 20) if self.gpu else (3 if quick else 7)
        self.target_s = 0.002 if self.gpu else 0.005

    def sync(self) -> None:
        if self.gpu:
            self.torch.cuda.synchronize(self.device)

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        """Seconds per call of *calls* calls back to back."""
        if self.gpu:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / calls
        begin = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - begin) / calls

    def median(self, fn: Callable[[], Any], *, calls: int | None = None) -> tuple[float, int, int]:
        """(median seconds per call, calls per sample, samples): 2 warm-up calls, 1 to size a sample."""
        for _ in range(2):
            fn()
        self.sync()
        if calls is None:
            first = self.per_call(fn, 1)
            calls = max(1, min(_MAX_CALLS, math.ceil(self.target_s / max(first, 1e-9))))
        samples = [self.per_call(fn, calls) for _ in range(self.repeats)]
        return statistics.median(samples), calls, len(samples)


def _operands(torch: Any, shape: GemmShape, dtype: Any, device: Any) -> Callable[[], Any]:
    """The product of *shape* as a call writing into a preallocated output."""
    m, n, k, b = shape.m, shape.n, shape.k, shape.batch
    rand = lambda *size: torch.randn(*size, dtype=dtype, device=device)
    if b > 1:
        a, w = rand(b, m, k), rand(b, k, n)
        out = torch.empty(b, m, n, dtype=dtype, device=device)
        return lambda: torch.bmm(a, w, out=out)
    a = rand(m, k) if shape.layout != "tn" else rand(k, m).t()
    w = rand(k, n) if shape.layout != "nt" else rand(n, k).t()
    out = torch.empty(m, n, dtype=dtype, device=device)
    return lambda: torch.mm(a, w, out=out)


_TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "tf32": "float32"}


def measure_compute(config: ComputeConfig, *, progress: Callable[[ComputeProgress], None] | None = None
                    ) -> ComputeMeasurements:
    """Measure products, a streaming copy and a tiny kernel on one device (see the module notes).

    Raises
    ------
    MissingDependency
        Without PyTorch.
    InputError
        For a device this process does not see, or tf32 on a CPU.
    """
    torch = _import_torch()
    device = _resolve_device(torch, config.device)
    gpu = device.type == "cuda"
    dtype = config.dtype or ("bf16" if gpu else "fp32")
    if dtype == "tf32" and not gpu:
        raise InputError("dtype 'tf32' is a mode of NVIDIA tensor cores; on a CPU measure fp32")
    if gpu:
        torch.cuda.set_device(device)
    model = config.shapes(gpu) if callable(config.shapes) else config.shapes
    if not isinstance(model, tuple) or not all(isinstance(x, GemmShape) for x in model):
        raise InputError(f"shapes gave {model!r}, not a tuple of GemmShape")
    shapes = _unique((*sweep_shapes(gpu=gpu, quick=config.quick), *model))
    attention = config.attention(gpu) if callable(config.attention) else config.attention
    if attention is not None and not isinstance(attention, AttentionShape):
        raise InputError(f"attention gave {attention!r}, not an AttentionShape")
    config = replace(config, attention=attention)
    allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    try:
        return _measure(torch, device, dtype, shapes, config, progress=progress)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow_tf32


def _measure(torch: Any, device: Any, dtype: str, shapes: tuple[GemmShape, ...], config: ComputeConfig, *,
             progress: Callable[[ComputeProgress], None] | None) -> ComputeMeasurements:
    gpu = device.type == "cuda"
    bench = _Bench(torch, device, config.quick)
    started = time.monotonic()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    launch_calls = 200 if config.quick else 1000
    copy_bytes = 2 * ((1 << 30 if gpu else 1 << 28) >> (2 if config.quick else 0))
    found: dict[str, Any] = {"gemms": [], "skipped": [], "copy_s": None, "launch_s": None, "stopped": None,
                             "kernels": [], "attention": None, "attention_curve": None}
    attention = config.attention
    assert attention is None or isinstance(attention, AttentionShape)
    first = 2 + len(KERNELS) + 2 * (attention is not None)

    def report(index: int, label: str) -> None:
        if progress is not None:
            progress(ComputeProgress(index=index, total=len(shapes) + first, label=label))

    try:
        report(0, "kernel launch")
        found["launch_s"] = _launch_time(torch, bench, launch_calls)
        report(1, "memory copy")
        found["copy_s"] = _copy_time(torch, bench, copy_bytes // 2)
        for i, kind in enumerate(KERNELS, 2):
            report(i, f"{kind.replace('_', ' ')} kernels")
            kernel = _kernel_time(torch, bench, kind, dtype, quick=config.quick)
            found["skipped" if isinstance(kernel, str) else "kernels"].append(kernel)
        if gpu:  # settle the clocks on the largest product before any is timed
            _busy(torch, bench, max(shapes, key=lambda s: s.flops), dtype, 0.2 if config.quick else 1.0)
        if attention is not None:
            longer = attention.stretched(curve_sequence(attention.seq))
            for i, (what, fused_shape) in enumerate((("attention", attention), ("attention_curve", longer)),
                                                    first - 2):
                report(i, fused_shape.label)
                fused = _attention_time(torch, bench, fused_shape, dtype, config.attention_kernel)
                if isinstance(fused, str):
                    found["skipped"].append(fused)
                else:
                    found[what] = fused
        for i, shape in enumerate(shapes, first):
            if time.monotonic() - started > config.limit_s:
                found["stopped"] = "limit"
                break
            report(i, shape.label or f"{shape.m}×{shape.n}×{shape.k}")
            timed = _gemm_time(torch, bench, shape, dtype)
            if isinstance(timed, str):
                found["skipped"].append(timed)
            else:
                found["gemms"].append(timed)
    except KeyboardInterrupt:
        found["stopped"] = "interrupted"
    accelerator = (f"CUDA {torch.version.cuda}" if torch.version.cuda
                   else f"ROCm {torch.version.hip}" if getattr(torch.version, "hip", None) else None)
    return ComputeMeasurements(
        device=str(device), device_name=_device_name(torch, device), dtype=dtype,
        threads=None if gpu else torch.get_num_threads(), torch_version=torch.__version__,
        accelerator=accelerator, measured_at=when, gemms=tuple(found["gemms"]),
        copy_bytes=None if found["copy_s"] is None else copy_bytes, copy_s=found["copy_s"],
        launch_s=found["launch_s"], launch_calls=launch_calls, planned=len(shapes),
        elapsed_s=time.monotonic() - started, limit_s=config.limit_s, stopped=found["stopped"],
        skipped=tuple(found["skipped"]), kernels=tuple(found["kernels"]), attention=found["attention"],
        attention_curve=found["attention_curve"])


def _launch_time(torch: Any, bench: _Bench, calls: int) -> float:
    """Seconds per call of ``x.add_(1)`` on one element, *calls* back to back."""
    tiny = torch.zeros(1, device=bench.device)
    return bench.median(lambda: tiny.add_(1), calls=calls)[0]


def _copy_time(torch: Any, bench: _Bench, size: int) -> float:
    """Seconds of ``out.copy_(x)`` of *size* bytes of float32."""
    src = torch.ones(size // 4, dtype=torch.float32, device=bench.device)
    dst = torch.empty_like(src)
    return bench.median(lambda: dst.copy_(src))[0]


def _kernel_shape(kind: str, dtype: str, *, gpu: bool, quick: bool) -> tuple[tuple[int, ...], str]:
    """The tensor *kind* (:data:`KERNELS`) is timed on and its dtype: the parameters of an optimizer step,
    fp32 logits of 16 rows' width for a cross entropy, else rows of *dtype*."""
    elements = (1 << 26 if gpu else 1 << 22) >> (2 if quick else 0)
    row = 2048 if gpu else 512
    if kind == "optimizer":
        return (elements,), "fp32"
    if kind == "cross_entropy":
        return (elements // (row * 16), row * 16), "fp32"
    return (elements // row, row), dtype


def _kernel_call(torch: Any, kind: str, shape: tuple[int, ...], dtype: str, device: Any, *, gpu: bool
                 ) -> Callable[[], Any]:
    """One forward and backward of *kind* (:data:`KERNELS`) on a tensor of *shape*, as a call."""
    import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

    if kind == "optimizer":
        p = torch.nn.Parameter(torch.randn(*shape, dtype=torch.float32, device=device))
        p.grad = torch.randn_like(p)
        try:  # fused on a GPU where this torch has it (a ROCm or older build may not), else multi-tensor
            adam = torch.optim.Adam([p], lr=1e-6, **({"fused": True} if gpu else {"foreach": True}))
            adam.step()
        except (RuntimeError, TypeError, ValueError):
            adam = torch.optim.Adam([p], lr=1e-6, foreach=True)
        return adam.step
    x = torch.randn(*shape, dtype=getattr(torch, _TORCH_DTYPES[dtype]), device=device, requires_grad=True)
    if kind == "cross_entropy":
        target = torch.randint(0, shape[1], (shape[0],), device=device)
        return lambda: torch.autograd.grad(F.cross_entropy(x, target), x)
    dy = torch.randn_like(x)
    row = shape[1]
    if kind == "norm":
        w = torch.ones(row, dtype=x.dtype, device=device, requires_grad=True)
        b = torch.zeros(row, dtype=x.dtype, device=device, requires_grad=True)
        return lambda: torch.autograd.grad(F.layer_norm(x, (row,), w, b), (x, w, b), dy)
    forward = {"softmax": lambda: F.softmax(x, dim=-1), "dropout": lambda: F.dropout(x, 0.1, training=True),
               "activation": lambda: F.gelu(x)}[kind]
    return lambda: torch.autograd.grad(forward(), x, dy)


def _kernel_time(torch: Any, bench: _Bench, kind: str, dtype: str, *, quick: bool) -> KernelMeasurement | str:
    """*kind*'s forward and backward timed (:data:`KERNELS`), or why it was skipped (out of GPU memory)."""
    shape, measured = _kernel_shape(kind, dtype, gpu=bench.gpu, quick=quick)
    timed = _timed(torch, bench, lambda: _kernel_call(torch, kind, shape, measured, bench.device,
                                                      gpu=bench.gpu), f"{kind} kernels")
    if isinstance(timed, str):
        return timed
    seconds, calls, samples = timed
    return KernelMeasurement(kind=kind, shape=shape, dtype=measured, time_s=seconds, calls=calls,
                             samples=samples, bytes=math.prod(shape) * KERNELS[kind][1](_ELEMENT[measured]))


def _timed(torch: Any, bench: _Bench, make: Callable[[], Callable[[], Any]], what: str
           ) -> tuple[float, int, int] | str:
    """The median of the call *make* builds (:meth:`_Bench.median`), or that *what* was skipped when the
    GPU's memory ran out; the operands are gone with the call, and their memory is given back before the
    next measurement either way."""
    try:
        return bench.median(make())
    except torch.cuda.OutOfMemoryError:
        return f"{what} skipped: out of GPU memory"
    finally:
        if bench.gpu:
            torch.cuda.empty_cache()


def _busy(torch: Any, bench: _Bench, shape: GemmShape, dtype: str, seconds: float) -> None:
    """Run *shape* for *seconds*, untimed."""
    fn = _operands(torch, shape, getattr(torch, _TORCH_DTYPES[dtype]), bench.device)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        fn()
        bench.sync()


def _gemm_time(torch: Any, bench: _Bench, shape: GemmShape, dtype: str) -> GemmMeasurement | str:
    """*shape* timed, or why it was skipped (out of GPU memory)."""
    timed = _timed(torch, bench,
                   lambda: _operands(torch, shape, getattr(torch, _TORCH_DTYPES[dtype]), bench.device),
                   f"{shape.m}×{shape.n}×{shape.k} (batch {shape.batch})")
    if isinstance(timed, str):
        return timed
    seconds, calls, samples = timed
    return GemmMeasurement(shape=shape, time_s=seconds, calls=calls, samples=samples)


def curve_sequence(seq: int) -> int:
    """The second sequence the attention is timed at: four times the model's, or a quarter of it above
    32768 tokens (at least 128).

    >>> curve_sequence(2048), curve_sequence(65536)
    (8192, 16384)
    """
    return 4 * seq if 4 * seq <= 32768 else max(128, seq // 4)


def fit_attention(first: tuple[Fraction, Fraction], second: tuple[Fraction, Fraction]) -> Fraction | None:
    """K, the keys each block of queries' fixed work is worth, from two (keys a query meets, FLOP/s)
    measurements of one kernel: rate = P / (1 + K/κ) through both (:mod:`costmodel.step.rates`), so
    K = (r₂ − r₁) / (r₁/κ₁ − r₂/κ₂); None when the rate does not grow with the keys (no such curve).

    >>> fit_attention((Fraction(1024), Fraction(300)), (Fraction(4096), Fraction(480)))
    Fraction(1024, 1)
    """
    (k1, r1), (k2, r2) = sorted((first, second))
    if k1 == k2 or r2 <= r1 or r1 / k1 <= r2 / k2:
        return None
    return (r2 - r1) / (r1 / k1 - r2 / k2)


def _attention_call(torch: Any, shape: AttentionShape, dtype: str, device: Any, kernel: str
                    ) -> Callable[[], Any]:
    """One forward and backward of the causal fused attention of *shape*, held to *kernel* on a GPU.

    Keys and values of fewer heads are passed as they are (``enable_gqa``) where this PyTorch can, else
    repeated to the query heads once, before anything is timed.
    """
    import contextlib

    import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

    t = getattr(torch, _TORCH_DTYPES[dtype])
    b, a, g, s, d = shape.batch, shape.heads, shape.kv_heads, shape.seq, shape.head_dim
    q = torch.randn(b, a, s, d, dtype=t, device=device, requires_grad=True)
    k = torch.randn(b, g, s, d, dtype=t, device=device, requires_grad=True)
    v = torch.randn(b, g, s, d, dtype=t, device=device, requires_grad=True)
    dout = torch.randn_like(q)
    held: Callable[[], Any] = contextlib.nullcontext
    if device.type == "cuda":
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backend = SDPBackend.CUDNN_ATTENTION if kernel == "cudnn" else SDPBackend.FLASH_ATTENTION
        held = lambda: sdpa_kernel(backend)  # a fresh context each call
    extra: dict[str, Any] = {}
    if g != a:
        try:
            with held():
                F.scaled_dot_product_attention(q[:, :, :1], k[:, :, :1], v[:, :, :1], is_causal=True,
                                               enable_gqa=True)
            extra["enable_gqa"] = True
        except TypeError:  # a PyTorch before 2.5
            k = k.detach().repeat_interleave(a // g, dim=1).requires_grad_()
            v = v.detach().repeat_interleave(a // g, dim=1).requires_grad_()

    def call() -> Any:
        with held():
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
        return torch.autograd.grad(out, (q, k, v), dout)

    return call


def _attention_time(torch: Any, bench: _Bench, shape: AttentionShape, dtype: str, kernel: str
                    ) -> AttentionMeasurement | str:
    """The fused attention timed (:func:`_attention_call`), or why it was skipped: no such kernel for
    this dtype, head size or GPU, or out of GPU memory."""
    used = kernel if bench.gpu else "cpu"
    try:
        timed = _timed(torch, bench, lambda: _attention_call(torch, shape, dtype, bench.device, kernel),
                       f"attention {shape.text()}")
    except RuntimeError as error:  # SDPA: "No available kernel" for this dtype, head size or GPU
        said = (str(error).strip().splitlines() or ["no reason given"])[0][:160]
        return f"attention skipped: PyTorch ran no {used} kernel for {shape.text()} in {dtype} ({said})"
    if isinstance(timed, str):
        return timed
    seconds, calls, samples = timed
    return AttentionMeasurement(shape=shape, kernel=used, time_s=seconds, calls=calls, samples=samples)


# -- calibrating: measure, fit, describe the file ----------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ComputeCalibration:
    """A compute profile: the measurements, the preset it starts from, the fit, and the file's text.

    ``base`` is the preset (name and title); ``name`` the profile's GPU name; ``sms`` and ``tile`` the
    geometry fitted (the preset's on a GPU, the CPU pseudo-GPU's on a CPU); ``memory_efficiency`` the
    copy bandwidth over the preset's datasheet bandwidth, capped at 1; ``memory_kernels`` each kind's
    share of it (:data:`KERNELS`), capped alike.
    """

    measurements: ComputeMeasurements
    base: str
    base_title: str
    name: str
    datasheet_bandwidth_bytes_per_s: Fraction
    memory_efficiency: Fraction
    fit: GemmFit
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    memory_kernels: tuple[tuple[str, Fraction], ...] = ()
    attention_flops_per_s: Fraction | None = None
    attention_k_overhead: int = 0

    def to_dict(self) -> dict[str, Any]:
        m, f = self.measurements, self.fit
        rows = [{"label": g.shape.label, "layout": g.shape.layout, "flops": g.shape.flops,
                 "calls": g.calls, "samples": g.samples, **r.to_dict()}
                for g, r in zip(m.gemms, f.rows, strict=True)]
        return {
            "name": self.name, "base": self.base, "base_title": self.base_title,
            "device": m.device, "device_name": m.device_name, "dtype": m.dtype, "threads": m.threads,
            "torch_version": m.torch_version, "accelerator": m.accelerator, "measured_at": m.measured_at,
            "sms": f.sms, "tile": list(f.tile),
            "k_overhead": f.k_overhead,
            "plateau_flops_per_s": real(f.plateau_flops_per_s),
            "achieved_flops_per_s": real(f.achieved_flops_per_s),
            "achieved_shape": list(f.achieved_shape),
            "peak_flops_per_s": None if f.peak_flops_per_s is None else real(f.peak_flops_per_s),
            "median_rel_error": f.median_rel_error,
            "memory_bandwidth_bytes_per_s": m.bandwidth_bytes_per_s,
            "datasheet_memory_bandwidth_bytes_per_s": real(self.datasheet_bandwidth_bytes_per_s),
            "memory_efficiency": real(self.memory_efficiency),
            "copy_bytes": m.copy_bytes,
            "copy_s": m.copy_s,
            "launch_s": m.launch_s,
            "memory_kernels": [{**k.to_dict(), "bandwidth_bytes_per_s": k.bandwidth_bytes_per_s,
                                "share": real(share)}
                               for k, (_, share) in zip(m.kernels, self.memory_kernels, strict=True)],
            "attention": None if m.attention is None else {
                **m.attention.to_dict(), "flops_per_s": m.attention.flops_per_s,
                "achieved_flops_per_s": real(self.attention_flops_per_s or 0)},
            "attention_curve": None if m.attention_curve is None else {
                **m.attention_curve.to_dict(), "flops_per_s": m.attention_curve.flops_per_s},
            "attention_k_overhead": self.attention_k_overhead,
            "gemms": rows,
            "planned": m.planned, "elapsed_s": m.elapsed_s, "limit_s": m.limit_s, "stopped": m.stopped,
            "warnings": list(self.warnings), "notes": list(self.notes),
        }

    def to_gpu_toml(self) -> str:
        """The compute profile: a GPU file starting from the preset, each measured value with its source.

        It loads with :func:`costmodel.gpus.load_gpu` (the file is the source of what it sets).
        """
        m, f = self.measurements, self.fit
        where = m.where()
        shape = "×".join(map(str, f.achieved_shape))
        title = (f"{self.base_title}, calibrated on {m.device_name}" if m.gpu
                 else f"{self.base_title} with the compute of {m.device_name} (a CPU dry run)")
        head = [f"# {SOURCE}: {where}",
                f"# a GPU file: the preset {self.base} with what was measured (costmodel gpus FILE shows it)",
                f"base = {_toml(self.base)}",
                f"name = {_toml(self.name)}",
                f"title = {_toml(title)}",
                "notes = [\n" + "".join(f"  {_toml(n)},\n" for n in self.notes) + "]"]
        tables = []

        def table(key: str, value: str, locator: str, extra: str = "") -> None:
            tables.append(f"[{key}]\nvalue = {value}\n{extra}source = {_toml(SOURCE)}\n"
                          f"locator = {_toml(f'{locator}; measured on {where}')}\n")

        fastest = m.gemms[f.achieved_row]
        table(f"gemm.achieved.{m.dtype}", _toml(str(round(f.achieved_flops_per_s))),
              f"torch.mm of {m.dtype} {shape} (layout {fastest.shape.layout}, {fastest.shape.label}): the "
              f"fastest of the {len(m.gemms)} products measured, the median of {fastest.samples} samples "
              f"of {fastest.calls} back-to-back call{'s' if fastest.calls != 1 else ''} after 2 warm-ups",
              extra=f"shape = [{', '.join(map(str, f.achieved_shape))}]\n")
        table("gemm.k_overhead", str(f.k_overhead),
              f"fitted: the K0 (0..{K0_MAX}) whose curve through gemm.achieved has the least squared "
              f"relative error over the {len(m.gemms)} products; median |error| "
              f"{f.median_rel_error:.1%}")
        if not m.gpu:
            table("sms", str(f.sms), f"CPU pseudo-GPU: one SM per thread torch computes with "
                                     f"(torch.get_num_threads() = {f.sms})")
            table("gemm.tile", f"[{f.tile[0]}, {f.tile[1]}]",
                  "CPU pseudo-GPU: a 1 x 1 tile, no tile or wave quantization")
        assert m.bandwidth_bytes_per_s is not None and m.launch_s is not None and m.copy_bytes is not None
        table("memory_efficiency", _toml(f"{float(self.memory_efficiency):.6g}"),
              f"out.copy_(x) of {m.copy_bytes // 2 // 2**20} MiB float32 buffers, bytes read and written "
              f"over the median time: {m.bandwidth_bytes_per_s / 1e9:.4g} GB/s of the "
              f"{float(self.datasheet_bandwidth_bytes_per_s) / 1e9:.4g} GB/s datasheet bandwidth of "
              f"{self.base}")
        table("launch", _toml(f"{m.launch_s * 1e9:.1f} ns"),
              f"x.add_(1) on one element, {m.launch_calls} calls back to back, the median time per call")
        for k, (kind, share) in zip(m.kernels, self.memory_kernels, strict=True):
            shape = " x ".join(map(str, k.shape))
            table(f"memory_kernels.{kind}", _toml(f"{float(share):.6g}"),
                  f"{KERNELS[kind][0]} of a [{shape}] {k.dtype} tensor, {k.bytes} bytes in "
                  f"{k.time_s * 1e6:.4g} us (median of {k.samples} samples of {k.calls} calls): "
                  f"{k.bandwidth_bytes_per_s / 1e9:.4g} GB/s of the "
                  f"{float(self.datasheet_bandwidth_bytes_per_s) / 1e9:.4g} GB/s datasheet bandwidth")
        if m.attention is not None and self.attention_flops_per_s is not None:
            a = m.attention
            table(f"attention.achieved.{m.dtype}", _toml(str(round(self.attention_flops_per_s))),
                  f"F.scaled_dot_product_attention, causal, {a.kernel} kernel, {m.dtype}, forward and "
                  f"backward at {a.shape.text()} (batch × heads × sequence × head channels): {a.shape.flops} "
                  f"FLOPs as the step model counts them in {a.time_s * 1e6:.4g} us (median of {a.samples} "
                  f"samples of {a.calls} calls)",
                  extra=f"shape = [{a.shape.batch}, {a.shape.heads}, {a.shape.seq}, {a.shape.head_dim}]\n")
            c = m.attention_curve
            how = ("one sequence measured: no curve, one rate at every shape" if c is None else
                   f"{c.flops_per_s / 1e12:.5g} TFLOP/s at {c.shape.text()} ({c.shape.keys} keys a query) "
                   f"against {a.flops_per_s / 1e12:.5g} at {a.shape.seq} tokens ({a.shape.keys}): "
                   + (f"each block of queries' fixed work is worth K = {self.attention_k_overhead} keys"
                      if self.attention_k_overhead else "no faster with more keys: no curve"))
            table("attention.k_overhead", str(self.attention_k_overhead), how)
        return "\n".join(head) + "\n\n" + "\n".join(tables)


def _toml(text: str) -> str:
    """*text* as a TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def calibrate_compute(config: ComputeConfig, *, base: str | None = None, name: str | None = None,
                      progress: Callable[[ComputeProgress], None] | None = None) -> ComputeCalibration:
    """Measure this machine's compute, fit the GEMM curve and describe the compute profile.

    Parameters
    ----------
    config : ComputeConfig
        The device, dtype, products and time limit.
    base : str, optional
        The preset the profile starts from (a name, not a file).  On a GPU the default is the preset
        its name matches (:func:`guess_base`); on a CPU it is required.
    name : str, optional
        The profile's GPU name (default ``<base>-calibrated``).
    progress : callable, optional
        Called with a :class:`ComputeProgress` before each measurement.

    Raises
    ------
    MissingDependency
        Without PyTorch.
    InputError
        For a base that is no preset, none given where none can be guessed, a dtype the base has no
        peak for, a bad name, or a device this process does not see.
    CalibrationError
        When the fastest product beats the base's peak (a wrong base), or too little was measured.
    ComputeInterrupted
        On Ctrl-C before enough products were measured to fit.
    """

    preset = None if base is None else _base_preset(base)
    if name is not None and not _NAME.fullmatch(name):
        raise InputError(f"name {name!r} is not a GPU name; use lower case letters, digits and - . +, "
                         "e.g. h100-node7")
    torch = _import_torch()
    device = _resolve_device(torch, config.device)
    gpu = device.type == "cuda"
    if preset is None:
        preset = _base_preset(choose_base(str(device), _device_name(torch, device)))
    dtype = config.dtype or ("bf16" if gpu else "fp32")
    if dtype not in preset.peak_flops:
        raise InputError(f"{preset.name} has no {dtype} peak to check a measured rate against; it has "
                         f"{', '.join(preset.peak_flops)}: choose one of them or another base")
    if dtype == "tf32" and not gpu:
        raise InputError("dtype 'tf32' is a mode of NVIDIA tensor cores; on a CPU measure fp32")
    measured = measure_compute(replace(config, device=str(device), dtype=dtype), progress=progress)
    return compute_calibration(measured, base=preset.name, name=name)


def _kernel_shares(kernels: Sequence[KernelMeasurement], datasheet: Fraction, base: str,
                   warnings: list[str]) -> list[tuple[str, Fraction]]:
    """Each kind's bandwidth over the datasheet's, capped at 1 (with a warning), as the file will hold it."""
    out = []
    for k in kernels:
        share = Fraction(k.bandwidth_bytes_per_s) / datasheet
        if share > 1:
            warnings.append(f"the {k.kind} kernels reached {k.bandwidth_bytes_per_s / 1e9:.4g} GB/s, above "
                            f"{base}'s datasheet {float(datasheet) / 1e9:.4g} GB/s (caches, or not a "
                            f"{base}); memory_kernels.{k.kind} is capped at 1")
            share = Fraction(1)
        out.append((k.kind, Fraction(f"{float(share):.6g}")))
    return out


def _attention_rate(measured: ComputeMeasurements, peak: Fraction, base: str, warnings: list[str]
                    ) -> tuple[Fraction | None, int]:
    """The fused attention's FLOP/s as the file will hold it (a whole number), capped at the peak (with a
    warning), and its curve's K from the second sequence (:func:`fit_attention`; 0 without one, or where
    the rate does not grow, with a warning); (None, 0) when it was not measured."""
    from costmodel.units import format_flop_rate

    first, second = measured.attention, measured.attention_curve
    if first is None:
        return None, 0
    rate = Fraction(round(first.flops_per_s))
    if rate > peak:
        warnings.append(f"the attention ran at {format_flop_rate(rate)}, above {base}'s {measured.dtype} "
                        f"peak of {format_flop_rate(peak)}; attention.achieved is capped at the peak")
        rate = peak
    if second is None:
        return rate, 0
    fitted = fit_attention((first.shape.keys, Fraction(first.flops_per_s)),
                           (second.shape.keys, Fraction(second.flops_per_s)))
    if fitted is None:
        warnings.append(f"the attention ran no faster at {second.shape.seq} tokens than at "
                        f"{first.shape.seq}: attention.k_overhead is 0, one rate at every shape")
        return rate, 0
    return rate, min(round(fitted), 1 << 20)


def compute_calibration(measured: ComputeMeasurements, *, base: str, name: str | None = None
                        ) -> ComputeCalibration:
    """Fit measurements already taken (:func:`measure_compute`'s) on the geometry of *base* (a preset) or
    of the CPU pseudo-GPU, and describe the compute profile (see the module notes).

    Raises
    ------
    InputError
        For a base that is no preset, a bad name, or a dtype the base has no peak for.
    CalibrationError
        When too little was measured to fit (no launch or copy time, fewer than 3 products, one k, no
        unbatched product), or the fastest product beats the base's peak.
    ComputeInterrupted
        When that is so because the run was interrupted.
    """
    from costmodel.units import format_flop_rate

    preset = _base_preset(base)
    name = name or f"{preset.name}-calibrated"
    if not _NAME.fullmatch(name):
        raise InputError(f"name {name!r} is not a GPU name; use lower case letters, digits and - . +, "
                         "e.g. h100-node7")
    if measured.dtype not in preset.peak_flops:
        raise InputError(f"{preset.name} has no {measured.dtype} peak to check a measured rate against; "
                         f"it has {', '.join(preset.peak_flops)}")

    rows = [g.row for g in measured.gemms]
    missing = next((what for what, value in (("launch", measured.launch_s), ("copy", measured.copy_s))
                    if value is None), None)
    enough = (len(rows) >= _MIN_ROWS and len({r[2] for r in rows}) >= 2 and any(r[3] == 1 for r in rows))
    if measured.stopped == "interrupted" and (missing or not enough):
        raise ComputeInterrupted(len(rows), measured.planned)
    if missing:
        raise CalibrationError(f"the run stopped before the {missing} was timed: nothing to write")
    if not enough:
        limited = measured.stopped == "limit"
        within = f" within the limit of {measured.limit_s:g} s" if limited else ""
        hint = "give a longer limit" if limited else "; ".join(measured.skipped) or "measure more products"
        raise CalibrationError(f"{len(rows)} of {measured.planned} products were measured{within}: too few "
                               f"to fit (at least {_MIN_ROWS}, of two values of k, one unbatched); {hint}")
    datasheet = preset.memory_bandwidth_bytes_per_s
    assert measured.bandwidth_bytes_per_s is not None and measured.launch_s is not None
    bandwidth = Fraction(measured.bandwidth_bytes_per_s)
    warnings: list[str] = []
    efficiency = bandwidth / datasheet
    if efficiency > 1:
        warnings.append(f"the copy reached {float(bandwidth) / 1e9:.4g} GB/s, above {preset.name}'s "
                        f"datasheet {float(datasheet) / 1e9:.4g} GB/s (caches, or not a {preset.name}); "
                        "memory_efficiency is capped at 1")
        efficiency = Fraction(1)
    # what the file will hold, read back as the file reads it: the rate rounded to a whole FLOP/s,
    # the share to 6 digits, the launch to 0.1 ns
    efficiency = Fraction(f"{float(efficiency):.6g}")
    launch = Fraction(f"{measured.launch_s * 1e9:.1f}") / 10**9
    kernels = _kernel_shares(measured.kernels, datasheet, preset.name, warnings)
    sms, tile = (preset.sms, preset.gemm.tile) if measured.gpu else (measured.threads or 1, CPU_TILE)
    peak = preset.peak_flops[measured.dtype]
    fit = fit_gemm(rows, sms=sms, tile=tile, peak=peak, bandwidth=datasheet * efficiency, launch=launch,
                   element=_ELEMENT[measured.dtype])
    if fit.achieved_flops_per_s > peak:
        raise CalibrationError(f"the fastest product ran at {format_flop_rate(fit.achieved_flops_per_s)}, "
                               f"above {preset.name}'s {measured.dtype} peak of {format_flop_rate(peak)}: "
                               f"this {measured.device_name} is not a {preset.name}; start the file from "
                               "its own preset")
    warnings += fit.warnings
    if measured.stopped == "limit":
        warnings.append(f"the limit of {measured.limit_s:g} s stopped the run after {len(rows)} of "
                        f"{measured.planned} products; the fit uses those")
    elif measured.stopped == "interrupted":
        warnings.append(f"interrupted after {len(rows)} of {measured.planned} products; the fit uses those")
    warnings += list(measured.skipped)
    attention, k_overhead = _attention_rate(measured, peak, preset.name, warnings)
    kinds = ", ".join(f"memory_kernels.{k}" for k, _ in kernels)
    measured_attention = f", attention.achieved.{measured.dtype}, attention.k_overhead" if attention else ""
    notes = [f"compute measured by {SOURCE} on {measured.where()}: gemm.achieved.{measured.dtype}, "
             f"gemm.k_overhead, memory_efficiency{', ' + kinds if kinds else ''}{measured_attention} "
             "and launch",
             f"fitted plateau P = {format_flop_rate(fit.plateau_flops_per_s)} ({measured.dtype}; the curve "
             f"through gemm.achieved with K0 = {fit.k_overhead}); median |error| {fit.median_rel_error:.1%} "
             f"over {len(rows)} products"]
    if not measured.gpu:
        notes.append(f"a CPU dry run: {measured.device_name} as a pseudo-GPU of {sms} SMs (its threads) "
                     f"and a 1 x 1 tile; the rest is {preset.name}'s: this file tests the method, it does "
                     "not model that GPU")
    return ComputeCalibration(measurements=measured, base=preset.name, base_title=preset.title, name=name,
                              datasheet_bandwidth_bytes_per_s=datasheet, memory_efficiency=efficiency,
                              fit=fit, warnings=tuple(warnings), notes=tuple(notes),
                              memory_kernels=tuple(kernels), attention_flops_per_s=attention,
                              attention_k_overhead=k_overhead)
