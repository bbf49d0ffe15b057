"""docs/howto/add-log-format.md: its blocks are what ships, and following them in a copy of the
repository from which the IMB reader was removed gives the reader back, its tests passing.
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
PAGE = (ROOT / "docs" / "howto" / "add-log-format.md").read_text(encoding="utf-8")
READER = "costmodel/calibration/logs/imb.py"
TESTS = "tests/unit/calibration/test_imb.py"
PACKAGE = "costmodel/calibration/logs/__init__.py"


def _registration() -> tuple[str, str]:
    """The page's import line and FORMATS statement."""
    registration = block(PAGE, "# costmodel/calibration/logs/__init__.py").split("\n", 1)[1]
    imports, formats = registration.strip().split("\n\n")
    return imports, formats


def _without_imb(statement: str) -> str:
    return statement.replace(" imb,", "").replace(" imb.FORMAT,", "")


def test_the_page_shows_what_ships():
    assert block(PAGE, '"""Intel MPI Benchmarks') == (ROOT / READER).read_text(encoding="utf-8")
    assert block(PAGE, '"""The Intel MPI Benchmarks reader') == (ROOT / TESTS).read_text(encoding="utf-8")
    package = (ROOT / PACKAGE).read_text(encoding="utf-8")
    assert all(statement in package for statement in _registration())
    expected = block(PAGE, "# tests/unit/calibration/test_logs.py, in EXPECTED").split("\n", 1)[1]
    assert expected in (ROOT / "tests/unit/calibration/test_logs.py").read_text(encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="the copy uses POSIX paths")
def test_following_the_page_adds_the_format_back(tmp_path: Path):
    copy = tmp_path / "repo"
    for part in ("costmodel", "tests"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    package = copy / PACKAGE
    imports, formats = _registration()
    expected = block(PAGE, "# tests/unit/calibration/test_logs.py, in EXPECTED").split("\n", 1)[1]
    logs = sorted((ROOT / "tests/data/logs/imb").glob("*.txt"))
    # the copy as it was before the format: no module, no test, no registration, no logs
    (copy / READER).unlink()
    (copy / TESTS).unlink()
    shutil.rmtree(copy / "tests/data/logs/imb")
    test_logs = copy / "tests/unit/calibration/test_logs.py"
    test_logs.write_text(test_logs.read_text(encoding="utf-8").replace(expected, ""), encoding="utf-8")
    text = package.read_text(encoding="utf-8")
    package.write_text(text.replace(imports, _without_imb(imports)).replace(formats, _without_imb(formats)),
                       encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "100"}

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False)

    log = "tests/data/logs/imb/pingpong_2node_oci_intelmpi.txt"
    (copy / "tests/data/logs/imb").mkdir()
    shutil.copy(logs[-1], copy / log)
    before = run([sys.executable, "-m", "costmodel", "calibrate", "fit", log])
    assert before.returncode == 2 and before.stderr.startswith("error: ")  # no reader of its own
    # the page: the logs and what they read as, the reader, its registration, its tests
    for path in logs:
        shutil.copy(path, copy / "tests/data/logs/imb" / path.name)
    replace_once(test_logs, '    "osu_allreduce_kind_2pod_2rank_tcp.txt"',
                  expected + '    "osu_allreduce_kind_2pod_2rank_tcp.txt"')
    (copy / READER).write_text(block(PAGE, '"""Intel MPI Benchmarks'), encoding="utf-8")
    text = package.read_text(encoding="utf-8")
    package.write_text(text.replace(_without_imb(imports), imports).replace(_without_imb(formats), formats),
                       encoding="utf-8")
    (copy / TESTS).write_text(block(PAGE, '"""The Intel MPI Benchmarks reader'), encoding="utf-8")
    after = run([sys.executable, "-m", "costmodel", "calibrate", "fit", log])
    assert after.returncode == 0, after.stderr
    assert "12.25 GB/s" in after.stdout and "α 1.72 µs" in after.stdout
    command = block(PAGE, "python -m pytest tests/unit/calibration/test_imb.py", "sh").strip()
    tests = run([sys.executable, *shlex.split(command)[1:], "-n", "0", "-q"])
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert re.search(r"\b([1-9]\d*) passed", tests.stdout), tests.stdout[-2000:]
