"""NCCL's own model against a measurement: :func:`compare` and :func:`log_shape`.

For every size of an nccl-tests log (its out-of-place rows above 0 bytes) the model's choice and time
(:func:`~costmodel.nccl.predict.predict`) are set beside the measured time, with both bus
bandwidths in nccl-tests' terms. A *regime* is a run of consecutive sizes on which the model
chooses the same (algorithm, protocol); the error is ``(predicted − measured) / measured``, and
each regime, and the whole log, is summarised by the median of its absolute value.

The communicator's shape comes from the log: ranks from its ``# Rank`` lines, nodes from the
distinct hosts those lines name (``#  Rank  0 Group  0 Pid 43 on HOST device 0 ...``, also the
older layout without ``Group``) when they name every rank; a log whose ``# Rank`` lines were cut
(a long job's output often keeps the first few, or the last) says nothing certain about its nodes.
:func:`log_facts` reads what else the log says about the run: the NCCL release (nccl-tests' header
``nccl-library=21903``, NCCL's ``NCCL version 2.19.3`` line), the ``NCCL_*`` settings it prints
(``NCCL INFO NCCL_ALGO set by environment to Ring``, ``NCCL_ALGO=Ring`` on a command line, or a network
plugin's ``NET/OFI Setting NCCL_PROTO to "simple"``), and
whether the library was RCCL, AMD's port, whose tuning is not NCCL's.

References
----------
.. [1] NVIDIA, nccl-tests ``doc/PERFORMANCE.md`` (algorithm and bus bandwidth) and
   ``src/common.cu`` (the ``# Rank`` lines).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from os import PathLike
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields, real
from costmodel.errors import InputError, ParseError
from costmodel.exact import median
from costmodel.nccl.measured import Case, band_medians, measured_note, measured_time
from costmodel.nccl.predict import (
    FUNCTIONS,
    NCCL_COLLECTIVES,
    bus_factor,
    function_of,
    resolve_version,
    timings,
)
from costmodel.nccl.system import System

__all__ = ["MODELLED", "CompareRow", "Comparison", "LogFacts", "Regime", "as_run", "compare", "hosts_of",
           "log_facts", "log_nodes", "log_shape", "modelled_version", "read_manifest"]

_LIBRARY_CODE = re.compile(r"\bnccl-library=(\d{4,6})\b")
_VERSION_LINE = re.compile(r"\b(NCCL|RCCL) version\s*:?\s*(\d+\.\d+\.\d+)(\S*)")
_ENVIRONMENT = re.compile(r"\b(NCCL_ALGO|NCCL_PROTO|NCCL_TREE_THRESHOLD)(?: set by environment to |=)"
                          r"[\"']?([\w^:;,.+-]+)")
_PLUGIN_SETTING = re.compile(r"\bNET/(\w+) Setting (NCCL_ALGO|NCCL_PROTO|NCCL_TREE_THRESHOLD) to "
                             r"[\"']?([\w^:;,.+-]+)")
"""A network plugin that sets NCCL's variable for it (aws-ofi-nccl: ``NCCL INFO NET/OFI Setting NCCL_PROTO
to "simple"``, before NCCL reads it)."""
_RCCL_MARKS = re.compile(r"^rccl-tests|^#.*\bRank\b.*\bAMD Instinct|\bRCCL_\w+=|\bXGMI\b", re.MULTILINE)
"""rccl-tests' own line (``rccl-tests: Version develop:83d38d9``), an AMD GPU in a ``# Rank`` line, an
``RCCL_*`` setting, or AMD's XGMI links in RCCL's topology (``+ XGMI[24.0]``, ``type XGMI/PIX``); RCCL's
version line (``RCCL version 2.18.3``, ``NCCL version 2.18.3+hip6.0``) too."""
MODELLED = ("2.21", "2.30")
"""The NCCL releases whose tuning :mod:`costmodel.nccl` models."""


@dataclass(frozen=True, slots=True)
class LogFacts:
    """What an nccl-tests log says about its run besides the table (see the module notes)."""

    hosts: tuple[str, ...]
    """The distinct hosts its ``# Rank`` lines name, in order."""
    named: frozenset[int]
    """The ranks its ``# Rank`` lines name (all of them, unless the lines were cut)."""
    library: str
    """``"nccl"``, or ``"rccl"`` when the log shows AMD's library (its tests, version line or GPUs)."""
    version: str | None
    """The library's release as the log prints it (``"2.19.3"``), if it does."""
    environment: tuple[tuple[str, str], ...]
    """The tuning settings it prints, ``(name, value)``, the last of each name."""
    origins: tuple[tuple[str, str], ...] = ()
    """``(name, what set it)`` of the settings of :attr:`environment` that a network plugin set, not the
    environment or a command line (``("NCCL_PROTO", "set by the network plugin, NET/OFI")``)."""
    gpus_per_thread: int | None = None
    """The GPUs each nccl-tests thread drove (``nGpus`` of its ``# nThread 1 nGpus 8 ...`` line, the
    ``-g`` option), if the log prints it."""
    per_process: int | None = None
    """The ranks one nccl-tests process drove, nThread × nGpus of that line, if the log prints it."""

    def nodes(self, ranks: int) -> int | None:
        """The node count of a run of *ranks*, when the ``# Rank`` lines name every rank, or when one
        process drove them all (nThread × nGpus is *ranks*: one process runs on one host); else None."""
        if self.hosts and self.named == frozenset(range(ranks)):
            return len(self.hosts)
        return 1 if self.one_process(ranks) else None

    def one_process(self, ranks: int) -> bool:
        """Whether one process drove all *ranks* (nThread × nGpus is *ranks*), with no ``# Rank`` line
        naming a second host."""
        return self.per_process == ranks and len(self.hosts) <= 1


