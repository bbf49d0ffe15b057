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


# -- equal on the domain, decided exactly: no published points to write around ----------------------

GAME = "(p-1)(p-2)(p-3)(p-4)(p-5)(p-6)(p-7)(p-8)(p-12)(p-16)(p-32)(p-64)(p-100)(p-128)(p-256)(p-512)(p-1024)"
"""Zero at every p the grader once compared at: p = 1, 2, 3, 5, 6, 7, 12, 100 and the powers of two to 1024."""


@pytest.mark.parametrize(("name", "text"), [
    ("rounds", f"2p - 2 + {GAME}"),
    ("time", f"2(p-1)α + 2(p-1)/p·n·β + {GAME}·α"),
])
def test_a_formula_made_to_agree_at_fixed_points_is_wrong(name, text):
    assert not grade(text, name=name).correct  # the ring, the exercise's own numbers
    key = parse_expression("2p - 2") if name == "rounds" else RING
    assert not equivalent(parse_expression(text), key)
    assert not equivalent(parse_expression(text), key, powers_of_two=True)


def test_a_formula_zero_at_the_first_powers_of_two_is_wrong_on_the_powers_of_two():
    junk = "*".join(f"(p - {2**k})" for k in range(21))  # zero at p = 1, 2, 4, ..., 2^20 only
    assert not equivalent(parse_expression(f"2*p - 2 + {junk}"), 2 * s.p - 2, powers_of_two=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-2000, max_value=2000), min_size=1, max_size=30),
       st.sampled_from(["", "*alpha", "*n*beta", "*log2(p)", "/p"]))
def test_no_choice_of_roots_fools_the_comparison(roots, times):
    junk = "*".join(f"(p - ({r}))" for r in roots) + times
    for key in (RING, 2 * s.lg(s.p) * s.ALPHA):
        text = f"{key} + {junk}".replace("**", "^")
        assert not equivalent(parse_expression(text), key)
        assert not equivalent(parse_expression(text), key, powers_of_two=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 4), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 4), st.integers(0, 2), st.integers(0, 2)),
                max_size=3))
def test_the_verdict_is_sympys_own_on_polynomials(terms, changes):
    """Cross-checked with sympy's expansion: a polynomial in p, log₂ p and n, rewritten by expanding it,
    is equal; with terms added, it is equal exactly when the added terms cancel."""
    import sympy

    def poly(ts):
        return sum((c * s.p**i * s.lg(s.p)**j * s.n**k for c, i, j, k in ts), sympy.Integer(0))

    key = poly(terms)
    assert equivalent(sympy.expand(key), key, powers_of_two=True)
    other = key + poly(changes)
    assert equivalent(other, key, powers_of_two=True) is (sympy.expand(poly(changes)) == 0)


def test_the_comparison_is_the_same_every_time():
    text = parse_expression(f"2p - 2 + {GAME}")
    assert {equivalent(text, 2 * s.p - 2) for _ in range(5)} == {False}


# -- the domain: p a power of two where the exercise says so -----------------------------------------


def _tree_seed() -> int:
    return next(k for k in range(50) if load_bank().get("cost-formula").variant(k).shown["algorithm"] == "tree")


@pytest.mark.parametrize("text", ["2*log2(p)", "2*⌈log₂ p⌉", "2*floor(log2(p))", "log2(p^2)", "2*log2(4p) - 4",
                                  "2*ln(p)/ln(2)", "log2(p) + ⌊log₂ p⌋"])
def test_on_the_powers_of_two_every_log_of_p_is_the_same(text):
    # the tree all-reduce: 2⌈log₂ p⌉ rounds; the exercise says p is a power of two
    assert load_bank().get("cost-formula").powers_of_two
    assert grade(text, seed=_tree_seed(), name="rounds").correct
    assert equivalent(parse_expression(text), 2 * s.clg(s.p), powers_of_two=True)


@pytest.mark.parametrize("text", ["2*log2(p)", "2*floor(log2(p))", "log2(p) + ⌈log₂ p⌉"])
def test_off_the_powers_of_two_a_ceiling_is_not_the_log(text):
    assert not equivalent(parse_expression(text), 2 * s.clg(s.p))  # p = 3: 2⌈log₂ 3⌉ = 4


def test_off_the_powers_of_two_floor_and_ceiling_differ_by_one():
    assert equivalent(parse_expression("2*⌊log₂ p⌋ + 2*⌈log₂ p⌉ - 2*⌊log₂ p⌋"), 2 * s.clg(s.p))
    assert not equivalent(parse_expression("⌊log₂ p⌋ + 1 + ⌈log₂ p⌉"), 2 * s.clg(s.p))  # wrong at p = 2
    assert not equivalent(parse_expression("⌊log₂ p⌋ + 1 + ⌈log₂ p⌉"), 2 * s.clg(s.p), powers_of_two=True)


