"""Assignments: exercises bound to the students of a roster, each variant drawn with a secret.

A student's variant of an exercise is the public variant of a seed that only the instructor can
compute: the first 63 bits of HMAC-SHA256 (Krawczyk, Bellare & Canetti 1997, RFC 2104) keyed by the
course secret, of (assignment id, student id, exercise id).  Without the secret nobody can
reproduce a key, the student never types a seed, and another secret gives other variants.

The manifest (``assignment.toml``) records the assignment id and title, a SHA-256 fingerprint of
the bank's files, a check value of the secret (an HMAC of the assignment id, which reveals nothing
of the secret), every question (exercise, answer name, points, tolerance, unit) and the roster.
Grading against it (:func:`grade_assignment`) grades every question exactly once, so the total is
always the manifest's total.

Question pools: an exercise group ``{ring-bytes|recursive-doubling-bytes}`` gives each student one
of its members, drawn by the same rule as their variants: member number ``seed mod k`` of the
group's *k* members (in the order written), where ``seed`` is :func:`assignment_seed` of the
exercise id ``pool:`` followed by the members joined by ``|``.  The manifest records every group
(``[[group]]``) and each student's draw (the ``exercises`` of their ``[[student]]``); a student is
graded on the questions of the exercises they drew.  The members of a group are worth the same
points, so every student's total is the manifest's total.

A deadline and a late policy: ``deadline`` (a TOML date-time with its offset) and either
``late_penalty_per_day`` (the fraction of the score taken per started day of 24 hours after the
deadline, the score never below 0) or ``cutoff`` (a submission after it scores 0; before it, a late
one is penalised per day if a penalty is also set, else not at all).  They apply to the submission
time Gradescope's metadata gives (``created_at``); without one nothing is applied and the report
says so.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from costmodel._files import read_bytes, read_text
from costmodel._json import JSONFields, real, to_json_dict
from costmodel.errors import CostmodelError, InputError, ParseError
from costmodel.exact import parse_number
from costmodel.exercises.bank import Bank, exercise_files
from costmodel.exercises.grading import Grade, GradeReport, Submission, grade_answer
from costmodel.exercises.model import Exercise, Tolerance
from costmodel.exercises.sheet import FORMATS, Sheet, check_format, latex_note, latex_writes
from costmodel.tomlfile import loads

__all__ = [
    "OVERRIDES",
    "Assignment",
    "Identity",
    "IdentityError",
    "Manifest",
    "Override",
    "Question",
    "Student",
    "assignment_seed",
    "attribute",
    "bank_fingerprint",
    "create_assignment",
    "grade_assignment",
    "identify",
    "late_policy",
    "late_rules",
    "load_overrides",
    "make_override",
    "manifest_exercises",
    "parse_exercises",
    "pool_draw",
    "read_manifest",
    "read_metadata",
    "read_overrides",
    "read_roster",
    "read_secret",
    "submission_time",
    "submission_times",
]

MIN_SECRET = 16
"""Fewest bytes a secret file may hold."""
_SECRET_HINT = "make one with: head -c 32 /dev/urandom | base64 > course.key"
_ID = re.compile(r"[A-Za-z0-9_@+-][A-Za-z0-9_@+.-]{0,63}")
_ASSIGNMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_MAX_STUDENTS = 100_000


@dataclass(frozen=True)
class Student(JSONFields):
    """One roster line: the id (also the name of the student's files), and optionally name and email."""

    id: str
    name: str = ""
    email: str = ""


@dataclass(frozen=True)
class Question(JSONFields):
    """One graded answer of the assignment."""

    exercise: str
    name: str
    points: Fraction
    tolerance: str
    unit: str


@dataclass(frozen=True)
class Manifest:
    """What ``assignment.toml`` holds (never the secret, never a seed)."""

    id: str
    title: str
    bank: str
    secret_check: str
    questions: tuple[Question, ...]
    students: tuple[Student, ...]
    groups: tuple[tuple[str, ...], ...] = ()  # question pools (and single exercises), in order; () = none
    draws: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (student, the exercise drawn from each group)
    deadline: datetime | None = None
    late_penalty_per_day: Fraction | None = None  # the fraction of the score taken per started late day
    cutoff: datetime | None = None  # after it a submission scores 0

    @property
    def pooled(self) -> bool:
        """Whether some group has more than one member (students then draw their exercises)."""
        return any(len(g) > 1 for g in self.groups)

    def exercise_groups(self) -> tuple[tuple[str, ...], ...]:
        """The groups in order: each pool's members, or one exercise alone."""
        if self.groups:
            return self.groups
        return tuple((e,) for e in dict.fromkeys(q.exercise for q in self.questions))

    def drawn(self, student_id: str) -> tuple[str, ...]:
        """The exercises of *student_id*, one from each group."""
        for s, exercises in self.draws:
            if s == student_id:
                return exercises
        return tuple(g[0] for g in self.exercise_groups()) if not self.pooled else ()

    def questions_for(self, student_id: str) -> tuple[Question, ...]:
        """The questions *student_id* answers (all of them when nothing is pooled)."""
        if not self.pooled:
            return self.questions
        mine = set(self.drawn(student_id))
        return tuple(q for q in self.questions if q.exercise in mine)

    @property
    def max_score(self) -> Fraction:
        if self.pooled:
            first = {g[0] for g in self.exercise_groups()}
            return sum((q.points for q in self.questions if q.exercise in first), Fraction(0))
        return sum((q.points for q in self.questions), Fraction(0))

    def student(self, student_id: str) -> Student:
        for s in self.students:
            if s.id == student_id:
                return s
        raise InputError(f"student {student_id!r} is not on the roster of assignment {self.id}")

    def to_dict(self) -> dict[str, Any]:
        out = to_json_dict(self, ("id", "title", "bank", "max_score", "questions", "students"))
        for key in ("deadline", "cutoff"):
            when = getattr(self, key)
            if when is not None:
                out[key] = _when(when)
        if self.late_penalty_per_day is not None:
            out["late_penalty_per_day"] = real(self.late_penalty_per_day)
        if self.pooled:
            out["groups"] = [list(g) for g in self.groups]
            out["draws"] = {s: list(e) for s, e in self.draws}
        return out

    def to_toml(self) -> str:
        lines = [
            "# A costmodel assignment: grade with costmodel check SUBMISSION --assignment THIS_FILE",
            "# --secret-file KEY. It holds no key and no secret; students do not need it.",
            "",
            "[assignment]",
            f"id = {_str(self.id)}",
            f"title = {_str(self.title)}",
            f"bank = {_str(self.bank)}",
            f"secret_check = {_str(self.secret_check)}",
        ]
        if self.deadline is not None:
            lines.append(f"deadline = {_when(self.deadline)}")
        if self.late_penalty_per_day is not None:
            lines.append(f"late_penalty_per_day = {_decimal(self.late_penalty_per_day)}")
        if self.cutoff is not None:
            lines.append(f"cutoff = {_when(self.cutoff)}")
        for q in self.questions:
            lines += [
                "",
                "[[question]]",
                f"exercise = {_str(q.exercise)}",
                f"name = {_str(q.name)}",
                f"points = {_number(q.points)}",
                f"tolerance = {_str(q.tolerance)}",
                f"unit = {_str(q.unit)}",
            ]
        if self.pooled:
            for g in self.groups:
                lines += ["", "[[group]]", f"members = [{', '.join(map(_str, g))}]"]
        draws = dict(self.draws)
        for s in self.students:
            lines += ["", "[[student]]", f"id = {_str(s.id)}"]
            lines += [f"name = {_str(s.name)}"] if s.name else []
            lines += [f"email = {_str(s.email)}"] if s.email else []
            if self.pooled:
                lines += [f"exercises = [{', '.join(map(_str, draws[s.id]))}]"]
        return "\n".join(lines) + "\n"


def _str(text: str) -> str:
    """A TOML basic string (JSON's escapes, ASCII only, are TOML's too)."""
    return json.dumps(text, ensure_ascii=True)


def _when(t: datetime) -> str:
    """A TOML offset date-time."""
    return t.isoformat().replace("+00:00", "Z")


def _decimal(x: Fraction) -> str:
    """*x* as a TOML decimal when that is exact (0.1), else as ``_number`` writes it."""
    text = f"{float(x):.15g}"
    return text if "e" not in text and Fraction(text) == x else _number(x)


def _number(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else _str(f"{x.numerator}/{x.denominator}")


# -- inputs ----------------------------------------------------------------------------------------


def read_secret(path: str | Path) -> bytes:
    """The course secret: the file's bytes, surrounding white space removed, at least 16 bytes."""
    secret = read_bytes(path, what="the secret file", limit=1 << 16).strip()  # a regular file only
    if len(secret) < MIN_SECRET:
        raise InputError(
            f"the secret file {str(path)!r} holds {len(secret)} byte{'s' if len(secret) != 1 else ''}, "
            f"fewer than {MIN_SECRET}; "
            f"{_SECRET_HINT}"
        )
    return secret


def load_roster(path: str | Path) -> tuple[Student, ...]:
    """The students of the roster file *path* (see :func:`read_roster`)."""
    return read_roster(read_text(path, what="the roster"), path=str(path))


def read_roster(content: str, *, path: str) -> tuple[Student, ...]:
    """The students of a roster CSV: a header naming ``id`` (optionally ``name``, ``email``), one line each.

    >>> [s.id for s in read_roster("id,name\\nada,Ada\\nbob,Bob\\n", path="roster.csv")]
    ['ada', 'bob']
    """
    content = content.removeprefix("\ufeff")
    rows = list(csv.reader(io.StringIO(content)))
    if not rows or not any(c.strip() for c in rows[0]):
        raise ParseError("no header: the first line names the columns, at least id", path=path, line=1)
    header = [c.strip().lower() for c in rows[0]]
    if "id" not in header:
        raise ParseError(f"the header {','.join(rows[0])!r} has no id column", path=path, line=1)
    if len(rows) > _MAX_STUDENTS:
        raise ParseError(f"too many students ({len(rows) - 1}; at most {_MAX_STUDENTS})", path=path)
    column: dict[str, int] = {name: header.index(name) for name in ("id", "name", "email") if name in header}
    students: list[Student] = []
    seen: dict[str, int] = {}
    emails: dict[str, int] = {}
    for line, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            i = column.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""

        student = Student(cell("id"), cell("name"), cell("email"))
        if any(_unprintable(t) or len(t) > 200 for t in (student.name, student.email)):
            raise ParseError("a name or email holds a line break or control character, or is longer than 200",
                             path=path, line=line)
        if not student.id:
            raise ParseError("empty student id", path=path, line=line)
        if not _ID.fullmatch(student.id):
            raise ParseError(
                f"student id {student.id!r} is not safe as a file name (letters, digits and "
                "_ @ + - . only, not starting with a dot, at most 64)",
                path=path,
                line=line,
            )
        if student.id in seen:
            raise ParseError(
                f"student {student.id!r} is also on line {seen[student.id]}", path=path, line=line
            )
        email = student.email.lower()
        if email and email in emails:
            raise ParseError(f"email {student.email!r} is also on line {emails[email]}", path=path, line=line)
        seen[student.id] = line
        if email:
            emails[email] = line
        students.append(student)
    if not students:
        raise ParseError("no students: one line per student after the header", path=path)
    return tuple(students)


def _unprintable(text: str) -> bool:
    return any(not c.isprintable() for c in text)


def bank_fingerprint(paths: Iterable[str | Path] = (), *, builtin: bool = True) -> str:
    """SHA-256 of the bank's files (their names and bytes): the shipped ones and those in *paths*."""
    digest = hashlib.sha256()

    def add(name: str, content: bytes) -> None:
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)

    if builtin:
        folder = resources.files("costmodel.exercises") / "bank"
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".toml"):
                add(f"exercises/{entry.name}", entry.read_bytes())
    for name in paths:
        for file in exercise_files(Path(name)):
            add(file.name, read_bytes(file, what="exercises"))  # a regular file only, as the bank reads it
    return "sha256:" + digest.hexdigest()


