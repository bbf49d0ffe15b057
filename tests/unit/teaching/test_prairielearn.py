"""PrairieLearn export: each question's server.py, run here without PrairieLearn, generates exactly the
library's variants and answers for the variant seed, and grades by costmodel's tolerance rules."""

from __future__ import annotations

import importlib.util
import json
import uuid
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.exercises import load_bank
from costmodel.exercises.assignment import (
    assignment_seed,
    bank_fingerprint,
    create_assignment,
    manifest_exercises,
    parse_exercises,
    read_roster,
)
from costmodel.exercises.prairielearn import export_prairielearn, question_uuid, variant_index
from tests.clirun import run, run_json

BANK = load_bank()
SECRET = b"course-secret-for-tests-0123456789"
ROSTER = "id,name\n" + "".join(f"s{i},Student {i}\n" for i in range(7))
EXERCISES = "{ring-bytes|tree-levels},crossover-rd-rab,cost-formula,pipeline-bubble,choose-small-message"
SEEDS = [0, 1, 2, 3, 4, 5, 6, 7, 2**31 + 5, 4_000_000_001, "k3j9x", "0"]


def _made(assignment_id: str = "hw1"):
    students = read_roster(ROSTER, path="roster.csv")
    created = create_assignment(BANK, parse_exercises(EXERCISES), students, SECRET, assignment_id=assignment_id,
                                title="Homework 1", fingerprint=bank_fingerprint())
    return created, export_prairielearn(created.manifest, BANK, SECRET)


def _server(folder: Path, text: str, name: str):
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"pl_server_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    created, export = _made()
    folder = tmp_path_factory.mktemp("pl")
    servers = {q.exercise: _server(folder, q.files["server.py"], q.exercise.replace("-", "_")) for q in export.questions}
    return created, export, servers


def test_generate_gives_the_librarys_variant_for_the_seed(exported):
    created, _, servers = exported
    manifest = created.manifest
    exercises = manifest_exercises(BANK, manifest.questions)
    keys = created.to_dict()["keys"]
    students = [s.id for s in manifest.students]
    for exercise_id, server in servers.items():
        exercise = exercises[exercise_id]
        for seed in SEEDS:
            data = {"params": {}, "correct_answers": {}, "variant_seed": seed}
            server.generate(data)
            student = students[variant_index(seed, len(students))]
            v = exercise.variant(assignment_seed(SECRET, manifest.id, student, exercise_id))
            for spec in exercise.answers:
                name = spec.name.replace("-", "_")
                expected = v.expected(spec.name)
                got = data["correct_answers"][name]
                if isinstance(expected, str) or hasattr(expected, "free_symbols"):
                    assert got == str(expected), (exercise_id, seed)
                    continue
                exact = Fraction(expected) / spec.scale if spec.unit else Fraction(expected)
                assert Fraction(data["params"]["exact"][name]) == exact
                assert got == (exact.numerator if isinstance(got, int) else float(exact))
                assert spec.unit in data["params"][f"ask_{name}"]
            if exercise_id in manifest.drawn(student):  # the same numbers as the student's own key
                shown = {(k["exercise"], k["name"]): k["expected"] for k in keys[student]}
                for spec in exercise.answers:
                    assert shown[(exercise_id, spec.name)] == spec.shown(v.expected(spec.name),
                                                                         v.answers[spec.name].kind)
            assert v.statement.split()[0] in data["params"]["statement_html"]


def test_variants_are_picked_by_the_documented_rule(exported):
    _, export, servers = exported
    server = servers["ring-bytes"]
    for seed in SEEDS:
        assert server.variant_index(seed, 7) == variant_index(seed, 7)
    assert variant_index(9, 7) == 2 and export.variants == 7
    assert len(server.VARIANTS) == 7


def _grade(server, seed, submitted: dict[str, str]):
    data = {"params": {}, "correct_answers": {}, "variant_seed": seed}
    server.generate(data)
    data.update(raw_submitted_answers=dict(submitted), partial_scores={},
                submitted_answers={k: float(Fraction(v)) for k, v in submitted.items()})
    server.grade(data)
    return data


