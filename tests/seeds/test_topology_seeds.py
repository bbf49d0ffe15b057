"""The seeds' topology-aware numbers: multi-lane, FlexReduce, RAT, and hierarchical all-reduce.

Each test reproduces a number of ``shared/seeds/distributed-sgd-and-allreduce.txt`` ("DSGD")
section 10 or of ``shared/seeds/collective-communication-patterns.txt`` ("Patterns"),
'Hierarchical All-Reduce'; its id is the section title and the arithmetic is in a comment.

Not reproduced: Patterns says the hierarchical all-reduce "minimizes inter-node data transfer
to just 2D/N_nodes".  With g GPUs per node and N nodes, each GPU's slice of D/g crosses in a
ring all-reduce over N nodes: 2(N − 1)/N · D/g bytes sent per GPU, 2(N − 1)/N · D per node;
neither is 2D/N in general (for the seed's 3 nodes × 4 GPUs: D/3 per GPU, 4D/3 per node).
DSGD §10 itself warns that network bytes do not fall by the number of GPUs per node, which
``test_network_bytes_do_not_fall_by_gpus_per_node`` checks.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import (
    Level,
    LinkParams,
    Topology,
    flat_ring,
    flexreduce,
    hierarchical_cost,
    multilane,
    rack_aware,
)
from costmodel.links import topology_from_options

GB = 10**9  # the seed's decimal GB and MB
MB = 10**6
LANE = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 12_500_000_000))  # 12.5 GB/s per lane


def seed(title: str) -> pytest.MarkDecorator:
    """Give the test the seed section title as its id."""
    return pytest.mark.parametrize("section", [title], ids=[title])


# -- DSGD §10 Multi-Lane: Parallel Paths -----------------------------------------------------------


@seed("DSGD 10. Multi-Lane: Parallel Paths")
def test_one_gigabyte_over_four_lanes(section: str) -> None:
    m = multilane(1 * GB, lanes=4, alpha=0, bandwidth="12.5GB/s")  # the seed's ideal service time
    # 1 GB splits into 4 × 250 MB
    assert m.bytes_per_lane == 250 * MB
    # one lane: 1 GB / 12.5 GB/s = 80 ms; four lanes at once: 250 MB / 12.5 GB/s = 20 ms
    assert m.one_lane_time_s == Fraction(80, 1000)
    assert m.time_s == Fraction(20, 1000)
    assert m.speedup == 4


@seed("DSGD 10. Multi-Lane: Parallel Paths")
def test_the_lanes_inside_a_hierarchical_all_reduce(section: str) -> None:
    # 4 GPUs per node on a fast link, 2 nodes on 12.5 GB/s lanes; α = 0 for the transfer time only
    fast = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 10**12))
    topo = Topology((Level(size=4, link=fast), Level(size=2, link=LANE)))
    four = hierarchical_cost(topo, 1 * GB, lanes=4)
    one = hierarchical_cost(topo, 1 * GB, lanes=1)
    # the inter-node phase is a ring all-reduce over 2 nodes of each GPU's 250 MB slice:
    # 2 · (1/2) · 250 MB = 250 MB per lane at 12.5 GB/s = 20 ms; on one lane the 4 slices queue: 80 ms
    assert four.phases[1].n_bytes == 250 * MB
    assert four.phases[1].cost.bandwidth_s == Fraction(20, 1000)
    assert one.phases[1].cost.bandwidth_s == Fraction(80, 1000)
    # the local collectives are unchanged
    assert four.phases[0].cost.time_s == one.phases[0].cost.time_s


# -- DSGD §10 FlexReduce: Unequal Groups -----------------------------------------------------------


@seed("DSGD 10. FlexReduce: Unequal Groups")
def test_flexreduce_twelve_entries_over_two_and_three(section: str) -> None:
    split = flexreduce(12, groups="2,3")
    two, three = split.groups
    # first phase: 12/2 = 6 entries reduced per worker of the 2-worker subtree, 12/3 = 4 in the other
    assert (two.reduced_per_worker, three.reduced_per_worker) == (6, 4)
    # half the tensor (6 entries) per subtree: 6/2 = 3 and 6/3 = 2 entries owned per worker
    assert (two.owned_entries, three.owned_entries) == (6, 6)
    assert (two.owned_per_worker, three.owned_per_worker) == (3, 2)
    # each subtree sends the other its 6 partial sums for the other's half: 6 each way, 12 in all,
    # not counting the final all-gather
    assert split.exchange_entries_per_direction == 6
    assert split.exchange_entries == 12


# -- DSGD §10 RAT: Reduce Before Crossing the Core -------------------------------------------------


@seed("DSGD 10. RAT: Reduce Before Crossing the Core")
def test_rat_two_racks_of_four(section: str) -> None:
    n = 100 * MB
    t = rack_aware(n, racks=2, per_rack=4)
    # flat ring over 8 workers placed rack by rack: 2 links cross the core (3 → 4 and 7 → 0), each
    # carrying 2(p − 1)/p · n = 2 · 7/8 · n = 1.75n: 3.5n in all
    assert t.core_bytes_flat_ring == Fraction(7, 2) * n
    # RAT: one rack aggregate (n) crosses, the result (n) comes back: 2n
    assert t.core_bytes_rat == 2 * n
    assert t.core_bytes_rat < t.core_bytes_flat_ring


# -- DSGD §10 Hierarchical All-Reduce ----------------------------------------------------------------


@seed("DSGD 10. Hierarchical All-Reduce")
def test_network_bytes_do_not_fall_by_gpus_per_node(section: str) -> None:
    n = Fraction(1 * GB)
    topo = topology_from_options(levels=["8:1us:150GB/s", "4:5us:25GB/s"])
    hier = hierarchical_cost(topo, n).bytes_crossing("inter")
    flat = flat_ring(topo, n).bytes_crossing("inter")
    # hierarchical: 32 GPUs each send 2 · 3/4 · n/8 across nodes: 32 · 3n/16 = 6n
    assert hier == 6 * n
    # flat ring over 32: 4 of its links cross nodes, each 2 · 31/32 · n: 31n/4
    assert flat == Fraction(31, 4) * n
    # a 31/24 ≈ 1.29× drop, not 8× (the GPUs per node)
    assert flat / hier == Fraction(31, 24)


@seed("DSGD 10. Hierarchical All-Reduce")
def test_fewer_inter_node_participants_means_fewer_start_ups(section: str) -> None:
    topo = topology_from_options(levels=["8:1us:150GB/s", "4:5us:25GB/s"])
    hier = hierarchical_cost(topo, 1 * MB)
    flat = flat_ring(topo, 1 * MB)
    # hierarchical: 2·7 intra steps of 1 µs + 2·3 inter steps of 5 µs = 44 µs;
    # the flat ring: 2·31 steps, each waiting for an inter-node start-up of 5 µs = 310 µs
    assert hier.latency_s == Fraction(44, 10**6)
    assert flat.latency_s == Fraction(310, 10**6)


# -- Patterns: Hierarchical All-Reduce -----------------------------------------------------------


@seed("Patterns: Hierarchical All-Reduce")
def test_three_nodes_of_four_gpus(section: str) -> None:
    d = Fraction(12 * MB)
    topo = topology_from_options(levels=["4:0s:900GB/s:nvlink", "3:0s:50GB/s:ib"])
    c = hierarchical_cost(topo, d)
    # (1) reduce-scatter within each node via NVLink ring, (2) cross-node ring all-reduce of the
    # chunks over InfiniBand, (3) all-gather within each node via NVLink
    assert [(ph.collective, ph.cost.algorithm, ph.level) for ph in c.phases] == [
        ("reduce-scatter", "ring", "nvlink"), ("allreduce", "ring", "ib"), ("allgather", "ring", "nvlink")]
    # each GPU's chunk is D/4; the all-reduce over 3 nodes sends 2 · 2/3 · D/4 = D/3 per GPU
    assert c.phases[1].n_bytes == d / 4
    assert c.phases[1].cost.bytes_sent_per_rank == d / 3
    # across nodes in all: 12 GPUs · D/3 = 4D
    assert c.bytes_crossing("ib") == 4 * d
    # time: RS 3/4 · 12 MB / 900 GB/s = 10 µs, twice; AR 2 · 2/3 · 3 MB / 50 GB/s = 80 µs
    assert c.time_s == Fraction(10 + 80 + 10, 10**6)
