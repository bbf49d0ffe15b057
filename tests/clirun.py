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


class Cli:
    """The helpers above with capsys and monkeypatch bound: the ``cli`` fixture of tests/cli/conftest.py.

    ``cli(ARGS)`` is :func:`run`, ``cli.json(ARGS)`` is :func:`run_json` and ``cli.text(ARGS)`` is
    :func:`run_text`, with the same keyword arguments.
    """

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.capsys = capsys
        self.monkeypatch = monkeypatch

    def __call__(self, *args: str, rc: int = 0) -> tuple[str, str]:
        return run(self.capsys, *args, rc=rc)

    def json(self, *args: str, rc: int = 0) -> dict:
        return run_json(self.capsys, *args, rc=rc)

    def text(self, *args: str, columns: int = 100, rc: int = 0) -> tuple[str, str]:
        return run_text(self.capsys, self.monkeypatch, *args, columns=columns, rc=rc)
