"""What NCCL's model answers, each result with what it was computed for.

- :func:`predicted`: one prediction with the system it was made for (:class:`Predicted`), NCCL's
  estimate or, given calibrated overheads, what nccl-tests measures;
- :func:`ranges`: the size ranges of each choice with the time at each end (:class:`Ranges`);
- :func:`log_system`: a log's measurements with their rank count, and the system the hardware
  describes for the log's ranks and nodes;
- :func:`calibrate_manifest`: the overheads of ``as_measured`` calibrated on a manifest's logs
  (:class:`Calibrated`);
- :func:`preset_from_log`: a hardware preset read from an NCCL_DEBUG=INFO log (:class:`PresetText`);
- :func:`preset_list`: the shipped presets (:class:`PresetList`).

The numbers are those of :mod:`costmodel.nccl.predict`, :mod:`~costmodel.nccl.sweep` and
:mod:`~costmodel.nccl.measured`, whose docstrings cite NCCL's source; this module only gathers them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from costmodel.errors import InputError

__all__ = [
    "Calibrated",
    "Predicted",
    "PresetList",
    "PresetText",
    "Ranges",
    "calibrate_manifest",
    "log_system",
    "predicted",
    "preset_from_log",
    "preset_list",
    "ranges",
]


@dataclass(frozen=True)
class Predicted:
    """One prediction with the system it was made for."""

    prediction: Any
    system: Any
    explain: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.prediction.to_dict(), "system": self.system.to_dict()}


@dataclass(frozen=True)
class Ranges:
    """A sweep, with the predicted time at each end of each range."""

    sweep: Any
    system: Any
    ends: tuple[tuple[Any, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        from costmodel._json import real

        out = self.sweep.to_dict()
        for r, (a, b) in zip(out["ranges"], self.ends, strict=True):
            r["from_time_s"], r["to_time_s"] = real(a.time_s), real(b.time_s)
        return {**out, "system": self.system.to_dict()}


@dataclass(frozen=True)
class Calibrated:
    """Overheads calibrated on a manifest's logs, and where they were written (None: nowhere)."""

    calibration: Any
    out: Path | None

    def to_dict(self) -> dict[str, Any]:
        return {**self.calibration.to_dict(), "out": None if self.out is None else str(self.out)}


@dataclass(frozen=True)
class PresetText:
    """A preset built from a debug log: its TOML, where it went (None: nowhere), and what the reader noted."""

    preset: dict[str, Any]
    toml: str
    out: Path | None
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "toml": self.toml,
            "out": None if self.out is None else str(self.out),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class PresetList:
    """The shipped presets."""

    presets: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        keys = ("name", "description", "sources", "arch", "gpus_per_node", "hosts_per_node", "nvls")
        return {
            "presets": [
                {**{k: p[k] for k in keys}, "single": "single" in p, "multi": "multi" in p}
                for p in self.presets
            ]
        }


def _priced(collective: str, n: Any, system: Any, overheads: Any, settings: dict[str, Any]) -> Any:
    """NCCL's prediction at *n*; with *overheads*, what nccl-tests measures for its choice."""
    from costmodel.nccl.predict import predict

    p = predict(collective, n, system, **settings)
    if overheads is None:
        return p
    from costmodel.nccl.measured import as_measured

    return as_measured(p, overheads)


def predicted(collective: str, n: Any, system: Any, *, version: str = "2.30", algo: str | None = None,
              proto: str | None = None, overrides: str | None = None, overheads: Any = None,
              explain: bool = False) -> Predicted:
    """NCCL's choice and time for *collective* of *n* bytes on *system* (:func:`~costmodel.nccl.predict`).

    With *overheads* (:func:`~costmodel.nccl.measured.load_overheads`) the time is what nccl-tests
    measures for that choice; *explain* asks the renderer for the chosen entry's formulas.

    >>> from costmodel.nccl import System
    >>> s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5)
    >>> r = predicted("allreduce", "8MiB", s)
    >>> r.prediction.algorithm, r.prediction.protocol, r.to_dict()["system"]["ranks"]
    ('Tree', 'LL128', 16)
    """
    settings: dict[str, Any] = {"version": version, "algo": algo, "proto": proto, "overrides": overrides}
    return Predicted(_priced(collective, n, system, overheads, settings), system, explain)


def ranges(collective: str, min_bytes: Any, max_bytes: Any, system: Any, *, version: str = "2.30",
           algo: str | None = None, proto: str | None = None, overrides: str | None = None,
           overheads: Any = None) -> Ranges:
    """The size ranges of each of NCCL's choices from *min_bytes* to *max_bytes*
    (:func:`~costmodel.nccl.sweep`), with the time at each end of each range (with *overheads*, as
    nccl-tests measures it).

    >>> from costmodel.nccl import System
    >>> s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5)
    >>> r = ranges("allreduce", 1, 2**30, s)
    >>> len(r.ends) == len(r.sweep.ranges)
    True
    """
    from costmodel.nccl.sweep import sweep

    settings: dict[str, Any] = {"version": version, "algo": algo, "proto": proto, "overrides": overrides}
    found = sweep(collective, min_bytes, max_bytes, system, **settings)
    ends = tuple((_priced(collective, r.from_bytes, system, overheads, settings),
                  _priced(collective, r.to_bytes, system, overheads, settings)) for r in found.ranges)
    return Ranges(found, system, ends)


