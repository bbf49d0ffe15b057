"""The command-line interface; :func:`main` is the console script and the only error boundary."""

from __future__ import annotations

import os
import sys
from typing import Any, cast

from costmodel._gc import YOUNG_COLLECTION, fewer_collections
from costmodel.errors import CostmodelError

__all__ = ["YOUNG_COLLECTION", "console", "main"]  # YOUNG_COLLECTION: costmodel._gc's


def _usage_error() -> type[Exception]:
    """Click's UsageError, as the Click that Typer runs on defines it (Typer may carry its own copy).

    Looked up when the command line runs, so that importing a module of this package (the renderers'
    registry, for a notebook) loads no typer."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def console() -> None:
    """The ``costmodel`` program (the console script and ``python -m costmodel``): :func:`main`, then the
    process ends with its exit status.

    Before it ends, every object left is moved out of the garbage collector's reach
    (:func:`gc.freeze`): Python's shutdown otherwise scans everything a command made (its modules,
    classes and results, tens of thousands of objects) for cycles, about 30 ms of a 140 ms step query
    (docs/performance.md), to free memory the exit frees anyway.  The shutdown still runs the
    ``atexit`` handlers, flushes stdout and stderr and frees each object its references hold; only
    garbage in cycles is left to the exit.  :func:`main` called from Python (a notebook, a test) does
    not freeze anything."""
    import gc

    status = main()
    gc.freeze()
    sys.exit(status)


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

    application = None
    try:
        application = build(args, listing=True)
        from costmodel.cli.output import worded

        def as_typed() -> Any:
            from typer._click.globals import get_current_context

            from costmodel.cli.flags import typed_options

            running = get_current_context(silent=True)  # the command running: its options, already built
            options = _option_names(application, args) if running is None else _options_of(running.command)
            return typed_options(args, options)

        with collecting(), worded(as_typed):  # an old name (--profile textbook) warns once on stderr
            rc = application(args=args, prog_name="costmodel", standalone_mode=False)
    except (CostmodelError, usage_error) as exc:
        if isinstance(exc, usage_error):
            message = cast(Any, exc).format_message()
        else:
            from costmodel.cli.flags import Worded, cli_message, typed_options
            from costmodel.cli.origins import origins

            typed = typed_options(args, _option_names(application, args))
            message = str(exc) if isinstance(exc, Worded) else \
                cli_message(str(exc), typed, error=True, origins=origins(typed))
        if message:  # empty for no arguments: the help is already printed
            print(f"error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0
    return rc if isinstance(rc, int) else 0


def _option_names(application: Any, args: list[str]) -> list[tuple[tuple[str, ...], bool]]:
    """The spellings of each option of the command *args* run (``("-P", "--stages")``), and whether it
    takes a value, for an error message to name each option as it was typed."""
    import typer.main

    if application is None:
        return []
    command = typer.main.get_command(application)  # Click's classes as Typer's Click defines them
    context = command.context_class(command)
    for word in (a for a in args if not a.startswith("-")):
        sub = command.get_command(context, word) if hasattr(command, "get_command") else None
        if sub is None:
            break
        command, context = sub, sub.context_class(sub, parent=context)
    return _options_of(command)


def _options_of(command: Any) -> list[tuple[tuple[str, ...], bool]]:
    """The spellings of each option of the Click *command*, and whether it takes a value."""
    return [(tuple(p.opts), not getattr(p, "is_flag", False)) for p in command.params
            if p.param_type_name == "option"]
