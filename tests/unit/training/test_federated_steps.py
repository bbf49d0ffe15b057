"""The federated optimisers' arithmetic (costmodel.training.federated_steps), exact.

Expected values are worked by hand from the papers' update rules:

* FedProx (Li et al. 2020, eq. 2), the issue's vector: w = 1, wᵗ = 0, ∇ = 2, η = 0.1, μ = 0.5:
  1 − 0.1·(2 + 0.5·(1 − 0)) = 0.75;
* SCAFFOLD option II (Karimireddy et al. 2020, Algorithm 1) on f_i = (a_i/2)(y − b_i)², x = 0, c = c_i = 0,
  K = 2, η_l = 1/2: client b = 1 goes 0 → 1/2 → 3/4 (c⁺ = −3/4), client b = 3 goes 0 → 3/2 → 9/4
  (c⁺ = −9/4); x ← 0 + (3/4 + 9/4)/2 = 3/2, c ← 0 + 1·(−3/4 − 9/4)/2 = −3/2;
* FedNova (Wang et al. 2020): g = (1, −1), τ = (1, 3), p = (1/2, 1/2), η = 1: FedAvg
  0 − (1/2·1·1 + 1/2·3·(−1)) = 1 with effective weights (1/4, 3/4); FedNova 0 − 2·0 = 0.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError
from costmodel.training.federated_steps import fednova_round, fedprox_step, scaffold_round

F = Fraction


def test_fedprox_step_issue_vector():
    s = fedprox_step(1, anchor=0, gradient=2, lr="0.1", mu="0.5")
    assert s.new_w == (F(3, 4),)
    assert s.proximal == (F(1, 2),) and s.total == (F(5, 2),) and s.plain_sgd == (F(4, 5),)


def test_fedprox_with_mu_zero_is_sgd_and_vectors_work():
    s = fedprox_step("1,2", anchor="0,0", gradient="1,1", lr="0.5", mu=0)
    assert s.new_w == s.plain_sgd == (F(1, 2), F(3, 2))


def test_scaffold_round_by_hand():
    r = scaffold_round("0", curvatures="1,1", optima="1;3", steps=2, lr_local="0.5")
    assert [cl.iterates for cl in r.clients] == [((0,), (F(1, 2),), (F(3, 4),)), ((0,), (F(3, 2),), (F(9, 4),))]
    assert [cl.new_control for cl in r.clients] == [(F(-3, 4),), (F(-9, 4),)]
    assert r.new_x == (F(3, 2),) and r.new_c == (F(-3, 2),)


def test_scaffold_control_variate_is_the_mean_gradient_along_the_path():
    # option II: x − y = η_l Σ (g_t − c_i + c), so c_i⁺ = c_i − c + (x − y)/(Kη_l) = the mean of the K gradients
    r = scaffold_round("2,-1", curvatures="3", optima="1,1", controls="0.5,0", c="0.25,0.25", steps=3,
                       lr_local="0.1", population=4)
    cl = r.clients[0]
    grads = [tuple(3 * (y - b) for y, b in zip(y_, (1, 1), strict=True)) for y_ in cl.iterates[:-1]]
    mean = tuple(sum(g[j] for g in grads) / 3 for j in range(2))
    assert cl.new_control == mean
    assert r.new_c == tuple(cj + F(1, 4) * d for cj, d in zip(r.c, cl.delta_c, strict=True))


def test_fednova_by_hand():
    r = fednova_round("0", gradients="1;-1", steps="1,3", lr=1)
    assert r.fedavg_x == (F(1),) and r.fednova_x == (F(0),)
    assert r.fedavg_weights == (F(1, 4), F(3, 4)) and r.tau_eff == 2


def test_fednova_equals_fedavg_with_equal_steps():
    r = fednova_round("1,1", gradients="1,0;0,2;3,1", steps="2,2,2", sizes="1,2,3", lr="0.1")
    assert r.fedavg_x == r.fednova_x
    assert r.fedavg_weights == r.weights


BAD = [
    (lambda: fedprox_step(1, anchor="0,1", gradient=2, lr="0.1", mu=1), "anchor has 2 components"),
    (lambda: fedprox_step(1, anchor=0, gradient=2, lr=0, mu=1), "lr=0 is zero"),
    (lambda: fedprox_step(1, anchor=0, gradient=2, lr=1, mu=-1), "mu=-1 is negative"),
    (lambda: scaffold_round("0", curvatures="1,1", optima="1", lr_local=1), "2 curvatures but 1 optima"),
    (lambda: scaffold_round("0", curvatures="0", optima="1", lr_local=1), "curvatures must be positive"),
    (lambda: scaffold_round("0", curvatures="1,1", optima="1;2", lr_local=1, population=1), "below the 2"),
    (lambda: fednova_round("0", gradients="1;2", steps="1", lr=1), "2 gradients but 1 step counts"),
]


@pytest.mark.parametrize(("call", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input(call, message):
    with pytest.raises(InputError) as info:
        call()
    assert message in str(info.value)
