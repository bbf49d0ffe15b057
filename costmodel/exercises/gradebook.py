"""A class's grades on one assignment: the gradebook, each question's success rate, the mistakes made."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.exercises.assignment import Manifest
from costmodel.exercises.grading import GradeReport

__all__ = ["ClassReport", "class_report"]


@dataclass(frozen=True)
class ClassReport:
    """Every roster student's grades (``None``: no submission), per question and in total."""

    manifest: Manifest
    reports: Mapping[str, GradeReport | None]
    problems: tuple[tuple[str, str], ...] = ()  # (file, why) for each file not read or not attributed
    student_from: str = ""  # where each file's student came from (one source for all)

    @property
    def complete(self) -> bool:
        """Whether every file was read and attributed to a roster student."""
        return not self.problems

    def columns(self) -> list[str]:
        return [f"{q.exercise}:{q.name}" for q in self.manifest.questions]

    def rows(self) -> list[tuple[str, list[Fraction], Fraction, str]]:
        """(student, each question's score, total, status) in roster order."""
        out = []
        for student in self.manifest.students:
            report = self.reports.get(student.id)
            if report is None:
                out.append((student.id, [Fraction(0)] * len(self.manifest.questions), Fraction(0), "missing"))
            else:
                status = (
                    "unreadable"
                    if any(n.startswith("the file could not be read") for n in report.notes)
                    else "graded"
                )
                out.append((student.id, [g.score for g in report.grades], report.score, status))
        return out

    def success(self) -> list[tuple[str, int, int]]:
        """(question, students right, submissions) for each question."""
        graded = [r for r in self.reports.values() if r is not None]
        return [
            (c, sum(1 for r in graded if r.grades[i].correct), len(graded))
            for i, c in enumerate(self.columns())
        ]

    def mistakes(self) -> list[tuple[str, int]]:
        """How many answers across the class each mistake was diagnosed in, most frequent first."""
        counts: Counter[str] = Counter()
        for report in self.reports.values():
            for g in report.grades if report is not None else ():
                for d in g.diagnosis:
                    counts[d.mistake] += 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["student", *self.columns(), "total", "max_score", "status"])
        for student, scores, total, status in self.rows():
            writer.writerow(
                [student, *(_text(s) for s in scores), _text(total), _text(self.manifest.max_score), status]
            )
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
            "complete": self.complete,
        }


def _text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


def class_report(manifest: Manifest, reports: Mapping[str, GradeReport | None], *,
                 problems: Iterable[tuple[str, str]] = (), student_from: str = "") -> ClassReport:
    """The class report of *reports* (student id -> the grades of their submission, or None);
    *problems* are the files that could not be read or attributed, each with why."""
    return ClassReport(manifest, dict(reports), tuple(problems), student_from)
