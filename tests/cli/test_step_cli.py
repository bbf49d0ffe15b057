"""The command-line contract of ``costmodel step``: JSON equal to the library's, and the human rendering.

The command lives in ``cli/step.py``; its bad inputs are in ``test_bad_input.py``.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from costmodel.cli.output import _json
from costmodel.links import resolve_link
from costmodel.step import TransformerShape, step

TIMES = ["--dp", "4", "--layers", "8", "-F", "2ms", "-b", "4ms", "--gradient-bytes", "50MB",
         "--profile", "ib-hdr"]
SHAPE = ["--dp", "8", "--tp", "8", "--pp", "4", "-m", "8", "--layers", "32", "--hidden", "4096",
         "--heads", "32", "--seq", "2048", "--vocab", "51200", "--peak", "312T", "--efficiency", "0.5",
         "--profile", "nvlink4", "--dp-link", "ib-hdr"]


def test_per_layer_times_only_the_last_bucket_is_exposed(cli):
    data = cli.json("step", *TIMES)
    # ring all-reduce of one 50 MB layer over 4 ranks on 1 µs, 25 GB/s: 6α + (3/2)·n·β = 3.006 ms,
    # shorter than a layer's 4 ms backward: every bucket but the last hides behind the next layers
    bucket = 6 * Fraction(1, 10**6) + Fraction(3, 2) * 50 * 10**6 / (25 * 10**9)
    assert bucket == Fraction(3006, 10**6)
    assert data["compute_s"] == 8 * 0.006
    assert data["dp_comm_s"] == pytest.approx(float(8 * bucket), rel=1e-15)
    assert data["dp_exposed_s"] == pytest.approx(float(bucket), rel=1e-15)
    assert data["step_s"] == pytest.approx(0.048 + float(bucket), rel=1e-15)
    assert data["scaling_efficiency"] == pytest.approx(0.048 / (0.048 + float(bucket)), rel=1e-15)
    assert [b["exposed_s"] for b in data["buckets"]][:-1] == [0] * 7
    assert data["tokens_per_s"] is None and data["mfu"] is None


def test_the_frameworks_overlap_turned_off_or_on_from_the_command_line(cli):
    """overlap_grad_reduce defaults to the framework's: --no-overlap-grad-reduce turns DDP's off and
    --overlap-grad-reduce turns Megatron-LM's on, as the library's False and True do."""
    times = {"forward_s": ["2ms"] * 8, "backward_s": ["4ms"] * 8, "gradient_bytes": ["50MB"] * 8,
             "link": resolve_link("allreduce", profile="ib-hdr")}
    for framework, flag, value in (("ddp", "--no-overlap-grad-reduce", False),
                                   ("megatron", "--overlap-grad-reduce", True)):
        data = cli.json("step", *TIMES, "--framework", framework, flag)
        expected = step(dp=4, framework=framework, overlap_grad_reduce=value, **times)
        assert data == json.loads(_json(expected)), framework
        default = cli.json("step", *TIMES, "--framework", framework)
        assert (data["dp_exposed_s"] < default["dp_exposed_s"]) is value, framework


def test_zero_link_costs_give_the_sum_of_the_compute_and_the_optimizer(cli):
    data = cli.json("step", "--dp", "4", "--layers", "3", "-F", "1ms", "-b", "2ms", "--gradient-bytes", "1GB",
                    "--alpha", "0", "--beta", "0ns/B", "--optimizer", "5ms")
    assert data["step_s"] == pytest.approx(3 * 0.003 + 0.005, rel=1e-15)
    assert data["dp_exposed_s"] == 0 and data["optimizer_s"] == 0.005


def test_shape_json_equals_the_library(cli):
    data = cli.json("step", *SHAPE)
    shape = TransformerShape(layers=32, hidden=4096, heads=32, sequence=2048, vocabulary=51200)
    expected = step(dp=8, tp=8, pp=4, microbatches=8, shape=shape, peak_flops=312 * 10**12, efficiency="0.5",
                    link=resolve_link("allreduce", profile="nvlink4"),
                    dp_link=resolve_link("allreduce", profile="ib-hdr"))
    assert data == json.loads(_json(expected))
    assert data["gpus"] == 256 and 0 < data["mfu"] < 0.5 and data["tokens_per_s"] > 0


def test_per_layer_json_equals_the_library(cli):
    data = cli.json("step", "--pp", "2", "-m", "4", "--layers", "4", "-F", "1ms", "-b", "2ms",
                    "--activation-bytes", "8MiB", "--tokens", "2048", "--schedule", "zb-h1",
                    "--alpha", "5us", "--bandwidth", "25GB/s")
    expected = step(pp=2, microbatches=4, schedule="zb-h1", forward_s=["1ms"] * 4, backward_s=["2ms"] * 4,
                    activation_bytes="8MiB", tokens=2048,
                    link=resolve_link("allreduce", alpha="5us", bandwidth="25GB/s"))
    assert data == json.loads(_json(expected))


def test_text_at_80_columns(cli):
    out, err = cli.text("step", *SHAPE, columns=80)
    assert not err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80, [line for line in lines if len(line) > 80]
    assert lines[0] == "step · dp 8 × tp 8 × pp 4 = 256 GPUs · 1f1b · M = 8"
    assert lines[1].endswith("per step")
    for part in ("compute", "TP communication", "pipeline bubble", "exposed PP sends",
                 "exposed DP communication", "optimizer", "DP communication", "hidden", "exposed",
                 "tokens/s", "MFU", "scaling efficiency", "note: tensor-parallel collectives"):
        assert part in out, part
    assert "bucket" in out and "ready" in out and "start" in out


def test_text_of_one_device_leaves_the_data_parallel_rows_out(cli):
    out, _ = cli.text("step", "--layers", "4", "-F", "1ms", "-b", "2ms", "--tokens", "2048", columns=80)
    assert "12 ms per step" in out and "tokens/s" in out
    assert "hidden" not in out and "bucket" not in out and "MFU" not in out
    assert "1 GPU ·" in out


@pytest.mark.parametrize("zero", ["1", "2", "3"])
def test_zero_json_equals_the_library_and_its_text_fits(cli, zero):
    args = ["--dp", "4", "--layers", "4", "-F", "2ms", "-b", "4ms", "--gradient-bytes", "50MB", "-m", "2",
            "--profile", "ib-hdr", "--zero", zero, "--slowdown", "0.1", "--optimizer", "1ms"]
    data = cli.json("step", *args)
    expected = step(dp=4, microbatches=2, forward_s=["2ms"] * 4, backward_s=["4ms"] * 4,
                    gradient_bytes=["50MB"] * 4, link=resolve_link("allreduce", profile="ib-hdr"),
                    zero=int(zero), slowdown="0.1", optimizer_s="1ms")
    assert data == json.loads(_json(expected))
    assert data["zero"] == int(zero) and data["slowdown"] == 0.1 and data["contention_s"] > 0
    out, err = cli.text("step", *args, columns=80)
    assert not err and max(map(len, out.splitlines())) <= 80
    assert f"data parallel: ZeRO {zero}," in out and "compute slowdown" in out
    assert ("parameter all-gather" in out) == (zero != "3")
    assert ("all-gathers" in out) == (zero == "3")


def test_shape_text_shows_the_memory_per_gpu(cli):
    out, _ = cli.text("step", *SHAPE, "--zero", "1", columns=80)
    assert "memory per GPU" in out and "(stage 0)" in out
    assert "model states" in out and "activations" in out and "(4 micro-batches)" in out


def test_per_layer_lists_and_link_texts(cli):
    data = cli.json("step", "-F", "1ms,2ms,2ms,1ms", "-b", "2ms", "--gradient-bytes", "1MB,2MB,2MB,1MB",
                    "--dp", "2", "--dp-link", "5us:10GB/s")
    expected = step(forward_s=["1ms", "2ms", "2ms", "1ms"], backward_s=["2ms"] * 4,
                    gradient_bytes=["1MB", "2MB", "2MB", "1MB"], dp=2,
                    dp_link=resolve_link("allreduce", alpha="5us", bandwidth="10GB/s"))
    assert data["step_s"] == float(expected.step_s)
    assert data["compute_s"] == pytest.approx(0.014, rel=1e-15)


def test_levels_place_the_groups(cli):
    out, err = cli.text("step", *SHAPE[:-4], "--level", "8:2us:300GB/s:nvlink", "--level", "64:5us:25GB/s:ib",
                        columns=80)
    assert not err and "note: placement: tp on nvlink, dp on ib, pp on ib (rank order tp-dp-pp)" in out
    swapped = cli.json("step", *SHAPE[:-4], "--level", "8:2us:300GB/s:nvlink", "--level", "64:5us:25GB/s:ib",
                       "--order", "dp-tp-pp")
    assert "placement: dp on nvlink, tp on ib, pp on ib (rank order dp-tp-pp)" in swapped["notes"]
SWEEP = [*SHAPE[2:], "--sweep", "dp=1..64x2"]  # SHAPE without its --dp


def test_sweep_json_equals_the_library(cli):
    from costmodel.step import sweep_step

    data = cli.json("step", *SWEEP)
    shape = TransformerShape(layers=32, hidden=4096, heads=32, sequence=2048, vocabulary=51200)
    expected = sweep_step("dp", "1,2,4,8,16,32,64", tp=8, pp=4, microbatches=8, shape=shape,
                          peak_flops=312 * 10**12, efficiency="0.5",
                          link=resolve_link("allreduce", profile="nvlink4"),
                          dp_link=resolve_link("allreduce", profile="ib-hdr"))
    assert data == json.loads(_json(expected))
    assert list(data) == ["knob", "parameter", "kind", "points", "best", "notes"]
    assert list(data["points"][0]) == ["value", "skipped", "step_s", "compute_s", "tp_comm_s", "cp_comm_s",
                                       "bubble_s", "pp_exposed_s", "dp_exposed_s", "contention_s", "optimizer_s",
                                       "param_gather_s", "dp_comm_s", "ep_comm_s", "expert_dp_s", "gpus",
                                       "tokens_per_s", "mfu", "scaling_efficiency"]
    assert [p["value"] for p in data["points"]] == [1, 2, 4, 8, 16, 32, 64]
    steps = [p["step_s"] for p in data["points"]]
    assert data["best"] == steps.index(min(steps)) == 0


def test_sweep_table_at_80_columns(cli):
    out, err = cli.text("step", *SHAPE[:4], *SHAPE[6:], "--sweep", "pp=1..8", columns=80)
    assert not err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80, [line for line in lines if len(line) > 80]
    assert lines[0] == "step sweep of pp · 8 values"
    assert lines[1].startswith("best: pp = 1 (the most tokens/s per GPU), ") and lines[1].endswith(" per step")
    header = lines[4].split()
    assert header[:2] == ["pp", "step"] and "MFU" in header and "scaling" in header
    rows = {line.split()[0]: line for line in lines[5:13]}
    assert list(rows) == [str(v) for v in range(1, 9)]
    assert rows["1"].endswith(" best") and sum(line.endswith(" best") for line in lines) == 1
    assert rows["3"].split()[1] == "skipped" and rows["5"].split()[1] == "skipped"
    assert "note: pp=3, 5, 6, 7 skipped: 32 layers do not split evenly over pp=…" in " ".join(out.split())


def test_sweep_of_names_and_sizes_in_the_table(cli):
    out, _ = cli.text("step", *TIMES, "--sweep", "bucket-size=25MB..400MBx2", columns=80)
    assert [line.split()[:2] for line in out.splitlines()[5:10]] == [
        ["25", "MB"], ["50", "MB"], ["100", "MB"], ["200", "MB"], ["400", "MB"]]
    out, _ = cli.text("step", "--pp", "2", "-m", "4", "--layers", "4", "-F", "1ms", "-b", "2ms",
                      "--activation-bytes", "8MiB", "--alpha", "5us", "--bandwidth", "25GB/s",
                      "--sweep", "schedule=gpipe,zb", columns=80)
    assert "best: schedule = zb-h1 (the fastest step)" in out and "gpipe " in out


def test_an_option_and_a_sweep_of_the_same_knob_are_an_error(cli):
    _, err = cli("step", *TIMES, "--sweep", "dp=1,2", rc=2)
    assert err == "error: --dp is given and --sweep dp=... varies it; drop --dp or sweep another knob\n"
    _, err = cli("step", *TIMES, "--sweep", "profile=ib-hdr,nvlink4", rc=2)
    assert "--profile is given and --sweep profile=... varies it" in err
    data = cli.json("step", *TIMES[:-2], "--sweep", "profile=ib-hdr,nvlink4")
    assert [p["value"] for p in data["points"]] == ["ib-hdr", "nvlink4"]


def test_a_profile_with_levels_places_the_groups(cli, tmp_path):
    machine = tmp_path / "machine.toml"
    machine.write_text('[profile]\nname = "two-level"\ntitle = "8 GPUs a node"\n\n'
                       '[[level]]\nname = "nvlink"\nsize = 8\nalpha = "2 us"\nbandwidth = "450 GB/s"\n\n'
                       '[[level]]\nname = "ib"\nsize = 32\nalpha = "5 us"\nbandwidth = "50 GB/s"\n',
                       encoding="utf-8")
    model = ["--dp", "8", "--tp", "8", "--layers", "8", "--hidden", "4096", "--heads", "32", "--seq", "2048",
             "--vocab", "51200", "--peak", "989T", "--efficiency", "0.5"]
    by_file = cli.json("step", *model, "--profile", str(machine))
    by_levels = cli.json("step", *model, "--level", "8:2us:450GB/s:nvlink", "--level", "32:5us:50GB/s:ib")
    assert by_file == by_levels
    assert "placement: tp on nvlink, dp on ib (rank order tp-dp-pp)" in by_file["notes"]


def test_every_setting_is_an_option_and_messages_name_options_it_has():
    """One declaration: each setting of StepConfig with an option of its own is an option of the command,
    and the option a core message is rewritten to (cli/flags.py) is one the command has."""
    import typer.main

    from costmodel.cli.flags import FLAGS
    from costmodel.cli.step import app
    from costmodel.step.config import settings

    command = typer.main.get_command(app)
    opts = {o for p in command.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    names = {p.name for p in command.params}
    own = [name for name, _, setting in settings() if setting.own_option]
    for name in own:
        assert name in names and FLAGS[name] in opts, name
    assert {"shape", "link", "topology"}.isdisjoint(names)  # built from the groups' options


def test_step_notes_do_not_offer_options_it_has_not(cli):
    """Buckets and activations are modelled sizes: the collectives' note on chunks of whole bytes (and its
    --whole-bytes) stays out of a step's output."""
    out, _ = cli.text("step", "--dp", "3", "--tp", "3", "--layers", "4", "--hidden", "96", "--heads", "3",
                      "--seq", "7", "--vocab", "100", "--gpu", "a100-80gb", columns=80)
    assert "whole" not in out and "does not split evenly" not in out
    data = cli.json("step", "--dp", "3", "--layers", "4", "-F", "1ms", "-b", "2ms", "--gradient-bytes", "1000001B",
                    "--profile", "ib-hdr")
    assert not [n for n in data["notes"] if "whole" in n]


MOE = ["--layers", "8", "--hidden", "1024", "--heads", "16", "--seq", "2048", "--vocab", "32000", "--gated",
       "--experts", "8", "--top-k", "2", "--ep", "8", "--dp", "8", "--gpu", "h100-sxm"]


def test_expert_parallel_step_at_80_columns(cli):
    out, err = cli.text("step", *MOE, columns=80)
    assert not err and max(map(len, out.splitlines())) <= 80
    assert "ep 8" in out.splitlines()[0]
    assert "EP all-to-alls" in out and "8.389 MB = 8 MiB per rank" in out
    data = cli.json("step", *MOE)
    shape = TransformerShape(layers=8, hidden=1024, heads=16, sequence=2048, vocabulary=32000, gated=True, experts=8,
                             top_k=2)
    assert data == json.loads(_json(step(shape=shape, ep=8, dp=8, gpu="h100-sxm")))
    assert data["ep"] == 8 and data["ep_alltoall_bytes"] == 2 * 2048 * 1024 * 2  # k·T·h·bf16
