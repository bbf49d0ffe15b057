"""Piecewise (calibrated) links against brute force: every answer re-derived size by size, exactly.

Links are built by hand from exact α and β, their segments in message sizes.
The reference is the rule of :class:`costmodel.params.PiecewiseLink`, written
out here without its envelope code: a message of m bytes costs the least of
its own segment's line at m and every later segment's line at that segment's
first size (segment k covers m from its ``from_bytes`` up to the next one's,
the first below its range, the last above), and an algorithm costs the sum
over its messages (:func:`costmodel.collectives.piecewise.messages`, checked
against the schedules in ``test_schedules.py``).  ``crossover``, ``best``,
``cost``, ``compare`` and ``sweep`` must agree with that at every size looked
at: midpoints and both ends of every range, every size where a message
reaches a segment ± 1 B, and a dense exact grid from 1 B to 1 GiB.  A tuned
cost (the chain's segments) is priced by ``time_at`` here, and its tuning is
checked against every k on its own.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import combinations, pairwise

import pytest

from costmodel import bound, compare, cost, sweep
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import applicable, time_at
from costmodel.collectives.piecewise import messages
from costmodel.crossovers import best, crossover
from costmodel.links import link_from_options
from costmodel.params import LinkParams, LinkSegment, PiecewiseLink

F = Fraction
GIB = 2**30
US, NS = F(1, 10**6), F(1, 10**9)


def _link(alpha: str, beta: str) -> LinkParams:
    return link_from_options(alpha=alpha, beta=beta)


def _piecewise(name: str, *segments: tuple[int, int, str, str]) -> PiecewiseLink:
    built = tuple(LinkSegment(from_bytes=F(lo), to_bytes=F(hi), link=_link(a, b)) for lo, hi, a, b in segments)
    return PiecewiseLink(segments=built, summary=built[0].link, source=name)


# Segment 2 is slower in α and β than segment 1: every message jumps up at 4 KiB.  Segment 3 is
# faster per byte: from 674288/15 B ≈ 44.95 kB a message of segment 2 is priced as one of 1 MiB on
# segment 3 (20 µs + 3 ns/B·m reaches 50 µs + 1 MiB·0.1 ns/B there).  The first segment also
# prices 1..7 B.
JUMP = _piecewise("jump", (8, 2048, "2us", "1ns/B"), (4096, 2**19, "20us", "3ns/B"),
                  (2**20, GIB, "50us", "0.1ns/B"))
# Small messages are cheap per start-up and nearly free per byte, large ones the reverse: the
# latency-bound algorithms win until their messages reach 64 KiB, then pay 1 ns/B.
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


def _price(link: PiecewiseLink, m: Fraction, reduce: bool) -> Fraction:
    """One message of m bytes: the cheapest of its own segment's line at m and each later segment's line
    at its first size."""
    segments = link.segments
    own = max(i for i, s in enumerate(segments) if i == 0 or m >= s.from_bytes)

    def line(j: int, x: Fraction) -> Fraction:
        s = segments[j].link
        return s.alpha_s + (s.beta_s_per_byte + (s.gamma_s_per_byte if reduce else 0)) * x

    return min([line(own, m), *(line(j, segments[j].from_bytes) for j in range(own + 1, len(segments)))])


def _record(collective: str, algorithm: str, p: int):
    return applicable(resolve(collective, algorithm), p)[0]


@cache
def _time(link_name: str, collective: str, algorithm: str, p: int, n: Fraction) -> Fraction:
    """The reference: every message priced on its own (``time_at`` for a tuned cost)."""
    link = LINKS[link_name]
    algo = _record(collective, algorithm, p)
    if algo.extra:
        return time_at(algo, p, n, link)
    return sum((m.count * _price(link, m.share * n, m.reduce) for m in messages(algo, p)), F(0))


def _name(collective: str, algorithm: str, p: int) -> str:
    """The name results carry: the algorithm's adaptation when p asks for one (rd at p = 12: folded)."""
    return _record(collective, algorithm, p).name


def _reaches(link: PiecewiseLink, collective: str, names: tuple[str, ...] | list[str], p: int) -> set[Fraction]:
    """The sizes n where a message of one of the (untuned) algorithms is the first size of a segment."""
    out = set()
    for name in names:
        algo = _record(collective, name, p)
        if algo.extra:
            continue
        for m in messages(algo, p):
            out |= {s.from_bytes / m.share for s in link.segments[1:]}
    return out


def _grid(link_name: str, collective: str, names: tuple[str, ...] | list[str], p: int) -> tuple[Fraction, ...]:
    """12 exact sizes per octave from 1 B to 1 GiB, and every size where a message reaches a segment ± 1 B."""
    per_octave = 12
    sizes = {F(round(2 ** (k / per_octave) * 1024), 1024) for k in range(30 * per_octave + 1)}
    for n in _reaches(LINKS[link_name], collective, names, p):
        sizes |= {n - 1, n, n + 1}
    return tuple(sorted(x for x in sizes if 0 < x <= GIB))


