"""Gossip in action: consensus runs, one D-SGD step, and gossip against a ring all-reduce.

* :func:`consensus` builds a graph and its mixing matrix, finds ρ and the rounds to a
  target, and simulates x ← Wx from an initial vector, recording the disagreement
  ‖x − mean(x)‖₂ each round (exactly, in Fractions, when W and x are exact).
* :func:`dsgd_step` is one decentralised SGD update as D-PSGD writes it:
  mixed = Σ_j w_j·x_j over the closed neighbourhood, then next = mixed − lr·grad,
  the gradient evaluated at the worker's own model before mixing (Lian et al. 2017).
* :func:`gossip_vs_allreduce` prices gossip to a target against one ring all-reduce.

References
----------
.. [1] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", 2004:
   e.g. the 4-worker ring (0, 3, 6, 9) → (4, 3, 6, 5), ρ = 1/3, five rounds for 100×.
.. [2] X. Lian et al., "Can Decentralized Algorithms Outperform Centralized
   Algorithms?", NeurIPS 2017, algorithm 1 (D-PSGD).
.. [3] L. Xiao, S. Boyd, "Fast linear iterations for distributed averaging", 2004.

Examples
--------
>>> run = consensus("ring", 4, init="0,3,6,9", rounds=2)
>>> [str(v) for v in run.trajectory[1].values]
['4', '3', '6', '5']
>>> run.spectrum.rho_exact, run.rounds.rounds
(Fraction(1, 3), 5)
>>> dsgd_step(6, (3, 12), grad=2, lr="0.5").next
Fraction(6, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

from costmodel._json import real
from costmodel.consensus.citations import LIAN_2017
from costmodel.consensus.graphs import Graph, generate, resolve_graph
from costmodel.consensus.mixing import Mixing, load_matrix, mixing_matrix, weight_summary
from costmodel.consensus.spectral import RoundsToTarget, Spectrum, parse_target, rounds_to_target, spectrum
from costmodel.errors import InputError
from costmodel.exact import Number, parse_number, parse_numbers
from costmodel.params import LinkParams
from costmodel.references import XIAO_2004, Cited
from costmodel.units import format_exact
from costmodel.validate import is_whole, whole

_CONSENSUS_SOURCE = XIAO_2004.at("section 1: x(t + 1) = W x(t), the disagreement shrinking by the spectral "
                                 "radius of W − 11ᵀ/n per round")
_STEP_SOURCE = LIAN_2017.at("Algorithm 1 (D-PSGD): mix with the neighbours, then subtract the gradient "
                            "taken at the local model")

__all__ = [
    "GOSSIP_MODEL",
    "ConsensusRound",
    "ConsensusRun",
    "DSGDStep",
    "GossipComparison",
    "consensus",
    "dsgd_step",
    "gossip_vs_allreduce",
    "simulate",
]

EXACT_MAX_P = 256
"""Exact (Fraction) simulation up to this many workers, within the two budgets below."""
EXACT_MAX_DIGITS = 60
"""An exact trajectory switches to floats at the first round where a value's numerator or
denominator has more than this many decimal digits (exact arithmetic grows the digits every
round; beyond this, printing them says nothing and computing them costs more each round)."""
EXACT_MAX_WORK = 500_000
"""…or once the exact rounds so far have taken more than this many weight multiplications
(nonzero weights × rounds): a run on a dense W with short values stays fast too."""
_EXACT_MAX_BITS = math.ceil(EXACT_MAX_DIGITS * math.log2(10))
VALUES_MAX_P = 1000
"""Per-round values are kept up to this many workers (or when the initial vector is given); beyond it a
trajectory is simulated only when asked for (rounds or an initial vector given): ρ, the spectral gap and
the round count need none."""
MAX_ROUNDS = 100_000
MAX_SIMULATED_WEIGHTS = 50_000_000
"""Simulation builds W: refused (or skipped by default) beyond this many nonzero weights."""
MAX_SIMULATED_WORK = 1_000_000_000
"""A simulation is refused beyond this many weight multiplications (nonzero weights × rounds), a few
seconds of sparse products: each bound above alone still lets 100,000 rounds on a large graph run for
minutes."""
MAX_KEPT_VALUES = 1_000_000
"""Per-round values are dropped (with a note) beyond this many in all (p × (rounds + 1)): the JSON of
1000 workers over 10,000 rounds is 180 MB."""
DEFAULT_ROUNDS_CAP = 20
_EXACT_ROOT_MAX = 10**30


# -- a trajectory --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsensusRound:
    """The state after ``round`` mixing rounds (round 0: the initial values).

    ``disagreement`` is ‖x − mean(x)·1‖₂; ``disagreement_squared`` is exact when the
    run is, and ``disagreement_exact`` is its square root in radical form (``√5/3``).
    """

    round: int
    values: tuple[Number, ...] | None
    mean: Number
    disagreement: float
    disagreement_squared: Fraction | None = None

    @property
    def disagreement_exact(self) -> str | None:
        sq = self.disagreement_squared
        if sq is None or sq.numerator * sq.denominator > _EXACT_ROOT_MAX:
            return None
        return _exact_sqrt(sq)

    def to_dict(self) -> dict[str, object]:
        exact = isinstance(self.mean, Fraction)
        return {
            "round": self.round,
            "values": None if self.values is None else [real(v) for v in self.values],
            "values_exact": [format_exact(v) for v in self.values] if exact and self.values is not None
            else None,
            "mean": real(self.mean),
            "mean_exact": format_exact(self.mean) if exact else None,
            "disagreement": real(self.disagreement),
            "disagreement_squared_exact": None if self.disagreement_squared is None
            else format_exact(self.disagreement_squared),
            "disagreement_exact": self.disagreement_exact,
        }


def simulate(mixing: Mixing, init: Sequence[Number], *, rounds: int,
             keep_values: bool = True) -> tuple[ConsensusRound, ...]:
    """Rounds 0 … *rounds* of x ← Wx from *init*, each round using the previous values at once.

    Exact Fractions when W and *init* are exact and p ≤ :data:`EXACT_MAX_P`, until a round's
    values would need more than :data:`EXACT_MAX_DIGITS` digits or the exact rounds would cost
    more than :data:`EXACT_MAX_WORK` multiplications; float64 with a sparse W from there on (a
    round is exact when its ``mean`` is a Fraction), and for the whole run otherwise.

    Examples
    --------
    >>> from costmodel.consensus.graphs import ring
    >>> from costmodel.consensus.mixing import mixing_matrix
    >>> run = simulate(mixing_matrix(ring(4)), [Fraction(v) for v in (0, 3, 6, 9)], rounds=2)
    >>> [r.disagreement_exact for r in run]
    ['3√5', '√5', '√5/3']
    """
    p = mixing.p
    if len(init) != p:
        raise InputError(f"init has {len(init)} values but the graph has p={p} workers; give one per worker")
    whole(rounds, "rounds", low=0, high=MAX_ROUNDS, expected=f"an integer between 0 and {MAX_ROUNDS}")
    weights = _weight_count(mixing.graph)
    if weights * rounds > MAX_SIMULATED_WORK:
        raise InputError(f"rounds={rounds} on the {mixing.graph.label} would take {weights * rounds:,} "
                         f"weight multiplications ({weights:,} nonzero weights × {rounds:,} rounds), more "
                         f"than {MAX_SIMULATED_WORK:,}; give rounds={MAX_SIMULATED_WORK // weights} "
                         "or fewer, or fewer workers")
    exact = mixing.exact and p <= EXACT_MAX_P and _exact_values(init)
    if exact:
        return _simulate_exact(mixing, tuple(Fraction(v) for v in init), rounds, keep_values)
    return _simulate_float(mixing, init, rounds, keep_values)


def _weight_count(graph: Graph) -> int:
    """The nonzero weights of a mixing matrix on *graph*: one per worker and one per edge end.

    >>> from costmodel.consensus.graphs import ring
    >>> _weight_count(ring(4))
    12
    """
    return graph.p + graph.edge_count * (1 if graph.directed else 2)


def _simulate_exact(mixing: Mixing, x: tuple[Fraction, ...], rounds: int,
                    keep: bool) -> tuple[ConsensusRound, ...]:
    rows = mixing.exact_rows()
    weights = sum(len(row) for row in rows)
    out = [_exact_round(0, x, keep)]
    for r in range(1, rounds + 1):
        following = None if r * weights > EXACT_MAX_WORK else tuple(
            sum((w * x[j] for j, w in row), Fraction(0)) for row in rows)
        if following is None or _too_long(following):  # floats from this round on, from the exact x
            rest = _simulate_float(mixing, x, rounds - r + 1, keep)[1:]
            return (*out, *(_renumbered(q, r + k) for k, q in enumerate(rest)))
        x = following
        out.append(_exact_round(r, x, keep))
    return tuple(out)


def _too_long(x: tuple[Fraction, ...]) -> bool:
    """Whether a value's numerator or denominator has more than :data:`EXACT_MAX_DIGITS` digits."""
    return any(v.numerator.bit_length() > _EXACT_MAX_BITS or v.denominator.bit_length() > _EXACT_MAX_BITS
               for v in x)


