"""The log readers: every real log in tests/data/logs parses, every layout is read, bad files fail cleanly."""

from __future__ import annotations

import contextlib
import itertools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.calibration import (
    FORMATS,
    TOOLS,
    Measurements,
    Row,
    detect_format,
    parse_csv,
    parse_log,
    parse_nccl_tests,
    parse_nccl_tests_json,
    parse_osu,
    read_log,
    write_csv,
)
from costmodel.calibration.logs.measurements import NUMBER, decimal
from costmodel.errors import CostmodelError, InputError, ParseError

LOGS = Path(__file__).resolve().parents[2] / "data" / "logs"
NCCL = LOGS / "nccl-tests"
OSU = LOGS / "osu"
ALL_LOGS = sorted(LOGS.glob("*/*.txt"))

# file -> (tool, collective, p, printed lines of rows, first size, first out-of-place time in us)
EXPECTED = {
    "allgather_a100x8_1node_nvswitch_superbench.txt": ("nccl-tests", "allgather", 8, 29, 32, "35.03"),
    "allgather_b200x2_2node_rdma_gke.txt": ("nccl-tests", "allgather", 2, 26, 32, "14.18"),
    "allreduce_a100x16_2node_4xhdr_abci.txt": ("nccl-tests", "allreduce", 16, 24, 4, "33.50"),
    "allreduce_a100x16_2node_4xhdr_sharp_abci.txt": ("nccl-tests", "allreduce", 16, 29, 8, "22.54"),
    "allreduce_a100x8_1node_nvswitch_superbench.txt": ("nccl-tests", "allreduce", 8, 32, 4, "34.73"),
    "allreduce_h100x16_2node_8xndr_nccltests309.txt": ("nccl-tests", "allreduce", 16, 32, 8, "68.52"),
    "allreduce_gb200x72_nvl72_elided_coreweave.txt": ("nccl-tests", "allreduce", 72, 5, 536870912, "1806.7"),
    "allreduce_h100x16_2node_8xndr_ring_nccltests309.txt": ("nccl-tests", "allreduce", 16, 14, 1048576, "156.9"),
    "allreduce_h100x8_1node_nvswitch_dgxc.txt": ("nccl-tests", "allreduce", 8, 32, 8, "13.67"),
    "allreduce_a100x16_2node_rdma_oci.txt": ("nccl-tests", "allreduce", 16, 31, 8, "36.47"),
    # held out: the table alone (no '# Rank' lines), p from busbw/algbw
    "allreduce_a100x16_2node_efa_p4d_awsofinccl65.txt": ("nccl-tests", "allreduce", 16, 6, 8388608, "1321.5"),
    # held out: one H100 node, nccl-tests#290's first log
    "allreduce_h100x8_1node_nvswitch_nccltests290.txt": ("nccl-tests", "allreduce", 8, 6, 134217728, "613.3"),
    # held out: the rows alone, as nccl-tests#294 posted them: p from busbw/algbw, read in nccl-tests' columns
    "allreduce_h100x16_2node_nvlstree_nccltests294.txt": ("nccl-tests", "allreduce", 16, 5, 134217728, "738.7"),
    # held out: 100 of 1024 '# Rank' lines kept, p from mpirun -np 1024 (which busbw/algbw allows)
    "allreduce_h100x1024_roce_nccltests322.txt": ("nccl-tests", "allreduce", 1024, 5, 1073741824, "19355"),
    # held out: a cluster health check's samples of passing runs (one node, and a pair of nodes)
    "allreduce_a100x8_1node_nvswitch_gcm.txt": ("nccl-tests", "allreduce", 8, 6, 33554432, "344.8"),
    "allreduce_a100x16_2node_gcm.txt": ("nccl-tests", "allreduce", 16, 6, 33554432, "650.2"),
    "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt": ("nccl-tests", "allreduce", 16, 31, 8, "135.8"),
    "allreduce_h200x2_2node_1nic_rdma_gke.txt": ("nccl-tests", "allreduce", 2, 24, 1024, "35.59"),
    "allreduce_v100x8_nvlink_oldformat.txt": ("nccl-tests", "allreduce", 8, 25, 8, "48.46"),
    "reducescatter_a100x8_1node_nvswitch_superbench.txt": ("nccl-tests", "reduce-scatter", 8, 29, 32, "35.06"),
    "osu_allreduce_archer2_2node_256rank_slingshot.txt": ("osu", "allreduce", None, 19, 4, "7.93"),
    "osu_allreduce_kind_2pod_2rank_tcp.txt": ("osu", "allreduce", None, 19, 4, "17.67"),
    "allreduce_144p_4node_oci_intelmpi.txt": ("imb", "allreduce", 144, 26, 8, "3.89"),
    "pingpong_2node_oci_intelmpi.txt": ("imb", "pt2pt", 2, 26, 8, "1.72"),
}


