"""Tests of costmodel.sweeps (costmodel.sweep): vectorised costs over grids of p and n.

The reference values come from the exact evaluation (``evaluate.cost``, the
EXACT backend over Fractions, with its own scalar search for extra
parameters), and a few from closed forms worked out by hand in the comments.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from costmodel.collectives._record import power_of_two
from costmodel.collectives._registry import COLLECTIVES, algorithms, resolve
from costmodel.collectives.evaluate import cost
from costmodel.errors import ConstraintError, InputError, UnitError, UnknownNameError
from costmodel.links import link_from_options
from costmodel.params import LinkParams
from costmodel.sweeps import _records, sweep

LINK = link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.01ns/B")
LINK_NO_GAMMA = link_from_options(alpha="5us", beta="0.08ns/B")
RANKS = list(range(2, 71))
SIZES = [1, 2, 7, 1000, 2**20, 10**9]


def _exact_table(collective: str, names: list[str], *, ranks: list[int], sizes: list[int],
                 link: LinkParams, extra: dict[str, int] | None = None) -> np.ndarray:
    """Exact times as floats, shape (len(ranks), len(sizes), len(names)); NaN where a p is refused."""

    def exact(a: str, p: int, n: int) -> float:
        try:
            return float(cost(collective, a, p=p, n=n, link=link, extra=extra).time_s)
        except ConstraintError:
            return float("nan")

    return np.array([[[exact(a, p, n) for a in names] for n in sizes] for p in ranks])


# -- agreement with the exact evaluation ---------------------------------------------------


@pytest.mark.parametrize("collective", sorted(COLLECTIVES))
def test_agrees_with_exact_cost(collective: str) -> None:
    # every record, adaptations included (asked for by name), p with and without powers of two
    names = [a.name for a in algorithms(collective, adaptations=True)]
    df = sweep(collective, names, p=RANKS, n=SIZES, link=LINK)
    got = df.to_numpy().reshape(len(RANKS), len(SIZES), len(names))
    exact = _exact_table(collective, names, ranks=RANKS, sizes=SIZES, link=LINK)
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=0)


@pytest.mark.parametrize("collective", sorted(COLLECTIVES))
def test_default_algorithms_agree_without_gamma(collective: str) -> None:
    ranks = [2, 3, 5, 8, 12, 16, 17, 31, 64, 70]
    df = sweep(collective, p=ranks, n=SIZES, link=LINK_NO_GAMMA)
    names = [a.name for a in algorithms(collective)]
    assert list(df.columns) == names
    got = df.to_numpy().reshape(len(ranks), len(SIZES), len(names))
    exact = _exact_table(collective, names, ranks=ranks, sizes=SIZES, link=LINK_NO_GAMMA)
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=0)


def test_fixed_extra_parameter_agrees_with_exact_cost() -> None:
    sizes = [8, 1000, 2**20]
    df = sweep("allreduce", ["dbt"], p=RANKS, n=sizes, link=LINK, extra={"blocks": 4})
    exact = _exact_table("allreduce", ["double-binary-tree"], ranks=RANKS, sizes=sizes, link=LINK,
                         extra={"blocks": 4})
    np.testing.assert_allclose(df.to_numpy().reshape(exact.shape), exact, rtol=1e-12, atol=0)


def test_hand_worked_values() -> None:
    df = sweep("allreduce", ["ring", "dbt", "rd"], p=[4, 16, 12], n=[1000, 2**20], link=LINK_NO_GAMMA)
    alpha, beta = 5e-6, 8e-11
    # ring, p=4, n=1000: 2(p-1)α + 2(p-1)/p·nβ = 6α + 1500β
    assert df.loc[(4, 1000), "ring"] == pytest.approx(6 * alpha + 1500 * beta, rel=1e-14)
    # double binary tree, p=16 (h=4), n=1 MiB: T(k) = 4(h+k-1)(α + nβ/(2k)) is least at k=5
    # (k* = √((h-1)nβ/(2α)) ≈ 5.02; T(5) < T(6)): 32(α + 2^20β/10)
    expected = 32 * (alpha + 2**20 * beta / 10)
    assert df.loc[(16, 2**20), "double-binary-tree"] == pytest.approx(expected, rel=1e-14)
    # recursive doubling at p=12 is folded: (⌊log2 12⌋ + 2)(α + nβ) = 5(α + nβ)
    assert df.loc[(12, 1000), "recursive-doubling"] == pytest.approx(5 * (alpha + 1000 * beta), rel=1e-14)


def test_extra_parameters_at_large_sizes() -> None:
    # sizes up to 10^12 bytes: the search for k runs over [1, 5·10^11]
    sizes = [3, 10**6, 10**9, 10**12]
    for collective, name in (("allreduce", "double-binary-tree"), ("broadcast", "pipelined-chain")):
        df = sweep(collective, [name], p=[2, 3, 9, 1000], n=sizes, link=LINK)
        exact = _exact_table(collective, [name], ranks=[2, 3, 9, 1000], sizes=sizes, link=LINK)
        np.testing.assert_allclose(df.to_numpy().reshape(exact.shape), exact, rtol=1e-12, atol=0)


# -- inputs --------------------------------------------------------------------------------


def test_forms_of_p_and_n_agree() -> None:
    reference = sweep("allreduce", p=[2, 3, 4], n=[1024, 2**20], link=LINK)
    for p in (range(2, 5), np.array([2, 3, 4]), np.array([2, 3, 4], dtype=np.uint16), [np.int64(2), 3, 4]):
        for n in (["1KiB", "1MiB"], np.array([1024.0, 2**20]), np.array([1024, 2**20]),
                  [Fraction(1024), 2**20], (1024.0, "1 MiB")):
            pd.testing.assert_frame_equal(sweep("allreduce", p=p, n=n, link=LINK), reference)


def test_scalars_give_one_row() -> None:
    df = sweep("allgather", "bruck", p=5, n="1 kB", link=LINK)
    assert df.shape == (1, 1)
    assert df.index.tolist() == [(5, 1000.0)]


def test_aliases_resolve_and_duplicates_collapse() -> None:
    df = sweep("all_reduce", ["rab", "rabenseifner", "rd"], p=8, n=1, link=LINK)
    assert list(df.columns) == ["rabenseifner", "recursive-doubling"]


BAD_INPUTS = [
    ({"p": 1}, InputError, "p=1 is too small"),
    ({"p": [2, 0]}, InputError, "p=0 is too small"),
    ({"p": [2, 3.0]}, InputError, "p=3.0 is not an integer"),
    ({"p": True}, InputError, "p=True is not an integer"),
    ({"p": "16"}, InputError, "p='16' is not an integer"),
    ({"p": np.array([4, 1])}, InputError, "p=1 is too small"),
    ({"p": range(1, 5)}, InputError, "p=1 is too small"),
    ({"p": [2**41]}, InputError, "is too large"),
    ({"p": []}, InputError, "empty"),
    ({"p": np.array([[2, 4]])}, InputError, "shape"),
    ({"n": "12 KB"}, UnitError, "'12 KB' is ambiguous"),
    ({"n": -1}, UnitError, "-1"),
    ({"n": [1, "-1 B"]}, UnitError, "-1 B"),
    ({"n": np.array([1.0, np.nan])}, UnitError, "nan"),
    ({"n": np.array([1.0, -2.0])}, UnitError, "-2.0"),
    ({"n": []}, InputError, "empty"),
    ({"algorithms": ["rign"]}, UnknownNameError, "unknown algorithm 'rign' for allreduce; did you mean"),
    ({"collective": "allreduse"}, UnknownNameError, "unknown collective 'allreduse'"),
    ({"extra": {"segments": 2}}, InputError, "'segments' is not a parameter of the chosen algorithms"),
    ({"extra": {"blocks": 0}}, InputError, "blocks=0 is not a positive integer"),
    ({"extra": {"blocks": True}}, InputError, "blocks=True is not a positive integer"),
    ({"extra": {"blocks": 3}, "n": [1000, 4]}, InputError, "blocks=3 is more than n=4 bytes"),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD_INPUTS, ids=[str(b[0]) for b in BAD_INPUTS])
def test_bad_inputs_raise(change: dict, error: type[Exception], message: str) -> None:
    args = {"collective": "allreduce", "algorithms": None, "p": 16, "n": 1000, "extra": None, **change}
    with pytest.raises(error) as info:
        sweep(args.pop("collective"), args.pop("algorithms"), link=LINK, **args)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_constraint_without_adaptation_leaves_those_p_out() -> None:
    strict = replace(resolve("allreduce", "rabenseifner"), constraints=(power_of_two(None),))
    groups = _records(strict, np.array([8, 12, 6, 16]))
    assert [(rec.name, rows.tolist()) for rec, rows in groups] == [("rabenseifner", [True, False, False, True])]


def test_algorithms_that_cannot_run_at_some_p_are_nan_there() -> None:
    # the double binary tree needs p >= 4 (exact evaluation refuses p = 2 and 3)
    df = sweep("allreduce", ["double-binary-tree", "ring"], p=[2, 3, 4], n=[1000], link=LINK)
    column = df["double-binary-tree"]
    assert column.loc[(2, 1000)] != column.loc[(2, 1000)]  # NaN
    assert column.loc[(3, 1000)] != column.loc[(3, 1000)]
    assert float(column.loc[(4, 1000)]) == pytest.approx(float(cost("allreduce", "dbt", p=4, n=1000, link=LINK).time_s),
                                                         rel=1e-12)
    assert not df["ring"].isna().any()


def test_constraints_pick_the_adaptation_per_p() -> None:
    groups = _records(resolve("allreduce", "rd"), np.array([8, 12, 6, 16]))
    assert [(rec.name, rows.tolist()) for rec, rows in groups] == [
        ("recursive-doubling", [True, False, False, True]),
        ("recursive-doubling-folded", [False, True, True, False]),
    ]


# -- output --------------------------------------------------------------------------------


def test_wide_shape_index_and_attrs() -> None:
    ranks, sizes = [16, 3, 7], [2**20, 0, 5]
    df = sweep("reduce-scatter", p=ranks, n=sizes, link=LINK)
    assert df.shape == (9, 2)
    assert df.index.names == ["p", "n_bytes"]
    assert df.index.tolist() == [(p, float(n)) for p in ranks for n in sizes]  # p-major, order as given
    assert list(df.columns) == ["ring", "recursive-halving"]
    assert df.columns.name == "algorithm"
    assert all(dtype == np.float64 for dtype in df.dtypes)
    assert df.attrs == {
        "collective": "reduce-scatter",
        "meaning_of_n": COLLECTIVES["reduce-scatter"].meaning_of_n,
        "alpha_s": 5e-6,
        "beta_s_per_byte": 8e-11,
        "gamma_s_per_byte": 1e-11,
    }


def test_long_form_with_terms() -> None:
    ranks, sizes = [2, 12, 16], [0, 7, 2**20]
    long = sweep("allreduce", p=ranks, n=sizes, link=LINK, terms=True)
    names = [a.name for a in algorithms("allreduce")]
    assert list(long.columns) == [
        "collective", "algorithm", "p", "n_bytes", "time_s", "latency_s", "bandwidth_s", "compute_s",
    ]
    # the double binary tree cannot run at p = 2: its 3 rows there are left out
    assert len(long) == len(names) * len(ranks) * len(sizes) - len(sizes)
    assert isinstance(long["algorithm"].dtype, pd.CategoricalDtype)
    assert list(long["algorithm"].cat.categories) == names
    assert set(long["collective"]) == {"allreduce"}
    total = long["latency_s"] + long["bandwidth_s"] + long["compute_s"]
    np.testing.assert_allclose(long["time_s"], total, rtol=1e-15, atol=0)
    assert (long[["latency_s", "bandwidth_s", "compute_s"]] >= 0).all().all()
    wide = sweep("allreduce", p=ranks, n=sizes, link=LINK)
    pivot = long.pivot_table(index=["p", "n_bytes"], columns="algorithm", values="time_s", observed=True)
    np.testing.assert_allclose(pivot.reindex(index=wide.index, columns=names).to_numpy(), wide.to_numpy(),
                               rtol=1e-15, atol=0)
    assert long.attrs["collective"] == "allreduce"


def test_long_form_terms_agree_with_exact_terms() -> None:
    long = sweep("allreduce", ["dbt", "rab"], p=[12, 16], n=[1000, 2**20], link=LINK, terms=True)
    for row in long.itertuples():
        exact = cost("allreduce", str(row.algorithm), p=int(row.p), n=int(row.n_bytes), link=LINK)
        for term in ("latency_s", "bandwidth_s", "compute_s"):
            assert getattr(row, term) == pytest.approx(float(getattr(exact, term)), rel=1e-12)


# -- imports -------------------------------------------------------------------------------


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


def test_numeric_cli_commands_do_not_import_sweep_or_pandas() -> None:
    out = _run("""
        import contextlib, io, sys
        from costmodel.cli import main
        link = ["--alpha", "5us", "--beta", "0.08ns/B", "--json"]
        for args in (["cost", "allreduce", "-p", "16", "-n", "1MiB"],
                     ["crossover", "allreduce", "rd", "rab", "-p", "16"],
                     ["best", "allreduce", "-p", "16"]):
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(args + link) == 0, args
        print(sorted(m for m in ("costmodel.sweeps", "pandas", "numpy") if m in sys.modules))
    """)
    assert out == "[]"


def test_package_level_sweep_stays_callable() -> None:
    out = _run("""
        import costmodel
        import costmodel.sweeps
        print(callable(costmodel.sweep))
    """)
    assert out == "True"
