"""The core does not know the command line: no message, note or warning of ``costmodel/`` (but
``cli/``) names an option such as ``--max``.

A message names the Python parameter (``widen max_bytes=``, ``sequence_parallel=True has no effect
with tp=1``) and ``cli/flags.py`` turns it back into the option where the command line shows it.
Every string constant of the core is read from the source with ``ast`` (an f-string with each
``{...}`` as one letter), except the docstrings and other bare strings, which document the command
line too. :data:`ALLOWED` holds what must stay, each with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "costmodel"

OPTION = re.compile(r"(?<![\w-])--[a-z]")

ALLOWED = {
    ("calibration/bench.py", "pip install torch --index-url"): "pip's own option, in the command to install",
    ("calibration/bench.py", "torchrun --nproc-per-node"): "torchrun's own option, in the command to launch",
    ("calibration/bench.py", "srun --gpus-per-task=1"): "srun's own option, in the layout to launch with",
    ("exercises/assignment.py", "--assignment THIS_FILE"):
        "a comment written into the assignment file, telling its reader the command that grades with it",
    ("exercises/assignment.py", "# --secret-file KEY"): "the same comment's second line",
    ("calibration/logs/nccl_text.py", "--np"): "mpirun's own option, read from a log's command line",
    ("calibration/logs/nccl_text.py", "--ntasks"): "srun's own option, read from a log's command line",
    ("calibration/logs/nccl_text.py", "--ngpus"): "nccl-tests' own option, read from a log's command line",
    ("calibration/logs/nccl_text.py", "--nthreads"): "nccl-tests' own option, read from a log's command line",
    ("topology.py", "--level x"):
        "not a message: the provenance label of a level parsed from text, a data field of the topology",
}
"""(module under costmodel/, text of the string) → why it names an option."""


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every string constant that is not a bare expression (a docstring)."""
    bare = {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.JoinedStr))}
    parts: set[int] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts.update(id(v) for v in node.values)
            if id(node) not in bare:
                text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
                found.append((node.lineno, text))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare | parts:
            found.append((node.lineno, node.value))
    return found


def naming_options() -> list[tuple[str, int, str]]:
    """(module, line, text) of every core string that names an option, the allowed ones left out."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module.startswith("cli/"):
            continue
        for line, text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if OPTION.search(text) and not any(m == module and allowed in text for m, allowed in ALLOWED):
                out.append((module, line, text))
    return out


def test_core_strings_name_parameters_not_options():
    found = naming_options()
    assert not found, "core strings that name a command-line option (name the Python parameter, " \
        "e.g. max_bytes=, and let cli/flags.py rewrite it):\n" + \
        "\n".join(f"  costmodel/{m}:{line}: {text!r}" for m, line, text in found)


def test_every_allowed_string_still_exists():
    texts = {(path.relative_to(ROOT).as_posix(), text) for path in ROOT.rglob("*.py")
             for _, text in _strings(ast.parse(path.read_text(encoding="utf-8")))}
    stale = [key for key in ALLOWED if not any(m == key[0] and key[1] in t for m, t in texts)]
    assert not stale, f"allowed strings no longer in the core: {stale}"


def test_the_check_finds_an_option_in_a_message_and_not_in_a_docstring():
    tree = ast.parse('"""Use --max."""\ndef f(n):\n    """--min too."""\n    raise ValueError(f"widen --max {n}")\n')
    assert _strings(tree) == [(4, "widen --max x")]
