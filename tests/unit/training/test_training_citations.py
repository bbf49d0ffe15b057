"""Every citation the training modules use is registered once, and cited by some result."""

from __future__ import annotations

from typing import Any

from costmodel.references import CITATIONS
from costmodel.training import (
    compress,
    compression,
    counts,
    error_feedback,
    fedavg,
    federated,
    loss,
    memory,
    moe_traffic,
    ps_traffic,
    staleness,
    tensor_parallel_traffic,
    traffic,
    training_memory,
    weighted_gradient,
    weighted_loss,
)

MODULES = (counts, loss, federated, memory, traffic, compression)


def _keys(data: Any) -> set[str]:
    """Every citation key inside a to_dict() tree."""
    found: set[str] = set()
    if isinstance(data, dict):
        if {"key", "reference", "locator"} <= set(data):
            found.add(data["key"])
        for value in data.values():
            found |= _keys(value)
    elif isinstance(data, list):
        for value in data:
            found |= _keys(value)
    return found


def test_citation_keys_are_unique_and_registered():
    defined = [c for m in MODULES for c in m.CITED]
    keys = [c.key for c in defined]
    assert len(keys) == len(set(keys))
    assert set(keys) <= set(CITATIONS)
    assert all(CITATIONS[c.key] is c for c in defined)


def test_every_defined_citation_is_cited():
    results = [
        weighted_loss(sizes="1,2", losses="1,2"),
        weighted_gradient(gradients="1;2", batches="1,1"),
        fedavg("1;2", sizes="1,2"),
        training_memory("1B", dp=2, zero=1, seq=8, batch=1, hidden=8, heads=2),
        ps_traffic("1MB", workers=2),
        tensor_parallel_traffic(batch=1, seq=1, hidden=1, tp=2),
        moe_traffic(tokens=1, hidden=1, experts=2),
        staleness(workers=2, bound=1),
        compress(100, method="topk", density="0.1"),
        compress(100, method="onebit"),
        error_feedback("1,-1"),
    ]
    cited = set().union(*(_keys(r.to_dict()) for r in results))
    defined = {c.key for m in MODULES for c in m.CITED}
    assert defined <= cited, defined - cited
    assert cited - defined <= set(CITATIONS)  # the rest are the shared seed citations
