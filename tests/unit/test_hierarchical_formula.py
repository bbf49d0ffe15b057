"""The symbolic hierarchical all-reduce: its closed form equals what hierarchical_cost prices, exactly.

``hierarchical_cost`` composes the flat records numerically on a concrete
topology; ``closed_form`` composes them on symbols.  Each case below evaluates
the symbolic expression at exact values (every level its own α, β, γ; lanes
scale the outermost β by ⌈G/ℓ⌉, as the lanes line says) and compares it with
the numeric composition, and the CLI's ``cost --json`` time.  The two-level
ring/ring text is checked against the form worked out by hand.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import sympy

from costmodel import InputError, Level, LinkParams, Topology, hierarchical_cost
from costmodel.collectives.hierarchical_formula import closed_form, hierarchical_formula
from costmodel.symbols import EXTRA_SYMBOLS, level, n

F = Fraction
LINKS = (
    LinkParams(alpha_s=F(1, 10**6), beta_s_per_byte=F(1, 150 * 10**9), gamma_s_per_byte=F(1, 10**12)),
    LinkParams(alpha_s=F(5, 10**6), beta_s_per_byte=F(1, 25 * 10**9), gamma_s_per_byte=F(3, 10**12)),
    LinkParams(alpha_s=F(17, 10**6), beta_s_per_byte=F(1, 7 * 10**9), gamma_s_per_byte=F(0)),
)


def _exact(x):
    """A Fraction as a sympy Rational (exactly, never through a float)."""
    x = F(x)
    return sympy.Rational(x.numerator, x.denominator)


def _value(algorithm, sizes, size, *, inner=None, outer=None, lanes=None, blocks=None):
    """The closed form at *sizes* (innermost first) and *size*, with the outermost β per lane stream."""
    expr = closed_form(algorithm, inner=inner, outer=outer, levels=len(sizes))
    values = {n: size}
    for i, (s, link) in enumerate(zip(sizes, LINKS, strict=False)):
        sym_s, a, b, g = level(i)
        values |= {sym_s: s, a: link.alpha_s, b: link.beta_s_per_byte, g: link.gamma_s_per_byte}
    local = math.prod(sizes[:-1])
    if lanes is not None and algorithm == "hierarchical":
        values[level(len(sizes) - 1)[2]] *= -(-local // lanes)
    if blocks is not None:
        values[EXTRA_SYMBOLS["k"]] = blocks
    result = expr.subs({k: _exact(v) for k, v in values.items()})
    assert result.is_Rational, result
    return F(int(result.p), int(result.q))


CASES = [
    ("hierarchical", (8, 4), {}),
    ("hierarchical", (8, 3), {}),
    ("hierarchical", (5, 7), {}),
    ("hierarchical", (8, 4), {"inner": "recursive"}),
    ("hierarchical", (4, 8), {"inner": "recursive", "outer": "rabenseifner"}),
    ("hierarchical", (8, 16), {"outer": "recursive-doubling"}),
    ("hierarchical", (8, 6), {"outer": "tree"}),
    ("hierarchical", (3, 5), {"outer": "naive"}),
    ("hierarchical", (8, 16), {"outer": "double-binary-tree"}),
    ("hierarchical", (8, 4), {"lanes": 1}),
    ("hierarchical", (8, 4), {"lanes": 3}),
    ("hierarchical", (6, 5), {"lanes": 4, "outer": "tree"}),
    ("hierarchical", (4, 2, 8), {}),
    ("hierarchical", (2, 4, 4), {"inner": "recursive", "outer": "rabenseifner", "lanes": 3}),
    ("hierarchical", (3, 5, 7), {"outer": "tree", "lanes": 2}),
    ("hierarchical-reduce-bcast", (8, 4), {}),
    ("hierarchical-reduce-bcast", (6, 5), {"outer": "naive"}),
    ("hierarchical-reduce-bcast", (8, 8), {"outer": "recursive-doubling", "lanes": 2}),
    ("hierarchical-reduce-bcast", (3, 5, 6), {"outer": "tree"}),
    ("hierarchical-reduce-bcast", (4, 2, 16), {"outer": "double-binary-tree"}),
]


@pytest.mark.parametrize(("algorithm", "sizes", "options"), CASES, ids=str)
@pytest.mark.parametrize("size", [F(2**30), F(1000), F(7, 3)])
def test_the_closed_form_is_what_hierarchical_cost_prices(algorithm, sizes, options, size):
    topology = Topology(tuple(Level(size=s, link=link) for s, link in zip(sizes, LINKS, strict=False)))
    priced = hierarchical_cost(topology, max(size, F(1)), algorithm=algorithm, **options)
    blocks = priced.parameters.get("blocks")
    formula = {k: v for k, v in options.items() if k != "lanes"}
    assert _value(algorithm, sizes, max(size, F(1)), lanes=options.get("lanes"), blocks=blocks,
                  **formula) == priced.time_s


def test_the_closed_form_matches_cost_json(capsys):
    from tests.clirun import run_json

    data = run_json(capsys, "cost", "allreduce", "hierarchical", "--level", "8:1us:150GB/s", "--level",
                    "4:5us:25GB/s", "-n", "1GiB", "--outer", "tree", "--lanes", "2")
    got = next(r for r in data["results"] if r["algorithm"] == "hierarchical")["time_s"]
    expr = closed_form("hierarchical", outer="tree")
    s0, a0, b0, g0 = level(0)
    s1, a1, b1, g1 = level(1)
    values = {s0: 8, s1: 4, n: 2**30, a0: F(1, 10**6), b0: F(1, 150 * 10**9), g0: 0,
              a1: F(5, 10**6), b1: F(4, 25 * 10**9), g1: 0}  # 8 ranks on 2 lanes: 4 streams each
    exact = expr.subs({k: _exact(v) for k, v in values.items()})
    assert float(exact) == pytest.approx(got, rel=1e-15)


def test_the_two_level_ring_form_by_hand():
    # RS ring and AG ring of n on s₀: 2(s₀ − 1) start-ups, 2(s₀ − 1)/s₀·n bytes, (s₀ − 1)/s₀·n reduced;
    # then the ring all-reduce of n/s₀ on s₁
    f = hierarchical_formula("hier")
    assert f.time == ("2(s₀ − 1)·α₀ + 2(s₀ − 1)/s₀·n·β₀ + (s₀ − 1)/s₀·n·γ₀ + 2(s₁ − 1)·α₁ + "
                      "2(s₁ − 1)/s₁·(n/s₀)·β₁ + (s₁ − 1)/s₁·(n/s₀)·γ₁")
    assert [(lv.rounds, lv.bytes_sent) for lv in f.levels] == [
        ("2(s₀ − 1)", "2(s₀ − 1)/s₀·n"), ("2(s₁ − 1)", "2(s₁ − 1)/s₁·(n/s₀)")]
    assert (f.inner, f.outer) == ("ring", "ring")


def test_the_reduce_bcast_form_by_hand():
    # binomial reduce and broadcast of the full n on s₀: 2⌈log₂s₀⌉ start-ups; the leader sends only in the
    # broadcast, ⌈log₂s₀⌉·n; then the ring all-reduce of n among s₁ leaders
    f = hierarchical_formula("smp")
    assert f.time == ("2⌈log₂s₀⌉·α₀ + 2⌈log₂s₀⌉·n·β₀ + ⌈log₂s₀⌉·n·γ₀ + 2(s₁ − 1)·α₁ + 2(s₁ − 1)/s₁·n·β₁ + "
                      "(s₁ − 1)/s₁·n·γ₁")
    assert [lv.bytes_sent for lv in f.levels] == ["⌈log₂s₀⌉·n", "2(s₁ − 1)/s₁·n"]
    assert f.lanes is None


def test_busiest_rank_bytes_per_level_sum_to_what_cost_reports():
    topology = Topology(tuple(Level(size=s, link=link) for s, link in zip((8, 4), LINKS, strict=False)))
    for algorithm in ("hierarchical", "hierarchical-reduce-bcast"):
        f = hierarchical_formula(algorithm)
        priced = hierarchical_cost(topology, 2**20, algorithm=algorithm)
        expr = sympy.sympify(0)
        # the per-level texts are derived from the same coefficients; check their sum numerically
        from costmodel.collectives._schemes import senders
        from costmodel.collectives.hierarchical import find_scheme
        from costmodel.collectives.hierarchical_formula import _phases

        scheme = find_scheme(algorithm)
        down, middle, up = _phases(scheme, f.inner, f.outer, 2)
        for ph in senders(scheme, down, middle, up):
            expr += ph.coefficient("bytes_sent")
        assert expr.subs({n: 2**20, level(0)[0]: 8, level(1)[0]: 4}) == priced.bytes_sent_per_rank


def test_constraints_options_and_refusals():
    f = hierarchical_formula("hierarchical", inner="rh", outer="rd")
    assert f.inner == "recursive" and f.outer == "recursive-doubling"
    assert f.constraints[0].startswith("inner=recursive needs a power of two at every inner level")
    assert "costed as its adaptation recursive-doubling-folded" in f.constraints[1]
    assert "['hierarchical'], inner='recursive', outer='recursive-doubling', topology=" in f.notes[-1]
    dbt = hierarchical_formula("hierarchical", outer="dbt")
    assert dbt.parameters[0]["symbol"] == "k" and "refused" in dbt.constraints[0]
    with pytest.raises(InputError, match="does not apply to hierarchical-reduce-bcast"):
        hierarchical_formula("smp", inner="ring")
    with pytest.raises(InputError, match="not composed across levels"):
        hierarchical_formula("hier", outer="rabenseifner-folded")
    with pytest.raises(InputError, match="unknown algorithm 'rign' for allreduce; did you mean 'ring'"):
        hierarchical_formula("hier", outer="rign")
    with pytest.raises(InputError, match="flat algorithm"):
        hierarchical_formula("ring")
    with pytest.raises(InputError, match="not a level count"):
        hierarchical_formula("hier", levels=1)
