"""A profile calibrated from a CSV of two collectives, used by every command that prices a link.

The CSV holds exact times generated from known piecewise α and β (ring
all-reduce and ring all-gather at p = 4, two regimes each), so the fit must give
them back, and every command's answer can be checked against them.
"""

from __future__ import annotations

import contextlib
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration import write_csv
from costmodel.calibration.logs import Measurements, Row
from costmodel.cli import main
from tests.clirun import run, run_json

F = Fraction
US, NS = F(1, 10**6), F(1, 10**9)
P = 4
# (first size of the regime, α, β); ring all-reduce T = 6α + 3/2·nβ, ring all-gather T = 3α + 3/4·nβ at p = 4
ALLREDUCE = ((8, 10 * US, NS), (131072, 40 * US, NS / 10))
ALLGATHER = ((8, 5 * US, NS / 2), (32768, 20 * US, NS / 20))
SIZES = [2**k for k in range(3, 29)]  # 8 B .. 256 MiB: calibrate run's default sweep, 26 sizes


def _rows(a: int, b: Fraction, regimes: tuple[tuple[int, Fraction, Fraction], ...]) -> tuple[Row, ...]:
    out = []
    for n in SIZES:
        _, alpha, beta = next(r for r in reversed(regimes) if n >= r[0])
        out.append(Row(n_bytes=n, time_s=a * alpha + b * n * beta))
    return tuple(out)


def _csv(allreduce: tuple = ALLREDUCE, allgather: tuple = ALLGATHER) -> str:
    ar = Measurements(tool="costmodel-csv", collective="allreduce", p=P, backend="nccl",
                      rows=_rows(6, F(3, 2), allreduce))
    ag = Measurements(tool="costmodel-csv", collective="allgather", p=P, backend="nccl",
                      rows=_rows(3, F(3, 4), allgather))
    return write_csv(ar) + write_csv(ag).split("\n", 1)[1]  # one header


