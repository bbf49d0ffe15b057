"""costmodel's CSV of measurements: read and written; see :mod:`costmodel.calibration.logs`."""

from __future__ import annotations

import csv
import io
from os import PathLike
from pathlib import Path

from costmodel._files import write_text
from costmodel.calibration.logs.measurements import (
    CSV_COLUMNS,
    INTEGER,
    LogFormat,
    Measurements,
    Row,
    canonical_collective,
    check_increasing,
    check_rows,
    check_text,
    checked_time,
    decimal,
    read_log_text,
    source_line,
    split_lines,
    whole_bytes,
)
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.exact import decimal_text


def _csv_bool(token: str, *, path: str, line: int) -> bool | None:
    key = token.strip().lower()
    if key in {"", "none", "null"}:
        return None
    if key in {"true", "1", "yes", "in-place", "in_place"}:
        return True
    if key in {"false", "0", "no", "out-of-place", "out_of_place"}:
        return False
    raise ParseError(f"in_place {token!r} is not true or false", path=path, line=line)


_Found = tuple[str, str, int | None, Row, int | None]
"""One row of the file: collective, backend, p, the row, its sweep (None without the column)."""


def _csv_rows(lines: list[str], path: str) -> tuple[list[_Found], int]:
    header: list[str] | None = None
    header_line = 0
    found: list[_Found] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in next(csv.reader([raw]))]
        if header is None:
            header, header_line = [c.lower() for c in cells], number
            if tuple(header[:5]) != CSV_COLUMNS[:5]:
                want = ",".join(CSV_COLUMNS[:5])
                missing = [c for c in CSV_COLUMNS[:5] if c not in header]
                lacks = f"lacks {', '.join(missing)} and " if missing else ""
                raise ParseError(f"the header {raw.strip()[:200]!r} {lacks}does not start with {want}",
                                 path=path, line=number)
            continue
        if len(cells) < len(header):
            raise ParseError(f"the row has {len(cells)} fields but the header has {len(header)}; "
                             "the file looks truncated", path=path, line=number)
        found.append(_csv_row(dict(zip(header, cells, strict=False)), number, path))
        check_rows(len(found), path=path, line=number)
    if header is None:
        raise ParseError("no CSV header found", path=path, line=len(lines))
    return found, header_line


def _csv_row(cell: dict[str, str], number: int, path: str) -> _Found:
    try:
        collective = canonical_collective(cell["collective"])
    except UnknownNameError as exc:
        raise ParseError(str(exc), path=path, line=number) from None
    p = None
    if cell["p"]:
        if not INTEGER.fullmatch(cell["p"]) or int(cell["p"]) < 2:
            raise ParseError(f"p {cell['p']!r} is not an integer >= 2", path=path, line=number)
        p = int(cell["p"])
    size = whole_bytes(cell["n_bytes"], "n_bytes", path=path, line=number)
    time_s = checked_time(decimal(cell["time_s"], "time_s", path=path, line=number), cell["time_s"], "time_s",
                   path=path, line=number)
    bandwidths = {}
    for key in ("algbw_bytes_per_s", "busbw_bytes_per_s"):
        if cell.get(key):
            bandwidths[key] = decimal(cell[key], key, path=path, line=number)
    in_place = _csv_bool(cell.get("in_place", ""), path=path, line=number)
    row = Row(n_bytes=size, time_s=time_s, in_place=in_place, line=number, **bandwidths)
    sweep = cell.get("sweep", "")
    if sweep and (not INTEGER.fullmatch(sweep) or int(sweep) < 1):
        raise ParseError(f"sweep {sweep!r} is not an integer >= 1", path=path, line=number)
    return collective, cell["backend"], p, row, int(sweep) if sweep else None


