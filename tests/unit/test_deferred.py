"""The package's dataclasses compile their generated methods on first use and behave as dataclasses do.

Each check makes the same class twice, once in a module of this package (its methods deferred) and once
outside it (plain ``dataclasses``), and compares what a user can observe: construction and its errors,
the signature, repr, equality, hashing, the frozen errors, ``replace``, pickling, inheritance.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import sys
import threading
import types

import pytest

import costmodel  # importing the package installs the deferral
from costmodel import _deferred
from costmodel.step.flops import TransformerShape

pytestmark = pytest.mark.skipif(not _deferred.install(), reason="this Python compiles dataclass methods at once")

SOURCE = '''
from __future__ import annotations
import dataclasses
from dataclasses import InitVar, dataclass, field
from fractions import Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """A documented class: nothing of it is compiled until used."""

    layers: int
    hidden: int = 64
    ratio: Fraction = Fraction(4)
    tags: tuple[str, ...] = field(default_factory=tuple)
    hidden_twice: int = field(init=False, repr=False)
    scale: InitVar[int] = 1

    def __post_init__(self, scale):
        object.__setattr__(self, "hidden_twice", 2 * self.hidden * scale)


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0


@dataclass(frozen=True, slots=True)
class Labelled(Point):
    """Documented too."""

    label: str = ""


class Plain(Point):
    pass


@dataclass(frozen=True, slots=True, eq=False)
class Identity:
    value: int
'''


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses reads the module's globals through sys.modules
    try:
        exec(compile(SOURCE, f"<{name}>", "exec"), module.__dict__)  # the test's own source
    finally:
        del sys.modules[name]
    return module


@pytest.fixture
def pair():
    return _module("costmodel._deferred_probe"), _module("deferred_probe_outside")


def test_methods_wait_for_their_first_use_and_others_are_untouched(pair):
    ours, theirs = pair
    assert isinstance(ours.Shape.__dict__["__init__"], _deferred.DeferredMethod)
    assert isinstance(ours.Point.__dict__["__hash__"], _deferred.DeferredMethod)
    assert inspect.isfunction(theirs.Shape.__dict__["__init__"])
    ours.Shape(layers=2)
    assert inspect.isfunction(ours.Shape.__dict__["__init__"])  # compiled and put in place
    assert ours.Shape.__init__.__qualname__ == "Shape.__init__"
    assert isinstance(ours.Shape.__dict__["__eq__"], _deferred.DeferredMethod)  # not used yet


def test_what_a_user_sees_is_the_same(pair):
    ours, theirs = pair
    assert ours.Point.__doc__ == theirs.Point.__doc__ == "Point(x: 'int', y: 'int' = 0)"  # made from __init__
    assert str(inspect.signature(ours.Shape)) == str(inspect.signature(theirs.Shape))
    assert str(inspect.signature(ours.Labelled)) == str(inspect.signature(theirs.Labelled))
    a, b = ours.Shape(layers=2, tags=("x",), scale=3), theirs.Shape(layers=2, tags=("x",), scale=3)
    assert repr(a) == repr(b) and a.hidden_twice == b.hidden_twice == 384
    assert a == ours.Shape(layers=2, tags=("x",), scale=3) and a != ours.Shape(layers=3)
    assert hash(a) == hash(b)
    assert dataclasses.replace(a, layers=5).layers == 5
    shape = TransformerShape(layers=2, hidden=64, heads=4, sequence=16, vocabulary=100)  # a module's own
    assert pickle.loads(pickle.dumps(shape)) == shape and hash(pickle.loads(pickle.dumps(shape))) == hash(shape)
    assert ours.Labelled(1, 2, "p") != ours.Point(1, 2)  # another class: not equal, as dataclasses says
    assert ours.Identity(1) != ours.Identity(1)  # eq=False keeps identity
    errors = []
    for module in pair:
        caught = []
        for attempt in (lambda m: m.Shape(), lambda m: m.Shape(2), lambda m: m.Shape(layers=1, depth=2),
                        lambda m: setattr(m.Shape(layers=1), "layers", 3),
                        lambda m: delattr(m.Point(1), "x"), lambda m: setattr(m.Point(1), "z", 3)):
            try:
                attempt(module)
            except (TypeError, AttributeError, dataclasses.FrozenInstanceError) as exc:
                caught.append((type(exc).__name__, str(exc).replace(module.__name__, "M")))
        errors.append(caught)
    assert errors[0] == errors[1] and len(errors[0]) == 6


def test_a_method_first_used_through_a_subclass_is_put_back_where_it_was(pair):
    ours, _ = pair
    plain = ours.Plain(1, 2)
    assert repr(plain) == "Plain(x=1, y=2)"
    assert hash(plain) == hash((1, 2))
    assert "__hash__" not in ours.Plain.__dict__ and inspect.isfunction(ours.Point.__dict__["__hash__"])


def test_threads_racing_to_the_first_use_share_one_compilation(pair):
    ours, _ = pair
    made, barrier = [], threading.Barrier(8)

    def build() -> None:
        barrier.wait()
        made.append(ours.Shape(layers=1))

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 8 and len(set(made)) == 1


def test_nothing_is_installed_where_dataclasses_compiles_otherwise(monkeypatch):
    monkeypatch.delattr(dataclasses, "_create_fn")
    assert _deferred.install() is False

    def other(name, args, body, *, globals=None, locals=None):  # another version's signature
        raise AssertionError("never called")

    monkeypatch.setattr(dataclasses, "_create_fn", other, raising=False)
    assert _deferred.install() is False


def test_every_dataclass_of_the_package_compiles_its_methods_when_asked():
    """Each of the package's dataclasses, imported as users import them: its signature is its own, and
    reading each generated method from the class gives the compiled function."""
    import importlib
    import pkgutil

    checked = 0
    for info in pkgutil.walk_packages(costmodel.__path__, "costmodel."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in list(vars(module).values()):
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == info.name:
                inspect.signature(value)
                for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                    method = getattr(value, name)
                    assert not isinstance(method, _deferred.DeferredMethod), (value, name)
                checked += 1
    assert checked > 200
