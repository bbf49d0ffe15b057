"""nccl-tests' text output (every layout since 2019); see :mod:`costmodel.calibration.logs`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from os import PathLike

from costmodel.calibration.logs.measurements import (
    BUS_FACTORS,
    INTEGER,
    NCCL_PROGRAMS,
    NUMBER,
    PROGRAM,
    PT2PT,
    UNKNOWN_RANKS,
    LogFormat,
    Measurements,
    Row,
    allowed_ranks,
    bus_factor,
    check_increasing,
    check_p,
    check_rows,
    check_text,
    checked_time,
    decimal,
    ranks_allowed,
    read_log_text,
    source_line,
    split_lines,
    stated_collective,
    whole_bytes,
)
from costmodel.errors import ParseError, SeparateRuns, WrongResults

_TYPE_BYTES = {
    "int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1, "f8e5m2": 1,
    "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "int32": 4, "uint32": 4, "int": 4,
    "float": 4, "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8,
}
_WRONG_ERROR = Fraction(1, 1000)
"""Old nccl-tests print the max abs error (1e-07 when right); above this the row is refused."""

RANK_LINE = re.compile(r"#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s")
"""nccl-tests' line for each rank before its table (``#  Rank  0 Group  0 Pid 4242 on host device  0 [0x07]
...``): the rank and its host.  Its '#' may be lost: Markdown reads a line that starts with '#' as a heading
and drops the mark, so a post keeps these lines bare."""
NTHREAD = re.compile(r"#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")
"""nccl-tests' ``# nThread 1 nGpus 8 minBytes ...`` line (its -t and -g), the '#' kept or lost."""
_FAILURE = re.compile(r"Test (?:CUDA |NCCL )?failure\b.*")
"""nccl-tests' own report of a failed run (common.h: "Test CUDA failure", "Test NCCL failure"), its first
line the cause: said where a run left no rows, or cut one."""
_WARN = re.compile(r"NCCL WARN .*")
"""NCCL's warning: context for a failure, never the failure itself (a harmless "Could not find a path for
pattern 4, falling back to simple order" precedes many a healthy run)."""
_STARTING = re.compile(r"#?\s*Collective test starting:\s*(\S+)")
_MAX_WARNINGS = 8


def _ulp(token: str) -> Fraction:
    """The unit in the last printed place of a decimal token ('14.18' → 1/100, '1.2e+03' → 100)."""
    return Fraction(10) ** _ulp_power(token)


def _ulp_power(token: str) -> int:
    """The power of ten of :func:`_ulp` ('14.18' → -2, '1.2e+03' → 2, '34176' → 0)."""
    if "e" not in token and "E" not in token:
        point = token.find(".")
        return 0 if point < 0 else point + 1 - len(token)
    mantissa, _, exponent = token.lower().partition("e")
    return int(exponent or 0) - len(mantissa.partition(".")[2])


def _warn_limited(warnings: list[str], items: list[str], summary: str) -> None:
    warnings.extend(items[:_MAX_WARNINGS])
    if len(items) > _MAX_WARNINGS:
        warnings.append(f"{len(items) - _MAX_WARNINGS} more {summary}")


@dataclass
class _Block:
    """The columns of one timing block (out-of-place or in-place) of an nccl-tests table."""

    time: int
    algbw: int
    busbw: int
    wrong: int | None
    wrong_kind: str
    in_place: bool


_BARE_FOOTER = re.compile(r"(?:Out of bounds values|Avg bus bandwidth)\s*:")
"""nccl-tests' summary lines, which a post may keep without their '#'."""



def _preamble(s: str) -> bool:
    """Whether *s* is one of nccl-tests' own lines before its table (a rank's line, ``nThread 1 nGpus 8
    ...``, ``Collective test starting:``)."""
    return any(line.match(s) is not None for line in (RANK_LINE, NTHREAD, _STARTING))


def _bare_header(tokens: list[str]) -> bool:
    """nccl-tests' column header without its '#' (a common paste): size, count, ..., algbw and busbw."""
    return tokens[:2] == ["size", "count"] and {"algbw", "busbw"} <= set(tokens)


_STANDARD_HEADER = ("size", "count", "type", "redop", "root",
                    "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong")
"""nccl-tests' column header since its root column (2019): out-of-place, then in-place."""
_STANDARD_ROW = re.compile(r"\d+\s+\d+\s+[a-z][a-z0-9_]*\s+[a-z]+\s+-?\d+(?:\s+(?:[\d.eE+-]+|N/A)){8}")
"""A row in :data:`_STANDARD_HEADER`'s columns (a type word, a redop word, an integer root, eight numbers
or N/A), as a post keeps it when it drops the header."""


