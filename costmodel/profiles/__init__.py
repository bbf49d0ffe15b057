"""Link profiles: embedded presets (each with its source) and user TOML files.

A profile file is data, read with :mod:`tomllib` and the units parser, never
evaluated::

    [profile]
    name = "seed"
    title = "5 µs start-up, 12.5 GB/s (100 Gb/s)"
    source = "seed-dsgd"            # a key of costmodel.references, or free text
    locator = "section 9"

    [link]
    alpha = "5 us"
    alpha_estimate = false          # true when α is an estimate, not a measurement
    bandwidth = "12.5 GB/s"         # or: beta = "0.08 ns/B"
    gamma = "0.1 ns/B"              # optional: local reduction cost
    notes = ["..."]

Calibration writes the same format.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.params import LinkParams
from costmodel.references import CITATIONS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["Profile", "ProfileList", "list_profiles", "load_profile", "parse_profile"]

_PROFILE_KEYS = {"name", "title", "source", "locator"}
_LINK_KEYS = {"alpha", "alpha_estimate", "beta", "bandwidth", "gamma", "notes"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A named set of link parameters with provenance."""

    name: str
    title: str
    source: str
    link: LinkParams
    alpha_estimate: bool
    notes: tuple[str, ...] = ()
    path: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            **self.link.to_dict(),
            "alpha_estimate": self.alpha_estimate,
            "notes": list(self.notes),
            "path": self.path,
        }


@dataclass(frozen=True, slots=True)
class ProfileList:
    """The embedded presets, as listed by ``costmodel profiles``."""

    profiles: tuple[Profile, ...]

    def to_dict(self) -> dict[str, object]:
        return {"profiles": [p.to_dict() for p in self.profiles]}


def _presets() -> dict[str, Any]:
    return {
        entry.name.removesuffix(".toml"): entry
        for entry in resources.files(__package__).iterdir()
        if entry.name.endswith(".toml")
    }


def list_profiles() -> ProfileList:
    """All embedded presets, sorted by name."""
    return ProfileList(tuple(load_profile(name) for name in sorted(_presets())))


def load_profile(name_or_path: str | Path) -> Profile:
    """A preset by name, or a profile TOML file by path.

    Anything containing a path separator or ending in ``.toml`` is a file.

    Raises
    ------
    UnknownNameError
        For an unknown preset name (with a did-you-mean hint).
    ParseError
        For an unreadable or malformed file, with its path and line.

    Examples
    --------
    >>> load_profile("seed").link.alpha_s
    Fraction(1, 200000)
    """
    text = str(name_or_path)
    if "/" in text or "\\" in text or text.endswith(".toml"):
        path = Path(text)
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ParseError(f"cannot read profile: {reason.lower()}", path=text) from None
        return parse_profile(content, path=text)
    presets = _presets()
    if text not in presets:
        raise UnknownNameError("profile", text, sorted(presets))
    return parse_profile(presets[text].read_text(encoding="utf-8"), path=f"<preset {text}>")


def _line_of(exc: tomllib.TOMLDecodeError) -> int | None:
    """The line of a TOML error: an attribute from Python 3.14, in the message before."""
    line = getattr(exc, "lineno", None)
    if line is None:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = int(found.group(1)) if found else None
    return line


def parse_profile(content: str, *, path: str) -> Profile:
    """Parse the text of a profile file (see the module docstring for the format)."""
    try:
        data = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc).split(" (at line")[0]
        raise ParseError(f"invalid TOML: {message[:1].lower()}{message[1:]}", path=path,
                         line=_line_of(exc)) from None
    unknown = set(data) - {"profile", "link"}
    if unknown:
        raise ParseError(f"unknown table {sorted(unknown)[0]!r}; expected [profile] and [link]", path=path)
    head, link = data.get("profile", {}), data.get("link")
    if not isinstance(head, dict) or not isinstance(link, dict):
        raise ParseError("a profile needs a [link] table (and optionally [profile])", path=path)
    for table, keys, known in (("profile", head, _PROFILE_KEYS), ("link", link, _LINK_KEYS)):
        extra = set(keys) - known
        if extra:
            raise ParseError(
                f"unknown key {sorted(extra)[0]!r} in [{table}]; expected {', '.join(sorted(known))}",
                path=path,
            )
    try:
        params = LinkParams.from_options(
            alpha=_quantity(link, "alpha"),
            beta=_quantity(link, "beta"),
            bandwidth=_quantity(link, "bandwidth"),
            gamma=_quantity(link, "gamma"),
        )
    except InputError as exc:
        raise ParseError(str(exc).replace("pass --", "set ").replace(" or --profile NAME", ""),
                         path=path) from None
    name = str(head.get("name", Path(path).stem))
    source_key = str(head.get("source", ""))
    citation = CITATIONS.get(source_key)
    source = str(citation) if citation else source_key
    if head.get("locator"):
        source = f"{source} {head['locator']}".strip()
    estimate = link.get("alpha_estimate", False)
    if not isinstance(estimate, bool):
        raise ParseError(f"alpha_estimate = {estimate!r} is not true or false", path=path)
    notes = link.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(s, str) for s in notes):
        raise ParseError("notes must be a list of strings", path=path)
    return Profile(
        name=name,
        title=str(head.get("title", name)),
        source=source,
        link=LinkParams(alpha_s=params.alpha_s, beta_s_per_byte=params.beta_s_per_byte,
                        gamma_s_per_byte=params.gamma_s_per_byte, source=f"profile {name}"),
        alpha_estimate=estimate,
        notes=tuple(notes),
        path="" if path.startswith("<preset") else path,
    )


def _quantity(table: dict[str, Any], key: str) -> Any:
    value = table.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{key} = {value!r} is not a quantity; write it as a string with a unit")
    # a bare number is read as written (5e-6 is 1/200000), not as its binary float
    return repr(value)
