"""Shell completion, and a help text with an example for every command."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from costmodel.cli import main
from tests.examples import all_leaf_commands


@pytest.mark.parametrize(("path", "command"), all_leaf_commands(),
                         ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_every_command_has_a_summary_and_an_example(path, command):
    text = command.help or ""
    assert text.strip().splitlines()[0].endswith("."), f"{' '.join(path)}: the first line is its summary"
    assert "Example: costmodel " in text or "Example: eval" in text or "Example (" in text, " ".join(path)


def test_completion_script(capsys):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "_costmodel_completion" in script and "_COSTMODEL_COMPLETE" in script


def test_unknown_shell(capsys):
    assert main(["completion", "tcsh"]) == 2
    assert "unknown shell 'tcsh'; choose from bash" in capsys.readouterr().err


def _complete(words: str) -> list[str]:
    env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1),
           "_COSTMODEL_COMPLETE": "complete_bash"}
    done = subprocess.run([sys.executable, "-m", "costmodel"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_answers_commands_and_subcommands():
    assert _complete("costmodel cal") == ["calibrate"]
    assert _complete("costmodel calibrate f") == ["fit"]
    assert "exercise" in _complete("costmodel ex")


def test_a_misspelled_command_gets_a_suggestion(capsys):
    assert main(["cots"]) == 2
    assert "Did you mean 'cost'?" in capsys.readouterr().err
