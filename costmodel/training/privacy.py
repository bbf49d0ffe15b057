"""DP-SGD privacy accounting: Rényi DP of the sampled Gaussian mechanism, composed and converted to (ε, δ).

One DP-SGD step samples each example with probability q (Poisson sampling), clips each example's
gradient to norm C, sums them and adds N(0, σ²C²) noise: the sampled Gaussian mechanism with noise
multiplier σ.  Its Rényi differential privacy at order α is ``log(A_α) / (α − 1)`` [2]_ (section 3),
where A_α is computed in log space

* at an integer α by the binomial expansion
  ``A_α = Σ_{i=0..α} C(α, i) (1 − q)^{α−i} q^i exp((i² − i) / (2σ²))`` [2]_ (section 3.3, eq. 9);
* at a fractional α by the two convergent series over the halves (−∞, z₀] and [z₀, ∞) of the
  integral, with ``z₀ = σ² log(1/q − 1) + 1/2`` and each term weighted by ``erfc`` [2]_ (section 3.3),

term for term as Google's ``dp_accounting`` computes them [3]_ (``_compute_log_a_int``,
``_compute_log_a_frac``: the same sums, the same stopping rule, so that the two agree to rounding).
RDP composes by addition: T steps of one setting cost ``T · rdp(α)``, and heterogeneous phases
[(q₁, σ₁, T₁), (q₂, σ₂, T₂), ...] cost ``Σ Tᵢ · rdpᵢ(α)`` [1]_ (Proposition 1).  An RDP curve becomes
(ε, δ)-DP by the best order of

* the classic bound ``ε = rdp(α) − log δ / (α − 1)`` [1]_ (Proposition 3), or
* the improved bound ``ε = rdp(α) + log(1 − 1/α) − log(δ·α) / (α − 1)`` [4]_ (Theorem 21), taken
  as dp_accounting does (``compute_epsilon``: ε = 0 where δ² > 1 − e^{−rdp}, no order ≤ 1.01).

The noise a DP-SGD step adds to the averaged gradient has standard deviation σ·C/B per coordinate
for a (lot) size B [5]_ (Algorithm 1); in DP-FedAvg, with m clients per round and each client's
update clipped to S, the averaged update carries σ·S/m [6]_ (Algorithm 1, the fixed-denominator
estimator): more clients per round, less noise per update at the same σ.

Everything here is floating point (the sums are transcendental); this module imports neither
numpy nor scipy (``math.lgamma``, ``math.erfc`` and an asymptotic series for ``log erfc`` far in
the tail).

References
----------
.. [1] I. Mironov, "Rényi Differential Privacy", CSF 2017, Propositions 1 and 3.
.. [2] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled Gaussian
   Mechanism", arXiv:1908.10530, 2019, section 3.
.. [3] Google, dp_accounting, ``python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant.py``
   (github.com/google/differential-privacy).
.. [4] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato, "Hypothesis Testing Interpretations and
   Rényi Differential Privacy", AISTATS 2020, Theorem 21.
.. [5] M. Abadi et al., "Deep Learning with Differential Privacy", CCS 2016, Algorithm 1.
.. [6] H. B. McMahan, D. Ramage, K. Talwar, L. Zhang, "Learning Differentially Private Recurrent
   Language Models", ICLR 2018, Algorithm 1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, to_json
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import list_items, parse_number, show
from costmodel.references import (
    ABADI_2016,
    BALLE_2020,
    DP_ACCOUNTING,
    MCMAHAN_2018,
    MIRONOV_2017,
    MIRONOV_2019,
    Cited,
)
from costmodel.validate import is_whole

__all__ = [
    "CITED",
    "CONVERSIONS",
    "DEFAULT_ORDERS",
    "ClientNoise",
    "ClientNoiseTable",
    "NoiseSolution",
    "OrderRow",
    "Phase",
    "PrivacyAccount",
    "client_noise",
    "epsilon_from_rdp",
    "parse_orders",
    "parse_phases",
    "privacy",
    "privacy_account",
    "rdp_sampled_gaussian",
    "solve_noise",
]

CITED = (MIRONOV_2017, MIRONOV_2019, BALLE_2020, DP_ACCOUNTING, ABADI_2016, MCMAHAN_2018)

DEFAULT_ORDERS: tuple[float, ...] = (
    tuple(1 + x / 10 for x in range(1, 100)) + tuple(float(a) for a in range(11, 64))
    + (128.0, 256.0, 512.0, 1024.0)
)
"""dp_accounting's ``DEFAULT_RDP_ORDERS``: 1.1 to 10.9 by tenths, 11 to 63, 128, 256, 512, 1024."""

