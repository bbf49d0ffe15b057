"""NCCL's tuning table: values derived by hand from the constants of tuning.cc (2.21 and 2.30)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from costmodel.nccl import CONSTANTS, Graph, System, tune

V30, V21 = CONSTANTS["2.30"], CONSTANTS["2.21"]


def node8(arch=90, **kw):
    return System.explicit(arch=arch, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40, **kw)


def two_nodes(cpu="intel", arch=90):
    """16 H100s on 2 nodes whose graphs have 16 channels of 40 GB/s inside a node and 12.5 across, as
    given: the tuning's arithmetic on a graph (System.explicit makes graphs of links, which caps a
    ring's 40 at the network's 12.5 as NCCL's search would)."""
    return as_given(System.explicit(arch=arch, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5,
                                    cpu=cpu), bw_intra=40)


def as_given(system, *, bw_intra):
    """*system* with every graph's bandwidth inside a node *bw_intra*, as a graph states it."""
    from dataclasses import replace

    return replace(system, graphs={k: replace(g, bw_intra=Fraction(bw_intra)) for k, g in system.graphs.items()})


@pytest.mark.parametrize("constants", [V30, V21])
def test_one_node_ring_ll_latency_is_base_plus_14_nvlink_steps(constants):
    # base 6.6 + nsteps 2(8-1) = 14 × hw NVLink Ring/LL 0.6 = 15.0 µs (the example, both versions)
    e = tune(node8(), constants).entry("AllReduce", "Ring", "LL")
    assert e.latency_us == Fraction("6.6") + 14 * Fraction("0.6") == 15
    # busBw = min(llMaxBw[Hopper][N1] = 141, 16 × 40 × 0.5 = 320) = 141; × nRanks/nsteps = 8/14
    assert e.bandwidth == Fraction(141) * Fraction(8, 14)


def test_two_nodes_intel_ring_simple_latency_2_30():
    # 8.4 + (30 − 2) × max(3.4, 3 × 1.0) + 2 × 14 = 131.6 µs (the number is right for 2.30)
    assert tune(two_nodes(), V30).entry("AllReduce", "Ring", "Simple").latency_us == Fraction("131.6")


def test_two_nodes_intel_ring_simple_latency_2_21_counts_2_nodes_inter_steps():
    # 2.21: nInterSteps = 2 × nNodes = 4: 8.4 + 26 × 3.4 + 4 × 14 = 152.8 µs (not 131.6)
    assert tune(two_nodes(), V21).entry("AllReduce", "Ring", "Simple").latency_us == Fraction("152.8")


def test_amd_net_overhead_dominates_ring_simple_steps():
    # AMD overhead 2.0 × 3 = 6 > 3.4: 8.4 + 28 × 6 + 2 × 14 = 204.4
    assert tune(two_nodes("amd"), V30).entry("AllReduce", "Ring", "Simple").latency_us == Fraction("204.4")


def test_tree_simple_latency_differs_between_versions():
    # 2.30: base 8.4 + 2 × (7 × 4.0 + 1 × 14) = 92.4; 2.21: base 0 + 2 × (7 × 28 + 1 × 28) = 448
    assert tune(two_nodes(), V30).entry("AllReduce", "Tree", "Simple").latency_us == Fraction("92.4")
    assert tune(two_nodes(), V21).entry("AllReduce", "Tree", "Simple").latency_us == 448


def test_tree_bandwidth_caps_and_ratio():
    # Tree Simple, 2 nodes, Hopper: min(16 × 40 × .92, 16 × 41.4) = 588.8, × 1/2 = 294.4
    assert tune(two_nodes(), V30).entry("AllReduce", "Tree", "Simple").bandwidth == Fraction("294.4")
    # Tree LL: min(588.8 / 3.8, llMaxBw[Intel][N2] = 39.0) = 39, × 1/2
    assert tune(two_nodes(), V30).entry("AllReduce", "Tree", "LL").bandwidth == Fraction("19.5")


def test_pat_only_with_one_gpu_per_node():
    e = tune(two_nodes(), V30).entry("AllGather", "PAT", "Simple")
    assert e.bandwidth == 0 and "one GPU per node" in e.reason
    s = System.explicit(arch=90, ranks=4, nodes=4, channels=8, bw_intra=20, bw_inter=20)
    e = tune(s, V30).entry("AllGather", "PAT", "Simple")
    # ppn = 1: NET latency of Tree/Simple 14; 8.0 + log2(4) × 14 / 3.5 + 4 × 2.8 = 27.2
    assert e.latency_us == Fraction("27.2")
    # nNodes > 2: bwInter; 8 × 20 × .75, no bus-to-algorithm conversion for non-ring all-gather
    assert e.bandwidth == 120
    assert "PAT" not in V21.algorithms


@pytest.mark.parametrize(("function", "algorithm", "words"), [
    ("Broadcast", "Tree", "runs only Ring"),
    ("Reduce", "NVLS", "runs only Ring"),
    ("AllGather", "Tree", "runs only"),
    ("AllReduce", "PAT", "only AllGather and ReduceScatter"),
    ("AllReduce", "CollNetDirect", "CollNet is off"),
    ("AllReduce", "NVLSTree", "more than one node"),
])
def test_disabled_entries_say_why(function, algorithm, words):
    e = tune(node8(), V30).entry(function, algorithm, "Simple")
    assert e.bandwidth == 0 and words in e.reason


