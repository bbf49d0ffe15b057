"""A training step of a GPT-3-like model and a 100-point sweep of it, timed against their targets.

Run as ``PYTHONPATH=. python benchmarks/bench_step.py [ROUNDS]``.  (a) One step of the 96-layer shape
(``--layers 96 --hidden 12288 --heads 96 --seq 2048 --vocab 51200 --peak 312T --efficiency 0.5``)
with 8 micro-batches per replica on dp × tp × pp = 64 × 8 × 8, target < 1 s; (b) a 100-point sweep
of it (the bucket size, 1 MiB to 100 MiB by 1 MiB), target < 10 s; (c) a 100-point sweep of the
efficiency (0.01 to 1 by 0.01), whose dp = 1 step changes with each point, target < 10 s, and of
the micro-batches per replica (8 to 800 by 8: up to 153,600 layer operations a step), target
< 10 s.  Each is the median of ROUNDS runs in this process (the library, no command line),
printed with its ratio to the target.  Then the same model without pipeline stages under FSDP
(ZeRO 3, a layer all-gathered one ahead of its compute) with compute slowed by 15 % while
collectives run, one step and a sweep of the ZeRO stage, each device simulated event by event.  And
Narayanan et al.'s 1T-parameter model priced per operation on the A100 preset (dp 6 × tp 8 × pp 64,
512 micro-batches), target < 1 s: with the generic schedule, with Megatron-LM's (its reduction after
the backward), and with every Megatron-LM gather and reduce overlapped (each device then simulated
event by event from its first forward, once with the compute slowdown and once without it, in integer
ticks).

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import statistics
import sys
import time

from costmodel.links import resolve_link
from costmodel.step import TransformerShape, step, sweep_step

GPT3 = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)


def _fixed() -> dict:
    return {"shape": GPT3, "peak_flops": 312 * 10**12, "tp": 8, "pp": 8, "microbatches": 8,
            "link": resolve_link("allreduce", profile="nvlink4"),
            "dp_link": resolve_link("allreduce", profile="ib-hdr")}


def _one_t() -> dict:
    """Narayanan et al.'s 1T model as Table 1 runs it, priced per operation on the A100 preset."""
    shape = TransformerShape(layers=128, hidden=25600, heads=160, sequence=2048, vocabulary=51200)
    return {"shape": shape, "dp": 6, "tp": 8, "pp": 64, "microbatches": 512, "recompute": "full",
            "gpu": "a100-80gb", "allow_oom": True}


def _timed(run, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(rounds: int = 3) -> bool:
    cases = {
        "one step, dp 64 × tp 8 × pp 8, M = 8": (
            lambda: step(dp=64, efficiency="0.5", **_fixed()), 1.0),
        "sweep bucket-size=1MiB..100MiB+1MiB (100)": (
            lambda: sweep_step("bucket-size", "1MiB..100MiB+1MiB", dp=64, efficiency="0.5", **_fixed()),
            10.0),
        "sweep efficiency=0.01..1+0.01 (100)": (
            lambda: sweep_step("efficiency", "0.01..1+0.01", dp=64, **_fixed()), 10.0),
        "sweep microbatches=8..400+8 (50)": (  # 8..800 is past the sweep's work limit, refused
            lambda: sweep_step("microbatches", "8..400+8", dp=64, efficiency="0.5",
                               **{k: v for k, v in _fixed().items() if k != "microbatches"}), 10.0),
        "one FSDP step, dp 64 × tp 8, M = 8, slowdown 0.15": (
            lambda: step(dp=64, efficiency="0.5", zero=3, slowdown="0.15", **{**_fixed(), "pp": 1}), 1.0),
        "1T on a100-80gb, dp 6 × tp 8 × pp 64, M = 512": (
            lambda: step(**_one_t()), 1.0),
        "the same, Megatron-LM (Table 1's schedule)": (
            lambda: step(**_one_t(), framework="megatron"), 1.0),
        "the same, Megatron-LM, all overlapped": (
            lambda: step(**_one_t(), framework="megatron", zero=1, overlap_grad_reduce=True,
                         param_gather="overlap"), 1.0),
        "sweep zero=0,1,2,3 with slowdown 0.15 (4)": (
            lambda: sweep_step("zero", "0,1,2,3", dp=64, efficiency="0.5", slowdown="0.15",
                               **{**_fixed(), "pp": 1}), 10.0),
    }
    ok = True
    print(f"{'case':52s} {'median':>9s} {'target':>8s} {'ratio':>7s}")
    for name, (run, target) in cases.items():
        seconds = _timed(run, rounds)
        good = seconds < target
        ok &= good
        verdict = "ok" if good else "FAIL"
        print(f"{name:52s} {seconds:8.3f}s {target:7.1f}s {seconds / target:6.2f}× {verdict}")
    print(f"targets: {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
