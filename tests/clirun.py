"""Running the command line inside a test: the exit code checked, stdout and stderr returned."""

from __future__ import annotations

import json

import pytest

from costmodel.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str, rc: int = 0) -> tuple[str, str]:
    """``costmodel ARGS``: assert the exit code is *rc*, return (stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == rc, err
    return out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str, rc: int = 0) -> dict:
    """``costmodel ARGS --json``: exactly one JSON line on stdout, parsed."""
    out, _ = run(capsys, *args, "--json", rc=rc)
    assert out.count("\n") == 1, "exactly one JSON line"
    data = json.loads(out)
    assert json.dumps(data, allow_nan=False)
    return data


def run_text(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str,
             columns: int = 100, rc: int = 0) -> tuple[str, str]:
    """``costmodel ARGS`` as a user reads it: *columns* wide, no colour; (stdout, stderr)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    return run(capsys, *args, rc=rc)
