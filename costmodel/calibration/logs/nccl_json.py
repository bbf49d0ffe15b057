"""nccl-tests' JSON file (``-J FILE``, nccl-tests 2.17+); see :mod:`costmodel.calibration.logs`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from fractions import Fraction
from os import PathLike
from typing import Any

from costmodel.calibration.logs.measurements import (
    MAX_SIZE,
    NCCL_PROGRAMS,
    PROGRAM,
    LogFormat,
    Measurements,
    Row,
    check_increasing,
    check_p,
    check_text,
    checked_time,
    decimal,
    read_log_text,
    stated_collective,
)
from costmodel.errors import ParseError
from costmodel.validate import is_whole


def _json_number(value: Any, what: str, *, path: str, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(f"{where}: {what} {value!r} is not a number", path=path, line=1)
    token = value if isinstance(value, str) else repr(value)
    if isinstance(value, float) and value != value:  # noqa: PLR0124 - NaN check
        token = "nan"
    return decimal(token.strip(), what, path=path, line=1, where=f"{where}: ")


def parse_nccl_tests_json(text: str, *, path: str = "<text>", collective: str | None = None,
                          p: int | None = None) -> Measurements:
    """Read the JSON file of ``nccl-tests -J FILE`` (schema in the module docstring).

    Raises
    ------
    ParseError
        For invalid JSON (with its line) or a missing or malformed field.
    """
    name, text = path, check_text(text, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg.lower()}; the file looks truncated or is not nccl-tests -J "
                         "output", path=name, line=exc.lineno) from None
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise ParseError("no 'results' list; not an nccl-tests JSON file", path=name, line=1)
    if not results:
        raise ParseError("'results' is empty; the run produced no rows", path=name, line=1)
    args = doc.get("args")
    args = args if isinstance(args, list) else []
    program = PROGRAM.search(str(args[0])) if args else None
    stated = NCCL_PROGRAMS.get(program.group(1)) if program else None
    chosen = stated_collective(collective, stated, what=str(args[0]) if args else "", path=name, line=1)
    if chosen is None:
        raise ParseError("cannot tell which collective this JSON measures (no args[0]); "
                         "give collective=", path=name, line=1)
    ranks = _json_p(doc, p, name)
    rows, warnings = _json_rows(results, name)
    check_increasing(rows, path=name)
    return Measurements(
        tool="nccl-tests", collective=chosen, p=ranks, rows=tuple(rows), source=None,
        warnings=tuple(warnings), path=name, backend="nccl",
        dtype=str(results[0].get("type")) if isinstance(results[0], dict) else None,
        command=program.group(0) if program else None,
    )


def read_nccl_tests_json(path: str | PathLike[str], *, collective: str | None = None,
                         p: int | None = None) -> Measurements:
    """Read an ``nccl-tests -J`` JSON file from the file *path* (see :func:`parse_nccl_tests_json`)."""
    return parse_nccl_tests_json(read_log_text(path), path=str(path), collective=collective, p=p)


def _json_p(doc: Mapping[str, Any], requested: int | None, path: str) -> int | None:
    found = doc.get("config")
    config: Mapping[str, Any] = found if isinstance(found, dict) else {}
    devices = config.get("devices")
    counts = [config.get(key, 1) for key in ("nthreads", "ngpus")]
    if any(not is_whole(c) or c < 1 for c in counts):
        raise ParseError(f"config nthreads/ngpus {counts} are not positive integers", path=path, line=1)
    found = len(devices) * counts[0] * counts[1] if isinstance(devices, list) and devices else None
    if requested is not None:
        requested = check_p(requested)
        if found is not None and found != requested:
            raise ParseError(f"p={requested} was requested but the JSON lists {found} ranks",
                             path=path, line=1)
        return requested
    return found


def _json_rows(results: list[Any], path: str) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    warnings: list[str] = []
    first = results[0] if isinstance(results[0], dict) else {}
    series = (first.get("type"), first.get("redop"), first.get("root"))
    for i, item in enumerate(results):
        where = f"results[{i}]"
        if not isinstance(item, dict) or "size" not in item:
            raise ParseError(f"{where} is not a result object with a 'size'", path=path, line=1)
        if (item.get("type"), item.get("redop"), item.get("root")) != series:
            warnings.append(f"{where}: another type/op series; skipped (only the first is read)")
            continue
        size = item["size"]
        if not is_whole(size) or not 0 <= size <= MAX_SIZE:
            raise ParseError(f"{where}: size {size!r} is not a whole number of bytes", path=path, line=1)
        if size == 0:
            warnings.append(f"{where}: 0-byte row skipped")
            continue
        for key, in_place in (("out_of_place", False), ("in_place", True)):
            block = item.get(key)
            if block is None:
                continue
            row = _json_block(block, size, in_place, path=path, where=f"{where}.{key}", warnings=warnings)
            if row is not None:
                rows.append(row)
    if not rows:
        raise ParseError("no usable rows in 'results'", path=path, line=1)
    return rows, warnings


def _json_block(block: Any, size: int, in_place: bool, *, path: str, where: str,
                warnings: list[str]) -> Row | None:
    if not isinstance(block, dict):
        raise ParseError(f"{where} is not an object", path=path, line=1)
    key = "time" if "time" in block else "cpu_time"
    time_us = _json_number(block.get(key), key, path=path, where=where)
    checked_time(time_us / 10**6, f"{float(time_us)} us", key, path=path, line=1, where=f"{where}: ")
    wrong = block.get("nwrong")
    if wrong is not None and _json_number(wrong, "nwrong", path=path, where=where) > 0:
        warnings.append(f"{where}: nwrong = {wrong}: nccl-tests found wrong results; row refused")
        return None
    rates = {}
    for key, name in (("alg_bw", "algbw_bytes_per_s"), ("bus_bw", "busbw_bytes_per_s")):
        if block.get(key) is not None:
            rates[name] = _json_number(block[key], key, path=path, where=where) * 10**9
    return Row(n_bytes=size, time_s=time_us / 10**6, in_place=in_place, line=None, **rates)




def _object(text: str, lines: list[str]) -> bool:
    """A JSON object: what ``-J FILE`` writes (no other format starts with ``{``)."""
    return text.lstrip().startswith("{")


FORMAT = LogFormat("nccl-tests-json", "nccl-tests JSON (-J)", detect=_object, parse=parse_nccl_tests_json)
"""nccl-tests' JSON output."""
