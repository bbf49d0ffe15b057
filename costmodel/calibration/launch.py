"""Which rank this process is, of how many, and where rank 0 listens, when a launcher started it.

``calibrate run`` is one program for every launcher: torchrun, ``srun`` without torchrun, Open MPI's
``mpirun``, MVAPICH2's ``mpirun_rsh``, the Hydra ``mpiexec`` of MPICH and Intel MPI, and HPE Cray
MPICH's ``mpiexec`` on PALS.  Each tells a process who it is through environment variables of its
own; :func:`launch_from_env` reads them, a pure function of the environment mapping, so every
layout is tested without a cluster (and :func:`~costmodel.calibration.bench.choose_backend`
turns the local rank and the visible GPUs into a device, as purely).

The launchers, in the order they are looked for (the first whose rank and size are both set is
the one; a launcher started inside another, as ``mpirun`` in a SLURM job or torchrun under
``srun``, sets its own variables over the outer one's, so the inner one is found first), each as
rank, size; local rank; local size (the ranks on this node):

- ``torchrun`` [1]_: RANK, WORLD_SIZE; LOCAL_RANK; LOCAL_WORLD_SIZE.
- ``open-mpi`` [3]_: OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE; OMPI_COMM_WORLD_LOCAL_RANK;
  OMPI_COMM_WORLD_LOCAL_SIZE.
- ``mvapich2`` [4]_: MV2_COMM_WORLD_RANK, MV2_COMM_WORLD_SIZE; MV2_COMM_WORLD_LOCAL_RANK;
  MV2_COMM_WORLD_LOCAL_SIZE.
- ``pmi``: PMI_RANK (else PALS_RANKID [7]_), PMI_SIZE; MPI_LOCALRANKID (Hydra, MPICH and Intel MPI
  [5]_), else PMI_LOCAL_RANK (Cray MPICH on PALS [6]_), else PALS_LOCAL_RANKID (PALS itself, as on
  Aurora and Polaris [7]_ [8]_); MPI_LOCALNRANKS (Hydra), else PMI_LOCAL_SIZE, else PALS_LOCAL_SIZE.
  PALS sets no world size of its own: PMI_SIZE, from Cray MPICH, is the one read.
- ``slurm`` [2]_: SLURM_PROCID, SLURM_NTASKS (or its older name SLURM_NPROCS); SLURM_LOCALID;
  this node's count (SLURM_NODEID) in SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE
  (``"4(x2),3"``), else SLURM_NTASKS_PER_NODE.

A launcher that gives its rank and size but no local rank (an MPICH program started by ``srun
--mpi=pmi2`` carries PMI_RANK and PMI_SIZE, and SLURM's SLURM_LOCALID) takes the local rank from the
first of :data:`LOCAL_RANK_VARIABLES` that is set, in this order: LOCAL_RANK, SLURM_LOCALID (inside a
job step only), OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
PMI_LOCAL_RANK, PALS_LOCAL_RANKID; and, where its own local size is missing too, the local size
from the same launcher (LOCAL_WORLD_SIZE; SLURM's per-node counts or SLURM_NTASKS_PER_NODE;
OMPI_COMM_WORLD_LOCAL_SIZE; MV2_COMM_WORLD_LOCAL_SIZE; MPI_LOCALNRANKS, PMI_LOCAL_SIZE,
PALS_LOCAL_SIZE), never a rank from one launcher and a size from another.

SLURM counts only inside a job step (``SLURM_STEP_ID`` set, as ``srun`` does): a batch script or an
``salloc`` shell carries ``SLURM_PROCID=0`` too, and a run started there spawns its own ranks.
A launch of one rank (``SLURM_NTASKS=1``, ``mpirun -n 1``) is no launch either, except under
torchrun, whose ``WORLD_SIZE`` is always meant.

Rank 0's address comes from ``MASTER_ADDR`` and ``MASTER_PORT`` (29500, torchrun's default port,
when only the address is set) whatever the launcher: no launcher but torchrun sets them.  Under
``srun`` without ``MASTER_ADDR``, rank 0 runs on the first host of the step's node list
(SLURM_STEP_NODELIST, else SLURM_JOB_NODELIST or its older name SLURM_NODELIST [2]_; SLURM places
task 0 on the list's first node), so that host is the address: :func:`first_host` expands the
hostlist syntax (``gpu[003-010,017],login1`` starts with ``gpu003``).  Otherwise :class:`Launch`
keeps ``master_addr`` None for the caller to say so.

References
----------
.. [1] PyTorch, "torchrun (Elastic Launch)": the environment variables each worker gets.
.. [2] SchedMD, srun(1): output environment variables.
.. [3] Open MPI 5.0 documentation, section 11.1, environment variables set for MPI applications.
.. [4] MVAPICH2 2.3.7 User Guide; ``mpirun_rsh``'s ``mpispawn`` sets all four MV2_COMM_WORLD_* variables.
.. [5] Intel MPI Library Developer Reference for Linux: variables Hydra sets for each process.
.. [6] ALCF, "Using GPUs on Polaris": Cray MPICH's ``mpiexec`` sets PMI_RANK and PMI_LOCAL_RANK.
.. [7] HPE, mpiexec(1) of PALS: PALS_RANKID, PALS_NODEID, PALS_LOCAL_RANKID, PALS_LOCAL_SIZE.
.. [8] ALCF, "Running Jobs on Aurora": GPU tiles bound by PALS_LOCAL_RANKID.

Examples
--------
>>> launch_from_env({"SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_LOCALID": "3", "SLURM_STEP_ID": "0",
...                  "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_NODEID": "0", "MASTER_ADDR": "n01"})
Launch(launcher='slurm', rank=3, world_size=8, local_rank=3, local_world_size=4, master_addr='n01', \
master_port=29500)
>>> launch_from_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "8"}) is None  # a batch script: no job step
True
>>> launch_from_env({"PMI_RANK": "5", "PMI_SIZE": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
...                  "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_NODEID": "1"}).local_rank  # srun --mpi=pmi2
1
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from costmodel._json import JSONFields
from costmodel.errors import InputError
from costmodel.references import (
    ALCF_AURORA_JOBS,
    ALCF_POLARIS_GPUS,
    HPE_PALS_MPIEXEC,
    INTEL_MPI_HYDRA_ENV,
    MVAPICH2_GUIDE,
    OPEN_MPI_ENV,
    SLURM_SRUN,
    TORCHRUN,
    Citation,
)

__all__ = ["CITED", "DEFAULT_PORT", "LAUNCHERS", "LOCAL_RANK_VARIABLES", "Launch", "first_host",
           "launch_from_env", "tasks_on_node"]

CITED: tuple[Citation, ...] = (TORCHRUN, SLURM_SRUN, OPEN_MPI_ENV, MVAPICH2_GUIDE, INTEL_MPI_HYDRA_ENV,
                               ALCF_POLARIS_GPUS, HPE_PALS_MPIEXEC, ALCF_AURORA_JOBS)

DEFAULT_PORT = 29500
"""Rank 0's port when ``MASTER_PORT`` is not set: torchrun's default ``master_port`` [1]_."""

_MAX_RANKS = 1 << 24


@dataclass(frozen=True, slots=True)
class _Launcher:
    """One launcher's variables (each tuple: the names tried in order)."""

    name: str
    rank: tuple[str, ...]
    size: tuple[str, ...]
    local_rank: tuple[str, ...]
    local_size: tuple[str, ...] = ()
    node_lists: tuple[str, ...] = ()  # SLURM's per-node task counts, "4(x2),3", indexed by SLURM_NODEID
    requires: str | None = None  # a variable that must be set too (SLURM's job step)
    hosts: tuple[str, ...] = ()  # node lists whose first host runs rank 0 (SLURM's)
    single_counts: bool = False  # a launch of one rank is one (torchrun), else it is no launch


