"""Helpers of the collective unit tests: a link whose terms can be told apart."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel import AlgorithmCost, LinkParams, cost

ALPHA = Fraction(1, 10**5)  # 10 µs
BETA = Fraction(1, 10**9)  # 1 ns/B
GAMMA = Fraction(1, 10**11)  # 0.01 ns/B
LINK = LinkParams(alpha_s=ALPHA, beta_s_per_byte=BETA, gamma_s_per_byte=GAMMA)

# a size that is not a power of two, nor a multiple of small p, nor an integer
N = Fraction(1_000_003, 3)


@dataclass(frozen=True)
class Terms:
    """The α, β and γ coefficients of a cost, its rounds and busiest-rank bytes."""

    alpha: Fraction
    beta: Fraction
    gamma: Fraction
    rounds: int
    sent: Fraction


def terms_of(result: AlgorithmCost) -> Terms:
    return Terms(
        alpha=result.latency_s / ALPHA,
        beta=result.bandwidth_s / BETA,
        gamma=result.compute_s / GAMMA,
        rounds=result.rounds,
        sent=result.bytes_sent_per_rank,
    )


def terms(collective: str, algorithm: str, p: int, n: Any = N, **extra: int) -> Terms:
    """The coefficients of *algorithm* at (p, n) on :data:`LINK`."""
    return terms_of(cost(collective, algorithm, p=p, n=n, link=LINK, extra=extra or None))


def expect(alpha: Any, beta: Any, gamma: Any, rounds: int, sent: Any) -> Terms:
    return Terms(Fraction(alpha), Fraction(beta), Fraction(gamma), rounds, Fraction(sent))
