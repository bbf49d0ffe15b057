"""A federated round, priced: bytes per client and per round, participants, and the expected round time.

Each round the server samples m clients, sends each the global state (download), each computes for
its own time X_k and uploads its update.  Client k is done after ``T_k = down + X_k + up``, where
``down = α_down + bytes_down·β_down`` and ``up = α_up + bytes_up·β_up`` on its links (α–β, one message
each way, no contention at the server; the server's aggregation is not priced).  The round ends

* ``all``: when every sampled client is done, T_(m), the maximum;
* ``k-fastest K``: when the K-th is done, T_(K) (the others are dropped);
* ``deadline D``: at min(D, T_(m)); FedAvg, SCAFFOLD and FedPAQ drop the clients not done by then,
  FedProx and FedNova keep their partial work (a straggler stops computing in time to upload,
  [2]_ section 3, [3]_ section 4), so every sampled client whose links alone fit in D takes part.

Bytes per client and algorithm (M = parameters × bytes per element):

========  ==================================  =============================================
FedAvg    down M, up M                        [1]_ Algorithm 1
SCAFFOLD  down 2M (x, c), up 2M (Δy, Δc)      [4]_ Algorithm 1: model and control variate
FedNova   down M, up M + 4 (one fp32 scalar)  [3]_ section 4: normalised update and its weight
FedProx   down M, up M                        [2]_ Algorithm 2: same bytes, more local compute
FedPAQ    down M, up ⌈(32 + b·P)/8⌉           [5]_ section 3: a quantised update, b bits per element
                                              and one fp32 norm (QSGD's low-precision quantiser)
========  ==================================  =============================================

Client compute times are a list (a population of N clients, m sampled without replacement) or a
distribution of i.i.d. times (``lognormal:MEDIAN,SHAPE``, ``exp:SHIFT,MEAN``: a shift plus an
exponential of that mean, ``uniform:LOW,HIGH``).  The expected round time is computed

* exactly where order statistics give it in closed form: for a list, the K-th smallest of a random
  m-subset of the sorted times is the j-th with probability C(j−1, K−1)·C(N−j, m−K)/C(N, m); for the
  shifted exponential, E[X_(K)] = shift + mean·Σ_{i<K} 1/(m − i) (Rényi's representation); for the
  uniform, E[X_(K)] = low + (high − low)·K/(m + 1) [6]_ (sections 2.5 and 4.6);
* otherwise by numerical integration of E[X_(K)] = ∫ P(X_(K) > x) dx, with
  P(X_(K) > x) = Σ_{i<K} C(m, i) F(x)^i (1 − F(x))^{m−i} [6]_ (section 2.2), by adaptive Simpson to
  a stated tolerance;

and always by a seeded simulation (numpy) of as many rounds as asked, shown beside it with the
simulation's standard error and their relative difference.

References
----------
.. [1] McMahan et al., AISTATS 2017, Algorithm 1 (FederatedAveraging).
.. [2] T. Li et al., "Federated Optimization in Heterogeneous Networks", MLSys 2020.
.. [3] J. Wang et al., "Tackling the Objective Inconsistency Problem in Heterogeneous Federated
   Optimization", NeurIPS 2020.
.. [4] S. P. Karimireddy et al., "SCAFFOLD: Stochastic Controlled Averaging for Federated
   Learning", ICML 2020.
.. [5] A. Reisizadeh et al., "FedPAQ: A Communication-Efficient Federated Learning Method with
   Periodic Averaging and Quantization", AISTATS 2020.
.. [6] B. C. Arnold, N. Balakrishnan, H. N. Nagaraja, "A First Course in Order Statistics", SIAM 2008.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Any

from costmodel._json import to_json
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import list_items, parse_number, show
from costmodel.references import (
    ARNOLD_2008,
    KARIMIREDDY_2020,
    LI_2020_FEDPROX,
    MCMAHAN_2017,
    REISIZADEH_2020,
    WANG_2020_FEDNOVA,
    Cited,
)
from costmodel.units import parse_time

__all__ = [
    "ALGORITHMS",
    "CITED",
    "ClientTimes",
    "FederatedRound",
    "draw_times",
    "expected_order_statistic",
    "federated_round",
    "parse_client_times",
]

CITED = (MCMAHAN_2017, KARIMIREDDY_2020, LI_2020_FEDPROX, WANG_2020_FEDNOVA, REISIZADEH_2020, ARNOLD_2008)


@dataclass(frozen=True, slots=True)
class _Algorithm:
    name: str
    down_models: int
    up_models: int
    up_extra_bytes: int
    keeps_partial_work: bool
    source: Cited


ALGORITHMS: dict[str, _Algorithm] = {a.name: a for a in (
    _Algorithm("fedavg", 1, 1, 0, False, MCMAHAN_2017.at("Algorithm 1: the model down, the model up")),
    _Algorithm("scaffold", 2, 2, 0, False, KARIMIREDDY_2020.at(
        "Algorithm 1: (x, c) down, (Δy_i, Δc_i) up: model and control variate each way")),
    _Algorithm("fednova", 1, 1, 4, True, WANG_2020_FEDNOVA.at(
        "section 4: the normalised update and one scalar weight up; unequal local steps kept")),
    _Algorithm("fedprox", 1, 1, 0, True, LI_2020_FEDPROX.at(
        "Algorithm 2: FedAvg's bytes; partial work (γ-inexact solutions) of stragglers kept")),
    _Algorithm("fedpaq", 1, 0, 4, False, REISIZADEH_2020.at(
        "section 3: uploads quantised (a low-precision quantiser: b bits per element and one norm)")),
)}
"""The algorithms priced, by name: models sent down and up, extra upload bytes, partial work kept."""

_MAX_SAMPLED = 1000
_MAX_POPULATION = 100_000
_MAX_DRAWS = 10**7
_TOLERANCE = 1e-9


# --------------------------------------------------------------------------------------------------
# client times
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientTimes:
    """Client compute times: a list (``times``) or a distribution (``kind`` with its two parameters).

    ``kind`` is ``list``, ``lognormal`` (a = median, b = shape σ of ln X), ``exp`` (a = shift,
    b = mean of the exponential part) or ``uniform`` (a = low, b = high); times in seconds.
    """

    kind: str
    a: Fraction = Fraction(0)
    b: Fraction = Fraction(0)
    times: tuple[Fraction, ...] = ()

    @property
    def low_s(self) -> Fraction:
        """The least time a client can take."""
        if self.kind == "list":
            return min(self.times)
        return {"lognormal": Fraction(0), "exp": self.a, "uniform": self.a}[self.kind]

    def cdf(self, x: float) -> float:
        """P(X ≤ x)."""
        a, b = float(self.a), float(self.b)
        if self.kind == "lognormal":
            return 0.0 if x <= 0 else NormalDist().cdf((math.log(x) - math.log(a)) / b)
        if self.kind == "exp":
            return 0.0 if x <= a else -math.expm1(-(x - a) / b)
        if self.kind == "uniform":
            return min(1.0, max(0.0, (x - a) / (b - a)))
        return sum(1 for t in self.times if t <= x) / len(self.times)

    def describe(self) -> str:
        """The distribution as the user wrote it, in words."""
        from costmodel.units import format_time

        if self.kind == "list":
            low, high = format_time(min(self.times)), format_time(max(self.times))
            if len(self.times) == 1:
                return f"one client's time, {low}"
            return f"{len(self.times)} clients' times, {low} to {high}"
        if self.kind == "lognormal":
            return f"log-normal, median {format_time(self.a)}, shape σ = {float(self.b):g}"
        if self.kind == "exp":
            return f"{format_time(self.a)} + exponential of mean {format_time(self.b)}"
        return f"uniform from {format_time(self.a)} to {format_time(self.b)}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "list":
            out["times_s"] = to_json(self.times)
        else:
            names = {"lognormal": ("median_s", "shape"), "exp": ("shift_s", "mean_s"),
                     "uniform": ("low_s", "high_s")}[self.kind]
            out.update({names[0]: to_json(self.a), names[1]: to_json(self.b)})
        out["description"] = self.describe()
        return out


_KINDS = {"lognormal": "lognormal", "log-normal": "lognormal", "exp": "exp", "exponential": "exp",
          "shifted-exponential": "exp", "uniform": "uniform"}


def _time(text: Any, what: str, *, allow_zero: bool = True) -> Fraction:
    try:
        return parse_time(text.strip() if isinstance(text, str) else text, allow_zero=allow_zero)
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None


def parse_client_times(value: Any) -> ClientTimes:
    """Client compute times from ``"1s,2s,5s"`` (a list), ``"lognormal:2s,0.5"``, ``"exp:1s,0.5s"`` or
    ``"uniform:1s,3s"``.

    Examples
    --------
    >>> parse_client_times("1s, 2s, 500ms").times
    (Fraction(1, 1), Fraction(2, 1), Fraction(1, 2))
    >>> parse_client_times("exp:1s,0.5s").describe()
    '1 s + exponential of mean 500 ms'
    """
    if isinstance(value, ClientTimes):
        return value
    if isinstance(value, str) and ":" in value:
        kind_text, _, rest = value.partition(":")
        kind = _KINDS.get(kind_text.strip().lower())
        if kind is None:
            raise UnknownNameError("distribution", kind_text.strip(), ("lognormal", "exp", "uniform"))
        parts = rest.split(",")
        example = {"lognormal": "lognormal:2s,0.5", "exp": "exp:1s,0.5s", "uniform": "uniform:1s,3s"}[kind]
        if len(parts) != 2:
            raise InputError(f"{value!r} needs two parameters; write e.g. {example}")
        if kind == "lognormal":
            a = _time(parts[0], "the log-normal's median", allow_zero=False)
            b = parse_number(parts[1].strip(), what="shape")
            if not 0 < b <= 5:
                raise InputError(f"{value!r}: the shape σ must be in (0, 5]; e.g. {example}")
        else:
            a = _time(parts[0], "the first parameter")
            b = _time(parts[1], "the second parameter", allow_zero=False)
            if kind == "uniform" and not a < b:
                raise InputError(f"{value!r}: the low end must be below the high end; e.g. {example}")
        return ClientTimes(kind=kind, a=a, b=b)
    items = list_items(value, ",", what="client times", example="1s,2s,5s")
    if len(items) > _MAX_POPULATION:
        raise InputError(f"{len(items)} client times; costmodel takes at most {_MAX_POPULATION}")
    times = tuple(_time(t, f"client {i}'s time") for i, t in enumerate(items))
    return ClientTimes(kind="list", times=times)


# --------------------------------------------------------------------------------------------------
# order statistics
# --------------------------------------------------------------------------------------------------


def _list_kth(times: tuple[Fraction, ...], m: int, k: int) -> Fraction:
    """E of the k-th smallest of a uniformly random m-subset of *times*, exactly."""
    ordered = sorted(times)
    n = len(ordered)
    total = math.comb(n, m)
    return sum((ordered[j - 1] * Fraction(math.comb(j - 1, k - 1) * math.comb(n - j, m - k), total)
                for j in range(k, n - m + k + 1)), Fraction(0))


def _list_capped_max(times: tuple[Fraction, ...], m: int, cap: Fraction) -> Fraction:
    """E[min(cap, max of a random m-subset)], exactly."""
    ordered = sorted(times)
    n = len(ordered)
    total = math.comb(n, m)
    return sum((min(cap, ordered[j - 1]) * Fraction(math.comb(j - 1, m - 1), total) for j in range(m, n + 1)),
               Fraction(0))


def _simpson(f: Callable[[float], float], a: float, b: float, tol: float) -> float:
    """∫_a^b f by adaptive Simpson to an absolute tolerance *tol* (Richardson-corrected, depth ≤ 40)."""
    def rule(lo: float, hi: float, f_lo: float, f_mid: float, f_hi: float) -> float:
        return (hi - lo) / 6 * (f_lo + 4 * f_mid + f_hi)

    total = 0.0
    fa, fb, fm = f(a), f(b), f((a + b) / 2)
    stack = [((a, b), (fa, fm, fb), rule(a, b, fa, fm, fb), tol, 40)]
    while stack:
        (lo, hi), (f_lo, f_mid, f_hi), whole, room, depth = stack.pop()
        mid = (lo + hi) / 2
        f_lm, f_rm = f((lo + mid) / 2), f((mid + hi) / 2)
        left, right = rule(lo, mid, f_lo, f_lm, f_mid), rule(mid, hi, f_mid, f_rm, f_hi)
        if depth <= 0 or abs(left + right - whole) <= 15 * room:
            total += left + right + (left + right - whole) / 15
            continue
        stack.append(((lo, mid), (f_lo, f_lm, f_mid), left, room / 2, depth - 1))
        stack.append(((mid, hi), (f_mid, f_rm, f_hi), right, room / 2, depth - 1))
    return total


def _survival_kth(p: float, m: int, k: int) -> float:
    """P(X_(k) > x) with p = F(x): fewer than k of m below x, Σ_{i<k} C(m, i) p^i (1 − p)^{m−i}."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    if k == m:  # the maximum: every term but the last, 1 − p^m
        return -math.expm1(m * math.log(p))
    lp, lq = math.log(p), math.log1p(-p)
    lg_m = math.lgamma(m + 1)
    return min(1.0, sum(math.exp(lg_m - math.lgamma(i + 1) - math.lgamma(m - i + 1) + i * lp + (m - i) * lq)
                        for i in range(k)))


