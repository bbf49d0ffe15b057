"""The package passes the type checker (mypy, configured in pyproject.toml), as it passes ruff."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_is_clean(tmp_path: Path):
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install '.[test]'")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
