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

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel._lazy import lazy_exports

if TYPE_CHECKING:  # the names as the type checker sees them
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
    from costmodel.calibration.launch import (
        Launch,
        launch_from_env,
    )
    from costmodel.calibration.logs import (
        CSV_COLUMNS,
        FORMATS,
        MAX_ROWS,
        PT2PT,
        TOOLS,
        LogFormat,
        Measurements,
        Row,
        bus_factor,
        canonical_collective,
        detect_format,
        parse_csv,
        parse_log,
        parse_logs,
        parse_nccl_tests,
        parse_nccl_tests_json,
        parse_osu,
        read_csv,
        read_log,
        read_logs,
        read_nccl_tests,
        read_nccl_tests_json,
        read_osu,
        write_csv,
    )
    from costmodel.calibration.report import (
        CalibrationReport,
        ReportRow,
        calibration_report,
        plot_report,
    )
    from costmodel.calibration.spread import (
        Spread,
        quantile,
    )

_EXPORTS: dict[str, str] = {
    "BENCH_COLLECTIVES": "costmodel.calibration.bench",
    "BenchConfig": "costmodel.calibration.bench",
    "BenchRun": "costmodel.calibration.bench",
    "COMPUTE_DTYPES": "costmodel.calibration.compute",
    "CSV_COLUMNS": "costmodel.calibration.logs",
    "CalibrationReport": "costmodel.calibration.report",
    "ComputeCalibration": "costmodel.calibration.compute",
    "ComputeConfig": "costmodel.calibration.compute",
    "ComputeMeasurements": "costmodel.calibration.compute",
    "DEFAULT_ALGORITHMS": "costmodel.calibration.fit",
    "FORMATS": "costmodel.calibration.logs",
    "Fit": "costmodel.calibration.fit",
    "FitTarget": "costmodel.calibration.fit",
    "GemmFit": "costmodel.calibration.compute",
    "GemmShape": "costmodel.calibration.compute",
    "Launch": "costmodel.calibration.launch",
    "LogFormat": "costmodel.calibration.logs",
    "MAX_ROWS": "costmodel.calibration.logs",
    "MAX_SEGMENTS": "costmodel.calibration.fit",
    "MIN_POINTS": "costmodel.calibration.fit",
    "Measurements": "costmodel.calibration.logs",
    "PT2PT": "costmodel.calibration.logs",
    "Progress": "costmodel.calibration.bench",
    "ReportRow": "costmodel.calibration.report",
    "Residual": "costmodel.calibration.fit",
    "Row": "costmodel.calibration.logs",
    "Segment": "costmodel.calibration.fit",
    "SegmentCount": "costmodel.calibration.fit",
    "Spread": "costmodel.calibration.spread",
    "TOOLS": "costmodel.calibration.logs",
    "bench_sizes": "costmodel.calibration.bench",
    "benchmark": "costmodel.calibration.bench",
    "bus_factor": "costmodel.calibration.logs",
    "calibrate_compute": "costmodel.calibration.compute",
    "calibration_report": "costmodel.calibration.report",
    "canonical_collective": "costmodel.calibration.logs",
    "coefficients": "costmodel.calibration.fit",
    "compute_calibration": "costmodel.calibration.compute",
    "detect_format": "costmodel.calibration.logs",
    "fit": "costmodel.calibration.fit",
    "fit_gemm": "costmodel.calibration.compute",
    "fit_latency_and_bandwidth": "costmodel.calibration.fit",
    "fit_logs": "costmodel.calibration.fit",
    "launch_from_env": "costmodel.calibration.launch",
    "measure_compute": "costmodel.calibration.compute",
    "parse_csv": "costmodel.calibration.logs",
    "parse_log": "costmodel.calibration.logs",
    "parse_logs": "costmodel.calibration.logs",
    "parse_nccl_tests": "costmodel.calibration.logs",
    "parse_nccl_tests_json": "costmodel.calibration.logs",
    "parse_osu": "costmodel.calibration.logs",
    "parse_sizes": "costmodel.calibration.bench",
    "plot_report": "costmodel.calibration.report",
    "quantile": "costmodel.calibration.spread",
    "read_csv": "costmodel.calibration.logs",
    "read_log": "costmodel.calibration.logs",
    "read_logs": "costmodel.calibration.logs",
    "read_nccl_tests": "costmodel.calibration.logs",
    "read_nccl_tests_json": "costmodel.calibration.logs",
    "read_osu": "costmodel.calibration.logs",
    "run_benchmark": "costmodel.calibration.bench",
    "write_csv": "costmodel.calibration.logs",
}
"""Each name the package exports and its module, imported when first used (``calibrate fit`` loads
neither the benchmark nor the compute calibration)."""

__all__ = [
    "BENCH_COLLECTIVES",
    "COMPUTE_DTYPES",
    "CSV_COLUMNS",
    "DEFAULT_ALGORITHMS",
    "FORMATS",
    "MAX_ROWS",
    "MAX_SEGMENTS",
    "MIN_POINTS",
    "PT2PT",
    "TOOLS",
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
    "LogFormat",
    "Measurements",
    "Progress",
    "ReportRow",
    "Residual",
    "Row",
    "Segment",
    "SegmentCount",
    "Spread",
    "bench_sizes",
    "benchmark",
    "bus_factor",
    "calibrate_compute",
    "calibration_report",
    "canonical_collective",
    "coefficients",
    "compute_calibration",
    "detect_format",
    "fit",
    "fit_gemm",
    "fit_latency_and_bandwidth",
    "fit_logs",
    "launch_from_env",
    "logs",
    "measure_compute",
    "parse_csv",
    "parse_log",
    "parse_logs",
    "parse_nccl_tests",
    "parse_nccl_tests_json",
    "parse_osu",
    "parse_sizes",
    "plot_report",
    "quantile",
    "read_csv",
    "read_log",
    "read_logs",
    "read_nccl_tests",
    "read_nccl_tests_json",
    "read_osu",
    "run_benchmark",
    "write_csv",
]

# The function, not the submodule of the same name that importing it sets as the package's attribute.
from costmodel.calibration.fit import fit  # noqa: E402

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, packages=frozenset({"logs"}))
