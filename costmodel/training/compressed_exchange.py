"""How a compressed gradient crosses the workers: the exchange schemes and their collective steps.

Three schemes, each a sequence of collective calls priced by the formula registry:

==============  ===========================================  =====================================
scheme          steps (n of each collective in bytes)        bytes sent per rank
==============  ===========================================  =====================================
allreduce       ring all-reduce of the cast payload P        2(p − 1)/p·P
allgather       ring all-gather of every worker's P (n = pP)  (p − 1)·P
reduce-scatter  all-to-all of P's p chunks, each rank        2(p − 1)/p·P (+ scales, below)
                re-compresses the sum of its chunk, ring
                all-gather of the p compressed chunks
==============  ===========================================  =====================================

*allreduce* is for fp16/bf16, which sum in their own format.  *allgather*
sends every worker's whole payload to every other one, and each worker
decompresses and sums locally (signSGD's majority vote, Bernstein et al.
2018, run without a parameter server; gather-style sparse exchanges).
*reduce-scatter* is DeepSpeed's compressed all-reduce (1-bit Adam, Tang et
al. 2021, section 4; ``deepspeed/runtime/comm/nccl.py``,
``NcclBackend.compressed_allreduce``): each worker compresses its whole
gradient with worker error feedback and sends chunk j to rank j
(``all_to_all_single``); rank j sums the p chunks it received, adds its server
error, compresses the sum again (server error feedback) and the compressed
chunks are all-gathered (``all_gather``).

For ``onebit`` the model follows DeepSpeed call by call:

- the tensor is padded with zeros to N, the next multiple of p·lcm(p, 8)
  elements (``deepspeed/runtime/fp16/onebit/adam.py``, ``corrected_tensor_size``
  with ``divider = lcm(p, 8)``), so each rank's chunk N/p packs into whole bytes;
- phase 1: ``all_to_all_single`` of the packed signs (N/8 bytes, p chunks of
  N/(8p)) and ``all_gather`` of one fp32 worker scale per rank (4p bytes);
- phase 2: ``all_gather`` of the server's packed chunk signs (p × N/(8p)) and of
  one fp32 server scale per chunk (4p bytes).

Per rank that is (p − 1)·(N/(4p) + 8) bytes in 4 collective calls.  The
scales are ‖x‖₂/√numel (``worker_scale``, ``server_scale``).  For int8/fp8
(no DeepSpeed counterpart in ``nccl.py``) the same two phases carry the cast
payload, with no scales counted, as for the cast payload itself.

Local work (packing, decompressing, summing) is not charged: γ is not applied.

References
----------
.. [1] H. Tang et al., "1-bit Adam: Communication Efficient Large-Scale
   Training with Adam's Convergence Speed", ICML 2021, section 4 (compressed
   all-reduce with worker and server error feedback).
.. [2] DeepSpeed, ``deepspeed/runtime/comm/nccl.py``
   (``NcclBackend.compressed_allreduce``) and
   ``deepspeed/runtime/fp16/onebit/adam.py`` (the padding).
.. [3] J. Bernstein et al., "signSGD: Compressed Optimisation for Non-Convex
   Problems", ICML 2018, section 3 (majority vote).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.collectives.result import AlgorithmCost
from costmodel.errors import InputError
from costmodel.names import Names
from costmodel.params import Link
from costmodel.references import BERNSTEIN_2018, DEEPSPEED, TANG_2021

__all__ = ["SCHEMES", "Exchange", "ExchangeStep", "default_scheme", "exchange", "onebit_padded",
           "parse_scheme"]

SCHEMES = Names("compression scheme", {
    "allgather": ("all-gather", "gather", "ag"),
    "reduce-scatter": ("reducescatter", "rs", "deepspeed", "two-phase"),
    "allreduce": ("all-reduce", "ar"),
})
"""Exchange schemes: the names ``--scheme`` takes."""

SOURCES = {
    "allgather": BERNSTEIN_2018.at("section 3, majority vote: every worker's signs reach the voter"),
    "reduce-scatter": TANG_2021.at("section 4, compressed all-reduce with worker and server error feedback"),
}
DEEPSPEED_AT = DEEPSPEED.at("deepspeed/runtime/comm/nccl.py, NcclBackend.compressed_allreduce")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeStep:
    """One collective call of an exchange: what it carries and what it costs."""

    what: str
    collective: str
    n_bytes: Fraction
    cost: AlgorithmCost

    def to_dict(self, timed: bool) -> dict[str, object]:
        c = self.cost
        return {"what": self.what, "collective": self.collective, "algorithm": c.algorithm,
                "n_bytes": real(self.n_bytes), "rounds": c.rounds,
                "bytes_sent_per_rank": real(c.bytes_sent_per_rank), "formula": c.formula,
                "time_s": real(c.time_s) if timed else None}


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """A compressed gradient's exchange: its scheme and the collective calls it makes, in order."""

    scheme: str
    steps: tuple[ExchangeStep, ...]
    padded_elements: int | None = None

    @property
    def time_s(self) -> Fraction:
        return sum((s.cost.time_s for s in self.steps), Fraction(0))

    @property
    def bytes_sent_per_rank(self) -> Fraction:
        return sum((s.cost.bytes_sent_per_rank for s in self.steps), Fraction(0))

    @property
    def rounds(self) -> int:
        return sum(s.cost.rounds for s in self.steps)

    @property
    def collective(self) -> str:
        return " + ".join(s.collective for s in self.steps)

    @property
    def algorithm(self) -> str:
        return " + ".join(s.cost.algorithm for s in self.steps)

    def to_dict(self, timed: bool) -> dict[str, object]:
        return {"scheme": self.scheme, "collective": self.collective, "algorithm": self.algorithm,
                "rounds": self.rounds, "bytes_sent_per_rank": real(self.bytes_sent_per_rank),
                "formula": " + ".join(f"[{s.cost.formula}]" for s in self.steps),
                "time_s": real(self.time_s) if timed else None,
                "padded_elements": self.padded_elements,
                "steps": [s.to_dict(timed) for s in self.steps]}


