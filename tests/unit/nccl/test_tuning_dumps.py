"""The tuning model against NCCL's own printed TUNING tables.

Two sources have no saved graphs, so their graphs are derived (or, where stated, inferred from one
cell) and every other cell is predicted:

* NCCL 2.27.5's tables of H100 NVSwitch nodes, 2 to 32 nodes of 1 to 8 GPUs, transcribed by a third
  party (tests/data/nccl-debug/h100-nvswitch-nccl2.27.5-tuning.toml): the graphs follow from
  src/graph/search.cc (:func:`tests.unit.nccl.tuning_dumps.h100_graphs`). NCCL's tuning.cc did not
  change between v2.27.5-1 and v2.30.7-1 for Ring and Tree on Hopper (only formatting, the tuner
  constants moved into a struct, PAT's base latency moved into the table with the same value, and
  the LL128 mixed-compcap rule), so every Ring and Tree cell is checked against the 2.30 model. It
  did change NVLS and NVLSTree (nvlsEfficiency, perChMaxNVLSTreeBws, the 2-node NVLSTree doubling,
  nRanks/nsteps instead of 5/6, NET NVLSTree latency 14 → 20.9), so those cells are checked against
  2.27.5's formula written out here, and 2.30's differing value is pinned.
* A 2 × 8 H100 excerpt of NCCL 2.20.5 (NVIDIA/nccl#1519): every latency is 2.21's; the Ring LL
  bandwidths are 2.20's.
"""

from __future__ import annotations

import importlib.util
import math
from fractions import Fraction

import pytest

from tests.unit.nccl.tuning_dumps import (
    DUMPS,
    H100_TABLES,
    h100_cells,
    h100_graphs,
    h100_preset,
    printed_cells,
)


def test_the_dumps_hold_the_printed_cells():
    """Pinned: the first dump's complete rows (Broadcast .. ReduceScatter) and the cut AllReduce row."""
    table = DUMPS[0]["table"]
    assert table[("Broadcast", "Ring", "Simple")] == "22.4/  20.0"
    assert table[("AllGather", "CollNetDirect", "Simple")] == "44.0/   0.0"
    assert table[("AllReduce", "Ring", "LL")] == "43.4/   2.7"
    assert ("AllReduce", "Ring", "LL128") not in table
    assert len(table) == 4 * 9 + 4 and DUMPS[0]["truncated"]
    assert DUMPS[1]["table"][("AllGather", "Ring", "Simple")] == "105.6/   3.2"


@pytest.mark.skipif(importlib.util.find_spec("costmodel.nccl.tuning") is None,
                    reason="tuning model not merged yet")
@pytest.mark.parametrize("dump", DUMPS, ids=[d["log"] for d in DUMPS])
def test_the_model_prints_what_nccl_printed(dump):
    if dump["preset"] is None:
        pytest.skip(f"{dump['log']}: {dump['missing']}")
    from costmodel.nccl import CONSTANTS, System, tune

    system = System.from_preset(dump["preset"], ranks=dump["ranks"], nodes=dump["nodes"])
    cells = printed_cells(tune(system, CONSTANTS[dump["version"]]))
    for key, printed in dump["table"].items():
        assert cells[key] == printed.replace(" ", ""), key


# -- NCCL 2.27.5, H100 NVSwitch, 2..32 nodes x 1..8 GPUs ------------------------------------------------------


def _model(nodes, ppn, version="2.30"):
    from costmodel.nccl import CONSTANTS, System, tune

    return printed_cells(tune(System.from_preset(h100_preset(ppn), ranks=nodes * ppn, nodes=nodes),
                              CONSTANTS[version]))


def test_the_transcription_holds_190_cells():
    assert {k: len(v) for k, v in H100_TABLES.items()} == {
        "allgather_ring": 20, "allreduce_ring": 20, "allreduce_tree": 20, "allreduce_nvlstree": 10}
    # the AllGather table stands for ReduceScatter too: 190 printed cells, 250 once both are checked
    assert len(h100_cells()) == 250


def test_every_ring_and_tree_cell_is_the_2_30_model():
    """180 of the 190 transcribed cells (240 of 250 with ReduceScatter): all Ring and Tree cells, exactly."""
    matched = {k: v for k, v in h100_cells().items() if k[3] != "NVLSTree"}
    models = {(n, p): _model(n, p) for n, p, *_ in matched}
    assert {k: v for k, v in matched.items() if models[k[:2]][k[2:]] != v} == {}
    assert len(matched) == 240


