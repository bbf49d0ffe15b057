"""Piecewise (calibrated) links against brute force: every answer re-derived size by size, exactly.

Links are built by hand from exact α and β.  The reference is the one rule of
:class:`costmodel.params.PiecewiseLink`: the size n is priced by ``link.at(n)``
(segment k from its ``from_bytes`` up to the next one's, the first below its
range, the last above), and an algorithm costs ``time_at(algo, p, n, link.at(n))``
there.  ``crossover``, ``best``, ``cost``, ``compare`` and ``sweep`` must agree
with that at every size looked at: midpoints and both ends of every range,
every segment start ± 1 B, and a dense exact grid from 1 B to 1 GiB.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import combinations, pairwise

import pytest

from costmodel import bound, compare, cost, sweep
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import applicable, price, time_at
from costmodel.crossovers import best, crossover
from costmodel.links import link_from_options
from costmodel.params import LinkParams, LinkSegment, PiecewiseLink

F = Fraction
GIB = 2**30


def _link(alpha: str, beta: str) -> LinkParams:
    return link_from_options(alpha=alpha, beta=beta)


def _piecewise(name: str, *segments: tuple[int, int, str, str]) -> PiecewiseLink:
    built = tuple(LinkSegment(from_bytes=F(lo), to_bytes=F(hi), link=_link(a, b)) for lo, hi, a, b in segments)
    return PiecewiseLink(segments=built, summary=built[0].link, source=name)


# Segment 2 is slower in α and β than segment 1: every cost jumps up at 4 KiB.  The first segment starts
# at 8 B, so it also prices 1..7 B.
JUMP = _piecewise("jump", (8, 2048, "2us", "1ns/B"), (4096, 2**19, "20us", "3ns/B"),
                  (2**20, GIB, "50us", "0.1ns/B"))
# Below 64 KiB the latency-bound algorithms win everywhere (their lines would cross at ~1.9 MB), from
# 64 KiB on the bandwidth-bound ones do (their lines crossed at ~1.9 kB): the winner changes exactly at
# the boundary, where the costs do not meet.
SWITCH = _piecewise("switch", (1, 32768, "10us", "0.01ns/B"), (65536, GIB, "1us", "1ns/B"))
# Two segments, the second faster in β only.
PLAIN = _piecewise("plain", (64, 65536, "5us", "0.5ns/B"), (131072, GIB, "5us", "0.08ns/B"))
LINKS = {"jump": JUMP, "switch": SWITCH, "plain": PLAIN}

ALGORITHMS = {
    "allreduce": ("ring", "recursive-doubling", "rabenseifner", "tree"),
    "broadcast": ("binomial", "pipelined-chain"),  # the chain's segment count is tuned at every n
}
PAIRS = [(c, a, b) for c, names in ALGORITHMS.items() for a, b in combinations(names, 2)]
RANKS = (4, 12, 16)


@cache
def _grid(link_name: str) -> tuple[Fraction, ...]:
    """12 exact sizes per octave from 1 B to 1 GiB, and every segment start ± 1 B."""
    per_octave = 12
    sizes = {F(round(2 ** (k / per_octave) * 1024), 1024) for k in range(30 * per_octave + 1)}
    for s in LINKS[link_name].segments:
        sizes |= {s.from_bytes - 1, s.from_bytes, s.from_bytes + 1}
    return tuple(sorted(x for x in sizes if x > 0))


@cache
def _time(link_name: str, collective: str, algorithm: str, p: int, n: Fraction) -> Fraction:
    """The reference: the algorithm priced with the segment that covers n."""
    link = LINKS[link_name]
    return time_at(resolve(collective, algorithm), p, n, link.at(n))


def _name(collective: str, algorithm: str, p: int) -> str:
    """The name results carry: the algorithm's adaptation when p asks for one (rd at p = 12: folded)."""
    return applicable(resolve(collective, algorithm), p)[0].name


def _starts(link: PiecewiseLink) -> set[Fraction]:
    return {s.from_bytes for s in link.segments[1:]}


def _inside(lo: Fraction, hi: Fraction | None) -> list[Fraction]:
    """The midpoint and points just inside both ends of [lo, hi) (hi None: no end)."""
    if hi is None:
        return [lo + F(1, 10**6), lo + 1, 2 * lo + 1, F(2**40)]
    width = hi - lo
    return [lo + width / 2**20, (lo + hi) / 2, hi - width / 2**20]


def _winner(ta: Fraction, tb: Fraction, a: str, b: str) -> str | None:
    return a if ta < tb else b if tb < ta else None


