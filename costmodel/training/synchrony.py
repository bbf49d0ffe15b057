"""BSP, SSP and ASP simulated: N workers and a parameter server for T steps, with unequal step times.

Each of N workers runs T steps (clocks 0 … T − 1); step c of worker i computes for a time x[i, c], drawn
i.i.d. from a distribution (seeded) or, for a list, that worker's fixed time per step.  A worker reads the
parameters when it starts a step and pushes its gradient when the step ends.  Worker i may start step c

* **BSP** (bulk synchronous, [2]_): when every worker has finished step c − 1, a barrier; the server
  applies the step's N gradients together, so no gradient is stale.  The same times hold for an
  all-reduce in place of the server (communication is not priced here: fold it into the step times);
* **SSP** with bound s ([1]_ section 2): when every worker has finished step c − s − 1, so no worker runs
  more than s steps ahead of the slowest; s = 0 is BSP's schedule;
* **ASP** (asynchronous, [3]_): as soon as its own step c − 1 is done.

so start(i, c) = max(finish(i, c − 1), max_j finish(j, c − s − 1)), and finish = start + x (a max-plus
recursion; SSP's gate relaxes as s grows, so no finish time grows with s and the run's time lies between
ASP's and BSP's).  Under SSP and ASP the server applies each gradient as it arrives (in order of time, and
at equal times by clock, then worker), and a worker's read, made right after the last push it waited for,
holds every update applied so far.  A gradient's **staleness** is the number of updates the server applied
between that read and the gradient's own update ([4]_: with N equal-speed workers committing in turn it
is N − 1).  BSP's gradients are stale by 0; SSP with s = 0 keeps BSP's schedule but, applying on arrival,
its gradients are stale by the same-step updates applied before them.

Reported per rule: the run's time (the last worker's last push), steps per second (T over it; a step is
one gradient from each worker) and updates per second (gradients applied, N·T over it), per worker the
time computing, waiting for the rule (SSP's gate, BSP's barrier) and idle in all (waiting and after its
last step until the run ends), and the staleness histogram with its mean and maximum.  BSP's mean step
time is checked against the expected maximum of N draws, E[X_(N)], from
:func:`costmodel.training.federated_pricing.expected_order_statistic` ([5]_).

References
----------
.. [1] Q. Ho et al., "More Effective Distributed ML via a Stale Synchronous Parallel Parameter Server",
   NIPS 2013, section 2 (bounded staleness: at most s clocks ahead of the slowest).
.. [2] L. G. Valiant, "A bridging model for parallel computation", CACM 33(8), 1990 (bulk synchrony);
   here as Ho et al. section 2 states it, SSP with s = 0.
.. [3] J. Dean et al., "Large Scale Distributed Deep Networks", NIPS 2012 (Downpour SGD, asynchronous).
.. [4] I. Mitliagkas, C. Zhang, S. Hadjis, C. Ré, "Asynchrony begets Momentum", Allerton 2016
   (staleness as updates between read and write; E[τ] = N − 1 for N workers in turn).
.. [5] B. C. Arnold, N. Balakrishnan, H. N. Nagaraja, "A First Course in Order Statistics", SIAM 2008.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import to_json
from costmodel.errors import InputError, UnknownNameError
from costmodel.references import ARNOLD_2008, DEAN_2012, HO_2013, MITLIAGKAS_2016, Cited
from costmodel.training.federated_pricing import (
    ClientTimes,
    draw_times,
    expected_order_statistic,
    parse_client_times,
)
from costmodel.validate import whole

__all__ = ["CITED", "RULES", "RuleRun", "SspSweep", "SyncRun", "simulate_sync", "ssp_sweep",
           "step_times_label"]

CITED = (HO_2013, DEAN_2012, MITLIAGKAS_2016, ARNOLD_2008)

RULES = ("bsp", "ssp", "asp")
"""The synchronisation rules, in the order they are shown."""

_MAX_WORKERS = 10_000
_MAX_STEPS = 1_000_000
_MAX_EVENTS = 4_000_000
"""At most this many worker steps (N·T) a simulation runs (a few seconds)."""
_MAX_BOUNDS = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleRun:
    """One rule's run: its time, throughput, per-worker time, and the staleness of its gradients."""

    rule: str
    bound: int | None
    workers: int
    steps: int
    run_time_s: float
    busy_s: tuple[float, ...]
    waiting_s: tuple[float, ...]
    idle_s: tuple[float, ...]
    staleness_counts: tuple[int, ...]
    staleness_mean: float
    staleness_max: int
    staleness_steady_mean: float | None

    @property
    def label(self) -> str:
        """``BSP``, ``SSP s=2`` or ``ASP``."""
        return self.rule.upper() + (f" s={self.bound}" if self.rule == "ssp" else "")

    @property
    def steps_per_s(self) -> float:
        """Steps (one gradient from each worker) per second: T over the run's time."""
        return self.steps / self.run_time_s

    @property
    def updates_per_s(self) -> float:
        """Gradients applied per second: N·T over the run's time."""
        return self.workers * self.steps / self.run_time_s

    @property
    def mean_step_s(self) -> float:
        """The run's time over T."""
        return self.run_time_s / self.steps

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "bound": self.bound, "label": self.label, "run_time_s": self.run_time_s,
            "steps_per_s": self.steps_per_s, "updates_per_s": self.updates_per_s,
            "mean_step_s": self.mean_step_s, "busy_s": list(self.busy_s), "waiting_s": list(self.waiting_s),
            "idle_s": list(self.idle_s), "staleness_counts": list(self.staleness_counts),
            "staleness_mean": self.staleness_mean, "staleness_max": self.staleness_max,
            "staleness_steady_mean": self.staleness_steady_mean,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncRun:
    """BSP, SSP and ASP (those asked for) on the same step times, with BSP's expected step time."""

    workers: int
    steps: int
    step_times: ClientTimes
    seed: int
    runs: tuple[RuleRun, ...]
    expected_bsp_step_s: Fraction | float
    method: str
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"Staleness under BSP, SSP and ASP: {self.workers} workers, {self.steps} steps"

    @property
    def step_times_label(self) -> str:
        """The step times in words."""
        return step_times_label(self.step_times)

    def run(self, rule: str) -> RuleRun:
        """The run of *rule* (``bsp``, ``ssp`` or ``asp``)."""
        for r in self.runs:
            if r.rule == rule:
                return r
        raise KeyError(rule)

    @property
    def bsp_relative_difference(self) -> float | None:
        """|BSP's mean step time − E[X_(N)]| / E[X_(N)], where BSP was run."""
        bsp = [r for r in self.runs if r.rule == "bsp"]
        e = float(self.expected_bsp_step_s)
        return abs(bsp[0].mean_step_s - e) / e if bsp and e else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "workers": self.workers, "steps": self.steps, "step_times": self.step_times.to_dict(),
            "seed": self.seed, "runs": [r.to_dict() for r in self.runs],
            "expected_bsp_step_s": to_json(self.expected_bsp_step_s), "method": self.method,
            "bsp_relative_difference": self.bsp_relative_difference,
            "sources": [s.to_dict() for s in self.sources], "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SspSweep:
    """Throughput against SSP's bound s, with BSP's and ASP's on the same step times."""

    workers: int
    steps: int
    step_times: ClientTimes
    seed: int
    bounds: tuple[int, ...]
    ssp_updates_per_s: tuple[float, ...]
    bsp_updates_per_s: float
    asp_updates_per_s: float
    ssp_staleness_mean: tuple[float, ...]
    notes: tuple[str, ...] = ()

    @property
    def step_times_label(self) -> str:
        """The step times in words."""
        return step_times_label(self.step_times)

    @property
    def title(self) -> str:
        return f"SSP throughput against its bound s: {self.workers} workers, {self.steps} steps"

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title, "workers": self.workers, "steps": self.steps,
            "step_times": self.step_times.to_dict(), "seed": self.seed, "bounds": list(self.bounds),
            "ssp_updates_per_s": list(self.ssp_updates_per_s), "bsp_updates_per_s": self.bsp_updates_per_s,
            "asp_updates_per_s": self.asp_updates_per_s, "ssp_staleness_mean": list(self.ssp_staleness_mean),
            "notes": list(self.notes),
        }


