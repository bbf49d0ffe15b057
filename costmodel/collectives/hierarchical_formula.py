"""The symbolic view of a hierarchical all-reduce: its composition over L levels and its closed form.

:func:`~costmodel.collectives.hierarchical.hierarchical_cost` prices a
hierarchical all-reduce on a concrete topology by running flat registry
records level by level.  Here the same composition runs on sympy symbols:
level i has sᵢ units and its own αᵢ, βᵢ, γᵢ, every phase is its flat
record's coefficient functions at p = sᵢ and the phase's share of n, and the
phases of a level are summed and factored.  Nothing is typed by hand, so the
closed form follows the records; a test evaluates it at exact values against
``hierarchical_cost`` for several inner and outer algorithms, lane counts and
level sizes.

The closed form is the one of the records themselves: where the outer record
needs a power of two (or p ≥ 4) and the outermost level has none,
``hierarchical_cost`` runs its adaptation (or refuses), as the constraints
say.

References
----------
.. [1] A. Sergeev, M. Del Balso, "Horovod: fast and easy distributed deep
   learning in TensorFlow", arXiv:1802.05799, 2018 (reduce-scatter, all-reduce
   across nodes, all-gather).
.. [2] MPICH, ``allreduce_intra_smp.c`` (reduce to the node's root, all-reduce
   among the roots, broadcast).
.. [3] J. L. Träff, S. Hunold, "Decomposing MPI Collectives for Exploiting
   Multi-lane Communication", CLUSTER 2020 (lanes).

Examples
--------
>>> f = hierarchical_formula("hierarchical")
>>> for lv in f.levels:
...     print(lv.time)
2(s₀ − 1)·α₀ + 2(s₀ − 1)/s₀·n·β₀ + (s₀ − 1)/s₀·n·γ₀
2(s₁ − 1)·α₁ + 2(s₁ − 1)/s₁·(n/s₀)·β₁ + (s₁ − 1)/s₁·(n/s₀)·γ₁
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.collectives._math import TEXT, Term, symbolic
from costmodel.collectives._record import Algorithm
from costmodel.collectives._registry import collective as find_collective
from costmodel.collectives._registry import resolve
from costmodel.collectives._schemes import RS_AR_AG, Scheme, inner_algorithm, senders
from costmodel.collectives.evaluate import text_formula
from costmodel.collectives.hierarchical import find_scheme, outer_algorithm
from costmodel.references import Cited
from costmodel.validate import whole

__all__ = ["HierarchicalFormula", "LevelFormula", "closed_form", "hierarchical_formula"]

_SUB = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
_RATES = (("latency", "alpha", "α"), ("bandwidth", "beta", "β"), ("compute", "gamma", "γ"))
_WHO = {2: ("ranks per node", "nodes"), 3: ("ranks per node", "nodes per group", "groups")}


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelFormula(JSONFields):
    """One level's part of the closed form: its phases, α, β, γ terms, rounds and busiest rank's bytes."""

    level: int
    p: str
    n: str
    phases: tuple[str, ...]
    time: str
    rounds: str
    bytes_sent: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HierarchicalFormula(JSONFields):
    """The symbolic cost of a hierarchical all-reduce: the L-level composition and its closed form.

    ``composition`` is the general sum over L levels in terms of the flat
    records (``records`` gives each record's T(p, n)); ``time`` is the closed
    form for ``len(levels)`` levels, with ``levels`` the part of each.
    """

    collective: str
    algorithm: str
    summary: str
    aliases: tuple[str, ...]
    meaning_of_n: str
    inner: str
    outer: str
    composition: str
    records: tuple[dict[str, str], ...]
    time: str
    latex: dict[str, str]
    levels: tuple[LevelFormula, ...]
    rounds: str
    bytes_sent: str
    lanes: str | None
    constraints: tuple[str, ...]
    parameters: tuple[dict[str, str], ...]
    legend: tuple[str, ...]
    sources: tuple[Cited, ...]
    notes: tuple[str, ...]
    _expr: Any = field(default=None, repr=False, compare=False)
    """The closed form as a sympy expression (not written by ``to_dict``)."""

    @property
    def expr(self) -> Any:
        """The closed form of the time as a sympy expression, in the sizes ``s0, s1, ...`` and links
        ``alpha0, beta0, gamma0, ...`` of the levels (:func:`costmodel.symbols.level`) and ``n``."""
        return self._expr

    def _repr_latex_(self) -> str:
        """The closed form in LaTeX, as a notebook shows it."""
        return f"$T = {self.latex['time']}$"


@dataclass(frozen=True, slots=True)
class _Phase:
    level: int
    collective: str
    record: Algorithm
    share: Any  # the phase's n over the all-reduce's n (sympy)

    def coefficient(self, name: str) -> Any:
        """The record's coefficient *name* at this level's p = sᵢ and the phase's n (sympy)."""
        from costmodel import symbols

        extra = {e.symbol: symbols.EXTRA_SYMBOLS[e.symbol] for e in self.record.extra}
        return getattr(self.record, name)(symbols.level(self.level)[0], self.share * symbols.n, symbolic(),
                                          **extra)


def _phases(scheme: Scheme, inner: str, outer: str,
            depth: int) -> tuple[list[_Phase], _Phase, list[_Phase]]:
    """The phases down the inner levels, across the outermost, and back up, as ``_inner_phases`` runs them.

    Reduce-scatter/all-gather shrink the vector by each inner level's size;
    reduce/broadcast keep the full vector (only the leaders go on).
    """
    import sympy

    from costmodel import symbols

    down_name, up_name = scheme.inner[inner]
    down: list[_Phase] = []
    up: list[_Phase] = []
    share: Any = sympy.Integer(1)
    for i in range(depth - 1):
        down.append(_Phase(i, scheme.down, resolve(scheme.down, down_name), share))
        up.append(_Phase(i, scheme.up, resolve(scheme.up, up_name), share))
        if scheme is RS_AR_AG:
            share = share / symbols.level(i)[0]
    return down, _Phase(depth - 1, "allreduce", resolve("allreduce", outer), share), up


def _depth(levels: Any) -> int:
    return whole(levels, "levels", low=2, high=9, expected="a level count from 2 to 9",
                 hint="the closed form is written for 2 (nodes of ranks) or more levels")


def closed_form(algorithm: str = "hierarchical", *, inner: str | None = None, outer: str | None = None,
                levels: int = 2) -> Any:
    """T as a sympy expression in n, sᵢ, αᵢ, βᵢ, γᵢ (i < *levels*) and the outer record's k, if any.

    β of the outermost level is the rate of one stream: ℓ < G lanes out of each
    outermost unit (G = s₀⋯s_{L−2}) make it ⌈G/ℓ⌉·β (``hierarchical`` only).

    Examples
    --------
    >>> from sympy import Rational
    >>> from costmodel.symbols import level, n
    >>> T = closed_form(levels=2)
    >>> s0, a0, b0, g0 = level(0); s1, a1, b1, g1 = level(1)
    >>> T.subs({s0: 4, s1: 2, n: 8 * 10**6, a0: Rational(1, 10**6), b0: Rational(1, 10**11), g0: 0,
    ...         a1: Rational(1, 10**5), b1: Rational(1, 10**10), g1: 0})  # 346 µs, as hierarchical_cost
    173/500000
    """
    from costmodel import symbols

    scheme = find_scheme(algorithm)
    depth = _depth(levels)
    down, middle, up = _phases(scheme, inner_algorithm(scheme, inner), outer_algorithm(outer), depth)
    total = 0
    for ph in (*down, middle, *up):
        _, alpha, beta, gamma = symbols.level(ph.level)
        total += sum(ph.coefficient(name) * rate for (name, _, _), rate in zip(_RATES, (alpha, beta, gamma),
                                                                               strict=True))
    return total


def hierarchical_formula(algorithm: str, *, inner: str | None = None, outer: str | None = None,
                         levels: int = 2) -> HierarchicalFormula:
    """The composition of a hierarchical all-reduce over L levels and its closed form for *levels* levels.

    Parameters
    ----------
    algorithm : str
        ``hierarchical`` or ``hierarchical-reduce-bcast``, or an alias.
    inner, outer : str, optional
        As for :func:`~costmodel.collectives.hierarchical.hierarchical_cost`
        (defaults ``ring``/``ring`` and ``binomial``/``ring``).
    levels : int
        Levels of the closed form, 2 (ranks per node, nodes) by default.

    Raises
    ------
    InputError
        For a flat or unknown algorithm and an inner or outer algorithm that
        does not apply.

    References
    ----------
    .. [1] Sergeev & Del Balso 2018 (Horovod); MPICH SMP-aware all-reduce;
       Träff & Hunold 2020 (multi-lane).

    Examples
    --------
    >>> f = hierarchical_formula("smp")
    >>> f.algorithm, f.inner, f.outer
    ('hierarchical-reduce-bcast', 'binomial', 'ring')
    >>> print(f.levels[0].time)
    2⌈log₂s₀⌉·α₀ + 2⌈log₂s₀⌉·n·β₀ + ⌈log₂s₀⌉·n·γ₀
    """
    import sympy

    from costmodel import symbols

    scheme = find_scheme(algorithm)
    depth = _depth(levels)
    inner_name, outer_name = inner_algorithm(scheme, inner), outer_algorithm(outer)
    down, middle, up = _phases(scheme, inner_name, outer_name, depth)
    phases = (*down, middle, *up)
    busiest = senders(scheme, down, middle, up)
    splits = scheme is RS_AR_AG
    sizes = [f"s{i}".translate(_SUB) for i in range(depth)]
    parts = []
    for i in range(depth):
        mine = [ph for ph in phases if ph.level == i]
        # the level's n as a symbol of its own: n/(s₀⋯s_{i−1}) is written once, in brackets
        local = {symbols.n: symbols.n * mine[0].share.as_numer_denom()[1]}
        n_text = "n" if not splits or i == 0 else f"n/{'·'.join(sizes[:i])}" if i == 1 else \
            f"n/({'·'.join(sizes[:i])})"
        names = {**_names(depth), "n": "n" if n_text == "n" else f"({n_text})"}

        def text(expr: Any, names: dict[str, str] = names, local: dict[Any, Any] = local) -> Term:
            return _term(sympy.factor(sympy.expand(expr.subs(local))), names)

        level_syms = symbols.level(i)
        time = sum((text(sum(ph.coefficient(name) for ph in mine)) * Term(names[sym.name])
                    for (name, _, _), sym in zip(_RATES, level_syms[1:], strict=True)), Term.lift(0))
        parts.append(LevelFormula(
            level=i, p=sizes[i], n=n_text, phases=tuple(f"{ph.collective} {ph.record.name}" for ph in mine),
            time=str(time), rounds=str(text(sum(ph.coefficient("rounds") for ph in mine))),
            bytes_sent=str(text(sum((ph.coefficient("bytes_sent") for ph in busiest if ph.level == i),
                                    sympy.Integer(0)))),
        ))
    total = closed_form(scheme.name, inner=inner_name, outer=outer_name, levels=depth)
    latex = " + ".join(
        f"{sympy.latex(sympy.factor(total.coeff(sym)))} {sympy.latex(sym)}"
        for i in range(depth) for sym in symbols.level(i)[1:] if total.coeff(sym) != 0
    )
    records = tuple(dict.fromkeys((ph.collective, ph.record) for ph in phases))
    return HierarchicalFormula(
        collective="allreduce", algorithm=scheme.name, summary=scheme.summary, aliases=scheme.aliases,
        meaning_of_n=find_collective("allreduce").meaning_of_n, inner=inner_name, outer=outer_name,
        composition=_composition(scheme, down[0], up[0], middle),
        records=tuple({"phase": f"{c} {r.name}", "time": text_formula(r)} for c, r in records),
        time=" + ".join(lv.time for lv in parts), latex={"time": latex}, levels=tuple(parts),
        rounds=" + ".join(lv.rounds for lv in parts),
        bytes_sent=" + ".join(lv.bytes_sent for lv in parts if lv.bytes_sent != "0"),
        lanes=_lanes_text(depth) if splits else None,
        constraints=_constraints(inner_name, middle.record, depth),
        parameters=tuple({"symbol": e.symbol, "name": e.name,
                          "description": f"of the outer {outer_name}, {e.description}; cost takes the "
                                         "integer that minimises the outer phase, or "
                                         f"extra={{'{e.name}': K}}"}
                         for e in middle.record.extra),
        legend=_legend(depth),
        sources=scheme.sources,
        notes=_notes(scheme, inner_name, outer_name),
        _expr=total,
    )


def _names(depth: int) -> dict[str, str]:
    names = {"ell": "ℓ", **{e: e for e in ("k", "n")}}
    for i in range(depth):
        sub = str(i).translate(_SUB)
        names |= {f"s{i}": f"s{sub}", f"alpha{i}": f"α{sub}", f"beta{i}": f"β{sub}", f"gamma{i}": f"γ{sub}"}
    return names


def _composition(scheme: Scheme, down: _Phase, up: _Phase, middle: _Phase) -> str:
    """T over L levels in terms of the records, written from the phases of the innermost level."""
    splits = scheme is RS_AR_AG
    n_i = "n/(s₀⋯s_{i−1})" if splits else "n"
    inner = " + ".join(f"T[{ph.collective} {ph.record.name}](sᵢ, {n_i})" for ph in (down, up))
    beta = "⌈G/ℓ⌉·β_{L−1}" if splits else "β_{L−1}"
    return (f"Σ_{{i<L−1}} ({inner}) at αᵢ, βᵢ, γᵢ + T[allreduce {middle.record.name}](s_{{L−1}}, "
            f"{'n/G' if splits else 'n'}) at α_{{L−1}}, {beta}, γ_{{L−1}}")


def _lanes_text(depth: int) -> str:
    g = "·".join(f"s{i}".translate(_SUB) for i in range(depth - 1))
    top = f"β{str(depth - 1).translate(_SUB)}"
    return (f"G = {g} ranks per outermost unit share ℓ lanes out of it (1 ≤ ℓ ≤ G, default G: one per "
            f"rank, ⌈G/ℓ⌉ = 1); with fewer the busiest lane carries ⌈G/ℓ⌉ slices, so {top} becomes "
            f"⌈G/ℓ⌉·{top} (α unchanged)")


def _constraints(inner: str, outer: Algorithm, depth: int) -> tuple[str, ...]:
    out = []
    if inner == "recursive":
        out.append("inner=recursive needs a power of two at every inner level (s₀ … s_{L−2}); otherwise "
                   "refused (try inner=ring)")
    top = f"s{depth - 1}".translate(_SUB)
    for c in outer.constraints:
        then = (f"costed as its adaptation {c.otherwise} (formula('allreduce', '{outer.name}'))"
                if c.otherwise else "refused")
        out.append(f"the outer {outer.name} needs {c.name} (p = {top} here); otherwise {then}")
    return tuple(out)


def _legend(depth: int) -> tuple[str, ...]:
    sizes = [f"s{i}".translate(_SUB) for i in range(depth)]
    who = _WHO.get(depth) or tuple(f"units of level {i}" for i in range(depth))
    lines = [f"p = {'·'.join(sizes)}: " + "; ".join(
        f"{s} {w} with α{s[1:]}, β{s[1:]}, γ{s[1:]}" for s, w in zip(sizes, who, strict=True))]
    lines.append("T[c a] is the cost of the flat record a of collective c at the p, n and link of its level; "
                 "levels of size 1 are skipped, and with one level of more than one unit T is the flat outer "
                 "all-reduce")
    return tuple(lines)


def _notes(scheme: Scheme, inner: str, outer: str) -> tuple[str, ...]:
    notes = ["composed from the flat records: the phases run one after the other, so their times add; every "
             "group of a level runs its phase at the same time (each rank is in one group, one port each)"]
    if scheme is not RS_AR_AG:
        notes.append("the busiest rank is an outermost leader: the root of every reduce (it sends nothing "
                     "there) and of every broadcast")
    options = "".join(f"{opt}={value!r}, " for opt, value, default in
                      (("inner", inner, scheme.default_inner), ("outer", outer, "ring")) if value != default)
    notes.append(f"on a concrete topology: compare_hierarchical('allreduce', ['{scheme.name}'], {options}"
                 "topology=topology_of(['8:1us:150GB/s', '4:5us:25GB/s']), n='1GiB')")
    return tuple(notes)


def _term(expr: Any, names: dict[str, str]) -> Term:
    """A factored sympy expression as house text (numbers first, n last: 2(s₀ − 1)/s₀·n)."""
    if expr.is_Rational:
        return Term.lift(Fraction(int(expr.p), int(expr.q)))
    if expr.is_Symbol:
        return Term(names[expr.name])
    for kind, write in ((expr.is_Add, _sum), (expr.is_Mul, _product), (expr.is_Pow, _power)):
        if kind:
            return write(expr, names)
    return _function(expr, names)


def _sum(expr: Any, names: dict[str, str]) -> Term:
    import sympy

    terms = sorted(expr.args,
                   key=lambda t: (t.is_number, t.could_extract_minus_sign(), sympy.default_sort_key(t)))
    out = _term(terms[0], names)
    for t in terms[1:]:
        out = out - _term(-t, names) if t.could_extract_minus_sign() else out + _term(t, names)
    return out


def _product(expr: Any, names: dict[str, str]) -> Term:
    import sympy

    from costmodel import symbols

    coeff, rest = expr.as_coeff_Mul()
    if coeff < 0:
        return -_term(-expr, names)
    top, bottom, size = Term.lift(int(coeff.p)), Term.lift(int(coeff.q)), Term.lift(1)
    for f in sympy.Mul.make_args(rest):
        if f.is_Pow and f.exp.is_negative:
            bottom = bottom * _term(f.base ** -f.exp, names)
        elif f == symbols.n:
            size = _term(f, names)
        else:
            top = top * _term(f, names)
    return top / bottom * size


def _power(expr: Any, names: dict[str, str]) -> Term:
    if expr.exp.is_negative:
        return Term.lift(1) / _term(expr.base ** -expr.exp, names)
    return _term(expr.base, names) ** _term(expr.exp, names)


def _function(expr: Any, names: dict[str, str]) -> Term:
    import sympy

    from costmodel import symbols

    functions: dict[Any, Callable[..., Term]] = {
        symbols.lg: TEXT.lg, symbols.clg: TEXT.clg, symbols.flg: TEXT.flg, sympy.Max: TEXT.max,
        sympy.Min: TEXT.min, sympy.ceiling: lambda x: Term(f"⌈{x}⌉")}
    for fn, write in functions.items():
        if isinstance(expr, fn):
            return write(*(_term(a, names) for a in expr.args))
    raise TypeError(f"no text for {expr!r}")  # a record using a function not written above
