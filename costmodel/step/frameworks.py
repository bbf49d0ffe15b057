"""How each training framework reduces gradients and gathers parameters: the data-parallel schedule of a step.

A step's settings may name a framework (:data:`costmodel.step.config.FRAMEWORKS`); :func:`data_parallel`
turns it, with the ZeRO stage and the overlap switches, into a :class:`DataParallel`: the bucket rule,
whether buckets are reduced as the backward pass makes them or after it, the parameter gathers of
ZeRO 1 and 2, and the bytes of a gradient element on the wire.  The defaults are each framework's own:

* **PyTorch DDP** (``ddp``): 25 MiB buckets all-reduced as the backward makes them (a 1 MiB first
  bucket); with automatic mixed precision the parameters, and so the gradients, are fp32.  No ZeRO
  (FSDP is ``fsdp``).
* **PyTorch FSDP** (``fsdp``, ZeRO 3 ``FULL_SHARD`` by default; 2 is ``SHARD_GRAD_OP``): each unit's
  parameters all-gathered before its forward and backward, one unit ahead, its gradient
  reduce-scattered; the usual mixed-precision policy reduces in bf16.
* **DeepSpeed** (``deepspeed``): ZeRO 0 all-reduces 5·10⁸-element buffers after the backward
  (``buffered_allreduce_fallback``); ZeRO 1 and 2 reduce buckets of ``reduce_bucket_size`` as they
  fill only with ``overlap_comm`` (default off for stages 1 and 2, on for 3); gradients in the model's
  dtype.  ZeRO 3 releases a module's parameters after its forward and fetches them in its pre-forward
  hook, so a recomputed forward (activation checkpointing) gathers them once more before the backward
  gathers them again (``deepspeed/runtime/zero/parameter_offload.py``: ``pre_sub_module_forward_function``
  and ``post_sub_module_forward_function``); it fetches module by module, one ahead
  (``partitioned_param_coordinator.py``: the prefetch stops once ``stage3_prefetch_bucket_size``, 5·10⁷
  elements, is reached, which one matrix of a large model passes), so a layer's parameters cross the
  network as one collective per matrix (QKV, projection, the two FFN matrices).
* **Megatron-LM** (``megatron``, Megatron-Core's ``DistributedDataParallel``): buckets of
  max(4·10⁷, 10⁶·dp) elements, reduced after the backward unless ``--overlap-grad-reduce``; ZeRO 1 is
  its distributed optimizer (reduce-scatter, then all-gather of the updated parameters, after the
  optimizer or, with ``--overlap-param-gather``, in the next forward); with bf16 it accumulates and
  reduces gradients in fp32 (``accumulate_allreduce_grads_in_fp32``), inside the weight-gradient products
  (``gradient_accumulation_fusion``, which needs fp32 accumulation), and with fp16 adds each micro-batch's
  gradient with a kernel of its own.
* **Megatron-DeepSpeed** (``megatron-deepspeed``): the DeepSpeed engine's gradient all-reduce after the
  backward, in 5·10⁸-element buffers (one collective for most models' gradients per rank).

With bf16 and ZeRO 0 DeepSpeed's engine (``deepspeed``, ``megatron-deepspeed``) runs its ``BF16_Optimizer``
(BLOOM-176B's training did): each micro-batch's gradients added into an fp32 buffer, all-reduced in fp32
after the backward, the fp32 master weights and Adam's states partitioned over the data-parallel ranks
(ZeRO 1's memory), and the updated bf16 parameters all-gathered after the step.

Without a framework the schedule is generic: any ZeRO stage (Rajbhandari et al. 2020), buckets of the
``buckets`` rule (default DDP's) reduced as the backward makes them, gradients in the dtype's element.

**Pipeline sends** (:func:`pipeline_sends`).  Megatron-LM exchanges a stage's activations and gradients
with ``torch.distributed.batch_isend_irecv``, waits for the requests and then calls
``torch.cuda.synchronize()`` (``batch_p2p_sync``), so the exchange holds the device: nothing else is
launched until it is done.  Megatron-Core overlaps them with the compute only in the interleaved schedule
(``overlap_p2p_comm``, on by default there and refused elsewhere).  Megatron-LM before Megatron-Core (2023)
also split each tensor over the t tensor-parallel ranks, each sending 1/t, and all-gathered it on arrival
(``--scatter-gather-tensors-in-pipeline``, on by default; Narayanan et al. 2021, section 4.1); with
sequence parallelism the tensor is already split and nothing is gathered.  DeepSpeed's pipeline engine
(also Megatron-DeepSpeed's) sends and receives synchronously, and with tensor parallelism partitions the
activation and its gradient over the tensor-parallel ranks the same way, each sending 1/t and
all-gathering on arrival (``pipe_partitioned`` and ``grad_partitioned``, on by default:
``PartitionedTensor`` in ``deepspeed/runtime/pipe/engine.py``).  PyTorch's own schedules and the generic
step send beside the compute.

**Tensor-parallel collectives of the backward** (:func:`tp_overlap`).  Since September 2021 Megatron-LM
starts each column-parallel layer's input-gradient all-reduce asynchronously and computes the layer's
weight gradient meanwhile (``LinearWithGradAccumulationAndAsyncCommunication``); with sequence
parallelism the layer gathers its input again for the weight gradient while it computes the input
gradient, and reduce-scatters the input gradient while it computes the weight gradient.  The other
frameworks run a tensor-parallel layer's collectives between its products.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from costmodel.errors import InputError
from costmodel.references import DEEPSPEED, MEGATRON_LM, PYTORCH_DDP, ZHAO_2023, Cited
from costmodel.references import NARAYANAN_2021_MEGATRON as NARAYANAN

__all__ = ["DEEPSPEED_ENGINE", "FSDP_PREFETCH", "SENDS_SOURCES", "TP_OVERLAP_SOURCES", "DataParallel",
           "data_parallel", "pipeline_schedules", "pipeline_sends", "ring_attention", "tp_overlap",
           "zero_stages"]

FSDP_PREFETCH = 1
"""Units whose all-gather runs ahead of the compute under ZeRO 3: FSDP keeps one
(``backward_prefetch=BackwardPrefetch.BACKWARD_PRE``, ``limit_all_gathers=True``:
``torch/distributed/fsdp/fully_sharded_data_parallel.py``)."""

_SOURCES: dict[str, tuple[Cited, ...]] = {
    "ddp": (PYTORCH_DDP.at("torch/nn/parallel/distributed.py: bucket_cap_mb = 25, gradients all-reduced as "
                           "buckets fill (Reducer::autograd_hook)"),),
    "fsdp": (ZHAO_2023.at("sections 3.2-3.3: FULL_SHARD all-gathers before forward and backward, "
                          "reduce-scatters gradients, backward prefetch"),),
    "deepspeed": (DEEPSPEED.at("deepspeed/runtime/engine.py: allreduce_gradients, "
                               "buffered_allreduce_fallback("
                               "elements_per_buffer=500000000); zero/config.py: overlap_comm"),),
    "megatron": (MEGATRON_LM.at("megatron/core/distributed/distributed_data_parallel_config.py: "
                                "overlap_grad_reduce, overlap_param_gather, align_param_gather = False; "
                                "megatron/training/arguments.py: bf16 accumulates and reduces gradients in "
                                "fp32"),),
    "megatron-deepspeed": (DEEPSPEED.at("deepspeed/runtime/engine.py: allreduce_gradients after the backward "
                                        "at the gradient accumulation boundary"),),
    "generic": (),
}

BF16_OPTIMIZER: tuple[Cited, ...] = (
    DEEPSPEED.at("deepspeed/runtime/engine.py: _do_optimizer_sanity_check returns BFLOAT16 for bf16 without "
                 "ZeRO (fp32 gradient accumulation); allreduce_gradients: buffered_allreduce_fallback of the "
                 "optimizer's get_grads_for_reduction(), the fp32 gradients; runtime/bf16_optimizer.py: fp32 "
                 "states partitioned over the data-parallel ranks, update_lp_params all-gathers the bf16 "
                 "parameters after the step"),)
"""DeepSpeed's BF16_Optimizer: what a bf16 step on DeepSpeed's engine without ZeRO runs."""

SENDS_SOURCES: dict[str, tuple[Cited, ...]] = {
    "blocking": (MEGATRON_LM.at("megatron/core/pipeline_parallel/p2p_communication.py: batch_isend_irecv, "
                                "req.wait(), torch.cuda.synchronize() (batch_p2p_sync = True); "
                                "megatron/training/arguments.py: overlap_p2p_comm only with the interleaved "
                                "schedule"),
                 DEEPSPEED.at("deepspeed/runtime/pipe/p2p.py: send and recv with async_op=False")),
    "scatter-gather": (
        MEGATRON_LM.at("megatron/p2p_communication.py (commit 6985e58, 2021): "
                       "split_tensor_into_1d_equal_chunks before the sends, gather_split_1d_tensor after, "
                       "torch.cuda.synchronize() between; "
                       "megatron/arguments.py: scatter_gather_tensors_in_pipeline on by default"),
        NARAYANAN.at("section 4.1: the scatter/gather communication optimization"),
        DEEPSPEED.at("deepspeed/runtime/config.py: pipeline pipe_partitioned and grad_partitioned True by "
                     "default; pipe/engine.py: PartitionedTensor of the outputs and gradients sent, .full() "
                     "(an all-gather over the tensor-parallel group) on arrival; pipe/p2p.py: send and recv "
                     "with async_op=False")),
    "overlap": (),
}
"""The sources of each way of sending between pipeline stages."""

TP_OVERLAP_SOURCES: tuple[Cited, ...] = (
    MEGATRON_LM.at("megatron/core/tensor_parallel/layers.py, "
                   "LinearWithGradAccumulationAndAsyncCommunication.backward: all_reduce(grad_input, "
                   "async_op=True) before the weight gradient; with sequence parallelism "
                   "_all_gather_base(input, async_op=True) before the input gradient and "
                   "_reduce_scatter_base(grad_input, async_op=True) before the weight gradient "
                   "(async_tensor_model_parallel_allreduce from commit 16c9044 of 2021-09; absent at "
                   "6985e58 of 2021-08)"),
)
"""Where the backward's tensor-parallel overlap comes from."""