def _us(text: str) -> Fraction:
    return Fraction(text) / 10**6


def test_every_real_log_is_here_verbatim():
    assert sorted(p.name for p in ALL_LOGS) == sorted(EXPECTED)
    assert (LOGS / "README.md").is_file()
    for path in ALL_LOGS:
        assert path.read_text(encoding="utf-8").startswith("# source: ")


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.name)
def test_real_logs_parse(path):
    tool, collective, p, lines, first, time = EXPECTED[path.name]
    m = read_log(path)
    assert m.tool in TOOLS
    assert (m.tool, m.collective, m.p) == (tool, collective, p)
    assert m.path == str(path)
    assert m.source is not None and m.source.startswith("# source: ")
    out = m.select(in_place=False)
    assert len(out) == lines
    assert (out[0].n_bytes, out[0].time_s) == (first, _us(time))
    assert all(a.n_bytes < b.n_bytes for a, b in itertools.pairwise(out))
    if tool == "nccl-tests":
        assert len(m.select(in_place=True)) == lines
        assert all(r.line is not None for r in m.rows)
        # the printed algbw and busbw agree with size/time and the bus factor on every line
        assert not [w for w in m.warnings if "differs" in w], m.warnings
    else:
        assert m.select(in_place=True) == ()
        assert m.size_per_rank is False  # allreduce: OSU's Size is the whole vector
    assert isinstance(m.to_dict()["rows"], list)
    json.dumps(m.to_dict())


def test_nccl_rows_keep_both_placements_and_bandwidths():
    m = read_log(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    last_out, last_in = m.select()[-1], m.select(in_place=True)[-1]
    assert last_out.n_bytes == last_in.n_bytes == 8589934592
    assert last_out.time_s == _us("67689") and last_in.time_s == _us("67811")
    assert last_out.algbw_bytes_per_s == Fraction("126.90") * 10**9
    assert last_out.busbw_bytes_per_s == Fraction("237.94") * 10**9
    assert (last_out.in_place, last_in.in_place) == (False, True)
    assert last_out.line == last_in.line == 55
    assert m.command == "all_reduce_perf" and m.backend == "nccl" and m.dtype == "float"


def test_zero_byte_rows_are_skipped_with_a_warning():
    m = read_log(NCCL / "allgather_b200x2_2node_rdma_gke.txt")
    assert min(r.n_bytes for r in m.rows) == 32
    assert any("0-byte rows skipped (lines 12, 13)" in w for w in m.warnings)


def test_old_format_reads_the_error_column():
    m = read_log(NCCL / "allreduce_v100x8_nvlink_oldformat.txt")
    assert m.p == 8 and m.collective == "allreduce"
    assert m.select()[-1].time_s == _us("1818.8")
    assert m.warnings == ()


def test_collective_given_must_match_the_log():
    path = NCCL / "allreduce_a100x16_2node_rdma_oci.txt"
    assert read_log(path, collective="all_reduce").collective == "allreduce"
    with pytest.raises(ParseError, match="'allgather' was requested but the log measures allreduce") as info:
        read_log(path, collective="allgather")
    assert info.value.path == str(path) and info.value.line == 1
    assert str(info.value).startswith(f"{path}:1: ")
    osu = OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt"
    with pytest.raises(ParseError, match="'broadcast' was requested") as info:
        read_log(osu, collective="bcast")
    assert info.value.line == 2


def test_p_given_must_match_the_rank_list():
    path = NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt"
    assert read_log(path, p=2).p == 2
    with pytest.raises(ParseError, match="p=4 was requested but the log lists 2 ranks"):
        read_log(path, p=4)


# --------------------------------------------------------------------------- malformed files


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _bad(text: str, tmp_path: Path, **kwargs) -> ParseError:
    target = tmp_path / "bad.txt"
    target.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError) as info:
        read_log(target, **kwargs)
    assert info.value.path == str(target)
    assert info.value.line is not None
    assert str(info.value).startswith(f"{target}:{info.value.line}: ")
    assert "\n" not in str(info.value)
    return info.value


