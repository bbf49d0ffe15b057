"""Symbolic answers compared: two formulas are equal when they are equal on the exercise's domain.

Formulas are read by the restricted grammar of :mod:`costmodel.expressions` (never ``eval`` or
``sympify``), which bounds their degree (at most 64).  The domain is p ≥ 1 a whole number, or p a
power of two where the exercise says so (``domain = { p = "powers of two" }``, see
:mod:`costmodel.exercises.bank`) or where the expected formula holds a plain log₂ p (it is meant for
powers of two); n, α, β and γ are any non-negative numbers.

**Rational formulas are decided exactly.**  On the powers of two, log₂ p, ⌈log₂ p⌉ and ⌊log₂ p⌋ are
one whole number L (and ln p is L·ln 2); at the other p, ⌊log₂ p⌋ is L, ⌈log₂ p⌉ is L + 1 and log₂ p
a real number between them.  Written so, a formula of the grammar without other functions of p, n,
α, β, γ (no √p, no ceiling of p/2) is a rational function of p, L (and log₂ p), n, α, β and γ, and
two such formulas are equal on the domain exactly when they are equal as rational functions of
those as independent variables: a rational function that vanishes at every power of two p = 2^L
and every L vanishes identically (its terms p^i·L^j grow apart).  Equality of rational functions
is then decided by evaluating both, in exact fractions, at random points: a nonzero polynomial of
degree d vanishes at a point drawn from S^k with probability at most d/|S| (Schwartz–Zippel), so
with every variable drawn from 2^64 values and :data:`RANDOM_POINTS` points, two different formulas
of degree at most 64 agree with probability below 2^−200.  The points are drawn from a hash of
the two formulas: the same answer always gets the same grade, and no fixed list of points exists
to be written around (a formula made to agree at published points, 2p − 2 + (p − 1)(p − 2)···(p −
1024), is refused).  Where a point involves an irrational constant (ln 2 of an ln p), the values
are compared to 30 significant digits.

**Other formulas** (a √p, a ceiling or a logarithm of anything else than p) are compared at many
points of the domain, the extremes of each symbol's sampled range among them: on the powers of two
every p = 1, 2, 4, ..., 2^63; off them p = 3, 5, 6, 7, 12, 100, one p drawn in each octave
2^k < p < 2^(k + 1) up to 2^63 and p = 2^63 − 1; n, α, β and γ rationals drawn in each octave from 1
to 2^64 (in an order drawn for each), each at its largest, 2^64, at one point and all at their
largest at the last (drawn from the same hash).  A term that vanishes below some size (⌊p/2^61⌋,
⌊α/2^60⌋) is so never hidden by the points.  Values that are not both rational are compared to 45
significant digits.  Points where the expected formula is undefined (p = 1 in 1/(p − 1)) are
skipped.

**Undefined answers.**  Sympy simplifies a formula as it is read ((p − 2)/(p − 2) is 1, 0·log₂(p − 1)
is 0), so :func:`undefined_in_domain` reads the answer's text again at each of the smallest p of
the domain (1, 2, 4, ..., 64 or 1, 2, ..., 64), in exact numbers, where the expected formula is
defined: a division by zero or a logarithm of a number that is not positive there refuses it.
"""

from __future__ import annotations

import hashlib
import random
from fractions import Fraction
from typing import Any

__all__ = ["DOMAIN_P", "RANDOM_POINTS", "domain_ranks", "equivalent", "undefined_in_domain"]

RANDOM_POINTS = 4
"""The random points two rational formulas are compared at, on each part of the domain."""

_BITS = 64
"""Each variable of a random point is drawn from 1 to 2^_BITS."""

_LARGEST_P = 63
"""p is sampled up to 2^_LARGEST_P in the general comparison (every power of two up to it)."""
_LARGEST = 64
"""n, α, β and γ are sampled up to 2^_LARGEST in the general comparison."""
_OTHER_P = (3, 5, 6, 7, 12, 100)
"""The ranks checked off the powers of two (the general comparison): p = 3 and others."""
_DIGITS = 60
"""Digits to which two values that are not both rational are computed; they must agree to 45."""
DOMAIN_P = 64
"""The smallest ranks of the domain (up to this p) at which an answer must be defined where the
expected formula is, checked on the formula as written (:func:`undefined_in_domain`)."""


