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


def _script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_step", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_step", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("attention", ["flash", "unfused"])
def test_recomputing_each_layer_gives_the_same_gradients(attention):
    """--recompute full checkpoints each layer: the main gradients it accumulates are those of the plain
    backward (the dropout masks drawn again alike), on either attention path."""
    import torch

    gpu_step = _script()
    config = gpu_step.TINY[0]  # GPT: biases, dropout on the residual (and on the probabilities unfused)
    device = torch.device("cpu")
    grads = []
    for recompute in (False, True):
        kernels = gpu_step._Kernels(torch, device, torch.float32, compile_=False, attention=attention,
                                    recompute=recompute)
        torch.manual_seed(0)
        params, forward = gpu_step._model(torch, config, device, torch.float32, kernels)
        torch.manual_seed(1)
        tokens = torch.randint(0, config.vocab, (config.micro_batch, config.seq))
        forward(tokens, tokens).backward()
        grads.append([p.main_grad.clone() for p in params])
    for plain, recomputed in zip(*grads, strict=True):
        assert torch.allclose(plain, recomputed, rtol=1e-5, atol=1e-6)


def test_an_unfused_recomputed_run_writes_what_validate_prices(capsys, tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--out", str(tmp_path), "--steps", "1",
                           "--warmup", "1", "--configs", "tiny-llama", "--attention", "unfused", "--recompute",
                           "full", "--gpu", "h200"], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    table = (tmp_path / "steps.csv").read_text()
    assert "# default: attention = unfused\n# default: recompute = full\n" in table
    assert "GQA's keys and values repeated" in table
    run = run_json(capsys, "validate", str(tmp_path / "steps.csv"), "--run", "tiny-llama")
    assert "--attention unfused" in run["command"] and "--recompute full" in run["command"]
