"""The torch.distributed micro-benchmark: real gloo runs on 2 ranks, failures, hangs, torchrun, bad input."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="calibrate run needs PyTorch: pip install 'costmodel-collectives[calibrate]'")
dist = pytest.importorskip("torch.distributed", reason="this PyTorch build has no torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch build has no gloo backend", allow_module_level=True)

from costmodel.calibration import fit, read_csv  # noqa: E402
from costmodel.calibration.bench import (  # noqa: E402
    BENCH_COLLECTIVES,
    BENCH_CSV_COLUMNS,
    PLACEMENTS,
    BackendChoice,
    BenchConfig,
    Progress,
    _summarize,
    bench_sizes,
    choose_backend,
    parse_sizes,
    run_benchmark,
)
from costmodel.calibration.supervisor import free_port  # noqa: E402
from costmodel.errors import CalibrationError, InputError, MissingDependency  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
SMALL = {"ranks": 2, "backend": "gloo", "min_bytes": 8, "max_bytes": 64 * KIB, "budget_s": 0.01,
         "min_iters": 3, "max_iters": 20, "warmup": 1, "timeout_s": 60.0}


def _no_children() -> bool:
    return not multiprocessing.active_children()


def _job_env() -> dict[str, str]:
    """This environment for a job's processes: this checkout's costmodel, no launcher's variables."""
    launcher = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    return {**{k: v for k, v in os.environ.items() if k not in launcher},
            "PYTHONPATH": str(Path(__file__).resolve().parents[3])}


# --------------------------------------------------------------------------- a real gloo run


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    csv_path = tmp_path_factory.mktemp("bench") / "run.csv"
    seen: list[Progress] = []
    config = BenchConfig(collectives=("allreduce", "all_gather", "p2p"), csv_path=csv_path, **SMALL)
    start = time.monotonic()
    results = run_benchmark(config, progress=seen.append)
    return config, results, seen, csv_path, time.monotonic() - start


def test_run_returns_one_measurements_per_collective(small_run):
    _, results, _, csv_path, _ = small_run
    assert [m.collective for m in results] == ["allreduce", "allgather", "pt2pt"]
    for m in results:
        assert (m.tool, m.p, m.backend, m.dtype) == ("costmodel-csv", 2, "gloo", "float32")
        sizes = bench_sizes(m.collective, 2, 8, 64 * KIB)
        # each size in each placement torch.distributed has for it, out of place first
        assert [(r.n_bytes, r.in_place) for r in m.rows] == [(n, q) for n in sizes for q in PLACEMENTS[m.collective]]
        assert all(r.time_s > 0 and r.algbw_bytes_per_s > 0 for r in m.rows)
        assert m.source.startswith("# source: costmodel calibrate run, torch")
        assert m.path == str(csv_path)
    assert _no_children()


def test_progress_reports_every_size_in_order(small_run):
    _, results, seen, _, _ = small_run
    total = sum(len(m.rows) for m in results)
    assert [p.index for p in seen] == list(range(1, total + 1))
    assert {p.total for p in seen} == {total}
    assert [(p.collective, p.n_bytes) for p in seen] == [(m.collective, r.n_bytes) for m in results for r in m.rows]
    assert all(p.time_s > 0 and 3 <= p.iterations <= 20 and p.elapsed_s > 0 for p in seen)
    assert [p.in_place for p in seen] == [r.in_place for m in results for r in m.rows]
    assert {p.sweep for p in seen} == {1}
    assert set(seen[0].to_dict()) == {"collective", "n_bytes", "in_place", "sweep", "index", "total", "time_s",
                                      "iterations", "elapsed_s"}


def test_csv_is_written_and_read_back(small_run):
    _, results, _, csv_path, _ = small_run
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# source: costmodel calibrate run")
    assert lines[1] == ",".join(BENCH_CSV_COLUMNS)
    for m in results:
        back = read_csv(csv_path, collective=m.collective, p=2)
        assert back.backend == "gloo"
        assert [(r.n_bytes, r.time_s, r.busbw_bytes_per_s, r.in_place) for r in back.rows] == \
            [(r.n_bytes, r.time_s, r.busbw_bytes_per_s, r.in_place) for r in m.rows]
    header = lines[1].split(",")
    for line in lines[2:]:
        cell = dict(zip(header, line.split(","), strict=True))
        kept = int(cell["iterations"]) - int(cell["outliers"])
        assert 3 <= int(cell["iterations"]) <= 20 and kept >= 1
        assert float(cell["min_time_s"]) <= float(cell["time_s"]) <= float(cell["max_time_s"])
        # p50 and p95 of all the samples, outliers in; the median of the kept ones is at most their p50
        assert float(cell["min_time_s"]) <= float(cell["p50_s"]) <= float(cell["p95_s"])
        assert float(cell["time_s"]) <= float(cell["p50_s"]) and float(cell["mean_s"]) > 0
        assert (cell["in_place"], cell["sweep"]) in {("true", "1"), ("false", "1")}


