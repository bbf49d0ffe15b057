"""Answers as students type them: separators, powers of ten, spelt-out units; refusals with hints."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.errors import InputError, UnitError
from costmodel.exercises import Submission, check
from costmodel.expressions import parse_expression
from costmodel.units import parse_quantity, parse_rate, parse_size, parse_time

ACCEPTED = [  # (typed, value in base units, dimension)
    ("1,240 MB", Fraction(1_240_000_000), "size"),
    ("1,240.5 MB", Fraction(1_240_500_000), "size"),
    ("12,345,678 B", Fraction(12_345_678), "size"),
    ("1,240", Fraction(1240), "number"),
    ("3.2×10^-5 s", Fraction(32, 10**6), "time"),
    ("3.2 x 10^-5 s", Fraction(32, 10**6), "time"),
    ("3.2·10⁻⁵ s", Fraction(32, 10**6), "time"),
    ("3.2*10**-5 s", Fraction(32, 10**6), "time"),
    ("3.2×10⁵ B", Fraction(320_000), "size"),
    ("10^-5 s", Fraction(1, 10**5), "time"),
    ("\u22125 ms", Fraction(-5, 1000), "time"),
    ("5 GBps", Fraction(5 * 10**9), "rate"),
    ("12 MBps", Fraction(12 * 10**6), "rate"),
    ("10 Gbit/s", Fraction(10**10, 8), "rate"),
    ("3 gigabits per second", Fraction(3 * 10**9, 8), "rate"),
    ("2 megabytes/second", Fraction(2 * 10**6), "rate"),
    ("2 GB/sec", Fraction(2 * 10**9), "rate"),
    ("5 usec", Fraction(5, 10**6), "time"),
    ("5 µsec", Fraction(5, 10**6), "time"),
    ("7 microseconds", Fraction(7, 10**6), "time"),
    ("4 seconds", Fraction(4), "time"),
    ("3 milliseconds", Fraction(3, 1000), "time"),
    ("5 megabytes", Fraction(5 * 10**6), "size"),
    ("5 Megabytes", Fraction(5 * 10**6), "size"),
    ("12 kilobytes", Fraction(12_000), "size"),
    ("3 mebibytes", Fraction(3 * 2**20), "size"),
    ("1 ms per MB", Fraction(1, 10**9), "inverse rate"),
    ("\ufeff112 MB", Fraction(112 * 10**6), "size"),
]


@pytest.mark.parametrize(("typed", "value", "dimension"), ACCEPTED)
def test_forms_students_write_are_read(typed, value, dimension):
    quantity = parse_quantity(typed)
    assert (quantity.value, quantity.dimension) == (value, dimension)


REFUSED = [
    ("32,5 MB", "'32,5 MB' has a decimal comma; write 32.5 MB (a comma only separates thousands, "
                "as in 1,240 MB)"),
    ("1,5", "'1,5' has a decimal comma; write 1.5"),
    ("12 KB", "'12 KB' uses the ambiguous unit KB; write kB (1000 B) or KiB (1024 B)"),
    ("1,24,000 MB", "malformed number"),
    ("5 parsecs", "unknown unit 'parsecs'"),
    ("5 megaparsecs", "unknown unit 'megaparsecs'"),
    ("x10^-5", "does not start with a number"),
]


@pytest.mark.parametrize(("typed", "message"), REFUSED)
def test_forms_that_stay_refused_say_why(typed, message):
    with pytest.raises(UnitError) as info:
        parse_quantity(typed)
    assert message in str(info.value)


@pytest.mark.parametrize(("parse", "typed"), [(parse_size, "1,240 MB"), (parse_time, "5 usec"),
                                              (parse_rate, "5 GBps"), (parse_size, "5 megabytes")])
def test_the_command_lines_options_stay_strict(parse, typed):
    with pytest.raises(UnitError):
        parse(typed)


@pytest.mark.parametrize("typed", ["2(p − 1)α", "2*(p-1)*alpha", "2 (p \u2212 1) alpha"])
def test_the_unicode_minus_in_formulas(typed):
    assert parse_expression(typed) == parse_expression("2*(p-1)*alpha")


@pytest.mark.parametrize("typed", ["log₂ p · α", "log_2(p)*alpha", "log2(p) alpha", "lg p * alpha"])
def test_log2_as_the_tool_writes_it(typed):
    assert parse_expression(typed) == parse_expression("log2(p)*alpha")


def test_a_decimal_comma_is_still_an_error_in_formulas():
    with pytest.raises(InputError):
        parse_expression("2,5*alpha")


def test_typed_forms_are_graded_right():
    # ring-bytes with its own numbers: 8 workers, 64 MB; each sends 2·7/8·64 MB = 112 MB
    answers = ["112,000,000 B", "1.12×10^8 B", "112 megabytes", "0.112 gigabytes", "1.12·10⁸ bytes"]
    grades = [check([Submission("ring-bytes", value, name="sent")]).grades[0] for value in answers]
    assert [g.correct for g in grades] == [True] * len(answers)


@pytest.mark.parametrize(("exercise", "name", "typed"), [
    ("ring-bytes", "rounds", "1400 %"),  # 14 rounds, as a percentage
    ("ring-bytes", "rounds", "1400%"),
    ("ring-bytes", "rounds", "14 MB"),
    ("pipeline-bubble", "total-slots", "2100 %"),  # 21 slots
])
def test_a_count_in_another_unit_or_a_percentage_is_a_wrong_unit(exercise, name, typed):
    grade = check([Submission(exercise, typed, name=name)]).grades[0]
    assert not grade.correct and grade.score == 0 and grade.error is None
    assert [d.mistake for d in grade.diagnosis] == ["wrong-unit"]
    what = "a percentage" if "%" in typed else "a size"
    assert grade.diagnosis[0].message.startswith(f"{typed} is {what}; the answer is a plain number")


def test_a_fraction_may_be_a_percentage():
    # pipeline-bubble's own numbers: GPipe, P = 4, M = 4: the bubble is 3/7 = 42.86 %
    assert check([Submission("pipeline-bubble", "42.86 %", name="bubble")]).grades[0].correct
