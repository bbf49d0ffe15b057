"""Read benchmark logs: nccl-tests (text and ``-J`` JSON), the OSU and Intel MPI Benchmarks, costmodel's CSV.

Every reader returns :class:`Measurements`: which tool and collective, the rank
count p when the log states it, and one :class:`Row` per timed size, in SI units
(bytes, seconds, bytes per second), with the line it came from.  Numbers are
read as exact decimals (:class:`~fractions.Fraction`); nothing is evaluated.

Formats
-------
nccl-tests, text
    Every layout since 2019: the pre-2022 one (``size count type redop time
    algbw busbw error`` twice, no ``root``), the 2022–2025 one (``... redop root
    time algbw busbw #wrong`` twice) and the 2025+ one (adaptive column widths,
    ``N/A`` when validation is off, optional per-iteration ``i_*`` columns and a
    timestamp).  Columns are found by the header line's names, not by position.
    Each printed line gives two rows, out-of-place (``in_place=False``) and
    in-place (``in_place=True``).  p is the number of ``# Rank`` lines.  An
    all-gather or reduce-scatter log from before June 2020 prints busbw equal
    to algbw (both S·(p − 1)/p / t): read so, with a warning, no algbw.
nccl-tests, JSON (``-J FILE``, nccl-tests 2.17+)
    The object nccl-tests writes (``JSON_FILE_VERSION`` 2)::

        {"version": 2, "args": ["./all_reduce_perf", "-b", "8", ...], "nccl_version": 22703,
         "config": {"nthreads": 1, "ngpus": 1, ..., "devices": [{"rank": 0, ...}, ...]},
         "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                      "out_of_place": {"time": 36.47, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
                      "in_place": {...}, "actual_iterations": 20, "experiment_name": ...}, ...],
         "out_of_bounds": {...}, "average_bus_bandwidth": {...}, "errors": [...]}

    ``time`` may be ``cpu_time`` (``-C``), ``nwrong`` ``null`` (validation off),
    and a NaN is written as the string ``"nan"`` (refused).  ``config.devices``
    has one entry per process, so p = len(devices) × nthreads × ngpus.  Rows
    carry no line number (``line=None``); messages name ``results[i]``.
OSU Micro-Benchmarks
    The collective latency tests (``# OSU MPI Allreduce Latency Test v5.8``,
    with or without ``-f``: Avg, then Min, Max, Iterations), ``osu_latency``
    (its value is already the one-way latency, half the measured round trip)
    and ``osu_bw`` (MB/s with OSU's MB = 10^6 B, read as the time per message
    n/bw).  OSU does not print p: pass it to :func:`parse_log` or to the fitter.
    For allgather, alltoall, gather and scatter OSU's Size is per rank (each
    rank's contribution or block); costmodel's n is p times it, so those logs
    read without p keep OSU's sizes with ``size_per_rank=True`` until
    :meth:`Measurements.with_p` scales them.
Intel MPI Benchmarks (IMB-MPI1)
    Each ``# Benchmarking NAME`` block at its ``# #processes = N``: t_avg (µs) of Allreduce,
    Reduce, Reduce_scatter, Bcast, Allgather and Alltoall (the last two per rank, as OSU's), and
    PingPong's one-way t.  A file that runs several process counts is read at *p*, else the
    largest; several benchmarks need *collective* (:mod:`.imb`).
costmodel CSV
    A header ``collective,backend,p,n_bytes,time_s`` optionally followed by
    ``in_place`` and other columns (``algbw_bytes_per_s``, ``busbw_bytes_per_s``
    are read, the rest ignored); leading ``#`` lines are comments (the first may
    be a ``# source:`` line).  :func:`write_csv` writes it.

Logs as clusters write them
    MPI launcher prefixes are removed from each line that carries one: Open
    MPI ``--tag-output`` (``[1,0]<stdout>:``), SLURM ``srun --label``
    (``0: ``) and MPICH/Intel MPI ``-prepend-rank`` (``[0] ``, inside a
    table's rows too, where the writes of a row meet), and before
    them a log quoted in Markdown (``> `` at any depth, code fences), with a
    warning (:func:`parse_log`).  OSU rows
    pasted without their ``#`` lines are read when the layout is clear from
    the columns (2: Size, Avg; 5: ``-f``'s Size, Avg, Min, Max, Iterations);
    anything else is refused.

Reading and parsing
    ``parse_X(text, *, path="<text>", ...)`` parses a log's text and ``read_X(path, ...)``
    reads a file and parses it, for each format X (``log`` chooses the format by
    :func:`detect_format`).  Files are read by :func:`costmodel._files.read_text`, as
    every user file is: regular files only (a FIFO or a device is refused before it is
    opened), UTF-8 with a byte-order mark dropped, at most 64 MiB; tables have at most
    :data:`MAX_ROWS` rows.  Bad input (empty or
binary files, truncated rows, NaN or infinite values,
negative times, sizes that do not increase, a collective other than the one the
log states) raises :class:`~costmodel.errors.ParseError` naming the file and
line.  Rows that the benchmark itself marks wrong, and 0-byte rows, are dropped
with a warning in :attr:`Measurements.warnings`.

Examples
--------
>>> text = '''# OSU MPI Allreduce Latency Test v5.8
... # Size       Avg Latency(us)
... 4                      17.67
... 8                      15.49
... 16                     13.70
... '''
>>> m = parse_log(text, p=2)
>>> m.tool, m.collective, m.p, [(r.n_bytes, r.time_s) for r in m.rows][:2]
('osu', 'allreduce', 2, [(4, Fraction(1767, 100000000)), (8, Fraction(1549, 100000000))])
"""