def test_formulas_with_other_functions_are_compared_on_the_domain():
    two = sympy.Integer(2)
    assert equivalent(parse_expression("2*ceil(p/2)"), s.p, powers_of_two=True) is False  # p = 1
    assert equivalent(parse_expression("2*ceil(p/2) - p + p"), two * sympy.ceiling(s.p / 2), powers_of_two=True)
    assert equivalent(parse_expression("2*ceil(p/2)"), s.p) is False  # p = 3
    assert equivalent(parse_expression("sqrt(p)*sqrt(p)"), s.p)


# -- forms compared at points: the extremes and every octave ------------------------------------------


def _ring_seed() -> int:
    return next(k for k in range(50) if load_bank().get("cost-formula").variant(k).shown["algorithm"] == "ring")


@pytest.mark.parametrize("text", ["2*p - 2 + floor(p/2^45)", "2*p - 2 + floor(p/2^55)", "2*p - 2 + floor(p/2^61)",
                                  "2*p - 2 + ceil(p/2^62) - 1", "2*p - 2 + floor(alpha/2^60)",
                                  "2*p - 2 + floor(n/2^63)", "2*p - 2 + ceil(beta/2^63) - 1"])
def test_a_term_zero_below_a_threshold_is_caught(text):
    # right below 2^45 (or α below 2^60), wrong at the largest values the domain is sampled at
    assert grade(text, seed=3, name="rounds").correct is False
    assert not equivalent(parse_expression(text), 2 * s.p - 2, powers_of_two=True)


@pytest.mark.parametrize("text", ["2*p - 2 + floor(p/2^40) - floor(p/2^41)*2", "2*p - 2 + floor(p/(3*2^50))"])
def test_a_term_zero_below_a_threshold_is_caught_off_the_powers_of_two(text):
    assert not equivalent(parse_expression(text), 2 * s.p - 2)


@pytest.mark.parametrize("text", ["2*p - 2", "floor(log2(2p-1))*0 + 2p - 2", "2*p - 2 + floor(alpha/(alpha+1))",
                                  "2*p - 2 + floor(p/2^64)", "floor(2*p - 2 + 1/(p+1))"])
def test_right_answers_at_the_extremes_stay_right(text):
    assert grade(text, seed=_ring_seed(), name="rounds").correct


def test_logs_of_p_stay_right_at_the_largest_p():
    assert equivalent(parse_expression("floor(log2(2p-1))"), s.clg(s.p))  # whole p, up to 2^63 - 1
    assert equivalent(parse_expression("floor(log2(2p-1))"), s.clg(s.p), powers_of_two=True)
    assert equivalent(parse_expression("ceil(ln(p)/ln(2))"), s.clg(s.p))
    assert equivalent(parse_expression("floor(ln(p)/ln(2))"), s.flg(s.p))
    assert equivalent(parse_expression("ln(p)/ln(2)"), s.lg(s.p), powers_of_two=True)


# -- an answer undefined in the domain, as written ----------------------------------------------------


@pytest.mark.parametrize(("text", "error"), [
    ("2*(p-1)*(p-2)/(p-2)", "it divides by zero at p = 2"),
    ("2p-2 + (p-p)*log2(p-1)", "log2(0) is undefined at p = 1"),
    ("2p-2 + (p-4)/(p-4) - 1", "it divides by zero at p = 4"),
    ("2p-2 + 0*ln(p-64)", "ln(-63) is undefined at p = 1"),
    ("2p-2 + 0*ln((p-64)^2)", "ln(0) is undefined at p = 64"),
    ("2p-2 + 0/(p-p)", "it divides by zero"),
])
def test_an_answer_undefined_in_the_domain_is_refused(text, error):
    result = grade(text, seed=3, name="rounds")
    assert not result.correct and result.score == 0 and error in result.error
    assert result.error.startswith(repr(text) + " is not a formula costmodel reads: ")
    assert "\n" not in result.error


def test_where_the_key_is_undefined_the_answer_may_be_too():
    from costmodel.exercises.symbolic import domain_ranks, undefined_in_domain

    assert domain_ranks(True) == (1, 2, 4, 8, 16, 32, 64) and domain_ranks(False) == tuple(range(1, 65))
    assert undefined_in_domain("1/(p-1)", 1 / (s.p - 1)) is None  # p = 1 is not in the key's domain
    assert undefined_in_domain("(p-1)/(p-1)^2", 1 / (s.p - 1)) is None
    assert "at p = 3" in str(undefined_in_domain("(p-3)/(p-3)", sympy.Integer(1)))
    assert undefined_in_domain("(p-3)/(p-3)", sympy.Integer(1), powers_of_two=True) is None  # 3: not a power
    assert undefined_in_domain("(p-65)/(p-65)", sympy.Integer(1)) is None  # beyond the checked ranks
