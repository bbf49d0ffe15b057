"""The latency of one tuning-table entry, computed once as a list of steps with the numbers substituted.

:func:`entry_latency` is ncclTopoTuneModel's (``src/graph/tuning.cc``) latency of one (function,
algorithm, protocol) of a version; :func:`costmodel.nccl.tuning.tune` stores the value of its last
step, :func:`costmodel.nccl.explain.latency_steps` shows the steps, so the explanation is the
computation.

References
----------
.. [1] NVIDIA, NCCL source, ``src/graph/tuning.cc`` (ncclTopoTuneModel), tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from costmodel.nccl.constants import NcclConstants
    from costmodel.nccl.system import System

__all__ = [
    "HW_NET",
    "HW_NVLINK",
    "HW_PCI",
    "Step",
    "entry_latency",
    "hw_latency",
    "log2i",
    "number_text",
    "ring_steps",
]

HW_NVLINK, HW_PCI, HW_NET = 0, 1, 2
"""The rows of ``hwLatencies``: NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET."""
_HW_NAMES = ("NVLink", "PCI", "NET")


class _Graph(Protocol):
    """What the latency reads of a graph (a :class:`~costmodel.nccl.system.Graph`, or none found)."""

    @property
    def type_intra(self) -> str: ...
    @property
    def latency_inter(self) -> Fraction: ...
    @property
    def same_channels(self) -> bool: ...


class Step(NamedTuple):
    """One line of an explanation: what is computed, the formula with numbers, the value and unit."""

    text: str
    expression: str
    value: Fraction
    unit: str


def number_text(x: Fraction | int) -> str:
    """*x* as the source writes numbers: up to 4 decimals, no trailing zeros (else 4 significant digits)."""
    text = f"{float(x):.4f}".rstrip("0").rstrip(".")
    return text if Fraction(text) == x else f"{float(x):.4g}"


_t = number_text


def log2i(n: int) -> int:
    """NCCL's ``log2i``: ⌊log₂ n⌋ for n ≥ 1 (2.30's ``log2Down`` gives -1 for 0, 2.21's 0)."""
    return n.bit_length() - 1


def hw_latency(system: System, c: NcclConstants, hw: int, algorithm: str, protocol: str) -> Fraction:
    """``hwLatencies[hw][algorithm][protocol]`` as ncclTopoTuneModel uses it: on Power CPUs the PCI
    Tree/Simple latency is the Ring's ("de-penalize Tree/Simple latency on Power systems")."""
    if system.cpu_arch == "power" and hw == HW_PCI and algorithm == "Tree" and protocol == "Simple":
        algorithm = "Ring"
    return c.hw_latency(hw, algorithm, protocol)


def ring_steps(c: NcclConstants, function: str, ranks: int, nodes: int) -> tuple[int, int]:
    """``nsteps`` and ``nInterSteps`` of a ring running *function* (2.21 and 2.30 count differently)."""
    nsteps = (
        2 * (ranks - 1)
        if function == "AllReduce"
        else ranks - 1
        if function in ("ReduceScatter", "AllGather")
        else ranks
    )
    if c.version == "2.21":
        n_inter = (
            (2 * nodes if nodes > 1 else 0)
            if function == "AllReduce"
            else nodes - 1
            if function in ("ReduceScatter", "AllGather")
            else nodes
        )
    else:
        n_inter = 0 if nodes == 1 else 2 * (nodes - 1) if function == "AllReduce" else nodes - 1
    return nsteps, n_inter


def _latency(expression: str, value: Fraction) -> Step:
    return Step("latency", f"{expression} = {_t(value)} µs", value, "µs")


