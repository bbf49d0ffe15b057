"""The command-line contract of assignment create/report and check --assignment: files, JSON, exit codes,
and the secret never written anywhere."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.clirun import run, run_json

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "docs" / "examples"
SECRET = "course-secret-for-tests-0123456789"


@pytest.fixture
def course(tmp_path: Path) -> Path:
    (tmp_path / "roster.csv").write_text("id,name,email\nada,Ada,ada@example.edu\ngrace,Grace,grace@example.edu\n")
    (tmp_path / "course.key").write_text(SECRET + "\n")
    return tmp_path


def _create(capsys, course: Path, *extra: str, rc: int = 0) -> tuple[str, str]:
    return run(capsys, "assignment", "create", "--exercises", "ring-bytes,ring-allreduce-bytes",
               "--roster", str(course / "roster.csv"), "--secret-file", str(course / "course.key"),
               "--out", str(course / "hw1"), *extra, rc=rc)


def _check(capsys, course: Path, answers: Path, *extra: str, rc: int = 0) -> tuple[str, str]:
    return run(capsys, "check", str(answers), "--assignment", str(course / "hw1" / "assignment.toml"),
               "--secret-file", str(course / "course.key"), *extra, rc=rc)


def test_create_writes_every_file_and_never_the_secret(capsys, course: Path):
    out, _ = _create(capsys, course, "--title", "Homework 1", "--points", "ring-bytes:sent=2", "--json")
    data = json.loads(out)
    assert data["id"] == "hw1" and data["title"] == "Homework 1" and data["max_score"] == 5
    assert data["bank"].startswith("sha256:") and data["files"] == 7
    assert [k["expected"] for k in data["keys"]["ada"]][:1] and set(data["keys"]) == {"ada", "grace"}
    written = sorted(p.relative_to(course / "hw1").as_posix() for p in (course / "hw1").rglob("*") if p.is_file())
    assert written == ["answers/ada.toml", "answers/grace.toml", "assignment.toml", "keys/ada.md",
                       "keys/grace.md", "sheets/ada.md", "sheets/grace.md"]
    texts = [out] + [p.read_text() for p in (course / "hw1").rglob("*") if p.is_file()]
    for text in texts:
        assert SECRET not in text and SECRET[:16] not in text
    template = (course / "hw1" / "answers" / "ada.toml").read_text()
    assert template.count("[[answer]]") == 4 and 'name = "sent"' in template and 'student = "ada"' in template
    # the template is a valid answers file: checked as it is, every question scores 0 of its points
    checked = json.loads(_check(capsys, course, course / "hw1" / "answers" / "ada.toml", "--student", "ada",
                                "--json")[0])
    assert (checked["score"], checked["max_score"], len(checked["results"])) == (0, 5, 4)


def test_create_refuses_to_overwrite_without_force(capsys, course: Path):
    _create(capsys, course)
    _, err = _create(capsys, course, rc=2)
    assert err.startswith("error: ") and "exists; pass --force" in err and err.count("\n") == 1
    _create(capsys, course, "--force")


@pytest.mark.parametrize(("args", "message"), [
    (("--exercises", "no-such-exercise"), "unknown exercise 'no-such-exercise'"),
    (("--exercises", "ring-bytes,ring-bytes"), "named twice"),
    (("--points", "ring-bytes:nope=1"), "not a question of this assignment"),
    (("--id", "../x"), "assignment id '../x'"),
])
def test_create_errors_are_one_line(capsys, course: Path, args, message):
    argv = ["assignment", "create", "--exercises", "ring-bytes", "--roster", str(course / "roster.csv"),
            "--secret-file", str(course / "course.key"), "--out", str(course / "hw1")]
    index = argv.index(args[0]) if args[0] in argv else len(argv)
    argv[index:index + (2 if args[0] in argv else 0)] = list(args)
    _, err = run(capsys, *argv, rc=2)
    assert message in err and err.count("\n") == 1
    assert not (course / "hw1" / "assignment.toml").exists()


def test_create_refuses_a_short_secret_and_a_bad_roster(capsys, course: Path):
    (course / "course.key").write_text("short\n")
    _, err = _create(capsys, course, rc=2)
    assert "fewer than 16" in err and "head -c 32 /dev/urandom | base64 > course.key" in err
    (course / "course.key").write_text(SECRET)
    (course / "roster.csv").write_text("id\nada\nada\n")
    _, err = _create(capsys, course, rc=2)
    assert err == f"error: {course / 'roster.csv'}:3: student 'ada' is also on line 2\n"


def _answers(course: Path, student: str, right: set[str], capsys) -> Path:
    made = json.loads(_create(capsys, course, "--force", "--json")[0])
    lines = []
    for key in made["keys"][student]:
        value = key["expected"] if key["name"] in right else "1 MB"
        lines += ["[[answer]]", f'exercise = "{key["exercise"]}"', f'name = "{key["name"]}"', f'value = "{value}"', ""]
    path = course / f"{student}.toml"
    path.write_text("\n".join(lines))
    return path


def test_check_grades_the_named_students_variant(capsys, course: Path):
    path = _answers(course, "ada", {"rounds", "chunk"}, capsys)
    data = json.loads(_check(capsys, course, path, "--student", "ada", "--json")[0])
    assert (data["assignment"], data["student"], data["score"], data["max_score"]) == ("hw1", "ada", 2, 4)
    assert [r["correct"] for r in data["results"]] == [True, False, True, False]
    assert data["notes"] == ["graded for 'ada', named by --student on the command line"]
    assert data["student_from"] == "--student on the command line"
    results = json.loads(_check(capsys, course, path, "--student", "ada", "--gradescope")[0])
    assert "graded for 'ada', named by --student on the command line" in results["output"].splitlines()
    assert all(r["seed"] is None for r in data["results"])
    other = json.loads(_check(capsys, course, path, "--student", "grace", "--json")[0])
    assert other["score"] < 2  # a classmate's file does not carry its numbers over


def test_check_by_gradescope_metadata_email_and_sid(capsys, course: Path):
    path = _answers(course, "grace", {"rounds", "chunk"}, capsys)
    meta = course / "submission_metadata.json"
    meta.write_text(json.dumps({"users": [{"email": "Grace@Example.edu", "sid": "", "name": "ada"}]}))
    data = json.loads(_check(capsys, course, path, "--metadata", str(meta), "--gradescope")[0])
    assert (data["score"], data["max_score"]) == (2, 4)
    meta.write_text(json.dumps({"users": [{"sid": "grace"}]}))  # no email: the sid alone
    data = json.loads(_check(capsys, course, path, "--metadata", str(meta), "--json")[0])
    assert data["score"] == 2 and data["student_from"].startswith("Gradescope's metadata (sid")


@pytest.mark.parametrize(("user", "message"), [
    ({"email": "grace@example.edu", "sid": "ada"},
     "the submitter's sid 'ada' names student 'ada' but their email 'grace@example.edu' names student 'grace'"),
    ({"email": "x@y", "sid": "ada"},
     "the submitter's sid 'ada' names student 'ada', whose roster email is not the submitter's email 'x@y'"),
    ({"email": "x@y", "sid": "nobody"}, "no submitter is on the roster"),
])
def test_forged_gradescope_identity_is_refused(capsys, course: Path, user, message):
    """A student can edit their sid on Gradescope, not the email it verified: a forged sid and a
    classmate's file score nothing, with one error: line saying why."""
    path = _answers(course, "ada", {"rounds", "sent", "chunk"}, capsys)
    meta = course / "submission_metadata.json"
    meta.write_text(json.dumps({"users": [user]}))
    _, err = _check(capsys, course, path, "--metadata", str(meta), rc=2)
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    out, err = _check(capsys, course, path, "--metadata", str(meta), "--gradescope", rc=2)
    data = json.loads(out)
    assert data["score"] == 0 and "matched to one student of the roster" in data["output"]


