"""Teaching commands: ``example`` (worked examples), ``exercise`` (variants, sheets) and ``check`` (grading).

Rendering lives here too, declared with :func:`costmodel.cli.render.renders`; rich is
imported only when a table is printed, so ``--json`` loads no rich.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel._files import read_text, write_files
from costmodel.cli import complete
from costmodel.cli.flags import Worded
from costmodel.cli.layout import markup, one_line, table
from costmodel.cli.options import Json, Partial, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.errors import CostmodelError, InputError, ParseError

if TYPE_CHECKING:
    from costmodel.examples.work import Worked
    from costmodel.exercises.grading import GradeReport
    from costmodel.exercises.validate import ReadBack

__all__ = ["Written", "app"]

app = typer.Typer()
exercise_app = typer.Typer(help="List exercises, show one student's variant, or write a problem sheet.",
                           no_args_is_help=True)
app.add_typer(exercise_app, name="exercise")

Markdown = Annotated[bool, typer.Option("--markdown", help="Print Markdown instead of a table.")]
Seed = Annotated[int | None, option(
    "--seed", "-s", min=0, max=2**63 - 1,
    help="The student's variant (any whole number); without it, the exercise's own numbers.")]
Topic = Annotated[str | None, option("--topic", "-t", help="Only this topic.")]
ExerciseFiles = Annotated[list[Path] | None, option(
    "--exercises", metavar="PATH",
    help="More exercise files or folders, added to the shipped ones (repeatable).")]


def _bank(paths: list[Path] | None) -> Any:
    from costmodel.exercises import load_bank

    return load_bank(paths or ())


@dataclass(frozen=True)
class _Listing:
    """A list of names for ``--list``-style output (JSON key *key*)."""

    key: str
    rows: tuple[dict[str, Any], ...]
    columns: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {self.key: list(self.rows)}


def _settings(pairs: Iterable[str]) -> dict[str, str]:
    """The ``--set`` pairs: ``["p=32", "n=1GiB"]`` → ``{"p": "32", "n": "1GiB"}``.

    The values stay text, for the kinds of the example's givens to parse.

    >>> _settings(["p=32", " n = 1GiB "])
    {'p': '32', 'n': '1GiB'}
    """
    settings: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(f"--set {pair!r} is not NAME=VALUE; write e.g. --set p=32 or --set n=1GiB")
        settings[name.strip()] = value.strip()
    return settings


# -- example ---------------------------------------------------------------------------------------


@app.command("example")
def example_command(
    name: Annotated[str | None, typer.Argument(help="The example's name (see --list).",
                                               autocompletion=complete.examples,
                                               show_default=False)] = None,
    list_: Annotated[bool, typer.Option("--list", "-l", help="List the examples.")] = False,
    settings: Annotated[list[str] | None, option(
        "--set", metavar="NAME=VALUE",
        help="Change a given, with its unit (repeatable): --set p=32 --set n=1GiB.")] = None,
    markdown: Markdown = False,
    as_json: Json = False,
) -> None:
    """Work an example step by step: givens, formula, substitution, result.

    Every number is computed by the library, so --set recomputes the example with new givens.

    Example: costmodel example ring-bytes --set p=8 --set n=64MB

    Example: costmodel example --list
    """
    from costmodel.examples import all_examples, get

    if list_ or name is None:
        rows = tuple({"name": e.name, "title": e.title, "source": e.source, "topic": e.topic}
                     for e in all_examples())
        emit(_Listing("examples", rows, ("name", "title", "source")), as_json=as_json)
        return
    try:
        worked = get(name).run(_settings(settings or ()))
    except CostmodelError as e:  # the givens are named as --set names them: the user's own words
        raise Worded(str(e)) from None
    emit(worked, as_json=as_json, markdown=markdown)


# -- exercise --------------------------------------------------------------------------------------


@exercise_app.command("list")
def exercise_list(
    topic: Topic = None,
    exercises: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """List the exercises: id, topic, title.

    Example: costmodel exercise list --topic crossovers
    """
    bank = _bank(exercises)
    if topic is not None and topic not in bank.topics():
        from costmodel.errors import UnknownNameError

        raise UnknownNameError("topic", topic, bank.topics())
    rows = tuple({"id": e.id, "topic": e.topic, "title": e.title, "source": e.source}
                 for e in bank if topic is None or e.topic == topic)
    emit(_Listing("exercises", rows, ("id", "topic", "title")), as_json=as_json)


@exercise_app.command("show")
def exercise_show(
    exercise_id: Annotated[str, typer.Argument(metavar="ID", help="The exercise (see exercise list).",
                                               autocompletion=complete.exercises)],
    seed: Seed = None,
    solution: Annotated[bool, typer.Option("--solution",
                                            help="Also show the answers and the worked solution.")] = False,
    exercises: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """Show one exercise as a student with this seed sees it (--solution: with answers and working).

    The same seed always gives the same numbers; JSON always holds the answers.

    Example: costmodel exercise show ring-bytes --seed 17 --solution
    """
    variant = _bank(exercises).get(exercise_id).variant(seed)
    emit(_Shown(variant, solution), as_json=as_json)


@dataclass(frozen=True)
class _Shown:
    variant: Any
    solution: bool

    def to_dict(self) -> dict[str, Any]:
        return self.variant.to_dict()


@exercise_app.command("sheet")
def exercise_sheet(
    seed: Seed = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the sheet and its key into.")]
    = Path("."),
    ids: Annotated[list[str] | None, option("--id", help="Only these exercises (repeatable).")] = None,
    topic: Topic = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing files.")] = False,
    form: Annotated[str, typer.Option("--format", "-f", metavar="markdown|latex",
                                      help="Markdown, or a standalone LaTeX document.")] = "markdown",
    exercises: ExerciseFiles = None,
    as_json: Json = False,
) -> None:
    """Write a problem sheet and its answer key with worked solutions, for one seed.

    Every question names its answer, unit and precision. Files: sheet-SEED.md and key-SEED.md
    (sheet-SEED.tex and key-SEED.tex with --format latex) in --out, never overwritten without --force.

    Example: costmodel exercise sheet --seed 17 --format latex --out handouts/
    """
    from costmodel.exercises import problem_sheet
    from costmodel.exercises.sheet import FORMATS

    sheet = problem_sheet(_bank(exercises), seed=seed, ids=ids, topic=topic, format=form)
    label = "default" if seed is None else str(seed)
    ext = FORMATS[form]
    files = {f"sheet-{label}.{ext}": sheet.problems, f"key-{label}.{ext}": sheet.key}
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file, not a folder")
    write_files(out, files, force=force)  # --out is made too
    written = tuple(str(out / name) for name in files)
    emit(Written(written, seed, tuple(v.exercise.id for v in sheet.variants)), as_json=as_json)


@dataclass(frozen=True)
class Written:
    """The files a command wrote (``exercise sheet``: for which seed and exercises)."""

    files: tuple[str, ...]
    seed: int | None = None
    exercises: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "exercises": list(self.exercises), "files": list(self.files)}


@renders("costmodel.cli.teaching.Written")
def _render_written(written: Written) -> Rendered:
    from rich.text import Text

    return Text("\n".join(f"wrote {path}" for path in written.files)), ()


@exercise_app.command("lint")
def exercise_lint(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Exercise files to check.")],
    as_json: Json = False,
) -> int:
    """Check exercise files as the bank loads them, and list every problem, not only the first.

    Each exercise's answers are computed for its own numbers and for seeds 0 to 19; unknown keys,
    givens, placeholders and answer names, a non-boolean exact, a unit of the wrong dimension and
    an id the shipped bank already has are reported, one line each: error: FILE:LINE: message.
    Exit status 0 when every file is clean, 1 when problems were found, 2 when a file cannot be read.

    Example: costmodel exercise lint my-exercises.toml
    """
    from costmodel.exercises import load_bank
    from costmodel.exercises.bank import lint_exercises

    rows: list[dict[str, Any]] = []
    unreadable, ids = False, {e.id: e.path for e in load_bank()}
    for file in files:
        try:
            content = read_text(file, what="exercises")
        except ParseError as e:
            unreadable = True
            rows.append({"path": str(file), "exercises": 0, "problems": [str(e)]})
            continue
        good, found = lint_exercises(content, path=str(file))
        problems = [str(e) for e in found]
        clean = 0
        for exercise in good:
            if exercise.id in ids:
                problems.append(f"{file}: exercise id {exercise.id!r} is also defined in {ids[exercise.id]}")
            else:
                ids[exercise.id], clean = str(file), clean + 1
        rows.append({"path": str(file), "exercises": clean, "problems": problems})
    emit(_Lint(tuple(rows)), as_json=as_json)
    for row in rows:
        for problem in row["problems"]:
            print(f"error: {problem}", file=sys.stderr)
    return 2 if unreadable else 1 if any(r["problems"] for r in rows) else 0


@dataclass(frozen=True)
class _Lint:
    """What ``exercise lint`` found, file by file."""

    files: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"files": list(self.files), "problems": sum(len(f["problems"]) for f in self.files)}


# -- check -----------------------------------------------------------------------------------------


def partial_credit(values: list[str] | None) -> dict[str, Fraction]:
    """The credits of ``--partial MISTAKE=CREDIT`` options by mistake (``check`` and ``assignment grade``)."""
    from costmodel.exact import parse_number
    from costmodel.exercises import MISTAKES

    credit = {}
    for pair in values or ():
        mistake, sep, value = pair.partition("=")
        if not sep or mistake not in MISTAKES:
            raise InputError(f"--partial {pair!r} is not MISTAKE=CREDIT with a mistake from "
                             f"{', '.join(MISTAKES)}")
        number = parse_number(value, what="credit")
        if not 0 <= number <= 1:
            raise InputError(f"--partial {pair!r}: credit is a fraction from 0 to 1")
        credit[mistake] = number
    return credit


@app.command("check")
def check_command(
    answers: Annotated[Path, typer.Argument(metavar="ANSWERS.toml", help="The answers file.")],
    partial: Partial = None,
    gradescope: Annotated[bool, typer.Option("--gradescope",
                                             help="Print Gradescope's results.json.")] = False,
    assignment: Annotated[Path | None, option(
        "--assignment", metavar="ASSIGNMENT.toml",
        help="Grade against this assignment: every question once, the student's own variant.")] = None,
    secret_file: Annotated[Path | None, option(
        "--secret-file", metavar="FILE",
        help="The course secret the assignment was created with (with --assignment).")] = None,
    student: Annotated[str | None, option(
        "--student", metavar="ID",
        help="The roster id of the student whose file this is (with --assignment).")] = None,
    metadata: Annotated[Path | None, option(
        "--metadata", metavar="JSON",
        help="Gradescope's submission_metadata.json: the student is the submitter (sid or email).")] = None,
    hide_expected: Annotated[bool, typer.Option(
        "--hide-expected",
        help="Show what a student may see: no expected value, and each diagnosis names the kind of "
             "slip without its factor (text, --json and --gradescope).")] = False,
    allow_bank_change: Annotated[bool, typer.Option(
        "--allow-bank-change",
        help="Grade even though the exercise bank changed since the assignment was made.")]
    = False,
    jobs: Annotated[int | None, option(
        "--jobs", "-j", min=1,
        help="Processes grading a large file (default: one per CPU from 2000 answers on).")] = None,
    validate: Annotated[bool, typer.Option(
        "--validate", help="Only show how each answer reads (nothing graded); exit 2 if any cannot be read.",
    )] = False,
    exercises: ExerciseFiles = None,
    as_json: Json = False,
) -> int:
    """Grade answers: units converted, tolerances applied, and every known mistake diagnosed.

    With --assignment, every question of the assignment is graded once against the student's own
    variant (the student named by --student or --metadata, never by the file); a missing answer
    scores 0, and duplicates, other entries and a seed in the file are ignored and reported.

    Exit status 0 when every entry could be graded (right or wrong), 1 when some entries were
    malformed (they are reported; the rest are graded), 2 when the file cannot be read. With
    --validate nothing is graded: each answer is shown as read, and the status is 2 when any
    entry cannot be read (each problem on its own error: line).

    Example: costmodel check answers.toml --partial binary-prefix=0.5 --json

    Example: costmodel check answers.toml --validate
    """
    from costmodel.exercises import check, load_answers

    path = str(answers)
    if validate:
        if gradescope:
            raise InputError("--validate shows how a file reads; it cannot be combined with --gradescope")
        submissions = load_answers(answers)
        return _validate(submissions, _bank(exercises), path, as_json)
    if assignment is not None:
        return _check_assignment(answers, assignment, secret_file, student, metadata, partial_credit(partial),
                                 exercises, gradescope=gradescope, hide_expected=hide_expected,
                                 allow_bank_change=allow_bank_change, as_json=as_json)
    for name, given in (("--secret-file", secret_file), ("--student", student), ("--metadata", metadata)):
        if given is not None:
            raise InputError(f"{name} goes with --assignment")
    try:
        credit = partial_credit(partial)
        submissions = load_answers(answers)
        report = check(submissions, bank=_bank(exercises), partial=credit, path=path, jobs=jobs)
    except Exception as e:
        if gradescope:  # Gradescope needs its results.json even then: score 0 and the reason
            from costmodel.exercises.grading import unreadable_gradescope

            why = str(e) if isinstance(e, InputError) else f"the grader failed ({type(e).__name__})"
            emit(_Gradescope(unreadable_gradescope(why)), as_json=True)
        raise
    return _print_check(report, path, gradescope=gradescope, hide_expected=hide_expected, as_json=as_json)


@dataclass(frozen=True)
class _Gradescope:
    """Gradescope's results.json: printed as Gradescope reads it, whatever else the command says."""

    results: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.results

    def to_json(self) -> str:
        return json.dumps(self.results, ensure_ascii=False)


