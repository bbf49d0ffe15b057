"""The results of a pipeline simulation: operations, per-stage timelines, and the :class:`Bubble`."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel._json import JSONFields, real, to_json_dict
from costmodel.references import Cited
from costmodel.units import format_exact

__all__ = ["DEFINITIONS", "Bubble", "PipelineOp", "StageTimeline"]

DEFINITIONS = {
    "bubble_fraction": "idle / total: idle stage-slots over stages × total_slots (GPipe's (P-1)/(M+P-1))",
    "bubble_over_ideal": "idle / ideal: idle stage-slots over busy stage-slots ((P-1)/M for GPipe and 1F1B)",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineOp(JSONFields):
    """One operation of the timeline: ``op`` of ``microbatch`` (in model ``chunk``) on one stage.

    ``op`` is ``"F"`` (forward), ``"B"`` (backward; its input-gradient half in
    the split schedules) or ``"W"`` (weight gradient).  ``chunk`` is 0 except
    in the interleaved schedule.  Times are in slots.
    """

    op: str
    microbatch: int
    chunk: int
    start: Fraction
    end: Fraction

    @property
    def label(self) -> str:
        """``F3``, or ``F3:1`` (micro-batch 3, chunk 1) in the interleaved schedule."""
        base = f"{self.op}{self.microbatch}"
        return base if self.chunk == 0 else f"{base}:{self.chunk}"


@dataclass(frozen=True, slots=True, kw_only=True)
class StageTimeline:
    """One stage (device): its operations in order, busy and idle time, peak in-flight micro-batches.

    ``peak_inflight_microbatches`` counts micro-batches whose forward has
    started and whose activations are not yet released (by ``B``, or by ``W``
    in the split schedules), in units of one micro-batch through the whole
    stage: in the interleaved schedule one chunk's micro-batch counts 1/v.
    """

    stage: int
    ops: tuple[PipelineOp, ...]
    busy_slots: Fraction
    idle_slots: Fraction
    peak_inflight_microbatches: Fraction

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, skip=("ops",))


@dataclass(frozen=True, slots=True, kw_only=True)
class Bubble:
    """A simulated pipeline schedule: its timeline, makespan and bubble (times in slots).

    ``bubble_fraction`` = idle / total = ``idle_slots / (stages × total_slots)``;
    ``bubble_over_ideal`` = idle / ideal = ``idle_slots / busy_slots``, where
    ``idle_slots`` and ``busy_slots`` are summed over the stages.
    ``forward_slots``, ``backward_slots`` and ``weight_slots`` are per
    micro-batch per stage (all chunks together); in the schedules that do not
    split the backward, one ``B`` operation takes ``backward_slots +
    weight_slots``.  Communication time is idle time.
    """

    schedule: str
    stages: int
    microbatches: int
    chunks: int
    forward_slots: Fraction
    backward_slots: Fraction
    weight_slots: Fraction
    comm_slots: Fraction
    total_slots: Fraction
    timeline: tuple[StageTimeline, ...]
    sources: tuple[Cited, ...]
    formula: str
    notes: tuple[str, ...] = ()

    @property
    def busy_slots(self) -> Fraction:
        """Busy stage-slots, summed over the stages (M·(F+B+W) each)."""
        return sum((s.busy_slots for s in self.timeline), Fraction(0))

    @property
    def idle_slots(self) -> Fraction:
        """Idle stage-slots, summed over the stages."""
        return sum((s.idle_slots for s in self.timeline), Fraction(0))

    @property
    def ideal_slots(self) -> Fraction:
        """The makespan without a bubble: one stage's busy time, M·(F+B+W)."""
        return self.microbatches * (self.forward_slots + self.backward_slots + self.weight_slots)

    @property
    def bubble_fraction(self) -> Fraction:
        """Idle / total: the share of all stage-slots spent idle."""
        return self.idle_slots / (self.stages * self.total_slots)

    @property
    def bubble_over_ideal(self) -> Fraction:
        """Idle / ideal: idle stage-slots per busy stage-slot."""
        return self.idle_slots / self.busy_slots

    @property
    def peak_inflight_microbatches(self) -> tuple[Fraction, ...]:
        """Peak in-flight micro-batches per stage (activation memory, in micro-batches)."""
        return tuple(s.peak_inflight_microbatches for s in self.timeline)

    @property
    def max_inflight_microbatches(self) -> Fraction:
        """The largest peak over the stages."""
        return max(self.peak_inflight_microbatches)

    def to_dict(self) -> dict[str, object]:
        """JSON-native values; times in slots, fractions also exactly as ``"p/q"`` strings."""
        return {
            "schedule": self.schedule,
            "stages": self.stages,
            "microbatches": self.microbatches,
            "chunks": self.chunks,
            "forward_slots": real(self.forward_slots),
            "backward_slots": real(self.backward_slots),
            "weight_slots": real(self.weight_slots),
            "comm_slots": real(self.comm_slots),
            "total_slots": real(self.total_slots),
            "ideal_slots": real(self.ideal_slots),
            "busy_slots": real(self.busy_slots),
            "idle_slots": real(self.idle_slots),
            "bubble_fraction": real(self.bubble_fraction),
            "bubble_fraction_exact": format_exact(self.bubble_fraction),
            "bubble_over_ideal": real(self.bubble_over_ideal),
            "bubble_over_ideal_exact": format_exact(self.bubble_over_ideal),
            "definitions": dict(DEFINITIONS),
            "formula": self.formula,
            "peak_inflight_microbatches": [real(x) for x in self.peak_inflight_microbatches],
            "max_inflight_microbatches": real(self.max_inflight_microbatches),
            "per_stage": [s.to_dict() for s in self.timeline],
            "timeline": [[op.to_dict() for op in s.ops] for s in self.timeline],
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


