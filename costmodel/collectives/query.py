"""``costmodel cost`` in one call: the flat algorithms on one link, or the hierarchical ones on a topology.

This module decides which, cheaply: the hierarchical machinery (and its
imports) loads only when a topology is meant, so a flat query stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import compare
from costmodel.collectives.result import CostTable
from costmodel.errors import InputError
from costmodel.links import resolve_link

__all__ = ["compare_from_options"]


def _wants_topology(collective: str, algorithms: Sequence[str] | None, levels: Sequence[Any] | None,
                    profile: Any, p: int | None) -> bool:
    if levels:
        return True
    for name in algorithms or []:
        try:
            resolve(collective, name)
        except InputError:  # unknown, or a hierarchical all-reduce
            from costmodel.collectives.hierarchical import is_hierarchical

            if is_hierarchical(name):
                return True
            raise
    if p is None and profile is not None:
        from costmodel.profiles import Profile, load_profile

        loaded = profile if isinstance(profile, Profile) else load_profile(profile)
        return bool(loaded.levels)
    return False


def compare_from_options(
    collective: str,
    algorithms: Sequence[str] | None = None,
    *,
    n: Any,
    p: int | None = None,
    alpha: Any = None,
    beta: Any = None,
    bandwidth: Any = None,
    gamma: Any = None,
    profile: Any = None,
    levels: Sequence[Any] | None = None,
    inner: str | None = None,
    outer: str | None = None,
    lanes: int | None = None,
    extra: Mapping[str, int] | None = None,
    whole_bytes: bool = False,
) -> Any:
    """The flat algorithms on one link, or the hierarchical ones on a topology.

    A topology is meant when levels are given, when an algorithm named is
    hierarchical, or when p is not given and the profile has ``[[level]]``
    tables: then p, if given, must equal the product of the level sizes, the
    flat-link options are refused, and the result is
    :func:`costmodel.collectives.hierarchical.compare_hierarchical`.  Otherwise
    this is :func:`~costmodel.collectives.evaluate.compare` on the link the
    options describe, and the topology options are refused.

    Raises
    ------
    InputError
        For a combination of options that does not go together, a missing p,
        and everything the two comparisons refuse.

    Examples
    --------
    >>> compare_from_options("allreduce", ["ring"], p=4, n="1MB", alpha="5us", beta="0.08ns/B").best
    'ring'
    >>> compare_from_options("allreduce", n="1GiB", levels=["8:1us:150GB/s", "4:5us:25GB/s"]).best
    'hierarchical'
    """
    if _wants_topology(collective, algorithms, levels, profile, p):
        from costmodel.collectives.hierarchical import compare_hierarchical

        # the topology first: a missing or inconsistent one is the first thing to say
        from costmodel.links import topology_from_options

        topology = topology_from_options(levels=levels, profile=profile, p=p, gamma=gamma)
        if whole_bytes:
            raise InputError("--whole-bytes prices the flat algorithms' chunks; the hierarchical ones on a "
                             "topology use the continuous model only")
        for option, value in (("--alpha", alpha), ("--beta", beta), ("--bandwidth", bandwidth)):
            if value is not None:
                raise InputError(f"{option} sets one flat link; with a topology each level has its own α "
                                 "and bandwidth: --level SIZE:ALPHA:RATE")
        return compare_hierarchical(collective, algorithms, n=n, topology=topology, inner=inner,
                                    outer=outer, lanes=lanes, extra=extra)
    for option, value in (("--inner", inner), ("--outer", outer), ("--lanes", lanes)):
        if value is not None:
            raise InputError(f"{option} {value} applies to hierarchical algorithms; describe the topology "
                             "with --level SIZE:ALPHA:RATE once per level")
    if p is None:
        # Click's wording, which every other missing option gets too
        raise InputError("Missing option '-p' / '--ranks'; give the number of ranks, or the levels of a "
                         "topology with --level SIZE:ALPHA:RATE")
    if profile is not None and (alpha is None or (beta is None and bandwidth is None)):
        from costmodel.profiles import Profile, load_profile

        profile = profile if isinstance(profile, Profile) else load_profile(profile)
        if profile.link is None:
            raise InputError(f"profile {profile.name!r} has levels but no [link] table; drop -p to cost the "
                             "hierarchical algorithms on its levels, or give --alpha and --bandwidth")
    link = resolve_link(collective, alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, profile=profile)
    table: CostTable = compare(collective, algorithms, p=p, n=n, link=link, extra=extra,
                               whole_bytes=whole_bytes)
    return table
