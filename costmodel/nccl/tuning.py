"""NCCL's tuning table: latency and bandwidth of every (function, algorithm, protocol).

:func:`tune` ports ``ncclTopoTuneModel`` (``src/graph/tuning.cc``) of each modelled version,
branching on ``constants.version`` where 2.21 and 2.30 differ, and records for every entry
whose bandwidth is zero *why* (not applicable to the function, NVLS with < 2 channels, LL128
disabled by the path rules, PAT needing one GPU per node, CollNet off, a NCCL_ALGO/NCCL_PROTO
filter …). Each latency is :func:`costmodel.nccl.latency.entry_latency`'s, the computation the
explanation (:func:`costmodel.nccl.explain.latency_steps`) shows. :meth:`TuningTable.format`
prints the table in NCCL's own ``%8.1f/%6.1f |`` layout, as ``NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=TUNING`` shows it.

Latencies are µs, bandwidths GB/s (10⁹ B/s) of *algorithm* bandwidth (NCCL converts its bus
bandwidth with ``nRanks/nsteps`` for rings, ½ for trees), as NCCL stores them.

References
----------
.. [1] NVIDIA, NCCL source, ``src/graph/tuning.cc`` (ncclTopoTuneModel), ``src/init.cc``
   (initTransportsRank: the graphs each algorithm uses, ring/tree channel agreement),
   ``src/graph/connect.cc`` (ncclTopoPostset: channels launched), ``src/transport/nvls.cc``
   (NVLS channels), tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from fractions import Fraction

from costmodel.errors import InputError
from costmodel.nccl.constants import NcclConstants
from costmodel.nccl.filters import AUTO, parse_list
from costmodel.nccl.latency import entry_latency, log2i, ring_steps
from costmodel.nccl.system import Graph, System

__all__ = ["TuningEntry", "TuningTable", "algorithm_graph", "comm_channels", "log2i", "tune"]

_TREE_PATTERN = 3
_F = Fraction
_ZERO = Fraction(0)


@dataclass(frozen=True, slots=True)
class _NoGraph:
    """A graph the search did not compute: NCCL's zeroed ``struct ncclTopoGraph``."""

    channels: int = 0
    bw_intra: Fraction = Fraction(0)
    bw_inter: Fraction = Fraction(0)
    type_intra: str = "LOC"
    type_inter: str = "LOC"
    latency_inter: Fraction = Fraction(0)
    same_channels: bool = False
    pattern: int = 0


def algorithm_graph(system: System, constants: NcclConstants, algorithm: str) -> Graph | _NoGraph:
    """The graph an algorithm runs on (``graphs[]`` of initTransportsRank in ``src/init.cc``).

    Tree and PAT use the tree graph, Ring the ring, NVLS and NVLSTree the NVLS graph, CollNet
    its own (2.21 has one CollNet graph for both: the ``collnet_direct`` one, else the chain's).
    Ring and tree keep the smaller of their two channel counts, as NCCL makes them agree.
    """
    if algorithm in ("Tree", "Ring", "PAT"):
        graph = system.graphs["tree" if algorithm != "Ring" else "ring"]
        agreed = min(system.graphs["ring"].channels, system.graphs["tree"].channels)
        return graph if graph.channels == agreed else replace(graph, channels=agreed)
    if algorithm in ("NVLS", "NVLSTree"):
        return system.graphs.get("nvls", _NoGraph())
    if constants.version == "2.21":
        return system.graphs.get("collnet_direct", system.graphs.get("collnet_chain", _NoGraph()))
    key = "collnet_direct" if algorithm == "CollNetDirect" else "collnet_chain"
    return system.graphs.get(key, _NoGraph())


@dataclass(frozen=True, slots=True)
class TuningEntry:
    """One cell of NCCL's table: ``latencies[f][a][p]`` (µs) and ``bandwidths[f][a][p]`` (GB/s).

    ``reason`` says why the bandwidth is zero (empty when the entry is enabled). ``backup_bandwidth``
    is 2.21's ``ringbdw``: the ring's bandwidth before any disabling, which 2.21 falls back to.
    ``fallback`` marks a ring entry 2.21 put back because every entry of its function was disabled
    (ncclTopoTuneModel's "at least set ring algo available", ``src/graph/tuning.cc`` v2.21.5-1).
    """

    function: str
    algorithm: str
    protocol: str
    latency_us: Fraction
    bandwidth: Fraction
    reason: str = ""
    backup_bandwidth: Fraction = Fraction(0)
    fallback: bool = False

    @property
    def enabled(self) -> bool:
        """Whether NCCL's table gives the entry a bandwidth (what ncclTopoGetAlgoTime needs)."""
        return self.bandwidth > 0


