"""The Intel MPI Benchmarks reader: t_avg (PingPong's t) at one process count, sizes as IMB means them."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration.logs import detect_format, parse_log, read_log
from costmodel.errors import ParseError

DATA = Path(__file__).resolve().parents[2] / "data" / "logs" / "imb"


def _block(name: str, procs: int, rows: str, header: str = "t_min[usec]  t_max[usec]  t_avg[usec]") -> str:
    return (f"#----------------------------------------------------------------\n# Benchmarking {name}\n"
            f"# #processes = {procs}\n#----------------------------------------------------------------\n"
            f"       #bytes #repetitions  {header}\n{rows}\n\n")


def test_a_published_allreduce_log_reads_its_averages_at_its_process_count():
    m = read_log(DATA / "allreduce_144p_4node_oci_intelmpi.txt")
    assert (m.tool, m.collective, m.p, m.backend, m.command) == ("imb", "allreduce", 144, "mpi", "IMB-MPI1 Allreduce")
    assert len(m.rows) == 26 and m.rows[0].n_bytes == 8 and m.rows[0].time_s == Fraction(389, 10**8)
    assert m.rows[-1].n_bytes == 2**28 and m.rows[-1].time_s == Fraction(19683187, 10**8)
    assert m.source is not None and m.source.startswith("# source: oracle-japan/ocitutorials")


def test_pingpong_reads_its_one_way_time():
    m = read_log(DATA / "pingpong_2node_oci_intelmpi.txt")
    assert (m.collective, m.p) == ("pt2pt", 2)
    assert m.rows[0].n_bytes == 8 and m.rows[0].time_s == Fraction(172, 10**8)


def test_the_largest_process_count_unless_p_chooses():
    text = (_block("Allreduce", 2, "            8         1000   1.00   1.20   1.10")
            + _block("Allreduce", 4, "            8         1000   2.00   2.40   2.20"))
    assert detect_format(text) == "imb"
    assert parse_log(text).p == 4 and parse_log(text).rows[0].time_s == Fraction(22, 10**7)
    assert parse_log(text, p=2).rows[0].time_s == Fraction(11, 10**7)
    with pytest.raises(ParseError, match=r"no allreduce block at p=8; the file has #processes = 2, 4"):
        parse_log(text, p=8)


def test_a_per_rank_size_becomes_the_full_vector():
    m = parse_log(_block("Allgather", 8, "           16         1000   3.00   3.50   3.20"))
    assert (m.collective, m.p, m.rows[0].n_bytes) == ("allgather", 8, 128)


def test_several_benchmarks_need_a_choice():
    text = (_block("Allreduce", 4, "            8         1000   2.00   2.40   2.20")
            + _block("Bcast", 4, "            8         1000   1.00   1.40   1.20"))
    with pytest.raises(ParseError, match="the file runs allreduce, broadcast; give collective= to choose one"):
        parse_log(text)
    assert parse_log(text, collective="bcast").rows[0].time_s == Fraction(12, 10**7)


@pytest.mark.parametrize(("text", "message"), [
    (_block("Barrier", 4, "            0         1000   2.00   2.40   2.20"), "no '# Benchmarking' block of a benchmark"),
    ("# Benchmarking Allreduce\n       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n",
     "gives no '# #processes = N' line"),
    (_block("Allreduce", 4, "            8         1000   2.00   2.40"), "a row of 4 columns under a header of 5"),
    (_block("Allreduce", 4, "            8         1000   2.00   2.40   nan"), "t_avg[usec]"),
    (_block("Allreduce", 4, "            8         1000   2.00   2.40   -1"), "not positive"),
    (_block("Allreduce", 4, "           16         1000   2.00   2.40   2.2\n            8   1000   1   1   1"),
     "does not increase"),
    (_block("Allreduce", 4, "            8         1000   2.00   2.40   2.20", header="t[usec]   Mbytes/sec"),
     "no t_avg[usec] column"),
])
def test_malformed_logs_are_refused_with_the_line(text, message):
    with pytest.raises(ParseError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_log(text)
