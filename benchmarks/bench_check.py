"""``costmodel nccl check`` on a long log and a real one, timed against their targets.

Run as ``python benchmarks/bench_check.py [ROUNDS]``.  A synthetic all_reduce_perf log of 10⁵ sizes
(:func:`bench_fit.nccl_tests_log`, 8 ranks) and the 31-size OCI A100 log of the test data are each
checked against the ``dgx-a100`` preset in a fresh process, as a user runs it; the median wall time
of ROUNDS runs is printed with its ratio to the target (10⁵ sizes < 30 s, 31 sizes < 1 s).  Each
size is one exact NCCL choice and estimate, so the long log is the cost of the model, not of the
reading.

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fit import REAL_LOG, nccl_tests_log

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT)}


def _run(log: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "costmodel", "nccl", "check", str(log), "--preset", "dgx-a100",
                    "--json"], env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main(rounds: int = 3) -> bool:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        long_log = Path(tmp) / "all_reduce_perf_100000.txt"
        long_log.write_text(nccl_tests_log(100_000), encoding="utf-8")
        _run(REAL_LOG)  # writes the bytecode, as a user's second run finds it
        for label, log, target in (("10^5 sizes (synthetic all_reduce_perf)", long_log, 30.0),
                                   (f"31 sizes ({REAL_LOG.name})", REAL_LOG, 1.0)):
            seconds = statistics.median(_run(log) for _ in range(rounds))
            met = seconds < target
            ok &= met
            print(f"{label:58} {seconds:7.2f} s  target < {target:g} s  ratio {seconds / target:.2f}  "
                  f"{'ok' if met else 'FAIL'}")
    print("both targets met" if ok else "targets: FAIL")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
