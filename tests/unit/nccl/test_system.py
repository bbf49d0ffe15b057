"""Hardware descriptions: validation (one-line errors naming the parameter) and the preset schema."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.nccl import Graph, System

GOOD = {"arch": 90, "ranks": 16, "nodes": 2, "channels": 16, "bw_intra": 40, "bw_inter": 12.5}


@pytest.mark.parametrize(("change", "message"), [
    ({"channels": 0}, "channels=0 is not an integer from 1 to 64"),
    ({"channels": 65}, "channels=65 is not an integer from 1 to 64"),
    ({"bw_intra": -1}, "bw_intra=-1 is not positive"),
    ({"bw_inter": float("inf")}, "bw_inter=inf is not finite"),
    ({"arch": 50}, "arch=50 is not an integer from 60 to 129"),
    ({"arch": "sm90"}, "arch='sm90' is not an integer"),
    ({"nodes": 32}, "nodes=32 is more than ranks=16"),
    ({"nodes": 3}, "ranks=16 is not a multiple of nodes=3"),
    ({"ranks": 1, "nodes": 1}, "ranks=1 is not an integer ≥ 2"),
    ({"intra": "infiniband"}, "unknown intra-node link 'infiniband'"),
    ({"cpu": "sparc"}, "unknown host CPU 'sparc'"),
    ({"net_latency": -2}, "net_latency=-2 is not non-negative"),
    ({"bw_intra": 1e308}, "bw_intra=1e+308 is too large"),
    ({"bw_intra": Fraction(10**400)}, "bw_intra=1e+400 is too large"),  # past a float: no OverflowError
    ({"bw_intra": 1e-300}, "bw_intra=1e-300 is too small; at least 1e-06 (GB/s per channel or µs)"),
    ({"bw_inter": Fraction(1, 10**400)}, "bw_inter=1e-400 is too small"),
    ({"net_latency": Fraction(10**400)}, "net_latency=1e+400 is too large"),
    ({"net_latency": 1e-9}, "net_latency=1e-09 is too small; at least 1e-06 (GB/s per channel or µs), or 0"),
])
def test_bad_descriptions(change, message):
    with pytest.raises(InputError) as info:
        System.explicit(**{**GOOD, **change})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_unknown_path_type_and_pattern():
    with pytest.raises(InputError, match="unknown path type 'NVX'"):
        Graph(channels=1, bw_intra=1, bw_inter=1, type_intra="NVX")
    with pytest.raises(InputError, match="pattern=7"):
        Graph(channels=1, bw_intra=1, bw_inter=1, pattern=7)


def test_c2c_path_does_not_exist_in_2_21():
    from costmodel.nccl import CONSTANTS, tune

    g = Graph(channels=4, bw_intra=20, bw_inter=20, type_inter="C2C")
    s = System(arch=90, ranks=8, nodes=1, graphs={"ring": g, "tree": g})
    assert tune(s, CONSTANTS["2.30"]).entry("AllReduce", "Ring", "LL128").enabled  # C2C ≤ PXN
    with pytest.raises(InputError, match=r"path type .C2C. does not exist in NCCL 2\.21"):
        tune(s, CONSTANTS["2.21"])


PRESET = {
    "name": "h100x8", "arch": 90, "gpus_per_node": 8, "cpu_arch": "x86", "cpu_vendor": "amd", "nvswitch": True,
    "nvls": True,
    "single": {"ring": {"channels": 24, "bw_intra": 20.0, "bw_inter": 20.0, "type_intra": "NVL",
                        "type_inter": "PIX", "pattern": 4},
               "tree": {"channels": 24, "bw_intra": 20.0, "bw_inter": 20.0, "type_intra": "NVL",
                        "type_inter": "PIX", "pattern": 1},
               "nvls": {"channels": 16, "bw_intra": 40.0, "bw_inter": 40.0, "type_intra": "NVL",
                        "type_inter": "PIX", "pattern": 5}},
    "multi": {"ring": {"channels": 8, "bw_intra": 40.0, "bw_inter": 40.0, "type_intra": "NVL",
                       "type_inter": "PXB", "pattern": 4},
              "tree": {"channels": 8, "bw_intra": 40.0, "bw_inter": 40.0, "type_intra": "NVL",
                       "type_inter": "PXB", "pattern": 1}},
}


def test_from_preset_picks_the_half_by_nodes():
    one = System.from_preset(PRESET, ranks=8, nodes=1)
    assert one.graphs["ring"].channels == 24 and one.nvls and one.cpu_vendor == "amd"
    many = System.from_preset(PRESET, ranks=32, nodes=4)
    assert many.graphs["ring"].channels == 8 and not many.nvls  # no NVLS graph across nodes
    assert many.graphs["ring"].bw_intra == 40


@pytest.mark.parametrize(("preset", "ranks", "nodes", "message"), [
    ({k: v for k, v in PRESET.items() if k != "multi"}, 16, 2, "has no 'multi' graphs; it describes only one node"),
    ({k: v for k, v in PRESET.items() if k != "single"}, 8, 1, "has no 'single' graphs"),
    (PRESET, 12, 2, "ranks=12 is not nodes × gpus_per_node = 2 × 8"),
    (PRESET, 16, 1, "ranks=16 is more than the 8 GPUs per node"),
    ({**PRESET, "colour": 1}, 8, 1, "preset 'h100x8': unknown key 'colour'"),
    ({**PRESET, "single": {"rign": {}}}, 8, 1, "unknown graph 'rign'"),
    ({**PRESET, "single": {"ring": {"channels": 2}}}, 8, 1, "preset 'h100x8': missing key 'bw_intra' in [single.ring]"),
    ({**PRESET, "single": {"ring": {"channels": 2, "bw_intra": 1, "bw_inter": 1, "speed": 2}}}, 8, 1,
     "unknown key 'speed'"),
    ({**PRESET, "single": {"ring": PRESET["single"]["ring"] | {"channels": 65}, "tree": PRESET["single"]["tree"]}},
     8, 1, "[single.ring] of preset 'h100x8': channels=65 is not an integer from 1 to 64"),
    ({**PRESET, "arch": 50}, 8, 1, "arch=50 is not an integer from 60 to 129"),
    ({k: v for k, v in PRESET.items() if k != "cpu_arch"}, 8, 1, "preset 'h100x8': missing key 'cpu_arch'"),
    ({**PRESET, "single": {"ring": PRESET["single"]["ring"]}}, 8, 1, "graphs lacks 'tree'"),
])
def test_bad_presets(preset, ranks, nodes, message):
    with pytest.raises(InputError) as info:
        System.from_preset(preset, ranks=ranks, nodes=nodes)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_loaded_preset_builds_a_system():
    from costmodel.nccl import load_preset

    preset = load_preset("dgx-h100")  # with the schema's defaults, "assumptions" among them
    assert System.from_preset(preset, ranks=16, nodes=2).graphs["ring"].channels == 8


@pytest.mark.parametrize("name", ["dgx-a100", "dgx-h100", "hgx-h100-4nic", "pcie-8x-rtx4090"])
def test_every_shipped_preset_builds_a_system(name):
    # load_preset completes a preset with its defaults, "assumptions" among them: from_preset takes it
    from costmodel.nccl import load_preset

    preset = load_preset(name)
    half = "multi" if "multi" in preset else "single"
    nodes = 2 if half == "multi" else 1
    system = System.from_preset(preset, ranks=preset["gpus_per_node"] * nodes, nodes=nodes)
    assert system.graphs["ring"].channels == preset[half]["ring"]["channels"]
