"""Fewer garbage collections while a computation allocates many objects that live to its end.

Python's youngest garbage collection runs every 700 (or 2,000) allocations more than deallocations and
scans the objects made since; those that survive are scanned again by the older collections, which
grow with everything alive.  A command's start-up (modules, classes, option tables) and a step's exact
simulation (a ``Fraction`` for every start and end of 10⁵ operations) allocate objects that live to
the end and form no cycles, so at the default threshold the collector stops again and again to find
nothing: 5-10 ms of a step query, 0.4 s of a 1T-parameter step with every collective overlapped.
:func:`fewer_collections` raises the youngest threshold to :data:`YOUNG_COLLECTION` while it is
entered (the same work per object, collected every 100,000 allocations) and gives the caller's
thresholds back when the outermost entry leaves, also on an exception; entries nest and may come from
several threads.
"""

from __future__ import annotations

import gc
import threading
from contextlib import ContextDecorator

__all__ = ["YOUNG_COLLECTION", "fewer_collections"]

YOUNG_COLLECTION = 100_000
"""The youngest collection's threshold inside :func:`fewer_collections` (Python's default is 700 or
2,000), unless the caller's is higher."""


class _State:
    """How many blocks are inside :func:`fewer_collections`, and the thresholds to give back."""

    lock = threading.Lock()
    entered = 0
    saved: tuple[int, ...] = ()


class fewer_collections(ContextDecorator):  # noqa: N801 (a context manager, named as one is used)
    """Collect garbage less often inside the block (see the module notes); usable as a decorator.

    >>> import gc
    >>> before = gc.get_threshold()
    >>> with fewer_collections():
    ...     gc.get_threshold()[0] >= YOUNG_COLLECTION
    True
    >>> gc.get_threshold() == before
    True
    """

    def __enter__(self) -> None:
        with _State.lock:
            if not _State.entered:
                _State.saved = gc.get_threshold()
                gc.set_threshold(max(YOUNG_COLLECTION, _State.saved[0]), *_State.saved[1:])
            _State.entered += 1

    def __exit__(self, *exc: object) -> None:
        with _State.lock:
            _State.entered -= 1
            if not _State.entered:
                gc.set_threshold(*_State.saved)
