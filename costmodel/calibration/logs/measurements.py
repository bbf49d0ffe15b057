"""What every log reader shares: :class:`Measurements` and :class:`Row`, the checks of a log's text
and numbers, launcher-prefix stripping, and :class:`LogFormat`, how a reader declares its format.

The formats are read by :mod:`.nccl_text`, :mod:`.nccl_json`, :mod:`.osu` and :mod:`.costmodel_csv`;
:mod:`costmodel.calibration.logs` describes them and chooses among them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from os import PathLike
from typing import Any

from costmodel._files import MAX_READ_BYTES, SMALLER_LOG, read_text
from costmodel._json import JSONFields, to_json_dict
from costmodel.collective_names import PT2PT, canonical_collective
from costmodel.collectives.busbw import FACTORS
from costmodel.errors import InputError, ParseError
from costmodel.validate import whole

TOOLS = ("nccl-tests", "osu", "imb", "costmodel-csv")
"""The values of :attr:`Measurements.tool`."""

CSV_COLUMNS = ("collective", "backend", "p", "n_bytes", "time_s", "in_place")
"""The columns :func:`write_csv` writes; the first five are required when reading."""

BUS_FACTORS: dict[str, Callable[[Fraction], Fraction]] = {
    **{name: factor for name, (_, factor) in FACTORS.items()},
    PT2PT: lambda p: Fraction(1),
}
"""busbw/algbw per collective, as nccl-tests computes it (see costmodel.collectives.busbw)."""


def bus_factor(collective: str, p: int) -> Fraction:
    """busbw/algbw of a measured *collective* (a canonical name, or ``pt2pt``: 1) on *p* ranks.

    >>> bus_factor("allreduce", 8), bus_factor(PT2PT, 2)
    (Fraction(7, 4), Fraction(1, 1))
    """
    return BUS_FACTORS[collective](Fraction(p))

NCCL_PROGRAMS = {
    "all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce-scatter",
    "broadcast": "broadcast", "reduce": "reduce", "alltoall": "alltoall", "sendrecv": PT2PT,
    "gather": "gather", "scatter": "scatter",
}
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
INTEGER = re.compile(r"\d+")
PROGRAM = re.compile(r"\b([a-z_]+?)_perf(?:_mpi)?\b")
OSU_TITLE = re.compile(
    r"#?\s*OSU\s+(MPI|OpenSHMEM|UPC\+\+|UPC|NCCL|RCCL|XCCL)(?:[-\s](?:CUDA|ROCm|OpenACC))?\s+(.*?)\s*Test\b"
    r"(?:\s+v?(\S+))?", re.IGNORECASE)
OSU_SIZE_HEADER = re.compile(r"#?\s*Size\s+(?:Avg|Latency|Bandwidth|Min|Max|Iterations)", re.IGNORECASE)
BARE_OSU_ROW = re.compile(
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
        The bandwidths the log printed (nccl-tests, or OSU's bandwidth test); algbw is None
        where the log's algbw column is not nccl-tests' algbw (an all-gather or reduce-scatter
        log before June 2020 printed busbw there).
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
    p_bounds : (int, int) or None
        The least and most ranks the log's printed bandwidths allow (nccl-tests'
        busbw/algbw), when they depend on p.
    p_bounds_by : str
        What :attr:`p_bounds` comes from, as a message names it: ``busbw/algbw``, or
        ``algbw against size/time`` in an old all-gather or reduce-scatter log, whose
        busbw/algbw is 1.
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
    p_bounds: tuple[int, int] | None = None
    p_bounds_by: str = "busbw/algbw"

    def select(self, *, in_place: bool | None = False) -> tuple[Row, ...]:
        """The rows of one kind: out-of-place (and unflagged) rows, or the in-place ones.

        ``in_place=None`` asks for the default kind, :meth:`default_in_place`: the out-of-place
        rows, or the in-place ones of a log that has no other (torch.distributed's all-reduce and
        broadcast work in place only, so ``calibrate run`` times them in place).

        >>> m = Measurements(tool="costmodel-csv", collective="allreduce", p=2,
        ...                  rows=(Row(n_bytes=8, time_s=Fraction(1), in_place=True),))
        >>> len(m.select()), len(m.select(in_place=None)), m.default_in_place
        (0, 1, True)
        """
        if in_place is None:
            in_place = self.default_in_place
        if in_place:
            return tuple(r for r in self.rows if r.in_place is True)
        return tuple(r for r in self.rows if r.in_place is not True)

    @property
    def default_in_place(self) -> bool:
        """Whether the default rows are the in-place ones: only when every row is in place."""
        return bool(self.rows) and all(r.in_place is True for r in self.rows)

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
        ranks = check_p(p)
        if self.p is not None and self.p != ranks:
            raise InputError(f"p={ranks} differs from the p={self.p} the log states; drop p= or give "
                             f"{self.p}")
        if self.p_bounds is not None and not ranks_allowed(ranks, self.p_bounds):
            raise InputError(f"p={ranks} is not what the log ran: its {self.p_bounds_by} allows "
                             f"{allowed_ranks(self.p_bounds)}")
        known = tuple(w for w in self.warnings if not w.endswith(UNKNOWN_RANKS))  # it is known now
        if len(known) < len(self.warnings):
            known = (*known, f"{ranks} ranks as given")
        if not self.size_per_rank:
            return replace(self, p=ranks, warnings=known)
        rows = tuple(replace(r, n_bytes=r.n_bytes * ranks) for r in self.rows)
        note = f"sizes scaled by p = {ranks}: OSU's Size is per rank, costmodel's n is the whole buffer"
        return replace(self, p=ranks, rows=rows, size_per_rank=False, warnings=(*known, note))

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("tool", "collective", "p", "backend", "dtype", "command", "source", "path",
                                   "size_per_rank", "warnings", "rows"))


UNKNOWN_RANKS = "the rank count is not known; give it"
"""How a log's warnings end when it does not say how many ranks ran (what precedes it says why)."""


