"""The seeds' pipeline-parallelism diagrams and bubble fraction, reproduced by simulation.

From ``shared/seeds/collective-communication-patterns.txt``, section "Pipeline Parallelism":
the GPipe forward diagram (P = 4), the bubble fraction (P−1)/(M+P−1), and the 1F1B
(PipeDream-Flush) diagram for P = 4, M = 4.  Each test's id is the seed's wording.

Not reproduced literally: the seed's 1F1B diagram leaves out the steady-state forwards.  It
shows GPU 1 as ``F0 F1 F2 B0 B1 B2 B3``, but GPU 1 must also run F3 (every stage runs every
micro-batch's forward), and 1F1B runs it right after B0: ``F0 F1 F2 B0 F3 B1 B2 B3``.  What the
diagram does show exactly is each GPU's warm-up (P − s forwards before its first backward, the
peak in-flight count) and the order of the backwards; the tests check those, and that the
diagram is the simulated order with the steady-state forwards removed.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.pipeline import bubble, format_timeline

# The seed's 1F1B diagram, P = 4, M = 4 (GPU s on line s).
SEED_1F1B = [
    "F0 F1 F2 F3 B0 B1 B2 B3",
    "F0 F1 F2 B0 B1 B2 B3",
    "F0 F1 B0 B1 B2 B3",
    "F0 B0 B1 B2 B3",
]


def seed(title: str) -> pytest.MarkDecorator:
    """Give the test the seed's wording as its id."""
    return pytest.mark.parametrize("section", [title], ids=[title])


def labels(result, stage: int) -> list[str]:
    return [op.label for op in result.timeline[stage].ops]


@seed("Pipeline Parallelism: GPU 0 [F0_b0] ... GPU 3 starts three slots later")
def test_gpipe_forward_diagram(section: str) -> None:
    # the seed's first diagram: each GPU starts one forward slot after the one before it
    result = bubble("gpipe", 4, microbatches=4)
    for s in range(4):
        forwards = [op for op in result.timeline[s].ops if op.op == "F"]
        assert [op.microbatch for op in forwards] == [0, 1, 2, 3]
        assert [op.start for op in forwards] == [s, s + 1, s + 2, s + 3]  # F = 1 slot, no communication


@seed("Pipeline Parallelism: bubble ≈ (P-1)/(M+P-1)")
@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(("p", "m"), [(4, 4), (4, 8), (4, 16), (8, 32)])
def test_bubble_fraction(section: str, schedule: str, p: int, m: int) -> None:
    result = bubble(schedule, p, microbatches=m)
    assert result.bubble_fraction == Fraction(p - 1, m + p - 1)
    # F = 1, B = 2: (M + P − 1) slots of F + B
    assert result.total_slots == 3 * (m + p - 1)


@seed("Pipeline Parallelism: P = 4, M = 4 gives 3/7 of the time idle")
def test_bubble_p4_m4(section: str) -> None:
    # (4 − 1)/(4 + 4 − 1) = 3/7; over the ideal 4·3 = 12 slots: 9/12 = 3/4
    result = bubble("gpipe", 4, microbatches=4)
    assert (result.bubble_fraction, result.bubble_over_ideal) == (Fraction(3, 7), Fraction(3, 4))
    assert result.total_slots == 21


@seed("1F1B schedule (PipeDream-Flush): GPU s: F0 .. B3")
def test_one_f_one_b_diagram(section: str) -> None:
    result = bubble("pipedream-flush", 4, microbatches=4)
    for s, line in enumerate(SEED_1F1B):
        got = labels(result, s)
        shown = line.split()
        first_backward = shown.index("B0")
        # the warm-up: P − s forwards, then B0, exactly as drawn
        assert got[: first_backward + 1] == shown[: first_backward + 1] == [*(f"F{j}" for j in range(4 - s)), "B0"]
        # the backwards in the drawn order
        assert [x for x in got if x.startswith("B")] == [x for x in shown if x.startswith("B")]
        # the drawing is the schedule without its steady-state forwards (those after B0)
        assert [x for i, x in enumerate(got) if i <= first_backward or x.startswith("B")] == shown
    # GPU 0 holds all four micro-batches before its first backward, as drawn in full
    assert labels(result, 0) == SEED_1F1B[0].split()


@seed("1F1B interleaves forward and backward passes to reduce peak memory")
def test_one_f_one_b_holds_fewer_microbatches(section: str) -> None:
    gpipe = bubble("gpipe", 4, microbatches=8)
    flush = bubble("1f1b", 4, microbatches=8)
    assert gpipe.peak_inflight_microbatches == (8, 8, 8, 8)  # GPipe: all M on every stage
    assert flush.peak_inflight_microbatches == (4, 3, 2, 1)  # 1F1B: P − s on stage s
    assert flush.bubble_fraction == gpipe.bubble_fraction  # the same bubble


@seed("1F1B schedule: the diagram as text")
def test_text_timeline_not_to_scale_matches_the_seed_order(section: str) -> None:
    # GPU 0's line is the seed's, with its idle gaps marked (B0 waits for B0 of GPU 1, ...)
    result = bubble("1f1b", 4, microbatches=4, backward_slots=1)
    lines = format_timeline(result, to_scale=False)
    assert lines[0] == "GPU 0: F0 F1 F2 F3 · B0 · B1 · B2 · B3"
    assert lines[0].replace(" ·", "") == "GPU 0: " + SEED_1F1B[0]
    assert lines[3] == "GPU 3: · F0 B0 F1 B1 F2 B2 F3 B3 ·"