def _renumbered(q: ConsensusRound, r: int) -> ConsensusRound:
    return ConsensusRound(round=r, values=q.values, mean=q.mean, disagreement=q.disagreement,
                          disagreement_squared=q.disagreement_squared)


def _exact_round(r: int, x: tuple[Fraction, ...], keep: bool) -> ConsensusRound:
    mean = sum(x, Fraction(0)) / len(x)
    squared = sum(((v - mean) ** 2 for v in x), Fraction(0))
    return ConsensusRound(round=r, values=x if keep else None, mean=mean,
                          disagreement=math.sqrt(squared), disagreement_squared=squared)


def _simulate_float(mixing: Mixing, init: Sequence[Number], rounds: int,
                    keep: bool) -> tuple[ConsensusRound, ...]:
    import numpy as np

    from costmodel.consensus.mixing import sparse_matrix

    w = sparse_matrix(mixing) if rounds else None
    x: Any = (np.arange(init.start, init.stop, init.step, dtype=float) if isinstance(init, range)
              else np.fromiter((float(v) for v in init), dtype=float, count=len(init)))
    out = []
    for r in range(rounds + 1):
        if r:
            x = w @ x
        mean = float(x.mean())
        out.append(ConsensusRound(round=r, values=tuple(x.tolist()) if keep else None, mean=mean,
                                  disagreement=float(np.linalg.norm(x - mean))))
    return tuple(out)