def assignment_seed(secret: bytes, assignment: str, student: str, exercise: str) -> int:
    """The seed of *student*'s variant of *exercise*: 63 bits of HMAC-SHA256 (RFC 2104) keyed by *secret*.

    >>> assignment_seed(b"0123456789abcdef", "hw1", "ada", "ring-bytes")
    3102179881778445194
    """
    message = json.dumps(["costmodel-assignment", assignment, student, exercise]).encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big") >> 1


_GROUP = re.compile(r"\{([^{}]*)\}")


def parse_exercises(text: str) -> list[str | tuple[str, ...]]:
    """``ID,{ID|ID},...``: exercises in order, a group in braces being a question pool.

    >>> parse_exercises("{ring-bytes|recursive-doubling-bytes},pipeline-bubble")
    [('ring-bytes', 'recursive-doubling-bytes'), 'pipeline-bubble']
    """
    out: list[str | tuple[str, ...]] = []
    rest = text.strip()
    while rest:
        if rest.startswith("{"):
            found = _GROUP.match(rest)
            if found is None:
                raise InputError(f"the exercise group {rest.split(',')[0]!r} is not "
                                 "{ID|ID...} (braces around two or more ids separated by |)")
            members = tuple(m.strip() for m in found[1].split("|"))
            if len(members) < 2 or not all(members):
                raise InputError(f"the exercise group {found[0]!r} needs two or more ids "
                                 "separated by |")
            out.append(members)
            rest = rest[found.end():].strip()
            if rest and not rest.startswith(","):
                raise InputError(f"a comma goes after the exercise group {found[0]!r}")
            rest = rest[1:].strip()
        else:
            item, _, rest = rest.partition(",")
            item, rest = item.strip(), rest.strip()
            if any(c in item for c in "{}|"):
                raise InputError(f"the exercise {item!r} is not an id nor a group {{ID|ID...}}")
            if item:
                out.append(item)
    return out


