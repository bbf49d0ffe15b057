"""Reading an ``NCCL_DEBUG=INFO`` log: what NCCL's topology search found, and its tuning table.

NCCL prints, for each rank of each communicator it creates, the graphs its topology search found
(``Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d``, in
``ncclTopoPrintGraph``/``ncclTopoCompute``, src/graph/search.cc; ``speed`` instead of ``bw``
before 2.12), the rings of the channels (``Channel %02d/%02d :``, src/init.cc), the communicator
(``comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d``, src/init.cc, 2.20 and later),
and on rank 0, with ``NCCL_DEBUG_SUBSYS`` including ``TUNING``, the latency/bandwidth table of
``ncclTopoTuneModel`` (src/graph/tuning.cc: ``%8.1f/%6.1f`` per function x algorithm x protocol,
in blocks of three algorithms since 2.19, on one ``Latency/AlgBw`` line before).

The graphs are computed in a fixed order (src/init.cc, ``initTransportsRank``, 2.21 and 2.30):
ring (pattern 4), tree (pattern 1, 2 or 3), then the CollNet graph(s) when CollNet is enabled
(pattern 3; 2.30 adds CollNet Direct with pattern 6), then NVLS (pattern 5).  A ``Pattern`` line
is assigned by that order.

:func:`parse_debug_log` keeps one rank's lines (rank 0 when it can tell, else the first rank that
printed a graph), and of that rank the largest communicator (the first of the largest): what was
chosen is said in :attr:`DebugLog.notes`.  :meth:`DebugLog.to_preset` turns the result into the
hardware description (preset) of :mod:`costmodel.nccl.presets`, naming every value it had to
assume.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from os import PathLike
from typing import Any

from costmodel._files import SMALLER_LOG, read_text
from costmodel.calibration.logs.measurements import check_text, split_lines
from costmodel.errors import ParseError

__all__ = ["ALGORITHMS", "FUNCTIONS", "PROTOCOLS", "DebugLog", "Graph", "TuningTable", "parse_debug_log",
           "read_debug_log"]

ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
"""NCCL's algorithm names in its own order (``ncclAlgoStr``, src/include/device.h of 2.30)."""
PROTOCOLS = ("LL", "LL128", "Simple")
FUNCTIONS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")

GRAPH_NAMES = ("ring", "tree", "collnet_chain", "collnet_direct", "nvls")

_PREFIX = re.compile(r"(?P<host>\S+?):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL INFO (?P<msg>.*)$")
_BARE = re.compile(r"(?:^|\s)NCCL INFO (?P<msg>.*)$")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-.]\d+)?(?:\+cuda(\d+\.\d+))?")
_PATTERN = re.compile(r"^Pattern (\d+), crossNic (\d+), nChannels (\d+), (?:bw|speed) ([0-9.]+)/([0-9.]+), "
                      r"type (\w+)/(\w+), sameChannels (\d+)")
_GRAPH_CHANNEL = re.compile(r"^\s*\d+ : ((?:NET|GPU)/\S+)")
_COMM = re.compile(r"\bcomm 0x[0-9a-fA-F]+ rank (\d+) nRanks (\d+) nNodes (\d+) "
                   r"localRanks (\d+) localRank (\d+)(?: MNNVL (\d+))?")
_COMM_OLD = re.compile(r"\bcomm 0x[0-9a-fA-F]+ rank (\d+) nranks (\d+) ")
_INIT_START = re.compile(r"Init START")
_RING_CHANNEL = re.compile(r"^Channel (\d+)/(\d+) :(?:\s+\d+)+\s*$")
_CHANNEL_COUNTS = re.compile(r"^(\d+) coll channels, (?:(\d+) collnet channels, )?(\d+) nvls channels")
_NVLS_SUPPORT = re.compile(r"NVLS multicast support is (not )?available")
_CPU = re.compile(r"\bCPU/[0-9a-fA-F-]+ \((\d+)/(\d+)/(-?\d+)\)")
_NVSWITCH = re.compile(r"\bNVS/")
_COLLNET_ON = re.compile(r"Connected collnet|Connected CollNet|Collnet Chains")
_THRESHOLDS = re.compile(r"^threadThresholds (\d+)/(\d+)/(\d+) \| (\d+)/(\d+)/(\d+) \| (\d+)(?: \| (\d+))?")
_CELL = re.compile(r"^\s*(-?[0-9]+\.[0-9])/\s*(-?[0-9]+\.[0-9])\s*$")
_GPU_NAME = re.compile(r"#\s+Rank\s+\d+ .* device\s+\d+ \[[^\]]*\] (.+?)\s*$")