@pytest.mark.parametrize("link_name", sorted(LINKS))
@pytest.mark.parametrize("p", RANKS)
@pytest.mark.parametrize(("collective", "a", "b"), PAIRS)
def test_crossover_agrees_with_brute_force(collective: str, a: str, b: str, p: int, link_name: str) -> None:
    link = LINKS[link_name]
    x = crossover(collective, a, b, p=p, link=link)
    name_a, name_b = _name(collective, a, p), _name(collective, b, p)
    assert (x.a, x.b) == (name_a, name_b)

    def expected(n: Fraction) -> str | None:
        return _winner(_time(link_name, collective, a, p, n), _time(link_name, collective, b, p, n),
                       name_a, name_b)

    ranges = x.ranges
    # the ranges tile [0, max) with no gap, and neighbours differ (else they would be one range)
    assert ranges[0].from_bytes == 0
    assert all(r.to_bytes == s.from_bytes for r, s in pairwise(ranges))
    assert all(r.cheaper != s.cheaper for r, s in pairwise(ranges))
    assert ranges[-1].to_bytes == x.max_bytes
    assert (x.below, x.above) == (ranges[0].cheaper, ranges[-1].cheaper)
    for r in ranges:
        for n in _inside(r.from_bytes, r.to_bytes):
            assert expected(n) == r.cheaper, (r, n)
    # a point per change of range, at its start
    assert [c.n_bytes for c in x.crossovers] == [r.from_bytes for r in ranges[1:]]
    for c in x.crossovers:
        assert c.exact
        ta, tb = (_time(link_name, collective, algo, p, c.n_bytes) for algo in (a, b))
        assert c.time_s == ta  # the first algorithm's cost at that size, on the segment that prices it
        # a jump is at a segment start, where the costs differ; anywhere else they meet
        assert (ta != tb) == c.segment_boundary, c
        if c.segment_boundary:
            assert c.n_bytes in _starts(link)
    # the dense grid: every size's winner is the one of the range holding it
    points = {c.n_bytes for c in x.crossovers}
    for n in _grid(link_name):
        r = next(r for r in reversed(ranges) if r.from_bytes <= n)
        if n in points and expected(n) is None:
            continue  # the costs meet exactly there
        assert expected(n) == r.cheaper, (n, r)


def test_crossover_jump_sees_every_change() -> None:
    """JUMP at p = 16: rd wins, loses to rab at 64000/17 B, wins again from the 4 KiB boundary (where both
    jump, rd by less), loses again at 640000/51 B; rab keeps the third segment."""
    x = crossover("allreduce", "rd", "rab", p=16, link=JUMP)
    assert [(r.from_bytes, r.cheaper) for r in x.ranges] == [
        (0, "recursive-doubling"), (F(64000, 17), "rabenseifner"), (4096, "recursive-doubling"),
        (F(640000, 51), "rabenseifner")]
    assert [c.segment_boundary for c in x.crossovers] == [False, True, False]
    # 4α + 4nβ = 8α + 1.875nβ with α = 2 µs, β = 1 ns/B: n = 8 µs / 2.125 ns/B
    assert x.crossovers[0].n_bytes == F(8, 10**6) / (F(17, 8) * F(1, 10**9))
    assert x.relation == "crossover" and "without the costs meeting" in x.reason


def test_crossover_switch_changes_only_at_the_boundary() -> None:
    for p in RANKS:
        x = crossover("allreduce", "rd", "rab", p=p, link=SWITCH)
        assert [r.from_bytes for r in x.ranges] == [0, 65536]
        assert [c.segment_boundary for c in x.crossovers] == [True]
        rd, rab = (_time("switch", "allreduce", algo, p, F(65536)) for algo in ("rd", "rab"))
        assert rab < rd  # at the boundary the new winner is already strictly cheaper: no meeting
        before = [_time("switch", "allreduce", algo, p, F(65535)) for algo in ("rd", "rab")]
        assert before[0] < before[1]


# Segment 2's lines of rd and rab (p = 16) cross exactly at its first size, 64 KiB:
# 4·17 µs / (2.125 · 125/256 ns/B) = 65536 B; in segment 1 rd wins everywhere.
MEET = _piecewise("meet", (1, 32768, "10us", "0.001ns/B"), (65536, GIB, "17us", "0.48828125ns/B"))


def test_crossover_meeting_at_a_segment_start_is_not_a_jump() -> None:
    x = crossover("allreduce", "rd", "rab", p=16, link=MEET)
    assert [r.from_bytes for r in x.ranges] == [0, 65536]
    point = x.crossovers[0]
    rd, rab = (time_at(resolve("allreduce", algo), 16, point.n_bytes, MEET.at(point.n_bytes))
               for algo in ("rd", "rab"))
    assert rd == rab == F(49, 250000)
    assert not point.segment_boundary