# -- the consensus command's result ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsensusRun:
    """A graph, its mixing matrix, ρ, the rounds to a target, and a simulated trajectory."""

    graph: Graph
    mixing: Mixing
    spectrum: Spectrum
    rounds: RoundsToTarget
    trajectory: tuple[ConsensusRound, ...]
    init_default: bool
    notes: tuple[str, ...] = ()
    source: Cited = _CONSENSUS_SOURCE

    @property
    def trajectory_exact(self) -> bool:
        """Whether every round of the trajectory is exact (Fractions); see :data:`EXACT_MAX_DIGITS`."""
        return all(isinstance(q.mean, Fraction) for q in self.trajectory)

    @property
    def observed_rates(self) -> tuple[float | None, ...]:
        """Disagreement ratios of successive rounds (None where the previous one is zero)."""
        t = self.trajectory
        return tuple(None if a.disagreement == 0 else b.disagreement / a.disagreement
                     for a, b in pairwise(t))

    def to_dict(self) -> dict[str, object]:
        eps = self.rounds.target
        rates = [r for r in self.observed_rates if r is not None]
        return {
            **self.graph.to_dict(),
            **self.mixing.to_dict(),
            **self.spectrum.to_dict(),
            "target": real(eps),
            "target_exact": format_exact(eps) if isinstance(eps, Fraction) else None,
            "rounds_to_target": self.rounds.rounds,
            "rounds_to_target_range": (None if self.rounds.rounds is None
                                       else [self.rounds.low, self.rounds.high]),
            "rounds_exact": self.rounds.exact,
            "init": "default: 0, 1, …, p − 1" if self.init_default else "given",
            "last_rate": real(rates[-1]) if rates else None,
            "trajectory_exact": self.trajectory_exact,
            "trajectory": [r.to_dict() for r in self.trajectory],
            "notes": list(self.notes),
            "source": self.source.to_dict(),
        }

    @property
    def weights_text(self) -> str:
        return weight_summary(self.mixing)