def pool_draw(secret: bytes, assignment: str, student: str, members: Sequence[str]) -> str:
    """The member of the pool *members* that *student* draws (see the module docstring).

    >>> pool_draw(b"0123456789abcdef", "hw1", "ada", ["ring-bytes", "recursive-doubling-bytes"])
    'recursive-doubling-bytes'
    """
    if len(members) == 1:
        return members[0]
    seed = assignment_seed(secret, assignment, student, "pool:" + "|".join(members))
    return members[seed % len(members)]


def _secret_check(secret: bytes, assignment: str) -> str:
    message = json.dumps(["costmodel-assignment-check", assignment]).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


def parse_points(values: Iterable[str]) -> dict[tuple[str, str], Fraction]:
    """``ID:NAME=K`` pairs: the points of one question."""
    out: dict[tuple[str, str], Fraction] = {}
    for text in values:
        target, sep, number = text.partition("=")
        exercise, colon, name = target.partition(":")
        if not sep or not colon or not exercise.strip() or not name.strip():
            raise InputError(f"points={text!r} is not ID:NAME=K (e.g. ring-bytes:sent=2)")
        points = parse_number(number.strip(), what="points")
        if not 0 < points <= 10**6:
            raise InputError(f"points={text!r}: points are a positive number (at most 10^6)")
        out[(exercise.strip(), name.strip())] = points
    return out


# -- create ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudentFiles:
    """One student's sheet, key and answers template (the key is for the instructor only)."""

    student: Student
    sheet: str
    key: str
    template: str
    answers: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Assignment:
    """A created assignment: its manifest and every student's files."""

    manifest: Manifest
    students: tuple[StudentFiles, ...]
    format: str = "markdown"  # of the sheets and keys: markdown or latex

    def files(self) -> dict[str, str]:
        """Relative path -> text of every file to write."""
        out = {"assignment.toml": self.manifest.to_toml()}
        ext = FORMATS[self.format]
        for f in self.students:
            out[f"sheets/{f.student.id}.{ext}"] = f.sheet
            out[f"keys/{f.student.id}.{ext}"] = f.key
            out[f"answers/{f.student.id}.toml"] = f.template
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**self.manifest.to_dict(), "keys": {f.student.id: list(f.answers) for f in self.students}}


def manifest_exercises(bank: Bank, manifest_questions: Sequence[Question]) -> dict[str, Exercise]:
    """The bank's exercises with the manifest's points and tolerances (variants drawn as in the bank).

    The manifest is the one source of both: an edited tolerance applies.  A tolerance that cannot
    apply (a count, a word or a formula is graded exactly; a unit other than the exercise's) is
    refused with the reason, never ignored.
    """
    by_question = {(q.exercise, q.name): q for q in manifest_questions}
    out: dict[str, Exercise] = {}
    for q in manifest_questions:
        if q.exercise in out:
            continue
        exercise = bank.get(q.exercise)
        variant = exercise.variant()
        answers = []
        for a in exercise.answers:
            mine = by_question.get((q.exercise, a.name))
            if mine is None:
                answers.append(a)
                continue
            where = f"question {q.exercise}: {a.name}"
            if mine.unit != a.unit:
                raise InputError(f"{where}: the manifest's unit {mine.unit!r} is not the exercise's "
                                 f"{a.unit!r}; the unit is fixed by the exercise (its sheets say it)")
            try:
                tolerance = Tolerance.parse(mine.tolerance)
            except InputError as e:
                raise InputError(f"{where}: {e}") from None
            kind = variant.answers[a.name].kind
            if a.tolerance_for(kind).exact and not tolerance.exact:
                raise InputError(f"{where}: tolerance {mine.tolerance!r} cannot apply: "
                                 f"{'a count' if kind.name.startswith('count') else 'a ' + kind.name} is "
                                 "graded exactly; write tolerance = \"exact\"")
            answers.append(replace(a, points=mine.points, tolerance=tolerance))
        out[q.exercise] = replace(exercise, answers=tuple(answers))
    return out