def equivalent(a: Any, b: Any, *, powers_of_two: bool = False) -> bool:
    """Whether the formula *a* equals the expected formula *b* on the domain (see the module
    docstring): p a whole number, or a power of two where *powers_of_two* or *b* holds a plain log₂ p.

    >>> from costmodel import symbols as s
    >>> from costmodel.expressions import parse_expression
    >>> equivalent(parse_expression("2*(p-1)*alpha"), 2 * s.ALPHA * (s.p - 1))
    True
    >>> equivalent(parse_expression("2*p*alpha"), 2 * s.ALPHA * (s.p - 1))
    False
    >>> equivalent(parse_expression("2*log2(p)"), 2 * s.clg(s.p), powers_of_two=True)
    True
    >>> equivalent(parse_expression("2*log2(p)"), 2 * s.clg(s.p))  # wrong at p = 3
    False
    """
    import sympy

    from costmodel import symbols

    a, b = sympy.sympify(a), sympy.sympify(b)
    parts = (True,) if powers_of_two or b.has(symbols.lg) else (True, False)
    for on_powers in parts:
        x, y = _reduced(a, on_powers), _reduced(b, on_powers)
        seed = hashlib.sha256(f"{sympy.srepr(a)}\0{sympy.srepr(b)}\0{on_powers}".encode()).digest()
        rng = random.Random(int.from_bytes(seed, "big"))
        same = _same_rational(x, y, rng) if _rational(x) and _rational(y) else \
            _same_at_samples(a, b, on_powers, rng)
        if not same:
            return False
    return True


# -- the rational case: p, log₂ p and the rest as independent variables ------------------------------


def _log2_symbols() -> tuple[Any, Any]:
    """L (log₂ p on the powers of two, ⌊log₂ p⌋ elsewhere) and log₂ p off the powers of two."""
    import sympy

    return (sympy.Symbol("log2_p", integer=True, nonnegative=True),
            sympy.Symbol("log2_p_real", positive=True))


def _monomial(arg: Any) -> tuple[Any, int] | None:
    """(c, k) where *arg* is c·p^k with c a positive rational and k an integer; else None."""
    import sympy

    from costmodel import symbols

    c, rest = sympy.sympify(arg).as_coeff_Mul()
    if not (c.is_Rational and c > 0):
        return None
    if rest == symbols.p:
        return c, 1
    if rest == 1:
        return c, 0
    if rest.is_Pow and rest.base == symbols.p and rest.exp.is_Integer:
        return c, int(rest.exp)
    return None


def _floor_log2(c: Any) -> int:
    """⌊log₂ c⌋ of a positive rational, exactly."""
    x = Fraction(int(c.p), int(c.q))
    k = x.numerator.bit_length() - x.denominator.bit_length()  # within one of the answer
    while Fraction(2) ** k > x:
        k -= 1
    while Fraction(2) ** (k + 1) <= x:
        k += 1
    return k


def _reduced(expr: Any, on_powers: bool) -> Any:
    """*expr* on the powers of two (*on_powers*) or off them, with each logarithm of c·p^k written in
    the independent variables L (and log₂ p): log₂(c·p^k) = log₂ c + k·L on the powers of two."""
    import sympy

    from costmodel import symbols

    whole, real = _log2_symbols()

    def log2_of(c: Any, k: int) -> Any:
        exact = _floor_log2(c)
        constant = sympy.Integer(exact) if c == sympy.Integer(2) ** exact else sympy.log(c) / sympy.log(2)
        return constant + k * (whole if on_powers else real)

    def rewrite(node: Any) -> Any:
        found = _monomial(node.args[0])
        if found is None:
            return node
        c, k = found
        if isinstance(node, sympy.log):
            return log2_of(c, k) * sympy.log(2) if k else node
        if isinstance(node, symbols.lg):
            return log2_of(c, k)
        if not on_powers:  # ⌊log₂ p⌋ = L, ⌈log₂ p⌉ = L + 1 off the powers of two: p alone only
            if (c, k) != (1, 1):
                return node
            return whole if isinstance(node, symbols.flg) else whole + 1
        exact = _floor_log2(c)
        up = isinstance(node, symbols.clg) and c != sympy.Integer(2) ** exact
        return k * whole + exact + (1 if up else 0)  # k·L is whole: the ceiling or floor is of log₂ c

    kinds = (sympy.log, symbols.lg, symbols.clg, symbols.flg)
    return expr.replace(lambda node: isinstance(node, kinds) and node.args[0].has(symbols.p), rewrite)