def _release(code: str) -> str:
    """nccl-tests' ``nccl-library=`` code as a release: NCCL_VERSION_CODE is X·10000 + Y·100 + Z from
    2.9 on, X·1000 + Y·100 + Z before (``src/nccl.h.in``, ``NCCL_VERSION``).

    >>> _release("21903"), _release("2708")
    ('2.19.3', '2.7.8')
    """
    n = int(code)
    if n >= 20900:
        return f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    return f"{n // 1000}.{n // 100 % 10}.{n % 100}"


def log_facts(text: str) -> LogFacts:
    """The facts :class:`LogFacts` holds, read from the text of an nccl-tests (or rccl-tests) log.

    >>> f = log_facts("NCCL INFO NCCL_ALGO set by environment to Ring\\nNCCL version 2.19.3+cuda12.2")
    >>> f.version, f.library, f.environment
    ('2.19.3', 'nccl', (('NCCL_ALGO', 'Ring'),))
    >>> log_facts('NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"').origins
    (('NCCL_PROTO', 'set by the network plugin, NET/OFI'),)
    >>> log_facts("# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor)").gpus_per_thread
    8
    """
    from costmodel.calibration.logs.measurements import split_lines
    from costmodel.calibration.logs.nccl_text import NTHREAD, RANK_LINE, command_launch

    lines = [line.lstrip() for line in split_lines(text)]
    joined = "\n".join(lines)
    named = [m.groups() for line in lines if (m := RANK_LINE.match(line)) is not None]
    ranks = {int(r) for r, _ in named}
    hosts = tuple(dict.fromkeys(h for _, h in named))
    version = None
    if found := _LIBRARY_CODE.search(joined):
        version = _release(found.group(1))
    library = "nccl"
    for lib, release, suffix in _VERSION_LINE.findall(joined):
        version = version or release
        if lib == "RCCL" or "hip" in suffix:
            library = "rccl"
    if _RCCL_MARKS.search(joined):
        library = "rccl"
    # in the order of the log, the last of each name counting; a setting quoted in a sentence ends at its
    # punctuation ("with NCCL_ALGO=RING.")
    settings = sorted([(m.start(), m[1], m[2], "") for m in _ENVIRONMENT.finditer(joined)]
                      + [(m.start(), m[2], m[3], f"set by the network plugin, NET/{m[1]}")
                         for m in _PLUGIN_SETTING.finditer(joined)])
    environment = {name: value.rstrip(".,;:") for _, name, value, _ in settings}
    origins = {name: origin for _, name, _, origin in settings}
    launch = next((m for line in lines if (m := NTHREAD.match(line)) is not None), None)
    if launch:
        threads, gpus = int(launch[1]), int(launch[2])
    else:  # the post lost the line but may have kept the command that ran
        threads, gpus = command_launch(lines) or (0, 0)
    return LogFacts(hosts=hosts, named=frozenset(ranks), library=library, version=version,
                    environment=tuple(environment.items()),
                    origins=tuple((name, origin) for name, origin in origins.items() if origin),
                    gpus_per_thread=gpus if gpus >= 1 else None,
                    per_process=threads * gpus if threads >= 1 and gpus >= 1 else None)


