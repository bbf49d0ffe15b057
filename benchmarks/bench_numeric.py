"""Numeric paths, timed side by side: CLI cold start and the vectorised sweep.

Run as ``python benchmarks/bench_numeric.py``.  Every figure is measured in the
same run as its reference, and the verdicts are ratios, so the targets do not
depend on the machine:

(a) cold start of ``python -m costmodel cost|crossover|best ... --json``, and of the
    human ``cost`` query (its table, no ``--json``), (and of
    the ``costmodel`` console script, when installed next to the interpreter)
    against ``python -c "import numpy"``; target ≤ 1.5× on the median of paired
    ratios, the ratio of the fastest runs beside it, by the shared machinery of
    benchmarks/coldstart.py (interleaved runs, each command's imports checked for
    sympy, numpy and pandas, none of which a numeric command may import); then
    where each command's imports spend their time (``python -X importtime``).
(b) ``costmodel.sweep`` of every all-reduce algorithm over 1000 values of p ×
    1000 sizes against the same six formulas written out by hand in numpy;
    targets < 1 s and ≤ 3×.

Timing problems print FAIL; they never raise.  Only a disagreement between
the sweep and the hand-written formulas does.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "benchmarks"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import numpy as np  # noqa: E402 - after the path set-up above
from coldstart import COSTMODEL, ENV, Command, compare  # noqa: E402

from costmodel.links import link_from_options  # noqa: E402
from costmodel.sweeps import sweep  # noqa: E402

COLD_RUNS = 15
SWEEP_RUNS = 5
SWEEP_LIMIT_S = 1.0
SWEEP_TARGET = 3.0
HEAVY = ("sympy", "numpy", "pandas")
WATCH = ("typer", "click", "rich", "costmodel.collectives._registry", "costmodel.collectives.evaluate",
         "costmodel.crossover", "costmodel.units", "fractions", "decimal")

LINK_OPTIONS = ["--alpha", "5us", "--beta", "0.08ns/B", "--json"]
COMMANDS = {
    "cost": ["cost", "allreduce", "-p", "16", "-n", "1MiB", *LINK_OPTIONS],
    "cost (text)": ["cost", "allreduce", "-p", "16", "-n", "1MiB", *LINK_OPTIONS[:-1]],
    "crossover": ["crossover", "allreduce", "rd", "rab", "-p", "16", *LINK_OPTIONS],
    "best": ["best", "allreduce", "-p", "16", *LINK_OPTIONS],
}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# -- (a) cold start ------------------------------------------------------------------------


def cold_commands() -> list[Command]:
    """The commands timed for cold start against the numpy import (benchmarks/coldstart.py's reference)."""
    commands = []
    env = shutil.which("env")
    if env:  # how much of the reference is OpenBLAS starting its threads (reported, no target)
        numpy = [env, "OPENBLAS_NUM_THREADS=1", sys.executable, "-c", "import numpy"]
        commands.append(Command("  numpy, OPENBLAS_NUM_THREADS=1 (info)", numpy, target=0))
    commands += [Command(f"python -m costmodel {name}", [*COSTMODEL, *args])
                 for name, args in COMMANDS.items()]
    script = Path(sys.executable).parent / "costmodel"
    script_path = str(script) if script.exists() else shutil.which("costmodel")
    if script_path and Path(script_path).parent == Path(sys.executable).parent:
        commands += [Command(f"costmodel {name} (console script)", [script_path, *args])
                     for name, args in COMMANDS.items()]
    else:
        print("no costmodel console script next to the interpreter; skipping those rows")
    return commands


def cold_start() -> bool:
    print(f"(a) cold start: {COLD_RUNS} interleaved runs; ratio = median over the runs of the command's time "
          "over the numpy import's in the same round; target <= 1.5x")
    return compare(cold_commands(), rounds=COLD_RUNS, heavy=HEAVY)


def import_report() -> None:
    """Where each command's imports spend their time (python -X importtime): the slowest top-level
    modules and those watched.  No verdict: the cold start checks the heavy modules."""
    print("\n    imports (python -X importtime)")
    for name, args in COMMANDS.items():
        done = subprocess.run([*COSTMODEL[:1], "-X", "importtime", *COSTMODEL[1:], *args], cwd=ROOT,
                              capture_output=True, text=True, check=False, env=ENV)
        rows = []
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or "cumulative" in line:
                continue
            self_us, cumulative_us, module = line.split(":", 1)[1].split("|")
            rows.append((int(cumulative_us), int(self_us), module.rstrip()[1:]))  # keep the nesting indent
        top_level = sorted((r for r in rows if not r[2].startswith(" ")), reverse=True)
        total_ms = sum(r[0] for r in top_level) / 1e3
        cumulative = {m.strip(): c for c, _, m in rows}
        print(f"    {name:<12} exit {done.returncode}; all imports {total_ms:.1f} ms")
        print("      slowest top-level: " + ", ".join(f"{m} {c / 1e3:.1f} ms" for c, _, m in top_level[:5]))
        watched = [f"{m} {cumulative[m] / 1e3:.1f} ms" for m in WATCH if m in cumulative]
        print("      of which: " + ", ".join(watched))


# -- (b) sweep against hand-written numpy --------------------------------------------------


def first_stop(time_of: Callable[[np.ndarray, np.ndarray], np.ndarray], upper: np.ndarray) -> np.ndarray:
    """First integer k in [1, upper) with T(k+1) >= T(k), else upper: doubling, then bisection."""
    best = np.ones(upper.size)
    idx = np.flatnonzero(upper > 1)
    lo, k, top = np.ones(idx.size), np.ones(idx.size), upper[idx]
    found_idx, found_lo, found_hi = [], [], []
    while idx.size:
        cap = k >= top
        found_idx.append(idx[cap])
        found_lo.append(lo[cap])
        found_hi.append(top[cap])
        idx, lo, k, top = idx[~cap], lo[~cap], k[~cap], top[~cap]
        stop = time_of(k + 1, idx) >= time_of(k, idx)
        found_idx.append(idx[stop])
        found_lo.append(lo[stop])
        found_hi.append(k[stop])
        go = ~stop
        idx, lo, k, top = idx[go], k[go] + 1, np.minimum(2 * k[go], top[go]), top[go]
    idx, lo, hi = np.concatenate(found_idx), np.concatenate(found_lo), np.concatenate(found_hi)
    while idx.size:
        done = lo >= hi
        best[idx[done]] = lo[done]
        idx, lo, hi = idx[~done], lo[~done], hi[~done]
        mid = np.floor((lo + hi) / 2)
        stop = time_of(mid + 1, idx) >= time_of(mid, idx)
        hi = np.where(stop, mid, hi)
        lo = np.where(stop, lo, mid + 1)
    return best


def by_hand(ranks: np.ndarray, sizes: np.ndarray, a: float, b: float, g: float) -> dict[str, np.ndarray]:
    """The six all-reduce formulas of costmodel/collectives/allreduce.py, written out in numpy."""
    p = ranks.astype(np.float64)[:, None]
    n = sizes[None, :]
    h = np.floor(np.log2(p))  # ⌊log2 p⌋
    c = np.ceil(np.log2(p))  # ⌈log2 p⌉
    pow2 = ((ranks & (ranks - 1)) == 0)[:, None]
    part = (p - 1) / p
    q = np.exp2(h)  # p' = 2^⌊log2 p⌋, the group the folded forms run on
    part_q = (q - 1) / q
    out = {
        "ring": 2 * (p - 1) * a + part * n * (2 * b + g),
        "tree": 2 * c * a + c * n * (2 * b + g),
        "recursive-doubling": np.where(pow2, h * (a + n * (b + g)), (h + 2) * (a + n * b) + (h + 1) * n * g),
        "rabenseifner": np.where(pow2, 2 * h * a + part * n * (2 * b + g),
                                 (2 * h + 2) * a + (2 + 2 * part_q) * n * b + (1 + part_q) * n * g),
        "naive": 2 * (p - 1) * a + (p - 1) * n * (2 * b + g),
    }
    # double binary tree: T(k) = (h + k - 1)(4α + n(2β + γ)/k), k in [1, max(1, ⌊n/2⌋)]
    shape = (ranks.size, sizes.size)
    flat_h = np.broadcast_to(h, shape).ravel()
    flat_n = np.broadcast_to(n, shape).ravel()
    w = 2 * b + g

    def time_of(k: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return (flat_h[idx] + k - 1) * (4 * a + flat_n[idx] * w / k)

    upper = np.broadcast_to(np.maximum(1, np.floor(n / 2)), shape).ravel()
    k = first_stop(time_of, upper).reshape(shape)
    # the two-tree formula needs p >= 4; below, the library reports NaN
    out["double-binary-tree"] = np.where(ranks[:, None] >= 4, (h + k - 1) * (4 * a + n * w / k), np.nan)
    return out


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def sweep_benchmark() -> bool:
    link = link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.01ns/B")
    a, b, g = float(link.alpha_s), float(link.beta_s_per_byte), float(link.gamma_s_per_byte)
    ranks = np.arange(2, 1002)
    sizes = np.logspace(0, 30, 1000, base=2)

    def library() -> Any:
        return sweep("allreduce", p=range(2, 1002), n=sizes, link=link)

    def hand() -> Any:
        return by_hand(ranks, sizes, a, b, g)

    frame, reference = library(), hand()  # also the warm-up
    for name, values in reference.items():
        got = frame[name].to_numpy().reshape(values.shape)
        if not np.allclose(got, values, rtol=1e-9, atol=0, equal_nan=True):
            worst = np.nanmax(np.abs(got - values) / values)
            raise AssertionError(f"sweep and the hand-written {name} disagree "
                                 f"(worst relative error {worst:.3g})")
    lib_s, hand_s = [], []
    for _ in range(SWEEP_RUNS):  # interleaved
        lib_s.append(timed(library))
        hand_s.append(timed(hand))
    lib, ref = statistics.median(lib_s), statistics.median(hand_s)
    ratio = lib / ref
    print(f"\n(b) sweep, allreduce, {len(reference)} algorithms, {ranks.size} p x {sizes.size} sizes "
          f"({frame.size:,} values); median of {SWEEP_RUNS} interleaved runs")
    print("    the six formulas agree with the hand-written numpy (rtol 1e-9)")
    print(f"    {'':<44} {'median ms':>10} {'min ms':>8} {'ratio':>6}")
    label = "hand-written numpy (reference)"
    print(f"    {label:<44} {ref * 1e3:>10.1f} {min(hand_s) * 1e3:>8.1f} {1:>5.2f}x")
    print(f"    {'costmodel.sweep':<44} {lib * 1e3:>10.1f} {min(lib_s) * 1e3:>8.1f} {ratio:>5.2f}x  "
          f"{verdict(ratio <= SWEEP_TARGET)} (<= {SWEEP_TARGET}x)")
    print(f"    sweep under {SWEEP_LIMIT_S:.0f} s: {lib:.3f} s  {verdict(lib < SWEEP_LIMIT_S)}")
    return ratio <= SWEEP_TARGET and lib < SWEEP_LIMIT_S


def main() -> int:
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs\n")
    cold = cold_start()
    import_report()
    results = [cold, sweep_benchmark()]
    print(f"\noverall: {verdict(all(results))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
