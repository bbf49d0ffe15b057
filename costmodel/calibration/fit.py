"""Fit α and β to measured collective times, by size segments.

The model of one collective run by one algorithm on p ranks is linear in its
two link parameters::

    T(n) = a(p)·α + b(p)·n·β

with a(p) and b(p) the latency and bandwidth coefficients of the algorithm's
record in the costmodel registry (ring all-reduce: a = 2(p − 1), b = 2(p − 1)/p).
The fit minimises the absolute *relative* error, Σ|T(nᵢ) − tᵢ|/tᵢ, under
α, β ≥ 0, so that 10 µs at 8 B weighs as much as 10 ms at 1 GiB and one or two
fast outliers cannot pull the line (least squares would: the L1 fit follows the
majority of the rows) [Bloomfield & Steiger, *Least Absolute Deviations*, 1983].
That is a linear programme whose optimum is a vertex, solved exactly: a log or
segment of up to 48 rows from the table of all its vertices (every range and
bootstrap resample of it at once), a longer one by a descent from vertex to
vertex, each step a weighted median [Wesolowsky, Commun. Statist. Simul. Comput.
10, 1981], in a millisecond for 2,000 rows, with HiGHS
(:func:`scipy.optimize.linprog`) to fall back on.

γ is not separable from these logs: a reduction's γ·n term is proportional to
n like the β term, so its cost is folded into β and γ is left 0.

Real libraries switch protocols and algorithms with the size (NCCL's LL, LL128
and Simple; eager and rendezvous in MPI), so one line fits poorly across eight
decades.  The sizes are split into 1–3 contiguous segments, each with its own α
and β, at least four sizes each (a log with fewer fits one line, with a
warning).  Breakpoints are searched on a grid of at most 36 candidates spaced
evenly among the distinct sizes (every size of a sweep of up to 36 sizes, such
as 8 B to 256 MiB) and over at most 2,000 evenly spaced rows, each candidate segment one cached LP, so
the search costs O(36²) LP solves however long the log; the best split of each
count has the least Σ|relative error|.  The count is chosen by the BIC of
Laplace errors, ``2N·ln(Σ|e|/N) + k·ln N`` with k = 3s − 1 parameters (α, β
per segment and s − 1 breakpoints), and an extra segment must also cut Σ|e| by
at least 35 % (two splits searched over every position fit noise by up to ≈ 32 %
on a clean noisy line).  A mean |error| below 10⁻⁶ counts as exact (timer
resolution), so noise-free data keep one segment.  A fall of the bandwidth n/T
by more than 3× between adjacent sizes is a collapse: a warning, not a reason
for a segment.  The profile keeps every segment (``[[segment]]`` tables), which
price every message by the segment of its size (placed by the fitted algorithm's
messages, a ring's n/p), parameters measured per range of message sizes as in
PLogP [Kielmann, Bal & Verstoep, IPDPS Workshops 2000]; its one-line summary link
takes α from the first segment (the small messages) and β from the last (the
bandwidth regime).

A fit has a target (:class:`FitTarget`): median |relative error| at most 5 % over
all sizes and 3 % from 1 MiB on, and no size beyond what chance allows a fit at
those medians (:func:`size_limit`); a miss is its first warning.  An α fitted to
osu_bw's streamed times, or below :data:`ALPHA_FLOOR_S`, is warned of as no
latency; :func:`fit_logs` fits several logs, osu_latency's and osu_bw's as one
link (:func:`fit_latency_and_bandwidth`).

Default algorithms (override with ``algorithm=``):

=================================  ==================  ===============================================
collective                         algorithm           why
=================================  ==================  ===============================================
allreduce, allgather,              ring                NCCL's large-message algorithm; the bandwidth
reduce-scatter                                         term matches nccl-tests' busbw factor
alltoall                           pairwise            p − 1 exchanges, what NCCL and MPI do
broadcast, reduce                  binomial            linear in n with no free parameter, and the
                                                       MPI default for the short and medium sizes
                                                       OSU measures; NCCL pipelines both along a
                                                       ring (b ≈ 1), so β from an nccl-tests log is
                                                       ⌈log₂p⌉ times smaller than the link's
gather, scatter                    binomial            MPI's default
pt2pt (osu_latency, osu_bw,        —                   a = 1, b = 1: one message, α + nβ
sendrecv_perf)
=================================  ==================  ===============================================

Algorithms with a free integer parameter (pipelined-chain segments, the
double binary tree's blocks) need it fixed: ``extra={"segments": 8}``.

Examples
--------
Times generated from α = 5 µs and β = 0.08 ns/B with the ring all-reduce at
p = 8 give those values back:

>>> from costmodel.calibration.logs import Measurements, Row
>>> def ring(n): return 14 * Fraction(5, 10**6) + Fraction(7, 4) * n * Fraction(8, 10**11)
>>> rows = tuple(Row(n_bytes=2**k, time_s=ring(2**k)) for k in range(3, 28))
>>> f = fit(Measurements(tool="costmodel-csv", collective="allreduce", p=8, rows=rows))
>>> f.algorithm, len(f.segments), round(f.alpha_s * 1e6, 9), round(f.beta_s_per_byte * 1e9, 12)
('ring', 1, 5.0, 0.08)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations, pairwise
from typing import Any

from costmodel._frames import frame
from costmodel._json import real, to_json_dict
from costmodel.calibration.logs import PT2PT, Measurements, Row, bus_factor, canonical_collective
from costmodel.calibration.spread import quantile
from costmodel.errors import CalibrationError, InputError
from costmodel.references import KIELMANN_2000, MOLKA_2009, WESOLOWSKY_1981
from costmodel.validate import whole

__all__ = [
    "ALPHA_FLOOR_S",
    "DEFAULT_ALGORITHMS",
    "MAX_SEGMENTS",
    "MIN_POINTS",
    "TARGET_CHANCE",
    "TARGET_MEDIAN",
    "TARGET_MEDIAN_GE_1MIB",
    "Fit",
    "FitTarget",
    "Residual",
    "Segment",
    "SegmentCount",
    "coefficients",
    "fit",
    "fit_latency_and_bandwidth",
    "fit_logs",
    "size_limit",
]

CITED = (KIELMANN_2000, WESOLOWSKY_1981, MOLKA_2009)
"""Parameters measured per range of message sizes, the segments a profile keeps (PLogP); the descent that
solves each segment's least-absolute-error programme; the cache-line transfers under the floor of α."""

DEFAULT_ALGORITHMS = {
    "allreduce": "ring",
    "allgather": "ring",
    "reduce-scatter": "ring",
    "alltoall": "pairwise",
    "broadcast": "binomial",
    "reduce": "binomial",
    "gather": "binomial",
    "scatter": "binomial",
}
"""The algorithm assumed for each collective when none is given (see the module docstring)."""

MAX_SEGMENTS = 3
MIN_POINTS = 4
"""Fewest distinct sizes in a segment of a split (a line through 2 points fits anything)."""

TARGET_MEDIAN = 0.05
"""A fit's target: median |relative error| at most this over all sizes (docs/calibration.md)."""
TARGET_MEDIAN_GE_1MIB = 0.03
"""... and at most this over the sizes from 1 MiB on, the bandwidth regime."""
TARGET_CHANCE = 0.05
"""... and no size further off than a fit at those medians would put one by chance this often (see
:func:`size_limit`)."""
ALPHA_FLOOR_S = 50e-9
"""The least start-up of a message between two ranks: it moves at least two cache lines (data and flag)
from one core to another, each tens of nanoseconds on a server [Molka et al., PACT 2009]; a network adds
a PCIe round trip.  A fitted α below it is not a latency."""

