"""The shipped NCCL presets load and validate; bad preset files are one-line errors naming file and key."""

from __future__ import annotations

import pytest

from costmodel.errors import ParseError, UnknownNameError
from costmodel.nccl.debuglog import preset_toml
from costmodel.nccl.presets import load_preset, preset_names, validate_preset

GOOD = """name = "t"
arch = 90
gpus_per_node = 8
cpu_arch = "x86"
cpu_vendor = "intel"
nvswitch = true
nvls = false

[single.ring]
channels = 12
bw_intra = 30.0
bw_inter = 30.0
type_intra = "NVL"
type_inter = "PIX"
pattern = 4
"""


def test_the_shipped_presets():
    assert preset_names() == ("dgx-a100", "dgx-h100", "gb200-nvl72", "hgx-h100-4nic", "pcie-8x-rtx4090")
    for name in preset_names():
        preset = load_preset(name)
        assert preset["name"] == name and preset["sources"], name
        assert "ring" in preset.get("single", {}) or "ring" in preset.get("multi", {})


def test_pinned_numbers():
    a100, h100 = load_preset("dgx-a100"), load_preset("dgx-h100")
    assert (a100["arch"], a100["cpu_vendor"], a100["nvls"]) == (80, "amd", False)
    assert a100["single"]["ring"] | {} == {"channels": 12, "bw_intra": 20.0, "bw_inter": 20.0, "type_intra": "NVL",
                                           "type_inter": "PIX", "latency_inter": 0.0, "same_channels": True,
                                           "pattern": 4}
    assert (a100["multi"]["ring"]["channels"], a100["multi"]["ring"]["bw_inter"]) == (8, 24.0)
    assert (h100["single"]["ring"]["channels"], h100["single"]["ring"]["bw_intra"]) == (12, 30.0)
    assert (h100["multi"]["ring"]["channels"], h100["multi"]["ring"]["bw_inter"]) == (8, 48.0)
    assert h100["nvls"] and h100["single"]["nvls"]["pattern"] == 5
    four = load_preset("hgx-h100-4nic")
    assert "single" not in four and four["multi"]["ring"]["channels"] * four["multi"]["ring"]["bw_inter"] == 192
    box = load_preset("pcie-8x-rtx4090")
    assert (box["arch"], box["nvswitch"], box["single"]["ring"]["type_intra"]) == (89, False, "SYS")


def test_a_preset_round_trips_through_toml():
    for name in preset_names():
        preset = load_preset(name)
        from costmodel.tomlfile import loads
        assert validate_preset(loads(preset_toml(preset), path=name), path=name) == preset


