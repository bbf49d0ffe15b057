"""A bucket size below a layer's gradients changes nothing, and the step says so."""

from __future__ import annotations

from costmodel.step import TransformerShape, step

SHAPE = TransformerShape(layers=4, hidden=1024, heads=16, sequence=512, vocabulary=1000)


def _step(**settings):
    return step(shape=SHAPE, dp=4, peak_flops="312T", efficiency="0.5", link="5us:25GB/s", **settings)


def test_a_bucket_below_a_layer_is_named_and_changes_nothing():
    small, smaller = _step(bucket_bytes="1MiB"), _step(bucket_bytes="1KiB")
    assert small.step_s == smaller.step_s and small.dp_comm_s == smaller.dp_comm_s
    note = next(n for n in small.notes if n.startswith("bucket_bytes="))
    assert "is not above a layer's gradients" in note and "no smaller size changes them" in note


def test_a_bucket_above_every_layer_says_nothing():
    assert not any(n.startswith("bucket_bytes=") for n in _step(bucket_bytes="1GiB").notes)
    assert not any(n.startswith("bucket_bytes=") for n in _step().notes)