def create_assignment(
    bank: Bank,
    exercise_ids: Sequence[str | Sequence[str]],
    roster: Sequence[Student],
    secret: bytes,
    *,
    assignment_id: str,
    title: str = "",
    points: Mapping[tuple[str, str], Fraction] | None = None,
    fingerprint: str,
    deadline: Any = None,
    late_penalty_per_day: Any = None,
    cutoff: Any = None,
    format: str = "markdown",
) -> Assignment:
    """The manifest, and each student's sheet, key and answers template (see the module docstring).

    *deadline*, *late_penalty_per_day* and *cutoff* (date-times with an offset, or their ISO text;
    a fraction of the score per late day) are the late policy the manifest records.  *format* is
    the sheets' and keys' (``markdown``, or ``latex``: standalone documents, see
    :mod:`costmodel.exercises.sheet`)."""
    check_format(format)
    if not _ASSIGNMENT_ID.fullmatch(assignment_id):
        raise InputError(f"assignment id {assignment_id!r}: letters, digits, . _ - only (at most 64)")
    if _unprintable(title) or len(title) > 200:
        raise InputError("the title is one line of at most 200 printable characters")
    if not exercise_ids:
        raise InputError("no exercises: name them with exercises=ID[,ID...]")
    policy = late_rules(deadline, late_penalty_per_day, cutoff)
    groups = _groups(bank, exercise_ids)
    ids = [i for g in groups for i in g]
    if len(set(ids)) != len(ids):
        raise InputError(f"exercise {next(i for i in ids if ids.count(i) > 1)!r} is named twice")
    questions: list[Question] = []
    for i in ids:
        exercise = bank.get(i)
        variant = exercise.variant()
        for spec in exercise.answers:
            kind = variant.answers[spec.name].kind
            questions.append(
                Question(i, spec.name, spec.points, spec.tolerance_for(kind).text(), spec.unit)
            )
    known = {(q.exercise, q.name) for q in questions}
    for target in points or {}:
        if target not in known:
            raise InputError(
                f"points={target[0]}:{target[1]}: not a question of this assignment; choose from "
                + ", ".join(f"{e}:{n}" for e, n in sorted(known))
            )
    questions = [replace(q, points=(points or {}).get((q.exercise, q.name), q.points)) for q in questions]
    pooled = any(len(g) > 1 for g in groups)
    _check_worth(groups, questions)
    draws = tuple((s.id, tuple(pool_draw(secret, assignment_id, s.id, g) for g in groups))
                  for s in roster) if pooled else ()
    title = title or assignment_id
    manifest = Manifest(
        assignment_id,
        title,
        fingerprint,
        _secret_check(secret, assignment_id),
        tuple(questions),
        tuple(roster),
        tuple(groups) if pooled else (),
        draws,
        *policy,
    )
    exercises = manifest_exercises(bank, questions)
    files = []
    for student in roster:
        mine = manifest.drawn(student.id)
        variants = tuple(
            e.variant(assignment_seed(secret, assignment_id, student.id, e.id))
            for e in exercises.values() if e.id in mine
        )
        name = student.name or student.id
        if format == "latex" and not latex_writes(name):
            name = student.id  # a name in a script pdflatex cannot set: the id, never question marks
        heading = f"{title}: {name}"
        sheet = Sheet(None, variants, title=heading, format=format)
        answers = []
        for v in variants:
            for spec in v.exercise.answers:
                answer = v.answers[spec.name]
                answers.append(
                    {
                        "exercise": v.exercise.id,
                        "name": spec.name,
                        "expected": spec.shown(answer.value, answer.kind),
                        "points": real(spec.points),
                    }
                )
        files.append(
            StudentFiles(
                student,
                _sheet_note(sheet.problems, student, format),
                sheet.key,
                _template(manifest, student, variants),
                tuple(answers),
            )
        )
    return Assignment(manifest, tuple(files), format)


def _groups(bank: Bank, exercise_ids: Sequence[str | Sequence[str]]) -> list[tuple[str, ...]]:
    """Each item an exercise or a pool of them, by its bank id; an unknown one named with its group."""
    groups = []
    for item in exercise_ids:
        members = (item,) if isinstance(item, str) else tuple(item)
        found = []
        for m in members:
            try:
                found.append(bank.get(m).id)
            except InputError as e:
                where = f"in the group {{{'|'.join(members)}}}: " if len(members) > 1 else ""
                raise InputError(f"{where}{e}") from None
        if not found:
            raise InputError("an exercise group is empty")
        groups.append(tuple(found))
    return groups


def _check_worth(groups: Sequence[tuple[str, ...]], questions: Sequence[Question]) -> None:
    """A pool's members are worth the same points, so every student's total is the same."""
    for g in groups:
        worth = {m: sum((q.points for q in questions if q.exercise == m), Fraction(0)) for m in g}
        if len(set(worth.values())) > 1:
            raise InputError(f"the group {{{'|'.join(g)}}}: its members are worth "
                             + ", ".join(f"{m} {_number(p)}" for m, p in worth.items())
                             + " points; a pool's members are worth the same (set them with points=)")


