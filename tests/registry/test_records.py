"""Every record of the formula registry: fields, names, citations, symbols, backends.

Iterates ``COLLECTIVES`` and each collective's algorithms, adaptations
included, so a new record is checked without touching this file.
"""

from __future__ import annotations

import importlib
import itertools
import json
import re
import sys
from fractions import Fraction
from importlib import resources
from typing import Any

import numpy as np
import pytest
import sympy

from costmodel import LinkParams, UnknownNameError, compare, resolve
from costmodel.collectives import _math, hierarchical, multilane
from costmodel.collectives._record import Algorithm, Collective
from costmodel.collectives._registry import COLLECTIVES, algorithms, collective, record
from costmodel.intmath import is_power_of_two
from costmodel.references import CITATIONS, Cited
from costmodel.symbols import EXTRA_SYMBOLS
from costmodel.symbols import N as N_SYM
from costmodel.symbols import P as P_SYM

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

CANONICAL = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
COEFFICIENTS = ("latency", "bandwidth", "compute", "rounds", "bytes_sent")
LINEAR_IN_N = ("bandwidth", "compute", "bytes_sent")
FREE_OF_N = ("latency", "rounds")

SPECS = list(COLLECTIVES.values())
RECORDS = [a for spec in SPECS for a in spec.algorithms]
RECORD_IDS = [f"{a.collective}/{a.name}" for a in RECORDS]
SPEC_IDS = [s.name for s in SPECS]

P_VALUES = [2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 32, 64, 100, 1024]
N_VALUES = [Fraction(0), Fraction(1), Fraction(7, 3), Fraction(4096), Fraction(10**9 + 7)]
K_VALUES = [1, 2, 5]


def needs_power_of_two(algo: Algorithm) -> bool:
    return any(c.name == "power-of-two p" for c in algo.constraints)


def points(algo: Algorithm) -> list[int]:
    return [q for q in P_VALUES if is_power_of_two(q) or not needs_power_of_two(algo)]


def extras(algo: Algorithm) -> list[dict[str, int]]:
    return [{e.symbol: k for e in algo.extra} for k in K_VALUES] if algo.extra else [{}]


# -- the collectives ---------------------------------------------------------------------------


def test_the_eight_canonical_collectives() -> None:
    assert set(COLLECTIVES) == {
        "allreduce", "reduce-scatter", "allgather", "broadcast", "reduce", "alltoall", "gather", "scatter",
    }


def test_the_registry_names_the_collectives_as_the_bottom_layer_declares_them() -> None:
    """One declaration of the names and aliases: the registry's, in its order, are collective_names'."""
    from costmodel.collective_names import ALIASES, canonical_collective

    assert [(c.name, c.aliases) for c in COLLECTIVES.values()] == list(ALIASES.items())
    for name, aliases in ALIASES.items():
        for spelling in (name, *aliases, name.upper().replace("-", "_")):
            assert canonical_collective(spelling) == collective(spelling).name == name


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_collective_fields(spec: Collective) -> None:
    assert CANONICAL.fullmatch(spec.name)
    assert spec.summary.strip()
    assert spec.meaning_of_n.startswith("n is ")
    assert isinstance(spec.bound.source, Cited)
    assert spec.bound.source.locator.strip()
    assert spec.algorithms, "a collective without algorithms"
    # the default list leaves out the adaptations, and only those
    default = algorithms(spec.name)
    assert [a.name for a in default] == [a.name for a in spec.algorithms if a.adapts is None]
    assert [a.name for a in algorithms(spec.name, adaptations=True)] == [a.name for a in spec.algorithms]


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_collective_aliases_resolve(spec: Collective) -> None:
    for alias in (spec.name, *spec.aliases):
        for typed in (alias, alias.upper(), alias.replace("-", "_"), f"  {alias} "):
            assert collective(typed) is spec, typed


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_reducing_collectives_have_a_compute_bound(spec: Collective) -> None:
    m = _math.EXACT
    gamma_bound = Fraction(spec.bound.compute(Fraction(8), Fraction(64), m))
    # (p-1)/p·n = 56 at p = 8, n = 64 for the reductions, 0 for the others
    assert gamma_bound == (56 if spec.reduces else 0)
    for algo in spec.algorithms:
        compute = Fraction(algo.compute(Fraction(8), Fraction(64), m, **{e.symbol: 1 for e in algo.extra}))
        assert (compute > 0) == spec.reduces, algo.name


