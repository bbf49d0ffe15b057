"""The arithmetic of federated optimisers, exact: a FedProx local step, a SCAFFOLD round, FedNova's average.

* FedProx [1]_ (section 3, eq. 2): a client minimises ``h(w) = f(w) + (μ/2)‖w − wᵗ‖²``, so one local
  gradient step is ``w ← w − η(∇f(w) + μ(w − wᵗ))``;
* SCAFFOLD [2]_ (Algorithm 1, option II): each sampled client i runs K steps
  ``y ← y − η_l(g_i(y) − c_i + c)`` from y = x, then ``c_i⁺ = c_i − c + (x − y)/(K·η_l)``; the server
  sets ``x ← x + η_g·mean(Δy_i)`` and ``c ← c + (|S|/N)·mean(Δc_i)``.  Here client i's gradient is that
  of the quadratic ``f_i(y) = (a_i/2)‖y − b_i‖²``: ``g_i(y) = a_i(y − b_i)``, exact in Fractions;
* FedNova [3]_ (section 4, eq. 6): client i takes τ_i local steps with a (constant, here) gradient
  g_i, so its update is ``Δ_i = −η τ_i g_i``; FedAvg adds ``Σ p_i Δ_i``, which weighs client i by
  ``p_i τ_i / Σ p_j τ_j`` (the objective inconsistency, [3]_ Theorem 1), while FedNova normalises each
  update by its steps and rescales by ``τ_eff = Σ p_i τ_i``: ``x ← x − η τ_eff Σ p_i g_i``.

References
----------
.. [1] T. Li et al., "Federated Optimization in Heterogeneous Networks", MLSys 2020.
.. [2] S. P. Karimireddy et al., "SCAFFOLD: Stochastic Controlled Averaging for Federated
   Learning", ICML 2020, Algorithm 1.
.. [3] J. Wang et al., "Tackling the Objective Inconsistency Problem in Heterogeneous Federated
   Optimization", NeurIPS 2020.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.exact import parse_number, show
from costmodel.references import KARIMIREDDY_2020, LI_2020_FEDPROX, WANG_2020_FEDNOVA, Cited
from costmodel.training._common import parse_counts, parse_numbers, parse_vectors, reals
from costmodel.units import format_exact

__all__ = [
    "CITED",
    "FedNovaRound",
    "FedProxStep",
    "ScaffoldRound",
    "fednova_round",
    "fedprox_step",
    "scaffold_round",
]

CITED = (LI_2020_FEDPROX, KARIMIREDDY_2020, WANG_2020_FEDNOVA)

Vector = tuple[Fraction, ...]


def _vector(value: Any, what: str) -> Vector:
    """One vector: ``"1,0"``, a number, or a sequence of numbers."""
    if isinstance(value, (int, float, Fraction)) and not isinstance(value, bool):
        value = [[value]]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, Fraction, str)) for v in value):
        value = [list(value)]
    vectors = parse_vectors(value, what=what, example="1,0")
    if len(vectors) != 1:
        raise InputError(f"{what} has {len(vectors)} vectors; give one, e.g. 1,0")
    return vectors[0]


def _positive(value: Any, what: str, *, allow_zero: bool = False) -> Fraction:
    x = parse_number(value, what=what)
    if x < 0 or (x == 0 and not allow_zero):
        raise InputError(
            f"{what}={show(value) if not isinstance(value, str) else value} is "
            f"{'negative' if x < 0 else 'zero'}; give a positive number, e.g. 0.1"
        )
    return x


def _same(width: int, v: Vector, what: str) -> None:
    if len(v) != width:
        raise InputError(f"{what} has {len(v)} components, the model {width}; give one per parameter")


def _exact_list(v: Vector) -> list[str]:
    return [format_exact(x) for x in v]


# --------------------------------------------------------------------------------------------------
# FedProx
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FedProxStep:
    """One FedProx local step: the proximal term, the total gradient and the new w."""

    w: Vector
    anchor: Vector
    gradient: Vector
    lr: Fraction
    mu: Fraction
    proximal: Vector
    total: Vector
    new_w: Vector
    plain_sgd: Vector
    sources: tuple[Cited, ...] = (LI_2020_FEDPROX.at("section 3, eq. 2: h(w) = f(w) + (μ/2)‖w − wᵗ‖²"),)

    def to_dict(self) -> dict[str, Any]:
        return {
            "w": reals(self.w),
            "anchor": reals(self.anchor),
            "gradient": reals(self.gradient),
            "lr": float(self.lr),
            "mu": float(self.mu),
            "proximal": reals(self.proximal),
            "total_gradient": reals(self.total),
            "new_w": reals(self.new_w),
            "new_w_exact": _exact_list(self.new_w),
            "plain_sgd": reals(self.plain_sgd),
            "formula": "w ← w − η(∇f(w) + μ(w − wᵗ))",
            "sources": [s.to_dict() for s in self.sources],
        }


def fedprox_step(w: Any, *, anchor: Any, gradient: Any, lr: Any, mu: Any) -> FedProxStep:
    """One FedProx local step ``w − η(∇f(w) + μ(w − wᵗ))``, exactly, beside plain SGD's ``w − η∇f(w)``.

    Examples
    --------
    >>> s = fedprox_step(1, anchor=0, gradient=2, lr="0.1", mu="0.5")
    >>> s.proximal, s.total, s.new_w
    ((Fraction(1, 2),), (Fraction(5, 2),), (Fraction(3, 4),))
    """
    wv, av, gv = _vector(w, "w"), _vector(anchor, "anchor"), _vector(gradient, "gradient")
    _same(len(wv), av, "anchor")
    _same(len(wv), gv, "gradient")
    eta, m = _positive(lr, "lr"), _positive(mu, "mu", allow_zero=True)
    prox = tuple(m * (x - a) for x, a in zip(wv, av, strict=True))
    total = tuple(g + p for g, p in zip(gv, prox, strict=True))
    return FedProxStep(
        w=wv,
        anchor=av,
        gradient=gv,
        lr=eta,
        mu=m,
        proximal=prox,
        total=total,
        new_w=tuple(x - eta * t for x, t in zip(wv, total, strict=True)),
        plain_sgd=tuple(x - eta * g for x, g in zip(wv, gv, strict=True)),
    )


# --------------------------------------------------------------------------------------------------
# SCAFFOLD
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldClient:
    """One client's local run: its iterates, new control variate and the two deltas."""

    curvature: Fraction
    optimum: Vector
    control: Vector
    iterates: tuple[Vector, ...]
    new_control: Vector
    delta_y: Vector
    delta_c: Vector

    def to_dict(self) -> dict[str, Any]:
        return {
            "curvature": float(self.curvature),
            "optimum": reals(self.optimum),
            "control": reals(self.control),
            "iterates": [reals(y) for y in self.iterates],
            "new_control": reals(self.new_control),
            "delta_y": reals(self.delta_y),
            "delta_c": reals(self.delta_c),
            "new_control_exact": _exact_list(self.new_control),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ScaffoldRound:
    """A SCAFFOLD round (option II): every client's local run and the server's new x and c."""

    x: Vector
    c: Vector
    lr_local: Fraction
    lr_global: Fraction
    steps: int
    population: int
    clients: tuple[ScaffoldClient, ...]
    new_x: Vector
    new_c: Vector
    sources: tuple[Cited, ...] = (
        KARIMIREDDY_2020.at("Algorithm 1, option II: c_i⁺ = c_i − c + (x − y_i)/(Kη_l)"),
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": reals(self.x),
            "c": reals(self.c),
            "lr_local": float(self.lr_local),
            "lr_global": float(self.lr_global),
            "steps": self.steps,
            "population": self.population,
            "clients": [cl.to_dict() for cl in self.clients],
            "new_x": reals(self.new_x),
            "new_c": reals(self.new_c),
            "new_x_exact": _exact_list(self.new_x),
            "new_c_exact": _exact_list(self.new_c),
            "formula": "y ← y − η_l(g_i(y) − c_i + c); c_i⁺ = c_i − c + (x − y)/(Kη_l); "
            "x ← x + η_g·mean Δy; c ← c + (|S|/N)·mean Δc",
            "sources": [s.to_dict() for s in self.sources],
        }


def _mean(vectors: list[Vector]) -> Vector:
    return tuple(sum(col, Fraction(0)) / len(vectors) for col in zip(*vectors, strict=True))


def scaffold_round(
    x: Any,
    *,
    curvatures: Any,
    optima: Any,
    controls: Any = None,
    c: Any = None,
    steps: Any = 1,
    lr_local: Any,
    lr_global: Any = 1,
    population: Any = None,
) -> ScaffoldRound:
    """One SCAFFOLD round, option II, on quadratic clients ``f_i(y) = (a_i/2)‖y − b_i‖²``, exactly.

    Parameters
    ----------
    x : vector
        The server model.
    curvatures : list of numbers
        a_i for each sampled client (``"1,2"``).
    optima : vectors
        b_i for each client (``"0,0;2,2"``, ``;`` between clients).
    controls : vectors, optional
        Each client's control variate c_i (default 0).
    c : vector, optional
        The server's control variate (default 0).
    steps, lr_local, lr_global, population
        K local steps, η_l, η_g, and N clients in all (default: the sampled ones).

    Examples
    --------
    >>> r = scaffold_round("0", curvatures="1,1", optima="1;3", steps=2, lr_local="0.5")
    >>> r.new_x, r.new_c
    ((Fraction(3, 2),), (Fraction(-3, 2),))
    """
    xv = _vector(x, "x")
    a = parse_numbers(curvatures, what="curvatures", example="1,2")
    if any(v <= 0 for v in a):
        raise InputError("curvatures must be positive (each client's f_i is (a_i/2)‖y − b_i‖²), e.g. 1,2")
    b = parse_vectors(optima, what="optima", example="0,0;2,2")
    if len(b) != len(a):
        raise InputError(f"{len(a)} curvatures but {len(b)} optima; give one of each per client")
    for i, v in enumerate(b):
        _same(len(xv), v, f"optimum {i}")
    zero = tuple(Fraction(0) for _ in xv)
    ci = (
        [zero] * len(a) if controls is None else list(parse_vectors(controls, what="controls", example="0;0"))
    )
    if len(ci) != len(a):
        raise InputError(f"{len(a)} clients but {len(ci)} control variates; give one per client")
    for i, v in enumerate(ci):
        _same(len(xv), v, f"control {i}")
    cv = zero if c is None else _vector(c, "c")
    _same(len(xv), cv, "c")
    k = parse_counts(str(steps), what="steps", example="2")[0] if not isinstance(steps, int) else steps
    if k < 1 or k > 1000:
        raise InputError(f"steps={k} is outside 1 to 1000; give the local steps K, e.g. 2")
    eta_l, eta_g = _positive(lr_local, "lr_local"), _positive(lr_global, "lr_global")
    n = len(a) if population is None else parse_counts(str(population), what="population", example="10")[0]
    if n < len(a):
        raise InputError(f"population={n} is below the {len(a)} sampled clients; give N ≥ |S|")
    clients = []
    for ai, bi, cc in zip(a, b, ci, strict=True):
        y, path = xv, [xv]
        for _ in range(k):
            y = tuple(
                yj - eta_l * (ai * (yj - bj) - cij + cj)
                for yj, bj, cij, cj in zip(y, bi, cc, cv, strict=True)
            )
            path.append(y)
        new_ci = tuple(
            cij - cj + (xj - yj) / (k * eta_l) for cij, cj, xj, yj in zip(cc, cv, xv, y, strict=True)
        )
        clients.append(
            ScaffoldClient(
                curvature=ai,
                optimum=bi,
                control=cc,
                iterates=tuple(path),
                new_control=new_ci,
                delta_y=tuple(yj - xj for yj, xj in zip(y, xv, strict=True)),
                delta_c=tuple(n_ - o for n_, o in zip(new_ci, cc, strict=True)),
            )
        )
    mean_dy, mean_dc = _mean([cl.delta_y for cl in clients]), _mean([cl.delta_c for cl in clients])
    share = Fraction(len(a), n)
    return ScaffoldRound(
        x=xv,
        c=cv,
        lr_local=eta_l,
        lr_global=eta_g,
        steps=k,
        population=n,
        clients=tuple(clients),
        new_x=tuple(xj + eta_g * d for xj, d in zip(xv, mean_dy, strict=True)),
        new_c=tuple(cj + share * d for cj, d in zip(cv, mean_dc, strict=True)),
    )


# --------------------------------------------------------------------------------------------------
# FedNova
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FedNovaRound:
    """FedNova's normalised average beside FedAvg's, with the weights each effectively gives the clients."""

    x: Vector
    gradients: tuple[Vector, ...]
    steps: tuple[int, ...]
    weights: tuple[Fraction, ...]
    lr: Fraction
    tau_eff: Fraction
    fedavg_x: Vector
    fednova_x: Vector
    fedavg_weights: tuple[Fraction, ...]
    sources: tuple[Cited, ...] = (
        WANG_2020_FEDNOVA.at(
            "section 4, eq. 6 (normalised averaging) and Theorem 1 "
            "(FedAvg's surrogate objective Σ p_i τ_i f_i / Σ p_j τ_j)"
        ),
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": reals(self.x),
            "gradients": [reals(g) for g in self.gradients],
            "steps": list(self.steps),
            "weights": reals(self.weights),
            "lr": float(self.lr),
            "tau_eff": float(self.tau_eff),
            "fedavg_x": reals(self.fedavg_x),
            "fednova_x": reals(self.fednova_x),
            "fedavg_weights": reals(self.fedavg_weights),
            "fedavg_x_exact": _exact_list(self.fedavg_x),
            "fednova_x_exact": _exact_list(self.fednova_x),
            "fedavg_weights_exact": [format_exact(w) for w in self.fedavg_weights],
            "formula": "FedAvg: x − η Σ p_i τ_i g_i; FedNova: x − η τ_eff Σ p_i g_i, τ_eff = Σ p_i τ_i",
            "sources": [s.to_dict() for s in self.sources],
        }


def fednova_round(x: Any, *, gradients: Any, steps: Any, sizes: Any = None, lr: Any) -> FedNovaRound:
    """FedNova's normalised averaging beside FedAvg's, for clients with unequal local steps τ_i.

    Each client's gradient is constant over its τ_i steps (so its update is −η τ_i g_i); p_i are the
    sample weights |D_i|/|D| (equal by default).

    Examples
    --------
    >>> r = fednova_round("0", gradients="1;-1", steps="1,3", lr=1)
    >>> r.fedavg_x, r.fednova_x, r.fedavg_weights
    ((Fraction(1, 1),), (Fraction(0, 1),), (Fraction(1, 4), Fraction(3, 4)))
    """
    xv = _vector(x, "x")
    g = parse_vectors(gradients, what="gradients", example="1,0;-1,0")
    for i, v in enumerate(g):
        _same(len(xv), v, f"gradient {i}")
    tau = parse_counts(steps, what="steps", example="1,3")
    if len(tau) != len(g):
        raise InputError(f"{len(g)} gradients but {len(tau)} step counts; give one of each per client")
    ns = tuple(1 for _ in g) if sizes is None else parse_counts(sizes, what="sizes", example="100,300")
    if len(ns) != len(g):
        raise InputError(f"{len(g)} gradients but {len(ns)} sizes; give one of each per client")
    p = tuple(Fraction(n, sum(ns)) for n in ns)
    eta = _positive(lr, "lr")
    tau_eff = sum((pi * t for pi, t in zip(p, tau, strict=True)), Fraction(0))
    width = len(xv)
    avg = tuple(
        xv[j] - eta * sum((pi * t * gi[j] for pi, t, gi in zip(p, tau, g, strict=True)), Fraction(0))
        for j in range(width)
    )
    nova = tuple(
        xv[j] - eta * tau_eff * sum((pi * gi[j] for pi, gi in zip(p, g, strict=True)), Fraction(0))
        for j in range(width)
    )
    effective = tuple(pi * t / tau_eff for pi, t in zip(p, tau, strict=True))
    return FedNovaRound(
        x=xv,
        gradients=g,
        steps=tau,
        weights=p,
        lr=eta,
        tau_eff=tau_eff,
        fedavg_x=avg,
        fednova_x=nova,
        fedavg_weights=effective,
    )
