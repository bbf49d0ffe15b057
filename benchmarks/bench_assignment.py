"""An assignment for a class, timed: 40 students × 20 questions created, graded and reported.

Run as ``python benchmarks/bench_assignment.py [STUDENTS]``.  Everything goes through the command
line in this process, as an instructor runs it: ``assignment create`` (manifest, sheets, keys and
answers templates for every student), ``assignment report`` over the whole class (every answer graded
for the first time), then each student's file checked once more with ``check --assignment``.  The
answers are made from the keys (``--json``):
half right, a quarter wrong (off by a factor 1.048576, MB read as MiB, where the answer has a unit),
a quarter blank.
Target: under 10 s in all.

Then a 60-student class with a pool of 3 groups (:func:`pooled`): created with LaTeX sheets and keys,
a deadline and a per-day penalty, two submissions late (by Gradescope's ``created_at``), one grade
overridden, reported and exported to Canvas and Moodle, and exported to PrairieLearn; each stage's
time is printed. Target: under 20 s.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costmodel.cli import main  # noqa: E402 - after the path set-up above
from costmodel.exercises import load_bank  # noqa: E402

TARGET_S = 10.0
QUESTIONS = 20


def _run(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(args))
    assert rc in (0, 1), (args, rc)
    return out.getvalue()


def _exercises() -> list[str]:
    """Exercises in bank order until they ask QUESTIONS questions."""
    chosen, count = [], 0
    for exercise in load_bank():
        if count + len(exercise.answers) <= QUESTIONS:
            chosen.append(exercise.id)
            count += len(exercise.answers)
    assert count == QUESTIONS, count
    return chosen


def main_(students: int) -> float:
    folder = Path(tempfile.mkdtemp(prefix="bench-assignment-"))
    (folder / "roster.csv").write_text(
        "id,name\n" + "".join(f"s{i:03d},Student {i}\n" for i in range(students))
    )
    (folder / "course.key").write_text("bench-secret-0123456789abcdef\n")
    common = ("--secret-file", str(folder / "course.key"))
    t0 = time.perf_counter()
    made = json.loads(
        _run(
            "assignment",
            "create",
            "--exercises",
            ",".join(_exercises()),
            "--roster",
            str(folder / "roster.csv"),
            *common,
            "--out",
            str(folder / "hw"),
            "--json",
        )
    )
    t1 = time.perf_counter()
    submissions = []
    for n, (student, keys) in enumerate(sorted(made["keys"].items())):
        lines = []
        for k, key in enumerate(keys):
            value, _, unit = key["expected"].partition(" ")
            case = (n + k) % 4
            if case == 3:
                continue
            if case == 2:  # MB read as MiB where the answer has a unit, plainly wrong otherwise
                value = repr(float(value) / 1.048576) if unit else "0"
            lines += [
                "[[answer]]",
                f"exercise = {json.dumps(key['exercise'])}",
                f"name = {json.dumps(key['name'])}",
                f"value = {json.dumps(f'{value} {unit}'.strip())}",
                "",
            ]
        path = folder / f"{student}.toml"
        path.write_text("\n".join(lines))
        submissions.append((student, path))
    t2 = time.perf_counter()
    report = json.loads(
        _run(
            "assignment",
            "report",
            str(folder / "hw" / "assignment.toml"),
            *(str(p) for _, p in submissions),
            *common,
            "--out",
            str(folder / "gradebook.csv"),
            "--json",
        )
    )
    t3 = time.perf_counter()
    for student, path in submissions:
        _run(
            "check",
            str(path),
            "--assignment",
            str(folder / "hw" / "assignment.toml"),
            *common,
            "--student",
            student,
            "--json",
        )
    t4 = time.perf_counter()
    rates = [q["success_rate"] for q in report["questions"]]
    total = (t1 - t0) + (t3 - t2) + (t4 - t3)
    print(f"{students} students × {QUESTIONS} questions ({made['files']} files written)")
    print(f"create          {t1 - t0:6.2f} s")
    print(f"report          {t3 - t2:6.2f} s  (gradebook of {len(report['students'])} students)")
    print(f"check, each     {t4 - t3:6.2f} s  ({students} runs of check --assignment, after report)")
    print(f"total           {total:6.2f} s  (target {TARGET_S:.0f} s)")
    print(
        f"success rates   {min(rates):.2f} to {max(rates):.2f}; mistakes diagnosed: "
        + ", ".join(f"{m['mistake']} {m['answers']}" for m in report["mistakes"])
    )
    return total


POOLED_TARGET_S = 20.0
POOLS = ("{ring-bytes|recursive-doubling-bytes|recursive-halving-bytes},"
         "{pipeline-bubble|interleaved-bubble},{dp-memory|tree-levels|ring-allreduce-bytes}")


def pooled(students: int = 60, folder: Path | None = None) -> float:
    """A class with a pool of 3 groups, created with LaTeX sheets and keys, a deadline and two late
    submissions, one override, the report and its Canvas and Moodle exports, and the PrairieLearn
    export: the whole run, timed stage by stage (target under 20 s in all).  *folder* keeps the files
    (a temporary folder by default)."""
    folder = folder or Path(tempfile.mkdtemp(prefix="bench-pooled-"))
    (folder / "roster.csv").write_text(
        "id,name,email\n" + "".join(f"s{i:03d},Student {i},s{i:03d}@example.edu\n" for i in range(students)))
    (folder / "course.key").write_text("bench-secret-0123456789abcdef\n")
    common = ("--secret-file", str(folder / "course.key"))
    manifest = str(folder / "hw" / "assignment.toml")
    stages: dict[str, float] = {}
    t0 = time.perf_counter()
    roster = str(folder / "roster.csv")
    made = json.loads(_run("assignment", "create", "--exercises", POOLS, "--roster", roster, *common,
                           "--out", str(folder / "hw"), "--deadline", "2026-12-10T23:59:00Z",
                           "--late-penalty-per-day", "0.1", "--format", "latex", "--json"))
    stages["create, LaTeX sheets and keys"] = time.perf_counter() - t0
    t = time.perf_counter()
    files, metadata = [], []
    for n, (student, keys) in enumerate(sorted(made["keys"].items())):
        lines = [f"[[answer]]\nexercise = {json.dumps(k['exercise'])}\nname = {json.dumps(k['name'])}\n"
                 f"value = {json.dumps(k['expected'])}\n" for k in keys]
        (folder / f"{student}.toml").write_text("\n".join(lines))
        files.append(str(folder / f"{student}.toml"))
        late = {0: "2026-12-11T05:00:00Z", 1: "2026-12-12T05:00:00Z"}.get(n, "2026-12-10T12:00:00Z")
        meta = folder / f"{student}.json"
        meta.write_text(json.dumps({"created_at": late, "users": [{"email": f"{student}@example.edu"}]}))
        metadata += ["--metadata", str(meta)]
    stages["submissions written"] = time.perf_counter() - t
    t = time.perf_counter()
    first = sorted(made["keys"])[2]
    question = f"{made['keys'][first][0]['exercise']}:{made['keys'][first][0]['name']}"
    _run("assignment", "override", manifest, "--student", first, "--question", question, "--score", "0",
         "--reason", "regraded by hand")
    stages["override"] = time.perf_counter() - t
    reports = {}
    for form in ("canvas", "moodle"):
        t = time.perf_counter()
        reports[form] = json.loads(_run("assignment", "report", manifest, *files, *common, *metadata,
                                        "--out", str(folder / f"{form}.csv"), "--out-format", form, "--json"))
        stages[f"report, {form.capitalize()} CSV"] = time.perf_counter() - t
    t = time.perf_counter()
    exported = json.loads(_run("assignment", "export", manifest, *common,
                               "--prairielearn", str(folder / "pl"), "--json"))
    stages["export, PrairieLearn"] = time.perf_counter() - t
    seconds = time.perf_counter() - t0
    rows = reports["canvas"]["students"]
    canvas = (folder / "canvas.csv").read_text().splitlines()
    assert len(canvas) == 2 + students and canvas[0].count(",") == 5 + 3, canvas[0]  # 3 groups and the total
    assert sum(r["status"].endswith("late") for r in rows) == 2
    assert sum("overridden" in r["status"] for r in rows) == 1
    assert len(exported["questions"]) == 8 and exported["variants"] == students
    assert len(list((folder / "hw" / "sheets").glob("*.tex"))) == students
    drawn = {m for r in rows for m in r["drawn"].values()}
    for stage, spent in stages.items():
        print(f"{stage:<32}{spent:6.2f} s")
    print(f"{students} students, 3 pooled groups ({len(drawn)} exercises drawn), LaTeX sheets, deadline, "
          f"2 late, 1 override, Canvas, Moodle and PrairieLearn: {seconds:.2f} s "
          f"(target {POOLED_TARGET_S:.0f} s)")
    return seconds


if __name__ == "__main__":
    seconds = main_(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
    pooled_seconds = pooled()
    sys.exit(0 if seconds < TARGET_S and pooled_seconds < POOLED_TARGET_S else 1)
