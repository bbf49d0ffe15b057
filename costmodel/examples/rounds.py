"""Worked examples on rounds: federated rounds with stragglers, and gossip rounds from the spectral gap.

* A federated round waits for an order statistic of the sampled clients' times, not for their mean;
  a deadline drops the clients whose download, compute and upload do not fit in it.  The numbers
  come from :func:`costmodel.training.federated_round` (exact order statistics: Arnold et al. 2008).
* Gossip shrinks the disagreement by ρ a round, ρ the largest magnitude of the mixing matrix's
  non-consensus eigenvalues; the numbers come from :func:`costmodel.consensus.consensus`, the
  Laplacian's extreme eigenvalues (:func:`costmodel.consensus.laplacian.laplacian_extremes`) and
  :func:`costmodel.consensus.spectral.rounds_to_target` (Xiao & Boyd 2004).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel.consensus import consensus
from costmodel.consensus.citations import XIAO_2004
from costmodel.consensus.graphs import generate, resolve_graph, ring
from costmodel.consensus.laplacian import laplacian_extremes
from costmodel.consensus.mixing import from_matrix
from costmodel.consensus.spectral import Spectrum, rounds_to_target
from costmodel.errors import InputError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, NAME, NUMBER, NUMBERS, RATE, SIZE, TIME, show_exact
from costmodel.examples.work import Given, Work
from costmodel.params import LinkParams
from costmodel.training.federated_pricing import expected_order_statistic, federated_round, parse_client_times

_MILLION = 10**6

PARAMS = Given("params", "fp32 model parameters, in millions", NUMBER, "5", "P")
DOWNLINK = Given("downlink", "server-to-client bandwidth", RATE, "10 MB/s", "B_down")
UPLINK = Given("uplink", "client-to-server bandwidth", RATE, "2 MB/s", "B_up")
SAMPLED = Given("sampled", "clients sampled per round", COUNT, 10, "m")


def _link(rate: Fraction) -> LinkParams:
    """A link of *rate* bytes a second and no start-up."""
    return LinkParams(alpha_s=Fraction(0), beta_s_per_byte=1 / Fraction(rate))


def _params(params: Fraction) -> int:
    n = Fraction(params) * _MILLION
    if n.denominator != 1 or n < 1:
        raise InputError(f"params = {show_exact(params)} does not give a whole positive count")
    return n.numerator


def _seconds(x: Fraction) -> str:
    """*x* seconds as federated_round reads a time: a terminating decimal, else the float."""
    text = show_exact(x, digits=12)
    return f"{text}s" if isinstance(x, Fraction) and "/" not in text else f"{float(x)!r}s"


def _links(w: Work, r: Any, params: Fraction) -> None:
    w.step("Bytes each way per client", f"M = P × 4 B = {show_exact(params)}e6 × 4 B", r.download_bytes, SIZE)
    w.answer("download", "download time of the model", r.download_s, TIME, "M / B_down")
    w.answer("upload", "upload time of the update", r.upload_s, TIME, "M / B_up")


def _times(shape: str, a: Fraction, b: Fraction) -> str:
    """The client-time distribution as federated_round reads it."""
    key = shape.strip().lower()
    if key in ("exp", "exponential"):
        return f"exp:{_seconds(a)},{_seconds(b)}"
    if key == "uniform":
        if not a < b:
            raise InputError(f"the low end a = {show_exact(a)} s must be below the high end "
                             f"b = {show_exact(b)} s")
        return f"uniform:{_seconds(a)},{_seconds(b)}"
    raise InputError(f"shape={shape!r} is not a distribution here; give exp or uniform")


def _expected_round(w: Work, *, shape: str, m: int, k: int, how: str) -> None:
    """down + E[X_(K)] + up over m sampled clients (the mean client under ``mean-for-max``)."""
    params, a, b, down, up = w.values("params", "a", "b", "downlink", "uplink")
    times = _times(shape, a, b)
    r = federated_round("fedavg", params=_params(params), client_times=times, sampled=m,
                        fastest=None if k == m else k, uplink=_link(up), downlink=_link(down), draws=100)
    _links(w, r, params)
    dist = parse_client_times(times)
    w.step("Client compute times", dist.describe())
    if w.slipped("mean-for-max"):
        compute, _ = expected_order_statistic(dist, 1, 1)  # one client's expected time: the mean
        w.answer("compute", "expected compute time the round waits for", compute, TIME,
                 "E[X], the mean client")
    else:
        compute = r.expected_round_time_s - r.download_s - r.upload_s
        w.answer("compute", "expected compute time the round waits for", compute, TIME, how)
        mean, _ = expected_order_statistic(dist, 1, 1)
        w.step("The mean client, for comparison", "E[X]", mean, TIME)
    w.answer("round", "expected round time", r.download_s + compute + r.upload_s, TIME,
             "down + E[X_(K)] + up")


@example("fl-expected-max", title="A federated round waits for its slowest sampled client",
         source="McMahan et al. 2017 (FedAvg); Arnold et al. 2008 (the expected maximum)",
         topic="federated-round",
         givens=[PARAMS, Given("shape", "distribution of the client times (exp or uniform)", NAME, "exp"),
                 Given("a", "shift (exp) or low end (uniform) of the times", TIME, "1 s", "a"),
                 Given("b", "mean of the exponential part (exp) or high end (uniform)", TIME, "2 s", "b"),
                 SAMPLED, DOWNLINK, UPLINK],
         answer="round", slips=("mean-for-max",))
def fl_expected_max(w: Work) -> None:
    """E[max of m i.i.d. times]: a + b·H_m for a shifted exponential (H_m = 1 + 1/2 + … + 1/m), a + (b − a)·
    m/(m + 1) for a uniform; the round adds the download and the upload.

    Source: McMahan et al. 2017, Algorithm 1; Arnold et al. 2008, sections 2.5 and 4.6;
    ``costmodel.training.federated_pricing.federated_round`` and ``expected_order_statistic``.
    """
    shape, m = w.values("shape", "sampled")
    how = ("a + b·(1 + 1/2 + … + 1/m)" if shape.strip().lower().startswith("exp")
           else "a + (b − a)·m/(m + 1)")
    _expected_round(w, shape=shape, m=m, k=m, how=f"E[X_(m)] = {how}")


@example("fl-expected-kth", title="A federated round that closes at the K-th of m sampled clients",
         source="McMahan et al. 2017 (FedAvg); Arnold et al. 2008 (uniform order statistics)",
         topic="federated-round",
         givens=[PARAMS, Given("a", "least compute time of a client", TIME, "2 s", "a"),
                 Given("b", "largest compute time of a client", TIME, "12 s", "b"),
                 SAMPLED, Given("fastest", "clients the server waits for", COUNT, 8, "K"), DOWNLINK, UPLINK],
         answer="round", slips=("mean-for-max",))
def fl_expected_kth(w: Work) -> None:
    """Times uniform on [a, b]: the K-th smallest of m has expectation a + (b − a)·K/(m + 1).

    Source: Arnold et al. 2008, section 2.5 (uniform order statistics); McMahan et al. 2017;
    ``costmodel.training.federated_pricing.federated_round``.
    """
    m, k = w.values("sampled", "fastest")
    if not 1 <= k <= m:
        raise InputError(f"fastest={k} is outside 1 to sampled={m}")
    _expected_round(w, shape="uniform", m=m, k=k, how="E[X_(K)] = a + (b − a)·K/(m + 1)")


@example("fl-deadline", title="A federated round with a deadline: who makes it?",
         source="McMahan et al. 2017 (FedAvg); Bonawitz et al. 2019 (rounds with a reporting deadline)",
         topic="federated-round",
         givens=[PARAMS, Given("times", "compute time of each client, in seconds", NUMBERS, "4,9,6,20,7,15",
                               "X_k"),
                 Given("deadline", "the round's deadline", TIME, "20 s", "D"), DOWNLINK, UPLINK],
         answer="participants", slips=("deadline-without-links",))
def fl_deadline(w: Work) -> None:
    """Client k is done after down + X_k + up; FedAvg keeps those done by D and drops the rest; the round
    ends at D, or when the last client is done if all are done before D.

    Source: McMahan et al. 2017, Algorithm 1; the deadline rule of
    ``costmodel.training.federated_pricing.federated_round`` (stragglers dropped).
    """
    params, times, deadline, down, up = w.values("params", "times", "deadline", "downlink", "uplink")
    if not times or any(t <= 0 for t in times):
        raise InputError("times: every time must be above 0 s")
    listed = ",".join(_seconds(Fraction(t)) for t in times)
    kwargs = {"params": _params(params), "client_times": listed, "uplink": _link(up), "downlink": _link(down),
              "draws": 100}
    r = federated_round("fedavg", deadline=deadline, **kwargs)
    _links(w, r, params)
    links = r.download_s + r.upload_s
    room = w.step("Compute time that fits", f"D − down − up = {TIME.term(deadline)} − {TIME.term(links)}",
                  deadline - links, TIME)
    counted = r
    if w.slipped("deadline-without-links"):  # each client's compute time compared with D itself
        counted = federated_round("fedavg", deadline=deadline + links, **kwargs)
    done = int(counted.expected_participants)
    w.answer("participants", "clients whose update arrives by the deadline", done, COUNT,
             f"X_k ≤ {TIME.term(room)}")
    w.answer("uploaded", "bytes the server receives in the round", done * counted.upload_bytes, SIZE,
             f"{done} × M")
    w.answer("round", "round time", r.expected_round_time_s, TIME,
             f"min(D, down + max X_k + up) = min({TIME.term(deadline)}, {TIME.term(links + max(times))})")


# -- gossip rounds from the spectral gap ----------------------------------------------------------

TARGET = Given("target", "factor the disagreement must shrink by", NUMBER, "0.01", "ε")


def _value(exact: Fraction | None, value: float) -> Fraction | float:
    return exact if exact is not None else value


def _spectrum(rho: Fraction | float, how: str) -> Spectrum:
    exact = rho if isinstance(rho, Fraction) else None
    return Spectrum(rho=float(rho), spectral_gap=1 - float(rho), rho_exact=exact,
                    spectral_gap_exact=None if exact is None else 1 - exact, method=how,
                    source=XIAO_2004.at("section 2: ρ = max |λ_i(W − 11ᵀ/n)|"))


def _rounds(w: Work, spec: Spectrum, target: Any, name: str, label: str) -> None:
    """The rounds to shrink the disagreement by *target*: ⌈ln(1/ε)/ln(1/ρ)⌉, or the slip's
    ⌈ln(1/ε)/(1 − ρ)⌉ (``gap-for-log``)."""
    if w.slipped("gap-for-log"):
        rounds = math.ceil(math.log(1 / float(target)) / spec.spectral_gap)
        w.answer(name, label, rounds, COUNT, "⌈ln(1/ε)/(1 − ρ)⌉")
        return
    r = rounds_to_target(spec, target)
    if r.rounds is None:
        raise InputError("ρ ≥ 1 here: mixing never shrinks the disagreement; choose other weights")
    w.answer(name, label, r.rounds, COUNT, "⌈ln(1/ε)/ln(1/ρ)⌉")


@lru_cache(maxsize=1024)
def _ring_mixing(p: int, self_weight: Fraction) -> tuple[Any, Any]:
    """(the spectrum of the ring's mixing matrix with this self-weight, the ring's Laplacian extremes)."""
    c = (1 - self_weight) / 2
    rows = [[self_weight if i == j else (c if (i - j) % p in (1, p - 1) else Fraction(0)) for j in range(p)]
            for i in range(p)]
    run = consensus("ring", p, weights=from_matrix(rows, graph=ring(p)), rounds=0)
    return run.spectrum, laplacian_extremes(ring(p))


@example("ring-self-weight", title="Gossip on a ring that keeps a share of its own value",
         source="Xiao & Boyd 2004 (ρ = the largest non-consensus |λ|); Gray 2006 (circulant eigenvalues)",
         topic="consensus",
         givens=[Given("p", "workers", COUNT, 6, "p"), Given("self", "weight a worker gives its own value",
                                                            NUMBER, "0.2", "w₀"), TARGET],
         answer="rho", slips=("second-eigenvalue", "gap-for-log"))
def ring_self_weight(w: Work) -> None:
    """W = w₀I + (1 − w₀)/2·(shift left + shift right) = I − c·L with c = (1 − w₀)/2: its eigenvalues
    are 1 − c·ℓ for the ring's Laplacian eigenvalues ℓ; ρ is the larger of |λ₂| and |λ_min|.

    Source: Xiao & Boyd 2004, section 2; Gray 2006, chapter 3 (the eigenvalues of a circulant);
    ``costmodel.consensus.consensus`` on the matrix (``from_matrix``) and ``laplacian_extremes``.
    """
    p, a, target = w.values("p", "self", "target")
    if p < 3:
        raise InputError(f"p={p}: a ring needs at least 3 workers")
    if not 0 < a < 1:
        raise InputError(f"the self-weight {show_exact(a)} must lie strictly between 0 and 1")
    spec, lap = _ring_mixing(p, a)
    c = w.step("Weight on each neighbour", f"c = (1 − w₀)/2 = (1 − {show_exact(a)})/2", (1 - a) / 2, NUMBER)
    conn = _value(lap.connectivity_exact, lap.connectivity)
    top = _value(lap.largest_exact, lap.largest)
    w.step("Ring Laplacian: smallest nonzero and largest eigenvalues", "2 − 2cos(2π/p), 2 − 2cos(2π⌊p/2⌋/p)",
           f"{show_exact(conn)}, {show_exact(top)}")
    second = w.answer("lambda2", "second-largest eigenvalue λ₂ of W", 1 - c * conn, NUMBER, "1 − c·ℓ_min")
    low = w.answer("lambda-min", "smallest eigenvalue λ_min of W", 1 - c * top, NUMBER, "1 − c·ℓ_max")
    if w.slipped("second-eigenvalue"):
        spec = _spectrum(second, "λ₂ taken for ρ")
    rho = w.answer("rho", "the convergence factor ρ", _value(spec.rho_exact, spec.rho), NUMBER,
                   f"max(|λ₂|, |λ_min|) = max(|{show_exact(second)}|, |{show_exact(low)}|)")
    if w.checking:
        w.check("ρ from the Laplacian", round(float(rho), 9), round(float(max(abs(second), abs(low))), 9))
    w.answer("gap", "spectral gap", 1 - rho, NUMBER, "1 − ρ")
    _rounds(w, spec, target, "rounds-to-target", "rounds to shrink the disagreement by ε")


GRAPHS = ("ring", "torus", "hypercube")


@lru_cache(maxsize=1024)
def _weights_compared(graph: str, p: int) -> tuple[Any, Any, Any]:
    """(Laplacian extremes, the best-constant spectrum, the uniform spectrum) of *graph* on p workers."""
    built = generate(graph, p)
    best = consensus(graph, p, weights="best-constant", rounds=0).spectrum
    uniform = consensus(graph, p, rounds=0).spectrum
    return laplacian_extremes(built), best, uniform


@example("best-constant-mixing", title="The best constant edge weight against equal weights",
         source="Xiao & Boyd 2004 (section 4.1: the best constant edge weight)", topic="consensus",
         givens=[Given("graph", "communication graph (ring, torus or hypercube)", NAME, "ring"),
                 Given("p", "workers", COUNT, 8, "p"), TARGET],
         answer="rho-best", slips=("gap-for-log",))
def best_constant_mixing(w: Work) -> None:
    """W = I − α·L with α* = 2/(ℓ_min + ℓ_max) puts λ₂ and λ_min at ±ρ, ρ = (ℓ_max − ℓ_min)/(ℓ_max +
    ℓ_min), the least ρ any one weight on every edge gives; against equal weights 1/(d + 1).

    Source: Xiao & Boyd 2004, section 4.1; ``costmodel.consensus.consensus`` (weights best-constant
    and uniform) and ``laplacian_extremes``.
    """
    graph, p, target = w.values("graph", "p", "target")
    name = resolve_graph(graph).name
    if name not in GRAPHS:
        raise InputError(f"the graph {graph!r} is not one of {', '.join(GRAPHS)} (undirected and regular)")
    lap, best, uniform = _weights_compared(name, p)
    low = _value(lap.connectivity_exact, lap.connectivity)
    high = _value(lap.largest_exact, lap.largest)
    w.step("Laplacian: smallest nonzero eigenvalue ℓ_min and largest ℓ_max", "", f"{show_exact(low)}, "
           f"{show_exact(high)}")
    w.answer("alpha", "the best constant edge weight α*", 2 / (low + high), NUMBER,
             f"2/(ℓ_min + ℓ_max) = 2/({show_exact(low)} + {show_exact(high)})")
    rho = w.answer("rho-best", "ρ with the best constant weight", _value(best.rho_exact, best.rho), NUMBER,
                   "(ℓ_max − ℓ_min)/(ℓ_max + ℓ_min)")
    if w.checking:
        w.check("ρ from the Laplacian", round(float(rho), 9), round(float((high - low) / (high + low)), 9))
    w.answer("rho-uniform", "ρ with equal weights 1/(d + 1)", _value(uniform.rho_exact, uniform.rho), NUMBER)
    _rounds(w, best, target, "rounds-best", "rounds to the target with the best constant weight")
    _rounds(w, uniform, target, "rounds-uniform", "rounds to the target with equal weights")
