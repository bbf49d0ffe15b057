"""Following a how-to page literally: its code blocks found by how they start, and edits made exactly once."""

from __future__ import annotations

import re
from pathlib import Path


def block(page: str, start: str, language: str = "python") -> str:
    """The ```*language* block of *page* (its text) that starts with *start*."""
    for found in re.findall(rf"```{language}\n(.*?)```", page, re.DOTALL):
        if found.startswith(start):
            return str(found)
    raise AssertionError(f"the page has no {language} block starting {start!r}")


def replace_once(path: Path, old: str, new: str) -> None:
    """*path* with its one *old* replaced by *new* (an anchor that is missing or repeated fails)."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")
