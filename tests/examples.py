"""The example commands users see: the ``$ costmodel ...`` sessions of the README and docs, and the
``Example: costmodel ...`` lines of every command's ``--help``.

Shared by the tests that run them (tests/test_docs.py: the pages show what the commands print;
tests/cli/test_shell_cli.py: every command has an example; tests/cli/test_widths.py: every number
survives every width).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"```[a-z]*\n(\$ costmodel .*?)```", re.DOTALL)
_EXAMPLE = re.compile(r"^Example: (costmodel .*?)$", re.MULTILINE)


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def doc_sessions() -> list[tuple[str, str, str]]:
    """(an id, the command, the output shown) of every shell session of the README and docs."""
    found = []
    for page in PAGES:
        for block in _BLOCK.findall(page.read_text(encoding="utf-8")):
            command, _, want = block.partition("\n")
            found.append((f"{page_name(page)}: {command[2:60]}", command[2:], want))
    return found


def leaf_commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(the words naming it, the Click command) of every command that runs (not a group)."""
    subs = getattr(command, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from leaf_commands(sub, (*path, name))
    else:
        yield path, command


def all_leaf_commands() -> list[tuple[tuple[str, ...], Any]]:
    import typer.main

    from costmodel.cli.app import build

    return list(leaf_commands(typer.main.get_command(build(()))))


def help_examples() -> list[str]:
    """Every ``Example: costmodel ...`` line of every command's help."""
    return [m for _, command in all_leaf_commands() for m in _EXAMPLE.findall(command.help or "")]
