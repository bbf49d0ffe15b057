"""Files: the one rule for those costmodel writes (never over an existing file without ``--force``),
and the one way it reads a user's text file (UTF-8, a byte-order mark dropped, one-line errors)."""

from __future__ import annotations

from pathlib import Path

from costmodel.errors import InputError, ParseError

__all__ = ["check_writable", "read_text"]


def check_writable(path: str | Path, *, force: bool, folder_must_exist: bool = True) -> Path:
    """*path* as a Path, checked before any work is done: not there yet (or *force*), its folder there.

    >>> check_writable("/nonexistent-folder/x.toml", force=True)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: /nonexistent-folder does not exist; create the folder first
    """
    target = Path(path)
    if target.exists() and not force:
        raise InputError(f"{target} exists; pass --force to overwrite it")
    if folder_must_exist and not target.parent.exists():
        raise InputError(f"{target.parent} does not exist; create the folder first")
    return target


def read_text(path: str | Path, *, what: str) -> str:
    """The text of the UTF-8 file *path* (*what* it holds, for the error), a byte-order mark dropped.

    >>> read_text("/nonexistent.toml", what="answers")
    Traceback (most recent call last):
        ...
    costmodel.errors.ParseError: /nonexistent.toml: cannot read answers: No such file or directory
    """
    try:
        content = Path(path).read_bytes()
    except OSError as e:
        raise ParseError(f"cannot read {what}: {e.strerror or e}", path=str(path)) from None
    try:
        return content.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise ParseError("the file is not UTF-8 text", path=str(path)) from None
