"""Exercises on federated rounds, SCAFFOLD's bytes, SSP's staleness and DP-SGD's ε.

Each expected value is worked out by hand in the comments or through another path of the library
(``privacy_account``, ``rdp_sampled_gaussian``), never read back from the example; every declared
slip is diagnosed on several variants, and random wrong answers are not.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from costmodel.examples import get
from costmodel.examples.work import Slip
from costmodel.exercises import load_bank
from costmodel.training.privacy import epsilon_from_rdp, parse_orders, rdp_sampled_gaussian
from tests.bankchecks import right_answers_correct, slips_diagnosed

BANK = load_bank()
MINE = [e for e in BANK if e.path.endswith("/federated.toml")]
MB = 10**6


def answers(name: str, settings: dict | None = None, slip: Slip | None = None) -> dict:
    return {k: a.value for k, a in get(name).run(settings, slip=slip).answers.items()}


def _epsilon(q: float, sigma: float, steps: int, delta: float) -> float:
    """ε by hand: T·rdp(α) at each order, converted by the improved bound, the best order kept."""
    return min(epsilon_from_rdp(steps * rdp_sampled_gaussian(q, sigma, a), a, delta=delta)
               for a in parse_orders())


def test_the_file_holds_the_four_exercises():
    assert {e.id for e in MINE} == {"fl-round-stragglers", "scaffold-round-bytes", "ssp-staleness",
                                    "dp-sgd-epsilon"}
    assert {e.topic for e in MINE} == {"federated-round", "synchrony", "privacy"}
    assert all(e.source for e in MINE)
    for name in ("fl-round", "scaffold-bytes", "ssp-staleness", "dp-sgd-epsilon"):
        worked = get(name).run()
        assert not worked.disagreements and "Source" in get(name).compute.__doc__


def test_fl_round_defaults():
    # M = 5e6 × 4 B = 20 MB: 20 MB / 10 MB/s = 2 s down, 20 MB / 2 MB/s = 10 s up;
    # times sorted 4, 6, 7, 9, 20: the 3rd fastest is 7 s, so 2 + 7 + 10 = 19 s
    assert answers("fl-round") == {"download": 2, "upload": 10, "round": 19}
    # waiting for all: 2 + 20 + 10 = 32 s
    assert answers("fl-round", slip=Slip("wait-for-all"))["round"] == 32
    with pytest.raises(Exception, match="fastest=6"):
        answers("fl-round", {"fastest": "6"})


def test_scaffold_bytes_defaults():
    # M = 10e6 × 4 B = 40 MB; 2M each way per client; 20 clients × 4M = 3.2 GB
    assert answers("scaffold-bytes") == {"down": 80 * MB, "up": 80 * MB, "round": 3200 * MB}
    # fp16 halves every payload
    assert answers("scaffold-bytes", {"dtype": "fp16", "sampled": "1"})["round"] == 80 * MB


def test_ssp_staleness_by_hand():
    # two equal workers, 1 s steps, bound 1: they push in turn (worker 0 first at equal times), so each
    # gradient after the first step sees the other's update: staleness 1 (N − 1), the first step 0 and 1
    got = answers("ssp-staleness", {"times": "1,1", "steps": "4", "bound": "1"})
    assert got["run-time"] == 4.0 and got["max-staleness"] == 1
    # first step: worker 0 stale by 0, worker 1 by 1; then every gradient by 1: 7/8
    assert got["mean-staleness"] == Fraction(7, 8)
    # the slowest sets the pace: 6 steps × 2 s
    assert answers("ssp-staleness")["run-time"] == 12.0


def test_dp_sgd_epsilon_against_the_accountant():
    # q = 256/60000, σ = 2.2/2 = 1.1, 2000 steps, δ = 1e-5
    got = answers("dp-sgd-epsilon")["epsilon"]
    assert math.isclose(got, _epsilon(256 / 60000, 1.1, 2000, 1e-5), rel_tol=1e-12)
    assert math.isclose(answers("dp-sgd-epsilon", slip=Slip("no-composition"))["epsilon"],
                        _epsilon(256 / 60000, 1.1, 1, 1e-5), rel_tol=1e-12)
    assert math.isclose(answers("dp-sgd-epsilon", slip=Slip("batch-for-rate"))["epsilon"],
                        _epsilon(1.0, 1.1, 2000, 1e-5), rel_tol=1e-12)
    assert math.isclose(answers("dp-sgd-epsilon", slip=Slip("noise-for-sigma"))["epsilon"],
                        _epsilon(256 / 60000, 2.2, 2000, 1e-5), rel_tol=1e-12)
    with pytest.raises(Exception, match="clip=0"):
        answers("dp-sgd-epsilon", {"clip": "0"})
    with pytest.raises(Exception, match="batch=70000 is above dataset=60000"):
        answers("dp-sgd-epsilon", {"batch": "70000"})


FORMULA_SLIPS = [("fl-round-stragglers", "round", "wait-for-all"),
                 ("dp-sgd-epsilon", "epsilon", "no-composition"),
                 ("dp-sgd-epsilon", "epsilon", "batch-for-rate"),
                 ("dp-sgd-epsilon", "epsilon", "noise-for-sigma")]


@pytest.mark.parametrize(("exercise_id", "name", "mistake"), FORMULA_SLIPS, ids=str)
def test_formula_slips_are_diagnosed(exercise_id, name, mistake):
    # skipped where the slip changes nothing for the numbers (the K-th is the slowest)
    assert slips_diagnosed(BANK.get(exercise_id), name, mistake, (None, 1, 2, 3, 5, 8, 13)) >= 4


@pytest.mark.parametrize("exercise", MINE, ids=lambda e: e.id)
def test_right_answers_are_correct_and_variants_differ(exercise):
    assert right_answers_correct(exercise) >= 3


def test_scaffold_round_bytes_scale_with_the_variant():
    exercise = BANK.get("scaffold-round-bytes")
    rng = random.Random(7)
    for seed in rng.sample(range(1000), 5):
        v = exercise.variant(seed)
        width = {"fp32": 4, "fp16": 2, "bf16": 2}[v.values["dtype"]]
        p = v.values["params"] * MB
        assert v.expected("up") == 2 * p * width
        assert v.expected("round") == v.values["sampled"] * 4 * p * width
