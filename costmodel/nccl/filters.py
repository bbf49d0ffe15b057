"""NCCL_ALGO and NCCL_PROTO strings, read as NCCL's ``parseList`` reads them.

NCCL 2.30 (``src/graph/tuning.cc``, parseList) takes ``;``-separated entries, each an optional
``function:`` prefix (only the first entry may omit it) and a ``,``-separated list of names, all
case-insensitive; a leading ``^`` turns the list into the names to disable. An entry resets the
list of the functions it names: ``ring,tree`` enables only Ring and Tree, ``^LL128`` everything
but LL128, ``allreduce:tree;broadcast:ring`` Tree for all-reduce and Ring for broadcast.
NCCL 2.21 reads one list for every function, without prefixes.

The result has one value per (function, name): 1 enabled, 0 disabled, 2 "automatic" (NCCL's
default for LL128, enabled only where its rules allow). A list that names LL128 or uses ``^``
sets it to 0 or 1, which NCCL then takes as forced.

The parser is small and strict: an unknown name or prefix, an empty list, or a prefix given to
2.21 is one :class:`~costmodel.errors.InputError` line worded as NCCL's own warning.
"""

from __future__ import annotations

from costmodel.errors import InputError
from costmodel.nccl.constants import NcclConstants

__all__ = ["AUTO", "parse_list"]

AUTO = 2
"""The value of an entry no list has set (LL128's default: decided by NCCL's rules)."""

_MAX_TEXT = 1000


def parse_list(  # noqa: PLR0912 - one branch per rule of parseList
    text: str,
    elements: tuple[str, ...],
    constants: NcclConstants,
    *,
    what: str = "NCCL_ALGO",
    defaults: tuple[int, ...] | None = None,
) -> tuple[tuple[int, ...], ...]:
    """The enable table ``[function][element]`` that *text* gives, starting from *defaults*.

    Parameters
    ----------
    text : str
        The NCCL_ALGO/NCCL_PROTO value.
    elements : tuple of str
        The names it may use (``constants.algorithms`` or ``constants.protocols``).
    constants : NcclConstants
        The version (its function names, and whether it reads prefixes).
    what : str
        The variable's name, for messages.
    defaults : tuple of int, optional
        The starting value of each element (all 1 if not given).

    Raises
    ------
    InputError
        On an unknown name or prefix, an empty list, a missing prefix after the first entry, or a
        prefix given to NCCL 2.21.

    Examples
    --------
    >>> from costmodel.nccl.constants import CONSTANTS
    >>> c = CONSTANTS["2.30"]
    >>> parse_list("^ll128", c.protocols, c, what="NCCL_PROTO")[4]
    (1, 0, 1)
    >>> [row[1] for row in parse_list("ring;allreduce:tree", c.algorithms, c)]
    [1, 1, 1, 1, 0]
    >>> parse_list("rign", c.algorithms, c)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: NCCL_ALGO: unrecognized element token "rign" when parsing "rign"; \
choose from Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
    """
    if not isinstance(text, str):
        raise InputError(f"{what}={text!r} is not text")
    if len(text) > _MAX_TEXT:
        raise InputError(f"{what} is too long ({len(text)} characters; at most {_MAX_TEXT})")
    start = defaults if defaults is not None else (1,) * len(elements)
    table = [list(start) for _ in constants.functions]
    entries = [e for e in text.split(";") if e.strip()]
    if not entries:
        raise InputError(
            f"{what}={text!r} is empty; give names such as {','.join(elements[:2])} or ^{elements[0]}"
        )
    lower_functions = [f.lower() for f in constants.functions]
    for position, entry in enumerate(entries):
        parts = [p.strip() for p in entry.split(":")]
        if len(parts) > 2:
            raise InputError(f'{what}: too many ":" in "{entry}" when parsing "{text}"; write function:names')
        prefix, names = (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
        if prefix is not None and constants.version == "2.21":
            raise InputError(
                f'{what}: NCCL 2.21 reads no function prefix ("{prefix}:") in "{text}"; '
                "give one list for every function"
            )
        if prefix is None and position > 0:
            raise InputError(f'{what}: all entries except the first must have a prefix: "{text}"')
        if prefix is not None and prefix.lower() not in lower_functions:
            raise InputError(
                f'{what}: unrecognized prefix token "{prefix}" when parsing "{text}"; '
                f"choose from {', '.join(constants.functions)}"
            )
        unset = names.startswith("^")
        names = names[1:] if unset else names
        tokens = [t.strip() for t in names.split(",") if t.strip()]
        if not tokens:
            raise InputError(f'{what}: no names in "{entry}" when parsing "{text}"')
        picked = []
        for token in tokens:
            matches = [i for i, e in enumerate(elements) if e.lower() == token.lower()]
            if not matches:
                raise InputError(
                    f'{what}: unrecognized element token "{token}" when parsing "{text}"; '
                    f"choose from {', '.join(elements)}"
                )
            picked.append(matches[0])
        rows = range(len(table)) if prefix is None else [lower_functions.index(prefix.lower())]
        for row in rows:
            table[row] = [1 if unset else 0] * len(elements)
            for i in picked:
                table[row][i] = 0 if unset else 1
    return tuple(tuple(row) for row in table)
