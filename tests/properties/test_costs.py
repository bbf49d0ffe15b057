"""Properties of every cost: non-negative, above the lower bound, monotone in n; crossovers.

Every registered algorithm of every collective (the default list; at a
non-power-of-two p its adaptation) is checked at random p, n and link.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from costmodel import LinkParams, algorithms, bound, cost, crossover
from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives.evaluate import price
from tests.strategies import PAIR_IDS, PAIRS, costs_at_two_sizes, links, ranks, runs, sizes

F = Fraction

LINEAR = {c: [a.name for a in algorithms(c) if not a.extra] for c in COLLECTIVES}

# where a tuned block or segment count is capped by the size, a larger message can be cheaper:
# double-binary-tree at p = 8 (h = 3), α = 0: n = 3 allows k = 1 only: 2·3·3β = 18β, while n = 4
# allows k = 2: 2·(3 + 1)/2·4β = 16β.  pipelined-chain at p = 8, α = 0: n = 3/2 allows k = 1:
# 7·(3/2)β = 10.5β, while n = 2 allows k = 2: 8·(2/2)β = 8β.
NO_ALPHA = LinkParams(alpha_s=F(0), beta_s_per_byte=F(1, 10**8))

# the tests below run once per algorithm (29 of them): fewer examples each keeps the suite fast
PER_ALGORITHM = settings(max_examples=35)


@pytest.mark.parametrize(("collective", "algorithm"), PAIRS, ids=PAIR_IDS)
@PER_ALGORITHM
@given(p=ranks(), n=sizes(), link=links())
def test_terms_are_non_negative_and_above_the_lower_bound(
    collective: str, algorithm: str, p: int, n: Fraction | int, link: LinkParams
) -> None:
    assume(runs(collective, algorithm, p))
    result = cost(collective, algorithm, p=p, n=n, link=link)
    lower = bound(collective, p=p, n=n, link=link)
    assert result.latency_s >= 0
    assert result.bandwidth_s >= 0
    assert result.compute_s >= 0
    assert result.bytes_sent_per_rank >= 0
    assert result.rounds >= 1
    assert result.latency_s >= lower.latency_s
    assert result.bandwidth_s >= lower.bandwidth_s
    assert result.compute_s >= lower.compute_s
    assert result.time_s >= lower.time_s
    assert result.bound_s == lower.time_s
    ratio = result.bound_ratio
    assert (ratio is None) == (lower.time_s == 0)
    assert ratio is None or ratio >= 1


@pytest.mark.parametrize(("collective", "algorithm"), PAIRS, ids=PAIR_IDS)
@PER_ALGORITHM
@given(p=ranks(), ns=st.tuples(sizes(), sizes()), link=links())
@example(p=8, ns=(3, 4), link=NO_ALPHA)
@example(p=8, ns=(F(3, 2), 2), link=NO_ALPHA)
def test_monotone_in_n(
    collective: str, algorithm: str, p: int, ns: tuple[Fraction | int, Fraction | int], link: LinkParams
) -> None:
    assume(runs(collective, algorithm, p))
    small, large = sorted(map(F, ns))
    t_small, t_large = costs_at_two_sizes(collective, algorithm, p, (small, large), link)
    assert t_small.time_s <= t_large.time_s, (t_small.parameters, t_large.parameters)
    assert t_small.bytes_sent_per_rank <= t_large.bytes_sent_per_rank


@pytest.mark.parametrize(("collective", "algorithm"), PAIRS, ids=PAIR_IDS)
@PER_ALGORITHM
@given(p=ranks(), n=sizes(), link=links())
def test_latency_and_rounds_do_not_depend_on_n_for_fixed_parameters(
    collective: str, algorithm: str, p: int, n: Fraction | int, link: LinkParams
) -> None:
    assume(runs(collective, algorithm, p))
    spec = next(a for a in algorithms(collective) if a.name == algorithm)
    extra = {e.name: 1 for e in spec.extra}
    at_n = cost(collective, algorithm, p=p, n=F(n) + 2, link=link, extra=extra)
    at_2 = cost(collective, algorithm, p=p, n=2, link=link, extra=extra)
    assert at_n.rounds == at_2.rounds
    assert at_n.latency_s == at_2.latency_s


# -- crossovers ----------------------------------------------------------------------------------


@st.composite
def linear_pairs(draw: st.DrawFn) -> tuple[str, str, str]:
    collective = draw(st.sampled_from(sorted(c for c, names in LINEAR.items() if len(names) >= 2)))
    a, b = draw(st.permutations(LINEAR[collective]))[:2]
    return collective, a, b


@given(pair=linear_pairs(), p=ranks(hi=1024), link=links())
def test_crossover_of_linear_costs(pair: tuple[str, str, str], p: int, link: LinkParams) -> None:
    collective, a, b = pair
    x = crossover(collective, a, b, p=p, link=link)

    def times(n: Fraction) -> dict[str, Fraction]:
        # the formulas at any n ≥ 0: a crossover (or half of it) may lie below the 1 B users may ask for
        ra = price(collective, a, p=p, n=n, link=link)
        rb = price(collective, b, p=p, n=n, link=link)
        return {ra.algorithm: ra.time_s, rb.algorithm: rb.time_s}

    assert {x.a, x.b} == set(times(F(1)))
    if x.relation == "crossover":
        (point,) = x.crossovers
        n_star = point.n_bytes
        assert point.exact and n_star > 0
        at = times(n_star)
        assert at[x.a] == at[x.b] == point.time_s
        half, double = times(n_star / 2), times(2 * n_star)
        assert x.below is not None and x.above is not None and x.below != x.above
        other = {x.a, x.b} - {x.below}
        assert half[x.below] < half[other.pop()]
        other = {x.a, x.b} - {x.above}
        assert double[x.above] < double[other.pop()]
    elif x.relation == "none":
        assert x.crossovers == ()
        assert x.below == x.above is not None
        loser = ({x.a, x.b} - {x.below}).pop()
        for n in (F(0), F(1), F(10**6), F(2**40)):
            t = times(n)
            assert t[x.below] <= t[loser]
        assert any(times(n)[x.below] < times(n)[loser] for n in (F(0), F(2**40)))
    else:
        assert x.relation == "identical"
        assert (x.crossovers, x.below, x.above) == ((), None, None)
        for n in (F(0), F(7, 3), F(2**40)):
            t = times(n)
            assert t[x.a] == t[x.b]


@given(p=ranks(hi=1024), link=links())
def test_crossover_is_symmetric(p: int, link: LinkParams) -> None:
    ab = crossover("allreduce", "recursive-doubling", "rabenseifner", p=p, link=link)
    ba = crossover("allreduce", "rabenseifner", "recursive-doubling", p=p, link=link)
    assert [c.n_bytes for c in ab.crossovers] == [c.n_bytes for c in ba.crossovers]
    assert (ab.below, ab.above, ab.relation) == (ba.below, ba.above, ba.relation)
    assume(ab.relation == "crossover")
    assert ab.crossovers[0].time_s == ba.crossovers[0].time_s
