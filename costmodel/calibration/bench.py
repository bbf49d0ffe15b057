"""Measure collective times over torch.distributed: the benchmark behind ``costmodel calibrate run``.

:func:`benchmark` times all-reduce, all-gather, reduce-scatter, broadcast,
all-to-all and a point-to-point ping-pong over a sweep of sizes and returns one
:class:`~costmodel.calibration.logs.Measurements` per collective, ready for
:func:`costmodel.calibration.fit.fit`, with the spread of every size
(:class:`~costmodel.calibration.spread.Spread`); :func:`run_benchmark` returns the
measurements alone.  It needs PyTorch (the CPU build is enough for the ``gloo``
backend; ``nccl`` needs one GPU per rank).

Sizes
-----
n follows costmodel's convention (nccl-tests' size column S): all-reduce and
broadcast: the vector each rank holds; reduce-scatter: each rank's whole input
(it ends with n/p); all-gather: the whole gathered output (each rank gives
n/p); all-to-all: each rank's send buffer (p blocks of n/p); pt2pt: one
message of n bytes.  The sweep is min, 2·min, 4·min, ... up to max (and max
itself when it is not on that ladder).  Data are float32, so n is rounded up to
a multiple of 4 bytes, and of 4·p bytes for all-gather, reduce-scatter and
all-to-all; the n actually moved is the one recorded (duplicates after
rounding are measured once).

Placement
---------
As nccl-tests prints an out-of-place and an in-place column group [1]_, each size is timed
out of place (output and input separate) and in place (one buffer) wherever torch.distributed
offers both (:data:`PLACEMENTS`), out-of-place first: all-gather in place gathers into an output
whose block ``rank`` is the input, reduce-scatter in place reduces into block ``rank`` of its
input (NCCL's in-place forms, which skip a copy).  ``all_reduce`` and ``broadcast`` work on one
tensor, so they are timed in place only; all-to-all out of place only (nccl-tests has no valid
in-place all-to-all check); the ping-pong sends from one buffer and receives into another.
The CSV's ``in_place`` column says which (``true``, ``false``);
:func:`~costmodel.calibration.fit.fit` takes the out-of-place rows by default, the in-place ones
where a collective has no other.

Sweeps
------
``repeat`` runs the whole sweep that many times, every collective, size and placement in the
order of one sweep, then again, as nccl-tests' ``-N`` does [1]_; each row of the CSV carries its
``sweep`` (1, 2, ...).  Each sweep's row is fitted like any other (the fit sees ``repeat`` points
per size); the spread of a size is taken over the samples of all its sweeps.

Method
------
* Before anything is timed the ranks all-gather their backend, sizes,
  collectives, placements, sweeps, budget and iteration bounds; if any rank differs from rank 0,
  every rank stops with :class:`~costmodel.errors.CalibrationError` naming the
  ranks and what differs.
* The process group and its communicators are set up, and one all-reduce (and
  one ping-pong) run, before any timing: set-up is excluded.
* Per size and placement: the buffers are allocated and ``warmup`` untimed iterations run
  (each a ``barrier()`` and the operation).  The timed iterations then fill
  ``budget_s``: a first batch sized to half the budget at the slowest warm-up
  iteration's pace (at least ``min_iters``), then up to three more batches sized
  from the pace measured so far, until the budget or ``max_iters`` is reached.
  Every rank runs the same count, since each decision uses the slowest rank's
  clock (an all-reduce MAX between batches, outside the timed region).
* Timing (``timing``; the CSV's ``timing`` column and source line say which):
  ``per-iteration`` (the default on CPUs, gloo): each timed iteration is
  ``barrier()``, then the operation alone, timed by ``time.perf_counter``
  around the blocking call (CUDA events around it on GPUs: the host's launch
  is included).  ``batched`` (the default on GPUs, nccl; nccl-tests' method):
  each sample is ``barrier()``, then a batch of iterations enqueued back to
  back between two CUDA events (``perf_counter`` on CPUs), its time divided by
  the batch; the batch is sized so that ``min_iters`` samples fill half the
  budget at the warm-up's pace, and the iteration count is the samples times the batch.
* After the loop, outside the timed region, one all-reduce MAX of the per-rank
  times gives each sample's time as its slowest rank saw it.  For pt2pt,
  rank 0 sends n bytes to the last rank and receives them back (the other ranks
  idle); its round trip halved is the one-way time.
* Outliers: samples slower than median + 5·MAD (median absolute deviation,
  floored at 1 % of the median so that timer-resolution ties do not cut half
  the sample) are dropped; the reported time, ``time_s``, the one fitted, is the
  **median** of the rest.  The CSV also records the iteration count, the number
  dropped, the fastest and slowest kept sample and the MAD, the mean, p50 and
  p95 of all the samples, outliers included (:mod:`~costmodel.calibration.spread`),
  with nccl-tests' algbw and busbw.

Every size is appended to ``csv_path`` and flushed as soon as it is measured,
so an interrupted run keeps what it measured (costmodel's CSV, which
:func:`~costmodel.calibration.logs.read_csv` reads; the extra columns are
ignored there).  The columns, in order (:data:`BENCH_CSV_COLUMNS`): ``collective``,
``backend``, ``p``, ``n_bytes``, ``time_s`` (the median after outliers), ``in_place``,
``sweep``, ``iterations`` (timed), ``outliers`` (samples dropped), ``min_time_s`` and
``max_time_s`` (of the kept samples), ``mad_s``, ``mean_s``, ``p50_s`` and ``p95_s`` (of all the
samples), ``algbw_bytes_per_s`` (n / time_s), ``busbw_bytes_per_s`` (algbw × nccl-tests' bus
factor) and ``timing``.

Processes
---------
Run as a plain program, :func:`run_benchmark` spawns ``ranks`` processes on
this machine (``multiprocessing`` "spawn" context, rendezvous on 127.0.0.1 at
a free port).  Rank 0 sends each result through a queue; the parent writes the
CSV and reports :class:`Progress`.  A watchdog in the parent ends the run with
:class:`~costmodel.errors.CalibrationError` when a rank exits with an error or
no message arrives for ``timeout_s`` (a hung rank; until every rank has joined
the group, at least 60 s, for slow imports), and terminates every child;
the process group's own timeout, ``timeout_s`` + 10 s, is the backstop.

Spawning uses the "spawn" start method, which re-imports the calling script:
a script that calls :func:`run_benchmark` needs the usual
``if __name__ == "__main__":`` guard (``costmodel`` and ``python -m
costmodel`` have it).  On Linux a spawned rank also dies with its parent.

Started by a launcher as one rank of several (torchrun, ``srun``, ``mpirun`` of Open MPI or
MVAPICH2, the Hydra ``mpiexec`` of MPICH and Intel MPI, Cray MPICH's ``mpiexec``: the variables are
read by :func:`~costmodel.calibration.launch.launch_from_env`), nothing is spawned: this process is
one rank, ``ranks`` is ignored, rank 0 writes the CSV and returns the results and the other ranks
return ``()``.  torchrun's ranks meet at its own store; the others at ``MASTER_ADDR`` and
``MASTER_PORT`` (default 29500), which the launcher does not set: a rank without ``MASTER_ADDR``
stops with one :class:`~costmodel.errors.InputError` saying so.  The group's timeout is
``timeout_s`` + 10 s, and a watchdog thread in every rank posts the step it enters in the group's
store: when a rank's step has not changed for ``timeout_s`` it prints one ``error:`` line naming
the ranks behind the others (the hung ones) and exits with code 4, and the launcher then ends the
job.  A program that has already initialised the default process group is measured on that group
in the same way (without the watchdog: the group is the program's).  On two nodes of 8 GPUs, run
on each node::

    torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint HOST:29500 \\
        -m costmodel calibrate run --backend nccl --out profile.toml

with HOST the first node's address (the rendezvous store listens on port 29500 there).  A
launched rank's GPU (:func:`choose_backend`): its only visible GPU when it sees one (one GPU per
task: ``CUDA_VISIBLE_DEVICES`` isolation, ``srun --gpus-per-task=1``), else GPU ``local_rank``
when the node's ranks are no more than its visible GPUs; more ranks than GPUs are refused before
anything starts.  ``--backend auto`` uses nccl whenever the rank has a GPU, else gloo, with a
:class:`BackendWarning` when the machine has GPUs.

References
----------
.. [1] NVIDIA, nccl-tests: out-of-place and in-place column groups, ``-N`` to run the sweep
   several times.

Examples
--------
>>> parse_sizes("8B..256MiB")
(8, 268435456)
>>> bench_sizes("allgather", 3, 8, 64)
(12, 24, 36, 72)
>>> BenchConfig(collectives=("all_reduce", "p2p")).collectives
('allreduce', 'pt2pt')
"""

