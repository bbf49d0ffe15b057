"""Where the parallel groups of a step lie on the levels of a machine, against an explicit enumeration."""

from __future__ import annotations

import itertools

import pytest

from costmodel.errors import InputError
from costmodel.params import combine_link
from costmodel.step import TransformerShape, step
from costmodel.step.placement import canonical_order, place
from costmodel.topology import parse_link, topology_of

TOPO = topology_of(["4:1us:300GB/s:nvlink", "2:2us:100GB/s:rail", "8:5us:25GB/s:ib"])


def _outermost(topo, order, sizes, varying):
    """The outermost level any group crosses whose members differ only in the dimensions *varying*, from
    every group's members listed one by one (ranks numbered with *order*'s first dimension innermost)."""
    strides, stride = {}, 1
    for d in order:
        strides[d], stride = stride, stride * sizes[d]
    worst = None
    for coords in itertools.product(*(range(sizes[d]) for d in order)):
        base = dict(zip(order, coords, strict=True))
        if any(base[d] for d in varying):
            continue
        members = [sum(strides[d] * c for d, c in {**base, **dict(zip(varying, v, strict=True))}.items())
                   for v in itertools.product(*(range(sizes[d]) for d in varying))]
        for a, b in itertools.combinations(members, 2):
            lv = int(topo.level_of(a, b))
            worst = lv if worst is None else max(worst, lv)
    return worst


def _by_enumeration(topo, order, sizes):
    """Each dimension's outermost level, from every group's members listed one by one."""
    return {d: _outermost(topo, order, sizes, (d,)) for d in order}


@pytest.mark.parametrize("order", ["tp-dp-pp", "dp-tp-pp", "tp-pp-dp", "pp-dp-tp"])
@pytest.mark.parametrize("tp,dp,pp", [(4, 2, 8), (2, 4, 2), (8, 1, 8), (1, 16, 4), (3, 5, 2), (6, 2, 1)])
def test_levels_match_an_enumeration_of_every_group(order, tp, dp, pp):
    dims = tuple(order.split("-"))
    got = place(TOPO, order=order, tp=tp, dp=dp, pp=pp)
    assert got.levels == _by_enumeration(TOPO, dims, {"tp": tp, "dp": dp, "pp": pp})


ODD = topology_of(["3:1us:300GB/s:nvlink", "5:2us:100GB/s:rail", "4:5us:25GB/s:ib"])
"""Domains of 3 and 15 ranks: a group's first ranks fall at every residue, none aligned with a stride."""


@pytest.mark.parametrize("order", ["tp-dp-pp", "dp-tp-pp", "pp-tp-dp"])
@pytest.mark.parametrize("tp,dp,pp", [(5, 3, 4), (2, 6, 5), (4, 15, 1), (6, 5, 2), (10, 3, 2), (3, 2, 7)])
def test_levels_on_domains_no_stride_divides_match_an_enumeration(order, tp, dp, pp):
    dims = tuple(order.split("-"))
    got = place(ODD, order=order, tp=tp, dp=dp, pp=pp)
    assert got.levels == _by_enumeration(ODD, dims, {"tp": tp, "dp": dp, "pp": pp})


def _together_by_enumeration(topo, order, sizes, dim, level):
    """The members of rank 0's group over *dim* that share rank 0's domain of the level below *level*, from
    the group's members listed one by one and each one's coordinates on the levels."""
    strides, stride = {}, 1
    for d in order:
        strides[d], stride = stride, stride * sizes[d]
    members = [i * strides[dim] for i in range(sizes[dim])]
    home = topo.digits(0)[level:]
    return sum(1 for r in members if topo.digits(r)[level:] == home)


@pytest.mark.parametrize("order", ["tp-dp-pp", "dp-tp-pp", "tp-pp-dp"])
@pytest.mark.parametrize("tp,dp,pp", [(4, 2, 8), (2, 4, 2), (1, 16, 4), (1, 64, 1), (3, 5, 2), (2, 8, 4)])
def test_ranks_sharing_a_domain_match_an_enumeration(order, tp, dp, pp):
    dims = tuple(order.split("-"))
    sizes = {"tp": tp, "dp": dp, "pp": pp}
    got = place(TOPO, order=order, tp=tp, dp=dp, pp=pp)
    expected = {d: _together_by_enumeration(TOPO, dims, sizes, d, lv) for d, lv in got.levels.items() if lv}
    assert got.together == expected



