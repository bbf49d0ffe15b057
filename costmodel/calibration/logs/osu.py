"""The OSU Micro-Benchmarks' output (collective latency tests, osu_latency, osu_bw); see
:mod:`costmodel.calibration.logs`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from os import PathLike

from costmodel.calibration.logs.measurements import (
    BARE_OSU_ROW,
    INTEGER,
    OSU_SIZE_HEADER,
    OSU_TITLE,
    PT2PT,
    LogFormat,
    Measurements,
    Row,
    check_increasing,
    check_rows,
    check_text,
    checked_time,
    decimal,
    read_log_text,
    source_line,
    split_lines,
    stated_collective,
    whole_bytes,
)
from costmodel.errors import ParseError

_PER_RANK_SIZE = frozenset({"allgather", "alltoall", "gather", "scatter"})
_OSU_NAMES = {
    "allreduce": "allreduce", "allgather": "allgather", "allgatherv": "allgather",
    "reducescatter": "reduce-scatter", "broadcast": "broadcast", "bcast": "broadcast",
    "reduce": "reduce", "alltoall": "alltoall", "alltoallv": "alltoall",
    "alltoallpersonalizedexchange": "alltoall", "gather": "gather", "gatherv": "gather",
    "scatter": "scatter", "scatterv": "scatter",
}


@dataclass
class _OsuTitle:
    collective: str | None
    kind: str  # "latency" or "bandwidth"
    backend: str
    version: str | None
    line: int | None
    text: str


def _osu_title(lines: list[str], path: str) -> _OsuTitle | None:
    for number, raw in enumerate(lines, start=1):
        m = OSU_TITLE.match(raw.strip())
        if not m:
            continue
        middle = m.group(2).strip()
        words = middle.split()
        if not words or words[-1].lower() not in {"latency", "bandwidth"}:
            raise ParseError(f"unsupported OSU test {raw.strip()[1:].strip()!r}; costmodel reads the latency "
                             "tests and osu_bw", path=path, line=number)
        kind = words[-1].lower()
        name = " ".join(words[:-1])
        if re.search(r"non-?blocking|bi-?directional|multiple|message rate", name, re.IGNORECASE):
            raise ParseError(f"unsupported OSU test {middle!r}; use the blocking latency test or osu_bw",
                             path=path, line=number)
        key = re.sub(r"[^a-z]", "", name.lower())
        if key and key not in _OSU_NAMES:
            known = ", ".join(sorted(set(_OSU_NAMES)))
            raise ParseError(f"unknown OSU test {middle!r}; costmodel knows {known}", path=path, line=number)
        return _OsuTitle(collective=_OSU_NAMES[key] if key else PT2PT, kind=kind, backend=m.group(1).lower(),
                         version=m.group(3), line=number, text=raw.strip())
    return None


def parse_osu(text: str, *, path: str = "<text>", collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read the output of an OSU Micro-Benchmark (collective latency tests, osu_latency, osu_bw).

    Times are the Avg column (µs); ``osu_bw``'s MB/s (10^6 B/s) become the time
    per message n/bw.  OSU does not print p; pass *p* here or to the fitter.

    Raises
    ------
    ParseError
        For a malformed log or a collective other than the title's.
    """
    name, text = path, check_text(text, path)
    lines = split_lines(text, name)
    title = _osu_title(lines, name)
    stated = title.collective if title else None
    if stated is None:
        m = re.search(r"\bosu_([a-z_]+)\b", source_line(lines) or "")
        key = m.group(1).replace("_", "") if m else ""
        stated = {"latency": PT2PT, "bw": PT2PT}.get(key) or _OSU_NAMES.get(key)
    chosen = stated_collective(collective, stated, what=title.text[1:].strip() if title else "osu source",
                                path=name, line=title.line if title else 1)
    if chosen is None:
        raise ParseError("cannot tell which OSU test this is (no '# OSU MPI ... Test' line); "
                         "give collective=", path=name, line=1)
    bandwidth = title.kind == "bandwidth" if title else _osu_bandwidth_header(lines)
    if title is None and chosen == PT2PT and not any(OSU_SIZE_HEADER.match(s.strip()) for s in lines):
        raise ParseError("a point-to-point table without its '# Size ...' header: costmodel cannot tell "
                         "osu_latency (us) from osu_bw (MB/s); paste the OSU output with its '#' lines",
                         path=name, line=1)
    rows, warnings = _osu_rows(lines, name, bandwidth=bandwidth)
    check_increasing(rows, path=name)
    if title is None:
        warnings.append("no '# OSU MPI ... Test' title line; the collective comes from the caller or source")
    if chosen == PT2PT and not bandwidth:
        warnings.append("osu_latency prints the one-way latency (half the round trip); used as is")
    result = Measurements(
        tool="osu", collective=chosen, p=None, rows=tuple(rows), source=source_line(lines),
        warnings=tuple(warnings), path=name, backend=title.backend if title else "mpi",
        command=_osu_command(chosen, bandwidth=bandwidth),
        size_per_rank=chosen in _PER_RANK_SIZE,
    )
    return result.with_p(p) if p is not None else result