_CPU_ARCH = {1: "x86", 2: "power", 3: "arm"}
_CPU_VENDOR = {1: "intel", 2: "amd", 3: "zhaoxin", 4: "mixed"}
# CUDA compute capability x 10 of the GPUs nccl-tests names in its "# Using devices" lines
_ARCH_OF_GPU = (("GB200", 100), ("B200", 100), ("B100", 100), ("GH200", 90), ("H100", 90), ("H200", 90),
                ("H800", 90), ("H20", 90), ("L40", 89), ("L4", 89), ("RTX 40", 89), ("RTX 4090", 89),
                ("A100", 80), ("A800", 80), ("A30", 80), ("A10", 86), ("A40", 86), ("A6000", 86),
                ("RTX 30", 86), ("V100", 70), ("T4", 75), ("RTX 20", 75))


@dataclass(frozen=True)
class Graph:
    """One graph of NCCL's topology search, as its ``Pattern`` line prints it (bandwidths in GB/s per
    channel, path types by name)."""

    pattern: int
    cross_nic: int
    channels: int
    bw_intra: Fraction
    bw_inter: Fraction
    type_intra: str
    type_inter: str
    same_channels: bool
    line: int
    uses_net: bool = False

    def to_preset(self) -> dict[str, Any]:
        return {"channels": self.channels, "bw_intra": float(self.bw_intra), "bw_inter": float(self.bw_inter),
                "type_intra": self.type_intra, "type_inter": self.type_inter, "latency_inter": 0.0,
                "same_channels": self.same_channels, "pattern": self.pattern}


@dataclass(frozen=True)
class TuningTable:
    """The latency/bandwidth table of ``ncclTopoTuneModel`` exactly as printed.

    ``entries[(function, algorithm, protocol)] = (latency µs, bandwidth GB/s)`` as Fractions of the
    printed ``%.1f`` text; ``max_threads[(algorithm, protocol)]``; ``truncated`` when a row or the
    table ended early (the cells printed are kept); ``inferred_algorithms`` when the ``Algorithm``
    header was missing and the names were taken from NCCL's order, three per block.
    """

    entries: dict[tuple[str, str, str], tuple[Fraction, Fraction]]
    max_threads: dict[tuple[str, str], int]
    text: dict[tuple[str, str, str], str]
    truncated: bool = False
    inferred_algorithms: bool = False

    def to_dict(self) -> dict[str, Any]:
        table: dict[str, dict[str, dict[str, list[float]]]] = {}
        for (f, a, p), (lat, bw) in self.entries.items():
            table.setdefault(f, {}).setdefault(a, {})[p] = [float(lat), float(bw)]
        threads: dict[str, dict[str, int]] = {}
        for (a, p), n in self.max_threads.items():
            threads.setdefault(a, {})[p] = n
        return {"latency_us_bandwidth_gbps": table, "max_threads": threads, "truncated": self.truncated,
                "inferred_algorithms": self.inferred_algorithms}