_ONE_MIB = 1 << 20
_FLOOR = 1e-6
"""Relative residuals below this are timer resolution: the mean |relative error| is floored at it."""
_GRID = 36
"""Most candidate breakpoints of the split search (evenly spaced among the sizes)."""
_SEARCH_ROWS = 2000
"""Most rows the split search fits (an evenly spaced subsample above this)."""
_BOOT = 100
"""Bootstrap resamples per segment for the confidence intervals (seed 0: the same intervals every run)."""
_BOOT_ROWS = 1000
"""Most rows one bootstrap resample draws from (see :func:`_solve`)."""
_TABLE = 48
"""Most rows of a log or a segment solved from a table of its vertices (:class:`_Vertices`)."""
_MAX_STEPS = 500
"""Most moves of :func:`_descend` before HiGHS takes over (it needs 2–10 on the logs under tests/data)."""
_ACTIVE = 1e-11
"""A row whose relative residual is below this passes through the point :func:`_descend` stands on."""
_ON_LINE = 1e-12
"""A relative error smaller than this is 0: the row lies on the line (an L1 line passes through rows), and
the sign of the float rounding left over depends on the solver and the machine, not on the data."""
_OUTLIER = 3
"""A row is an outlier when its |relative error| exceeds this many times its segment's median."""
_OUTLIER_MIN = 0.01
"""... and exceeds this (1 %: run-to-run noise), so that a near-exact fit flags nothing."""
_GAIN = 0.35
"""An extra segment is kept only if it cuts Σ|relative error| by this fraction (and lowers the BIC)."""
_COLLAPSE = 3
"""A drop of the bandwidth n/T by more than this factor between adjacent sizes is a collapse."""
_FASTER = 1.25
"""The last segment's 1/β may exceed the best measured bus bandwidth by this factor before a warning (the α of
the largest sizes makes the measured one a little lower: 0–7 % on the logs under tests/data)."""
_SLOWER = 0.1
"""Segment 1's α·a(p) may exceed the smallest measured time by this fraction (noise) before a warning."""
_MODE_GAP = 0.05
"""The least gap between two clusters of relative errors that makes the noise bimodal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    """α and β of one contiguous range of sizes.

    ``alpha_ci_s`` and ``beta_ci_s_per_byte`` are 95 % percentile-bootstrap
    intervals (rows resampled 100 times with seed 0, each resample refitted by
    the LP; cut at 0 since neither can be negative), ``None`` for a segment of 2
    rows.  ``alpha_at_bound`` marks a parameter the LP held at its bound 0.
    """

    from_bytes: int
    to_bytes: int
    alpha_s: float
    beta_s_per_byte: float
    alpha_ci_s: tuple[float, float] | None
    beta_ci_s_per_byte: tuple[float, float] | None
    alpha_at_bound: bool
    beta_at_bound: bool
    median_rel_error: float
    points: int

    @property
    def bandwidth_bytes_per_s(self) -> float | None:
        """1/β, or None when β is 0."""
        return 1 / self.beta_s_per_byte if self.beta_s_per_byte > 0 else None

    def time_s(self, n_bytes: float, a: Fraction, b: Fraction) -> float:
        """The model time at *n_bytes* with coefficients a(p), b(p)."""
        return float(a) * self.alpha_s + float(b) * float(n_bytes) * self.beta_s_per_byte

    def to_dict(self) -> dict[str, object]:
        return {
            "from_bytes": self.from_bytes,
            "to_bytes": self.to_bytes,
            "alpha_s": self.alpha_s,
            "beta_s_per_byte": self.beta_s_per_byte,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "ci": {
                "level": 0.95,
                "alpha_s": None if self.alpha_ci_s is None else list(self.alpha_ci_s),
                "beta_s_per_byte": None if self.beta_ci_s_per_byte is None else list(self.beta_ci_s_per_byte),
            },
            "alpha_at_bound": self.alpha_at_bound,
            "beta_at_bound": self.beta_at_bound,
            "median_rel_error": self.median_rel_error,
            "points": self.points,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Residual:
    """One measured row against the model: ``rel_error = (model − measured)/measured``, exactly 0 for a
    row on the line (below 10⁻¹², float rounding).

    ``outlier``: |rel_error| is more than 3× its segment's median |rel_error| (and
    more than 1 %, run-to-run noise).

    ``segment`` is the number of the segment that models the row, counted from 1
    (``Fit.segments[segment - 1]``), as ``costmodel calibrate fit`` and ``calibrate report`` show it.
    """

    n_bytes: int
    measured_s: Fraction
    model_s: float
    rel_error: float
    segment: int
    line: int | None = None
    outlier: bool = False

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("outlier", "n_bytes", "measured_s", "model_s", "rel_error", "segment",
                                   "line"), keep_floats=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class SegmentCount:
    """The best split with *segments* segments: its Σ|relative error| (of the searched rows) and BIC."""

    segments: int
    sae: float
    bic: float
    breakpoints: tuple[int, ...]

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, rename={"breakpoints": "breakpoints_bytes"}, keep_floats=True)


def size_limit(median: float, sizes: int) -> float:
    """The |relative error| that the worst of *sizes* sizes exceeds with chance :data:`TARGET_CHANCE` when
    the errors are Laplace with median |error| *median* (the L1 fit's own error model).

    |e| is then exponential, P(|e| > x) = 2^(−x/median), so the worst of N stays below
    x = median·log₂(1/(1 − 0.95^(1/N))) with chance 95 %.

    >>> round(size_limit(0.03, 14), 4), round(size_limit(0.05, 31), 4), round(size_limit(0.03, 1), 4)
    (0.2429, 0.462, 0.1297)
    """
    return median * math.log2(1 / (1 - (1 - TARGET_CHANCE) ** (1 / sizes)))


@dataclass(frozen=True, slots=True, kw_only=True)
class FitTarget:
    """How a fit stands against its target: median |relative error| at most :data:`TARGET_MEDIAN` over all
    sizes and :data:`TARGET_MEDIAN_GE_1MIB` from 1 MiB on, and no size beyond its :func:`size_limit` (that
    of the sizes from 1 MiB on for those, that of all sizes for the others).

    ``worst_n_bytes`` and ``worst_rel_error`` are the size furthest off for its limit and its error;
    ``misses`` says, in words, each part of the target the fit misses (empty when ``met``).
    """

    met: bool
    worst_n_bytes: int
    worst_rel_error: float
    size_limit: float
    size_limit_ge_1mib: float | None
    misses: tuple[str, ...] = ()
    median_limit: float = TARGET_MEDIAN
    median_ge_1mib_limit: float = TARGET_MEDIAN_GE_1MIB

    def line(self) -> str | None:
        """The one line that says the target is missed, and where; ``None`` when it is met."""
        return None if self.met else "target missed: " + "; ".join(self.misses)

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("met", "worst_n_bytes", "worst_rel_error", "median_limit",
                                   "median_ge_1mib_limit", "size_limit", "size_limit_ge_1mib", "misses"),
                            keep_floats=True)


def _target(residuals: Sequence[Residual], median: float, median_ge_1mib: float | None) -> FitTarget:
    """The fit's :class:`FitTarget` from its residuals and medians."""
    late = [r for r in residuals if r.n_bytes >= _ONE_MIB]
    everywhere = size_limit(TARGET_MEDIAN, len(residuals))
    from_1mib = size_limit(TARGET_MEDIAN_GE_1MIB, len(late)) if late else None

    def limit(r: Residual) -> float:
        return from_1mib if from_1mib is not None and r.n_bytes >= _ONE_MIB else everywhere

    worst = max(residuals, key=lambda r: abs(r.rel_error) / limit(r))
    beyond = [r for r in residuals if abs(r.rel_error) > limit(r)]
    misses = []
    if beyond:
        where = ("at any size" if from_1mib is None else
                 "from 1 MiB on" if worst.n_bytes >= _ONE_MIB else "below 1 MiB")
        more = f", and {len(beyond) - 1} more size{'s' if len(beyond) > 2 else ''} beyond theirs" \
            if len(beyond) > 1 else ""
        misses.append(f"{_short(worst.n_bytes)} is {worst.rel_error:+.1%} off (at most {limit(worst):.1%} "
                      f"{where}){more}")
    if median > TARGET_MEDIAN:
        misses.append(f"median |error| {median:.2%} (at most {TARGET_MEDIAN:.0%})")
    if median_ge_1mib is not None and median_ge_1mib > TARGET_MEDIAN_GE_1MIB:
        count = len({r.n_bytes for r in late})
        rests = f", on {count} size{'s' if count > 1 else ''}" if count < MIN_POINTS else ""
        misses.append(f"median |error| from 1 MiB on {median_ge_1mib:.2%} (at most "
                      f"{TARGET_MEDIAN_GE_1MIB:.0%}{rests})")
    return FitTarget(met=not misses, worst_n_bytes=worst.n_bytes, worst_rel_error=worst.rel_error,
                     size_limit=everywhere, size_limit_ge_1mib=from_1mib, misses=tuple(misses))


@dataclass(frozen=True, slots=True, kw_only=True)
class Fit:
    """α and β fitted to one log, per size segment, with the residual of every row.

    ``alpha_s`` is the first segment's (the small messages: the start-up,
    capped at the smallest measured time over a(p) and never 0 when the small
    messages take time) and ``beta_s_per_byte`` the last segment's (the largest
    sizes: the bandwidth regime); :meth:`predict` uses the segment that covers
    the size asked for.  ``alpha_from`` and ``beta_from`` say where they come
    from, in words (with the reason when α is capped).  ``warnings`` are the
    sanity warnings: the target missed (``target``), too few sizes, outliers by
    size, a collapse of the bandwidth, an α that is no start-up latency.
    """

    collective: str
    p: int
    algorithm: str
    alpha_s: float
    beta_s_per_byte: float
    segments: tuple[Segment, ...]
    residuals: tuple[Residual, ...]
    median_rel_error: float
    median_rel_error_ge_1mib: float | None
    notes: tuple[str, ...]
    latency_coefficient: Fraction
    bandwidth_coefficient: Fraction
    formula: str
    tool: str = ""
    source: str | None = None
    path: str = ""
    in_place: bool = False
    selection: tuple[SegmentCount, ...] = ()
    warnings: tuple[str, ...] = ()
    target: FitTarget | None = None
    alpha_from: str = "segment 1"
    beta_from: str = ""

    @property
    def bandwidth_bytes_per_s(self) -> float | None:
        return 1 / self.beta_s_per_byte if self.beta_s_per_byte > 0 else None

    @property
    def link_beta_from(self) -> str:
        """Where ``[link]``'s β comes from, in words (by default the last segment)."""
        return self.beta_from or f"segment {len(self.segments)}"

    def segment_for(self, n_bytes: float) -> Segment:
        """The segment that prices *n_bytes*: the last whose first size is at most *n_bytes* (the first
        segment below its range), the rule of :class:`costmodel.params.PiecewiseLink`."""
        chosen = self.segments[0]
        for segment in self.segments[1:]:
            if n_bytes >= segment.from_bytes:
                chosen = segment
        return chosen

    def predict(self, n_bytes: Any) -> float:
        """The modelled time in seconds of one operation on *n_bytes* (a number or a size like ``"1MiB"``).

        Raises
        ------
        InputError, UnitError
            For a negative or malformed size.
        """
        from costmodel.units import parse_size

        n = float(parse_size(n_bytes))
        return self.segment_for(n).time_s(n, self.latency_coefficient, self.bandwidth_coefficient)

    def to_dict(self) -> dict[str, object]:
        bandwidth = self.bandwidth_bytes_per_s
        return {
            "collective": self.collective,
            "p": self.p,
            "algorithm": self.algorithm,
            "formula": self.formula,
            "latency_coefficient": real(self.latency_coefficient),
            "bandwidth_coefficient": real(self.bandwidth_coefficient),
            "alpha_s": self.alpha_s,
            "beta_s_per_byte": self.beta_s_per_byte,
            "gamma_s_per_byte": 0,
            "bandwidth_bytes_per_s": bandwidth,
            "segments": [{**s.to_dict(), "slope": k < len(self.segments) - 1}
                         for k, s in enumerate(self.segments)],
            "median_rel_error": self.median_rel_error,
            "median_rel_error_ge_1mib": self.median_rel_error_ge_1mib,
            "residuals": [r.to_dict() for r in self.residuals],
            "selection": [c.to_dict() for c in self.selection],
            "tool": self.tool,
            "source": self.source,
            "path": self.path,
            "in_place": self.in_place,
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "target": None if self.target is None else self.target.to_dict(),
            "alpha_from": self.alpha_from,
            "beta_from": self.link_beta_from,
        }

    def to_frame(self) -> Any:
        """The residuals as a ``pandas.DataFrame``, one row per measured row in the log's order:
        ``n_bytes``, ``measured_s``, ``model_s``, ``rel_error``, ``segment``, ``line``, ``outlier``;
        ``df.attrs`` hold the collective, p, algorithm, ``alpha_s`` and ``beta_s_per_byte``."""
        attrs = {"collective": self.collective, "p": self.p, "algorithm": self.algorithm,
                 "alpha_s": self.alpha_s, "beta_s_per_byte": self.beta_s_per_byte}
        return frame((r.to_dict() for r in self.residuals),
                     ("n_bytes", "measured_s", "model_s", "rel_error", "segment", "line", "outlier"),
                     attrs=attrs)

    def summary_lines(self) -> list[str]:
        """The fit in words, one line per segment (the profile's notes)."""
        from costmodel.units import format_inverse_rate, format_size, format_time

        times = "in-place" if self.in_place else "out-of-place"
        lines = [
            f"fitted by costmodel: {self.collective} {self.algorithm}, T(n) = {self.formula}, p = {self.p} "
            f"(a = {self.latency_coefficient}, b = {self.bandwidth_coefficient})",
            f"{self.tool or 'log'}, {times} times, {len(self.residuals)} rows; median |relative error| "
            f"{_percent(self.median_rel_error)} over all sizes, "
            f"{_percent(self.median_rel_error_ge_1mib)} over sizes >= 1 MiB",
        ]
        for i, s in enumerate(self.segments, start=1):
            lines.append(
                f"segment {i}: {format_size(s.from_bytes)} to {format_size(s.to_bytes)}: "
                f"alpha = {format_time(s.alpha_s)}, beta = {format_inverse_rate(s.beta_s_per_byte)}, "
                f"median error {_percent(s.median_rel_error)} ({s.points} rows)"
            )
        if self.beta_from:  # fitted from two logs: say which
            lines.append(f"[link] holds alpha from {self.alpha_from} and beta from {self.beta_from}; "
                         "[[segment]] prices each size")
        else:
            lines.append("[link] holds alpha of the smallest sizes (segment 1) and beta of the largest "
                         f"(segment {len(self.segments)}, the bandwidth regime); [[segment]] prices each "
                         "size")
        return lines

    def to_profile_toml(self, *, name: str, title: str | None = None, others: Sequence[Fit] = (),
                        source: str | None = None, locator: str | None = None) -> str:
        """A profile file holding this fit, and the fits of *others* (other collectives) as their own tables.

        ``[link]`` is the summary (α of the first segment, capped, and β of the
        last); ``[fit]`` and ``[[segment]]`` hold this fit, one table per segment;
        each fit of *others* is a ``[collective.NAME]`` table with its segments
        (the format is in :mod:`costmodel.profiles`).  It loads with
        :func:`costmodel.profiles.parse_profile`.  *source* replaces the log's own ``# source:`` line (a key
        of :mod:`costmodel.references`, or text), *locator* says where in it.
        """
        from costmodel.units import format_inverse_rate, format_time

        if not name or not name.strip():
            raise InputError(f"name={name!r} is empty; give the profile a name, e.g. name='my-cluster'")
        seen = [self.collective, *(f.collective for f in others)]
        repeated = next((c for c in seen if seen.count(c) > 1), None)
        if repeated is not None:
            raise InputError(f"{repeated} is fitted twice; a profile keeps one table per collective")
        if title is None:
            title = (f"{self.collective} {self.algorithm} fit, p = {self.p}: "
                     f"alpha {format_time(self.alpha_s)}, beta {format_inverse_rate(self.beta_s_per_byte)}")
        for what, text in (("title", title), ("source", source), ("locator", locator)):
            if text is not None and (not text.strip() or "\n" in text or "\r" in text):
                raise InputError(f"the profile's {what} {text!r} is not one line of text; give one line")
        if source is None:
            source = self.source or self.path or "calibration"
        if source.lower().startswith("# source:"):
            source = source[len("# source:"):].strip()
        where = "" if locator is None else f"locator = {_toml(locator.strip())}\n"
        notes = ",\n".join(f"    {_toml(line)}" for line in [*self.summary_lines(), *self.notes])
        parts = [
            "[profile]\n"
            f"name = {_toml(name.strip())}\n"
            f"title = {_toml(title)}\n"
            f"source = {_toml(source.strip())}\n"
            f"{where}"
            "\n"
            "[link]\n"
            f"alpha = {_toml(_us(self.alpha_s))}\n"
            "alpha_estimate = false\n"
            f"beta = {_toml(_ns(self.beta_s_per_byte))}\n"
            f"notes = [\n{notes},\n]\n",
            f"[fit]\ncollective = {_toml(self.collective)}\n{self._fit_keys()}"
            + self._segment_tables("segment"),
        ]
        for other in others:
            parts.append(f"[collective.{other.collective}]\n" + other._fit_keys()
                         + other._segment_tables(f"collective.{other.collective}.segment"))
        return "\n".join(parts)

    def _fit_keys(self) -> str:
        """The keys of a ``[fit]`` (or ``[collective.NAME]``) table, but the collective."""
        lines = [
            f"algorithm = {_toml(self.algorithm)}",
            f"p = {self.p}",
            f"formula = {_toml(self.formula)}",
            f"latency_coefficient = {_toml(str(self.latency_coefficient))}",
            f"bandwidth_coefficient = {_toml(str(self.bandwidth_coefficient))}",
            f"tool = {_toml(self.tool or 'log')}",
            f"rows = {len(self.residuals)}",
            f"median_error = {_share(self.median_rel_error)}",
        ]
        if self.median_rel_error_ge_1mib is not None:
            lines.append(f"median_error_ge_1mib = {_share(self.median_rel_error_ge_1mib)}")
        if self.target is not None:
            lines += [f"target_met = {'true' if self.target.met else 'false'}",
                      f"worst_bytes = {self.target.worst_n_bytes}",
                      f"worst_error = {_signed(self.target.worst_rel_error)}"]
        if self.in_place:
            lines.append("in_place = true")
        warnings = "".join(f"    {_toml(w)},\n" for w in self.warnings)
        lines.append(f"warnings = [\n{warnings}]" if warnings else "warnings = []")
        return "\n".join(lines) + "\n"

    def _segment_tables(self, label: str) -> str:
        out = []
        for s in self.segments:
            rows = [f"\n[[{label}]]", f"from_bytes = {s.from_bytes}", f"to_bytes = {s.to_bytes}",
                    f"alpha = {_toml(_us(s.alpha_s))}", f"beta = {_toml(_ns(s.beta_s_per_byte))}",
                    f"points = {s.points}", f"error = {_share(s.median_rel_error)}"]
            for key, ci, unit in (("alpha_ci", s.alpha_ci_s, _us), ("beta_ci", s.beta_ci_s_per_byte, _ns)):
                if ci is not None:
                    rows.append(f"{key} = [{_toml(unit(ci[0]))}, {_toml(unit(ci[1]))}]")
            out.append("\n".join(rows) + "\n")
        return "".join(out)


def _us(seconds: float) -> str:
    from costmodel.units import format_number

    return f"{format_number(seconds * 1e6, digits=6)} us"


def _ns(seconds_per_byte: float) -> str:
    from costmodel.units import format_number

    return f"{format_number(seconds_per_byte * 1e9, digits=6)} ns/B"


def _signed(x: float) -> str:
    """A signed relative error as TOML: a float with 4 significant digits (never -0)."""
    return repr(float(f"{x:.4g}") + 0.0)


def _share(x: float) -> str:
    """A relative error as TOML: a float with 4 significant digits (never an integer, never -0)."""
    return repr(float(f"{abs(x):.4g}"))


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def _percent(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f} %"


# --------------------------------------------------------------------------- coefficients


def coefficients(
    collective: str, algorithm: str | None, p: int, extra: Mapping[str, int] | None = None,
) -> tuple[str, Fraction, Fraction, str, tuple[str, ...]]:
    """(algorithm, a(p), b(p), formula, notes): the model T = a·α + b·n·β from the registry.

    >>> coefficients("allreduce", None, 16)[:3]
    ('ring', Fraction(30, 1), Fraction(15, 8))
    >>> coefficients("pt2pt", None, 2)[:3]
    ('pt2pt', Fraction(1, 1), Fraction(1, 1))

    Raises
    ------
    UnknownNameError, ConstraintError, InputError
        For an unknown algorithm, one that cannot run at p, or a free parameter not given.
    """
    from costmodel.collectives._math import TEXT, Term
    from costmodel.collectives._registry import resolve
    from costmodel.collectives.evaluate import applicable, check_ranks, linear_terms
    from costmodel.params import LinkParams

    if collective == PT2PT:
        if algorithm not in {None, "", PT2PT}:
            raise InputError(f"algorithm {algorithm!r} does not apply to pt2pt; "
                             "a message costs alpha + n·beta")
        return PT2PT, Fraction(1), Fraction(1), "α + n·β", ()
    p = check_ranks(p)
    algo = resolve(collective, algorithm or DEFAULT_ALGORITHMS[collective])
    runs, notes = applicable(algo, p)
    alpha = linear_terms(algo, p, LinkParams(alpha_s=Fraction(1), beta_s_per_byte=Fraction(0)), extra)
    beta = linear_terms(algo, p, LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1)), extra)
    if alpha is None or beta is None:
        free = ", ".join(f"{e.name!r}" for e in runs.extra if e.name not in (extra or {}))
        raise InputError(f"algorithm {runs.name!r} has a free parameter ({free}) that makes its cost "
                         f"nonlinear in n; fix it, e.g. extra={{{free.split(',')[0]}: 8}}")
    values = ", ".join(f"{k} = {v}" for k, v in (extra or {}).items())
    symbols = {e.symbol: Term(e.symbol) for e in runs.extra}
    terms = (Term.lift(f(Term("p"), Term("n"), TEXT, **symbols)) * Term(x)
             for f, x in ((runs.latency, "α"), (runs.bandwidth, "β")))
    formula = str(sum(terms, Term.lift(0)))
    if values:
        formula += f" with {values}"
    return runs.name, alpha[0], beta[1], formula, notes