def _sheet_note(text: str, student: Student, format: str = "markdown") -> str:
    note = (f"Write your answers in `answers/{student.id}.toml` (one `value` per question, with its unit) "
            "and submit that file.")
    if format == "latex":
        end = "\\end{document}"
        return text.rstrip("\n").removesuffix(end).rstrip("\n") + f"\n\n{latex_note(note)}\n\n{end}\n"
    return text.rstrip("\n") + f"\n\n{note}\n"


def _template(manifest: Manifest, student: Student, variants: Sequence[Any]) -> str:
    lines = [
        f"# {manifest.title}: answers of {student.name or student.id}",
        '# Fill in each value with its unit, e.g. value = "150 MB" (a bare number is read in the',
        "# unit shown). Keep exercise and name as they are.",
        "",
        f"student = {_str(student.id)}",
    ]
    for v in variants:
        for spec in v.exercise.answers:
            label = v.answers[spec.name].label
            unit = f" (in {spec.unit})" if spec.unit else ""
            lines += [
                "",
                "[[answer]]",
                f"exercise = {_str(v.exercise.id)}",
                f"name = {_str(spec.name)}",
                f'value = ""  # {label}{unit}',
            ]
    return "\n".join(lines) + "\n"


# -- the manifest, read back -----------------------------------------------------------------------


def load_manifest(path: str | Path) -> Manifest:
    """The manifest file *path* (see :func:`read_manifest`)."""
    return read_manifest(read_text(path, what="the manifest"), path=str(path))


def read_manifest(content: str, *, path: str) -> Manifest:
    """An ``assignment.toml`` as written by :func:`create_assignment`."""
    data = loads(content.removeprefix("\ufeff"), path=path)
    head = data.get("assignment")
    if not isinstance(head, dict):
        raise ParseError("not an assignment manifest: no [assignment] table", path=path)
    fields = {}
    for key in ("id", "title", "bank", "secret_check"):
        value = head.get(key)
        if not isinstance(value, str) or not value:
            raise ParseError(f"[assignment] {key} is missing", path=path)
        fields[key] = value
    questions = []
    for q in data.get("question", []) if isinstance(data.get("question"), list) else []:
        try:
            points = parse_number(str(q["points"]), what="points")
            questions.append(
                Question(
                    str(q["exercise"]),
                    str(q["name"]),
                    points,
                    str(q.get("tolerance", "")),
                    str(q.get("unit", "")),
                )
            )
        except (KeyError, TypeError, InputError) as e:
            raise ParseError(f"a [[question]] is malformed: {e}", path=path) from None
        try:
            Tolerance.parse(questions[-1].tolerance)
        except InputError as e:
            last = questions[-1]
            raise ParseError(f"question {last.exercise}: {last.name}: {e}", path=path) from None
    if not questions:
        raise ParseError("the manifest has no [[question]]", path=path)
    groups = _read_groups(data, questions, path=path)
    deadline, penalty, cutoff = _read_policy(head, path=path)
    students = []
    draws = []
    for s in data.get("student", []) if isinstance(data.get("student"), list) else []:
        if not isinstance(s, dict) or not isinstance(s.get("id"), str):
            raise ParseError("a [[student]] has no id", path=path)
        students.append(Student(s["id"], str(s.get("name", "")), str(s.get("email", ""))))
        if groups:
            draws.append((s["id"], _read_draw(s, groups, path=path)))
    pooled = any(len(g) > 1 for g in groups)
    return Manifest(
        fields["id"],
        fields["title"],
        fields["bank"],
        fields["secret_check"],
        tuple(questions),
        tuple(students),
        tuple(groups) if pooled else (),
        tuple(draws) if pooled else (),
        deadline,
        penalty,
        cutoff,
    )


def _read_groups(data: Mapping[str, Any], questions: Sequence[Question], *,
                 path: str) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = []
    for g in data.get("group", []) if isinstance(data.get("group"), list) else []:
        members = g.get("members") if isinstance(g, dict) else None
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise ParseError("a [[group]] has no members = [\"ID\", ...]", path=path)
        groups.append(tuple(members))
    known = {q.exercise for q in questions}
    grouped = [m for g in groups for m in g]
    if groups and (set(grouped) != known or len(grouped) != len(known)):
        raise ParseError("the [[group]] tables do not name each exercise of the questions once", path=path)
    return groups


def _read_draw(student: Mapping[str, Any], groups: Sequence[tuple[str, ...]], *,
               path: str) -> tuple[str, ...]:
    drawn = student.get("exercises")
    if (not isinstance(drawn, list) or len(drawn) != len(groups)
            or not all(isinstance(d, str) and d in g for d, g in zip(drawn, groups, strict=False))):
        raise ParseError(f"student {student['id']!r}: exercises = [...] does not name one member of each "
                         "[[group]], in order", path=path)
    return tuple(drawn)


def _read_policy(head: Mapping[str, Any], *,
                 path: str) -> tuple[datetime | None, Fraction | None, datetime | None]:
    """The deadline, the per-day penalty and the cutoff of the ``[assignment]`` table (each optional)."""
    try:
        return late_rules(head.get("deadline"), head.get("late_penalty_per_day"), head.get("cutoff"))
    except InputError as e:
        raise ParseError(f"[assignment] {e}", path=path) from None


def late_rules(deadline: Any, late_penalty_per_day: Any = None,
               cutoff: Any = None) -> tuple[datetime | None, Fraction | None, datetime | None]:
    """A late policy, checked: date-times with an offset, a penalty in (0, 1], a cutoff after the deadline."""
    due = None if deadline is None else _time(deadline, what="deadline")
    end = None if cutoff is None else _time(cutoff, what="cutoff")
    penalty = None
    if late_penalty_per_day is not None:
        try:
            penalty = parse_number(str(late_penalty_per_day), what="late_penalty_per_day")
        except InputError as e:
            raise InputError(f"late_penalty_per_day={late_penalty_per_day}: {e}") from None
        if not 0 < penalty <= 1:
            raise InputError(f"late_penalty_per_day={late_penalty_per_day} is not a fraction of the score "
                             "above 0, at most 1 (0.1: 10 % per day)")
    if due is None and (penalty is not None or end is not None):
        raise InputError("a late penalty or a cutoff needs a deadline")
    if due is not None and end is not None and end < due:
        raise InputError("the cutoff is before the deadline")
    return due, penalty, end