def _integrated_kth(dist: ClientTimes, m: int, k: int) -> float:
    """E[X_(k)] = ∫_0^∞ P(X_(k) > x) dx for a log-normal (in y = ln x, over ±14 shapes of the median)."""
    mu, s = math.log(float(dist.a)), float(dist.b)
    lo, hi = mu - 14 * s, mu + 14 * s
    scale = float(dist.a)

    def integrand(y: float) -> float:
        x = math.exp(y)
        return _survival_kth(dist.cdf(x), m, k) * x

    return math.exp(lo) + _simpson(integrand, lo, hi, _TOLERANCE * scale)


def expected_order_statistic(dist: ClientTimes, m: int, k: int) -> tuple[Fraction | float, str]:
    """E[X_(k)], the k-th smallest of m i.i.d. times (of a list: of a random m-subset), and how it was
    computed: exact for a list, the shifted exponential and the uniform, integrated for the log-normal
    ([6]_ sections 2.2, 2.5 and 4.6).

    >>> expected_order_statistic(parse_client_times("exp:1s,2s"), 2, 2)  # 1 + 2·(1/2 + 1)
    (Fraction(4, 1), "exact: shift + mean·Σ_{i<K} 1/(m − i) (Rényi's representation)")
    """
    if dist.kind == "list":
        return _list_kth(dist.times, m, k), "exact: order statistics of a random subset of the list"
    if dist.kind == "exp":
        return (dist.a + dist.b * sum((Fraction(1, m - i) for i in range(k)), Fraction(0)),
                "exact: shift + mean·Σ_{i<K} 1/(m − i) (Rényi's representation)")
    if dist.kind == "uniform":
        return (dist.a + (dist.b - dist.a) * Fraction(k, m + 1),
                "exact: low + (high − low)·K/(m + 1)")
    return (_integrated_kth(dist, m, k),
            f"numerical: ∫ P(X_(K) > x) dx by adaptive Simpson, tolerance {_TOLERANCE:g} × the median")


