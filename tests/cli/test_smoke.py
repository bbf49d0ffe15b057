"""The installed entry points, run as a user would, and what they import."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

ARGS = ["cost", "allreduce", "-p", "4", "-n", "100MB", "--alpha", "0s", "--bandwidth", "12.5GB/s", "--json"]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def test_python_dash_m_runs_a_query():
    done = _run(sys.executable, "-m", "costmodel", *ARGS)
    assert done.returncode == 0, done.stderr
    ring = next(r for r in json.loads(done.stdout)["results"] if r["algorithm"] == "ring")
    assert ring["bytes_sent_per_rank"] == 150_000_000  # 2 (3/4) 100 MB
    assert ring["rounds"] == 6


def test_bad_input_from_a_real_process():
    done = _run(sys.executable, "-m", "costmodel", "cost", "allreduce", "-p", "4", "-n", "1KB",
                "--profile", "textbook")
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_import_costmodel_stays_light():
    code = ("import sys, costmodel; costmodel.compare; "
            "print(sorted(m for m in ('typer', 'rich', 'torch', 'matplotlib', 'sympy', 'numpy', 'pandas') "
            "if m in sys.modules))")
    done = _run(sys.executable, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _loaded_after(runs: list[list[str]], watched: tuple[str, ...]) -> list[str]:
    """Which *watched* modules a fresh interpreter has loaded after ``costmodel RUN`` for each run."""
    code = (
        "import sys, io, json, contextlib\n"
        "from costmodel.cli import main\n"
        f"for argv in {runs!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(argv) == 0\n"
        f"print(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))\n"
    )
    done = _run(sys.executable, "-c", code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


LINK = ["--alpha", "5us", "--beta", "0.08ns/B"]


def test_numeric_commands_do_not_import_sympy_numpy_or_pandas():
    runs = [[*argv, *LINK, "--json"] for argv in (
        ["cost", "allreduce", "-p", "16", "-n", "1MiB"], ["crossover", "allreduce", "rd", "rab", "-p", "16"],
        ["best", "allreduce", "-p", "16"], ["bound", "allreduce", "-p", "16", "-n", "1MiB"])]
    assert _loaded_after(runs, ("sympy", "numpy", "pandas", "rich", "costmodel.topology",
                                "costmodel.collectives.hierarchical")) == []


def test_the_human_cost_table_loads_only_what_it_renders():
    runs = [["cost", "allreduce", "-p", "16", "-n", "1MiB", *LINK]]
    assert _loaded_after(runs, ("sympy", "numpy", "pandas", "costmodel.topology", "costmodel.crossovers",
                                "costmodel.profiles", "costmodel.collectives.formula",
                                "costmodel.collectives.hierarchical", "rich._emoji_codes")) == []


def test_every_renderer_named_by_type_names_a_real_type():
    import importlib

    from costmodel.cli.render import _BY_NAME

    for name in _BY_NAME:
        module, _, kind = name.rpartition(".")
        found = getattr(importlib.import_module(module), kind)
        assert f"{found.__module__}.{found.__qualname__}" == name


def test_the_group_table_lists_every_command():
    import importlib

    from costmodel.cli.app import GROUPS, app

    def names_of(typer_app):
        return ({c.name or c.callback.__name__ for c in typer_app.registered_commands}
                | {g.name for g in typer_app.registered_groups})

    listed = {name for names in GROUPS.values() for name in names}
    assert names_of(app) == listed
    for module, names in GROUPS.items():
        group = importlib.import_module(f"costmodel.cli.{module}").app
        assert names_of(group) == set(names), module


def test_the_help_screens_listing_is_current():
    """`costmodel --help` lists the commands from a table, without importing them: the table is what the
    commands say (regenerate with `python -m costmodel.cli.app > costmodel/cli/summaries.py`)."""
    from costmodel.cli.app import summaries
    from costmodel.cli.summaries import SUMMARIES

    assert summaries() == SUMMARIES


@pytest.mark.parametrize("columns", ["80", "120"])
def test_the_listed_help_screen_is_the_full_apps(monkeypatch, columns):
    import io
    from contextlib import redirect_stdout

    from costmodel.cli import main
    from costmodel.cli.app import build

    monkeypatch.setenv("COLUMNS", columns)
    listed, full = io.StringIO(), io.StringIO()
    with redirect_stdout(listed):
        assert main(["--help"]) == 0
    with redirect_stdout(full):
        build()(args=["--help"], prog_name="costmodel", standalone_mode=False)
    assert listed.getvalue() == full.getvalue()


def test_the_help_screen_imports_no_command():
    assert _loaded_after([["--help"]], ("costmodel.cli.cost", "costmodel.cli.step", "costmodel.cli.nccl",
                                        "costmodel.cli.plot", "sympy", "numpy")) == []


def test_the_command_line_collects_garbage_less_often_and_gives_the_thresholds_back(monkeypatch, capsys):
    """A command's start-up objects live to its end: the youngest collection waits for YOUNG_COLLECTION
    allocations while a command runs (a step query then collects never), and the caller's thresholds
    come back afterwards, also from an error."""
    import gc

    from costmodel import cli

    before, seen = gc.get_threshold(), []
    monkeypatch.setattr(cli, "_run", lambda argv: seen.append(gc.get_threshold()) or 0)
    assert cli.main(["--version"]) == 0
    assert seen[0][0] == max(cli.YOUNG_COLLECTION, before[0]) and seen[0][1:] == before[1:]
    assert gc.get_threshold() == before

    def failing(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_run", failing)
    with pytest.raises(KeyboardInterrupt):
        cli.main([])
    assert gc.get_threshold() == before
    monkeypatch.undo()
    code = ("import gc, sys; from costmodel.cli import main; counts = []; "
            "gc.callbacks.append(lambda phase, info: counts.append(info['generation']) if phase == 'start' else None); "
            "sys.argv = ['costmodel'] + sys.argv[1:]; main(); print('collections', len(counts), file=sys.stderr)")
    done = _run(sys.executable, "-c", code, "step", "--dp", "8", "--tp", "8", "--pp", "4", "-m", "8", "--layers", "32",
                "--hidden", "4096", "--heads", "32", "--seq", "2048", "--vocab", "51200", "--gpu", "h100-sxm")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "collections 0"


def test_the_program_ends_with_mains_status_and_its_objects_frozen(monkeypatch):
    """console() (the console script, python -m costmodel) returns main's status as the exit status and
    moves what is left out of the collector's reach first, so that the shutdown does not scan it; main()
    itself freezes nothing (a notebook's objects stay collectable)."""
    import gc

    from costmodel import cli

    monkeypatch.setattr(cli, "_run", lambda argv: 3)
    assert cli.main([]) == 3 and gc.get_freeze_count() == 0
    try:
        with pytest.raises(SystemExit) as ended:
            cli.console()
        assert ended.value.code == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_program_writes_everything_before_it_ends(tmp_path):
    """A real process: its output and the file it writes are whole, and its status is main's."""
    out = tmp_path / "fit.toml"
    log = "tests/data/logs/nccl-tests/allreduce_a100x16_2node_rdma_oci.txt"
    done = _run(sys.executable, "-m", "costmodel", "calibrate", "fit", log, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and out.read_text(encoding="utf-8").startswith("[profile]")
    bad = _run(sys.executable, "-m", "costmodel", "step", "--layers", "100000", "-F", "1ms", "-b", "2ms")
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")


def test_a_run_of_a_sub_command_builds_that_sub_command_alone():
    """`costmodel nccl predict` registers nccl's predict only; a run naming no sub-command, or a
    misspelt one, gets the whole group (its listing, its did-you-mean); the group module is untouched."""
    from costmodel.cli import nccl
    from costmodel.cli.app import build

    def names(argv):
        (group,) = build(argv).registered_groups
        return sorted([c.name or c.callback.__name__ for c in group.typer_instance.registered_commands]
                      + [g.name for g in group.typer_instance.registered_groups])

    whole = names(["nccl", "--help"])
    assert len(whole) > 3 and "predict" in whole and "compare" in whole
    assert names(["nccl", "predict", "allreduce", "-n", "1MiB"]) == ["predict"]
    assert names(["nccl", "compare", "--help"]) == ["compare"]
    assert names(["nccl", "predikt"]) == whole
    assert names(["nccl"]) == whole
    assert names(["calibrate", "fit", "log.txt"]) == ["fit"]
    (group,) = [g for g in nccl.app.registered_groups if g.name == "nccl"]
    assert len(group.typer_instance.registered_commands) + len(group.typer_instance.registered_groups) == len(whole)