def test_measurements_fit(small_run):
    _, results, _, _, _ = small_run
    for m in results:
        f = fit(m)
        assert math.isfinite(f.alpha_s) and f.alpha_s >= 0
        assert math.isfinite(f.beta_s_per_byte) and f.beta_s_per_byte >= 0


def test_pt2pt_is_one_way_and_small_sweep_is_quick(small_run):
    _, results, _, _, seconds = small_run
    pt2pt = results[-1]
    assert pt2pt.collective == "pt2pt" and pt2pt.rows[0].n_bytes == 8
    assert seconds < 25


def test_repeat_runs_the_whole_sweep_again_and_pools_its_samples(tmp_path):
    from costmodel.calibration.bench import benchmark

    csv_path = tmp_path / "twice.csv"
    config = BenchConfig(**{**SMALL, "max_bytes": 256}, collectives=("reduce-scatter", "broadcast"),
                         csv_path=csv_path, repeat=2)
    run = benchmark(config)
    scatter, broadcast = run.measurements
    sizes = {"reduce-scatter": bench_sizes("reduce-scatter", 2, 8, 256), "broadcast": bench_sizes("broadcast", 2, 8, 256)}
    one_sweep = [(c, n, q) for c in ("reduce-scatter", "broadcast") for n in sizes[c] for q in PLACEMENTS[c]]
    assert [(r.n_bytes, r.in_place) for r in scatter.rows] == [(n, q) for c, n, q in one_sweep * 2
                                                               if c == "reduce-scatter"]
    assert [r.in_place for r in broadcast.rows] == [True] * 2 * len(sizes["broadcast"])
    # the CSV: sweep 1 then sweep 2, every row numbered; read back whole, sizes restarting with the sweep
    lines = csv_path.read_text().splitlines()
    assert "2 sweeps" in lines[0]
    cells = [dict(zip(lines[1].split(","), line.split(","), strict=True)) for line in lines[2:]]
    assert [(c["collective"], int(c["n_bytes"]), c["in_place"] == "true", int(c["sweep"])) for c in cells] == \
        [(*point, 1) for point in one_sweep] + [(*point, 2) for point in one_sweep]
    back = read_csv(csv_path, collective="reduce-scatter")
    assert [(r.n_bytes, r.time_s, r.in_place) for r in back.rows] == \
        [(r.n_bytes, r.time_s, r.in_place) for r in scatter.rows]
    # one spread per size and placement, over both sweeps: per-iteration timing, so its samples are the
    # iterations of its two rows
    assert [(s.collective, s.n_bytes, s.in_place) for s in run.spreads] == one_sweep
    for spread in run.spreads:
        rows = [c for c in cells if (c["collective"], int(c["n_bytes"]), c["in_place"] == "true")
                == (spread.collective, spread.n_bytes, spread.in_place)]
        assert spread.sweeps == 2 and spread.samples == sum(int(c["iterations"]) for c in rows)
        assert 0 < spread.p50_s <= spread.p95_s
        # the pooled mean is the sweeps' means weighted by their samples (each row's mean_s)
        pooled = sum(float(c["mean_s"]) * int(c["iterations"]) for c in rows) / spread.samples
        assert spread.mean_s == pytest.approx(pooled, rel=1e-6)
    assert (run.backend, run.timing, run.repeat) == ("gloo", "per-iteration", 2)
    assert _no_children()