# --------------------------------------------------------------------------- least absolute relative error


@dataclass(frozen=True, slots=True)
class _Solved:
    theta: tuple[float, float]
    sae: float
    ci: tuple[tuple[float, float] | None, tuple[float, float] | None]
    at_bound: tuple[bool, bool]


def _design(sizes: Any, a: float, b: float) -> Any:
    import numpy as np

    n = np.asarray(sizes, dtype=float)
    return np.column_stack([np.full_like(n, a), b * n])


def _lad(x: Any, t: Any, start: Any = None) -> tuple[Any, float]:
    """(θ ≥ 0, Σ|x·θ/t − 1|): the least absolute relative error, a linear programme solved exactly.

    :func:`_descend` finds the optimum, starting from *start* when given (a nearby
    segment's θ, which makes it a few weighted medians); in the unexpected case that
    it does not settle within :data:`_MAX_STEPS` moves, HiGHS solves the programme
    (:func:`_lad_highs`).
    """
    w = x / t[:, None]
    solved = _descend(w, start)
    return solved if solved is not None else _lad_highs(x, t)


def _lad_highs(x: Any, t: Any) -> tuple[Any, float]:
    """:func:`_lad` by HiGHS.

    The dual of min_{θ≥0} ‖Wθ − 1‖₁ (W = x/t, columns scaled to unit max) is
    max 1ᵀe subject to Wᵀe ≤ 0, −1 ≤ e ≤ 1: two constraints and one bounded
    variable per row, which HiGHS solves in milliseconds for thousands of rows.
    θ is the dual of that programme's two constraints (its marginals, negated),
    the optimum of the primal by LP duality [Bloomfield & Steiger, *Least Absolute
    Deviations*, 1983, ch. 2].
    """
    import numpy as np
    from scipy.optimize import linprog

    xw = x / t[:, None]
    scale = np.abs(xw).max(axis=0)
    scale[scale == 0] = 1.0
    xs = xw / scale
    res = linprog(-np.ones(len(t)), A_ub=xs.T, b_ub=np.zeros(2), bounds=(-1, 1),
                  method="highs-ipm" if len(t) > 2000 else "highs")
    if res.status != 0:
        raise CalibrationError(f"the least-absolute-error programme failed: {res.message}")
    theta = np.maximum(-np.asarray(res.ineqlin.marginals), 0.0) / scale
    return theta, float(np.abs(xw @ theta - 1.0).sum())


