"""Measured runs, reproduced from their configurations: how far the step model is from measurement.

A table of runs is a CSV file: ``#`` lines first (``# title:``, one or more ``# source:`` saying where
the numbers and the configurations come from, any ``# setup:`` or other notes), then a header and one
row per run.  The columns:

* ``label``; the transformer: ``layers``, ``hidden``, ``heads``, ``seq``, ``vocab`` (and, optionally,
  ``ffn``, the FFN width, ``kv_groups`` and ``gated``);
* the run: ``gpus``, the global ``batch`` in sequences and the ``micro_batch``; the data-parallel size
  is gpus / (tp · pp) and the micro-batches per replica batch / (dp · micro_batch), both whole;
* any setting of :class:`costmodel.step.config.StepConfig` that the command line offers on its own,
  under its name (``tp``, ``pp``, ``schedule``, ``chunks``, ``recompute``, ``sequence_parallel``,
  ``framework``, ``zero``, ``overlap_grad_reduce``, ``attention``, ``dtype``, …), read by the setting's
  own reader (an empty cell is the default); a ``gpu`` column prices its row on that GPU (a preset or a
  GPU file) instead of :func:`validate`'s, for a table of runs on several kinds of GPU;
* exactly one measured column: ``teraflops_per_gpu`` (hardware FLOPs, with recomputation, per second
  per GPU: Narayanan et al.'s equation (3)), ``iteration_s`` or ``tokens_per_s`` (the whole job's).

:func:`validate` prices each run with :func:`costmodel.step.step` on one GPU (a preset or a GPU file),
with the links that GPU describes (its NVLink inside a node, its network across nodes) and nothing set
per row beyond the columns (a row's own ``gpu`` among them), and returns each prediction beside the
measurement with the error; per table, the mean and largest absolute error and whether the predictions
rank the runs as the measurements do.

Nothing in the model is fitted to the shipped tables: the GPU's rates come from its datasheet and
public benchmarks (:mod:`costmodel.gpus`), the counts from the configurations, the schedules from the
frameworks' source code.  The shipped tables (:data:`TABLES`):

* ``narayanan2021-table1``: Narayanan et al. SC'21, Table 1, GPT models from 1.7 to 1008 billion
  parameters on 32 to 3072 A100 GPUs (Megatron-LM of early 2021, full recomputation);
* ``korthikanti2022-table5``: Korthikanti et al. 2022, Table 5, iteration times of 22B to 1T models
  with full recomputation, and with sequence parallelism and selective recomputation;
* ``narayanan2021-table2``: Narayanan et al. SC'21, Table 2, the ZeRO-3 rows (DeepSpeed, no model
  parallelism).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from costmodel._json import JSONFields
from costmodel.errors import InputError, ParseError, UnknownNameError, did_you_mean

_HERE = Path(__file__).parent
"""This package's folder (its data files beside its modules)."""

__all__ = ["MEASURES", "TABLES", "PublishedRun", "RunDetail", "RunTable", "TableResult", "Validation",
           "ValidationRow", "read_table", "run_detail", "validate"]

TABLES = ("narayanan2021-table1", "korthikanti2022-table5", "narayanan2021-table2")
"""The shipped tables, by key (``costmodel/validation/data/KEY.csv``)."""

MEASURES = {"teraflops_per_gpu": "teraFLOP/s per GPU", "iteration_s": "seconds per iteration",
            "tokens_per_s": "tokens per second"}
"""The measured columns a table may hold (one), and what each is."""

