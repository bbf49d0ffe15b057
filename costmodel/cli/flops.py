"""The ``flops`` command: the FLOPs of one training iteration of a transformer and, measured, its FLOP/s.

It parses the options, makes one call to :func:`costmodel.step.achieved_flops` and emits the
:class:`~costmodel.step.AchievedFlops`, whose human rendering is declared here; rich loads only
when it runs.  With ``--gpu`` the peak is the GPU's (:meth:`costmodel.gpus.GPU.peak`), and the result
travels with it as a :class:`FlopsOnGPU`, so that the output names the GPU, the dtype and the source
of the peak.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.layout import markup, table
from costmodel.cli.options import Json, option, retired, value_parser
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders
from costmodel.cli.shape import (
    DenseLayers,
    ExpertFfn,
    ExpertLayers,
    Experts,
    Ffn,
    Gated,
    HeadDim,
    Heads,
    HfConfig,
    Hidden,
    KvGroups,
    KvRank,
    LayerNorms,
    Layers,
    ModelName,
    MtpLayers,
    Peak,
    QkNorm,
    QRank,
    RopeHeadDim,
    Seq,
    SharedExperts,
    TopK,
    UntiedEmbeddings,
    ValueHeadDim,
    Vocab,
    Window,
    WindowLayers,
    described,
    described_shape,
    megatron_option,
)
from costmodel.training.counts import parse_count
from costmodel.units import format_flop_rate, format_number, format_share, format_time, parse_time

if TYPE_CHECKING:
    from costmodel.gpus import GPU
    from costmodel.step import AchievedFlops

__all__ = ["FlopsOnGPU", "app", "render_flops"]

app = typer.Typer()

_RUN = "Iteration"
_time = value_parser(parse_time, require_unit=True, allow_zero=False)
_MEASURED = "Measured"


@app.command("flops")
def flops_command(
    batch: Annotated[int | None, option("--global-batch", "--batch", metavar="B", panel=_RUN,
                                        parser=value_parser(parse_count),
                                        help="Global batch: sequences per iteration (≥ 1; 2048, 2k); "
                                             "needed unless --megatron gives it.")] = None,
    layers: Layers = None, hidden: Hidden = None, heads: Heads = None, seq: Seq = None, vocab: Vocab = None,
    ffn: Ffn = None, kv_groups: KvGroups = None, head_dim: HeadDim = None, gated: Gated = None,
    model: ModelName = None,
    hf_config: HfConfig = None, experts: Experts = None, top_k: TopK = None,
    expert_ffn: ExpertFfn = None, shared_experts: SharedExperts = None, dense_layers: DenseLayers = None,
    untied_embeddings: UntiedEmbeddings = None, window: Window = None, window_layers: WindowLayers = None,
    layer_norms: LayerNorms = None, qk_norm: QkNorm = None, kv_rank: KvRank = None, q_rank: QRank = None,
    rope_head_dim: RopeHeadDim = None, value_head_dim: ValueHeadDim = None,
    expert_layers: ExpertLayers = None, mtp_layers: MtpLayers = None,
    megatron: Annotated[str | None, megatron_option(
        "the model's shape, --global-batch-size, full recomputation and the dtype of --gpu's peak; the "
        "options of this command override them.")] = None,
    capacity_factor: Annotated[str | None, option(
        "--capacity-factor", metavar="C", panel=_RUN,
        help="Experts run token blocks of C times their fair share (padding counts in the hardware "
             "FLOPs).")] = None,
    recompute: Annotated[str | None, option("--recompute", metavar="MODE", panel=_RUN,
                                            help="none (default) or full activation recomputation.")
                         ] = None,
    causal: Annotated[bool | None, option("--causal/--no-causal", panel=_RUN,
                                          help="Count half the attention products (the causal mask), as "
                                               "Megatron-LM does (default: the model's setting, else on "
                                               "with a --window and off without).")] = None,
    time: Annotated[Fraction | None, option("--time", "-t", metavar="TIME", panel=_MEASURED,
                                            parser=_time,
                                            help="Measured time of one iteration: 37.6s.")] = None,
    gpus: Annotated[int | None, option("--gpus", metavar="N", panel=_MEASURED,
                                       help="GPUs that ran the iteration (with --time).")] = None,
    peak: Peak = None,
    gpu: Annotated[str | None, option(
        "--gpu", metavar="NAME|FILE", panel=_MEASURED,
        help="The GPU that ran it (a preset, costmodel gpus, or a GPU file): its dense peak instead of "
             "--peak.")] = None,
    dtype: Annotated[str | None, option("--dtype", metavar="DTYPE", panel=_MEASURED,
                                        help="Which peak of --gpu: bf16 (default), fp16, fp8, tf32, fp32.")
                     ] = None,
    as_json: Json = False,
    _b: Annotated[str | None, retired("-B", now="--global-batch", means="the bandwidth (cost, step)")] = None,
) -> None:
    """FLOPs of one training iteration of a transformer: per layer, logits, total, per token, 6·N check.

    --time and --gpus give the FLOP/s per GPU: as Narayanan et al. SC'21 count it (eq. 3) and in model FLOPs.

    --peak, or --gpu with its --dtype, adds the model and hardware FLOPs utilization (MFU, HFU).

    Example: costmodel flops --layers 24 --hidden 2304 --heads 24 --seq 2048 --vocab 51200 --global-batch 512

    A mixture of experts: add --experts 8 --top-k 2 to the example; the parameters read total and active.
    With --expert-layers DE only the odd layers have the experts, the others a dense FFN of --ffn.

    Measured: add --recompute full --time 3.528s --gpus 32 --peak 312T (or --gpu a100-80gb) to the example.

    Example: costmodel flops --model llama-3-8b --global-batch 512

    A sliding window: --window 4096 on every layer (Mistral 7B), with --window-layers LG on the even layers
    only (Gemma 2); its layers count the band of the causal mask, s·w − w²/2 query-key pairs, not s²/2.

    Multi-head latent attention (DeepSeek-V2 and V3): --kv-rank 512 --q-rank 1536 --rope-head-dim 64
    --value-head-dim 128 with --head-dim 128, or --model deepseek-v3.
    """
    from costmodel.errors import InputError
    from costmodel.step import achieved_flops

    base = described(model=model, hf_config=hf_config, seq=seq, megatron=megatron)
    shape = described_shape(base.shape, layers=layers, hidden=hidden, heads=heads, seq=seq, vocab=vocab,
                            ffn=ffn, kv_groups=kv_groups, head_dim=head_dim, gated=gated, experts=experts,
                            top_k=top_k,
                            expert_ffn=expert_ffn, shared_experts=shared_experts, dense_layers=dense_layers,
                            untied_embeddings=untied_embeddings, window=window, window_layers=window_layers,
                            layer_norms=layer_norms, qk_norm=qk_norm, kv_rank=kv_rank, q_rank=q_rank,
                            rope_head_dim=rope_head_dim, value_head_dim=value_head_dim,
                            expert_layers=expert_layers, mtp_layers=mtp_layers)
    if shape is None:
        raise InputError("no transformer shape given; pass --layers L --hidden H --heads A --seq S "
                         "--vocab V, "
                         "or --model NAME")
    told = base.told  # what the description does not model
    batch = base.global_batch if batch is None else batch
    if batch is None:
        raise InputError("no global batch given; pass --global-batch B (sequences per iteration)")
    if recompute is None:
        recompute, told = _recompute_of(base.settings.get("recompute"), told)
    if dtype is None and gpu is not None and megatron is not None:
        dtype = base.settings.get("dtype")  # the peak of the precision the run trains in
    if peak is not None and gpu is not None:
        raise InputError("--peak and --gpu both give the peak; pass one of them")
    if dtype is not None and gpu is None:
        raise InputError(f"--dtype {dtype} picks a peak of --gpu; pass --gpu NAME with it (or give --peak)")
    if (peak is not None or gpu is not None) and time is None:
        what = "--peak" if gpu is None else "--gpu"
        raise InputError(f"{what} gives MFU and HFU of a measured run; pass --time TIME and --gpus N with it")
    if (time is None) != (gpus is None):
        raise InputError("--time and --gpus go together: the FLOP/s per GPU need the iteration time "
                         "and the GPUs that ran it")
    if causal is None:  # the model's own setting (GPT-3's preset is causal, as step counts it); else the
        causal = base.settings.get("causal")  # shape's: causal with a sliding window, full without

    def counted(**kw: Any) -> Any:
        import dataclasses

        found = achieved_flops(shape, batch=batch, time_s=time, gpus=gpus, recompute=recompute, causal=causal,
                               capacity_factor=capacity_factor, **kw)
        return dataclasses.replace(found, notes=(*told, *found.notes))

    if gpu is None:
        emit(counted(peak_flops=peak), as_json=as_json)
        return
    from costmodel.gpus import load_gpu, resolve_dtype

    device, name = load_gpu(gpu), resolve_dtype(dtype or "bf16")
    emit(FlopsOnGPU(flops=counted(peak_flops=device.peak(name)), gpu=device, dtype=name), as_json=as_json)


def _recompute_of(described: str | None, told: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The recomputation a description sets, as this command counts it (none or full), and its notes."""
    if described == "selective":
        return "none", (*told, "recompute selective (Megatron-LM's arguments): counted as none; the hardware "
                                "FLOPs here count full recomputation only")
    return described or "none", told


