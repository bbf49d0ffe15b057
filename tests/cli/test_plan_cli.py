"""``costmodel plan`` and ``plot plan``: the command line's plan is the library's, its JSON carries every row's
settings and breakdown, and the frontier is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.step import TransformerShape
from costmodel.step.planner import plan

SHAPE = ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "256", "--vocab", "1024"]
MACHINE = ["--gpu", "a100-80gb", "--nodes", "1", "--global-batch", "16"]


def test_the_json_is_the_librarys_plan(cli):
    data = cli.json("plan", *SHAPE, *MACHINE, "--top", "4", "--micro-batch-sizes", "1,2", "--fix", "recompute=full")
    p = plan(TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024), gpu="a100-80gb",
             nodes=1, global_batch=16, top=4, micro_batch_sizes=(1, 2), recompute="full")
    assert [r["step_s"] for r in data["rows"]] == [float(r.step_s) for r in p.rows]
    assert data["considered"] == p.considered and data["priced"] == p.priced and data["exact"] is True
    first = data["rows"][0]
    assert first["rank"] == 1 and first["behind_s"] == 0 and first["recompute"] == "full"
    assert set(first["breakdown"]) >= {"compute_s", "tp_comm_s", "bubble_s", "dp_exposed_s", "optimizer_s"}
    assert sum(first["breakdown"].values()) == pytest.approx(first["step_s"], rel=1e-12)
    assert {r["kind"] for r in data["refused"]} <= {"invalid", "memory", "pruned"}


def test_the_table_names_the_best_and_the_counts(cli):
    out, _ = cli.text("plan", *SHAPE, *MACHINE, "--top", "3", columns=80)
    assert out.startswith("plan · 8 × a100-80gb (1 node × 8) · global batch 16 · megatron\nbest: dp ")
    words = " ".join(out.split())
    assert "configurations considered:" in words and "pruned by the bound" in words
    assert "note: exact: every configuration not priced" in words
    assert max(len(line) for line in out.splitlines()) <= 80


def test_plot_plan_draws_the_frontier(cli, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "plan.png"
    out, _ = cli("plot", "plan", *SHAPE, *MACHINE, "--out", str(target))
    assert out.startswith(f"wrote {target}: Plan: 8 × a100-80gb, global batch 16:")
    assert Path(target).stat().st_size > 10_000
    data = cli.json("plot", "plan", *SHAPE, *MACHINE, "--top", "3")
    assert data["plot"] == "plan" and any(p["pareto"] for p in data["points"])
    assert sum(p["ranked"] for p in data["points"]) == 3
