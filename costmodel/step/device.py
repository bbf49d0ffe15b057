"""One pipeline device of a step as it runs: its layers' compute and its data-parallel collectives.

:class:`Device` runs the operations the pipeline scheduler hands it (``F``, ``B``, ``W`` of a
micro-batch and model chunk, :func:`costmodel.pipeline.simulate.simulate_devices`) unit by unit
(a unit is a layer, or the logits), and issues on its :class:`~costmodel.step.stream.CommStream`
the collectives of data-parallel training as the frameworks do:

* **ZeRO 0** (PyTorch DDP, Megatron-LM without the distributed optimizer): each gradient bucket is
  all-reduced once its last gradient of the last micro-batch is ready (earlier micro-batches
  accumulate locally: DDP's ``no_sync``; Megatron's gradient buffer).
* **ZeRO 1** (DeepSpeed stage 1, Megatron-LM's distributed optimizer): the buckets are
  reduce-scattered instead, once, in the last micro-batch; after the optimizer step each rank
  all-gathers the updated parameters, bucket by bucket (DeepSpeed ``stage_1_and_2.py``,
  ``step``: ``all_gather_dp_groups``).
* **ZeRO 2** (DeepSpeed stage 2): as stage 1, but gradients are partitioned, so every micro-batch's
  buckets are reduce-scattered (``stage_1_and_2.py``, ``reduce_independent_p_g_buckets_and_remove_grads``
  runs in every backward).
* **ZeRO 3 / FSDP** (DeepSpeed stage 3, PyTorch FSDP ``FULL_SHARD``): parameters are sharded too.
  Before a unit computes, its parameters are all-gathered, in the forward and again in the backward
  pass (FSDP reshards after forward, ``reshard_after_forward=True``); the all-gather of the unit
  *prefetch* places ahead is issued when the device reaches a unit (FSDP's default
  ``backward_prefetch=BACKWARD_PRE`` and its rate limiter keep one unit ahead:
  ``torch/distributed/fsdp/fully_sharded_data_parallel.py``, ``_runtime_utils.py``,
  ``_prefetch_handle``; Zhao et al. 2023, section 3.3.2), and each unit's gradient is
  reduce-scattered once its backward is done, in every micro-batch.

Sizes follow costmodel's meaning of n: an all-reduce and a reduce-scatter of a bucket move its
gradient bytes on one rank, an all-gather gathers a unit's (or bucket's) whole parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.exact import exact_sum
from costmodel.references import DEEPSPEED, MEGATRON_LM, PYTORCH_DDP, RAJBHANDARI_2020, ZHAO_2023, Cited
from costmodel.step.buckets import Bucket, BucketPlan
from costmodel.step.stream import CommStream

__all__ = ["CITED", "ZERO_SOURCES", "Device", "Issued", "Unit", "runs", "totals"]

CITED = (PYTORCH_DDP, RAJBHANDARI_2020, ZHAO_2023, DEEPSPEED, MEGATRON_LM)

ZERO_SOURCES: dict[int, tuple[Cited, ...]] = {
    1: (RAJBHANDARI_2020.at("section 5.1: P_os, optimizer states partitioned, parameters all-gathered after "
                            "the update"),
        DEEPSPEED.at("deepspeed/runtime/zero/stage_1_and_2.py: reduce-scatter of the buckets, "
                     "all_gather_dp_groups after step")),
    2: (RAJBHANDARI_2020.at("section 5.2: P_os+g, gradients reduce-scattered as they are produced"),
        DEEPSPEED.at("deepspeed/runtime/zero/stage_1_and_2.py: "
                     "reduce_independent_p_g_buckets_and_remove_grads in every backward")),
    3: (RAJBHANDARI_2020.at("section 5.3: P_os+g+p, parameters all-gathered before each layer's forward and "
                            "backward"),
        ZHAO_2023.at("section 3.3.2: backward prefetching; torch/distributed/fsdp, BACKWARD_PRE and "
                     "limit_all_gathers")),
}
"""What each ZeRO stage's schedule follows, cited by the step that uses it."""

Price = Callable[[str, Fraction], Fraction]
"""``price(collective, n_bytes) -> seconds`` over the data-parallel ranks."""
Plan = Callable[[list[Fraction]], BucketPlan]
"""Forms the buckets of gradient sizes given layer 0 first (reduced from the last)."""


@dataclass(frozen=True, slots=True)
class Unit:
    """A layer (or the logits) on a device: per micro-batch and rank, its F and B parts and gradient."""

    forward: Fraction
    backward: Fraction  # the whole backward, TP communication and recomputation included
    weight: Fraction  # the part of backward that is the weight gradient (zb-h1's W)
    gradient_bytes: Fraction  # also its parameter bytes on one rank
    tp: Fraction = Fraction(0)  # the tensor-parallel communication inside forward and backward
    recompute: Fraction = Fraction(0)  # the recomputation at the start of backward
    cp: Fraction = Fraction(0)  # the exposed context-parallel communication inside forward and backward
    ep: Fraction = Fraction(0)  # the expert-parallel all-to-alls inside forward and backward
    pp: Fraction = Fraction(0)  # a blocking pipeline exchange inside forward and backward


