"""Help text is read by rich as markup: a bracketed word (``[shape]``, ``[[log]]``) would vanish from
``--help``.  Every command's help and every option's help writes such brackets escaped (``\\[``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from rich.text import Text
from typer.main import get_command

from costmodel.cli.app import build

_TAG = re.compile(r"(?<!\\)\[[A-Za-z/#@][^\]\n]*\]")
"""What rich takes for a style tag and drops: ``[word]`` not preceded by a backslash."""


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    if hasattr(command, "commands"):
        for name, sub in command.commands.items():
            yield from _commands(sub, (*path, name))
    else:
        yield " ".join(path), command


_ALL = tuple(_commands(get_command(build([]))))


@pytest.mark.parametrize(("name", "command"), _ALL, ids=[n for n, _ in _ALL])
def test_no_bracket_vanishes_from_help(name: str, command: Any) -> None:
    texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
    for text in texts:
        assert not _TAG.findall(text), f"{name}: escape the bracket as \\[ so --help shows it"


def test_escaped_bracket_shows_as_written() -> None:
    assert Text.from_markup("a \\[shape] table and \\[\\[log]] tables").plain == "a [shape] table and [[log]] tables"
