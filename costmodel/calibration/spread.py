"""The spread of a measured size: mean, median (p50) and 95th percentile of its timed samples.

``calibrate run`` times each size of each collective over many samples (an iteration, or a batch's
average under batched timing), each at its slowest rank's time, and with ``repeat`` it runs the
whole sweep several times, as nccl-tests' ``-N`` does.  The time it fits is a robust one (the
median after outliers are dropped, see :mod:`costmodel.calibration.bench`); beside it a run reports
how the samples spread: their mean (what nccl-tests prints, outliers included), p50 and p95,
over every sample of every sweep.

Percentiles are the sample quantiles of Hyndman and Fan's definition 7 [1]_, linear interpolation
between the order statistics at (k − 1)·q (numpy's default and R's), so p50 is the median.

References
----------
.. [1] R. J. Hyndman, Y. Fan (1996). Sample quantiles in statistical packages. The American
   Statistician 50(4):361-365, definition 7.

Examples
--------
>>> quantile([4.0, 1.0, 3.0, 2.0], 0.5), quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
(2.5, 4.8)
>>> s = spread_of("allgather", 64, False, [1.0, 2.0, 3.0, 4.0, 10.0], sweeps=1)
>>> s.samples, s.mean_s, s.p50_s, round(s.p95_s, 12)
(5, 4.0, 3.0, 8.8)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel._json import MeasuredFields
from costmodel.errors import InputError
from costmodel.references import HYNDMAN_FAN_1996, Citation

__all__ = ["CITED", "Spread", "quantile", "spread_of"]

CITED: tuple[Citation, ...] = (HYNDMAN_FAN_1996,)


def quantile(values: Sequence[float], q: float) -> float:
    """The *q* sample quantile of *values* (0 ≤ q ≤ 1), by linear interpolation (definition 7 [1]_).

    With the values sorted, x₀ ≤ … ≤ x₍ₖ₋₁₎, and h = (k − 1)·q: x⌊h⌋ + (h − ⌊h⌋)·(x⌊h⌋₊₁ − x⌊h⌋).

    >>> quantile([3.0], 0.95), quantile([1.0, 3.0], 0.5), quantile([5.0, 1.0, 2.0], 1.0)
    (3.0, 2.0, 5.0)

    Raises
    ------
    InputError
        For no values, a value that is not finite, or q outside [0, 1].
    """
    if not 0 <= q <= 1:
        raise InputError(f"q={q!r} is not in [0, 1]; give e.g. q=0.95 for p95")
    ordered = sorted(float(v) for v in values)
    if not ordered:
        raise InputError("no values to take a quantile of; give at least one")
    if not all(math.isfinite(v) for v in ordered):
        raise InputError("the values hold inf or NaN; give finite times")
    h = (len(ordered) - 1) * q
    low = math.floor(h)
    if low + 1 >= len(ordered):
        return ordered[-1]
    return ordered[low] + (h - low) * (ordered[low + 1] - ordered[low])


@dataclass(frozen=True, slots=True, kw_only=True)
class Spread(MeasuredFields):
    """How the timed samples of one size spread, over every sweep of a run.

    ``in_place`` is None for a collective that has no such notion; ``samples`` counts the timed
    samples (iterations, or batches under batched timing) of all ``sweeps``; the times are seconds.
    """

    collective: str
    n_bytes: int
    in_place: bool | None
    samples: int
    sweeps: int
    mean_s: float
    p50_s: float
    p95_s: float


def spread_of(collective: str, n_bytes: int, in_place: bool | None, samples: Sequence[float], *,
              sweeps: int) -> Spread:
    """The :class:`Spread` of *samples* (seconds), the samples of *sweeps* sweeps of one size.

    Raises
    ------
    InputError
        As :func:`quantile`.
    """
    values = [float(v) for v in samples]
    p50, p95 = quantile(values, 0.5), quantile(values, 0.95)  # refuses no values and inf or NaN
    return Spread(collective=collective, n_bytes=n_bytes, in_place=in_place, samples=len(values),
                  sweeps=sweeps, mean_s=math.fsum(values) / len(values), p50_s=p50, p95_s=p95)