from __future__ import annotations

import csv
import math
import os
import socket
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from costmodel._files import cannot_write
from costmodel._json import JSONFields, MeasuredFields
from costmodel.calibration.launch import DEFAULT_PORT, LOCAL_RANK_VARIABLES, Launch, launch_from_env
from costmodel.calibration.logs import CSV_COLUMNS, PT2PT, Measurements, Row, bus_factor, canonical_collective
from costmodel.calibration.spread import Spread, spread_of
from costmodel.calibration.supervisor import STARTUP_S, die_with_parent, free_port, stop, supervise
from costmodel.errors import CalibrationError, InputError, MissingDependency
from costmodel.references import NCCL_TESTS, Citation
from costmodel.validate import whole

__all__ = [
    "BACKENDS",
    "BENCH_COLLECTIVES",
    "BENCH_CSV_COLUMNS",
    "CITED",
    "OUTLIER_MADS",
    "PLACEMENTS",
    "TIMINGS",
    "BackendChoice",
    "BackendWarning",
    "BenchConfig",
    "BenchRun",
    "Interrupted",
    "Progress",
    "bench_sizes",
    "benchmark",
    "choose_backend",
    "chosen_backend",
    "parse_sizes",
    "resolved_timing",
    "run_benchmark",
]

BENCH_COLLECTIVES = ("allreduce", "allgather", "reduce-scatter", "broadcast", "alltoall", PT2PT)
"""The collectives the benchmark can time, in the order of a full run."""

BACKENDS = ("auto", "nccl", "gloo")
"""Accepted values of :attr:`BenchConfig.backend`."""

TIMINGS = ("auto", "batched", "per-iteration")
"""Accepted values of :attr:`BenchConfig.timing` (``auto``: batched on GPUs, per-iteration on CPUs)."""

BENCH_CSV_COLUMNS = (*CSV_COLUMNS, "sweep", "iterations", "outliers", "min_time_s", "max_time_s", "mad_s",
                     "mean_s", "p50_s", "p95_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "timing")
"""The columns of the CSV the benchmark writes: costmodel's CSV plus per-size statistics."""

PLACEMENTS: dict[str, tuple[bool, ...]] = {
    "allreduce": (True,),  # dist.all_reduce reduces one tensor in place
    "allgather": (False, True),
    "reduce-scatter": (False, True),
    "broadcast": (True,),  # dist.broadcast sends and receives in one tensor
    "alltoall": (False,),  # nccl-tests has no valid in-place all-to-all check
    PT2PT: (False,),  # sent from one buffer, received into another
}
"""The placements each collective is timed in, in order: False out of place, True in place."""

CITED: tuple[Citation, ...] = (NCCL_TESTS,)

MAX_REPEAT = 1000
"""The most sweeps :attr:`BenchConfig.repeat` may ask for."""

OUTLIER_MADS = 5
"""Iterations slower than median + OUTLIER_MADS·MAD are dropped before the median is taken."""

_MAD_FLOOR = 0.01
"""The MAD used for the cut is at least this fraction of the median."""

_DIVISIBLE = frozenset({"allgather", "reduce-scatter", "alltoall"})
"""Collectives whose n must split into p float32 blocks."""

_FLOAT_BYTES = 4
_MAX_RANKS = 4096
_MAX_BYTES = 1 << 40
_INSTALL_HINT = ("calibrate run needs PyTorch: pip install 'costmodel-collectives[calibrate]' "
                 "(the CPU-only build is enough for gloo: "
                 "pip install torch --index-url https://download.pytorch.org/whl/cpu)")
_FAIL_EXIT_CODE = 3
_BACKSTOP_S = 10.0
_MAX_CHUNKS = 4
_HANG_EXIT_CODE = 4


@dataclass(frozen=True)
class BenchConfig(MeasuredFields):
    """What :func:`run_benchmark` measures, and how long it may take.

    Attributes
    ----------
    ranks : int
        Processes to spawn on this machine (ignored under torchrun).
    backend : str
        ``"auto"`` (nccl when each rank gets a GPU, else gloo; see
        :func:`choose_backend`), ``"nccl"`` or ``"gloo"``.
    collectives : tuple of str
        Any of :data:`BENCH_COLLECTIVES` (aliases accepted, or one comma-separated string).
    min_bytes, max_bytes : int
        The sweep: min, 2·min, 4·min, ... up to max (see the module docstring).
    budget_s : float
        Time spent timing each size of each collective, per placement (after its warm-up).
    min_iters, max_iters : int
        Bounds on the timed iterations per size.
    warmup : int
        Untimed iterations per size (at least 1: the last one sizes the loop).
    timeout_s : float
        A rank that fails, or no result for this long, ends the run with
        :class:`~costmodel.errors.CalibrationError`.
    csv_path : Path or None
        Where every measured size is appended as soon as it is measured.
    timing : str
        ``"batched"`` (iterations enqueued back to back between two timers,
        the total divided by their count, as nccl-tests does), ``"per-iteration"``
        (each iteration timed alone, after a barrier: includes the launch) or
        ``"auto"``: batched on GPUs, per-iteration on CPUs.
    repeat : int
        How many times the whole sweep runs (nccl-tests' ``-N``); every sweep's rows are kept.

    The three last fields are test hooks, not part of the API: ``_fail_rank``
    makes that rank exit at once with code 3, and ``_hang_rank`` makes it sleep
    forever, when it reaches the second size of the sweep; ``_skew_rank``
    makes that rank's sizes differ from the others' (the agreement check).

    Raises
    ------
    InputError
        At construction, for any value out of range or unknown.
    """

    ranks: int = 2
    backend: str = "auto"
    collectives: tuple[str, ...] = BENCH_COLLECTIVES
    min_bytes: int = 8
    max_bytes: int = 256 * 2**20
    budget_s: float = 0.2
    min_iters: int = 3
    max_iters: int = 1000
    warmup: int = 2
    timeout_s: float = 120.0
    csv_path: Path | None = None
    timing: str = "auto"
    repeat: int = 1
    _fail_rank: int | None = field(default=None, repr=False, compare=False)
    _hang_rank: int | None = field(default=None, repr=False, compare=False)
    _skew_rank: int | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        _integer(self.ranks, "ranks", low=2, high=_MAX_RANKS, hint="give the number of processes, at least 2")
        backend = self.backend.strip().lower() if isinstance(self.backend, str) else self.backend
        if backend not in BACKENDS:
            raise InputError(f"backend {self.backend!r} is not supported; choose from {', '.join(BACKENDS)}")
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "collectives", _collectives(self.collectives))
        timing = self.timing.strip().lower() if isinstance(self.timing, str) else self.timing
        if timing not in TIMINGS:
            raise InputError(f"timing {self.timing!r} is not supported; choose from {', '.join(TIMINGS)}")
        object.__setattr__(self, "timing", timing)
        _integer(self.min_bytes, "min_bytes", low=1, high=_MAX_BYTES, hint="give a size of at least 1 B")
        _integer(self.max_bytes, "max_bytes", low=1, high=_MAX_BYTES, hint="give a size of at most 1 TiB")
        if self.max_bytes < self.min_bytes:
            raise InputError(f"max_bytes={self.max_bytes} is below min_bytes={self.min_bytes}; "
                             "give the sizes as MIN..MAX")
        _positive(self.budget_s, "budget_s")
        _positive(self.timeout_s, "timeout_s")
        _integer(self.min_iters, "min_iters", low=1, high=10**7, hint="time at least one iteration")
        _integer(self.max_iters, "max_iters", low=self.min_iters, high=10**7,
                 hint=f"give at least min_iters={self.min_iters}")
        _integer(self.warmup, "warmup", low=1, high=10**6, hint="the last warm-up iteration sizes the loop")
        _integer(self.repeat, "repeat", low=1, high=MAX_REPEAT, hint="run the sweep at least once")
        if self.csv_path is not None and not isinstance(self.csv_path, Path):
            if not isinstance(self.csv_path, str) or not self.csv_path:
                raise InputError(f"csv_path={self.csv_path!r} is not a file path; give a path or None")
            object.__setattr__(self, "csv_path", Path(self.csv_path))


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress(MeasuredFields):
    """One measured size, as reported to the ``progress`` callback of :func:`run_benchmark`.

    ``index`` counts the sizes measured so far (1 to ``total``, over all
    collectives, placements and sweeps); ``in_place`` is the placement, ``sweep`` the sweep
    (from 1); ``time_s`` is the size's median time (slowest rank),
    ``iterations`` how many were timed, ``elapsed_s`` the time since the start.
    """

    collective: str
    n_bytes: int
    in_place: bool
    sweep: int
    index: int
    total: int
    time_s: float
    iterations: int
    elapsed_s: float


