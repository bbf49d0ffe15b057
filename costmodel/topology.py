"""Topologies: levels of links, innermost first (8 GPUs on NVLink × 4 nodes on InfiniBand).

A :class:`Topology` is a tuple of :class:`Level` s, innermost first.  Level i
groups ``size`` units of level i − 1 (GPUs into a node, nodes into a rack, ...)
and has its own link: α, and β = 1/(the rate one rank gets across that level),
optionally γ.  There are p = s₀·s₁·…·s_{L−1} ranks, numbered so that the
innermost digit runs fastest: rank r has the digits

    d_i(r) = ⌊r / (s₀·…·s_{i−1})⌋ mod s_i,

so with 8 GPUs per node, ranks 0–7 are node 0 and ranks 8–15 node 1.  A message
between two ranks uses the link of the *outermost* level whose digit differs
(:meth:`Topology.level_of`).

Text form of a level (``--level``), fields separated by colons::

    SIZE:ALPHA:RATE[:NAME]        8:1us:150GB/s:nvlink     4:5us:0.04ns/B

RATE is the per-rank bandwidth across the level (``150GB/s``, ``200Gb/s``) or
its inverse β (``0.04ns/B``).  Unnamed levels are named by position: with two
levels ``intra`` and ``inter``, otherwise ``level0``, ``level1``, ...  γ is not
part of the text form: a reduction is local work, so ``--gamma`` (or the
``gamma`` key of a profile's ``[[level]]`` table) sets it.

Profiles describe topologies with ``[[level]]`` tables (see
:mod:`costmodel.profiles`).

References
----------
.. [1] A. Sergeev, M. Del Balso, "Horovod", arXiv:1802.05799, 2018
   (hierarchical all-reduce).
.. [2] NVIDIA H100 datasheet (NVLink inside a node); InfiniBand specification
   (across nodes).

Examples
--------
>>> topo = topology_of(["8:1us:150GB/s:nvlink", "4:5us:25GB/s:ib"])
>>> topo.p, topo.sizes, topo.names
(32, (8, 4), ('nvlink', 'ib'))
>>> topo.digits(13)
(5, 1)
>>> int(topo.level_of(3, 5)), int(topo.level_of(3, 13))
(0, 1)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from costmodel._json import to_json_dict
from costmodel._lazy import LazyPattern
from costmodel.errors import InputError, UnitError
from costmodel.params import LinkParams
from costmodel.units import parse_inverse_rate, parse_rate, parse_time
from costmodel.validate import positive, whole

__all__ = ["MAX_RANKS", "Level", "Topology", "parse_level", "parse_link", "topology_of"]

MAX_RANKS = 2**40
"""The most ranks a topology holds (as :func:`costmodel.collectives.evaluate.check_ranks`)."""
_FORMAT = "write SIZE:ALPHA:RATE[:NAME], e.g. 8:1us:150GB/s:nvlink"
_WHOLE = LazyPattern(r"[0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Level:
    """One level of a topology: how many units it groups, and the link between them.

    Parameters
    ----------
    size : int
        Units of the level below that this level groups (≥ 1): GPUs per node,
        nodes per rack, ...
    link : LinkParams
        α, β (= 1 / the rate one rank gets across this level) and γ.
    name : str
        A label (``"nvlink"``); empty means "name me by position", which
        :class:`Topology` does.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> Level(size=8, link=combine_link(alpha="1us", bandwidth="150GB/s")).size
    8
    """

    size: int
    link: LinkParams
    name: str = ""

    def __post_init__(self) -> None:
        positive(self.size, "size", expected="an integer", hint="a level groups a whole number of units",
                 small="a level groups at least 1 unit")
        if not isinstance(self.link, LinkParams):
            raise InputError(f"{self.link!r} is not a LinkParams; give the level's α and β as a LinkParams")
        if not isinstance(self.name, str):
            raise InputError(f"name={self.name!r} is not a string")

    def to_dict(self) -> dict[str, object]:
        """The level in SI units: name, size, α, β, γ, bandwidth and where they came from."""
        return {"name": self.name, "size": self.size, **self.link.to_dict()}


def _default_names(count: int) -> tuple[str, ...]:
    return ("intra", "inter") if count == 2 else tuple(f"level{i}" for i in range(count))


@dataclass(frozen=True, slots=True)
class Topology:
    """Levels of links, innermost first; p is the product of their sizes.

    Parameters
    ----------
    levels : sequence of Level
        Innermost first.  Unnamed levels get ``intra``/``inter`` (two levels)
        or ``level0``, ``level1``, ... (any other count).

    Raises
    ------
    InputError
        For no levels, duplicate names, fewer than 2 or more than 2^40 ranks.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="1us", bandwidth="100GB/s")
    >>> topo = Topology([Level(size=4, link=link), Level(size=2, link=link)])
    >>> topo.names, topo.p
    (('intra', 'inter'), 8)
    """

    levels: tuple[Level, ...]

    def __post_init__(self) -> None:
        levels = tuple(self.levels) if isinstance(self.levels, Iterable) else None
        if not levels:
            raise InputError("a topology needs at least one level; give one levels=SIZE:ALPHA:RATE per "
                             "level")
        for level in levels:
            if not isinstance(level, Level):
                raise InputError(f"{level!r} is not a Level; build one with parse_level('8:1us:150GB/s')")
        defaults = _default_names(len(levels))
        levels = tuple(lv if lv.name else replace(lv, name=defaults[i]) for i, lv in enumerate(levels))
        names = [lv.name for lv in levels]
        for name in names:
            if names.count(name) > 1:
                raise InputError(f"level name {name!r} is used twice; give each level its own name")
        p = math.prod(lv.size for lv in levels)
        if p < 2:
            raise InputError(f"the levels multiply to p={p} rank; a collective needs at least 2 ranks")
        if p > MAX_RANKS:
            raise InputError(f"the levels multiply to p={p} ranks; costmodel models at most 2^40 ranks")
        object.__setattr__(self, "levels", levels)

    @property
    def p(self) -> int:
        """Number of ranks: the product of the level sizes."""
        return math.prod(self.sizes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(lv.size for lv in self.levels)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(lv.name for lv in self.levels)

    @property
    def links(self) -> tuple[LinkParams, ...]:
        """The link of each level, as :func:`~costmodel.schedules.simulate` takes them (``levels=``)."""
        return tuple(lv.link for lv in self.levels)

    @property
    def strides(self) -> tuple[int, ...]:
        """Ranks per unit of each level: 1, s₀, s₀·s₁, ..."""
        out, stride = [], 1
        for size in self.sizes:
            out.append(stride)
            stride *= size
        return tuple(out)

    def index(self, name: str) -> int:
        """The position of the level called *name*.

        Raises
        ------
        UnknownNameError
            For a name that is not a level of this topology.
        """
        if name not in self.names:
            from costmodel.errors import UnknownNameError

            raise UnknownNameError("level", name, self.names)
        return self.names.index(name)

    def digits(self, rank: int) -> tuple[int, ...]:
        """Rank *rank*'s position inside each level, innermost first.

        >>> topology_of(["4:1us:1GB/s", "3:1us:1GB/s"]).digits(7)
        (3, 1)
        """
        whole(rank, "rank", low=0, high=self.p - 1, expected="a rank of this topology",
              hint=f"ranks are 0..{self.p - 1}")
        return tuple((rank // stride) % size for stride, size in zip(self.strides, self.sizes, strict=True))

    def level_of(self, src: Any, dst: Any) -> Any:
        """The level a message from *src* to *dst* crosses: the outermost whose digit differs.

        Vectorised: *src* and *dst* may be integers or integer numpy arrays of
        the same shape (the simulator's ``level_of``); the result has their
        shape.  Two equal ranks give level 0.

        >>> topo = topology_of(["2:1us:1GB/s", "2:1us:1GB/s", "2:1us:1GB/s"])
        >>> [int(topo.level_of(0, dst)) for dst in range(1, 8)]
        [0, 1, 1, 2, 2, 2, 2]
        """
        level = src * 0
        for i, (stride, size) in enumerate(zip(self.strides, self.sizes, strict=True)):
            differ = (src // stride) % size != (dst // stride) % size
            level = level + (i - level) * differ
        return level

    def ring_links(self) -> tuple[int, ...]:
        """How many links r → r+1 (mod p) of the rank-order ring cross each level.

        A link crosses level i when the digits below i are at their maximum
        and digit i is not: (s_i − 1)·s_{i+1}·…·s_{L−1} links, and the
        wrap-around p − 1 → 0 crosses the outermost level with more than one
        unit.  The counts add up to p.

        >>> topology_of(["4:1us:1GB/s", "2:1us:1GB/s"]).ring_links()
        (6, 2)
        """
        sizes = self.sizes
        counts = [(s - 1) * math.prod(sizes[i + 1:]) for i, s in enumerate(sizes)]
        top = max(i for i, s in enumerate(sizes) if s > 1)
        counts[top] += 1
        return tuple(counts)

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("p", "levels"))

    def __str__(self) -> str:
        return " × ".join(f"{lv.size} {lv.name}" for lv in self.levels)


def topology_of(levels: Sequence[str | Level], *, gamma: Any = None) -> Topology:
    """The topology of *levels*, innermost first: texts ``SIZE:ALPHA:RATE[:NAME]`` or :class:`Level` s.

    *gamma*, when given, is every level's local reduction time per byte.  Levels
    from a profile, and a check of p, are :func:`costmodel.links.topology_from_options`.

    >>> topology_of(["8:1us:150GB/s", "4:5us:25GB/s"]).names
    ('intra', 'inter')
    """
    parsed = [parse_level(text) for text in levels]
    if gamma is not None:
        rate = parse_inverse_rate(gamma)
        parsed = [replace(lv, link=replace(lv.link, gamma_s_per_byte=rate)) for lv in parsed]
    return Topology(tuple(parsed))


def parse_level(text: str | Level, *, require_unit: bool = False) -> Level:
    """Parse ``SIZE:ALPHA:RATE[:NAME]`` into a :class:`Level` (unnamed when NAME is left out).

    Parameters
    ----------
    text : str
        SIZE a whole number ≥ 1; ALPHA a time (``1us``); RATE the per-rank
        bandwidth across the level (``150GB/s``, ``200Gb/s``) or its inverse
        β (``0.04ns/B``); NAME any non-empty label.

    Returns
    -------
    Level

    Raises
    ------
    InputError
        With one line naming the text and the field that is wrong: too few or
        too many fields, a size that is not a whole number or is 0, a bad
        unit, an empty name.

    Examples
    --------
    >>> level = parse_level("8:1us:150GB/s:nvlink")
    >>> level.name, level.size, level.link.alpha_s, level.link.beta_s_per_byte
    ('nvlink', 8, Fraction(1, 1000000), Fraction(1, 150000000000))
    >>> parse_level("4:5us:0.04ns/B").link.beta_s_per_byte
    Fraction(1, 25000000000)
    """
    if isinstance(text, Level):
        return text
    if not isinstance(text, str):
        raise InputError(f"{text!r} is not a level; {_FORMAT}")
    fields = [field.strip() for field in text.split(":")]
    if len(fields) < 3:
        raise InputError(f"{text!r} has {len(fields)} field{'s' if len(fields) > 1 else ''}, "
                         f"a level needs 3 or 4; {_FORMAT}")
    if len(fields) > 4:
        raise InputError(f"{text!r} has {len(fields)} fields, a level needs 3 or 4; {_FORMAT}")
    size_text, alpha_text, rate_text = fields[:3]
    if not _WHOLE.fullmatch(size_text):
        raise InputError(f"{text!r} has size {size_text!r}, not a whole number; {_FORMAT}")
    size = int(size_text)
    if size < 1:
        raise InputError(f"{text!r} has size 0; a level groups at least 1 unit, {_FORMAT}")
    try:
        alpha = parse_time(alpha_text, require_unit=require_unit)
    except UnitError as exc:
        raise UnitError(f"{text!r} has a bad latency: {exc}") from None
    link = LinkParams(alpha_s=alpha, beta_s_per_byte=_beta(text, rate_text, require_unit),
                      source=f"--level {text}")
    name = fields[3] if len(fields) == 4 else ""
    if len(fields) == 4 and not name:
        raise InputError(f"{text!r} has an empty name; leave out the last colon or write a name, {_FORMAT}")
    return Level(size=size, link=link, name=name)


def parse_link(text: str, *, require_unit: bool = True) -> LinkParams:
    """Parse ``ALPHA:RATE``, one level's link without its size, into a :class:`LinkParams`.

    RATE is a bandwidth (``300GB/s``) or its inverse β (``0.04ns/B``), as in :func:`parse_level`.

    >>> link = parse_link("2us:300GB/s")
    >>> link.alpha_s, link.beta_s_per_byte
    (Fraction(1, 500000), Fraction(1, 300000000000))
    >>> parse_link("2us")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: '2us' is not a link; write ALPHA:RATE, e.g. 2us:300GB/s
    """
    fields = text.split(":") if isinstance(text, str) else []
    if len(fields) != 2:
        raise InputError(f"{text!r} is not a link; write ALPHA:RATE, e.g. 2us:300GB/s")
    alpha_text, rate_text = (f.strip() for f in fields)
    try:
        alpha = parse_time(alpha_text, require_unit=require_unit)
    except UnitError as exc:
        raise UnitError(f"{text!r} has a bad latency: {exc}") from None
    return LinkParams(alpha_s=alpha, beta_s_per_byte=_beta(text, rate_text, require_unit), source=text)


def _beta(text: str, field: str, require_unit: bool = False) -> Fraction:
    """β from a rate (``150GB/s``) or an inverse rate (``0.04ns/B``)."""
    try:
        return 1 / parse_rate(field, require_unit=require_unit)
    except UnitError as rate_error:
        try:
            return parse_inverse_rate(field, require_unit=require_unit)
        except UnitError:
            raise UnitError(f"{text!r} has a bad bandwidth: {rate_error}") from None
