"""NCCL's own tuning model: which algorithm and protocol NCCL picks, and the time it predicts.

The model is NCCL's, read from its source for two versions (2.30 = tag v2.30.7-1 and 2.21 =
tag v2.21.5-1 of NVIDIA/nccl): the constants (:data:`CONSTANTS`), the tuning table of
``ncclTopoTuneModel`` (:func:`tune`), the time of each entry (``ncclTopoGetAlgoTime``) and the
choice of ``src/enqueue.cc`` (:func:`predict`, :func:`sweep`). What NCCL's topology search finds
(channels, bandwidths per channel, path types) is an input: a :class:`System`.

>>> from costmodel.nccl import System, predict
>>> s = System.explicit(arch=90, ranks=16, nodes=2, channels=16, bw_intra=40, bw_inter=12.5)
>>> p = predict("allreduce", "8MiB", s)
>>> p.algorithm, p.protocol, p.channels, p.threads
('Tree', 'LL128', 32, 640)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel.nccl.constants import CONSTANTS, VERSIONS, NcclConstants
from costmodel.nccl.predict import EntryTime, Prediction, Step, predict
from costmodel.nccl.presets import load_preset, preset_names
from costmodel.nccl.sweep import Sweep, SweepRange, sweep
from costmodel.nccl.system import Graph, System
from costmodel.nccl.tuning import TuningEntry, TuningTable, tune

if TYPE_CHECKING:
    from costmodel.nccl.debuglog import DebugLog, parse_debug_log, read_debug_log

__all__ = [
    "CONSTANTS",
    "VERSIONS",
    "DebugLog",
    "EntryTime",
    "Graph",
    "NcclConstants",
    "Prediction",
    "Step",
    "Sweep",
    "SweepRange",
    "System",
    "TuningEntry",
    "TuningTable",
    "load_preset",
    "parse_debug_log",
    "predict",
    "predict_range",
    "preset_names",
    "read_debug_log",
    "sweep",
    "tune",
]

_LAZY = {"DebugLog", "parse_debug_log", "read_debug_log"}
"""Names of :mod:`costmodel.nccl.debuglog`, imported on first use: it reads benchmark logs with
:mod:`costmodel.calibration`, which a prediction does not need (start-up time)."""


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from costmodel.nccl import debuglog

        return getattr(debuglog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


predict_range = sweep
"""Another name of :func:`sweep` (the size ranges per chosen algorithm and protocol)."""
