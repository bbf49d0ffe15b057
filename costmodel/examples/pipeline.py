"""Worked examples on pipeline parallelism: bubbles and in-flight micro-batches, from simulated schedules.

Every number comes from :func:`costmodel.pipeline.bubble`, which simulates the
schedule against its data dependencies (times in slots: a forward is 1 slot, a
backward 2, so F + B = 3); the closed forms are shown beside it as a check.
Sources: Huang et al. 2019 (GPipe), Narayanan et al. 2021 (1F1B and the interleaved
schedule), Qi et al. 2024 (zero bubble); docs/theory/pipeline-bubbles.md.

Two bubble definitions are in use: idle over total time, (P − 1)/(M + P − 1),
GPipe's; and idle over busy time, (P − 1)/M.  Confusing them is the slip
``bubble-definition``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from costmodel.examples import example
from costmodel.examples.kinds import COUNT, NAME, NUMBER, show_exact
from costmodel.examples.work import Given, Work
from costmodel.pipeline import bubble as simulate_bubble

# The simulator is pure and variants share (schedule, P, M): remember its results.
bubble = lru_cache(maxsize=4096)(simulate_bubble)

STAGES = Given("stages", "pipeline stages", COUNT, 4, "P")
MICRO = Given("microbatches", "micro-batches", COUNT, 4, "M")


def _fraction(w: Work, result: object) -> Fraction:
    """The bubble as the student reads it: idle/total, or idle/busy under the slip."""
    if w.slipped("bubble-definition"):
        return result.bubble_over_ideal  # type: ignore[attr-defined]
    return result.bubble_fraction  # type: ignore[attr-defined]


@example("pipeline-bubble", title="Pipeline bubble of GPipe and 1F1B",
         source="Huang et al. 2019 (GPipe); Narayanan et al. 2021 (1F1B, PipeDream-Flush)",
         topic="bubbles",
         givens=[Given("schedule", "schedule", NAME, "gpipe"), STAGES, MICRO],
         answer="bubble", slips=("bubble-definition",))
def pipeline_bubble(w: Work) -> None:
    """Simulate the schedule; the bubble is the share of stage-time spent idle.

    Source: Huang et al., GPipe, NeurIPS 2019; Narayanan et al., ICML 2021 (1F1B);
    the bubble (P − 1)/(M + P − 1).
    """
    schedule, p, m = w.values("schedule", "stages", "microbatches")
    r = bubble(schedule, p, microbatches=m)
    total = w.answer("total-slots", "time of one mini-batch, in slots", r.total_slots, NUMBER,
                     f"(M + P − 1)(F + B) = ({m} + {p} − 1) × 3")
    busy = w.step("Busy time of each stage", f"M(F + B) = {m} × 3", r.ideal_slots, NUMBER)
    w.answer("idle", "idle slots of each stage", total - busy, NUMBER, f"(P − 1)(F + B) = {p - 1} × 3")
    if w.slipped("bubble-definition"):
        how = f"idle/busy = (P − 1)/M = {p - 1}/{m}"
    else:
        how = f"idle/total = (P − 1)/(M + P − 1) = {p - 1}/{m + p - 1}"
    w.answer("bubble", "bubble fraction", _fraction(w, r), NUMBER, how)
    w.step("The other definition, idle over busy time", f"(P − 1)/M = {p - 1}/{m}", r.bubble_over_ideal,
           NUMBER)


@example("bubble-target", title="Micro-batches for a target bubble",
         source="Huang et al. 2019 (GPipe: bubble (K − 1)/(M + K − 1))", topic="bubbles",
         givens=[Given("schedule", "schedule", NAME, "1f1b"), STAGES,
                 Given("target", "largest acceptable bubble fraction", NUMBER, "0.1")],
         answer="microbatches", slips=("bubble-definition",))
def bubble_target(w: Work) -> None:
    """The fewest micro-batches M whose simulated bubble is at most the target.

    Source: GPipe's bubble (P − 1)/(M + P − 1), solved for M and checked by simulation
    (Huang et al. 2019; Narayanan et al. 2021).
    """
    schedule, p, target = w.values("schedule", "stages", "target")
    if not 0 < target < 1:
        from costmodel.errors import InputError

        raise InputError(f"target = {show_exact(target)} is not a fraction between 0 and 1")
    if w.slipped("bubble-definition"):
        guess = (p - 1) / target
        w.step("Solve (P − 1)/M ≤ target", f"M ≥ (P − 1)/target = {p - 1}/{show_exact(target)}", guess,
               NUMBER)
    else:
        guess = (p - 1) * (1 - target) / target
        w.step("Solve (P − 1)/(M + P − 1) ≤ target", f"M ≥ (P − 1)(1 − target)/target = {p - 1} × "
               f"{show_exact(1 - target)}/{show_exact(target)}", guess, NUMBER)
    m = max(1, -(-guess.numerator // guess.denominator))
    # the simulation decides: step down while one fewer still meets the target, up while it misses
    while m > 1 and _fraction(w, bubble(schedule, p, microbatches=m - 1)) <= target:
        m -= 1
    while _fraction(w, bubble(schedule, p, microbatches=m)) > target:
        m += 1
    r = bubble(schedule, p, microbatches=m)
    w.answer("microbatches", "fewest micro-batches", m, COUNT,
             f"⌈{show_exact(guess)}⌉, checked by simulation")
    w.answer("bubble", f"bubble fraction with M = {m}", _fraction(w, r), NUMBER,
             f"(P − 1)/(M + P − 1) = {p - 1}/{m + p - 1}" if not w.slipped("bubble-definition")
             else f"(P − 1)/M = {p - 1}/{m}")


@example("pipeline-inflight", title="GPipe against 1F1B: the same bubble, fewer micro-batches held",
         source="Narayanan et al. 2021 (PipeDream-Flush: 1F1B)", topic="bubbles",
         givens=[STAGES, Given("microbatches", "micro-batches", COUNT, 8, "M")],
         answer="1f1b-peak", slips=("bubble-definition",))
def pipeline_inflight(w: Work) -> None:
    """Peak micro-batches whose activations a stage holds: all M under GPipe, at most P under 1F1B.

    Source: Huang et al., GPipe, NeurIPS 2019; Narayanan et al., ICML 2021 (PipeDream-Flush).
    """
    p, m = w.values("stages", "microbatches")
    gpipe = bubble("gpipe", p, microbatches=m)
    flush = bubble("1f1b", p, microbatches=m)
    w.step("GPipe: peak micro-batches held, stage by stage", ", ".join(show_exact(x) for x in
                                                                       gpipe.peak_inflight_microbatches))
    w.step("1F1B: peak micro-batches held, stage by stage", ", ".join(show_exact(x) for x in
                                                                      flush.peak_inflight_microbatches))
    g = w.answer("gpipe-peak", "GPipe: most micro-batches a stage holds",
                 int(gpipe.max_inflight_microbatches), COUNT, "M: all forwards before the first backward")
    f = w.answer("1f1b-peak", "1F1B: most micro-batches a stage holds",
                 int(flush.max_inflight_microbatches), COUNT, "min(P, M), on the first stage")
    w.answer("saving", "activation memory of GPipe over 1F1B", Fraction(g, f), NUMBER, f"{g}/{f}")
    w.answer("bubble-gpipe", "GPipe bubble fraction", _fraction(w, gpipe), NUMBER)
    w.answer("bubble-1f1b", "1F1B bubble fraction", _fraction(w, flush), NUMBER, "the same as GPipe's")


@example("pipeline-schedules", title="Interleaved 1F1B and zero-bubble schedules",
         source="Narayanan et al. SC '21 (interleaved 1F1B); Qi et al. ICLR 2024 (ZB-H1)", topic="bubbles",
         givens=[STAGES, Given("microbatches", "micro-batches", COUNT, 8, "M"),
                 Given("chunks", "model chunks per device (interleaved)", COUNT, 2, "v")],
         answer="interleaved", slips=("bubble-definition",))
def pipeline_schedules(w: Work) -> None:
    """1F1B, interleaved 1F1B (v chunks per device) and ZB-H1 on the same work, F + B + W = 3 slots.

    Source: Narayanan et al., SC '21, section 2.2.2 (bubble shrinks v-fold); Qi et al., ICLR 2024,
    section 3.1 (ZB-H1: idle (P − 1)(F + B − W)).
    """
    p, m, v = w.values("stages", "microbatches", "chunks")
    plain = bubble("1f1b", p, microbatches=m)
    inter = bubble("interleaved", p, microbatches=m, chunks=v)
    zb = bubble("zb-h1", p, microbatches=m)
    w.step("1F1B: idle slots per stage", "(P − 1)(F + B) = " + f"{p - 1} × 3", plain.timeline[0].idle_slots,
           NUMBER)
    w.step("Interleaved: idle slots per stage", f"(P − 1)(F + B)/v = {p - 1} × 3/{v}",
           inter.timeline[0].idle_slots, NUMBER)
    w.step("ZB-H1 (B = W = 1): idle slots per stage", f"(P − 1)(F + B − W) = {p - 1} × 1",
           zb.timeline[0].idle_slots, NUMBER)
    bubbles = {"1f1b": _fraction(w, plain), "interleaved": _fraction(w, inter), "zb-h1": _fraction(w, zb)}
    w.answer("1f1b", "1F1B bubble fraction", bubbles["1f1b"], NUMBER)
    w.answer("interleaved", f"interleaved (v = {v}) bubble fraction", bubbles["interleaved"], NUMBER)
    w.answer("zb-h1", "ZB-H1 bubble fraction", bubbles["zb-h1"], NUMBER)
    w.answer("best", "schedule with the smallest bubble", min(bubbles, key=lambda k: (bubbles[k], k)), NAME)
