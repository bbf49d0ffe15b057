"""The command-line contract: JSON keys and units, exit codes, one-line errors."""

from __future__ import annotations

import json
import math

from costmodel.cli import main
from tests.clirun import run_json

SEED = ["--alpha", "5us", "--beta", "0.08ns/B"]


def test_cost_json_contract(capsys):
    data = run_json(capsys, "cost", "allreduce", "-p", "16", "-n", "1MiB", *SEED)
    assert {"collective", "p", "n_bytes", "alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "results",
            "best", "bound", "meaning_of_n"} <= set(data)
    assert data["collective"] == "allreduce"
    assert data["n_bytes"] == 1048576
    assert data["alpha_s"] == 5e-6
    assert data["beta_s_per_byte"] == 8e-11
    first = data["results"][0]
    assert {"algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
            "bytes_sent_per_rank", "formula", "notes", "bound_ratio"} <= set(first)
    # 8 alpha + 1.875 n beta = 40 us + 157.2864 us (the house-style example)
    assert first["algorithm"] == "rabenseifner"
    assert math.isclose(first["time_s"], 0.0001972864, rel_tol=1e-15)
    assert data["best"] == "rabenseifner"
    times = [r["time_s"] for r in data["results"]]
    assert times == sorted(times)


def test_cost_selected_algorithms_and_aliases(capsys):
    data = run_json(capsys, "cost", "all_reduce", "rd", "rab", "ring", "-p", "16", "-n", "8KiB", *SEED)
    assert [r["algorithm"] for r in data["results"]] == ["recursive-doubling", "rabenseifner", "ring"]


def test_non_power_of_two_is_adapted_with_a_note(capsys):
    data = run_json(capsys, "cost", "allreduce", "rab", "-p", "12", "-n", "1MB", *SEED)
    (result,) = data["results"]
    assert result["algorithm"] == "rabenseifner-folded"
    assert any("not" in note or "fails" in note for note in result["notes"])


def test_bound_json(capsys):
    data = run_json(capsys, "bound", "allreduce", "-p", "16", "-n", "1MiB", *SEED)
    # ceil(log2 16) alpha = 20 us; 2(15/16) n beta = 157.2864 us
    assert data["latency_s"] == 2e-05
    assert math.isclose(data["bandwidth_s"], 1.572864e-4, rel_tol=1e-15)
    assert math.isclose(data["time_s"], data["latency_s"] + data["bandwidth_s"] + data["compute_s"])


def test_crossover_json(capsys):
    data = run_json(capsys, "crossover", "allreduce", "rd", "rab", "-p", "16", *SEED)
    (point,) = data["crossovers"]
    assert point["exact"] is True
    assert point["n_bytes_exact"] == "2000000/17"
    assert data["below"] == "recursive-doubling"
    assert data["above"] == "rabenseifner"


def test_crossover_in_p_json(capsys):
    data = run_json(capsys, "crossover", "allreduce", "ring", "rab", "-n", "64MiB", "--p-max", "20", *SEED)
    assert data["crossovers_p"] == [3, 4, 5, 8, 9, 16, 17]


def test_best_json(capsys):
    data = run_json(capsys, "best", "allreduce", "ring", "rd", "rab", "-p", "16", "--max", "64MiB", *SEED)
    assert [r["algorithm"] for r in data["ranges"]] == ["recursive-doubling", "rabenseifner"]
    assert data["ranges"][0]["from_bytes"] == 1
    assert data["ranges"][-1]["to_bytes"] == 67108864


def test_formula_json_and_latex(capsys):
    data = run_json(capsys, "formula", "allreduce", "rabenseifner")
    assert data["rounds"] == "2·log₂p"
    assert data["adaptations"][0]["algorithm"] == "rabenseifner-folded"
    assert data["source"]["key"] == "thakur2005"
    assert main(["formula", "allreduce", "ring", "--latex"]) == 0
    out = capsys.readouterr().out
    assert "\\alpha" in out and "\\beta" in out


def test_profiles_json(capsys):
    data = run_json(capsys, "profiles")
    names = {p["name"] for p in data["profiles"]}
    assert {"textbook", "100gbe", "ib-hdr", "ib-ndr", "nvlink4"} <= names
    assert all(p["source"] for p in data["profiles"])


def test_profile_option_feeds_the_models(capsys):
    with_profile = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "100MB", "--profile", "textbook")
    with_options = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "100MB", *SEED)
    assert with_profile["results"] == with_options["results"]


def test_json_is_strict_and_finite(capsys):
    # a free link: every time and the bound are 0, so no ratio may become Infinity or NaN
    data = run_json(capsys, "cost", "broadcast", "-p", "7", "-n", "1", "--alpha", "0s", "--beta", "0ns/B")
    text = json.dumps(data, allow_nan=False)
    assert "Infinity" not in text and "NaN" not in text


def test_no_arguments_prints_help_and_exits_2(capsys):
    rc = main([])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "Usage" in out
    assert err == ""


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "cost" in capsys.readouterr().out
    assert main(["cost", "--help"]) == 0
    assert "Example" in capsys.readouterr().out


def test_json_notes_name_options_as_the_text_does(cli):
    """The core's notes name Python parameters; the command line says them as options in --json too."""
    data = cli.json("formula", "allreduce", "hier")
    assert any(note.startswith("on a concrete topology: costmodel cost allreduce hierarchical --level ")
               for note in data["notes"])
    data = cli.json("cost", "allreduce", "ring", "-p", "16", "-n", "1001", "--alpha", "1us", "--bandwidth", "1GB/s")
    assert any("--whole-bytes prices every chunk" in note for note in data["notes"])
    assert not any("whole_bytes=" in note for note in data["notes"])
