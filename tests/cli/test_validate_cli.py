"""The command-line contract of ``costmodel validate``: JSON equal to the library's, the text at 80 columns,
one error line for a bad table."""

from __future__ import annotations

import json
import shlex

import pytest

from costmodel.cli.output import _json
from costmodel.cli.validate import step_argv
from costmodel.validation import TABLES, read_table, validate


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
    out, _ = cli.text("validate", str(path), columns=200)
    assert out.count(str(path)) == 2  # a table without a title is named by its path, once, and in the summary


def test_rows_on_their_own_gpu_show_it(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    path = tmp_path / "runs.csv"
    path.write_text("# source: two clusters\nlabel,layers,hidden,heads,seq,vocab,tp,gpus,batch,micro_batch,gpu,"
                    "tokens_per_s\nours,8,1024,16,2048,32000,2,16,64,2,h100-sxm,250000\n"
                    "theirs,8,1024,16,2048,32000,2,16,64,2,,150000\n", encoding="utf-8")
    out, _ = cli("validate", str(path))
    lines = out.splitlines()
    assert "on h100-sxm or a100-80gb, nothing fitted" in " ".join(lines[:2])  # the GPUs the rows were priced on
    assert "costmodel gpus h100-sxm; costmodel gpus a100-80gb" in " ".join(out.split())
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


# -- one run: --run LABEL ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", TABLES)
def test_each_runs_command_prices_the_step_validate_priced(cli, key):
    """The command `validate --run` prints for a run, given to `costmodel step`, prices the same step as
    validate: the command line and the library read a run's settings alike, on every shipped run."""
    rows = {r.label: r for r in validate([key]).tables[0].rows}
    for run in read_table(key).runs:
        argv = step_argv(run.arguments, gpu="a100-80gb")
        assert argv[:2] == ["costmodel", "step"] and argv[-1] == "--allow-oom"
        step = cli.json(*argv[1:])
        assert step["step_s"] == float(rows[run.label].step_s), run.label


def test_run_shows_the_command_and_the_step_at_80_columns(cli):
    out, err = cli.text("validate", "narayanan2021-table1", "--run", "39.1B", columns=80)
    assert not err and "…" not in out and max(map(len, out.splitlines())) <= 80
    lines = out.splitlines()
    assert lines[0] == "validate · run 39.1B of narayanan2021-table1 on a100-80gb"
    assert "published 138, predicted" in out and "teraFLOP/s per GPU: error -" in out
    times, _ = cli.text("validate", "--run", "1T full", columns=80)
    assert "published 94.42 s, predicted 97.92 s per iteration: error +3.71%" in times
    start = next(i for i, line in enumerate(lines) if line.startswith("$ costmodel step "))
    end = next(i for i in range(start, len(lines)) if not lines[i].endswith("\\"))
    command = _shell("\n".join(lines[start:end + 1]))
    assert shlex.split(command) == step_argv(read_table("narayanan2021-table1").runs[4].arguments,
                                             gpu="a100-80gb")
    assert any(line.startswith("pipeline bubble ") for line in lines[end:])  # the step's breakdown follows


def _shell(text: str) -> str:
    """A command as a shell reads its lines: each backslash before a line's end removed with the end."""
    return text.replace("\\\n", "").removeprefix("$ ")


def test_a_value_longer_than_a_line_is_cut_after_a_comma_and_joined_by_the_shell(cli, tmp_path):
    """A pipeline of 72 stages: --stage-layers takes 143 characters, cut after commas at 80 columns and
    continued at the next line's start, so that a shell joins the pieces into the one value."""
    layout = "0," + "1," * 70 + "0"
    path = tmp_path / "runs.csv"
    path.write_text("# source: x\nlabel,layers,hidden,heads,seq,vocab,gpus,batch,micro_batch,pp,stage_layers,"
                    f"iteration_s\ndeep,70,1024,16,2048,32000,72,72,1,72,\"{layout}\",9\n", encoding="utf-8")
    out, err = cli.text("validate", str(path), "--run", "deep", columns=80)
    lines = out.splitlines()
    assert not err and max(map(len, lines)) <= 80
    start = next(i for i, line in enumerate(lines) if line.startswith("$ costmodel step "))
    end = next(i for i in range(start, len(lines)) if not lines[i].endswith("\\"))
    argv = shlex.split(_shell("\n".join(lines[start:end + 1])))
    assert argv[argv.index("--stage-layers") + 1] == layout
    assert cli.json(*argv[1:])["step_s"] == cli.json("validate", str(path), "--run", "deep")["row"]["step_s"]


def test_run_json_and_a_table_of_ones_own(cli, tmp_path, monkeypatch):
    path = tmp_path / "runs.csv"
    path.write_text("# source: our cluster\nlabel,layers,hidden,heads,seq,vocab,ffn,kv_groups,gated,tp,gpus,"
                    "batch,micro_batch,gpu,framework,overlap_grad_reduce,sequence_parallel,tokens_per_s\n"
                    "mine,8,1024,16,2048,32000,2816,4,yes,2,16,64,2,h100-sxm,ddp,no,yes,250000\n",
                    encoding="utf-8")
    data = cli.json("validate", str(path), "--run", "mine")
    assert set(data) == {"table", "title", "quantity", "row", "arguments", "command", "step"}
    assert data["row"]["gpu"] == "h100-sxm" and data["arguments"]["ffn"] == "11/4"
    argv = shlex.split(data["command"])
    for flag in ("--gated", "--no-overlap-grad-reduce", "--sequence-parallel"):
        assert flag in argv
    assert argv[argv.index("--ffn") + 1] == "11/4" and argv[argv.index("--gpu") + 1] == "h100-sxm"
    assert cli.json(*argv[1:])["step_s"] == data["step"]["step_s"] == data["row"]["step_s"]
    monkeypatch.chdir(tmp_path)
    out, _ = cli.text("validate", "runs.csv", "--run", "mine", columns=80)
    assert out.splitlines()[:2] == ["validate · run mine of runs.csv on h100-sxm",  # no title: the path once
                                    out.splitlines()[1]] and out.splitlines()[1].startswith("published 250000,")


def test_run_errors_are_one_line(cli, tmp_path):
    one, two = tmp_path / "a.csv", tmp_path / "b.csv"
    for path in (one, two):
        path.write_text("# source: x\nlabel,layers,hidden,heads,seq,vocab,gpus,batch,micro_batch,tokens_per_s\n"
                        "same,2,256,4,512,1000,2,4,1,1000\n", encoding="utf-8")
    for argv, needle in ((["validate", "--run", "39.1 B"], "unknown run '39.1 B'; did you mean '39.1B'?"),
                         (["validate", "korthikanti2022-table5", "--run", "1.7B"], "unknown run '1.7B'"),
                         (["validate", str(one), str(two), "--run", "same"], "name the table it is from")):
        out, err = cli(*argv, rc=2)
        assert not out and len(err.strip().splitlines()) == 1 and needle in err, err


def test_a_label_given_twice_and_a_table_of_one_run(cli, tmp_path):
    head = "# source: runs of our own\nlabel,layers,hidden,heads,seq,vocab,gpus,batch,micro_batch,iteration_s\n"
    row = "a,2,256,4,128,1000,8,16,1,{t}\n"
    twice = tmp_path / "twice.csv"
    twice.write_text(head + row.format(t=1) + row.format(t=2), encoding="utf-8")
    _, err = cli("validate", str(twice), rc=2)
    assert err.strip().endswith(":4: run a is labelled as the run at line 3; give each run a label of its own")
    one = tmp_path / "one.csv"
    one.write_text(head + row.format(t=1), encoding="utf-8")
    out, _ = cli.text("validate", str(one), columns=100)
    assert "rank order — (one run)" in out

