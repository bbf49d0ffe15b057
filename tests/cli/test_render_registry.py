"""Every renderer is declared once with ``@renders(type name)`` and found by that name."""

from __future__ import annotations

import importlib
import pkgutil

import costmodel.cli
from costmodel.cli import render


def _all_declared() -> dict:
    for info in pkgutil.iter_modules(costmodel.cli.__path__):
        importlib.import_module(f"costmodel.cli.{info.name}")
    return dict(render._BY_NAME)


def test_every_declared_renderer_names_a_real_type_and_lives_where_the_table_says():
    for name, forms in _all_declared().items():
        module, _, kind = name.rpartition(".")
        found = importlib.import_module(module)
        for part in kind.split("."):
            found = getattr(found, part)
        assert f"{found.__module__}.{found.__qualname__}" == name
        where = render.RENDERED_IN.get(name, found.__module__)
        for fn in forms.values():
            assert fn.__module__ == where, f"{name} is rendered in {fn.__module__}, found in {where}"


def test_every_type_in_the_table_has_its_renderer():
    declared = _all_declared()
    assert set(render.RENDERED_IN) <= {name for name, forms in declared.items() if "text" in forms}
    assert all(not name.startswith("costmodel.cli.") for name in render.RENDERED_IN)


def test_nothing_registers_renderers_another_way():
    from pathlib import Path

    root = Path(costmodel.cli.__file__).parent
    for path in root.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "render.register" not in text and "singledispatch" not in text, path.name


def test_a_result_without_a_renderer_is_a_type_error():
    import pytest

    class Unknown:
        pass

    with pytest.raises(TypeError, match="no rendering for Unknown"):
        render.render(Unknown())
