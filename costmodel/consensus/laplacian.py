"""The extreme eigenvalues of a graph Laplacian L = D − A: algebraic connectivity and the largest.

Rings, k-rings, tori, hypercubes and complete graphs are Cartesian products of circulant graphs;
the Laplacian eigenvalues of a circulant factor C_n(S) are ℓ_k = Σ_{s∈S} 2 sin²(πsk/n), adding across
factors (Gray 2006, chapter 3).  They are exact Fractions when every cosine involved is rational
(Niven 1956: cos 2πt ∈ ℚ only for t ∈ ℤ/6 ∪ ℤ/4).  Other graphs use a dense solver up to
:data:`~costmodel.consensus.eigen.DENSE_MAX` workers, then the sparse solvers of
:mod:`costmodel.consensus.eigen`.  Best-constant mixing weights (Xiao & Boyd 2004) are built from
these extremes, and the closed forms of :mod:`costmodel.consensus.spectral` from the circulant ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.consensus.eigen import DENSE_MAX, EPS, high_end, low_end, one_blas_thread
from costmodel.consensus.graphs import Circulant, Graph, Star, laplacian_matrix, recognise
from costmodel.errors import InputError

__all__ = ["Extreme", "LaplacianExtremes", "circulant_extremes", "cos_turns", "laplacian_extremes",
           "sin_turns"]


# -- rational cosines (Niven) ---------------------------------------------------------------------------

_RATIONAL_COS = {
    Fraction(0): Fraction(1), Fraction(1, 2): Fraction(-1), Fraction(1, 3): Fraction(-1, 2),
    Fraction(2, 3): Fraction(-1, 2), Fraction(1, 4): Fraction(0), Fraction(3, 4): Fraction(0),
    Fraction(1, 6): Fraction(1, 2), Fraction(5, 6): Fraction(1, 2),
}


def cos_turns(t: Fraction) -> Fraction | None:
    """cos(2πt) when it is rational (Niven's theorem), else None."""
    return _RATIONAL_COS.get(t - math.floor(t))


def sin_turns(t: Fraction) -> Fraction | None:
    """sin(2πt) = cos(2π(t − 1/4)) when rational, else None."""
    return cos_turns(t - Fraction(1, 4))


# -- circulant families ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Extreme:
    """An extreme eigenvalue: its float value, and its exact value when rational."""

    value: float
    exact: Fraction | None


def _factor_extremes(n: int, offs: tuple[int, ...]) -> tuple[Extreme, Extreme, Extreme]:
    """For the circulant C_n(S): the smallest nonzero ℓ_k, the largest ℓ_k, the smallest h_k.

    ℓ_k = Σ_s (1 − cos 2πsk/n) (Laplacian), h_k = Σ_s (1 + cos 2πsk/n) = d + μ_k (signless).
    """
    d = len(offs)
    if d == n - 1:  # complete: μ_k = −1 for k ≠ 0
        return (Extreme(float(n), Fraction(n)), Extreme(float(n), Fraction(n)),
                Extreme(float(n - 2), Fraction(n - 2)))
    if d == 2 and offs[0] + offs[1] == n and math.gcd(offs[0], n) == 1:
        return _ring_extremes(n)
    import numpy as np

    k = np.arange(n // 2 + 1, dtype=np.int64)  # symmetric offsets: k and n − k alike
    ell = np.zeros(k.shape)
    h = np.zeros(k.shape)
    for s in offs:
        m = (s * k) % n
        m = np.minimum(m, n - m).astype(float)
        ell += 2 * np.sin(np.pi * m / n) ** 2
        h += 2 * np.cos(np.pi * m / n) ** 2
    nonzero = ell[1:]
    a = _pick(nonzero, 1 + np.arange(nonzero.size), np.min(nonzero), n, offs, exact_of=lambda c: d - c)
    top = _pick(ell, k, np.max(ell), n, offs, exact_of=lambda c: d - c)
    low = _pick(h, k, np.min(h), n, offs, exact_of=lambda c: d + c)
    return a, top, low


def _ring_extremes(n: int) -> tuple[Extreme, Extreme, Extreme]:
    """:func:`_factor_extremes` of C_n({s, n − s}) with gcd(s, n) = 1: the ring relabelled (k ↦ s·k mod n
    permutes the k), so ℓ_j = 4 sin²(πj/n) and h_j = 4 cos²(πj/n): the least nonzero ℓ at j = 1, the
    largest ℓ and the least h at j = ⌊n/2⌋."""
    half = n // 2

    def at(j: int, sign: int) -> Extreme:  # 2 − 2·sign·cos(2πj/n), exact when the cosine is rational
        trig = math.sin if sign > 0 else math.cos
        value = 4 * trig(math.pi * j / n) ** 2
        c = cos_turns(Fraction(j, n))
        return Extreme(value, None) if c is None else Extreme(float(2 - 2 * sign * c), 2 - 2 * sign * c)

    return at(1, 1), at(half, 1), at(half, -1)


def _pick(values: Any, ks: Any, best: float, n: int, offs: tuple[int, ...], *, exact_of: Any) -> Extreme:
    """The extreme *best*, exact when one of the k attaining it has all-rational cosines."""
    import numpy as np

    near = ks[np.abs(values - best) <= 1e-12 * max(1.0, abs(best))]
    for k in near[:16].tolist():
        cosines = [c for s in offs if (c := cos_turns(Fraction(s * k, n))) is not None]
        if len(cosines) == len(offs):
            exact = exact_of(sum(cosines, Fraction(0)))
            if abs(float(exact) - best) <= 1e-9 * max(1.0, abs(best)):
                return Extreme(float(exact), exact)
    return Extreme(float(best), None)


def circulant_extremes(family: Circulant) -> tuple[Extreme, Extreme, Extreme]:
    """(a, ℓ_max, h_min) of the Cartesian product: a is the least factor's, the others add."""
    parts = [_factor_extremes(n, offs) for n, offs in zip(family.sizes, family.offsets, strict=True)]
    a = min((part[0] for part in parts), key=lambda e: e.value)
    return a, _sum_extremes([part[1] for part in parts]), _sum_extremes([part[2] for part in parts])


def _sum_extremes(items: Sequence[Extreme]) -> Extreme:
    value = math.fsum(e.value for e in items)
    exacts = [e.exact for e in items if e.exact is not None]
    exact = sum(exacts, Fraction(0)) if len(exacts) == len(items) else None
    return Extreme(float(exact) if exact is not None else value, exact)


@dataclass(frozen=True, slots=True, kw_only=True)
class LaplacianExtremes:
    """The algebraic connectivity λ_{p−1}(L) and the largest eigenvalue λ_1(L) of L = D − A."""

    connectivity: float
    largest: float
    connectivity_exact: Fraction | None = None
    largest_exact: Fraction | None = None
    error: float = 0.0
    method: str = ""

    @property
    def exact(self) -> bool:
        return self.connectivity_exact is not None and self.largest_exact is not None



def laplacian_extremes(graph: Graph) -> LaplacianExtremes:
    """λ_{p−1}(L) (algebraic connectivity) and λ_1(L) of the graph Laplacian L = D − A.

    Exact for structured graphs where every cosine involved is rational, and for the star.

    Examples
    --------
    >>> from costmodel.consensus.graphs import ring, star
    >>> e = laplacian_extremes(ring(4))
    >>> e.connectivity_exact, e.largest_exact
    (Fraction(2, 1), Fraction(4, 1))
    >>> laplacian_extremes(star(5)).largest_exact
    Fraction(5, 1)
    """
    if graph.directed:
        raise InputError(f"the {graph.label} is directed; the graph Laplacian needs an undirected graph")
    family = graph.family
    if isinstance(family, Star):
        a, top = (Fraction(2), Fraction(2)) if graph.p == 2 else (Fraction(1), Fraction(graph.p))
        return LaplacianExtremes(connectivity=float(a), largest=float(top), connectivity_exact=a,
                                 largest_exact=top, method="closed form (star)")
    family = family if isinstance(family, Circulant) else recognise(graph)
    if family is not None:
        least, most, _ = circulant_extremes(family)
        return LaplacianExtremes(connectivity=least.value, largest=most.value, connectivity_exact=least.exact,
                                 largest_exact=most.exact, error=8 * EPS * most.value,
                                 method="closed form (circulant)")
    with one_blas_thread():
        return _numeric_laplacian(graph)


def _numeric_laplacian(graph: Graph) -> LaplacianExtremes:
    import numpy as np

    p = graph.p
    lap = laplacian_matrix(graph)
    if p <= DENSE_MAX:
        values = np.linalg.eigvalsh(lap.toarray())
        error = 10 * p * EPS * float(values[-1])
        a, top = float(values[1]), float(values[-1])
        exact_a, exact_top = _integer_or_none(a, error), _integer_or_none(top, error)
        return LaplacianExtremes(connectivity=a, largest=top, connectivity_exact=exact_a,
                                 largest_exact=exact_top, error=error, method="dense eigvalsh")
    low = low_end(lap, np.full(p, 1 / math.sqrt(p)), scale=1.0)
    high = high_end(lap)
    return LaplacianExtremes(connectivity=low.value, largest=high.value, error=max(low.error, high.error),
                             method=f"{low.method}; {high.method}")


def _integer_or_none(x: float, error: float) -> Fraction | None:
    """Laplacian eigenvalues are algebraic integers: an integer within the error is taken as exact."""
    n = round(x)
    return Fraction(n) if abs(x - n) <= max(error, 1e-9) else None
