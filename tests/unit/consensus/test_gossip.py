"""Consensus runs, D-SGD steps and gossip against all-reduce: values worked out by hand."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.collectives.evaluate import cost
from costmodel.consensus.gossip import consensus, dsgd_step, gossip_vs_allreduce, simulate
from costmodel.consensus.graphs import ring, star
from costmodel.consensus.mixing import mixing_matrix
from costmodel.errors import InputError
from costmodel.params import LinkParams

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11))  # 5 µs, 12.5 GB/s


def test_exact_and_float_simulations_agree():
    m = mixing_matrix(ring(6), "metropolis")
    init = [Fraction(v) for v in (1, -2, 3, 0, 5, 7)]
    exact = simulate(m, init, rounds=8)
    floats = simulate(m, [float(v) for v in init], rounds=8)
    assert exact[-1].disagreement_squared is not None and floats[-1].disagreement_squared is None
    for a, b in zip(exact, floats, strict=True):
        assert a.disagreement == pytest.approx(b.disagreement, rel=1e-12)
        assert [float(v) for v in a.values] == pytest.approx(list(b.values), rel=1e-12)


def test_exact_values_switch_to_floats_beyond_the_digit_budget():
    # the ring of 4 with weights 1/3: round r has denominator 3^r, and 3^125 < 10^60 < 3^126
    run = consensus("ring", 4, init="0,3,6,9", rounds=130)
    exact = [r for r in run.trajectory if isinstance(r.mean, Fraction)]
    assert [r.round for r in exact] == list(range(126))
    last = exact[-1].values
    assert all(max(abs(v.numerator), v.denominator) < 10**60 for v in last)
    following = [(last[i - 1] + last[i] + last[(i + 1) % 4]) / 3 for i in range(4)]  # W by hand
    assert any(max(abs(v.numerator), v.denominator) >= 10**60 for v in following)
    assert not run.trajectory_exact and run.to_dict()["trajectory_exact"] is False
    assert "values shown as floats from round 126 on: exact values would need more than 60 digits" in run.notes
    # the float rounds carry on from the exact ones: the same as floats all the way (independent)
    floats = simulate(mixing_matrix(ring(4)), [0.0, 3.0, 6.0, 9.0], rounds=130)
    for a, b in zip(run.trajectory, floats, strict=True):
        assert a.disagreement == pytest.approx(b.disagreement, rel=1e-9)
    assert consensus("ring", 4, init="0,3,6,9", rounds=125).trajectory_exact


def test_dense_exact_runs_switch_to_floats_beyond_the_work_budget():
    # complete graph of 256: 256² = 65,536 weights a round, so 7 exact rounds fit in 500,000
    run = consensus("complete", 256, rounds=12)
    assert [isinstance(r.mean, Fraction) for r in run.trajectory] == [True] * 8 + [False] * 5
    assert run.trajectory[7].disagreement_squared == 0  # one round of 1/p averaging agrees exactly
    assert any("from round 8 on: the exact rounds would take more than 500,000" in n for n in run.notes)


def test_the_disagreement_ratio_tends_to_rho():
    run = consensus("ring", 10, rounds=80)
    rates = run.observed_rates
    # uniform ring of 10: ρ = (1 + 2cos 36°)/3
    rho = (1 + 2 * math.cos(math.pi / 5)) / 3
    assert run.spectrum.rho == pytest.approx(rho, abs=1e-15)
    assert rates[-1] == pytest.approx(rho, rel=1e-9)
    assert abs(rates[-1] - rho) < abs(rates[0] - rho)


def test_on_a_star_the_mean_drifts_to_the_degree_weighted_average():
    run = consensus("star", 5, init="0,1,2,3,4", rounds=60)
    # uniform W = D⁻¹(I + A) keeps Σ (d_i + 1) x_i: (5·0 + 2·(1 + 2 + 3 + 4))/13 = 20/13, not the mean 2
    assert run.trajectory[0].mean == 2
    assert run.trajectory[1].mean == Fraction(7, 5)  # values (2, 1/2, 1, 3/2, 2)
    assert float(run.trajectory[-1].mean) == pytest.approx(20 / 13, rel=1e-12)
    assert run.observed_rates[-1] == pytest.approx(0.5, rel=1e-9)
    assert any("mean" in n and "drift" in n for n in run.notes)


def test_defaults():
    run = consensus("ring", 4)
    assert [r.values for r in run.trajectory[:1]] == [(0, 1, 2, 3)]
    assert run.init_default and len(run.trajectory) == 6  # rounds 0 … 5, the rounds to 100×
    assert len(consensus("ring", 100).trajectory) == 21  # capped at 20 rounds
    big = consensus("ring", 5000, rounds=2)
    assert big.trajectory[0].values is None
    assert any("values omitted" in n for n in big.notes)


def test_a_trajectory_past_the_shown_values_is_simulated_only_when_asked():
    run = consensus("ring", 10**6, target="0.001")
    assert run.trajectory == () and run.rounds.rounds == 524926455882
    assert any(n.startswith("no trajectory for p > 1000 workers unless asked") for n in run.notes)
    asked = consensus("ring", 10**6, rounds=2)
    assert [r.round for r in asked.trajectory] == [0, 1, 2]
    assert asked.trajectory[0].mean == 499999.5 and asked.trajectory[2].values is None
    assert any(n.startswith("values shown as floats") for n in asked.notes)
    small = consensus("ring", 1000)
    assert len(small.trajectory) == 21 and small.trajectory[0].values[-1] == 999


def test_huge_dense_graphs_skip_the_trajectory():
    run = consensus("complete", 10**6)
    assert run.spectrum.rho_exact == 0 and run.rounds.rounds == 1
    assert len(run.trajectory) == 1
    assert any("no trajectory" in n for n in run.notes)


def test_matrix_graph_and_built_graphs(tmp_path: Path):
    path = tmp_path / "w.txt"
    path.write_text("1/2 1/2 0\n1/2 0 1/2\n0 1/2 1/2\n", encoding="utf-8")
    run = consensus("matrix", weights=str(path), init="0,3,6", rounds=1)
    assert run.graph.name == "matrix" and run.mixing.path == str(path)
    assert run.trajectory[1].values == (Fraction(3, 2), 3, Fraction(9, 2))
    assert consensus(ring(4), init="0,3,6,9", rounds=1).trajectory[1].values == (4, 3, 6, 5)


def test_a_run_to_dict_is_json():
    data = consensus("ring", 4, init="0,3,6,9").to_dict()
    text = json.dumps(data, allow_nan=False)
    assert '"rho_exact": "1/3"' in text
    assert data["trajectory"][2]["disagreement_exact"] == "√5/3"


def test_dsgd_step_default_and_given_weights():
    s = dsgd_step(6, (3, 12), grad=2, lr=Fraction(1, 2))
    assert (s.mixed, s.next, s.without_mixing) == (7, 6, 5)
    assert s.weights == (Fraction(1, 3),) * 3 and s.weights_default
    # (1/2)·6 + (1/4)·3 + (1/4)·12 = 27/4; next = 27/4 − 1 = 23/4
    s = dsgd_step("6", "3,12", grad="2", lr="0.5", weights=("0.5", "0.25", "0.25"))
    assert (s.mixed, s.next) == (Fraction(27, 4), Fraction(23, 4))
    s = dsgd_step(6.0, [3.0, 12.0], grad=2.0, lr=0.5, weights=[1 / 3, 1 / 3, 1 / 3])  # floats: tolerance
    assert s.next == pytest.approx(6)
    assert dsgd_step(6, [], grad=2, lr=0).next == 6


BAD = [
    (lambda: dsgd_step(6, "3,12", grad=2, lr="0.5", weights="0.3,0.3,0.3"), "weights 0.3, 0.3, 0.3 sum to 0.9"),
    (lambda: dsgd_step(6, "3,12", grad=2, lr="0.5", weights="0.5,0.5"), "2 weights given for 3 values"),
    (lambda: dsgd_step(6, "3,12", grad=2, lr="-0.5"), "lr=-0.5 is negative"),
    (lambda: dsgd_step(6, "3,,12", grad=2, lr="0.5"), "item 1 of the neighbour values: '' is not a number"),
    (lambda: dsgd_step(True, "3", grad=2, lr="0.5"), "is a bool"),
    (lambda: dsgd_step(float("nan"), "3", grad=2, lr="0.5"), "nan is not a finite number"),
    (lambda: consensus("ring", 4, init="1,2,3"), "3 initial values given for p=4"),
    (lambda: consensus("ring", 4, rounds=-1), "rounds=-1 is not an integer between 0 and 100000"),
    (lambda: consensus("ring", 4, target="1.5"), "target='1.5' is not between 0 and 1"),
    (lambda: consensus(ring(4), 4, degree=2), "options degree apply to a graph name"),
    (lambda: consensus(ring(4), 5), "p=5 does not match the ring of 4"),
    (lambda: consensus("matrix"), "takes its edges from a matrix file"),
    (lambda: consensus("edges", edges="/no/such/file"), "cannot read the edge list"),
    (lambda: consensus("complete", 10**6, rounds=1), "1,000,000,000,000 weights, more than 50,000,000"),
    # 3·10^5 weights × 10^5 rounds: minutes of sparse products, refused before the first
    (lambda: consensus("ring", 100_000, rounds=100_000),
     "rounds=100000 on the ring of 100000 would take 30,000,000,000 weight multiplications "
     "(300,000 nonzero weights × 100,000 rounds), more than 1,000,000,000; give rounds=3333 or fewer"),
    (lambda: simulate(mixing_matrix(ring(100_000)), range(100_000), rounds=3334), "1,000,200,000 weight"),
]


@pytest.mark.parametrize(("call", "needle"), BAD, ids=[b[1][:40] for b in BAD])
def test_bad_input(call, needle):
    with pytest.raises(InputError) as info:
        call()
    assert needle in str(info.value)


def test_long_runs_drop_the_values_but_keep_the_disagreement():
    # 1000 workers × 1001 rounds is 1,001,000 values, past the 1,000,000 kept
    run = consensus("ring", 1000, rounds=1000)
    assert len(run.trajectory) == 1001 and all(q.values is None for q in run.trajectory)
    assert run.trajectory[0].disagreement == pytest.approx(math.sqrt(sum((k - 999 / 2) ** 2 for k in range(1000))))
    assert any("1,000 workers × 1,001 rounds are more than 1,000,000 values" in note for note in run.notes)
    assert all(q.values is not None for q in consensus("ring", 1000, rounds=998).trajectory)


def test_gossip_vs_allreduce_prices_each_side():
    c = gossip_vs_allreduce("ring", 16, n="100MB", link=LINK)
    r = c.run.rounds.rounds
    n = Fraction(10**8)
    # gossip: r rounds, 2 sends of n bytes each, one at a time
    assert c.degree == 2
    assert c.gossip_round_time_s == 2 * (LINK.alpha_s + n * LINK.beta_s_per_byte)
    assert c.gossip_time_s == r * c.gossip_round_time_s
    assert c.gossip_bytes_per_worker == r * 2 * n
    ring_ar = cost("allreduce", "ring", p=16, n=n, link=LINK)
    assert c.allreduce.time_s == ring_ar.time_s and c.allreduce.bytes_sent_per_rank == 2 * 15 * n / 16
    assert c.faster == "allreduce"
    data = c.to_dict()
    json.dumps(data, allow_nan=False)
    assert data["gossip"]["rounds"] == r and data["allreduce"]["algorithm"] == "ring"


def test_gossip_on_a_complete_graph_takes_one_round():
    c = gossip_vs_allreduce("complete", 8, n=1000, link=LINK)
    assert c.run.rounds.rounds == 1 and c.degree == 7


def test_gossip_that_never_agrees(tmp_path: Path):
    c = gossip_vs_allreduce(star(4), n=1000, link=LINK, weights="uniform", target="0.5")
    assert c.gossip_time_s is not None  # the star does converge (ρ = 1/2)
    half = "1/2"
    rows = "\n".join(" ".join(half if (j - i) % 4 in (1, 3) else "0" for j in range(4)) for i in range(4))
    path = tmp_path / "w.txt"
    path.write_text(rows, encoding="utf-8")
    c = gossip_vs_allreduce("ring", 4, n=1000, link=LINK, weights=str(path))
    assert c.gossip_time_s is None and c.time_ratio is None and c.faster == "allreduce"
    assert any("never reaches" in n for n in c.notes)
