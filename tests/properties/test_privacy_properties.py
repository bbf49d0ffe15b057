"""Properties of DP-SGD's ε: it grows with the steps and the sampling rate and falls with the noise.

RDP at each order grows with q and falls with σ (Mironov et al. 2019, section 3), composition adds it
over steps, and both conversions to ε are increasing in the RDP; so the least ε over the orders
moves the same way.  Checked at random settings over the integer orders 2-32 (a tolerance of 1e-12
relative for the rounding of the log-space sums).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.training.privacy import privacy_account

ORDERS = "2-32"
rates = st.floats(1e-5, 0.5)
noises = st.floats(0.5, 20)
steps = st.integers(1, 10**5)
deltas = st.sampled_from([1e-3, 1e-5, 1e-8])
conversions = st.sampled_from(["improved", "classic"])


def _eps(q: float, sigma: float, t: int, delta: float, kind: str) -> float:
    return privacy_account([(q, sigma, t)], delta=delta, orders=ORDERS, conversion=kind).epsilon


def _at_most(a: float, b: float) -> bool:
    return a <= b * (1 + 1e-12) + 1e-15


accounting = st.tuples(deltas, conversions)


@settings(max_examples=60)
@given(st.tuples(rates, noises, steps), st.integers(1, 10**5), accounting)
def test_epsilon_non_decreasing_in_steps(run, more, how):
    q, sigma, t = run
    assert _at_most(_eps(q, sigma, t, *how), _eps(q, sigma, t + more, *how))


@settings(max_examples=60)
@given(st.tuples(rates, noises, steps), st.floats(1.0, 10.0), accounting)
def test_epsilon_non_decreasing_in_q(run, factor, how):
    q, sigma, t = run
    assert _at_most(_eps(q, sigma, t, *how), _eps(min(1.0, q * factor), sigma, t, *how))


@settings(max_examples=60)
@given(st.tuples(rates, noises, steps), st.floats(1.0, 10.0), accounting)
def test_epsilon_non_increasing_in_sigma(run, factor, how):
    q, sigma, t = run
    assert _at_most(_eps(q, sigma * factor, t, *how), _eps(q, sigma, t, *how))


@settings(max_examples=40)
@given(rates, noises, steps, deltas)
def test_improved_bound_never_above_classic(q, sigma, t, delta):
    assert _at_most(_eps(q, sigma, t, delta, "improved"), _eps(q, sigma, t, delta, "classic"))