CONVERSIONS = ("improved", "classic")
"""The RDP → (ε, δ) conversions: Balle et al. 2020's (Theorem 21) and Mironov 2017's (Proposition 3)."""

_CONVERSION_ALIASES = {"improved": "improved", "balle": "improved", "balle2020": "improved",
                       "classic": "classic", "mironov": "classic", "mironov2017": "classic"}

_MAX_FRAC_TERMS = 1000
"""dp_accounting's ``_MAX_STEPS_LOG_A_FRAC``: a fractional order whose series has not converged by
then is left out of the minimum (its RDP is +∞)."""

_MAX_ORDER = 10_000
_MAX_ORDERS = 1_000
_MAX_STEPS = 10**12
_LOG_HALF = math.log(0.5)

_SOURCES = (
    MIRONOV_2019.at("section 3.3: A_α by the binomial expansion (integer α) and by two convergent series "
                    "(fractional α), in log space"),
    DP_ACCOUNTING.at("_compute_log_a_int, _compute_log_a_frac, compute_epsilon: the same sums and "
                     "stopping rule"),
    MIRONOV_2017.at("Proposition 1: RDP composes by addition; Proposition 3: ε = rdp − log δ/(α − 1)"),
    BALLE_2020.at("Theorem 21: ε = rdp + log(1 − 1/α) − log(δα)/(α − 1)"),
)


# --------------------------------------------------------------------------------------------------
# the sums, in log space
# --------------------------------------------------------------------------------------------------


def _log_add(x: float, y: float) -> float:
    """log(eˣ + eʸ) without overflow."""
    a, b = min(x, y), max(x, y)
    if a == -math.inf:
        return b
    return math.log1p(math.exp(a - b)) + b


