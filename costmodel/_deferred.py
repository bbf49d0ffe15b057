"""The methods ``dataclasses`` writes for this package's classes, compiled when first used.

A dataclass gets its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and, frozen, ``__setattr__``
and ``__delattr__`` as source text that Python 3.10-3.12 compile one by one while the class is made:
about 0.5 ms a frozen class, most of a command's start-up spent in this package's own modules (a
``step`` query makes 63 such classes, and calls the ``__init__`` of 43 and few of the others).  Here
each of those methods is a :class:`DeferredMethod` holding what ``dataclasses`` would compile; the
first access to it (calling it, reading it from the class, ``inspect.signature``) compiles it with
``dataclasses``' own code and puts the function in the class in its place.  What the class does is
unchanged: the same code, compiled later.

:func:`install` wraps ``dataclasses._create_fn``, the one function through which 3.10-3.12 compile
every such method, so that it defers those of classes defined in this package (their module's globals
say so) and passes every other call through unchanged.  Python 3.13 builds all of a class's methods in
one compilation and has no ``_create_fn``: there, and wherever its signature differs from the one
expected, nothing is installed.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from typing import Any

__all__ = ["DeferredMethod", "install"]

_PACKAGE = "costmodel"
"""Classes of modules under this package get deferred methods."""

_EXPECTED = ("name", "args", "body", "globals", "locals", "return_type")
"""``dataclasses._create_fn``'s parameters in Python 3.10-3.12."""


class DeferredMethod:
    """A method ``dataclasses`` generated, compiled on first use and then replaced by the function.

    It is a descriptor: read from an instance or from the class, it compiles the function (once, under
    a lock), puts it in the class that holds this object, and returns what the function would give.
    Called directly (``dataclasses`` wraps ``__repr__`` in a recursion guard that calls it), it compiles
    and calls.
    """

    def __init__(self, name: str, make: Any, module: str) -> None:
        self.__name__ = self.__qualname__ = name
        self.__module__ = module
        self._make = make
        self._real: Any = None
        self._lock = threading.Lock()

    def function(self) -> Any:
        """The compiled function (compiled on the first call)."""
        if self._real is None:
            with self._lock:
                if self._real is None:
                    self._real = self._make()
        return self._real

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        real = self.function()
        for cls in (owner or type(instance)).__mro__:
            if cls.__dict__.get(self.__name__) is self:
                real.__qualname__ = f"{cls.__qualname__}.{self.__name__}"  # as dataclasses names it
                setattr(cls, self.__name__, real)
                break
        return real if instance is None else real.__get__(instance, owner)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self.function())

    def __repr__(self) -> str:
        return f"<deferred {self.__qualname__}>"


def install() -> bool:
    """Defer the methods ``dataclasses`` compiles for this package's classes; ``True`` if installed
    (also when it already was), ``False`` where this Python has no ``_create_fn`` of the expected form."""
    create = getattr(dataclasses, "_create_fn", None)
    if create is None:
        return False
    if getattr(create, "_deferring", False):
        return True
    try:
        names = tuple(inspect.signature(create).parameters)
    except (TypeError, ValueError):  # pragma: no cover - a C implementation
        return False
    if names != _EXPECTED:
        return False

    def deferring(name: str, args: Any, body: Any, *, globals: Any = None, locals: Any = None,
                  return_type: Any = dataclasses.MISSING) -> Any:
        module = (globals or {}).get("__name__", "")
        if module != _PACKAGE and not module.startswith(_PACKAGE + "."):
            return create(name, args, body, globals=globals, locals=locals, return_type=return_type)
        # compiled once, later: a copy of this call's names, which dataclasses may reuse meanwhile
        make = functools.partial(create, name, args, body, globals=globals, locals=dict(locals or {}),
                                 return_type=return_type)
        return DeferredMethod(name, make, module)

    deferring._deferring = True  # type: ignore[attr-defined]
    dataclasses._create_fn = deferring  # type: ignore[attr-defined]
    return True
