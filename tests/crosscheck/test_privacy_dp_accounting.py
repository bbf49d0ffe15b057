"""DP-SGD accounting against Google's ``dp-accounting`` RDP accountant on 200 random settings.

An independent implementation (numpy and scipy's ``log_ndtr`` where costmodel uses ``math`` and its own
tail series): the same (q, σ, steps, δ) composed by ``RdpAccountant`` over its default orders must give
ε within 1e-6 relative, and the same best order.  The package is a test extra (``pip install
'costmodel[test]'``), not a dependency: without it these tests skip and say why.
"""

from __future__ import annotations

import math
import random

import pytest

from costmodel.training.privacy import privacy_account

dp_accounting = pytest.importorskip(
    "dp_accounting", reason="the cross-check needs Google's dp-accounting: pip install 'costmodel[test]'")


def _settings(n: int = 200, seed: int = 26) -> list[tuple[float, float, int, float]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q = 10 ** rng.uniform(-5, 0) if rng.random() > 0.05 else 1.0
        sigma = 10 ** rng.uniform(-0.3, 1.3)  # 0.5 to 20
        steps = int(10 ** rng.uniform(0, 5))
        delta = 10 ** rng.uniform(-10, -2)
        out.append((q, sigma, steps, delta))
    return out


def _google(q: float, sigma: float, steps: int, delta: float) -> tuple[float, float]:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    accountant = rdp.RdpAccountant()
    event = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
    accountant.compose(dp_event.SelfComposedDpEvent(event, steps))
    eps, order = accountant.get_epsilon_and_optimal_order(delta)
    return float(eps), float(order)


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), _settings(),
                         ids=lambda v: f"{v:.3g}" if isinstance(v, float) else str(v))
def test_epsilon_agrees_with_dp_accounting(q, sigma, steps, delta):
    theirs, order = _google(q, sigma, steps, delta)
    ours = privacy_account([(q, sigma, steps)], delta=delta)
    if math.isinf(theirs):
        pytest.fail(f"dp-accounting gives an infinite ε at {(q, sigma, steps, delta)}")
    assert ours.epsilon == pytest.approx(theirs, rel=1e-6, abs=1e-12)
    if theirs > 0:
        assert ours.best_order == order


def test_heterogeneous_phases_agree_with_dp_accounting():
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    phases = [(1e-5, 1.0, 10), (1e-4, 3.0, 4), (0.02, 1.3, 500)]
    accountant = rdp.RdpAccountant(orders=[float(a) for a in range(2, 65)])
    for q, sigma, steps in phases:
        accountant.compose(dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps))
    theirs = accountant.get_epsilon(1e-6)
    assert privacy_account(phases, delta=1e-6, orders="2-64").epsilon == pytest.approx(theirs, rel=1e-6)
