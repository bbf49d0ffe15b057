"""Parameter-server, tensor-parallel and MoE traffic, and staleness; times against the α–β model."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from costmodel.errors import InputError, UnknownNameError
from costmodel.params import LinkParams
from costmodel.training import moe_traffic, ps_traffic, staleness, tensor_parallel_traffic

MB = 10**6
ALPHA = Fraction(1, 10**6)  # 1 µs
BETA = Fraction(1, 10**10)  # 10 GB/s
LINK = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA)


def test_ps_bytes():
    t = ps_traffic("400MB", workers=16)
    assert t.server_bytes_in == t.server_bytes_out == 16 * 400 * MB
    assert t.ring_bytes_sent_per_worker == 2 * Fraction(15, 16) * 400 * MB  # 750 MB
    assert t.hot_spot_ratio == Fraction(16 * 16, 2 * 15)
    d = t.to_dict()
    assert (d["server_bytes_in"], d["server_bytes_out"], d["ring_bytes_sent_per_worker"]) == (
        6_400_000_000, 6_400_000_000, 750_000_000)
    assert d["ps_time_s"] is None and d["ring_time_s"] is None and d["alpha_s"] is None
    assert json.dumps(d, allow_nan=False)


def test_ps_sharded_and_timed():
    n = 400 * MB
    t = ps_traffic(n, workers=16, servers=4, link=LINK)
    assert t.server_bytes_in == 16 * n / 4
    assert t.to_dict()["servers_bytes_in_total"] == 16 * n
    # each server: 16 pushes of n/4 then 16 pulls, one at a time
    assert t.ps_time_s == 2 * 16 * (ALPHA + Fraction(n, 4) * BETA)
    # ring: 2(p − 1)(α + n/p·β)
    assert t.ring.time_s == 2 * 15 * (ALPHA + Fraction(n, 16) * BETA)


def test_ps_more_servers_than_workers_is_bound_by_the_worker():
    t = ps_traffic(MB, workers=2, servers=8, link=LINK)
    # a worker sends 8 messages of n/8: 8α + nβ, more than a server's 2(α + n/8·β)
    assert t.ps_time_s == 2 * (8 * ALPHA + MB * BETA)


def test_tensor_parallel_bytes_and_time():
    tp = tensor_parallel_traffic(batch=2, seq=1024, hidden=4096, tp=4, dtype="fp16", layers=24, link=LINK)
    n = 2 * 1024 * 4096 * 2
    assert tp.allreduce_bytes == n
    assert (tp.allreduces_forward, tp.allreduces_backward, tp.allreduces_per_block) == (2, 2, 4)
    assert tp.allreduce.bytes_sent_per_rank == 2 * Fraction(3, 4) * n
    t = 2 * 3 * (ALPHA + Fraction(n, 4) * BETA)
    assert tp.allreduce.time_s == t
    d = tp.to_dict()
    assert d["bytes_sent_per_rank_per_block"] == 4 * 2 * 3 * n // 4
    assert d["bytes_sent_per_rank_per_step"] == 24 * 4 * 2 * 3 * n // 4
    assert d["block_time_s"] == pytest.approx(float(4 * t), rel=1e-15)
    assert d["step_time_s"] == pytest.approx(float(96 * t), rel=1e-15)


def test_tensor_parallel_other_algorithm():
    tp = tensor_parallel_traffic(batch=1, seq=8, hidden=8, tp=8, algorithm="rab", link=LINK)
    assert tp.allreduce.algorithm == "rabenseifner"


def test_moe_uniform_routing():
    m = moe_traffic(tokens=4096, hidden=4096, experts=8, top_k=2, link=LINK)
    n = 4096 * 2 * 4096 * 2
    assert m.send_buffer_bytes == n
    assert m.fraction_leaving == Fraction(7, 8)
    assert m.bytes_leaving_per_alltoall == Fraction(7, 8) * n
    # pairwise all-to-all: (p − 1)(α + n/p·β)
    assert m.alltoall.time_s == 7 * (ALPHA + Fraction(n, 8) * BETA)
    assert m.alltoall.bytes_sent_per_rank == m.bytes_leaving_per_alltoall
    d = m.to_dict()
    assert d["bytes_leaving_per_layer_forward"] == 2 * 7 * n // 8
    assert d["bytes_leaving_per_layer_step"] == 4 * 7 * n // 8


def test_moe_experts_spread_over_fewer_gpus():
    m = moe_traffic(tokens=100, hidden=10, experts=16, ep=4, dtype="fp32")
    assert m.fraction_leaving == Fraction(3, 4)
    assert m.send_buffer_bytes == 100 * 10 * 4


def test_staleness():
    s = staleness(workers=16, bound=3)
    assert (s.asp_expected_staleness, s.ssp_max_unseen_updates) == (15, 45)
    d = s.to_dict()
    assert (d["bsp_staleness"], d["ssp_max_staleness"], d["asp_max_staleness"]) == (0, 3, None)
    assert staleness(workers=4).to_dict()["ssp_max_staleness"] is None
    assert staleness(workers=1).asp_expected_staleness == 0


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: ps_traffic("400MB", workers=1), "workers=1 is too few"),
    (lambda: ps_traffic("400MB", workers=16, servers=0), "servers=0"),
    (lambda: ps_traffic("-400MB", workers=16), "is negative"),
    (lambda: ps_traffic("0", workers=16), "is zero"),
    (lambda: ps_traffic("400MB", workers=16, beta="1ns/B", bandwidth="1GB/s"), "only one of"),
    (lambda: tensor_parallel_traffic(batch=1, seq=1, hidden=1, tp=1), "tp=1 needs no"),
    (lambda: tensor_parallel_traffic(batch=-1, seq=1, hidden=1, tp=2), "is negative"),
    (lambda: moe_traffic(tokens=1, hidden=1, experts=8, ep=3), "ep=3 does not divide"),
    (lambda: moe_traffic(tokens=1, hidden=1, experts=1), "ep=1 keeps every expert"),
    (lambda: moe_traffic(tokens=1, hidden=1, experts=8, top_k=9), "top_k=9 is more than"),
    (lambda: staleness(workers=0), "workers=0"),
    (lambda: staleness(workers=2, bound=-1), "bound=-1"),
])
def test_bad_traffic_input(call, fragment):
    with pytest.raises(InputError, match=fragment):
        call()


def test_unknown_dtype_and_algorithm():
    with pytest.raises(UnknownNameError, match="did you mean 'bf16'"):
        tensor_parallel_traffic(batch=1, seq=1, hidden=1, tp=2, dtype="bf61")
    with pytest.raises(UnknownNameError):
        moe_traffic(tokens=1, hidden=1, experts=2, algorithm="rign")


def test_moe_capacity_factor_pads_every_buffer():
    # c = 1.25: each expert's block holds 1.25·k·T/E tokens, sent whole: 1.25 × 4096 × 2 × 4096 × 2 B
    m = moe_traffic(tokens=4096, hidden=4096, experts=8, top_k=2, capacity_factor="1.25", link=LINK)
    n = Fraction(5, 4) * 4096 * 2 * 4096 * 2
    assert m.send_buffer_bytes == n and m.capacity_factor == Fraction(5, 4)
    assert m.bytes_leaving_per_alltoall == Fraction(7, 8) * n
    assert m.alltoall.time_s == 7 * (ALPHA + n / 8 * BETA)
    d = m.to_dict()
    assert d["capacity_factor"] == 1.25 and d["bytes_leaving_per_layer_step"] == 4 * 7 * n / 8
    assert "capacity factor 1.25" in m.notes[0]
    assert moe_traffic(tokens=4096, hidden=4096, experts=8).capacity_factor == 1


@pytest.mark.parametrize(("value", "message"), [(0, "capacity_factor=0 is not positive"),
                                                ("-1", "capacity_factor=-1 is not positive"),
                                                ("abc", "capacity_factor=abc: 'abc' is not a number")])
def test_moe_capacity_factor_must_be_a_positive_number(value, message):
    with pytest.raises(InputError, match=message):
        moe_traffic(tokens=4096, hidden=4096, experts=8, capacity_factor=value)
