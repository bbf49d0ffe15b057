"""The command-line contract of ``costmodel validate``: JSON equal to the library's, the text at 80 columns,
one error line for a bad table."""

from __future__ import annotations

import json

from costmodel.cli.output import _json
from costmodel.validation import validate


def test_json_equals_the_library(cli):
    data = cli.json("validate", "korthikanti2022-table5")
    assert data == json.loads(_json(validate(["korthikanti2022-table5"])))
    assert data["gpu"] == "a100-80gb" and [t["table"] for t in data["tables"]] == ["korthikanti2022-table5"]
    assert set(data["tables"][0]) == {"table", "title", "quantity", "rows", "mean_abs_error", "max_abs_error",
                                      "rank_order_right", "misranked", "sources"}


def test_text_at_80_columns_ends_with_the_summary(cli):
    out, err = cli.text("validate", columns=80)
    assert not err and "…" not in out
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    summary = lines.index(next(x for x in lines if x.startswith("table ")))
    assert [x.split()[0] for x in lines[summary + 1:summary + 4]] == ["narayanan2021-table1",
                                                                      "korthikanti2022-table5",
                                                                      "narayanan2021-table2"]
    for label in ("1.7B", "1008.0B", "22B full", "1T selective+SP", "174.6B on 384", "529.6B on 2240"):
        assert any(x.startswith(label + " ") for x in lines), label
    assert "rank order" in out and "nothing fitted" in out


def test_a_table_of_ones_own_and_another_gpu(cli, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("# source: our cluster\nlabel,layers,hidden,heads,seq,vocab,tp,gpus,batch,micro_batch,"
                    "tokens_per_s\nmine,8,1024,16,2048,32000,2,16,64,2,250000\n", encoding="utf-8")
    data = cli.json("validate", str(path), "--gpu", "h100-sxm")
    assert data["gpu"] == "h100-sxm" and data["tables"][0]["rows"][0]["label"] == "mine"
    assert data["tables"][0]["quantity"] == "tokens_per_s"


def test_rows_on_their_own_gpu_show_it(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path = tmp_path / "runs.csv"
    path.write_text("# source: two clusters\nlabel,layers,hidden,heads,seq,vocab,tp,gpus,batch,micro_batch,gpu,"
                    "tokens_per_s\nours,8,1024,16,2048,32000,2,16,64,2,h100-sxm,250000\n"
                    "theirs,8,1024,16,2048,32000,2,16,64,2,,150000\n", encoding="utf-8")
    out, _ = cli("validate", str(path))
    lines = out.splitlines()
    assert "on a100-80gb or the GPU its row names" in " ".join(lines[:2])
    head = next(i for i, line in enumerate(lines) if line.startswith("run "))
    assert lines[head].split()[:2] == ["run", "GPU"]
    assert [lines[head + k].split()[:2] for k in (1, 2)] == [["ours", "h100-sxm"], ["theirs", "a100-80gb"]]
    data = cli.json("validate", str(path))
    assert [r["gpu"] for r in data["tables"][0]["rows"]] == ["h100-sxm", "a100-80gb"]


def test_bad_tables_are_one_error_line(cli, tmp_path):
    for argv, needle in ((["validate", "narayanan2021-tabel1"], "unknown table 'narayanan2021-tabel1'; did you mean"),
                         (["validate", str(tmp_path / "none.csv")], "none.csv"),
                         (["validate", "--gpu", "a100"], "GPU")):
        out, err = cli(*argv, rc=2)
        assert not out and len(err.strip().splitlines()) == 1 and err.startswith("error: ") and needle in err, err
