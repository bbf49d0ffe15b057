"""The spread of a measured size: quantiles against numpy's, exact cases worked by hand, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.calibration.spread import Spread, quantile, spread_of
from costmodel.errors import InputError


@pytest.mark.parametrize(("values", "q", "expected"), [
    # h = (k − 1)·q; x⌊h⌋ + (h − ⌊h⌋)(x⌊h⌋₊₁ − x⌊h⌋), worked by hand
    ([1.0, 2.0, 3.0, 4.0], 0.5, 2.5),      # h = 1.5
    ([1.0, 2.0, 3.0, 4.0, 5.0], 0.95, 4.8),  # h = 3.8
    ([10.0, 20.0], 0.95, 19.5),            # h = 0.95
    ([7.0], 0.5, 7.0),
    ([3.0, 1.0, 2.0], 0.0, 1.0),
    ([3.0, 1.0, 2.0], 1.0, 3.0),
])
def test_quantile_by_hand(values, q, expected):
    assert quantile(values, q) == pytest.approx(expected, rel=1e-12)


finite = st.floats(min_value=1e-9, max_value=10.0, allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=1, max_size=60), st.sampled_from([0.0, 0.05, 0.5, 0.9, 0.95, 0.99, 1.0]))
def test_quantile_is_numpys_default(values, q):
    """Hyndman and Fan's definition 7 is numpy's default ("linear"), computed there independently."""
    assert quantile(values, q) == pytest.approx(float(np.percentile(values, 100 * q)), rel=1e-12, abs=1e-18)


def test_spread_of_samples():
    # mean (1 + 2 + 3 + 4 + 10) / 5 = 4; p50 = 3 (h = 2); p95: h = 3.8, 4 + 0.8 · 6 = 8.8
    got = spread_of("reduce-scatter", 1024, True, [10.0, 1.0, 3.0, 2.0, 4.0], sweeps=2)
    assert got == Spread(collective="reduce-scatter", n_bytes=1024, in_place=True, samples=5, sweeps=2,
                         mean_s=4.0, p50_s=3.0, p95_s=pytest.approx(8.8))
    assert set(got.to_dict()) == {"collective", "n_bytes", "in_place", "samples", "sweeps", "mean_s", "p50_s",
                                  "p95_s"}


@pytest.mark.parametrize(("values", "q", "message"), [
    ([], 0.5, r"^no values to take a quantile of"),
    ([1.0, math.nan], 0.5, r"inf or NaN"),
    ([1.0, math.inf], 0.5, r"inf or NaN"),
    ([1.0], 1.5, r"^q=1.5 is not in \[0, 1\]"),
    ([1.0], -0.1, r"^q=-0.1 is not in \[0, 1\]"),
])
def test_bad_input(values, q, message):
    with pytest.raises(InputError, match=message):
        quantile(values, q)


def test_no_samples_is_an_input_error():
    with pytest.raises(InputError, match="no values"):
        spread_of("allreduce", 8, True, [], sweeps=1)
