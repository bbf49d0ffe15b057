"""``costmodel privacy`` from the command line, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_privacy_cli.py [ROUNDS]``.  Cold starts, interleaved round-robin so that
drift hits every command alike; the verdict of each is the median of its paired ratios (its run over
the reference's run of the same round), target ≤ 1.5× the reference:

* ε of the MNIST run (q = 256/60000, σ = 1.1, 60 epochs) over dp_accounting's 156 default orders,
  as a table and as ``--json``;
* Opacus's two-phase composition over the orders 2-32;
* the noise multiplier for ε = 2 by bisection over the orders 2-64 (reported; no target: about twenty
  accountings).

Each command's ``-X importtime`` report is checked for numpy, scipy and sympy, which the accounting
does not need.  Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPATH": str(ROOT)}
"""As a user runs it: bytecode cached (the warm-up run writes it)."""

MNIST = ["--batch", "256", "--dataset", "60000", "--noise", "1.1", "--epochs", "60", "--delta", "1e-5"]


def _run(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def main(rounds: int = 9) -> bool:
    python = sys.executable
    privacy = [python, "-m", "costmodel", "privacy"]
    # name: (argv, target ratio to the reference; 0 reports only)
    commands: dict[str, tuple[list[str], float]] = {
        "python -c 'import numpy' (reference)": ([python, "-c", "import numpy"], 0.0),
        "privacy MNIST, 156 orders --json": ([*privacy, *MNIST, "--json"], 1.5),
        "privacy MNIST, 156 orders (table)": ([*privacy, *MNIST], 1.5),
        "privacy two phases, orders 2-32": ([*privacy, "--phases", "1e-5,1.0,10;1e-4,3.0,4", "--delta",
                                             "1e-5", "--orders", "2-32"], 1.5),
        "privacy σ for ε = 2, orders 2-64": ([*privacy, "-q", "0.01", "--steps", "10000", "--target-epsilon",
                                              "2", "--delta", "1e-5", "--orders", "2-64"], 0.0),
    }
    for argv, _ in commands.values():  # warm the file and bytecode caches
        _run(argv)
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(rounds):
        for name, (argv, _) in commands.items():
            times[name].append(_run(argv))
    reference = next(iter(commands))
    ok = True
    print(f"{'command':40s} {'median':>9s} {'ratio':>7s} {'target':>8s}")
    for name, (_, target) in commands.items():
        ratio = statistics.median(t / r for t, r in zip(times[name], times[reference], strict=True))
        median = statistics.median(times[name])
        good = not target or ratio <= target
        ok &= good
        shown = f"≤ {target}×" if target else ""
        print(f"{name:40s} {median * 1000:7.1f}ms {ratio:6.2f}× {shown:>8s} "
              f"{'' if not target else 'ok' if good else 'FAIL'}")
    for name, (argv, _) in list(commands.items())[1:]:
        done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=ROOT, capture_output=True,
                              check=False, env=ENV)
        heavy = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.decode().splitlines()
                 if "|" in line} & {"numpy", "scipy", "sympy"}
        ok &= not heavy
        print(f"{name}: imports {', '.join(sorted(heavy)) or 'none of numpy, scipy, sympy'}"
              f"{' FAIL' if heavy else ''}")
    print(f"targets: {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
