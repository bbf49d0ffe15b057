"""Hardware descriptions (presets) for NCCL's tuning model: what its topology search finds.

A preset is a TOML file (``costmodel/nccl/presets/NAME.toml``, or a user's file) holding what NCCL's
topology search produces on a system and the few facts its tuning model reads besides: the schema
below.  Each shipped file says in its comments and ``sources`` where its numbers come from: a public
``NCCL_DEBUG=INFO`` dump, or vendor specifications with NCCL's search rules (``src/graph/search.cc``).
A preset can also be built from a user's own log (:meth:`costmodel.nccl.debuglog.DebugLog.to_preset`).

Top-level keys: ``name``, ``description``, ``sources`` (list of text), ``arch`` (compute capability
x 10), ``gpus_per_node``, ``cpu_arch`` (x86/power/arm), ``cpu_vendor`` (intel/amd/zhaoxin/mixed),
``nvswitch``, ``nvls``, ``collnet``, ``collnet_heads``, ``net_device_host``, and optionally
``assumptions`` (list of text).  Tables ``[single.GRAPH]`` (all ranks on one node) and
``[multi.GRAPH]`` (several nodes), GRAPH one of ring, tree, collnet_chain, collnet_direct, nvls, with
``channels``, ``bw_intra``, ``bw_inter`` (GB/s per channel), ``type_intra``, ``type_inter`` (NCCL's
path type names), ``latency_inter`` (µs, default 0), ``same_channels`` (default true), ``pattern``.
"""

from __future__ import annotations

import math
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import Any

from costmodel._files import read_text
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.tomlfile import loads

__all__ = ["GRAPHS", "PATH_TYPES", "load_preset", "preset_names", "validate_preset"]

GRAPHS = ("ring", "tree", "collnet_chain", "collnet_direct", "nvls")
PATH_TYPES = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "PXN", "P2C", "PHB", "SYS", "NET", "DIS")
"""Path type names as NCCL prints them (the union of 2.21's and 2.30's ``topoPathTypeStr``)."""
CPU_ARCHS = ("x86", "power", "arm")
CPU_VENDORS = ("intel", "amd", "zhaoxin", "mixed")
PATTERNS = (1, 2, 3, 4, 5, 6)

_TOP: dict[str, tuple[type, ...]] = {
    "name": (str,), "description": (str,), "sources": (list,), "arch": (int,), "gpus_per_node": (int,),
    "cpu_arch": (str,), "cpu_vendor": (str,), "nvswitch": (bool,), "nvls": (bool,), "collnet": (bool,),
    "collnet_heads": (int,), "net_device_host": (bool,), "assumptions": (list,),
}
_REQUIRED = ("name", "arch", "gpus_per_node", "cpu_arch", "cpu_vendor", "nvswitch", "nvls")
_DEFAULTS: dict[str, Any] = {"description": "", "sources": [], "collnet": False, "collnet_heads": 0,
                             "net_device_host": True, "assumptions": []}
_GRAPH: dict[str, tuple[type, ...]] = {
    "channels": (int,), "bw_intra": (int, float), "bw_inter": (int, float), "type_intra": (str,),
    "type_inter": (str,), "latency_inter": (int, float), "same_channels": (bool,), "pattern": (int,),
}
_GRAPH_REQUIRED = ("channels", "bw_intra", "bw_inter", "type_intra", "type_inter", "pattern")
_PATTERN_OF = {"ring": (4,), "tree": (1, 2, 3), "collnet_chain": (3,), "collnet_direct": (3, 6), "nvls": (5,)}


def _folder() -> Any:
    return resources.files(__package__).joinpath("presets")


def preset_names() -> tuple[str, ...]:
    """The names of the shipped presets, sorted.

    >>> "dgx-h100" in preset_names()
    True
    """
    return tuple(sorted(e.name[:-5] for e in _folder().iterdir() if e.name.endswith(".toml")))


def load_preset(name_or_path: str | PathLike[str]) -> dict[str, Any]:
    """The validated preset *name_or_path*: a shipped name, or a path to a TOML file.

    Errors (unknown name, unreadable file, bad TOML, unknown key, wrong type, no graph) are one line
    naming the file and the key.

    >>> load_preset("dgx-a100")["multi"]["ring"]["channels"]
    8
    >>> load_preset("dgx-a10")
    Traceback (most recent call last):
        ...
    costmodel.errors.UnknownNameError: unknown NCCL preset 'dgx-a10'; did you mean 'dgx-a100'?
    """
    text = str(name_or_path)
    if isinstance(name_or_path, str) and text in preset_names():
        where = f"preset {text}"
        content = _folder().joinpath(f"{text}.toml").read_text(encoding="utf-8")
    elif text.endswith(".toml") or Path(text).exists() or "/" in text:
        where = text
        content = read_text(name_or_path, what="the NCCL preset")
    else:
        raise UnknownNameError("NCCL preset", text, preset_names())
    return validate_preset(loads(content, path=where), path=where)


def _fail(path: str, message: str) -> ParseError:
    return ParseError(message, path=path)


