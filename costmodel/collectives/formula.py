"""The symbolic view of a record: its cost in α, β, γ as text and LaTeX (sympy).

The one-line unicode form comes from the same coefficient functions as the
numbers (the text backend); sympy supplies LaTeX and, for algorithms with a
tuned parameter, the continuous optimum k* from dT/dk = 0.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from costmodel._json import JSONFields
from costmodel.collectives._math import symbolic
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import record, resolve
from costmodel.collectives.evaluate import coefficient_text, text_formula
from costmodel.collectives.hierarchical import is_hierarchical
from costmodel.errors import InputError
from costmodel.references import Cited

if TYPE_CHECKING:
    from costmodel.collectives.hierarchical_formula import HierarchicalFormula

__all__ = ["Formula", "formula", "plain_text"]

_LEGEND = {
    "p′": "p′ = 2^⌊log₂p⌋, the largest power of two ≤ p",
    "s(p)": "s(p) = Σ_{i<⌊log₂p⌋} min(p − p′, 2^i), extra blocks on the heaviest rank after folding",
    "B(p)": "B(p) = Σ_{j<p} popcount(j), blocks each rank forwards (p·log₂p/2 for a power of two)",
    "[p ≠ p′]": "[p ≠ p′] = 1 when p is not a power of two (extra ranks fold in), 0 when it is",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Formula(JSONFields):
    """The symbolic cost of one record, its adaptations and its provenance.

    The text fields (``time``, ``latency``, ...) and ``latex`` are for reading; :attr:`expr` and
    :attr:`terms` are the same costs as sympy expressions in the symbols of :mod:`costmodel.symbols`
    (``p``, ``n``, ``ALPHA``, ``BETA``, ``GAMMA``, and ``K`` for a tuned parameter), to
    differentiate, substitute into or solve.  In a notebook the formula shows as LaTeX.

    Examples
    --------
    >>> from costmodel.symbols import ALPHA, BETA, GAMMA, n, p
    >>> f = formula("allreduce", "ring")
    >>> f.expr == f.terms["latency"] * ALPHA + f.terms["bandwidth"] * BETA + f.terms["compute"] * GAMMA
    True
    >>> import sympy
    >>> sympy.diff(f.expr, n)  # seconds per byte more
    2*beta*(p - 1)/p + gamma*(p - 1)/p
    >>> f.expr.subs({p: 4, n: 1000, ALPHA: 0, BETA: sympy.Rational(1, 10**9), GAMMA: 0})
    3/2000000
    """

    collective: str
    algorithm: str
    summary: str
    aliases: tuple[str, ...]
    meaning_of_n: str
    time: str
    latency: str
    bandwidth: str
    compute: str
    rounds: str
    bytes_sent: str
    latex: dict[str, str]
    constraints: tuple[str, ...]
    adaptations: tuple[Formula, ...]
    parameters: tuple[dict[str, str], ...]
    legend: tuple[str, ...]
    source: Cited
    notes: tuple[str, ...]
    _terms: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The sympy expressions behind ``latex`` (not written by ``to_dict``)."""

    @property
    def expr(self) -> Any:
        """The time as a sympy expression: ``latency·α + bandwidth·β + compute·γ``."""
        return self._terms["time"]

    @property
    def terms(self) -> dict[str, Any]:
        """Each part as a sympy expression, keyed as ``latex``: ``time``, and the coefficients of α
        (``latency``), β (``bandwidth``) and γ (``compute``), the ``rounds`` and the ``bytes_sent``."""
        return dict(self._terms)

    def _repr_latex_(self) -> str:
        """The time in LaTeX, as a notebook shows it."""
        return f"$T = {self.latex['time']}$"


def _sympy_terms(algo: Algorithm) -> dict[str, Any]:
    import sympy

    from costmodel.symbols import ALPHA, BETA, EXTRA_SYMBOLS, GAMMA, n, p

    m = symbolic()
    extra = {e.symbol: EXTRA_SYMBOLS[e.symbol] for e in algo.extra}
    terms = {
        name: sympy.factor(sympy.sympify(getattr(algo, name)(p, n, m, **extra)))
        for name in ("latency", "bandwidth", "compute", "rounds", "bytes_sent")
    }
    terms["time"] = terms["latency"] * ALPHA + terms["bandwidth"] * BETA + terms["compute"] * GAMMA
    return terms


