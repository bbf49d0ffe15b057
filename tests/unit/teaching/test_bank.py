"""Exercise files: the shipped bank loads and every variant computes; bad files name file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.errors import ParseError
from costmodel.examples import all_examples
from costmodel.examples.work import Slip, Work
from costmodel.exercises import Bank, load_bank, parse_exercises
from costmodel.exercises.bank import lint_exercises

GOOD = """
[[exercise]]
id = "ring"
topic = "rounds-and-bytes"
title = "Ring bytes"
example = "ring-bytes"
statement = \"\"\"
Ring all-reduce on {p} workers
over {n}.

Second paragraph.
\"\"\"
[exercise.parameters]
p = { choices = [4, 8, 16] }
n = { from = "10 MB", to = "990 MB", step = "10 MB" }
[[exercise.answer]]
name = "sent"
unit = "MB"
"""


def test_statement_placeholders_and_paragraphs():
    exercise = parse_exercises(GOOD, path="x.toml")[0]
    # the example's defaults (p = 4, n = 100 MB) without a seed
    assert exercise.variant().statement == "Ring all-reduce on 4 workers over 100 MB.\n\nSecond paragraph."


def test_variants_are_deterministic_and_vary():
    exercise = parse_exercises(GOOD, path="x.toml")[0]
    again = parse_exercises(GOOD, path="y.toml")[0]
    shown = [exercise.variant(s).shown for s in range(40)]
    assert shown == [again.variant(s).shown for s in range(40)]  # a fresh parse, the same draws
    assert len({tuple(sorted(d.items())) for d in shown}) > 20
    assert {d["p"] for d in shown} == {"4", "8", "16"}


def test_the_answer_uses_the_rounded_value_the_student_sees():
    text = GOOD.replace('step = "10 MB"', 'step = "1234567 B"').replace('to = "990 MB"', 'to = "900 MB"')
    exercise = parse_exercises(text, path="x.toml")[0]
    for seed in range(30):
        v = exercise.variant(seed)
        p, n = v.values["p"], v.values["n"]
        assert v.expected("sent") == 2 * (p - 1) * n / p
        assert f"over {v.shown['n']}" in v.statement
        # n is what the statement shows (four significant figures), not the grid value
        assert v.values["n"] == exercise.worked_example.given("n").parse(v.shown["n"])


BAD = [
    ("[[exercise]\nid = 1", "x.toml:1: invalid TOML"),
    ("[[exercise]]\nid = \"Bad Id\"\n", "x.toml:1: exercise 'Bad Id': id 'Bad Id' must be lower case"),
    (GOOD.replace('example = "ring-bytes"', 'example = "ring-byte"'), "did you mean 'ring-bytes'"),
    (GOOD.replace("p = { choices", "q = { choices"), "unknown given 'q' of example 'ring-bytes'"),
    (GOOD.replace('unit = "MB"', 'unit = "parsec"'), "not a unit costmodel knows"),
    (GOOD.replace('unit = "MB"', 'unit = "KB"'), "not a unit costmodel knows"),
    (GOOD.replace('name = "sent"\n', ""), "name is missing"),
    (GOOD.replace('[[exercise.answer]]\nname = "sent"\nunit = "MB"\n', ""), "needs at least one"),
    (GOOD.replace("choices = [4, 8, 16]", "choices = []"), "choices must be a non-empty list"),
    (GOOD.replace("choices = [4, 8, 16]", "choices = [4, 1.5]"), "not a whole number"),
    (GOOD.replace('step = "10 MB"', 'step = "1 B"'), "at most 10^6 steps"),
    (GOOD.replace('step = "10 MB"', 'step = "-1 MB"'), "is negative"),
    (GOOD.replace('step = "10 MB"', 'step = "0 MB"'), "0 < step"),
    ("rogue = 1\n" + GOOD, "unknown table 'rogue'"),
    (GOOD + "rogue = 1\n", "answer: unknown key 'rogue'"),
    (GOOD.replace('unit = "MB"', 'unit = "MB"\nmistakes = ["guessing"]'), "mistakes must be a list"),
    (GOOD.replace('unit = "MB"', 'unit = "MB"\npartial = { factor-two = 2 }'), "fraction from 0 to 1"),
    ("\x00\x00", "x.toml: the file is binary"),
    # the domain: p a power of two, checked against every p the exercise can give
    (GOOD.replace('statement =', 'domain = "p"\nstatement ='), "domain must be a table such as domain = {"),
    (GOOD.replace('statement =', 'domain = { n = "powers of two" }\nstatement ='),
     "domain: 'n' cannot be declared; declare p (p = \"powers of two\")"),
    (GOOD.replace('statement =', 'domain = { p = "odd" }\nstatement ='),
     "domain: p = 'odd' is not \"whole numbers\" or \"powers of two\""),
    (GOOD.replace('statement =', 'domain = { p = "powers of two" }\nstatement =').replace("[4, 8, 16]", "[4, 6, 16]"),
     "exercise 'ring': domain: p is a power of two, but the exercise can give p = 6"),
    (GOOD.replace('statement =', 'domain = { p = "powers of two" }\nstatement =')
     .replace("choices = [4, 8, 16]", "from = 2, to = 8, step = 2"), "but the exercise can give p = 6"),
]


@pytest.mark.parametrize(("content", "message"), BAD)
def test_bad_exercise_files(content, message):
    with pytest.raises(ParseError) as info:
        parse_exercises(content, path="x.toml")
    assert message in str(info.value) and str(info.value).startswith("x.toml")


def test_a_domain_of_powers_of_two_is_declared():
    exercise = parse_exercises(GOOD.replace('statement =', 'domain = { p = "powers of two" }\nstatement ='),
                               path="x.toml")[0]
    assert exercise.powers_of_two and exercise.domain == {"p": "powers of two"}
    assert not parse_exercises(GOOD, path="x.toml")[0].powers_of_two
    assert load_bank().get("cost-formula").powers_of_two  # its statement says p is a power of two


def test_the_line_is_that_of_the_bad_answer_of_the_bad_exercise():
    two = GOOD + GOOD.replace('id = "ring"', 'id = "ring2"').replace('unit = "MB"', 'unit = "parsec"')
    line = two.splitlines().index("[[exercise.answer]]", two.splitlines().index("[[exercise]]", 3)) + 1
    with pytest.raises(ParseError, match=rf"^x\.toml:{line}: exercise 'ring2'"):
        parse_exercises(two, path="x.toml")


def test_duplicate_ids_are_refused():
    exercises = parse_exercises(GOOD, path="a.toml") + parse_exercises(GOOD, path="b.toml")
    with pytest.raises(ParseError, match=r"also defined in a\.toml"):
        Bank(exercises)


# -- the shipped bank -----------------------------------------------------------------------------


def test_every_example_runs_with_its_defaults():
    for example in all_examples():
        worked = example.run()
        assert worked.answer.name == example.principal
        assert worked.to_dict()["steps"]
        assert worked.disagreements == ()  # every worked step the example cross-checks agrees


# the eight practice questions the bank was first written for, by the exercise that asks each
PRACTICE = {1: "weighted-loss", 2: "allreduce-common-update", 3: "mix-then-step", 4: "ring-allreduce-rounds",
            5: "ring-allreduce-bytes", 6: "rabenseifner-bytes-rounds", 7: "small-message-startups",
            8: "gossip-identical"}


def test_the_shipped_bank_has_every_practice_question_and_forty_more():
    bank = load_bank()
    assert all(exercise in bank for exercise in PRACTICE.values())
    assert len(bank) >= 48


@pytest.mark.parametrize("exercise", list(load_bank()), ids=lambda e: e.id)
def test_every_shipped_exercise_computes_for_many_seeds(exercise):
    default = exercise.variant()
    names = set(default.worked.answers)
    assert {a.name for a in exercise.answers} <= names
    for seed in range(0, 200, 7):
        v = exercise.variant(seed)
        assert "{" not in v.statement, v.statement
        for a in exercise.answers:
            assert v.expected(a.name) is not None
        assert v.worked.disagreements == ()
        v.to_dict()


# -- authoring mistakes, caught when the file is read ---------------------------------------------

AUTHORING = [  # (the change to GOOD, the line it names, the message)
    (("{n}.", "{size}."), 2, "the statement's {size} is not a given of example 'ring-bytes' (n, p)"),
    (('name = "sent"', 'name = "bytes"'), 16, "answer 'bytes' is not an answer of example 'ring-bytes' "
                                             "(chunk, phase-rounds, rounds, sent, received)"),
    (('unit = "MB"', 'unit = "ms"'), 16, "answer 'sent': unit 'ms' is a time, but the answer is a size "
                                        '(e.g. unit = "MB")'),
    (('unit = "MB"', 'unit = "MB"\nexact = "yes"'), 16, "answer sent: exact must be true or false, not 'yes'"),
    (("choices = [4, 8, 16]", "choices = [1, 4, 8]"), 2, "its answers cannot be computed for seed "),
]


@pytest.mark.parametrize(("change", "line", "message"), AUTHORING)
def test_authoring_mistakes_name_file_and_line(change, line, message):
    content = GOOD.replace(*change)
    with pytest.raises(ParseError) as info:
        parse_exercises(content, path="x.toml")
    assert str(info.value).startswith(f"x.toml:{line}: exercise 'ring': {message}")
    # the line is that of the exercise, or of the answer at fault
    assert content.splitlines()[line - 1] in ("[[exercise]]", "[[exercise.answer]]")


def test_lint_lists_every_problem_and_keeps_the_good_exercises():
    bad = GOOD.replace("{n}.", "{size}.").replace('unit = "MB"', 'unit = "ms"')
    two = bad + GOOD.replace('id = "ring"', 'id = "ring2"')
    good, problems = lint_exercises(two, path="x.toml")
    assert [e.id for e in good] == ["ring2"]
    assert [str(p).split(": exercise")[0] for p in problems] == ["x.toml:2", "x.toml:16"]


def test_the_shipped_bank_is_clean_for_every_lint_seed():
    for file in sorted((Path(__file__).parents[3] / "costmodel" / "exercises" / "bank").glob("*.toml")):
        good, problems = lint_exercises(file.read_text(encoding="utf-8"), path=file.name)
        assert problems == [] and good


def test_a_worked_step_that_disagrees_with_the_library_is_recorded_not_raised():
    work = Work({})
    work.check("rounds", 3, 3)
    work.check("bytes", 10, 12)
    assert work.disagreements == ["bytes: worked 10, library 12"]
    slipped = Work({}, Slip("own-chunk"))
    slipped.check("bytes", 10, 12)  # a modelled mistake is meant to differ
    assert slipped.disagreements == []
