"""Result records of the cost model: what ``cost`` and ``bound`` return.

Values are exact (:class:`~fractions.Fraction`) and in SI base units;
``to_dict`` gives JSON-native values whose keys carry the unit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from costmodel._frames import frame
from costmodel._json import JSONFields, real, to_json_dict
from costmodel.params import Link, LinkParams
from costmodel.references import Cited

__all__ = ["AlgorithmCost", "Catalog", "CatalogEntry", "CostTable", "LowerBound", "PricedMessage",
           "times_slower"]


def times_slower(time_s: Fraction, fastest_s: Fraction) -> Fraction | None:
    """*time_s* over *fastest_s*, or None when the fastest takes no time."""
    return None if fastest_s == 0 else time_s / fastest_s


@dataclass(frozen=True, slots=True, kw_only=True)
class LowerBound:
    """A lower bound on a collective's time, each term bounded on its own (Chan et al. 2007)."""

    collective: str
    p: int
    n_bytes: Fraction
    link: LinkParams
    latency_s: Fraction
    bandwidth_s: Fraction
    compute_s: Fraction
    formula: str
    meaning_of_n: str
    source: Cited
    notes: tuple[str, ...] = ()

    @property
    def time_s(self) -> Fraction:
        return self.latency_s + self.bandwidth_s + self.compute_s

    def to_dict(self) -> dict[str, object]:
        return {**to_json_dict(self, ("collective", "p", "n_bytes", "meaning_of_n")),
                **self.link.result_fields(),
                **to_json_dict(self, ("time_s", "latency_s", "bandwidth_s", "compute_s", "formula", "source",
                                      "notes"))}


@dataclass(frozen=True, slots=True, kw_only=True)
class PricedMessage(JSONFields):
    """``count`` rounds of one message of ``message_bytes`` on a piecewise link, priced by ``segment``
    (from 1): by its line at ``padded_bytes`` when that later segment's first size costs less than the
    message on its own segment (``None``: at its own size)."""

    count: Fraction
    message_bytes: Fraction
    reduce: bool
    segment: int
    padded_bytes: Fraction | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AlgorithmCost:
    """Modelled time of one algorithm at one point (p, n, link); seconds and bytes."""

    algorithm: str
    latency_s: Fraction
    bandwidth_s: Fraction
    compute_s: Fraction
    rounds: int
    bytes_sent_per_rank: Fraction
    formula: str
    bound_s: Fraction
    parameters: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    chunks: int | None = None
    chunk_bytes: Fraction | None = None
    messages: tuple[PricedMessage, ...] = ()
    """On a piecewise link: every message on the critical path and the segment that priced it."""

    @property
    def time_s(self) -> Fraction:
        return self.latency_s + self.bandwidth_s + self.compute_s

    @property
    def bound_ratio(self) -> Fraction | None:
        """time / lower bound (≥ 1), or ``None`` when the bound is 0."""
        return None if self.bound_s == 0 else self.time_s / self.bound_s

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
                                   "bytes_sent_per_rank", "bound_ratio", "parameters", "chunks",
                                   "chunk_bytes", "formula", "messages", "notes"))


@dataclass(frozen=True, slots=True, kw_only=True)
class CostTable:
    """The costs of several algorithms of one collective at one point, fastest first."""

    collective: str
    p: int
    n_bytes: Fraction
    link: Link
    meaning_of_n: str
    results: tuple[AlgorithmCost, ...]
    bound: LowerBound
    notes: tuple[str, ...] = ()
    whole_bytes: bool = False

    @property
    def best(self) -> str:
        return self.results[0].algorithm

    def vs_best(self, result: AlgorithmCost) -> Fraction | None:
        """How many times slower than the fastest *result* is (None when the fastest takes no time)."""
        return times_slower(result.time_s, self.results[0].time_s)

    def _rows(self) -> list[dict[str, object]]:
        """Each result's ``to_dict()`` with its ``vs_best``."""
        ratios = [self.vs_best(r) for r in self.results]
        return [{**r.to_dict(), "vs_best": None if x is None else real(x)}
                for r, x in zip(self.results, ratios, strict=True)]

    def to_dict(self) -> dict[str, object]:
        return {
            "collective": self.collective,
            "p": self.p,
            "n_bytes": real(self.n_bytes),
            "meaning_of_n": self.meaning_of_n,
            **self.link.result_fields(),
            "results": self._rows(),
            "best": self.best,
            "bound": self.bound.to_dict(),
            "whole_bytes": self.whole_bytes,
            "notes": list(self.notes),
        }

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame``, one row per algorithm, fastest first: the columns of ``to_dict()``'s
        ``results`` (``time_s``, ``latency_s``, ..., ``vs_best``); ``df.attrs`` hold ``collective``,
        ``p``, ``n_bytes``, ``meaning_of_n`` and the link (``alpha_s``, ...)."""
        data = self.to_dict()
        attrs = {k: v for k, v in data.items() if k not in ("results", "bound", "notes", "best")}
        return frame(self._rows(), _COST_COLUMNS, attrs={**attrs, "best": self.best})


_COST_COLUMNS = ("algorithm", "time_s", "latency_s", "bandwidth_s", "compute_s", "rounds",
                 "bytes_sent_per_rank", "bound_ratio", "vs_best", "formula")


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogEntry(JSONFields):
    """One registered algorithm, as listed by ``costmodel algorithms``."""

    collective: str
    algorithm: str
    aliases: tuple[str, ...]
    summary: str
    formula: str
    rounds: str
    bytes_sent: str
    constraints: tuple[str, ...]
    adapts: str | None
    source: Cited
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Catalog:
    """The registered collectives and algorithms, with what n means for each."""

    meanings: dict[str, str]
    bounds: dict[str, str]
    entries: tuple[CatalogEntry, ...]
    hierarchical: tuple[Any, ...] = ()
    """The hierarchical all-reduces' :class:`~costmodel.collectives.hierarchical_formula.HierarchicalFormula`
    (asked for with ``catalog(hierarchical=True)``: they need sympy)."""

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, rename={"meanings": "meaning_of_n", "bounds": "lower_bounds",
                                          "entries": "algorithms"})