def modelled_version(release: str) -> str:
    """The modelled release (:data:`MODELLED`) nearest to *release* (``"2.26.2"`` → ``"2.30"``; a tie
    goes to the later one).

    >>> modelled_version("2.19.3"), modelled_version("2.26.2"), modelled_version("2.30.7")
    ('2.21', '2.30', '2.30')
    """
    def number(version: str) -> int:
        major, minor = version.split(".")[:2]
        return 100 * int(major) + int(minor)

    return min(MODELLED, key=lambda m: (abs(number(m) - number(release)), -number(m)))


def hosts_of(text: str) -> tuple[str, ...]:
    """The distinct hosts named by an nccl-tests log's ``# Rank`` lines, in order of appearance.

    >>> log = "#  Rank  0 Pid 1 on a device  0 [0x0f] X\\n#  Rank  1 Group  0 Pid 2 on b device  0 [0x0f] X"
    >>> hosts_of(log)
    ('a', 'b')
    >>> hosts_of("0: #  Rank  0 Pid 1 on a device  0 [0x0f] X")  # srun --label, as the log readers strip it
    ('a',)
    """
    return log_facts(text).hosts


def log_shape(path: str | PathLike[str], *, collective: str | None = None) -> tuple[Any, LogFacts]:
    """The measurements of the nccl-tests log at *path* (its *collective*, when the log does not say)
    and what else it says (:func:`log_facts`).

    Raises
    ------
    InputError
        If the log is not an nccl-tests log, or is an rccl-tests one: RCCL chooses its algorithms by
        its own tuning, which NCCL's model does not describe.
    """
    from costmodel.calibration.logs import parse_log, read_log_text
    from costmodel.errors import UnknownNameError

    if collective is not None:  # one NCCL prices, named before the log is read
        try:
            function_of(collective)
        except UnknownNameError:
            raise UnknownNameError("collective", collective, NCCL_COLLECTIVES) from None
    text = read_log_text(path)
    measurements = parse_log(text, path=str(path), collective=collective)
    if measurements.tool != "nccl-tests":
        tool = {"osu": "an OSU", "costmodel-csv": "a costmodel CSV"}.get(measurements.tool, measurements.tool)
        raise InputError(f"{path} is {tool} log: NCCL's model is set beside nccl-tests logs only "
                         "(calibrate fit reads the others)")
    facts = log_facts(text)
    if facts.library == "rccl":
        raise InputError(f"{path} is an rccl-tests log (RCCL, AMD's library): RCCL tunes its own "
                         "choices, which NCCL's model does not describe, so it is not compared; calibrate "
                         "fit reads it")
    try:
        function_of(measurements.collective)
    except InputError:
        what = ("send/recv, point to point" if measurements.collective == "pt2pt" else
                f"{measurements.collective}, which NCCL runs as send/recv pairs")
        raise InputError(f"{path} measures {what}: NCCL's tuning model prices a collective's algorithm "
                         "and protocol only, so it is not compared; calibrate fit reads it") from None
    return measurements, facts


