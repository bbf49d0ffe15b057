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

:func:`gemm_roofline` is the same product on the plain roofline (Williams et al. 2009): no tiles, the
datasheet peak and memory bandwidth, each of A, B and C moved once.  Its arithmetic intensity
I = 2·m·n·k / (e·(m·k + k·n) + e_C·m·n) FLOP/B against the ridge point R = P/B says whether the
product is compute-bound (I ≥ R) or memory-bound, and it takes max(2·m·n·k/P, bytes/B).
:func:`tile_waves` counts the tiles and waves of the tile and wave quantization above.

References
----------
.. [1] NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001), sections 2.3 (arithmetic
   intensity of a GEMM), 3.1 (tile quantization) and 3.2 (wave quantization).
.. [2] S. Williams, A. Waterman, D. Patterson (2009). Roofline: an insightful visual performance model.
   Communications of the ACM 52(4).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields
from costmodel.errors import InputError
from costmodel.references import NVIDIA_GEMM_GUIDE, WILLIAMS_2009
from costmodel.validate import positive

__all__ = ["CITED", "MIN_SPLIT_K", "Roofline", "TileWaves", "compute_bound_rows", "gemm_roofline",
           "math_work", "orientations", "product_time", "tile_waves"]

CITED = (NVIDIA_GEMM_GUIDE, WILLIAMS_2009)

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Roofline(JSONFields):
    """One matrix product on the roofline (see :func:`gemm_roofline`); FLOPs, bytes, seconds, FLOP/s."""

    m: int
    n: int
    k: int
    batch: int
    flops: int
    n_bytes: Fraction
    intensity_flops_per_byte: Fraction
    ridge_flops_per_byte: Fraction
    bound: str
    math_s: Fraction
    memory_s: Fraction
    time_s: Fraction
    attainable_flops_per_s: Fraction


def gemm_roofline(m: int, n: int, k: int, batch: int = 1, *, peak: Fraction | int,
                  bandwidth: Fraction | int, element: Fraction | int = 2,
                  output_bytes: Fraction | int | None = None) -> Roofline:
    """The roofline of C[m×n] = A[m×k]·B[k×n] (*batch* of them): intensity, ridge point, bound and time.

    Parameters
    ----------
    m, n, k, batch : int
        The product's dimensions and how many are run, each ≥ 1.
    peak : number
        P, the peak FLOP/s of the dtype (``GPU.peak(dtype)``).
    bandwidth : number
        B, the memory bandwidth in bytes/s (the datasheet's, ``GPU.memory_bandwidth_bytes_per_s``).
    element, output_bytes : number
        e, the bytes of an element of A and B, and of C (default e).

    Returns
    -------
    Roofline
        ``flops`` = 2·m·n·k·batch (a multiply-add is two FLOPs); ``n_bytes`` = batch·(e·(m·k + k·n) +
        e_C·m·n), each matrix read or written once; ``intensity_flops_per_byte`` = flops/bytes;
        ``ridge_flops_per_byte`` = P/B; ``bound`` "compute" when the intensity reaches the ridge, else
        "memory"; ``time_s`` = max(flops/P, bytes/B); ``attainable_flops_per_s`` = min(P, I·B).

    Raises
    ------
    InputError
        For a dimension, peak or bandwidth that is not positive.

    References
    ----------
    .. [1] NVIDIA, Matrix Multiplication Background User's Guide, section 2.3: arithmetic intensity
       2·M·N·K / (2·(M·K + N·K + M·N)) FLOPs per byte in fp16, against the GPU's ops:byte ratio.
    .. [2] Williams, Waterman & Patterson 2009: attainable FLOP/s = min(peak, intensity × bandwidth).

    Examples
    --------
    The guide's example: a 8192 × 128 × 8192 fp16 product (m·k by k·n with n = 128) has intensity
    124.1 FLOP/B, under a V100's ops:byte ratio of 138.9 (125 TFLOP/s over 900 GB/s): memory-bound.

    >>> r = gemm_roofline(8192, 128, 8192, peak=125 * 10**12, bandwidth=900 * 10**9)
    >>> float(r.intensity_flops_per_byte), float(r.ridge_flops_per_byte), r.bound
    (124.12121212121212, 138.88888888888889, 'memory')
    """
    for name, value in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        positive(value, name)
    peak_, bandwidth_ = Fraction(peak), Fraction(bandwidth)
    for name, number in (("peak", peak_), ("bandwidth", bandwidth_), ("element", Fraction(element))):
        if number <= 0:
            raise InputError(f"{name}={number} is not positive")
    out = Fraction(element if output_bytes is None else output_bytes)
    flops = 2 * m * n * k * batch
    moved = batch * (Fraction(element) * (m * k + k * n) + out * m * n)
    intensity = flops / moved
    ridge = peak_ / bandwidth_
    math_s, memory_s = flops / peak_, moved / bandwidth_
    return Roofline(m=m, n=n, k=k, batch=batch, flops=flops, n_bytes=moved,
                    intensity_flops_per_byte=intensity,
                    ridge_flops_per_byte=ridge, bound="compute" if intensity >= ridge else "memory",
                    math_s=math_s, memory_s=memory_s, time_s=max(math_s, memory_s),
                    attainable_flops_per_s=min(peak_, intensity * bandwidth_))