def _descend(w: Any, start: Any = None) -> tuple[Any, float] | None:
    """min over θ ≥ 0 of Σ|wᵢ·θ − 1| by descent along the lines wᵢ·θ = 1; None if it does not settle.

    The objective is convex and piecewise linear, so its minimum lies at a vertex of the
    arrangement of the rows' lines and the two axes, and along any one line it is a
    weighted sum of |u − uᵢ|, least at the weighted median of the crossings uᵢ.  From a
    start (*start*, else the least-squares θ, scaled along its ray to the best point of
    that ray), each move goes to the best point of the line it stands on, a vertex,
    then along the line it crossed there, as long as the sum falls by more than rounding
    [Wesolowsky 1981: the direct descent by weighted medians, here for two parameters].  Where
    it stops, every line and axis through the point is tried (a vertex where more than
    two lines cross); none lowering the sum is the certificate of the optimum: a
    convex piecewise-linear function has no descent direction other than along the
    edges of its pieces.  Each move is one sort of the m crossings.
    """
    import numpy as np

    lines = _Lines(w)
    theta, c = lines.start(start)
    best = lines.total(theta)

    def lower(step: tuple[Any, int, float] | None) -> bool:  # lowers the sum by more than rounding
        return step is not None and step[2] < best - 1e-13 * max(best, 1.0)

    for _ in range(_MAX_STEPS):
        step = lines.best_on(theta, c)
        if not lower(step):  # stuck on c: try every other line and axis through the point
            residual = lines.v @ theta - 1.0
            through = [*(int(i) for i in np.flatnonzero(np.abs(residual) <= _ACTIVE) if i != c),
                       *(lines.m + j for j in (0, 1) if theta[j] == 0 and lines.m + j != c)]
            step = next((s for s in (lines.best_on(theta, a) for a in through) if lower(s)), None) \
                if best > 1e-12 else None
            if step is None:
                out = theta / lines.scale
                return out, float(np.abs(w @ out - 1.0).sum())
        assert step is not None  # for mypy: lower() holds only for a step
        theta, c, best = step
    return None


