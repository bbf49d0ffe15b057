"""Human-readable renderings of the core's results (rich tables, units in headers).

``render(result)`` returns ``(renderable, notes)``; :func:`~costmodel.cli.output.emit`
prints the renderable on stdout and the notes on stderr.  Nothing here
computes: every number shown is a field of the result.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from costmodel.collectives.formula import Formula
from costmodel.collectives.result import Catalog, CostTable, LowerBound
from costmodel.crossovers import BestRanges, Crossover, CrossoverInP
from costmodel.params import LinkParams
from costmodel.profiles import ProfileList
from costmodel.units import format_inverse_rate, format_number, format_rate, format_size, format_time

__all__ = ["render"]

Rendered = tuple[Any, tuple[str, ...]]


def _table(*columns: str, numeric: tuple[str, ...] = ()) -> Table:
    table = Table(header_style="bold", box=None, pad_edge=False, show_edge=False, collapse_padding=True)
    for column in columns:
        right = column in numeric
        table.add_column(column, justify="right" if right else "left", no_wrap=right or column == columns[0])
    return table


def _size(n_bytes: Any) -> str:
    """The decimal form only, for table cells."""
    return format_size(n_bytes).split(" = ")[0]


def _link(link: LinkParams) -> str:
    rate = link.bandwidth_bytes_per_s
    bandwidth = "∞" if rate is None else format_rate(rate)
    parts = [f"α = {format_time(link.alpha_s)}",
             f"β = {format_inverse_rate(link.beta_s_per_byte)} = {bandwidth}"]
    if link.gamma_s_per_byte:
        parts.append(f"γ = {format_inverse_rate(link.gamma_s_per_byte)}")
    return " · ".join(parts) + f"   [dim]({escape(link.source)})[/dim]"


def _heading(collective: str, detail: str, meaning: str) -> Text:
    return Text.from_markup(f"[bold]{collective}[/bold] · {detail}\n[dim]{escape(meaning)}[/dim]")


@singledispatch
def render(result: Any) -> Rendered:
    """Render a core result; one implementation per result type."""
    raise TypeError(f"no rendering for {type(result).__name__}")


@render.register
def _(table: CostTable) -> Rendered:
    gamma = bool(table.link.gamma_s_per_byte)
    numbers = ("time", "× best", "α part", "β part", "γ part", "rounds", "sent/rank", "× bound")
    columns = [c for c in ("algorithm", *numbers) if gamma or c != "γ part"]
    out = _table(*columns, numeric=numbers)
    for r in table.results:
        ratio = r.bound_ratio
        best = table.vs_best(r)
        out.add_row(
            r.algorithm, format_time(r.time_s), "–" if best is None else format_number(best, digits=3),
            format_time(r.latency_s), format_time(r.bandwidth_s),
            *([format_time(r.compute_s)] if gamma else []),
            str(r.rounds), _size(r.bytes_sent_per_rank),
            "–" if ratio is None else format_number(ratio, digits=3),
        )
    formulas = _table("algorithm", "T(p, n)")
    for r in table.results:
        formulas.add_row(r.algorithm, escape(r.formula))
    head = _heading(table.collective, f"p = {table.p} · n = {format_size(table.n_bytes)}", table.meaning_of_n)
    bound = Text.from_markup(
        f"lower bound {format_time(table.bound.time_s)} = {escape(table.bound.formula)}   "
        f"[dim](Chan et al. 2007)[/dim]\nbest: [bold]{table.best}[/bold]"
    )
    notes = table.notes + tuple(n for r in table.results for n in r.notes)
    return Group(head, Text.from_markup(_link(table.link)), Text(""), out, Text(""), bound, Text(""),
                 formulas), notes


@render.register
def _(b: LowerBound) -> Rendered:
    out = _table("term", "time", numeric=("time",))
    for name, value in (("latency (α)", b.latency_s), ("bandwidth (β)", b.bandwidth_s),
                        ("compute (γ)", b.compute_s), ("total", b.time_s)):
        out.add_row(name, format_time(value))
    head = _heading(b.collective, f"p = {b.p} · n = {format_size(b.n_bytes)}", b.meaning_of_n)
    cite = Text.from_markup(f"T ≥ {escape(b.formula)}\n[dim]{escape(str(b.source))}[/dim]")
    return Group(head, Text.from_markup(_link(b.link)), Text(""), out, Text(""), cite), b.notes


@render.register
def _(x: Crossover) -> Rendered:
    head = _heading(x.collective, f"{x.a} vs {x.b} · p = {x.p}", x.meaning_of_n)
    lines = []
    for point in x.crossovers:
        exact = (f" = {point.n_bytes.numerator}/{point.n_bytes.denominator} B exactly"
                 if point.exact and point.n_bytes.denominator != 1 else "")
        approx = "" if point.exact else " (located numerically)"
        lines.append(f"crossover at n* = [bold]{format_size(point.n_bytes)}[/bold]{exact}{approx}; "
                     f"both take {format_time(point.time_s)}")
    if x.relation == "crossover":
        lines.append(f"below: [bold]{x.below}[/bold] is cheaper · above: [bold]{x.above}[/bold] is cheaper")
    else:
        lines.append(f"no crossover: {escape(x.reason)}")
    if x.symbolic:
        lines.append(f"symbolically: {escape(x.symbolic)}")
    body = Text.from_markup("\n".join(lines))
    return Group(head, Text.from_markup(_link(x.link)), Text(""), body), x.notes


@render.register
def _(x: CrossoverInP) -> Rendered:
    out = _table("from p", "to p", "cheaper", numeric=("from p", "to p"))
    for r in x.ranges:
        out.add_row(str(r.from_p), str(r.to_p), r.cheaper or "tie")
    head = _heading(x.collective, f"{x.a} vs {x.b} · n = {format_size(x.n_bytes)}", x.meaning_of_n)
    changes = ", ".join(map(str, x.crossovers)) or "none"
    return Group(head, Text.from_markup(_link(x.link)), Text(""), out, Text(""),
                 Text(f"the cheaper one changes at p = {changes}")), ()


@render.register
def _(b: BestRanges) -> Rendered:
    out = _table("from", "to", "best", "ties", numeric=("from", "to"))
    for r in b.ranges:
        out.add_row(format_size(r.from_bytes), format_size(r.to_bytes), r.algorithm, ", ".join(r.tied))
    head = _heading(b.collective, f"p = {b.p} · best algorithm by message size", b.meaning_of_n)
    return Group(head, Text.from_markup(_link(b.link)), Text(""), out), b.notes


def _formula_lines(f: Formula, *, indent: str = "") -> list[str]:
    lines = [
        f"{indent}[bold]{f.collective} {f.algorithm}[/bold]: {escape(f.summary)}",
        f"{indent}  T(p, n) = {escape(f.time)}",
        f"{indent}  rounds = {escape(f.rounds)} · bytes sent by the busiest rank = {escape(f.bytes_sent)}",
    ]
    lines += [f"{indent}  {escape(c)}" for c in f.constraints]
    for param in f.parameters:
        optimum = (f"; continuous optimum {param['symbol']}* = {param['optimum']}"
                   if "optimum" in param else "")
        lines.append(f"{indent}  {param['symbol']}: {escape(param['description'])}{escape(optimum)}")
    lines += [f"{indent}  [dim]{escape(note)}[/dim]" for note in f.notes]
    return lines


@render.register
def _(f: Formula) -> Rendered:
    lines = _formula_lines(f)
    if f.aliases:
        lines.append(f"  aliases: {', '.join(f.aliases)}")
    lines.append(f"  [dim]{escape(f.meaning_of_n)}[/dim]")
    for adaptation in f.adaptations:
        lines.append("")
        lines += _formula_lines(adaptation, indent="  ")
    lines += [f"  where {escape(x)}" for x in f.legend]
    lines.append(f"  source: {escape(str(f.source))}")
    return Text.from_markup("\n".join(lines)), ()


@render.register
def _(c: Catalog) -> Rendered:
    out = _table("collective", "algorithm", "aliases", "cost")
    for e in c.entries:
        out.add_row(e.collective, e.algorithm + (" *" if e.constraints else ""), ", ".join(e.aliases),
                    escape(e.formula))
    footer = Text.from_markup("[dim]* needs a power of two; other p use its -folded adaptation "
                              "(costmodel formula COLLECTIVE ALGO)[/dim]")
    return Group(out, Text(""), footer), ()


@render.register
def _(ps: ProfileList) -> Rendered:
    out = _table("name", "α", "bandwidth", "title")
    for p in ps.profiles:
        rate = p.link.bandwidth_bytes_per_s
        alpha = format_time(p.link.alpha_s) + (" (estimate)" if p.alpha_estimate else "")
        out.add_row(p.name, alpha, "∞" if rate is None else format_rate(rate), escape(p.title))
    sources = [f"[bold]{p.name}[/bold]: {escape(p.source)}" for p in ps.profiles]
    sources += [f"[dim]{p.name}: {escape(note)}[/dim]" for p in ps.profiles for note in p.notes]
    usage = "[dim]use one with --profile NAME; --alpha/--beta/--bandwidth/--gamma override it[/dim]"
    return Group(out, Text(""), Text.from_markup("\n".join([*sources, usage]))), ()


def markdown(c: Catalog) -> str:
    """The model reference as Markdown: per collective, n, the lower bound and every record."""
    lines = [
        "# Model reference",
        "",
        "Generated by `costmodel algorithms --adaptations --markdown` from the formula registry; "
        "a test keeps this page equal to that output.",
        "",
        "Costs are α–β–γ: a message of m bytes costs α + mβ, reducing m bytes costs mγ. "
        "p′ = 2^⌊log₂p⌋; s(p) = Σ_{i<⌊log₂p⌋} min(p − p′, 2^i); B(p) = Σ_{j<p} popcount(j).",
    ]
    for collective, meaning in c.meanings.items():
        lines += ["", f"## {collective}", "", f"Meaning of n: {meaning}.", "",
                  f"Lower bound: T ≥ {c.bounds[collective]}", ""]
        for e in (e for e in c.entries if e.collective == collective):
            lines += [f"### {e.algorithm}", "", f"*{e.summary}*", "",
                      f"- T(p, n) = {e.formula}",
                      f"- rounds: {e.rounds}; bytes sent by the busiest rank: {e.bytes_sent}"]
            if e.aliases:
                lines.append(f"- aliases: {', '.join(e.aliases)}")
            lines += [f"- needs {constraint}" for constraint in e.constraints]
            if e.adapts:
                lines.append(f"- adapts `{e.adapts}` when p is not a power of two")
            lines += [f"- {note}" for note in e.notes]
            lines += [f"- source: {e.source}", ""]
    return "\n".join(lines).rstrip() + "\n"
