"""Commands of the training models: loss, gradient, fedavg, memory, traffic ..., compress, error-feedback.

Each command parses its options, makes one call into :mod:`costmodel.training`
and emits the result.  The renderings are declared here with
:func:`costmodel.cli.render.renders`; they import rich only when they run, so a
``--json`` run imports no rich.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costmodel.cli.gpus import GpuOption
from costmodel.cli.layout import markup, table
from costmodel.cli.options import Alpha, Bandwidth, Beta, Json, Profile, option, value_parser
from costmodel.cli.output import emit
from costmodel.cli.render import Rendered, renders

if TYPE_CHECKING:
    from costmodel.training.compression import Compression, ErrorFeedbackRun
    from costmodel.training.federated import FedAvgRound
    from costmodel.training.loss import WeightedGradient, WeightedLoss
    from costmodel.training.memory import MemoryReport
    from costmodel.training.traffic import MoETraffic, PSTraffic, Staleness, TensorParallelTraffic

__all__ = ["app", "traffic_app"]

app = typer.Typer()
traffic_app = typer.Typer(no_args_is_help=True, help="Traffic of training patterns: ps, tp, moe, staleness.")
app.add_typer(traffic_app, name="traffic")


def _count(text: str) -> int:
    from costmodel.training.counts import parse_count

    return parse_count(text)


def _size(text: str) -> Fraction:
    from costmodel.units import parse_size

    return parse_size(text, allow_zero=False)


_WEIGHTS = "Weights"
Losses = Annotated[str, option("--losses", metavar="L,L,...", help="Each worker's mean loss: 0.2,0.5,0.9.")]
Gradients = Annotated[str, option("--gradients", metavar="G;G;...",
                                help="Each worker's mean gradient, ';' between workers: 1,0;2,1;4,-1.")]
Sizes = Annotated[str | None, option(
    "--sizes", metavar="N,N,...", panel=_WEIGHTS,
    help="Samples in each worker's shard (weights n_k/N): 600,300,100; 60k is 60000.")]
Batches = Annotated[str | None, option(
    "--batches", metavar="B,B,...", panel=_WEIGHTS,
    help="Samples each worker used in this mini-batch step (weights b_k/Σb).")]
Weights = Annotated[str | None, option(
    "--weights", metavar="W,W,...", panel=_WEIGHTS,
    help="Explicit weights, summing to exactly 1: 0.6,0.3,0.1.")]
Count = Annotated[int | None, option("--params", metavar="N", parser=value_parser(_count),
                                   help="Parameter count: 70B (B = billion, not bytes), 7.5e9, 25M.")]
Dtype = Annotated[str | None, option("--dtype", metavar="DTYPE",
                                   help="fp32, bf16, fp16, fp8, int8, int32 or fp64 (or float32, half).")]
Workers = Annotated[int, option("--workers", metavar="N", help="Workers (≥ 2).")]
Hidden = Annotated[str, option("--hidden", metavar="H", help="Hidden size h.")]
Tp = Annotated[int, option("--tp", metavar="T", help="Tensor-parallel size t.")]
Algorithm = Annotated[str, typer.Option("--algorithm", metavar="ALGO",
                                        help="Collective algorithm for times.")]
Ranks = Annotated[int | None, option("-p", "--ranks", metavar="P",
                                   help="Workers exchanging the gradient (for bytes and times).")]


# -- weighted objective and FedAvg ------------------------------------------------------------------


@app.command("loss")
def loss(losses: Losses, sizes: Sizes = None, batches: Batches = None, weights: Weights = None,
         as_json: Json = False) -> None:
    """Sample-weighted global loss against the plain mean of the local losses.

    Give exactly one of --sizes, --batches or --weights.

    Example: costmodel loss --sizes 600,300,100 --losses 0.2,0.5,0.9
    """
    from costmodel.training.loss import weighted_loss

    emit(weighted_loss(losses=losses, sizes=sizes, batches=batches, weights=weights), as_json=as_json)


@app.command("gradient")
def gradient(gradients: Gradients, sizes: Sizes = None, batches: Batches = None, weights: Weights = None,
             as_json: Json = False) -> None:
    """Local mean gradients combined by the samples behind each, against their plain mean.

    For a synchronous mini-batch step give --batches: equal mini-batches give equal weights.

    Example: costmodel gradient --gradients "1,0;2,1;4,-1" --batches 32,32,64
    """
    from costmodel.training.loss import weighted_gradient

    emit(weighted_gradient(gradients=gradients, sizes=sizes, batches=batches, weights=weights),
         as_json=as_json)


@app.command("fedavg")
def fedavg(
    sizes: Annotated[str, option("--sizes", metavar="N,N,...", help="Samples |D_k| of each client.")],
    models: Annotated[str, option("--models", metavar="θ;θ;...",
                                help="Each client's model, ';' between clients: 1,0;2,1;4,-1.")],
    dropped: Annotated[str | None, option("--dropped", metavar="K,K,...",
                                        help="0-based indices of clients that did not answer.")] = None,
    as_json: Json = False,
) -> None:
    """FedAvg aggregation θ = Σ |D_k|/|D| θ_k, renormalised over the clients that answered.

    Example: costmodel fedavg --sizes 100,300,600 --models "1,0;2,1;4,-1" --dropped 1
    """
    from costmodel.training.federated import fedavg as aggregate

    emit(aggregate(models, sizes=sizes, dropped=dropped), as_json=as_json)


# -- memory ---------------------------------------------------------------------------------------

_ACT = "Activations (Korthikanti et al. 2022)"


@app.command("memory")
def memory(
    params: Count = None,
    dtype: Dtype = None,
    dp: Annotated[int | None, option("--dp", metavar="D",
                                   help="Data-parallel workers (ZeRO's N_d); default 1.")] = None,
    zero: Annotated[int | None, option("--zero", metavar="STAGE",
                                     help="ZeRO stage 0-3: model states per GPU (mixed-precision "
                                          "Adam).")] = None,
    optimizer_bytes: Annotated[int | None, option("--optimizer-bytes", metavar="K",
                                                help="ZeRO: optimizer-state bytes per parameter; "
                                                     "default 12 (mixed-precision Adam).")] = None,
    tp: Annotated[int, typer.Option("--tp", metavar="T", help="Tensor-parallel size t.")] = 1,
    seq: Annotated[str | None, typer.Option("--seq", metavar="S", rich_help_panel=_ACT,
                                            help="Sequence length s.")] = None,
    batch: Annotated[str | None, typer.Option("--batch", metavar="B", rich_help_panel=_ACT,
                                              help="Micro-batch size b.")] = None,
    hidden: Annotated[str | None, typer.Option("--hidden", metavar="H", rich_help_panel=_ACT,
                                               help="Hidden size h.")] = None,
    heads: Annotated[str | None, typer.Option("--heads", metavar="A", rich_help_panel=_ACT,
                                              help="Attention heads a.")] = None,
    sp: Annotated[bool, typer.Option("--sp", rich_help_panel=_ACT, help="Sequence parallelism.")] = False,
    recompute: Annotated[str | None, option("--recompute", metavar="MODE", panel=_ACT,
                                            help="none (default), selective or full.")] = None,
    layers: Annotated[int | None, typer.Option("--layers", metavar="L", rich_help_panel=_ACT,
                                               help="Layers, for a total.")] = None,
    model: Annotated[str | None, option("--model", metavar="NAME|FILE",
                                        help="A model preset (costmodel models) or model file: its "
                                             "parameters (all of them, as its card counts: every expert, "
                                             "an untied output layer), and with --batch its sequence, "
                                             "hidden size, heads and layers, unless given.")] = None,
    hf_config: Annotated[str | None, option("--hf-config", metavar="FILE",
                                            help="A Hugging Face config.json, read as --model is.")] = None,
    attention: Annotated[str | None, option("--attention", metavar="KIND", panel=_ACT,
                                            help="With --model: flash (default, as step) or unfused "
                                                 "attention.")] = None,
    gpu: GpuOption = None,
    as_json: Json = False,
) -> None:
    """Memory of data-parallel training: weights × replicas, ZeRO model states, activations per layer.

    --gpu says whether the memory per GPU fits that GPU, and by how much it does not.

    Example: costmodel memory --params 70B --dtype fp32 --dp 4

    Example: costmodel memory --params 7.5B --dp 64 --zero 3 --gpu a100-40gb

    Example: costmodel memory --model llama-3-8b --dtype bf16 --dp 8 --zero 3 --batch 1 --tp 2 --sp
    """
    from costmodel.errors import InputError
    from costmodel.training.memory import training_memory

    layer: dict[str, Any] = {}
    told: tuple[str, ...] = ()  # what the description does not model or count, as flops and step say it
    if attention is not None and model is None and hf_config is None:
        raise InputError("--attention describes a model's own layer; give --model or --hf-config with it "
                         "(Korthikanti et al.'s formulas are for attention through memory)")
    if model is not None or hf_config is not None:
        from costmodel.cli.shape import described
        from costmodel.training.counts import parse_count

        # --seq is the sequence a config.json without max_position_embeddings (BLOOM's) needs
        base = described(model=model, hf_config=hf_config, seq=None if seq is None else parse_count(seq))
        told = base.told
        from costmodel.describe.models import build_shape

        shape = build_shape(base.shape)
        if params is None:  # every weight held, as the model card counts them (all experts, both embeddings)
            from costmodel.step.flops import parameters

            params = parameters(shape).total
        if batch is not None:  # the activations, of every layer
            seq = str(shape.sequence) if seq is None else seq
            hidden = str(shape.hidden) if hidden is None else hidden
            heads = str(shape.heads) if heads is None else heads
            layers = shape.layers if layers is None else layers
            import dataclasses

            from costmodel.step.config import ATTENTIONS
            from costmodel.training.counts import parse_count

            kind = "flash" if attention is None else attention
            if kind not in ATTENTIONS:
                raise InputError(f"--attention {kind} is not flash or unfused")
            own = dataclasses.replace(shape, sequence=parse_count(seq), hidden=parse_count(hidden),
                                      heads=parse_count(heads))  # the options given, checked as step does
            if tp >= 1 and own.groups % tp:
                raise InputError(f"--tp {tp} does not divide the model's {own.groups} key-value heads; each "
                                 "tp rank holds whole key-value heads")
            dropout = bool(base.settings.get("dropout", True))
            layer = {"layer": _model_layer(own, attention=kind, dropout=dropout)}

    import dataclasses

    report = training_memory(params, dtype=dtype, dp=dp, zero=zero, optimizer_bytes=optimizer_bytes, tp=tp,
                             seq=seq, batch=batch, hidden=hidden, heads=heads, sequence_parallel=sp,
                             recompute=recompute, layers=layers, gpu=gpu, **layer)
    emit(dataclasses.replace(report, notes=(*told, *report.notes)), as_json=as_json)


def _model_layer(shape: Any, *, attention: str, dropout: bool) -> Any:
    """The model's own layer for ``memory``'s activations, counted as ``step`` counts it."""
    from costmodel.step.memory import activation_bytes
    from costmodel.training.memory import ModelLayer, layer_words

    def bytes_of(micro_batch: int, tp: int, sequence_parallel: bool, recompute: str) -> Any:
        return activation_bytes(shape, micro_batch=micro_batch, tp=tp, sequence_parallel=sequence_parallel,
                                recompute=recompute, attention=attention, dropout=dropout, moe=shape.moe)

    return ModelLayer(layer_words(shape, attention=attention, dropout=dropout), bytes_of)


# -- traffic --------------------------------------------------------------------------------------


@traffic_app.command("ps")
def traffic_ps(
    workers: Workers,
    model: Annotated[Fraction, option("--model", metavar="SIZE", parser=value_parser(_size),
                                    help="Model (and gradient) size: 400MB, 1.5GiB.")],
    servers: Annotated[int, typer.Option("--servers", metavar="S", help="Server shards.")] = 1,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Bytes at a parameter server per step (N pushes, N pulls) against a ring all-reduce.

    Example: costmodel traffic ps --workers 16 --model 400MB
    """
    from costmodel.training.traffic import ps_traffic

    emit(ps_traffic(model, workers=workers, servers=servers, alpha=alpha, beta=beta, bandwidth=bandwidth,
                    profile=profile), as_json=as_json)


