"""Public NCCL TUNING tables and what is known of their systems: data for checking a tuning model.

Each entry of :data:`DUMPS` holds a saved log (tests/data/nccl-debug), the NCCL version and the
communicator (ranks, nodes) it was printed for, the preset built from the same log
(:meth:`costmodel.nccl.debuglog.DebugLog.to_preset`) when the log has the graphs a model needs, and
``table``: every printed cell, ``(function, algorithm, protocol) -> "lat/bw"`` exactly as NCCL
printed it with ``%8.1f/%6.1f`` (spaces stripped).  ``missing`` says why a dump cannot be
reproduced from its log alone (the stored copies of the public threads are excerpts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costmodel.errors import ParseError
from costmodel.nccl.debuglog import read_debug_log

DATA = Path(__file__).resolve().parents[2] / "data" / "nccl-debug"


def _dump(log: str, *, version: str, ranks: int | None, nodes: int | None) -> dict[str, Any]:
    parsed = read_debug_log(DATA / log)
    assert parsed.tuning is not None, log
    try:
        preset: dict[str, Any] | None = parsed.to_preset(name=log.removesuffix(".log"))
        missing = ""
    except ParseError as e:
        preset, missing = None, str(e).split(": ", 1)[1]
    return {"log": log, "version": version, "ranks": ranks, "nodes": nodes, "preset": preset,
            "missing": missing, "table": dict(parsed.tuning.text),
            "truncated": parsed.tuning.truncated}


DUMPS: tuple[dict[str, Any], ...] = (
    # 2 x 8 H100 (GCP a3-megagpu-8g), NCCL 2.20-2.22; the excerpt has the NVLS graph but not the ring/tree ones
    _dump("h100-gcp-a3mega-2x8-nccl2.2x-tuning.log", version="2.21", ranks=16, nodes=2),
    # an AutoDL container, NCCL 2.7-2.14: neither the graphs nor the communicator size are in the excerpt
    _dump("autodl-container-nccl2.1x-tuning.log", version="2.1x", ranks=None, nodes=None),
)
