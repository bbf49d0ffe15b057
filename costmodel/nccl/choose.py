"""What NCCL picks for one collective call: the time of each entry and the minimum.

:func:`algo_time` ports ``ncclTopoGetAlgoTime`` (``src/graph/tuning.cc``): the tree correction
factor by ⌊log₂(nBytes/64)⌋, the ring/Simple multi-node plateau factor, one pipelined operation
(``numPipeOps = 1``), ``time = latency + nBytes / (1000 · bandwidth)`` in µs. :func:`candidates`
applies the enqueue-time exclusions (``updateCollCostTable`` in 2.30, ``topoGetAlgoInfo`` in 2.21,
``src/enqueue.cc``); :func:`choose` takes the first entry of least time in NCCL's (algorithm,
protocol) order and the channels and threads it launches (``topoGetAlgoInfo`` in 2.30,
``getChannnelThreadInfo`` in 2.21).

References
----------
.. [1] NVIDIA, NCCL source, ``src/graph/tuning.cc`` (ncclTopoGetAlgoTime) and ``src/enqueue.cc``,
   tags v2.21.5-1 and v2.30.7-1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from costmodel.nccl.tuning import TuningEntry, TuningTable, log2i

__all__ = ["Choice", "Timed", "algo_time", "candidates", "choose", "launch", "plan", "time_line"]


@dataclass(frozen=True, slots=True)
class Timed:
    """An entry of the table at one size: its time (µs), or ``None`` when NCCL does not consider it.

    ``latency_us`` and ``bandwidth`` are the values after the size-dependent corrections;
    ``backup`` marks 2.21's fallback to the ring bandwidth of a disabled ring entry (its ``reason``
    then says why the entry is disabled).
    """

    entry: TuningEntry
    time_us: Fraction | None
    latency_us: Fraction
    bandwidth: Fraction
    reason: str
    tree_factor: Fraction | None = None
    plateau_factor: Fraction | None = None
    backup: bool = False

    @property
    def fallback(self) -> bool:
        """Whether NCCL 2.21 uses this entry only because no other one is enabled.

        Either a disabled ring entry timed with ``ringbdw`` (``backup``: topoGetAlgoInfo,
        ``src/enqueue.cc`` v2.21.5-1, keeps it apart in ``backupMinTime`` and takes it only when no
        other entry has a time), or a ring entry ncclTopoTuneModel put back in the table because
        every entry of the function was disabled (:attr:`TuningEntry.fallback`).
        """
        return self.backup or self.entry.fallback


@dataclass(frozen=True, slots=True)
class Choice:
    """NCCL's pick for one call: the entry, its time, and the channels and threads it launches."""

    timed: Timed
    channels: int
    threads: int


def _log_size(n: int, version: str) -> int:
    """``log2i(nBytes >> 6)``: 2.30's log2Down gives -1 for 0, 2.21's loop gives 0."""
    shifted = n >> 6
    if shifted == 0:
        return 0 if version == "2.21" else -1
    return log2i(shifted)


def time_line(
    table: TuningTable, entry: TuningEntry, n: int, *, backup: bool = False
) -> tuple[Fraction, Fraction, Fraction | None, Fraction | None]:
    """(latency µs, bandwidth GB/s, tree factor, plateau factor) of *entry* at size *n* bytes.

    The time is ``latency + n / (1000 · bandwidth)``; both are constant for n between two
    breakpoints (powers of two times 64, and the plateau threshold), which :mod:`costmodel.nccl.sweep` uses.
    The plateau test is ncclTopoGetAlgoTime's ``nBytes / (comm->nChannels · nRanks) ≥ 64`` with
    ``table.channels`` as ``comm->nChannels`` (2.21: raised to the NVLS channels, see
    :func:`costmodel.nccl.tuning.comm_channels`).
    """
    c, s = table.constants, table.system
    bw = entry.backup_bandwidth if backup else entry.bandwidth
    lat = entry.latency_us
    log_size = _log_size(n, c.version)
    p = c.protocol_index(entry.protocol)
    tree = plateau = None
    columns = len(c.tree_correction_factor[p])
    if c.version == "2.21":
        if entry.algorithm == "Tree" and log_size < 23:
            tree = c.tree_correction_factor[p][log_size]
    else:
        if entry.algorithm == "Tree" and entry.function == "AllReduce" and 0 <= log_size < 23:
            tree = c.tree_correction_factor[p][log_size]
        if (
            entry.algorithm == "NVLSTree"
            and entry.function == "AllReduce"
            and 0 <= log_size < min(24, columns)
            and s.arch >= 100
            and s.cpu_arch == "x86"
        ):
            tree = c.tree_correction_factor[p][log_size]
    if tree is not None:
        bw *= tree
    threshold, slow, fast = c.ring_simple_plateau
    if (
        entry.algorithm == "Ring"
        and entry.protocol == "Simple"
        and s.nodes > 1
        and entry.function == "AllReduce"
        and n // (table.channels * s.ranks) >= threshold
    ):
        plateau = slow if s.arch < 80 else fast
        lat *= plateau
    return lat, bw, tree, plateau


