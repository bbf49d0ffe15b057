"""Mixing matrices: weights worked out by hand, the checks and what they say, user matrix files."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from costmodel.consensus.graphs import (
    complete,
    erdos_renyi,
    exponential,
    from_edges,
    hypercube,
    ring,
    star,
    torus,
)
from costmodel.consensus.mixing import (
    WEIGHTS,
    from_matrix,
    load_matrix,
    mixing_matrix,
    parse_matrix,
    resolve_weights,
    sparse_matrix,
)
from costmodel.errors import InputError, ParseError, UnknownNameError


def dense(mixing) -> list[list[Fraction]]:
    p = mixing.p
    out = [[Fraction(0)] * p for _ in range(p)]
    for i, row in enumerate(mixing.rows()):
        for j, w in row:
            out[i][j] = w
    return out


def test_uniform_on_the_ring_is_the_seeds_one_third_rule():
    w = dense(mixing_matrix(ring(4)))
    third = Fraction(1, 3)
    assert w == [[third, third, 0, third], [third, third, third, 0], [0, third, third, third],
                 [third, 0, third, third]]


def test_metropolis_on_a_star():
    # hub degree 3, leaves 1: edge weight 1/(1 + max(3, 1)) = 1/4; hub keeps 1 − 3/4, a leaf 1 − 1/4
    w = dense(mixing_matrix(star(4), "metropolis"))
    assert w[0] == [Fraction(1, 4)] * 4
    assert w[1] == [Fraction(1, 4), Fraction(3, 4), 0, 0]


def test_lazy_is_half_identity_plus_half_metropolis():
    g = from_edges([(0, 1), (1, 2), (2, 3), (1, 3)])
    lazy, metro = dense(mixing_matrix(g, "lazy")), dense(mixing_matrix(g, "metropolis"))
    for i in range(4):
        for j in range(4):
            assert lazy[i][j] == Fraction(int(i == j), 2) + metro[i][j] / 2


def test_best_constant_on_the_4_ring_is_one_third():
    # L of the 4-ring has eigenvalues 0, 2, 2, 4: α* = 2/(2 + 4) = 1/3, so W = I − L/3: the uniform W
    m = mixing_matrix(ring(4), "best-constant")
    assert m.alpha == Fraction(1, 3)
    assert dense(m) == dense(mixing_matrix(ring(4)))
    assert m.exact and m.laplacian.connectivity_exact == 2 and m.laplacian.largest_exact == 4


def test_best_constant_can_have_negative_self_weights():
    # star of 6: L has 0, 1 (×4), 6: α* = 2/7, the hub keeps 1 − 5·2/7 = −3/7
    m = mixing_matrix(star(6), "best-constant")
    assert m.alpha == Fraction(2, 7)
    assert dense(m)[0][0] == Fraction(-3, 7)
    assert not m.nonnegative
    assert any("-3/7" in n or "−3/7" in n for n in m.notes)


GRAPHS = [ring(5), torus(12), hypercube(8), complete(5), star(5), erdos_renyi(30, prob=0.3, seed=2),
          from_edges([(0, 1), (1, 2), (2, 0), (2, 3)])]


@pytest.mark.parametrize("graph", GRAPHS, ids=[g.label for g in GRAPHS])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_rows_sum_to_one_and_flags_match_the_matrix(graph, weights):
    m = mixing_matrix(graph, weights)
    w = dense(m)
    p = len(w)

    def same(a, b):  # exact weights exactly; best-constant α* on a general graph is a float
        return a == b if m.exact else abs(a - b) <= 1e-12

    assert m.exact or weights == "best-constant"  # α* is irrational on most graphs
    assert all(same(sum(row), 1) for row in w)
    columns = [sum(w[i][j] for i in range(p)) for j in range(p)]
    assert m.column_stochastic == all(same(c, 1) for c in columns)
    assert m.symmetric == all(same(w[i][j], w[j][i]) for i in range(p) for j in range(p))
    assert m.nonnegative == all(x >= 0 for row in w for x in row)
    # off the diagonal, weights only on edges
    for i, row in enumerate(w):
        assert {j for j, x in enumerate(row) if x != 0 and j != i} <= set(graph.neighbours[i])
    # the float matrix of the numeric paths is the same matrix
    assert np.allclose(sparse_matrix(m).toarray(), np.array(w, dtype=float), rtol=0, atol=1e-15)


def test_uniform_on_a_star_is_not_column_stochastic_and_says_the_mean_drifts():
    m = mixing_matrix(star(4))
    # column 0: 1/4 (hub) + 3 × 1/2 (leaves) = 7/4
    assert m.row_stochastic and not m.column_stochastic and not m.doubly_stochastic
    (note,) = m.notes
    assert "column 0 sums to 7/4" in note and "mean" in note and "metropolis" in note
    assert mixing_matrix(star(4), "metropolis").doubly_stochastic


def test_uniform_on_a_large_irregular_graph_is_checked_in_floats():
    g = erdos_renyi(25_000, degree=14, seed=1)
    m = mixing_matrix(g)
    assert not m.column_stochastic
    assert "not column-stochastic" in m.notes[0]


def test_exponential_graph_uniform_weights_are_doubly_stochastic_not_symmetric():
    m = mixing_matrix(exponential(8))
    w = dense(m)
    assert w[0] == [Fraction(1, 4), Fraction(1, 4), Fraction(1, 4), 0, Fraction(1, 4), 0, 0, 0]
    assert m.doubly_stochastic and not m.symmetric
    assert "normal" in m.notes[0]


def test_weight_names():
    assert resolve_weights("Metropolis-Hastings") == "metropolis"
    assert resolve_weights("lazy_metropolis") == "lazy"
    assert resolve_weights("best") == "best-constant"


# -- user matrices -------------------------------------------------------------------------------------------

HALF = Fraction(1, 2)
OSCILLATING = [[0, HALF, 0, HALF], [HALF, 0, HALF, 0], [0, HALF, 0, HALF], [HALF, 0, HALF, 0]]


def test_parse_matrix_exact_decimals_and_ratios():
    m = parse_matrix("# the 4-ring\n1/3, 1/3, 0, 1/3\n1/3 1/3 1/3 0\n0 0.25 0.5 0.25\n0.5 0 0 0.5\n")
    assert m.exact and m.matrix[2] == (0, Fraction(1, 4), Fraction(1, 2), Fraction(1, 4))
    assert m.graph.name == "matrix" and m.graph.directed  # 3 → 1 has a weight, 1 → 3 none
    assert not m.symmetric and not m.column_stochastic


def test_rounded_decimals_are_accepted_as_floats_with_a_note():
    third = "0.3333333333333333"
    m = parse_matrix(f"{third} {third} {third}\n{third} {third} {third}\n{third} {third} {third}\n")
    assert not m.exact
    assert "rounded decimals" in m.notes[0]


def test_matrix_on_a_graph_must_use_its_edges(tmp_path: Path):
    path = tmp_path / "w.csv"
    path.write_text("\n".join(",".join(str(x) for x in row) for row in OSCILLATING), encoding="utf-8")
    m = load_matrix(path, graph=ring(4))
    assert m.graph.label == "ring of 4" and m.path == str(path)
    assert mixing_matrix(ring(4), str(path)).matrix == m.matrix
    with pytest.raises(InputError, match=r"W\[0\]\[1\] = 0.5 but worker 0 does not receive from 1"):
        load_matrix(path, graph=from_edges([(0, 2), (2, 1), (1, 3), (3, 0)]))


def test_negative_weights_are_reported():
    m = from_matrix([["1.5", "-0.5"], ["-0.5", "1.5"]])
    assert not m.nonnegative
    assert "negative weights (the smallest is -0.5)" in m.notes[0]


BAD = [
    (lambda: parse_matrix("0.5 0.5\n0.5 0.4\n", path="w.txt"), ParseError, "w.txt:2: row 1 sums to 0.9, not 1"),
    (lambda: parse_matrix("0.5 0.5\n0.5 x\n", path="w.txt"), ParseError, "w.txt:2: 'x' is not a number"),
    (lambda: parse_matrix("1 0 0\n0 1\n", path="w.txt"), ParseError, "w.txt:1: row has 3 entries, expected 2"),
    # a tall file fails at its first row past the width, not after reading (and holding) every row
    (lambda: parse_matrix("0.5 0.5\n" * 3, path="w.txt"), ParseError,
     "w.txt:3: row 2 is one too many: the rows have 2 entries, and W must be square"),
    (lambda: parse_matrix("# empty\n", path="w.txt"), ParseError, "no rows found"),
    (lambda: parse_matrix("nan 0\n0 1\n", path="w.txt"), ParseError, "'nan' is not a number"),
    (lambda: parse_matrix("1 0\n0 1\n"), InputError, "the nonzero weights of W"),
    (lambda: from_matrix([[1]]), InputError, "at least 2 workers"),
    (lambda: from_matrix([[1, 0], [0]]), InputError, "row 1 has 1 entries, expected 2"),
    (lambda: from_matrix([[0.5, 0.5], [0.5, 0.5]], graph=ring(3)), InputError, "W has 2 rows but the ring of 3"),
    (lambda: mixing_matrix(ring(4), "metropolos"), UnknownNameError, "did you mean 'metropolis'?"),
    (lambda: mixing_matrix(ring(4), "no/such/file.csv"), ParseError, "cannot read the weights"),
    (lambda: mixing_matrix(exponential(8), "metropolis"), InputError, "need an undirected graph"),
    (lambda: mixing_matrix(exponential(8), "best-constant"), InputError, "need an undirected graph"),
]


@pytest.mark.parametrize(("call", "error", "needle"), BAD, ids=[b[2][:40] for b in BAD])
def test_bad_input(call, error, needle):
    with pytest.raises(error) as info:
        call()
    assert needle in str(info.value)
    assert "\n" not in str(info.value)
