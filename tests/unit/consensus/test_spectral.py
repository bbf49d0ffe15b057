"""ρ, the spectral gap and rounds: closed forms against eigenvalues computed independently.

The independent reference is the eigenvalues of the dense W built from the exact rows
(``numpy.linalg.eigvalsh`` when W is exactly symmetric, ``numpy.linalg.eigvals`` otherwise),
with the consensus eigenvalue (the one nearest 1) removed.  The large cases share one matrix
per module (fixtures), and tests of a solver path lower the dense cut-off rather than grow p.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import costmodel.consensus.laplacian as laplacian_module
import costmodel.consensus.spectral as spectral_module
from costmodel.consensus.graphs import (
    complete,
    erdos_renyi,
    exponential,
    from_edges,
    hypercube,
    k_ring,
    random_regular,
    ring,
    star,
    torus,
)
from costmodel.consensus.laplacian import laplacian_extremes
from costmodel.consensus.mixing import WEIGHTS, from_matrix, mixing_matrix
from costmodel.consensus.spectral import (
    Spectrum,
    parse_target,
    rounds_to_target,
    spectrum,
)
from costmodel.errors import InputError
from costmodel.references import THAKUR_2005


def dense(mixing) -> np.ndarray:
    """W as a dense float matrix, from its exact rows."""
    p = mixing.p
    w = np.zeros((p, p))
    for i, row in enumerate(mixing.rows()):
        if row:
            cols, values = zip(*row, strict=True)
            w[i, list(cols)] = [float(x) for x in values]
    return w


def eigen_rho(mixing) -> float:
    """max |λ| over W's eigenvalues other than the one nearest 1, from the dense matrix."""
    w = dense(mixing)
    # the symmetric solver is ~10× faster and as independent of the code under test
    values = np.linalg.eigvalsh(w) if np.array_equal(w, w.T) else np.linalg.eigvals(w)
    return float(np.abs(np.delete(values, np.argmin(np.abs(values - 1)))).max())


SMALL = [ring(p) for p in (2, 3, 4, 5, 6, 7, 8, 13)] + [k_ring(p, k=k) for p in (7, 12) for k in (2, 3)] + [
    torus(6, rows=2), torus(9), torus(20), hypercube(2), hypercube(16), complete(2), complete(6),
    star(2), star(3), star(7), exponential(5), exponential(12), exponential(16), exponential(33),
    random_regular(40, degree=3, seed=1), erdos_renyi(60, prob=0.2, seed=4),
    from_edges([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)])]


@pytest.mark.parametrize("graph", SMALL, ids=[g.label for g in SMALL])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_rho_matches_the_eigenvalues(graph, weights):
    if graph.directed and weights != "uniform":
        pytest.skip("only uniform weights on a directed graph")
    m = mixing_matrix(graph, weights)
    s = spectrum(m)
    assert s.rho == pytest.approx(eigen_rho(m), abs=1e-10)
    assert s.rho + s.spectral_gap == pytest.approx(1, abs=1e-15)
    if s.rho_exact is not None:
        assert float(s.rho_exact) == pytest.approx(s.rho, abs=1e-15)
        assert s.rho_exact + s.spectral_gap_exact == 1


@pytest.mark.parametrize("p", range(3, 41))
def test_ring_closed_form(p):
    # uniform weights: λ_k = 1/3 + 2/3·cos(2πk/p), ρ = max over k ≥ 1 of |λ_k|
    want = max(abs(1 / 3 + 2 / 3 * math.cos(2 * math.pi * k / p)) for k in range(1, p))
    assert spectrum(mixing_matrix(ring(p))).rho == pytest.approx(want, abs=1e-14)


