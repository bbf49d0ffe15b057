"""The exceptions costmodel raises.

Every error a user can cause is a :class:`CostmodelError`; each also subclasses
the builtin it resembles, so ``except ValueError`` keeps working for callers
that do not know costmodel.  Messages are one line, start in lower case, have
no final period, and read ``<value!r> <what is wrong>[; <hint>]``.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "CalibrationError",
    "ConstraintError",
    "CostmodelError",
    "InputError",
    "MissingDependency",
    "ParseError",
    "UnitError",
    "UnknownNameError",
    "did_you_mean",
]


class CostmodelError(Exception):
    """Base class of every error costmodel raises on purpose."""


class InputError(CostmodelError, ValueError):
    """A value given by the user is invalid."""


class UnitError(InputError):
    """A quantity with a unit could not be parsed, or has the wrong dimension."""


class UnknownNameError(InputError, LookupError):
    """A name (collective, algorithm, profile, ...) is not known.

    Parameters
    ----------
    kind : str
        What was looked up, e.g. ``"algorithm"``.
    name : str
        The name as the user typed it.
    choices : iterable of str
        The valid names; used for the did-you-mean hint.
    context : str, optional
        Appended after the name, e.g. ``"for allreduce"``.
    """

    def __init__(self, kind: str, name: str, choices: Iterable[str], *, context: str = "") -> None:
        self.kind = kind
        self.name = name
        self.choices = tuple(choices)
        where = f" {context}" if context else ""
        hint = did_you_mean(name, self.choices)
        if hint:
            tail = f"; did you mean {hint!r}?"
        else:
            tail = f"; choose from {', '.join(self.choices)}" if self.choices else ""
        super().__init__(f"unknown {kind} {name!r}{where}{tail}")


class ConstraintError(InputError):
    """An algorithm cannot run with the given parameters (e.g. p is not a power of two)."""

    def __init__(self, message: str, *, algorithm: str, constraint: str, value: object) -> None:
        self.algorithm = algorithm
        self.constraint = constraint
        self.value = value
        super().__init__(message)


class ParseError(InputError):
    """A file could not be parsed; the message starts with ``path:line:``."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")


class WrongResults(ParseError):
    """Every row of a benchmark log failed its own check of the results (nccl-tests' ``#wrong`` > 0, or an
    old log's max error above the limit): nothing in it is a valid time.  ``refusals`` lists the rows'
    reasons."""

    def __init__(self, message: str, *, path: str, line: int | None = None, refusals: tuple[str, ...] = ()
                 ) -> None:
        super().__init__(message, path=path, line=line)
        self.refusals = refusals


class SeparateRuns(ParseError):
    """A benchmark log that holds several runs of the test side by side, each on its own ranks (each
    process listed its ranks from 0): its processes never formed one communicator, so no time in it is
    what the command was meant to measure.  ``runs`` is how many the log shows, ``evidence`` where it
    shows them."""

    def __init__(self, message: str, *, path: str, line: int | None = None, runs: int = 2,
                 evidence: str = "") -> None:
        super().__init__(message, path=path, line=line)
        self.runs = runs
        self.evidence = evidence


class CalibrationError(CostmodelError, RuntimeError):
    """A measurement or a fit failed."""


class MissingDependency(CostmodelError, ImportError):
    """An optional dependency is needed but not installed."""


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """Return the choice closest to *name*, or ``None`` if none is close.

    Examples
    --------
    >>> did_you_mean("rign", ["ring", "tree", "bruck"])
    'ring'
    >>> did_you_mean("zzz", ["ring"]) is None
    True
    """
    import difflib  # only on the error path

    matches = difflib.get_close_matches(name.lower(), list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None