DEEPSPEED_ENGINE = frozenset({"deepspeed", "megatron-deepspeed"})
"""The frameworks whose pipeline and sequence splitting are DeepSpeed's engine's (Megatron-DeepSpeed runs
Megatron's layers on it)."""


def pipeline_schedules(framework: str | None) -> tuple[str, ...] | None:
    """The pipeline schedules *framework* runs (None: any modelled): DeepSpeed's pipeline engine, which
    Megatron-DeepSpeed uses too, has one training schedule (``deepspeed/runtime/pipe/schedule.py``,
    ``TrainSchedule``, run by ``engine.py``'s ``train_batch``), whose order is 1F1B's.

    >>> pipeline_schedules("megatron-deepspeed"), pipeline_schedules("megatron")
    (('1f1b',), None)
    """
    return ("1f1b",) if framework in DEEPSPEED_ENGINE else None


def ring_attention(framework: str | None) -> bool:
    """Whether *framework* splits a sequence over context-parallel ranks with ring attention, the context
    parallelism a step models (Megatron-Core's ``context_parallel_size``, PyTorch's
    ``torch.distributed.tensor.experimental.context_parallel``); DeepSpeed and Megatron-DeepSpeed split it
    with Ulysses' all-to-alls (``deepspeed/sequence/layer.py``, ``DistributedAttention``), not modelled.

    >>> ring_attention("megatron"), ring_attention("megatron-deepspeed")
    (True, False)
    """
    return framework not in DEEPSPEED_ENGINE


