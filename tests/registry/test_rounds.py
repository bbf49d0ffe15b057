"""Every record's rounds, written once where they differ from the latency coefficient.

``Algorithm.rounds`` defaults to the latency coefficient (each round is one
start-up on the critical path); the table below is what each record's rounds
were when every record wrote them out, as text and at p = 4, 8, 16 (k = 3).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel.collectives._math import EXACT
from costmodel.collectives._registry import COLLECTIVES
from costmodel.collectives.evaluate import coefficient_text

RECORDS = {a.key: a for spec in COLLECTIVES.values() for a in spec.algorithms}

ROUNDS = {
    ('allreduce', 'ring'): ('2(p − 1)', [6, 14, 30]),
    ('allreduce', 'tree'): ('2⌈log₂p⌉', [4, 6, 8]),
    ('allreduce', 'recursive-doubling'): ('log₂p', [2, 3, 4]),
    ('allreduce', 'recursive-doubling-folded'): ('⌊log₂p⌋ + 2·[p ≠ p′]', [2, 3, 4]),
    ('allreduce', 'rabenseifner'): ('2·log₂p', [4, 6, 8]),
    ('allreduce', 'rabenseifner-folded'): ('2⌊log₂p⌋ + 2·[p ≠ p′]', [4, 6, 8]),
    ('allreduce', 'naive'): ('2(p − 1)', [6, 14, 30]),
    ('allreduce', 'double-binary-tree'): ('4(⌊log₂p⌋ + k − 1)', [16, 20, 24]),
    ('reduce-scatter', 'ring'): ('p − 1', [3, 7, 15]),
    ('reduce-scatter', 'recursive-halving'): ('log₂p', [2, 3, 4]),
    ('reduce-scatter', 'recursive-halving-folded'): ('⌊log₂p⌋ + 2·[p ≠ p′]', [2, 3, 4]),
    ('allgather', 'ring'): ('p − 1', [3, 7, 15]),
    ('allgather', 'recursive-doubling'): ('log₂p', [2, 3, 4]),
    ('allgather', 'recursive-doubling-folded'): ('⌊log₂p⌋ + 2·[p ≠ p′]', [2, 3, 4]),
    ('allgather', 'bruck'): ('⌈log₂p⌉', [2, 3, 4]),
    ('broadcast', 'binomial'): ('⌈log₂p⌉', [2, 3, 4]),
    ('broadcast', 'scatter-allgather'): ('⌈log₂p⌉ + p − 1', [5, 10, 19]),
    ('broadcast', 'scatter-recursive-doubling'): ('2·log₂p', [4, 6, 8]),
    ('broadcast', 'scatter-recursive-doubling-folded'): ('2⌊log₂p⌋ + [p ≠ p′]', [4, 6, 8]),
    ('broadcast', 'pipelined-chain'): ('p + k − 2', [5, 9, 17]),
    ('reduce', 'binomial'): ('⌈log₂p⌉', [2, 3, 4]),
    ('reduce', 'rabenseifner'): ('2·log₂p', [4, 6, 8]),
    ('reduce', 'rabenseifner-folded'): ('2⌊log₂p⌋ + [p ≠ p′]', [4, 6, 8]),
    ('alltoall', 'pairwise'): ('p − 1', [3, 7, 15]),
    ('alltoall', 'bruck'): ('⌈log₂p⌉', [2, 3, 4]),
    ('gather', 'binomial'): ('⌈log₂p⌉', [2, 3, 4]),
    ('gather', 'naive'): ('p − 1', [3, 7, 15]),
    ('scatter', 'binomial'): ('⌈log₂p⌉', [2, 3, 4]),
    ('scatter', 'naive'): ('p − 1', [3, 7, 15]),
}


def test_every_record_is_in_the_table() -> None:
    assert set(ROUNDS) == set(RECORDS)


@pytest.mark.parametrize("key", sorted(ROUNDS))
def test_rounds_are_what_they_were(key: tuple[str, str]) -> None:
    algo, (text, values) = RECORDS[key], ROUNDS[key]
    extra = {e.symbol: 3 for e in algo.extra}
    assert coefficient_text(algo.rounds, algo) == text
    assert [algo.rounds(Fraction(p), Fraction(1), EXACT, **extra) for p in (4, 8, 16)] == values