@pytest.mark.parametrize("content", [b"\xef\xbb\xbf[[answer", b"\xff\xfe binary", b"", b"[[answer]]\nexercise = 3\n",
                                     b"a = " + b"[" * 5000 + b"]" * 5000])
def test_gradescope_results_are_always_valid(capsys, course: Path, content: bytes):
    _create(capsys, course)
    bad = course / "answers.toml"
    bad.write_bytes(content)
    out, err = _check(capsys, course, bad, "--student", "ada", "--gradescope", rc=1)
    data = json.loads(out)
    assert data["score"] == 0 and data["max_score"] == 4 and len(data["tests"]) == 4
    assert all(set(t) >= {"name", "score", "max_score", "output", "visibility"} for t in data["tests"])
    assert err.startswith("error: ")


def test_gradescope_results_for_a_missing_file_and_a_misconfigured_grader(capsys, course: Path):
    _create(capsys, course)
    out, _ = _check(capsys, course, course / "nowhere.toml", "--student", "ada", "--gradescope", rc=1)
    assert json.loads(out)["max_score"] == 4
    (course / "course.key").write_text("another-secret-0123456789")
    out, err = _check(capsys, course, course / "nowhere.toml", "--student", "ada", "--gradescope", rc=2)
    assert json.loads(out) == {"score": 0, "max_score": 4, "output": "This submission could not be graded: the "
                               "autograder is not set up right. Your instructor can see why in the autograder's output.",
                               "visibility": "visible", "stdout_visibility": "hidden", "tests": []}
    assert err == "error: the secret file is not the one assignment hw1 was created with\n"