def _expected_capped_max(dist: ClientTimes, m: int, cap: Fraction | float) -> tuple[Fraction | float, str]:
    """E[min(cap, X_(m))] (cap ≥ 0) and how it was computed."""
    if dist.kind == "list":
        return _list_capped_max(dist.times, m, Fraction(cap)), "exact: order statistics of the list"
    if cap <= 0:
        return 0.0, "exact"
    c = float(cap)
    value = _simpson(lambda x: 1.0 - dist.cdf(x) ** m, 0.0, c, _TOLERANCE * max(c, 1e-12))
    return value, f"numerical: ∫_0^D (1 − F(x)^m) dx by adaptive Simpson, tolerance {_TOLERANCE:g} × D"


def _expected_work(dist: ClientTimes, room: Fraction | float) -> tuple[Fraction | float, str]:
    """E[min(1, room/X)]: the share of its local work a client does in *room* seconds of compute."""
    if dist.kind == "list":
        r = Fraction(room)
        return (sum((Fraction(1) if t <= r else r / t for t in dist.times), Fraction(0)) / len(dist.times),
                "exact: the mean over the list")
    share = float(room)
    value = _simpson(lambda t: dist.cdf(share / t) if t > 0 else 1.0, 0.0, 1.0, _TOLERANCE)
    return value, f"numerical: ∫_0^1 F(room/t) dt by adaptive Simpson, tolerance {_TOLERANCE:g}"


