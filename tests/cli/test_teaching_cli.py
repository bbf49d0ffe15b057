"""The command-line contract of example, exercise and check: JSON keys, files written, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clirun import run, run_json


def test_example_list_contract(capsys):
    data = run_json(capsys, "example", "--list")
    assert data["examples"] and all({"name", "title", "source"} <= set(e) for e in data["examples"])
    assert "ring-bytes" in {e["name"] for e in data["examples"]}


def test_example_json_contract_and_set(capsys):
    data = run_json(capsys, "example", "ring-bytes", "--set", "p=8", "--set", "n=64MB")
    assert {"name", "title", "givens", "steps", "answer"} <= set(data)
    assert all({"text", "expression", "value", "unit"} <= set(s) for s in data["steps"])
    # 2·7/8·64 MB = 112 MB, in bytes
    assert data["answer"] == {"name": "sent", "label": "bytes each worker sends", "value": 112_000_000,
                              "unit": "B", "text": "112 MB"}
    assert {g["name"]: g["value"] for g in data["givens"]} == {"p": 8, "n": 64_000_000}


def test_example_renderings(capsys):
    out, _ = run(capsys, "example", "ring-bytes")
    assert "150 MB" in out and "2(p − 1)" in out
    md, _ = run(capsys, "example", "ring-bytes", "--markdown")
    assert md.startswith("## Ring all-reduce") and "| tensor size (n) | 100 MB |" in md


@pytest.mark.parametrize(("args", "message"), [
    (["example", "ring-byte"], "unknown example 'ring-byte'; did you mean 'ring-bytes'?"),
    (["example", "ring-bytes", "--set", "q=3"], "unknown given 'q' of example 'ring-bytes'"),
    (["example", "ring-bytes", "--set", "p"], "is not NAME=VALUE"),
    # the user's own text, quoted, is never read as a parameter; an example's givens are named as --set
    # names them, not as options of other commands
    (["example", "ring-bytes", "--set", "p="], "error: --set 'p=' is not NAME=VALUE; write e.g. --set p=32"),
    (["example", "pipeline-activations", "--set", "layers=30"],
     "error: layers=30 do not split evenly over stages=4; give a multiple"),
    (["example", "ring-bytes", "--set", "n=5 parsec"], "n: '5 parsec'"),
    (["example", "ring-bytes", "--set", "p=0"], "p: '0' is not positive"),
    (["exercise", "show", "ring-byte"], "did you mean 'ring-bytes'?"),
    (["exercise", "list", "--topic", "nope"], "unknown topic 'nope'"),
    (["check", "/nonexistent/answers.toml"], "/nonexistent/answers.toml: cannot read answers"),
    (["check", "x.toml", "--partial", "guessing=1"], "--partial 'guessing=1' is not MISTAKE=CREDIT"),
])
def test_errors_are_one_line(capsys, args, message):
    out, err = run(capsys, *args, rc=2)
    assert err.startswith("error: ") and message in err and err.count("\n") == 1 and not out


def test_exercise_list_and_show_contract(capsys):
    data = run_json(capsys, "exercise", "list")
    assert all(set(e) >= {"id", "topic", "title"} for e in data["exercises"])
    shown = run_json(capsys, "exercise", "show", "ring-bytes", "--seed", "17")
    assert {"id", "seed", "statement", "parameters", "answers"} <= set(shown)
    assert shown["id"] == "ring-bytes" and shown["seed"] == 17
    assert all({"name", "value", "unit"} <= set(a) for a in shown["answers"])
    # the value is in the unit given: p and n as the student reads them
    p, n = int(shown["parameters"]["p"]), float(shown["parameters"]["n"].split()[0])
    sent = next(a for a in shown["answers"] if a["name"] == "sent")
    assert sent["unit"] == "MB" and sent["value"] == pytest.approx(2 * (p - 1) / p * n)
    assert run_json(capsys, "exercise", "show", "ring-bytes", "--seed", "17") == shown  # deterministic


def test_exercise_show_hides_the_answer_unless_asked(capsys):
    out, _ = run(capsys, "exercise", "show", "ring-bytes")
    assert "______" in out and "112 MB" not in out
    out, _ = run(capsys, "exercise", "show", "ring-bytes", "--solution")
    assert "112 MB" in out


def test_sheet_writes_both_files_and_never_overwrites(capsys, tmp_path: Path):
    out, _ = run(capsys, "exercise", "sheet", "--seed", "5", "--out", str(tmp_path), "--id", "ring-bytes")
    sheet, key = tmp_path / "sheet-5.md", tmp_path / "key-5.md"
    assert sheet.exists() and key.exists() and "wrote" in out
    assert "______" in sheet.read_text() and "Worked solution" in key.read_text()
    before = key.read_text()
    _, err = run(capsys, "exercise", "sheet", "--seed", "5", "--out", str(tmp_path), rc=2)
    assert "exists; pass --force" in err and key.read_text() == before
    run(capsys, "exercise", "sheet", "--seed", "5", "--out", str(tmp_path), "--id", "ring-bytes", "--force")


ANSWERS = """
[[answer]]
exercise = "ring-bytes"
name = "sent"
value = "112 MB"

