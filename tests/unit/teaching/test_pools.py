"""Question pools: each student draws one exercise of each group, with the secret, and is graded on it."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from fractions import Fraction

import pytest

from costmodel.errors import InputError, ParseError
from costmodel.exercises import Submission, load_bank
from costmodel.exercises.assignment import (
    Student,
    create_assignment,
    grade_assignment,
    make_override,
    parse_exercises,
    pool_draw,
    read_manifest,
)
from costmodel.exercises.gradebook import class_report, grade_class

SECRET = b"test-secret-0123456789abcdef"
POOL = ("ring-bytes", "recursive-doubling-bytes")
CLASS = tuple(Student(f"s{i:02d}", f"Student {i}", f"s{i:02d}@example.edu") for i in range(60))


def _made(roster=CLASS, secret: bytes = SECRET):
    return create_assignment(load_bank(), [POOL, "pipeline-bubble"], roster, secret,
                             assignment_id="hw1", fingerprint="sha256:x")


def test_parse_exercises_groups_in_braces():
    assert parse_exercises("{ring-bytes|recursive-doubling-bytes},pipeline-bubble") == [POOL, "pipeline-bubble"]
    assert parse_exercises(" a , { b | c | d } ,e") == ["a", ("b", "c", "d"), "e"]
    for bad, named in [("{a|b", "'{a|b'"), ("{a},b", "'{a}'"), ("{a||b}", "'{a||b}'"), ("a|b", "'a|b'"),
                       ("{a|b}c", "'{a|b}'"), ("a}", "'a}'")]:
        with pytest.raises(InputError, match="exercise") as e:
            parse_exercises(bad)
        assert named in str(e.value)


def test_the_draw_is_the_hmac_seed_of_the_group_mod_its_size():
    message = json.dumps(["costmodel-assignment", "hw1", "ada", "pool:" + "|".join(POOL)]).encode()
    seed = int.from_bytes(hmac.new(SECRET, message, hashlib.sha256).digest()[:8], "big") >> 1
    assert pool_draw(SECRET, "hw1", "ada", POOL) == POOL[seed % 2]
    assert pool_draw(SECRET, "hw1", "ada", ("only",)) == "only"


def test_draws_are_deterministic_and_recorded_in_the_manifest():
    a, b = _made(), _made()
    assert a.files() == b.files()
    m = a.manifest
    assert m.pooled and m.groups == (POOL, ("pipeline-bubble",))
    for s in CLASS:
        assert m.drawn(s.id) == (pool_draw(SECRET, "hw1", s.id, POOL), "pipeline-bubble")
    back = read_manifest(m.to_toml(), path="assignment.toml")
    assert back == m
    assert back.max_score == 4  # one member of the pool (2 points) and pipeline-bubble (2 points)


def test_every_member_is_drawn_in_a_class_of_60():
    m = _made().manifest
    counts = Counter(m.drawn(s.id)[0] for s in CLASS)
    assert set(counts) == set(POOL)
    assert min(counts.values()) >= 20  # 60 fair draws of 2: fewer than 20 has probability < 0.01
    three = create_assignment(load_bank(), [("ring-bytes", "recursive-doubling-bytes", "recursive-halving-bytes")],
                              CLASS, SECRET, assignment_id="hw1", fingerprint="sha256:x").manifest
    assert set(Counter(three.drawn(s.id)[0] for s in CLASS)) == {"ring-bytes", "recursive-doubling-bytes",
                                                                  "recursive-halving-bytes"}


def test_sheets_keys_and_templates_show_the_drawn_exercise_only():
    made = _made()
    for f in made.students:
        mine, other = made.manifest.drawn(f.student.id)[0], next(p for p in POOL if p != made.manifest.drawn(
            f.student.id)[0])
        assert f'exercise = "{mine}"' in f.template and f'exercise = "{other}"' not in f.template
        assert {a["exercise"] for a in f.answers} == {mine, "pipeline-bubble"}


def test_a_malformed_manifest_draw_is_refused():
    text = _made(CLASS[:2]).manifest.to_toml()
    with pytest.raises(ParseError, match="does not name one member"):
        read_manifest(text.replace('exercises = ["ring-bytes"', 'exercises = ["pipeline-bubble"', 1)
                      .replace('exercises = ["recursive-doubling-bytes"', 'exercises = ["pipeline-bubble"', 1),
                      path="a.toml")


def test_unknown_member_and_unequal_points_are_named():
    with pytest.raises(InputError, match=r"in the group \{ring-bytes\|nope\}: unknown exercise 'nope'"):
        create_assignment(load_bank(), [("ring-bytes", "nope")], CLASS, SECRET, assignment_id="hw1",
                          fingerprint="sha256:x")
    with pytest.raises(InputError, match="worth the same"):
        create_assignment(load_bank(), [POOL], CLASS, SECRET, assignment_id="hw1", fingerprint="sha256:x",
                          points={("ring-bytes", "sent"): Fraction(3)})


def test_a_pooled_class_is_graded_end_to_end():
    made = _made()
    m = made.manifest
    keys = made.to_dict()["keys"]
    files = []
    for i, s in enumerate(CLASS):
        answers = [Submission(a["exercise"], a["expected"], name=a["name"]) for a in keys[s.id]]
        if i % 3 == 1:  # the other member of the pool answered: not this student's question
            other = next(p for p in POOL if p != m.drawn(s.id)[0])
            answers = [Submission(other, "1 MB", name="sent"), *answers[2:]]
        files.append((f"answers/{s.id}.toml", answers, None))
    book = grade_class(m, load_bank(), SECRET, files)
    rows = {student: (scores, total) for student, scores, total, _ in book.rows()}
    assert book.columns() == ["{ring-bytes|recursive-doubling-bytes}", "pipeline-bubble"]
    assert book.column_points() == [2, 2]
    for i, s in enumerate(CLASS):
        assert rows[s.id] == (([0, 2], 2) if i % 3 == 1 else ([2, 2], 4))
        assert book.drawn(s.id)["{ring-bytes|recursive-doubling-bytes}"] == m.drawn(s.id)[0]
    assert book.success() == [("{ring-bytes|recursive-doubling-bytes}", 40, 60), ("pipeline-bubble", 60, 60)]
    report = book.reports[CLASS[1].id]
    assert report is not None and any("is not a question of this assignment" in n for n in report.notes)
    assert any(n.startswith("exercises drawn for 's01'") for n in report.notes)
    csv = book.to_csv().splitlines()
    assert csv[0] == ("student,name,email,{ring-bytes|recursive-doubling-bytes},pipeline-bubble,total,"
                      "max_score,status,drawn")
    assert csv[2] == f"s01,Student 1,s01@example.edu,0,2,2,4,graded,{m.drawn('s01')[0]} pipeline-bubble"
    canvas = book.to_csv("canvas").splitlines()
    assert canvas[1] == "Points Possible,,,,,2,2,4"
    # an override of the drawn member's question applies; another member's question is refused
    drawn = m.drawn("s01")[0]
    o = make_override(m, "s01", f"{drawn}:sent", "1", "regraded by hand")
    with pytest.raises(InputError, match="is not a question"):
        make_override(m, "s01", f"{next(p for p in POOL if p != drawn)}:sent", "1", "x")
    again = class_report(m, book.reports, overrides=[o])
    assert next(r for r in again.rows() if r[0] == "s01")[1:] == ([1, 2], 3, "graded, overridden")


def test_grading_one_student_uses_their_draw():
    made = _made(CLASS[:4])
    for f in made.students:
        report = grade_assignment(made.manifest, load_bank(), SECRET, f.student.id,
                                  [Submission(a["exercise"], a["expected"], name=a["name"]) for a in f.answers])
        assert report.grades[0].submission.exercise == made.manifest.drawn(f.student.id)[0]
        assert sum(g.score for g in report.grades) == 4 == made.manifest.max_score
