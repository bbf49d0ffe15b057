"""Grading: units converted, tolerances applied, every mistake diagnosed, bad entries reported.

The exercises here are built in the test from the framework's own examples
(``ring-bytes``, ``choose-by-size``, ``crossover-rd-rab``), so the expected
values are rederived by hand below, independently of the bank's files.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.errors import ParseError
from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import (
    Bank,
    Submission,
    Tolerance,
    check,
    grade_answer,
    parse_exercises,
    read_answers,
)
from costmodel.exercises.mistakes import MISTAKES

MB = 10**6

EXERCISES = """
[[exercise]]
id = "ring"
topic = "rounds-and-bytes"
title = "Ring bytes"
example = "ring-bytes"
statement = "Ring all-reduce on {p} workers over {n}: rounds and bytes sent?"
[exercise.defaults]
p = "8"
n = "64 MB"
[exercise.parameters]
p = { choices = [4, 8, 16] }
n = { from = "16 MB", to = "512 MB", step = "16 MB" }
[[exercise.answer]]
name = "rounds"
[[exercise.answer]]
name = "sent"
unit = "MB"
partial = { binary-prefix = 0.5 }

[[exercise]]
id = "table"
topic = "alpha-beta"
title = "Times at 64 MiB"
example = "choose-by-size"
statement = "Times of ring and recursive doubling at {p} workers and {n}?"
[exercise.defaults]
n = "64 MiB"
[[exercise.answer]]
name = "ring"
unit = "ms"
rtol = 0.001
[[exercise.answer]]
name = "recursive-doubling"
unit = "ms"
rtol = 0.001
[[exercise.answer]]
name = "best"

