"""Reading TOML data files (profiles, exercises, answers) with errors that name file and line.

Files are data: read by :mod:`tomllib` and checked key by key, never executed.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from costmodel.errors import ParseError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["MAX_BYTES", "header_lines", "loads"]

MAX_BYTES = 4 * 2**20
"""Data files larger than this are refused before parsing."""


def _line_of(exc: tomllib.TOMLDecodeError) -> int | None:
    """The line of a TOML error: an attribute from Python 3.14, in the message before."""
    line = getattr(exc, "lineno", None)
    if line is None:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(found.group(1)) if found else None
    return line


def loads(content: str, *, path: str) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes a :class:`ParseError` with the line.

    >>> loads("a = 1", path="x.toml")
    {'a': 1}
    >>> loads("a = 1\\nb = ?", path="x.toml")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: x.toml:2: invalid TOML: invalid value
    """
    if len(content) > MAX_BYTES:
        raise ParseError(f"the file is too large ({len(content)} characters; at most {MAX_BYTES})", path=path)
    if "\x00" in content:
        raise ParseError("the file is binary, not TOML text", path=path)
    try:
        return tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).split(" (at line")[0]
        raise ParseError(f"invalid TOML: {message[:1].lower()}{message[1:]}", path=path,
                         line=_line_of(exc)) from None


def header_lines(content: str, header: str) -> list[int]:
    """The 1-based lines of each ``[[header]]`` (array-of-tables) in *content*, in order.

    >>> header_lines("[[answer]]\\nx = 1\\n\\n[[answer]]\\n", "answer")
    [1, 4]
    """
    pattern = re.compile(rf"^\s*\[\[\s*{re.escape(header)}\s*\]\]")
    return [i for i, line in enumerate(content.splitlines(), 1) if pattern.match(line)]
