"""Properties: parsers raise only costmodel errors on any text; mixing keeps rows stochastic; ρ matches numpy."""

from __future__ import annotations

import contextlib
from fractions import Fraction
from functools import partial

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from costmodel.consensus.graphs import from_edges, parse_edge_list
from costmodel.consensus.mixing import WEIGHTS, mixing_matrix, parse_matrix
from costmodel.consensus.spectral import parse_target, spectrum
from costmodel.errors import CostmodelError
from costmodel.exact import parse_numbers

TEXT = st.text(alphabet=st.sampled_from("0123456789 ,.#/-+eE\nxnaif\t"), max_size=60) | st.text(max_size=40)


@given(TEXT)
def test_parsers_raise_only_costmodel_errors(text):
    for parse in (parse_edge_list, parse_matrix, partial(parse_numbers, what="values"), parse_target):
        with contextlib.suppress(CostmodelError):
            parse(text)


@st.composite
def connected_graphs(draw):
    p = draw(st.integers(min_value=2, max_value=12))
    # a random spanning tree, then extra edges
    edges = {(draw(st.integers(min_value=0, max_value=i - 1)), i) for i in range(1, p)}
    extra = draw(st.lists(st.tuples(st.integers(0, p - 1), st.integers(0, p - 1)), max_size=2 * p))
    edges |= {(min(u, v), max(u, v)) for u, v in extra if u != v}
    return from_edges(sorted(edges), p=p)


@given(connected_graphs(), st.sampled_from(WEIGHTS))
def test_mixing_rows_sum_to_one_and_rho_matches_numpy(graph, weights):
    m = mixing_matrix(graph, weights)
    w = np.zeros((graph.p, graph.p))
    for i, row in enumerate(m.rows()):
        total = sum(x for _, x in row)
        assert total == 1 if m.exact else abs(total - 1) < 1e-12
        for j, x in row:
            w[i, j] = float(x)
    values = np.linalg.eigvals(w)
    rho = np.abs(np.delete(values, np.argmin(np.abs(values - 1)))).max()
    s = spectrum(m)
    assert abs(s.rho - rho) < 1e-9
    assert s.converges  # connected, and every scheme keeps a self-weight or is best-constant
    if s.rho_exact is not None:
        assert isinstance(s.rho_exact, Fraction)