def _log_comb(n: float, k: float) -> float:
    """log |C(n, k)| by log-gamma, as dp_accounting's ``_log_comb`` (scipy's gammaln is log|Γ|)."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _log_erfc(x: float) -> float:
    """log erfc(x), accurate far into the tail where erfc(x) underflows.

    Below x = 20 ``math.erfc`` keeps full relative precision; beyond it the asymptotic series
    ``erfc(x) = e^{−x²}/(x√π) · Σ_k (−1)^k (2k − 1)!! / (2x²)^k`` is summed until its terms fall
    below 1e-17 (at x ≥ 20, 1/(2x²) ≤ 1/800: a handful of terms).
    """
    if x < 20.0:
        return math.log(math.erfc(x))
    u = 1.0 / (2.0 * x * x)
    total, term, k = 1.0, 1.0, 1
    while abs(term) > 1e-17:
        term *= -(2 * k - 1) * u
        total += term
        k += 1
    return -x * x - math.log(x) - 0.5 * math.log(math.pi) + math.log(total)


def _log_a_int(q: float, sigma: float, alpha: int) -> float:
    log_a = -math.inf
    log_q, log_1mq = math.log(q), math.log1p(-q)
    for i in range(alpha + 1):
        log_coef = _log_comb(alpha, i) + i * log_q + (alpha - i) * log_1mq
        log_a = _log_add(log_a, log_coef + (i * i - i) / (2 * sigma**2))
    return log_a


def _log_a_frac(q: float, sigma: float, alpha: float) -> float:
    log_a0 = log_a1 = -math.inf
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    last_s0 = last_s1 = -math.inf
    root2_sigma = math.sqrt(2) * sigma
    for i in range(_MAX_FRAC_TERMS):
        log_coef = _log_comb(alpha, i)
        j = alpha - i
        log_t0 = log_coef + i * log_q + j * log_1mq
        log_t1 = log_coef + j * log_q + i * log_1mq
        log_e0 = _LOG_HALF + _log_erfc((i - z0) / root2_sigma)
        log_e1 = _LOG_HALF + _log_erfc((z0 - j) / root2_sigma)
        log_s0 = log_t0 + (i * i - i) / (2 * sigma**2) + log_e0
        log_s1 = log_t1 + (j * j - j) / (2 * sigma**2) + log_e1
        log_a0 = _log_add(log_a0, log_s0)
        log_a1 = _log_add(log_a1, log_s1)
        total = _log_add(log_a0, log_a1)
        if log_s0 < last_s0 and log_s1 < last_s1 and max(log_s0, log_s1) < total - 30:
            return total
        last_s0, last_s1 = log_s0, log_s1
    return math.inf


def rdp_sampled_gaussian(q: Any, noise_multiplier: Any, order: Any) -> float:
    """The RDP at *order* of one step of the sampled Gaussian mechanism (sampling rate q, noise σ).

    ``log(A_α)/(α − 1)``, A_α by the integer or the fractional series of Mironov et al. 2019
    (section 3.3); ``α/(2σ²)`` at q = 1 (the Gaussian mechanism).  +∞ where the fractional series
    does not converge in 1000 terms (that order is then useless, as in dp_accounting).

    Parameters
    ----------
    q : number
        The probability that an example is in the step's batch, 0 < q ≤ 1.
    noise_multiplier : number
        σ, the noise's standard deviation over the clipping norm, > 0.
    order : number
        The Rényi order α > 1.

    References
    ----------
    .. [1] Mironov, Talwar, Zhang 2019, section 3.3; dp_accounting's ``_compute_log_a``.

    Examples
    --------
    >>> round(rdp_sampled_gaussian(1, 2, 3), 12)  # the Gaussian mechanism: α/(2σ²) = 3/8
    0.375
    >>> round(rdp_sampled_gaussian(0.01, 1.0, 2), 10)  # log(1 + q²(e^{1/σ²} − 1))
    0.0001718134
    """
    qf, sigma = _rate(q), _noise(noise_multiplier)
    return _rdp(qf, sigma, _order(order))


def _rdp(q: float, sigma: float, alpha: float) -> float:
    if q == 1.0:
        return alpha / (2 * sigma**2)
    integer = float(alpha).is_integer()
    log_a = _log_a_int(q, sigma, int(alpha)) if integer else _log_a_frac(q, sigma, alpha)
    return log_a / (alpha - 1)


def epsilon_from_rdp(rdp: float, order: float, *, delta: Any, conversion: str = "improved") -> float:
    """ε of an RDP guarantee (rdp at order α) for a δ, by the classic or the improved bound.

    classic: ``rdp − log δ/(α − 1)`` (Mironov 2017, Proposition 3); improved: ``rdp + log(1 − 1/α)
    − log(δα)/(α − 1)`` (Balle et al. 2020, Theorem 21), 0 where δ² > 1 − e^{−rdp} and +∞ at
    α ≤ 1.01, as dp_accounting's ``compute_epsilon``.  Never below 0.

    Examples
    --------
    >>> round(epsilon_from_rdp(0.5, 11, delta=1e-5, conversion="classic"), 6)  # 0.5 + log(1e5)/10
    1.651293
    >>> round(epsilon_from_rdp(0.5, 11, delta=1e-5), 6)  # ... + log(10/11) − log(11)/10
    1.316193
    """
    d = _delta(delta)
    kind = _conversion(conversion)
    if math.isinf(rdp):
        return math.inf
    if kind == "classic":
        return max(0.0, rdp - math.log(d) / (order - 1))
    if rdp < 0 or d**2 + math.expm1(-rdp) > 0:
        return 0.0
    if order > 1.01:
        return max(0.0, rdp + math.log1p(-1 / order) - math.log(d * order) / (order - 1))
    return math.inf


# --------------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------------


def _shown(value: Any) -> str:
    """A value as a message states it: text as typed, a number by its ``repr`` (a Fraction as a/b)."""
    if isinstance(value, str):
        return value.strip() if len(value) <= 60 else show(value)
    if isinstance(value, Fraction):
        return str(value)
    return show(value)


def _finite(value: Any, name: str) -> Fraction:
    try:
        return parse_number(value, what=name)
    except InputError as exc:
        raise InputError(f"{_named(name, value)}: {exc}") from None


def _rate(value: Any, name: str = "q") -> float:
    q = _finite(value, name)
    if not 0 < q <= 1:
        raise InputError(f"{_named(name, value)} is outside (0, 1]; the sampling rate is a probability, "
                         "e.g. batch/dataset = 256/60000")
    return float(q)


def _named(name: str, value: Any) -> str:
    """``name=value`` for a parameter; a phase's part (a name with a space) reads ``its q 0``."""
    return f"{name} {_shown(value)}" if " " in name else f"{name}={_shown(value)}"


def _noise(value: Any, name: str = "noise_multiplier") -> float:
    sigma = _finite(value, name)
    if sigma <= 0:
        raise InputError(f"{_named(name, value)} is not positive; the noise multiplier σ is the noise's "
                         "standard deviation over the clipping norm, e.g. 1.1")
    if sigma > 10**6:
        raise InputError(f"{_named(name, value)} is above 1e6; give a noise multiplier of at most 1e6")
    return float(sigma)


def _delta(value: Any) -> float:
    d = _finite(value, "delta")
    if not 0 < d < 1:
        raise InputError(f"delta={_shown(value)} is outside (0, 1); δ is a probability, e.g. 1e-5 "
                         "(below 1/dataset size)")
    return float(d)


