"""Hardware descriptions (presets) for NCCL's tuning model: what its topology search finds.

A preset is a TOML file (``costmodel/nccl/presets/NAME.toml``, or a user's file) holding what NCCL's
topology search produces on a system and the few facts its tuning model reads besides: the schema
below.  Each shipped file says in its comments and ``sources`` where its numbers come from: a public
``NCCL_DEBUG=INFO`` dump, or vendor specifications with NCCL's search rules (``src/graph/search.cc``).
A preset can also be built from a user's own log (:meth:`costmodel.nccl.debuglog.DebugLog.to_preset`).

Top-level keys: ``name``, ``description``, ``sources`` (list of text), ``arch`` (compute capability
x 10), ``gpus_per_node``, ``cpu_arch`` (x86/power/arm), ``cpu_vendor`` (intel/amd/zhaoxin/mixed),
``nvswitch``, ``nvls``, ``collnet``, ``collnet_heads``, ``net_device_host``, and optionally
``assumptions`` (list of text) and ``hosts_per_node`` (default 1; above 1 a node is one NVLink domain
over that many hosts, which NCCL treats as one node with Multi-Node NVLink: a GB200 NVL72 rack).
Tables ``[single.GRAPH]`` (all ranks on one node) and
``[multi.GRAPH]`` (several nodes), GRAPH one of ring, tree, collnet_chain, collnet_direct, nvls, with
``channels``, ``bw_intra``, ``bw_inter`` (GB/s per channel), ``type_intra``, ``type_inter`` (NCCL's
path type names), ``latency_inter`` (µs, default 0), ``same_channels`` (default true), ``pattern``.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

from costmodel._files import read_text
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.nccl.schema import GRAPH_NAMES, HALVES, check_preset
from costmodel.nccl.system import CPU_ARCHS, CPU_VENDORS, PATH_TYPES, Graph, System  # noqa: F401 - CPU_*
from costmodel.tomlfile import as_keys, loads

_HERE = Path(__file__).parent
"""This package's folder (its data files beside its modules)."""

__all__ = ["GRAPHS", "PATH_TYPES", "load_preset", "preset_names", "validate_preset"]

GRAPHS = GRAPH_NAMES
PATTERNS = (1, 2, 3, 4, 5, 6)


def _folder() -> Any:
    return _HERE.joinpath("presets")


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
    shipped = isinstance(name_or_path, str) and text in preset_names()
    if shipped:
        where = f"preset {text}"
        content = _folder().joinpath(f"{text}.toml").read_text(encoding="utf-8")
    elif text.endswith(".toml") or Path(text).exists() or "/" in text:
        where = text
        content = read_text(name_or_path, what="the NCCL preset")
    else:
        raise UnknownNameError("NCCL preset", text, preset_names())
    return validate_preset(loads(content, path=where, shipped=shipped), path=where)


def validate_preset(data: dict[str, Any], *, path: str = "<preset>") -> dict[str, Any]:
    """*data* checked against the preset schema and completed with its defaults (a new dict).

    The shape is :mod:`costmodel.nccl.schema`'s; the values are checked by building what they
    describe: each table's :class:`~costmodel.nccl.system.Graph`, and a
    :class:`~costmodel.nccl.system.System` of two ranks on one node for the host (arch, CPU, flags).
    Errors are :class:`~costmodel.errors.ParseError` naming *path* (and the table).

    >>> validate_preset({"name": "x", "arch": 90, "gpus_per_node": 8, "cpu_arch": "x86",
    ...                  "cpu_vendor": "intel", "nvswitch": True, "nvls": False})
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: <preset>: no graph: give [single.ring] and/or [multi.ring] (tree, nvls ...)
    """
    if not isinstance(data, dict):
        raise InputError(f"a {type(data).__name__} is not a preset; give a mapping")
    try:
        out = check_preset(data)
        graphs = [
            Graph.from_mapping(table, where=f"[{half}.{name}]")
            for half in HALVES
            for name, table in out.get(half, {}).items()
        ]
        System(
            arch=out["arch"],
            ranks=2,
            nodes=1,
            graphs={"ring": graphs[0], "tree": graphs[0]},
            **{k: out[k] for k in ("cpu_arch", "cpu_vendor", "nvswitch", "collnet_heads", "net_device_host")},
        )
    except InputError as e:
        raise ParseError(as_keys(str(e)), path=path) from None
    return out