def log_system(measurements: Any, facts: Any, hardware: Any, *, ranks: int | None, nodes: int | None,
               log: Path | str) -> tuple[Any, Any]:
    """The log's measurements with their rank count (*ranks* where the log does not say it), and the
    system *hardware* (:class:`~costmodel.nccl.hardware.Hardware`) describes for its ranks and nodes."""
    from costmodel.calibration.logs.measurements import UNKNOWN_RANKS, ranks_allowed
    from costmodel.nccl.compare import log_nodes

    if measurements.p is None:
        if ranks is None:
            why = next((w.removesuffix(f": {UNKNOWN_RANKS}") for w in measurements.warnings
                        if w.endswith(UNKNOWN_RANKS)), "no # Rank lines")
            raise InputError(f"{log} does not say how many ranks ran ({why}); pass ranks=R")
        bounds = measurements.p_bounds
        if bounds is not None and not ranks_allowed(ranks, bounds):
            least, most = bounds
            raise InputError(f"ranks={ranks} is not what the log ran: its {measurements.p_bounds_by} allows "
                             + (f"{least}" if least == most else f"{least} to {most}"))
        measurements = measurements.with_p(ranks)
    elif ranks is not None and ranks != measurements.p:
        raise InputError(f"ranks={ranks} differs from the {measurements.p} ranks of the log; drop ranks=")
    nodes = log_nodes(facts, ranks=measurements.p, nodes=nodes, hosts_per_node=hardware.node_hosts())
    _fits_preset(hardware, ranks=measurements.p, nodes=nodes)
    return measurements, hardware.system(ranks=measurements.p, nodes=nodes)


def _fits_preset(hardware: Any, *, ranks: int, nodes: int | None) -> None:
    """Refuse a preset whose nodes hold other than the log's GPUs per node (a preset's graphs are those of
    its whole node: several nodes must be full ones, one node at most full)."""
    if hardware.preset is None or nodes is None or hardware.node_hosts() > 1:
        return
    from costmodel.nccl.presets import load_preset

    preset = load_preset(hardware.preset)
    gpus = preset["gpus_per_node"]
    if (ranks == gpus * nodes) if nodes > 1 else ranks <= gpus:
        return
    per = f", {ranks // nodes} GPUs per node," if ranks % nodes == 0 else ""
    raise InputError(f"the log ran {ranks} ranks on {nodes} node{'s' if nodes > 1 else ''}{per} where preset "
                     f"{preset['name']!r} describes {gpus} GPUs per node; describe the hardware with arch=, "
                     "channels=, bw_intra= and bw_inter= instead of preset=")


def calibrate_manifest(manifest: Path | str) -> Calibrated:
    """The overheads of ``as_measured`` calibrated on the logs a manifest names
    (:func:`~costmodel.nccl.measured.calibrate`), its source saying which; written nowhere yet."""
    from costmodel.nccl.compare import read_manifest
    from costmodel.nccl.measured import calibrate

    cases = read_manifest(Path(manifest))
    fitted = [c.name for c in cases if not c.held_out]
    kept = [c.name for c in cases if c.held_out]
    source = (f"calibrated by costmodel nccl calibrate on {len(fitted)} nccl-tests logs:\n"
              + "\n".join(f"  {name}" for name in fitted)
              + (f"\nand priced, never calibrated on, {len(kept)} more held out:\n" if kept else "")
              + "\n".join(f"  {name}" for name in kept))
    return Calibrated(calibrate(cases, source=source), None)


def preset_from_log(log: Path | str, name: str = "from-log") -> PresetText:
    """The hardware preset *name* an NCCL_DEBUG=INFO log describes, checked to load as a preset; a
    half without the tree graph NCCL always has is named in a warning note.  Written nowhere yet.  An
    RCCL log (its version line, AMD's XGMI links) is refused: RCCL's search and tuning are its own."""
    from costmodel._files import SMALLER_LOG, read_text
    from costmodel.nccl.compare import log_facts
    from costmodel.nccl.debuglog import parse_debug_log
    from costmodel.nccl.presets import validate_preset
    from costmodel.tomlfile import loads

    text = read_text(log, what="the NCCL log", smaller=SMALLER_LOG)
    if log_facts(text).library == "rccl":
        raise InputError(f"{log} is an RCCL log (RCCL, AMD's library): RCCL searches its topology and tunes "
                         "its own choices, which NCCL's model does not describe, so no NCCL preset is made "
                         "from it")
    debug = parse_debug_log(text, path=str(log))
    text = debug.to_toml(name)
    preset = validate_preset(loads(text, path=name), path=name)  # what is written must load as a preset
    notes = tuple(debug.notes) + tuple(
        f"warning: the log shows no {half} tree graph (NCCL always has one): add [{half}.tree] before using "
        f"the preset, e.g. [{half}.ring]'s values with pattern = {1 if half == 'multi' else 4}"
        for half in ("single", "multi")
        if half in preset and "tree" not in preset[half]
    )
    return PresetText(preset, text, None, notes)


def preset_list() -> PresetList:
    """Every shipped preset, by name."""
    from costmodel.nccl.presets import load_preset, preset_names

    return PresetList(tuple(load_preset(n) for n in preset_names()))
