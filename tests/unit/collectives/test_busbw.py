"""Bus bandwidth the nccl-tests way: algbw = S/t, busbw = algbw × the collective's factor."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import LinkParams, bound, cost
from costmodel.collectives.busbw import FACTORS, bus_factor, busbw, time_for_busbw
from costmodel.errors import InputError, UnknownNameError

GB = 10**9


@pytest.mark.parametrize(("collective", "p", "factor"), [
    ("allreduce", 2, Fraction(1)),  # 2·1/2
    ("allreduce", 8, Fraction(7, 4)),  # 2·7/8
    ("allreduce", 1024, Fraction(1023, 512)),
    ("reduce-scatter", 8, Fraction(7, 8)),
    ("allgather", 4, Fraction(3, 4)),
    ("gather", 4, Fraction(3, 4)),  # nccl-tests src/gather.cu, GatherGetBw
    ("scatter", 5, Fraction(4, 5)),
    ("alltoall", 16, Fraction(15, 16)),
    ("broadcast", 64, Fraction(1)),
    ("reduce", 3, Fraction(1)),
])
def test_factors_of_the_nccl_tests_summary(collective, p, factor):
    assert bus_factor(collective, p) == factor


def test_aliases_are_accepted():
    assert bus_factor("all-reduce", 8) == bus_factor("ar", 8) == Fraction(7, 4)
    assert bus_factor("rs", 4) == bus_factor("all_gather", 4) == Fraction(3, 4)


def test_one_gigabyte_allreduce_on_eight_gpus():
    b = busbw("allreduce", p=8, n="1GB", time="10ms")
    # algbw = 1e9 B / 0.01 s = 100 GB/s; busbw = 100 GB/s · 2·7/8 = 175 GB/s
    assert b.algbw_bytes_per_s == 100 * GB
    assert b.busbw_bytes_per_s == 175 * GB
    assert (b.factor, b.factor_text, b.collective) == (Fraction(7, 4), "2(p − 1)/p", "allreduce")
    assert b.to_dict()["busbw_bytes_per_s"] == 175 * GB


def test_exact_for_binary_sizes_and_odd_times():
    b = busbw("allgather", p=3, n="3 MiB", time="7 us")
    # 3·2^20 B / 7e-6 s · 2/3 = 2^21/7e-6 B/s
    assert b.busbw_bytes_per_s == Fraction(2**21 * 10**6, 7)


def test_time_for_busbw_inverts_busbw():
    t = time_for_busbw("allreduce", p=16, n="64MiB", busbw="12.5GB/s")
    # 64 MiB · 15/8 / 12.5 GB/s
    assert t == Fraction(64 * 2**20) * Fraction(15, 8) / (Fraction(25, 2) * GB)
    assert busbw("allreduce", p=16, n="64MiB", time=t).busbw_bytes_per_s == Fraction(25, 2) * GB


@pytest.mark.parametrize("collective", sorted(FACTORS))
@pytest.mark.parametrize("p", [2, 5, 8, 64])
def test_a_bandwidth_optimal_collective_at_alpha_zero_reports_the_link_speed(collective, p):
    # the lower bound's β term is factor·n·β, so at that time busbw is exactly 1/β
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 25 * GB))
    n = Fraction(3 * 10**7)
    t = bound(collective, p=p, n=n, link=link).bandwidth_s
    assert busbw(collective, p=p, n=n, time=t).busbw_bytes_per_s == 25 * GB


def test_the_ring_allreduce_model_approaches_the_link_speed():
    link = LinkParams(alpha_s=Fraction(5, 10**6), beta_s_per_byte=Fraction(8, 10**11))
    speeds = [busbw("allreduce", p=16, n=n, time=cost("allreduce", "ring", p=16, n=n, link=link).time_s)
              .busbw_bytes_per_s for n in (2**20, 2**26, 2**32)]
    assert speeds == sorted(speeds) and speeds[-1] < Fraction(25, 2) * GB
    assert speeds[-1] > Fraction(124, 10) * GB


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"collective": "allreduse", "p": 4, "n": 1, "time": 1}, UnknownNameError, "allreduce"),
    ({"collective": "allreduce", "p": 1, "n": 1, "time": 1}, InputError, "at least 2 ranks"),
    ({"collective": "allreduce", "p": 4, "n": 0, "time": 1}, InputError, "positive"),
    ({"collective": "allreduce", "p": 4, "n": 1, "time": "0 s"}, InputError, "positive"),
])
def test_bad_inputs(kwargs, error, match):
    collective = kwargs.pop("collective")
    with pytest.raises(error, match=match):
        busbw(collective, **kwargs)
