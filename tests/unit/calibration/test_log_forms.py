"""Logs as clusters write them: launcher prefixes, OSU tables without '#' lines, all-failed validation,
p = 1, and files that are not logs at all (FIFOs, devices, folders, huge files)."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel import _files
from costmodel.calibration import parse_log, read_log
from costmodel.calibration.logs import measurements
from costmodel.errors import InputError, ParseError

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs"
NCCL = LOGS / "nccl-tests"
OSU = LOGS / "osu"
ALL_LOGS = sorted(LOGS.glob("*/*.txt"))
H200 = NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt"
KIND = OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt"


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _key(m) -> tuple:
    return (m.tool, m.collective, m.p, [(r.n_bytes, r.time_s, r.in_place, r.line) for r in m.rows])


def _refused(text: str, tmp_path: Path, match: str, **kwargs) -> ParseError:
    target = tmp_path / "log.txt"
    target.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError, match=match) as info:
        read_log(target, **kwargs)
    assert str(info.value).startswith(f"{target}:") and "\n" not in str(info.value)
    return info.value


# --------------------------------------------------------------------------- launcher prefixes

PREFIXES = {
    "open-mpi --tag-output": lambda i: f"[1,{i % 3}]<stdout>:",
    "open-mpi --tag-output, stderr": lambda i: "[1,0]<stderr>:",
    "open-mpi 5 tag-detailed": lambda i: "[1,0][node01:1234]<stdout>: ",
    "srun --label": lambda i: "0: ",
    "srun --label, wide": lambda i: f"{i % 16:3d}: ",
    "srun --label, heterogeneous job": lambda i: "0+1: ",
    "mpich -prepend-rank": lambda i: "[0] ",
}


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("prefix", PREFIXES, ids=list(PREFIXES))
def test_launcher_prefixes_are_stripped_from_every_line(log, prefix):
    lines = _lines(log)
    plain = read_log(log)
    tagged = "\n".join(lines[:1] + [PREFIXES[prefix](i) + s for i, s in enumerate(lines[1:])])
    assert _key(parse_log(tagged)) == _key(plain)


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: p.name)
def test_a_log_where_only_some_lines_carry_a_prefix(log):
    lines = _lines(log)
    mixed = [s if i % 2 else f"[1,0]<stdout>:{s}" for i, s in enumerate(lines)]
    mixed.insert(3, "[1,1]<stderr>:--------------------------------------------------------------------------")
    mixed.insert(3, "[1,1]<stderr>:WARNING: There was an error initializing an OpenFabrics device.")
    m = parse_log("\n".join(mixed))
    plain = read_log(log)
    assert [(r.n_bytes, r.time_s, r.in_place) for r in m.rows] == [(r.n_bytes, r.time_s, r.in_place)
                                                                   for r in plain.rows]


@pytest.mark.parametrize("log", ALL_LOGS, ids=lambda p: p.name)
def test_kubectl_timestamps_are_stripped_before_any_prefix(log):
    """kubectl logs --timestamps (and docker logs -t) put an RFC 3339 time before every line, before the
    launcher's own prefix when there is one."""
    lines = _lines(log)
    stamped = [f"2025-03-14T09:{i % 60:02d}:53.{i:09d}Z {s}" for i, s in enumerate(lines)]
    assert _key(parse_log("\n".join(stamped))) == _key(read_log(log))
    labelled = [f"2025-03-14T09:26:53+01:00 {i % 4}: {s}" for i, s in enumerate(lines)]
    assert _key(parse_log("\n".join(labelled))) == _key(read_log(log))


