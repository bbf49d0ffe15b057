"""Worked examples on what the hardware does with a step: FLOPs utilization (MFU and HFU), the roofline
of a matrix product and its waves of tiles, nccl-tests' bus bandwidth read backwards, the all-to-alls of
expert parallelism and the collectives of tensor and sequence parallelism.

Each example computes with the library: :func:`costmodel.step.flops.achieved_flops` (model and hardware
FLOPs, MFU, HFU), the GPU presets of :mod:`costmodel.gpus` with
:func:`costmodel.gpus.curve.gemm_roofline` and :func:`~costmodel.gpus.curve.tile_waves`,
:mod:`costmodel.collectives.busbw`, :func:`costmodel.training.moe_traffic`,
:func:`costmodel.training.tensor_parallel_traffic` and the registry's α–β costs (:meth:`Work.cost`).
Sources: Chowdhery et al. 2022 (PaLM, appendix B), Narayanan et al. 2021, Korthikanti et al. 2022,
Williams et al. 2009, NVIDIA's Matrix Multiplication Background guide, nccl-tests' PERFORMANCE.md,
Fedus et al. 2022, Lepikhin et al. 2021 and Shoeybi et al. 2019.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, NAME, NUMBER, RATE, SIZE, TIME, show_exact
from costmodel.examples.work import Given, Work

_TERA = 10**12
_PETA = 10**15
_GIGA = 10**9


def _size(x: Any) -> str:
    return SIZE.term(x)


def _rate(x: Any) -> str:
    return RATE.term(x)


def _link(alpha: Any, bandwidth: Any) -> Any:
    """The α–β link of an example's start-up latency and bandwidth."""
    from costmodel.params import LinkParams

    if bandwidth <= 0:
        raise InputError(f"bandwidth={RATE.term(bandwidth)} is not positive")
    return LinkParams(alpha_s=Fraction(alpha), beta_s_per_byte=1 / Fraction(bandwidth))


# -- FLOPs utilization ----------------------------------------------------------------------------


@example("mfu-hfu", title="Model and hardware FLOPs utilization of a training iteration",
         source="Chowdhery et al. 2022 (PaLM, appendix B: MFU and HFU); Narayanan et al. 2021 (equation 3)",
         topic="mfu-hfu",
         givens=[Given("layers", "layers", COUNT, 24, "l"),
                 Given("hidden", "hidden size", COUNT, 2048, "h"),
                 Given("heads", "attention heads", COUNT, 16, "a"),
                 Given("seq", "sequence length", COUNT, 2048, "s"),
                 Given("vocab", "vocabulary", COUNT, 51200, "V"),
                 Given("batch", "sequences per iteration (global batch)", COUNT, 512, "B"),
                 Given("time", "measured iteration time", TIME, "8 s", "t"),
                 Given("gpus", "GPUs", COUNT, 8, "G"),
                 Given("gpu", "GPU (a preset)", NAME, "a100-80gb"),
                 Given("dtype", "matrix dtype", NAME, "bf16"),
                 Given("recompute", "activation recomputation (none or full)", NAME, "none"),
                 Given("target", "target MFU", NUMBER, "0.5")],
         answer="mfu", slips=("six-n-only", "recompute-count", "achieved-for-peak"))
