"""What nccl-tests measures, predicted from NCCL's own choice: :func:`as_measured` and :func:`calibrate`.

NCCL's tuning model estimates each (algorithm, protocol) to choose between them; a benchmark measures
more than that estimate.  nccl-tests times ``iters`` calls enqueued back to back between two CUDA
events and divides by ``iters`` (``src/common.cu``, ``BenchTime``), so each call's host work (argument
checks, the plan, the kernel launch) and the kernel's own start are in the measured time, and a
protocol moves data at the share of the tuning table's bandwidth it reaches on the machine, not at
that bandwidth.  The prediction keeps NCCL's choice (the entry with the least modelled time) and
prices it as::

    t = c + L + (T − L) / s_proto

with L the chosen entry's latency and T its modelled time (so T − L = n / bandwidth), c the per-call
overhead and s_proto the achieved share of the protocol (LL, LL128, Simple).  The per-call overhead
grows with the GPUs one thread drives: nccl-tests run as one process per GPU (``-g 1``, launched by
mpirun or srun, the way NCCL's maintainers recommend) pays c₁; one thread driving g GPUs (``-g 8``, a
single process for a node) enqueues each GPU's call in turn inside one group, and pays

    c = c₁ + (g − 1)·c_g

(NVIDIA/nccl-tests#333: the higher small-size latency of ``-g 8`` runs is the CUDA overhead of a
single process driving several GPUs; one GPU per process is the recommended way).  g is nccl-tests'
``nGpus``, which every log prints in its ``# nThread 1 nGpus 8 ...`` line.  Two overheads and three
shares in all, the same for every machine.  :class:`Overheads` holds them;
``costmodel/nccl/overheads.toml`` ships the values :func:`calibrate` gives on the nccl-tests logs of
the project's test data, each from a different cluster (the file names the logs and the hardware
each was described with), and a test checks that the file is what that calibration gives.

Calibration (medians throughout, so that one log from an unusual network moves nothing; the overheads
kept to 0.1 µs and the shares to 0.001), with gap = median over a log's sizes ≤ 64 KiB of
(measured − T)::

    c₁      = median over the logs run with one GPU a thread of gap
    c_g     = median over the logs run with g > 1 GPUs a thread of (gap − c₁) / (g − 1), at least 0
    s_proto = median over logs of ( median over that log's sizes NCCL runs with proto whose bandwidth
              term is at least its latency term of (T − L) / (measured − c − L) )

Without logs of one kind, c_g is 0 and c₁ the median gap of all of them (a note says so).

Each log's error is reported twice: in-sample and held out (the constants calibrated on the other
logs, the way a new cluster meets them).  The error of a size is that of its bus bandwidth,
``predicted busbw / measured busbw − 1`` (= measured / predicted time − 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from importlib import resources
from os import PathLike
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.errors import InputError, ParseError
from costmodel.exact import median
from costmodel.nccl.latency import Step, number_text
from costmodel.nccl.predict import Prediction, timings
from costmodel.nccl.system import System

__all__ = ["LARGE", "LARGE_TARGET", "PROTOCOLS", "SMALL_TARGET", "Calibration", "Case", "LogAccuracy",
           "Overheads", "as_measured", "band_medians", "calibrate", "load_overheads", "measured_note",
           "measured_time", "shipped_overheads"]

PROTOCOLS = ("LL", "LL128", "Simple")
SMALL = 64 * 1024
"""Sizes up to this many bytes set the per-call overhead: there every modelled time is mostly latency."""
LARGE = 2**20
"""The boundary of the two error regimes reported: sizes of at least 1 MiB, and the sizes below."""
LARGE_TARGET = Fraction(15, 100)
"""The prediction's target median |busbw error| at sizes from :data:`LARGE` on."""
SMALL_TARGET = Fraction(30, 100)
"""Its target below :data:`LARGE`."""
_US = Fraction(1, 10**6)


