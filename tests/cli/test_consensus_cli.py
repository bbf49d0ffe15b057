"""The command-line contract of consensus, gossip-step and gossip-vs-allreduce.

The commands live in ``cli/consensus.py``; their bad inputs are in ``test_bad_input.py``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

COMMANDS = ("consensus", "gossip-step", "gossip-vs-allreduce")
LINK = ["--alpha", "5us", "--bandwidth", "12.5GB/s"]


def test_consensus_json_contract(cli):
    data = cli.json("consensus", "ring", "-p", "4", "--init", "0,3,6,9")
    assert {"graph", "p", "rho", "spectral_gap", "doubly_stochastic", "rounds_to_target", "trajectory",
            "rho_exact", "spectral_gap_exact", "weights", "target", "notes", "method"} <= set(data)
    assert (data["graph"], data["p"], data["weights"]) == ("ring", 4, "uniform")
    assert data["rho"] == pytest.approx(1 / 3) and data["rho_exact"] == "1/3"
    assert data["spectral_gap_exact"] == "2/3"
    assert data["doubly_stochastic"] is True
    assert data["rounds_to_target"] == 5 and data["target"] == 0.01
    first = data["trajectory"][1]
    assert {"round", "values", "disagreement"} <= set(first)
    assert first["round"] == 1 and first["values"] == [4, 3, 6, 5]
    assert [round(r["disagreement"], 3) for r in data["trajectory"][:3]] == [6.708, 2.236, 0.745]
    assert len(data["trajectory"]) == 6


def test_consensus_options(cli, tmp_path: Path):
    data = cli.json("consensus", "star", "-p", "5", "--weights", "metropolis", "--rounds", "2",
                    "--target", "1000x")
    assert data["rho_exact"] == "4/5" and data["target"] == 0.001 and len(data["trajectory"]) == 3
    data = cli.json("consensus", "random-regular", "-p", "50", "--degree", "4", "--seed", "3")
    assert data["seed"] == 3 and data["degree"] == 4
    data = cli.json("consensus", "erdos-renyi", "-p", "60", "--prob", "0.2", "--rounds", "1")
    assert data["graph"] == "erdos-renyi"
    data = cli.json("consensus", "torus", "-p", "12", "--rows", "2", "--rounds", "0")
    assert data["label"] == "2-D torus 2 × 6"
    edges = tmp_path / "g.txt"
    edges.write_text("# a square\n0 1\n1 2\n2 3\n3 0\n", encoding="utf-8")
    data = cli.json("consensus", "edges", "--edges", str(edges))
    assert data["p"] == 4 and data["rho_exact"] == "1/3"
    weights = tmp_path / "w.csv"
    weights.write_text("0,0.5,0,0.5\n0.5,0,0.5,0\n0,0.5,0,0.5\n0.5,0,0.5,0\n", encoding="utf-8")
    data = cli.json("consensus", "ring", "-p", "4", "--weights", str(weights))
    assert data["rho"] == 1 and data["rounds_to_target"] is None
    assert any("oscillate" in n for n in data["notes"])
    data = cli.json("consensus", "matrix", "--weights", str(weights), "--rounds", "1")
    assert data["graph"] == "matrix" and data["weights_file"] == str(weights)


def test_consensus_of_a_million_workers(cli):
    data = cli.json("consensus", "ring", "-p", "1000000", "--rounds", "2")
    assert data["trajectory"][0]["values"] is None
    assert data["spectral_gap"] == pytest.approx(4 / 3 * 9.869604401089358e-12, rel=1e-9)  # (4/3)·sin²(π/p)


def test_rho_a_hair_below_one_is_not_printed_as_one(cli):
    out, _ = cli.text("consensus", "ring", "-p", "1000000", "--target", "0.001", columns=80)
    assert out.splitlines()[1].startswith("ρ = 1 − 1.316e-11 · spectral gap 1 − ρ = 1.31595e-11")
    assert "‖x − x̄‖₂" not in out  # no trajectory table
    assert "note: no trajectory for p > 1000 workers unless asked: give --rounds R" in " ".join(out.split())


def test_long_exact_trajectories_become_floats(cli):
    # 200 exact rounds of a dense random graph made a 4,300-digit integer the JSON could not print
    data = cli.json("consensus", "erdos-renyi", "-p", "64", "--prob", "0.5", "--rounds", "200")
    assert data["trajectory_exact"] is False and len(data["trajectory"]) == 201
    exact = [r for r in data["trajectory"] if r["values_exact"] is not None]
    assert exact and [r["round"] for r in exact] == list(range(len(exact)))
    assert all(len(v) <= 2 * 60 + 2 for r in exact for v in r["values_exact"])
    assert f"values shown as floats from round {len(exact)} on: exact values would need more than 60 digits" \
        in data["notes"]
    assert data["trajectory"][-1]["disagreement"] < 1e-9
    small = cli.json("consensus", "ring", "-p", "4", "--init", "0,3,6,9", "--rounds", "5")
    assert small["trajectory_exact"] is True


def test_rho_of_a_permutation_is_printed_as_one(cli, tmp_path: Path):
    shift = tmp_path / "shift.txt"  # worker i takes worker i + 3's value: a 7-cycle, |λ| = 1 for all
    shift.write_text("\n".join(" ".join("1" if j == (i + 3) % 7 else "0" for j in range(7)) for i in range(7)))
    data = cli.json("consensus", "matrix", "-w", str(shift))
    assert (data["rho"], data["rho_exact"], data["spectral_gap"], data["converges"]) == (1, "1", 0, False)
    out, err = cli.text("consensus", "matrix", "-w", str(shift), "--rounds", "1", columns=120)
    assert "ρ = 1 · spectral gap 1 − ρ = 0" in out
    assert "periodic with period 7" in out and "1.0000000000000" not in out + err


def test_a_large_non_symmetric_matrix_file(cli, tmp_path: Path):
    # 1,700 rows of ½(I + P), P a cyclic shift: ARPACK does not converge (eigenvalues crowd the
    # unit circle), which crashed; dense eigenvalues give ρ = cos(π/1700)
    p = 1700
    path = tmp_path / "rotation.txt"
    with path.open("w") as f:
        for i in range(p):
            row = ["0"] * p
            row[i] = row[(i + 1) % p] = "1/2"
            f.write(" ".join(row) + "\n")
    data = cli.json("consensus", "matrix", "-w", str(path), "--rounds", "1")
    assert data["p"] == p and data["symmetric"] is False and data["doubly_stochastic"] is True
    assert data["method"].endswith("sparse Arnoldi did not converge")
    assert data["rho"] == pytest.approx(math.cos(math.pi / p), abs=1e-12)


def test_gossip_step_json(cli):
    data = cli.json("gossip-step", "--value", "6", "--neighbours", "3,12", "--grad", "2", "--lr", "0.5")
    assert {k: data[k] for k in ("mixed", "next", "without_mixing")} == {"mixed": 7, "next": 6, "without_mixing": 5}
    data = cli.json("gossip-step", "--value", "6", "--neighbors", "3,12", "--grad", "2", "--lr", "0.5",
                    "--weights", "0.5,0.25,0.25")
    assert data["mixed"] == 6.75 and data["weights_default"] is False


def test_gossip_vs_allreduce_json(cli):
    data = cli.json("gossip-vs-allreduce", "ring", "-p", "16", "-n", "100MB", *LINK)
    assert {"graph", "p", "n_bytes", "alpha_s", "beta_s_per_byte", "rho", "target", "gossip", "allreduce",
            "time_ratio", "faster", "model"} <= set(data)
    assert {"rounds", "degree", "round_time_s", "time_s", "bytes_sent_per_worker"} <= set(data["gossip"])
    assert data["allreduce"]["algorithm"] == "ring" and data["allreduce"]["rounds"] == 30
    # 2 × 15/16 × 100 MB sent by each rank of the ring all-reduce
    assert data["allreduce"]["bytes_sent_per_rank"] == 187_500_000
    assert data["gossip"]["degree"] == 2
    assert data["gossip"]["round_time_s"] == pytest.approx(2 * (5e-6 + 1e8 / 12.5e9), rel=1e-15)
    data = cli.json("gossip-vs-allreduce", "exponential", "-p", "16", "-n", "1MB", "--profile", "textbook",
                    "--target", "0.001")
    assert data["gossip"]["degree"] == 4 and data["rho_exact"] == "3/5"


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["consensus", "ring", "-p", "4", "--init", "0,3,6,9"],
         ["ρ = 1/3", "100×: 5", "4, 3, 6, 5", "6.708", "√5/3", "doubly stochastic"]),
        (["consensus", "star", "-p", "4"], ["row- but not column-stochastic", "ρ = 1/2"]),
        (["gossip-step", "--value", "6", "--neighbours", "3,12", "--grad", "2", "--lr", "0.5"],
         ["mixed", "7", "without mixing", "5"]),
        (["gossip-vs-allreduce", "ring", "-p", "16", "-n", "100MB", *LINK],
         ["gossip (2 sends/round)", "ring all-reduce", "187.5 MB", "faster: allreduce"]),
    ],
)
def test_tables(cli, argv, needles):
    out, _ = cli.text(*argv, columns=120)
    for needle in needles:
        assert needle in out


def test_notes_follow_the_answer_on_stdout(cli):
    out, err = cli.text("consensus", "star", "-p", "4", columns=200)
    table, _, notes = out.partition("\nnote: ")
    assert "mean" in notes and "round" in table and err == ""


def test_bad_files_name_the_line(cli, tmp_path: Path):
    edges = tmp_path / "g.txt"
    edges.write_text("0 1\n1 two\n", encoding="utf-8")
    assert f"error: {edges}:2: '1 two' is not an edge" in cli("consensus", "edges", "--edges", str(edges), rc=2)[1]
    weights = tmp_path / "w.txt"
    weights.write_text("0.5 0.5\n0.5 0.4\n", encoding="utf-8")
    _, err = cli("consensus", "ring", "-p", "2", "--weights", str(weights), rc=2)
    assert f"error: {weights}:2: row 1 sums to 0.9, not 1" in err