def _standard_rows(lines: list[str]) -> bool:
    """Rows in nccl-tests' standard columns: the table of a post that kept its rows alone."""
    return any(_STANDARD_ROW.fullmatch(s) for s in lines)


@dataclass
class _NcclText:
    """The state of one pass over an nccl-tests text log."""

    path: str
    lines: list[str]
    header: list[str] | None = None
    series_columns: tuple[int, ...] = ()
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
    listings: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    """Where each rank is listed before the first row (line, host): a rank listed twice is two runs."""
    headers: list[tuple[int, bool]] = field(default_factory=list)
    """The ``# nThread`` lines before the first row, each with whether a rank line came before it."""
    launched: tuple[int, str] | None = None
    failure: tuple[int, str] | None = None
    warned: tuple[int, str] | None = None
    """NCCL's last warning before the failure (or the end), its line and text."""
    cut: tuple[int, str] | None = None
    """The line and size of a row the failure cut."""
    fragments: list[int] = field(default_factory=list)
    bounds_by: str = "busbw/algbw"
    """What the rank counts the table allows come from, as messages name it."""
    bus_one: bool = False
    """The table follows nccl-tests' convention before June 2020 (:data:`_BUS_ONE`)."""

    @property
    def listed(self) -> int | None:
        """The rank count the ``# Rank`` lines reach (their highest rank + 1); None without them."""
        return max(self.ranks) + 1 if self.ranks else None

    @property
    def complete(self) -> int | None:
        """:attr:`listed` where the lines name every rank below it (none cut), else None."""
        listed = self.listed
        return listed if listed is not None and self.ranks == set(range(listed)) else None

    def run(self) -> None:
        try:
            self.scan()
        except ParseError as error:  # a second table, sizes that fall: said as what they are, if they are
            self.separate(error)
            raise
        self.separate(None)
        self.finish()

    def scan(self) -> None:
        for number, raw in enumerate(self.lines, start=1):
            s = raw.strip()
            if not s:
                continue
            if s.startswith("#"):
                self.comment(s, number)
            else:
                self.text(s, number)

    def separate(self, error: ParseError | None) -> None:
        """Raise :class:`~costmodel.errors.SeparateRuns` when the log holds several runs side by side:
        rank 0 listed on two hosts before any row, or a second ``# nThread`` header before any rank line
        (each process printing its own header at start: nccl-tests built without MPI and started by
        mpirun runs one test per process; NVIDIA/nccl-tests#182, #27)."""
        zero = self.listings.get(0, [])
        adjacent = len(self.headers) > 1 and not self.headers[1][1]
        if len({host for _, host in zero}) < 2 and not adjacent:
            return
        runs = max(len(zero), len(self.headers))
        where = (f"rank 0 at line {zero[0][0]} on {zero[0][1]} and at line {zero[1][0]} on {zero[1][1]}"
                 if len(zero) > 1 else f"the '# nThread' header at lines {self.headers[0][0]} and "
                 f"{self.headers[1][0]}")
        raise SeparateRuns(
            f"{runs} runs of the test side by side ({where}): each process ran the test alone, not one "
            "communicator across them, so no row measures the collective asked for; mpirun starting an "
            "nccl-tests build without MPI does this (rebuild: make clean, then make MPI=1; "
            "NVIDIA/nccl-tests#182)", path=self.path,
            line=zero[1][0] if len(zero) > 1 else self.headers[1][0], runs=runs, evidence=where) from error

    def finish(self) -> None:
        if self.header is None and self.failure is not None:
            raise ParseError(f"no nccl-tests table: the run failed ({self.failed()})", path=self.path,
                             line=self.failure[0])
        if self.header is None:
            raise ParseError("no nccl-tests table header ('#  size  count  type ...') found; "
                             f"is the log complete?{self.warning()}", path=self.path, line=len(self.lines))
        if not self.rows and self.refused_rows:
            raise WrongResults(f"every row failed validation ({self.refused_rows} results with #wrong > 0 or "
                               "an error above the limit); nothing to fit: fix the run or the GPUs, "
                               "then rerun",
                               refusals=tuple(text for _, _, text in self.refusals),
                             path=self.path, line=len(self.lines))
        if not self.rows and self.failure is not None and self.table_rows == 0:
            raise ParseError(f"the table has no rows: the run failed ({self.failed()})", path=self.path,
                             line=self.failure[0])
        if not self.rows:
            raise ParseError(f"the table has no rows; the log looks truncated{self.warning()}",
                             path=self.path, line=len(self.lines))
        if self.failure is not None and self.failure[0] > (self.header_line or 0):  # the rows before it
            where = (f"line {self.cut[0]}: the run failed in the row of {self.cut[1]} B" if self.cut else
                     f"line {self.failure[0]}: the run failed")
            self.warnings.append(f"{where} ({self.failed()}); the rows before it are read")

    def failed(self) -> str:
        """nccl-tests' failure line, and NCCL's last warning before it as context."""
        assert self.failure is not None
        before = f"; before it, line {self.warned[0]}: {self.warned[1]}" if self.warned else ""
        return f"{self.failure[1]}{before}"

    def warning(self) -> str:
        """NCCL's last warning, as context where the log ends without a table or rows: '' without one."""
        return f" (NCCL warned at line {self.warned[0]}: {self.warned[1]})" if self.warned else ""

    def comment(self, s: str, number: int) -> None:
        before = self.table_rows == 0 and self.failure is None  # still before the table's first row
        if m := RANK_LINE.match(s):
            self.ranks.add(int(m.group(1)))
            self.rank_lines.setdefault(int(m.group(1)), number)
            if before:
                self.listings.setdefault(int(m.group(1)), []).append((number, m.group(2)))
        elif m := NTHREAD.match(s):
            self.per_process = int(m.group(1)) * int(m.group(2))
            self.nthread_line = number
            if before:
                self.headers.append((number, bool(self.listings)))
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
        m = PROGRAM.search(text)
        if m and (strong or self.program is None) and m.group(1) in NCCL_PROGRAMS:
            self.program = (m.group(1), number)

    def set_header(self, tokens: list[str], number: int) -> None:
        if self.header is not None and self.table_rows == 0 and self.failure is not None:
            failed, why = self.failure  # a run that failed before its first row, then a run that did not
            self.warnings.append(f"line {self.header_line}: a table without rows, its run failed at line "
                                 f"{failed} ({why}); read the table at line {number}")
            self.header, self.blocks, self.failure, self.warned = None, [], None, None
        if self.header is not None:
            raise ParseError(f"a second nccl-tests table starts here (the first at line {self.header_line}); "
                             "split a file that holds several runs", path=self.path, line=number)
        self.header, self.header_line = tokens, number
        self.series_columns = tuple(tokens.index(c) for c in ("type", "redop", "root") if c in tokens)
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
        bare = self.header is None and (_bare_header(tokens) or _preamble(s))
        if bare or _BARE_FOOTER.match(s):
            self.comment("# " + s, number)  # a post that lost the '#' of nccl-tests' own lines
            return
        if self.header is None and _STANDARD_ROW.fullmatch(s):  # rows without their header
            self.set_header(list(_STANDARD_HEADER), number)
            self.warnings.append(f"line {number}: rows without nccl-tests' column header, read in its own "
                                 "columns: " + " ".join(_STANDARD_HEADER))
        if self.failure is None and (warned := _WARN.search(s)) is not None:
            self.warned = (number, warned.group(0).strip())
        if (failed := _FAILURE.search(s)) is not None:
            if self.failure is None:
                self.failure = (number, failed.group(0).strip())
            if self.header is not None and INTEGER.fullmatch(tokens[0]) and self.cut is None:
                self.cut = (number, tokens[0])  # a row the crash cut ("... -1 node0: Test CUDA failure ...")
                return
        if self.header is not None and not INTEGER.fullmatch(tokens[0]) and len(tokens) >= 3 and all(
                NUMBER.fullmatch(t) or t == "N/A" for t in tokens):
            self.fragments.append(number)  # the tail of a row whose head other output took
            return
        if self.header is None or not INTEGER.fullmatch(tokens[0]):
            if self.header is None and self.program is None:
                self.found_program(s, number)
            if self.header is None and self.launched is None:
                self.launched = _launched(tokens)
            return  # interleaved output: NCCL version, NCCL INFO/WARN, the command line
        self.row(tokens, number)

    def row(self, tokens: list[str], number: int) -> None:
        header = self.header or []
        if "redop" in header and len(tokens) == len(header) - 1 and header[-1] != "timestamp":
            at = header.index("redop")
            if NUMBER.fullmatch(tokens[at]) and not INTEGER.fullmatch(tokens[at - 1]):
                tokens = [*tokens[:at], "none", *tokens[at:]]  # a blank redop (before 2022: no reduction)
        width = len(header) + (1 if header and header[-1] == "timestamp" else 0)
        if len(tokens) < len(header) - (1 if header[-1] == "timestamp" else 0):
            if not any(line.strip() for line in self.lines[number:]):  # a paste cut in its last row
                self.warnings.append(f"line {number}: the last row is cut short ({len(tokens)} of "
                                     f"{len(header)} fields): left out")
                return
            raise ParseError(f"the row has {len(tokens)} fields but the header (line {self.header_line}) has "
                             f"{len(header)}; the log looks truncated", path=self.path, line=number)
        if len(tokens) > width:
            raise ParseError(f"the row has {len(tokens)} fields but the header (line {self.header_line}) has "
                             f"{len(header)}; not an nccl-tests row", path=self.path, line=number)
        size = whole_bytes(tokens[0], "size", path=self.path, line=number)
        self.table_rows += 1
        check_rows(self.table_rows, path=self.path, line=number)
        series = tuple(tokens[i] for i in self.series_columns)
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
        time_s = decimal(t_tok, "time", path=self.path, line=number, where=where, scale=-6)
        checked_time(time_s, f"{t_tok} us", "time", path=self.path, line=number, where=where)
        algbw = decimal(a_tok, "algbw", path=self.path, line=number, where=where, scale=9)
        busbw = decimal(b_tok, "busbw", path=self.path, line=number, where=where, scale=9)
        if block.wrong is not None and self.refused(block, tokens[block.wrong], number):
            return
        row = Row(n_bytes=size, time_s=time_s, algbw_bytes_per_s=algbw, busbw_bytes_per_s=busbw,
                  in_place=block.in_place, line=number)
        self.rows.append(row)
        self.printed.append((row, t_tok, a_tok, b_tok, number))

    def refused(self, block: _Block, token: str, number: int) -> bool:
        kind = "in-place" if block.in_place else "out-of-place"
        if token == "0":  # what almost every row prints
            return False
        if token.upper() == "N/A":
            self.unchecked.add(block.in_place)
            return False
        value = decimal(token, block.wrong_kind, path=self.path, line=number, where=f"{kind} ")
        limit = _WRONG_ERROR if block.wrong_kind == "error" else Fraction(0)
        if value > limit:
            what = "max error" if block.wrong_kind == "error" else "#wrong"
            self.refusals.append((block.in_place, number, f"line {number}: {kind} {what} = {token}: "
                                                          "nccl-tests found wrong results; row refused"))
            self.refused_rows += 1
            return True
        return False


