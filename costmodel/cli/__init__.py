"""The command-line interface; :func:`main` is the console script and the only error boundary."""

from __future__ import annotations

import os
import sys
from typing import Any, cast

from costmodel._gc import YOUNG_COLLECTION, fewer_collections
from costmodel.errors import CostmodelError

__all__ = ["YOUNG_COLLECTION", "main"]  # YOUNG_COLLECTION: costmodel._gc's


def _usage_error() -> type[Exception]:
    """Click's UsageError, as the Click that Typer runs on defines it (Typer may carry its own copy).

    Looked up when the command line runs, so that importing a module of this package (the renderers'
    registry, for a notebook) loads no typer."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints one ``error:`` line on stderr and returns 2.

    While it runs, the youngest garbage collection waits for :data:`YOUNG_COLLECTION` allocations
    (:func:`costmodel._gc.fewer_collections`: a command's start-up objects live to its end); the
    caller's thresholds are restored on return."""
    with fewer_collections():
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    from costmodel.cli.app import build

    usage_error = _usage_error()

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
    except (CostmodelError, usage_error) as exc:
        if isinstance(exc, usage_error):
            message = cast(Any, exc).format_message()
        else:
            from costmodel.cli.flags import cli_message

            message = cli_message(str(exc), error=True)
        if message:  # empty for no arguments: the help is already printed
            print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return rc if isinstance(rc, int) else 0
