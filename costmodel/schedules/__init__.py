"""Explicit schedules of the collective algorithms, an executor and a simulator.

A builder turns (p, options) into a :class:`Schedule`: steps of transfers.
:func:`execute` runs it on random data and checks the collective's
postcondition; :func:`simulate` prices it under α–β–γ.  This package never
sees the formula registry: the tests compare the two, so that each checks the
other.
"""

from __future__ import annotations

from costmodel.schedules.executor import Execution, execute
from costmodel.schedules.model import Group, Schedule, ScheduleError, Step, Transfer, group, step
from costmodel.schedules.registry import BUILDERS, build
from costmodel.schedules.simulator import Simulation, simulate

__all__ = [
    "BUILDERS",
    "Execution",
    "Group",
    "Schedule",
    "ScheduleError",
    "Simulation",
    "Step",
    "Transfer",
    "build",
    "execute",
    "group",
    "simulate",
    "step",
]
