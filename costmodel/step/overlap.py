"""The event-level schedule of data-parallel gradient reduction under the backward pass.

One replica runs its forward pass (F seconds), then the backward pass layer by layer from the last
layer to the first: layer i's gradient is ready at

    r_i = F + Σ_{j ≥ i} B_j .

Bucket k (in the order the framework reduces them, see :mod:`costmodel.step.buckets`) can start
when the last of its gradients is ready and the previous bucket's collective is done, since the
buckets share one communication stream (PyTorch DDP launches bucket all-reduces in order,
Li et al. VLDB 2020, section 3.2.3; Megatron-LM's ``ParamAndGradBuffer`` and DeepSpeed's reduction
stream do the same):

    start_k = max(ready_k, end_{k-1}),    end_k = start_k + T_k,    ready_k = max_{i ∈ k} r_i,

where T_k is the modelled time of the collective (all-reduce by default) of the bucket's bytes over
dp ranks on the given link or calibrated profile (:func:`costmodel.collectives.evaluate.cost`).
Communication before the backward pass ends at E = F + ΣB is hidden; what runs past E is exposed
and lengthens the step:

    step = max(E, end_last) + optimizer,    exposed = max(0, end_last − E).

Compute is assumed not to slow down while communication is in flight (Calculon's
``processor_usage`` of 0); :func:`costmodel.step.step` models that (``slowdown=``), with the
pipeline and ZeRO, on each device's stream (:mod:`costmodel.step.device`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.collectives.evaluate import cost
from costmodel.errors import InputError
from costmodel.params import Link
from costmodel.references import PYTORCH_DDP, Cited
from costmodel.step._values import each, named
from costmodel.step.buckets import Bucket, BucketPlan
from costmodel.units import parse_time
from costmodel.validate import positive

__all__ = ["BucketTiming", "OverlapSchedule", "overlap_schedule"]

_SOURCE = PYTORCH_DDP.at("section 3.2.3: buckets reduced in order, overlapped with the backward pass")


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketTiming(JSONFields):
    """One bucket's collective in the schedule: when it could start, ran, and how much was hidden."""

    index: int
    layers: tuple[int, ...]
    bytes: Fraction
    ready_s: Fraction
    start_s: Fraction
    end_s: Fraction
    communication_s: Fraction
    hidden_s: Fraction
    exposed_s: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class OverlapSchedule(JSONFields):
    """A replica's step with its gradient reduction overlapped with the backward pass."""

    dp: int
    collective: str
    algorithm: str
    forward_s: Fraction
    backward_s: Fraction
    optimizer_s: Fraction
    compute_end_s: Fraction
    communication_s: Fraction
    hidden_s: Fraction
    exposed_s: Fraction
    step_s: Fraction
    buckets: tuple[BucketTiming, ...]
    notes: tuple[str, ...] = ()
    source: Cited = _SOURCE


def _times(values: Any, name: str) -> tuple[Fraction, ...]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        return (named(parse_time, values, name),)
    return each(parse_time, values, name)


def _check_buckets(buckets: Sequence[Bucket], layers: int) -> None:
    seen = sorted(i for b in buckets for i in b.layers)
    if seen != list(range(layers)):
        raise InputError(f"buckets hold layers {seen}, not each of the {layers} layers of backward_s once; "
                         "form them from the same model (ddp_buckets, megatron_buckets, deepspeed_buckets)")


def overlap_schedule(*, backward_s: Sequence[Any], buckets: BucketPlan | Sequence[Bucket], dp: int,
                     link: Link, forward_s: Any = 0, optimizer_s: Any = 0, algorithm: str = "ring",
                     collective: str = "allreduce") -> OverlapSchedule:
    """Schedule the buckets' collectives under the backward pass (see the module notes).

    Parameters
    ----------
    backward_s : sequence of times
        B_i, the backward time of layer i (layer 0 first in the forward pass), each ≥ 0.
    buckets : BucketPlan or sequence of Bucket
        Every layer exactly once, in the order the collectives are issued.
    dp : int
        Data-parallel ranks the collective runs over; with 1 nothing is communicated.
    link : LinkParams or PiecewiseLink
        The link (or calibrated profile) that prices each collective.
    forward_s : time or sequence of times
        The forward pass, in total or per layer.
    optimizer_s : time
        The optimizer step after the last collective.
    algorithm, collective : str
        The collective's algorithm (default ring all-reduce).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> from costmodel.step.buckets import ddp_buckets
    >>> plan = ddp_buckets(["1MiB", "1MiB"], first_bucket_bytes="1MiB")
    >>> s = overlap_schedule(backward_s=["1ms", "1ms"], buckets=plan, dp=2,
    ...                      link=combine_link(alpha=0, beta="1ns/B"), forward_s="1ms")
    >>> [(float(b.start_s), float(b.end_s)) for b in s.buckets], float(s.exposed_s)
    ([(0.002, 0.003048576), (0.003048576, 0.004097152)], 0.001097152)
    """
    backward = _times(backward_s, "backward_s")
    if isinstance(backward_s, str) or not isinstance(backward_s, Sequence) or not backward:
        raise InputError(f"backward_s={backward_s!r} is not a non-empty list of times; give each layer's")
    forward = sum(_times(forward_s, "forward_s"), Fraction(0))
    optimizer = named(parse_time, optimizer_s, "optimizer_s")
    positive(dp, "dp")
    plan = tuple(buckets)
    _check_buckets(plan, len(backward))
    ready = [Fraction(0)] * len(backward)
    clock = forward
    for layer in reversed(range(len(backward))):
        clock += backward[layer]
        ready[layer] = clock
    compute_end = clock

    timings: list[BucketTiming] = []
    notes: list[str] = []
    channel = Fraction(0)
    name = algorithm
    for k, bucket in enumerate(plan):
        if dp == 1 or bucket.bytes == 0:
            duration = Fraction(0)
        else:
            priced = cost(collective, algorithm, p=dp, n=bucket.bytes, link=link)
            duration, name = priced.time_s, priced.algorithm
            notes.extend(n for n in priced.notes if n not in notes)
        bucket_ready = max(ready[i] for i in bucket.layers)
        start = max(bucket_ready, channel)
        channel = start + duration
        hidden = max(Fraction(0), min(channel, compute_end) - start)
        timings.append(BucketTiming(index=k, layers=bucket.layers, bytes=bucket.bytes, ready_s=bucket_ready,
                                    start_s=start, end_s=channel, communication_s=duration, hidden_s=hidden,
                                    exposed_s=duration - hidden))
    communication = sum((t.communication_s for t in timings), Fraction(0))
    exposed = max(Fraction(0), channel - compute_end)
    return OverlapSchedule(
        dp=dp, collective=collective, algorithm=name, forward_s=forward, backward_s=compute_end - forward,
        optimizer_s=optimizer, compute_end_s=compute_end, communication_s=communication,
        hidden_s=communication - exposed, exposed_s=exposed, step_s=max(compute_end, channel) + optimizer,
        buckets=tuple(timings), notes=tuple(notes))