class _Lines:
    """The lines of :func:`_descend`: constraint c < m is row c's line v[c]·θ = 1 (the rows scaled by the
    columns' largest entries, as HiGHS is given them), c = m + j the axis θⱼ = 0."""

    def __init__(self, w: Any) -> None:
        import numpy as np

        self.m = len(w)
        self.present = np.abs(w).max(axis=0) > 0  # a column of zeros leaves its parameter at 0, as HiGHS does
        self.scale = np.where(self.present, np.abs(w).max(axis=0), 1.0)
        self.v = w / self.scale
        self.axes = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))

    def normal(self, c: int) -> tuple[Any, float]:
        return (self.v[c], 1.0) if c < self.m else (self.axes[c - self.m], 0.0)

    def total(self, theta: Any) -> float:
        import numpy as np

        return float(np.abs(self.v @ theta - 1.0).sum())

    def start(self, start: Any) -> tuple[Any, int]:
        """The best point of the ray through *start* (scaled θ; else least squares) and the line it is on:
        the weighted median of 1/(vᵢ·ray), weights vᵢ·ray."""
        import numpy as np

        ray = np.asarray(start, dtype=float) * self.scale if start is not None else \
            np.linalg.lstsq(self.v, np.ones(self.m), rcond=None)[0]
        ray = np.where(self.present, np.maximum(ray, 0.0), 0.0)
        if not ray.any():
            ray = self.present.astype(float)
        along = self.v @ ray
        on = np.flatnonzero(along > 0)
        order = np.argsort(1.0 / along[on], kind="stable")
        weight = np.cumsum(along[on][order])
        c = int(on[order[int(np.searchsorted(weight, weight[-1] / 2))]])
        return ray / along[c], c

    def best_on(self, theta: Any, c: int) -> tuple[Any, int, float] | None:
        """The best point of constraint c's line within θ ≥ 0, the constraint crossed there, and the sum."""
        import numpy as np

        g = self.normal(c)[0]
        d = np.array([-g[1], g[0]])
        slope = self.v @ d
        moving = np.flatnonzero(slope)
        if not len(moving):
            return None
        cross = -(self.v[moving] @ theta - 1.0) / slope[moving]
        order = np.argsort(cross, kind="stable")
        weight = np.cumsum(np.abs(slope[moving])[order])
        k = int(np.searchsorted(weight, weight[-1] / 2))
        u, hit = float(cross[order[k]]), int(moving[order[k]])
        for j in (0, 1):  # stay in θ ≥ 0
            if d[j] != 0 and (theta[j] + u * d[j] < 0):
                u, hit = -theta[j] / d[j], self.m + j
        (g1, h1), (g2, h2) = self.normal(c), self.normal(hit)
        det = g1[0] * g2[1] - g1[1] * g2[0]
        point = (np.array([(h1 * g2[1] - h2 * g1[1]) / det, (g1[0] * h2 - g2[0] * h1) / det]) if det
                 else theta + u * d)
        point = np.maximum(point, 0.0)
        for on in (c, hit):
            if on >= self.m:
                point[on - self.m] = 0.0
        return point, hit, self.total(point)


def _varies(values: Any) -> bool:
    """Whether an array holds two different values (``np.unique`` would load numpy.ma to say so)."""
    return bool(len(values) and (values != values[0]).any())


def _solve(x: Any, t: Any) -> _Solved:
    """The LAD fit of one segment with 95 % percentile-bootstrap intervals (rows resampled, seed 0).

    With more than :data:`_BOOT_ROWS` rows the bootstrap resamples an evenly spaced
    subsample of that many rows and the interval is narrowed about θ by
    √(subsample/rows), the m-out-of-n rescaling [Bickel, Götze & van Zwet,
    Statist. Sinica 7, 1997].
    """
    import numpy as np

    m = len(t)
    table = _Vertices(x / t[:, None]) if m <= _TABLE else None
    if table is not None:
        theta, least = table.best(np.ones(m))
        sae = float(least)
    else:
        theta, sae = _lad(x, t)
    bound = (bool(theta[0] == 0), bool(theta[1] == 0))
    if m <= 2:
        return _Solved((float(theta[0]), float(theta[1])), sae, (None, None), bound)
    pick = np.arange(m) if m <= _BOOT_ROWS else np.linspace(0, m - 1, _BOOT_ROWS).round().astype(int)
    shrink = math.sqrt(len(pick) / m)
    resamples = []
    for draw in _draws(_BOOT * len(pick), len(pick)).reshape(_BOOT, len(pick)):
        idx = pick[draw]
        if not _varies(x[idx, 1]) and x[0, 1] != 0:
            continue
        resamples.append(idx)
    if not resamples:
        return _Solved((float(theta[0]), float(theta[1])), sae, (None, None), bound)
    if table is not None:  # every resample at once: its rows counted, the least weighted column sum
        sample = table.best(np.array([np.bincount(idx, minlength=m) for idx in resamples]))[0]
    else:
        sample = np.array([_lad(x[idx], t[idx], start=theta)[0] for idx in resamples])
    ci: list[tuple[float, float]] = []
    for j in (0, 1):
        lo, hi = quantile(sample[:, j], 0.025), quantile(sample[:, j], 0.975)
        lo, hi = theta[j] + (lo - theta[j]) * shrink, theta[j] + (hi - theta[j]) * shrink
        ci.append((max(0.0, float(min(lo, theta[j]))), float(max(hi, theta[j]))))
    return _Solved((float(theta[0]), float(theta[1])), sae, (ci[0], ci[1]), bound)


def _draws(count: int, n: int) -> Any:
    """*count* integers uniform in [0, n), seed 0: SplitMix64 (Steele, Lea & Flood, OOPSLA 2014) of the
    counter 1, 2, …, its top 53 bits scaled to n.  Counter-based, so one vectorised expression; and
    numpy.random, which loads in about a third of numpy's own import time, is not needed."""
    import numpy as np

    z = np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return ((z >> np.uint64(11)).astype(np.float64) * (n / 2.0 ** 53)).astype(np.int64)


class _Vertices:
    """Every vertex of the arrangement of some rows' lines wᵢ·θ = 1 and the two axes within θ ≥ 0, and
    each row's |wᵢ·θ − 1| at each: for a few rows, the L1 optimum of any of their subsets or resamples.

    An optimum of Σ cᵢ|wᵢ·θ − 1| (weights cᵢ ≥ 0: 1 for the rows of a segment, the counts of a
    bootstrap resample) lies at a vertex of its own rows' lines and the axes [Bloomfield & Steiger,
    *Least Absolute Deviations*, 1983, ch. 2: an optimal L1 fit passes through as many rows as it has
    free parameters], and every such vertex is in the table, whose points are all feasible: the least
    weighted column sum is the optimum.  O(m³) work, less than one LP solve for m ≤ :data:`_TABLE`.
    """

    def __init__(self, w: Any) -> None:
        import numpy as np

        i, j = np.triu_indices(len(w), 1)
        wi, wj = w[i], w[j]
        det = wi[:, 0] * wj[:, 1] - wi[:, 1] * wj[:, 0]
        cross = det != 0  # the lines of two rows of one size are parallel
        on_alpha, on_beta = w[:, 0] > 0, w[:, 1] > 0
        theta = np.concatenate([
            np.column_stack([(wj[cross, 1] - wi[cross, 1]) / det[cross],
                             (wi[cross, 0] - wj[cross, 0]) / det[cross]]),
            np.column_stack([1 / w[on_alpha, 0], np.zeros(int(on_alpha.sum()))]),  # on the axis β = 0
            np.column_stack([np.zeros(int(on_beta.sum())), 1 / w[on_beta, 1]]),  # on the axis α = 0
            np.zeros((1, 2)),
        ])
        self.theta = theta[(theta >= 0).all(axis=1)]
        self.error = np.abs(w @ self.theta.T - 1.0)  # rows × vertices

    def best(self, weights: Any) -> tuple[Any, Any]:
        """(θ, Σ) of the least weighted sum, for one weight vector over the rows or a matrix of them."""
        import numpy as np

        sums = weights @ self.error
        k = np.argmin(sums, axis=-1)
        return self.theta[k], np.take_along_axis(sums, np.expand_dims(k, -1), -1).squeeze(-1)

    def least(self, lo: int, hi: int) -> float:
        """The optimum Σ|error| of rows lo..hi − 1."""
        return float(self.error[lo:hi].sum(axis=0).min())


