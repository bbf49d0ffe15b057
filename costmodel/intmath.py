"""Exact integer helpers shared by the formula backends.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005, sections 4.1-4.4
   (power-of-two algorithms and their non-power-of-two adaptations).
.. [2] J. Bruck et al., "Efficient algorithms for all-to-all communications in
   multiport message-passing systems", IEEE TPDS 8(11), 1997, section 3.
"""

from __future__ import annotations

__all__ = ["ceil_log2", "floor_log2", "folds", "is_power_of_two", "popsum", "surplus"]


def is_power_of_two(p: int) -> bool:
    """Whether *p* is 1, 2, 4, 8, ...

    >>> [q for q in range(1, 10) if is_power_of_two(q)]
    [1, 2, 4, 8]
    """
    return p > 0 and p & (p - 1) == 0


def ceil_log2(p: int) -> int:
    """⌈log2 p⌉ for p ≥ 1, exactly.

    >>> ceil_log2(1), ceil_log2(16), ceil_log2(17)
    (0, 4, 5)
    """
    return (p - 1).bit_length()


def floor_log2(p: int) -> int:
    """⌊log2 p⌋ for p ≥ 1, exactly.

    >>> floor_log2(1), floor_log2(16), floor_log2(17)
    (0, 4, 4)
    """
    return p.bit_length() - 1


def folds(p: int) -> int:
    """[p ≠ p′]: 1 if extra ranks fold into the power-of-two group p′ = 2^⌊log2 p⌋, else 0.

    >>> [folds(p) for p in (1, 2, 3, 8, 12)]
    [0, 0, 1, 0, 1]
    """
    return 0 if is_power_of_two(p) else 1


def surplus(p: int) -> int:
    """s(p) = Σ_{i=0}^{⌊log2 p⌋-1} min(r, 2^i) with r = p - 2^⌊log2 p⌋.

    When r ranks fold into ranks 0..r-1 of a power-of-two group, round i of a
    recursive exchange moves an aligned window of 2^i surviving ranks; the
    first window holds min(r, 2^i) doubled ranks, so the heaviest rank moves
    s(p) blocks more than in the power-of-two case.

    >>> [surplus(p) for p in (8, 9, 12, 15)]
    [0, 3, 7, 7]
    """
    top = floor_log2(p)
    r = p - (1 << top)
    return sum(min(r, 1 << i) for i in range(top))


def popsum(p: int) -> int:
    """B(p) = Σ_{j=0}^{p-1} popcount(j): the blocks each rank sends in Bruck's all-to-all.

    Block j travels j ranks and is forwarded once per set bit of j; for a power
    of two B(p) = p·log2(p)/2.

    >>> [popsum(p) for p in (2, 4, 8, 5)]
    [1, 4, 12, 5]
    """
    total = 0
    for bit in range(p.bit_length()):
        period = 1 << (bit + 1)
        total += (p // period) * (1 << bit) + max(0, p % period - (1 << bit))
    return total
