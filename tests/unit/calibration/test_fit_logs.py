"""Several logs fitted at once: one fit per collective, and osu_latency's with osu_bw's as one link."""

from __future__ import annotations

import pytest

from costmodel.calibration import fit, fit_latency_and_bandwidth, fit_logs, parse_log
from costmodel.errors import InputError

SIZES = [2**k for k in range(23)]  # 1 B .. 4 MiB, OSU's default sweep
# one message: 1.5 µs + n / (10 GB/s); streamed, a window of messages hides most of the start-up and
# reaches 12.5 GB/s
LATENCY = "# OSU MPI Latency Test v7.1\n# Size          Latency (us)\n" + "".join(
    f"{n} {1.5 + n / 10_000:.2f}\n" for n in SIZES)
BANDWIDTH = "# OSU MPI Bandwidth Test v7.1\n# Size      Bandwidth (MB/s)\n" + "".join(
    f"{n} {n / (0.05 + n / 12_500):.2f}\n" for n in SIZES)
ALLREDUCE = "# OSU MPI Allreduce Latency Test v7.1\n# Size       Avg Latency(us)\n" + "".join(
    f"{n} {10 + n / 1000:.3f}\n" for n in SIZES[2:])


def _logs():
    return parse_log(LATENCY, path="osu_latency.txt"), parse_log(BANDWIDTH, path="osu_bw.txt")


def test_alpha_comes_from_osu_latency_and_beta_from_osu_bw():
    latency, bandwidth = _logs()
    alone = fit(latency), fit(bandwidth)
    (both,) = fit_logs([latency, bandwidth])
    assert both.collective == "pt2pt" and both.p == 2
    assert both.alpha_s == alone[0].alpha_s  # osu_latency's start-up, 1.5 µs
    assert both.alpha_s == pytest.approx(1.5e-6, rel=0.01)
    assert both.beta_s_per_byte == alone[1].segments[-1].beta_s_per_byte  # osu_bw's streamed 12.5 GB/s
    assert 1 / both.beta_s_per_byte == pytest.approx(12.5e9, rel=0.01)
    assert both.segments == alone[0].segments  # each size priced as one message at a time
    assert both.alpha_from == "osu_latency's segment 1" and both.beta_from.startswith("osu_bw's segment ")
    # osu_bw's α is not used, so its warning that the α is no latency is not given; others are, marked
    assert any("comes from osu_bw" in w for w in alone[1].warnings)
    assert not any("comes from osu_bw" in w for w in both.warnings)
    assert any(n.startswith("[link] alpha is osu_latency's (osu_latency.txt), beta osu_bw's (osu_bw.txt")
               for n in both.notes)
    # either order; and the profile's [link] has them both
    assert fit_logs([bandwidth, latency])[0].to_dict() == both.to_dict()
    assert fit_latency_and_bandwidth(latency, bandwidth).to_dict() == both.to_dict()
    from costmodel.profiles import parse_profile

    link = parse_profile(both.to_profile_toml(name="link"), path="link.toml").link
    assert float(link.alpha_s) == pytest.approx(both.alpha_s, rel=1e-5)
    assert float(link.beta_s_per_byte) == pytest.approx(both.beta_s_per_byte, rel=1e-5)


def test_osu_bw_alone_warns_that_its_alpha_is_no_latency():
    (alone,) = fit_logs([_logs()[1]])
    assert any("comes from osu_bw" in w and "osu_latency" in w for w in alone.warnings)


def test_one_fit_per_collective_in_order_and_duplicates_refused():
    latency, bandwidth = _logs()
    allreduce = parse_log(ALLREDUCE, path="osu_allreduce.txt", p=2)
    fits = fit_logs([allreduce, latency, bandwidth])
    assert [f.collective for f in fits] == ["allreduce", "pt2pt"]
    with pytest.raises(InputError, match=r"pt2pt is measured by both osu_latency.txt and osu_latency.txt; give "
                                         "one log per collective"):
        fit_logs([latency, latency])
    with pytest.raises(InputError, match=r"allreduce is measured by both"):
        fit_logs([allreduce, allreduce])
    with pytest.raises(InputError, match=r"the logs hold 2 collectives \(allreduce, pt2pt\) and an algorithm "
                                         r"names the model of one; give collective=NAME with algorithm=ring"):
        fit_logs([allreduce, latency], algorithm="ring")
    with pytest.raises(InputError, match="no log to fit"):
        fit_logs([])
    with pytest.raises(InputError, match="is not osu_latency's log"):
        fit_latency_and_bandwidth(bandwidth, latency)
