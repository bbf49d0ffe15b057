"""``costmodel nccl``: one prediction, the size ranges, a log compared, presets from a debug log."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.nccl import System, load_preset, predict, sweep

LOGS = "tests/data/logs/nccl-tests"
H100 = [
    "--ranks",
    "16",
    "--nodes",
    "2",
    "--arch",
    "sm90",
    "--channels",
    "16",
    "--bw-intra",
    "40",
    "--bw-inter",
    "12.5",
]


def test_one_prediction_matches_the_library(cli):
    data = cli.json("nccl", "allreduce", "-n", "8MiB", *H100)
    s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=Fraction("12.5"))
    p = predict("allreduce", "8MiB", s)
    assert (data["algorithm"], data["protocol"], data["channels"], data["threads"]) == (
        "Tree",
        "LL128",
        32,
        640,
    )
    assert data["time_s"] == float(p.time_s)
    assert data["busbw_bytes_per_s"] == pytest.approx(float(8 * 2**20 / p.time_s * Fraction(30, 16)))
    assert data["system"]["nodes"] == 2 and len(data["entries"]) == 21


def test_the_command_and_predict_are_one(cli):
    assert cli("nccl", "predict", "allreduce", "-n", "1MiB", *H100) == cli(
        "nccl", "all-reduce", "-n", "1MiB", *H100
    )


def test_the_table_shows_the_choice_the_disabled_entries_and_the_steps(cli):
    out, _ = cli.text(
        "nccl", "allreduce", "-n", "64KiB", "--ranks", "8", "--preset", "dgx-h100", "--explain", columns=80
    )
    chosen = next(line for line in out.splitlines() if "◀ chosen" in line)
    assert chosen.split() == ["Ring", "LL", "15", "µs", "80.57", "GB/s", "15.81", "µs", "◀", "chosen"]
    assert "NCCL chooses Ring/LL: 15.81 µs on 2 channels × 512 threads" in out
    assert "PAT LL, LL128, Simple: PAT runs only AllGather and ReduceScatter" in out
    # the hand-derived Ring LL latency of one node of 8 NVLink GPUs: 6.6 + 14 × 0.6 µs
    assert "latency: base 6.6 µs + (nsteps − nInterSteps) × 0.6 µs = 15 µs" in out
    assert max(map(len, out.splitlines())) <= 80


def test_the_preset_sets_the_nodes(cli):
    data = cli.json("nccl", "allreduce", "-n", "8MiB", "--ranks", "16", "--preset", "dgx-h100")
    assert data["nodes"] == 2 and (data["algorithm"], data["protocol"]) == ("NVLSTree", "Simple")


def test_the_ranges_are_the_sweep_with_times_at_both_ends(cli):
    data = cli.json("nccl", "allreduce", "--min", "8B", "--max", "8GiB", *H100)
    s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=Fraction("12.5"))
    expected = sweep("allreduce", 8, 8 * 2**30, s)
    assert [(r["algorithm"], r["protocol"], r["from_bytes"], r["to_bytes"]) for r in data["ranges"]] == [
        (r.algorithm, r.protocol, r.from_bytes, r.to_bytes) for r in expected.ranges
    ]
    for r in data["ranges"]:  # either side of a switch the choice is the range's
        for n in (r["from_bytes"], r["to_bytes"]):
            p = predict("allreduce", n, s)
            assert (p.algorithm, p.protocol) == (r["algorithm"], r["protocol"])
    out, _ = cli.text("nccl", "allreduce", "--min", "8B", "--max", "8GiB", *H100, columns=80)
    assert "the choice switches at 244.9 KiB (250802 B), 512 MiB (536870912 B)" in out


def test_filters_and_version(cli):
    data = cli.json("nccl", "allreduce", "-n", "8MiB", *H100, "--algo", "ring", "--proto", "^LL128")
    assert (data["algorithm"], data["protocol"]) == ("Ring", "Simple")
    assert (
        cli.json("nccl", "allreduce", "-n", "8MiB", *H100, "--nccl-version", "2.21")["nccl_version"] == "2.21"
    )


def test_2_21_marks_its_fallback_entries(cli):
    args = ("nccl", "allreduce", "-n", "1MiB", "--ranks", "8", "--preset", "dgx-h100", "--algo", "tree")
    out, _ = cli.text(*args, "--nccl-version", "2.21", columns=80)
    rows = [line.split() for line in out.splitlines() if line.startswith("Ring ")]
    assert [(r[1], r[-1]) for r in rows] == [("LL", "fallback"), ("LL128", "fallback"), ("Simple", "fallback")]
    assert "fallback: NCCL 2.21 uses these only when no other entry is enabled:" in out
    assert "  Ring LL, LL128, Simple: Ring disabled by NCCL_ALGO=tree" in out
    assert max(map(len, out.splitlines())) <= 80
    data = cli.json(*args, "--nccl-version", "2.21")
    assert {(e["algorithm"], e["fallback"]) for e in data["entries"] if e["enabled"]} == {
        ("Tree", False), ("Ring", True)}
    assert not any(e["fallback"] for e in cli.json(*args)["entries"])  # 2.30 has no fallback


def test_2_21_says_where_its_nvls_channels_move_the_ring_plateau(cli):
    args = ("nccl", "allreduce", "-n", "8KiB", "--ranks", "16", "--nodes", "2", "--arch", "sm90",
            "--channels", "2", "--bw-intra", "10", "--bw-inter", "10", "--nvls", "--algo", "ring")
    out, _ = cli.text(*args, "--nccl-version", "2.21", columns=80)
    simple = next(line.split() for line in out.splitlines() if line.startswith("Ring      Simple"))
    assert simple[2:4] == ["152.8", "µs"]  # no plateau: 8192 / (16 × 16) < 64
    assert "starts at n = 64 × 16 channels × 16 ranks = 16384 B" in " ".join(out.split())
    out, _ = cli.text(*args, columns=80)  # 2.30: 131.6 × 1.4, as 8192 / (4 × 16) ≥ 64
    simple = next(line.split() for line in out.splitlines() if line.startswith("Ring      Simple"))
    assert simple[2:4] == ["184.2", "µs"] and "raises" not in out


def test_overrides_change_the_constants(cli, tmp_path):
    toml = tmp_path / "tuner.toml"
    toml.write_text("[base_latencies]\nring = [100.0, 100.0, 100.0]\n", encoding="utf-8")
    base = cli.json("nccl", "allreduce", "-n", "1KiB", "--ranks", "8", "--preset", "dgx-h100")
    over = cli.json(
        "nccl", "allreduce", "-n", "1KiB", "--ranks", "8", "--preset", "dgx-h100", "--overrides", str(toml)
    )
    assert base["algorithm"] == "Ring" and over["algorithm"] != "Ring"
    toml.write_text("[base_latency]\n", encoding="utf-8")
    _, err = cli(
        "nccl",
        "allreduce",
        "-n",
        "1KiB",
        "--ranks",
        "8",
        "--preset",
        "dgx-h100",
        "--overrides",
        str(toml),
        rc=2,
    )
    assert err.startswith("error: ") and "unknown table 'base_latency'" in err and err.count("\n") == 1


def test_compare_takes_ranks_and_nodes_from_the_log(cli):
    log = f"{LOGS}/allreduce_a100x16_2node_rdma_oci.txt"
    data = cli.json("nccl", "compare", log, "--preset", "dgx-a100")
    assert (data["ranks"], data["nodes"]) == (16, 2)
    system = System.from_preset(load_preset("dgx-a100"), ranks=16, nodes=2)
    first = data["rows"][0]
    p = predict("allreduce", first["n_bytes"], system)
    assert first["predicted_s"] == float(p.time_s) and first["measured_s"] == pytest.approx(36.47e-6)
    assert first["rel_error"] == pytest.approx(float(p.time_s) / 36.47e-6 - 1)
    assert sum(r["sizes"] for r in data["regimes"]) == len(data["rows"]) == 31
    for k, regime in enumerate(data["regimes"]):  # a regime is a run of sizes with one choice
        rows = [r for r in data["rows"] if r["regime"] == k]
        assert {(r["algorithm"], r["protocol"]) for r in rows} == {(regime["algorithm"], regime["protocol"])}
    out, _ = cli.text("nccl", "compare", log, "--preset", "dgx-a100", columns=80)
    assert "median |relative error|" in out and max(map(len, out.splitlines())) <= 80


def test_compare_finds_the_hosts_behind_a_launcher_prefix(cli, tmp_path):
    """srun --label puts "0: " before every line; the log readers strip it, and so does the host count."""
    plain = f"{LOGS}/allreduce_a100x16_2node_rdma_oci.txt"
    labelled = tmp_path / "labelled.txt"
    with open(plain, encoding="utf-8") as f:
        labelled.write_text("".join(f"0: {line}" for line in f), encoding="utf-8")
    data = cli.json("nccl", "compare", str(labelled), "--preset", "dgx-a100")
    assert (data["ranks"], data["nodes"]) == (16, 2)
    assert data["rows"] == cli.json("nccl", "compare", plain, "--preset", "dgx-a100")["rows"]


def test_compare_on_one_host_and_zero_byte_rows(cli):
    data = cli.json(
        "nccl",
        "compare",
        f"{LOGS}/allgather_b200x2_2node_rdma_gke.txt",
        "--arch",
        "sm100",
        "--channels",
        "2",
        "--bw-intra",
        "20",
        "--bw-inter",
        "20",
    )
    assert data["nodes"] == 2 and all(r["n_bytes"] > 0 for r in data["rows"])
    assert any("0-byte rows skipped" in n for n in data["notes"])
    _, err = cli(
        "nccl",
        "compare",
        f"{LOGS}/allgather_b200x2_2node_rdma_gke.txt",
        "--nodes",
        "1",
        "--preset",
        "dgx-h100",
        rc=2,
    )
    assert "differs from the 2 hosts" in err


def test_preset_from_a_debug_log(cli, tmp_path):
    log = "tests/data/nccl-debug/rtx4090-8gpu-pcie-interleaved.log"
    out, _ = cli("nccl", "preset", log)
    assert out.startswith("# note: ") and "[single.ring]" in out
    target = tmp_path / "box.toml"
    cli("nccl", "preset", log, "--out", str(target))
    assert 'name = "box"' in target.read_text(encoding="utf-8")
    _, err = cli("nccl", "preset", log, "--out", str(target), rc=2)
    assert "exists" in err and "--force" in err
    cli("nccl", "preset", log, "--out", str(target), "--force", "--name", "mine")
    assert cli.json("nccl", "allreduce", "-n", "1MiB", "--ranks", "8", "--preset", str(target))["nodes"] == 1


def test_a_hand_written_preset_with_mistakes(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    text = load_preset("dgx-a100")
    body = "\n".join(
        f"{k} = {v!r}".replace("'", '"').replace("True", "true").replace("False", "false")
        for k, v in text.items()
        if not isinstance(v, dict | list)
    )
    bad.write_text(
        body + '\n[single.ring]\nchannels = 0\nbw_intra = 20.0\nbw_inter = 20.0\ntype_intra = "NVL"\n'
        'type_inter = "PIX"\npattern = 4\n',
        encoding="utf-8",
    )
    _, err = cli("nccl", "allreduce", "-n", "1MiB", "--ranks", "8", "--preset", str(bad), rc=2)
    assert "[single.ring]: channels = 0 is not an integer from 1 to 64" in err and err.count("\n") == 1


def test_presets_lists_every_shipped_preset(cli):
    data = cli.json("nccl", "presets")
    assert [p["name"] for p in data["presets"]] == [
        "dgx-a100",
        "dgx-h100",
        "gb200-nvl72",
        "hgx-h100-4nic",
        "pcie-8x-rtx4090",
    ]
    assert all(p["sources"] and p["description"] for p in data["presets"])
    out, _ = cli.text("nccl", "presets", columns=80)
    assert "sources:" in out and max(map(len, out.splitlines())) <= 80


def test_the_group_completes_collectives_and_commands():
    import typer.main

    from costmodel.cli.nccl import nccl_app

    group = typer.main.get_command(nccl_app)
    ctx = group.make_context("nccl", ["presets"], resilient_parsing=True)
    names = [c.value for c in group.shell_complete(ctx, "p")]
    assert "predict" in names and "presets" in names and "preset" in names
    assert [c.value for c in group.shell_complete(ctx, "all")] == ["allreduce", "allgather"]


def test_a_prediction_loads_no_numpy_sympy_or_matplotlib():
    import subprocess
    import sys

    code = (
        "import sys; from costmodel.cli import main; main(['nccl', 'allreduce', '-n', '8MiB', '--ranks', "
        "'16', '--preset', 'dgx-h100', '--json']); "
        "print([m for m in ('numpy', 'sympy', 'matplotlib') if m in sys.modules], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.strip() == "[]"


def test_plot_nccl_data_and_image(cli, tmp_path):
    data = cli.json(
        "plot", "nccl", "allreduce", "--ranks", "16", "--preset", "dgx-h100", "--min", "8B", "--max", "8GiB"
    )
    s = System.from_preset(load_preset("dgx-h100"), ranks=16, nodes=2)
    assert [w["n_bytes"] for w in data["switches"]] == [
        r.from_bytes for r in sweep("allreduce", 8, 8 * 2**30, s).ranges[1:]
    ]
    assert {(x["algorithm"], x["protocol"]) for x in data["series"]} >= {
        ("Ring", "LL"),
        ("NVLSTree", "Simple"),
    }
    assert all(t is not None for t in data["chosen"]["time_s"])
    pytest.importorskip("matplotlib")
    out, _ = cli(
        "plot", "nccl", "allreduce", "--ranks", "8", "--preset", "dgx-a100", "--out", str(tmp_path / "n.svg")
    )
    assert out.startswith("wrote ") and (tmp_path / "n.svg").stat().st_size > 1000


def test_compare_does_not_guess_nodes_from_cut_rank_lines(cli, tmp_path):
    """A log whose # Rank lines were cut names some hosts, not all: the node count must be given, and
    any count that the named hosts and the ranks allow is taken (a GB200 NVL72 rack: 72 ranks on 18)."""
    rack = f"{LOGS}/allreduce_gb200x72_nvl72_elided_coreweave.txt"
    gb200 = ("--arch", "sm100", "--channels", "16", "--bw-intra", "40", "--bw-inter", "40")
    _, err = cli("nccl", "compare", rack, *gb200, rc=2)
    assert "# Rank lines were cut" in err and "--nodes N" in err and err.count("\n") == 1
    data = cli.json("nccl", "compare", rack, *gb200, "--nodes", "18")
    assert (data["ranks"], data["nodes"]) == (72, 18) and len(data["rows"]) == 5
    _, err = cli("nccl", "compare", rack, *gb200, "--nodes", "5", rc=2)
    assert "--nodes 5 does not divide the log's 72 ranks" in err
    # 16 ranks whose # Rank lines keep the first node's 8: not one node of 16, not guessed
    full = f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt"
    cut = tmp_path / "cut.txt"
    with open(full, encoding="utf-8") as f:
        cut.write_text("".join(line for line in f if "on bm-h100-02 device" not in line), encoding="utf-8")
    _, err = cli("nccl", "compare", str(cut), "--preset", "dgx-h100", rc=2)
    assert "name 1 host but not all 16 ranks" in err
    assert cli.json("nccl", "compare", str(cut), "--preset", "dgx-h100", "--nodes", "2")["rows"] == \
        cli.json("nccl", "compare", full, "--preset", "dgx-h100")["rows"]


def test_compare_refuses_an_rccl_log(cli):
    _, err = cli("nccl", "compare", "tests/data/excerpts/allreduce_mi300x8_1node_rccl_hpcaienvs.txt", "--preset", "dgx-a100",
                 rc=2)
    assert "rccl-tests log" in err and "calibrate fit reads it" in err and err.count("\n") == 1


def test_compare_models_the_release_and_the_settings_the_log_ran(cli, tmp_path):
    log = f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt"  # "NCCL version 2.26.2+cuda12.8"
    data = cli.json("nccl", "compare", log, "--preset", "dgx-h100")
    assert data["nccl_version"] == "2.30"
    assert "the log ran NCCL 2.26.2: modelled with NCCL 2.30's tuning" in " ".join(data["notes"])
    given = cli.json("nccl", "compare", log, "--preset", "dgx-h100", "--nccl-version", "2.21")
    assert given["nccl_version"] == "2.21"
    assert any("the log ran NCCL 2.26.2; modelled with NCCL 2.21's tuning as given" in n for n in given["notes"])
    old = tmp_path / "old.txt"  # nccl-tests' header names the library by its version code
    with open(log, encoding="utf-8") as f:
        text = f.read().replace("NCCL version 2.26.2+cuda12.8\n", "")
    old.write_text("# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n" + text, encoding="utf-8")
    data = cli.json("nccl", "compare", str(old), "--preset", "dgx-h100")
    assert data["nccl_version"] == "2.21" and any("NCCL 2.19.3" in n for n in data["notes"])
    ring = f"{LOGS}/allreduce_h100x16_2node_8xndr_ring_nccltests309.txt"  # run with NCCL_ALGO=Ring
    data = cli.json("nccl", "compare", ring, "--preset", "dgx-h100")
    assert {r["algorithm"] for r in data["rows"]} == {"Ring"} and "NCCL_ALGO=Ring, as the log ran" in data["notes"]
    data = cli.json("nccl", "compare", ring, "--preset", "dgx-h100", "--algo", "tree")
    assert {r["algorithm"] for r in data["rows"]} == {"Tree"}
    assert any("the log ran with NCCL_ALGO=Ring; modelled with tree as given" in n for n in data["notes"])
    info = tmp_path / "info.txt"  # NCCL_DEBUG=INFO prints what the environment set
    info.write_text("host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n"
                    "host:1:1 [0] NCCL INFO NCCL_TREE_THRESHOLD set by environment to 0\n" + text, encoding="utf-8")
    data = cli.json("nccl", "compare", str(info), "--preset", "dgx-h100")
    assert {r["protocol"] for r in data["rows"]} == {"Simple"}
    assert any("NCCL_TREE_THRESHOLD=0" in n and "ignored" in n for n in data["notes"])


def test_compare_reads_a_log_behind_kubectl_timestamps(cli, tmp_path):
    plain = f"{LOGS}/allreduce_h100x8_1node_nvswitch_dgxc.txt"
    stamped = tmp_path / "kubectl.txt"
    with open(plain, encoding="utf-8") as f:
        stamped.write_text("".join(f"2025-03-14T09:26:{k % 60:02d}.{k:09d}Z {line}" for k, line in enumerate(f)),
                           encoding="utf-8")
    assert cli.json("nccl", "compare", str(stamped), "--preset", "dgx-h100")["rows"] == \
        cli.json("nccl", "compare", plain, "--preset", "dgx-h100")["rows"]


def test_compare_takes_the_collective_the_note_asks_for(cli, tmp_path):
    """A log that does not name its test: the collective is inferred, and the note names --collective,
    which compare takes."""
    unnamed = tmp_path / "unnamed.txt"
    with open(f"{LOGS}/allreduce_a100x16_2node_rdma_oci.txt", encoding="utf-8") as f:
        unnamed.write_text("".join(line for line in f if not line.startswith("# source:")), encoding="utf-8")
    data = cli.json("nccl", "compare", str(unnamed), "--preset", "dgx-a100")
    assert any("give --collective to be explicit" in n for n in data["notes"])
    given = cli.json("nccl", "compare", str(unnamed), "--preset", "dgx-a100", "--collective", "allreduce")
    assert given["rows"] == data["rows"] and not any("--collective" in n for n in given["notes"])


def test_an_unknown_word_offers_what_the_group_takes(cli):
    _, err = cli("nccl", "xyzzy", rc=2)
    offered = err.split("choose from ")[1].strip().split(", ")
    assert len(offered) == len(set(offered)) and "alltoall" not in offered
    assert {"allreduce", "compare", "predict"} <= set(offered)


def test_a_rack_of_one_nvlink_domain_is_one_node_whatever_its_hosts(cli, tmp_path):
    """With the GB200 NVL72 preset, NCCL's node is the NVLink domain (MNNVL): a cut log needs no
    --nodes, a complete one listing 18 hosts is one node, and a count of hosts is refused in one line."""
    rack = f"{LOGS}/allreduce_gb200x72_nvl72_elided_coreweave.txt"
    data = cli.json("nccl", "compare", rack, "--preset", "gb200-nvl72", "--as-measured")
    assert (data["ranks"], data["nodes"]) == (72, 1)
    assert {r["algorithm"] for r in data["rows"]} == {"NVLS"}
    assert any("one NVLink domain of 72 GPUs over 18 hosts" in n for n in data["notes"])
    with open(rack, encoding="utf-8") as f:
        lines = f.read().splitlines(keepends=True)
    ranks = [f"#  Rank {r:2d} Group  0 Pid {1000 + r:5d} on tray-{r // 4:02d} device  {r % 4} [0x01] "
             "NVIDIA Graphics Device\n" for r in range(72)]
    full = tmp_path / "full.txt"
    full.write_text(lines[0] + "".join(ranks) + "".join(lines[2:]), encoding="utf-8")
    assert cli.json("nccl", "compare", str(full), "--preset", "gb200-nvl72", "--as-measured")["rows"] == \
        data["rows"]
    _, err = cli("nccl", "compare", str(full), "--preset", "gb200-nvl72", "--nodes", "18", rc=2)
    assert "one NVLink domain of 72 GPUs over 18 hosts" in err and "drop --nodes" in err
    assert err.count("\n") == 1
    _, err = cli("nccl", "predict", "allreduce", "-n", "1GiB", "--ranks", "144", "--preset", "gb200-nvl72", rc=2)
    assert "no 'multi' graphs" in err and "one NVLink domain" in err and err.count("\n") == 1


def test_logs_as_they_are_pasted(cli, tmp_path):
    """An issue's paste: indented under a list item, send/recv instead of a collective, cut in its last row."""
    full = f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt"
    indented = tmp_path / "indented.txt"
    with open(full, encoding="utf-8") as f:
        indented.write_text("".join("  " + line for line in f), encoding="utf-8")
    assert cli.json("nccl", "compare", str(indented), "--preset", "dgx-h100")["rows"] == \
        cli.json("nccl", "compare", full, "--preset", "dgx-h100")["rows"]
    pair = "tests/data/excerpts/sendrecv_a40x2_2node_nccltests214.txt"
    _, err = cli("nccl", "compare", pair, "--arch", "sm86", "--intra", "pci", "--channels", "2", "--bw-intra", "6",
                 "--bw-inter", "6", rc=2)
    assert "measures send/recv, point to point" in err and "calibrate fit reads it" in err
    assert err.count("\n") == 1 and "pt2pt" not in err
    data = cli.json("calibrate", "fit", pair)
    assert any(w.startswith("line 16: the last row is cut short") for w in data["notes"] + data["warnings"])
    assert any("β is 0" in w for w in data["warnings"])


