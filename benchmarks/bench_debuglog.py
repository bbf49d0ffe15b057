"""Reading a 10⁵-line NCCL_DEBUG=INFO log, timed beside reading the same text line by line.

Run as ``python benchmarks/bench_debuglog.py [ROUNDS]``.  ``parse_debug_log`` on 50,000 channel lines
and 50,000 lines of other text (a large ``NCCL_DEBUG=INFO`` dump, most of it not the graphs) against
``str.splitlines`` plus one regular-expression search per line over the same text, the least any
line-oriented reader does; rounds interleaved, the verdict the median of the paired ratios.  Target:
the parse under 3 s of CPU and within 30× the reference.

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import re
import statistics
import sys
import time

RING = ("h:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 20.000000/20.000000, "
        "type NVL/PIX, sameChannels 1")


def _text() -> str:
    other = "h:1:2 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/IPC"
    return "\n".join([RING] + [other] * 50_000 + ["garbage " * 5] * 50_000)


def main(rounds: int = 5) -> bool:
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from costmodel.nccl.debuglog import parse_debug_log

    text = _text()
    pattern = re.compile(r"NCCL INFO (\w+)")
    ratios, parses = [], []
    for _ in range(rounds):
        start = time.process_time()
        parse_debug_log(text)
        parse = time.process_time() - start
        start = time.process_time()
        for line in text.splitlines():
            pattern.search(line)
        reference = max(time.process_time() - start, 1e-6)
        parses.append(parse)
        ratios.append(parse / reference)
    parse, ratio = statistics.median(parses), statistics.median(ratios)
    ok = parse < 3.0 and ratio <= 30
    print(f"parse_debug_log, 100,001 lines: {parse:.2f} s of CPU (median of {rounds}); "
          f"{ratio:.1f}x a regex scan of the same lines; target < 3 s and <= 30x: {'ok' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