# --------------------------------------------------------------------------- shared helpers


def check_p(p: Any) -> int:
    return whole(p, "p", low=2, expected="an integer >= 2", hint="give the number of ranks")


def ranks_allowed(p: int, bounds: tuple[int, int] | None) -> bool:
    """Whether a log whose printed bandwidths allow the rank counts *bounds* (``p_bounds``; None: any)
    ran on *p* ranks."""
    return bounds is None or bounds[0] <= p <= bounds[1]


def allowed_ranks(bounds: tuple[int, int]) -> str:
    """The rank counts *bounds* allows, as a message says them: ``p = 16``, ``p from 981 to 1066``."""
    least, most = bounds
    return f"p = {least}" if least == most else f"p from {least} to {most}"


def read_log_text(path: str | PathLike[str]) -> str:
    """The text of the log file *path*, read as every user file is (by :func:`costmodel._files.read_text`:
    regular files only, at most :data:`~costmodel._files.MAX_READ_BYTES`, UTF-8, a byte-order mark
    dropped)."""
    return read_text(path, what="the log", smaller=SMALLER_LOG)


def check_text(text: str, path: str) -> str:
    """*text*, checked to be the text of a log (held to the file size cap, not empty, no control
    characters), a byte-order mark dropped; *path* names it in the error."""
    if not isinstance(text, str):
        raise InputError(f"a {type(text).__name__} is not a log's text; pass a str (read_log reads a file)")
    if len(text) > MAX_READ_BYTES:
        raise ParseError(f"the log is larger than the {MAX_READ_BYTES // 2**20} MiB costmodel reads; "
                         "keep the table only", path=path)
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise ParseError("the file is empty; give the benchmark's output", path=path, line=1)
    bad = re.search(r"[\x00-\x08\x0e-\x1f\x7f]", text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        raise ParseError(f"control character {bad.group()!r} is not text; this is not a benchmark log "
                         "(binary data?)", path=path, line=line)
    return text


_LAUNCHER_PREFIX = re.compile(
    r"^\s*(?:\[\d+,\d+\](?:\[[^\]\n]*\])?<std(?:out|err)>:"  # Open MPI --tag-output: [1,0]<stdout>:
    r"|\d+(?:\+\d+)?: "  # SLURM srun --label: '0: ', ' 12: ', heterogeneous jobs '0+1: '
    r"|\[(?P<rank>\d+)\] )"  # MPICH / Intel MPI -prepend-rank: '[0] '
)
_NUMBERS = re.compile(r"\s*\d")
"""A line of a table's numbers (an nccl-tests row or its tail), not a program's message: MPICH's
``-prepend-rank`` tags every write it forwards, and nccl-tests writes a row in three, so its rank's tag
stands inside the row too (``... -1[0]    1626.5 ...  0[0]    2302.3 ...``), where no number has one."""
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? ")
"""An RFC 3339 time before each line: ``kubectl logs --timestamps`` (``2025-03-14T09:26:53.123456789Z ``),
``docker logs -t``."""
MAX_ROWS = 100_000
"""The most table rows a log may hold (a sweep has tens; a million-row file is not a benchmark log)."""
_MAX_LINES = 10 * MAX_ROWS


_QUOTE = re.compile(r"^[ \t]*>(?:[ \t]?>)*[ \t]?")
"""A Markdown block quote's marks, at any depth (``> ``, ``>> ``, ``> > ``): a log quoted in a comment."""
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)[\w+-]*[ \t]*$")
"""A Markdown code fence (```, ```text, ~~~): a line of its own that no benchmark prints."""