def totals(units: Sequence[Unit]) -> tuple[Fraction, Fraction, Fraction]:
    """A model chunk's forward, its backward less the weight gradient, and the weight gradient: the
    F, B and W of one micro-batch in the split schedules (B + W in the others)."""
    ran = runs(units)  # a run of one unit, as most layers are, summed as a product
    counts = [n for _, n in ran]
    weight = exact_sum((u.weight for u, _ in ran), counts)
    return (exact_sum((u.forward for u, _ in ran), counts),
            exact_sum((u.backward for u, _ in ran), counts) - weight, weight)


def runs(units: Sequence[Unit]) -> list[tuple[Unit, int]]:
    """*units* as (unit, how many times in a row)."""
    out: list[tuple[Unit, int]] = []
    for u in units:
        if out and out[-1][0] is u:
            out[-1] = (u, out[-1][1] + 1)
        else:
            out.append((u, 1))
    return out


@dataclass(frozen=True, slots=True)
class Issued:
    """One collective a device issued: what, for which round (micro-batch), and when it ran."""

    collective: str
    label: str
    bytes: Fraction
    microbatch: int
    layers: tuple[int, ...]
    ready: Fraction
    start: Fraction
    end: Fraction
    gradient: bool  # a gradient reduction (not a parameter all-gather)