def mfu_hfu(w: Work) -> None:
    """MFU counts the model's FLOPs (forward and backward, no recomputation) over the time and the peak;
    HFU counts what the GPUs ran, the recomputed forward included.

    Source: Chowdhery et al. 2022, appendix B; Narayanan et al. 2021, section 5.1, equation (3);
    Korthikanti et al. 2022; ``costmodel.step.flops.achieved_flops`` and ``costmodel.gpus``.  The slips
    modelled: ``six-n-only`` (6·N·tokens for the model count), ``recompute-count`` (the two counts
    swapped), ``achieved-for-peak`` (the measured GEMM rate as the denominator).
    """
    from costmodel.gpus import load_gpu
    from costmodel.step.flops import TransformerShape, achieved_flops

    layers, hidden, heads, seq, vocab, batch, time, gpus, gpu_name, dtype, recompute, target = w.values(
        "layers", "hidden", "heads", "seq", "vocab", "batch", "time", "gpus", "gpu", "dtype", "recompute",
        "target")
    if not 0 < target <= 1:
        raise InputError(f"target={show_exact(target)} is not an MFU; give 0 < target ≤ 1")
    shape = TransformerShape(layers=layers, hidden=hidden, heads=heads, sequence=seq, vocabulary=vocab)
    gpu = load_gpu(gpu_name)
    peak = gpu.peak(dtype)
    # the rates without the peak: an exercise on the time a target MFU gives keeps the default time, which
    # on a large model may imply more than the peak (achieved_flops refuses that with a peak)
    r = achieved_flops(shape, batch=batch, time_s=time, gpus=gpus, recompute=recompute.lower())
    w.answer("tokens", "tokens per iteration", r.tokens, COUNT, f"B·s = {batch} × {seq}")
    w.step("Weights N (the matrices and the output layer)", "l·12h² + V·h", r.parameters, COUNT)
    six_n = w.answer("six-n", "6·N·tokens, in PFLOP", Fraction(r.six_n_flops, _PETA), NUMBER,
                     f"6 × {r.parameters:,} × {r.tokens:,} / 10¹⁵")
    model, model_how = r.model_flops / _PETA, "72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)), forward and backward"
    full = r.recompute == "full"
    hardware, hardware_how = r.hardware_flops / _PETA, ("the model FLOPs + one more forward of every layer"
                                                        if full else "no recomputation: the model FLOPs")
    if w.slipped("six-n-only"):
        model, model_how = six_n, "6·N·tokens"
    if w.slipped("recompute-count"):
        (model, model_how), (hardware, hardware_how) = (hardware, hardware_how), (model, model_how)
    w.answer("model-pflop", "model FLOPs per iteration, in PFLOP", model, NUMBER, model_how)
    w.answer("hardware-pflop", "hardware FLOPs per iteration, in PFLOP", hardware, NUMBER, hardware_how)
    achieved = gpu.achieved(dtype)
    if w.slipped("achieved-for-peak"):
        denominator, how = achieved, f"the measured GEMM rate {show_exact(achieved / _TERA)} TFLOP/s"
    else:
        denominator, how = peak, f"the {dtype} peak {show_exact(peak / _TERA)} TFLOP/s of {gpu.name}"
    w.step("Denominator, in TFLOP/s", how, denominator / _TERA, NUMBER)
    model_rate = w.answer("model-tflops", "model TFLOP/s per GPU", model * _PETA / (time * gpus) / _TERA,
                          NUMBER,
                          f"model FLOPs / (t·G) = {show_exact(model)} PFLOP / ({TIME.term(time)} × {gpus})")
    hardware_rate = w.answer("hardware-tflops", "hardware TFLOP/s per GPU",
                             hardware * _PETA / (time * gpus) / _TERA, NUMBER, "hardware FLOPs / (t·G)")
    mfu = w.answer("mfu", "MFU", model_rate * _TERA / denominator, NUMBER, "model FLOP/s per GPU / peak")
    w.answer("hfu", "HFU", hardware_rate * _TERA / denominator, NUMBER, "hardware FLOP/s per GPU / peak")
    assert r.model_flops_per_s_per_gpu is not None
    w.check("MFU", mfu, r.model_flops_per_s_per_gpu / peak)
    at_target = w.answer("time-at-target", f"iteration time at MFU {show_exact(target)}",
                         model * _PETA / (target * denominator * gpus), TIME, "model FLOPs / (MFU·peak·G)")
    w.answer("tokens-per-s", f"tokens per second at MFU {show_exact(target)}", r.tokens / at_target, NUMBER,
             "B·s / t")
    if w.checking:
        again = achieved_flops(shape, batch=batch, time_s=at_target, gpus=gpus, peak_flops=peak)
        w.check("MFU at the target's time", again.mfu, target)


# -- the roofline of a matrix product ----------------------------------------------------------------


