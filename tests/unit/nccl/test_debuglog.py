"""Reading NCCL_DEBUG=INFO logs: the saved public excerpts (values pinned), noisy and hostile input."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.errors import ParseError
from costmodel.nccl.debuglog import parse_debug_log, read_debug_log
from costmodel.nccl.presets import validate_preset
from costmodel.tomlfile import loads

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl-debug"
LOGS = sorted(p.name for p in DATA.glob("*.log"))
RING = ("h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 20.000000/20.000000, "
        "type NVL/PIX, sameChannels 1")


def test_every_saved_log_starts_with_its_source():
    assert len(LOGS) >= 4
    for name in LOGS:
        assert (DATA / name).read_text().startswith("# source: https://github.com/"), name


def test_h100_2x8_graphs_comm_and_table():
    log = read_debug_log(DATA / "h100-gcp-a3mega-2x8-nccl2.2x-tuning.log")
    assert (log.n_ranks, log.n_nodes, log.local_ranks) == (16, 2, 8)
    nvls = log.graphs["nvls"]
    assert (nvls.pattern, nvls.channels, nvls.bw_intra, nvls.type_intra, nvls.type_inter, nvls.uses_net) == (
        5, 7, Fraction(3), "NVL", "PHB", True)
    table = log.tuning
    assert table is not None and table.truncated and table.inferred_algorithms
    assert table.entries[("Broadcast", "Ring", "LL")] == (Fraction("9.3"), Fraction(5))
    assert table.entries[("AllReduce", "Tree", "Simple")] == (Fraction(448), Fraction(0))
    assert table.max_threads[("CollNetDirect", "LL")] == 0
    assert table.max_threads[("Ring", "Simple")] == 512
    assert log.multi_node() is True
    with pytest.raises(ParseError, match="no ring graph"):
        log.to_preset()


def test_nccl_2_6_interleaved_ranks_old_table():
    log = read_debug_log(DATA / "nvlink-2gpu-nccl2.6.4-tuning.log")
    assert log.rank == "wangying-system:5637 [1]"  # rank [0]'s graph lines are not in the excerpt
    assert [(k, g.pattern) for k, g in log.graphs.items()] == [("ring", 4), ("tree", 2), ("collnet_chain", 3)]
    assert log.graphs["ring"].bw_inter == 21 and log.graphs["ring"].same_channels
    assert log.thread_thresholds == (8, 8, 64, 16, 8, 64, 8)
    assert log.channels is None  # rank [0]'s "Channel 00/01" line belongs to the other rank
    assert log.tuning is not None and log.tuning.max_threads[("CollNet", "LL128")] == 640
    assert not log.tuning.entries and log.tuning.truncated
    preset = log.to_preset("two")
    assert preset["single"].keys() == {"ring", "tree"} and not preset["collnet"]
    assert preset["gpus_per_node"] == 2


def test_old_table_rows():
    log = read_debug_log(DATA / "autodl-container-nccl2.1x-tuning.log")
    assert log.tuning is not None
    assert log.tuning.entries[("AllGather", "Ring", "Simple")] == (Fraction("105.6"), Fraction("3.2"))
    assert ("AllGather", "CollNet", "Simple") not in log.tuning.entries  # cut in the stored copy
    assert len(log.tuning.entries) == 9 + 9 + 8


def test_pcie_box_interleaved_ranks():
    log = read_debug_log(DATA / "rtx4090-8gpu-pcie-interleaved.log")
    assert log.rank == "node031:1936469 [0]"
    ring, tree = log.graphs["ring"], log.graphs["tree"]
    assert (ring.channels, ring.bw_intra, ring.type_intra, ring.type_inter) == (1, 5, "SYS", "PIX")
    assert tree.pattern == 1
    preset = log.to_preset("box")
    assert preset["single"]["ring"]["bw_intra"] == 5.0 and preset["gpus_per_node"] == 8
    assert not preset["nvswitch"] and "multi" not in preset


def test_two_nodes_from_net_endpoints_and_version_line():
    log = read_debug_log(DATA / "rtx2080ti-2x4-socket-nccl2.7.8.log")
    assert (log.version, log.cuda) == ("2.7.8", "11.1")
    ring = log.graphs["ring"]
    assert (ring.channels, ring.bw_intra, ring.type_intra, ring.uses_net) == (4, Fraction("1.2"), "SYS", True)
    preset = log.to_preset()
    assert preset["multi"]["ring"]["channels"] == 4 and preset["gpus_per_node"] == 4
    assert any("a graph's channels start at a NIC" in a for a in preset["assumptions"])


def test_mpich_prefix_channels_nvls():
    log = read_debug_log(DATA / "h100-3x8-ib-mpich-prefix.log")
    assert (log.n_ranks, log.n_nodes, log.local_ranks, log.channels) == (24, 3, 8, 16)
    assert log.nvls_support is True and log.graphs == {}


def test_topology_cpu_and_nvswitch():
    log = read_debug_log(DATA / "h20-2node-pxn-disabled.log")
    assert (log.cpu_arch, log.cpu_vendor, log.nvswitch) == ("x86", "intel", True)
    ring = log.graphs["ring"]
    assert (ring.cross_nic, ring.channels, ring.bw_inter, ring.uses_net) == (1, 4, 24, True)
    preset = log.to_preset()
    assert preset["nvswitch"] and preset["multi"]["ring"]["type_intra"] == "NVL"


def test_thresholds_and_channel_counts():
    log = read_debug_log(DATA / "h800-8gpu-nccl2.18-threads.log")
    assert log.thread_thresholds == (8, 8, 64, 64, 8, 64, 512, 512)
    header = read_debug_log(DATA / "h800-ndr-table-header.log")
    assert header.tuning is not None and not header.tuning.inferred_algorithms
    assert header.tuning.max_threads[("CollNetDirect", "Simple")] == 640 and header.tuning.truncated


@pytest.mark.parametrize("name", LOGS)
def test_each_log_with_a_ring_makes_a_preset_that_round_trips(name):
    log = read_debug_log(DATA / name)
    if "ring" not in log.graphs:
        pytest.skip("no ring graph in this excerpt")
    preset = log.to_preset(name="x")
    again = validate_preset(loads(log.to_toml(name="x"), path=name), path=name)
    assert again == validate_preset(preset, path=name)


# ------------------------------------------------------------------ noise

def test_launcher_prefixes_crlf_and_other_programs():
    text = "\r\n".join([
        "[1,0]<stdout>:" + RING,
        "0: h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
        "Epoch 1: loss 0.3  [some other program]",
        "[0] h:1:2 [0] NCCL INFO Channel 00/24 :    0   1",
        "NCCL version 2.21.5+cuda12.4",
    ])
    log = parse_debug_log(text)
    assert (log.version, log.cuda, log.n_nodes, log.channels) == ("2.21.5", "12.4", 2, 24)
    assert log.graphs["ring"].channels == 2


def test_two_communicators_the_largest_is_read():
    small = ["h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1 - Init START",
             RING.replace("nChannels 2", "nChannels 3"),
             "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0"]
    big = ["h:1:2 [0] NCCL INFO comm 0x2 rank 0 nranks 8 cudaDev 0 busId 1 - Init START", RING,
           "h:1:2 [0] NCCL INFO comm 0x2 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0"]
    log = parse_debug_log("\n".join(small + big + small))
    assert log.graphs["ring"].channels == 2 and log.n_ranks == 8
    assert any("3 communicators" in n and "largest (8 ranks)" in n for n in log.notes)


def test_a_cut_table_keeps_the_complete_cells():
    rows = (DATA / "h100-gcp-a3mega-2x8-nccl2.2x-tuning.log").read_text().splitlines()
    table = [r for r in rows if "|" in r]
    cut = "\n".join(table[:2]) + "\n" + table[2][:110]  # the Broadcast row cut inside its 4th cell
    log = parse_debug_log(cut)
    assert log.tuning is not None and log.tuning.truncated
    assert set(log.tuning.entries) == {("Broadcast", "Tree", a) for a in ("LL", "LL128", "Simple")}


# ------------------------------------------------------------------ hostile

@pytest.mark.parametrize("text", ["", "   \n\n", "hello\nworld\n", "NCCL version 2.21.5+cuda12.4\n"])
def test_no_nccl_line_is_one_line_error(text):
    with pytest.raises(ParseError) as e:
        parse_debug_log(text, path="x.log")
    assert "\n" not in str(e.value) and str(e.value).startswith("x.log:")


def test_binary_file(tmp_path):
    f = tmp_path / "bin.log"
    f.write_bytes(b"\x00\x01\x02NCCL INFO\xff")
    with pytest.raises(ParseError, match=r"bin.log:1: cannot read the NCCL log: byte 0xff"):
        read_debug_log(f)
    f.write_bytes(b"h:1:2 [0] NCCL INFO \x00")
    with pytest.raises(ParseError, match="control character"):
        read_debug_log(f)


def test_a_folder_and_a_missing_file(tmp_path):
    with pytest.raises(ParseError, match="a folder, not a regular file"):
        read_debug_log(tmp_path)
    with pytest.raises(ParseError, match="No such file"):
        read_debug_log(tmp_path / "nope.log")


def test_a_hundred_thousand_lines_are_read():
    # its time is benchmarks/bench_debuglog.py's
    other = "h:1:2 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC"
    text = "\n".join([RING] + [other] * 50_000 + ["garbage " * 5] * 50_000)
    log = parse_debug_log(text)
    assert log.graphs["ring"].channels == 2


def test_a_table_without_graphs_makes_no_preset():
    log = read_debug_log(DATA / "autodl-container-nccl2.1x-tuning.log")
    with pytest.raises(ParseError, match=r"autodl-container-nccl2.1x-tuning.log: no ring graph"):
        log.to_toml()


def _mnnvl_log(hosts, per_host):
    ranks = hosts * per_host
    lines = []
    for r in range(ranks):
        host = f"gb200-{r // per_host:02d}"
        lines.append(f"{host}:{100 + r}:{200 + r} [{r % per_host}] NCCL INFO comm 0x7f00 rank {r} nRanks {ranks} "
                     f"nNodes 1 localRanks {ranks} localRank {r} MNNVL 1")
    lines.append("gb200-00:100:200 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 45.000000/45.000000, "
                 "type NVL/PIX, sameChannels 1")
    lines.append("gb200-00:100:200 [0] NCCL INFO Pattern 1, crossNic 0, nChannels 16, bw 45.000000/45.000000, "
                 "type NVL/PIX, sameChannels 1")
    return "\n".join(lines) + "\n"


def test_a_node_over_hosts_with_mnnvl_keeps_its_host_count():
    """NCCL prints MNNVL 1 where one NVLink domain spans hosts (one node to it): the preset says how many."""
    log = parse_debug_log(_mnnvl_log(2, 4))
    assert (log.mnnvl, log.hosts, log.n_nodes, log.local_ranks) == (True, 2, 1, 8)
    preset = log.to_preset("rack")
    assert (preset["gpus_per_node"], preset["hosts_per_node"]) == (8, 2)
    one = parse_debug_log(_mnnvl_log(2, 4).replace("gb200-01", "gb200-00"))  # the lines name one host
    preset = one.to_preset("rack")
    assert "hosts_per_node" not in preset and any("MNNVL 1" in a for a in preset["assumptions"])
