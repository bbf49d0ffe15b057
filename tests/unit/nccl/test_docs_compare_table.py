"""The table of ``nccl compare`` in docs/calibration.md is what the command prints today."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.clirun import run_json

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "logs" / "nccl-tests"


def _rows() -> list[list[str]]:
    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in text.splitlines() if re.match(r"\| \w+_\w+\.txt \|", line)]


def test_the_table_lists_every_log():
    assert sorted(row[0] for row in _rows()) == sorted(p.name for p in LOGS.glob("*.txt"))


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row[0])
def test_each_row_is_what_compare_prints(row, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    log, _, hardware, overall, regimes = row
    options = shlex.split(re.match(r"`([^`]+)`", hardware)[1])
    data = run_json(capsys, "nccl", "compare", str(LOGS / log), *options)
    assert overall.split()[0] == f"{100 * data['median_abs_rel_error']:.1f}"
    shown = [f"{r['algorithm']}/{r['protocol']} {100 * r['median_abs_rel_error']:.1f} %" for r in data["regimes"]]
    assert [re.sub(r" \(\d+( sizes)?\)$", "", part) for part in regimes.split(", ")] == shown
    assert [int(re.search(r"\((\d+)", part)[1]) for part in regimes.split(", ")] == [r["sizes"] for r in data["regimes"]]