@dataclass(frozen=True, slots=True)
class FlopsOnGPU:
    """An :class:`~costmodel.step.AchievedFlops` whose peak is a GPU's dense peak in *dtype*.

    Its JSON is the result's with ``gpu``, ``peak_dtype`` and ``peak_source`` added.
    """

    flops: AchievedFlops
    gpu: GPU
    dtype: str

    def to_dict(self) -> dict[str, Any]:
        from costmodel.gpus import source_dict

        cited = self.gpu.sources.get(f"peak_flops.{self.dtype}")
        return {**self.flops.to_dict(), "gpu": self.gpu.name, "peak_dtype": self.dtype,
                "peak_source": None if cited is None else source_dict(cited)}


# --------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------


def _count(x: Fraction | int) -> str:
    return format_number(x)


@renders("costmodel.step.flops.AchievedFlops")
def render_flops(r: AchievedFlops) -> Rendered:
    """The heading, the FLOPs by part, and the counts and rates of one iteration."""
    from rich.console import Group
    from rich.text import Text

    s = r.shape
    extra = "".join((f", f {format_number(s.ffn_factor)}" if s.ffn_factor != 4 else "",
                     f", g {s.groups}" if s.kv_groups is not None else "",
                     f", d {s.head_dim}" if s.head_dim is not None else "",
                     _latent_text(s),
                     f", E {s.experts} k {s.top_k}" if s.moe else "",
                     f" on {s.moe_layers} layers ({s.expert_layers})" if s.expert_layers else "",
                     f", w {s.window} ({s.window_layers})" if s.window is not None else "",
                     f", MTP D {s.mtp_layers}" if s.mtp_layers else ""))
    redo = r.recompute == "full"
    how = ("full recomputation" if redo else "no recomputation") + (", causal" if r.causal else "")
    if r.capacity_factor is not None:
        how += f", capacity factor {format_number(r.capacity_factor)}"
    head = markup(f"[bold]flops[/bold] · l {s.layers}, h {s.hidden}, a {s.heads}, s {s.sequence}, "
                  f"V {s.vocabulary}{extra} · B {r.batch} · {how}\n"
                  f"[bold]{_count(r.hardware_flops)}[/bold] FLOPs per iteration, "
                  f"{_count(r.hardware_flops_per_token)} per token\n"
                  f"{_count(r.total_parameters)} parameters"
                  f"{f' ({_count(r.active_parameters)} active)' if s.moe else ''}, {r.tokens} tokens"
                  f"{_mtp_parameters(r)}")
    layer = r.layer
    parts = table("part", "FLOPs", numeric=("FLOPs",))
    what = "one MoE layer" if s.moe else "one layer"
    mlp: tuple[tuple[str, Fraction | int], ...] = (("  MLP", layer.mlp),)
    if s.moe:
        mlp = (("  router", layer.router), ("  routed experts" + (" (capacity)" if r.capacity_factor else ""),
                                           layer.experts),
               *((("  shared experts", layer.shared),) if s.shared_experts else ()))
    windowed = s.window is not None and s.window < s.sequence  # a window of the sequence or more is none
    local = s.is_windowed_layer(s.first_moe_layer)
    other = [g.flops.attention for g in r.groups if g.moe == s.moe and g.window != local] if windowed else []
    if windowed:
        what += " with the sliding window" if local else " with global attention"
    projections = "Q and KV down- and up-projections" if s.latent else "QKV projection"
    for name, value in ((f"{what}: {projections}", layer.qkv),
                        ("  attention (QKᵀ and ×V)", layer.attention),
                        *((("  attention " + (f"with the window of {s.window}" if not local else "if global"),
                            other[0]),) if other else ()),
                        ("  output projection", layer.projection), *mlp,
                        ("  forward", layer.forward), ("  backward (2 × forward)", layer.backward),
                        *((("  recomputation (a forward)", layer.recompute),) if redo else ()),
                        ("  total", layer.total),
                        *_layer_rows(r, windowed),
                        ("logits (forward + backward)", r.logits_forward + r.logits_backward),
                        *_mtp_rows(r),
                        ("iteration", r.hardware_flops)):
        parts.add_row(name, _count(value))
    counts = table("quantity", "value", header=False)
    if redo:
        counts.add_row("with recomputation (hardware, eq. 3)", _count(r.hardware_flops))
    elif r.capacity_factor is not None:
        counts.add_row("hardware FLOPs (expert capacity)", _count(r.hardware_flops))
    counts.add_row("model FLOPs (no recomputation)", _count(r.model_flops))
    counts.add_row("6·N·tokens" + (" (N active)" if s.moe else ""),
                   f"{_count(r.six_n_flops)} ({format_number(r.six_n_ratio)} × model)")
    counts.add_row("N of 6·N (matrices" + (", active)" if s.moe else ")"), _count(r.parameters))
    if r.time_s is None:  # measured, the conventions' table below shows these with their rates
        # after 6·N: with attention (PaLM), with the model card's N, and torchtitan's with a sliding window
        after = next(i for i, c in enumerate(r.conventions) if c.name.startswith("6·N·tokens, N the weight"))
        for c in r.conventions[after + 1:]:
            counts.add_row(c.name, f"{_count(c.flops)} ({format_number(c.flops / r.model_flops)} × model)")
    drawn: list[Any] = [head, Text(""), parts, Text(""), counts]
    per_gpu, total = r.hardware_flops_per_s_per_gpu, r.hardware_flops_per_s
    if r.time_s is not None and per_gpu is not None and total is not None:
        rates = table("quantity", "value", header=False)
        label = "with recomputation" if redo else "as run"
        rates.add_row(f"FLOP/s per GPU, {label}", format_flop_rate(per_gpu))
        if redo and r.model_flops_per_s_per_gpu is not None:
            rates.add_row("FLOP/s per GPU, model FLOPs", format_flop_rate(r.model_flops_per_s_per_gpu))
        rates.add_row(f"FLOP/s of all {r.gpus} GPUs, {label}", format_flop_rate(total))
        if r.mfu is not None and r.hfu is not None and r.peak_flops_per_s is not None:
            peak = format_flop_rate(r.peak_flops_per_s)
            rates.add_row(f"MFU (model FLOPs / {peak})", format_share(r.mfu))
            rates.add_row(f"HFU (hardware FLOPs / {peak})", format_share(r.hfu))
        drawn += [Text(""), Text(f"measured: {format_time(r.time_s)} per iteration on {r.gpus} GPUs",
                                 style="dim"), rates]
        drawn += [Text(""), Text("the same run as each convention counts it", style="dim"), _conventions(r)]
    return Group(*drawn), r.notes


