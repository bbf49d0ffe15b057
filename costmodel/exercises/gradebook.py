"""A class's grades on one assignment: the gradebook, each question's success rate, the mistakes made."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from pathlib import PurePath
from typing import Any

from costmodel._json import real
from costmodel.errors import InputError
from costmodel.exercises.assignment import (
    STUDENT_FROM,
    Manifest,
    Override,
    attribute,
    grade_assignment,
    late_policy,
)
from costmodel.exercises.bank import Bank
from costmodel.exercises.grading import GradeReport, Submission

__all__ = ["GRADEBOOK_FORMATS", "ClassReport", "class_report", "grade_class"]


@dataclass(frozen=True)
class ClassReport:
    """Every roster student's grades (``None``: no submission), per question and in total."""

    manifest: Manifest
    reports: Mapping[str, GradeReport | None]
    problems: tuple[tuple[str, str], ...] = ()  # (file, why) for each file not read or not attributed
    student_from: str = ""  # where each file's student came from (one source for all)
    overrides: tuple[Override, ...] = ()  # manual grades, each replacing one question's score
    late: Mapping[str, tuple[Fraction, str]] | None = None  # student -> (factor on the total, what to show)

    @property
    def complete(self) -> bool:
        """Whether every file was read and attributed to a roster student."""
        return not self.problems

    def columns(self) -> list[str]:
        """One column per question; with question pools, one per group (``{A|B}`` or the exercise's id)."""
        if self.manifest.pooled:
            return [_group_label(g) for g in self.manifest.exercise_groups()]
        return [f"{q.exercise}:{q.name}" for q in self.manifest.questions]

    def column_points(self) -> list[Fraction]:
        """The points of each column (a group: the points of any one of its members)."""
        if self.manifest.pooled:
            return [sum((q.points for q in self.manifest.questions if q.exercise == g[0]), Fraction(0))
                    for g in self.manifest.exercise_groups()]
        return [q.points for q in self.manifest.questions]

    def drawn(self, student: str) -> dict[str, str]:
        """Column -> the exercise *student* drew for it (empty without question pools)."""
        if not self.manifest.pooled:
            return {}
        return dict(zip(self.columns(), self.manifest.drawn(student), strict=True))

    def _cells(self, student: str, report: GradeReport | None) -> tuple[list[Fraction], list[bool], bool]:
        """Each column's score and whether all of it is right, and whether a manual grade applied."""
        manual = {(o.exercise, o.name): o.score for o in self.overrides if o.student == student}
        by_question = {}
        for g in report.grades if report is not None else ():
            by_question[(g.submission.exercise, g.name or g.submission.name or "")] = (g.score, g.correct)
        mine = self.manifest.questions_for(student)
        overridden = any((q.exercise, q.name) in manual for q in mine)
        nothing = (Fraction(0), False)
        scored = {(q.exercise, q.name): manual.get((q.exercise, q.name), by_question.get((q.exercise, q.name),
                                                                                        nothing)[0])
                  for q in mine}
        right = {k: by_question.get(k, (Fraction(0), False))[1] for k in scored}
        if not self.manifest.pooled:
            keys = [(q.exercise, q.name) for q in self.manifest.questions]
            return [scored[k] for k in keys], [right[k] for k in keys], overridden
        scores, correct = [], []
        for member in self.manifest.drawn(student):
            keys = [k for k in scored if k[0] == member]
            scores.append(sum((scored[k] for k in keys), Fraction(0)))
            correct.append(all(right[k] for k in keys))
        return scores, correct, overridden

    def rows(self) -> list[tuple[str, list[Fraction], Fraction, str]]:
        """(student, each column's score, total, status) in roster order; a manual grade replaces
        the score of its question (status ``..., overridden``)."""
        out = []
        for student in self.manifest.students:
            report = self.reports.get(student.id)
            if report is None:
                status = "missing"
            else:
                status = (
                    "unreadable"
                    if any(n.startswith("the file could not be read") for n in report.notes)
                    else "graded"
                )
            scores, _, overridden = self._cells(student.id, report)
            if overridden:
                status += ", overridden"
            factor, note = (self.late or {}).get(student.id, (Fraction(1), ""))
            if note.startswith("late"):
                status += ", late"
            out.append((student.id, scores, sum(scores, Fraction(0)) * factor, status))
        return out

    def late_note(self, student: str) -> str:
        """What the late policy did to *student*'s total ("" without a deadline or a submission)."""
        return (self.late or {}).get(student, (Fraction(1), ""))[1]

    def success(self) -> list[tuple[str, int, int]]:
        """(column, students right, submissions) for each column (a group: every answer right)."""
        graded = [(s, r) for s, r in self.reports.items() if r is not None]
        cells = [self._cells(s, r)[1] for s, r in graded]
        return [(c, sum(1 for right in cells if right[i]), len(graded)) for i, c in enumerate(self.columns())]

    def mistakes(self) -> list[tuple[str, int]]:
        """How many answers across the class each mistake was diagnosed in, most frequent first."""
        counts: Counter[str] = Counter()
        for report in self.reports.values():
            for g in report.grades if report is not None else ():
                for d in g.diagnosis:
                    counts[d.mistake] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def to_csv(self, out_format: str = "plain") -> str:
        """The gradebook as CSV, one row per roster student, for a spreadsheet or an LMS import.

        *out_format* ``plain``: id, name, email, each question's points, total, max_score, status.
        ``canvas``: Canvas's gradebook import (Student, ID, SIS User ID, SIS Login ID, Section, then
        one column per question and the total, each named after the assignment, and a Points
        Possible row); the roster id is the SIS User ID and the email the SIS Login ID.
        ``moodle``: Moodle's grade import (ID number, Email address, First name, Last name, then one
        column per question and the total); map ID number or Email address to the user at import.
        """
        if out_format not in GRADEBOOK_FORMATS:
            raise InputError(f"out_format={out_format!r}: choose {', '.join(GRADEBOOK_FORMATS)}")
        roster = {s.id: s for s in self.manifest.students}
        columns = self.columns()
        maxima = [_text(p) for p in self.column_points()]
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        title = self.manifest.title
        named = [f"{title}: {c}" for c in columns] + [f"{title}: total"]
        rows = self.rows()
        if out_format == "plain":
            pooled, dated = self.manifest.pooled, self.manifest.deadline is not None
            extra = ["drawn"] * pooled + ["late"] * dated
            writer.writerow(["student", "name", "email", *columns, "total", "max_score", "status", *extra])
            for student, scores, total, status in rows:
                s = roster[student]
                which = [" ".join(self.manifest.drawn(student))] * pooled + [self.late_note(student)] * dated
                writer.writerow([student, _cell(s.name), _cell(s.email), *(_text(x) for x in scores),
                                 _text(total), _text(self.manifest.max_score), status, *which])
        elif out_format == "canvas":
            writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *named])
            writer.writerow(["Points Possible", "", "", "", "", *maxima, _text(self.manifest.max_score)])
            for student, scores, total, _ in rows:
                s = roster[student]
                writer.writerow([_cell(s.name or s.id), "", student, _cell(s.email), "",
                                 *(_text(x) for x in scores), _text(total)])
        else:
            writer.writerow(["ID number", "Email address", "First name", "Last name", *named])
            for student, scores, total, _ in rows:
                s = roster[student]
                first, last = _split_name(s.name)
                writer.writerow([student, _cell(s.email), _cell(first), _cell(last),
                                 *(_text(x) for x in scores), _text(total)])
        return buffer.getvalue()

    def to_dict(self) -> dict[str, Any]:
        columns = self.columns()
        return {
            "assignment": self.manifest.id,
            "max_score": real(self.manifest.max_score),
            "students": [
                {
                    "student": s,
                    "scores": dict(zip(columns, map(real, scores), strict=True)),
                    "total": real(total),
                    "status": status,
                    **({"drawn": self.drawn(s)} if self.manifest.pooled else {}),
                    **({"late": self.late_note(s)} if self.manifest.deadline is not None else {}),
                }
                for s, scores, total, status in self.rows()
            ],
            "questions": [
                {"question": c, "right": right, "submissions": n, "success_rate": right / n if n else None}
                for c, right, n in self.success()
            ],
            "mistakes": [{"mistake": m, "answers": n} for m, n in self.mistakes()],
            "student_from": self.student_from,
            "problems": [{"file": f, "problem": why} for f, why in self.problems],
            "overrides": [{"student": o.student, "question": o.question, "score": real(o.score),
                           "why": o.reason} for o in self.overrides],
            "complete": self.complete,
        }