def _check_bandwidths(state: _NcclText, collective: str, p: int | None) -> None:
    """Recompute algbw = S/t and busbw = algbw × factor (before June 2020, for :data:`_BUS_ONE`: algbw =
    S/t × (p − 1)/p and busbw = algbw); a mismatch beyond the rounding is a warning.

    In floats: the verdict has a margin of 1 % of the printed rounding, far above a float's error
    (10⁻¹⁶ of the value), and the numbers it prints have 4 digits.
    """
    factor = bus_factor(collective, p) if p else None
    # printed algbw / (S/t) and printed busbw / printed algbw; None: not known without p
    alg_factor, bus_over_alg = (factor, Fraction(1)) if state.bus_one else (Fraction(1), factor)
    bad: list[str] = []
    for row, t_tok, a_tok, b_tok, number in state.printed:
        time_us = float(t_tok)
        algbw = row.n_bytes / 1000 / time_us  # GB/s
        slack = algbw * 10.0 ** _ulp_power(t_tok) / 2 / time_us  # from the rounding of the printed time
        kind = "in-place" if row.in_place else "out-of-place"
        if alg_factor is not None:
            alg, share = algbw * float(alg_factor), "" if alg_factor == 1 else f" × {alg_factor}"
            if abs(float(a_tok) - alg) > (10.0 ** _ulp_power(a_tok) / 2 + slack * float(alg_factor)) * 1.01:
                bad.append(f"line {number}: {kind} algbw {a_tok} GB/s differs from size/time{share} = "
                           f"{alg:.4g} GB/s beyond the printed rounding")
        if bus_over_alg is not None and not state.bus_one:
            bus = algbw * float(bus_over_alg)
            if abs(float(b_tok) - bus) > (10.0 ** _ulp_power(b_tok) / 2 + slack * float(bus_over_alg)) * 1.01:
                bad.append(f"line {number}: {kind} busbw {b_tok} GB/s differs from algbw × {factor} = "
                           f"{bus:.4g} GB/s beyond the printed rounding (is p = {p} right?)")
    _warn_limited(state.warnings, bad, "bandwidth mismatches")