@dataclass(frozen=True, slots=True, kw_only=True)
class Overheads(JSONFields):
    """What nccl-tests measures beyond NCCL's estimate: a per-call overhead (s), what each further GPU
    driven by the same thread adds to it (s), and each protocol's achieved share of the tuning table's
    bandwidth (see the module notes); *gpus_per_thread* is the launch priced (nccl-tests' ``-g``)."""

    call_s: Fraction
    ll: Fraction
    ll128: Fraction
    simple: Fraction
    gpu_s: Fraction = Fraction(0)
    source: str = ""
    gpus_per_thread: int = 1

    @property
    def per_call_s(self) -> Fraction:
        """c = c₁ + (g − 1)·c_g: the overhead of one call of the launch priced.

        >>> o = Overheads(call_s=Fraction(7), gpu_s=Fraction(2), ll=Fraction(1), ll128=Fraction(1),
        ...               simple=Fraction(1), gpus_per_thread=8)
        >>> o.per_call_s
        Fraction(21, 1)
        """
        return self.call_s + (self.gpus_per_thread - 1) * self.gpu_s

    def launched(self, gpus_per_thread: int | None) -> Overheads:
        """These constants priced for a run whose threads each drive *gpus_per_thread* GPUs (None: one,
        the recommended launch)."""
        g = 1 if gpus_per_thread is None else gpus_per_thread
        return self if g == self.gpus_per_thread else replace(self, gpus_per_thread=g)

    def share(self, protocol: str) -> Fraction:
        """The achieved share of *protocol*'s bandwidth."""
        return {"LL": self.ll, "LL128": self.ll128, "Simple": self.simple}[protocol]

    def call_text(self) -> str:
        """The per-call overhead of the launch priced, in words."""
        us = Fraction(10**6)
        if self.gpus_per_thread == 1:
            return f"a per-call overhead of {number_text(self.call_s * us)} µs"
        g, call, gpu = self.gpus_per_thread, number_text(self.call_s * us), number_text(self.gpu_s * us)
        total = number_text(self.per_call_s * us)
        return f"a per-call overhead of {total} µs ({call} µs + {g - 1} × {gpu} µs: one thread, {g} GPUs)"

    def text(self) -> str:
        """The overheads in words, for notes."""
        return (f"{self.call_text()}; LL, LL128 and Simple at "
                f"{number_text(self.ll)}, {number_text(self.ll128)} and {number_text(self.simple)} of the "
                "tuning bandwidth")

    def toml(self) -> str:
        """The constants as a file :func:`load_overheads` reads (exact values as fractions)."""
        lines = [f"# {line}" for line in self.source.splitlines()] if self.source else []
        lines += [f'call_us = "{_fraction_text(self.call_s / _US)}"',
                  f'gpu_us = "{_fraction_text(self.gpu_s / _US)}"']
        lines += [f'share_{p.lower()} = "{_fraction_text(self.share(p))}"' for p in PROTOCOLS]
        return "\n".join(lines) + "\n"


def _fraction_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _positive(data: Mapping[str, Any], key: str, *, path: str, most: Fraction | None = None,
              zero: bool = False) -> Fraction:
    from costmodel.exact import parse_number

    if key not in data:
        raise ParseError(f"missing {key}", path=path)
    raw = data[key]
    try:
        value = parse_number(raw, what=key)
    except InputError:
        raise ParseError(f"{key} = {raw!r} is not a number", path=path) from None
    if isinstance(raw, bool) or value < 0 or (value == 0 and not zero) or (most is not None and value > most):
        bound = "" if most is None else f" and at most {most}"
        least = "at least 0" if zero else "above 0"
        raise ParseError(f"{key} = {raw!r} must be {least}{bound}", path=path)
    return Fraction(value)


