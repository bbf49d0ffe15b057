"""Whole-byte chunks: the formula's ``whole_bytes`` pricing against schedules cut into whole bytes.

The simulator, given ``whole_bytes=True``, cuts n into the schedule's units as a real
implementation does (the first n mod u chunks one byte larger) and lets each step last as
long as its largest message.  The formula prices every chunk at the largest, ⌈n/u⌉, so it
must bound the simulation from above, equal it where n splits evenly, and equal the
continuous simulation of u·⌈n/u⌉ bytes exactly.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import LinkParams, cost
from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives.evaluate import applicable
from costmodel.errors import ConstraintError, InputError
from costmodel.schedules import build, simulate

ALPHA, BETA, GAMMA = Fraction(5, 10**6), Fraction(8, 10**11), Fraction(1, 10**11)
LINK = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA, gamma_s_per_byte=GAMMA)
RECORDS = [a for spec in COLLECTIVES.values() for a in spec.algorithms if a.schedule is not None]
IDS = [f"{a.collective}/{a.name}" for a in RECORDS]
SIZES = (7, 1000, 1001, 65537)


def _cases(algo, p):
    try:
        applicable(algo, p)
    except ConstraintError:
        return []
    if not algo.extra:
        return [{}]
    (extra,) = algo.extra
    return [{extra.name: k} for k in (1, 2, 3)]


def test_ring_p3_n7_moves_12_bytes_per_rank():
    # 2(p − 1) = 4 steps, each sending one chunk of at most ⌈7/3⌉ = 3 B: 2·2·3 = 12 B, not 28/3
    whole = cost("allreduce", "ring", p=3, n=7, link=LINK, whole_bytes=True)
    assert whole.bytes_sent_per_rank == 12
    assert whole.bandwidth_s == 12 * BETA
    assert whole.latency_s == 4 * ALPHA
    assert whole.compute_s == 2 * 3 * GAMMA  # the reduce-scatter's 2 steps reduce a 3-byte chunk each
    assert (whole.chunks, whole.chunk_bytes) == (3, 3)
    assert cost("allreduce", "ring", p=3, n=7, link=LINK).bytes_sent_per_rank == Fraction(28, 3)
    # the schedule with chunks of 3, 2 and 2 bytes: every step someone sends the 3-byte chunk
    sim = simulate(build("ring_allreduce", "allreduce", p=3), n=7, link=LINK, whole_bytes=True)
    assert sim.bandwidth_s == 12 * BETA
    assert sorted(sim.bytes_sent) == [9, 9, 10]  # rank by rank below the bound of 12


def test_even_sizes_change_nothing():
    for name in ("ring", "rabenseifner", "recursive-doubling"):
        a = cost("allreduce", name, p=8, n=1024, link=LINK)
        b = cost("allreduce", name, p=8, n=1024, link=LINK, whole_bytes=True)
        assert (a.time_s, a.bytes_sent_per_rank) == (b.time_s, b.bytes_sent_per_rank)
        assert not any("split evenly" in note for note in a.notes + b.notes)


def test_uneven_sizes_are_noted():
    result = cost("allreduce", "ring", p=3, n=7, link=LINK)
    (note,) = [x for x in result.notes if "split evenly" in x]
    assert "⌈n/p⌉ = 3 B" in note and "whole_bytes=True" in note
    chain = cost("broadcast", "pipelined-chain", p=4, n=10, link=LINK, extra={"segments": 4})
    assert any("k = 4 chunks of up to ⌈n/k⌉ = 3 B" in x for x in chain.notes)
    dbt = cost("allreduce", "double-binary-tree", p=8, n=10, link=LINK, extra={"blocks": 2})
    assert any("2·k = 4 chunks of up to ⌈n/(2·k)⌉ = 3 B" in x for x in dbt.notes)


def test_whole_bytes_needs_whole_bytes():
    with pytest.raises(InputError, match="not a whole number of bytes"):
        cost("allreduce", "ring", p=3, n=Fraction(15, 2), link=LINK, whole_bytes=True)


@pytest.mark.parametrize("n", [0, Fraction(1, 2), "0B", "0.999B"])
def test_sizes_below_one_byte_are_refused(n):
    from costmodel import bound, compare

    for call in (lambda: cost("allreduce", "ring", p=4, n=n, link=LINK),
                 lambda: compare("allreduce", p=4, n=n, link=LINK),
                 lambda: bound("allreduce", p=4, n=n, link=LINK)):
        with pytest.raises(InputError, match="at least 1 B"):
            call()


@pytest.mark.parametrize("algo", RECORDS, ids=IDS)
def test_chunks_are_the_schedules_units(algo):
    for p in range(2, 34):
        for extra in _cases(algo, p):
            options = {"k": next(iter(extra.values()))} if extra else {}
            schedule = build(algo.schedule, algo.collective, p=p, **options)
            assert cost(algo.collective, algo.name, p=p, n=1000, link=LINK, extra=extra).chunks == schedule.units


@pytest.mark.parametrize("algo", RECORDS, ids=IDS)
def test_whole_bytes_bound_the_schedules(algo):
    for p in range(2, 34):
        for extra in _cases(algo, p):
            options = {"k": next(iter(extra.values()))} if extra else {}
            schedule = build(algo.schedule, algo.collective, p=p, **options)
            u = schedule.units
            for n in SIZES:
                formula = cost(algo.collective, algo.name, p=p, n=n, link=LINK, extra=extra, whole_bytes=True)
                real = simulate(schedule, n=n, link=LINK, whole_bytes=True)
                assert real.rounds == formula.rounds
                assert real.latency_s == formula.latency_s
                assert real.time_s <= formula.time_s, (p, n)
                assert real.bytes_sent_per_rank <= formula.bytes_sent_per_rank, (p, n)
                # every chunk at ⌈n/u⌉: the continuous schedule of u·⌈n/u⌉ bytes, term by term
                padded = simulate(schedule, n=u * -(-n // u), link=LINK)
                assert (padded.bandwidth_s, padded.compute_s, padded.bytes_sent_per_rank) == (
                    formula.bandwidth_s, formula.compute_s, formula.bytes_sent_per_rank), (p, n)
                if n % u == 0:
                    assert (real.time_s, real.bytes_sent_per_rank) == (formula.time_s,
                                                                       formula.bytes_sent_per_rank)