_RULES = {"ddp": "ddp", "fsdp": "ddp", "deepspeed": "deepspeed", "megatron": "megatron",
          "megatron-deepspeed": "deepspeed", "generic": "ddp"}
_OVERLAP = {"ddp": True, "fsdp": True, "deepspeed": False, "megatron": False, "megatron-deepspeed": False,
            "generic": True}
_ZERO = {"ddp": (0,), "fsdp": (2, 3), "deepspeed": (0, 1, 2, 3), "megatron": (0, 1),
         "megatron-deepspeed": (0, 1), "generic": (0, 1, 2, 3)}
_TITLES = {"ddp": "PyTorch DDP", "fsdp": "PyTorch FSDP", "deepspeed": "DeepSpeed", "megatron": "Megatron-LM",
           "megatron-deepspeed": "Megatron-DeepSpeed", "generic": "buckets of the framework's rule"}


@dataclass(frozen=True, slots=True, kw_only=True)
class DataParallel:
    """The data-parallel schedule of a step (see the module notes).

    *rule* forms the buckets (:mod:`costmodel.step.buckets`); *overlap* reduces each bucket as soon as
    its gradients are ready, else all after the device's backward; *param_gather* and *align* place
    ZeRO 1 and 2's parameter all-gathers; *grad_element* is the bytes of a gradient element reduced.
    """

    framework: str
    zero: int
    rule: str
    bucket_bytes: Fraction | None
    overlap: bool
    param_gather: str
    align: bool
    prefetch: int
    grad_element: Fraction
    sources: tuple[Cited, ...]
    regather: bool = False  # ZeRO 3 gathers a unit's parameters again for its recomputation
    accumulate: Fraction | None = None  # a gradient element added by a kernel of its own (None: fused)
    bf16_optimizer: bool = False  # DeepSpeed's BF16_Optimizer: ZeRO 0's all-reduce, ZeRO 1's sharded states
    param_element: Fraction | None = None  # bytes of a parameter all-gathered (None: grad_element's)

    @property
    def sharding(self) -> int:
        """The ZeRO stage of the optimizer states and the parameter gathers: *zero*, or 1 under DeepSpeed's
        BF16_Optimizer, which shards its fp32 states and gathers the parameters although it all-reduces."""
        return max(self.zero, 1) if self.bf16_optimizer else self.zero

    @property
    def param_ratio(self) -> Fraction:
        """A gathered parameter's bytes over a reduced gradient element's: 1/2 where bf16 parameters meet fp32
        gradients (Megatron-LM's distributed optimizer, DeepSpeed's BF16_Optimizer), else 1."""
        return Fraction(1) if self.param_element is None else self.param_element / self.grad_element

    @property
    def gathers(self) -> bool:
        """Whether the updated parameters are all-gathered after the optimizer (or in the next forward)."""
        return self.sharding in (1, 2)

    @property
    def mode(self) -> str:
        """The schedule in words, for the step's heading: ``Megatron-LM, distributed optimizer, …``."""
        parts = [] if self.framework == "generic" else [_TITLES[self.framework]]
        if self.framework == "megatron" and self.zero == 1:
            parts.append("distributed optimizer")
        elif self.framework == "fsdp":
            parts.append("FULL_SHARD" if self.zero == 3 else "SHARD_GRAD_OP")
        elif self.bf16_optimizer:
            parts.append("BF16_Optimizer")
        elif self.zero:
            parts.append(f"ZeRO {self.zero}")
        if self.bf16_optimizer:
            parts.append(f"{self.rule} buckets all-reduced in fp32 after the backward")
        elif self.zero < 3:
            what = "all-reduced" if self.zero == 0 else "reduce-scattered"
            when = "as the backward makes them" if self.overlap else "after the backward"
            parts.append(f"{self.rule} buckets {what} {when}")
        else:
            parts.append("each layer all-gathered and reduce-scattered")
        if self.gathers:
            gather = "after the optimizer"
            if self.param_gather == "overlap":
                gather = "in the next forward" + ("" if self.align else ", each stage at its first forward")
            parts.append(f"parameters gathered {gather}")
        return ", ".join(parts)


