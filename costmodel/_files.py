"""The one rule for files costmodel writes: never over an existing file without ``--force``."""

from __future__ import annotations

from pathlib import Path

from costmodel.errors import InputError

__all__ = ["check_writable"]


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
