"""BSP, SSP and ASP simulated (costmodel.training.synchrony): throughput, idle time, staleness.

Cross-checks: an independent event-by-event simulation (a heap of pushes, workers blocked and released
one by one) gives the same times and staleness; ASP with N equal-speed workers is stale by N − 1 after
each worker's first step (Mitliagkas et al. 2016); BSP's mean step time is the expected maximum of N
draws, E[X_(N)], from the order statistics of costmodel.training.federated_pricing (shift + mean·H_N for
the shifted exponential, low + (high − low)·N/(N + 1) for the uniform).
"""

from __future__ import annotations

import heapq
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.training.federated_pricing import draw_times, expected_order_statistic, parse_client_times
from costmodel.training.synchrony import simulate_sync, ssp_sweep


def _events(x: np.ndarray, bound: int | None) -> tuple[float, list[float], list[list[int]]]:
    """Event by event: pushes in order (time, step, worker); a push applies one update, then its worker
    and any worker the gate now lets through start (and read). Returns the run time, each worker's time
    spent waiting, and each gradient's staleness."""
    n, t = x.shape
    version = 0
    done = [0] * n  # steps finished per worker
    read = [0] * n
    waiting = [0.0] * n
    ended = [0.0] * n
    stale = [[0] * t for _ in range(n)]
    heap: list[tuple[float, int, int]] = []
    blocked: set[int] = set()

    def allowed(i: int) -> bool:
        return bound is None or min(done) >= done[i] - bound

    def start(i: int, now: float) -> None:
        waiting[i] += now - ended[i]
        read[i] = version
        heapq.heappush(heap, (now + float(x[i, done[i]]), done[i], i))

    for i in range(n):
        start(i, 0.0)
    now = 0.0
    while heap:
        now, c, i = heapq.heappop(heap)
        stale[i][c] = version - read[i]
        version += 1
        done[i] += 1
        ended[i] = now
        if done[i] < t:
            if allowed(i):
                start(i, now)
            else:
                blocked.add(i)
        for j in sorted(blocked):
            if allowed(j):
                blocked.discard(j)
                start(j, now)
    return now, waiting, stale


SEEDS = st.integers(0, 2**32 - 1)
DISTRIBUTIONS = st.sampled_from(["exp:0s,1s", "uniform:1s,3s", "lognormal:1s,1"])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 5), t=st.integers(1, 12), seed=SEEDS, dist=DISTRIBUTIONS,
       bound=st.integers(0, 4))
def test_the_simulation_is_the_event_by_event_one(n, t, seed, dist, bound):
    x = draw_times(parse_client_times(dist), np.random.default_rng(seed), (n, t))
    r = simulate_sync(step_times=dist, workers=n, steps=t, seed=seed, bound=bound)
    for rule, gate in (("ssp", bound), ("asp", None), ("bsp", 0)):
        run = r.run(rule)
        end, waiting, stale = _events(x, gate)
        assert run.run_time_s == end
        assert run.waiting_s == pytest.approx(waiting, abs=1e-9)
        if rule != "bsp":  # BSP applies a step's gradients together: 0
            assert run.staleness_counts == tuple(np.bincount(np.array(stale).ravel()))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 6), t=st.integers(1, 25), seed=SEEDS, dist=DISTRIBUTIONS)
def test_ssp_throughput_lies_between_bsps_and_asps_and_grows_with_s(n, t, seed, dist):
    sw = ssp_sweep(step_times=dist, workers=n, steps=t, seed=seed, bounds="0,1,2,3,5,8,30")
    rates = sw.ssp_updates_per_s
    assert sw.bsp_updates_per_s == rates[0]  # s = 0 is BSP
    assert all(a <= b for a, b in itertools.pairwise(rates))
    assert all(sw.bsp_updates_per_s <= v <= sw.asp_updates_per_s for v in rates)
    assert rates[-1] == sw.asp_updates_per_s  # s ≥ T − 1 never waits


@pytest.mark.parametrize("dist", ["lognormal:1s,0.5", "exp:1s,0.5s", "uniform:1s,3s"])
def test_ssp_at_zero_is_bsp(dist):
    r = simulate_sync(step_times=dist, workers=6, steps=300, bound=0, seed=3)
    bsp, ssp = r.run("bsp"), r.run("ssp")
    assert (ssp.run_time_s, ssp.waiting_s, ssp.idle_s, ssp.busy_s) == (bsp.run_time_s, bsp.waiting_s, bsp.idle_s,
                                                                      bsp.busy_s)
    assert bsp.staleness_counts == (6 * 300,)


