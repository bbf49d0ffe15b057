"""A benchmark log against its fitted α–β model: the calibration report, drawn.

:func:`calibration_plot` reads a log (nccl-tests, OSU or costmodel's CSV),
fits α and β and builds the :class:`~costmodel.calibration.report.CalibrationReport`;
:func:`draw_calibration_plot` draws it with
:func:`~costmodel.calibration.report.plot_report` (time and bus bandwidth
against size, the fitted model beside the measured points, and the residuals)
in the house style.
"""

from __future__ import annotations

from pathlib import Path

from costmodel.calibration.report import CalibrationReport, calibration_report, plot_report
from costmodel.plots._figure import check_output, figure_style

__all__ = ["calibration_plot", "calibration_title", "draw_calibration_plot"]


def calibration_plot(log: str | Path, *, p: int | None = None, collective: str | None = None,
                     algorithm: str | None = None) -> CalibrationReport:
    """Read *log*, fit α and β (segments chosen by BIC) and return the report to draw.

    Parameters
    ----------
    log : str or Path
        The benchmark output (a path).
    p : int, optional
        Ranks, when the log does not say (OSU); checked against it otherwise.
    collective : str, optional
        The collective measured (checked against the log; chooses within a CSV of several).
    algorithm : str, optional
        The algorithm assumed by the fit (default: as :func:`costmodel.calibration.fit`).
    """
    from costmodel.calibration import fit, read_log

    measurements = read_log(log, collective=collective, p=p)
    return calibration_report(fit(measurements, algorithm=algorithm, p=p))


def draw_calibration_plot(report: CalibrationReport, path: str | Path, *, force: bool = False) -> Path:
    """Draw *report* to *path* (.png or .svg) with :func:`~costmodel.calibration.report.plot_report`.

    The title is in the file's metadata for PNG and, as text, in the SVG.  Needs matplotlib.
    """
    target = check_output(path, force=force)
    with figure_style():
        import matplotlib as mpl

        with mpl.rc_context({"font.size": 11}):  # its "small" legend stays ≥ 9 pt
            return plot_report(report, target)


def calibration_title(report: CalibrationReport) -> str:
    """The title :func:`~costmodel.calibration.report.plot_report` gives the figure."""
    f = report.fit
    return f"{f.collective}, p = {f.p}: measured against the fitted α–β model"
