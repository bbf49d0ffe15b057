"""The tutorial notebook (docs/notebooks/tutorial.py, jupytext's percent format) runs top to bottom in a
Jupyter kernel, and shows what it says: formulas that solve to the command line's crossover, results as
HTML tables, a sweep of one row per point, a plot.

Needs the notebook packages of the ``test`` extra (nbclient, nbformat, ipykernel, jupytext); skipped
with the reason when one is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "notebooks" / "tutorial.py"

for _name in ("nbclient", "nbformat", "ipykernel", "jupytext"):
    pytest.importorskip(_name, reason=f"the tutorial notebook test needs {_name}: pip install -e '.[test]'")


@pytest.fixture(scope="module")
def notebook() -> Any:
    """The tutorial, executed in a fresh kernel (this interpreter's) with the repository importable."""
    import jupytext
    from nbclient import NotebookClient

    nb = jupytext.read(NOTEBOOK)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), saved]))
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(ROOT)}}).execute()  # raises on any error
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    return nb


def _outputs(nb: Any, last_line: str) -> dict[str, Any]:
    """The display data of the code cell whose last line is *last_line* (each MIME type once)."""
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source.strip().splitlines()[-1] == last_line]
    assert len(cells) == 1, f"{len(cells)} cells end with {last_line!r}"
    data: dict[str, Any] = {}
    for output in cells[0].outputs:
        assert output.output_type != "error", output
        data.update(output.get("data", {}))
        if output.output_type == "stream":
            data.setdefault("stream", "")
            data["stream"] += output.text
    return data


def test_the_notebook_runs_without_errors(notebook):
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    assert all(c.execution_count for c in notebook.cells if c.cell_type == "code")


def test_a_formula_shows_and_its_expression_is_sympy(notebook):
    shown = _outputs(notebook, "rab")
    assert "text/latex" in shown and "text/html" in shown
    assert shown["text/latex"] == r"$T = 2 \alpha \log_2 p + \frac{2 \beta n \left(p - 1\right)}{p} + " \
                                  r"\frac{\gamma n \left(p - 1\right)}{p}$"
    expr = _outputs(notebook, "rab.expr")
    assert expr["text/plain"] == "2*alpha*log2(p) + 2*beta*n*(p - 1)/p + gamma*n*(p - 1)/p"
    assert "text/latex" in expr  # sympy's own display
    # recursive doubling: log₂p(α + nβ); Rabenseifner: 2log₂p·α + 2(p − 1)/p·nβ; equal where
    # n = α·p·log₂p / (β(p·log₂p − 2p + 2))
    assert _outputs(notebook, "n_star")["text/plain"] == "alpha*p*log2(p)/(beta*(p*log2(p) - 2*p + 2))"


def test_the_expression_is_the_registrys_cost(notebook):
    # 8α + 2(15/16)·2^20·β = 4e-5 + 1.96608e-3·0.08 s = 15413/78125000 s (the sketch's seed value)
    shown = _outputs(notebook, "by_formula, by_registry.time_s")
    assert shown["text/plain"] == "(15413/78125000, Fraction(15413, 78125000))"


def test_the_solved_crossover_is_the_commands(notebook):
    # n* = α/(β(1 − 2(p − 1)/(p·log₂p))) at p = 16: 5e-6/(8e-11·(1 − 30/64)) = 2000000/17 B
    shown = _outputs(notebook, "at_16, float(at_16)")
    assert shown["text/plain"] == "(2000000/17, 117647.05882352941)"
    assert "<pre" in _outputs(notebook, "crossing")["text/html"]


def test_the_optimal_segments_are_the_formulas(notebook):
    # T = (p − 2 + k)(α + nβ/k): dT/dk = α − (p − 2)nβ/k² = 0 at k* = √((p − 2)nβ/α)
    shown = _outputs(notebook, 'k_star, chain.parameters[0]["optimum"]')
    assert shown["text/plain"] == "(sqrt(beta)*sqrt(n)*sqrt((p - 2)/alpha), '√(β·n·(p - 2)/α)')"


def test_cost_shows_an_html_table(notebook):
    html = _outputs(notebook, "by_registry")["text/html"]
    assert html.startswith("<pre") and "rabenseifner" in html and "197.3 µs" in html


def test_the_sweep_is_a_frame_of_one_row_per_point_and_is_plotted(notebook):
    head = _outputs(notebook, "frame.head()")["text/html"]
    assert "n_bytes" in head and "rabenseifner" in head
    plot = [c for c in notebook.cells if c.cell_type == "code" and "plt.show()" in c.source]
    assert any("image/png" in o.get("data", {}) for o in plot[0].outputs)


def test_results_convert_to_frames(notebook):
    best = _outputs(notebook, 'costmodel.best("allreduce", ["ring", "rd", "rab"], p=64, link=link).to_frame()')
    assert "from_bytes" in best["text/html"]
    table = _outputs(notebook, 'costmodel.compare("allreduce", ["ring", "rd", "rab"], p=64, n="64MiB", '
                               "link=link).to_frame()")
    assert "time_s" in table["text/html"]


def test_a_worked_example_and_a_checked_exercise_show(notebook):
    assert "Ring all-reduce" in _outputs(notebook, "worked")["text/html"]
    report = _outputs(notebook, "report")["text/html"]
    assert "1 of 2 correct" in report
