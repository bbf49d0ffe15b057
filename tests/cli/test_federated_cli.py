"""The ``federated round`` command: JSON keys and units, the two round times side by side, bad input."""

from __future__ import annotations

import pytest

from tests.clirun import run, run_json, run_text

ROUND = ["federated", "round", "--params", "1M", "--uplink", "50ms:10Mb/s", "--downlink", "50ms:50Mb/s"]


def test_round_json(capsys):
    data = run_json(capsys, *ROUND, "--compute", "exp:1s,2s", "--sampled", "8")
    assert {"algorithm", "download_bytes", "upload_bytes", "download_s", "upload_s", "expected_participants",
            "bytes_down_per_round", "bytes_up_per_round", "bytes_per_round", "expected_round_time_s", "method",
            "simulated_round_time_s", "simulated_stderr_s", "relative_difference", "sources", "notes"} <= set(data)
    assert data["algorithm"] == "fedavg" and data["rule"] == "all"
    assert data["upload_bytes"] == data["download_bytes"] == 4_000_000
    assert data["bytes_per_round"] == 8 * 8_000_000
    # links: 0.05 + 4 MB / 50 Mb/s = 0.69 s down, 0.05 + 4 MB / 10 Mb/s = 3.25 s up; E[max of 8] = 1 + 2·H_8
    harmonic = sum(1 / i for i in range(1, 9))
    assert data["expected_round_time_s"] == pytest.approx(0.69 + 3.25 + 1 + 2 * harmonic, rel=1e-12)
    assert data["relative_difference"] < 0.01


def test_scaffold_text(capsys, monkeypatch):
    out, _ = run_text(capsys, monkeypatch, "federated", "round", "scaffold", "--params", "1M", "--compute",
                      "1s,2s,5s", "--sampled", "2", "--uplink", "0s:1MB/s", columns=80)
    assert "SCAFFOLD" in out and "8 MB in 8 s" in out
    assert "exact: order statistics" in out


def test_deadline_keeps_partial_work_for_fedprox(capsys):
    args = ["--compute", "exp:1s,2s", "--sampled", "10", "--deadline", "8s"]
    avg = run_json(capsys, *ROUND, *args)
    prox = run_json(capsys, *ROUND[:2], "fedprox", *ROUND[2:], *args)
    assert prox["expected_participants"] == 10 > avg["expected_participants"]
    assert 0 < prox["work_share"] < 1


BAD = [
    (["--compute", "1s,2s", "--deadline", "1s"], "error: --deadline 1 s is before any client can finish"),
    (["--compute", "1s,2s", "--fastest", "3"], "error: --fastest 3 is outside 1 to 2"),
    (["--compute", "lognormal:2s,0.5"], "error: a distribution of client times needs --sampled"),
    (["--compute", "weibull:1s,2s", "--sampled", "2"], "error: unknown distribution 'weibull'"),
    (["--compute", "1s,2s", "--bits", "4"], "error: --bits is FedPAQ's"),
    (["--compute", "1s,2s", "--fastest", "1", "--deadline", "9s"], "error: give --fastest"),
    (["--compute", "1s,x"], "error: client 1's time"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_is_one_error_line(capsys, args, message):
    out, err = run(capsys, *ROUND, *args, rc=2)
    assert out == "" and err.startswith(message) and err.count("\n") == 1


def test_prox_step_json(capsys):
    data = run_json(capsys, "federated", "prox-step", "--w", "1", "--anchor", "0", "--gradient", "2", "--lr", "0.1",
                    "--mu", "0.5")
    assert data["new_w"] == [0.75] and data["new_w_exact"] == ["3/4"]


def test_scaffold_and_fednova_json(capsys):
    s = run_json(capsys, "federated", "scaffold", "--x", "0", "--curvatures", "1,1", "--optima", "1;3", "--steps",
                 "2", "--lr-local", "0.5")
    assert (s["new_x"], s["new_c"]) == ([1.5], [-1.5])
    n = run_json(capsys, "federated", "fednova", "--x", "0", "--gradients", "1;-1", "--steps", "1,3", "--lr", "1")
    assert (n["fedavg_x"], n["fednova_x"], n["fedavg_weights"]) == ([1], [0], [0.25, 0.75])


def test_steps_bad_input(capsys):
    _, err = run(capsys, "federated", "prox-step", "--w", "1", "--anchor", "0", "--gradient", "2", "--lr", "0",
                 "--mu", "0.5", rc=2)
    assert err == "error: --lr 0 is zero; give a positive number, e.g. 0.1\n"


SYNC = ["federated", "sync", "--workers", "8", "--compute", "lognormal:1s,0.5", "--steps", "400"]


def test_sync_json(capsys):
    data = run_json(capsys, *SYNC, "--bound", "2")
    assert [r["rule"] for r in data["runs"]] == ["bsp", "ssp", "asp"] and data["runs"][1]["bound"] == 2
    bsp, ssp, asp = (r["updates_per_s"] for r in data["runs"])
    assert bsp <= ssp <= asp
    assert data["runs"][0]["staleness_counts"] == [8 * 400] and len(data["runs"][2]["idle_s"]) == 8
    assert data["bsp_relative_difference"] < 0.05
    assert data["step_times"]["kind"] == "lognormal"


def test_sync_text(capsys, monkeypatch):
    out, _ = run_text(capsys, monkeypatch, *SYNC, "--bound", "2", columns=80)
    assert "SSP s=2" in out and "E[max of 8 draws]" in out
    assert max(map(len, out.splitlines())) <= 80


def test_sync_asp_equal_speeds(capsys):
    data = run_json(capsys, "federated", "sync", "--compute", "1s,1s,1s,1s", "--steps", "10", "--rule", "asp")
    assert data["runs"][0]["staleness_steady_mean"] == 3


SYNC_BAD = [
    (["--compute", "1s", "--rule", "ssp"], "error: SSP needs --bound"),
    (["--compute", "1s", "--rule", "bsp", "--bound", "1"], "error: --bound is SSP's"),
    (["--compute", "exp:1s,1s"], "error: a distribution of step times needs --workers"),
    (["--compute", "1s,2s", "--workers", "3"], "error: 2 step times for 3 workers"),
    (["--compute", "1s", "--rule", "xsp"], "error: unknown rule 'xsp'"),
    (["--compute", "1s", "--steps", "0"], "error: Invalid value for '--steps': 0 is below 1"),
    (["--compute", "1s", "--workers", "-2"], "error: Invalid value for '--workers': -2"),
    (["--compute", "1s", "--workers", "4000", "--steps", "4000"], "error: 4000 workers × 4000 steps"),
    (["--compute", "1s,abc"], "error: client 1's time"),
]


@pytest.mark.parametrize(("args", "message"), SYNC_BAD, ids=[m for _, m in SYNC_BAD])
def test_sync_bad_input_is_one_error_line(capsys, args, message):
    out, err = run(capsys, "federated", "sync", *args, rc=2)
    assert out == "" and err.startswith(message) and err.count("\n") == 1