# -- the records -------------------------------------------------------------------------------


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_record_fields(algo: Algorithm) -> None:
    assert CANONICAL.fullmatch(algo.name), algo.name
    assert algo.collective in COLLECTIVES
    assert algo.summary.strip()
    assert isinstance(algo.source, Cited)
    assert algo.source.locator.strip(), "the source must say where (section, file)"
    assert algo.source.citation.key in CITATIONS
    assert CITATIONS[algo.source.citation.key] is algo.source.citation
    for alias in algo.aliases:
        assert alias == alias.strip().lower(), alias
    for e in algo.extra:
        assert e.symbol in EXTRA_SYMBOLS
        assert CANONICAL.fullmatch(e.name)
        assert e.description.strip()
    assert all(isinstance(note, str) and note.strip() for note in algo.notes)


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_aliases_resolve_to_the_record(algo: Algorithm) -> None:
    for name in (algo.name, *algo.aliases):
        variants = {name, name.upper(), name.title(), name.replace("-", "_"), f" {name}\t"}
        for typed in variants:
            assert resolve(algo.collective, typed) is algo, typed
    # the collective may be named by any of its aliases too
    for cname in collective(algo.collective).aliases:
        assert resolve(cname, algo.name) is algo
    assert record(algo.collective, algo.name) is algo


def test_aliases_are_unique_within_a_collective() -> None:
    for spec in SPECS:
        seen: dict[str, str] = {}
        for algo in spec.algorithms:
            for name in (algo.name, *algo.aliases):
                key = name.lower().replace("_", "-")
                assert seen.setdefault(key, algo.name) == algo.name, (spec.name, name)


@pytest.mark.parametrize("algo", [a for a in RECORDS if a.constraints or a.adapts], ids=lambda a: a.name)
def test_adaptations(algo: Algorithm) -> None:
    for constraint in algo.constraints:
        assert constraint.name.strip()
        if constraint.otherwise is None:
            continue
        target = record(algo.collective, constraint.otherwise)
        # the adaptation adapts this record, holds for every p and explains itself
        assert target.adapts == algo.name
        assert not target.constraints
        assert target.notes
        assert target.extra == algo.extra
        # a constraint that fails somewhere is worth having
        assert any(not constraint.holds(q) for q in range(2, 65))
    if algo.adapts:
        original = record(algo.collective, algo.adapts)
        assert algo.name in [c.otherwise for c in original.constraints]
        assert not algo.constraints
        # it evaluates exactly at every p, powers of two included
        m = _math.EXACT
        for q in range(2, 130):
            for f in COEFFICIENTS:
                assert Fraction(getattr(algo, f)(Fraction(q), Fraction(10), m)) >= 0


# -- names typed by users -------------------------------------------------------------------------


def test_unknown_algorithm_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown algorithm 'rign' for allreduce; did you mean 'ring'\?"):
        resolve("allreduce", "rign")


def test_unknown_algorithm_without_a_close_name_lists_the_choices() -> None:
    with pytest.raises(UnknownNameError, match=r"choose from pairwise, bruck") as info:
        resolve("alltoall", "zzzzzz")
    assert info.value.choices == ("pairwise", "bruck")


def test_unknown_collective_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown collective 'alreduce'; did you mean 'allreduce'\?"):
        collective("alreduce")
    with pytest.raises(UnknownNameError):
        resolve("allreduse-x", "ring")


def test_unknown_names_are_lookup_and_value_errors() -> None:
    with pytest.raises(LookupError):
        resolve("allreduce", "rign")
    with pytest.raises(ValueError, match="rign"):
        resolve("allreduce", "rign")


def test_algorithm_names_are_per_collective() -> None:
    # bruck is an all-gather and an all-to-all algorithm, not an all-reduce one
    assert resolve("allgather", "bruck") is not resolve("alltoall", "bruck")
    with pytest.raises(UnknownNameError):
        resolve("allreduce", "bruck")