def test_the_graphs_are_the_search_rules():
    """Spot checks of h100_graphs against the values the cells force (each fixed by one cell)."""
    # 2 x 8 Ring LL128 156.6 = 8 x 36.7 x 16/30: 8 channels (the per-channel LL128 cap binds);
    # Ring Simple 204.8 = 8 x 48 x 16/30: 48 GB/s per channel
    assert (h100_graphs(8)["ring"]["channels"], h100_graphs(8)["ring"]["bw_intra"]) == (8, 48.0)
    # 2 x 1 Tree LL128 31.2 = 2 x 36.7 x 0.85 / 2: two channels (one NIC's 48 GB/s duplicated) and pattern 3
    assert (h100_graphs(1)["tree"]["channels"], h100_graphs(1)["tree"]["pattern"]) == (2, 3)
    # 4 x 1 Tree Simple 18.8 = 2 x 24 x 0.92 x 0.85 / 2: bwInter 24 (at 2 nodes bwIntra 48 hits the 41.4 cap)
    assert (h100_graphs(1)["tree"]["bw_inter"], h100_graphs(1)["tree"]["bw_intra"]) == (24.0, 48.0)
    # NVLS: 8 GPUs 8 x 40/48, 4 GPUs 4 x 48/48, none with 1 or 2 GPUs (nvls.cc: gpuCount <= 2)
    assert [(g["channels"], g["bw_intra"], g["bw_inter"]) for g in (h100_graphs(8)["nvls"], h100_graphs(4)["nvls"])
            ] == [(8, 40.0, 48.0), (4, 48.0, 48.0)]
    assert "nvls" not in h100_graphs(2) and "2x2" not in H100_TABLES["allreduce_nvlstree"]


def _nvlstree_2_27(nodes, ppn):
    """AllReduce NVLSTree Simple as v2.27.5-1's ncclTopoTuneModel computes it (src/graph/tuning.cc).

    bw = min(bwIntra, nNodes <= 2 ? bwInter : bwInter/2); busBw = nChannels x bw, x 5/6 to algorithm
    bandwidth; latency = hwLat[NVLINK][NVLS_TREE][SIMPLE] 25 + 2 log2(nNodes) x hwLat[NET][NVLS_TREE][SIMPLE] 14.
    """
    g = h100_graphs(ppn)["nvls"]
    bw = min(Fraction(g["bw_intra"]), Fraction(g["bw_inter"]) / (1 if nodes <= 2 else 2))
    latency = 25 + 2 * int(math.log2(nodes)) * 14
    return f"{float(latency):.1f}/{float(g['channels'] * bw * Fraction(5, 6)):.1f}"


def test_every_nvlstree_cell_is_2_27s_formula_and_differs_in_2_30():
    """The 10 NVLSTree cells: 2.27.5's formula on the derived NVLS graph gives each one; 2.30 changed it."""
    cells = {k: v for k, v in h100_cells().items() if k[3] == "NVLSTree"}
    assert {k: v for k, v in cells.items() if _nvlstree_2_27(*k[:2]) != v} == {}
    assert all(_model(n, p)[(f, a, pr)] != v for (n, p, f, a, pr), v in cells.items())
    # 2.30 at 2 x 8: 25 + 2 x 20.9 = 66.8 us; min(40 x 0.85 x 7/8 x 2, 48 x 2, 57.7) = 57.7 per channel,
    # x 8 channels x 16/30 = 246.2 GB/s (printed 53.0/266.7 by 2.27.5)
    assert _model(2, 8)[("AllReduce", "NVLSTree", "Simple")] == "66.8/246.2"
    # 4 x 4: 25 + 4 x 20.9 = 108.6; min(48 x 0.85 x 3/4 x 2 = 61.2, 48, 45.5) x 4 x 16/30 = 97.1
    assert _model(4, 4)[("AllReduce", "NVLSTree", "Simple")] == "108.6/97.1"


def test_the_dgx_h100_preset_gives_the_8_gpu_rows():
    """The shipped preset's multi-node graphs reproduce every Ring/Tree cell at 8 GPUs per node."""
    from costmodel.nccl import CONSTANTS, System, load_preset, tune

    # load_preset adds an empty "assumptions" list that System.from_preset does not accept (yet): drop it
    preset = {k: v for k, v in load_preset("dgx-h100").items() if k != "assumptions"}
    for nodes in (2, 4, 8, 16, 32):
        system = System.from_preset(preset, ranks=8 * nodes, nodes=nodes)
        cells = printed_cells(tune(system, CONSTANTS["2.30"]))
        expected = {k[2:]: v for k, v in h100_cells().items() if k[:2] == (nodes, 8) and k[3] != "NVLSTree"}
        assert len(expected) == 12 and {k: cells[k] for k in expected} == expected, nodes