def load_overheads(path: str | PathLike[str] | None = None) -> Overheads:
    """The overheads of the file at *path* (``call_us``, ``gpu_us``, ``share_ll``, ``share_ll128``,
    ``share_simple``: numbers or fractions in quotes), or the shipped ones.  ``gpu_us`` (what each
    further GPU a thread drives adds) may be left out: 0, a file of one overhead for every launch.

    >>> o = load_overheads()
    >>> 0 < o.ll <= 1 and 0 < o.simple <= 1 and o.call_s > 0
    True
    """
    from costmodel._files import read_text
    from costmodel.tomlfile import loads

    if path is None:
        where = "costmodel/nccl/overheads.toml"
        text = resources.files("costmodel.nccl").joinpath("overheads.toml").read_text(encoding="utf-8")
    else:
        where = str(path)
        text = read_text(path, what="the overheads file")
    data = loads(text, path=where)
    unknown = sorted(set(data) - {"call_us", "gpu_us", "share_ll", "share_ll128", "share_simple"})
    if unknown:
        raise ParseError(f"unknown key {unknown[0]!r}; the keys are call_us, gpu_us, share_ll, share_ll128, "
                         "share_simple", path=where)
    source = "\n".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    gpu = _positive(data, "gpu_us", path=where, zero=True) if "gpu_us" in data else Fraction(0)
    return Overheads(call_s=_positive(data, "call_us", path=where, zero=True) * _US, gpu_s=gpu * _US,
                     ll=_positive(data, "share_ll", path=where, most=Fraction(1)),
                     ll128=_positive(data, "share_ll128", path=where, most=Fraction(1)),
                     simple=_positive(data, "share_simple", path=where, most=Fraction(1)),
                     source=source)


@cache
def shipped_overheads() -> Overheads:
    """The overheads costmodel ships (``costmodel/nccl/overheads.toml``)."""
    return load_overheads()


def _latency(prediction: Prediction) -> Fraction:
    return next(e.latency_s for e in prediction.entries
                if (e.algorithm, e.protocol) == (prediction.algorithm, prediction.protocol))


def as_measured(prediction: Prediction, overheads: Overheads | None = None) -> Prediction:
    """*prediction* (NCCL's choice and estimate) priced as nccl-tests measures it: the per-call
    overhead added and the bandwidth term divided by the protocol's achieved share (module notes).

    The choice, channels and entries are NCCL's; the time, bandwidths and steps are the measured
    prediction's, and a note says so.

    >>> from costmodel.nccl import System, predict
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> o = Overheads(call_s=Fraction(5, 10**6), ll=Fraction(1, 2), ll128=Fraction(3, 4), simple=Fraction(1))
    >>> p = predict("allreduce", "1KiB", s)
    >>> m = as_measured(p, o)
    >>> m.time_s == o.call_s + _latency(p) + (p.time_s - _latency(p)) * 2
    True
    """
    o = shipped_overheads() if overheads is None else overheads
    latency = _latency(prediction)
    share = o.share(prediction.protocol)
    wire = prediction.time_s - latency
    time_s = measured_time(prediction.time_s, latency, prediction.protocol, o)
    us = Fraction(10**6)
    call = o.per_call_s
    g = o.gpus_per_thread
    launch = () if g == 1 else (Step("GPUs one thread drives (nccl-tests -g)", str(g), Fraction(g), ""),)
    steps = (
        *prediction.steps,
        *launch,
        Step("per-call overhead (nccl-tests)", o.call_text().removeprefix("a per-call overhead of "),
             call * us, "µs"),
        Step(f"achieved share of {prediction.protocol}'s bandwidth", number_text(share), share, ""),
        Step("time as measured",
             f"{number_text(call * us)} µs + {number_text(latency * us)} µs + "
             f"{number_text(wire * us)} µs / {number_text(share)} = {number_text(time_s * us)} µs",
             time_s * us, "µs"),
    )
    algbw = prediction.n_bytes / time_s
    return replace(prediction, time_s=time_s, algbw_bytes_per_s=algbw, estimate_s=prediction.time_s,
                   busbw_bytes_per_s=prediction.busbw_bytes_per_s * prediction.time_s / time_s,
                   steps=steps, notes=(*prediction.notes, measured_note(o)))


def measured_time(time_s: Fraction, latency_s: Fraction, protocol: str, overheads: Overheads) -> Fraction:
    """t = c + L + (T − L) / s_proto: NCCL's estimate *time_s* of an entry whose latency is *latency_s*,
    as nccl-tests measures it (module notes; c of the launch *overheads* prices).

    >>> o = Overheads(call_s=Fraction(1), ll=Fraction(1, 2), ll128=Fraction(1), simple=Fraction(1))
    >>> measured_time(Fraction(5), Fraction(2), "LL", o)
    Fraction(9, 1)
    """
    return overheads.per_call_s + latency_s + (time_s - latency_s) / overheads.share(protocol)


