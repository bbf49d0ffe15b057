"""The public API: every exported name resolves, and the table and __all__ agree."""

from __future__ import annotations

import costmodel


def test_every_exported_name_resolves():
    for name in costmodel.__all__:
        assert getattr(costmodel, name) is not None, name


def test_export_table_and_all_agree():
    assert set(costmodel._EXPORTS) == set(costmodel.__all__) - {"__version__"}