@dataclass
class DebugLog:
    """What an ``NCCL_DEBUG=INFO`` log says of one communicator (see the module's docstring)."""

    path: str = "<text>"
    version: str | None = None
    cuda: str | None = None
    rank: str | None = None
    n_ranks: int | None = None
    n_nodes: int | None = None
    local_ranks: int | None = None
    mnnvl: bool = False
    hosts: int = 0
    graphs: dict[str, Graph] = field(default_factory=dict)
    channels: int | None = None
    coll_channels: int | None = None
    collnet_channels: int | None = None
    nvls_channels: int | None = None
    nvls_support: bool | None = None
    collnet_connected: bool = False
    nvswitch: bool | None = None
    cpu_arch: str | None = None
    cpu_vendor: str | None = None
    gpu: str | None = None
    tuning: TuningTable | None = None
    thread_thresholds: tuple[int, ...] | None = None
    notes: list[str] = field(default_factory=list)
    graph_gpus: int | None = None

    # ------------------------------------------------------------------ preset
    def multi_node(self) -> bool | None:
        """Whether the communicator spans nodes: nNodes when printed, else whether a graph's channels
        start at a NIC (``NET/``), which NCCL's search only does across nodes."""
        if self.n_nodes is not None:
            return self.n_nodes > 1
        if self.graphs:
            return any(g.uses_net for g in self.graphs.values())
        return None

    def _hosts_per_node(self, gpus: int, assumptions: list[str]) -> int:
        """The hosts one node spans: with ``MNNVL 1`` (one NVLink domain over hosts, one node to NCCL),
        the hosts the log's lines name per node, where they divide its GPUs; else 1."""
        if not self.mnnvl:
            return 1
        nodes = self.n_nodes or 1
        if self.hosts > nodes and self.hosts % nodes == 0 and gpus % (self.hosts // nodes) == 0:
            return self.hosts // nodes
        named = f"{self.hosts} host{'s' if self.hosts != 1 else ''}"
        assumptions.append(f"hosts_per_node 1: the log prints MNNVL 1 (a node over several hosts) but its "
                           f"lines name {named}; set hosts_per_node to the hosts of one NVLink domain")
        return 1

    def to_preset(self, name: str = "from-log") -> dict[str, Any]:
        """The hardware description (the preset schema of :mod:`costmodel.nccl.presets`), with an
        ``assumptions`` list naming each value the log did not give."""
        assumptions: list[str] = []
        if "ring" not in self.graphs:
            raise ParseError("no ring graph of NCCL's topology search (no 'Pattern 4, ..., nChannels ...' "
                             "line); run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING",
                             path=self.path)
        arch = _arch_of(self.gpu)
        if arch is None:
            arch = 90 if "nvls" in self.graphs or self.nvls_support else 80
            assumptions.append(f"arch {arch}: the log does not name the GPU "
                               "(nccl-tests' '# Using devices' lines do)")
        multi = self.multi_node()
        if multi is None:
            multi = False
            assumptions.append("one node: the log gives no node count")
        elif self.n_nodes is None:
            assumptions.append("several nodes: a graph's channels start at a NIC (no 'nNodes' line)" if multi
                               else "one node: no graph's channel starts at a NIC (no 'nNodes' line)")
        if self.local_ranks is not None:
            gpus = self.local_ranks
        elif self.n_ranks is not None and self.n_nodes:
            gpus = self.n_ranks // self.n_nodes
        else:
            gpus = self.graph_gpus or 1
            assumptions.append(f"gpus_per_node {gpus}: counted in a graph's channel (no 'localRanks' line)")
        hosts = self._hosts_per_node(gpus, assumptions)
        cpu_arch = self.cpu_arch or "x86"
        cpu_vendor = self.cpu_vendor or "intel"
        if self.cpu_arch is None or self.cpu_vendor is None:
            assumptions.append(f"cpu {cpu_arch}/{cpu_vendor}: no 'CPU/... (arch/vendor/model)' topology line")
        nvls = "nvls" in self.graphs and self.graphs["nvls"].channels > 0 if self.nvls_channels is None \
            else self.nvls_channels > 0
        nvswitch = bool(self.nvswitch) or nvls
        if self.nvswitch is None and not nvls:
            assumptions.append("no NVSwitch: the log shows no NVS node and no NVLS graph")
        collnet = self.collnet_connected
        if collnet:
            assumptions.append("collnet_heads 0: the log does not print the CollNet head count")
        elif any(k in self.graphs for k in ("collnet_chain", "collnet_direct")):
            assumptions.append("collnet false: a CollNet graph was searched "
                               "but no CollNet connection is printed")
        assumptions.append("latency_inter 0.0 and net_device_host true: the log does not print them")
        preset: dict[str, Any] = {
            "name": name,
            "description": self._description(),
            "sources": [f"NCCL_DEBUG=INFO log {self.path}"],
            "arch": arch, "gpus_per_node": gpus, "cpu_arch": cpu_arch, "cpu_vendor": cpu_vendor,
            "nvswitch": nvswitch, "nvls": nvls, "collnet": collnet, "collnet_heads": 0,
            "net_device_host": True,
        }
        if hosts > 1:
            preset["hosts_per_node"] = hosts
        keep = {k: g for k, g in self.graphs.items() if k in GRAPH_NAMES
                and (collnet or not k.startswith("collnet"))}
        preset["multi" if multi else "single"] = {k: g.to_preset() for k, g in keep.items()}
        preset["assumptions"] = assumptions
        return preset

    def _description(self) -> str:
        parts = [f"NCCL {self.version}" if self.version else "NCCL (version not printed)"]
        if self.n_ranks is not None:
            parts.append(f"{self.n_ranks} ranks" + (f" on {self.n_nodes} nodes" if self.n_nodes else ""))
        if self.gpu:
            parts.append(self.gpu)
        return "built from an NCCL_DEBUG=INFO log: " + ", ".join(parts)

    def to_toml(self, name: str = "from-log") -> str:
        """:meth:`to_preset` as the text of a preset file (``costmodel nccl preset LOG``)."""
        return preset_toml(self.to_preset(name))

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "version": self.version, "cuda": self.cuda, "rank": self.rank,
            "n_ranks": self.n_ranks, "n_nodes": self.n_nodes, "local_ranks": self.local_ranks,
            "mnnvl": self.mnnvl, "hosts": self.hosts,
            "graphs": {k: g.to_preset() | {"cross_nic": g.cross_nic, "line": g.line, "uses_net": g.uses_net}
                       for k, g in self.graphs.items()},
            "channels": self.channels, "coll_channels": self.coll_channels,
            "collnet_channels": self.collnet_channels, "nvls_channels": self.nvls_channels,
            "nvls_support": self.nvls_support, "nvswitch": self.nvswitch, "cpu_arch": self.cpu_arch,
            "cpu_vendor": self.cpu_vendor, "gpu": self.gpu,
            "tuning": None if self.tuning is None else self.tuning.to_dict(),
            "thread_thresholds": None if self.thread_thresholds is None else list(self.thread_thresholds),
            "notes": list(self.notes),
        }


