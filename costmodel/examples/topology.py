"""Worked examples on topology-aware all-reduce: lanes, FlexReduce, RAT and hierarchical all-reduce.

The numbers come from ``costmodel.collectives.multilane`` (:func:`~costmodel.multilane`,
:func:`~costmodel.flexreduce`, :func:`~costmodel.rack_aware`) and ``costmodel.collectives.hierarchical``
(:func:`~costmodel.hierarchical_cost`, :func:`~costmodel.flat_ring`); where a slip has to be applied
the phases are priced again with :meth:`Work.cost`, the same flat records the library composes, and
checked against it.  Sources:
Sergeev & Del Balso 2018 (hierarchical all-reduce), Träff & Hunold 2020 (multi-lane), Lee et al.
2020 (FlexReduce), Wan et al. 2020 (RAT).
"""

from __future__ import annotations

from fractions import Fraction

from costmodel.collectives.hierarchical import flat_ring, hierarchical_cost
from costmodel.collectives.multilane import flexreduce, multilane, rack_aware
from costmodel.errors import InputError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, COUNTS, NUMBER, RATE, SIZE, TIME
from costmodel.examples.work import Given, Work
from costmodel.params import LinkParams, combine_link
from costmodel.topology import Level, Topology

TOPIC = "hierarchical"


def _rate(rate: Fraction) -> str:
    """A rate as a statement writes it (12.5 GB/s, without the bits)."""
    return RATE.term(rate).split(" (")[0]


# -- multi-lane --------------------------------------------------------------------------------


@example("multilane-transfer", title="Multi-lane: one payload split over parallel lanes",
         source="Träff & Hunold 2020 (multi-lane collectives); NCCL (one ring per NIC)",
         topic=TOPIC,
         givens=[Given("n", "payload", SIZE, "1 GB", "n"), Given("lanes", "parallel lanes", COUNT, 4, "k"),
                 Given("bandwidth", "bandwidth of one lane", RATE, "12.5 GB/s", "1/β"),
                 Given("alpha", "start-up latency", TIME, "0 s", "α")],
         answer="time", slips=("alpha-only", "beta-only"))
def multilane_transfer(w: Work) -> None:
    """Each of k lanes carries n/k bytes at once: α + (n/k)·β, against α + n·β on one lane.

    Source: Träff & Hunold 2020 (multi-lane collectives); NCCL's one ring per NIC (NCCL_CROSS_NIC).
    """
    n, k, bandwidth, alpha = w.values("n", "lanes", "bandwidth", "alpha")
    a, b = w.link(alpha, 1 / bandwidth)
    m = multilane(n, lanes=k, link=combine_link(alpha=a, beta=b))
    w.answer("per-lane", "bytes on each lane", m.bytes_per_lane, SIZE, f"n/k = {SIZE.term(n)} / {k}")
    w.answer("one-lane", "time on one lane", m.one_lane_time_s, TIME, "α + n·β")
    w.answer("time", "time over all lanes at once", m.time_s, TIME, "α + (n/k)·β")
    if m.speedup is not None:
        w.answer("speedup", "speed-up of the lanes", m.speedup, NUMBER, "(α + nβ) / (α + nβ/k)")


# -- FlexReduce --------------------------------------------------------------------------------


@example("flexreduce-split", title="FlexReduce: who reduces and owns what in unequal groups",
         source="Lee et al. 2020 (FlexReduce: unequal groups)",
         topic=TOPIC,
         givens=[Given("entries", "tensor entries", COUNT, 12, "E"),
                 Given("groups", "workers in each group", COUNTS, "2,3", "s")],
         answer="exchange")
def flexreduce_split(w: Work) -> None:
    """Reduce-scatter inside each group (E/s per worker), an even split of E over the m groups
    (E/(m·s) per worker), and E/m partial sums sent each way between two groups.

    Source: Lee et al., "FlexReduce", DAC 2020.
    """
    entries, groups = w.values("entries", "groups")
    split = flexreduce(entries, groups=groups)
    m = len(split.groups)
    for i, g in enumerate(split.groups, 1):
        w.answer(f"reduced-{i}", f"entries each worker of group {i} reduces first", g.reduced_per_worker,
                 COUNT, f"E/s = {entries}/{g.workers}")
    w.answer("owned-entries", "entries each group owns in the split", split.groups[0].owned_entries, COUNT,
             f"E/m = {entries}/{m}")
    for i, g in enumerate(split.groups, 1):
        w.answer(f"owned-{i}", f"entries each worker of group {i} owns", g.owned_per_worker, COUNT,
                 f"E/(m·s) = {g.owned_entries}/{g.workers}")
    w.answer("exchange", "partial-sum entries crossing each way between two groups",
             split.exchange_entries_per_direction, COUNT, "E/m (the final all-gather not counted)")
    w.answer("exchange-total", "partial-sum entries crossing between groups in all", split.exchange_entries,
             COUNT, f"m(m − 1)·E/m = {m}·{m - 1}·{split.exchange_entries_per_direction}")


# -- RAT ---------------------------------------------------------------------------------------


