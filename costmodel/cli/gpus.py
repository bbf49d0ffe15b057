"""The ``gpus`` command: the GPU presets, or one GPU (a preset or a file) with every number's source.

It makes one call to :func:`costmodel.gpus.list_gpus` or :func:`costmodel.gpus.load_gpu` and emits the
result, whose human renderings (:class:`~costmodel.gpus.GPUList`, :class:`~costmodel.gpus.GPU`) are
declared here; rich loads only when they run.  ``GPU`` is also the option type of ``--gpu NAME|FILE``
(``flops``, ``memory``): :data:`GpuOption`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.units import (
    format_byte_rate,
    format_flop_rate,
    format_rate,
    format_share,
    format_size,
    format_time,
)

if TYPE_CHECKING:
    from costmodel.gpus import GPU, GemmOnGpu, GPUList
    from costmodel.references import Cited

__all__ = ["GpuOption", "app", "gpu_names"]

app = typer.Typer()


def gpu_names(ctx: Any, incomplete: str) -> list[str]:
    """The presets, for shell completion (a TOML path is completed by the shell, not here)."""
    from costmodel.gpus import GPU_NAMES

    return [n for n in GPU_NAMES if n.startswith(incomplete)]


GpuOption = Annotated[str | None, option(
    "--gpu", metavar="NAME|FILE", autocompletion=gpu_names,
    help="A GPU preset (costmodel gpus lists them) or a GPU TOML file.")]


@app.command("gpus")
def gpus(
    name: Annotated[str | None, typer.Argument(help="A preset name or a GPU TOML file to show.",
                                                  metavar="NAME|FILE", show_default=False,
                                                  autocompletion=gpu_names)] = None,
    gemm: Annotated[str | None, option(
        "--gemm", metavar="MxNxK",
        help="A matrix product C\\[m×n] = A\\[m×k]·B\\[k×n] on the GPU: its roofline (intensity, ridge "
             "point, bound, time) and its waves of tiles.")] = None,
    dtype: Annotated[str | None, option(
        "--dtype", metavar="DTYPE", help="The product's dtype, with --gemm: bf16 (default), fp16, fp8, tf32, "
                                         "fp32.")] = None,
    as_json: Json = False,
) -> None:
    """List the GPU presets (bf16 peak, measured GEMM rate, memory, bandwidth, SMs), or show one GPU.

    A GPU is shown with every number, its unit and its source; a file may start from a preset
    (base = "h100-sxm") and change a few numbers: docs/reference/gpus.md describes the format.

    Example: costmodel gpus

    Example: costmodel gpus h100-sxm

    Example: costmodel gpus h100-sxm --gemm 8192x128x8192
    """
    from costmodel.gpus import gpus_query

    emit(gpus_query(name, gemm=gemm, dtype=dtype), as_json=as_json)


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _bytes_rate(x: Any) -> str:
    """A rate in bytes per second only: ``2.039 TB/s``."""
    return format_byte_rate(x)


def _capacity(x: Any) -> str:
    """A memory capacity in its binary form when it has one (``80 GiB``), as the presets give it."""
    return str(format_size(x).split(" = ")[-1])


def _shape(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape))


@renders("costmodel.gpus.GPUList")
def render_list(gl: GPUList) -> Rendered:
    """One row per preset: name, title, bf16 peak and measured GEMM rate, memory, bandwidth, SMs."""
    from rich.console import Group
    from rich.text import Text

    numbers = ("bf16 peak", "GEMM bf16", "of peak", "memory", "bandwidth", "SMs")
    out = table("name", "GPU", *numbers, numeric=numbers, no_wrap=("name", *numbers),
                optional=("GPU",))
    for g in gl.gpus:
        peak = g.peak_flops.get("bf16")
        achieved = g.gemm.achieved_flops.get("bf16")
        out.add_row(g.name, g.title, "–" if peak is None else format_flop_rate(peak),
                    "–" if achieved is None else format_flop_rate(achieved),
                    "–" if peak is None or achieved is None else format_share(achieved / peak, digits=4),
                    _capacity(g.memory_bytes), _bytes_rate(g.memory_bandwidth_bytes_per_s), str(g.sms))
    footer = ("[dim]peak: dense (no sparsity); GEMM: a measured large GEMM, or a proxy its source "
              "names; memory: the datasheet figure read in GiB; SMs: compute units on AMD\n"
              "costmodel gpus NAME shows every number with its source; use one with --gpu NAME "
              "(flops, memory, step)[/dim]")
    return Group(out, Text(""), markup(footer)), ()


def _key(cited: Cited) -> str:
    """The citation key of a source; a value the file itself sets reads ``this file``."""
    from costmodel.gpus import is_file_source

    return "this file" if is_file_source(cited) else cited.citation.key


@renders("costmodel.gpus.GPU")
def render_gpu(g: GPU) -> Rendered:
    """The GPU's numbers with their units and source keys, where in each source, the references, notes."""
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    from costmodel.gpus import is_file_source

    where = [f"{g.vendor}, {g.form}"] + ([f"from the preset {g.base}"] if g.base else []) \
        + ([escape(g.path)] if g.path else [])
    head = markup(f"[bold]{escape(g.title)}[/bold] · {escape(g.name)} · {' · '.join(where)}\n"
                  f"inside a node: {g.gpus_per_node} GPUs on {escape(g.intra_node_link)}; "
                  f"between nodes: {escape(g.network)}")
    src = g.sources
    rows: list[tuple[str, str, str]] = [
        ("CUs" if g.vendor == "amd" else "SMs", str(g.sms), "sms"),
        ("memory", format_size(g.memory_bytes), "memory_bytes"),
        ("memory bandwidth", _bytes_rate(g.memory_bandwidth_bytes_per_s), "memory_bandwidth_bytes_per_s"),
        ("streaming copy", f"{format_share(g.memory_efficiency, digits=4)} = "
                           f"{_bytes_rate(g.achieved_memory_bandwidth_bytes_per_s)}", "memory_efficiency"),
    ]
    rows += [(f"  {kind.replace('_', ' ')} kernels", f"{format_share(share, digits=4)} = "
              f"{_bytes_rate(g.kernel_bandwidth(kind))}", f"memory_kernels.{kind}")
             for kind, share in g.memory_kernels.items()]
    rows += [(f"peak {d}", format_flop_rate(v), f"peak_flops.{d}") for d, v in g.peak_flops.items()]
    for d, v in g.gemm.achieved_flops.items():
        share = format_share(g.gemm_efficiency(d), digits=4)
        rows += [(f"GEMM {d}", f"{format_flop_rate(v)} = {share} of peak",
                  f"gemm.achieved_flops.{d}"),
                 ("  at m×n×k", _shape(g.gemm.shapes[d]), "")]
    rows += [
        ("GEMM tile", " × ".join(map(str, g.gemm.tile)), "gemm.tile"),
        ("K0 (k_overhead)", str(g.gemm.k_overhead), "gemm.k_overhead"),
        ("kernel launch", format_time(g.launch_s), "launch_s"),
        ("GPUs per node", str(g.gpus_per_node), "gpus_per_node"),
        ("intra-node", f"{format_rate(g.intra_node_bandwidth_bytes_per_s)} each way",
         "intra_node_bandwidth_bytes_per_s"),
        ("network per GPU", f"{format_rate(g.network_bandwidth_bytes_per_s)} each way",
         "network_bandwidth_bytes_per_s"),
    ]
    measured = (("intra-node α", g.intra_node_latency_s, format_time, "intra_node_latency_s"),
                ("intra-node "
                 "busbw", g.intra_node_busbw_bytes_per_s, _bytes_rate, "intra_node_busbw_bytes_per_s"),
                ("network α", g.network_latency_s, format_time, "network_latency_s"),
                ("network busbw", g.network_busbw_bytes_per_s, _bytes_rate, "network_busbw_bytes_per_s"),
                ("NCCL channels in", g.intra_node_channels, str, "intra_node_channels"),
                ("NCCL channels out", g.network_channels, str, "network_channels"))
    rows += [(label, show(value), key) for label, value, show, key in measured if value is not None]
    if g.intra_node_profile is not None:
        rows.append(("intra-node profile", escape(g.intra_node_profile), "intra_node_profile"))
    for d, v in g.attention_flops.items():
        share = format_share(v / g.peak_flops[d], digits=4)
        rows.append((f"attention {d}", f"{format_flop_rate(v)} = {share} of peak", f"attention_flops.{d}"))
        if d in g.attention_shapes:
            rows.append(("  at b×heads×s×d", "×".join(map(str, g.attention_shapes[d])), ""))
    if g.attention_k_overhead:
        rows.append(("attention K0 (keys)", str(g.attention_k_overhead), "attention_k_overhead"))
    out = table("quantity", "value", "source", numeric=("value",), no_wrap=True)
    lines = ["[bold]where each number comes from[/bold]"]
    for label, value, key in rows:
        out.add_row(label, value, _key(src[key]) if key in src else "")
        if key in src:
            lines.append(f"  {escape(label.strip())}: {escape(src[key].locator)}")
    cited = {c.citation.key: c.citation for c in src.values() if not is_file_source(c)}
    lines += ["", "[bold]references[/bold]"]
    lines += [f"  {escape(k)}: {escape(str(c))}" + (f" {escape(c.url)}" if c.url not in str(c) else "")
              for k, c in cited.items()]
    if any(is_file_source(c) for c in src.values()):
        lines.append(f"  this file: {escape(g.path)}")
    return Group(head, Text(""), out, Text(""), markup("\n".join(lines))), g.notes