# -- citations -----------------------------------------------------------------------------------


def _profile_sources() -> set[str]:
    keys = set()
    for entry in resources.files("costmodel.profiles").iterdir():
        if entry.name.endswith(".toml"):
            keys.add(tomllib.loads(entry.read_text(encoding="utf-8"))["profile"]["source"])
    return keys


# modules outside the registry that cite sources, each listing them in a CITED tuple
CITING_MODULES = (
    "costmodel.calibration.fit",
    "costmodel.calibration.launch",
    "costmodel.calibration.spread",
    "costmodel.calibration.bench",
    "costmodel.pipeline.orders",
    "costmodel.training.loss",
    "costmodel.training.federated",
    "costmodel.training.memory",
    "costmodel.training.traffic",
    "costmodel.training.compression",
    "costmodel.training.privacy",
    "costmodel.training.federated_pricing",
    "costmodel.training.federated_steps",
    "costmodel.consensus.citations",
    "costmodel.step.device",
    "costmodel.step.stream",
    "costmodel.step.flops",
    "costmodel.step.buckets",
    "costmodel.gpus",
    "costmodel.gpus.curve",
    "costmodel.step.rates",
    "costmodel.step.ops",
    "costmodel.describe.models",
    "costmodel.step.planner",
)


def test_every_citation_used_is_defined_and_every_defined_one_is_used() -> None:
    used_by_records = {a.source.citation.key for a in RECORDS}
    used_by_bounds = {s.bound.source.citation.key for s in SPECS}
    used_by_profiles = _profile_sources()
    used_by_topology = {c.citation.key for c in hierarchical.SOURCES + multilane.SOURCES}
    used_by_calculators = {c.key for module in CITING_MODULES for c in importlib.import_module(module).CITED}
    used = used_by_records | used_by_bounds | used_by_profiles | used_by_topology | used_by_calculators
    assert used_by_profiles <= set(CITATIONS), "a profile names a source key that is not defined"
    assert used <= set(CITATIONS)
    assert set(CITATIONS) <= used, f"defined but never cited: {sorted(set(CITATIONS) - used)}"


def test_citations_are_complete() -> None:
    for key, c in CITATIONS.items():
        assert c.key == key
        assert c.authors.strip() and c.title.strip() and c.venue.strip()
        assert 1900 < c.year < 2100
        assert not c.url or c.url.startswith("https://")
        assert c.at("section 1").to_dict() == {"key": key, "reference": str(c), "locator": "section 1"}


# -- symbols -------------------------------------------------------------------------------------


def _symbolic(algo: Algorithm, fn: Any) -> Any:
    m = _math.symbolic()
    extra = {e.symbol: EXTRA_SYMBOLS[e.symbol] for e in algo.extra}
    return sympy.sympify(fn(P_SYM, N_SYM, m, **extra))


def _bound_coefficients() -> list[tuple[str, Any]]:
    return [
        (f"{s.name}/bound/{name}", getattr(s.bound, name))
        for s in SPECS for name in ("latency", "bandwidth", "compute")
    ]


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_symbols(algo: Algorithm) -> None:
    allowed = {P_SYM, N_SYM} | {EXTRA_SYMBOLS[e.symbol] for e in algo.extra}
    for name in COEFFICIENTS:
        expr = _symbolic(algo, getattr(algo, name))
        assert expr.free_symbols <= allowed, (name, expr)
        if name in LINEAR_IN_N:
            slope = sympy.diff(expr, N_SYM)
            assert N_SYM not in slope.free_symbols, (name, expr)
            assert sympy.simplify(expr.subs(N_SYM, 0)) == 0, (name, expr)
        else:
            assert N_SYM not in expr.free_symbols, (name, expr)


@pytest.mark.parametrize(("label", "fn"), _bound_coefficients(), ids=[x for x, _ in _bound_coefficients()])
def test_bound_symbols(label: str, fn: Any) -> None:
    m = _math.symbolic()
    expr = sympy.sympify(fn(P_SYM, N_SYM, m))
    assert expr.free_symbols <= {P_SYM, N_SYM}
    if label.endswith("latency"):
        assert N_SYM not in expr.free_symbols
    else:
        assert N_SYM not in sympy.diff(expr, N_SYM).free_symbols
        assert expr.subs(N_SYM, 0) == 0


