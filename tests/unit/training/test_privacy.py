"""DP-SGD accounting (costmodel.training.privacy): the published vectors, closed forms, the solver, bad input.

Expected values come from the sources in tests/data/privacy/dp_sgd_vectors.csv and from closed forms
worked out here: the Gaussian mechanism's RDP α/(2σ²) at q = 1 (Mironov 2017, Proposition 7), and at
order 2 ``A₂ = (1 − q)² + 2q(1 − q) + q² e^{1/σ²} = 1 + q²(e^{1/σ²} − 1)`` (the binomial sum of
Mironov et al. 2019, eq. 9, with α = 2).
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.errors import InputError
from costmodel.training.privacy import (
    DEFAULT_ORDERS,
    client_noise,
    epsilon_from_rdp,
    parse_orders,
    privacy,
    privacy_account,
    rdp_sampled_gaussian,
    solve_noise,
)

VECTORS = Path(__file__).resolve().parents[2] / "data" / "privacy" / "dp_sgd_vectors.csv"


def _vectors() -> list[dict[str, str]]:
    with VECTORS.open(encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


@pytest.mark.parametrize("row", _vectors(), ids=lambda r: r["name"])
def test_published_vectors(row):
    a = privacy_account(row["phases"], delta=row["delta"], orders=row["orders"], conversion=row["conversion"])
    assert round(a.epsilon, int(row["digits"])) == float(row["epsilon"])
    assert a.best_order == float(row["best_order"])


def test_opacus_composition_to_more_digits_and_the_classic_bound():
    # dp-accounting 0.6.0 (compute_rdp + compute_epsilon) gives 0.33634406339259515 at order 23
    a = privacy_account("1e-5,1.0,10;1e-4,3.0,4", delta=1e-5, orders="2-32")
    assert a.epsilon == pytest.approx(0.33634406339259515, rel=1e-12)
    classic = privacy_account("1e-5,1.0,10;1e-4,3.0,4", delta=1e-5, orders="2-32", conversion="classic")
    # classic at the same composed rdp: rdp − log δ/(α − 1) at α = 23
    assert classic.best_order == 23
    assert classic.epsilon == pytest.approx(classic.best.rdp + math.log(1e5) / 22, rel=1e-14)
    assert classic.epsilon == pytest.approx(0.5233182903238448, rel=1e-12)


def test_epochs_become_steps_by_the_ceiling():
    a = privacy(batch=256, dataset=60000, noise_multiplier="1.1", epochs=60, delta="1e-5", orders="2-63")
    assert a.phases[0].steps == 14063  # ⌈60·60000/256⌉ = ⌈14062.5⌉
    assert a.phases[0].q == Fraction(256, 60000)
    assert round(a.epsilon, 3) == 2.597


@pytest.mark.parametrize(("q", "sigma", "order"), [(1, 2, 3), (1, "0.5", "2.5"), ("1", 10, 64)])
def test_gaussian_mechanism_at_q_1(q, sigma, order):
    s, a = float(Fraction(sigma)), float(Fraction(order))
    assert rdp_sampled_gaussian(q, sigma, order) == pytest.approx(a / (2 * s * s), rel=1e-15)


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.0), (1e-4, 0.7), (0.3, 4.0), (0.5, 1.5)])
def test_order_two_closed_form(q, sigma):
    assert rdp_sampled_gaussian(q, sigma, 2) == pytest.approx(math.log1p(q * q * math.expm1(1 / sigma**2)),
                                                              rel=1e-12)


def test_fractional_order_lies_between_its_integer_neighbours():
    # RDP is non-decreasing in the order (Mironov 2017, Proposition 9)
    r2, r25, r3 = (rdp_sampled_gaussian(0.02, 1.2, a) for a in (2, 2.5, 3))
    assert r2 <= r25 <= r3




def test_conversions_closed_form():
    r, a, d = 0.5, 11, 1e-5
    assert epsilon_from_rdp(r, a, delta=d, conversion="classic") == pytest.approx(r - math.log(d) / (a - 1))
    assert epsilon_from_rdp(r, a, delta=d, conversion="balle") == pytest.approx(
        r + math.log(1 - 1 / a) - math.log(d * a) / (a - 1))
    assert epsilon_from_rdp(1e-12, 2, delta=0.5) == 0  # δ² > 1 − e^{−rdp}: the KL bound gives ε = 0


def test_default_orders_are_dp_accountings():
    assert len(DEFAULT_ORDERS) == 156
    assert DEFAULT_ORDERS[:2] == (1.1, 1.2) and DEFAULT_ORDERS[98:101] == (10.9, 11.0, 12.0)
    assert DEFAULT_ORDERS[-4:] == (128.0, 256.0, 512.0, 1024.0)
    assert parse_orders("4, 2-3, 2.5") == (2.0, 2.5, 3.0, 4.0)


def test_every_order_is_reported_and_the_best_is_the_least():
    a = privacy_account("0.01,1.1,1000", delta=1e-5)
    assert len(a.rows) == 156
    assert a.epsilon == min(r.epsilon for r in a.rows)
    assert a.best.rdp == pytest.approx(1000 * a.best.rdp_per_step[0], rel=1e-15)


def test_composition_adds_phases():
    one = privacy_account("0.01,1.1,300", delta=1e-5, orders="2-64")
    two = privacy_account("0.01,1.1,100;0.01,1.1,200", delta=1e-5, orders="2-64")
    assert two.epsilon == pytest.approx(one.epsilon, rel=1e-12)


def test_noise_std_on_the_averaged_gradient():
    a = privacy(batch=256, dataset=60000, noise_multiplier="1.1", steps=100, delta=1e-5, clip="1.5",
                orders="2-8")
    assert a.noise_std == pytest.approx(1.1 * 1.5 / 256, rel=1e-15)


def test_solve_noise_brackets_the_target():
    s = solve_noise(2, q=0.01, steps=10000, delta=1e-5, orders="2-64")
    assert s.epsilon <= 2
    assert s.noise_multiplier - s.lower <= 1e-6 * s.noise_multiplier
    below = privacy_account([(0.01, s.lower, 10000)], delta=1e-5, orders="2-64").epsilon
    above = privacy_account([(0.01, s.noise_multiplier, 10000)], delta=1e-5, orders="2-64").epsilon
    assert above <= 2 < below
    assert above == pytest.approx(s.epsilon, rel=1e-15)


def test_dp_fedavg_more_clients_per_round_less_noise_per_update():
    t = client_noise(2, clients_per_round="10,100,1000", population=10**6, rounds=1000, delta=1e-6,
                     clip=1, orders="2-64")
    sigmas = [r.noise_multiplier for r in t.rows]
    stds = [r.noise_std for r in t.rows]
    assert sigmas == sorted(sigmas)  # a larger q needs more noise for the same ε ...
    assert stds == sorted(stds, reverse=True)  # ... but the average divides it by m
    assert all(r.noise_std == pytest.approx(r.noise_multiplier / r.clients_per_round) for r in t.rows)


def test_results_are_json():
    import json

    for result in (privacy_account("0.01,1.1,10", delta=1e-5, orders="2-4"),
                   solve_noise(1, q=0.01, steps=100, delta=1e-5, orders="2-8"),
                   client_noise(1, clients_per_round="10", population=1000, rounds=10, delta=1e-5, orders="2-8")):
        json.dumps(result.to_dict(), allow_nan=False)


BAD = [
    ({"q": 0, "noise_multiplier": 1, "steps": 10, "delta": 1e-5}, "q=0 is outside (0, 1]"),
    ({"q": "1.5", "noise_multiplier": 1, "steps": 10, "delta": 1e-5}, "q=1.5 is outside (0, 1]"),
    ({"q": -0.1, "noise_multiplier": 1, "steps": 10, "delta": 1e-5}, "q=-0.1 is outside (0, 1]"),
    ({"q": 0.01, "noise_multiplier": 0, "steps": 10, "delta": 1e-5}, "noise_multiplier=0 is not positive"),
    ({"q": 0.01, "noise_multiplier": -2, "steps": 10, "delta": 1e-5}, "noise_multiplier=-2 is not positive"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 1}, "delta=1 is outside (0, 1)"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 0}, "delta=0 is outside (0, 1)"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 2}, "delta=2 is outside (0, 1)"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 0, "delta": 1e-5}, "steps=0 is outside 1 to 1e12"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": "2.5", "delta": 1e-5}, "steps=2.5 is not a whole number"),
    ({"q": "x", "noise_multiplier": 1, "steps": 10, "delta": 1e-5}, "'x' is not a number"),
    ({"q": 0.01, "noise_multiplier": 1, "delta": 1e-5}, "exactly one of steps= and epochs="),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 1e-5, "orders": "1-4"}, "order=1 is outside"),
    ({"q": 0.01, "noise_multiplier": 1, "steps": 10, "delta": 1e-5, "conversion": "fast"}, "unknown conversion 'fast'"),
    ({"phases": "0,1,10", "delta": 1e-5}, "phase 0: its q 0 is outside (0, 1]"),
    ({"phases": "0.1,1", "delta": 1e-5}, "has 2 parts"),
    ({"q": 0.01, "target_epsilon": 0, "steps": 10, "delta": 1e-5}, "target_epsilon=0 is not positive"),
    ({"batch": 600, "dataset": 60, "noise_multiplier": 1, "steps": 1, "delta": 1e-5}, "batch=600 is above dataset=60"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input_is_one_clear_input_error(kwargs, message):
    with pytest.raises(InputError) as info:
        privacy(**kwargs)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("x", [-3.0, 0.0, 5.0, 19.99, 20.0, 20.01, 26.0, 27.0, 40.0, 1e3])
def test_log_erfc_against_mpmath(x):
    # mpmath (sympy's) at 50 digits: independent of math.erfc and of the asymptotic series used past 20
    mpmath = pytest.importorskip("mpmath", reason="mpmath comes with sympy")
    from costmodel.training.privacy import _log_erfc

    mpmath.mp.dps = 50
    assert _log_erfc(x) == pytest.approx(float(mpmath.log(mpmath.erfc(x))), rel=1e-13, abs=1e-15)
