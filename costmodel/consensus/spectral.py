"""How fast mixing reaches agreement: ρ, the spectral gap, and rounds to a target.

For a mixing matrix W with consensus eigenvalue 1, ρ is the largest magnitude of
the other eigenvalues, and the disagreement ‖x_r − x̄‖₂ shrinks like ρ^r (by at
least ρ every round when W is symmetric, or normal, and doubly stochastic).  The
spectral gap is 1 − ρ, and the rounds to shrink the disagreement by a factor ε are
⌈ln(1/ε)/ln(1/ρ)⌉, computed as ln(1/ε)/(−log1p(−gap)) so that a tiny gap keeps its
digits.

How ρ is found, fastest first:

* **closed forms** for structured graphs.  Rings, k-rings, tori, hypercubes and
  complete graphs are Cartesian products of circulant graphs; with uniform,
  Metropolis, lazy or best-constant weights on these regular graphs W = I − cL, and
  the Laplacian eigenvalues of a circulant factor C_n(S) are
  ℓ_k = Σ_{s∈S} 2 sin²(πsk/n), adding across factors (Gray 2006).  The gap at the
  top, c·min ℓ, and at the bottom, 2 − c·max ℓ = 2(1 − cd) + c·Σ 2cos²(πsk/n), are
  sums of non-negative terms, so no digits cancel: for the ring with uniform weights
  1 − ρ = (4/3)·sin²(π/p).  The values are exact Fractions when every cosine involved
  is rational (Niven: cos 2πt ∈ ℚ only for t ∈ ℤ/6 ∪ ℤ/4), e.g. ρ = 1/3 on the
  4-ring.  The directed exponential graph is a circulant too: its eigenvalues are one
  FFT of W's first row.  The star has its own closed forms.  A connected 2-regular
  graph (however labelled) is recognised as a cycle, and a (p − 1)-regular one as complete.
* **dense** ``numpy.linalg.eigh`` up to p = 400, with the consensus eigenvector
  identified by overlap; ρ is then recognised as a small rational when one fits
  and W − ρI (or W + ρI) is exactly singular (p ≤ 32, exact W).
* **sparse Lanczos** on K = I − S, where S is W or the symmetric matrix similar to it
  (uniform weights: D^½WD^−½), with the consensus eigenvector deflated.  Plain Lanczos
  without restarts or reorthogonalisation: the extreme Ritz value converges all the
  same, and its residual bound is the stopping test; ARPACK's restarts cost 10–20×
  more on the clustered spectral edge of a random regular graph.  When Lanczos cannot
  separate clustered eigenvalues (long thin graphs: the gap is tiny), or the graph is
  narrow after a reverse Cuthill–McKee ordering, **shift-invert**: a sparse LU of
  K + δI, δ below the smallest possible nonzero eigenvalue, and Lanczos on its inverse.
  The bottom of the spectrum is computed only when Gershgorin's bound
  1 + λ_min ≥ min_i(1 + W_ii − Σ_j≠i |W_ij|) cannot rule it out.

Each result carries an estimate of the absolute error of the gap; a round count that
it leaves uncertain is given with its range in a note.

References
----------
.. [1] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", Systems &
   Control Letters 53(1), 2004: ρ, the convergence factor, and α* = 2/(λ1(L) + λ(n−1)(L)).
.. [2] R. M. Gray, "Toeplitz and Circulant Matrices: A Review", Foundations and Trends
   in Communications and Information Theory 2(3), 2006, chapter 3 (circulant eigenvalues).
.. [3] I. Niven, *Irrational Numbers*, MAA, 1956, chapter 3 (the rational values of cos
   at rational multiples of π: 0, ±1/2, ±1).
.. [4] B. Ying et al., "Exponential Graph is Provably Efficient for Decentralized Deep
   Training", NeurIPS 2021 (the static exponential graph and its spectral gap).
.. [5] B. N. Parlett, *The Symmetric Eigenvalue Problem*, SIAM, 1998, chapter 13
   (Lanczos algorithms; the residual bound |λ − θ| ≤ β_j·|s_ji|).
.. [6] C. C. Paige, "Accuracy and effectiveness of the Lanczos algorithm for the
   symmetric eigenproblem", Linear Algebra Appl. 34, 1980 (convergence without
   reorthogonalisation).
.. [7] T. Ericsson, A. Ruhe, "The spectral transformation Lanczos method ...",
   Mathematics of Computation 35(152), 1980 (shift-invert).
.. [8] B. Mohar, "Eigenvalues, diameter, and mean distance in graphs", Graphs and
   Combinatorics 7(1), 1991 (λ₂(L) ≥ 4/(n·diam), which places the shift δ).

Examples
--------
>>> from costmodel.consensus.graphs import complete, ring
>>> from costmodel.consensus.mixing import mixing_matrix
>>> s = spectrum(mixing_matrix(ring(4)))
>>> s.rho_exact, s.spectral_gap_exact
(Fraction(1, 3), Fraction(2, 3))
>>> rounds_to_target(s, Fraction(1, 100)).rounds
5
>>> spectrum(mixing_matrix(complete(5))).rho_exact
Fraction(0, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from costmodel._json import real
from costmodel.consensus.citations import GRAY_2006, SENETA_2006, XIAO_2004, YING_2021
from costmodel.consensus.eigen import DENSE_MAX, EPS, LANCZOS_TOL, low_end, one_blas_thread, start_vector
from costmodel.consensus.graphs import Circulant, Star, recognise
from costmodel.consensus.laplacian import LaplacianExtremes, circulant_extremes, cos_turns, sin_turns
from costmodel.errors import InputError
from costmodel.exact import Number, parse_number
from costmodel.references import Cited
from costmodel.units import format_exact

if TYPE_CHECKING:
    from costmodel.consensus.mixing import Mixing

__all__ = [
    "DENSE_MAX",
    "NONSYMMETRIC_DENSE_MAX",
    "RoundsToTarget",
    "Spectrum",
    "parse_target",
    "rounds_to_target",
    "spectrum",
]

NONSYMMETRIC_DENSE_MAX = 3000
"""A non-symmetric W of up to this many rows falls back on dense eigenvalues when sparse Arnoldi
does not converge (eigenvalues clustered near the circle of ρ: seconds at 1,700 rows, half a
minute at 3,000); beyond, the command stops with an error."""
_EXACT_DENSE_MAX = 32


# -- results --------------------------------------------------------------------------------------------



@dataclass(frozen=True, slots=True, kw_only=True)
class Spectrum:
    """ρ and the spectral gap 1 − ρ of a mixing matrix.

    Parameters
    ----------
    rho, spectral_gap : float
        ρ = max |λ| over the non-consensus eigenvalues, and 1 − ρ (computed directly).
    rho_exact, spectral_gap_exact : Fraction or None
        The same, exactly, when they are rational and known so.
    error : float
        Estimated absolute error of the gap (0 when exact).
    method : str
        How it was computed.
    source : Cited
    notes : tuple of str
    """

    rho: float
    spectral_gap: float
    rho_exact: Fraction | None = None
    spectral_gap_exact: Fraction | None = None
    error: float = 0.0
    method: str
    source: Cited
    notes: tuple[str, ...] = ()

    @property
    def converges(self) -> bool:
        """Whether repeated mixing drives the disagreement to zero (ρ < 1)."""
        return self.spectral_gap > 0

    def to_dict(self) -> dict[str, object]:
        return {
            "rho": real(self.rho),
            "rho_exact": None if self.rho_exact is None else format_exact(self.rho_exact),
            "spectral_gap": real(self.spectral_gap),
            "spectral_gap_exact": None if self.spectral_gap_exact is None else format_exact(
                self.spectral_gap_exact),
            "gap_error": real(self.error),
            "converges": self.converges,
            "method": self.method,
            "spectrum_source": self.source.to_dict(),
        }


def _spectrum(gap: Number, *, method: str, error: float = 0.0, notes: tuple[str, ...] = (),
              source: Cited | None = None) -> Spectrum:
    """A Spectrum from the gap: exact when *gap* is a Fraction."""
    src = source or XIAO_2004.at("section 2, convergence factor ρ = max |λ_i(W − 11ᵀ/n)|")
    if isinstance(gap, Fraction):
        rho = 1 - gap
        return Spectrum(rho=float(rho), spectral_gap=float(gap), rho_exact=rho, spectral_gap_exact=gap,
                        error=0.0, method=method, source=src, notes=notes)
    return Spectrum(rho=1.0 - gap, spectral_gap=float(gap), error=error, method=method, source=src,
                    notes=notes)



def _regular_closed_form(mixing: Mixing, family: Circulant, *, note: str = "") -> Spectrum:
    """W = I − cL on a product of circulants with uniform/Metropolis/lazy/best-constant weights."""
    a, top, low = circulant_extremes(family)
    d = family.degree
    scheme = mixing.scheme
    method = "closed form (product of circulant graphs: ℓ_k = Σ 2 sin²(πsk/n))"
    source = GRAY_2006.at("chapter 3, eigenvalues of circulant matrices")
    if scheme == "best-constant":
        # α* = 2/(a + ℓmax) equalises both ends: gap = α*·a = 2a/(a + ℓmax)
        if a.exact is not None and top.exact is not None:
            gap: Number = 2 * a.exact / (a.exact + top.exact)
        else:
            gap = 2 * a.value / (a.value + top.value)
        return _spectrum(gap, method=method, error=8 * EPS * float(gap), source=source,
                         notes=(note,) if note else ())
    c = Fraction(1, d + 1) if scheme in ("uniform", "metropolis") else Fraction(1, 2 * (d + 1))
    if a.exact is not None and low.exact is not None:
        gap = min(c * a.exact, 2 * (1 - c * d) + c * low.exact)
    else:
        gap = min(float(c) * a.value, 2 * float(1 - c * d) + float(c) * low.value)
    return _spectrum(gap, method=method, error=8 * EPS * float(gap), source=source,
                     notes=(note,) if note else ())


def _directed_circulant(mixing: Mixing, family: Circulant) -> Spectrum:
    """Uniform weights on a directed circulant (the exponential graph): one FFT of W's first row."""
    import numpy as np

    p = family.p
    (offs,) = family.offsets
    w = Fraction(1, len(offs) + 1)
    row = np.zeros(p)
    row[0] = float(w)
    row[list(offs)] = float(w)
    magnitudes = np.abs(np.fft.fft(row))[1:]
    rho = float(magnitudes.max())
    exact = None
    candidates = np.nonzero(magnitudes >= rho - 1e-12)[0][:16] + 1
    for k in [*(([p // 2]) if p % 2 == 0 else []), *candidates.tolist()]:
        value = _exact_modulus(k, p, (0, *offs), w)
        if value is not None and abs(float(value) - rho) <= 1e-9:
            exact = value
            break
    method = "closed form (circulant: FFT of the first row)"
    source = YING_2021.at("spectral gap of the static exponential graph")
    if exact is not None:
        return _spectrum(1 - exact, method=method, source=source)
    error = 16 * EPS * math.log2(p) if p > 1 else EPS
    return _spectrum(1.0 - rho, method=method, error=error, source=source)


def _exact_modulus(k: int, p: int, offs: tuple[int, ...], w: Fraction) -> Fraction | None:
    """|Σ_s w·e^{2πisk/p}| when the real and imaginary parts and the modulus are rational."""
    re = im = Fraction(0)
    for s in offs:
        c, sn = cos_turns(Fraction(s * k, p)), sin_turns(Fraction(s * k, p))
        if c is None or sn is None:
            return None
        re += w * c
        im += w * sn
    return _rational_sqrt(re * re + im * im)


def _rational_sqrt(q: Fraction) -> Fraction | None:
    num, den = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(num, den) if num * num == q.numerator and den * den == q.denominator else None


def _star(mixing: Mixing) -> Spectrum:
    """Closed forms on the star (hub 0, p − 1 leaves); see the notes for the eigenvalues."""
    p = mixing.p
    gaps = {
        # eigenvalues: leaves' differences 1/2 (p − 2 times) and 1/p − 1/2
        "uniform": Fraction(1) if p == 2 else Fraction(1, 2),
        # leaves' differences 1 − 1/p, and 0
        "metropolis": Fraction(1) if p == 2 else Fraction(1, p),
        # ½(1 + λ): 1 − 1/(2p) and 1/2
        "lazy": Fraction(1, 2) if p == 2 else Fraction(1, 2 * p),
        # L has 0, 1 (p − 2 times), p: ρ = (p − 1)/(p + 1)
        "best-constant": Fraction(1) if p == 2 else Fraction(2, p + 1),
    }
    return _spectrum(gaps[mixing.scheme], method="closed form (star)")


# -- numeric paths -----------------------------------------------------------------------------------


def _symmetric_form(mixing: Mixing) -> tuple[Any, Any] | None:
    """(S, v): a symmetric sparse matrix similar to W, and its unit consensus eigenvector; else None."""
    import numpy as np
    from scipy import sparse

    from costmodel.consensus.mixing import sparse_matrix

    p = mixing.p
    if mixing.scheme == "matrix":
        if not mixing.symmetric:
            return None
        return sparse_matrix(mixing), np.full(p, 1 / math.sqrt(p))
    if mixing.graph.directed:
        return None
    w = sparse_matrix(mixing)
    if mixing.scheme != "uniform" or mixing.symmetric:
        return w, np.full(p, 1 / math.sqrt(p))
    # uniform W = D⁻¹(I + A), D = diag(d + 1): S = D^½ W D^−½ has entries 1/√((d_i + 1)(d_j + 1))
    root = np.sqrt(1.0 / w.diagonal())
    s = sparse.diags_array(root) @ w @ sparse.diags_array(1 / root)
    s = (s + s.T) / 2  # symmetric up to rounding; make it exactly so
    return sparse.csr_array(s), root / np.linalg.norm(root)


def _gershgorin_bottom(mixing: Mixing) -> float:
    """A lower bound of 1 + λ_min(W): min_i (1 + W_ii − Σ_{j≠i} |W_ij|)."""
    import numpy as np

    from costmodel.consensus.mixing import sparse_matrix

    w = sparse_matrix(mixing)
    diag = w.diagonal()
    off = np.asarray(abs(w).sum(axis=1)).ravel() - np.abs(diag)
    return float(np.min(1 + diag - off))


def _numeric(mixing: Mixing, notes: tuple[str, ...] = ()) -> Spectrum:
    form = _symmetric_form(mixing)
    if form is None:
        return _nonsymmetric(mixing, notes)
    s, v = form
    p = mixing.p
    if p <= DENSE_MAX:
        return _dense_symmetric(mixing, s, v, notes)
    from scipy import sparse

    k = sparse.identity(p, format="csr") - s
    bottom_bound = _gershgorin_bottom(mixing)
    low = low_end(k, v, scale=_smallest_weight(s))
    gap, error, method = low.value, low.error, low.method
    if bottom_bound < gap * (1 + 1e-9) + error:
        h = low_end(sparse.identity(p, format="csr") + s, None, scale=max(bottom_bound, EPS))
        if h.value < gap:
            gap, error = h.value, max(error, h.error)
        method += "; bottom of the spectrum too"
    spec = _spectrum(gap, method=method, error=error, notes=notes,
                     source=low.source)
    return _periodicity(mixing, spec)


def _smallest_weight(s: Any) -> float:
    import numpy as np

    off = s.copy()
    off.setdiag(0)
    off.eliminate_zeros()
    values = np.abs(off.data)
    return float(values.min()) if values.size else 1.0


def _dense_symmetric(mixing: Mixing, s: Any, v: Any, notes: tuple[str, ...]) -> Spectrum:
    import numpy as np

    values, vectors = np.linalg.eigh(s.toarray())
    consensus = int(np.argmax(np.abs(vectors.T @ v)))
    rest = np.delete(values, consensus)
    gap = min(1 - rest.max(), 1 + rest.min()) if rest.size else 1.0
    error = 10 * mixing.p * EPS
    spec = _spectrum(float(gap), method="dense eigh (numpy.linalg.eigh)", error=error, notes=notes)
    return _periodicity(mixing, _recognise_rational(mixing, spec))


def _nonsymmetric(mixing: Mixing, notes: tuple[str, ...]) -> Spectrum:
    import numpy as np

    from costmodel.consensus.mixing import sparse_matrix

    w = sparse_matrix(mixing)
    p = mixing.p
    values = None if p <= 4 * DENSE_MAX else _arnoldi(w, p)
    method = "sparse Arnoldi (ARPACK eigs)"
    if values is None:
        if p > NONSYMMETRIC_DENSE_MAX:
            raise InputError(f"the sparse eigenvalue solver did not converge for this non-symmetric W of "
                             f"{p} rows (its eigenvalues crowd the circle of the largest), and dense "
                             f"eigenvalues stop at {NONSYMMETRIC_DENSE_MAX} rows; give a symmetric W (e.g. "
                             "Metropolis weights on the same graph) or fewer workers")
        values = np.linalg.eigvals(w.toarray())
        method = ("dense eigenvalues (numpy.linalg.eigvals)" if p <= 4 * DENSE_MAX else
                  "dense eigenvalues (numpy.linalg.eigvals): sparse Arnoldi did not converge")
    consensus = int(np.argmin(np.abs(values - 1)))
    rho = float(np.abs(np.delete(values, consensus)).max())
    more = ("W is not symmetric: ρ is the asymptotic rate per round; the disagreement can shrink more "
            "slowly at first",)
    spec = _spectrum(1.0 - rho, method=method, error=10 * p * EPS, notes=(*notes, *more))
    return _periodicity(mixing, _recognise_rational(mixing, spec))


def _arnoldi(w: Any, p: int) -> Any:
    """The 3 eigenvalues of largest modulus by ARPACK, or None when it does not converge."""
    from scipy.sparse import linalg

    try:
        return linalg.eigs(w, k=3, which="LM", tol=LANCZOS_TOL, maxiter=2000, v0=start_vector(p),
                           return_eigenvectors=False)
    except linalg.ArpackNoConvergence:
        return None


def _recognise_rational(mixing: Mixing, spec: Spectrum) -> Spectrum:
    """The float ρ as a small rational, kept when det(W ∓ ρI) = 0 exactly (small exact W only)."""
    if not mixing.exact or mixing.p > _EXACT_DENSE_MAX or not spec.converges:
        return spec
    guess = Fraction(spec.rho).limit_denominator(10_000)
    if abs(float(guess) - spec.rho) > 1e-9 or guess == 1:
        return spec
    rows = mixing.rows()
    if _singular_shift(rows, guess, mixing.p) or _singular_shift(rows, -guess, mixing.p):
        return _spectrum(1 - guess, method=spec.method + ", recognised as rational (exact check)",
                         notes=spec.notes, source=spec.source)
    return spec


def _singular_shift(rows: Sequence[Sequence[tuple[int, Number]]], shift: Fraction, p: int) -> bool:
    """Whether W − shift·I is singular, by exact Gaussian elimination."""
    a = [[Fraction(0)] * p for _ in range(p)]
    for i, row in enumerate(rows):
        for j, w in row:
            a[i][j] = Fraction(w)
        a[i][i] -= shift
    for col in range(p):
        pivot = next((r for r in range(col, p) if a[r][col] != 0), None)
        if pivot is None:
            return True
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, p):
            if a[r][col] != 0:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col], strict=True)]
    return False


