"""``assignment``: homework bound to a roster (``create``) and the class's grades (``report``).

Grading one submission is ``check --assignment``, in :mod:`costmodel.cli.teaching`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel._files import check_writable, read_text, write_files, write_text
from costmodel.cli.layout import table
from costmodel.cli.options import Json, Partial, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.errors import InputError

if TYPE_CHECKING:
    from costmodel.exercises.gradebook import ClassReport

__all__ = ["app"]

app = typer.Typer()
assignment_app = typer.Typer(
    help="Homework bound to students: create it from a roster, report the class's grades.",
    no_args_is_help=True,
)
app.add_typer(assignment_app, name="assignment")

SecretFile = Annotated[Path, option(
    "--secret-file", metavar="FILE",
    help="The course secret (at least 16 bytes; make one with "
         "head -c 32 /dev/urandom | base64 > course.key).")]
ExerciseFiles = Annotated[list[Path] | None, option(
    "--bank", metavar="PATH", help="More exercise files or folders, added to the shipped ones (repeatable).")]


@assignment_app.command("create")
def create_command(
    exercise_ids: Annotated[str, option("--exercises", metavar="ID[,ID...]",
                                        help="The exercises, in order (see exercise list); {A|B} is a "
                                             "pool: each student draws one of A, B.")],
    roster: Annotated[Path, option("--roster", metavar="CSV",
                                   help="The students: a CSV with a header naming id (and name, email).")],
    secret_file: SecretFile,
    out: Annotated[Path, option("--out", "-o", help="Folder to write the assignment into.")],
    title: Annotated[str | None, option("--title",
                                        help="The title on every sheet (default: the id).")] = None,
    assignment_id: Annotated[str | None, option(
        "--id", help="The assignment's id, part of every variant (default: --out's name).")] = None,
    points: Annotated[list[str] | None, option(
        "--points", metavar="ID:NAME=K",
        help="Points of one question, e.g. ring-bytes:sent=2 (repeatable; default: the bank's).")] = None,
    deadline: Annotated[str | None, option(
        "--deadline", metavar="DATETIME",
        help="Due date-time with its offset, e.g. 2026-12-10T23:59:00Z (Gradescope's created_at is "
             "compared with it).")] = None,
    late_penalty_per_day: Annotated[str | None, option(
        "--late-penalty-per-day", metavar="F",
        help="Fraction of the score taken per started late day, e.g. 0.1 (never below 0).")] = None,
    cutoff: Annotated[str | None, option(
        "--cutoff", metavar="DATETIME", help="A submission after it scores 0.")] = None,
    form: Annotated[str, option("--format", "-f", metavar="markdown|latex",
                                help="The sheets and keys: Markdown, or standalone LaTeX documents "
                                     "(pdflatex compiles them).")] = "markdown",
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    bank_paths: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """Create an assignment: each student's own variants, drawn with the course secret.

    Writes assignment.toml (the manifest), and for each student sheets/ID.md, keys/ID.md (.tex with
    --format latex) and answers/ID.toml (the answers template to fill in). Hand out the sheets and
    templates; keep the keys, the manifest and the secret. --json also prints every key.

    Example: costmodel assignment create --exercises ring-bytes --roster class.csv --secret-file hw.key -o hw1
    """
    from costmodel.exercises import load_bank
    from costmodel.exercises.assignment import (
        bank_fingerprint,
        create_assignment,
        load_roster,
        parse_exercises,
        parse_points,
        read_secret,
    )

    secret = read_secret(secret_file)
    students = load_roster(roster)
    paths = bank_paths or ()
    ids = parse_exercises(exercise_ids)
    name = assignment_id if assignment_id is not None else out.resolve().name
    made = create_assignment(
        load_bank(paths),
        ids,
        students,
        secret,
        assignment_id=name,
        title=title or "",
        points=parse_points(points or ()),
        fingerprint=bank_fingerprint(paths),
        deadline=deadline,
        late_penalty_per_day=late_penalty_per_day,
        cutoff=cutoff,
        format=form,
    )
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file, not a folder")
    files = made.files()
    write_files(out, files, force=force)
    created = _Created(made, str(out), len(files))
    emit(created, as_json=as_json)


@dataclass(frozen=True)
class _Created:
    made: Any
    out: str
    files: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.made.to_dict(), "out": self.out, "files": self.files}


@renders("costmodel.cli.assignment._Created")
def _render_created(created: _Created) -> Rendered:
    m, out = created.made.manifest, Path(created.out)
    n = len(m.students)
    kind = " in LaTeX" if created.made.format == "latex" else ""
    written = table("wrote", "holding", no_wrap=False)
    summary = f"{len(m.questions)} questions, {_text(m.max_score)} points, {n} students"
    written.add_row(str(out / "assignment.toml"), f"the manifest of {m.id}: {summary}")
    written.add_row(f"{out / 'sheets'}/", f"{n} problem sheets{kind} (hand out)")
    written.add_row(f"{out / 'answers'}/", f"{n} answers templates (hand out)")
    written.add_row(f"{out / 'keys'}/", f"{n} answer keys{kind} (keep)")
    return written, ()


def _text(x: Any) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.4g}"


@assignment_app.command("report")
def report_command(
    manifest_path: Annotated[
        Path, typer.Argument(metavar="ASSIGNMENT.toml", help="The assignment's manifest.")
    ],
    submissions: Annotated[
        list[Path], typer.Argument(metavar="SUBMISSIONS...", help="The students' answers files.")
    ],
    secret_file: SecretFile,
    out: Annotated[Path | None, option("--out", "-o", help="Write the gradebook (CSV) to this file.")] = None,
    out_format: Annotated[str, option(
        "--out-format", metavar="plain|canvas|moodle",
        help="The gradebook's CSV form: plain (id, name, email, points per question, total), or "
             "Canvas's or Moodle's grade import.")] = "plain",
    student_from: Annotated[
        str,
        typer.Option(
            "--student-from",
            metavar="name|field",
            help="Whose a submission is: its file name (answers/ID.toml) or the student field written in it "
            "(trusted: use only for files you collected yourself).",
        ),
    ] = "name",
    partial: Partial = None,
    plot: Annotated[Path | None, option(
        "--plot", metavar="FILE.png",
        help="Also draw the mistakes as a bar chart (needs the plot extra).")] = None,
    allow_bank_change: Annotated[
        bool,
        typer.Option("--allow-bank-change", help="Grade even though the exercise bank changed since create."),
    ] = False,
    overrides_path: Annotated[Path | None, option(
        "--overrides", metavar="FILE",
        help="Manual grades to apply (default: overrides.toml beside the manifest, if it exists).")] = None,
    metadata: Annotated[list[Path] | None, option(
        "--metadata", metavar="JSON",
        help="Gradescope's submission_metadata.json of a submission (repeatable): its created_at is the "
             "submission time the manifest's deadline applies to.")] = None,
    allow_incomplete: Annotated[
        bool,
        typer.Option("--allow-incomplete",
                     help="Exit 0 even when some files could not be read or attributed (still listed)."),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    bank_paths: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """Grade a class's submissions: the gradebook, each question's success rate, the mistakes made.

    Each roster student is one row; a student without a submission scores 0 (status missing), a
    file that cannot be read scores 0 (status unreadable). Every file that cannot be read or
    attributed (its name or student = names no roster student, or the two disagree) is listed,
    with the reason on stderr, and the exit status is 1 unless --allow-incomplete.

    Example: costmodel assignment report hw1/assignment.toml ada.toml grace.toml --secret-file hw.key
    """
    import sys

    from costmodel.cli.teaching import Written, partial_credit, read_submission
    from costmodel.exercises import load_bank
    from costmodel.exercises.assignment import (
        OVERRIDES,
        STUDENT_FROM,
        bank_fingerprint,
        check_bank,
        check_secret,
        load_manifest,
        load_overrides,
        read_secret,
        submission_times,
    )
    from costmodel.exercises.gradebook import GRADEBOOK_FORMATS, grade_class

    if student_from not in STUDENT_FROM:
        raise InputError(f"--student-from {student_from!r}: choose name or field")
    if out_format not in GRADEBOOK_FORMATS:
        raise InputError(f"--out-format {out_format!r}: choose {', '.join(GRADEBOOK_FORMATS)}")
    credit = partial_credit(partial)
    secret = read_secret(secret_file)
    manifest = load_manifest(manifest_path)
    check_secret(manifest, secret)
    paths = bank_paths or ()
    check_bank(manifest, bank_fingerprint(paths), allow_change=allow_bank_change)
    if out is not None:
        check_writable(out, force=force)
    if plot is not None:
        from costmodel.plots._figure import check_output

        check_output(plot, force=force)
    overrides = load_overrides(overrides_path or manifest_path.parent / OVERRIDES, manifest)
    times = submission_times(metadata or (), manifest)
    files = [(str(path), *read_submission(path)) for path in submissions]
    result = grade_class(manifest, load_bank(paths), secret, files, student_from=student_from, partial=credit,
                         overrides=overrides, submitted=times)
    problems = result.problems
    if out is not None:
        write_text(out, result.to_csv(out_format))
    if plot is not None:
        _plot(result, plot)
    emit(result, as_json=as_json)
    written = tuple(str(path) for path in (out, plot) if path is not None)
    if written and not as_json:
        emit(Written(written), as_json=False)
    label = "warning" if allow_incomplete else "error"
    for file, problem in problems:
        print(f"{label}: {file}: {problem}", file=sys.stderr)
    if problems and not allow_incomplete:
        print(f"error: {len(problems)} file{'s' if len(problems) != 1 else ''} could not be read or "
              "attributed (listed above); fix them, or pass --allow-incomplete to accept the report",
              file=sys.stderr)
        raise typer.Exit(1)


@assignment_app.command("override")
def override_command(
    manifest_path: Annotated[
        Path, typer.Argument(metavar="ASSIGNMENT.toml", help="The assignment's manifest.")
    ],
    student: Annotated[str, option("--student", metavar="ID", help="The roster id of the student.")],
    question: Annotated[str, option("--question", metavar="ID:NAME",
                                    help="The question, e.g. ring-bytes:sent (see the manifest).")],
    score: Annotated[str, option("--score", metavar="K", help="The points given, from 0 to the question's.")],
    reason: Annotated[str, option("--reason", metavar="TEXT", help="Why (shown in the report).")],
    overrides_path: Annotated[Path | None, option(
        "--overrides", metavar="FILE",
        help="Where manual grades are recorded (default: overrides.toml beside the manifest).")] = None,
    as_json: Json = False,
) -> None:
    """Record a manual grade of one question for one student, with the reason.

    The grade is appended to overrides.toml beside the manifest (a later one for the same student
    and question replaces it); assignment report applies it, marks the student's status
    overridden, and lists every override with its reason.

    Example: costmodel assignment override hw1/assignment.toml --student ada --question ring-bytes:sent --score 1 --reason regraded --overrides fixes.toml
    """  # noqa: E501 - an example is one line
    from costmodel.exercises.assignment import OVERRIDES, load_manifest, load_overrides, make_override

    manifest = load_manifest(manifest_path)
    target = overrides_path or manifest_path.parent / OVERRIDES
    before = load_overrides(target, manifest)  # refuse to append to a file that is not one
    made = make_override(manifest, student, question, score, reason)
    text = read_text(target, what="the overrides") if target.exists() else \
        f"# Manual grades of assignment {manifest.id}, applied by costmodel assignment report.\n"
    write_text(target, text.rstrip("\n") + "\n\n" + made.to_toml())
    emit(_Overridden(made, str(target), len(before) + 1), as_json=as_json)


@assignment_app.command("export")
def export_command(
    manifest_path: Annotated[
        Path, typer.Argument(metavar="ASSIGNMENT.toml", help="The assignment's manifest.")
    ],
    secret_file: SecretFile,
    prairielearn: Annotated[Path, option(
        "--prairielearn", metavar="DIR",
        help="Write PrairieLearn questions (questions/ID/EXERCISE/) and the assessment "
             "(assessments/ID/infoAssessment.json) into this folder, to copy into a course.")],
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    bank_paths: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """Export an assignment to PrairieLearn: one question per exercise, with the class's variants.

    Each question's server.py holds the variant of every roster student (by the assignment's seed
    rule, so the course secret is needed; it is never written) and picks one by PrairieLearn's
    variant seed; the answers carry the manifest's tolerances (rtol, atol, significant figures) and
    units, and grade() re-grades numbers exactly. Question uuids depend only on the assignment and
    exercise ids, so exporting again (with --force) updates the same questions.

    Example: costmodel assignment export hw1/assignment.toml --secret-file hw.key --prairielearn pl/
    """
    from costmodel.exercises import load_bank
    from costmodel.exercises.assignment import (
        bank_fingerprint,
        check_bank,
        check_secret,
        load_manifest,
        read_secret,
    )
    from costmodel.exercises.prairielearn import export_prairielearn

    secret = read_secret(secret_file)
    manifest = load_manifest(manifest_path)
    check_secret(manifest, secret)
    paths = bank_paths or ()
    check_bank(manifest, bank_fingerprint(paths), allow_change=False)
    if prairielearn.exists() and not prairielearn.is_dir():
        raise InputError(f"--prairielearn {str(prairielearn)!r} is a file, not a folder")
    made = export_prairielearn(manifest, load_bank(paths), secret)
    write_files(prairielearn, made.files(), force=force)
    emit(_Exported(made, str(prairielearn)), as_json=as_json)


@dataclass(frozen=True)
class _Exported:
    made: Any
    out: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.made.to_dict(), "out": self.out}


@renders("costmodel.cli.assignment._Exported")
def _render_exported(exported: _Exported) -> Rendered:
    made, out = exported.made, Path(exported.out)
    written = table("question", "uuid", "points", "answers", numeric=("points",), no_wrap=False)
    for q in made.questions:
        written.add_row(q.qid, q.uuid[:8] + "…", _text(q.points), ", ".join(q.answers))
    notes = (f"{len(made.questions)} questions in {out / 'questions' / made.assignment}/, "
             f"{made.variants} variants each (one per roster student)",
             f"the assessment: {out / 'assessments' / made.assignment / 'infoAssessment.json'}")
    return written, notes


@dataclass(frozen=True)
class _Overridden:
    override: Any
    file: str
    count: int

    def to_dict(self) -> dict[str, Any]:
        o = self.override
        return {"student": o.student, "question": o.question, "score": _real(o.score), "why": o.reason,
                "file": self.file, "overrides": self.count}


def _real(x: Any) -> Any:
    from costmodel._json import real

    return real(x)


@renders("costmodel.cli.assignment._Overridden")
def _render_overridden(done: _Overridden) -> Rendered:
    o = done.override
    out = table("recorded", "", no_wrap=False)
    out.add_row("student", o.student)
    out.add_row("question", o.question)
    out.add_row("score", _text(o.score))
    out.add_row("reason", o.reason)
    out.add_row("in", f"{done.file} ({done.count} override{'s' if done.count != 1 else ''})")
    return out, ()


@renders("costmodel.exercises.gradebook.ClassReport")
def _render(result: ClassReport) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    rows = result.rows()
    short = [f"q{i}" for i in range(1, len(result.columns()) + 1)]
    pooled = result.manifest.pooled
    drew = ("drew",) if pooled else ()
    book = table("student", "total", "status", *short, *drew, numeric=("total", *short),
                 optional=tuple(reversed(short)))
    for student, scores, total, status in rows:
        groups = result.manifest.exercise_groups()
        which = (", ".join(m for m, g in zip(result.manifest.drawn(student), groups, strict=True)
                           if len(g) > 1),) if pooled else ()
        book.add_row(
            student, f"{_text(total)}/{_text(result.manifest.max_score)}", status,
            *(_text(s) for s in scores), *which,
        )
    rates = table("", "question", "points", "right", "success", numeric=("points", "right", "success"))
    names = (list(result.columns()) if result.manifest.pooled
             else [f"{q.exercise}: {q.name}" for q in result.manifest.questions])
    for label, name, points, (_, right, n) in zip(short, names, result.column_points(), result.success(),
                                                  strict=True):
        rates.add_row(
            label,
            name,
            _text(points),
            f"{right}/{n}",
            f"{100 * right / n:.0f} %" if n else "-",
        )
    parts: list[Any] = [book, Text(""), rates]
    if result.manifest.deadline is not None:
        late = table("student", "late policy", no_wrap=False)
        for student, *_ in rows:
            if result.late_note(student):
                late.add_row(student, result.late_note(student))
        parts += [Text(""), late]
    if result.overrides:
        manual = table("student", "question", "score", "reason", numeric=("score",), no_wrap=False)
        for o in result.overrides:
            manual.add_row(o.student, o.question, _text(o.score), o.reason)
        parts += [Text(""), manual]
    if result.problems:
        unread = table("file", "problem", no_wrap=False)
        for file, why in result.problems:
            unread.add_row(file, why)
        parts += [Text(""), unread]
    mistakes = result.mistakes()
    if mistakes:
        histogram = table("mistake", "answers", "", numeric=("answers",))
        top = mistakes[0][1]
        for mistake, n in mistakes:
            histogram.add_row(mistake, str(n), "█" * max(1, round(20 * n / top)))
        parts += [Text(""), histogram]
    return Group(*parts), (f"each file's student: {result.student_from}",) if result.student_from else ()


def _plot(result: ClassReport, path: Path) -> None:
    from costmodel.plots._figure import figure_style, save

    mistakes = result.mistakes() or [("(none diagnosed)", 0)]
    with figure_style() as plt:
        fig, ax = plt.subplots(figsize=(8, 0.4 * len(mistakes) + 1.5))
        ax.barh([m for m, _ in mistakes][::-1], [n for _, n in mistakes][::-1], color="tab:blue")
        ax.set_xlabel("answers diagnosed")
        ax.set_title(f"{result.manifest.title}: mistakes across the class")
        fig.tight_layout()
        save(fig, path, f"{result.manifest.title}: mistakes")