def _steps(value: Any, name: str = "steps", *, what: str = "steps") -> int:
    """A whole count from 1 to 1e12 (*what* names it in the hint: steps, clients, examples)."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value.strip()) < 20:
        value = int(value.strip())
    if not is_whole(value) or isinstance(value, bool):
        raise InputError(f"{_named(name, value)} is not a whole number; give the number of {what}, e.g. 1000")
    if not 1 <= int(value) <= _MAX_STEPS:
        raise InputError(f"{_named(name, int(value))} is outside 1 to 1e12; give at least one of the {what}")
    return int(value)


def _order(value: Any) -> float:
    a = _finite(value, "order")
    if not 1 < a <= _MAX_ORDER:
        raise InputError(f"order={_shown(value)} is outside (1, {_MAX_ORDER}]; Rényi orders are above 1, "
                         "e.g. 2-64")
    return float(a)


def _conversion(name: Any) -> str:
    key = str(name).strip().lower()
    if key not in _CONVERSION_ALIASES:
        raise UnknownNameError("conversion", str(name), CONVERSIONS)
    return _CONVERSION_ALIASES[key]


_RANGE = re.compile(r"\s*(\d{1,30})\s*-\s*(\d{1,30})\s*")


def parse_orders(value: Any = None) -> tuple[float, ...]:
    """Rényi orders from ``"2-32"`` (every integer from 2 to 32), ``"1.5,2,4-8"`` or a sequence; None:
    :data:`DEFAULT_ORDERS`.  Orders are above 1 and at most 10000; duplicates are dropped, the rest sorted.

    Examples
    --------
    >>> parse_orders("2-4,1.5")
    (1.5, 2.0, 3.0, 4.0)
    >>> len(parse_orders())
    156
    """
    if value is None:
        return DEFAULT_ORDERS
    found: set[float] = set()
    for i, item in enumerate(list_items(value, ",", what="orders", example="2-32")):
        m = _RANGE.fullmatch(item) if isinstance(item, str) else None
        try:
            if m is None:
                found.add(_order(item))
                continue
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise InputError(f"{item.strip()!r} runs backwards; write the smaller order first, e.g. 2-32")
            _order(lo)
            _order(hi)
            if hi - lo >= _MAX_ORDERS:
                raise InputError(f"{item.strip()!r} is {hi - lo + 1} orders; a few dozen suffice, e.g. 2-64")
            found.update(float(a) for a in range(lo, hi + 1))
        except InputError as exc:
            raise InputError(f"item {i} of the orders: {exc}") from None
        if len(found) > _MAX_ORDERS:
            raise InputError(f"more than {_MAX_ORDERS} orders; a few dozen suffice, e.g. 2-64")
    return tuple(sorted(found))


@dataclass(frozen=True, slots=True, kw_only=True)
class Phase(JSONFields):
    """One stretch of training at one setting: sampling rate q, noise multiplier σ, steps."""

    q: Fraction
    noise_multiplier: Fraction
    steps: int

    @classmethod
    def of(cls, q: Any, noise_multiplier: Any, steps: Any) -> Phase:
        """A checked phase: 0 < q ≤ 1, σ > 0, at least one step."""
        _rate(q, "its q")
        _noise(noise_multiplier, "its σ")
        return cls(q=_finite(q, "its q"), noise_multiplier=_finite(noise_multiplier, "its σ"),
                   steps=_steps(steps, "its steps"))


def parse_phases(value: Any) -> tuple[Phase, ...]:
    """Phases from ``"1e-5,1.0,10;1e-4,3.0,4"`` (``q,σ,steps`` with ``;`` between phases), from
    ``(q, σ, steps)`` triples, or from :class:`Phase` objects.

    Examples
    --------
    >>> [p.steps for p in parse_phases("1e-5,1.0,10; 1e-4,3.0,4")]
    [10, 4]
    """
    if isinstance(value, Phase):
        return (value,)
    phases = []
    for i, item in enumerate(list_items(value, ";", what="phases", example="1e-5,1.0,10;1e-4,3.0,4")):
        if isinstance(item, Phase):
            phases.append(item)
            continue
        parts = item.split(",") if isinstance(item, str) else list(item)
        if len(parts) != 3:
            raise InputError(f"phase {i} ({show(item)}) has {len(parts)} parts; write each phase as "
                             "q,σ,steps, e.g. 0.01,1.1,1000")
        try:
            phases.append(Phase.of(*(p.strip() if isinstance(p, str) else p for p in parts)))
        except InputError as exc:
            raise InputError(f"phase {i}: {exc}") from None
    return tuple(phases)


# --------------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderRow:
    """One Rényi order: each phase's RDP per step, the composed RDP, and ε from it."""

    order: float
    rdp_per_step: tuple[float, ...]
    rdp: float
    epsilon: float

    def to_dict(self) -> dict[str, Any]:
        finite = math.isfinite(self.rdp) and math.isfinite(self.epsilon)
        return {"order": to_json(self.order), "finite": finite,
                "rdp_per_step": [x if math.isfinite(x) else None for x in self.rdp_per_step],
                "rdp": self.rdp if math.isfinite(self.rdp) else None,
                "epsilon": self.epsilon if math.isfinite(self.epsilon) else None}


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyAccount:
    """The (ε, δ) of DP-SGD over its phases: every order's RDP, the best order and ε.

    ``noise_std`` is σ·C/B, the noise's standard deviation on the averaged gradient, when a
    clipping norm C and a batch size B were given (a single phase).
    """

    phases: tuple[Phase, ...]
    delta: float
    conversion: str
    rows: tuple[OrderRow, ...]
    best_order: float
    epsilon: float
    clip: Fraction | None = None
    batch: int | None = None
    noise_std: float | None = None
    sources: tuple[Cited, ...] = _SOURCES
    notes: tuple[str, ...] = ()

    @property
    def best(self) -> OrderRow:
        """The row of the best order."""
        return next(r for r in self.rows if r.order == self.best_order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "account",
            "phases": [p.to_dict() for p in self.phases],
            "steps": sum(p.steps for p in self.phases),
            "delta": self.delta,
            "conversion": self.conversion,
            "formula": _FORMULAS[self.conversion],
            "epsilon": self.epsilon,
            "best_order": to_json(self.best_order),
            "rdp_at_best_order": self.best.rdp,
            "orders": [r.to_dict() for r in self.rows],
            "clip": None if self.clip is None else to_json(self.clip),
            "batch": self.batch,
            "noise_std": self.noise_std,
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


_FORMULAS = {"classic": "ε = min_α Σ T_i·rdp_i(α) − log δ/(α − 1)",
             "improved": "ε = min_α Σ T_i·rdp_i(α) + log(1 − 1/α) − log(δ·α)/(α − 1)"}


def _compose(phases: Sequence[Phase], orders: Sequence[float], delta: float,
             conversion: str) -> tuple[tuple[OrderRow, ...], float, float]:
    settings = [(float(p.q), float(p.noise_multiplier), p.steps) for p in phases]
    rows = []
    for a in orders:
        per_step = tuple(_rdp(q, s, a) for q, s, _ in settings)
        total = sum(t * r for (_, _, t), r in zip(settings, per_step, strict=True))
        rows.append(OrderRow(order=a, rdp_per_step=per_step, rdp=total,
                             epsilon=epsilon_from_rdp(total, a, delta=delta, conversion=conversion)))
    best = min(rows, key=lambda r: r.epsilon)  # the first of equal ones, as numpy's argmin
    return tuple(rows), best.order, best.epsilon


def privacy_account(phases: Any, *, delta: Any, orders: Any = None, conversion: str = "improved",
            clip: Any = None, batch: Any = None) -> PrivacyAccount:
    """ε for δ after DP-SGD's phases (each (q, σ, steps)), by RDP composition and the best order.

    Parameters
    ----------
    phases : str, Phase or sequence of (q, σ, steps)
        ``"0.01,1.1,1000"`` or ``"1e-5,1.0,10;1e-4,3.0,4"`` (``;`` between phases).
    delta : number
        δ, 0 < δ < 1.
    orders : str or sequence, optional
        Rényi orders (``"2-32"``); default :data:`DEFAULT_ORDERS` (dp_accounting's).
    conversion : {"improved", "classic"}
        Balle et al. 2020's bound (default, as dp_accounting and Opacus) or Mironov 2017's.
    clip, batch : number, int, optional
        The clipping norm C and the batch size B: with both, ``noise_std = σ·C/B`` (one phase only).

    Raises
    ------
    InputError
        For q outside (0, 1], σ ≤ 0, fewer than one step, δ outside (0, 1), orders ≤ 1, an unknown
        conversion, or every order giving an infinite ε.

    References
    ----------
    .. [1] Mironov 2017, Propositions 1 and 3; Mironov, Talwar, Zhang 2019, section 3.3;
       Balle et al. 2020, Theorem 21; dp_accounting's RdpAccountant; Abadi et al. 2016, Algorithm 1.

    Examples
    --------
    >>> a = privacy_account("1e-5,1.0,10;1e-4,3.0,4", delta=1e-5, orders="2-32")
    >>> round(a.epsilon, 4), a.best_order
    (0.3363, 23.0)
    """
    steps = parse_phases(phases)
    d = _delta(delta)
    kind = _conversion(conversion)
    alphas = parse_orders(orders)
    rows, best, eps = _compose(steps, alphas, d, kind)
    if math.isinf(eps):
        raise InputError("every order gives an infinite ε; add orders nearer 1, e.g. orders=1.5,2-64")
    notes = []
    std = None
    c = None if clip is None else _finite(clip, "clip")
    b = None if batch is None else _steps(batch, "batch", what="examples in a batch")
    if c is not None and c <= 0:
        raise InputError(f"clip={_shown(clip)} is not positive; the clipping norm C is, e.g. 1.0")
    if (c is None) != (b is None):
        raise InputError("the noise on the averaged gradient needs both clip= and batch= (σ·C/B)")
    if c is not None and b is not None:
        if len(steps) != 1:
            raise InputError("clip= and batch= price one phase's noise; give a single phase")
        std = float(steps[0].noise_multiplier * c / b)
    if best in (alphas[0], alphas[-1]) and len(alphas) > 1:
        notes.append(f"the best order {to_json(best)} is at the edge of the orders given; widen them "
                     "for a possibly smaller ε")
    return PrivacyAccount(phases=steps, delta=d, conversion=kind, rows=rows, best_order=best, epsilon=eps,
                          clip=c, batch=b, noise_std=std, notes=tuple(notes))


# --------------------------------------------------------------------------------------------------
# the noise for a target ε
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseSolution:
    """The smallest noise multiplier σ (to the tolerance) whose ε is at most the target, by bisection."""

    target_epsilon: float
    q: Fraction
    steps: int
    delta: float
    conversion: str
    noise_multiplier: float
    epsilon: float
    best_order: float
    lower: float
    iterations: int
    tolerance: float
    clip: Fraction | None = None
    batch: int | None = None
    noise_std: float | None = None
    sources: tuple[Cited, ...] = _SOURCES
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "noise", "target_epsilon": self.target_epsilon, "q": to_json(self.q),
                "steps": self.steps, "delta": self.delta, "conversion": self.conversion,
                "noise_multiplier": self.noise_multiplier, "epsilon": self.epsilon,
                "best_order": to_json(self.best_order), "bracket": [self.lower, self.noise_multiplier],
                "iterations": self.iterations, "relative_tolerance": self.tolerance,
                "clip": None if self.clip is None else to_json(self.clip), "batch": self.batch,
                "noise_std": self.noise_std, "sources": [s.to_dict() for s in self.sources],
                "notes": list(self.notes)}