class _Search:
    """The best split of the sizes into 1–3 contiguous segments over a coarse grid of breakpoints.

    Breakpoints fall between groups of equal sizes (repeats of a size are never split), at
    most :data:`_GRID` candidates spaced evenly among them; above :data:`_SEARCH_ROWS` rows
    the search fits an evenly spaced subsample of the rows.  Every candidate segment is one
    LP, cached, so the search costs O(_GRID²) LP solves whatever the length of the log.
    """

    def __init__(self, rows: Sequence[Row], a: Fraction, b: Fraction) -> None:
        import numpy as np

        self.n = np.array([float(r.n_bytes) for r in rows])
        self.t = np.array([float(r.time_s) for r in rows])
        self.x = _design(self.n, float(a), float(b))
        self.starts = [i for i in range(len(rows)) if i == 0 or rows[i].n_bytes != rows[i - 1].n_bytes]
        self.starts.append(len(rows))
        groups = len(self.starts) - 1
        step = max(1, math.ceil(groups / _GRID))
        self.grid = sorted({*range(0, groups, step), groups})
        keep = np.arange(len(rows))
        if len(rows) > _SEARCH_ROWS:  # evenly spaced, each row once (rounding may repeat one)
            keep = np.linspace(0, len(rows) - 1, _SEARCH_ROWS).round().astype(int)
            keep = keep[np.concatenate(([True], keep[1:] != keep[:-1]))]
        self._keep = keep
        self._sae: dict[tuple[int, int], float] = {}
        self._last: Any = None  # the line last fitted, where the next (a neighbouring range) starts
        self._table = _Vertices(self.x / self.t[:, None]) if len(rows) <= _TABLE else None

    @property
    def sizes(self) -> int:
        return len(self.starts) - 1

    @property
    def search_rows(self) -> int:
        return len(self._keep)

    def sae(self, g0: int, g1: int) -> float:
        """Σ|relative error| of one LAD line through size groups [g0, g1) (of the searched rows)."""

        key = (g0, g1)
        if key not in self._sae:
            lo, hi = self.starts[g0], self.starts[g1]
            idx = self._keep[(self._keep >= lo) & (self._keep < hi)]
            if _varies(self.n[idx]) and self._table is not None:
                self._sae[key] = self._table.least(lo, hi)  # every row is searched: idx is lo..hi − 1
            elif _varies(self.n[idx]):
                self._last, self._sae[key] = _lad(self.x[idx], self.t[idx], start=self._last)
            else:
                self._sae[key] = 0.0
        return self._sae[key]

    def best(self, segments: int, min_points: int) -> tuple[float, tuple[int, ...]]:
        """(Σ|error|, group indices where segments 2.. start) of the best split into *segments*."""
        groups = self.sizes
        inner = [g for g in self.grid if min_points <= g <= groups - min_points]
        best: tuple[float, tuple[int, ...]] | None = None
        for cuts in combinations(inner, segments - 1):
            bounds = (0, *cuts, groups)
            if any(hi - lo < min_points for lo, hi in pairwise(bounds)):
                continue
            total = sum(self.sae(lo, hi) for lo, hi in pairwise(bounds))
            if best is None or total < best[0] - 1e-12:
                best = (total, tuple(cuts))
        if best is None:
            raise InputError(f"segments={segments} needs at least {segments * min_points} distinct sizes; "
                             f"the log has {groups}")
        return best


def _bic(sae: float, rows: int, segments: int) -> float:
    """2N·ln(Σ|e|/N) + k·ln N: the BIC of Laplace errors, k = 3s − 1 (α, β per segment, s − 1 breakpoints)."""
    return 2 * rows * math.log(max(sae / rows, _FLOOR)) + (3 * segments - 1) * math.log(rows)


def _median(values: Any) -> float | None:
    """The median of |values| (a sequence or an array), None for none."""
    return quantile([abs(float(v)) for v in values], 0.5) if len(values) else None


def _resolve_p(measurements: Measurements, p: int | None) -> Measurements:
    if p is not None:
        return measurements.with_p(p)
    if measurements.p is None and measurements.collective != PT2PT:
        raise InputError(f"p is not in the {measurements.tool} log {measurements.path}; "
                         "give the number of ranks it ran on (p=N)")
    return measurements


