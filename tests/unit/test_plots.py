"""The plots' data, checked exactly against the library, and the images they draw (PNG and SVG).

The data tests need no matplotlib; the drawing tests skip without it.
"""

from __future__ import annotations

import math
import struct
import sys
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import pytest

import costmodel
from costmodel.errors import InputError, MissingDependency
from costmodel.links import link_from_options
from costmodel.plots import (
    calibration_plot,
    calibration_title,
    check_output,
    consensus_plot,
    draw_breakdown,
    draw_calibration_plot,
    draw_consensus_plot,
    draw_pipeline_plot,
    draw_region_map,
    draw_time_plot,
    pipeline_plot,
    region_map,
    time_breakdown,
    time_plot,
)
from costmodel.plots._figure import size_grid

SEED = link_from_options(alpha="5us", beta="0.08ns/B")
A100 = Path(__file__).resolve().parent.parent / "data" / "logs" / "nccl-tests" / "allreduce_a100x16_2node_rdma_oci.txt"


def png_info(path: Path) -> tuple[int, int, dict[str, str]]:
    """Width and height from IHDR, and the text chunks (tEXt, iTXt) as a dict."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, texts, size = 8, {}, None
    while at < len(data):
        (length,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"tEXt":
            key, _, value = body.partition(b"\0")
            texts[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            rest = rest[2:]  # compression flag and method
            _, _, rest = rest.partition(b"\0")  # language tag
            _, _, value = rest.partition(b"\0")  # translated keyword
            texts[key.decode("latin-1")] = value.decode("utf-8")
        at += 12 + length
    assert size is not None
    return size[0], size[1], texts


# -- time against size ---------------------------------------------------------------------------------


def test_time_plot_marks_exactly_the_crossovers_of_every_pair():
    plot = time_plot("allreduce", p=16, link=SEED, max_bytes="1GiB")
    names = [s.algorithm for s in plot.series]
    assert names == [a.name for a in costmodel.algorithms("allreduce")]
    expected = []
    for a, b in combinations(names, 2):
        for point in costmodel.crossover("allreduce", a, b, p=16, link=SEED, max_bytes=2**30).crossovers:
            if 1 <= point.n_bytes <= 2**30:
                expected.append((a, b, point.n_bytes, point.time_s))
    got = [(c.a, c.b, c.n_bytes, c.time_s) for c in plot.crossovers]
    assert sorted(got) == sorted(expected) and len(got) == 6
    first = plot.crossovers[0]
    assert (first.label, first.n_bytes, first.exact, first.best) == ("rd × rab: 117.6 kB", Fraction(2000000, 17),
                                                                     True, True)
    assert [c.best for c in plot.crossovers].count(True) == 1  # only rd × rab changes the cheapest


def test_time_plot_series_are_the_modelled_times():
    plot = time_plot("allreduce", ["ring", "rab"], p=12, link=SEED, min_bytes="1kB", max_bytes="1MB")
    ring = plot.series[0]
    assert ring.n_bytes[0] == 1000 and ring.n_bytes[-1] == 10**6 and 1024.0 in ring.n_bytes
    assert len(ring.n_bytes) == len(set(ring.n_bytes)) == len(ring.time_s)
    for n, t in zip(ring.n_bytes, ring.time_s, strict=True):
        assert t == pytest.approx(float(costmodel.cost("allreduce", "ring", p=12, n=Fraction(n), link=SEED).time_s),
                                  rel=1e-12)
    rab = plot.series[1]
    exact = costmodel.cost("allreduce", "rab", p=12, n=1024, link=SEED).time_s  # costed as rabenseifner-folded
    assert rab.time_s[ring.n_bytes.index(1024.0)] == pytest.approx(float(exact), rel=1e-12)
    assert any("folded" in note for note in plot.notes)
    data = plot.to_dict()
    assert data["series"][0]["time_s"] == list(ring.time_s) and data["alpha_s"] == 5e-6


def test_time_plot_leaves_out_what_cannot_run_and_checks_the_range():
    plot = time_plot("allreduce", p=2, link=SEED)
    assert "double-binary-tree" not in [s.algorithm for s in plot.series]
    assert any("double-binary-tree left out" in note for note in plot.notes)
    with pytest.raises(InputError, match="is not positive"):
        time_plot("allreduce", p=16, link=SEED, min_bytes=0)
    with pytest.raises(InputError, match="is not above min_bytes="):
        time_plot("allreduce", p=16, link=SEED, min_bytes="1MiB", max_bytes="1kB")


def test_size_grid_holds_every_power_of_two_and_both_ends():
    grid = size_grid(3, 2**20, per_octave=4)
    assert grid[0] == 3 and grid[-1] == 2**20 and grid == tuple(sorted(grid))
    assert {float(2**k) for k in range(2, 21)} <= set(grid)
    assert len(grid) == 1 + (80 - 7 + 1)  # 3, then 2^(k/4) for k = 7 … 80 (2^(6/4) ≈ 2.83 is below 3)


# -- best-algorithm regions ------------------------------------------------------------------------------


def test_region_map_best_algorithm_at_seed_points():
    regions = region_map("allreduce", link=SEED, p_min=2, p_max=64, max_bytes="1GiB")
    assert regions.best_at(16, "8KiB") == "recursive-doubling"
    assert regions.best_at(16, "64MiB") == "rabenseifner"
    assert regions.p == tuple(range(2, 65))
    assert regions.n_bytes[0] == 1 and regions.n_bytes[-1] == 2**30 and len(regions.n_bytes) == 121
    for p in (3, 16, 24, 64):  # the map agrees with the exact comparison, point by point
        for n in (1.0, 2.0**13, 2.0**17, 2.0**26):
            exact = costmodel.compare("allreduce", p=p, n=Fraction(n), link=SEED)
            assert regions.best_at(p, n) == exact.best.removesuffix("-folded"), (p, n)
    data = regions.to_dict()
    assert len(data["best"]) == 63 and len(data["best"][0]) == 121
    assert data["algorithms"][data["best"][14][52]] == "recursive-doubling"  # p = 16, n = 2^13
    with pytest.raises(InputError, match="not on the grid"):
        regions.best_at(16, 1000)


def test_region_map_samples_a_wide_range_of_p_keeping_powers_of_two():
    regions = region_map("allreduce", ["ring", "rab"], link=SEED, p_min=2, p_max=5000, max_bytes="1MiB")
    assert len(regions.p) <= 1024 + 14 and regions.p[0] == 2 and regions.p[-1] == 5000
    assert {2**k for k in range(1, 13)} <= set(regions.p)
    with pytest.raises(InputError, match="below p_min="):
        region_map("allreduce", link=SEED, p_min=64, p_max=8)


# -- α, β, γ breakdown -----------------------------------------------------------------------------------


def test_breakdown_bars_are_the_exact_terms():
    link = link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.02ns/B")
    breakdown = time_breakdown("allreduce", p=16, n="1MiB", link=link)
    table = costmodel.compare("allreduce", p=16, n="1MiB", link=link)
    assert [(b.algorithm, b.latency_s, b.bandwidth_s, b.compute_s) for b in breakdown.bars] == [
        (r.algorithm, r.latency_s, r.bandwidth_s, r.compute_s) for r in table.results]
    rab = breakdown.bars[0]
    assert rab.algorithm == "rabenseifner" and rab.latency_s == Fraction(1, 25000)  # 8α
    assert sum(rab.share(t) for t in ("latency_s", "bandwidth_s", "compute_s")) == 1
    bar = breakdown.to_dict()["bars"][0]
    assert math.isclose(bar["latency_share"] + bar["bandwidth_share"] + bar["compute_share"], 1)
    assert breakdown.title == "allreduce, p = 16, n = 1 MiB: where the time goes"


# -- consensus -------------------------------------------------------------------------------------------


def test_consensus_envelope_is_rho_to_the_r_times_d0():
    plot = consensus_plot("ring,torus,complete", 16, rounds=12)
    assert [c.graph for c in plot.curves] == ["ring", "torus", "complete"]
    for curve in plot.curves:
        run = costmodel.consensus.gossip.consensus(curve.graph, 16, rounds=12)
        assert curve.disagreement == tuple(r.disagreement for r in run.trajectory)
        d0 = curve.disagreement[0]
        assert d0 == pytest.approx(math.sqrt(sum((i - 7.5) ** 2 for i in range(16))))
        assert curve.envelope == tuple(curve.rho**r * d0 for r in range(13))
        assert all(d <= e * (1 + 1e-12) for d, e in zip(curve.disagreement, curve.envelope, strict=True))
    assert plot.curves[1].rho == pytest.approx(0.6)  # 4 × 4 torus, uniform weights 1/5
    assert plot.curves[2].rho == 0 and plot.curves[2].disagreement[1] == 0
    assert len(plot.to_dict()["curves"][0]["envelope"]) == 13


def test_consensus_plot_passes_degree_only_where_it_applies_and_checks_input():
    plot = consensus_plot(["ring", "k-ring"], 12, degree=4, rounds=3, weights="metropolis")
    assert plot.curves[1].label.startswith("2-neighbour ring") and plot.weights == "metropolis"
    with pytest.raises(InputError, match="names no graph"):
        consensus_plot(" , ", 8)
    with pytest.raises(InputError, match="positive integer"):
        consensus_plot("ring", 8, rounds=0)
    with pytest.raises(costmodel.UnknownNameError):
        consensus_plot("rign", 8)


# -- pipeline Gantt charts -------------------------------------------------------------------------------


def test_gantt_bars_are_the_simulated_timeline():
    plot = pipeline_plot("all", 4, microbatches=8)
    assert [p.bubble.schedule for p in plot.panels] == ["gpipe", "1f1b", "interleaved", "zb-h1"]
    for panel in plot.panels:
        sim = costmodel.bubble(panel.bubble.schedule, 4, microbatches=8)
        assert [(b.stage, b.op, b.microbatch, b.chunk, b.start_slots, b.end_slots) for b in panel.bars] == [
            (s.stage, o.op, o.microbatch, o.chunk, o.start, o.end) for s in sim.timeline for o in s.ops]
        for stage in sim.timeline:  # idle gaps and bars tile [0, makespan] on every stage
            idle = sum(g.end_slots - g.start_slots for g in panel.idle if g.stage == stage.stage)
            assert idle == stage.idle_slots
            assert idle + stage.busy_slots == sim.total_slots
    data = plot.to_dict()["panels"][0]
    assert data["total_slots"] == 33 and data["bubble_fraction"] == pytest.approx(3 / 11)
    assert {"stage", "op", "microbatch", "chunk", "start_slots", "end_slots"} == set(data["bars"][0])


def test_pipeline_all_leaves_out_what_cannot_run_but_one_schedule_says_why():
    plot = pipeline_plot("all", 4, microbatches=6)
    assert [p.bubble.schedule for p in plot.panels] == ["gpipe", "1f1b", "zb-h1"]
    assert any(note.startswith("interleaved left out") for note in plot.notes)
    with pytest.raises(InputError, match="multiple"):
        pipeline_plot("interleaved", 4, microbatches=6)


@pytest.mark.parametrize("forward", ["1e-7", "1e-31", "1e99"])
def test_pipeline_plot_of_extreme_times(tmp_path: Path, forward: str):
    pytest.importorskip("matplotlib")
    plot = pipeline_plot("1f1b", 4, microbatches=4, forward_slots=forward)
    panel = plot.panels[0]
    f = Fraction(forward)
    assert panel.bubble.total_slots == 7 * (f + 2)
    # the title rounds what has no short exact form, and keeps 3/7 exact
    assert panel.title == f"1f1b: makespan {float(7 * (f + 2)):g} slots, bubble 3/7 = 42.9% idle / total"
    assert draw_pipeline_plot(plot, tmp_path / "p.png").stat().st_size > 0


# -- the output file -------------------------------------------------------------------------------------


def test_check_output(tmp_path: Path):
    assert check_output(tmp_path / "a.PNG") == tmp_path / "a.PNG"
    with pytest.raises(InputError, match=r"neither \.png nor \.svg"):
        check_output(tmp_path / "a.pdf")
    (tmp_path / "b.svg").write_text("x")
    with pytest.raises(InputError, match="exists; pass force=True"):
        check_output(tmp_path / "b.svg")
    assert check_output(tmp_path / "b.svg", force=True)
    with pytest.raises(InputError, match="does not exist"):
        check_output(tmp_path / "nowhere" / "c.png")


def test_drawing_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependency, match=r"pip install 'costmodel-collectives\[plot\]'"):
        draw_pipeline_plot(pipeline_plot("gpipe", 2, microbatches=2), tmp_path / "p.png")
    assert not (tmp_path / "p.png").exists()


# -- images ----------------------------------------------------------------------------------------------

LINK_G = link_from_options(alpha="5us", beta="0.08ns/B", gamma="0.02ns/B")
DRAWINGS = {
    "time": (lambda: time_plot("allreduce", p=16, link=SEED), draw_time_plot, (1500, 825)),
    "regions": (lambda: region_map("allreduce", link=SEED, p_max=128), draw_region_map, (1350, 825)),
    "breakdown": (lambda: time_breakdown("allreduce", p=16, n="1MiB", link=LINK_G), draw_breakdown,
                  (1350, 735)),
    "consensus": (lambda: consensus_plot("ring,torus,hypercube,complete", 16), draw_consensus_plot, (1500, 825)),
    "pipeline": (lambda: pipeline_plot("all", 2, microbatches=4), draw_pipeline_plot,
                 (1650, round(150 * (1.3 + 0.36 * 4 * 3.2)))),  # 11 in wide; 0.36 in per stage + 1.2 per panel
    "calibration": (lambda: calibration_plot(A100), draw_calibration_plot, (1050, 1275)),
}


def _title(data: object) -> str:
    return calibration_title(data) if hasattr(data, "fit") else data.title


@pytest.mark.parametrize("kind", list(DRAWINGS))
def test_png_has_its_size_and_title(kind: str, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    build, draw, size = DRAWINGS[kind]
    data = build()
    png = draw(data, tmp_path / f"{kind}.png")
    width, height, texts = png_info(png)
    assert abs(width - size[0]) <= 1 and abs(height - size[1]) <= 1, (width, height)
    assert texts["Title"] == _title(data)
    assert png.stat().st_size > 20_000
    with pytest.raises(InputError, match="exists"):
        draw(data, png)


@pytest.mark.parametrize("kind", ["breakdown", "calibration"])
def test_svg_carries_its_title_as_text(kind: str, tmp_path: Path):
    pytest.importorskip("matplotlib", reason="plots need the plot extra: pip install 'costmodel-collectives[plot]'")
    build, draw, _ = DRAWINGS[kind]
    data = build()
    svg = draw(data, tmp_path / f"{kind}.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert _title(data).replace("&", "&amp;") in svg