def _inside(lo: Fraction, hi: Fraction | None) -> list[Fraction]:
    """The midpoint and points just inside both ends of [lo, hi) (hi None: no end)."""
    if hi is None:
        return [lo + F(1, 10**6), lo + 1, 2 * lo + 1, F(2**40)]
    width = hi - lo
    return [lo + width / 2**20, (lo + hi) / 2, hi - width / 2**20]


def _winner(ta: Fraction, tb: Fraction, a: str, b: str) -> str | None:
    return a if ta < tb else b if tb < ta else None


def test_the_reference_envelope_by_hand() -> None:
    """JUMP's prices written out: segment 1's line up to 4 KiB, segment 2's up to 674288/15 B, then
    1 MiB's on segment 3."""
    cut = F(674288, 15)  # (50 µs + 1 MiB·0.1 ns/B − 20 µs) / 3 ns/B
    assert _price(JUMP, F(1000), False) == 2 * US + 1000 * NS
    assert _price(JUMP, F(4096), False) == 20 * US + 4096 * 3 * NS
    assert _price(JUMP, cut, False) == 20 * US + cut * 3 * NS == 50 * US + 2**20 * NS / 10
    assert _price(JUMP, F(100000), False) == 50 * US + 2**20 * NS / 10
    assert _price(JUMP, F(2**21), False) == 50 * US + 2**21 * NS / 10
    piece = JUMP.message(F(100000))
    assert (piece.from_bytes, piece.to_bytes, piece.segment, piece.padded_bytes) == (cut, 2**20, 2, 2**20)
    assert [(x.from_bytes, x.segment, x.padded_bytes) for x in JUMP.envelope()] == [
        (0, 0, None), (4096, 1, None), (cut, 2, 2**20), (2**20, 2, None)]


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
    reaches = _reaches(link, collective, (a, b), p)
    for c in x.crossovers:
        assert c.exact
        ta, tb = (_time(link_name, collective, algo, p, c.n_bytes) for algo in (a, b))
        assert (c.time_s, c.b_time_s) == (ta, tb)  # both costs at that size
        # a switch is where a cost jumps, the costs differing; anywhere else they meet
        assert (ta != tb) == c.segment_boundary, c
        if c.segment_boundary:
            assert c.n_bytes in reaches or any(_record(collective, y, p).extra for y in (a, b))
            below = tuple(time_at(resolve(collective, y), p, c.n_bytes, link, below=True) for y in (a, b))
            assert c.below_s == below
            # just below, the other order: the one cheaper from here on was not cheaper there
            near = c.n_bytes - F(1, 10**9)
            assert _winner(*(_time(link_name, collective, y, p, near) for y in (a, b)), name_a, name_b) != \
                _winner(ta, tb, name_a, name_b)
        else:
            assert c.below_s is None
    # the dense grid: every size's winner is the one of the range holding it
    points = {c.n_bytes for c in x.crossovers}
    for n in _grid(link_name, collective, (a, b), p):
        r = next(r for r in reversed(ranges) if r.from_bytes <= n)
        if n in points and expected(n) is None:
            continue  # the costs meet exactly there
        assert expected(n) == r.cheaper, (n, r)


def test_crossover_switch_reports_both_sides_exactly() -> None:
    """SWITCH at p = 16: rd's messages (n) reach segment 2 at 64 KiB, rab's largest (n/2) at 128 KiB.

    rd: 4α + 4nβ; rab at n = 64 KiB: two messages each of 32, 16, 8 and 4 KiB, all on segment 1:
    8α + 2(1 − 1/16)·n·β.  Just below 64 KiB rd is cheaper (4·10 µs + 4·64 KiB·0.01 ns/B), at it
    rd pays 4·1 µs + 4·64 KiB·1 ns/B = 266.144 µs and rab 80 µs + 1.875·64 KiB·0.01 ns/B.
    """
    x = crossover("allreduce", "rd", "rab", p=16, link=SWITCH)
    n = F(65536)
    first = x.crossovers[0]
    assert (first.n_bytes, first.segment_boundary) == (n, True)
    rd_below = 4 * 10 * US + 4 * n * NS / 100
    rab = 8 * 10 * US + F(15, 8) * n * NS / 100
    assert first.below_s == (rd_below, rab)
    assert (first.time_s, first.b_time_s) == (4 * US + 4 * n * NS, rab)
    assert rd_below < rab < first.time_s
    assert [r.cheaper for r in x.ranges][:2] == ["recursive-doubling", "rabenseifner"]
    data = first.to_dict()
    assert data["a_below_s"] == float(rd_below) and data["b_below_s"] == float(rab)
    assert data["b_time_s"] == float(rab) and data["segment_boundary"] is True
    assert "switches without the costs meeting" in x.reason