# --------------------------------------------------------------------------------------------------
# the simulation
# --------------------------------------------------------------------------------------------------


_MAX_SIMULATED = 2 * 10**8
"""At most this many random numbers a simulation draws (a few seconds)."""


def _draw_width(dist: ClientTimes, m: int) -> int:
    """Random numbers drawn per simulated round: one per sampled client, or one per client of a list."""
    return len(dist.times) if dist.kind == "list" else m


def draw_times(dist: ClientTimes, rng: Any, shape: tuple[int, ...]) -> Any:
    """An array of *shape* i.i.d. times in seconds from the distribution *dist* (not a list), drawn from the
    numpy generator *rng*."""
    if dist.kind == "lognormal":
        return rng.lognormal(mean=math.log(float(dist.a)), sigma=float(dist.b), size=shape)
    if dist.kind == "exp":
        return float(dist.a) + rng.exponential(float(dist.b), size=shape)
    if dist.kind == "uniform":
        return rng.uniform(float(dist.a), float(dist.b), size=shape)
    raise InputError("a list of times is not a distribution to draw from; give lognormal:, exp: or uniform:")


def _simulate(dist: ClientTimes, *, m: int, k: int | None, room: float | None, deadline: float | None,
              draws: int, seed: int) -> dict[str, tuple[float, float]]:
    """Seeded rounds: the mean and standard error of the compute part of the round time, the
    participants and the work share (each where it applies)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    chunk = max(1, 2_000_000 // _draw_width(dist, m))
    sums: dict[str, list[float]] = {"time": [0.0, 0.0], "participants": [0.0, 0.0], "work": [0.0, 0.0]}
    population = None if dist.kind != "list" else np.array([float(t) for t in dist.times])
    done = 0
    while done < draws:
        n = min(chunk, draws - done)
        if population is not None:
            pick = rng.random((n, len(population))).argpartition(m - 1, axis=1)[:, :m]
            x = population[pick]
        else:
            x = draw_times(dist, rng, (n, m))
        if deadline is None:
            assert k is not None
            values = {"time": np.partition(x, k - 1, axis=1)[:, k - 1]}
        else:
            assert room is not None
            values = {"time": np.minimum(room, x.max(axis=1)),
                      "participants": (x <= room).sum(axis=1).astype(float),
                      "work": np.minimum(1.0, room / x).mean(axis=1)}
        for key, v in values.items():
            sums[key][0] += float(v.sum())
            sums[key][1] += float((v * v).sum())
        done += n
    out = {}
    for key, (s1, s2) in sums.items():
        if key == "time" or deadline is not None:
            mean = s1 / draws
            var = max(0.0, s2 / draws - mean * mean)
            out[key] = (mean, math.sqrt(var / draws))
    return out


# --------------------------------------------------------------------------------------------------
# the round
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FederatedRound:
    """One federated round priced: bytes, links' times, participants and the expected round time."""

    algorithm: str
    params: int
    bytes_per_element: int
    bits: int | None
    clients: ClientTimes
    sampled: int
    rule: str
    k: int | None
    deadline_s: Fraction | None
    download_bytes: int
    upload_bytes: int
    download_s: Fraction
    upload_s: Fraction
    expected_participants: Fraction | float
    expected_round_time_s: Fraction | float
    method: str
    simulated_round_time_s: float
    simulated_stderr_s: float
    simulated_participants: float | None
    work_share: Fraction | float | None
    simulated_work_share: float | None
    draws: int
    seed: int
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def bytes_down_per_round(self) -> int:
        """The server sends every sampled client the download."""
        return self.sampled * self.download_bytes

    @property
    def bytes_up_per_round(self) -> Fraction | float:
        """Expected uploads: one per participant."""
        return self.expected_participants * self.upload_bytes

    @property
    def relative_difference(self) -> float:
        """|simulated − expected| / expected."""
        e = float(self.expected_round_time_s)
        return abs(self.simulated_round_time_s - e) / e if e else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm, "params": self.params, "bytes_per_element": self.bytes_per_element,
            "bits": self.bits, "clients": self.clients.to_dict(), "sampled": self.sampled, "rule": self.rule,
            "k": self.k, "deadline_s": to_json(self.deadline_s),
            "download_bytes": self.download_bytes, "upload_bytes": self.upload_bytes,
            "download_s": to_json(self.download_s), "upload_s": to_json(self.upload_s),
            "expected_participants": to_json(self.expected_participants),
            "bytes_down_per_round": self.bytes_down_per_round,
            "bytes_up_per_round": to_json(self.bytes_up_per_round),
            "bytes_per_round": to_json(self.bytes_down_per_round + self.bytes_up_per_round),
            "expected_round_time_s": to_json(self.expected_round_time_s), "method": self.method,
            "simulated_round_time_s": self.simulated_round_time_s,
            "simulated_stderr_s": self.simulated_stderr_s,
            "relative_difference": self.relative_difference,
            "simulated_participants": self.simulated_participants,
            "work_share": None if self.work_share is None else to_json(self.work_share),
            "simulated_work_share": self.simulated_work_share,
            "draws": self.draws, "seed": self.seed,
            "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes),
        }


