"""Read benchmark logs: nccl-tests (text and ``-J`` JSON), the OSU Micro-Benchmarks, costmodel's CSV.

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
    in-place (``in_place=True``).  p is the number of ``# Rank`` lines.
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
    n/bw).  OSU does not print p: pass it to :func:`read_log` or to the fitter.
    For allgather, alltoall, gather and scatter OSU's Size is per rank (each
    rank's contribution or block); costmodel's n is p times it, so those logs
    read without p keep OSU's sizes with ``size_per_rank=True`` until
    :meth:`Measurements.with_p` scales them.
costmodel CSV
    A header ``collective,backend,p,n_bytes,time_s`` optionally followed by
    ``in_place`` and other columns (``algbw_bytes_per_s``, ``busbw_bytes_per_s``
    are read, the rest ignored); leading ``#`` lines are comments (the first may
    be a ``# source:`` line).  :func:`write_csv` writes it.

Logs as clusters write them
    MPI launcher prefixes are removed from each line that carries one: Open
    MPI ``--tag-output`` (``[1,0]<stdout>:``), SLURM ``srun --label``
    (``0: ``) and MPICH/Intel MPI ``-prepend-rank`` (``[0] ``).  OSU rows
    pasted without their ``#`` lines are read when the layout is clear from
    the columns (2: Size, Avg; 5: ``-f``'s Size, Avg, Min, Max, Iterations);
    anything else is refused.

Only regular files are read (a FIFO or a device is refused before it is
opened), at most 64 MiB and :data:`MAX_ROWS` table rows.  Bad input (empty or
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
>>> m = read_log(text, p=2)
>>> m.tool, m.collective, m.p, [(r.n_bytes, r.time_s) for r in m.rows][:2]
('osu', 'allreduce', 2, [(4, Fraction(1767, 100000000)), (8, Fraction(1549, 100000000))])
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._files import MAX_READ_BYTES, read_bytes
from costmodel._json import JSONFields, to_json_dict
from costmodel.collectives.busbw import FACTORS
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.exact import decimal_text

__all__ = [
    "CSV_COLUMNS",
    "MAX_ROWS",
    "PT2PT",
    "TOOLS",
    "Measurements",
    "Row",
    "bus_factor",
    "canonical_collective",
    "detect_format",
    "read_csv",
    "read_log",
    "read_logs",
    "read_nccl_tests",
    "read_nccl_tests_json",
    "read_osu",
    "write_csv",
]

TOOLS = ("nccl-tests", "osu", "costmodel-csv")
"""The values of :attr:`Measurements.tool`."""

PT2PT = "pt2pt"
"""The collective name of point-to-point logs (osu_latency, osu_bw, nccl-tests sendrecv_perf)."""

CSV_COLUMNS = ("collective", "backend", "p", "n_bytes", "time_s", "in_place")
"""The columns :func:`write_csv` writes; the first five are required when reading."""

_PT2PT_ALIASES = {"pt2pt", "p2p", "point-to-point", "pointtopoint", "sendrecv", "send-recv", "pingpong"}
_PER_RANK_SIZE = frozenset({"allgather", "alltoall", "gather", "scatter"})
_BUS_FACTORS: dict[str, Callable[[Fraction], Fraction]] = {
    **{name: factor for name, (_, factor) in FACTORS.items()},
    PT2PT: lambda p: Fraction(1),
}
"""busbw/algbw per collective, as nccl-tests computes it (see costmodel.collectives.busbw)."""


def bus_factor(collective: str, p: int) -> Fraction:
    """busbw/algbw of a measured *collective* (a canonical name, or ``pt2pt``: 1) on *p* ranks.

    >>> bus_factor("allreduce", 8), bus_factor(PT2PT, 2)
    (Fraction(7, 4), Fraction(1, 1))
    """
    return _BUS_FACTORS[collective](Fraction(p))

_NCCL_PROGRAMS = {
    "all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce-scatter",
    "broadcast": "broadcast", "reduce": "reduce", "alltoall": "alltoall", "sendrecv": PT2PT,
    "gather": "gather", "scatter": "scatter",
}
_OSU_NAMES = {
    "allreduce": "allreduce", "allgather": "allgather", "allgatherv": "allgather",
    "reducescatter": "reduce-scatter", "broadcast": "broadcast", "bcast": "broadcast",
    "reduce": "reduce", "alltoall": "alltoall", "alltoallv": "alltoall",
    "alltoallpersonalizedexchange": "alltoall", "gather": "gather", "gatherv": "gather",
    "scatter": "scatter", "scatterv": "scatter",
}
_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "int32": 4, "uint32": 4, "int": 4,
    "float": 4, "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}
_WRONG_ERROR = Fraction(1, 1000)
"""Old nccl-tests print the max abs error (1e-07 when right); above this the row is refused."""

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"\d+")
_PROGRAM = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
_RANK = re.compile(r"#\s*Rank\s+(\d+)\s")
_NTHREAD = re.compile(r"#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")
_STARTING = re.compile(r"#\s*Collective test starting:\s*(\S+)")
_OSU_TITLE = re.compile(
    r"#\s*OSU\s+(MPI|OpenSHMEM|UPC\+\+|UPC|NCCL|RCCL|XCCL)(?:[-\s](?:CUDA|ROCm|OpenACC))?\s+(.*?)\s*Test\b"
    r"(?:\s+v?(\S+))?", re.IGNORECASE)
_OSU_SIZE_HEADER = re.compile(r"#\s*Size\s+\S", re.IGNORECASE)
_MAX_WARNINGS = 8
_BARE_OSU_ROW = re.compile(
    r"\d+(?:\s+[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)+(?:\s+(?:Pass|Fail|Failed))?", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(JSONFields):
    """One timed size of a log.

    Attributes
    ----------
    n_bytes : int
        costmodel's n: the size column of nccl-tests (S), OSU's Size (times p
        for per-rank sizes), the CSV's ``n_bytes``.
    time_s : Fraction
        The measured time of one operation, seconds.
    algbw_bytes_per_s, busbw_bytes_per_s : Fraction or None
        The bandwidths the log printed (nccl-tests, or OSU's bandwidth test).
    in_place : bool or None
        nccl-tests: in-place (True) or out-of-place (False); None when the
        tool does not say.
    line : int or None
        1-based line of the file the row comes from (None in JSON input).
    """

    n_bytes: int
    time_s: Fraction
    algbw_bytes_per_s: Fraction | None = None
    busbw_bytes_per_s: Fraction | None = None
    in_place: bool | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Measurements:
    """The timed sizes of one benchmark run, as read from its log.

    Attributes
    ----------
    tool : str
        ``"nccl-tests"``, ``"osu"`` or ``"costmodel-csv"``.
    collective : str
        Canonical name (``allreduce``, ``reduce-scatter``, ...), or ``"pt2pt"``.
    p : int or None
        Number of ranks when the log states it (nccl-tests, CSV), else None.
    rows : tuple of Row
        In file order; sizes increase (per in-place flag).
    source : str or None
        The file's ``# source:`` line, if any.
    warnings : tuple of str
        Rows dropped and checks that failed, each naming its line.
    path : str
        The file name, or ``"<text>"``.
    backend, dtype, command : str or None
        ``"nccl"``/``"mpi"``/the CSV's backend; the data type; the benchmark
        binary (``all_reduce_perf``, ``osu_allreduce``) when the log names it.
    size_per_rank : bool
        True while the sizes are OSU's per-rank sizes of a log read without p
        (see :meth:`with_p`).
    """

    tool: str
    collective: str
    p: int | None
    rows: tuple[Row, ...]
    source: str | None = None
    warnings: tuple[str, ...] = ()
    path: str = "<text>"
    backend: str | None = None
    dtype: str | None = None
    command: str | None = None
    size_per_rank: bool = False

    def select(self, *, in_place: bool = False) -> tuple[Row, ...]:
        """The rows of one kind: out-of-place (and unflagged) rows, or the in-place ones."""
        if in_place:
            return tuple(r for r in self.rows if r.in_place is True)
        return tuple(r for r in self.rows if r.in_place is not True)

    def with_p(self, p: int) -> Measurements:
        """A copy with p set: per-rank OSU sizes become costmodel's n = p × size.

        Raises
        ------
        InputError
            If p is not an integer ≥ 2 or the log states another p.

        >>> m = Measurements(tool="osu", collective="allgather", p=None, size_per_rank=True,
        ...                  rows=(Row(n_bytes=4, time_s=Fraction(1, 10**5)),))
        >>> m.with_p(8).rows[0].n_bytes
        32
        """
        ranks = _check_p(p)
        if self.p is not None and self.p != ranks:
            raise InputError(f"p={ranks} differs from the p={self.p} the log states; drop p or pass {self.p}")
        if not self.size_per_rank:
            return replace(self, p=ranks)
        rows = tuple(replace(r, n_bytes=r.n_bytes * ranks) for r in self.rows)
        note = f"sizes scaled by p = {ranks}: OSU's Size is per rank, costmodel's n is the whole buffer"
        return replace(self, p=ranks, rows=rows, size_per_rank=False, warnings=(*self.warnings, note))

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("tool", "collective", "p", "backend", "dtype", "command", "source", "path",
                                   "size_per_rank", "warnings", "rows"))


# --------------------------------------------------------------------------- shared helpers


def _check_p(p: Any) -> int:
    if isinstance(p, bool) or not isinstance(p, int) or p < 2:
        raise InputError(f"p={p!r} is not an integer >= 2; give the number of ranks")
    return p


def canonical_collective(name: str) -> str:
    """The canonical collective name of *name*, accepting aliases and ``pt2pt``.

    >>> canonical_collective("all_reduce"), canonical_collective("p2p")
    ('allreduce', 'pt2pt')

    Raises
    ------
    UnknownNameError
        With a did-you-mean hint.
    """
    from costmodel.collectives._registry import COLLECTIVES
    from costmodel.collectives._registry import collective as find_collective

    key = name.strip().lower().replace("_", "-")
    if key in _PT2PT_ALIASES:
        return PT2PT
    try:
        return find_collective(name).name
    except UnknownNameError:
        raise UnknownNameError("collective", name, [*COLLECTIVES, PT2PT]) from None


def _load(path_or_text: str | Path | bytes, path: str | None) -> tuple[str, str]:
    """(text, path): read a file (a Path, or a str without a newline) or take the text given.

    Files are read by :func:`costmodel._files.read_bytes`: regular files only (a FIFO or a device is
    refused before it is opened), at most :data:`~costmodel._files.MAX_READ_BYTES`; text given
    directly is held to the same cap.
    """
    if isinstance(path_or_text, Path) or (isinstance(path_or_text, str) and _looks_like_path(path_or_text)):
        name = path or str(path_or_text)
        try:
            data = read_bytes(path_or_text, what="the log")
        except ParseError as exc:
            reason = str(exc).removeprefix(f"{exc.path}: ")
            raise ParseError(reason, path=name) from None
        return _decode(data, name), name
    name = path or "<text>"
    if isinstance(path_or_text, (bytes, str)) and len(path_or_text) > MAX_READ_BYTES:
        raise ParseError(f"the log is larger than the {MAX_READ_BYTES // 2**20} MiB costmodel reads; "
                         "keep the table only", path=name)
    if isinstance(path_or_text, bytes):
        return _decode(path_or_text, name), name
    if not isinstance(path_or_text, str):
        raise InputError(f"{path_or_text!r} is not a path or text; pass a file path or the log's text")
    _check_text(path_or_text, name)
    return path_or_text, name


def _looks_like_path(text: str) -> bool:
    """A str is a file name when it is one non-empty line that does not start like a log."""
    return bool(text.strip()) and "\n" not in text and "\r" not in text and text.lstrip()[:1] not in "{#"


def _decode(data: bytes, path: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(f"byte 0x{data[exc.start]:02x} is not utf-8 text; this is not a benchmark log "
                         "(binary data?)", path=path, line=line) from None
    _check_text(text, path)
    return text


def _check_text(text: str, path: str) -> None:
    if not text.strip():
        raise ParseError("the file is empty; give the benchmark's output", path=path, line=1)
    bad = re.search(r"[\x00-\x08\x0e-\x1f\x7f]", text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise ParseError(f"control character {bad.group()!r} is not text; this is not a benchmark log "
                         "(binary data?)", path=path, line=line)


_LAUNCHER_PREFIX = re.compile(
    r"^\s*(?:\[\d+,\d+\](?:\[[^\]\n]*\])?<std(?:out|err)>:"  # Open MPI --tag-output: [1,0]<stdout>:
    r"|\d+(?:\+\d+)?: "  # SLURM srun --label: '0: ', ' 12: ', heterogeneous jobs '0+1: '
    r"|\[\d+\] )"  # MPICH / Intel MPI -prepend-rank: '[0] '
)
MAX_ROWS = 100_000
"""The most table rows a log may hold (a sweep has tens; a million-row file is not a benchmark log)."""
_MAX_LINES = 10 * MAX_ROWS


def _split(text: str, path: str = "<text>") -> list[str]:
    """The lines of *text*, split at line feeds only (so that line numbers match an editor's), with
    any MPI launcher prefix removed from each line (Open MPI ``--tag-output``, SLURM ``srun --label``,
    MPICH/Intel MPI ``-prepend-rank``), whether every line carries one or only some do."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) > _MAX_LINES:
        raise ParseError(f"the log has {len(lines)} lines, more than the {_MAX_LINES} costmodel reads; "
                         "keep the table only", path=path, line=_MAX_LINES + 1)
    lines = [_LAUNCHER_PREFIX.sub("", line, count=1) for line in lines]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _check_rows(count: int, *, path: str, line: int) -> None:
    """Refuse a table once it has more than :data:`MAX_ROWS` rows (called as rows are read)."""
    if count > MAX_ROWS:
        raise ParseError(f"the table has more than {MAX_ROWS} rows, the most costmodel reads; "
                         "give one sweep (thin it, or split the file)", path=path, line=line)


def _decimal(token: str, what: str, *, path: str, line: int | None, where: str = "") -> Fraction:
    """An exact decimal from a log token; NaN, inf and junk raise ParseError."""
    if not _NUMBER.fullmatch(token):
        raise ParseError(f"{where}{what} {token!r} is not a finite number", path=path, line=line)
    return Fraction(token)


_TIME_RANGE = (Fraction(1, 10**12), Fraction(10**9))
"""Times outside 1 ps .. 30 years are typos or junk, and would overflow the fitter's floats."""
_MAX_SIZE = 2**60


def _time(value: Fraction, token: str, what: str, *, path: str, line: int | None,
          where: str = "") -> Fraction:
    """*value* seconds, checked to be a plausible positive time."""
    if value <= 0:
        raise ParseError(f"{where}{what} {token} is not positive", path=path, line=line)
    if not _TIME_RANGE[0] <= value <= _TIME_RANGE[1]:
        raise ParseError(f"{where}{what} {token} is outside 1 ps .. 1e9 s; a typo?", path=path, line=line)
    return value


def _integer(token: str, what: str, *, path: str, line: int | None, where: str = "") -> int:
    if not _INTEGER.fullmatch(token) or int(token) > _MAX_SIZE:
        raise ParseError(f"{where}{what} {token!r} is not a whole number of bytes up to 2^60",
                         path=path, line=line)
    return int(token)


def _ulp(token: str) -> Fraction:
    """The unit in the last printed place of a decimal token ('14.18' → 1/100, '1.2e+03' → 100)."""
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return Fraction(10) ** (int(exponent or 0) - decimals)


def _source_line(lines: list[str]) -> str | None:
    for raw in lines:
        s = raw.strip()
        if s.lower().startswith("# source:"):
            return s
    return None


def _stated_collective(requested: str | None, stated: str | None, *, what: str, path: str,
                       line: int | None) -> str | None:
    """The caller's collective checked against the one the log states (ParseError if they differ)."""
    want = canonical_collective(requested) if requested else None
    if want and stated and want != stated:
        raise ParseError(f"collective {want!r} was requested but the log measures {stated} ({what}); "
                         f"give --collective {stated} (collective={stated!r}) or the right log",
                         path=path, line=line)
    return want or stated


def _warn_limited(warnings: list[str], items: list[str], summary: str) -> None:
    warnings.extend(items[:_MAX_WARNINGS])
    if len(items) > _MAX_WARNINGS:
        warnings.append(f"{len(items) - _MAX_WARNINGS} more {summary}")


def _check_increasing(rows: list[Row], *, path: str, strict: bool = True) -> None:
    """Sizes increase per in-place flag (strictly in logs; repeats allowed in the CSV)."""
    last: dict[bool, Row] = {}
    for r in rows:
        prev = last.get(r.in_place is True)
        if prev is not None and (r.n_bytes < prev.n_bytes or (strict and r.n_bytes == prev.n_bytes)):
            raise ParseError(f"size {r.n_bytes} B does not increase (line {prev.line} has {prev.n_bytes} B); "
                             "split a file that holds several runs", path=path, line=r.line)
        last[r.in_place is True] = r


# --------------------------------------------------------------------------- nccl-tests, text


@dataclass
class _Block:
    """The columns of one timing block (out-of-place or in-place) of an nccl-tests table."""

    time: int
    algbw: int
    busbw: int
    wrong: int | None
    wrong_kind: str
    in_place: bool


@dataclass
class _NcclText:
    """The state of one pass over an nccl-tests text log."""

    path: str
    lines: list[str]
    header: list[str] | None = None
    header_line: int | None = None
    blocks: list[_Block] = field(default_factory=list)
    ranks: set[int] = field(default_factory=set)
    per_process: int | None = None
    program: tuple[str, int] | None = None
    rows: list[Row] = field(default_factory=list)
    printed: list[tuple[Row, str, str, str, int]] = field(default_factory=list)
    series: tuple[str, ...] | None = None
    series_line: int | None = None
    dtype: str | None = None
    redop: str | None = None
    root: int | None = None
    footer: bool = False
    warnings: list[str] = field(default_factory=list)
    zero_lines: list[int] = field(default_factory=list)
    other_series: list[int] = field(default_factory=list)
    unchecked: set[bool] = field(default_factory=set)
    refused_rows: int = 0
    refusals: list[tuple[bool, int, str]] = field(default_factory=list)
    table_rows: int = 0
    rank_lines: dict[int, int] = field(default_factory=dict)
    nthread_line: int | None = None

    def run(self) -> None:
        for number, raw in enumerate(self.lines, start=1):
            s = raw.strip()
            if not s:
                continue
            if s.startswith("#"):
                self.comment(s, number)
            else:
                self.text(s, number)
        if self.header is None:
            raise ParseError("no nccl-tests table header ('#  size  count  type ...') found; "
                             "is the log complete?", path=self.path, line=len(self.lines))
        if not self.rows and self.refused_rows:
            raise ParseError(f"every row failed validation ({self.refused_rows} results with #wrong > 0 or "
                             "an error above the limit); nothing to fit: fix the run or the GPUs, then rerun",
                             path=self.path, line=len(self.lines))
        if not self.rows:
            raise ParseError("the table has no rows; the log looks truncated", path=self.path,
                             line=len(self.lines))

    def comment(self, s: str, number: int) -> None:
        if m := _RANK.match(s):
            self.ranks.add(int(m.group(1)))
            self.rank_lines.setdefault(int(m.group(1)), number)
        elif m := _NTHREAD.match(s):
            self.per_process = int(m.group(1)) * int(m.group(2))
            self.nthread_line = number
        elif m := _STARTING.match(s):
            self.found_program(m.group(1), number, strong=True)
        elif s.lower().startswith("# source:"):
            self.found_program(s, number)
        elif "Avg bus bandwidth" in s:
            self.footer = True
        elif "Out of bounds values" in s and "FAILED" in s:
            self.warnings.append(f"line {number}: nccl-tests reports out-of-bounds values ({s[1:].strip()})")
        else:
            tokens = s.lstrip("#").split()
            if tokens[:2] == ["size", "count"] and {"time", "cputime"} & set(tokens):
                self.set_header(tokens, number)

    def found_program(self, text: str, number: int, *, strong: bool = False) -> None:
        m = _PROGRAM.search(text)
        if m and (strong or self.program is None) and m.group(1) in _NCCL_PROGRAMS:
            self.program = (m.group(1), number)

    def set_header(self, tokens: list[str], number: int) -> None:
        if self.header is not None:
            raise ParseError(f"a second nccl-tests table starts here (the first at line {self.header_line}); "
                             "split a file that holds several runs", path=self.path, line=number)
        self.header, self.header_line = tokens, number
        starts = [i for i, t in enumerate(tokens) if t in {"time", "cputime"}]
        for k, i in enumerate(starts[:2]):
            if tokens[i + 1: i + 3] != ["algbw", "busbw"]:
                raise ParseError("the table header has no 'algbw busbw' after 'time'; not an nccl-tests "
                                 "table this reader knows", path=self.path, line=number)
            kind = tokens[i + 3] if i + 3 < len(tokens) else ""
            wrong = i + 3 if kind in {"#wrong", "error", "wrong"} else None
            self.blocks.append(_Block(time=i, algbw=i + 1, busbw=i + 2, wrong=wrong, wrong_kind=kind,
                                      in_place=k == 1))

    def text(self, s: str, number: int) -> None:
        tokens = s.split()
        if self.header is None or not _INTEGER.fullmatch(tokens[0]):
            if self.header is None and self.program is None:
                self.found_program(s, number)
            return  # interleaved output: NCCL version, NCCL INFO/WARN, the command line
        self.row(tokens, number)

    def row(self, tokens: list[str], number: int) -> None:
        header = self.header or []
        if "redop" in header and len(tokens) == len(header) - 1 and header[-1] != "timestamp":
            at = header.index("redop")
            if _NUMBER.fullmatch(tokens[at]) and not _INTEGER.fullmatch(tokens[at - 1]):
                tokens = [*tokens[:at], "none", *tokens[at:]]  # a blank redop (before 2022: no reduction)
        width = len(header) + (1 if header and header[-1] == "timestamp" else 0)
        if len(tokens) < len(header) - (1 if header[-1] == "timestamp" else 0):
            raise ParseError(f"the row has {len(tokens)} fields but the header (line {self.header_line}) has "
                             f"{len(header)}; the log looks truncated", path=self.path, line=number)
        if len(tokens) > width:
            raise ParseError(f"the row has {len(tokens)} fields but the header (line {self.header_line}) has "
                             f"{len(header)}; not an nccl-tests row", path=self.path, line=number)
        size = _integer(tokens[0], "size", path=self.path, line=number)
        self.table_rows += 1
        _check_rows(self.table_rows, path=self.path, line=number)
        series = tuple(tokens[header.index(c)] for c in ("type", "redop", "root") if c in header)
        if self.series is None:
            self.series, self.series_line = series, number
            self.note_series(header, tokens, number)
        elif series != self.series:
            self.other_series.append(number)
            return
        if size == 0:
            self.zero_lines.append(number)
            return
        for block in self.blocks:
            self.block_row(block, tokens, size, number)

    def note_series(self, header: list[str], tokens: list[str], number: int) -> None:
        self.dtype = tokens[header.index("type")] if "type" in header else None
        self.redop = tokens[header.index("redop")] if "redop" in header else None
        if "root" in header:
            root = tokens[header.index("root")]
            if not re.fullmatch(r"-?\d+", root):
                raise ParseError(f"root {root!r} is not an integer", path=self.path, line=number)
            self.root = int(root)

    def block_row(self, block: _Block, tokens: list[str], size: int, number: int) -> None:
        kind = "in-place" if block.in_place else "out-of-place"
        where = f"{kind} "
        t_tok, a_tok, b_tok = tokens[block.time], tokens[block.algbw], tokens[block.busbw]
        time_us = _decimal(t_tok, "time", path=self.path, line=number, where=where)
        _time(time_us / 10**6, f"{t_tok} us", "time", path=self.path, line=number, where=where)
        algbw = _decimal(a_tok, "algbw", path=self.path, line=number, where=where)
        busbw = _decimal(b_tok, "busbw", path=self.path, line=number, where=where)
        if block.wrong is not None and self.refused(block, tokens[block.wrong], number):
            return
        row = Row(n_bytes=size, time_s=time_us / 10**6, algbw_bytes_per_s=algbw * 10**9,
                  busbw_bytes_per_s=busbw * 10**9, in_place=block.in_place, line=number)
        self.rows.append(row)
        self.printed.append((row, t_tok, a_tok, b_tok, number))

    def refused(self, block: _Block, token: str, number: int) -> bool:
        kind = "in-place" if block.in_place else "out-of-place"
        if token.upper() == "N/A":
            self.unchecked.add(block.in_place)
            return False
        value = _decimal(token, block.wrong_kind, path=self.path, line=number, where=f"{kind} ")
        limit = _WRONG_ERROR if block.wrong_kind == "error" else Fraction(0)
        if value > limit:
            what = "max error" if block.wrong_kind == "error" else "#wrong"
            self.refusals.append((block.in_place, number, f"line {number}: {kind} {what} = {token}: "
                                                          "nccl-tests found wrong results; row refused"))
            self.refused_rows += 1
            return True
        return False


def _check_bandwidths(state: _NcclText, collective: str, p: int | None) -> None:
    """Recompute algbw = S/t and busbw = algbw × factor; a mismatch beyond the rounding is a warning."""
    factor = bus_factor(collective, p) if p else None
    bad: list[str] = []
    for row, t_tok, a_tok, b_tok, number in state.printed:
        time_us = row.time_s * 10**6
        algbw = Fraction(row.n_bytes, 1000) / time_us  # GB/s
        slack = algbw * _ulp(t_tok) / 2 / time_us  # from the rounding of the printed time
        kind = "in-place" if row.in_place else "out-of-place"
        printed = Fraction(a_tok)
        if abs(printed - algbw) > (_ulp(a_tok) / 2 + slack) * Fraction(101, 100):
            bad.append(f"line {number}: {kind} algbw {a_tok} GB/s differs from size/time = "
                       f"{float(algbw):.4g} GB/s beyond the printed rounding")
        if factor is not None:
            bus = algbw * factor
            if abs(Fraction(b_tok) - bus) > (_ulp(b_tok) / 2 + slack * factor) * Fraction(101, 100):
                bad.append(f"line {number}: {kind} busbw {b_tok} GB/s differs from algbw × {factor} = "
                           f"{float(bus):.4g} GB/s beyond the printed rounding (is p = {p} right?)")
    _warn_limited(state.warnings, bad, "bandwidth mismatches")


def _nccl_candidates(state: _NcclText) -> set[str]:
    """The collectives the redop/root columns allow."""
    everything = set(_BUS_FACTORS)
    if state.redop is None:
        return everything
    reduces = state.redop.lower() not in {"none", "-", "n/a", ""}
    if reduces:
        found = {"allreduce", "reduce-scatter", "reduce"}
    else:
        found = {"allgather", "alltoall", PT2PT, "broadcast", "gather", "scatter"}
    if state.root is not None:
        rooted = {"reduce", "broadcast", "gather", "scatter"}
        found = found & rooted if state.root >= 0 else found - rooted
    return found


def _infer_nccl_collective(state: _NcclText, p: int | None) -> str | None:
    """The collective from the columns and busbw/algbw, when only one fits."""
    candidates = _nccl_candidates(state)
    largest = max((r for r in state.rows if r.algbw_bytes_per_s), key=lambda r: r.n_bytes, default=None)
    if p and largest is not None and largest.algbw_bytes_per_s and largest.busbw_bytes_per_s is not None:
        ratio = largest.busbw_bytes_per_s / largest.algbw_bytes_per_s
        candidates = {c for c in candidates if abs(bus_factor(c, p) - ratio) <= ratio / 50}
    return candidates.pop() if len(candidates) == 1 else None


def _nccl_p(state: _NcclText, requested: int | None) -> int | None:
    p = None
    if state.ranks:
        p = max(state.ranks) + 1
        if p == 1:
            raise ParseError("the log lists one rank (p = 1): nothing is communicated, so α and β cannot be "
                             "fitted; run on at least 2 GPUs", path=state.path, line=state.rank_lines[0])
        if state.ranks != set(range(p)):
            state.warnings.append(f"the '# Rank' lines list {len(state.ranks)} ranks up to {p - 1}; "
                                  f"p = {p} assumed")
    elif state.per_process:
        p = state.per_process
        if p == 1:
            raise ParseError("nThread × nGpus = 1 and no '# Rank' lines: one rank (p = 1) communicates "
                             "nothing, so α and β cannot be fitted; run on at least 2 GPUs",
                             path=state.path, line=state.nthread_line)
        state.warnings.append(f"no '# Rank' lines; p = nThread × nGpus = {p} assumed (one process)")
    if requested is not None:
        requested = _check_p(requested)
        if p is not None and p != requested:
            raise ParseError(f"p={requested} was requested but the log lists {p} ranks; drop p or pass {p}",
                             path=state.path, line=state.header_line)
        p = requested
    return p


def read_nccl_tests(path_or_text: str | Path | bytes, *, path: str | None = None,
                    collective: str | None = None, p: int | None = None) -> Measurements:
    """Read the text output of an nccl-tests binary (``all_reduce_perf`` and the others).

    The collective comes from the binary's name (``# Collective test starting:``,
    the ``# source:`` line or a command line in the log), else from the columns
    (redop, root) and busbw/algbw; *collective* must agree with what the log
    states.  *p* is the number of ``# Rank`` lines (a given *p* must agree).

    Raises
    ------
    ParseError
        For a malformed log, with its path and line.
    """
    text, name = _load(path_or_text, path)
    state = _NcclText(path=name, lines=_split(text, name))
    state.run()
    ranks = _nccl_p(state, p)
    stated = _NCCL_PROGRAMS[state.program[0]] if state.program else None
    line = state.program[1] if state.program else state.header_line
    chosen = _stated_collective(collective, stated, what=f"{state.program[0]}_perf" if state.program else "",
                                path=name, line=line)
    if chosen is None:
        chosen = _infer_nccl_collective(state, ranks)
        if chosen is None:
            raise ParseError("cannot tell which collective this nccl-tests log measures (no *_perf name); "
                             "give --collective (collective= in Python)", path=name, line=state.header_line)
        state.warnings.append(f"collective {chosen} inferred from the redop/root columns and busbw/algbw; "
                              "give --collective (collective= in Python) to be explicit")
    elif stated is None and chosen not in _nccl_candidates(state):
        raise ParseError(f"collective {chosen!r} was requested but the redop/root columns "
                         f"({state.redop}, {state.root}) rule it out", path=name, line=state.series_line)
    if chosen not in _BUS_FACTORS:
        raise ParseError(f"nccl-tests has no {chosen} test", path=name, line=line)
    _finish_nccl_warnings(state, chosen, ranks)
    _check_increasing(state.rows, path=name)
    return Measurements(
        tool="nccl-tests", collective=chosen, p=ranks, rows=tuple(state.rows),
        source=_source_line(state.lines), warnings=tuple(state.warnings), path=name, backend="nccl",
        dtype=state.dtype,
        command=f"{state.program[0]}_perf" if state.program else None,
    )


def _refusal_warnings(state: _NcclText, collective: str) -> None:
    """One warning per refused row, or one for a whole placement that failed (in-place all-to-all)."""
    lines: list[str] = []
    for in_place in (False, True):
        refused = [r for r in state.refusals if r[0] is in_place]
        if not refused:
            continue
        kind = "in-place" if in_place else "out-of-place"
        if any(r.in_place is in_place for r in state.rows):
            lines.extend(text for _, _, text in refused)
            continue
        why = ("nccl-tests has no valid in-place all-to-all check (older versions print an error of 1)"
               if in_place and collective == "alltoall" else "nccl-tests found wrong results")
        state.warnings.append(f"every {kind} row failed validation (lines {refused[0][1]}–{refused[-1][1]}) "
                              f"and is dropped: {why}")
    _warn_limited(state.warnings, lines, "rows refused for wrong results")


def _finish_nccl_warnings(state: _NcclText, collective: str, p: int | None) -> None:
    _refusal_warnings(state, collective)
    if state.zero_lines:
        lines = ", ".join(map(str, state.zero_lines))
        state.warnings.append(f"0-byte rows skipped (lines {lines}): nothing was communicated")
    if state.other_series:
        series = " ".join(state.series or ())
        state.warnings.append(f"only the first series ({series}, line {state.series_line}) is read; "
                              f" {len(state.other_series)} rows of other types/ops skipped "
                              f"(from line {state.other_series[0]})")
    if False in state.unchecked:
        # Only the out-of-place half tells: nccl-tests prints N/A for the in-place half of tests that
        # have no in-place check (all-to-all) even when the run validates.
        state.warnings.append("#wrong is N/A: the run did not validate its results (-c 0)")
    if not state.footer:
        state.warnings.append("no '# Avg bus bandwidth' footer: the log may be truncated")
    _check_bandwidths(state, collective, p)


# --------------------------------------------------------------------------- nccl-tests, JSON


def _json_number(value: Any, what: str, *, path: str, where: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(f"{where}: {what} {value!r} is not a number", path=path, line=1)
    token = value if isinstance(value, str) else repr(value)
    if isinstance(value, float) and value != value:  # noqa: PLR0124 - NaN check
        token = "nan"
    return _decimal(token.strip(), what, path=path, line=1, where=f"{where}: ")


def read_nccl_tests_json(path_or_text: str | Path | bytes, *, path: str | None = None,
                         collective: str | None = None, p: int | None = None) -> Measurements:
    """Read the JSON file of ``nccl-tests -J FILE`` (schema in the module docstring).

    Raises
    ------
    ParseError
        For invalid JSON (with its line) or a missing or malformed field.
    """
    text, name = _load(path_or_text, path)
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
    program = _PROGRAM.search(str(args[0])) if args else None
    stated = _NCCL_PROGRAMS.get(program.group(1)) if program else None
    chosen = _stated_collective(collective, stated, what=str(args[0]) if args else "", path=name, line=1)
    if chosen is None:
        raise ParseError("cannot tell which collective this JSON measures (no args[0]); "
                         "give --collective (collective= in Python)", path=name, line=1)
    ranks = _json_p(doc, p, name)
    rows, warnings = _json_rows(results, name)
    _check_increasing(rows, path=name)
    return Measurements(
        tool="nccl-tests", collective=chosen, p=ranks, rows=tuple(rows), source=None,
        warnings=tuple(warnings), path=name, backend="nccl",
        dtype=str(results[0].get("type")) if isinstance(results[0], dict) else None,
        command=program.group(0) if program else None,
    )


def _json_p(doc: Mapping[str, Any], requested: int | None, path: str) -> int | None:
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    devices = config.get("devices")
    counts = [config.get(key, 1) for key in ("nthreads", "ngpus")]
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in counts):
        raise ParseError(f"config nthreads/ngpus {counts} are not positive integers", path=path, line=1)
    found = len(devices) * counts[0] * counts[1] if isinstance(devices, list) and devices else None
    if requested is not None:
        requested = _check_p(requested)
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
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= _MAX_SIZE:
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
    _time(time_us / 10**6, f"{float(time_us)} us", key, path=path, line=1, where=f"{where}: ")
    wrong = block.get("nwrong")
    if wrong is not None and _json_number(wrong, "nwrong", path=path, where=where) > 0:
        warnings.append(f"{where}: nwrong = {wrong}: nccl-tests found wrong results; row refused")
        return None
    rates = {}
    for key, name in (("alg_bw", "algbw_bytes_per_s"), ("bus_bw", "busbw_bytes_per_s")):
        if block.get(key) is not None:
            rates[name] = _json_number(block[key], key, path=path, where=where) * 10**9
    return Row(n_bytes=size, time_s=time_us / 10**6, in_place=in_place, line=None, **rates)


# --------------------------------------------------------------------------- OSU


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
        m = _OSU_TITLE.match(raw.strip())
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


def read_osu(path_or_text: str | Path | bytes, *, path: str | None = None, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read the output of an OSU Micro-Benchmark (collective latency tests, osu_latency, osu_bw).

    Times are the Avg column (µs); ``osu_bw``'s MB/s (10^6 B/s) become the time
    per message n/bw.  OSU does not print p; pass *p* here or to the fitter.

    Raises
    ------
    ParseError
        For a malformed log or a collective other than the title's.
    """
    text, name = _load(path_or_text, path)
    lines = _split(text, name)
    title = _osu_title(lines, name)
    stated = title.collective if title else None
    if stated is None:
        m = re.search(r"\bosu_([a-z_]+)\b", _source_line(lines) or "")
        key = m.group(1).replace("_", "") if m else ""
        stated = {"latency": PT2PT, "bw": PT2PT}.get(key) or _OSU_NAMES.get(key)
    chosen = _stated_collective(collective, stated, what=title.text[1:].strip() if title else "osu source",
                                path=name, line=title.line if title else 1)
    if chosen is None:
        raise ParseError("cannot tell which OSU test this is (no '# OSU MPI ... Test' line); "
                         "give --collective (collective= in Python)", path=name, line=1)
    bandwidth = title.kind == "bandwidth" if title else _osu_bandwidth_header(lines)
    if title is None and chosen == PT2PT and not any(_OSU_SIZE_HEADER.match(s.strip()) for s in lines):
        raise ParseError("a point-to-point table without its '# Size ...' header: costmodel cannot tell "
                         "osu_latency (us) from osu_bw (MB/s); paste the OSU output with its '#' lines",
                         path=name, line=1)
    rows, warnings = _osu_rows(lines, name, bandwidth=bandwidth)
    _check_increasing(rows, path=name)
    if title is None:
        warnings.append("no '# OSU MPI ... Test' title line; the collective comes from the caller or source")
    if chosen == PT2PT and not bandwidth:
        warnings.append("osu_latency prints the one-way latency (half the round trip); used as is")
    if bandwidth:
        warnings.append("osu_bw streams a window of messages: its time per message n/bw hides most of α")
    result = Measurements(
        tool="osu", collective=chosen, p=None, rows=tuple(rows), source=_source_line(lines),
        warnings=tuple(warnings), path=name, backend=title.backend if title else "mpi",
        command=_osu_command(chosen, bandwidth=bandwidth),
        size_per_rank=chosen in _PER_RANK_SIZE,
    )
    return result.with_p(p) if p is not None else result


def _osu_command(collective: str, *, bandwidth: bool) -> str:
    if collective == PT2PT:
        return "osu_bw" if bandwidth else "osu_latency"
    return "osu_" + collective.replace("-", "_")


def _osu_bandwidth_header(lines: list[str]) -> bool:
    return any(_OSU_SIZE_HEADER.match(s.strip()) and "MB/s" in s for s in lines)


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
        if s.startswith("#"):
            header = number if _OSU_SIZE_HEADER.match(s) else header
            continue
        tokens = s.split()
        if not _INTEGER.fullmatch(tokens[0]):
            continue  # interleaved output (MPI warnings)
        read += 1
        _check_rows(read, path=path, line=number)
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
            if not (low <= avg <= high and _INTEGER.fullmatch(tokens[4])):
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
    size = _integer(tokens[0], "size", path=path, line=number)
    value = _decimal(tokens[1], "bandwidth" if bandwidth else "latency", path=path, line=number)
    for token in tokens[2:]:
        _decimal(token, "value", path=path, line=number)
    if size == 0:
        warnings.append(f"line {number}: 0-byte row skipped")
        return None
    if value <= 0:
        raise ParseError(f"{'bandwidth' if bandwidth else 'latency'} {tokens[1]} is not positive",
                         path=path, line=number)
    if bandwidth:
        rate = value * 10**6
        time_s = _time(size / rate, f"{tokens[1]} MB/s", "bandwidth", path=path, line=number)
        return Row(n_bytes=size, time_s=time_s, algbw_bytes_per_s=rate, line=number)
    time_s = _time(value / 10**6, f"{tokens[1]} us", "latency", path=path, line=number)
    return Row(n_bytes=size, time_s=time_s, line=number)


# --------------------------------------------------------------------------- costmodel CSV


def _csv_bool(token: str, *, path: str, line: int) -> bool | None:
    key = token.strip().lower()
    if key in {"", "none", "null"}:
        return None
    if key in {"true", "1", "yes", "in-place", "in_place"}:
        return True
    if key in {"false", "0", "no", "out-of-place", "out_of_place"}:
        return False
    raise ParseError(f"in_place {token!r} is not true or false", path=path, line=line)


def _csv_rows(lines: list[str], path: str) -> tuple[list[tuple[str, str, int | None, Row]], int]:
    header: list[str] | None = None
    header_line = 0
    found: list[tuple[str, str, int | None, Row]] = []
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
        _check_rows(len(found), path=path, line=number)
    if header is None:
        raise ParseError("no CSV header found", path=path, line=len(lines))
    return found, header_line


def _csv_row(cell: dict[str, str], number: int, path: str) -> tuple[str, str, int | None, Row]:
    try:
        collective = canonical_collective(cell["collective"])
    except UnknownNameError as exc:
        raise ParseError(str(exc), path=path, line=number) from None
    p = None
    if cell["p"]:
        if not _INTEGER.fullmatch(cell["p"]) or int(cell["p"]) < 2:
            raise ParseError(f"p {cell['p']!r} is not an integer >= 2", path=path, line=number)
        p = int(cell["p"])
    size = _integer(cell["n_bytes"], "n_bytes", path=path, line=number)
    time_s = _time(_decimal(cell["time_s"], "time_s", path=path, line=number), cell["time_s"], "time_s",
                   path=path, line=number)
    bandwidths = {}
    for key in ("algbw_bytes_per_s", "busbw_bytes_per_s"):
        if cell.get(key):
            bandwidths[key] = _decimal(cell[key], key, path=path, line=number)
    in_place = _csv_bool(cell.get("in_place", ""), path=path, line=number)
    row = Row(n_bytes=size, time_s=time_s, in_place=in_place, line=number, **bandwidths)
    return collective, cell["backend"], p, row


def read_csv(path_or_text: str | Path | bytes, *, path: str | None = None, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read costmodel's CSV (``collective,backend,p,n_bytes,time_s[,in_place,...]``).

    A file may hold several (collective, backend, p) groups; *collective* and
    *p* choose one, and must when there are several.  Sizes may repeat
    (repeated measurements) but not decrease.

    Raises
    ------
    ParseError
        For a malformed file, or an ambiguous or missing group.
    """
    text, name = _load(path_or_text, path)
    groups = _csv_groups(text, name, collective, p)
    if len(groups) > 1:
        listed = ", ".join(f"{m.collective} {m.backend or ''} p={m.p}".replace("  ", " ") for m in groups)
        raise ParseError(f"the file holds {len(groups)} groups ({listed}); "
                         "give --collective and -p (collective= and p=) to choose",
                         path=name, line=groups[0].rows[0].line)
    return groups[0]


def read_logs(path_or_text: str | Path | bytes, *, path: str | None = None, collective: str | None = None,
              p: int | None = None) -> tuple[Measurements, ...]:
    """Every collective of a log: one :class:`Measurements` per collective of a costmodel CSV (as
    ``calibrate run`` writes it), else the one :func:`read_log` reads.

    Raises
    ------
    ParseError
        As :func:`read_log`, and for a CSV holding one collective at several p (give *p*).
    """
    text, name = _load(path_or_text, path)
    if detect_format(text) != "costmodel-csv":
        return (read_log(text.encode("utf-8"), path=name, collective=collective, p=p),)
    groups = _csv_groups(text, name, collective, p)
    names = [m.collective for m in groups]
    twice = next((c for c in names if names.count(c) > 1), None)
    if twice is not None:
        listed = ", ".join(f"{m.backend or ''} p={m.p}".strip() for m in groups if m.collective == twice)
        raise ParseError(f"{twice} was measured {names.count(twice)} times ({listed}); "
                         "give -p (p=) to choose", path=name,
                         line=next(m for m in groups if m.collective == twice).rows[0].line)
    return tuple(groups)


def _csv_groups(text: str, name: str, collective: str | None, p: int | None) -> list[Measurements]:
    """The (collective, backend, p) groups of a CSV that *collective* and *p* select, in file order."""
    lines = _split(text, name)
    found, header_line = _csv_rows(lines, name)
    want = canonical_collective(collective) if collective else None
    chosen = [f for f in found if (want is None or f[0] == want) and (p is None or f[2] == p)]
    keys = list(dict.fromkeys((c, b, q) for c, b, q, _ in chosen))
    if not keys:
        have = sorted({f"{c} p={q}" for c, _, q, _ in found}) or ["no rows"]
        raise ParseError(f"no rows for collective={want or 'any'} p={p or 'any'}; "
                         f"the file has {', '.join(have)}", path=name, line=header_line)
    out = []
    for key in keys:
        group_collective, backend, group_p = key
        rows = [r for c, b, q, r in chosen if (c, b, q) == key]
        warnings = [f"line {r.line}: 0-byte row skipped" for r in rows if r.n_bytes == 0]
        rows = [r for r in rows if r.n_bytes > 0]
        if not rows:
            raise ParseError(f"no {group_collective} rows with n_bytes > 0", path=name, line=header_line)
        _check_increasing(rows, path=name, strict=False)
        out.append(Measurements(tool="costmodel-csv", collective=group_collective, p=group_p,
                                rows=tuple(rows), source=_source_line(lines), warnings=tuple(warnings),
                                path=name, backend=backend or None))
    return out


def _exact_text(x: Fraction) -> str:
    """A Fraction as an exact decimal when it has one, else the nearest float."""
    return decimal_text(x) or repr(float(x))


def write_csv(measurements: Measurements, path: str | Path | None = None) -> str:
    """Write *measurements* as costmodel's CSV; return the text (and write it to *path* if given).

    >>> m = Measurements(tool="osu", collective="allreduce", p=2, backend="mpi",
    ...                  rows=(Row(n_bytes=4, time_s=Fraction(1767, 10**8)),))
    >>> print(write_csv(m), end="")
    collective,backend,p,n_bytes,time_s,in_place
    allreduce,mpi,2,4,0.00001767,
    >>> read_csv(write_csv(m)).rows[0].time_s
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
                         r.n_bytes, _exact_text(r.time_s), flag])
    text = out.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


# --------------------------------------------------------------------------- dispatch


def detect_format(text: str) -> str | None:
    """``"nccl-tests-json"``, ``"nccl-tests"``, ``"osu"``, ``"costmodel-csv"``, or None.

    >>> detect_format("collective,backend,p,n_bytes,time_s\\nallreduce,nccl,8,1024,0.00001\\n")
    'costmodel-csv'
    """
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return "nccl-tests-json"
    lines = [s.strip() for s in _split(text) if s.strip()]
    if any(_OSU_TITLE.match(s) for s in lines):
        return "osu"
    for s in lines:
        tokens = s.lstrip("#").split()
        if s.startswith("#") and (tokens[:2] == ["size", "count"] or _NTHREAD.match(s)):
            return "nccl-tests"
    data = [s for s in lines if not s.startswith("#")]
    if data and data[0].lower().replace(" ", "").startswith("collective,backend,"):
        return "costmodel-csv"
    if any(_OSU_SIZE_HEADER.match(s) for s in lines) or (data and all(map(_BARE_OSU_ROW.fullmatch, data))):
        return "osu"
    return None


_READERS: dict[str, Callable[..., Measurements]] = {
    "nccl-tests-json": read_nccl_tests_json,
    "nccl-tests": read_nccl_tests,
    "osu": read_osu,
    "costmodel-csv": read_csv,
}


def read_log(path_or_text: str | Path | bytes, *, path: str | None = None, collective: str | None = None,
             p: int | None = None) -> Measurements:
    """Read a benchmark log of any supported format (see the module docstring).

    Parameters
    ----------
    path_or_text : str, Path or bytes
        A file path (a :class:`~pathlib.Path`, or a str without a newline), or
        the log's content.
    path : str, optional
        The name to report for text input.
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
        For an unreadable, empty, binary, truncated or malformed log.
    """
    text, name = _load(path_or_text, path)
    kind = detect_format(text)
    if kind is None:
        raise ParseError("not an nccl-tests, OSU or costmodel CSV log (no table header found); "
                         "give the benchmark's full output", path=name, line=1)
    return _READERS[kind](text.encode("utf-8"), path=name, collective=collective, p=p)