# Segment 2's lines of rd and ring (p = 16, messages n and n/16) meet exactly where rd's messages
# reach segment 2 (64 KiB), with ring's still on segment 1: a meeting, not a switch.
# rd: 4·1 µs + 4·n·β₂; ring: 30·5 µs + 30·n/16·0.001 ns/B; at n = 65536: 4 µs + 262144·β₂ = 150 µs + 122.88 ns.
MEET = _piecewise("meet", (1, 32768, "5us", "0.001ns/B"), (65536, GIB, "1us", F(146122880, 262144 * 10**12)))


def test_crossover_meeting_at_a_segment_start_is_not_a_switch() -> None:
    x = crossover("allreduce", "rd", "ring", p=16, link=MEET)
    point = x.crossovers[0]
    assert point.n_bytes == 65536
    rd = time_at(resolve("allreduce", "rd"), 16, point.n_bytes, MEET)
    ring = time_at(resolve("allreduce", "ring"), 16, point.n_bytes, MEET)
    assert rd == ring == 150 * US + F(12288, 10**11)
    assert not point.segment_boundary and point.below_s is None


def test_crossover_range_of_sizes() -> None:
    """min/max with a piecewise link: only the sizes inside are solved, the ends are kept."""
    x = crossover("allreduce", "rd", "rab", p=16, link=JUMP, min_bytes=3000, max_bytes="1MiB")
    assert (x.min_bytes, x.max_bytes) == (3000, 2**20)
    full = crossover("allreduce", "rd", "rab", p=16, link=JUMP)
    inside = [(r.from_bytes, r.cheaper) for r in full.ranges if 3000 < r.from_bytes < 2**20]
    assert [(r.from_bytes, r.cheaper) for r in x.ranges][1:] == inside
    assert x.ranges[0].from_bytes == 3000 and x.ranges[-1].to_bytes == 2**20
    chain = crossover("broadcast", "binomial", "chain", p=4, link=SWITCH, min_bytes=100, max_bytes="1GiB")
    assert chain.ranges[0].from_bytes == 100 and chain.ranges[-1].to_bytes == GIB


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
    reaches = _reaches(link, collective, names, p)
    for n in _grid(link_name, collective, names, p):
        if n >= GIB:
            continue
        r = next(r for r in reversed(ranges) if r.from_bytes <= n)
        winners = cheapest(n)
        if n in cuts and n not in reaches:
            assert r.algorithm in winners and len(winners) > 1, (n, r)  # costs meet at a crossover
        else:
            assert winners == [r.algorithm, *r.tied], (n, r)
    # a cut is where a message reaches a segment (or a tuned cost overtakes), or where two costs meet
    tuned = any(_record(collective, a, p).extra for a in names)
    for n in cuts - reaches:
        assert tuned or len(cheapest(n)) > 1


def test_best_switch_where_rd_reaches_segment_2() -> None:
    """SWITCH at p = 16: rd wins until its messages (n) reach segment 2 at 64 KiB, where it jumps."""
    result = best("allreduce", ["ring", "rd", "rab", "tree"], p=16, link=SWITCH, max_bytes=GIB)
    assert (result.ranges[0].algorithm, result.ranges[0].to_bytes) == ("recursive-doubling", 65536)
    assert result.ranges[1].algorithm == "rabenseifner"
    assert any(note.startswith("the cheapest changes at 65.54 kB") and "without the costs meeting" in note
               for note in result.notes)


SIZES = [1, 7, 8, 63, 64, 4095, 4096, 4097, 65535, 65536, 131071, 131072, 2**20 - 1, 2**20, GIB, 2**40]