def test_step_text_names_the_placement_and_the_sweep_where_there_are_several():
    from costmodel.calibration import bench

    plan = bench._plan(BenchConfig(**{**SMALL, "max_bytes": 16}, collectives=("allgather", "allreduce"), repeat=2), 2)
    assert [bench._step_text(plan, i) for i in range(len(plan))] == [
        f"{c} at {n} B{where} (sweep {s} of 2)" for s in (1, 2)
        for c, n, where in (("allgather", 8, " out of place"), ("allgather", 8, " in place"),
                            ("allgather", 16, " out of place"), ("allgather", 16, " in place"),
                            ("allreduce", 8, ""), ("allreduce", 16, ""))]
    single = bench._plan(BenchConfig(**SMALL, collectives=("alltoall",)), 2)
    assert bench._step_text(single, 0) == "alltoall at 8 B"


# --------------------------------------------------------------------------- failures


def test_a_rank_that_dies_ends_the_run(tmp_path):
    csv_path = tmp_path / "partial.csv"
    config = BenchConfig(**{**SMALL, "timeout_s": 30.0}, collectives=("allreduce",), csv_path=csv_path,
                         _fail_rank=1)
    start = time.monotonic()
    with pytest.raises(CalibrationError, match=r"^rank 1 exited with code 3 during allreduce at 16 B; "):
        run_benchmark(config)
    assert time.monotonic() - start < 20
    assert _no_children()
    kept = read_csv(csv_path)  # the size measured before the failure was flushed
    assert [r.n_bytes for r in kept.rows] == [8]


def test_a_rank_that_hangs_ends_the_run_within_the_timeout():
    config = BenchConfig(**{**SMALL, "timeout_s": 5.0}, collectives=("broadcast",), _hang_rank=0)
    start = time.monotonic()
    with pytest.raises(CalibrationError, match=r"^no rank finished broadcast at 16 B within 5 s; a rank hung"):
        run_benchmark(config)
    assert time.monotonic() - start < 30  # 5 s of timeout, the ranks' start and stop, on a loaded machine
    assert _no_children()


def test_ranks_that_disagree_stop_before_measuring(tmp_path):
    csv_path = tmp_path / "none.csv"
    config = BenchConfig(**{**SMALL, "ranks": 3}, collectives=("allreduce",), csv_path=csv_path, _skew_rank=2)
    with pytest.raises(CalibrationError, match=r"^rank 2 disagrees with rank 0 on sizes; run the same command"):
        run_benchmark(config)
    assert _no_children()
    assert len(csv_path.read_text().splitlines()) == 2  # the source line and the header, no size


def test_torchrun_ranks_join_the_group_and_rank_0_returns(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys
        from costmodel.calibration.bench import BenchConfig, run_benchmark
        config = BenchConfig(backend="gloo", collectives=("reduce-scatter",), min_bytes=8, max_bytes=1024,
                             budget_s=0.005, max_iters=10, warmup=1, ranks=5,
                             csv_path={str(tmp_path / "tr.csv")!r})
        results = run_benchmark(config)
        rank = os.environ["RANK"]
        with open(os.path.join({str(tmp_path)!r}, "rank" + rank + ".json"), "w") as f:
            json.dump([m.to_dict() for m in results], f)
        """), encoding="utf-8")
    env = _job_env()
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(script)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    rank0 = json.loads((tmp_path / "rank0.json").read_text())
    rank1 = json.loads((tmp_path / "rank1.json").read_text())
    assert rank1 == []
    assert [(m["collective"], m["p"], m["backend"]) for m in rank0] == [("reduce-scatter", 2, "gloo")]
    sizes = bench_sizes("reduce-scatter", 2, 8, 1024)
    assert [(r["n_bytes"], r["in_place"]) for r in rank0[0]["rows"]] == [(n, q) for n in sizes for q in (False, True)]
    assert len(read_csv(tmp_path / "tr.csv").rows) == len(rank0[0]["rows"])


@pytest.mark.parametrize("address", [{"MASTER_ADDR": "127.0.0.1"}, {"SLURM_STEP_NODELIST": "localhost"}],
                         ids=["master-addr", "node-list"])
def test_ranks_started_by_srun_without_torchrun_form_the_group(tmp_path, address):
    """Two processes with only SLURM's variables (as srun sets them), rank 0's host from MASTER_ADDR or,
    without it, the step's node list: no torchrun."""
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(f"""
        import json, os
        from costmodel.calibration.bench import BenchConfig, run_benchmark
        config = BenchConfig(backend="gloo", collectives=("allreduce",), min_bytes=8, max_bytes=64,
                             budget_s=0.005, max_iters=10, warmup=1, csv_path={str(tmp_path / "srun.csv")!r})
        results = run_benchmark(config)
        with open(os.path.join({str(tmp_path)!r}, "rank" + os.environ["SLURM_PROCID"] + ".json"), "w") as f:
            json.dump([m.to_dict() for m in results], f)
        """), encoding="utf-8")
    base = _job_env()
    port = str(free_port())
    jobs = [subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**base, "SLURM_PROCID": str(rank), "SLURM_NTASKS": "2",
                                             "SLURM_LOCALID": str(rank), "SLURM_STEP_ID": "0",
                                             "SLURM_STEP_TASKS_PER_NODE": "2", **address, "MASTER_PORT": port})
            for rank in range(2)]
    outs = [job.communicate(timeout=90) for job in jobs]
    assert [job.returncode for job in jobs] == [0, 0], [err[-2000:] for _, err in outs]
    rank0 = json.loads((tmp_path / "rank0.json").read_text())
    assert json.loads((tmp_path / "rank1.json").read_text()) == []
    assert [(m["collective"], m["p"]) for m in rank0] == [("allreduce", 2)]
    assert len(read_csv(tmp_path / "srun.csv").rows) == len(rank0[0]["rows"])