def test_nvls_needs_two_channels_in_2_30_only():
    graphs = {"ring": Graph(channels=16, bw_intra=40, bw_inter=40),
              "tree": Graph(channels=16, bw_intra=40, bw_inter=40),
              "nvls": Graph(channels=1, bw_intra=40, bw_inter=40, pattern=5)}
    s = System(arch=90, ranks=8, nodes=1, graphs=graphs, nvswitch=True, nvls=True)
    e = tune(s, V30).entry("AllReduce", "NVLS", "Simple")
    assert e.bandwidth == 0 and "at least 2 channels" in e.reason
    # 2.21: min(40, 40) × 1 channel × 5/6
    assert tune(s, V21).entry("AllReduce", "NVLS", "Simple").bandwidth == Fraction(100, 3)


def test_nvls_bandwidth_2_30():
    s = node8(nvls=True)
    # 16 channels: min(intra 40 × .85 × 15/16 × 2 (all-reduce) = 63.75, inter 40) per channel, × 16, × 8/14
    assert tune(s, V30).entry("AllReduce", "NVLS", "Simple").bandwidth == 40 * 16 * Fraction(8, 14)
    # all-gather: 40 × .85 × 15/16 × (8 − 1)/8 = 27.890625 < 40, × 16; no conversion for non-ring all-gather
    assert tune(s, V30).entry("AllGather", "NVLS", "Simple").bandwidth == Fraction("27.890625") * 16
    # hw NVLink NVLS/Simple 25 µs, nothing else on one node
    assert tune(s, V30).entry("AllReduce", "NVLS", "Simple").latency_us == 25


def test_ll128_path_rules():
    pci = System.explicit(arch=80, ranks=4, nodes=1, channels=2, bw_intra=12, bw_inter=12, intra="pci")
    e = tune(pci, V30).entry("AllReduce", "Ring", "LL128")
    assert e.bandwidth == 0 and "beyond NVB" in e.reason
    e = tune(node8(arch=100), V21).entry("AllReduce", "Ring", "LL128")
    assert e.bandwidth == 0 and "2.21 enables it only on sm70, sm80 and sm90" in e.reason
    assert tune(node8(arch=100), V30).entry("AllReduce", "Ring", "LL128").enabled


def test_ring_ll128_at_one_gpu_per_node_2_21():
    s = System.explicit(arch=90, ranks=2, nodes=2, channels=4, bw_intra=20, bw_inter=20)
    # 2.21: ppn < 2 → × 0.7: min(4 × 20 × 0.7, 4 × 36.7) = 56, × 2/2; 2.30: × 0.92
    assert tune(s, V21).entry("AllReduce", "Ring", "LL128").bandwidth == 56
    assert tune(s, V30).entry("AllReduce", "Ring", "LL128").bandwidth == Fraction("73.6")


def test_filters_disable_with_reason_and_force_ll128():
    t = tune(node8(), V30, algo="allreduce:tree")
    assert not t.entry("AllReduce", "Ring", "LL").enabled
    assert "NCCL_ALGO=allreduce:tree" in t.entry("AllReduce", "Ring", "LL").reason
    assert t.entry("Broadcast", "Ring", "LL").enabled
    pci = System.explicit(arch=80, ranks=4, nodes=1, channels=2, bw_intra=12, bw_inter=12, intra="pci")
    assert tune(pci, V30, proto="^LL").entry("AllReduce", "Ring", "LL128").enabled  # forced by the list


def test_2_21_falls_back_to_ring_when_everything_is_disabled():
    s = System.explicit(arch=80, ranks=16, nodes=2, channels=4, bw_intra=20, bw_inter=20, collnet=True)
    # CollNetChain runs only Simple, so NCCL_PROTO=LL leaves no entry: 2.21 restores the ring's bandwidths
    t = tune(s, V21, algo="CollNetChain", proto="LL")
    assert t.entry("AllReduce", "Ring", "Simple").enabled and t.entry("AllReduce", "Ring", "LL").enabled
    assert not tune(s, V30, algo="CollNetChain", proto="LL").entry("AllReduce", "Ring", "Simple").enabled
    # without CollNet, 2.21 ignores an NCCL_ALGO that leaves only CollNet: Ring and Tree come back
    t = tune(two_nodes(), V21, algo="CollNetDirect")
    assert t.entry("AllReduce", "Tree", "Simple").enabled


def test_threads_and_channels():
    t = tune(node8(), V30)
    ring, tree = V30.algorithm_index("Ring"), V30.algorithm_index("Tree")
    assert t.max_threads[ring] == (512, 640, 512) and t.max_threads[tree] == (512, 640, 512)
    assert t.thread_thresholds[ring] == (64, 8, 64)  # LL 8 × 8 ranks
    assert t.channels == 32  # 2 × 16
    pci = System.explicit(arch=80, ranks=4, nodes=1, channels=1, bw_intra=12, bw_inter=12, intra="pci")
    assert tune(pci, V30).max_threads[ring][2] == 256  # 12 × 1 ≤ PCI_BW
    hopper4 = as_given(System.explicit(arch=90, ranks=16, nodes=2, channels=4, bw_intra=80, bw_inter=12.5),
                       bw_intra=80)
    assert tune(hopper4, V30).channels == 16  # 2 × 4, doubled again on Hopper across nodes


ROW = re.compile(r"^ {0,8}\w+ \|(?:[ \d.]{8}/[ \d.]{6} \|)+$")


@pytest.mark.parametrize(("constants", "blocks"), [(V30, 3), (V21, 2)])
def test_format_is_nccls_layout(constants, blocks):
    text = tune(node8(), constants).format()
    lines = text.splitlines()
    assert sum(line.startswith("  Algorithm   |") for line in lines) == blocks
    assert len(lines) == blocks * 8
    rows = [line for line in lines if not line.startswith(("  Algorithm", "  Protocol", " Max NThreads"))]
    assert all(ROW.match(line) for line in rows), rows
    allreduce = next(line for line in lines if line.startswith("    AllReduce"))
    assert "    15.0/  80.6 |" in allreduce  # Ring LL: 15 µs, 564/7 GB/s