def _nccl_candidates(state: _NcclText) -> set[str]:
    """The collectives the redop/root columns allow."""
    everything = set(BUS_FACTORS)
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
    """The collective from the columns and busbw/algbw, when only one fits: at *p* ranks, or, with no
    rank count, at any that busbw/algbw allows."""
    candidates = _nccl_candidates(state)
    largest = max((r for r in state.rows if r.algbw_bytes_per_s), key=lambda r: r.n_bytes, default=None)
    if largest is not None and largest.algbw_bytes_per_s and largest.busbw_bytes_per_s is not None:
        ratio = largest.busbw_bytes_per_s / largest.algbw_bytes_per_s
        if p:
            candidates = {c for c in candidates if abs(bus_factor(c, p) - ratio) <= ratio / 50}
        else:
            candidates = {c for c in candidates if c in BUS_FACTORS and (
                _table_bounds(state, c) is not None or abs(bus_factor(c, 2) - ratio) <= ratio / 50)}
    return candidates.pop() if len(candidates) == 1 else None


_MOST_RANKS = 1 << 24
"""The most ranks :func:`_table_bounds` considers."""

_BUS_ONE = frozenset({"allgather", "reduce-scatter"})
"""The collectives whose busbw nccl-tests printed equal to algbw before its commit ec1b5e2 (2020-06-19,
"Change all_gather/reduce_scatter algbw to match the documentation"): both were
count·typesize·(p − 1) / t, count the elements per rank, which is S·(p − 1)/p / t of the size S it
printed then as now (the whole buffer); algbw is S/t since, and busbw unchanged."""


