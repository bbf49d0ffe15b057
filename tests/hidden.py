"""Running Python as on a machine without an optional package: a fresh interpreter where importing
it fails as if it were not installed (so the test runs on a machine that has it too)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_HIDE = textwrap.dedent("""
    import importlib.abc, sys

    class Hidden(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == {package!r} or name.startswith({package!r} + "."):
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, Hidden())
""")


def run_without(package: str, code: str) -> subprocess.CompletedProcess[str]:
    """*code* run in a fresh interpreter (in the repository root) where *package* cannot be imported."""
    return subprocess.run([sys.executable, "-c", _HIDE.format(package=package) + code], capture_output=True,
                          text=True, timeout=300, check=False, cwd=ROOT)