def _main_json(*args: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*args, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(the profile written by calibrate fit of the two-collective CSV, the command's JSON)."""
    folder = tmp_path_factory.mktemp("calibrated")
    log = folder / "cluster.csv"
    log.write_text(_csv(), encoding="utf-8")
    profile = folder / "cluster.toml"
    return profile, _main_json("calibrate", "fit", str(log), "--out", str(profile))


def test_calibrate_fit_writes_one_profile_with_both_collectives(calibrated: tuple[Path, dict]) -> None:
    profile, data = calibrated
    assert data["profile"] == str(profile) and data["profile_from"] == "allreduce"
    assert [f["collective"] for f in data["fits"]] == ["allreduce", "allgather"]
    text = profile.read_text(encoding="utf-8")
    assert text.count("[fit]") == 1 and 'collective = "allreduce"' in text
    assert text.count("[collective.allgather]") == 1 and "[collective.allreduce]" not in text
    assert text.count("\n[[segment]]\n") == 2 and text.count("\n[[collective.allgather.segment]]\n") == 2
    for f, regimes in zip(data["fits"], (ALLREDUCE, ALLGATHER), strict=True):
        assert f["p"] == P and f["algorithm"] == "ring"
        # the breakpoint, and α and β of each regime, given back
        assert [s["from_bytes"] for s in f["segments"]] == [r[0] for r in regimes]
        assert [s["to_bytes"] for s in f["segments"]] == [regimes[1][0] // 2, SIZES[-1]]
        for s, (_, alpha, beta) in zip(f["segments"], regimes, strict=True):
            assert s["alpha_s"] == pytest.approx(float(alpha), rel=1e-3)
            assert s["beta_s_per_byte"] == pytest.approx(float(beta), rel=1e-3)
        assert f["warnings"] == []
    # [link] is the all-reduce summary: α of its small messages, β of its large ones
    assert (data["alpha_s"], data["beta_s_per_byte"]) == pytest.approx((1e-5, 1e-10), rel=1e-6)


def _messages(data: dict) -> list[tuple[int, int, int]]:
    """(count, bytes, segment) of every message of the first result."""
    return [(m["count"], m["message_bytes"], m["segment"]) for m in data["results"][0]["messages"]]


def test_cost_prices_each_collective_with_its_own_segments(capsys: pytest.CaptureFixture[str],
                                                           calibrated: tuple[Path, dict]) -> None:
    profile = str(calibrated[0])
    # all-gather at 16 KiB: 3 messages of 4 KiB, on its segment 1 (n/4 from 8/4 B to 16 KiB/4); the
    # all-reduce's would give 30 µs + 12.3 µs
    data = run_json(capsys, "cost", "allgather", "ring", "-p", "4", "-n", "16KiB", "--profile", profile)
    assert data["link_source"] == "profile cluster, allgather fit"
    assert data["link_segments_by"] == "message"
    assert data["link_fitted_on"] == {"collective": "allgather", "algorithm": "ring", "p": 4, "message_share": 0.25}
    assert [(s["from_bytes"], s["to_bytes"]) for s in data["link_segments"]] == [(2, 4096), (8192, 2**26)]
    assert _messages(data) == [(3, 4096, 1)]
    assert data["results"][0]["time_s"] == pytest.approx(float(3 * 5 * US + F(3, 4) * 16384 * NS / 2), rel=1e-9)
    assert not any("fitted on" in n for n in data["notes"])
    data = run_json(capsys, "cost", "allgather", "ring", "-p", "4", "-n", "32KiB", "--profile", profile)
    assert _messages(data) == [(3, 8192, 2)]
    assert data["results"][0]["time_s"] == pytest.approx(float(3 * 20 * US + F(3, 4) * 32768 * NS / 20), rel=1e-9)
    # the all-reduce's own segments, where its fit put them: 6 messages of 32 KiB on segment 2
    data = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "128KiB", "--profile", profile)
    assert data["link_source"] == "profile cluster, allreduce fit"
    assert _messages(data) == [(3, 32768, 2), (3, 32768, 2)]
    assert data["results"][0]["time_s"] == pytest.approx(float(6 * 40 * US + F(3, 2) * 131072 * NS / 10), rel=1e-9)
    assert data["notes"] == []
    # broadcast borrows them, with the note: its 2 messages of 1 KiB are on segment 1
    data = run_json(capsys, "cost", "broadcast", "binomial", "-p", "4", "-n", "1KiB", "--profile", profile)
    assert data["link_source"] == "profile cluster, allreduce fit"
    assert _messages(data) == [(2, 1024, 1)]
    assert "profile cluster: fitted on allreduce; other collectives are priced approximately" in data["notes"]
    assert data["results"][0]["time_s"] == pytest.approx(float(2 * 10 * US + 2 * 1024 * NS), rel=1e-9)
    out, err = run(capsys, "cost", "broadcast", "binomial", "-p", "4", "-n", "1KiB", "--profile", profile)
    assert "fitted on allreduce" in out + err


def test_best_crossover_plot_carry_the_segments(capsys: pytest.CaptureFixture[str],
                                                calibrated: tuple[Path, dict]) -> None:
    profile = str(calibrated[0])
    # the fit's sizes n (8 B – 64 KiB, 128 KiB – 256 MiB) as the ring's messages at p = 4, n/4
    segments = [(2, 16384, 1e-5, 1e-9), (32768, 2**26, 4e-5, 1e-10)]

    def check(data: dict) -> None:
        got = [(s["from_bytes"], s["to_bytes"], s["alpha_s"], s["beta_s_per_byte"]) for s in data["link_segments"]]
        assert [x[:2] for x in got] == [x[:2] for x in segments]
        assert [x for g in got for x in g[2:]] == pytest.approx([x for e in segments for x in e[2:]], rel=1e-6)
        assert data["link_source"] == "profile cluster, allreduce fit"
        assert data["link_segments_by"] == "message"

    def message(m: Fraction) -> Fraction:  # one message: segment 2 from 32 KiB (its line never undercuts 1's)
        return 10 * US + m * NS if m < 32768 else 40 * US + m * NS / 10

    def rd(n: Fraction) -> Fraction:  # two messages of n
        return 2 * message(n)

    def rab(n: Fraction) -> Fraction:  # two of n/2 and two of n/4
        return 2 * message(n / 2) + 2 * message(n / 4)

    # rd's messages reach segment 2 at 32 KiB, rab's at 64 and 128 KiB; rd stays cheaper until both
    # are on segment 2: 80 µs + 2n·0.1 ns/B = 160 µs + 1.5n·0.1 ns/B at n = 1.6 MB
    x = run_json(capsys, "crossover", "allreduce", "rd", "rab", "-p", "4", "--profile", profile)
    check(x)
    assert [(c["n_bytes_exact"], c["segment_boundary"]) for c in x["crossovers"]] == [("1600000/1", False)]
    assert rd(F(1600000)) == rab(F(1600000))
    assert [r["cheaper"] for r in x["ranges"]] == ["recursive-doubling", "rabenseifner"]
    b = run_json(capsys, "best", "allreduce", "rd", "rab", "ring", "-p", "4", "--max", "1GiB", "--profile", profile)
    check(b)
    # the ring (six messages of n/4) never undercuts rab: 2α more below 64 KiB, and its messages reach
    # segment 2 last
    assert [(r["algorithm"], r["from_bytes"], r["to_bytes"], r["tied"]) for r in b["ranges"]] == [
        ("recursive-doubling", 1, 1600000, []), ("rabenseifner", 1600000, 2**30, [])]
    plot = run_json(capsys, "plot", "time", "allreduce", "rd", "rab", "-p", "4", "--profile", profile)
    check(plot)
    assert plot["out"] is None
    assert plot["segment_starts_bytes"] == [131072]  # where the ring the profile was fitted on reaches segment 2
    for series in plot["series"]:
        price = {"recursive-doubling": rd, "rabenseifner": rab}[series["algorithm"]]
        for n, t in zip(series["n_bytes"], series["time_s"], strict=True):
            assert t == pytest.approx(float(price(F(n))), rel=1e-9), (series["algorithm"], n)


def test_bound_and_schedule_use_the_segment(capsys: pytest.CaptureFixture[str],
                                            calibrated: tuple[Path, dict]) -> None:
    profile = str(calibrated[0])
    bound = run_json(capsys, "bound", "allreduce", "-p", "4", "-n", "1MiB", "--profile", profile)
    assert bound["link_source"] == "profile cluster, allreduce fit: the smallest α, β and γ of its segments"
    # ⌈log₂p⌉·α + 2(p − 1)/p·n·β with segment 1's α and segment 2's β: no message costs less
    assert bound["time_s"] == pytest.approx(float(2 * 10 * US + F(3, 2) * 2**20 * NS / 10), rel=1e-9)
    assert "link_segments" not in bound  # one link: the lowest
    schedule = run_json(capsys, "schedule", "allreduce", "ring", "-p", "4", "-n", "1MiB", "--profile", profile)
    assert schedule["link_source"] == "profile cluster, allreduce fit"
    assert schedule["link_segments_by"] == "message"
    # its six messages of 256 KiB on segment 2
    assert schedule["time_s"] == pytest.approx(float(6 * 40 * US + F(3, 2) * 2**20 * NS / 10), rel=1e-9)
    # without -n the schedule shows its default size, 1 MiB, priced by the segment that covers it
    default = run_json(capsys, "schedule", "allreduce", "ring", "-p", "4", "--profile", profile)
    assert default["link_source"] == schedule["link_source"] and default["time_s"] == schedule["time_s"]
    small = run_json(capsys, "schedule", "allreduce", "ring", "-p", "4", "-n", "1KiB", "--profile", profile)
    assert small["time_s"] == pytest.approx(float(6 * 10 * US + F(3, 2) * 1024 * NS), rel=1e-9)


def test_schedule_notes_a_borrowed_fit(capsys: pytest.CaptureFixture[str],
                                       calibrated: tuple[Path, dict]) -> None:
    data = run_json(capsys, "schedule", "broadcast", "binomial", "-p", "4", "-n", "1KiB",
                    "--profile", str(calibrated[0]))
    assert "profile cluster: fitted on allreduce; other collectives are priced approximately" in data["notes"]


def test_text_fits_80_columns(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                              calibrated: tuple[Path, dict]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    profile = str(calibrated[0])
    for args in (("cost", "allreduce", "-p", "4", "-n", "64KiB", "--profile", profile),
                 ("cost", "broadcast", "-p", "4", "-n", "1MiB", "--profile", profile),
                 ("best", "allreduce", "-p", "4", "--profile", profile),
                 ("crossover", "allreduce", "rd", "rab", "-p", "4", "--profile", profile),
                 ("crossover", "broadcast", "binomial", "chain", "-p", "4", "--profile", profile),
                 ("profiles", profile)):
        out, err = run(capsys, *args)
        assert out.strip()
        wide = [line for line in (out + err).splitlines() if len(line) > 80]
        assert wide == [], args
    out, _ = run(capsys, "profiles", profile)
    assert "segment 2" in out and "allgather" in out


def test_profiles_names_the_summarised_fit(capsys: pytest.CaptureFixture[str],
                                           calibrated: tuple[Path, dict]) -> None:
    out, _ = run(capsys, "profiles", str(calibrated[0]))
    assert "( summarises it)" not in out
    assert "([link] summarises it)" in out


def test_alpha_zero_sets_every_segment(capsys: pytest.CaptureFixture[str],
                                       calibrated: tuple[Path, dict]) -> None:
    profile = str(calibrated[0])
    data = run_json(capsys, "best", "allreduce", "ring", "rd", "rab", "-p", "4", "--profile", profile,
                    "--alpha", "0")
    assert [s["alpha_s"] for s in data["link_segments"]] == [0, 0]
    assert [s["beta_s_per_byte"] for s in data["link_segments"]] == pytest.approx([1e-9, 1e-10])
    assert data["alpha_s"] == 0 and data["link_source"] == "profile cluster, allreduce fit with options"
    # β only, messages of m bytes cost m·1 ns/B on segment 1 and m·0.1 ns/B from 32 KiB on; from
    # 3276.8 B segment 1's line costs more than a 32 KiB message does (3276.8 ns), so a message
    # there costs that.  ring (6 of n/4) and rab (2 of n/2, 2 of n/4) cost 1.5n ns, rd (2 of n)
    # 6553.6 ns from n = 3276.8 B: rd is cheaper from n = 65536/15 B.  At 64 KiB rab's n/2 messages
    # reach segment 2 and rab (0.1n + 6553.6 ns) meets rd (0.2n ns); at 128 KiB the ring's do and it
    # ties with rab again (ring listed first)
    assert [(r["algorithm"], r["tied"], r["from_bytes"]) for r in data["ranges"]] == [
        ("ring", ["rabenseifner"], 1), ("recursive-doubling", [], float(F(65536, 15))),
        ("rabenseifner", [], 65536), ("ring", ["rabenseifner"], 131072)]
    cost = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "1MiB", "--profile", profile,
                    "--alpha", "0")
    assert cost["results"][0]["latency_s"] == 0
    assert cost["results"][0]["time_s"] == pytest.approx(1.5 * 2**20 * 1e-10, rel=1e-12)


def test_calibrate_fit_refuses_ambiguous_csvs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = _csv()
    lines = text.splitlines()
    again = [line.replace("allgather,nccl,4,", "allgather,nccl,8,") for line in lines if line.startswith("allgather")]
    twice = tmp_path / "twice.csv"
    twice.write_text("\n".join(lines + again) + "\n", encoding="utf-8")
    out, err = run(capsys, "calibrate", "fit", str(twice), rc=2)
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ")
    assert "allgather was measured 2 times" in err and "p=4" in err and "p=8" in err
    multi = tmp_path / "multi.csv"
    multi.write_text(text, encoding="utf-8")
    out, err = run(capsys, "calibrate", "fit", str(multi), "--algorithm", "ring", rc=2)
    assert out == "" and err.count("\n") == 1 and err.startswith("error: ")
    assert "--algorithm ring" in err and "--collective" in err
    # with --collective it is one fit again
    data = run_json(capsys, "calibrate", "fit", str(multi), "--algorithm", "ring", "--collective", "allgather")
    assert data["collective"] == "allgather" and len(data["segments"]) == 2


def test_repeated_collective_error_cites_its_own_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = _csv().splitlines()
    again = [line.replace("allgather,nccl,4,", "allgather,nccl,8,") for line in lines if line.startswith("allgather")]
    twice = tmp_path / "twice.csv"
    twice.write_text("\n".join(lines + again) + "\n", encoding="utf-8")
    first = 1 + next(i for i, line in enumerate(lines) if line.startswith("allgather"))
    _, err = run(capsys, "calibrate", "fit", str(twice), rc=2)
    assert f"twice.csv:{first}:" in err


def test_breakpoint_at_any_size_is_found(tmp_path: Path) -> None:
    log = tmp_path / "odd.csv"
    log.write_text(_csv(allreduce=((8, 10 * US, NS), (65536, 40 * US, NS / 10))), encoding="utf-8")
    data = _main_json("calibrate", "fit", str(log), "--collective", "allreduce")
    assert [s["from_bytes"] for s in data["segments"]] == [8, 65536]


def test_pricing_at_another_p_than_the_fit_says_so(capsys: pytest.CaptureFixture[str],
                                                    calibrated: tuple[Path, dict]) -> None:
    profile = str(calibrated[0])  # fitted at p = 4
    note = ("profile cluster, allreduce fit: measured at p = 4, priced here at p = 64: α and β are taken as "
            "the link's own, unchanged with p (contention, topology and the library's choice of algorithm at "
            "p = 64 were not measured)")
    at_fit = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "1MiB", "--profile", profile)
    assert not any("measured at p" in n for n in at_fit["notes"])
    for command in (("cost", "allreduce", "ring", "-n", "1MiB"), ("bound", "allreduce", "-n", "1MiB"),
                    ("crossover", "allreduce", "rd", "rab"), ("best", "allreduce", "--max", "1GiB"),
                    ("schedule", "allreduce", "ring", "-n", "1MiB")):
        data = run_json(capsys, *command, "-p", "64", "--profile", profile)
        assert note in data["notes"], command
    # a borrowed fit says both: other collective, other p
    borrowed = run_json(capsys, "cost", "broadcast", "binomial", "-p", "8", "-n", "1KiB", "--profile", profile)
    assert any("fitted on allreduce" in n for n in borrowed["notes"])
    assert any("measured at p = 4, priced here at p = 8" in n for n in borrowed["notes"])
    # over a range of p: the range; and in the text, where a person reads it
    over = run_json(capsys, "crossover", "allreduce", "ring", "rab", "-n", "64MiB", "--p-max", "16", "--profile",
                    profile)
    assert any("priced here at p = 2 to 16" in n for n in over["notes"])
    out, _ = run(capsys, "cost", "allreduce", "ring", "-p", "64", "-n", "1MiB", "--profile", profile)
    assert "measured at p = 4, priced here at p = 64" in " ".join(out.split())


JUMP = """[profile]
name = "jump"

[fit]
collective = "allreduce"
algorithm = "ring"
p = 8
latency_coefficient = "14"
bandwidth_coefficient = "7/4"

[[segment]]
from_bytes = 8
to_bytes = 262144
alpha = "2 us"
beta = "0.08 ns/B"

[[segment]]
from_bytes = 524288
to_bytes = 1073741824
alpha = "50 us"
beta = "0.005 ns/B"
"""


def test_crossover_reports_a_switch_with_both_sides(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The ring's messages (n/8) reach the slower segment 2 at n = 512 KiB, rd's (n) at 64 KiB: there rd
    jumps from 3·2 µs + 3·64 KiB·0.08 ns/B = 21.73 µs to 3·50 µs + 3·64 KiB·0.005 ns/B = 151 µs, past
    the ring's 14·2 µs + 14·8 KiB·0.08 ns/B = 37.18 µs: a switch, never "both take"."""
    monkeypatch.setenv("COLUMNS", "80")
    profile = tmp_path / "jump.toml"
    profile.write_text(JUMP, encoding="utf-8")
    out, _ = run(capsys, "crossover", "allreduce", "ring", "rd", "-p", "8", "--profile", str(profile))
    assert "switch at n = 65.54 kB = 64 KiB: a cost jumps there" in out
    assert "  below 65.54 kB: ring 37.18 µs, recursive-doubling 21.73 µs\n" in out
    assert "  from 65.54 kB: ring 37.18 µs, recursive-doubling 151 µs\n" in out
    assert "both take 37.18 µs" not in out and "both take 151 µs" not in out
    assert "placed by allreduce ring's" in out and "messages of n/8 at p = 8" in out
    data = run_json(capsys, "crossover", "allreduce", "ring", "rd", "-p", "8", "--profile", str(profile))
    first = data["crossovers"][0]
    ring = 14 * 2 * US + 14 * 8192 * NS * F(8, 100)
    rd_below, rd_at = 3 * 2 * US + 3 * 65536 * NS * F(8, 100), 3 * 50 * US + 3 * 65536 * NS * F(5, 1000)
    assert (first["n_bytes"], first["segment_boundary"]) == (65536, True)
    assert (first["a_below_s"], first["b_below_s"]) == (float(ring), float(rd_below))
    assert (first["time_s"], first["b_time_s"]) == (float(ring), float(rd_at))
    # cost at that size says so
    out, _ = run(capsys, "cost", "allreduce", "rd", "-p", "8", "-n", "64KiB", "--profile", str(profile))
    assert "sits on a segment boundary" in out and "just below n it costs 21.73 µs, at n 151 µs" in out
    assert "recursive-doubling: 3 messages of 65.54 kB on segment 2" in out
    wide = [line for line in out.splitlines() if len(line) > 80]
    assert wide == []
