"""Fewer garbage collections inside a block: nested entries, an exception, and the caller's thresholds."""

from __future__ import annotations

import gc

import pytest

from costmodel._gc import YOUNG_COLLECTION, fewer_collections
from costmodel.params import combine_link


def test_nested_blocks_give_the_callers_thresholds_back_once_the_outermost_leaves():
    before = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        with fewer_collections():
            assert gc.get_threshold() == (YOUNG_COLLECTION, 7, 9)
            with pytest.raises(ZeroDivisionError), fewer_collections():
                1 / 0  # noqa: B018
            assert gc.get_threshold() == (YOUNG_COLLECTION, 7, 9)  # the inner exit keeps the outer's
        assert gc.get_threshold() == (500, 7, 9)
        gc.set_threshold(10**6, 7, 9)  # a caller's higher threshold is kept
        with fewer_collections():
            assert gc.get_threshold() == (10**6, 7, 9)
    finally:
        gc.set_threshold(*before)


def test_a_step_collects_less_often_while_it_is_priced(monkeypatch):
    from costmodel.step import model, step

    seen = []
    real = model.simulate_pipeline

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold()[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "simulate_pipeline", spy)
    before = gc.get_threshold()
    step(forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, pp=2, microbatches=4, activation_bytes="1MiB",
         link=combine_link(alpha="1us", beta="0.1ns/B"))
    assert seen and min(seen) >= YOUNG_COLLECTION and gc.get_threshold() == before