def _arch_of(gpu: str | None) -> int | None:
    if gpu is None:
        return None
    for key, arch in _ARCH_OF_GPU:
        if key in gpu:
            return arch
    return None


# ---------------------------------------------------------------------- TOML

def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def preset_toml(preset: dict[str, Any]) -> str:
    """*preset* (the mapping of the preset schema) as TOML text: top-level keys, then one table per
    ``[single.GRAPH]`` / ``[multi.GRAPH]``; ``assumptions`` are kept as a list."""
    lines = []
    for key, v in preset.items():
        if not isinstance(v, dict):
            lines.append(f"{key} = {_value(v)}")
    for section in ("single", "multi"):
        for graph, keys in preset.get(section, {}).items():
            lines.append("")
            lines.append(f"[{section}.{graph}]")
            lines.extend(f"{k} = {_value(v)}" for k, v in keys.items())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- parsing

@dataclass
class _Line:
    number: int
    key: str
    msg: str


@dataclass
class _Section:
    """The lines of one rank for one communicator."""

    lines: list[_Line] = field(default_factory=list)
    has_ring: bool = False


def read_debug_log(path: str | PathLike[str]) -> DebugLog:
    """:func:`parse_debug_log` of the file *path* (read by :func:`costmodel._files.read_text`)."""
    return parse_debug_log(read_text(path, what="the NCCL log", smaller=SMALLER_LOG), path=str(path))


