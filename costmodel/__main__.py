"""``python -m costmodel``: the command-line interface."""

from __future__ import annotations

from costmodel.cli import console

if __name__ == "__main__":
    console()