@example("gemm-roofline", title="A matrix product on the roofline: intensity, ridge point, bound, time",
         source="Williams et al. 2009 (the roofline); NVIDIA, Matrix Multiplication Background guide, 2.3",
         topic="roofline",
         givens=[Given("m", "rows of A and C", COUNT, 8192, "m"),
                 Given("n", "columns of B and C", COUNT, 128, "n"),
                 Given("k", "inner dimension", COUNT, 8192, "k"),
                 Given("dtype", "element type of A, B and C", NAME, "bf16"),
                 Given("gpu", "GPU (a preset)", NAME, "h100-sxm")],
         answer="time", slips=("roofline-sum", "elements-for-bytes"))
def gemm_roofline_example(w: Work) -> None:
    """C = A·B costs 2·m·n·k FLOPs and moves e·(m·k + k·n + m·n) bytes; it is compute-bound when that
    intensity reaches the ridge point P/B, and takes max(FLOPs/P, bytes/B).

    Source: Williams, Waterman & Patterson 2009; NVIDIA, Matrix Multiplication Background User's Guide,
    section 2.3; ``costmodel.gpus.curve.gemm_roofline`` on a preset of ``costmodel.gpus``.  The slips
    modelled: ``roofline-sum`` (the two times added), ``elements-for-bytes`` (e left out of the bytes).
    """
    from costmodel.gpus import load_gpu
    from costmodel.gpus.curve import gemm_roofline
    from costmodel.training.counts import parse_dtype

    m, n, k, dtype, gpu_name = w.values("m", "n", "k", "dtype", "gpu")
    gpu = load_gpu(gpu_name)
    peak, bandwidth = gpu.peak(dtype), gpu.memory_bandwidth_bytes_per_s
    e = parse_dtype(dtype).bytes_per_element
    used = 1 if w.slipped("elements-for-bytes") else e
    r = gemm_roofline(m, n, k, peak=peak, bandwidth=bandwidth, element=used)
    w.step(f"{gpu.name}: {dtype} peak, in TFLOP/s", "P", peak / _TERA, NUMBER)
    w.step(f"{gpu.name}: memory bandwidth (datasheet)", "B", bandwidth, RATE)
    w.answer("gflop", "FLOPs of the product, in GFLOP", Fraction(r.flops, _GIGA), NUMBER,
             f"2·m·n·k = 2 × {m} × {n} × {k} / 10⁹")
    w.answer("bytes", "bytes moved (A and B read, C written once)", r.n_bytes, SIZE,
             f"{used}·(m·k + k·n + m·n) B")
    intensity = w.answer("intensity", "arithmetic intensity, FLOP per byte", r.intensity_flops_per_byte,
                         NUMBER, "FLOPs / bytes")
    ridge = w.answer("ridge", "ridge point of the GPU, FLOP per byte", r.ridge_flops_per_byte, NUMBER,
                     f"P/B = {show_exact(peak / _TERA)} TFLOP/s / {_rate(bandwidth)}")
    w.answer("bound", "compute-bound or memory-bound", r.bound, NAME,
             f"intensity {show_exact(intensity)} {'≥' if r.bound == 'compute' else '<'} "
             f"ridge {show_exact(ridge)}")
    w.step("Math time", "FLOPs / P", r.math_s, TIME)
    w.step("Memory time", "bytes / B", r.memory_s, TIME)
    if w.slipped("roofline-sum"):
        time = w.answer("time", "time on the roofline", r.math_s + r.memory_s, TIME, "math + memory")
    else:
        time = w.answer("time", "time on the roofline", r.time_s, TIME, "max(math, memory)")
    w.answer("attainable", "attainable TFLOP/s", Fraction(r.flops) / time / _TERA, NUMBER,
             "FLOPs / time = min(P, intensity·B)")
    if not w.slipped("roofline-sum"):
        w.check("attainable FLOP/s", Fraction(r.flops) / time, r.attainable_flops_per_s)


@example("gemm-batch-threshold", title="How many tokens make a linear layer compute-bound?",
         source="NVIDIA, Matrix Multiplication Background guide, 2.3; Williams et al. 2009 (the roofline)",
         topic="roofline",
         givens=[Given("n", "output features (columns of the weight)", COUNT, 8192, "n"),
                 Given("k", "input features (rows of the weight)", COUNT, 8192, "k"),
                 Given("dtype", "element type", NAME, "bf16"),
                 Given("gpu", "GPU (a preset)", NAME, "h100-sxm")],
         answer="rows", slips=("elements-for-bytes",))
