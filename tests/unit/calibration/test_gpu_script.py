"""benchmarks/gpu_calibrate.sh end to end on CPUs: calibrate run's nccl swapped for gloo, a stand-in all_reduce_perf."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="calibrate run needs PyTorch: pip install 'costmodel-collectives[calibrate]'")
if shutil.which("bash") is None or shutil.which("timeout") is None:
    pytest.skip("the script needs bash and timeout", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "tests" / "data" / "logs" / "nccl-tests" / "allreduce_v100x8_nvlink_oldformat.txt"


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/usr/bin/env bash\n" + body, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_script_records_nccl_tests_next_to_the_fit(tmp_path):
    costmodel = _script(tmp_path / "cm.sh", 'args=("$@"); for i in "${!args[@]}"; do '
                        '[[ "${args[$i]}" == nccl ]] && args[$i]=gloo; done\n'
                        f'exec {sys.executable} -m costmodel "${{args[@]}}"\n')
    perf = _script(tmp_path / "perf.sh", f'echo "$@" > {tmp_path / "perf-args.txt"}\ncat {LOG}\n')
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OUT": str(out), "GPUS": "2", "SIZES": "8B..1KiB",
           "COSTMODEL": str(costmodel), "PYTHON": sys.executable, "ALL_REDUCE_PERF": str(perf), "LIMIT_S": "150"}
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_calibrate.sh")], env=env, capture_output=True,
                          text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "perf-args.txt").read_text().split() == ["-b", "8", "-e", "1024", "-f", "2", "-g", "2",
                                                                "-w", "5", "-n", "20"]
    compare = (out / "compare-allreduce.txt").read_text().splitlines()
    assert compare[0].split() == ["n", "(B)", "costmodel", "(us)", "nccl-tests", "(us)", "ratio"]
    assert [int(line.split()[0]) for line in compare[1:]] == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert "allreduce · p = 8" in (out / "fit-nccl-tests-allreduce.txt").read_text()
    assert 'collective = "allreduce"' in (out / "profile.toml").read_text()
