"""docs/howto/add-command.md, followed literally in a copy of the repository.

The page's blocks (the core module, the citation, the command, the tests) are written where the page
says, its registrations made, its two generating commands run; the new command must then answer from
the command line, appear on the help screen, and pass the tests the page runs, with the layer test and
the generated tables' tests among them.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pages import block, replace_once

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "howto" / "add-command.md").read_text(encoding="utf-8")


def _inline(code: str) -> str:
    """The text of the page's inline code that starts with *code*."""
    found = re.search(r"`(" + re.escape(code) + r"[^`]*)`", PAGE)
    assert found, code
    return found.group(1)


def _follow_the_page(copy: Path) -> None:
    # 1: the module and its citation
    (copy / "costmodel/halfsize.py").write_text(block(PAGE, "# costmodel/halfsize.py"), encoding="utf-8")
    citation = block(PAGE, "# costmodel/references.py (before CITATIONS, and HOCKNEY_1994 in its list)")
    references = copy / "costmodel/references.py"
    replace_once(references, "\nCITATIONS: dict[str, Citation] = {",
                  "\n" + citation.split("\n", 1)[1] + "\nCITATIONS: dict[str, Citation] = {")
    replace_once(references, "        THAKUR_2005, CHAN_2007,", "        THAKUR_2005, CHAN_2007, HOCKNEY_1994,")
    # 2: its layer
    assert '`"halfsize"`' in PAGE
    replace_once(copy / "tests/test_import_layers.py", '("questions", ("step",', '("questions", ("halfsize", "step",')
    # 3: the command
    (copy / "costmodel/cli/halfsize.py").write_text(block(PAGE, "# costmodel/cli/halfsize.py"), encoding="utf-8")
    # 4: the registrations, as the page writes them
    replace_once(copy / "costmodel/cli/app.py", '    "shell": ("completion",),',
                  f'    {_inline(chr(34) + "halfsize" + chr(34) + ": (")}\n    "shell": ("completion",),')
    replace_once(copy / "costmodel/cli/render.py", '    "costmodel.cli.validate": (',
                  f'    {_inline(chr(34) + "costmodel.cli.halfsize" + chr(34))}\n    "costmodel.cli.validate": (')
    # 5: the tests
    tests = block(PAGE, "# tests/unit/test_halfsize.py")
    (copy / "tests/unit/test_halfsize.py").write_text(tests.split("\n", 1)[1], encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="the copy uses POSIX paths")
def test_following_the_page_adds_a_command(tmp_path: Path):
    copy = tmp_path / "repo"
    for part in ("costmodel", "tests", "docs"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for part in ("pyproject.toml", "README.md", "mkdocs.yml"):
        shutil.copy(ROOT / part, copy / part)
    _follow_the_page(copy)
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "100"}

    def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False,
                              **kwargs)  # type: ignore[call-overload]

    generate = block(PAGE, "python -m costmodel.cli.app > costmodel/cli/summaries.py", "sh")
    for line in generate.strip().splitlines():
        command, target = line.split(" > ")
        done = run([sys.executable, *shlex.split(command)[1:]])
        assert done.returncode == 0, done.stderr
        (copy / target).write_text(done.stdout, encoding="utf-8")
    answer = run([sys.executable, "-m", "costmodel", "half-size", "--alpha", "5us", "--bandwidth", "12.5GB/s"])
    assert answer.returncode == 0, answer.stderr
    assert re.search(r"n½ = α/β\s+62\.5 kB", answer.stdout), answer.stdout
    listed = run([sys.executable, "-m", "costmodel", "--help"])
    assert "half-size" in listed.stdout
    assert "half-size" in (copy / "docs/reference/commands.md").read_text(encoding="utf-8")
    page_tests = " ".join(block(PAGE, "python -m pytest tests/unit/test_halfsize.py", "sh").replace("\\\n", " ").split())
    tests = run([sys.executable, *shlex.split(page_tests)[1:], "-n", "0", "-q"])
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert re.search(r"\b([1-9]\d*) passed", tests.stdout), tests.stdout[-2000:]
