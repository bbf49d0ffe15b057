"""Every source a reader is shown can be looked up: papers and the project's own pages, no private files.

And an answer key shows the student's numbers only: no example source quotes its default givens,
so the subtitle of a variant's worked solution never contradicts the variant.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from costmodel.examples import all_examples
from costmodel.exercises import load_bank, problem_sheet
from costmodel.references import CITATIONS
from tests.clirun import run_json

ROOT = Path(__file__).resolve().parent.parent
# a path outside the repository, or the names the unpublished texts went by
UNRESOLVABLE = re.compile(r"(?i:shared/|seeds/|seed texts?\b)|\bDSGD §|\bPatterns[,']|Training Patterns")


def _shipped_files() -> list[str]:
    files = [*ROOT.joinpath("costmodel").rglob("*.py"), *ROOT.joinpath("costmodel").rglob("*.toml"),
             *ROOT.joinpath("docs").rglob("*.md"), ROOT / "README.md", ROOT / "mkdocs.yml"]
    return sorted(str(f.relative_to(ROOT)) for f in files)


def test_no_output_names_a_private_file(capsys):
    outputs = {
        "example": run_json(capsys, "example"),
        "exercise list": run_json(capsys, "exercise", "list"),
        "profiles": run_json(capsys, "profiles"),
    }
    for name, data in outputs.items():
        assert not UNRESOLVABLE.search(str(data)), name
    for citation in CITATIONS.values():
        assert not UNRESOLVABLE.search(str(citation)), citation.key
    for example in all_examples():
        assert not UNRESOLVABLE.search(example.source), example.name


@pytest.mark.parametrize("path", _shipped_files())
def test_no_shipped_file_or_page_names_a_private_file(path):
    text = (ROOT / path).read_text(encoding="utf-8")
    found = UNRESOLVABLE.search(text)
    assert found is None, f"{path}: {text[max(0, found.start() - 60):found.end() + 60]!r}"


def test_no_example_source_quotes_its_default_givens():
    for example in all_examples():
        for given in example.givens:
            shown = given.kind.show(given.parse(given.default)).split(" = ")[0]
            quoted = [f"{given.symbol} = {shown}"] if given.symbol else []
            if any(c.isdigit() for c in shown) and len(shown) > 2:
                quoted.append(shown)
            for text in quoted:
                assert text not in example.source, (example.name, text)


@pytest.mark.parametrize("seed", [3, 17, 101])
def test_an_answer_key_shows_the_variants_numbers_only(seed):
    bank = load_bank()
    exercise = bank.get("ring-bytes")
    variant = exercise.variant(seed)
    key = problem_sheet(bank, seed=seed, ids=["ring-bytes"]).key
    subtitle = key.split("### Worked solution", 1)[1].split("| given |", 1)[0]
    for name, shown in variant.shown.items():
        assert f"| {exercise.worked_example.given(name).label}" in key
        assert shown.replace(" ", "") in key.replace(" ", "")
    defaults = exercise.variant(None).shown
    for name, value in defaults.items():
        if variant.shown[name] != value:
            assert value not in subtitle, (name, value, subtitle)
    assert not re.search(r"\bp = \d", subtitle) and not re.search(r"\d+ ?[kMG]i?B", subtitle), subtitle
