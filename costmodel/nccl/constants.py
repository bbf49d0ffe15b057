"""The constants of NCCL's tuning model, one frozen table per NCCL version.

Every number is the exact :class:`~fractions.Fraction` of the decimal text written in NCCL's
source (``Fraction("0.6")`` is 3/5, not the float nearest 0.6); NCCL itself computes in
``float``. ``CONSTANTS["2.30"]`` is read from tag ``v2.30.7-1``, ``CONSTANTS["2.21"]`` from tag
``v2.21.5-1`` of https://github.com/NVIDIA/nccl. Each field's docstring names the file and the
array or macro it copies; the formulas that use them are in :mod:`costmodel.nccl.tuning` and
:mod:`costmodel.nccl.choose`.

Tables are nested tuples indexed as in the source: ``[algorithm][protocol]`` in the version's
:attr:`NcclConstants.algorithms` and :attr:`NcclConstants.protocols` orders,
``[hardware][algorithm][protocol]`` with hardware NVLink, PCI, NET, and
``[compute-capability index][node bucket]`` with node buckets 1, 2 and ≥ 4 (index
``min(nodes, 3) - 1``).

References
----------
.. [1] NVIDIA, NCCL source, ``src/graph/tuning.cc`` (ncclTopoTuneModel, ncclTopoGetAlgoTime),
   ``src/enqueue.cc``, ``src/include/device.h``, ``src/graph/topo.h``, tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["CONSTANTS", "VERSIONS", "NcclConstants", "Table2", "Table3"]

Table2 = tuple[tuple[Fraction, ...], ...]
"""A two-index table of exact numbers (``[row][column]``)."""

Table3 = tuple[Table2, ...]
"""A three-index table (``[hardware][algorithm][protocol]``)."""


def _rows(*rows: str) -> Table2:
    """Rows of decimal text as written in the source, e.g. ``_rows("6.8 14.0 8.4")``."""
    return tuple(tuple(Fraction(x) for x in row.split()) for row in rows)


@dataclass(frozen=True, slots=True, kw_only=True)
class NcclConstants:
    """The constants of one NCCL version's tuning model (see the module docstring for sources).

    Fields whose name ends in ``_bws`` are GB/s (10⁹ B/s) per channel; latencies are µs.
    A tuner plugin may replace the seven tables that NCCL 2.30 passes it
    (``base_latencies`` … ``per_ch_max_nvls_tree_bws``); :mod:`costmodel.nccl.overrides` does that.
    """

    version: str
    """The version as costmodel names it (``"2.30"``)."""
    tag: str
    """The git tag of NVIDIA/nccl the numbers are read from."""
    functions: tuple[str, ...]
    """``ncclFuncStr`` in ``src/init.cc``: the collectives in NCCL's order."""
    algorithms: tuple[str, ...]
    """``ncclAlgoStr`` in ``src/init.cc`` (the ``NCCL_ALGO_*`` order); 2.21 has no PAT."""
    protocols: tuple[str, ...]
    """``ncclProtoStr`` in ``src/init.cc`` (the ``NCCL_PROTO_*`` order)."""
    paths: tuple[str, ...]
    """The ``PATH_*`` order (``src/graph/topo.h`` in 2.21, ``src/include/graph.h`` in 2.30); 2.30
    added C2C and P2C, so path types are compared by position in this tuple."""
    compcaps: tuple[str, ...]
    """The compute-capability rows of the per-arch tables (``*_COMPCAP_IDX``)."""
    base_latencies: Table2
    """``baseLat`` (2.21) / ``ncclTunerConstantsDefaults.baseLatencies`` (2.30), tuning.cc: µs,
    ``[algorithm][protocol]``."""
    hw_latencies: Table3
    """``hwLat`` (2.21) / ``…Defaults.hwLatencies`` (2.30), tuning.cc: µs per step,
    ``[NVLink, PCI, NET][algorithm][protocol]``."""
    ll_max_bws: Table2
    """``llMaxBws``, tuning.cc: the LL bus-bandwidth cap, GB/s (whole, not per channel). Row: the
    compute-capability index on one node, else 0 for Intel and 1 for AMD hosts; column: node bucket."""
    per_ch_max_ring_ll128_bws: Table2
    """``perChMaxRingLL128Bws``, tuning.cc: GB/s per channel, ``[compcap][node bucket]``."""
    per_ch_max_tree_ll128_bws: Table2
    """``perChMaxTreeLL128Bws``, tuning.cc: GB/s per channel, ``[compcap][node bucket]``."""
    per_ch_max_tree_bws: Table2
    """``perChMaxTreeBws``, tuning.cc: GB/s per channel, ``[compcap][node bucket]``."""
    per_ch_max_nvls_tree_bws: Table2 | None
    """``perChMaxNVLSTreeBws``, tuning.cc 2.30: GB/s per channel; ``None`` in 2.21 (no cap)."""
    nvls_efficiency: tuple[Fraction, ...] | None
    """``nvlsEfficiency[NCCL_NUM_COMPCAPS]``, tuning.cc 2.30; ``None`` in 2.21, which uses
    ``min(bwIntra, bwInter)`` and a 5/6 bus-to-algorithm ratio instead."""
    tree_correction_factor: Table2
    """``treeCorrectionFactor[protocol][log2(nBytes/64)]``, tuning.cc: 23 columns in 2.21, 24 in 2.30."""
    net_overhead_us: tuple[tuple[str, Fraction], ...]
    """``getNetOverhead``, tuning.cc: µs per network step by x86 CPU vendor; any other host 1.0."""
    ring_simple_plateau: tuple[int, Fraction, Fraction]
    """``ncclTopoGetAlgoTime``, tuning.cc: ring/Simple all-reduce on > 1 node multiplies its latency
    by the second number (compute capability < 80) or the third once
    ``nBytes / (nChannels · nRanks) ≥`` the first."""
    ll_thread_threshold: int
    """``NCCL_LL_THREAD_THRESHOLD``, ``src/include/comm.h`` (× nRanks for ring)."""
    ll128_thread_threshold: int
    """``NCCL_LL128_THREAD_THRESHOLD``, comm.h."""
    simple_thread_threshold: int
    """``NCCL_SIMPLE_THREAD_THRESHOLD``, comm.h (CollNet Simple: 512, set in ncclTopoTuneModel)."""
    collnet_thread_threshold: int
    """``threadThresholds[COLLNET_*][SIMPLE] = 512`` in ncclTopoTuneModel."""
    max_nthreads: int
    """``NCCL_MAX_NTHREADS``, ``src/include/device.h``."""
    simple_max_nthreads: int
    """``NCCL_SIMPLE_MAX_NTHREADS``, device.h."""
    ll_max_nthreads: int
    """``NCCL_LL_MAX_NTHREADS``, device.h."""
    ll128_max_nthreads: int
    """``NCCL_LL128_MAX_NTHREADS``, device.h."""
    warp_size: int
    """``WARP_SIZE``, device.h."""
    pci_bw: Fraction
    """``PCI_BW`` (GB/s), ``src/graph/topo.h``: at or below ``bwIntra · nChannels`` of the ring,
    ring Simple runs 256 threads instead of 512."""
    max_channels: int
    """``MAXCHANNELS``, device.h: the cap on channels a communicator launches."""
    nvls_channels: tuple[int, int, int]
    """NVLS channels: 2.21 ``NCCL_NVLS_NCHANNELS`` default (nvls.cc) for every arch; 2.30
    ``NVLS_NCHANNELS_SM90``, ``_SM100`` (multi-node), ``_SM100_NVL`` (one node), nvls.cc."""
    max_direct_arity: int
    """``NCCL_MAX_DIRECT_ARITY``, device.h: CollNet needs ≤ arity + 1 GPUs per node (2.30)."""
    max_nvls_arity: int
    """``NCCL_MAX_NVLS_ARITY``, device.h: NVLS for other than all-reduce needs ≤ this many GPUs per node."""
    max_batch_colls: int
    """``NCCL_MAX_DEV_WORK_BATCH_COLLS`` (2.30: 1024 B / sizeof(ncclDevWorkColl) = 128 B → 8) or
    ``NCCL_MAX_WORK_ELEMENTS`` (2.21: 9, by its static_assert), device.h: the latency of
    non-ring algorithms counts ``⌈numPipeOps / this⌉`` times; with one operation, once."""

    # -- lookups by name ------------------------------------------------------------------------

    def algorithm_index(self, name: str) -> int:
        """Position of an algorithm (NCCL's spelling) in this version's order."""
        return self.algorithms.index(name)

    def protocol_index(self, name: str) -> int:
        """Position of a protocol (``LL``, ``LL128``, ``Simple``)."""
        return self.protocols.index(name)

    def path_rank(self, name: str) -> int:
        """Position of a path type name in this version's ``PATH_*`` order."""
        return self.paths.index(name)

    def base_latency(self, algorithm: str, protocol: str) -> Fraction:
        """``baseLatencies[algorithm][protocol]`` in µs."""
        return self.base_latencies[self.algorithm_index(algorithm)][self.protocol_index(protocol)]

    def hw_latency(self, hw: int, algorithm: str, protocol: str) -> Fraction:
        """``hwLatencies[hw][algorithm][protocol]`` in µs (hw: 0 NVLink, 1 PCI, 2 NET)."""
        return self.hw_latencies[hw][self.algorithm_index(algorithm)][self.protocol_index(protocol)]

    def net_overhead(self, cpu_arch: str, cpu_vendor: str) -> Fraction:
        """``getNetOverhead``: µs, by CPU (x86 Intel 1.0, x86 AMD 2.0, otherwise 1.0)."""
        table = dict(self.net_overhead_us)
        return table.get(cpu_vendor, table["other"]) if cpu_arch == "x86" else table["other"]

    def replace(self, **changes: object) -> NcclConstants:
        """A copy with some fields replaced (what a tuner plugin does to the defaults)."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


_FUNCTIONS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
_PROTOCOLS = ("LL", "LL128", "Simple")
_TREE_CORRECTION_24 = _rows(
    "1.0 1.0 1.0 1.0 .9 .8 .7 .7 .7 .7 .6 .5 .4 .4 .5 .6 .7 .8 .9 1.0 1.0 1.0 1.0 1.0",
    "1.0 1.0 1.0 1.0 1.0 .9 .8 .8 .8 .7 .6 .6 .6 .6 .6 .6 .8 .9 .9 .9 .9 1.0 1.0 1.0",
    ".9 .9 .9 .9 .9 .9 .9 .8 .7 .6 .6 .5 .5 .5 .5 .6 .7 .8 .7 .7 .8 .9 .9 .9",
)
_COMMON = {
    "functions": _FUNCTIONS,
    "protocols": _PROTOCOLS,
    "net_overhead_us": (("intel", Fraction("1.0")), ("amd", Fraction("2.0")), ("other", Fraction("1.0"))),
    "ring_simple_plateau": (64, Fraction("1.9"), Fraction("1.4")),
    "ll_thread_threshold": 8,
    "ll128_thread_threshold": 8,
    "simple_thread_threshold": 64,
    "collnet_thread_threshold": 512,
    "max_nthreads": 640,
    "simple_max_nthreads": 512,
    "ll_max_nthreads": 512,
    "ll128_max_nthreads": 640,
    "warp_size": 32,
    "pci_bw": Fraction("12.0"),
    "max_direct_arity": 7,
    "max_nvls_arity": 32,
}

V2_21 = NcclConstants(
    version="2.21",
    tag="v2.21.5-1",
    algorithms=("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree"),
    paths=("LOC", "NVL", "NVB", "PIX", "PXB", "PXN", "PHB", "SYS", "NET", "DIS"),
    compcaps=("volta", "ampere", "hopper"),
    base_latencies=_rows("6.8 14.0 0", "6.6 14.0 8.4", "0 0 0", "0 0 0", "0 0 0", "0 0 0"),
    hw_latencies=(
        _rows(".6 1.25 28", ".6 1.9 3.4", "0 0 3.7", "0 0 2.8", "0 0 25", "0 0 25"),  # NVLink
        _rows("1.0 1.9 28", "1.0 2.5 5.7", "0 0 3.7", "0 0 2.8", "0 0 0", "0 0 0"),  # PCI
        _rows("5.0 8.5 28", "2.7 4.0 14.0", "0 0 31", "0 0 30", "0 0 18", "0 0 14"),  # NET
    ),
    ll_max_bws=_rows("39.0 39.0 20.4", "87.7 22.5 19.0", "141.0 45.0 35.0"),
    per_ch_max_ring_ll128_bws=_rows("20.0 20.0 20.0", "20.0 20.0 20.0", "36.7 36.7 36.7"),
    per_ch_max_tree_ll128_bws=_rows("20.0 20.0 20.0", "20.0 20.0 20.0", "36.7 36.7 29.0"),
    per_ch_max_tree_bws=_rows("26.5 18.5 10.0", "24.0 23.6 17.8", "38.7 41.4 36.0"),
    per_ch_max_nvls_tree_bws=None,
    nvls_efficiency=None,
    tree_correction_factor=tuple(row[:23] for row in _TREE_CORRECTION_24),
    max_channels=32,
    nvls_channels=(16, 16, 16),
    max_batch_colls=9,
    **_COMMON,  # type: ignore[arg-type]
)
"""NCCL 2.21.5 (tag v2.21.5-1): ``src/graph/tuning.cc`` arrays ``baseLat``, ``hwLat``, ``llMaxBws``,
``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws``, ``perChMaxTreeBws``, ``treeCorrectionFactor``."""

V2_30 = NcclConstants(
    version="2.30",
    tag="v2.30.7-1",
    algorithms=("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"),
    paths=("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"),
    compcaps=("volta", "ampere", "hopper", "blackwell"),
    base_latencies=_rows("6.8 14.0 8.4", "6.6 14.0 8.4", "0 0 0", "0 0 0", "0 0 0", "0 0 0", "8.0 8.0 8.0"),
    hw_latencies=(
        _rows("0.6 1.25 4.0", "0.6 1.9 3.4", "0 0 3.7", "0 0 2.8", "0 0 25", "0 0 25", "0 0 4.0"),  # NVLink
        _rows("1.0 1.9 4.0", "1.0 2.5 5.7", "0 0 3.7", "0 0 2.8", "0 0 0", "0 0 0", "0 0 4.0"),  # PCI
        _rows("5.0 8.5 14", "2.7 4.0 14.0", "0 0 31", "0 0 30", "0 0 18", "0 0 20.9", "0 0 14"),  # NET
    ),
    ll_max_bws=_rows("39.0 39.0 20.4", "87.7 22.5 19.0", "141.0 45.0 35.0", "282.0 90.0 70.0"),
    per_ch_max_ring_ll128_bws=_rows("20.0 20.0 20.0", "20.0 20.0 20.0", "36.7 36.7 36.7", "40.0 40.0 40.0"),
    per_ch_max_tree_ll128_bws=_rows("20.0 20.0 20.0", "20.0 20.0 20.0", "36.7 36.7 29.0", "55.6 31.67 20.0"),
    per_ch_max_tree_bws=_rows("26.5 18.5 10.0", "24.0 23.6 17.8", "38.7 41.4 36.0", "70.0 42.8 24.0"),
    per_ch_max_nvls_tree_bws=_rows("26.5 18.5 10.0", "24.0 23.6 17.8", "0.0 57.7 45.5", "0.0 96.0 80.0"),
    nvls_efficiency=(Fraction("0.0"), Fraction("0.0"), Fraction("0.85"), Fraction("0.74")),
    tree_correction_factor=_TREE_CORRECTION_24,
    max_channels=64,
    nvls_channels=(16, 32, 24),
    max_batch_colls=8,
    **_COMMON,  # type: ignore[arg-type]
)
"""NCCL 2.30.7 (tag v2.30.7-1): ``src/graph/tuning.cc`` ``ncclTunerConstantsDefaults`` (its seven
tables; Blackwell's llMaxBws row is written ``2*141.0, 2*45.0, 2*35.0`` there), ``nvlsEfficiency``,
``treeCorrectionFactor``."""

CONSTANTS: dict[str, NcclConstants] = {"2.30": V2_30, "2.21": V2_21}
"""The modelled NCCL versions, newest first."""

VERSIONS: tuple[str, ...] = tuple(CONSTANTS)
"""The version names ``predict(version=...)`` accepts."""