def _time(value: Any, *, what: str) -> datetime:
    """A date-time with its offset (a TOML date-time, or its text), refused without an offset."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InputError(f"{what}={value!r} is not a date-time like 2026-12-10T23:59:00Z") from None
    if not isinstance(value, datetime):
        raise InputError(f"{what} is not a date-time like 2026-12-10T23:59:00Z")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InputError(f"{what}={value.isoformat()} has no offset; write Z or +HH:MM")
    return value


def submission_time(content: str, *, path: str) -> datetime | None:
    """When a submission was made: ``created_at`` of Gradescope's ``submission_metadata.json``
    (``None`` when it has none)."""
    try:
        data = json.loads(content.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        raise ParseError("not JSON", path=path) from None
    value = data.get("created_at") if isinstance(data, dict) else None
    if value is None:
        return None
    try:
        return _time(value, what="created_at")
    except InputError as e:
        raise ParseError(str(e), path=path) from None


def submission_times(paths: Iterable[str | Path], manifest: Manifest) -> dict[str, datetime | None]:
    """Student -> submission time, from Gradescope metadata files (the student found as
    :func:`identify` does, the time from ``created_at``); one student named twice is refused."""
    out: dict[str, datetime | None] = {}
    seen: dict[str, str] = {}
    for path in paths:
        content = read_text(path, what="the metadata")
        student = identify(content, manifest, path=str(path)).student
        if student in seen:
            raise InputError(f"{path} and {seen[student]} are both the metadata of student {student!r}")
        seen[student] = str(path)
        out[student] = submission_time(content, path=str(path))
    return out


def late_policy(manifest: Manifest, submitted: datetime | None) -> tuple[Fraction, str]:
    """The factor the score is multiplied by for a submission at *submitted*, and what to show.

    Late means after the deadline; each started day of 24 hours late takes ``late_penalty_per_day``
    of the score (never below 0); after the cutoff the score is 0.
    """
    if manifest.deadline is None:
        return Fraction(1), ""
    if submitted is None:
        return Fraction(1), "no submission time, so no late policy applied"
    if submitted <= manifest.deadline:
        return Fraction(1), "on time"
    late = submitted - manifest.deadline
    days = math.ceil(late / timedelta(days=1))
    when = f"late by {_duration(late)}"
    if manifest.cutoff is not None and submitted > manifest.cutoff:
        return Fraction(0), f"{when}, after the cutoff {_when(manifest.cutoff)}: scores 0"
    if manifest.late_penalty_per_day is None:
        return Fraction(1), f"{when}, no penalty before the cutoff"
    factor = max(Fraction(0), 1 - manifest.late_penalty_per_day * days)
    each = _percent(manifest.late_penalty_per_day)
    return factor, f"{when}: {days} day{'s' if days != 1 else ''} × {each} taken, score × {float(factor):g}"


def _duration(t: timedelta) -> str:
    minutes = math.ceil(t.total_seconds() / 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes)
    return " ".join(parts) or "0 min"


def _percent(x: Fraction) -> str:
    p = x * 100
    return f"{p.numerator if p.denominator == 1 else float(p):g} %"


def check_secret(manifest: Manifest, secret: bytes) -> None:
    if not hmac.compare_digest(_secret_check(secret, manifest.id), manifest.secret_check):
        raise InputError(f"the secret file is not the one assignment {manifest.id} was created with")


def check_bank(manifest: Manifest, fingerprint: str, *, allow_change: bool) -> None:
    if fingerprint != manifest.bank and not allow_change:
        raise InputError(
            f"the exercise bank changed since assignment {manifest.id} was created, so students' "
            "numbers may have changed; grade with the bank it was created with, or pass "
            "allow_bank_change=True"
        )


def load_metadata(path: str | Path, manifest: Manifest) -> str:
    """The student named by Gradescope's metadata file *path* (see :func:`read_metadata`)."""
    return identify(read_text(path, what="the metadata"), manifest, path=str(path)).student


def load_identity(path: str | Path, manifest: Manifest) -> Identity:
    """Who submitted, by Gradescope's metadata file *path*, and how that was found (see :func:`identify`)."""
    return identify(read_text(path, what="the metadata"), manifest, path=str(path))


class IdentityError(ParseError):
    """Gradescope's metadata names no roster student, or names two: the submission is not graded."""


@dataclass(frozen=True)
class Identity:
    """The student a submission is graded for, and the one source that says so (stated in the output)."""

    student: str
    source: str


def read_metadata(content: str, manifest: Manifest, *, path: str) -> str:
    """The student of a Gradescope ``submission_metadata.json`` (see :func:`identify`)."""
    return identify(content, manifest, path=path).student


