"""The code ``dataclasses`` compiles for this package's classes, and its shipped data files as parsed,
kept beside the modules' bytecode.

``dataclasses`` writes a class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and frozen setters
as source text and compiles that text with ``exec`` in every process that uses the class: about 0.3 ms
a method, and the largest ``__init__`` (a step's result, 50 fields) 1.4 ms.  Python keeps a module's own
compiled code in ``__pycache__`` so that it is compiled once, not at each start; this does the same for
the text ``dataclasses`` generates.  The text is the key: a method whose class changes has different
text, so an entry is never stale, only unused.

Each module of the package gets one file beside its bytecode, named as :func:`importlib.util.
cache_from_source` names the ``.pyc`` with ``.cache`` for ``.pyc`` (so ``PYTHONPYCACHEPREFIX``
applies), holding the import system's magic number and a :mod:`marshal` dict from text to code.  It is
read the first time the module compiles a method and written at exit when the process compiled
something new, merged with what another process may have written meanwhile and moved into place in one
rename.  Where Python is told not to write bytecode (``PYTHONDONTWRITEBYTECODE``, ``-B``), where the
folder is read-only, or where the file is unreadable, damaged or from another Python, it is neither
trusted nor an error: the text is compiled as ``dataclasses`` would.  Like bytecode that another
Python wrote there, these files are not in the installation's record: ``pip uninstall`` leaves them,
and their ``__pycache__`` folders, in the package's folder, which can then be deleted.

:func:`install` puts :func:`cached_exec` where ``dataclasses`` looks ``exec`` up (its module's names
come before the builtins).  ``cached_exec`` serves only text compiled for this package's modules and
passes every other call to the builtin unchanged; it compiles as ``exec`` does (file name
``"<string>"``, none of this module's ``__future__`` flags), so a method is the same code either way.

:func:`kept` does the same for the package's own data files (GPU and NCCL presets): the value a parser
makes of a file's text, kept in :mod:`marshal` form under the text, so that a command reading a preset
needs neither the TOML reader nor its parse after the first time.  Each call returns a fresh copy.
Only what :mod:`marshal` can write is kept (TOML's dates are not: such a file is parsed every time),
and never a user's file: callers pass only the text of files shipped with the package.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType
from typing import Any

__all__ = ["cached_exec", "install", "kept", "save"]

_PACKAGE = "costmodel"
_SUFFIX = ".cache"
_DATA = "\x00data\x00"
"""The prefix of a data entry's key (generated code never holds a NUL character)."""
_MAGIC = importlib.util.MAGIC_NUMBER
_lock = threading.RLock()
_stores: dict[str, _Store] = {}


class _Store:
    """One module's compiled methods and parsed data: those read from its file and those this process
    added."""

    __slots__ = ("added", "entries", "path")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.entries: dict[str, CodeType | bytes] = _read(path) if path else {}
        self.added: dict[str, CodeType | bytes] = {}


def _path(globals: dict[str, Any]) -> str | None:
    """Where a module's methods are kept: its ``.pyc`` path with ``.cache`` for ``.pyc``."""
    source = globals.get("__file__")
    if not isinstance(source, str) or not source.endswith(".py"):
        return None
    try:
        pyc = importlib.util.cache_from_source(source)
    except (NotImplementedError, ValueError):
        return None
    return pyc.removesuffix(".pyc") + _SUFFIX


def _read(path: str) -> dict[str, CodeType | bytes]:
    """A file's entries; nothing when it is missing, unreadable, damaged or from another Python."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if data[:len(_MAGIC)] != _MAGIC:
            return {}
        codes = marshal.loads(data[len(_MAGIC):])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items()
            if isinstance(k, str) and isinstance(v, bytes if k.startswith(_DATA) else CodeType)}


def _store(globals: Any) -> _Store | None:
    """The store of the package module whose globals these are (``None`` for any other module)."""
    if not isinstance(globals, dict):
        return None
    name = globals.get("__name__")
    if not isinstance(name, str) or not (name == _PACKAGE or name.startswith(_PACKAGE + ".")):
        return None
    store = _stores.get(name)
    if store is None:
        with _lock:
            store = _stores.get(name)
            if store is None:
                store = _stores[name] = _Store(_path(globals))
    return store


def cached_exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """``exec(source, globals, locals)``, with the code of this package's generated methods kept (see
    the module notes); other text is compiled as for ``dataclasses`` and not kept, other code runs as is."""
    if not isinstance(source, str):
        builtins.exec(source, globals, locals)
        return
    store = _store(globals)
    code = store.entries.get(source) if store is not None else None
    if not isinstance(code, CodeType):
        code = compile(source, "<string>", "exec", dont_inherit=True)  # as exec compiles for dataclasses
        if store is None:
            builtins.exec(code, globals, locals)
            return
        with _lock:
            store.entries[source] = store.added[source] = code
    builtins.exec(code, globals, locals)


def kept(namespace: dict[str, Any], text: str, parse: Callable[[str], Any]) -> Any:
    """``parse(text)`` for the text of a data file shipped with the package, kept beside the bytecode of
    the module whose globals are *namespace* (see the module notes): a fresh copy on each call."""
    store = _store(namespace)
    if store is None:
        return parse(text)
    key = _DATA + text
    blob = store.entries.get(key)
    if isinstance(blob, bytes):
        try:
            return marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            pass
    value = parse(text)
    try:
        blob = marshal.dumps(value)
    except ValueError:  # not marshal's to write (a date): parsed each time
        return value
    with _lock:
        store.entries[key] = store.added[key] = blob
    return value


def save() -> int:
    """Write each module's newly compiled methods and parsed data into its file (merged with the file as
    it now is); the number of files written.  :func:`install` registers it to run at exit."""
    if sys.dont_write_bytecode:
        return 0
    written = 0
    with _lock:
        for store in [s for s in _stores.values() if s.added and s.path]:
            path = store.path
            assert path is not None
            merged = {**_read(path), **store.added}
            temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(temporary, "wb") as handle:
                    handle.write(_MAGIC + marshal.dumps(merged))
                os.replace(temporary, path)
            except (OSError, ValueError):  # a read-only install, a full disk: compile next time instead
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                continue
            store.added.clear()
            written += 1
    return written


def install() -> bool:
    """Serve ``dataclasses``' ``exec`` calls through :func:`cached_exec`; ``True`` if installed (also when
    it already was), ``False`` where ``dataclasses`` does not call ``exec`` by name."""
    if getattr(dataclasses, "exec", None) is cached_exec:
        return True
    compiles = [f for f in vars(dataclasses).values() if isinstance(getattr(f, "__code__", None), CodeType)]
    compiles += [f for cls in vars(dataclasses).values() if isinstance(cls, type)
                 for f in vars(cls).values() if isinstance(getattr(f, "__code__", None), CodeType)]
    if not any("exec" in f.__code__.co_names for f in compiles):
        return False
    dataclasses.exec = cached_exec  # type: ignore[attr-defined]
    atexit.register(save)
    return True