def gemm_batch_threshold(w: Work) -> None:
    """m tokens through a k × n weight: the intensity 2mnk / (e(mk + kn + mn)) is about 2m/e for few
    tokens, and reaches the ridge P/B from m* = ⌈R·e·k·n / (2nk − R·e·(n + k))⌉ on.

    Source: NVIDIA, Matrix Multiplication Background User's Guide, section 2.3; Williams, Waterman &
    Patterson 2009; ``costmodel.gpus.curve.compute_bound_rows`` and ``gemm_roofline``.  The slip
    modelled: ``elements-for-bytes`` (e left out of the bytes).
    """
    from costmodel.gpus import load_gpu
    from costmodel.gpus.curve import compute_bound_rows, gemm_roofline
    from costmodel.training.counts import parse_dtype

    n, k, dtype, gpu_name = w.values("n", "k", "dtype", "gpu")
    gpu = load_gpu(gpu_name)
    peak, bandwidth = gpu.peak(dtype), gpu.memory_bandwidth_bytes_per_s
    e = 1 if w.slipped("elements-for-bytes") else parse_dtype(dtype).bytes_per_element
    one = gemm_roofline(1, n, k, peak=peak, bandwidth=bandwidth, element=e)
    ridge = w.answer("ridge", "ridge point of the GPU, FLOP per byte", one.ridge_flops_per_byte, NUMBER,
                     f"P/B = {show_exact(peak / _TERA)} TFLOP/s / {_rate(bandwidth)}")
    w.answer("intensity-one", "intensity for one token, FLOP per byte", one.intensity_flops_per_byte, NUMBER,
             f"2nk / ({e}·(k + kn + n)): the weight's bytes dominate")
    limit = w.step("Intensity as m grows", f"2nk / ({e}·(n + k))", Fraction(2 * n * k, e * (n + k)), NUMBER)
    rows = compute_bound_rows(n, k, peak=peak, bandwidth=bandwidth, element=e)
    if rows is None:
        raise InputError(f"no batch makes a {k} × {n} weight compute-bound on {gpu.name} in {dtype}: the "
                         f"intensity tends to {show_exact(limit)} FLOP/B, below the ridge "
                         f"{show_exact(ridge)}")
    w.step("About", f"R·e/2 = {show_exact(ridge)} × {e}/2, for m much smaller than n and k", ridge * e / 2,
           NUMBER)
    w.answer("rows", "fewest tokens for a compute-bound product", rows, COUNT,
             "⌈R·e·k·n / (2nk − R·e·(n + k))⌉")
    w.check("bound at m*", gemm_roofline(rows, n, k, peak=peak, bandwidth=bandwidth, element=e).bound,
            "compute")
    if rows > 1:
        w.check("bound below m*", gemm_roofline(rows - 1, n, k, peak=peak, bandwidth=bandwidth,
                                                element=e).bound, "memory")


@example("gemm-waves", title="Tile and wave quantization of a matrix product",
         source="NVIDIA, Matrix Multiplication Background User's Guide, sections 3.1 and 3.2",
         topic="roofline",
         givens=[Given("m", "rows of C", COUNT, 1664, "m"),
                 Given("n", "columns of C", COUNT, 2048, "n"),
                 Given("sms", "streaming multiprocessors", COUNT, 108, "SMs"),
                 Given("tile_m", "tile rows", COUNT, 256, "t_m"),
                 Given("tile_n", "tile columns", COUNT, 128, "t_n")],
         answer="waves")
