"""Calibration: read measured collective times, fit α and β, write a profile.

The library side of ``costmodel calibrate``: :mod:`costmodel.calibration.bench`
measures collectives over torch.distributed (:mod:`~costmodel.calibration.launch`
reads who a launched rank is, :mod:`~costmodel.calibration.spread` how the
samples of a size spread); :mod:`costmodel.calibration.logs`
reads nccl-tests (text and ``-J`` JSON), OSU Micro-Benchmarks and costmodel CSV
logs into :class:`Measurements`; :mod:`costmodel.calibration.fit` fits the
model T(n) = a(p)·α + b(p)·n·β of the assumed algorithm, by size segments, and
writes the result as a profile TOML that ``--profile`` loads.
:mod:`costmodel.calibration.compute` measures one GPU's matrix products, memory
bandwidth and kernel launch, fits its GEMM curve (K0 and the plateau) and
describes a GPU file that ``step --gpu-profile`` loads.

>>> from costmodel.calibration import fit, parse_log
>>> m = parse_log('''# OSU MPI Allreduce Latency Test v5.8
... # Size       Avg Latency(us)
... 1024                   14.43
... 2048                   21.85
... 4096                   21.35
... 8192                   23.97
... ''', p=2)
>>> f = fit(m, segments=1)
>>> f.algorithm, f.p, len(f.residuals)
('ring', 2, 4)
"""

from costmodel.calibration import logs
from costmodel.calibration.bench import (
    BENCH_COLLECTIVES,
    BenchConfig,
    BenchRun,
    Progress,
    bench_sizes,
    benchmark,
    parse_sizes,
    run_benchmark,
)
from costmodel.calibration.compute import (
    COMPUTE_DTYPES,
    ComputeCalibration,
    ComputeConfig,
    ComputeMeasurements,
    GemmFit,
    GemmShape,
    calibrate_compute,
    compute_calibration,
    fit_gemm,
    measure_compute,
)
from costmodel.calibration.fit import (
    DEFAULT_ALGORITHMS,
    MAX_SEGMENTS,
    MIN_POINTS,
    Fit,
    FitTarget,
    Residual,
    Segment,
    SegmentCount,
    coefficients,
    fit,
    fit_latency_and_bandwidth,
    fit_logs,
)
from costmodel.calibration.launch import Launch, launch_from_env
from costmodel.calibration.logs import *  # noqa: F403  (the readers, re-exported whole)
from costmodel.calibration.report import CalibrationReport, ReportRow, calibration_report, plot_report
from costmodel.calibration.spread import Spread, quantile

__all__ = [
    "BENCH_COLLECTIVES",
    "COMPUTE_DTYPES",
    "DEFAULT_ALGORITHMS",
    "MAX_SEGMENTS",
    "MIN_POINTS",
    "BenchConfig",
    "BenchRun",
    "CalibrationReport",
    "ComputeCalibration",
    "ComputeConfig",
    "ComputeMeasurements",
    "Fit",
    "FitTarget",
    "GemmFit",
    "GemmShape",
    "Launch",
    "Progress",
    "ReportRow",
    "Residual",
    "Segment",
    "SegmentCount",
    "Spread",
    "bench_sizes",
    "benchmark",
    "calibrate_compute",
    "calibration_report",
    "coefficients",
    "compute_calibration",
    "fit",
    "fit_gemm",
    "fit_latency_and_bandwidth",
    "fit_logs",
    "launch_from_env",
    "measure_compute",
    "parse_sizes",
    "plot_report",
    "quantile",
    "run_benchmark",
]
__all__ += logs.__all__
