"""The public API: every exported name resolves, and the table and __all__ agree."""

from __future__ import annotations

import costmodel


def test_every_exported_name_resolves():
    for name in costmodel.__all__:
        assert getattr(costmodel, name) is not None, name


def test_export_table_and_all_agree():
    assert set(costmodel._EXPORTS) | costmodel._PACKAGES == set(costmodel.__all__) - {"__version__"}


def test_the_step_package_prices_a_step_when_called():
    from fractions import Fraction

    r = costmodel.step(forward_s=["1ms"] * 2, backward_s=["2ms"] * 2)
    assert r.step_s == Fraction(6, 1000)
    assert costmodel.step(forward_s=["1ms"], backward_s=["2ms"]) == costmodel.estimate_step(
        forward_s=["1ms"], backward_s=["2ms"])
    assert costmodel.step.sweep_step is costmodel.sweep_step