def test_a_launched_rank_without_master_addr_says_so_in_one_line(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    with pytest.raises(InputError, match=r"^rank 1 of 4 was started by open-mpi \(OMPI_COMM_WORLD_RANK, "
                                         r"OMPI_COMM_WORLD_SIZE\) but MASTER_ADDR is not set; export MASTER_ADDR="):
        run_benchmark(BenchConfig(**SMALL))
    assert _no_children()


def test_torchrun_watchdog_names_the_rank_that_hangs(tmp_path):
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent("""
        from costmodel.calibration.bench import BenchConfig, run_benchmark
        config = BenchConfig(backend="gloo", collectives=("allreduce",), min_bytes=8, max_bytes=64,
                             budget_s=0.005, max_iters=10, warmup=1, timeout_s=3.0, _hang_rank=1)
        run_benchmark(config)
        """), encoding="utf-8")
    env = _job_env()
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(script)]
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode != 0
    assert time.monotonic() - start < 60
    assert ("error: rank 1 hung (last step entered: allreduce at 8 B); the other ranks waited 3 s in "
            "allreduce at 16 B; "
            "the run is stopped") in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize(("steps", "expected"), [
    ({0: 4, 1: 3, 2: 4, 3: None}, "rank 1 hung (last step entered: allreduce at 128 B); the other ranks "
                                  "waited 5 s in allreduce at 256 B; the run is stopped"),
    ({0: -1, 1: 0, 2: -1}, "ranks 0, 2 hung (last step entered: start-up); the other ranks waited 5 s in "
                           "allreduce at 16 B; the run is stopped"),
    ({0: 2, 1: 2}, "every rank has waited 5 s in allreduce at 64 B; a hang inside the collective "
                   "(raise the timeout if one size legitimately takes longer)"),
    ({0: None, 1: None}, "no progress within 5 s and the group's store does not answer; a rank hung"),
])
def test_watchdog_message(steps, expected):
    from costmodel.calibration import bench
    from costmodel.calibration.bench import _watchdog_message

    plan = bench._plan(BenchConfig(**{**SMALL, "min_bytes": 16, "max_bytes": 512}, collectives=("allreduce",)), 4)
    assert _watchdog_message(steps, plan, 5.0) == expected


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs 2 GPUs for an NCCL run")
def test_nccl_run_on_two_gpus():
    config = BenchConfig(**{**SMALL, "backend": "nccl"}, collectives=BENCH_COLLECTIVES)
    results = run_benchmark(config)
    assert [m.backend for m in results] == ["nccl"] * len(BENCH_COLLECTIVES)
    assert all(r.time_s > 0 for m in results for r in m.rows)


