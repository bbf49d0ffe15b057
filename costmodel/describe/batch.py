"""A global batch and a GPU count as Megatron-LM takes them: the micro-batches and replicas they give.

Megatron-LM (``megatron/core/num_microbatches_calculator.py``) runs a global batch of N sequences as
m = N / (B · dp) micro-batches of B sequences on each of the dp data-parallel replicas, and refuses N
that B · dp does not divide; its data-parallel size is the world size over tp · pp · cp
(``megatron/core/parallel_state.py``, ``initialize_model_parallel``).  The refusals here name the
nearest values that divide.
"""

from __future__ import annotations

from costmodel.errors import InputError
from costmodel.references import MEGATRON_LM
from costmodel.validate import positive

__all__ = ["SOURCES", "data_parallel_for", "microbatches_for"]

SOURCES = (
    MEGATRON_LM.at("megatron/core/num_microbatches_calculator.py: num_micro_batches = global_batch_size // "
                   "(micro_batch_size × data_parallel_size), the global batch a multiple of their product"),
    MEGATRON_LM.at("megatron/core/parallel_state.py, initialize_model_parallel: data_parallel_size = "
                   "world_size / (tp × pp × cp)"),
)


def _nearest(target: int, step: int, count: int = 2) -> list[int]:
    """The *count* multiples of *step* nearest *target* (≥ step), in order."""
    low = max(step, target // step * step)
    found = {m for m in (low - step, low, low + step, low + 2 * step) if m >= step and m != target}
    return sorted(sorted(found, key=lambda m: (abs(m - target), m))[:count])


def microbatches_for(global_batch: int, *, micro_batch: int = 1, dp: int = 1) -> int:
    """m = global_batch / (micro_batch · dp), the micro-batches each replica runs per step.

    Raises :class:`~costmodel.errors.InputError` naming the nearest global batches (and micro-batch
    sizes) that divide, when micro_batch · dp does not divide *global_batch*.

    >>> microbatches_for(1536, micro_batch=1, dp=12)
    128
    >>> microbatches_for(1000, micro_batch=2, dp=64)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: global_batch=1000 is not a multiple of the micro-batch times the replicas, \
2 × 64 = 128; give global_batch=896 or 1024 (1000 sequences do not split evenly over 64 replicas)
    """
    n, b, d = positive(global_batch, "global_batch"), positive(micro_batch, "micro_batch"), positive(dp, "dp")
    if n % (b * d) == 0:
        return n // (b * d)
    near = " or ".join(map(str, _nearest(n, b * d)))
    sizes = ""
    if n % d == 0:
        per = n // d
        fits = [x for x in range(1, per + 1) if per % x == 0]
        closest = sorted(sorted(fits, key=lambda x: (abs(x - b), x))[:2])
        sizes = f", or micro_batch={' or '.join(map(str, closest))}"
    else:
        sizes = f" ({n} sequence{' does' if n == 1 else 's do'} not split evenly over {d} replicas)"
    raise InputError(f"global_batch={n} is not a multiple of the micro-batch times the replicas, {b} × {d} = "
                     f"{b * d}; give global_batch={near}{sizes}")


def data_parallel_for(world_size: int, *, tp: int = 1, pp: int = 1, cp: int = 1) -> int:
    """dp = world_size / (tp · pp · cp), the data-parallel replicas of *world_size* GPUs, as Megatron-LM
    derives it.

    >>> data_parallel_for(16384, tp=8, pp=16)
    128
    >>> data_parallel_for(100, tp=8)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 100 GPUs are not a multiple of tp × pp × cp = 8 × 1 × 1 = 8; \
give world_size=96 or 104
    """
    g = positive(world_size, "world_size")
    t, p, c = positive(tp, "tp"), positive(pp, "pp"), positive(cp, "cp")
    ranks = t * p * c
    if g % ranks:
        near = " or ".join(map(str, _nearest(g, ranks)))
        raise InputError(f"{g} GPUs are not a multiple of tp × pp × cp = {t} × {p} × {c} = {ranks}; "
                         f"give world_size={near}")
    return g // ranks
