"""Narayanan et al. SC'21 (arXiv:2104.04473) Table 1 reproduced: each row's teraFLOP/s per GPU, share of
the A100's 312 teraFLOP/s peak and aggregate petaFLOP/s, from equation (3) and a measured batch time.

The table does not print the batch time.  Each row's printed teraFLOP/s X (to ±0.5) and aggregate
petaFLOP/s (to ±0.05) bound the throughput; the time of the row is derived from equation (3) inside
those bounds (:data:`TIMES`, the times docs/theory/step-vs-measured.md uses), and ``achieved_flops``
with that time must give back all three printed numbers.
"""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.step import TransformerShape, achieved_flops, model_flops

TABLE = Path(__file__).parents[1] / "data" / "narayanan2021_table1.csv"
SEQ, VOCAB = 2048, 51200
PEAK = 312 * 10**12
TERA, PETA = 10**12, 10**15

#: The batch time of each row, in seconds (parameters in billions -> time), derived below.
TIMES = {"1.7": "3.528", "3.6": "3.700", "7.5": "3.692", "18.4": "9.388", "39.1": "14.42", "76.1": "16.01",
         "145.6": "24.84", "310.1": "37.64", "529.6": "54.16", "1008.0": "102.37"}


def _rows() -> list[dict[str, str]]:
    with TABLE.open(encoding="utf-8") as f:
        assert f.readline().startswith("# source: D. Narayanan et al.")
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


ROWS = _rows()


def _shape(row: dict[str, str]) -> TransformerShape:
    return TransformerShape(layers=int(row["layers"]), hidden=int(row["hidden"]), heads=int(row["heads"]),
                            sequence=SEQ, vocabulary=VOCAB)


def _equation_3(row: dict[str, str]) -> Fraction:
    """F = 96·B·s·l·h²·(1 + s/6h + V/16lh), written out from the paper."""
    b, n_l, h = int(row["batch"]), int(row["layers"]), int(row["hidden"])
    return 96 * b * SEQ * n_l * h**2 * (1 + Fraction(SEQ, 6 * h) + Fraction(VOCAB, 16 * n_l * h))


def _printed(value: Fraction, printed: str) -> bool:
    """*value* rounds to *printed* at the paper's precision (its last printed digit)."""
    places = len(printed.partition(".")[2])
    return abs(value - Fraction(printed)) <= Fraction(1, 2 * 10**places)


def test_the_table_has_its_ten_rows_from_32_to_3072_gpus():
    assert [r["parameters_billion"] for r in ROWS] == list(TIMES)
    assert (ROWS[0]["gpus"], ROWS[-1]["gpus"]) == ("32", "3072")
    for r in ROWS:  # the GPUs are tp × pp × dp with a whole dp dividing the batch
        model_parallel = int(r["tp"]) * int(r["pp"])
        assert int(r["gpus"]) % model_parallel == 0
        assert int(r["batch"]) % (int(r["gpus"]) // model_parallel) == 0


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["parameters_billion"] + "B")
def test_equation_2_gives_the_printed_parameter_count(row):
    # P = 12·l·h²·(1 + 13/12h + (V + s)/12lh), Narayanan et al. equation (2)
    n_l, h = int(row["layers"]), int(row["hidden"])
    p = 12 * n_l * h**2 * (1 + Fraction(13, 12 * h) + Fraction(VOCAB + SEQ, 12 * n_l * h))
    assert _printed(p / 10**9, row["parameters_billion"])


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["parameters_billion"] + "B")
def test_the_count_with_recomputation_is_equation_3(row):
    shape = _shape(row)
    assert model_flops(shape, batch=int(row["batch"]), recompute="full").total == _equation_3(row)
    result = achieved_flops(shape, batch=int(row["batch"]), recompute="full")
    assert result.hardware_flops == _equation_3(row)
    # without recomputation: 72·B·s·l·h²·(1 + s/6h + V/12lh), one forward fewer per layer
    b, n_l, h = int(row["batch"]), int(row["layers"]), int(row["hidden"])
    assert result.model_flops == 72 * b * SEQ * n_l * h**2 * (1 + Fraction(SEQ, 6 * h)
                                                             + Fraction(VOCAB, 12 * n_l * h))


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["parameters_billion"] + "B")
def test_the_derived_batch_time_lies_where_both_printed_throughputs_hold(row):
    n, flops = int(row["gpus"]), _equation_3(row)
    x, aggregate = Fraction(row["teraflops_per_gpu"]) * TERA, Fraction(row["aggregate_petaflops"]) * PETA
    low = max(x - TERA / 2, (aggregate - PETA / 20) / n)  # per-GPU FLOP/s both printed numbers allow
    high = min(x + TERA / 2, (aggregate + PETA / 20) / n)
    assert low < high, "the printed teraFLOP/s and petaFLOP/s disagree"
    assert flops / (n * high) <= Fraction(TIMES[row["parameters_billion"]]) <= flops / (n * low)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["parameters_billion"] + "B")
def test_flops_reproduces_the_row_to_its_printed_precision(row):
    r = achieved_flops(_shape(row), batch=int(row["batch"]), time_s=TIMES[row["parameters_billion"]] + "s",
                       gpus=int(row["gpus"]), recompute="full", peak_flops=PEAK)
    assert _printed(r.hardware_flops_per_s_per_gpu / TERA, row["teraflops_per_gpu"])
    assert _printed(100 * r.hfu, row["percent_of_peak"])
    assert _printed(r.hardware_flops_per_s / PETA, row["aggregate_petaflops"])
    # the model FLOPs leave out the recomputed forward: 3/4 of the layers' count, the logits whole
    assert r.mfu < Fraction(3, 4) * r.hfu + Fraction(1, 100) and r.mfu > Fraction(3, 4) * r.hfu


def test_the_aggregate_was_computed_before_the_per_gpu_figure_was_rounded():
    """A time from the rounded teraFLOP/s alone misses the printed petaFLOP/s in six of the ten rows."""
    missed = []
    for row in ROWS:
        n = int(row["gpus"])
        time = _equation_3(row) / (n * Fraction(row["teraflops_per_gpu"]) * TERA)
        if not _printed(_equation_3(row) / time / PETA, row["aggregate_petaflops"]):
            missed.append(row["parameters_billion"])
    assert missed == ["39.1", "76.1", "145.6", "310.1", "529.6", "1008.0"]