_SHAPE = ("layers", "hidden", "heads", "seq", "vocab")
_SHAPE_OPTIONAL = ("ffn", "kv_groups", "gated")
_RUN = ("label", "gpus", "batch", "micro_batch")
_DERIVED = ("dp", "microbatches", "shape")  # set from other columns
MAX_ROWS = 1000
"""The most runs a table may hold (each is a step to simulate)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedRun(JSONFields):
    """One measured run: its label, the step settings of its configuration, and the measured number;
    *line* is its line in the table's file.  *arguments* are the same settings as the text a user gives
    :func:`costmodel.step.step` or ``costmodel step`` (each setting's name and value, the shape's columns
    by their names), in the table's order."""

    label: str
    settings: dict[str, Any]
    quantity: str
    published: Fraction
    line: int
    arguments: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTable:
    """A table of runs as read: its key (a shipped table's, or the file's path), title, sources and runs."""

    key: str
    title: str
    sources: tuple[str, ...]
    quantity: str
    runs: tuple[PublishedRun, ...]
    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationRow(JSONFields):
    """A run predicted: *error* is predicted / published − 1 in the table's quantity; *gpu* the GPU it was
    priced on."""

    label: str
    published: Fraction
    predicted: Fraction
    error: Fraction
    step_s: Fraction
    gpus: int
    gpu: str
    fits: bool = True  # its busiest GPU's memory in the model within the GPU's: a run that ran did


@dataclass(frozen=True, slots=True, kw_only=True)
class TableResult(JSONFields):
    """One table's runs predicted: the mean and largest |error|, and whether the predictions rank the runs
    as the measurements do (ties in the measurements free); *misranked* names the pairs they swap."""

    table: str
    title: str
    quantity: str
    rows: tuple[ValidationRow, ...]
    mean_abs_error: Fraction
    max_abs_error: Fraction
    rank_order_right: bool
    misranked: tuple[tuple[str, str], ...]
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunDetail(JSONFields):
    """One run of a table priced (:func:`run_detail`): its row, the settings of ``costmodel step`` that
    price it (names and values as text, the table's own GPU column among them when it has one) and the
    step itself."""

    table: str
    title: str
    quantity: str
    row: ValidationRow
    arguments: tuple[tuple[str, str], ...]
    step: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Validation(JSONFields):
    """The step model against tables of measured runs on one GPU."""

    gpu: str
    tables: tuple[TableResult, ...]
    notes: tuple[str, ...] = ()


# -- reading a table ------------------------------------------------------------------------------


def read_table(table: str | Path) -> RunTable:
    """The runs of a shipped table (by key) or of a CSV file (see the module notes).

    Raises
    ------
    UnknownNameError
        For a name that is neither a shipped table nor an existing file (with a did-you-mean).
    ParseError
        For a file that breaks the format, with its line: no ``# source:``, an unknown column, no or two
        measured columns, a cell a setting refuses, sizes that do not divide.
    """
    name = str(table)
    if name in TABLES:
        text = (_HERE / "data" / f"{name}.csv").read_text(encoding="utf-8")
        return _parse(text, key=name, path=f"<table {name}>")
    if not Path(name).exists() and not name.endswith(".csv"):
        raise UnknownNameError("table", name, TABLES)
    from costmodel._files import read_text

    return _parse(read_text(name, what="table of runs"), key=name, path=name)


