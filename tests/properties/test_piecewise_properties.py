"""Properties of pricing on piecewise links: a message, and so a collective, never costs less when larger.

Random piecewise links (1–4 segments of message sizes, each with its own exact
α, β and γ, later ones faster or slower at random), and random calibrated ones
(segments of collective sizes fitted on an algorithm whose messages have one
size, placed by it); every registered algorithm of every collective, at random
p and pairs of sizes.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from costmodel import bound, cost
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import time_at
from costmodel.params import FittedOn, LinkParams, LinkSegment, PiecewiseLink
from tests.strategies import PAIR_IDS, PAIRS, costs_at_two_sizes, links, ranks, runs, sizes

F = Fraction

PER_ALGORITHM = settings(max_examples=30)


@st.composite
def piecewise_links(draw: st.DrawFn) -> PiecewiseLink:
    """1–4 segments of message sizes from 1 B to 1 GiB, each with a random α, β, γ."""
    count = draw(st.integers(1, 4))
    starts = sorted(draw(st.sets(st.integers(1, 2**30), min_size=count, max_size=count)))
    params = draw(st.lists(links(), min_size=count, max_size=count))
    segments = tuple(LinkSegment(from_bytes=F(lo), to_bytes=F(lo), link=link)
                     for lo, link in zip(starts, params, strict=True))
    return PiecewiseLink(segments=segments, summary=params[0], source="random")


# ring all-reduce at p = 8 (messages n/8), recursive doubling (n), ring all-gather at p = 5 (n/5)
FITS = [("allreduce", "ring", 8, F(14), F(7, 4)), ("allreduce", "recursive-doubling", 16, F(4), F(4)),
        ("allgather", "ring", 5, F(4), F(4, 5))]


@st.composite
def calibrated_links(draw: st.DrawFn) -> PiecewiseLink:
    """A link as a calibrated profile gives it: segments of collective sizes, fitted on one algorithm."""
    link = draw(piecewise_links())
    collective, algorithm, p, a, b = draw(st.sampled_from(FITS))
    fitted = FittedOn(collective=collective, algorithm=algorithm, p=p, latency_coefficient=a,
                      bandwidth_coefficient=b)
    return PiecewiseLink(segments=link.segments, summary=link.summary, source="fitted", sizes="n", fitted=fitted)


ANY_LINK = st.one_of(piecewise_links(), calibrated_links())


def _brute(link: PiecewiseLink, m: Fraction, reduce: bool) -> Fraction:
    """A message of m bytes: the least of its segment's line at m and each later segment's at its start."""
    segments = link.segments
    own = max(i for i, s in enumerate(segments) if i == 0 or m >= s.from_bytes)

    def line(j: int, x: Fraction) -> Fraction:
        s = segments[j].link
        return s.alpha_s + (s.beta_s_per_byte + (s.gamma_s_per_byte if reduce else 0)) * x

    return min([line(own, m), *(line(j, segments[j].from_bytes) for j in range(own + 1, len(segments)))])


@given(link=piecewise_links(), ms=st.lists(sizes(hi=2**31), min_size=2, max_size=6), reduce=st.booleans())
def test_a_message_never_costs_less_when_larger(link: PiecewiseLink, ms: list, reduce: bool) -> None:
    """The envelope is the brute-force rule, and it is non-decreasing (its limits from below too)."""
    prices = []
    for m in sorted(map(F, ms)):
        piece = link.message(m, reduce=reduce)
        price = sum(piece.terms(m, reduce=reduce), F(0))
        assert price == _brute(link, m, reduce)
        below = sum(link.message(m, reduce=reduce, below=True).terms(m, reduce=reduce), F(0))
        assert below <= price
        prices.append(price)
    assert prices == sorted(prices)


@pytest.mark.parametrize(("collective", "algorithm"), PAIRS, ids=PAIR_IDS)
@PER_ALGORITHM
@given(p=ranks(hi=1024), ns=st.tuples(sizes(), sizes()), link=ANY_LINK)
@example(p=8, ns=(256 * 1024, 511 * 1024), link=PiecewiseLink(
    segments=(LinkSegment(from_bytes=F(8), to_bytes=F(262144), link=LinkParams(alpha_s=F(2, 10**6),
                                                                                beta_s_per_byte=F(8, 10**11))),
              LinkSegment(from_bytes=F(524288), to_bytes=F(2**30), link=LinkParams(
                  alpha_s=F(5, 10**6), beta_s_per_byte=F(5, 10**12)))),
    summary=LinkParams(alpha_s=F(2, 10**6), beta_s_per_byte=F(5, 10**12)), source="ring fit", sizes="n",
    fitted=FittedOn(collective="allreduce", algorithm="ring", p=8, latency_coefficient=F(14),
                    bandwidth_coefficient=F(7, 4))))
def test_a_larger_collective_never_costs_less(
    collective: str, algorithm: str, p: int, ns: tuple, link: PiecewiseLink
) -> None:
    assume(runs(collective, algorithm, p))
    small, large = sorted(map(F, ns))
    t_small, t_large = costs_at_two_sizes(collective, algorithm, p, (small, large), link)
    assert t_small.time_s <= t_large.time_s, (t_small.parameters, t_large.parameters)
    # just below the larger size it costs no more than at it (with the same parameters)
    fixed = t_large.parameters
    below = time_at(resolve(collective, algorithm), p, large, link, fixed, below=True)
    assert below <= cost(collective, algorithm, p=p, n=large, link=link, extra=fixed).time_s
    lower = bound(collective, p=p, n=large, link=link)
    assert t_large.time_s >= lower.time_s