@pytest.mark.parametrize(("args", "message"), [
    ((), "name the student with --student ID or Gradescope's --metadata"),
    (("--student", "eve"), "student 'eve' is not on the roster of assignment hw1"),
])
def test_check_needs_the_student(capsys, course: Path, args, message):
    _create(capsys, course)
    _, err = _check(capsys, course, course / "hw1" / "answers" / "ada.toml", *args, rc=2)
    assert message in err and err.count("\n") == 1


def test_check_options_need_the_assignment(capsys):
    _, err = run(capsys, "check", str(EXAMPLES / "answers.toml"), "--student", "ada", rc=2)
    assert err == "error: --student goes with --assignment\n"


def test_bank_change_is_an_error_unless_allowed(capsys, course: Path):
    mine = course / "mine.toml"
    mine.write_text("# my exercises\n")
    _create(capsys, course, "--bank", str(mine))
    answers = course / "hw1" / "answers" / "ada.toml"
    _check(capsys, course, answers, "--student", "ada", "--exercises", str(mine), "--json")
    mine.write_text("# my exercises, edited\n")
    _, err = _check(capsys, course, answers, "--student", "ada", "--exercises", str(mine), rc=2)
    assert "the exercise bank changed since assignment hw1 was created" in err and "--allow-bank-change" in err
    _check(capsys, course, answers, "--student", "ada", "--exercises", str(mine), "--allow-bank-change", "--json")
    _, err = run(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"), str(answers),
                 "--secret-file", str(course / "course.key"), "--bank", str(mine), rc=2)
    assert "bank changed" in err


def test_report_gradebook_rates_and_mistakes(capsys, course: Path):
    ada = _answers(course, "ada", {"rounds", "sent", "chunk"}, capsys)  # every sent right, chunk right
    submissions = course / "answers"
    submissions.mkdir()
    (submissions / "ada.toml").write_text(ada.read_text())
    gradebook = course / "gradebook.csv"
    data = run_json(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"),
                    str(submissions / "ada.toml"), "--secret-file", str(course / "course.key"),
                    "--out", str(gradebook))
    assert data["students"] == [
        {"student": "ada", "scores": {"ring-bytes:rounds": 1, "ring-bytes:sent": 1, "ring-allreduce-bytes:chunk": 1,
                                      "ring-allreduce-bytes:sent": 1}, "total": 4, "status": "graded"},
        {"student": "grace", "scores": {"ring-bytes:rounds": 0, "ring-bytes:sent": 0,
                                        "ring-allreduce-bytes:chunk": 0, "ring-allreduce-bytes:sent": 0},
         "total": 0, "status": "missing"}]
    assert [q["success_rate"] for q in data["questions"]] == [1, 1, 1, 1]
    rows = list(csv.reader(io.StringIO(gradebook.read_text())))
    assert rows[0] == ["student", "name", "email", "ring-bytes:rounds", "ring-bytes:sent",
                       "ring-allreduce-bytes:chunk", "ring-allreduce-bytes:sent", "total", "max_score", "status"]
    assert rows[1:] == [["ada", "Ada", "ada@example.edu", "1", "1", "1", "1", "4", "4", "graded"],
                        ["grace", "Grace", "grace@example.edu", "0", "0", "0", "0", "0", "4", "missing"]]
    _, err = run(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"), str(ada),
                 str(submissions / "ada.toml"), "--secret-file", str(course / "course.key"), "--student-from", "name",
                 "--out", str(gradebook), rc=2)
    assert "exists; pass --force" in err


