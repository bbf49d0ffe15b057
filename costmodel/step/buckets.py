"""Gradient buckets as PyTorch DDP, Megatron-LM and DeepSpeed form them, in reverse layer order.

Gradients become ready in reverse layer order during the backward pass, and each framework packs
them into buckets in that order, reducing a bucket as one collective.  Here a layer is the unit
(frameworks pack parameter tensors; a layer's tensors are consecutive in that order, so a bucket
boundary falls between layers when every layer is one tensor).  Layers are numbered from 0, the
first in the forward pass; *layer_bytes[i]* is the gradient bytes of layer i.

* **PyTorch DDP** (``torch/nn/parallel/distributed.py``: ``bucket_cap_mb`` defaults to 25, the
  limits passed to the reducer are ``[dist._DEFAULT_FIRST_BUCKET_BYTES, bucket_bytes_cap]``;
  ``torch/csrc/distributed/c10d/reducer.hpp``: ``kDefaultFirstBucketBytes = 1024 * 1024``,
  ``kDefaultBucketBytesCap = 25 * 1024 * 1024``; ``reducer.cpp``,
  ``compute_bucket_assignment_by_size``).  A tensor joins the open bucket, which closes once its
  size is at least its limit (``bucket.size >= bucket_size_limit``); the first bucket's limit is
  1 MiB, every later one's the cap.  From the second iteration on DDP rebuilds its buckets in the
  order gradients became ready (``Reducer::rebuild_buckets``), which is the order used here.
* **Megatron-LM** (``megatron/core/distributed/distributed_data_parallel.py``: ``bucket_size =
  max(40000000, 1000000 * dp_group.size())`` elements when none is given;
  ``param_and_grad_buffer.py``, ``_compute_default_per_buffer_param_layout``): parameters in
  reverse order, a bucket closes once it holds at least ``bucket_size`` elements.
* **DeepSpeed ZeRO-1/2** (``deepspeed/runtime/zero/config.py``: ``reduce_bucket_size`` defaults to
  5e8 elements; ``stage_1_and_2.py``, ``reduce_independent_p_g_buckets_and_remove_grads``): the
  open bucket is reduced *before* a gradient that would take it past the size
  (``elements_in_ipg_bucket + param.numel() > reduce_bucket_size``), so no bucket exceeds the
  size unless one layer alone does.

Examples
--------
>>> [b.layers for b in ddp_buckets([2**20, 2**20, 2**20])]
[(2,), (1, 0)]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields
from costmodel.errors import InputError
from costmodel.exact import to_fraction
from costmodel.references import DEEPSPEED, MEGATRON_LM, PYTORCH_DDP, Cited
from costmodel.step._values import each
from costmodel.units import parse_size
from costmodel.validate import positive

__all__ = [
    "BUCKET_RULES",
    "CITED",
    "DDP_BUCKET_CAP_BYTES",
    "DDP_FIRST_BUCKET_BYTES",
    "DEEPSPEED_REDUCE_BUCKET_ELEMENTS",
    "Bucket",
    "BucketPlan",
    "ddp_buckets",
    "deepspeed_buckets",
    "megatron_bucket_elements",
    "megatron_buckets",
]

CITED = (PYTORCH_DDP, MEGATRON_LM, DEEPSPEED)

BUCKET_RULES = ("ddp", "megatron", "deepspeed")
"""The gradient-bucket rules a step knows: PyTorch DDP's, Megatron-LM's and DeepSpeed's."""

DDP_FIRST_BUCKET_BYTES = 1024 * 1024
"""PyTorch's ``kDefaultFirstBucketBytes`` (``torch/csrc/distributed/c10d/reducer.hpp``), exposed to
Python as ``torch.distributed._DEFAULT_FIRST_BUCKET_BYTES``."""

DDP_BUCKET_CAP_BYTES = 25 * 1024 * 1024
"""PyTorch DDP's default ``bucket_cap_mb = 25`` (``torch/nn/parallel/distributed.py``), i.e.
``kDefaultBucketBytesCap`` of ``reducer.hpp``."""

DEEPSPEED_REDUCE_BUCKET_ELEMENTS = 500_000_000
"""DeepSpeed's default ``reduce_bucket_size`` (``deepspeed/runtime/zero/config.py``), in elements."""

_DDP = PYTORCH_DDP.at("torch/nn/parallel/distributed.py (bucket_cap_mb = 25, _DEFAULT_FIRST_BUCKET_BYTES); "
                      "torch/csrc/distributed/c10d/reducer.cpp, compute_bucket_assignment_by_size")
_MEGATRON = MEGATRON_LM.at("megatron/core/distributed/distributed_data_parallel.py (bucket_size = "
                           "max(40000000, 1000000 * dp)); param_and_grad_buffer.py")
_DEEPSPEED = DEEPSPEED.at("deepspeed/runtime/zero/config.py (reduce_bucket_size = 5e8); stage_1_and_2.py, "
                          "reduce_independent_p_g_buckets_and_remove_grads")


