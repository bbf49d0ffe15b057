"""Tuned parameters rely on their cost having the form a + b·k + c/k (convex in k > 0)."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy

from costmodel.collectives._math import symbolic
from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives.evaluate import _best_integer
from costmodel.symbols import ALPHA, BETA, EXTRA_SYMBOLS, GAMMA, n, p

TUNED = [a for spec in COLLECTIVES.values() for a in spec.algorithms if a.extra]


def test_some_records_are_tuned():
    assert {(a.collective, a.name) for a in TUNED} >= {("broadcast", "pipelined-chain"),
                                                       ("allreduce", "double-binary-tree")}


@pytest.mark.parametrize("algo", TUNED, ids=lambda a: f"{a.collective}/{a.name}")
def test_cost_is_a_plus_bk_plus_c_over_k(algo):
    m = symbolic()
    (extra,) = algo.extra
    k = EXTRA_SYMBOLS[extra.symbol]
    lat, bw, comp = algo.coefficients(p, n, m, **{extra.symbol: k})
    times_k = sympy.expand((lat * ALPHA + bw * BETA + comp * GAMMA) * k)
    poly = sympy.Poly(times_k, k)
    assert poly.degree() <= 2
    b, a, c = (poly.coeff_monomial(k**2), poly.coeff_monomial(k), poly.coeff_monomial(1))
    # b ≥ 0 and c ≥ 0 whenever α, β, γ ≥ 0 and p ≥ 2: convex for k > 0
    for coefficient in (b, c):
        for values in ({p: 2, n: 0}, {p: 16, n: 10**6}, {p: 1000, n: 1}):
            at = coefficient.subs(values).subs({ALPHA: 1, BETA: 1, GAMMA: 1})
            assert at >= 0
    assert a.free_symbols <= {p, n, ALPHA, BETA, GAMMA}


@pytest.mark.parametrize(("a", "b", "c", "upper"), [
    (5, 1, 100, 10**6), (0, 3, 1, 50), (1, 0, 7, 40), (2, 7, 0, 40), (0, 1, 10**12, 10**9),
    (Fraction(1, 3), Fraction(2, 7), Fraction(50, 3), 9), (0, 2, 8, 1),
])
def test_best_integer_matches_brute_force(a, b, c, upper):
    def at(k):
        return a + b * Fraction(k) + Fraction(c) / k

    want = min(range(1, min(upper, 5000) + 1), key=lambda k: (at(k), k))
    if upper <= 5000:
        assert _best_integer(at, upper) == want
    else:  # the optimum √(c/b) lies well inside the brute-force window or at its edge
        got = _best_integer(at, upper)
        assert at(got) <= at(want)