# --------------------------------------------------------------------------- bad input, no torch


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="this machine has GPUs for nccl")
def test_nccl_without_gpus_is_an_input_error():
    with pytest.raises(InputError, match=r"^backend 'nccl' cannot run: "):
        run_benchmark(BenchConfig(backend="nccl"))
    assert _no_children()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("backend", "mpi", r"backend 'mpi' is not supported; choose from auto, nccl, gloo"),
    ("ranks", 1, r"ranks=1 is not an integer in \[2, 4096\]"),
    ("ranks", True, r"ranks=True is not an integer"),
    ("collectives", ("allreduce", "gather"), r"collective 'gather' is not measured by the benchmark"),
    ("collectives", ("allredcue",), r"unknown collective 'allredcue'; did you mean 'allreduce'"),
    ("collectives", (), r"is not a list of names"),
    ("min_bytes", 0, r"min_bytes=0 is not an integer"),
    ("max_bytes", 4, r"max_bytes=4 is below min_bytes=8"),
    ("budget_s", 0, r"budget_s=0 is not a positive number of seconds"),
    ("timeout_s", float("nan"), r"timeout_s=nan is not a positive number"),
    ("max_iters", 2, r"max_iters=2 is not an integer in \[3, "),
    ("warmup", 0, r"warmup=0 is not an integer in \[1, "),
])
def test_bad_config_is_an_input_error(field, value, message):
    with pytest.raises(InputError, match=message):
        BenchConfig(**{field: value})


def test_config_normalises_names():
    config = BenchConfig(backend=" GLOO ", collectives="all_reduce, rs,allreduce", csv_path="x.csv")
    assert (config.backend, config.collectives, config.csv_path) == ("gloo", ("allreduce", "reduce-scatter"),
                                                                      Path("x.csv"))
    assert config.to_dict()["collectives"] == ["allreduce", "reduce-scatter"]


@pytest.mark.parametrize(("text", "expected"), [
    ("8B..256MiB", (8, 256 * MIB)),
    ("8..64", (8, 64)),
    (" 1 KiB .. 1 MB ", (1024, 10**6)),
    ("4KiB", (4096, 4096)),
])
def test_parse_sizes(text, expected):
    assert parse_sizes(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", r"are empty"),
    ("8B..", r"lack a bound"),
    ("1MiB..8B", r"go down"),
    ("8B..1MiB..2MiB", r"more than one '..'"),
    ("0..8", r"not a whole number of bytes"),
    ("1.5B..8B", r"not a whole number of bytes"),
    ("8KB..1MiB", r"KB"),
    ("8 bits..1MiB", r"bit"),
])
def test_parse_sizes_refuses(text, message):
    with pytest.raises(InputError, match=message):
        parse_sizes(text)


def test_sizes_round_up_to_whole_blocks():
    assert bench_sizes("allreduce", 4, 8, 64) == (8, 16, 32, 64)
    assert bench_sizes("reduce-scatter", 4, 8, 64) == (16, 32, 64)
    assert bench_sizes("alltoall", 3, 8, 100) == (12, 24, 36, 72, 108)
    assert bench_sizes("broadcast", 2, 3, 3) == (4,)
    assert bench_sizes("allgather", 8, 256 * MIB, 256 * MIB) == (256 * MIB,)


def test_outlier_rule_drops_slow_tail_and_takes_the_median():
    # MAD is 0 here, so the cut is median + 5 x (1 % of the median) = 1.05
    times = [1.0] * 8 + [1.04, 0.9, 1.06, 50.0]
    median, dropped, low, high, mad = _summarize(times)
    assert (median, dropped, low, high, mad) == (1.0, 2, 0.9, 1.04, 0.0)
    spread = [1.0, 2.0, 3.0, 4.0, 5.0, 100.0]  # median 3.5, MAD 1.5: the cut is 11
    assert _summarize(spread) == (3.0, 1, 1.0, 5.0, 1.5)
    # identical times (timer resolution): nothing is dropped
    assert _summarize([2.0, 2.0, 2.0])[:2] == (2.0, 0)


