"""Calibrated profiles: [fit], [[segment]] and [collective.NAME] tables written, read back and refused.

The round trip goes through real logs (``tests/data/logs``): a fit written with
``Fit.to_profile_toml`` must load with ``parse_profile`` into the same segments,
model and warnings.  Every malformed table is one ``ParseError`` naming it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from costmodel.calibration import fit, read_log
from costmodel.errors import ParseError
from costmodel.params import PiecewiseLink
from costmodel.profiles import Profile, parse_profile
from tests.clirun import run

F = Fraction
LOGS = Path(__file__).resolve().parent.parent / "data" / "logs"
H100 = LOGS / "nccl-tests" / "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt"
B200_ALLGATHER = LOGS / "nccl-tests" / "allgather_b200x2_2node_rdma_gke.txt"
OSU_KIND = LOGS / "osu" / "osu_allreduce_kind_2pod_2rank_tcp.txt"

# the digits the profile keeps: α and β with 6 significant digits, the errors with 4
SIX_DIGITS = 5e-6
FOUR_DIGITS = 5e-4


@pytest.fixture(scope="module")
def fits() -> dict[str, object]:
    return {
        "h100": fit(read_log(H100)),
        "allgather": fit(read_log(B200_ALLGATHER)),
        "osu": fit(read_log(OSU_KIND, p=2), p=2),
    }


def _same(written: object, read: object) -> None:
    """A fit (calibration) and the ProfileFit read back from its tables agree."""
    assert read.collective == written.collective
    assert read.algorithm == written.algorithm
    assert read.p == written.p
    assert read.formula == written.formula
    assert read.latency_coefficient == written.latency_coefficient  # exact
    assert read.bandwidth_coefficient == written.bandwidth_coefficient
    assert isinstance(read.latency_coefficient, Fraction)
    assert read.tool == written.tool
    assert read.rows == len(written.residuals)
    assert read.warnings == written.warnings
    assert read.in_place == written.in_place
    assert read.median_rel_error == pytest.approx(written.median_rel_error, rel=FOUR_DIGITS)
    if written.median_rel_error_ge_1mib is None:
        assert read.median_rel_error_ge_1mib is None
    else:
        assert read.median_rel_error_ge_1mib == pytest.approx(written.median_rel_error_ge_1mib, rel=FOUR_DIGITS)
    assert len(read.segments) == len(written.segments)
    for r, w in zip(read.segments, written.segments, strict=True):
        assert (r.from_bytes, r.to_bytes) == (w.from_bytes, w.to_bytes)
        assert isinstance(r.from_bytes, Fraction) and r.from_bytes.denominator == 1
        assert float(r.link.alpha_s) == pytest.approx(w.alpha_s, rel=SIX_DIGITS, abs=0)
        assert float(r.link.beta_s_per_byte) == pytest.approx(w.beta_s_per_byte, rel=SIX_DIGITS, abs=0)
        assert r.link.gamma_s_per_byte == 0
        assert r.points == w.points
        assert r.median_rel_error == pytest.approx(w.median_rel_error, rel=FOUR_DIGITS)


def test_round_trip_with_another_collective(fits: dict[str, object]) -> None:
    allreduce, allgather = fits["h100"], fits["allgather"]
    assert len(allreduce.segments) == 3 and len(allgather.segments) == 3
    assert allreduce.warnings and allgather.warnings  # both logs have outliers: the warnings travel too
    text = allreduce.to_profile_toml(name="h100-cluster", others=(allgather,))
    profile = parse_profile(text, path="h100-cluster.toml")
    assert profile.name == "h100-cluster"
    assert [f.collective for f in profile.fits] == ["allreduce", "allgather"]
    _same(allreduce, profile.fits[0])
    _same(allgather, profile.fits[1])
    # [link] is the summary: α of the small messages (capped), β of the bandwidth regime
    assert float(profile.link.alpha_s) == pytest.approx(allreduce.alpha_s, rel=SIX_DIGITS)
    assert float(profile.link.beta_s_per_byte) == pytest.approx(allreduce.segments[-1].beta_s_per_byte,
                                                                rel=SIX_DIGITS)
    # and it survives a second trip: the written digits are a fixed point
    assert profile.to_dict() == parse_profile(text, path="h100-cluster.toml").to_dict()


def test_round_trip_osu_needs_p(fits: dict[str, object]) -> None:
    osu = fits["osu"]
    assert osu.p == 2 and osu.tool == "osu"
    profile = parse_profile(osu.to_profile_toml(name="kind"), path="kind.toml")
    assert [f.collective for f in profile.fits] == ["allreduce"]
    _same(osu, profile.fits[0])
    with pytest.raises(Exception, match="p is not in the"):
        fit(read_log(OSU_KIND))


def test_to_profile_toml_refuses_a_collective_twice(fits: dict[str, object]) -> None:
    with pytest.raises(Exception, match="allreduce is fitted twice"):
        fits["h100"].to_profile_toml(name="x", others=(fits["osu"],))
    with pytest.raises(Exception, match="empty"):
        fits["h100"].to_profile_toml(name="  ")


# -- link_for ---------------------------------------------------------------------------------------

HEAD = '[profile]\nname = "hand"\n\n'
FIT = '[fit]\ncollective = "allreduce"\nalgorithm = "ring"\np = 4\n'
SEG1 = '\n[[segment]]\nfrom_bytes = 8\nto_bytes = 4096\nalpha = "10 us"\nbeta = "1 ns/B"\n'
SEG2 = '\n[[segment]]\nfrom_bytes = 8192\nto_bytes = 1048576\nalpha = "40 us"\nbeta = "0.1 ns/B"\n'
ALLGATHER = ('\n[collective.allgather]\nalgorithm = "ring"\np = 4\n\n[[collective.allgather.segment]]\n'
             'from_bytes = 8\nto_bytes = 65536\nalpha = "7 us"\nbeta = "0.5 ns/B"\n')
GOOD = HEAD + FIT + SEG1 + SEG2 + ALLGATHER


def _profile(text: str = GOOD) -> Profile:
    return parse_profile(text, path="hand.toml")


def test_link_for_own_table() -> None:
    profile = _profile()
    own = profile.link_for("allgather")
    assert isinstance(own, PiecewiseLink)
    assert [(s.from_bytes, s.link.alpha_s, s.link.beta_s_per_byte) for s in own.segments] == [
        (8, F(7, 10**6), F(5, 10**10))]
    assert own.notes == ()
    assert own.source == "profile hand, allgather fit"
    allreduce = profile.link_for("allreduce")
    assert [(s.from_bytes, s.to_bytes, s.link.alpha_s) for s in allreduce.segments] == [
        (8, 4096, F(1, 10**5)), (8192, 2**20, F(4, 10**5))]
    assert allreduce.notes == ()
    # aliases name the same table
    assert profile.link_for("all_reduce").segments == allreduce.segments
    assert profile.link_for("all_gather").segments == own.segments
    assert profile.link_for("all_gather").notes == ()
    # no collective: the one [link] summarises, without a note
    assert profile.link_for(None).segments == allreduce.segments and profile.link_for(None).notes == ()


def test_link_for_another_collective_borrows_the_fitted_one() -> None:
    link = _profile().link_for("broadcast")
    assert link.segments == _profile().link_for("allreduce").segments
    assert link.notes == ("profile hand: fitted on allreduce; other collectives are priced approximately",)
    # without [link] the summary is α of the first segment and β of the last
    assert (link.summary.alpha_s, link.summary.beta_s_per_byte) == (F(1, 10**5), F(1, 10**10))


def test_link_for_names_the_warnings() -> None:
    text = GOOD.replace('p = 4\n', 'p = 4\nwarnings = ["one", "two"]\n', 1)
    link = _profile(text).link_for("allreduce")
    assert link.notes == ("profile hand: its allreduce fit has 2 warnings (load_profile('hand.toml') lists "
                          "them)",)
    assert _profile(text).fits[0].warnings == ("one", "two")
    assert _profile(text).link_for("allgather").notes == ()  # the allgather fit has none


def test_profile_without_segments_has_no_piecewise_link() -> None:
    assert _profile(HEAD + '[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n').link_for("allreduce") is None


def test_a_bare_number_is_read_in_seconds_as_written() -> None:
    """``alpha = 5e-6`` (no unit) is accepted: SI seconds, read as the decimal written, not its binary
    float; ``alpha = 0`` leaves the start-ups out."""
    segment = _profile(GOOD.replace('alpha = "10 us"', "alpha = 5e-6", 1)).fits[0].segments[0]
    assert segment.link.alpha_s == F(1, 200000)
    segment = _profile(GOOD.replace('alpha = "10 us"', "alpha = 0", 1)).fits[0].segments[0]
    assert segment.link.alpha_s == 0
    segment = _profile(GOOD.replace('beta = "1 ns/B"', "beta = 1e-9", 1)).fits[0].segments[0]
    assert segment.link.beta_s_per_byte == F(1, 10**9)


def test_a_one_size_segment_and_gamma_are_fine() -> None:
    text = GOOD.replace("to_bytes = 4096", "to_bytes = 8", 1).replace(
        'beta = "1 ns/B"', 'beta = "1 ns/B"\ngamma = "0.1 ns/B"\npoints = 3\nerror = 0.25', 1)
    segment = _profile(text).fits[0].segments[0]
    assert (segment.from_bytes, segment.to_bytes) == (8, 8)
    assert segment.link.gamma_s_per_byte == F(1, 10**10)
    assert (segment.points, segment.median_rel_error) == (3, 0.25)


MALFORMED = {
    "segment without fit": (HEAD + SEG1, "[fit] and [[segment]] go together"),
    "fit without segments, with a link": (HEAD + '[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n' + FIT,
                                          "[fit] and [[segment]] go together"),
    "fit without collective": (HEAD + '[fit]\nalgorithm = "ring"\n' + SEG1, '[fit] needs collective = "NAME"'),
    "unknown key in fit": (HEAD + FIT + "colour = 1\n" + SEG1, "[fit]: unknown key 'colour'"),
    "unknown key in segment": (HEAD + FIT + SEG1 + "colour = 1\n", "[[segment]] 1: unknown key 'colour'"),
    "unknown key in collective": (GOOD.replace('p = 4\n\n[[collective', 'p = 4\nhue = 2\n\n[[collective'),
                                  "[collective.allgather]: unknown key 'hue'"),
    "overlapping segments": (HEAD + FIT + SEG1 + SEG1.replace("from_bytes = 8\n", "from_bytes = 2048\n"),
                             "[[segment]] 2: from_bytes = 2048 is not above the previous segment's "
                             "to_bytes = 4096"),
    "touching segments": (HEAD + FIT + SEG1 + SEG1.replace("from_bytes = 8\n", "from_bytes = 4096\n"),
                          "[[segment]] 2: from_bytes = 4096 is not above"),
    "unordered segments": (HEAD + FIT + SEG2 + SEG1, "[[segment]] 2: from_bytes = 8 is not above"),
    "to below from": (HEAD + FIT + SEG1.replace("to_bytes = 4096", "to_bytes = 4"),
                      "[[segment]] 1: to_bytes = 4 is below from_bytes = 8"),
    "from 0": (HEAD + FIT + SEG1.replace("from_bytes = 8", "from_bytes = 0"),
               "[[segment]] 1: from_bytes = 0 is not a whole number >= 1"),
    "from negative": (HEAD + FIT + SEG1.replace("from_bytes = 8", "from_bytes = -8"),
                      "from_bytes = -8 is not a whole number >= 1"),
    "from float": (HEAD + FIT + SEG1.replace("from_bytes = 8", "from_bytes = 8.0"),
                   "from_bytes = 8.0 is not a whole number >= 1"),
    "from bool": (HEAD + FIT + SEG1.replace("from_bytes = 8", "from_bytes = true"),
                  "from_bytes = True is not a whole number >= 1"),
    "to missing": (HEAD + FIT + SEG1.replace("to_bytes = 4096\n", ""), "[[segment]] 1: to_bytes"),
    "alpha missing": (HEAD + FIT + SEG1.replace('alpha = "10 us"\n', ""), "[[segment]] 1: no latency given"),
    "alpha negative": (HEAD + FIT + SEG1.replace('"10 us"', '"-10 us"'), "[[segment]] 1: '-10 us' is negative"),
    "alpha bad unit": (HEAD + FIT + SEG1.replace('"10 us"', '"10 parsecs"'), "unknown unit 'parsecs'"),
    "alpha infinite": (HEAD + FIT + SEG1.replace('"10 us"', "1e400"), "not a finite number"),
    "own collective twice": (HEAD + FIT + SEG1 + ALLGATHER.replace("allgather", "allreduce"),
                             "allreduce is fitted twice"),
    "own collective twice by alias": (HEAD + FIT + SEG1 + ALLGATHER.replace("allgather", "all_reduce"),
                                      "allreduce is fitted twice"),
    "unknown collective": (HEAD + FIT + SEG1 + ALLGATHER.replace("allgather", "allfoo"),
                           "[collective.allfoo]: unknown collective 'allfoo'"),
    "unknown fitted collective": (HEAD + FIT.replace('"allreduce"', '"allfoo"') + SEG1,
                                  "[fit]: unknown collective 'allfoo'"),
    "collective without segments": (HEAD + FIT + SEG1 + '\n[collective.allgather]\nalgorithm = "ring"\np = 4\n',
                                    "[collective.allgather] needs its segments: write "
                                    "[[collective.allgather.segment]]"),
    "collective without fit": (HEAD + '[link]\nalpha = "1 us"\nbeta = "1 ns/B"\n' + ALLGATHER,
                               "[collective.NAME] tables need the [fit] table"),
    "collective naming itself": (GOOD.replace('p = 4\n\n[[coll', 'p = 4\ncollective = "allgather"\n\n[[coll'),
                                 "[collective.allgather]: the collective is the table's name"),
    "collective not a table": ("collective = 3\n" + HEAD + FIT + SEG1, "collective must be a table of tables"),
    "error -1": (HEAD + FIT + SEG1 + "error = -1\n", "[[segment]] 1: error = -1 is not a relative error >= 0"),
    "points x": (HEAD + FIT + SEG1 + 'points = "x"\n', "[[segment]] 1: points = 'x' is not a whole number >= 0"),
    "p 0": (HEAD + FIT.replace("p = 4", "p = 0") + SEG1, "[fit]: p = 0 is not a whole number >= 1"),
    "coefficient as a float": (HEAD + FIT + "latency_coefficient = 1.5\n" + SEG1,
                               "latency_coefficient = 1.5 is not an exact number"),
    "coefficient not a number": (HEAD + FIT + 'bandwidth_coefficient = "x/y"\n' + SEG1,
                                 "bandwidth_coefficient: 'x/y' is not a number"),
    "warnings not a list": (HEAD + FIT + 'warnings = "w"\n' + SEG1, "warnings must be a list of strings"),
    "segment not an array": (HEAD + FIT + '\n[segment]\nfrom_bytes = 8\nto_bytes = 9\nalpha = "1 us"\n'
                             'beta = "1 ns/B"\n', "[fit] needs its segments: write [[segment]]"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_profile(case: str) -> None:
    text, expected = MALFORMED[case]
    with pytest.raises(ParseError) as info:
        _profile(text)
    message = str(info.value)
    assert message.startswith("hand.toml")
    assert expected in message
    assert "\n" not in message


def test_fit_without_segments_and_link_names_the_segments() -> None:
    with pytest.raises(ParseError, match=r"\[fit\] and \[\[segment\]\] go together"):
        _profile(HEAD + FIT)


def test_a_calibrated_profile_needs_no_link_table() -> None:
    assert _profile(HEAD + FIT + SEG1).link is None


def test_cli_refuses_a_malformed_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    for text, words in ((HEAD + FIT + SEG2 + SEG1, "is not above the previous segment"),
                        (HEAD + SEG1, "[fit] and [[segment]] go together"),
                        (HEAD + FIT + SEG1 + "error = -1\n", "error = -1")):
        bad.write_text(text, encoding="utf-8")
        for command in (("cost", "allreduce", "-n", "1KiB"), ("cost", "allreduce", "ring", "-n", "1KiB"),
                        ("best", "allreduce")):
            out, err = run(capsys, *command, "-p", "8", "--profile", str(bad), rc=2)
            assert out == ""
            assert err.count("\n") == 1 and err.startswith("error: ")
            assert str(bad) in err and words in err


def test_a_profile_names_its_collective_without_loading_the_models() -> None:
    """The [fit] collective is checked with the names of the bottom layer (costmodel.collective_names):
    reading a calibrated profile loads neither the registry nor the calibration code."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from costmodel.profiles import parse_profile\n"
            f"p = parse_profile({(HEAD + FIT.replace('allreduce', 'all_reduce') + SEG1)!r}, path='h.toml')\n"
            "assert p.fits[0].collective == 'allreduce', p.fits\n"
            "print(sorted(m for m in sys.modules if m.startswith(('costmodel.collectives', "
            "'costmodel.calibration'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