def _print_check(report: GradeReport, path: str, *, gradescope: bool, hide_expected: bool,
                 as_json: bool) -> int:
    if hide_expected:
        report = report.hide_expected()
    if gradescope:
        emit(_Gradescope(report.to_gradescope()), as_json=True)
    else:
        emit(report, as_json=as_json)
    for g in report.errors:
        where = f"{path}:{g.submission.line}" if g.submission.line else path
        print(f"error: {where}: {g.error}", file=sys.stderr)
    return 1 if report.errors else 0


def _check_assignment(answers: Path, manifest_path: Path, secret_file: Path | None, student: str | None,
                      metadata: Path | None, credit: dict[str, Fraction], exercises: list[Path] | None, *,
                      gradescope: bool, hide_expected: bool, allow_bank_change: bool, as_json: bool) -> int:
    """``check --assignment``: in Gradescope mode a valid results.json is printed whatever goes wrong."""
    from costmodel.errors import CostmodelError
    from costmodel.exercises.assignment import (
        bank_fingerprint,
        check_bank,
        check_secret,
        grade_assignment,
        late_policy,
        load_identity,
        load_manifest,
        read_secret,
        submission_time,
    )

    path = str(answers)
    manifest = None
    try:
        if secret_file is None:
            raise InputError("--assignment needs --secret-file, the course secret it was created with")
        if (student is None) == (metadata is None):
            raise InputError("name the student with --student ID or Gradescope's --metadata "
                             "submission_metadata.json (one of them)")
        manifest = load_manifest(manifest_path)
        secret = read_secret(secret_file)
        check_secret(manifest, secret)
        check_bank(manifest, bank_fingerprint(exercises or ()), allow_change=allow_bank_change)
        source = "--student on the command line"
        if metadata is not None:
            identity = load_identity(metadata, manifest)
            student, source = identity.student, identity.source
        assert student is not None
        manifest.student(student)
        submissions, why = read_submission(answers)
        report = grade_assignment(manifest, _bank(exercises), secret, student, submissions, path=path,
                                  partial=credit, unreadable=why, source=source)
        if manifest.deadline is not None:
            submitted = None if metadata is None else submission_time(
                read_text(metadata, what="the metadata"), path=str(metadata))
            factor, note = late_policy(manifest, submitted)
            report = replace(report, late_factor=factor, notes=(*report.notes, f"late policy: {note}"))
    except CostmodelError as e:
        if gradescope:  # the autograder is misconfigured: still a results.json Gradescope can show
            from costmodel.exercises.assignment import IdentityError

            total = manifest.max_score if manifest is not None else Fraction(0)
            why = "the submitter could not be matched to one student of the roster (by id and email)" \
                if isinstance(e, IdentityError) else "the autograder is not set up right"
            emit(_Gradescope({"score": 0, "max_score": _score_json(total),
                              "output": f"This submission could not be graded: {why}. "
                                        "Your instructor can see why in the autograder's output.",
                              "visibility": "visible", "stdout_visibility": "hidden", "tests": []}),
                 as_json=True)
        raise
    if why is not None and not gradescope:
        raise InputError(why)
    rc = _print_check(report, path, gradescope=gradescope, hide_expected=hide_expected, as_json=as_json)
    malformed = [s for s in submissions or () if s.error is not None]
    for s in malformed:
        where = f"{path}:{s.line}" if s.line else path
        print(f"error: {where}: {s.error}", file=sys.stderr)
    if why is not None:
        print(f"error: {why}", file=sys.stderr)
        return 1
    return 1 if malformed else rc


