"""Renderings of the cost commands' results: cost tables, bounds, crossovers, formulas, profiles.

Rich tables, units in headers; nothing here computes: every number shown is a field of the result.
The renderers are found by :func:`costmodel.cli.render.render` through the type names below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.markup import escape
from rich.text import Text

from costmodel.cli.flags import cli_message
from costmodel.cli.layout import Table, markup, table
from costmodel.cli.render import Rendered, renders
from costmodel.params import PiecewiseLink
from costmodel.units import format_inverse_rate, format_number, format_rate, format_size, format_time

if TYPE_CHECKING:
    from costmodel.collectives.formula import Formula
    from costmodel.collectives.hierarchical import HierarchicalTable
    from costmodel.collectives.hierarchical_formula import HierarchicalFormula
    from costmodel.collectives.multilane import FlexReduceSplit, MultiLaneTransfer, RackTraffic
    from costmodel.collectives.result import AlgorithmCost, Catalog, CostTable, LowerBound
    from costmodel.crossovers import BestRanges, Crossover, CrossoverInP
    from costmodel.params import Link
    from costmodel.profiles import ProfileList
    from costmodel.topology import Topology

__all__ = ["link_line"]


def _table(*columns: str, numeric: tuple[str, ...] = (), optional: tuple[Any, ...] = ()) -> Table:
    """The house table, the first column kept on one line as well as the numeric ones."""
    return table(*columns, numeric=numeric, no_wrap=(columns[0], *numeric), optional=optional)


def _size(n_bytes: Any) -> str:
    """The decimal form only, for table cells."""
    return format_size(n_bytes).split(" = ")[0]


def _link(link: Any) -> str:
    if isinstance(link, PiecewiseLink):
        return _piecewise(link)
    rate = link.bandwidth_bytes_per_s
    bandwidth = "∞" if rate is None else format_rate(rate)
    parts = [f"α = {format_time(link.alpha_s)}",
             f"β = {format_inverse_rate(link.beta_s_per_byte)} = {bandwidth}"]
    if link.gamma_s_per_byte:
        parts.append(f"γ = {format_inverse_rate(link.gamma_s_per_byte)}")
    return " · ".join(parts) + f"   [dim]({escape(link.source)})[/dim]"


def _piecewise(link: Any) -> str:
    """One line per segment: the sizes it prices and its α, β (γ), after what they were fitted on."""
    f = link.fitted
    if link.by_message and f is not None and f.message_share is not None:
        share = f.message_share
        each = "n" if share == 1 else f"n/{share.denominator}" if share.numerator == 1 else f"{share}·n"
        placed = f"; placed by {f.collective} {f.algorithm}'s messages of {each}"
        if f.p is not None:
            placed += f" at p = {f.p}"
    elif not link.by_message:
        placed = f"; collective sizes n of {f.collective} {f.algorithm}: it prices {f.algorithm} only"
    else:
        placed = ""
    what = "α, β by message size" if link.by_message else "α, β by collective size"
    lines = [f"{what}   [dim]({escape(link.source)}{escape(placed)})[/dim]"]
    pieces = link.pieces(0, None)
    for k, (start, end, piece) in enumerate(pieces):
        where = (f"below {_size(end)}" if k == 0 and end is not None else
                 "every size" if end is None and k == 0 else
                 f"from {_size(start)}" if end is None else f"{_size(start)} – {_size(end)}")
        rate = piece.bandwidth_bytes_per_s
        slope = " (slope)" if k < len(pieces) - 1 else ""
        bandwidth = "∞" if rate is None else format_rate(rate)
        parts = [f"α = {format_time(piece.alpha_s)}",
                 f"β = {format_inverse_rate(piece.beta_s_per_byte)} = {bandwidth}{slope}"]
        if piece.gamma_s_per_byte:
            parts.append(f"γ = {format_inverse_rate(piece.gamma_s_per_byte)}")
        lines.append(f"  {where}: " + " · ".join(parts))
    return "\n".join(lines)


def _has_gamma(link: Any) -> bool:
    """Whether *link* (or any segment of it) charges for reductions."""
    if isinstance(link, PiecewiseLink):
        return any(s.link.gamma_s_per_byte for s in link.segments)
    return bool(link.gamma_s_per_byte)


def link_line(link: Link | None) -> str:
    """The header line (markup) of the link a result was priced on, and where it came from; "" for none."""
    return "" if link is None else _link(link)


def _heading(collective: str, detail: str, meaning: str) -> Text:
    return markup(f"[bold]{collective}[/bold] · {detail}\n[dim]{escape(meaning)}[/dim]")


@renders("costmodel.collectives.result.CostTable")
def _(table: CostTable) -> Rendered:
    gamma = _has_gamma(table.link)
    numbers = ("time", "× best", "α part", "β part", "γ part", "rounds", "sent/rank", "× bound")
    columns = [c for c in ("algorithm", *numbers) if gamma or c != "γ part"]
    out = _table(*columns, numeric=numbers, optional=(("α part", "β part", "γ part"), "× bound"))
    for r in table.results:
        ratio = r.bound_ratio
        best = table.vs_best(r)
        out.add_row(
            r.algorithm, format_time(r.time_s), _ratio(best),
            format_time(r.latency_s), format_time(r.bandwidth_s),
            *([format_time(r.compute_s)] if gamma else []),
            str(r.rounds), _size(r.bytes_sent_per_rank),
            _ratio(ratio),
        )
    formulas = _table("algorithm", "T(p, n)")
    for r in table.results:
        formulas.add_row(r.algorithm, r.formula)
    head = _heading(table.collective, f"p = {table.p} · n = {format_size(table.n_bytes)}", table.meaning_of_n)
    bound = markup(
        f"lower bound {format_time(table.bound.time_s)} = {escape(table.bound.formula)}   "
        f"[dim](Chan et al. 2007)[/dim]\nbest: [bold]{table.best}[/bold]"
    )
    notes = table.notes + tuple(n for r in table.results for n in r.notes)
    return Group(head, markup(_link(table.link)), Text(""), out, Text(""), bound, Text(""),
                 formulas), notes


@renders("costmodel.collectives.result.AlgorithmCost")
def _(r: AlgorithmCost) -> Rendered:
    """One algorithm's cost (what :func:`costmodel.cost` returns): the cost table's row and formula."""
    gamma = bool(r.compute_s)
    numbers = ("time", "α part", "β part", "γ part", "rounds", "sent/rank", "× bound")
    columns = [c for c in ("algorithm", *numbers) if gamma or c != "γ part"]
    out = _table(*columns, numeric=numbers, optional=(("α part", "β part", "γ part"), "× bound"))
    out.add_row(r.algorithm, format_time(r.time_s), format_time(r.latency_s), format_time(r.bandwidth_s),
                *([format_time(r.compute_s)] if gamma else []), str(r.rounds), _size(r.bytes_sent_per_rank),
                _ratio(r.bound_ratio))
    chosen = ", ".join(f"{k} = {v}" for k, v in r.parameters.items())
    formula = f"T(p, n) = {escape(r.formula)}" + (f"   [dim]({escape(chosen)})[/dim]" if chosen else "")
    return Group(out, Text(""), markup(formula)), r.notes


@renders("costmodel.collectives.result.LowerBound")
def _(b: LowerBound) -> Rendered:
    out = _table("term", "time", numeric=("time",))
    for name, value in (("latency (α)", b.latency_s), ("bandwidth (β)", b.bandwidth_s),
                        ("compute (γ)", b.compute_s), ("total", b.time_s)):
        out.add_row(name, format_time(value))
    head = _heading(b.collective, f"p = {b.p} · n = {format_size(b.n_bytes)}", b.meaning_of_n)
    cite = markup(f"T ≥ {escape(b.formula)}\n[dim]{escape(str(b.source))}[/dim]")
    return Group(head, markup(_link(b.link)), Text(""), out, Text(""), cite), b.notes


@renders("costmodel.crossovers.Crossover")
def _(x: Crossover) -> Rendered:
    head = _heading(x.collective, f"{x.a} vs {x.b} · p = {x.p}", x.meaning_of_n)
    lines = []
    for point, before, after in zip(x.crossovers, x.ranges, x.ranges[1:], strict=False):
        exact = (f" = {point.n_bytes.numerator}/{point.n_bytes.denominator} B exactly"
                 if point.exact and point.n_bytes.denominator != 1 else "")
        size = format_size(point.n_bytes) if point.exact else f"≈ {format_size(point.n_bytes)}"
        approx = "" if point.exact else " (located numerically)"
        if point.segment_boundary:
            lines.extend(_switch(x, point, size=size + exact))
            continue
        what = ("the tie ends at n = " if before.cheaper is None else
                "a tie begins at n = " if after.cheaper is None else "crossover at n* = ")
        lines.append(f"{what}[bold]{size}[/bold]{exact}{approx}; both take {format_time(point.time_s)}")
    ties = any(r.cheaper is None for r in x.ranges)
    if x.relation == "crossover" and (ties or len(x.ranges) > 2):
        for r in x.ranges:
            end = "any larger size" if r.to_bytes is None else format_size(r.to_bytes)
            who = "equal (a tie)" if r.cheaper is None else f"[bold]{r.cheaper}[/bold] is cheaper"
            lines.append(f"{format_size(r.from_bytes)} to {end}: {who}")
    elif x.relation == "crossover":
        lines.append(f"below: [bold]{x.below}[/bold] is cheaper · above: [bold]{x.above}[/bold] is cheaper")
    elif x.relation == "identical":
        lines.append(f"equal: {escape(x.reason)}")
    else:
        said = cli_message(x.reason)
        reason = said if said.startswith("no crossover") else f"no crossover: {said}"
        lines.append(escape(reason))
    if x.scanned and x.max_bytes is not None:
        lines.append(f"[dim]searched {format_size(x.min_bytes)} to {format_size(x.max_bytes)} "
                     "(--min, --max)[/dim]")
    if x.symbolic:
        lines.append(f"symbolically: {escape(x.symbolic)}")
    body = markup("\n".join(lines))
    return Group(head, markup(_link(x.link)), Text(""), body), x.notes


def _switch(x: Crossover, point: Any, *, size: str) -> list[str]:
    """A switch without a meeting: the two costs on each side of the size where one of them jumps."""
    at = _size(point.n_bytes)
    below_a, below_b = point.below_s
    return [f"switch at n = [bold]{size}[/bold]: a cost jumps there (a message reaches a new segment), "
            "the costs do not meet",
            f"  below {at}: {x.a} {format_time(below_a)}, {x.b} {format_time(below_b)}",
            f"  from {at}: {x.a} {format_time(point.time_s)}, {x.b} {format_time(point.b_time_s)}"]


@renders("costmodel.crossovers.CrossoverInP")
def _(x: CrossoverInP) -> Rendered:
    out = _table("from p", "to p", "cheaper", numeric=("from p", "to p"))
    for r in x.ranges:
        out.add_row(str(r.from_p), str(r.to_p), r.cheaper or "tie")
    head = _heading(x.collective, f"{x.a} vs {x.b} · n = {format_size(x.n_bytes)}", x.meaning_of_n)
    changes = ", ".join(map(str, x.crossovers)) or "none"
    return Group(head, markup(_link(x.link)), Text(""), out, Text(""),
                 Text(f"the cheaper one changes at p = {changes}")), x.notes


@renders("costmodel.crossovers.BestRanges")
def _(b: BestRanges) -> Rendered:
    out = _table("from", "to", "best", "ties", numeric=("from", "to"))
    for r in b.ranges:
        out.add_row(format_size(r.from_bytes), format_size(r.to_bytes), r.algorithm, ", ".join(r.tied))
    head = _heading(b.collective, f"p = {b.p} · best algorithm by message size", b.meaning_of_n)
    return Group(head, markup(_link(b.link)), Text(""), out), b.notes


def _formula_lines(f: Formula, *, indent: str = "") -> list[str]:
    lines = [
        f"{indent}[bold]{f.collective} {f.algorithm}[/bold]: {escape(f.summary)}",
        f"{indent}  T(p, n) = {escape(f.time)}",
        f"{indent}  rounds = {escape(f.rounds)} · bytes sent by the busiest rank = {escape(f.bytes_sent)}",
    ]
    lines += [f"{indent}  {escape(cli_message(c))}" for c in f.constraints]
    for param in f.parameters:
        optimum = (f"; continuous optimum {param['symbol']}* = {param['optimum']}"
                   if "optimum" in param else "")
        said = cli_message(param["description"]) + optimum
        lines.append(f"{indent}  {param['symbol']}: {escape(said)}")
    lines += [f"{indent}  [dim]{escape(cli_message(note))}[/dim]" for note in f.notes]
    return lines


@renders("costmodel.collectives.formula.Formula")
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
    return markup("\n".join(lines)), ()


@renders("costmodel.collectives.formula.Formula", form="latex")
@renders("costmodel.collectives.hierarchical_formula.HierarchicalFormula", form="latex")
def _latex(f: Formula | HierarchicalFormula) -> str:
    """The LaTeX of T(p, n) alone, one line."""
    return f.latex["time"] + "\n"


@renders("costmodel.collectives.hierarchical_formula.HierarchicalFormula")
def _(f: HierarchicalFormula) -> Rendered:
    lines = [f"[bold]{f.collective} {f.algorithm}[/bold]: {escape(f.summary)}",
             f"  inner {f.inner} · outer {f.outer} · levels s₀ (innermost) … s_{{L−1}} (outermost), level i "
             "with its own αᵢ, βᵢ, γᵢ",
             f"  T = {escape(f.composition)}"]
    lines += ["    " + escape(f"T[{r['phase']}](p, n) = {r['time']}") for r in f.records]
    lines += ["", f"  {len(f.levels)} levels, {escape(f.legend[0])}:", f"  T = {escape(f.time)}"]
    for lv in f.levels:
        lines.append(f"    level {lv.level} ({', '.join(lv.phases)} on {escape(lv.n)}): "
                     f"rounds = {escape(lv.rounds)} "
                     f"· bytes sent by the busiest rank = {escape(lv.bytes_sent)}")
    lines += [f"  lanes: {escape(f.lanes)}"] if f.lanes else []
    lines += [f"  {escape(cli_message(c))}" for c in f.constraints]
    lines += [f"  {x['symbol']}: {escape(cli_message(x['description']))}" for x in f.parameters]
    lines += [f"  [dim]{escape(cli_message(x))}[/dim]" for x in (*f.legend[1:], *f.notes)]
    lines += [f"  aliases: {', '.join(f.aliases)}", f"  [dim]{escape(f.meaning_of_n)}[/dim]"]
    lines += [f"  source: {escape(str(s))}" for s in f.sources]
    return markup("\n".join(lines)), ()


@renders("costmodel.collectives.result.Catalog")
def _(c: Catalog) -> Rendered:
    out = _table("collective", "algorithm", "aliases", "cost")
    for e in c.entries:
        out.add_row(e.collective, e.algorithm + (" *" if e.constraints else ""), ", ".join(e.aliases),
                    escape(e.formula))
    notes = []
    if any(e.constraints for e in c.entries):
        notes.append("* holds for some p only: a power of two (other p use its -folded adaptation) or a "
                     "smallest p (costmodel formula COLLECTIVE ALGO says which)")
    if any(e.collective == "allreduce" for e in c.entries):
        notes.append("allreduce on a topology: hierarchical, hierarchical-reduce-bcast (costmodel formula "
                     "allreduce hierarchical; costmodel cost allreduce hierarchical --level ...)")
    if not notes:
        return out, ()
    footer = markup("[dim]" + escape("\n".join(notes)) + "[/dim]")
    return Group(out, Text(""), footer), ()


@renders("costmodel.profiles.ProfileList")
def _(ps: ProfileList) -> Rendered:
    out = _table("name", "α", "bandwidth", "title")
    for p in ps.profiles:
        if p.link is None:  # a profile of [[level]] tables only
            out.add_row(p.name, "–", "–", p.title)
            continue
        rate = p.link.bandwidth_bytes_per_s
        alpha = format_time(p.link.alpha_s) + (" (estimate)" if p.alpha_estimate else "")
        out.add_row(p.name, alpha, "∞" if rate is None else format_rate(rate), p.title)
    sources = [f"[bold]{p.name}[/bold]: {escape(p.source)}" for p in ps.profiles]
    sources += [f"[dim]{p.name}: {escape(note)}[/dim]" for p in ps.profiles for note in p.notes]
    sources += [f"{p.name} levels: {escape(_levels(p.levels))}" for p in ps.profiles if p.levels]
    fitted = [line for p in ps.profiles for line in _fits(p)]
    usage = "[dim]use one with --profile NAME; --alpha/--beta/--bandwidth/--gamma override it[/dim]"
    return Group(out, Text(""), markup("\n".join([*sources, *fitted, usage]))), ()


def _fits(profile: Any) -> list[str]:
    """A calibrated profile's fits: per collective, the model, the segments that price it, its warnings."""
    lines = []
    for k, f in enumerate(profile.fits):
        error = "" if f.median_rel_error is None else f", median |error| {f.median_rel_error:.2%}"
        role = " ([link] summarises it)" if k == 0 else ""
        lines.append(f"[bold]{escape(profile.name)} {f.collective}[/bold]: "
                     f"{escape(f.algorithm or 'model')} model, p = {f.p}{error}{escape(role)}")
        link = PiecewiseLink(segments=f.segments, summary=f.segments[0].link, source=f"{f.collective} fit")
        lines += _piecewise(link).splitlines()[1:]
        lines += [f"  [yellow]warning:[/yellow] {escape(w)}" for w in f.warnings]
    return lines