[[exercise]]
id = "cross"
topic = "crossovers"
title = "Crossover"
example = "crossover-rd-rab"
statement = "Where do recursive doubling and Rabenseifner cross at {p} workers?"
[[exercise.answer]]
name = "crossover"
unit = "kB"
sigfigs = 3
"""


@pytest.fixture(scope="module")
def bank() -> Bank:
    return Bank(parse_exercises(EXERCISES, path="test.toml"))


def grade(bank: Bank, exercise: str, value: object, *, name: str | None = None, seed: int | None = None):
    return grade_answer(bank.get(exercise), Submission(exercise=exercise, value=value, name=name, seed=seed))


def mistakes(g) -> set[str]:
    return {d.mistake for d in g.diagnosis}


# -- right answers, in any unit -----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["112 MB", "112MB", "0.112 GB", "112000 kB", "112e6 B", "112", 112, 112.0,
                                   "896 Mb", "111 MB", "113 MB"])
def test_right_answers_in_any_unit(bank, value):
    # ring at p = 8 over 64 MB: 2·7/8·64 MB = 112 MB; a bare number is read in the answer's unit (MB);
    # bits are converted (896 Mb = 112 MB); rtol 1 % accepts 111 and 113
    g = grade(bank, "ring", value, name="sent")
    assert g.correct and g.score == 1 and g.diagnosis == ()


def test_rounds_are_exact(bank):
    assert grade(bank, "ring", 14, name="rounds").correct
    assert grade(bank, "ring", "14", name="rounds").correct
    assert not grade(bank, "ring", "14.1", name="rounds").correct  # a count is never "close enough"


def test_sig_figs():
    # 2000000/17 B = 117.647 kB: three significant figures accept 118 and 117.6, not 117
    t = Fraction(2_000_000, 17)
    tol = Tolerance(rtol=Fraction(0), sigfigs=3)
    kb = Fraction(1000)
    assert tol.accepts(118 * kb, t, scale=kb) and tol.accepts(Fraction(1176, 10) * kb, t, scale=kb)
    assert not tol.accepts(117 * kb, t, scale=kb)


def test_a_word_answer(bank):
    # at 64 MiB, p = 16, α = 5 µs, β = 0.08 ns/B: Rabenseifner ≈ 10.11 ms beats the ring's 10.22 ms
    assert grade(bank, "table", "Rabenseifner", name="best").correct
    wrong = grade(bank, "table", "ring", name="best")
    assert not wrong.correct and wrong.expected == "rabenseifner"


# -- every mistake, on a constructed wrong answer -----------------------------------------------------

# ring p = 8, n = 64 MB: sent 112 MB
VALUE_SLIPS = [
    ("106.8 MB", "binary-prefix"),  # 112 MB / 1.048576: the MiB figure written as MB
    ("117.44 MB", "binary-prefix"),  # 112 MiB written as MB
    ("14 MB", "bits-bytes"),  # divided by 8
    ("896 MB", "bits-bytes"),  # 112 MB counted as bits: 896 Mb written MB
    ("11.2 MB", "power-of-ten"),
    ("112 kB", "power-of-ten"),
    ("224 MB", "factor-two"),  # sent + received
    ("56 MB", "factor-two"),
    ("128 MB", "own-chunk"),  # 2n: every chunk counted, 112 · 8/7
    ("112 ms", "wrong-unit"),
]


@pytest.mark.parametrize(("value", "mistake"), VALUE_SLIPS)
def test_each_slip_is_diagnosed(bank, value, mistake):
    g = grade(bank, "ring", value, name="sent")
    assert not g.correct
    assert mistake in mistakes(g), [d.to_dict() for d in g.diagnosis]


def test_diagnoses_on_formula_slips(bank):
    # choose-by-size at p = 16, n = 64 MiB = 67108864 B, α = 5 µs, β = 0.08 ns/B
    n, a, b = 67108864, Fraction(5, 10**6), Fraction(8, 10**11)
    ring_beta = Fraction(2 * 15, 16) * n * b  # 2(p−1)/p·n·β
    rd = 4 * a + 4 * n * b  # log2 16 = 4
    cases = [
        ("ring", ring_beta, "beta-only"),
        ("ring", 30 * a, "alpha-only"),
        ("recursive-doubling", 16 * a + 16 * n * b, "p-for-log-p"),
        ("recursive-doubling", rd * Fraction(1000), "power-of-ten"),
    ]
    for name, wrong, mistake in cases:
        g = grade(bank, "table", f"{float(wrong * 1000)!r} ms", name=name)
        assert not g.correct and mistake in mistakes(g), (name, mistake, [d.to_dict() for d in g.diagnosis])
    import math

    ln16 = math.log(16)
    g = grade(bank, "table", f"{(ln16 * a + ln16 * n * b) * 1000!r} ms", name="recursive-doubling")
    assert "log-base" in mistakes(g)


def test_log_base_in_the_crossover(bank):
    # the crossover with log10 16 for log2 16: 1.204α / ((1.204 − 1.875)β) is negative, no match;
    # with ln 16 = 2.7726: 2.7726α/((2.7726 − 1.875)β) = 193.1 kB
    import math

    ln = math.log(16)
    value = ln * 5e-6 / ((ln - 1.875) * 0.08e-9)
    g = grade(bank, "cross", f"{value / 1000:.4g} kB")
    assert mistakes(g) == {"log-base"}


def test_right_answer_has_no_diagnosis_for_every_variant(bank):
    for seed in range(50):
        v = bank.get("ring").variant(seed)
        g = grade(bank, "ring", f"{float(v.expected('sent')) / MB!r} MB", name="sent", seed=seed)
        assert g.correct and not g.diagnosis


def test_the_own_chunk_slip_is_the_formula_rerun():
    worked = get("ring-bytes").run({"p": "8", "n": "64 MB"}, slip=Slip("own-chunk"))
    assert worked.answers["sent"].value == 128 * MB and worked.answers["rounds"].value == 16


def test_two_slips_only_when_no_single_one_fits(bank):
    # 128 MB is own-chunk alone, although own-chunk after a binary slip of 120 MB is close
    assert [d.mistakes for d in grade(bank, "ring", "128 MB", name="sent").diagnosis] == [("own-chunk",)]
    # 2n in MiB: 128 MB / 1.048576 = 122.07 "MB": own-chunk, then binary-prefix
    g = grade(bank, "ring", "122.07 MB", name="sent")
    assert [d.mistakes for d in g.diagnosis] == [("own-chunk", "binary-prefix")]


def test_unrelated_wrong_answer_has_no_diagnosis(bank):
    g = grade(bank, "ring", "97 MB", name="sent")
    assert not g.correct and g.diagnosis == () and g.score == 0


def test_partial_credit(bank):
    assert grade(bank, "ring", "106.8 MB", name="sent").score == Fraction(1, 2)  # from the exercise file
    report = check([Submission("ring", "224 MB", name="sent")], bank=bank, partial={"factor-two": Fraction(1, 4)})
    assert report.score == Fraction(1, 4)


def test_mistake_names_are_the_contract():
    assert set(MISTAKES) >= {"binary-prefix", "bits-bytes", "power-of-ten", "factor-two", "own-chunk", "log-base",
                             "p-for-log-p", "alpha-only", "beta-only", "unweighted-mean", "bubble-definition",
                             "zero-bookkeeping", "index-overhead", "wrong-unit"}


# -- files, batches and bad entries -------------------------------------------------------------------

ANSWERS = """
student = "ada"

[[answer]]
exercise = "ring"
name = "sent"
value = "112 MB"

[[answer]]
exercise = "ring"
name = "rounds"
value = "a lot"

[[answer]]
exercise = "rign"
value = 3

[[answer]]
exercise = "ring"
value = "112 MB"

