"""Ranks and GPUs from a launcher's environment: pure functions, every layout tested without a GPU."""

from __future__ import annotations

import pytest

from costmodel.calibration.bench import BackendChoice, choose_backend
from costmodel.calibration.launch import (
    DEFAULT_PORT,
    LOCAL_RANK_VARIABLES,
    Launch,
    first_host,
    launch_from_env,
    tasks_on_node,
)
from costmodel.errors import InputError

ADDR = {"MASTER_ADDR": "node01", "MASTER_PORT": "29400"}


def _launch(launcher, rank, size, local_rank, local_size, *, addr="node01", port=29400):
    return Launch(launcher=launcher, rank=rank, world_size=size, local_rank=local_rank,
                  local_world_size=local_size, master_addr=addr, master_port=port)


@pytest.mark.parametrize(("env", "expected"), [
    # torchrun sets all of its own
    ({"RANK": "5", "WORLD_SIZE": "16", "LOCAL_RANK": "5", "LOCAL_WORLD_SIZE": "8", **ADDR},
     _launch("torchrun", 5, 16, 5, 8)),
    # torchrun under srun, one agent per task: torchrun's view wins over SLURM's
    ({"RANK": "3", "WORLD_SIZE": "16", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "SLURM_PROCID": "3",
      "SLURM_NTASKS": "16", "SLURM_LOCALID": "3", "SLURM_STEP_ID": "0", **ADDR},
     _launch("torchrun", 3, 16, 0, 1)),
    # srun without torchrun: the step's tasks on this node, from the compressed list at SLURM_NODEID
    ({"SLURM_PROCID": "9", "SLURM_NTASKS": "12", "SLURM_LOCALID": "1", "SLURM_NODEID": "2",
      "SLURM_STEP_ID": "0", "SLURM_STEP_TASKS_PER_NODE": "4(x2),3", "SLURM_TASKS_PER_NODE": "8(x2)", **ADDR},
     _launch("slurm", 9, 12, 1, 3)),
    ({"SLURM_PROCID": "9", "SLURM_NTASKS": "16", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "7",
      "SLURM_TASKS_PER_NODE": "8(x2)"}, _launch("slurm", 9, 16, 1, 8, addr=None, port=DEFAULT_PORT)),
    ({"SLURM_PROCID": "1", "SLURM_NPROCS": "2", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
      "SLURM_NTASKS_PER_NODE": "2", **ADDR}, _launch("slurm", 1, 2, 1, 2)),
    # srun without MASTER_ADDR: rank 0 runs on the first host of the step's node list (the job's if the
    # step's is absent); MASTER_ADDR, when exported, wins
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
      "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_STEP_NODELIST": "gpu[007-008]",
      "SLURM_JOB_NODELIST": "gpu[001-008]"}, _launch("slurm", 5, 8, 1, 4, addr="gpu007", port=DEFAULT_PORT)),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
      "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_JOB_NODELIST": "nid[001-004,007],login1"},
     _launch("slurm", 5, 8, 1, 4, addr="nid001", port=DEFAULT_PORT)),
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
      "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_STEP_NODELIST": "gpu[007-008]", **ADDR},
     _launch("slurm", 5, 8, 1, 4)),
    # a node list that is not one leaves the address unknown, for the caller to name
    ({"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1", "SLURM_STEP_ID": "0",
      "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_STEP_NODELIST": "gpu[a-b]"},
     _launch("slurm", 5, 8, 1, 4, addr=None, port=DEFAULT_PORT)),
    # the MPI launchers have no node list of their own: only MASTER_ADDR names rank 0's host
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "SLURM_JOB_NODELIST": "gpu[001-002]"},
     _launch("open-mpi", 0, 2, None, None, addr=None, port=DEFAULT_PORT)),
    # Open MPI's mpirun inside a SLURM job: the inner launcher's variables count
    ({"OMPI_COMM_WORLD_RANK": "6", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "2",
      "OMPI_COMM_WORLD_LOCAL_SIZE": "4", "SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_LOCALID": "0",
      "SLURM_STEP_ID": "0", **ADDR}, _launch("open-mpi", 6, 8, 2, 4)),
    ({"MV2_COMM_WORLD_RANK": "3", "MV2_COMM_WORLD_SIZE": "4", "MV2_COMM_WORLD_LOCAL_RANK": "1",
      "MV2_COMM_WORLD_LOCAL_SIZE": "2", **ADDR}, _launch("mvapich2", 3, 4, 1, 2)),
    # Hydra (MPICH, Intel MPI) and Cray MPICH on PALS
    ({"PMI_RANK": "2", "PMI_SIZE": "4", "MPI_LOCALRANKID": "0", "MPI_LOCALNRANKS": "2", **ADDR},
     _launch("pmi", 2, 4, 0, 2)),
    ({"PMI_RANK": "7", "PMI_SIZE": "8", "PMI_LOCAL_RANK": "3", **ADDR}, _launch("pmi", 7, 8, 3, None)),
    ({"PMI_RANK": "7", "PMI_SIZE": "8", "PMI_LOCAL_RANK": "3", "PMI_LOCAL_SIZE": "4", **ADDR},
     _launch("pmi", 7, 8, 3, 4)),
    # PALS (Aurora, Polaris): its own rank and local rank, the world size from Cray MPICH's PMI_SIZE
    ({"PALS_RANKID": "13", "PMI_SIZE": "24", "PALS_LOCAL_RANKID": "1", "PALS_LOCAL_SIZE": "12",
      "PALS_NODEID": "1", **ADDR}, _launch("pmi", 13, 24, 1, 12)),
    # Cray MPICH's names come before PALS's where both are set
    ({"PMI_RANK": "13", "PALS_RANKID": "0", "PMI_SIZE": "24", "PMI_LOCAL_RANK": "1", "PALS_LOCAL_RANKID": "0",
      "PMI_LOCAL_SIZE": "12", "PALS_LOCAL_SIZE": "6", **ADDR}, _launch("pmi", 13, 24, 1, 12)),
    # srun --mpi=pmi2 starts an MPICH program with PMI_RANK and PMI_SIZE but no local rank of PMI's:
    # SLURM's local rank and count, inside the job step
    ({"PMI_RANK": "5", "PMI_SIZE": "8", "SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
      "SLURM_STEP_ID": "0", "SLURM_NODEID": "1", "SLURM_STEP_TASKS_PER_NODE": "4(x2)", **ADDR},
     _launch("pmi", 5, 8, 1, 4)),
    # ... but not SLURM's outside a job step (a batch script's SLURM_LOCALID=0 is not this rank's)
    ({"PMI_RANK": "5", "PMI_SIZE": "8", "SLURM_LOCALID": "0", "SLURM_TASKS_PER_NODE": "4(x2)", **ADDR},
     _launch("pmi", 5, 8, None, None)),
    # a borrowed local rank keeps its own launcher's size, never another's
    ({"PMI_RANK": "5", "PMI_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "8", **ADDR},
     _launch("pmi", 5, 8, 2, None)),
    # the order of LOCAL_RANK_VARIABLES: LOCAL_RANK before SLURM_LOCALID before the MPIs'
    ({"MV2_COMM_WORLD_RANK": "3", "MV2_COMM_WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
      "SLURM_LOCALID": "0", "SLURM_STEP_ID": "0", "MPI_LOCALRANKID": "0", **ADDR}, _launch("mvapich2", 3, 4, 1, 2)),
    # the port defaults to torchrun's; a missing address is kept as None for the caller to name
    ({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.1"},
     _launch("open-mpi", 0, 2, None, None, addr="10.0.0.1", port=DEFAULT_PORT)),
])
def test_launchers(env, expected):
    assert launch_from_env(env) == expected