def _levels(levels: Any) -> str:
    """``8 nvlink (α = 2 µs, 450 GB/s) × 4 ib (α = 5 µs, 50 GB/s)``."""
    parts = []
    for lv in levels:
        rate = lv.link.bandwidth_bytes_per_s
        parts.append(f"{lv.size} {lv.name} (α = {format_time(lv.link.alpha_s)}, "
                     f"{'∞' if rate is None else format_rate(rate)})")
    return " × ".join(parts)


def _topology(topology: Topology) -> Table:
    gamma = any(lv.link.gamma_s_per_byte for lv in topology.levels)
    columns = ("level", "size", "α", "β", "bandwidth", *(("γ",) if gamma else ()), "source")
    out = _table(*columns, numeric=("size", "α", "β", "bandwidth", "γ"))
    for lv in topology.levels:
        rate = lv.link.bandwidth_bytes_per_s
        out.add_row(lv.name, str(lv.size), format_time(lv.link.alpha_s),
                    format_inverse_rate(lv.link.beta_s_per_byte), "∞" if rate is None else format_rate(rate),
                    *((format_inverse_rate(lv.link.gamma_s_per_byte),) if gamma else ()),
                    Text(lv.link.source, style="dim"))
    return out


def _cite(cited: Any) -> str:
    """``[dim]Sergeev, Del Balso (2018): locator[/dim]``: who, when and where, for a footer."""
    c = cited.citation
    return f"[dim]{escape(c.authors)} ({c.year}), {escape(cited.locator)}[/dim]"


