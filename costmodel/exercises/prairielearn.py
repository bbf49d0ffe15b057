"""An assignment as PrairieLearn questions: one question folder per exercise, and an assessment.

PrairieLearn (https://prairielearn.readthedocs.io, question format v3) runs a question's
``server.py`` on its own servers, where costmodel is not installed, and its ``generate(data)``
sees no student: only ``data["variant_seed"]``.  So the export computes the variants itself, by
the assignment's seed rule (:func:`costmodel.exercises.assignment.assignment_seed` of the course
secret, the assignment, each roster student and the exercise), and writes them into the
question's ``server.py`` as a table, one entry per roster student in roster order; ``generate``
takes entry :func:`variant_index` of the variant seed.  Every PrairieLearn variant is thus
exactly one of the class's variants, with its exact answers; the secret itself is never
written.  (A PrairieLearn variant is not the student's own: PrairieLearn does not tell
``server.py`` who the student is.)

Each answer is an element with the manifest's tolerance: ``pl-number-input`` with ``rtol`` and
``atol`` (PrairieLearn's rule ``|s − t| ≤ atol + rtol·|t|`` is costmodel's), or ``comparison=
"sigfig"`` with ``digits``; ``pl-integer-input`` for a count or an exact whole number;
``pl-string-input`` for a word (case ignored, as costmodel grades it); ``pl-symbolic-input`` for a
formula.  The unit is in the question text and the element's ``suffix``; answers are typed in it.
``grade(data)`` then grades every numeric answer once more in exact fractions of what was typed,
by costmodel's own rule, so PrairieLearn's floating point and its slightly wider significant-figure
band (0.51 of the last digit, costmodel's 0.5) never decide a grade.  An answer's points are its
element's ``weight``.

Question ids are ``ASSIGNMENT/EXERCISE`` and their uuids are version-5 uuids of that id, so an
export made again replaces the same questions.  ``infoAssessment.json`` lists them, a pool of
exercises as one zone entry of alternatives with ``numberChoose`` 1.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.exact import decimal_text
from costmodel.examples.work import sentence
from costmodel.exercises.assignment import Manifest, assignment_seed, manifest_exercises
from costmodel.exercises.bank import Bank
from costmodel.exercises.model import AnswerSpec, Exercise, Variant

__all__ = ["PrairieLearnExport", "PrairieLearnQuestion", "export_prairielearn", "question_uuid",
           "variant_index"]

_NAMESPACE = uuid.UUID("6f1d3c52-3b8e-5b8a-9c61-2f0c6a1e9d47")
"""The namespace of every exported uuid (itself fixed once: exports stay stable across versions)."""


def question_uuid(assignment_id: str, exercise_id: str) -> str:
    """The uuid of an exported question: the same for the same assignment and exercise, always.

    >>> one = question_uuid("hw1", "ring-bytes")
    >>> one == question_uuid("hw1", "ring-bytes") != question_uuid("hw2", "ring-bytes")
    True
    """
    return str(uuid.uuid5(_NAMESPACE, f"{assignment_id}/{exercise_id}"))


def variant_index(variant_seed: Any, n: int) -> int:
    """The entry of an *n*-entry variant table that PrairieLearn's variant seed picks.

    An integer seed modulo *n*; any other seed (PrairieLearn may store it as text) by the first
    8 bytes of its SHA-256, modulo *n*.  ``server.py`` holds a copy of this rule.

    >>> variant_index(7, 3), variant_index("7", 3) == variant_index("7", 3)
    (1, True)
    """
    if isinstance(variant_seed, bool) or not isinstance(variant_seed, int):
        variant_seed = int.from_bytes(hashlib.sha256(str(variant_seed).encode()).digest()[:8], "big")
    return variant_seed % n


@dataclass(frozen=True)
class PrairieLearnQuestion:
    """One exported question: its id (``ASSIGNMENT/EXERCISE``), uuid and files (name -> text)."""

    exercise: str
    qid: str
    uuid: str
    points: Fraction
    answers: tuple[str, ...]  # the answers-name of each element
    files: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"exercise": self.exercise, "qid": self.qid, "uuid": self.uuid, "points": real(self.points),
                "answers": list(self.answers), "files": sorted(self.files)}


@dataclass(frozen=True)
class PrairieLearnExport:
    """Every question of an assignment, its assessment, and how many variants each holds."""

    assignment: str
    title: str
    questions: tuple[PrairieLearnQuestion, ...]
    assessment: str  # infoAssessment.json
    variants: int

    def files(self) -> dict[str, str]:
        """Relative path -> text: ``questions/QID/...`` and ``assessments/ID/infoAssessment.json``."""
        out = {f"questions/{q.qid}/{name}": text for q in self.questions for name, text in q.files.items()}
        out[f"assessments/{self.assignment}/infoAssessment.json"] = self.assessment
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"assignment": self.assignment, "title": self.title, "variants": self.variants,
                "questions": [q.to_dict() for q in self.questions],
                "assessment": f"assessments/{self.assignment}/infoAssessment.json"}


def export_prairielearn(manifest: Manifest, bank: Bank, secret: bytes) -> PrairieLearnExport:
    """The PrairieLearn questions of *manifest* (see the module docstring); *secret* is the course's."""
    exercises = manifest_exercises(bank, manifest.questions)
    questions = []
    for exercise in exercises.values():
        variants = [exercise.variant(assignment_seed(secret, manifest.id, s.id, exercise.id))
                    for s in manifest.students]
        questions.append(_question(manifest, exercise, variants))
    by_id = {q.exercise: q for q in questions}
    zone: list[dict[str, Any]] = []
    for group in manifest.exercise_groups():
        members = [by_id[m] for m in group]
        if len(members) == 1:
            zone.append({"id": members[0].qid, "points": real(members[0].points)})
        else:
            zone.append({"numberChoose": 1, "points": real(members[0].points),
                         "alternatives": [{"id": q.qid} for q in members]})
    assessment: dict[str, Any] = {"uuid": question_uuid(manifest.id, ""), "type": "Homework",
                                  "title": manifest.title, "set": "Homework", "number": manifest.id,
                                  "zones": [{"questions": zone}]}
    return PrairieLearnExport(manifest.id, manifest.title, tuple(questions), _json(assessment),
                              len(manifest.students))