def parse_csv(text: str, *, path: str = "<text>", collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read costmodel's CSV (``collective,backend,p,n_bytes,time_s[,in_place,sweep,...]``).

    A file may hold several (collective, backend, p) groups; *collective* and
    *p* choose one, and must when there are several.  Sizes may repeat
    (repeated measurements) but not decrease, within each placement (``in_place``) and
    each sweep (``sweep``: ``calibrate run --repeat`` runs the whole sweep again, from
    the smallest size, and numbers the sweeps from 1).

    Raises
    ------
    ParseError
        For a malformed file, or an ambiguous or missing group.
    """
    name, text = path, check_text(text, path)
    groups = parse_csv_groups(text, path=name, collective=collective, p=p)
    if len(groups) > 1:
        listed = ", ".join(f"{m.collective} {m.backend or ''} p={m.p}".replace("  ", " ") for m in groups)
        raise ParseError(f"the file holds {len(groups)} groups ({listed}); "
                         "give collective= and p= to choose",
                         path=name, line=groups[0].rows[0].line)
    return groups[0]


def read_csv(path: str | PathLike[str], *, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read a costmodel CSV file from the file *path* (see :func:`parse_csv`)."""
    return parse_csv(read_log_text(path), path=str(path), collective=collective, p=p)


def parse_csv_groups(text: str, *, path: str, collective: str | None,
                     p: int | None) -> list[Measurements]:
    """The (collective, backend, p) groups of a CSV that *collective* and *p* select, in file order."""
    lines = split_lines(text, path)
    found, header_line = _csv_rows(lines, path)
    want = canonical_collective(collective) if collective else None
    chosen = [f for f in found if (want is None or f[0] == want) and (p is None or f[2] == p)]
    keys = list(dict.fromkeys((c, b, q) for c, b, q, _, _ in chosen))
    if not keys:
        have = sorted({f"{c} p={q}" for c, _, q, _, _ in found}) or ["no rows"]
        raise ParseError(f"no rows for collective={want or 'any'} p={p or 'any'}; "
                         f"the file has {', '.join(have)}", path=path, line=header_line)
    out = []
    for key in keys:
        group_collective, backend, group_p = key
        swept = [(r, s) for c, b, q, r, s in chosen if (c, b, q) == key]
        warnings = [f"line {r.line}: 0-byte row skipped" for r, _ in swept if r.n_bytes == 0]
        swept = [(r, s) for r, s in swept if r.n_bytes > 0]
        rows = [r for r, _ in swept]
        if not rows:
            raise ParseError(f"no {group_collective} rows with n_bytes > 0", path=path, line=header_line)
        for sweep in dict.fromkeys(s for _, s in swept):
            check_increasing([r for r, s in swept if s == sweep], path=path, strict=False)
        out.append(Measurements(tool="costmodel-csv", collective=group_collective, p=group_p,
                                rows=tuple(rows), source=source_line(lines), warnings=tuple(warnings),
                                path=path, backend=backend or None))
    return out



def write_csv(measurements: Measurements, path: str | Path | None = None) -> str:
    """Write *measurements* as costmodel's CSV; return the text (and write it to *path* if given).

    >>> from fractions import Fraction
    >>> m = Measurements(tool="osu", collective="allreduce", p=2, backend="mpi",
    ...                  rows=(Row(n_bytes=4, time_s=Fraction(1767, 10**8)),))
    >>> print(write_csv(m), end="")
    collective,backend,p,n_bytes,time_s,in_place
    allreduce,mpi,2,4,0.00001767,
    >>> parse_csv(write_csv(m)).rows[0].time_s
    Fraction(1767, 100000000)

    Raises
    ------
    InputError
        For per-rank OSU sizes not yet scaled by p (call :meth:`Measurements.with_p`).
    """
    if measurements.size_per_rank:
        raise InputError("the sizes are OSU's per-rank sizes; call measurements.with_p(p) before writing")
    out = io.StringIO()
    if measurements.source:
        source = measurements.source
        out.write(source if source.startswith("#") else f"# source: {source}")
        out.write("\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in measurements.rows:
        flag = "" if r.in_place is None else str(r.in_place).lower()
        writer.writerow([measurements.collective, measurements.backend or "", measurements.p or "",
                         r.n_bytes, decimal_text(r.time_s) or repr(float(r.time_s)), flag])
    text = out.getvalue()
    if path is not None:
        write_text(path, text)
    return text




def _headed(text: str, lines: list[str]) -> bool:
    """The CSV header ``collective,backend,...`` on the first line that is no comment."""
    data = [s for s in lines if not s.startswith("#")]
    return bool(data) and data[0].lower().replace(" ", "").startswith("collective,backend,")


FORMAT = LogFormat("costmodel-csv", "costmodel CSV", detect=_headed, parse=parse_csv)
"""The CSV ``calibrate run`` writes."""
