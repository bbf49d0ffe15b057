"""Worked examples on the memory of training and what it costs: ZeRO and FSDP traffic, activations.

* ZeRO's model states per GPU come from :func:`costmodel.training.zero_memory`; the collectives of
  each stage (and of each FSDP sharding strategy) from
  :data:`costmodel.training.memory.ZERO_COLLECTIVES` and
  :data:`~costmodel.training.memory.FSDP_STRATEGIES`, each priced with the ring records of the
  formula registry (:meth:`Work.cost`): Rajbhandari et al. 2020, section 7.2; Zhao et al. 2023.
* The activations of one transformer layer come from :func:`costmodel.training.activation_memory`
  (Korthikanti et al. 2022, table 2), and the micro-batches a pipeline stage holds at once from the
  simulated schedules of :func:`costmodel.pipeline.bubble` (Narayanan et al. 2021).

Parameter counts are given in billions (``--set params=13`` reads as 13 billion); weights and
gradients are 2-byte (fp16 or bf16) and the optimizer state of mixed-precision Adam K = 12 bytes
a parameter, as in the ZeRO paper.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from costmodel.errors import InputError, UnknownNameError
from costmodel.examples import example
from costmodel.examples.kinds import COUNT, NAME, NUMBER, RATE, SIZE, TIME, show_exact
from costmodel.examples.work import Given, Work
from costmodel.pipeline import bubble as simulate_bubble
from costmodel.training.memory import FSDP_STRATEGIES, ZERO_COLLECTIVES
from costmodel.training.memory import activation_memory as _activation_memory
from costmodel.training.memory import zero_memory as _zero_memory

# pure, and shared by the variants and the slips that share their givens: remembered
zero_memory = lru_cache(maxsize=4096)(_zero_memory)
activation_memory = lru_cache(maxsize=4096)(_activation_memory)
bubble = lru_cache(maxsize=4096)(simulate_bubble)

_BILLION = 10**9
_WIDTH = 2  # bytes of an fp16 or bf16 weight or gradient

PARAMS = Given("params", "parameters, in billions", NUMBER, "7.5", "Ψ")
GPUS = Given("gpus", "data-parallel GPUs", COUNT, 64, "N_d")


def _psi(params: Fraction) -> int:
    """Ψ from billions, as a whole positive count."""
    n = Fraction(params) * _BILLION
    if n.denominator != 1 or n < 1:
        raise InputError(f"params = {show_exact(params)} does not give a whole positive count")
    return n.numerator


def _sent(w: Work, stage: int, gpus: int, payload: Fraction) -> Fraction:
    """Bytes one GPU sends in one step of ZeRO stage *stage*: each collective of the stage, priced by its
    ring record over the *gpus* data-parallel GPUs, on the whole model's *payload* bytes.

    The ``own-chunk`` slip forgets the (N − 1)/N: a GPU sends its own chunk too.
    """
    total = Fraction(0)
    for collective, what in ZERO_COLLECTIVES[stage]:
        c = w.cost(collective, "ring", p=gpus, n=payload, alpha=0, beta=1, show=False)
        sent = Fraction(c.bytes_sent)
        share = "2(N − 1)/N·2Ψ" if collective == "allreduce" else "(N − 1)/N·2Ψ"
        if w.slipped("own-chunk"):  # the own chunk sent too: N/(N − 1) times the bytes
            sent, share = sent * Fraction(gpus, gpus - 1), "2·2Ψ" if collective == "allreduce" else "2Ψ"
        w.step(f"Stage {stage}: {what}", share, sent, SIZE)
        total += sent
    return total


# -- ZeRO: the communication of stage 3 --------------------------------------------------------


@example("zero-traffic", title="ZeRO stage 3: less memory, 1.5 times the bytes",
         source="Rajbhandari et al. 2020 (ZeRO, sections 3.1 and 7.2)", topic="zero",
         givens=[PARAMS, GPUS, Given("bandwidth", "bandwidth each GPU sends at", RATE, "25 GB/s", "B")],
         answer="ratio", slips=("own-chunk",))
def zero_traffic(w: Work) -> None:
    """Bytes each GPU sends per step under ZeRO stages 0–2 (a reduce-scatter and an all-gather of the
    fp16 model, 2Ψ) and stage 3 (two all-gathers and a reduce-scatter, 3Ψ), with ring collectives;
    the memory stage 3 saves over stage 2 and the time its extra bytes take.

    Source: Rajbhandari et al., SC20, section 7.2 (2Ψ against 3Ψ) and section 3.1 (the model
    states); ``costmodel.training.memory.ZERO_COLLECTIVES`` and ``costmodel.zero_memory``.
    """
    params, gpus, bandwidth = w.values("params", "gpus", "bandwidth")
    psi = _psi(params)
    if gpus < 2:
        raise InputError(f"gpus={gpus}: ZeRO partitions over at least 2 data-parallel GPUs")
    payload = w.step("The fp16 model, the payload of every collective",
                     f"2 B × Ψ = 2 B × {show_exact(params)}e9",
                     Fraction(_WIDTH * psi), SIZE)
    baseline = w.answer("baseline", "bytes each GPU sends per step, stages 0 to 2",
                        _sent(w, 0, gpus, payload), SIZE,
                        "all-reduce = reduce-scatter + all-gather: 2(N − 1)/N·2Ψ")
    stage3 = w.answer("stage3", "bytes each GPU sends per step, stage 3", _sent(w, 3, gpus, payload), SIZE,
                      "3(N − 1)/N·2Ψ")
    w.answer("ratio", "stage 3's bytes over stage 2's", stage3 / baseline, NUMBER, "3Ψ / 2Ψ")
    extra = w.answer("extra", "extra bytes each GPU sends per step at stage 3", stage3 - baseline, SIZE,
                     "the second all-gather of the weights: (N − 1)/N·2Ψ")
    w.answer("extra-time", "time of the extra bytes per step", extra / bandwidth, TIME,
             f"{SIZE.term(extra)} / {RATE.term(bandwidth)}")
    two = zero_memory(psi, gpus=gpus, stage=2).model_state_bytes_per_gpu
    three = zero_memory(psi, gpus=gpus, stage=3).model_state_bytes_per_gpu
    w.step("Model states per GPU at stage 2", "2Ψ + (2 + 12)Ψ/N", two, SIZE)
    w.step("Model states per GPU at stage 3", "(2 + 2 + 12)Ψ/N", three, SIZE)
    w.answer("saved", "memory per GPU that stage 3 saves over stage 2", two - three, SIZE,
             "2Ψ − 2Ψ/N: the weights partitioned")


# -- FSDP's sharding strategies ------------------------------------------------------------------------


@example("fsdp-strategy", title="FSDP's sharding strategies: model states and bytes per GPU",
         source="Zhao et al. 2023 (PyTorch FSDP, section 3.2); Rajbhandari et al. 2020 (ZeRO)", topic="zero",
         givens=[PARAMS, GPUS, Given("strategy", "sharding strategy", NAME, "full-shard")],
         answer="states", slips=("own-chunk", "zero-bookkeeping"))
def fsdp_strategy(w: Work) -> None:
    """NO_SHARD is data parallelism; SHARD_GRAD_OP shards gradients and optimizer states (ZeRO 2, the
    weights gathered through the forward and backward passes); FULL_SHARD shards the weights too
    (ZeRO 3) and gathers them twice a step.  The states are those held during the backward pass.

    Source: Zhao et al., PVLDB 2023, section 3.2; Rajbhandari et al., SC20, sections 3.1 and 7.2;
    ``costmodel.training.memory.FSDP_STRATEGIES`` and ``costmodel.zero_memory``.
    The slip modelled (``zero-bookkeeping``): the state the strategy newly shards left whole (the
    next smaller stage's states), or, for NO_SHARD, the weights and gradients counted in fp32.
    """
    params, gpus, strategy = w.values("params", "gpus", "strategy")
    key = strategy.lower().replace("_", "-")
    if key not in FSDP_STRATEGIES:
        raise UnknownNameError("sharding strategy", strategy, FSDP_STRATEGIES)
    if gpus < 2:
        raise InputError(f"gpus={gpus}: FSDP shards over at least 2 GPUs")
    psi = _psi(params)
    stage = FSDP_STRATEGIES[key]
    w.step("ZeRO stage of the strategy", f"{key.upper().replace('-', '_')}", stage, COUNT)
    z = zero_memory(psi, gpus=gpus, stage=stage)
    states = z.model_state_bytes_per_gpu
    if w.slipped("zero-bookkeeping"):
        states = (zero_memory(psi, gpus=gpus, stage=0, weight_bytes=4, grad_bytes=4) if stage == 0
                  else zero_memory(psi, gpus=gpus, stage=stage - 1)).model_state_bytes_per_gpu
    formula = z.formula.replace("N", str(gpus)).replace("Ψ", f"·{show_exact(params)}e9") + " B"
    w.answer("states", "model states per GPU during the backward pass", states, SIZE, formula)
    payload = Fraction(_WIDTH * psi)
    w.answer("collectives", "collectives per step over the model", len(ZERO_COLLECTIVES[stage]), COUNT,
             ", ".join(c for c, _ in ZERO_COLLECTIVES[stage]))
    w.answer("sent", "bytes each GPU sends per step", _sent(w, stage, gpus, payload), SIZE,
             "the ring collectives of the stage on 2Ψ bytes")


# -- activations ------------------------------------------------------------------------------------

SEQ = Given("seq", "sequence length", COUNT, 2048, "s")
BATCH = Given("batch", "micro-batch size", COUNT, 1, "b")
HIDDEN = Given("hidden", "hidden size", COUNT, 12288, "h")
HEADS = Given("heads", "attention heads", COUNT, 96, "a")


@example("activation-layer", title="Activations of one transformer layer: tensor and sequence parallelism",
         source="Korthikanti et al. 2022 (table 2)", topic="memory",
         givens=[SEQ, BATCH, HIDDEN, HEADS, Given("tp", "tensor-parallel GPUs", COUNT, 8, "t")],
         answer="plain")
def activation_layer(w: Work) -> None:
    """sbh(34 + 5as/h) bytes without parallelism; tensor parallelism splits all but 10sbh, sequence
    parallelism splits that too, and selective recomputation drops the 5as²b of the attention.

    Source: Korthikanti et al., arXiv:2205.05198, section 4 and table 2; ``costmodel.activation_memory``.
    """
    seq, batch, hidden, heads, tp = w.values("seq", "batch", "hidden", "heads", "tp")
    sizes = {"seq": seq, "batch": batch, "hidden": hidden, "heads": heads}
    plain = activation_memory(**sizes)
    sbh = w.step("s·b·h", f"{seq} × {batch} × {hidden}", seq * batch * hidden, COUNT)
    w.step("The attention's scores per sbh", f"5as/h = 5 × {heads} × {seq}/{hidden}",
           Fraction(5 * heads * seq, hidden), NUMBER)
    w.answer("plain", "activations of one layer, no parallelism", plain.bytes_per_layer, SIZE,
             f"{plain.formula} = {sbh} × (34 + 5as/h) B")
    tensor = activation_memory(**sizes, tp=tp)
    w.answer("tp", f"with tensor parallelism over t = {tp}", tensor.bytes_per_layer, SIZE,
             f"{tensor.formula}: the 10sbh of the layer norms and dropouts stay whole")
    both = activation_memory(**sizes, tp=tp, sequence_parallel=True)
    w.answer("tp-sp", f"with tensor and sequence parallelism over t = {tp}", both.bytes_per_layer, SIZE,
             both.formula)
    selective = activation_memory(**sizes, tp=tp, sequence_parallel=True, recompute="selective")
    w.answer("selective", "with both and selective recomputation", selective.bytes_per_layer, SIZE,
             f"{selective.formula}: the attention's scores recomputed in the backward pass")
    w.answer("saving", "no parallelism over both with selective recomputation",
             plain.bytes_per_layer / selective.bytes_per_layer, NUMBER)


LAYERS = Given("layers", "transformer layers of the model", COUNT, 32, "L")
STAGES = Given("stages", "pipeline stages", COUNT, 4, "P")


def _per_stage(layers: int, stages: int) -> int:
    if layers % stages:
        raise InputError(f"layers={layers} do not split evenly over stages={stages}; give a multiple")
    return layers // stages


@example("pipeline-activations", title="Activations a pipeline stage holds: GPipe against 1F1B",
         source="Narayanan et al. 2021 (1F1B: at most P micro-batches in flight); Korthikanti et al. 2022",
         topic="bubbles",
         givens=[STAGES, Given("microbatches", "micro-batches", COUNT, 8, "M"), LAYERS, SEQ, BATCH,
                 Given("hidden", "hidden size", COUNT, 4096, "h"),
                 Given("heads", "attention heads", COUNT, 32, "a")],
         answer="stage-1f1b")
def pipeline_activations(w: Work) -> None:
    """The first stage holds its L/P layers' activations for every micro-batch in flight: all M under
    GPipe, min(P, M) under 1F1B (from the simulated schedules).

    Source: Narayanan et al., SC '21, section 2.2.1; Huang et al. 2019 (GPipe); Korthikanti et al.
    2022, table 2 (sbh(34 + 5as/h) a layer); ``costmodel.pipeline.bubble``, ``costmodel.activation_memory``.
    """
    stages, m, layers = w.values("stages", "microbatches", "layers")
    seq, batch, hidden, heads = w.values("seq", "batch", "hidden", "heads")
    per_stage = w.step("Layers per stage", f"L/P = {layers}/{stages}", _per_stage(layers, stages), COUNT)
    act = activation_memory(seq=seq, batch=batch, hidden=hidden, heads=heads)
    layer = w.step("Activations of one layer, one micro-batch", f"{act.formula} B", act.bytes_per_layer, SIZE)
    one = w.answer("microbatch", "activations of one micro-batch on one stage", per_stage * layer, SIZE,
                   f"{per_stage} × {SIZE.term(layer)}")
    flush = bubble("1f1b", stages, microbatches=m)
    gpipe = bubble("gpipe", stages, microbatches=m)
    held = w.answer("inflight-1f1b", "1F1B: micro-batches the first stage holds at once",
                    int(flush.peak_inflight_microbatches[0]), COUNT, f"min(P, M) = min({stages}, {m})")
    w.answer("inflight-gpipe", "GPipe: micro-batches the first stage holds at once",
             int(gpipe.peak_inflight_microbatches[0]), COUNT, "M: every forward before the first backward")
    w.answer("stage-1f1b", "1F1B: activations the first stage holds at its peak", held * one, SIZE,
             f"{held} × {SIZE.term(one)}")
    w.answer("stage-gpipe", "GPipe: activations the first stage holds at its peak",
             int(gpipe.peak_inflight_microbatches[0]) * one, SIZE)
    w.answer("last-1f1b", "1F1B: micro-batches the last stage holds at once",
             int(flush.peak_inflight_microbatches[-1]), COUNT, "its backward follows each forward at once")


@example("interleaved-activations", title="Interleaved 1F1B: a v-fold smaller bubble, more activations held",
         source="Narayanan et al. SC '21 (section 2.2: the interleaved schedule)", topic="bubbles",
         givens=[STAGES, Given("microbatches", "micro-batches", COUNT, 8, "M"),
                 Given("chunks", "model chunks per device", COUNT, 2, "v")],
         answer="held-interleaved")
def interleaved_activations(w: Work) -> None:
    """The idle time of a stage falls from (P − 1)(F + B) to (P − 1)(F + B)/v, but the first stage
    starts more chunk forwards before its first backward: it holds more activations at its peak.

    Source: Narayanan et al., SC '21, section 2.2.2; the simulated schedules of
    ``costmodel.pipeline.bubble`` (F = 1, B = 2 slots a micro-batch on a whole stage).
    """
    stages, m, v = w.values("stages", "microbatches", "chunks")
    plain = bubble("1f1b", stages, microbatches=m)
    inter = bubble("interleaved", stages, microbatches=m, chunks=v)
    w.answer("idle-1f1b", "1F1B: idle slots of each stage", plain.timeline[0].idle_slots, NUMBER,
             f"(P − 1)(F + B) = {stages - 1} × 3")
    w.answer("idle-interleaved", f"interleaved (v = {v}): idle slots of each stage",
             inter.timeline[0].idle_slots, NUMBER, f"(P − 1)(F + B)/v = {stages - 1} × 3/{v}")
    w.answer("held-1f1b", "1F1B: micro-batches' activations the first stage holds at its peak",
             plain.peak_inflight_microbatches[0], NUMBER, f"min(P, M) = {min(stages, m)}")
    held = w.answer("held-interleaved", "the interleaved schedule: micro-batches' activations the first "
                    "stage holds at its peak", inter.peak_inflight_microbatches[0], NUMBER,
                    "chunk-micro-batches in flight × 1/v of a stage's layers each")
    w.answer("memory-ratio", "interleaved over 1F1B, activations of the first stage",
             held / plain.peak_inflight_microbatches[0], NUMBER)
    busy = w.answer("busy-1f1b", "1F1B: the bubble as idle over busy time", plain.bubble_over_ideal, NUMBER,
                    f"(P − 1)/M = {stages - 1}/{m}")
    target = w.answer("busy-interleaved", "the interleaved schedule: the bubble as idle over busy time",
                      inter.bubble_over_ideal, NUMBER, f"(P − 1)/(v·M) = {stages - 1}/({v} × {m})")
    # the fewest micro-batches whose simulated 1F1B bubble is as small: from the closed form's guess,
    # stepped down while one fewer still reaches it and up while it does not
    guess = m * busy / target  # (P − 1)/M′ = target
    need = max(1, -(-guess.numerator // guess.denominator))
    while need > 1 and bubble("1f1b", stages, microbatches=need - 1).bubble_over_ideal <= target:
        need -= 1
    while bubble("1f1b", stages, microbatches=need).bubble_over_ideal > target:
        need += 1
    w.answer("equivalent", "micro-batches plain 1F1B needs for the interleaved bubble", need, COUNT,
             f"(P − 1)/M′ ≤ (P − 1)/(v·M): M′ = v·M = {v} × {m}")
