"""The command-line interface; :func:`main` is the console script and the only error boundary."""

from __future__ import annotations

import os
import sys
from typing import Any, cast

import typer

from costmodel.errors import CostmodelError

__all__ = ["main"]

_USAGE_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
"""Click's UsageError, as the Click that Typer runs on defines it (Typer may carry its own copy)."""


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints one ``error:`` line on stderr and returns 2."""
    from costmodel.cli.app import build

    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["help"]:  # `costmodel help [COMMAND...]` is `costmodel [COMMAND...] --help`
        args = [*args[1:], "--help"]
    if os.environ.get("_COSTMODEL_COMPLETE"):  # the completion script asking (see cli/shell.py)
        from typer._completion_classes import completion_init

        completion_init()
        build(())(prog_name="costmodel")  # every group; Click answers and exits
    from costmodel.renames import collecting

    try:
        with collecting():  # an old name (--profile textbook) warns once on stderr
            rc = build(args, listing=True)(args=args, prog_name="costmodel", standalone_mode=False)
    except (CostmodelError, _USAGE_ERROR) as exc:
        if isinstance(exc, _USAGE_ERROR):
            message = cast(Any, exc).format_message()
        else:
            from costmodel.cli.flags import cli_message

            message = cli_message(str(exc))
        if message:  # empty for no arguments: the help is already printed
            print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return rc if isinstance(rc, int) else 0