def read_submission(answers: Path) -> tuple[list[Any] | None, str | None]:
    """The entries of a student's answers file, or None and why it cannot be read (never raised)."""
    from costmodel.exercises import load_answers

    try:
        return load_answers(answers), None
    except ParseError as e:
        return None, str(e)


def _score_json(x: Fraction) -> Any:
    from costmodel._json import real

    return real(x)
def _validate(submissions: Any, bank: Any, path: str, as_json: bool) -> int:
    from costmodel.exercises.validate import read_back

    result = read_back(submissions, bank)
    emit(result, as_json=as_json)
    for r in result.errors:
        where = f"{path}:{r.submission.line}" if r.submission.line else path
        print(f"error: {where}: {r.error}", file=sys.stderr)
    return 0 if result.ok else 2




# -- rendering -------------------------------------------------------------------------------------


@renders("costmodel.cli.teaching._Listing")
def _render_listing(listing: _Listing) -> Rendered:
    out = table(*listing.columns, no_wrap=False)
    for row in listing.rows:
        out.add_row(*(str(row[c]) for c in listing.columns))
    return out, ()


@renders("costmodel.examples.work.Worked", form="markdown")
def _worked_markdown(worked: Worked) -> str:
    return str(worked.to_markdown())


@renders("costmodel.examples.work.Worked")
def _render_worked(worked: Worked) -> Rendered:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.examples.work import show_value

    head = markup(f"[bold]{escape(worked.title)}[/bold]\n[dim]{escape(worked.source)}[/dim]")
    givens = table("given", "value", no_wrap=("value",))
    for g, v in worked.givens:
        givens.add_row(f"{g.label}" + (f" ({g.symbol})" if g.symbol else ""), show_value(v, g.kind))
    steps = table("#", "step", "working", "value", numeric=("#", "value"))
    for i, s in enumerate(worked.steps, 1):
        steps.add_row(str(i), s.text, s.expression, show_value(s.value, s.kind))
    answers = markup("\n".join(f"[bold]{escape(a.label)}:[/bold] {escape(show_value(a.value, a.kind))}"
                                for a in worked.answers.values()))
    return Group(head, Text(""), givens, Text(""), steps, Text(""), answers), ()