@pytest.mark.parametrize("link_name", sorted(LINKS))
def test_cost_compare_bound_price_every_message(link_name: str) -> None:
    link = LINKS[link_name]
    starts = [s.from_bytes for s in link.segments]
    sizes = sorted({*SIZES, *starts, *(s - 1 for s in starts if s > 1), link.segments[-1].to_bytes * 4})
    lowest = LinkParams(alpha_s=min(s.link.alpha_s for s in link.segments),
                        beta_s_per_byte=min(s.link.beta_s_per_byte for s in link.segments))
    for n in map(F, sizes):
        for algorithm in ("ring", "rab", "rd"):
            c = cost("allreduce", algorithm, p=16, n=n, link=link)
            assert c.time_s == _time(link_name, "allreduce", algorithm, 16, n)
            assert sum(m.count for m in c.messages) == c.rounds
            assert sum(m.count * m.message_bytes for m in c.messages) == c.bytes_sent_per_rank
        table = compare("allreduce", ["ring", "rd", "rab", "tree"], p=12, n=n, link=link)
        assert table.link == link
        data = table.to_dict()
        assert data["link_segments_by"] == "message" and len(data["link_segments"]) == len(link.segments)
        for r in table.results:
            assert r.time_s == _time(link_name, "allreduce", r.algorithm, 12, n)
        assert table.results[0].time_s == min(_time(link_name, "allreduce", a, 12, n)
                                              for a in ("ring", "rd", "rab", "tree"))
        # the bound takes the smallest α and β of the segments: every message costs at least that
        lower, plain = bound("allreduce", p=12, n=n, link=link), bound("allreduce", p=12, n=n, link=lowest)
        assert (lower.latency_s, lower.bandwidth_s) == (plain.latency_s, plain.bandwidth_s)
        assert (table.bound.latency_s, table.bound.bandwidth_s) == (plain.latency_s, plain.bandwidth_s)
        assert all(r.time_s >= lower.time_s for r in table.results)


def test_cost_jumps_up_where_a_message_reaches_a_slower_segment() -> None:
    """JUMP at p = 4: the ring's messages (n/4) reach segment 2 at n = 16 KiB; 16 KiB costs more than
    16383 B, by exactly the two lines' gap, and a note gives both."""
    below = cost("allreduce", "ring", p=4, n=16383, link=JUMP)
    at = cost("allreduce", "ring", p=4, n=16384, link=JUMP)
    # ring at p = 4: 6 messages of n/4
    assert below.time_s == 6 * (2 * US + F(16383, 4) * NS)
    assert at.time_s == 6 * (20 * US + 4096 * 3 * NS)
    assert at.time_s > below.time_s
    note = next(note for note in at.notes if "segment boundary" in note)
    assert note == ("ring: n = 16.38 kB sits on a segment boundary (its messages of 4.096 kB start segment 2): "
                    "just below n it costs 36.58 µs, at n 193.7 µs")
    assert time_at(resolve("allreduce", "ring"), 4, 16384, JUMP, below=True) == 6 * (2 * US + 4096 * NS)
    assert not any("segment boundary" in note for note in below.notes)
    assert "ring: 6 messages of 4.096 kB on segment 2" in at.notes


@pytest.mark.parametrize("link_name", sorted(LINKS))
@pytest.mark.parametrize(("collective", "algorithm", "p"), [("broadcast", "chain", 4), ("allreduce", "dbt", 16)])
def test_tuning_finds_the_best_k(link_name: str, collective: str, algorithm: str, p: int) -> None:
    """The tuned parameter is the best of every k the size allows, each priced message by message."""
    link = LINKS[link_name]
    algo = _record(collective, algorithm, p)
    (extra,) = algo.extra
    for n in map(F, (3, 100, 4095, 4096, 20000, 65536, 131072, 10**6, 2**22)):
        upper = min(int(extra.upper(p, n)), 3000)

        def priced(k: int, n: Fraction = n) -> Fraction:
            return sum((m.count * _price(link, m.share * n, m.reduce)
                        for m in messages(algo, p, {extra.symbol: F(k)})), F(0))

        brute = min(range(1, upper + 1), key=lambda k: (priced(k), k))
        c = cost(collective, algorithm, p=p, n=n, link=link)
        assert c.time_s == priced(brute), (n, c.parameters, brute)
        assert c.parameters[extra.name] == brute


@pytest.mark.parametrize("link_name", sorted(LINKS))
def test_sweep_prices_every_message(link_name: str) -> None:
    link = LINKS[link_name]
    ranks = [16, 4, 12]
    sizes = [70000, 1, 4096, 4095, 65536, 65535, 4096, 2**21, 0, 131072, 65536, 10**12]  # unordered, repeated
    for collective, names in (("allreduce", ["ring", "rd", "rab", "tree"]), ("broadcast", ["binomial", "chain"])):
        df = sweep(collective, names, p=ranks, n=sizes, link=link)
        assert [(int(p), float(n)) for p, n in df.index] == [(p, float(n)) for p in ranks for n in sizes]
        for (p, n), row in zip(df.index, df.itertuples(index=False), strict=True):
            size = F(int(n))
            for algorithm, value in zip(names, row, strict=True):
                expected = float(_time(link_name, collective, algorithm, int(p), size))
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
    # with one α and β in every segment the link is one line: ring and rab at p = 16 send the same bytes
    flat = JUMP.with_options(alpha=F(0), beta=F(1, 10**10))
    x = crossover("allreduce", "ring", "rab", p=16, link=flat)
    assert x.relation == "identical"
    c = cost("allreduce", "ring", p=4, n=4096, link=changed)
    assert c.time_s == 6 * 1024 * NS  # six messages of 1 KiB, on segment 1 at α = 0