def _periodicity(mixing: Mixing, spec: Spectrum) -> Spectrum:
    """ρ exactly 1 (and why) when a non-negative W never agrees; ρ ≤ 1 clamped when it does.

    A non-negative row-stochastic W has every |λ| ≤ 1, and another eigenvalue of modulus 1
    exactly when its nonzero weights (read as edges i → j) have more than one closed class
    (λ = 1 repeated) or a closed class of period d > 1 (the d-th roots of unity); otherwise
    every other |λ| < 1 (Seneta 2006, chapters 1 and 4).  Both are decided exactly from the
    pattern of nonzero weights, so a computed ρ of 1 ± a few ulps becomes exactly 1 or stays
    below it.
    """
    if spec.spectral_gap > spec.error + 1e-12 or not mixing.nonnegative or not mixing.row_stochastic:
        return spec
    why = _never_agrees(mixing)
    source = SENETA_2006.at("chapters 1 and 4: eigenvalues of modulus 1 of a stochastic matrix")
    if why is not None:
        return _spectrum(Fraction(0), method=spec.method + ", periodicity (exact)",
                         notes=(*spec.notes, f"ρ = 1: {why}"), source=source)
    if spec.spectral_gap >= 0:
        return Spectrum(rho=spec.rho, spectral_gap=spec.spectral_gap, error=spec.error, method=spec.method,
                        source=spec.source, notes=(*spec.notes, "ρ is within rounding error of 1"))
    return Spectrum(rho=1.0, spectral_gap=0.0, error=spec.error, method=spec.method + ", ρ ≤ 1 (stochastic)",
                    source=spec.source,
                    notes=(*spec.notes, "ρ is within rounding error of 1, below it: W is stochastic and "
                                        "aperiodic with one closed class, so every other |λ| < 1"))


