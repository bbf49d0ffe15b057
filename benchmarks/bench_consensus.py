"""ρ of gossip graphs, timed: closed forms, sparse Lanczos and shift-invert, against dense eigvalsh.

Run as ``python benchmarks/bench_consensus.py`` (``--threads-only`` for (e) alone).  Every
figure is measured in this run, after numpy and scipy are imported (their import is reported
apart); each time covers building the graph, its mixing matrix and its spectrum, i.e. what
``costmodel consensus`` pays, unless the row says otherwise.  Targets:

(a) ρ of a ring, a 2-D torus, a hypercube and the exponential graph of about a million
    workers (p = 1,000,000; the hypercube 2^20 = 1,048,576): < 0.2 s each, by closed
    forms (circulant Laplacian eigenvalues, one FFT for the directed exponential graph);
    and what ``costmodel consensus ring -p 1000000`` computes (no trajectory unless asked).
(b) ρ of a random 4-regular graph of p = 100,000: < 15 s (plain Lanczos on I − W with
    the consensus eigenvector deflated).
(c) ρ of a user edge-list file that happens to be a 100,000-node ring (gap ~ 1e-9, where
    plain Lanczos does not converge): < 5 s, file reading included.  Shown too: the same
    file with structure recognition switched off (shift-invert Lanczos), and a ring with
    one chord, which no closed form covers.
(d) the speed-up over dense ``numpy.linalg.eigvalsh`` of W at p = 2,000, ring and random
    4-regular, with the two answers compared.
(e) one BLAS thread against the default (one per core), on a quiet machine and on one kept
    busy by a spinning process per core: ρ of a random 3-regular graph of p = 30,000 and the
    dense eigenvalues of a non-symmetric W of 1,000 rows.  Ratios only, no target: the
    solvers' small BLAS calls gain nothing from threads, and lose much when the threads
    wait for busy cores (2.8 s against 84 s for the 3-regular graph of 10⁵ on a busy machine).

Timing problems print FAIL and never raise; a disagreement between methods raises.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

_t0 = time.perf_counter()
import numpy as np  # noqa: E402 - after the path set-up above
import scipy.sparse.linalg  # noqa: E402, F401 - imported here so that no row pays for it

IMPORT_S = time.perf_counter() - _t0

import costmodel.consensus.spectral as spectral_module  # noqa: E402
from costmodel.consensus.gossip import consensus  # noqa: E402
from costmodel.consensus.graphs import (  # noqa: E402
    exponential,
    from_edges,
    hypercube,
    load_edge_list,
    random_regular,
    ring,
    torus,
)
from costmodel.consensus.mixing import mixing_matrix, sparse_matrix  # noqa: E402
from costmodel.consensus.spectral import Spectrum, spectrum  # noqa: E402

BIG = 1_000_000
LARGE = 100_000
DENSE_P = 2_000
RUNS = 5


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def timed(fn: Callable[[], Any], runs: int = 1) -> tuple[Any, float]:
    """The result of *fn* and the fastest of *runs* wall-clock times."""
    best, result = math.inf, None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return result, best


def row(label: str, seconds: float, limit: float | None, spec: Spectrum | None = None) -> bool:
    ok = limit is None or seconds < limit
    what = "" if spec is None else f"  rho = {spec.rho:.15g}, gap = {spec.spectral_gap:.6g}  [{spec.method}]"
    target = "" if limit is None else f"< {limit:g} s  {verdict(ok)}"
    print(f"    {label:<46} {seconds * 1e3:>10.1f} ms  {target:<14}{what}")
    return ok


def closed_forms() -> bool:
    print(f"(a) about a million workers, closed forms (fastest of {RUNS}; target < 0.2 s each)")
    ok = True
    cases = {
        f"ring, p = {BIG:,}": lambda: ring(BIG),
        "2-D torus 1000 × 1000": lambda: torus(BIG),
        "hypercube, p = 2^20": lambda: hypercube(2**20),
        f"exponential graph, p = {BIG:,}": lambda: exponential(BIG),
    }
    for label, build in cases.items():
        spec, seconds = timed(lambda build=build: spectrum(mixing_matrix(build())), RUNS)
        ok &= row(label, seconds, 0.2, spec)
    run, seconds = timed(lambda: consensus("ring", BIG, target="0.001"), RUNS)
    ok &= row(f"consensus ring, p = {BIG:,} (the command)", seconds, 0.2, run.spectrum)
    spec = spectrum(mixing_matrix(ring(BIG)))
    exact = 4 / 3 * math.sin(math.pi / BIG) ** 2
    if abs(spec.spectral_gap - exact) > 1e-15 * exact:
        raise AssertionError(f"ring gap {spec.spectral_gap!r} is not (4/3)sin²(π/p) = {exact!r}")
    naive = 1 - (1 + 2 * math.cos(2 * math.pi / BIG)) / 3
    print(f"    ring gap (4/3)sin²(π/p) = {exact:.15g}; 1 − ρ through ρ = (1 + 2cos(2π/p))/3 gives "
          f"{naive:.15g} (relative error {abs(naive - exact) / exact:.1e})")
    return ok


def random_regular_graph() -> bool:
    print(f"\n(b) random 4-regular graph, p = {LARGE:,} (target < 15 s for rho)")
    graph, build_s = timed(lambda: random_regular(LARGE, degree=4, seed=0))
    row("drawing the graph (Steger–Wormald, info)", build_s, None)
    spec, seconds = timed(lambda: spectrum(mixing_matrix(graph)))
    return row("rho (uniform weights)", seconds, 15, spec)


def ring_edge_list() -> bool:
    print(f"\n(c) an edge-list file that is a {LARGE:,}-node ring, labels shuffled (target < 5 s)")
    labels = np.random.default_rng(1).permutation(LARGE).tolist()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ring.txt"
        path.write_text("".join(f"{labels[i]} {labels[(i + 1) % LARGE]}\n" for i in range(LARGE)),
                        encoding="utf-8")
        spec, seconds = timed(lambda: spectrum(mixing_matrix(load_edge_list(path))))
        ok = row("read + rho (recognised as a cycle)", seconds, 5, spec)
        graph = load_edge_list(path)
    exact = 4 / 3 * math.sin(math.pi / LARGE) ** 2
    if abs(spec.spectral_gap - exact) > 1e-14 * exact:
        raise AssertionError(f"edge-list ring gap {spec.spectral_gap!r} is not {exact!r}")
    original = spectral_module.recognise
    spectral_module.recognise = lambda _graph: None
    try:
        forced, seconds = timed(lambda: spectrum(mixing_matrix(graph)))
        ok &= row("rho, recognition off (shift-invert)", seconds, 5, forced)
    finally:
        spectral_module.recognise = original
    relative = abs(forced.spectral_gap - exact) / exact
    print(f"    shift-invert gap vs closed form: relative difference {relative:.1e} "
          f"(its error estimate: {forced.error / exact:.1e} relative)")
    if relative > 1e-4 or abs(forced.spectral_gap - exact) > 2 * forced.error:
        raise AssertionError(f"shift-invert gap {forced.spectral_gap!r} is off the closed form {exact!r}")
    chord = from_edges([(i, (i + 1) % LARGE) for i in range(LARGE)] + [(0, LARGE // 2)])
    spec, seconds = timed(lambda: spectrum(mixing_matrix(chord)))
    ok &= row("ring + one chord (no closed form)", seconds, 5, spec)
    return ok


def dense_reference(mixing: Any) -> tuple[float, float]:
    """ρ by dense eigvalsh of the symmetric W, and the time it takes (matrix building excluded)."""
    w = sparse_matrix(mixing).toarray()
    values, seconds = timed(lambda: np.linalg.eigvalsh(w))
    rest = np.delete(values, np.argmin(np.abs(values - 1)))
    return float(np.abs(rest).max()), seconds


def against_dense() -> bool:
    print(f"\n(d) speed-up over dense numpy.linalg.eigvalsh of W at p = {DENSE_P:,}")
    for label, graph in ((f"ring, p = {DENSE_P:,}", ring(DENSE_P)),
                         (f"random 4-regular, p = {DENSE_P:,}", random_regular(DENSE_P, degree=4, seed=0))):
        mixing = mixing_matrix(graph)
        rho, dense_s = dense_reference(mixing)
        spec, ours_s = timed(lambda mixing=mixing: spectrum(mixing), RUNS)
        if abs(spec.rho - rho) > 1e-10:
            raise AssertionError(f"{label}: rho {spec.rho!r} differs from dense eigvalsh {rho!r}")
        print(f"    {label:<30} dense {dense_s * 1e3:>9.1f} ms   costmodel {ours_s * 1e3:>8.2f} ms   "
              f"speed-up {dense_s / ours_s:>8.1f}x   |Δrho| = {abs(spec.rho - rho):.1e}  [{spec.method}]")
    return True


BUSY_P = 30_000
BUSY_DENSE_P = 1_000


@contextlib.contextmanager
def busy_cores() -> Any:
    """A spinning Python process per core for the duration, ended (by its id) afterwards."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 1)]
    try:
        time.sleep(0.5)
        yield len(spinners)
    finally:
        for process in spinners:
            process.kill()
            process.wait()


