"""The house table at scale: a row of plain cells is written as it is, not measured and wrapped cell by
cell by rich, and prints exactly what the rich path prints (a 10⁵-row nccl compare rendered for 50 s)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from costmodel.cli.layout import table


def _table(rows: list[tuple[str, ...]], *, as_text: bool):
    out = table("size", "measured", "note", "choice", numeric=("size", "measured"), no_wrap=("choice",),
                optional=("choice",), centred=("note",))
    for row in rows:
        out.add_row(*(Text(c) if as_text else c for c in row))
    return out


def _printed(t, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    console.print(t)
    return console.file.getvalue()


ROWS = [(f"{2**k} B", f"{k * 1.5:.4g} µs", "ok" if k % 3 else "a note that wraps at spaces when narrow",
         "Ring/LL128") for k in range(40)] + [("1 GiB", "", "tab\there", "Tree/Simple"), ("×", "−1", "", "")]


@pytest.mark.parametrize("width", [20, 40, 50, 80, 200])
def test_plain_cells_print_as_rich_texts_do(width):
    """Justified, wrapped (the prose column), a column left out, stacked: the same bytes either way."""
    assert _printed(_table(ROWS, as_text=False), width) == _printed(_table(ROWS, as_text=True), width)


def test_a_long_table_of_plain_cells_is_not_measured_cell_by_cell(monkeypatch):
    from rich.measure import Measurement

    calls = 0
    measure = Measurement.get

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return measure(*args, **kwargs)

    monkeypatch.setattr(Measurement, "get", counted)
    rows = [(f"{k} B", f"{k}.5 µs", "ok", "Ring/LL") for k in range(5000)]
    printed = _printed(_table(rows, as_text=False), 80)
    assert printed.count("\n") == 5001 and calls <= 4  # the headers
