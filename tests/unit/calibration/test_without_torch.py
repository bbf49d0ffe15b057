"""Without PyTorch the calibration tests skip with a reason, and `calibrate run` says how to install it.

The docs promise that the suite runs without torch (README, docs/calibration.md); this runs the
calibration test files in a fresh interpreter where ``import torch`` fails as if it were not
installed, so the promise holds on a machine that has torch too.
"""

from __future__ import annotations

from tests.hidden import run_without


def _run_without_torch(code: str):
    return run_without("torch", code)


def test_calibration_tests_skip_with_a_reason_without_torch():
    files = ["tests/unit/calibration/test_bench.py", "tests/cli/test_calibrate_cli.py"]
    done = _run_without_torch(f"import pytest; sys.exit(pytest.main(['-n', '0', '-q', '-rs', *{files!r}]))")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "error" not in out.lower().replace("test_errors_are_one_line", ""), out
    assert "SKIPPED [1] tests/unit/calibration/test_bench.py" in out
    assert "calibrate run needs PyTorch" in out


def test_calibrate_run_without_torch_is_one_line_with_the_install_command():
    done = _run_without_torch("from costmodel.cli import main; sys.argv = ['costmodel', 'calibrate', 'run']; sys.exit(main())")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: calibrate run needs PyTorch")
    assert "pip install 'costmodel-collectives[calibrate]'" in done.stderr
    assert "--index-url https://download.pytorch.org/whl/cpu" in done.stderr
