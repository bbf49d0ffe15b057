"""The hardware NCCL's tuning model sees: what its topology search found (an input here).

A :class:`Graph` is one ``struct ncclTopoGraph`` after the ranks agreed on it (``src/init.cc``
takes the minimum channels and bandwidths and the maximum path types over the ranks); a
:class:`System` holds the graphs by search name (``ring``, ``tree``, ``collnet_chain``,
``collnet_direct``, ``nvls``) with the communicator's shape (ranks, nodes, compute capability,
CPU). :meth:`System.from_preset` reads the preset schema (a ``single`` and/or a ``multi`` half);
:meth:`System.explicit` builds one from a few numbers, as the command line's hardware options do.

References
----------
.. [1] NVIDIA, NCCL source, ``src/include/graph.h`` (struct ncclTopoGraph, NCCL_TOPO_PATTERN_*),
   ``src/init.cc`` (initTransportsRank), ``src/graph/search.cc``, tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError, UnknownNameError
from costmodel.nccl.schema import GRAPH_NAMES, check_graph, check_preset
from costmodel.validate import is_whole, positive, whole

__all__ = [
    "ARCHS",
    "CPU_ARCHS",
    "CPU_VENDORS",
    "GRAPH_NAMES",
    "PATH_TYPES",
    "Graph",
    "System",
    "parse_arch",
    "value_text",
]

ARCHS = (70, 80, 90, 100)
"""The compute capabilities (× 10) the tables have a row for: Volta, Ampere, Hopper, Blackwell.
Others between them (75, 86, 89, 120 …) are accepted and fall in the row below them, as in NCCL."""


PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS")
"""Path type names as NCCL prints them (2.30's order; 2.21 lacks C2C and P2C)."""

CPU_ARCHS = ("x86", "power", "arm", "mixed")
CPU_VENDORS = ("intel", "amd", "zhaoxin", "mixed")

_PATTERNS = (1, 2, 3, 4, 5, 6)
_MAX_NUMBER = 10**9
_MIN_NUMBER = Fraction(1, 10**6)
"""The range of a bandwidth (GB/s per channel) or a latency (µs) other than 0: 1 kB/s to 1 EB/s per
channel, 1 ps to 1000 s, far beyond any link on either side; a number outside it is a typo, and its
times would print hundreds of digits (or overflow a float)."""
_CHANNELS_HINT = "a graph the search found has 1 to 64 (MAXCHANNELS) channels"


def value_text(value: Any) -> str:
    """*value* as a message shows it: a Fraction as its number (``-40``, ``1e+308``, ``1e+400``), else its
    repr."""
    if isinstance(value, Fraction):
        if value.denominator == 1 and abs(value) < 10**12:
            return str(value)
        number = float(value) if 1e-300 < abs(value) < 1e300 else Decimal(value.numerator) / value.denominator
        return f"{number:g}" if isinstance(number, float) else f"{number.normalize():.6g}"
    return repr(value)


def _rate(value: Any, name: str, *, allow_zero: bool = False) -> Fraction:
    """A finite non-negative (or positive) number as an exact Fraction (a float by its decimal text), 0 or
    from :data:`_MIN_NUMBER` to :data:`_MAX_NUMBER`."""
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | str):
        raise InputError(f"{name}={value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{name}={value!r} is not finite")
    try:
        number = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{name}={value!r} is not a number") from None
    if number > _MAX_NUMBER:
        raise InputError(
            f"{name}={value_text(value)} is too large; at most {_MAX_NUMBER:,} (GB/s per channel or µs)"
        )
    if number < 0 or (number == 0 and not allow_zero):
        raise InputError(f"{name}={value_text(value)} is not {'non-negative' if allow_zero else 'positive'}")
    if 0 < number < _MIN_NUMBER:
        raise InputError(f"{name}={value_text(value)} is too small; at least {float(_MIN_NUMBER):g} (GB/s "
                         f"per channel or µs){', or 0' if allow_zero else ''}")
    return number