def parse_debug_log(text: str, *, path: str = "<text>") -> DebugLog:
    """What the ``NCCL_DEBUG=INFO`` output *text* says of one communicator (see the module).

    Launcher prefixes (Open MPI ``--tag-output``, ``srun --label``, ``-prepend-rank``) are removed,
    CRLF line ends accepted, lines of other programs ignored.  A log with no NCCL line is a
    :class:`~costmodel.errors.ParseError` naming the file.

    >>> log = parse_debug_log("h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, "
    ...                       "bw 20.000000/20.000000, type NVL/PIX, sameChannels 1")
    >>> log.graphs["ring"].channels, log.graphs["ring"].bw_intra
    (2, Fraction(20, 1))
    """
    text = check_text(text, path)
    raw = split_lines(text, path)
    log = DebugLog(path=path)
    lines: list[_Line] = []
    for number, line in enumerate(raw, 1):
        if log.version is None and "NCCL version" in line:
            found = _VERSION.search(line)
            if found:
                log.version, log.cuda = found.group(1), found.group(2)
        if "NCCL INFO" not in line:
            if log.gpu is None and "# " in line:
                gpu = _GPU_NAME.search(line)
                if gpu:
                    log.gpu = gpu.group(1)
            continue
        m = _PREFIX.search(line)
        if m:
            lines.append(_Line(number, f"{m['host']}:{m['pid']} [{m['dev']}]", m["msg"]))
        else:
            bare = _BARE.search(line)
            if bare:
                lines.append(_Line(number, "", bare["msg"]))
    if not lines:
        raise ParseError("no 'NCCL INFO' line: this is not an NCCL_DEBUG=INFO log "
                         "(run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING)", path=path, line=1)
    log.hosts = len({ln.key.partition(":")[0] for ln in lines if ln.key})
    key = _choose_rank(lines, log)
    mine = [ln for ln in lines if ln.key in (key, "")]
    sections = _sections(mine)
    section = _choose_section(sections, log)
    _read_section(section, log)
    # the topology print and the tuning table may come from rank 0's thread only: look at all lines
    _read_everywhere(lines, log, key)
    return log


def _choose_rank(lines: list[_Line], log: DebugLog) -> str:
    """The rank whose graphs are read: rank 0 (by its comm line, else as the rank that printed the
    tuning table), when it printed a graph; else the first rank that printed one."""
    with_graphs = {ln.key for ln in lines if _PATTERN.match(ln.msg)}
    candidates: list[tuple[str, str]] = []
    for ln in lines:
        m = _COMM.search(ln.msg) or _COMM_OLD.search(ln.msg)
        if m and m.group(1) == "0":
            candidates.append((ln.key, "rank 0"))
            break
    for ln in lines:
        if ln.msg.startswith(("Latency/AlgBw", "  Algorithm", "  Protocol")):
            candidates.append((ln.key, "the rank that printed the tuning table (rank 0)"))
            break
    firsts = [ln.key for ln in lines if (m := _PATTERN.match(ln.msg)) is not None and m.group(1) == "4"]
    firsts += [ln.key for ln in lines if ln.key in with_graphs]
    if firsts:
        candidates.append((firsts[0], "the first rank to print a graph"))
    fallback = candidates[0] if candidates else (lines[0].key, "")
    chosen = next((c for c in candidates if c[0] in with_graphs), fallback)
    log.rank = chosen[0] or None
    if chosen[0] and chosen[1]:
        log.notes.append(f"read the graphs of {chosen[0]}, {chosen[1]}")
    return chosen[0]


def _sections(lines: list[_Line]) -> list[_Section]:
    sections = [_Section()]
    for ln in lines:
        starts = _INIT_START.search(ln.msg) is not None
        ring = (m := _PATTERN.match(ln.msg)) is not None and m.group(1) == "4"
        current = sections[-1]
        if (starts and current.lines) or (ring and current.has_ring):
            sections.append(_Section())
            current = sections[-1]
        current.lines.append(ln)
        current.has_ring = current.has_ring or ring
    return [s for s in sections if s.lines]


