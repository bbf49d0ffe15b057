"""Golden renders of the human output at 100 columns (set COSTMODEL_UPDATE_GOLDEN=1 to rewrite)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from costmodel.cli import main

GOLDEN = Path(__file__).parent / "golden"
TEXTBOOK = ["--profile", "textbook"]

CASES = {
    "cost_allreduce_p16_64MiB": ["cost", "allreduce", "-p", "16", "-n", "64MiB", *TEXTBOOK],
    "cost_allreduce_p12_gamma": ["cost", "allreduce", "-p", "12", "-n", "1MB", *TEXTBOOK, "--gamma", "0.01ns/B"],
    "crossover_rd_rab_p16": ["crossover", "allreduce", "rd", "rab", "-p", "16", *TEXTBOOK],
    "crossover_in_p": ["crossover", "allreduce", "ring", "rab", "-n", "64MiB", "--p-max", "20", *TEXTBOOK],
    "best_broadcast_p12": ["best", "broadcast", "-p", "12", *TEXTBOOK],
    "bound_reduce": ["bound", "reduce", "-p", "8", "-n", "1GB", "--profile", "ib-ndr"],
    "formula_rabenseifner": ["formula", "allreduce", "rabenseifner"],
    "algorithms_alltoall": ["algorithms", "alltoall"],
    "profiles": ["profiles"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_render(name, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(CASES[name]) == 0
    out, err = capsys.readouterr()
    rendered = out + ("".join(f"[stderr] {line}\n" for line in err.splitlines()) if err else "")
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("COSTMODEL_UPDATE_GOLDEN"):
        path.write_text(rendered, encoding="utf-8")
    assert rendered == path.read_text(encoding="utf-8")