@example("rat-core-bytes", title="RAT: bytes crossing the core, reduce-first against a flat ring",
         source="Wan et al. 2020 (RAT: reduce before crossing the core)",
         topic=TOPIC,
         givens=[Given("racks", "racks", COUNT, 2, "r"), Given("per_rack", "workers per rack", COUNT, 4, "w"),
                 Given("n", "tensor size", SIZE, "100 MB", "n")],
         answer="rat", slips=("own-chunk",))
def rat_core_bytes(w: Work) -> None:
    """RAT reduces in each rack, runs a tree among the rack leaders, broadcasts back; a flat ring in
    rack order crosses the core on (r − 1) + 1 of its links, each carrying 2(p − 1)/p·n.

    Source: Wan et al., "RAT - Resilient Allreduce Tree", APNet 2020.
    """
    racks, per_rack, n = w.values("racks", "per_rack", "n")
    t = rack_aware(n, racks=racks, per_rack=per_rack)
    p = racks * per_rack
    w.step("Workers in all", "p = r·w", p, COUNT)
    rat = t.core_bytes_rat
    w.step("RAT: each rack's aggregate goes up the leaders' tree", "(r − 1)·n", Fraction(racks - 1) * n, SIZE)
    w.step("RAT: the reduced result comes back down", "(r − 1)·n", Fraction(racks - 1) * n, SIZE)
    free = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(0))
    crossing = Topology((Level(size=per_rack, link=free), Level(size=racks, link=free))).ring_links()[-1]
    w.step("Flat ring in rack order: links that cross the core", "(r − 1) + 1 (the wrap-around)", crossing,
           COUNT)
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=0, beta=0, show=False)
    per_link = Fraction(2 * n) if w.slipped("own-chunk") else ring.bytes_sent
    w.step("Bytes over each ring link", f"2(p − 1)/p·n = 2·{p - 1}/{p}·n", per_link, SIZE)
    flat = crossing * per_link
    w.check("flat ring core bytes", flat, t.core_bytes_flat_ring)
    w.answer("rat", "bytes crossing the core with RAT", rat, SIZE, "2(r − 1)·n")
    w.answer("flat", "bytes crossing the core with a flat ring", flat, SIZE,
             f"{crossing} × {SIZE.term(per_link)}")
    w.answer("rat-factor", "RAT's core bytes in units of n", rat / n, NUMBER)
    w.answer("flat-factor", "the flat ring's core bytes in units of n", flat / n, NUMBER)
    w.answer("ratio", "flat ring over RAT", flat / rat, NUMBER)


# -- hierarchical all-reduce -------------------------------------------------------------------


@example("hierarchical-allreduce", title="Hierarchical all-reduce against a flat ring",
         source="Sergeev & Del Balso 2018 (Horovod hierarchical all-reduce); Träff & Hunold 2020",
         topic=TOPIC,
         givens=[Given("gpus", "GPUs per node", COUNT, 4, "g"), Given("nodes", "nodes", COUNT, 3, "N"),
                 Given("d", "gradient size", SIZE, "12 MB", "D"),
                 Given("intra_alpha", "start-up inside a node", TIME, "0 s", "α₁"),
                 Given("intra_bw", "bandwidth inside a node", RATE, "900 GB/s", "1/β₁"),
                 Given("inter_alpha", "start-up between nodes", TIME, "0 s", "α₂"),
                 Given("inter_bw", "bandwidth between nodes, per GPU", RATE, "50 GB/s", "1/β₂")],
         answer="hier-time", slips=("alpha-only", "beta-only", "own-chunk"))
