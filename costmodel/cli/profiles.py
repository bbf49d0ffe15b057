"""The ``profiles`` command: embedded link presets and profile files."""

from __future__ import annotations

from typing import Annotated

import typer

from costmodel.cli.options import Json
from costmodel.cli.output import emit

app = typer.Typer()


@app.command("profiles")
def profiles(
    name: Annotated[str | None, typer.Argument(help="A preset name or a profile TOML file to show.",
                                                  show_default=False)] = None,
    as_json: Json = False,
) -> None:
    """List the link presets (α, bandwidth, source), or show one preset or profile file.

    Example: costmodel profiles ib-ndr
    """
    from costmodel.profiles import ProfileList, list_profiles, load_profile

    emit(ProfileList((load_profile(name),)) if name else list_profiles(), as_json=as_json)