def _build_graph(graph: str | Graph, p: int | None, weights: Any,
                 options: dict[str, Any]) -> tuple[Graph, Any]:
    """The graph, and the weights (a loaded Mixing for the pseudo-graph 'matrix')."""
    if isinstance(graph, Graph):
        given = [k for k, v in options.items() if v is not None]
        if given:
            raise InputError(f"options {', '.join(given)} apply to a graph name, "
                             "not to a Graph already built")
        return graph, weights
    if graph.strip().lower() == "matrix":
        if not isinstance(weights, (str, Path)) or str(weights).strip().lower() in (
                "uniform", "metropolis", "lazy", "best-constant"):
            raise InputError("the graph 'matrix' takes its edges from a matrix file; give weights=FILE")
        given = [k for k, v in options.items() if v is not None]
        if given:
            raise InputError(f"the graph 'matrix' takes no {given[0]}; its edges are W's nonzero weights")
        mixing = load_matrix(weights)
        if p is not None and p != mixing.p:
            raise InputError(f"p={p} does not match the matrix, which has {mixing.p} rows")
        return mixing.graph, mixing
    resolve_graph(graph)
    return generate(graph, p, **options), weights


def consensus(
    graph: str | Graph,
    p: int | None = None,
    *,
    weights: str | Path | Mixing = "uniform",
    degree: int | None = None,
    rows: int | None = None,
    prob: Any = None,
    seed: int | None = None,
    edges: str | Path | None = None,
    init: str | Sequence[object] | None = None,
    rounds: int | None = None,
    target: object = Fraction(1, 100),
) -> ConsensusRun:
    """Mix on a graph: ρ, the spectral gap, the rounds to shrink disagreement by *target*, a trajectory.

    Parameters
    ----------
    graph : str or Graph
        A generator name (``ring``, ``k-ring``, ``torus``, ``hypercube``, ``complete``, ``star``,
        ``exponential``, ``random-regular``, ``erdos-renyi``, ``edges``), ``matrix`` (the
        graph of a matrix file's nonzero weights), or a built :class:`Graph`.
    p : int, optional
        Number of workers (from the file for ``edges`` and ``matrix``).
    weights : str, Path or Mixing
        ``uniform`` (default), ``metropolis``, ``lazy``, ``best-constant``, or a matrix file.
    degree, rows, prob, seed, edges
        The generator's options (see :func:`costmodel.consensus.graphs.generate`).
    init : str or sequence, optional
        Initial values, one per worker (``"0,3,6,9"``); default 0, 1, …, p − 1.
    rounds : int, optional
        Rounds to simulate; default the rounds to the target, at most 20 (10 if never), and none for
        more than :data:`VALUES_MAX_P` workers without *init*.
    target : number or str
        The factor ε by which the disagreement must shrink (default 0.01, i.e. 100×).

    Returns
    -------
    ConsensusRun

    Raises
    ------
    InputError, UnknownNameError, ParseError
        For a bad graph, option, weight scheme, file, initial vector or target.

    Examples
    --------
    >>> run = consensus("ring", 4, init="0,3,6,9", rounds=3)
    >>> [round(r.disagreement, 3) for r in run.trajectory]
    [6.708, 2.236, 0.745, 0.248]
    """
    options = {"degree": degree, "rows": rows, "prob": prob, "seed": seed, "edges": edges}
    built, weights = _build_graph(graph, p, weights, options)
    if p is not None and built.p != p:
        raise InputError(f"p={p} does not match the {built.label}, which has {built.p} workers")
    mixing = mixing_matrix(built, weights)
    spec = spectrum(mixing)
    reach = rounds_to_target(spec, parse_target(target))
    given = init is not None
    values = _initial(init, built.p)
    weights_count = _weight_count(built)
    notes = [*built.notes, *mixing.notes, *spec.notes, *reach.notes]
    if weights_count > MAX_SIMULATED_WEIGHTS:
        if rounds:
            raise InputError(f"rounds={rounds}: simulating the {built.label} means {weights_count:,} "
                             f"weights, more than {MAX_SIMULATED_WEIGHTS:,}; give rounds=0 (ρ and the "
                             "round count need no simulation) or fewer workers")
        if rounds is None:
            notes.append(f"no trajectory: W has {weights_count:,} nonzero weights, too many to simulate")
        rounds = 0
    if rounds is None and not given and built.p > VALUES_MAX_P:
        notes.append(f"no trajectory for p > {VALUES_MAX_P} workers unless asked: give rounds=R (or an "
                     "initial vector)")
        return ConsensusRun(graph=built, mixing=mixing, spectrum=spec, rounds=reach, trajectory=(),
                            init_default=True, notes=tuple(dict.fromkeys(notes)))
    if rounds is None:
        rounds = min(reach.rounds, DEFAULT_ROUNDS_CAP) if reach.rounds is not None else 10
    keep = given or built.p <= VALUES_MAX_P
    if keep and built.p * (rounds + 1) > MAX_KEPT_VALUES:
        keep = False
        notes.append(f"values omitted: {built.p:,} workers × {rounds + 1:,} rounds are more than "
                     f"{MAX_KEPT_VALUES:,} values; the disagreement is shown every round")
    trajectory = simulate(mixing, values, rounds=rounds, keep_values=keep)
    notes += _float_note(mixing, values, trajectory, exact_init=not given or _exact_values(values))
    if not keep and not given and built.p > VALUES_MAX_P:
        notes.append(f"values omitted for p > {VALUES_MAX_P} (give an initial vector to keep them); "
                     "the disagreement is shown every round")
    if trajectory and trajectory[0].disagreement == 0:
        notes.append("the initial values already agree: there is no disagreement to shrink")
    return ConsensusRun(graph=built, mixing=mixing, spectrum=spec, rounds=reach, trajectory=trajectory,
                        init_default=not given, notes=tuple(dict.fromkeys(notes)))