def test_report_by_file_name_or_trusted_field(capsys, course: Path):
    _create(capsys, course)
    template = course / "hw1" / "answers" / "ada.toml"
    renamed = course / "whatever.toml"
    renamed.write_text(template.read_text())
    args = ("assignment", "report", str(course / "hw1" / "assignment.toml"))
    _, err = run(capsys, *args, str(renamed), "--secret-file", str(course / "course.key"), rc=1)
    assert "whatever.toml: its name says 'whatever' but the file names student 'ada'; not graded" in err
    assert "1 file could not be read or attributed" in err
    data = run_json(capsys, *args, str(renamed), "--secret-file", str(course / "course.key"), "--student-from", "field")
    assert [s["status"] for s in data["students"]] == ["graded", "missing"]
    _, err = run(capsys, *args, str(template), str(renamed), "--secret-file", str(course / "course.key"),
                 "--student-from", "field", rc=2)
    assert "are both submissions of student 'ada'" in err


def test_report_counts_diagnosed_mistakes_and_unreadable_files(capsys, course: Path):
    made = json.loads(_create(capsys, course, "--json")[0])
    sent = next(k["expected"] for k in made["keys"]["ada"] if k["exercise"] == "ring-bytes" and k["name"] == "sent")
    mb = float(sent.removesuffix(" MB"))
    (course / "ada.toml").write_text(f'[[answer]]\nexercise = "ring-bytes"\nname = "sent"\nvalue = "{2 * mb} MB"\n')
    (course / "grace.toml").write_bytes(b"\xef\xbb\xbfnot toml")
    out, err = run(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"), str(course / "ada.toml"),
                   str(course / "grace.toml"), "--secret-file", str(course / "course.key"), "--json", rc=1)
    data = json.loads(out)
    assert data["problems"] == [{"file": str(course / "grace.toml"),
                                 "problem": "cannot be read: line 1: invalid TOML: expected '=' after a key in a "
                                            "key/value pair"}]
    assert data["complete"] is False
    assert SECRET not in out and SECRET not in err
    assert data["mistakes"] == [{"mistake": "factor-two", "answers": 1}]
    assert [s["status"] for s in data["students"]] == ["graded", "unreadable"]
    assert err.startswith("error: ") and "grace.toml" in err


def test_report_plot(capsys, course: Path):
    pytest.importorskip("matplotlib")
    _create(capsys, course)
    out, _ = run(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"),
                 str(course / "hw1" / "answers" / "ada.toml"), "--secret-file", str(course / "course.key"),
                 "--plot", str(course / "mistakes.png"))
    assert (course / "mistakes.png").read_bytes()[:4] == b"\x89PNG" and "wrote" in out


def test_docs_example_is_what_create_writes(capsys, tmp_path: Path):
    run(capsys, "assignment", "create", "--exercises", "ring-bytes,ring-allreduce-bytes", "--roster",
        str(EXAMPLES / "roster.csv"), "--secret-file", str(EXAMPLES / "course.key"), "--out", str(tmp_path / "hw1"),
        "--title", "Homework 1")
    shown = sorted(p.relative_to(EXAMPLES / "hw1").as_posix() for p in (EXAMPLES / "hw1").rglob("*") if p.is_file())
    assert shown == ["answers/ada.toml", "answers/alan.toml", "answers/grace.toml", "assignment.toml"]
    for path in shown:  # the sheets and keys are not kept under docs/ (every page there is in the site)
        assert (tmp_path / "hw1" / path).read_text() == (EXAMPLES / "hw1" / path).read_text(), (
            f"docs/examples/hw1/{path} is out of date (the bank changed?): copy it from the same command's --out")
    assert "EXAMPLE-SECRET" in (EXAMPLES / "course.key").read_text()