def _whole(value: Any, name: str, *, low: int, high: int) -> int:
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("+-").isdigit() and len(text) < 20:
        text = int(text)
    if isinstance(text, bool) or not isinstance(text, int):
        raise InputError(f"{name}={show(value)} is not a whole number; e.g. {name}={low}")
    if not low <= text <= high:
        raise InputError(f"{name}={text} is outside {low} to {high}")
    return text


def _link(value: Any, name: str) -> Any:
    """An α–β link from ``ALPHA:RATE``, a profile's name or a :class:`~costmodel.params.LinkParams`."""
    from costmodel.links import link_of
    from costmodel.params import LinkParams

    if isinstance(value, LinkParams):
        return value
    try:
        found = link_of(value)
    except InputError as exc:
        raise InputError(f"{name}: {exc}") from None
    link = found if isinstance(found, LinkParams) else getattr(found, "link", None)
    if not isinstance(link, LinkParams):
        raise InputError(f"{name}={value!r} has no single α and β (a profile of segments); "
                         "give ALPHA:RATE, e.g. 50ms:10Mb/s")
    return link


def _sampled(dist: ClientTimes, sampled: Any) -> int:
    """The clients per round: the whole list by default; a distribution needs it."""
    if dist.kind == "list":
        m = len(dist.times) if sampled is None else _whole(sampled, "sampled", low=1, high=len(dist.times))
        if math.comb(len(dist.times), m) > 10**300:
            raise InputError(f"{len(dist.times)} clients choose {m} is too many subsets to sum exactly; "
                             "sample fewer or give a distribution")
        return m
    if sampled is None:
        raise InputError("a distribution of client times needs sampled= (the clients per round)")
    return _whole(sampled, "sampled", low=1, high=_MAX_SAMPLED)