from __future__ import annotations

import re
from dataclasses import replace
from os import PathLike

from costmodel.calibration.logs import costmodel_csv, imb, nccl_json, nccl_text, osu
from costmodel.calibration.logs.costmodel_csv import parse_csv, parse_csv_groups, read_csv, write_csv
from costmodel.calibration.logs.measurements import (
    CSV_COLUMNS,
    MAX_ROWS,
    TOOLS,
    LogFormat,
    Measurements,
    Row,
    bus_factor,
    check_text,
    read_log_text,
    split_lines,
)
from costmodel.calibration.logs.nccl_json import parse_nccl_tests_json, read_nccl_tests_json
from costmodel.calibration.logs.nccl_text import parse_nccl_tests, read_nccl_tests
from costmodel.calibration.logs.osu import parse_osu, read_osu
from costmodel.collective_names import PT2PT, canonical_collective
from costmodel.errors import ParseError

__all__ = [
    "CSV_COLUMNS",
    "FORMATS",
    "MAX_ROWS",
    "PT2PT",
    "TOOLS",
    "LogFormat",
    "Measurements",
    "Row",
    "bus_factor",
    "canonical_collective",
    "detect_format",
    "parse_csv",
    "parse_log",
    "parse_logs",
    "parse_nccl_tests",
    "parse_nccl_tests_json",
    "parse_osu",
    "read_csv",
    "read_log",
    "read_logs",
    "read_nccl_tests",
    "read_nccl_tests_json",
    "read_osu",
    "write_csv",
]

FORMATS: tuple[LogFormat, ...] = (nccl_json.FORMAT, osu.FORMAT, imb.FORMAT, nccl_text.FORMAT,
                                  costmodel_csv.FORMAT)
"""The formats :func:`parse_log` reads, in the order they are tried (see :class:`LogFormat`)."""


def detect_format(text: str) -> str | None:
    """The name of the first of :data:`FORMATS` sure of *text*, else of the first that may be, else None.

    >>> detect_format("collective,backend,p,n_bytes,time_s\\nallreduce,nccl,8,1024,0.00001\\n")
    'costmodel-csv'
    """
    return _detect(text, split_lines(text))


def _detect(text: str, split: list[str]) -> str | None:
    """:func:`detect_format` of *text*, whose lines :func:`split_lines` gave as *split*."""
    lines = [s.strip() for s in split if s.strip()]
    sure = next((f for f in FORMATS if f.detect(text, lines)), None)
    if sure is None:
        sure = next((f for f in FORMATS if f.guess is not None and f.guess(lines)), None)
    return None if sure is None else sure.name


