"""Worked examples on decentralised SGD and consensus: one D-SGD update, mixing rounds, gossip.

The numbers come from ``costmodel.consensus`` (:func:`~costmodel.consensus.dsgd_step`,
:func:`~costmodel.consensus.consensus`, :func:`~costmodel.consensus.gossip_vs_allreduce`) and,
for the all-reduce it is compared with, from the ring record of the formula registry.  Sources:
Lian et al. 2017 (D-PSGD); Koloskova et al. 2020 (gossip against all-reduce); Xiao & Boyd 2004
(ρ and the rounds to agreement).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel.consensus import consensus, dsgd_step, gossip_vs_allreduce
from costmodel.consensus.graphs import resolve_graph
from costmodel.errors import InputError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, NAME, NUMBER, NUMBERS, RATE, SIZE, TIME, show_exact
from costmodel.examples.work import Given, Work
from costmodel.params import LinkParams

GRAPH = Given("graph", "communication graph", NAME, "ring")
P = Given("p", "workers", COUNT, 4, "p")
INIT = Given("init", "initial values, worker 1 first", NUMBERS, "0,3,6,9", "x⁰")
TARGET = Given("target", "factor the disagreement must shrink by", NUMBER, "0.01", "ε")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _weights(text: str, count: int) -> tuple[Fraction, ...] | None:
    """``equal`` → None (1/(k + 1) each); otherwise comma-separated weights, the worker's own first."""
    if text.strip().lower() in ("equal", "uniform"):
        return None
    weights = NUMBERS.parse(text)
    if len(weights) != count:
        raise InputError(f"weights: {len(weights)} given for {count} values (the worker's own first); "
                         "give one per value, or 'equal'")
    return weights


def _graph(name: str) -> str:
    """The canonical graph name (aliases and any spelling accepted; unknown names refused)."""
    return resolve_graph(name).name


# -- one D-SGD update ------------------------------------------------------------------------------


@example("dsgd-update", title="One decentralised SGD update: mix, then step",
         source="Lian et al. 2017 (D-PSGD, Algorithm 1: mix with the neighbours, then step)",
         topic="dsgd",
         givens=[Given("value", "the worker's own value", NUMBER, 6, "x_k"),
                 Given("neighbours", "its neighbours' values", NUMBERS, "3,12", "x_j"),
                 Given("weights", "mixing weights, own first ('equal' for 1/(k + 1) each)", NAME, "equal",
                       "w"),
                 Given("grad", "gradient at the worker's own value", NUMBER, 2, "g"),
                 Given("lr", "learning rate", NUMBER, "0.5", "η")],
         answer="next", slips=("unweighted-mean",))
def dsgd_update(w: Work) -> None:
    """x_k ← Σ_j w_kj·x_j − η·g_k, the sum over the closed neighbourhood, g_k taken at the old x_k.

    Source: Lian et al. 2017, algorithm 1 (D-PSGD).
    """
    value, neighbours, grad, lr = w.values("value", "neighbours", "grad", "lr")
    weights = _weights(w["weights"], len(neighbours) + 1)
    if w.slipped("unweighted-mean"):
        weights = None  # the plain mean of the neighbourhood, whatever the weights say
    step = dsgd_step(value, neighbours, grad=grad, lr=lr, weights=weights)
    values = (step.value, *step.neighbours)
    w.step("Weights, the worker's own first", "", step.weights, NUMBERS)
    terms = " + ".join(f"{show_exact(a)}·{show_exact(b)}" for a, b in zip(step.weights, values, strict=True))
    mixed = w.answer("mixed", "mixed value", step.mixed, NUMBER, f"Σ w_j·x_j = {terms}")
    w.answer("next", "value after the update", step.next, NUMBER,
             f"mixed − η·g = {show_exact(mixed)} − {show_exact(lr)} × {show_exact(grad)}")
    w.answer("without-mixing", "value after a purely local step", step.without_mixing, NUMBER,
             f"x_k − η·g = {show_exact(value)} − {show_exact(lr)} × {show_exact(grad)}")


# -- consensus on a graph --------------------------------------------------------------------------


@example("consensus-ring", title="Consensus: repeated neighbour averaging on a ring",
         source="Xiao & Boyd 2004 (average consensus x(t + 1) = W x(t); disagreement shrinks by ρ)",
         topic="consensus",
         givens=[GRAPH, P, INIT, Given("rounds", "rounds to simulate", COUNT, 2, "r"), TARGET],
         answer="rounds-to-target")