def gemm_waves(w: Work) -> None:
    """C is cut into ⌈m/t_m⌉·⌈n/t_n⌉ tiles, one per SM at a time: ⌈tiles/SMs⌉ waves, the last one partial.

    Source: NVIDIA, Matrix Multiplication Background User's Guide (DU-09799-001), sections 3.1 and 3.2;
    ``costmodel.gpus.curve.tile_waves``.
    """
    from costmodel.gpus.curve import tile_waves

    m, n, sms, tm, tn = w.values("m", "n", "sms", "tile_m", "tile_n")
    r = tile_waves(m, n, sms=sms, tile=(tm, tn))
    w.step("Tiles along m and along n", f"⌈{m}/{tm}⌉, ⌈{n}/{tn}⌉", f"{-(-m // tm)}, {-(-n // tn)}")
    w.answer("tiles", "output tiles", r.tiles, COUNT, "⌈m/t_m⌉·⌈n/t_n⌉")
    w.answer("waves", "waves on the SMs", r.waves, COUNT, f"⌈tiles/SMs⌉ = ⌈{r.tiles}/{sms}⌉")
    w.answer("efficiency", "share of the waves' SM slots doing work", r.efficiency, NUMBER,
             f"tiles/(waves·SMs) = {r.tiles}/({r.waves} × {sms})")
    w.answer("spare", "SM slots idle in the last wave", r.waves * sms - r.tiles, COUNT, "waves·SMs − tiles")


# -- bus bandwidth, read backwards ------------------------------------------------------------------


@example("busbw-times", title="The time behind a reported bus bandwidth, collective by collective",
         source="nccl-tests, doc/PERFORMANCE.md (algbw = S/t; busbw = algbw × factor)",
         topic="bus-bandwidth",
         givens=[Given("collective", "collective", NAME, "allgather"),
                 Given("other", "second collective", NAME, "allreduce"),
                 Given("p", "ranks", COUNT, 8, "p"),
                 Given("n", "size S (the whole array)", SIZE, "1 GB", "S"),
                 Given("busbw", "reported bus bandwidth", RATE, "150 GB/s", "busbw")],
         answer="time")
def busbw_times(w: Work) -> None:
    """t = S·factor/busbw; algbw = S/t; factor·S is what each rank sends in a bandwidth-optimal algorithm.

    Source: NVIDIA nccl-tests, doc/PERFORMANCE.md; ``costmodel.collectives.busbw`` (``bus_factor``,
    ``time_for_busbw``, ``busbw``).
    """
    from costmodel.collectives.busbw import bus_factor, busbw, time_for_busbw

    collective, other, p, n, bus = w.values("collective", "other", "p", "n", "busbw")
    factor = w.answer("factor", f"bus factor of {collective}", bus_factor(collective, p), NUMBER,
                      f"at p = {p}")
    time = w.answer("time", f"{collective}: measured time", time_for_busbw(collective, p=p, n=n, busbw=bus),
                    TIME, f"S·factor / busbw = {_size(n)} × {show_exact(factor)} / {_rate(bus)}")
    w.answer("algbw", f"{collective}: algorithm bandwidth", n / time, RATE, "S/t")
    w.check("bus bandwidth", busbw(collective, p=p, n=n, time=time).busbw_bytes_per_s, bus)
    sent = w.answer("sent", "bytes each rank sends (bandwidth-optimal)", factor * n, SIZE,
                    "factor × S: busbw is these bytes over t")
    if w.checking and collective in ("allgather", "reduce-scatter", "allreduce"):
        ring = w.cost(collective, "ring", p=p, n=n, alpha=0, beta=0, show=False)
        w.check("bytes a ring rank sends", ring.bytes_sent, sent)
    other_factor = bus_factor(other, p)
    w.step(f"Bus factor of {other}", f"at p = {p}", other_factor, NUMBER)
    other_time = w.answer("other-time", f"{other}: measured time", time_for_busbw(other, p=p, n=n, busbw=bus),
                          TIME, f"S·{show_exact(other_factor)} / busbw")
    w.answer("other-algbw", f"{other}: algorithm bandwidth", n / other_time, RATE, "S/t")
    w.answer("ratio", f"time of {other} over time of {collective}", other_time / time, NUMBER,
             "the ratio of their factors")


# -- expert parallelism ----------------------------------------------------------------------------


