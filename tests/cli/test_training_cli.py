"""The command-line contract of the training commands: JSON keys and units, renderings.

The commands live in ``cli/training.py`` (``loss``, ``gradient``, ``fedavg``, ``memory``,
``compress``, ``error-feedback`` and the ``traffic`` group); their bad inputs are in
``test_bad_input.py``.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from costmodel.cli import main
from tests.clirun import run_json, run_text

SEED_LINK = ["--alpha", "5us", "--bandwidth", "12.5GB/s"]


def test_loss_json(capsys):
    data = run_json(capsys, "loss", "--sizes", "600,300,100", "--losses", "0.2,0.5,0.9")
    assert {"weighted", "unweighted", "weights", "weighted_exact", "unweighted_exact", "weights_exact", "basis",
            "counts", "losses", "notes", "sources"} <= set(data)
    assert data["weighted"] == 0.36
    assert data["unweighted"] == pytest.approx(8 / 15, rel=1e-15)
    assert data["weights"] == [0.6, 0.3, 0.1]
    assert (data["weighted_exact"], data["unweighted_exact"]) == ("9/25", "8/15")


def test_loss_with_batches_and_weights(capsys):
    data = run_json(capsys, "loss", "--batches", "32,32,32", "--losses", "0.2,0.5,0.9")
    assert data["weights_exact"] == ["1/3", "1/3", "1/3"]
    assert data["weighted_exact"] == data["unweighted_exact"] == "8/15"
    data = run_json(capsys, "loss", "--weights", "0.6,0.3,0.1", "--losses", "0.2,0.5,0.9")
    assert data["weighted_exact"] == "9/25"


def test_gradient_json(capsys):
    data = run_json(capsys, "gradient", "--gradients", "1,0;2,1;4,-1", "--batches", "32,32,64")
    assert data["weighted"] == [2.75, -0.25]
    assert data["unweighted_exact"] == ["7/3", "0"]
    assert data["weights"] == [0.25, 0.25, 0.5]


def test_fedavg_json(capsys):
    data = run_json(capsys, "fedavg", "--sizes", "100,300,600", "--models", "1,0;2,1;4,-1")
    assert {"weights", "global_model", "unweighted_mean", "participants", "dropped", "index_base"} <= set(data)
    assert data["global_model"] == [3.1, -0.3]
    data = run_json(capsys, "fedavg", "--sizes", "100,300,600", "--models", "1,0;2,1;4,-1", "--dropped", "1")
    assert data["weights_exact"] == ["1/7", "0", "6/7"]
    assert data["global_model_exact"] == ["25/7", "-6/7"]
    assert data["unweighted_mean"] == [2.5, -0.5]
    assert (data["participants"], data["dropped"]) == ([0, 2], [1])


def test_memory_json(capsys):
    data = run_json(capsys, "memory", "--params", "70B", "--dtype", "fp32", "--dp", "4")
    assert data["weights_bytes_total"] == 1_120_000_000_000
    assert data["weights_bytes_per_replica"] == 280_000_000_000
    data = run_json(capsys, "memory", "--params", "7.5B", "--dp", "64", "--zero", "1")
    assert data["model_state_bytes_per_gpu"] == 31_406_250_000
    assert [s["model_state_bytes_per_gpu"] for s in data["zero"]["stages"]] == [
        120_000_000_000, 31_406_250_000, 16_640_625_000, 1_875_000_000]
    assert data["zero"]["formula"] == "4Ψ + 12Ψ/N"
    data = run_json(capsys, "memory", "--params", "7.5B", "--dp", "64", "--zero", "3")
    # ZeRO-3: 2Ψ/N_d of fp16 weights per GPU, one copy over all 64
    assert (data["weights_bytes_per_gpu"], data["weights_bytes_total"]) == (234_375_000, 15_000_000_000)
    assert data["weights_bytes_per_gpu"] == data["zero"]["parameters_bytes_per_gpu"]


def test_memory_activations_json(capsys):
    data = run_json(capsys, "memory", "--seq", "2048", "--batch", "1", "--hidden", "12288", "--heads", "96",
                    "--tp", "8", "--sp", "--layers", "2")
    # sbh(34/t + 5as/(ht)) = 2048·12288·(34 + 80)/8
    assert data["activation_bytes_per_layer"] == 2048 * 12288 * 114 // 8
    assert data["activation_bytes_total"] == 2 * 2048 * 12288 * 114 // 8
    assert data["weights_bytes_total"] is None
    assert data["activations"]["formula"] == "sbh(34/t + 5as/(ht))"


def test_traffic_ps_json(capsys):
    data = run_json(capsys, "traffic", "ps", "--workers", "16", "--model", "400MB")
    assert (data["server_bytes_in"], data["server_bytes_out"]) == (6_400_000_000, 6_400_000_000)
    assert data["ring_bytes_sent_per_worker"] == 750_000_000
    data = run_json(capsys, "traffic", "ps", "--workers", "16", "--model", "400MB", "--servers", "4",
                    "--alpha", "0", "--bandwidth", "12.5GB/s")
    assert data["server_bytes_in"] == 1_600_000_000
    assert data["ps_time_s"] == pytest.approx(2 * 16 * 100e6 / 12.5e9, rel=1e-15)
    assert data["ring_time_s"] == pytest.approx(2 * 15 * 25e6 / 12.5e9, rel=1e-15)
    assert data["alpha_s"] == 0


def test_traffic_tp_json(capsys):
    data = run_json(capsys, "traffic", "tp", "--batch", "1", "--seq", "2048", "--hidden", "12288", "--tp", "8",
                    *SEED_LINK)
    n = 2048 * 12288 * 2
    assert data["allreduce_bytes"] == n
    assert (data["allreduces_forward_per_block"], data["allreduces_backward_per_block"]) == (2, 2)
    assert data["bytes_sent_per_rank_per_allreduce"] == 7 * n // 4
    assert data["allreduce_time_s"] == pytest.approx(14 * (5e-6 + n / 8 / 12.5e9), rel=1e-12)


def test_traffic_moe_json(capsys):
    data = run_json(capsys, "traffic", "moe", "--tokens", "4096", "--hidden", "4096", "--experts", "8",
                    "--top-k", "2")
    assert data["send_buffer_bytes"] == 4096 * 2 * 4096 * 2
    assert data["fraction_leaving"] == 0.875
    assert data["alltoall_time_s"] is None
    padded = run_json(capsys, "traffic", "moe", "--tokens", "4096", "--hidden", "4096", "--experts", "8",
                      "--top-k", "2", "--capacity-factor", "1.25")
    assert padded["capacity_factor"] == 1.25 and padded["send_buffer_bytes"] == 5 * 4096 * 2 * 4096 * 2 // 4


def test_traffic_staleness_json(capsys):
    data = run_json(capsys, "traffic", "staleness", "--workers", "16", "--bound", "3")
    assert (data["ssp_max_staleness"], data["asp_expected_staleness"], data["asp_max_staleness"]) == (3, 15, None)


def test_compress_json(capsys):
    data = run_json(capsys, "compress", "--elements", "25M", "--method", "topk", "--density", "0.1")
    assert {"bytes", "dense_bytes", "ratio", "ratio_exact", "k", "index_bytes", "notes"} <= set(data)
    assert (data["bytes"], data["dense_bytes"], data["ratio"]) == (20_000_000, 100_000_000, 5)
    data = run_json(capsys, "compress", "--elements", "25M", "--method", "int8", "--from", "fp16")
    assert data["ratio"] == 2
    assert any("4×" in n for n in data["notes"])
    data = run_json(capsys, "compress", "--elements", "25M", "--method", "topk", "--density", "0.01", "-p", "16",
                    *SEED_LINK)
    # dense ring all-reduce of 100 MB: 30·(5 µs + 6.25 MB/12.5 GB/s); gather of 16 × 2 MB: 15·(5 µs + 2 MB/…)
    assert data["dense_time_s"] == pytest.approx(30 * (5e-6 + 6.25e6 / 12.5e9), rel=1e-12)
    assert data["compressed_time_s"] == pytest.approx(15 * (5e-6 + 2e6 / 12.5e9), rel=1e-12)
    assert data["time_saved_s"] == pytest.approx(data["dense_time_s"] - data["compressed_time_s"], rel=1e-12)
    data = run_json(capsys, "compress", "--elements", "1000", "--method", "onebit", "-p", "4", "--profile", "textbook")
    assert data["bytes"] == 129
    assert "textbook" in data["link_source"]
    assert data["scheme"] == "reduce-scatter"


def test_compress_scheme(capsys):
    base = ("compress", "--elements", "25M", "--method", "onebit", "-p", "16", "--alpha", "0", "--beta", "1ns/B")
    rs = run_json(capsys, *base)
    ag = run_json(capsys, *base, "--scheme", "allgather")
    # reduce-scatter: 15·(2·195,314 + 8) B per rank (N = 25,000,192 padded); all-gather: 15 × 3,125,004 B
    assert (rs["scheme"], rs["compressed"]["bytes_sent_per_rank"]) == ("reduce-scatter", 5_859_540)
    assert (ag["scheme"], ag["compressed"]["bytes_sent_per_rank"]) == ("allgather", 46_875_060)
    assert rs["speedup"] == pytest.approx(187_500_000 / 5_859_540, rel=1e-12)  # α = 0: the byte ratio, ~32×
    assert ag["speedup"] == pytest.approx(187_500_000 / 46_875_060, rel=1e-12)  # ~4×


def test_error_feedback_json(capsys):
    data = run_json(capsys, "error-feedback", "--vector", "0.5,-1.2,0.3", "--steps", "3")
    assert [s["step"] for s in data["steps"]] == [1, 2, 3]
    assert data["steps"][0]["scale"] == pytest.approx(2 / 3, rel=1e-15)
    assert data["final_residual_exact"] == ["-263/270", "-152/135", "-41/270"]
    data = run_json(capsys, "error-feedback", "--random", "5", "--seed", "2", "--method", "topk",
                    "--density", "0.4")
    assert data["k"] == 2 and data["seed"] == 2 and len(data["vector"]) == 5


@pytest.mark.parametrize(("args", "want"), [
    (["loss", "--sizes", "600,300,100", "--losses", "0.2,0.5,0.9"], ["weighted mean", "0.36", "8/15"]),
    (["gradient", "--gradients", "1,0;2,1;4,-1", "--batches", "32,32,64"], ["(2.75, -0.25)"]),
    (["fedavg", "--sizes", "100,300,600", "--models", "1,0;2,1;4,-1", "--dropped", "1"],
     ["(3.57143, -0.857143)", "0.142857 (1/7)", "did not answer"]),
    (["memory", "--params", "70B", "--dtype", "fp32", "--dp", "4"], ["1.12 TB", "70,000,000,000"]),
    (["memory", "--params", "7.5B", "--dp", "64", "--zero", "2"], ["16.64 GB", "2Ψ + 14Ψ/N", "P_os+g"]),
    (["memory", "--params", "7.5B", "--dp", "64", "--zero", "3"],
     ["2 + 2 + K = 16 bytes per parameter (K = 12)", "weights per GPU (ZeRO-3: 1/N)", "234.4 MB",
      "weights over 64 GPUs (one copy, partitioned)", "15 GB"]),
    (["memory", "--params", "7B", "--sp", "--recompute", "full", "--layers", "3"],
     ["note: --sp has no effect without", "note: --recompute has no effect", "note: --layers has no effect"]),
    (["traffic", "ps", "--workers", "16", "--model", "400MB", "--alpha", "0", "--bandwidth", "12.5GB/s"],
     ["6.4 GB", "750 MB", "1.024 s", "60 ms"]),
    (["traffic", "tp", "--batch", "1", "--seq", "2048", "--hidden", "12288", "--tp", "8"], ["2 + 2"]),
    (["traffic", "moe", "--tokens", "4096", "--hidden", "4096", "--experts", "8"], ["0.875", "uniform routing"]),
    (["traffic", "moe", "--tokens", "4096", "--hidden", "4096", "--experts", "8", "--capacity-factor", "1.25"],
     ["c = 1.25", "c·tokens·k·h·bytes", "41.94 MB", "capacity factor 1.25"]),
    (["traffic", "staleness", "--workers", "16", "--bound", "3"], ["≤ 3 clocks", "expected 15 updates"]),
    (["compress", "--elements", "25M", "--method", "topk", "--density", "0.01", "-p", "16", *SEED_LINK],
     ["ratio", "50", "time saved", "all-gather"]),
    (["error-feedback", "--vector", "0.5,-1.2,0.3"], ["residual", "0.666667"]),
])
def test_human_output(capsys, monkeypatch, args, want):
    out, err = run_text(capsys, monkeypatch, *args)
    text = out + err
    for fragment in want:
        assert fragment in text, f"{fragment!r} not in\n{text}"


def test_traffic_without_a_pattern_prints_help(capsys):
    assert main(["traffic"]) == 2
    out, err = capsys.readouterr()
    assert "ps" in out and "staleness" in out
    assert err == ""


def test_json_runs_import_no_rich_numpy_or_sympy():
    code = (
        "import sys, io, contextlib\n"
        "from costmodel.cli import app as app_module, main\n"
        "from costmodel.cli import training\n"
        "build = app_module.build\n"
        "def wrapped(argv=(), **options):\n"
        "    a = build(argv, **options)\n"
        "    have = {c.name for c in a.registered_commands}\n"
        "    a.registered_commands.extend(c for c in training.app.registered_commands if c.name not in have)\n"
        "    if not any(g.name == 'traffic' for g in a.registered_groups):\n"
        "        a.registered_groups.extend(training.app.registered_groups)\n"
        "    return a\n"
        "app_module.build = wrapped\n"
        "for argv in (['loss', '--sizes', '1,2', '--losses', '1,2'], ['memory', '--params', '7B', '--zero', '3'],\n"
        "             ['traffic', 'ps', '--workers', '4', '--model', '1MB', '--alpha', '0', '--bandwidth', '1GB/s'],\n"
        "             ['compress', '--elements', '1M', '--method', 'onebit', '-p', '4', '--alpha', '0', '-B', '1GB/s'],\n"
        "             ['error-feedback', '--vector', '1,-2']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main([*argv, '--json']) == 0, argv\n"
        "print(sorted(m for m in ('sympy', 'numpy', 'pandas', 'rich') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
