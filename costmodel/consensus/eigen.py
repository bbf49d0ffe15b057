"""Extreme eigenvalues of large sparse symmetric matrices, and the thread limit the solvers run under.

Plain Lanczos without restarts or reorthogonalisation: the extreme Ritz value converges all the
same (Paige 1980), and its residual bound |λ − θ| ≤ β_j·|s_ji| is the stopping test (Parlett 1998,
chapter 13).  When Lanczos cannot separate clustered eigenvalues, or the matrix is narrow after a
reverse Cuthill–McKee ordering, shift-invert: a sparse LU of K + δI and Lanczos on its inverse
(Ericsson & Ruhe 1980), δ placed below the smallest nonzero eigenvalue by Mohar's bound (1991).
numpy and scipy are imported inside the functions only.  The mixing spectra
(:mod:`costmodel.consensus.spectral`) and the graph Laplacian's extremes
(:mod:`costmodel.consensus.laplacian`) both use these solvers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from costmodel.consensus.citations import ERICSSON_1980, PARLETT_1998
from costmodel.errors import InputError
from costmodel.references import Cited

__all__ = ["DENSE_MAX", "EPS", "LANCZOS_TOL", "SpectrumEnd", "high_end", "low_end", "one_blas_thread",
           "start_vector"]

DENSE_MAX = 400
"""Up to this many workers, eigenvalues come from a dense solver (4× as many for a non-symmetric W)."""
EPS = 2.0**-52
"""The unit roundoff of float64, the scale of every error estimate."""
LANCZOS_TOL = 1e-11
"""The relative residual at which Lanczos (and ARPACK) stop."""
_LANCZOS_STEPS = 3000
"""Plain Lanczos gives up after this many steps (then shift-invert)."""
_NARROW = 64
"""A graph whose reverse Cuthill–McKee bandwidth is at most this goes straight to shift-invert."""
_LANCZOS_SOURCE = PARLETT_1998.at("chapter 13, Lanczos algorithms (residual bound β_j·|s_ji|)")
_SHIFT_SOURCE = ERICSSON_1980.at("the spectral transformation (K + δI)⁻¹")


@dataclass(frozen=True, slots=True)
class SpectrumEnd:
    """One end of a spectrum: the eigenvalue, its absolute error bound, how it was found and the source."""

    value: float
    error: float
    method: str
    source: Cited



def _row_bound(k: Any) -> float:
    """max_i Σ_j |k_ij| ≥ the spectral radius of *k* (Gershgorin)."""
    import numpy as np

    return float(np.max(np.asarray(abs(k).sum(axis=1)).ravel()))



def low_end(k: Any, v: Any, *, scale: float) -> SpectrumEnd:
    """The smallest eigenvalue of the PSD matrix *k* on the complement of its kernel vector *v*.

    Lanczos on −k (v pushed to the bottom) when the graph is wide; shift-invert when it is
    narrow, or when Lanczos does not converge within its budget (clustered eigenvalues).
    """
    p = k.shape[0]
    bound = _row_bound(k)
    if not _narrow(k):
        def flipped(x: Any) -> Any:
            y = -(k @ x)
            return y if v is None else y - 2 * bound * v * (v @ x)

        found = _lanczos_top(flipped, p, tol=LANCZOS_TOL, maxiter=min(p, _LANCZOS_STEPS))
        if found is not None:
            theta, residual = found
            return SpectrumEnd(-theta, residual + 100 * EPS * bound,
                        "sparse Lanczos, consensus eigenvector deflated", _LANCZOS_SOURCE)
    return _shift_invert_low(k, v, scale=scale, bound=bound)


def _lanczos_top(matvec: Any, p: int, *, tol: float, maxiter: int) -> tuple[float, float] | None:
    """The largest eigenvalue of a symmetric operator by plain Lanczos, and its residual bound.

    No reorthogonalisation: the extreme Ritz value still converges (Paige), and |λ − θ| ≤
    β_m·|s_m|, the last entry of its Ritz vector times the next β, which is the stopping
    test (relative to |θ|).  Returns None when *maxiter* steps do not meet *tol*.
    """
    import numpy as np
    from scipy.linalg import eigh_tridiagonal

    q = start_vector(p)
    q /= np.linalg.norm(q)
    q_prev = np.zeros(p)
    beta = 0.0
    alphas: list[float] = []
    betas: list[float] = []
    for step in range(1, maxiter + 1):
        w = matvec(q)
        alpha = float(q @ w)
        w -= alpha * q + beta * q_prev
        beta = float(np.linalg.norm(w))
        alphas.append(alpha)
        betas.append(beta)
        done = beta <= 1e-300  # an invariant subspace: the Ritz values are exact
        if done or step % 20 == 0 or step == maxiter:
            values, vectors = eigh_tridiagonal(np.array(alphas), np.array(betas[:-1]), select="i",
                                               select_range=(step - 1, step - 1))
            theta, residual = float(values[0]), abs(beta * float(vectors[-1, 0]))
            if done or residual <= tol * max(abs(theta), 1e-300):
                return theta, residual
        if done:
            break
        q_prev, q = q, w / beta
    return None


def start_vector(p: int) -> Any:
    """A fixed random start vector of length *p*: runs are reproducible."""
    import numpy as np

    return np.random.default_rng(0).standard_normal(p)  # fixed start vector: reproducible


def _narrow(k: Any) -> bool:
    """Whether *k*'s reverse Cuthill–McKee bandwidth is small, so that a sparse LU is cheap."""
    import numpy as np
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    perm = reverse_cuthill_mckee(k.tocsr(), symmetric_mode=True)
    where = np.empty_like(perm)
    where[perm] = np.arange(perm.size)
    coo = k.tocoo()
    return int(np.max(np.abs(where[coo.row] - where[coo.col]))) <= _NARROW


