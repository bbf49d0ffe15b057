"""``costmodel nccl compare`` of a long log: its table against its JSON, timed.

Run as ``python benchmarks/bench_compare.py [ROUNDS]``.  A synthetic all_reduce_perf log of 10⁵ sizes
(:func:`bench_fit.nccl_tests_log`, 8 ranks) is compared with the ``dgx-a100`` preset in a fresh process,
as a user runs it, once with ``--json`` and once as the table (80 columns); the median wall times of
ROUNDS runs are printed with their ratio, whose target is at most 1.5: the table of 10⁵ rows, each cell
a size, a time or a rate written exactly, costs less than half the model's work again.

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
from bench_fit import nccl_tests_log

ROOT = Path(__file__).resolve().parent.parent
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(ROOT),
       "COLUMNS": "80"}
TARGET = 1.5


def _run(log: Path, *extra: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "costmodel", "nccl", "compare", str(log), "--preset", "dgx-a100",
                    *extra], env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main(rounds: int = 3) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "all_reduce_perf_100000.txt"
        log.write_text(nccl_tests_log(100_000), encoding="utf-8")
        json_s = statistics.median(_run(log, "--json") for _ in range(rounds))
        text_s = statistics.median(_run(log) for _ in range(rounds))
    ratio = text_s / json_s
    ok = ratio <= TARGET
    print(f"10^5 sizes: --json {json_s:.2f} s, the table {text_s:.2f} s, ratio {ratio:.2f}  "
          f"target <= {TARGET:g}  {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
