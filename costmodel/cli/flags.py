"""The core's messages in the command line's words: ``alpha=TIME`` becomes ``--alpha TIME``.

The library names what is wrong by its Python parameters (``pass alpha=TIME``,
``drop p=``); this layer knows the options, so it puts them in their place.  A
parameter is rewritten where it is followed by a METAVAR in capitals or by no
value at all, so a value shown (``p=12 does not match``) stays as it is.
"""

from __future__ import annotations

import re

__all__ = ["FLAGS", "cli_message"]

FLAGS = {
    "alpha": "--alpha",
    "bandwidth": "--bandwidth",
    "beta": "--beta",
    "gamma": "--gamma",
    "levels": "--level",
    "p": "-p",
    "profile": "--profile",
}
"""Each parameter a core message may name, and the option that sets it."""

_EXAMPLES = {
    "levels=['8:1us:150GB/s', '4:5us:25GB/s']": "--level 8:1us:150GB/s --level 4:5us:25GB/s",
}
"""Example values written as Python, and as options."""

_PARAMETER = re.compile(r"(?<![\w-])(" + "|".join(FLAGS) + r")=(?=([A-Z])|[\s,;)]|$)")


def cli_message(message: str) -> str:
    """*message* with the parameters it names replaced by their options.

    >>> cli_message("no latency given; pass alpha=TIME or profile=NAME")
    'no latency given; pass --alpha TIME or --profile NAME'
    >>> cli_message("p=12 does not match the levels; drop p= or change them")
    'p=12 does not match the levels; drop -p or change them'
    """
    for python, options in _EXAMPLES.items():
        message = message.replace(python, options)
    return _PARAMETER.sub(lambda m: FLAGS[m[1]] + (" " if m[2] else ""), message)