def _size(section: _Section) -> int:
    for ln in section.lines:
        m = _COMM.search(ln.msg) or _COMM_OLD.search(ln.msg)
        if m:
            return int(m.group(2))
    return 0


def _choose_section(sections: list[_Section], log: DebugLog) -> _Section:
    with_graphs = [s for s in sections if s.has_ring] or sections
    best = max(with_graphs, key=_size)  # max keeps the first of the largest
    if len(with_graphs) > 1:
        where = best.lines[0].number
        log.notes.append(f"{len(with_graphs)} communicators in the log: read the largest "
                         f"({_size(best) or 'size not printed'} ranks), the one starting at line {where}")
    return best


def _read_section(section: _Section, log: DebugLog) -> None:
    order: list[str] = []
    pending: Graph | None = None
    name = ""
    for ln in section.lines:
        msg = ln.msg
        m = _PATTERN.match(msg)
        if m:
            if pending is not None:
                log.graphs[name] = pending
            pattern = int(m.group(1))
            name = _graph_name(pattern, order)
            order.append(name)
            pending = Graph(pattern=pattern, cross_nic=int(m.group(2)), channels=int(m.group(3)),
                            bw_intra=Fraction(m.group(4)), bw_inter=Fraction(m.group(5)),
                            type_intra=m.group(6), type_inter=m.group(7), same_channels=m.group(8) != "0",
                            line=ln.number)
            continue
        g = _GRAPH_CHANNEL.match(msg)
        if g and pending is not None:
            if g.group(1).startswith("NET/") and not pending.uses_net:
                pending = Graph(**{**pending.__dict__, "uses_net": True})
            gpus = set(re.findall(r"GPU/\S+", msg))
            log.graph_gpus = max(log.graph_gpus or 0, len(gpus))
            continue
        if (c := _COMM.search(msg)) is not None:
            log.n_ranks, log.n_nodes, log.local_ranks = int(c.group(2)), int(c.group(3)), int(c.group(4))
            log.mnnvl = c.group(6) == "1"
        elif (c := _COMM_OLD.search(msg)) is not None and log.n_ranks is None:
            log.n_ranks = int(c.group(2))
        elif (c := _RING_CHANNEL.match(msg)) is not None:
            log.channels = int(c.group(2))
        elif (c := _CHANNEL_COUNTS.match(msg)) is not None:
            log.coll_channels = int(c.group(1))
            log.collnet_channels = None if c.group(2) is None else int(c.group(2))
            log.nvls_channels = int(c.group(3))
        elif (c := _THRESHOLDS.match(msg)) is not None:
            log.thread_thresholds = tuple(int(x) for x in c.groups() if x is not None)
    if pending is not None:
        log.graphs[name] = pending


_CANDIDATES = {4: ("ring",), 5: ("nvls",), 6: ("collnet_direct",), 1: ("tree",), 2: ("tree",),
               3: ("tree", "collnet_chain", "collnet_direct")}


def _graph_name(pattern: int, seen: list[str]) -> str:
    """The graph a ``Pattern`` line belongs to, by NCCL's order of computing them (src/init.cc):
    ring, tree, CollNet chain (pattern 3), CollNet direct (pattern 3 in 2.21, 6 in 2.30), NVLS."""
    for name in _CANDIDATES.get(pattern, ()):
        if name not in seen:
            return name
    return f"pattern{pattern}-{len(seen)}"


