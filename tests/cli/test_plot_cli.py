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
