"""NCCL 2.21's NVLS channel raise and its fallback entries, hand-derived from the C source.

2.21.5's ncclTopoPostset (src/graph/connect.cc) ends with ``collChannels = nChannels`` and then, with
NVLS on, ``if (nChannels < nvlsChannels) nChannels = copyChannels(..., nvlsChannels, ...)``;
ncclTopoGetAlgoTime (src/graph/tuning.cc) multiplies a multi-node ring/Simple all-reduce's latency by
1.4 (sm ≥ 80) when ``nBytes / (comm->nChannels * nRanks) >= 64``. 2.30.7 has no such copy.
getChannnelThreadInfo (2.21 src/enqueue.cc) starts ring and tree from ``collChannels``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.nccl import CONSTANTS, System, load_preset, predict, sweep, tune
from costmodel.nccl.choose import candidates

V21, V30 = CONSTANTS["2.21"], CONSTANTS["2.30"]


def h100_two_nodes():
    """2 × 8 H100 whose ring search found 2 channels of 10 GB/s (the GCP a3-mega dump of NVIDIA/nccl
    issue 1519 has Ring Simple broadcast 20.0 GB/s = 2 × 10), with NVLS (16 channels in 2.21)."""
    return System.explicit(arch=90, ranks=16, nodes=2, channels=2, bw_intra=10, bw_inter=10, nvls=True)


def ring_simple(version, n):
    table = tune(h100_two_nodes(), CONSTANTS[version])
    return next(t for t in candidates(table, "AllReduce", n) if (t.entry.algorithm, t.entry.protocol)
                == ("Ring", "Simple"))


def test_2_21_raises_the_channel_count_to_the_nvls_channels_and_2_30_does_not():
    t21, t30 = tune(h100_two_nodes(), V21), tune(h100_two_nodes(), V30)
    # connect.cc: nChannels = 2 × 2 ring channels (bwIntra 10 ≤ 45: no Hopper doubling) = collChannels;
    # 2.21 then copies channels up to nvlsChannels = NCCL_NVLS_NCHANNELS = 16
    assert (t21.coll_channels, t21.nvls_channels, t21.channels, t21.nvls_raised) == (4, 16, 16, True)
    assert (t30.coll_channels, t30.nvls_channels, t30.channels, t30.nvls_raised) == (4, 16, 4, False)
    without = System.explicit(arch=90, ranks=16, nodes=2, channels=2, bw_intra=10, bw_inter=10)
    assert tune(without, V21).channels == 4  # no NVLS: nvlsChannels = 0, nothing copied


def test_a_preset_with_16_channels_already_is_not_raised():
    preset = {k: v for k, v in load_preset("dgx-h100").items() if k != "assumptions"}
    for ranks, nodes in ((8, 1), (16, 2)):
        t = tune(System.from_preset(preset, ranks=ranks, nodes=nodes), V21)
        assert t.channels == t.coll_channels >= t.nvls_channels == 16, (ranks, nodes)


def _hand_latency(version):
    """Ring Simple all-reduce latency from ncclTopoTuneModel's expression, 16 ranks on 2 Intel nodes:
    baseLat 8.4 + (nsteps − nInterSteps) × max(hwLat NVLink 3.4, netOverhead 1.0 × 3) + nInterSteps ×
    hwLat NET 14.0; nsteps = 2 × 15; nInterSteps = 2 × nNodes (2.21) or 2 × (nNodes − 1) (2.30)."""
    inter = 4 if version == "2.21" else 2
    return Fraction("8.4") + (30 - inter) * max(Fraction("3.4"), 3 * Fraction("1.0")) + inter * Fraction("14.0")


@pytest.mark.parametrize(("version", "n", "plateau"), [
    # 2.21: comm->nChannels = 16 → 8192 / (16 × 16) = 32 < 64; 16383 → 63; 16384 → 64
    ("2.21", 8192, False), ("2.21", 16383, False), ("2.21", 16384, True),
    # 2.30: comm->nChannels = 4 → 4096 / (4 × 16) = 64 already
    ("2.30", 4095, False), ("2.30", 4096, True), ("2.30", 8192, True),
])
def test_the_ring_simple_plateau_starts_later_in_2_21(version, n, plateau):
    channels = {"2.21": 16, "2.30": 4}[version]
    assert (n // (channels * 16) >= 64) is plateau  # the C expression, integer division
    t = ring_simple(version, n)
    latency = _hand_latency(version) * (Fraction("1.4") if plateau else 1)
    bandwidth = Fraction(2 * 10 * 16, 30)  # nChannels × bwIntra × nRanks / nsteps
    assert (t.plateau_factor is not None) is plateau
    assert t.latency_us == latency
    assert t.time_us == latency + Fraction(n) / (1000 * bandwidth)


def test_exact_times_at_8_kib():
    # 2.21: 152.8 + 8192 / (1000 × 32/3); 2.30: 131.6 × 1.4 + the same
    assert ring_simple("2.21", 8192).time_us == Fraction("152.8") + Fraction("0.768") == Fraction(19196, 125)
    assert ring_simple("2.30", 8192).time_us == Fraction("184.24") + Fraction("0.768") == Fraction(23126, 125)


def test_ring_and_tree_still_launch_the_collective_channels():
    for version in ("2.21", "2.30"):
        p = predict("allreduce", "1GiB", h100_two_nodes(), version=version, algo="ring")
        assert (p.algorithm, p.protocol, p.channels) == ("Ring", "Simple", 4), version
    nvls = predict("allreduce", "1GiB", h100_two_nodes(), version="2.21")
    assert (nvls.algorithm, nvls.channels) == ("NVLSTree", 16)


def test_the_prediction_and_the_sweep_say_where_the_plateau_moved():
    note = ("NCCL 2.21 raises its channel count from 4 to the 16 NVLS channels: the ring/Simple plateau "
            "starts at n = 64 × 16 channels × 16 ranks = 16384 B instead of 4096 B; ring and tree still "
            "launch at most 4 channels")
    assert predict("allreduce", "8KiB", h100_two_nodes(), version="2.21").notes == (note,)
    assert predict("allreduce", "8KiB", h100_two_nodes(), version="2.30").notes == ()
    assert predict("allgather", "8KiB", h100_two_nodes(), version="2.21").notes == ()  # no plateau there
    assert sweep("allreduce", 1, "1GiB", h100_two_nodes(), version="2.21", algo="ring").notes == (note,)
    steps = predict("allreduce", "16KiB", h100_two_nodes(), version="2.21", algo="ring", proto="simple").steps
    plateau = next(s for s in steps if s.text == "ring plateau")
    assert "(n / (16 channels × 16 ranks) = 64 ≥ 64)" in plateau.expression
    assert plateau.value == Fraction("152.8") * Fraction("1.4")


def test_the_sweep_switches_at_the_moved_plateau():
    ranges = sweep("allreduce", 8192, 65536, h100_two_nodes(), version="2.21", algo="ring", proto="simple").ranges
    assert [(r.protocol, r.from_bytes, r.fallback) for r in ranges] == [("Simple", 8192, False)]


# -- entries 2.21 uses only as a fallback -------------------------------------------------------------

def node8_h100():
    preset = {k: v for k, v in load_preset("dgx-h100").items() if k != "assumptions"}
    return System.from_preset(preset, ranks=8, nodes=1)


def test_a_disabled_ring_entry_is_a_fallback_in_2_21_only():
    """topoGetAlgoInfo (2.21) times a ring entry of bandwidth 0 with ringbdw into backupMinTime."""
    p = predict("allreduce", "1MiB", node8_h100(), version="2.21", algo="tree")
    ring = [e for e in p.entries if e.algorithm == "Ring"]
    assert [(e.protocol, e.enabled, e.fallback) for e in ring] == [
        ("LL", True, True), ("LL128", True, True), ("Simple", True, True)]
    assert {e.reason for e in ring} == {"Ring disabled by NCCL_ALGO=tree"}
    # Ring LL is faster (28.01 µs) than the chosen Tree LL128, but only a fallback
    assert min(e.time_s for e in ring) < p.time_s and (p.algorithm, p.protocol) == ("Tree", "LL128")
    assert not any(e.fallback for e in p.entries if e.algorithm != "Ring")
    assert not any(e.fallback for e in predict("allreduce", "1MiB", node8_h100(), algo="tree").entries)


def test_a_chosen_backup_says_so_and_shows_the_ring_bandwidth():
    # 2 nodes with CollNet: 2.21's table enables NVLS all-gather, but topoGetAlgoInfo runs NVLS
    # all-gather on one node only, so with NCCL_ALGO=nvls only the Ring backups have a time
    s = System.explicit(arch=90, ranks=16, nodes=2, channels=8, bw_intra=40, bw_inter=40, nvls=True, collnet=True)
    p = predict("allgather", "1MiB", s, version="2.21", algo="nvls")
    assert p.algorithm == "Ring" and p.notes[0].startswith("NCCL 2.21 runs a fallback: no enabled entry")
    table = tune(s, V21, algo="nvls")
    entry = table.entry("AllGather", "Ring", p.protocol)
    assert entry.bandwidth == 0 and entry.backup_bandwidth > 0
    step = next(st for st in p.steps if st.text.startswith("bandwidth"))
    assert step.text == "bandwidth (fallback: the ring's before disabling, ringbdw)"
    assert step.value == entry.backup_bandwidth
    ranges = sweep("allgather", 1, "1GiB", s, version="2.21", algo="nvls").ranges
    assert ranges and all(r.algorithm == "Ring" and r.fallback for r in ranges)


def test_ring_entries_put_back_when_everything_is_disabled_are_fallbacks():
    s = System.explicit(arch=80, ranks=16, nodes=2, channels=4, bw_intra=20, bw_inter=20, collnet=True)
    table = tune(s, V21, algo="CollNetChain", proto="LL")
    assert [table.entry("AllReduce", "Ring", p).fallback for p in ("LL", "LL128", "Simple")] == [True] * 3
    p = predict("allreduce", "1MiB", s, version="2.21", algo="CollNetChain", proto="LL")
    assert p.algorithm == "Ring" and all(e.fallback for e in p.entries if e.enabled)
    assert p.notes[0] == ("NCCL 2.21 runs a fallback: every entry of AllReduce was disabled, so it put the "
                          "ring's bandwidths back in its table")