def consensus_ring(w: Work) -> None:
    """x ← A·x with equal weights over each closed neighbourhood; ‖x − x̄‖ shrinks by at least ρ a
    round, so ⌈ln(1/ε) / ln(1/ρ)⌉ rounds shrink it by ε.

    Source: Xiao & Boyd 2004 (ρ and the convergence of x ← Wx).
    """
    graph, p, init, rounds, target = w.values("graph", "p", "init", "rounds", "target")
    if len(init) != p:
        raise InputError(f"init: {len(init)} values for p = {p} workers; give one per worker")
    run = consensus(_graph(graph), p, init=init, rounds=rounds, target=target)
    w.step("Mixing weights", run.weights_text, None)
    mean0 = run.trajectory[0].mean
    w.step("Initial mean", "x̄ = Σx/p", mean0, NUMBER)
    for r in run.trajectory:
        if r.round:
            w.step(f"Values after round {r.round}", "x ← A·x, all workers at once", r.values, NUMBERS)
        if r.disagreement_squared is not None:
            w.step(f"Squared disagreement after round {r.round}", "Σ(x − x̄)²", r.disagreement_squared, NUMBER)
        w.answer(f"disagreement-{r.round}", f"disagreement after round {r.round}", r.disagreement,
                 NUMBER, f"‖x − x̄‖ = {r.disagreement_exact}" if r.disagreement_exact else "‖x − x̄‖")
    if rounds >= 1:
        for i, v in enumerate(run.trajectory[1].values or (), 1):
            w.answer(f"next-{i}", f"worker {i}'s value after one round", v, NUMBER)
    stochastic = run.mixing.doubly_stochastic
    w.answer("doubly-stochastic", "whether the columns sum to one as well as the rows", _yes(stochastic),
             NAME)
    last = run.trajectory[-1].mean
    w.answer("mean", f"mean after round {run.trajectory[-1].round}", last, NUMBER)
    w.answer("mean-preserved", "whether mixing kept the mean", _yes(last == mean0), NAME)
    spec = run.spectrum
    rho = spec.rho_exact if spec.rho_exact is not None else spec.rho
    w.answer("rho", "the convergence factor ρ (largest non-consensus |λ|)", rho, NUMBER)
    _rounds(w, rho, target, run.rounds.rounds)


def _rounds(w: Work, rho: Any, target: Any, rounds: int | None) -> None:
    if rounds is None:
        raise InputError("ρ ≥ 1 here: mixing never shrinks the disagreement; choose a connected graph")
    if rho:
        ratio = math.log(1 / float(target)) / math.log(1 / float(rho))
        shown = f"ln{_argument(1 / target)} / ln{_argument(1 / rho)}"
        w.step("Rounds, unrounded", f"ln(1/ε) / ln(1/ρ) = {shown}", ratio, NUMBER)
    w.answer("rounds-to-target", "rounds to shrink the disagreement by ε", rounds, COUNT,
             "⌈ln(1/ε) / ln(1/ρ)⌉" if rho else "ρ = 0: one round gives exact agreement")


@example("consensus-rounds", title="Rounds to agreement on a graph, from its spectral gap",
         source="Xiao & Boyd 2004 (rounds from the spectral radius ρ)",
         topic="consensus",
         givens=[GRAPH, P, TARGET], answer="rounds-to-target")
def consensus_rounds(w: Work) -> None:
    """ρ of the equal-weight mixing matrix, the gap 1 − ρ, the rounds ⌈ln(1/ε)/ln(1/ρ)⌉, and the
    neighbours each worker sends to per round.

    Source: Xiao & Boyd 2004; closed forms for circulant graphs (Gray 2006); the exponential graph
    (Ying et al. 2021).
    """
    graph, p, target = w.values("graph", "p", "target")
    run = consensus(_graph(graph), p, rounds=0, target=target)
    w.step("Graph", run.graph.label, None)
    w.answer("degree", "neighbours each worker sends to per round", max(run.graph.out_degrees()), COUNT)
    spec = run.spectrum
    exact = spec.rho_exact is not None
    rho = spec.rho_exact if exact else spec.rho
    if not w.quiet:
        _eigenvalue_steps(w, run.graph)
    w.answer("rho", "the convergence factor ρ (largest non-consensus |λ|)", rho, NUMBER,
             "the largest |λ| of W other than the consensus eigenvalue λ = 1")
    w.answer("gap", "spectral gap", spec.spectral_gap_exact if exact else spec.spectral_gap, NUMBER, "1 − ρ")
    _rounds(w, rho, target, run.rounds.rounds)


