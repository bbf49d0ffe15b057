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
levels.

Calibration (``costmodel calibrate``) writes the same format, and adds what
was fitted: ``[fit]`` names the collective and the algorithm model the
``[[segment]]`` tables were fitted under, one table per size segment; every
other collective measured has its own ``[collective.NAME]`` table with its
``[[collective.NAME.segment]]`` tables::

    [fit]
    collective = "allreduce"        # what [link] and [[segment]] were fitted on
    algorithm = "ring"              # the model: T(n) = a·α + b·n·β
    p = 8
    formula = "2(p − 1)·α + 2(p − 1)/p·n·β"
    latency_coefficient = "14"      # a(p), exact
    bandwidth_coefficient = "7/4"   # b(p), exact
    tool = "nccl-tests"
    rows = 25
    median_error = 0.012            # median |relative error| over all sizes
    median_error_ge_1mib = 0.004    # ... over sizes >= 1 MiB
    target_met = true               # whether the fit meets its accuracy target (costmodel.calibration.fit)
    worst_bytes = 2097152           # the size furthest off for its limit ...
    worst_error = -0.067            # ... and its signed relative error (model − measured)/measured
    warnings = ["..."]              # the fit's sanity warnings, the target missed first

    [[segment]]
    from_bytes = 8                  # smallest and largest size measured in the segment
    to_bytes = 65536
    alpha = "23.1 us"
    beta = "1.2 ns/B"               # or: bandwidth = "..."
    points = 14                     # rows fitted
    error = 0.011                   # their median |relative error|

    [collective.allgather]
    algorithm = "ring"              # and the other keys of [fit] but collective
    p = 8

    [[collective.allgather.segment]]
    from_bytes = 8
    ...

Segment k covers every size from its ``from_bytes`` up to the next segment's
(the first every smaller size too, the last every larger one).  The sizes are
the fitted algorithm's n; the pricing functions place them by the size of its
messages (b/a·n, a ring's n/p) and price every algorithm's messages by their
own sizes: see :class:`costmodel.params.PiecewiseLink` and
:mod:`costmodel.collectives.piecewise`.  ``[link]`` stays the one-line summary:
α of the small messages, β of the large.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields, to_json_dict
from costmodel.errors import InputError, ParseError, UnknownNameError
from costmodel.params import FittedOn, LinkParams, LinkSegment, PiecewiseLink, combine_link
from costmodel.references import CITATIONS
from costmodel.renames import resolve
from costmodel.tomlfile import loads
from costmodel.topology import Level, Topology
from costmodel.validate import is_whole

_HERE = Path(__file__).parent
"""This package's folder (its data files beside its modules)."""

__all__ = ["RENAMED", "Profile", "ProfileFit", "ProfileList", "list_profiles", "load_profile",
           "parse_profile"]

RENAMED = {"seed": "textbook"}
"""Old preset names → current ones: still accepted, with a deprecation warning (:mod:`costmodel.renames`)."""

_PROFILE_KEYS = {"name", "title", "source", "locator"}
_LINK_KEYS = {"alpha", "alpha_estimate", "beta", "bandwidth", "gamma", "notes"}
_LEVEL_KEYS = {"name", "size", "alpha", "beta", "bandwidth", "gamma"}
MAX_SEGMENTS = 64
"""Most [[segment]] tables of one collective (a fit writes at most 3; hand-edited ones may split finer)."""
_FIT_KEYS = {"collective", "algorithm", "p", "formula", "latency_coefficient", "bandwidth_coefficient",
             "tool", "rows", "median_error", "median_error_ge_1mib", "warnings", "in_place", "target_met",
             "worst_bytes", "worst_error"}
_SEGMENT_KEYS = {"from_bytes", "to_bytes", "alpha", "beta", "bandwidth", "gamma", "points", "error",
                 "alpha_ci", "beta_ci"}
_NO_LINK = dict.fromkeys(("alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "bandwidth_bytes_per_s"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileFit:
    """What a calibrated profile was fitted on, for one collective: the model and its segments.

    ``latency_coefficient`` and ``bandwidth_coefficient`` are a(p) and b(p) of
    T(n) = a·α + b·n·β (``None`` when the file does not say); ``warnings`` are
    the fit's sanity warnings; ``target_met`` whether it met its accuracy target,
    ``worst_n_bytes`` and ``worst_rel_error`` the size furthest off and its error
    (``None`` when the file does not say).
    """

    collective: str
    algorithm: str
    p: int | None
    segments: tuple[LinkSegment, ...]
    formula: str = ""
    latency_coefficient: Fraction | None = None
    bandwidth_coefficient: Fraction | None = None
    tool: str = ""
    rows: int | None = None
    median_rel_error: float | None = None
    median_rel_error_ge_1mib: float | None = None
    in_place: bool = False
    warnings: tuple[str, ...] = ()
    target_met: bool | None = None
    worst_n_bytes: int | None = None
    worst_rel_error: float | None = None

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("collective", "algorithm", "p", "formula", "latency_coefficient",
                                   "bandwidth_coefficient", "tool", "rows", "median_rel_error",
                                   "median_rel_error_ge_1mib", "target_met", "worst_n_bytes",
                                   "worst_rel_error", "in_place", "warnings", "segments"),
                            keep_floats=True)


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
    fits: tuple[ProfileFit, ...] = ()
    """Calibrated profiles: the collective ``[link]`` summarises first, then every other one measured."""

    def link_for(self, collective: str | None) -> PiecewiseLink | None:
        """The segments that price *collective*, or ``None`` for a profile without segments.

        The collective's own table when it was measured; else the first (the one
        ``[link]`` summarises), with a note that the other collectives are
        priced approximately.  The segments are the fit's collective sizes
        (``sizes="n"``) with what they were fitted on; the pricing functions
        place them by message size (:func:`costmodel.collectives.piecewise.placed`).
        """
        if not self.fits:
            return None
        name = _canonical(collective)
        own = next((f for f in self.fits if f.collective == name), None)
        chosen = own or self.fits[0]
        notes: list[str] = []
        if own is None and name is not None:
            notes.append(f"profile {self.name}: fitted on {chosen.collective}; other collectives are priced "
                         "approximately")
        if chosen.warnings and self.path:  # a shipped profile's are listed by costmodel profiles NAME
            count = len(chosen.warnings)
            where = self.path or self.name
            notes.append(f"profile {self.name}: its {chosen.collective} fit has {count} warning"
                         f"{'s' if count > 1 else ''} (load_profile('{where}') lists them)")
        summary = self.link if self.link is not None else replace(
            chosen.segments[0].link, beta_s_per_byte=chosen.segments[-1].link.beta_s_per_byte)
        fitted = FittedOn(collective=chosen.collective, algorithm=chosen.algorithm, p=chosen.p,
                          latency_coefficient=chosen.latency_coefficient,
                          bandwidth_coefficient=chosen.bandwidth_coefficient)
        return PiecewiseLink(segments=chosen.segments, summary=summary, sizes="n", fitted=fitted,
                             source=f"profile {self.name}, {chosen.collective} fit", notes=tuple(notes))

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("name", "title", "source")),
                **(self.link.to_dict() if self.link is not None else _NO_LINK),
                **to_json_dict(self, ("alpha_estimate", "notes", "path", "levels", "fits"))}


