"""The package's imports go one way: no module imports, even lazily, a module that imports it back.

The graph is built from the source with ``ast``: every ``import`` and ``from ... import`` at any depth
(module level, inside functions, under ``if TYPE_CHECKING:``), relative ones resolved against the
importing module's package. An edge to a package also stands for its ``__init__``; ``from pkg import
name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``. Any strongly connected
component of more than one module is a cycle and fails the test, named module by module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "costmodel"


def _modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = path
    return found


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _targets(node: ast.AST, name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = _package_of(name, path).split(".")
        base = base[: len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    # ``from pkg import module`` is an edge to the module; ``from pkg import name`` one to pkg.
    found = [f"{source}.{alias.name}" for alias in node.names if f"{source}.{alias.name}" in modules]
    if len(found) < len(node.names):
        found.append(source)
    return found


def import_graph() -> dict[str, set[str]]:
    """Every package module and the package modules it imports (at any depth)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, name, path, modules):
                # ``import a.b.c`` runs a, a.b and a.b.c; the owning packages are not edges here,
                # since every module in a package would otherwise "import" its own __init__.
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_graph_sees_relative_and_lazy_imports():
    graph = import_graph()
    assert "costmodel.units" in graph["costmodel.params"]
    assert "costmodel.examples.kinds" in graph["costmodel.examples.work"]  # from pkg import module
    assert "costmodel.collectives.evaluate" in graph["costmodel.examples.work"]  # inside a function


def test_cycle_finder_names_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def private_imports(root: Path = ROOT) -> list[str]:
    """``module: from costmodel.x import _y`` for each private name one module takes from another.

    A module whose own name starts with ``_`` (``costmodel._json``, ``collectives._registry``) is
    package-internal and may be imported; a ``__dunder__`` is not private.
    """
    modules = _modules(root)
    found = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _targets(ast.ImportFrom(module=node.module, names=[ast.alias("")], level=node.level),
                              name, path, modules)[0]
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.endswith("__")
                if private and source.startswith("costmodel") and f"{source}.{alias.name}" not in modules:
                    found.append(f"{name}: from {source} import {alias.name}")
    return sorted(found)


def test_private_import_finder(tmp_path: Path):
    sources = {
        "__init__.py": "__version__ = '1'\n",
        "_json.py": "def real(): ...\n",
        "sub/__init__.py": "",
        "sub/a.py": "_X = 1\n",
        "sub/b.py": "from costmodel import __version__, _json\nfrom costmodel._json import real\n"
                    "from . import a\nfrom .a import _X as y\n\ndef f():\n    from costmodel.sub.a import _X\n",
    }
    for name, text in sources.items():
        (tmp_path / "costmodel" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "costmodel" / name).write_text(text, encoding="utf-8")
    assert private_imports(tmp_path / "costmodel") == ["costmodel.sub.b: from costmodel.sub.a import _X"] * 2


def test_no_private_names_imported_across_modules():
    found = private_imports()
    assert not found, "private names imported from another module: " + "; ".join(found)


LAYERS = (
    ("foundations", ("errors", "intmath", "exact", "units", "validate", "names", "collective_names", "references", "_json",
                     "_files", "_lazy", "_gc", "_deferred", "_codecache", "_frames", "tomlfile", "symbols", "expressions", "renames")),
    ("links", ("params", "topology", "profiles", "links")),
    ("models", ("collectives", "schedules", "pipeline", "consensus", "training", "calibration", "nccl", "gpus")),
    ("questions", ("step", "describe", "crossovers", "sweeps", "walkthrough", "plots", "examples", "exercises", "validation")),
    ("command line", ("cli", "notebook", "__main__", "")),
)
"""The layers of docs/design.md, lowest first, by the first name under ``costmodel``; a module may import
its own layer and those below (within a layer, the cycle test keeps the order one way); no import goes up."""


def _layer(module: str) -> int:
    top = module.removeprefix("costmodel").lstrip(".").split(".")[0]
    found = [i for i, (_, names) in enumerate(LAYERS) if top in names]
    assert found, f"{module} is in no layer of LAYERS: place it (and in docs/design.md)"
    return found[0]


def test_imports_go_down_the_layers():
    graph = import_graph()
    upward = sorted((m, d) for m, deps in graph.items() for d in deps if _layer(d) > _layer(m))
    assert not upward, "imports up the layers: " + "; ".join(f"{m} -> {d}" for m, d in upward)
