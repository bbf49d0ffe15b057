"""Link parameters (α, β, γ): one link, or one per range of message sizes.

A link is one :class:`LinkParams`, or a :class:`PiecewiseLink` whose α, β and γ
depend on the message size: a calibrated profile's segments, one α–β line per
regime of the library measured (NCCL's protocols, MPI's eager and rendezvous).

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005: the α + nβ + nγ model.
.. [2] T. Kielmann, H. E. Bal, K. Verstoep, "Fast Measurement of LogP Parameters
   for Message Passing Platforms", IPDPS Workshops 2000: parameters that are
   functions of the message size (PLogP), measured piece by piece.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import pairwise
from typing import Any, TypeAlias

from costmodel.errors import InputError
from costmodel.units import parse_inverse_rate, parse_rate, parse_time

__all__ = ["Link", "LinkParams", "LinkSegment", "PiecewiseLink", "combine_link", "link_at"]

@dataclass(frozen=True, slots=True, kw_only=True)
class LinkParams:
    """The α–β–γ parameters of one link, in seconds and seconds per byte.

    Parameters
    ----------
    alpha_s : Fraction
        Start-up latency of one message, seconds.
    beta_s_per_byte : Fraction
        Transfer time per byte, the inverse of the usable bandwidth.
    gamma_s_per_byte : Fraction
        Local reduction time per byte (0 when not modelled).
    source : str
        Where the values came from (a profile name, a file, ``"options"``).

    Examples
    --------
    >>> link = combine_link(alpha="5us", bandwidth="12.5 GB/s")
    >>> link.beta_s_per_byte
    Fraction(1, 12500000000)
    """

    alpha_s: Fraction
    beta_s_per_byte: Fraction
    gamma_s_per_byte: Fraction = Fraction(0)
    source: str = "options"

    def __post_init__(self) -> None:
        for field_name in ("alpha_s", "beta_s_per_byte", "gamma_s_per_byte"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
                raise InputError(f"{value!r} is not an exact number; {field_name} takes a Fraction")
            if value < 0:
                raise InputError(f"{field_name}={value} is negative; it must be >= 0")
            object.__setattr__(self, field_name, Fraction(value))

    @property
    def bandwidth_bytes_per_s(self) -> Fraction | None:
        """1/β, or ``None`` when β is 0 (infinite bandwidth)."""
        return None if self.beta_s_per_byte == 0 else 1 / self.beta_s_per_byte

    def result_fields(self) -> dict[str, object]:
        """The link as every result's JSON carries it: α, β, γ in SI units and where they came from."""
        from costmodel._json import real

        return {
            "alpha_s": real(self.alpha_s),
            "beta_s_per_byte": real(self.beta_s_per_byte),
            "gamma_s_per_byte": real(self.gamma_s_per_byte),
            "link_source": self.source,
        }

    def to_dict(self) -> dict[str, object]:
        from costmodel._json import to_json_dict

        return to_json_dict(self, ("alpha_s", "beta_s_per_byte", "gamma_s_per_byte", "bandwidth_bytes_per_s",
                                   "source"))


def combine_link(*, alpha: Any = None, beta: Any = None, bandwidth: Any = None, gamma: Any = None,
                 base: LinkParams | None = None) -> LinkParams:
    """One link from option values; those given replace *base*'s (a profile's link).

    Strings are parsed with the units parser (``"5us"``, ``"0.08ns/B"``,
    ``"100 Gb/s"``); numbers are in SI base units.  Exactly one of *beta* and
    *bandwidth* may be given.  This is the one rule for a link every command
    prices time with: α and β (or the bandwidth) are both needed, from the
    values or *base*; α = 0 must be said, never assumed.  Messages name the
    parameters (``alpha=TIME``); the command line names its options instead.
    Loading a profile by name is :func:`costmodel.links.link_from_options`.

    Raises
    ------
    InputError
        When both *beta* and *bandwidth* are given, or α or β is missing.
    """
    if beta is not None and bandwidth is not None:
        raise InputError(BOTH_BETA_AND_BANDWIDTH)
    if bandwidth is not None:
        beta = 1 / parse_rate(bandwidth)
    alpha_s = _given_or_base(alpha, parse_time, base.alpha_s if base else None,
                             missing="no latency given; pass alpha=TIME (e.g. 5us, or 0 to leave "
                                     "start-ups out) or profile=NAME")
    beta_s = _given_or_base(beta, parse_inverse_rate, base.beta_s_per_byte if base else None, missing=(
        "no bandwidth given; pass beta=TIME/B (e.g. 0.08ns/B), bandwidth=RATE (e.g. 12.5GB/s) "
        "or profile=NAME"))
    gamma_s = _given_or_base(gamma, parse_inverse_rate, base.gamma_s_per_byte if base else Fraction(0))
    explicit = any(v is not None for v in (alpha, beta, gamma))
    source = "options" if base is None else base.source + (" with options" if explicit else "")
    return LinkParams(alpha_s=alpha_s, beta_s_per_byte=beta_s, gamma_s_per_byte=gamma_s, source=source)