def measured_note(overheads: Overheads) -> str:
    """The note of a prediction as nccl-tests measures it."""
    source = "the shipped constants, calibrated on published nccl-tests logs"
    if overheads.launched(1) != shipped_overheads():
        source = "the overheads given"
    return f"as nccl-tests measures it: NCCL's choice with {overheads.text()} ({source})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One log with the hardware it ran on: its out-of-place sizes priced by NCCL's model."""

    name: str
    measurements: Any
    system: System
    version: str
    algo: str | None = None
    proto: str | None = None
    hardware: str = ""
    held_out: bool = False
    """Kept out of the constants: priced with those the other logs give, never calibrated on."""
    gpus_per_thread: int = 1
    """The GPUs each of its threads drove (nccl-tests' ``nGpus``, ``-g``)."""


@dataclass(frozen=True, slots=True)
class _Row:
    n: int
    measured: Fraction
    modelled: Fraction
    latency: Fraction
    protocol: str


def _rows(case: Case) -> tuple[_Row, ...]:
    rows = [r for r in case.measurements.select(in_place=False) if r.n_bytes > 0]
    _, estimates = timings(case.measurements.collective, (r.n_bytes for r in rows), case.system,
                           version=case.version, algo=case.algo, proto=case.proto)
    return tuple(_Row(r.n_bytes, r.time_s, t.time_s, t.latency_s, t.protocol)
                 for r, t in zip(rows, estimates, strict=True))


def _gap(rows: tuple[_Row, ...]) -> Fraction | None:
    """The median of measured − estimated time over a log's sizes up to :data:`SMALL` (None: no such size)."""
    small = [r.measured - r.modelled for r in rows if r.n <= SMALL]
    return median(small) if small else None


def _overheads_of(tables: Sequence[_Table], source: str = "") -> tuple[Overheads, tuple[str, ...]]:
    """The constants calibrated on *tables* (module notes) and what to say about how."""
    gaps = [(gap, g) for rows, g in tables if (gap := _gap(rows)) is not None]
    if not gaps:
        raise InputError(f"no log has a size of at most {SMALL} bytes to calibrate the per-call overhead on")
    single = [gap for gap, g in gaps if g == 1]
    several = [(gap, g) for gap, g in gaps if g > 1]
    notes: list[str] = []
    if single and several:
        call = median(single)
        per_gpu = max(Fraction(0), median((gap - call) / (g - 1) for gap, g in several))
    else:
        call, per_gpu = median(gap for gap, _ in gaps), Fraction(0)
        kind = "one GPU a thread" if not single else "several GPUs a thread"
        notes.append(f"no log ran with {kind} (nccl-tests -g): one per-call overhead for every launch")
    base = Overheads(call_s=max(Fraction(0), _rounded(call / _US, 10) * _US),
                     gpu_s=_rounded(per_gpu / _US, 10) * _US, ll=Fraction(1), ll128=Fraction(1),
                     simple=Fraction(1), source=source)
    shares = {}
    for protocol in PROTOCOLS:
        per_log = []
        for rows, g in tables:
            call_g = base.launched(g).per_call_s
            ratios = [(r.modelled - r.latency) / (r.measured - call_g - r.latency) for r in rows
                      if r.protocol == protocol and r.modelled - r.latency >= r.latency
                      and r.measured - call_g - r.latency > 0]
            if ratios:
                per_log.append(median(ratios))
        share = _rounded(median(per_log), 1000) if per_log else Fraction(1)
        shares[protocol] = min(Fraction(1), share)
    return replace(base, ll=shares["LL"], ll128=shares["LL128"], simple=shares["Simple"]), tuple(notes)


_Table = tuple[tuple[_Row, ...], int]
"""A log's rows and the GPUs each of its threads drove."""


_NONE = Overheads(call_s=Fraction(0), ll=Fraction(1), ll128=Fraction(1), simple=Fraction(1))
"""No overhead and every protocol at its full bandwidth: NCCL's estimate itself."""


def _rounded(x: Fraction, per: int) -> Fraction:
    """*x* to the nearest 1/*per*: a calibrated constant carries no more digits than its data."""
    return Fraction(round(x * per), per)


