"""One NCCL prediction, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_nccl.py [ROUNDS]``.  Cold start of
``python -m costmodel nccl allreduce -n 8MiB --ranks 16 --preset dgx-h100 --json`` (and of the
human table, and of explicit hardware) against ``python -c "import numpy"``, interleaved round-robin
so drift hits both alike; the verdict is the median of the paired ratios (each command's run over
the reference's run of the same round), target ≤ 1.5×.  Each command's ``-X importtime`` report is
checked for numpy, sympy and matplotlib, none of which the command may import.

Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coldstart import COSTMODEL, Command, compare

HARDWARE = ["--ranks", "16", "--nodes", "2", "--arch", "sm90", "--channels", "16", "--bw-intra", "40",
            "--bw-inter", "12.5"]


def main(rounds: int = 15) -> bool:
    nccl = [*COSTMODEL, "nccl", "allreduce", "-n", "8MiB"]
    return compare([
        Command("nccl allreduce --preset dgx-h100 --json", [*nccl, "--ranks", "16", "--preset", "dgx-h100",
                                                            "--json"]),
        Command("nccl allreduce --preset dgx-h100 (table)", [*nccl, "--ranks", "16", "--preset", "dgx-h100"]),
        Command("nccl allreduce explicit hardware --json", [*nccl, *HARDWARE, "--json"]),
    ], rounds=rounds, heavy=("numpy", "sympy", "matplotlib"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