def _ratio(x: Any) -> str:
    """A ratio in three significant digits, or as many more (up to 7) as it takes not to round a ratio
    that is not 1 to 1: 84.68 ms over 84.57 ms is 1.001, never a tie the times contradict."""
    if x is None:
        return "–"
    for digits in range(3, 8):
        shown = format_number(x, digits=digits)
        if shown != "1" or x == 1:
            break
    return shown


@renders("costmodel.collectives.hierarchical.HierarchicalTable")
def _(table: HierarchicalTable) -> Rendered:
    topo = table.topology
    named = [(r.algorithm, r) for r in table.results] + [("flat ring", table.flat_ring)]
    gamma = any(r.compute_s for _, r in named)
    numbers = ("time", "× flat ring", "α part", "β part", "γ part", "rounds", "sent/rank")
    out = _table(*(c for c in ("algorithm", *numbers) if gamma or c != "γ part"), numeric=numbers,
                 optional=("α part", "β part", "γ part"))
    for name, r in named:
        out.add_row(name, format_time(r.time_s), _ratio(table.speedup(r)), format_time(r.latency_s),
                    format_time(r.bandwidth_s), *([format_time(r.compute_s)] if gamma else []), str(r.rounds),
                    _size(r.bytes_sent_per_rank))
    names = tuple(name for name, _ in named)
    crossing = _table("bytes crossing", *names, numeric=names)
    for i, level in enumerate(topo.names):
        crossing.add_row(level, *(_size(r.levels[i].bytes_crossing) for _, r in named))
    phases = _table("algorithm", "phase", "level", "ranks", "groups", "n", "time", "crossing",
                    numeric=("ranks", "groups", "n", "time", "crossing"))
    for name, r in named:
        for i, ph in enumerate(r.phases):
            phases.add_row(name if i == 0 else "", f"{ph.collective} {ph.cost.algorithm}",
                           escape(ph.level), str(ph.p), str(ph.groups), _size(ph.n_bytes),
                           format_time(ph.cost.time_s), _size(ph.bytes_crossing))
    detail = f"p = {table.p} = {escape(str(topo))} · n = {format_size(table.n_bytes)}"
    head = _heading(table.collective, detail, table.meaning_of_n)
    sources = dict.fromkeys(_cite(s) for r in table.results for s in r.sources)
    footer = markup(f"best: [bold]{table.best}[/bold]   [dim](× flat ring: the flat ring's time "
                    "over this one's; bytes crossing a level: all transfers over its links, "
                    "summed)[/dim]\n" + "\n".join(sources))
    notes = table.notes + tuple(dict.fromkeys(n for _, r in named for n in r.notes))
    return Group(head, Text(""), _topology(topo), Text(""), out, Text(""), crossing, Text(""), phases,
                 Text(""), footer), notes


