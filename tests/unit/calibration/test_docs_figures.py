"""The per-log figures in docs/calibration.md are what the fit gives today."""

from __future__ import annotations

import re
from pathlib import Path

from costmodel.calibration import fit, read_log
from costmodel.units import format_inverse_rate, format_size, format_time

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "data" / "logs"
RANKS = {"osu_allreduce_archer2_2node_256rank_slingshot.txt": 256, "osu_allreduce_kind_2pod_2rank_tcp.txt": 2}


def _size(n: float) -> str:
    return format_size(n).split(" = ")[0]


def rows() -> list[str]:
    out = []
    for log in sorted(LOGS.rglob("*.txt")):
        p = RANKS.get(log.name)
        f = fit(read_log(log, p=p), p=p)
        segments = " · ".join(f"{_size(s.from_bytes)}–{_size(s.to_bytes)}" for s in f.segments)
        late = "–" if f.median_rel_error_ge_1mib is None else f"{f.median_rel_error_ge_1mib:.2%}"
        out.append(f"| `{log.parent.name}/{log.name}` | {f.collective} | {f.p} | {segments} | "
                   f"{format_time(f.alpha_s)} | {format_inverse_rate(f.beta_s_per_byte)} | "
                   f"{f.median_rel_error:.2%} | {late} |")
    return out


def test_the_table_in_the_docs_is_current():
    page = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- fits:.*?-->\n(.*?)<!-- /fits -->", page, re.DOTALL)
    assert block, "docs/calibration.md lost its <!-- fits --> block"
    documented = [line for line in block.group(1).splitlines() if line.startswith("| `")]
    assert documented == rows()


def test_the_profile_in_the_docs_is_the_fit_of_today():
    log = LOGS / "nccl-tests" / "allreduce_h100x16_2node_tcpxo_gcp_a3mega.txt"
    page = ROOT / "docs" / "examples" / "a3mega.toml"
    assert page.read_text(encoding="utf-8") == fit(read_log(log)).to_profile_toml(name="a3mega"), (
        "regenerate: costmodel calibrate fit " + str(log.relative_to(ROOT)) + " --out docs/examples/a3mega.toml --force")