def _choice(value: Any, name: str, choices: tuple[str, ...], kind: str) -> str:
    if not isinstance(value, str):
        raise InputError(f"{name}={value!r} is not text; choose from {', '.join(choices)}")
    for choice in choices:
        if value.lower() == choice.lower():
            return choice
    raise UnknownNameError(kind, value, choices, context=f"for {name}")


_ARCH = re.compile(r"(?:sm_?)?(\d{2,3})", re.IGNORECASE)


def parse_arch(text: Any) -> int:
    """A compute capability × 10 from ``sm90``, ``sm_90``, ``90`` or ``9.0`` (an int passes as it is).

    >>> parse_arch("sm90"), parse_arch("9.0"), parse_arch(100)
    (90, 90, 100)
    >>> parse_arch("sm75x")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: arch='sm75x' is not a compute capability; give e.g. arch=sm80, sm90 \
or sm100 (the capability × 10)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    word = str(text).strip()
    dotted = re.fullmatch(r"(\d{1,2})\.(\d)", word)
    found = _ARCH.fullmatch(word)
    if dotted:
        return int(dotted[1]) * 10 + int(dotted[2])
    if found is None:
        raise InputError(f"arch={text!r} is not a compute capability; give e.g. arch=sm80, sm90 or sm100 "
                         "(the capability × 10)")
    return int(found[1])


@dataclass(frozen=True, slots=True, kw_only=True)
class Graph:
    """One graph of NCCL's topology search (``struct ncclTopoGraph``), agreed by all ranks.

    Parameters
    ----------
    channels : int
        ``nChannels``, ≥ 1 (an absent graph is simply not in :attr:`System.graphs`).
    bw_intra, bw_inter : Fraction
        ``bwIntra``/``bwInter``: GB/s (10⁹ B/s) per channel inside a node and across nodes.
    type_intra, type_inter : str
        The worst path type inside a node and to the NIC (``NVL``, ``PIX``, ``SYS`` …).
    latency_inter : Fraction
        ``latencyInter``, µs (extra network latency the search recorded; usually 0).
    same_channels : bool
        ``sameChannels``: all channels use the same GPUs (broadcast/reduce latency).
    pattern : int
        ``NCCL_TOPO_PATTERN_*``: 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 NVLS, 6 CollNet direct.
    """

    channels: int
    bw_intra: Fraction
    bw_inter: Fraction
    type_intra: str = "NVL"
    type_inter: str = "PIX"
    latency_inter: Fraction = Fraction(0)
    same_channels: bool = True
    pattern: int = 4

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        positive(self.channels, "channels", high=64, hint=_CHANNELS_HINT)
        set_(self, "bw_intra", _rate(self.bw_intra, "bw_intra"))
        set_(self, "bw_inter", _rate(self.bw_inter, "bw_inter"))
        set_(self, "latency_inter", _rate(self.latency_inter, "latency_inter", allow_zero=True))
        set_(self, "type_intra", _choice(self.type_intra, "type_intra", PATH_TYPES, "path type"))
        set_(self, "type_inter", _choice(self.type_inter, "type_inter", PATH_TYPES, "path type"))
        if not isinstance(self.same_channels, bool):
            raise InputError(f"same_channels={self.same_channels!r} is not true or false")
        whole(
            self.pattern,
            "pattern",
            low=1,
            high=6,
            hint="NCCL_TOPO_PATTERN_*: 1 balanced tree, 2 split tree, 3 tree, 4 ring, 5 NVLS, "
            "6 CollNet direct",
        )

    @classmethod
    def from_mapping(cls, table: Mapping[str, Any], *, where: str = "") -> Graph:
        """A graph from a preset table (the preset schema's keys, :mod:`costmodel.nccl.schema`).

        Errors name the table as *where* (``[single.ring] of preset 'box'``).
        """
        where = where or "graph"
        keys = check_graph(table, where)
        try:
            return cls(**keys)
        except InputError as e:
            raise InputError(f"{where}: {e}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class System:
    """A communicator as NCCL's tuning model sees it.

    Parameters
    ----------
    arch : int
        Compute capability × 10 of every GPU (70, 80, 86, 90, 100, 121 …; 60 ≤ arch ≤ 129).
    ranks, nodes : int
        ``nRanks`` and ``nNodes``; ranks are spread evenly, so ranks must be a multiple of nodes.
    graphs : mapping of str to Graph
        By search name; ``ring`` and ``tree`` are required.
    cpu_arch, cpu_vendor : str
        The host CPU (``x86``/``power``/``arm``/``mixed`` and ``intel``/``amd``/``zhaoxin``/``mixed``).
    nvswitch : bool
        NVSwitches present (CollNet Direct needs them).
    nvls : bool
        NVLink SHARP usable (``comm->nvlsSupport``); needs an ``nvls`` graph.
    collnet : bool
        CollNet enabled (``comm->config.collnetEnable``); needs a ``collnet_chain`` graph.
    collnet_heads : int
        ``collNetHeadsNum``: NICs usable by CollNet per node.
    net_device_host : bool
        The network plugin is a host one (PAT needs it).
    name : str
        Where the description came from (a preset's name), for messages.
    gpus_per_node : int, optional
        The GPUs a node of the description holds (a preset's ``gpus_per_node``), when it says; a run on
        fewer of them is noted (:attr:`notes`).
    hosts_per_node : int
        The hosts a node spans (a preset's ``hosts_per_node``): above 1, the node is one NVLink domain
        across hosts (Multi-Node NVLink), whose hosts' topologies NCCL fuses into one (src/graph/topo.cc,
        ``comm->MNNVL``), so a node is NCCL's, not a host; noted (:attr:`notes`).
    """

    arch: int
    ranks: int
    nodes: int
    graphs: Mapping[str, Graph]
    cpu_arch: str = "x86"
    cpu_vendor: str = "intel"
    nvswitch: bool = False
    nvls: bool = False
    collnet: bool = False
    collnet_heads: int = 0
    net_device_host: bool = True
    name: str = ""
    gpus_per_node: int | None = None
    hosts_per_node: int = 1

    def __post_init__(self) -> None:
        whole(
            self.arch,
            "arch",
            low=60,
            high=129,
            hint="the compute capability × 10, e.g. 80 (A100), 90 (H100), 100 (B200), 121 (GB10)",
        )
        whole(self.ranks, "ranks", low=2, hint="NCCL's tuning model needs at least 2 ranks")
        positive(self.nodes, "nodes")
        if self.nodes > self.ranks:
            raise InputError(f"nodes={self.nodes} is more than ranks={self.ranks}; every node holds a rank")
        if self.ranks % self.nodes:
            raise InputError(
                f"ranks={self.ranks} is not a multiple of nodes={self.nodes}; "
                "give the same number of GPUs on every node"
            )
        set_ = object.__setattr__
        set_(self, "cpu_arch", _choice(self.cpu_arch, "cpu_arch", CPU_ARCHS, "CPU architecture"))
        set_(self, "cpu_vendor", _choice(self.cpu_vendor, "cpu_vendor", CPU_VENDORS, "CPU vendor"))
        for flag in ("nvswitch", "nvls", "collnet", "net_device_host"):
            if not isinstance(getattr(self, flag), bool):
                raise InputError(f"{flag}={getattr(self, flag)!r} is not true or false")
        whole(self.collnet_heads, "collnet_heads", low=0)
        whole(self.hosts_per_node, "hosts_per_node", low=1)
        if not isinstance(self.graphs, Mapping):
            raise InputError(f"graphs={self.graphs!r} is not a mapping of graph names to graphs")
        for key, graph in self.graphs.items():
            if key not in GRAPH_NAMES:
                raise UnknownNameError("graph", str(key), GRAPH_NAMES)
            if not isinstance(graph, Graph):
                raise InputError(f"graphs[{key!r}] is not a Graph")
        for key in ("ring", "tree"):
            if key not in self.graphs:
                raise InputError(f"graphs lacks {key!r}; NCCL always has a ring and a tree graph")
        if self.nvls and "nvls" not in self.graphs:
            raise InputError("nvls=True needs an 'nvls' graph (its channels and bandwidths)")
        if self.collnet and "collnet_chain" not in self.graphs and "collnet_direct" not in self.graphs:
            raise InputError("collnet=True needs a 'collnet_chain' or 'collnet_direct' graph")
        set_(self, "graphs", dict(self.graphs))

    def __hash__(self) -> int:  # graphs is a dict: hash by content
        return hash(
            (
                self.arch,
                self.ranks,
                self.nodes,
                tuple(sorted(self.graphs.items())),
                self.cpu_arch,
                self.cpu_vendor,
                self.nvswitch,
                self.nvls,
                self.collnet,
                self.collnet_heads,
                self.net_device_host,
            )
        )

    def with_net_latency(self, latency: Fraction) -> System:
        """This system with *latency* µs added to every graph's ``latencyInter``: a network whose plugin
        reports a latency of its own (NCCL's ``ncclNetProperties_t.latency``, which the topology search
        records in the graph it builds across nodes).

        >>> from costmodel.nccl.presets import load_preset
        >>> s = System.from_preset(load_preset("dgx-h100"), ranks=16, nodes=2).with_net_latency(Fraction(8))
        >>> s.graphs["ring"].latency_inter
        Fraction(8, 1)
        """
        from dataclasses import replace

        extra = _rate(latency, "net_latency", allow_zero=True)
        graphs = {k: replace(g, latency_inter=g.latency_inter + extra) for k, g in self.graphs.items()}
        return replace(self, graphs=graphs)

    @property
    def notes(self) -> tuple[str, ...]:
        """What a prediction on this description should say of it: a run on part of a preset's node.

        >>> from costmodel.nccl.presets import load_preset
        >>> System.from_preset(load_preset("pcie-8x-rtx4090"), ranks=4, nodes=1).notes[0][:52]
        '4 of the 8 GPUs of a node of preset pcie-8x-rtx4090:'
        """
        gpus = self.gpus_per_node
        notes = []
        if self.hosts_per_node > 1 and gpus is not None:
            notes.append(f"preset {self.name}: a node is one NVLink domain of {gpus} GPUs over "
                         f"{self.hosts_per_node} hosts ({gpus // self.hosts_per_node} GPUs each), which NCCL "
                         "counts as one node (Multi-Node NVLink: it fuses the hosts' topologies into one); "
                         "nodes here count NVLink domains, not hosts")
        if gpus is not None and self.ranks_per_node < gpus:
            notes.append(f"{self.ranks_per_node} of the {gpus} GPUs of a node of preset {self.name}: its "
                         "graphs are those of a whole node, which NCCL's search on fewer GPUs may not find "
                         "(on PCIe, fewer GPUs may share a switch or cross a socket); an NCCL_DEBUG=INFO log "
                         "of this run (costmodel nccl preset) describes it")
        return tuple(notes)

    @property
    def ranks_per_node(self) -> int:
        """GPUs per node (``nRanks / nNodes``)."""
        return self.ranks // self.nodes

    @property
    def compcap_index(self) -> int:
        """Row of the per-arch tables in 2.30 (0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell)."""
        return 3 if self.arch >= 100 else 2 if self.arch >= 90 else 1 if self.arch >= 80 else 0

    @property
    def node_bucket(self) -> int:
        """Column of the per-arch tables: 0 for one node, 1 for two, 2 for more (``index2``)."""
        return self.nodes - 1 if self.nodes <= 2 else 2

    def to_dict(self) -> dict[str, Any]:
        """The description as JSON-native data (the preset schema's keys)."""
        from costmodel._json import to_json

        graphs = {
            k: {
                "channels": g.channels,
                "bw_intra": to_json(g.bw_intra),
                "bw_inter": to_json(g.bw_inter),
                "type_intra": g.type_intra,
                "type_inter": g.type_inter,
                "latency_inter": to_json(g.latency_inter),
                "same_channels": g.same_channels,
                "pattern": g.pattern,
            }
            for k, g in self.graphs.items()
        }
        return {
            "name": self.name,
            "arch": self.arch,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "cpu_arch": self.cpu_arch,
            "cpu_vendor": self.cpu_vendor,
            "nvswitch": self.nvswitch,
            "nvls": self.nvls,
            "collnet": self.collnet,
            "collnet_heads": self.collnet_heads,
            "net_device_host": self.net_device_host,
            "graphs": graphs,
        }

    # -- constructors ------------------------------------------------------------------------------

    @classmethod
    def from_preset(cls, mapping: Mapping[str, Any], *, ranks: int, nodes: int) -> System:
        """The system a preset describes, for *ranks* GPUs on *nodes* nodes.

        The preset's ``single`` graphs are used when ``nodes == 1``, its ``multi`` graphs otherwise.
        *mapping* follows the preset schema (:mod:`costmodel.nccl.schema`), as a file does
        (:func:`costmodel.nccl.presets.load_preset` returns one).

        Raises
        ------
        InputError
            If the preset lacks that half, does not follow the schema, has bad values, or if
            ``ranks / nodes`` differs from its ``gpus_per_node`` on more than one node.

        Examples
        --------
        >>> graph = {"channels": 12, "bw_intra": 20.0, "bw_inter": 20.0, "type_intra": "NVL",
        ...          "type_inter": "PIX"}
        >>> preset = {"name": "box", "arch": 80, "gpus_per_node": 8, "cpu_arch": "x86",
        ...           "cpu_vendor": "amd", "nvswitch": True, "nvls": False,
        ...           "single": {"ring": graph | {"pattern": 4}, "tree": graph | {"pattern": 1}}}
        >>> System.from_preset(preset, ranks=8, nodes=1).graphs["ring"].channels
        12
        >>> System.from_preset(preset, ranks=16, nodes=2)
        Traceback (most recent call last):
            ...
        costmodel.errors.InputError: preset 'box' has no 'multi' graphs; it describes only one node
        """
        name = str(mapping.get("name", "")) if isinstance(mapping, Mapping) else ""
        try:
            mapping = check_preset(mapping)
        except InputError as e:
            raise InputError(f"preset {name!r}: {e}") from None
        positive(nodes, "nodes")
        half = "single" if nodes == 1 else "multi"
        if half not in mapping:
            other = "one node" if half == "multi" else "several nodes"
            if half == "multi" and mapping["hosts_per_node"] > 1:
                other += (f" (one NVLink domain of {mapping['gpus_per_node']} GPUs over "
                          f"{mapping['hosts_per_node']} hosts)")
            raise InputError(f"preset {name!r} has no {half!r} graphs; it describes only {other}")
        gpus = mapping["gpus_per_node"]
        if is_whole(ranks) and nodes > 1 and ranks != gpus * nodes:
            raise InputError(
                f"ranks={ranks} is not nodes × gpus_per_node = {nodes} × {gpus} of preset {name!r}"
            )
        if is_whole(ranks) and nodes == 1 and ranks > gpus:
            raise InputError(f"ranks={ranks} is more than the {gpus} GPUs per node of preset {name!r}")
        graphs = {
            key: Graph.from_mapping(table, where=f"[{half}.{key}] of preset {name!r}")
            for key, table in mapping[half].items()
        }
        flags = {
            k: mapping[k]
            for k in (
                "cpu_arch",
                "cpu_vendor",
                "nvswitch",
                "nvls",
                "collnet",
                "collnet_heads",
                "net_device_host",
            )
        }
        if flags["nvls"] and "nvls" not in graphs:
            flags["nvls"] = False  # the half without an NVLS graph: NCCL turns NVLS off (0 channels)
        if flags["collnet"] and "collnet_chain" not in graphs and "collnet_direct" not in graphs:
            flags["collnet"] = False
        return cls(arch=mapping["arch"], ranks=ranks, nodes=nodes, graphs=graphs, name=name,
                   gpus_per_node=gpus, hosts_per_node=mapping["hosts_per_node"], **flags)

    @classmethod
    def explicit(
        cls,
        *,
        arch: int,
        ranks: int,
        nodes: int,
        channels: int,
        bw_intra: Any,
        bw_inter: Any,
        intra: str = "nvlink",
        net_latency: Any = 0,
        cpu: str = "intel",
        nvls: bool = False,
        collnet: bool = False,
    ) -> System:
        """A system from the few numbers the command line's hardware options give.

        Assumptions (what NCCL's search typically finds; state them when you quote a result):
        ring and tree graphs both have *channels* channels of *bw_intra* GB/s inside a node and
        *bw_inter* GB/s across nodes (on one node both are *bw_intra*), as NCCL's search makes them of
        such links on several nodes: a channel has one speed along its whole path, so a ring's
        bandwidth inside the node is its network rate where that is lower (src/graph/search.cc sets
        ``bwIntra = bwInter`` for a ring), and a tree's rises inside the node to twice its network
        rate at most (search.cc, pass 2: "increase bwIntra for trees"), which matters because NCCL's
        tuning reads ``bwIntra`` on one or two nodes; the path inside a node is
        ``NVL`` over NVLink (with NVSwitch) or ``PXB`` over PCIe, to the NIC ``PIX``; the tree's
        pattern is balanced (1) on several nodes; *net_latency* (µs) is ``latencyInter``; an x86
        host of vendor *cpu* (or an Arm or POWER host: *cpu* ``arm`` or ``power``). ``nvls`` adds an
        NVLS graph of 16 channels at *bw_intra*/*bw_inter* (NVSwitch systems only); ``collnet`` adds
        CollNet chain and direct graphs like the ring, with one CollNet head per GPU.

        Examples
        --------
        >>> s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5)
        >>> s.graphs["ring"].bw_inter, s.graphs["tree"].pattern
        (Fraction(25, 2), 1)
        >>> System.explicit(arch=90, ranks=8, nodes=1, channels=0, bw_intra=40, bw_inter=40)
        Traceback (most recent call last):
            ...
        costmodel.errors.InputError: channels=0 is not an integer from 1 to 64; a graph the search found \
has 1 to 64 (MAXCHANNELS) channels
        """
        intra = _choice(intra, "intra", ("nvlink", "pci"), "intra-node link")
        cpu = _choice(cpu, "cpu", (*CPU_VENDORS, "arm", "power"), "host CPU")
        cpu_arch, cpu_vendor = (cpu, "intel") if cpu in ("arm", "power") else ("x86", cpu)
        positive(channels, "channels", high=64, hint=_CHANNELS_HINT)
        whole(ranks, "ranks", low=2, hint="NCCL's tuning model needs at least 2 ranks")
        positive(nodes, "nodes")
        intra_bw = _rate(bw_intra, "bw_intra")
        inter_bw = _rate(bw_inter, "bw_inter") if nodes > 1 else intra_bw
        if nodes == 1:
            _rate(bw_inter, "bw_inter")
        nvlink = intra == "nvlink"
        common: dict[str, Any] = {
            "bw_intra": min(intra_bw, inter_bw),
            "bw_inter": inter_bw,
            "type_intra": "NVL" if nvlink else "PXB",
            "type_inter": "PIX",
            "latency_inter": _rate(net_latency, "net_latency", allow_zero=True),
        }
        graphs = {
            "ring": Graph(channels=channels, pattern=4, **common),
            "tree": Graph(channels=channels, pattern=1 if nodes > 1 else 4,
                          **common | {"bw_intra": min(intra_bw, 2 * inter_bw)}),
        }
        if nvls:
            if not nvlink:
                raise InputError("nvls=True needs NVLink (intra='nvlink'): NVLink SHARP runs on NVSwitches")
            graphs["nvls"] = Graph(channels=16, pattern=5, **common | {"bw_intra": intra_bw})
        if collnet:
            graphs["collnet_chain"] = Graph(channels=channels, pattern=4, **common)
            graphs["collnet_direct"] = Graph(channels=channels, pattern=6, **common)
        return cls(
            arch=arch,
            ranks=ranks,
            nodes=nodes,
            graphs=graphs,
            cpu_arch=cpu_arch,
            cpu_vendor=cpu_vendor,
            nvswitch=nvlink,
            nvls=nvls,
            collnet=collnet,
            collnet_heads=ranks // nodes if collnet else 0,
            name="explicit",
        )
