"""NCCL's choice and predicted time; the exact sweep against a brute-force search."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.nccl import CONSTANTS, Graph, System, predict, sweep, tune
from costmodel.nccl.choose import choose
from costmodel.nccl.explain import latency_steps


def node8(**kw):
    return System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40, **kw)


def two_nodes(**kw):
    """16 H100s on 2 nodes whose graphs have 16 channels of 40 GB/s inside a node and 12.5 across, as
    given: the tuning's arithmetic on a graph (System.explicit makes graphs of links, which caps a
    ring's 40 at the network's 12.5 as NCCL's search would)."""
    return as_given(System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5, **kw),
                    bw_intra=40)


def as_given(system, *, bw_intra):
    """*system* with every graph's bandwidth inside a node *bw_intra*, as a graph states it."""
    from dataclasses import replace

    return replace(system, graphs={k: replace(g, bw_intra=Fraction(bw_intra)) for k, g in system.graphs.items()})


def test_small_allreduce_on_one_node():
    p = predict("all_reduce", "1KiB", node8())
    assert (p.algorithm, p.protocol) == ("Ring", "LL")
    # 15 µs + 1024 B / (1000 × 564/7 GB/s)
    assert p.time_s == (15 + Fraction(1024 * 7, 1000 * 564)) / 10**6
    assert p.algbw_bytes_per_s == 1024 / p.time_s
    assert p.busbw_bytes_per_s == p.algbw_bytes_per_s * Fraction(14, 8)
    # channels: 1024 < nc × 512 × (8 × 8) down to 1; threads 512 → 64 (64 % 128 ≠ 0), then at least 96
    assert (p.channels, p.threads) == (1, 96)
    assert p.explain().splitlines()[1] == (
        "latency: base 6.6 µs + (nsteps − nInterSteps) × 0.6 µs = 15 µs")


def test_large_allreduce_across_nodes_uses_ring_simple_with_plateau():
    p = predict("allreduce", "1GiB", two_nodes())
    assert (p.algorithm, p.protocol, p.channels, p.threads) == ("Ring", "Simple", 32, 544)
    # 131.6 × 1.4 + 2^30 / (1000 × 1024/3)
    assert p.time_s == (Fraction("131.6") * Fraction("1.4") + Fraction(2**30 * 3, 1000 * 1024)) / 10**6
    assert any(s.text == "ring plateau" for s in p.steps)


def test_tree_correction_in_time():
    p = predict("allreduce", "8MiB", two_nodes())
    assert (p.algorithm, p.protocol) == ("Tree", "LL128")
    # log2(8 MiB / 64) = 17: LL128 factor .9; bandwidth 276 (min(16 × 40 × 120/128, 16 × 36.7) / 2)
    assert p.time_s == (Fraction("48.5") + Fraction(2**23, 1000) / (Fraction(276) * Fraction(".9"))) / 10**6


@pytest.mark.parametrize(("collective", "factor"), [
    ("allreduce", Fraction(30, 16)), ("allgather", Fraction(15, 16)), ("reduce-scatter", Fraction(15, 16)),
    ("broadcast", Fraction(1)), ("reduce", Fraction(1)),
])
def test_busbw_factors(collective, factor):
    p = predict(collective, "64MiB", two_nodes())
    assert p.busbw_bytes_per_s == p.algbw_bytes_per_s * factor


@pytest.mark.parametrize(("args", "message"), [
    (("alltoall", 1024), "alltoall is outside NCCL's tuning model"),
    (("gather", 1024), "gather is outside"),
    (("allredcue", 1024), "unknown collective 'allredcue'"),
    (("allreduce", 0), "n=0 is not positive"),
    (("allreduce", Fraction(1, 2)), "not a whole number of bytes"),
    (("allreduce", "12 KB"), "ambiguous"),
])
def test_bad_requests(args, message):
    with pytest.raises(InputError) as info:
        predict(*args, node8())
    assert message in str(info.value) and "\n" not in str(info.value)


def test_version_and_filter_errors():
    with pytest.raises(InputError, match=r"unknown NCCL version .2\.4."):
        predict("allreduce", 1024, node8(), version="2.4")
    with pytest.raises(InputError, match="no algorithm/protocol available for AllReduce with NCCL_ALGO=nvls"):
        predict("allreduce", 1024, node8(), algo="nvls")
    assert predict("allreduce", 1024, node8(), version="v2.21.5-1").version == "2.21"


def test_filters_steer_the_choice():
    assert predict("allreduce", 1024, node8(), algo="tree").algorithm == "Tree"
    assert predict("allreduce", 1024, node8(), proto="simple").protocol == "Simple"
    assert predict("allreduce", 1024, node8(), algo="allreduce:tree;broadcast:ring").algorithm == "Tree"


def test_to_dict_is_json_with_every_entry():
    d = predict("allreduce", "8MiB", two_nodes(nvls=False)).to_dict()
    json.dumps(d, allow_nan=False)
    assert len(d["entries"]) == 21 and d["algorithm"] == "Tree" and d["nccl_version"] == "2.30"
    assert {e["enabled"] for e in d["entries"]} == {True, False}
    assert all(e["reason"] for e in d["entries"] if not e["enabled"])


