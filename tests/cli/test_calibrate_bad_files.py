"""calibrate fit and report on files that are not logs, or not enough of one: one `error:` line, exit 2,
never a traceback or a hang."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from costmodel import _files
from tests.clirun import run

LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
H200 = LOGS / "nccl-tests" / "allreduce_h200x2_2node_1nic_rdma_gke.txt"


def _one_error(capsys, *args: str) -> str:
    _, err = run(capsys, *args, rc=2)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("command", ["fit", "report"])
@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary"),
    (b"collective,backend,n_bytes\nallreduce,nccl,8\n", "lacks p, time_s"),
    (b"collective,backend,p,n_bytes,time_s\nallreduce,nccl,8,1024,0.00001\n", "at least 2 sizes"),
    (b"4 17.67\n8 15.49\n", "give --collective"),
])
def test_bad_files_are_one_error_line(capsys, tmp_path, command, content, message):
    log = tmp_path / "log.txt"
    log.write_bytes(content)
    err = _one_error(capsys, "calibrate", command, str(log))
    assert str(log) in err and message in err


@pytest.mark.parametrize("command", ["fit", "report"])
def test_a_fifo_is_refused_at_once(capsys, tmp_path, command):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def unblock() -> None:  # if the FIFO is ever opened for reading, end the wait: a failure, not a hang
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(10, unblock)
    timer.daemon = True
    timer.start()
    try:
        assert "FIFO" in _one_error(capsys, "calibrate", command, str(fifo))
    finally:
        timer.cancel()


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_dev_zero_is_refused_at_once(capsys):
    assert "character device" in _one_error(capsys, "calibrate", "fit", "/dev/zero")


def test_a_folder_is_refused(capsys, tmp_path):
    assert "a folder" in _one_error(capsys, "calibrate", "fit", str(tmp_path))


def test_a_huge_file_is_refused_with_the_cap(capsys, tmp_path):
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:
        f.truncate(_files.MAX_READ_BYTES + 1)
    assert "64 MiB" in _one_error(capsys, "calibrate", "fit", str(huge))


def test_one_rank_names_the_file_and_line(capsys, tmp_path):
    """A run on one GPU: busbw 0 (nothing crosses a link) and one '# Rank' line."""
    log = tmp_path / "p1.txt"
    lines = [s for s in H200.read_text(encoding="utf-8").splitlines() if "Rank  1" not in s]
    rows = [s.split() for s in lines]
    one = [" ".join([*t[:7], "0.00", *t[8:11], "0.00", *t[12:]]) if len(t) == 13 and t[0].isdigit() else s
           for s, t in zip(lines, rows, strict=True)]
    log.write_text("\n".join(one), encoding="utf-8")
    err = _one_error(capsys, "calibrate", "fit", str(log))
    assert err.startswith(f"error: {log}:5: ") and "p = 1" in err


def test_a_tagged_log_fits_like_the_plain_one(capsys, tmp_path):
    log = tmp_path / "tagged.txt"
    lines = H200.read_text(encoding="utf-8").splitlines()
    log.write_text("\n".join(f"[1,0]<stdout>:{s}" for s in lines), encoding="utf-8")
    tagged, _ = run(capsys, "calibrate", "fit", str(log), "--json")
    plain, _ = run(capsys, "calibrate", "fit", str(H200), "--json")
    assert tagged.replace(str(log), "LOG") == plain.replace(str(H200), "LOG")


DEBUG_LOG = Path(__file__).resolve().parent.parent / "data" / "nccl-debug" / "rtx4090-8gpu-pcie-interleaved.log"
WRITERS = {
    "calibrate fit": ("calibrate", "fit", str(H200)),
    "nccl preset": ("nccl", "preset", str(DEBUG_LOG)),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("force", [(), ("--force",)], ids=["", "--force"])
def test_out_a_folder_is_refused_whatever_force_says(capsys, tmp_path, writer, force):
    """--force cannot overwrite a folder, so the error never suggests it."""
    err = _one_error(capsys, *WRITERS[writer], "--out", str(tmp_path), *force)
    assert err == f"error: {tmp_path} is a folder; name a file in it to write\n"


@pytest.mark.parametrize("writer", WRITERS)
def test_a_file_the_system_refuses_to_write_is_one_line_with_its_reason(capsys, tmp_path, monkeypatch, writer):
    """Every file the command line writes goes through one helper: the path and the system's reason."""
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full)
    target = tmp_path / "out.toml"
    err = _one_error(capsys, *WRITERS[writer], "--out", str(target))
    assert err == f"error: cannot write {target}: No space left on device\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc here")
@pytest.mark.parametrize("writer", WRITERS)
def test_a_path_under_proc_is_one_line(capsys, writer):
    err = _one_error(capsys, *WRITERS[writer], "--out", "/proc/costmodel-nope.toml")
    assert err == "error: cannot write /proc/costmodel-nope.toml: No such file or directory\n"
