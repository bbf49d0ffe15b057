"""benchmarks/gpu_calibrate.sh end to end on CPUs: calibrate run's nccl swapped for gloo, a stand-in all_reduce_perf,
and calibrate compute on the CPU (a dry run: --base given through COMPUTE_ARGS)."""

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


COMPUTE_ARGS = "--base a100-80gb --quick --layers 1 --hidden 128 --heads 2 --seq 64 --vocab 256"
"""A CPU has no preset to guess: the base is given; a tiny model keeps the run short."""


def _costmodel(tmp_path: Path) -> Path:
    """A costmodel that runs gloo where the script asks for nccl, and logs each command it runs."""
    return _script(tmp_path / "cm.sh", f'echo "$*" >> {tmp_path / "commands.txt"}\n'
                   'args=("$@"); for i in "${!args[@]}"; do '
                   '[[ "${args[$i]}" == nccl ]] && args[$i]=gloo; done\n'
                   f'exec {sys.executable} -m costmodel "${{args[@]}}"\n')


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "OUT": str(tmp_path / "out"), "COSTMODEL": str(_costmodel(tmp_path)),
            "PYTHON": sys.executable, "COMPUTE_ARGS": COMPUTE_ARGS, **more}


def _run_script(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_calibrate.sh")], env=env, capture_output=True,
                          text=True, timeout=400, check=False)


def _check_compute(out: Path) -> None:
    from costmodel.gpus import load_gpu

    gpu = load_gpu(out / "compute.toml")
    assert (gpu.name, gpu.base) == ("a100-80gb-calibrated", "a100-80gb")
    text = (out / "compute.txt").read_text()
    assert f"wrote {out / 'compute.toml'}" in " ".join(text.split()) and "fit: K0 =" in text


def test_script_records_nccl_tests_next_to_the_fit(tmp_path):
    perf = _script(tmp_path / "perf.sh", f'echo "$@" > {tmp_path / "perf-args.txt"}\ncat {LOG}\n')
    out = tmp_path / "out"
    env = _env(tmp_path, GPUS="2", SIZES="8B..1KiB", ALL_REDUCE_PERF=str(perf), LIMIT_S="150", COMPUTE_LIMIT_S="30")
    done = _run_script(env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "perf-args.txt").read_text().split() == ["-b", "8", "-e", "1024", "-f", "2", "-g", "2",
                                                                "-w", "5", "-n", "20"]
    compare = (out / "compare-allreduce.txt").read_text().splitlines()
    assert compare[0].split() == ["n", "(B)", "costmodel", "(us)", "nccl-tests", "(us)", "ratio"]
    assert [int(line.split()[0]) for line in compare[1:]] == [8, 16, 32, 64, 128, 256, 512, 1024]
    assert "allreduce · p = 8" in (out / "fit-nccl-tests-allreduce.txt").read_text()
    assert 'collective = "allreduce"' in (out / "profile.toml").read_text()
    _check_compute(out)
    commands = (tmp_path / "commands.txt").read_text().splitlines()
    # the compute first, with its share of the limit; then NCCL with what is left of LIMIT_S
    assert commands[0].startswith("calibrate compute --limit 30s --out ") and commands[0].endswith(COMPUTE_ARGS)
    nccl = next(c for c in commands if c.startswith("calibrate run --backend nccl --ranks 2"))
    assert commands.index(nccl) == 1


def test_one_gpu_runs_the_compute_and_skips_nccl(tmp_path):
    out = tmp_path / "out"
    done = _run_script(_env(tmp_path, GPUS="1", LIMIT_S="100"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "skipping the NCCL calibration: it needs at least 2 GPUs and 1 are visible" in done.stderr
    _check_compute(out)
    commands = (tmp_path / "commands.txt").read_text().splitlines()
    assert len(commands) == 1 and commands[0].startswith("calibrate compute --limit 20s ")  # a fifth of LIMIT_S
    assert not (out / "measurements.csv").exists() and not (out / "profile.toml").exists()


def test_a_failed_compute_part_is_the_exit_status(tmp_path):
    done = _run_script(_env(tmp_path, GPUS="0", COMPUTE_ARGS="", LIMIT_S="60"))
    assert done.returncode == 2
    assert "error: on a CPU there is no GPU to start from" in done.stderr
    assert "warning: the compute calibration failed (status 2)" in done.stderr
    assert "skipping the NCCL calibration" in done.stderr


@pytest.mark.parametrize(("env", "message"), [
    ({"GPUS": "two"}, "error: GPUS=two is not a count of GPUs"),
    ({"LIMIT_S": "5"}, "error: LIMIT_S=5 is not a whole number of seconds >= 10"),
    ({"LIMIT_S": "60", "COMPUTE_LIMIT_S": "60"}, "error: COMPUTE_LIMIT_S=60 is not a whole number of seconds in"),
])
def test_bad_settings_stop_before_anything_runs(tmp_path, env, message):
    done = _run_script(_env(tmp_path, **env))
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "commands.txt").exists()
