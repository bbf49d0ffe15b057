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


def test_the_help_screen_loads_neither_markdown_nor_traceback_and_they_still_work():
    """Typer's help helpers are imported with rich's Markdown and Traceback deferred (they load
    markdown_it, pygments and attrs); the stand-ins it keeps forward to the real classes when used."""
    import subprocess
    import sys

    code = ("import contextlib, io, sys\n"
            "from costmodel.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out: main(['--help'])\n"
            "assert 'Commands' in out.getvalue()\n"
            "print(sorted(m for m in ('rich.markdown', 'rich.traceback', 'markdown_it', 'pygments') "
            "if m in sys.modules))\n"
            "from typer import rich_utils\n"
            "import rich.markdown, rich.traceback\n"
            "assert isinstance(rich_utils.Markdown('*x*'), rich.markdown.Markdown)\n"
            "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
            "    assert isinstance(rich_utils.Traceback.from_exception(type(e), e, e.__traceback__), "
            "rich.traceback.Traceback)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
