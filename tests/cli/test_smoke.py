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
