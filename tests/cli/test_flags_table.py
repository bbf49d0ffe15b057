"""The table that turns the core's parameters into options (``costmodel/cli/flags.py``) is checked
against the declarations on both sides.

- Each option it rewrites a parameter to is one that some command of the full app declares, so no
  message tells the user to pass an option that does not exist.
- Each parameter the core's error messages name in the ``name=`` form (``pass alpha=TIME``,
  ``degree=3 is not even``) is in the table, or in :data:`PYTHON_ONLY` with the reason the command
  line has no option for it.  The messages are read from the source with ``ast``: every string of a
  ``raise ...Error(...)`` outside ``cli/``, an f-string's ``{...}`` read as ``{}`` (so a name that is
  itself formatted, ``f"{name}=..."``, is not taken for one).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from costmodel.cli import flags
from costmodel.cli.flags import FLAGS

ROOT = Path(__file__).resolve().parents[2] / "costmodel"

NAMED = re.compile(r"(?<![\w-])([a-z_][a-z0-9_]*)=")
"""A parameter named as Python does, ``nodes=``."""

PYTHON_ONLY = {
    # values the command line builds itself from other options, or objects it passes whole
    "graphs": "nccl.System's parsed topology graphs; the command line reads them from a preset or file",
    "same_channels": "nccl.System's flag, set from the topology file, not an option",
    "system": "nccl.predict's System object, built from --preset or the hardware options",
    "shape": "a TransformerShape object, built from --hidden, --layers, ... or --preset",
    "shapes": "calibrate compute's list of GemmShape, built from the model options",
    "kv_heads": "an AttentionShape field, built from --kv-groups over --tp (at least one)",
    "link": "a LinkParams/Profile object, built from --alpha, --beta, --bandwidth or --profile",
    "topology": "a Topology object, built from --level (whose own parameter, levels=, is in FLAGS)",
    "values": "a Python sweep's list of values; the command line sweeps with its own syntax",
    "layer_bytes": "step.buckets' per-layer gradient sizes, computed from the model by the command line",
    "bytes_per_element": "step.buckets' element size, taken from --dtype by the command line",
    "fitted": "a Python-built piecewise profile's algorithm; profiles on the command line come from files",
    "extra": "an algorithm's extra parameters as a dict; flags.py rewrites extra={'blocks': K} itself",
    # the GEMM calibration's model, whose arguments the command line fixes
    "element": "calibration.compute's element size in bytes, fixed by --dtype",
    "launch": "calibration.compute's fitted launch time, a value of the fit and not an input",
    "sms": "calibration.compute's SM count, read from the device",
    "tile": "calibration.compute's tile shape, read from the device",
    "seconds": "a measured row of a GEMM timing file, named in the message about that row",
    "k": "a GEMM's inner size k in a timing file's row, or a schedule's k, passed by the command line "
         "as --segments or --blocks (in FLAGS)",
    # Python-only knobs
    "tolerance": "privacy's root-finding tolerance, fixed on the command line",
    # text in a message that is a format's syntax, not a parameter
    "sent": "the example ID:NAME=K of an assignment's --points value (ring-bytes:sent=2), not a parameter",
}
"""Parameters core messages name that no command has an option for, each with its reason."""


def options(app: Any = None) -> set[str]:
    """Every option string (``--alpha``, ``-p``, ``--no-verify``) some command of the full app declares."""
    if app is None:
        from costmodel.cli.app import app
    found: set[str] = set()

    def walk(command: Any) -> None:
        for param in command.params:
            if param.param_type_name == "option":
                found.update(param.opts)
                found.update(param.secondary_opts)
        if hasattr(command, "list_commands"):
            context = command.context_class(command)
            for name in command.list_commands(context):
                walk(command.get_command(context, name))

    walk(typer.main.get_command(app))
    return found


def _texts(call: ast.Call) -> Iterator[str]:
    """The strings of an exception's construction, each f-string's fields as ``{}``."""
    parts: set[int] = set()
    for node in ast.walk(call):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(v) for v in node.values)
            yield "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    for node in ast.walk(call):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            yield node.value


def named_parameters(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, name) of each ``name=`` in the strings of a ``raise ...Error(...)``."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        func = node.exc.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called.endswith("Error"):
            for text in _texts(node.exc):
                for match in NAMED.finditer(text):
                    yield node.lineno, match[1]


def core_parameters() -> dict[str, list[str]]:
    """Each parameter named in a core error message → where (``module:line``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module.startswith("cli/"):
            continue
        for line, name in named_parameters(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault(name, []).append(f"{module}:{line}")
    return found


def test_every_flag_is_an_option_a_command_declares():
    declared = options()
    stale = {name: option for name, option in FLAGS.items() if option not in declared}
    assert not stale, f"FLAGS rewrites parameters to options no command declares: {stale}"


def test_the_stated_and_shown_parameters_are_flags():
    assert FLAGS.keys() >= flags._STATED, sorted(flags._STATED - FLAGS.keys())
    assert FLAGS.keys() >= flags._SHOWN, sorted(flags._SHOWN - FLAGS.keys())


def test_every_parameter_a_core_message_names_has_an_option_or_a_reason():
    found = core_parameters()
    missing = {name: where for name, where in found.items() if name not in FLAGS and name not in PYTHON_ONLY}
    assert not missing, "parameters core messages name with no entry in cli/flags.py FLAGS (add the option " \
        "it is set by) nor in PYTHON_ONLY (say why it has none):\n" + \
        "\n".join(f"  {name}=  {', '.join(where)}" for name, where in sorted(missing.items()))


def test_the_python_only_list_is_current():
    found = core_parameters()
    both = sorted(PYTHON_ONLY.keys() & FLAGS.keys())
    assert not both, f"in FLAGS and in PYTHON_ONLY: {both}"
    unused = sorted(PYTHON_ONLY.keys() - found.keys())
    assert not unused, f"PYTHON_ONLY names no core message uses: {unused}"
    declared = options()
    has_option = sorted(n for n in PYTHON_ONLY if "--" + n.replace("_", "-") in declared)
    assert not has_option, f"PYTHON_ONLY parameters with an option of the same name: {has_option}"


def test_the_scan_reads_messages_and_not_formatted_names():
    tree = ast.parse('def f(name, v):\n'
                     '    """pass nodes= in a docstring"""\n'
                     '    if v:\n'
                     '        raise InputError(f"{name}={v!r} is bad; pass alpha=TIME")\n'
                     '    raise errors.UnknownNameError("e.g. lanes=4")\n'
                     '    print("seed=0")\n')
    assert sorted(named_parameters(tree)) == [(4, "alpha"), (5, "lanes")]