@renders("costmodel.cli.teaching._Shown")
def _render_shown(shown: _Shown) -> Rendered:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    v = shown.variant
    seed = "its own numbers" if v.seed is None else f"seed {v.seed}"
    parts: list[Any] = [markup(f"[bold]{escape(v.exercise.title)}[/bold]  "
                               f"[dim]{escape(v.exercise.id)} · {seed}[/dim]"),
                        Text(""), Text(v.statement), Text("")]
    for spec in v.exercise.answers:
        answer = v.worked.answers[spec.name]
        value = spec.shown(answer.value, answer.kind) if shown.solution else "______"
        parts.append(Text(f"{spec.blank(answer.label, answer.kind, answer.value)}: {value}"))
    if shown.solution:
        from costmodel.exercises.sheet import key_working

        body, _ = _render_worked(key_working(v))
        parts += [Text(""), body]
    return Group(*parts), ()


_LONG_CELL = 24
"""A given or expected value longer than this (a formula) may fold in the check table."""


@renders("costmodel.exercises.grading.GradeReport")
def _render_report(report: GradeReport) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    seeds = report.assignment is None
    expected = () if report.hidden else ("expected",)
    # a formula (a long given or expected) folds at its spaces, so the diagnosis keeps its room;
    # a number with its unit is short and stays on one line
    long = any(len(str(g.given)) > _LONG_CELL or len(g.expected) > _LONG_CELL for g in report.grades)
    out = table("exercise", *(("seed",) if seeds else ()), "answer", "given", *expected, "score",
                "diagnosis",
                no_wrap=("exercise", "seed", "answer", "score", *(() if long else ("given", "expected"))))
    for g in report.grades:
        s = g.submission
        mark = Text("✓", style="green") if g.correct else Text("✗", style="red")
        diagnosis = "; ".join(f"{d.mistake}: {d.message}" for d in g.diagnosis) if not g.error else \
            Text.assemble(("error:", "red"), f" {g.error}")
        given = Text.assemble(mark, f" {one_line(g.given)}") if s.value is not None or g.error else \
            Text.assemble(("✗", "red"), " (no answer)")
        seed = ("" if s.seed is None else str(s.seed),) if seeds else ()
        out.add_row(one_line(s.exercise), *seed, one_line(g.name or ""), given,
                    *((g.expected,) if expected else ()),
                    f"{_score(g.score)}/{_score(g.max_score)}", diagnosis)
    right = sum(1 for g in report.grades if g.correct)
    summary = Text(f"{right} of {len(report.grades)} correct · score {_score(report.score)} of "
                   f"{_score(report.max_score)}", style="bold")
    if report.student is not None:
        summary = Text(f"{report.student}: ", style="bold") + summary
    parts: list[Any] = [out, Text(""), summary]
    if report.students:
        students = table("student", "score", no_wrap=("score",))
        for name, (got, out_of) in report.students.items():
            students.add_row(name, f"{_score(got)}/{_score(out_of)}")
        parts += [Text(""), students]
    return Group(*parts), tuple(report.notes)


