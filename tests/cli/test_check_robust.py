"""No answer can crash, hang or sink an answers file: each is graded in isolation, in every output mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clirun import run

ROUNDS_RIGHT = '\n[[answer]]\nexercise = "ring-bytes"\nname = "rounds"\nvalue = 14\n'


def _file(tmp_path: Path, exercise: str, name: str, value: str) -> Path:
    path = tmp_path / "answers.toml"
    path.write_text(f'[[answer]]\nexercise = "{exercise}"\nname = "{name}"\nvalue = {value}\n' + ROUNDS_RIGHT,
                    encoding="utf-8")
    return path


BAD_ANSWERS = [  # (exercise, answer, TOML value, the error reported for it)
    ("ring-bytes", "sent", "1.7e308", "1.7e+308 is too large; numbers must be at most 1e30"),
    ("ring-bytes", "sent", "-1.7e308", "-1.7e+308 is too large; numbers must be at most 1e30"),
    ("cost-formula", "time", '"log2(0)*alpha"', "log2(0) is undefined"),
    ("cost-formula", "time", '"ln(2 - 2) * n"', "ln(0) is undefined"),
    ("cost-formula", "time", '"alpha / (p - p)"', "it divides by zero"),
    ("cost-formula", "time", '"((((n+alpha+beta+p)^64)^64)^64)^64"', "its degree is above 64"),
    ("cost-formula", "time", '"(p+n)^40 * (alpha+beta)^40"', "its degree is above 64"),
]


@pytest.mark.parametrize("case", BAD_ANSWERS, ids=[c[2] for c in BAD_ANSWERS])
def test_a_bad_answer_scores_zero_and_the_others_are_graded(capsys, tmp_path, case):
    exercise, name, value, message = case
    path = _file(tmp_path, exercise, name, value)
    out, err = run(capsys, "check", str(path), "--json", rc=1)
    data = json.loads(out)
    first, second = data["results"]
    assert message in first["error"] and first["score"] == 0 and first["max_score"] == 1
    assert second["correct"] is True and (data["score"], data["max_score"]) == (1, 2)
    assert err.count("\n") == 1 and err.startswith(f"error: {path}:1: ") and message in err
    table, _ = run(capsys, "check", str(path), rc=1)
    assert "1 of 2 correct · score 1 of 2" in table
    results = json.loads(run(capsys, "check", str(path), "--gradescope", rc=1)[0])
    assert results["score"] == 1 and [t["score"] for t in results["tests"]] == [0, 1]
    assert results["tests"][0]["output"].startswith("error: ") and message in results["tests"][0]["output"]


@pytest.mark.parametrize(("value", "what"), [
    ("1979-05-27", "1979-05-27 is a date"),
    ("1979-05-27T07:32:00Z", "1979-05-27T07:32:00Z is a date-time"),
    ("07:32:00", "07:32:00 is a time of day"),
    ("true", "true is a boolean"),
])
def test_a_toml_value_that_is_no_number_is_named_as_written(capsys, tmp_path, value, what):
    path = _file(tmp_path, "ring-bytes", "sent", value)
    out, err = run(capsys, "check", str(path), "--json", rc=1)
    first, second = json.loads(out)["results"]
    assert first["error"] == f'value {what}, not a number or a string such as "150 MB"'
    assert second["correct"] is True
    assert err == f"error: {path}:1: {first['error']}\n"


def test_a_value_of_two_lines_is_refused_and_shown_on_one_line(capsys, tmp_path):
    path = _file(tmp_path, "ring-bytes", "sent", '"341MB\\n342MB"')
    message = "value '341MB\\n342MB' holds a line break; write the answer on one line"
    out, err = run(capsys, "check", str(path), "--validate", rc=2)
    rows = out.splitlines()
    assert rows[1].split() == ["1", "ring-bytes", "sent", "341MB⏎342MB", "error:", *message.split()]
    assert rows[2].split()[:4] == ["6", "ring-bytes", "rounds", "14"] and len(rows) == 5
    assert err == f"error: {path}:1: {message}\n"
    table, err = run(capsys, "check", str(path), rc=1)
    assert "✗ 341MB⏎342MB" in table.splitlines()[1] and "14" in table.splitlines()[2] and message in err
    data = json.loads(run(capsys, "check", str(path), "--json", rc=1)[0])
    assert data["results"][0]["error"] == message and data["results"][0]["given"] == "341MB\n342MB"


def test_a_power_tower_is_refused_well_within_the_time_bound(tmp_path):
    """It ran for more than 300 s when it was expanded; refused from the parse tree, it takes a start-up."""
    path = _file(tmp_path, "cost-formula", "time", '"((((n+alpha+beta+p)^64)^64)^64)^64"')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    done = subprocess.run([sys.executable, "-m", "costmodel", "check", str(path), "--gradescope"],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 1 and json.loads(done.stdout)["score"] == 1


def test_the_largest_allowed_degree_is_graded(capsys, tmp_path):
    path = _file(tmp_path, "cost-formula", "time", '"(n+alpha+beta+p)^64"')
    data = json.loads(run(capsys, "check", str(path), "--json")[0])
    assert [r["correct"] for r in data["results"]] == [False, True] and "error" not in data["results"][0]


@pytest.mark.parametrize(("value", "message"), [('"log2(p - 2) * alpha"', "log2(-1) is undefined at p = 1"),
                                              ('"alpha / (p - 2)"', "it divides by zero at p = 2")])
def test_a_formula_undefined_at_a_small_p_of_the_domain_is_refused(capsys, tmp_path, value, message):
    # cost-formula's p is a power of two: 1 and 2 are in its domain, and the key is defined there
    path = _file(tmp_path, "cost-formula", "time", value)
    first, second = json.loads(run(capsys, "check", str(path), "--json", rc=1)[0])["results"]
    assert message in first["error"] and first["score"] == 0 and second["correct"]


def test_a_formula_undefined_outside_the_checked_points_is_graded_wrong(capsys, tmp_path):
    path = _file(tmp_path, "cost-formula", "time", '"sqrt(alpha - 1000)"')
    data = json.loads(run(capsys, "check", str(path), "--json")[0])
    assert [r["correct"] for r in data["results"]] == [False, True] and "error" not in data["results"][0]


def test_deep_nesting_is_one_error_naming_the_file_and_gradescope_still_gets_results(capsys, tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text('[[answer]]\nexercise = "ring-bytes"\nvalue = ' + "[" * 5000 + "]" * 5000 + "\n",
                    encoding="utf-8")
    for mode in ((), ("--json",)):
        out, err = run(capsys, "check", str(path), *mode, rc=2)
        assert out == "" and err == f"error: {path}: the data is nested too deeply (at most 32 levels)\n"
    out, err = run(capsys, "check", str(path), "--gradescope", rc=2)
    results = json.loads(out)
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith(f"error: {path}: the data is nested too deeply")
    assert err.count("\n") == 1


@pytest.mark.parametrize("content", [b"[[answer]\n", b"\xff\xfe", b"value = 1\n"])
def test_gradescope_gets_valid_results_for_any_unreadable_file(capsys, tmp_path, content):
    path = tmp_path / "bad.toml"
    path.write_bytes(content)
    out, err = run(capsys, "check", str(path), "--gradescope", rc=2)
    assert json.loads(out)["score"] == 0 and err.startswith(f"error: {path}")


def test_a_file_saved_with_a_byte_order_mark_is_read(capsys, tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'[[answer]]\nexercise = "ring-bytes"\nname = "sent"\nvalue = "112 MB"\n'
                     + ROUNDS_RIGHT.encode())
    data = json.loads(run(capsys, "check", str(path), "--json")[0])
    assert (data["score"], data["max_score"]) == (2, 2) and [r["line"] for r in data["results"]] == [1, 6]
    assert json.loads(run(capsys, "check", str(path), "--gradescope")[0])["score"] == 2


# -- exercise lint ---------------------------------------------------------------------------------

EXERCISE = """[[exercise]]
id = "my-ring"
topic = "rounds-and-bytes"
title = "Ring bytes"
example = "ring-bytes"
statement = "A ring all-reduce on {p} workers over {n}."