def _never_agrees(mixing: Mixing) -> str | None:
    """Why a non-negative row-stochastic W has another eigenvalue of modulus 1, or None if it has not."""
    if mixing.matrix is None:
        return None  # the schemes give every worker a positive self-weight (best-constant aside)
    import numpy as np
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    rows = mixing.rows()
    src = np.fromiter((i for i, row in enumerate(rows) for j, w in row if w != 0), dtype=np.int64)
    dst = np.fromiter((j for row in rows for j, w in row if w != 0), dtype=np.int64)
    p = mixing.p
    graph = sparse.csr_array((np.ones(src.size), (src, dst)), shape=(p, p))
    _, label = connected_components(graph, directed=True, connection="strong")
    leaving = np.zeros(label.max() + 1, dtype=bool)
    leaving[label[src[label[src] != label[dst]]]] = True
    closed = np.flatnonzero(~leaving)
    if closed.size > 1:
        first = [int(np.flatnonzero(label == c)[0]) for c in closed[:2]]
        return (f"W has {closed.size} closed groups of workers (workers {first[0]} and {first[1]} are in "
                "different ones): each group averages only within itself, so λ = 1 is repeated and the "
                "groups never agree; give each group a weight towards the others")
    # the period of the closed class: the gcd of level(u) + 1 − level(v) over its edges u → v
    inside = (label[src] == closed[0]) & (label[dst] == closed[0])
    level = _levels(graph, int(np.flatnonzero(label == closed[0])[0]), p)
    period = int(np.gcd.reduce(np.abs(level[src[inside]] + 1 - level[dst[inside]])))
    if period <= 1:
        return None
    if period == 2:
        return ("W has the eigenvalue −1 (its nonzero weights form a bipartite graph with no self-weights), "
                "so the values oscillate and never agree; give every worker a self-weight, e.g. Metropolis "
                "1/(1 + max(d_i, d_j)) or lazy weights")
    return (f"W's nonzero weights are periodic with period {period} (every cycle's length is a multiple of "
            f"{period}), so W has the {period} eigenvalues e^(2πik/{period}) of modulus 1 and the values "
            "rotate without agreeing; give every worker a self-weight")


