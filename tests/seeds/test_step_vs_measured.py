"""docs/theory/step-vs-measured.md: ``step`` against Narayanan et al. SC'21 Table 1, and the efficiency
that makes each row's modelled batch time equal the measured one.

The step time is T(x) = A·x + C in x = 1/efficiency as long as the same operations stay on the
critical path (compute scales with x, communication does not); the efficiency is solved exactly by
the secant method on x, which ends on a piecewise-linear T in a few steps, and checked by pricing
the step again at it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.links import resolve_link
from costmodel.step import TransformerShape, step
from tests.seeds.test_narayanan_table1 import ROWS, TIMES

PAGE = Path(__file__).parents[2] / "docs" / "theory" / "step-vs-measured.md"
NVLINK, IB = resolve_link("allreduce", profile="nvlink3"), resolve_link("allreduce", profile="ib-hdr")

#: The rows the page prices: parameters (billions) -> (step at efficiency 1 in s, efficiency that matches).
PRICED = {"1.7": ("1.74", "0.4533"), "18.4": ("5.65", "0.5154"), "39.1": ("8.285", "0.5104"),
          "145.6": ("14.58", "0.5478"), "529.6": ("34.32", "0.6082"), "1008.0": ("65.56", "0.6204")}


def _step(row: dict[str, str], efficiency: Fraction):
    tp, pp, gpus, batch = (int(row[k]) for k in ("tp", "pp", "gpus", "batch"))
    dp, layers = gpus // (tp * pp), int(row["layers"])
    shape = TransformerShape(layers=layers, hidden=int(row["hidden"]), heads=int(row["heads"]),
                             sequence=2048, vocabulary=51200)
    interleaved = {"schedule": "interleaved", "chunks": 3 if layers // pp == 3 else 2} if pp > 1 else {}
    return step(dp=dp, tp=tp, pp=pp, microbatches=batch // dp, recompute="full", shape=shape,
                peak_flops=312 * 10**12, efficiency=efficiency, tp_link=NVLINK, pp_link=IB, dp_link=IB,
                **interleaved)


def _matching(row: dict[str, str], measured: Fraction) -> Fraction:
    """The efficiency at which the step takes *measured* seconds (secant on x = 1/efficiency)."""
    x0, x1 = Fraction(1), Fraction(2)
    t0, t1 = _step(row, 1 / x0).step_s, _step(row, 1 / x1).step_s
    for _ in range(8):
        if t1 == measured:
            return 1 / x1
        x0, x1 = x1, x1 + (measured - t1) * (x1 - x0) / (t1 - t0)
        t0, t1 = t1, _step(row, 1 / x1).step_s
    raise AssertionError("the secant method did not end")


def _shown(value: Fraction, digits: int = 4) -> str:
    from costmodel.units import format_number

    return format_number(value, digits=digits)


@pytest.mark.parametrize("row", [r for r in ROWS if r["parameters_billion"] in PRICED],
                         ids=lambda r: r["parameters_billion"] + "B")
def test_the_page_gives_the_modelled_time_and_the_matching_efficiency(row):
    name = row["parameters_billion"]
    measured = Fraction(TIMES[name])
    at_peak = _step(row, Fraction(1)).step_s
    efficiency = _matching(row, measured)
    assert _step(row, efficiency).step_s == measured  # exact
    assert (_shown(at_peak), _shown(efficiency)) == PRICED[name]
    line = next(x for x in PAGE.read_text(encoding="utf-8").splitlines() if x.startswith(f"| {name} "))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert f"{PRICED[name][0]} s" in cells and f"{TIMES[name]} s" in cells and PRICED[name][1] in cells