def test_crossover_range_of_sizes() -> None:
    """--min/--max with a piecewise link: only the segments inside are solved, the ends are kept."""
    x = crossover("allreduce", "rd", "rab", p=16, link=JUMP, min_bytes=3000, max_bytes="1MiB")
    assert (x.min_bytes, x.max_bytes) == (3000, 2**20)
    assert [(r.from_bytes, r.to_bytes, r.cheaper) for r in x.ranges] == [
        (3000, F(64000, 17), "recursive-doubling"), (F(64000, 17), 4096, "rabenseifner"),
        (4096, F(640000, 51), "recursive-doubling"),
        (F(640000, 51), 2**20, "rabenseifner")]
    chain = crossover("broadcast", "binomial", "chain", p=4, link=SWITCH, min_bytes=100, max_bytes="1GiB")
    assert chain.ranges[0].from_bytes == 100 and chain.ranges[-1].to_bytes == GIB
    assert [(r.from_bytes, r.cheaper) for r in chain.ranges] == [(100, "binomial"), (65536, "pipelined-chain")]


BEST = {"allreduce": ["ring", "rd", "rab", "tree"], "broadcast": ["binomial", "chain", "scatter-allgather"]}


@pytest.mark.parametrize("link_name", sorted(LINKS))
@pytest.mark.parametrize("p", RANKS)
@pytest.mark.parametrize("collective", sorted(BEST))
def test_best_agrees_with_brute_force(collective: str, p: int, link_name: str) -> None:
    link = LINKS[link_name]
    names = BEST[collective]
    result = best(collective, names, p=p, link=link, max_bytes=GIB)
    ranges = result.ranges
    assert ranges[0].from_bytes == 1 and ranges[-1].to_bytes == GIB
    assert all(r.to_bytes == s.from_bytes for r, s in pairwise(ranges))
    assert all((r.algorithm, r.tied) != (s.algorithm, s.tied) for r, s in pairwise(ranges))

    def cheapest(n: Fraction) -> list[str]:
        times = [(_time(link_name, collective, a, p, n), _name(collective, a, p)) for a in names]
        low = min(t for t, _ in times)
        return [name for t, name in times if t == low]

    for r in ranges:
        for n in _inside(r.from_bytes, r.to_bytes):
            assert cheapest(n) == [r.algorithm, *r.tied], (r, n)
    cuts = {r.from_bytes for r in ranges[1:]}
    for n in _grid(link_name):
        if n >= GIB:
            continue
        r = next(r for r in reversed(ranges) if r.from_bytes <= n)
        winners = cheapest(n)
        if n in cuts and n not in _starts(link):
            assert r.algorithm in winners and len(winners) > 1, (n, r)  # costs meet at a crossover
        else:
            assert winners == [r.algorithm, *r.tied], (n, r)
    # a cut is a segment start or a size where two costs meet
    for n in cuts - _starts(link):
        assert len(cheapest(n)) > 1


def test_best_switch_at_the_boundary() -> None:
    result = best("allreduce", ["ring", "rd", "rab", "tree"], p=16, link=SWITCH, max_bytes=GIB)
    assert [(r.algorithm, r.from_bytes, r.to_bytes) for r in result.ranges] == [
        ("recursive-doubling", 1, 65536), ("rabenseifner", 65536, GIB)]


SIZES = [1, 7, 8, 63, 64, 4095, 4096, 4097, 65535, 65536, 131071, 131072, 2**20 - 1, 2**20, GIB, 2**40]


