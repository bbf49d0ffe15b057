"""What a module declares at import and makes on first use: a package's exports, a regular expression.

:func:`lazy_exports` gives a package one module-level ``__getattr__`` and ``__dir__``: the package lists
each name it exports with the module defining it; importing the package loads none of them, and the
first ``package.name`` (or ``from package import name``) imports that one module and keeps the value
(PEP 562).  A command that needs one module so loads no other.

:class:`LazyPattern` is a module-level regular expression compiled on its first match: ``re.compile``
at module level costs 0.05-0.3 ms a pattern at every import, whether the command matches it or not
(the typed forms of a quantity, ``10⁻³`` or ``1,5 GB``, which most commands never see).
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["LazyPattern", "lazy_exports"]


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


class LazyPattern:
    """A regular expression compiled when it first matches, with :class:`re.Pattern`'s matching methods.

    >>> digits = LazyPattern(r"[0-9]+")
    >>> digits.fullmatch("2026").group(), digits.findall("8 x 16")
    ('2026', ['8', '16'])
    """

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The :class:`re.Pattern`, compiled on the first call."""
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)
