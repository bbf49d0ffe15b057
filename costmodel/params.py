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

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, replace
from fractions import Fraction
from itertools import pairwise
from typing import Any, TypeAlias

from costmodel.errors import InputError
from costmodel.units import parse_inverse_rate, parse_rate, parse_time

__all__ = ["FittedOn", "Link", "LinkParams", "LinkSegment", "MessagePiece", "PiecewiseLink", "combine_link",
           "link_notes"]

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
    the range (message sizes, or collective sizes n of the fitted algorithm when
    the link's segments are not placed by message size); ``points`` the rows
    fitted and ``median_rel_error`` their median |relative error| (``None`` when
    unknown).
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
class FittedOn:
    """What a calibrated link's segments were measured under: one collective run by one algorithm.

    The fit's model is T(n) = a·α + b·n·β (``latency_coefficient`` a,
    ``bandwidth_coefficient`` b, at ``p`` ranks).  When every message of the
    algorithm has one size, it is b/a·n bytes (a ring all-reduce's n/p): the
    segments' collective sizes become message sizes, and ``message_share`` holds
    b/a once they have been (:func:`costmodel.collectives.piecewise.placed`).
    """

    collective: str
    algorithm: str
    p: int | None = None
    latency_coefficient: Fraction | None = None
    bandwidth_coefficient: Fraction | None = None
    message_share: Fraction | None = None

    def to_dict(self) -> dict[str, object]:
        from costmodel._json import to_json_dict

        return to_json_dict(self, ("collective", "algorithm", "p", "message_share"))


@dataclass(frozen=True, slots=True, kw_only=True)
class MessagePiece:
    """A range of message sizes priced by one line: what :meth:`PiecewiseLink.message` answers.

    A message of m bytes in [``from_bytes``, ``to_bytes``) costs
    α + β·m̃ (+ γ·m̃ when reduced) with the α, β, γ of ``link`` (segment number
    ``segment``, from 0) and m̃ = m, or m̃ = ``padded_bytes`` when the message is
    priced as a larger one (the first size of a later segment, which costs less
    than m on its own segment's line: see :class:`PiecewiseLink`).
    """

    from_bytes: Fraction
    to_bytes: Fraction | None
    link: LinkParams
    segment: int
    padded_bytes: Fraction | None = None

    def terms(self, m: Fraction, *, reduce: bool) -> tuple[Fraction, Fraction, Fraction]:
        """(latency, bandwidth, compute) of one message of *m* bytes, seconds."""
        size = m if self.padded_bytes is None else self.padded_bytes
        link = self.link
        compute = link.gamma_s_per_byte * size if reduce else Fraction(0)
        return link.alpha_s, link.beta_s_per_byte * size, compute

    def line(self, *, reduce: bool) -> tuple[Fraction, Fraction]:
        """(A, B): one message of m bytes here costs A + B·m."""
        slope = self.link.beta_s_per_byte + (self.link.gamma_s_per_byte if reduce else 0)
        if self.padded_bytes is None:
            return self.link.alpha_s, slope
        return self.link.alpha_s + slope * self.padded_bytes, Fraction(0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PiecewiseLink:
    """α, β and γ by message size: one :class:`LinkParams` per segment of sizes [2]_.

    Segment k prices every message size m from its first measured size up to
    the next segment's first measured size; the first segment also prices every
    size below its range and the last every size above.  A collective is priced
    message by message: each message on an algorithm's critical path (a ring's
    n/p, Rabenseifner's n/2, n/4, ...) costs α + mβ (+ mγ reduced) with the α,
    β, γ of the segment that covers *its* size m, not the collective's n, since
    what a link charges depends on the message it carries [2]_.

    A message never costs more than a larger one: where a later segment's line
    at its first size is below this segment's line (its regime measured
    cheaper, a faster protocol), the message is priced as that larger one
    (``padded_bytes``), as a library could send it padded or with that
    protocol.  The price of a message is so the lower non-decreasing envelope of
    the segments' lines, and every algorithm's cost is non-decreasing in n; a
    jump up where a slower regime starts is kept, since it was measured.

    ``sizes`` says what the segments' bounds measure: ``"message"`` sizes, or
    ``"n"``, the collective sizes of the algorithm they were fitted on
    (``fitted``, a calibrated profile's).  The pricing functions place those by
    the size of that algorithm's messages first (a ring all-reduce's n/p:
    :func:`costmodel.collectives.piecewise.placed`); when its messages differ in
    size (Rabenseifner's n/2, n/4, ...) they stay collective sizes and price that
    algorithm only (:meth:`refuses`).
    ``summary`` is the one-line link of the profile (``[link]``: α of the small
    messages, β of the large), for tools that want one; ``notes`` travel with
    every result priced on this link (e.g. that the profile was fitted on
    another collective).

    Examples
    --------
    >>> small = combine_link(alpha="10us", beta="1ns/B")
    >>> large = combine_link(alpha="40us", beta="0.1ns/B")
    >>> segments = (LinkSegment(from_bytes=Fraction(8), to_bytes=Fraction(4096), link=small),
    ...             LinkSegment(from_bytes=Fraction(65536), to_bytes=Fraction(2**26), link=large))
    >>> link = PiecewiseLink(segments=segments, summary=small, source="example")
    >>> link.at(4096).alpha_s, link.at(65536).alpha_s
    (Fraction(1, 100000), Fraction(1, 25000))
    >>> [(lo, hi) for lo, hi, _ in link.pieces(Fraction(0), None)]
    [(Fraction(0, 1), Fraction(65536, 1)), (Fraction(65536, 1), None)]

    Segment 2 charges 40 µs + 64 KiB · 0.1 ns/B = 46.5536 µs at its first size;
    from 36553.6 B on, segment 1's line charges more, so such a message is priced
    as one of 64 KiB on segment 2:

    >>> piece = link.message(40000)
    >>> piece.segment, piece.padded_bytes, piece.from_bytes
    (1, Fraction(65536, 1), Fraction(182768, 5))
    >>> sum(piece.terms(Fraction(40000), reduce=False)) * 10**6  # µs
    Fraction(29096, 625)
    """

    segments: tuple[LinkSegment, ...]
    summary: LinkParams
    source: str
    notes: tuple[str, ...] = ()
    fitted: FittedOn | None = None
    sizes: str = "message"
    _envelopes: tuple[tuple[MessagePiece, ...], ...] = field(init=False, repr=False, compare=False,
                                                             hash=False)
    """:meth:`envelope` without and with reductions, computed once."""
    _starts: tuple[tuple[Fraction, ...], ...] = field(init=False, repr=False, compare=False, hash=False)
    _floats: tuple[tuple[tuple[float, ...], tuple[tuple[float, float], ...]], ...] = field(
        init=False, repr=False, compare=False, hash=False)
    """The envelopes in float64, for scans: each piece's first size and line (A, B), A + B·m."""

    def __post_init__(self) -> None:
        if not self.segments:
            raise InputError("a piecewise link needs at least one segment")
        if self.sizes not in {"message", "n"} or (self.sizes == "n" and self.fitted is None):
            raise InputError(f"sizes={self.sizes!r}: the segments are message sizes ('message'), or the "
                             "collective sizes n of the algorithm named by fitted= ('n')")
        envelopes = (_envelope(self.segments, False), _envelope(self.segments, True))
        object.__setattr__(self, "_envelopes", envelopes)
        object.__setattr__(self, "_starts", tuple(tuple(x.from_bytes for x in e) for e in envelopes))
        floats = tuple((tuple(float(x.from_bytes) for x in e),
                        tuple((float(a), float(b)) for a, b in (x.line(reduce=bool(r)) for x in e)))
                       for r, e in enumerate(envelopes))
        object.__setattr__(self, "_floats", floats)
        starts = [s.from_bytes for s in self.segments]
        if any(b <= a for a, b in pairwise(starts)):
            raise InputError("the segments of a piecewise link must start at increasing sizes")

    @property
    def by_message(self) -> bool:
        """Whether the segments' bounds are message sizes (else collective sizes of the fitted algorithm)."""
        return self.sizes == "message"

    def refuses(self, *algorithms: str) -> str | None:
        """Why this link cannot price an algorithm (its canonical name, and that of the adaptation it
        runs as), or ``None`` when it can: segments not placed by message size price only the
        algorithm they were fitted on."""
        f = self.fitted
        if f is None or self.by_message or f.algorithm in algorithms:
            return None
        name = algorithms[0] if algorithms else "another algorithm"
        return f"{self.only()}, not {name}; give alpha= and beta= to price {name}"

    def only(self) -> str:
        """Why a link of collective sizes prices one algorithm only, in words (for messages)."""
        f = self.fitted
        if f is None or self.by_message:
            return ""
        return (f"{self.source}: its segments were fitted on {f.collective} {f.algorithm}, whose messages "
                f"differ in size, so they price {f.algorithm} only")

    def index(self, n: Any) -> int:
        """The number (from 0) of the segment that covers size *n*."""
        size = Fraction(n)
        k = 0
        for i, segment in enumerate(self.segments[1:], start=1):
            if size >= segment.from_bytes:
                k = i
        return k

    def at(self, n: Any) -> LinkParams:
        """The segment that covers size *n*, as a link whose source names the segment."""
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
        """(start, end, link) for every segment that covers part of [*lo*, *hi*] (*hi* ``None``: no end)."""
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

    def envelope(self, *, reduce: bool = False) -> tuple[MessagePiece, ...]:
        """How every message size is priced, smallest first: the lower non-decreasing envelope.

        The pieces tile [0, ∞).  *reduce* prices a message the receiver reduces
        (its γ included in the comparison of the lines).
        """
        return self._envelopes[reduce]

    def message_index(self, m: Any, *, reduce: bool = False, below: bool = False) -> int:
        """The number of the piece of :meth:`envelope` that prices a message of *m* bytes (*below*: the
        piece just below *m*, for limits from below)."""
        starts = self._starts[reduce]
        size = Fraction(m)
        found = bisect_left(starts, size) if below else bisect_right(starts, size)
        return max(0, found - 1)

    def price_float(self, m: float, *, reduce: bool = False, below: bool = False) -> tuple[int, float]:
        """(the piece's number, the price of one message of *m* bytes) in float64, for scans."""
        starts, lines = self._floats[reduce]
        k = max(0, (bisect_left(starts, m) if below else bisect_right(starts, m)) - 1)
        a, b = lines[k]
        return k, a + b * m

    def message(self, m: Any, *, reduce: bool = False, below: bool = False) -> MessagePiece:
        """The piece of :meth:`envelope` that prices a message of *m* bytes (*below*: as for
        :meth:`message_index`)."""
        return self.envelope(reduce=reduce)[self.message_index(m, reduce=reduce, below=below)]

    def for_message(self, m: Any, *, reduce: bool = False) -> LinkParams:
        """A :class:`LinkParams` that prices one message of *m* > 0 bytes as this link does.

        >>> link = PiecewiseLink(segments=(LinkSegment(from_bytes=Fraction(1), to_bytes=Fraction(1),
        ...                                            link=combine_link(alpha="1us", beta="1ns/B")),),
        ...                      summary=combine_link(alpha="1us", beta="1ns/B"), source="one")
        >>> link.for_message(100).beta_s_per_byte
        Fraction(1, 1000000000)
        """
        size = Fraction(m)
        piece = self.message(size, reduce=reduce)
        link = piece.link
        if piece.padded_bytes is None or size <= 0:
            return link
        scale = piece.padded_bytes / size  # a padded message: its bytes cost as padded_bytes do
        return replace(link, beta_s_per_byte=link.beta_s_per_byte * scale,
                       gamma_s_per_byte=link.gamma_s_per_byte * scale)

    def notes_at(self, p: int | None, p_max: int | None = None) -> tuple[str, ...]:
        """The notes of a result priced at *p* ranks (or over *p* .. *p_max*): :attr:`notes`, and when the
        segments were measured at another rank count (``fitted.p``), that α and β are taken to be the
        link's, the same at any p (the α–β model's assumption [1]_, not a measurement).

        >>> small = combine_link(alpha="10us", beta="1ns/B")
        >>> one = LinkSegment(from_bytes=Fraction(8), to_bytes=Fraction(8), link=small)
        >>> link = PiecewiseLink(segments=(one,), summary=small, source="profile lab",
        ...                      fitted=FittedOn(collective="allreduce", algorithm="ring", p=8))
        >>> link.notes_at(8), link.notes_at(64)[0].split(": α")[0]
        ((), 'profile lab: measured at p = 8, priced here at p = 64')
        """
        measured = self.fitted.p if self.fitted is not None else None
        high = p if p_max is None else p_max
        if measured is None or p is None or p == high == measured:
            return self.notes
        at = f"p = {p}" if high == p else f"p = {p} to {high}"
        return (*self.notes, f"{self.source}: measured at p = {measured}, priced here at {at}: α and β "
                             "are taken as the link's own, unchanged with p (contention, topology and the "
                             f"library's choice of algorithm at {at} were not measured)")

    def lowest(self) -> LinkParams:
        """The smallest α, β and γ of any segment: every message costs at least α + mβ (+ mγ) with them."""
        links = [s.link for s in self.segments]
        return LinkParams(alpha_s=min(x.alpha_s for x in links),
                          beta_s_per_byte=min(x.beta_s_per_byte for x in links),
                          gamma_s_per_byte=min(x.gamma_s_per_byte for x in links),
                          source=f"{self.source}: the smallest α, β and γ of its segments")

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
        """The summary link as every result's JSON carries it, ``link_segments`` (every segment),
        ``link_segments_by`` (``"message"`` or ``"n"``) and ``link_fitted_on``."""
        return {**self.summary.result_fields(), "link_source": self.source,
                "link_segments": [s.to_dict() for s in self.segments],
                "link_segments_by": self.sizes,
                "link_fitted_on": None if self.fitted is None else self.fitted.to_dict()}


def _envelope(segments: tuple[LinkSegment, ...], reduce: bool) -> tuple[MessagePiece, ...]:
    """:meth:`PiecewiseLink.envelope`: segment k's line where it is the cheapest of every size from
    m on, else the cheapest later segment's first size."""
    starts = [Fraction(0)] + [s.from_bytes for s in segments[1:]]
    ends: list[Fraction | None] = [*starts[1:], None]
    lines = [MessagePiece(from_bytes=starts[k], to_bytes=ends[k], link=s.link, segment=k).line(reduce=reduce)
             for k, s in enumerate(segments)]
    out: list[MessagePiece] = []
    for k, segment in enumerate(segments):
        start, end = starts[k], ends[k]
        later = [(lines[j][0] + lines[j][1] * starts[j], j) for j in range(k + 1, len(segments))]
        if not later:
            out.append(MessagePiece(from_bytes=start, to_bytes=end, link=segment.link, segment=k))
            continue
        cap, j = min(later)  # the first of the cheapest on a tie
        assert end is not None  # only the last segment has no end, and no later one
        alpha, slope = lines[k]
        if alpha > cap:
            cut = start
        elif slope == 0:
            cut = end
        else:
            cut = min(end, max(start, (cap - alpha) / slope))
        if cut > start:
            out.append(MessagePiece(from_bytes=start, to_bytes=cut, link=segment.link, segment=k))
        if cut < end:
            out.append(MessagePiece(from_bytes=cut, to_bytes=end, link=segments[j].link, segment=j,
                                    padded_bytes=starts[j]))
    return tuple(out)


Link: TypeAlias = LinkParams | PiecewiseLink
"""What prices a collective: one α–β–γ for every size, or one per segment of sizes."""


def link_notes(link: Link, p: int | None = None, p_max: int | None = None) -> tuple[str, ...]:
    """The notes that a result priced on *link* at *p* ranks (or over *p* .. *p_max*) carries: a piecewise
    link's (:meth:`PiecewiseLink.notes_at`), none for one α–β–γ.

    >>> link_notes(combine_link(alpha="5us", beta="0.08ns/B"), 16)
    ()
    """
    return link.notes_at(p, p_max) if isinstance(link, PiecewiseLink) else ()