@pytest.mark.parametrize("order", ["tp-cp-dp-pp", "dp-tp-cp-pp", "tp-pp-cp-dp"])
@pytest.mark.parametrize("tp,cp,dp,pp", [(4, 2, 2, 4), (2, 3, 4, 2), (1, 2, 8, 4), (3, 1, 5, 2), (2, 2, 8, 1)])
def test_ranks_of_a_dp_cp_group_sharing_a_domain_match_an_enumeration(order, tp, cp, dp, pp):
    """The gradient group spans dp × cp ranks, two digits of the rank numbering that need not be adjacent."""
    dims = tuple(order.split("-"))
    sizes = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
    strides, stride = {}, 1
    for d in dims:
        strides[d], stride = stride, stride * sizes[d]
    got = place(TOPO, order=order, tp=tp, cp=cp, dp=dp, pp=pp)
    for dim, level in got.together.items():
        within = ("dp", "cp") if dim == "dp" else (dim,)
        members = [sum(k * strides[d] for d, k in zip(within, ks, strict=True))
                   for ks in itertools.product(*(range(sizes[d]) for d in within))]
        home = TOPO.digits(0)[got.levels[dim]:]
        assert level == sum(1 for r in members if TOPO.digits(r)[got.levels[dim]:] == home), (dim, got)


def test_a_billion_way_data_parallel_group_is_placed_without_listing_its_ranks():
    """Rank 0's group is counted digit by digit and each other dimension's first ranks over one period mod a
    node: 10^9 data-parallel ranks, 8 to a node, are placed at once (listing them took minutes)."""
    topo = topology_of(["8:2us:300GB/s:nvlink", "125000000:5us:25GB/s:ib"])
    got = place(topo, tp=1, dp=10**9, pp=1)
    assert got.together == {"dp": 8}
    wide = place(topo, tp=2, cp=2, dp=25 * 10**7, pp=1)
    assert wide.together == {"dp": 4}  # 2 cp × 2 dp ranks beside tp 2
    assert wide.levels == {"tp": 0, "cp": 0, "dp": 1, "pp": None}

def test_a_step_on_levels_equals_the_step_with_the_levels_links():
    shape = TransformerShape(layers=8, hidden=1024, heads=16, sequence=1024, vocabulary=32000)
    kw = {"shape": shape, "dp": 4, "tp": 4, "pp": 2, "microbatches": 4, "peak_flops": "312e12"}
    on_levels = step(topology=TOPO, **kw)
    by_hand = step(tp_link=parse_link("1us:300GB/s"), dp_link=parse_link("5us:25GB/s"),
                   pp_link=parse_link("5us:25GB/s"), **kw)
    assert on_levels.step_s == by_hand.step_s
    assert "placement: tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)" in on_levels.notes


def test_an_explicit_link_wins_over_the_levels():
    kw = {"forward_s": ["1ms"] * 2, "backward_s": ["2ms"] * 2, "gradient_bytes": ["1MiB"] * 2, "dp": 64}
    a = step(topology=TOPO, dp_link=parse_link("1us:300GB/s"), **kw)
    b = step(link=parse_link("1us:300GB/s"), **kw)
    assert a.step_s == b.step_s


@pytest.mark.parametrize("kwargs,message", [
    ({"order": "tp-dp"}, "order='tp-dp' is not an order of tp, dp and pp"),
    ({"order": "tp-tp-pp"}, "is not an order"),
    ({"dp": 128}, "the topology holds 64 ranks"),
    ({"link": combine_link(alpha=0, beta=0)}, "link= and topology= were both given"),
])
def test_bad_placements(kwargs, message):
    kw = {"forward_s": ["1ms"] * 2, "backward_s": ["2ms"] * 2, "gradient_bytes": ["1MiB"] * 2, "dp": 2,
          "topology": TOPO, **kwargs}
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        step(**kw)


def test_order_without_levels_is_refused():
    with pytest.raises(InputError, match="pass topology= too"):
        step(forward_s=["1ms"], backward_s=["2ms"], order="dp-tp-pp")


def _dense_dp_by_enumeration(topo, order, sizes):
    """The outermost level of the data-parallel groups: the ranks varying in both ep and (expert) dp."""
    return _outermost(topo, order, sizes, ("ep", "dp"))


