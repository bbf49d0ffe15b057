"""Symbolic answers compared: two formulas are equal when they agree exactly at many points.

Formulas are read by the restricted grammar of :mod:`costmodel.expressions` (never ``eval`` or
``sympify``).  Two formulas are equal when they agree exactly at every point of a fixed set:
p = 1, 2, 3, 5, 6, 7, 12 and 100 as well as powers of two up to 1024, the other symbols random
rationals.  The formulas of the registry are rational functions of p, n, α, β, γ and log₂ p, for
which agreement at such points is decisive in practice, and the check cannot hang as symbolic
simplification can.  Points where the expected formula is undefined (p = 1 in 1/(p − 1)) are
skipped; an expected formula with a plain log₂ p holds for powers of two only (the exercise
says so), so at other p a ⌈log₂ p⌉ or ⌊log₂ p⌋ in either formula is read as log₂ p there, and
the rest of the formula is still checked: a ring formula wrong at p = 3 is refused.
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
    ranks = [*(2 ** (1 + i % 10) for i in range(count)), *_OTHER_P]
    for rank in ranks:
        def q() -> Any:
            return sympy.Rational(rng.randint(1, 997), rng.randint(1, 97))
        out.append({symbols.p: sympy.Integer(rank),
                    symbols.n: sympy.Integer(rng.randint(1, 10**6)),
                    symbols.ALPHA: q(), symbols.BETA: q(), symbols.GAMMA: q(), symbols.k: sympy.Integer(3)})
    return out


_OTHER_P = (1, 2, 3, 5, 6, 7, 12, 100)
"""The ranks checked besides powers of two: p = 1, 2, 3 and others that are not powers of two."""

_POINTS: list[dict[Any, Any]] = []


def _power_of_two_only(expr: Any) -> bool:
    """Whether *expr* holds a plain log₂ (no ceiling or floor): it is meant for p a power of two."""
    from costmodel import symbols

    return bool(getattr(expr, "has", lambda *_: False)(symbols.lg))


def _plain_logs(expr: Any) -> Any:
    from costmodel import symbols

    return expr.replace(symbols.clg, symbols.lg).replace(symbols.flg, symbols.lg) \
        if hasattr(expr, "replace") else expr


def _value(expr: Any, point: dict[Any, Any]) -> Any:
    """*expr* at *point*; ``None`` where it is undefined there (a logarithm of 0, a division by 0)."""
    import sympy

    from costmodel import symbols

    value = sympy.sympify(expr).subs(point)
    if value.has(symbols.lg):  # log₂ of a p that is not a power of two: a real number
        value = value.replace(symbols.lg, lambda x: sympy.log(x, 2))
    if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return value


def equivalent(a: Any, b: Any) -> bool:
    """Whether the formula *a* agrees with the expected formula *b* at every point where *b* is
    defined (see the module docstring), exactly where they can.

    >>> from costmodel import symbols as s
    >>> from costmodel.expressions import parse_expression
    >>> equivalent(parse_expression("2*(p-1)*alpha"), 2 * s.ALPHA * (s.p - 1))
    True
    >>> equivalent(parse_expression("2*p*alpha"), 2 * s.ALPHA * (s.p - 1))
    False
    """
    import sympy

    from costmodel import symbols

    if not _POINTS:
        _POINTS.extend(_points(12))
    relaxed = _power_of_two_only(b)
    a2, b2 = (_plain_logs(sympy.sympify(a)), _plain_logs(sympy.sympify(b))) if relaxed else (a, b)
    compared = 0
    for point in _POINTS:
        rank = int(point[symbols.p])
        exact = (rank & (rank - 1)) == 0
        x, y = (_value(a, point), _value(b, point)) if exact or not relaxed else \
            (_value(a2, point), _value(b2, point))
        if y is None:
            continue  # the expected formula is undefined here (1/(p - 1) at p = 1)
        if x is None:
            return False
        compared += 1
        if x.is_Rational and y.is_Rational:
            if x != y:
                return False
            continue
        difference, size = abs(sympy.N(x - y, 30)), abs(sympy.N(y, 30))
        if not (difference.is_Float or difference.is_Integer) or not difference.is_finite \
                or not size.is_finite or difference > 1e-20 * max(1, size):
            return False  # not a number at this point (log2(0)), or a different one
    return compared > 0
