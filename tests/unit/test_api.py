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


def test_the_calibration_package_exports_lazily_and_whole():
    """Every name resolves to what its module defines, the log readers all re-exported, and `fit` is the
    function even after its module was imported."""
    import importlib
    import subprocess
    import sys

    from costmodel import calibration
    from costmodel.calibration import logs

    assert set(logs.__all__) <= set(calibration.__all__)
    assert set(calibration._EXPORTS) | {"logs"} == set(calibration.__all__)
    for name in calibration.__all__:
        module = "costmodel.calibration.logs" if name == "logs" else calibration._EXPORTS[name]
        expected = importlib.import_module(module) if name == "logs" else getattr(
            importlib.import_module(module), name)
        assert getattr(calibration, name) is expected, name
    assert callable(calibration.fit)
    code = ("import sys; import costmodel.calibration.fit; from costmodel.calibration import fit; "
            "assert callable(fit); import costmodel.calibration; "
            "print(sorted(m for m in ('costmodel.calibration.bench', 'costmodel.calibration.compute', 'torch') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