def _exact_values(values: Sequence[Number]) -> bool:
    return all(isinstance(v, Fraction) or is_whole(v) for v in values)


def _float_note(mixing: Mixing, init: Sequence[Number], trajectory: Sequence[ConsensusRound], *,
                exact_init: bool) -> list[str]:
    """Why rounds of an exact W and an exact start (*exact_init*) are shown in floating point, if any are."""
    if not mixing.exact or not exact_init:
        return []
    floats = next((q.round for q in trajectory if not isinstance(q.mean, Fraction)), None)
    if floats is None:
        return []
    if floats == 0:
        return [f"values shown as floats: exact simulation stops at p > {EXACT_MAX_P} workers"]
    weights = sum(len(row) for row in mixing.rows())
    why = (f"the exact rounds would take more than {EXACT_MAX_WORK:,} multiplications (weights × rounds)"
           if floats * weights > EXACT_MAX_WORK else
           f"exact values would need more than {EXACT_MAX_DIGITS} digits")
    return [f"values shown as floats from round {floats} on: {why}"]


_ROUNDED_SUM = Fraction(1, 10**12)  # weights written as rounded decimals (1/3 as 0.3333333333333333)


def _initial(init: str | Sequence[object] | None, p: int) -> Sequence[Number]:
    if init is None:
        return range(p)
    values = parse_numbers(init, what="initial values", example="0,3,6,9")
    if len(values) != p:
        raise InputError(f"{len(values)} initial values given for p={p} workers; give one per worker "
                         "(or leave init out for 0, 1, …, p − 1)")
    return values


