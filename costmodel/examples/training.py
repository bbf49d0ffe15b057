"""Worked examples on training: sample weighting, FedAvg, memory, ZeRO, compression, traffic, federated
rounds, synchrony (SSP) and DP-SGD privacy.

Each example computes with ``costmodel.training`` (and, for the all-reduce
semantics question, with the explicit schedules of ``costmodel.schedules``);
sources are the papers the library cites (McMahan et al. 2017, Goyal et al.
2017, Rajbhandari et al. 2020, Seide et al. 2014, Li et al. 2014, Shoeybi et al.
2019, Lepikhin et al. 2021, ...).  Parameter counts and gradient lengths are given in
billions and millions, so that ``--set params=13`` reads as 13 billion.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import lru_cache
from typing import Any

from costmodel.errors import InputError, UnknownNameError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, COUNTS, NAME, NUMBER, NUMBERS, RATE, SIZE, TIME, show_exact
from costmodel.examples.work import Given, Work
from costmodel.training import (
    compress,
    error_feedback,
    fedavg,
    moe_traffic,
    ps_traffic,
    tensor_parallel_traffic,
    training_memory,
    weighted_gradient,
    weighted_loss,
)
from costmodel.training import zero_memory as _zero_memory

# pure, and shared by the stages, the slips and the variants of one model size: remembered
zero_memory = lru_cache(maxsize=4096)(_zero_memory)

_BILLION = 10**9
_MILLION = 10**6


def _vec(xs: Any) -> str:
    """A vector as people write it: ``(1, -0.3)``."""
    return "(" + ", ".join(show_exact(x) for x in xs) + ")"


def _weighted_answer(w: Work, weighted: tuple[Any, str], unweighted: tuple[Any, str], *, title: str,
                     key: str, what: str) -> None:
    """Step to the weighted vector (the plain mean under the ``unweighted-mean`` slip), then answer
    each entry as ``<key>1``, ``<key>2``, … ."""
    vector, how = unweighted if w.slipped("unweighted-mean") else weighted
    w.step(title, f"{how} = {_vec(vector)}")
    for i, x in enumerate(vector, 1):
        w.answer(f"{key}{i}", f"entry {i} of {what}", x, NUMBER)


def _whole(x: Fraction, scale: int, what: str) -> int:
    """*x* × *scale* as a whole count (parameters from billions, elements from millions)."""
    n = Fraction(x) * scale
    if n.denominator != 1 or n < 1:
        raise InputError(f"{what} = {show_exact(x)} does not give a whole positive count")
    return n.numerator


def _rows(flat: tuple[Fraction, ...], count: int, what: str) -> tuple[tuple[Fraction, ...], ...]:
    """A flat list cut into *count* equal vectors (one per worker or client)."""
    if len(flat) % count:
        raise InputError(f"{len(flat)} numbers of the {what} do not split into {count} equal vectors, "
                         "one per worker")
    width = len(flat) // count
    return tuple(tuple(flat[i * width:(i + 1) * width]) for i in range(count))


# -- one objective over unequal shards -----------------------------------------------------------

SIZES = Given("sizes", "samples per shard", COUNTS, "600,300,100", "n_k")
LOSSES = Given("losses", "mean loss of each shard", NUMBERS, "0.2,0.5,0.9", "L_k")


@example("weighted-loss", title="Global loss over unequal shards",
         source="McMahan et al. 2017 (f(w) = Σ_k n_k/n · F_k(w))", topic="weighted-loss",
         givens=[SIZES, LOSSES], answer="weighted", slips=("unweighted-mean",))
def weighted_loss_example(w: Work) -> None:
    """The full-data mean loss weights each shard's mean loss by its share of the samples.

    Source: McMahan et al. 2017, section 2 (L = Σ n_k/N · L_k); ``costmodel.weighted_loss``.
    """
    sizes, losses = w.values("sizes", "losses")
    r = weighted_loss(sizes=sizes, losses=losses)
    total = w.step("Samples in all", "N = Σ n_k = " + " + ".join(map(str, sizes)), sum(sizes), COUNT)
    w.step("Weight of each shard", f"n_k/N = {', '.join(f'{n}/{total}' for n in sizes)}", r.weights, NUMBERS)
    terms = " + ".join(f"{show_exact(a)} × {show_exact(b)}" for a, b in zip(r.weights, r.losses, strict=True))
    plain_text = f"({' + '.join(show_exact(x) for x in r.losses)})/{len(r.losses)}"
    if w.slipped("unweighted-mean"):
        # the slip: every shard counted alike, whatever its size
        weighted = w.answer("weighted", "global mean loss", r.unweighted, NUMBER, plain_text)
    else:
        weighted = w.answer("weighted", "global mean loss", r.weighted, NUMBER, f"Σ (n_k/N)·L_k = {terms}")
    plain = w.answer("plain", "plain mean of the shard losses", r.unweighted, NUMBER, plain_text)
    w.answer("gap", "plain mean minus global mean", plain - weighted, NUMBER,
             "the plain mean gives the smallest shard the influence of the largest")


@example("weighted-gradient", title="Combine gradients of unequal mini-batches",
         source="McMahan et al. 2017; Goyal et al. 2017 (normalise by the total batch)",
         topic="weighted-loss",
         givens=[Given("batches", "samples each worker used in this step", COUNTS, "16,16,32", "b_k"),
                 Given("gradients", "local mean gradients, worker after worker", NUMBERS, "1,0,2,1,4,-1",
                       "g_k")],
         answer="g1", slips=("unweighted-mean",))
def weighted_gradient_example(w: Work) -> None:
    """One synchronous step: local mean gradients weighted by the samples behind each, b_k/Σb.

    Source: Goyal et al. 2017, section 3 (normalise by the total mini-batch);
    ``costmodel.weighted_gradient``.
    """
    batches, flat = w.values("batches", "gradients")
    grads = _rows(flat, len(batches), "gradients")
    r = weighted_gradient(gradients=grads, batches=batches)
    for k, g in enumerate(grads):
        w.step(f"Worker {k}: {batches[k]} samples, mean gradient", _vec(g))
    total = w.step("Samples in this step", "Σ b_k = " + " + ".join(map(str, batches)), sum(batches), COUNT)
    w.step("Weights", f"b_k/Σb = {', '.join(f'{b}/{total}' for b in batches)}", r.weights, NUMBERS)
    _weighted_answer(w, (r.weighted, "Σ (b_k/Σb)·g_k"), (r.unweighted, f"(1/{len(grads)})·Σ g_k"),
                     title="Global gradient", key="g", what="the global gradient")
    w.step("Plain mean, for comparison", f"(1/{len(grads)})·Σ g_k = {_vec(r.unweighted)}")


# -- all-reduce as centralised SGD ------------------------------------------------------------------

_ALLREDUCE_SCHEDULES = {
    "ring": "ring_allreduce",
    "tree": "tree_allreduce",
    "recursive-doubling": "recursive_doubling_allreduce",
    "rabenseifner": "rabenseifner_allreduce",
    "naive": "naive_allreduce",
}


def _run_exactly(schedule: Any, data: list[list[int]]) -> int:
    """Run *schedule* on *data[rank][chunk]* in place, exactly; return the number of steps.

    As in ``costmodel.schedules.execute``: every transfer of a step reads the state before
    the step; a reduce adds into the destination, a copy overwrites it.
    """
    steps = 0
    for s in schedule.steps():
        before = [row[:] for row in data]
        for group in s:
            for t in group.transfers():
                for c in t.chunks:
                    if t.op == "reduce":
                        data[t.dst][c] += before[t.src][c]
                    else:
                        data[t.dst][c] = before[t.src][c]
        steps += 1
    return steps


@example("allreduce-common-update", title="All-reduce gives every worker the same global gradient",
         source="Goyal et al. 2017; Sergeev & Del Balso 2018 (synchronous SGD over all-reduce)",
         topic="ps-vs-allreduce",
         givens=[Given("p", "workers", COUNT, 4, "p"),
                 Given("algorithm", "all-reduce algorithm", NAME, "ring"),
                 Given("seed", "seed of the random local gradients", COUNT, 1)],
         answer="same")
def allreduce_common_update(w: Work) -> None:
    """Run an explicit all-reduce schedule on random integer gradients and compare what the workers hold.

    Source: Goyal et al. 2017 (all-reduce implements the common update of centralised SGD without a
    server); the schedules of ``costmodel.schedules`` (Patarasuk & Yuan 2009 for the ring).
    """
    from costmodel.schedules import build, execute

    p, algorithm, seed = w.values("p", "algorithm", "seed")
    name = _ALLREDUCE_SCHEDULES.get(algorithm.lower())
    if name is None:
        raise UnknownNameError("all-reduce algorithm", algorithm, _ALLREDUCE_SCHEDULES)
    schedule = build(name, "allreduce", p=p)
    rng = random.Random(seed)
    grads = [[rng.randint(-9, 9) for _ in range(schedule.units)] for _ in range(p)]
    total = [sum(col) for col in zip(*grads, strict=True)]
    w.step(f"Cut each gradient into {schedule.units} chunk{'s' if schedule.units > 1 else ''}; "
           f"random local gradients (seed {seed})", "one entry per chunk")
    for k, g in enumerate(grads[:8]):
        w.step(f"Worker {k} starts with", _vec(g))
    if p > 8:
        w.step(f"... and {p - 8} more workers", "")
    w.step("Element-wise sum over the workers (what centralised SGD would compute)", _vec(total))
    data = [row[:] for row in grads]
    steps = w.step(f"Run the {schedule.algorithm} all-reduce schedule: sequential steps", "",
                   _run_exactly(schedule, data), COUNT)
    for k, g in enumerate(data[:8]):
        w.step(f"Worker {k} ends with", _vec(g))
    check = execute(schedule, seed=seed)
    w.step("The library's executor on other random data", "every worker holds the global sum: "
           + ("yes" if check.ok else "no; " + "; ".join(check.problems)))
    same = all(row == data[0] for row in data)
    w.answer("same", "does every worker end with the same global gradient", "yes" if same else "no", NAME,
             "no server: the workers' transfers alone leave one common sum everywhere")
    summed = all(row == total for row in data)
    w.answer("is-sum", "is it the sum of all local gradients", "yes" if summed else "no", NAME)
    w.answer("steps", "sequential steps of the schedule", steps, COUNT)
    w.step("Each worker divides by p and applies the same update", f"mean = sum/{p}: identical models stay "
           "identical (given equal starting parameters and optimiser state)")


# -- federated averaging ------------------------------------------------------------------------------


@example("fedavg", title="FedAvg: the server's sample-weighted model average",
         source="McMahan et al. 2017 (FederatedAveraging over the clients that report)",
         topic="fedavg",
         givens=[Given("sizes", "samples per client", COUNTS, "100,300,600", "|D_k|"),
                 Given("models", "client models after local training, client after client", NUMBERS,
                       "1,0,2,1,4,-1", "θ_k"),
                 Given("dropped", "clients that do not answer (0-based, or none)", NAME, "none")],
         answer="theta1", slips=("unweighted-mean",))
def fedavg_example(w: Work) -> None:
    """θ_{t+1} = Σ |D_k|/|D| θ_k over the clients that answered, weights renormalised over them.

    Source: McMahan et al., AISTATS 2017, Algorithm 1; ``costmodel.fedavg``.
    """
    sizes, flat, dropped = w.values("sizes", "models", "dropped")
    models = _rows(flat, len(sizes), "models")
    r = fedavg(models, sizes=sizes, dropped=None if dropped.lower() == "none" else dropped)
    for k, (n, m) in enumerate(zip(sizes, models, strict=True)):
        w.step(f"Client {k}: {n} samples, model", _vec(m) + ("  (does not answer)" if k in r.dropped else ""))
    answered = w.step("Samples of the clients that answered", "Σ |D_k| = "
                      + " + ".join(str(sizes[k]) for k in r.participants),
                      sum(sizes[k] for k in r.participants), COUNT)
    w.step("Weights", ", ".join(f"{sizes[k]}/{answered}" if k in r.participants else "0"
                                for k in range(len(sizes))), r.weights, NUMBERS)
    _weighted_answer(w, (r.global_model, "Σ |D_k|/|D|·θ_k"),
                     (r.unweighted_mean, f"(1/{len(r.participants)})·Σ θ_k"),
                     title="New global model", key="theta", what="the new global model")
    w.answer("answered", "samples behind the new model", answered, COUNT)


# -- memory -------------------------------------------------------------------------------------------


@example("dp-memory", title="Data parallelism replicates the weights",
         source="Rajbhandari et al. 2020 (data parallelism replicates the model states)", topic="memory",
         givens=[Given("params", "parameters, in billions", NUMBER, "70", "Ψ"),
                 Given("dtype", "weight type", NAME, "fp32"),
                 Given("workers", "data-parallel workers", COUNT, 4, "D"),
                 Given("gpu", "memory of one GPU", SIZE, "80 GB")],
         answer="total")
def dp_memory(w: Work) -> None:
    """Every data-parallel replica holds the whole model: Ψ × bytes per parameter × D.

    Source: Rajbhandari et al. 2020 (ZeRO), section 1; ``costmodel.training_memory``.
    """
    params, dtype, workers, gpu = w.values("params", "dtype", "workers", "gpu")
    psi = _whole(params, _BILLION, "params")
    m = training_memory(psi, dtype=dtype, dp=workers)
    b = m.dtype.bytes_per_element
    per = w.answer("per-replica", "weights of one replica", m.weights_bytes_per_replica, SIZE,
                   f"Ψ × {b} B = {show_exact(params)}e9 × {b} B")
    w.answer("total", "weights over all replicas", m.weights_bytes_total, SIZE,
             f"Ψ × {b} B × D = {SIZE.term(per)} × {workers}")
    w.answer("gpus-per-replica", "GPUs one replica's weights need at least", math.ceil(per / gpu), COUNT,
             f"⌈{SIZE.term(per)} / {SIZE.term(gpu)}⌉: more than one GPU calls for ZeRO or model parallelism")


@example("zero-stages", title="ZeRO stages 0–3: model-state memory per GPU",
         source="Rajbhandari et al. 2020 (ZeRO), Figure 1", topic="zero",
         givens=[Given("params", "parameters, in billions", NUMBER, "7.5", "Ψ"),
                 Given("gpus", "data-parallel GPUs", COUNT, 64, "N_d"),
                 Given("k", "optimizer-state bytes per parameter", COUNT, 12, "K"),
                 Given("gpu", "memory of one GPU", SIZE, "32 GB")],
         answer="stage3", slips=("zero-bookkeeping",))
def zero_stages(w: Work) -> None:
    """Mixed-precision Adam keeps 2 + 2 + K bytes per parameter; stage s partitions s of the three states.

    Source: Rajbhandari et al., "ZeRO", SC20, section 3.1 and Figure 1; ``costmodel.zero_memory``.
    The slip modelled (``zero-bookkeeping``): at stage 0, the weights and gradients counted in
    fp32 (4 + 4 + K bytes); at stages 1–3, the state that stage newly partitions left whole
    (which gives the previous stage's number).
    """
    params, gpus, k, gpu = w.values("params", "gpus", "k", "gpu")
    psi = _whole(params, _BILLION, "params")
    w.step("Bytes per parameter", f"2 (fp16 weights) + 2 (fp16 gradients) + K = {k} (fp32 copy, momentum, "
           "variance)", 4 + k, COUNT)
    values = []
    for stage in range(4):
        z = zero_memory(psi, gpus=gpus, stage=stage, optimizer_bytes=k)
        value = z.model_state_bytes_per_gpu
        if w.slipped("zero-bookkeeping"):
            value = (zero_memory(psi, gpus=gpus, stage=0, weight_bytes=4, grad_bytes=4, optimizer_bytes=k)
                     if stage == 0 else zero_memory(psi, gpus=gpus, stage=stage - 1, optimizer_bytes=k)
                     ).model_state_bytes_per_gpu
        formula = z.formula.replace("N", str(gpus)).replace("Ψ", f"·{show_exact(params)}e9") + " B"
        values.append(w.answer(f"stage{stage}", f"model states per GPU at stage {stage} ({z.name})", value,
                               SIZE, formula))
    fits = next((str(s) for s, v in enumerate(values) if v <= gpu), "none")
    w.answer("fits", f"smallest stage whose model states fit in {SIZE.term(gpu)}", fits, NAME,
             "activations and buffers come on top")


# -- compression --------------------------------------------------------------------------------------

ELEMENTS = Given("n", "gradient elements, in millions", NUMBER, "25", "n")


@example("cast-ratios", title="Quantisation: bytes and ratios of fp16, int8 and 1-bit",
         source="Seide et al. 2014 (quantised gradients)",
         topic="compression", givens=[ELEMENTS], answer="fp16-int8")
def cast_ratios(w: Work) -> None:
    """A cast changes the bytes per element: fp32 4, fp16 2, int8 1; 1-bit sends signs and one scale.

    Source: Seide et al. 2014 (1-bit); ``costmodel.compress``.
    """
    n = _whole(w["n"], _MILLION, "n")
    fp16 = compress(n, method="fp16", source="fp32")
    int8 = compress(n, method="int8", source="fp16")
    int8_32 = compress(n, method="int8", source="fp32")
    one = compress(n, method="onebit", source="fp32")
    w.answer("fp32-bytes", "dense fp32 gradient", fp16.dense_bytes, SIZE, f"4 B × {n}")
    w.answer("fp16-bytes", "the gradient in fp16", fp16.bytes, SIZE, f"2 B × {n}")
    w.answer("int8-bytes", "the gradient in int8", int8.bytes, SIZE, f"1 B × {n}")
    w.answer("onebit-bytes", "1-bit signs plus one fp32 scale", one.bytes, SIZE, f"⌈{n}/8⌉ + 4 B")
    w.answer("fp32-fp16", "ratio fp32 → fp16", fp16.ratio, NUMBER, "4 B / 2 B")
    w.answer("fp16-int8", "ratio fp16 → int8", int8.ratio, NUMBER, "2 B / 1 B")
    w.answer("fp32-int8", "ratio fp32 → int8", int8_32.ratio, NUMBER, "4 B / 1 B")
    w.step("Note", "'FP16 → INT8 (4×)' is a common slip: one byte against two is 2×, 4× holds from fp32")


@example("topk", title="Top-k sparsification: the indices cost bytes too",
         source="Aji & Heafield 2017; Lin et al. 2018 (top-k sparsification)",
         topic="compression",
         givens=[ELEMENTS, Given("density", "kept fraction k/n", NUMBER, "0.01", "d"),
                 Given("index", "bytes per index", COUNT, 4), Given("dtype", "gradient type", NAME, "fp32")],
         answer="ratio", slips=("index-overhead",))
def topk(w: Work) -> None:
    """Top-k sends k = ⌈d·n⌉ values and their indices: k·(v + i) bytes against n·v.

    Source: Aji & Heafield, EMNLP 2017; Lin et al., ICLR 2018; ``costmodel.compress``.
    """
    density, index, dtype = w.values("density", "index", "dtype")
    n = _whole(w["n"], _MILLION, "n")
    c = compress(n, method="topk", density=density, source=dtype, index_bytes=index)
    v = c.source.bytes_per_element
    k = w.answer("k", "values kept", c.k, COUNT, f"⌈{show_exact(density)} × {n}⌉")
    dense = w.step("Dense gradient", f"n·v = {n} × {v} B", c.dense_bytes, SIZE)
    if w.slipped("index-overhead"):
        size = w.answer("bytes", "compressed payload", Fraction(k * v), SIZE, f"k·v = {k} × {v} B")
    else:
        size = w.answer("bytes", "compressed payload", c.bytes, SIZE, f"k·(v + i) = {k} × ({v} + {index}) B")
    w.answer("ratio", "compression ratio", dense / size, NUMBER, f"{SIZE.term(dense)} / {SIZE.term(size)}")
    w.step("Note", "the usual 10–100× at k/n = 0.01–0.001 ignores the indices: with 4-byte indices it is "
           "50× and 500×, and 10× needs k/n = 0.05")


@example("error-feedback", title="1-bit compression with error feedback",
         source="Seide et al. 2014; Karimireddy et al. 2019 (error feedback)",
         topic="compression",
         givens=[Given("gradient", "gradient (the same every step)", NUMBERS, "0.5,-1.2,0.3", "g"),
                 Given("steps", "steps", COUNT, 3, "T")],
         answer="residual1")
def error_feedback_example(w: Work) -> None:
    """Each step sends sign(g + residual)·mean|g + residual| and carries what was lost to the next.

    Source: Seide et al., Interspeech 2014; Karimireddy et al., ICML 2019, Algorithm 1;
    ``costmodel.error_feedback``.
    """
    gradient, steps = w.values("gradient", "steps")
    run = error_feedback(gradient, steps=steps)
    for s in run.steps:
        w.step(f"Step {s.step}: corrected gradient", f"g + residual = {_vec(s.corrected)}")
        w.step(f"Step {s.step}: scale", "mean |g + residual|", s.scale, NUMBER)
        w.step(f"Step {s.step}: sent", f"sign(g + residual)·scale = {_vec(s.transmitted)}")
        w.step(f"Step {s.step}: residual", f"g + residual − sent = {_vec(s.residual)}")
    w.answer("scale", "scale of the first step", run.steps[0].scale, NUMBER)
    w.answer("residual1", f"entry 1 of the residual after step {steps}", run.steps[-1].residual[0], NUMBER)
    w.answer("sent1", f"entry 1 summed over what was sent in {steps} steps", run.total_transmitted[0], NUMBER,
             f"{steps}·g₁ − residual₁: nothing is lost, only delayed")


# -- communication of training patterns ----------------------------------------------------------------


@example("ps-vs-ring", title="Parameter server hot spot against ring all-reduce",
         source="Li et al. 2014 (parameter server); Patarasuk & Yuan 2009 (ring)",
         topic="ps-vs-allreduce",
         givens=[Given("n", "model size", SIZE, "400 MB", "n"), Given("workers", "workers", COUNT, 16, "N"),
                 Given("servers", "server shards", COUNT, 1, "S")],
         answer="server-in", slips=("own-chunk",))
def ps_vs_ring(w: Work) -> None:
    """Each server shard receives N·n/S and sends N·n/S per step; a ring worker sends 2(N − 1)/N·n.

    Source: Li et al., OSDI 2014; Patarasuk & Yuan 2009; ``costmodel.ps_traffic``.
    """
    n, workers, servers = w.values("n", "workers", "servers")
    t = ps_traffic(n, workers=workers, servers=servers)
    w.step("Each worker pushes its gradient and pulls the parameters", "n each way", n, SIZE)
    into = w.answer("server-in", "bytes into one server per step", t.server_bytes_in, SIZE,
                    f"N·n/S = {workers} × {SIZE.term(n)} / {servers}")
    w.answer("server-out", "bytes out of one server per step", t.server_bytes_out, SIZE, "N·n/S, the pulls")
    ring = t.ring_bytes_sent_per_worker
    if w.slipped("own-chunk"):
        ring, how = 2 * n, "2·n"
    else:
        how = f"2(N − 1)/N·n = 2 × {workers - 1}/{workers} × {SIZE.term(n)}"
    ring = w.answer("ring-sent", "bytes each ring worker sends per step", ring, SIZE, how)
    w.answer("ratio", "server inflow over a ring worker's send", into / ring, NUMBER,
             "N²/(2S(N − 1)): the hot spot grows with N")


@example("tp-allreduces", title="Tensor parallelism: all-reduces per transformer block",
         source="Shoeybi et al. 2019 (Megatron-LM, section 3)",
         topic="parallelism",
         givens=[Given("batch", "micro-batch", COUNT, 1, "b"),
                 Given("seq", "sequence length", COUNT, 2048, "s"),
                 Given("hidden", "hidden size", COUNT, 12288, "h"),
                 Given("tp", "tensor-parallel GPUs", COUNT, 8, "t"),
                 Given("dtype", "activation type", NAME, "bf16")],
         answer="forward", slips=("own-chunk",))
def tp_allreduces(w: Work) -> None:
    """Megatron splits attention and MLP so each needs one all-reduce of b·s·h forward and one backward.

    Source: Shoeybi et al., arXiv:1909.08053, section 3; ``costmodel.tensor_parallel_traffic``.
    """
    batch, seq, hidden, tp, dtype = w.values("batch", "seq", "hidden", "tp", "dtype")
    r = tensor_parallel_traffic(batch=batch, seq=seq, hidden=hidden, tp=tp, dtype=dtype)
    w.answer("forward", "all-reduces per block, forward pass", r.allreduces_forward, COUNT,
             "one after attention, one after the MLP")
    w.answer("per-block", "all-reduces per block, forward and backward", r.allreduces_per_block, COUNT,
             "2 + 2")
    b = r.dtype.bytes_per_element
    n = w.answer("bytes", "size of each all-reduce", Fraction(r.allreduce_bytes), SIZE,
                 f"b·s·h·{b} B = {batch} × {seq} × {hidden} × {b} B")
    per = 2 * n if w.slipped("own-chunk") else r.allreduce.bytes_sent_per_rank
    w.step("Ring all-reduce: bytes each GPU sends", f"2(t − 1)/t·n = 2 × {tp - 1}/{tp} × {SIZE.term(n)}",
           per, SIZE)
    w.answer("sent-per-block", "bytes each GPU sends per block", r.allreduces_per_block * per, SIZE,
             f"{r.allreduces_per_block} × {SIZE.term(per)}")


@example("moe-alltoalls", title="Expert parallelism: two all-to-alls per MoE layer",
         source="Lepikhin et al. 2021 (GShard); Fedus et al. 2022 (Switch Transformers)", topic="parallelism",
         givens=[Given("tokens", "tokens per GPU", COUNT, 4096),
                 Given("hidden", "hidden size", COUNT, 4096, "h"),
                 Given("experts", "experts", COUNT, 8, "E"),
                 Given("ep", "expert-parallel GPUs", COUNT, 8, "G"),
                 Given("topk", "experts per token", COUNT, 1, "k"),
                 Given("dtype", "activation type", NAME, "bf16")],
         answer="forward")
def moe_alltoalls(w: Work) -> None:
    """Dispatch and combine: each moves a GPU's routed tokens; (G − 1)/G of them leave the GPU.

    Source: Fedus et al., JMLR 2022; Lepikhin et al., ICLR 2021; ``costmodel.moe_traffic``.
    """
    tokens, hidden, experts, ep, topk_, dtype = w.values("tokens", "hidden", "experts", "ep", "topk", "dtype")
    m = moe_traffic(tokens=tokens, hidden=hidden, experts=experts, ep=ep, top_k=topk_, dtype=dtype)
    w.answer("forward", "all-to-alls per MoE layer, forward pass", m.alltoalls_forward, COUNT,
             "dispatch to the experts, combine back")
    b = m.dtype.bytes_per_element
    buffer = w.answer("buffer", "routed tokens of one GPU", Fraction(m.send_buffer_bytes), SIZE,
                      f"tokens·k·h·{b} B = {tokens} × {topk_} × {hidden} × {b} B")
    share = w.answer("fraction", "share that leaves the GPU", m.fraction_leaving, NUMBER,
                     f"(G − 1)/G = {ep - 1}/{ep}, uniform routing")
    leaving = w.answer("leaving", "bytes leaving one GPU per all-to-all", share * buffer, SIZE)
    w.answer("leaving-layer", "bytes leaving one GPU per layer, forward pass", m.alltoalls_forward * leaving,
             SIZE, f"{m.alltoalls_forward} × {SIZE.term(leaving)}")


# -- federated rounds, synchrony and privacy -----------------------------------------------------------


def _seconds(xs: Any) -> str:
    """Times in seconds as a list ``1s,2.5s``: the client or worker times of a variant."""
    return ",".join(f"{show_exact(x)}s" for x in xs)


def _positive(xs: Any, what: str) -> None:
    if not xs or any(x <= 0 for x in xs):
        raise InputError(f"{what}: every time must be above 0 s")


@example("fl-round", title="A federated round that waits for the K fastest clients",
         source="McMahan et al. 2017 (FedAvg: the model down, the model up); Arnold et al. 2008 (order "
                "statistics)",
         topic="federated-round",
         givens=[Given("params", "fp32 model parameters, in millions", NUMBER, "5", "P"),
                 Given("times", "compute time of each client, in seconds", NUMBERS, "4,9,6,20,7", "X_k"),
                 Given("fastest", "clients the server waits for", COUNT, 3, "K"),
                 Given("downlink", "server-to-client bandwidth", RATE, "10 MB/s", "B_down"),
                 Given("uplink", "client-to-server bandwidth", RATE, "2 MB/s", "B_up")],
         answer="round", slips=("wait-for-all",))
def fl_round(w: Work) -> None:
    """Every client is sampled; client k is done after down + X_k + up; the round ends when the K-th is.

    Source: McMahan et al. 2017, Algorithm 1; Arnold et al. 2008, section 2 (the K-th order
    statistic); ``costmodel.training.federated_pricing.federated_round``.
    """
    from costmodel.params import LinkParams
    from costmodel.training.federated_pricing import federated_round

    params, times, fastest, down, up = w.values("params", "times", "fastest", "downlink", "uplink")
    _positive(times, "times")
    p = _whole(params, _MILLION, "params")
    if not 1 <= fastest <= len(times):
        raise InputError(f"fastest={fastest} is outside 1 to {len(times)} (the clients)")
    k = None if w.slipped("wait-for-all") else fastest
    r = federated_round("fedavg", params=p, client_times=_seconds(times), fastest=k, draws=100,
                        uplink=LinkParams(alpha_s=Fraction(0), beta_s_per_byte=1 / Fraction(up)),
                        downlink=LinkParams(alpha_s=Fraction(0), beta_s_per_byte=1 / Fraction(down)))
    w.step("Bytes each way per client", f"M = P × 4 B = {show_exact(params)}e6 × 4 B", r.download_bytes, SIZE)
    w.answer("download", "download time of the model", r.download_s, TIME,
             f"M / B_down = M / {RATE.term(down)}")
    w.answer("upload", "upload time of the update", r.upload_s, TIME, f"M / B_up = M / {RATE.term(up)}")
    order = sorted(times)
    kth = order[(k or len(times)) - 1]
    w.step("Compute times, sorted", ", ".join(show_exact(t) for t in order))
    w.step("The slowest client computes for" if k is None else f"The K-th fastest (K = {k}) computes for",
           "X_(K)", kth, TIME)
    w.answer("round", "round time", r.expected_round_time_s, TIME,
             "down + X_(K) + up: the others are dropped (every client has the same links)")


@example("scaffold-bytes", title="SCAFFOLD's bytes per round: model and control variate, both ways",
         source="Karimireddy et al. 2020 (SCAFFOLD, Algorithm 1)", topic="federated-round",
         givens=[Given("params", "model parameters, in millions", NUMBER, "10", "P"),
                 Given("dtype", "element type", NAME, "fp32"),
                 Given("sampled", "clients sampled per round", COUNT, 20, "m")],
         answer="round")
def scaffold_bytes(w: Work) -> None:
    """Each sampled client gets (x, c) and returns (Δy, Δc): 2M down and 2M up, M = P × bytes per element.

    Source: Karimireddy et al. 2020, Algorithm 1; ``costmodel.training.federated_pricing``.
    """
    from costmodel.training.federated_pricing import federated_round

    params, dtype, sampled = w.values("params", "dtype", "sampled")
    p = _whole(params, _MILLION, "params")
    r = federated_round("scaffold", params=p, dtype=dtype, client_times="uniform:1s,2s", sampled=sampled,
                        uplink="0s:1MB/s", draws=100)
    model = p * r.bytes_per_element
    w.step("One model", f"M = P × {r.bytes_per_element} B", model, SIZE)
    w.answer("down", "bytes the server sends one client", r.download_bytes, SIZE, "2M: the model x and c")
    w.answer("up", "bytes one client sends back", r.upload_bytes, SIZE, "2M: Δy and Δc")
    w.answer("round", "bytes per round, both ways, all sampled clients", r.bytes_down_per_round
             + r.bytes_up_per_round, SIZE, f"m × (2M + 2M) = {sampled} × 4M")
    w.check("bytes up: 2M", r.upload_bytes, 2 * model)


@example("ssp-staleness", title="Stale synchronous parallel: run time and staleness",
         source="Ho et al. 2013 (SSP, section 2); Mitliagkas et al. 2016 (staleness)", topic="synchrony",
         givens=[Given("times", "step time of each worker, in seconds", NUMBERS, "1,1,2", "x_i"),
                 Given("steps", "steps each worker runs", COUNT, 6, "T"),
                 Given("bound", "SSP's bound: steps ahead of the slowest", COUNT, 1, "s")],
         answer="max-staleness")
def ssp_staleness(w: Work) -> None:
    """start(i, c) = max(finish(i, c − 1), max_j finish(j, c − s − 1)); staleness: updates between read
    and write.

    Source: Ho et al. 2013, section 2; Mitliagkas et al. 2016; ``costmodel.training.synchrony``.
    """
    from costmodel.training.synchrony import simulate_sync

    times, steps, bound = w.values("times", "steps", "bound")
    _positive(times, "times")
    r = simulate_sync("all", step_times=_seconds(times), steps=steps, bound=bound)
    bsp, ssp, asp = r.run("bsp"), r.run("ssp"), r.run("asp")
    w.step("BSP: every step waits for the slowest", f"T × max x_i = {steps} × {show_exact(max(times))} s",
           bsp.run_time_s, TIME)
    w.step("ASP: no gate, each worker at its own pace", "T × max x_i (the slowest's own steps)",
           asp.run_time_s, TIME)
    w.answer("run-time", "SSP's run time", ssp.run_time_s, TIME,
             f"no worker more than s = {bound} steps ahead of the slowest")
    w.answer("max-staleness", "largest staleness of a gradient under SSP", ssp.staleness_max, COUNT,
             "updates the server applied between a gradient's read and its own update")
    mean = Fraction(sum(v * c for v, c in enumerate(ssp.staleness_counts)), len(times) * steps)
    w.answer("mean-staleness", "mean staleness under SSP", mean, NUMBER,
             f"over the N × T = {len(times)} × {steps} gradients")
    w.check("mean staleness", float(mean), ssp.staleness_mean)


@example("dp-sgd-epsilon", title="DP-SGD's ε: the sampled Gaussian mechanism composed over the steps",
         source="Abadi et al. 2016 (DP-SGD); Mironov et al. 2019 (RDP of the sampled Gaussian)",
         topic="privacy",
         givens=[Given("dataset", "training examples", COUNT, 60000, "N"),
                 Given("batch", "expected batch (lot) size", COUNT, 256, "B"),
                 Given("noise", "noise standard deviation on the clipped sum", NUMBER, "2.2", "σC"),
                 Given("clip", "clipping norm", NUMBER, "2", "C"),
                 Given("steps", "training steps", COUNT, 2000, "T"),
                 Given("delta", "failure probability", NUMBER, "1e-5", "δ")],
         answer="epsilon", slips=("no-composition", "batch-for-rate", "noise-for-sigma"))
def dp_sgd_epsilon(w: Work) -> None:
    """q = B/N, σ = (σC)/C, T steps composed in RDP, converted to (ε, δ) at the best order.

    Source: Abadi et al. 2016, Algorithm 1; Mironov et al. 2019, section 3; Mironov 2017,
    Proposition 1; ``costmodel.training.privacy.privacy_account``.
    """
    from costmodel.training.privacy import privacy_account

    dataset, batch, noise, clip, steps, delta = w.values("dataset", "batch", "noise", "clip", "steps",
                                                         "delta")
    if clip <= 0:
        raise InputError(f"clip={show_exact(clip)} must be above 0")
    if batch > dataset:
        raise InputError(f"batch={batch} is above dataset={dataset}; a batch samples from the dataset")
    q = Fraction(1) if w.slipped("batch-for-rate") else w.step(
        "Sampling rate", f"q = B/N = {batch}/{dataset}", Fraction(batch, dataset), NUMBER)
    sigma = noise if w.slipped("noise-for-sigma") else w.step(
        "Noise multiplier", f"σ = σC / C = {show_exact(noise)} / {show_exact(clip)}", noise / clip, NUMBER)
    t = 1 if w.slipped("no-composition") else steps
    account = privacy_account([(q, sigma, t)], delta=delta)
    w.step("Composition", f"RDP adds over the steps: {t} × rdp(α) at each order α")
    w.answer("epsilon", "ε", account.epsilon, NUMBER,
             f"the best order α = {show_exact(Fraction(account.best_order))}")