def test_gradescope_results_when_the_manifest_names_an_unknown_exercise(capsys, course: Path):
    _create(capsys, course)
    manifest = course / "hw1" / "assignment.toml"
    manifest.write_text(manifest.read_text().replace('exercise = "ring-allreduce-bytes"', 'exercise = "gone"'))
    out, err = _check(capsys, course, course / "hw1" / "answers" / "ada.toml", "--student", "ada", "--gradescope",
                      rc=2)
    assert json.loads(out)["max_score"] == 4 and json.loads(out)["score"] == 0
    assert err.startswith("error: unknown exercise 'gone'")


def test_report_lists_every_file_it_cannot_read_or_attribute(capsys, course: Path):
    """An unreadable file scores 0 and is listed; a file whose student = names someone else is listed
    and graded for no one; a file of no roster student is listed; the status is 1 unless
    --allow-incomplete."""
    _create(capsys, course)
    folder = course / "in"
    folder.mkdir()
    (folder / "ada.toml").write_text("[[answer\n")
    (folder / "grace.toml").write_text((course / "hw1" / "answers" / "ada.toml").read_text())
    (folder / "zoe.toml").write_text('[[answer]]\nexercise = "ring-bytes"\nname = "rounds"\nvalue = "3"\n')
    args = ("assignment", "report", str(course / "hw1" / "assignment.toml"), *sorted(map(str, folder.iterdir())),
            "--secret-file", str(course / "course.key"))
    out, err = run(capsys, *args, "--json", rc=1)
    data = json.loads(out)
    assert [(Path(p["file"]).name, p["problem"].split(";")[0].split(":")[0]) for p in data["problems"]] == [
        ("ada.toml", "cannot be read"), ("grace.toml", "its name says 'grace' but the file names student 'ada'"),
        ("zoe.toml", "student 'zoe' is not on the roster of assignment hw1")]
    assert [s["status"] for s in data["students"]] == ["unreadable", "missing"]
    assert data["student_from"] == "the file's name (answers/ID.toml)"
    assert err.count("error: ") == 4 and "pass --allow-incomplete" in err
    out, err = run(capsys, *args, "--allow-incomplete", rc=0)
    assert "its name says 'grace'" in out and "error:" not in err and err.count("warning: ") == 3


def test_a_tolerance_edited_in_the_manifest_applies(capsys, course: Path):
    """The manifest is the one source of tolerances and points: an edit applies, or is refused with why."""
    made = json.loads(_create(capsys, course, "--json")[0])
    sent = next(k["expected"] for k in made["keys"]["ada"] if k["exercise"] == "ring-bytes" and k["name"] == "sent")
    off = float(sent.removesuffix(" MB")) * 1.05  # 5 % off: wrong at the bank's 1 %
    answers = course / "ada.toml"
    answers.write_text(f'[[answer]]\nexercise = "ring-bytes"\nname = "sent"\nvalue = "{off} MB"\n')
    manifest = course / "hw1" / "assignment.toml"
    text = manifest.read_text()
    assert text.count('tolerance = "rtol 0.01"') == 3 and text.count('tolerance = "exact"') == 1

    def sent_right() -> bool:
        data = json.loads(_check(capsys, course, answers, "--student", "ada", "--json")[0])
        return next(r for r in data["results"] if r["exercise"] == "ring-bytes" and r["name"] == "sent")["correct"]

    assert not sent_right()
    manifest.write_text(text.replace('tolerance = "rtol 0.01"', 'tolerance = "rtol 0.1"', 2))
    assert sent_right()
    manifest.write_text(text.replace('tolerance = "rtol 0.01"', 'tolerance = "rtol 0.01, atol 200"', 2))
    assert sent_right()
    manifest.write_text(text.replace('tolerance = "rtol 0.01"', 'tolerance = "3 significant figures"', 2))
    assert not sent_right()
    manifest.write_text(text.replace('tolerance = "rtol 0.01"', 'tolerance = "about right"', 2))
    _, err = _check(capsys, course, answers, "--student", "ada", rc=2)
    assert "question ring-bytes: sent: tolerance 'about right' is not exact" in err
    manifest.write_text(text.replace('tolerance = "exact"', 'tolerance = "rtol 0.5"', 1))
    _, err = _check(capsys, course, answers, "--student", "ada", rc=2)
    assert "question ring-bytes: rounds: tolerance 'rtol 0.5' cannot apply: a count is graded exactly" in err
    manifest.write_text(text.replace('unit = "MB"', 'unit = "GB"', 1))
    _, err = _check(capsys, course, answers, "--student", "ada", rc=2)
    assert "the manifest's unit 'GB' is not the exercise's 'MB'" in err