# -- one D-SGD step ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DSGDStep:
    """One decentralised SGD update of one worker: mix, then step along the old gradient."""

    value: Number
    neighbours: tuple[Number, ...]
    weights: tuple[Number, ...]
    grad: Number
    lr: Number
    mixed: Number
    next: Number
    without_mixing: Number
    weights_default: bool
    notes: tuple[str, ...] = ()
    source: Cited = _STEP_SOURCE

    def to_dict(self) -> dict[str, object]:
        exact = all(isinstance(v, Fraction) for v in (self.mixed, self.next, self.without_mixing))
        return {
            "value": real(self.value),
            "neighbours": [real(v) for v in self.neighbours],
            "weights": [real(w) for w in self.weights],
            "weights_exact": [format_exact(w) for w in self.weights] if exact else None,
            "weights_default": self.weights_default,
            "grad": real(self.grad),
            "lr": real(self.lr),
            "mixed": real(self.mixed),
            "next": real(self.next),
            "without_mixing": real(self.without_mixing),
            "exact": exact,
            "formula": "next = Σ_j w_j·x_j − lr·grad, the gradient taken at the worker's own model x_i",
            "notes": list(self.notes),
            "source": self.source.to_dict(),
            "algorithm_source": LIAN_2017.at("algorithm 1, D-PSGD").to_dict(),
        }


def dsgd_step(
    value: object,
    neighbours: str | Sequence[object],
    *,
    grad: object,
    lr: object,
    weights: str | Sequence[object] | None = None,
) -> DSGDStep:
    """One D-SGD update: mixed = Σ w·values over the closed neighbourhood, next = mixed − lr × grad.

    Parameters
    ----------
    value : number
        The worker's own model (a scalar).
    neighbours : sequence of numbers, or ``"3,12"``
        Its neighbours' models.
    grad : number
        The gradient at the worker's own model, before mixing.
    lr : number
        Learning rate, ≥ 0.
    weights : sequence or str, optional
        Mixing weights, the worker's own first; they must sum to 1.  Default: equal,
        1/(k + 1) for k neighbours.

    Raises
    ------
    InputError
        When the weights do not match the values, or do not sum to one; when lr < 0.

    Examples
    --------
    >>> s = dsgd_step(6, "3,12", grad=2, lr="0.5")
    >>> s.mixed, s.next, s.without_mixing
    (Fraction(7, 1), Fraction(6, 1), Fraction(5, 1))
    >>> dsgd_step(6, "3,12", grad=2, lr="0.5", weights="0.5,0.25,0.25").mixed
    Fraction(27, 4)
    """
    own = parse_number(value, what="value")
    others = () if not isinstance(neighbours, str) and len(neighbours) == 0 else parse_numbers(
        neighbours, what="neighbour values", example="3,12")  # a worker may have no neighbours
    g = parse_number(grad, what="gradient")
    rate = parse_number(lr, what="learning rate")
    if rate < 0:
        raise InputError(f"lr={format_exact(rate, decimal=True)} is negative; a learning rate is ≥ 0")
    count = len(others) + 1
    notes: list[str] = []
    if weights is None:
        w: tuple[Number, ...] = (Fraction(1, count),) * count
    else:
        w = parse_numbers(weights, what="weights", example="0.5,0.25,0.25")
        if len(w) != count:
            raise InputError(f"{len(w)} weights given for {count} values (the worker's own first, then "
                             f"{len(others)} neighbours); give one weight per value")
        off = abs(sum(w, Fraction(0)) - 1)
        if off > _ROUNDED_SUM:
            shown = ", ".join(format_exact(x, decimal=True) for x in w)
            total = format_exact(sum(w, Fraction(0)), decimal=True)
            raise InputError(f"weights {shown} sum to {total}, not 1; mixing is a weighted average, so make "
                             f"them sum to 1 (e.g. {','.join(['1/' + str(count)] * count)})")
        if off:
            notes.append(f"the weights sum to 1 only within {float(off):.2g} (rounded decimals)")
        if any(x < 0 for x in w):
            notes.append("some weights are negative: the mixed value is not between the values mixed")
    values = (own, *others)
    mixed = sum((a * b for a, b in zip(w, values, strict=True)), Fraction(0))
    if any(isinstance(x, float) for x in (*w, *values)):
        mixed = float(mixed)
    return DSGDStep(value=own, neighbours=others, weights=w, grad=g, lr=rate, mixed=mixed,
                    next=mixed - rate * g, without_mixing=own - rate * g, weights_default=weights is None,
                    notes=tuple(notes))


