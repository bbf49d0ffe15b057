"""A restricted grammar for formulas such as ``2*(p-1)*alpha``: text to sympy, never ``eval``.

A formula (a student's answer, an example's input) is text from a file: it is never given to ``eval`` or
``sympify``.  This module tokenises it with one regular expression and parses
it by recursive descent into sympy expressions built from costmodel's own
symbols (:mod:`costmodel.symbols`), accepting only::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "·" | "×" | "/") unary | unary)*      # juxtaposition multiplies: 2(p-1)α
    unary   := ("+" | "-") unary | power
    power   := primary (("^" | "**") unary)?
    primary := number | name | function ("(" expr ")" | power) | "(" expr ")"
             | "⌈" expr "⌉" | "⌊" expr "⌋"

with the names ``p n alpha α beta β gamma γ`` and the functions ``log2`` (or
``lg``, ``log₂``, ``log_2``), ``ln``, ``log10``, ``ceil``, ``floor`` and ``sqrt``; ``log`` alone is
refused as ambiguous.  Text is at most 300 characters, nesting at most 40 deep,
exponents integers of at most 64 in size, and the formula's degree at most 64
(counted on the parse tree before anything is expanded or evaluated, so that a
power tower such as ``((p+n)^64)^64`` is refused at once); a logarithm of a
number that is not positive is refused as undefined.

Exercises compare the formulas it reads with
:func:`costmodel.exercises.symbolic.equivalent`; worked examples read their formula inputs with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError

__all__ = ["MAX_LENGTH", "parse_expression", "show_expression"]

MAX_LENGTH = 300
_MAX_DEPTH = 40
_MAX_EXPONENT = 64
_MAX_DEGREE = 64
_TOKEN = re.compile(r"\s*(?:(?P<num>\d+(?:\.\d+)?(?:[eE][-+]?\d{1,2}(?![0-9]))?)"
                    r"|(?P<name>[A-Za-zαβγ_][A-Za-z0-9_]*|[αβγ])"
                    r"|(?P<op>\*\*|[-+*/^()·×⌈⌉⌊⌋]))")
_SYMBOLS = {"p": "p", "P": "p", "n": "n", "N": "n", "alpha": "alpha", "α": "alpha", "beta": "beta",
            "β": "beta", "gamma": "gamma", "γ": "gamma"}
_FUNCTIONS = ("log2", "lg", "ln", "log10", "ceil", "floor", "sqrt")


def _bad(text: str, what: str) -> InputError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return InputError(f"{shown!r} is not a formula costmodel reads: {what}; "
                      "write e.g. 2*(p-1)*alpha + 2*(p-1)/p*n*beta, with log2(p) for log₂ p")


def _tokens(text: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if m is None:
            raise _bad(text, f"unexpected {text[i:].strip()[:10]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        i = m.end()
    return out


class _Parser:
    def __init__(self, text: str, names: Mapping[str, Any] | None = None) -> None:
        from costmodel import symbols

        self.names = dict(names or {})
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0
        self.sym = symbols

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            want = f"{value!r}" if value else "more"
            raise _bad(self.text, f"expected {want} at the end" if token is None else
                       f"expected {want}, found {token[1]!r}")
        self.i += 1
        return token

    def nested(self, parse: Callable[[], Any]) -> Any:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _bad(self.text, "it is nested too deeply")
        try:
            return parse()
        finally:
            self.depth -= 1

    def expr(self) -> Any:
        value = self.term()
        while (token := self.peek()) is not None and token[1] in "+-":
            self.take()
            right = self.term()
            value = value + right if token[1] == "+" else value - right
        return value

    def term(self) -> Any:
        value = self.unary()
        while (token := self.peek()) is not None:
            if token[1] in ("*", "·", "×"):
                self.take()
                value = self.bounded(value, self.unary(), lambda a, b: a * b)
            elif token[1] == "/":
                self.take()
                divisor = self.unary()
                if divisor == 0:
                    raise _bad(self.text, "it divides by zero")
                value = self.bounded(value, divisor, lambda a, b: a / b)
            elif token[0] in ("num", "name") or token[1] in ("(", "⌈", "⌊"):
                value = self.bounded(value, self.unary(), lambda a, b: a * b)  # juxtaposition: 2(p - 1)α
            else:
                break
        return value

    def bounded(self, a: Any, b: Any, combine: Callable[[Any, Any], Any]) -> Any:
        """*combine(a, b)*, a product or quotient, refused before it is built when its degree is too high."""
        if _degree(a) + _degree(b) > _MAX_DEGREE:
            raise _bad(self.text, f"its degree is above {_MAX_DEGREE}")
        return combine(a, b)

    def unary(self) -> Any:
        token = self.peek()
        if token is not None and token[1] in "+-":
            self.take()
            value = self.nested(self.unary)
            return -value if token[1] == "-" else value
        return self.power()

    def power(self) -> Any:
        import sympy

        base = self.primary()
        token = self.peek()
        if token is not None and token[1] in ("^", "**"):
            self.take()
            exponent = self.nested(self.unary)
            if not (exponent.is_Integer and abs(int(exponent)) <= _MAX_EXPONENT):
                raise _bad(self.text, f"exponents must be integers from -{_MAX_EXPONENT} to {_MAX_EXPONENT}")
            if _degree(base) * abs(int(exponent)) > _MAX_DEGREE:
                raise _bad(self.text, f"its degree is above {_MAX_DEGREE}")
            if base == 0 and exponent < 0:
                raise _bad(self.text, "it divides by zero")
            return sympy.Pow(base, exponent)
        return base

    def primary(self) -> Any:
        import sympy

        kind, value = self.take()
        if kind == "num":
            if len(value) > 30:
                raise _bad(self.text, "a number has too many digits")
            return sympy.Rational(str(Fraction(value)))
        if value in ("(", "⌈", "⌊"):
            close = {"(": ")", "⌈": "⌉", "⌊": "⌋"}[value]
            inner = self.nested(self.expr)
            self.take(close)
            return inner if value == "(" else self._round(value == "⌈", inner)
        if kind == "name":
            if value in self.names:
                return self.names[value]
            if value in _SYMBOLS:
                return getattr(self.sym, _SYMBOLS[value] if _SYMBOLS[value] in ("p", "n") else
                               _SYMBOLS[value].upper())
            if value == "log":
                raise _bad(self.text, "log is ambiguous: write log2(...), ln(...) or log10(...)")
            if value in _FUNCTIONS:
                if self.peek() is not None and self.peek()[1] == "(":  # type: ignore[index]
                    self.take("(")
                    arg = self.nested(self.expr)
                    self.take(")")
                else:  # log2 p, as written by hand
                    arg = self.nested(self.power)
                return self._call(value, arg)
            raise _bad(self.text, f"unknown name {value!r} (use p, n, alpha, beta, gamma)")
        raise _bad(self.text, f"unexpected {value!r}")

    def _round(self, up: bool, arg: Any) -> Any:
        import sympy

        if isinstance(arg, self.sym.lg):  # ⌈log2 p⌉ and ⌊log2 p⌋ are the registry's clg and flg
            return (self.sym.clg if up else self.sym.flg)(arg.args[0])
        return sympy.ceiling(arg) if up else sympy.floor(arg)

    def _call(self, name: str, arg: Any) -> Any:
        import sympy

        if name in ("log2", "lg", "ln", "log10", "sqrt") and arg.is_number and not arg.is_positive \
                and not (name == "sqrt" and arg == 0):
            raise _bad(self.text, f"{name}({arg}) is undefined")
        if name in ("log2", "lg"):
            return self.sym.lg(arg)
        if name == "ln":
            return sympy.log(arg)
        if name == "log10":
            return sympy.log(arg, 10)
        if name == "sqrt":
            return sympy.sqrt(arg)
        return self._round(name == "ceil", arg)


def _as_written(text: str) -> str:
    """The tool's own notation as students copy it: ``log₂ p`` and ``log_2(p)`` are ``log2``,
    ``log₂p`` is ``log2 p`` (a sheet prints it so), and the Unicode minus is a minus."""
    text = re.sub(r"log(?:₂|_2|_\{2\})", "log2", text.replace("\u2212", "-"))
    return re.sub(r"\b(log2|log10|lg|ln)(?=[pPnN](?![A-Za-z0-9_]))", r"\1 ", text)


def _degree(expr: Any) -> int:
    """The degree of *expr* as written, before any expansion: a bound on the work of evaluating it.

    A symbol counts 1, a number 1 for each 64 bits of it, a sum its largest
    term, a product the sum of its factors, a power its base times the exponent
    and a function its argument.
    """
    if expr.is_Rational:
        return max(1, (abs(expr.p).bit_length() + expr.q.bit_length()) // 64)
    if expr.is_Pow and expr.exp.is_Integer:
        return _degree(expr.base) * abs(int(expr.exp))
    if expr.is_Mul:
        return sum(_degree(a) for a in expr.args)
    if expr.args:
        return max(_degree(a) for a in expr.args)
    return 1


def parse_expression(text: str, names: Mapping[str, Any] | None = None) -> Any:
    """A formula from text, as a sympy expression in costmodel's symbols; never ``eval``.

    *names* adds names the formula may use (an exercise's givens), each standing for its value.

    >>> parse_expression("2(p-1)·α + 2(p - 1)/p * n * beta")
    alpha*(2*p - 2) + beta*n*(2*p - 2)/p
    >>> parse_expression("⌈log2 p⌉·α + 1.5e3 β")
    alpha*ceil(log2(p)) + 1500*beta
    >>> parse_expression("__import__('os')")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: "__import__('os')" is not a formula costmodel reads: unexpected "'os')"; ...
    """
    if not isinstance(text, str):
        raise InputError(f"{text!r} is not a formula; write it as a string such as \"2*(p-1)*alpha\"")
    if len(text) > MAX_LENGTH:
        raise InputError(f"the formula has {len(text)} characters; at most {MAX_LENGTH} are read")
    if not text.strip():
        raise _bad(text, "it is empty")
    parser = _Parser(_as_written(text), names)
    value = parser.expr()
    if parser.peek() is not None:
        raise _bad(text, f"unexpected {parser.peek()[1]!r}")  # type: ignore[index]
    return value


def show_expression(expr: Any) -> str:
    """A formula as people type it back: ``2*alpha*(p - 1)``."""
    return str(expr)
