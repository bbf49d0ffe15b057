"""Per-student sheets and keys in LaTeX: every document passes a syntax check without TeX, a student's name
cannot break or inject into it, and where a TeX engine is installed the documents compile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costmodel.errors import UnknownNameError
from costmodel.exercises import load_bank, problem_sheet
from costmodel.exercises.assignment import bank_fingerprint, create_assignment, read_roster
from costmodel.exercises.sheet import latex_text, latex_writes
from tests.clirun import run
from tests.latex_check import compile_latex, engine, latex_problems

BANK = load_bank()
SECRET = b"course-secret-for-tests-0123456789"
HOSTILE = r"O'Brien & {x} \input{/etc/passwd} $x^2$ #1 50% ~ _ [y] \\ }"
ROSTER = (f'id,name\nob,"{HOSTILE}"\nzoe,Zoë Ní Bhriain-Łukasz\nwu,吴\n'
          "m_1,\"Mary-Jane Smith\"\n")
POOLS = ["{ring-bytes|tree-levels}", "crossover-rd-rab", "cost-formula", "pipeline-bubble", "consensus-rounds-ring"]


def _made(format: str = "latex"):
    from costmodel.exercises.assignment import parse_exercises

    students = read_roster(ROSTER, path="roster.csv")
    return create_assignment(BANK, parse_exercises(",".join(POOLS)), students, SECRET, assignment_id="hw1",
                             title="Homework #1 & more", fingerprint=bank_fingerprint(), format=format)


def test_every_sheet_and_key_passes_the_syntax_check():
    files = _made().files()
    tex = {path: text for path, text in files.items() if path.endswith(".tex")}
    assert sorted(tex) == sorted(f"{kind}/{s}.tex" for kind in ("keys", "sheets") for s in ("ob", "zoe", "wu", "m_1"))
    assert not any(path.endswith(".md") for path in files)
    for path, text in tex.items():
        assert latex_problems(text) == [], path


def test_a_students_name_is_text_never_markup():
    sheet = _made().files()["sheets/ob.tex"]
    title = next(line for line in sheet.splitlines() if line.startswith("\\title{"))
    assert title == ("\\title{Homework \\#1 \\& more: O'Brien \\& \\{x\\} \\textbackslash{}input\\{/etc/passwd\\} "
                     "\\$x\\textasciicircum{}2\\$ \\#1 50\\% \\textasciitilde{} \\_ {[}y{]} "
                     "\\textbackslash{}\\textbackslash{} \\}}")
    assert "\\input" not in sheet and "\\$x\\textasciicircum{}2\\$" in sheet
    assert latex_problems(sheet) == []
    # the syntax check itself catches what escaping prevents
    raw = sheet.replace(latex_text(HOSTILE), HOSTILE)
    assert any("input" in p for p in latex_problems(raw)) and any("{" in p or "}" in p for p in latex_problems(raw))


def test_accented_names_are_set_and_other_scripts_fall_back_to_the_id():
    files = _made().files()
    assert "\\title{Homework \\#1 \\& more: Zo\\\"{e} N\\'{\\i{}} Bhriain-\\L{}ukasz}" in files["sheets/zoe.tex"]
    assert "\\title{Homework \\#1 \\& more: wu}" in files["sheets/wu.tex"]  # 吴: no pdflatex glyph
    assert "answers/m\\_1.toml" in files["sheets/m_1.tex"]
    assert latex_writes("Zoë Ní Bhriain-Łukasz") and not latex_writes("吴")


def test_the_markdown_and_latex_sheets_ask_the_same_questions():
    md, tex = _made("markdown").files(), _made("latex").files()
    for student in ("ob", "zoe"):
        asked = re.findall(r"answer `([a-z-]+)`", md[f"sheets/{student}.md"])
        assert asked == re.findall(r"answer \\texttt\{([a-z-]+)\}", tex[f"sheets/{student}.tex"]) and asked
        assert md[f"answers/{student}.toml"] == tex[f"answers/{student}.toml"]


@pytest.mark.parametrize("seed", [None, 0, 7, 123])
def test_every_exercise_of_the_bank_writes_a_valid_latex_sheet_and_key(seed):
    sheet = problem_sheet(BANK, seed=seed, format="latex")
    assert latex_problems(sheet.problems) == [] and latex_problems(sheet.key) == []


def test_the_syntax_check_finds_each_kind_of_problem():
    bad = ("\\documentclass{article}\n\\usepackage{hyperref}\n\\begin{document}\n\\begin{itemize}\n"
           "a_b & 5% \\input{x}\n\\end{document}\n")
    problems = latex_problems(bad)
    for needle in ("hyperref", "does not close", "never ended", "\\input", "unescaped _",
                   "unescaped %", "unescaped &"):
        assert any(needle in p for p in problems), (needle, problems)
    assert latex_problems("\\documentclass{article}\\begin{document}{\\end{document}") == \
        ["1 { never closed"]
    assert "a character outside ASCII" in latex_problems("\\documentclass{article}\\begin{document}é\\end{document}")


def test_create_writes_latex_from_the_command_line(capsys, tmp_path: Path):
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    (tmp_path / "course.key").write_bytes(SECRET)
    common = ("assignment", "create", "--exercises", "ring-bytes", "--roster", str(tmp_path / "roster.csv"),
              "--secret-file", str(tmp_path / "course.key"))
    out, _ = run(capsys, *common, "--out", str(tmp_path / "hw"), "--format", "latex")
    assert "problem sheets in LaTeX" in out
    assert sorted(p.name for p in (tmp_path / "hw" / "sheets").iterdir()) == ["m_1.tex", "ob.tex", "wu.tex",
                                                                             "zoe.tex"]
    _, err = run(capsys, *common, "--out", str(tmp_path / "hw2"), "--format", "docx", rc=2)
    assert err.startswith("error: unknown format 'docx'") and len(err.strip().splitlines()) == 1
    with pytest.raises(UnknownNameError):
        _made("pdf")


@pytest.mark.skipif(engine() is None, reason="no TeX engine (pdflatex, xelatex, lualatex, tectonic) on PATH")
def test_the_latex_sheets_and_keys_compile(tmp_path: Path):
    files = _made().files()
    for path in ("sheets/ob.tex", "keys/ob.tex", "sheets/zoe.tex", "keys/wu.tex"):
        rc, log = compile_latex(files[path], tmp_path, path.replace("/", "-").removesuffix(".tex"))
        assert rc == 0, (path, log)
        assert (tmp_path / path.replace("/", "-").replace(".tex", ".pdf")).stat().st_size > 1000
    bank = problem_sheet(BANK, seed=11, format="latex")
    for name, text in (("bank-sheet", bank.problems), ("bank-key", bank.key)):
        rc, log = compile_latex(text, tmp_path, name)
        assert rc == 0, (name, log)
