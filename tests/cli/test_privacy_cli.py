"""The ``privacy`` command: JSON keys, the three questions it answers, bad input, and no numpy or scipy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.clirun import run, run_json, run_text

MNIST = ["privacy", "--batch", "256", "--dataset", "60000", "--noise", "1.1", "--epochs", "60", "--delta", "1e-5"]


def test_account_json(capsys):
    data = run_json(capsys, *MNIST, "--orders", "2-63")
    assert data["kind"] == "account"
    assert data["steps"] == 14063
    assert round(data["epsilon"], 3) == 2.597
    assert data["best_order"] == 8
    assert data["conversion"] == "improved"
    assert len(data["orders"]) == 62
    assert data["phases"] == [{"q": 256 / 60000, "noise_multiplier": 1.1, "steps": 14063}]
    assert {"rdp_at_best_order", "formula", "sources", "notes", "noise_std"} <= set(data)


def test_phases_and_the_classic_bound(capsys):
    args = ["privacy", "--phases", "1e-5,1.0,10;1e-4,3.0,4", "--delta", "1e-5", "--orders", "2-32"]
    assert round(run_json(capsys, *args)["epsilon"], 4) == 0.3363
    classic = run_json(capsys, *args, "--conversion", "classic")
    assert (round(classic["epsilon"], 4), classic["best_order"]) == (0.5233, 23)


def test_account_text_shows_each_step(capsys, monkeypatch):
    out, _ = run_text(capsys, monkeypatch, *MNIST, "--clip", "1", columns=80)
    assert "at the best order α = 8.1" in out
    assert "rdp = Σ steps × rdp per step = 14063 × 9.96597e-5 = 1.40151" in out
    assert "ε = 2.59666 for δ = 1e-5" in out
    assert "σ·C/B = 1.1 × 1 / 256 = 0.00429688" in out


def test_noise_for_a_target(capsys):
    data = run_json(capsys, "privacy", "-q", "0.01", "--steps", "10000", "--target-epsilon", "2", "--delta",
                    "1e-5", "--orders", "2-64")
    assert data["kind"] == "noise"
    assert data["epsilon"] <= 2
    lo, hi = data["bracket"]
    assert hi == data["noise_multiplier"] and hi - lo <= 1e-6 * hi


def test_dp_fedavg_clients(capsys):
    data = run_json(capsys, "privacy", "--clients-per-round", "100,1000", "--population", "1000000", "--steps",
                    "2000", "--target-epsilon", "2", "--delta", "1e-6", "--orders", "2-64")
    assert data["kind"] == "clients"
    small, large = data["rows"]
    assert small["noise_multiplier"] < large["noise_multiplier"]
    assert small["noise_std"] > large["noise_std"]


BAD = [
    (["-q", "0", "--noise", "1", "--steps", "10", "--delta", "1e-5"], "error: -q 0 is outside (0, 1]"),
    (["-q", "2", "--noise", "1", "--steps", "10", "--delta", "1e-5"], "error: -q 2 is outside (0, 1]"),
    (["-q", "0.01", "--noise", "0", "--steps", "10", "--delta", "1e-5"], "error: --noise 0 is not positive"),
    (["-q", "0.01", "--noise", "-1", "--steps", "10", "--delta", "1e-5"], "error: --noise -1 is not positive"),
    (["-q", "0.01", "--noise", "1", "--steps", "10", "--delta", "1"], "error: --delta 1 is outside (0, 1)"),
    (["-q", "0.01", "--noise", "1", "--steps", "10", "--delta", "0"], "error: --delta 0 is outside (0, 1)"),
    (["-q", "0.01", "--noise", "1", "--steps", "0", "--delta", "1e-5"], "error: --steps 0 is outside 1 to 1e12"),
    (["-q", "0.01", "--noise", "1", "--delta", "1e-5"], "error: give exactly one of --steps and --epochs"),
    (["--noise", "1", "--steps", "3", "--delta", "1e-5"], "error: the sampling rate needs -q or both --batch"),
    (["-q", "0.01", "--noise", "1", "--steps", "3", "--delta", "1e-5", "--clip", "1"],
     "error: the noise on the averaged gradient needs both --clip and --batch"),
    (["-q", "0.01", "--noise", "1", "--steps", "3", "--delta", "1e-5", "--conversion", "x"],
     "error: unknown conversion 'x'"),
    (["-q", "0.01", "--noise", "1", "--steps", "3", "--delta", "1e-5", "--orders", "0.5"],
     "error: item 0 of the orders: order=0.5 is outside (1, 10000]"),
    (["-q", "0.01", "--noise", "1", "--steps", "3"], "error: Missing option '--delta'"),
]


@pytest.mark.parametrize(("args", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_is_one_error_line(capsys, args, message):
    out, err = run(capsys, "privacy", *args, rc=2)
    assert out == ""
    assert err.startswith(message)
    assert err.count("\n") == 1


def test_privacy_imports_neither_numpy_nor_scipy():
    code = ("import sys\nfrom costmodel.cli import main\n"
            f"rc = main({[*MNIST[0:], '--json']!r})\n"
            "print(rc, sorted(m for m in ('numpy', 'scipy', 'sympy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "0 []"