def identify(content: str, manifest: Manifest, *, path: str) -> Identity:
    """The student of a Gradescope ``submission_metadata.json``, matched on the roster by id and email.

    Each submitter's ``sid`` is looked up among the roster ids and its ``email`` among the roster
    emails.  When both name roster students they must name the same one, and a student found by
    sid whose roster line has an email must have submitted with that email: a student can edit
    their sid on Gradescope, not the email it verified, so an sid and an email that disagree are
    refused rather than trusted.  A submitter found by email alone is that email's student.
    """
    try:
        data = json.loads(content.removeprefix("\ufeff"))
    except (ValueError, RecursionError):
        raise ParseError("not JSON", path=path) from None
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, list) or not users:
        raise ParseError("no users: Gradescope's metadata lists the submitters under users", path=path)
    by_email = {s.email.lower(): s for s in manifest.students if s.email}
    by_id = {s.id: s for s in manifest.students}
    found: dict[str, str] = {}
    for user in users:
        if not isinstance(user, dict):
            continue
        sid, email = user.get("sid"), user.get("email")
        sid_text = str(sid).strip() if isinstance(sid, str | int) and not isinstance(sid, bool) else ""
        email_text = email.strip().lower() if isinstance(email, str) else ""
        by_sid, by_mail = by_id.get(sid_text), by_email.get(email_text)
        if by_sid is not None and by_mail is not None and by_sid.id != by_mail.id:
            raise IdentityError(
                f"the submitter's sid {sid_text!r} names student {by_sid.id!r} but their email "
                f"{email_text!r} names student {by_mail.id!r}; not graded: check the roster or "
                "the student's Gradescope profile",
                path=path,
            )
        if by_sid is not None and by_mail is None and by_sid.email and email_text:
            raise IdentityError(
                f"the submitter's sid {sid_text!r} names student {by_sid.id!r}, whose roster email is "
                f"not the submitter's email {email_text!r}; not graded: check the roster or the "
                "student's Gradescope profile",
                path=path,
            )
        if by_mail is not None:
            found.setdefault(by_mail.id, "Gradescope's metadata (email" + (" and sid)" if by_sid else ")"))
        elif by_sid is not None:
            found.setdefault(by_sid.id, "Gradescope's metadata (sid; the roster has no email for them)")
    if not found:
        raise IdentityError(
            "no submitter is on the roster (matched by sid against id and by email against email)", path=path
        )
    if len(found) > 1:
        raise IdentityError(
            f"several submitters ({', '.join(sorted(found))}): a group submission is "
            "graded for one student at a time; pass student=",
            path=path,
        )
    student, source = next(iter(found.items()))
    return Identity(student, source)


STUDENT_FROM = {
    "name": "the file's name (answers/ID.toml)",
    "field": "the student = written in the file (trusted: files the instructor collected)",
}
"""Where ``assignment report`` takes each file's student from: the one source, stated in the report."""


def attribute(name: str, submissions: Sequence[Submission] | None, manifest: Manifest,
              student_from: str) -> tuple[str | None, str | None]:
    """Whose file this is: ``(student, None)``, or ``(None, why not)`` when it cannot be attributed.

    *name* is the file's name without its extension, *submissions* its entries (``None``: it
    could not be read).  With *student_from* ``name`` the name is the student, and a file whose
    ``student =`` names someone else is not attributed to either; with ``field`` the file's
    ``student =`` is (a file that cannot be read then belongs to no one).
    """
    if student_from not in STUDENT_FROM:
        raise InputError(f"student_from={student_from!r}: choose name or field")
    ids = {s.id for s in manifest.students}
    written = sorted({s.student for s in submissions or () if s.student is not None})
    if len(written) > 1:
        return None, f"the file names several students ({', '.join(map(repr, written))})"
    if student_from == "field":
        if submissions is None:
            return None, "it cannot be read, so the student it names is unknown"
        if not written:
            return None, 'no student = "ID" in the file'
        student = written[0]
    else:
        student = name
        if written and written[0] != name:
            return None, f"its name says {name!r} but the file names student {written[0]!r}; not graded"
    if student not in ids:
        return None, f"student {student!r} is not on the roster of assignment {manifest.id}"
    return student, None


# -- overrides -------------------------------------------------------------------------------------

_OVERRIDE_KEYS = {"student", "exercise", "name", "score", "reason"}
OVERRIDES = "overrides.toml"
"""The file beside the manifest that records manual grades (see :func:`read_overrides`)."""


@dataclass(frozen=True)
class Override(JSONFields):
    """A manual grade of one question for one student, with the reason (what the report shows)."""

    student: str
    exercise: str
    name: str
    score: Fraction
    reason: str

    @property
    def question(self) -> str:
        return f"{self.exercise}:{self.name}"

    def to_toml(self) -> str:
        return "\n".join(["[[override]]", f"student = {_str(self.student)}",
                          f"exercise = {_str(self.exercise)}", f"name = {_str(self.name)}",
                          f"score = {_number(self.score)}", f"reason = {_str(self.reason)}", ""])


def make_override(manifest: Manifest, student: str, question: str, score: Any, reason: str) -> Override:
    """A manual grade, checked against *manifest*: a roster student, a question ``ID:NAME`` of the
    assignment, a score from 0 to its points, and a reason (one line, at most 200 characters)."""
    manifest.student(student)
    exercise, colon, name = str(question).partition(":")
    points = {(q.exercise, q.name): q.points for q in manifest.questions_for(student)}
    if not colon or (exercise, name) not in points:
        raise InputError(f"question={question!r} is not a question of assignment {manifest.id}; choose from "
                         + ", ".join(f"{e}:{n}" for e, n in points))
    value = parse_number(score, what="score") if not isinstance(score, Fraction) else score
    if not 0 <= value <= points[(exercise, name)]:
        raise InputError(f"score={score} is not from 0 to the question's {_number(points[(exercise, name)])} "
                         "points")
    reason = str(reason).strip()
    if not reason or _unprintable(reason) or len(reason) > 200:
        raise InputError("reason= is missing: say why, in one line of at most 200 characters")
    return Override(student, exercise, name, value, reason)