@renders("costmodel.cli.teaching._Lint")
def _render_lint(lint: _Lint) -> Rendered:
    out = table("file", "good exercises", "problems", numeric=("good exercises", "problems"), no_wrap=False)
    for f in lint.files:
        out.add_row(f["path"], str(f["exercises"]), str(len(f["problems"])))
    return out, ()


@renders("costmodel.exercises.validate.ReadBack")
def _render_read_back(result: ReadBack) -> Rendered:
    from rich.console import Group
    from rich.text import Text

    out = table("line", "exercise", "seed", "answer", "given", "read as",
                numeric=("line",), no_wrap=("line", "exercise", "seed", "answer"))
    for r in result.readings:
        s = r.submission
        read = r.read if r.error is None else Text.assemble(("error:", "red"), f" {r.error}")
        out.add_row("" if s.line is None else str(s.line), one_line(s.exercise),
                    "" if s.seed is None else str(s.seed), one_line(r.name or ""),
                    "" if s.value is None else one_line(str(s.value)), read)
    count = len(result.readings)
    summary = f"all {count} answers read; nothing was graded" if result.ok else \
        f"{len(result.errors)} of {count} answers cannot be read; nothing was graded"
    return Group(out, Text(""), Text(summary, style="bold")), ()


def _score(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.3g}"