@pytest.mark.parametrize("version", ["2.30", "2.21"])
@pytest.mark.parametrize("system", [node8(nvls=True), two_nodes(), two_nodes(cpu="amd", collnet=True),
                                    System.explicit(arch=80, ranks=4, nodes=4, channels=4, bw_intra=20,
                                                    bw_inter=20),
                                    System(arch=80, ranks=8, nodes=1, cpu_arch="power",
                                           graphs=dict.fromkeys(("ring", "tree"), Graph(
                                               channels=6, bw_intra=20, bw_inter=10, type_intra="PXB",
                                               same_channels=False)))])
def test_explained_latency_equals_the_table(version, system):
    table = tune(system, CONSTANTS[version])
    for e in table.entries:
        if e.enabled:
            assert latency_steps(table, e)[-1].value == e.latency_us, e


def _dense(lo: int, hi: int) -> list[int]:
    sizes = set(range(lo, min(hi, 4096) + 1))
    x = 4096
    while x <= hi:
        sizes.update(range(x - 2, x + 3))
        sizes.add(x + x // 3)
        x = x * 5 // 4
    return sorted(s for s in sizes if lo <= s <= hi)


@pytest.mark.parametrize("version", ["2.30", "2.21"])
@pytest.mark.parametrize(("collective", "system"), [
    ("allreduce", node8()), ("allreduce", two_nodes()), ("allgather", two_nodes()),
    ("allreduce", System.explicit(arch=80, ranks=32, nodes=4, channels=4, bw_intra=20, bw_inter=20, cpu="amd")),
    ("allgather", System.explicit(arch=90, ranks=4, nodes=4, channels=4, bw_intra=20, bw_inter=20)),
])
def test_sweep_matches_brute_force(version, collective, system):
    result = sweep(collective, 1, 2**33, system, version=version)
    ranges = result.ranges
    assert ranges[0].from_bytes == 1 and ranges[-1].to_bytes == 2**33
    assert all(a.to_bytes + 1 == b.from_bytes for a, b in itertools.pairwise(ranges))
    table = tune(system, CONSTANTS[version])
    function = predict(collective, 1, system, version=version).function

    def picked(n):
        c = choose(table, function, n)
        return (c.timed.entry.algorithm, c.timed.entry.protocol)

    sizes = _dense(1, 2**33)
    for r in ranges:  # the switch sizes exactly: the choice changes between from_bytes − 1 and from_bytes
        sizes += [r.from_bytes, r.to_bytes]
    for n in sizes:
        r = next(r for r in ranges if r.from_bytes <= n <= r.to_bytes)
        assert picked(n) == (r.algorithm, r.protocol), n


def test_sweep_errors():
    with pytest.raises(InputError, match="min_bytes=10 is more than max_bytes=5"):
        sweep("allreduce", 10, 5, node8())


def test_import_is_light():
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import costmodel.nccl"],
                         capture_output=True, text=True, check=True).stderr
    loaded = {line.split("|")[-1].strip() for line in out.splitlines()}
    assert not {m for m in loaded if m.split(".")[0] in ("sympy", "numpy", "matplotlib", "typer", "rich")}


def test_a_disabled_entry_gives_each_reason_once():
    from costmodel.nccl import System, predict

    s = System.explicit(arch=80, ranks=2, nodes=2, channels=2, bw_intra=20, bw_inter=12)
    for e in predict("allgather", "1MiB", s).entries:
        parts = e.reason.split("; ") if e.reason else []
        assert len(parts) == len(set(parts)), e.reason


def test_a_reason_another_one_extends_is_not_repeated():
    from costmodel.nccl import System, load_preset, predict

    s = System.from_preset(load_preset("dgx-h100"), ranks=16, nodes=2)
    nvls = next(e for e in predict("allreduce", "8MiB", s).entries if e.algorithm == "NVLS" and e.protocol == "Simple")
    assert nvls.reason == "NVLS across nodes needs CollNet, which is off"


def test_one_dgx_h100_chooses_nvls_from_2_mib_as_published():
    """The preset's one-node NVLS graph is the one NCCL prints on an H100 node (8 channels, bw 40/60,
    NVIDIA/nccl#1197): the tuning table then carries 8 × min(40 × 0.85 × 7/8 × 2, 60) = 476 GB/s of bus
    bandwidth, the ~480 GB/s NCCL's maintainers give for NVLS on 8 H100s (NVIDIA/nccl-tests#212), and
    NCCL chooses Ring/LL up to 1 MiB and NVLS/Simple from 2 MiB to 16 GiB (NVIDIA/nccl-tests#309)."""
    from costmodel.nccl import load_preset

    s = System.from_preset(load_preset("dgx-h100"), ranks=8, nodes=1)
    graph = s.graphs["nvls"]
    assert (graph.channels, graph.bw_intra, graph.bw_inter) == (8, 40, 60)
    big = predict("allreduce", "16GiB", s)
    nvls = next(e for e in big.entries if (e.algorithm, e.protocol) == ("NVLS", "Simple"))
    assert nvls.bandwidth_bytes_per_s == Fraction(476) * Fraction(8, 14) * 10**9  # busbw × n/(2(n − 1))
    choices = {k: (p.algorithm, p.protocol)
               for k in range(10, 35) for p in [predict("allreduce", 2**k, s)]}
    assert {choices[k] for k in range(10, 21)} == {("Ring", "LL")}
    assert {choices[k] for k in range(21, 35)} == {("NVLS", "Simple")}