def test_gradebook_exports_for_canvas_and_moodle(capsys, course: Path):
    """One row per roster student, one column per question and the total, with names, ids and emails."""
    (course / "roster.csv").write_text("id,name,email\nada,\"Lovelace, Ada\",ada@example.edu\n"
                                       "grace,Grace Hopper,grace@example.edu\nmallory,=HYPERLINK(1),\n")
    made = json.loads(_create(capsys, course, "--title", "HW 1", "--points", "ring-bytes:sent=2", "--json")[0])
    key = {k["name"]: k["expected"] for k in made["keys"]["ada"] if k["exercise"] == "ring-bytes"}
    (course / "ada.toml").write_text(f'[[answer]]\nexercise = "ring-bytes"\nname = "sent"\nvalue = "{key["sent"]}"\n')
    args = ("assignment", "report", str(course / "hw1" / "assignment.toml"), str(course / "ada.toml"),
            "--secret-file", str(course / "course.key"), "--force")

    def export(form: str) -> list[list[str]]:
        run(capsys, *args, "--out", str(course / f"{form}.csv"), "--out-format", form)
        return list(csv.reader(io.StringIO((course / f"{form}.csv").read_text())))

    questions = ["ring-bytes:rounds", "ring-bytes:sent", "ring-allreduce-bytes:chunk", "ring-allreduce-bytes:sent"]
    canvas = export("canvas")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         *(f"HW 1: {q}" for q in questions), "HW 1: total"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "1", "2", "1", "1", "5"]
    assert canvas[2:] == [["Lovelace, Ada", "", "ada", "ada@example.edu", "", "0", "2", "0", "0", "2"],
                          ["Grace Hopper", "", "grace", "grace@example.edu", "", "0", "0", "0", "0", "0"],
                          ["'=HYPERLINK(1)", "", "mallory", "", "", "0", "0", "0", "0", "0"]]
    moodle = export("moodle")
    assert moodle[0] == ["ID number", "Email address", "First name", "Last name",
                         *(f"HW 1: {q}" for q in questions), "HW 1: total"]
    assert moodle[1:3] == [["ada", "ada@example.edu", "Ada", "Lovelace", "0", "2", "0", "0", "2"],
                           ["grace", "grace@example.edu", "Grace", "Hopper", "0", "0", "0", "0", "0"]]
    assert len(export("plain")) == 4
    _, err = run(capsys, *args, "--out", str(course / "x.csv"), "--out-format", "excel", rc=2)
    assert err == "error: --out-format 'excel': choose plain, canvas, moodle\n"


def test_override_records_a_manual_grade_and_the_report_shows_it(capsys, course: Path):
    _create(capsys, course)
    manifest = course / "hw1" / "assignment.toml"
    (course / "grace.toml").write_text('[[answer]]\nexercise = "ring-bytes"\nname = "rounds"\nvalue = "1"\n')
    base = ("assignment", "override", str(manifest))
    data = run_json(capsys, *base, "--student", "grace", "--question", "ring-bytes:sent", "--score", "1/2",
                    "--reason", "regraded: right method, arithmetic slip")
    assert data == {"student": "grace", "question": "ring-bytes:sent", "score": 0.5,
                    "why": "regraded: right method, arithmetic slip",
                    "file": str(course / "hw1" / "overrides.toml"), "overrides": 1}
    run(capsys, *base, "--student", "grace", "--question", "ring-bytes:sent", "--score", "1", "--reason", "appeal")
    run(capsys, *base, "--student", "ada", "--question", "ring-bytes:rounds", "--score", "1", "--reason", "ill")
    report = run_json(capsys, "assignment", "report", str(manifest), str(course / "grace.toml"),
                      "--secret-file", str(course / "course.key"))
    rows = {s["student"]: s for s in report["students"]}
    assert rows["grace"]["scores"]["ring-bytes:sent"] == 1 and rows["grace"]["total"] == 1  # the last one counts
    assert rows["grace"]["status"] == "graded, overridden"
    assert rows["ada"]["status"] == "missing, overridden" and rows["ada"]["total"] == 1
    assert report["overrides"] == [
        {"student": "grace", "question": "ring-bytes:sent", "score": 1, "why": "appeal"},
        {"student": "ada", "question": "ring-bytes:rounds", "score": 1, "why": "ill"}]
    out, _ = run(capsys, "assignment", "report", str(manifest), str(course / "grace.toml"),
                 "--secret-file", str(course / "course.key"))
    assert "appeal" in out and "graded, overridden" in out


