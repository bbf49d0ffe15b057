"""False diagnoses, counted: wrong answers unrelated to any known slip that still get one.

Run as ``python benchmarks/bench_diagnosis.py [SEEDS]``.  For every exercise and
answer of the bank and *SEEDS* public variants each (default 50), the right
value is multiplied by random factors in [0.2, 5] kept at least 3 % away from
every known slip factor of that answer (its value slips, and the ratio of each
formula slip's value to the right one).  None of these answers is a known
slip, so every diagnosis given is a false one; printed: how many answers were
tried, how many got a diagnosis, that share (the target is at most 1 %), how
many of them earned partial credit, and the mistakes named most often.
Nothing about time is asserted.
"""

from __future__ import annotations

import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from costmodel.exercises import Submission, load_bank  # noqa: E402 - after the path set-up above
from costmodel.exercises.grading import grade_answer, known_factors  # noqa: E402

TARGET = 0.01
LOW, HIGH, MARGIN = 0.2, 5.0, 0.03
PER_VARIANT = 2


def unrelated_factor(rng: random.Random, known: list[float]) -> float:
    """A factor drawn uniformly from [LOW, HIGH], at least MARGIN away from every known factor and from 1."""
    while True:
        f = rng.uniform(LOW, HIGH)
        if all(abs(f / k - 1) >= MARGIN for k in [1.0, *known]):
            return f


def false_diagnoses(seeds: int, *, rng_seed: int = 2026, bank=None) -> tuple[int, int, int, Counter]:
    """(answers tried, answers diagnosed, answers given credit, mistakes named) over *seeds* variants."""
    bank = bank if bank is not None else load_bank()
    rng = random.Random(rng_seed)
    tried = diagnosed = credited = 0
    named: Counter = Counter()
    for exercise in bank:
        for spec in exercise.answers:
            for seed in range(seeds):
                variant = exercise.variant(seed)
                answer = variant.answers[spec.name]
                value = answer.value
                if isinstance(value, str) or hasattr(value, "free_symbols") or not value:
                    continue
                known = known_factors(exercise, variant, spec.name)
                for _ in range(PER_VARIANT):
                    given = float(value / spec.scale if spec.unit else value) * unrelated_factor(rng, known)
                    text = f"{given!r} {spec.unit}".strip()
                    grade = grade_answer(exercise, Submission(exercise.id, text, seed=seed, name=spec.name))
                    tried += 1
                    if grade.correct:
                        continue
                    if grade.diagnosis:
                        diagnosed += 1
                        named.update(d.mistake for d in grade.diagnosis)
                    if grade.score:
                        credited += 1
    return tried, diagnosed, credited, named


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    start = time.perf_counter()
    tried, diagnosed, credited, named = false_diagnoses(seeds)
    took = time.perf_counter() - start
    print(f"{tried} unrelated wrong answers ({seeds} variants of every answer, factors in "
          f"[{LOW}, {HIGH}] at least {MARGIN:.0%} from every known slip)")
    print(f"diagnosed: {diagnosed} ({diagnosed / tried:.2%}; target at most {TARGET:.0%})")
    print(f"given partial credit: {credited}")
    for mistake, count in named.most_common(8):
        print(f"  {count:6d}  {mistake}")
    print(f"took {took:.1f} s")


if __name__ == "__main__":
    main()