[[answer]]
exercise = "ring"
name = "rounds"
seed = 4
value = 1e999
"""


def test_a_batch_with_bad_entries_grades_the_rest(bank):
    report = check(read_answers(ANSWERS, path="a.toml"), bank=bank)
    first, words, typo, unnamed, infinite = report.grades
    assert first.correct and report.score == 1
    assert "does not start with a number" in words.error
    assert "did you mean 'ring'" in typo.error
    assert "several answers" in unnamed.error
    assert "not a finite number" in infinite.error
    assert [g.submission.line for g in report.grades] == [4, 9, 14, 18, 22]
    assert report.students == {"ada": (1, 2)}  # the malformed entries score 0 of 0; 'a lot' 0 of 1


def test_a_question_is_graded_once_and_a_missing_seed_is_said(bank):
    twice = 'student = "ada"\n' + '[[answer]]\nexercise = "ring"\nname = "sent"\nvalue = "112 MB"\n' * 50
    report = check(read_answers(twice, path="a.toml"), bank=bank)
    assert (report.score, report.max_score, len(report.grades)) == (1, 1, 1)
    assert report.notes[0] == "line 2: no seed: graded against the exercise's own numbers"
    assert report.notes[1] == "line 6: second answer to ring: sent ignored; the first (line 2) is graded"
    assert len(report.notes) == 50 and report.to_dict()["notes"] == list(report.notes)


def test_a_seed_for_the_whole_file_is_every_answers_without_one_of_its_own(bank):
    content = ('student = "ada"\nseed = 4\n\n[[answer]]\nexercise = "ring"\nname = "sent"\nvalue = "1 MB"\n\n'
               '[[answer]]\nexercise = "ring"\nname = "rounds"\nseed = 9\nvalue = 1\n')
    sent, rounds = read_answers(content, path="a.toml")
    assert (sent.seed, sent.seed_line, rounds.seed, rounds.seed_line) == (4, 2, 9, None)
    assert check([sent, rounds], bank=bank).notes == ()  # every answer has its seed


@pytest.mark.parametrize(("content", "message"), [
    ("[[answer]\nexercise = 1", "a.toml:1: invalid TOML"),
    ("", "a.toml:1: no answers"),
    ("x = 1", "a.toml: unknown key 'x'"),
    ('student = "a"\nseed = -1\n[[answer]]\nexercise = "ring"\nvalue = 1',
     "a.toml:2: seed -1 is not a whole number from 0 to 2"),
    ("\x00\x01binary", "a.toml: the file is binary"),
    ("a = \"" + "x" * (5 * 2**20) + "\"", "a.toml: the file is too large"),
])
def test_bad_files_name_file_and_line(content, message):
    with pytest.raises(ParseError, match="^" + message.replace("(", r"\(")):
        read_answers(content, path="a.toml")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_fuzzed_answer_files_never_crash(bank, text):
    try:
        submissions = read_answers(text, path="f.toml")
    except ParseError:
        return
    check(submissions, bank=bank)


@settings(max_examples=300, deadline=None)
@given(value=st.one_of(st.text(max_size=40), st.integers(), st.floats(allow_nan=True, allow_infinity=True)),
       seed=st.one_of(st.none(), st.integers(min_value=-5, max_value=2**70)),
       name=st.sampled_from(["sent", "rounds", "nope", None]))
def test_fuzzed_entries_never_crash(bank, value, seed, name):
    entry = {"exercise": "ring", "value": value, "name": name, "seed": seed}
    toml = "[[answer]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items()
                                     if v is not None and not (isinstance(v, float) and math.isnan(v)))
    try:
        submissions = read_answers(toml, path="f.toml")
    except ParseError:
        return
    report = check(submissions, bank=bank)
    assert len(report.grades) == 1


# -- Gradescope --------------------------------------------------------------------------------------

TOP = {"score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
       "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard"}
TEST = {"score", "max_score", "status", "name", "name_format", "number", "output", "output_format", "tags",
        "visibility", "extra_data"}


def test_gradescope_shape(bank):
    """Gradescope's documented results.json: known keys only, numeric scores, passed/failed statuses."""
    report = check(read_answers(ANSWERS, path="a.toml"), bank=bank)
    out = json.loads(json.dumps(report.to_gradescope()))
    assert set(out) <= TOP and isinstance(out["score"], (int, float))
    assert len(out["tests"]) == 5
    for t in out["tests"]:
        assert set(t) <= TEST and {"score", "max_score", "name", "status"} <= set(t)
        assert t["status"] in ("passed", "failed")
        assert isinstance(t["score"], (int, float)) and 0 <= t["score"] <= t["max_score"]
    assert out["score"] == sum(t["score"] for t in out["tests"])
    assert out["visibility"] in ("hidden", "after_due_date", "after_published", "visible")


def test_a_large_batch_is_graded_alike_in_several_processes(bank):
    batch = [Submission("ring", f"{v} MB", seed=s, name="sent") for s in range(150) for v in (112, 224, 97)]
    serial = check(batch, bank=bank, jobs=1)
    parallel = check(batch, bank=bank, jobs=2)
    assert [g.to_dict() for g in parallel.grades] == [g.to_dict() for g in serial.grades]
    assert parallel.score == serial.score
