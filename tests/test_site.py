"""The documentation site: mkdocs.yml lists every page, and `mkdocs build --strict` passes."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"


def _nav_pages() -> list[str]:
    """The pages named in the nav (`- Title: path.md` or `- path.md`), read without a YAML parser."""
    text = CONFIG.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s*-\s+(?:[^\n]*?:\s+)?(\S+\.md)\s*$", nav, flags=re.MULTILINE)


def test_every_page_is_in_the_nav_once():
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    listed = _nav_pages()
    assert sorted(set(listed)) == sorted(listed), "a page is listed twice in mkdocs.yml"
    assert sorted(listed) == pages, "mkdocs.yml's nav and the pages under docs/ differ"


def test_config_is_strict_with_the_builtin_theme():
    text = CONFIG.read_text(encoding="utf-8")
    assert re.search(r"^strict:\s*true\s*$", text, flags=re.MULTILINE)
    assert re.search(r"^docs_dir:\s*docs\s*$", text, flags=re.MULTILINE)
    assert re.search(r"^\s+name:\s*(mkdocs|readthedocs)\s*$", text, flags=re.MULTILINE)


def test_mkdocs_builds_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install 'mkdocs>=1.6'); the site build is not checked")
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(CONFIG),
         "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (site / "index.html").is_file()
    assert (site / "reference" / "commands" / "index.html").is_file()