@renders("costmodel.gpus.GemmOnGpu")
def render_gemm(r: GemmOnGpu) -> Rendered:
    """The product's FLOPs, bytes, intensity against the ridge point, times and waves."""
    from costmodel.units import format_exact

    f, w = r.roofline, r.waves
    head = markup(f"[bold]gemm[/bold] · {f.m}×{f.n}×{f.k} in {r.dtype} on {r.gpu} ({r.title})")
    out = table("quantity", "value", numeric=("value",))
    rows = [
        ("FLOPs, 2·m·n·k", f"{f.flops:,}"),
        (f"bytes, {r.element_bytes}·(m·k + k·n + m·n)", format_size(f.n_bytes)),
        ("arithmetic intensity (FLOP/B)", format_exact(f.intensity_flops_per_byte, approx=True)),
        (f"ridge point P/B: {format_flop_rate(r.peak_flops_per_s)} / "
         f"{_bytes_rate(r.memory_bandwidth_bytes_per_s)}", format_exact(f.ridge_flops_per_byte, approx=True)),
        ("bound", f.bound),
        ("math time, FLOPs/P", format_time(f.math_s)),
        ("memory time, bytes/B", format_time(f.memory_s)),
        ("roofline time, the larger", format_time(f.time_s)),
        ("attainable, min(P, I·B)", format_flop_rate(f.attainable_flops_per_s)),
        ("fewest rows m that are compute-bound, same n and k",
         "never" if r.compute_bound_rows is None else f"{r.compute_bound_rows:,}"),
        (f"tiles of {w.tile[0]}×{w.tile[1]}, ⌈m/t_m⌉·⌈n/t_n⌉", f"{w.tiles:,}"),
        (f"waves on {w.sms} SMs, ⌈tiles/SMs⌉", f"{w.waves:,}"),
        ("SM slots used in those waves", format_share(w.efficiency, digits=4)),
    ]
    from rich.console import Group
    from rich.text import Text

    for label, value in rows:
        out.add_row(label, value)
    notes = ("roofline: the dense peak and the datasheet memory bandwidth, A and B read once and C written "
             "once, math and memory overlapped (Williams et al. 2009)",
             "waves: the preset's GEMM tile, one tile per SM at a time, no split-k (the step model's GEMM "
             "curve also tries the transposed tile and split-k)")
    return Group(head, Text(""), out), notes
