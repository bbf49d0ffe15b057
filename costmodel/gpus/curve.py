"""The GEMM curve of a GPU: how long one matrix product takes, from its shape and the GPU's geometry.

A product C[m×n] = A[m×k]·B[k×n] (times a batch count) runs as tiles of tm × tn outputs, one per
streaming multiprocessor (SM) at a time, each looping over k (NVIDIA, *Matrix Multiplication Background
User's Guide*, sections 2.3, 3.1 and 3.2: tile and wave quantization)::

    tiles  = ⌈m/tm⌉·⌈n/tn⌉·batch·splits           (the better of the tile and its transpose)
    waves  = ⌈tiles / SMs⌉
    t_math = waves · 2·tm·tn·(k/splits + K0) / (P/SMs)
    t_mem  = (bytes of A, B and C) / (achieved memory bandwidth)
    t      = max(t_math, t_mem) + launch

K0 is the tile's prologue and epilogue in k-equivalents; a product with fewer tiles than SMs splits k
over the idle SMs (cuBLAS's split-k kernels), each piece keeping at least :data:`MIN_SPLIT_K` of k.
The step model prices its products with :func:`product_time` (:class:`costmodel.step.rates.Rates`), and
``costmodel calibrate compute`` fits K0 and P with the same :func:`orientations`, so a fitted curve
prices what was measured as the step will.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["MIN_SPLIT_K", "math_work", "orientations", "product_time"]

MIN_SPLIT_K = 256
"""The least k one piece of a split-k product keeps (CUTLASS's split-k examples split k=4096 over at
most 16 pieces)."""


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def orientations(m: int, n: int, k: int, batch: int = 1, *, sms: int, tile: tuple[int, int]
                 ) -> list[tuple[int, Fraction]]:
    """(c, k′) for the tile and its transpose: the math time at plateau P is min c·(k′ + K0) / P.

    >>> orientations(512, 512, 512, sms=4, tile=(256, 256))
    [(524288, Fraction(512, 1))]
    """
    out = []
    for tm, tn in sorted({tile, tile[::-1]}):
        tiles = _ceil(m, tm) * _ceil(n, tn) * batch
        splits = 1
        if tiles < sms:
            splits = max(1, min(sms // tiles, k // MIN_SPLIT_K))
        waves = _ceil(tiles * splits, sms)
        out.append((waves * 2 * tm * tn * sms, Fraction(k, splits)))
    return out


def math_work(m: int, n: int, k: int, batch: int = 1, *, sms: int, tile: tuple[int, int],
              k_overhead: int) -> Fraction:
    """The math term's work in FLOPs at the plateau: the product takes this over P seconds."""
    return min(c * (kk + k_overhead) for c, kk in orientations(m, n, k, batch, sms=sms, tile=tile))


def product_time(m: int, n: int, k: int, batch: int = 1, *, sms: int, tile: tuple[int, int],
                 plateau: Fraction | float, k_overhead: int, bandwidth: Fraction | float | None = None,
                 launch: Fraction | float = 0, element: Fraction | int = 2,
                 output_bytes: Fraction | int | None = None) -> Fraction:
    """Seconds of one product (module notes).

    *plateau* is P in FLOP/s; *bandwidth* the achieved memory bandwidth in bytes/s (None: no memory
    term); *launch* in seconds; *element* the bytes of an element of A and B, *output_bytes* those of an
    element of C (default *element*; 8 for a weight gradient accumulated into fp32 main gradients).

    >>> product_time(256, 256, 256, sms=1, tile=(128, 128), plateau=2**25, k_overhead=0)
    Fraction(1, 1)
    """
    math_s = math_work(m, n, k, batch, sms=sms, tile=tile, k_overhead=k_overhead) / Fraction(plateau)
    if bandwidth is not None:
        out = element if output_bytes is None else output_bytes
        moved = batch * (element * (m * k + k * n) + out * m * n)
        math_s = max(math_s, Fraction(moved) / Fraction(bandwidth))
    return math_s + Fraction(launch)