def log_nodes(facts: LogFacts, *, ranks: int, nodes: int | None = None,
              hosts_per_node: int = 1) -> int | None:
    """The node count of a log's run: its hosts when its ``# Rank`` lines name every rank, one when one
    process drove every rank (its ``# nThread 1 nGpus 8`` line counts them all), else *nodes*, which
    must then be given (and be at least the hosts the lines name, and divide the ranks).  Where a node
    spans *hosts_per_node* hosts (one NVLink domain, one node to NCCL), the hosts count no nodes:
    *nodes* as given (None: the hardware's to say).

    >>> log_nodes(log_facts("#  Rank  0 Pid 1 on a device  0 [0x0f] X\\n#  Rank  1 Pid 2 on b device  0"
    ...                     " [0x0f] X"), ranks=2)
    2
    >>> log_nodes(log_facts("# nThread 1 nGpus 8 minBytes 8 maxBytes 1024 step: 2(factor)"), ranks=8)
    1
    """
    if hosts_per_node > 1:
        return nodes
    named, hosts = len(facts.hosts), facts.nodes(ranks)
    if hosts is not None:
        if nodes is not None and nodes != hosts:
            if facts.one_process(ranks):
                raise InputError(f"nodes={nodes}, but one process drove all {ranks} ranks (the log's "
                                 f"nThread × nGpus is {ranks}), and a process runs on one node; drop nodes=")
            raise InputError(f"nodes={nodes} differs from the {hosts} hosts of the log's # Rank lines, "
                             "which name every rank; drop nodes=")
        return hosts
    if nodes is None:
        if named:
            raise InputError(f"the log's # Rank lines were cut: they name {named} host"
                             f"{'s' if named > 1 else ''} but not all {ranks} ranks, so its node count is "
                             "not known; pass nodes=N")
        raise InputError("the log names no hosts (no # Rank lines); pass nodes=N")
    if nodes < named:
        raise InputError(f"nodes={nodes} is fewer than the {named} hosts the log's # Rank lines name; hosts "
                         "that one NVLink domain joins (Multi-Node NVLink, a GB200 or GB300 NVL72 rack) are "
                         "one node to NCCL: describe them with a preset whose node spans hosts (gb200-nvl72, "
                         "or a preset file with hosts_per_node), or give hosts_per_node=H beside the "
                         "explicit hardware")
    if nodes < 1 or ranks % nodes:
        raise InputError(f"nodes={nodes} does not divide the log's {ranks} ranks")
    return nodes


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
    as_measured: bool = False

    def busbw_errors(self) -> tuple[tuple[Fraction, int] | None, tuple[Fraction, int] | None]:
        """The median |busbw error| (predicted busbw / measured − 1) and the count of sizes, at sizes of
        at least 1 MiB and below (None where the log has none)."""
        return band_medians((r.n_bytes, abs(r.measured_s / r.predicted_s - 1)) for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-native values, SI units in the keys."""
        large, small = self.busbw_errors()
        return {
            "collective": self.collective,
            "as_measured": self.as_measured,
            "median_abs_busbw_error_from_1mib": None if large is None else real(large[0]),
            "median_abs_busbw_error_below_1mib": None if small is None else real(small[0]),
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
    version: str | None = None,
    algo: str | None = None,
    proto: str | None = None,
    overrides: Any = None,
    facts: LogFacts | None = None,
    overheads: Any = None,
) -> Comparison:
    """Each out-of-place size of *measurements* (an nccl-tests log as read by
    :func:`costmodel.calibration.read_log`) against NCCL's model on *system*.

    *facts* (:func:`log_facts` of the log) choose what is not given: the release modelled (*version*;
    the modelled release nearest the log's, else 2.30) and the ``NCCL_ALGO`` and ``NCCL_PROTO`` the
    run set (*algo*, *proto*); each choice is said in the notes, as is a given one the log contradicts.
    *overheads* (:class:`~costmodel.nccl.measured.Overheads`) compares the prediction of what nccl-tests
    measures (:func:`~costmodel.nccl.measured.as_measured`) instead of NCCL's estimate.

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
    version, algo, proto, said = as_run(facts, version=version, algo=algo, proto=proto)
    if overheads is not None:
        overheads, launch = launched(overheads, facts, smallest=rows_in[0].n_bytes)
        said += launch
    factor = bus_factor(measurements.collective, system.ranks)
    function = function_of(measurements.collective)
    canonical = next(k for k, v in FUNCTIONS.items() if v == function)
    version_name, estimates = timings(measurements.collective, (r.n_bytes for r in rows_in), system,
                                      version=version, algo=algo, proto=proto, overrides=overrides)
    rows: list[CompareRow] = []
    regime = 0
    for r, t in zip(rows_in, estimates, strict=True):
        predicted = (t.time_s if overheads is None
                     else measured_time(t.time_s, t.latency_s, t.protocol, overheads))
        if rows and (rows[-1].algorithm, rows[-1].protocol) != (t.algorithm, t.protocol):
            regime += 1
        rows.append(
            CompareRow(
                n_bytes=r.n_bytes,
                measured_s=r.time_s,
                predicted_s=predicted,
                rel_error=(predicted - r.time_s) / r.time_s,
                measured_busbw_bytes_per_s=r.n_bytes / r.time_s * factor,
                predicted_busbw_bytes_per_s=r.n_bytes / predicted * factor,
                algorithm=t.algorithm,
                protocol=t.protocol,
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
                median_abs_rel_error=median(abs(r.rel_error) for r in group),
            )
        )
    if overheads is not None:
        said.append(measured_note(overheads).replace("as nccl-tests", "each size predicted as nccl-tests", 1))
    notes = (*said, *system.notes, *measurements.warnings)
    return Comparison(
        collective=canonical,
        ranks=system.ranks,
        nodes=system.nodes,
        version=version_name,
        path=measurements.path,
        source=measurements.source,
        rows=tuple(rows),
        regimes=tuple(regimes),
        median_abs_rel_error=median(abs(r.rel_error) for r in rows),
        notes=notes,
        as_measured=overheads is not None,
    )


def launched(overheads: Any, facts: LogFacts | None, *, smallest: int) -> tuple[Any, list[str]]:
    """*overheads* priced for the launch the log ran (its GPUs per thread), and what to say: a note when
    one thread drove several GPUs, or when the log does not say and its sizes reach down to where the
    per-call overhead counts (*smallest*: its smallest size, bytes)."""
    from costmodel.nccl.measured import SMALL

    g = facts.gpus_per_thread if facts is not None else None
    o = overheads.launched(g)
    if g is not None and g > 1:
        return o, [f"one thread drove {g} GPUs (nccl-tests -g {g}): each call pays the host overhead of "
                   f"enqueueing it on all {g}, priced below; one process per GPU (mpirun or srun, -g 1) is "
                   "the launch NCCL's maintainers recommend for latency (NVIDIA/nccl-tests#333)"]
    if g is None and smallest <= SMALL:
        return o, ["the log does not print nccl-tests' '# nThread 1 nGpus N' line: one GPU a thread assumed "
                   "(-g 1, one process per GPU)"]
    return o, []


def as_run(facts: LogFacts | None, *, version: str | None, algo: str | None, proto: str | None
            ) -> tuple[str, str | None, str | None, list[str]]:
    """The release, NCCL_ALGO and NCCL_PROTO to model (given, else as the log ran), and what to say."""
    notes: list[str] = []
    ran = facts.version if facts is not None else None
    if version is None:
        version = "2.30" if ran is None else modelled_version(ran)
        if ran is None:
            notes.append("the log does not say which NCCL release ran: modelled with NCCL 2.30's tuning "
                          "(give version= to choose 2.21)")
        else:
            notes.append(f"the log ran NCCL {ran}: modelled with NCCL {version}'s tuning, the nearest of the "
                         f"modelled releases ({', '.join(MODELLED)})")
    elif ran is not None and modelled_version(ran) != resolve_version(version).version:
        notes.append(f"the log ran NCCL {ran}; modelled with NCCL {version}'s tuning as given")
    environment = dict(facts.environment) if facts is not None else {}
    origins = dict(facts.origins) if facts is not None else {}
    chosen = {"NCCL_ALGO": algo, "NCCL_PROTO": proto}
    for name, given in chosen.items():
        logged = environment.get(name)
        if logged is None:
            continue
        origin = f" ({origins[name]})" if name in origins else ""
        if given is None:
            chosen[name] = logged
            notes.append(f"{name}={logged}, as the log ran{origin}")
        elif given != logged:
            notes.append(f"the log ran with {name}={logged}{origin}; modelled with {given} as given")
    if "NCCL_TREE_THRESHOLD" in environment:
        notes.append(f"the log sets NCCL_TREE_THRESHOLD={environment['NCCL_TREE_THRESHOLD']}: the models of "
                     f"NCCL {' and '.join(MODELLED)} have no such setting (they choose by the tuning model "
                     "alone), so it is ignored")
    return version, chosen["NCCL_ALGO"], chosen["NCCL_PROTO"], notes


def _system(entry: Mapping[str, Any], *, ranks: int, nodes: int | None) -> System:
    """The system a [[log]] table describes, by the rules the command line's hardware options follow."""
    from costmodel.nccl.hardware import Hardware

    try:
        return Hardware.of(entry).system(ranks=ranks, nodes=nodes)
    except InputError as exc:  # its parameters are the table's keys: `pass preset=NAME` is `pass preset`
        raise InputError(_KEYED.sub(r"\1", str(exc))) from None


_KEYED = re.compile(r"\b([a-z_]+)=(?:[A-Z]+\b|(?=[\s,)]|$))")
"""A parameter named for the user to give (``preset=NAME``, ``drop channels=``), not a value shown."""


_MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "path": (str,), "preset": (str,), "arch": (str, int), "channels": (int,), "bw_intra": (int, float, str),
    "bw_inter": (int, float, str), "net_latency": (int, float, str), "intra": (str,), "cpu": (str,),
    "nvls": (bool,), "collnet": (bool,), "nodes": (int,), "algo": (str,), "proto": (str,),
    "collective": (str,), "why": (str,), "held_out": (bool,), "hosts_per_node": (int,)}
"""What each key of a manifest's [[log]] holds."""
_MANIFEST_KEYS = frozenset(_MANIFEST_TYPES)
_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}