def _choose(search: _Search, segments: int | None, rows: int) -> tuple[tuple[int, ...], list[SegmentCount]]:
    if segments is not None:
        whole(segments, "segments", low=1, high=MAX_SEGMENTS, expected="1, 2 or 3",
              hint="leave it out to choose automatically")
        counts = [segments]
    else:
        counts = list(range(1, max(1, min(MAX_SEGMENTS, search.sizes // MIN_POINTS)) + 1))
    table = []
    for s in counts:
        total, cuts = search.best(s, 1 if s == 1 else MIN_POINTS)
        starts = tuple(int(search.n[search.starts[c]]) for c in cuts)
        bic = _bic(total, search.search_rows, s)
        count = SegmentCount(segments=s, sae=total, bic=bic, breakpoints=starts)
        table.append((count, cuts))
    chosen = table[0]
    for item in table[1:]:
        if item[0].bic < chosen[0].bic and item[0].sae <= (1 - _GAIN) * chosen[0].sae:
            chosen = item
    return chosen[1], [c for c, _ in table]


def fit(
    measurements: Measurements,
    *,
    algorithm: str | None = None,
    p: int | None = None,
    segments: int | None = None,
    in_place: bool | None = None,
    extra: Mapping[str, int] | None = None,
) -> Fit:
    """Fit α and β of the model T(n) = a(p)·α + b(p)·n·β to measured times.

    Parameters
    ----------
    measurements : Measurements
        From :func:`costmodel.calibration.logs.read_log`.
    algorithm : str, optional
        The algorithm assumed to have run (aliases accepted); default per
        collective in :data:`DEFAULT_ALGORITHMS`.
    p : int, optional
        Number of ranks; needed when the log does not state it (OSU), and must
        agree with it otherwise.
    segments : int, optional
        1, 2 or 3 size segments; by default chosen by BIC (see the module docstring).
    in_place : bool, optional
        True: fit the in-place times (nccl-tests' second column group); False: the
        out-of-place ones; None (the default): the out-of-place times, or the in-place
        ones of a log that has no other (``calibrate run``'s all-reduce and broadcast,
        which torch.distributed runs in place only; the notes say so).
    extra : mapping, optional
        Fixed values of an algorithm's free parameters (``{"segments": 8}``).

    Returns
    -------
    Fit

    Raises
    ------
    InputError
        For a missing or conflicting p, a bad segment count or algorithm.
    CalibrationError
        When the log has too few rows of the kind asked for, or the fit degenerates.
    """
    if not isinstance(measurements, Measurements):
        raise InputError(f"{type(measurements).__name__} is not Measurements; "
                         "read the log with read_log first")
    measurements = _resolve_p(measurements, p)
    collective = canonical_collective(measurements.collective)
    ranks = measurements.p or 2
    name, a, b, formula, notes = coefficients(collective, algorithm, ranks, extra)
    defaulted = in_place is None
    in_place = measurements.default_in_place if in_place is None else in_place
    rows = sorted(measurements.select(in_place=in_place), key=lambda r: r.n_bytes)
    sizes = len({r.n_bytes for r in rows})
    if sizes < 2:  # out of place only where the log has placements (nccl-tests, the CSV), not OSU's or IMB's
        placed = any(r.in_place is not None for r in measurements.rows)
        kind = "in-place " if in_place else "out-of-place " if placed else ""
        plural = "s" if len(rows) != 1 else ""
        raise CalibrationError(f"{measurements.path} has {len(rows)} {kind}row{plural} of {sizes} "
                               f"size{'s' if sizes != 1 else ''}; a fit of alpha and beta needs at least 2 "
                               "sizes")
    import numpy as np

    search = _Search(rows, a, b)
    cuts, table = _choose(search, segments, len(rows))
    bounds = [0, *cuts, search.sizes]
    built: list[Segment] = []
    residuals: list[Residual] = []
    errors: list[Any] = []
    for k, (g0, g1) in enumerate(pairwise(bounds), start=1):
        lo, hi = search.starts[g0], search.starts[g1]
        segment, (model, error) = _segment(search, lo, hi)
        built.append(segment)
        errors.append(error)
        outlier = max(_OUTLIER * segment.median_rel_error, _OUTLIER_MIN)
        residuals += [
            Residual(n_bytes=r.n_bytes, measured_s=r.time_s, model_s=m, rel_error=e, segment=k, line=r.line,
                     outlier=abs(e) > outlier)
            for r, m, e in zip(rows[lo:hi], model.tolist(), error.tolist(), strict=True)
        ]
    if built[-1].alpha_s == 0 and built[-1].beta_s_per_byte == 0:
        raise CalibrationError(f"the fit of {measurements.path} degenerated to alpha = beta = 0")
    every = np.concatenate(errors)
    alpha, alpha_note, alpha_from = _link_alpha(built, rows, search, a)
    median, median_ge_1mib = _median(every) or 0.0, _median(every[search.n >= _ONE_MIB])
    target = _target(residuals, median, median_ge_1mib)
    warnings = [*filter(None, [target.line()]),
                *_warnings(rows, search, built, residuals, every, a=a, b=b,
                           factor=bus_factor(collective, ranks)),
                *_alpha_warnings(measurements, alpha, a=a), *_unmeasured_alpha(rows, alpha)]
    return Fit(
        collective=collective, p=ranks, algorithm=name, alpha_s=alpha,
        beta_s_per_byte=built[-1].beta_s_per_byte, segments=tuple(built), residuals=tuple(residuals),
        warnings=tuple(warnings), target=target, alpha_from=alpha_from,
        median_rel_error=median,
        median_rel_error_ge_1mib=median_ge_1mib,
        notes=_notes(measurements, built, notes, collective, in_place, defaulted=defaulted) + alpha_note,
        latency_coefficient=a, bandwidth_coefficient=b, formula=formula, tool=measurements.tool,
        source=measurements.source, path=measurements.path, in_place=in_place, selection=tuple(table),
    )


def fit_logs(
    logs: Sequence[Measurements],
    *,
    algorithm: str | None = None,
    p: int | None = None,
    segments: int | None = None,
    in_place: bool | None = None,
    extra: Mapping[str, int] | None = None,
) -> tuple[Fit, ...]:
    """Fit every collective of *logs*, read from one file or several: one :class:`Fit` each, in order.

    Each collective comes from one log, with one exception: the logs of ``osu_latency`` and
    ``osu_bw``, given together, make one point-to-point fit whose α is osu_latency's and β
    osu_bw's (:func:`fit_latency_and_bandwidth`).  The other parameters are :func:`fit`'s.

    Raises
    ------
    InputError
        For no log, an *algorithm* with several collectives, or a collective that two logs measure.
    """
    if not logs:
        raise InputError("no log to fit; give at least one")
    by: dict[str, list[Measurements]] = {}
    for m in logs:
        by.setdefault(canonical_collective(m.collective), []).append(m)
    if algorithm is not None and len(by) > 1:
        raise InputError(f"the logs hold {len(by)} collectives ({', '.join(by)}) and an algorithm names the "
                         f"model of one; give collective=NAME with algorithm={algorithm}")
    fits = []
    for collective, group in by.items():
        pair = _osu_pair(group)
        if pair is not None:
            fits.append(fit_latency_and_bandwidth(*pair, p=p, segments=segments))
        elif len(group) > 1:
            raise InputError(f"{collective} is measured by both {group[0].path} and {group[1].path}; give "
                             "one log per collective (osu_latency's and osu_bw's are the one pair fitted "
                             "together)")
        else:
            fits.append(fit(group[0], algorithm=algorithm, p=p, segments=segments, in_place=in_place,
                            extra=extra))
    return tuple(fits)


def _osu_pair(group: Sequence[Measurements]) -> tuple[Measurements, Measurements] | None:
    """(osu_latency's, osu_bw's) when *group* is those two logs, in either order, else ``None``."""
    if len(group) != 2 or not all(m.tool == "osu" and m.collective == PT2PT for m in group):
        return None
    latency = [m for m in group if not _streamed(m)]
    bandwidth = [m for m in group if _streamed(m)]
    return (latency[0], bandwidth[0]) if len(latency) == len(bandwidth) == 1 else None


def fit_latency_and_bandwidth(latency: Measurements, bandwidth: Measurements, *, p: int | None = None,
                              segments: int | None = None) -> Fit:
    """One point-to-point fit from ``osu_latency``'s log and ``osu_bw``'s: α from the first, β from the
    second.

    osu_latency times one message at a time (half a ping-pong), so its small sizes are the start-up;
    osu_bw streams a window of messages back to back, so its time per message hides the start-up
    and its large sizes give the bandwidth the link sustains.  The fit is osu_latency's (its
    segments price each size: one message at a time) with ``[link]`` β from osu_bw's last segment;
    osu_bw's own warnings follow osu_latency's, each marked ``osu_bw:``, less the one that its α is
    no latency (it is not used).

    Raises
    ------
    InputError
        When *latency* is not osu_latency's log or *bandwidth* not osu_bw's.
    """
    from dataclasses import replace

    for m, streamed, name in ((latency, False, "osu_latency"), (bandwidth, True, "osu_bw")):
        if m.tool != "osu" or m.collective != PT2PT or _streamed(m) != streamed:
            raise InputError(f"{m.path} is not {name}'s log ({m.command or m.tool}); give osu_latency's log "
                             "first and osu_bw's second")
    timed = fit(latency, p=p, segments=segments)
    streamed_fit = fit(bandwidth, p=p, segments=segments)
    unused = set(_alpha_warnings(bandwidth, streamed_fit.alpha_s, a=streamed_fit.latency_coefficient))
    last = len(streamed_fit.segments)
    note = (f"[link] alpha is osu_latency's ({latency.path}), beta osu_bw's ({bandwidth.path}, segment "
            f"{last}): messages streamed back to back, the bandwidth the link sustains; [[segment]] is "
            "osu_latency's, each size priced as one message at a time")
    where = bandwidth.source.removeprefix("# source:").strip() if bandwidth.source else bandwidth.path
    return replace(
        timed, beta_s_per_byte=streamed_fit.beta_s_per_byte, alpha_from=f"osu_latency's {timed.alpha_from}",
        beta_from=f"osu_bw's segment {last} ({_short(streamed_fit.segments[-1].from_bytes)} – "
                  f"{_short(streamed_fit.segments[-1].to_bytes)})",
        warnings=(*timed.warnings, *(f"osu_bw: {w}" for w in streamed_fit.warnings if w not in unused)),
        notes=(*timed.notes, note, f"osu_bw's log: {where}"), path=f"{latency.path} and {bandwidth.path}",
    )


def _segment(search: _Search, lo: int, hi: int) -> tuple[Segment, tuple[Any, Any]]:
    solved = _solve(search.x[lo:hi], search.t[lo:hi])
    model = search.x[lo:hi] @ solved.theta
    errors = (model - search.t[lo:hi]) / search.t[lo:hi]
    errors[abs(errors) < _ON_LINE] = 0.0
    segment = Segment(
        from_bytes=int(search.n[lo]), to_bytes=int(search.n[hi - 1]),
        alpha_s=solved.theta[0], beta_s_per_byte=solved.theta[1],
        alpha_ci_s=solved.ci[0], beta_ci_s_per_byte=solved.ci[1],
        alpha_at_bound=solved.at_bound[0], beta_at_bound=solved.at_bound[1],
        median_rel_error=_median(errors) or 0.0, points=hi - lo,
    )
    return segment, (model, errors)


def _notes(measurements: Measurements, built: list[Segment], registry_notes: tuple[str, ...],
           collective: str, in_place: bool, *, defaulted: bool = False) -> tuple[str, ...]:
    notes = list(registry_notes)
    notes.append("gamma is not separable from these logs (a reduction's gamma·n is proportional to n like "
                 "beta's term): it is left 0 and folded into beta")
    for k, s in enumerate(built, start=1):
        for flag, what in ((s.alpha_at_bound, "alpha"), (s.beta_at_bound, "beta")):
            if flag:
                notes.append(f"segment {k}: {what} is at its bound 0 (the data do not support a positive "
                             f"{what} there); its interval is one-sided")
    if measurements.tool == "nccl-tests" and collective in {"broadcast", "reduce"}:
        notes.append("nccl runs broadcast and reduce as a pipelined ring (b ≈ 1): with the binomial model "
                     "beta is ⌈log2 p⌉ times smaller than the link's")
    if in_place and defaulted:
        notes.append("fitted to the in-place times, the only ones the log has (torch.distributed runs "
                     "all-reduce and broadcast in place)")
    elif in_place:
        notes.append("fitted to the in-place times")
    return tuple(notes)


def _link_alpha(built: list[Segment], rows: list[Row], search: _Search,
                a: Fraction) -> tuple[float, tuple[str, ...], str]:
    """α of the summary link: the small-message segment's, at most the smallest time / a(p); the note
    the profile keeps, and where α comes from in words (with the reason when it is not segment 1's).

    When the first segment's α is at its bound 0 while its messages take time, the
    smallest measured time, all start-up, divided by a(p) stands in (noted); but not when that run
    moves its bytes at half the log's best rate (size / time) or more (a log of large sizes only): it
    holds no start-up to read, and α stays 0 (:func:`_unmeasured_alpha` warns).
    """
    from costmodel.units import format_time

    fastest = float(search.t.min())
    smallest = fastest / float(a)
    first = built[0].alpha_s
    i = int(search.t.argmin())
    at = _short(rows[i].n_bytes)
    measured = f"the fastest run over a(p): {format_time(fastest)} at {at} / {a}"
    if first <= 0 < smallest:
        if 2 * search.n[i] / fastest >= float((search.n / search.t).max()):
            said = (f"no size (segment 1's α is 0, and the fastest run, {format_time(fastest)} at {at}, "
                    "moves its bytes at the log's bandwidth: no start-up to read)")
            return 0.0, ("[link] alpha: 0, not measured: the log's fastest run moves its bytes at the log's "
                         "bandwidth, with no start-up to read",), said
        return smallest, ("[link] alpha: the small-message segment's alpha is 0; the smallest measured time "
                          "divided by the latency coefficient stands in",), f"{measured} (segment 1's α is 0)"
    if first > smallest:
        shown = format_time(first) != format_time(smallest)  # a cap below the printed digits goes unsaid
        return smallest, ("[link] alpha: capped at the smallest measured time divided by the latency "
                          "coefficient",), \
            f"segment 1 (its {format_time(first)} capped at {measured})" if shown else "segment 1"
    return first, (), "segment 1"


def _unmeasured_alpha(rows: list[Row], alpha: float) -> list[str]:
    """The warning of an α the log could not measure (0: its smallest size already runs at the bandwidth)."""
    if alpha > 0:
        return []
    return [f"α is 0, not measured: the smallest size, {_short(rows[0].n_bytes)}, already runs at the "
            "log's bandwidth, so the log holds no start-up time; measure small sizes too (nccl-tests -b 8) "
            "to fit α"]


def _streamed(measurements: Measurements) -> bool:
    """Whether *measurements* are osu_bw's: messages streamed in a window, timed as n/bandwidth."""
    return measurements.tool == "osu" and measurements.collective == PT2PT and (
        measurements.command == "osu_bw" or any(r.algbw_bytes_per_s for r in measurements.rows))


def _alpha_warnings(measurements: Measurements, alpha: float, *, a: Fraction) -> list[str]:
    """An α that is no start-up latency: fitted to osu_bw's streamed times, or below :data:`ALPHA_FLOOR_S`."""
    from costmodel.units import format_time

    if _streamed(measurements):
        return [f"α = {format_time(alpha)} comes from osu_bw, which streams a window of messages back to "
                "back: its time per message n/bw hides the start-up, so this α is no latency; fit it "
                "together with osu_latency's log (α from osu_latency, β from osu_bw)"]
    if 0 < alpha < ALPHA_FLOOR_S:
        per = "message" if a == 1 else f"step (a(p) = {a} of them)"
        return [f"α = {format_time(alpha)} per {per} is below {format_time(ALPHA_FLOOR_S)}, less than "
                "any message between two ranks takes (it moves cache lines between cores, tens of ns "
                "each): the assumed algorithm's a(p) counts more start-ups than ran; give algorithm=NAME, "
                "e.g. algorithm=recursive-doubling"]
    return []


def _warnings(rows: list[Row], search: _Search, built: list[Segment], residuals: list[Residual], errors: Any,
              *, a: Fraction, b: Fraction, factor: Fraction) -> list[str]:
    """The sanity warnings of a fit, each a sentence naming the sizes or segment concerned.

    Too few sizes (2 in the log, or fewer than 4 in a segment), too few from
    1 MiB on, outliers by size, a bandwidth faster than any measured, a start-up
    longer than the fastest operation, a collapse of the bandwidth, and bimodal
    noise (see :func:`_bimodal`).  *errors* are the residuals' relative errors, in
    order; the rows' sizes and times as floats are *search*'s.
    """
    import numpy as np

    from costmodel.units import format_byte_rate, format_time

    sizes = search.sizes
    out = []
    if sizes == 2:
        out.append("the log has only 2 sizes: a line passes through both exactly, the error says nothing")
    elif sizes < MIN_POINTS:
        out.append(f"segment 1 has only {sizes} sizes; a segment should have at least {MIN_POINTS}")
    late = {r.n_bytes for r in rows if r.n_bytes >= _ONE_MIB}
    if 0 < len(late) < MIN_POINTS:
        out.append("only 1 size from 1 MiB on: the error over sizes >= 1 MiB rests on it alone"
                   if len(late) == 1 else
                   f"only {len(late)} sizes from 1 MiB on: the error over sizes >= 1 MiB rests on them alone")
    flagged = [r for r in residuals if r.outlier]
    if flagged:
        listed = ", ".join(f"{_short(r.n_bytes)} ({r.rel_error:+.1%})" for r in flagged[:8])
        more = f" and {len(flagged) - 8} more" if len(flagged) > 8 else ""
        out.append(f"outliers (|error| > {_OUTLIER}× the segment's median): {listed}{more}")
    last = built[-1]
    # the best bus bandwidth, exactly, among the rows whose float estimate is within rounding of the largest
    estimate = search.n * float(factor) / search.t
    near = np.flatnonzero(estimate >= estimate.max() * (1 - 1e-9)).tolist()
    best = max(float(rows[i].n_bytes * factor / rows[i].time_s) for i in near)
    if last.beta_s_per_byte == 0:
        out.append(f"segment {len(built)}: β is 0, no time grows with the size: the sizes measured "
                   f"(to {_short(rows[-1].n_bytes)}) never left the latency regime, and the profile "
                   "prices any transfer beyond them as free; measure larger sizes")
    elif b > 0:
        modelled = float(factor) / (float(b) * last.beta_s_per_byte)
        if modelled > _FASTER * best:
            shown, measured = (format_byte_rate(x) for x in (modelled, best))
            out.append(f"segment {len(built)}: 1/β gives a bus bandwidth of {shown}, "
                       f"{modelled / best:.3g}× the best measured ({measured}); the "
                       "bandwidth regime was not reached, or the largest sizes are missing")
    quickest = np.flatnonzero(search.t == search.t.min()).tolist()  # the exactly fastest row is among these
    fastest = min((rows[i] for i in quickest), key=lambda r: r.time_s)
    startup = float(a) * built[0].alpha_s
    if startup > float(fastest.time_s) * (1 + _SLOWER):
        out.append(f"segment 1: α·a(p) = {format_time(startup)} exceeds the smallest measured time, "
                   f"{format_time(float(fastest.time_s))} at {_short(fastest.n_bytes)}, by "
                   f"{startup / float(fastest.time_s) - 1:.0%}: that α is not a start-up latency")
    # the bandwidth n/t of each size (the upper median of its rows), and its falls between adjacent sizes
    speed = search.n / search.t
    starts = np.asarray(search.starts)
    bw = speed[starts[:-1]]
    for g in np.flatnonzero(np.diff(starts) > 1).tolist():
        repeats = sorted(speed[starts[g]:starts[g + 1]].tolist())
        bw[g] = repeats[len(repeats) // 2]
    falls = np.divide(bw[:-1], bw[1:], out=np.zeros(len(bw) - 1), where=bw[1:] > 0)
    for g in np.flatnonzero(falls > _COLLAPSE).tolist():
        n0, n1 = rows[starts[g]].n_bytes, rows[starts[g + 1]].n_bytes
        out.append(f"collapse: the bandwidth falls {falls[g]:.3g}× from {_short(n0)} to {_short(n1)}; "
                   "no line explains it and the fit around it is not to be trusted")
    modes = _bimodal(errors)
    if modes is not None:
        low, high, gap = modes
        out.append(f"bimodal noise: {high} rows run {gap:.1%} slower than the model's other {low} with none "
                   "between; two states of the machine (clocks, placement, contention) are mixed in the log")
    return out


def _short(n_bytes: float) -> str:
    from costmodel.units import format_size

    return format_size(n_bytes).split(" = ")[0]


def _bimodal(errors: Sequence[float]) -> tuple[int, int, float] | None:
    """(rows below, rows above, gap) when the relative errors fall in two separate clusters, else ``None``.

    The widest gap between consecutive sorted errors splits them in two; it is
    bimodal noise when each side holds at least a fifth of the rows (and 3), the
    gap is at least :data:`_MODE_GAP` (5 %) and at least 3× the spread (the
    interquartile range) within each side.  A smooth misfit or one outlier has
    no such gap.
    """
    import numpy as np

    values = np.sort(np.asarray(errors, dtype=float))
    m = len(values)
    least = max(3, math.ceil(m / 5))
    if m < 2 * least:
        return None
    gaps = np.diff(values)[least - 1:m - least]
    if not len(gaps):
        return None
    at = int(np.argmax(gaps)) + least
    gap = float(values[at] - values[at - 1])
    low, high = values[:at], values[at:]
    spread = max(quantile(side.tolist(), 0.75) - quantile(side.tolist(), 0.25) for side in (low, high))
    if gap < _MODE_GAP or gap < 3 * spread:
        return None
    return len(low), len(high), gap
