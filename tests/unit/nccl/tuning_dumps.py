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

import tomllib

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
    # 2 x 8 H100 (GCP a3-megagpu-8g); the same process's "NCCL version 2.20.5+cuda12.4" line is in the issue
    # thread, not in the excerpt; the excerpt has the NVLS graph but not the ring/tree ones
    _dump("h100-gcp-a3mega-2x8-nccl2.2x-tuning.log", version="2.20.5", ranks=16, nodes=2),
    # an AutoDL container, NCCL 2.7-2.14: neither the graphs nor the communicator size are in the excerpt
    _dump("autodl-container-nccl2.1x-tuning.log", version="2.1x", ranks=None, nodes=None),
)


def printed_cells(table: Any) -> dict[tuple[str, str, str], str]:
    """Every cell of a :class:`~costmodel.nccl.TuningTable` as NCCL prints it: ``"lat/bw"``, spaces stripped.

    Read back from :meth:`TuningTable.format` (C ``float`` rounding, ``%8.1f/%6.1f``), the public way
    to see what NCCL's ``INFO`` line would show.
    """
    cells: dict[tuple[str, str, str], str] = {}
    algorithms: list[str] = []
    for line in table.format().splitlines():
        head, _, rest = line.partition("|")
        fields = [f.strip() for f in rest.split("|")[:-1]]
        if head.strip() == "Algorithm":
            algorithms = list(fields)
        elif head.strip() not in ("Protocol", "Max NThreads"):
            for i, cell in enumerate(fields):
                algorithm, protocol = algorithms[i // 3], table.constants.protocols[i % 3]
                cells[(head.strip(), algorithm, protocol)] = cell.replace(" ", "")
    return cells


# -- NCCL 2.27.5 tables of H100 NVSwitch nodes (a third party's transcription, numbers only) ------------------

H100_TABLES: dict[str, Any] = tomllib.loads((DATA / "h100-nvswitch-nccl2.27.5-tuning.toml").read_text())
"""``{table: {"NODESxPPN": [[lat, bw] per protocol]}}``: see the file's header for its source."""

NVLINK_BW = 18 * 20.6
"""GB/s from an H100 to its NVSwitches: 18 NVLink 4 links x ``SM90_NVLINK_BW`` (src/graph/topo.h)."""
NIC_PATH_BW = 48.0
"""GB/s from a GPU to its own NIC: PCIe Gen5 x16 (48) below the 400 Gb/s NIC (50), the first
``sm90SpeedArrayInter`` step (src/graph/search.cc)."""
SM90_SPEEDS_INTER = (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0)
"""``sm90SpeedArrayInter`` (src/graph/search.cc, unchanged from 2.21 to 2.30), its first steps."""


def h100_graphs(ppn: int) -> dict[str, dict[str, Any]]:
    """The graphs NCCL's search finds for *ppn* GPUs per node of an H100 NVSwitch node with one 400 Gb/s
    NIC per GPU (src/graph/search.cc, ncclTopoCompute, same rules in 2.27.5 and 2.30.7), in the preset schema.

    Ring: one channel per local NIC at 48 GB/s (``maxBw``); ncclTopoDupChannels doubles ≤ 4 channels
    and halves their bandwidth (sm90: only ``bwIntra < 50 && nChannels > 4`` stops it), so ppn 1, 2, 4
    give 2·ppn × 24 GB/s and ppn 8 gives 8 × 48 (7 × 48 ≤ 370.8 of NVLink per GPU).
    Tree: searched with the ring's channel count (init.cc: min = max = ring's); bwInter as the ring's,
    bwIntra raised in pass 2 while below 2 × bwInter, up to 48 (the array's top); pattern 3
    (NCCL_TOPO_PATTERN_TREE: ngpus = 1 forces it, and on sm90 a balanced tree is retried as a simple
    one; the 0.85 factor it brings is in every printed Tree cell).
    NVLS (nvls.cc: only with more than 2 local GPUs): one channel per GPU; each GPU's link carries
    (ppn - 1) × bw and 2 × bw as head, so bwIntra is the largest step with (ppn + 1) × bw ≤ 370.8
    (40 for 8 GPUs, 48 for 4); pass 2 raises bwInter to 48 while below 2 × bwIntra.
    """
    ring_channels = ppn if ppn > 4 else 2 * ppn
    ring_bw = NIC_PATH_BW if ppn > 4 else NIC_PATH_BW / 2
    intra = "NVL" if ppn > 1 else "LOC"
    common = {"type_intra": intra, "type_inter": "PIX", "latency_inter": 0.0}
    graphs = {
        "ring": {"channels": ring_channels, "bw_intra": ring_bw, "bw_inter": ring_bw, "pattern": 4, **common},
        "tree": {"channels": ring_channels, "bw_intra": NIC_PATH_BW, "bw_inter": ring_bw, "pattern": 3, **common},
    }
    if ppn > 2:
        nvls_intra = next(s for s in SM90_SPEEDS_INTER if (ppn + 1) * s <= NVLINK_BW)
        graphs["nvls"] = {"channels": ppn, "bw_intra": nvls_intra, "bw_inter": NIC_PATH_BW, "pattern": 5,
                          "type_intra": "NVL", "type_inter": "PIX", "latency_inter": 0.0}
    return graphs


def h100_preset(ppn: int) -> dict[str, Any]:
    """A preset (multi-node half only) of H100 NVSwitch nodes running *ppn* GPUs each: Intel hosts."""
    return {"name": f"h100-nvswitch-{ppn}gpn", "arch": 90, "gpus_per_node": ppn, "cpu_arch": "x86",
            "cpu_vendor": "intel", "nvswitch": True, "nvls": ppn > 2, "multi": h100_graphs(ppn)}


def h100_cells() -> dict[tuple[int, int, str, str, str], str]:
    """Every transcribed cell: ``(nodes, ppn, function, algorithm, protocol) -> "lat/bw"``."""
    cells = {}
    functions = {"allgather_ring": (("AllGather", "ReduceScatter"), "Ring"),
                 "allreduce_ring": (("AllReduce",), "Ring"), "allreduce_tree": (("AllReduce",), "Tree")}
    for name, (names, algorithm) in functions.items():
        for key, row in H100_TABLES[name].items():
            nodes, ppn = map(int, key.split("x"))
            for protocol, (lat, bw) in zip(("LL", "LL128", "Simple"), row, strict=True):
                for function in names:
                    cells[(nodes, ppn, function, algorithm, protocol)] = f"{lat:.1f}/{bw:.1f}"
    for key, (lat, bw) in H100_TABLES["allreduce_nvlstree"].items():
        nodes, ppn = map(int, key.split("x"))
        cells[(nodes, ppn, "AllReduce", "NVLSTree", "Simple")] = f"{lat:.1f}/{bw:.1f}"
    return cells