class _Point(NamedTuple):
    """One step of the plan: a collective at a size, in one placement, in one sweep (from 1)."""

    collective: str
    n_bytes: int
    in_place: bool
    sweep: int


@dataclass(frozen=True, slots=True)
class _Step:
    """The statistics of one measured step (sent from rank 0 to the parent), its samples with them."""

    index: int
    point: _Point
    time_s: float
    iterations: int
    outliers: int
    min_time_s: float
    max_time_s: float
    mad_s: float
    samples: tuple[float, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchRun(JSONFields):
    """What :func:`benchmark` measured: one Measurements per collective and the spread of each size.

    ``spreads`` has one :class:`~costmodel.calibration.spread.Spread` per collective, size and
    placement, in the order of a sweep, over the samples of every sweep (``repeat`` of them).
    Under a launcher, ranks other than 0 get an empty run.
    """

    measurements: tuple[Measurements, ...] = ()
    spreads: tuple[Spread, ...] = ()
    backend: str | None = None
    timing: str | None = None
    repeat: int = 1


# --------------------------------------------------------------------------- validation and sizes


def _integer(value: Any, name: str, *, low: int, high: int, hint: str) -> int:
    return whole(value, name, low=low, high=high, expected=f"an integer in [{low}, {high}]", hint=hint)


def _positive(value: Any, name: str) -> float:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        raise InputError(f"{name}={value!r} is not a positive number of seconds; give e.g. 0.1")
    return float(value)


def _collectives(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, Sequence) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(f"collectives={value!r} is not a list of names; "
                         f"choose from {', '.join(BENCH_COLLECTIVES)}")
    names: list[str] = []
    for raw in value:
        name = canonical_collective(raw)
        if name not in BENCH_COLLECTIVES:
            raise InputError(f"collective {raw!r} is not measured by the benchmark; "
                             f"choose from {', '.join(BENCH_COLLECTIVES)}")
        if name not in names:
            names.append(name)
    return tuple(names)


def parse_sizes(text: str) -> tuple[int, int]:
    """The range ``MIN..MAX`` (or one size) as (min_bytes, max_bytes).

    >>> parse_sizes("8B..256MiB"), parse_sizes("1 KiB .. 1 MiB"), parse_sizes("64")
    ((8, 268435456), (1024, 1048576), (64, 64))

    Raises
    ------
    InputError
        For a malformed size, a fractional or zero size, or MIN above MAX.
    """
    from costmodel.units import parse_size

    if not isinstance(text, str) or not text.strip():
        raise InputError(f"sizes {text!r} are empty; give MIN..MAX, e.g. 8B..256MiB")
    parts = text.split("..")
    if len(parts) > 2:
        raise InputError(f"sizes {text!r} have more than one '..'; give MIN..MAX, e.g. 8B..256MiB")
    values = []
    for part in parts:
        if not part.strip():
            raise InputError(f"sizes {text!r} lack a bound; give MIN..MAX, e.g. 8B..256MiB")
        n = parse_size(part.strip())
        if n.denominator != 1 or not 1 <= n <= _MAX_BYTES:
            raise InputError(f"size {part.strip()!r} is not a whole number of bytes in [1 B, 1 TiB]; "
                             "give e.g. 8B..256MiB")
        values.append(int(n))
    low, high = values[0], values[-1]
    if high < low:
        raise InputError(f"sizes {text!r} go down; give MIN..MAX with MIN <= MAX")
    return low, high


def bench_sizes(collective: str, p: int, min_bytes: int, max_bytes: int) -> tuple[int, ...]:
    """The n (bytes) measured for *collective* at *p* ranks: the ×2 ladder, rounded up and deduplicated.

    >>> bench_sizes("allreduce", 2, 8, 64), bench_sizes("alltoall", 8, 8, 64)
    ((8, 16, 32, 64), (32, 64))
    >>> bench_sizes("pt2pt", 2, 1, 10)
    (4, 8, 12)
    """
    name = canonical_collective(collective)
    quantum = _FLOAT_BYTES * p if name in _DIVISIBLE else _FLOAT_BYTES
    ladder = []
    n = min_bytes
    while n <= max_bytes:
        ladder.append(n)
        n *= 2
    if ladder[-1] != max_bytes:
        ladder.append(max_bytes)
    sizes: list[int] = []
    for n in ladder:
        rounded = -(-n // quantum) * quantum
        if not sizes or rounded > sizes[-1]:
            sizes.append(rounded)
    return tuple(sizes)


def resolved_timing(timing: str, backend: str) -> str:
    """The timing method used: *timing*, or for ``auto`` batched on nccl (GPUs) and per-iteration on gloo.

    >>> resolved_timing("auto", "nccl"), resolved_timing("auto", "gloo"), resolved_timing("batched", "gloo")
    ('batched', 'per-iteration', 'batched')
    """
    if timing != "auto":
        return timing
    return "batched" if backend == "nccl" else "per-iteration"


def _plan(config: BenchConfig, p: int) -> list[_Point]:
    """Every step of the run: each sweep in turn, each collective, size and placement in order."""
    return [_Point(c, n, in_place, sweep) for sweep in range(1, config.repeat + 1) for c in config.collectives
            for n in bench_sizes(c, p, config.min_bytes, config.max_bytes) for in_place in PLACEMENTS[c]]


def _size_text(n: int) -> str:
    for unit, factor in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor:
            return f"{n / factor:.4g} {unit}"
    return f"{n} B"


def _step_text(plan: Sequence[_Point], index: int | None) -> str:
    """``allgather at 16 B in place (sweep 2 of 3)``: the placement where the collective has two,
    the sweep where there are several."""
    if index is None:
        return "start-up"
    if index >= len(plan):
        return "shut-down"
    point = plan[index]
    both = len(PLACEMENTS[point.collective]) > 1
    where = (" in place" if point.in_place else " out of place") if both else ""
    sweeps = plan[-1].sweep
    sweep = f" (sweep {point.sweep} of {sweeps})" if sweeps > 1 else ""
    return f"{point.collective} at {_size_text(point.n_bytes)}{where}{sweep}"


def _summarize(times: Sequence[float]) -> tuple[float, int, float, float, float]:
    """(median, dropped, min, max, MAD) after dropping iterations above median + 5·MAD."""
    median = statistics.median(times)
    mad = statistics.median(abs(t - median) for t in times)
    cut = median + OUTLIER_MADS * max(mad, _MAD_FLOOR * median)
    kept = [t for t in times if t <= cut]
    return statistics.median(kept), len(times) - len(kept), min(kept), max(kept), mad


# --------------------------------------------------------------------------- torch


def _import_torch() -> tuple[Any, Any]:
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        raise MissingDependency(_INSTALL_HINT) from None
    if not dist.is_available():
        raise MissingDependency("this PyTorch build has no torch.distributed; "
                                "install a build with it: pip install 'costmodel-collectives[calibrate]'")
    return torch, dist


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_benchmark`: ``kept`` sizes were measured and are in ``csv_path``."""

    def __init__(self, kept: int, csv_path: Path | None) -> None:
        super().__init__(kept, csv_path)
        self.kept, self.csv_path = kept, csv_path

    def __str__(self) -> str:
        where = f" in {self.csv_path}" if self.csv_path is not None else ""
        return f"interrupted; {self.kept} size{'s' if self.kept != 1 else ''} kept{where}"


class BackendWarning(UserWarning):
    """``auto`` fell back to gloo on a machine that has GPUs (emitted with :mod:`warnings`)."""


@dataclass(frozen=True, slots=True)
class BackendChoice(JSONFields):
    """What :func:`choose_backend` decided for one rank.

    ``device`` is the CUDA device index this rank uses (None for gloo);
    ``warning`` is the reason ``auto`` fell back to gloo when GPUs exist, else None.
    """

    backend: str
    device: int | None
    warning: str | None = None


def choose_backend(requested: str, *, visible_gpus: int, local_rank: int | None,
                   local_world_size: int | None, nccl_available: bool, gloo_available: bool = True,
                   gpus_on_machine: bool = False, shared_view: bool = False) -> BackendChoice:
    """The backend and CUDA device of one rank, from what it can see (pure; no torch call).

    ``auto`` picks nccl whenever NCCL is built in and the rank can have a GPU of its own; gloo
    needs none.  Where NCCL cannot run, ``auto`` falls back to gloo only when this rank sees no
    GPU or when the decision is taken once for every rank (``shared_view``); ``nccl`` stops.

    The device, for ranks a launcher started (``local_rank`` among ``local_world_size`` ranks on
    this node, either None where the launcher does not say):

    - one visible GPU: device 0, whatever the local rank.  That is one GPU per task
      (``CUDA_VISIBLE_DEVICES`` set per task by SLURM's ``--gpus-per-task 1``, or by Kubernetes):
      local rank 3 with one visible GPU is the fourth task's own GPU;
    - as many visible GPUs as ranks on the node, or more: device ``local_rank`` (all of a node's
      GPUs visible to every rank, rank i on GPU i);
    - more ranks on the node than visible GPUs, but more than one GPU: refused, for ``auto`` too
      (the ranks would have to share GPUs, which NCCL refuses, and a fall-back to gloo decided
      rank by rank could split the job between two backends).  A local rank at or past the
      visible GPUs shows the ranks outnumber them even where the local size is unknown.

    With ``shared_view`` (ranks spawned here, all seeing the same GPUs) rank i takes GPU i and
    nccl needs one GPU per rank.

    >>> choose_backend("auto", visible_gpus=1, local_rank=3, local_world_size=8, nccl_available=True)
    BackendChoice(backend='nccl', device=0, warning=None)
    >>> choose_backend("auto", visible_gpus=8, local_rank=5, local_world_size=8, nccl_available=True).device
    5

    Raises
    ------
    InputError
        ``nccl`` without NCCL or without a GPU (per rank, with ``shared_view``); any backend but
        gloo when launched ranks would share GPUs, or several GPUs are visible and the local rank
        is unknown; ``gloo`` in a build without it.
    """
    if requested == "gloo":
        if not gloo_available:
            raise InputError("backend 'gloo' is not in this PyTorch build; use backend=nccl")
        return BackendChoice("gloo", None)
    if shared_view:
        ranks = local_world_size or 1
        device = local_rank or 0
        why = None if visible_gpus >= ranks else (
            f"the {ranks} ranks started here would share {visible_gpus} visible GPU"
            f"{'s' if visible_gpus != 1 else ''}, which NCCL refuses")
    else:
        device, why = _launched_device(visible_gpus, local_rank, local_world_size)
    if not nccl_available:
        why = "this PyTorch has no NCCL"
    elif visible_gpus == 0:
        why = ("this process sees no GPU (CUDA_VISIBLE_DEVICES hides them)" if gpus_on_machine
               else "this process sees no GPU")
    if why is None:
        return BackendChoice("nccl", device)
    sharing = nccl_available and visible_gpus > 0
    if requested == "nccl" or (sharing and not shared_view):
        hint = ("use backend=gloo, or fewer ranks" if shared_view and visible_gpus
                else _SHARE_HINT if sharing else "use backend=gloo, or give each process a GPU")
        raise InputError(f"backend '{requested}' cannot run NCCL: {why}; {hint}" if requested == "auto"
                         else f"backend 'nccl' cannot run: {why}; {hint}")
    if not gloo_available:
        raise InputError(f"no backend can run: {why}, and this PyTorch has no gloo")
    warning = None
    if visible_gpus or gpus_on_machine:
        warning = f"using gloo, not nccl: {why}; the profile measures the CPU path, not the GPUs"
    return BackendChoice("gloo", None, warning)


_SHARE_HINT = ("start at most as many ranks per node as GPUs, give each rank its own GPU "
               "(srun --gpus-per-task=1, or CUDA_VISIBLE_DEVICES per rank), or use backend=gloo")


def _launched_device(visible: int, local_rank: int | None, local_size: int | None) -> tuple[int, str | None]:
    """(device, why NCCL cannot run or None) for a rank a launcher started (see :func:`choose_backend`)."""
    if visible <= 1:
        return 0, None  # one GPU per task (or none: said by the caller)
    if local_rank is None:
        return 0, (f"this process sees {visible} GPUs and its launcher gives no local rank to choose one "
                   f"(none of {', '.join(LOCAL_RANK_VARIABLES)} is set)")
    ranks = max(local_size or 0, local_rank + 1)
    if ranks > visible:
        known = f"the {ranks} ranks" if local_size else f"at least {ranks} ranks (local rank {local_rank})"
        return 0, f"{known} on this node would share its {visible} visible GPUs, which NCCL refuses"
    return local_rank, None


def _machine_has_gpus() -> bool:
    """Whether NVIDIA or AMD GPU device files exist, whatever this process is allowed to see."""
    dev = Path("/dev")
    try:
        return any(dev.glob("nvidia[0-9]*")) or (dev / "kfd").exists()
    except OSError:
        return False


def _resolve_backend(torch: Any, dist: Any, backend: str, *, local_rank: int | None,
                     local_world_size: int | None, shared_view: bool) -> BackendChoice:
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    choice = choose_backend(backend, visible_gpus=gpus, local_rank=local_rank,
                            local_world_size=local_world_size, nccl_available=dist.is_nccl_available(),
                            gloo_available=dist.is_gloo_available(),
                            gpus_on_machine=gpus > 0 or _machine_has_gpus(), shared_view=shared_view)
    if choice.warning is not None:
        warnings.warn(choice.warning, BackendWarning, stacklevel=3)
    return choice


class _Comm:
    """One rank's view: buffers, the timed operations, barrier and the MAX reduction."""

    def __init__(self, torch: Any, dist: Any, *, backend: str, rank: int, world: int, device: Any) -> None:
        self.torch, self.dist, self.backend = torch, dist, backend
        self.rank, self.world, self.device = rank, world, device
        self.cuda = device.type == "cuda"
        self._gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        self._scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor

    def barrier(self) -> None:
        if self.cuda:
            self.dist.barrier(device_ids=[self.device.index])
        else:
            self.dist.barrier()

    def _zeros(self, n_bytes: int) -> Any:
        return self.torch.zeros(n_bytes // _FLOAT_BYTES, dtype=self.torch.float32, device=self.device)

    def operation(self, collective: str, n_bytes: int, in_place: bool) -> Callable[[], None]:
        """The blocking call that moves *n_bytes* in *collective*, in place or out of place (one of
        :data:`PLACEMENTS`; buffers allocated here, untimed)."""
        dist, p = self.dist, self.world
        if collective == PT2PT:
            return self._ping_pong(self._zeros(n_bytes), self._zeros(n_bytes))
        if collective == "allreduce":
            buf = self._zeros(n_bytes)
            return lambda: dist.all_reduce(buf)
        if collective == "broadcast":
            buf = self._zeros(n_bytes)
            return lambda: dist.broadcast(buf, src=0)
        if collective == "alltoall":
            out, inp = self._zeros(n_bytes), self._zeros(n_bytes)
            return lambda: dist.all_to_all_single(out, inp)
        # (output, input) with costmodel's n the larger of the two; in place, the smaller one is the
        # block of the larger at this rank's offset (NCCL's in-place all-gather and reduce-scatter)
        whole, block = self._zeros(n_bytes), n_bytes // p // _FLOAT_BYTES
        part = whole.narrow(0, self.rank * block, block) if in_place else self._zeros(n_bytes // p)
        if collective == "allgather":
            return lambda: self._gather(whole, part)
        return lambda: self._scatter(part, whole)

    def _ping_pong(self, sent: Any, received: Any) -> Callable[[], None]:
        """Rank 0 sends *sent* to the last rank and receives it back into *received*; the other
        ranks idle.

        The last rank, not rank 1: under a launcher on several nodes it sits on another node, so
        the ping-pong measures the network between nodes, the link a cluster's collectives
        are slowest on (on one machine it is just another local rank).
        """
        dist, last = self.dist, self.world - 1
        if self.rank == 0:
            def ping() -> None:
                dist.send(sent, dst=last)
                dist.recv(received, src=last)
            return ping
        if self.rank == last:
            def pong() -> None:
                dist.recv(received, src=0)
                dist.send(received, dst=0)
            return pong
        return lambda: None

    def timed(self, op: Callable[[], None]) -> float:
        """Seconds the operation took on this rank (CUDA events on GPUs)."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            op()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
        begin = time.perf_counter()
        op()
        return time.perf_counter() - begin

    def timed_batch(self, op: Callable[[], None], count: int) -> float:
        """Seconds per operation over *count* operations enqueued back to back (nccl-tests' timing).

        On GPUs the host launches all *count* operations between two CUDA events on the current
        stream and waits once, so launch overhead overlaps the device's work; on CPUs (gloo, whose
        calls block) ``perf_counter`` brackets the *count* calls.
        """
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(count):
                op()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / count
        begin = time.perf_counter()
        for _ in range(count):
            op()
        return (time.perf_counter() - begin) / count

    def max_over_ranks(self, values: Sequence[float]) -> list[float]:
        t = self.torch.tensor(list(values), dtype=self.torch.float64, device=self.device)
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return [float(v) for v in t.cpu().tolist()]

    def setup(self, ping: bool) -> None:
        """Create the communicators before any timing (NCCL creates them lazily)."""
        warm = self._zeros(_FLOAT_BYTES * self.world)
        self.dist.all_reduce(warm)
        if ping:
            self.operation(PT2PT, _FLOAT_BYTES, in_place=False)()
        self.barrier()


def _measure(comm: _Comm, config: BenchConfig, index: int, point: _Point) -> _Step:
    collective = point.collective
    op = comm.operation(collective, point.n_bytes, point.in_place)
    active = collective != PT2PT or comm.rank == 0
    batched = resolved_timing(config.timing, comm.backend) == "batched"
    slowest = 0.0
    for _ in range(config.warmup):
        begin = time.perf_counter()
        comm.barrier()
        op()
        if comm.cuda:
            comm.torch.cuda.synchronize()
        slowest = max(slowest, time.perf_counter() - begin)
    (slowest,) = comm.max_over_ranks([slowest])
    # a sample is one iteration (per-iteration) or a batch of them sized so that min_iters batches fill
    # half the budget at the warm-up's pace (batched)
    batch = 1
    if batched:
        fit_count = int(config.budget_s / 2 / config.min_iters / max(slowest, 1e-9))
        batch = max(1, min(config.max_iters // config.min_iters, fit_count))
    most = max(1, config.max_iters // batch)
    # half the budget at the warm-up's rate, then the rest at the measured rate: every rank runs the
    # same count because each decision uses the slowest rank's clock (an all-reduce between samples)
    chunk = min(most, max(config.min_iters, int(config.budget_s / 2 / max(slowest * batch, 1e-9))))
    times: list[float] = []
    begin = time.perf_counter()
    for _ in range(_MAX_CHUNKS):
        for _ in range(chunk):
            comm.barrier()
            t = comm.timed_batch(op, batch) if batched else comm.timed(op)
            times.append(t if active else 0.0)
        if len(times) >= most:
            break
        (spent,) = comm.max_over_ranks([time.perf_counter() - begin])
        chunk = min(most - len(times), int((config.budget_s - spent) / (spent / len(times))))
        if chunk < 1:
            break
    per_iteration = comm.max_over_ranks(times)
    if collective == PT2PT:
        per_iteration = [t / 2 for t in per_iteration]
    median, dropped, low, high, mad = _summarize(per_iteration)
    return _Step(index, point, median, len(times) * batch, dropped, low, high, mad, tuple(per_iteration))


def _sweep(comm: _Comm, config: BenchConfig, plan: Sequence[_Point], emit: Callable[[_Step], None],
           where: list[int | None], *, beat: Callable[[int], None] = lambda index: None) -> None:
    """Measure every step of *plan*; rank 0 emits each result.  *where* holds the current step index."""
    _agree(comm, _agreement(config, plan, comm.backend, skew=comm.rank == config._skew_rank))
    comm.setup(ping=PT2PT in config.collectives)
    for index, point in enumerate(plan):
        where[0] = index
        if index == 1 and comm.rank == config._fail_rank:
            raise _InjectedExit
        if index == 1 and comm.rank == config._hang_rank:
            while True:
                time.sleep(3600)
        beat(index)
        step = _measure(comm, config, index, point)
        if comm.rank == 0:
            emit(step)
    where[0] = len(plan)
    beat(len(plan))
    comm.barrier()


class _Watchdog:
    """Under torchrun: each rank posts the step it enters in the group's store, and a thread ends
    the process (an ``error:`` line, exit code 4) when the step has not changed for ``timeout_s``,
    naming the ranks that are behind the others (the hung ones)."""

    _KEY = "costmodel-bench-step-"

    def __init__(self, store: Any, rank: int, world: int, plan: Sequence[_Point],
                 timeout_s: float) -> None:
        import threading

        self.store, self.rank, self.world, self.plan, self.timeout_s = store, rank, world, plan, timeout_s
        self.changed = time.monotonic()
        self.limit = max(timeout_s, STARTUP_S)  # the set-up (agreement, communicators) may be slow
        self.stopped = threading.Event()
        self.beat(-1)
        self.thread = threading.Thread(target=self._watch, name="costmodel-bench-watchdog", daemon=True)
        self.thread.start()

    def beat(self, index: int) -> None:
        self.changed = time.monotonic()
        if index >= 0:
            self.limit = self.timeout_s
        self.store.set(f"{self._KEY}{self.rank}", str(index))

    def stop(self) -> None:
        self.stopped.set()

    def _watch(self) -> None:
        while not self.stopped.wait(min(1.0, self.timeout_s / 10)):
            if time.monotonic() - self.changed > self.limit:
                print(f"error: {self.message()}", file=sys.stderr, flush=True)
                os._exit(_HANG_EXIT_CODE)

    def steps(self) -> dict[int, int | None]:
        """Each rank's last posted step (-1: set-up), None where the store does not answer."""
        found: dict[int, int | None] = {}
        for rank in range(self.world):
            key = f"{self._KEY}{rank}"
            try:
                found[rank] = int(self.store.get(key)) if self.store.check([key]) else -1
            except Exception:  # a store that fails names no rank; the message still goes out
                found[rank] = None
        return found

    def message(self) -> str:
        return _watchdog_message(self.steps(), self.plan, self.limit)


def _watchdog_message(steps: dict[int, int | None], plan: Sequence[_Point], limit: float) -> str:
    """Name the ranks behind the furthest one (pure, for the watchdog)."""
    known = {r: s for r, s in steps.items() if s is not None}

    def where(index: int) -> str:
        return "start-up" if index < 0 else _step_text(plan, index)

    if not known:
        return f"no progress within {limit:g} s and the group's store does not answer; a rank hung"
    ahead = max(known.values())
    behind = sorted(r for r, s in known.items() if s < ahead)
    if not behind:
        return (f"every rank has waited {limit:g} s in {where(ahead)}; a hang inside the collective "
                "(raise the timeout if one size legitimately takes longer)")
    more = f" and {len(behind) - 8} more" if len(behind) > 8 else ""
    names = ", ".join(str(r) for r in behind[:8]) + more
    who = f"ranks {names} hung" if len(behind) > 1 else f"rank {names} hung"
    return (f"{who} (last step entered: {where(known[behind[0]])}); the other ranks waited {limit:g} s "
            f"in {where(ahead)}; the run is stopped")


def _agreement(config: BenchConfig, plan: Sequence[_Point], backend: str, *,
               skew: bool = False) -> dict[str, object]:
    """What every rank must share before measuring (``skew``: the ``_skew_rank`` test hook)."""
    sizes = [point.n_bytes * (2 if skew else 1) for point in plan]
    return {"backend": backend, "timing": resolved_timing(config.timing, backend),
            "collectives": list(config.collectives), "sizes": sizes, "repeat": config.repeat,
            "placements": [point.in_place for point in plan],
            "budget_s": config.budget_s, "iterations": [config.min_iters, config.max_iters, config.warmup]}


def _agree(comm: _Comm, mine: dict[str, object]) -> None:
    """All-gather every rank's :func:`_agreement`; raise CalibrationError on every rank if any differs."""
    gathered: list[Any] = [None] * comm.world
    comm.dist.all_gather_object(gathered, mine)
    reference = gathered[0]
    differ = [rank for rank, theirs in enumerate(gathered) if theirs != reference]
    if not differ:
        return
    keys = sorted({k for rank in differ for k in reference if gathered[rank].get(k) != reference.get(k)})
    more = f" and {len(differ) - 8} more" if len(differ) > 8 else ""
    ranks = ", ".join(str(r) for r in differ[:8]) + more
    who = f"ranks {ranks} disagree" if len(differ) > 1 else f"rank {ranks} disagrees"
    raise CalibrationError(f"{who} with rank 0 on "
                           f"{', '.join(keys)}; run the same command, costmodel and PyTorch on every rank")


class _InjectedExit(BaseException):
    """The ``_fail_rank`` test hook: the rank exits at once with code 3 (after flushing its queue)."""


def _device(torch: Any, index: int | None) -> Any:
    if index is not None:
        torch.cuda.set_device(index)
        return torch.device("cuda", index)
    return torch.device("cpu")


# --------------------------------------------------------------------------- results


def _sweeps_text(repeat: int) -> str:
    return f"{repeat} sweeps, " if repeat > 1 else ""


class _Recorder:
    """Collects rank 0's results: rows per collective, the CSV (appended and flushed), progress."""

    def __init__(self, config: BenchConfig, plan: Sequence[_Point], *, backend: str, p: int,
                 torch_version: str, progress: Callable[[Progress], None] | None) -> None:
        self.config, self.plan, self.backend, self.p, self.progress = config, plan, backend, p, progress
        self.rows: dict[str, list[Row]] = {c: [] for c in config.collectives}
        self.samples: dict[tuple[str, int, bool], list[tuple[float, ...]]] = {}
        self.count = 0
        self.start = time.monotonic()
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.timing = resolved_timing(config.timing, backend)
        self.source = (f"# source: costmodel calibrate run, torch {torch_version}, {backend}, p={p}, "
                       f"{self.timing} timing, {_sweeps_text(config.repeat)}"
                       f"float32, host {socket.gethostname()}, {stamp}")
        self.file: TextIO | None = None
        self.writer: Any = None
        if config.csv_path is not None:
            try:
                self.file = config.csv_path.open("w", encoding="utf-8", newline="")
            except OSError as exc:
                raise cannot_write(config.csv_path, exc) from None
            self.file.write(self.source + "\n")
            self.writer = csv.writer(self.file, lineterminator="\n")
            self.writer.writerow(BENCH_CSV_COLUMNS)
            self.file.flush()

    def add(self, step: _Step) -> None:
        point = step.point
        time_text = f"{step.time_s:.9g}"
        algbw = point.n_bytes / step.time_s if step.time_s > 0 else None
        factor = float(bus_factor(point.collective, self.p))
        algbw_text = "" if algbw is None else f"{algbw:.9g}"
        busbw_text = "" if algbw is None else f"{algbw * factor:.9g}"
        row = Row(n_bytes=point.n_bytes, time_s=Fraction(time_text), in_place=point.in_place,
                  algbw_bytes_per_s=Fraction(algbw_text) if algbw_text else None,
                  busbw_bytes_per_s=Fraction(busbw_text) if busbw_text else None)
        self.rows[point.collective].append(row)
        self.samples.setdefault((point.collective, point.n_bytes, point.in_place), []).append(step.samples)
        self.count += 1
        if self.writer is not None and self.file is not None:
            spread = spread_of(point.collective, point.n_bytes, point.in_place, step.samples, sweeps=1)
            self.writer.writerow([point.collective, self.backend, self.p, point.n_bytes, time_text,
                                  str(point.in_place).lower(), point.sweep, step.iterations, step.outliers,
                                  *(f"{t:.9g}" for t in (step.min_time_s, step.max_time_s, step.mad_s,
                                                         spread.mean_s, spread.p50_s, spread.p95_s)),
                                  algbw_text, busbw_text, self.timing])
            self.file.flush()
        if self.progress is not None:
            self.progress(Progress(collective=point.collective, n_bytes=point.n_bytes,
                                   in_place=point.in_place, sweep=point.sweep, index=self.count,
                                   total=len(self.plan), time_s=step.time_s, iterations=step.iterations,
                                   elapsed_s=time.monotonic() - self.start))

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def results(self) -> BenchRun:
        path = str(self.config.csv_path) if self.config.csv_path is not None else "<benchmark>"
        measurements = tuple(
            Measurements(tool="costmodel-csv", collective=c, p=self.p, rows=tuple(rows), source=self.source,
                         path=path, backend=self.backend, dtype="float32", command="costmodel calibrate run")
            for c, rows in self.rows.items() if rows)
        spreads = tuple(spread_of(c, n, in_place, [t for sweep in sweeps for t in sweep], sweeps=len(sweeps))
                        for (c, n, in_place), sweeps in self.samples.items())
        return BenchRun(measurements=measurements, spreads=spreads, backend=self.backend, timing=self.timing,
                        repeat=self.config.repeat)


# --------------------------------------------------------------------------- the entry point


def run_benchmark(config: BenchConfig, *,
                  progress: Callable[[Progress], None] | None = None) -> tuple[Measurements, ...]:
    """Measure the collectives of *config* (see the module docstring) and return one Measurements each.

    The measurements of :func:`benchmark`, without the spreads; its parameters, returns (the
    measurements) and errors.
    """
    return benchmark(config, progress=progress).measurements


def benchmark(config: BenchConfig, *, progress: Callable[[Progress], None] | None = None) -> BenchRun:
    """Measure the collectives of *config* (see the module docstring): their times and spreads.

    Parameters
    ----------
    config : BenchConfig
    progress : callable, optional
        Called in this process with a :class:`Progress` after every measured size.

    Returns
    -------
    BenchRun
        ``measurements``: one Measurements per collective in the order of ``config.collectives``,
        ``tool="costmodel-csv"``, with p and backend set, every sweep's rows flagged in place or
        not; ``spreads``: the mean, p50 and p95 of every size and placement over all sweeps.
        Under a launcher, ranks other than 0 return an empty run.

    Raises
    ------
    InputError
        For a bad config, nccl without a GPU per rank, launched ranks that would share GPUs or
        lack ``MASTER_ADDR``.
    MissingDependency
        Without PyTorch (or with a build lacking torch.distributed).
    CalibrationError
        When a rank fails or hangs; every spawned process is ended first.
    Interrupted
        On Ctrl-C (a KeyboardInterrupt), after ending every spawned process,
        with the number of sizes kept in the CSV.
    """
    if not isinstance(config, BenchConfig):
        raise InputError(f"{type(config).__name__} is not a BenchConfig; build one with BenchConfig(...)")
    torch, dist = _import_torch()
    if dist.is_initialized():
        return _run_in_group(torch, dist, config, progress, None)
    launch = launch_from_env(os.environ)
    if launch is not None:
        return _run_in_group(torch, dist, config, progress, launch)
    choice = _resolve_backend(torch, dist, config.backend, local_rank=0, local_world_size=config.ranks,
                              shared_view=True)
    return _run_spawned(torch, config, choice.backend, progress)


def chosen_backend(config: BenchConfig) -> BackendChoice:
    """The backend (and CUDA device) :func:`run_benchmark` would use in this process for *config*.

    ``auto`` resolved as the run resolves it: for this rank when a launcher started the process,
    else once for the ``ranks`` spawned here (see :func:`choose_backend`); a
    :class:`BackendWarning` says when ``auto`` falls back to gloo on a machine with GPUs.  The
    command line names its default CSV after it (``calibration-nccl.csv``).

    Raises
    ------
    InputError, MissingDependency
        As :func:`run_benchmark` would, before anything is started.
    """
    if not isinstance(config, BenchConfig):
        raise InputError(f"{type(config).__name__} is not a BenchConfig; build one with BenchConfig(...)")
    torch, dist = _import_torch()
    if dist.is_initialized():
        return BackendChoice(str(dist.get_backend()), None)
    launch = launch_from_env(os.environ)
    if launch is not None:
        return _resolve_backend(torch, dist, config.backend, local_rank=launch.local_rank,
                                local_world_size=launch.local_world_size, shared_view=False)
    return _resolve_backend(torch, dist, config.backend, local_rank=0, local_world_size=config.ranks,
                            shared_view=True)


def _checked_launch(launch: Launch) -> Launch:
    """The launch, refused before any set-up when it cannot form a group of 2 or more."""
    if launch.world_size < 2:
        raise InputError(f"the job has {launch.world_size} rank; the benchmark needs at least 2 "
                         "(torchrun --nproc-per-node 2 or more)")
    if launch.master_addr is None:
        raise InputError(f"rank {launch.rank} of {launch.world_size} was started by {launch.launcher} "
                         f"({launch.variables}) but MASTER_ADDR is not set; export MASTER_ADDR=<rank 0's "
                         f"host> on every rank (and MASTER_PORT, default {DEFAULT_PORT})")
    return launch


def _init_method(launch: Launch) -> dict[str, Any]:
    """How the group forms: torchrun's own store (env://), else rank 0's address from MASTER_ADDR."""
    if launch.launcher == "torchrun":
        return {}
    host = f"[{launch.master_addr}]" if ":" in (launch.master_addr or "") else launch.master_addr
    return {"init_method": f"tcp://{host}:{launch.master_port}", "rank": launch.rank,
            "world_size": launch.world_size}


def _run_in_group(torch: Any, dist: Any, config: BenchConfig, progress: Callable[[Progress], None] | None,
                  launch: Launch | None) -> BenchRun:
    """This process is one rank of a launched job, or (*launch* None) of a group already initialised."""
    owned = launch is not None
    if launch is not None:
        launch = _checked_launch(launch)
        choice = _resolve_backend(torch, dist, config.backend, local_rank=launch.local_rank,
                                  local_world_size=launch.local_world_size, shared_view=False)
        backend = choice.backend
        device = _device(torch, choice.device)
        # the watchdog fires first; the group's own timeout is the backstop
        dist.init_process_group(backend, timeout=timedelta(seconds=config.timeout_s + _BACKSTOP_S),
                                **_init_method(launch))
    else:
        if dist.get_world_size() < 2:
            raise InputError(f"the process group has {dist.get_world_size()} rank; the benchmark needs at "
                             "least 2")
        backend = dist.get_backend()
        cuda = backend == "nccl"
        device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    rank, world = dist.get_rank(), dist.get_world_size()
    where: list[int | None] = [None]
    plan = _plan(config, world)
    recorder = None
    if rank == 0:
        recorder = _Recorder(config, plan, backend=backend, p=world, torch_version=torch.__version__,
                             progress=progress)
    watchdog = _start_watchdog(dist, rank, world, plan, config.timeout_s) if owned else None
    try:
        comm = _Comm(torch, dist, backend=backend, rank=rank, world=world, device=device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            _sweep(comm, config, plan, recorder.add if recorder is not None else lambda step: None, where,
                   beat=watchdog.beat if watchdog is not None else lambda index: None)
    except KeyboardInterrupt:
        raise Interrupted(recorder.count if recorder is not None else 0,
                          config.csv_path if recorder is not None else None) from None
    except _InjectedExit:
        os._exit(_FAIL_EXIT_CODE)
    except CalibrationError:
        raise
    except Exception as exc:
        raise CalibrationError(f"rank {rank} failed during {_step_text(plan, where[0])}: "
                               f"{_first_line(exc)}; see the other ranks' messages") from exc
    finally:
        if watchdog is not None:
            watchdog.stop()
        if recorder is not None:
            recorder.close()
        if owned and dist.is_initialized():
            dist.destroy_process_group()
    return recorder.results() if recorder is not None else BenchRun(repeat=config.repeat)


def _start_watchdog(dist: Any, rank: int, world: int, plan: Sequence[_Point],
                    timeout_s: float) -> _Watchdog | None:
    """The torchrun watchdog, on the default group's store (None where this PyTorch hides it)."""
    try:
        from torch.distributed.distributed_c10d import _get_default_store

        store = _get_default_store()
    except (ImportError, RuntimeError, ValueError):
        return None
    return _Watchdog(store, rank, world, plan, timeout_s)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _child(rank: int, *, world: int, port: int, backend: str, config: BenchConfig, results: Any,
           parent: int) -> None:
    """A spawned rank: report start, set up, sweep, report done; on any error report it and exit 1."""
    where: list[int | None] = [None]
    try:
        die_with_parent(parent)
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE=str(world), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world))
        warnings.simplefilter("ignore", FutureWarning)
        torch, dist = _import_torch()
        if backend == "gloo":
            torch.set_num_threads(1)
        results.put(("started", rank))
        device = _device(torch, rank if backend == "nccl" else None)
        # the parent's watchdog fires first; the group's own timeout is the backstop
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world,
                                timeout=timedelta(seconds=config.timeout_s + _BACKSTOP_S))
        results.put(("ready", rank))
        comm = _Comm(torch, dist, backend=backend, rank=rank, world=world, device=device)
        _sweep(comm, config, _plan(config, world), lambda step: results.put(("row", step)), where)
        dist.destroy_process_group()
        results.put(("done", rank))
    except _InjectedExit:
        results.close()
        results.join_thread()
        os._exit(_FAIL_EXIT_CODE)
    except BaseException as exc:  # reported to the parent, which raises CalibrationError
        results.put(("error", rank, time.monotonic(), where[0], _first_line(exc)))
        raise SystemExit(1) from None


def _run_spawned(torch: Any, config: BenchConfig, backend: str,
                 progress: Callable[[Progress], None] | None) -> BenchRun:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    port = free_port()
    plan = _plan(config, config.ranks)
    recorder = _Recorder(config, plan, backend=backend, p=config.ranks, torch_version=torch.__version__,
                         progress=progress)
    processes = [context.Process(target=_child, args=(rank,), name=f"costmodel-bench-rank{rank}", daemon=True,
                                 kwargs={"world": config.ranks, "port": port, "backend": backend,
                                         "config": config, "results": results, "parent": os.getpid()})
                 for rank in range(config.ranks)]
    try:
        for process in processes:
            process.start()
        supervise(processes, results, recorder, partial(_step_text, plan), config.timeout_s)
    except KeyboardInterrupt:
        raise Interrupted(recorder.count, config.csv_path) from None
    finally:
        stop(processes)
        results.close()
        results.cancel_join_thread()
        recorder.close()
    return recorder.results()
