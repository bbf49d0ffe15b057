"""Notebook-native results: Formula's sympy expressions, results as DataFrames, and the display
formatters registered in IPython (costmodel.notebook)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from fractions import Fraction
from types import SimpleNamespace

import pytest
import sympy

import costmodel
from costmodel.collectives._registry import COLLECTIVES
from costmodel.symbols import ALPHA, BETA, EXTRA_SYMBOLS, GAMMA, n, p

LINK = costmodel.link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.01ns/B")
ON_LINK = {ALPHA: sympy.Rational(LINK.alpha_s), BETA: sympy.Rational(LINK.beta_s_per_byte),
           GAMMA: sympy.Rational(LINK.gamma_s_per_byte)}


# -- Formula.expr ----------------------------------------------------------------------------------

def _records():
    return [(c, a) for c, spec in COLLECTIVES.items() for a in spec.algorithms]


@pytest.mark.parametrize(("collective", "record"), _records(), ids=lambda x: getattr(x, "name", x))
def test_the_expression_is_the_exact_cost_of_every_record(collective, record):
    f = costmodel.formula(collective, record.name)
    for ranks in (4, 12, 16, 64):
        if not all(c.holds(ranks) for c in record.constraints):
            continue
        for size in (1, 1000, 3 * 2**20 + 5):
            got = costmodel.cost(collective, record.name, p=ranks, n=size, link=LINK)
            chosen = {EXTRA_SYMBOLS[e.symbol]: got.parameters[e.name] for e in record.extra}
            value = f.expr.subs({**ON_LINK, p: ranks, n: size, **chosen})
            assert value == sympy.Rational(got.time_s), (ranks, size)
            parts = [f.terms[t].subs({p: ranks, n: size, **chosen}) for t in ("rounds", "bytes_sent")]
            assert parts == [got.rounds, sympy.Rational(got.bytes_sent_per_rank)], (ranks, size)


def test_expression_is_alpha_beta_gamma_times_the_coefficients():
    f = costmodel.formula("allreduce", "ring")
    # Patarasuk & Yuan: 2(p − 1)α + 2(p − 1)/p·nβ + (p − 1)/p·nγ
    assert sympy.simplify(f.expr - (2 * (p - 1) * ALPHA + 2 * (p - 1) / p * n * BETA + (p - 1) / p * n * GAMMA)) == 0
    assert sympy.expand(f.terms["latency"]) == 2 * p - 2
    assert f.expr == f.terms["time"]


def test_solving_two_expressions_gives_the_crossover():
    rd, rab = costmodel.formula("allreduce", "rd"), costmodel.formula("allreduce", "rab")
    link = costmodel.link_from_options(alpha="5us", beta="0.08ns/B")
    values = {ALPHA: sympy.Rational(link.alpha_s), BETA: sympy.Rational(link.beta_s_per_byte), GAMMA: 0, p: 16}
    solved = sympy.solve((rd.expr - rab.expr).subs(values), n)
    found = costmodel.crossover("allreduce", "rd", "rab", p=16, link=link).crossovers[0].n_bytes
    assert solved == [sympy.Rational(2_000_000, 17)]  # the seed's crossover: 114.9 KiB
    assert found == Fraction(2_000_000, 17)


def test_a_formula_shows_as_latex_and_keeps_its_json():
    f = costmodel.formula("allreduce", "rabenseifner")
    assert f._repr_latex_() == "$T = " + sympy.latex(f.expr) + "$"
    assert "_terms" not in f.to_dict() and "expr" not in f.to_dict()
    assert f == costmodel.formula("allreduce", "rab")


def test_a_hierarchical_formula_has_its_closed_form():
    from costmodel.symbols import level

    h = costmodel.formula("allreduce", "hierarchical")
    s0, a0, b0, _ = level(0)
    s1, a1, b1, _ = level(1)
    # ring inside (2(s₀ − 1) steps), ring across (2(s₁ − 1)) on n/s₀: reduce-scatter, all-reduce, all-gather
    at = {s0: 8, s1: 4, a0: 1, a1: 10, b0: 0, b1: 0, n: 0}
    assert h.expr.subs(at) == 2 * 7 * 1 + 2 * 3 * 10
    assert h._repr_latex_().startswith("$T = ")


def test_a_worked_example_shows_as_markdown():
    from costmodel.examples import get

    worked = get("ring-bytes").run({"p": "8", "n": "64 MB"})
    shown = worked._repr_markdown_()
    assert shown == worked.to_markdown()
    assert shown.startswith("## Ring all-reduce") and "**Bytes each worker sends: 112 MB**" in shown  # 2(p − 1)·n/p = 14 × 8 MB


# -- to_frame --------------------------------------------------------------------------------------

def test_a_cost_table_is_a_frame_of_one_row_per_algorithm():
    table = costmodel.compare("allreduce", ["ring", "rab"], p=16, n="1MiB", link=LINK)
    df = table.to_frame()
    assert list(df["algorithm"]) == ["rabenseifner", "ring"]
    assert list(df.columns) == ["algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
                                "bytes_sent_per_rank", "bound_ratio", "vs_best", "formula"]
    # rabenseifner: 8α + 1.875 MiB·β + 0.9375 MiB·γ
    assert df["time_s"][0] == float(8 * Fraction(5, 10**6) + Fraction(15, 8) * 2**20 * Fraction(8, 10**11)
                                     + Fraction(15, 16) * 2**20 * Fraction(1, 10**11))
    assert list(df["rounds"]) == [8, 30]
    assert df.attrs["p"] == 16 and df.attrs["n_bytes"] == 2**20 and df.attrs["best"] == "rabenseifner"


def test_best_ranges_are_a_frame_of_one_row_per_range():
    link = costmodel.link_from_options(alpha="5us", beta="0.08ns/B")
    df = costmodel.best("allreduce", ["ring", "rd", "rab"], p=16, link=link, max_bytes="64MiB").to_frame()
    assert df.to_dict("records") == [
        {"algorithm": "recursive-doubling", "from_bytes": 1, "to_bytes": 2_000_000 / 17, "tied": ""},
        {"algorithm": "rabenseifner", "from_bytes": 2_000_000 / 17, "to_bytes": 2**26, "tied": ""}]
    assert df.attrs["collective"] == "allreduce" and df.attrs["alpha_s"] == 5e-6


def _fit():
    from costmodel.calibration import fit, parse_log

    # OSU: 10 µs + n/1000 µs, exactly on a line: α = 10 µs, β = 1 ns/B at p = 2 (one message)
    text = "# OSU MPI Allreduce Latency Test v5.8\n# Size  Avg Latency(us)\n" + "".join(
        f"{2**k} {10 + 2**k / 1000:.3f}\n" for k in range(10, 16))
    return fit(parse_log(text, p=2), segments=1)


def test_a_fits_residuals_and_its_report_are_frames_of_one_row_per_size():
    from costmodel.calibration.report import calibration_report

    fit = _fit()
    residuals = fit.to_frame()
    assert list(residuals["n_bytes"]) == [2**k for k in range(10, 16)]
    assert list(residuals.columns) == ["n_bytes", "measured_s", "model_s", "rel_error", "segment", "line",
                                       "outlier"]
    assert residuals["measured_s"][0] == pytest.approx(11.024e-6, rel=1e-12)
    report = calibration_report(fit).to_frame()
    assert len(report) == 6 and "busbw_measured_bytes_per_s" in report.columns
    assert report.attrs["p"] == 2 and report.attrs["bus_factor"] == 1


def test_results_load_pandas_only_to_convert():
    code = ("import sys, costmodel\n"
            "link = costmodel.link_from_options(alpha='5us', beta='0.08ns/B')\n"
            "t = costmodel.compare('allreduce', None, p=16, n='1MiB', link=link); t.to_dict()\n"
            "before = 'pandas' in sys.modules\n"
            "t.to_frame()\n"
            "print(before, 'pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


# -- display in IPython ----------------------------------------------------------------------------

needs_ipython = pytest.mark.skipif(importlib.util.find_spec("IPython") is None,
                                   reason="the display tests need IPython: pip install ipykernel")


def _shell():
    from IPython.core.formatters import DisplayFormatter

    return SimpleNamespace(display_formatter=DisplayFormatter())


@needs_ipython
def test_registered_results_show_as_the_command_line_lays_them_out():
    from costmodel import notebook

    shell = _shell()
    assert notebook.register(shell) is True
    table = costmodel.compare("allreduce", ["ring", "rab"], p=16, n="1MiB", link=LINK)
    data, _ = shell.display_formatter.format(table)
    assert data["text/html"].startswith("<pre") and "rabenseifner" in data["text/html"]
    assert data["text/plain"] == notebook.text(table)
    assert data["text/plain"].splitlines()[0] == "allreduce · p = 16 · n = 1.049 MB = 1 MiB"
    one, _ = shell.display_formatter.format(costmodel.cost("allreduce", "ring", p=16, n="1MiB", link=LINK))
    # 30·5 µs + 1.875 MiB·0.08 ns/B + 0.9375 MiB·0.01 ns/B = 150 + 157.29 + 9.83 µs
    assert one["text/plain"].splitlines()[1].split()[:2] == ["ring", "317.1"]
    formula, _ = shell.display_formatter.format(costmodel.formula("allreduce", "ring"))
    assert {"text/html", "text/latex", "text/plain"} <= set(formula)


@needs_ipython
def test_what_is_not_a_result_shows_as_before():
    from costmodel import notebook

    shell = _shell()
    notebook.register(shell)
    data, _ = shell.display_formatter.format({"a": 1})
    assert data == {"text/plain": "{'a': 1}"}


@needs_ipython
def test_registering_twice_changes_nothing_and_needs_a_shell():
    from costmodel import notebook

    shell = _shell()
    assert notebook.register(shell) and notebook.register(shell)
    printers = shell.display_formatter.formatters["text/html"].deferred_printers
    assert ("costmodel.collectives.result", "CostTable") in printers
    assert notebook.register() is False  # no IPython shell running here


@needs_ipython
def test_types_the_command_line_defines_are_registered_when_their_module_loads():
    from costmodel import notebook

    shell = _shell()
    notebook.register(shell)
    import costmodel.cli.teaching  # noqa: F401 - defines result types of its own

    printers = shell.display_formatter.formatters["text/html"].deferred_printers
    assert ("costmodel.cli.teaching", "Written") in printers


@needs_ipython
def test_load_ext_registers():
    shell = _shell()
    costmodel.load_ipython_extension(shell)
    assert ("costmodel.crossovers", "BestRanges") in shell.display_formatter.formatters["text/html"].deferred_printers


@needs_ipython
def test_import_in_ipython_registers_and_stays_light():
    code = ("import sys\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\n"
            "import costmodel\n"
            "heavy = sorted(m for m in ('typer', 'rich', 'sympy', 'numpy', 'pandas', 'costmodel.cli.output',\n"
            "    'costmodel.cli.render_cost', 'costmodel.collectives.result') if m in sys.modules)\n"
            "printers = shell.display_formatter.formatters['text/html'].deferred_printers\n"
            "print(heavy, ('costmodel.collectives.result', 'CostTable') in printers)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] True"
