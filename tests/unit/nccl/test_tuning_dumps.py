"""The tuning model against NCCL's own printed TUNING tables (skipped until the model is merged)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.unit.nccl.tuning_dumps import DUMPS


def test_the_dumps_hold_the_printed_cells():
    """Pinned: the first dump's complete rows (Broadcast .. ReduceScatter) and the cut AllReduce row."""
    table = DUMPS[0]["table"]
    assert table[("Broadcast", "Ring", "Simple")] == "22.4/  20.0"
    assert table[("AllGather", "CollNetDirect", "Simple")] == "44.0/   0.0"
    assert table[("AllReduce", "Ring", "LL")] == "43.4/   2.7"
    assert ("AllReduce", "Ring", "LL128") not in table
    assert len(table) == 4 * 9 + 4 and DUMPS[0]["truncated"]
    assert DUMPS[1]["table"][("AllGather", "Ring", "Simple")] == "105.6/   3.2"


@pytest.mark.skipif(importlib.util.find_spec("costmodel.nccl.tuning") is None,
                    reason="tuning model not merged yet")
@pytest.mark.parametrize("dump", DUMPS, ids=[d["log"] for d in DUMPS])
def test_the_model_prints_what_nccl_printed(dump):
    if dump["preset"] is None:
        pytest.skip(f"{dump['log']}: {dump['missing']}")
    from costmodel.nccl import CONSTANTS, System, tuning

    system = System.from_preset(dump["preset"], ranks=dump["ranks"], nodes=dump["nodes"])
    model = tuning.tune(system, CONSTANTS[dump["version"]])
    for (function, algorithm, protocol), printed in dump["table"].items():
        lat, bw = model.latency_bandwidth(function, algorithm, protocol)
        assert f"{float(lat):8.1f}/{float(bw):6.1f}".strip() == printed, (function, algorithm, protocol)
