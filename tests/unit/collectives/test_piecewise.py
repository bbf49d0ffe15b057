"""A calibrated profile's segments priced message by message: placement, monotonicity, refusals.

The profiles are written here as TOML; every expected value is worked out by hand from the
segments' α and β (ring all-reduce at p = 8 sends 14 messages of n/8, recursive doubling 3 of n).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import InputError, compare, cost
from costmodel.collectives._registry import resolve
from costmodel.collectives.evaluate import time_at
from costmodel.collectives.piecewise import placed
from costmodel.crossovers import best, crossover
from costmodel.profiles import parse_profile

F = Fraction
US, NS = F(1, 10**6), F(1, 10**9)
KIB = 1024

HEAD = '[profile]\nname = "lab"\n\n'
# A ring all-reduce measured at p = 8 up to 256 KiB (2 µs, 0.08 ns/B) and from 512 KiB (5 µs,
# 0.005 ns/B): the shape of the issue's profile.
RING_FIT = ('[fit]\ncollective = "allreduce"\nalgorithm = "ring"\np = 8\nlatency_coefficient = "14"\n'
            'bandwidth_coefficient = "7/4"\n')
SEGMENTS = ('\n[[segment]]\nfrom_bytes = 8\nto_bytes = 262144\nalpha = "2 us"\nbeta = "0.08 ns/B"\n'
            '\n[[segment]]\nfrom_bytes = 524288\nto_bytes = 1073741824\nalpha = "5 us"\nbeta = "0.005 ns/B"\n')
RING = parse_profile(HEAD + RING_FIT + SEGMENTS, path="lab.toml")
SEG1 = (2 * US, 8 * NS / 100)
SEG2 = (5 * US, 5 * NS / 1000)


def _rd_by_collective_size(n: Fraction) -> Fraction:
    """The old rule: recursive doubling (3α + 3nβ at p = 8) with the α and β of the segment of n."""
    alpha, beta = SEG1 if n < 524288 else SEG2
    return 3 * alpha + 3 * n * beta


def test_the_issue_rd_priced_on_a_ring_fit_by_collective_size_is_not_monotone() -> None:
    """Priced by the segment of the collective size n, rd costs 68.9 µs at 256 KiB, 131.6 µs at 511 KiB and
    22.9 µs at 512 KiB: a larger collective for less, with no warning."""
    a, b, c = (_rd_by_collective_size(F(n * KIB)) for n in (256, 511, 512))
    assert (a, b, c) == (6 * US + 3 * 262144 * SEG1[1], 6 * US + 3 * 523264 * SEG1[1],
                         15 * US + 3 * 524288 * SEG2[1])
    assert a < b and c < a  # 68.91 µs, 131.6 µs, 22.86 µs


def test_the_issue_fixed_rd_priced_by_the_size_of_its_messages() -> None:
    """The ring's messages were n/8: segment 2 holds messages from 64 KiB.  rd's messages are n, so from
    n = 64 KiB they are priced on segment 2, and its cost never falls as n grows."""
    link = RING.link_for("allreduce")
    for n in (256, 511, 512):
        size = F(n * KIB)
        assert cost("allreduce", "rd", p=8, n=size, link=link).time_s == 3 * SEG2[0] + 3 * size * SEG2[1]
    # every size from 1 B to 1 GiB, and around each size where rd's or the ring's messages reach 64 KiB
    sizes = sorted({F(2) ** (k / 4) for k in range(121)} | {F(x) for x in (65535, 65536, 65537, 524287,
                                                                                524288, 524289)})
    for name in ("rd", "ring", "rabenseifner", "tree"):
        times = [cost("allreduce", name, p=8, n=n, link=link).time_s for n in sizes]
        assert times == sorted(times), name


def test_placement_of_the_segments_by_the_rings_messages() -> None:
    link = RING.link_for("allreduce")
    assert link.sizes == "n" and link.fitted.algorithm == "ring" and link.fitted.p == 8
    there = placed(link)
    assert there.by_message and there.fitted.message_share == F(1, 8)
    assert [(s.from_bytes, s.to_bytes) for s in there.segments] == [(1, 32768), (65536, 2**27)]
    # the ring itself is priced as it was fitted: the segment of n, its line 14α + 7/4·nβ
    for n, (alpha, beta) in ((F(256 * KIB), SEG1), (F(2**20), SEG2), (F(8), SEG1)):
        assert cost("allreduce", "ring", p=8, n=n, link=link).time_s == 14 * alpha + F(7, 4) * n * beta
    # at another p the ring's messages (n/16) are placed by size too
    assert cost("allreduce", "ring", p=16, n=F(2**20), link=link).time_s == 30 * SEG2[0] + F(15, 8) * 2**20 * SEG2[1]
    assert cost("allreduce", "ring", p=16, n=F(2**19), link=link).messages[0].segment == 1


def test_between_two_segments_a_message_is_priced_as_the_larger_one_where_that_costs_less() -> None:
    """Segment 1's line passes segment 2's first message (5 µs + 64 KiB·0.005 ns/B = 5.32768 µs) at
    41.596 kB: from there to 64 KiB a message costs what one of 64 KiB does."""
    link = RING.link_for("allreduce")
    cut = (5 * US + 65536 * SEG2[1] - SEG1[0]) / SEG1[1]
    assert cut == F(41596)
    for n in (cut, F(50000), F(65535)):
        c = cost("allreduce", "rd", p=8, n=n, link=link)
        assert c.time_s == 3 * (5 * US + 65536 * SEG2[1])
        assert [(m.count, m.segment, m.padded_bytes) for m in c.messages] == [(3, 2, 65536)]
        assert any("priced as 65.54 kB on segment 2, which costs less" in note for note in c.notes)
    assert cost("allreduce", "rd", p=8, n=cut - 1, link=link).time_s == 3 * (SEG1[0] + (cut - 1) * SEG1[1])


def test_cost_notes_a_size_on_a_boundary_where_the_cost_jumps() -> None:
    """With a slower segment 2 (50 µs), rd jumps at n = 64 KiB; the note gives both sides."""
    text = HEAD + RING_FIT + SEGMENTS.replace('alpha = "5 us"', 'alpha = "50 us"')
    link = parse_profile(text, path="lab.toml").link_for("allreduce")
    at = cost("allreduce", "rd", p=8, n=65536, link=link)
    below = 3 * SEG1[0] + 3 * 65536 * SEG1[1]
    assert at.time_s == 3 * 50 * US + 3 * 65536 * SEG2[1]
    assert time_at(resolve("allreduce", "rd"), 8, 65536, link, below=True) == below
    assert ("recursive-doubling: n = 65.54 kB sits on a segment boundary (its messages of 65.54 kB start "
            "segment 2): just below n it costs 21.73 µs, at n 151 µs") in at.notes
    assert not any("boundary" in note for note in cost("allreduce", "ring", p=8, n=65536, link=link).notes)
    x = crossover("allreduce", "ring", "rd", p=8, link=link)
    point = x.crossovers[0]
    assert (point.n_bytes, point.segment_boundary) == (65536, True)
    ring = 14 * SEG1[0] + F(7, 4) * 65536 * SEG1[1]  # its messages of 8 KiB stay on segment 1
    assert point.below_s == (ring, below) and (point.time_s, point.b_time_s) == (ring, at.time_s)


# Rabenseifner's messages differ in size (n/2, n/4, ...): a fit on it says nothing about any one size.
RAB_FIT = RING_FIT.replace('"ring"', '"rabenseifner"').replace('"14"', '"6"')


def test_a_fit_on_an_algorithm_whose_messages_differ_prices_that_algorithm_only() -> None:
    link = parse_profile(HEAD + RAB_FIT + SEGMENTS, path="lab.toml").link_for("allreduce")
    assert placed(link) is link and not link.by_message
    # rabenseifner at p = 8 (6α + 7/4·nβ) by the segment of n, as fitted
    for n, (alpha, beta) in ((F(8 * KIB), SEG1), (F(2**20), SEG2)):
        assert cost("allreduce", "rab", p=8, n=n, link=link).time_s == 6 * alpha + F(7, 4) * n * beta
    message = ("profile lab, allreduce fit: its segments were fitted on allreduce rabenseifner, whose messages "
               "differ in size, so they price rabenseifner only, not ring; give alpha= and beta= to price ring")
    with pytest.raises(InputError) as info:
        cost("allreduce", "ring", p=8, n=1024, link=link)
    assert str(info.value) == message
    table = compare("allreduce", None, p=8, n=1024, link=link)
    assert [r.algorithm for r in table.results] == ["rabenseifner"]
    only = message.split(", not ring;", maxsplit=1)[0]
    assert f"ring, tree, recursive-doubling, naive, double-binary-tree left out: {only}" in table.notes
    with pytest.raises(InputError, match="not recursive-doubling"):
        crossover("allreduce", "rab", "rd", p=8, link=link)
    with pytest.raises(InputError) as info:
        best("allreduce", None, p=8, link=link)
    assert str(info.value) == f"best needs at least two algorithms to compare; {only}"


def test_a_larger_collective_costs_no_less_on_a_fit_of_collective_sizes() -> None:
    """Segment 1's line (6·2 µs + 7/4·n·0.08 ns/B) passes segment 2's cost at its first size, 512 KiB
    (6·5 µs + 7/4·512 KiB·0.005 ns/B = 34.59 µs), at n = 161.3 kB: from there up to 512 KiB
    rabenseifner costs what 512 KiB does on segment 2, even at 256 KiB, the last size segment 1 was
    fitted on (a fit whose lines cross like that measured the larger size faster)."""
    link = parse_profile(HEAD + RAB_FIT + SEGMENTS, path="lab.toml").link_for("allreduce")
    at_512 = 6 * SEG2[0] + F(7, 4) * 524288 * SEG2[1]
    cut = (at_512 - 6 * SEG1[0]) / (F(7, 4) * SEG1[1])
    assert cut == F(1129376, 7)
    for n in (cut, F(256 * KIB), F(511 * KIB)):
        c = cost("allreduce", "rab", p=8, n=n, link=link)
        assert c.time_s == at_512
        assert any("priced as n = 524.3 kB on segment 2" in note for note in c.notes) == (n > cut)
    assert cost("allreduce", "rab", p=8, n=cut - 1, link=link).time_s == 6 * SEG1[0] + F(7, 4) * (cut - 1) * SEG1[1]


@pytest.mark.parametrize(("fit", "words"), [
    ('[fit]\ncollective = "allreduce"\np = 8\n', "the fit names no algorithm"),
    ('[fit]\ncollective = "allreduce"\nalgorithm = "ring"\n', "the fit names no p"),
    ('[fit]\ncollective = "allreduce"\nalgorithm = "rign"\np = 8\n', "did you mean 'ring'"),
])
def test_a_fit_that_cannot_be_placed_is_one_line(fit: str, words: str) -> None:
    link = parse_profile(HEAD + fit + SEGMENTS, path="lab.toml").link_for("allreduce")
    with pytest.raises(InputError) as info:
        cost("allreduce", "ring", p=8, n=1024, link=link)
    assert words in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("profile lab, allreduce fit: ")


def test_without_p_the_coefficients_place_an_algorithm_of_one_size() -> None:
    fit = RING_FIT.replace("p = 8\n", "")
    link = placed(parse_profile(HEAD + fit + SEGMENTS, path="lab.toml").link_for("allreduce"))
    assert link.fitted.message_share == F(1, 8)


def test_a_point_to_point_fit_is_in_message_sizes_already() -> None:
    fit = '[fit]\ncollective = "pt2pt"\nalgorithm = "pt2pt"\np = 2\n'
    link = placed(parse_profile(HEAD + fit + SEGMENTS, path="lab.toml").link_for("allreduce"))
    assert link.fitted.message_share == 1
    assert [s.from_bytes for s in link.segments] == [8, 524288]
    assert cost("allreduce", "rd", p=8, n=F(2**20), link=link).time_s == 3 * SEG2[0] + 3 * 2**20 * SEG2[1]