def algo_time(table: TuningTable, entry: TuningEntry, n: int, *, backup: bool = False) -> Timed:
    """The time of *entry* at *n* bytes, as ncclTopoGetAlgoTime computes it (numPipeOps = 1)."""
    if not (entry.backup_bandwidth if backup else entry.bandwidth):
        return Timed(entry, None, entry.latency_us, Fraction(0), entry.reason or "zero bandwidth")
    lat, bw, tree, plateau = time_line(table, entry, n, backup=backup)
    return Timed(entry, lat + Fraction(n) / (1000 * bw), lat, bw, "", tree, plateau, backup)


def _excluded(table: TuningTable, algorithm: str, function: str) -> str:  # noqa: PLR0911 - one return per rule of enqueue.cc
    """Why enqueue.cc does not consider *algorithm* for *function* at all ('' if it does)."""
    c, s = table.constants, table.system
    nvls = s.nvls and table.nvls_channels > 0
    if algorithm in ("CollNetDirect", "CollNetChain"):
        if not s.collnet:
            return "CollNet is off"
        if c.version != "2.21" and s.ranks_per_node > c.max_direct_arity + 1:
            return f"CollNet needs at most {c.max_direct_arity + 1} GPUs per node"
    if algorithm in ("NVLS", "NVLSTree"):
        if not nvls:
            return "NVLS is not supported (nvls off)"
        if c.version != "2.21" and function != "AllReduce" and s.ranks_per_node > c.max_nvls_arity:
            return f"NVLS {function} needs at most {c.max_nvls_arity} GPUs per node"
    if algorithm == "NVLS" and not s.collnet and s.nodes > 1:
        return "NVLS across nodes needs CollNet"
    if (
        c.version == "2.21"
        and algorithm == "NVLS"
        and function in ("AllGather", "ReduceScatter")
        and s.nodes > 1
    ):
        return "NCCL 2.21 runs NVLS all-gather/reduce-scatter on one node only"
    return ""


def _reasons(*texts: str) -> str:
    """The reasons of *texts* ("; "-separated) once each; one that another begins with is dropped."""
    parts = list(dict.fromkeys(p for t in texts for p in t.split("; ") if p))
    return "; ".join(p for p in parts if not any(q != p and q.startswith(p) for q in parts))


def plan(table: TuningTable, function: str) -> tuple[tuple[TuningEntry, str], ...]:
    """Every entry of *function* in NCCL's order with the reasons enqueue.cc does not consider it ('' when
    it does): what :func:`candidates` times at each size, which does not depend on the size."""
    out = []
    for entry in table.function_entries(function):
        excluded = _excluded(table, entry.algorithm, function)
        out.append((entry, _reasons(entry.reason, excluded) if excluded else ""))
    return tuple(out)


