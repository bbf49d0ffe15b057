"""The worked examples and practice answers of the seeds that concern collectives.

Each test reproduces one worked example or practice answer of
``shared/seeds/distributed-sgd-and-allreduce.txt`` ("DSGD") or
``shared/seeds/collective-communication-patterns.txt`` ("Patterns"); its id is the
section title.  Expected values are the seed's numbers, rederived here as exact
Fractions with the arithmetic in a comment.

Not reproduced, because costmodel has no API for them: the weighted loss (DSGD
§1, practice 1), neighbour mixing and consensus (DSGD §3-4, practice 3), the sum
all-reduce of 1, 2, 3 (DSGD §5: that is a value, not a cost), the hierarchical,
FlexReduce, multi-lane and RAT topologies (DSGD §10, Patterns "Hierarchical").
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import costmodel
from costmodel import LinkParams, compare, cost, crossover
from costmodel.links import link_from_options
from costmodel.units import format_size, format_time

MB = 10**6  # the seeds use decimal MB and GB in §6 and §8
KiB, MiB = 2**10, 2**20

ALPHA = Fraction(5, 10**6)  # α = 5 µs
BETA = Fraction(8, 10**11)  # β = 0.08 ns/B = 1/(12.5 GB/s)
SEED_LINK = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA)
# any link will do where only bytes and rounds are checked
UNIT_LINK = LinkParams(alpha_s=Fraction(1), beta_s_per_byte=Fraction(1))


def seed(title: str) -> pytest.MarkDecorator:
    """Give the test the seed section title as its id."""
    return pytest.mark.parametrize("section", [title], ids=[title])


# -- DSGD §6 Ring All-Reduce -----------------------------------------------------------------


@seed("DSGD 6. Ring All-Reduce")
def test_ring_p4_100mb_sends_150mb_in_six_rounds(section: str) -> None:
    result = cost("allreduce", "ring", p=4, n=100 * MB, link=UNIT_LINK)
    # chunks of n/p = 25 MB; 2(p-1) = 6 rounds of one chunk each: 6 · 25 MB = 150 MB
    assert result.bytes_sent_per_rank == 150_000_000
    assert result.rounds == 6
    assert result.bytes_sent_per_rank / result.rounds == 25 * MB


@seed("DSGD 6. Ring All-Reduce")
def test_ring_sent_volume_approaches_2n(section: str) -> None:
    n = 100 * MB
    sent = [cost("allreduce", "ring", p=p, n=n, link=UNIT_LINK).bytes_sent_per_rank for p in (2, 4, 64, 1024)]
    # 2(p-1)/p · n: n, 3n/2, 63n/32, 1023n/512, increasing towards 2n
    assert sent == [n, Fraction(3, 2) * n, Fraction(63, 32) * n, Fraction(1023, 512) * n]


@seed("DSGD 6. Worked Example: Ring Versus a Naive Root")
def test_ring_versus_naive_root(section: str) -> None:
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 12_500_000_000))  # 12.5 GB/s, α = 0
    n = 100 * MB
    ring = cost("allreduce", "ring", p=4, n=n, link=link)
    naive = cost("allreduce", "naive", p=4, n=n, link=link)
    # ring: 2 · 3/4 · 100 MB = 150 MB at 12.5 GB/s = 12 ms
    assert ring.time_s == Fraction(12, 1000)
    # naive root: receives 3 full tensors, then sends 3: 600 MB at 12.5 GB/s = 48 ms
    assert naive.time_s == Fraction(48, 1000)
    assert naive.time_s / ring.time_s == 4


@seed("Patterns: Ring All-Reduce, cost analysis")
@pytest.mark.parametrize("p", [2, 3, 4, 8, 13, 1024])
def test_naive_root_is_p_times_worse_than_ring(section: str, p: int) -> None:
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 12_500_000_000))
    n = Fraction(7 * MB)
    ring = cost("allreduce", "ring", p=p, n=n, link=link)
    naive = cost("allreduce", "naive", p=p, n=n, link=link)
    # naive 2(p-1)·n·β over ring 2(p-1)/p·n·β is exactly p ("N× worse")
    assert ring.bandwidth_s == 2 * Fraction(p - 1, p) * n * link.beta_s_per_byte
    assert naive.bandwidth_s == 2 * (p - 1) * n * link.beta_s_per_byte
    assert naive.time_s / ring.time_s == p


@seed("Patterns: Ring All-Reduce, cost analysis")
@pytest.mark.parametrize("p", [2, 4, 5, 16, 1000])
def test_ring_meets_the_bandwidth_lower_bound(section: str, p: int) -> None:
    link = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(1, 12_500_000_000))
    ring = cost("allreduce", "ring", p=p, n=64 * MiB, link=link)
    # with α = γ = 0 the bound is 2(p-1)/p·n·β, which the ring meets exactly
    assert ring.time_s == 2 * Fraction(p - 1, p) * 64 * MiB * link.beta_s_per_byte
    assert ring.bound_ratio == 1


@seed("Patterns: 4-GPU Ring All-Reduce")
def test_four_gpu_ring_has_three_steps_per_phase(section: str) -> None:
    # reduce-scatter N-1 = 3 steps, all-gather 3 more
    assert cost("allreduce", "ring", p=4, n=4, link=UNIT_LINK).rounds == 6
    assert cost("reduce-scatter", "ring", p=4, n=4, link=UNIT_LINK).rounds == 3
    assert cost("allgather", "ring", p=4, n=4, link=UNIT_LINK).rounds == 3


@seed("Patterns: Tree All-Reduce")
def test_seven_gpu_tree_takes_log_steps_per_phase(section: str) -> None:
    # the pictured 7-GPU tree: ⌈log2 7⌉ = 3 reduce levels and 3 broadcast levels
    tree = cost("allreduce", "tree", p=7, n=1, link=UNIT_LINK)
    assert tree.rounds == 6


# -- DSGD §7 the four α-β formulas ------------------------------------------------------------


@seed("DSGD 7. Model Latency and Bandwidth Costs")
@pytest.mark.parametrize("p", [2, 4, 16, 1024])
def test_the_four_formulas(section: str, p: int) -> None:
    n = Fraction(3 * MiB)
    lg = p.bit_length() - 1  # log2 p, p a power of two
    expected = {
        "ring": 2 * (p - 1) * ALPHA + 2 * Fraction(p - 1, p) * n * BETA,
        "tree": 2 * lg * (ALPHA + n * BETA),
        "recursive-doubling": lg * (ALPHA + n * BETA),
        "rabenseifner": 2 * lg * ALPHA + 2 * Fraction(p - 1, p) * n * BETA,
    }
    for name, time_s in expected.items():
        assert cost("allreduce", name, p=p, n=n, link=SEED_LINK).time_s == time_s, name


# -- DSGD §8 Trees, recursive exchanges, Rabenseifner -------------------------------------------


@seed("DSGD 8. Tree All-Reduce")
def test_tree_levels_at_1024(section: str) -> None:
    # 2⌈log2 1024⌉ = 20 levels against the ring's 2(1024-1) = 2046 rounds
    assert cost("allreduce", "tree", p=1024, n=1, link=UNIT_LINK).rounds == 20
    assert cost("allreduce", "ring", p=1024, n=1, link=UNIT_LINK).rounds == 2046


@seed("DSGD 8. Recursive Doubling")
def test_recursive_doubling_p8_sends_3n(section: str) -> None:
    n = Fraction(64 * MB)
    result = cost("allreduce", "recursive-doubling", p=8, n=n, link=UNIT_LINK)
    # partners XOR 1, XOR 2, XOR 4: three exchanges of the full tensor
    assert result.rounds == 3
    assert result.bytes_sent_per_rank == 3 * n


@seed("DSGD 8. Recursive Halving")
def test_recursive_halving_p8_sends_7n_over_8(section: str) -> None:
    n = Fraction(64 * MB)
    result = cost("reduce-scatter", "recursive-halving", p=8, n=n, link=UNIT_LINK)
    # n/2 + n/4 + n/8 = 7n/8 in three rounds
    assert result.bytes_sent_per_rank == n / 2 + n / 4 + n / 8 == Fraction(7, 8) * n
    assert result.rounds == 3


@seed("DSGD 8. Rabenseifner's Algorithm")
def test_rabenseifner_p8_64mb_sends_112mb_in_six_rounds(section: str) -> None:
    rab = cost("allreduce", "rabenseifner", p=8, n=64 * MB, link=UNIT_LINK)
    ring = cost("allreduce", "ring", p=8, n=64 * MB, link=UNIT_LINK)
    # 2 · 7/8 · 64 MB = 112 MB for both; 2·log2 8 = 6 rounds against 2·7 = 14
    assert rab.bytes_sent_per_rank == ring.bytes_sent_per_rank == 112_000_000
    assert (rab.rounds, ring.rounds) == (6, 14)


# -- DSGD §9 Choose by message size -----------------------------------------------------------

THREE = ["ring", "recursive-doubling", "rabenseifner"]


@seed("DSGD 9. Worked Example: Choose by Message Size")
def test_seed_beta_is_100_gbps(section: str) -> None:
    # 0.08 ns/B = 8e-11 s/B = 1/(12.5e9 B/s), and 12.5 GB/s · 8 bit/B = 100 Gb/s
    assert Fraction(1, 12_500_000_000) == BETA
    by_beta = link_from_options(alpha="5us", beta="0.08ns/B")
    by_bits = link_from_options(alpha="5 µs", bandwidth="100 Gb/s")
    by_bytes = link_from_options(alpha="5us", bandwidth="12.5 GB/s")
    assert by_beta.alpha_s == by_bits.alpha_s == by_bytes.alpha_s == ALPHA
    assert by_beta.beta_s_per_byte == by_bits.beta_s_per_byte == by_bytes.beta_s_per_byte == BETA


@seed("DSGD 9. Worked Example: Choose by Message Size")
def test_seed_profile_holds_the_example_link(section: str) -> None:
    profile = costmodel.load_profile("textbook")
    assert profile.link.alpha_s == ALPHA
    assert profile.link.beta_s_per_byte == BETA
    assert profile.link.gamma_s_per_byte == 0


@seed("DSGD 9. Worked Example: Choose by Message Size")
def test_8kib_recursive_doubling_wins(section: str) -> None:
    n = 8 * KiB  # 8192 bytes
    table = compare("allreduce", THREE, p=16, n=n, link=SEED_LINK)
    times = {r.algorithm: r.time_s for r in table.results}
    # rd: 4α + 4nβ = 20 µs + 4 · 8192 · 0.08 ns = 20 µs + 2.62144 µs
    assert times["recursive-doubling"] == 4 * ALPHA + 4 * n * BETA == Fraction(2262144, 10**11)
    # rab: 8α + 2·15/16·nβ = 40 µs + 1.2288 µs
    assert times["rabenseifner"] == 8 * ALPHA + Fraction(15, 8) * n * BETA == Fraction(412288, 10**10)
    # ring: 30α + 1.875nβ = 150 µs + 1.2288 µs
    assert times["ring"] == 30 * ALPHA + Fraction(15, 8) * n * BETA == Fraction(1512288, 10**10)
    assert [r.algorithm for r in table.results] == ["recursive-doubling", "rabenseifner", "ring"]
    assert table.best == "recursive-doubling"


@seed("DSGD 9. Worked Example: Choose by Message Size")
def test_8kib_full_allreduce_table_order(section: str) -> None:
    n = 8 * KiB
    table = compare("allreduce", None, p=16, n=n, link=SEED_LINK)
    times = {r.algorithm: r.time_s for r in table.results}
    # the three of the seed keep their order among all registered algorithms
    order = [r.algorithm for r in table.results]
    assert order.index("recursive-doubling") < order.index("rabenseifner") < order.index("ring")
    assert table.best == "recursive-doubling"
    # tree: 2·4·(α + nβ) = 40 µs + 8 · 0.65536 µs = 45.24288 µs, between rab and ring
    assert times["tree"] == 8 * (ALPHA + n * BETA) == Fraction(4524288, 10**11)
    # naive: 30α + 30nβ = 150 µs + 19.6608 µs, the slowest
    assert times["naive"] == 30 * ALPHA + 30 * n * BETA
    assert order[-1] == "naive"


@seed("DSGD 9. Worked Example: Choose by Message Size")
def test_64mib_rabenseifner_wins_ring_second(section: str) -> None:
    n = 64 * MiB  # 67,108,864 bytes
    table = compare("allreduce", THREE, p=16, n=n, link=SEED_LINK)
    times = {r.algorithm: r.time_s for r in table.results}
    # 1.875 · 67108864 · 0.08 ns = 10.06632960 ms
    payload = Fraction(15, 8) * n * BETA
    assert payload == Fraction(1006632960, 10**11)
    assert times["rabenseifner"] == 8 * ALPHA + payload  # 10.1063296 ms
    assert times["ring"] == 30 * ALPHA + payload  # 10.2163296 ms
    assert times["recursive-doubling"] == 4 * ALPHA + 4 * n * BETA  # 21.49474688 ms
    assert [r.algorithm for r in table.results] == ["rabenseifner", "ring", "recursive-doubling"]


@seed("DSGD 9. Show the Ring Calculation")
def test_ring_calculation_at_8kib(section: str) -> None:
    n = 8 * KiB
    ring = cost("allreduce", "ring", p=16, n=n, link=SEED_LINK)
    # 2(16-1) = 30 start-ups: 30 · 5 µs = 150 µs
    assert ring.rounds == 30
    assert ring.latency_s == 30 * ALPHA == Fraction(15, 100_000)
    # 2 · 15/16 · 8192 B = 15360 B at 0.08 ns/B = 1.2288 µs
    assert ring.bytes_sent_per_rank == 15360
    assert ring.bandwidth_s == 15360 * BETA == Fraction(12288, 10**10)
    assert ring.time_s == Fraction(1512288, 10**10)  # 151.2288 µs


@seed("DSGD 9. Find a Crossover")
def test_crossover_rd_rab_at_p16(section: str) -> None:
    result = crossover("allreduce", "recursive-doubling", "rabenseifner", p=16, link=SEED_LINK)
    # 4α + 4nβ = 8α + 1.875nβ  ⇔  n = 4α/(2.125β) = 4 · 5e-6/(2.125 · 8e-11) = 2e6/17 B
    n_star = 4 * ALPHA / (Fraction(17, 8) * BETA)
    assert n_star == Fraction(2_000_000, 17)
    assert [c.n_bytes for c in result.crossovers] == [n_star]
    assert result.crossovers[0].exact
    # both cost 4α + 4n*β there
    assert result.crossovers[0].time_s == 4 * ALPHA + 4 * n_star * BETA
    assert (result.below, result.above) == ("recursive-doubling", "rabenseifner")
    # ≈ 117,647 B: "about 118 kB, or 115 KiB" (117647/1024 = 114.89 KiB)
    assert int(n_star) == 117_647
    assert format_size(n_star, digits=3) == "118 kB = 115 KiB"


@seed("DSGD 9. Find a Crossover")
def test_crossover_by_aliases_and_profile(section: str) -> None:
    link = link_from_options(profile="textbook")
    result = crossover("all-reduce", "rd", "rab", p=16, link=link)
    assert result.crossovers[0].n_bytes == Fraction(2_000_000, 17)


@seed("DSGD 9. Find a Crossover")
def test_p1024_64mib_ring_and_rabenseifner(section: str) -> None:
    n = 64 * MiB
    ring = cost("allreduce", "ring", p=1024, n=n, link=SEED_LINK)
    rab = cost("allreduce", "rabenseifner", p=1024, n=n, link=SEED_LINK)
    # payload 2 · 1023/1024 · 67108864 B · 0.08 ns = 134086656 B · 0.08 ns = 10.72693248 ms
    payload = 2 * Fraction(1023, 1024) * n * BETA
    assert payload == Fraction(1072693248, 10**11)
    # ring: 2·1023·5 µs = 10.23 ms of start-ups: 20.95693248 ms
    assert ring.time_s == 2 * 1023 * ALPHA + payload == Fraction(2095693248, 10**11)
    # Rabenseifner: 2·log2 1024 = 20 start-ups = 0.1 ms: 10.82693248 ms
    assert rab.time_s == 20 * ALPHA + payload == Fraction(1082693248, 10**11)
    # "about 20.96 ms" and "about 10.83 ms"
    assert round(ring.time_s * 1000, 2) == Fraction(2096, 100)
    assert round(rab.time_s * 1000, 2) == Fraction(1083, 100)
    assert format_time(ring.time_s) == "20.96 ms"
    assert format_time(rab.time_s) == "10.83 ms"


# -- DSGD practice questions -----------------------------------------------------------------


@seed("DSGD Practice 4: ring rounds for eight workers")
def test_practice_4(section: str) -> None:
    # seven reduce-scatter rounds plus seven all-gather rounds
    assert cost("allreduce", "ring", p=8, n=64 * MB, link=UNIT_LINK).rounds == 7 + 7


@seed("DSGD Practice 5: ring bytes for eight workers, 64 MB")
def test_practice_5(section: str) -> None:
    # 2 × 7/8 × 64 MB = 112 MB
    ring = cost("allreduce", "ring", p=8, n=64 * MB, link=UNIT_LINK)
    assert ring.bytes_sent_per_rank == 2 * Fraction(7, 8) * 64 * MB == 112 * MB


@seed("DSGD Practice 6: Rabenseifner for the same example")
def test_practice_6(section: str) -> None:
    rab = cost("allreduce", "rab", p=8, n=64 * MB, link=UNIT_LINK)
    assert rab.bytes_sent_per_rank == 112 * MB
    assert rab.rounds == 6


@seed("DSGD Practice 7: why recursive doubling wins the 8 KiB example")
def test_practice_7(section: str) -> None:
    rd = cost("allreduce", "rd", p=16, n=8 * KiB, link=SEED_LINK)
    ring = cost("allreduce", "ring", p=16, n=8 * KiB, link=SEED_LINK)
    # four exchanges instead of the ring's thirty
    assert (rd.rounds, ring.rounds) == (4, 30)
    assert rd.latency_s == 4 * ALPHA
    assert ring.latency_s == 30 * ALPHA
    assert rd.time_s < ring.time_s
