"""The core's messages in the command line's words: ``alpha=TIME`` becomes ``--alpha TIME``.

The library names what is wrong by its Python parameters (``pass alpha=TIME``,
``drop p=``, ``e.g. lanes=4``, ``whole_bytes=True prices ...``); this layer
knows the options, so it puts them in their place.  A parameter is rewritten
where the message tells the user what to pass:

- followed by a METAVAR in capitals or by no value at all (``pass alpha=TIME``,
  ``drop p=``);
- set to ``True``: a switch, its option alone (``verify=True`` is ``--verify``);
- with a value after a word that asks for it (``e.g. lanes=4``, ``give tp=2 or
  more``, ``use outer=ring or tree``, ``at most lanes=8``), except the
  parameters whose Python examples the command line shows as they are (``e.g.
  p=32`` for a topology, ``e.g. seed=0`` for a graph).

A value the message only shows (``p=12 does not match``, ``at p=16``) stays as
it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["FLAGS", "cli_message"]

FLAGS = {
    "allow_bank_change": "--allow-bank-change",
    "alpha": "--alpha",
    "backend": "--backend",
    "bandwidth": "--bandwidth",
    "batch": "--batch",
    "beta": "--beta",
    "density": "--density",
    "dp": "--dp",
    "entries": "--entries",
    "ep": "--ep",
    "exercises": "--exercises",
    "experts": "--experts",
    "force": "--force",
    "gamma": "--gamma",
    "gpus": "--dp",
    "groups": "--groups",
    "heads": "--heads",
    "hidden": "--hidden",
    "inner": "--inner",
    "lanes": "--lanes",
    "levels": "--level",
    "max_bytes": "--max",
    "method": "--method",
    "n": "-n",
    "min_bytes": "--min",
    "optimizer_bytes": "--optimizer-bytes",
    "outer": "--outer",
    "p": "-p",
    "p_max": "--p-max",
    "p_min": "--p-min",
    "params": "--params",
    "per_rack": "--per-rack",
    "profile": "--profile",
    "racks": "--racks",
    "seed": "--seed",
    "seq": "--seq",
    "servers": "--servers",
    "size": "--random",
    "steps": "--steps",
    "student": "--student",
    "top_k": "--top-k",
    "tp": "--tp",
    "vector": "--vector",
    "verify": "--verify",
    "whole_bytes": "--whole-bytes",
    "workers": "--workers",
    "zero": "--zero",
}
"""Each parameter a core message may name, and the option that sets it."""

_EXAMPLES = {
    "levels=['8:1us:150GB/s', '4:5us:25GB/s']": "--level 8:1us:150GB/s --level 4:5us:25GB/s",
}
"""Example values written as Python, and as options."""

_SHOWN = {"p", "seed"}
"""Parameters whose example values messages already show in Python's words."""


def _names(names: Iterable[str]) -> str:
    return r"(?<![\w-])(" + "|".join(sorted(names, key=len, reverse=True)) + r")="


_ASKED = r"(?:(?<=e\.g\. )|(?<=give )|(?<=pass )|(?<=use )|(?<=try )|(?<=add )|(?<=at most )|(?<=one of ))"
_PARAMETER = re.compile(
    _names(FLAGS) + r"(?:(True)\b|(?=([A-Z]))|(?=[\s,;)]|$))"  # a METAVAR, True, or nothing
    r"|" + _ASKED + _names(FLAGS.keys() - _SHOWN)  # a value asked for
)


def _option(m: re.Match[str]) -> str:
    if m[4]:
        return FLAGS[m[4]] + " "
    return FLAGS[m[1]] + (" " if m[3] else "")


def cli_message(message: str) -> str:
    """*message* with the parameters it names replaced by their options.

    >>> cli_message("no latency given; pass alpha=TIME or profile=NAME")
    'no latency given; pass --alpha TIME or --profile NAME'
    >>> cli_message("p=12 does not match the levels; drop p= or change them")
    'p=12 does not match the levels; drop -p or change them'
    >>> cli_message("give the number of parallel lanes, e.g. lanes=4")
    'give the number of parallel lanes, e.g. --lanes 4'
    >>> cli_message("verify=True at p=16 would hold too much; drop verify=")
    '--verify at p=16 would hold too much; drop --verify'
    """
    for python, options in _EXAMPLES.items():
        message = message.replace(python, options)
    return _PARAMETER.sub(_option, message)