def _epsilon_of(q: float, sigma: float, *, steps: int, delta: float, orders: Sequence[float],
                conversion: str) -> tuple[float, float]:
    best, best_order = math.inf, orders[0]
    for a in orders:
        e = epsilon_from_rdp(steps * _rdp(q, sigma, a), a, delta=delta, conversion=conversion)
        if e < best:
            best, best_order = e, a
    return best, best_order


def solve_noise(target_epsilon: Any, *, q: Any, steps: Any, delta: Any, orders: Any = None,
                conversion: str = "improved", tolerance: float = 1e-6, clip: Any = None,
                batch: Any = None) -> NoiseSolution:
    """The noise multiplier σ for a target ε after *steps* steps at sampling rate *q*, by bisection.

    ε falls as σ grows, so the search doubles σ from 1 until ε ≤ target (halves it while ε is still
    below), then bisects [lo, hi] until ``hi − lo ≤ tolerance·hi``; it returns hi, whose ε is at most
    the target (the conservative end).

    Raises
    ------
    InputError
        For a target ε that is not positive, or one no σ up to 1e6 reaches (δ too small for it).

    Examples
    --------
    >>> s = solve_noise(1.0, q=0.01, steps=1000, delta=1e-5, orders="2-64")
    >>> s.epsilon <= 1.0 < privacy_account(f"0.01,{s.lower},1000", delta=1e-5, orders="2-64").epsilon
    True
    """
    target = float(_finite(target_epsilon, "target_epsilon"))
    if target <= 0:
        raise InputError(f"target_epsilon={_shown(target_epsilon)} is not positive; give an ε such as 1 or 8")
    qf, t, d = _rate(q), _steps(steps), _delta(delta)
    kind = _conversion(conversion)
    alphas = parse_orders(orders)
    if not 0 < tolerance < 1:
        raise InputError(f"tolerance={tolerance!r} is outside (0, 1); e.g. 1e-6")
    setting: dict[str, Any] = {"steps": t, "delta": d, "orders": alphas, "conversion": kind}
    hi, iterations = 1.0, 0
    eps, order = _epsilon_of(qf, hi, **setting)
    while eps > target:
        hi *= 2
        iterations += 1
        if hi > 1e6:
            raise InputError(f"no noise multiplier up to 1e6 reaches target_epsilon={target:g} at "
                             f"delta={d:g}; raise the target or δ")
        eps, order = _epsilon_of(qf, hi, **setting)
    lo = hi / 2
    while _epsilon_of(qf, lo, **setting)[0] <= target and lo > 1e-6:
        hi, lo = lo, lo / 2
        iterations += 1
    eps, order = _epsilon_of(qf, hi, **setting)
    while hi - lo > tolerance * hi:
        mid = (lo + hi) / 2
        e, o = _epsilon_of(qf, mid, **setting)
        iterations += 1
        if e <= target:
            hi, eps, order = mid, e, o
        else:
            lo = mid
    c = None if clip is None else _finite(clip, "clip")
    b = None if batch is None else _steps(batch, "batch", what="examples in a batch")
    if (c is None) != (b is None):
        raise InputError("the noise on the averaged gradient needs both clip= and batch= (σ·C/B)")
    if c is not None and c <= 0:
        raise InputError(f"clip={_shown(clip)} is not positive; the clipping norm C is, e.g. 1.0")
    std = None if c is None or b is None else hi * float(c) / b
    return NoiseSolution(target_epsilon=target, q=_finite(q, "q"), steps=t, delta=d, conversion=kind,
                         noise_multiplier=hi, epsilon=eps, best_order=order, lower=lo, iterations=iterations,
                         tolerance=tolerance, clip=c, batch=b, noise_std=std)


