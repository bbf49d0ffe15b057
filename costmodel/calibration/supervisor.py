"""The parent's side of a benchmark run in spawned processes: watch the ranks, pass rank 0's rows
on, and turn a crash, an error report or a hang into one :class:`~costmodel.errors.CalibrationError`
naming the first rank that failed and the step it was in; stop and reap every child.

The ranks report on a queue: ``("started", rank)``, ``("ready", rank)``, ``("row", step)``,
``("done", rank)`` or ``("error", rank, monotonic time, step index, first line of the error)``.
"""

from __future__ import annotations

import os
import queue as queue_module
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from costmodel.errors import CalibrationError

__all__ = ["OWN_ERROR", "STARTUP_S", "Recorder", "die_with_parent", "free_port", "stop", "supervise"]

STARTUP_S = 60.0
"""The longest the ranks may take to form their process group (before the per-step timeout applies)."""
OWN_ERROR = f"{CalibrationError.__name__}: "
"""How a rank's report of costmodel's own check starts (the same on every rank: shown as is)."""
_PR_SET_PDEATHSIG = 1


class Recorder(Protocol):
    """What the supervisor passes rank 0's rows to."""

    count: int

    def add(self, step: Any) -> None: ...


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def die_with_parent(parent: int) -> None:
    """On Linux, have the kernel send SIGTERM to this rank if the parent dies (best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


def supervise(processes: Sequence[Any], results: Any, recorder: Recorder,
              describe: Callable[[int | None], str], timeout_s: float) -> None:
    """Pass rank 0's results to *recorder* until every rank is done; raise CalibrationError on failure."""
    done: set[int] = set()
    ready: set[int] = set()
    errors: dict[int, tuple[float, int | None, str]] = {}
    last = time.monotonic()
    all_exited_at: float | None = None
    while len(done) < len(processes):
        try:
            message = results.get(timeout=0.1)
        except queue_module.Empty:
            message = None
        now = time.monotonic()
        if message is not None:
            last = now
            kind = message[0]
            if kind == "row":
                recorder.add(message[1])
            elif kind == "ready":
                ready.add(message[1])
            elif kind == "done":
                done.add(message[1])
            elif kind == "error":
                errors[message[1]] = message[2:]
            continue
        crashed = [p for p in processes if p.exitcode not in (None, 0)]
        if errors or crashed:
            _drain(results, errors, seconds=1.0)
            raise _failure(processes, errors, recorder, describe, ready)
        if all(p.exitcode is not None for p in processes):
            all_exited_at = all_exited_at or now
            if now - all_exited_at > 2.0:
                missing = sorted(set(range(len(processes))) - done)
                raise CalibrationError(f"rank {missing[0]} exited without finishing "
                                       f"{describe(recorder.count)}; see its messages above")
        limit = timeout_s if len(ready) == len(processes) else max(timeout_s, STARTUP_S)
        if now - last > limit:
            raise CalibrationError(_hang_message(recorder, describe, ready, len(processes), limit))


def _drain(results: Any, errors: dict[int, tuple[float, int | None, str]], *, seconds: float) -> None:
    """Collect the error reports that arrive within *seconds* (the first failure makes the others fail)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        try:
            message = results.get(timeout=left)
        except queue_module.Empty:
            return
        if message[0] == "error":
            errors[message[1]] = message[2:]


def _failure(processes: Sequence[Any], errors: dict[int, tuple[float, int | None, str]], recorder: Recorder,
             describe: Callable[[int | None], str], ready: set[int]) -> CalibrationError:
    """The error naming the first rank to fail: one that died without a report, else the earliest report."""
    current = recorder.count if len(ready) == len(processes) else None
    silent = [(rank, p.exitcode) for rank, p in enumerate(processes)
              if p.exitcode not in (None, 0) and rank not in errors]
    if silent:
        rank, code = silent[0]
        how = f"was killed by {_signal_name(-code)}" if code < 0 else f"exited with code {code}"
        return CalibrationError(f"rank {rank} {how} during {describe(current)}; "
                                "see its messages above")
    rank = min(errors, key=lambda r: errors[r][0])
    _, where, text = errors[rank]
    if text.startswith(OWN_ERROR):  # the ranks' own check (e.g. they disagree): said the same on every rank
        return CalibrationError(text[len(OWN_ERROR):])
    return CalibrationError(f"rank {rank} failed during {describe(where)}: {text}")


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _hang_message(recorder: Recorder, describe: Callable[[int | None], str], ready: set[int], world: int,
                  timeout_s: float) -> str:
    limit = f"{timeout_s:g} s"
    if len(ready) < world:
        return (f"the process group did not form within {limit} ({len(ready)} of {world} ranks ready); "
                "a rank hung at start-up, check that 127.0.0.1 accepts connections")
    return (f"no rank finished {describe(recorder.count)} within {limit}; a rank hung "
            "(raise timeout_s if one size legitimately takes longer)")


def stop(processes: Sequence[Any]) -> None:
    """Terminate and reap every child still running (SIGTERM, then SIGKILL)."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + 5.0
    for process in processes:
        if process.pid is not None:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join(timeout=5.0)