def step_times_label(dist: ClientTimes) -> str:
    """Step times in words: a list is each worker's own fixed time.

    >>> step_times_label(parse_client_times("1s,2s"))
    "2 workers' fixed times, 1 s to 2 s"
    """
    from costmodel.units import format_time

    if dist.kind != "list":
        return dist.describe()
    low, high = format_time(min(dist.times)), format_time(max(dist.times))
    if len(set(dist.times)) == 1:
        return f"every worker's, {low}"
    return f"{len(dist.times)} workers' fixed times, {low} to {high}"


# --------------------------------------------------------------------------------------------------
# the simulation
# --------------------------------------------------------------------------------------------------


def _schedule(x: Any, bound: int | None) -> tuple[Any, Any]:
    """Start and finish times (N × T) of every step under the gate of *bound* (None: no gate, ASP).

    start(i, c) = max(finish(i, c − 1), max_j finish(j, c − bound − 1)); finish = start + x.
    """
    import numpy as np

    n, t = x.shape
    start = np.empty((n, t))
    finish = np.empty((n, t))
    latest = np.empty(t)  # max_j finish(j, c): when every worker has finished step c
    prev = np.zeros(n)
    for c in range(t):
        gate = latest[c - bound - 1] if bound is not None and c - bound - 1 >= 0 else 0.0
        begin = np.maximum(prev, gate)
        start[:, c] = begin
        prev = begin + x[:, c]
        finish[:, c] = prev
        latest[c] = prev.max()
    return start, finish


