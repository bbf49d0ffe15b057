"""Command help flows: a paragraph of a docstring is one line, so the help wraps it to the terminal."""

from __future__ import annotations

import typer.main

from costmodel.cli.app import build, flowed


def _commands(command, path=()):
    yield path, command
    for name, child in getattr(command, "commands", {}).items():
        yield from _commands(child, (*path, name))


def test_every_help_paragraph_is_one_line():
    root = typer.main.get_command(build())
    broken = []
    for path, command in _commands(root):
        for paragraph in (command.help or "").split("\n\n"):
            lines = paragraph.splitlines()
            if len(lines) > 1 and not paragraph.startswith("\b") and not any(
                    line.startswith(("- ", "* ", "|", " ")) for line in lines):
                broken.append(" ".join(path) + ": " + lines[0])
    assert not broken, broken


def test_flowing_keeps_lists_and_is_idempotent():
    text = "Summary.\n\n    A paragraph\n    in two lines.\n\n    - one\n    - two\n"
    assert flowed(text) == "Summary.\n\nA paragraph in two lines.\n\n- one\n- two"
    assert flowed(flowed(text)) == flowed(text)
