"""The command-line contract of ``costmodel bubble``: JSON keys and the human rendering.

The command lives in ``cli/pipeline.py``; its bad inputs are in ``test_bad_input.py``.
"""

from __future__ import annotations

import json

import pytest


def test_json_contract(cli):
    data = cli.json("bubble", "-P", "4", "-m", "8")
    assert {"schedule", "stages", "microbatches", "bubble_fraction", "bubble_over_ideal", "total_slots",
            "peak_inflight_microbatches", "max_inflight_microbatches", "timeline", "definitions",
            "per_stage", "forward_slots", "backward_slots", "weight_slots", "comm_slots", "notes",
            "sources"} <= set(data)
    assert (data["schedule"], data["stages"], data["microbatches"], data["chunks"]) == ("1f1b", 4, 8, 1)
    # (P−1)/(M+P−1) = 3/11 of the time idle; (P−1)/M = 3/8 of the ideal 8·3 = 24 slots
    assert data["bubble_fraction"] == pytest.approx(3 / 11, rel=1e-15)
    assert (data["bubble_fraction_exact"], data["bubble_over_ideal_exact"]) == ("3/11", "3/8")
    assert data["bubble_over_ideal"] == 0.375
    assert data["total_slots"] == 33  # (M + P − 1)(F + B)
    assert data["peak_inflight_microbatches"] == [4, 3, 2, 1]
    assert data["max_inflight_microbatches"] == 4
    assert set(data["definitions"]) == {"bubble_fraction", "bubble_over_ideal"}
    assert len(data["timeline"]) == 4
    assert all(set(op) == {"op", "microbatch", "chunk", "start", "end"} for ops in data["timeline"] for op in ops)
    assert [f"{op['op']}{op['microbatch']}" for op in data["timeline"][3][:4]] == ["F0", "B0", "F1", "B1"]
    assert json.dumps(data, allow_nan=False)


def test_gpipe_holds_every_microbatch(cli):
    data = cli.json("bubble", "-P", "4", "-m", "4", "--schedule", "gpipe")
    assert data["bubble_fraction_exact"] == "3/7"
    assert data["peak_inflight_microbatches"] == [4, 4, 4, 4]


@pytest.mark.parametrize(("name", "canonical"), [
    ("pipedream-flush", "1f1b"), ("zb", "zb-h1"), ("zero-bubble", "zb-h1"), ("GPipe", "gpipe"),
    ("interleaved", "interleaved"),
])
def test_schedule_aliases(cli, name, canonical):
    assert cli.json("bubble", "-P", "2", "-m", "4", "-s", name)["schedule"] == canonical


def test_interleaved_chunks(cli):
    data = cli.json("bubble", "-P", "4", "-m", "8", "--schedule", "interleaved", "-v", "4")
    # idle (P−1)(F+B)/v = 9/4 per stage over the ideal 24 slots: 3/32
    assert data["chunks"] == 4
    assert data["bubble_over_ideal_exact"] == "3/32"
    assert data["total_slots"] == 24 + 2.25


def test_zb_h1_against_1f1b_on_equal_work(cli):
    zb = cli.json("bubble", "-P", "4", "-m", "8", "--schedule", "zb-h1")
    flush = cli.json("bubble", "-P", "4", "-m", "8", "--backward", "1", "--weight", "1")
    # (P−1)(F+B−W) = 3 against (P−1)(F+B+W) = 9 idle slots per stage
    assert [s["idle_slots"] for s in zb["per_stage"]] == [3] * 4
    assert [s["idle_slots"] for s in flush["per_stage"]] == [9] * 4
    assert (zb["backward_slots"], zb["weight_slots"]) == (1, 1)


def test_times_take_fractions(cli):
    data = cli.json("bubble", "-P", "2", "-m", "2", "-F", "1/2", "-b", "1.5", "--comm", "0.25")
    assert (data["forward_slots"], data["backward_slots"], data["comm_slots"]) == (0.5, 1.5, 0.25)
    # GPipe-like chain: (M + P − 1)(F + B) + 2(P − 1)·comm = 3·2 + 0.5
    assert data["total_slots"] == 6.5
    assert data["notes"] == ["communication between stages is counted as idle time"]