def test_grade_applies_the_manifests_tolerances_exactly(exported):
    _, _, servers = exported
    server = servers["ring-bytes"]
    data = {"params": {}, "correct_answers": {}, "variant_seed": 3}
    server.generate(data)
    rounds, sent = data["correct_answers"]["rounds"], Fraction(data["params"]["exact"]["sent"])
    right = _grade(server, 3, {"rounds": str(rounds), "sent": str(float(sent * Fraction(1009, 1000)))})
    assert right["score"] == 1.0 and right["partial_scores"]["sent"]["score"] == 1.0
    edge = sent * Fraction(101, 100)  # rtol 0.01 exactly: |s - t| = 0.01 t is right
    assert _grade(server, 3, {"rounds": str(rounds), "sent": str(edge)})["partial_scores"]["sent"]["score"] == 1
    over = sent * Fraction(101, 100) + Fraction(1, 10**9)
    wrong = _grade(server, 3, {"rounds": str(rounds + 1), "sent": str(over)})
    assert wrong["score"] == 0.0
    # significant figures: half a unit of the third figure, not PrairieLearn's 0.51
    crossover = servers["crossover-rd-rab"]
    data = {"params": {}, "correct_answers": {}, "variant_seed": 0}
    crossover.generate(data)
    t = Fraction(data["params"]["exact"]["crossover"])
    unit = Fraction(10) ** (len(str(int(t))) - 3)
    assert _grade(crossover, 0, {"crossover": str(t + unit / 2)})["score"] == 1.0
    assert _grade(crossover, 0, {"crossover": str(t + unit * Fraction(51, 100))})["score"] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**4), st.integers(0, 6))
def test_server_rule_is_the_librarys_rule(exported, given_value, seed):
    created, _, servers = exported
    exercises = manifest_exercises(BANK, created.manifest.questions)
    for exercise_id in ("ring-bytes", "crossover-rd-rab", "pipeline-bubble"):
        server, exercise = servers[exercise_id], exercises[exercise_id]
        data = {"params": {}, "correct_answers": {}, "variant_seed": seed}
        server.generate(data)
        student = created.manifest.students[variant_index(seed, 7)].id
        v = exercise.variant(assignment_seed(SECRET, "hw1", student, exercise_id))
        for spec in exercise.answers:
            name = spec.name.replace("-", "_")
            if name not in data["params"]["exact"]:
                continue
            expected = Fraction(data["params"]["exact"][name])
            for s in (given_value, expected + given_value / 10**5, expected * (1 + given_value / 10**7)):
                tolerance = spec.tolerance_for(v.answers[spec.name].kind)
                library = tolerance.accepts(s * spec.scale, expected * spec.scale, scale=spec.scale)
                assert server.right(server.GRADING[name], s, expected) == library, (exercise_id, name, s)


def test_questions_name_units_tolerances_and_stable_uuids(exported):
    _, export, _ = exported
    files = export.files()
    html = files["questions/hw1/ring-bytes/question.html"]
    assert '<pl-number-input answers-name="sent" weight="1" comparison="relabs" rtol="0.01" atol="0" ' \
           'suffix="MB"></pl-number-input>' in html
    assert '<pl-integer-input answers-name="rounds" weight="1"></pl-integer-input>' in html
    assert "<pl-question-panel>" in html and "{{{params.statement_html}}}" in html
    assert 'comparison="sigfig" digits="3" suffix="kB"' in files["questions/hw1/crossover-rd-rab/question.html"]
    assert 'pl-symbolic-input answers-name="rounds" weight="1" variables="p"' in \
        files["questions/hw1/cost-formula/question.html"]
    assert 'ignore-case="true"' in files["questions/hw1/choose-small-message/question.html"]
    info = json.loads(files["questions/hw1/ring-bytes/info.json"])
    assert info["type"] == "v3" and info["uuid"] == question_uuid("hw1", "ring-bytes")
    assert uuid.UUID(info["uuid"]).version == 5
    uuids = [json.loads(t)["uuid"] for p, t in files.items() if p.endswith("info.json")]
    assert len(set(uuids)) == len(uuids) == 6
    again = _made()[1].files()
    assert again == files  # an export made again is the same, uuids included
    other = _made("hw2")[1].files()
    assert json.loads(other["questions/hw2/ring-bytes/info.json"])["uuid"] not in uuids
    assessment = json.loads(files["assessments/hw1/infoAssessment.json"])
    zone = assessment["zones"][0]["questions"]
    assert zone[0] == {"numberChoose": 1, "points": 2,
                       "alternatives": [{"id": "hw1/ring-bytes"}, {"id": "hw1/tree-levels"}]}
    assert [q.get("id") for q in zone[1:]] == ["hw1/crossover-rd-rab", "hw1/cost-formula", "hw1/pipeline-bubble",
                                              "hw1/choose-small-message"]
    for text in files.values():
        assert SECRET.decode() not in text


def test_a_statement_is_escaped_html():
    from costmodel.exercises.prairielearn import _statement_html

    assert _statement_html("a <b> & `x_y`\n\nnext") == "<p>a &lt;b&gt; &amp; <code>x_y</code></p>\n<p>next</p>"