def _mtp_parameters(r: AchievedFlops) -> str:
    """The heading's line of the main model's and the multi-token prediction modules' parameters: the main
    model's are the published count."""
    if r.mtp is None:
        return ""
    moe = r.shape.moe
    main = _count(r.main_parameters) + (f" ({_count(r.main_active_parameters)} active)" if moe else "")
    mtp = _count(r.mtp_parameters) + (f" ({_count(r.mtp_active_parameters)} active)" if moe else "")
    d = r.mtp.modules
    return (f"\n{main} in the main model, {mtp} in {d} multi-token prediction module{'s' if d > 1 else ''} "
            "(the embedding and output layer shared)")


def _mtp_rows(r: AchievedFlops) -> list[tuple[str, Fraction | int]]:
    """The multi-token prediction modules' rows: all of them, then their layers, projections and logits
    (forward, backward and the layers' recomputation)."""
    m = r.mtp
    if m is None:
        return []
    d = m.modules
    kind = "MoE layer" if m.moe else "dense layer" if r.shape.moe else "layer"
    return [(f"{d} MTP module{'s' if d > 1 else ''} (forward + backward)", m.total),
            (f"  {kind}{'s' if d > 1 else ''}", d * m.layer.total),
            ("  projection 2h → h", 3 * d * m.projection_forward),
            ("  logits", 3 * d * m.logits_forward)]


