"""What NCCL's own model predicts for one collective call: :func:`predict` and :class:`Prediction`.

Sizes follow costmodel's meaning of n (= nccl-tests' ``S`` and NCCL's ``nBytes``): all-reduce,
broadcast and reduce the whole vector, all-gather the gathered output, reduce-scatter the whole
input. Bus bandwidth is nccl-tests' (``busbw = algbw × factor``: all-reduce 2(p−1)/p, all-gather and
reduce-scatter (p−1)/p, broadcast and reduce 1), with ``algbw = n / time``.

References
----------
.. [1] NVIDIA, NCCL ``src/graph/tuning.cc`` and ``src/enqueue.cc``, tags v2.21.5-1 and v2.30.7-1.
.. [2] NVIDIA, nccl-tests ``doc/PERFORMANCE.md`` (algorithm and bus bandwidth).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, NamedTuple

from costmodel._json import JSONFields, real
from costmodel.errors import InputError, UnknownNameError
from costmodel.nccl.choose import Timed, candidates, launch, pick, plan
from costmodel.nccl.constants import CONSTANTS, NcclConstants
from costmodel.nccl.explain import Step, latency_steps, number_text
from costmodel.nccl.system import System, value_text
from costmodel.nccl.tuning import TuningTable, tune

__all__ = [
    "FUNCTIONS",
    "NCCL_COLLECTIVES",
    "EntryTime",
    "Prediction",
    "Step",
    "Timing",
    "bus_factor",
    "channel_notes",
    "function_of",
    "predict",
    "resolve_version",
    "size_of",
    "table_for",
    "timings",
]

FUNCTIONS = {
    "broadcast": "Broadcast",
    "reduce": "Reduce",
    "allgather": "AllGather",
    "reduce-scatter": "ReduceScatter",
    "allreduce": "AllReduce",
}
"""costmodel's collective names and NCCL's function names (``ncclFuncStr``)."""

_US = Fraction(1, 10**6)
_GB = 10**9


NCCL_COLLECTIVES = ("allreduce", "allgather", "reduce-scatter", "broadcast", "reduce")
"""The collectives NCCL's tuning model prices, by the names the command line takes."""

_POINT_TO_POINT = frozenset({"pt2pt", "sendrecv", "sendrecvperf", "send", "recv", "p2p", "hypercube"})
"""Names of point-to-point measurements (nccl-tests' sendrecv_perf and hypercube_perf; calibrate fit's
pt2pt): send/recv pairs, which NCCL's tuning model does not price."""


def function_of(collective: str) -> str:
    """NCCL's function name for a costmodel collective name (aliases accepted).

    >>> function_of("all-reduce")
    'AllReduce'
    >>> function_of("alltoall")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: alltoall is outside NCCL's tuning model: NCCL runs it as send/recv \
pairs; choose from allreduce, allgather, reduce-scatter, broadcast, reduce
    """
    from costmodel.collectives._registry import collective as resolve

    if not isinstance(collective, str):
        raise InputError(f"collective={collective!r} is not a name")
    if collective.strip().lower().replace("-", "").replace("_", "") in _POINT_TO_POINT:
        raise InputError("send/recv is outside NCCL's tuning model, which prices collectives only; "
                         f"choose from {', '.join(NCCL_COLLECTIVES)}")
    name = resolve(collective).name
    if name not in FUNCTIONS:
        raise InputError(
            f"{name} is outside NCCL's tuning model: NCCL runs it as send/recv pairs; "
            f"choose from {', '.join(NCCL_COLLECTIVES)}"
        )
    return FUNCTIONS[name]


def bus_factor(collective: str, p: int) -> Fraction:
    """nccl-tests' bus-bandwidth factor: busbw = algbw × this."""
    function = function_of(collective)
    if function == "AllReduce":
        return Fraction(2 * (p - 1), p)
    if function in ("AllGather", "ReduceScatter"):
        return Fraction(p - 1, p)
    return Fraction(1)