@pytest.mark.parametrize(("args", "message"), [
    (("--student", "zoe", "--question", "ring-bytes:sent", "--score", "1", "--reason", "x"),
     "student 'zoe' is not on the roster"),
    (("--student", "ada", "--question", "ring-bytes:nope", "--score", "1", "--reason", "x"),
     "--question 'ring-bytes:nope' is not a question of assignment hw1"),
    (("--student", "ada", "--question", "ring-bytes:sent", "--score", "3", "--reason", "x"),
     "--score 3 is not from 0 to the question's 1 points"),
    (("--student", "ada", "--question", "ring-bytes:sent", "--score", "1", "--reason", " "),
     "--reason is missing"),
])
def test_override_refuses_what_cannot_apply(capsys, course: Path, args, message):
    _create(capsys, course)
    _, err = run(capsys, "assignment", "override", str(course / "hw1" / "assignment.toml"), *args, rc=2)
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not (course / "hw1" / "overrides.toml").exists()


def test_pooled_assignment_end_to_end(capsys, course: Path):
    pool = "{ring-bytes|recursive-doubling-bytes}"
    data = run_json(capsys, "assignment", "create", "--exercises", f"{pool},pipeline-bubble",
                    "--roster", str(course / "roster.csv"), "--secret-file", str(course / "course.key"),
                    "--out", str(course / "hw1"))
    assert data["groups"] == [["ring-bytes", "recursive-doubling-bytes"], ["pipeline-bubble"]]
    assert data["max_score"] == 4
    drawn = {s: e[0] for s, e in data["draws"].items()}
    files = []
    for student, key in data["keys"].items():
        assert {a["exercise"] for a in key} == {drawn[student], "pipeline-bubble"}
        lines = [f'student = "{student}"']
        for a in key:
            lines += ["[[answer]]", f'exercise = "{a["exercise"]}"', f'name = "{a["name"]}"',
                      f'value = "{a["expected"]}"']
        path = course / f"{student}.toml"
        path.write_text("\n".join(lines) + "\n")
        files.append(str(path))
    report = run_json(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"), *files,
                      "--secret-file", str(course / "course.key"))
    rows = {s["student"]: s for s in report["students"]}
    assert rows["ada"]["scores"] == {pool: 2, "pipeline-bubble": 2}
    assert rows["ada"]["drawn"] == {pool: drawn["ada"], "pipeline-bubble": "pipeline-bubble"}
    out, _ = run(capsys, "assignment", "report", str(course / "hw1" / "assignment.toml"), *files,
                 "--secret-file", str(course / "course.key"))
    assert "drew" in out and drawn["grace"] in out


@pytest.mark.parametrize(("exercises", "named"), [
    ("{ring-bytes|nope},pipeline-bubble", "'nope'"),
    ("{ring-bytes,pipeline-bubble", "'{ring-bytes'"),
    ("{ring-bytes},pipeline-bubble", "'{ring-bytes}'"),
])
def test_a_malformed_pool_is_one_error_line(capsys, course: Path, exercises: str, named: str):
    _, err = run(capsys, "assignment", "create", "--exercises", exercises, "--roster", str(course / "roster.csv"),
                 "--secret-file", str(course / "course.key"), "--out", str(course / "hw1"), rc=2)
    assert err.count("\n") == 1 and err.startswith("error: ") and named in err
    assert "exercises=" not in err


