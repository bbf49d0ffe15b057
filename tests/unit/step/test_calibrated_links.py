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
