"""Gradient compression: payload bytes, compression ratios, all-reduce time saved, and error feedback.

For a gradient of n elements stored in a *source* type of v bytes (fp32: 4):

=========  ==============================  ==================================================
method     payload bytes                   exchange scheme (default first)
=========  ==============================  ==================================================
topk       k·(v + i), k = ⌈density·n⌉      allgather
fp16/bf16  2n                              allreduce (ring, of the cast payload)
fp8/int8   n                               reduce-scatter (DeepSpeed's), or allgather
onebit     ⌈n/8⌉ + 4 (signs, fp32 scale)   reduce-scatter (DeepSpeed's), or allgather
=========  ==============================  ==================================================

i is the index width (4 bytes for int32 indices), so top-10 % of fp32 with
int32 indices is 5× smaller, not 10×: k·(4 + 4) against n·4.  A cast to
fp16/bf16 can be summed in its own format, so it is all-reduced like the
dense gradient.  Sparse payloads (each worker keeps different indices) and
int8/fp8/sign payloads (sums overflow the format) do not reduce in place.  Two
exchanges are modelled (:mod:`costmodel.training.compressed_exchange` holds
them): *allgather*, every worker's payload to every worker, (p − 1)·payload
sent per rank, each worker decompressing and summing locally; and
*reduce-scatter*, DeepSpeed's compressed all-reduce (Tang et al. 2021), where
rank j sums chunk j, compresses it again with server error feedback and the
compressed chunks are all-gathered, about 2(p − 1)/p·payload per rank.  The
default for int8, fp8 and onebit is reduce-scatter: it is what DeepSpeed's
1-bit Adam/LAMB and 0/1 Adam run, and what a practitioner quoting "32× less
communication" means; the all-gather's bytes grow with p, so at p = 16 1-bit
saves only 4× and int8 sends more than the dense ring all-reduce.

Error feedback keeps what compression dropped and adds it back next step:
``gradient += residual; sent = C(gradient); residual = gradient - sent``.
For 1-bit compression C(g) = sign(g)·mean|g| (the scaled sign of
Karimireddy et al.); sign(0) is taken as +1, since one bit has no zero.

References
----------
.. [1] A. F. Aji, K. Heafield, "Sparse Communication for Distributed Gradient
   Descent", EMNLP 2017.
.. [2] Y. Lin, S. Han, H. Mao, Y. Wang, W. J. Dally, "Deep Gradient
   Compression", ICLR 2018.
.. [3] F. Seide, H. Fu, J. Droppo, G. Li, D. Yu, "1-Bit Stochastic Gradient
   Descent and its Application to Data-Parallel Distributed Training of
   Speech DNNs", Interspeech 2014.
.. [4] S. P. Karimireddy, Q. Rebjock, S. U. Stich, M. Jaggi, "Error Feedback
   Fixes SignSGD and other Gradient Compression Schemes", ICML 2019,
   Algorithm 1 (EF-SignSGD, scale ‖p‖₁/d).
.. [5] H. Tang et al., "1-bit Adam: Communication Efficient Large-Scale
   Training with Adam's Convergence Speed", ICML 2021, section 4; DeepSpeed
   ``deepspeed/runtime/comm/nccl.py``, ``NcclBackend.compressed_allreduce``.
.. [6] J. Bernstein et al., "signSGD: Compressed Optimisation for Non-Convex
   Problems", ICML 2018 (majority vote, the all-gather scheme).
.. [7] docs/theory/alpha-beta.md (what the compressed payload costs on the ring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.collectives.result import AlgorithmCost
from costmodel.errors import InputError
from costmodel.names import Names
from costmodel.params import LinkParams
from costmodel.references import (
    AJI_2017,
    BERNSTEIN_2018,
    DEEPSPEED,
    KARIMIREDDY_2019,
    LIN_2018,
    SEIDE_2014,
    TANG_2021,
    Cited,
)
from costmodel.training._common import (
    optional_link,
    parse_number,
    parse_numbers,
    positive_int,
    reals,
)
from costmodel.training.compressed_exchange import (
    DEEPSPEED_AT,
    SOURCES,
    Exchange,
    exchange,
    parse_scheme,
)
from costmodel.training.counts import Dtype, parse_count, parse_dtype
from costmodel.units import format_exact
from costmodel.validate import whole

__all__ = [
    "CITED",
    "METHODS",
    "Compression",
    "CompressionMethod",
    "EFStep",
    "ErrorFeedbackRun",
    "compress",
    "error_feedback",
]

CITED = (AJI_2017, LIN_2018, SEIDE_2014, KARIMIREDDY_2019, TANG_2021, DEEPSPEED, BERNSTEIN_2018)

_CAST = SEIDE_2014.at("quantised gradient exchange: an element cast to a b-byte type sends b bytes")
_NOTES = {
    "allgather": ("scheme allgather: the compressed payloads do not reduce in their own format (sparse "
                  "supports differ between workers; int8, fp8 and sign sums overflow), so every worker's "
                  "payload goes to every worker (ring all-gather, n = p × payload) and each decompresses "
                  "and sums locally; per rank (p − 1) × payload"),
    "reduce-scatter": ("scheme reduce-scatter (DeepSpeed's compressed all-reduce, 1-bit Adam): all-to-all "
                       "of the compressed chunks, rank j sums chunk j, adds its server error and compresses "
                       "it again, then a ring all-gather of the compressed chunks; per rank about "
                       "2(p − 1)/p × payload; local packing and summing are not charged"),
    "allreduce": "scheme allreduce: fp16/bf16 payloads are summed in their own format, a ring all-reduce",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CompressionMethod:
    """One compression scheme: how big its payload is and how it is communicated."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    kind: str  # "sparse", "cast" or "sign"
    target: str | None  # the dtype of a cast
    formula: str
    source: Cited


