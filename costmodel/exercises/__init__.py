"""Exercises with per-student variants, problem sheets, and grading that diagnoses the mistake.

>>> from costmodel.exercises import load_bank
>>> bank = load_bank()
>>> variant = bank.get("ring-bytes").variant()
>>> [a["text"] for a in variant.to_dict()["answers"]]
['14', '112 MB']
"""

from __future__ import annotations

from costmodel.exercises.bank import Bank, load_bank, parse_exercises
from costmodel.exercises.grading import (
    Grade,
    GradeReport,
    Submission,
    check,
    grade_answer,
    load_answers,
    read_answers,
)
from costmodel.exercises.mistakes import MISTAKES, Diagnosis
from costmodel.exercises.model import AnswerSpec, Exercise, Parameter, Tolerance, Variant
from costmodel.exercises.sheet import Sheet, problem_sheet

__all__ = [
    "MISTAKES",
    "AnswerSpec",
    "Bank",
    "Diagnosis",
    "Exercise",
    "Grade",
    "GradeReport",
    "Parameter",
    "Sheet",
    "Submission",
    "Tolerance",
    "Variant",
    "check",
    "grade_answer",
    "load_answers",
    "load_bank",
    "parse_exercises",
    "problem_sheet",
    "read_answers",
]
