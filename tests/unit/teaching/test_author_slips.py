"""An exercise's author adds mistakes of their own: a factor or a formula of the givens, a message, a credit.

The formulas are read by the restricted grammar of costmodel.exercises.symbolic (never evaluated as
code) and checked when the file loads; the values below are worked by hand for a ring all-reduce on
p = 4 workers over n = 64 MB, where each worker sends 2(p − 1)/p·n = 96 MB.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from costmodel.errors import ParseError
from costmodel.exercises import Bank, Submission, grade_answer, parse_exercises

MB = 10**6

FILE = """
[[exercise]]
id = "my-ring"
topic = "rounds-and-bytes"
title = "Ring bytes"
example = "ring-bytes"
statement = "A ring all-reduce runs on {p} workers over {n}. How many bytes does each worker send?"

[exercise.defaults]
p = "4"
n = "64 MB"

[exercise.parameters]
p = { choices = [4, 8, 16] }

[[exercise.answer]]
name = "sent"
unit = "MB"

[[exercise.answer.slip]]
id = "all-workers"
factor = "p"
message = "the bytes of all p workers together, not of one worker"
credit = 0.25

[[exercise.answer.slip]]
id = "tensor-once"
value = "n"
message = "the whole tensor, sent once"
"""


def exercise(text=FILE):
    return Bank(parse_exercises(text, path="mine.toml")).get("my-ring")


def grade(value, seed=None, text=FILE):
    return grade_answer(exercise(text), Submission("my-ring", value, seed=seed, name="sent"))


def test_a_factor_slip_is_diagnosed_with_its_message_and_credit():
    g = grade("384 MB")  # 4 × 96 MB
    assert [d.mistake for d in g.diagnosis] == ["all-workers"]
    assert g.diagnosis[0].message == "The bytes of all p workers together, not of one worker"
    assert g.score == Fraction(1, 4)


def test_a_value_slip_is_diagnosed_and_earns_nothing_without_credit():
    g = grade("64 MB")
    assert [d.mistake for d in g.diagnosis] == ["tensor-once"] and g.score == 0


def test_the_slip_follows_the_variant():
    ex = exercise()
    seed = next(s for s in range(100) if ex.variant(s).values["p"] == 16)
    right = 2 * 15 * 64 * MB / 16  # 120 MB
    g = grade(f"{16 * right / MB} MB", seed=seed)
    assert [d.mistake for d in g.diagnosis] == ["all-workers"]


def test_a_slip_that_coincides_with_another_is_ambiguous_and_earns_nothing():
    ex = exercise()
    seed = next(s for s in range(100) if ex.variant(s).values["p"] == 8)  # × p = × 8 = bits for bytes
    g = grade("896 MB", seed=seed)
    assert {d.mistake for d in g.diagnosis} == {"all-workers", "bits-bytes"}
    assert all(d.ambiguous for d in g.diagnosis) and g.score == 0


SLIP = '[[exercise.answer.slip]]\nid = "all-workers"\nfactor = "p"\nmessage = "the bytes of all p workers together, not of one worker"\ncredit = 0.25\n'


@pytest.mark.parametrize(("old", "new", "message"), [
    ('factor = "p"', 'factor = "q"', "unknown name 'q'"),
    ('factor = "p"', 'factor = "__import__(\'os\')"', "is not a formula costmodel reads"),
    ('factor = "p"', 'factor = "p"\nvalue = "n"', "give either factor or value"),
    ('factor = "p"\n', "", "give either factor or value"),
    ('factor = "p"', 'factor = "1/(p-4)"', "has no finite value for the exercise's own numbers"),
    ('factor = "p"', "factor = true", "must be a formula"),
    ('factor = "p"', 'factor = "((((n+p)^64)^64)^64)^64"', "its degree is above 64"),
    ('id = "all-workers"', 'id = "factor-two"', "not a built-in mistake"),
    ('id = "all-workers"', 'id = "All Workers"', "lower case letters"),
    ("credit = 0.25", "credit = 2", "credit is a fraction from 0 to 1"),
    ("credit = 0.25", 'rogue = "x"', "unknown key 'rogue'"),
    ('message = "the bytes of all p workers together, not of one worker"\n', "", "message is missing"),
])
def test_bad_slips_are_refused_at_load_with_file_and_line(old, new, message):
    text = FILE.replace(SLIP, SLIP.replace(old, new))
    assert text != FILE
    line = text.splitlines().index("[[exercise.answer]]") + 1  # an answer's errors name its own line
    with pytest.raises(ParseError, match=re.escape(f"mine.toml:{line}: exercise 'my-ring': answer sent: ")) as e:
        parse_exercises(text, path="mine.toml")
    assert message in str(e.value)


def test_the_same_id_twice_is_refused():
    with pytest.raises(ParseError, match="given twice"):
        parse_exercises(FILE + SLIP, path="mine.toml")