# -- gossip against a ring all-reduce -------------------------------------------------------------------

GOSSIP_MODEL = ("gossip: each round every worker sends its n-byte model to each of its d out-neighbours, one "
          "message at a time (one-port): d·(α + nβ) per round, plus d·n·γ to add what it receives; "
          "all-reduce: one ring all-reduce of n bytes, 2(p − 1)(α + nβ/p) + (p − 1)nγ/p")


@dataclass(frozen=True, slots=True, kw_only=True)
class GossipComparison:
    """Gossip until the disagreement shrinks by ε, against one ring all-reduce, per worker."""

    run: ConsensusRun
    n_bytes: Fraction
    link: LinkParams
    degree: int
    gossip_round_time_s: Fraction
    gossip_time_s: Fraction | None
    gossip_bytes_per_worker: Fraction | None
    allreduce: Any
    notes: tuple[str, ...] = ()

    @property
    def time_ratio(self) -> Fraction | None:
        """Gossip time over all-reduce time (None when gossip never gets there or all-reduce is free)."""
        if self.gossip_time_s is None or self.allreduce.time_s == 0:
            return None
        return self.gossip_time_s / self.allreduce.time_s

    @property
    def faster(self) -> str:
        if self.gossip_time_s is None or self.gossip_time_s > self.allreduce.time_s:
            return "allreduce"
        return "gossip" if self.gossip_time_s < self.allreduce.time_s else "tie"

    def to_dict(self) -> dict[str, object]:
        run, ar = self.run, self.allreduce
        ratio = self.time_ratio
        bytes_ratio = (None if self.gossip_bytes_per_worker is None or ar.bytes_sent_per_rank == 0
                       else self.gossip_bytes_per_worker / ar.bytes_sent_per_rank)
        return {
            "graph": run.graph.name,
            "label": run.graph.label,
            "p": run.graph.p,
            "n_bytes": real(self.n_bytes),
            **self.link.result_fields(),
            "weights": run.mixing.scheme,
            "rho": real(run.spectrum.rho),
            "rho_exact": None if run.spectrum.rho_exact is None else format_exact(run.spectrum.rho_exact),
            "spectral_gap": real(run.spectrum.spectral_gap),
            "target": real(run.rounds.target),
            "gossip": {
                "rounds": run.rounds.rounds,
                "degree": self.degree,
                "bytes_per_round": real(self.degree * self.n_bytes),
                "round_time_s": real(self.gossip_round_time_s),
                "time_s": None if self.gossip_time_s is None else real(self.gossip_time_s),
                "bytes_sent_per_worker": None if self.gossip_bytes_per_worker is None
                else real(self.gossip_bytes_per_worker),
            },
            "allreduce": {
                "algorithm": ar.algorithm,
                "time_s": real(ar.time_s),
                "rounds": ar.rounds,
                "bytes_sent_per_rank": real(ar.bytes_sent_per_rank),
                "formula": ar.formula,
            },
            "time_ratio": None if ratio is None else real(ratio),
            "bytes_ratio": None if bytes_ratio is None else real(bytes_ratio),
            "faster": self.faster,
            "model": GOSSIP_MODEL,
            "notes": list(self.notes),
        }