_SIZE_WORD = re.compile(r"(?i)\b(?:size|bytes)\b")
_MEASURE_WORD = re.compile(r"(?i)\b(?:time|latency|bandwidth|algbw|busbw|t_avg(?:\[usec\])?|mb/s|gb/s)\b")


def _foreign_header(lines: list[str]) -> tuple[int, str] | None:
    """The first line (1-based number and text, stripped) that reads as a table's header, a size and a
    measure named in it (``#       size      time   algbw   busbw``), in a log no reader took: what the
    error names, so that the user sees which table was not understood."""
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if text.startswith("# source:") or len(text) > 200:
            continue
        if _SIZE_WORD.search(text) and _MEASURE_WORD.search(text):
            return number, " ".join(text.split())
    return None


def parse_log(text: str, *, path: str = "<text>", collective: str | None = None,
              p: int | None = None) -> Measurements:
    """Parse the text of a benchmark log of any supported format (see the module docstring).

    Parameters
    ----------
    text : str
        The log's content (to read a file, use :func:`read_log`).
    path : str, optional
        The name to report in errors and in :attr:`Measurements.path`.
    collective : str, optional
        The collective the caller expects (aliases accepted); a log that states
        another one raises :class:`ParseError`.  Needed only when the log does
        not say.
    p : int, optional
        Number of ranks; needed for OSU's per-rank sizes, checked against
        nccl-tests' rank list.

    Raises
    ------
    ParseError
        For an empty, binary, truncated or malformed log.
    """
    text = check_text(text, path)
    notes: list[str] = []
    kind = _detect(text, split_lines(text, path, notes=notes))
    if kind is None:
        formats = ", ".join(f.title for f in FORMATS)
        if (found := _foreign_header(split_lines(text, path))) is not None:
            number, header = found
            raise ParseError(f"not a log costmodel reads ({formats}): {header!r} is a table header of none "
                             "of them (a table reformatted, or another tool's); give the benchmark's own "
                             "output", path=path, line=number)
        raise ParseError(f"not a log costmodel reads ({formats}): no table header found; "
                         "give the benchmark's full output", path=path, line=1)
    read = next(f for f in FORMATS if f.name == kind).parse(text, path=path, collective=collective, p=p)
    return replace(read, warnings=(*notes, *read.warnings)) if notes else read


def read_log(path: str | PathLike[str], *, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read the benchmark log file *path* and parse it (see :func:`parse_log`).

    *path* is always a file name, never the log's text: text goes to :func:`parse_log`.

    Raises
    ------
    ParseError
        For an unreadable file (missing, a folder, a FIFO or device, over 64 MiB, not UTF-8),
        or as :func:`parse_log`.
    """
    return parse_log(read_log_text(path), path=str(path), collective=collective, p=p)


def parse_logs(text: str, *, path: str = "<text>", collective: str | None = None,
               p: int | None = None) -> tuple[Measurements, ...]:
    """Every collective of a log's text: one :class:`Measurements` per collective of a costmodel CSV
    (as ``calibrate run`` writes it), else the one :func:`parse_log` reads.

    Raises
    ------
    ParseError
        As :func:`parse_log`, and for a CSV holding one collective at several p (give *p*).
    """
    text = check_text(text, path)
    notes: list[str] = []
    if _detect(text, split_lines(text, path, notes=notes)) != "costmodel-csv":
        return (parse_log(text, path=path, collective=collective, p=p),)
    groups = [replace(m, warnings=(*notes, *m.warnings))
              for m in parse_csv_groups(text, path=path, collective=collective, p=p)]
    names = [m.collective for m in groups]
    twice = next((c for c in names if names.count(c) > 1), None)
    if twice is not None:
        listed = ", ".join(f"{m.backend or ''} p={m.p}".strip() for m in groups if m.collective == twice)
        raise ParseError(f"{twice} was measured {names.count(twice)} times ({listed}); "
                         "give p= to choose", path=path,
                         line=next(m for m in groups if m.collective == twice).rows[0].line)
    return tuple(groups)


def read_logs(path: str | PathLike[str], *, collective: str | None = None,
              p: int | None = None) -> tuple[Measurements, ...]:
    """Every collective of the log file *path* (see :func:`parse_logs`)."""
    return parse_logs(read_log_text(path), path=str(path), collective=collective, p=p)
