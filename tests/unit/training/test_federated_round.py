"""A federated round priced (costmodel.training.federated_pricing): bytes, order statistics, simulation.

Expected values are worked out independently: bytes from each algorithm's paper (SCAFFOLD sends model
and control variate each way, Karimireddy et al. 2020, Algorithm 1; FedPAQ b bits per element and one
fp32 norm); the order statistics of a list by enumerating every subset; the shifted exponential's
maximum by the harmonic number, shift + mean·H_m; the uniform's K-th by K/(m + 1).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.training.federated_pricing import federated_round

FAST = {"uplink": "0s:1MB/s", "downlink": "0s:4MB/s"}
SLOW = {"uplink": "50ms:10Mb/s", "downlink": "50ms:50Mb/s"}


@pytest.mark.parametrize(("algorithm", "down", "up"), [
    ("fedavg", 4_000_000, 4_000_000),
    ("fedprox", 4_000_000, 4_000_000),
    ("scaffold", 8_000_000, 8_000_000),
    ("fednova", 4_000_000, 4_000_004),
    ("fedpaq", 4_000_000, 1_000_000 + 4),  # 8 bits per element of 1M, and a 4-byte norm
])
def test_bytes_per_client(algorithm, down, up):
    r = federated_round(algorithm, params="1M", client_times="1s,2s", draws=100, **FAST)
    assert (r.download_bytes, r.upload_bytes) == (down, up)
    assert r.download_s == Fraction(down, 4_000_000) and r.upload_s == Fraction(up, 1_000_000)
    assert r.bytes_down_per_round == 2 * down and r.bytes_up_per_round == 2 * up


def test_fedpaq_bits_round_up_to_whole_bytes():
    r = federated_round("fedpaq", params=1001, client_times="1s", bits=3, draws=100, **FAST)
    assert r.upload_bytes == 376 + 4  # ⌈3003/8⌉ = 376


def test_scaffold_doubles_fedavgs_uplink():
    args = {"params": "25M", "client_times": "1s,2s,3s", "draws": 100, **SLOW}
    assert federated_round("scaffold", **args).upload_bytes == 2 * federated_round("fedavg", **args).upload_bytes


def _subsets_kth(times, m, k):
    """E[k-th smallest] over every m-subset, enumerated."""
    subsets = list(itertools.combinations(times, m))
    return sum((sorted(s)[k - 1] for s in subsets), Fraction(0)) / len(subsets)


@pytest.mark.parametrize(("m", "k"), [(3, 1), (3, 2), (3, 3), (5, 5), (1, 1), (4, 2)])
def test_list_order_statistics_against_enumeration(m, k):
    times = "1s,2s,3s,5s,8s"
    r = federated_round("fedavg", params=1000, client_times=times, sampled=m, fastest=k, draws=100,
                        uplink="0s:1MB/s", downlink="0s:1MB/s")
    links = Fraction(2 * 4000, 10**6)
    want = _subsets_kth([Fraction(t) for t in (1, 2, 3, 5, 8)], m, k)
    assert r.expected_round_time_s == links + want


def test_list_deadline_against_enumeration():
    times = [Fraction(t) for t in (1, 2, 3, 5, 8)]
    r = federated_round("fedavg", params=1000, client_times="1s,2s,3s,5s,8s", sampled=3, deadline="4s",
                        draws=100, uplink="0s:1MB/s", downlink="0s:1MB/s")
    room = 4 - Fraction(8000, 10**6)
    subsets = list(itertools.combinations(times, 3))
    assert r.expected_round_time_s == 4 - room + sum((min(room, max(s)) for s in subsets), Fraction(0)) / 10
    assert r.expected_participants == Fraction(3 * 3, 5)  # 3 of 5 finish in time, 3 sampled


def test_shifted_exponential_and_uniform_closed_forms():
    r = federated_round("fedavg", params=1, client_times="exp:1s,0.5s", sampled=4, draws=100,
                        uplink="0s:1B/s", downlink="0s:1B/s")
    assert r.expected_round_time_s == 8 + 1 + Fraction(1, 2) * (1 + Fraction(1, 2) + Fraction(1, 3) + Fraction(1, 4))
    u = federated_round("fedavg", params=1, client_times="uniform:1s,3s", sampled=4, fastest=3, draws=100,
                        uplink="0s:1B/s", downlink="0s:1B/s")
    assert u.expected_round_time_s == 8 + 1 + 2 * Fraction(3, 5)


@pytest.mark.parametrize("times", ["lognormal:2s,0.5", "exp:1s,2s", "uniform:1s,9s", "1s,2s,3s,5s,8s,13s"])
@pytest.mark.parametrize("wait", [{}, {"fastest": 3}, {"deadline": "10s"}], ids=["all", "fastest 3", "deadline"])
def test_exact_and_simulated_agree_within_one_percent(times, wait):
    r = federated_round("fedavg", params="1M", client_times=times, sampled=5, draws=100_000, seed=1,
                        **SLOW, **wait)
    assert r.relative_difference < 0.01
    if r.simulated_participants is not None:
        assert abs(r.simulated_participants - float(r.expected_participants)) < 0.01 * float(r.expected_participants)


@pytest.mark.parametrize("times", ["lognormal:2s,0.5", "exp:1s,2s", "1s,2s,3s,5s,8s,13s"])
def test_partial_work_kept_by_fedprox_and_fednova(times):
    args = {"params": "1M", "client_times": times, "sampled": 5, "deadline": "8s", "draws": 100_000, **SLOW}
    avg, prox, nova = (federated_round(a, **args) for a in ("fedavg", "fedprox", "fednova"))
    assert prox.expected_participants == nova.expected_participants == 5
    assert avg.expected_participants < 5
    assert prox.work_share is not None and 0 < prox.work_share < 1
    assert abs(prox.simulated_work_share - float(prox.work_share)) < 0.01


@settings(max_examples=30)
@given(st.lists(st.integers(1, 60), min_size=2, max_size=9), st.data())
def test_round_time_non_decreasing_in_k(seconds, data):
    m = data.draw(st.integers(1, len(seconds)))
    times = ",".join(f"{s}s" for s in seconds)
    rounds = [federated_round("fedavg", params=10, client_times=times, sampled=m, fastest=k, draws=100, **FAST)
              for k in range(1, m + 1)]
    values = [r.expected_round_time_s for r in rounds]
    assert values == sorted(values)


@settings(max_examples=20)
@given(st.integers(1, 20), st.sampled_from(["exp:1s,2s", "uniform:1s,5s"]))
def test_distribution_round_time_non_decreasing_in_k(m, times):
    values = [federated_round("fedavg", params=10, client_times=times, sampled=m, fastest=k, draws=100,
                              **FAST).expected_round_time_s for k in range(1, m + 1)]
    assert values == sorted(values)


def test_lognormal_round_time_non_decreasing_in_k():
    values = [float(federated_round("fedavg", params=10, client_times="lognormal:2s,0.8", sampled=6, fastest=k,
                                    draws=100, **FAST).expected_round_time_s) for k in range(1, 7)]
    assert values == sorted(values)


BAD = [
    ({"client_times": "1s,2s", "deadline": "1s"}, "before any client can finish"),
    ({"client_times": "exp:1s,1s", "sampled": 3, "deadline": "4.5s"}, "before any client can finish"),
    ({"client_times": "1s,2s", "deadline": "3s", "algorithm": "fedprox"}, "the links alone take"),
    ({"client_times": "1s,2s", "fastest": 3}, "fastest=3 is outside 1 to 2"),
    ({"client_times": "1s,2s", "sampled": 3}, "sampled=3 is outside 1 to 2"),
    ({"client_times": "lognormal:2s,0.5"}, "needs sampled="),
    ({"client_times": "weibull:1s,2s", "sampled": 2}, "unknown distribution 'weibull'"),
    ({"client_times": "1s,2s", "algorithm": "fedsgd"}, "unknown algorithm 'fedsgd'"),
    ({"client_times": "1s,2s", "bits": 4}, "bits= is FedPAQ's"),
    ({"client_times": "1s,2s", "fastest": 1, "deadline": "9s"}, "not both"),
    ({"client_times": "uniform:3s,1s", "sampled": 2}, "the low end must be below the high end"),
    ({"client_times": "1s,-2s"}, "is negative"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_input(kwargs, message):
    kwargs = {"algorithm": "fedavg", **kwargs}
    algorithm = kwargs.pop("algorithm")
    with pytest.raises(InputError, match=None) as info:
        federated_round(algorithm, params="1M", draws=100, **SLOW, **kwargs)
    assert message in str(info.value)