@dataclass(frozen=True, slots=True, kw_only=True)
class Bucket(JSONFields):
    """One bucket: its layers in the order their gradients become ready (descending), and its bytes."""

    layers: tuple[int, ...]
    bytes: Fraction
    limit_bytes: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketPlan(JSONFields):
    """The buckets of a model, in the order they are reduced (the first holds the last layer)."""

    rule: str
    buckets: tuple[Bucket, ...]
    source: Cited

    def __iter__(self) -> Iterator[Bucket]:
        return iter(self.buckets)

    def __len__(self) -> int:
        return len(self.buckets)

    @property
    def layers(self) -> int:
        """How many layers the buckets hold."""
        return sum(len(b.layers) for b in self.buckets)


def _sizes(layer_bytes: Sequence[Any]) -> tuple[Fraction, ...]:
    if isinstance(layer_bytes, str) or not isinstance(layer_bytes, Sequence) or not layer_bytes:
        raise InputError(f"layer_bytes={layer_bytes!r} is not a non-empty list of sizes; "
                         "give each layer's gradient bytes, such as [4194304, '4MiB']")
    return each(parse_size, layer_bytes, "layer_bytes")


def _limit(value: Any, name: str) -> Fraction:
    try:
        limit = parse_size(value, allow_zero=False)
    except InputError as exc:
        raise InputError(f"{name}={value!r}: {exc}") from None
    return limit


def _element_bytes(value: Any) -> Fraction:
    size = to_fraction(value, what="a size in bytes", example="2")
    if size <= 0:
        raise InputError(f"bytes_per_element={value!r} is not positive; give 2 for bf16 gradients, "
                         "4 for fp32")
    return size


def _fill(sizes: Sequence[Fraction], limits: Sequence[Fraction], *, before: bool) -> tuple[Bucket, ...]:
    """Pack layers L-1, ..., 0 into buckets; the k-th bucket's limit is ``limits[min(k, len-1)]``.

    With *before* false a layer joins the open bucket, which closes once it reaches its limit
    (DDP, Megatron); with *before* true the open bucket closes first when the layer would take
    it past its limit (DeepSpeed).
    """
    buckets: list[Bucket] = []
    layers: list[int] = []
    total = Fraction(0)

    def close() -> None:
        nonlocal layers, total
        buckets.append(Bucket(layers=tuple(layers), bytes=total, limit_bytes=limit()))
        layers, total = [], Fraction(0)

    def limit() -> Fraction:
        return limits[min(len(buckets), len(limits) - 1)]

    for layer in reversed(range(len(sizes))):
        if before and layers and total + sizes[layer] > limit():
            close()
        layers.append(layer)
        total += sizes[layer]
        if not before and total >= limit():
            close()
    if layers:
        close()
    return tuple(buckets)


def ddp_buckets(layer_bytes: Sequence[Any], *, bucket_cap_bytes: Any = DDP_BUCKET_CAP_BYTES,
                first_bucket_bytes: Any = DDP_FIRST_BUCKET_BYTES) -> BucketPlan:
    """PyTorch DDP's buckets (see the module notes): a 1 MiB first bucket, then 25 MiB ones.

    Examples
    --------
    >>> plan = ddp_buckets(["10MiB"] * 6)
    >>> [(b.layers, b.bytes / 2**20) for b in plan]
    [((5,), Fraction(10, 1)), ((4, 3, 2), Fraction(30, 1)), ((1, 0), Fraction(20, 1))]
    """
    sizes = _sizes(layer_bytes)
    limits = (_limit(first_bucket_bytes, "first_bucket_bytes"), _limit(bucket_cap_bytes, "bucket_cap_bytes"))
    return BucketPlan(rule="ddp", buckets=_fill(sizes, limits, before=False), source=_DDP)


def megatron_bucket_elements(dp: int) -> int:
    """Megatron-LM's default bucket size in elements: max(40·10⁶, 10⁶·dp).

    >>> megatron_bucket_elements(8), megatron_bucket_elements(64)
    (40000000, 64000000)
    """
    return max(40_000_000, 1_000_000 * positive(dp, "dp"))


def megatron_buckets(layer_bytes: Sequence[Any], *, dp: int, bytes_per_element: Any = 2,
                     bucket_elements: int | None = None) -> BucketPlan:
    """Megatron-LM's buckets: at least ``bucket_elements`` (default max(40·10⁶, 10⁶·dp)) each.

    *bytes_per_element* is the gradient's (2 for bf16, 4 with ``grad_reduce_in_fp32``).
    """
    elements = megatron_bucket_elements(dp) if bucket_elements is None else positive(
        bucket_elements, "bucket_elements")
    sizes = _sizes(layer_bytes)
    limit = elements * _element_bytes(bytes_per_element)
    return BucketPlan(rule="megatron", buckets=_fill(sizes, (limit,), before=False), source=_MEGATRON)


def deepspeed_buckets(layer_bytes: Sequence[Any], *, bytes_per_element: Any = 2,
                      reduce_bucket_size: int = DEEPSPEED_REDUCE_BUCKET_ELEMENTS) -> BucketPlan:
    """DeepSpeed ZeRO-1/2's buckets: reduced before a layer would take one past ``reduce_bucket_size``.

    ``reduce_bucket_size`` is in elements, as in DeepSpeed's configuration.
    """
    sizes = _sizes(layer_bytes)
    limit = positive(reduce_bucket_size, "reduce_bucket_size") * _element_bytes(bytes_per_element)
    return BucketPlan(rule="deepspeed", buckets=_fill(sizes, (limit,), before=True), source=_DEEPSPEED)