def size_of(n: Any) -> int:
    """*n* as a whole number of bytes ≥ 1 (text through costmodel's size parser)."""
    from costmodel.units import parse_size

    value = parse_size(n) if isinstance(n, str) else n
    if isinstance(value, bool) or not isinstance(value, int | Fraction) or value != int(value):
        raise InputError(f"n={value_text(n)} is not a whole number of bytes; NCCL sizes are counted in bytes")
    if value < 1:
        raise InputError(f"n={value_text(n)} is not positive; NCCL launches nothing for an empty collective")
    if value > 2**63:
        raise InputError(f"n={value_text(n)} is too large; NCCL's sizes are 64-bit (at most 2**63 bytes)")
    return int(value)


def resolve_version(version: str) -> NcclConstants:
    """The constants of a modelled NCCL version (``"2.30"``, ``"2.21"``; ``v2.30.7-1`` style accepted)."""
    text = str(version).strip().lower().removeprefix("v")
    key = ".".join(text.split(".")[:2])
    if key not in CONSTANTS:
        raise UnknownNameError("NCCL version", str(version), tuple(CONSTANTS))
    return CONSTANTS[key]


def table_for(
    system: System,
    *,
    version: str | NcclConstants = "2.30",
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
) -> TuningTable:
    """The tuning table of *system* for a version, with filters and overrides (a mapping or a TOML path)."""
    constants = version if isinstance(version, NcclConstants) else resolve_version(version)
    if overrides is not None:
        from costmodel.nccl.overrides import apply_overrides, load_overrides

        constants = (
            apply_overrides(overrides, constants)
            if isinstance(overrides, dict)
            else load_overrides(overrides, constants)
        )
    if not isinstance(system, System):
        raise InputError(
            f"system={system!r} is not a System; build one with System.from_preset or System.explicit"
        )
    if overrides is None and constants is CONSTANTS.get(constants.version):
        return _shipped_table(system, constants.version, algo, proto)
    return tune(system, constants, algo=algo, proto=proto)


@lru_cache(maxsize=64)
def _shipped_table(system: System, version: str, algo: str | None, proto: str | None) -> TuningTable:
    """The table of a shipped release's constants, tuned once per system and filters: a log compared
    size by size, or a range swept, asks for the same table at every size (tables are immutable)."""
    return tune(system, CONSTANTS[version], algo=algo, proto=proto)


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryTime(JSONFields):
    """One (algorithm, protocol) of the table at the predicted size (seconds, bytes/s).

    ``enabled``: NCCL times the entry for this call. ``fallback``: NCCL 2.21 times it only as a
    fallback, used when no other entry is enabled (:attr:`costmodel.nccl.choose.Timed.fallback`);
    ``reason`` then says why the entry itself is disabled.
    """

    algorithm: str
    protocol: str
    enabled: bool
    reason: str
    latency_s: Fraction
    bandwidth_bytes_per_s: Fraction
    time_s: Fraction | None
    fallback: bool = False