@renders("costmodel.collectives.multilane.MultiLaneTransfer")
def _(m: MultiLaneTransfer) -> Rendered:
    out = _table("lanes", "bytes per lane", "time", numeric=("lanes", "bytes per lane", "time"))
    out.add_row("1", format_size(m.n_bytes), format_time(m.one_lane_time_s))
    out.add_row(str(m.lanes), format_size(m.bytes_per_lane), format_time(m.time_s))
    head = markup(f"[bold]multi-lane transfer[/bold] · n = {format_size(m.n_bytes)} over "
                  f"{m.lanes} lane{'s' if m.lanes > 1 else ''}\n{_link(m.link)}")
    foot = markup(f"{_ratio(m.speedup)}× faster on {m.lanes} lanes\n"
                  + "\n".join(_cite(s) for s in m.sources))
    return Group(head, Text(""), out, Text(""), foot), m.notes


@renders("costmodel.collectives.multilane.FlexReduceSplit")
def _(f: FlexReduceSplit) -> Rendered:
    out = _table("group", "workers", "reduced/worker", "owned by group", "owned/worker",
                 numeric=("group", "workers", "reduced/worker", "owned by group", "owned/worker"))
    for i, g in enumerate(f.groups, start=1):
        out.add_row(str(i), str(g.workers), str(g.reduced_per_worker), str(g.owned_entries),
                    str(g.owned_per_worker))
    head = markup(f"[bold]FlexReduce[/bold] · {f.entries} entries over groups of "
                  f"{', '.join(str(g.workers) for g in f.groups)} workers")
    foot = markup(
        f"cross-group exchange: {f.exchange_entries_per_direction} partial-sum entries each way per pair of "
        f"groups, {f.exchange_entries} in all (the final all-gather moves {f.allgather_entries} more)\n"
        + "\n".join(_cite(s) for s in f.sources))
    return Group(head, Text(""), out, Text(""), foot), f.notes


