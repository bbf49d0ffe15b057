"""Reading and fitting a calibration log, end to end, in CPU seconds: a 10⁵-row log and a 31-row one.

Run as ``python benchmarks/bench_fit.py [ROUNDS]``.  Two cases, each run ROUNDS times (default 3) in
a fresh Python process that imports costmodel, reads the log file with ``read_log`` and fits it with
``fit``, as ``costmodel calibrate fit LOG`` does; the process reports its own CPU time
(``time.process_time``) from before the import to the end of the fit, and the median of the rounds is
compared with the target:

- 10⁵ rows: a synthetic nccl-tests text log of 100,000 lines (the most a table may hold), all-reduce
  at p = 8 with out-of-place and in-place times, sizes spread evenly in log-size from 8 B to 8 GiB,
  two regimes (a slow small-message protocol up to 64 KiB, then α = 40 µs, β = 0.005 ns/B) and 2 %
  multiplicative noise (seed 0), printed as nccl-tests prints it.  Target < 10 s.
- 31 rows: ``tests/data/logs/nccl-tests/allreduce_a100x16_2node_rdma_oci.txt``, a real log.
  Target < 0.5 s.

Each line shows the CPU time, its ratio to the target (below 1 is met) and where the time went
(import, read, fit).  The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL_LOG = ROOT / "tests" / "data" / "logs" / "nccl-tests" / "allreduce_a100x16_2node_rdma_oci.txt"
P = 8
LONG_ROWS = 100_000

CHILD = """
import time
start = time.process_time()
import sys, json
from costmodel.calibration import fit, read_log
imported = time.process_time()
m = read_log(sys.argv[1])
read = time.process_time()
f = fit(m)
done = time.process_time()
print(json.dumps({"rows": len(m.select()), "segments": len(f.segments), "import_s": imported - start,
                  "read_s": read - imported, "fit_s": done - read, "total_s": done - start}))
"""


def nccl_tests_log(lines: int, *, p: int = P, seed: int = 0) -> str:
    """A synthetic all_reduce_perf text log of *lines* sizes (see the module docstring)."""
    rng = random.Random(seed)
    factor = 2 * (p - 1) / p
    out = [
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
        "agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
        *(f"#  Rank {r:2d} Group  0 Pid {100 + r:6d} on bench device {r:2d} [0x00] NVIDIA A100-SXM4-40GB"
          for r in range(p)),
        "#",
        "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
        "#       size         count      type   redop    root" + "     time   algbw   busbw #wrong" * 2,
        "#        (B)    (elements)" + " " * 31 + "(us)  (GB/s)  (GB/s)" + " " * 12 + "(us)  (GB/s)  (GB/s)",
    ]
    previous = 0
    for i in range(lines):
        n = max(previous + 4, round(8 * (2**30) ** (i / max(1, lines - 1))) // 4 * 4)
        previous = n
        alpha, beta = (5e-6, 5e-10) if n <= 1 << 16 else (40e-6, 5e-12)
        cells = []
        for _ in range(2):
            t_us = (2 * (p - 1) * alpha + factor * n * beta) * (1 + rng.gauss(0, 0.02)) * 1e6
            algbw = n / 1e3 / t_us
            cells.append(f"{t_us:8.2f}" if t_us < 1e4 else f"{t_us:8.0f}")
            cells[-1] += f" {algbw:7.2f} {algbw * factor:7.2f}      0"
        out.append(f"{n:12d}  {n // 4:12d}     float     sum      -1 " + " ".join(cells))
    out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.0", "#"]
    return "\n".join(out) + "\n"


def measure(path: Path, rounds: int) -> dict[str, float]:
    """The median over *rounds* fresh processes of each phase's CPU seconds."""
    runs = []
    for _ in range(rounds):
        done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True,
                              text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the fit of {path} failed: {done.stderr.strip()[-400:]}")
        runs.append(json.loads(done.stdout))
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main(rounds: int = 3) -> int:
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        long_log = Path(tmp) / "all_reduce_perf_100000.txt"
        long_log.write_text(nccl_tests_log(LONG_ROWS), encoding="utf-8")
        cases = ((f"{LONG_ROWS:,} rows (synthetic nccl-tests)", long_log, 10.0),
                 ("31 rows (allreduce_a100x16_2node_rdma_oci.txt)", REAL_LOG, 0.5))
        print(f"read_log + fit, CPU seconds (median of {rounds} fresh processes, imports included)")
        for label, path, target in cases:
            r = measure(path, rounds)
            met &= r["total_s"] < target
            ratio = r["total_s"] / target
            print(f"{label:<48} {r['total_s']:7.3f} s  target < {target:g} s  ratio {ratio:.2f}"
                  f"  (import {r['import_s']:.3f}, read {r['read_s']:.3f}, fit {r['fit_s']:.3f}; "
                  f"{int(r['rows'])} rows fitted, {int(r['segments'])} segments)")
    print("both targets met" if met else "FAIL: a target is missed")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main(*(int(a) for a in sys.argv[1:2])))
