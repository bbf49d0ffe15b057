"""A step priced on a profile calibrated on several collectives: each collective on its own segments."""

from __future__ import annotations

import contextlib
import io

import pytest

from costmodel.cli import main
from costmodel.collectives.evaluate import cost
from costmodel.links import resolve_link
from costmodel.profiles import load_profile
from costmodel.step import step
from tests.cli.test_calibrated_profile_cli import _csv


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory):
    """The profile calibrate fit writes for all-reduce and all-gather at p = 4, two regimes each."""
    folder = tmp_path_factory.mktemp("calibrated")
    log, profile = folder / "cluster.csv", folder / "cluster.toml"
    log.write_text(_csv(), encoding="utf-8")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["calibrate", "fit", str(log), "--out", str(profile)]) == 0
    return profile


def test_zero_collectives_take_their_own_segments(calibrated):
    path = calibrated
    r = step(forward_s=["1ms"] * 3, backward_s=["2ms"] * 3, gradient_bytes=["16KiB", "64KiB", "16KiB"], dp=4,
             zero=1, buckets="megatron", bucket_bytes="1B", dp_link=load_profile(path))
    by = {c: resolve_link(c, profile=path) for c in ("allgather", "reduce-scatter", "allreduce")}
    for x in r.communication[0]:
        expected = cost(x.collective, "ring", p=4, n=x.bytes, link=by[x.collective]).time_s
        assert x.end_s - x.start_s == expected, x
    gathers = [x for x in r.communication[0] if x.collective == "allgather"]
    assert gathers and all(  # the all-gather's own fit, not the all-reduce's
        x.end_s - x.start_s != cost("allgather", "ring", p=4, n=x.bytes, link=by["allreduce"]).time_s
        for x in gathers)
    assert any("fitted on allreduce" in n for n in r.notes)  # reduce-scatter borrowed the all-reduce's


def test_the_command_line_passes_the_profile_whole(calibrated, capsys):
    import json

    path = calibrated
    args = ["step", "--dp", "4", "--layers", "3", "-F", "1ms", "-b", "2ms", "--gradient-bytes", "16KiB",
            "--zero", "1", "--json"]
    assert main([*args, "--profile", str(path)]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main([*args, "--dp-link", str(path)]) == 0
    own = json.loads(capsys.readouterr().out)
    expected = step(forward_s=["1ms"] * 3, backward_s=["2ms"] * 3, gradient_bytes=["16KiB"] * 3, dp=4, zero=1,
                    link=load_profile(path))
    assert whole["step_s"] == own["step_s"] == float(expected.step_s)


# -- a GPU preset's node, fitted on nccl-tests ----------------------------------------------------


SHAPE = {"layers": 8, "hidden": 4096, "heads": 32, "sequence": 2048, "vocabulary": 51200}


def _step(**kw):
    from costmodel.step.flops import TransformerShape

    return step(shape=TransformerShape(**SHAPE), microbatches=4, micro_batch=2, recompute="full", **kw)


def test_collectives_inside_a_node_are_priced_on_the_presets_fitted_profile():
    """tp inside one A100 node: each collective on the a100-nvswitch segments of its message size (the
    all-reduce's, the all-gather's and the reduce-scatter's own), as if the profile were given."""
    for sp in (False, True):
        preset = _step(gpu="a100-80gb", tp=8, pp=2, dp=2, sequence_parallel=sp)
        given = _step(gpu="a100-80gb", tp=8, pp=2, dp=2, sequence_parallel=sp,
                      tp_link=load_profile("a100-nvswitch"))
        assert preset.tp_comm_s == given.tp_comm_s and preset.step_s == given.step_s
        assert any(n.startswith("tp inside a node: each collective priced message by message on profile "
                                "a100-nvswitch") for n in preset.notes)
    # the two-number link of the preset's [intra_node_latency] and [intra_node_busbw] is faster at these
    # sizes (16 MiB messages: its α is the smallest sizes', its β the largest's)
    flat = _step(gpu="a100-80gb", tp=8, pp=2, dp=2, tp_link="2.466us:233.2GB/s")
    assert flat.tp_comm_s < _step(gpu="a100-80gb", tp=8, pp=2, dp=2).tp_comm_s


def test_across_nodes_and_on_a_gpu_without_a_fit_nothing_changes():
    across = _step(gpu="a100-80gb", dp=16)  # dp crosses nodes: the network link, no note
    assert not any("inside a node" in n for n in across.notes)
    b200 = _step(gpu="b200", tp=8, dp=2)  # no nccl-tests log of a B200 node: the preset's two numbers
    assert not any("inside a node" in n for n in b200.notes)


def test_a_gpu_file_that_sets_its_own_node_link_drops_the_bases_fit(tmp_path):
    from costmodel.gpus import load_gpu

    own = tmp_path / "mine.toml"
    own.write_text('base = "a100-80gb"\nintra_node_busbw = "180 GB/s"\n', encoding="utf-8")
    assert load_gpu("a100-80gb").intra_node_profile == "a100-nvswitch" and load_gpu(own).intra_node_profile is None
    mine = _step(gpu=str(own), tp=8, pp=2, dp=2)
    assert mine.tp_comm_s == _step(gpu="a100-80gb", tp=8, pp=2, dp=2, tp_link="2.466us:180GB/s").tp_comm_s
