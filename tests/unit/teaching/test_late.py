"""A deadline and a late policy in the manifest, applied from Gradescope's submission time."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from fractions import Fraction

import pytest

from costmodel.errors import ParseError
from costmodel.exercises import Submission, load_bank
from costmodel.exercises.assignment import (
    Student,
    create_assignment,
    late_policy,
    read_manifest,
    submission_time,
)
from costmodel.exercises.gradebook import grade_class

SECRET = b"test-secret-0123456789abcdef"
ROSTER = tuple(Student(s, s.title(), f"{s}@example.edu") for s in ("ada", "bob", "cy", "dee"))
DEADLINE = datetime(2026, 12, 10, 23, 59, tzinfo=timezone.utc)


def _manifest(**policy):
    made = create_assignment(load_bank(), ["ring-bytes"], ROSTER, SECRET, assignment_id="hw1",
                             fingerprint="sha256:x")
    text = made.manifest.to_toml().replace(
        'secret_check = ', "".join(f"{k} = {v}\n" for k, v in policy.items()) + "secret_check = ")
    return made, read_manifest(text, path="assignment.toml")


def test_the_policy_is_read_back_and_written_again():
    _, m = _manifest(deadline="2026-12-10T23:59:00Z", late_penalty_per_day="0.1")
    assert m.deadline == DEADLINE and m.late_penalty_per_day == Fraction(1, 10) and m.cutoff is None
    assert read_manifest(m.to_toml(), path="a.toml") == m
    _, c = _manifest(deadline="2026-12-10T23:59:00Z", cutoff='"2026-12-12T23:59:00+01:00"')
    assert c.cutoff == datetime(2026, 12, 12, 22, 59, tzinfo=timezone.utc)


@pytest.mark.parametrize(("policy", "match"), [
    ({"deadline": "2026-12-10T23:59:00"}, "no offset"),
    ({"deadline": '"tomorrow"'}, "not a date-time"),
    ({"late_penalty_per_day": "0.1"}, "needs a deadline"),
    ({"deadline": "2026-12-10T23:59:00Z", "late_penalty_per_day": "-1"}, "above 0"),
    ({"deadline": "2026-12-10T23:59:00Z", "late_penalty_per_day": "2"}, "at most 1"),
    ({"deadline": "2026-12-10T23:59:00Z", "cutoff": "2026-12-09T23:59:00Z"}, "before the deadline"),
])
def test_a_bad_policy_is_one_clear_error(policy, match):
    with pytest.raises(ParseError, match=match):
        _manifest(**policy)


def test_per_day_penalty_per_started_day_never_below_zero():
    _, m = _manifest(deadline="2026-12-10T23:59:00Z", late_penalty_per_day="0.1")
    at = [DEADLINE, DEADLINE + timedelta(seconds=1), DEADLINE + timedelta(days=1),
          DEADLINE + timedelta(days=1, seconds=1), DEADLINE + timedelta(days=30)]
    assert [late_policy(m, t)[0] for t in at] == [1, Fraction(9, 10), Fraction(9, 10), Fraction(4, 5), 0]
    assert late_policy(m, None) == (1, "no submission time, so no late policy applied")
    assert late_policy(m, DEADLINE)[1] == "on time"
    assert late_policy(m, DEADLINE + timedelta(hours=25))[1] == \
        "late by 1 d 1 h: 2 days × 10 % taken, score × 0.8"


def test_cutoff_scores_zero_after_it():
    _, m = _manifest(deadline="2026-12-10T23:59:00Z", cutoff="2026-12-12T23:59:00Z")
    assert late_policy(m, DEADLINE + timedelta(days=1))[0] == 1
    factor, note = late_policy(m, DEADLINE + timedelta(days=2, minutes=1))
    assert factor == 0 and note == "late by 2 d 1 min, after the cutoff 2026-12-12T23:59:00Z: scores 0"


def test_submission_time_is_gradescopes_created_at():
    meta = {"created_at": "2026-12-11T10:00:00.000000-08:00", "users": []}
    assert submission_time(json.dumps(meta), path="m.json") == datetime(2026, 12, 11, 18, tzinfo=timezone.utc)
    assert submission_time("{}", path="m.json") is None
    with pytest.raises(ParseError, match="created_at"):
        submission_time('{"created_at": "soon"}', path="m.json")


def test_two_late_submissions_in_a_graded_class():
    made, m = _manifest(deadline="2026-12-10T23:59:00Z", late_penalty_per_day="0.1")
    keys = made.to_dict()["keys"]
    files = [(f"answers/{s}.toml", [Submission(a["exercise"], a["expected"], name=a["name"]) for a in keys[s]],
              None) for s in ("ada", "bob", "cy", "dee")]
    times = {"ada": DEADLINE - timedelta(hours=1), "bob": DEADLINE + timedelta(hours=5),
             "cy": DEADLINE + timedelta(days=2, hours=1), "dee": None}
    book = grade_class(m, load_bank(), SECRET, files, submitted=times)
    rows = {s: (total, status) for s, _, total, status in book.rows()}
    assert rows == {"ada": (2, "graded"), "bob": (Fraction(9, 5), "graded, late"),
                    "cy": (Fraction(7, 5), "graded, late"), "dee": (2, "graded")}
    assert book.late_note("dee") == "no submission time, so no late policy applied"
    csv = book.to_csv().splitlines()
    assert csv[0].endswith("total,max_score,status,late")
    assert csv[2] == "bob,Bob,bob@example.edu,1,1,1.8,2,\"graded, late\",\"late by 5 h: 1 day × 10 % taken, " \
        "score × 0.9\""
    assert book.to_csv("canvas").splitlines()[3:5] == ["Bob,,bob,bob@example.edu,,1,1,1.8", "Cy,,cy,cy@example.edu,,1,1,1.4"]
    data = book.to_dict()["students"]
    assert data[0]["late"] == "on time"
    # without a deadline nothing changes and nothing is said
    plain = grade_class(replace(m, deadline=None, late_penalty_per_day=None), load_bank(), SECRET, files,
                        submitted=times)
    assert [t for _, _, t, _ in plain.rows()] == [2, 2, 2, 2] and "late" not in plain.to_csv().splitlines()[0]
