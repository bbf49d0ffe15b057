"""Grading a class, timed: 1,000 students × 20 answers, every miss diagnosed.

Run as ``python benchmarks/bench_grading.py [STUDENTS]``.  Each student has their
own seed, so each answer is graded against its own variant.  A quarter of the
answers are right, half carry a known slip (a value slip such as MiB for MB or
a factor two, or a formula slip such as the β term forgotten, taken from the
exercise's own slips) and a quarter are wrong for no known reason, so most of
them go through the full diagnosis.  The answers are made first, then every
cache is emptied, then ``check`` runs: the time covers drawing each variant,
working the example, grading and diagnosing, as ``costmodel check`` pays for a
fresh file.  Target: under 10 s for 20,000 answers.

A batch this large is graded by one forked process per CPU (``check``'s
default); also printed, side by side in this run: the same file graded in one
process, cold and then warm (a second pass), and that the grades agree.
"""

from __future__ import annotations

import random
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costmodel.examples.kinds import NAME  # noqa: E402 - after the path set-up above
from costmodel.examples.work import FORMULA_SLIPS, Slip  # noqa: E402
from costmodel.exercises import Submission, check, load_bank  # noqa: E402  # noqa: E402

TARGET_S = 10.0
ANSWERS_PER_STUDENT = 20


def make_answers(students: int) -> list[Submission]:
    bank = load_bank()
    pairs = [(e, a.name) for e in bank for a in e.answers]
    rng = random.Random(2026)
    chosen = [pairs[i * len(pairs) // ANSWERS_PER_STUDENT] for i in range(ANSWERS_PER_STUDENT)]
    out = []
    for student in range(students):
        seed = 1000 + student
        for exercise, name in chosen:
            variant = exercise.variant(seed)
            spec = exercise.answer(name)
            answer = variant.answers[name]
            value = answer.value
            roll = rng.random()
            if answer.kind is NAME:
                text = value if roll < 0.5 else "something else"
            else:
                if 0.25 <= roll < 0.5:
                    value = value * rng.choice([2, Fraction(1, 2), Fraction(1000, 1024) ** 2, 8, 10])
                elif 0.5 <= roll < 0.75:
                    slips = [Slip(m, v) for m in exercise.worked_example.slips for v in FORMULA_SLIPS[m]]
                    if slips:
                        slipped = exercise.worked_example.run(values=variant.values, slip=rng.choice(slips))
                        value = slipped.answers[name].value if name in slipped.answers else value
                elif roll >= 0.75:
                    value = value * Fraction(rng.randint(120, 190), 100)
                text = spec.shown(value, answer.kind)
            out.append(Submission(exercise=exercise.id, value=text, seed=seed, name=name,
                                  student=f"s{student}"))
    return out


def clear_caches() -> None:
    """Empty every memo in costmodel (variants, workings, slips, coefficients, simulations)."""
    for name, module in list(sys.modules.items()):
        if name.startswith("costmodel"):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def _workers(n: int) -> int:
    from costmodel.exercises.grading import _workers as workers

    return workers(None, n)


def main() -> None:
    students = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    t0 = time.perf_counter()
    answers = make_answers(students)
    made = time.perf_counter() - t0
    clear_caches()
    t0 = time.perf_counter()
    report = check(answers)
    cold = time.perf_counter() - t0
    clear_caches()
    t0 = time.perf_counter()
    serial = check(answers, jobs=1)
    cold_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    check(answers, jobs=1)
    warm = time.perf_counter() - t0
    assert [g.to_dict() for g in serial.grades] == [g.to_dict() for g in report.grades]
    right = sum(g.correct for g in report.grades)
    diagnosed = sum(1 for g in report.grades if not g.correct and g.diagnosis)
    errors = sum(1 for g in report.grades if g.error)
    n = len(answers)
    print(f"{students} students × {ANSWERS_PER_STUDENT} answers = {n} answers "
          f"({len({a.exercise for a in answers})} exercises)")
    print(f"  right {right}, wrong and diagnosed {diagnosed}, "
          f"wrong without diagnosis {n - right - diagnosed}, errors {errors}")
    print(f"  making the answers            {made:7.2f} s")
    print(f"  grading, caches empty         {cold:7.2f} s  ({cold / n * 1e6:6.0f} µs per answer), "
          f"{_workers(n)} processes")
    per = cold_serial / n * 1e6
    print(f"  the same in one process       {cold_serial:7.2f} s  ({per:6.0f} µs per answer)"
          f"  serial/parallel = {cold_serial / cold:.2f}×")
    print(f"  again in one process, warm    {warm:7.2f} s  ({warm / n * 1e6:6.0f} µs per answer)"
          f"  cold/warm = {cold_serial / warm:.1f}×")
    verdict = "ok" if cold < TARGET_S * students / 1000 else "FAIL"
    print(f"  target < {TARGET_S * students / 1000:.0f} s: {verdict}")


if __name__ == "__main__":
    main()