[exercise.parameters]
p = { choices = [4, 8, 16] }

[[exercise.answer]]
name = "sent"
unit = "MB"
"""


def test_lint_passes_a_clean_file(capsys, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(EXERCISE, encoding="utf-8")
    out, err = run(capsys, "exercise", "lint", str(path))
    assert out.splitlines()[1].split() == [str(path), "1", "0"] and err == ""
    data = json.loads(run(capsys, "exercise", "lint", str(path), "--json")[0])
    assert data == {"files": [{"path": str(path), "exercises": 1, "problems": []}], "problems": 0}


def test_lint_lists_every_problem_one_line_each_and_exits_1(capsys, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(EXERCISE.replace("{n}", "{size}").replace('"MB"', '"ms"')
                    + EXERCISE.replace("my-ring", "ring-bytes"), encoding="utf-8")
    out, err = run(capsys, "exercise", "lint", str(path), rc=1)
    assert out.splitlines()[1].split() == [str(path), "0", "3"]
    assert err.splitlines() == [
        f"error: {path}:1: exercise 'my-ring': the statement's {{size}} is not a given of example "
        "'ring-bytes' (n, p)",
        f"error: {path}:11: exercise 'my-ring': answer 'sent': unit 'ms' is a time, but the answer is a size "
        '(e.g. unit = "MB")',
        f"error: {path}: exercise id 'ring-bytes' is also defined in exercises/collectives.toml",
    ]


def test_lint_of_a_missing_file_exits_2(capsys, tmp_path):
    _, err = run(capsys, "exercise", "lint", str(tmp_path / "nope.toml"), rc=2)
    assert err == f"error: {tmp_path / 'nope.toml'}: cannot read exercises: No such file or directory\n"


# -- check --validate --------------------------------------------------------------------------------

VALIDATE = """[[answer]]
exercise = "ring-bytes"
seed = 17
name = "rounds"
value = 62