def _shift_invert_low(k: Any, v: Any, *, scale: float, bound: float) -> SpectrumEnd:
    """Shift-invert: the largest eigenvalue of (K + δI)⁻¹ on v⊥ is 1/(a + δ), well separated."""
    from scipy import sparse
    from scipy.sparse import linalg

    p = k.shape[0]
    # a ≥ 4·w_min/(p·diam) ≥ 4·w_min/p² (Mohar's bound on a weighted Laplacian): δ stays below a/10
    delta = max(0.4 * scale / p**2, 1e-15)
    lu = linalg.splu(sparse.csc_array(k + delta * sparse.identity(p, format="csc")))

    def solve(x: Any) -> Any:
        if v is None:
            return lu.solve(x)
        y = lu.solve(x - v * (v @ x))
        return y - v * (v @ y)

    found = _lanczos_top(solve, p, tol=1e-13, maxiter=min(p, 2000))
    if found is None:
        raise InputError(f"the eigenvalue solver did not converge for p={p}; the graph's spectrum is too "
                         "clustered for double precision")
    theta, residual = found
    value = 1 / theta - delta
    error = residual / theta**2 + 100 * EPS * bound
    return SpectrumEnd(max(value, 0.0), error, "shift-invert Lanczos (sparse LU of I − W + δI)",
                       _SHIFT_SOURCE)


def high_end(k: Any) -> SpectrumEnd:
    """The largest eigenvalue of the symmetric matrix *k*: Lanczos, else shift-invert above it."""
    from scipy import sparse
    from scipy.sparse import linalg

    p = k.shape[0]
    bound = _row_bound(k)
    if not _narrow(k):
        found = _lanczos_top(lambda x: k @ x, p, tol=LANCZOS_TOL, maxiter=min(p, _LANCZOS_STEPS))
        if found is not None:
            return SpectrumEnd(found[0], found[1] + 100 * EPS * bound, "sparse Lanczos", _LANCZOS_SOURCE)
    sigma = bound * (1 + 1e-9) + 1e-12
    lu = linalg.splu(sparse.csc_array(sigma * sparse.identity(p, format="csc") - k))
    found = _lanczos_top(lu.solve, p, tol=1e-13, maxiter=min(p, 2000))
    if found is None:
        raise InputError(f"the eigenvalue solver did not converge for p={p}; the graph's spectrum is too "
                         "clustered for double precision")
    theta, residual = found  # 1/(σ − ℓ_max)
    return SpectrumEnd(sigma - 1 / theta, residual / theta**2 + 100 * EPS * bound, "shift-invert Lanczos",
                _SHIFT_SOURCE)



def one_blas_thread() -> Any:
    """A context in which BLAS and LAPACK run on one thread (``threadpoolctl``), else a no-op.

    The solvers here multiply a sparse matrix by a vector thousands of times and call
    LAPACK on small tridiagonal or dense matrices: work too small to share out.  With the
    default of one BLAS thread per core, the threads spin waiting for each other, and on a
    machine busy with other work each waits for a core: a random 3-regular graph of 10⁵
    workers took 2.8 s on a quiet machine and 84 s on a busy one.  One thread is as fast
    when quiet and stays so when busy (``benchmarks/bench_consensus.py`` measures both).
    """
    from contextlib import nullcontext

    import numpy  # noqa: F401  (loads numpy's BLAS: a limit covers only libraries already loaded)
    import scipy.linalg  # noqa: F401  (and scipy's own copy)

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # an environment installed before it was a dependency
        return nullcontext()
    return threadpool_limits(limits=1)

