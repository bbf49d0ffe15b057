"""Hierarchical compositions against their explicit schedules, simulated level by level.

For each topology, the schedule of ``costmodel.schedules.hierarchical`` runs on random data
(the executor checks every rank ends with the sum), and ``simulate(schedule, levels=...,
level_of=topology.level_of)`` must equal the composed cost of
``costmodel.collectives.hierarchical`` exactly: rounds, time and its α/β/γ parts, the bytes
crossing each level, and the busiest rank's bytes.  The flat ring on a topology is checked
against the simulated flat ring schedule the same way, and the bytes every outer record moves
(all ranks together) against the simulated schedules of the flat records.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import Level, LinkParams, Topology, flat_ring, hierarchical_cost, rack_aware, resolve
from costmodel.schedules import BUILDERS, build, execute, simulate
from costmodel.schedules.hierarchical import hierarchical_allreduce, reduce_bcast_allreduce
from costmodel.schedules.ring import ring_allreduce

F = Fraction
# three levels of links, each slower to start and to move bytes than the one inside it, with γ
LINKS = (
    LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 100), gamma_s_per_byte=F(1, 1000)),
    LinkParams(alpha_s=F(7), beta_s_per_byte=F(1, 10), gamma_s_per_byte=F(1, 500)),
    LinkParams(alpha_s=F(20), beta_s_per_byte=F(1, 3), gamma_s_per_byte=F(1, 300)),
)
SIZES = [(2, 2), (4, 2), (3, 4), (8, 4), (2, 3, 2), (2, 2, 2), (4, 1, 3), (1, 4), (5,), (3, 1), (6, 5)]
N = F(12345, 7)  # any size: the model is exact in rationals


def topology(sizes: tuple[int, ...], links: tuple[LinkParams, ...] = LINKS) -> Topology:
    return Topology(tuple(Level(size=s, link=links[i]) for i, s in enumerate(sizes)))


def assert_same(sim, composed) -> None:
    assert sim.rounds == composed.rounds
    assert sim.time_s == composed.time_s
    assert (sim.latency_s, sim.bandwidth_s, sim.compute_s) == (
        composed.latency_s, composed.bandwidth_s, composed.compute_s)
    assert sim.bytes_per_level == tuple(lv.bytes_crossing for lv in composed.levels)
    assert sim.bytes_sent_per_rank == composed.bytes_sent_per_rank


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("outer", ["ring", "tree"])
@pytest.mark.parametrize(("algorithm", "builder"), [("hierarchical", hierarchical_allreduce),
                                                    ("hierarchical-reduce-bcast", reduce_bcast_allreduce)])
def test_schedule_runs_correctly_and_prices_as_composed(sizes, outer, algorithm, builder):
    topo = topology(sizes)
    schedule = builder(topo, outer=outer)
    run = execute(schedule)
    assert run.ok, run.problems
    sim = simulate(schedule, n=N, levels=topo.links, level_of=topo.level_of)
    assert_same(sim, hierarchical_cost(topo, N, algorithm=algorithm, outer=outer))


@pytest.mark.parametrize("sizes", SIZES, ids=lambda s: "x".join(map(str, s)))
def test_flat_ring_on_a_topology(sizes):
    topo = topology(sizes)
    sim = simulate(ring_allreduce(topo.p), n=N, levels=topo.links, level_of=topo.level_of)
    assert_same(sim, flat_ring(topo, N))


def test_flat_ring_when_an_inner_link_is_the_slowest():
    # the inner link starts slowly: its steps, not the outer ones, set the pace
    links = (LinkParams(alpha_s=F(50), beta_s_per_byte=F(1, 100)), LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 10)))
    topo = topology((4, 3), links)
    ring = flat_ring(topo, N)
    assert [ph.level for ph in ring.phases] == ["intra", "intra"]
    assert_same(simulate(ring_allreduce(topo.p), n=N, levels=topo.links, level_of=topo.level_of), ring)


def test_rat_against_its_schedule():
    # RAT on 2 racks × 4: reduce in the rack, tree across the core, broadcast; the flat ring beside it
    n = F(1000)
    t = rack_aware(n, racks=2, per_rack=4)
    topo = topology((4, 2))
    sim = simulate(reduce_bcast_allreduce(topo, outer="tree"), n=n, levels=topo.links, level_of=topo.level_of)
    assert sim.bytes_per_level == (t.rat.bytes_crossing("rack"), t.core_bytes_rat) == (12 * n, 2 * n)
    ring = simulate(ring_allreduce(8), n=n, levels=topo.links, level_of=topo.level_of)
    assert ring.bytes_per_level[1] == t.core_bytes_flat_ring == F(7, 2) * n


OUTER = ["ring", "tree", "recursive-doubling", "rabenseifner", "naive", "double-binary-tree"]


@pytest.mark.parametrize("outer", OUTER)
@pytest.mark.parametrize("p", range(2, 11))
def test_bytes_each_outer_record_moves(outer, p):
    """The bytes all ranks of the outer group send together, against the record's own schedule."""
    if outer == "double-binary-tree" and p < 4:
        pytest.skip("the double binary tree needs p ≥ 4")
    topo = topology((1, p))  # one real level: the hierarchical cost is the outer record alone
    composed = hierarchical_cost(topo, N, outer=outer, extra={"blocks": 2} if outer == "double-binary-tree" else None)
    (phase,) = composed.phases
    name = resolve("allreduce", phase.cost.algorithm).schedule
    if name not in BUILDERS:
        pytest.skip(f"no schedule builder {name!r} yet")
    schedule = build(name, "allreduce", p=p, **({"k": 2} if outer == "double-binary-tree" else {}))
    sim = simulate(schedule, n=N, link=LINKS[1])
    assert sum(sim.bytes_sent) == composed.bytes_crossing("inter")
    assert sim.time_s == composed.time_s