def _staleness(finish: Any, bound: int | None) -> Any:
    """Updates applied between each gradient's read and its own update (N × T), applied on arrival."""
    import numpy as np

    n, t = finish.shape
    clock = np.broadcast_to(np.arange(t), (n, t)).ravel()
    worker = np.broadcast_to(np.arange(n)[:, None], (n, t)).ravel()
    order = np.lexsort((worker, clock, finish.ravel()))
    pos = np.empty(n * t, dtype=np.int64)
    pos[order] = np.arange(n * t)
    pos = pos.reshape(n, t)
    read = np.zeros((n, t), dtype=np.int64)
    read[:, 1:] = pos[:, :-1] + 1  # right after its own previous push
    if bound is not None and t > bound + 1:
        gate = pos.max(axis=0)  # the last push of each step, in the server's order
        read[:, bound + 1:] = np.maximum(read[:, bound + 1:], gate[None, : t - bound - 1] + 1)
    return pos - read


def _run(x: Any, rule: str, bound: int | None) -> RuleRun:
    import numpy as np

    n, t = x.shape
    gate = 0 if rule == "bsp" else bound if rule == "ssp" else None
    start, finish = _schedule(x, gate)
    run_time = float(finish[:, -1].max())
    ends = np.concatenate([np.zeros((n, 1)), finish[:, :-1]], axis=1)
    waiting = (start - ends).sum(axis=1)
    busy = x.sum(axis=1)
    stale = np.zeros((n, t), dtype=np.int64) if rule == "bsp" else _staleness(finish, gate)
    counts = np.bincount(stale.ravel())
    steady = float(stale[:, 1:].mean()) if t > 1 else None
    return RuleRun(rule=rule, bound=bound if rule == "ssp" else None, workers=n, steps=t, run_time_s=run_time,
                   busy_s=tuple(float(v) for v in busy), waiting_s=tuple(float(v) for v in waiting),
                   idle_s=tuple(run_time - float(v) for v in busy),
                   staleness_counts=tuple(int(v) for v in counts), staleness_mean=float(stale.mean()),
                   staleness_max=int(stale.max()), staleness_steady_mean=steady)


