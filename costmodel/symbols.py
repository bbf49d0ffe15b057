"""The sympy symbols and functions of the formulas; the only module that creates them.

Sympy treats ``Symbol('p')`` and ``Symbol('p', positive=True)`` as different
symbols, so every formula must take its symbols from here.  The functions
evaluate exactly for integer arguments and print as mathematicians write them:

>>> lg(16), clg(12), flg(12)
(4, 4, 3)
>>> import sympy
>>> sympy.latex(2 * clg(p))
'2 \\\\left\\\\lceil{\\\\log_2 p}\\\\right\\\\rceil'

Importing this module imports sympy (about 0.3 s); the numeric paths never do.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import sympy

from costmodel.intmath import folds as _folds
from costmodel.intmath import popsum as _popsum
from costmodel.intmath import surplus as _surplus

__all__ = [
    "ALPHA",
    "BETA",
    "GAMMA",
    "LANES",
    "K",
    "N",
    "P",
    "clg",
    "flg",
    "folds",
    "level",
    "lg",
    "n",
    "p",
    "popsum",
    "surplus",
]

p = P = sympy.Symbol("p", positive=True, integer=True)
n = N = sympy.Symbol("n", nonnegative=True)
k = K = sympy.Symbol("k", positive=True, integer=True)
ALPHA = sympy.Symbol("alpha", nonnegative=True)
BETA = sympy.Symbol("beta", nonnegative=True)
GAMMA = sympy.Symbol("gamma", nonnegative=True)

EXTRA_SYMBOLS: dict[str, sympy.Symbol] = {"k": k}

LANES = sympy.Symbol("ell", positive=True, integer=True)
"""ℓ, the lanes out of each outermost unit of a topology (hierarchical all-reduce)."""


@cache
def level(i: int) -> tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol, sympy.Symbol]:
    """(sᵢ, αᵢ, βᵢ, γᵢ): the size and the link of level *i* of a topology, innermost i = 0.

    >>> level(1)
    (s1, alpha1, beta1, gamma1)
    """
    return (sympy.Symbol(f"s{i}", positive=True, integer=True), sympy.Symbol(f"alpha{i}", nonnegative=True),
            sympy.Symbol(f"beta{i}", nonnegative=True), sympy.Symbol(f"gamma{i}", nonnegative=True))


def _integer(arg: Any) -> int | None:
    return int(arg) if arg.is_Integer and arg > 0 else None


class _IntegerFunction(sympy.Function):
    """A nonnegative integer function of one argument that evaluates exactly at positive integers.

    A subclass gives ``_value`` (the integer for an integer argument, or None to stay unevaluated)
    and the LaTeX and plain forms, each a ``str.format`` template of the argument ``x``.
    """

    is_integer = True
    is_nonnegative = True
    _value: Callable[[int], int | None]
    _latex_form: str
    _text_form: str

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        r = None if q is None else cls._value(q)
        return None if r is None else sympy.Integer(r)

    def _latex(self, printer: Any) -> str:
        return self._latex_form.format(x=printer._print(self.args[0]))

    def _sympystr(self, printer: Any) -> str:
        return self._text_form.format(x=printer._print(self.args[0]))


class lg(_IntegerFunction):  # noqa: N801 - reads as the math it is
    """log2 p for a power of two p."""

    _value = staticmethod(lambda q: q.bit_length() - 1 if q & (q - 1) == 0 else None)
    _latex_form = r"\log_2 {x}"
    _text_form = "log2({x})"


class clg(_IntegerFunction):  # noqa: N801
    """⌈log2 p⌉."""

    _value = staticmethod(lambda q: (q - 1).bit_length())
    _latex_form = r"\left\lceil{{\log_2 {x}}}\right\rceil"
    _text_form = "ceil(log2({x}))"


class flg(_IntegerFunction):  # noqa: N801
    """⌊log2 p⌋."""

    _value = staticmethod(lambda q: q.bit_length() - 1)
    _latex_form = r"\left\lfloor{{\log_2 {x}}}\right\rfloor"
    _text_form = "floor(log2({x}))"


class surplus(_IntegerFunction):  # noqa: N801
    """s(p), see :func:`costmodel.intmath.surplus`."""

    _value = staticmethod(_surplus)
    _latex_form = "s({x})"
    _text_form = "s({x})"


class popsum(_IntegerFunction):  # noqa: N801
    """B(p), see :func:`costmodel.intmath.popsum`."""

    _value = staticmethod(_popsum)
    _latex_form = "B({x})"
    _text_form = "B({x})"


class folds(_IntegerFunction):  # noqa: N801
    """[p ≠ p′], see :func:`costmodel.intmath.folds`."""

    _value = staticmethod(_folds)
    _latex_form = r"[{x} \neq p']"
    _text_form = "[{x} ≠ p′]"