def _rational(expr: Any) -> bool:
    """Whether *expr* is a rational function of its symbols (constants such as ln 2 aside)."""
    import sympy

    for node in sympy.preorder_traversal(expr):
        if not node.free_symbols:
            continue
        if isinstance(node, sympy.Function) and not isinstance(node, sympy.Symbol):
            return False
        if node.is_Pow and not node.exp.is_Integer:
            return False
    return True


def _same_rational(x: Any, y: Any, rng: random.Random) -> bool:
    """Whether two rational functions are equal: equal at :data:`RANDOM_POINTS` random points, each
    variable drawn from 1 to 2^64 (exactly decided but with a probability below 2^−200)."""
    import sympy

    names = sorted(x.free_symbols | y.free_symbols, key=lambda s: s.name)
    compared = tries = 0
    while compared < RANDOM_POINTS and tries < 4 * RANDOM_POINTS:
        tries += 1
        point = {s: sympy.Integer(rng.randint(1, 2**_BITS)) for s in names}
        u, v = _number(x.xreplace(point)), _number(y.xreplace(point))
        if v is None:
            continue  # a pole of the expected formula: another point
        if u is None or not _close(u, v):
            return False
        compared += 1
    return compared > 0


# -- the general case: points of the domain ---------------------------------------------------------


def _ranks(on_powers: bool, rng: random.Random) -> list[int]:
    """The p of the general comparison: every power of two up to 2^63, or off the powers of two the
    fixed ranks, one rank drawn in each octave 2^k < p < 2^(k + 1) and the largest, 2^63 − 1."""
    if on_powers:
        return [2**k for k in range(_LARGEST_P + 1)]
    octaves = [rng.randint(2**k + 1, 2 ** (k + 1) - 1) for k in range(1, _LARGEST_P)]
    return [*_OTHER_P, *octaves, 2**_LARGEST_P - 1]


def _points(names: list[Any], count: int, rng: random.Random) -> list[dict[Any, Any]]:
    """*count* values of each of *names* (n, α, β, γ): a rational drawn in each octave from 2^0 to
    2^64, in an order drawn for each name (so a term that vanishes below some size, ⌊α/2^60⌋, is
    reached), then each name at its largest, 2^64, with the others drawn, and all at their largest."""
    import sympy

    octaves = {}
    for s in names:
        order = list(range(_LARGEST))
        rng.shuffle(order)
        octaves[s] = order
    points = []
    for i in range(count):
        point = {}
        for s in names:
            k = octaves[s][i % _LARGEST]
            point[s] = sympy.Rational(rng.randint(2**k, 2 ** (k + 1) - 1), rng.randint(1, 97))
        points.append(point)
    largest = sympy.Integer(2**_LARGEST)
    for j, s in enumerate(names):
        points[j % count][s] = largest
    points.append(dict.fromkeys(names, largest))
    return points


def _same_at_samples(a: Any, b: Any, on_powers: bool, rng: random.Random) -> bool:
    """Whether *a* agrees with the expected *b* at the points of one part of the domain (every rank
    :func:`_ranks` gives, the other symbols from :func:`_points`), where *b* is defined (and at one
    point at least)."""
    import sympy

    from costmodel import symbols

    ranks = _ranks(on_powers, rng)
    ranks.append(ranks[-1])  # the last point: every symbol at its largest
    names = sorted((a.free_symbols | b.free_symbols) - {symbols.p}, key=lambda s: s.name)
    compared = 0
    for rank, point in zip(ranks, _points(names, len(ranks) - 1, rng), strict=True):
        point[symbols.p] = sympy.Integer(rank)
        x, y = _value(a, point), _value(b, point)
        if y is None:
            continue  # the expected formula is undefined here (1/(p - 1) at p = 1)
        if x is None or not _close(x, y):
            return False
        compared += 1
    return compared > 0


def domain_ranks(powers_of_two: bool) -> tuple[int, ...]:
    """The smallest p of the domain, up to :data:`DOMAIN_P`: 1, 2, 4, ..., 64 or 1, 2, ..., 64."""
    if powers_of_two:
        return tuple(2**k for k in range(DOMAIN_P.bit_length()))
    return tuple(range(1, DOMAIN_P + 1))