def _check_type(value: Any, kinds: tuple[type, ...], key: str, path: str) -> None:
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
    if not ok:
        want = " or ".join({int: "an integer", float: "a number", str: "a string", bool: "true/false",
                            list: "a list"}[k] for k in kinds)
        raise _fail(path, f"{key} = {value!r} must be {want}")


def validate_preset(data: dict[str, Any], *, path: str = "<preset>") -> dict[str, Any]:
    """*data* checked against the preset schema and completed with its defaults (a new dict).

    >>> validate_preset({"name": "x", "arch": 90, "gpus_per_node": 8, "cpu_arch": "x86",
    ...                  "cpu_vendor": "intel", "nvswitch": True, "nvls": False})
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: <preset>: no graph: give [single.ring] and/or [multi.ring] (tree, nvls ...)
    """
    if not isinstance(data, dict):
        raise InputError(f"a {type(data).__name__} is not a preset; give a mapping")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in ("single", "multi"):
            continue
        if key not in _TOP:
            raise _fail(path, f"unknown key {key!r}; the keys are {', '.join(_TOP)}, "
                              "[single.GRAPH], [multi.GRAPH]")
        _check_type(value, _TOP[key], key, path)
        if isinstance(value, list) and not all(isinstance(x, str) for x in value):
            raise _fail(path, f"{key} must be a list of strings")
        out[key] = value
    for key in _REQUIRED:
        if key not in out:
            raise _fail(path, f"missing key {key!r}")
    for key, default in _DEFAULTS.items():
        out.setdefault(key, list(default) if isinstance(default, list) else default)
    _check_values(out, path)
    _read_graphs(data, out, path)
    return out


def _check_values(out: dict[str, Any], path: str) -> None:
    if out["arch"] < 30 or out["arch"] > 200:
        raise _fail(path, f"arch = {out['arch']} is not a compute capability x 10 (70, 80, 90, 100 ...)")
    if out["gpus_per_node"] < 1:
        raise _fail(path, f"gpus_per_node = {out['gpus_per_node']} must be at least 1")
    if out["collnet_heads"] < 0:
        raise _fail(path, f"collnet_heads = {out['collnet_heads']} must not be negative")
    if out["cpu_arch"] not in CPU_ARCHS:
        raise _fail(path, f"cpu_arch = {out['cpu_arch']!r} is not one of {', '.join(CPU_ARCHS)}")
    if out["cpu_vendor"] not in CPU_VENDORS:
        raise _fail(path, f"cpu_vendor = {out['cpu_vendor']!r} is not one of {', '.join(CPU_VENDORS)}")


def _read_graphs(data: dict[str, Any], out: dict[str, Any], path: str) -> None:
    found = False
    for section in ("single", "multi"):
        if section not in data:
            continue
        graphs = data[section]
        if not isinstance(graphs, dict):
            raise _fail(path, f"{section} must be a table of graphs ([{section}.ring] ...)")
        out[section] = {}
        for graph, keys in graphs.items():
            where = f"[{section}.{graph}]"
            if graph not in GRAPHS:
                raise _fail(path, f"unknown graph {where}; the graphs are {', '.join(GRAPHS)}")
            if not isinstance(keys, dict):
                raise _fail(path, f"{where} must be a table")
            out[section][graph] = _graph(keys, where, path, graph)
            found = True
    if not found:
        raise _fail(path, "no graph: give [single.ring] and/or [multi.ring] (tree, nvls ...)")
    for section in ("single", "multi"):
        if section in out and "ring" not in out[section]:
            raise _fail(path, f"[{section}] has no ring graph; NCCL always has one")


def _graph(keys: dict[str, Any], where: str, path: str, graph: str) -> dict[str, Any]:
    g: dict[str, Any] = {}
    for key, value in keys.items():
        if key not in _GRAPH:
            raise _fail(path, f"unknown key {key!r} in {where}; the keys are {', '.join(_GRAPH)}")
        _check_type(value, _GRAPH[key], f"{where} {key}", path)
        g[key] = value
    for key in _GRAPH_REQUIRED:
        if key not in g:
            raise _fail(path, f"missing key {key!r} in {where}")
    g.setdefault("latency_inter", 0.0)
    g.setdefault("same_channels", True)
    if not 1 <= g["channels"] <= 64:
        raise _fail(path, f"{where} channels = {g['channels']} must be 1 to 64")
    for key in ("bw_intra", "bw_inter"):
        if not (math.isfinite(g[key]) and g[key] > 0):
            raise _fail(path, f"{where} {key} = {g[key]} must be a positive number of GB/s")
    if not (math.isfinite(g["latency_inter"]) and g["latency_inter"] >= 0):
        raise _fail(path, f"{where} latency_inter = {g['latency_inter']} must be a non-negative number of µs")
    for key in ("type_intra", "type_inter"):
        if g[key] not in PATH_TYPES:
            raise _fail(path, f"{where} {key} = {g[key]!r} is not one of {', '.join(PATH_TYPES)}")
    if g["pattern"] not in _PATTERN_OF[graph]:
        raise _fail(path, f"{where} pattern = {g['pattern']} is not a {graph} pattern "
                          f"({'/'.join(map(str, _PATTERN_OF[graph]))})")
    return g
