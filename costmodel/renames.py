"""Names that changed: an old name of a profile, exercise or example keeps working for one release.

Each kind keeps its own table of old → new names next to its registry
(:data:`costmodel.profiles.RENAMED`, :data:`costmodel.examples.RENAMED`, the
``formerly`` key of an exercise file) and looks names up through
:func:`resolve`, which returns the current name and issues a
:class:`DeprecatedName` warning.  Python callers see an ordinary
:class:`FutureWarning`; the command line prints each one once on stderr as
``warning: profile 'seed' is deprecated; use 'textbook'`` and adds them to
``--json`` output under ``"warnings"`` (see :func:`collecting`).

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     resolve("profile", "seed", {"seed": "textbook"})
'textbook'
>>> str(caught[0].message)
"profile 'seed' is deprecated; use 'textbook'"
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = ["DeprecatedName", "collected", "collecting", "resolve"]


class DeprecatedName(FutureWarning):
    """An old name was used; the message says which name replaces it."""


_COLLECTED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("costmodel_renames",
                                                                             default=None)


def resolve(kind: str, name: str, renamed: Mapping[str, str]) -> str:
    """The current name for *name* (itself unless *renamed* maps it), warning when it is an old one."""
    new = renamed.get(name)
    if new is None:
        return name
    message = f"{kind} {name!r} is deprecated; use {new!r}"
    seen = _COLLECTED.get()
    if seen is not None:  # the command line: said once per command, on stderr and in the JSON
        if message not in seen:
            seen.append(message)
            import sys

            print(f"warning: {message}", file=sys.stderr)
    else:
        warnings.warn(message, DeprecatedName, stacklevel=3)
    return new


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Within this block deprecations are printed once each on stderr and collected in the list yielded."""
    seen: list[str] = []
    token = _COLLECTED.set(seen)
    try:
        yield seen
    finally:
        _COLLECTED.reset(token)


def collected() -> tuple[str, ...]:
    """The deprecation messages of the current command so far (empty outside :func:`collecting`)."""
    return tuple(_COLLECTED.get() or ())
