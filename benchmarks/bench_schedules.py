"""Schedules at scale: build, execute and verify a ring all-reduce at p = 1,024 with 1 MiB per
rank (target: under 5 s), and simulate ring and recursive doubling up to p = 65,536.

Run: python benchmarks/bench_schedules.py [--quick]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from costmodel import LinkParams, cost
from costmodel.schedules import build, execute, simulate

LINK = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11))
MIB = 2**20


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def ring_1024() -> bool:
    p = 1024
    # 1 MiB per rank in p chunks of 1 KiB: 256 int32 numbers per chunk
    schedule, t_build = timed(lambda: build("ring_allreduce", "allreduce", p=p))
    run, t_exec = timed(lambda: execute(schedule, width=MIB // p // 4))
    sim, t_sim = timed(lambda: simulate(schedule, n=MIB, link=LINK))
    formula = cost("allreduce", "ring", p=p, n=MIB, link=LINK)
    same = (sim.rounds, sim.bytes_sent_per_rank, sim.time_s) == (
        formula.rounds, formula.bytes_sent_per_rank, formula.time_s)
    total = t_build + t_exec + t_sim
    verdict = "PASS" if run.ok and same and total < 5 else "FAIL"
    print(f"ring all-reduce, p = {p}, 1 MiB per rank: build {t_build:.3f} s, execute+check {t_exec:.2f} s, "
          f"simulate {t_sim:.2f} s; total {total:.2f} s (target < 5 s) {verdict}")
    print(f"  executed ok: {run.ok}; simulator == formula: {same}")
    return verdict == "PASS"


def simulate_large(quick: bool) -> None:
    sizes = (1024, 4096) if quick else (1024, 4096, 16384, 65536)
    print("simulation alone (rounds, exact time):")
    pairs = (("recursive_doubling_allreduce", "recursive-doubling"), ("ring_allreduce", "ring"))
    for name, algorithm in pairs:
        for p in sizes:
            schedule = build(name, "allreduce", p=p)
            sim, seconds = timed(lambda schedule=schedule: simulate(schedule, n=MIB, link=LINK))
            formula = cost("allreduce", algorithm, p=p, n=MIB, link=LINK)
            same = (sim.rounds, sim.time_s) == (formula.rounds, formula.time_s)
            print(f"  {algorithm:<20} p = {p:>6}: {sim.rounds:>7} rounds in {seconds:7.2f} s; "
                  f"matches formula: {same}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="stop at p = 4096")
    args = parser.parse_args()
    ok = ring_1024()
    simulate_large(args.quick)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
