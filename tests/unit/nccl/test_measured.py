"""What nccl-tests measures, predicted from NCCL's choice: the overheads, their calibration, the CLI."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration.logs import Measurements, Row
from costmodel.errors import InputError, ParseError
from costmodel.nccl import System, predict
from costmodel.nccl.compare import read_manifest
from costmodel.nccl.measured import (
    Case,
    Overheads,
    as_measured,
    calibrate,
    load_overheads,
    shipped_overheads,
)
from costmodel.tomlfile import loads
from tests.clirun import run, run_json

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "logs" / "nccl-tests"
MANIFEST = LOGS / "manifest.toml"
H100 = System.explicit(arch=90, ranks=8, nodes=1, channels=16, bw_intra=40, bw_inter=40)
A100 = System.explicit(arch=80, ranks=16, nodes=2, channels=8, bw_intra=20, bw_inter=12)
US = Fraction(1, 10**6)


def _latency(p):
    return next(e.latency_s for e in p.entries if (e.algorithm, e.protocol) == (p.algorithm, p.protocol))


def test_as_measured_adds_the_overhead_and_divides_the_wire_time_by_the_share():
    o = Overheads(call_s=7 * US, ll=Fraction(1, 2), ll128=Fraction(3, 4), simple=Fraction(9, 10))
    for n in (8, 2**16, 2**20, 2**24, 2**30):
        p = predict("allreduce", n, H100)
        m = as_measured(p, o)
        share = {"LL": Fraction(1, 2), "LL128": Fraction(3, 4), "Simple": Fraction(9, 10)}[p.protocol]
        assert m.time_s == 7 * US + _latency(p) + (p.time_s - _latency(p)) / share
        assert (m.algorithm, m.protocol, m.channels, m.estimate_s) == (p.algorithm, p.protocol, p.channels, p.time_s)
        assert m.busbw_bytes_per_s == n / m.time_s * Fraction(14, 8)
        assert m.steps[-1].value == m.time_s / US


def _synthetic(system, collective, overheads, sizes):
    """A log whose every time is exactly what *overheads* predicts on *system*."""
    rows = []
    for n in sizes:
        rows.append(Row(n_bytes=n, time_s=as_measured(predict(collective, n, system), overheads).time_s))
    return Measurements(tool="nccl-tests", collective=collective, p=system.ranks, rows=tuple(rows))


def test_calibration_recovers_the_overheads_that_made_the_logs():
    truth = Overheads(call_s=Fraction(123, 10) * US, ll=Fraction(55, 100), ll128=Fraction(7, 10),
                      simple=Fraction(93, 100))
    sizes = [2**k for k in range(3, 34)]
    cases = [Case(name=f"{c}-{s.nodes}", measurements=_synthetic(s, c, truth, sizes), system=s, version="2.30")
             for s in (H100, A100) for c in ("allreduce", "allgather", "reduce-scatter")]
    result = calibrate(cases)
    o = result.overheads
    assert (o.call_s, o.ll, o.ll128, o.simple) == (truth.call_s, truth.ll, truth.ll128, truth.simple)
    for log in result.logs:
        assert log.in_sample_large == log.held_out_large == 0
        assert log.in_sample_small == log.held_out_small == 0
        assert log.model_small > 0


def test_the_shipped_overheads_are_the_calibration_on_the_test_logs():
    result = calibrate(read_manifest(MANIFEST))
    shipped = shipped_overheads()
    assert (shipped.call_s, shipped.ll, shipped.ll128, shipped.simple) == (
        result.overheads.call_s, result.overheads.ll, result.overheads.ll128, result.overheads.simple)
    assert {log.name for log in result.logs} == {p.name for p in LOGS.glob("*.txt")}


def test_the_manifest_describes_each_log_as_the_docs_table_does():
    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    shown = {m[1]: shlex.split(m[2]) for m in re.finditer(r"^\| (\w+\.txt) \| [^|]+ \| `([^`]+)`", text, re.M)}
    for entry in loads(MANIFEST.read_text(encoding="utf-8"), path="manifest")["log"]:
        options = []
        for key, value in entry.items():
            if key in ("path", "why", "held_out"):
                continue
            flag = "--" + key.replace("_", "-")
            options += [flag] if value is True else [flag, str(value)]
        assert sorted(options) == sorted(shown[entry["path"]]), entry["path"]


def test_a_held_out_log_never_moves_the_constants():
    cases = read_manifest(MANIFEST)
    held = [c for c in cases if c.held_out]
    assert [c.name for c in held] == ["allreduce_a100x16_2node_efa_p4d_awsofinccl65.txt",
                                      "allreduce_h100x8_1node_nvswitch_nccltests290.txt",
                                      "allreduce_h100x16_2node_nvlstree_nccltests294.txt",
                                      "allreduce_h100x1024_roce_nccltests322.txt",
                                      "allreduce_a100x8_1node_nvswitch_gcm.txt",
                                      "allreduce_a100x16_2node_gcm.txt"]
    with_it = calibrate(cases)
    without = calibrate([c for c in cases if not c.held_out])
    assert with_it.overheads == without.overheads
    # the others' held-out figures are those of a calibration without the held-out logs
    assert [a for a in with_it.logs if not a.held_out] == list(without.logs)
    logs = [a for a in with_it.logs if a.held_out]
    assert all((a.in_sample_large, a.in_sample_small) == (a.held_out_large, a.held_out_small) for a in logs)
    assert all(a.held_out_small is None for a in logs)  # none of them runs below 1 MiB
    assert [f"{float(a.held_out_large):.3f}" for a in logs] == ["0.436", "0.066", "0.077", "0.515", "0.066",
                                                                 "0.086"]
    assert all(d["held_out"] for d in with_it.to_dict()["logs"][-6:])


def test_the_held_out_logs_are_priced_as_compare_prices_them(capsys):
    held = {a.name: a for a in calibrate(read_manifest(MANIFEST)).logs if a.held_out}
    hardware = {"allreduce_a100x16_2node_efa_p4d_awsofinccl65.txt": ["--arch", "sm80", "--channels", "4",
                                                                     "--bw-intra", "12", "--bw-inter", "12",
                                                                     "--nodes", "2"],
                "allreduce_h100x8_1node_nvswitch_nccltests290.txt": ["--preset", "dgx-h100"],
                "allreduce_h100x16_2node_nvlstree_nccltests294.txt": ["--preset", "dgx-h100", "--nodes", "2",
                                                                      "--algo", "nvlstree"],
                "allreduce_h100x1024_roce_nccltests322.txt": ["--preset", "dgx-h100", "--nodes", "128"],
                "allreduce_a100x8_1node_nvswitch_gcm.txt": ["--preset", "dgx-a100"],
                "allreduce_a100x16_2node_gcm.txt": ["--preset", "dgx-a100"]}
    assert set(hardware) == set(held)
    for name, log in held.items():
        data = run_json(capsys, "nccl", "compare", str(LOGS / name), *hardware[name], "--as-measured")
        assert data["median_abs_busbw_error_from_1mib"] == pytest.approx(float(log.held_out_large), rel=1e-12)
        assert data["median_abs_busbw_error_below_1mib"] is None


def test_held_out_logs_alone_are_not_enough_to_calibrate():
    cases = read_manifest(MANIFEST)
    one = [next(c for c in cases if not c.held_out), *(c for c in cases if c.held_out)]
    with pytest.raises(InputError, match=r"^1 log given to calibrate on \(not held_out\); calibrating needs at least two"):
        calibrate(one)


def test_calibrating_one_log_is_refused():
    case = read_manifest(MANIFEST)[0]
    with pytest.raises(InputError, match="at least two"):
        calibrate([case])


@pytest.mark.parametrize(("text", "message"), [
    ('call_us = "1"\nshare_ll = "1"\nshare_ll128 = "1"\n', "missing share_simple"),
    ('call_us = "x"\nshare_ll = "1"\nshare_ll128 = "1"\nshare_simple = "1"\n', "is not a number"),
    ('call_us = "1"\nshare_ll = "3/2"\nshare_ll128 = "1"\nshare_simple = "1"\n', "at most 1"),
    ('call_us = "-1"\nshare_ll = "1"\nshare_ll128 = "1"\nshare_simple = "1"\n', "at least 0"),
    ('call_us = "1"\ngpu_us = "-2"\nshare_ll = "1"\nshare_ll128 = "1"\nshare_simple = "1"\n', "gpu_us"),
    ('call_us = "1"\nshare_ll = "0"\nshare_ll128 = "1"\nshare_simple = "1"\n', "above 0"),
    ('call_us = "1"\nshare_ll = "1"\nshare_ll128 = "1"\nshare_simple = "1"\nspeed = 2\n', "unknown key 'speed'"),
])
def test_bad_overheads_files_are_refused_with_the_key(tmp_path, text, message):
    path = tmp_path / "o.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ParseError, match=re.escape(message)):
        load_overheads(path)


def test_a_file_of_one_overhead_prices_every_launch_alike(tmp_path):
    path = tmp_path / "o.toml"
    path.write_text('call_us = "12"\nshare_ll = "1/2"\nshare_ll128 = "1"\nshare_simple = "1"\n', encoding="utf-8")
    o = load_overheads(path)
    assert o.gpu_s == 0
    assert o.launched(8).per_call_s == o.per_call_s == 12 * US


def test_each_further_gpu_a_thread_drives_adds_its_overhead():
    o = Overheads(call_s=7 * US, gpu_s=Fraction(5, 2) * US, ll=Fraction(1, 2), ll128=Fraction(3, 4),
                  simple=Fraction(9, 10))
    p = predict("allreduce", 1024, H100)
    one, eight = as_measured(p, o), as_measured(p, o.launched(8))
    assert eight.time_s - one.time_s == 7 * Fraction(5, 2) * US
    assert o.launched(None) == o.launched(1) == o
    assert "7 µs + 7 × 2.5 µs: one thread, 8 GPUs" in eight.notes[-1]


def test_calibration_separates_the_overhead_of_each_further_gpu():
    truth = Overheads(call_s=Fraction(61, 10) * US, gpu_s=Fraction(23, 10) * US, ll=Fraction(55, 100),
                      ll128=Fraction(7, 10), simple=Fraction(93, 100))
    sizes = [2**k for k in range(3, 34)]
    cases = [Case(name=f"{c}-{s.nodes}-{g}", measurements=_synthetic(s, c, truth.launched(g), sizes), system=s,
                  version="2.30", gpus_per_thread=g)
             for s in (H100, A100) for c in ("allreduce", "allgather") for g in (1, 4, 8)]
    result = calibrate(cases)
    assert result.overheads == truth
    assert all(log.in_sample_small == log.held_out_small == 0 for log in result.logs)
    assert [log.gpus_per_thread for log in result.logs] == [1, 4, 8] * 4
    # logs of one launch only: one overhead for every launch, said
    ones = calibrate([c for c in cases if c.gpus_per_thread == 1])
    assert ones.overheads.gpu_s == 0 and ones.overheads.call_s == truth.call_s
    assert "no log ran with several GPUs a thread" in ones.notes[0]


def test_the_launch_is_read_from_the_log(capsys):
    cases = {c.name: c for c in read_manifest(MANIFEST)}
    assert cases["allreduce_v100x8_nvlink_oldformat.txt"].gpus_per_thread == 8
    assert cases["allreduce_h100x8_1node_nvswitch_dgxc.txt"].gpus_per_thread == 1
    v100 = ["nccl", "compare", str(LOGS / "allreduce_v100x8_nvlink_oldformat.txt"), "--arch", "sm70",
            "--channels", "6", "--bw-intra", "25", "--as-measured"]
    data = run_json(capsys, *v100)
    notes = " ".join(data["notes"])
    assert "one thread drove 8 GPUs (nccl-tests -g 8)" in notes and "nccl-tests#333" in notes
    o = shipped_overheads()
    smallest = data["rows"][0]
    one = run_json(capsys, "nccl", "allreduce", "-n", "8", "--ranks", "8", "--arch", "sm70", "--channels", "6",
                   "--bw-intra", "25", "--as-measured")
    assert smallest["predicted_s"] == pytest.approx(one["time_s"] + 7 * float(o.gpu_s))
    eight = run_json(capsys, "nccl", "allreduce", "-n", "8", "--ranks", "8", "--arch", "sm70", "--channels", "6",
                     "--bw-intra", "25", "--as-measured", "--gpus-per-thread", "8")
    assert smallest["predicted_s"] == pytest.approx(eight["time_s"])
    _, err = run(capsys, "nccl", "allreduce", "-n", "8", "--ranks", "8", "--preset", "dgx-a100",
                 "--gpus-per-thread", "8", rc=2)
    assert err.strip() == "error: --gpus-per-thread sets the launch --as-measured prices; add --as-measured"
    _, err = run(capsys, "nccl", "allreduce", "-n", "8", "--ranks", "8", "--preset", "dgx-a100", "--as-measured",
                 "--gpus-per-thread", "3", rc=2)
    assert err.strip().startswith("error: --gpus-per-thread 3 does not divide the 8 ranks")


def test_an_overheads_file_round_trips(tmp_path):
    o = replace(shipped_overheads(), source="")
    path = tmp_path / "o.toml"
    path.write_text(o.toml(), encoding="utf-8")
    assert load_overheads(path) == o


@pytest.mark.parametrize(("text", "message"), [
    ("x = 1\n", "[[log]] tables and nothing else"),
    ('[[log]]\npreset = "dgx-a100"\n', "[[log]] 1: no path"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\ncolour = "red"\n', "unknown key 'colour'"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\narch = "sm80"\n', "the hardware is not complete: pass channels, bw_intra"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\npreset = "dgx-a100"\nchannels = 4\n',
     "preset describes the hardware; drop channels"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\narch = "sm80"\nchannels = "x"\nbw_intra = 20\n',
     "[[log]] 1: channels = 'x' is not an integer"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\npreset = "dgx-a100"\nnodes = "two"\n',
     "[[log]] 1: nodes = 'two' is not an integer"),
    ('[[log]]\npath = 5\npreset = "dgx-a100"\n', "[[log]] 1: path = 5 is not a string"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\npreset = "dgx-a100"\nheld_out = "yes"\n',
     "[[log]] 1: held_out = 'yes' is not true or false"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\npreset = "dgx-a100"\ncollnet = 1\n',
     "[[log]] 1: collnet = 1 is not true or false"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\npreset = "dgx-a100"\nnodes = true\n',
     "[[log]] 1: nodes = True is not an integer"),
    ('[[log]]\npath = "nope.txt"\npreset = "dgx-a100"\n', "[[log]] 1 (nope.txt): "),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\narch = "sm80"\nchannels = 8\nbw_intra = 20\n'
     'bw_inter = -3\n', "[[log]] 1 (allreduce_a100x16_2node_rdma_oci.txt): bw_inter"),
    ('[[log]]\npath = "allreduce_a100x16_2node_rdma_oci.txt"\narch = "sm80"\nchannels = 8\nbw_intra = 20\n',
     "[[log]] 1 (allreduce_a100x16_2node_rdma_oci.txt): 2 nodes need bw_inter (GB/s per channel across nodes)"),
])
def test_bad_manifests_are_refused_in_one_line(tmp_path, text, message):
    path = tmp_path / "m.toml"
    path.write_text(text, encoding="utf-8")
    for log in LOGS.glob("*.txt"):
        (tmp_path / log.name).symlink_to(log)
    with pytest.raises((InputError, ParseError), match=re.escape(message)):
        read_manifest(path)


# the command line

OCI = str(LOGS / "allreduce_a100x16_2node_rdma_oci.txt")


def test_compare_as_measured_prices_each_size_with_the_overheads(capsys):
    plain = run_json(capsys, "nccl", "compare", OCI, "--preset", "dgx-a100")
    measured = run_json(capsys, "nccl", "compare", OCI, "--preset", "dgx-a100", "--as-measured")
    o = shipped_overheads()
    assert measured["as_measured"] and not plain["as_measured"]
    for a, b in zip(plain["rows"], measured["rows"], strict=True):
        assert (a["algorithm"], a["protocol"]) == (b["algorithm"], b["protocol"])
        assert b["predicted_s"] > a["predicted_s"] + float(o.call_s) * 0.999
    assert measured["median_abs_busbw_error_below_1mib"] < plain["median_abs_busbw_error_below_1mib"]
    assert any("each size predicted as nccl-tests measures it" in n for n in measured["notes"])


def test_predict_as_measured_explains_the_terms(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out, _ = run(capsys, "nccl", "allreduce", "-n", "1MiB", "--ranks", "8", "--preset", "dgx-h100", "--as-measured",
                 "--explain")
    assert "per-call overhead (nccl-tests)" in out and "time as measured" in out
    assert "as nccl-tests measures it (estimate" in out


def test_overheads_without_as_measured_is_refused(capsys):
    _, err = run(capsys, "nccl", "compare", OCI, "--preset", "dgx-a100", "--overheads", "o.toml", rc=2)
    assert err.strip() == "error: --overheads sets the constants of --as-measured; add --as-measured"


def test_calibrate_writes_a_file_compare_reads(capsys, tmp_path):
    out = tmp_path / "o.toml"
    data = run_json(capsys, "nccl", "calibrate", str(MANIFEST), "--out", str(out))
    assert data["out"] == str(out) and len(data["logs"]) == len(list(LOGS.glob("*.txt")))
    assert load_overheads(out) == replace(shipped_overheads(), source=load_overheads(out).source)
    again = run_json(capsys, "nccl", "compare", OCI, "--preset", "dgx-a100", "--as-measured", "--overheads", str(out))
    assert any("the overheads given" not in n for n in again["notes"])
    _, err = run(capsys, "nccl", "calibrate", str(MANIFEST), "--out", str(out), rc=2)
    assert "exists" in err and err.count("\n") == 1
