"""Graph generators: adjacency written out by hand, seeds, edge-list files, and a table of bad input."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from costmodel.consensus.graphs import (
    GRAPHS,
    Circulant,
    complete,
    erdos_renyi,
    exponential,
    from_edges,
    generate,
    hypercube,
    k_ring,
    load_edge_list,
    parse_edge_list,
    random_regular,
    recognise,
    resolve_graph,
    ring,
    star,
    torus,
)
from costmodel.errors import InputError, ParseError, UnknownNameError


def adjacency(graph) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(n) for n in graph.neighbours)


def is_simple_undirected(graph) -> bool:
    nbrs = adjacency(graph)
    return all(i not in n and len(set(n)) == len(n) and all(i in nbrs[j] for j in n) for i, n in enumerate(nbrs))


# -- structured graphs, by hand ---------------------------------------------------------------------------


def test_ring():
    assert adjacency(ring(4)) == ((1, 3), (0, 2), (1, 3), (0, 2))
    assert adjacency(ring(5))[0] == (1, 4)
    assert adjacency(ring(2)) == ((1,), (0,))  # one edge, not two
    assert ring(3).degree == 2 and ring(3).edge_count == 3


def test_k_ring():
    assert adjacency(k_ring(8, k=2))[0] == (1, 2, 6, 7)
    assert k_ring(8, k=1).neighbours == ring(8).neighbours
    wide = k_ring(5, k=3)  # k beyond p/2 wraps onto itself: the complete graph
    assert adjacency(wide) == adjacency(complete(5))
    assert any("complete graph" in n for n in wide.notes)
    # by its degree (the command line's): 2k < p, up to the complete graph of an odd p
    assert generate("k-ring", 8, degree=6).degree == 6
    assert adjacency(generate("k-ring", 7, degree=6)) == adjacency(complete(7))


def test_torus():
    g = torus(12)  # 3 × 4
    assert g.label == "2-D torus 3 × 4"
    # worker 5 = (row 1, col 1): up (0,1)=1, down (2,1)=9, left (1,0)=4, right (1,2)=6
    assert g.neighbours[5] == (1, 4, 6, 9)
    assert g.degree == 4
    two = torus(6, rows=2)  # up and down coincide: degree 3
    assert two.neighbours[0] == (1, 2, 3) and two.degree == 3
    assert is_simple_undirected(torus(20))


def test_hypercube():
    g = hypercube(8)
    for i in range(8):
        assert g.neighbours[i] == tuple(sorted(i ^ (1 << b) for b in range(3)))
    assert hypercube(2).neighbours[0] == (1,)


def test_complete_and_star():
    assert adjacency(complete(4)) == ((1, 2, 3), (0, 2, 3), (0, 1, 3), (0, 1, 2))
    assert adjacency(star(4)) == ((1, 2, 3), (0,), (0,), (0,))
    assert star(4).degree is None and star(4).max_degree == 3 and star(4).edge_count == 3


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 12, 16, 33, 1000])
def test_exponential_graph_receives_from_powers_of_two(p):
    g = exponential(p)
    tau = (p - 1).bit_length()  # ⌈log2 p⌉
    want = sorted({pow(2, t) % p for t in range(tau)})
    for i in (0, 1, p - 1):
        assert g.neighbours[i] == tuple(sorted((i + s) % p for s in want))
    assert g.degree == len(want) == tau
    assert g.directed == (p > 3)  # 2: one edge; 3: offsets ±1


def test_structured_graphs_are_lazy_and_big():
    g = ring(10**6)
    assert len(g.neighbours) == 10**6
    assert g.neighbours[-1] == (0, 999_998)
    assert g.neighbours[1:3] == ((0, 2), (1, 3))
    assert g.edge_count == 10**6


# -- random graphs ------------------------------------------------------------------------------------------


def test_random_regular_is_regular_simple_and_seeded():
    g = random_regular(200, degree=4, seed=5)
    assert set(g.degrees()) == {4}
    assert is_simple_undirected(g)
    assert g.edge_count == 400
    assert g == random_regular(200, degree=4, seed=5)
    assert g.neighbours != random_regular(200, degree=4, seed=6).neighbours
    assert random_regular(10, degree=7, seed=1).degree == 7  # dense: drawn as a sparse complement


def test_random_graphs_leave_the_global_rng_alone():
    state = random.getstate()
    a = random_regular(50, degree=3, seed=None)
    b = erdos_renyi(60, prob=0.2, seed=None)
    assert random.getstate() == state
    assert a == random_regular(50, degree=3, seed=0)  # no seed means seed 0, not "random"
    assert b == erdos_renyi(60, prob=0.2, seed=0)


def test_erdos_renyi_density():
    g = erdos_renyi(2000, prob=0.01, seed=1)
    expected = 0.01 * 2000 * 1999 / 2  # 19990 edges; the standard deviation is about 140
    assert abs(g.edge_count - expected) < 5 * 141
    assert is_simple_undirected(g)
    assert erdos_renyi(30, degree=29).edge_count == 435  # q = 1: complete
    assert erdos_renyi(400, degree=20, seed=2).label.startswith("Erdős–Rényi G(400, 0.05")


# -- edge lists ---------------------------------------------------------------------------------------------


def test_edge_list_text():
    g = parse_edge_list("# a square\n0 1\n1,2  # comma\n\n2 3\n3 0\n1 0\n")
    assert adjacency(g) == ((1, 3), (0, 2), (1, 3), (0, 2))  # the repeated pair counts once
    assert g.name == "edges"
    assert parse_edge_list("0 1\n", p=2).p == 2


def test_edge_list_file(tmp_path: Path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n", encoding="utf-8")
    g = load_edge_list(path)
    assert g.p == 3 and g.path == str(path)
    assert g.label == "edge list g.txt"


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("0 1\n1 x\n", 2, "'1 x' is not an edge"),
        ("0 1\n\n2 2\n", 3, "self-loop"),
        ("0 1 2\n", 1, "is not an edge"),
        ("0 -1\n", 1, "is not an edge"),
        ("# nothing\n", None, "no edges found"),
    ],
)
def test_edge_list_errors_name_the_line(text, line, needle):
    with pytest.raises(ParseError) as info:
        parse_edge_list(text, path="g.txt")
    assert info.value.line == line
    assert needle in str(info.value)
    assert str(info.value).startswith("g.txt:" + (f"{line}:" if line else ""))


def test_recognise():
    shuffled_cycle = from_edges([(0, 3), (3, 1), (1, 4), (4, 2), (2, 0)])
    assert recognise(shuffled_cycle) == Circulant((5,), ((1, 4),))
    assert recognise(from_edges([(0, 1), (0, 2), (1, 2)])) == Circulant((3,), ((1, 2),))
    assert recognise(from_edges([(0, 1), (1, 2), (2, 3)])) is None  # a path
    assert recognise(star(5)) is None


# -- names and options ------------------------------------------------------------------------------------------


def test_generate_by_name_and_alias():
    assert generate("cycle", 5).neighbours == ring(5).neighbours
    assert generate("k-ring", 8, degree=4).neighbours == k_ring(8, k=2).neighbours
    assert generate("Erdos_Renyi", 50, prob="0.3", seed=1) == erdos_renyi(50, prob=0.3, seed=1)
    assert resolve_graph("exp").name == "exponential"
    assert set(GRAPHS) >= {"ring", "k-ring", "torus", "hypercube", "complete", "star", "exponential",
                           "random-regular", "erdos-renyi", "edges"}


BAD = [
    (lambda: ring(1), InputError, "p=1 is too small"),
    (lambda: ring(2.0), InputError, "is not an integer"),
    (lambda: ring(2**25), InputError, "too large"),
    (lambda: k_ring(8, k=0), InputError, "k=0 is not a positive integer"),
    (lambda: torus(13), InputError, "p=13 is prime"),
    (lambda: torus(12, rows=5), InputError, "rows=5 does not split p=12"),
    (lambda: hypercube(12), InputError, "p=12 is not a power of two; a hypercube has 2^d workers, e.g. p=8 or 16"),
    (lambda: random_regular(5, degree=3), InputError, "p × degree = 5 × 3 is odd"),
    (lambda: random_regular(5, degree=5), InputError, "degree=5 is not between 1 and p − 1 = 4"),
    (lambda: random_regular(60, degree=2, seed=2), InputError, "disconnected (3 components"),
    (lambda: random_regular(20, degree=3, seed=-1), InputError, "seed=-1"),
    (lambda: erdos_renyi(50, prob=0.01), InputError, "disconnected"),
    (lambda: erdos_renyi(50), InputError, "give one of an edge probability"),
    (lambda: erdos_renyi(50, prob=0.2, degree=3), InputError, "give one of an edge probability"),
    (lambda: erdos_renyi(50, prob=1.5), InputError, "prob=1.5 is not in (0, 1]"),
    (lambda: erdos_renyi(50, prob="x"), InputError, "'x' is not a number"),
    (lambda: from_edges([(0, 1), (2, 3)]), InputError, "2 components"),
    (lambda: from_edges([(0, 0)]), InputError, "self-loop"),
    (lambda: from_edges([]), InputError, "no edges"),
    (lambda: from_edges([(0, 5)], p=3), InputError, "worker 5 is out of range for p=3"),
    (lambda: generate("rign", 4), UnknownNameError, "unknown graph 'rign'; did you mean 'ring'?"),
    (lambda: generate("ring"), InputError, "no worker count given"),
    (lambda: generate("ring", 4, degree=2), InputError, "the ring graph takes no degree"),
    (lambda: generate("hypercube", 8, seed=1), InputError, "takes no seed"),
    (lambda: generate("k-ring", 8), InputError, "k-ring needs a degree"),
    (lambda: generate("k-ring", 8, degree=3), InputError, "degree=3 is not an even number"),
    (lambda: generate("k-ring", 8, degree=10), InputError,
     "degree=10 is not below p = 8; a k-ring of 8 workers has degree 2k ≤ p − 1 = 7, e.g. degree=6 "
     "(3 neighbours on each side)"),
    (lambda: generate("k-ring", 8, degree=8), InputError, "degree=8 is not below p = 8"),
    (lambda: generate("k-ring", 2, degree=2), InputError, "degree=2 is not below p = 2; a k-ring of 2 workers "
     "has degree 2k ≤ p − 1 = 1, use the ring"),
    (lambda: generate("random-regular", 8), InputError, "needs a degree"),
    (lambda: generate("edges"), InputError, "needs an edge-list file"),
    (lambda: load_edge_list("/nonexistent/g.txt"), ParseError, "cannot read the edge list"),
    # refused before drawing: G(20000, 1/2) has 20000·19999/4 = 99,995,000 edges, 10^8 Python tuples
    (lambda: erdos_renyi(20_000, prob=0.5), InputError,
     "an Erdős–Rényi graph G(20000, 0.5) has about 99,995,000 edges, more than the 250,000 costmodel builds "
     "one by one; lower the edge probability or p"),
    (lambda: erdos_renyi(2**24, prob=1), InputError, "about 140,737,479,966,720 edges"),
    (lambda: random_regular(2**24, degree=3), InputError,
     "a random 3-regular graph on 16777216 workers has 25,165,824 edges, more than the 250,000"),
    (lambda: parse_edge_list("".join(f"{i} {i + 1}\n" for i in range(250_001)), path="path.txt"), ParseError,
     "path.txt:250001: more than 250,000 edges"),
]


@pytest.mark.parametrize(("call", "error", "needle"), BAD, ids=[b[2][:40] for b in BAD])
def test_bad_input(call, error, needle):
    with pytest.raises(error) as info:
        call()
    message = str(info.value)
    assert needle in message
    assert "\n" not in message