# --------------------------------------------------------------------------------------------------
# DP-FedAvg: the noise per update against the clients per round
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientNoise(JSONFields):
    """One client count: q = m/N, the σ that reaches the target ε, and the noise σ·S/m on the average."""

    clients_per_round: int
    q: Fraction
    noise_multiplier: float
    epsilon: float
    best_order: float
    noise_std: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientNoiseTable:
    """DP-FedAvg at a target ε over R rounds for several client counts m out of a population N."""

    target_epsilon: float
    population: int
    rounds: int
    delta: float
    clip: Fraction
    conversion: str
    rows: tuple[ClientNoise, ...]
    sources: tuple[Cited, ...] = (
        MCMAHAN_2018.at("Algorithm 1: clients sampled with probability q = m/N, updates clipped to S, "
                        "the average carries N(0, (σS/(qN))²) = N(0, (σS/m)²)"),
        *_SOURCES,
    )
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "clients", "target_epsilon": self.target_epsilon, "population": self.population,
                "rounds": self.rounds, "delta": self.delta, "clip": to_json(self.clip),
                "conversion": self.conversion, "rows": [r.to_dict() for r in self.rows],
                "formula": "noise_std = σ(q)·S/m, q = m/N, σ(q) the noise multiplier for the target ε",
                "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes)}