def test_a_row_cut_short_is_refused_unless_it_ends_the_paste(tmp_path):
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    cut = [*lines[:40], lines[40][:70]]  # line 41 cut in the middle of the in-place block, the last
    path = tmp_path / "cut.txt"
    path.write_text("\n".join(cut) + "\n", encoding="utf-8")
    m = read_log(path)
    assert any(w.startswith("line 41: the last row is cut short") for w in m.warnings)
    assert max(r.n_bytes for r in m.rows) < int(lines[40].split()[0])
    err = _bad("\n".join([*cut, *lines[41:43]]), tmp_path)  # rows after it: the file is damaged
    assert err.line == 41 and "truncated" in str(err)


def test_a_run_that_failed_is_said_so(tmp_path):
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    header = next(i for i, line in enumerate(lines) if line.split()[1:3] == ["size", "count"])
    failed = [*lines[:header + 2], "node1: Test CUDA failure common.cu:502 'an illegal memory access was encountered'",
              " .. node1 pid 93200: Test failure common.cu:632"]
    err = _bad("\n".join(failed) + "\n", tmp_path)
    assert "the run failed (Test CUDA failure common.cu:502" in str(err) and err.line == header + 3
    path = tmp_path / "again.txt"  # the run repeated after the failure: its table is read
    path.write_text("\n".join([*failed, *lines]) + "\n", encoding="utf-8")
    m = read_log(path)
    assert len(m.rows) == len(read_log(NCCL / "allreduce_a100x16_2node_rdma_oci.txt").rows)
    assert any("a table without rows, its run failed" in w for w in m.warnings)


