"""A syntax check of the LaTeX documents costmodel writes, without TeX, and a compile where TeX is installed.

:func:`latex_problems` lists what would stop a document compiling or let data into its markup:
unbalanced braces, a ``\\begin`` without its ``\\end`` (or ends in the wrong order), a package not in
:data:`costmodel.exercises.sheet.LATEX_PACKAGES`, a byte outside ASCII, a special character
(``$ # % _ ^ &``) outside the markup that uses it (math in ``\\ensuremath{...}``, ``&`` in a tabular
row), or a command no sheet writes (so ``\\input`` from a student's name would be caught).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from costmodel.exercises.sheet import LATEX_PACKAGES

ENGINES = ("pdflatex", "xelatex", "lualatex", "tectonic")

COMMANDS = {
    # the document's frame
    "documentclass", "usepackage", "setlength", "parindent", "parskip", "title", "date", "begin", "end",
    "maketitle", "section", "subsection", "item", "rule", "footnotesize", "textbf", "textit", "texttt", "hline",
    "ensuremath",
    # escapes and symbols of latex_text
    "textbackslash", "textasciicircum", "textasciitilde", "textless", "textgreater", "textbar", "ldots",
    "alpha", "beta", "gamma", "varepsilon", "eta", "theta", "lambda", "pi", "rho", "tau", "Sigma", "Psi",
    "times", "cdot", "leq", "geq", "leftarrow", "rightarrow", "surd", "lceil", "rceil", "ell", "mu", "infty",
    "approx", "neq", "sum", "Delta", "delta", "sigma", "nu", "varphi", "omega", "kappa", "pm", "bar", "div",
    "in", "sim", "ss", "o", "O", "ae", "AE", "oe", "OE", "aa", "AA", "l", "L", "i", "j", "guillemotleft",
    "guillemotright", "H", "v", "u", "c", "k", "r",
}
ENVIRONMENTS = {"document", "itemize", "enumerate", "tabular"}


def latex_problems(tex: str) -> list[str]:
    """Every problem found in *tex* (empty: it passes)."""
    problems: list[str] = []
    if not tex.isascii():
        problems.append("a character outside ASCII")
    if not tex.startswith("\\documentclass") or not tex.rstrip().endswith("\\end{document}"):
        problems.append("not a whole document")
    packages = re.findall(r"\\usepackage(?:\[[^]]*\])?\{([^}]*)\}", tex)
    problems += [f"package {p!r} not allowed" for p in packages if p not in LATEX_PACKAGES]
    depth = 0
    for c in re.sub(r"\\[{}]", "", tex.replace("\\\\", "")):
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            problems.append("a } closes nothing")
            break
    if depth > 0:
        problems.append(f"{depth} {{ never closed")
    stack: list[str] = []
    for kind, name in re.findall(r"\\(begin|end)\{([^}]*)\}", tex):
        if name not in ENVIRONMENTS:
            problems.append(f"environment {name!r} is not one a sheet uses")
        if kind == "begin":
            stack.append(name)
        elif not stack or stack.pop() != name:
            problems.append(f"\\end{{{name}}} does not close the last \\begin")
    problems += [f"\\begin{{{name}}} never ended" for name in stack]
    commands = set(re.findall(r"\\([A-Za-z]+)", tex))
    problems += [f"command \\{c} is not one a sheet writes" for c in sorted(commands - COMMANDS)]
    body = _outside_math(tex.replace("\\\\", ""))
    for line in body.splitlines():
        for special in "$#%_^&":
            if re.search(rf"(?<!\\){re.escape(special)}", line):
                problems.append(f"unescaped {special} in {line.strip()[:60]!r}")
    return problems


def _outside_math(tex: str) -> str:
    """*tex* without the arguments of ``\\ensuremath`` (where ``^`` and ``_`` belong) and with a tabular
    row's ``&`` separators dropped."""
    out, i = [], 0
    while True:
        j = tex.find("\\ensuremath{", i)
        if j < 0:
            out.append(tex[i:])
            break
        out.append(tex[i:j])
        depth, k = 0, j + len("\\ensuremath")
        while k < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[k], 0) if tex[k - 1] != "\\" else 0
            k += 1
            if depth == 0:
                break
        i = k
    text = "".join(out)
    rows, inside = [], False
    for line in text.splitlines():
        inside = inside or line.startswith("\\begin{tabular}")
        rows.append(re.sub(r"(?<!\\)&", "", line) if inside else line)
        inside = inside and not line.startswith("\\end{tabular}")
    return "\n".join(rows)


def engine() -> str | None:
    """The first TeX engine on PATH, or None."""
    return next((e for e in ENGINES if shutil.which(e)), None)


def compile_latex(tex: str, folder: Path, name: str = "doc") -> tuple[int, str]:
    """Compile *tex* with :func:`engine` in *folder*: its exit status and the end of its log."""
    found = engine()
    assert found is not None
    (folder / f"{name}.tex").write_text(tex, encoding="utf-8")
    argv = [found, f"{name}.tex"] if found == "tectonic" else \
        [found, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{name}.tex"]
    done = subprocess.run(argv, cwd=folder, capture_output=True, timeout=180, check=False)
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace")[-3000:]