def client_noise(target_epsilon: Any, *, clients_per_round: Any, population: Any, rounds: Any, delta: Any,
                 clip: Any = 1, orders: Any = None, conversion: str = "improved") -> ClientNoiseTable:
    """DP-FedAvg's trade-off: for each client count m, the σ for the target ε and the noise σ·S/m.

    Each round samples each of the N clients with probability q = m/N; R rounds compose.  At a fixed
    σ the noise on the averaged update falls as 1/m, but a larger q spends more privacy per round, so
    the σ that keeps ε grows with m; the table shows the net effect.

    Examples
    --------
    >>> t = client_noise(2, clients_per_round="100,1000", population=10**6, rounds=1000, delta=1e-6,
    ...                  orders="2-64")
    >>> t.rows[0].noise_std > t.rows[1].noise_std
    True
    """
    n = _steps(population, "population", what="clients")
    counts = []
    items = list_items(clients_per_round, ",", what="clients per round", example="10,100,1000")
    for i, item in enumerate(items):
        try:
            m = _steps(item.strip() if isinstance(item, str) else item, "clients_per_round", what="clients")
        except InputError as exc:
            raise InputError(f"item {i} of the clients per round: {exc}") from None
        if m > n:
            raise InputError(f"clients_per_round={m} is above population={n}; a round samples from the "
                             "population")
        counts.append(m)
    c = _finite(clip, "clip")
    if c <= 0:
        raise InputError(f"clip={_shown(clip)} is not positive; the clipping norm S is, e.g. 1.0")
    rows = []
    for m in counts:
        s = solve_noise(target_epsilon, q=Fraction(m, n), steps=rounds, delta=delta, orders=orders,
                        conversion=conversion)
        rows.append(ClientNoise(clients_per_round=m, q=Fraction(m, n), noise_multiplier=s.noise_multiplier,
                                epsilon=s.epsilon, best_order=s.best_order,
                                noise_std=s.noise_multiplier * float(c) / m))
    s0 = solve_noise(target_epsilon, q=Fraction(counts[0], n), steps=rounds, delta=delta, orders=orders,
                     conversion=conversion)
    return ClientNoiseTable(target_epsilon=s0.target_epsilon, population=n, rounds=s0.steps, delta=s0.delta,
                            clip=c, conversion=s0.conversion, rows=tuple(rows))


