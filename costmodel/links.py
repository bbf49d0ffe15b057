"""Links and topologies from options: the values given, over a profile's.

This is the layer above :mod:`costmodel.params`, :mod:`costmodel.topology` and
:mod:`costmodel.profiles`: it loads a profile by name or path and combines its
link or levels with the values given, so that none of the three imports another
upwards.  It loads the profile and topology code only when they are asked
for, so a query priced on ``alpha`` and ``beta`` never imports them.
Messages name the Python parameters (``alpha=TIME``); the command line shows
its options in their place.

Examples
--------
>>> link_from_options(alpha="5us", bandwidth="12.5 GB/s").beta_s_per_byte
Fraction(1, 12500000000)
>>> link_from_options(profile="textbook", alpha="1us").source
'profile textbook with options'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from costmodel.errors import InputError, UnknownNameError
from costmodel.params import BOTH_BETA_AND_BANDWIDTH, Link, LinkParams, PiecewiseLink, combine_link
from costmodel.units import parse_inverse_rate, parse_rate, parse_time
from costmodel.validate import whole

if TYPE_CHECKING:
    from costmodel.profiles import Profile
    from costmodel.topology import Level, Topology

__all__ = ["as_link", "link_from_options", "link_of", "resolve_link", "topology_from_options"]


def _loaded(profile: Any) -> Profile:
    """*profile* loaded (a name or a path), or itself; profiles load only when one is given."""
    from costmodel.profiles import Profile, load_profile

    return profile if isinstance(profile, Profile) else load_profile(profile)


def link_from_options(*, alpha: Any = None, beta: Any = None, bandwidth: Any = None, gamma: Any = None,
                      profile: Any = None) -> LinkParams:
    """Combine command-line style options; explicit values override the profile's.

    The rule is :func:`~costmodel.params.combine_link`'s (α and β both needed,
    α = 0 said, never assumed); *profile* is a preset name, a TOML path or a
    :class:`~costmodel.profiles.Profile`, whose ``[link]`` gives the values
    not given.  Raises as :func:`~costmodel.params.combine_link` does, the
    beta-and-bandwidth refusal before any profile is read.
    """
    if beta is not None and bandwidth is not None:
        raise InputError(BOTH_BETA_AND_BANDWIDTH)
    base = None if profile is None else _loaded(profile).link
    return combine_link(alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, base=base)


def as_link(link: Link | None = None, *, alpha: Any = None, beta: Any = None, bandwidth: Any = None,
            gamma: Any = None, profile: Any = None) -> Link:
    """The link a model prices on: *link*, resolved already, or one made of the option values.

    The models take one resolved link (``link=``, a :class:`~costmodel.params.LinkParams` or a
    :class:`~costmodel.params.PiecewiseLink`), as :func:`~costmodel.collectives.evaluate.cost`
    does; those that also accept ``alpha=``, ``beta=``, ``bandwidth=``, ``gamma=`` and ``profile=``
    as a convenience turn them into a link here, by :func:`link_from_options` (one α–β–γ line, a
    profile's ``[link]`` under the values given), and nowhere else.

    Raises
    ------
    InputError
        When *link* and option values are both given, *link* is no link, or the options make none
        (as :func:`link_from_options` says).

    Examples
    --------
    >>> as_link(alpha="5us", bandwidth="12.5GB/s").beta_s_per_byte
    Fraction(1, 12500000000)
    >>> as_link(as_link(alpha=0, beta="1ns/B")).alpha_s
    Fraction(0, 1)
    """
    options = {"alpha": alpha, "beta": beta, "bandwidth": bandwidth, "gamma": gamma, "profile": profile}
    given = [name for name, value in options.items() if value is not None]
    if link is None:
        return link_from_options(**options)
    if given:
        raise InputError(f"both link= and {given[0]}= were given; pass the link (link=) or its values "
                         "(alpha=, beta= or bandwidth=, gamma=, profile=), not both")
    if not isinstance(link, (LinkParams, PiecewiseLink)):
        raise InputError(f"{link!r} is not a link; pass a LinkParams (e.g. link_from_options(alpha='5us', "
                         "beta='0.08ns/B')) or a PiecewiseLink")
    return link


def resolve_link(collective: str | None, *, alpha: Any = None, beta: Any = None, bandwidth: Any = None,
                 gamma: Any = None, profile: Any = None) -> Link:
    """The link that prices *collective*: :func:`link_from_options`, or a profile's segments.

    A calibrated profile (one with ``[[segment]]`` tables) gives a
    :class:`~costmodel.params.PiecewiseLink`: the collective's own segments when
    it was measured, else those of the collective the profile was fitted on,
    with a note.  Options given replace the value in every segment.

    >>> resolve_link("allreduce", profile="textbook").alpha_s
    Fraction(1, 200000)
    """
    if profile is not None:
        loaded = _loaded(profile)
        piecewise = loaded.link_for(collective)
        if piecewise is not None:
            if beta is not None and bandwidth is not None:
                raise InputError(BOTH_BETA_AND_BANDWIDTH)
            return piecewise.with_options(
                alpha=None if alpha is None else parse_time(alpha),
                beta=(None if beta is None else parse_inverse_rate(beta)) if bandwidth is None
                else 1 / parse_rate(bandwidth),
                gamma=None if gamma is None else parse_inverse_rate(gamma))
        profile = loaded
    return link_from_options(alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, profile=profile)


def link_of(text: str) -> Link | Profile:
    """A link written ``ALPHA:RATE`` (``2us:300GB/s``, see :func:`~costmodel.topology.parse_link`), or
    a profile by name or TOML file, loaded: what ``--tp-link`` and the like take.  A profile stays a
    :class:`~costmodel.profiles.Profile`, so that a model pricing several collectives on it takes
    each one's own calibrated segments (:func:`resolve_link`).

    >>> link_of("2us:300GB/s").alpha_s, link_of("textbook").link.alpha_s
    (Fraction(1, 500000), Fraction(1, 200000))
    """
    from costmodel.topology import parse_link

    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{text!r} is not a link; give a profile's name or ALPHA:RATE, e.g. 2us:300GB/s")
    text = text.strip()
    if ":" in text and not text.lower().endswith(".toml"):
        return parse_link(text)
    try:
        return _loaded(text)
    except UnknownNameError:
        if text[:1].isdigit():  # a latency without its rate, say
            raise InputError(f"{text!r} is neither a profile nor a link; write ALPHA:RATE, e.g. 2us:300GB/s, "
                             "or a profile's name") from None
        raise


def topology_from_options(*, levels: Sequence[str | Level] | None = None, profile: Any = None,
                          p: int | None = None, gamma: Any = None) -> Topology:
    """A topology from command-line style options: level texts or a profile's ``[[level]]``.

    Parameters
    ----------
    levels : sequence of str or Level, optional
        Innermost first, each ``SIZE:ALPHA:RATE[:NAME]`` (see
        :func:`~costmodel.topology.parse_level`).  Given levels replace the profile's.
    profile : str, Path or Profile, optional
        A preset name or a TOML file with ``[[level]]`` tables.
    p : int, optional
        The number of ranks, if also given: it must equal the product of
        the level sizes.
    gamma : str or number, optional
        Local reduction time per byte, for every level (overrides the
        profile's).

    Raises
    ------
    InputError
        When no level is given, a level is malformed, or *p* does not
        match the levels.

    Examples
    --------
    >>> topology_from_options(levels=["8:1us:150GB/s", "4:5us:25GB/s"], p=32).names
    ('intra', 'inter')
    """
    from costmodel.topology import topology_of  # only commands with a topology load it

    given = list(levels or [])
    if not given and profile is not None:
        loaded = _loaded(profile)
        if not loaded.levels:
            raise InputError(
                f"profile {loaded.name!r} has no [[level]] tables; add one per level (size, alpha, "
                "bandwidth) or pass levels=SIZE:ALPHA:RATE once per level"
            )
        given = list(loaded.levels)
    elif not given:
        raise InputError(
            "no topology given; pass levels=SIZE:ALPHA:RATE once per level, innermost first "
            "(e.g. levels=['8:1us:150GB/s', '4:5us:25GB/s']), or profile=FILE with [[level]] tables"
        )
    topology = topology_of(given, gamma=gamma)
    if p is not None:
        whole(p, "p", hint="give the number of ranks, e.g. p=32")
        if p != topology.p:
            product = " × ".join(map(str, topology.sizes))
            raise InputError(
                f"p={p} does not match the levels: {product} = {topology.p} ranks; "
                "drop p= or change the level sizes"
            )
    return topology