def split_lines(text: str, path: str = "<text>", *, notes: list[str] | None = None) -> list[str]:
    """The lines of *text*, split at line feeds only (so that line numbers match an editor's), with
    any MPI launcher prefix removed from each line (Open MPI ``--tag-output``, SLURM ``srun --label``,
    MPICH/Intel MPI ``-prepend-rank``, whose tag a table's row also carries where its writes meet), whether
    every line carries one or only some do, and before it any
    time stamp a log collector put there (``kubectl logs --timestamps``, ``docker logs -t``), and before
    that any Markdown quoting of a pasted log (``> `` at any depth; code fences become blank lines).
    What the quoting was is said in *notes*, when given."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if len(lines) > _MAX_LINES:
        raise ParseError(f"the log has {len(lines)} lines, more than the {_MAX_LINES} costmodel reads; "
                         "keep the table only", path=path, line=_MAX_LINES + 1)
    quoted: list[int] = []
    fences: list[int] = []
    for number, line in enumerate(lines):
        if line[:1] in (">", " ", "\t") and (mark := _QUOTE.match(line)):
            line = line[mark.end():]  # noqa: PLW2901 - the line, unquoted
            quoted.append(number + 1)
        if line[:1] in ("`", "~", " ", "\t") and _FENCE.match(line):
            line = ""  # noqa: PLW2901
            fences.append(number + 1)
        line = _TIMESTAMP.sub("", line, count=1)  # noqa: PLW2901
        if (prefix := _LAUNCHER_PREFIX.match(line)) is not None:
            line = line[prefix.end():]  # noqa: PLW2901
            if prefix["rank"] is not None and _NUMBERS.match(line):
                line = line.replace(f"[{prefix['rank']}]", "")  # noqa: PLW2901
        lines[number] = line
    while lines and not lines[-1].strip():
        lines.pop()
    if notes is not None and (quoted or fences):
        kinds = [f"'>' quotes on {_counted(quoted, 'line')}" if quoted else "",
                 f"code fences on {_counted(fences, 'line')}" if fences else ""]
        notes.append(f"a log quoted in Markdown ({' and '.join(k for k in kinds if k)}): read without the "
                     "quoting")
    return lines


def _counted(numbers: list[int], what: str) -> str:
    """``line 3``, ``lines 2–40`` (the first and last), as a note names the lines it is about."""
    return f"{what} {numbers[0]}" if len(numbers) == 1 else f"{what}s {numbers[0]}–{numbers[-1]}"


def check_rows(count: int, *, path: str, line: int) -> None:
    """Refuse a table once it has more than :data:`MAX_ROWS` rows (called as rows are read)."""
    if count > MAX_ROWS:
        raise ParseError(f"the table has more than {MAX_ROWS} rows, the most costmodel reads; "
                         "give one sweep (thin it, or split the file)", path=path, line=line)


def decimal(token: str, what: str, *, path: str, line: int | None, where: str = "",
            scale: int = 0) -> Fraction:
    """An exact decimal from a log token, times 10***scale* (``scale=-6`` reads µs as seconds); NaN, inf
    and junk raise ParseError.

    >>> decimal("36.47", "time", path="<text>", line=1, scale=-6), decimal("1.5e3", "x", path="", line=1)
    (Fraction(3647, 100000000), Fraction(1500, 1))
    """
    if not NUMBER.fullmatch(token):
        raise ParseError(f"{where}{what} {token!r} is not a finite number", path=path, line=line)
    if ("e" in token or "E" in token) and abs(int(token.lower().partition("e")[2])) > _MAX_EXPONENT:
        raise ParseError(f"{where}{what} {token!r} is out of range (a power of ten above "
                         f"{_MAX_EXPONENT}); a typo?", path=path, line=line)
    return _exact_decimal(token, scale)


_MAX_EXPONENT = 300
"""The largest power of ten a token may carry (a float's range; 1e999999999 would take minutes to expand)."""


@lru_cache(maxsize=1 << 14)
def _exact_decimal(token: str, scale: int) -> Fraction:
    """The exact value of a token of :data:`NUMBER`'s form, times 10**scale: one normalised Fraction
    built from integers (``Fraction(token) * 10**scale`` builds three, parsing the text with a regex).

    Logs repeat many tokens (``0.00``, ``#wrong`` 0, a plateau's bandwidth), hence the cache."""
    mantissa, _, exponent = token.partition("e") if "e" in token else token.partition("E")
    whole, _, part = mantissa.partition(".")
    digits = int(whole + part)  # NUMBER has a digit on one side of the point at least
    power = int(exponent or 0) - len(part) + scale
    return Fraction(digits * 10**power) if power >= 0 else Fraction(digits, 10**-power)


_TIME_RANGE = (Fraction(1, 10**12), Fraction(10**9))
"""Times outside 1 ps .. 30 years are typos or junk, and would overflow the fitter's floats."""
MAX_SIZE = 2**60


def checked_time(value: Fraction, token: str, what: str, *, path: str, line: int | None,
          where: str = "") -> Fraction:
    """*value* seconds, checked to be a plausible positive time."""
    if 2e-12 < float(value) < 5e8:  # inside the range whatever the float's rounding: no exact comparison
        return value
    if value <= 0:
        raise ParseError(f"{where}{what} {token} is not positive", path=path, line=line)
    if not _TIME_RANGE[0] <= value <= _TIME_RANGE[1]:
        raise ParseError(f"{where}{what} {token} is outside 1 ps .. 1e9 s; a typo?", path=path, line=line)
    return value


def whole_bytes(token: str, what: str, *, path: str, line: int | None, where: str = "") -> int:
    if not INTEGER.fullmatch(token) or int(token) > MAX_SIZE:
        raise ParseError(f"{where}{what} {token!r} is not a whole number of bytes up to 2^60",
                         path=path, line=line)
    return int(token)


def source_line(lines: list[str]) -> str | None:
    for raw in lines:
        s = raw.strip()
        if s.lower().startswith("# source:"):
            return s
    return None


def stated_collective(requested: str | None, stated: str | None, *, what: str, path: str,
                       line: int | None) -> str | None:
    """The caller's collective checked against the one the log states (ParseError if they differ)."""
    want = canonical_collective(requested) if requested else None
    if want and stated and want != stated:
        raise ParseError(f"collective {want!r} was requested but the log measures {stated} ({what}); "
                         f"give collective={stated} or the right log",
                         path=path, line=line)
    return want or stated


def check_increasing(rows: list[Row], *, path: str, strict: bool = True) -> None:
    """Sizes increase per in-place flag (strictly in logs; repeats allowed in the CSV)."""
    last: dict[bool, Row] = {}
    for r in rows:
        prev = last.get(r.in_place is True)
        if prev is not None and (r.n_bytes < prev.n_bytes or (strict and r.n_bytes == prev.n_bytes)):
            raise ParseError(f"size {r.n_bytes} B does not increase (line {prev.line} has {prev.n_bytes} B); "
                             "split a file that holds several runs", path=path, line=r.line)
        last[r.in_place is True] = r


# --------------------------------------------------------------------------- formats


@dataclass(frozen=True, slots=True)
class LogFormat:
    """One format the log readers know, declared by its reader module (``FORMAT``) and listed, in the
    order they are tried, in :data:`costmodel.calibration.logs.FORMATS`.

    *name* is the format's key (``detect_format`` returns it), *title* how messages name it.  *detect*
    takes the log's text and its non-blank lines, stripped, and says whether the log is surely of this
    format (a title or a header only it prints); *guess*, tried for every format only when none is
    sure, whether it may be (rows in its layout without its header).  *parse* is the reader,
    ``parse(text, *, path, collective, p)``.
    """

    name: str
    title: str
    detect: Callable[[str, list[str]], bool]
    parse: Callable[..., Measurements]
    guess: Callable[[list[str]], bool] | None = None

