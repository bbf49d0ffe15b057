"""Constant overrides read from TOML, as a tuner plugin may make them."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest

from costmodel.errors import ParseError
from costmodel.nccl import CONSTANTS, System, predict, tune
from costmodel.nccl.overrides import load_overrides, parse_overrides

V30, V21 = CONSTANTS["2.30"], CONSTANTS["2.21"]

TOML = """
[base_latencies]
ring = [6.0, 14.0, 8.4]
[hw_latencies.nvlink]
ring = [0.5, 1.9, 3.4]
[per_ch_max_tree_bws]
hopper = [30.0, 41.4, 36.0]
"""


def test_overrides_change_the_table_exactly():
    c = parse_overrides(TOML, V30)
    assert c.base_latency("Ring", "LL") == 6 and c.hw_latency(0, "Ring", "LL") == Fraction(1, 2)
    assert c.per_ch_max_tree_bws[2][0] == 30 and V30.per_ch_max_tree_bws[2][0] == Fraction("38.7")
    s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    # 6.0 + 14 × 0.5
    assert tune(s, c).entry("AllReduce", "Ring", "LL").latency_us == 13


def test_overrides_from_a_file_and_predict(tmp_path):
    path = tmp_path / "o.toml"
    path.write_text(TOML, encoding="utf-8")
    assert load_overrides(path, V30).base_latency("Ring", "LL") == 6
    s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    assert predict("allreduce", 1024, s, overrides=str(path)).entries[3].latency_s == Fraction(13, 10**6)


@pytest.mark.parametrize(("text", "constants", "message"), [
    ("[base_latency]\nring = [1, 2, 3]", V30, "unknown table 'base_latency' in the overrides; valid tables: "),
    ("[base_latencies]\nrign = [1, 2, 3]", V30, "unknown row 'rign' in [base_latencies]; valid rows: tree, ring"),
    ("[base_latencies]\nring = [1, 2]", V30, "base_latencies.ring is not a list of 3 numbers"),
    ("[base_latencies]\nring = [1, 'a', 3]", V30, "'a' is not a number"),
    ("[base_latencies]\nring = [1, -2, 3]", V30, "-2 is negative"),
    ("[base_latencies]\nring = [1, inf, 3]", V30, "inf is not finite"),
    ("[hw_latencies.infiniband]\nring = [1, 2, 3]", V30, "unknown table 'infiniband' in [hw_latencies]"),
    ("[per_ch_max_nvls_tree_bws]\nhopper = [1, 2, 3]", V21, "NCCL 2.21 has no per_ch_max_nvls_tree_bws"),
    ("[base_latencies]\npat = [1, 2, 3]", V21, "unknown row 'pat'"),
    ("[base_latencies\n", V30, "invalid TOML"),
])
def test_bad_overrides_are_one_line(text, constants, message):
    with pytest.raises(ParseError) as info:
        parse_overrides(text, constants, path="o.toml")
    assert message in str(info.value) and str(info.value).startswith("o.toml") and "\n" not in str(info.value)


def test_missing_file():
    with pytest.raises(ParseError, match="cannot read the overrides: No such file"):
        load_overrides("/nonexistent/o.toml", V30)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need a POSIX system")
def test_a_pipe_or_an_endless_device_is_refused_at_once(tmp_path):
    fifo = tmp_path / "o.toml"
    os.mkfifo(fifo)
    with pytest.raises(ParseError, match="a FIFO"):
        load_overrides(fifo, V30)
    with pytest.raises(ParseError, match="a character device"):
        load_overrides("/dev/zero", V30)