def _largest(state: _NcclText) -> tuple[Fraction, Fraction, str, str, Row] | None:
    """The printed (algbw, busbw), their tokens and the row, of the row with the largest algbw, exactly:
    among the rows whose algbw is largest as a float (a float never orders two decimals the wrong way
    round, it may only tie them); None without a row."""
    top = max((float(a) for _, _, a, _, _ in state.printed), default=0.0)
    printed = [(Fraction(a), Fraction(b), a, b, row) for row, _, a, b, _ in state.printed if float(a) == top]
    return max(printed, key=lambda e: (e[0], e[1]), default=None)


def _table_bounds(state: _NcclText, collective: str) -> tuple[int, int] | None:
    """The rank counts that the printed busbw/algbw of the row with the largest algbw allows, within the
    printing's rounding (nccl-tests computes busbw with the communicator's true size), as (least, most);
    None when the factor does not depend on p or the row says nothing."""
    largest = _largest(state)
    if largest is None:
        return None
    a, b, a_tok, b_tok, _ = largest
    if a <= _ulp(a_tok) / 2:
        return None
    low = (b - _ulp(b_tok) / 2) / (a + _ulp(a_tok) / 2)
    high = (b + _ulp(b_tok) / 2) / (a - _ulp(a_tok) / 2)
    return _ranks_between(collective, low, high)


def _old_bounds(state: _NcclText, collective: str) -> tuple[int, int] | None:
    """The rank counts of a log in nccl-tests' convention before June 2020 (:data:`_BUS_ONE`), as
    (least, most): busbw equal to algbw on every row, and algbw below size/time by the factor (p − 1)/p
    of the row with the largest algbw, within the printing's rounding; None for a log in today's
    convention (algbw is size/time there) or one whose rows say nothing."""
    if collective not in _BUS_ONE or any(Fraction(a) != Fraction(b) for _, _, a, b, _ in state.printed):
        return None
    largest = _largest(state)
    if largest is None:
        return None
    a, _, a_tok, _, row = largest
    t_tok = next(t for r, t, _, _, _ in state.printed if r is row)
    half_a, half_t = _ulp(a_tok) / 2, _ulp(t_tok) / 2
    if a <= half_a:
        return None
    # printed algbw / (S/t), both in GB/s: algbw × t[µs] × 1000 / S
    low = (a - half_a) * (Fraction(t_tok) - half_t) * 1000 / row.n_bytes
    high = (a + half_a) * (Fraction(t_tok) + half_t) * 1000 / row.n_bytes
    return None if high >= 1 else _ranks_between(collective, low, high)