def test_exact_values():
    assert spectrum(mixing_matrix(ring(4))).rho_exact == Fraction(1, 3)  # not 0.3333
    assert spectrum(mixing_matrix(ring(3))).rho_exact == 0  # the 3-ring is complete
    assert spectrum(mixing_matrix(ring(6))).rho_exact == Fraction(2, 3)  # (1 + 2cos 60°)/3
    for p in (2, 5, 100, 10**6):
        assert spectrum(mixing_matrix(complete(p))).rho_exact == 0
    for d in range(1, 21):  # hypercube, uniform: (1 + d − 2k)/(d + 1), ρ = (d − 1)/(d + 1)
        assert spectrum(mixing_matrix(hypercube(2**d))).rho_exact == Fraction(d - 1, d + 1)
    # star, uniform: leaves' differences halve: 1/2; Metropolis: 1 − 1/p
    assert spectrum(mixing_matrix(star(9))).rho_exact == Fraction(1, 2)
    assert spectrum(mixing_matrix(star(9), "metropolis")).rho_exact == Fraction(8, 9)
    # torus 4 × 4 = C4 □ C4, uniform 1/5: (1 + μ_a + μ_b)/5 with μ ∈ {2, 0, −2}: ρ = |1 − 4|/5 = 3/5
    assert spectrum(mixing_matrix(torus(16))).rho_exact == Fraction(3, 5)
    assert spectrum(mixing_matrix(ring(5))).rho_exact is None  # (1 + 2cos 72°)/3 involves √5


@pytest.mark.parametrize("tau", range(1, 21))
def test_exponential_graph_power_of_two(tau):
    # Ying et al. 2021: for p = 2^τ, ρ = 1 − 2/(τ + 1), attained at k = p/2
    s = spectrum(mixing_matrix(exponential(2**tau)))
    assert s.rho_exact == Fraction(tau - 1, tau + 1)


def test_exponential_graph_matches_fft_at_other_p():
    for p in (6, 7, 12, 100):
        m = mixing_matrix(exponential(p))
        assert spectrum(m).rho == pytest.approx(eigen_rho(m), abs=1e-12)
    # p = 1000: W is circulant, hence normal, so |λ|² are the eigenvalues of WWᵀ (a dense symmetric
    # solver, not an FFT, and ~10× faster than general eigenvalues); the largest, 1, is consensus's
    m = mixing_matrix(exponential(1000))
    w = dense(m)
    moduli = np.sqrt(np.clip(np.linalg.eigvalsh(w @ w.T), 0, None))[::-1]
    assert moduli[0] == pytest.approx(1, abs=1e-12)
    assert spectrum(m).rho == pytest.approx(float(moduli[1]), abs=1e-12)


def test_the_gap_is_computed_directly():
    p = 10**6
    s = spectrum(mixing_matrix(ring(p)))
    accurate = 4 / 3 * math.sin(math.pi / p) ** 2  # (2/3)(1 − cos 2π/p)
    assert s.spectral_gap == pytest.approx(accurate, rel=1e-15)
    reach = rounds_to_target(s, Fraction(1, 100))
    assert reach.rounds == math.ceil(math.log(100) / -math.log1p(-accurate))
    # going through ρ = (1 + 2cos(2π/p))/3 first loses digits and changes the count
    naive = math.ceil(math.log(100) / -math.log((1 + 2 * math.cos(2 * math.pi / p)) / 3))
    assert naive != reach.rounds


def test_torus_and_k_ring_gaps_of_a_million_workers():
    # torus 1000 × 1000, uniform 1/5: gap = (1/5)·4sin²(π/1000)
    s = spectrum(mixing_matrix(torus(10**6)))
    assert s.spectral_gap == pytest.approx(4 / 5 * math.sin(math.pi / 1000) ** 2, rel=1e-14)
    # 3-ring, uniform 1/7: gap = (1/7)·Σ_{s=1..3} 4sin²(πs/p)
    p = 10**6
    s = spectrum(mixing_matrix(k_ring(p, k=3)))
    assert s.spectral_gap == pytest.approx(sum(4 * math.sin(math.pi * j / p) ** 2 for j in (1, 2, 3)) / 7,
                                           rel=1e-13)


# -- rounds ---------------------------------------------------------------------------------------------------


