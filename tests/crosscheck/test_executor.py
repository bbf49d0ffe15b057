"""The executor catches broken schedules: the seeds' classic bug and rule violations."""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.schedules import Group, Schedule, ScheduleError, build, execute
from costmodel.schedules.ring import ring_allgather_steps, ring_reduce_scatter_steps


def _adding_again(p: int) -> Schedule:
    """Ring all-reduce whose all-gather adds the received chunks instead of copying them."""

    def generate():
        yield from ring_reduce_scatter_steps(p)
        for (g,) in ring_allgather_steps(p):
            yield (Group(g.src, g.dst, g.chunks, "reduce"),)

    return Schedule(collective="allreduce", algorithm="ring", p=p, units=p, generate=generate)


@pytest.mark.parametrize("p", [2, 3, 4, 8])
def test_adding_chunks_again_during_allgather_is_caught(p):
    assert execute(build("ring_allreduce", "allreduce", p=p)).ok
    broken = execute(_adding_again(p))
    assert not broken.ok
    assert "wrong chunk" in broken.problems[0]


def test_sending_a_chunk_not_held_is_refused():
    bad = Schedule(collective="allgather", algorithm="ring", p=4, units=4,
                   generate=lambda: [(Group(np.array([0]), np.array([1]), np.array([[2]])),)])
    with pytest.raises(ScheduleError, match="rank 0 sends chunk 2 it does not hold"):
        execute(bad)


def test_one_port_rule():
    bad = Schedule(collective="broadcast", algorithm="naive", p=3, units=1,
                   generate=lambda: [(Group(np.array([0, 0]), np.array([1, 2]), np.array([[0], [0]])),)])
    with pytest.raises(ScheduleError, match="rank 0 sends twice"):
        execute(bad)


def test_a_missing_result_is_reported():
    short = Schedule(collective="allgather", algorithm="ring", p=4, units=4,
                     generate=lambda: list(ring_allgather_steps(4))[:2])
    result = execute(short)
    assert not result.ok
    assert "never received" in result.problems[0]


@pytest.mark.parametrize("group", [
    Group(np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.zeros((0, 1), dtype=np.int64)),
    Group(np.array([0]), np.array([1]), np.array([0])),  # chunks must be (transfers, m)
    Group(np.array([0]), np.array([1]), np.array([[7]])),  # no chunk 7 in 4 units
    Group(np.array([0]), np.array([0]), np.array([[0]])),  # to itself
    Group(np.array([0]), np.array([1]), np.array([[0, 0]])),  # the same chunk twice
])
def test_malformed_steps_are_schedule_errors(group):
    bad = Schedule(collective="allgather", algorithm="ring", p=4, units=4, generate=lambda: [(group,)])
    with pytest.raises(ScheduleError):
        execute(bad)