# -- NCCL 2.20.5, 2 x 8 H100 (GCP a3-megagpu-8g, one usable NIC, no GPU Direct RDMA) ---------------------------

A3MEGA_RING_LL = {("Broadcast", "Ring", "LL"), ("Reduce", "Ring", "LL"), ("AllGather", "Ring", "LL"),
                  ("ReduceScatter", "Ring", "LL"), ("AllReduce", "Ring", "LL")}


def _a3mega(version):
    """The 2.21 (or 2.30) model of the a3-mega dump.

    What fixes each unknown: Ring Simple Broadcast 20.0 = nChannels x bwIntra (only the product is
    visible: 2 x 10 here); Ring LL128 0.0 with latency 18.0: LL128 off by the path rule, NIC path PHB
    (the thread's FastSocket plugin prints "GPU Direct RDMA Disabled"); AllReduce Ring LL latency
    43.4 = 6.6 + 26 x max(0.6, 1.0) + 4 x 2.7: Intel host (AMD's 2.0 would give 69.4); Broadcast LL
    latency 9.3 = 6.6 + 2.7: sameChannels; Tree LL128 48.5 = 14 + 2 x (7 x 1.25 + 8.5): NVLink inside
    the tree. Tree bandwidths 0.0 beside computed latencies: tuning.cc zeroes a computed bandwidth only
    in its enable pass, and for all three protocols only through NCCL_ALGO; the excerpt lacks the ENV
    lines, so ``algo="^Tree"`` is an assumption (a tree graph under 0.13 GB/s would print the same).
    """
    from costmodel.nccl import CONSTANTS, Graph, System, tune

    def graph(**k):
        return Graph(type_intra="NVL", type_inter="PHB", **k)

    system = System(arch=90, ranks=16, nodes=2, cpu_arch="x86", cpu_vendor="intel", nvswitch=True, nvls=True,
                    graphs={"ring": graph(channels=2, bw_intra=10, bw_inter=10, pattern=4, same_channels=True),
                            "tree": graph(channels=2, bw_intra=10, bw_inter=10, pattern=3, same_channels=True),
                            "nvls": graph(channels=7, bw_intra=3, bw_inter=3, pattern=5)})
    return printed_cells(tune(system, CONSTANTS[version], algo="^Tree"))


def test_the_a3mega_dump_is_2_21_but_for_2_20s_ring_ll():
    """35 of its 40 cells are 2.21's exactly (all 40 latencies); the 5 Ring LL bandwidths are 2.20's.

    2.20.5's tuning.cc: ``busBw = min(llMaxBw, busBw * (nNodes > 1 || AllReduce || Reduce ? 1/4 : 1/3))``;
    2.21 made it ``busBw * .5``; the 39 GB/s cap binds in neither, so 2.20's is exactly half of 2.21's.
    """
    dump = {k: v.replace(" ", "") for k, v in DUMPS[0]["table"].items()}
    model = _a3mega("2.21")
    differs = {k for k, v in dump.items() if model[k] != v}
    assert differs == A3MEGA_RING_LL
    # 2.20: min(39, 20 / 4) = 5 GB/s of bus bandwidth, x nRanks/nsteps (16/16, 16/15, 16/30)
    ratio = {"Broadcast": Fraction(1), "Reduce": Fraction(1), "AllGather": Fraction(16, 15),
             "ReduceScatter": Fraction(16, 15), "AllReduce": Fraction(16, 30)}
    for key in differs:
        latency = model[key].split("/")[0]
        assert f"{latency}/{float(min(39, Fraction(20, 4)) * ratio[key[0]]):.1f}" == dump[key], key
    # pinned: AllReduce Ring LL, 2.21 min(39, 20 x 0.5) x 16/30 = 5.3, 2.20 min(39, 20 / 4) x 16/30 = 2.7
    assert (model[("AllReduce", "Ring", "LL")], dump[("AllReduce", "Ring", "LL")]) == ("43.4/5.3", "43.4/2.7")


def test_the_a3mega_dump_is_not_2_30():
    """2.30 changed three of its latencies: Tree Simple (hwLat 28 → 4.0 and 14, base 0 → 8.4) and the
    Ring AllReduce's inter-node steps (2 x nNodes → 2 x (nNodes - 1))."""
    dump = {k: v.replace(" ", "") for k, v in DUMPS[0]["table"].items()}
    model = _a3mega("2.30")
    assert {k for k, v in dump.items() if model[k] != v} == A3MEGA_RING_LL | {("AllReduce", "Tree", "Simple")}
    assert model[("AllReduce", "Tree", "Simple")] == "92.4/0.0" and model[("AllReduce", "Ring", "LL")] == "40.0/5.3"