class Device:
    """A pipeline device's units per model chunk and its communication stream, run op by op.

    *order* is the device's operations ``(op, microbatch, chunk)`` in the order it runs them;
    the gradient buckets of each reduced micro-batch are formed from the order in which that
    order makes the gradients ready.  :meth:`run` is the ``execute`` of
    :func:`~costmodel.pipeline.simulate.simulate_devices`.  With *scale* (no slowdown) every time is
    an integer number of ticks of 1/scale s, which must divide every work and collective exactly:
    the same simulation in integer arithmetic.
    """

    def __init__(self, units: Sequence[Sequence[Unit]], *, order: Sequence[tuple[str, int, int]],
                 microbatches: int, split: bool, zero: int, prefetch: int, dp: int, price: Price,
                 plan: Plan, slowdown: Fraction, overlap_param_gather: bool = False,
                 overlap_grad_reduce: bool = True, align_param_gather: bool = True,
                 regather: bool = False, gathers: bool | None = None, param_ratio: Fraction = Fraction(1),
                 scale: int | None = None) -> None:
        self.scale = scale
        origin: Any = Fraction(0) if scale is None else 0
        self.units = units
        self.order = order
        self.split = split
        self.zero = zero
        self.gathers = zero in (1, 2) if gathers is None else gathers  # the parameters after the step
        self.param_ratio = param_ratio  # a parameter's bytes over its gradient's (bf16 over fp32: 1/2)
        self.prefetch = prefetch
        self.overlap_param_gather = overlap_param_gather
        self.regather = regather and zero >= 3
        self.active = dp > 1
        self.price = price
        if scale is not None and slowdown:
            raise ValueError("a device in integer ticks runs without a slowdown (its rate would divide them)")
        self.stream = CommStream(slowdown, origin=origin)
        self.issued: list[Issued] = []
        self.compute_end = origin
        self.plans: dict[int, tuple[list[tuple[int, int]], tuple[Bucket, ...]]] = {}
        # (microbatch, chunk, unit) -> the buckets its gradient completes (all of a round's at its last
        # gradient when the buckets wait for the whole backward)
        self._closes: dict[tuple[int, int, int], tuple[int, ...]] = {}
        self._need: dict[tuple[str, int, int, int], int] = {}  # (op, microbatch, chunk, unit) -> index
        # what each all-gather a computation waits for moves: (label, bytes, microbatch, layers), by need
        self._gathers: list[tuple[str, Fraction, int, tuple[int, ...]]] = []
        self._gathered: list[Fraction] = []  # each issued all-gather's end, by need index
        self._whole: dict[tuple[int, str], Fraction] = {}  # (chunk, op) -> its layers' work in one piece
        for c, chunk in enumerate(units):
            f, b, w = totals(chunk)
            self._whole[c, "F"], self._whole[c, "B"], self._whole[c, "W"] = (
                self._t(f), self._t(b if split else b + w), self._t(w))
        if not self.active:
            return
        if zero >= 3:
            self._gather_layers(order)
            return
        self._plan_buckets(order, microbatches=microbatches, plan=plan,
                           overlap_grad_reduce=overlap_grad_reduce)
        if overlap_param_gather:
            self._gather_in_forward(order)
            if align_param_gather:  # every bucket's gather issued when the step starts
                for label, n, jj, layers in self._gathers:
                    self._gathered.append(self._issue("allgather", label, n, microbatch=jj, layers=layers,
                                                      at=origin, gradient=False))

    def _gather_layers(self, order: Sequence[tuple[str, int, int]]) -> None:
        """ZeRO 3: each layer's parameters all-gathered before its forward and its backward (and before its
        recomputation, when the framework gathers them again for it), in the order the device runs them."""
        units = self.units
        for op, j, c in order:
            if op not in ("F", "B"):
                continue
            ids = range(len(units[c])) if op == "F" else reversed(range(len(units[c])))
            for i in ids:
                again = self.regather and units[c][i].recompute
                needs = ("F",) if op == "F" else (("R", "B") if again else ("B",))
                for need in needs:
                    self._need[need, j, c, i] = len(self._gathers)
                    what = {"F": "fwd", "R": "rec", "B": "bwd"}[need]
                    self._gathers.append((f"AG {self._name(c, i)} "
                                          f"{what}", units[c][i].gradient_bytes, j, (i,)))

    def _plan_buckets(self, order: Sequence[tuple[str, int, int]], *, microbatches: int, plan: Plan,
                      overlap_grad_reduce: bool) -> None:
        """ZeRO 0 to 2: each reduced round's buckets, formed in the order its gradients are made, and the
        gradient that closes each (the last of the backward for all of them when the reduction waits for
        it)."""
        units = self.units
        produce = "W" if self.split else "B"
        rounds = range(microbatches) if self.zero == 2 else (microbatches - 1,)
        chunks_of: dict[int, list[int]] = {j: [] for j in rounds}  # each round's chunks, in the order run
        for op, j, c in order:
            if op == produce and j in chunks_of:
                chunks_of[j].append(c)
        formed: dict[tuple[int, ...], tuple[list[tuple[int, int]], tuple[Bucket, ...]]] = {}
        for j in rounds:
            key = tuple(chunks_of[j])
            if key not in formed:  # rounds that ready their chunks in one order share their buckets
                ready = [(c, i) for c in key for i in reversed(range(len(units[c]))) if not units[c][i].pp]
                formed[key] = (ready, tuple(plan([units[c][i].gradient_bytes for c, i in reversed(ready)])))
            ready, buckets = formed[key]
            if overlap_grad_reduce:
                for k, bucket in enumerate(buckets):
                    last = len(ready) - 1 - min(bucket.layers)  # the bucket's last gradient to be ready
                    self._closes[j, ready[last][0], ready[last][1]] = (k,)
            else:
                self._closes[j, ready[-1][0], ready[-1][1]] = tuple(range(len(buckets)))
            self.plans[j] = (ready, buckets)

    def _gather_in_forward(self, order: Sequence[tuple[str, int, int]]) -> None:
        """ZeRO 1 and 2 with Megatron-LM's ``overlap_param_gather``: the parameters the last step updated
        are all-gathered bucket by bucket as the first micro-batch's forward reaches them, the next
        bucket's all-gather issued when a bucket's first layer starts (one ahead)."""
        ready, buckets = self.plans[max(self.plans)]
        of = {ready[len(ready) - 1 - layer]: k for k, bucket in enumerate(buckets) for layer in bucket.layers}
        forward = [(c, i) for op, j, c in order if op == "F" and j == 0 for i in range(len(self.units[c]))
                   if not self.units[c][i].pp]
        index: dict[int, int] = {}  # bucket -> need index, in the order the forward needs them
        for c, i in forward:
            k = of[c, i]
            if k not in index:
                index[k] = len(self._gathers)
                bucket = buckets[k]
                self._gathers.append((f"params {k}", bucket.bytes * self.param_ratio, 0, bucket.layers))
            self._need["F", 0, c, i] = index[k]
        self.prefetch = 1

    # -- running ----------------------------------------------------------------------------------

    def produces(self, op: str, j: int) -> bool:
        """Whether *op* of micro-batch *j* makes gradients that a bucket reduces."""
        return op == ("W" if self.split else "B") and j in self.plans

    def producing(self) -> set[tuple[str, int]]:
        """The ``(op, microbatch)`` that make gradients a bucket reduces (:meth:`produces`)."""
        return {("W" if self.split else "B", j) for j in self.plans}

    def first_interaction(self) -> int:
        """The index of the first of the device's operations (in its order) that issues or waits for a
        collective, or runs while one is in flight; the number of operations when none does."""
        if not self.active:
            return len(self.order)
        if self.issued or self.zero >= 3:  # gathers issued when the step starts, or before every layer
            return 0
        for i, (op, j, _) in enumerate(self.order):
            if self.produces(op, j) or (self.overlap_param_gather and op == "F" and j == 0):
                return i
        return len(self.order)

    def run(self, op: str, j: int, c: int, start: Fraction) -> Fraction:
        """Run *op* of micro-batch *j* on chunk *c* from *start*; its end."""
        units, stream, t = self.units[c], self.stream, start
        waits = self.active and (self.zero >= 3 or (self.overlap_param_gather and op == "F" and j == 0))
        if not waits and not self.produces(op, j):
            # nothing is issued or awaited inside: the operation's layers run as one piece of work
            self.compute_end = stream.compute(t, self._whole[c, op])
            return self.compute_end
        tick = self._t
        if op == "F":
            for i, u in enumerate(units):
                t = stream.compute(self._wait("F", j, c, i, t), tick(u.forward))
        elif op == "B":
            for i in reversed(range(len(units))):
                u = units[i]
                work = u.backward - u.weight if self.split else u.backward
                if (self.active and self.regather and u.recompute):  # gathered again for the recomputation
                    t = stream.compute(self._wait("R", j, c, i, t), tick(u.recompute))
                    work -= u.recompute
                t = stream.compute(self._wait("B", j, c, i, t), tick(work))
                if not self.split:
                    self._produced(j, c, i, t)
        else:
            for i in reversed(range(len(units))):
                t = stream.compute(t, tick(units[i].weight))
                self._produced(j, c, i, t)
        self.compute_end = t
        return t

    def _issue(self, collective: str, label: str, n: Fraction, *, microbatch: int, layers: tuple[int, ...],
               at: Fraction, gradient: bool) -> Fraction:
        if not n:
            return at
        start, end = self.stream.issue(at, self._t(self.price(collective, n)))
        self.issued.append(Issued(collective=collective, label=label, bytes=n, microbatch=microbatch,
                                  layers=layers, ready=at, start=start, end=end, gradient=gradient))
        return end

    def _t(self, seconds: Fraction) -> Any:
        """*seconds* as the device counts time: itself, or with a scale an exact number of ticks."""
        if self.scale is None:
            return seconds
        ticks = seconds * self.scale
        if ticks.denominator != 1:
            raise ValueError(f"{seconds} s is not a whole number of ticks of 1/{self.scale} s")
        return ticks.numerator

    def _name(self, c: int, i: int) -> str:
        """Unit i of chunk c: ``3``, or ``1.3`` with model chunks."""
        return f"{c}.{i}" if len(self.units) > 1 else str(i)

    def _wait(self, op: str, j: int, c: int, i: int, t: Fraction) -> Fraction:
        """Issue the all-gathers up to *prefetch* ahead of unit i's (ZeRO 3: units; an overlapped
        parameter gather: buckets); when unit i's parameters have arrived."""
        k = self._need.get((op, j, c, i))
        if k is None:
            return t
        while len(self._gathered) <= min(k + self.prefetch, len(self._gathers) - 1):
            label, n, jj, layers = self._gathers[len(self._gathered)]
            self._gathered.append(self._issue("allgather", label, n, microbatch=jj, layers=layers, at=t,
                                              gradient=False))
        return max(t, self._gathered[k])

    def _produced(self, j: int, c: int, i: int, t: Fraction) -> None:
        """Unit i of chunk c has its gradient of micro-batch j at t: issue what that completes."""
        if not self.active:
            return
        if self.zero >= 3:
            self._issue("reduce-scatter", f"RS {self._name(c, i)}", self.units[c][i].gradient_bytes,
                        microbatch=j, layers=(i,), at=t, gradient=True)
            return
        collective = "allreduce" if self.zero == 0 else "reduce-scatter"
        for k in self._closes.get((j, c, i), ()):
            bucket = self.plans[j][1][k]
            self._issue(collective, f"bucket {k}", bucket.bytes, microbatch=j, layers=bucket.layers, at=t,
                        gradient=True)

    # -- after the step ---------------------------------------------------------------------------

    @property
    def end(self) -> Fraction:
        """When the device is done: its last compute, or its last collective."""
        return max(self.compute_end, self.stream.free)

    def gather_parameters(self, at: Fraction) -> Fraction:
        """ZeRO 1 and 2 (and DeepSpeed's BF16_Optimizer): all-gather the updated parameters bucket by bucket
        from *at*; the end."""
        if not self.active or not self.gathers or self.overlap_param_gather:
            return at
        j = max(self.plans)
        end = at
        for k, bucket in enumerate(self.plans[j][1]):
            end = self._issue("allgather", f"params {k}", bucket.bytes * self.param_ratio, microbatch=j,
                              layers=bucket.layers, at=end, gradient=False)
        return end