def undefined_in_domain(text: str, expected: Any, *, powers_of_two: bool = False) -> str | None:
    """The error of the formula *text* (as :func:`~costmodel.expressions.parse_expression` reads it)
    where it is undefined at one of the smallest p of the domain (:func:`domain_ranks`) at which the
    expected formula is defined: a division by zero or a logarithm of a number that is not positive,
    found by reading *text* again with p that number, so that no simplification hides it
    (``2(p − 1)(p − 2)/(p − 2)`` at p = 2); ``None`` where it is defined at each of them.

    >>> from costmodel import symbols as s
    >>> undefined_in_domain("2*(p-1)*(p-2)/(p-2)", 2 * s.p - 2, powers_of_two=True)  # doctest: +ELLIPSIS
    "'2*(p-1)*(p-2)/(p-2)' is not a formula costmodel reads: it divides by zero at p = 2; ..."
    >>> undefined_in_domain("2*p - 2", 2 * s.p - 2) is None
    True
    """
    import sympy

    from costmodel.errors import InputError
    from costmodel.expressions import parse_expression

    expected = sympy.sympify(expected)
    for rank in domain_ranks(powers_of_two):
        value = sympy.Integer(rank)
        if _undefined(expected, value):
            continue  # the expected formula is undefined here (1/(p - 1) at p = 1): not in its domain
        try:
            parse_expression(text, {"p": value, "P": value})
        except InputError as e:
            message = str(e)
            for what in ("it divides by zero", "is undefined"):
                if what + ";" in message:
                    return message.replace(what + ";", f"{what} at p = {rank};", 1)
    return None


def _undefined(expr: Any, p: Any) -> bool:
    """Whether *expr* is undefined at *p* (whatever the other symbols): a division by zero, a
    logarithm of 0."""
    import sympy

    from costmodel import symbols

    value = expr.xreplace({symbols.p: p})
    return bool(value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo))


def _value(expr: Any, point: dict[Any, Any]) -> Any:
    """*expr* at *point*; ``None`` where it is undefined there (a logarithm of 0, a division by 0)."""
    import sympy

    from costmodel import symbols

    held = {sympy.floor: sympy.Function("held_floor"), sympy.ceiling: sympy.Function("held_ceiling")}
    value = expr.replace(sympy.floor, held[sympy.floor]).replace(sympy.ceiling, held[sympy.ceiling])
    value = value.subs(point)
    if value.has(symbols.lg):  # log₂ of a p that is not a power of two: a real number
        value = value.replace(symbols.lg, lambda x: sympy.log(x, 2))
    for kind, function in held.items():  # innermost first
        value = value.replace(function, lambda x, kind=kind: _rounded(kind, x))
    return _number(value)


def _rounded(kind: Any, x: Any) -> Any:
    """⌊x⌋ or ⌈x⌉ of a number, right next to a whole number too: sympy decides ⌊log₂(2^63 − 1)⌋ to
    15 digits or so (63), it is 62."""
    import sympy

    if x.is_Rational or not x.is_number:
        return kind(x)
    approximate = sympy.N(x, 2 * _DIGITS)
    if not approximate.is_Float:
        return kind(x)  # not a real number: left for _number to refuse
    nearest = sympy.Integer(round(approximate))
    if abs(approximate - nearest) > sympy.Float(10) ** (-_DIGITS):
        return sympy.floor(approximate) if kind is sympy.floor else sympy.ceiling(approximate)
    return kind(x)  # a whole number, or as near as 60 digits tell: sympy decides it exactly


def _number(value: Any) -> Any:
    """*value* if it is a finite number, else ``None``."""
    import sympy

    if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        return None
    return value


def _close(x: Any, y: Any) -> bool:
    """Whether two numbers are equal: exactly for rationals, else to 45 significant digits."""
    import sympy

    if x.is_Rational and y.is_Rational:
        return bool(x == y)
    difference, size = abs(sympy.N(x - y, _DIGITS)), abs(sympy.N(y, _DIGITS))
    if not ((difference.is_Float or difference.is_Integer) and difference.is_finite and size.is_finite):
        return False  # not a number at this point (log2(0))
    return bool(difference <= sympy.Float("1e-45", _DIGITS) * max(1, size))