@renders("costmodel.collectives.multilane.RackTraffic")
def _(t: RackTraffic) -> Rendered:
    out = _table("level", "flat ring", "RAT", numeric=("flat ring", "RAT"))
    for a, b in zip(t.flat_ring.levels, t.rat.levels, strict=True):
        out.add_row(a.name, _size(a.bytes_crossing), _size(b.bytes_crossing))
    head = markup(f"[bold]bytes crossing each level[/bold] · {t.racks} racks × {t.per_rack} "
                  f"workers · n = {format_size(t.n_bytes)}")
    foot = markup(f"RAT: {escape(t.rat.formula)}\n" + "\n".join(_cite(s) for s in t.sources))
    return Group(head, Text(""), out, Text(""), foot), t.notes


@renders("costmodel.collectives.result.Catalog", form="markdown")
def _markdown(c: Catalog) -> str:
    """The model reference as Markdown: per collective, n, the lower bound and every record."""
    lines = [
        "# Model reference",
        "",
        "Generated by `costmodel algorithms --adaptations --markdown` from the formula registry; "
        "a test keeps this page equal to that output.",
        "",
        "Costs are α–β–γ: a message of m bytes costs α + mβ, reducing m bytes costs mγ. "
        "p′ = 2^⌊log₂p⌋; [p ≠ p′] is 1 when p is not a power of two, else 0; "
        "s(p) = Σ_{i<⌊log₂p⌋} min(p − p′, 2^i); B(p) = Σ_{j<p} popcount(j).",
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
            lines += [f"- needs {cli_message(constraint)}" for constraint in e.constraints]
            if e.adapts:
                lines.append(f"- adapts `{e.adapts}` when p is not a power of two")
            lines += [f"- {cli_message(note)}" for note in e.notes]
            lines += [f"- source: {e.source}", ""]
        if collective == "allreduce":
            lines += _markdown_hierarchical(c.hierarchical)
    return "\n".join(lines).rstrip() + "\n"


def _markdown_hierarchical(formulas: Any) -> list[str]:
    """The hierarchical all-reduces: composition, two-level closed form, per-level rounds and bytes."""
    lines = []
    for f in formulas:
        lines += [f"### {f.algorithm} (on a topology)", "", f"*{f.summary}*", "",
                  f"- inner {f.inner}, outer {f.outer} (`--inner`, `--outer`); levels s₀ (innermost) … "
                  "`s_{L−1}` (outermost), level i with its own αᵢ, βᵢ, γᵢ",
                  f"- `T = {f.composition}`",
                  *(f"  - `T[{r['phase']}](p, n) = {r['time']}`" for r in f.records),
                  f"- two levels, {f.legend[0]}:",
                  f"  - T = {f.time}",
                  *(f"  - level {lv.level} ({', '.join(lv.phases)} on {lv.n}): rounds {lv.rounds}; bytes "
                    f"sent by the busiest rank: {lv.bytes_sent}" for lv in f.levels)]
        lines += [f"- lanes: {f.lanes}"] if f.lanes else []
        lines += [f"- {cli_message(x)}" for x in (*f.constraints, *f.legend[1:], *f.notes)]
        lines += [f"- aliases: {', '.join(f.aliases)}"]
        lines += [f"- source: {s}" for s in f.sources] + [""]
    return lines