def _read_everywhere(lines: list[_Line], log: DebugLog, key: str) -> None:
    """The topology print, NVLS support and the tuning table: from the chosen rank when it printed
    them, else from the first rank that did (rank 0 prints the table; every rank the topology)."""
    for pick in (lambda ln: ln.key == key, lambda ln: True):
        for ln in lines:
            if not pick(ln):
                continue
            if log.cpu_arch is None and (m := _CPU.search(ln.msg)) is not None:
                log.cpu_arch = _CPU_ARCH.get(int(m.group(1)))
                log.cpu_vendor = _CPU_VENDOR.get(int(m.group(2))) if log.cpu_arch == "x86" else "intel"
            if log.nvswitch is None and ln.msg.lstrip().startswith("+") and _NVSWITCH.search(ln.msg):
                log.nvswitch = True
            if _COLLNET_ON.search(ln.msg):
                log.collnet_connected = True
            if log.nvls_support is None and (m := _NVLS_SUPPORT.search(ln.msg)) is not None:
                log.nvls_support = m.group(1) is None
            if log.thread_thresholds is None and (m := _THRESHOLDS.match(ln.msg)) is not None:
                log.thread_thresholds = tuple(int(x) for x in m.groups() if x is not None)
        if log.tuning is None:
            log.tuning = _read_table([ln for ln in lines if pick(ln)])


def _row_cells(msg: str) -> tuple[list[str], bool]:
    """The cells of a table line after its name, and whether the line ended with its final ``|``."""
    parts = msg.split("|")[1:]
    complete = msg.rstrip().endswith("|")
    if complete:
        parts = parts[:-1]
    return parts, complete


def _read_row(function: str, columns: list[tuple[str, str]], cells: list[str],
              entries: dict[tuple[str, str, str], tuple[Fraction, Fraction]],
              text: dict[tuple[str, str, str], str]) -> int:
    """Read the complete ``lat/bw`` cells of one row into *entries* and *text*; how many there were."""
    got = 0
    for (a, p), cell in zip(columns, cells, strict=False):
        m = _CELL.match(cell)
        if m is None:
            break
        entries[(function, a, p)] = (Fraction(m.group(1)), Fraction(m.group(2)))
        text[(function, a, p)] = cell.strip()
        got += 1
    return got


def _read_table(lines: list[_Line]) -> TuningTable | None:
    """The TUNING table in *lines* (both layouts: 2.19+ blocks of three algorithms with ``Algorithm`` /
    ``Protocol`` headers, and the single ``Latency/AlgBw`` line before)."""
    entries: dict[tuple[str, str, str], tuple[Fraction, Fraction]] = {}
    text: dict[tuple[str, str, str], str] = {}
    threads: dict[tuple[str, str], int] = {}
    columns: list[tuple[str, str]] = []
    named: list[str] = []
    blocks = 0
    truncated = inferred = seen = False
    for ln in lines:
        msg = ln.msg
        head = msg.split("|", 1)[0].strip()
        cells, complete = _row_cells(msg)
        if head == "Latency/AlgBw":
            columns = []
            for cell in (c.strip() for c in cells if c.strip()):
                a, _, p = cell.partition("/")
                columns.append((a.strip(), p.strip()))
            seen = True
        elif head == "Algorithm":
            named = [c.strip() for c in cells if c.strip()]
            seen = True
        elif head == "Protocol":
            protocols = [c.strip() for c in cells if c.strip()]
            per = len(PROTOCOLS)
            if not named or len(named) * per != len(protocols):
                start = per * blocks
                named = list(ALGORITHMS[start:start + len(protocols) // per])
                inferred = True
            columns = [(named[i // per], p) for i, p in enumerate(protocols) if i // per < len(named)]
            named, blocks, seen = [], blocks + 1, True
        elif head == "Max NThreads" and columns:
            for (a, p), cell in zip(columns, cells, strict=False):
                if cell.strip().isdigit():
                    threads[(a, p)] = int(cell.strip())
        elif head in FUNCTIONS and columns:
            got = _read_row(head, columns, cells if complete else cells[:-1], entries, text)
            truncated = truncated or got < len(columns)
    if not seen:
        return None
    counted = {f for f, _, _ in entries}
    truncated = truncated or not entries or len(counted) < len(FUNCTIONS)
    return TuningTable(entries=entries, max_threads=threads, text=text, truncated=truncated,
                       inferred_algorithms=inferred)