def _entry_time(t: Timed) -> EntryTime:
    return EntryTime(
        algorithm=t.entry.algorithm,
        protocol=t.entry.protocol,
        enabled=t.time_us is not None,
        reason=t.reason,
        latency_s=t.latency_us * _US,
        bandwidth_bytes_per_s=t.bandwidth * _GB,
        time_s=None if t.time_us is None else t.time_us * _US,
        fallback=t.time_us is not None and t.fallback,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """NCCL's choice and predicted time for one collective call.

    ``entries`` lists every (algorithm, protocol) of the function in NCCL's order; ``algorithm``
    and ``protocol`` are the chosen one; ``channels`` and ``threads`` what NCCL launches;
    ``steps`` the chosen entry's formulas with the constants substituted.
    """

    collective: str
    function: str
    n_bytes: int
    ranks: int
    nodes: int
    version: str
    algorithm: str
    protocol: str
    time_s: Fraction
    algbw_bytes_per_s: Fraction
    busbw_bytes_per_s: Fraction
    channels: int
    threads: int
    entries: tuple[EntryTime, ...]
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    estimate_s: Fraction | None = None
    """NCCL's own estimate when ``time_s`` is what nccl-tests would measure
    (:func:`costmodel.nccl.measured.as_measured`); None when ``time_s`` is that estimate."""

    def explain(self) -> str:
        """The steps as text, one per line."""
        return "\n".join(f"{s.text}: {s.expression}" for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values, SI units in the keys."""
        return {
            "collective": self.collective,
            "function": self.function,
            "n_bytes": self.n_bytes,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "nccl_version": self.version,
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "time_s": real(self.time_s),
            "estimate_s": None if self.estimate_s is None else real(self.estimate_s),
            "algbw_bytes_per_s": real(self.algbw_bytes_per_s),
            "busbw_bytes_per_s": real(self.busbw_bytes_per_s),
            "channels": self.channels,
            "threads": self.threads,
            "entries": [e.to_dict() for e in self.entries],
            "steps": [
                {"text": s.text, "expression": s.expression, "value": real(s.value), "unit": s.unit}
                for s in self.steps
            ],
            "notes": list(self.notes),
        }


def predict(
    collective: str,
    n: Any,
    system: System,
    *,
    version: str = "2.30",
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
) -> Prediction:
    """What NCCL's tuning model chooses for *collective* on *n* bytes, and its predicted time.

    Parameters
    ----------
    collective : str
        allreduce, allgather, reduce-scatter, broadcast or reduce (aliases accepted).
    n : int, Fraction or str
        Bytes (text such as ``"8MiB"`` is parsed); costmodel's meaning of n, = nccl-tests' size.
    system : System
        The hardware as NCCL's topology search sees it.
    version : str
        ``"2.30"`` (default) or ``"2.21"``.
    algo, proto : str, optional
        NCCL_ALGO / NCCL_PROTO filters in NCCL's syntax (``ring,tree``, ``^LL128``, ``allreduce:tree``).
    overrides : mapping or path, optional
        Constant overrides (see :mod:`costmodel.nccl.overrides`).

    Raises
    ------
    InputError
        On an unknown collective or one NCCL runs outside its tuning model (all-to-all, gather,
        scatter), a size that is not a positive whole number of bytes, a bad filter or override, or
        when no algorithm/protocol is left (as NCCL reports).

    Examples
    --------
    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> p = predict("allreduce", "1KiB", s)
    >>> p.algorithm, p.protocol, p.time_s
    ('Ring', 'LL', Fraction(264599, 17625000000))
    """
    function = function_of(collective)
    name = next(k for k, v in FUNCTIONS.items() if v == function)
    size = size_of(n)
    table = table_for(system, version=version, algo=algo, proto=proto, overrides=overrides)
    timed = candidates(table, function, size)
    best = pick(timed)
    if best is None or best.time_us is None:
        raise _unavailable(function, algo, proto)
    channels, threads = launch(table, best.entry.algorithm, best.entry.protocol, size)
    time_s = best.time_us * _US
    algbw = size / time_s
    notes = _notes(table, best, function)
    return Prediction(
        collective=name,
        function=function,
        n_bytes=size,
        ranks=system.ranks,
        nodes=system.nodes,
        version=table.constants.version,
        algorithm=best.entry.algorithm,
        protocol=best.entry.protocol,
        time_s=time_s,
        algbw_bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * bus_factor(name, system.ranks),
        channels=channels,
        threads=threads,
        entries=tuple(_entry_time(t) for t in timed),
        steps=_steps(table, best, size),
        notes=notes,
    )


def _notes(table: TuningTable, best: Timed, function: str) -> tuple[str, ...]:
    """What changes the meaning of the prediction: a fallback chosen, 2.21's raised channel count."""
    notes = []
    if best.backup:
        notes.append(
            "NCCL 2.21 runs a fallback: no enabled entry is usable for this call, so it takes the disabled "
            f"{best.entry.algorithm}/{best.entry.protocol} with the ring's bandwidth before disabling "
            "(ringbdw)"
        )
    elif best.entry.fallback:
        notes.append(
            f"NCCL 2.21 runs a fallback: every entry of {function} was disabled, so it put the ring's "
            "bandwidths back in its table"
        )
    return (*notes, *channel_notes(table, function), *table.system.notes)


def channel_notes(table: TuningTable, function: str) -> tuple[str, ...]:
    """A note when NCCL 2.21's raised channel count moves the ring/Simple plateau of *function*.

    ncclTopoGetAlgoTime (``src/graph/tuning.cc`` v2.21.5-1) applies the plateau only to multi-node
    all-reduce, and divides by ``comm->nChannels``, which ncclTopoPostset raised to the NVLS
    channels (:func:`costmodel.nccl.tuning.comm_channels`).
    """
    s = table.system
    if not (table.nvls_raised and function == "AllReduce" and s.nodes > 1):
        return ()
    threshold = table.constants.ring_simple_plateau[0]
    return (
        f"NCCL 2.21 raises its channel count from {table.coll_channels} to the {table.nvls_channels} NVLS "
        f"channels: the ring/Simple plateau starts at n = {threshold} × {table.channels} channels × "
        f"{s.ranks} ranks = {threshold * table.channels * s.ranks} B instead of "
        f"{threshold * table.coll_channels * s.ranks} B; ring and tree still launch at most "
        f"{table.coll_channels} channels",
    )


class Timing(NamedTuple):
    """NCCL's choice at one size and its estimate, without the table and the steps of a
    :class:`Prediction` (what a log compared size by size needs)."""

    n_bytes: int
    algorithm: str
    protocol: str
    time_s: Fraction
    latency_s: Fraction


def timings(collective: str, sizes: Iterable[int], system: System, *, version: str = "2.30",
            algo: str | None = None, proto: str | None = None, overrides: Any = None
            ) -> tuple[str, tuple[Timing, ...]]:
    """The release modelled and NCCL's choice and estimate at each of *sizes*: what :func:`predict` says
    of each, from one tuning table and one plan of the entries.

    >>> s = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
    >>> _, (t,) = timings("allreduce", [1024], s)
    >>> (t.algorithm, t.protocol, t.time_s) == (lambda p: (p.algorithm, p.protocol, p.time_s))(
    ...     predict("allreduce", 1024, s))
    True
    """
    function = function_of(collective)
    table = table_for(system, version=version, algo=algo, proto=proto, overrides=overrides)
    planned = plan(table, function)
    out = []
    for n in sizes:
        size = size_of(n)
        best = pick(candidates(table, function, size, planned))
        if best is None or best.time_us is None:
            raise _unavailable(function, algo, proto)
        out.append(Timing(size, best.entry.algorithm, best.entry.protocol, best.time_us * _US,
                          best.latency_us * _US))
    return table.constants.version, tuple(out)


def _unavailable(function: str, algo: str | None, proto: str | None) -> InputError:
    filters = "".join(f" {k}={v}" for k, v in (("NCCL_ALGO", algo), ("NCCL_PROTO", proto)) if v)
    with_filters = " with" + filters if filters else ""
    return InputError(f"no algorithm/protocol available for {function}{with_filters}; "
                      "NCCL would fail this call")


def _steps(table: TuningTable, best: Timed, n: int) -> tuple[Step, ...]:
    """The chosen entry's latency, bandwidth and time with the constants substituted."""
    e = best.entry
    steps = list(latency_steps(table, e))
    if best.backup:
        steps.append(
            Step(
                "bandwidth (fallback: the ring's before disabling, ringbdw)",
                f"{number_text(e.backup_bandwidth)} GB/s",
                e.backup_bandwidth,
                "GB/s",
            )
        )
    else:
        steps.append(
            Step("bandwidth (tuning table)", f"{number_text(e.bandwidth)} GB/s", e.bandwidth, "GB/s")
        )
    if best.tree_factor is not None:
        steps.append(
            Step(
                "tree correction",
                f"{number_text(e.bandwidth)} GB/s × {number_text(best.tree_factor)} "
                f"(log2(n/64) = {max(0, n >> 6).bit_length() - 1}) = {number_text(best.bandwidth)} GB/s",
                best.bandwidth,
                "GB/s",
            )
        )
    if best.plateau_factor is not None:
        steps.append(
            Step(
                "ring plateau",
                f"{number_text(e.latency_us)} µs × {number_text(best.plateau_factor)} "
                f"(n / ({table.channels} channels × {table.system.ranks} ranks) = "
                f"{n // (table.channels * table.system.ranks)} ≥ {table.constants.ring_simple_plateau[0]}) "
                f"= {number_text(best.latency_us)} µs",
                best.latency_us,
                "µs",
            )
        )
    assert best.time_us is not None
    steps.append(
        Step(
            "time",
            f"{number_text(best.latency_us)} µs + {n} B / (1000 × {number_text(best.bandwidth)} GB/s) = "
            f"{number_text(best.time_us)} µs",
            best.time_us,
            "µs",
        )
    )
    return tuple(steps)
