"""The α–β fit of a long log, timed: 10³, 10⁴ and 10⁵ rows.

Run as ``python benchmarks/bench_fit.py``.  Each log is a ring all-reduce at p = 8 with two
regimes (a slow small-message protocol up to 64 KiB, then α = 40 µs, β = 0.005 ns/B), sizes spread
evenly in log-size from 8 B to 8 GiB, and 2 % multiplicative noise (seed 0).  The split search runs
over a grid of at most 24 breakpoints and 2,000 rows, so the time grows about linearly with the rows.
Target: a 10⁵-row log in under 10 s.
"""

from __future__ import annotations

import random
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costmodel.calibration import Measurements, Row, fit  # noqa: E402 - after the path set-up above

TARGET_S = 10.0


def measurements(rows: int) -> Measurements:
    rng = random.Random(0)
    out = []
    for i in range(rows):
        n = round(8 * (2**30) ** (i / max(1, rows - 1)))
        alpha, beta = (5e-6, 5e-10) if n <= 1 << 16 else (40e-6, 5e-12)
        t = (14 * alpha + 1.75 * n * beta) * (1 + rng.gauss(0, 0.02))
        out.append(Row(n_bytes=n, time_s=Fraction(t)))
    return Measurements(tool="costmodel-csv", collective="allreduce", p=8, rows=tuple(out))


def main() -> int:
    worst = 0.0
    for rows in (10**3, 10**4, 10**5):
        m = measurements(rows)
        start = time.perf_counter()
        f = fit(m)
        elapsed = time.perf_counter() - start
        worst = max(worst, elapsed) if rows == 10**5 else worst
        print(f"{rows:>7} rows: {elapsed:6.2f} s, {len(f.segments)} segments, "
              f"median |error| {f.median_rel_error:.2%}")
    print(f"10^5 rows: {worst:.2f} s (target < {TARGET_S:g} s)")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