@pytest.mark.parametrize("algo", [a for a in RECORDS if a.extra], ids=lambda a: f"{a.collective}/{a.name}")
def test_tuned_costs_are_convex_in_the_parameter(algo: Algorithm) -> None:
    """Each α, β, γ coefficient is a + b·k + c/k with b, c ≥ 0, so the best integer k is easy to find."""
    for e in algo.extra:
        k = EXTRA_SYMBOLS[e.symbol]
        for name in ("latency", "bandwidth", "compute"):
            expr = _symbolic(algo, getattr(algo, name))
            poly = sympy.Poly(sympy.expand(expr * k), k)
            assert poly.degree() <= 2, (name, expr)
            for q in (2, 3, 8, 12, 1024):
                for size in (1, 1000):
                    b, _a, c = (poly.coeff_monomial(k**i).subs({P_SYM: q, N_SYM: size}) for i in (2, 1, 0))
                    assert b >= 0 and c >= 0, (name, q, size, b, c)


# -- backends ------------------------------------------------------------------------------------


def _exact(algo: Algorithm, fn: Any, q: int, size: Fraction, extra: dict[str, int]) -> Fraction:
    return Fraction(fn(Fraction(q), size, _math.EXACT, **{k: Fraction(v) for k, v in extra.items()}))


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_exact_numpy_and_sympy_agree(algo: Algorithm) -> None:
    qs = points(algo)
    grid_p = np.array([q for q in qs for _ in N_VALUES], dtype=float)
    grid_n = np.array([float(size) for _ in qs for size in N_VALUES], dtype=float)
    for extra in extras(algo):
        np_extra = {k: np.full_like(grid_p, v) for k, v in extra.items()}
        sym_extra = {EXTRA_SYMBOLS[k]: v for k, v in extra.items()}
        for name in COEFFICIENTS:
            fn = getattr(algo, name)
            vectorised = np.broadcast_to(np.asarray(fn(grid_p, grid_n, _math.NUMPY, **np_extra), dtype=float),
                                         grid_p.shape)
            expr = _symbolic(algo, fn)
            i = 0
            for q in qs:
                for size in N_VALUES:
                    exact = _exact(algo, fn, q, size, extra)
                    assert exact >= 0, (name, q, size)
                    symbolic = expr.subs({P_SYM: q, N_SYM: sympy.Rational(size.numerator, size.denominator),
                                          **sym_extra})
                    if symbolic.is_Rational:
                        assert Fraction(int(symbolic.p), int(symbolic.q)) == exact, (name, q, size, extra)
                    else:  # a float constant crept in: see test_no_float_constants
                        assert float(symbolic) == pytest.approx(float(exact), rel=1e-12), (name, q, size)
                    assert vectorised[i] == pytest.approx(float(exact), rel=1e-12, abs=1e-12), (name, q, size)
                    i += 1


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_no_float_constants(algo: Algorithm) -> None:
    """Exact in, exact out: a literal like ``1 / 2`` turns the exact backend's answer into a float."""
    for name in COEFFICIENTS:
        fn = getattr(algo, name)
        expr = _symbolic(algo, fn)
        assert not expr.atoms(sympy.Float), (name, expr)
        for q in points(algo):
            for extra in extras(algo):
                raw = fn(Fraction(q), Fraction(7, 3), _math.EXACT, **{k: Fraction(v) for k, v in extra.items()})
                assert isinstance(raw, (int, Fraction)) and not isinstance(raw, bool), (name, q, type(raw))


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
def test_bound_backends_agree(spec: Collective) -> None:
    for name in ("latency", "bandwidth", "compute"):
        fn = getattr(spec.bound, name)
        expr = sympy.sympify(fn(P_SYM, N_SYM, _math.symbolic()))
        for q in P_VALUES:
            exact = Fraction(fn(Fraction(q), Fraction(999), _math.EXACT))
            symbolic = expr.subs({P_SYM: q, N_SYM: 999})
            assert Fraction(int(symbolic.p), int(symbolic.q)) == exact
            numeric = float(np.asarray(fn(np.array([float(q)]), np.array([999.0]), _math.NUMPY)).ravel()[0])
            assert numeric == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_rounds_and_latency_are_integers(algo: Algorithm) -> None:
    for q in points(algo):
        for extra in extras(algo):
            rounds = _exact(algo, algo.rounds, q, Fraction(1000), extra)
            latency = _exact(algo, algo.latency, q, Fraction(1000), extra)
            assert rounds.denominator == 1 and rounds >= 1, (q, rounds)
            assert latency.denominator == 1 and latency >= 1, (q, latency)


