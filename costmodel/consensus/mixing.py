"""Mixing matrices W on a graph: each round every worker sets x_i ← Σ_j W_ij x_j.

Row i of W weights worker i and the workers it receives from (its closed
neighbourhood).  Weight schemes:

=================  =====================================================================
name               W_ij for j a neighbour of i; W_ii takes the rest of the row
=================  =====================================================================
``uniform``        1/(d_i + 1) for i and each neighbour: the one-third rule on a ring
``metropolis``     1/(1 + max(d_i, d_j)) (Metropolis–Hastings; Xiao, Boyd & Lall 2005)
``lazy``           ½(I + W_metropolis): eigenvalues in [0, 1], so no oscillation
``best-constant``  α* = 2/(λ_1(L) + λ_{p−1}(L)) on every edge, W = I − α*L (Xiao & Boyd 2004)
FILE               a user matrix: rows of numbers (CSV or whitespace), exact decimals
=================  =====================================================================

Checks, with what each one means: rows must sum to one (else W does not average, and
is refused); columns summing to one (doubly stochastic) keep the mean, else a note says
the mean drifts; symmetry, and non-negative weights, are reported; the nonzero weights
must connect the workers (else refused: no agreement is possible).

References
----------
.. [1] L. Xiao, S. Boyd, S. Lall, "A scheme for robust distributed sensor fusion based
   on average consensus", IPSN 2005 (Metropolis–Hastings weights).
.. [2] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", Systems &
   Control Letters 53(1), 2004, section 4.1 (best constant edge weight).
.. [3] A. Olshevsky, "Linear time average consensus and distributed optimization on
   fixed graphs", SIAM J. Control Optim. 55(6), 2017 (lazy Metropolis matrix).

Examples
--------
>>> from costmodel.consensus.graphs import ring, star
>>> w = mixing_matrix(ring(4))
>>> w.rows()[0]
((0, Fraction(1, 3)), (1, Fraction(1, 3)), (3, Fraction(1, 3)))
>>> w.doubly_stochastic, mixing_matrix(star(4)).doubly_stochastic
(True, False)
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import compress
from pathlib import Path
from typing import Any, TypeVar

from costmodel._files import read_text
from costmodel._json import real
from costmodel.consensus.citations import OLSHEVSKY_2017, XIAO_2004, XIAO_2005
from costmodel.consensus.graphs import Circulant, Graph, Star, check_connected, csr_structure
from costmodel.consensus.laplacian import LaplacianExtremes, laplacian_extremes
from costmodel.errors import InputError, ParseError
from costmodel.exact import Number, parse_number
from costmodel.names import Names
from costmodel.references import Cited
from costmodel.units import format_exact

__all__ = [
    "WEIGHTS",
    "Mixing",
    "from_matrix",
    "load_matrix",
    "mixing_matrix",
    "parse_matrix",
    "resolve_weights",
]

_NAMES = Names("weights", {
    "uniform": ("equal", "average", "one-third"),
    "metropolis": ("metropolis-hastings", "mh", "max-degree-plus-one"),
    "lazy": ("lazy-metropolis",),
    "best-constant": ("best", "best-constant-edge", "constant", "xiao-boyd"),
})
WEIGHTS: tuple[str, ...] = _NAMES.canonical
"""The weight schemes by name; anything else given as weights is a matrix file."""
_TOLERANCE = 1e-9
"""How far a row sum of a matrix given in decimals may be from 1 (then it is used as floats)."""
_EXACT_CHECK_MAX = 20_000
"""Up to this many workers, column sums of uniform weights are checked in exact arithmetic."""

_SOURCES = {
    "metropolis": XIAO_2005.at("Metropolis–Hastings weights 1/(1 + max(d_i, d_j))"),
    "lazy": OLSHEVSKY_2017.at("lazy Metropolis matrix ½(I + W)"),
    "best-constant": XIAO_2004.at("section 4.1, best constant edge weight α* = 2/(λ1(L) + λ(n−1)(L))"),
}

Row = tuple[tuple[int, Number], ...]
ExactRow = tuple[tuple[int, Fraction], ...]
_W = TypeVar("_W")
_N = TypeVar("_N", Fraction, float)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mixing:
    """A mixing matrix on a graph, with what its checks found.

    Parameters
    ----------
    graph : Graph
        Whose edges carry the off-diagonal weights.
    scheme : str
        ``"uniform"``, ``"metropolis"``, ``"lazy"``, ``"best-constant"`` or ``"matrix"``.
    alpha : Fraction, float or None
        The best-constant edge weight α*.
    laplacian : LaplacianExtremes or None
        λ_{p−1}(L) and λ_1(L), for best-constant weights.
    matrix : tuple of tuple, or None
        A user matrix's dense rows.
    nonzero : tuple of rows, or None
        A user matrix's nonzero weights ``((j, W_ij), ...)`` per row.
    exact : bool
        Whether every weight is a Fraction.
    row_stochastic, column_stochastic, symmetric, nonnegative : bool
        The checks (rows always sum to one: anything else is refused).
    path : str or None
        The matrix file.
    source : Cited or None
    notes : tuple of str
        What the checks mean for the results (the mean drifting, negative weights, ...).
    """

    graph: Graph
    scheme: str
    exact: bool
    row_stochastic: bool
    column_stochastic: bool
    symmetric: bool
    nonnegative: bool
    alpha: Number | None = None
    laplacian: LaplacianExtremes | None = None
    matrix: tuple[tuple[Number, ...], ...] | None = None
    path: str | None = None
    source: Cited | None = None
    notes: tuple[str, ...] = ()
    nonzero: tuple[Row, ...] | None = None

    @property
    def p(self) -> int:
        return self.graph.p

    @property
    def doubly_stochastic(self) -> bool:
        """Rows and columns sum to one: pure mixing preserves the mean."""
        return self.row_stochastic and self.column_stochastic

    def rows(self) -> tuple[Row, ...]:
        """Sparse rows ``((j, W_ij), ...)`` with the diagonal, columns ascending; exact when exact.

        Builds every row: meant for small p (simulation in exact arithmetic, tests).
        """
        if self.matrix is not None:
            zero = Fraction(0) if self.exact else 0.0
            return tuple(row if any(j == i for j, _ in row) else tuple(sorted((*row, (i, zero))))
                         for i, row in enumerate(self.nonzero or _nonzero(self.matrix)))
        neighbours = self.graph.neighbours
        degrees = self.graph.degrees()
        return tuple(self._row(i, neighbours[i], degrees) for i in range(self.p))

    def edge_weight(self) -> Number:
        """The best-constant edge weight α* (set for best-constant weights, which are built with it)."""
        if self.alpha is None:
            raise InputError(f"{self.scheme} weights have no constant edge weight α*")
        return self.alpha

    def exact_rows(self) -> tuple[ExactRow, ...]:
        """:meth:`rows` of an exact W, typed as what they are: every weight a Fraction."""
        if not self.exact:
            raise InputError(f"the {self.scheme} weights are floats; exact rows need exact weights")
        return tuple(tuple((j, w) for j, w in row if isinstance(w, Fraction)) for row in self.rows())

    def _row(self, i: int, nbrs: tuple[int, ...], degrees: Sequence[int]) -> Row:
        d = degrees[i]
        off: dict[int, Number]
        if self.scheme == "uniform":
            w = Fraction(1, d + 1)
            off = dict.fromkeys(nbrs, w)
        elif self.scheme in ("metropolis", "lazy"):
            half = Fraction(1, 2) if self.scheme == "lazy" else Fraction(1)
            off = {j: half * Fraction(1, 1 + max(d, degrees[j])) for j in nbrs}
        else:  # best-constant
            off = dict.fromkeys(nbrs, self.edge_weight())
        self_weight: Number = 1 - sum(off.values(), Fraction(0))
        if not self.exact:
            self_weight = float(self_weight)
        return tuple(sorted({i: self_weight, **off}.items()))

    def to_dict(self) -> dict[str, object]:
        return {
            "weights": self.scheme,
            "weights_file": self.path,
            "exact": self.exact,
            "doubly_stochastic": self.doubly_stochastic,
            "row_stochastic": self.row_stochastic,
            "column_stochastic": self.column_stochastic,
            "symmetric": self.symmetric,
            "nonnegative": self.nonnegative,
            "alpha": None if self.alpha is None else real(self.alpha),
            "alpha_exact": format_exact(self.alpha) if isinstance(self.alpha, Fraction) else None,
            "weights_source": None if self.source is None else self.source.to_dict(),
        }


# -- weight schemes on a graph ---------------------------------------------------------------------


def resolve_weights(name: str) -> str:
    """The canonical scheme name for *name*, or an UnknownNameError with a did-you-mean.

    >>> resolve_weights("Metropolis-Hastings")
    'metropolis'
    """
    return _NAMES.resolve(name, context="(nor a matrix file)" if not _looks_like_path(name) else "")


def _is_file_name(text: str) -> bool:
    """Not a scheme name, and an existing file or something shaped like a path."""
    return text not in _NAMES and (os.path.exists(text) or _looks_like_path(text))


def _looks_like_path(text: str) -> bool:
    return os.sep in text or "/" in text or bool(re.search(r"\.[A-Za-z0-9]{1,5}$", text))


def mixing_matrix(graph: Graph, weights: str | Path | Mixing = "uniform") -> Mixing:
    """The mixing matrix of *graph* with the named weights, or read from a matrix file.

    Parameters
    ----------
    graph : Graph
    weights : str or Path
        ``uniform`` (default), ``metropolis``, ``lazy``, ``best-constant`` (aliases accepted),
        or the path of a matrix file (see :func:`parse_matrix`).

    Raises
    ------
    UnknownNameError
        For a name that is neither a scheme nor an existing file.
    InputError
        For Metropolis, lazy or best-constant weights on a directed graph.
    ParseError
        For a bad matrix file.

    Examples
    --------
    >>> from costmodel.consensus.graphs import star
    >>> m = mixing_matrix(star(3), "metropolis")
    >>> m.rows()[1], m.symmetric
    (((0, Fraction(1, 3)), (1, Fraction(2, 3))), True)
    """
    if isinstance(weights, Mixing):
        return weights
    if isinstance(weights, Path) or (isinstance(weights, str) and _is_file_name(weights)):
        return load_matrix(weights, graph=graph)
    if not isinstance(weights, str):
        raise InputError(f"{weights!r} is not a weight scheme; give one of {', '.join(WEIGHTS)} or a file")
    scheme = resolve_weights(weights)
    if graph.directed and scheme != "uniform":
        raise InputError(f"{scheme} weights need an undirected graph, and the {graph.label} is directed; "
                         "use uniform weights or a matrix file")
    return _SCHEMES[scheme](graph)


def _uniform(graph: Graph) -> Mixing:
    family = graph.family
    notes: tuple[str, ...] = ()
    if isinstance(family, Circulant):  # regular, and circulant: doubly stochastic
        symmetric, column = not family.directed, True
        if family.directed:
            notes = ("W is doubly stochastic but not symmetric (a directed graph); it is circulant, hence "
                     "normal, so the disagreement still shrinks by at least ρ every round",)
    elif graph.degree is not None:
        symmetric = column = True
    else:
        symmetric = False
        column, worst = _uniform_column_sums(graph)
        if not column:
            notes = (f"uniform weights 1/(d + 1) on an irregular graph are row- but not column-stochastic "
                     f"(column {worst[0]} sums to {worst[1]}): mixing does not preserve the mean, which "
                     "drifts to the average weighted by d + 1; use metropolis weights to keep the mean",)
        else:
            notes = ("W is doubly stochastic but not symmetric; ρ is the asymptotic rate, and a single round "
                     "may shrink the disagreement by less",)
    return Mixing(graph=graph, scheme="uniform", exact=True, row_stochastic=True, column_stochastic=column,
                  symmetric=symmetric, nonnegative=True, notes=notes)


def _uniform_column_sums(graph: Graph) -> tuple[bool, tuple[int, str]]:
    """Whether the columns of the uniform W sum to one, and the column farthest from it."""
    degrees = graph.degrees()
    p = graph.p
    if isinstance(graph.family, Star):
        hub = Fraction(1, p) + Fraction(p - 1, 2)
        return p == 2, (0, format_exact(hub))
    if p <= _EXACT_CHECK_MAX:
        sums = [Fraction(1, d + 1) for d in degrees]
        for i, nbrs in enumerate(graph.neighbours):
            w = Fraction(1, degrees[i] + 1)
            for j in nbrs:
                sums[j] += w
        j = max(range(p), key=lambda k: abs(sums[k] - 1))
        return sums[j] == 1, (j, format_exact(sums[j]))
    import numpy as np

    indptr, indices = csr_structure(graph)
    deg = np.diff(indptr)
    w = 1.0 / (deg + 1)
    sums = w + np.bincount(indices, weights=np.repeat(w, deg), minlength=p)
    j = int(np.argmax(np.abs(sums - 1)))
    return bool(abs(sums[j] - 1) <= 1e-12), (j, f"{sums[j]:.6g}")


def _metropolis(graph: Graph, *, lazy: bool = False) -> Mixing:
    scheme = "lazy" if lazy else "metropolis"
    return Mixing(graph=graph, scheme=scheme, exact=True, row_stochastic=True, column_stochastic=True,
                  symmetric=True, nonnegative=True, source=_SOURCES[scheme])


def _lazy(graph: Graph) -> Mixing:
    return _metropolis(graph, lazy=True)


def _best_constant(graph: Graph) -> Mixing:
    lap = laplacian_extremes(graph)
    a, top = lap.connectivity_exact, lap.largest_exact
    if a is not None and top is not None:
        alpha: Number = 2 / (a + top)
    else:
        alpha = 2 / (lap.connectivity + lap.largest)
    notes: tuple[str, ...] = ()
    nonnegative = alpha * graph.max_degree <= 1
    if not nonnegative:
        lowest = 1 - alpha * graph.max_degree
        shown = format_exact(lowest) if isinstance(lowest, Fraction) else f"{lowest:.4g}"
        notes = (f"best-constant weights give a worker of degree {graph.max_degree} the self-weight "
                 f"1 − α*·d = {shown} < 0; Xiao & Boyd allow negative weights, and ρ < 1 still holds",)
    return Mixing(graph=graph, scheme="best-constant", exact=isinstance(alpha, Fraction), row_stochastic=True,
                  column_stochastic=True, symmetric=True, nonnegative=nonnegative, alpha=alpha, laplacian=lap,
                  source=_SOURCES["best-constant"], notes=notes)


_SCHEMES = {"uniform": _uniform, "metropolis": _metropolis, "lazy": _lazy, "best-constant": _best_constant}


# -- user matrices ------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[\s,;]+")


def parse_matrix(text: str, *, path: str = "<text>", graph: Graph | None = None) -> Mixing:
    """A mixing matrix from text: one row per line, numbers separated by commas or spaces.

    Numbers are exact decimals or ratios (``0.25``, ``1/3``); ``#`` starts a comment.  Rows
    must sum to one: exactly, or within 1e-9 (rounded decimals such as 0.3333333333333333,
    then used as floats, with a note).  With *graph*, every nonzero off-diagonal weight must
    sit on an edge of it; without, the graph is the pattern of nonzero weights.

    Raises
    ------
    ParseError
        With the line, for a bad number, a row of the wrong length, or a row that does
        not sum to one.
    InputError
        When the matrix does not fit *graph*, or its weights leave workers cut off.

    Examples
    --------
    >>> m = parse_matrix("0.5 0.5 0\\n0.25 0.5 0.25\\n0 0.5 0.5")
    >>> m.graph.label, m.exact, m.doubly_stochastic
    ('matrix <text>', True, False)
    """
    rows: list[tuple[Fraction, ...]] = []
    lines: list[int] = []
    cache: dict[str, Fraction] = {}  # a file repeats few distinct numbers (0, 1/3, ...): parse each once
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        tokens = body.split() if "," not in body and ";" not in body else _SPLIT.split(body.strip(",; "))
        try:
            values = tuple(map(cache.__getitem__, tokens))
        except KeyError:
            try:
                for t in tokens:
                    if t not in cache:
                        cache[t] = parse_number(t, what="weight")
            except InputError as exc:
                raise ParseError(str(exc), path=path, line=number) from None
            values = tuple(map(cache.__getitem__, tokens))
        if rows and len(rows) == len(rows[0]):  # one row more than a row's entries: never square
            raise ParseError(f"row {len(rows)} is one too many: the rows have {len(rows[0])} entries, and "
                             "W must be square", path=path, line=number)
        rows.append(values)
        lines.append(number)
    if not rows:
        raise ParseError("no rows found; write one row of weights per line", path=path)
    p = len(rows)
    for values, number in zip(rows, lines, strict=True):
        if len(values) != p:
            raise ParseError(f"row has {len(values)} entries, expected {p} (the matrix has {p} rows; "
                             "W must be square)", path=path, line=number)
    nonzero = _nonzero(rows)
    for i, (row, number) in enumerate(zip(nonzero, lines, strict=True)):
        total = sum((w for _, w in row), Fraction(0))
        if abs(total - 1) > _TOLERANCE:
            raise ParseError(f"row {i} sums to {format_exact(total, decimal=True)}, not 1; each row of W "
                             "must be a weighted average (write 1/3 for a third)", path=path, line=number)
    return _from_rows(rows, nonzero, graph=graph, path=path)


def _nonzero(matrix: Sequence[Sequence[_W]]) -> tuple[tuple[tuple[int, _W], ...], ...]:
    """Each row's nonzero weights ``((j, W_ij), ...)``, columns ascending.

    Zero tests run once per distinct value of a row, not once per entry: a file of p rows
    has p² entries, mostly the same zero.
    """
    out = []
    for row in matrix:
        objects = dict(zip(map(id, row), row, strict=True))  # distinct objects, by identity: no hashing
        zero = {key for key, w in objects.items() if w == 0}
        keep = map(operator.not_, map(zero.__contains__, map(id, row)))
        out.append(tuple((j, row[j]) for j in compress(range(len(row)), keep)))
    return tuple(out)


def load_matrix(path: str | Path, *, graph: Graph | None = None) -> Mixing:
    """Read a matrix file (see :func:`parse_matrix`).

    Raises
    ------
    ParseError
        When the file cannot be read or parsed.
    """
    text = read_text(path, what="the weights",
                     hint=f"give a weight scheme ({', '.join(WEIGHTS)}) or a matrix file")
    return parse_matrix(text, path=str(path), graph=graph)


def from_matrix(rows: Sequence[Sequence[object]], *, graph: Graph | None = None,
                path: str | None = None) -> Mixing:
    """A mixing matrix from its rows (numbers, or strings such as ``"1/3"``); see :func:`parse_matrix`.

    Raises
    ------
    InputError
        When W is not square, a row does not sum to one, W does not fit *graph*, or its
        nonzero weights leave workers cut off.

    Examples
    --------
    >>> half = Fraction(1, 2)
    >>> m = from_matrix([[0, half, 0, half], [half, 0, half, 0], [0, half, 0, half], [half, 0, half, 0]])
    >>> m.symmetric, m.nonnegative, m.graph.degree
    (True, True, 2)
    """
    from costmodel.consensus.graphs import check_p

    matrix = [tuple(parse_number(v, what="weight") for v in row) for row in rows]
    check_p(len(matrix), graph="mixing matrix")
    for i, row in enumerate(matrix):
        if len(row) != len(matrix):
            raise InputError(f"row {i} has {len(row)} entries, expected {len(matrix)}; W must be square")
    return _from_rows(matrix, _nonzero(matrix), graph=graph, path=path)


def _from_rows(matrix: Sequence[tuple[Fraction, ...]], nonzero: tuple[ExactRow, ...], *, graph: Graph | None,
               path: str | None) -> Mixing:
    """The checks of :func:`from_matrix` on a square *matrix* and its nonzero weights.

    Every check runs over the nonzero weights only, so a file of a few thousand mostly-zero
    rows is read in seconds.
    """
    from costmodel.consensus.graphs import check_p

    p = len(matrix)
    check_p(p, graph="mixing matrix")
    notes: list[str] = []
    distinct = {w for row in nonzero for _, w in row}
    exact = all(isinstance(w, Fraction) for w in distinct)
    sums = [sum((w for _, w in row), Fraction(0)) for row in nonzero]
    worst = max(range(p), key=lambda i: abs(sums[i] - 1))
    total = sums[worst]
    if total != 1:
        if abs(total - 1) > _TOLERANCE:
            raise InputError(f"row {worst} of W sums to {format_exact(total, decimal=True)}, not 1; each row "
                             "must be a weighted average (weights summing to 1)")
        notes.append(f"row sums differ from 1 by up to {abs(float(total) - 1):.2g} (rounded decimals); "
                     "W is used as written, in floating point")
        exact = False
    weights: tuple[tuple[Number, ...], ...]
    kept: tuple[Row, ...]
    column_sum: Number
    lowest: Number
    if exact:
        weights, kept = tuple(matrix), nonzero
        bad, column_sum, column, symmetric, lowest = _column_checks(matrix, nonzero, Fraction(0), Fraction(0))
    else:
        floats = {w: float(w) for w in distinct}
        floats.update({w: 0.0 for row in matrix for w in set(row) if w == 0})
        float_rows = tuple(tuple(map(floats.__getitem__, row)) for row in matrix)
        float_nonzero = tuple(tuple((j, floats[w]) for j, w in row) for row in nonzero)
        weights, kept = float_rows, float_nonzero
        bad, column_sum, column, symmetric, lowest = _column_checks(float_rows, float_nonzero, 0.0,
                                                                    _TOLERANCE)
    name = "matrix"
    if graph is None:
        support = tuple(tuple(j for j, _ in row if j != i) for i, row in enumerate(kept))
        receives = [set(nbrs) for nbrs in support]
        directed = any(i not in receives[j] for i, nbrs in enumerate(support) for j in nbrs)
        graph = Graph(name=name, p=p, label=f"matrix {Path(path).name if path else ''}".strip(),
                      neighbours=support, directed=directed, path=path)
    else:
        if graph.p != p:
            raise InputError(f"W has {p} rows but the {graph.label} has p={graph.p} workers; "
                             "give a matrix with one row per worker")
        _check_support(kept, graph)
    check_connected(_undirected_support(kept), label=f"the nonzero weights of W ({graph.label})",
                     hint="give every worker a nonzero weight towards some neighbour")
    nonnegative = lowest >= 0
    if not column:
        notes.append(f"W is not doubly stochastic (column {bad} sums to {format_exact(column_sum)}): "
                     "mixing does not preserve the mean, which drifts to a weighted average")
    elif not symmetric:
        notes.append("W is doubly stochastic but not symmetric; ρ is the asymptotic rate, and a single round "
                     "may shrink the disagreement by less")
    if not nonnegative:
        notes.append(f"W has negative weights (the smallest is {format_exact(lowest, decimal=True)}); "
                     "values may overshoot, and convergence rests on ρ alone")
    return Mixing(graph=graph, scheme="matrix", exact=exact, row_stochastic=True, column_stochastic=column,
                  symmetric=symmetric, nonnegative=nonnegative, matrix=weights, path=path,
                  notes=tuple(notes), nonzero=kept)


def _column_checks(matrix: Sequence[Sequence[_N]], nonzero: Sequence[Sequence[tuple[int, _N]]], zero: _N,
                   tol: _N) -> tuple[int, _N, bool, bool, _N]:
    """The column checks of a W held in one arithmetic (all Fractions, or all floats).

    Returns the column whose sum is furthest from 1 and that sum, whether every column sums
    to 1 and whether W is symmetric (both within *tol*), and the smallest weight.
    """
    p = len(matrix)
    columns = [zero] * p
    for row in nonzero:
        for j, w in row:
            columns[j] += w
    bad = max(range(p), key=lambda j: abs(columns[j] - 1))
    column = abs(columns[bad] - 1) <= tol
    symmetric = all(abs(matrix[j][i] - w) <= tol for i, row in enumerate(nonzero) for j, w in row if j > i)
    symmetric = symmetric and all(matrix[j][i] == 0 or matrix[i][j] != 0
                                  for i, row in enumerate(nonzero) for j, _ in row)
    lowest = min((w for row in nonzero for _, w in row), default=zero)
    if any(len(row) < p for row in nonzero):
        lowest = min(lowest, zero)
    return bad, columns[bad], column, symmetric, lowest


def _check_support(nonzero: tuple[Row, ...], graph: Graph) -> None:
    for i, row in enumerate(nonzero):
        allowed = set(graph.neighbours[i])
        for j, w in row:
            if j != i and j not in allowed:
                raise InputError(f"W[{i}][{j}] = {format_exact(w, decimal=True)} but worker {i} does not "
                                 f"receive from {j} in the {graph.label}; a weight needs an edge (or use the "
                                 "graph 'matrix' to take the edges from W)")


def _undirected_support(nonzero: tuple[Row, ...]) -> tuple[tuple[int, ...], ...]:
    p = len(nonzero)
    links: list[set[int]] = [set() for _ in range(p)]
    for i, row in enumerate(nonzero):
        for j, _ in row:
            if i != j:
                links[i].add(j)
                links[j].add(i)
    return tuple(tuple(sorted(s)) for s in links)


# -- floating-point forms for the numeric paths (numpy/scipy imported here only) -----------------------


def sparse_matrix(mixing: Mixing) -> Any:
    """W as a ``scipy.sparse.csr_array`` of float64 (self-weights included)."""
    import numpy as np
    from scipy import sparse

    p = mixing.p
    if mixing.matrix is not None:
        weights = mixing.rows()
        at = np.fromiter((i for i, row in enumerate(weights) for _ in row), dtype=np.int64)
        cols = np.fromiter((j for row in weights for j, _ in row), dtype=np.int64, count=at.size)
        data = np.fromiter((float(w) for row in weights for _, w in row), dtype=float, count=at.size)
        return sparse.csr_array((data, (at, cols)), shape=(p, p))
    indptr, indices = csr_structure(mixing.graph)
    deg = np.diff(indptr)
    rows = np.repeat(np.arange(p), deg)
    if mixing.scheme == "uniform":
        off = 1.0 / (deg[rows] + 1)
    elif mixing.scheme in ("metropolis", "lazy"):
        off = 1.0 / (1 + np.maximum(deg[rows], deg[indices]))
        if mixing.scheme == "lazy":
            off = off / 2
    else:
        off = np.full(rows.shape, float(mixing.edge_weight()))
    diag = 1.0 - np.bincount(rows, weights=off, minlength=p)
    if mixing.scheme == "uniform":  # exactly 1/(d + 1), not 1 minus a rounded sum
        diag = 1.0 / (deg + 1)
    all_rows = np.concatenate([rows, np.arange(p)])
    all_cols = np.concatenate([indices, np.arange(p)])
    data = np.concatenate([off, diag])
    return sparse.csr_array((data, (all_rows, all_cols)), shape=(p, p))


def diagonal(mixing: Mixing) -> Any:
    """The self-weights W_ii as a float64 array."""
    import numpy as np

    if mixing.matrix is not None:
        return np.array([float(mixing.matrix[i][i]) for i in range(mixing.p)])
    return sparse_matrix(mixing).diagonal()


def weight_summary(mixing: Mixing) -> str:
    """One line saying what the weights are, for tables."""
    if mixing.scheme == "matrix":
        return f"user matrix {mixing.path or ''}".strip()
    if mixing.scheme == "best-constant":
        alpha = mixing.alpha
        shown = format_exact(alpha) if isinstance(alpha, Fraction) else f"{alpha:.6g}"
        return f"best-constant α* = {shown}"
    return {"uniform": "uniform 1/(d + 1)", "metropolis": "Metropolis 1/(1 + max(d_i, d_j))",
            "lazy": "lazy Metropolis ½(I + W)"}[mixing.scheme]