METHODS: dict[str, CompressionMethod] = {
    m.name: m
    for m in (
        CompressionMethod(name="topk", aliases=("top-k", "sparse", "sparsify"), kind="sparse", target=None,
                          summary="the k = ⌈density·n⌉ largest-magnitude entries, with their indices",
                          formula="k·(value bytes + index bytes)",
                          source=AJI_2017.at("gradient dropping: exchange only the largest absolute values")),
        CompressionMethod(name="fp16", aliases=("half", "float16"), kind="cast", target="fp16",
                          summary="cast to IEEE half precision", formula="2n",
                          source=_CAST),
        CompressionMethod(name="bf16", aliases=("bfloat16",), kind="cast", target="bf16",
                          summary="cast to bfloat16", formula="2n", source=_CAST),
        CompressionMethod(name="fp8", aliases=("float8", "e4m3", "e5m2"), kind="cast", target="fp8",
                          summary="cast to an 8-bit float", formula="n",
                          source=_CAST),
        CompressionMethod(name="int8", aliases=("i8", "quantize8"), kind="cast", target="int8",
                          summary="quantise to 8-bit integers", formula="n",
                          source=_CAST),
        CompressionMethod(name="onebit", aliases=("1bit", "1-bit", "sign", "signsgd"), kind="sign",
                          target=None,
                          summary="one sign bit per element and one fp32 scale per tensor",
                          formula="⌈n/8⌉ + 4",
                          source=SEIDE_2014.at("1-bit quantisation with error feedback")),
    )
}
"""Compression methods by canonical name."""

_NAMES = Names("compression method", {m.name: m.aliases for m in METHODS.values()})

_FREE = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(0), source="bytes only")


def _method(name: Any) -> CompressionMethod:
    if isinstance(name, CompressionMethod):
        return name
    return METHODS[_NAMES.resolve(str(name))]


def _density(value: Any) -> Fraction:
    d = parse_number(value, what="density")
    if not 0 < d <= 1:
        raise InputError(f"density {format_exact(d, decimal=True)} is outside (0, 1]; "
                         "give the kept fraction, e.g. 0.01 for 1 %")
    return d