def _levels(graph: Any, start: int, p: int) -> Any:
    """Breadth-first distances from *start* (−1 where unreachable)."""
    import numpy as np

    level = np.full(p, -1, dtype=np.int64)
    level[start] = 0
    frontier = [start]
    indptr, indices = graph.indptr, graph.indices
    while frontier:
        following = []
        for u in frontier:
            for v in indices[indptr[u]:indptr[u + 1]]:
                if level[v] < 0:
                    level[v] = level[u] + 1
                    following.append(int(v))
        frontier = following
    return level


# -- public entry points ---------------------------------------------------------------------------------


def spectrum(mixing: Mixing) -> Spectrum:
    """ρ and the spectral gap of a mixing matrix, exactly where a closed form gives them.

    Parameters
    ----------
    mixing : Mixing
        From :func:`~costmodel.consensus.mixing.mixing_matrix` or a matrix file.

    Returns
    -------
    Spectrum

    Notes
    -----
    ρ is the largest magnitude of W's eigenvalues other than the consensus eigenvalue 1.
    ρ = 0 means one round reaches exact agreement; ρ = 1 means mixing never agrees
    (an eigenvalue −1: the values oscillate); ρ > 1 means the disagreement grows.

    References
    ----------
    .. [1] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", 2004.

    Examples
    --------
    >>> from costmodel.consensus.graphs import hypercube, ring
    >>> from costmodel.consensus.mixing import mixing_matrix
    >>> spectrum(mixing_matrix(hypercube(16))).rho_exact     # (d − 1)/(d + 1), d = 4
    Fraction(3, 5)
    >>> s = spectrum(mixing_matrix(ring(10**6)))
    >>> s.spectral_gap == 4 / 3 * math.sin(math.pi / 10**6) ** 2
    True
    """
    graph = mixing.graph
    if mixing.scheme != "matrix":
        family = graph.family
        if isinstance(family, Star):
            return _star(mixing)
        if isinstance(family, Circulant):
            if family.directed:
                return _directed_circulant(mixing, family)
            return _regular_closed_form(mixing, family)
        seen = recognise(graph)
        if seen is not None:
            shape = "a cycle" if seen.degree == 2 else "a complete graph"
            note = f"recognised the {graph.label} as {shape} (up to relabelling): closed form"
            return _regular_closed_form(mixing, seen, note=note)
        if mixing.scheme == "best-constant" and mixing.laplacian is not None:
            return _best_constant(mixing.laplacian)
    with one_blas_thread():
        return _numeric(mixing)


