"""The command-line contract of calibrate fit and report: JSON keys, the profile written, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.calibration import read_csv
from tests.clirun import run, run_json
from tests.hidden import run_without

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
A100 = LOGS / "nccl-tests" / "allreduce_a100x16_2node_rdma_oci.txt"
OSU = LOGS / "osu" / "osu_allreduce_kind_2pod_2rank_tcp.txt"
GLOO = LOGS.parent / "calibration" / "gloo_2rank_cpu.csv"


def test_fit_json_contract(capsys):
    data = run_json(capsys, "calibrate", "fit", str(A100))
    assert {"collective", "p", "alpha_s", "beta_s_per_byte", "segments", "median_rel_error"} <= set(data)
    assert (data["collective"], data["p"]) == ("allreduce", 16)
    assert 1 <= len(data["segments"]) <= 3
    assert all({"from_bytes", "to_bytes", "alpha_s", "beta_s_per_byte"} <= set(s) for s in data["segments"])
    assert data["median_rel_error"] <= 0.05 and data["median_rel_error_ge_1mib"] <= 0.03
    # the profile's link: α from the small-message segment, β from the bandwidth regime
    assert 0 < data["alpha_s"] <= data["segments"][0]["alpha_s"]
    assert data["beta_s_per_byte"] == data["segments"][-1]["beta_s_per_byte"]
    assert isinstance(data["warnings"], list)


def test_fit_writes_a_profile_every_command_loads(capsys, tmp_path: Path):
    profile = tmp_path / "a100.toml"
    out, _ = run(capsys, "calibrate", "fit", str(A100), "--out", str(profile))
    assert profile.exists() and f"wrote {profile}" in out
    fitted = run_json(capsys, "calibrate", "fit", str(A100))
    # the ring it was fitted on (p = 16) is priced by the segment of the size n its messages (n/16)
    # were measured at (the first below the second's first size, ...), or by a later segment's first
    # size where that costs less: 30α + 15/8·nβ at the cheapest of them
    segments = fitted["segments"]

    def ring_at(k: int, n: float) -> float:
        return 30 * segments[k]["alpha_s"] + 15 / 8 * max(n, segments[k]["from_bytes"]) * segments[k]["beta_s_per_byte"]

    for n, k in ((1, 0), (segments[1]["from_bytes"] - 1, 0), (segments[1]["from_bytes"], 1),
                 (2**30, len(segments) - 1)):
        cost = run_json(capsys, "cost", "allreduce", "ring", "-p", "16", "-n", str(n), "--profile", str(profile))
        ring = cost["results"][0]
        best = min(range(k, len(segments)), key=lambda j: ring_at(j, n))
        assert {m["segment"] for m in ring["messages"]} == {best + 1}
        assert {m["message_bytes"] for m in ring["messages"]} == {n / 16}
        assert ring["time_s"] == pytest.approx(ring_at(best, n), rel=5e-5)  # the profile keeps 6 digits
        assert ring["latency_s"] == pytest.approx(30 * segments[best]["alpha_s"], rel=5e-5)
    # below the second segment the first one's line, extrapolated from its last measured size, costs
    # more than the second's first size here: the ring is priced as n at that size
    below = segments[1]["from_bytes"] - 1
    assert ring_at(1, below) < ring_at(0, below)
    # ... and [link] is the summary: α of the small messages, β of the large
    summary = run_json(capsys, "profiles", str(profile))["profiles"][0]
    assert summary["alpha_s"] == pytest.approx(fitted["alpha_s"], rel=1e-5)
    assert summary["beta_s_per_byte"] == pytest.approx(fitted["beta_s_per_byte"], rel=1e-5)
    _, err = run(capsys, "calibrate", "fit", str(A100), "--out", str(profile), rc=2)
    assert "exists; pass --force" in err
    run(capsys, "calibrate", "fit", str(A100), "--out", str(profile), "--force")


def test_fit_says_why_the_link_alpha_is_not_segment_1s_where_it_gives_it(cli):
    out, _ = cli.text("calibrate", "fit", str(A100), columns=200)
    (summary,) = [line for line in out.splitlines() if "the profile's [link]" in line]
    # segment 1's row says 1.355 µs; the link's 1.216 µs is the 8 B run's 36.47 µs over a(p) = 30
    assert ("α 1.216 µs from segment 1 (its 1.355 µs capped at the fastest run over a(p): 36.47 µs at 8 B / 30)"
            in summary)
    data = cli.json("calibrate", "fit", str(A100))
    assert data["alpha_from"].startswith("segment 1 (its 1.355 µs capped") and data["beta_from"] == "segment 3"


def test_a_fit_that_misses_its_target_says_so_in_one_line_and_the_profile_records_it(cli, tmp_path: Path):
    profile = tmp_path / "kind.toml"
    out, _ = cli.text("calibrate", "fit", str(OSU), "-p", "2", "--out", str(profile), columns=200)
    missed = [line for line in out.splitlines() if "target missed" in line]
    assert missed == ["warning: target missed: median |error| from 1 MiB on 3.08% (at most 3%, on 1 size)"]
    text = profile.read_text(encoding="utf-8")
    assert "target_met = false\nworst_bytes = 2048\nworst_error = -0.2772\n" in text
    data = cli.json("calibrate", "fit", str(OSU), "-p", "2")
    assert data["target"]["met"] is False and data["target"]["worst_n_bytes"] == 2048
    assert data["warnings"][0].startswith("target missed: ")
    shown = cli.json("profiles", str(profile))["profiles"][0]["fits"][0]
    assert (shown["target_met"], shown["worst_n_bytes"], shown["worst_rel_error"]) == (False, 2048, -0.2772)
    assert cli.json("calibrate", "fit", str(A100))["target"]["met"] is True


def test_report_rows_and_busbw(capsys):
    data = run_json(capsys, "calibrate", "report", str(OSU), "-p", "2")
    rows = data["rows"]
    assert [r["n_bytes"] for r in rows] == sorted(r["n_bytes"] for r in rows)
    first = rows[0]
    # allreduce at p = 2: busbw = algbw × 2(p − 1)/p = algbw
    assert first["busbw_measured_bytes_per_s"] == pytest.approx(first["n_bytes"] / first["measured_s"])
    assert data["fit"]["p"] == 2 and data["bus_factor"] == 1
    table, _ = run(capsys, "calibrate", "report", str(OSU), "-p", "2")
    assert "busbw measured" in table and "1.049 MB" in table


def test_report_plot_without_matplotlib_says_how_to_install(tmp_path: Path):
    argv = ["calibrate", "report", str(OSU), "-p", "2", "--plot", str(tmp_path / "r.png")]
    done = run_without("matplotlib", f"from costmodel.cli import main; sys.exit(main({argv!r}))")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert "pip install 'costmodel-collectives[plot]'" in done.stderr
    assert not (tmp_path / "r.png").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["calibrate", "fit", str(OSU)], "give the number of ranks"),
    (["calibrate", "fit", str(A100), "--collective", "allgather"], "the log measures allreduce"),
    (["calibrate", "fit", "/nonexistent.txt"], "/nonexistent.txt"),
    (["calibrate", "fit", str(A100), "-p", "8"], "16"),
])
def test_errors_are_one_line(capsys, args, message):
    _, err = run(capsys, *args, rc=2)
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("content", [b"", b"\x00\xff\x00 junk", b"# nThread 1 nGpus 1\n#  size count type\n",
                                     b"       8   2  float sum  -1   nan  0.00  0.00  0\n"])
def test_bad_logs_name_the_file(capsys, tmp_path: Path, content: bytes):
    log = tmp_path / "bad.txt"
    log.write_bytes(content)
    _, err = run(capsys, "calibrate", "fit", str(log), rc=2)
    assert err.startswith(f"error: {log}") and err.count("\n") == 1


def test_run_on_cpus_with_gloo_writes_csv_and_profile(capsys, tmp_path: Path):
    pytest.importorskip("torch", reason="calibrate run needs PyTorch: pip install 'costmodel-collectives[calibrate]'")
    csv, profile = tmp_path / "raw.csv", tmp_path / "cpu.toml"
    data = run_json(capsys, "calibrate", "run", "--ranks", "2", "--backend", "gloo", "--sizes", "8B..64KiB",
                    "--collectives", "allreduce,pt2pt", "--budget", "20ms", "--csv", str(csv), "--out", str(profile))
    assert data["backend"] == "gloo" and data["profile_from"] == "allreduce"
    assert data["timing"] == "per-iteration" and data["repeat"] == 1
    # the spread of each size: all-reduce in place only (torch's), the ping-pong out of place
    assert {(s["collective"], s["in_place"]) for s in data["sizes"]} == {("allreduce", True), ("pt2pt", False)}
    assert all(s["sweeps"] == 1 and 0 < s["p50_s"] <= s["p95_s"] for s in data["sizes"])
    assert set(data["sizes"][0]) == {"collective", "n_bytes", "in_place", "samples", "sweeps", "mean_s", "p50_s",
                                     "p95_s"}
    text = profile.read_text()
    assert 'collective = "allreduce"' in text and "[collective.pt2pt]" in text and "[[segment]]" in text
    assert [f["collective"] for f in data["fits"]] == ["allreduce", "pt2pt"]
    assert data["alpha_s"] >= 0 and data["beta_s_per_byte"] >= 0
    assert csv.exists() and profile.exists()
    fitted = run_json(capsys, "calibrate", "fit", str(csv), "--collective", "allreduce")
    assert fitted["p"] == 2 and fitted["collective"] == "allreduce"
    cost = run_json(capsys, "cost", "allreduce", "ring", "-p", "2", "-n", "1MiB", "--profile", str(profile))
    assert cost["results"][0]["time_s"] > 0
    # the small messages are priced from one segment: the small-message segment, or a larger one whose
    # line is cheaper there (each price is the envelope's; on a loaded machine the smallest sizes can
    # measure slower than the next segment's line).  Its α is whatever this machine measured (on a
    # loaded one, 0 can be the best line); the recorded run below checks what follows from α > 0
    small = run_json(capsys, "cost", "allreduce", "ring", "-p", "8", "-n", "8", "--profile", str(profile))
    ring = small["results"][0]
    (used,) = {m["segment"] for m in ring["messages"]}
    segment = data["fits"][0]["segments"][used - 1]
    assert ring["latency_s"] == pytest.approx(14 * segment["alpha_s"], rel=1e-5)


def test_a_recorded_gloo_run_gives_a_profile_whose_small_messages_have_a_latency(capsys, tmp_path: Path):
    """The same chain on a ``calibrate run`` recorded on a 2-core CPU machine: the fitted profile prices
    8-byte messages from a segment with α > 0, so latency-bound algorithms win below a crossover."""
    profile = tmp_path / "cpu.toml"
    fits = run_json(capsys, "calibrate", "fit", str(GLOO), "--out", str(profile))["fits"]
    assert [f["collective"] for f in fits] == ["allreduce", "pt2pt"] and fits[0]["p"] == 2
    small = run_json(capsys, "cost", "allreduce", "ring", "-p", "8", "-n", "8", "--profile", str(profile))
    ring = small["results"][0]
    (used,) = {m["segment"] for m in ring["messages"]}
    segment = fits[0]["segments"][used - 1]
    assert segment["alpha_s"] > 0
    assert ring["latency_s"] == pytest.approx(14 * segment["alpha_s"], rel=1e-5)
    best = run_json(capsys, "best", "allreduce", "-p", "8", "--profile", str(profile), "--max", "64MiB")
    assert best["ranges"][0]["algorithm"] == "recursive-doubling" and best["ranges"][0]["to_bytes"] > 8


def test_run_without_backend_names_the_csv_after_the_backend_chosen(capsys, tmp_path: Path, monkeypatch):
    torch = pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    if torch.cuda.is_available():
        pytest.skip("auto chooses nccl on this machine")
    monkeypatch.chdir(tmp_path)
    data = run_json(capsys, "calibrate", "run", "--sizes", "8B..64B", "--collectives", "allreduce",
                    "--budget", "5ms")
    assert (data["backend"], data["csv"]) == ("gloo", "calibration-gloo.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["calibration-gloo.csv"]
    assert read_csv(tmp_path / "calibration-gloo.csv").backend == "gloo"
    # the file is there now: a second run refuses to overwrite it without --force
    _, err = run(capsys, "calibrate", "run", "--sizes", "8B..64B", "--collectives", "allreduce", rc=2)
    assert err == "error: calibration-gloo.csv exists; pass --force to overwrite it\n"


def test_run_repeat_prints_each_sizes_spread_over_the_sweeps(capsys, tmp_path: Path, monkeypatch):
    pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    monkeypatch.setenv("COLUMNS", "80")
    csv = tmp_path / "raw.csv"
    out, _ = run(capsys, "calibrate", "run", "--backend", "gloo", "--sizes", "8B..64B", "--collectives",
                 "allgather", "--budget", "5ms", "--repeat", "2", "--csv", str(csv))
    lines = out.splitlines()
    assert lines[0].startswith("allgather · measured, 2 sweeps: the mean, p50 and p95 of every timed")
    assert lines[2].split() == ["size", "placement", "mean", "p50", "p95", "samples"]
    placements = [" ".join(line.split()[2:-7]) for line in lines[3:11]]  # size, then 3 times and a count
    assert placements == ["out of place", "in place"] * 4 and lines[11] == ""
    assert "allgather · p = 2 · assumed ring" in out
    assert {line.split(",")[6] for line in csv.read_text().splitlines()[2:]} == {"1", "2"}


def test_run_nccl_without_a_gpu_is_one_error_line(capsys, tmp_path: Path):
    torch = pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    _, err = run(capsys, "calibrate", "run", "--backend", "nccl", "--csv", str(tmp_path / "x.csv"), rc=2)
    assert err.startswith("error: backend 'nccl' cannot run: ") and err.count("\n") == 1


def test_run_launched_by_mpirun_without_master_addr_is_one_error_line(capsys, tmp_path: Path, monkeypatch):
    pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "0")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    _, err = run(capsys, "calibrate", "run", "--backend", "gloo", "--csv", str(tmp_path / "x.csv"), rc=2)
    assert err == ("error: rank 0 of 4 was started by open-mpi (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE) but "
                   "MASTER_ADDR is not set; export MASTER_ADDR=<rank 0's host> on every rank (and MASTER_PORT, "
                   "default 29500)\n")


def test_report_plot_is_a_png_with_its_title(capsys, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    png = tmp_path / "report.png"
    run(capsys, "calibrate", "report", str(A100), "--plot", str(png))
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (700, 850)  # 7 × 8.5 inches at 100 dpi
    assert b"allreduce, p = 16: measured against the fitted" in data  # the title, in the PNG's metadata
    _, err = run(capsys, "calibrate", "report", str(A100), "--plot", str(tmp_path / "report.gif"), rc=2)
    assert "no .png, .svg or .pdf suffix" in err


def test_run_interrupted_says_what_was_kept_and_exits_130(capsys, tmp_path: Path, monkeypatch):
    pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    from costmodel.calibration import bench

    csv = tmp_path / "raw.csv"

    def interrupted(config, progress=None):
        raise bench.Interrupted(72, config.csv_path)

    monkeypatch.setattr(bench, "benchmark", interrupted)
    _, err = run(capsys, "calibrate", "run", "--backend", "gloo", "--csv", str(csv), rc=130)
    assert err == f"interrupted; 72 sizes kept in {csv}\n"


def test_run_auto_on_a_gpu_machine_without_nccl_warns_in_one_line(capsys, tmp_path: Path, monkeypatch):
    torch = pytest.importorskip("torch", reason="calibrate run needs PyTorch")
    import torch.distributed as dist

    from costmodel.calibration import bench

    if torch.cuda.is_available() or dist.is_nccl_available():
        pytest.skip("this PyTorch can run NCCL here")
    monkeypatch.setattr(bench, "_machine_has_gpus", lambda: True)
    data_out, err = run(capsys, "calibrate", "run", "--sizes", "8B..64B", "--collectives", "allreduce",
                        "--budget", "5ms", "--csv", str(tmp_path / "raw.csv"), "--json")
    assert err == ("warning: using gloo, not nccl: this PyTorch has no NCCL; "
                   "the profile measures the CPU path, not the GPUs\n")
    assert '"backend": "gloo"' in data_out


def test_fit_osu_latency_with_osu_bw_takes_alpha_from_one_and_beta_from_the_other(cli, tmp_path: Path):
    pair = LOGS.parent / "osu-pair"
    latency, bandwidth = pair / "osu_latency_azure_2node_ib.txt", pair / "osu_bw_azure_2node_ib.txt"
    profile = tmp_path / "link.toml"
    out, _ = cli.text("calibrate", "fit", str(latency), str(bandwidth), "--out", str(profile), columns=200)
    (summary,) = [line for line in out.splitlines() if "the profile's [link]" in line]
    assert "from osu_latency's segment 1, β" in summary and "from osu_bw's segment " in summary
    assert not any("comes from osu_bw" in line for line in out.splitlines())
    both = cli.json("calibrate", "fit", str(latency), str(bandwidth))
    alone = cli.json("calibrate", "fit", str(bandwidth))
    assert both["beta_s_per_byte"] == alone["beta_s_per_byte"]
    assert both["alpha_s"] == cli.json("calibrate", "fit", str(latency))["alpha_s"]
    # the log the issue saw: osu_bw alone puts α at 0.25 µs, and says it is no latency
    assert alone["alpha_s"] == pytest.approx(0.2478e-6, rel=1e-3)
    assert any("comes from osu_bw" in w for w in alone["warnings"])
    assert both["alpha_s"] == pytest.approx(1.607e-6, rel=1e-3)  # osu_latency's 1.61 µs at 1 B
    link = cli.json("profiles", str(profile))["profiles"][0]
    assert link["alpha_s"] == pytest.approx(both["alpha_s"], rel=1e-5)
    assert link["beta_s_per_byte"] == pytest.approx(both["beta_s_per_byte"], rel=1e-5)


def test_fit_of_two_logs_of_one_collective_is_one_error_line(cli):
    out, err = cli("calibrate", "fit", str(A100), str(A100), rc=2)
    assert out == "" and err.count("\n") == 1
    assert err.startswith("error: allreduce is measured by both ") and "one log per collective" in err


EXCERPTS = LOGS.parent / "excerpts"


def test_a_log_of_one_size_is_worded_for_what_it_is(capsys):
    """OSU's logs have no in-place and out-of-place rows: a pair of one size each says rows and sizes only."""
    latency, bandwidth = (EXCERPTS / f"osu_{k}_oci_a100_2node_v75_onerow.txt" for k in ("latency", "bw"))
    _, err = run(capsys, "calibrate", "fit", str(latency), str(bandwidth), rc=2)
    assert err == (f"error: {latency} has 1 row of 1 size; a fit of alpha and beta needs at least 2 sizes\n")