@pytest.mark.parametrize("link_name", sorted(LINKS))
def test_cost_compare_bound_use_the_covering_segment(link_name: str) -> None:
    link = LINKS[link_name]
    starts = [s.from_bytes for s in link.segments]
    sizes = sorted({*SIZES, *starts, *(s - 1 for s in starts if s > 1), link.segments[-1].to_bytes * 4})
    for n in sizes:
        k = max(i for i, s in enumerate(link.segments) if i == 0 or n >= s.from_bytes)
        segment = link.segments[k].link
        for algorithm in ("ring", "rab", "double-binary-tree"):
            c = cost("allreduce", algorithm, p=16, n=n, link=link)
            assert c.time_s == time_at(resolve("allreduce", algorithm), 16, n, segment)
            assert c == price("allreduce", algorithm, p=16, n=n, link=segment)  # the terms, the tuned k
        table = compare("allreduce", ["ring", "rd", "rab", "tree"], p=12, n=n, link=link)
        assert (table.link.alpha_s, table.link.beta_s_per_byte) == (segment.alpha_s, segment.beta_s_per_byte)
        assert f"segment {k + 1} of {len(link.segments)}" in table.link.source
        data = table.to_dict()
        assert (data["alpha_s"], data["beta_s_per_byte"]) == (float(segment.alpha_s), float(segment.beta_s_per_byte))
        assert f"segment {k + 1} of" in data["link_source"]
        for r in table.results:
            assert r.time_s == time_at(resolve("allreduce", r.algorithm), 12, n, segment)
        expected = min(time_at(resolve("allreduce", a), 12, n, segment) for a in ("ring", "rd", "rab", "tree"))
        assert table.results[0].time_s == expected
        lower, plain = bound("allreduce", p=12, n=n, link=link), bound("allreduce", p=12, n=n, link=segment)
        assert (lower.latency_s, lower.bandwidth_s) == (plain.latency_s, plain.bandwidth_s)
        assert (table.bound.latency_s, table.bound.bandwidth_s) == (plain.latency_s, plain.bandwidth_s)


def test_cost_jumps_up_at_a_slower_segment() -> None:
    """JUMP's second segment is slower: 4 KiB costs more than 4095 B, by exactly the two lines' gap."""
    ring = resolve("allreduce", "ring")
    below = cost("allreduce", "ring", p=4, n=4095, link=JUMP).time_s
    at = cost("allreduce", "ring", p=4, n=4096, link=JUMP).time_s
    # ring at p = 4: 6α + 1.5·n·β
    assert below == 6 * F(2, 10**6) + F(3, 2) * 4095 * F(1, 10**9)
    assert at == 6 * F(20, 10**6) + F(3, 2) * 4096 * F(3, 10**9)
    assert at > below
    assert at == time_at(ring, 4, 4096, JUMP.segments[1].link)


@pytest.mark.parametrize("link_name", sorted(LINKS))
def test_sweep_prices_each_cell_with_its_segment(link_name: str) -> None:
    link = LINKS[link_name]
    ranks = [16, 4, 12]
    sizes = [70000, 1, 4096, 4095, 65536, 65535, 4096, 2**21, 0, 131072, 65536, 10**12]  # unordered, repeated
    for collective, names in (("allreduce", ["ring", "rd", "rab", "tree"]), ("broadcast", ["binomial", "chain"])):
        df = sweep(collective, names, p=ranks, n=sizes, link=link)
        assert [(int(p), float(n)) for p, n in df.index] == [(p, float(n)) for p in ranks for n in sizes]
        for (p, n), row in zip(df.index, df.itertuples(index=False), strict=True):
            size = F(int(n))
            for algorithm, value in zip(names, row, strict=True):
                expected = float(time_at(resolve(collective, algorithm), int(p), size, link.at(size)))
                assert value == pytest.approx(expected, rel=1e-12, abs=0), (collective, algorithm, p, n)
        assert df.attrs["link_segments"] == [s.to_dict() for s in link.segments]
        assert df.attrs["alpha_s"] == float(link.summary.alpha_s)


def test_with_options_replaces_alpha_in_every_segment() -> None:
    changed = JUMP.with_options(alpha=F(0))
    assert [s.link.alpha_s for s in changed.segments] == [0, 0, 0]
    assert [s.link.beta_s_per_byte for s in changed.segments] == [s.link.beta_s_per_byte for s in JUMP.segments]
    assert [(s.from_bytes, s.to_bytes) for s in changed.segments] == [(s.from_bytes, s.to_bytes)
                                                                    for s in JUMP.segments]
    assert changed.summary.alpha_s == 0 and changed.summary.beta_s_per_byte == JUMP.summary.beta_s_per_byte
    assert changed.source == "jump with options"
    assert all(s.link.source.endswith("with options") for s in changed.segments)
    assert JUMP.with_options() is JUMP
    beta = JUMP.with_options(beta=F(1, 10**10))
    assert [s.link.beta_s_per_byte for s in beta.segments] == [F(1, 10**10)] * 3
    assert [s.link.alpha_s for s in beta.segments] == [s.link.alpha_s for s in JUMP.segments]
    # with α = 0 the costs are β-only in every segment: ring vs rab at p = 16 cost the same bytes
    x = crossover("allreduce", "ring", "rab", p=16, link=changed)
    assert x.relation == "identical"
    c = cost("allreduce", "ring", p=4, n=4096, link=changed)
    assert c.time_s == F(3, 2) * 4096 * F(3, 10**9)
