"""The command-line interface; :func:`main` is the console script and the only error boundary."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any, cast

from costmodel.errors import CostmodelError

__all__ = ["main"]

YOUNG_COLLECTION = 100_000
"""The command line's threshold of Python's youngest garbage collection (allocations less deallocations
between collections; Python's default is 700 or 2,000).  A command's start-up allocates tens of
thousands of objects that live to its end (modules, classes, functions, the option tables), and at the
default threshold the collector stops about 60 times to scan them for cycles they do not form, 5-10 ms
of a step query; at this one a short command collects never and a long one every 100,000 allocations,
the same work per object with at most that many objects of cyclic garbage waiting."""


def _usage_error() -> type[Exception]:
    """Click's UsageError, as the Click that Typer runs on defines it (Typer may carry its own copy).

    Looked up when the command line runs, so that importing a module of this package (the renderers'
    registry, for a notebook) loads no typer."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints one ``error:`` line on stderr and returns 2.

    While it runs, the youngest garbage collection waits for :data:`YOUNG_COLLECTION` allocations; the
    caller's thresholds are restored on return."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(YOUNG_COLLECTION, thresholds[0]), *thresholds[1:])
    try:
        return _run(argv)
    finally:
        gc.set_threshold(*thresholds)


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

            message = cli_message(str(exc))
        if message:  # empty for no arguments: the help is already printed
            print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return rc if isinstance(rc, int) else 0