[[answer]]
exercise = "ring-bytes"
name = "sent"
value = "1,240 megabytes"

[[answer]]
exercise = "cost-formula"
name = "time"
value = "2(p − 1)α"

[[answer]]
exercise = "ring-bytes"
name = "sent"
value = 325.2
"""


def test_validate_shows_how_each_answer_reads_without_grading(capsys, tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text(VALIDATE, encoding="utf-8")
    data = json.loads(run(capsys, "check", str(path), "--validate", "--json")[0])
    assert data["valid"] is True and data["problems"] == 0
    assert [(a["line"], a["name"], a["read"]) for a in data["answers"]] == [
        (1, "rounds", "62"), (7, "sent", "1240 MB"), (12, "time", "alpha*(2*p - 2)"), (17, "sent", "325.2 MB")]
    assert all("correct" not in a and "expected" not in a for a in data["answers"])
    out, err = run(capsys, "check", str(path), "--validate")
    assert "all 4 answers read; nothing was graded" in out and err == ""


def test_validate_lists_every_problem_and_exits_2(capsys, tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text(VALIDATE.replace('"1,240 megabytes"', '"32,5 MB"').replace("325.2", '"5 ms"')
                    .replace('exercise = "cost-formula"', 'exercise = "cost-formulas"'), encoding="utf-8")
    out, err = run(capsys, "check", str(path), "--validate", rc=2)
    assert "3 of 4 answers cannot be read; nothing was graded" in out
    assert err.splitlines() == [
        f"error: {path}:7: '32,5 MB' has a decimal comma; write 32.5 MB (a comma only separates thousands, "
        "as in 1,240 MB)",
        f"error: {path}:12: unknown exercise 'cost-formulas'; did you mean 'cost-formula'?",
        f"error: {path}:17: 5 ms is a time; the answer is a size, in MB",
    ]


def test_validate_is_not_for_gradescope(capsys, tmp_path):
    path = tmp_path / "answers.toml"
    path.write_text(VALIDATE, encoding="utf-8")
    _, err = run(capsys, "check", str(path), "--validate", "--gradescope", rc=2)
    assert err == "error: --validate shows how a file reads; it cannot be combined with --gradescope\n"


def test_gradescope_gets_valid_results_for_a_bad_option_too(capsys, tmp_path):
    path = _file(tmp_path, "ring-bytes", "sent", '"112 MB"')
    out, err = run(capsys, "check", str(path), "--gradescope", "--partial", "guessing=1", rc=2)
    assert json.loads(out)["score"] == 0 and err.startswith("error: --partial 'guessing=1' is not MISTAKE=CREDIT")


@pytest.mark.parametrize("value", ["[/]", "[bold]341 MB", "[red]x[/red] 1 s"])
def test_an_answer_in_brackets_shows_as_typed(capsys, monkeypatch, tmp_path, value):
    """A table's cells are never read as rich markup: an answer that looks like a tag neither crashes the
    report nor loses its text (``[bold]341 MB`` would show as a right-looking ``341 MB``)."""
    from tests.clirun import run_text

    path = tmp_path / "answers.toml"
    path.write_text(f'[[answer]]\nexercise = "ring-bytes"\nseed = 17\nname = "sent"\nvalue = "{value}"\n',
                    encoding="utf-8")
    out, _ = run_text(capsys, monkeypatch, "check", str(path), columns=200, rc=1)
    assert f"✗ {value}" in out
    out, _ = run_text(capsys, monkeypatch, "check", str(path), "--validate", columns=200, rc=2)
    assert value in out


def test_a_path_in_brackets_shows_as_typed(capsys, monkeypatch, tmp_path):
    from tests.clirun import run_text

    folder = tmp_path / "run[1]"
    folder.mkdir()
    bad = folder / "[b].txt"
    bad.write_text("[[nothing\n", encoding="utf-8")
    out, _ = run_text(capsys, monkeypatch, "exercise", "lint", str(bad), columns=300, rc=1)
    assert str(bad) in out