def test_without_torch_it_is_a_missing_dependency(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.distributed", None)
    with pytest.raises(MissingDependency, match=r"^calibrate run needs PyTorch: pip install 'costmodel-collectives\[calibrate\]'"):
        run_benchmark(BenchConfig(backend="gloo"))


def test_run_needs_a_config():
    with pytest.raises(InputError, match=r"dict is not a BenchConfig"):
        run_benchmark({"ranks": 2})


# --------------------------------------------------------------------------- backend and device choice

_GLOO_HIDDEN = "using gloo, not nccl: this process sees no GPU (CUDA_VISIBLE_DEVICES hides them); "
_CPU_PATH = "the profile measures the CPU path, not the GPUs"


@pytest.mark.parametrize(("seen", "expected"), [
    # one GPU per process (SLURM --gpus-per-task=1, Kubernetes): every rank on its device 0
    (("auto", 1, 5, 8, True, True, False), BackendChoice("nccl", 0)),
    (("nccl", 1, 7, 8, True, True, False), BackendChoice("nccl", 0)),
    # all of a node's GPUs visible: rank i on GPU i (more ranks than GPUs: refused, see test_launch.py)
    (("auto", 8, 5, 8, True, True, False), BackendChoice("nccl", 5)),
    (("auto", 4, 2, 4, True, True, False), BackendChoice("nccl", 2)),
    (("auto", 2, 1, 2, True, True, True), BackendChoice("nccl", 1)),
    # no GPU anywhere: gloo, silently
    (("auto", 0, 0, 2, True, False, True), BackendChoice("gloo", None)),
    (("auto", 0, 0, 2, False, False, False), BackendChoice("gloo", None)),
    (("gloo", 8, 3, 8, True, True, False), BackendChoice("gloo", None)),
    # GPUs exist but this process may not use them: gloo, with a warning
    (("auto", 0, 3, 8, True, True, False), BackendChoice("gloo", None, _GLOO_HIDDEN + _CPU_PATH)),
    (("auto", 2, 0, 2, False, True, False),
     BackendChoice("gloo", None, "using gloo, not nccl: this PyTorch has no NCCL; " + _CPU_PATH)),
    (("auto", 1, 0, 4, True, True, True), BackendChoice("gloo", None, "using gloo, not nccl: the 4 ranks "
                                                      "started here would share 1 visible GPU, which NCCL "
                                                      "refuses; " + _CPU_PATH)),
])
def test_choose_backend(seen, expected):
    """(requested, visible GPUs, LOCAL_RANK, LOCAL_WORLD_SIZE, NCCL built in, GPUs on the machine, spawned)."""
    requested, visible, local_rank, per_node, nccl, machine, shared = seen
    got = choose_backend(requested, visible_gpus=visible, local_rank=local_rank, local_world_size=per_node,
                         nccl_available=nccl, gpus_on_machine=machine, shared_view=shared)
    assert got == expected


@pytest.mark.parametrize(("visible", "nccl", "shared", "message"), [
    (0, True, False, r"^backend 'nccl' cannot run: this process sees no GPU; use backend=gloo, or give"),
    (2, False, False, r"^backend 'nccl' cannot run: this PyTorch has no NCCL; "),
    (1, True, True, r"^backend 'nccl' cannot run: the 2 ranks started here would share 1 visible GPU, "
                    r"which NCCL refuses; use backend=gloo, or fewer ranks$"),
])
def test_nccl_that_cannot_run_is_an_input_error(visible, nccl, shared, message):
    with pytest.raises(InputError, match=message):
        choose_backend("nccl", visible_gpus=visible, local_rank=0, local_world_size=2, nccl_available=nccl,
                       shared_view=shared)


def test_no_backend_at_all_is_an_input_error():
    with pytest.raises(InputError, match=r"^backend 'gloo' is not in this PyTorch build"):
        choose_backend("gloo", visible_gpus=0, local_rank=0, local_world_size=2, nccl_available=False,
                       gloo_available=False)
    with pytest.raises(InputError, match=r"^no backend can run: this PyTorch has no NCCL, and this PyTorch"):
        choose_backend("auto", visible_gpus=0, local_rank=0, local_world_size=2, nccl_available=False,
                       gloo_available=False)


def test_torchrun_rank_takes_local_rank_modulo_visible_gpus(monkeypatch):
    """The device decision under torchrun with one GPU per process, with CUDA faked (no GPU needed)."""
    from costmodel.calibration import bench

    chosen: list[int] = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "set_device", chosen.append)
    monkeypatch.setattr(dist, "is_nccl_available", lambda: True)
    choice = bench._resolve_backend(torch, dist, "auto", local_rank=6, local_world_size=8, shared_view=False)
    assert choice == BackendChoice("nccl", 0)
    assert bench._device(torch, choice.device) == torch.device("cuda", 0)
    assert chosen == [0]