@pytest.mark.parametrize("env", [
    {},
    {"MASTER_ADDR": "node01", "LOCAL_RANK": "0"},  # no rank and size
    {"RANK": "0"},  # a size is needed too
    # a batch script or an salloc shell carries SLURM_PROCID=0 outside any job step: spawn here
    {"SLURM_PROCID": "0", "SLURM_NTASKS": "8", "SLURM_LOCALID": "0", "SLURM_JOB_ID": "42"},
    # one rank launched (srun --pty bash, mpirun -n 1): spawn here
    {"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "SLURM_LOCALID": "0", "SLURM_STEP_ID": "0"},
    {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"},
])
def test_no_launch(env):
    assert launch_from_env(env) is None


def test_torchrun_of_one_rank_is_a_launch_the_benchmark_refuses_later():
    assert launch_from_env({"RANK": "0", "WORLD_SIZE": "1", **ADDR}).world_size == 1


@pytest.mark.parametrize(("env", "message"), [
    ({"RANK": "x", "WORLD_SIZE": "2"}, r"^the environment variable RANK='x' is not a whole number >= 0; "),
    ({"RANK": "0", "WORLD_SIZE": "0"}, r"WORLD_SIZE='0' is not a whole number >= 1"),
    ({"RANK": "2", "WORLD_SIZE": "2"}, r"^RANK=2 is not below WORLD_SIZE=2; "),
    ({"RANK": "1", "WORLD_SIZE": "4", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2"},
     r"^the local rank LOCAL_RANK=2 is not below the 2 ranks the launcher places on this node"),
    ({"RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "70000"}, r"MASTER_PORT='70000' is not a port"),
])
def test_malformed_variables_are_input_errors(env, message):
    with pytest.raises(InputError, match=message):
        launch_from_env(env)


def test_local_rank_variables_in_their_documented_order():
    assert LOCAL_RANK_VARIABLES == ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                    "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
                                    "PALS_LOCAL_RANKID")


@pytest.mark.parametrize("variable", LOCAL_RANK_VARIABLES)
def test_every_local_rank_variable_chooses_the_device(variable):
    """A launcher without a local rank of its own borrows any of them; the rank picks its GPU."""
    env = {"PMI_RANK": "6", "PMI_SIZE": "8", variable: "2", "SLURM_STEP_ID": "0", **ADDR}
    launch = launch_from_env(env)
    assert launch.local_rank == 2
    assert choose_backend("auto", visible_gpus=4, local_rank=launch.local_rank,
                          local_world_size=launch.local_world_size, nccl_available=True) == BackendChoice("nccl", 2)


@pytest.mark.parametrize(("size_variables", "local_size"), [
    ({"LOCAL_WORLD_SIZE": "4"}, 4), ({"SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_NODEID": "1"}, 4),
    ({"SLURM_TASKS_PER_NODE": "6,2", "SLURM_NODEID": "0"}, 6), ({"SLURM_NTASKS_PER_NODE": "4"}, 4),
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, 4), ({"MV2_COMM_WORLD_LOCAL_SIZE": "4"}, 4),
    ({"MPI_LOCALNRANKS": "4"}, 4), ({"PMI_LOCAL_SIZE": "4"}, 4), ({"PALS_LOCAL_SIZE": "4"}, 4),
])
def test_every_local_size_variable_refuses_ranks_outnumbering_gpus(size_variables, local_size):
    """Each launcher's count of ranks on the node, read with its own local rank, refuses up front."""
    rank_of = {"LOCAL_WORLD_SIZE": "LOCAL_RANK", "SLURM_STEP_TASKS_PER_NODE": "SLURM_LOCALID",
               "SLURM_TASKS_PER_NODE": "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE": "SLURM_LOCALID",
               "OMPI_COMM_WORLD_LOCAL_SIZE": "OMPI_COMM_WORLD_LOCAL_RANK",
               "MV2_COMM_WORLD_LOCAL_SIZE": "MV2_COMM_WORLD_LOCAL_RANK", "MPI_LOCALNRANKS": "MPI_LOCALRANKID",
               "PMI_LOCAL_SIZE": "PMI_LOCAL_RANK", "PALS_LOCAL_SIZE": "PALS_LOCAL_RANKID"}
    rank_variable = rank_of[next(iter(size_variables))]
    env = {"PMI_RANK": "1", "PMI_SIZE": "8", "SLURM_STEP_ID": "0", rank_variable: "1", **size_variables, **ADDR}
    launch = launch_from_env(env)
    assert (launch.local_rank, launch.local_world_size) == (1, local_size)
    with pytest.raises(InputError, match=rf"the {local_size} ranks on this node would share its 2 visible GPUs"):
        choose_backend("auto", visible_gpus=2, local_rank=1, local_world_size=launch.local_world_size,
                       nccl_available=True)


def test_no_local_rank_anywhere_names_every_variable_tried():
    launch = launch_from_env({"PMI_RANK": "1", "PMI_SIZE": "8", **ADDR})
    with pytest.raises(InputError, match=r"gives no local rank to choose one \(none of LOCAL_RANK, SLURM_LOCALID, "
                                         r"OMPI_COMM_WORLD_LOCAL_RANK, MV2_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, "
                                         r"PMI_LOCAL_RANK, PALS_LOCAL_RANKID is set\)"):
        choose_backend("auto", visible_gpus=4, local_rank=launch.local_rank, local_world_size=None,
                       nccl_available=True)


@pytest.mark.parametrize(("value", "node", "expected"), [
    ("8", 0, 8), ("8(x16)", 15, 8), ("8(x16)", None, 8), ("4(x2),3", 0, 4), ("4(x2),3", 2, 3),
    ("2,1", None, None), ("4(x2),3", 7, None), ("8(x2", 0, None), ("", 0, None),
])
def test_slurm_tasks_per_node(value, node, expected):
    assert tasks_on_node(value, node) == expected


# --------------------------------------------------------------------------- the device of a launched rank


def _device(env, visible, requested="auto", nccl=True):
    """The decision a launched rank takes: its environment, then what it sees (no GPU needed)."""
    launch = launch_from_env(env)
    return choose_backend(requested, visible_gpus=visible, local_rank=launch.local_rank,
                          local_world_size=launch.local_world_size, nccl_available=nccl,
                          gpus_on_machine=visible > 0)


SRUN_TASK_3 = {"SLURM_PROCID": "3", "SLURM_NTASKS": "16", "SLURM_LOCALID": "3", "SLURM_STEP_ID": "0",
               "SLURM_NODEID": "0", "SLURM_STEP_TASKS_PER_NODE": "8(x2)", **ADDR}


def test_one_gpu_per_task_uses_it_whatever_the_local_rank():
    """srun --gpus-per-task 1: CUDA_VISIBLE_DEVICES per task, so task 3 sees its own GPU as device 0."""
    assert _device(SRUN_TASK_3, 1) == BackendChoice("nccl", 0)
    assert _device(SRUN_TASK_3, 1, "nccl") == BackendChoice("nccl", 0)


def test_all_of_a_nodes_gpus_visible_rank_i_takes_gpu_i():
    assert _device(SRUN_TASK_3, 8) == BackendChoice("nccl", 3)
    assert _device(SRUN_TASK_3, 16) == BackendChoice("nccl", 3)  # more GPUs than ranks: fine


@pytest.mark.parametrize("requested", ["auto", "nccl"])
def test_ranks_outnumbering_visible_gpus_are_refused_before_anything_starts(requested):
    with pytest.raises(InputError, match=rf"^backend '{requested}' cannot run( NCCL)?: the 8 ranks on this node "
                                         r"would share its 4 visible GPUs, which NCCL refuses; start at most "):
        _device(SRUN_TASK_3, 4, requested)
    # without a local size, a local rank at or past the visible GPUs shows it
    pals = {"PMI_RANK": "5", "PMI_SIZE": "8", "PMI_LOCAL_RANK": "5", **ADDR}
    with pytest.raises(InputError, match=r"at least 6 ranks \(local rank 5\) on this node would share its 4"):
        _device(pals, 4, requested)
    assert _device({**pals, "PMI_LOCAL_RANK": "3"}, 4, requested) == BackendChoice("nccl", 3)


def test_several_gpus_and_no_local_rank_is_refused():
    env = {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", **ADDR}
    with pytest.raises(InputError, match=r"sees 2 GPUs and its launcher gives no local rank to choose one"):
        _device(env, 2)
    assert _device(env, 1) == BackendChoice("nccl", 0)


def test_gloo_and_gpu_less_ranks_need_no_device():
    assert _device(SRUN_TASK_3, 4, "gloo") == BackendChoice("gloo", None)
    assert _device(SRUN_TASK_3, 0) == BackendChoice("gloo", None)  # a node without GPUs
    assert _device(SRUN_TASK_3, 0, nccl=False).backend == "gloo"


@pytest.mark.parametrize(("nodes", "host"), [
    ("gpu001", "gpu001"), ("gpu[001-004]", "gpu001"), ("gpu[010,003-004]", "gpu010"),
    ("rack[1-2]-n[01-04],login1", "rack1-n01"), ("a100-7.cluster.local,a100-8", "a100-7.cluster.local"),
    ("x[0009-0012]y", "x0009y"), (" gpu[2-3] ", "gpu2"),
    ("", None), ("[1-2]", "1"), ("gpu[a-b]", None), ("gpu[1-2", None), ("gpu 1", None), ("-gpu", None),
])
def test_the_first_host_of_a_slurm_node_list(nodes, host):
    assert first_host(nodes) == host
