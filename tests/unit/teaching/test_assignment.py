"""Assignments: secret variants per student, the roster, the manifest, and grading every question once."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.errors import InputError, ParseError
from costmodel.exercises import Submission, load_bank
from costmodel.exercises.assignment import (
    MIN_SECRET,
    Student,
    assignment_seed,
    bank_fingerprint,
    check_bank,
    check_secret,
    create_assignment,
    grade_assignment,
    parse_points,
    read_manifest,
    read_metadata,
    read_roster,
    read_secret,
)

SECRET = b"test-secret-0123456789abcdef"
ROSTER = (Student("ada", "Ada Lovelace", "ada@example.edu"), Student("bob", "", "Bob@Example.edu"))


def _made(secret: bytes = SECRET, **kw):
    return create_assignment(load_bank(), ["ring-bytes", "ring-allreduce-bytes"], ROSTER, secret,
                             assignment_id="hw1", fingerprint="sha256:x", **kw)


def test_the_seed_is_hmac_sha256_of_the_ids_keyed_by_the_secret():
    message = json.dumps(["costmodel-assignment", "hw1", "ada", "ring-bytes"]).encode()
    digest = hmac.new(SECRET, message, hashlib.sha256).digest()
    assert assignment_seed(SECRET, "hw1", "ada", "ring-bytes") == int.from_bytes(digest[:8], "big") >> 1
    seeds = {assignment_seed(SECRET, "hw1", f"s{i}", "ring-bytes") for i in range(200)}
    assert len(seeds) == 200 and all(0 <= s < 2**63 for s in seeds)


def test_same_secret_reproduces_another_secret_differs():
    a, b, c = _made(), _made(), _made(b"another-secret-0123456789")
    assert a.files() == b.files()
    seeds = [(assignment_seed(SECRET, "hw1", s.id, e), assignment_seed(b"another-secret-0123456789", "hw1", s.id, e))
             for s in ROSTER for e in ("ring-bytes", "ring-allreduce-bytes")]
    assert all(x != y for x, y in seeds)
    assert a.files()["keys/ada.md"] != c.files()["keys/ada.md"]
    assert a.files()["assignment.toml"] != c.files()["assignment.toml"]  # only the secret check differs
    assert a.files()["answers/ada.toml"] == c.files()["answers/ada.toml"]  # the template holds no number


def test_keys_are_the_public_variant_of_the_private_seed_recomputed_by_hand():
    made = _made()
    bank = load_bank()
    for files in made.students:
        seed = assignment_seed(SECRET, "hw1", files.student.id, "ring-bytes")
        variant = bank.get("ring-bytes").variant(seed)
        p = int(variant.shown["p"])
        n = Fraction(variant.values["n"])
        keys = {a["name"]: a["expected"] for a in files.answers if a["exercise"] == "ring-bytes"}
        assert keys["rounds"] == str(2 * (p - 1))  # reduce-scatter then all-gather: p-1 rounds each
        sent = 2 * Fraction(p - 1, p) * n / 10**6  # 2(p-1)/p · n, in MB
        assert float(keys["sent"].removesuffix(" MB")) == pytest.approx(float(sent), rel=1e-6)
        assert str(seed) not in files.sheet and str(seed) not in files.key and str(seed) not in files.template


def test_manifest_round_trip_and_points():
    made = _made(points=parse_points(["ring-bytes:sent=5/2"]))
    text = made.manifest.to_toml()
    back = read_manifest(text, path="assignment.toml")
    assert back == made.manifest
    assert back.max_score == Fraction(11, 2)
    assert [(q.exercise, q.name, q.points, q.tolerance, q.unit) for q in back.questions] == [
        ("ring-bytes", "rounds", 1, "exact", ""), ("ring-bytes", "sent", Fraction(5, 2), "rtol 0.01", "MB"),
        ("ring-allreduce-bytes", "chunk", 1, "rtol 0.01", "MB"), ("ring-allreduce-bytes", "sent", 1, "rtol 0.01", "MB")]
    with pytest.raises(InputError, match="not a question of this assignment"):
        _made(points=parse_points(["ring-bytes:chunk=2"]))
    for bad in ("ring-bytes=2", "ring-bytes:sent", "ring-bytes:sent=0", "ring-bytes:sent=-1", ":sent=1"):
        with pytest.raises(InputError):
            parse_points([bad])


@pytest.mark.parametrize(("content", "message"), [
    ("", "roster.csv:1: no header"),
    ("name,email\nada,a@x\n", "roster.csv:1: the header 'name,email' has no id column"),
    ("id\nada\nbob\nada\n", "roster.csv:4: student 'ada' is also on line 2"),
    ("id,name\nada,A\n,B\n", "roster.csv:3: empty student id"),
    ("id\n../etc\n", "roster.csv:2: student id '../etc' is not safe as a file name"),
    ("id\na/b\n", "roster.csv:2: student id 'a/b' is not safe"),
    ("id\n..\n", "roster.csv:2: student id '..' is not safe"),
    ("id\na\\b\n", "roster.csv:2: student id 'a\\\\b' is not safe"),
    ("id,email\na,x@y\nb,X@Y\n", "roster.csv:3: email 'X@Y' is also on line 2"),
    ("id\n", "roster.csv: no students"),
])
def test_roster_errors_name_file_and_line(content, message):
    with pytest.raises(ParseError) as info:
        read_roster(content, path="roster.csv")
    assert str(info.value).startswith(message)


def test_roster_reads_a_bom_extra_columns_and_blank_lines():
    students = read_roster("\ufeffEmail, ID ,name,section\nada@x.edu,ada,Ada,A\n\nbob@x.edu,bob,,B\n", path="r")
    assert students == (Student("ada", "Ada", "ada@x.edu"), Student("bob", "", "bob@x.edu"))


def test_secret_file(tmp_path: Path):
    key = tmp_path / "course.key"
    key.write_bytes(b"x" * (MIN_SECRET - 1) + b"\n")
    with pytest.raises(InputError, match=r"fewer than 16; make one with: head -c 32 /dev/urandom \| base64"):
        read_secret(key)
    key.write_bytes(b"  " + SECRET + b"\r\n")
    assert read_secret(key) == SECRET
    with pytest.raises(InputError, match="cannot read the secret file"):
        read_secret(tmp_path / "missing.key")
    if hasattr(os, "mkfifo"):  # a named pipe would wait for a writer forever: refused at once
        os.mkfifo(tmp_path / "pipe.key")
        with pytest.raises(InputError, match="cannot read the secret file: a FIFO"):
            read_secret(tmp_path / "pipe.key")
    manifest = _made().manifest
    check_secret(manifest, SECRET)
    with pytest.raises(InputError, match="not the one assignment hw1 was created with"):
        check_secret(manifest, b"another-secret-0123456789")


def test_bank_fingerprint_changes_with_any_byte(tmp_path: Path):
    mine = tmp_path / "mine.toml"
    mine.write_text("# my exercises\n")
    before = bank_fingerprint([mine])
    assert before == bank_fingerprint([mine]) != bank_fingerprint()
    mine.write_text("# my exercises.\n")
    after = bank_fingerprint([mine])
    assert after != before
    manifest = read_manifest(_made().manifest.to_toml().replace("sha256:x", before), path="a.toml")
    with pytest.raises(InputError, match="bank changed since assignment hw1 was created"):
        check_bank(manifest, after, allow_change=False)
    check_bank(manifest, after, allow_change=True)
    check_bank(manifest, before, allow_change=False)


def _grade(submissions, student="ada", **kw):
    return grade_assignment(_made().manifest, load_bank(), SECRET, student, submissions, **kw)


def _key(student="ada"):
    made = _made()
    return {(a["exercise"], a["name"]): a["expected"] for f in made.students if f.student.id == student
            for a in f.answers}


def test_every_question_once_missing_scores_zero_and_the_total_is_fixed():
    key = _key()
    right = [Submission("ring-bytes", key[("ring-bytes", "sent")], name="sent", line=3)]
    report = _grade(right * 50 + [Submission("tree-levels", "3", line=9)])
    assert (report.score, report.max_score) == (1, 4)
    assert [g.name for g in report.grades] == ["rounds", "sent", "chunk", "sent"]
    assert [g.correct for g in report.grades] == [False, True, False, False]
    assert report.grades[0].submission.value is None and report.grades[0].max_score == 1
    assert sum(1 for n in report.notes if n.startswith("line 3: second answer to ring-bytes: sent ignored")) == 49
    assert "line 9: tree-levels is not a question of this assignment; ignored" in report.notes


def test_the_first_of_duplicates_counts():
    key = _key()
    report = _grade([Submission("ring-bytes", "1 MB", name="sent", line=1),
                     Submission("ring-bytes", key[("ring-bytes", "sent")], name="sent", line=5)])
    assert report.grades[1].correct is False and report.score == 0
    assert report.notes == ("line 5: second answer to ring-bytes: sent ignored; the first (line 1) is graded",)


def test_seed_and_student_written_by_the_student_are_ignored_and_reported():
    key = _key("ada")
    everything = [Submission(e, v, name=n, seed=17, student="bob", line=2) for (e, n), v in key.items()]
    report = _grade(everything, student="ada")
    assert report.score == 4
    assert report.notes == ("the file names student 'bob'; it is graded for 'ada'",
                            "line 2: seed ignored: each student's numbers are fixed by the assignment")
    assert all(g.submission.seed is None for g in report.grades)
    assert _grade(everything, student="bob").score < 4  # ada's numbers are not bob's
    with pytest.raises(InputError, match="not on the roster"):
        _grade(everything, student="eve")


def test_a_seed_for_the_whole_file_is_ignored_and_reported_at_its_line():
    from costmodel.exercises.grading import read_answers

    key = _key("ada")
    entries = "".join(f'\n[[answer]]\nexercise = "{e}"\nname = "{n}"\nvalue = "{v}"\n' for (e, n), v in key.items())
    report = _grade(read_answers(f'student = "ada"\nseed = 3\n{entries}', path="a.toml"), student="ada")
    assert report.score == 4
    assert report.notes == ("line 2: seed ignored: each student's numbers are fixed by the assignment",)


def test_blank_malformed_and_unreadable_answers_score_zero():
    report = _grade([Submission("ring-bytes", "  ", name="sent"),
                     Submission("ring-bytes", None, name="rounds", line=4, error="value is missing"),
                     Submission("ring-allreduce-bytes", "12 parsecs", name="chunk")])
    assert report.score == 0 and report.max_score == 4
    assert report.grades[1].submission.value is None
    assert report.grades[2].error is not None
    assert "line 4: entry not graded: value is missing" in report.notes
    unreadable = _grade(None, unreadable="answers.toml:1: invalid TOML")
    assert (unreadable.score, unreadable.max_score, len(unreadable.grades)) == (0, 4, 4)
    gradescope = unreadable.to_gradescope()
    assert gradescope["max_score"] == 4 and "could not be read" in gradescope["output"]


def test_hide_expected_keeps_expected_values_out():
    key = _key()
    report = _grade([Submission("ring-bytes", "3 s", name="sent"),
                     Submission("ring-allreduce-bytes", "1 MB", name="sent")])
    shown = json.dumps(report.to_gradescope(hide_expected=True))
    for value in key.values():
        assert f" {value}" not in shown and f"expected {value}" not in shown
    assert "expected" in json.dumps(report.to_gradescope())


def test_metadata_matches_sid_or_email_never_the_name():
    manifest = _made().manifest

    def who(users):
        return read_metadata(json.dumps({"users": users}), manifest, path="m.json")

    assert who([{"email": "ADA@example.edu ", "sid": "", "name": "bob"}]) == "ada"
    assert who([{"email": "bob@example.edu"}]) == "bob"
    assert who([{"sid": "bob"}]) == "bob"
    for users, message in (([{"name": "ada"}], "no submitter is on the roster"),
                           ([{"email": "nobody@x", "sid": "bob"}], "whose roster email is not"),
                           ([{"email": "bob@example.edu", "sid": "ada"}], "names student 'ada' but their email"),
                           ([{"sid": "ada"}, {"sid": "bob"}], "several submitters"),
                           ([], "no users")):
        with pytest.raises(ParseError, match=message):
            who(users)
    with pytest.raises(ParseError, match="not JSON"):
        read_metadata("{", manifest, path="m.json")


def test_every_exercise_of_the_bank_grades_its_own_key_as_right():
    bank = load_bank()
    made = create_assignment(bank, [e.id for e in bank], ROSTER[:1], SECRET, assignment_id="all",
                             fingerprint="sha256:x")
    key = made.students[0].answers
    assert len(key) == len(made.manifest.questions) > len(bank)
    report = grade_assignment(made.manifest, bank, SECRET, "ada",
                              [Submission(a["exercise"], a["expected"], name=a["name"]) for a in key])
    assert [g.name for g in report.grades if not g.correct] == []
    assert report.score == report.max_score == made.manifest.max_score


def test_names_and_titles_stay_on_one_line():
    with pytest.raises(ParseError, match=r"roster\.csv:2: a name or email holds a line break"):
        read_roster('id,name\nada,"Ada\n[[answer]]"\n', path="roster.csv")
    with pytest.raises(InputError, match="the title is one line"):
        _made(title="Homework\nvalue = 1")
    with pytest.raises(InputError, match="the title is one line"):
        _made(title="x" * 201)


def test_an_answer_that_breaks_the_grader_scores_zero_and_the_rest_are_graded(monkeypatch):
    import costmodel.exercises.assignment as module

    key = _key()
    real_grade = module.grade_answer

    def fragile(exercise, submission, **kw):
        if submission.name == "rounds":
            raise TypeError("unsupported operand")
        return real_grade(exercise, submission, **kw)

    monkeypatch.setattr(module, "grade_answer", fragile)
    report = _grade([Submission(e, v, name=n) for (e, n), v in key.items()])
    assert (report.score, report.max_score) == (3, 4)
    assert report.grades[0].error == "cannot be graded (TypeError)"


def test_blank_template_entries_never_shadow_a_later_answer():
    """Answers appended below the unedited template are graded, and the note says which entry was."""
    key = _key()
    report = _grade([Submission("ring-bytes", "", name="sent", line=8),
                     Submission("ring-bytes", "  ", name="rounds", line=12),
                     Submission("ring-bytes", key[("ring-bytes", "sent")], name="sent", line=30),
                     Submission("ring-bytes", key[("ring-bytes", "rounds")], name="rounds", line=34),
                     Submission("ring-bytes", "1 MB", name="rounds", line=38)])
    assert [g.correct for g in report.grades[:2]] == [True, True]
    assert [g.submission.line for g in report.grades[:2]] == [34, 30]
    assert "line 30: ring-bytes: sent graded here; the blank entry at line 8 is ignored" in report.notes
    assert "line 38: second answer to ring-bytes: rounds ignored; the first (line 34) is graded" in report.notes


def test_blank_entries_never_shadow_a_later_answer_in_plain_check():
    from costmodel.exercises import check

    report = check([Submission("ring-bytes", "", seed=3, name="rounds", line=1),
                    Submission("ring-bytes", "10", seed=3, name="rounds", line=6)])
    assert len(report.grades) == 1 and report.grades[0].correct and report.grades[0].submission.line == 6
    assert report.notes == ("line 6: ring-bytes: rounds graded here; the blank entry at line 1 is ignored",)
