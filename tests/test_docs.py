"""Every example in the README and docs runs and prints what the page shows."""

from __future__ import annotations

import doctest
import os
import shlex
from pathlib import Path

import pytest

from costmodel.cli import main
from tests.examples import PAGES, ROOT, doc_sessions
from tests.examples import page_name as _name

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_sessions = doc_sessions


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_python_examples(page):
    result = doctest.testfile(str(page), module_relative=False, optionflags=FLAGS, verbose=False)
    assert result.failed == 0


@pytest.mark.parametrize(("command", "want"), [s[1:] for s in _sessions()], ids=[s[0] for s in _sessions()])
def test_shell_examples(command, want, capsys, monkeypatch, tmp_path):
    """Set COSTMODEL_UPDATE_DOCS=1 to rewrite a page's output blocks (those without '...').

    Each runs in a scratch folder beside docs/ and tests/, so that the files it writes stay out of the
    repository."""
    for linked in ("docs", "tests"):
        (tmp_path / linked).symlink_to(ROOT / linked)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    argv = shlex.split(command)[1:]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    got = "\n".join(line.rstrip() for line in (out + err).splitlines()) + "\n"
    if os.environ.get("COSTMODEL_UPDATE_DOCS") and "..." not in want:
        for page in PAGES:
            text = page.read_text(encoding="utf-8")
            old = f"$ {command}\n{want}"
            if old in text and f"$ {command}\n{got}" not in text:  # once, though pages repeat it
                page.write_text(text.replace(old, f"$ {command}\n{got}"), encoding="utf-8")
        return
    assert doctest.OutputChecker().check_output(want, got, FLAGS), f"{command}\n--- got:\n{got}"


def _generated(page: Path, generated: str, how: str) -> None:
    """*page* must equal *generated*; COSTMODEL_UPDATE_DOCS=1 rewrites it instead."""
    if os.environ.get("COSTMODEL_UPDATE_DOCS"):
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(generated, encoding="utf-8")
        return
    current = page.read_text(encoding="utf-8") if page.exists() else ""
    assert current == generated, f"{_name(page)} is out of date; regenerate: {how}"


def test_model_reference_is_generated_from_the_registry(capsys):
    assert main(["algorithms", "--adaptations", "--markdown"]) == 0
    generated = capsys.readouterr().out
    _generated(ROOT / "docs" / "models.md", generated,
               "costmodel algorithms --adaptations --markdown > docs/models.md")


def test_command_reference_is_generated_from_the_cli():
    from costmodel.cli.reference import command_reference

    _generated(ROOT / "docs" / "reference" / "commands.md", command_reference(),
               "python -m costmodel.cli.reference > docs/reference/commands.md "
               "(or COSTMODEL_UPDATE_DOCS=1 pytest tests/test_docs.py)")