def _payloads(algo: _Algorithm, p: int, width: int, bits: int | None) -> tuple[int, int]:
    """Bytes down and up per client."""
    model = p * width
    quantised = 0 if bits is None else -(-p * bits // 8)
    return algo.down_models * model, algo.up_models * model + algo.up_extra_bytes + quantised


@dataclass(frozen=True, slots=True)
class _Outcome:
    rule: str
    k: int | None
    compute_s: Fraction | float
    method: str
    participants: Fraction | float
    sim: dict[str, tuple[float, float]]
    work: Fraction | float | None = None
    note: str | None = None


def _waiting(dist: ClientTimes, m: int, fastest: Any, *, draws: int, seed: int) -> _Outcome:
    """The round that waits for all, or for the K fastest."""
    k = m if fastest is None else _whole(fastest, "fastest", low=1, high=m)
    expected, method = expected_order_statistic(dist, m, k)
    sim = _simulate(dist, m=m, k=k, room=None, deadline=None, draws=draws, seed=seed)
    return _Outcome("all" if fastest is None else "k-fastest", k, expected, method, Fraction(k), sim)


def _until(dist: ClientTimes, m: int, algo: _Algorithm, *, deadline: Fraction, links: Fraction, draws: int,
           seed: int) -> _Outcome:
    """The round that ends at a deadline: stragglers dropped, or their partial work kept."""
    room = deadline - links
    if algo.keeps_partial_work and room <= 0:
        raise InputError(f"deadline={_show_time(deadline)} is before any client can finish: the links alone "
                         f"take {_show_time(links)}; give a later deadline")
    if not algo.keeps_partial_work and room < dist.low_s:
        raise InputError(f"deadline={_show_time(deadline)} is before any client can finish: the fastest "
                         f"takes {_show_time(links + dist.low_s)}; give a later deadline")
    exact_room: Fraction | float = room if dist.kind == "list" else float(room)
    capped, method = _expected_capped_max(dist, m, exact_room)
    sim = _simulate(dist, m=m, k=None, room=float(room), deadline=float(deadline), draws=draws, seed=seed)
    if algo.keeps_partial_work:
        work, _ = _expected_work(dist, exact_room)
        return _Outcome("deadline", None, capped, method, Fraction(m), sim, work,
                        f"{algo.name} keeps stragglers' partial work: every sampled client uploads by the "
                        "deadline, having done the share of its local work that fits")
    reach = (Fraction(sum(1 for t in dist.times if t <= room), len(dist.times)) if dist.kind == "list"
             else dist.cdf(float(room)))
    return _Outcome("deadline", None, capped, method, m * reach, sim, None,
                    f"{algo.name} drops the clients not done by the deadline")


def federated_round(algorithm: str = "fedavg", *, params: Any, client_times: Any, uplink: Any,
                    downlink: Any = None, sampled: Any = None, fastest: Any = None, deadline: Any = None,
                    dtype: Any = "fp32", bits: Any = None, draws: Any = 100_000,
                    seed: Any = 0) -> FederatedRound:
    """Price one federated round of *algorithm*: bytes, links, participants and the expected round time.

    Parameters
    ----------
    algorithm : {"fedavg", "scaffold", "fednova", "fedprox", "fedpaq"}
    params : int or str
        Model parameters P (``25M``).
    client_times : str or ClientTimes
        A list ``"1s,2s,5s"`` (the population) or a distribution ``"lognormal:2s,0.5"``,
        ``"exp:1s,0.5s"``, ``"uniform:1s,3s"`` (compute time per round).
    uplink, downlink : str or LinkParams
        ``ALPHA:RATE`` (``50ms:10Mb/s``) or a profile's name, for every client; the downlink is the
        uplink unless given.
    sampled : int, optional
        Clients per round m (default: the whole list; needed with a distribution).
    fastest, deadline : optional
        Wait for the K fastest, or until a deadline (a time); neither: wait for all.
    dtype : str
        The model's element type (default fp32).
    bits : int, optional
        FedPAQ's bits per element of an upload (default 8).
    draws, seed : int
        Simulated rounds and the generator's seed.

    Raises
    ------
    InputError
        For an unknown algorithm, a deadline before any client can finish, K above m, m above the
        population, bad times or links.

    Examples
    --------
    >>> r = federated_round("scaffold", params="1M", client_times="1s,2s,3s,4s", sampled=2, fastest=1,
    ...                     uplink="0s:1MB/s", downlink="0s:4MB/s", draws=1000)
    >>> r.upload_bytes, r.download_bytes, r.upload_s, r.download_s
    (8000000, 8000000, Fraction(8, 1), Fraction(2, 1))
    >>> r.expected_round_time_s  # 10 s of links + E[min of 2 of 1..4 s] = 10 + 5/3
    Fraction(35, 3)
    """
    from costmodel.training.counts import parse_count, parse_dtype

    key = str(algorithm).strip().lower()
    if key not in ALGORITHMS:
        raise UnknownNameError("algorithm", str(algorithm), tuple(ALGORITHMS))
    algo = ALGORITHMS[key]
    p = parse_count(params)
    width = parse_dtype(dtype).bytes_per_element
    if bits is not None and key != "fedpaq":
        raise InputError(f"bits= is FedPAQ's; {key} sends full-precision updates; drop bits=")
    b = _whole(8 if bits is None else bits, "bits", low=1, high=32) if key == "fedpaq" else None
    down_bytes, up_bytes = _payloads(algo, p, width, b)
    dist = parse_client_times(client_times)
    m = _sampled(dist, sampled)
    up_link = _link(uplink, "uplink")
    down_link = up_link if downlink is None else _link(downlink, "downlink")
    down_s = down_link.alpha_s + down_bytes * down_link.beta_s_per_byte
    up_s = up_link.alpha_s + up_bytes * up_link.beta_s_per_byte
    n_draws = _whole(draws, "draws", low=100, high=_MAX_DRAWS)
    n_seed = _whole(seed, "seed", low=0, high=2**63 - 1)
    if n_draws * _draw_width(dist, m) > _MAX_SIMULATED:
        raise InputError(f"draws={n_draws} rounds of {_draw_width(dist, m)} random times is more than "
                         f"{_MAX_SIMULATED:.0e} to simulate; give fewer draws, e.g. draws=100000")
    if fastest is not None and deadline is not None:
        raise InputError("give fastest= (wait for the K fastest) or deadline=, not both")
    d = None if deadline is None else _time(deadline, "deadline", allow_zero=False)
    if d is None:
        outcome = _waiting(dist, m, fastest, draws=n_draws, seed=n_seed)
    else:
        outcome = _until(dist, m, algo, deadline=d, links=down_s + up_s, draws=n_draws, seed=n_seed)
    notes = [f"a client's round: {_show_time(down_s)} down + its compute + {_show_time(up_s)} up; no "
             "contention at the server, aggregation not priced"]
    notes += [outcome.note] if outcome.note else []
    if key == "fedprox":
        notes.append("FedProx's proximal term adds a vector update per local step: give its compute times")
    sim = outcome.sim
    return FederatedRound(
        algorithm=key, params=p, bytes_per_element=width, bits=b, clients=dist, sampled=m, rule=outcome.rule,
        k=outcome.k, deadline_s=d, download_bytes=down_bytes, upload_bytes=up_bytes, download_s=down_s,
        upload_s=up_s, expected_participants=outcome.participants,
        expected_round_time_s=down_s + up_s + outcome.compute_s, method=outcome.method,
        simulated_round_time_s=float(down_s + up_s) + sim["time"][0], simulated_stderr_s=sim["time"][1],
        simulated_participants=sim["participants"][0] if d is not None and outcome.work is None else None,
        work_share=outcome.work, simulated_work_share=sim["work"][0] if outcome.work is not None else None,
        draws=n_draws, seed=n_seed,
        sources=(algo.source, ARNOLD_2008.at("sections 2.2, 2.5 and 4.6: the distribution and moments of "
                                             "the K-th order statistic")),
        notes=tuple(notes))


def _show_time(x: Fraction | float) -> str:
    from costmodel.units import format_time

    return str(format_time(x))
