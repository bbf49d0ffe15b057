"""Fixtures of the CLI tests: ``cli`` runs the command line with the output captured."""

from __future__ import annotations

import pytest

from tests.clirun import Cli


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``cli("cost", ...)`` → (stdout, stderr); ``cli.json(...)`` → the parsed JSON; ``cli.text(...)`` as read.

    The exit code is checked against ``rc=`` (0 unless given); see :mod:`tests.clirun`.
    """
    return Cli(capsys, monkeypatch)
