"""Queries on a calibrated profile, priced message by message, timed beside the same on one line.

Run as ``PYTHONPATH=. python benchmarks/bench_piecewise.py [ROUNDS]``.  The profile is
``docs/examples/a3mega.toml`` (three segments of a ring all-reduce fit at p = 16); each query runs
on its piecewise link (every message priced by the segment of its size, the tuned double binary
tree searched run by run) and on its one-line ``[link]`` summary, in the same round, with fresh link
objects each round.  The targets: each piecewise query's median below 1 s (an interactive answer),
and the median of its paired ratios ≤ 100× (a piecewise cost is a sum over message sizes, its
crossovers are solved between the sizes where a message reaches a segment, and a tuned cost, which
one line rules out of ``best`` by a bound, is scanned).

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costmodel.collectives.evaluate import compare  # noqa: E402 - after the path set-up above
from costmodel.crossovers import best, crossover  # noqa: E402
from costmodel.profiles import load_profile  # noqa: E402
from costmodel.sweeps import sweep  # noqa: E402

PROFILE = ROOT / "docs" / "examples" / "a3mega.toml"
RATIO = 100.0
SECONDS = 1.0
SIZES = [2 ** (k / 8) for k in range(240)]  # 1 B to about 1 GiB, 8 per octave: a plot's grid

QUERIES: dict[str, Callable[[Any], object]] = {
    "compare, every algorithm, 1 MiB": lambda link: compare("allreduce", None, p=16, n=2**20, link=link),
    "crossover rd × rab": lambda link: crossover("allreduce", "rd", "rab", p=16, link=link),
    "crossover ring × dbt (tuned)": lambda link: crossover("allreduce", "ring", "dbt", p=16, link=link),
    "best, 4 linear algorithms": lambda link: best("allreduce", ["ring", "rd", "rab", "tree"], p=16,
                                                   link=link, max_bytes=2**30),
    "best, every algorithm": lambda link: best("allreduce", None, p=16, link=link, max_bytes=2**30),
    "sweep, 240 sizes": lambda link: sweep("allreduce", None, p=[16], n=SIZES, link=link),
}


def _timed(query: Callable[[Any], object], link: Any) -> float:
    start = time.perf_counter()
    query(link)
    return time.perf_counter() - start


def main(rounds: int = 5) -> int:
    failed = False
    print(f"{'query':34} {'one line':>10} {'piecewise':>10} {'ratio':>7}")
    for name, query in QUERIES.items():
        ratios, piecewise = [], []
        for _ in range(rounds):
            profile = load_profile(PROFILE)
            one, pieces = profile.link, profile.link_for("allreduce")
            a, b = _timed(query, one), _timed(query, pieces)
            ratios.append(b / a)
            piecewise.append(b)
            last = a
        ratio, seconds = statistics.median(ratios), statistics.median(piecewise)
        verdict = "ok" if ratio <= RATIO and seconds < SECONDS else "FAIL"
        failed |= verdict == "FAIL"
        print(f"{name:34} {last * 1e3:8.1f} ms {seconds * 1e3:7.1f} ms {ratio:6.1f}× {verdict}")
    print(f"targets: median ratio ≤ {RATIO:g}×, piecewise median < {SECONDS:g} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