def _latent_text(s: Any) -> str:
    """A latent attention's widths for a heading: ``, MLA d_r 64 d_v 128 d_c 512 d_c' 1536`` (d, the heads'
    other part, is the heading's ``d``, or is shown here when it is h/a)."""
    if not s.latent:
        return ""
    own = f" d {s.head_width}" if s.head_dim is None else ""
    query = f" d_c' {s.q_rank}" if s.q_rank is not None else ""
    return f", MLA{own} d_r {s.rope_width} d_v {s.value_head_width} d_c {s.kv_rank}{query}"


def _layer_rows(r: AchievedFlops, windowed: bool) -> list[tuple[str, Fraction]]:
    """The layers' totals, a row for each kind: the dense first layers, then the others (``32 layers``,
    ``27 MoE layers``), apart by their attention when a sliding window changes it (``21 layers with the
    sliding window``, ``21 layers with global attention``)."""
    s = r.shape
    rows: dict[tuple[bool, bool], list[Any]] = {}
    for g in sorted(r.groups, key=lambda g: (g.moe, not g.window)):
        key = (g.moe, g.window and windowed)
        n, total = rows.get(key, [0, Fraction(0)])
        rows[key] = [n + g.layers, total + g.layers * g.flops.total]
    out = []
    for (moe, local), (n, total) in rows.items():
        kind = "MoE layer" if moe else "dense layer" if s.moe else "layer"
        attention = "" if not windowed else " with the sliding window" if local else " with global attention"
        out.append((f"{n} {kind}{'s' if n > 1 else ''}{attention}", total))
    return out


