"""The Typer application: one module per command group, merged into one flat command set.

Typer inspects every registered command each time it builds the app, which
costs milliseconds per command; so :func:`build` registers only the group of
the command being run (all of them for ``--help`` or an unknown command).
"""

from __future__ import annotations

import copy
import importlib
import inspect
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from costmodel.cli.helpformat import install as install_fitting_help

__all__ = ["GROUPS", "build"]  # and app, built on first use (module __getattr__)

GROUPS: dict[str, tuple[str, ...]] = {
    "cost": ("cost", "bound", "crossover", "best", "formula", "algorithms"),
    "schedule": ("schedule",),
    "topology": ("multilane", "flexreduce", "rat"),
    "consensus": ("consensus", "gossip-step", "gossip-vs-allreduce"),
    "pipeline": ("bubble",),
    "step": ("step",),
    "plan": ("plan",),
    "flops": ("flops",),
    "training": ("loss", "gradient", "fedavg", "memory", "compress", "error-feedback", "traffic"),
    "privacy": ("privacy",),
    "federated": ("federated",),
    "profiles": ("profiles",),
    "gpus": ("gpus",),
    "models": ("models",),
    "validate": ("validate",),
    "teaching": ("example", "exercise", "check"),
    "assignment": ("assignment",),
    "calibrate": ("calibrate",),
    "nccl": ("nccl",),
    "shell": ("completion",),
    "plot": ("plot",),
}
"""Command-group module (in costmodel.cli) -> the commands (and sub-command groups) it defines;
a test keeps this in sync."""


def _version(value: bool) -> None:
    if value:
        from costmodel import __version__

        typer.echo(f"costmodel {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Exact α–β–γ cost models for the collectives of distributed training."""


def build(argv: Sequence[str] = (), *, listing: bool = False) -> typer.Typer:
    """The app with the command named in *argv* registered (every command if none is named).

    Typer builds each registered command's parameters on every run, a few milliseconds a command,
    so a run registers only the command it runs.  With *listing*, a run that names no command
    (``costmodel``, ``--help``, ``--version``, a misspelt command) gets the commands as
    :data:`~costmodel.cli.summaries.SUMMARIES` lists them, names and help lines without their code:
    the same help screen and the same did-you-mean, with none of the command modules imported.
    """
    words = [a for a in argv if not a.startswith("-")]
    command = words[0] if words else None
    wanted = [m for m, names in GROUPS.items() if command in names] or list(GROUPS)
    application = _application()
    if listing and len(wanted) > 1:
        from costmodel.cli.summaries import SUMMARIES

        for name, summary in SUMMARIES:
            application.command(name, help=summary)(_listed)
        return application
    for module in wanted:
        group = importlib.import_module(f"costmodel.cli.{module}")
        _flow_help(group.app)
        application.registered_commands.extend(c for c in group.app.registered_commands
                                               if len(wanted) > 1 or _name(c) == command)
        sub = words[1] if len(wanted) == 1 and len(words) > 1 else None
        application.registered_groups.extend(_only(g, sub) for g in group.app.registered_groups
                                             if len(wanted) > 1 or g.name == command)
    return application


def _only(group: typer.models.TyperInfo, name: str | None) -> typer.models.TyperInfo:
    """*group* with only its sub-command (or sub-group) *name*, when it has one by that name; else whole.

    A group's sub-commands are built like commands, each run, so ``costmodel nccl allreduce`` builds one
    of ``nccl``'s commands.  A run that names none (``costmodel nccl --help``) or a misspelt one keeps
    them all, for the listing and the did-you-mean.  The group's own objects are copied, not changed.
    """
    inner = group.typer_instance
    if inner is None or name is None:
        return group
    commands = [c for c in inner.registered_commands if _name(c) == name]
    groups = [g for g in inner.registered_groups if g.name == name]
    if not commands and not groups:
        return group
    pruned = copy.copy(inner)
    pruned.registered_commands, pruned.registered_groups = commands, groups
    only = copy.copy(group)
    only.typer_instance = pruned
    return only


def _listed() -> None:
    """A command as the help screen lists it; never run (a run that names it builds the command)."""
    raise AssertionError("a listed command runs only when named")  # pragma: no cover


def summaries() -> tuple[tuple[str, str], ...]:
    """Every command and group in the order the help screen lists them, each with the first paragraph
    of its help: the table :mod:`costmodel.cli.summaries` holds, written by
    ``python -m costmodel.cli.app > costmodel/cli/summaries.py``."""
    group: Any = typer.main.get_command(build())  # a Click group, of the Click Typer runs on
    context = group.context_class(group)
    listed = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None
        listed.append((name, inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]))
    return tuple(listed)


def _application() -> typer.Typer:
    """The app with its options and no commands."""
    install_fitting_help()  # option panels too narrow for typer's table are stacked, no name cut
    application = typer.Typer(
        name="costmodel",
        help="Exact α–β–γ cost models for the collectives of distributed training.\n\n"
             "Sizes take units (8KiB, 64MiB; a bare number is bytes). Times and times per byte need one "
             "(5us, 0.08ns/B; only 0 goes bare), rates too (12.5GB/s, 100Gb/s).\n\n"
             "costmodel help COMMAND (or costmodel COMMAND --help) shows a command's options.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    application.callback()(_main)
    return application


def flowed(text: str) -> str:
    """*text* (a docstring) with each paragraph on one line, so the help wraps it to the terminal.

    Typer keeps a docstring's line breaks: a paragraph wrapped at 110 columns in the source would
    print as short and long lines at 80.  Paragraphs that start with Click's verbatim mark (a
    backspace character), or whose lines are list items or indented, keep their breaks.
    """
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        lines = paragraph.splitlines()
        listed = any(line.startswith(("- ", "* ", "|")) for line in lines)
        indented = any(line.startswith(" ") for line in lines[1:])
        verbatim = paragraph.startswith("\b") or listed or indented
        out.append(paragraph if verbatim else " ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def _flow_help(app: typer.Typer) -> None:
    """Flow the help of every command of *app* and of its sub-groups (once per callback)."""
    for c in app.registered_commands:
        if c.callback is not None and c.callback.__doc__:
            c.callback.__doc__ = flowed(c.callback.__doc__)
        if c.help:
            c.help = flowed(c.help)
    for g in app.registered_groups:
        if g.help and isinstance(g.help, str):
            g.help = flowed(g.help)
        if g.typer_instance is not None:
            _flow_help(g.typer_instance)


def _name(command: typer.models.CommandInfo) -> str:
    return command.name or str(getattr(command.callback, "__name__", ""))


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command registered, built on first use (for documentation and tests)."""
    if name == "app":
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover - exercised by the test that keeps the table current
    print("# ruff: noqa: E501 - one command a line, as generated\n")
    print('"""The commands as ``costmodel --help`` lists them: each name and its help\'s first paragraph.\n\n'
          "Generated by ``python -m costmodel.cli.app > costmodel/cli/summaries.py`` from the commands "
          "themselves;\na test keeps it current.\n\"\"\"\n\n"
          "SUMMARIES: tuple[tuple[str, str], ...] = (")
    for entry in summaries():
        print(f"    {entry!r},")
    print(")")
