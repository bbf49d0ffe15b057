"""Worked examples: textbook calculations of the models, computed by the library, step by step.

Each example is a small function in one of the topic modules below, registered
with :func:`example`; it records givens, steps and named answers on a
:class:`~costmodel.examples.work.Work` sheet.  ``--set`` recomputes an example
with new givens, and the exercises (``costmodel.exercises``) draw their
per-student variants and compute their answers through the same functions.

>>> from costmodel.examples import get
>>> worked = get("ring-bytes").run({"p": "8", "n": "64 MB"})
>>> worked.answer.value, worked.answers["rounds"].value
(Fraction(112000000, 1), 14)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from costmodel.errors import UnknownNameError
from costmodel.examples.work import Example, Given, Work, Worked

__all__ = ["Example", "Given", "Work", "Worked", "all_examples", "example", "get"]

MODULES = ("collectives", "topology", "consensus", "training", "pipeline", "memory", "rounds", "hardware")
"""The topic modules (in costmodel.examples) that register examples, in listing order."""

_REGISTRY: dict[str, Example] = {}
_loaded = False


def example(name: str, *, title: str, source: str, topic: str, givens: Sequence[Given], answer: str,
            slips: Sequence[str] = ()) -> Callable[[Callable[[Work], None]], Callable[[Work], None]]:
    """Register the decorated function as the example *name* (its principal answer is *answer*)."""

    def register(fn: Callable[[Work], None]) -> Callable[[Work], None]:
        if name in _REGISTRY:
            raise ValueError(f"example {name!r} is registered twice")
        _REGISTRY[name] = Example(name, title, source, topic, tuple(givens), fn, answer, tuple(slips))
        return fn

    return register


def _load() -> None:
    global _loaded  # noqa: PLW0603 - the registry fills once, on first use
    if not _loaded:
        _loaded = True
        for module in MODULES:
            importlib.import_module(f"costmodel.examples.{module}")


def all_examples() -> tuple[Example, ...]:
    """Every example, in the order of :data:`MODULES` and then of definition."""
    _load()
    return tuple(_REGISTRY.values())


def get(name: str) -> Example:
    """The example called *name*."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("example", name, _REGISTRY) from None