BOTH_BETA_AND_BANDWIDTH = "both a beta and a bandwidth were given; pass only one of beta= or bandwidth="


def _given_or_base(value: Any, parse: Any, base: Fraction | None, *, missing: str = "") -> Fraction:
    """*value* parsed if given, else the profile's *base* value, else an error saying what is missing."""
    if value is not None:
        return parse(value)
    if base is not None:
        return base
    raise InputError(missing)


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkSegment:
    """One size range of a :class:`PiecewiseLink`: the link there and the sizes it was fitted on.

    ``from_bytes`` and ``to_bytes`` are the smallest and largest measured size of
    the range; ``points`` the rows fitted and ``median_rel_error`` their median
    |relative error| (``None`` when unknown).
    """

    from_bytes: Fraction
    to_bytes: Fraction
    link: LinkParams
    points: int = 0
    median_rel_error: float | None = None

    def to_dict(self) -> dict[str, object]:
        from costmodel._json import real

        return {"from_bytes": real(self.from_bytes), "to_bytes": real(self.to_bytes),
                **{k: v for k, v in self.link.to_dict().items() if k != "source"},
                "points": self.points, "median_rel_error": self.median_rel_error}


@dataclass(frozen=True, slots=True, kw_only=True)
class PiecewiseLink:
    """α, β and γ by message size: one :class:`LinkParams` per segment of sizes [2]_.

    Segment k prices every size n from its first measured size up to the next
    segment's first measured size; the first segment also prices every size
    below its range and the last every size above.  ``summary`` is the
    one-line link of the profile (``[link]``: α of the small messages, β of the
    large), for tools that want one; ``notes`` travel with every result priced
    on this link (e.g. that the profile was fitted on another collective).
    ``fitted_p`` is the number of ranks the segments were measured at, when
    known: a result priced at another p says so (:meth:`notes_at`).

    Examples
    --------
    >>> small = combine_link(alpha="10us", beta="1ns/B")
    >>> large = combine_link(alpha="40us", beta="0.1ns/B")
    >>> segments = (LinkSegment(from_bytes=Fraction(8), to_bytes=Fraction(4096), link=small),
    ...             LinkSegment(from_bytes=Fraction(8192), to_bytes=Fraction(2**26), link=large))
    >>> link = PiecewiseLink(segments=segments, summary=small, source="example")
    >>> link.at(4096).alpha_s, link.at(8192).alpha_s
    (Fraction(1, 100000), Fraction(1, 25000))
    >>> [(lo, hi) for lo, hi, _ in link.pieces(Fraction(0), None)]
    [(Fraction(0, 1), Fraction(8192, 1)), (Fraction(8192, 1), None)]
    """

    segments: tuple[LinkSegment, ...]
    summary: LinkParams
    source: str
    notes: tuple[str, ...] = ()
    fitted_p: int | None = None

    def __post_init__(self) -> None:
        if not self.segments:
            raise InputError("a piecewise link needs at least one segment")
        starts = [s.from_bytes for s in self.segments]
        if any(b <= a for a, b in pairwise(starts)):
            raise InputError("the segments of a piecewise link must start at increasing sizes")

    def index(self, n: Any) -> int:
        """The number (from 0) of the segment that prices size *n*."""
        size = Fraction(n)
        k = 0
        for i, segment in enumerate(self.segments[1:], start=1):
            if size >= segment.from_bytes:
                k = i
        return k

    def at(self, n: Any) -> LinkParams:
        """The link that prices size *n*, its source naming the segment."""
        from costmodel.units import format_size

        k = self.index(n)
        segment = self.segments[k]
        if len(self.segments) == 1:
            return segment.link
        span = " – ".join(format_size(x).split(" = ")[0] for x in (segment.from_bytes, segment.to_bytes))
        return replace(segment.link, source=f"{segment.link.source}, segment {k + 1} of {len(self.segments)} "
                                            f"({span})")

    def pieces(self, lo: Fraction, hi: Fraction | None) -> tuple[tuple[Fraction, Fraction | None, LinkParams],
                                                                  ...]:
        """(start, end, link) for every segment that prices part of [*lo*, *hi*] (*hi* ``None``: no end)."""
        out = []
        for k, segment in enumerate(self.segments):
            start = lo if k == 0 else max(lo, segment.from_bytes)
            end = self.segments[k + 1].from_bytes if k + 1 < len(self.segments) else None
            if end is not None and hi is not None:
                end = min(end, hi)
            elif end is None:
                end = hi
            if end is None or start < end:
                out.append((start, end, self.at(start)))
        return tuple(out)

    def notes_at(self, p: int | None, p_max: int | None = None) -> tuple[str, ...]:
        """The notes of a result priced at *p* ranks (or over *p* .. *p_max*): :attr:`notes`, and when the
        segments were measured at another rank count, that α and β are taken to be the link's, the same at
        any p (the α–β model's assumption [1]_, not a measurement).

        >>> small = combine_link(alpha="10us", beta="1ns/B")
        >>> one = LinkSegment(from_bytes=Fraction(8), to_bytes=Fraction(8), link=small)
        >>> link = PiecewiseLink(segments=(one,), summary=small, source="profile lab", fitted_p=8)
        >>> link.notes_at(8), link.notes_at(64)[0].split(": α")[0]
        ((), 'profile lab: measured at p = 8, priced here at p = 64')
        """
        high = p if p_max is None else p_max
        if self.fitted_p is None or p is None or p == high == self.fitted_p:
            return self.notes
        at = f"p = {p}" if high == p else f"p = {p} to {high}"
        return (*self.notes, f"{self.source}: measured at p = {self.fitted_p}, priced here at {at}: α and β "
                             "are taken as the link's own, unchanged with p (contention, topology and the "
                             f"library's choice of algorithm at {at} were not measured)")

    def with_options(self, *, alpha: Fraction | None = None, beta: Fraction | None = None,
                     gamma: Fraction | None = None) -> PiecewiseLink:
        """Every segment (and the summary) with the values given replacing its own."""
        if alpha is None and beta is None and gamma is None:
            return self

        def changed(link: LinkParams) -> LinkParams:
            return LinkParams(alpha_s=link.alpha_s if alpha is None else alpha,
                              beta_s_per_byte=link.beta_s_per_byte if beta is None else beta,
                              gamma_s_per_byte=link.gamma_s_per_byte if gamma is None else gamma,
                              source=f"{link.source} with options")

        return replace(self, segments=tuple(replace(s, link=changed(s.link)) for s in self.segments),
                       summary=changed(self.summary), source=f"{self.source} with options")

    def result_fields(self) -> dict[str, object]:
        """The summary link as every result's JSON carries it, and ``link_segments``: every segment."""
        return {**self.summary.result_fields(), "link_source": self.source,
                "link_segments": [s.to_dict() for s in self.segments]}


Link: TypeAlias = LinkParams | PiecewiseLink
"""What prices a collective: one α–β–γ for every size, or one per segment of sizes."""


def link_at(link: Link, n: Any, *, p: int | None = None) -> tuple[LinkParams, tuple[str, ...]]:
    """The :class:`LinkParams` that prices size *n*, and the notes of the link it came from for a result
    at *p* ranks (see :meth:`PiecewiseLink.notes_at`).

    >>> link_at(combine_link(alpha="5us", beta="0.08ns/B"), 1024)[1]
    ()
    """
    if isinstance(link, PiecewiseLink):
        return link.at(n), link.notes_at(p)
    if isinstance(link, LinkParams):
        return link, ()
    raise InputError(f"{type(link).__name__} is not a link; pass LinkParams or PiecewiseLink")
