"""``benchmarks/gpu_step.py`` run on this machine's CPU: the table it writes is one ``costmodel validate`` reads.

Its times on a CPU mean nothing; what is checked is the path a GPU run takes (the model, the mixed-precision
optimizer, the timing by phase, the profile by kernel kind) and that its CSV prices with the shapes it ran.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="benchmarks/gpu_step.py needs PyTorch: pip install torch")

from tests.clirun import run_json

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_step.py"


def test_a_cpu_run_writes_a_table_that_validate_prices(capsys, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--out", str(tmp_path), "--steps", "2",
                           "--warmup", "1", "--profile", "--gpu", "h200"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    about = json.loads((tmp_path / "steps.json").read_text())
    runs = {r["config"]["label"]: r for r in about["runs"]}
    assert set(runs) == {"tiny-gpt", "tiny-llama"} and about["about"]["attention_kernel"] == "math"
    for r in runs.values():
        phases = r["phases"]
        assert set(phases) == {"forward", "backward", "fold", "norm", "adam", "copy", "zero"}
        assert all(v > 0 for v in phases.values()) and len(r["steps_s"]) == 2
        assert r["optimizer_s"] == pytest.approx(sum(phases[k] for k in ("fold", "norm", "adam", "copy", "zero")))
        assert r["kernels"]["by_kind_s"]["gemm"] > 0
    # tied embeddings: V·h + per layer 4h² + 2·4h² weights, 13h biases and norms; and the final norm's 2h
    h, v = 64, 128
    assert runs["tiny-gpt"]["parameters"] == v * h + 2 * (12 * h * h + 13 * h) + 2 * h
    table = (tmp_path / "steps.csv").read_text()
    assert "# default: gpu = h200" in table and "tiny-gpt,2,64,4,32,128,256,,,1,4,2,yes,bf16," in table
    data = run_json(capsys, "validate", str(tmp_path / "steps.csv"))
    rows = {r["label"]: r for r in data["tables"][0]["rows"]}
    assert {r["gpu"] for r in rows.values()} == {"h200"}
    assert rows["tiny-gpt"]["published"] == pytest.approx(runs["tiny-gpt"]["iteration_s"], rel=1e-5)


def test_an_unknown_configuration_is_one_error_line(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--out", str(tmp_path),
                           "--configs", "gpt-9t"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: no configuration is named 'gpt-9t'; known: tiny-gpt, tiny-llama")