def read_osu(path: str | PathLike[str], *, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read an OSU Micro-Benchmark log from the file *path* (see :func:`parse_osu`)."""
    return parse_osu(read_log_text(path), path=str(path), collective=collective, p=p)


def _osu_command(collective: str, *, bandwidth: bool) -> str:
    if collective == PT2PT:
        return "osu_bw" if bandwidth else "osu_latency"
    return "osu_" + collective.replace("-", "_")


def _osu_bandwidth_header(lines: list[str]) -> bool:
    return any(OSU_SIZE_HEADER.match(s.strip()) and "MB/s" in s for s in lines)


def _osu_rows(lines: list[str], path: str, *, bandwidth: bool) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    warnings: list[str] = []
    header = None
    read = failed = 0
    bare: list[tuple[list[str], int]] = []
    for number, raw in enumerate(lines, start=1):
        s = raw.strip()
        if not s:
            continue
        sizes = OSU_SIZE_HEADER.match(s)
        if sizes or s.startswith("#") or OSU_TITLE.match(s):  # the title and column lines, '#' lost or not
            header = number if sizes else header
            continue
        tokens = s.split()
        if not INTEGER.fullmatch(tokens[0]):
            continue  # interleaved output (MPI warnings)
        read += 1
        check_rows(read, path=path, line=number)
        if header is None:
            bare.append((tokens, number))
        count = len(warnings)
        row = _osu_row(tokens, number, path, bandwidth=bandwidth, warnings=warnings)
        if row is not None:
            rows.append(row)
        elif len(warnings) > count and "validation failed" in warnings[-1]:
            failed += 1
    if header is None and not rows and not failed:
        raise ParseError("no OSU table ('# Size ...' and rows) found", path=path, line=len(lines))
    if not rows and failed:
        raise ParseError(f"every row failed validation ({failed} rows marked Fail by OSU's -c); "
                         "nothing to fit: fix the run, then rerun", path=path, line=len(lines))
    if not rows:
        raise ParseError("the table has no rows; the log looks truncated", path=path, line=len(lines))
    if header is None:
        _check_bare_layout(bare, path)
    return rows, warnings


_OSU_LAYOUTS = {2: "Size, Avg Latency(us)",
                5: "Size, Avg Latency(us), Min Latency(us), Max Latency(us), Iterations"}


def _check_bare_layout(rows: list[tuple[list[str], int]], path: str) -> None:
    """A table pasted without its ``# Size ...`` header: the layout from the column count and values.

    Two columns are OSU's default (Size, Avg latency); five are ``-f`` (Size, Avg, Min, Max,
    Iterations), accepted only when every row has Min ≤ Avg ≤ Max and a whole number of
    iterations.  Anything else is ambiguous and refused.
    """
    widths = {len([t for t in tokens if t.lower() not in {"pass", "fail", "failed"}]) for tokens, _ in rows}
    first = rows[0][1]
    if len(widths) > 1:
        raise ParseError(f"the rows have {' or '.join(map(str, sorted(widths)))} columns and no '# Size ...' "
                         "header says which is which; paste the OSU output with its '#' lines", path=path,
                         line=first)
    width = widths.pop()
    if width not in _OSU_LAYOUTS:
        raise ParseError(f"the rows have {width} columns and no '# Size ...' header; costmodel reads a bare "
                         f"table only as {_OSU_LAYOUTS[2]} or (-f) {_OSU_LAYOUTS[5]}; paste the OSU output "
                         "with its '#' lines", path=path, line=first)
    if width == 5:
        for tokens, number in rows:
            avg, low, high = (Fraction(t) for t in tokens[1:4])
            if not (low <= avg <= high and INTEGER.fullmatch(tokens[4])):
                raise ParseError("5 columns without a '# Size ...' header, but not OSU's -f layout "
                                 f"({_OSU_LAYOUTS[5]}: Min <= Avg <= Max, whole Iterations); paste the OSU "
                                 "output with its '#' lines", path=path, line=number)


def _osu_row(tokens: list[str], number: int, path: str, *, bandwidth: bool,
             warnings: list[str]) -> Row | None:
    if len(tokens) < 2:
        raise ParseError(f"the row has only a size ({tokens[0]}); the log looks truncated",
                         path=path, line=number)
    if tokens[-1].lower() in {"pass", "fail", "failed"}:
        if tokens[-1].lower() != "pass":
            warnings.append(f"line {number}: OSU validation failed; row refused")
            return None
        tokens = tokens[:-1]
    size = whole_bytes(tokens[0], "size", path=path, line=number)
    value = decimal(tokens[1], "bandwidth" if bandwidth else "latency", path=path, line=number)
    for token in tokens[2:]:
        decimal(token, "value", path=path, line=number)
    if size == 0:
        warnings.append(f"line {number}: 0-byte row skipped")
        return None
    if value <= 0:
        raise ParseError(f"{'bandwidth' if bandwidth else 'latency'} {tokens[1]} is not positive",
                         path=path, line=number)
    if bandwidth:
        rate = value * 10**6
        time_s = checked_time(size / rate, f"{tokens[1]} MB/s", "bandwidth", path=path, line=number)
        return Row(n_bytes=size, time_s=time_s, algbw_bytes_per_s=rate, line=number)
    time_s = checked_time(value / 10**6, f"{tokens[1]} us", "latency", path=path, line=number)
    return Row(n_bytes=size, time_s=time_s, line=number)




def _titled(text: str, lines: list[str]) -> bool:
    """OSU's title line (``# OSU MPI Allreduce Latency Test v5.8``)."""
    return any(OSU_TITLE.match(s) for s in lines)


def _untitled(lines: list[str]) -> bool:
    """OSU's column header without its title, or rows in OSU's layout without any header."""
    data = [s for s in lines if not s.startswith("#")]
    rows = bool(data) and all(map(BARE_OSU_ROW.fullmatch, data))
    return rows or any(OSU_SIZE_HEADER.match(s) for s in lines)


FORMAT = LogFormat("osu", "OSU Micro-Benchmarks", detect=_titled, parse=parse_osu, guess=_untitled)
"""The OSU Micro-Benchmarks' output, by its title, or else by its columns."""