def default_scheme(kind: str, target: str | None) -> str:
    """The scheme a method uses unless told: all-reduce for a cast that sums in its own format,
    all-gather for sparse payloads, DeepSpeed's reduce-scatter for the rest."""
    if kind == "cast" and target in ("fp16", "bf16"):
        return "allreduce"
    return "allgather" if kind == "sparse" else "reduce-scatter"


def parse_scheme(name: Any, *, method: str, kind: str, target: str | None) -> str:
    """The scheme *name* (or the method's default when ``None``), refusing one the method cannot use."""
    default = default_scheme(kind, target)
    if name is None:
        return default
    scheme = SCHEMES.resolve(str(name))
    if scheme == default:
        return scheme
    if default == "allreduce":
        raise InputError(f"{method} sums in its own format, so it is a plain ring all-reduce; "
                         "drop scheme= (allgather and reduce-scatter are for fp8, int8 and onebit)")
    if kind == "sparse":
        raise InputError(f"{method} is modelled as an all-gather of every worker's payload only (summed "
                         "sparse chunks are no longer sparse); drop scheme= or use scheme=allgather")
    if scheme == "allreduce":
        raise InputError(f"{method} payloads do not sum in their own format; "
                         "use scheme=allgather or scheme=reduce-scatter")
    return scheme


def onebit_padded(n: int, p: int) -> int:
    """N: n rounded up to a multiple of p·lcm(p, 8), as DeepSpeed's 1-bit optimisers pad the tensor
    (``deepspeed/runtime/fp16/onebit/adam.py``: ``divider = int(size * 8 / gcd(size, 8))``)."""
    unit = p * (p * 8 // math.gcd(p, 8))
    return -(-n // unit) * unit


def exchange(scheme: str, *, kind: str, payload: Fraction, elements: int, element_bytes: int, p: int,
             link: Link) -> Exchange:
    """The collective calls of *scheme* for a payload of *payload* bytes per worker, priced on *link*.

    *elements* and *element_bytes* size the reduce-scatter phases (the cast
    payload, or for ``kind == "sign"`` DeepSpeed's padded signs and scales).
    """
    from costmodel.collectives.evaluate import cost

    def step(what: str, collective: str, algorithm: str, n: Fraction) -> ExchangeStep:
        return ExchangeStep(what=what, collective=collective, n_bytes=n,
                            cost=cost(collective, algorithm, p=p, n=n, link=link))

    if scheme == "allreduce":
        return Exchange(scheme=scheme, steps=(step("cast payload", "allreduce", "ring", payload),))
    if scheme == "allgather":
        return Exchange(scheme=scheme, steps=(step("every worker's payload", "allgather", "ring",
                                                   p * payload),))
    if kind == "sign":
        padded = onebit_padded(elements, p)
        signs = Fraction(padded, 8)
        scales = Fraction(4 * p)
        return Exchange(scheme=scheme, padded_elements=padded, steps=(
            step("worker signs, chunk j to rank j", "alltoall", "pairwise", signs),
            step("worker scales (one fp32 each)", "allgather", "ring", scales),
            step("server signs of each chunk", "allgather", "ring", signs),
            step("server scales (one fp32 per chunk)", "allgather", "ring", scales),
        ))
    whole = Fraction(elements * element_bytes)
    return Exchange(scheme=scheme, steps=(
        step("worker payload, chunk j to rank j", "alltoall", "pairwise", whole),
        step("server payload of each chunk", "allgather", "ring", whole),
    ))
