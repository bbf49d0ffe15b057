"""The Typer application: one module per command group, merged into one flat command set."""

from __future__ import annotations

from typing import Annotated

import typer

from costmodel.cli import cost, profiles, schedule, topology

app = typer.Typer(
    name="costmodel",
    help="Exact α–β–γ cost models for the collectives of distributed training.\n\n"
         "Sizes take units (8KiB, 64MiB, 1.5e6), times too (5us, 1µs), and rates (12.5GB/s, 100Gb/s).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

for group in (cost, schedule, topology, profiles):
    app.registered_commands.extend(group.app.registered_commands)


def _version(value: bool) -> None:
    if value:
        from costmodel import __version__

        typer.echo(f"costmodel {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Exact α–β–γ cost models for the collectives of distributed training."""
