"""Symbolic answers compared: two formulas are equal when they agree exactly at a dozen points.

Formulas are read by the restricted grammar of :mod:`costmodel.expressions` (never ``eval`` or
``sympify``).  Two formulas are equal when they agree exactly at a dozen points (p a power of
two, the other symbols random rationals): the formulas of the registry are
rational functions of p, n, α, β, γ and log₂ p, for which agreement at such
points is decisive in practice, and the check cannot hang as symbolic
simplification can.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["equivalent"]


def _points(count: int) -> list[dict[Any, Any]]:
    import sympy

    from costmodel import symbols

    rng = random.Random(20261130)
    out = []
    for i in range(count):
        def q() -> Any:
            return sympy.Rational(rng.randint(1, 997), rng.randint(1, 97))
        out.append({symbols.p: sympy.Integer(2 ** (1 + i % 10)),
                    symbols.n: sympy.Integer(rng.randint(1, 10**6)),
                    symbols.ALPHA: q(), symbols.BETA: q(), symbols.GAMMA: q(), symbols.k: sympy.Integer(3)})
    return out


_POINTS: list[dict[Any, Any]] = []


def _value(expr: Any, point: dict[Any, Any]) -> Any:
    """*expr* at *point*; ``None`` where it is undefined there (a logarithm of 0, a division by 0)."""
    import sympy

    value = sympy.sympify(expr).subs(point)
    if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return value


def equivalent(a: Any, b: Any) -> bool:
    """Whether two formulas agree at a dozen points (p a power of two), exactly where they can.

    >>> from costmodel import symbols as s
    >>> from costmodel.expressions import parse_expression
    >>> equivalent(parse_expression("2*(p-1)*alpha"), 2 * s.ALPHA * (s.p - 1))
    True
    >>> equivalent(parse_expression("2*p*alpha"), 2 * s.ALPHA * (s.p - 1))
    False
    """
    import sympy

    if not _POINTS:
        _POINTS.extend(_points(12))
    for point in _POINTS:
        x, y = _value(a, point), _value(b, point)
        if x is None or y is None:
            return False
        if x.is_Rational and y.is_Rational:
            if x != y:
                return False
            continue
        difference, size = abs(sympy.N(x - y, 30)), abs(sympy.N(y, 30))
        if not (difference.is_Float or difference.is_Integer) or not difference.is_finite \
                or not size.is_finite or difference > 1e-20 * max(1, size):
            return False  # not a number at this point (log2(0)), or a different one
    return True