@contextlib.contextmanager
def default_threads() -> Any:
    """The solvers without their one-thread limit: BLAS picks its own thread count."""
    original = spectral_module.one_blas_thread
    spectral_module.one_blas_thread = contextlib.nullcontext
    try:
        yield
    finally:
        spectral_module.one_blas_thread = original


def one_thread_against_default() -> bool:
    print(f"\n(e) one BLAS thread against the default, quiet and busy ({os.cpu_count()} cores; ratios only)")
    from costmodel.consensus.mixing import from_matrix

    graph = random_regular(BUSY_P, degree=3, seed=0)
    half = 0.5
    rotation = from_matrix([[half if j in (i, (i + 1) % BUSY_DENSE_P) else 0.0 for j in range(BUSY_DENSE_P)]
                            for i in range(BUSY_DENSE_P)])
    original_dense = spectral_module.DENSE_MAX
    cases = {
        f"random 3-regular, p = {BUSY_P:,} (Lanczos)": lambda: spectrum(mixing_matrix(graph)),
        f"non-symmetric W, {BUSY_DENSE_P:,} rows (dense eigvals)": lambda: spectrum(rotation),
    }
    times: dict[tuple[str, str, str], float] = {}
    try:
        spectral_module.DENSE_MAX = max(original_dense, BUSY_DENSE_P)
        for load in ("quiet", "busy"):
            with busy_cores() if load == "busy" else contextlib.nullcontext():
                for label, fn in cases.items():
                    _, times[label, load, "one"] = timed(fn)
                    with default_threads():
                        _, times[label, load, "default"] = timed(fn)
    finally:
        spectral_module.DENSE_MAX = original_dense
    for label in cases:
        q1, qd = times[label, "quiet", "one"], times[label, "quiet", "default"]
        b1, bd = times[label, "busy", "one"], times[label, "busy", "default"]
        print(f"    {label:<46} quiet: one {q1:7.2f} s, default {qd:7.2f} s ({qd / q1:5.1f}x);  "
              f"busy: one {b1:7.2f} s, default {bd:7.2f} s ({bd / b1:5.1f}x)")
    return True


def main() -> int:
    print(f"numpy + scipy imported in {IMPORT_S * 1e3:.0f} ms (not counted below)\n")
    if "--threads-only" in sys.argv[1:]:
        one_thread_against_default()
        return 0
    results = [closed_forms(), random_regular_graph(), ring_edge_list(), against_dense(),
               one_thread_against_default()]
    print("\nall targets met" if all(results) else "\nsome targets missed (FAIL above)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
