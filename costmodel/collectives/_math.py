"""One definition of each formula, several ways to evaluate it.

A coefficient in a record is a small function ``f(p, n, m, **extra)``: ``p``
and ``n`` are whatever the backend wants them to be, and ``m`` is a *math
namespace* offering the few non-arithmetic functions the formulas need:

=============  ==============================================================
``lg(p)``      log2 p, for p a power of two
``clg(p)``     ⌈log2 p⌉
``flg(p)``     ⌊log2 p⌋
``pow2(e)``    2**e
``max(a, b)``  the larger of a and b (``min`` likewise)
``surplus(p)`` s(p) = Σ_{i=0}^{⌊log2 p⌋-1} min(p - 2^⌊log2 p⌋, 2^i): the extra
               blocks that the heaviest rank moves when p - 2^⌊log2 p⌋ ranks
               have folded into a power-of-two group (0 for a power of two)
``popsum(p)``  B(p) = Σ_{j=0}^{p-1} popcount(j): blocks Bruck's all-to-all
               moves per rank (p·log2(p)/2 for a power of two)
``folds(p)``   [p ≠ p′]: 1 when p is not a power of two (extra ranks fold
               into the group of p′ = 2^⌊log2 p⌋), 0 when it is; the fold
               steps of the ``-folded`` records are multiplied by it, so at a
               power of two they cost exactly as the record they adapt
=============  ==============================================================

Four namespaces evaluate the same definitions:

* :data:`EXACT` with ``p`` and ``n`` as :class:`~fractions.Fraction`: exact answers;
* :data:`NUMPY` with float arrays: sweeps (numpy imported on first use);
* :data:`TEXT` with :class:`Term` placeholders: a readable one-line formula,
  without importing sympy (see :func:`text_formula`);
* ``symbolic()``: sympy expressions, for ``formula`` and the registry checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from costmodel.intmath import ceil_log2, floor_log2, folds, is_power_of_two, popsum, surplus

__all__ = ["EXACT", "NUMPY", "TEXT", "MathBackend", "Term", "symbolic", "with_logs"]


class MathBackend(Protocol):
    """What a coefficient may call on its ``m``: the table in the module docstring, for one kind of number."""

    @property
    def name(self) -> str: ...
    def lg(self, p: Any, /) -> Any: ...
    def clg(self, p: Any, /) -> Any: ...
    def flg(self, p: Any, /) -> Any: ...
    def pow2(self, e: Any, /) -> Any: ...
    def max(self, a: Any, b: Any, /) -> Any: ...
    def min(self, a: Any, b: Any, /) -> Any: ...
    def surplus(self, p: Any, /) -> Any: ...
    def popsum(self, p: Any, /) -> Any: ...
    def folds(self, p: Any, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Functions:
    """A :class:`MathBackend` made of plain functions (the exact, text and sympy backends)."""

    name: str
    lg: Callable[[Any], Any]
    clg: Callable[[Any], Any]
    flg: Callable[[Any], Any]
    pow2: Callable[[Any], Any]
    max: Callable[[Any, Any], Any]
    min: Callable[[Any, Any], Any]
    surplus: Callable[[Any], Any]
    popsum: Callable[[Any], Any]
    folds: Callable[[Any], Any]


# -- exact ---------------------------------------------------------------------------------


def _int(p: Any) -> int:
    if type(p) is int and p >= 1:
        return p
    value = Fraction(p)
    if value.denominator != 1 or value < 1:
        raise ValueError(f"{p!r} is not a positive integer")
    return value.numerator


def _lg(p: Any) -> int:
    q = _int(p)
    if not is_power_of_two(q):
        raise ValueError(f"log2({q}) is not an integer; the record needs a power-of-two guard")
    return floor_log2(q)


def _pow2(e: Any) -> Fraction:
    return Fraction(2) ** int(e)


def with_logs(backend: MathBackend, lg: Callable[[Any], Any]) -> MathBackend:
    """*backend* with lg, clg and flg all replaced by *lg* (how a worked example reads a slip of log₂)."""
    return _Functions(name=backend.name, lg=lg, clg=lg, flg=lg, pow2=backend.pow2, max=backend.max,
                      min=backend.min, surplus=backend.surplus, popsum=backend.popsum, folds=backend.folds)


EXACT: MathBackend = _Functions(
    name="exact", lg=_lg, clg=lambda p: ceil_log2(_int(p)), flg=lambda p: floor_log2(_int(p)),
    pow2=_pow2, max=max, min=min,
    surplus=lambda p: surplus(_int(p)), popsum=lambda p: popsum(_int(p)), folds=lambda p: folds(_int(p)),
)
"""Exact backend: integers and Fractions."""


# -- numpy ---------------------------------------------------------------------------------


class _NumpyMath:
    """Vectorised backend; numpy is imported on first use."""

    name = "numpy"

    @property
    def np(self) -> Any:
        import numpy

        return numpy

    def lg(self, p: Any) -> Any:
        return self.np.log2(p)

    def clg(self, p: Any) -> Any:
        return self.np.ceil(self.np.log2(p))

    def flg(self, p: Any) -> Any:
        return self.np.floor(self.np.log2(p))

    def pow2(self, e: Any) -> Any:
        return self.np.exp2(e)

    def max(self, a: Any, b: Any) -> Any:
        return self.np.maximum(a, b)

    def min(self, a: Any, b: Any) -> Any:
        return self.np.minimum(a, b)

    def surplus(self, p: Any) -> Any:
        np = self.np
        q = np.asarray(p, dtype=np.int64)
        top = np.floor(np.log2(q)).astype(np.int64)
        r = q - (np.int64(1) << top)
        total = np.zeros_like(q)
        for i in range(int(top.max(initial=0))):
            total += np.where(i < top, np.minimum(r, 1 << i), 0)
        return total.astype(float)

    def folds(self, p: Any) -> Any:
        np = self.np
        q = np.asarray(p, dtype=np.int64)
        return ((q & (q - 1)) != 0).astype(float)

    def popsum(self, p: Any) -> Any:
        np = self.np
        q = np.asarray(p, dtype=np.int64)
        total = np.zeros_like(q)
        for bit in range(int(q.max(initial=1)).bit_length()):
            period = 1 << (bit + 1)
            total += (q // period) * (1 << bit) + np.maximum(0, q % period - (1 << bit))
        return total.astype(float)


NUMPY: MathBackend = _NumpyMath()
"""Vectorised backend over float64 arrays."""


# -- text ----------------------------------------------------------------------------------

# Precedence: sum 1, product 2, power/atom 3.
_SUM, _PRODUCT, _ATOM = 1, 2, 3


class Term:
    """A formula as text, built by running a coefficient function on placeholders.

    Only what the coefficient functions use is supported: +, -, *, / and
    integer powers, with numbers, symbols and namespace functions.  Constants
    fold, multiplications by 1 and additions of 0 vanish.
    """

    __slots__ = ("const", "prec", "text")

    def __init__(self, text: str, prec: int = _ATOM, const: Fraction | None = None) -> None:
        self.text = text
        self.prec = prec
        self.const = const

    @classmethod
    def lift(cls, x: Any) -> Term:
        if isinstance(x, Term):
            return x
        value = Fraction(x)
        if value.denominator == 1:
            return cls(str(value.numerator), _ATOM if value >= 0 else _SUM, value)
        return cls(f"{value.numerator}/{value.denominator}", _PRODUCT, value)

    def _wrap(self, prec: int) -> str:
        return f"({self.text})" if self.prec < prec else self.text

    def as_factor(self) -> str:
        """The text as a factor of a product: parenthesised when it is a sum, as in ``2·(p − 1)``."""
        return self._wrap(_PRODUCT)

    def __add__(self, other: Any) -> Term:
        a, b = self, Term.lift(other)
        if a.const is not None and b.const is not None:
            return Term.lift(a.const + b.const)
        if b.const == 0:
            return a
        if a.const == 0:
            return b
        if b.const is not None and b.const < 0:
            return Term(f"{a.text} − {-b.const}", _SUM)
        return Term(f"{a.text} + {b.text}", _SUM)

    __radd__ = __add__

    def __neg__(self) -> Term:
        if self.const is not None:
            return Term.lift(-self.const)
        return Term(f"−{self._wrap(_PRODUCT)}", _SUM)

    def __sub__(self, other: Any) -> Term:
        b = Term.lift(other)
        if self.const is not None and b.const is not None:
            return Term.lift(self.const - b.const)
        if b.const == 0:
            return self
        return Term(f"{self.text} − {b._wrap(_PRODUCT)}", _SUM)

    def __rsub__(self, other: Any) -> Term:
        return Term.lift(other) - self

    def __mul__(self, other: Any) -> Term:
        a, b = self, Term.lift(other)
        if a.const is not None and b.const is not None:
            return Term.lift(a.const * b.const)
        if a.const == 0 or b.const == 0:
            return Term.lift(0)
        if a.const == 1:
            return b
        if b.const == 1:
            return a
        if b.const is not None:  # keep numbers in front: 2(p − 1), not (p − 1)·2
            a, b = b, a
        left, right = a._wrap(_PRODUCT), b._wrap(_PRODUCT)
        glue = "" if a.const is not None and right[0] in "(⌈⌊" else "·"
        return Term(f"{left}{glue}{right}", _PRODUCT)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Term:
        a, b = self, Term.lift(other)
        if a.const is not None and b.const is not None:
            return Term.lift(a.const / b.const)
        if b.const == 1:
            return a
        return Term(f"{a._wrap(_PRODUCT)}/{b._wrap(_ATOM)}", _PRODUCT)

    def __rtruediv__(self, other: Any) -> Term:
        return Term.lift(other) / self

    def __pow__(self, other: Any) -> Term:
        b = Term.lift(other)
        if self.const is not None and b.const is not None and b.const.denominator == 1:
            return Term.lift(self.const ** int(b.const))
        return Term(f"{self._wrap(_ATOM)}^{b._wrap(_ATOM)}", _ATOM)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Term({self.text!r})"


def _call(template: str) -> Any:
    def render(*args: Any) -> Term:
        terms = [Term.lift(a) for a in args]
        return Term(template.format(*(t.text for t in terms), *(t._wrap(_ATOM) for t in terms)))

    return render


def _text_pow2(e: Any) -> Term:
    # 2^⌊log2 p⌋ is the power-of-two group of the folded algorithms: write it p′
    if isinstance(e, Term) and e.text == "⌊log₂p⌋":
        return Term("p′")
    return Term.lift(2) ** e


TEXT: MathBackend = _Functions(
    name="text",
    lg=_call("log₂{1}"),
    clg=_call("⌈log₂{1}⌉"),
    flg=_call("⌊log₂{1}⌋"),
    pow2=_text_pow2,
    max=_call("max({0}, {1})"),
    min=_call("min({0}, {1})"),
    surplus=_call("s({0})"),
    popsum=_call("B({0})"),
    folds=lambda p: Term("[p ≠ p′]"),
)
"""Text backend: evaluates a coefficient into a readable one-line :class:`Term`."""


# -- sympy ---------------------------------------------------------------------------------

_SYMBOLIC: MathBackend | None = None


def symbolic() -> MathBackend:
    """The sympy backend (imports sympy on first use)."""
    global _SYMBOLIC  # noqa: PLW0603 - one lazily built namespace, see module docstring
    if _SYMBOLIC is None:
        import sympy

        from costmodel import symbols

        _SYMBOLIC = _Functions(
            name="sympy", lg=symbols.lg, clg=symbols.clg, flg=symbols.flg,
            pow2=lambda e: sympy.Integer(2) ** e, max=sympy.Max, min=sympy.Min,
            surplus=symbols.surplus, popsum=symbols.popsum, folds=symbols.folds,
        )
    return _SYMBOLIC
