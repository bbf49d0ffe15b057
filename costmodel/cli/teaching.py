"""Teaching commands: ``example`` (worked examples), ``exercise`` (variants, sheets) and ``check`` (grading).

Rendering lives here too, registered with :func:`costmodel.cli.render.render`
only when a table is printed; ``--json`` loads no rich.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any

import typer

from costmodel._files import check_writable
from costmodel.cli import complete
from costmodel.cli.options import Json
from costmodel.cli.output import emit, markup, table
from costmodel.errors import InputError, ParseError

__all__ = ["app"]

app = typer.Typer()
exercise_app = typer.Typer(help="List exercises, show one student's variant, or write a problem sheet.",
                           no_args_is_help=True)
app.add_typer(exercise_app, name="exercise")

Markdown = Annotated[bool, typer.Option("--markdown", help="Print Markdown instead of a table.")]
Seed = Annotated[int | None, typer.Option(
    "--seed", "-s", min=0, max=2**63 - 1, show_default=False,
    help="The student's variant (any whole number); without it, the exercise's own numbers.")]
Topic = Annotated[str | None, typer.Option("--topic", "-t", help="Only this topic.", show_default=False)]
ExerciseFiles = Annotated[list[Path] | None, typer.Option(
    "--exercises", metavar="PATH", show_default=False,
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


# -- example ---------------------------------------------------------------------------------------


@app.command("example")
def example_command(
    name: Annotated[str | None, typer.Argument(help="The example's name (see --list).",
                                               autocompletion=complete.examples,
                                               show_default=False)] = None,
    list_: Annotated[bool, typer.Option("--list", "-l", help="List the examples.")] = False,
    settings: Annotated[list[str] | None, typer.Option(
        "--set", metavar="NAME=VALUE", show_default=False,
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
    from costmodel.examples.work import parse_settings

    if list_ or name is None:
        rows = tuple({"name": e.name, "title": e.title, "source": e.source, "topic": e.topic}
                     for e in all_examples())
        _emit(_Listing("examples", rows, ("name", "title", "source")), as_json=as_json, markdown=markdown)
        return
    worked = get(name).run(parse_settings(settings or ()))
    if markdown:
        sys.stdout.write(worked.to_markdown())
        return
    _emit(worked, as_json=as_json, markdown=False)


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
    _emit(_Listing("exercises", rows, ("id", "topic", "title")), as_json=as_json, markdown=False)


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
    _emit(_Shown(variant, solution), as_json=as_json, markdown=False)


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
    ids: Annotated[list[str] | None, typer.Option("--id", help="Only these exercises (repeatable).",
                                                  show_default=False)] = None,
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
    targets = {out / f"sheet-{label}.{ext}": sheet.problems, out / f"key-{label}.{ext}": sheet.key}
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file, not a folder")
    for path in targets:
        check_writable(path, force=force, folder_must_exist=False)  # --out is made below
    out.mkdir(parents=True, exist_ok=True)
    for path, text in targets.items():
        path.write_text(text, encoding="utf-8")
    if as_json:
        print(json.dumps({"seed": seed, "exercises": [v.exercise.id for v in sheet.variants],
                          "files": [str(p) for p in targets]}))
    else:
        for path in targets:
            print(f"wrote {path}")


# -- check -----------------------------------------------------------------------------------------


def _partial(values: list[str] | None) -> dict[str, Fraction]:
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
    partial: Annotated[list[str] | None, typer.Option(
        "--partial", metavar="MISTAKE=CREDIT", show_default=False,
        help="Credit for an answer with this diagnosed mistake, e.g. binary-prefix=0.5 (repeatable).",
    )] = None,
    gradescope: Annotated[bool, typer.Option("--gradescope",
                                             help="Print Gradescope's results.json.")] = False,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, show_default=False,
        help="Processes grading a large file (default: one per CPU from 2000 answers on).")] = None,
    exercises: ExerciseFiles = None,
    as_json: Json = False,
) -> int:
    """Grade answers: units converted, tolerances applied, and every known mistake diagnosed.

    Exit status 0 when every entry could be graded (right or wrong), 1 when some entries were
    malformed (they are reported; the rest are graded), 2 when the file cannot be read.

    Example: costmodel check answers.toml --partial binary-prefix=0.5 --json
    """
    from costmodel.exercises import check, read_answers

    credit = _partial(partial)
    path = str(answers)
    try:
        content = answers.read_bytes()
    except OSError as e:
        raise ParseError(f"cannot read answers: {e.strerror or e}", path=path) from None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("the file is not UTF-8 text", path=path) from None
    report = check(read_answers(text, path=path), bank=_bank(exercises), partial=credit, path=path,
                   jobs=jobs)
    if gradescope:
        print(json.dumps(report.to_gradescope(), ensure_ascii=False))
    else:
        _emit(report, as_json=as_json, markdown=False)
    for g in report.errors:
        where = f"{path}:{g.submission.line}" if g.submission.line else path
        print(f"error: {where}: {g.error}", file=sys.stderr)
    return 1 if report.errors else 0


# -- rendering -------------------------------------------------------------------------------------


def _emit(result: Any, *, as_json: bool, markdown: bool) -> None:
    if not as_json:
        _register()
    emit(result, as_json=as_json)


def _register() -> None:
    from costmodel.cli.render import render
    from costmodel.examples.work import Worked
    from costmodel.exercises import GradeReport

    render.register(Worked, _render_worked)
    render.register(_Listing, _render_listing)
    render.register(_Shown, _render_shown)
    render.register(GradeReport, _render_report)


def _render_listing(listing: _Listing) -> tuple[Any, tuple[str, ...]]:
    out = table(*listing.columns, no_wrap=False)
    for row in listing.rows:
        out.add_row(*(str(row[c]) for c in listing.columns))
    return out, ()


def _render_worked(worked: Any) -> tuple[Any, tuple[str, ...]]:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.examples.work import _show

    head = markup(f"[bold]{escape(worked.title)}[/bold]\n[dim]{escape(worked.source)}[/dim]")
    givens = table("given", "value", no_wrap=("value",))
    for g, v in worked.givens:
        givens.add_row(f"{g.label}" + (f" ({g.symbol})" if g.symbol else ""), _show(v, g.kind))
    steps = table("#", "step", "working", "value", numeric=("#", "value"))
    for i, s in enumerate(worked.steps, 1):
        steps.add_row(str(i), s.text, s.expression, _show(s.value, s.kind))
    answers = markup("\n".join(
        f"[bold]{escape(a.label)}:[/bold] {escape(_show(a.value, a.kind))}" for a in worked.answers.values()))
    return Group(head, Text(""), givens, Text(""), steps, Text(""), answers), ()


def _render_shown(shown: _Shown) -> tuple[Any, tuple[str, ...]]:
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


def _render_report(report: Any) -> tuple[Any, tuple[str, ...]]:
    from rich.console import Group
    from rich.text import Text

    out = table("exercise", "seed", "answer", "given", "expected", "score", "diagnosis",
                no_wrap=("exercise", "seed", "answer", "given", "expected", "score"))
    for g in report.grades:
        s = g.submission
        mark = "[green]✓[/green]" if g.correct else "[red]✗[/red]"
        diagnosis = "; ".join(f"{d.mistake}: {d.message}" for d in g.diagnosis) if not g.error else \
            f"[red]error:[/red] {g.error}"
        out.add_row(s.exercise, "" if s.seed is None else str(s.seed), g.name or "",
                      f"{mark} {g.given}", g.expected, f"{_score(g.score)}/{_score(g.max_score)}", diagnosis)
    right = sum(1 for g in report.grades if g.correct)
    summary = Text(f"{right} of {len(report.grades)} correct · score {_score(report.score)} of "
                   f"{_score(report.max_score)}", style="bold")
    parts: list[Any] = [out, Text(""), summary]
    if report.students:
        students = table("student", "score", no_wrap=("score",))
        for name, (got, out_of) in report.students.items():
            students.add_row(name, f"{_score(got)}/{_score(out_of)}")
        parts += [Text(""), students]
    return Group(*parts), ()


def _score(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{float(x):.3g}"