def test_seed_rounds_and_exact_boundaries():
    s = spectrum(mixing_matrix(ring(4)))
    assert rounds_to_target(s, "100x").rounds == 5  # ln 100/ln 3 = 4.19 → 5
    # at ε = 3^−5 exactly, five rounds reach it: (1/3)^5 ≤ 1/243 (floats could say 5.000000001 → 6)
    reach = rounds_to_target(s, Fraction(1, 243))
    assert reach.rounds == 5 and reach.exact
    assert rounds_to_target(s, Fraction(1, 244)).rounds == 6
    half = Spectrum(rho=0.5, spectral_gap=0.5, rho_exact=Fraction(1, 2), spectral_gap_exact=Fraction(1, 2), method="hand",
                    source=THAKUR_2005.at("-"))
    assert rounds_to_target(half, Fraction(1, 8)).rounds == 3
    assert rounds_to_target(half, "1e-3").rounds == 10  # 2^−10 = 1/1024 ≤ 1/1000 < 2^−9


def test_rho_zero_means_one_round():
    reach = rounds_to_target(spectrum(mixing_matrix(complete(8))), Fraction(1, 10**9))
    assert reach.rounds == 1
    assert "one round" in reach.notes[0]


@pytest.mark.parametrize("p", [4, 6, 8, 10])
def test_max_degree_weights_without_the_plus_one_oscillate_on_an_even_ring(p):
    # 1/max(d_i, d_j) = 1/2 on each edge, nothing left for the worker itself: eigenvalue −1
    half = Fraction(1, 2)
    rows = [[half if (j - i) % p in (1, p - 1) else 0 for j in range(p)] for i in range(p)]
    s = spectrum(from_matrix(rows, graph=ring(p)))
    assert s.rho_exact == 1 and s.spectral_gap == 0 and not s.converges
    assert any("oscillate" in n for n in s.notes)
    reach = rounds_to_target(s, Fraction(1, 100))
    assert reach.rounds is None
    assert "never" in reach.notes[0]


def test_max_degree_weights_on_an_odd_ring_converge():
    p, half = 5, Fraction(1, 2)
    rows = [[half if (j - i) % p in (1, p - 1) else 0 for j in range(p)] for i in range(p)]
    s = spectrum(from_matrix(rows))
    assert 0 < s.spectral_gap < 1  # cos(4π/5) = −0.809: ρ = 0.809
    assert s.rho == pytest.approx(-math.cos(4 * math.pi / 5), abs=1e-12)


def _permutation(p: int, shift: int) -> list[list[int]]:
    return [[1 if j == (i + shift) % p else 0 for j in range(p)] for i in range(p)]


@pytest.mark.parametrize(("p", "shift"), [(5, 1), (7, 3), (12, 1), (9, 2), (500, 1)])
def test_rho_of_a_permutation_matrix_is_exactly_one(p, shift):
    # a permutation's eigenvalues are roots of unity, all of modulus 1; numerically 1 ± a few ulps
    s = spectrum(from_matrix(_permutation(p, shift)))
    assert s.rho_exact == 1 and s.rho == 1.0 and s.spectral_gap == 0 and not s.converges
    cycle = p  # shift and p coprime: one cycle through every worker
    assert any(f"period {cycle}" in n for n in s.notes), s.notes
    assert not any("within rounding error" in n for n in s.notes)


def test_several_closed_groups_never_agree():
    half = Fraction(1, 2)
    s = spectrum(from_matrix([[1, 0, 0], [half, 0, half], [0, 0, 1]]))  # workers 0 and 2 listen to nobody
    assert s.rho_exact == 1
    assert any("2 closed groups" in n for n in s.notes)


def test_a_self_weight_makes_a_rotation_converge():
    # lazy rotation ½(I + P) on 5 workers: eigenvalues ½(1 + e^(2πik/5)), ρ = cos(π/5)
    half = Fraction(1, 2)
    rows = [[half * (i == j) + half * (j == (i + 1) % 5) for j in range(5)] for i in range(5)]
    s = spectrum(from_matrix(rows))
    assert s.rho == pytest.approx(math.cos(math.pi / 5), abs=1e-12) and s.rho_exact is None


def _lazy_rotation(p: int) -> list[list[Fraction]]:
    """½(I + P), P the cyclic shift: eigenvalues ½(1 + e^(2πik/p)), ρ = cos(π/p), crowded near 1."""
    half = Fraction(1, 2)
    return [[half if j in (i, (i + 1) % p) else Fraction(0) for j in range(p)] for i in range(p)]