def gossip_vs_allreduce(
    graph: str | Graph,
    p: int | None = None,
    *,
    n: str | float | Fraction,
    link: LinkParams,
    target: object = Fraction(1, 100),
    weights: str | Path | Mixing = "uniform",
    degree: int | None = None,
    rows: int | None = None,
    prob: Any = None,
    seed: int | None = None,
    edges: str | Path | None = None,
) -> GossipComparison:
    """Per worker: rounds, bytes and time of gossip to shrink disagreement by *target*, vs a ring all-reduce.

    Notes
    -----
    Gossip, one-port: each round a worker sends its n-byte model to each of its d
    out-neighbours in turn, d·(α + nβ), and adds the d models it receives, d·n·γ; the
    rounds are those of :func:`~costmodel.consensus.spectral.rounds_to_target`.  The
    all-reduce is ``cost("allreduce", "ring", ...)``.  They do not deliver the same thing:
    gossip leaves the workers within ε of agreement (relative to where they started),
    the all-reduce gives every worker the exact mean.

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> link = combine_link(alpha="5us", bandwidth="12.5GB/s")
    >>> c = gossip_vs_allreduce("ring", 4, n="100MB", link=link)
    >>> c.run.rounds.rounds, c.degree, c.gossip_bytes_per_worker, c.allreduce.bytes_sent_per_rank
    (5, 2, Fraction(1000000000, 1), Fraction(150000000, 1))
    """
    from costmodel.collectives.evaluate import cost
    from costmodel.units import parse_size

    size = parse_size(n)
    run = consensus(graph, p, weights=weights, degree=degree, rows=rows, prob=prob, seed=seed, edges=edges,
                    target=target, rounds=0)
    d = max(run.graph.out_degrees())
    round_time = d * (link.alpha_s + size * link.beta_s_per_byte) + d * size * link.gamma_s_per_byte
    r = run.rounds.rounds
    allreduce = cost("allreduce", "ring", p=run.graph.p, n=size, link=link)
    notes = [*(x for x in run.notes if "values omitted" not in x),
             "gossip leaves the workers within the target of agreement; the all-reduce gives every worker "
             "the exact mean"]
    if r is None:
        notes.append("gossip never reaches the target on this graph and weights; the all-reduce does in one "
                     "collective")
    return GossipComparison(run=run, n_bytes=size, link=link, degree=d, gossip_round_time_s=round_time,
                            gossip_time_s=None if r is None else r * round_time,
                            gossip_bytes_per_worker=None if r is None else r * d * size,
                            allreduce=allreduce, notes=tuple(notes))


def _exact_sqrt(q: Fraction) -> str:
    """√q in simplest radical form: ``3√5`` for 45, ``√5/3`` for 5/9, ``2`` for 4.

    >>> [_exact_sqrt(Fraction(q)) for q in ("45", "5/9", "4", "1/2")]
    ['3√5', '√5/3', '2', '√2/2']
    """
    if q < 0:
        raise ValueError(f"{q} is negative")
    # √(a/b) = √(a·b)/b
    radicand, den = q.numerator * q.denominator, q.denominator
    outside, inside = _split_square(radicand)
    g = math.gcd(outside, den)
    outside, den = outside // g, den // g
    head = str(outside) if inside == 1 else ("" if outside == 1 else str(outside)) + f"√{inside}"
    return head if den == 1 else f"{head}/{den}"


def _split_square(n: int) -> tuple[int, int]:
    """n = outside² · inside with inside square-free (trial division; n is small in practice)."""
    if n == 0:
        return 0, 1
    root = math.isqrt(n)
    if root * root == n:
        return root, 1
    outside, inside, f = 1, n, 2
    while f * f <= inside and f < 10**6:
        while inside % (f * f) == 0:
            inside //= f * f
            outside *= f
        f += 1
    return outside, inside