# --------------------------------------------------------------------------------------------------
# one entry for the command line
# --------------------------------------------------------------------------------------------------


def privacy(*, q: Any = None, noise_multiplier: Any = None, steps: Any = None, epochs: Any = None,
            dataset: Any = None, batch: Any = None, phases: Any = None, delta: Any,
            target_epsilon: Any = None, clip: Any = None, clients_per_round: Any = None,
            population: Any = None, orders: Any = None,
            conversion: str = "improved") -> PrivacyAccount | NoiseSolution | ClientNoiseTable:
    """The privacy question the options ask: ε of a run, σ for a target ε, or DP-FedAvg's client table.

    * ε of a run: *phases*, or one phase from q (or batch/dataset), *noise_multiplier* and *steps*
      (or *epochs*: ⌈epochs·dataset/batch⌉ steps, a last partial batch counting as a step);
    * σ for *target_epsilon* (no *noise_multiplier*): :func:`solve_noise`;
    * with *clients_per_round* (and *population*, *steps* as rounds, *target_epsilon*):
      :func:`client_noise`.

    Examples
    --------
    >>> a = privacy(batch=256, dataset=60000, noise_multiplier=1.1, epochs=60, delta=1e-5, orders="2-63")
    >>> a.phases[0].steps, round(a.epsilon, 3), a.best_order
    (14063, 2.597, 8.0)
    """
    b = None if batch is None else _steps(batch, "batch", what="examples in a batch")
    n = None if dataset is None else _steps(dataset, "dataset", what="examples")
    converting = {"orders": orders, "conversion": conversion}
    if clients_per_round is not None:
        if population is None or steps is None or target_epsilon is None:
            raise InputError("the clients-per-round table needs population=, steps= (the rounds) and "
                             "target_epsilon=")
        if any(x is not None for x in (q, noise_multiplier, epochs, phases, b, n)):
            raise InputError("the clients-per-round table sets q = m/population and solves σ; drop q=, "
                             "noise_multiplier=, epochs=, phases=, batch= and dataset=")
        return client_noise(target_epsilon, clients_per_round=clients_per_round, population=population,
                            rounds=steps, delta=delta, clip=1 if clip is None else clip, **converting)
    if phases is not None:
        if any(x is not None for x in (q, noise_multiplier, steps, epochs, target_epsilon)):
            raise InputError("phases= already gives every q, σ and steps; drop q=, noise_multiplier=, "
                             "steps=, epochs= and target_epsilon=")
        return privacy_account(phases, delta=delta, clip=clip, batch=b, **converting)
    rate = _sampling_rate(q, b, n)
    if noise_multiplier is not None:
        _noise(noise_multiplier)
    length = _length(steps, epochs, b, n)
    kept = b if clip is not None else None
    if noise_multiplier is None:
        if target_epsilon is None:
            raise InputError("give noise_multiplier= (for ε) or target_epsilon= (for σ)")
        return solve_noise(target_epsilon, q=rate, steps=length, delta=delta, clip=clip, batch=kept,
                           **converting)
    if target_epsilon is not None:
        raise InputError("give noise_multiplier= (for ε) or target_epsilon= (for σ), not both")
    return privacy_account([(rate, noise_multiplier, length)], delta=delta, clip=clip, batch=kept,
                           **converting)


def _sampling_rate(q: Any, batch: int | None, dataset: int | None) -> Fraction:
    """q as given, or batch/dataset."""
    if q is not None:
        if batch is not None and dataset is not None:
            raise InputError("give the sampling rate once: q= or batch= with dataset=")
        _rate(q)
        return _finite(q, "q")
    if batch is None or dataset is None:
        raise InputError("the sampling rate needs q= or both batch= and dataset= (q = batch/dataset)")
    if batch > dataset:
        raise InputError(f"batch={batch} is above dataset={dataset}; a batch samples from the dataset")
    return Fraction(batch, dataset)


def _length(steps: Any, epochs: Any, batch: int | None, dataset: int | None) -> int:
    """The steps as given, or ⌈epochs·dataset/batch⌉."""
    if (steps is None) == (epochs is None):
        raise InputError("give exactly one of steps= and epochs=")
    if steps is not None:
        return _steps(steps)
    if batch is None or dataset is None:
        raise InputError("epochs= needs batch= and dataset= (steps = ⌈epochs·dataset/batch⌉)")
    e = _finite(epochs, "epochs")
    if e <= 0:
        raise InputError(f"epochs={_shown(epochs)} is not positive; e.g. 60")
    return _steps(math.ceil(e * dataset / batch))
