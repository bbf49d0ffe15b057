"""The command-line contract of the topology commands: JSON keys and units.

``costmodel cost allreduce hierarchical --level ...`` lives in ``cli/cost.py``; ``multilane``,
``flexreduce`` and ``rat`` live in ``cli/topology.py``.  Their bad inputs are in ``test_bad_input.py``.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

LEVELS = ["--level", "8:1us:150GB/s", "--level", "4:5us:25GB/s"]
GiB = 2**30


def test_cost_hierarchical_json_contract(cli):
    data = cli.json("cost", "allreduce", "hierarchical", *LEVELS, "-n", "1GiB")
    assert {"collective", "p", "n_bytes", "meaning_of_n", "topology", "results", "best", "flat_ring",
            "notes"} <= set(data)
    assert (data["collective"], data["p"], data["n_bytes"], data["best"]) == ("allreduce", 32, GiB, "hierarchical")
    assert [lv["name"] for lv in data["topology"]["levels"]] == ["intra", "inter"]
    assert data["topology"]["levels"][1]["bandwidth_bytes_per_s"] == 25 * 10**9
    (result,) = data["results"]
    assert {"algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds", "bytes_sent_per_rank",
            "formula", "notes", "levels", "phases", "parameters", "vs_best", "speedup_vs_flat_ring",
            "sources"} <= set(result)
    # RS ring over 8 on n: 7·1 µs + 7/8·n/(150 GB/s); AG the same; AR ring over 4 on n/8:
    # 6·5 µs + 2·3/4·(n/8)/(25 GB/s)
    n = Fraction(GiB)
    time = 2 * (7 * Fraction(1, 10**6) + Fraction(7, 8) * n / (150 * 10**9)) \
        + 6 * Fraction(5, 10**6) + Fraction(3, 2) * (n / 8) / (25 * 10**9)
    assert math.isclose(result["time_s"], float(time), rel_tol=1e-12)
    assert result["rounds"] == 7 + 6 + 7
    # intra: 4 nodes × 7n, twice; inter: 8 slices × 4 ranks × 2·3/4·n/8
    assert result["levels"] == [{"name": "intra", "bytes_crossing": 56 * GiB},
                                {"name": "inter", "bytes_crossing": 6 * GiB}]
    assert [ph["level"] for ph in result["phases"]] == ["intra", "inter", "intra"]
    assert {"level", "collective", "algorithm", "p", "n_bytes", "groups", "time_s", "bytes_crossing",
            "alpha_s", "beta_s_per_byte"} <= set(result["phases"][0])
    assert result["parameters"] == {"inner": "ring", "outer": "ring", "lanes": 8}
    # the flat ring: 62 steps of 5 µs + (n/32)/(25 GB/s); 28 intra and 4 inter links of 2·31/32·n
    flat = data["flat_ring"]
    assert math.isclose(flat["time_s"], float(62 * (Fraction(5, 10**6) + n / 32 / (25 * 10**9))), rel_tol=1e-12)
    assert flat["levels"] == [{"name": "intra", "bytes_crossing": 28 * 31 * GiB // 16},
                              {"name": "inter", "bytes_crossing": 4 * 31 * GiB // 16}]
    assert math.isclose(result["speedup_vs_flat_ring"], flat["time_s"] / result["time_s"], rel_tol=1e-12)
    assert json.dumps(data, allow_nan=False)


def test_cost_with_levels_compares_both_algorithms(cli):
    data = cli.json("cost", "allreduce", *LEVELS, "-n", "1GiB", "-p", "32")
    assert [r["algorithm"] for r in data["results"]] == ["hierarchical", "hierarchical-reduce-bcast"]
    assert data["results"][0]["vs_best"] == 1


def test_cost_with_lanes_inner_and_outer(cli):
    data = cli.json("cost", "allreduce", "hier", *LEVELS, "-n", "1GiB", "--lanes", "2", "--inner",
                    "recursive", "--outer", "rab")
    (result,) = data["results"]
    assert result["parameters"] == {"inner": "recursive", "outer": "rabenseifner", "lanes": 2}
    # 8 slices share 2 lanes: 4 per lane, so the inter phase runs with β·4
    assert result["phases"][1]["beta_s_per_byte"] == 4 / (25 * 10**9)


def test_cost_with_a_profile_of_levels(cli, tmp_path: Path):
    path = tmp_path / "cluster.toml"
    path.write_text('[[level]]\nsize = 8\nalpha = "1 us"\nbandwidth = "150 GB/s"\n'
                    '[[level]]\nsize = 4\nalpha = "5 us"\nbandwidth = "25 GB/s"\n', encoding="utf-8")
    from_profile = cli.json("cost", "allreduce", "-n", "1GiB", "--profile", str(path))
    from_levels = cli.json("cost", "allreduce", *LEVELS, "-n", "1GiB")
    assert [r["time_s"] for r in from_profile["results"]] == [r["time_s"] for r in from_levels["results"]]
    assert from_profile["flat_ring"]["levels"] == from_levels["flat_ring"]["levels"]


def test_flat_cost_still_works(cli):
    data = cli.json("cost", "allreduce", "ring", "-p", "4", "-n", "100MB", "--alpha", "0s",
                    "--bandwidth", "12.5GB/s")
    assert data["results"][0]["bytes_sent_per_rank"] == 150_000_000


def test_multilane_json(cli):
    data = cli.json("multilane", "-n", "1GB", "--lanes", "4", "--alpha", "0", "--bandwidth", "12.5GB/s")
    # 1 GB / 12.5 GB/s = 80 ms on one lane; 250 MB per lane: 20 ms
    assert (data["n_bytes"], data["lanes"], data["bytes_per_lane"]) == (10**9, 4, 250 * 10**6)
    assert (data["one_lane_time_s"], data["time_s"], data["speedup"]) == (0.08, 0.02, 4)
    assert (data["alpha_s"], data["bandwidth_bytes_per_s"]) == (0, 12_500_000_000)


def test_multilane_on_a_calibrated_profile_prices_each_message_by_its_segment(cli):
    """A profile's segments, placed by message size as for cost, price the 1 GB on one lane and the 250 MB
    on each of four by the segments their sizes fall in (both the last one here: from 1.049 MB)."""
    data = cli.json("multilane", "-n", "1GB", "--lanes", "4", "--profile", "docs/examples/a3mega.toml")
    assert data["link_segments_by"] == "message"
    last = data["link_segments"][-1]
    assert last["from_bytes"] <= 250 * 10**6
    assert data["one_lane_time_s"] == pytest.approx(last["alpha_s"] + 10**9 * last["beta_s_per_byte"], rel=1e-5)
    assert data["time_s"] == pytest.approx(last["alpha_s"] + 250 * 10**6 * last["beta_s_per_byte"], rel=1e-5)


def test_flexreduce_json(cli):
    data = cli.json("flexreduce", "--groups", "2,3", "--entries", "12")
    assert data["groups"] == [
        {"workers": 2, "reduced_per_worker": 6, "owned_entries": 6, "owned_per_worker": 3},
        {"workers": 3, "reduced_per_worker": 4, "owned_entries": 6, "owned_per_worker": 2},
    ]
    assert data["exchange_entries_per_direction"] == 6


def test_rat_json(cli):
    data = cli.json("rat", "--racks", "2", "--per-rack", "4", "-n", "100MB")
    # flat ring: 2 core links × 2·7/8·100 MB; RAT: 100 MB across and back
    assert (data["core_bytes_flat_ring"], data["core_bytes_rat"]) == (350_000_000, 200_000_000)
    assert data["levels"][1] == {"name": "core", "rat_bytes": 200_000_000, "flat_ring_bytes": 350_000_000}


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["cost", "allreduce", "hierarchical", *LEVELS, "-n", "1GiB"], ["hierarchical", "flat ring", "intra",
                                                                       "bytes crossing", "best: hierarchical"]),
        (["multilane", "-n", "1GB", "--lanes", "4", "--alpha", "0", "--bandwidth", "12.5GB/s"],
         ["80 ms", "20 ms", "α = 0 s"]),
        (["flexreduce", "--groups", "2,3", "--entries", "12"], ["reduced/worker", "6 partial-sum entries"]),
        (["rat", "--racks", "2", "--per-rack", "4", "-n", "100MB"], ["350 MB", "200 MB", "core"]),
    ],
)
def test_tables(cli, argv, needles):
    out, _ = cli.text(*argv, columns=120)
    for needle in needles:
        assert needle in out


def test_a_profile_of_levels_lists(cli, tmp_path: Path):
    path = tmp_path / "cluster.toml"
    path.write_text('[[level]]\nname = "nvlink"\nsize = 8\nalpha = "1 us"\nbandwidth = "150 GB/s"\n',
                    encoding="utf-8")
    assert "8 nvlink" in cli("profiles", str(path))[0]
    data = cli.json("profiles", str(path))
    assert data["profiles"][0]["levels"][0]["size"] == 8
