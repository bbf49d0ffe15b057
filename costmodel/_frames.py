"""Results as pandas DataFrames: one row per point, the units in the column names.

A result's ``to_frame()`` builds its frame with :func:`frame` from the rows its ``to_dict`` writes
(so the columns are the JSON keys, ``time_s``, ``n_bytes``, ``from_bytes``, and exact values become
floats as they do in JSON), and keeps what holds for every row (the collective, p, the link) in
``df.attrs``.  pandas is imported only here, inside :func:`frame`, so that results and
``import costmodel`` load no pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["frame"]


def _cell(value: Any) -> Any:
    """A JSON-native value as one cell: a list becomes its items joined by ", " (``tied``, ``notes``)."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return value


def frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], *,
          attrs: Mapping[str, Any] | None = None) -> Any:
    """A ``pandas.DataFrame`` of *rows* (mappings, e.g. ``to_dict()``), one row each, with *columns* in
    that order (a key a row lacks is ``None``); *attrs* become ``df.attrs``.

    >>> df = frame([{"algorithm": "ring", "time_s": 0.5, "tied": ["rd", "rab"]}], ["algorithm", "time_s",
    ...            "tied"], attrs={"p": 4})
    >>> df.to_dict("records"), df.attrs
    ([{'algorithm': 'ring', 'time_s': 0.5, 'tied': 'rd, rab'}], {'p': 4})
    """
    import pandas as pd

    data = pd.DataFrame([[_cell(row.get(c)) for c in columns] for row in rows], columns=list(columns))
    data.attrs = dict(attrs or {})
    return data