def _times(dist: ClientTimes, workers: int | None, steps: int, seed: int) -> tuple[Any, int]:
    """The step times, N × T: a list gives each worker its own fixed time (one time: every worker's)."""
    import numpy as np

    if dist.kind == "list":
        if any(v <= 0 for v in dist.times):
            raise InputError("every worker's step time must be above 0 s")
        if workers is None:
            workers = len(dist.times)
        if len(dist.times) not in (1, workers):
            raise InputError(f"{len(dist.times)} step times for {workers} workers; give one time per worker, "
                             "or one for all")
        _limit(workers, steps)
        per = np.array([float(v) for v in dist.times])
        return np.broadcast_to(per[:, None] if len(per) > 1 else per, (workers, steps)).copy(), workers
    if workers is None:
        raise InputError("a distribution of step times needs workers= (the number of workers)")
    _limit(workers, steps)
    return draw_times(dist, np.random.default_rng(seed), (workers, steps)), workers


def _limit(workers: int, steps: int) -> None:
    if workers * steps > _MAX_EVENTS:
        raise InputError(f"{workers} workers × {steps} steps is {workers * steps} worker steps, more than "
                         f"{_MAX_EVENTS} to simulate; give fewer steps")


def _whole(value: Any, name: str, *, low: int, high: int, hint: str) -> int:
    """A whole number, from an int or its digits (``"3"``)."""
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("+-").isdigit() and len(text) < 20:
        text = int(text)
    return whole(text, name, low=low, high=high, hint=hint)


def _ints(workers: Any, steps: Any, seed: Any) -> tuple[int | None, int, int]:
    n = None if workers is None else _whole(workers, "workers", low=1, high=_MAX_WORKERS,
                                            hint="give the number of workers, e.g. workers=8")
    t = _whole(steps, "steps", low=1, high=_MAX_STEPS,
               hint="give the steps each worker runs, e.g. steps=1000")
    s = _whole(seed, "seed", low=0, high=2**63 - 1, hint="give a seed, e.g. seed=0")
    return n, t, s


def _bound(value: Any) -> int:
    return _whole(value, "bound", low=0, high=_MAX_STEPS, hint="give SSP's bound in steps, e.g. bound=2")


def simulate_sync(rule: str = "all", *, step_times: Any, steps: Any = 1000, workers: Any = None,
                  bound: Any = None, seed: Any = 0) -> SyncRun:
    """Simulate N workers for T steps under BSP, SSP with bound s, and ASP, on the same step times.

    Parameters
    ----------
    rule : {"all", "bsp", "ssp", "asp"}
        The rules to run (``all``: BSP, SSP where ``bound`` is given, and ASP).
    step_times : str or ClientTimes
        Each worker's step time: a list ``"1s,1s,2s"`` (worker i's fixed time; one time: every
        worker's) or a distribution ``"lognormal:1s,0.5"``, ``"exp:1s,0.5s"``, ``"uniform:1s,3s"``,
        drawn i.i.d. per worker and step.
    steps : int
        T, the steps each worker runs (default 1000).
    workers : int, optional
        N (default: the list's length; needed with a distribution).
    bound : int, optional
        SSP's bound s: no worker more than s steps ahead of the slowest (needed for ``ssp``).
    seed : int
        The generator's seed; the same seed gives the same times to every rule.

    Raises
    ------
    InputError
        An unknown rule, SSP without a bound, a list whose length is not N, more than 4·10⁶ worker steps.

    Examples
    --------
    >>> r = simulate_sync(step_times="1s", workers=4, steps=10)
    >>> r.run("bsp").staleness_mean, r.run("asp").staleness_steady_mean  # ASP in turn: N − 1
    (0.0, 3.0)
    >>> r = simulate_sync(step_times="1s,2s", steps=3, bound=1)
    >>> [(x.label, x.run_time_s) for x in r.runs]  # the slow worker sets the pace
    [('BSP', 6.0), ('SSP s=1', 6.0), ('ASP', 6.0)]
    >>> r.run("asp").idle_s  # the fast worker is done after 3 s
    (3.0, 0.0)
    """
    key = str(rule).strip().lower()
    if key not in (*RULES, "all"):
        raise UnknownNameError("rule", str(rule), (*RULES, "all"))
    dist = parse_client_times(step_times)
    n, t, s = _ints(workers, steps, seed)
    b = None if bound is None else _bound(bound)
    if key == "ssp" and b is None:
        raise InputError("SSP needs bound= (how many steps a worker may run ahead of the slowest), "
                         "e.g. bound=2")
    if key in ("bsp", "asp") and b is not None:
        raise InputError(f"bound= is SSP's; {key.upper()} has none; drop bound=")
    x, n = _times(dist, n, t, s)
    rules = [r for r in RULES if key in (r, "all") and (r != "ssp" or b is not None)]
    runs = tuple(_run(x, r, b) for r in rules)
    expected, method = _expected_max(dist, n)
    notes = [
        "communication is not priced: fold a push and pull (or BSP's all-reduce) into the step times",
        "SSP and ASP servers apply each gradient as it arrives; BSP's applies a step's gradients together",
        "staleness: the updates the server applied between a gradient's read and its own update",
        "idle: waiting for the rule, and after a worker's last step until the run ends",
    ]
    if key == "all" and b is None:
        notes.append("no bound given: SSP not run; give bound= to add it")
    if dist.kind == "list":
        notes.append("a list gives each worker its own fixed step time")
    else:
        notes.append(f"step times drawn i.i.d. per worker and step, seed {s}, the same for every rule")
    sources = (HO_2013.at("section 2: SSP, at most s clocks ahead of the slowest; s = 0 is BSP"),
               DEAN_2012.at("Downpour SGD: asynchronous workers and parameter server"),
               MITLIAGKAS_2016.at("staleness as updates between a read and its write; N − 1 in turn"),
               ARNOLD_2008.at("E[X_(N)]: the expected maximum of N draws, BSP's step time"))
    return SyncRun(workers=n, steps=t, step_times=dist, seed=s, runs=runs, expected_bsp_step_s=expected,
                   method=method, sources=sources, notes=tuple(notes))