def test_export_from_the_command_line(capsys, tmp_path: Path):
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / "course.key").write_bytes(SECRET)
    key = ("--secret-file", str(tmp_path / "course.key"))
    run(capsys, "assignment", "create", "--exercises", "ring-bytes,{pipeline-bubble|interleaved-bubble}",
        "--roster", str(tmp_path / "roster.csv"), *key, "--out", str(tmp_path / "hw1"))
    manifest = str(tmp_path / "hw1" / "assignment.toml")
    data = run_json(capsys, "assignment", "export", manifest, *key, "--prairielearn", str(tmp_path / "pl"))
    assert [q["qid"] for q in data["questions"]] == ["hw1/ring-bytes", "hw1/pipeline-bubble",
                                                     "hw1/interleaved-bubble"]
    assert data["variants"] == 7 and (tmp_path / "pl" / "questions" / "hw1" / "ring-bytes" / "server.py").is_file()
    _, err = run(capsys, "assignment", "export", manifest, *key, "--prairielearn", str(tmp_path / "pl"), rc=2)
    assert err.startswith("error:") and "--force" in err
    run(capsys, "assignment", "export", manifest, *key, "--prairielearn", str(tmp_path / "pl"), "--force")
    (tmp_path / "other.key").write_text("another-secret-0123456789abcdef")
    _, err = run(capsys, "assignment", "export", manifest, "--secret-file", str(tmp_path / "other.key"),
                 "--prairielearn", str(tmp_path / "pl2"), rc=2)
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1


def test_server_py_runs_without_costmodel(exported, tmp_path: Path):
    """PrairieLearn's servers have no costmodel: server.py imports only the standard library, and runs in
    an interpreter without site-packages (-S) or the environment (-I), from a folder of its own."""
    import ast
    import subprocess
    import sys

    _, export, servers = exported
    question = next(q for q in export.questions if q.exercise == "ring-bytes")
    source = question.files["server.py"]
    imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    assert imported == {"hashlib", "json", "fractions"}
    (tmp_path / "server.py").write_text(source, encoding="utf-8")
    script = ("import json, runpy; m = runpy.run_path('server.py'); "
              "d = {'params': {}, 'correct_answers': {}, 'variant_seed': 5}; m['generate'](d); "
              "print(json.dumps(d['correct_answers'], sort_keys=True))")
    done = subprocess.run([sys.executable, "-S", "-I", "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=True)
    here = {"params": {}, "correct_answers": {}, "variant_seed": 5}
    servers["ring-bytes"].generate(here)
    assert json.loads(done.stdout) == here["correct_answers"]


def test_an_edited_tolerance_and_points_are_exported_exactly(tmp_path: Path):
    from costmodel.exercises.assignment import read_manifest

    created, _ = _made()
    text = created.manifest.to_toml()
    block = 'name = "sent"\npoints = 1\ntolerance = "rtol 0.01"\nunit = "MB"'
    assert text.count(block) == 1
    text = text.replace(block, 'name = "sent"\npoints = 1.5\ntolerance = "rtol 0.02, atol 1/3"\nunit = "MB"')
    text = text.replace('name = "rounds"\npoints = 1\n', 'name = "rounds"\npoints = 1.5\n', 1)
    manifest = read_manifest(text, path="assignment.toml")
    export = export_prairielearn(manifest, BANK, SECRET)
    files = export.files()
    html = files["questions/hw1/ring-bytes/question.html"]
    assert '<pl-number-input answers-name="sent" weight="3" comparison="relabs" rtol="0.02" ' \
           'atol="0.3333333333333333" suffix="MB">' in html  # 1/3 has no decimal: the float, and grade() is exact
    assert '<pl-integer-input answers-name="rounds" weight="3">' in html  # points 3/2 and 3/2: weights 3 and 3
    server = _server(tmp_path, files["questions/hw1/ring-bytes/server.py"], "edited")
    assert server.GRADING["sent"] == {"rule": "relabs", "rtol": "1/50", "atol": "1/3"}
    data = {"params": {}, "correct_answers": {}, "variant_seed": 0}
    server.generate(data)
    t = Fraction(data["params"]["exact"]["sent"])
    bound = Fraction(1, 3) + t / 50
    assert server.right(server.GRADING["sent"], t + bound, t)
    assert not server.right(server.GRADING["sent"], t + bound + Fraction(1, 10**12), t)
    zone = json.loads(files["assessments/hw1/infoAssessment.json"])["zones"][0]["questions"]
    assert zone[0]["points"] == 3  # the pool's ring-bytes: 3/2 + 3/2