def test_auto_warns_when_gpus_are_hidden(monkeypatch):
    from costmodel.calibration import bench

    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setattr(dist, "is_nccl_available", lambda: True)
    monkeypatch.setattr(bench, "_machine_has_gpus", lambda: True)
    with pytest.warns(bench.BackendWarning, match="CUDA_VISIBLE_DEVICES hides them"):
        choice = bench._resolve_backend(torch, dist, "auto", local_rank=0, local_world_size=2, shared_view=True)
    assert choice.backend == "gloo"


def test_every_rank_that_differs_is_named():
    from types import SimpleNamespace

    from costmodel.calibration import bench

    config = BenchConfig(**SMALL, collectives=("allreduce",))
    plan = bench._plan(config, 4)
    views = [bench._agreement(config, plan, "nccl"), bench._agreement(config, plan, "gloo"),
             bench._agreement(config, plan, "nccl"), bench._agreement(config, plan, "gloo", skew=True)]

    def all_gather_object(out, mine):
        out[:] = views

    comm = SimpleNamespace(world=4, dist=SimpleNamespace(all_gather_object=all_gather_object))
    with pytest.raises(CalibrationError, match=r"^ranks 1, 3 disagree with rank 0 on backend, sizes, timing; "):
        bench._agree(comm, views[0])
    views[1:] = [views[0]] * 3
    bench._agree(comm, views[0])  # all the same: no error


def test_ctrl_c_stops_every_rank_and_says_what_was_kept(tmp_path):
    from costmodel.calibration.bench import Interrupted

    csv_path = tmp_path / "kept.csv"

    def press_ctrl_c(step: Progress) -> None:
        if step.index == 3:
            raise KeyboardInterrupt

    config = BenchConfig(**SMALL, collectives=("allreduce",), csv_path=csv_path)
    with pytest.raises(Interrupted) as caught:
        run_benchmark(config, progress=press_ctrl_c)
    assert str(caught.value) == f"interrupted; 3 sizes kept in {csv_path}"
    assert _no_children()
    assert [r.n_bytes for r in read_csv(csv_path).rows] == [8, 16, 32]


def test_batched_timing_on_gloo_is_recorded_in_the_csv(tmp_path):
    csv_path = tmp_path / "batched.csv"
    config = BenchConfig(**SMALL, collectives=("allreduce",), csv_path=csv_path, timing="batched")
    (m,) = run_benchmark(config)
    lines = csv_path.read_text().splitlines()
    assert "gloo, p=2, batched timing" in lines[0]
    assert lines[1].split(",")[-1] == "timing"
    assert {line.split(",")[-1] for line in lines[2:]} == {"batched"}
    assert [r.n_bytes for r in read_csv(csv_path).rows] == [r.n_bytes for r in m.rows]
    assert all(0 < r.time_s < 1 for r in m.rows)
    # a CSV from before the timing column reads the same
    old = tmp_path / "old.csv"
    old.write_text("\n".join([lines[0], *(line.rsplit(",", 1)[0] for line in lines[1:])]) + "\n")
    assert read_csv(old).rows == read_csv(csv_path).rows
    assert fit(read_csv(old)).alpha_s == fit(read_csv(csv_path)).alpha_s
    # per-iteration is the default on CPUs
    assert BenchConfig().timing == "auto"


def test_batched_sample_is_the_batch_time_divided_by_its_count(monkeypatch):
    """With a fake clock: one sample of 4 back-to-back operations counts as total / 4."""
    from types import SimpleNamespace

    from costmodel.calibration import bench

    clock = iter([10.0, 10.8])
    calls: list[int] = []
    comm = bench._Comm.__new__(bench._Comm)
    comm.cuda = False
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    assert comm.timed_batch(lambda: calls.append(1), 4) == pytest.approx(0.2)
    assert calls == [1, 1, 1, 1]


@pytest.mark.parametrize(("timing", "backend", "expected"), [
    ("auto", "nccl", "batched"), ("auto", "gloo", "per-iteration"),
    ("per-iteration", "nccl", "per-iteration"), ("batched", "gloo", "batched"),
])
def test_resolved_timing(timing, backend, expected):
    from costmodel.calibration.bench import resolved_timing

    assert resolved_timing(timing, backend) == expected


def test_unknown_timing_is_an_input_error():
    with pytest.raises(InputError, match=r"^timing 'single' is not supported; choose from auto, batched, "):
        BenchConfig(timing="single")
