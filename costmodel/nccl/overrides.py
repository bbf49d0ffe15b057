"""Overrides of NCCL's tuning constants, as a tuner plugin may make them, read from TOML.

NCCL 2.30 hands a tuner plugin its seven constant tables (``ncclTunerConstants_v5_t`` in
``src/include/plugin/tuner/tuner_v5.h``) to change before tuning. An override file names the
tables and the rows it changes; each row is a list of three numbers::

    [base_latencies]            # µs; row = algorithm, columns LL, LL128, Simple
    ring = [6.6, 14.0, 8.0]
    [hw_latencies.net]          # µs per step; nvlink, pci or net; rows and columns as above
    tree = [5.0, 8.5, 12.0]
    [per_ch_max_tree_bws]       # GB/s per channel; row = volta/ampere/hopper/blackwell,
    hopper = [38.7, 41.4, 30.0] # columns 1, 2 and ≥ 4 nodes

In ``ll_max_bws`` the rows are also the compute capabilities on one node, but on more than one
node NCCL reads row ``volta`` for Intel hosts and ``ampere`` for AMD ones. Numbers are read by
their decimal text (``6.6`` is exactly 33/5).

References
----------
.. [1] NVIDIA, NCCL ``src/include/plugin/tuner/tuner_v5.h`` (ncclTunerConstants_v5_t), tag v2.30.7-1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel.errors import InputError, ParseError
from costmodel.nccl.constants import NcclConstants, Table2
from costmodel.tomlfile import loads

__all__ = ["HARDWARE", "MAX_BYTES", "TABLES", "apply_overrides", "load_overrides", "parse_overrides"]

MAX_BYTES = 1 << 20
"""The largest overrides file read: a tuner's constants fit in a few kilobytes."""

TABLES = (
    "base_latencies",
    "hw_latencies",
    "ll_max_bws",
    "per_ch_max_ring_ll128_bws",
    "per_ch_max_tree_ll128_bws",
    "per_ch_max_tree_bws",
    "per_ch_max_nvls_tree_bws",
)
"""The tables an override file may change (those of a tuner plugin)."""

HARDWARE = ("nvlink", "pci", "net")
"""The sub-tables of ``hw_latencies``."""


def _row_names(table: str, constants: NcclConstants) -> tuple[str, ...]:
    if table in ("base_latencies", "hw_latencies"):
        return tuple(a.lower() for a in constants.algorithms)
    return constants.compcaps


def _number(value: Any, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}: {value!r} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: {value!r} is not finite")
    number = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    if number < 0:
        raise InputError(f"{where}: {value!r} is negative; latencies and bandwidths are ≥ 0")
    return number


def _replace_rows(old: Table2, rows: Any, names: tuple[str, ...], where: str) -> Table2:
    if not isinstance(rows, Mapping):
        raise InputError(f"[{where}] is not a table of rows")
    new = [list(r) for r in old]
    for name, values in rows.items():
        if name not in names:
            raise InputError(f"unknown row {name!r} in [{where}]; valid rows: {', '.join(names)}")
        if not isinstance(values, list) or len(values) != len(old[0]):
            raise InputError(f"{where}.{name} is not a list of {len(old[0])} numbers")
        new[names.index(name)] = [_number(v, f"{where}.{name}") for v in values]
    return tuple(tuple(r) for r in new)


def apply_overrides(mapping: Mapping[str, Any], constants: NcclConstants) -> NcclConstants:
    """*constants* with the tables of *mapping* (the override schema above) replaced.

    Raises
    ------
    InputError
        On an unknown table, sub-table or row (naming it and listing the valid ones), a row that
        is not three non-negative numbers, or a table the version does not have.

    Examples
    --------
    >>> from costmodel.nccl.constants import CONSTANTS
    >>> c = apply_overrides({"base_latencies": {"ring": [6.6, 14.0, 8.0]}}, CONSTANTS["2.30"])
    >>> c.base_latency("Ring", "Simple")
    Fraction(8, 1)
    >>> apply_overrides({"base_latency": {}}, CONSTANTS["2.30"])
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: unknown table 'base_latency' in the overrides; valid tables: \
base_latencies, hw_latencies, ll_max_bws, per_ch_max_ring_ll128_bws, per_ch_max_tree_ll128_bws, \
per_ch_max_tree_bws, per_ch_max_nvls_tree_bws
    """
    changes: dict[str, Any] = {}
    for table, rows in mapping.items():
        if table not in TABLES:
            raise InputError(f"unknown table {table!r} in the overrides; valid tables: {', '.join(TABLES)}")
        names = _row_names(table, constants)
        if table == "hw_latencies":
            if not isinstance(rows, Mapping):
                raise InputError("[hw_latencies] is not a table of nvlink, pci and net")
            hw = list(constants.hw_latencies)
            for kind, sub in rows.items():
                if kind not in HARDWARE:
                    raise InputError(
                        f"unknown table {kind!r} in [hw_latencies]; valid tables: {', '.join(HARDWARE)}"
                    )
                i = HARDWARE.index(kind)
                hw[i] = _replace_rows(hw[i], sub, names, f"hw_latencies.{kind}")
            changes[table] = tuple(hw)
            continue
        old = getattr(constants, table)
        if old is None:
            raise InputError(f"NCCL {constants.version} has no {table}; its tuning has no such cap")
        changes[table] = _replace_rows(old, rows, names, table)
    return constants.replace(**changes)


def parse_overrides(text: str, constants: NcclConstants, *, path: str = "<overrides>") -> NcclConstants:
    """*constants* with the overrides of TOML *text* applied; errors name *path* (and the line
    for TOML syntax)."""
    data = loads(text, path=path)
    try:
        return apply_overrides(data, constants)
    except InputError as exc:
        raise ParseError(str(exc), path=path) from None


def load_overrides(path: str | Path, constants: NcclConstants) -> NcclConstants:
    """*constants* with the overrides of the TOML file at *path* applied."""
    from costmodel._files import read_text

    text = read_text(path, what="the overrides", limit=MAX_BYTES)  # a regular file only: never a FIFO's wait
    return parse_overrides(text, constants, path=str(path))
