"""Link profiles: embedded presets (each with its source) and user TOML files.

A profile file is data, read with :mod:`tomllib` and the units parser, never
evaluated::

    [profile]
    name = "textbook"
    title = "5 µs start-up, 12.5 GB/s (100 Gb/s)"
    source = "ieee802.3"            # a key of costmodel.references, or free text
    locator = "100 Gb/s line rate"

    [link]
    alpha = "5 us"
    alpha_estimate = false          # true when α is an estimate, not a measurement
    bandwidth = "12.5 GB/s"         # or: beta = "0.08 ns/B"
    gamma = "0.1 ns/B"              # optional: local reduction cost
    notes = ["..."]

A profile may instead, or also, describe a topology with one ``[[level]]``
table per level, innermost first (see :mod:`costmodel.topology`)::

    [[level]]
    name = "nvlink"                 # optional: intra/inter for two levels, else level0, level1, ...
    size = 8                        # units of the level below: GPUs per node
    alpha = "2 us"
    bandwidth = "450 GB/s"          # per rank across this level; or: beta = "..."
    gamma = "0.01 ns/B"             # optional

    [[level]]
    name = "ib"
    size = 4                        # nodes
    alpha = "5 us"
    bandwidth = "50 GB/s"

A profile has a ``[link]`` table, ``[[level]]`` tables, or both: ``--profile``
feeds the flat models from ``[link]`` and the hierarchical ones from the
levels.  Calibration writes the same format.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.params import LinkParams
from costmodel.references import CITATIONS
from costmodel.renames import resolve
from costmodel.tomlfile import loads
from costmodel.topology import Level, Topology

__all__ = ["RENAMED", "Profile", "ProfileList", "list_profiles", "load_profile", "parse_profile"]

RENAMED = {"seed": "textbook"}
"""Old preset names → current ones: still accepted, with a deprecation warning (:mod:`costmodel.renames`)."""

_PROFILE_KEYS = {"name", "title", "source", "locator"}
_LINK_KEYS = {"alpha", "alpha_estimate", "beta", "bandwidth", "gamma", "notes"}
_LEVEL_KEYS = {"name", "size", "alpha", "beta", "bandwidth", "gamma"}
_NO_LINK = dict.fromkeys(("alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "bandwidth_bytes_per_s"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A named set of link parameters with provenance: a flat ``link``, topology ``levels``, or both."""

    name: str
    title: str
    source: str
    link: LinkParams | None
    alpha_estimate: bool
    notes: tuple[str, ...] = ()
    path: str = ""
    levels: tuple[Level, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            **(self.link.to_dict() if self.link is not None else _NO_LINK),
            "alpha_estimate": self.alpha_estimate,
            "notes": list(self.notes),
            "path": self.path,
            "levels": [level.to_dict() for level in self.levels],
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
    >>> load_profile("textbook").link.alpha_s
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
    text = resolve("profile", text, RENAMED)
    if text not in presets:
        raise UnknownNameError("profile", text, sorted(presets))
    return parse_profile(presets[text].read_text(encoding="utf-8"), path=f"<preset {text}>")


def parse_profile(content: str, *, path: str) -> Profile:
    """Parse the text of a profile file (see the module docstring for the format)."""
    data = loads(content, path=path)
    unknown = set(data) - {"profile", "link", "level"}
    if unknown:
        raise ParseError(f"unknown table {sorted(unknown)[0]!r}; expected [profile], [link] and [[level]]",
                         path=path)
    head, link, levels = data.get("profile", {}), data.get("link"), data.get("level")
    if not isinstance(head, dict) or not (isinstance(link, dict) or levels is not None):
        raise ParseError("a profile needs a [link] table or [[level]] tables (and optionally [profile])",
                         path=path)
    if link is not None and not isinstance(link, dict):
        raise ParseError("link must be a table: write [link] on a line of its own", path=path)
    for table, keys, known in (("profile", head, _PROFILE_KEYS), ("link", link or {}, _LINK_KEYS)):
        extra = set(keys) - known
        if extra:
            raise ParseError(
                f"unknown key {sorted(extra)[0]!r} in [{table}]; expected {', '.join(sorted(known))}",
                path=path,
            )
    name = str(head.get("name", Path(path).stem))
    params = None if link is None else _link(link, path=path, where="")
    source_key = str(head.get("source", ""))
    citation = CITATIONS.get(source_key)
    source = str(citation) if citation else source_key
    if head.get("locator"):
        source = f"{source} {head['locator']}".strip()
    link = link or {}
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
        link=None if params is None else replace(params, source=f"profile {name}"),
        alpha_estimate=estimate,
        notes=tuple(notes),
        path="" if path.startswith("<preset") else path,
        levels=_levels(levels, name=name, path=path),
    )


def _link(table: dict[str, Any], *, path: str, where: str) -> LinkParams:
    """The α, β (or bandwidth) and γ of a [link] or [[level]] table."""
    try:
        return LinkParams.from_options(
            alpha=_quantity(table, "alpha"),
            beta=_quantity(table, "beta"),
            bandwidth=_quantity(table, "bandwidth"),
            gamma=_quantity(table, "gamma"),
        )
    except InputError as exc:
        message = str(exc).replace("pass --", "set ").replace(" or --profile NAME", "")
        raise ParseError(f"{where}{message}", path=path) from None


def _levels(tables: Any, *, name: str, path: str) -> tuple[Level, ...]:
    """The [[level]] tables, innermost first, as topology levels (unnamed ones are named by position)."""
    if tables is None:
        return ()
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise ParseError("level must be an array of tables: write [[level]] once per level", path=path)
    levels = []
    for i, table in enumerate(tables, start=1):
        where = f"[[level]] {i}: "
        extra = set(table) - _LEVEL_KEYS
        if extra:
            known = ", ".join(sorted(_LEVEL_KEYS))
            raise ParseError(f"{where}unknown key {sorted(extra)[0]!r}; expected {known}", path=path)
        size = table.get("size")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ParseError(f"{where}size = {size!r} is not a whole number >= 1; set size = 8 (units of the "
                             "level below)", path=path)
        label = table.get("name", "")
        if not isinstance(label, str) or (label == "" and "name" in table):
            raise ParseError(f"{where}name = {label!r} is not a non-empty string", path=path)
        link = replace(_link(table, path=path, where=where),
                       source=f"profile {name} level {label or i - 1}")
        levels.append(Level(size=size, link=link, name=label))
    try:
        return Topology(tuple(levels)).levels
    except InputError as exc:
        message = str(exc).replace("give one --level SIZE:ALPHA:RATE per level", "add [[level]] tables")
        raise ParseError(message, path=path) from None


def _quantity(table: dict[str, Any], key: str) -> Any:
    value = table.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{key} = {value!r} is not a quantity; write it as a string with a unit")
    # a bare number is read as written (5e-6 is 1/200000), not as its binary float
    return repr(value)
