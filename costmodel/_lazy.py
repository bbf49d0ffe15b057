"""A package's exports imported on first use: one module-level ``__getattr__`` and ``__dir__`` for all.

A package lists each name it exports with the module defining it; importing the package loads none of
them, and the first ``package.name`` (or ``from package import name``) imports that one module and
keeps the value (PEP 562).  A command that needs one module so loads no other.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], names: Sequence[str], *,
                 packages: frozenset[str] = frozenset()
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of *package*: each name of *exports* from its module, each of
    *packages* the subpackage itself; *names* are what ``dir()`` lists (the package's ``__all__``)."""
    def attribute(name: str) -> Any:
        if name in packages:
            return importlib.import_module(f"{package}.{name}")  # importing sets the attribute
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        return sorted(names)

    return attribute, listing