def entry_latency(
    system: System, c: NcclConstants, graph: _Graph, cell: tuple[str, str, str]
) -> tuple[Step, ...]:
    """``latencies[f][a][p]`` of ncclTopoTuneModel as steps; the value of the last one is the latency.

    *cell* is (function, algorithm, protocol) in NCCL's spellings and *graph* the algorithm's graph
    (:func:`costmodel.nccl.tuning.algorithm_graph`). The formula is the algorithm's, whether or not
    it runs the function (:func:`~costmodel.nccl.tuning.tune` leaves those latencies 0).

    Examples
    --------
    >>> from costmodel.nccl.constants import CONSTANTS
    >>> from costmodel.nccl.system import System
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> for step in entry_latency(s, CONSTANTS["2.30"], s.graphs["ring"], ("AllReduce", "Ring", "LL")):
    ...     print(f"{step.text}: {step.expression}")
    steps: nsteps = 14, nInterSteps = 0
    latency: base 6.6 µs + (nsteps − nInterSteps) × 0.6 µs = 15 µs
    """
    f, a, p = cell
    nodes, ranks, ppn = system.nodes, system.ranks, system.ranks // system.nodes
    intra_hw = HW_NVLINK if graph.type_intra == "NVL" else HW_PCI
    base = c.base_latency(a, p)
    intra = hw_latency(system, c, intra_hw, a, p)
    net_algo = "Tree" if (c.version != "2.21" and ppn == 1) else a
    inter = hw_latency(system, c, HW_NET, net_algo, p) + graph.latency_inter * (2 if p == "Simple" else 1)
    if a == "Ring":
        nsteps, n_inter = ring_steps(c, f, ranks, nodes)
        hw = intra_hw if nodes == 1 else HW_NET
        if f in ("Broadcast", "Reduce"):
            step = hw_latency(system, c, hw, a if (graph.same_channels or p != "Simple") else "Tree", p)
            count = 1 if graph.same_channels else nsteps
            value = base + count * step
            return (_latency(f"base {_t(base)} µs + {count} × hw {_HW_NAMES[hw]} {_t(step)} µs", value),)
        steps = Step("steps", f"nsteps = {nsteps}, nInterSteps = {n_inter}", Fraction(nsteps), "")
        intra_text = f"{_t(intra)} µs"
        if nodes > 1:
            overhead = c.net_overhead(system.cpu_arch, system.cpu_vendor) * (3 if p == "Simple" else 1)
            intra_text = f"max({_t(intra)}, net overhead {_t(overhead)}) µs"
            intra = max(intra, overhead)
        value = base + (nsteps - n_inter) * intra + n_inter * inter
        text = f"base {_t(base)} µs + (nsteps − nInterSteps) × {intra_text}"
        if n_inter:
            inter_text = f"hw NET {net_algo}/{p} {_t(hw_latency(system, c, HW_NET, net_algo, p))} µs" + (
                f" + latencyInter {_t(graph.latency_inter)} µs{' × 2' if p == 'Simple' else ''}"
                if graph.latency_inter
                else ""
            )
            text += f" + nInterSteps × {_t(inter)} µs ({inter_text})"
        return steps, _latency(text, value)
    if a == "Tree":
        value = base + 2 * ((ppn - 1) * intra + log2i(nodes) * inter)
        text = f"base {_t(base)} µs + 2 × (({ppn} − 1) × {_t(intra)} µs + log2({nodes}) × {_t(inter)} µs)"
    elif a == "CollNetDirect":
        value = base + 2 * (min(1, ppn - 1) * intra + (ppn - 1) * Fraction("0.4")) + inter
        text = (
            f"base {_t(base)} µs + 2 × (min(1, {ppn} − 1) × {_t(intra)} µs + ({ppn} − 1) × 0.4 µs) "
            f"+ {_t(inter)} µs"
        )
    elif a == "CollNetChain":
        value = base + 2 * (ppn - 1) * intra + inter
        text = f"base {_t(base)} µs + 2 × ({ppn} − 1) × {_t(intra)} µs + {_t(inter)} µs"
    elif a == "NVLS":
        value = intra + (inter if nodes > 1 else 0)
        text = f"hw {_HW_NAMES[intra_hw]} {_t(intra)} µs" + (f" + NET {_t(inter)} µs" if nodes > 1 else "")
    elif a == "NVLSTree":
        value = base + intra + 2 * log2i(nodes) * inter
        text = f"base {_t(base)} µs + {_t(intra)} µs + 2 × log2({nodes}) × {_t(inter)} µs"
    else:  # PAT
        value = base + log2i(nodes) * (inter / Fraction("3.5")) + ranks * Fraction("2.8")
        text = f"base {_t(base)} µs + log2({nodes}) × {_t(inter)} µs / 3.5 + {ranks} × 2.8 µs"
    return (_latency(text, value),)
