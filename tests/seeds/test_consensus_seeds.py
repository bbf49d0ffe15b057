"""The seeds' numbers on decentralised SGD and consensus, reproduced exactly.

Each test reproduces a worked example or practice answer of
``shared/seeds/distributed-sgd-and-allreduce.txt`` ("DSGD") sections 3, 4 and 6; its id
is the section title and the arithmetic is in a comment.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from costmodel.consensus import consensus, dsgd_step, gossip_vs_allreduce, mixing_matrix, ring, spectrum
from costmodel.consensus.spectral import rounds_to_target
from costmodel.params import LinkParams

THIRD = Fraction(1, 3)


def seed(title: str) -> pytest.MarkDecorator:
    """Give the test the seed section title as its id."""
    return pytest.mark.parametrize("section", [title], ids=[title])


@seed("DSGD 3. Worked Example: One Local Update")
def test_one_local_update(section: str) -> None:
    step = dsgd_step(6, (3, 12), grad=2, lr=Fraction(1, 2))
    assert step.weights == (THIRD, THIRD, THIRD)
    assert step.mixed == 7  # (6 + 3 + 12)/3
    assert step.next == 6  # 7 − 0.5 × 2, the gradient taken at the original local model
    assert step.without_mixing == 5  # 6 − 0.5 × 2
    assert step.to_dict()["mixed"] == 7


@seed("DSGD Practice 3. Average 3, 6 and 12, then a gradient step")
def test_practice_average_then_step(section: str) -> None:
    step = dsgd_step(3, "6,12", grad="2", lr="0.5")
    assert (step.mixed, step.next) == (7, 6)  # (3 + 6 + 12)/3 = 7; 7 − 1 = 6


@seed("DSGD 4. Consensus: How Local Models Approach Agreement")
def test_four_worker_ring(section: str) -> None:
    run = consensus("ring", 4, init="0,3,6,9", rounds=5)
    first = run.trajectory[1].values
    assert first == (4, 3, 6, 5)
    assert first[0] == Fraction(9 + 0 + 3, 3)  # W1's first value: its neighbours W4 and W2, and itself
    # disagreement norms: √45, √5, √5/3 ≈ 6.708, 2.236, 0.745
    squared = [r.disagreement_squared for r in run.trajectory[:3]]
    assert squared == [45, 5, Fraction(5, 9)]
    assert [round(r.disagreement, 3) for r in run.trajectory[:3]] == [6.708, 2.236, 0.745]
    assert [r.disagreement_exact for r in run.trajectory[:3]] == ["3√5", "√5", "√5/3"]
    assert run.spectrum.rho_exact == THIRD
    assert run.rounds.rounds == 5  # 100× reduction: ln(100)/ln(3) = 4.19 → 5
    assert math.log(100) / math.log(3) == pytest.approx(4.19, abs=0.005)


@seed("DSGD 4. Consensus: row sums of one; doubly stochastic keeps the mean")
def test_mixing_matrix_is_doubly_stochastic(section: str) -> None:
    m = mixing_matrix(ring(4))
    assert all(sum(w for _, w in row) == 1 for row in m.rows())
    assert m.doubly_stochastic
    run = consensus("ring", 4, init="0,3,6,9", rounds=5)
    assert {r.mean for r in run.trajectory} == {Fraction(9, 2)}  # pure mixing preserves the mean


@seed("DSGD 4. Consensus: rounds for a 100-fold reduction")
def test_rounds_for_a_hundredfold_reduction(section: str) -> None:
    s = spectrum(mixing_matrix(ring(4)))
    assert rounds_to_target(s, "100x").rounds == 5
    assert THIRD**4 > Fraction(1, 100) >= THIRD**5  # 1/81 > 1/100 ≥ 1/243


@seed("DSGD Practice 8. A connected gossip graph does not give identical models at once")
def test_connected_gossip_is_not_immediate_agreement(section: str) -> None:
    run = consensus("ring", 4, init="0,3,6,9", rounds=1)
    assert run.trajectory[1].disagreement > 0


@seed("DSGD 3. What the Graph Changes")
def test_fixed_degree_keeps_exchange_volume_but_rounds_grow(section: str) -> None:
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 10**9))
    small = gossip_vs_allreduce("ring", 8, n=10**6, link=link)
    large = gossip_vs_allreduce("ring", 64, n=10**6, link=link)
    # each round a worker sends its model to its 2 neighbours, whatever p is
    assert small.degree == large.degree == 2
    assert small.gossip_round_time_s == large.gossip_round_time_s
    assert large.run.rounds.rounds > small.run.rounds.rounds


@seed("DSGD 6. Ring All-Reduce Versus a Gossip Ring")
def test_ring_allreduce_versus_gossip_ring(section: str) -> None:
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 10**9))
    c = gossip_vs_allreduce("ring", 4, n=100 * 10**6, link=link)
    # the all-reduce: 6 rounds, 2 × 3/4 × 100 MB = 150 MB sent per worker, the complete reduction
    assert c.allreduce.rounds == 6
    assert c.allreduce.bytes_sent_per_rank == 150 * 10**6
    # one gossip round only mixes neighbours: the models still disagree after it
    assert consensus("ring", 4, init="1,2,3,4", rounds=1).trajectory[1].disagreement > 0
