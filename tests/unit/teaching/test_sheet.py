"""Sheets and keys an instructor can hand out: every answer's name, unit and precision; LaTeX that compiles."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from costmodel.errors import UnknownNameError
from costmodel.exercises import load_bank, problem_sheet
from costmodel.exercises.sheet import latex_text
from tests.clirun import run

BANK = load_bank()


def test_every_question_names_its_answer_unit_and_precision():
    sheet = problem_sheet(BANK, seed=17, ids=["ring-bytes", "crossover-rd-rab", "pipeline-bubble"])
    lines = [line for line in sheet.problems.splitlines() if line.endswith("______")]
    assert lines == [
        "- Rounds in all (answer `rounds`, exact integer): ______",
        "- Bytes each worker sends (answer `sent`, in MB, ±1 %): ______",
        "- Crossover size (answer `crossover`, in kB, 3 significant figures): ______",
        "- Time of one mini-batch, in slots (answer `total-slots`, exact integer): ______",
        "- Bubble fraction (answer `bubble`, ±1 %): ______",
    ], lines
    assert "(`sent`): " in sheet.key and "(±1 %)" in sheet.key


def _balanced(tex: str) -> bool:
    depth = 0
    for c in re.sub(r"\\[{}]", "", tex):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("seed", [None, 5])
def test_latex_sheets_are_standalone_documents(seed):
    sheet = problem_sheet(BANK, seed=seed, format="latex")
    for tex in (sheet.problems, sheet.key):
        assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
        assert tex.count("\\begin{document}") == 1 and tex.isascii()
        assert _balanced(tex)
        text = "\n".join(line for line in tex.splitlines() if not line.endswith("\\\\"))  # not table rows
        text = text.replace("^{", "").replace("_{", "")  # superscripts and subscripts in math
        for special in "%#&_^~$":  # every other TeX special is escaped
            assert not re.search(rf"(?<!\\){re.escape(special)}", text), special
        assert tex.count("\\begin{itemize}") == tex.count("\\end{itemize}")
        assert tex.count("\\begin{enumerate}") == tex.count("\\end{enumerate}")


def test_latex_escapes_and_symbols():
    assert latex_text("5 % & $ # _ { } ~ ^ \\") == \
        r"5 \% \& \$ \# \_ \{ \} \textasciitilde{} \textasciicircum{} \textbackslash{}"
    assert latex_text("ρ ≤ 0.1, ±1 %") == r"\ensuremath{\rho} \ensuremath{\leq} 0.1, \ensuremath{\pm}1 \%"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_sheet_compiles(tmp_path):
    sheet = problem_sheet(BANK, seed=3, format="latex")
    for name, tex in (("sheet.tex", sheet.problems), ("key.tex", sheet.key)):
        (tmp_path / name).write_text(tex, encoding="utf-8")
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", name],
                              cwd=tmp_path, capture_output=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout[-2000:]


def test_sheet_command_writes_latex(capsys, tmp_path):
    run(capsys, "exercise", "sheet", "--seed", "4", "--id", "ring-bytes", "--format", "latex", "--out", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key-4.tex", "sheet-4.tex"]
    assert (tmp_path / "sheet-4.tex").read_text().startswith("\\documentclass")


def test_unknown_format_is_refused(capsys, tmp_path):
    with pytest.raises(UnknownNameError):
        problem_sheet(BANK, seed=1, format="docx")
    _, err = run(capsys, "exercise", "sheet", "--format", "docx", "--out", str(tmp_path), rc=2)
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_keys_show_only_the_givens_the_exercise_states():
    for exercise_id, unstated in (("zero-stages", "memory of one GPU"), ("busbw-allreduce", "peak link"),
                                  ("busbw-collectives", "peak link"), ("dp-memory", "memory of one GPU")):
        key = problem_sheet(BANK, seed=3, ids=[exercise_id]).key
        assert unstated not in key, exercise_id
    key = problem_sheet(BANK, seed=None, ids=["zero-stages"]).key
    assert "32 GB" not in key and "120 GB" in key
    key = problem_sheet(BANK, seed=None, ids=["busbw-efficiency"]).key
    assert "peak link bandwidth" in key  # stated there: kept


@pytest.mark.parametrize("exercise_id", ["busbw-allreduce", "busbw-collectives", "busbw-efficiency"])
def test_bus_bandwidth_variants_never_beat_the_link(exercise_id):
    exercise = BANK.get(exercise_id)
    for seed in [None, *range(400)]:
        v = exercise.variant(seed)
        busbw = v.worked.answers["busbw"].value if "busbw" in v.worked.answers else None
        assert busbw is not None and busbw <= v.values["peak"], (seed, v.shown)


def _steps(exercise_id, seed=None):
    return [line for line in BANK.get(exercise_id).variant(seed).worked.to_markdown().splitlines()
            if line[:1].isdigit()]


def test_worked_steps_assert_no_false_equalities():
    # the expression holds one form of each value: 50.33 MB = 48 MiB belongs to n, not to the product
    assert _steps("tp-allreduces")[3] == ("4. Ring all-reduce: bytes each GPU sends: 2(t − 1)/t·n = 2 × 7/8 × "
                                          "50.33 MB = **88.08 MB = 84 MiB**")
    assert _steps("moe-alltoalls")[4] == ("5. Bytes leaving one GPU per layer, forward pass: 2 × 29.36 MB = "
                                          "**58.72 MB = 56 MiB**")
    for exercise in BANK:
        for line in exercise.variant(3).worked.to_markdown().splitlines():
            if line[:1].isdigit() and "**" in line:
                expression = line.split("**")[0]
                assert "MiB" not in expression and "GiB" not in expression, (exercise.id, line)


def test_fractions_show_their_decimal_and_logs_their_parentheses():
    assert _steps("pipeline-bubble")[3].endswith("**3/7 ≈ 0.4286**")
    assert "ln 100 / ln(5/3)" in "\n".join(_steps("consensus-rounds-graphs"))


def test_rho_is_derived_from_the_mixing_matrix_eigenvalues():
    steps = _steps("consensus-rounds-graphs")  # a 16-worker hypercube: W = (I + A)/5
    assert steps[2].endswith("1/(d + 1) at d = 4 = **0.2**")
    assert steps[3] == ("4. Eigenvalues λ of W (the roots of det(W − λI)), largest |λ| first: "
                        "**1, 0.6 (×4), −0.6, 0.2 (×6), −0.2 (×4)**")
    assert "closed form" not in "\n".join(steps) and "other than the consensus eigenvalue" in steps[4]
    ring = _steps("consensus-rounds-ring")  # 4 workers: (1 + 2 cos(2πk/4))/3 = 1, 1/3, 1/3, −1/3
    assert ring[3].endswith("**1, 0.3333 (×2), −0.3333**")