[[answer]]
exercise = "ring-bytes"
seed = 17
name = "sent"
value = "682 MB"
"""


def test_check_contract(capsys, tmp_path: Path):
    path = tmp_path / "a.toml"
    path.write_text(ANSWERS)
    data = run_json(capsys, "check", str(path))
    assert {"score", "max_score", "results"} <= set(data) and (data["score"], data["max_score"]) == (1, 2)
    right, wrong = data["results"]
    assert {"exercise", "seed", "name", "correct", "expected", "given", "diagnosis"} <= set(right)
    assert right["correct"] and not wrong["correct"]
    assert [d["mistake"] for d in wrong["diagnosis"]] == ["factor-two"]
    assert all({"mistake", "message"} <= set(d) for d in wrong["diagnosis"])
    table, _ = run(capsys, "check", str(path))
    assert "factor-two" in table and "1 of 2 correct" in table
    gradescope = json.loads(run(capsys, "check", str(path), "--gradescope")[0])
    assert gradescope["score"] == 1 and [t["status"] for t in gradescope["tests"]] == ["passed", "failed"]
    credit = run_json(capsys, "check", str(path), "--partial", "factor-two=0.5")
    assert credit["score"] == 1.5


def test_check_reports_bad_entries_and_grades_the_rest(capsys, tmp_path: Path):
    path = tmp_path / "a.toml"
    path.write_text(ANSWERS + '\n[[answer]]\nexercise = "nope"\nvalue = 1\n')
    out, err = run(capsys, "check", str(path), "--json", rc=1)
    data = json.loads(out)
    assert data["score"] == 1 and len(data["results"]) == 3 and "unknown exercise" in data["results"][2]["error"]
    assert err == f"error: {path}:13: unknown exercise 'nope'" + err[err.index(";"):]


@pytest.mark.parametrize("content", [b"\xff\xfe junk", b"[[answer]\n", b"", b"\x00" * 100])
def test_check_refuses_unreadable_files(capsys, tmp_path: Path, content: bytes):
    path = tmp_path / "junk.toml"
    path.write_bytes(content)
    _, err = run(capsys, "check", str(path), rc=2)
    assert err.startswith(f"error: {path}") and err.count("\n") == 1


def test_names_print_as_written_never_as_emoji(capsys, tmp_path):
    answers = tmp_path / "fire.toml"
    answers.write_text('student = ":fire:"\n[[answer]]\nexercise = "ring-bytes"\nseed = 17\nname = "rounds"\n'
                       "value = 62\n", encoding="utf-8")
    out, _ = run(capsys, "check", str(answers))
    assert ":fire:" in out and "\N{FIRE}" not in out
