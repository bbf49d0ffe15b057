"""``completion``: the shell completion script for bash, zsh, fish or PowerShell.

The script calls ``costmodel`` back with ``_COSTMODEL_COMPLETE`` set;
:func:`costmodel.cli.main` then builds every command group and lets Click
answer with the commands, options and choices that fit what was typed, and
with values from :mod:`costmodel.cli.complete` (collectives, algorithms,
profiles, examples, exercises, graphs, schedules).
"""

from __future__ import annotations

from typing import Annotated

import typer

from costmodel.cli import complete

__all__ = ["COMPLETE_VAR", "SHELLS", "app"]

app = typer.Typer()

COMPLETE_VAR = "_COSTMODEL_COMPLETE"
SHELLS = complete.SHELLS


@app.command("completion")
def completion_command(
    shell: Annotated[str, typer.Argument(help="bash, zsh, fish, powershell or pwsh.",
                                         autocompletion=complete.shells)],
) -> None:
    """Print the shell completion script; evaluate it in your shell's start-up file.

    bash: add eval "$(costmodel completion bash)" to ~/.bashrc; zsh: the same in ~/.zshrc;
    fish: costmodel completion fish > ~/.config/fish/completions/costmodel.fish.

    Example: eval "$(costmodel completion bash)"
    """
    from typer._completion_shared import get_completion_script

    from costmodel.errors import UnknownNameError

    if shell not in SHELLS:
        raise UnknownNameError("shell", shell, SHELLS)
    typer.echo(get_completion_script(prog_name="costmodel", complete_var=COMPLETE_VAR, shell=shell))