def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _name(spec: AnswerSpec) -> str:
    """The element's answers-name: the answer's name with - as _ (PrairieLearn templates read it)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", spec.name)


def _fraction_text(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _attribute(x: Fraction) -> str:
    """A tolerance as an attribute: its exact decimal where it has one (0.01), else a float's repr."""
    return decimal_text(x) or repr(float(x))


def _rule(spec: AnswerSpec, variants: Sequence[Variant]) -> dict[str, Any]:
    """How the answer is graded: the element and, for grade(), the exact rule."""
    kinds = {v.answers[spec.name].kind for v in variants}
    kind = next(iter(kinds))
    tolerance = spec.tolerance_for(kind)
    values = [v.expected(spec.name) for v in variants]
    if kind.name == "name":
        return {"rule": "word"}
    if kind.name == "formula":
        symbols = sorted({str(s) for v in values for s in v.free_symbols})
        return {"rule": "formula", "variables": symbols}
    if kind.name in ("counts", "numbers"):
        return {"rule": "list"}
    whole = all(isinstance(x, int) or (isinstance(x, Fraction) and (x / spec.scale).denominator == 1)
                for x in values)
    if tolerance.exact:
        return {"rule": "exact", "integer": whole}
    if tolerance.sigfigs is not None:
        return {"rule": "sigfig", "digits": tolerance.sigfigs}
    return {"rule": "relabs", "rtol": _fraction_text(tolerance.rtol), "atol": _fraction_text(tolerance.atol)}