Band = tuple[Fraction, int] | None
"""The median of a band's values and their count, or None for a band without sizes."""


def band_medians(errors: Iterable[tuple[int, Fraction]]) -> tuple[Band, Band]:
    """The median and count of (size, value) pairs at sizes from :data:`LARGE` on, and below.

    >>> band_medians([(8, Fraction(1, 2)), (2**20, Fraction(1, 10)), (2**30, Fraction(3, 10))])
    ((Fraction(1, 5), 2), (Fraction(1, 2), 1))
    """
    large: list[Fraction] = []
    small: list[Fraction] = []
    for n, value in errors:
        (large if n >= LARGE else small).append(value)
    return ((median(large), len(large)) if large else None, (median(small), len(small)) if small else None)


def _errors(rows: Iterable[_Row], o: Overheads) -> tuple[Fraction | None, Fraction | None]:
    """Median |busbw error| at sizes ≥ :data:`LARGE` and below, under *o*."""
    large, small = band_medians(
        (r.n, abs(r.measured / measured_time(r.modelled, r.latency, r.protocol, o) - 1)) for r in rows)
    return (None if large is None else large[0], None if small is None else small[0])


@dataclass(frozen=True, slots=True, kw_only=True)
class LogAccuracy(JSONFields):
    """One log's median |busbw error| at sizes ≥ 1 MiB and below: NCCL's estimate alone, with the
    calibrated overheads (in-sample), and with those calibrated on the other logs (held out).  A log kept
    out of the constants (``held_out``) has the same figures in-sample and held out: the constants never
    saw it."""

    name: str
    ranks: int
    nodes: int
    hardware: str
    sizes: int
    model_large: Fraction | None
    model_small: Fraction | None
    in_sample_large: Fraction | None
    in_sample_small: Fraction | None
    held_out_large: Fraction | None
    held_out_small: Fraction | None
    held_out: bool = False
    gpus_per_thread: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """The overheads calibrated on several logs and each log's accuracy (see the module notes)."""

    overheads: Overheads
    logs: tuple[LogAccuracy, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values, SI units in the keys."""
        o = self.overheads
        return {"overheads": {"call_s": real(o.call_s), "gpu_s": real(o.gpu_s), "share_ll": real(o.ll),
                              "share_ll128": real(o.ll128), "share_simple": real(o.simple)},
                "logs": [a.to_dict() for a in self.logs], "notes": list(self.notes)}


def calibrate(cases: Sequence[Case], *, source: str = "") -> Calibration:
    """The overheads of the module notes calibrated on *cases*, and each case's errors (in-sample and
    held out: calibrated on the other cases).  A case marked ``held_out`` never enters the constants:
    it is priced with those of the other cases, its in-sample and held-out figures alike.

    Raises
    ------
    InputError
        With fewer than two cases to calibrate on (nothing to hold out), or when none of them has a
        size of at most 64 KiB.
    """
    fitted = [k for k, c in enumerate(cases) if not c.held_out]
    if len(fitted) < 2:
        raise InputError(f"{len(fitted)} log given to calibrate on (not held_out); calibrating needs at "
                         "least two (each is held out in turn)")
    tables = [(_rows(c), c.gpus_per_thread) for c in cases]
    overheads, notes = _overheads_of([tables[k] for k in fitted], source)
    logs = []
    for k, (case, (rows, g)) in enumerate(zip(cases, tables, strict=True)):
        model = _errors(rows, _NONE)
        held = overheads if case.held_out else _overheads_of([tables[j] for j in fitted if j != k])[0]
        inside = _errors(rows, overheads.launched(g))
        out = _errors(rows, held.launched(g))
        logs.append(LogAccuracy(name=case.name, ranks=case.system.ranks, nodes=case.system.nodes,
                                hardware=case.hardware, sizes=len(rows), model_large=model[0],
                                model_small=model[1], in_sample_large=inside[0], in_sample_small=inside[1],
                                held_out_large=out[0], held_out_small=out[1], held_out=case.held_out,
                                gpus_per_thread=g))
    return Calibration(overheads=overheads, logs=tuple(logs), notes=notes)