def candidates(table: TuningTable, function: str, n: int,
               planned: tuple[tuple[TuningEntry, str], ...] | None = None) -> tuple[Timed, ...]:
    """Every entry of *function* at *n* bytes with its time, in NCCL's (algorithm, protocol) order.

    Entries NCCL does not consider get ``time_us=None`` and the reason. In 2.21 a ring entry
    with no bandwidth but a backup (``ringbdw``) is timed with it and marked ``backup``. *planned* is
    :func:`plan`'s result for the table and function, when sizes are timed one after another.
    """
    out = []
    for entry, excluded in plan(table, function) if planned is None else planned:
        if excluded:
            out.append(Timed(entry, None, entry.latency_us, entry.bandwidth, excluded))
            continue
        timed = algo_time(table, entry, n)
        if (
            timed.time_us is None
            and table.constants.version == "2.21"
            and entry.algorithm == "Ring"
            and entry.backup_bandwidth
        ):
            timed = replace(algo_time(table, entry, n, backup=True), reason=entry.reason)
        out.append(timed)
    return tuple(out)


def pick(timed: tuple[Timed, ...]) -> Timed | None:
    """The first entry of least time (strictly smaller wins: ties go to NCCL's order); 2.21's
    backup ring entries only when nothing else is available (topoGetAlgoInfo's ``backupMinTime``,
    ``src/enqueue.cc`` v2.21.5-1)."""
    best = None
    for t in timed:
        if t.time_us is not None and not t.backup and (best is None or t.time_us < best.time_us):  # type: ignore[operator]
            best = t
    if best is None:
        for t in timed:
            if t.time_us is not None and (best is None or t.time_us < best.time_us):  # type: ignore[operator]
                best = t
    return best


def launch(table: TuningTable, algorithm: str, protocol: str, n: int) -> tuple[int, int]:  # noqa: PLR0912 - the port of topoGetAlgoInfo, in its order
    """(channels, threads) NCCL launches for *n* bytes with the chosen entry: the channel and
    thread reduction for small sizes of topoGetAlgoInfo (2.30) / getChannnelThreadInfo (2.21).

    2.21 starts from ``comm->collChannels`` (not the ``comm->nChannels`` it raised to the NVLS
    channels, :func:`costmodel.nccl.tuning.comm_channels`), 2.30 from ``comm->nChannels`` (the same
    number there)."""
    c, s = table.constants, table.system
    a, p = c.algorithm_index(algorithm), c.protocol_index(protocol)
    nc = table.coll_channels if c.version == "2.21" else table.channels
    nt = table.max_threads[a][p]
    threshold = table.thread_thresholds[a][p]
    if algorithm == "CollNetDirect":
        heads = max(1, s.collnet_heads)
        switch = 16
        flag = True
        while switch >= 1 and flag:
            while True:
                flag = n < nc * nt * heads * threshold
                if not (flag and nc > switch):
                    break
                if nc == switch + switch // 2:
                    threshold //= 2
                nc -= 1
            switch //= 2
    elif algorithm in ("NVLS", "NVLSTree"):
        nc = (
            min(table.nvls_channels, table.channels)
            if c.version != "2.21" and s.nodes > 1 and algorithm == "NVLS"
            else table.nvls_channels
        )
    else:
        while n < nc * nt * threshold and nc >= 2:
            nc -= 1
    if algorithm not in ("NVLS", "NVLSTree", "CollNetDirect"):
        while n < nc * nt * threshold and nt % 128 == 0:
            nt //= 2
    if protocol == "Simple":
        if algorithm == "Ring":
            nt += c.warp_size  # extra warp for sync
        if algorithm == "Tree":
            nt += 4 * c.warp_size
    nt = 3 * c.warp_size if nt // c.warp_size < 3 else nt
    if c.version != "2.21" and algorithm in ("Tree", "PAT"):
        nt = c.max_nthreads
    return nc, nt


def choose(table: TuningTable, function: str, n: int) -> Choice | None:
    """NCCL's choice for *function* on *n* bytes, or ``None`` when no entry is available
    (NCCL then fails with "No algorithm/protocol available")."""
    best = pick(candidates(table, function, n))
    if best is None:
        return None
    channels, threads = launch(table, best.entry.algorithm, best.entry.protocol, n)
    return Choice(best, channels, threads)
