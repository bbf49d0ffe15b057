"""The preset schema: which keys a hardware description has, their TOML types, which are required, defaults.

One description of the schema, used by :func:`costmodel.nccl.presets.validate_preset` (a file) and
:meth:`costmodel.nccl.system.System.from_preset` (a mapping).  It checks the *shape* only; the
values (channels, bandwidths, path types, compute capability, CPU …) are checked where they are
used, by constructing :class:`~costmodel.nccl.system.Graph` and :class:`~costmodel.nccl.system.System`.
Errors are :class:`~costmodel.errors.InputError` with one line that names the table
(``[single.ring]``); the callers add the file or preset name.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError, UnknownNameError

__all__ = ["GRAPH_NAMES", "HALVES", "check_graph", "check_preset"]

GRAPH_NAMES = ("ring", "tree", "collnet_chain", "collnet_direct", "nvls")
"""The graphs NCCL's search computes, by the name the preset schema gives them."""

HALVES = ("single", "multi")
"""The graphs for all ranks on one node, and for several nodes."""

_NUMBER = (int, float, Fraction)
_TOP: dict[str, tuple[type, ...]] = {
    "name": (str,), "description": (str,), "sources": (list,), "arch": (int,), "gpus_per_node": (int,),
    "cpu_arch": (str,), "cpu_vendor": (str,), "nvswitch": (bool,), "nvls": (bool,), "collnet": (bool,),
    "collnet_heads": (int,), "net_device_host": (bool,), "assumptions": (list,), "hosts_per_node": (int,),
}
_REQUIRED = ("name", "arch", "gpus_per_node", "cpu_arch", "cpu_vendor", "nvswitch", "nvls")
_DEFAULTS: dict[str, Any] = {"description": "", "sources": [], "collnet": False, "collnet_heads": 0,
                             "net_device_host": True, "assumptions": [], "hosts_per_node": 1}
_GRAPH: dict[str, tuple[type, ...]] = {
    "channels": (int,), "bw_intra": _NUMBER, "bw_inter": _NUMBER, "type_intra": (str,),
    "type_inter": (str,), "latency_inter": _NUMBER, "same_channels": (bool,), "pattern": (int,),
}
_GRAPH_REQUIRED = ("channels", "bw_intra", "bw_inter", "type_intra", "type_inter", "pattern")
_GRAPH_DEFAULTS: dict[str, Any] = {"latency_inter": 0.0, "same_channels": True}
_PATTERN_OF = {"ring": (4,), "tree": (1, 2, 3), "collnet_chain": (3,), "collnet_direct": (3, 6), "nvls": (5,)}
"""The NCCL_TOPO_PATTERN_* each graph's search uses (ring 4, trees 1/2/3, NVLS 5, CollNet direct 6)."""


def _check_type(value: Any, kinds: tuple[type, ...], key: str) -> None:
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        want = " or ".join(dict.fromkeys(
            {int: "an integer", float: "a number", Fraction: "a number", str: "a string",
             bool: "true/false", list: "a list"}[k] for k in kinds))
        raise InputError(f"{key} = {value!r} must be {want}")
    if isinstance(value, list) and not all(isinstance(x, str) for x in value):
        raise InputError(f"{key} must be a list of strings")


def check_graph(table: Any, where: str, graph: str | None = None) -> dict[str, Any]:
    """The graph table *where* (``[single.ring]``) checked and completed with its defaults (a new dict).

    *graph* (the table's graph name) also checks that its pattern is one that graph's search uses.
    """
    if not isinstance(table, Mapping):
        raise InputError(f"{where} must be a table")
    g: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _GRAPH:
            raise InputError(f"unknown key {key!r} in {where}; the keys are {', '.join(_GRAPH)}")
        _check_type(value, _GRAPH[key], f"{where} {key}")
        g[key] = value
    for key in _GRAPH_REQUIRED:
        if key not in g:
            raise InputError(f"missing key {key!r} in {where}")
    for key, default in _GRAPH_DEFAULTS.items():
        g.setdefault(key, default)
    if graph is not None and g["pattern"] not in _PATTERN_OF[graph]:
        raise InputError(f"{where} pattern = {g['pattern']} is not a {graph} pattern "
                         f"({'/'.join(map(str, _PATTERN_OF[graph]))})")
    return g


def check_preset(data: Any) -> dict[str, Any]:
    """*data* checked against the preset schema and completed with its defaults (a new dict)."""
    if not isinstance(data, Mapping):
        raise InputError(f"a {type(data).__name__} is not a preset; give a mapping")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in HALVES:
            continue
        if key not in _TOP:
            raise InputError(f"unknown key {key!r}; the keys are {', '.join(_TOP)}, "
                             "[single.GRAPH], [multi.GRAPH]")
        _check_type(value, _TOP[key], key)
        out[key] = value
    for key in _REQUIRED:
        if key not in out:
            raise InputError(f"missing key {key!r}")
    for key, default in _DEFAULTS.items():
        out.setdefault(key, list(default) if isinstance(default, list) else default)
    if out["gpus_per_node"] < 1:
        raise InputError(f"gpus_per_node = {out['gpus_per_node']} must be at least 1")
    hosts = out["hosts_per_node"]
    if hosts < 1 or out["gpus_per_node"] % hosts:
        raise InputError(f"hosts_per_node = {hosts} must be at least 1 and divide gpus_per_node = "
                         f"{out['gpus_per_node']}")
    for half in HALVES:
        if half in data:
            out[half] = _check_half(data[half], half)
    if not any(half in out for half in HALVES):
        raise InputError("no graph: give [single.ring] and/or [multi.ring] (tree, nvls ...)")
    return out


def _check_half(graphs: Any, half: str) -> dict[str, dict[str, Any]]:
    if not isinstance(graphs, Mapping):
        raise InputError(f"{half} must be a table of graphs ([{half}.ring] ...)")
    out = {}
    for graph, table in graphs.items():
        if graph not in GRAPH_NAMES:
            raise UnknownNameError("graph", str(graph), GRAPH_NAMES, context=f"in [{half}]")
        out[graph] = check_graph(table, f"[{half}.{graph}]", graph)
    if "ring" not in out:
        raise InputError(f"[{half}] has no ring graph; NCCL always has one")
    return out
