"""Intel MPI Benchmarks (IMB-MPI1): the collectives' t_avg and PingPong's t, at one process count.

IMB prints one block per benchmark and process count::

    #----------------------------------------------------------------
    # Benchmarking Allreduce
    # #processes = 16
    #----------------------------------------------------------------
           #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
                0         1000         0.03         0.04         0.03
                4         1000         1.52         2.26         1.88

The time is t_avg (µs), the mean over the processes as OSU's Avg is, or PingPong's t[usec], half the
round trip (Intel MPI Benchmarks User Guide, "PingPong" and "Allreduce").  #bytes is the vector each
process holds for Allreduce, Reduce, Reduce_scatter and Bcast (costmodel's n), and each process's
contribution for Allgather and Alltoall (n/p, as OSU's Size; ``size_per_rank``).  A file runs several
process counts (IMB doubles them up to the job's): the block of *p*, else the largest, is read.
"""

from __future__ import annotations

import re
from os import PathLike

from costmodel.calibration.logs.measurements import (
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

_BENCHMARK = re.compile(r"#\s*Benchmarking\s+(\S+)")
_PROCESSES = re.compile(r"#\s*#processes\s*=\s*(\d+)")
_NAMES = {"allreduce": "allreduce", "reduce": "reduce", "reduce_scatter": "reduce-scatter",
          "bcast": "broadcast", "allgather": "allgather", "alltoall": "alltoall", "pingpong": PT2PT}
_PER_RANK = frozenset({"allgather", "alltoall"})


def parse_imb(text: str, *, path: str = "<text>", collective: str | None = None,
              p: int | None = None) -> Measurements:
    """Read one benchmark of an IMB-MPI1 output (see the module notes).

    Raises
    ------
    ParseError
        For no block of a benchmark costmodel reads, a file of several when *collective* does not
        choose, no block at *p*, or a malformed row.
    """
    text = check_text(text, path)
    lines = split_lines(text, path)
    blocks = _blocks(lines, path)
    if not blocks:
        known = ", ".join(sorted(name.capitalize() for name in _NAMES))
        raise ParseError(f"no '# Benchmarking' block of a benchmark costmodel reads ({known})", path=path,
                         line=1)
    names = sorted({name for name, _, _ in blocks})
    wanted = stated_collective(collective, names[0] if len(names) == 1 else None, what="IMB's benchmark",
                               path=path, line=blocks[0][2])
    if wanted is None:
        raise ParseError(f"the file runs {', '.join(names)}; give collective= to choose one", path=path,
                         line=1)
    if wanted not in names:
        raise ParseError(f"no {wanted} block; the file runs {', '.join(names)}", path=path, line=1)
    counts = [procs for name, procs, _ in blocks if name == wanted]
    procs = max(counts) if p is None else p
    if procs not in counts:
        raise ParseError(f"no {wanted} block at p={p}; the file has #processes = "
                         f"{', '.join(map(str, sorted(counts)))}", path=path, line=1)
    start = next(line for name, n, line in blocks if name == wanted and n == procs)
    rows = _rows(lines, start, path, pingpong=wanted == PT2PT)
    check_increasing(rows, path=path)
    per_rank = wanted in _PER_RANK
    result = Measurements(tool="imb", collective=wanted, p=None, rows=tuple(rows), source=source_line(lines),
                          path=path, backend="mpi", command=f"IMB-MPI1 {_imb_name(wanted)}",
                          size_per_rank=per_rank)
    return result.with_p(procs) if procs >= 2 else result


def read_imb(path: str | PathLike[str], *, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read an IMB-MPI1 log from the file *path* (see :func:`parse_imb`)."""
    return parse_imb(read_log_text(path), path=str(path), collective=collective, p=p)


def _imb_name(collective: str) -> str:
    return next(k for k, v in _NAMES.items() if v == collective).capitalize()


def _blocks(lines: list[str], path: str) -> list[tuple[str, int, int]]:
    """(collective, #processes, line of the title) of each block costmodel reads."""
    found = []
    for number, raw in enumerate(lines, start=1):
        title = _BENCHMARK.match(raw.strip())
        if title is None or title.group(1).lower() not in _NAMES:
            continue
        after = (s.strip() for s in lines[number:number + 3])
        procs = next((m for m in map(_PROCESSES.match, after) if m), None)
        if procs is None:
            raise ParseError(f"the {title.group(1)} block gives no '# #processes = N' line", path=path,
                             line=number)
        found.append((_NAMES[title.group(1).lower()], int(procs.group(1)), number))
    return found


def _rows(lines: list[str], start: int, path: str, *, pingpong: bool) -> list[Row]:
    """The table under the title on line *start*: its header, then rows until a blank or '#' line."""
    header = next((i for i in range(start, min(start + 6, len(lines))) if "#bytes" in lines[i]), None)
    if header is None:
        raise ParseError("the block has no '#bytes' header", path=path, line=start)
    columns = lines[header].split()
    column = "t[usec]" if pingpong else "t_avg[usec]"
    if column not in columns:
        raise ParseError(f"the block's header has no {column} column", path=path, line=header + 1)
    at = columns.index(column)
    rows: list[Row] = []
    for number in range(header + 2, len(lines) + 1):
        tokens = lines[number - 1].split()
        if not tokens or tokens[0].startswith("#"):
            break
        if len(tokens) != len(columns):
            raise ParseError(f"a row of {len(tokens)} columns under a header of {len(columns)}", path=path,
                             line=number)
        n = whole_bytes(tokens[0], "#bytes", path=path, line=number)
        if n == 0:  # IMB times an empty message first: no size to fit
            continue
        time = decimal(tokens[at], column, path=path, line=number, scale=-6)
        rows.append(Row(n_bytes=n, time_s=checked_time(time, tokens[at], column, path=path, line=number),
                        line=number))
        check_rows(len(rows), path=path, line=number)
    if not rows:
        raise ParseError("the block has no rows", path=path, line=header + 1)
    return rows


def _titled(text: str, lines: list[str]) -> bool:
    """IMB's ``# Benchmarking NAME`` line."""
    return any(_BENCHMARK.match(s) for s in lines)


FORMAT = LogFormat("imb", "Intel MPI Benchmarks", detect=_titled, parse=parse_imb)
"""IMB-MPI1's output."""