def _conventions(r: AchievedFlops) -> Any:
    """The counts papers use, side by side, and what each makes of the measured run (papers disagree
    about one run when they count differently)."""
    peak = r.peak_flops_per_s is not None
    columns = ["convention", "FLOPs", "per GPU", *(["of peak"] if peak else [])]
    out = table(*columns, numeric=columns[1:])
    for c in r.conventions:
        assert c.flops_per_s_per_gpu is not None  # shown only for a measured run
        out.add_row(c.name, _count(c.flops), format_flop_rate(c.flops_per_s_per_gpu),
                    *([format_share(c.utilization)] if c.utilization is not None else []))
    return out


@renders("costmodel.cli.flops.FlopsOnGPU")
def render_flops_on_gpu(r: FlopsOnGPU) -> Rendered:
    """The rendering of the FLOPs, then where the peak comes from."""
    from rich.markup import escape

    body, notes = render_flops(r.flops)
    cited = r.gpu.sources.get(f"peak_flops.{r.dtype}")
    where = "" if cited is None else f" ({cited.citation.key}: {cited.locator})"
    line = (f"peak: {format_flop_rate(r.gpu.peak(r.dtype))}, the dense {r.dtype} peak of one "
            f"{r.gpu.title}{where}")
    return body, (*notes, escape(line))
