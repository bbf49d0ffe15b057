"""Costs over grids of p and n, vectorised with numpy, as a pandas DataFrame.

:func:`sweep` evaluates the registry's formulas with the numpy backend of
:mod:`costmodel.collectives._math`: one vectorised call per coefficient over
the whole grid p × n (float64 arrays of shape ``(len(p), len(n))``).  The
rules are those of the exact evaluation in
:mod:`costmodel.collectives.evaluate`: a p that fails a constraint is costed
with the record that adapts the algorithm (or refused), and a free extra
parameter (segments, blocks) takes, at every grid point, the first integer k
in ``[1, upper]`` where the cost stops decreasing.  The values agree with the
exact ones to float64 rounding.

This module imports numpy and pandas; :mod:`costmodel` imports it only when
:func:`costmodel.sweep` is called, and no numeric command-line path does.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005 (the α–β–γ model
   and the non-power-of-two adaptations).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from costmodel.collectives import piecewise
from costmodel.collectives._math import NUMPY
from costmodel.collectives._record import Algorithm, Extra
from costmodel.collectives._registry import algorithms as registered
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import record, resolve
from costmodel.collectives.evaluate import applicable, check_ranks, terms_at, time_at
from costmodel.errors import ConstraintError, InputError
from costmodel.params import Link, LinkParams, PiecewiseLink
from costmodel.units import parse_size

__all__ = ["sweep"]

_MAX_RANKS = 2**40  # as evaluate.check_ranks
_MAX_BYTES = 10**30  # as units.parse_size


def sweep(
    collective: str,
    algorithms: Iterable[str] | str | None = None,
    *,
    p: Any,
    n: Any,
    link: Link,
    extra: Mapping[str, int] | None = None,
    terms: bool = False,
) -> pd.DataFrame:
    """The modelled time of algorithms of one collective over a grid of p and n.

    Parameters
    ----------
    collective : str
        Name or alias (``"allreduce"``, ``"all_reduce"``).
    algorithms : str or iterable of str, optional
        Names or aliases; ``None`` (or empty) means every registered algorithm
        (not the ``*-folded`` adaptations, which are used where p asks for them).
    p : int or iterable of int
        Numbers of ranks, each at least 2 (and at most 2^40).
    n : size or iterable of sizes
        Message sizes in bytes: numbers, or strings with a unit (``"64MiB"``).
        Their meaning depends on the collective (``df.attrs["meaning_of_n"]``).
    link : LinkParams or PiecewiseLink
        α, β and γ; converted to float64 once.  A piecewise link prices every
        message by the segment that covers its size, cell by cell (``df.attrs``
        then hold the summary link and ``link_segments``, in message sizes).
    extra : mapping of str to int, optional
        Fixed values of extra parameters (``{"blocks": 8}``), checked at every
        grid point as :func:`costmodel.cost` checks them; the others are chosen
        per grid point to minimise the cost.
    terms : bool, default False
        Return the long form with the latency, bandwidth and compute terms.

    Returns
    -------
    pandas.DataFrame
        Wide (default): a ``(p, n_bytes)`` MultiIndex, in the order given, and
        one float column per algorithm (canonical names) holding the time in
        seconds.  With ``terms=True``: one row per algorithm and grid point, with
        columns ``collective, algorithm, p, n_bytes, time_s, latency_s,
        bandwidth_s, compute_s`` (``collective`` and ``algorithm`` categorical).
        ``df.attrs`` holds ``collective``, ``meaning_of_n``, ``alpha_s``,
        ``beta_s_per_byte`` and ``gamma_s_per_byte``.

    Raises
    ------
    UnknownNameError
        For an unknown collective or algorithm.
    InputError
        For a bad p or n (the first bad value is named), an empty grid, or a bad
        or unknown extra parameter.

    Notes
    -----
    Where an algorithm cannot run at some p (a constraint that names no
    adaptation, such as the double binary tree's p ≥ 4), its values are NaN
    in the wide form and its rows are left out of the long form.
    Values are float64 and agree with :func:`costmodel.cost` to rounding
    (about 1e-15 relative).  The exception is a tuned extra parameter whose
    optimum is flat to within float64 rounding, where the comparisons of the
    search become noise and k may land beside the exact optimum: with α > 0
    from about 1e16 B (1e-13 relative at 1e17 B, 1e-9 at 1e20 B), and with
    α = 0 from about 1e9 B.
    ``Extra.upper`` is evaluated once per size, on the smallest and the largest
    p; only if the two disagree is it evaluated at every grid point.
    Tuning an extra parameter is a vectorised search: doubling k from 1 until
    the cost stops decreasing, then bisection; grid points leave the search as
    soon as their k is known.

    References
    ----------
    .. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
       Communication Operations in MPICH", IJHPCA 19(1), 2005.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", beta="0.08ns/B")
    >>> df = sweep("allreduce", ["ring", "rab"], p=[12, 16], n=["1MiB", 0], link=link)
    >>> df.index.names, list(df.columns)
    (FrozenList(['p', 'n_bytes']), ['ring', 'rabenseifner'])
    >>> float(df.loc[(16, 1048576), "rabenseifner"])  # 8α + 1.875 nβ, exactly 15413/78125000 s
    0.0001972864
    >>> float(df.loc[(12, 0), "rabenseifner"])  # p=12 is costed as rabenseifner-folded: 8α
    4e-05
    >>> long = sweep("allreduce", "dbt", p=16, n="1MiB", link=link, terms=True)
    >>> row = long.iloc[0]
    >>> row.algorithm, round(float(row.time_s), 15), float(row.latency_s)  # k = 5 blocks: 32α + 3.2 nβ
    ('double-binary-tree', 0.000428435456, 0.00016)
    """
    spec = find_collective(collective)
    chosen = _chosen(spec.name, algorithms)
    given = _given(spec, chosen, extra)
    ranks = _ranks(p)
    sizes, exact = _sizes(n)
    summary = link.summary if isinstance(link, PiecewiseLink) else link
    coef = _coef(summary)

    grid = _Grid(ranks=ranks, sizes=sizes, exact=exact, coef=coef, given=given)
    if isinstance(link, PiecewiseLink):
        link = piecewise.placed(link)
        results = _by_message(chosen, grid, link, terms=terms)
    else:
        results = [_algorithm(algo, grid, terms=terms) for algo in chosen]
    names = [algo.name for algo in chosen]
    if terms:
        frame = _long(spec.name, names, ranks, sizes, results)
    else:
        frame = _wide(names, ranks, sizes, [r[0] for r in results])
    frame.attrs = {
        "collective": spec.name,
        "meaning_of_n": spec.meaning_of_n,
        "alpha_s": coef[0],
        "beta_s_per_byte": coef[1],
        "gamma_s_per_byte": coef[2],
    }
    if isinstance(link, PiecewiseLink):
        frame.attrs["link_segments"] = [seg.to_dict() for seg in link.segments]
    return frame


def _coef(link: LinkParams) -> tuple[float, float, float]:
    return (float(link.alpha_s), float(link.beta_s_per_byte), float(link.gamma_s_per_byte))


def _by_message(chosen: list[Algorithm], grid: _Grid, link: PiecewiseLink, *, terms: bool) -> list[Terms]:
    """Every algorithm on the grid, each message priced by the segment of the link that covers its size.

    Cell by cell: the time in float64 (:func:`costmodel.collectives.evaluate.time_at`, a tuned
    parameter searched in float64 too); the terms exactly (:func:`~costmodel.collectives.evaluate.
    terms_at`), then rounded.  A p where an algorithm cannot run stays NaN.
    """
    out = []
    for algo in chosen:
        cells = np.full((4, *grid.shape), np.nan)
        for i, q in enumerate(grid.ranks.tolist()):
            try:
                applicable(algo, q)
            except ConstraintError:
                continue
            for j, size in enumerate(grid.exact):
                if not terms:
                    cells[0, i, j] = time_at(algo, q, float(parse_size(size)), link, grid.given, exact=False)
                    continue
                parts = terms_at(algo, q, parse_size(size), link, grid.given)
                cells[1:, i, j] = [float(x) for x in parts]
                cells[0, i, j] = float(sum(parts, Fraction(0)))
        out.append((cells[0], cells[1], cells[2], cells[3]) if terms else (cells[0], None, None, None))
    return out


# -- inputs --------------------------------------------------------------------------------


def _chosen(collective: str, names: Iterable[str] | str | None) -> list[Algorithm]:
    if isinstance(names, str):
        names = [names]
    listed = list(names or [])
    if not listed:
        return list(registered(collective))
    return list(dict.fromkeys(resolve(collective, a) for a in listed))


def _given(spec: Any, chosen: list[Algorithm], extra: Mapping[str, int] | None) -> dict[str, int]:
    given = dict(extra or {})
    # the parameters of the chosen records and of the records that adapt them
    records = chosen + [record(spec.name, c.otherwise) for a in chosen for c in a.constraints if c.otherwise]
    known = {e.name for a in records for e in a.extra}
    for name, value in given.items():
        if name not in known:
            users = sorted({a.name for a in spec.algorithms for e in a.extra if e.name == name})
            hint = f"it applies to {', '.join(users)}" if users else f"{spec.name} has no such parameter"
            raise InputError(f"{name!r} is not a parameter of the chosen algorithms; {hint}")
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name}={value!r} is not a positive integer")
        given[name] = int(value)
    return given


def _items(name: str, value: Any) -> tuple[list[Any] | None, np.ndarray | None]:
    """A scalar or an iterable as a list, or as a 1-D array when it is one already."""
    if isinstance(value, np.ndarray):
        if value.ndim > 1:
            raise InputError(f"{name} has shape {value.shape}; give a scalar or a 1-D sequence")
        return None, value.reshape(-1)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return [value], None
    return list(value), None


def _ranks(p: Any) -> np.ndarray:
    """The p values as int64, validated as :func:`~costmodel.collectives.evaluate.check_ranks` does."""
    if isinstance(p, range):
        if len(p) == 0:
            raise InputError("p is empty; give at least one number of ranks")
        check_ranks(min(p))  # a range holds only ints, and is valid if its extremes are
        check_ranks(max(p))
        return np.arange(p.start, p.stop, p.step, dtype=np.int64)
    listed, array = _items("p", p)
    if array is not None and array.dtype.kind in "iu":
        if array.size == 0:
            raise InputError("p is empty; give at least one number of ranks")
        bad = (array < 2) | (array > _MAX_RANKS)
        if bad.any():
            check_ranks(int(array[np.argmax(bad)]))
        return array.astype(np.int64)
    if listed is None:
        listed = array.tolist() if array is not None else []
    if not listed:
        raise InputError("p is empty; give at least one number of ranks")
    return np.array([check_ranks(int(q) if isinstance(q, np.integer) else q) for q in listed], dtype=np.int64)


def _sizes(n: Any) -> tuple[np.ndarray, list[Any]]:
    """The sizes as float64 bytes, and the values as given (``parse_size`` reads them exactly)."""
    listed, array = _items("n", n)
    if array is not None and array.dtype.kind in "iuf":
        if array.size == 0:
            raise InputError("n is empty; give at least one size")
        floats = array.astype(np.float64) + 0.0  # also -0.0 to 0.0
        with np.errstate(invalid="ignore"):
            suspect = ~np.isfinite(floats) | (floats < 0) | (floats >= _MAX_BYTES)
        for value in array[suspect].tolist():
            parse_size(value)  # raises with the parser's message (at 1e30 only if it is above 10**30)
        return floats, array.tolist()
    if listed is None:
        listed = array.tolist() if array is not None else []
    if not listed:
        raise InputError("n is empty; give at least one size")
    exact = [parse_size(x.item() if isinstance(x, np.generic) else x) for x in listed]
    return np.array([float(x) for x in exact], dtype=np.float64), exact


# -- evaluation ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class _Grid:
    """What every evaluation needs: p (int64), n (float64 bytes, and as given), α β γ, fixed extras."""

    ranks: np.ndarray
    sizes: np.ndarray
    exact: list[Any]
    coef: tuple[float, float, float]
    given: Mapping[str, int]

    @property
    def shape(self) -> tuple[int, int]:
        return (self.ranks.size, self.sizes.size)


Terms = tuple[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray | None]
"""(time, latency, bandwidth, compute) in seconds, shape (len(p), len(n)); terms only if asked."""


def _algorithm(algo: Algorithm, grid: _Grid, *, terms: bool) -> Terms:
    """Evaluate *algo* on the grid, each p with the record that runs there."""
    groups = _records(algo, grid.ranks)
    if len(groups) == 1 and groups[0][1].all():
        return _evaluate(groups[0][0], grid, terms=terms)
    out = [np.full(grid.shape, np.nan) for _ in range(4 if terms else 1)]
    for rec, rows in groups:
        parts = _evaluate(rec, replace(grid, ranks=grid.ranks[rows]), terms=terms)
        for target, part in zip(out, parts, strict=False):
            target[rows] = part
    if terms:
        return out[0], out[1], out[2], out[3]
    return out[0], None, None, None


def _records(algo: Algorithm, ranks: np.ndarray) -> list[tuple[Algorithm, np.ndarray]]:
    """The records that run at each p: *algo*, or what its first failing constraint names.

    The same rule as :func:`~costmodel.collectives.evaluate.applicable`, with
    each ``Constraint.holds`` evaluated once per distinct p.
    """
    if not algo.constraints:
        return [(algo, np.ones(ranks.size, dtype=bool))]
    distinct, inverse = np.unique(ranks, return_inverse=True)
    # failing[i]: index of the first constraint p=distinct[i] fails, or len(constraints)
    failing = np.full(distinct.size, len(algo.constraints))
    for j, constraint in reversed(list(enumerate(algo.constraints))):
        holds = np.fromiter((constraint.holds(int(q)) for q in distinct), dtype=bool, count=distinct.size)
        failing[~holds] = j
    failing = failing[inverse]
    groups = []
    if (failing == len(algo.constraints)).any():
        groups.append((algo, failing == len(algo.constraints)))
    # rows failing a constraint that names no adaptation stay NaN: the algorithm cannot run there
    for j, constraint in enumerate(algo.constraints):
        rows = failing == j
        if rows.any() and constraint.otherwise is not None:
            groups.append((record(algo.collective, constraint.otherwise), rows))
    return groups


def _evaluate(rec: Algorithm, grid: _Grid, *, terms: bool) -> Terms:
    """One record, no constraints left to check, on the grid p × n."""
    p = grid.ranks.astype(np.float64)[:, None]
    n = grid.sizes[None, :]
    values = _tune(rec, grid) if rec.extra else {}
    shape = grid.shape
    if not terms:
        return np.broadcast_to(_time_function(rec, grid.coef)(p, n, **values), shape), None, None, None
    lat, bw, comp = rec.coefficients(p, n, NUMPY, **values)
    alpha, beta, gamma = grid.coef
    lat_s, bw_s, comp_s = (np.broadcast_to(np.multiply(c, x, dtype=np.float64), shape)
                           for c, x in ((lat, alpha), (bw, beta), (comp, gamma)))
    return lat_s + bw_s + comp_s, lat_s, bw_s, comp_s


def _time_function(rec: Algorithm, coef: tuple[float, float, float]) -> Callable[..., Any]:
    """T(p, n, **extra) in seconds, leaving out the terms whose link parameter is 0."""
    alpha, beta, gamma = coef

    def time(p: Any, n: Any, **values: Any) -> Any:
        total: Any = 0.0
        if alpha:
            total = rec.latency(p, n, NUMPY, **values) * alpha
        if beta:
            total = total + rec.bandwidth(p, n, NUMPY, **values) * beta
        if gamma:
            total = total + rec.compute(p, n, NUMPY, **values) * gamma
        return total

    return time


def _tune(rec: Algorithm, grid: _Grid) -> dict[str, Any]:
    """The extra parameters at every grid point: as given, or the best integers.

    Mirrors :func:`costmodel.collectives.evaluate._tune`: parameters are tuned
    one after the other, the later ones held at 1 meanwhile.
    """
    shape = grid.shape
    flat_p = np.broadcast_to(grid.ranks.astype(np.float64)[:, None], shape).ravel()
    flat_n = np.broadcast_to(grid.sizes[None, :], shape).ravel()
    time = _time_function(rec, grid.coef)
    chosen: dict[str, Any] = {}
    for e in rec.extra:
        upper = _upper(e, grid.ranks, grid.exact)
        if e.name in grid.given:
            value = grid.given[e.name]
            too_big = value > upper
            if too_big.any():
                i, j = np.unravel_index(np.argmax(too_big), upper.shape)
                size = parse_size(grid.exact[j])
                raise InputError(
                    f"{e.name}={value} is more than n={size} bytes allows for {rec.name}; "
                    f"use at most {int(upper[i, j])}"
                )
            chosen[e.symbol] = float(value)
            continue
        others = {x.symbol: chosen.get(x.symbol, 1.0) for x in rec.extra if x is not e}

        def at(k: np.ndarray, idx: np.ndarray, e: Extra = e, others: dict[str, Any] = others) -> Any:
            fixed = {s: (v.reshape(-1)[idx] if isinstance(v, np.ndarray) else v) for s, v in others.items()}
            return time(flat_p[idx], flat_n[idx], **fixed, **{e.symbol: k})

        best = _first_stop(at, np.broadcast_to(upper, shape).ravel())
        chosen[e.symbol] = best.reshape(shape)
    return chosen


def _upper(e: Extra, ranks: np.ndarray, exact: list[Any]) -> np.ndarray:
    """``e.upper`` as float64, shape (1, len(n)) when it does not depend on p, else (len(p), len(n))."""
    sizes = [parse_size(x) for x in exact]
    low, high = int(ranks.min()), int(ranks.max())
    row = [e.upper(low, s) for s in sizes]
    if low == high or row == [e.upper(high, s) for s in sizes]:
        return np.array([row], dtype=np.float64)
    return np.array([[e.upper(int(q), s) for s in sizes] for q in ranks], dtype=np.float64)


def _first_stop(at: Callable[[np.ndarray, np.ndarray], Any], upper: np.ndarray) -> np.ndarray:
    """Per element, the first integer k in [1, upper) with T(k+1) ≥ T(k), else upper.

    For T convex in k this is the smallest minimiser, found as the exact
    evaluation finds it.  k doubles from 1 until T stops decreasing (or k
    reaches upper), then bisection; elements leave as soon as they are done.
    """
    best = np.ones(upper.size)
    idx = np.flatnonzero(upper > 1)
    lo = np.ones(idx.size)
    k = np.ones(idx.size)
    top = upper[idx]
    brackets: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (idx, lo, hi), answer in [lo, hi]
    while idx.size:
        capped = k >= top
        if capped.any():
            brackets.append((idx[capped], lo[capped], top[capped]))
            keep = ~capped
            idx, lo, k, top = idx[keep], lo[keep], k[keep], top[keep]
            if not idx.size:
                break
        stop = at(k + 1, idx) >= at(k, idx)
        brackets.append((idx[stop], lo[stop], k[stop]))
        go = ~stop
        idx, lo, k, top = idx[go], k[go] + 1, np.minimum(2 * k[go], top[go]), top[go]
    if not brackets:
        return best
    idx = np.concatenate([b[0] for b in brackets])
    lo = np.concatenate([b[1] for b in brackets])
    hi = np.concatenate([b[2] for b in brackets])
    while idx.size:
        mid = np.floor((lo + hi) / 2)
        done = (lo >= hi) | (mid >= hi)  # the second only beyond 2**53, where floats skip integers
        best[idx[done]] = lo[done]
        keep = ~done
        idx, lo, hi, mid = idx[keep], lo[keep], hi[keep], mid[keep]
        stop = at(mid + 1, idx) >= at(mid, idx)
        hi = np.where(stop, mid, hi)
        lo = np.where(stop, lo, mid + 1)
    return best


# -- output --------------------------------------------------------------------------------


def _wide(names: list[str], ranks: np.ndarray, sizes: np.ndarray, times: list[np.ndarray]) -> pd.DataFrame:
    index = pd.MultiIndex.from_product([ranks, sizes], names=["p", "n_bytes"])
    data = np.empty((ranks.size * sizes.size, len(names)), order="F")
    for j, time in enumerate(times):
        data[:, j] = time.reshape(-1)
    columns = pd.Index(names, name="algorithm")
    return pd.DataFrame(data, index=index, columns=columns, copy=False)


def _long(collective: str, names: list[str], ranks: np.ndarray, sizes: np.ndarray,
          results: list[Terms]) -> pd.DataFrame:
    grid = ranks.size * sizes.size
    rows = grid * len(names)

    def column(i: int) -> np.ndarray:
        return np.concatenate([np.asarray(r[i]).reshape(-1) for r in results])

    frame = pd.DataFrame({
        "collective": pd.Categorical.from_codes(np.zeros(rows, dtype=np.int8), categories=[collective]),
        "algorithm": pd.Categorical.from_codes(
            np.repeat(np.arange(len(names), dtype=np.int16), grid), categories=names),
        "p": np.tile(np.repeat(ranks, sizes.size), len(names)),
        "n_bytes": np.tile(sizes, ranks.size * len(names)),
        "time_s": column(0),
        "latency_s": column(1),
        "bandwidth_s": column(2),
        "compute_s": column(3),
    })
    runs = frame["time_s"].notna().to_numpy()
    return frame if runs.all() else frame[runs].reset_index(drop=True)
