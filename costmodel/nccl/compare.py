"""NCCL's own model against a measurement: :func:`compare` and :func:`log_shape`.

For every size of an nccl-tests log (its out-of-place rows above 0 bytes) the model's choice and time
(:func:`~costmodel.nccl.predict.predict`) are set beside the measured time, with both bus
bandwidths in nccl-tests' terms. A *regime* is a run of consecutive sizes on which the model
chooses the same (algorithm, protocol); the error is ``(predicted − measured) / measured``, and
each regime, and the whole log, is summarised by the median of its absolute value.

The communicator's shape comes from the log: ranks from its ``# Rank`` lines, nodes from the
distinct hosts those lines name (``#  Rank  0 Group  0 Pid 43 on HOST device 0 ...``, also the
older layout without ``Group``).

References
----------
.. [1] NVIDIA, nccl-tests ``doc/PERFORMANCE.md`` (algorithm and bus bandwidth) and
   ``src/common.cu`` (the ``# Rank`` lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from os import PathLike
from statistics import median
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.errors import InputError
from costmodel.nccl.predict import bus_factor, predict
from costmodel.nccl.system import System

__all__ = ["CompareRow", "Comparison", "Regime", "compare", "hosts_of", "log_shape"]

_RANK_HOST = re.compile(r"^#\s+Rank\s+\d+\s.*?\bon\s+(\S+)\s+device\s", re.MULTILINE)


def hosts_of(text: str) -> tuple[str, ...]:
    """The distinct hosts named by an nccl-tests log's ``# Rank`` lines, in order of appearance.

    >>> log = "#  Rank  0 Pid 1 on a device  0 [0x0f] X\\n#  Rank  1 Group  0 Pid 2 on b device  0 [0x0f] X"
    >>> hosts_of(log)
    ('a', 'b')
    >>> hosts_of("0: #  Rank  0 Pid 1 on a device  0 [0x0f] X")  # srun --label, as the log readers strip it
    ('a',)
    """
    from costmodel.calibration.logs.measurements import split_lines

    return tuple(dict.fromkeys(_RANK_HOST.findall("\n".join(split_lines(text)))))


def log_shape(path: str | PathLike[str]) -> tuple[Any, int | None]:
    """The measurements of the nccl-tests log at *path* and its node count (None when its ``# Rank``
    lines name no host)."""
    from costmodel.calibration.logs import parse_log, read_log_text

    text = read_log_text(path)
    measurements = parse_log(text, path=str(path))
    if measurements.tool != "nccl-tests":
        raise InputError(f"{path} is a {measurements.tool} log; compare reads nccl-tests logs")
    hosts = hosts_of(text)
    return measurements, (len(hosts) or None)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareRow(JSONFields):
    """One size: measured and predicted time (s) and bus bandwidth (B/s), the model's choice."""

    n_bytes: int
    measured_s: Fraction
    predicted_s: Fraction
    rel_error: Fraction
    measured_busbw_bytes_per_s: Fraction
    predicted_busbw_bytes_per_s: Fraction
    algorithm: str
    protocol: str
    regime: int



@dataclass(frozen=True, slots=True, kw_only=True)
class Regime(JSONFields):
    """Consecutive sizes with the same choice, and the median |relative error| over them."""

    algorithm: str
    protocol: str
    from_bytes: int
    to_bytes: int
    sizes: int
    median_abs_rel_error: Fraction



@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """A log against NCCL's model: one row per size, the regimes, and the overall median error."""

    collective: str
    ranks: int
    nodes: int
    version: str
    path: str
    source: str | None
    rows: tuple[CompareRow, ...]
    regimes: tuple[Regime, ...]
    median_abs_rel_error: Fraction
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values, SI units in the keys."""
        return {
            "collective": self.collective,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "nccl_version": self.version,
            "path": self.path,
            "source": self.source,
            "median_abs_rel_error": real(self.median_abs_rel_error),
            "regimes": [r.to_dict() for r in self.regimes],
            "rows": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
        }


def compare(
    measurements: Any,
    system: System,
    *,
    version: str = "2.30",
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
) -> Comparison:
    """Each out-of-place size of *measurements* (an nccl-tests log as read by
    :func:`costmodel.calibration.read_log`) against NCCL's model on *system*.

    Raises
    ------
    InputError
        If the log's rank count differs from the system's, its collective is outside NCCL's tuning
        model, or it has no size above 0 bytes; or as :func:`~costmodel.nccl.predict.predict`.
    """
    if measurements.p is not None and measurements.p != system.ranks:
        raise InputError(f"the log has {measurements.p} ranks and the system {system.ranks}")
    rows_in = [r for r in measurements.select(in_place=False) if r.n_bytes > 0]
    if not rows_in:
        raise InputError(f"{measurements.path} has no size above 0 bytes to compare")
    factor = bus_factor(measurements.collective, system.ranks)
    rows: list[CompareRow] = []
    version_name = ""
    regime = 0
    for r in rows_in:
        p = predict(
            measurements.collective,
            r.n_bytes,
            system,
            version=version,
            algo=algo,
            proto=proto,
            overrides=overrides,
        )
        version_name = p.version
        if rows and (rows[-1].algorithm, rows[-1].protocol) != (p.algorithm, p.protocol):
            regime += 1
        rows.append(
            CompareRow(
                n_bytes=r.n_bytes,
                measured_s=r.time_s,
                predicted_s=p.time_s,
                rel_error=(p.time_s - r.time_s) / r.time_s,
                measured_busbw_bytes_per_s=r.n_bytes / r.time_s * factor,
                predicted_busbw_bytes_per_s=p.busbw_bytes_per_s,
                algorithm=p.algorithm,
                protocol=p.protocol,
                regime=regime,
            )
        )
    regimes = []
    for k in range(regime + 1):
        group = [r for r in rows if r.regime == k]
        regimes.append(
            Regime(
                algorithm=group[0].algorithm,
                protocol=group[0].protocol,
                from_bytes=group[0].n_bytes,
                to_bytes=group[-1].n_bytes,
                sizes=len(group),
                median_abs_rel_error=Fraction(median(abs(r.rel_error) for r in group)),
            )
        )
    notes = tuple(measurements.warnings)
    return Comparison(
        collective=p.collective,
        ranks=system.ranks,
        nodes=system.nodes,
        version=version_name,
        path=measurements.path,
        source=measurements.source,
        rows=tuple(rows),
        regimes=tuple(regimes),
        median_abs_rel_error=Fraction(median(abs(r.rel_error) for r in rows)),
        notes=notes,
    )
