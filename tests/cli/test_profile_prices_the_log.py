"""A calibrated profile, read back and priced through `cost`, gives the times the log measured.

The fit predicts each row with its own design matrix (floats, numpy); here the same sizes are
priced by the registry's exact formula, every message of the fitted algorithm on the segment the
written profile places it in. Both must agree to the 6 digits the profile keeps, and so match
the log as well as the fit does: no measured row is priced as a larger size (the fitted lines
never undercut each other inside the measured ranges of these logs).
"""

from __future__ import annotations

import statistics
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration import fit, read_log
from costmodel.collectives.evaluate import cost
from costmodel.params import PiecewiseLink
from costmodel.profiles import parse_profile
from tests.clirun import run_json

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"
NCCL = sorted((LOGS / "nccl-tests").glob("*.txt"))
MISSES = {"allreduce_a100x16_2node_efa_p4d_awsofinccl65.txt", "allreduce_h100x1024_roce_nccltests322.txt"}
"""Logs whose fit misses its target and says so: six sizes of an EFA cluster with a 64 MiB dip; 1024 ranks
over RoCE whose 1 and 2 GiB take the same time."""


@pytest.mark.parametrize("log", NCCL, ids=lambda p: p.name)
def test_every_row_priced_by_its_segment(log: Path):
    fitted = fit(read_log(log))
    profile = parse_profile(fitted.to_profile_toml(name="x"), path="x.toml")
    link = profile.link_for(fitted.collective)
    assert isinstance(link, PiecewiseLink) and len(link.segments) == len(fitted.segments)
    errors = []
    for r in fitted.residuals:
        priced = cost(fitted.collective, fitted.algorithm, p=fitted.p, n=r.n_bytes, link=link).time_s
        assert float(priced) == pytest.approx(r.model_s, rel=2e-5), r.n_bytes
        errors.append(abs(float(priced / Fraction(r.measured_s)) - 1))
    if log.name in MISSES:  # its fit misses the target and says so
        assert not fitted.target.met and fitted.target.line() is not None
        return
    # the ring's targets; a log of in-network reduction (SHARP's CollNet, NVLS) is not the ring's curve
    loose = "sharp" in log.name or log.name == "allreduce_h100x16_2node_8xndr_nccltests309.txt"
    assert statistics.median(errors) <= (0.10 if loose else 0.05)
    late = [e for r, e in zip(fitted.residuals, errors, strict=True) if r.n_bytes >= 2**20]
    assert statistics.median(late) <= (0.10 if loose else 0.03)


def test_the_ring_at_1_gib_is_the_measured_time(capsys):
    """a3mega measured 6759.0 µs for 1 GiB; the summary line alone gave 5.987 ms (11 % low)."""
    data = run_json(capsys, "cost", "allreduce", "ring", "-p", "16", "-n", "1GiB", "--profile",
                    str(Path(__file__).resolve().parents[2] / "docs" / "examples" / "a3mega.toml"))
    assert data["results"][0]["time_s"] == pytest.approx(6759.0e-6, rel=2e-3)
    assert {m["segment"] for m in data["results"][0]["messages"]} == {3}  # its messages of 64 MiB
