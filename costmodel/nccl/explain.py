"""The latency of one tuning-table entry written out with NCCL's constants substituted.

Each formula is ncclTopoTuneModel's (``src/graph/tuning.cc``) for that algorithm; the value of the
last step equals the entry's ``latency_us`` (a test checks it for every enabled entry).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from costmodel.nccl.tuning import TuningEntry, TuningTable, algorithm_graph, log2i

__all__ = ["Step", "latency_steps", "number_text"]


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


def latency_steps(table: TuningTable, e: TuningEntry) -> tuple[Step, ...]:  # noqa: PLR0912, PLR0915 - one branch per algorithm, as in tuning.cc
    """Steps deriving ``e.latency_us`` from the constants."""
    c, s = table.constants, table.system
    v21 = c.version == "2.21"
    f, a, p = e.function, e.algorithm, e.protocol
    g = algorithm_graph(s, c, a)
    nodes, ranks, ppn = s.nodes, s.ranks, s.ranks // s.nodes
    hw_names = ("NVLink", "PCI", "NET")
    intra_hw = 0 if g.type_intra == "NVL" else 1
    base = c.base_latency(a, p)
    intra = c.hw_latency(intra_hw, a, p)
    if s.cpu_arch == "power" and intra_hw == 1 and a == "Tree" and p == "Simple":
        intra = c.hw_latency(1, "Ring", "Simple")
    net_algo = "Tree" if (not v21 and ppn == 1) else a
    inter = c.hw_latency(2, net_algo, p) + g.latency_inter * (2 if p == "Simple" else 1)
    inter_text = f"hw NET {net_algo}/{p} {_t(c.hw_latency(2, net_algo, p))} µs" + (
        f" + latencyInter {_t(g.latency_inter)} µs{' × 2' if p == 'Simple' else ''}"
        if g.latency_inter
        else ""
    )
    steps: list[Step] = []
    if a == "Ring":
        nsteps = (
            2 * (ranks - 1)
            if f == "AllReduce"
            else ranks - 1
            if f in ("AllGather", "ReduceScatter")
            else ranks
        )
        hw = intra_hw if nodes == 1 else 2
        if f in ("Broadcast", "Reduce"):
            step = c.hw_latency(hw, a if (g.same_channels or p != "Simple") else "Tree", p)
            count = 1 if g.same_channels else nsteps
            value = base + count * step
            steps.append(
                Step(
                    "latency",
                    f"base {_t(base)} µs + {count} × hw {hw_names[hw]} {_t(step)} µs = {_t(value)} µs",
                    value,
                    "µs",
                )
            )
            return tuple(steps)
        if v21:
            n_inter = (2 * nodes if nodes > 1 else 0) if f == "AllReduce" else nodes - 1
        else:
            n_inter = 0 if nodes == 1 else 2 * (nodes - 1) if f == "AllReduce" else nodes - 1
        steps.append(Step("steps", f"nsteps = {nsteps}, nInterSteps = {n_inter}", Fraction(nsteps), ""))
        intra_text = f"{_t(intra)} µs"
        if nodes > 1:
            overhead = c.net_overhead(s.cpu_arch, s.cpu_vendor) * (3 if p == "Simple" else 1)
            intra_text = f"max({_t(intra)}, net overhead {_t(overhead)}) µs"
            intra = max(intra, overhead)
        value = base + (nsteps - n_inter) * intra + n_inter * inter
        text = f"base {_t(base)} µs + (nsteps − nInterSteps) × {intra_text}"
        if n_inter:
            text += f" + nInterSteps × {_t(inter)} µs ({inter_text})"
        steps.append(Step("latency", f"{text} = {_t(value)} µs", value, "µs"))
    elif a == "Tree":
        value = base + 2 * ((ppn - 1) * intra + log2i(nodes) * inter)
        steps.append(
            Step(
                "latency",
                f"base {_t(base)} µs + 2 × (({ppn} − 1) × {_t(intra)} µs + log2({nodes}) × "
                f"{_t(inter)} µs) = {_t(value)} µs",
                value,
                "µs",
            )
        )
    elif a == "CollNetDirect":
        value = base + 2 * (min(1, ppn - 1) * intra + (ppn - 1) * Fraction("0.4")) + inter
        steps.append(
            Step(
                "latency",
                f"base {_t(base)} µs + 2 × (min(1, {ppn} − 1) × {_t(intra)} µs + ({ppn} − 1) × "
                f"0.4 µs) + {_t(inter)} µs = {_t(value)} µs",
                value,
                "µs",
            )
        )
    elif a == "CollNetChain":
        value = base + 2 * (ppn - 1) * intra + inter
        steps.append(
            Step(
                "latency",
                f"base {_t(base)} µs + 2 × ({ppn} − 1) × {_t(intra)} µs + {_t(inter)} µs = {_t(value)} µs",
                value,
                "µs",
            )
        )
    elif a == "NVLS":
        value = intra + (inter if nodes > 1 else 0)
        extra = f" + NET {_t(inter)} µs" if nodes > 1 else ""
        steps.append(
            Step(
                "latency",
                f"hw {hw_names[intra_hw]} {_t(intra)} µs{extra} = {_t(value)} µs",
                value,
                "µs",
            )
        )
    elif a == "NVLSTree":
        value = base + intra + 2 * log2i(nodes) * inter
        steps.append(
            Step(
                "latency",
                f"base {_t(base)} µs + {_t(intra)} µs + 2 × log2({nodes}) × {_t(inter)} µs = {_t(value)} µs",
                value,
                "µs",
            )
        )
    else:  # PAT
        value = base + log2i(nodes) * (inter / Fraction("3.5")) + ranks * Fraction("2.8")
        steps.append(
            Step(
                "latency",
                f"base {_t(base)} µs + log2({nodes}) × {_t(inter)} µs / 3.5 + {ranks} × 2.8 µs = "
                f"{_t(value)} µs",
                value,
                "µs",
            )
        )
    return tuple(steps)