@pytest.mark.parametrize("order", ["tp-ep-dp-pp", "tp-dp-ep-pp", "ep-dp-tp-pp", "pp-tp-ep-dp"])
@pytest.mark.parametrize("tp,dp,ep,pp", [(2, 8, 2, 2), (1, 16, 8, 4), (4, 4, 4, 2), (2, 8, 4, 1)])
def test_expert_groups_match_an_enumeration(order, tp, dp, ep, pp):
    dims = tuple(order.split("-"))
    sizes = {"tp": tp, "ep": ep, "dp": dp // ep, "pp": pp}
    got = place(TOPO, order=order, tp=tp, dp=dp, pp=pp, ep=ep)
    by_hand = _by_enumeration(TOPO, dims, sizes)
    assert got.levels["tp"] == by_hand["tp"] and got.levels["pp"] == by_hand["pp"]
    assert got.levels["ep"] == by_hand["ep"] and got.levels["edp"] == by_hand["dp"]
    assert got.levels["dp"] == _dense_dp_by_enumeration(TOPO, dims, sizes)


def test_an_order_without_ep_puts_it_inside_dp():
    a = place(TOPO, order="tp-dp-pp", tp=2, dp=8, pp=2, ep=4)
    b = place(TOPO, order="tp-ep-dp-pp", tp=2, dp=8, pp=2, ep=4)
    assert a.levels == b.levels and a.order == b.order == ("tp", "ep", "dp", "pp")
    with pytest.raises(InputError, match="parts ep from dp"):
        place(TOPO, order="ep-tp-dp-pp", tp=2, dp=8, pp=2, ep=4)


@pytest.mark.parametrize("order", ["tp-cp-ep-dp-pp", "tp-dp-pp", "pp-tp-cp-ep-dp", "tp-cp-dp-ep-pp"])
@pytest.mark.parametrize("sizes", [(2, 2, 4, 4, 2), (1, 2, 8, 8, 2), (2, 4, 2, 2, 1), (1, 4, 4, 8, 4)])
def test_cp_and_ep_groups_match_megatron_cores_two_grids(order, sizes):
    tp, cp, dp, ep, pp = sizes
    # megatron/core/parallel_state.py: the dense grid tp × cp × dp × pp and, over the same ranks, the expert
    # grid tp × ep × expert-dp × pp with cp = 1 and expert-dp = world / (tp·ep·pp), both in *order*
    full = canonical_order(order)
    dense = tuple(d for d in full if d != "ep")
    expert = tuple(d for d in full if d != "cp")
    got = place(TOPO, order=order, tp=tp, cp=cp, dp=dp, pp=pp, ep=ep)
    by_dense = _by_enumeration(TOPO, dense, {"tp": tp, "cp": cp, "dp": dp, "pp": pp})
    by_expert = _by_enumeration(TOPO, expert, {"tp": tp, "ep": ep, "dp": dp * cp // ep, "pp": pp})
    assert (got.levels["tp"], got.levels["cp"], got.levels["pp"]) == (by_dense["tp"], by_dense["cp"], by_dense["pp"])
    assert got.levels["ep"] == by_expert["ep"] and got.levels["edp"] == by_expert["dp"]
    # the gradient reduction's group: the dp × cp ranks (the helper's two inner dimensions renamed)
    renamed = tuple({"cp": "ep"}.get(d, d) for d in dense)
    assert got.levels["dp"] == _dense_dp_by_enumeration(TOPO, renamed, {"tp": tp, "ep": cp, "dp": dp, "pp": pp})
    assert got.order == tuple(d for d in full)


def test_an_expert_group_lies_inside_a_dp_cp_group():
    # rank = t + tp·(c + cp·(d + dp·p)) and = t + tp·(e + ep·(f + edp·p)): the ep ranks of one expert group
    # share t and p, so they are among the dp × cp ranks of one gradient-reduction group
    tp, cp, dp, ep, pp = 2, 2, 4, 4, 2
    edp = dp * cp // ep
    for t, f, p in itertools.product(range(tp), range(edp), range(pp)):
        members = {t + tp * (e + ep * (f + edp * p)) for e in range(ep)}
        dense = {t + tp * (c + cp * (d + dp * p)) for c in range(cp) for d in range(dp)}
        assert members <= dense


def test_an_order_that_parts_ep_from_dp_and_cp_is_refused():
    with pytest.raises(InputError, match="parts ep from dp and cp"):
        place(TOPO, order="cp-tp-ep-dp-pp", tp=2, cp=2, dp=4, pp=1, ep=4)
    with pytest.raises(InputError, match=r"^ep=3 does not divide dp·cp = 8"):
        place(TOPO, tp=1, cp=2, dp=4, pp=1, ep=3)


def test_a_data_parallel_group_sharing_nodes_says_how_its_network_is_priced():
    """On a GPU's machine a data-parallel group with k ranks in each node is priced at one GPU's network
    rate; the note says so and gives the link of k GPUs' NICs (capped at the node's own bus bandwidth),
    which priced instead is faster and leaves the note out."""
    shape = TransformerShape(layers=4, hidden=1024, heads=16, sequence=1024, vocabulary=32000)
    shared = step(shape=shape, dp=16, gpu="a100-80gb")
    (note,) = [n for n in shared.notes if n.startswith("dp: ")]
    assert note.startswith("dp: 8 ranks of each group share a node") and "one GPU's rate, 24 GB/s" in note
    link = note.rsplit("dp_link=", 1)[1]
    assert link == "1.079µs:192GB/s"  # 8 × 24 GB/s, under the NVSwitch's 233.2 GB/s
    wide = step(shape=shape, dp=16, gpu="a100-80gb", dp_link=link)
    assert wide.dp_comm_s < shared.dp_comm_s and not any(n.startswith("dp: ") for n in wide.notes)
    for kw in ({"dp": 2, "tp": 8}, {"dp": 8}):  # one rank of each group per node; one node
        assert not any(n.startswith("dp: ") for n in step(shape=shape, gpu="a100-80gb", **kw).notes), kw