def _eigenvalue_steps(w: Work, graph: Any) -> None:
    """The mixing matrix W of uniform weights and its eigenvalues, from which ρ is read.

    Eigenvalues of the (small, p ≤ a few hundred) matrix computed numerically; shown to four
    figures, each distinct value once with its multiplicity.  Source: Xiao & Boyd 2004 (ρ is the
    largest non-consensus |λ| of W).
    """
    import numpy as np

    from costmodel.consensus.mixing import mixing_matrix

    degree = max(graph.degrees())
    w.step("Mixing matrix W: each worker weights itself and each of its d neighbours equally",
           f"1/(d + 1) at d = {degree}", Fraction(1, degree + 1), NUMBER)
    dense = np.zeros((graph.p, graph.p))
    for i, row in enumerate(mixing_matrix(graph).rows()):
        for j, weight in row:
            dense[i, j] = float(weight)
    values = np.linalg.eigvals(dense)
    shown: dict[str, int] = {}
    for value in sorted(values, key=lambda v: (-round(abs(v), 9), -round(v.real, 9))):
        text = _eigenvalue(value)
        shown[text] = shown.get(text, 0) + 1
    listed = [f"{t} (×{k})" if k > 1 else t for t, k in shown.items()]
    more = len(listed) > _EIGENVALUES_SHOWN
    w.step("Eigenvalues λ of W (the roots of det(W − λI)), largest |λ| first", "",
           ", ".join(listed[:_EIGENVALUES_SHOWN]) + (", …" if more else ""))


_EIGENVALUES_SHOWN = 6


def _argument(x: Any) -> str:
    """*x* as the argument of ln: in parentheses when it is a fraction (ln(5/3), not ln 5/3)."""
    text = show_exact(x)
    return f"({text})" if "/" in text else f" {text}"


def _eigenvalue(value: complex) -> str:
    real, imag = float(value.real), float(value.imag)
    if abs(imag) < 1e-9:
        return f"{0.0 if abs(real) < 1e-12 else real:.4g}".replace("-", "−")
    return f"{real:.4g} {'+' if imag > 0 else '−'} {abs(imag):.4g}i".replace("-", "−")


# -- gossip against all-reduce ---------------------------------------------------------------------


@example("gossip-vs-allreduce", title="Gossip to agreement against one ring all-reduce",
         source="Lian et al. 2017; Koloskova et al. 2020 (gossip rounds against one all-reduce)",
         topic="consensus",
         givens=[GRAPH, P, Given("n", "model size", SIZE, "100 MB", "n"),
                 Given("alpha", "start-up latency", TIME, "0 s", "α"),
                 Given("bandwidth", "link bandwidth", RATE, "12.5 GB/s", "1/β"), TARGET],
         answer="faster", slips=("alpha-only", "beta-only", "own-chunk"))