@example("moe-dispatch", title="Expert parallelism: dispatch and combine all-to-alls with top-k and capacity",
         source="Fedus et al. 2022 (Switch Transformers, equation 3: capacity); Lepikhin et al. 2021 "
                "(GShard)",
         topic="expert-parallel",
         givens=[Given("tokens", "tokens per GPU entering the layer", COUNT, 4096, "T"),
                 Given("hidden", "hidden size", COUNT, 4096, "h"),
                 Given("experts", "experts", COUNT, 64, "E"),
                 Given("ep", "expert-parallel GPUs", COUNT, 8, "G"),
                 Given("topk", "experts per token", COUNT, 2, "k"),
                 Given("capacity", "capacity factor", NUMBER, "1", "c"),
                 Given("dtype", "activation type", NAME, "bf16"),
                 Given("alpha", "start-up latency", TIME, "10 us", "α"),
                 Given("bandwidth", "bandwidth per GPU", RATE, "50 GB/s", "1/β")],
         answer="layer-step", slips=("alpha-only", "beta-only"))
def moe_dispatch(w: Work) -> None:
    """Each all-to-all sends a GPU's c·T·k·h·e bytes of routed tokens, (G − 1)/G of them to other GPUs;
    a layer runs 2 forward (dispatch, combine) and 2 backward; a pairwise all-to-all costs
    (G − 1)(α + n/G·β).

    Source: Fedus et al., JMLR 2022, section 2 and equation (3); Lepikhin et al., ICLR 2021;
    ``costmodel.moe_traffic`` and the registry's pairwise all-to-all.
    """
    from costmodel.training import moe_traffic

    tokens, hidden, experts, ep, topk, capacity, dtype, alpha, bandwidth = w.values(
        "tokens", "hidden", "experts", "ep", "topk", "capacity", "dtype", "alpha", "bandwidth")
    link = _link(alpha, bandwidth)
    m = moe_traffic(tokens=tokens, hidden=hidden, experts=experts, ep=ep, top_k=topk, dtype=dtype,
                    capacity_factor=capacity, link=link)
    b = m.dtype.bytes_per_element
    routed = w.step("Routed token copies of one GPU", f"T·k = {tokens} × {topk}", tokens * topk, COUNT)
    buffer = w.answer("buffer", "send buffer of one all-to-all", m.send_buffer_bytes, SIZE,
                      f"c·T·k·h·{b} B = {show_exact(capacity)} × {routed} × {hidden} × {b} B")
    w.answer("padding", "padding in the send buffer", m.send_buffer_bytes - routed * hidden * b, SIZE,
             "(c − 1)·T·k·h·e: capacity the router did not fill")
    leaving = w.answer("leaving", "bytes leaving one GPU per all-to-all", m.bytes_leaving_per_alltoall, SIZE,
                       f"(G − 1)/G × n = {ep - 1}/{ep} × {_size(buffer)}")
    per_layer = m.alltoalls_forward + m.alltoalls_backward
    w.answer("layer-step", "bytes leaving one GPU per layer, forward and backward", per_layer * leaving, SIZE,
             f"{per_layer} all-to-alls (dispatch and combine, both passes) × {_size(leaving)}")
    one = w.cost("alltoall", "pairwise", p=ep, n=buffer, alpha=alpha, beta=1 / Fraction(bandwidth),
                 label="pairwise all-to-all")
    w.check("all-to-all time", one.time_s, m.alltoall.time_s)
    w.answer("alltoall-time", "time of one all-to-all", one.time_s, TIME)
    w.answer("layer-time", "all-to-all time per layer, forward and backward", per_layer * one.time_s, TIME,
             f"{per_layer} × one all-to-all")


# -- tensor and sequence parallelism ---------------------------------------------------------------