def test_a_rank_count_given_is_no_longer_unknown(cli, tmp_path):
    rows = tmp_path / "rows.txt"  # the header and the sizes below 1 KiB alone: busbw/algbw is 0.00/0.00
    with open(f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith(("#  Rank", "# nThread"))]
    first = next(i for i, line in enumerate(lines) if line.split()[:1] == ["8"])
    rows.write_text("".join(lines[:first + 7]), encoding="utf-8")
    _, err = cli("nccl", "compare", str(rows), "--preset", "dgx-h100", rc=2)
    assert "does not say how many ranks ran" in err
    data = cli.json("nccl", "compare", str(rows), "--preset", "dgx-h100", "--ranks", "16", "--nodes", "2")
    assert not any("not known" in n for n in data["notes"]) and "16 ranks as given" in data["notes"]


def test_a_rank_count_the_rank_lines_contradict_is_refused_in_options(cli):
    _, err = cli("calibrate", "fit", f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt", "-p", "8", rc=2)
    assert "p=8 was requested but the log lists 16 ranks; drop -p or give 16" in err and err.count("\n") == 1


def test_an_unknown_collective_for_a_log_offers_what_nccls_model_prices(cli):
    log = f"{LOGS}/allreduce_h100x16_2node_8xndr_nccltests309.txt"
    for command in ("compare", "check"):
        _, err = cli("nccl", command, log, "--preset", "dgx-h100", "--collective", "foo", rc=2)
        assert err == "error: unknown collective 'foo'; choose from allreduce, allgather, reduce-scatter, " \
                      "broadcast, reduce\n"


OLD_ALLGATHER = "tests/data/excerpts/allgather_v100x12_dgx2_oldformat_wrong_jgwohlbier.txt"
V100 = ["--arch", "sm70", "--channels", "6", "--bw-intra", "21"]


def test_compare_reads_an_old_allgather_log_on_its_ranks(cli):
    """busbw = algbw, as nccl-tests printed all_gather's before June 2020, says nothing of p: its 12 '# Rank'
    lines stand, with --ranks 12 or without, and calibrate fit -p 12 takes it too."""
    data = cli.json("nccl", "compare", OLD_ALLGATHER, *V100)
    assert data["ranks"] == 12 and len(data["rows"]) == 26
    assert any("before June 2020" in n for n in data["notes"])
    assert cli.json("nccl", "compare", OLD_ALLGATHER, *V100, "--ranks", "12")["rows"] == data["rows"]
    assert cli.json("calibrate", "fit", OLD_ALLGATHER, "-p", "12")["p"] == 12


@pytest.mark.parametrize("command", [("nccl", "compare", f"{LOGS}/allreduce_a100x8_1node_nvswitch_superbench.txt"),
                                     ("nccl", "check", f"{LOGS}/allreduce_a100x8_1node_nvswitch_superbench.txt"),
                                     ("nccl", "allreduce", "-n", "1MiB", "--ranks", "8")])
@pytest.mark.parametrize(("option", "value", "message"), [
    ("--bw-intra", "1e400", "'1e400' has an exponent out of range"),
    ("--bw-intra", "1e-300", "'1e-300' has an exponent out of range"),
    ("--bw-intra", "1e-7", "--bw-intra 1e-07 is too small; at least 1e-06 (GB/s per channel or µs)"),
    ("--bw-intra", "2e9", "--bw-intra 2000000000 is too large; at most 1,000,000,000"),
    ("--net-latency", "1e400", "'1e400' has an exponent out of range"),
])
def test_bandwidths_and_latencies_out_of_any_link_are_one_line(cli, command, option, value, message):
    """A value past a float (1e400) once ended in an OverflowError, and 1e-300 GB/s printed errors of
    300 digits: both sides are refused, as a unit's exponent is."""
    hardware = ["--arch", "sm80", "--channels", "8", "--bw-intra", "20"]
    if option == "--bw-intra":
        hardware[-1] = value
    else:
        hardware += [option, value]
    _, err = cli(*command, *hardware, rc=2)
    assert message in err and err.startswith("error: ") and err.count("\n") == 1


EFA = "tests/data/excerpts/allreduce_t4x2_2node_efa_tagoutput_eksblueprints.txt"
T4 = ["--arch", "sm75", "--channels", "2", "--bw-intra", "10", "--bw-inter", "3", "--intra", "pci"]


def test_compare_applies_the_protocol_a_network_plugin_set(cli):
    """aws-ofi-nccl sets NCCL_PROTO itself ('NET/OFI Setting NCCL_PROTO to "simple"'): NCCL runs with it, so
    the model does, and the note says who set it."""
    data = cli.json("nccl", "compare", EFA, *T4)
    assert {r["protocol"] for r in data["rows"]} == {"Simple"}
    assert "NCCL_PROTO=simple, as the log ran (set by the network plugin, NET/OFI)" in data["notes"]
    given = cli.json("nccl", "compare", EFA, *T4, "--proto", "LL")
    assert {r["protocol"] for r in given["rows"]} == {"LL"}
    assert ("the log ran with NCCL_PROTO=simple (set by the network plugin, NET/OFI); modelled with LL as "
            "given") in given["notes"]


@pytest.mark.parametrize("log", ["rccl_debuginfo_macpro_4gpu_graph_excerpt.txt",  # 'RCCL version : 2.30.4'
                                 "rccl_debuginfo_macpro_4gpu_graph_only.txt"])  # its XGMI links alone
def test_preset_refuses_an_rccl_log(cli, log):
    """RCCL's debug log has NCCL's INFO lines, but its own topology (XGMI links) and tuning: no NCCL preset."""
    _, err = cli("nccl", "preset", f"tests/data/excerpts/{log}", rc=2)
    assert err == (f"error: tests/data/excerpts/{log} is an RCCL log (RCCL, AMD's library): RCCL searches its "
                   "topology and tunes its own choices, which NCCL's model does not describe, so no NCCL preset "
                   "is made from it\n")


G2 = "tests/data/excerpts/allreduce_h100x4_2node_g2_fenced_dgx0607.txt"


@pytest.mark.parametrize("command", ["compare", "check"])
def test_a_log_of_part_nodes_against_a_whole_node_preset_says_so(cli, command):
    """2 DGX H100 nodes running 2 GPUs each: the user gave no --ranks, so the error is the log's shape
    against the preset's, with what to do instead."""
    _, err = cli("nccl", command, G2, "--preset", "dgx-h100", rc=2)
    assert err == ("error: the log ran 4 ranks on 2 nodes, 2 GPUs per node, where preset 'dgx-h100' describes 8 "
                   "GPUs per node; describe the hardware with --arch, --channels, --bw-intra and --bw-inter "
                   "instead of --preset\n")
    data = cli.json("nccl", "compare", G2, "--arch", "sm90", "--channels", "16", "--bw-intra", "20", "--bw-inter", "12")
    assert (data["ranks"], data["nodes"]) == (4, 2)


ONE_PROCESS = "tests/data/excerpts/allreduce_b300x8_1node_oneprocess_ocigpuquickstarts.txt"


@pytest.mark.parametrize("command", ["compare", "check"])
def test_one_process_that_drove_every_rank_ran_on_one_node(cli, command):
    """No # Rank lines, but `# nThread 1 nGpus 8` and a busbw/algbw of 8 ranks: one process drove all
    8, and a process runs on one host, so the node count is known; a contrary --nodes is refused."""
    b300 = ("--arch", "sm100", "--channels", "16", "--bw-intra", "40", "--nvls")
    data = cli.json("nccl", command, ONE_PROCESS, *b300)
    comparison = data if command == "compare" else data["comparison"]
    assert (comparison["ranks"], comparison["nodes"]) == (8, 1)
    _, err = cli("nccl", command, ONE_PROCESS, *b300, "--nodes", "2", rc=2)
    assert err == ("error: --nodes 2, but one process drove all 8 ranks (the log's nThread × nGpus is 8), and a "
                   "process runs on one node; drop --nodes\n")


def test_a_band_of_one_size_is_counted_in_the_singular(cli):
    """The B300 log kept one size: its band says '(1 size)', as the median over it says '1 size'."""
    out, _ = cli("nccl", "compare", ONE_PROCESS, "--arch", "sm100", "--channels", "16", "--bw-intra", "40", "--nvls")
    assert "over 1 size (error" in out and "at ≥ 1 MiB (1 size)" in out and "sizes)" not in out


GB300_RACK = "tests/data/excerpts/allreduce_gb300x64_nvl72_elided_ocigpuquickstarts.txt"


def test_hosts_of_one_nvlink_domain_described_by_hand_point_to_a_spanning_preset(cli):
    """64 GB300 of one NVL72 rack over 16 hosts, the # Rank lines cut to 2 hosts: NCCL sees one node.
    --nodes 1 alone cannot say that a node spans hosts: refused with the ways that can."""
    _, err = cli("nccl", "compare", GB300_RACK, "--arch", "sm100", "--channels", "24", "--bw-intra", "40",
                 "--nvls", "--nodes", "1", rc=2)
    assert err.startswith("error: --nodes 1 is fewer than the 2 hosts the log's # Rank lines name; ")
    assert "one node to NCCL: describe them with a preset whose node spans hosts (gb200-nvl72" in err
    assert err.count("\n") == 1
    data = cli.json("nccl", "compare", GB300_RACK, "--preset", "gb200-nvl72")
    assert (data["ranks"], data["nodes"]) == (64, 1)


def test_hosts_per_node_describes_an_nvlink_domain_by_hand(cli):
    """--hosts-per-node beside the explicit hardware: the log's hosts count no nodes, the rack is one."""
    flags = ("--arch", "sm100", "--channels", "24", "--bw-intra", "40", "--nvls")
    data = cli.json("nccl", "compare", GB300_RACK, *flags, "--hosts-per-node", "16")
    assert (data["ranks"], data["nodes"]) == (64, 1)
    data = cli.json("nccl", "check", GB300_RACK, *flags, "--hosts-per-node", "16")
    assert (data["comparison"]["ranks"], data["comparison"]["nodes"]) == (64, 1)
    _, err = cli("nccl", "compare", GB300_RACK, *flags, "--nodes", "1", rc=2)
    assert "or give --hosts-per-node H beside the explicit hardware" in err
    _, err = cli("nccl", "check", GB300_RACK, "--preset", "gb200-nvl72", "--hosts-per-node", "18", rc=2)
    assert err == "error: --preset describes the hardware; drop --hosts-per-node (or drop --preset and describe " \
                  "the hardware with them)\n"
    _, err = cli("nccl", "compare", GB300_RACK, *flags, "--hosts-per-node", "0", rc=2)
    assert "--hosts-per-node" in err and err.count("\n") == 1


@pytest.mark.parametrize("command", ["compare", "check"])
def test_a_run_of_one_size_is_named_once(cli, command):
    """The B300 log's one size makes a regime (compare) and a band (check) of one: '8 GiB (1)', not
    '8 GiB – 8 GiB (1)'."""
    out, _ = cli("nccl", command, ONE_PROCESS, "--arch", "sm100", "--channels", "16", "--bw-intra", "40", "--nvls")
    assert "8 GiB (1)" in out and "8 GiB – 8 GiB" not in out


def test_rank_lines_that_lost_their_hash_still_name_the_hosts(cli):
    """A post whose Markdown dropped the '#' of nccl-tests' own lines (headings): 'Rank  0 Group  0 Pid ... on
    nid005471 device  0' still counts the ranks and names the hosts, as the bare column header is read."""
    log = "tests/data/excerpts/allreduce_gh200x8_2node_nohash_derived_cscs.txt"
    data = cli.json("nccl", "compare", log, "--arch", "sm90", "--channels", "4", "--bw-intra", "24",
                    "--bw-inter", "24", "--cpu", "arm")
    assert (data["ranks"], data["nodes"]) == (8, 2) and len(data["rows"]) == 8
    assert not any("busbw/algbw" in n for n in data["notes"])  # the ranks came from the lines, not inferred


def test_the_launch_is_read_from_the_command_line_when_the_nthread_line_is_lost(cli):
    """NVIDIA/nccl-tests#194 kept `all_reduce_perf ... -g 2` and the table: one process drove both ranks,
    so they ran on one node (no --nodes asked) and each call pays the -g 2 launch."""
    log = "tests/data/excerpts/allreduce_h100pciex2_g2_cmdline_nccltests194.txt"
    flags = ("--arch", "sm90", "--channels", "4", "--bw-intra", "20")
    data = cli.json("nccl", "compare", log, *flags, "--as-measured")
    assert (data["ranks"], data["nodes"]) == (2, 1)
    out, _ = cli("nccl", "check", log, *flags)
    assert "one thread drove 2 GPUs (nccl-tests -g 2)" in " ".join(out.split())