def test_human_output(cli):
    out, err = cli.text("bubble", "-P", "4", "-m", "4", "--schedule", "gpipe", "--timeline")
    assert out.startswith("gpipe · P = 4 stages · M = 4 micro-batches\nF = 1, B = 2 slots")
    assert "Huang et al. (2019), GPipe" in out
    # to scale: each idle slot a ·, the backward twice as wide as the forward
    assert "GPU 0: F0 F1 F2 F3 ·  ·  ·  ·  ·  ·  ·  ·  ·  B0─── B1─── B2─── B3───\n" in out
    assert "GPU 3: ·  ·  ·  F0 F1 F2 F3 B0─── B1─── B2─── B3───" in out
    assert "3/7 ≈ 0.4286 idle / total (GPipe's definition)" in out
    assert "0.75 idle / ideal" in out
    assert "textbook: " in out
    assert err == ""


def test_human_output_falls_back_to_the_order_when_narrow(cli):
    out, _ = cli.text("bubble", "-P", "4", "-m", "8", "--timeline", columns=80)
    assert "not to scale" in out
    assert "GPU 3: · F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 ·" in out
    out, _ = cli.text("bubble", "-P", "4", "-m", "8", "--timeline", columns=200)
    assert "not to scale" not in out
    assert "GPU 3: ·  ·  ·  F0 B0─── F1 B1───" in out


def test_human_output_leaves_out_huge_timelines(cli):
    out, err = cli.text("bubble", "-P", "16", "-m", "128", "--timeline")
    assert "GPU 0:" not in out
    assert "bubble fraction" in out
    assert "note: timeline left out: 4096 operations; --json lists them" in out and err == ""


def test_the_timeline_is_drawn_only_when_asked(cli):
    out, err = cli.text("bubble", "-P", "8", "-m", "32", columns=80)
    assert "GPU" not in out and "timeline" not in out and err == ""
    assert out.count("\n") < 25
    assert "peak in flight" in out
    drawn, _ = cli.text("bubble", "-P", "8", "-m", "32", "--timeline", columns=80)
    assert "GPU 7: · F0 B0 F1 B1" in drawn
    assert cli.json("bubble", "-P", "8", "-m", "32")["timeline"] == cli.json("bubble", "-P", "8", "-m", "32", "--timeline")["timeline"]


def test_a_fractional_peak_in_flight_is_explained(cli):
    out, _ = cli.text("bubble", "-P", "4", "-m", "8", "-s", "interleaved")
    assert "peak in flight              5.5 micro-batches of activations a stage holds (one chunk's: 1/2)" in out
    assert "11 chunk activations are 5.5 micro-batches" in " ".join(out.split())
    out, _ = cli.text("bubble", "-P", "4", "-m", "8")
    assert "chunk activations" not in out


@pytest.mark.parametrize(("argv", "total"), [
    # (M + P − 1)(F + B) for 1F1B without communication, P = M = 4; exact in the JSON's *_exact keys
    (["-F", "1e-7"], 7 * (2 + 1e-7)),
    (["-F", "1e-31"], 14.0),
    (["-F", "1e99"], 7e99),
    (["-F", "1e-300", "-b", "1e300"], 7e300),
])
def test_extreme_times_are_simulated_and_drawn(cli, argv, total):
    data = cli.json("bubble", "-P", "4", "-m", "4", *argv)
    assert data["total_slots"] == pytest.approx(total, rel=1e-15)
    assert data["bubble_fraction_exact"] == "3/7"
    out, _ = cli.text("bubble", "-P", "4", "-m", "4", *argv, "--timeline", columns=80)
    assert "GPU 3:" in out and "3/7 ≈ 0.4286" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_tiny_communication_time_is_drawn_in_proportion(cli):
    data = cli.json("bubble", "-P", "4", "-m", "4", "--comm", "1e-9")
    assert data["comm_slots"] == 1e-9
    assert data["total_slots"] == pytest.approx(21, rel=1e-8) and data["total_slots"] > 21
    out, _ = cli.text("bubble", "-P", "4", "-m", "4", "--comm", "1e-9", "--timeline", columns=80)
    assert "to scale: one column is 0.2877 slots" in out
    assert "GPU 0: F0 F1 F2─ F3 ·····" in out
    # long exact fractions are shown rounded; the JSON keeps them
    assert "total             ≈ 21 slots" in out


def test_help(cli):
    out, _ = cli("bubble", "--help")
    assert "--stages" in out and "--microbatches" in out and "zb-h1" in out
