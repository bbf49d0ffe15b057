"""Reading TOML data files (profiles, exercises, answers) with errors that name file and line.

Files are data: read by :mod:`tomllib` and checked key by key, never executed.  The text of a file
shipped with the package (``shipped=True``: a GPU or NCCL preset) is parsed once per Python and kept
beside this module's bytecode (:func:`costmodel._codecache.kept`), so that reading a preset needs
neither the TOML reader nor its parse after the first time.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from costmodel._codecache import kept
from costmodel.errors import ParseError

__all__ = ["MAX_BYTES", "MAX_DEPTH", "as_keys", "header_lines", "loads"]

MAX_BYTES = 4 * 2**20
"""Data files larger than this are refused before parsing."""

MAX_DEPTH = 32
"""Arrays and tables nested deeper than this are refused: no data file of costmodel needs more."""


def _tomllib() -> Any:
    """The TOML reader: :mod:`tomllib`, or ``tomli`` before Python 3.11 (imported when first needed)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


def _line_of(exc: Exception) -> int | None:
    """The line of a TOML error: an attribute from Python 3.14, in the message before."""
    line = getattr(exc, "lineno", None)
    if line is None:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(found.group(1)) if found else None
    return line


def loads(content: str, *, path: str, shipped: bool = False) -> dict[str, Any]:
    """Parse TOML text; a syntax error becomes a :class:`ParseError` with the line.

    A leading byte-order mark (as some editors save UTF-8) is skipped, and data
    nested more than :data:`MAX_DEPTH` arrays or tables deep is refused.  *shipped*: the text is a
    file of the package's own, parsed once and kept (see the module notes); never a user's file.

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
    content = content.removeprefix("\ufeff")
    if shipped:
        return kept(globals(), content, lambda text: loads(text, path=path))
    tomllib = _tomllib()
    try:
        data = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).split(" (at line")[0]
        raise ParseError(f"invalid TOML: {message[:1].lower()}{message[1:]}", path=path,
                         line=_line_of(exc)) from None
    except RecursionError:  # the reader recurses once per nested array or inline table
        raise ParseError(f"the data is nested too deeply (at most {MAX_DEPTH} levels)", path=path) from None
    if _depth(data) > MAX_DEPTH:
        raise ParseError(f"the data is nested too deeply (at most {MAX_DEPTH} levels)", path=path)
    return data


def _depth(data: Any) -> int:
    """How many arrays and tables deep *data* goes (without recursion, stopping past the limit)."""
    deepest, stack = 0, [(data, 0)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return deepest


def header_lines(content: str, header: str) -> list[int]:
    """The 1-based lines of each ``[[header]]`` (array-of-tables) in *content*, in order.

    >>> header_lines("[[answer]]\\nx = 1\\n\\n[[answer]]\\n", "answer")
    [1, 4]
    """
    pattern = re.compile(rf"^\s*\[\[\s*{re.escape(header)}\s*\]\]")
    lines = content.removeprefix("\ufeff").splitlines()
    return [i for i, line in enumerate(lines, 1) if pattern.match(line)]


def as_keys(message: str) -> str:
    """A message naming Python parameters (``channels=0``) said with a file's keys (``channels = 0``).

    The library's messages name what is wrong by parameter; where the value came from a TOML table,
    the table's key is what the reader wrote (and the command line does not rewrite it into an option).

    >>> as_keys("[single.ring]: channels=0 is not an integer from 1 to 64")
    '[single.ring]: channels = 0 is not an integer from 1 to 64'
    """
    return re.sub(r"(?<![\w-])([a-z_]\w*)=(?=\S)", r"\1 = ", message)
