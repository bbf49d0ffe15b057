"""``costmodel privacy`` from the command line, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_privacy_cli.py [ROUNDS]``.  Cold starts, interleaved round-robin so that
drift hits every command alike; the verdict of each is the median of its paired ratios (its run over
the reference's run of the same round), target ≤ 1.5× the reference:

* ε of the MNIST run (q = 256/60000, σ = 1.1, 60 epochs) over dp_accounting's 156 default orders,
  as a table and as ``--json``;
* Opacus's two-phase composition over the orders 2-32;
* the noise multiplier for ε = 2 by bisection over the orders 2-64 (reported; no target: about twenty
  accountings).

Each command's ``-X importtime`` report is checked for numpy, scipy and sympy, which the accounting
does not need.  Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coldstart import COSTMODEL, Command, compare

MNIST = ["--batch", "256", "--dataset", "60000", "--noise", "1.1", "--epochs", "60", "--delta", "1e-5"]


def main(rounds: int = 9) -> bool:
    privacy = [*COSTMODEL, "privacy"]
    return compare([
        Command("privacy MNIST, 156 orders --json", [*privacy, *MNIST, "--json"]),
        Command("privacy MNIST, 156 orders (table)", [*privacy, *MNIST]),
        Command("privacy two phases, orders 2-32", [*privacy, "--phases", "1e-5,1.0,10;1e-4,3.0,4", "--delta",
                                                    "1e-5", "--orders", "2-32"]),
        Command("privacy σ for ε = 2, orders 2-64", [*privacy, "-q", "0.01", "--steps", "10000",
                                                     "--target-epsilon", "2", "--delta", "1e-5", "--orders",
                                                     "2-64"], target=0.0),
    ], rounds=rounds, heavy=("numpy", "scipy", "sympy"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