def compute_bound_rows(n: int, k: int, *, peak: Fraction | int, bandwidth: Fraction | int,
                       element: Fraction | int = 2) -> int | None:
    """The fewest rows m at which C[m×n] = A[m×k]·B[k×n] reaches the ridge point (compute-bound).

    The intensity 2·m·n·k / (e·(m·k + k·n + m·n)) grows with m towards 2·n·k / (e·(n + k)); it reaches
    the ridge R = P/B from m* = ⌈R·e·k·n / (2·n·k − R·e·(n + k))⌉ on, and never when that limit is below
    R (``None``).  For m ≪ n, k the intensity is about 2m/e, so m* is about R·e/2: the batch of tokens a
    decoding step needs before its weight reads stop bounding it.

    References
    ----------
    .. [1] NVIDIA, Matrix Multiplication Background User's Guide, section 2.3 (a GEMM's arithmetic
       intensity against the ops:byte ratio); Williams, Waterman & Patterson 2009.

    Examples
    --------
    >>> compute_bound_rows(4096, 4096, peak=125 * 10**12, bandwidth=900 * 10**9)  # V100: ridge 138.9
    149
    >>> gemm_roofline(148, 4096, 4096, peak=125 * 10**12, bandwidth=900 * 10**9).bound
    'memory'
    >>> compute_bound_rows(64, 64, peak=125 * 10**12, bandwidth=900 * 10**9) is None
    True
    """
    positive(n, "n")
    positive(k, "k")
    given = (("peak", Fraction(peak)), ("bandwidth", Fraction(bandwidth)), ("element", Fraction(element)))
    for name, number in given:
        if number <= 0:
            raise InputError(f"{name}={number} is not positive")
    ridge, e = Fraction(peak) / Fraction(bandwidth), Fraction(element)
    room = 2 * n * k - ridge * e * (n + k)
    if room <= 0:
        return None
    m = ridge * e * k * n / room
    return max(1, -(-m.numerator // m.denominator))


@dataclass(frozen=True, slots=True, kw_only=True)
class TileWaves(JSONFields):
    """The tiles and waves of one product's output on a GPU's SMs (see :func:`tile_waves`)."""

    tiles: int
    waves: int
    sms: int
    tile: tuple[int, int]
    efficiency: Fraction


def tile_waves(m: int, n: int, batch: int = 1, *, sms: int, tile: tuple[int, int]) -> TileWaves:
    """The output tiles of C[m×n] in tiles of tile_m × tile_n, and the waves they take on *sms* SMs.

    ``tiles`` = ⌈m/tm⌉·⌈n/tn⌉·batch, ``waves`` = ⌈tiles/SMs⌉ (one tile per SM at a time), and
    ``efficiency`` = tiles/(waves·SMs), the share of the SM slots of those waves that hold a tile: the
    last, partial wave costs a whole wave (wave quantization).  The tile is taken as given (not
    transposed, no split-k: :func:`orientations` chooses those for the GEMM curve).

    References
    ----------
    .. [1] NVIDIA, Matrix Multiplication Background User's Guide, section 3.2 (wave quantization: an A100's
       108 SMs and 256 × 128 tiles).

    Examples
    --------
    >>> w = tile_waves(1664, 2048, sms=108, tile=(256, 128))  # 7 × 16 = 112 tiles: two waves on 108 SMs
    >>> w.tiles, w.waves, w.efficiency
    (112, 2, Fraction(14, 27))
    """
    for name, value in (("m", m), ("n", n), ("batch", batch), ("sms", sms)):
        positive(value, name)
    tm, tn = tile
    positive(tm, "tile_m")
    positive(tn, "tile_n")
    tiles = _ceil(m, tm) * _ceil(n, tn) * batch
    waves = _ceil(tiles, sms)
    return TileWaves(tiles=tiles, waves=waves, sms=sms, tile=(tm, tn),
                     efficiency=Fraction(tiles, waves * sms))