def test_header_without_rows_is_refused(tmp_path):
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    assert lines[22].split()[1:3] == ["size", "count"]
    err = _bad("\n".join(lines[:24]) + "\n", tmp_path)
    assert "no rows" in str(err)
    osu = _lines(OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt")
    assert "no rows" in str(_bad("\n".join(osu[:3]) + "\n", tmp_path))


def test_truncated_osu_row_is_refused(tmp_path):
    lines = _lines(OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt")
    err = _bad("\n".join([*lines[:10], "2048"]), tmp_path)
    assert err.line == 11 and "truncated" in str(err)


@pytest.mark.parametrize("value", ["nan", "-nan", "inf", "NaN", "1.2.3", "-5.00"])
def test_nan_inf_junk_and_negative_times_are_refused(tmp_path, value):
    lines = _lines(NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt")
    row = lines[16].split()
    assert row[0] == "65536"
    row[5] = value
    lines[16] = "  ".join(row)
    err = _bad("\n".join(lines), tmp_path)
    assert err.line == 17
    assert "time" in str(err)


def test_nan_in_osu_is_refused(tmp_path):
    lines = _lines(OSU / "osu_allreduce_archer2_2node_256rank_slingshot.txt")
    lines[5] = "16                      nan"
    assert _bad("\n".join(lines), tmp_path).line == 6


def test_empty_and_blank_files_are_refused(tmp_path):
    for text in ("", "\n\n   \n"):
        err = _bad(text, tmp_path)
        assert err.line == 1 and "empty" in str(err)


def test_binary_junk_is_refused(tmp_path):
    target = tmp_path / "junk.bin"
    target.write_bytes(b"# source: x\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    with pytest.raises(ParseError, match="binary") as info:
        read_log(target)
    assert info.value.path == str(target) and info.value.line == 2
    with pytest.raises(ParseError, match="binary"):
        parse_log("\x00\x01\x02 size count\n")


def test_unknown_text_is_refused(tmp_path):
    err = _bad("hello\nworld\n", tmp_path)
    assert err.line == 1 and "not a log costmodel reads (" in str(err)
    assert all(f.title in str(err) for f in FORMATS)


def test_sizes_must_increase(tmp_path):
    lines = _lines(NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt")
    lines[12], lines[13] = lines[13], lines[12]
    err = _bad("\n".join(lines), tmp_path)
    assert err.line == 14 and "does not increase" in str(err)


def test_a_second_table_is_refused(tmp_path):
    lines = _lines(NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt")
    err = _bad("\n".join(lines + lines[7:12]), tmp_path)
    assert "second nccl-tests table" in str(err)


def test_missing_file_is_a_parse_error(tmp_path):
    with pytest.raises(ParseError, match="cannot read the log"):
        read_log(tmp_path / "nope.txt")


# --------------------------------------------------------------------------- refused rows and checks


def test_rows_with_wrong_results_are_refused_with_a_warning(tmp_path):
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    fields = lines[41].split()  # 1048576 B, line 42
    assert fields[0] == "1048576"
    fields[8] = "12"  # out-of-place #wrong
    lines[41] = "  ".join(fields)
    target = tmp_path / "wrong.txt"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    m = read_log(target)
    assert 1048576 not in {r.n_bytes for r in m.select()}
    assert 1048576 in {r.n_bytes for r in m.select(in_place=True)}
    assert any(w.startswith("line 42: out-of-place #wrong = 12") for w in m.warnings)


def test_old_format_error_above_the_threshold_is_refused(tmp_path):
    lines = _lines(NCCL / "allreduce_v100x8_nvlink_oldformat.txt")
    fields = lines[20].split()
    fields[11] = "0.5"  # in-place max error
    lines[20] = "  ".join(fields)
    target = tmp_path / "old.txt"
    target.write_text("\n".join(lines), encoding="utf-8")
    m = read_log(target)
    assert len(m.select(in_place=True)) == 24 and len(m.select()) == 25
    assert any("line 21: in-place max error = 0.5" in w for w in m.warnings)


def test_bandwidth_mismatch_is_a_warning_naming_the_line(tmp_path):
    lines = _lines(NCCL / "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt")
    fields = lines[49].split()
    assert fields[0] == "268435456"
    fields[6] = "120.00"  # algbw, was 113.70
    lines[49] = "  ".join(fields)
    target = tmp_path / "bw.txt"
    target.write_text("\n".join(lines), encoding="utf-8")
    m = read_log(target)
    assert any(w.startswith("line 50: out-of-place algbw 120.00 GB/s differs") for w in m.warnings)
    assert len(m.select()) == 31  # kept: a warning, not an error


def test_wrong_p_shows_as_busbw_mismatch(tmp_path):
    lines = [s for s in _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
             if "Rank" not in s or int(s.split()[2]) < 8]
    target = tmp_path / "eight.txt"
    target.write_text("\n".join(lines), encoding="utf-8")
    m = read_log(target)  # the cut '# Rank' lines say 8; busbw/algbw says 16, and is taken
    assert m.p == 16 and any("busbw/algbw allows p = 16: p = 16 taken" in w for w in m.warnings)
    with pytest.raises(ParseError, match="p=8 was requested but the log's busbw/algbw allows p = 16"):
        read_log(target, p=8)  # a p the printed bandwidths rule out is refused, not priced


def test_collective_is_inferred_from_columns_without_a_program_name():
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")[1:]  # drop the source line
    m = parse_nccl_tests("\n".join(lines))
    assert m.collective == "allreduce" and m.command is None
    assert any("inferred" in w for w in m.warnings)
    gather = _lines(NCCL / "allgather_b200x2_2node_rdma_gke.txt")[1:]
    with pytest.raises(ParseError, match="cannot tell which collective"):
        parse_nccl_tests("\n".join(gather))  # allgather and alltoall print the same columns
    assert parse_nccl_tests("\n".join(gather), collective="allgather").collective == "allgather"
    with pytest.raises(ParseError, match="rule it out"):
        parse_nccl_tests("\n".join(lines), collective="allgather")


# --------------------------------------------------------------------------- 2025+ layout, JSON


def _float_str(value: float, width: int) -> str:
    """nccl-tests' getFloatStr: as many decimals as the column width allows."""
    power = 0
    val = 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


def _nccl_2025(p: int = 4, *, per_iter: bool = False, check: bool = True) -> str:
    alpha, beta = 4e-6, 2e-13  # a very fast link, so that algbw passes 1000 GB/s (adaptive widths)
    head = [
        "# nccl-tests version 2.17.6 nccl-headers=22803 nccl-library=22803",
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 4(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0 unalign: 0",
        "#",
        "# Using devices",
        *(f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on     node01 device {r:2d} [0000:{r:02x}:00] NVIDIA B200"
          for r in range(p)),
        "NCCL version 2.28.3+cuda12.9",
        "#",
    ]
    if per_iter:
        head += [
            "#                                                 out-of-place (+ per-iteration)        "
            "                        in-place (+ per-iteration)",
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    "
            "i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%",
        ]
    else:
        head += [
            "#                                                              out-of-place                       "
            "in-place          ",
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
            "algbw   busbw  #wrong ",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  "
            "(GB/s)  (GB/s)         ",
        ]
    rows = []
    for k in range(3, 35, 2):
        n = 2**k
        t = (2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta) * 1e6
        algbw = n / 1e3 / t
        block = f"  {_float_str(t, 7)}  {_float_str(algbw, 6)}  {_float_str(algbw * 2 * (p - 1) / p, 6)}"
        block += "       0" if check else "     N/A"
        if per_iter:
            block += "  " + "  ".join(_float_str(x, 7) for x in (t * 0.9, t * 1.2, t * 1.1, 3.0))
        rows.append(f"{n:12d}  {n // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}{block}{block}")
    tail = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 812.3 ", "#",
            "# Collective test concluded: all_reduce_perf", ""]
    return "\n".join(head + rows + tail)


def test_2025_layout_with_adaptive_widths():
    text = _nccl_2025()
    algbw = [s.split()[6] for s in text.splitlines() if s.split()[0].isdigit()]
    assert {len(a.partition(".")[2]) for a in algbw} == {1, 2}  # "0.01" ... "3329.6"
    m = parse_log(text)
    assert (m.tool, m.collective, m.p, m.command) == ("nccl-tests", "allreduce", 4, "all_reduce_perf")
    assert len(m.select()) == 16
    assert m.warnings == ()


def test_2025_layout_per_iteration_columns_and_na():
    m = parse_log(_nccl_2025(per_iter=True, check=False))
    assert len(m.select()) == len(m.select(in_place=True)) == 16
    assert any("N/A" in w for w in m.warnings)
    assert not [w for w in m.warnings if "differs" in w]


def _json_doc(p: int = 2) -> dict:
    results = []
    for k in range(10, 30, 2):
        n = 2**k
        t = (p - 1) * 20.0 + (p - 1) / p * n * 1e-5
        body = {"time": round(t, 6), "alg_bw": round(n / 1e3 / t, 6), "bus_bw": round(n / 1e3 / t / 2, 6),
                "nwrong": 0.0}
        results.append({"size": n, "count": n // 8, "type": "float", "redop": "none", "root": "    -1",
                        "out_of_place": body, "in_place": dict(body), "actual_iterations": 20,
                        "experiment_name": None})
    return {
        "version": 2, "start_time": "2025-09-01 10:00:00",
        "args": ["/opt/nccl-tests/build/all_gather_perf", "-b", "1K", "-e", "512M", "-J", "out.json"],
        "env": ["NCCL_DEBUG=WARN"], "nccl_version": 22803,
        "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1024, "maximum_bytes": 536870912,
                   "step_factor": 4, "warmup_iters": 5, "iterations": 20, "aggregated_iterations": 1,
                   "validation": 1, "graph": 0, "blocking_collectives": "false", "per_iter_timing": "false",
                   "parallel_init": "false",
                   "devices": [{"rank": r, "group": 0, "pid": 7, "hostname": f"n{r}", "device": 0,
                                "device_hex": "0000:8f:00", "device_info": "NVIDIA B200"} for r in range(p)]},
        "results": results,
        "out_of_bounds": {"count": 0, "okay": "true"},
        "average_bus_bandwidth": {"bandwidth": 12.5, "okay": "unchecked"},
        "errors": [], "end_time": "2025-09-01 10:00:09",
    }


def test_nccl_tests_json(tmp_path):
    doc = _json_doc()
    target = tmp_path / "out.json"
    target.write_text(json.dumps(doc), encoding="utf-8")  # nccl-tests writes it on one line
    m = read_log(target)
    assert (m.tool, m.collective, m.p, m.command) == ("nccl-tests", "allgather", 2, "all_gather_perf")
    assert len(m.select()) == len(m.select(in_place=True)) == 10
    first = m.select()[0]
    assert first.n_bytes == 1024 and first.line is None
    assert first.time_s == Fraction(str(doc["results"][0]["out_of_place"]["time"])) / 10**6
    assert parse_nccl_tests_json(json.dumps(doc)).rows == m.rows


def test_nccl_tests_json_bad(tmp_path):
    doc = _json_doc()
    doc["results"][3]["out_of_place"]["time"] = "nan"
    with pytest.raises(ParseError, match=r"results\[3\]\.out_of_place: time 'nan' is not a finite number"):
        parse_log(json.dumps(doc))
    doc = _json_doc()
    doc["results"][2]["in_place"]["nwrong"] = 4.0
    m = parse_log(json.dumps(doc))
    assert any(w.startswith("results[2].in_place: nwrong = 4.0") for w in m.warnings)
    assert len(m.select(in_place=True)) == 9
    text = json.dumps(_json_doc(), indent=1)
    target = tmp_path / "cut.json"
    target.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(ParseError, match="invalid JSON") as info:
        read_log(target)
    assert info.value.line is not None and info.value.line > 1
    with pytest.raises(ParseError, match="'allreduce' was requested but the log measures allgather"):
        parse_log(json.dumps(_json_doc()), collective="allreduce")


# --------------------------------------------------------------------------- OSU variants


OSU_FULL = """# OSU MPI Allgather Latency Test v7.4
# Datatype: MPI_CHAR.
# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations
1                       2.16              1.93              2.38        1000
2                       2.18              1.96              2.41        1000
4                       2.20              1.97              2.43        1000
8                       2.25              2.01              2.49        1000
"""

OSU_LATENCY = """# OSU MPI Latency Test v5.8
# Size          Latency (us)
0                       1.61
1                       1.62
2                       1.62
4                       1.63
8                       1.64
16                      1.66
"""

OSU_BW = """# OSU MPI Bandwidth Test v5.8
# Size      Bandwidth (MB/s)
1                       2.45
2                       4.95
1024                 2125.00
1048576             11943.50
4194304             12204.85
"""


def test_osu_full_format_and_per_rank_sizes():
    m = parse_osu(OSU_FULL)
    assert (m.collective, m.p, m.size_per_rank) == ("allgather", None, True)
    assert [r.n_bytes for r in m.rows] == [1, 2, 4, 8]
    assert m.rows[0].time_s == _us("2.16")  # the Avg column
    scaled = m.with_p(16)
    assert [r.n_bytes for r in scaled.rows] == [16, 32, 64, 128]
    assert scaled.size_per_rank is False and scaled.p == 16
    assert [r.n_bytes for r in parse_log(OSU_FULL, p=16).rows] == [16, 32, 64, 128]
    with pytest.raises(InputError):
        m.with_p(1)


def test_osu_latency_is_one_way():
    m = parse_log(OSU_LATENCY)
    assert (m.collective, m.command) == ("pt2pt", "osu_latency")
    assert m.rows[0].n_bytes == 1 and m.rows[0].time_s == _us("1.62")
    assert any("0-byte" in w for w in m.warnings)
    assert any("one-way" in w for w in m.warnings)


def test_osu_bw_is_time_per_message():
    m = parse_log(OSU_BW)
    assert (m.collective, m.command) == ("pt2pt", "osu_bw")
    last = m.rows[-1]
    assert last.algbw_bytes_per_s == Fraction("12204.85") * 10**6
    assert last.time_s == Fraction(4194304) / (Fraction("12204.85") * 10**6)


def test_osu_without_a_title_needs_the_collective():
    body = "\n".join(OSU_FULL.splitlines()[1:])
    assert detect_format(body) == "osu"
    with pytest.raises(ParseError, match="give collective="):
        parse_log(body)
    assert parse_log(body, collective="allreduce").collective == "allreduce"


def test_osu_unsupported_tests_are_named():
    with pytest.raises(ParseError, match="unsupported OSU test"):
        parse_log("# OSU MPI Bi-Directional Bandwidth Test v5.8\n# Size  Bandwidth (MB/s)\n1  2.0\n")
    with pytest.raises(ParseError, match="unsupported OSU test"):
        parse_log("# OSU MPI Non-blocking Allreduce Latency Test v5.8\n# Size  Overall(us)\n4  9.0  1  2  3\n")


# --------------------------------------------------------------------------- costmodel CSV


def test_csv_round_trip(tmp_path):
    m = read_log(NCCL / "allreduce_h200x2_2node_1nic_rdma_gke.txt")
    target = tmp_path / "m.csv"
    text = write_csv(m, target)
    assert text.splitlines()[0].startswith("# source: kubernetes-sigs/dranet")
    assert text.splitlines()[1] == "collective,backend,p,n_bytes,time_s,in_place"
    back = read_log(target)
    assert (back.tool, back.collective, back.p, back.backend) == ("costmodel-csv", "allreduce", 2, "nccl")
    assert [(r.n_bytes, r.time_s, r.in_place) for r in back.rows] == [
        (r.n_bytes, r.time_s, r.in_place) for r in m.rows]
    assert back.source == m.source


def test_csv_groups_repeats_and_errors():
    text = ("collective,backend,p,n_bytes,time_s,in_place,extra\n"
            "allreduce,nccl,8,1024,0.00002,false,x\n"
            "allreduce,nccl,8,1024,0.000021,false,x\n"
            "allreduce,nccl,8,2048,0.00003,,x\n"
            "all_gather,nccl,8,1024,0.00001,false,x\n")
    with pytest.raises(ParseError, match="holds 2 groups"):
        parse_csv(text)
    m = parse_csv(text, collective="allreduce")
    assert [r.n_bytes for r in m.rows] == [1024, 1024, 2048] and m.p == 8
    assert parse_csv(text, collective="allgather").rows[0].line == 5
    with pytest.raises(ParseError, match="no rows for collective=broadcast"):
        parse_csv(text, collective="broadcast")
    with pytest.raises(ParseError, match=r"time_s 'nan'") as info:
        parse_csv(text.replace("0.00003", "nan"), collective="allreduce")
    assert info.value.line == 4
    with pytest.raises(ParseError, match="does not increase"):
        parse_csv(text.replace("2048", "512"), collective="allreduce")
    with pytest.raises(ParseError, match="truncated"):
        parse_csv(text + "allreduce,nccl,8,4096\n", collective="allreduce")


def test_csv_sweeps_restart_the_sizes():
    """calibrate run --repeat: each sweep runs from the smallest size again, in both placements."""
    text = ("collective,backend,p,n_bytes,time_s,in_place,sweep\n"
            "allgather,gloo,2,8,0.00002,false,1\n"
            "allgather,gloo,2,8,0.00001,true,1\n"
            "allgather,gloo,2,16,0.00003,false,1\n"
            "allgather,gloo,2,16,0.00002,true,1\n"
            "allgather,gloo,2,8,0.000021,false,2\n"
            "allgather,gloo,2,8,0.000011,true,2\n"
            "allgather,gloo,2,16,0.000031,false,2\n"
            "allgather,gloo,2,16,0.000021,true,2\n")
    m = parse_csv(text)
    assert [(r.n_bytes, r.in_place, r.line) for r in m.rows] == [
        (8, False, 2), (8, True, 3), (16, False, 4), (16, True, 5),
        (8, False, 6), (8, True, 7), (16, False, 8), (16, True, 9)]
    assert [r.time_s for r in m.select()] == [Fraction(2, 10**5), Fraction(3, 10**5), Fraction(21, 10**6),
                                              Fraction(31, 10**6)]
    # within a sweep the sizes still may not go down
    lines = text.splitlines()
    lines[3], lines[1] = lines[1], lines[3]
    with pytest.raises(ParseError, match="does not increase") as info:
        parse_csv("\n".join(lines) + "\n")
    assert info.value.line == 4
    # without the column, a restart is a second run in one file, as before
    with pytest.raises(ParseError, match="does not increase"):
        parse_csv(text.replace(",sweep", "").replace(",1\n", "\n").replace(",2\n", "\n"))
    with pytest.raises(ParseError, match=r"sweep '0' is not an integer >= 1") as info:
        parse_csv(text.replace(",2\n", ",0\n", 1))
    assert info.value.line == 6


def test_write_csv_refuses_unscaled_sizes():
    m = parse_osu(OSU_FULL)
    with pytest.raises(InputError, match="with_p"):
        write_csv(m)


def test_files_are_read_and_text_is_parsed():
    path = OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt"
    by_path = read_log(path)
    by_str = read_log(str(path))
    by_text = parse_log(path.read_text(encoding="utf-8"), path="kind.txt")
    unnamed = parse_log(path.read_text(encoding="utf-8"))
    assert by_path.rows == by_str.rows == by_text.rows == unnamed.rows
    assert by_path.path == str(path) and by_text.path == "kind.txt" and unnamed.path == "<text>"
    with pytest.raises(ParseError, match="cannot read the log"):  # a str given to read_log is a file name
        read_log("# OSU MPI Allreduce Latency Test v5.8\n# Size  Avg Latency(us)\n4  17.67\n")
    with pytest.raises(InputError, match="bytes is not a log's text"):
        parse_log(path.read_bytes())  # type: ignore[arg-type]


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = OSU / "osu_allreduce_kind_2pod_2rank_tcp.txt"
    marked = tmp_path / "bom.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert read_log(marked).rows == read_log(path).rows
    csv = "\ufeffcollective,backend,p,n_bytes,time_s\nallreduce,nccl,8,1024,0.00001\n"
    assert parse_log(csv).tool == "costmodel-csv"


def test_measurements_dataclasses():
    row = Row(n_bytes=8, time_s=Fraction(1, 10**5))
    m = Measurements(tool="osu", collective="allreduce", p=None, rows=(row,))
    assert m.to_dict()["rows"][0] == {"n_bytes": 8, "time_s": 1e-05, "algbw_bytes_per_s": None,
                                      "busbw_bytes_per_s": None, "in_place": None, "line": None}
    with pytest.raises(InputError, match="differs from the p=4"):
        Measurements(tool="csv", collective="allreduce", p=4, rows=(row,)).with_p(8)


# --------------------------------------------------------------------------- robustness


@given(st.text(max_size=400))
def test_arbitrary_text_never_crashes(text):
    with contextlib.suppress(CostmodelError):
        parse_log(text + "\n")


_REAL_LINES = [line for path in ALL_LOGS for line in _lines(path)]


@given(st.lists(st.sampled_from(_REAL_LINES), max_size=40), st.integers(0, 39), st.text(max_size=20))
def test_spliced_real_lines_never_crash(lines, where, junk):
    if lines:
        k = where % len(lines)
        lines[k] = lines[k][: len(junk)] + junk
    with contextlib.suppress(CostmodelError):
        parse_log("\n".join(lines) + "\n")


@given(st.from_regex(NUMBER, fullmatch=True), st.sampled_from([-6, 0, 9]))
def test_a_decimal_token_is_read_exactly(token, scale):
    exponent = token.lower().partition("e")[2]
    if exponent and abs(int(exponent)) > 300:
        with pytest.raises(ParseError, match="out of range"):
            decimal(token, "value", path="<text>", line=1)
        return
    # Fraction parses the text itself: an independent reading of the same token
    assert decimal(token, "value", path="<text>", line=1, scale=scale) == Fraction(token) * Fraction(10) ** scale


def test_a_huge_power_of_ten_is_refused_at_once(tmp_path):
    log = tmp_path / "huge.txt"
    log.write_text("# OSU MPI Allreduce Latency Test v5.8\n# Size       Avg Latency(us)\n4 1e999999999\n")
    with pytest.raises(ParseError, match=r"huge.txt:3: latency '1e999999999' is out of range"):
        read_log(log, p=2)


def test_the_tail_of_a_row_that_other_output_interrupted_is_named(tmp_path):
    lines = _lines(NCCL / "allreduce_a100x16_2node_rdma_oci.txt")
    header = next(i for i, line in enumerate(lines) if line.split()[1:3] == ["size", "count"])
    first = lines[header + 2]
    tail = " ".join(first.split()[5:])  # the row's head went into an NCCL INFO line
    path = tmp_path / "tail.txt"
    path.write_text("\n".join([*lines[:header + 2], "host:1:2 [0] NCCL INFO Connected all rings " +
                               " ".join(first.split()[:5]), tail, *lines[header + 3:]]) + "\n", encoding="utf-8")
    m = read_log(path)
    assert any(w.startswith(f"line {header + 4}: numbers without a size") for w in m.warnings)


def test_a_reformatted_table_is_refused_at_its_header():
    """kubemark-ai's DGX Spark page keeps four of nccl-tests' columns (size, time, algbw, busbw): no reader
    takes it, and the error names the header line it did not understand instead of 'no table header'."""
    path = "tests/data/excerpts/allreduce_gb10x1_reformatted_kubemarkai.txt"
    with pytest.raises(ParseError) as info:
        read_log(path)
    assert info.value.line == 6
    assert "'# size time algbw busbw' is a table header of none of them (a table reformatted, or another " \
           "tool's); give the benchmark's own output" in str(info.value)
