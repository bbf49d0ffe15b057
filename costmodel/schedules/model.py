"""Schedules as data: steps of transfers between ranks, each moving some chunks.

A :class:`Schedule` cuts the message of n bytes into ``units`` equal chunks
(n/units bytes each) and names every chunk by an integer id.  For all-to-all
the ids are ``src·p + dst`` (the block rank src sends to rank dst): p·p ids of
n/p bytes (``units`` = p); for every other collective the ids are
``0 .. units-1``.

A step is a set of transfers that happen at the same time: all of them read
the state before the step, then all of them write.  To keep large p cheap, a
step is stored as a few :class:`Group` s of transfers that move the same
number of chunks with the same operation, as numpy arrays, and a schedule
*generates* its steps on demand (a ring at p = 65,536 has 131,070 steps of
65,536 transfers each: they are never all in memory).

A transfer either copies its chunks into the destination or reduces them into
the destination's partial values (``op="reduce"``, which costs γ per byte).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from costmodel.errors import CostmodelError
from costmodel.validate import positive, whole

__all__ = [
    "Group", "Schedule", "ScheduleError", "Step", "Transfer", "check_ranks", "group", "reversed_steps",
    "step",
]

Op = Literal["copy", "reduce"]


def check_ranks(p: int, *, root: int = 0) -> None:
    """Refuse a rank count or root that names no rank (builders call this first).

    Raises
    ------
    InputError
    """
    positive(p, "p", expected="a number of ranks", hint="use an integer p ≥ 1")
    whole(root, "root", low=0, high=p - 1, expected=f"one of the {p} ranks", hint=f"use 0 ≤ root < {p}")


class ScheduleError(CostmodelError, RuntimeError):
    """A schedule breaks a rule: a rank sends a chunk it does not hold, two sends in one step, ..."""


@dataclass(frozen=True, slots=True)
class Transfer:
    """Rank *src* sends *chunks* to rank *dst*, which copies or reduces them."""

    src: int
    dst: int
    chunks: tuple[int, ...]
    op: Op = "copy"


@dataclass(frozen=True, slots=True, eq=False)
class Group:
    """Transfers of one step that move the same number of chunks with the same op.

    ``src`` and ``dst`` have shape (T,); ``chunks`` has shape (T, m): transfer
    i moves chunks ``chunks[i]`` from ``src[i]`` to ``dst[i]``.
    """

    src: np.ndarray
    dst: np.ndarray
    chunks: np.ndarray
    op: Op = "copy"

    @property
    def size(self) -> int:
        return int(self.src.size)

    def transfers(self) -> Iterator[Transfer]:
        for s, d, c in zip(self.src.tolist(), self.dst.tolist(), self.chunks.tolist(), strict=True):
            yield Transfer(s, d, tuple(c), self.op)


Step = tuple[Group, ...]


def reversed_steps(steps: Iterable[Step], op: Op) -> Iterator[Step]:
    """The mirror of *steps*: last step first, every transfer's source and destination swapped.

    A one-to-all schedule run backwards is its all-to-one dual (broadcast and
    reduce, scatter and gather): each transfer goes back along its edge, one
    step earlier, with *op* (``"reduce"`` when the dual adds what it receives).

    Examples
    --------
    >>> out = [(Group(np.array([0]), np.array([1]), np.array([[0]])),),
    ...        (Group(np.array([0, 1]), np.array([2, 3]), np.array([[0], [0]])),)]
    >>> [[(t.src, t.dst, t.op) for g in s for t in g.transfers()] for s in reversed_steps(out, "reduce")]
    [[(2, 0, 'reduce'), (3, 1, 'reduce')], [(1, 0, 'reduce')]]
    """
    for s in reversed(list(steps)):
        yield tuple(Group(g.dst, g.src, g.chunks, op) for g in s)


def group(src: Iterable[int] | np.ndarray, dst: Iterable[int] | np.ndarray,
          chunks: Iterable[Iterable[int]] | np.ndarray, op: Op = "copy") -> Group:
    """A :class:`Group` from sequences (or arrays) of sources, destinations and chunk lists."""
    s = np.asarray(list(src) if not isinstance(src, np.ndarray) else src, dtype=np.int64).reshape(-1)
    d = np.asarray(list(dst) if not isinstance(dst, np.ndarray) else dst, dtype=np.int64).reshape(-1)
    c = np.asarray(chunks if isinstance(chunks, np.ndarray) else [list(x) for x in chunks], dtype=np.int64)
    if c.ndim == 1:
        c = c.reshape(s.size, -1)
    return Group(s, d, c, op)


def step(transfers: Iterable[Transfer]) -> Step:
    """A step from individual transfers, grouped by op and chunk count."""
    buckets: dict[tuple[str, int], list[Transfer]] = {}
    for t in transfers:
        buckets.setdefault((t.op, len(t.chunks)), []).append(t)
    return tuple(
        group([t.src for t in ts], [t.dst for t in ts], [t.chunks for t in ts], op)  # type: ignore[arg-type]
        for (op, _), ts in buckets.items()
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Schedule:
    """The steps of one algorithm of one collective at one p.

    Parameters
    ----------
    collective, algorithm : str
        Canonical names (the algorithm is the record the schedule realises,
        e.g. ``recursive-doubling-folded`` at p = 12).
    p : int
        Ranks.
    units : int
        Chunks the n-byte message is cut into; each chunk is n/units bytes.
    generate : callable
        ``generate()`` yields the steps afresh each time it is called.
    root : int
        The root of rooted collectives (broadcast, reduce, gather, scatter).
    """

    collective: str
    algorithm: str
    p: int
    units: int
    generate: Callable[[], Iterable[Step]]
    root: int = 0

    def steps(self) -> Iterator[Step]:
        """The steps, validated one by one (ranks, chunk ids, one-port rule)."""
        for index, s in enumerate(self.generate(), start=1):
            self._check(index, s)
            yield s

    @property
    def chunk_ids(self) -> int:
        """How many distinct chunk ids the schedule may use."""
        return self.p * self.p if self.collective == "alltoall" else self.units

    def transfers(self) -> list[list[Transfer]]:
        """Every step as a list of :class:`Transfer` (for display; small p only)."""
        return [[t for g in s for t in g.transfers()] for s in self.steps()]

    def _check(self, index: int, s: Step) -> None:
        if not s or any(g.size == 0 for g in s):
            raise ScheduleError(f"step {index} of {self.algorithm} has an empty group of transfers")
        for g in s:
            if g.chunks.ndim != 2 or g.chunks.shape[0] != g.size or g.chunks.shape[1] == 0 or (
                    g.dst.shape != g.src.shape):
                raise ScheduleError(f"step {index}: a group's chunks do not match its transfers")
            if g.chunks.min() < 0 or g.chunks.max() >= self.chunk_ids:
                raise ScheduleError(f"step {index}: chunk ids outside 0..{self.chunk_ids - 1}")
            if g.chunks.shape[1] > 1 and (np.diff(np.sort(g.chunks, axis=1), axis=1) == 0).any():
                raise ScheduleError(f"step {index}: a transfer carries the same chunk twice")
        src = s[0].src if len(s) == 1 else np.concatenate([g.src for g in s])
        dst = s[0].dst if len(s) == 1 else np.concatenate([g.dst for g in s])
        if src.min() < 0 or dst.min() < 0 or max(src.max(), dst.max()) >= self.p or (src == dst).any():
            raise ScheduleError(f"step {index}: a transfer is not between two of the {self.p} ranks")
        for ranks, what in ((src, "sends"), (dst, "receives")):
            counts = np.bincount(ranks, minlength=self.p)
            if counts.max() > 1:
                twice = int(np.flatnonzero(counts > 1)[0])
                raise ScheduleError(f"step {index}: rank {twice} {what} twice (one-port rule)")
