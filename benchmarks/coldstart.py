"""Cold starts of the command line, timed side by side with a reference, as the start-up benchmarks time them.

Each command runs in a fresh interpreter, as a user runs it (bytecode cached: a warm-up run writes it), the
commands round-robin, so that drift on a noisy machine hits them alike.  The verdict of a command is the
median of its paired ratios (its run over the reference's run of the same round), shown beside the ratio of
the fastest runs; a command may instead have a target in seconds, or in seconds beyond the reference, or none
(reported only).  Each command's import-time report (``PYTHONPROFILEIMPORTTIME``, which reaches a console
script too) is checked for the modules it must not load.  Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPATH": str(ROOT)}
"""As a user runs it: bytecode cached (the warm-up run writes it)."""

REFERENCE = ("python -c 'import numpy' (reference)", [sys.executable, "-c", "import numpy"])
COSTMODEL = [sys.executable, "-m", "costmodel"]


@dataclass(frozen=True)
class Command:
    """A command line and its target: *kind* ``ratio`` (to the reference), ``seconds`` (median) or
    ``beyond`` (seconds beyond the reference's run of the same round); target 0 reports only (its time;
    its imports are not checked)."""

    name: str
    argv: Sequence[str]
    target: float = 1.5
    kind: str = "ratio"
    rc: int = 0


def run(argv: Sequence[str], *, rc: int = 0) -> float:
    """Seconds *argv* takes from the repository's root; exits (never returns) on an unexpected exit code."""
    start = time.perf_counter()
    done = subprocess.run(list(argv), cwd=ROOT, capture_output=True, check=False, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != rc:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def compare(commands: Sequence[Command], *, rounds: int, heavy: Iterable[str] = ("numpy", "sympy"),
            reference: tuple[str, Sequence[str]] = REFERENCE) -> bool:
    """Time *commands* against *reference* over *rounds* rounds, print each verdict and each command's
    imports of *heavy* modules; True when every target is met and nothing heavy is imported."""
    everyone = [Command(reference[0], reference[1], target=0.0), *commands]
    for c in everyone:  # warm the file and bytecode caches
        run(c.argv, rc=c.rc)
    times: dict[str, list[float]] = {c.name: [] for c in everyone}
    for _ in range(rounds):
        for c in everyone:
            times[c.name].append(run(c.argv, rc=c.rc))
    base = times[reference[0]]
    ok = True
    width = max(len(c.name) for c in everyone)
    print(f"{'command':{width}s} {'median':>9s} {'fastest':>9s} {'ratio':>7s} {'(of fastest)':>12s} "
          f"{'target':>13s}")
    for c in everyone:
        ratio = statistics.median(t / r for t, r in zip(times[c.name], base, strict=True))
        median, fastest = statistics.median(times[c.name]), min(times[c.name])
        beyond = statistics.median(t - r for t, r in zip(times[c.name], base, strict=True))
        good = (not c.target or {"ratio": ratio <= c.target, "seconds": median < c.target,
                                 "beyond": beyond < c.target}[c.kind])
        ok &= good
        shown = "" if not c.target else {"ratio": f"≤ {c.target}×", "seconds": f"< {c.target} s",
                                         "beyond": f"< {c.target} s more"}[c.kind]
        verdict = "" if not c.target else "ok" if good else "FAIL"
        print(f"{c.name:{width}s} {median * 1000:7.1f}ms {fastest * 1000:7.1f}ms {ratio:6.2f}× "
              f"{fastest / min(base):11.2f}× {shown:>13s} {verdict}")
    unwanted = set(heavy)
    for c in (c for c in commands if c.target):
        done = subprocess.run(list(c.argv), cwd=ROOT, capture_output=True, check=False,
                              env={**ENV, "PYTHONPROFILEIMPORTTIME": "1"})
        loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.decode().splitlines()
                  if "|" in line} & unwanted
        ok &= not loaded
        print(f"{c.name}: imports {', '.join(sorted(loaded)) or 'none of ' + ', '.join(sorted(unwanted))}"
              f"{' FAIL' if loaded else ''}")
    print(f"targets: {'ok' if ok else 'FAIL'}")
    return ok