def test_a_file_path(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text(GOOD)
    preset = load_preset(f)
    assert preset["single"]["ring"]["same_channels"] is True and preset["collnet"] is False
    assert load_preset(str(f)) == preset


def test_unknown_name():
    with pytest.raises(UnknownNameError, match="did you mean 'dgx-h100'"):
        load_preset("dgx-h10")


@pytest.mark.parametrize(("change", "message"), [
    (("arch = 90", "arch = 90\ncolour = 1"), "unknown key 'colour'"),
    (("arch = 90", 'arch = "sm90"'), "arch = 'sm90' must be an integer"),
    (("nvls = false", "nvls = 0"), "nvls = 0 must be true/false"),
    (("arch = 90", "arch = true"), "arch = True must be an integer"),
    (("channels = 12", "channels = 0"), r"\[single.ring\]: channels = 0 is not an integer from 1 to 64"),
    (("bw_intra = 30.0", "bw_intra = -1.0"), r"\[single.ring\]: bw_intra = -1.0 is not positive"),
    (("bw_intra = 30.0", "bw_intra = inf"), r"\[single.ring\]: bw_intra = inf is not finite"),
    (("type_intra = \"NVL\"", "type_intra = \"NVLINK\""), r"\[single.ring\]: unknown path type 'NVLINK' for type_intra"),
    (("pattern = 4", "pattern = 5"), r"\[single.ring\] pattern = 5 is not a ring pattern \(4\)"),
    (("[single.ring]", "[single.rings]"), r"unknown graph 'rings' in \[single\]; did you mean 'ring'"),
    (("cpu_vendor = \"intel\"", "cpu_vendor = \"via\""), "unknown CPU vendor 'via' for cpu_vendor"),
    (("gpus_per_node = 8", "gpus_per_node = 0"), "gpus_per_node = 0 must be at least 1"),
    (("name = \"t\"\n", ""), "missing key 'name'"),
    (("pattern = 4", "pattern = 4\nspeed = 3"), r"unknown key 'speed' in \[single.ring\]"),
    (("[single.ring]", "[single.tree]"), r"\[single\] has no ring graph"),
    (("bw_intra = 30.0\n", ""), r"missing key 'bw_intra' in \[single.ring\]"),
])
def test_bad_files_are_one_line_errors_naming_file_and_key(tmp_path, change, message):
    f = tmp_path / "bad.toml"
    text = GOOD.replace(*change)
    if change[1] == "[single.tree]":
        text = text.replace("pattern = 4", "pattern = 1")
    f.write_text(text)
    with pytest.raises(ParseError, match=message) as e:
        load_preset(f)
    assert str(e.value).startswith(f"{f}: ") and "\n" not in str(e.value)


def test_no_graph_and_bad_toml(tmp_path):
    f = tmp_path / "none.toml"
    f.write_text(GOOD.split("[single.ring]", maxsplit=1)[0])
    with pytest.raises(ParseError, match="no graph"):
        load_preset(f)
    f.write_text("name = ?")
    with pytest.raises(ParseError, match=r"none\.toml:1: invalid TOML"):
        load_preset(f)
    f.write_bytes(b"\x00\x01")
    with pytest.raises(ParseError, match="binary"):
        load_preset(f)


def test_gb200_nvl72_is_one_nvlink_domain_derived_from_nccls_search():
    """The NVL72 rack is one NCCL node (MNNVL fuses its 18 hosts), and its graphs follow NCCL's search
    rules from 18 NVLink 5 links of SM100_NVLINK_BW 40.1 GB/s each (the preset file's comments)."""
    from fractions import Fraction

    rack = load_preset("gb200-nvl72")
    assert (rack["arch"], rack["gpus_per_node"], rack["hosts_per_node"], rack["nvls"]) == (100, 72, 18, True)
    assert "multi" not in rack  # several racks cross InfiniBand: not described
    link = 18 * Fraction("40.1")  # 721.8 GB/s per GPU
    ring = rack["single"]["ring"]
    assert 8 * 90 <= link < 9 * 90  # 8 channels at the array's top speed, 90 ...
    assert (ring["channels"], ring["bw_intra"]) == (16, 45.0)  # ... doubled by ncclTopoDupChannels
    assert rack["single"]["tree"]["channels"] == ring["channels"]
    nvls = rack["single"]["nvls"]
    assert nvls["channels"] == min(32, 72)  # NCCL_MAX_NVLS_ARITY: every channel on one node
    speeds = (90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18)  # sm100SpeedArrayIntra
    first = next(s for s in speeds if 32 * s <= link * Fraction(72, 71))
    assert first == 20 and 33 * first <= link  # each GPU: 32 channels, and its own as head twice
    assert (nvls["bw_intra"], nvls["bw_inter"]) == (20.0, 90.0)


def test_hosts_per_node_must_divide_the_gpus():
    for bad in ("hosts_per_node = 3", "hosts_per_node = 0"):
        with pytest.raises(ParseError, match=r"hosts_per_node = \d must be at least 1 and divide gpus_per_node"):
            validate_preset(_loads(GOOD.replace("nvls = false", f"nvls = false\n{bad}")), path="t")


def _loads(text):
    from costmodel.tomlfile import loads

    return loads(text, path="t")
