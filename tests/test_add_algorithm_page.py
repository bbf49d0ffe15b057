"""docs/howto/add-algorithm.md, followed literally in a copy of the repository.

The page's code blocks (the record, the builder, the hand-worked test entries) are pasted where
the page says, in a temporary copy; the new algorithm must then appear in `costmodel algorithms`
and `costmodel formula`, be picked up by the crosscheck parametrisation, and pass the tests the
page names.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pages import block

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "howto" / "add-algorithm.md").read_text(encoding="utf-8")


def _insert_before(path: Path, anchor: str, text: str) -> None:
    content = path.read_text(encoding="utf-8")
    assert content.count(anchor) == 1, (path, anchor)
    path.write_text(content.replace(anchor, text + anchor), encoding="utf-8")


def _follow_the_page(copy: Path) -> None:
    # step 2: the record, next to the others and in ALGORITHMS
    record = block(PAGE, "# costmodel/collectives/broadcast.py")
    body = "\n".join(line for line in record.splitlines()
                     if not line.startswith(("#", "from ", "ALGORITHMS")))
    broadcast = copy / "costmodel/collectives/broadcast.py"
    _insert_before(broadcast, "\nALGORITHMS = (", body + "\n")
    content = broadcast.read_text(encoding="utf-8")
    start = content.index("\nALGORITHMS = (")
    end = content.index(")", start)
    broadcast.write_text(content[:end].rstrip().rstrip(",") + ", NAIVE" + content[end:], encoding="utf-8")
    # step 3: the builder, beside the others, and its BUILDERS entry
    builder = block(PAGE, "# costmodel/schedules/trees.py (beside naive_gather and naive_scatter)")
    function = builder.split("\n\nBUILDERS = {")[0].split("\n", 1)[1]
    entry = next(line for line in builder.splitlines() if line.strip().startswith('"naive_broadcast"'))
    trees = copy / "costmodel/schedules/trees.py"
    _insert_before(trees, "\nBUILDERS = {", "\n" + function + "\n\n")
    _insert_before(trees, '    "scatter_allgather_broadcast": ("broadcast"', entry.strip().join(["    ", "\n"]))
    # step 4: the hand-worked entries
    entries = [line.strip() for line in block(PAGE, "# tests/crosscheck/test_trees_chain_alltoall.py").splitlines()
               if line.strip().startswith('"naive_broadcast"')]
    assert len(entries) == 2
    crosscheck = copy / "tests/crosscheck/test_trees_chain_alltoall.py"
    _insert_before(crosscheck, '    "naive_gather": ("gather"', f"    {entries[0]}\n")
    _insert_before(crosscheck, '    "naive_gather": [_copies(', f"    {entries[1]}\n")


@pytest.mark.skipif(sys.platform == "win32", reason="the copy uses POSIX paths")
def test_following_the_page_adds_a_checked_algorithm(tmp_path: Path):
    copy = tmp_path / "repo"
    for part in ("costmodel", "tests"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    _follow_the_page(copy)
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "100"}

    def python_in_copy(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True,
                              timeout=600, check=False)

    listed = python_in_copy("-m", "costmodel", "algorithms", "broadcast", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "naive" in listed.stdout and '"linear"' in listed.stdout
    formula = python_in_copy("-m", "costmodel", "formula", "broadcast", "linear", "--json")
    assert formula.returncode == 0, formula.stderr
    assert json.loads(formula.stdout)["algorithm"] == "naive"
    verify = python_in_copy("-m", "costmodel", "schedule", "broadcast", "naive", "-p", "4", "-n", "1MB", "--verify",
                            "--profile", "textbook", "--json")
    assert verify.returncode == 0, verify.stderr
    collected = python_in_copy("-m", "pytest", "-n", "0", "-q", "--collect-only", "tests/crosscheck/test_schedules.py",
                               "-k", "broadcast/naive")
    assert "broadcast/naive" in collected.stdout, collected.stdout[-2000:]
    tests = python_in_copy("-m", "pytest", "-n", "0", "-q", "-x", "tests/crosscheck/test_trees_chain_alltoall.py",
                           "tests/crosscheck/test_schedules.py", "tests/registry/test_records.py",
                           "-k", "naive_broadcast or broadcast/naive or covered or citation or record")
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
