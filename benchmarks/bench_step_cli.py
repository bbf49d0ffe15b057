"""A step query from the command line, timed side by side with ``python -c "import numpy"``.

Run as ``python benchmarks/bench_step_cli.py [ROUNDS]``.  Cold starts, interleaved round-robin so that
drift hits every command alike; the verdict of each is the median of its paired ratios (its run over
the reference's run of the same round):

* a step on a GPU preset (``--gpu h100-sxm``, a 32-layer shape on dp 8 × tp 8 × pp 4, ``--json`` and
  the table), target ≤ 1.5× the reference;
* ``--layers 100000`` (past the 10000 layers a step prices one by one), refused, target < 1 s;
* the 1T-parameter step of Narayanan et al.'s Table 1 (dp 6 × tp 8 × pp 64, 512 micro-batches, full
  recomputation) on the A100 preset, target < 1 s beyond the reference's start.

Each command's ``-X importtime`` report is checked for numpy, sympy and matplotlib, which a step query
does not need.  Timing problems print FAIL; they never raise.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from coldstart import COSTMODEL, Command, compare

SHAPE = ["--layers", "32", "--hidden", "4096", "--heads", "32", "--seq", "2048", "--vocab", "51200"]
ONE_T = ["--dp", "6", "--tp", "8", "--pp", "64", "-m", "512", "--layers", "128", "--hidden", "25600",
         "--heads", "160", "--seq", "2048", "--vocab", "51200", "--recompute", "full", "--gpu", "a100-80gb",
         "--allow-oom"]


def main(rounds: int = 9) -> bool:
    step = [*COSTMODEL, "step"]
    query = [*step, "--dp", "8", "--tp", "8", "--pp", "4", "-m", "8", *SHAPE, "--gpu", "h100-sxm"]
    return compare([
        Command("step --gpu h100-sxm --json", [*query, "--json"]),
        Command("step --gpu h100-sxm (table)", query),
        Command("step --layers 100000 (refused)", [*step, "--layers", "100000", "-F", "1ms", "-b", "2ms"],
                target=1.0, kind="seconds", rc=2),
        Command("step 1T, dp 6 × tp 8 × pp 64, M = 512", [*step, *ONE_T], target=1.0, kind="beyond"),
    ], rounds=rounds, heavy=("numpy", "sympy", "matplotlib"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
