"""One set of input rules on the command line: units on times and rates, names first, one link rule,
the same algorithm names in every command, ``help``, and crossovers that say what they searched."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives._schemes import SCHEMES
from costmodel.links import link_from_options
from costmodel.units import parse_inverse_rate, parse_time
from tests.clirun import run, run_json

LINK = ["--alpha", "5us", "--beta", "0.08ns/B"]


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """``costmodel ARGS`` fails with exit code 2 and one ``error:`` line (no traceback); the line."""
    out, err = run(capsys, *args, rc=2)
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


# -- a time or a rate needs its unit on the command line ------------------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["cost", "allreduce", "-p", "16", "-n", "1MB", "--alpha", "5", "--beta", "0.08ns/B"],
     "'5' has no unit: write 5us or 5s"),
    (["cost", "allreduce", "-p", "16", "-n", "1MB", "--alpha", "5us", "--beta", "0.08"],
     "'0.08' has no unit: write 0.08ns/B or 0.08s/B"),
    (["cost", "allreduce", "-p", "16", "-n", "1MB", "--alpha", "5us", "--bandwidth", "100"],
     "'100' has no unit: write 100GB/s or 100B/s"),
    (["cost", "allreduce", "-p", "16", "-n", "1MB", *LINK, "--gamma", "1e-10"], "'1e-10' has no unit"),
    (["cost", "allreduce", "-n", "1MB", "--level", "8:1:150GB/s", "--level", "2:1us:10GB/s"],
     "'1' has no unit: write 1us or 1s"),
    (["calibrate", "run", "--budget", "0.2"], "'0.2' has no unit: write 0.2us or 0.2s"),
])
def test_a_bare_time_or_rate_is_refused(capsys, args, needle):
    assert needle in one_error(capsys, *args)


def test_zero_and_bare_sizes_need_no_unit(capsys):
    data = run_json(capsys, "cost", "allreduce", "ring", "-p", "4", "-n", "1000", "--alpha", "0",
                    "--beta", "1ns/B")
    assert (data["n_bytes"], data["alpha_s"]) == (1000, 0)


def test_the_python_api_keeps_si_numbers():
    assert parse_time("5") == 5 and parse_inverse_rate(8e-11) == Fraction(8, 10**11)  # a float as typed
    assert link_from_options(alpha="5e-6", beta=8e-11).alpha_s == Fraction(5, 10**6)


def test_a_spelt_out_bit_rate_suggests_its_short_form(capsys):
    err = one_error(capsys, "cost", "allreduce", "-p", "4", "-n", "1MB", "--alpha", "1us",
                    "--bandwidth", "100Gbit/s")
    assert "did you mean 'Gb/s'?" in err


# -- names first, and the same names in every command ---------------------------------------------


@pytest.mark.parametrize("args", [
    ["cost", "allredcue", "-p", "16", "-n", "1MB"],
    ["cost", "allredcue", "-p", "16", "-n", "1KB", "--alpha", "5"],
    ["bound", "allredcue", "-p", "16", "-n", "1MB"],
    ["crossover", "allredcue", "ring", "rab", "-p", "16"],
    ["best", "allredcue", "-p", "16", "--alpha", "5"],
    ["formula", "allredcue", "ring"],
    ["schedule", "allredcue", "ring", "-p", "4", "--alpha", "5"],
])
def test_a_misspelt_collective_comes_before_the_link_and_the_options(capsys, args):
    assert "unknown collective 'allredcue'; did you mean 'allreduce'?" in one_error(capsys, *args)


@pytest.mark.parametrize("args", [
    ["cost", "allreduce", "rign", "-p", "16", "-n", "1KB"],
    ["crossover", "allreduce", "ring", "rign", "-p", "16", "--alpha", "5"],
    ["best", "allreduce", "rign", "rab", "-p", "16"],
    ["schedule", "allreduce", "rign", "-p", "4"],
])
def test_a_misspelt_algorithm_comes_before_the_link_and_the_options(capsys, args):
    assert "unknown algorithm 'rign' for allreduce; did you mean 'ring'?" in one_error(capsys, *args)


def _names_cost_accepts():
    for spec in COLLECTIVES.values():
        for algo in spec.algorithms:
            for name in (algo.name, *algo.aliases):
                yield spec.name, name, False
    for scheme in SCHEMES:
        for name in (scheme.name, *scheme.aliases):
            yield "allreduce", name, True


@pytest.mark.parametrize(("collective", "name", "hierarchical"), list(_names_cost_accepts()),
                         ids=str)
def test_formula_knows_every_name_cost_accepts(capsys, collective, name, hierarchical):
    if hierarchical:
        run(capsys, "cost", collective, name, "-n", "1MB", "--level", "2:1us:1GB/s", "--level", "2:5us:1GB/s")
        data = run_json(capsys, "formula", collective, name)
        assert (data["collective"], data["algorithm"]) == (collective, _scheme_name(name))
        assert "s₀" in run(capsys, "formula", collective, name)[0]
        assert "s_{1}" in run(capsys, "formula", collective, name, "--latex")[0]
        # crossover and best price on one link: a clean refusal that says where the model is
        for args in (["crossover", collective, "ring", name, "-p", "8", *LINK],
                     ["best", collective, "-p", "8", name, "ring", *LINK]):
            err = one_error(capsys, *args)
            assert "is a hierarchical all-reduce: priced level by level on a topology" in err
            assert f"costmodel formula allreduce {_scheme_name(name)}" in err
            assert f"costmodel cost allreduce {_scheme_name(name)} --level" in err
    else:
        run(capsys, "cost", collective, name, "-p", "8", "-n", "1MB", *LINK)
        assert run_json(capsys, "formula", collective, name)["collective"] == collective


def _scheme_name(name):
    return next(s.name for s in SCHEMES if name in (s.name, *s.aliases))


@pytest.mark.parametrize(("args", "message"), [
    (["allreduce", "ring", "--inner", "ring"], "--inner ring chooses a phase of a hierarchical all-reduce; "
                                               "'ring' is flat"),
    (["allreduce", "rab", "--outer", "tree"], "--outer tree chooses a phase of a hierarchical all-reduce"),
    (["allreduce", "smp", "--inner", "ring"], "inner algorithm 'ring' does not apply to "
                                              "hierarchical-reduce-bcast; choose binomial"),
    (["allreduce", "hier", "--outer", "rign"], "unknown algorithm 'rign' for allreduce; did you mean 'ring'?"),
    (["allreduce", "hier", "--outer", "rabenseifner-folded"], "is not composed across levels"),
])
def test_formula_refuses_inner_and_outer_that_do_not_apply(capsys, args, message):
    assert message in one_error(capsys, "formula", *args)


def test_a_hierarchical_name_for_another_collective_is_explained(capsys):
    err = one_error(capsys, "formula", "allgather", "hierarchical")
    assert "'hierarchical' is a hierarchical all-reduce; allgather has no hierarchical algorithm" in err


# -- one rule for a link, shown wherever time is priced --------------------------------------------


@pytest.mark.parametrize("args", [
    ["multilane", "-n", "1GB", "--lanes", "4", "--bandwidth", "12.5GB/s"],
    ["compress", "--elements", "25M", "--method", "int8", "-p", "16", "--bandwidth", "12.5GB/s"],
    ["traffic", "tp", "--batch", "1", "--seq", "2048", "--hidden", "12288", "--tp", "8", "-B", "300GB/s"],
    ["traffic", "ps", "--workers", "16", "--model", "400MB", "--bandwidth", "1GB/s"],
    ["gossip-vs-allreduce", "ring", "-p", "16", "-n", "100MB", "--bandwidth", "12.5GB/s"],
    ["cost", "allreduce", "-p", "16", "-n", "1MB", "--bandwidth", "12.5GB/s"],
])
def test_a_missing_alpha_is_the_same_error_everywhere(capsys, args):
    assert "no latency given; pass --alpha TIME (e.g. 5us, or 0 to leave start-ups out)" in \
        one_error(capsys, *args)


@pytest.mark.parametrize("args", [
    ["multilane", "-n", "1GB", "--lanes", "4"],
    ["compress", "--elements", "25M", "--method", "int8", "-p", "16"],
    ["traffic", "tp", "--batch", "1", "--seq", "2048", "--hidden", "12288", "--tp", "8"],
    ["traffic", "ps", "--workers", "16", "--model", "400MB"],
    ["traffic", "moe", "--tokens", "4096", "--hidden", "4096", "--experts", "8"],
    ["gossip-vs-allreduce", "ring", "-p", "16", "-n", "100MB"],
    ["schedule", "allreduce", "ring", "-p", "4", "-n", "1MB"],
])
def test_every_priced_command_shows_its_link(capsys, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "200")
    out, _ = run(capsys, *args, "--alpha", "0", "--bandwidth", "12.5GB/s")
    assert "α = 0 s · β = 0.08 ns/B = 12.5 GB/s (100 Gb/s)   (options)" in out
    data = run_json(capsys, *args, "--alpha", "0", "--bandwidth", "12.5GB/s")
    assert (data["alpha_s"], data["beta_s_per_byte"], data["link_source"]) == (0, 8e-11, "options")


@pytest.mark.parametrize(("command", "needle"), [
    ("multilane", "The payload to transfer"),
    ("gossip-vs-allreduce", "The model each worker holds"),
    ("rat", "The vector each worker all-reduces"),
])
def test_size_help_says_what_the_size_is(capsys, monkeypatch, command, needle):
    monkeypatch.setenv("COLUMNS", "200")
    out, _ = run(capsys, command, "--help")
    assert needle in out and "collective" not in out.split(needle)[1].splitlines()[0]


# -- help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["cost"], ["traffic", "tp"]], ids=lambda x: " ".join(x) or "top")
def test_help_is_the_same_as_dash_dash_help(capsys, command):
    assert run(capsys, "help", *command) == run(capsys, *command, "--help")


def test_help_of_a_misspelt_command_suggests(capsys):
    assert "Did you mean 'cost'?" in one_error(capsys, "help", "cots")


# -- crossover --min/--max --------------------------------------------------------------------------


def test_crossover_finds_the_2_tb_crossover_with_a_wider_max(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    args = ["crossover", "allreduce", "ring", "dbt", "-p", "65536", *LINK]
    out, _ = run(capsys, *args)
    assert "no crossover between 0 B and 17.18 GB = 16 GiB: double-binary-tree is cheaper throughout; " \
           "widen --max" in out
    out, _ = run(capsys, *args, "--max", "4TB")
    assert "crossover at n* = 2.198 TB = 1.999 TiB = 366132621312000000/166547 B exactly" in out
    data = run_json(capsys, *args, "--max", "4TB")
    assert (data["min_bytes"], data["max_bytes"], data["method"], data["exhausted"]) == (0, 4e12, "scan", False)
    assert data["crossovers"][0]["n_bytes_exact"] == "366132621312000000/166547"


def test_crossover_names_a_tie_a_tie(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out, _ = run(capsys, "crossover", "broadcast", "chain", "binomial", "-p", "3", *LINK)
    assert "0 B to 125 kB: equal (a tie)" in out and "cheaper" not in out.split("equal (a tie)")[0]
    assert "the tie ends at n = 125 kB" in out
    data = run_json(capsys, "best", "broadcast", "-p", "3", *LINK)
    assert [r["from_bytes"] for r in data["ranges"]] == [1, 125000, 375000, 750000]


def test_crossover_min_max_need_p(capsys):
    assert "use --p-min and --p-max" in one_error(capsys, "crossover", "allreduce", "ring", "rab", "-n", "1MB",
                                                  "--max", "1GB", *LINK)
