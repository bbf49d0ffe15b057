"""Hierarchical all-reduce composed over levels, the flat ring on a topology, multi-lane, FlexReduce, RAT.

Every expected value is worked out by hand below, phase by phase, from the α–β–γ model:
ring reduce-scatter over g ranks on n bytes: (g − 1)α + (g − 1)/g·nβ (+ the same nγ);
ring all-gather likewise without γ; ring all-reduce 2(g − 1)α + 2(g − 1)/g·nβ;
binomial reduce or broadcast: ⌈log2 g⌉(α + nβ).  Links are in made-up units (α in
seconds, β in seconds per byte) so the arithmetic stays small.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel import (
    ConstraintError,
    CostTable,
    HierarchicalTable,
    InputError,
    Level,
    LinkParams,
    Topology,
    UnknownNameError,
    compare_hierarchical,
    flat_ring,
    flexreduce,
    hierarchical_cost,
    multilane,
    rack_aware,
)
from costmodel.collectives.evaluate import compare
from costmodel.collectives.hierarchical import SOURCES, is_hierarchical
from costmodel.collectives.multilane import SOURCES as MULTILANE_SOURCES
from costmodel.links import resolve_link, topology_from_options
from costmodel.params import FittedOn, LinkSegment, PiecewiseLink
from costmodel.references import CITATIONS
from tests.strategies import links, sizes

F = Fraction
INTRA = LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 100))  # α = 1, 100 B per unit of time
INTER = LinkParams(alpha_s=F(10), beta_s_per_byte=F(1, 10))  # α = 10, 10 B per unit of time
N = F(800)


def two_level(inner: int = 4, outer: int = 2) -> Topology:
    return Topology((Level(size=inner, link=INTRA), Level(size=outer, link=INTER)))


def crossing(result) -> dict[str, Fraction]:
    return {lv.name: lv.bytes_crossing for lv in result.levels}


# -- hierarchical: reduce-scatter, all-reduce of slices, all-gather ------------------------------


def test_hierarchical_two_levels_by_hand():
    c = hierarchical_cost(two_level(), N)
    # RS ring, g = 4, n = 800:  3·1 + (3/4)·800/100 = 3 + 6 = 9
    # AR ring, g = 2, n/4 = 200: 2·10 + 2·(1/2)·200/10 = 20 + 20 = 40
    # AG ring, g = 4, n = 800:  9
    assert [ph.cost.time_s for ph in c.phases] == [9, 40, 9]
    assert c.time_s == 58
    assert (c.latency_s, c.bandwidth_s, c.compute_s) == (26, 32, 0)
    assert c.rounds == 3 + 2 + 3
    assert [(ph.collective, ph.cost.algorithm, ph.level, ph.p, ph.groups) for ph in c.phases] == [
        ("reduce-scatter", "ring", "intra", 4, 2),
        ("allreduce", "ring", "inter", 2, 4),
        ("allgather", "ring", "intra", 4, 2),
    ]
    assert [ph.n_bytes for ph in c.phases] == [800, 200, 800]
    assert [ph.fraction_of_n for ph in c.phases] == [1, F(1, 4), 1]
    # intra: 2 nodes × 3·800 for the reduce-scatter, the same for the all-gather
    # inter: 4 slices × (2 ranks × 200 bytes each)
    assert crossing(c) == {"intra": 9600, "inter": 1600}
    # every rank: 3/4·800 + 200 + 3/4·800 = 1400 = 2(p − 1)/p·n for p = 8
    assert c.bytes_sent_per_rank == 1400
    assert c.parameters == {"inner": "ring", "outer": "ring", "lanes": 4}
    assert c.formula == ("reduce-scatter ring(p=4, n) @ intra + allreduce ring(p=2, n/4) @ inter + "
                         "allgather ring(p=4, n) @ intra")
    assert c.notes == ()


def test_hierarchical_with_gamma():
    intra = LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 100), gamma_s_per_byte=F(1, 1000))
    inter = LinkParams(alpha_s=F(10), beta_s_per_byte=F(1, 10), gamma_s_per_byte=F(1, 500))
    c = hierarchical_cost(Topology((Level(size=4, link=intra), Level(size=2, link=inter))), N)
    # RS: (3/4)·800/1000 = 3/5; AR on 200: (1/2)·200/500 = 1/5; AG reduces nothing
    assert c.compute_s == F(3, 5) + F(1, 5)
    assert c.time_s == 58 + F(4, 5)


def test_hierarchical_three_levels_by_hand():
    links = [LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 100)),
             LinkParams(alpha_s=F(5), beta_s_per_byte=F(1, 50)),
             LinkParams(alpha_s=F(10), beta_s_per_byte=F(1, 10))]
    t = Topology(tuple(Level(size=2, link=link) for link in links))
    c = hierarchical_cost(t, N)
    # RS level0 on 800: 1 + 400/100 = 5; RS level1 on 400: 5 + 200/50 = 9;
    # AR level2 on 200: 20 + 200/10 = 40; then 9 and 5 back out
    assert [ph.cost.time_s for ph in c.phases] == [5, 9, 40, 9, 5]
    assert c.time_s == 68
    assert c.rounds == 6
    assert [ph.level for ph in c.phases] == ["level0", "level1", "level2", "level1", "level0"]
    # level0: 4 pairs × 800 (one chunk of 400 each way) twice; level1: 4 pairs × 400 twice;
    # level2: 4 pairs × 2·200
    assert crossing(c) == {"level0": 6400, "level1": 3200, "level2": 1600}


def test_hierarchical_recursive_inner():
    c = hierarchical_cost(two_level(), N, inner="rh")
    # recursive halving, g = 4: log2 4 = 2 steps: 2 + (3/4)·800/100 = 8; doubling back: 8
    assert [ph.cost.algorithm for ph in c.phases] == ["recursive-halving", "ring", "recursive-doubling"]
    assert c.time_s == 8 + 40 + 8
    assert c.rounds == 2 + 2 + 2
    assert crossing(c) == {"intra": 9600, "inter": 1600}
    assert c.parameters["inner"] == "recursive"


def test_recursive_inner_needs_powers_of_two():
    with pytest.raises(InputError, match="level 'intra' has 6 units; inner=recursive needs a power of two"):
        hierarchical_cost(two_level(6), N, inner="recursive")


@pytest.mark.parametrize(
    ("outer", "time", "inter_bytes"),
    [
        # tree, g = 2 on 200: 2·⌈log2 2⌉·(10 + 200/10) = 60; 4 slices × (200 up + 200 down)
        ("tree", 9 + 60 + 9, 1600),
        # recursive doubling, g = 2 on 200: one exchange, 10 + 20 = 30; 4 × 2·200
        ("rd", 9 + 30 + 9, 1600),
        # naive, g = 2: 2·(10 + 20) = 60; the root receives 200 and sends 200
        ("naive", 9 + 60 + 9, 1600),
    ],
)
def test_outer_algorithms(outer, time, inter_bytes):
    c = hierarchical_cost(two_level(), N, outer=outer)
    assert c.time_s == time
    assert crossing(c)["inter"] == inter_bytes


def test_outer_folded_algorithm_bytes():
    # 2 × 3: recursive doubling over 3 nodes folds one in: it sends its n/2 = 300 bytes in, one
    # exchange of 300 each way between the other two, 300 back: 4·300 per slice; 2 slices
    c = hierarchical_cost(two_level(2, 3), F(600), outer="recursive-doubling")
    assert c.phases[1].cost.algorithm == "recursive-doubling-folded"
    assert crossing(c)["inter"] == 2 * 4 * 300
    assert any("not a power of two" in note for note in c.notes)


def test_outer_extra_parameters_reach_the_outer_record():
    c = hierarchical_cost(two_level(2, 4), N, outer="dbt", extra={"blocks": 2})
    assert c.phases[1].cost.parameters == {"blocks": 2}
    assert c.parameters["blocks"] == 2
    # double binary tree over 4 nodes on each of the 2 slices of 400: 2 trees × 3 non-roots ×
    # (200 up + 200 down) per slice
    assert crossing(c)["inter"] == 2 * (2 * 3 * (200 + 200))


# -- lanes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lanes", "ar_time"),
    [
        (4, 40),  # one lane per local rank: as by default
        (2, 20 + 40),  # 2 slices per lane: β doubles, 2·(1/2)·200·(2/10) = 40
        (3, 20 + 40),  # ⌈4/3⌉ = 2 slices on the busiest lane
        (1, 20 + 80),  # all 4 slices on one lane: 4× the bandwidth term
    ],
)
def test_lanes(lanes, ar_time):
    c = hierarchical_cost(two_level(), N, lanes=lanes)
    assert c.phases[1].cost.time_s == ar_time
    assert c.time_s == 9 + ar_time + 9
    assert c.parameters["lanes"] == lanes
    assert crossing(c) == {"intra": 9600, "inter": 1600}  # the same bytes, fewer paths
    assert bool(c.notes) == (lanes < 4)


@pytest.mark.parametrize(("lanes", "needle"), [
    (5, "lanes=5 is more than the 4 local ranks that cross at the outermost level; each rank has one port, "
        "so use at most lanes=4"),
    (0, "lanes=0 is not a positive integer"),
    (-1, "lanes=-1"),
    (True, "lanes=True"),
])
def test_bad_lanes(lanes, needle):
    with pytest.raises(InputError) as info:
        hierarchical_cost(two_level(), N, lanes=lanes)
    assert needle in str(info.value)


def test_lanes_do_not_apply_to_reduce_bcast():
    c = hierarchical_cost(two_level(), N, algorithm="hierarchical-reduce-bcast", lanes=2)
    assert c.time_s == 136  # as without lanes, below
    assert any("lanes=2 does not apply" in note for note in c.notes)
    assert "lanes" not in c.parameters


# -- hierarchical-reduce-bcast ---------------------------------------------------------------------


def test_reduce_bcast_two_levels_by_hand():
    c = hierarchical_cost(two_level(), N, algorithm="smp")
    assert c.algorithm == "hierarchical-reduce-bcast"
    # binomial reduce, g = 4: 2·(1 + 800/100) = 18; ring all-reduce of the full 800 between the
    # 2 leaders: 2·10 + 800/10 = 100; binomial broadcast: 18
    assert [ph.cost.time_s for ph in c.phases] == [18, 100, 18]
    assert c.time_s == 136
    assert c.rounds == 6
    assert [(ph.collective, ph.cost.algorithm, ph.groups) for ph in c.phases] == [
        ("reduce", "binomial", 2), ("allreduce", "ring", 1), ("broadcast", "binomial", 2)]
    # intra: 2 nodes × 3 non-roots × 800, twice; inter: each of the 2 leaders sends 2·(1/2)·800
    assert crossing(c) == {"intra": 9600, "inter": 1600}
    # a leader: broadcast root 2·800 + its ring share 800
    assert c.bytes_sent_per_rank == 2400
    assert c.parameters == {"inner": "binomial", "outer": "ring"}


def test_reduce_bcast_three_levels_by_hand():
    links = [LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 100)),
             LinkParams(alpha_s=F(5), beta_s_per_byte=F(1, 50)),
             LinkParams(alpha_s=F(10), beta_s_per_byte=F(1, 10))]
    t = Topology(tuple(Level(size=2, link=link) for link in links))
    c = hierarchical_cost(t, N, algorithm="hierarchical-reduce-bcast")
    # reduce level0: 1 + 8 = 9 (4 pairs); reduce level1 among 4 leaders: 5 + 16 = 21 (2 pairs);
    # all-reduce level2 between 2 leaders: 20 + 80 = 100; broadcasts 21 and 9
    assert [ph.cost.time_s for ph in c.phases] == [9, 21, 100, 21, 9]
    assert [ph.groups for ph in c.phases] == [4, 2, 1, 2, 4]
    assert crossing(c) == {"level0": 2 * 4 * 800, "level1": 2 * 2 * 800, "level2": 2 * 800}
    assert c.bytes_sent_per_rank == 800 + 800 + 800


def test_inner_names():
    assert hierarchical_cost(two_level(), N, algorithm="hierarchical-reduce-bcast", inner="tree").parameters[
        "inner"] == "binomial"
    with pytest.raises(InputError, match="inner algorithm 'ring' does not apply to hierarchical-reduce-bcast; "
                                         "choose binomial"):
        hierarchical_cost(two_level(), N, algorithm="hierarchical-reduce-bcast", inner="ring")
    with pytest.raises(InputError, match="did you mean 'ring'"):
        hierarchical_cost(two_level(), N, inner="rign")


# -- levels of size 1 and single levels ----------------------------------------------------------


def test_a_level_of_size_one_is_skipped():
    t = Topology((Level(size=4, link=INTRA), Level(size=1, link=INTER), Level(size=2, link=INTER)))
    c = hierarchical_cost(t, N)
    assert c.time_s == 58  # as on 4 × 2
    assert crossing(c) == {"level0": 9600, "level1": 0, "level2": 1600}
    assert "level 'level1' has 1 unit: nothing crosses it" in c.notes


def test_one_real_level_is_the_flat_outer_algorithm():
    t = Topology((Level(size=8, link=INTRA), Level(size=1, link=INTER)))
    c = hierarchical_cost(t, N)
    # ring over 8 on 800: 14·1 + 2·(7/8)·800/100 = 14 + 14
    assert [ph.text for ph in c.phases] == ["allreduce ring(p=8, n) @ intra"]
    assert c.time_s == 28
    assert c.parameters["inner"] is None
    assert any("this is the flat ring all-reduce" in note for note in c.notes)


# -- the flat ring on a topology -----------------------------------------------------------------


def test_flat_ring_by_hand():
    ring = flat_ring(two_level(), N)
    # every step moves n/p = 100 bytes on every link: intra 1 + 100/100 = 2, inter 10 + 100/10 = 20;
    # the inter links are in every step, so 7 + 7 steps of 20
    assert ring.time_s == 280
    assert (ring.latency_s, ring.bandwidth_s) == (140, 140)
    assert ring.rounds == 14
    assert [ph.level for ph in ring.phases] == ["inter", "inter"]
    # 6 intra links and 2 inter links, each carrying 2·(7/8)·800 = 1400
    assert crossing(ring) == {"intra": 8400, "inter": 2800}
    assert ring.bytes_sent_per_rank == 1400


def test_flat_ring_picks_the_slowest_link_per_phase():
    # intra: α = 30, fast; inter: α = 1, slow: 100 B per step costs 30 + 1 = 31 intra, 1 + 10 = 11 inter
    slow_start = LinkParams(alpha_s=F(30), beta_s_per_byte=F(1, 100))
    t = Topology((Level(size=4, link=slow_start), Level(size=2, link=LinkParams(alpha_s=F(1),
                                                                                 beta_s_per_byte=F(1, 10)))))
    ring = flat_ring(t, N)
    assert [ph.level for ph in ring.phases] == ["intra", "intra"]
    assert ring.time_s == 14 * 31


# -- compare -------------------------------------------------------------------------------------


def test_compare_hierarchical_defaults_to_both_fastest_first():
    table = compare_hierarchical("all-reduce", n=N, topology=two_level())
    assert isinstance(table, HierarchicalTable)
    assert [r.algorithm for r in table.results] == ["hierarchical", "hierarchical-reduce-bcast"]
    assert table.best == "hierarchical"
    assert table.vs_best(table.results[1]) == F(136, 58)
    assert table.speedup(table.results[0]) == F(280, 58)
    data = table.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["results"][0]["speedup_vs_flat_ring"] == 280 / 58
    assert data["results"][0]["levels"] == [{"name": "intra", "bytes_crossing": 9600},
                                            {"name": "inter", "bytes_crossing": 1600}]
    assert data["flat_ring"]["levels"][1] == {"name": "inter", "bytes_crossing": 2800}


def test_compare_with_an_inner_choice_keeps_the_algorithms_it_fits():
    table = compare_hierarchical("allreduce", n=N, topology=two_level(), inner="recursive")
    assert [r.algorithm for r in table.results] == ["hierarchical"]


@pytest.mark.parametrize(
    ("collective", "algorithms", "error", "needle"),
    [
        ("broadcast", None, InputError, "'broadcast' has no hierarchical algorithms"),
        ("allreduce", ["ring"], InputError, "'ring' is a flat algorithm; with a topology choose hierarchical"),
        ("allreduce", ["rab"], InputError, "'rabenseifner' is a flat algorithm"),
        ("allreduce", ["hierarchicl"], UnknownNameError, "did you mean 'hierarchical'"),
        ("allreduce", ["frob"], UnknownNameError, "choose from hierarchical, hierarchical-reduce-bcast"),
        ("allredcue", None, UnknownNameError, "did you mean 'allreduce'"),
    ],
)
def test_compare_hierarchical_errors(collective, algorithms, error, needle):
    with pytest.raises(error) as info:
        compare_hierarchical(collective, algorithms, n=N, topology=two_level())
    assert needle in str(info.value)


def test_bad_outer_and_topology():
    with pytest.raises(UnknownNameError, match="unknown algorithm 'bruck' for allreduce"):
        hierarchical_cost(two_level(), N, outer="bruck")
    with pytest.raises(ConstraintError, match="p ≥ 4"):
        hierarchical_cost(two_level(), N, outer="dbt")  # 2 nodes
    with pytest.raises(InputError, match="is not a Topology"):
        hierarchical_cost((4, 2), N)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="is not a Topology"):
        flat_ring("4x2", N)  # type: ignore[arg-type]


def test_is_hierarchical():
    assert [is_hierarchical(x) for x in ("hierarchical", "Hier", "smp", "rs_ar_ag", "ring", "tree")] == [
        True, True, True, True, False, False]


# -- the typed calls the cost command chooses between ------------------------------------------

LEVELS = ["4:1s:100B/s", "2:10s:10B/s"]  # the two_level() links in text


def test_flat_compare_on_a_resolved_link():
    link = resolve_link("allreduce", alpha="5us", beta="0.08ns/B")
    table = compare("allreduce", ["ring"], p=4, n="1MB", link=link)
    assert isinstance(table, CostTable)


def test_topology_from_levels_matches_the_api():
    table = compare_hierarchical("allreduce", n=800, topology=topology_from_options(levels=LEVELS, p=8))
    assert isinstance(table, HierarchicalTable)
    assert table.results[0].time_s == 58
    assert table.flat_ring.time_s == 280


def test_hierarchical_name_without_levels_asks_for_them():
    with pytest.raises(InputError, match="no topology given"):
        topology_from_options(p=8)


def test_topology_rules():
    with pytest.raises(InputError, match="p=6 does not match the levels: 4 × 2 = 8 ranks"):
        topology_from_options(levels=LEVELS, p=6)
    with pytest.raises(InputError, match="lanes=0"):
        compare_hierarchical("allreduce", n=800, topology=topology_from_options(levels=LEVELS), lanes=0)


def test_topology_from_a_profile_with_levels(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_text('[[level]]\nsize = 4\nalpha = "1 s"\nbandwidth = "100 B/s"\n'
                    '[[level]]\nsize = 2\nalpha = "10 s"\nbandwidth = "10 B/s"\n', encoding="utf-8")
    table = compare_hierarchical("allreduce", n=800, topology=topology_from_options(profile=str(path)))
    assert isinstance(table, HierarchicalTable)
    assert table.results[0].time_s == 58


# -- multi-lane ----------------------------------------------------------------------------------


def test_multilane_with_start_up():
    m = multilane(1000, lanes=3, alpha="2s", beta="1s/B")
    # one lane: 2 + 1000; three lanes: 2 + 1000/3
    assert (m.one_lane_time_s, m.time_s, m.bytes_per_lane) == (1002, 2 + F(1000, 3), F(1000, 3))
    assert m.speedup == F(1002) / (2 + F(1000, 3))
    data = m.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"lanes": None, "bandwidth": "1GB/s"}, "no lane count given; pass lanes=K"),
    ({"lanes": 0, "bandwidth": "1GB/s"}, "lanes=0 is not a positive integer"),
    ({"lanes": 2, "alpha": 0}, "no bandwidth given"),
    ({"lanes": 2, "bandwidth": "1GB/s"}, "no latency given"),
    ({"lanes": 2, "beta": "1ns/B", "bandwidth": "1GB/s"}, "only one"),
])
def test_multilane_errors(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        multilane("1GB", **kwargs)


def test_multilane_takes_a_resolved_link():
    link = LinkParams(alpha_s=F(2), beta_s_per_byte=F(1))  # 2 s, 1 s/B
    m = multilane(1000, lanes=3, link=link)
    assert m.link is link
    assert (m.one_lane_time_s, m.time_s) == (1002, 2 + F(1000, 3))  # 2 + 1000·1; 2 + 1000/3·1
    with pytest.raises(InputError, match="both link= and alpha= were given"):
        multilane(1000, lanes=3, link=link, alpha="1s")


def test_multilane_prices_each_message_on_its_own_segment():
    small = LinkParams(alpha_s=F(1), beta_s_per_byte=F(1, 10))  # messages below 100 B: 1 s + m/10 s
    large = LinkParams(alpha_s=F(5), beta_s_per_byte=F(1, 100))  # from 100 B: 5 s + m/100 s
    link = PiecewiseLink(segments=(LinkSegment(from_bytes=F(1), to_bytes=F(10), link=small),
                                   LinkSegment(from_bytes=F(100), to_bytes=F(1000), link=large)),
                         summary=small, source="two segments")
    m = multilane(400, lanes=8, link=link)
    # one lane: 400 B on the large segment, 5 + 4 = 9 s; eight lanes: 50 B each on the small one, 1 + 5 = 6 s
    assert (m.one_lane_time_s, m.time_s) == (9, 6)
    assert m.to_dict()["link_segments_by"] == "message"
    fitted = PiecewiseLink(segments=link.segments, summary=small, source="lab", sizes="n",
                           fitted=FittedOn(collective="allreduce", algorithm="rabenseifner", p=8))
    with pytest.raises(InputError, match="they price rabenseifner only, not a transfer of one message"):
        multilane(400, lanes=8, link=fitted)


# -- FlexReduce ----------------------------------------------------------------------------------


def test_flexreduce_three_groups():
    split = flexreduce(18, groups=[1, 2, 3])
    # phase 1: 18/1, 18/2, 18/3 reduced per worker; each group owns 18/3 = 6: 6, 3, 2 per worker
    assert [(g.workers, g.reduced_per_worker, g.owned_entries, g.owned_per_worker) for g in split.groups] == [
        (1, 18, 6, 6), (2, 9, 6, 3), (3, 6, 6, 2)]
    # 6 partial-sum entries each way for each of the 3 pairs: 3·2·6 = 36; the all-gather as many
    assert (split.exchange_entries_per_direction, split.exchange_entries, split.allgather_entries) == (6, 36, 36)
    data = split.to_dict()
    assert json.loads(json.dumps(data)) == data


@pytest.mark.parametrize(
    ("entries", "groups", "needle"),
    [
        (10, "2,3", "10 entries do not split evenly: each of the 2 groups owns 10/2, and a worker of the 2-worker "
                    "group would own 5/2 entries; use a multiple of 12 entries"),
        (12, "2,3,4", "use a multiple of 36"),  # 12/3 = 4 per group, 4/3 for the 3-worker group; lcm(6, 9, 12)
        (12, "2", "one group of 2 is a plain all-reduce; FlexReduce needs at least two groups"),
        (12, "", "'' is not a list of worker counts"),
        (12, "2,x", "'2,x' is not a list of worker counts"),
        (12, "2,0", "group 2 has 0 workers"),
        (12, [2, -1], "group 2 has -1 workers"),
        (12, [], "no groups given"),
        (12, 5, "5 is not a list of worker counts"),
        (0, "2,3", "entries=0 is not a positive integer"),
        (F(12), "2,3", "entries=Fraction(12, 1) is not a positive integer"),
    ],
)
def test_flexreduce_errors(entries, groups, needle):
    with pytest.raises(InputError) as info:
        flexreduce(entries, groups=groups)
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


# -- RAT -----------------------------------------------------------------------------------------


def test_rat_three_racks_of_two():
    t = rack_aware(6, racks=3, per_rack=2)
    # flat ring over 6: links (2−1)·3 = 3 inside racks, (3−1) + 1 = 3 across the core, each carrying
    # 2·(5/6)·6 = 10 bytes
    assert {lv.name: lv.bytes_crossing for lv in t.flat_ring.levels} == {"rack": 30, "core": 30}
    # RAT: inside each of 3 racks 1 reduce + 1 broadcast of 6 bytes; across the core a binomial
    # tree among 3 leaders: 2 aggregates up, 2 results down, 6 bytes each
    assert {lv.name: lv.bytes_crossing for lv in t.rat.levels} == {"rack": 36, "core": 24}
    assert (t.core_bytes_flat_ring, t.core_bytes_rat) == (30, 24)
    data = t.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["p"] == 6


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"racks": 1, "per_rack": 4}, "racks=1 leaves nothing to cross the core; give at least 2 racks"),
    ({"racks": 0, "per_rack": 4}, "racks=0 is not a positive integer"),
    ({"racks": 2, "per_rack": 0}, "per_rack=0 is not a positive integer"),
])
def test_rat_errors(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        rack_aware(100, **kwargs)


def test_one_worker_per_rack_is_a_tree_across_the_core():
    t = rack_aware(1, racks=2, per_rack=1)
    assert [ph.level for ph in t.rat.phases] == ["core"]
    assert t.core_bytes_rat == 2


# -- citations -----------------------------------------------------------------------------------


def test_every_source_is_a_defined_citation_with_a_locator():
    sources = SOURCES + MULTILANE_SOURCES
    for cited in sources:
        assert CITATIONS[cited.citation.key] is cited.citation
        assert cited.locator
    keys = {c.citation.key for c in sources}
    assert {"sergeev2018", "nccl", "mpich-smp", "lee2020", "wan2020", "traff2020"} <= keys


# -- properties ----------------------------------------------------------------------------------


@given(st.lists(st.integers(1, 6), min_size=1, max_size=3).filter(lambda s: math.prod(s) >= 2),
       st.lists(links(), min_size=3, max_size=3), sizes())
def test_ring_hierarchy_sends_what_a_flat_ring_sends(level_sizes, level_links, n):
    t = Topology(tuple(Level(size=s, link=level_links[i]) for i, s in enumerate(level_sizes)))
    c = hierarchical_cost(t, n)
    p = t.p
    # Σ_i 2(s_i − 1)/s_i · n/(s_0⋯s_{i−1}) telescopes to 2(p − 1)/p · n per rank, so all p ranks
    # together send 2(p − 1)·n, whichever levels it crosses
    assert c.bytes_sent_per_rank == F(2 * (p - 1), p) * n
    assert sum(lv.bytes_crossing for lv in c.levels) == 2 * (p - 1) * n
    assert sum(lv.bytes_crossing for lv in flat_ring(t, n).levels) == 2 * (p - 1) * n
    assert c.time_s >= 0
    assert hierarchical_cost(t, n + 1).time_s >= c.time_s
