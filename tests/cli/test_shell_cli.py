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


def _complete_next(words: str) -> list[str]:
    """Completions for a new word after *words* (the cursor after a space)."""
    env = {**os.environ, "COMP_WORDS": words + " ", "COMP_CWORD": str(len(words.split())),
           "_COSTMODEL_COMPLETE": "complete_bash"}
    done = subprocess.run([sys.executable, "-m", "costmodel"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_answers_values():
    from costmodel.collectives._registry import COLLECTIVES
    from costmodel.consensus.graphs import GRAPHS
    from costmodel.pipeline.orders import SCHEDULES

    assert _complete("costmodel cost all") == ["allreduce", "allgather", "alltoall"]
    assert _complete_next("costmodel formula") == list(COLLECTIVES)
    # the algorithms of the collective typed; cost and formula take the hierarchical all-reduces, best not
    assert _complete_next("costmodel cost broadcast") == ["binomial", "scatter-allgather",
                                                          "scatter-recursive-doubling", "pipelined-chain"]
    assert _complete("costmodel cost allreduce hi") == ["hierarchical", "hierarchical-reduce-bcast"]
    assert _complete("costmodel formula allreduce hi") == ["hierarchical", "hierarchical-reduce-bcast"]
    assert _complete("costmodel best allreduce -p 4 hi") == []
    assert _complete_next("costmodel crossover alltoall pairwise") == ["pairwise", "bruck"]
    assert _complete("costmodel cost allreduce -p 4 -n 1MB --alpha 5us r") == ["ring", "recursive-doubling",
                                                                             "rabenseifner"]
    assert "nvlink4" in _complete_next("costmodel best allreduce -p 8 --profile")
    assert "crossover-rd-rab" in _complete_next("costmodel example")
    assert _complete("costmodel exercise show allreduce-s") == ["allreduce-sum"]
    assert _complete_next("costmodel consensus") == list(GRAPHS)
    assert _complete("costmodel plot consensus ring,hy") == ["ring,hypercube"]
    assert _complete_next("costmodel bubble -P 4 -m 8 --schedule") == list(SCHEDULES)
    assert _complete("costmodel completion f") == ["fish"]


def test_completion_lists_load_only_when_asked():
    code = ("import sys\nfrom costmodel.cli import main\n"
            "main(['cost', 'allreduce', '-p', '4', '-n', '1MB', '--alpha', '5us', '--beta', '1ns/B', '--json'])\n"
            "print(sorted(m for m in ('costmodel.examples', 'costmodel.exercises.bank', 'costmodel.profiles',\n"
            "      'costmodel.consensus.graphs', 'costmodel.collectives.hierarchical') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_misspelled_command_gets_a_suggestion(capsys):
    assert main(["cots"]) == 2
    assert "Did you mean 'cost'?" in capsys.readouterr().err