def zero_stages(framework: str | None) -> tuple[int, ...]:
    """The ZeRO stages *framework* has (``None``: the generic schedule's, 0 to 3); ZeRO 1 is Megatron-LM's
    distributed optimizer.

    >>> zero_stages("megatron")
    (0, 1)
    """
    return _ZERO[framework or "generic"]


def data_parallel(*, framework: str | None, zero: int, buckets: str | None, bucket_bytes: Fraction | None,
                  overlap_grad_reduce: bool | None, param_gather: str, align_param_gather: bool,
                  prefetch: int | None, dtype: str, pp: int) -> DataParallel:
    """The schedule of *framework* with the given switches, checked (see the module notes).

    Raises :class:`~costmodel.errors.InputError` for a ZeRO stage the framework does not have, ZeRO 3 with
    a pipeline, a prefetch without ZeRO 3, or a parameter gather without ZeRO 1 or 2.
    """
    framework = framework or "generic"
    if framework == "fsdp" and zero == 0:
        zero = 3  # FSDP's default sharding strategy, FULL_SHARD
    if zero not in _ZERO[framework]:
        stages = ", ".join(map(str, _ZERO[framework]))
        hint = "; ZeRO 3 in PyTorch is framework=fsdp" if framework == "ddp" else ""
        raise InputError(f"zero={zero} is not a stage of framework={framework}, which has {stages}{hint}")
    if zero == 3 and pp > 1:
        raise InputError(f"zero=3 with pp={pp}: parameter sharding across a pipeline is not modelled "
                         "(DeepSpeed's pipeline engine refuses ZeRO 2 and 3); use zero=1 with pp > 1")
    if prefetch is not None and zero != 3:
        raise InputError(f"prefetch={prefetch!r} applies only to zero=3 (the parameter all-gathers); drop it")
    if param_gather == "overlap" and zero not in (1, 2):
        raise InputError(f"param_gather=overlap applies to zero=1 or 2 (the parameters gathered after the "
                         f"optimizer); zero={zero} gathers none, drop it")
    overlap = _OVERLAP[framework] if overlap_grad_reduce is None else overlap_grad_reduce
    if zero == 3 and overlap_grad_reduce is False:
        raise InputError("overlap_grad_reduce=False with zero=3: ZeRO 3 reduce-scatters each unit's gradient "
                         "as the backward makes it; drop overlap_grad_reduce")
    if framework == "deepspeed" and zero == 3 and overlap_grad_reduce is None:
        overlap = True  # stage 3's overlap_comm defaults on
    # the generic schedule: gradients in the dtype's element
    grad = Fraction(2) if dtype in ("bf16", "fp16", "fp8") else Fraction(4)
    if framework == "ddp" or (framework == "megatron" and dtype == "bf16"):
        grad = Fraction(4)  # AMP's fp32 parameters; Megatron's fp32 gradient accumulation with bf16
    # Megatron-LM accumulates weight gradients inside the weight-gradient products when it keeps fp32 main
    # gradients (bf16: gradient_accumulation_fusion); everyone else adds each micro-batch's gradient to the
    # buffer with a kernel of its own (autograd's AccumulateGrad, Megatron's main_grad.add_ hook in fp16)
    fused = framework == "megatron" and dtype == "bf16"
    # DeepSpeed's engine with bf16 and ZeRO 0 runs its BF16_Optimizer: fp32 gradients, all-reduced
    bf16_optimizer = framework in DEEPSPEED_ENGINE and dtype == "bf16" and zero == 0
    if bf16_optimizer:
        grad = Fraction(4)
    # the parameters gathered after the optimizer: the model's weights, bf16 beside fp32 gradients
    weight = grad if framework == "ddp" else Fraction(2) if dtype in ("bf16", "fp16", "fp8") else Fraction(4)
    return DataParallel(framework=framework, zero=zero, rule=buckets or _RULES[framework],
                        regather=zero == 3 and framework == "deepspeed", accumulate=None if fused else grad,
                        bucket_bytes=bucket_bytes, overlap=overlap, param_gather=param_gather,
                        align=align_param_gather, prefetch=FSDP_PREFETCH if prefetch is None else prefetch,
                        grad_element=grad, bf16_optimizer=bf16_optimizer, param_element=weight,
                        sources=_SOURCES[framework] + (BF16_OPTIMIZER if bf16_optimizer else ()))