@dataclass(frozen=True, slots=True, kw_only=True)
class Compression:
    """Payload of one compressed gradient against the dense one, and optionally the all-reduce time saved."""

    method: CompressionMethod
    elements: int
    source: Dtype
    density: Fraction | None
    k: int | None
    index_bytes: int | None
    bytes: Fraction
    dense_bytes: int
    p: int | None
    link: LinkParams | None
    scheme: str
    dense: AlgorithmCost | None
    compressed: Exchange | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def ratio(self) -> Fraction:
        """dense bytes / compressed bytes."""
        return self.dense_bytes / self.bytes

    @property
    def time_saved_s(self) -> Fraction | None:
        if self.link is None or self.dense is None or self.compressed is None:
            return None
        return self.dense.time_s - self.compressed.time_s

    def _bytes_ratio(self) -> int | float | None:
        """Dense bytes sent per rank / compressed bytes sent per rank, with a worker count."""
        if self.dense is None or self.compressed is None:
            return None
        return real(self.dense.bytes_sent_per_rank / self.compressed.bytes_sent_per_rank)

    def to_dict(self) -> dict[str, object]:
        timed = self.link is not None and self.dense is not None and self.compressed is not None

        def cost(c: AlgorithmCost | None) -> dict[str, object] | None:
            if c is None:
                return None
            return {"collective": "allreduce", "algorithm": c.algorithm, "rounds": c.rounds,
                    "bytes_sent_per_rank": real(c.bytes_sent_per_rank), "formula": c.formula,
                    "time_s": real(c.time_s) if timed else None}

        saved = self.time_saved_s
        speedup = None
        if timed and self.compressed is not None and self.compressed.time_s and self.dense is not None:
            speedup = real(self.dense.time_s / self.compressed.time_s)
        link = (self.link.result_fields() if self.link is not None else
                {"alpha_s": None, "beta_s_per_byte": None, "gamma_s_per_byte": None, "link_source": None})
        return {
            "method": self.method.name,
            "elements": self.elements,
            "from": self.source.name,
            "value_bytes": self.source.bytes_per_element,
            "density": None if self.density is None else real(self.density),
            "k": self.k,
            "index_bytes": self.index_bytes,
            "bytes": real(self.bytes),
            "dense_bytes": self.dense_bytes,
            "ratio": real(self.ratio),
            "ratio_exact": format_exact(self.ratio),
            "formula": self.method.formula,
            "scheme": self.scheme,
            "p": self.p,
            **link,
            "dense_time_s": _time(self.dense, timed),
            "compressed_time_s": _time(self.compressed, timed),
            "time_saved_s": None if saved is None else real(saved),
            "speedup": speedup,
            "bytes_ratio_per_rank": self._bytes_ratio(),
            "dense": cost(self.dense),
            "compressed": None if self.compressed is None else self.compressed.to_dict(timed),
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def _time(c: AlgorithmCost | Exchange | None, timed: bool) -> int | float | None:
    return real(c.time_s) if timed and c is not None else None


def _payload(m: CompressionMethod, n: int, v: Dtype, density: Fraction | None,
             index_bytes: int) -> tuple[Fraction, int | None]:
    if m.kind == "sparse":
        k = max(1, math.ceil((density or Fraction(0)) * n))
        return Fraction(k * (v.bytes_per_element + index_bytes)), k
    if m.kind == "sign":
        return Fraction(-(-n // 8) + 4), None
    return Fraction(n * parse_dtype(m.target).bytes_per_element), None


def compress(elements: Any, *, method: Any, density: Any = None, source: Any = "fp32",
             index_bytes: int | None = None, p: int | None = None, scheme: Any = None,
             link: LinkParams | None = None, alpha: Any = None, beta: Any = None, bandwidth: Any = None,
             profile: Any = None) -> Compression:
    """Bytes of a compressed gradient, the ratio to dense, and with a link the all-reduce time saved.

    Parameters
    ----------
    elements : int or str
        n, gradient elements (``"25M"``).
    method : str
        ``topk``, ``fp16``, ``bf16``, ``fp8``, ``int8`` or ``onebit`` (aliases
        such as ``top-k``, ``1bit``, ``sign``).
    density : number or str, optional
        For top-k only: the kept fraction, 0 < density ≤ 1 (``"0.01"``).
    source : str, default "fp32"
        The dense gradient's dtype.
    index_bytes : int, optional
        For top-k only: bytes per index (default 4, int32).
    p : int, optional
        Workers, for the collective's bytes and (with a link) its time.
    scheme : {"reduce-scatter", "allgather"}, optional
        How fp8, int8 and onebit payloads cross the workers (see
        :mod:`costmodel.training.compressed_exchange`): ``reduce-scatter``
        (the default), DeepSpeed's compressed all-reduce with worker and server
        error feedback, about 2(p − 1)/p·payload per rank; ``allgather``,
        every worker's payload to every worker, (p − 1)·payload per rank.
        top-k is always ``allgather`` and fp16/bf16 ``allreduce``.
    link, alpha, beta, bandwidth, profile : optional
        A link for times (α defaults to 0 when only a rate is given); needs *p*.

    Returns
    -------
    Compression

    Raises
    ------
    InputError
        For an unknown method, dtype or scheme, a density outside (0, 1] or
        one given to a method other than top-k, a cast that is not narrower
        than the source, a scheme the method cannot use, or a link without *p*.

    References
    ----------
    .. [1] Aji and Heafield, EMNLP 2017; Lin et al., ICLR 2018; Seide et al.,
       Interspeech 2014.
    .. [2] Tang et al., ICML 2021, section 4, and DeepSpeed
       ``deepspeed/runtime/comm/nccl.py`` (``compressed_allreduce``): the
       reduce-scatter scheme; Bernstein et al., ICML 2018: the all-gather one.

    Examples
    --------
    >>> compress("25M", method="topk", density="0.1").ratio  # k·(4 + 4) against n·4
    Fraction(5, 1)
    >>> compress(1000, method="onebit").bytes  # 1000/8 + 4
    Fraction(129, 1)
    >>> compress(1000, method="int8", source="fp16").ratio
    Fraction(2, 1)
    >>> compress(1000, method="onebit", p=16).compressed.bytes_sent_per_rank  # N = 1024: 15·(1024/64 + 8)
    Fraction(360, 1)
    """
    m = _method(method)
    n = parse_count(elements)
    v = parse_dtype(source)
    d, idx = _options(m, v, density, index_bytes)
    size, k = _payload(m, n, v, d, idx)
    dense = n * v.bytes_per_element
    chosen = parse_scheme(scheme, method=m.name, kind=m.kind, target=m.target)
    notes = _payload_notes(m, v, d, k, idx)
    used = optional_link(link=link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    dense_cost = compressed_cost = None
    workers = None
    if used is not None and p is None:
        raise InputError("a link was given but no worker count; add p=P for the all-reduce time")
    if p is not None:
        from costmodel.collectives.evaluate import check_ranks, cost

        workers = check_ranks(p)
        dense_cost = cost("allreduce", "ring", p=workers, n=Fraction(dense), link=used or _FREE)
        element_bytes = 0 if m.target is None else parse_dtype(m.target).bytes_per_element
        compressed_cost = exchange(chosen, kind=m.kind, payload=size, elements=n, element_bytes=element_bytes,
                                   p=workers, link=used or _FREE)
        notes.append("dense: ring all-reduce of the full gradient")
        notes.append(_NOTES[chosen])
        if compressed_cost.padded_elements is not None and compressed_cost.padded_elements != n:
            notes.append(f"DeepSpeed pads the tensor to N = {compressed_cost.padded_elements:,} elements, a "
                         f"multiple of p·lcm(p, 8), so each rank's chunk packs into whole bytes")
        if used is not None and compressed_cost.time_s > dense_cost.time_s:
            notes.append("the compressed exchange is slower than the dense all-reduce here")
    sources: tuple[Cited, ...] = (m.source,)
    if m.kind == "sparse":
        sources = (*sources, LIN_2018.at("section 3 (Deep Gradient Compression)"))
    if chosen in SOURCES:
        sources = (*sources, SOURCES[chosen])
    if chosen == "reduce-scatter":
        sources = (*sources, DEEPSPEED_AT)
    return Compression(method=m, elements=n, source=v, density=d, k=k,
                       index_bytes=idx if m.kind == "sparse" else None, bytes=size, dense_bytes=dense,
                       p=workers, link=used, scheme=chosen, dense=dense_cost, compressed=compressed_cost,
                       sources=sources,
                       notes=tuple(notes))


def _options(m: CompressionMethod, v: Dtype, density: Any, index_bytes: Any) -> tuple[Fraction | None, int]:
    """The density and index width that *m* takes, refusing those it does not."""
    if m.kind == "cast":
        target = parse_dtype(m.target)
        if target.bytes_per_element >= v.bytes_per_element:
            raise InputError(f"{m.name} from {v.name} saves nothing ({target.bytes_per_element} bytes "
                             f"against {v.bytes_per_element}); compress from a wider type, e.g. source=fp32")
    if m.kind != "sparse":
        if density is not None:
            raise InputError(f"density={density!r} applies to top-k only; {m.name} keeps every element")
        if index_bytes is not None:
            raise InputError(f"index_bytes={index_bytes!r} applies to top-k only; {m.name} sends no indices")
        return None, 0
    if density is None:
        raise InputError("top-k needs a density; give density=, the kept fraction, e.g. 0.01")
    if index_bytes is None:
        return _density(density), 4
    return _density(density), positive_int(index_bytes, what="index_bytes",
                                           hint="give bytes per index, e.g. 4 for int32")


def _payload_notes(m: CompressionMethod, v: Dtype, d: Fraction | None, k: int | None, idx: int) -> list[str]:
    notes = []
    if d is not None:
        density = format_exact(d, decimal=True)
        notes.append(f"top-k keeps k = ⌈{density}·n⌉ = {k} values of {v.bytes_per_element} bytes, each "
                     f"with a {idx}-byte index: the ratio is {v.bytes_per_element}/({density}·"
                     f"{v.bytes_per_element + idx}), not 1/density")
    if m.kind == "sign":
        notes.append("one sign bit per element (⌈n/8⌉ bytes) plus one fp32 scale per tensor (4 bytes); the "
                     "ternary code {-1, 0, +1} needs more than one bit")
    if m.name == "int8":
        notes.append("FP16 → INT8 is 2×: int8 is 1 byte against fp16's 2; 4× is from fp32")
        notes.append("a per-tensor quantisation scale (4 bytes) is not counted")
    return notes


# -- error feedback ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EFStep(JSONFields):
    """One step of error feedback: the corrected gradient, what was sent, and what is carried over."""

    step: int
    corrected: tuple[Fraction, ...]
    transmitted: tuple[Fraction, ...]
    scale: Fraction | None
    residual: tuple[Fraction, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorFeedbackRun:
    """Error feedback on a constant gradient, step by step; Σ gradients − Σ sent = the residual."""

    method: str
    vector: tuple[Fraction, ...]
    density: Fraction | None
    k: int | None
    seed: int | None
    steps: tuple[EFStep, ...]
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def total_transmitted(self) -> tuple[Fraction, ...]:
        width = range(len(self.vector))
        return tuple(sum((s.transmitted[i] for s in self.steps), Fraction(0)) for i in width)

    def to_dict(self) -> dict[str, object]:
        final = self.steps[-1].residual
        total = tuple(len(self.steps) * x for x in self.vector)
        return {
            "method": self.method,
            "vector": reals(self.vector),
            "elements": len(self.vector),
            "density": None if self.density is None else real(self.density),
            "k": self.k,
            "seed": self.seed,
            "steps": [s.to_dict() for s in self.steps],
            "final_residual": reals(final),
            "final_residual_exact": [format_exact(x) for x in final],
            "total_gradient": reals(total),
            "total_transmitted": reals(self.total_transmitted),
            "payload_bytes_per_step": (-(-len(self.vector) // 8) + 4 if self.method == "onebit"
                                       else None),
            "formula": _EF_FORMULA[self.method],
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


_EF_FORMULA = {"onebit": "g += residual; sent = sign(g)·mean|g|; residual = g − sent",
               "topk": "g += residual; sent = top-k(g); residual = g − sent"}
_MAX_EF_ELEMENTS = 1000
_MAX_EF_STEPS = 100


def _random_vector(size: Any, seed: Any) -> tuple[Fraction, ...]:
    import random

    n = positive_int(size, what="size", hint="give the random vector's length, e.g. size=8")
    if seed is None:
        raise InputError("a random vector needs a seed; add seed=S (costmodel never uses a global RNG)")
    whole(seed, "seed", hint="give seed=S, e.g. 0")
    if n > _MAX_EF_ELEMENTS:
        raise InputError(f"size={n} is too long for an exact simulation; "
                         f"use at most {_MAX_EF_ELEMENTS} elements")
    rng = random.Random(seed)
    return tuple(Fraction(rng.randint(-1000, 1000), 1000) for _ in range(n))


def _ef_vector(vector: Any, size: Any, seed: Any) -> tuple[Fraction, ...]:
    if (vector is None) == (size is None):
        raise InputError("give exactly one of vector=v,v,... and size=N (with seed=S)")
    if vector is None:
        return _random_vector(size, seed)
    if seed is not None:
        raise InputError("seed= applies to a random vector; drop it, or use size=N instead of vector=")
    g0 = parse_numbers(vector, what="vector", example="0.5,-1.2,0.3")
    if len(g0) > _MAX_EF_ELEMENTS:
        raise InputError(f"{len(g0)} elements are too many for an exact simulation; use at most "
                         f"{_MAX_EF_ELEMENTS}")
    return g0


def _sign_step(g: tuple[Fraction, ...]) -> tuple[tuple[Fraction, ...], Fraction]:
    scale = sum((abs(x) for x in g), Fraction(0)) / len(g)
    return tuple(scale if x >= 0 else -scale for x in g), scale


def _topk_step(g: tuple[Fraction, ...], k: int) -> tuple[Fraction, ...]:
    keep = set(sorted(range(len(g)), key=lambda i: (-abs(g[i]), i))[:k])
    return tuple(x if i in keep else Fraction(0) for i, x in enumerate(g))


def error_feedback(vector: Any = None, *, steps: int = 3, method: Any = "onebit", density: Any = None,
                   size: Any = None, seed: Any = None) -> ErrorFeedbackRun:
    """Simulate error feedback on a constant gradient, exactly: the residual carried between steps.

    Each step: ``g = vector + residual``; send ``C(g)``; ``residual = g − C(g)``.
    For ``onebit``, C(g) = sign(g)·mean|g| (sign(0) = +1); for ``topk``, the
    k = ⌈density·n⌉ largest-magnitude entries (ties: the lower index).

    Parameters
    ----------
    vector : str or sequence of numbers, optional
        The gradient, the same at every step (``"0.5,-1.2,0.3"``), exact.
    steps : int, default 3
        Steps to simulate (at most 100).
    method : {"onebit", "topk"}
    density : optional
        For top-k: the kept fraction.
    size, seed : int, optional
        Instead of *vector*: a random vector of *size* entries in [-1, 1]
        with three decimals, from ``random.Random(seed)``.

    Returns
    -------
    ErrorFeedbackRun

    Raises
    ------
    InputError
        For none or both of *vector* and *size*, a random vector without a
        seed, more than 1000 elements or 100 steps, or a method other than
        onebit/topk.

    References
    ----------
    .. [1] Seide et al., Interspeech 2014; Karimireddy et al., ICML 2019,
       Algorithm 1.

    Examples
    --------
    >>> run = error_feedback("0.5,-1.2,0.3", steps=2)
    >>> run.steps[0].scale, run.steps[0].residual
    (Fraction(2, 3), (Fraction(-1, 6), Fraction(-8, 15), Fraction(-11, 30)))
    """
    m = _method(method)
    if m.name not in ("onebit", "topk"):
        raise InputError(f"error feedback simulates onebit or topk, not {m.name}; "
                         "use method=onebit or topk")
    g0 = _ef_vector(vector, size, seed)
    count = positive_int(steps, what="steps", hint="give the number of steps, e.g. steps=3")
    if count > _MAX_EF_STEPS:
        raise InputError(f"steps={count} is too many for an exact simulation; use at most {_MAX_EF_STEPS}")
    d = k = None
    if m.name == "topk":
        if density is None:
            raise InputError("top-k needs a density; give density=, the kept fraction, e.g. 0.25")
        d = _density(density)
        k = max(1, math.ceil(d * len(g0)))
    elif density is not None:
        raise InputError(f"density={density!r} applies to top-k only; onebit sends every sign")
    residual = tuple(Fraction(0) for _ in g0)
    out = []
    for step in range(1, count + 1):
        g = tuple(x + r for x, r in zip(g0, residual, strict=True))
        if k is None:
            sent, scale = _sign_step(g)
        else:
            sent, scale = _topk_step(g, k), None
        residual = tuple(x - s for x, s in zip(g, sent, strict=True))
        out.append(EFStep(step=step, corrected=g, transmitted=sent, scale=scale, residual=residual))
    notes = ["the gradient is the same at every step, so the carried residual is all that changes",
             "Σ gradients − Σ transmitted = the final residual: nothing is lost, only delayed"]
    if m.name == "onebit":
        notes.append("sign(0) = +1: one bit cannot encode zero; scale = mean |g| (one fp32 per tensor)")
    else:
        notes.append(f"top-k keeps k = {k} of {len(g0)} entries per step; ties go to the lower index")
    sources = (SEIDE_2014.at("error feedback (quantisation error carried to the next minibatch)"),
               KARIMIREDDY_2019.at("Algorithm 1 (EF-SignSGD)"))
    return ErrorFeedbackRun(method=m.name, vector=g0, density=d, k=k, seed=seed if vector is None else None,
                            steps=tuple(out), sources=sources, notes=tuple(notes))
