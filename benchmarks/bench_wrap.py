"""Wrapping a long note, timed at two lengths to show the cost grows with the text, not its square.

Run as ``python benchmarks/bench_wrap.py [ROUNDS]``.  A note line of 50,000 words (the note that
lists a Megatron-LM script's unread arguments can be that long) and one of 100,000, each wrapped at
80 columns and at 10⁶ (what a pipe without COLUMNS may give), plain and with a styled prefix;
rounds interleaved, the median of each.  Targets: the long line under 2 s of CPU, and at most 3× the
short one (linear growth gives 2×; measuring each line whole gave 8× and minutes at 10⁵ words).

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import statistics
import sys
import time


def _line(words: int, styled: bool):  # type: ignore[no-untyped-def]
    from rich.text import Text

    text = Text("note: " + " ".join(f"--lr-{i} {i}" for i in range(words)))
    if styled:
        text.stylize("bold", 0, 5)
    return text


def main(rounds: int = 3) -> bool:
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from costmodel.cli.layout import _wrap

    ok = True
    print(f"{'case':<34} {'50k words':>10} {'100k words':>11} {'ratio':>6}  target")
    for width in (80, 10**6):
        for styled in (False, True):
            times: dict[int, list[float]] = {50_000: [], 100_000: []}
            lines = {n: _line(n, styled) for n in times}
            for _ in range(rounds):
                for n, line in lines.items():
                    start = time.process_time()
                    _wrap(line, width, 6)
                    times[n].append(time.process_time() - start)
            short, long = (statistics.median(times[n]) for n in times)
            ratio = long / short if short else float("inf")
            good = long < 2.0 and ratio <= 3.0
            ok &= good
            case = f"width {width}, {'styled' if styled else 'plain'}"
            verdict = "ok" if good else "FAIL"
            print(f"{case:<34} {short:>9.3f}s {long:>10.3f}s {ratio:>5.2f}×  < 2 s, ≤ 3× {verdict}")
    print("targets:", "ok" if ok else "FAIL")
    return ok


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
