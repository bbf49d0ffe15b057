"""Old names keep working for one release: the profile seed, and the exercises renamed from the seed texts.

One test per kind of alias: it still works, gives what the new name gives, and says once, on
stderr (and in --json), which name to use instead.
"""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest

from costmodel import load_profile
from costmodel.exercises import load_bank
from costmodel.renames import DeprecatedName
from tests.clirun import run, run_json

RENAMED_EXERCISES = {
    "dsgd-practice-4-ring-rounds": "ring-allreduce-rounds",
    "dsgd-practice-5-ring-bytes": "ring-allreduce-bytes",
    "dsgd-practice-6-rabenseifner": "rabenseifner-bytes-rounds",
    "dsgd-practice-7-startups": "small-message-startups",
    "dsgd-practice-3": "mix-then-step",
    "patterns-ring-lower-bound": "allreduce-lower-bound",
    "hierarchical-patterns": "hierarchical-nvlink-network",
}


def test_profile_seed_is_textbook_with_a_warning(capsys):
    args = ("cost", "allreduce", "ring", "-p", "16", "-n", "64MiB")
    old_out, err = run(capsys, *args, "--profile", "seed")
    assert err == "warning: profile 'seed' is deprecated; use 'textbook'\n"
    new_out, new_err = run(capsys, *args, "--profile", "textbook")
    assert new_err == "" and old_out == new_out
    data = run_json(capsys, *args, "--profile", "seed")
    assert data["deprecations"] == ["profile 'seed' is deprecated; use 'textbook'"]
    assert "deprecations" not in run_json(capsys, *args, "--profile", "textbook")


def test_profile_seed_from_python_is_a_future_warning():
    with pytest.warns(DeprecatedName, match="profile 'seed' is deprecated; use 'textbook'"):
        old = load_profile("seed")
    assert issubclass(DeprecatedName, FutureWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_profile("textbook") == old


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED_EXERCISES.items()))
def test_old_exercise_ids_show_the_same_variant_with_a_warning(capsys, old, new):
    shown, err = run(capsys, "exercise", "show", old, "--seed", "17", "--solution")
    assert err == f"warning: exercise {old!r} is deprecated; use {new!r}\n"
    assert shown == run(capsys, "exercise", "show", new, "--seed", "17", "--solution")[0]
    # the variants are those handed out under the old id: drawn with the old id's random stream
    exercise = load_bank().get(new)
    assert exercise.formerly == old
    rng = random.Random(f"{old}/17")
    assert exercise.variant(17).shown == {**(exercise.defaults or {}),
                                          **{p.name: p.draw(rng) for p in exercise.parameters}}
    assert old not in {row["id"] for row in run_json(capsys, "exercise", "list")["exercises"]}


def test_an_answers_file_with_an_old_id_still_grades(capsys, tmp_path: Path):
    bank = load_bank()
    expected = bank.get("ring-allreduce-rounds").variant(5).expected("rounds")
    answers = tmp_path / "answers.toml"
    answers.write_text(f'[[answer]]\nexercise = "dsgd-practice-4-ring-rounds"\nseed = 5\nname = "rounds"\n'
                       f'value = {expected}\n\n[[answer]]\nexercise = "dsgd-practice-4-ring-rounds"\nseed = 6\n'
                       f'name = "rounds"\nvalue = 1\n')
    out, err = run(capsys, "check", str(answers), "--json")
    assert err == "warning: exercise 'dsgd-practice-4-ring-rounds' is deprecated; use 'ring-allreduce-rounds'\n"
    data = json.loads(out)
    assert [r["correct"] for r in data["results"]] == [True, False]
    assert data["score"] == 1 and data["deprecations"]