def _element(spec: AnswerSpec, rule: dict[str, Any], weight: int) -> str:
    """The element asking one answer, with its attributes (see the module docstring)."""
    kind = rule["rule"]
    element, attributes = "pl-number-input", ""
    if kind == "word":
        element, attributes = "pl-string-input", ' ignore-case="true" remove-leading-trailing="true"'
    elif kind == "list":
        element, attributes = "pl-string-input", ' remove-spaces="true"'
    elif kind == "formula":
        element = "pl-symbolic-input"
        attributes = f' variables="{html.escape(", ".join(rule["variables"]))}"'
    elif kind == "exact" and rule["integer"]:
        element = "pl-integer-input"
    elif kind == "exact":
        attributes = ' comparison="relabs" rtol="0" atol="0"'
    elif kind == "sigfig":
        attributes = f' comparison="sigfig" digits="{rule["digits"]}"'
    else:
        rtol, atol = _attribute(Fraction(rule["rtol"])), _attribute(Fraction(rule["atol"]))
        attributes = f' comparison="relabs" rtol="{rtol}" atol="{atol}"'
    if spec.unit and element in ("pl-number-input", "pl-integer-input"):
        attributes += f' suffix="{html.escape(spec.unit)}"'
    return f'<{element} answers-name="{_name(spec)}" weight="{weight}"{attributes}></{element}>'