GRADEBOOK_FORMATS = ("plain", "canvas", "moodle")
"""The gradebook CSV forms :meth:`ClassReport.to_csv` writes."""


def _group_label(group: Sequence[str]) -> str:
    return "{" + "|".join(group) + "}" if len(group) > 1 else group[0]


def _cell(text: str) -> str:
    """*text* safe in a spreadsheet: a cell starting with = + - @ would be read as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _split_name(name: str) -> tuple[str, str]:
    """First and last name: ``"Last, First"`` or ``"First Last"`` (the last word); one word is a last name."""
    if "," in name:
        last, _, first = name.partition(",")
        return first.strip(), last.strip()
    first, _, last = name.strip().rpartition(" ")
    return first.strip(), last.strip()


def _text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


def class_report(manifest: Manifest, reports: Mapping[str, GradeReport | None], *,
                 problems: Iterable[tuple[str, str]] = (), student_from: str = "",
                 overrides: Iterable[Override] = (),
                 submitted: Mapping[str, datetime | None] | None = None) -> ClassReport:
    """The class report of *reports* (student id -> the grades of their submission, or None);
    *problems* are the files that could not be read or attributed, each with why; *overrides* the
    manual grades (the last of a student and question counts); *submitted* each student's
    submission time (Gradescope's ``created_at``), to which the manifest's late policy applies (a
    student with a submission and no time: nothing applied, and the report says so)."""
    last = {(o.student, o.exercise, o.name): o for o in overrides}
    times = submitted or {}
    late = {s: late_policy(manifest, times.get(s)) for s, r in reports.items() if r is not None}
    return ClassReport(manifest, dict(reports), tuple(problems), student_from, tuple(last.values()), late)


def grade_class(manifest: Manifest, bank: Bank, secret: bytes,
                files: Iterable[tuple[str, Sequence[Submission] | None, str | None]], *,
                student_from: str = "name", partial: Mapping[str, Fraction] | None = None,
                overrides: Iterable[Override] = (),
                submitted: Mapping[str, datetime | None] | None = None) -> ClassReport:
    """Grade a class's files: each ``(path, its entries or None, why it cannot be read or None)``.

    Each file's student comes from one source, *student_from* (see
    :data:`costmodel.exercises.assignment.STUDENT_FROM`).  A file that cannot be attributed to a
    roster student is graded for no one; it and every file that cannot be read are the report's
    *problems*, each with why.  Two files of one student are refused.  *overrides* (manual grades)
    replace the scores of their questions; *submitted* gives the submission times the late policy
    applies to (see :func:`class_report`).
    """
    if student_from not in STUDENT_FROM:
        raise InputError(f"student_from={student_from!r}: choose {' or '.join(STUDENT_FROM)}")
    reports: dict[str, GradeReport | None] = {}
    seen: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for path, answers, why in files:
        student, problem = attribute(PurePath(path).stem, answers, manifest, student_from)
        if student is None:
            problems.append((path, problem or ""))
            continue
        if student in seen:
            raise InputError(f"{path} and {seen[student]} are both submissions of student {student!r}")
        seen[student] = path
        if why is not None:
            problems.append((path, _unreadable(path, why)))
        source = STUDENT_FROM[student_from]
        reports[student] = grade_assignment(manifest, bank, secret, student, answers, path=path,
                                            partial=partial, unreadable=why, source=source)
    return class_report(manifest, reports, problems=problems, student_from=STUDENT_FROM[student_from],
                        overrides=overrides, submitted=submitted)


def _unreadable(path: str, why: str) -> str:
    """Why a file cannot be read, without its path (the problem is listed under it): ``line N: ...``."""
    found = re.match(re.escape(path) + r":(?:(\d+):)? ?", why)
    if found is None:
        return f"cannot be read: {why}"
    return f"cannot be read: line {found[1]}: {why[found.end():]}" if found[1] else \
        f"cannot be read: {why[found.end():]}"