@pytest.fixture(scope="module")
def lazy_rotation_120():
    return from_matrix(_lazy_rotation(120))


def test_a_non_converging_arnoldi_falls_back_on_dense_eigenvalues(monkeypatch, lazy_rotation_120):
    monkeypatch.setattr(spectral_module, "DENSE_MAX", 25)  # 120 rows go to ARPACK, which gives up
    s = spectrum(lazy_rotation_120)
    assert "sparse Arnoldi did not converge" in s.method
    assert s.rho == pytest.approx(math.cos(math.pi / 120), abs=1e-12)


def test_beyond_the_dense_fallback_a_non_converging_arnoldi_is_an_input_error(monkeypatch, lazy_rotation_120):
    monkeypatch.setattr(spectral_module, "DENSE_MAX", 25)
    monkeypatch.setattr(spectral_module, "NONSYMMETRIC_DENSE_MAX", 110)
    with pytest.raises(InputError, match="did not converge for this non-symmetric W of 120 rows"):
        spectrum(lazy_rotation_120)


def test_the_solvers_run_on_one_blas_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with spectral_module.one_blas_thread():
        assert {i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"} <= {1}


def test_a_growing_matrix_reports_rho_above_one():
    s = spectrum(from_matrix([["1.5", "-0.5"], ["-0.5", "1.5"]]))  # eigenvalues 1 and 2
    assert s.rho == pytest.approx(2) and not s.converges
    assert "ρ = 2 > 1" in rounds_to_target(s).notes[0]


def test_rational_rho_is_recognised_on_small_exact_matrices():
    # the 4-ring with 1/3 weights, given as a matrix: the dense path recognises 1/3 exactly
    third = Fraction(1, 3)
    rows = [[third, third, 0, third], [third, third, third, 0], [0, third, third, third], [third, 0, third, third]]
    s = spectrum(from_matrix(rows))
    assert s.rho_exact == Fraction(1, 3)
    assert rounds_to_target(s, Fraction(1, 100)).rounds == 5


def test_uncertain_counts_come_with_a_range():
    s = Spectrum(rho=1 - 1e-9, spectral_gap=1e-9, error=1e-14, method="hand", source=THAKUR_2005.at("-"))
    reach = rounds_to_target(s, Fraction(1, 100))
    assert reach.low < reach.rounds <= reach.high
    assert "between" in reach.notes[0]


def test_parse_target():
    assert parse_target("100x") == parse_target("100×") == parse_target("1/100") == Fraction(1, 100)
    assert parse_target(0.25) == 0.25
    for bad in ("0", "1", "-0.5", "1x", "abc"):
        with pytest.raises(InputError):
            parse_target(bad)


# -- the numeric paths -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def regular_200():
    return random_regular(200, degree=4, seed=3)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_sparse_lanczos_matches_dense_eigenvalues(weights, regular_200, monkeypatch):
    # above the (lowered) dense limit, and wide enough after reordering for Lanczos, not shift-invert
    monkeypatch.setattr(spectral_module, "DENSE_MAX", 100)
    monkeypatch.setattr(laplacian_module, "DENSE_MAX", 100)  # best-constant: L by sparse Lanczos too
    m = mixing_matrix(regular_200, weights)
    s = spectrum(m)
    assert "Lanczos" in s.method or "best-constant" in s.method
    assert s.rho == pytest.approx(eigen_rho(m), abs=1e-10)


def test_irregular_uniform_weights_go_through_the_similar_symmetric_matrix(monkeypatch):
    monkeypatch.setattr(spectral_module, "DENSE_MAX", 100)  # 200 rows take the sparse path
    g = erdos_renyi(200, prob=0.05, seed=1)
    m = mixing_matrix(g)
    assert not m.symmetric
    s = spectrum(m)
    assert "sparse Lanczos" in s.method
    assert s.rho == pytest.approx(eigen_rho(m), abs=1e-10)


def test_an_edge_list_ring_is_recognised():
    shuffled = np.random.default_rng(0).permutation(1000).tolist()
    g = from_edges([(shuffled[i], shuffled[(i + 1) % 1000]) for i in range(1000)])
    s = spectrum(mixing_matrix(g))
    assert "recognised" in s.notes[0]
    assert s.spectral_gap == pytest.approx(4 / 3 * math.sin(math.pi / 1000) ** 2, rel=1e-14)


def test_shift_invert_copes_with_a_tiny_gap(monkeypatch):
    # a 1000-ring with one chord is not recognised; its gap is ~1e-5, eigenvalues clustered
    g = from_edges([(i, (i + 1) % 1000) for i in range(1000)] + [(0, 500)])
    m = mixing_matrix(g, "metropolis")
    s = spectrum(m)
    assert "shift-invert" in s.method
    assert s.rho == pytest.approx(eigen_rho(m), abs=1e-12)
    # and on a plain ring, with recognition switched off, it finds the closed form's gap
    monkeypatch.setattr(spectral_module, "recognise", lambda graph: None)
    ring_edges = from_edges([(i, (i + 1) % 2000) for i in range(2000)])
    s = spectrum(mixing_matrix(ring_edges))
    assert s.spectral_gap == pytest.approx(4 / 3 * math.sin(math.pi / 2000) ** 2, rel=1e-6)


def test_laplacian_extremes():
    e = laplacian_extremes(ring(4))
    assert (e.connectivity_exact, e.largest_exact) == (2, 4)
    e = laplacian_extremes(star(6))
    assert (e.connectivity_exact, e.largest_exact) == (1, 6)
    g = random_regular(500, degree=3, seed=2)
    lap = np.zeros((500, 500))
    for i, nbrs in enumerate(g.neighbours):
        lap[i, i] = len(nbrs)
        lap[i, list(nbrs)] = -1
    values = np.linalg.eigvalsh(lap)
    e = laplacian_extremes(g)
    assert e.connectivity == pytest.approx(values[1], abs=1e-9)
    assert e.largest == pytest.approx(values[-1], abs=1e-9)
    with pytest.raises(InputError, match="directed"):
        laplacian_extremes(exponential(8))


def test_to_dict_is_json_native():
    import json

    for m in (mixing_matrix(ring(4)), mixing_matrix(ring(5)), from_matrix([[0, 1], [1, 0]])):
        data = spectrum(m).to_dict()
        json.dumps(data, allow_nan=False)
        assert isinstance(data["rho"], (int, float))


@pytest.mark.parametrize("n", [4, 5, 6, 7, 12, 30, 101, 1000])
def test_a_coprime_single_offset_factor_has_the_rings_spectrum(n):
    """C_n({s, n − s}) with gcd(s, n) = 1, priced in closed form, against every eigenvalue of its
    Laplacian from numpy (the extremes' values, and which are exact)."""
    for s in (s for s in range(1, (n + 1) // 2) if math.gcd(s, n) == 1):
        a, top, low = laplacian_module._ring_extremes(n)
        adjacency = np.zeros((n, n))
        for i in range(n):
            adjacency[i, (i + s) % n] = adjacency[i, (i - s) % n] = 1
        ell = np.linalg.eigvalsh(np.diag(adjacency.sum(1)) - adjacency)
        signless = np.linalg.eigvalsh(np.diag(adjacency.sum(1)) + adjacency)
        assert a.value == pytest.approx(ell[1], rel=1e-9, abs=1e-12)
        assert top.value == pytest.approx(ell[-1], rel=1e-9)
        assert low.value == pytest.approx(signless[0], abs=1e-9)
        rational = n in (4, 6)  # cos(2π/n) rational only for n ∈ {1, 2, 3, 4, 6} (Niven)
        assert (a.exact is not None) == rational
        if n % 2 == 0:  # j = n/2: cos π = −1
            assert (top.exact, low.exact) == (4, 0)


def test_a_million_worker_ring_needs_no_eigenvalue_solver():
    """The ring's extremes are closed forms: pricing a ring of 10⁶ builds no array of 10⁶ angles."""
    import subprocess
    import sys

    code = ("import sys; from costmodel.consensus.graphs import ring; "
            "from costmodel.consensus.laplacian import laplacian_extremes; "
            "e = laplacian_extremes(ring(10**6)); print(e.connectivity, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) == pytest.approx(4 * math.sin(math.pi / 10**6) ** 2, rel=1e-12)
    assert out[1] == "False"
