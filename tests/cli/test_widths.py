"""Every number and name reaches the reader whole, at every width (the rule of docs/design.md, "Rendering").

Each example command of the docs and of the ``--help`` texts is rendered at COLUMNS = 40 … 200 and
redirected with COLUMNS unset (not wrapped at all: the reference).  At each width no line is wider
than the width or ends in a space, no ``…`` appears that the reference lacks, and every token of the
reference holding a digit (a number with its unit, ``45.33 ms``, is one token) or naming something of
the ``--json`` result (an algorithm, a collective, an exercise id) appears as often, whole: on a line
of a table, a stacked block or wrapped prose.  Only the cells of optional columns the table says it
left out are excused, and words longer than the line (file paths at 40 columns).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.text import Text

from costmodel.cli import main
from costmodel.cli.layout import Table
from tests.examples import ROOT, doc_sessions, help_examples

WIDTHS = (40, 60, 80, 100, 200)

STAND_INS = {  # files the help examples name, and the repository's files that stand in for them
    "all_reduce_perf.txt": "tests/data/logs/nccl-tests/allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt",
    "all_reduce_perf_2x8.txt": "tests/data/excerpts/check/allreduce_h100x16_tree-2-nodes_nccltests309.txt",
    "osu_allreduce.txt": "tests/data/logs/osu/osu_allreduce_archer2_2node_256rank_slingshot.txt",
    "osu_latency.txt": "tests/data/osu-pair/osu_latency_azure_2node_ib.txt",
    "osu_bw.txt": "tests/data/osu-pair/osu_bw_azure_2node_ib.txt",
    "answers.toml": "docs/examples/answers.toml",
    "class.csv": "docs/examples/roster.csv",
    "hw.key": "docs/examples/course.key",
    "hw1/assignment.toml": "docs/examples/hw1/assignment.toml",
    "ada.toml": "docs/examples/submissions/ada.toml",
    "grace.toml": "docs/examples/submissions/grace.toml",
    "my-exercises.toml": "docs/examples/my-exercises.toml",
    "run.log": "tests/data/nccl-debug/rtx4090-8gpu-pcie-interleaved.log",
}

_AS_IS = {"--gradescope", "--latex", "--markdown"}
"""Formats for other programs (JSON, LaTeX, Markdown with its hard line breaks): printed as they are."""

_DRAWN = re.compile("[\u2500-\u257f]")
"""Box drawing: a bar of a timeline is no number (drawn to scale only where it fits)."""

_TOKEN = re.compile(r"\S*\d (?:[pnµumkKMGTPE]i?)?[Bbs](?:/[sB])?[),;:.]*(?=\s|$)|\S+")


def _commands() -> list[str]:
    found = [command for _, command, _ in doc_sessions()]
    for example in help_examples():
        found.append(" ".join(STAND_INS.get(word, word) for word in example.split(" ")))
    return list(dict.fromkeys(found))


def _run(argv: list[str], columns: int | None, home: Path, monkeypatch, capsys) -> tuple[str, list[Table]]:
    """stdout of ``costmodel ARGV`` run in a fresh folder beside the docs and tests (files it writes land
    there), and the tables that left columns out."""
    here = home / f"run{len(list(home.iterdir()))}"
    here.mkdir()
    for linked in ("docs", "tests"):
        (here / linked).symlink_to(ROOT / linked)
    monkeypatch.chdir(here)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    narrowed: list[Table] = []
    rendering = Table.__rich_console__

    def spy(self, console, options):
        yield from rendering(self, console, options)
        if self.left_out:
            narrowed.append(self)

    monkeypatch.setattr(Table, "__rich_console__", spy)
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, f"{shlex.join(argv)} at {columns}: {err}"
    return out, narrowed


def _names(data) -> set[str]:
    """The one-word strings of a JSON result (algorithms, collectives, exercise ids, ...)."""
    if isinstance(data, dict):
        return set().union(*map(_names, data.values()))
    if isinstance(data, list):
        return set().union(*map(_names, data))
    return {data} if isinstance(data, str) and re.fullmatch(r"[\w.+-]{2,}", data) else set()


def _tokens(text: str) -> Counter:
    """The tokens of *text* (a stacked block's ``column:`` label counts as the column's name)."""
    return Counter(t.removesuffix(":") for t in _TOKEN.findall(text))


def _left_out(tables: list[Table]) -> Counter:
    """How often each token appears in the columns (header included) the tables left out."""
    found: Counter = Counter()
    for t in tables:
        for name in t.left_out:
            i = t.columns.index(name)
            for cell in (name, *(row[i] for row in t.rows)):
                found += _tokens(cell.plain if isinstance(cell, Text) else Text.from_markup(cell).plain)
    return found


@pytest.mark.parametrize("command", _commands(), ids=lambda c: c.removeprefix("costmodel "))
def test_every_number_survives_every_width(command, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command)[1:]
    if argv[:2] == ["calibrate", "run"]:
        pytest.skip("calibrate run measures: each run prints other numbers (and it needs torch)")
    if argv[0] == "plot" or "--plot" in argv:  # the figure is not checked here (tests/cli/test_plot_cli.py is): not drawn
        monkeypatch.setattr("matplotlib.figure.Figure.savefig", lambda _, path, **__: Path(path).touch())
    monkeypatch.setenv("NO_COLOR", "1")
    human = [a for a in argv if a != "--json"]
    data, _ = _run([*human, "--json"], None, tmp_path, monkeypatch, capsys)
    names = _names(json.loads(data)) if data.startswith("{") else set()
    reference, _ = _run(human, None, tmp_path, monkeypatch, capsys)
    want = Counter({t: n for t, n in _tokens(reference).items()
                    if (re.search(r"\d", t) or t.strip("(),;*") in names) and not _DRAWN.search(t)})
    assert want, f"{command}: nothing to check"
    for width in WIDTHS:
        text, narrowed = _run(human, width, tmp_path, monkeypatch, capsys)
        where = f"{command} at COLUMNS={width}"
        for line in text.splitlines():
            if not _AS_IS & set(human):
                assert line == line.rstrip(), f"{where}: trailing spaces in {line!r}"
                assert cell_len(line) <= width, f"{where}: wider than {width}: {line!r}"
        assert text.count("…") <= reference.count("…"), f"{where}: something was cut\n{text}"
        excused = _left_out(narrowed)
        shown = _tokens(text)
        for token, n in sorted(want.items()):
            if cell_len(token) <= width // 2:
                assert shown[token] + excused[token] >= n, f"{where}: {token!r} is not whole\n{text}"


def _every_command(command=None, path: tuple[str, ...] = ()):
    """(the words naming it, the Click command) of the app and of every command and group under it."""
    if command is None:
        import typer.main

        from costmodel.cli.app import build

        command = typer.main.get_command(build(()))
    yield path, command
    for name, sub in (getattr(command, "commands", None) or {}).items():
        yield from _every_command(sub, (*path, name))


_HELPED = [pytest.param(path, [p for p in command.params if not getattr(p, "hidden", False)],
                        id=" ".join(path) or "costmodel") for path, command in _every_command()]


def _whole(name: str, text: str) -> int:
    """How often *name* (an option, a metavar) appears in *text* whole: not inside a longer word."""
    return len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text))


@pytest.mark.parametrize(("path", "params"), _HELPED)
def test_help_shows_every_option_name_whole(path, params, monkeypatch, capsys):
    """At 40, 60 and 80 columns the help shows each option's names and metavar whole (stacked if
    need be), as often as at 200 columns: none cut (``--micro…``) or folded over two lines."""
    monkeypatch.setenv("NO_COLOR", "1")
    names = {n for p in params for n in (*p.opts, *p.secondary_opts) if n.startswith("-")}
    names |= {p.metavar for p in params if p.param_type_name == "option" and p.metavar}
    shown = {}
    for width in (200, 40, 60, 80):
        monkeypatch.setenv("COLUMNS", str(width))
        assert main([*path, "--help"]) == 0
        shown[width] = capsys.readouterr().out
    for width in (40, 60, 80):
        where = f"costmodel {' '.join(path)} --help at COLUMNS={width}"
        text = shown[width]
        assert all(cell_len(line) <= width for line in text.splitlines()), f"{where}: too wide\n{text}"
        assert text.count("…") <= shown[200].count("…"), f"{where}: something was cut\n{text}"
        for name in sorted(names):
            assert _whole(name, text) >= max(_whole(name, shown[200]), 1), f"{where}: {name!r} cut\n{text}"


def test_a_narrow_help_is_stacked_and_a_wide_one_is_typers_table(monkeypatch, capsys):
    """Stacked: the names and type on a line, the help indented below; wide: the names, type and help
    side by side, as typer prints them."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "40")
    assert main(["step", "--help"]) == 0
    narrow = capsys.readouterr().out
    assert "│ --microbatches, -m  M" in narrow
    assert "│     Micro-batches per replica per" in narrow
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["step", "--help"]) == 0
    wide = capsys.readouterr().out
    assert re.search(r"│ --microbatches +-m +M +Micro-batches per replica per step", wide)