def _optimum(algo: Algorithm, terms: dict[str, Any]) -> list[dict[str, str]]:
    import sympy

    from costmodel.symbols import EXTRA_SYMBOLS

    out = []
    for e in algo.extra:
        k = EXTRA_SYMBOLS[e.symbol]
        roots = sympy.solve(sympy.diff(terms["time"], k), k)
        roots = [r for r in roots if r.could_extract_minus_sign() is False]
        entry = {"symbol": e.symbol, "name": e.name, "description": e.description}
        if len(roots) == 1:
            # written as √(k*²): sympy would split the root of a product of positive symbols
            square = sympy.factor(sympy.simplify(roots[0] ** 2))
            entry["optimum"] = f"√({plain_text(square)})"
            entry["optimum_latex"] = rf"\sqrt{{{sympy.latex(square)}}}"
        out.append(entry)
    return out


def plain_text(expr: Any) -> str:
    """A sympy expression as one line with α, β, γ, √ and · (for display only)."""
    text = str(expr)
    for old, new in (("alpha", "α"), ("beta", "β"), ("gamma", "γ"), ("sqrt", "√"), ("**", "^"), ("*", "·")):
        text = text.replace(old, new)
    return text


def formula(collective: str, algorithm: str, *, inner: str | None = None,
            outer: str | None = None) -> Formula | HierarchicalFormula:
    """The symbolic cost of an algorithm, with its adaptations for non-power-of-two p.

    A hierarchical all-reduce (``hierarchical``, ``smp``, ...) gives its
    composition over the levels of a topology and its two-level closed form
    (:func:`~costmodel.collectives.hierarchical_formula.hierarchical_formula`),
    with *inner* and *outer* choosing its phases.

    Raises
    ------
    UnknownNameError, InputError
        For unknown names, and *inner* or *outer* with a flat algorithm.

    Examples
    --------
    >>> f = formula("allreduce", "rabenseifner")
    >>> f.time
    '2·log₂p·α + 2(p − 1)/p·n·β + (p − 1)/p·n·γ'
    >>> f.latex["bandwidth"]
    '\\\\frac{2 n \\\\left(p - 1\\\\right)}{p}'
    >>> [a.algorithm for a in f.adaptations]
    ['rabenseifner-folded']
    """
    spec = find_collective(collective)
    if spec.name == "allreduce" and is_hierarchical(algorithm):
        from costmodel.collectives.hierarchical_formula import hierarchical_formula

        return hierarchical_formula(algorithm, inner=inner, outer=outer)
    algo = resolve(spec.name, algorithm)
    for option, value in (("inner", inner), ("outer", outer)):
        if value is not None:
            raise InputError(f"{option}={value} chooses a phase of a hierarchical all-reduce; {algo.name!r} "
                             "is flat: drop it, or ask for hierarchical or hierarchical-reduce-bcast")
    return _record_formula(algo)


def _record_formula(algo: Algorithm) -> Formula:
    """The symbolic cost of one flat record, with its adaptations."""
    import sympy

    spec = find_collective(algo.collective)
    terms = _sympy_terms(algo)
    texts = {name: coefficient_text(getattr(algo, name), algo)
             for name in ("latency", "bandwidth", "compute", "rounds", "bytes_sent")}
    time = text_formula(algo)
    adaptations = tuple(_record_formula(record(spec.name, c.otherwise))
                        for c in algo.constraints if c.otherwise)
    constraints = tuple(
        f"needs {c.name}; otherwise " + (f"costed as {c.otherwise}" if c.otherwise else "refused")
        for c in algo.constraints
    )
    everything = " ".join([time, *texts.values(), *(a.time for a in adaptations)])
    return Formula(
        collective=spec.name,
        algorithm=algo.name,
        summary=algo.summary,
        aliases=algo.aliases,
        meaning_of_n=spec.meaning_of_n,
        time=time,
        latex={name: sympy.latex(expr) for name, expr in terms.items()},
        constraints=constraints,
        adaptations=adaptations,
        parameters=tuple(_optimum(algo, terms)),
        legend=tuple(text for key, text in _LEGEND.items() if key in everything),
        source=algo.source,
        notes=algo.notes + ((f"adapts {record(spec.name, algo.adapts).name}",) if algo.adapts else ()),
        _terms=terms,
        **texts,
    )
