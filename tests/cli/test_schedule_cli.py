"""The schedule command: JSON contract, verification, and what a learner sees."""

from __future__ import annotations

import pytest


def test_ring_p4_json_contract(cli):
    data = cli.json("schedule", "allreduce", "ring", "-p", "4", "-n", "100MB", "--verify")
    assert {"collective", "algorithm", "p", "steps", "rounds", "bytes_sent_per_rank", "time_s",
            "verified"} <= set(data)
    assert data["rounds"] == len(data["steps"]) == 6
    first = data["steps"][0][0]
    assert set(first) >= {"src", "dst", "chunk", "op", "bytes"}
    assert first["bytes"] == 25_000_000  # 100 MB in 4 chunks
    # reduce-scatter adds, all-gather copies
    assert {t["op"] for step in data["steps"][:3] for t in step} == {"reduce"}
    assert {t["op"] for step in data["steps"][3:] for t in step} == {"copy"}
    assert data["bytes_sent_per_rank"] == 150_000_000
    assert data["time_s"] is None  # no link given
    assert data["verified"] is True


def test_time_needs_a_link(cli):
    data = cli.json("schedule", "allreduce", "ring", "-p", "4", "-n", "100MB",
                    "--alpha", "0s", "--bandwidth", "12.5GB/s")
    assert data["time_s"] == 0.012  # 150 MB at 12.5 GB/s


def test_non_power_of_two_uses_the_adaptation(cli):
    data = cli.json("schedule", "allreduce", "ring", "-p", "6")
    assert data["algorithm"] == "ring"
    assert data["rounds"] == 10


def test_human_render_shows_partial_sums(cli):
    out, _ = cli.text("schedule", "allreduce", "ring", "-p", "4", "-n", "100MB", "--verify")
    assert "step 1:" in out and "step 6:" in out
    assert "0+3" in out  # a partial sum of two ranks after the first step
    assert "Σ" in out
    assert "verified" in out and "NOT verified" not in out


def test_hierarchical_schedule_on_a_topology(cli):
    data = cli.json("schedule", "allreduce", "hierarchical", "--level", "2:1us:100GB/s",
                    "--level", "2:5us:10GB/s", "-n", "1MB", "--verify")
    # p = 2 x 2: ring reduce-scatter inside (1 step), ring all-reduce across on n/2 (2 steps), all-gather (1)
    assert data["p"] == 4
    assert data["rounds"] == 4
    assert data["verified"] is True
    names = [lv["name"] for lv in data["levels"]]
    assert names == ["intra", "inter"]
    # across nodes each rank sends its n/2 slice's ring all-reduce: 2 transfers of n/4 per rank pair,
    # 4 ranks x 2 x 250 kB = 2 MB cross the inter level in all
    assert data["levels"][1]["bytes_crossing"] == 2_000_000


@pytest.mark.parametrize(("argv", "needle"), [
    (["schedule", "allreduce", "hierarchical", "-p", "4"], "needs a topology"),
    (["schedule", "allreduce", "ring", "--level", "2:1us:1GB/s", "--level", "2:1us:1GB/s"], "--level"),
    (["schedule", "allreduce", "hierarchical", "--level", "2:1us:1GB/s", "--level", "2:1us:1GB/s",
      "--outer", "rab"], "no hierarchical schedule"),
    (["schedule", "allreduce", "hierarchical", "-p", "5", "--level", "2:1us:1GB/s", "--level", "2:1us:1GB/s"],
     "p=5"),
    (["schedule", "allgather", "hierarchical", "--level", "2:1us:1GB/s"], "all-reduce"),
])
def test_bad_topology_input(cli, argv, needle):
    out, err = cli(*argv, rc=2)
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert needle in err


def test_a_failed_verification_exits_1(cli, monkeypatch):
    """rc 1: the check ran and failed (rc 2 is kept for bad input)."""
    import dataclasses

    from costmodel import walkthrough

    real_cost = walkthrough.cost

    def off_by_one_round(*args, **kwargs):
        result = real_cost(*args, **kwargs)
        return dataclasses.replace(result, rounds=result.rounds + 1)

    monkeypatch.setattr(walkthrough, "cost", off_by_one_round)
    data = cli.json("schedule", "allreduce", "ring", "-p", "4", "--verify", rc=1)
    assert data["verified"] is False
    assert data["verification"]["matches_formula"] is False
    assert "NOT verified" in cli("schedule", "allreduce", "ring", "-p", "4", "--verify", rc=1)[0]
    cli("schedule", "allreduce", "ring", "-p", "4")  # nothing checked, nothing failed: exit 0


@pytest.mark.parametrize(("collective", "algorithm"), [
    ("allreduce", "recursive-doubling-folded"), ("allreduce", "rabenseifner-folded"),
    ("allgather", "recursive-doubling-folded"), ("broadcast", "scatter-recursive-doubling-folded"),
    ("reduce", "rabenseifner-folded"), ("reduce-scatter", "recursive-halving-folded"),
])
@pytest.mark.parametrize("p", [2, 7, 16])
def test_folded_records_verify_at_any_p(cli, collective, algorithm, p):
    data = cli.json("schedule", collective, algorithm, "-p", str(p), "-n", "1000", "--verify")
    assert data["verified"] is True


@pytest.mark.parametrize(("argv", "needle"), [
    (["schedule", "alltoall", "pairwise", "-p", "3000", "--verify"], "--verify at p=3000 would hold about"),
    (["schedule", "gather", "binomial", "-p", "100000", "--verify"], "above the limit of 1e+08"),
    (["schedule", "allreduce", "ring", "-p", "100000000"], "would move about 2e+16 chunks"),
    (["schedule", "broadcast", "chain", "-p", "8", "--segments", "100000000"], "use at most 1048576"),
    (["schedule", "broadcast", "chain", "-p", "8", "-n", "1GiB", "--segments", "100000000"],
     "would move about 8e+08 chunks"),
    (["schedule", "allreduce", "dbt", "-p", "8", "-n", "7", "--blocks", "4"], "use at most 3"),
    (["schedule", "allreduce", "ring", "-p", "4", "-n", "0"], "at least 1 B"),
    (["schedule", "allreduce", "ring", "-p", "4", "-n", "0.5B"], "at least 1 B"),
])
def test_too_large_schedules_are_refused_before_building(cli, monkeypatch, argv, needle):
    from costmodel import walkthrough

    def never(*args, **kwargs):
        raise AssertionError("a refused schedule must not be built")

    monkeypatch.setattr(walkthrough, "build", never)
    out, err = cli(*argv, rc=2)
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert needle in err


def test_the_work_estimate_matches_the_schedules():
    """p × the busiest rank's chunks bounds the chunk sends; exact for the symmetric ring."""
    from costmodel.collectives._registry import resolve
    from costmodel.schedules import build
    from costmodel.walkthrough import check_work

    ring = build("ring_allreduce", "allreduce", p=5)
    moved = sum(g.chunks.size for s in ring.steps() for g in s)
    assert check_work(resolve("allreduce", "ring"), 5, {}, verify=True) == (moved, 5 * 5 * 33)
    gather = build("binomial_gather", "gather", p=12)
    moved = sum(g.chunks.size for s in gather.steps() for g in s)
    assert check_work(resolve("gather", "binomial"), 12, {}, verify=False)[0] >= moved