def _wrapped_by_measuring_each_line(text: Text, width: int, hang: int) -> list[Text]:
    """The wrapping of a note's line, done the plain way: each candidate line measured whole and each
    piece sliced from the text (the same rule as costmodel.cli.layout's, which grows a line's width word
    by word and divides the text once)."""
    from costmodel.cli.layout import _WORD, _fitting

    hang = max(0, min(hang, width // 2))
    plain, pieces = text.plain, []
    start, end, room = 0, -1, width
    for word in _WORD.finditer(plain):
        if end >= 0 and cell_len(plain[start:word.end()]) > room:
            pieces.append((start, end))
            start, end, room = word.start(), -1, width - hang
        while end < 0 and cell_len(plain[start:word.end()]) > room:
            cut = _fitting(plain, start, word.end(), room)
            pieces.append((start, cut))
            start, room = cut, width - hang
        end = word.end()
    pieces.append((start, max(end, start)))
    return [text[a:b] if k == 0 else Text(" " * hang).append_text(text[a:b]) for k, (a, b) in enumerate(pieces)]


def test_a_wrapped_line_is_the_plain_ways_own():
    """Lines of words, spaces, wide characters, sizes kept with their units, and styled spans wrap into
    the same pieces, with the same styles, as measuring each line whole would give."""
    import random

    from costmodel.cli.layout import _wrap

    rng = random.Random(7)
    for _ in range(200):
        words = ["".join(rng.choice("ab µ中-1") for _ in range(rng.randint(0, rng.choice((30, 120)))))
                 for _ in range(rng.randint(0, 40))]
        plain = rng.choice([" ", "  ", ""]).join(words) + rng.choice(["", " 3 MB", " 12 GiB/s"])
        text = Text(plain)
        if plain and rng.random() < 0.7:
            text.stylize("bold", 0, rng.randint(0, len(plain)))
            text.stylize("red", rng.randint(0, len(plain)))
        width, hang = rng.randint(3, 50), rng.randint(0, 8)
        assert [(t.plain, t.spans) for t in _wrap(text, width, hang)] == \
            [(t.plain, t.spans) for t in _wrapped_by_measuring_each_line(text, width, hang)]
