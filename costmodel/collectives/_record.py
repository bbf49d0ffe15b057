"""The formula record: one collective algorithm as data.

An :class:`Algorithm` keeps the α, β and γ coefficients of its cost apart
(start-ups, bytes and reduced bytes on the critical path); the cost itself is
derived, ``latency·α + bandwidth·β + compute·γ``.  Each coefficient is one
function ``f(p, n, m, **extra)`` evaluated by the backends of
:mod:`costmodel.collectives._math`.

The model is the one of Thakur, Rabenseifner and Gropp (2005) and Chan et al.
(2007): a message of m bytes costs α + mβ, reducing m bytes costs mγ; ranks are
fully connected, one-port and full-duplex, without contention.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from costmodel.references import Cited

if TYPE_CHECKING:
    from collections.abc import Iterable

    from costmodel.collectives._math import MathBackend
    from costmodel.collectives._messages import Message

__all__ = [
    "Algorithm", "Bound", "Coefficient", "Collective", "Constraint", "Extra", "per_rank", "power_of_two",
]

Coefficient = Callable[..., Any]
"""``f(p, n, m, **extra)``: a coefficient over any backend ``m``, a
:class:`~costmodel.collectives._math.MathBackend`; p and n are what that backend computes with."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A condition on p an algorithm needs.

    Parameters
    ----------
    name : str
        What the condition asks for, e.g. ``"power-of-two p"``.
    holds : callable
        ``holds(p) -> bool``.
    otherwise : str or None
        The name of the record that adapts the algorithm when the condition
        fails, or ``None`` to refuse with :class:`~costmodel.errors.ConstraintError`.
    explain : callable, optional
        ``explain(p) -> str``: what failing means at this p.
    """

    name: str
    holds: Callable[[int], bool]
    otherwise: str | None = None
    explain: Callable[[int], str] | None = None

    def failure(self, p: int) -> str:
        """Why *p* fails the condition, in words (for notes and errors)."""
        return self.explain(p) if self.explain else f"p={p} does not satisfy '{self.name}'"


@dataclass(frozen=True, slots=True, kw_only=True)
class Extra:
    """An integer parameter of an algorithm beyond p and n (segments, blocks).

    When the user does not fix it, costmodel picks the integer in
    ``[1, upper(p, n)]`` that minimises the cost; the cost must be convex in it
    (true for the pipelined forms a + b·k + c/k used here).
    """

    symbol: str
    name: str
    description: str
    upper: Callable[[int, Any], Any]


def per_rank(p: Any, n: Any, m: MathBackend, **extra: Any) -> Any:
    """The chunk count of most algorithms: n is cut into p blocks of n/p."""
    return p


@dataclass(frozen=True, slots=True, kw_only=True)
class Algorithm:
    """One algorithm of one collective, with its cost coefficients and provenance.

    ``chunks`` is how many equal pieces the algorithm cuts n into (p blocks for a
    ring, p′ for Rabenseifner, 2k for the double binary tree, k segments for the
    chain, 1 for the full-vector algorithms): every message is a whole number of
    them, and its schedule's ``units``.  When n is not a multiple of it, real
    schedules send chunks of ⌈n/chunks⌉ and ⌊n/chunks⌋ bytes.

    ``rounds`` (communication rounds on the critical path) defaults to the
    latency coefficient, since each round pays one start-up α; a record writes
    it only where the two differ.

    ``messages(p, **extra)`` lists the rounds' messages one size at a time
    (:mod:`costmodel.collectives._messages`), for links whose α and β depend on
    the message size; ``None`` when every round carries one size, which the
    coefficients then give (:func:`costmodel.collectives.piecewise.messages`).
    """

    collective: str
    name: str
    summary: str
    latency: Coefficient
    bandwidth: Coefficient
    compute: Coefficient
    bytes_sent: Coefficient
    source: Cited
    rounds: Coefficient | None = None
    aliases: tuple[str, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    extra: tuple[Extra, ...] = ()
    chunks: Coefficient = per_rank
    messages: Callable[..., Iterable[Message]] | None = None
    schedule: str | None = None
    adapts: str | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.rounds is None:
            object.__setattr__(self, "rounds", self.latency)

    @property
    def key(self) -> tuple[str, str]:
        return (self.collective, self.name)

    def coefficients(self, p: Any, n: Any, m: MathBackend, **extra: Any) -> tuple[Any, Any, Any]:
        """(latency, bandwidth, compute) coefficients on backend *m*."""
        return (
            self.latency(p, n, m, **extra),
            self.bandwidth(p, n, m, **extra),
            self.compute(p, n, m, **extra),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Bound:
    """A lower bound on a collective's cost, term by term (Chan et al. 2007)."""

    latency: Coefficient
    bandwidth: Coefficient
    compute: Coefficient
    source: Cited
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Collective:
    """A collective operation: its names, the meaning of n and its lower bound."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    meaning_of_n: str
    reduces: bool
    bound: Bound
    algorithms: tuple[Algorithm, ...] = field(default=())


def power_of_two(otherwise: str | None) -> Constraint:
    """The power-of-two guard of the recursive algorithms, adapted by *otherwise*."""
    from costmodel.intmath import floor_log2, is_power_of_two

    def explain(p: int) -> str:
        group = 1 << floor_log2(p)
        return f"p={p} is not a power of two: {p - group} extra ranks fold into a group of {group}"

    return Constraint("power-of-two p", is_power_of_two, otherwise, explain)
