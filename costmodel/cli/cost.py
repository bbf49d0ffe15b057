"""Commands of the cost model: cost, bound, crossover, best, formula, algorithms."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated

import typer

from costmodel.cli import complete
from costmodel.cli.options import (
    Algorithms,
    Alpha,
    Bandwidth,
    Beta,
    Blocks,
    Collective,
    Gamma,
    Inner,
    Json,
    Lanes,
    Levels,
    MaxSize,
    MinSize,
    OptionalRanks,
    OptionalSize,
    Outer,
    Profile,
    Ranks,
    Segments,
    Size,
    algorithm_argument,
    extra_parameters,
    link_from_options,
)
from costmodel.cli.output import emit
from costmodel.errors import InputError

if TYPE_CHECKING:
    from costmodel.profiles import Profile as ProfileType

app = typer.Typer()

TopologyAlgorithms = Annotated[list[str] | None, algorithm_argument(
    "Algorithms to compare (default: all; hierarchical ones with --level).", topology=True)]


@app.command("cost")
def cost(
    collective: Collective,
    size: Size,
    algorithms: TopologyAlgorithms = None,
    ranks: OptionalRanks = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None, segments: Segments = None, blocks: Blocks = None,
    level: Levels = None, inner: Inner = None, outer: Outer = None, lanes: Lanes = None,
    whole_bytes: Annotated[bool, typer.Option(
        "--whole-bytes", help="Price whole-byte chunks: where n does not split evenly into an algorithm's "
                              "chunks, every chunk costs the largest, ⌈n/chunks⌉ bytes (an upper bound)."),
    ] = False,
    as_json: Json = False,
) -> None:
    """Modelled time of each algorithm of a collective, fastest first, with the lower bound.

    The model is continuous in n (chunks of n/p bytes, even fractional ones); a note says where real
    schedules send unequal whole-byte chunks, and --whole-bytes prices those. n must be at least 1 B.

    With --level (one per level, innermost first) or a profile with levels: the hierarchical all-reduce
    algorithms on that topology, the bytes crossing each level, and the flat ring beside them.

    Example: costmodel cost allreduce -p 16 -n 64MiB --alpha 5us --beta 0.08ns/B

    Example: costmodel cost allreduce hierarchical --level 8:1us:150GB/s --level 4:5us:25GB/s -n 1GiB
    """
    extra = extra_parameters(segments=segments, blocks=blocks)
    if _wants_topology(collective, algorithms, level, profile, ranks):
        from costmodel.collectives.hierarchical import compare_hierarchical
        from costmodel.links import topology_from_options

        # the topology first: a missing or inconsistent one is the first thing to say
        topology = topology_from_options(levels=level, profile=profile, p=ranks, gamma=gamma)
        if whole_bytes:
            raise InputError("--whole-bytes prices the flat algorithms' chunks; the hierarchical ones on a "
                             "topology use the continuous model only")
        for option, value in (("--alpha", alpha), ("--beta", beta), ("--bandwidth", bandwidth)):
            if value is not None:
                raise InputError(f"{option} sets one flat link; with a topology each level has its own α "
                                 "and bandwidth: --level SIZE:ALPHA:RATE")
        emit(compare_hierarchical(collective, algorithms, n=size, topology=topology, inner=inner,
                                  outer=outer, lanes=lanes, extra=extra), as_json=as_json)
        return
    from costmodel.collectives.evaluate import compare
    from costmodel.links import resolve_link

    hierarchical: tuple[tuple[str, object], ...] = (
        ("--inner", inner), ("--outer", outer), ("--lanes", lanes))
    for option, given in hierarchical:
        if given is not None:
            raise InputError(f"{option} {given} applies to hierarchical algorithms; describe the topology "
                             "with --level SIZE:ALPHA:RATE once per level")
    if ranks is None:  # Click's wording, which every other missing option gets too
        raise InputError("Missing option '-p' / '--ranks'; give the number of ranks, or the levels of a "
                         "topology with --level SIZE:ALPHA:RATE")
    chosen: str | ProfileType | None = profile
    if profile is not None and (alpha is None or (beta is None and bandwidth is None)):
        loaded = _profile(profile)
        if loaded.link is None and not loaded.fits:
            raise InputError(f"profile {loaded.name!r} has levels but no [link] table; drop -p to cost the "
                             "hierarchical algorithms on its levels, or give --alpha and --bandwidth")
        chosen = loaded
    link = resolve_link(collective, alpha=alpha, beta=beta, bandwidth=bandwidth, gamma=gamma, profile=chosen)
    emit(compare(collective, algorithms, p=ranks, n=size, link=link, extra=extra, whole_bytes=whole_bytes),
         as_json=as_json)


def _profile(profile: str) -> ProfileType:
    """The profile *profile* names (a preset or a file)."""
    from costmodel.profiles import load_profile

    return load_profile(profile)


def _wants_topology(collective: str, algorithms: list[str] | None, levels: list[str] | None,
                    profile: str | None, p: int | None) -> bool:
    """Whether ``cost`` means a topology: levels given, a hierarchical algorithm named, or a profile's levels.

    A profile's levels count only when p is not given; an unknown algorithm raises.
    """
    from costmodel.collectives._registry import resolve

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
    return p is None and profile is not None and bool(_profile(profile).levels)


@app.command("bound")
def bound(
    collective: Collective,
    ranks: Ranks,
    size: Size,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None, as_json: Json = False,
) -> None:
    """Lower bound on a collective's time (Chan et al. 2007), term by term.

    Example: costmodel bound allreduce -p 16 -n 64MiB --alpha 5us --bandwidth 12.5GB/s
    """
    from costmodel.collectives.evaluate import bound as lower_bound

    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    emit(lower_bound(collective, p=ranks, n=size, link=link), as_json=as_json)


@app.command("crossover")
def crossover(
    collective: Collective,
    a: Annotated[str, algorithm_argument("First algorithm.")],
    b: Annotated[str, algorithm_argument("Second algorithm.")],
    ranks: Annotated[int | None, typer.Option("-p", "--ranks", help="Ranks: solve for the size n*.")] = None,
    size: OptionalSize = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None, segments: Segments = None, blocks: Blocks = None,
    min_size: MinSize = None,
    max_size: MaxSize = None,
    p_min: Annotated[int, typer.Option("--p-min", help="Smallest p scanned with -n.")] = 2,
    p_max: Annotated[int, typer.Option("--p-max", help="Largest p scanned with -n.")] = 1024,
    symbolic: Annotated[bool, typer.Option("--symbolic", help="Also solve n* in α, β, γ (sympy).")] = False,
    as_json: Json = False,
) -> None:
    """Where two algorithms cost the same: the exact size n* at fixed p, or the p where they swap at fixed n.

    With -p, two closed-form costs (lines in n) are solved exactly for every n ≥ 0, or only between
    --min and --max when given. A tuned algorithm (pipelined-chain, double-binary-tree) is searched
    from --min (default 0 B) to --max (default 16 GiB); the output says when that found nothing.

    Example: costmodel crossover allreduce recursive-doubling rabenseifner -p 16 --alpha 5us --beta 0.08ns/B

    Example: costmodel crossover allreduce ring dbt -p 65536 --alpha 5us --beta 0.08ns/B --max 4TB
    """
    from costmodel.crossovers import find_crossover

    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    extra = extra_parameters(segments=segments, blocks=blocks)
    emit(find_crossover(collective, a, b, p=ranks, n=size, link=link, extra=extra, symbolic=symbolic,
                        p_min=p_min, p_max=p_max, min_bytes=min_size, max_bytes=max_size), as_json=as_json)


@app.command("best")
def best(
    collective: Collective,
    ranks: Ranks,
    algorithms: Algorithms = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, gamma: Gamma = None,
    profile: Profile = None,
    min_size: MinSize = Fraction(1),
    max_size: MaxSize = Fraction(16 * 2**30),
    segments: Segments = None, blocks: Blocks = None, as_json: Json = False,
) -> None:
    """The cheapest algorithm for every message size in [--min, --max] (default 1 B to 16 GiB).

    Example: costmodel best allreduce -p 16 --alpha 5us --beta 0.08ns/B --max 1GiB
    """
    from costmodel.crossovers import best as best_ranges

    link = link_from_options(alpha, beta, bandwidth, gamma, profile, collective=collective)
    extra = extra_parameters(segments=segments, blocks=blocks)
    emit(best_ranges(collective, algorithms, p=ranks, link=link, min_bytes=min_size, max_bytes=max_size,
                     extra=extra), as_json=as_json)


@app.command("formula")
def formula(
    collective: Collective,
    algorithm: Annotated[str, algorithm_argument("Algorithm name or alias (hierarchical ones too).",
                                                 topology=True)],
    inner: Inner = None, outer: Outer = None,
    latex: Annotated[bool, typer.Option("--latex", help="Print the LaTeX of T(p, n) only.")] = False,
    as_json: Json = False,
) -> None:
    """Symbolic cost of an algorithm: α, β, γ terms, rounds, bytes, constraints and citation.

    A hierarchical all-reduce gives its composition from flat records over L levels and its closed
    form for two levels (s₀ ranks per node, s₁ nodes); --inner and --outer choose its phases.

    Example: costmodel formula allreduce rabenseifner --latex

    Example: costmodel formula allreduce hierarchical --outer tree
    """
    from costmodel.collectives.formula import formula as symbolic_formula

    result = symbolic_formula(collective, algorithm, inner=inner, outer=outer)
    emit(result, as_json=as_json, latex=latex and not as_json)


@app.command("algorithms")
def algorithms(
    collective: Annotated[str | None, typer.Argument(help="Only this collective.",
                                                     autocompletion=complete.collectives)] = None,
    adaptations: Annotated[bool, typer.Option(help="Also list the -folded records.")] = False,
    markdown: Annotated[bool, typer.Option(help="Print the model reference (Markdown).")] = False,
    as_json: Json = False,
) -> None:
    """List the registered collectives and algorithms with their cost formulas.

    Example: costmodel algorithms allreduce
    """
    from costmodel.collectives.catalog import catalog

    result = catalog(collective, adaptations=adaptations, hierarchical=markdown or as_json)
    emit(result, as_json=as_json, markdown=markdown and not as_json)