STANDARD = [p for p in sorted(NCCL.glob("*.txt"))
            if any(s.lstrip("#").split() == ["size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                                             "#wrong", "time", "algbw", "busbw", "#wrong"] for s in _lines(p))]


@pytest.mark.parametrize("log", STANDARD, ids=lambda p: p.name)
def test_rows_kept_without_their_header_read_as_the_whole_log(log):
    """A post that keeps only the table's rows (nccl-tests#294): read in nccl-tests' own columns, with a
    warning, the same sizes and times as the whole log."""
    whole = read_log(log)
    rows = parse_log("\n".join(s for s in _lines(log) if not s.lstrip().startswith("#")),
                     collective=whole.collective)
    assert [(r.n_bytes, r.time_s, r.in_place) for r in rows.rows] == [(r.n_bytes, r.time_s, r.in_place)
                                                                      for r in whole.rows]
    assert any("rows without nccl-tests' column header" in w for w in rows.warnings)
    assert rows.p in (whole.p, None)


def test_the_rank_count_comes_from_busbw_when_the_rank_lines_were_cut():
    """nccl-tests computes busbw with the communicator's size: a log whose '# Rank' lines lost the second
    node's (or kept only the last line) still says how many ranks ran, and that count is taken."""
    full = NCCL / "allreduce_h100x16_2node_8xndr_nccltests309.txt"
    cut = parse_log("\n".join(s for s in _lines(full) if "on bm-h100-02 device" not in s))
    assert cut.p == 16 and any("list 8 ranks, but the log's busbw/algbw allows p = 16: p = 16 taken" in w
                               for w in cut.warnings)
    assert [(r.n_bytes, r.time_s) for r in cut.rows] == [(r.n_bytes, r.time_s) for r in read_log(full).rows]
    rack = read_log(NCCL / "allreduce_gb200x72_nvl72_elided_coreweave.txt")  # one '# Rank 71' line
    assert rack.p == 72 and not any("busbw/algbw allows" in w for w in rack.warnings)
    assert not any("differs from algbw" in w for w in rack.warnings)


def test_a_prefix_never_eats_a_row():
    # a bare OSU row and an nccl-tests row do not look like a prefix, and the source line stays
    m = parse_log("\n".join(f"0: {s}" for s in _lines(KIND)))
    assert m.source is not None and m.source.startswith("# source:")
    assert m.rows[0].n_bytes == 4 and len(m.rows) == 19


# --------------------------------------------------------------------------- OSU without '#' lines


def _bare(path: Path) -> list[str]:
    return [s for s in _lines(path) if s.strip() and not s.lstrip().startswith("#")]


@pytest.mark.parametrize("log", sorted(OSU.glob("*.txt")), ids=lambda p: p.name)
def test_osu_header_lines_that_lost_their_hash(log):
    """A paste that drops the leading '#' of OSU's title and column lines reads as the original."""
    unhashed = [s if s.startswith("# source:") else re.sub(r"^#\s*", "", s) for s in _lines(log)]
    m = parse_log("\n".join(unhashed))
    assert _key(m) == _key(read_log(log)) and m.collective == "allreduce"


@pytest.mark.parametrize("log", sorted(OSU.glob("*.txt")), ids=lambda p: p.name)
def test_osu_rows_without_their_header_lines(log):
    plain = read_log(log)
    bare = "\n".join(_bare(log))
    m = parse_log(bare, collective="allreduce")
    assert [(r.n_bytes, r.time_s) for r in m.rows] == [(r.n_bytes, r.time_s) for r in plain.rows]
    assert any("no '# OSU MPI" in w for w in m.warnings)
    with pytest.raises(ParseError, match="give collective="):
        parse_log(bare)


def _full_layout(path: Path) -> list[str]:
    """The default layout turned into -f's (Avg, Min, Max, Iterations), Avg kept."""
    out = []
    for s in _bare(path):
        size, avg = s.split()
        a = float(avg)
        out.append(f"{size:<10}{avg:>18}{a * 0.5:>18.2f}{a * 2:>18.2f}{1000:>12}")
    return out


def test_osu_full_layout_without_header_lines():
    plain = read_log(KIND)
    m = parse_log("\n".join(_full_layout(KIND)), collective="allreduce")
    assert [(r.n_bytes, r.time_s) for r in m.rows] == [(r.n_bytes, r.time_s) for r in plain.rows]


def test_osu_full_layout_with_header_lines():
    lines = _lines(KIND)
    header = next(i for i, s in enumerate(lines) if s.startswith("# Size"))
    full = [*lines[:header], "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations",
            *_full_layout(KIND)]
    m = parse_log("\n".join(full))
    assert [r.time_s for r in m.rows] == [r.time_s for r in read_log(KIND).rows]


@pytest.mark.parametrize(("rows", "message"), [
    (["4 17.67 3", "8 15.49 3"], "3 columns and no '# Size"),
    (["4 17.67 1 2", "8 15.49 1 2"], "4 columns"),
    (["4 17.67", "8 15.49 10.0 20.0 1000"], "2 or 5 columns"),
    (["4 17.67 20.00 30.00 1000", "8 15.49 10.00 20.00 1000"], "not OSU's -f layout"),
    (["4 17.67 10.00 30.00 1000.5", "8 15.49 10.00 20.00 1000"], "not OSU's -f layout"),
])
def test_ambiguous_bare_osu_tables_are_refused(tmp_path, rows, message):
    _refused("\n".join(rows), tmp_path, re.escape(message), collective="allreduce")


def test_bare_point_to_point_table_is_refused(tmp_path):
    _refused("4 17.67\n8 15.49\n", tmp_path, "osu_latency .* from osu_bw", collective="pt2pt")


# --------------------------------------------------------------------------- validation


def _with_wrong(path: Path, out_of_place: str | None, in_place: str | None) -> str:
    """*path* (root, #wrong layout) with the #wrong columns of every row set (None: kept)."""
    out = []
    for line in _lines(path):
        f = line.split()
        if f and f[0].isdigit():
            assert len(f) == 13
            f[8] = out_of_place or f[8]
            f[12] = in_place or f[12]
            line = "  ".join(f)  # noqa: PLW2901
        out.append(line)
    return "\n".join(out)


def test_all_wrong_rows_say_every_row_failed_validation(tmp_path):
    err = _refused(_with_wrong(H200, "3", "7"), tmp_path, "every row failed validation")
    assert "truncated" not in str(err)


def test_all_failed_osu_rows_say_every_row_failed_validation(tmp_path):
    lines = [s if s.startswith("#") else f"{s}   Fail" for s in _lines(KIND)]
    err = _refused("\n".join(lines), tmp_path, "every row failed validation")
    assert "truncated" not in str(err)


def _has_na_warning(text: str) -> bool:
    return any("N/A" in w for w in parse_log(text).warnings)


def test_the_na_warning_only_when_validation_was_off():
    assert _has_na_warning(_with_wrong(H200, "N/A", "N/A"))
    # all-to-all: the in-place half is N/A even in a validated run; nothing to warn about
    assert not _has_na_warning(_with_wrong(H200, None, "N/A"))
    assert not _has_na_warning(H200.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- p = 1


_ONE_GPU = """\
# source: all_reduce_perf -b 1M -e 2M -g 1 on one H100 (busbw 0: one rank)
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid  41 on     node01 device  0 [0x0f] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1     5.10  205.60    0.00      0     0.30  3495.25    0.00    N/A
     2097152        524288     float     sum      -1     6.00  349.53    0.00      0     0.30  6990.51    0.00    N/A
# Avg bus bandwidth    : 0
"""


def test_one_rank_is_refused_naming_the_file_and_the_rank_line(tmp_path):
    """A run on one GPU (busbw 0: nothing crosses a link) communicates nothing."""
    lines = _ONE_GPU.splitlines()
    number = next(i for i, s in enumerate(lines, start=1) if "Rank  0" in s)
    err = _refused(_ONE_GPU, tmp_path, r"one rank \(p = 1\)")
    assert err.line == number


def test_one_thread_one_gpu_without_rank_lines_is_refused(tmp_path):
    lines = [s for s in _ONE_GPU.splitlines() if "Rank " not in s]
    number = next(i for i, s in enumerate(lines, start=1) if "nThread" in s)
    err = _refused("\n".join(lines), tmp_path, r"p = 1")
    assert err.line == number


def test_counts_busbw_rules_out_are_not_the_rank_count():
    """A '# Rank' line lost from a 2-rank log, or an MPI job's 'nThread 1 nGpus 1' (one process of
    many), is not the rank count: busbw/algbw allows only p = 2, which is taken; a count it allows
    several of is left to the caller, and the launcher's command line settles it when it fits."""
    lost = parse_log("\n".join(s for s in _lines(H200) if "Rank  1" not in s))
    assert lost.p == 2 and lost.p_bounds == (2, 2)
    assert any("list 1 ranks, but the log's busbw/algbw allows p = 2" in w for w in lost.warnings)
    processes = parse_log("\n".join(s for s in _lines(H200) if "Rank " not in s))
    assert processes.p == 2 and any("counts one process's ranks" in w for w in processes.warnings)


def test_a_large_job_cut_to_its_first_rank_lines_takes_the_launchers_count():
    """nccl-tests#322: 1024 ranks (busbw/algbw allows 981-1066), 100 '# Rank' lines kept; the mpirun
    line's -np settles it, and without it the count is unknown, not 100."""
    lines = _lines(NCCL / "allreduce_h100x1024_roce_nccltests322.txt")
    launched = parse_log("\n".join(lines))
    assert launched.p == 1024 and any("mpirun starts 1024 processes" in w for w in launched.warnings)
    cut = parse_log("\n".join(s for s in lines if not s.startswith("mpirun")))
    assert cut.p is None and cut.p_bounds == (981, 1066)
    assert any("list 100 ranks, but the log's busbw/algbw allows p from 981 to 1066: the rank count is not "
               "known" in w for w in cut.warnings)
    with pytest.raises(InputError, match="busbw/algbw allows p from 981 to 1066"):
        cut.with_p(100)
    assert cut.with_p(1024).p == 1024


# --------------------------------------------------------------------------- files that are not logs


def test_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def unblock() -> None:  # if the reader ever opens the FIFO, this makes the test fail, not hang
        with contextlib.suppress(OSError):
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)

    timer = threading.Timer(10, unblock)
    timer.daemon = True
    timer.start()
    try:
        with pytest.raises(ParseError, match="FIFO"):
            read_log(fifo)
    finally:
        timer.cancel()


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_refused_before_it_is_read():
    with pytest.raises(ParseError, match="character device, not a regular file"):
        read_log(Path("/dev/zero"))


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(ParseError, match="a folder"):
        read_log(tmp_path)


def test_a_huge_file_is_refused_with_the_cap(tmp_path):
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(_files.MAX_READ_BYTES + 1)  # sparse: nothing is written or read
    with pytest.raises(ParseError, match=r"larger than the 64 MiB costmodel reads; give a smaller file \(split it"):
        read_log(huge)
    with pytest.raises(ParseError, match="larger than the 64 MiB"):
        parse_log("x" * (_files.MAX_READ_BYTES + 1))


def test_the_cap_is_in_the_error(tmp_path):
    target = tmp_path / "log.txt"
    target.write_bytes(b"#" * 100)
    with pytest.raises(ParseError, match=r"larger than the 99 B costmodel reads; give a smaller file$"):
        _files.read_bytes(target, what="the log", limit=99)


def test_too_many_rows_are_refused_with_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(measurements, "MAX_ROWS", 10)  # the module that holds the shared checks
    err = _refused(KIND.read_text(encoding="utf-8"), tmp_path, "more than 10 rows")
    assert err.line is not None
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    _refused("\n".join(lines), tmp_path, "more than 10 rows")
    csv = "collective,backend,p,n_bytes,time_s\n" + "".join(f"allreduce,nccl,8,{8 * i},0.001\n"
                                                              for i in range(1, 13))
    _refused(csv, tmp_path, "more than 10 rows")


def test_a_csv_without_the_columns_names_them(tmp_path):
    _refused("collective,backend,n_bytes\nallreduce,nccl,8\n", tmp_path, "lacks p, time_s")


def _old_alltoall(p: int = 2) -> str:
    """A pre-2022 alltoall_perf table as Open MPI --tag-output prints it: a blank redop, an error column,
    and an in-place error of 1 on every row (older nccl-tests had no valid in-place all-to-all check)."""
    head = [
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 "
        "validation: 1",
        "#",
        "# Using devices",
        *(f"#   Rank {r:2d} Pid {1320 + r:6d} on node{r:02d} device  0 [0x00] Tesla V100-SXM2-16GB"
          for r in range(p)),
        "#",
        "#                                                     out-of-place                       in-place",
        "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    ]
    rows = []
    for k in range(10, 21):
        n = 2**k
        t = 20 + n / 1e4
        algbw = n / 1e3 / t
        block = f"{t:7.2f}  {algbw:6.2f}  {algbw * (p - 1) / p:6.2f}"
        rows.append(f"{n:12d}  {n // 4:12d}   float           {block}  0e+00  {block}  1e+00")
    tail = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.234 ", "#"]
    return "\n".join(f"[1,0]<stdout>:{s}" for s in head + rows + tail)


def test_old_alltoall_with_a_blank_redop_and_failed_in_place_rows():
    m = parse_log(_old_alltoall(), collective="alltoall")
    assert (m.collective, m.p) == ("alltoall", 2)
    assert [r.n_bytes for r in m.select()] == [2**k for k in range(10, 21)]
    assert m.select(in_place=True) == ()
    assert len(m.warnings) == 1
    assert m.warnings[0].startswith("every in-place row failed validation (lines 10–20) and is dropped")
    assert "in-place all-to-all" in m.warnings[0]


def test_a_partly_failed_placement_keeps_one_warning_per_row(tmp_path):
    lines = _old_alltoall().splitlines()
    assert lines[9].split()[1] == "1024"
    lines[9] = lines[9].replace("1e+00", "0e+00")  # the first in-place row passes
    m = parse_log("\n".join(lines), collective="alltoall")
    assert len(m.select(in_place=True)) == 1
    assert sum("row refused" in w for w in m.warnings) == 8 and any("2 more" in w for w in m.warnings)


def test_all_wrong_rows_raise_wrong_results_with_each_row(tmp_path):
    from costmodel.errors import WrongResults

    err = _refused(_with_wrong(H200, "3", "7"), tmp_path, "every row failed validation")
    assert isinstance(err, WrongResults)
    assert len(err.refusals) == 2 * sum(1 for s in _lines(H200) if s.split() and s.split()[0].isdigit())
    assert all("nccl-tests found wrong results" in r for r in err.refusals)


# --------------------------------------------------------------------------- nccl-tests lines without '#'


@pytest.mark.parametrize("log", sorted(NCCL.glob("*.txt")), ids=lambda p: p.name)
def test_an_nccl_tests_table_whose_header_lost_its_hash_reads_the_same(log, tmp_path):
    """A post that drops the '#' of the column header and summary lines (the units line too) reads as
    the log; the rank lines keep theirs, as posts do."""
    lines = []
    for s in _lines(log):
        bare = s.lstrip("#").lstrip()
        tokens = bare.split()
        if tokens[:2] == ["size", "count"] or tokens[:1] == ["(B)"] or bare.startswith(("Out of bounds",
                                                                                         "Avg bus bandwidth")):
            s = " " + bare  # noqa: PLW2901
        lines.append(s)
    target = tmp_path / log.name
    target.write_text("\n".join(lines), encoding="utf-8")
    assert _key(read_log(target)) == _key(read_log(log))


# --------------------------------------------------------------------------- nccl-tests before June 2020

EXCERPTS = LOGS.parent / "excerpts"
OLD_ALLGATHER = EXCERPTS / "allgather_v100x12_dgx2_oldformat_wrong_jgwohlbier.txt"


def test_an_old_allgather_log_prints_busbw_as_algbw_and_is_read_so():
    """Before nccl-tests' ec1b5e2 (2020-06-19) all_gather and reduce_scatter printed algbw = busbw =
    S·(p − 1)/p / t: busbw/algbw is 1 whatever p, so it must not count thousands of ranks; the 12 '# Rank'
    lines stand, as algbw against size/time (11/12 of it) says too."""
    m = read_log(OLD_ALLGATHER)
    assert (m.collective, m.p, m.p_bounds, m.p_bounds_by) == ("allgather", 12, (12, 12), "algbw against size/time")
    assert any("as nccl-tests printed both for all_gather and reduce_scatter before June 2020" in w
               for w in m.warnings)
    assert not any("differs" in w or "allows" in w for w in m.warnings), m.warnings
    first = m.select()[0]
    assert (first.n_bytes, first.time_s, first.algbw_bytes_per_s) == (48, Fraction("57.46") / 10**6, None)
    assert m.select()[-1].busbw_bytes_per_s == Fraction("72.41") * 10**9  # busbw meant then what it does now
    assert read_log(OLD_ALLGATHER, p=12).p == 12
    with pytest.raises(ParseError, match="p=8 was requested but the log lists 12 ranks"):
        read_log(OLD_ALLGATHER, p=8)
    # without its '# Rank' and '# nThread' lines the ranks follow from algbw against size/time
    text = "\n".join(s for s in _lines(OLD_ALLGATHER) if "Rank" not in s and "nThread" not in s)
    bare = parse_log(text)
    assert bare.p == 12 and any("algbw against size/time allows p = 12: p = 12 taken" in w for w in bare.warnings)
    with pytest.raises(ParseError, match="p=11 was requested but the log's algbw against size/time allows p = 12"):
        parse_log(text, p=11)


def test_an_allgather_log_of_today_whose_busbw_rounds_to_its_algbw_is_not_an_old_one():
    """On many ranks (p − 1)/p rounds to 1 at two decimals: algbw is size/time there, and the log is read
    in today's convention, its ranks bounded by busbw/algbw as ever."""
    header = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
              "   busbw #wrong")
    row = "   1073741824     262144     float    none      -1    10000   107.37   107.37      0    10000   107.37   107.37      0"
    m = parse_log(f"# Collective test starting: all_gather_perf\n{header}\n{row}\n")
    assert m.p_bounds_by == "busbw/algbw" and m.p_bounds is not None and m.p_bounds[0] > 1000
    assert m.rows[0].algbw_bytes_per_s == Fraction("107.37") * 10**9


# --------------------------------------------------------------------------- runs that failed

FAILED_5090 = EXCERPTS / "allreduce_rtx5090x2_failed_debuginfo_nccltests287.txt"
CRASHED_ROW = EXCERPTS / "alltoall_h800x16_2node_ima_nccltests355.txt"


def test_a_failed_run_is_blamed_on_nccl_tests_own_failure_line(tmp_path):
    """NCCL's harmless 'Could not find a path for pattern 4' warnings precede the failure by 40 lines: the
    failure is nccl-tests' 'Test NCCL failure' line, NCCL's last warning before it only context."""
    err = _refused(FAILED_5090.read_text(encoding="utf-8"), tmp_path, "the table has no rows: the run failed")
    assert err.line == 73
    assert ("the run failed (Test NCCL failure common.cu:392 'unhandled cuda error (run with NCCL_DEBUG=INFO for "
            "details) / '; before it, line 68: NCCL WARN Cuda failure 1 'invalid argument')") in str(err)
    assert "pattern 4" not in str(err)


def test_a_row_cut_by_a_crash_says_the_run_failed(tmp_path):
    """nccl-tests#355: the crash message ends the first row's line ('-1 node0: Test CUDA failure ...'):
    the run failed, said with its line, not a row of too many fields."""
    err = _refused(CRASHED_ROW.read_text(encoding="utf-8"), tmp_path, "the table has no rows: the run failed")
    assert err.line == 28 and "(Test CUDA failure common.cu:389 'an illegal memory access was encountered')" in str(err)
    whole = _lines(H200)  # the rows before a crash are read, and the crash said
    last = max(i for i, s in enumerate(whole) if s.split()[:1] and s.split()[0].isdigit())
    size = whole[last].split()[0]
    crashed = [*whole[:last], f"  {size}  {whole[last].split()[1]}  float  sum  -1 node1: Test CUDA failure "
               "common.cu:389 'an illegal memory access was encountered'", " .. node1 pid 7: Test failure common.cu:519"]
    m = parse_log("\n".join(crashed))
    assert [r.n_bytes for r in m.rows] == [r.n_bytes for r in read_log(H200).rows if r.n_bytes < int(size)]
    assert any(w.startswith(f"line {last + 1}: the run failed in the row of {size} B (Test CUDA failure "
                            "common.cu:389") and w.endswith("the rows before it are read") for w in m.warnings)


# --------------------------------------------------------------------------- logs quoted in Markdown

MD_QUOTED = EXCERPTS / "allreduce_rtx5090x4_1node_mdquoted_nccltests287.txt"


@pytest.mark.parametrize("name", ["allreduce_a100x8_1node_metagcm_mdquoted.txt",
                                  "allreduce_a100x8_1node_metagcm_mdquoted2.txt"])
def test_a_log_quoted_in_markdown_reads_as_the_log(name):
    """A comment quoting a log ('> ', a reply's '>> ') keeps every line of it behind the marks."""
    quoted = read_log(EXCERPTS / name)
    plain = parse_log("\n".join(re.sub(r"^>+ ?", "", s) for s in _lines(EXCERPTS / name)))
    assert _key(quoted) == _key(plain) and quoted.p == 8 and len(quoted.rows) == 12
    assert quoted.warnings[0] == "a log quoted in Markdown ('>' quotes on lines 2–26): read without the quoting"


def test_a_quoted_log_in_a_code_fence_reads_its_table():
    """nccl-tests#287: a comment quoting the log inside a ``` fence, both behind '> '."""
    m = read_log(MD_QUOTED)
    assert (m.collective, m.p, len(m.select())) == ("allreduce", 4, 25)
    assert m.select()[0].n_bytes == 8 and m.select()[0].time_s == Fraction("15.60") / 10**6
    assert "a log quoted in Markdown ('>' quotes on lines 2–45 and code fences on lines 4–45)" in m.warnings[0]
    fenced = parse_log("```text\n" + "\n".join(_lines(H200)[1:]) + "\n```\n")
    assert _key(fenced)[:3] == _key(read_log(H200))[:3] and "code fences on lines 1–" in fenced.warnings[0]


# --------------------------------------------------------------------------- MPICH's tags inside rows

MPICH_ROWS = EXCERPTS / "allreduce_h100_mpich_prepend_midline_withheader_derived_nccl1453.txt"
MPICH_CUT = EXCERPTS / "allreduce_h100_mpich_prepend_midline_truncated_nccl1453.txt"


def test_mpich_rank_tags_inside_a_row_are_stripped():
    """NVIDIA/nccl#1453: MPICH's -prepend-rank tags each write it forwards, and nccl-tests writes a row in
    three, so '[0]' stands inside every row ('-1[0]    1626.5', '0[0]    2302.3')."""
    m = read_log(MPICH_ROWS)
    untagged = parse_log("\n".join(s.replace("[0]", "") for s in _lines(MPICH_ROWS)))
    assert _key(m) == _key(untagged) and (m.collective, m.p, len(m.select())) == ("allreduce", 24, 10)
    assert m.select()[0].time_s == Fraction("1626.5") / 10**6 and m.select(in_place=True)[0].time_s == \
        Fraction("2302.3") / 10**6
    cut = read_log(MPICH_CUT)  # the post as it was: no header, its first row's head and last row's tail lost
    assert [(r.n_bytes, r.time_s) for r in cut.rows] == [(r.n_bytes, r.time_s) for r in m.rows]


def test_only_rows_lose_a_tag_of_the_prefix_rank():
    """NCCL's own lines keep their brackets (rank[device] in 'Channel 00/0 : 0[0] -> 1[1]'), and a row
    loses only its own rank's tag."""
    lines = measurements.split_lines("[0] host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
                                     "[1]        8   2  float  sum  -1[1]   9.1   0.00   0.00   0[1]   9.2\n")
    assert lines == ["host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
                     "       8   2  float  sum  -1   9.1   0.00   0.00   0   9.2"]


# --------------------------------------------------------------------------- runs side by side

SEPARATE = LOGS.parent / "excerpts" / "check" / "allreduce_a100x4_separate-runs_nccltests182.txt"
_RANK = "#  Rank {r:2d} Group  0 Pid {pid:6d} on {host:>10} device  {d} [0x07] NVIDIA H800"


def _ranks(host: str, pid: int, count: int) -> list[str]:
    return [_RANK.format(r=r, pid=pid, host=host, d=r) for r in range(count)]


def test_runs_side_by_side_are_refused_as_such():
    """NVIDIA/nccl-tests#182: each host ran the test alone (two headers, rank 0 on both hosts); the reader
    says so, where, and what to do, not that a size does not increase."""
    from costmodel.errors import SeparateRuns

    with pytest.raises(SeparateRuns) as raised:
        read_log(SEPARATE)
    err = raised.value
    assert (err.runs, err.line, err.evidence) == (2, 17, "rank 0 at line 15 on testgpu2 and at line 17 on "
                                                         "testgpu1")
    assert "make MPI=1" in str(err) and "NVIDIA/nccl-tests#182" in str(err) and "\n" not in str(err)


def test_eight_gpus_a_process_on_two_hosts_side_by_side():
    """NVIDIA/nccl-tests#213's layout: -g 8 on two hosts, the headers first, then each host's eight ranks
    from 0, then the tables; the second table is not the error, the separate runs are."""
    from costmodel.errors import SeparateRuns

    header = ("# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) warmup iters: 5 "
              "iters: 20 agg iters: 1 validation: 1 graph: 0")
    table = ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
             "algbw   busbw #wrong",
             "  1073741824     268435456     float     sum      -1   5000.0  214.75  375.81      0   5000.0  "
             "214.75  375.81      0"]
    text = "\n".join([header, "#", "# Using devices", header, "#", "# Using devices",
                      *_ranks("hw14", 798, 8), *_ranks("hw15", 911, 8), *table, *table])
    with pytest.raises(SeparateRuns) as raised:
        parse_log(text, collective="allreduce")
    assert raised.value.runs == 2 and "on hw14" in raised.value.evidence and "on hw15" in raised.value.evidence


def test_two_headers_before_any_rank_line_are_separate_runs():
    from costmodel.errors import SeparateRuns

    header = "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 validation: 1"
    row = "           8             2     float     sum      -1    12.34    0.00    0.00      0    12.30    0.00"\
          "    0.00      0"
    head = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong")
    with pytest.raises(SeparateRuns, match=r"header at lines 1 and 2"):
        parse_log("\n".join([header, header, head, row]), collective="allreduce", p=2)


def test_a_rerun_after_a_run_cut_short_is_read_not_called_separate():
    """A run that stopped after listing its ranks, then a whole run on the same hosts: one listing after
    the other, rank 0 on one host, so the second run is read (nothing side by side)."""
    header = ("# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 "
              "agg iters: 1 validation: 1 graph: 0")
    head = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong")
    rows = ["     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43"
            "   52.43      0",
            "     2097152        524288     float     sum      -1    30.00   69.91   69.91      0    30.00   69.91"
            "   69.91      0"]
    text = "\n".join([header, *_ranks("node1", 100, 2), header, *_ranks("node1", 200, 2), head, *rows])
    m = parse_log(text, collective="allreduce")
    assert m.p == 2 and len(m.rows) == 4


def test_two_whole_runs_one_after_the_other_are_still_two_tables():
    text = (NCCL / "allreduce_a100x8_1node_nvswitch_superbench.txt").read_text(encoding="utf-8")
    with pytest.raises(ParseError, match="a second nccl-tests table starts here") as raised:
        parse_log(text + "\n" + text)
    assert type(raised.value) is ParseError