def _ranks_between(collective: str, low: Fraction, high: Fraction) -> tuple[int, int] | None:
    """The rank counts p whose bus factor (:data:`BUS_FACTORS`) lies in [*low*, *high*], as (least, most);
    None for a factor that does not grow with p, or an interval no p reaches."""
    factor = BUS_FACTORS[collective]
    if not factor(Fraction(2)) < factor(Fraction(4)) < factor(Fraction(_MOST_RANKS)):
        return None  # a factor that does not grow with p (broadcast, reduce, send/recv) says nothing

    def first(at_least: Fraction, strict: bool) -> int:  # the least p whose factor is >= (or >) at_least
        lo, hi = 2, _MOST_RANKS
        while lo < hi:
            mid = (lo + hi) // 2
            f = factor(Fraction(mid))
            if f > at_least or (f == at_least and not strict):
                hi = mid
            else:
                lo = mid + 1
        return lo

    least, most = first(low, strict=False), first(high, strict=True) - 1
    if least > most or least >= _MOST_RANKS:
        return None  # a busbw/algbw no rank count gives: the checks of the bandwidths say so
    return least, min(most, _MOST_RANKS - 1)


_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "srun"})
_LAUNCH_COUNT: dict[str, str | None] = {"-np": "ranks", "--np": "ranks", "-n": "ranks", "--ntasks": "ranks"}
_TEST_COUNT: dict[str, str | None] = {"-g": "gpus", "--ngpus": "gpus", "-t": "threads",
                                      "--nthreads": "threads"}


def _counts(words: list[str], keys: dict[str, str | None]) -> dict[str, int]:
    """The positive whole values of the options *keys* names among *words* (``-g 2``, ``--ngpus=2``), by
    the name *keys* gives each; the first of each kept."""
    found: dict[str, int] = {}
    for i, word in enumerate(words):
        key, _, value = word.partition("=")
        if keys.get(key) is None:
            continue
        value = value or (words[i + 1] if i + 1 < len(words) else "")
        if value.isdigit() and int(value) > 0:
            found.setdefault(keys[key] or "", int(value))
    return found


def _test_at(names: list[str]) -> int | None:
    """Where the test's program stands among a command line's words (paths stripped), if it does."""
    return next((i for i, n in enumerate(names) if PROGRAM.fullmatch(n)), None)


def _launched(tokens: list[str]) -> tuple[int, str] | None:
    """The ranks a launcher's command line starts (``mpirun -np 16 ... all_reduce_perf -g 1``): its process
    count times the test's GPUs and threads per process, and the words that say so; None for any other
    line."""
    names = [t.rsplit("/", 1)[-1] for t in tokens]
    start = next((i for i, n in enumerate(names) if n in _LAUNCHERS), None)
    test = _test_at(names)
    if start is None or test is None or test < start:
        return None
    launch = _counts(tokens[start + 1:test], _LAUNCH_COUNT)
    if "ranks" not in launch:
        return None
    test_counts = _counts(tokens[test + 1:], _TEST_COUNT)
    ranks = launch["ranks"] * test_counts.get("gpus", 1) * test_counts.get("threads", 1)
    return ranks, f"{names[start]} starts {launch['ranks']} process{'es' if launch['ranks'] > 1 else ''}"


def command_launch(lines: Iterable[str]) -> tuple[int, int] | None:
    """nThread and nGpus as the test's command lines among *lines* give them (``-t``, 1 when not given,
    and ``-g``, or ``--nthreads`` and ``--ngpus``): for a log that lost its ``# nThread`` line but kept
    the command.  None when no command line gives ``-g``, or two give different launches.

    >>> command_launch(["$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2"])
    (1, 2)
    >>> command_launch(["mpirun -np 16 all_reduce_perf -b 8 -e 8G -t 1 --ngpus=1"])
    (1, 1)
    >>> command_launch(["on slurm-gb200-207-171 device 3 -g 2"]), command_launch(["all_reduce_perf -b 8"])
    (None, None)
    """
    launches = set()
    for line in lines:
        tokens = line.replace("`", " ").split()
        test = _test_at([t.rsplit("/", 1)[-1] for t in tokens])
        if test is not None and "gpus" in (counts := _counts(tokens[test + 1:], _TEST_COUNT)):
            launches.add((counts.get("threads", 1), counts["gpus"]))
    return launches.pop() if len(launches) == 1 else None


def _requested_p(state: _NcclText, requested: int, bounds: tuple[int, int] | None) -> int:
    """A rank count the caller gives: it must agree with ``# Rank`` lines that name every rank (and that
    busbw/algbw allows), and with busbw/algbw."""
    requested = check_p(requested)
    complete = state.complete
    if complete is not None and complete != requested and ranks_allowed(complete, bounds):
        raise _listed_ranks(state, requested, complete)
    if bounds is not None and not ranks_allowed(requested, bounds):
        raise ParseError(f"p={requested} was requested but the log's {state.bounds_by} allows "
                         f"{allowed_ranks(bounds)}", path=state.path, line=state.header_line)
    return requested


