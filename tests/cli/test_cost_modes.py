"""``cost`` chooses between the flat algorithms on one link and the hierarchical ones on a topology."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clirun import run, run_json

LEVELS = ["--level", "8:1us:150GB/s", "--level", "4:5us:25GB/s"]
HIER = ["cost", "allreduce", "-n", "1GiB"]


def test_a_profile_of_levels_costs_its_topology_unless_p_is_given(capsys, tmp_path: Path):
    path = tmp_path / "cluster.toml"
    path.write_text('[[level]]\nsize = 4\nalpha = "1 s"\nbandwidth = "100 B/s"\n'
                    '[[level]]\nsize = 2\nalpha = "10 s"\nbandwidth = "10 B/s"\n', encoding="utf-8")
    data = run_json(capsys, "cost", "allreduce", "-n", "800B", "--profile", str(path))
    assert data["results"][0]["time_s"] == 58
    _, err = run(capsys, "cost", "allreduce", "-n", "800B", "-p", "8", "--profile", str(path), rc=2)
    assert "has levels but no [link] table; drop -p" in err


@pytest.mark.parametrize(("argv", "needle"), [
    ([*HIER, *LEVELS, "--bandwidth", "1GB/s"], "--bandwidth sets one flat link"),
    ([*HIER, "-p", "8", "--alpha", "5us", "--beta", "1ns/B", "--inner", "ring"],
     "--inner ring applies to hierarchical"),
    ([*HIER, *LEVELS, "--whole-bytes"], "--whole-bytes prices the flat algorithms' chunks"),
    (["schedule", "allreduce", "ring", "-n", "1MB"], "Missing option '-p' / '--ranks'."),
])
def test_options_of_the_other_mode_are_refused(capsys, argv, needle):
    _, err = run(capsys, *argv, rc=2)
    assert err.startswith("error: ") and err.count("\n") == 1
    assert needle in err


def test_a_ratio_never_rounds_to_a_tie_the_times_contradict(capsys, monkeypatch):
    from tests.clirun import run_text

    out, _ = run_text(capsys, monkeypatch, "cost", "allreduce", "-p", "64", "-n", "1GiB", "--profile", "ib-hdr",
                      columns=100)
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():  # the first table's rows (the formulas' table follows)
        if line.startswith(("ring ", "rabenseifner ")):
            rows.setdefault(line.split()[0], line.split())
    assert rows["rabenseifner"][1:3] == ["84.57", "ms"] and rows["rabenseifner"][3] == "1"  # the best
    assert rows["ring"][1:4] == ["84.68", "ms", "1.001"]  # × best: not 1
    assert rows["rabenseifner"][-1] == "1.0001" and rows["ring"][-1] == "1.001"  # × bound: above the bound
