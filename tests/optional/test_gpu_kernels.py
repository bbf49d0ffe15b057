"""``benchmarks/gpu_kernels.py`` run on this machine's CPU: every kind ``calibrate compute`` times is profiled
and listed with the bytes calibrate compute counts for it (on a GPU, with the kernels behind it)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="benchmarks/gpu_kernels.py needs PyTorch: pip install torch")

from costmodel.calibration.compute import KERNELS

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_kernels.py"


def test_a_cpu_run_lists_every_kind_with_its_counted_bytes():
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--calls", "1"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    kinds = re.findall(r"^(\w+): ", done.stdout, re.M)
    assert kinds == ["copy", *KERNELS]
    counted = dict(re.findall(r"^(\w+): .*\n  fp32 [\dx]+: counted ([\d.]+) elements", done.stdout, re.M))
    # fp32 on a CPU: the norm's three passes and the softmax's backward product counted (7 and 8 elements)
    assert counted["norm"] == "7" and counted["softmax"] == "8" and counted["optimizer"] == "7"
