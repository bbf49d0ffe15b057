"""The whole pooled-class run of benchmarks/bench_assignment.py: 60 students, 3 pools, LaTeX sheets and keys, a
deadline, two late submissions, one override, Canvas, Moodle and PrairieLearn exports, in under 20 s (its
asserts check each part); then the files it wrote, read back."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

from tests.latex_check import latex_problems

BENCH = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "bench_assignment.py"
STUDENTS = 60


def _bench():
    spec = importlib.util.spec_from_file_location("bench_assignment", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_a_pooled_class_with_a_deadline_is_graded_and_exported_in_time(capsys, tmp_path: Path):
    bench = _bench()
    assert bench.pooled(STUDENTS, tmp_path) < bench.POOLED_TARGET_S
    out = capsys.readouterr().out
    assert "60 students, 3 pooled groups" in out and "export, PrairieLearn" in out

    # Canvas: a header, the Points Possible row, then one row per roster student in roster order,
    # and one column per question (each pool is one question) after Canvas's five, then the total
    with (tmp_path / "canvas.csv").open(newline="") as f:
        canvas = list(csv.reader(f))
    with (tmp_path / "roster.csv").open(newline="") as f:
        roster = [row["id"] for row in csv.DictReader(f)]
    assert len(roster) == STUDENTS
    header, possible, *rows = canvas
    questions = header[5:-1]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert len(questions) == 3 and header[-1] == "hw: total"
    assert all(q.startswith("hw: ") for q in questions)
    assert possible[0] == "Points Possible" and len(possible) == len(header)
    assert [r[2] for r in rows] == roster and all(len(r) == len(header) for r in rows)

    # LaTeX: every student's sheet and key passes the syntax check
    for kind in ("sheets", "keys"):
        texts = sorted((tmp_path / "hw" / kind).glob("*.tex"))
        assert len(texts) == STUDENTS
        for path in texts[:5] + texts[-2:]:
            assert latex_problems(path.read_text(encoding="utf-8")) == [], path

    # PrairieLearn: the assessment draws one of each pool, every question has its three files
    assessment = json.loads((tmp_path / "pl" / "assessments" / "hw" / "infoAssessment.json").read_text())
    zone = assessment["zones"][0]["questions"]
    assert [len(q["alternatives"]) for q in zone] == [3, 2, 3] and all(q["numberChoose"] == 1 for q in zone)
    for q in zone:
        for alternative in q["alternatives"]:
            folder = tmp_path / "pl" / "questions" / alternative["id"]
            assert sorted(p.name for p in folder.iterdir()) == ["info.json", "question.html", "server.py"]
