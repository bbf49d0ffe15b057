"""The command-line contract of ``costmodel plot ...``: JSON data, the image file, one-line errors.

The commands live in ``cli/plot.py``.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from tests.clirun import run, run_json

SEED = ["--alpha", "5us", "--beta", "0.08ns/B"]
OSU = Path(__file__).resolve().parent.parent / "data" / "logs" / "osu" / "osu_allreduce_kind_2pod_2rank_tcp.txt"
COMMANDS = {
    "time": ["time", "allreduce", "-p", "16", *SEED],
    "regions": ["regions", "allreduce", "--p-max", "32", "--max", "256MiB", *SEED],
    "breakdown": ["breakdown", "allreduce", "-p", "16", "-n", "1MiB", *SEED],
    "consensus": ["consensus", "ring,hypercube", "-p", "8", "--rounds", "10"],
    "pipeline": ["pipeline", "-P", "2", "-m", "4"],
    "calibration": ["calibration", str(OSU), "-p", "2"],
    "step": ["step", "--dp", "2", "--pp", "2", "-m", "4", "--layers", "4", "-F", "1ms", "-b", "2ms",
             "--gradient-bytes", "4MB", "--activation-bytes", "1MB", "--optimizer", "1ms", *SEED],
    "plan": ["plan", "--layers", "2", "--hidden", "256", "--heads", "4", "--seq", "128", "--vocab", "1k", "--gpu",
             "a100-80gb", "--nodes", "1", "--global-batch", "8", "--top", "2"],
    "staleness": ["staleness", "--workers", "4", "--compute", "exp:1s,1s", "--steps", "50", "--bound", "1"],
    "ssp-throughput": ["ssp-throughput", "--workers", "4", "--compute", "uniform:1s,3s", "--steps", "50",
                       "--bounds", "0,1,2"],
}


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_json_alone_prints_the_plotted_data(capsys, kind: str):
    data = run_json(capsys, "plot", *COMMANDS[kind])
    assert data["plot"] == kind and data["out"] is None and data["title"]


def test_time_json_crossovers_are_the_crossover_command_s(capsys):
    data = run_json(capsys, "plot", "time", "allreduce", "rd", "rab", "ring", "-p", "16", *SEED)
    assert [s["algorithm"] for s in data["series"]] == ["recursive-doubling", "rabenseifner", "ring"]
    assert len(data["series"][0]["n_bytes"]) == len(data["series"][0]["time_s"])
    exact = {c["n_bytes_exact"] for c in data["crossovers"]}
    for a, b in (("rd", "rab"), ("rd", "ring")):
        other = run_json(capsys, "crossover", "allreduce", a, b, "-p", "16", *SEED)
        assert {c["n_bytes_exact"] for c in other["crossovers"]} <= exact
    first = data["crossovers"][0]
    assert (first["label"], first["n_bytes_exact"], first["best"]) == ("rd × rab: 117.6 kB", "2000000/17", True)


def test_regions_json_best_algorithm(capsys):
    data = run_json(capsys, "plot", *COMMANDS["regions"])
    i, j, k = data["p"].index(16), data["n_bytes"].index(8192), data["n_bytes"].index(64 * 2**20)
    assert data["algorithms"][data["best"][i][j]] == "recursive-doubling"
    assert data["algorithms"][data["best"][i][k]] == "rabenseifner"


def test_pipeline_json_bars_are_the_bubble_timeline(capsys):
    data = run_json(capsys, "plot", "pipeline", "-P", "4", "-m", "8", "--schedule", "1f1b")
    sim = run_json(capsys, "bubble", "-P", "4", "-m", "8", "--schedule", "1f1b")
    (panel,) = data["panels"]
    assert [(b["stage"], b["op"], b["microbatch"], b["start_slots"], b["end_slots"]) for b in panel["bars"]] == [
        (s, o["op"], o["microbatch"], o["start"], o["end"]) for s, ops in enumerate(sim["timeline"]) for o in ops]


def test_consensus_json_envelope(capsys):
    data = run_json(capsys, "plot", "consensus", "ring", "-p", "4", "--rounds", "3")
    (curve,) = data["curves"]
    assert curve["rho"] == pytest.approx(1 / 3)
    d0 = curve["disagreement"][0]
    assert curve["envelope"] == pytest.approx([d0 / 3**r for r in range(4)], rel=1e-15)


def test_the_image_is_written_once_and_only_as_png_or_svg(capsys, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    png = tmp_path / "pipeline.png"
    out, _ = run(capsys, "plot", *COMMANDS["pipeline"], "--out", str(png))
    said = f"wrote {png}: Pipeline schedules: P = 2 stages, M = 4 micro-batches"
    assert "".join(out.split()) == "".join(said.split())  # rich wraps to the console's width
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    assert width == 1650 and height > 600
    _, err = run(capsys, "plot", *COMMANDS["pipeline"], "--out", str(png), rc=2)
    assert err == f"error: {png} exists; pass --force to overwrite it\n"
    before = png.stat().st_mtime_ns
    run(capsys, "plot", "pipeline", "-P", "2", "-m", "2", "--out", str(png), "--force")
    assert png.stat().st_mtime_ns >= before
    svg = tmp_path / "regions.svg"
    data = run_json(capsys, "plot", *COMMANDS["regions"], "--out", str(svg))
    assert data["out"] == str(svg) and data["title"] in svg.read_text(encoding="utf-8")


def test_step_chart_puts_the_optimizer_before_zeros_parameter_gather():
    from costmodel.params import combine_link
    from costmodel.plots.step import step_chart
    from costmodel.step import step

    r = step(forward_s=["1ms"] * 2, backward_s=["2ms"] * 2, gradient_bytes=["1MB"] * 2, dp=2, zero=1,
             optimizer_s="1ms", link=combine_link(alpha=0, beta="1ns/B"))
    gathers = [c for c in r.communication[0] if c.label.startswith("params")]
    assert r.param_gather_s > 0 and gathers
    chart = step_chart(r)
    assert chart.optimizer_start_s + r.optimizer_s == gathers[0].start_s  # the gather follows the optimizer
    assert chart.optimizer_start_s == r.step_s - r.param_gather_s - r.optimizer_s


def test_step_json_bars_are_the_timeline_and_the_communication(capsys):
    from costmodel.params import combine_link
    from costmodel.step import step

    data = run_json(capsys, "plot", *COMMANDS["step"])
    r = step(dp=2, pp=2, microbatches=4, forward_s=["1ms"] * 4, backward_s=["2ms"] * 4,
             gradient_bytes=["4MB"] * 4, activation_bytes="1MB", optimizer_s="1ms",
             link=combine_link(alpha="5us", beta="0.08ns/B"))
    assert data["step_s"] == float(r.step_s) and data["optimizer_start_s"] == float(r.step_s - r.optimizer_s)
    assert data["collectives"] == ["allreduce"]
    for s in range(2):
        compute = [(b["kind"], b["microbatch"], b["chunk"], b["start_s"], b["end_s"]) for b in data["bars"]
                   if b["stage"] == s and b["row"] == "compute"]
        assert compute == [(o.op, o.microbatch, o.chunk, float(o.start), float(o.end)) for o in r.timeline[s]]
        comm = [(b["kind"], b["label"], b["start_s"], b["end_s"]) for b in data["bars"]
                if b["stage"] == s and b["row"] == "communication"]
        assert comm == [(c.collective, c.label, float(c.start_s), float(c.end_s)) for c in r.communication[s]]
        assert comm  # each stage reduces its own gradients


def test_step_sweep_json_is_the_sweep(capsys):
    args = COMMANDS["step"]
    at = args.index("-m")
    data = run_json(capsys, "plot", *args[:at], *args[at + 2:], "--sweep", "microbatches=2..8+2")
    assert data["plot"] == "step sweep" and data["knob"] == "microbatches"
    assert [p["value"] for p in data["points"]] == [2, 4, 6, 8]
    assert data["title"] == "Training step against microbatches: 4 values"


def test_step_images_gantt_and_sweep(capsys, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    png, svg = tmp_path / "step.png", tmp_path / "sweep.svg"
    out, _ = run(capsys, "plot", *COMMANDS["step"], "--out", str(png))
    assert out.startswith(f"wrote {png}: Training step: dp 2 × tp 1 × pp 2 = 4 GPUs, 1f1b, M = 4: ")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _, err = run(capsys, "plot", *COMMANDS["step"], "--out", str(png), rc=2)
    assert err == f"error: {png} exists; pass --force to overwrite it\n"
    run(capsys, "plot", *COMMANDS["step"], "--out", str(png), "--force")
    run(capsys, "plot", *COMMANDS["step"], "--sweep", "bucket-size=1MB..16MBx2", "--out", str(svg))
    assert "Training step against bucket-size: 5 values" in svg.read_text(encoding="utf-8")


def test_a_large_step_chart_is_drawn(tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    from costmodel.params import combine_link
    from costmodel.plots import draw_step_chart, step_chart
    from costmodel.step import step

    r = step(dp=2, pp=64, microbatches=64, forward_s=["1ms"] * 64, backward_s=["2ms"] * 64,
             gradient_bytes=["4MB"] * 64, activation_bytes="1MB", link=combine_link(alpha="5us", beta="1ns/B"))
    chart = step_chart(r)
    assert len(chart.bars) == 64 * 128 + sum(map(len, r.communication))
    svg = draw_step_chart(chart, tmp_path / "big.svg")
    text = svg.read_text(encoding="utf-8")
    assert "stage 63" in text and "stage 1<" not in text  # a tick every third stage
    assert text.count(">63<") == 0  # rows too thin for labels: the micro-batches are not written


@pytest.mark.parametrize(("args", "message"), [
    (["time", "allreduce", "-p", "16", *SEED], "no --out given; name the image"),
    (["time", "allreduce", "-p", "16", *SEED, "--out", "t.gif"], "'t.gif' is neither .png nor .svg"),
    (["time", "allreduce", "-p", "16", *SEED, "--min", "0", "--json"], "--min 0 B is not positive"),
    (["time", "allreduce", "-p", "16", "--alpha", "5us", "--json"], "no bandwidth given"),
    (["regions", "allreduce", "--p-min", "64", "--p-max", "8", *SEED, "--json"], "below --p-min"),
    (["consensus", "ring,hypercube", "-p", "12", "--json"], "not a power of two"),
    (["consensus", "rign", "-p", "8", "--json"], "did you mean 'ring'"),
    (["pipeline", "-P", "4", "-m", "6", "--schedule", "interleaved", "--json"], "multiple"),
    (["breakdown", "allreduce", "-p", "16", *SEED, "--json"], "Missing option '-n'"),
    ([*COMMANDS["step"], "--sweep", "bucket-size=1MB..4MBx", "--json"], "bucket-size='1MB..4MBx'"),
    ([*COMMANDS["step"], "--sweep", "nodes=1,2", "--json"], "unknown knob 'nodes'"),
    ([*COMMANDS["step"], "--sweep", "chunks=2,3", "--json"], "no value of chunks gives a step"),
    ([*COMMANDS["step"], "--sweep", "pp=1,2", "--json"], "--pp is given and --sweep pp=... varies it"),
    ([*COMMANDS["step"], "--out", "s.jpg"], "'s.jpg' is neither .png nor .svg"),
])
def test_bad_input_is_one_error_line(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str],
                                     message: str):
    monkeypatch.chdir(tmp_path)
    _, err = run(capsys, "plot", *args, rc=2)
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("kind", list(COMMANDS))
def test_without_matplotlib_every_plot_says_how_to_install_it(capsys, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch, kind: str):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    _, err = run(capsys, "plot", *COMMANDS[kind], "--out", str(tmp_path / "x.png"), rc=2)
    assert err == "error: plots need matplotlib: pip install 'costmodel-collectives[plot]'\n"
    assert not (tmp_path / "x.png").exists()


def test_every_plot_command_has_a_summary_and_an_example():
    from costmodel.cli.plot import plot_app

    for command in plot_app.registered_commands:
        doc = command.callback.__doc__
        assert doc.splitlines()[0].strip(), command.name
        assert f"Example: costmodel plot {command.name} " in doc, command.name


def test_staleness_and_ssp_throughput_json_are_the_simulations(capsys):
    stale = run_json(capsys, "plot", *COMMANDS["staleness"])
    sync = run_json(capsys, "federated", "sync", *COMMANDS["staleness"][1:])
    assert stale["runs"] == sync["runs"] and [r["label"] for r in stale["runs"]] == ["BSP", "SSP s=1", "ASP"]
    sweep = run_json(capsys, "plot", *COMMANDS["ssp-throughput"])
    assert sweep["bounds"] == [0, 1, 2] and sweep["ssp_updates_per_s"][0] == sweep["bsp_updates_per_s"]
    rates = sweep["ssp_updates_per_s"]
    assert rates == sorted(rates) and rates[-1] <= sweep["asp_updates_per_s"]


def test_staleness_and_ssp_throughput_images(capsys, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    png, svg = tmp_path / "stale.png", tmp_path / "ssp.svg"
    out, _ = run(capsys, "plot", *COMMANDS["staleness"], "--out", str(png))
    assert out.startswith(f"wrote {png}: Staleness under BSP, SSP and ASP: 4 workers, 50 steps")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    run(capsys, "plot", *COMMANDS["ssp-throughput"], "--out", str(svg))
    assert "SSP throughput against its bound s: 4 workers, 50 steps" in svg.read_text(encoding="utf-8")
    _, err = run(capsys, "plot", *COMMANDS["ssp-throughput"], "--out", str(svg), rc=2)
    assert err == f"error: {svg} exists; pass --force to overwrite it\n"