@traffic_app.command("tp")
def traffic_tp(
    batch: Annotated[str, option("--batch", metavar="B", help="Micro-batch size b.")],
    seq: Annotated[str, option("--seq", metavar="S", help="Sequence length s.")],
    hidden: Hidden,
    tp: Tp,
    dtype: Annotated[str, typer.Option("--dtype", metavar="DTYPE", help="Activation dtype.")] = "bf16",
    layers: Annotated[int, typer.Option("--layers", metavar="L", help="Transformer blocks.")] = 1,
    algorithm: Algorithm = "ring",
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Megatron tensor parallelism: 2 + 2 all-reduces of b·s·h activations per transformer block.

    Example: costmodel traffic tp --batch 1 --seq 2048 --hidden 12288 --tp 8 --profile nvlink4
    """
    from costmodel.training.traffic import tensor_parallel_traffic

    emit(tensor_parallel_traffic(batch=batch, seq=seq, hidden=hidden, tp=tp, dtype=dtype, layers=layers,
                                 algorithm=algorithm, alpha=alpha, beta=beta, bandwidth=bandwidth,
                                 profile=profile), as_json=as_json)


@traffic_app.command("moe")
def traffic_moe(
    tokens: Annotated[str, option("--tokens", metavar="T", help="Tokens per GPU entering the layer.")],
    hidden: Hidden,
    experts: Annotated[int, option("--experts", metavar="E", help="Experts in the layer.")],
    ep: Annotated[int | None, option("--ep", metavar="G",
                                   help="Expert-parallel GPUs (default: one per expert).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", metavar="K", help="Experts per token.")] = 1,
    dtype: Annotated[str, typer.Option("--dtype", metavar="DTYPE", help="Activation dtype.")] = "bf16",
    capacity_factor: Annotated[str | None, typer.Option(
        "--capacity-factor", metavar="C",
        help="Each expert's block sized for C·k·T/E tokens and sent padded (default 1).")] = None,
    algorithm: Algorithm = "pairwise",
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Mixture of experts: dispatch and combine all-to-alls per layer, (G − 1)/G leaving each GPU.

    Example: costmodel traffic moe --tokens 4096 --hidden 4096 --experts 8 --top-k 2
    """
    from costmodel.training.traffic import moe_traffic

    emit(moe_traffic(tokens=tokens, hidden=hidden, experts=experts, ep=ep, top_k=top_k, dtype=dtype,
                     capacity_factor=capacity_factor, algorithm=algorithm, alpha=alpha, beta=beta,
                     bandwidth=bandwidth, profile=profile),
         as_json=as_json)


@traffic_app.command("staleness")
def traffic_staleness(
    workers: Annotated[int, option("--workers", metavar="N", help="Workers.")],
    bound: Annotated[int | None, option("--bound", metavar="S",
                                        help="SSP staleness bound in clocks.")] = None,
    as_json: Json = False,
) -> None:
    """Staleness of reads: BSP 0, SSP at most s clocks, ASP unbounded with N − 1 expected.

    Example: costmodel traffic staleness --workers 16 --bound 3

    Workers of unequal speed simulated, with throughput and idle time: costmodel federated sync.
    """
    from costmodel.training.traffic import staleness

    emit(staleness(workers=workers, bound=bound), as_json=as_json)


# -- compression ----------------------------------------------------------------------------------

Method = Annotated[str, option("--method", metavar="METHOD", help="topk, fp16, bf16, fp8, int8 or onebit.")]
Density = Annotated[str | None, option("--density", metavar="D", help="Top-k: the kept fraction, 0.01.")]
Scheme = Annotated[str | None, option(
    "--scheme", metavar="SCHEME",
    help="fp8, int8, onebit: reduce-scatter (DeepSpeed's compressed all-reduce, default) or allgather.")]


@app.command("compress")
def compress(
    elements: Annotated[int, option("--elements", metavar="N", parser=value_parser(_count),
                                  help="Gradient elements: 25M, 1.5e9.")],
    method: Method,
    density: Density = None,
    source: Annotated[str, typer.Option("--from", metavar="DTYPE",
                                        help="The dense gradient's dtype.")] = "fp32",
    index_bytes: Annotated[int | None, option("--index-bytes", metavar="I",
                                            help="Top-k: bytes per index (default 4).")] = None,
    ranks: Ranks = None,
    scheme: Scheme = None,
    alpha: Alpha = None, beta: Beta = None, bandwidth: Bandwidth = None, profile: Profile = None,
    as_json: Json = False,
) -> None:
    """Bytes of a compressed gradient and the ratio to dense; with -p and a link, the time saved.

    Example: costmodel compress --elements 25M --method topk --density 0.01 -p 16 --profile textbook
    """
    from costmodel.training.compression import compress as run

    emit(run(elements, method=method, density=density, source=source, index_bytes=index_bytes, p=ranks,
             scheme=scheme, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile), as_json=as_json)


@app.command("error-feedback")
def error_feedback(
    vector: Annotated[str | None, option("--vector", metavar="V,V,...",
                                       help="The gradient: 0.5,-1.2,0.3.")] = None,
    random: Annotated[int | None, option("--random", metavar="N",
                                       help="Or a random gradient of N entries.")] = None,
    seed: Annotated[int | None, option("--seed", metavar="S", help="Seed of the random gradient.")] = None,
    steps: Annotated[int, typer.Option("--steps", metavar="S", help="Steps to simulate.")] = 3,
    method: Annotated[str, typer.Option("--method", metavar="METHOD", help="onebit or topk.")] = "onebit",
    density: Density = None,
    as_json: Json = False,
) -> None:
    """Error feedback step by step: g += residual; send C(g); residual = g − C(g).

    Example: costmodel error-feedback --vector 0.5,-1.2,0.3 --steps 3
    """
    from costmodel.training.compression import error_feedback as simulate

    emit(simulate(vector, steps=steps, method=method, density=density, size=random, seed=seed),
         as_json=as_json)


# -- output ---------------------------------------------------------------------------------------


def _num(x: Any) -> str:
    from costmodel.units import format_number

    return format_number(x, digits=6)


def _exact(x: Any) -> str:
    """A number, with its exact fraction when that is not a short decimal."""
    from costmodel.units import format_exact

    value = Fraction(x)
    shown = _num(value)
    return shown if Fraction(shown) == value else f"{shown} ({format_exact(value)})"


def _vector(xs: Any) -> str:
    return "(" + ", ".join(_num(x) for x in xs) + ")"


def _bytes(x: Any) -> str:
    from costmodel.units import format_size

    return format_size(x)


def _time(x: Any) -> str:
    from costmodel.units import format_time

    return "–" if x is None else format_time(x)


def _group(*parts: Any) -> Any:
    from rich.console import Group

    return Group(*(markup(p) if isinstance(p, str) else p for p in parts))


def _quantities_under(heading: str, r: PSTraffic | TensorParallelTraffic | MoETraffic | Compression,
                      rows: list[tuple[str, str]]) -> Rendered:
    """The quantities *rows* of the result *r* under *heading*, and the link line when a time was priced
    (bytes-only results have none)."""
    from costmodel.cli.render_cost import link_line

    priced = f"\n{link_line(r.link)}" if r.link is not None else ""
    return _group(f"{heading}{priced}", "", _quantities(rows)), r.notes


def _quantities(rows: list[tuple[str, str]]) -> Any:
    out = table("quantity", "value", numeric=("value",))
    for name, value in rows:
        out.add_row(name, value)
    return out


def _weighted_mean(r: WeightedLoss | WeightedGradient, what: str, values: Any, show: Any, total: Any, *,
                   numeric: bool, weighted: str, plain: str) -> Rendered:
    """A weighted mean of the workers' *values* (a loss or a gradient): each worker's count (samples,
    batch or none), weight and value, then the *weighted* and *plain* means shown by *total*."""
    head = {"sizes": "samples n_k", "batches": "batch b_k", "weights": "–"}[r.basis]
    out = table("worker", head, "weight", what, numeric=(head, "weight", *((what,) if numeric else ())))
    for k, (w, x) in enumerate(zip(r.weights, values, strict=True)):
        out.add_row(str(k), "–" if r.counts is None else str(r.counts[k]), _exact(w), show(x))
    summary = f"{weighted} = [bold]{total(r.weighted)}[/bold]\n{plain} = {total(r.unweighted)}"
    return _group(f"[bold]{what}[/bold] · sample-weighted against plain mean", "", out, "", summary), r.notes


@renders("costmodel.training.loss.WeightedLoss")
def _render_loss(r: WeightedLoss) -> Rendered:
    return _weighted_mean(r, "loss", r.losses, _num, _exact, numeric=True,
                          weighted="weighted mean Σ w_k·L_k", plain="plain mean (1/m)·Σ L_k")


@renders("costmodel.training.loss.WeightedGradient")
def _render_gradient(r: WeightedGradient) -> Rendered:
    return _weighted_mean(r, "gradient", r.gradients, _vector, _vector, numeric=False,
                          weighted="weighted Σ w_k·g_k", plain="plain mean (1/m)·Σ g_k")


@renders("costmodel.training.federated.FedAvgRound")
def _render_fedavg(r: FedAvgRound) -> Rendered:
    out = table("client", "|D_k|", "answered", "weight", "model θ_k", numeric=("|D_k|", "weight"))
    for k, (n, w, m) in enumerate(zip(r.sizes, r.weights, r.models, strict=True)):
        out.add_row(str(k), str(n), "no" if k in r.dropped else "yes", _exact(w), _vector(m))
    summary = (f"global model θ = Σ weight_k·θ_k = [bold]{_vector(r.global_model)}[/bold]\n"
               f"plain mean of the answering models = {_vector(r.unweighted_mean)}")
    return _group("[bold]fedavg[/bold] · one aggregation round", "", out, "", summary), r.notes


@renders("costmodel.training.memory.MemoryReport")
def _render_memory(r: MemoryReport) -> Rendered:
    from rich.text import Text

    parts: list[Any] = ["[bold]memory[/bold] · data-parallel training"]
    if r.params is not None:
        parts += ["", _quantities([
            ("parameters Ψ", f"{r.params:,}"),
            (f"bytes per parameter ({r.dtype.name})", str(r.dtype.bytes_per_element)),
            ("weights per replica", _bytes(r.weights_bytes_per_replica)),
            *_weight_rows(r),
        ])]
    if r.zero is not None:
        z = r.zero
        out = table("ZeRO stage", "partitioned", "model states per GPU", numeric=("model states per GPU",))
        for st in z.stages:
            style = "bold" if st.stage == z.stage else ""
            out.add_row(Text(f"{st.stage} {st.name}", style=style), _zero_what(st.stage),
                        Text(_bytes(st.model_state_bytes_per_gpu), style=style))
        w, g, k = z.weight_bytes_per_param, z.grad_bytes_per_param, z.optimizer_bytes_per_param
        gpus = f"{z.gpus} GPU{'s' if z.gpus > 1 else ''}"
        parts += ["", f"ZeRO over N = {gpus}, {w} + {g} + K = {w + g + k} bytes per parameter (K = {k}); "
                      f"stage {z.stage}: {z.formula}", out]
    if r.activations is not None:
        a = r.activations
        out = table("variant", "formula", "bytes per layer", numeric=("bytes per layer",))
        for v in a.variants:
            style = "bold" if v.chosen else ""
            out.add_row(Text(v.name, style=style), v.formula, Text(_bytes(v.bytes_per_layer), style=style))
        total = "" if a.bytes_total is None else f" · × {a.layers} layers = {_bytes(a.bytes_total)}"
        parts += ["", f"activations per layer: s = {a.seq}, b = {a.batch}, h = {a.hidden}, a = {a.heads}, "
                      f"t = {a.tp}{total}", out]
    notes = r.notes
    if r.fit is not None:
        parts += ["", *_fit_lines(r.fit)]
        notes = (*notes, *r.fit.notes)
    return _group(*parts), notes


def _fit_lines(fit: Any) -> list[str]:
    """Whether the memory per GPU fits the GPU, and by how much it does not."""
    from rich.markup import escape

    counted = " + ".join(fit.counted)
    where = f"{escape(fit.title)} ({escape(fit.gpu)}, {_bytes(fit.capacity_bytes)})"
    if fit.fits:
        verdict = (f"[bold]fits[/bold] one {where}: {_bytes(fit.required_bytes)} per GPU, "
                   f"{_bytes(fit.free_bytes)} left")
    else:
        verdict = (f"[bold]does not fit[/bold] one {where}: {_bytes(fit.required_bytes)} per GPU is "
                   f"[bold]{_bytes(fit.excess_bytes)}[/bold] over its memory")
    return [verdict, f"[dim]per GPU: {escape(counted)}[/dim]"]


def _weight_rows(r: MemoryReport) -> list[tuple[str, str]]:
    """Weights per GPU (when it differs from a replica's) and over all GPUs."""
    rows = []
    if r.weights_bytes_per_gpu != r.weights_bytes_per_replica:
        split = " and ZeRO-3 over N" if r.weights_partitioned else ""
        rows.append((f"weights per GPU (Ψ/t{split})" if r.tp > 1 else "weights per GPU (ZeRO-3: 1/N)",
                     _bytes(r.weights_bytes_per_gpu)))
    if r.weights_partitioned:
        rows.append((f"weights over {r.dp:,} GPU{'s' if r.dp > 1 else ''} (one copy, partitioned)",
                     _bytes(r.weights_bytes_total)))
    else:
        rows.append((f"weights over {r.dp:,} replica{'s' if r.dp > 1 else ''}",
                     _bytes(r.weights_bytes_total)))
    return rows


def _zero_what(stage: int) -> str:
    from costmodel.training.memory import ZERO_STAGES

    return ZERO_STAGES[stage][1]


@renders("costmodel.training.traffic.PSTraffic")
def _render_ps(r: PSTraffic) -> Rendered:
    rows = [
        ("model n", _bytes(r.model_bytes)),
        (f"into each of {r.servers} server{'s' if r.servers > 1 else ''} (N·n/S)", _bytes(r.server_bytes_in)),
        ("out of each server (N·n/S)", _bytes(r.server_bytes_out)),
        ("ring all-reduce, sent per worker (2(N − 1)/N·n)", _bytes(r.ring_bytes_sent_per_worker)),
        ("hot spot: server in / ring worker sent", _exact(r.hot_spot_ratio)),
    ]
    if r.ps_time_s is not None:
        rows += [("parameter-server step time", _time(r.ps_time_s)),
                 ("ring all-reduce time", _time(r.ring.time_s))]
    return _quantities_under(f"[bold]traffic ps[/bold] · N = {r.workers} workers, S = {r.servers}", r, rows)


@renders("costmodel.training.traffic.TensorParallelTraffic")
def _render_tp(r: TensorParallelTraffic) -> Rendered:
    d = r.to_dict()
    rows = [
        ("all-reduce size b·s·h·bytes", _bytes(r.allreduce_bytes)),
        ("all-reduces per block (forward + backward)", f"{r.allreduces_forward} + {r.allreduces_backward}"),
        (f"sent per rank per all-reduce ({r.allreduce.algorithm})", _bytes(r.allreduce.bytes_sent_per_rank)),
        ("sent per rank per block", _bytes(d["bytes_sent_per_rank_per_block"])),
    ]
    if r.layers > 1:
        rows.append((f"sent per rank per step ({r.layers} blocks)",
                     _bytes(d["bytes_sent_per_rank_per_step"])))
    if r.link is not None:
        rows += [("time per all-reduce", _time(d["allreduce_time_s"])),
                 ("time per block", _time(d["block_time_s"]))]
    return _quantities_under(f"[bold]traffic tp[/bold] · t = {r.tp}, b = {r.batch}, s = {r.seq}, "
                             f"h = {r.hidden}, {r.dtype.name}", r, rows)


@renders("costmodel.training.traffic.MoETraffic")
def _render_moe(r: MoETraffic) -> Rendered:
    d = r.to_dict()
    padded = r.capacity_factor != 1
    rows = [
        (f"send buffer per all-to-all ({'c·' if padded else ''}tokens·k·h·bytes)",
         _bytes(r.send_buffer_bytes)),
        ("fraction leaving the GPU (G − 1)/G", _exact(r.fraction_leaving)),
        ("leaving per all-to-all", _bytes(r.bytes_leaving_per_alltoall)),
        ("leaving per layer, forward (2 all-to-alls)", _bytes(d["bytes_leaving_per_layer_forward"])),
        ("leaving per layer, forward + backward (4)", _bytes(d["bytes_leaving_per_layer_step"])),
    ]
    if r.link is not None:
        rows += [("time per all-to-all", _time(d["alltoall_time_s"])),
                 ("time per layer, forward + backward", _time(d["layer_step_time_s"]))]
    return _quantities_under(f"[bold]traffic moe[/bold] · E = {r.experts} experts on G = {r.ep} GPUs, "
                             f"top-{r.top_k}, {r.dtype.name}"
                             + (f", c = {_exact(r.capacity_factor)}" if padded else ""),
                             r, rows)


@renders("costmodel.training.traffic.Staleness")
def _render_staleness(r: Staleness) -> Rendered:
    out = table("protocol", "staleness", numeric=("staleness",))
    out.add_row("BSP", "0")
    if r.bound is not None:
        out.add_row(f"SSP, s = {r.bound}",
                    f"≤ {r.bound} clocks (≤ {r.ssp_max_unseen_updates} updates unseen)")
    out.add_row("ASP", f"unbounded; expected {r.asp_expected_staleness} updates")
    return _group(f"[bold]staleness[/bold] · N = {r.workers} workers", "", out), r.notes


@renders("costmodel.training.compression.Compression")
def _render_compression(r: Compression) -> Rendered:
    rows = [
        ("exchange scheme", r.scheme),
        (f"dense ({r.elements:,} × {r.source.name})", _bytes(r.dense_bytes)),
        (f"{r.method.name}: {r.method.formula}", _bytes(r.bytes)),
        ("ratio dense / compressed", _exact(r.ratio)),
    ]
    if r.k is not None:
        rows.insert(1, ("k kept", f"{r.k:,}"))
    if r.dense is not None and r.compressed is not None:
        rows.append(("dense ring all-reduce, sent per rank", _bytes(r.dense.bytes_sent_per_rank)))
        rows.append((f"compressed {r.scheme}, sent per rank", _bytes(r.compressed.bytes_sent_per_rank)))
        if len(r.compressed.steps) > 1:
            rows += [(f"  {s.collective}: {s.what}", _bytes(s.cost.bytes_sent_per_rank))
                     for s in r.compressed.steps]
        rows.append(("ratio of bytes sent per rank",
                     _exact(r.dense.bytes_sent_per_rank / r.compressed.bytes_sent_per_rank)))
    if r.time_saved_s is not None and r.dense is not None and r.compressed is not None:  # all with a link
        rows += [("dense time", _time(r.dense.time_s)), ("compressed time", _time(r.compressed.time_s)),
                 ("time saved", _time(r.time_saved_s) if r.time_saved_s >= 0
                  else "−" + _time(-r.time_saved_s))]
    p = "" if r.p is None else f" · p = {r.p}"
    return _quantities_under(f"[bold]compress[/bold] · {r.method.summary}{p}", r, rows)


@renders("costmodel.training.compression.ErrorFeedbackRun")
def _render_error_feedback(r: ErrorFeedbackRun) -> Rendered:
    scaled = r.method == "onebit"
    columns = ("step", "g + residual", "sent", *(("scale",) if scaled else ()), "residual")
    out = table(*columns, numeric=("step", "scale"))
    for st in r.steps:
        out.add_row(str(st.step), _vector(st.corrected), _vector(st.transmitted),
                    *((_num(st.scale),) if scaled else ()), _vector(st.residual))
    return _group(f"[bold]error feedback[/bold] · {r.method} on g = {_vector(r.vector)}", "", out), r.notes