@dataclass(frozen=True, slots=True)
class ProfileList(JSONFields):
    """The embedded presets, as listed by ``costmodel profiles``."""

    profiles: tuple[Profile, ...]


@cache
def _presets() -> dict[str, Any]:
    """The embedded preset files by name, listed once a process (the package's own files)."""
    return {
        entry.name.removesuffix(".toml"): entry
        for entry in _HERE.iterdir()
        if entry.name.endswith(".toml")
    }


def preset_names() -> list[str]:
    """The names of the embedded presets, sorted (``load_profile`` takes each)."""
    return sorted(_presets())


def list_profiles() -> ProfileList:
    """All embedded presets, sorted by name."""
    return ProfileList(tuple(load_profile(name) for name in preset_names()))


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
        from costmodel._files import read_text
        from costmodel.tomlfile import MAX_BYTES

        return parse_profile(read_text(text, what="profile", limit=MAX_BYTES), path=text)
    text = resolve("profile", text, RENAMED)
    if text not in _presets():
        raise UnknownNameError("profile", text, sorted(_presets()))
    return _preset(text)


@cache
def _preset(name: str) -> Profile:
    """The shipped profile *name*, read once a process (a profile is immutable)."""
    return parse_profile(_presets()[name].read_text(encoding="utf-8"), path=f"<preset {name}>")


def parse_profile(content: str, *, path: str) -> Profile:
    """Parse the text of a profile file (see the module docstring for the format)."""
    data = loads(content, path=path, shipped=path.startswith("<preset "))
    unknown = set(data) - {"profile", "link", "level", "fit", "segment", "collective"}
    if unknown:
        raise ParseError(f"unknown table {sorted(unknown)[0]!r}; expected [profile], [link], [[level]], "
                         "[fit], [[segment]] and [collective.NAME]", path=path)
    head, link, levels = data.get("profile", {}), data.get("link"), data.get("level")
    if not isinstance(head, dict) or not (isinstance(link, dict) or levels is not None or "segment" in data
                                          or "fit" in data):
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
    fits = _fits(data, name=name, path=path)
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
        fits=fits,
    )


