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


class lg(sympy.Function):  # noqa: N801 - reads as the math it is
    """log2 p for a power of two p."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        if q is not None and q & (q - 1) == 0:
            return sympy.Integer(q.bit_length() - 1)
        return None

    def _latex(self, printer: Any) -> str:
        return rf"\log_2 {printer._print(self.args[0])}"

    def _sympystr(self, printer: Any) -> str:
        return f"log2({printer._print(self.args[0])})"


class clg(sympy.Function):  # noqa: N801
    """⌈log2 p⌉."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        return None if q is None else sympy.Integer((q - 1).bit_length())

    def _latex(self, printer: Any) -> str:
        return rf"\left\lceil{{\log_2 {printer._print(self.args[0])}}}\right\rceil"

    def _sympystr(self, printer: Any) -> str:
        return f"ceil(log2({printer._print(self.args[0])}))"


class flg(sympy.Function):  # noqa: N801
    """⌊log2 p⌋."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        return None if q is None else sympy.Integer(q.bit_length() - 1)

    def _latex(self, printer: Any) -> str:
        return rf"\left\lfloor{{\log_2 {printer._print(self.args[0])}}}\right\rfloor"

    def _sympystr(self, printer: Any) -> str:
        return f"floor(log2({printer._print(self.args[0])}))"


class surplus(sympy.Function):  # noqa: N801
    """s(p), see :func:`costmodel.intmath.surplus`."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        return None if q is None else sympy.Integer(_surplus(q))

    def _latex(self, printer: Any) -> str:
        return rf"s({printer._print(self.args[0])})"

    def _sympystr(self, printer: Any) -> str:
        return f"s({printer._print(self.args[0])})"


class popsum(sympy.Function):  # noqa: N801
    """B(p), see :func:`costmodel.intmath.popsum`."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        return None if q is None else sympy.Integer(_popsum(q))

    def _latex(self, printer: Any) -> str:
        return rf"B({printer._print(self.args[0])})"

    def _sympystr(self, printer: Any) -> str:
        return f"B({printer._print(self.args[0])})"


class folds(sympy.Function):  # noqa: N801
    """[p ≠ p′], see :func:`costmodel.intmath.folds`."""

    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, arg: Any) -> Any:
        q = _integer(arg)
        return None if q is None else sympy.Integer(_folds(q))

    def _latex(self, printer: Any) -> str:
        return rf"[{printer._print(self.args[0])} \neq p']"

    def _sympystr(self, printer: Any) -> str:
        return f"[{printer._print(self.args[0])} ≠ p′]"
