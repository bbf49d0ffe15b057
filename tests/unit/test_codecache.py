"""The code dataclasses compiles for the package's classes, and the package's own data files as parsed,
are kept beside the bytecode and read back.

A probe module under the package's name, with a file of its own in a temporary folder, makes its
classes as the package's modules do; each check looks at what reaches the disk and what a class made
from the kept code does.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import marshal
import sys
import types
from pathlib import Path

import pytest

import costmodel  # noqa: F401  # importing the package installs the cache
from costmodel import _codecache

pytestmark = pytest.mark.skipif(not _codecache.install(), reason="dataclasses here does not compile through exec")

SOURCE = '''
import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    x: int
    y: "int" = 0
'''


def _module(name: str, folder) -> types.ModuleType:
    """The probe module *name*, its source written to *folder* and its classes made."""
    path = folder / f"{name.rpartition('.')[2]}.py"
    path.write_text(SOURCE, encoding="utf-8")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module  # dataclasses reads the module's globals through sys.modules
    try:
        exec(compile(SOURCE, str(path), "exec", dont_inherit=True), module.__dict__)  # no future flags
    finally:
        del sys.modules[name]
    return module


@pytest.fixture
def fresh(monkeypatch):
    """No module's store yet (the probes' stores are dropped afterwards), bytecode writing on."""
    monkeypatch.setattr(_codecache, "_stores", {})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def _kept(folder, name: str) -> str:
    return importlib.util.cache_from_source(str(folder / f"{name}.py")).removesuffix(".pyc") + ".cache"


def _use(module: types.ModuleType):
    point = module.Point(1, 2)
    return point, repr(point), hash(point), point == module.Point(1, 2)


def test_methods_are_written_once_and_read_back_as_the_same_code(tmp_path, fresh):
    first = _module("costmodel._codecache_probe", tmp_path)
    made = _use(first)
    assert _codecache.save() == 1
    kept = _kept(tmp_path, "_codecache_probe")
    codes = marshal.loads(Path(kept).read_bytes()[len(importlib.util.MAGIC_NUMBER):])
    assert len(codes) == 4  # __init__, __repr__, __eq__, __hash__ (frozen setters unused)
    for text, code in codes.items():
        assert marshal.dumps(code) == marshal.dumps(compile(text, "<string>", "exec", dont_inherit=True))
    _codecache._stores.clear()  # as a new process: the methods come from the file
    second = _module("costmodel._codecache_probe", tmp_path)
    assert _use(second)[1:] == made[1:]
    store = _codecache._stores["costmodel._codecache_probe"]
    assert not store.added and len(store.entries) == 4
    assert _codecache.save() == 0  # nothing new: nothing written


def test_a_kept_method_is_the_method_dataclasses_makes(tmp_path, fresh):
    """Annotations stay as the class wrote them (the cache's own __future__ import does not leak)."""
    ours = _module("costmodel._codecache_probe", tmp_path)
    plain = _module("codecache_probe_outside", tmp_path)
    _use(ours), _use(plain)
    assert ours.Point.__init__.__annotations__ == plain.Point.__init__.__annotations__
    assert ours.Point.__init__.__annotations__["x"] is int and ours.Point.__init__.__code__.co_filename == "<string>"
    assert "codecache_probe_outside" not in _codecache._stores  # other modules pass straight through


def test_a_damaged_or_foreign_file_is_ignored_and_replaced(tmp_path, fresh):
    kept = _kept(tmp_path, "_codecache_probe")
    (tmp_path / "__pycache__").mkdir()
    for content in (b"", b"not marshal", importlib.util.MAGIC_NUMBER + b"\xff\x00",
                    b"\x00\x00\r\n" + marshal.dumps({"x": 1}), importlib.util.MAGIC_NUMBER + marshal.dumps([1])):
        Path(kept).write_bytes(content)
        _codecache._stores.clear()
        assert _use(_module("costmodel._codecache_probe", tmp_path))[3]
        assert _codecache.save() == 1
        assert len(_codecache._read(kept)) == 4


def test_nothing_is_written_when_python_writes_no_bytecode_or_cannot(tmp_path, fresh, monkeypatch):
    _use(_module("costmodel._codecache_probe", tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert _codecache.save() == 0
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    (tmp_path / "__pycache__").write_text("a file where the folder would be", encoding="utf-8")
    assert _codecache.save() == 0  # an OSError, swallowed: compiled again next time
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__pycache__", "_codecache_probe.py"]  # no leftovers


def test_other_exec_calls_are_the_builtins():
    namespace: dict = {"__name__": "elsewhere"}
    _codecache.cached_exec("y = 2 + 3", namespace)
    assert namespace["y"] == 5
    code = compile("z = 7", "<probe>", "exec")
    _codecache.cached_exec(code, namespace)
    assert namespace["z"] == 7
    assert dataclasses.exec is _codecache.cached_exec  # type: ignore[attr-defined]  # costmodel installed it


def test_a_shipped_file_is_parsed_once_and_each_reader_gets_its_own_copy(tmp_path, fresh):
    probe = _module("costmodel._codecache_probe", tmp_path)
    calls = []

    def parse(text):
        calls.append(text)
        return {"name": text.strip(), "rates": [1.5, 2], "nested": {"ok": True}}

    first = _codecache.kept(vars(probe), "h100 ", parse)
    first["rates"].append(99)  # a reader that changes its copy changes no one else's
    second = _codecache.kept(vars(probe), "h100 ", parse)
    assert calls == ["h100 "] and second == {"name": "h100", "rates": [1.5, 2], "nested": {"ok": True}}
    assert _codecache.save() == 1
    _codecache._stores.clear()
    assert _codecache.kept(vars(probe), "h100 ", parse) == second and calls == ["h100 "]  # from the file
    import datetime

    dated = _codecache.kept(vars(probe), "dated", lambda text: {"when": datetime.date(2021, 4, 9)})
    assert dated == {"when": datetime.date(2021, 4, 9)}  # marshal cannot keep a date: parsed each time
    assert _data_key("dated") not in _codecache._stores["costmodel._codecache_probe"].entries
    assert _codecache.kept({"__name__": "elsewhere"}, "x", lambda text: [text]) == ["x"]  # not the package's


def _data_key(text: str) -> str:
    return "\x00data\x00" + text


def test_a_preset_read_the_second_time_needs_no_toml_reader(tmp_path):
    """Two processes load a GPU and an NCCL preset, their bytecode kept under a folder of the test's own:
    the first parses the TOML, the second reads the kept data and imports no TOML reader; both get the
    same presets."""
    import os
    import subprocess

    code = ("import sys; from costmodel.gpus import load_gpu; from costmodel.nccl.presets import load_preset; "
            "g = load_gpu('h100-sxm'); n = load_preset('dgx-h100'); "
            "print(g.memory_bandwidth_bytes_per_s, g.peak_flops['bf16'], n['name'], n['gpus_per_node'], 'tomllib' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                           check=False) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr + runs[1].stderr
    first, second = (r.stdout.split() for r in runs)
    assert first[:-1] == second[:-1] and first[-1] == "True" and second[-1] == "False"
    assert list(tmp_path.rglob("tomlfile.*.cache"))
