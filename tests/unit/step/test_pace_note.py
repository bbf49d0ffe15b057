"""A pipeline whose slowest stage works well above the others says so: that stage paces every micro-batch."""

from __future__ import annotations

from costmodel.step import TransformerShape, step

SHAPE = {"layers": 8, "hidden": 1024, "heads": 8, "sequence": 1024, "vocabulary": 256_000}  # large logits
RUN = {"dp": 1, "tp": 1, "microbatches": 8, "gpu": "h100-sxm", "allow_oom": True}


def _paced(notes) -> list[str]:
    return [n for n in notes if "paces the pipeline" in n]


def test_a_stage_with_the_output_layer_well_above_the_rest_is_named():
    even = step(shape=TransformerShape(**SHAPE), pp=2, **RUN)
    [note] = _paced(even.notes)
    assert note.startswith("pipeline stage 1 (with the output layer) computes ")
    assert "the slowest stage paces the pipeline; stage_layers= can move layers off it" in note


def test_a_balanced_pipeline_and_no_pipeline_say_nothing():
    shape = TransformerShape(**{**SHAPE, "vocabulary": 1024})  # a small output layer
    assert not _paced(step(shape=shape, pp=2, **RUN).notes)
    assert not _paced(step(shape=TransformerShape(**SHAPE), pp=1, **RUN).notes)


def test_the_note_follows_the_work_moved_off_the_last_stage():
    """Moving layers off the output layer's stage narrows the gap the note gives."""
    def over(stage_layers):
        notes = _paced(step(shape=TransformerShape(**SHAPE), pp=2, stage_layers=stage_layers, **RUN).notes)
        return int(notes[0].split(" % above")[0].rsplit(", ", 1)[1]) if notes else 0

    assert over((4, 4)) > over((6, 2)) >= 0
