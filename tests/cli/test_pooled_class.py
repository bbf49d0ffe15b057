"""The whole pooled-class run of benchmarks/bench_assignment.py: 60 students, 3 pools, a deadline, two late
submissions, one override, Canvas and Moodle exports, in under 20 s (its asserts check each part)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent.parent / "benchmarks" / "bench_assignment.py"


def test_a_pooled_class_with_a_deadline_is_graded_and_exported_in_time(capsys):
    spec = importlib.util.spec_from_file_location("bench_assignment", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.pooled(60) < bench.POOLED_TARGET_S
    assert "60 students, 3 pooled groups" in capsys.readouterr().out