def read_overrides(content: str, manifest: Manifest, *, path: str) -> tuple[Override, ...]:
    """The manual grades of an ``overrides.toml`` (``[[override]]`` tables, later ones replacing
    earlier ones of the same student and question), each checked as :func:`make_override` does."""
    data = loads(content.removeprefix("\ufeff"), path=path) if content.strip() else {}
    unknown = set(data) - {"override"}
    entries = data.get("override", [])
    if unknown or not isinstance(entries, list):
        raise ParseError("an overrides file holds [[override]] tables only", path=path)
    out: list[Override] = []
    for i, entry in enumerate(entries, 1):
        try:
            if not isinstance(entry, dict) or set(entry) != _OVERRIDE_KEYS:
                raise InputError("an [[override]] has student, exercise, name, score and reason")
            out.append(make_override(manifest, str(entry["student"]), f"{entry['exercise']}:{entry['name']}",
                                     entry["score"], str(entry["reason"])))
        except InputError as e:
            raise ParseError(f"override {i}: {e}", path=path) from None
    return tuple(out)


def load_overrides(path: str | Path, manifest: Manifest) -> tuple[Override, ...]:
    """The manual grades of the file *path*, none when it does not exist (see :func:`read_overrides`)."""
    if not Path(path).exists():
        return ()
    return read_overrides(read_text(path, what="the overrides"), manifest, path=str(path))


# -- grading ---------------------------------------------------------------------------------------


def grade_assignment(
    manifest: Manifest,
    bank: Bank,
    secret: bytes,
    student: str,
    submissions: Sequence[Submission] | None,
    *,
    path: str = "",
    partial: Mapping[str, Fraction] | None = None,
    unreadable: str | None = None,
    source: str = "",
) -> GradeReport:
    """Grade every question of *manifest* exactly once for *student* (see the module docstring).

    *submissions* ``None`` (with *unreadable*, why) grades every question 0: the file could not be read.
    *source* says where *student* came from (the one source of the submission's identity; stated in
    the report, never the ``student =`` written in the file).
    """
    manifest.student(student)
    exercises = manifest_exercises(bank, manifest.questions)
    notes: list[str] = [f"graded for {student!r}, named by {source}"] if source else []
    if unreadable is not None:
        notes.append(f"the file could not be read, so every answer scores 0: {unreadable}")
    first: dict[tuple[str, str], Submission] = {}
    wrote_student = seed_noted = False
    mine = manifest.questions_for(student)
    questions = {(q.exercise, q.name) for q in mine}
    if manifest.pooled:
        notes.append(f"exercises drawn for {student!r}: {', '.join(manifest.drawn(student))}")
    for s in submissions or ():
        where = f"line {s.line}: " if s.line else ""
        if s.student is not None and s.student != student and not wrote_student:
            wrote_student = True
            notes.append(f"the file names student {s.student!r}; it is graded for {student!r}")
        if s.seed is not None and not seed_noted:
            seed_noted = True
            at = f"line {s.seed_line or s.line}: " if s.seed_line or s.line else ""
            notes.append(f"{at}seed ignored: each student's numbers are fixed by the assignment")
        if s.error is not None:
            notes.append(f"{where}entry not graded: {s.error}")
            continue
        key = _question_of(s, exercises)
        if key not in questions:
            name = f"{s.exercise}" + (f": {s.name}" if s.name else "")
            notes.append(f"{where}{name} is not a question of this assignment; ignored")
        elif key in first and _blank(first[key]) and not _blank(s):
            at = f"line {first[key].line}" if first[key].line else "the first entry"
            notes.append(f"{where}{key[0]}: {key[1]} graded here; the blank entry at {at} is ignored")
            first[key] = s
        elif key in first:
            at = f" (line {first[key].line})" if first[key].line else ""
            notes.append(f"{where}second answer to {key[0]}: {key[1]} ignored; the first{at} is graded")
        else:
            first[key] = s
    grades = []
    secret_seeds = {e: assignment_seed(secret, manifest.id, student, e) for e in exercises}
    for q in mine:
        exercise = exercises[q.exercise]
        grades.append(_grade_question(exercise, q, first.get((q.exercise, q.name)), secret_seeds[q.exercise],
                                      partial))
    return GradeReport(tuple(grades), path=path, notes=tuple(notes), student=student, assignment=manifest.id,
                       student_from=source or None)


def _blank(s: Submission) -> bool:
    """An entry left as the template wrote it: no value, or an empty string."""
    return s.value is None or (isinstance(s.value, str) and not s.value.strip())


def _question_of(s: Submission, exercises: Mapping[str, Exercise]) -> tuple[str, str]:
    exercise = exercises.get(s.exercise)
    if exercise is None:
        exercise = next((e for e in exercises.values() if e.formerly and e.formerly == s.exercise), None)
    if exercise is None:
        return s.exercise, s.name or ""
    if s.name is None and len(exercise.answers) == 1:
        return exercise.id, exercise.answers[0].name
    return exercise.id, s.name or ""


def _grade_question(
    exercise: Exercise, q: Question, s: Submission | None, seed: int, partial: Mapping[str, Fraction] | None
) -> Grade:
    blank = s is None or _blank(s)
    shown = Submission(
        exercise=q.exercise,
        value=None if s is None or blank else s.value,
        name=q.name,
        line=None if s is None else s.line,
    )
    if blank:
        variant = exercise.variant(seed)
        answer = variant.answers[q.name]
        return Grade(
            submission=shown,
            correct=False,
            score=Fraction(0),
            max_score=q.points,
            expected=exercise.answer(q.name).shown(answer.value, answer.kind),
            name=q.name,
        )
    try:
        grade = grade_answer(exercise, replace(shown, seed=seed), partial=partial)
    except (CostmodelError, ArithmeticError, ValueError, TypeError, RecursionError) as e:
        # one answer that cannot be graded scores 0 with its reason; the others are graded
        message = str(e) if isinstance(e, CostmodelError) else f"cannot be graded ({type(e).__name__})"
        return Grade(submission=shown, correct=False, score=Fraction(0), max_score=q.points,
                     given=str(shown.value), name=q.name, error=message)
    return replace(grade, submission=shown)
