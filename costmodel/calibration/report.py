"""Measured against modelled: per size, the time, the relative error and the bus bandwidth.

A :class:`CalibrationReport` is what ``costmodel calibrate report`` shows: for
every measured size, the measured time, the fitted model's time, their relative
error, and the bus bandwidth of each (nccl-tests' convention, see
:mod:`costmodel.collectives.busbw`); :func:`plot_report` draws the same as two
panels (time and busbw against size, with the residuals) when matplotlib is
installed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._frames import frame
from costmodel._json import MeasuredFields
from costmodel.calibration.fit import Fit
from costmodel.calibration.logs import bus_factor
from costmodel.errors import InputError, MissingDependency

__all__ = ["CalibrationReport", "ReportRow", "calibration_report", "plot_report"]


@dataclass(frozen=True)
class ReportRow(MeasuredFields):
    """One measured size: measured and modelled time and bus bandwidth, the relative error, and the
    segment that models it (counted from 1)."""

    n_bytes: int
    measured_s: float
    model_s: float
    rel_error: float
    busbw_measured_bytes_per_s: float
    busbw_model_bytes_per_s: float
    segment: int


@dataclass(frozen=True)
class CalibrationReport:
    """The fit and its rows, smallest size first."""

    fit: Fit
    rows: tuple[ReportRow, ...]
    bus_factor: Fraction

    def to_dict(self) -> dict[str, Any]:
        summary = self.fit.to_dict()
        summary.pop("residuals", None)
        return {"fit": summary, "bus_factor": float(self.bus_factor),
                "rows": [r.to_dict() for r in self.rows]}

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame``, one row per measured size, smallest first: the columns of
        :class:`ReportRow` (``n_bytes``, ``measured_s``, ``model_s``, ...); ``df.attrs`` hold the
        collective, p, algorithm, the fitted ``alpha_s`` and ``beta_s_per_byte`` and ``bus_factor``."""
        fit = self.fit
        attrs = {"collective": fit.collective, "p": fit.p, "algorithm": fit.algorithm, "alpha_s": fit.alpha_s,
                 "beta_s_per_byte": fit.beta_s_per_byte, "bus_factor": float(self.bus_factor)}
        return frame((r.to_dict() for r in self.rows), [f.name for f in fields(ReportRow)], attrs=attrs)


def calibration_report(fit: Fit) -> CalibrationReport:
    """Every residual of *fit* with the bus bandwidth, measured and modelled.

    >>> from costmodel.calibration import fit, parse_log
    >>> text = "# OSU MPI Allreduce Latency Test v5.8\\n# Size  Avg Latency(us)\\n" + "".join(
    ...     f"{2**k} {10 + 2**k / 1000:.3f}\\n" for k in range(10, 16))
    >>> r = calibration_report(fit(parse_log(text, p=2), segments=1))
    >>> len(r.rows), r.bus_factor
    (6, Fraction(1, 1))
    """
    factor = bus_factor(fit.collective, fit.p)
    rows = tuple(
        ReportRow(n_bytes=int(r.n_bytes), measured_s=float(r.measured_s), model_s=float(r.model_s),
                  rel_error=float(r.rel_error),
                  busbw_measured_bytes_per_s=float(r.n_bytes * factor / Fraction(r.measured_s)),
                  busbw_model_bytes_per_s=float(r.n_bytes * factor) / float(r.model_s),
                  segment=r.segment)
        for r in sorted(fit.residuals, key=lambda r: r.n_bytes)
    )
    return CalibrationReport(fit, rows, factor)


def plot_report(report: CalibrationReport, path: str | Path) -> Path:
    """Draw time and busbw against size (measured points, model lines, segment bounds) to *path*.

    PNG or SVG by the file's suffix.  Needs matplotlib (the ``plot`` extra).
    """
    target = Path(path)
    if target.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError(f"{str(path)!r} has no .png, .svg or .pdf suffix; "
                         "name the plot file e.g. report.png")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependency("plots need matplotlib: pip install 'costmodel-collectives[plot]'") from None
    f, rows = report.fit, report.rows
    sizes = [r.n_bytes for r in rows]
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(7, 8.5), sharex=True,
                                              gridspec_kw={"height_ratios": [3, 2, 1.3]})
    top.loglog(sizes, [r.measured_s * 1e6 for r in rows], "o", ms=4, label="measured")
    top.loglog(sizes, [r.model_s * 1e6 for r in rows], "-", label=f"model ({f.algorithm}, fitted)")
    top.set_ylabel("time per operation (µs)")
    top.set_title(f"{f.collective}, p = {f.p}: measured against the fitted α–β model")
    middle.semilogx(sizes, [r.busbw_measured_bytes_per_s / 1e9 for r in rows], "o", ms=4, label="measured")
    middle.semilogx(sizes, [r.busbw_model_bytes_per_s / 1e9 for r in rows], "-", label="model")
    middle.set_ylabel("bus bandwidth (GB/s)")
    bottom.semilogx(sizes, [r.rel_error * 100 for r in rows], "o", ms=4, color="black")
    bottom.axhline(0, color="grey", lw=0.8)
    bottom.set_ylabel("error (%)")
    bottom.set_xlabel("message size n (bytes)")
    for s in f.segments[1:]:
        for ax in (top, middle, bottom):
            ax.axvline(s.from_bytes, color="grey", ls=":", lw=0.8)
    for ax in (top, middle):
        ax.legend(loc="best", fontsize="small")
        ax.grid(True, which="major", alpha=0.3)
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(target, metadata={"Title": top.get_title()} if target.suffix.lower() == ".png" else None)
    plt.close(fig)
    return target
