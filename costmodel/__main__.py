"""``python -m costmodel``: the command-line interface."""

from __future__ import annotations

import sys

from costmodel.cli import main

if __name__ == "__main__":
    sys.exit(main())