def _parse(text: str, *, key: str, path: str) -> RunTable:
    lines = text.splitlines()
    head = [(i, line) for i, line in enumerate(lines, 1) if line.startswith("#")]
    body = [(i, line) for i, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    title, sources, defaults = _comments(head, key=key, path=path)
    if not sources:
        raise ParseError("no '# source:' line: say where the measurements and the configurations come from",
                         path=path)
    if not body:
        raise ParseError("no header and no runs", path=path)
    if len(body) - 1 > MAX_ROWS:
        raise ParseError(f"{len(body) - 1} runs, more than {MAX_ROWS}; split the table", path=path)
    rows = list(csv.reader(text for _, text in body))
    header_line = body[0][0]
    given = [c.strip() for c in rows[0]]
    while given and not given[-1] and all(len(r) == len(given) and not r[-1].strip() for r in rows[1:]):
        given.pop()  # a spreadsheet's trailing empty column
        rows = [given, *(r[:-1] for r in rows[1:])]
    quantity, header = _check_header(given, path=path, line=header_line, defaults=tuple(defaults))
    runs = []
    labelled: dict[str, int] = {}  # each label's line
    for (line, _), cells in zip(body[1:], rows[1:], strict=True):
        if len(cells) != len(header):
            raise ParseError(f"{len(cells)} cells, the header has {len(header)}", path=path, line=line)
        row = {h: c.strip() for h, c in zip(header, cells, strict=True)}
        for name, value in defaults.items():
            row[name] = row.get(name) or value  # a row's own cell wins; an empty one takes the default
        try:
            runs.append(_run(row, quantity=quantity, line=line))
        except ParseError:
            raise
        except InputError as exc:
            raise ParseError(f"run {row.get('label') or '?'}: {exc}", path=path, line=line) from None
        first = labelled.setdefault(runs[-1].label, line)
        if first != line:
            raise ParseError(f"run {runs[-1].label} is labelled as the run at line {first}; give each "
                             "run a label of its own", path=path, line=line)
    if not runs:
        raise ParseError("a header but no runs", path=path, line=header_line)
    return RunTable(key=key, title=title, sources=tuple(sources), quantity=quantity, runs=tuple(runs),
                    path=path)


def _comments(head: Sequence[tuple[int, str]], *, key: str, path: str
              ) -> tuple[str, list[str], dict[str, str]]:
    """The table's title (else *key*), its sources and its defaults, from its ``#`` lines."""
    title, sources, defaults = key, [], {}
    for number, comment in head:
        label, _, value = comment.lstrip("# ").partition(":")
        if label.strip() == "title" and value.strip():
            title = value.strip()
        elif label.strip() == "source" and value.strip():
            sources.append(value.strip())
        elif label.strip() == "default":
            name, value = _default(value, path=path, line=number)
            if name in defaults:
                raise ParseError(f"a second '# default:' of {name}", path=path, line=number)
            defaults[name] = value
    return title, sources, defaults


def _default(text: str, *, path: str, line: int) -> tuple[str, str]:
    """A ``# default: NAME = VALUE`` line's setting and value: every run's, unless its row gives its own."""
    name, equals, value = text.partition("=")
    name = name.strip().replace("-", "_").lower()
    if not equals or not name or not value.strip():
        raise ParseError(f"'# default:{text}' is not NAME = VALUE, e.g. '# default: framework = megatron'",
                         path=path, line=line)
    if name in (*_RUN, *MEASURES):
        raise ParseError(f"'# default:' of {name}: a run's own column", path=path, line=line)
    if name not in _columns():
        near = did_you_mean(name, _columns())
        hint = f"; did you mean '{near}'?" if near else ""
        raise ParseError(f"'# default:' of {name}: not a column{hint}", path=path, line=line)
    value = value.strip()
    if name not in (*_SHAPE, *_SHAPE_OPTIONAL):  # a step setting: read here, where its line is known
        from costmodel.step.config import setting_of

        try:
            setting_of(name).read(value, name)
        except InputError as exc:
            raise ParseError(f"'# default:' of {name}: {exc}", path=path, line=line) from None
    return name, value


def _columns() -> tuple[str, ...]:
    from costmodel.step.config import settings

    own = tuple(n for n, _, s in settings() if s.own_option and n not in (*_DERIVED, *_RUN))
    return (*_RUN, *_SHAPE, *_SHAPE_OPTIONAL, *own, *MEASURES)


def _check_header(header: Sequence[str], *, path: str, line: int, defaults: Sequence[str] = ()
                  ) -> tuple[str, list[str]]:
    """The measured column and the columns' names as settings (dashes as underscores, lower case); a
    column the table's ``# default:`` lines give may be left out."""
    known = _columns()
    names = [c.replace("-", "_").lower() for c in header]
    for number, (column, name) in enumerate(zip(header, names, strict=True), 1):
        if not name:
            raise ParseError(f"column {number} has no name", path=path, line=line)
        if name not in known:
            near = did_you_mean(name, known)
            hint = f"; did you mean '{near}'?" if near else f"; the columns are {', '.join(known)}"
            raise ParseError(f"unknown column '{column}'{hint}", path=path, line=line)
    if len(set(names)) != len(names):
        twice = next(c for c in names if names.count(c) > 1)
        raise ParseError(f"column '{twice}' appears twice", path=path, line=line)
    missing = [c for c in (*_RUN, *_SHAPE) if c not in names and c not in defaults]
    if missing:
        raise ParseError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}", path=path,
                         line=line)
    measured = [c for c in names if c in MEASURES]
    if len(measured) != 1:
        raise ParseError(f"{'no' if not measured else 'more than one'} measured column; give exactly one of "
                         f"{', '.join(MEASURES)}", path=path, line=line)
    return measured[0], names