@example("tp-sp-layer", title="Tensor and sequence parallelism: communication per layer and per step",
         source="Shoeybi et al. 2019 (Megatron-LM, section 3); Korthikanti et al. 2022 (section 4.2.2)",
         topic="tensor-parallel",
         givens=[Given("batch", "micro-batch", COUNT, 1, "b"),
                 Given("seq", "sequence length", COUNT, 4096, "s"),
                 Given("hidden", "hidden size", COUNT, 8192, "h"),
                 Given("tp", "tensor-parallel GPUs", COUNT, 8, "t"),
                 Given("dtype", "activation type", NAME, "bf16"),
                 Given("sp", "sequence parallelism (yes or no)", NAME, "no"),
                 Given("layers", "layers", COUNT, 80, "L"),
                 Given("microbatches", "micro-batches per step", COUNT, 8, "m"),
                 Given("alpha", "start-up latency", TIME, "5 us", "α"),
                 Given("bandwidth", "link bandwidth per GPU", RATE, "300 GB/s", "1/β")],
         answer="layer-time", slips=("own-chunk", "alpha-only", "beta-only"))
def tp_sp_layer(w: Work) -> None:
    """Per layer, 2 all-reduces of the b·s·h activations forward and 2 backward (Megatron); with
    sequence parallelism each becomes a reduce-scatter and an all-gather of the same tensor, which send
    the same bytes and, as rings, take the same time.

    Source: Shoeybi et al. 2019, section 3 and figure 4; Korthikanti et al. 2022, section 4.2.2;
    ``costmodel.tensor_parallel_traffic`` and the registry's ring collectives.  The slip ``own-chunk``:
    each collective's n sent whole, 2n for an all-reduce (the (t − 1)/t left out).
    """
    from costmodel.training import tensor_parallel_traffic

    batch, seq, hidden, tp, dtype, sp, layers, micro, alpha, bandwidth = w.values(
        "batch", "seq", "hidden", "tp", "dtype", "sp", "layers", "microbatches", "alpha", "bandwidth")
    if sp.lower() not in ("yes", "no"):
        raise InputError(f"{sp!r} is not yes or no: is sequence parallelism on?")
    sequence = sp.lower() == "yes"
    r = tensor_parallel_traffic(batch=batch, seq=seq, hidden=hidden, tp=tp, dtype=dtype, layers=layers,
                                link=_link(alpha, bandwidth))
    b = r.dtype.bytes_per_element
    n = w.answer("message", "activation tensor of each collective", Fraction(r.allreduce_bytes), SIZE,
                 f"b·s·h·{b} B = {batch} × {seq} × {hidden} × {b} B")
    beta = 1 / Fraction(bandwidth)
    if sequence:
        parts = [w.cost("reduce-scatter", "ring", p=tp, n=n, alpha=alpha, beta=beta, label="reduce-scatter"),
                 w.cost("allgather", "ring", p=tp, n=n, alpha=alpha, beta=beta, label="all-gather")]
        kinds = "2 all-gathers and 2 reduce-scatters forward, as many backward"
    else:
        parts = [w.cost("allreduce", "ring", p=tp, n=n, alpha=alpha, beta=beta, label="all-reduce")]
        kinds = "2 all-reduces forward (after the attention and the MLP), 2 backward"
    count = w.answer("collectives", "collectives per layer, forward and backward", 4 * len(parts), COUNT,
                     kinds)
    unit = Fraction(tp, tp - 1) if w.slipped("own-chunk") else 1
    w.answer("sent-one", "bytes each GPU sends per collective", parts[0].bytes_sent * unit, SIZE,
                   "(t − 1)/t × n" if sequence else "2(t − 1)/t × n")
    sent = w.answer("layer-sent", "bytes each GPU sends per layer, forward and backward",
                    4 * sum(c.bytes_sent for c in parts) * unit, SIZE, f"{count} collectives")
    w.check("bytes per layer", sent, 4 * r.allreduce.bytes_sent_per_rank)
    extra = 4 * sum(c.bandwidth_s for c in parts) * (unit - 1)
    layer = w.answer("layer-time", "communication time per layer, forward and backward",
                     4 * sum(c.time_s for c in parts) + extra, TIME,
                     f"{count} collectives on the critical path")
    w.check("time per layer", layer, 4 * r.allreduce.time_s)
    w.answer("step-sent", "bytes each GPU sends per step", layers * micro * sent, SIZE,
             f"L·m × per layer = {layers} × {micro} × {_size(sent)}")
    w.answer("step-time", "communication time per step", layers * micro * layer, TIME,
             f"L·m × per layer = {layers} × {micro} × {TIME.term(layer)}")