def _best_constant(lap: LaplacianExtremes) -> Spectrum:
    """W = I − α*L with α* = 2/(a + ℓ_max): both ends of the spectrum give the gap α*·a = 2a/(a + ℓ_max)."""
    if lap.connectivity_exact is not None and lap.largest_exact is not None:
        gap: Number = 2 * lap.connectivity_exact / (lap.connectivity_exact + lap.largest_exact)
        error = 0.0
    else:
        total = lap.connectivity + lap.largest
        gap = 2 * lap.connectivity / total
        error = 2 * lap.error / total
    return _spectrum(gap, method=f"best-constant: 2·λ(p−1)(L)/(λ(p−1)(L) + λ1(L)), L by {lap.method}",
                     error=error, source=XIAO_2004.at("section 4.1, ρ = (λ1 − λ(n−1))/(λ1 + λ(n−1))"))


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundsToTarget:
    """Mixing rounds until ρ^r ≤ ε: the disagreement shrunk by the factor ε.

    ``rounds`` is None when mixing never gets there (ρ ≥ 1).  ``low``/``high`` bound the
    count when the gap's rounding error leaves it uncertain (else both equal ``rounds``).
    """

    rounds: int | None
    target: Number
    exact: bool
    low: int | None = None
    high: int | None = None
    notes: tuple[str, ...] = ()


