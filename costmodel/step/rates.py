"""What one GPU achieves on one operation: the rates layer of a step's prediction.

A step's compute is a list of operations with exact counts (:mod:`costmodel.step.ops`): matrix
products with their shapes, and memory-bound kernels with the bytes they move.  :class:`Rates` prices
each on a GPU (:mod:`costmodel.gpus`: a preset or a calibrated compute profile):

**A matrix product** runs as waves of tiles over the streaming multiprocessors, each tile looping over
k; its time is the larger of that math term and its memory traffic, plus a launch: the GEMM curve of
:mod:`costmodel.gpus.curve` (tile and wave quantization, K0, split-k).  The plateau P is not a datasheet
peak: it is solved so that the curve passes through the GPU's measured GEMM (``gemm.achieved_flops`` at
``gemm.shape``: a published benchmark, or a ``calibrate compute`` fit), and never exceeds the peak.

**A memory-bound kernel** (norms, activations, dropout, residual adds, softmax, the optimizer) moves
its bytes at the memory bandwidth times the achieved share a streaming copy reaches, plus the launch;
a GPU file that gives a kind of kernel its own share (``[memory_kernels]``, which ``calibrate
compute`` measures) moves that kind's bytes at it instead.

**Fused attention** (FlashAttention) computes at the GPU's attention rate (``attention_flops``: the
FlashAttention papers' benchmarks, or a ``calibrate compute`` measurement) when the GPU has one, else at
the GEMM plateau.  Where the GPU also gives the shape the rate was measured at and ``attention.k_overhead``
K, the rate follows the keys each query meets (κ: s/2 for a causal sequence of s, the band of a sliding
window): each block of queries does a fixed amount of work besides its keys (loading its queries,
writing its output, the softmax's last rescaling: FlashAttention's outer loop, Dao 2023, algorithm 1)
worth K keys, so a kernel doing F FLOPs takes F/P · (1 + K/κ), P solved so that the measured shape runs
at the measured rate (capped at the peak), as the GEMM curve's K0 does for a product's k.

:meth:`Rates.efficiency` is the plain override of ``--efficiency``: every FLOP at that share of the
peak and memory-bound work free, as the step model priced compute before operations were priced.

References
----------
.. [1] NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001), sections 2.3, 3.1, 3.2.
.. [2] S. Williams, A. Waterman, D. Patterson (2009). Roofline: an insightful visual performance model.
   Communications of the ACM 52(4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.gpus.curve import MIN_SPLIT_K, math_work, product_time
from costmodel.references import NVIDIA_GEMM_GUIDE, WILLIAMS_2009
from costmodel.step.flops import attention_pairs

__all__ = ["CITED", "MIN_SPLIT_K", "SOURCES", "Rates"]  # MIN_SPLIT_K: the curve's

SOURCES = (
    NVIDIA_GEMM_GUIDE.at("sections 2.3, 3.1 and 3.2: tiles, tile quantization, wave quantization"),
    WILLIAMS_2009.at("the roofline: time is the larger of the math and the memory traffic"),
)
CITED = tuple(s.citation for s in SOURCES)


@dataclass(frozen=True, slots=True)
class Rates:
    """The achieved rates of one GPU in one dtype (see the module notes).

    Build with :meth:`of` (a GPU) or :meth:`efficiency` (a peak and a share of it).  *plateau* is P,
    per GPU; *bandwidth* the achieved memory bandwidth (bytes/s); *element* the bytes of an element of
    the dtype's matrix inputs; *kernels* the achieved bandwidth of the kinds of memory-bound kernel the
    GPU gives one for (:data:`costmodel.gpus.MEMORY_KERNELS`).

    Each price is remembered on the instance (*_prices*, no part of its value): the configurations a plan
    prices share many products and kernels, though not whole layers.
    """

    name: str
    peak: Fraction
    plateau: Fraction
    sms: int
    tile: tuple[int, int]
    k_overhead: int
    bandwidth: Fraction | None
    launch: Fraction
    attention: Fraction
    element: Fraction
    flat: bool = False
    kernels: tuple[tuple[str, Fraction], ...] = ()
    attention_overhead: Fraction = Fraction(0)
    _prices: dict[tuple[Any, ...], Fraction] = field(default_factory=dict, init=False, repr=False,
                                                     compare=False)

    @classmethod
    def of(cls, gpu: Any, dtype: str) -> Rates:
        """The rates of *gpu* (a :class:`costmodel.gpus.GPU`) for matrix products in *dtype*."""
        peak = Fraction(gpu.peak(dtype))
        achieved = Fraction(gpu.achieved(dtype))
        curve = gpu.gemm
        m, n, k = curve.shape_for(dtype)
        tm, tn = curve.tile
        probe = cls(name=gpu.name, peak=peak, plateau=peak, sms=gpu.sms, tile=(tm, tn),
                    k_overhead=curve.k_overhead, bandwidth=None, launch=Fraction(0), attention=peak,
                    element=_ELEMENT[dtype])
        # the plateau that prices the measured shape at the measured rate (its math term alone)
        at_peak = probe.math_time(m, n, k)
        plateau = min(peak, achieved * at_peak / Fraction(2 * m * n * k) * peak)
        attention_rate, overhead = Fraction(gpu.attention_flops.get(dtype, plateau)), Fraction(0)
        if gpu.attention_k_overhead and dtype in gpu.attention_flops and dtype in gpu.attention_shapes:
            overhead = Fraction(gpu.attention_k_overhead)
            measured = attention_pairs(gpu.attention_shapes[dtype][2]) / gpu.attention_shapes[dtype][2]
            attention_rate = min(peak, attention_rate * (1 + overhead / measured))
        return cls(name=gpu.name, peak=peak, plateau=plateau, sms=gpu.sms, tile=(tm, tn),
                   k_overhead=curve.k_overhead,
                   bandwidth=Fraction(gpu.memory_bandwidth_bytes_per_s) * Fraction(gpu.memory_efficiency),
                   launch=Fraction(gpu.launch_s), attention=attention_rate, element=_ELEMENT[dtype],
                   kernels=tuple((kind, gpu.kernel_bandwidth(kind)) for kind in gpu.memory_kernels),
                   attention_overhead=overhead)

    @classmethod
    def efficiency(cls, peak: Fraction, efficiency: Fraction, dtype: str = "bf16") -> Rates:
        """Every FLOP at ``peak × efficiency``, memory-bound work and launches free."""
        if not 0 < efficiency <= 1:
            raise InputError(f"efficiency={efficiency} is not a share of the peak; give 0 < efficiency ≤ 1")
        rate = peak * efficiency
        return cls(name="peak × efficiency", peak=peak, plateau=rate, sms=1, tile=(1, 1), k_overhead=0,
                   bandwidth=None, launch=Fraction(0), attention=rate, element=_ELEMENT[dtype], flat=True)

    # -- prices -----------------------------------------------------------------------------------

    def math_time(self, m: int, n: int, k: int, batch: int = 1) -> Fraction:
        """The math term of a product: its waves of tiles at the plateau (module notes)."""
        if self.flat:
            return Fraction(2 * m * n * k * batch) / self.plateau
        work = math_work(m, n, k, batch, sms=self.sms, tile=self.tile, k_overhead=self.k_overhead)
        return work / self.plateau

    def gemm(self, m: int, n: int, k: int, *, batch: int = 1,
             output_bytes: Fraction | None = None) -> Fraction:
        """Seconds of a product of m×k by k×n (*batch* of them): the larger of math and memory, plus a launch
        (:func:`costmodel.gpus.curve.product_time`).

        *output_bytes* per element of C (default the input element's; 8 for a weight gradient
        accumulated into fp32 main gradients).
        """
        if self.flat:
            return self.math_time(m, n, k, batch)
        key = ("gemm", m, n, k, batch, output_bytes)
        found = self._prices.get(key)
        if found is None:
            found = self._remember(key, product_time(
                m, n, k, batch, sms=self.sms, tile=self.tile, plateau=self.plateau,
                k_overhead=self.k_overhead, bandwidth=self.bandwidth, launch=self.launch,
                element=self.element, output_bytes=output_bytes))
        return found

    def memory(self, nbytes: Fraction | int, kind: str = "") -> Fraction:
        """Seconds of a memory-bound kernel of *kind* moving *nbytes*: at that kind's bandwidth when the GPU
        gives one, else a streaming copy's (free under a plain efficiency)."""
        if self.bandwidth is None:
            return Fraction(0)
        key = ("memory", nbytes, kind)
        found = self._prices.get(key)
        if found is None:
            bandwidth = next((b for k, b in self.kernels if k == kind), self.bandwidth)
            found = self._remember(key, Fraction(nbytes) / bandwidth + self.launch)
        return found

    def fused_attention(self, flops: Fraction, nbytes: Fraction, keys: Fraction = Fraction(0)) -> Fraction:
        """Seconds of one fused attention kernel doing *flops* and moving *nbytes*, its queries meeting
        *keys* keys each (0: not known, the rate alone)."""
        if self.bandwidth is None:
            return flops / self.attention
        key = ("attention", flops, nbytes, keys)
        found = self._prices.get(key)
        if found is None:
            math_s = flops / self.attention
            if self.attention_overhead and keys:
                math_s *= 1 + self.attention_overhead / keys
            found = self._remember(key, max(math_s, Fraction(nbytes) / self.bandwidth) + self.launch)
        return found

    def _remember(self, key: tuple[Any, ...], price: Fraction) -> Fraction:
        """*price* kept under *key*; at most :data:`_REMEMBERED` prices are kept (then forgotten at once)."""
        if len(self._prices) >= _REMEMBERED:
            self._prices.clear()
        self._prices[key] = price
        return price


_REMEMBERED = 1 << 16
"""The most prices one :class:`Rates` remembers."""


_ELEMENT = {"bf16": Fraction(2), "fp16": Fraction(2), "fp8": Fraction(1), "tf32": Fraction(4),
            "fp32": Fraction(4)}