def _expected_max(dist: ClientTimes, n: int) -> tuple[Fraction | float, str]:
    """BSP's expected step time: E[X_(N)] of N draws; for a list, the slowest worker's fixed time."""
    if dist.kind == "list":
        return max(dist.times), "exact: the slowest worker's time"
    value, method = expected_order_statistic(dist, n, n)
    if isinstance(value, Fraction) and value.denominator > 10**15:  # H_N for many workers: shown as a float
        return float(value), method + ", shown as a float"
    return value, method


def ssp_sweep(*, step_times: Any, bounds: Any = None, steps: Any = 1000, workers: Any = None,
              seed: Any = 0) -> SspSweep:
    """Updates per second under SSP for each bound s in *bounds* (default 0 to 8), beside BSP's and ASP's,
    all on the same step times (see :func:`simulate_sync`).

    >>> sw = ssp_sweep(step_times="uniform:1s,3s", workers=4, steps=200, bounds=[0, 1, 4])
    >>> sw.bsp_updates_per_s == sw.ssp_updates_per_s[0] <= sw.ssp_updates_per_s[-1] <= sw.asp_updates_per_s
    True
    """
    from costmodel.exact import list_items

    dist = parse_client_times(step_times)
    n, t, s = _ints(workers, steps, seed)
    items = list(range(9)) if bounds is None else list_items(bounds, ",", what="bounds", example="0,1,2,4,8")
    values = sorted({_bound(v) for v in items})
    if len(values) > _MAX_BOUNDS:
        raise InputError(f"{len(values)} bounds; give at most {_MAX_BOUNDS}")
    x, n = _times(dist, n, t, s)
    ssp = [_run(x, "ssp", v) for v in values]
    bsp, asp = _run(x, "bsp", None), _run(x, "asp", None)
    return SspSweep(workers=n, steps=t, step_times=dist, seed=s, bounds=tuple(values),
                    ssp_updates_per_s=tuple(r.updates_per_s for r in ssp),
                    bsp_updates_per_s=bsp.updates_per_s,
                    asp_updates_per_s=asp.updates_per_s,
                    ssp_staleness_mean=tuple(r.staleness_mean for r in ssp),
                    notes=("the same step times for every bound and rule; communication not priced",))