def hierarchical_allreduce(w: Work) -> None:
    """Reduce-scatter in the node, ring all-reduce of each GPU's D/g slice across the nodes, all-gather
    in the node; against one flat ring over all g·N GPUs, each step as slow as its slowest link.

    Source: Sergeev & Del Balso 2018 (Horovod's hierarchical all-reduce).  The ring records are
    Patarasuk & Yuan 2009.
    """
    g, nodes, d = w.values("gpus", "nodes", "d")
    if g < 2 or nodes < 2:
        raise InputError("give at least 2 GPUs per node and 2 nodes: a level of 1 leaves nothing to compose")
    intra = LinkParams(alpha_s=w["intra_alpha"], beta_s_per_byte=1 / w["intra_bw"])
    inter = LinkParams(alpha_s=w["inter_alpha"], beta_s_per_byte=1 / w["inter_bw"])
    topology = Topology((Level(size=g, link=intra), Level(size=nodes, link=inter)))
    p = topology.p
    w.step("GPUs in all", "P = g·N", p, COUNT)
    # -- the hierarchical schedule, phase by phase (the library's flat records) --
    chunk = Fraction(d) / g
    rs = w.cost("reduce-scatter", "ring", p=g, n=d, alpha=intra.alpha_s, beta=intra.beta_s_per_byte,
                show=False)
    ar = w.cost("allreduce", "ring", p=nodes, n=chunk, alpha=inter.alpha_s, beta=inter.beta_s_per_byte,
                show=False)
    ag = w.cost("allgather", "ring", p=g, n=d, alpha=intra.alpha_s, beta=intra.beta_s_per_byte, show=False)
    shown = f"{g - 1}·{TIME.term(intra.alpha_s)} + {g - 1}/{g}·{SIZE.term(d)} / {_rate(w['intra_bw'])}"
    w.step("Phase 1, reduce-scatter inside each node (a ring of g)", f"(g − 1)·α₁ + (g − 1)/g·D·β₁ = {shown}",
           rs.time_s, TIME)
    w.answer("chunk", "slice each GPU carries across the nodes", chunk, SIZE, "D/g")
    shown = (f"{2 * (nodes - 1)}·{TIME.term(inter.alpha_s)} + 2·{nodes - 1}/{nodes}·{SIZE.term(chunk)} / "
             f"{_rate(w['inter_bw'])}")
    w.step("Phase 2, ring all-reduce of the slices across the nodes (a ring of N)",
           f"2(N − 1)·α₂ + 2(N − 1)/N·(D/g)·β₂ = {shown}", ar.time_s, TIME)
    w.step("Phase 3, all-gather inside each node (a ring of g)", "the same as phase 1", ag.time_s, TIME)
    rounds = nodes if w.slipped("own-chunk") else nodes - 1
    per_gpu = w.answer("inter-per-gpu", "bytes each GPU sends between nodes", 2 * rounds * chunk / nodes,
                       SIZE, f"2(N − 1)/N·D/g = 2·{nodes - 1}/{nodes}·{SIZE.term(chunk)}")
    w.answer("inter-per-node", "bytes each node sends to other nodes", g * per_gpu, SIZE,
             f"g × {SIZE.term(per_gpu)}")
    hier_inter = w.answer("hier-inter", "bytes crossing between nodes, all GPUs together", p * per_gpu, SIZE,
                          f"P × {SIZE.term(per_gpu)}")
    hier = rs.time_s + ar.time_s + ag.time_s
    if w.checking:
        library = hierarchical_cost(topology, d)
        w.check("hierarchical time and inter-node bytes", (hier, hier_inter),
                (library.time_s, library.bytes_crossing("inter")))
    # -- the flat ring over all P GPUs --
    links = topology.ring_links()
    w.step("Flat ring in rank order: links between nodes", "(N − 1) + 1 (the wrap-around)", links[1], COUNT)
    flat_phases = []
    for collective, name in (("reduce-scatter", "reduce-scatter"), ("allgather", "all-gather")):
        # every synchronous step waits for its slowest transfer: price it on each link, keep the slower
        costs = [w.cost(collective, "ring", p=p, n=d, alpha=lv.link.alpha_s, beta=lv.link.beta_s_per_byte,
                        show=False) for lv in topology.levels]
        slowest = max(costs, key=lambda c: c.time_s)
        flat_phases.append(slowest)
        w.step(f"Flat ring {name}, priced at the slower link",
               f"(P − 1)·α + (P − 1)/P·D·β: {p - 1} steps of {SIZE.term(Fraction(d) / p)}", slowest.time_s,
               TIME)
    flat = sum((c.time_s for c in flat_phases), Fraction(0))
    ring_rounds = p if w.slipped("own-chunk") else p - 1
    flat_inter = links[1] * 2 * ring_rounds * Fraction(d) / p
    if w.checking:
        reference = flat_ring(topology, d)
        w.check("flat ring time and inter-node bytes", (flat, flat_inter),
                (reference.time_s, reference.bytes_crossing("inter")))
    w.answer("flat-inter", "bytes crossing between nodes with the flat ring", flat_inter, SIZE,
             f"{links[1]} links × 2(P − 1)/P·D")
    w.answer("bytes-ratio", "flat ring's inter-node bytes over the hierarchical one's",
             flat_inter / hier_inter, NUMBER)
    w.answer("hier-rounds", "sequential steps of the hierarchical all-reduce",
             int(rs.rounds + ar.rounds + ag.rounds), COUNT, "2(g − 1) + 2(N − 1)")
    w.answer("flat-rounds", "sequential steps of the flat ring", 2 * (p - 1), COUNT, "2(P − 1)")
    w.answer("hier-latency", "start-up time of the hierarchical all-reduce",
             rs.latency_s + ar.latency_s + ag.latency_s, TIME, "2(g − 1)·α₁ + 2(N − 1)·α₂")
    w.answer("flat-latency", "start-up time of the flat ring",
             sum((c.latency_s for c in flat_phases), Fraction(0)), TIME,
             "2(P − 1)·α of the link that prices each phase")
    w.answer("hier-time", "time of the hierarchical all-reduce", hier, TIME, "phase 1 + phase 2 + phase 3")
    w.answer("flat-time", "time of the flat ring", flat, TIME, "reduce-scatter + all-gather")
    if hier:
        w.answer("speedup", "flat ring's time over the hierarchical one's", flat / hier, NUMBER,
                 f"{TIME.term(flat)} / {TIME.term(hier)}")
