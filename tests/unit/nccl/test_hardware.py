"""One description of the hardware for the command line's options and a manifest's [[log]] tables."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.nccl import System, load_preset
from costmodel.nccl.hardware import Hardware
from tests.clirun import run, run_json

EXPLICIT = {"arch": "sm90", "channels": 16, "bw_intra": "20", "bw_inter": 12.5, "net_latency": 2, "nvls": True}


def test_a_table_and_the_options_build_the_same_system():
    from_table = Hardware.of({"path": "x.txt", **EXPLICIT}).system(ranks=16, nodes=2)
    from_options = Hardware(arch="90", channels=16, bw_intra=Fraction(20), bw_inter=Fraction(25, 2),
                            net_latency=Fraction(2), nvls=True).system(ranks=16, nodes=2)
    assert from_table == from_options
    assert from_table == System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=20,
                                         bw_inter=Fraction(25, 2), net_latency=2, nvls=True)


def test_a_preset_fills_whole_nodes_when_no_node_count_is_given():
    assert Hardware(preset="dgx-h100").system(ranks=32).nodes == 4
    assert Hardware(preset="dgx-h100").system(ranks=4).nodes == 1
    assert (Hardware(preset="dgx-h100").system(ranks=16, nodes=2)
            == System.from_preset(load_preset("dgx-h100"), ranks=16, nodes=2))


def test_a_network_plugins_latency_is_added_to_a_presets_network():
    """aws-ofi-nccl reports 75 µs on p4d and p5 (platform-aws), which NCCL's tuning adds per network step;
    the node is still the preset's."""
    base = System.from_preset(load_preset("dgx-h100"), ranks=16, nodes=2)
    efa = Hardware(preset="dgx-h100", net_latency=Fraction(75)).system(ranks=16, nodes=2)
    assert {k: g.latency_inter for k, g in efa.graphs.items()} == {k: g.latency_inter + 75
                                                                   for k, g in base.graphs.items()}
    assert Hardware(preset="dgx-h100", net_latency=Fraction(75)).system(ranks=8) == System.from_preset(
        load_preset("dgx-h100"), ranks=8, nodes=1)  # one node: no network


@pytest.mark.parametrize(("hardware", "ranks", "nodes", "message"), [
    (Hardware(preset="dgx-h100", channels=4, cpu="amd"), 8, None,
     "preset= describes the hardware; drop channels=, cpu= (or drop preset="),
    (Hardware(arch="90"), 8, None, "the hardware is not complete: pass channels=, bw_intra= (and bw_inter= "
                                   "on several nodes)"),
    (Hardware(), 8, None, "no hardware given: pass preset=NAME (see costmodel nccl presets) or arch=, "
                          "channels=, bw_intra= (and bw_inter= on several nodes)"),
    (Hardware(arch="90", channels=8, bw_intra=Fraction(20)), 16, 2,
     "2 nodes need bw_inter=GBPS (GB/s per channel across nodes)"),
    (Hardware(preset="dgx-h100"), None, None, "no rank count given; pass ranks=R"),
])
def test_incomplete_or_mixed_hardware_is_refused(hardware, ranks, nodes, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        hardware.system(ranks=ranks, nodes=nodes)


def test_the_command_line_names_its_options(capsys):
    _, err = run(capsys, "nccl", "allreduce", "-n", "1MiB", "--ranks", "16", "--nodes", "2", "--arch", "90",
                 "--channels", "8", "--bw-intra", "20", rc=2)
    assert err == "error: 2 nodes need --bw-inter GBPS (GB/s per channel across nodes)\n"
    _, err = run(capsys, "nccl", "allreduce", "-n", "1MiB", "--ranks", "8", "--preset", "dgx-h100", "--channels",
                 "8", rc=2)
    assert err == ("error: --preset describes the hardware; drop --channels (or drop --preset and describe the "
                   "hardware with them)\n")


def test_a_run_on_part_of_a_presets_node_is_noted(capsys):
    """The preset's graphs are a whole node's; a run on 4 of its 8 GPUs says so in every report."""
    part = Hardware(preset="pcie-8x-rtx4090").system(ranks=4)
    assert part.gpus_per_node == 8 and part.notes[0].startswith("4 of the 8 GPUs of a node of preset")
    assert Hardware(preset="pcie-8x-rtx4090").system(ranks=8).notes == ()
    assert Hardware(arch="sm89", channels=2, bw_intra=Fraction(12)).system(ranks=4).notes == ()
    data = run_json(capsys, "nccl", "allreduce", "-n", "1MiB", "--ranks", "4", "--preset", "dgx-h100")
    assert any(n.startswith("4 of the 8 GPUs of a node of preset dgx-h100") for n in data["notes"])


def test_links_across_nodes_make_the_graphs_ncclss_search_makes():
    """On several nodes a ring's channel runs at one speed along its path (search.cc: bwIntra = bwInter),
    a tree's rises inside the node to twice the network's at most (pass 2), and NCCL's tuning reads
    bwIntra on one or two nodes: so --bw-inter counts there."""
    slow = Hardware(arch="90", channels=8, bw_intra=Fraction(20), bw_inter=Fraction(3)).system(ranks=8, nodes=2)
    assert (slow.graphs["ring"].bw_intra, slow.graphs["ring"].bw_inter) == (3, 3)
    assert slow.graphs["tree"].bw_intra == 6
    fast = Hardware(arch="90", channels=8, bw_intra=Fraction(20), bw_inter=Fraction(48)).system(ranks=8, nodes=2)
    assert fast.graphs["ring"].bw_intra == 20 and fast.graphs["tree"].bw_intra == 20
    one = Hardware(arch="90", channels=8, bw_intra=Fraction(20), bw_inter=Fraction(3)).system(ranks=8)
    assert one.graphs["ring"].bw_intra == 20  # one node: no network on the path


def test_an_arm_host_and_a_gb10():
    s = Hardware(arch="sm121", channels=2, bw_intra=Fraction(12), bw_inter=Fraction(12), cpu="arm").system(
        ranks=2, nodes=2)
    assert (s.arch, s.cpu_arch) == (121, "arm")


def test_a_node_over_several_hosts_described_by_hand():
    """hosts_per_node beside the explicit numbers, as a preset's: NCCL's node is the NVLink domain."""
    rack = Hardware.of({"arch": "sm100", "channels": 24, "bw_intra": 40, "nvls": True, "hosts_per_node": 18})
    assert rack.node_hosts() == 18 and Hardware(preset="gb200-nvl72").node_hosts() == 18
    assert Hardware(arch=80, channels=12, bw_intra=Fraction(20)).node_hosts() == 1
    assert rack.system(ranks=72).nodes == 1
    with pytest.raises(InputError, match=r"^preset= describes the hardware; drop hosts_per_node="):
        Hardware(preset="gb200-nvl72", hosts_per_node=18).system(ranks=72)
    with pytest.raises(InputError, match=r"^hosts_per_node=0 is not a whole number of hosts"):
        Hardware(arch=100, channels=24, bw_intra=Fraction(40), hosts_per_node=0).system(ranks=72)