def _canonical(collective: str | None) -> str | None:
    """The registry's name of *collective* (aliases accepted), or *collective* itself if unknown."""
    if collective is None:
        return None
    from costmodel.collective_names import canonical_collective
    from costmodel.errors import CostmodelError

    try:
        return canonical_collective(collective)
    except CostmodelError:
        return collective


def _fits(data: dict[str, Any], *, name: str, path: str) -> tuple[ProfileFit, ...]:
    """[fit] with [[segment]], then every [collective.NAME] with its [[collective.NAME.segment]]."""
    head, segments, others = data.get("fit"), data.get("segment"), data.get("collective", {})
    if (head is None) != (segments is None):
        raise ParseError("[fit] and [[segment]] go together: a calibrated profile has both", path=path)
    if not isinstance(others, dict):
        raise ParseError("collective must be a table of tables: write [collective.NAME]", path=path)
    fits = []
    if head is not None:
        if not isinstance(head, dict) or "collective" not in head:
            raise ParseError("[fit] needs collective = \"NAME\" (the collective the segments were fitted on)",
                             path=path)
        fits.append(_fit(str(head["collective"]), head, segments, name=name, path=path, where="[fit]"))
    elif others:
        raise ParseError("[collective.NAME] tables need the [fit] table of the profile's own collective",
                         path=path)
    for collective, table in others.items():
        where = f"[collective.{collective}]"
        if not isinstance(table, dict):
            raise ParseError(f"{where} must be a table", path=path)
        body = {k: v for k, v in table.items() if k != "segment"}
        if "collective" in body:
            raise ParseError(f"{where}: the collective is the table's name; remove collective =", path=path)
        fits.append(_fit(collective, body, table.get("segment"), name=name, path=path, where=where))
    seen = [f.collective for f in fits]
    for c in seen:
        if seen.count(c) > 1:
            raise ParseError(f"{c} is fitted twice; keep one table per collective", path=path)
    return tuple(fits)


def _fit(collective: str, head: dict[str, Any], segments: Any, *, name: str, path: str,
         where: str) -> ProfileFit:
    from costmodel.collective_names import canonical_collective
    from costmodel.errors import CostmodelError

    extra = set(head) - _FIT_KEYS
    if extra:
        known = ", ".join(sorted(_FIT_KEYS))
        raise ParseError(f"{where}: unknown key {sorted(extra)[0]!r}; expected {known}", path=path)
    try:
        collective = canonical_collective(collective)
    except CostmodelError as exc:
        raise ParseError(f"{where}: {exc}", path=path) from None
    label = "segment" if where == "[fit]" else f"collective.{collective}.segment"
    if not isinstance(segments, list) or not segments or not all(isinstance(t, dict) for t in segments):
        raise ParseError(f"{where} needs its segments: write [[{label}]] once per size segment", path=path)
    if len(segments) > MAX_SEGMENTS:
        raise ParseError(f"{where} has {len(segments)} segments; a profile keeps at most {MAX_SEGMENTS} per "
                         "collective", path=path)
    built = tuple(_segment(t, name=name, collective=collective, path=path, where=f"[[{label}]] {i}: ")
                  for i, t in enumerate(segments, start=1))
    for i, (a, b) in enumerate(pairwise(built), start=2):
        if b.from_bytes <= a.to_bytes:
            raise ParseError(f"[[{label}]] {i}: from_bytes = {b.from_bytes} is not above the previous "
                             f"segment's to_bytes = {a.to_bytes}; list segments smallest first, without "
                             "overlap", path=path)
    return ProfileFit(
        collective=collective,
        algorithm=_text(head, "algorithm", where, path),
        p=_whole(head, "p", where, path, at_least=1),
        segments=built,
        formula=_text(head, "formula", where, path),
        latency_coefficient=_ratio(head, "latency_coefficient", where, path),
        bandwidth_coefficient=_ratio(head, "bandwidth_coefficient", where, path),
        tool=_text(head, "tool", where, path),
        rows=_whole(head, "rows", where, path, at_least=0),
        median_rel_error=_share(head, "median_error", where, path),
        median_rel_error_ge_1mib=_share(head, "median_error_ge_1mib", where, path),
        in_place=_flag(head, "in_place", where, path),
        warnings=_strings(head, "warnings", where, path),
        target_met=_flag(head, "target_met", where, path) if "target_met" in head else None,
        worst_n_bytes=_whole(head, "worst_bytes", where, path, at_least=1),
        worst_rel_error=_signed_share(head, "worst_error", where, path),
    )


