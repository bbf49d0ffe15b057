"""Is a cluster healthy?  An nccl-tests log against what it should measure: :func:`check`.

Each size of the log is set beside the prediction of what nccl-tests measures on the hardware given
(:func:`costmodel.nccl.measured.as_measured`: NCCL's own choice with the calibrated overheads).  The
sizes fall in two bands, those below 1 MiB (latency) and those from 1 MiB (bandwidth), the bands on
which the prediction's accuracy is stated: a median |busbw error| of 15 % from 1 MiB and 30 % below
is its target (docs/calibration.md).  A band's verdict:

* **low** when its median measured busbw over its median expected busbw is below 1 − 2 × target
  (0.70 from 1 MiB, 0.40 below): more than twice the prediction's own error;
* **suspicious** when the log shows something a healthy run does not (wrong results, a collapse, an
  in-place/out-of-place gap);
* **healthy** otherwise.

Known patterns are then named, each with the public thread its cause comes from:

* ``wrong-results``: nccl-tests found wrong results (``#wrong`` > 0, or an old log's max error above
  10⁻³): the bandwidth of such a run means nothing (NVIDIA/nccl-tests#37).
* ``separate-runs``: the log holds several runs side by side, each process listing its own ranks from
  0: the processes never formed one communicator, as when mpirun starts an nccl-tests build without
  MPI (NVIDIA/nccl-tests#182, #27); no row measures the collective meant.
* ``tree-2-nodes``, ``nvls-inflation``, ``above-ring``: the busbw at the largest size is more than
  15 % above what a ring carries on the hardware (as nccl-tests measures it).  busbw assumes a ring's
  traffic; at 2 nodes NCCL's tree sends each byte of an all-reduce across the network once
  (NVIDIA/nccl-tests#309 and #196), and NVLS reduces inside the NVSwitch (NVIDIA/nccl-tests#212), so
  both show a busbw above the links' rate (``above-ring`` for other collectives and shapes).
  Explained, not a fault.
* ``above-described``: as above, but the run is a ring (NCCL's choice, or ``NCCL_ALGO=Ring``), whose
  traffic busbw counts: the hardware carries more than it is described with; describe it as it is.
* ``fewer-nics``: on several nodes, a low band whose busbw at its three largest sizes (the plateau)
  sits at about 1/2, 1/4 or 1/8 of the expected one (within 15 %), as when only some of the NICs (or
  channels) carry the traffic (NVIDIA/nccl-tests#128: one usable NIC of several).
* ``slow-network``: on several nodes, a low band whose plateau sits below what missing NICs or channels
  explain (under 1/k of the expected for every k of 2, 4, 8 the ring's channels allow): the network
  path itself is slow, as a fall back to TCP sockets is.
* ``p2p-off``: on one node, a low band whose busbw peaks at or below a PCIe 4.0 x16 link's 32 GB/s
  where at least twice that is expected: the GPUs talk through PCIe or host memory, as with P2P
  disabled (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC: NVIDIA/nccl-tests#228), PCIe ACS, or no NVLink.
* ``inplace-gap``: in-place and out-of-place times differ by more than 15 % (median from 1 MiB);
  they run the same kernels, so a gap points to the buffers or to noise; rerun.
* ``collapse``: a size from 1 MiB reaches less than a third of the best busbw of the smaller sizes
  (:data:`COLLAPSE`; the fit warns of the same fall between adjacent sizes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.exact import median
from costmodel.nccl.compare import CompareRow, Comparison, compare
from costmodel.nccl.measured import (
    LARGE,
    LARGE_TARGET,
    SMALL_TARGET,
    Overheads,
    as_measured,
    shipped_overheads,
)
from costmodel.nccl.predict import predict
from costmodel.nccl.system import System

__all__ = ["Band", "Check", "Finding", "check", "unreadable"]

PLATEAU = 3
"""The largest sizes a low band's cause is read from."""
COLLAPSE = 3
"""A size whose busbw is below the best of the smaller sizes by more than this factor is a collapse (the
factor :func:`costmodel.calibration.fit` uses between adjacent sizes)."""
_PCIE4_X16 = 32 * 10**9
"""PCIe 4.0 x16: 16 GT/s × 16 lanes × 128/130 encoding ≈ 31.5 GB/s per direction (PCI-SIG PCIe 4.0
specification), rounded up."""
_SOURCES = {
    "wrong-results": ("NVIDIA/nccl-tests#37: wrong results at 4 GiB, a bug NVIDIA fixed (sjeaugey)",),
    "separate-runs": ("NVIDIA/nccl-tests#182: two nodes each running the test alone; build nccl-tests with "
                      "MPI=1, after make clean (sjeaugey)",
                      "NVIDIA/nccl-tests#27: the same, from a build made before MPI=1 (kwen2501)"),
    "tree-2-nodes": ("NVIDIA/nccl-tests#309: 2 × 8 H100, busbw above the NICs' rate with the default "
                     "algorithms and at it with NCCL_ALGO=Ring",
                     "NVIDIA/nccl-tests#196: the tree at 2 nodes crosses the network once (sjeaugey)"),
    "nvls-inflation": ("NVIDIA/nccl-tests#212: NVLS all-reduce busbw about 480 GB/s on H100, 370 without "
                       "(sjeaugey)",),
    "above-ring": ("NVIDIA/nccl-tests#196: busbw counts a ring's traffic; other algorithms move less "
                   "(sjeaugey)",),
    "fewer-nics": ("NVIDIA/nccl-tests#128: only one NIC usable, the busbw of one (sjeaugey)",),
    "p2p-off": ("NVIDIA/nccl-tests#228: NCCL_P2P_LEVEL=LOC turned P2P off (kiskra-nvidia)",),
    "above-described": (),
    "slow-network": (),
    "inplace-gap": (),
    "collapse": (),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Band(JSONFields):
    """The sizes below 1 MiB or from 1 MiB: expected and measured busbw (medians), their ratio, the
    verdict and its reason."""

    name: str
    from_bytes: int
    to_bytes: int
    sizes: int
    expected_busbw_bytes_per_s: Fraction
    measured_busbw_bytes_per_s: Fraction
    ratio: Fraction
    verdict: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding(JSONFields):
    """A known pattern seen in the log: its name, what it means, whether it is a fault, its sources."""

    pattern: str
    fault: bool
    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """A log's verdict (the worst of its bands'), the bands, the findings and the comparison."""

    verdict: str
    bands: tuple[Band, ...]
    findings: tuple[Finding, ...]
    comparison: Comparison | None
    """None when the log has no valid row to compare (:func:`unreadable`)."""
    path: str
    source: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values, SI units in the keys."""
        return {"verdict": self.verdict, "path": self.path, "source": self.source,
                "bands": [b.to_dict() for b in self.bands], "findings": [f.to_dict() for f in self.findings],
                "comparison": None if self.comparison is None else self.comparison.to_dict(),
                "notes": list(self.notes)}


def _gbs(x: Fraction) -> str:
    return f"{float(x) / 1e9:.3g} GB/s"


def _size(n: int) -> str:
    from costmodel.units import format_size

    return format_size(n)


def _ring_busbw(c: Comparison, system: System, n: int, overheads: Overheads) -> Fraction | None:
    """The busbw a ring reaches at *n* bytes as nccl-tests measures it, in *c*'s release (None when no
    ring runs)."""
    from costmodel.errors import InputError

    try:
        p = predict(c.collective, n, system, version=c.version, algo="ring")
    except InputError:
        return None
    return as_measured(p, overheads).busbw_bytes_per_s


def unreadable(path: str, error: Any, source: str | None = None) -> Check:
    """The verdict on a log with no valid row to compare, from the reader's *error*: every row has wrong
    results (:class:`~costmodel.errors.WrongResults`, its reasons listed), or the log holds several runs
    side by side (:class:`~costmodel.errors.SeparateRuns`, its message the finding)."""
    from costmodel.errors import SeparateRuns

    if isinstance(error, SeparateRuns):
        findings = [Finding(pattern="separate-runs", fault=True, sources=_SOURCES["separate-runs"], text=(
            f"{error.runs} runs of the test side by side ({error.evidence}): each process ran the test "
            "alone, not one communicator across them, so no row measures the collective meant; build "
            "nccl-tests with MPI=1 (after make clean) and rerun"))]
    else:
        findings = _wrong(error.refusals)
    return Check(verdict="suspicious", bands=(), findings=tuple(findings), comparison=None, path=path,
                 source=source)


def _wrong(warnings: tuple[str, ...]) -> list[Finding]:
    # each reader's warning ends in what the finding says once ("...: nccl-tests found wrong results; row
    # refused"): the finding lists where, then says it
    said = ": nccl-tests found wrong results; row refused"
    wrong = [w.removesuffix(said) for w in warnings if "wrong results" in w]
    if not wrong:
        return []
    refused = "refused" if len(wrong) == 1 else "each refused"
    return [Finding(pattern="wrong-results", fault=True, sources=_SOURCES["wrong-results"],
                    text=f"nccl-tests found wrong results ({'; '.join(wrong)}; {refused}): the bandwidth of "
                    "such a run means nothing; rerun with the same size, and test the GPUs")]


def _collapse(c: Comparison) -> list[Finding]:
    best = Fraction(0)
    for r in c.rows:
        if r.n_bytes >= LARGE and best > 0 and r.measured_busbw_bytes_per_s * COLLAPSE < best:
            return [Finding(pattern="collapse", fault=True, sources=(), text=(
                f"busbw falls to {_gbs(r.measured_busbw_bytes_per_s)} at {_size(r.n_bytes)} from "
                f"{_gbs(best)} at a smaller size: a collapse (network congestion, a memory limit, "
                "a retried transfer); rerun with NCCL_DEBUG=INFO"))]
        best = max(best, r.measured_busbw_bytes_per_s)
    return []


def _gap(large: list[CompareRow], measurements: Any) -> list[Finding]:
    ins = {r.n_bytes: r.time_s for r in measurements.select(in_place=True)}
    gaps = [abs(ins[r.n_bytes] / r.measured_s - 1) for r in large if r.n_bytes in ins]
    if not gaps or median(gaps) <= LARGE_TARGET:
        return []
    return [Finding(pattern="inplace-gap", fault=True, sources=(), text=(
        f"in-place and out-of-place times differ by a median {float(median(gaps)):.0%} from 1 MiB; "
        "they run the same kernels, so the gap points to the buffers or to noise: rerun"))]


def _above_ring(c: Comparison, large: list[CompareRow], system: System, overheads: Overheads
                ) -> list[Finding]:
    if not large:
        return []
    top = large[-1]  # the largest size: a log's sizes increase
    ring = _ring_busbw(c, system, top.n_bytes, overheads)
    if ring is None or top.measured_busbw_bytes_per_s <= ring * (1 + LARGE_TARGET):
        return []
    if top.algorithm.lower() == "ring":  # what NCCL ran (its choice, or NCCL_ALGO) is the ring busbw counts
        return [Finding(pattern="above-described", fault=False, sources=(), text=(
            f"busbw {_gbs(top.measured_busbw_bytes_per_s)} at {_size(top.n_bytes)} is "
            f"{float(top.measured_busbw_bytes_per_s / ring):.2f}× what a ring carries on the hardware given "
            f"({_gbs(ring)}), and the run is a ring: the hardware carries more than it is described with "
            "(more or faster NICs or links, more channels, as NCCL_MIN_NCHANNELS asks); describe it as it "
            "is (costmodel nccl preset reads an NCCL_DEBUG=INFO log) before reading the verdict"))]
    if system.nodes == 2 and c.collective == "allreduce":
        pattern = "tree-2-nodes"
        why = "at 2 nodes NCCL's tree crosses the network once per byte while busbw counts a ring's traffic"
    elif system.nodes == 1 and system.nvls:
        pattern = "nvls-inflation"
        why = "NVLS reduces inside the NVSwitch, so the GPUs' links carry less than busbw counts"
    else:
        pattern, why = "above-ring", "the algorithm NCCL ran moves less than a ring, which busbw assumes"
    return [Finding(pattern=pattern, fault=False, sources=_SOURCES[pattern], text=(
        f"busbw {_gbs(top.measured_busbw_bytes_per_s)} at {_size(top.n_bytes)} is "
        f"{float(top.measured_busbw_bytes_per_s / ring):.2f}× what a ring carries on this hardware "
        f"({_gbs(ring)}): {why}; explained, not a fault"))]


def _low(large: list[CompareRow], system: System) -> list[Finding]:
    """The named causes of a low bandwidth band, read from its plateau: its :data:`PLATEAU` largest sizes,
    where the bandwidth term dominates both the measured and the expected time."""
    top = large[-PLATEAU:]
    ratio = median(r.measured_busbw_bytes_per_s / r.predicted_busbw_bytes_per_s for r in top)
    if system.nodes > 1:
        channels = system.graphs["ring"].channels  # a share of them, or of their NICs, can be missing
        shares = [k for k in (2, 4, 8) if k <= channels]
        for k in shares:
            if abs(ratio * k - 1) <= LARGE_TARGET:
                return [Finding(pattern="fewer-nics", fault=True, sources=_SOURCES["fewer-nics"], text=(
                    f"busbw at the largest sizes is about 1/{k} of the expected ({float(ratio):.2f}×), as if "
                    f"1/{k} of the NICs or channels carried the traffic: check NCCL_DEBUG=INFO's NET/IB "
                    "lines (NICs found, GPU Direct RDMA) and NCCL_IB_HCA"))]
        least = Fraction(1, max(shares, default=1))
        if ratio < least * (1 - LARGE_TARGET):
            return [Finding(pattern="slow-network", fault=True, sources=(), text=(
                f"busbw at the largest sizes is {float(ratio):.2f}× the expected, below what missing NICs or "
                f"channels explain on hardware of {channels} ring channel{'s' if channels > 1 else ''}: the "
                "network path itself runs slow; check NCCL_DEBUG=INFO's 'Using network' line (Socket, not "
                "IB, is TCP: RDMA devices missing from the host or container, NCCL_IB_HCA, the GID index) "
                "and the links' negotiated rate"))]
        return []
    best = max(r.measured_busbw_bytes_per_s for r in top)
    expected = max(r.predicted_busbw_bytes_per_s for r in top)
    if best <= _PCIE4_X16 and expected >= 2 * best:
        return [Finding(pattern="p2p-off", fault=True, sources=_SOURCES["p2p-off"], text=(
            f"busbw peaks at {_gbs(best)}, a PCIe link's rate, where {_gbs(expected)} is expected: the GPUs "
            "talk through PCIe or host memory (P2P disabled by NCCL_P2P_DISABLE or NCCL_P2P_LEVEL, PCIe "
            "ACS on, a VM without P2P, no NVLink); check nvidia-smi topo -m and NCCL_DEBUG=INFO's P2P "
            "lines"))]
    return []


def _band(name: str, rows: list[Any], target: Fraction) -> Band:
    expected = median(r.predicted_busbw_bytes_per_s for r in rows)
    measured = median(r.measured_busbw_bytes_per_s for r in rows)
    ratio = measured / expected  # the band's medians, as its row shows them
    floor = 1 - 2 * target
    if ratio < floor:
        verdict = "low"
        reason = (f"measured busbw is {float(ratio):.2f}× the expected, below {float(floor):.2f} (twice the "
                  f"prediction's {float(target):.0%} target error)")
    else:
        verdict, reason = "healthy", f"measured busbw is {float(ratio):.2f}× the expected"
    return Band(name=name, from_bytes=rows[0].n_bytes, to_bytes=rows[-1].n_bytes, sizes=len(rows),
                expected_busbw_bytes_per_s=expected, measured_busbw_bytes_per_s=measured,
                ratio=ratio, verdict=verdict, reason=reason)


_FAULTS = {"wrong-results": None, "collapse": "large", "inplace-gap": "large"}
"""The findings that make a band suspicious: which band (None: both)."""


def check(measurements: Any, system: System, *, version: str | None = None, algo: str | None = None,
          proto: str | None = None, facts: Any = None, overheads: Overheads | None = None) -> Check:
    """The verdict on *measurements* (an nccl-tests log) on *system* (see the module notes).

    *version*, *algo*, *proto* and *facts* are :func:`~costmodel.nccl.compare.compare`'s; *overheads*
    those of the prediction (default: the shipped ones).
    """
    o = (shipped_overheads() if overheads is None else overheads).launched(
        getattr(facts, "gpus_per_thread", None))
    c = compare(measurements, system, version=version, algo=algo, proto=proto, facts=facts, overheads=o)
    bands = []
    small = [r for r in c.rows if r.n_bytes < LARGE]
    large_rows = [r for r in c.rows if r.n_bytes >= LARGE]
    if small:
        bands.append(_band("below 1 MiB", small, SMALL_TARGET))
    large = _band("from 1 MiB", large_rows, LARGE_TARGET) if large_rows else None
    if large is not None:
        bands.append(large)
    findings = [*_wrong(measurements.warnings), *_collapse(c), *_gap(large_rows, measurements),
                *_above_ring(c, large_rows, system, o)]
    if large is not None and large.verdict == "low":
        findings += _low(large_rows, system)
    marked = []
    for b in bands:
        where = "large" if b is large else "small"
        faults = [f.pattern for f in findings if f.pattern in _FAULTS and _FAULTS[f.pattern] in (None, where)]
        marked.append(replace(b, verdict="suspicious", reason=f"{', '.join(faults)}: see the findings")
                      if faults else b)
    order = ("healthy", "low", "suspicious")
    verdict = max((b.verdict for b in marked), key=order.index, default="healthy")
    if any(f.pattern == "wrong-results" for f in findings):
        verdict = "suspicious"
    return Check(verdict=verdict, bands=tuple(marked), findings=tuple(findings), comparison=c, path=c.path,
                 source=c.source, notes=c.notes)