def test_deadline_and_two_late_submissions_from_gradescope_metadata(capsys, course: Path):
    (course / "roster.csv").write_text("id,name,email\nada,Ada,ada@example.edu\ngrace,Grace,grace@example.edu\n"
                                       "bob,Bob,bob@example.edu\ncy,Cy,cy@example.edu\n")
    data = run_json(capsys, "assignment", "create", "--exercises", "ring-bytes", "--roster",
                    str(course / "roster.csv"), "--secret-file", str(course / "course.key"), "--out",
                    str(course / "hw1"), "--deadline", "2026-12-10T23:59:00Z", "--late-penalty-per-day", "0.1")
    assert data["deadline"] == "2026-12-10T23:59:00Z" and data["late_penalty_per_day"] == 0.1
    assert "deadline = 2026-12-10T23:59:00Z" in (course / "hw1" / "assignment.toml").read_text()
    created = {"ada": "2026-12-10T15:00:00.000000-08:00",  # on time
               "grace": "2026-12-11T02:00:00.000000+00:00",  # late, 1 started day
               "bob": "2026-12-12T10:00:00.000000+00:00"}  # late, 2 started days; cy: no metadata
    files, metas = [], []
    for student, key in data["keys"].items():
        lines = [f'student = "{student}"']
        for a in key:
            lines += ["[[answer]]", f'exercise = "{a["exercise"]}"', f'name = "{a["name"]}"',
                      f'value = "{a["expected"]}"']
        (course / f"{student}.toml").write_text("\n".join(lines) + "\n")
        files.append(str(course / f"{student}.toml"))
        if student in created:
            meta = course / f"{student}.json"
            meta.write_text(json.dumps({"created_at": created[student],
                                        "users": [{"email": f"{student}@example.edu", "sid": student}]}))
            metas += ["--metadata", str(meta)]
    args = ("assignment", "report", str(course / "hw1" / "assignment.toml"), *files, "--secret-file",
            str(course / "course.key"), *metas)
    rows = {s["student"]: s for s in run_json(capsys, *args)["students"]}
    assert {s: (r["total"], r["status"]) for s, r in rows.items()} == {
        "ada": (2, "graded"), "grace": (1.8, "graded, late"), "bob": (1.6, "graded, late"), "cy": (2, "graded")}
    assert rows["cy"]["late"] == "no submission time, so no late policy applied"
    assert rows["bob"]["late"] == "late by 1 d 10 h 1 min: 2 days × 10 % taken, score × 0.8"
    out, _ = run(capsys, *args)
    assert "late by 2 h 1 min: 1 day × 10 % taken" in out
    _, err = run(capsys, "assignment", "create", "--exercises", "ring-bytes", "--roster", str(course / "roster.csv"),
                 "--secret-file", str(course / "course.key"), "--out", str(course / "hw2"),
                 "--late-penalty-per-day", "2", "--deadline", "2026-12-10T23:59:00Z", rc=2)
    assert err == "error: --late-penalty-per-day 2 is not a fraction of the score above 0, at most 1 (0.1: 10 % " \
        "per day)\n"


def test_check_on_gradescope_applies_the_late_policy(capsys, course: Path):
    keys = run_json(capsys, "assignment", "create", "--exercises", "ring-bytes", "--roster",
                    str(course / "roster.csv"), "--secret-file", str(course / "course.key"), "--out",
                    str(course / "hw1"), "--deadline", "2026-12-10T23:59:00Z", "--cutoff", "2026-12-12T23:59:00Z",
                    "--late-penalty-per-day", "0.25")["keys"]["grace"]
    answers = course / "grace.toml"
    answers.write_text("".join(f'[[answer]]\nexercise = "{a["exercise"]}"\nname = "{a["name"]}"\n'
                               f'value = "{a["expected"]}"\n' for a in keys))
    meta = course / "submission_metadata.json"
    for created, score, said in [("2026-12-11T00:30:00Z", 1.5, "late by 31 min: 1 day × 25 % taken, score × 0.75"),
                                 ("2026-12-13T00:00:00Z", 0, "after the cutoff 2026-12-12T23:59:00Z: scores 0"),
                                 ("2026-12-10T00:00:00Z", 2, "late policy: on time")]:
        meta.write_text(json.dumps({"created_at": created, "users": [{"email": "grace@example.edu", "sid": ""}]}))
        out, _ = _check(capsys, course, answers, "--metadata", str(meta), "--gradescope")
        result = json.loads(out)
        assert result["score"] == score and said in result["output"]
    data = run_json(capsys, "check", str(answers), "--assignment", str(course / "hw1" / "assignment.toml"),
                    "--secret-file", str(course / "course.key"), "--student", "grace")
    assert data["score"] == 2 and "late policy: no submission time, so no late policy applied" in data["notes"]
