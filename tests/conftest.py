"""Test-wide configuration: the hypothesis profile, ``tests`` importable as a package, and no width
inherited from the shell.

The suite runs with ``--import-mode=importlib`` (see pyproject.toml), which does
not put the repository root on ``sys.path``; test modules import shared
strategies as ``from tests.strategies import ...``, so the root is added here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hypothesis import HealthCheck, settings

_ROOT = str(Path(__file__).resolve().parent.parent)
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

settings.register_profile(
    "costmodel",
    deadline=None,  # exact Fraction arithmetic has no useful per-example deadline
    derandomize=True,  # the same examples on every run and machine
    database=None,  # nothing written next to the sources
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("costmodel")

# Output that is not a terminal is not wrapped unless COLUMNS is set (costmodel/cli/output.py); a width
# exported by the shell, or by a test runner's worker processes (pytest-xdist sets COLUMNS=80), would
# wrap every table the tests read.  The tests that check a width set COLUMNS themselves.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