def pipeline_sends(framework: str | None, *, schedule: str, given: str | None = None) -> str:
    """How *framework* sends between pipeline stages under *schedule*: *given* when set, else the
    framework's own (see the module notes): ``blocking`` for Megatron-LM (``overlap`` in its interleaved
    schedule), ``scatter-gather`` for DeepSpeed and Megatron-DeepSpeed (blocking, each tensor-parallel rank
    sending 1/t), ``overlap`` otherwise.

    >>> pipeline_sends("megatron", schedule="1f1b"), pipeline_sends("megatron", schedule="interleaved")
    ('blocking', 'overlap')
    >>> pipeline_sends("megatron-deepspeed", schedule="1f1b")
    'scatter-gather'
    """
    if given is not None:
        return given
    if framework == "megatron":
        return "overlap" if schedule == "interleaved" else "blocking"
    return "scatter-gather" if framework in DEEPSPEED_ENGINE else "overlap"


def tp_overlap(framework: str | None, *, given: str | None = None) -> str:
    """Whether *framework* runs the backward's tensor-parallel collectives beside its products: *given*
    when set, else ``backward`` for Megatron-LM and ``none`` otherwise (see the module notes).

    >>> tp_overlap("megatron"), tp_overlap("ddp"), tp_overlap("megatron", given="none")
    ('backward', 'none', 'none')
    """
    if given is not None:
        return given
    return "backward" if framework == "megatron" else "none"
