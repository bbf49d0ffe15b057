"""The messages on an algorithm's critical path, one round at a time.

A record's coefficients add its rounds up (``latency``: how many, ``bandwidth``:
how many bytes); a link whose α and β depend on the message size needs them
one by one, since a round's cost depends on the size of the message it
carries.  A :class:`Message` is ``count`` rounds that each carry one message of
``share``·n bytes (the largest of the round: the one that decides its length),
reduced by the receiver or not.  Every size is a share of n: a ring's n/p, a
Rabenseifner all-reduce's n/2, n/4, ..., n/p and back.

Records whose rounds all carry one size need no list: it follows from their
coefficients (:func:`uniform`).  The others give ``messages(p, **extra)``,
built from the helpers below; the registry tests check that every list adds up
to the record's coefficients, and a cross-check that it matches the rounds of
the record's schedule, round by round.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005: the rounds of
   recursive halving and doubling, Bruck and the binomial trees.
.. [2] J. Bruck et al., "Efficient algorithms for all-to-all communications in
   multiport message-passing systems", IEEE TPDS 8(11), 1997 (all-to-all
   round i sends the blocks whose index has bit i set).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction

from costmodel.intmath import ceil_log2, floor_log2

__all__ = [
    "Message",
    "bruck_alltoall",
    "doubling",
    "folded",
    "folded_doubling",
    "folded_halving",
    "halving",
    "survivors",
    "tree",
]


@dataclass(frozen=True, slots=True)
class Message:
    """``count`` rounds on the critical path, each one message of ``share``·n bytes (``reduce``: the
    receiver reduces it, γ per byte)."""

    count: Fraction
    share: Fraction
    reduce: bool = False


def survivors(p: int) -> int:
    """p′ = 2^⌊log₂p⌋: the ranks left when the p − p′ extra ones have folded in."""
    return 2 ** floor_log2(p)


def _one(share: Fraction, *, reduce: bool = False) -> Message:
    return Message(Fraction(1), share, reduce)


def halving(q: int, *, reduce: bool = True) -> Iterator[Message]:
    """Recursive halving over q = 2^j ranks: messages of n/2, n/4, ..., n/q."""
    for i in range(1, floor_log2(q) + 1):
        yield _one(Fraction(1, 2**i), reduce=reduce)


def doubling(q: int) -> Iterator[Message]:
    """Recursive doubling of blocks over q = 2^j ranks: messages of n/q, 2n/q, ..., n/2."""
    for i in range(floor_log2(q)):
        yield _one(Fraction(2**i, q))


def tree(p: int) -> Iterator[Message]:
    """A binomial scatter or gather of p blocks (and Bruck's all-gather): round i carries
    min(2^i, p − 2^i) blocks of n/p, i = 0 .. ⌈log₂p⌉ − 1 (the root's subtree sizes)."""
    for i in range(ceil_log2(p)):
        yield _one(Fraction(min(2**i, p - 2**i), p))


def bruck_alltoall(p: int) -> Iterator[Message]:
    """Bruck's all-to-all: round i sends the blocks j in 1..p−1 with bit i of j set, each n/p."""
    for i in range(ceil_log2(p)):
        period = 2 ** (i + 1)
        ones = (p // period) * 2**i + max(0, p % period - 2**i)  # j in 0..p−1 with bit i set
        yield _one(Fraction(ones, p))


def _windows(p: int) -> Iterator[Fraction]:
    """The blocks of the heaviest window of each doubling step when p − p′ extra ranks have folded
    into the p′ = 2^⌊log₂p⌋ survivors: a window of w positions holds w + min(p − p′, w) of the p
    blocks (w = 1, 2, ..., p′/2)."""
    q = 2 ** floor_log2(p)
    for i in range(floor_log2(p)):
        w = 2**i
        yield Fraction(w + min(p - q, w), p)


def folded_doubling(p: int) -> Iterator[Message]:
    """All-gather of p blocks by recursive doubling for any p: the extra ranks hand their block in
    (n/p), the survivors double their windows, and each extra rank gets the p − 1 blocks it lacks."""
    folds = p & (p - 1) != 0
    if folds:
        yield _one(Fraction(1, p))
    for share in _windows(p):
        yield _one(share)
    if folds:
        yield _one(Fraction(p - 1, p))


def folded_halving(p: int) -> Iterator[Message]:
    """Reduce-scatter of p blocks by recursive halving for any p: the extra ranks reduce their whole
    vector in, the survivors halve their windows, and each extra rank gets its block back (n/p)."""
    folds = p & (p - 1) != 0
    if folds:
        yield _one(Fraction(1), reduce=True)
    for share in reversed(list(_windows(p))):
        yield _one(share, reduce=True)
    if folds:
        yield _one(Fraction(1, p))


def folded(p: int, inner: Iterable[Message], *, into: bool, back: bool) -> Iterator[Message]:
    """*inner* run by the p′ = 2^⌊log₂p⌋ survivors, in the fold when p is not a power of two: each
    extra rank first reduces its whole vector into a survivor (*into*) and finally gets the whole
    result back (*back*)."""
    folds = p & (p - 1) != 0
    if folds and into:
        yield _one(Fraction(1), reduce=True)
    yield from inner
    if folds and back:
        yield _one(Fraction(1))