def parse_target(target: object) -> Number:
    """The factor ε in (0, 1) by which the disagreement must shrink.

    Accepts a number (``0.01``, ``"1e-2"``, ``"1/100"``) or a reduction (``"100x"``, ``"100×"``).

    Examples
    --------
    >>> parse_target("100x"), parse_target("0.01"), parse_target(0.5)
    (Fraction(1, 100), Fraction(1, 100), Fraction(1, 2))
    """
    if isinstance(target, str) and target.strip().lower().endswith(("x", "×")):
        factor = parse_number(target.strip()[:-1], what="reduction factor")
        if factor <= 1:
            raise InputError(f"{target!r} is not a reduction; give a factor above 1, e.g. 100x")
        return 1 / factor
    value = parse_number(target, what="target")
    if not 0 < value < 1:
        raise InputError(f"target={target!r} is not between 0 and 1; give the factor ε by which the "
                         "disagreement must shrink, e.g. 0.01 (or 100x)")
    return value


def rounds_to_target(spec: Spectrum, target: object = Fraction(1, 100)) -> RoundsToTarget:
    """The fewest rounds r with ρ^r ≤ ε: ⌈ln(1/ε)/ln(1/ρ)⌉, exactly when ρ and ε are exact.

    Examples
    --------
    >>> s = Spectrum(rho=1/3, spectral_gap=2/3, rho_exact=Fraction(1, 3), spectral_gap_exact=Fraction(2, 3),
    ...              method="by hand", source=XIAO_2004.at("§2"))
    >>> rounds_to_target(s, "100x").rounds     # 3^4 = 81 < 100 ≤ 243 = 3^5
    5
    """
    eps = parse_target(target)
    if not spec.converges:
        why = "ρ = 1" if spec.spectral_gap == 0 else f"ρ = {spec.rho:.6g} > 1"
        note = f"{why}: mixing never shrinks the disagreement by {_show(eps)}; no round count"
        return RoundsToTarget(rounds=None, target=eps, exact=spec.rho_exact is not None, notes=(note,))
    if spec.rho_exact == 0 or spec.rho == 0:
        return RoundsToTarget(rounds=1, target=eps, exact=spec.rho_exact is not None, low=1, high=1,
                              notes=("ρ = 0: one round reaches exact agreement",))
    if spec.rho_exact is not None and isinstance(eps, Fraction):
        r = _exact_rounds(spec.rho_exact, eps)
        if r is not None:
            return RoundsToTarget(rounds=r, target=eps, exact=True, low=r, high=r)
    gap = spec.spectral_gap
    r = _float_rounds(gap, eps)
    low = _float_rounds(min(gap + spec.error, 1.0), eps)
    high = _float_rounds(gap - spec.error, eps) if gap > spec.error else None
    notes: tuple[str, ...] = ()
    if low != high:
        upper = "an unbounded number" if high is None else str(high)
        notes = (f"the gap is known to ±{spec.error:.2g} at double precision, so the round count lies "
                 f"between {low} and {upper}",)
    return RoundsToTarget(rounds=r, target=eps, exact=False, low=low, high=high, notes=notes)


def _show(eps: Number) -> str:
    return f"{format_exact(1 / eps)}×" if isinstance(eps, Fraction) and eps.numerator == 1 else f"ε = {eps}"


def _float_rounds(gap: float, eps: Number) -> int:
    if gap >= 1:
        return 1
    return max(1, math.ceil(math.log(1 / float(eps)) / -math.log1p(-gap)))


def _exact_rounds(rho: Fraction, eps: Fraction) -> int | None:
    """The least r with ρ^r ≤ ε, by exact integer comparison near the float estimate."""
    rho = abs(rho)
    guess = math.ceil(math.log(float(eps)) / math.log(float(rho)))
    if guess > 100_000:
        return None
    r = max(1, guess)
    while r > 1 and rho ** (r - 1) <= eps:
        r -= 1
    while rho**r > eps:
        r += 1
    return r