def _listed_ranks(state: _NcclText, requested: int, listed: int) -> ParseError:
    return ParseError(f"p={requested} was requested but the log lists {listed} ranks; drop p= or give "
                      f"{listed}", path=state.path, line=state.header_line)


def _unstated_p(state: _NcclText, said: str, bounds: tuple[int, int]) -> int | None:
    """The rank count of a log whose own count (*said* why not) busbw/algbw rules out: the one count it
    allows, or the launcher's where it allows that; else None."""
    if bounds[0] == bounds[1]:
        state.warnings.append(f"{said}: p = {bounds[0]} taken" + (" (were the lines cut?)" if state.ranks else
                                                                  "; give the ranks to be explicit"))
        return bounds[0]
    if state.launched is not None and ranks_allowed(state.launched[0], bounds):
        ranks, launcher = state.launched
        state.warnings.append(f"{said}: p = {ranks} taken from its command line ({launcher})")
        return ranks
    state.warnings.append(f"{said}: {UNKNOWN_RANKS}")
    return None


def _nccl_p(state: _NcclText, requested: int | None, bounds: tuple[int, int] | None) -> int | None:
    """The log's rank count: a requested one, else its ``# Rank`` lines', else nThread × nGpus (one
    process's), each only where the printed busbw/algbw allows it (*bounds*); else the one count those
    allow, or the launcher's; else None, with a warning that says why."""
    if requested is not None:
        return _requested_p(state, requested, bounds)
    listed = state.listed
    stated, why, line = listed, f"the '# Rank' lines list {len(state.ranks)} ranks", state.header_line
    if listed is None and state.per_process:
        stated, why, line = state.per_process, f"nThread × nGpus = {state.per_process}", state.nthread_line
    if stated is not None and ranks_allowed(stated, bounds):
        if stated == 1:
            raise ParseError(f"{why}: one rank (p = 1) communicates nothing; run on at least 2 GPUs",
                             path=state.path, line=state.rank_lines.get(0, line))
        if listed is None:
            state.warnings.append(f"no '# Rank' lines; p = nThread × nGpus = {stated} assumed (one process)")
        elif state.complete is None:
            state.warnings.append(f"{why} up to {listed - 1}; p = {listed} assumed")
        return stated
    if bounds is None:
        if stated is not None:  # one process of one rank, and a table that cannot say more
            state.warnings.append(f"{why} and the table's busbw/algbw does not depend on p: {UNKNOWN_RANKS}")
        return None
    if listed is None and stated is not None:
        why += " counts one process's ranks"
    allowed = f"the log's {state.bounds_by} allows {allowed_ranks(bounds)}"
    said = f"{why}, but {allowed}" if stated else f"no '# Rank' lines and no nThread × nGpus; {allowed}"
    return _unstated_p(state, said, bounds)


def parse_nccl_tests(text: str, *, path: str = "<text>", collective: str | None = None,
                     p: int | None = None) -> Measurements:
    """Read the text output of an nccl-tests binary (``all_reduce_perf`` and the others).

    The collective comes from the binary's name (``# Collective test starting:``,
    the ``# source:`` line or a command line in the log), else from the columns
    (redop, root) and busbw/algbw; *collective* must agree with what the log
    states.  *p* is the number of ``# Rank`` lines (a given *p* must agree), else nThread × nGpus, each
    only where the printed busbw/algbw allows it (cut lines, or one process of an MPI job, do not); else
    the one rank count busbw/algbw allows, or the launcher's (``mpirun -np 16``) where it allows that;
    else None, with a warning.  The counts busbw/algbw allows are the measurements' ``p_bounds``.

    Raises
    ------
    ParseError
        For a malformed log, with its path and line.
    """
    name, text = path, check_text(text, path)
    state = _NcclText(path=name, lines=split_lines(text, name))
    state.run()
    # the stated count, provisionally, to infer the collective from busbw/algbw
    provisional = p or state.listed or state.per_process
    stated = NCCL_PROGRAMS[state.program[0]] if state.program else None
    line = state.program[1] if state.program else state.header_line
    chosen = stated_collective(collective, stated, what=f"{state.program[0]}_perf" if state.program else "",
                                path=name, line=line)
    if chosen is None:
        chosen = _infer_nccl_collective(state, provisional if provisional and provisional > 1 else None)
        complete = state.complete
        if (chosen is None and p is not None and complete is not None and complete > 1 and complete != p
                and _infer_nccl_collective(state, complete) is not None):  # the count rules them out
            raise _listed_ranks(state, p, complete)
        if chosen is None:
            raise ParseError("cannot tell which collective this nccl-tests log measures (no *_perf name); "
                             "give collective=", path=name, line=state.header_line)
        state.warnings.append(f"collective {chosen} inferred from the redop/root columns and busbw/algbw; "
                              "give collective= to be explicit")
    elif stated is None and chosen not in _nccl_candidates(state):
        raise ParseError(f"collective {chosen!r} was requested but the redop/root columns "
                         f"({state.redop}, {state.root}) rule it out", path=name, line=state.series_line)
    if chosen not in BUS_FACTORS:
        raise ParseError(f"nccl-tests has no {chosen} test", path=name, line=line)
    bounds = _old_bounds(state, chosen)
    if bounds is not None:
        _read_bus_one(state, bounds)
    else:
        bounds = _table_bounds(state, chosen)
    ranks = _nccl_p(state, p, bounds)
    _finish_nccl_warnings(state, chosen, ranks)
    check_increasing(state.rows, path=name)
    return Measurements(
        tool="nccl-tests", collective=chosen, p=ranks, rows=tuple(state.rows), p_bounds=bounds,
        p_bounds_by=state.bounds_by,
        source=source_line(state.lines), warnings=tuple(state.warnings), path=name, backend="nccl",
        dtype=state.dtype,
        command=f"{state.program[0]}_perf" if state.program else None,
    )


