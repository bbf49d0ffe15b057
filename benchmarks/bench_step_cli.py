"""A step query from the command line, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_step_cli.py [ROUNDS]``.  Cold starts, interleaved round-robin so that
drift hits every command alike; the verdict of each is the median of its paired ratios (its run over
the reference's run of the same round):

* a step on a GPU preset (``--gpu h100-sxm``, a 32-layer shape on dp 8 × tp 8 × pp 4, ``--json`` and
  the table), target ≤ 1.5× the reference;
* ``--layers 100000`` (past the 10000 layers a step prices one by one), refused, target < 1 s;
* the 1T-parameter step of Narayanan et al.'s Table 1 (dp 6 × tp 8 × pp 64, 512 micro-batches, full
  recomputation) on the A100 preset, target < 1 s beyond the reference's start.

Each command's ``-X importtime`` report is checked for numpy, sympy and matplotlib, which a step query
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

SHAPE = ["--layers", "32", "--hidden", "4096", "--heads", "32", "--seq", "2048", "--vocab", "51200"]
ONE_T = ["--dp", "6", "--tp", "8", "--pp", "64", "-m", "512", "--layers", "128", "--hidden", "25600",
         "--heads", "160", "--seq", "2048", "--vocab", "51200", "--recompute", "full", "--gpu", "a100-80gb",
         "--allow-oom"]


def _run(argv: list[str], *, rc: int = 0) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != rc:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def main(rounds: int = 9) -> bool:
    python = sys.executable
    step = [python, "-m", "costmodel", "step"]
    # name: (argv, exit code, target, whether the target is a ratio to the reference or seconds beyond it)
    query = [*step, "--dp", "8", "--tp", "8", "--pp", "4", "-m", "8", *SHAPE, "--gpu", "h100-sxm"]
    commands: dict[str, tuple[list[str], int, float, str]] = {
        "python -c 'import numpy' (reference)": ([python, "-c", "import numpy"], 0, 0.0, ""),
        "step --gpu h100-sxm --json": ([*query, "--json"], 0, 1.5, "ratio"),
        "step --gpu h100-sxm (table)": (query, 0, 1.5, "ratio"),
        "step --layers 100000 (refused)": ([*step, "--layers", "100000", "-F", "1ms", "-b", "2ms"], 2, 1.0,
                                           "seconds"),
        "step 1T, dp 6 × tp 8 × pp 64, M = 512": ([*step, *ONE_T], 0, 1.0, "beyond"),
    }
    for argv, rc, _, _ in commands.values():  # warm the file and bytecode caches
        _run(argv, rc=rc)
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(rounds):
        for name, (argv, rc, _, _) in commands.items():
            times[name].append(_run(argv, rc=rc))
    reference = next(iter(commands))
    ok = True
    print(f"{'command':40s} {'median':>9s} {'ratio':>7s} {'target':>12s}")
    for name, (_, _, target, kind) in commands.items():
        ratios = [t / r for t, r in zip(times[name], times[reference], strict=True)]
        ratio = statistics.median(ratios)
        median = statistics.median(times[name])
        beyond = statistics.median(t - r for t, r in zip(times[name], times[reference], strict=True))
        good = {"ratio": ratio <= target, "seconds": median < target,
                "beyond": beyond < target}.get(kind, True)
        ok &= good
        shown = {"ratio": f"≤ {target}×", "seconds": f"< {target} s",
                 "beyond": f"< {target} s more"}.get(kind, "")
        print(f"{name:40s} {median * 1000:7.1f}ms {ratio:6.2f}× {shown:>12s} "
              f"{'' if not kind else 'ok' if good else 'FAIL'}")
    for name, (argv, _, _, _) in list(commands.items())[1:]:
        done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], cwd=ROOT, capture_output=True,
                              check=False, env=ENV)
        heavy = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.decode().splitlines()
                 if "|" in line} & {"numpy", "sympy", "matplotlib"}
        ok &= not heavy
        print(f"{name}: imports {', '.join(sorted(heavy)) or 'none of numpy, sympy, matplotlib'}"
              f"{' FAIL' if heavy else ''}")
    print(f"targets: {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
