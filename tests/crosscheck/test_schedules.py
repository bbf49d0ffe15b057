"""Formulas against schedules: every record's schedule runs correctly and costs what the formula says.

For every record with a schedule, at many p (non-powers of two included): the
schedule is the record the formula uses at that p (or its adaptation); running
it on random data leaves every rank with the right result; and the simulator's
rounds, busiest-rank bytes and time equal the formula's, exactly.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import LinkParams, cost
from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives.evaluate import applicable
from costmodel.errors import ConstraintError
from costmodel.params import LinkSegment, PiecewiseLink, combine_link
from costmodel.schedules import BUILDERS, build, execute, simulate

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11),
                  gamma_s_per_byte=Fraction(1, 10**11))
N = Fraction(10**6 + 7)  # not a multiple of anything: exact fractions of a byte must agree too
RANKS = [*range(2, 65), 100, 1000]
PRIMARY = [a for spec in COLLECTIVES.values() for a in spec.algorithms if a.adapts is None]
SCHEDULED = [a for a in PRIMARY if a.schedule is not None]
IDS = [f"{a.collective}/{a.name}" for a in SCHEDULED]
FOLDED = [a for spec in COLLECTIVES.values() for a in spec.algorithms if a.adapts is not None]
EXTRA_VALUES = (1, 2, 5)


def test_every_record_names_a_schedule_that_exists():
    records = [a for spec in COLLECTIVES.values() for a in spec.algorithms]
    missing = [(a.collective, a.name, a.schedule) for a in records
               if a.schedule is not None and a.schedule not in BUILDERS]
    assert missing == []
    unscheduled = [(a.collective, a.name) for a in records if a.schedule is None and not a.notes]
    assert unscheduled == [], "a record without a schedule must say why in its notes"


def _cases(algo, p):
    try:
        at_p, _ = applicable(algo, p)
    except ConstraintError:
        return []
    if not algo.extra:
        return [(at_p, {})]
    (extra,) = algo.extra
    return [(at_p, {extra.name: k}) for k in EXTRA_VALUES]


@pytest.mark.parametrize("algo", SCHEDULED, ids=IDS)
@pytest.mark.parametrize("p", RANKS)
def test_schedule_matches_formula(algo, p):
    for at_p, extra in _cases(algo, p):
        if algo.schedule not in BUILDERS:
            pytest.fail(f"no builder {algo.schedule!r}")
        options = {"k": extra[next(iter(extra))]} if extra else {}
        schedule = build(algo.schedule, algo.collective, p=p, **options)
        assert schedule.algorithm == at_p.name
        if p <= 100 and (p <= 64 or algo.collective != "alltoall"):
            run = execute(schedule, seed=p)
            assert run.ok, run.problems
        sim = simulate(schedule, n=N, link=LINK)
        formula = cost(algo.collective, algo.name, p=p, n=N, link=LINK, extra=extra)
        assert sim.rounds == formula.rounds
        assert sim.bytes_sent_per_rank == formula.bytes_sent_per_rank
        assert (sim.latency_s, sim.bandwidth_s, sim.compute_s) == (
            formula.latency_s, formula.bandwidth_s, formula.compute_s)
        assert sim.time_s == formula.time_s


@pytest.mark.parametrize("algo", FOLDED, ids=[f"{a.collective}/{a.name}" for a in FOLDED])
def test_folded_records_match_their_schedules_at_every_p(algo):
    """Asked for by name, a -folded record costs what its schedule costs, powers of two included."""
    for p in [*range(2, 34), 64, 100]:
        schedule = build(algo.schedule, algo.collective, p=p)
        run = execute(schedule, seed=p)
        assert run.ok, (p, run.problems)
        sim = simulate(schedule, n=N, link=LINK)
        formula = cost(algo.collective, algo.name, p=p, n=N, link=LINK)
        assert (sim.rounds, sim.bytes_sent_per_rank) == (formula.rounds, formula.bytes_sent_per_rank), p
        assert (sim.latency_s, sim.bandwidth_s, sim.compute_s) == (
            formula.latency_s, formula.bandwidth_s, formula.compute_s), p
        if p & (p - 1) == 0:  # nothing folds: exactly the parent, and the output says so
            assert schedule.algorithm == algo.adapts
            parent = cost(algo.collective, algo.adapts, p=p, n=N, link=LINK)
            assert (formula.time_s, formula.rounds, formula.bytes_sent_per_rank) == (
                parent.time_s, parent.rounds, parent.bytes_sent_per_rank)
            assert any("costs exactly as" in note for note in formula.notes)
        else:
            assert schedule.algorithm == algo.name


@pytest.mark.parametrize(("name", "collective"), [("ring_allreduce", "allreduce")])
def test_large_p(name, collective):
    schedule = build(name, collective, p=1000)
    sim = simulate(schedule, n=N, link=LINK)
    formula = cost(collective, "ring", p=1000, n=N, link=LINK)
    assert (sim.rounds, sim.bytes_sent_per_rank, sim.time_s) == (
        formula.rounds, formula.bytes_sent_per_rank, formula.time_s)


# -- a link whose α, β and γ depend on the message size ------------------------------------------

def _segment(lo: int, alpha: str, beta: str, gamma: str) -> LinkSegment:
    return LinkSegment(from_bytes=Fraction(lo), to_bytes=Fraction(lo),
                       link=combine_link(alpha=alpha, beta=beta, gamma=gamma))


# Messages of 1 kB to 1 MB (n ≈ 1 MB over up to 1000 ranks) fall in every segment: a jump up at 4 KiB,
# a faster regime at 64 KiB that a message of segment 2 is priced as when that is cheaper, and a
# γ that changes too (the reductions' prices have their own envelope).
PIECEWISE = PiecewiseLink(
    segments=(_segment(1, "2us", "1ns/B", "0.1ns/B"), _segment(4096, "9us", "2ns/B", "0.3ns/B"),
              _segment(65536, "20us", "0.05ns/B", "0.01ns/B"), _segment(262144, "30us", "0.2ns/B", "0")),
    summary=LINK, source="piecewise")


@pytest.mark.parametrize("algo", SCHEDULED + FOLDED, ids=IDS + [f"{a.collective}/{a.name}" for a in FOLDED])
def test_piecewise_link_prices_each_round_by_its_message(algo):
    """Every round of the schedule priced by the size of its largest message (the simulator) costs what
    the record's list of messages does (``messages``), at every p: the lists match the schedules."""
    for p in [*range(2, 34), 48, 64, 100]:
        for at_p, extra in _cases(algo, p):
            if algo.adapts is None and at_p is not algo and at_p.adapts != algo.name:
                continue
            options = {"k": extra[next(iter(extra))]} if extra else {}
            schedule = build(algo.schedule, algo.collective, p=p, **options)
            sim = simulate(schedule, n=N, link=PIECEWISE)
            formula = cost(algo.collective, algo.name, p=p, n=N, link=PIECEWISE, extra=extra)
            assert sim.time_s == formula.time_s, (p, extra)
            assert sim.rounds == formula.rounds == sum(m.count for m in formula.messages)