def _read_bus_one(state: _NcclText, bounds: tuple[int, int]) -> None:
    """Read the table in nccl-tests' convention before June 2020 (:data:`_BUS_ONE`): sizes, times and busbw
    as printed, no algbw (its column held busbw), the rank counts from algbw against size/time."""
    state.bus_one, state.bounds_by = True, "algbw against size/time"
    state.rows = [replace(r, algbw_bytes_per_s=None) for r in state.rows]
    state.warnings.append("busbw equals algbw on every row, as nccl-tests printed both for all_gather and "
                          "reduce_scatter before June 2020 (size × (p − 1)/p / time): sizes, times and "
                          "busbw read as printed, the ranks from algbw against size/time "
                          f"({allowed_ranks(bounds)})")


def read_nccl_tests(path: str | PathLike[str], *, collective: str | None = None,
                    p: int | None = None) -> Measurements:
    """Read an nccl-tests text log from the file *path* (see :func:`parse_nccl_tests`)."""
    return parse_nccl_tests(read_log_text(path), path=str(path), collective=collective, p=p)


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
        lines, s = ", ".join(map(str, state.zero_lines)), "s" if len(state.zero_lines) > 1 else ""
        state.warnings.append(f"0-byte row{s} skipped (line{s} {lines}): nothing was communicated")
    if state.fragments:
        lines, s = ", ".join(map(str, state.fragments[:8])), "s" if len(state.fragments) > 1 else ""
        more = f" and {len(state.fragments) - 8} more" if len(state.fragments) > 8 else ""
        state.warnings.append(f"line{s} {lines}{more}: numbers without a size, the tail of a row whose "
                              "start other output interrupted, skipped")
    if state.other_series:
        series = " ".join(state.series or ())
        other = len(state.other_series)
        state.warnings.append(f"only the first series ({series}, line {state.series_line}) is read; "
                              f"{other} row{'s' if other > 1 else ''} of other types/ops skipped "
                              f"(from line {state.other_series[0]})")
    if False in state.unchecked:
        # Only the out-of-place half tells: nccl-tests prints N/A for the in-place half of tests that
        # have no in-place check (all-to-all) even when the run validates.
        state.warnings.append("#wrong is N/A: the run did not validate its results (-c 0)")
    if not state.footer:
        state.warnings.append("no '# Avg bus bandwidth' footer: the log may be truncated")
    _check_bandwidths(state, collective, p)




def _headed(text: str, lines: list[str]) -> bool:
    """nccl-tests' ``# nThread`` line or its ``size count`` column header (with its ``#``, or without it
    where the header names algbw and busbw: a post that lost the ``#``)."""
    for s in lines:
        tokens = s.lstrip("#").split()
        header = tokens[:2] == ["size", "count"]
        bare = header and {"algbw", "busbw"} <= set(tokens)
        if (s.startswith("#") and (header or NTHREAD.match(s))) or bare:
            return True
    return False


FORMAT = LogFormat("nccl-tests", "nccl-tests (text)", detect=_headed, parse=parse_nccl_tests,
                   guess=_standard_rows)
"""nccl-tests' text output."""
