"""The sizes at which NCCL's choice changes, found exactly: :func:`sweep`.

Between two breakpoints (sizes 64·2^k, where the tree correction factor changes, and the
ring/Simple plateau threshold 64·channels·ranks) every entry's time is ``a + b·n`` with constant
``a`` (µs) and ``b = 1/(1000·bandwidth)``. On each such interval the choice follows the lower
envelope of those lines (ties to the first in NCCL's order); the next switch is the least whole
n where another line is below the current one, solved exactly in Fractions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import floor
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.errors import InputError
from costmodel.nccl.choose import candidates, pick, time_line
from costmodel.nccl.predict import FUNCTIONS, channel_notes, function_of, size_of, table_for
from costmodel.nccl.system import System

__all__ = ["Sweep", "SweepRange", "sweep"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepRange(JSONFields):
    """Sizes ``from_bytes ≤ n ≤ to_bytes`` on which NCCL chooses (algorithm, protocol).

    ``fallback``: the choice is one NCCL 2.21 makes only because no other entry is enabled
    (:attr:`costmodel.nccl.choose.Timed.fallback`).
    """

    algorithm: str
    protocol: str
    from_bytes: int
    to_bytes: int
    fallback: bool = False



@dataclass(frozen=True, slots=True, kw_only=True)
class Sweep:
    """NCCL's choice over a range of sizes: consecutive ranges, each starting at a switch size."""

    collective: str
    function: str
    ranks: int
    nodes: int
    version: str
    min_bytes: int
    max_bytes: int
    ranges: tuple[SweepRange, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values."""
        return {
            "collective": self.collective,
            "function": self.function,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "nccl_version": self.version,
            "min_bytes": real(self.min_bytes),
            "max_bytes": real(self.max_bytes),
            "ranges": [r.to_dict() for r in self.ranges],
            "notes": list(self.notes),
        }


def _breakpoints(lo: int, hi: int, plateau: int) -> list[int]:
    points = {lo, plateau} | {64 << k for k in range(max(hi.bit_length(), 1))}
    return sorted(x for x in points if lo <= x <= hi)


def sweep(
    collective: str,
    min_bytes: Any,
    max_bytes: Any,
    system: System,
    *,
    version: str = "2.30",
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
) -> Sweep:
    """NCCL's choice for every whole size from *min_bytes* to *max_bytes*, as exact ranges.

    Examples
    --------
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> [(r.algorithm, r.protocol, r.from_bytes) for r in sweep("allreduce", 1, "1GiB", s).ranges]
    [('Ring', 'LL', 1), ('Ring', 'LL128', 2714423), ('Ring', 'Simple', 62634667)]
    """
    function = function_of(collective)
    lo, hi = size_of(min_bytes), size_of(max_bytes)
    if lo > hi:
        raise InputError(f"min_bytes={lo} is more than max_bytes={hi}")
    table = table_for(system, version=version, algo=algo, proto=proto, overrides=overrides)
    plateau = table.constants.ring_simple_plateau[0] * table.channels * system.ranks
    points = _breakpoints(lo, hi, plateau)
    ranges: list[SweepRange] = []
    for i, start in enumerate(points):
        end = points[i + 1] - 1 if i + 1 < len(points) else hi
        n = start
        while n <= end:
            timed = candidates(table, function, n)
            best = pick(timed)
            if best is None:
                raise InputError(f"no algorithm/protocol available for {function}; NCCL would fail this call")
            order = {id(t): k for k, t in enumerate(timed)}
            backup_only = best.backup
            lines = {}
            for t in timed:
                if t.time_us is None or (t.backup and not backup_only):
                    continue
                lat, bw, _, _ = time_line(table, t.entry, n, backup=t.backup)
                lines[order[id(t)]] = (lat, 1 / (1000 * bw), t)
            cur = order[id(best)]
            a0, b0, _ = lines[cur]
            nxt = end + 1
            for k, (a1, b1, _) in lines.items():
                if k == cur or b1 >= b0:
                    continue
                x0 = (a1 - a0) / (b0 - b1)  # the lines cross at n = x0
                first = floor(x0) + 1 if (k > cur or x0 != floor(x0)) else int(x0)
                first = max(first, n + 1)
                nxt = min(nxt, first)
            chosen = best.entry
            if ranges and (ranges[-1].algorithm, ranges[-1].protocol) == (chosen.algorithm, chosen.protocol):
                ranges[-1] = replace(ranges[-1], to_bytes=nxt - 1)
            else:
                ranges.append(
                    SweepRange(
                        algorithm=chosen.algorithm,
                        protocol=chosen.protocol,
                        from_bytes=n,
                        to_bytes=nxt - 1,
                        fallback=best.fallback,
                    )
                )
            n = nxt
    name = next(k for k, v in FUNCTIONS.items() if v == function)
    return Sweep(
        collective=name,
        function=function,
        ranks=system.ranks,
        nodes=system.nodes,
        version=table.constants.version,
        min_bytes=lo,
        max_bytes=hi,
        ranges=tuple(ranges),
        notes=(*channel_notes(table, function), *table.system.notes),
    )