def _segment(table: dict[str, Any], *, name: str, collective: str, path: str, where: str) -> LinkSegment:
    extra = set(table) - _SEGMENT_KEYS
    if extra:
        known = ", ".join(sorted(_SEGMENT_KEYS))
        raise ParseError(f"{where}unknown key {sorted(extra)[0]!r}; expected {known}", path=path)
    lo = _whole(table, "from_bytes", where, path, at_least=1, required=True)
    hi = _whole(table, "to_bytes", where, path, at_least=1, required=True)
    assert lo is not None and hi is not None
    if hi < lo:
        raise ParseError(f"{where}to_bytes = {hi} is below from_bytes = {lo}", path=path)
    link = replace(_link(table, path=path, where=where), source=f"profile {name}, {collective} fit")
    return LinkSegment(from_bytes=Fraction(lo), to_bytes=Fraction(hi), link=link,
                       points=_whole(table, "points", where, path, at_least=0) or 0,
                       median_rel_error=_share(table, "error", where, path))


def _text(table: dict[str, Any], key: str, where: str, path: str) -> str:
    value = table.get(key, "")
    if not isinstance(value, str):
        raise ParseError(f"{where}: {key} = {value!r} is not a string", path=path)
    return value


def _whole(table: dict[str, Any], key: str, where: str, path: str, *, at_least: int,
           required: bool = False) -> int | None:
    value = table.get(key)
    if value is None and not required:
        return None
    if value is None:
        raise ParseError(f"{where.rstrip(': ')}: {key} is missing; give it in bytes, e.g. {key} = 8",
                         path=path)
    if not is_whole(value) or value < at_least:
        raise ParseError(f"{where.rstrip(': ')}: {key} = {value!r} is not a whole number >= {at_least}",
                         path=path)
    return value


def _ratio(table: dict[str, Any], key: str, where: str, path: str) -> Fraction | None:
    from costmodel.exact import parse_number

    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ParseError(f"{where}: {key} = {value!r} is not an exact number; write it as \"7/4\"", path=path)
    try:
        number = parse_number(str(value), what=key)
    except InputError as exc:
        raise ParseError(f"{where}: {key}: {exc}", path=path) from None
    if number < 0:
        raise ParseError(f"{where}: {key} = {value!r} is negative", path=path)
    return number


def _share(table: dict[str, Any], key: str, where: str, path: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e6:
        raise ParseError(f"{where.rstrip(': ')}: {key} = {value!r} is not a relative error >= 0 "
                         "(0.05 is 5 %)", path=path)
    return float(value)


def _signed_share(table: dict[str, Any], key: str, where: str, path: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1e6 < value < 1e6:
        raise ParseError(f"{where.rstrip(': ')}: {key} = {value!r} is not a relative error (-0.05 is 5 % "
                         "below the measured)", path=path)
    return float(value)


def _flag(table: dict[str, Any], key: str, where: str, path: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ParseError(f"{where}: {key} = {value!r} is not true or false", path=path)
    return value


def _strings(table: dict[str, Any], key: str, where: str, path: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ParseError(f"{where}: {key} must be a list of strings", path=path)
    return tuple(value)


def _link(table: dict[str, Any], *, path: str, where: str) -> LinkParams:
    """The α, β (or bandwidth) and γ of a [link] or [[level]] table."""
    try:
        return combine_link(
            alpha=_quantity(table, "alpha"),
            beta=_quantity(table, "beta"),
            bandwidth=_quantity(table, "bandwidth"),
            gamma=_quantity(table, "gamma"),
        )
    except InputError as exc:
        # the parameters are the table's keys: "pass alpha=TIME ... or profile=NAME" -> "set alpha TIME ..."
        message = str(exc).replace(" or profile=NAME", "").replace("pass ", "set ")
        message = re.sub(r"\b(\w+)=(?= |$)", r"\1", re.sub(r"\b(\w+)=(?=[A-Z])", r"\1 ", message))
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
        if not is_whole(size) or size < 1:
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
        message = str(exc).replace("give one levels=SIZE:ALPHA:RATE per level", "add [[level]] tables")
        raise ParseError(message, path=path) from None


def _quantity(table: dict[str, Any], key: str) -> Any:
    value = table.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{key} = {value!r} is not a quantity; write it as a string with a unit")
    # a bare number is read as written (5e-6 is 1/200000), not as its binary float
    return repr(value)