LAUNCHERS: tuple[_Launcher, ...] = (
    # [1]: torchrun sets these for every worker
    _Launcher("torchrun", ("RANK",), ("WORLD_SIZE",), ("LOCAL_RANK",), ("LOCAL_WORLD_SIZE",),
              single_counts=True),
    # [3]
    _Launcher("open-mpi", ("OMPI_COMM_WORLD_RANK",), ("OMPI_COMM_WORLD_SIZE",),
              ("OMPI_COMM_WORLD_LOCAL_RANK",), ("OMPI_COMM_WORLD_LOCAL_SIZE",)),
    # [4]
    _Launcher("mvapich2", ("MV2_COMM_WORLD_RANK",), ("MV2_COMM_WORLD_SIZE",), ("MV2_COMM_WORLD_LOCAL_RANK",),
              ("MV2_COMM_WORLD_LOCAL_SIZE",)),
    # [5] Hydra (MPICH, Intel MPI): PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS; [6] Cray MPICH
    # on PALS: PMI_LOCAL_RANK, PMI_LOCAL_SIZE; [7] PALS itself: PALS_RANKID, PALS_LOCAL_RANKID, _SIZE
    _Launcher("pmi", ("PMI_RANK", "PALS_RANKID"), ("PMI_SIZE",),
              ("MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"),
              ("MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "PALS_LOCAL_SIZE")),
    # [2]: SLURM_NPROCS is the older name of SLURM_NTASKS; the step's task counts before the job's
    _Launcher("slurm", ("SLURM_PROCID",), ("SLURM_NTASKS", "SLURM_NPROCS"), ("SLURM_LOCALID",),
              ("SLURM_NTASKS_PER_NODE",), node_lists=("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"),
              requires="SLURM_STEP_ID",
              hosts=("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")),
)
"""The launchers :func:`launch_from_env` knows, in the order it looks for them."""

_LOCAL_ORDER: tuple[_Launcher, ...] = tuple(
    next(launcher for launcher in LAUNCHERS if launcher.name == name)
    for name in ("torchrun", "slurm", "open-mpi", "mvapich2", "pmi"))
"""The launchers a local rank is borrowed from when the one found gives none, in this order."""
LOCAL_RANK_VARIABLES: tuple[str, ...] = tuple(name for launcher in _LOCAL_ORDER
                                               for name in launcher.local_rank)
"""Every variable a local rank is read from, in the order they are tried where the launcher found gives
none of its own: LOCAL_RANK, SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK,
MPI_LOCALRANKID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch(JSONFields):
    """This process as one rank of a launched job.

    ``local_rank`` and ``local_world_size`` (the ranks on this node) are None where the launcher
    does not say; ``master_addr`` is None where ``MASTER_ADDR`` is not set.
    """

    launcher: str
    rank: int
    world_size: int
    local_rank: int | None
    local_world_size: int | None
    master_addr: str | None
    master_port: int

    @property
    def variables(self) -> str:
        """The variables that named this launch, for messages (``SLURM_PROCID, SLURM_NTASKS``)."""
        found = next(launcher for launcher in LAUNCHERS if launcher.name == self.launcher)
        return f"{found.rank[0]}, {found.size[0]}"


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str] | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return name, value
    return None


def _whole(found: tuple[str, str], *, low: int) -> int:
    name, value = found
    if not re.fullmatch(r"\d{1,9}", value) or int(value) < low:
        raise InputError(f"the environment variable {name}={value!r} is not a whole number >= {low}; "
                         "the launcher's variables look wrong, or another program set them")
    return int(value)


_COUNT = re.compile(r"(\d{1,9})(?:\(x(\d{1,9})\))?")


def tasks_on_node(value: str, node: int | None) -> int | None:
    """The task count of node *node* in SLURM's compressed list (``"4(x2),3"``: 4, 4, 3) [2]_.

    Without *node* (or past the list's end) the count is known only when every node has the same.
    None for a list that does not parse.

    >>> tasks_on_node("4(x2),3", 2), tasks_on_node("8(x16)", None), tasks_on_node("2,1", None)
    (3, 8, None)
    """
    counts: list[int] = []
    for part in value.strip().split(","):
        match = _COUNT.fullmatch(part.strip())
        if match is None:
            return None
        repeat = int(match.group(2) or 1)
        if len(counts) + repeat > _MAX_RANKS:
            return None
        counts += [int(match.group(1))] * repeat
    if node is not None and 0 <= node < len(counts):
        return counts[node]
    return counts[0] if counts and len(set(counts)) == 1 else None


def _local_size(env: Mapping[str, str], launcher: _Launcher) -> int | None:
    for name in launcher.node_lists:
        value = env.get(name, "").strip()
        if value:
            node = env.get("SLURM_NODEID", "").strip()
            count = tasks_on_node(value, int(node) if node.isdigit() else None)
            if count is not None:
                return count
    found = _first(env, launcher.local_size)
    return None if found is None else _whole(found, low=1)


def launch_from_env(env: Mapping[str, str]) -> Launch | None:
    """This process's rank, world size, local rank and rank 0's address, from its launcher's variables.

    None when no launcher started this process as one rank of several (then the caller spawns
    its own ranks); see the module docstring for the launchers and the order they are looked for.

    Raises
    ------
    InputError
        For a variable that is not a whole number, a rank at or past the size, a local rank at or
        past the local size, or a ``MASTER_PORT`` that is not a port.
    """
    for launcher in LAUNCHERS:
        rank_found, size_found = _first(env, launcher.rank), _first(env, launcher.size)
        if rank_found is None or size_found is None:
            continue
        if launcher.requires is not None and not env.get(launcher.requires, "").strip():
            continue
        rank, size = _whole(rank_found, low=0), _whole(size_found, low=1)
        if size == 1 and not launcher.single_counts:
            return None
        if rank >= size:
            raise InputError(f"{rank_found[0]}={rank} is not below {size_found[0]}={size}; "
                             "the launcher's variables look wrong")
        local, local_size = _first(env, launcher.local_rank), _local_size(env, launcher)
        if local is None:
            local, borrowed_size = _borrowed_local(env, launcher)
            local_size = local_size if local_size is not None else borrowed_size
        local_rank = None if local is None else _whole(local, low=0)
        if local_rank is not None and local_size is not None and local_rank >= local_size:
            raise InputError(f"the local rank {local[0] if local else ''}={local_rank} is not below the "
                             f"{local_size} ranks the launcher places on this node; its variables look wrong")
        return Launch(launcher=launcher.name, rank=rank, world_size=size, local_rank=local_rank,
                      local_world_size=local_size, master_addr=_master(env, launcher), master_port=_port(env))
    return None


def _borrowed_local(env: Mapping[str, str], found: _Launcher) -> tuple[tuple[str, str] | None, int | None]:
    """The local rank and size another launcher gives, for a launcher that gives no local rank.

    The first of :data:`LOCAL_RANK_VARIABLES` set (SLURM's only inside a job step), with the local
    size of the same launcher, so that a rank and a size never come from two launchers.
    """
    for other in _LOCAL_ORDER:
        if other is found or (other.requires is not None and not env.get(other.requires, "").strip()):
            continue
        local = _first(env, other.local_rank)
        if local is not None:
            return local, _local_size(env, other)
    return None, None


def _master(env: Mapping[str, str], launcher: _Launcher) -> str | None:
    """``MASTER_ADDR``, else the first host of the launcher's node list, else None."""
    given = env.get("MASTER_ADDR", "").strip()
    if given:
        return given
    found = _first(env, launcher.hosts)
    return None if found is None else first_host(found[1])


_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})")
_RANGE = re.compile(r"\[([0-9]+)(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*\]")


def first_host(nodes: str) -> str | None:
    """The first host of a SLURM hostlist (``nid[001-004,007],login1``: ``nid001``) [2]_, or None for text
    that is not one.

    Each bracket holds comma-separated numbers and ranges whose first number, zero padding kept, is
    the first host's; several brackets in one name (``rack[1-2]-n[01-04]``) each give theirs.

    >>> first_host("gpu[003-010,017],login1"), first_host("rack[1-2]-n[01-04]"), first_host("a100-7")
    ('gpu003', 'rack1-n01', 'a100-7')
    >>> first_host("gpu[a-b]") is None, first_host("") is None
    (True, True)
    """
    first = re.split(r",(?![^\[]*\])", nodes.strip(), maxsplit=1)[0]
    host = _RANGE.sub(lambda m: m.group(1), first)
    return host if _HOST.fullmatch(host) else None


def _port(env: Mapping[str, str]) -> int:
    value = env.get("MASTER_PORT", "").strip()
    if not value:
        return DEFAULT_PORT
    if not re.fullmatch(r"\d{1,5}", value) or not 1 <= int(value) <= 65535:
        raise InputError(f"the environment variable MASTER_PORT={value!r} is not a port (1 to 65535); "
                         "export rank 0's port, the same on every rank")
    return int(value)