def test_numpy_integer_logs_are_exact_near_powers_of_two() -> None:
    qs = np.array([float(q) for e in range(1, 41) for q in (2**e - 1, 2**e, 2**e + 1) if q >= 2])
    exact_c = [(int(q) - 1).bit_length() for q in qs]
    exact_f = [int(q).bit_length() - 1 for q in qs]
    assert _math.NUMPY.clg(qs).tolist() == exact_c
    assert _math.NUMPY.flg(qs).tolist() == exact_f


# -- results as JSON -----------------------------------------------------------------------------

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11),
                  gamma_s_per_byte=Fraction(1, 10**10))


@pytest.mark.parametrize("spec", SPECS, ids=SPEC_IDS)
@pytest.mark.parametrize("p", [2, 12, 16])
def test_cost_table_to_dict_round_trips_through_json(spec: Collective, p: int) -> None:
    table = compare(spec.name, None, p=p, n=Fraction(1_000_001, 3), link=LINK)
    data = table.to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text) == data
    assert data["collective"] == spec.name
    assert data["p"] == p
    assert len(data["results"]) + len(data["notes"]) == len(algorithms(spec.name))
    assert data["best"] == data["results"][0]["algorithm"]
    times = [r["time_s"] for r in data["results"]]
    assert times == sorted(times)
    for r in data["results"]:
        assert set(r) >= {"algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
                          "bytes_sent_per_rank", "formula", "notes"}
        assert r["bound_ratio"] is None or r["bound_ratio"] >= 1


# -- messages: the rounds one size at a time ------------------------------------------------------

MESSAGE_RANKS = [*range(2, 70), 100, 127, 128, 129, 1000, 1024, 4097, 2**20 + 3, 2**40]


@pytest.mark.parametrize("algo", RECORDS, ids=RECORD_IDS)
def test_messages_add_up_to_the_coefficients(algo: Algorithm) -> None:
    """Σ count = the α coefficient, Σ count·share·n = the β coefficient, the reduced ones' = the γ
    coefficient: the list is the same cost, round by round (the schedules check each round)."""
    from costmodel.collectives.piecewise import messages

    for p in (q for q in MESSAGE_RANKS if is_power_of_two(q) or not needs_power_of_two(algo)):
        for extra in extras(algo):
            values = {s: Fraction(k) for s, k in extra.items()}
            listed = messages(algo, p, values)
            lat, bw, comp = algo.coefficients(Fraction(p), Fraction(1), _math.EXACT, **values)
            assert sum(m.count for m in listed) == lat, p
            assert sum(m.count * m.share for m in listed) == bw, p
            assert sum(m.count * m.share for m in listed if m.reduce) == comp, p
            assert all(m.count > 0 and 0 < m.share <= 1 for m in listed), p


@pytest.mark.parametrize("algo", [a for a in RECORDS if a.extra],
                         ids=[i for a, i in zip(RECORDS, RECORD_IDS, strict=True) if a.extra])
def test_a_tuned_record_sends_one_size_that_shrinks_as_k_grows(algo: Algorithm) -> None:
    """Tuning on a piecewise link finds runs of k whose messages stay on one segment: it needs every message
    of one size, non-increasing in k."""
    from costmodel.collectives.piecewise import messages

    (extra,) = algo.extra
    for p in (4, 5, 16, 1000):
        shares = [{m.share for m in messages(algo, p, {extra.symbol: Fraction(k)})} for k in range(1, 40)]
        assert all(len(s) == 1 for s in shares)
        assert all(a >= b for (a,), (b,) in itertools.pairwise(shares))
