"""The start-up of the commands a newcomer types first, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_startup.py [ROUNDS]``: cold starts, round-robin, the median of each
command's paired ratios to the reference (benchmarks/coldstart.py), target ≤ 1.5× for each of ``costmodel
--help``, a ``step`` query (table), an ``nccl`` prediction, ``calibrate fit`` of a 31-row log and a ``cost``
table; and ``consensus`` on a ring of 10⁶ workers within 0.2 s beyond the reference's start.  The help
screen may import neither sympy nor numpy; ``calibrate fit`` needs numpy, so its check is sympy only.
Two rows without a target time the floor: the command-line libraries every command loads, without and
with numpy.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coldstart import COSTMODEL, Command, compare

FLOOR = "import typer.main, rich.console, rich.text"
"""What every command imports before any of costmodel's code: a command's ratio cannot fall below this
one's (nor, for a command that needs numpy, below the floor with numpy)."""

LOG = "tests/data/logs/nccl-tests/allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt"


def main(rounds: int = 9) -> bool:
    query = [*COSTMODEL, "step", "--dp", "8", "--tp", "8", "--pp", "4", "-m", "8", "--layers", "32",
             "--hidden", "4096", "--heads", "32", "--seq", "2048", "--vocab", "51200", "--gpu", "h100-sxm"]
    fast = compare([
        Command("costmodel --help", [*COSTMODEL, "--help"]),
        Command("step (table)", query),
        Command("nccl allreduce (table)", [*COSTMODEL, "nccl", "allreduce", "-n", "1MiB", "--ranks", "16",
                                           "--preset", "dgx-h100"]),
        Command("cost allreduce (table)", [*COSTMODEL, "cost", "allreduce", "-p", "16", "-n", "1MiB",
                                           "--profile", "ib-hdr"]),
        Command("floor: typer + rich (no target)", [sys.executable, "-c", FLOOR], target=0.0),
    ], rounds=rounds, heavy=("numpy", "sympy"))
    print()  # these two need numpy (and scipy): sympy is the module they must not load
    fit = compare([
        Command("calibrate fit (31 rows)", [*COSTMODEL, "calibrate", "fit", LOG]),
        Command("consensus ring -p 1000000", [*COSTMODEL, "consensus", "ring", "-p", "1000000", "--target",
                                              "0.001"], target=0.2, kind="beyond"),
        Command("floor: typer + rich + numpy (no target)", [sys.executable, "-c", FLOOR + "; import numpy"],
                target=0.0),
    ], rounds=rounds, heavy=("sympy",))
    return fast and fit


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