def _case(entry: Mapping[str, Any], base: Path) -> Case:
    """The case of one [[log]] table (its keys checked)."""
    from costmodel.nccl.hardware import Hardware

    log = base / entry["path"]
    measurements, facts = log_shape(log, collective=entry.get("collective"))
    if measurements.p is None:
        raise InputError(f"{log} does not say how many ranks ran")
    nodes = log_nodes(facts, ranks=measurements.p, nodes=entry.get("nodes"),
                      hosts_per_node=Hardware.of(entry).node_hosts())
    system = _system(entry, ranks=measurements.p, nodes=nodes)
    version, algo, proto, _ = as_run(facts, version=None, algo=entry.get("algo"), proto=entry.get("proto"))
    hardware = str(entry.get("why", entry.get("preset", "explicit")))
    return Case(name=entry["path"], measurements=measurements, system=system, version=version, algo=algo,
                proto=proto, hardware=hardware, held_out=bool(entry.get("held_out", False)),
                gpus_per_thread=facts.gpus_per_thread or 1)


def read_manifest(path: str | PathLike[str]) -> tuple[Case, ...]:
    """The cases of a manifest: ``[[log]]`` tables, each a ``path`` (relative to the manifest) and the
    hardware as ``costmodel nccl compare`` takes it (``preset``, or ``arch``, ``channels``, ``bw_intra``,
    ``bw_inter`` ...; ``nodes``, ``algo``, ``proto``, ``collective`` where the log does not say;
    ``why``: the reason for the description; ``held_out = true`` for a log priced but kept out of the
    constants).  The release modelled, NCCL_ALGO and NCCL_PROTO follow
    each log as :func:`compare` does.  :func:`costmodel.nccl.measured.calibrate` takes them."""
    from costmodel._files import read_text
    from costmodel.tomlfile import loads

    where = str(path)
    data = loads(read_text(path, what="the manifest"), path=where)
    entries = data.get("log")
    if not isinstance(entries, list) or not entries or set(data) != {"log"}:
        raise ParseError("a manifest holds [[log]] tables and nothing else", path=where)
    cases = []
    base = Path(path).parent
    for k, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            raise ParseError(f"[[log]] {k} is not a table", path=where)
        unknown = sorted(set(entry) - _MANIFEST_KEYS)
        if unknown or "path" not in entry:
            what = f"unknown key {unknown[0]!r}" if unknown else "no path"
            raise ParseError(f"[[log]] {k}: {what}", path=where)
        for key, value in entry.items():
            kinds = _MANIFEST_TYPES[key]
            if isinstance(value, bool) != (bool in kinds) or not isinstance(value, kinds):
                names = " or ".join(_TYPE_WORDS[t] for t in kinds)
                raise ParseError(f"[[log]] {k}: {key} = {value!r} is not {names}", path=where)
        try:
            cases.append(_case(entry, base))
        except InputError as error:
            raise ParseError(f"[[log]] {k} ({entry['path']}): {error}", path=where) from None
    return tuple(cases)