def _f32(x: Fraction) -> float:
    """*x* rounded to a C ``float``, as NCCL stores it before printing."""
    return float(struct.unpack("f", struct.pack("f", float(x)))[0])


@dataclass(frozen=True, slots=True, kw_only=True)
class TuningTable:
    """The result of :func:`tune`: every entry, the thread limits and the channel counts.

    ``max_threads`` and ``thread_thresholds`` are ``[algorithm][protocol]``. ``coll_channels`` is
    ``comm->collChannels``, what ring, tree and CollNet launch at most; ``channels`` is
    ``comm->nChannels`` at the end of ncclTopoPostset, what ncclTopoGetAlgoTime divides by for the
    ring/Simple plateau: the same number, except that NCCL 2.21 (through 2.27) raises it to the NVLS
    channels when it is below them (:func:`comm_channels`); ``nvls_channels`` is ``comm->nvlsChannels``.
    """

    constants: NcclConstants
    system: System
    entries: tuple[TuningEntry, ...]
    max_threads: tuple[tuple[int, ...], ...]
    thread_thresholds: tuple[tuple[int, ...], ...]
    channels: int
    nvls_channels: int
    coll_channels: int

    @property
    def nvls_raised(self) -> bool:
        """Whether NCCL 2.21 raised ``comm->nChannels`` to the NVLS channels (see :func:`comm_channels`)."""
        return self.channels > self.coll_channels

    def entry(self, function: str, algorithm: str, protocol: str) -> TuningEntry:
        """The entry of (function, algorithm, protocol), in NCCL's spellings."""
        c = self.constants
        index = (c.functions.index(function) * len(c.algorithms) + c.algorithm_index(algorithm)) * len(
            c.protocols
        ) + c.protocol_index(protocol)
        return self.entries[index]

    def function_entries(self, function: str) -> tuple[TuningEntry, ...]:
        """The entries of one function, in NCCL's (algorithm, protocol) order."""
        return tuple(e for e in self.entries if e.function == function)

    def format(self) -> str:
        """The table as ncclTopoTuneModel prints it (without the ``host:pid [rank] NCCL INFO`` prefix).

        Numbers are rounded to C ``float`` first, then printed ``%8.1f/%6.1f``, as NCCL does.
        """
        c = self.constants
        lines = []
        n_algos = len(c.algorithms)
        for block in range((n_algos + 2) // 3):
            algos = [a for a in range(block * 3, block * 3 + 3) if a < n_algos]
            lines.append(
                "  Algorithm   |" + "".join(f" {'':>14}   {c.algorithms[a]:>14}   {'':>14} |" for a in algos)
            )
            lines.append("  Protocol    |" + "".join(f" {p:>14} |" for _ in range(3) for p in c.protocols))
            lines.append(
                " Max NThreads |"
                + "".join(f" {self.max_threads[a][p]:>14d} |" for a in algos for p in range(len(c.protocols)))
            )
            for function in c.functions:
                cells = []
                for a in algos:
                    for p in c.protocols:
                        e = self.entry(function, c.algorithms[a], p)
                        cells.append(f"{_f32(e.latency_us):8.1f}/{_f32(e.bandwidth):6.1f} |")
                lines.append(f"{function:>13} |" + "".join(cells))
        return "\n".join(lines)


def _pat_enabled(system: System) -> str:
    """``ncclPatEnable`` (2.30): '' when PAT may run, else why not."""
    if system.arch < 60:
        return "PAT needs compute capability ≥ 6.0"
    if system.nodes != system.ranks:
        return "PAT only with one GPU per node"
    if not system.net_device_host:
        return "PAT needs a host network device (no offload)"
    return ""


def _applies(c: NcclConstants, function: str, algorithm: str) -> str:
    """Why *algorithm* never runs *function* in this version's tuning loop ('' if it may)."""
    if function in ("Broadcast", "Reduce") and algorithm != "Ring":
        return f"{function} runs only Ring"
    if function in ("AllGather", "ReduceScatter"):
        allowed = (
            ("PAT", "Ring", "NVLS", "CollNetDirect")
            if c.version != "2.21"
            else ("Ring", "NVLS", "CollNetDirect")
        )
        if algorithm not in allowed:
            return f"{function} runs only {', '.join(a for a in c.algorithms if a in allowed)}"
    if function == "AllReduce" and algorithm == "PAT":
        return "PAT runs only AllGather and ReduceScatter"
    return ""


def _coll_channels(system: System, c: NcclConstants) -> int:
    """``comm->collChannels`` (``comm->nChannels`` before the NVLS step of ncclTopoPostset,
    ``src/graph/connect.cc``): what ring, tree and CollNet launch at most.

    Twice the agreed ring/tree channels (capped at MAXCHANNELS); with CollNet and a chain graph
    faster inside than across nodes, half as many again; on Hopper (2.21: exactly sm90, 2.30: ≥ sm90)
    across nodes with a ring bwIntra above 45 GB/s and fewer than 16 channels, twice again.
    (Not modelled: NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS and the unpack network doubling.)
    """
    ring = system.graphs["ring"]
    n = min(c.max_channels, 2 * min(ring.channels, system.graphs["tree"].channels))
    chain = algorithm_graph(system, c, "CollNetChain")
    if system.collnet and chain.channels and chain.bw_intra > chain.bw_inter and system.ranks > system.nodes:
        n = min(c.max_channels, n + n // 2)
    hopper = system.arch == 90 if c.version == "2.21" else system.arch >= 90
    if hopper and system.nodes > 1 and ring.bw_intra > 45 and n < 16:
        n = min(c.max_channels, 2 * n)
    return n


def comm_channels(coll_channels: int, nvls_channels: int, constants: NcclConstants) -> int:
    """``comm->nChannels`` at the end of ncclTopoPostset: 2.21 raises it to the NVLS channels.

    NCCL 2.21.5's ``ncclTopoPostset`` (``src/graph/connect.cc``), right after
    ``comm->collChannels = comm->nChannels``, under ``CUDART_VERSION >= 12010``::

        if (comm->nChannels < comm->nvlsChannels) {
          nChannels = comm->nChannels = copyChannels(comm, comm->nChannels, comm->nvlsChannels, ...);
        }

    so with NVLS on (``comm->nvlsChannels``: NCCL_NVLS_NCHANNELS, 16) ``comm->nChannels`` is at least
    16, while ``collChannels``, what getChannnelThreadInfo (``src/enqueue.cc``) starts ring and tree
    from, keeps the smaller count. Tuning happens after (ncclTopoTuneModel is called at the end of
    initTransportsRank, ``src/init.cc``), and ncclTopoGetAlgoTime (``src/graph/tuning.cc``) applies
    the ring/Simple plateau when ``nBytes / (comm->nChannels · nRanks) ≥ 64``: the penalty starts at
    a larger size. The copy was removed in 2.28.3; 2.30.7's ncclTopoPostset keeps
    ``comm->nChannels == collChannels`` (NVLS launches ``nvlsChannels``, capped by
    ``comm->nChannels`` across nodes, in topoGetAlgoInfo).

    >>> from costmodel.nccl.constants import CONSTANTS
    >>> comm_channels(4, 16, CONSTANTS["2.21"]), comm_channels(4, 16, CONSTANTS["2.30"])
    (16, 4)
    """
    if constants.version == "2.21":
        return max(coll_channels, nvls_channels)
    return coll_channels


def _nvls_channels(system: System, c: NcclConstants) -> int:
    """``comm->nvlsChannels`` (``src/transport/nvls.cc``); 0 without NVLS."""
    if not system.nvls or "nvls" not in system.graphs:
        return 0
    sm90, sm100, sm100_nvl = c.nvls_channels
    if c.version == "2.21" or system.arch < 100:
        return min(sm90, c.max_channels)
    return min(sm100 if system.nodes > 1 else sm100_nvl, c.max_channels)


def _max_threads(system: System, c: NcclConstants) -> tuple[tuple[int, ...], ...]:
    """``comm->maxThreads`` set at the top of ncclTopoTuneModel (NCCL_NTHREADS not set)."""
    table = [[0] * len(c.protocols) for _ in c.algorithms]
    ring = algorithm_graph(system, c, "Ring")
    ll, ll128, simple = (c.protocol_index(p) for p in c.protocols)
    tree_i, ring_i = c.algorithm_index("Tree"), c.algorithm_index("Ring")
    table[ring_i][simple] = 256 if ring.bw_intra * ring.channels <= c.pci_bw else c.simple_max_nthreads
    table[tree_i][simple] = c.simple_max_nthreads
    for name in ("CollNetDirect", "CollNetChain", "NVLS", "NVLSTree"):
        table[c.algorithm_index(name)][simple] = c.max_nthreads
    for a in (ring_i, tree_i):
        table[a][ll] = c.ll_max_nthreads
        table[a][ll128] = c.ll128_max_nthreads
    return tuple(tuple(row) for row in table)


def _thread_thresholds(system: System, c: NcclConstants) -> tuple[tuple[int, ...], ...]:
    """``comm->threadThresholds`` set at the end of ncclTopoTuneModel (NCCL_THREAD_THRESHOLDS not set)."""
    table = [
        [c.ll_thread_threshold, c.ll128_thread_threshold, c.simple_thread_threshold] for _ in c.algorithms
    ]
    table[c.algorithm_index("Ring")][0] *= system.ranks
    for a in ("CollNetDirect", "CollNetChain"):
        table[c.algorithm_index(a)][2] = c.collnet_thread_threshold
    return tuple(tuple(row) for row in table)


def _ll128_rule(graph: Graph | _NoGraph, system: System, c: NcclConstants) -> str:
    """Why LL128 is off by default on this graph ('' if on): the path rules of ncclTopoTuneModel."""
    try:
        inter, intra = c.path_rank(graph.type_inter), c.path_rank(graph.type_intra)
    except ValueError:
        bad = graph.type_inter if graph.type_inter not in c.paths else graph.type_intra
        raise InputError(
            f"path type {bad!r} does not exist in NCCL {c.version}; choose from {', '.join(c.paths)}"
        ) from None
    if c.version == "2.21":
        limit = "PXN" if system.arch >= 90 else "PXB"
        if system.arch not in (70, 80, 90):
            return (
                f"LL128 off by default: NCCL 2.21 enables it only on sm70, sm80 and sm90 (arch {system.arch})"
            )
    else:
        if system.arch < 70:
            return "LL128 off by default below sm70"
        limit = "PXN" if system.arch >= 90 else "PXB"
    if inter > c.path_rank(limit):
        return f"LL128 off by default: path to the network {graph.type_inter} is beyond {limit}"
    if intra > c.path_rank("NVB"):
        return f"LL128 off by default: intra-node path {graph.type_intra} is beyond NVB"
    return ""


def tune(  # noqa: PLR0912, PLR0915 - the port of ncclTopoTuneModel, kept in its order
    system: System, constants: NcclConstants, *, algo: str | None = None, proto: str | None = None
) -> TuningTable:
    """NCCL's tuning table for *system* under *constants*: the port of ``ncclTopoTuneModel``.

    Parameters
    ----------
    system : System
        What the topology search produced.
    constants : NcclConstants
        One version's constants (``CONSTANTS["2.30"]``), possibly overridden.
    algo, proto : str, optional
        NCCL_ALGO / NCCL_PROTO values (see :mod:`costmodel.nccl.filters`).

    Returns
    -------
    TuningTable
        Every (function, algorithm, protocol) entry with its latency, bandwidth and, when the
        bandwidth is zero, the reason.

    Notes
    -----
    Assumed as NCCL's defaults: NCCL_NTHREADS, NCCL_LL128_NTHREADS, NCCL_NET_OVERHEAD,
    NCCL_PAT_ENABLE, NCCL_LL128_C2C and NCCL_THREAD_THRESHOLDS unset; all GPUs of one compute
    capability; CUDA runtime not 11.8; a CollNet plugin (when CollNet is on) with all-gather and
    reduce-scatter support and CollNet chain support whenever there is a chain graph.

    References
    ----------
    .. [1] NVIDIA, NCCL ``src/graph/tuning.cc``, ncclTopoTuneModel, tags v2.21.5-1 and v2.30.7-1.

    Examples
    --------
    >>> from costmodel.nccl.constants import CONSTANTS
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> e = tune(s, CONSTANTS["2.30"]).entry("AllReduce", "Ring", "LL")
    >>> e.latency_us, e.bandwidth   # 6.6 + 14 × 0.6; min(141, 16 × 40 × 0.5) × 8/14
    (Fraction(15, 1), Fraction(564, 7))
    """
    c = constants
    v21 = c.version == "2.21"
    nodes, ranks = system.nodes, system.ranks
    ppn = _F(ranks, nodes)
    cc = system.compcap_index if not v21 else min(system.compcap_index, 2)
    bucket = system.node_bucket
    amd_like = system.cpu_vendor in (("amd",) if v21 else ("amd", "mixed"))
    ll_max_bw = c.ll_max_bws[cc if nodes == 1 else (1 if amd_like else 0)][bucket]
    per_ch_tree = c.per_ch_max_tree_bws[cc][bucket]
    per_ch_ring_ll128 = c.per_ch_max_ring_ll128_bws[cc][bucket]
    per_ch_tree_ll128 = c.per_ch_max_tree_ll128_bws[cc][bucket]
    per_ch_nvls_tree = c.per_ch_max_nvls_tree_bws[cc][bucket] if c.per_ch_max_nvls_tree_bws else None
    graphs = {a: algorithm_graph(system, c, a) for a in c.algorithms}
    pat_rule = _pat_enabled(system) if "PAT" in c.algorithms else ""
    tree_pattern = graphs["Tree"].pattern

    lat: dict[tuple[str, str, str], Fraction] = {}
    bws: dict[tuple[str, str, str], Fraction] = {}
    why: dict[tuple[str, str, str], list[str]] = {}
    for f in c.functions:
        nsteps = ring_steps(c, f, ranks, nodes)[0]
        for a in c.algorithms:
            g = graphs[a]
            for p in c.protocols:
                key = (f, a, p)
                lat[key], bws[key], why[key] = _F(0), _F(0), []
                skip = _applies(c, f, a)
                if not skip and a in ("NVLS", "NVLSTree") and p != "Simple":
                    skip = f"{a} runs only Simple"
                if not skip and a == "PAT" and p != "Simple":
                    skip = "PAT runs only Simple"
                if not skip and a == "PAT" and pat_rule:
                    skip = pat_rule
                collnet = a in ("CollNetDirect", "CollNetChain")
                bw = g.bw_intra if nodes <= 2 or collnet else g.bw_inter
                if not skip and a in ("NVLS", "NVLSTree"):
                    if v21:
                        bw = (
                            min(g.bw_intra, g.bw_inter)
                            if a == "NVLS"
                            else min(g.bw_intra, g.bw_inter if nodes <= 2 else g.bw_inter / 2)
                        )
                    elif g.channels < 2:
                        skip = (
                            f"{a} needs at least 2 channels (the NVLS graph has {g.channels})"
                            if g.channels
                            else "no NVLS graph (NVLS unsupported)"
                        )
                    else:
                        assert c.nvls_efficiency is not None
                        intra_bw = g.bw_intra * c.nvls_efficiency[cc] * (g.channels - 1) / g.channels
                        intra_bw *= 2 if f == "AllReduce" else (ppn - 1) / ppn
                        inter_bw = g.bw_inter * (2 if nodes <= 2 and a == "NVLSTree" else 1)
                        candidates = [intra_bw, inter_bw]
                        if a == "NVLSTree" and per_ch_nvls_tree is not None:
                            candidates.append(per_ch_nvls_tree)
                        bw = min(candidates)
                if skip:
                    why[key].append(skip)
                    continue
                bus = g.channels * bw
                if a == "Ring" and p == "LL":
                    bus = min(ll_max_bw, bus * _F("0.5"))
                if a == "Ring" and p == "LL128":
                    bus = min(
                        bus * (_F("0.7") if v21 and ppn < 2 else _F("0.92")), g.channels * per_ch_ring_ll128
                    )
                if a == "Tree" and (v21 or f == "AllReduce"):
                    bus = min(bus * _F(".92"), g.channels * per_ch_tree)
                if a == "Tree" and p == "LL":
                    bus = min(bus / _F("3.8"), ll_max_bw)
                if a == "Tree" and p == "LL128":
                    bus = min(
                        bus * (_F(7, 9) if nodes == 1 else _F(120, 128)), g.channels * per_ch_tree_ll128
                    )
                if a == "Tree" and tree_pattern == _TREE_PATTERN:
                    bus *= _F(".85")
                if a == "PAT":
                    bus *= _F(".75")
                if collnet and p != "Simple":
                    bus = Fraction(0)
                    why[key].append(f"{a} runs only Simple")
                if a == "CollNetDirect" and p == "Simple":
                    if f in ("AllGather", "ReduceScatter"):
                        if v21:
                            bus = ppn * bw
                            if nodes > 1 and (not system.collnet or ppn > system.collnet_heads):
                                bus = Fraction(0)
                                why[key].append(
                                    "CollNet all-gather/reduce-scatter needs one CollNet head per GPU"
                                )
                            w = (ppn - 1) / (8 - 1)
                            bus *= w * _F("0.85") + (1 - w) * _F("0.95")
                        else:
                            bus = ppn * min(g.bw_intra, g.bw_inter * _F("0.9"))
                    else:
                        factor = ppn / g.channels if g.channels else _F(1)
                        factor -= (factor - 1) / 2
                        bus /= factor
                        if system.arch >= 90:
                            bus *= _F(".85")
                if (
                    not v21
                    and a in ("NVLS", "CollNetDirect")
                    and p == "Simple"
                    and f in ("AllGather", "ReduceScatter")
                    and nodes > 1
                ):
                    if not system.collnet:
                        bus = Fraction(0)
                        why[key].append(f"{a} {f} across nodes needs CollNet")
                    elif system.ranks_per_node > system.collnet_heads:
                        bus = Fraction(0)
                        why[key].append(
                            f"{a} {f} needs a CollNet head per GPU "
                            f"({system.ranks_per_node} GPUs, {system.collnet_heads} heads)"
                        )
                # Convert bus bandwidth to algorithm bandwidth
                if v21:
                    convert = not (a == "CollNetDirect" and f in ("AllGather", "ReduceScatter"))
                    ratio = (
                        _F(ranks, nsteps)
                        if a == "Ring"
                        else _F(5, 6)
                        if a in ("NVLS", "NVLSTree")
                        else _F(".5")
                    )
                else:
                    convert = not (a != "Ring" and f in ("AllGather", "ReduceScatter"))
                    ratio = _F(ranks, nsteps) if a in ("Ring", "NVLS", "NVLSTree") else _F(".5")
                if convert:
                    bus *= ratio
                bws[key] = bus
                lat[key] = entry_latency(system, c, g, key)[-1].value

    ring_backup = {(f, p): bws[(f, "Ring", p)] for f in c.functions for p in c.protocols}
    _enable(system, c, graphs, bws, why, algo=algo, proto=proto)
    for (f, a, p), reasons in why.items():
        if not bws[(f, a, p)] and not reasons and graphs[a].channels == 0:
            reasons.append(f"no {_graph_name(a)} graph")
    restored: set[tuple[str, str, str]] = set()
    if v21:  # at least set ring algo available (tuning.cc 2.21, after the enable loop)
        for f in c.functions:
            if not any(bws[(f, a, p)] for a in c.algorithms for p in c.protocols):
                for p in c.protocols:
                    bws[(f, "Ring", p)] = ring_backup[(f, p)]
                    if ring_backup[(f, p)]:
                        why[(f, "Ring", p)] = []
                        restored.add((f, "Ring", p))
    entries = tuple(
        TuningEntry(
            f,
            a,
            p,
            lat[(f, a, p)],
            bws[(f, a, p)],
            "" if bws[(f, a, p)] else "; ".join(dict.fromkeys(why[(f, a, p)])) or "zero bandwidth",
            ring_backup[(f, p)] if v21 and a == "Ring" else _F(0),
            (f, a, p) in restored,
        )
        for f in c.functions
        for a in c.algorithms
        for p in c.protocols
    )
    coll, nvls = _coll_channels(system, c), _nvls_channels(system, c)
    return TuningTable(
        constants=c,
        system=system,
        entries=entries,
        max_threads=_max_threads(system, c),
        thread_thresholds=_thread_thresholds(system, c),
        channels=comm_channels(coll, nvls, c),
        nvls_channels=nvls,
        coll_channels=coll,
    )


def _graph_name(algorithm: str) -> str:
    return {
        "Tree": "tree",
        "Ring": "ring",
        "PAT": "tree",
        "NVLS": "NVLS",
        "NVLSTree": "NVLS",
        "CollNetDirect": "CollNet direct",
        "CollNetChain": "CollNet chain",
    }[algorithm]


def _enable(  # noqa: PLR0912 - the enable rules of ncclTopoTuneModel, in its order
    system: System,
    c: NcclConstants,
    graphs: dict[str, Graph | _NoGraph],
    bws: dict[tuple[str, str, str], Fraction],
    why: dict[tuple[str, str, str], list[str]],
    *,
    algo: str | None,
    proto: str | None,
) -> None:
    """The enable/disable pass of ncclTopoTuneModel: user filters, CollNet/NVLS rules, LL128 rules."""
    v21 = c.version == "2.21"
    proto_on = (
        parse_list(
            proto,
            c.protocols,
            c,
            what="NCCL_PROTO",
            defaults=tuple(AUTO if p == "LL128" else 1 for p in c.protocols),
        )
        if proto
        else tuple(tuple(AUTO if p == "LL128" else 1 for p in c.protocols) for _ in c.functions)
    )
    algo_on = [
        list(row)
        for row in (
            parse_list(algo, c.algorithms, c, what="NCCL_ALGO")
            if algo
            else tuple((1,) * len(c.algorithms) for _ in c.functions)
        )
    ]
    by_user = {(fi, ai) for fi, row in enumerate(algo_on) for ai, on in enumerate(row) if not on}
    rules: dict[tuple[int, int], str] = {}
    for fi in range(len(c.functions)):
        for ai, a in enumerate(c.algorithms):
            reasons = []
            if system.nodes == 1 and a == "NVLSTree":
                reasons.append("NVLSTree needs more than one node")
            if not system.collnet and (
                a in ("CollNetDirect", "CollNetChain") or (a == "NVLS" and system.nodes > 1)
            ):
                reasons.append(
                    "CollNet is off" if a != "NVLS" else "NVLS across nodes needs CollNet, which is off"
                )
            if system.collnet and a == "CollNetChain" and "collnet_chain" not in system.graphs and not v21:
                reasons.append("no CollNet chain support")
            if a == "CollNetDirect" and not system.nvswitch and (system.collnet or not v21):
                reasons.append("CollNetDirect needs NVSwitch")
            if reasons:
                rules[(fi, ai)] = "; ".join(reasons)
    if v21 and not system.collnet:
        # "If user has hard set NCCL_ALGO=COLLNET, ignore it": re-enable Ring and Tree
        row = algo_on[0]
        if not any(row[c.algorithm_index(a)] for a in ("Ring", "Tree", "NVLS", "NVLSTree")):
            for r in algo_on:
                r[c.algorithm_index("Ring")] = r[c.algorithm_index("Tree")] = 1
            by_user = {k for k in by_user if c.algorithms[k[1]] not in ("Ring", "Tree")}
    for fi, f in enumerate(c.functions):
        for ai, a in enumerate(c.algorithms):
            for pi, p in enumerate(c.protocols):
                key = (f, a, p)
                p_enable = proto_on[fi][pi]
                reasons = []
                if p_enable == AUTO and p == "LL128":
                    rule = _ll128_rule(graphs[a], system, c)
                    p_enable = 0 if rule else 1
                    if rule:
                        reasons.append(rule)
                elif p_enable == 0:
                    reasons.append(f"{p} disabled by NCCL_PROTO={proto}")
                if not algo_on[fi][ai] and (fi, ai) in by_user:
                    reasons.append(f"{a} disabled by NCCL_ALGO={algo}")
                if (fi, ai) in rules:
                    reasons.append(rules[(fi, ai)])
                if reasons and bws[key]:
                    bws[key] = Fraction(0)
                    why[key].extend(reasons)
                else:
                    why[key].extend(r for r in reasons if r not in why[key])
