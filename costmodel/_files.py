"""Files: the one rule for those costmodel writes (never over an existing file without ``--force``),
and the one way it reads a user's text file (UTF-8, a byte-order mark dropped, one-line errors)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from costmodel.errors import InputError, ParseError

__all__ = ["MAX_READ_BYTES", "SMALLER", "SMALLER_LOG", "cannot_write", "check_writable", "decode_text",
           "read_bytes", "read_text", "write_files", "write_text"]

MAX_READ_BYTES = 64 * 2**20
"""The most bytes costmodel reads from one user file (64 MiB): far above any benchmark log, answer
sheet or profile, and small enough that a wrong file fails at once instead of filling the memory."""


def check_writable(path: str | Path, *, force: bool, folder_must_exist: bool = True) -> Path:
    """*path* as a Path, checked before any work is done: no folder, not there yet (or *force*), its
    folder there.

    >>> check_writable("/nonexistent-folder/x.toml", force=True)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: /nonexistent-folder does not exist; create the folder first
    >>> check_writable("/", force=True)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: / is a folder; name a file in it to write
    """
    target = Path(path)
    if target.is_dir():  # --force cannot help: a folder is never overwritten
        raise InputError(f"{target} is a folder; name a file in it to write")
    if target.exists() and not force:
        raise InputError(f"{target} exists; pass force=True to overwrite it")
    if folder_must_exist and not target.parent.exists():
        raise InputError(f"{target.parent} does not exist; create the folder first")
    if folder_must_exist and not target.parent.is_dir():
        raise InputError(f"{target.parent} is not a folder; give a path inside a folder")
    return target


def write_text(path: str | Path, text: str) -> None:
    """Write *text* to the file *path* in UTF-8: the one way costmodel writes a user's file, any failure
    of the system's (no such folder, permission denied, a folder, a full disk) one line naming the path
    and the reason (:func:`cannot_write`).

    >>> write_text("/proc/costmodel-nope.toml", "")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: cannot write /proc/costmodel-nope.toml: No such file or directory
    """
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise cannot_write(path, error) from None


def cannot_write(path: str | os.PathLike[str], error: OSError) -> InputError:
    """The one-line error of a file costmodel could not write: *path* and the system's reason."""
    return InputError(f"cannot write {os.fspath(path)}: {error.strerror or error}")


def write_files(folder: Path, files: dict[str, str], *, force: bool) -> None:
    """*files* (path relative to *folder* → text) written under *folder*, its subfolders made: every
    target is checked first (:func:`check_writable`; an existing file needs *force*), so a refusal
    leaves nothing half written."""
    for relative in files:
        check_writable(folder / relative, force=force, folder_must_exist=False)
    for relative, text in files.items():
        target = folder / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise cannot_write(target.parent, error) from None
        write_text(target, text)


SMALLER = "give a smaller file"
"""How a file too large to read is made to fit, unless its kind says more (*smaller* of :func:`read_text`)."""

SMALLER_LOG = f"{SMALLER} (split it, or keep the table only)"
"""How a log too large to read is made to fit."""


def _size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} B"


def read_bytes(path: str | os.PathLike[str], *, what: str, limit: int = MAX_READ_BYTES,
               smaller: str = SMALLER) -> bytes:
    """The bytes of the regular file *path* (*what* it holds, for the error), at most *limit* of them.

    Only regular files are read: a FIFO (which would wait forever for a writer), a device such as
    ``/dev/zero`` (endless) or a folder is refused at once, from ``os.stat``, before anything is
    opened.  A file over *limit* bytes is refused with the cap in the message, and *smaller*: how to
    make it fit.

    >>> read_bytes("/dev/null", what="the log")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: /dev/null: cannot read the log: a character device, not a regular file
    """
    name = str(path)
    try:
        info = os.stat(path)
    except OSError as e:
        raise ParseError(f"cannot read {what}: {e.strerror or e}", path=name) from None
    if not stat.S_ISREG(info.st_mode):
        kind = ("a folder" if stat.S_ISDIR(info.st_mode)
                else "a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode)
                else "a character device" if stat.S_ISCHR(info.st_mode)
                else "a block device" if stat.S_ISBLK(info.st_mode)
                else "a socket" if stat.S_ISSOCK(info.st_mode) else "not a file")
        raise ParseError(f"cannot read {what}: {kind}, not a regular file", path=name)
    too_big = ParseError(f"cannot read {what}: larger than the {_size_text(limit)} costmodel reads; "
                         f"{smaller}", path=name)
    if info.st_size > limit:
        raise too_big
    try:
        with open(path, "rb") as f:
            content = f.read(limit + 1)  # the file may have grown since the stat
    except OSError as e:
        raise ParseError(f"cannot read {what}: {e.strerror or e}", path=name) from None
    if len(content) > limit:
        raise too_big
    return content


def read_text(path: str | os.PathLike[str], *, what: str, limit: int = MAX_READ_BYTES, hint: str = "",
              smaller: str = SMALLER) -> str:
    """The text of the UTF-8 file *path* (*what* it holds, for the error), a byte-order mark dropped.

    The one way costmodel reads a user's text file: by :func:`read_bytes` (regular files only, at
    most *limit* bytes), then :func:`decode_text`.  Every failure is a one-line
    :class:`~costmodel.errors.ParseError` naming the file (and the line of a byte that is not
    UTF-8), worded ``cannot read WHAT: why``; *hint*, when given, follows as ``; hint``, and *smaller*
    ends the refusal of a file too large.

    >>> read_text("/nonexistent.toml", what="answers")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: /nonexistent.toml: cannot read answers: No such file or directory
    """
    try:
        content = read_bytes(path, what=what, limit=limit, smaller=smaller)
        return decode_text(content, path=str(path), what=what)
    except ParseError as e:
        if not hint:
            raise
        raise ParseError(f"{_reason(e)}; {hint}", path=e.path, line=e.line) from None


def _reason(error: ParseError) -> str:
    """The message of *error* without its ``path:line:`` prefix."""
    where = error.path if error.line is None else f"{error.path}:{error.line}"
    return str(error).removeprefix(f"{where}: ")


def decode_text(content: bytes, *, path: str, what: str) -> str:
    """*content* decoded as UTF-8, a byte-order mark dropped; the line of a bad byte in the error.

    >>> decode_text(b"size\\n\\xff\\n", path="x.txt", what="the log")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: x.txt:2: cannot read the log: byte 0xff is not UTF-8 text (binary data?)
    """
    try:
        return content.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = content[: e.start].count(b"\n") + 1
        byte = content[e.start]
        raise ParseError(f"cannot read {what}: byte 0x{byte:02x} is not UTF-8 text (binary data?)",
                         path=path, line=line) from None
