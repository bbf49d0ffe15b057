"""``costmodel plan`` and ``plot plan``: the command line's plan is the library's, its JSON carries every row's
settings and breakdown, and the frontier is drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.step import TransformerShape
from costmodel.step.planner import plan

SHAPE = ["--layers", "4", "--hidden", "512", "--heads", "8", "--seq", "256", "--vocab", "1024"]
MACHINE = ["--gpu", "a100-80gb", "--nodes", "1", "--global-batch", "16"]


def test_the_json_is_the_librarys_plan(cli):
    data = cli.json("plan", *SHAPE, *MACHINE, "--top", "4", "--micro-batch-sizes", "1,2", "--fix", "recompute=full")
    p = plan(TransformerShape(layers=4, hidden=512, heads=8, sequence=256, vocabulary=1024), gpu="a100-80gb",
             nodes=1, global_batch=16, top=4, micro_batch_sizes=(1, 2), recompute="full")
    assert [r["step_s"] for r in data["rows"]] == [float(r.step_s) for r in p.rows]
    assert data["considered"] == p.considered and data["priced"] == p.priced and data["exact"] is True
    first = data["rows"][0]
    assert first["rank"] == 1 and first["behind_s"] == 0 and first["recompute"] == "full"
    assert set(first["breakdown"]) >= {"compute_s", "tp_comm_s", "bubble_s", "dp_exposed_s", "optimizer_s"}
    assert sum(first["breakdown"].values()) == pytest.approx(first["step_s"], rel=1e-12)
    assert {r["kind"] for r in data["refused"]} <= {"invalid", "memory", "pruned"}


def test_the_table_names_the_best_and_the_counts(cli):
    out, _ = cli.text("plan", *SHAPE, *MACHINE, "--top", "3", columns=80)
    assert out.startswith("plan · 8 × a100-80gb (1 node × 8) · global batch 16 · megatron\nbest: dp ")
    words = " ".join(out.split())
    assert "configurations considered:" in words and "pruned by the bound" in words
    assert "note: exact: every configuration not priced" in words
    assert max(len(line) for line in out.splitlines()) <= 80


def test_plot_plan_draws_the_frontier(cli, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "plan.png"
    out, _ = cli("plot", "plan", *SHAPE, *MACHINE, "--out", str(target))
    assert out.startswith(f"wrote {target}: Plan: 8 × a100-80gb, global batch 16:")
    assert Path(target).stat().st_size > 10_000
    data = cli.json("plot", "plan", *SHAPE, *MACHINE, "--top", "3")
    assert data["plot"] == "plan" and any(p["pareto"] for p in data["points"])
    assert sum(p["ranked"] for p in data["points"]) == 3


DATA = Path(__file__).resolve().parents[1] / "data"
MIXTRAL = str(DATA / "hf" / "mixtral-8x7b" / "config.json")


def test_a_model_preset_and_a_hugging_face_config_are_planned_as_step_takes_them(cli):
    """--model and --hf-config with the shape's options over them; the preset's settings held (Mixtral: no
    dropout, causal) and ep searched for its experts."""
    from costmodel.describe import load_model, read_hf_config

    small = ["--layers", "4", "--seq", "256"]
    machine = ["--gpu", "h100-sxm", "--nodes", "1", "--global-batch", "16", "--micro-batch-sizes", "1"]
    by_name = cli.json("plan", "--model", "mixtral-8x7b", *small, *machine, "--top", "3")
    described = load_model("mixtral-8x7b").with_shape(layers=4, sequence=256)
    p = plan(described, gpu="h100-sxm", nodes=1, global_batch=16, micro_batch_sizes=(1,), top=3)
    assert [r["step_s"] for r in by_name["rows"]] == [float(r.step_s) for r in p.rows]
    assert p.rows[0].config.dropout is False and p.rows[0].config.causal is True
    assert any(r["ep"] > 1 for r in by_name["rows"]) and "model: Mixtral 8x7B" in by_name["notes"]
    by_file = cli.json("plan", "--hf-config", MIXTRAL, *small, *machine, "--top", "3")
    from_file = plan(read_hf_config(MIXTRAL).with_shape(layers=4, sequence=256), gpu="h100-sxm", nodes=1,
                     global_batch=16, micro_batch_sizes=(1,), top=3)
    assert [r["step_s"] for r in by_file["rows"]] == [float(r.step_s) for r in from_file.rows]
    held = cli.json("plan", "--model", "mixtral-8x7b", *small, *machine, "--top", "1", "--fix", "dropout=true")
    assert held["rows"][0]["step_s"] != by_name["rows"][0]["step_s"]  # --fix over the preset's setting


def test_moe_options_plan_expert_parallelism_and_the_table_shows_cp_and_ep(cli):
    moe = [*SHAPE, "--experts", "4", "--top-k", "2"]
    data = cli.json("plan", *moe, *MACHINE, "--top", "200")
    assert {r["ep"] for r in data["rows"]} == {1, 2, 4} and {r["cp"] for r in data["rows"]} >= {1, 2}
    assert all((r["dp"] * r["cp"]) % r["ep"] == 0 for r in data["rows"])
    assert {"cp_comm_s", "ep_comm_s", "expert_dp_s"} <= set(data["rows"][0]["breakdown"])
    out, _ = cli.text("plan", *moe, *MACHINE, "--top", "200", columns=120)
    head = next(line for line in out.splitlines() if line.lstrip().startswith("# "))
    assert head.split()[:6] == ["#", "tp", "cp", "pp", "dp", "ep"]


def test_the_machine_as_a_gpu_count(cli):
    """--gpus N as step takes it: whole nodes, or part of one; with --nodes, or neither, refused."""
    by_nodes = cli.json("plan", *SHAPE, "--gpu", "a100-80gb", "--nodes", "2", "--global-batch", "16", "--top", "2")
    by_gpus = cli.json("plan", *SHAPE, "--gpu", "a100-80gb", "--gpus", "16", "--global-batch", "16", "--top", "2")
    assert by_gpus["rows"] == by_nodes["rows"] and (by_gpus["nodes"], by_gpus["gpus"]) == (2, 16)
    part = cli.json("plan", *SHAPE, "--gpu", "a100-80gb", "--gpus", "4", "--global-batch", "16", "--top", "2")
    assert (part["nodes"], part["gpus_per_node"], part["gpus"]) == (1, 4, 4)
    for extra, needle in ((["--gpus", "12"], "12 GPUs are not a whole number of nodes of 8 GPUs"),
                          (["--gpus", "16", "--nodes", "2"], "--nodes 2 and 16 GPUs were both given"),
                          ([], "give the machine as --nodes N or as a GPU count")):
        _, err = cli("plan", *SHAPE, "--gpu", "a100-80gb", "--global-batch", "16", *extra, rc=2)
        assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("held", ["gpu=a100-80gb", "gpus=8", "nodes=1", "top=3", "gpus-per-node=8",
                                  "global-batch=64", "micro-batch-sizes=1", "shape=x", "framework=fsdp"])
def test_the_plans_own_options_cannot_be_held(cli, held):
    _, err = cli("plan", *SHAPE, *MACHINE, "--fix", held, rc=2)
    assert "is an option of its own" in err and "drop it from --fix" in err and err.count("\n") == 1


@pytest.mark.parametrize(("typed", "setting"), [("bucket-size=1MiB", "bucket_bytes"), ("sp=true", "sequence_parallel"),
                                                ("--efficiency=0.5", "efficiency"), ("optimizer=5ms", "optimizer_s"),
                                                ("tp=8", "tp"), ("overlap_grad_reduce=true", "overlap_grad_reduce")])
def test_fix_takes_the_step_commands_option_names(typed, setting):
    from costmodel.cli.plan import _fix

    assert _fix(typed)[0] == setting


def test_megatron_arguments_give_the_model_and_the_batch_and_their_layout_is_searched(cli):
    """plan --megatron takes the model, the global batch and the settings the plan does not vary from
    Megatron-LM's arguments; their tp, pp, micro-batch ... are among those it searches, not held, as a note
    says, so the plan is the one of the same model given by options."""
    arguments = ("--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 256 --vocab-size 1024 "
                 "--tensor-model-parallel-size 2 --micro-batch-size 2 --global-batch-size 16 "
                 "--recompute-granularity full")
    read = cli.json("plan", "--megatron", arguments, "--gpu", "a100-80gb", "--nodes", "1", "--top", "4",
                    "--fix", "recompute=full", "--fix", "dropout=true")
    typed = cli.json("plan", *SHAPE, *MACHINE, "--top", "4", "--fix", "recompute=full")
    assert [r["step_s"] for r in read["rows"]] == [r["step_s"] for r in typed["rows"]]
    assert read["global_batch"] == 16
    assert any(n.startswith("the layout Megatron-LM's arguments give (tp 2, micro-batch 2, recompute full) is "
                            "one the plan searches, not held") for n in read["notes"])
    _, err = cli("plan", "--megatron", "--num-layers 4", "--gpu", "a100-80gb", "--nodes", "1", rc=2)
    assert err == "error: no global batch given; pass --global-batch B (sequences per step)\n"