def _statement_html(text: str) -> str:
    """A statement's paragraphs as HTML: every character escaped, Markdown code spans as code."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out = []
    for p in paragraphs:
        escaped = html.escape(" ".join(p.split()))
        out.append("<p>" + re.sub(r"`([^`]*)`", r"<code>\1</code>", escaped) + "</p>")
    return "\n".join(out)


def _correct(spec: AnswerSpec, rule: dict[str, Any], value: Any) -> Any:
    """The answer as PrairieLearn's element compares it: a number in the answer's unit, or text."""
    if rule["rule"] in ("word", "formula", "list"):
        if rule["rule"] == "list":
            return ",".join(str(x) for x in value)
        return str(value)
    number = value / spec.scale if spec.unit else value
    if isinstance(number, float):
        return number
    number = Fraction(number)
    return number.numerator if number.denominator == 1 and rule["rule"] == "exact" else float(number)


def _exact(spec: AnswerSpec, value: Any) -> str:
    """The answer in its unit exactly, as grade() reads it (a fraction; a float's exact value)."""
    number = value / spec.scale if spec.unit else value
    return _fraction_text(Fraction(number))


def _weights(points: Sequence[Fraction]) -> list[int]:
    """Whole element weights in the ratio of the answers' points (PrairieLearn's weights are integers)."""
    scale = math.lcm(*(p.denominator for p in points)) if points else 1
    weights = [int(p * scale) for p in points]
    if not any(weights):
        return [1] * len(points)
    return weights


def _question(manifest: Manifest, exercise: Exercise, variants: Sequence[Variant]) -> PrairieLearnQuestion:
    specs = exercise.answers
    rules = {spec.name: _rule(spec, variants) for spec in specs}
    weights = _weights([spec.points for spec in specs])
    table = []
    for v in variants:
        params: dict[str, Any] = {"statement_html": _statement_html(v.statement), "givens": v.parameters()}
        correct, exact = {}, {}
        for spec in specs:
            answer = v.answers[spec.name]
            unit = f"in {spec.unit}, " if spec.unit else ""
            params[f"ask_{_name(spec)}"] = \
                f"{sentence(answer.label)} ({unit}{spec.precision(answer.kind, answer.value)})"
            correct[_name(spec)] = _correct(spec, rules[spec.name], answer.value)
            if rules[spec.name]["rule"] in ("exact", "sigfig", "relabs"):
                exact[_name(spec)] = _exact(spec, answer.value)
        params["exact"] = exact
        table.append({"params": params, "correct_answers": correct})
    grading = {_name(spec): rules[spec.name] for spec in specs}
    qid = f"{manifest.id}/{exercise.id}"
    uid = question_uuid(manifest.id, exercise.id)
    info = {"uuid": uid, "title": exercise.title, "topic": exercise.topic, "tags": ["costmodel", manifest.id],
            "type": "v3"}
    panel = ["<pl-question-panel>", "{{{params.statement_html}}}", "</pl-question-panel>", ""]
    for spec, weight in zip(specs, weights, strict=True):
        panel += [f"<p>{{{{params.ask_{_name(spec)}}}}}</p>", _element(spec, rules[spec.name], weight), ""]
    panel.append(f'<p class="small text-muted">costmodel exercise <code>{html.escape(exercise.id)}</code>'
                 "</p>")
    files = {"info.json": _json(info), "question.html": "\n".join(panel) + "\n",
             "server.py": _server(manifest, exercise, table, grading)}
    points = sum((spec.points for spec in specs), Fraction(0))
    return PrairieLearnQuestion(exercise.id, qid, uid, points, tuple(_name(s) for s in specs), files)


def _server(manifest: Manifest, exercise: Exercise, table: list[dict[str, Any]],
            grading: dict[str, dict[str, Any]]) -> str:
    head = (f'"""PrairieLearn question: costmodel exercise {exercise.id} of assignment {manifest.id}.\n\n'
            "Written by costmodel's PrairieLearn export of the assignment; export again rather than edit.\n"
            "generate() takes one of the class's variants (VARIANTS, one per roster student, drawn by the\n"
            "assignment's seed rule) by data[\"variant_seed\"]; grade() grades each numeric answer again in\n"
            'exact fractions of what was typed, by costmodel\'s rule (GRADING).\n"""\n')
    def literal(data: Any) -> str:  # a Python string literal of the JSON: pure ASCII, any text safe
        return repr(json.dumps(data, ensure_ascii=True, separators=(",", ":")))

    return head + _SERVER.replace("@VARIANTS@", literal(table)).replace("@GRADING@", literal(grading))


_SERVER = '''
import hashlib
import json
from fractions import Fraction

VARIANTS = json.loads(@VARIANTS@)
GRADING = json.loads(@GRADING@)


def variant_index(variant_seed, n):
    """An integer seed modulo n; any other by the first 8 bytes of its SHA-256, modulo n."""
    if isinstance(variant_seed, bool) or not isinstance(variant_seed, int):
        variant_seed = int.from_bytes(hashlib.sha256(str(variant_seed).encode()).digest()[:8], "big")
    return variant_seed % n


def generate(data):
    variant = VARIANTS[variant_index(data["variant_seed"], len(VARIANTS))]
    data["params"].update(json.loads(json.dumps(variant["params"])))
    data["correct_answers"].update(variant["correct_answers"])


def _typed(raw, parsed):
    """What was typed, exactly: its decimal or fraction text, else the number PrairieLearn parsed."""
    try:
        return Fraction(str(raw).strip())
    except (ValueError, ZeroDivisionError):
        pass
    try:
        return Fraction(parsed)
    except (TypeError, ValueError, OverflowError):
        return None


def _floor_log10(x):
    n = len(str(x.numerator)) - len(str(x.denominator))
    while Fraction(10) ** n > x:
        n -= 1
    while Fraction(10) ** (n + 1) <= x:
        n += 1
    return n


def right(rule, given, expected):
    """costmodel's rule: |s - t| <= atol + rtol*|t|; half a unit of the last significant figure; equal."""
    if rule["rule"] == "exact":
        return given == expected
    if rule["rule"] == "sigfig":
        if expected == 0:
            return given == 0
        unit = Fraction(10) ** (_floor_log10(abs(expected)) - rule["digits"] + 1)
        return abs(given - expected) <= unit / 2
    return abs(given - expected) <= Fraction(rule["atol"]) + Fraction(rule["rtol"]) * abs(expected)


def grade(data):
    scores = data["partial_scores"]
    for name, rule in GRADING.items():
        if rule["rule"] not in ("exact", "sigfig", "relabs") or name not in data["params"]["exact"]:
            continue
        given = _typed(data["raw_submitted_answers"].get(name), data["submitted_answers"].get(name))
        ok = given is not None and right(rule, given, Fraction(data["params"]["exact"][name]))
        scores.setdefault(name, {})["score"] = 1.0 if ok else 0.0
    weights = sum(s.get("weight", 1) for s in scores.values())
    if weights:
        data["score"] = sum(s.get("score", 0) * s.get("weight", 1) for s in scores.values()) / weights
'''