def _whole(row: dict[str, str], column: str) -> int:
    text = row[column]
    if not text.isdigit() or int(text) < 1:
        raise InputError(f"{column}={text or '(empty)'} is not a whole number ≥ 1")
    return int(text)


def _run(row: dict[str, str], *, quantity: str, line: int) -> PublishedRun:
    from costmodel.exact import parse_number
    from costmodel.step.flops import TransformerShape

    label = row["label"] or f"line {line}"
    dims = {c: _whole(row, c) for c in (*_SHAPE, "gpus", "batch", "micro_batch")}
    extra: dict[str, Any] = {}
    if row.get("ffn"):
        extra["ffn_factor"] = Fraction(_whole(row, "ffn"), dims["hidden"])
    if row.get("kv_groups"):
        extra["kv_groups"] = _whole(row, "kv_groups")
    if row.get("gated"):
        extra["gated"] = row["gated"].lower() in ("1", "true", "yes", "on")
    shape = TransformerShape(layers=dims["layers"], hidden=dims["hidden"], heads=dims["heads"],
                             sequence=dims["seq"], vocabulary=dims["vocab"], **extra)
    own = set(_columns()) - set(_RUN) - set(_SHAPE) - set(_SHAPE_OPTIONAL) - set(MEASURES)
    given = {c: v for c, v in row.items() if c in own and v}
    tp, pp = (int(given.get(k, "1")) if given.get(k, "1").isdigit() else 0 for k in ("tp", "pp"))
    if tp < 1 or pp < 1:
        raise InputError(f"tp={given.get('tp')} and pp={given.get('pp')} must be whole numbers ≥ 1")
    gpus, batch, mbs = dims["gpus"], dims["batch"], dims["micro_batch"]
    if gpus % (tp * pp):
        raise InputError(f"gpus={gpus} is not a multiple of tp·pp = {tp * pp}")
    dp = gpus // (tp * pp)
    if batch % (dp * mbs):
        raise InputError(f"batch={batch} is not a multiple of dp·micro_batch = {dp}·{mbs}")
    published = parse_number(row[quantity], what=quantity) if row[quantity] else None
    if published is None or published <= 0:
        raise InputError(f"{quantity}={row[quantity] or '(empty)'} is not a positive number")
    settings = {**given, "shape": shape, "dp": dp, "micro_batch": mbs, "microbatches": batch // (dp * mbs)}
    from costmodel.step.config import StepConfig

    StepConfig.of(**settings)  # each cell read (and refused) by its setting's reader, here, with the line
    arguments = [(c, str(dims[c])) for c in _SHAPE]
    if "ffn_factor" in extra:
        arguments.append(("ffn", str(extra["ffn_factor"])))  # the width over h, as the option takes it
    if row.get("kv_groups"):
        arguments.append(("kv_groups", row["kv_groups"]))
    if extra.get("gated"):
        arguments.append(("gated", row["gated"]))  # a switch: recorded only when on
    arguments += [("dp", str(dp)), ("micro_batch", str(mbs)), ("microbatches", str(batch // (dp * mbs)))]
    arguments += list(given.items())
    return PublishedRun(label=label, settings=settings, quantity=quantity, published=Fraction(published),
                        line=line, arguments=tuple(arguments))


# -- validating -----------------------------------------------------------------------------------


def validate(tables: Iterable[str | Path] | None = None, *, gpu: Any = "a100-80gb") -> Validation:
    """Every run of *tables* (shipped keys or CSV files; default the shipped ones) priced on *gpu*, beside
    its measured number.

    Each run is priced with ``allow_oom``: a published run did fit, and a model that says it does not is
    worth seeing in the error, not a refusal.

    Examples
    --------
    >>> v = validate(["korthikanti2022-table5"])
    >>> [t.table for t in v.tables], len(v.tables[0].rows)
    (['korthikanti2022-table5'], 8)
    """
    from costmodel.gpus import GPU, load_gpu

    device = gpu if isinstance(gpu, GPU) else load_gpu(gpu)
    out = [_priced(read_table(t), device) for t in (TABLES if tables is None else tables)]
    if not out:
        raise InputError("no table to validate; name a shipped table or give a CSV file")
    return Validation(gpu=device.name, tables=tuple(out))


def _price(run: PublishedRun, table: RunTable, gpu: Any) -> tuple[Any, ValidationRow]:
    """*run*'s step (priced with ``allow_oom``: see :func:`validate`) and its row."""
    from costmodel.step import step

    try:
        r = step(**{"gpu": gpu, "allow_oom": True, **run.settings})
    except InputError as exc:  # what only pricing checks (tp dividing the heads, the stages...)
        raise ParseError(f"run {run.label}: {exc}", path=table.path, line=run.line) from None
    predicted = _quantity(run.quantity, r, run.settings)
    return r, ValidationRow(label=run.label, published=run.published, predicted=predicted,
                            error=predicted / run.published - 1, step_s=r.step_s, gpus=r.gpus,
                            gpu=r.gpu or gpu.name, fits=r.fits)


def _priced(table: RunTable, gpu: Any) -> TableResult:
    rows = [_price(run, table, gpu)[1] for run in table.runs]
    errors = [abs(x.error) for x in rows]
    swapped = _misranked(rows)
    return TableResult(table=table.key, title=table.title, quantity=table.quantity, rows=tuple(rows),
                       mean_abs_error=sum(errors, Fraction(0)) / len(errors), max_abs_error=max(errors),
                       rank_order_right=not swapped, misranked=swapped, sources=table.sources)


def run_detail(label: str, tables: Iterable[str | Path] | None = None, *,
               gpu: Any = "a100-80gb") -> RunDetail:
    """The run labelled *label* in *tables* (shipped keys or CSV files; default the shipped ones) priced on
    *gpu*: its row, the settings it was priced with, and the whole step, for seeing where a prediction's
    time goes.

    Raises
    ------
    UnknownNameError
        For a label no table has (with a did-you-mean over the labels).
    InputError
        For a label two of the tables have: name the table.

    Examples
    --------
    >>> d = run_detail("22B full", ["korthikanti2022-table5"])
    >>> d.table, d.row.label, d.step.tp, dict(d.arguments)["recompute"]
    ('korthikanti2022-table5', '22B full', 8, 'full')
    """
    from costmodel.gpus import GPU, load_gpu

    read = [read_table(t) for t in (TABLES if tables is None else tables)]
    found = [(t, run) for t in read for run in t.runs if run.label == label]
    if not found:
        raise UnknownNameError("run", label, [run.label for t in read for run in t.runs])
    if len(found) > 1:
        where = " and ".join(dict.fromkeys(t.key for t, _ in found))
        raise InputError(f"run {label!r} is in {where}; name the table it is from")
    (table, run), = found
    device = gpu if isinstance(gpu, GPU) else load_gpu(gpu)
    step, row = _price(run, table, device)
    return RunDetail(table=table.key, title=table.title, quantity=table.quantity, row=row,
                     arguments=run.arguments, step=step)


def _quantity(quantity: str, r: Any, settings: dict[str, Any]) -> Fraction:
    """The step's value of the measured *quantity*."""
    if quantity == "iteration_s":
        return Fraction(r.step_s)
    if quantity == "tokens_per_s":
        shape = settings["shape"]
        tokens = r.dp * r.microbatches * settings["micro_batch"] * shape.sequence
        return Fraction(tokens) / r.step_s
    return Fraction(r.hardware_flops) / (r.step_s * r.gpus) / 10**12


def _misranked(rows: Sequence[ValidationRow]) -> tuple[tuple[str, str], ...]:
    """The pairs of runs the predictions order against the measurements (ties in the measurements free)."""
    return tuple((a.label, b.label) for i, a in enumerate(rows) for b in rows[i + 1:]
                 if (a.published - b.published) * (a.predicted - b.predicted) < 0)
