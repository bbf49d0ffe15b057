"""Symbolic answers: the restricted grammar, equivalence, and the slips diagnosed on formulas."""

from __future__ import annotations

import contextlib

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel import symbols as s
from costmodel.errors import InputError
from costmodel.exercises import Submission, grade_answer, load_bank
from costmodel.exercises.symbolic import equivalent
from costmodel.expressions import MAX_LENGTH, parse_expression

RING = 2 * (s.p - 1) * s.ALPHA + 2 * (s.p - 1) / s.p * s.n * s.BETA


@pytest.mark.parametrize("text", [
    "2*(p-1)*alpha + 2*(p-1)/p*n*beta",
    "2(p − 1)α + 2(p − 1)/p·n·β".replace("−", "-"),
    "2*p*alpha - 2*alpha + 2*n*beta - 2*n*beta/p",
    "(p-1)*(2*alpha + 2*n*beta/p)",
    "2 (p-1) (alpha + n beta / p)",
])
def test_ways_of_writing_the_ring(text):
    assert equivalent(parse_expression(text), RING)


@pytest.mark.parametrize(("text", "expected"), [
    ("log2(p)*alpha", s.lg(s.p) * s.ALPHA),
    ("lg p", s.lg(s.p)),
    ("⌈log2 p⌉", s.clg(s.p)),
    ("ceil(log2(p))", s.clg(s.p)),
    ("p^2 + p**3", s.p**2 + s.p**3),
    ("1.5e3*beta", 1500 * s.BETA),
])
def test_grammar(text, expected):
    assert parse_expression(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("__import__('os').system('true')", "unexpected"),
    ("p.__class__", "unexpected"),
    ("exec(p)", "unknown name 'exec'"),
    ("log(p)", "log is ambiguous"),
    ("2^1000", "exponents must be integers"),
    ("p^(1/2)", "exponents must be integers"),
    ("(" * 60 + "p" + ")" * 60, "nested too deeply"),
    ("1/0", "divides by zero"),
    ("p +", "expected more at the end"),
    ("", "it is empty"),
    ("x" * (MAX_LENGTH + 1), "at most"),
])
def test_refused(text, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("^", r"\^")):
        parse_expression(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="pnalphbetgm0123456789+-*/^()·⌈⌉⌊⌋ .e_log2", max_size=60))
def test_the_parser_never_crashes(text):
    with contextlib.suppress(InputError):
        parse_expression(text)


def test_equivalence_is_not_fooled_by_near_misses():
    assert not equivalent(parse_expression("2*p*alpha + 2*n*beta"), RING)
    assert not equivalent(parse_expression("2*(p-1)*alpha"), RING)
    assert equivalent(parse_expression("log2(p) + lg(p)"), sympy.Integer(2) * s.lg(s.p))


def grade(value: str, *, seed: int | None = None, name: str = "time"):
    bank = load_bank()
    return grade_answer(bank.get("cost-formula"), Submission("cost-formula", value, seed=seed, name=name))


def test_a_right_formula_is_correct_in_any_form():
    # the exercise's own numbers: ring all-reduce
    assert grade("2(p-1)alpha + 2(p-1)/p n beta").correct
    assert grade("2*p - 2", name="rounds").correct
    # Rabenseifner: 2 log2 p α + 2(p − 1)/p·n·β, in 2 log2 p rounds
    seed = next(s for s in range(50) if load_bank().get("cost-formula").variant(s).shown["algorithm"]
                == "rabenseifner")
    assert grade("2*log2(p)*alpha + 2*(p-1)/p*n*beta", seed=seed).correct
    assert grade("2 lg p", seed=seed, name="rounds").correct


@pytest.mark.parametrize(("value", "mistake"), [
    ("2*(p-1)*alpha", "alpha-only"),
    ("2*(p-1)/p*n*beta", "beta-only"),
    ("4*(p-1)*alpha + 4*(p-1)/p*n*beta", "factor-two"),
])
def test_slips_on_a_formula(value, mistake):
    g = grade(value)
    assert not g.correct and [d.mistake for d in g.diagnosis] == [mistake]


def test_log_slips_on_a_formula():
    seed = next(s for s in range(50) if load_bank().get("cost-formula").variant(s).shown["algorithm"]
                == "recursive-doubling")
    assert [d.mistake for d in grade("p*alpha + p*n*beta", seed=seed).diagnosis] == ["p-for-log-p"]
    assert [d.mistake for d in grade("ln(p)*alpha + ln(p)*n*beta", seed=seed).diagnosis] == ["log-base"]


def test_a_malformed_formula_is_an_entry_error_not_a_crash():
    g = grade("2*(p-1)*alpha +* beta")
    assert not g.correct and "is not a formula costmodel reads" in g.error