@pytest.mark.parametrize(("n", "t"), [(2, 1), (4, 10), (16, 50), (1, 5)])
def test_asp_with_equal_speeds_is_stale_by_n_minus_one(n, t):
    asp = simulate_sync("asp", step_times="2s", workers=n, steps=t).run("asp")
    # step 0: all read the initial model, stale by 0, 1, …, N − 1; after it, each worker in turn: N − 1
    assert asp.staleness_steady_mean == (n - 1 if t > 1 else None)
    assert Fraction(asp.staleness_mean).limit_denominator(10**6) == Fraction((n - 1) * (2 * t - 1), 2 * t)
    assert asp.run_time_s == 2 * t and asp.updates_per_s == n / 2


def test_asp_with_equally_distributed_speeds_is_stale_by_n_minus_one_on_average():
    asp = simulate_sync("asp", step_times="exp:0s,1s", workers=6, steps=20_000).run("asp")
    assert asp.staleness_steady_mean == pytest.approx(5, rel=0.01)


@pytest.mark.parametrize(("dist", "exact"), [
    ("exp:1s,0.5s", Fraction(1) + Fraction(1, 2) * sum(Fraction(1, i) for i in range(1, 9))),
    ("uniform:1s,3s", Fraction(1) + 2 * Fraction(8, 9)),
    ("lognormal:1s,0.5", None),
])
def test_bsp_step_time_is_the_expected_maximum_of_n_draws(dist, exact):
    r = simulate_sync("bsp", step_times=dist, workers=8, steps=20_000, seed=1)
    expected = expected_order_statistic(parse_client_times(dist), 8, 8)[0]
    if exact is not None:
        assert r.expected_bsp_step_s == expected == exact
    assert r.run("bsp").mean_step_s == pytest.approx(float(expected), rel=0.01)
    assert r.bsp_relative_difference < 0.01


def test_a_list_is_each_workers_fixed_time():
    r = simulate_sync(step_times="1s,1s,3s", steps=4, bound=1)
    bsp, ssp, asp = r.runs
    assert r.workers == 3 and r.expected_bsp_step_s == 3
    assert bsp.run_time_s == ssp.run_time_s == asp.run_time_s == 12  # the slow worker sets the pace
    # BSP: the fast workers wait 2 s at each of 3 barriers, and 2 s after their last step
    assert bsp.waiting_s == (6.0, 6.0, 0.0) and asp.waiting_s == (0.0, 0.0, 0.0)
    assert bsp.idle_s == ssp.idle_s == asp.idle_s == (8.0, 8.0, 0.0)
    # SSP with s = 1: steps 0 and 1 at once, step 2 at 3 s (the slow step 0 done), step 3 at 6 s
    assert ssp.waiting_s == (3.0, 3.0, 0.0)


def test_same_seed_same_run():
    a = simulate_sync(step_times="lognormal:1s,0.5", workers=4, steps=50, bound=2, seed=7).to_dict()
    b = simulate_sync(step_times="lognormal:1s,0.5", workers=4, steps=50, bound=2, seed=7).to_dict()
    c = simulate_sync(step_times="lognormal:1s,0.5", workers=4, steps=50, bound=2, seed=8).to_dict()
    assert a == b and a != c


def test_json_fields():
    d = simulate_sync(step_times="1s,2s", steps=3, bound=1).to_dict()
    assert [r["rule"] for r in d["runs"]] == ["bsp", "ssp", "asp"]
    assert {"run_time_s", "steps_per_s", "updates_per_s", "busy_s", "waiting_s", "idle_s", "staleness_counts",
            "staleness_mean", "staleness_max"} <= set(d["runs"][0])
    assert d["expected_bsp_step_s"] == 2 and d["bsp_relative_difference"] == 0


BAD = [
    ({"rule": "bs", "step_times": "1s", "workers": 2}, "unknown rule 'bs'"),
    ({"rule": "ssp", "step_times": "1s", "workers": 2}, "SSP needs bound="),
    ({"rule": "asp", "step_times": "1s", "workers": 2, "bound": 1}, "bound= is SSP's"),
    ({"step_times": "1s,2s", "workers": 3}, "2 step times for 3 workers"),
    ({"step_times": "0s,2s"}, "every worker's step time must be above 0 s"),
    ({"step_times": "exp:1s,1s"}, "a distribution of step times needs workers="),
    ({"step_times": "1s", "workers": 5000, "steps": 1000}, "5000 workers × 1000 steps"),
    ({"step_times": "1s", "workers": 0}, "workers=0"),
    ({"step_times": "1s", "workers": 2, "steps": 0}, "steps=0"),
    ({"step_times": "1s", "workers": 2, "rule": "ssp", "bound": -1}, "bound=-1"),
    ({"step_times": "1s", "workers": 2, "rule": "ssp", "bound": "x"}, "bound='x'"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input(kwargs, message):
    with pytest.raises(InputError, match=message.replace("×", ".").replace("(", r"\(")):
        simulate_sync(**kwargs)
