"""The planner on GPT-3 175B on 64 nodes of 8 A100-80GB at a global batch of 1536, timed against its target.

Run as ``PYTHONPATH=. python benchmarks/bench_plan.py [ROUNDS]``.  Every parallel configuration of the
96-layer shape (``--layers 96 --hidden 12288 --heads 96 --seq 2048 --vocab 51200``) on the A100-80GB
preset's nodes, the ten fastest ranked (``costmodel plan ... --gpu a100-80gb --nodes 64 --global-batch
1536``), target < 10 s.  The median of ROUNDS runs in this process (the library, no command line) is
printed with its ratio to the target, then the counts of the search and the best configuration.  Then the
same with the settings of Narayanan et al. 2021 (no sequence parallelism, no distributed optimizer,
attention through memory with its selective recomputation allowed, causal, no context parallelism),
whose best they report as tensor parallelism in a node and pipeline parallelism across nodes.

Then the two largest searches of the presets, each with its own target: DeepSeek-V3 (61 layers of latent
attention, 256 routed experts a layer after 3 dense ones; ``--model deepseek-v3``) on 2048 H100s at a
global batch of 15360, its three best (``--gpu h100-sxm --gpus 2048 --global-batch 15360 --top 3``),
target < 15 s; and Llama 3 405B on 16384 H100s, sequence 8192, global batch 2048, its five best
(``--model llama-3-405b --gpu h100-sxm --gpus 16384 --global-batch 2048 --seq 8192 --top 5``; pipelines
up to 64 stages of uneven layers), target < 6 s.

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections.abc import Callable

from costmodel.describe.models import load_model
from costmodel.step import TransformerShape, plan

GPT3 = TransformerShape(layers=96, hidden=12288, heads=96, sequence=2048, vocabulary=51200)
TARGET_S = 10.0
DEEPSEEK_TARGET_S = 15.0
LLAMA_TARGET_S = 6.0


def _gpt3(**fixed: object) -> object:
    return plan(GPT3, gpu="a100-80gb", nodes=64, global_batch=1536, top=10, **fixed)


def _deepseek() -> object:
    return plan(load_model("deepseek-v3"), gpu="h100-sxm", gpus=2048, global_batch=15360, top=3)


def _llama() -> object:
    model = load_model("llama-3-405b")  # its shape at a sequence of 8192, as --seq 8192 gives it
    return plan(dataclasses.replace(model.transformer(), sequence=8192), gpu="h100-sxm", gpus=16384,
                global_batch=2048, top=5, **model.settings)


def _timed(rounds: int, planned: Callable[[], object]) -> tuple[float, float, object]:
    """The median wall-clock and CPU seconds of ROUNDS plans (the first from a cold start: later rounds
    reuse what the model remembers), and the last plan."""
    walls, cpus, result = [], [], None
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        result = planned()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def _report(name: str, seconds: float, cpu: float, p: object, target: float = TARGET_S) -> bool:
    ok = seconds < target
    print(f"{name}: {seconds:.2f} s (CPU {cpu:.2f} s; target < {target:.0f} s, {seconds / target:.2f} of "
          f"it) {'ok' if ok else 'FAIL'}")
    print(f"  {p.considered} considered, {p.refused_count('invalid')} invalid, "  # type: ignore[attr-defined]
          f"{p.refused_count('memory')} do not fit, {p.refused_count('pruned')} pruned, "  # type: ignore[attr-defined]
          f"{p.bounded} pipeline bounds, {p.priced} priced")  # type: ignore[attr-defined]
    for row in p.rows[:3]:  # type: ignore[attr-defined]
        c = row.config
        schedule = f"interleaved ×{c.chunks}" if c.schedule == "interleaved" else c.schedule
        ranks = "".join(f" × {k} {getattr(c, k)}" for k in ("cp", "ep") if getattr(c, k) > 1)
        print(f"  #{row.rank}: tp {c.tp} × pp {c.pp} × dp {c.dp}{ranks}, "
              f"micro-batch {c.micro_batch} × "
              f"{c.microbatches}, {schedule}, recompute {c.recompute}, sp {c.sequence_parallel}, "
              f"ZeRO {c.zero}: "
              f"{float(row.step_s):.3f} s, {float(row.memory_bytes) / 2**30:.1f} GiB, "
              f"MFU {float(row.mfu):.1%}")
    return ok


def main(rounds: int = 1) -> bool:
    ok = True
    try:
        seconds, cpu, p = _timed(rounds, _gpt3)
        ok &= _report("GPT-3 175B, 64 × 8 A100-80GB, batch 1536", seconds, cpu, p)
        seconds, cpu, p = _timed(rounds, lambda: _gpt3(sequence_parallel=False, zero=0, attention="unfused",
                                                       causal=True, cp=1))
        ok &= _report("the same, as in 2021 (no sp, no distributed optimizer, unfused causal attention, no "
                      "context parallelism)",
                      seconds, cpu, p)
        seconds, cpu, p = _timed(rounds, _deepseek)
        ok &= _report("DeepSeek-V3, 2048 H100-SXM, batch 15360, top 3", seconds, cpu, p, DEEPSEEK_TARGET_S)
        seconds, cpu, p = _timed(rounds, _llama)
        ok &= _report("Llama 3 405B, 16384 H100-SXM, sequence 8192, batch 2048, top 5", seconds, cpu, p,
                      LLAMA_TARGET_S)
    except Exception as exc:  # a benchmark reports, it never raises
        print(f"FAIL: {type(exc).__name__}: {exc}")
        return False
    return ok


if __name__ == "__main__":
    sys.exit(0 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 1) else 1)