def gossip_against_allreduce(w: Work) -> None:
    """Gossip: each round a worker sends its n-byte model to each of d neighbours, d·(α + nβ), for
    the rounds to shrink disagreement by ε; all-reduce: 2(p − 1)·α + 2(p − 1)/p·n·β, exact mean.

    Source: the ring all-reduce of Patarasuk & Yuan 2009; ρ from Xiao & Boyd 2004.
    """
    graph, p, n, alpha, bandwidth, target = w.values("graph", "p", "n", "alpha", "bandwidth", "target")
    beta = 1 / bandwidth
    degree, rounds = _gossip_rounds(graph, p, target)
    if rounds is None:
        raise InputError("gossip never reaches the target on this graph; choose a connected graph")
    a, b = w.link(alpha, beta)
    d = w.answer("degree", "neighbours each worker sends to per round", degree, COUNT)
    w.answer("gossip-rounds", "gossip rounds to the target", rounds, COUNT, "⌈ln(1/ε) / ln(1/ρ)⌉")
    w.answer("gossip-round-bytes", "bytes a worker sends per gossip round", d * n, SIZE, f"d·n = {d} × n")
    w.answer("gossip-bytes", "bytes a worker sends over all gossip rounds", rounds * d * n, SIZE,
             f"{rounds} × {d} × {SIZE.term(n)}")
    round_time = w.step("Time of one gossip round", "d·(α + n·β)", d * (a + n * b), TIME)
    gossip = w.answer("gossip-time", "time of the gossip rounds", rounds * round_time, TIME,
                      f"{rounds} × {TIME.term(round_time)}")
    ar = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, show=False)
    phase = p if w.slipped("own-chunk") else p - 1  # the own chunk sent as well: p steps a phase
    w.answer("allreduce-rounds", "steps of the ring all-reduce", 2 * phase, COUNT, "2(p − 1)")
    w.answer("allreduce-bytes", "bytes a worker sends in the ring all-reduce", 2 * phase * Fraction(n) / p,
             SIZE, f"2(p − 1)/p·n = 2·{p - 1}/{p}·{SIZE.term(n)}")
    allreduce = 2 * phase * (a + Fraction(n) / p * b) if w.slipped("own-chunk") else ar.time_s
    w.answer("allreduce-time", "time of the ring all-reduce", allreduce, TIME, "2(p − 1)·α + 2(p − 1)/p·n·β")
    if w.checking:
        c = gossip_vs_allreduce(_graph(graph), p, n=n, link=LinkParams(alpha_s=alpha, beta_s_per_byte=beta),
                                target=target)
        w.check("degree, rounds and times", (degree, rounds, gossip, allreduce),
                (c.degree, c.run.rounds.rounds, c.gossip_time_s, c.allreduce.time_s))
    if allreduce:
        w.answer("time-ratio", "gossip time over all-reduce time", gossip / allreduce, NUMBER)
    faster = "gossip" if gossip < allreduce else "allreduce" if allreduce < gossip else "tie"
    w.answer("faster", "which finishes first (gossip, allreduce or tie)", faster, NAME)


@lru_cache(maxsize=4096)
def _gossip_rounds(graph: str, p: int, target: Any) -> tuple[int, int | None]:
    """(neighbours per worker, rounds to shrink the disagreement by *target*): depends on neither
    n nor the link, so the variants and slips that share the graph share it."""
    free = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1))
    c = gossip_vs_allreduce(_graph(graph), p, n=1, link=free, target=target)
    return c.degree, c.run.rounds.rounds


@example("gossip-one-round", title="One gossip round against one all-reduce: identical models?",
         source="Lian et al. 2017; Koloskova et al. 2020 (models agree only gradually)",
         topic="consensus",
         givens=[GRAPH, P, INIT], answer="gossip-identical")
def gossip_one_round(w: Work) -> None:
    """One round of equal-weight neighbour averaging against an averaging all-reduce (sum, then
    divide by p), from the same values: are all the workers' models then the same?

    Source: Koloskova et al. 2020 (models agree only gradually); Xiao & Boyd 2004.
    """
    graph, p, init = w.values("graph", "p", "init")
    if len(init) != p:
        raise InputError(f"init: {len(init)} values for p = {p} workers; give one per worker")
    run = consensus(_graph(graph), p, init=init, rounds=1)
    after = run.trajectory[1]
    values = after.values or ()
    w.step("Mixing weights", run.weights_text, None)
    w.step("Gossip: values after one round", "each worker averages its closed neighbourhood", values,
           NUMBERS)
    for i, v in enumerate(values, 1):
        w.answer(f"next-{i}", f"worker {i}'s value after one gossip round", v, NUMBER)
    w.answer("gossip-disagreement", "disagreement after one gossip round", after.disagreement, NUMBER,
             f"‖x − x̄‖ = {after.disagreement_exact}" if after.disagreement_exact else "‖x − x̄‖")
    w.answer("gossip-identical", "whether one gossip round leaves identical models (yes or no)",
             _yes(len(set(values)) == 1), NAME)
    total = sum(init, Fraction(0))
    w.step("All-reduce (sum): every worker receives", "Σ x", total, NUMBER)
    results = tuple(total / p for _ in range(p))  # each worker divides the same sum by p
    w.answer("allreduce-value", "each worker's value after the averaging all-reduce", results[0], NUMBER,
             f"Σx/p = {show_exact(total)}/{p}")
    w.answer("allreduce-identical", "whether the all-reduce leaves identical models (yes or no)",
             _yes(len(set(results)) == 1), NAME)
