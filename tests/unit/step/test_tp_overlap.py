"""The backward's tensor-parallel collectives beside its products (Megatron-LM's asynchronous all-reduce,
and sequence parallelism's gathers and reduce-scatters), against the priced products and `cost`."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import cost
from costmodel.gpus import load_gpu
from costmodel.params import combine_link
from costmodel.step import TransformerShape, step
from costmodel.step.frameworks import tp_overlap

SHAPE = TransformerShape(layers=4, hidden=2048, heads=16, sequence=1024, vocabulary=32000)
TP_LINK = combine_link(alpha="2us", beta="0.01ns/B")


def _args(**more):
    return {"shape": SHAPE, "gpu": "a100-80gb", "tp": 4, "microbatches": 2, "micro_batch": 2, "tp_link": TP_LINK,
            "dtype": "bf16", **more}


def _products(r, name):
    times = {(o.name, o.phase): o.time_s for o in r.layer_ops}
    return times[f"{name} dgrad", "backward"], times[f"{name} wgrad", "backward"]


def test_each_input_gradient_all_reduce_runs_beside_its_weight_gradient():
    """Per layer the backward's two all-reduces (QKV's and the FFN's first product's input gradients) add
    max(C·u, C − W) each instead of C, u the SMs NCCL's 12 channels take of the A100's 108."""
    none = step(**_args(tp_overlap="none"))
    back = step(**_args(tp_overlap="backward"))
    reduce = cost("allreduce", "ring", p=4, n=2 * 1024 * 2048 * 2, link=TP_LINK).time_s
    assert none.tp_allreduce_s == reduce
    u = Fraction(12, load_gpu("a100-80gb").sms)
    added = sum(max(reduce * u, reduce - _products(back, name)[1]) for name in ("QKV", "FFN in"))
    per_layer = 2 * reduce - added
    assert none.tp_comm_s - back.tp_comm_s == 2 * 4 * per_layer  # m = 2 micro-batches, 4 layers
    assert none.compute_s == back.compute_s and back.step_s < none.step_s
    assert (back.tp_overlap, none.tp_overlap) == ("backward", "none")
    assert any("asynchronous all-reduce" in n for n in back.notes)


def test_sequence_parallelism_gathers_the_input_again_for_the_weight_gradient():
    """With sequence parallelism a layer's backward has each column product's gather of its input and
    reduce-scatter of its input gradient, and each row product's gather of its output gradient: 4 gathers
    and 2 reduce-scatters between the products, or beside them."""
    n = 2 * 1024 * 2048 * 2
    gather = cost("allgather", "ring", p=4, n=n, link=TP_LINK).time_s
    scatter = cost("reduce-scatter", "ring", p=4, n=n, link=TP_LINK).time_s
    none = step(**_args(tp_overlap="none", sequence_parallel=True))
    back = step(**_args(tp_overlap="backward", sequence_parallel=True))
    forward = 2 * (gather + scatter)
    ends = 2 * (gather + scatter)  # the embedding's and the output layer's, once each a micro-batch
    assert none.tp_comm_s == 2 * (4 * (forward + 4 * gather + 2 * scatter) + ends)
    u = Fraction(12, load_gpu("a100-80gb").sms)
    beside = sum(max(gather * u, gather - d) + max(scatter * u, scatter - w)
                 for d, w in (_products(back, "QKV"), _products(back, "FFN in")))
    assert back.tp_comm_s == 2 * (4 * (forward + 2 * gather + beside) + ends)
    assert any("gathers its input again" in n for n in back.notes + none.notes)


def test_megatron_overlaps_by_default_and_the_others_do_not():
    assert tp_overlap("megatron") == "backward" and tp_overlap(None) == tp_overlap("deepspeed") == "none"
    assert step(**_args(framework="megatron")).tp_overlap == "backward"
    assert step(**_args()).tp_overlap == "none"
    assert step(**_args(tp=1)).tp_overlap == ""


def test_per_layer_times_have_no_products_to_hide_behind():
    """Without products priced one by one, nothing is hidden: backward prices as none."""
    args = {"forward_s": ["1ms"] * 4, "backward_s": ["2ms"] * 4, "tp": 2, "activation_bytes": "8MiB",
            "link": TP_LINK}
    assert step(**args, tp_overlap="backward").step_s == step(**args, tp_overlap="none").step_s


def test_an_unknown_overlap_is_refused_with_the_names():
    from costmodel.errors import InputError

    with pytest.raises(InputError, match="none, backward"):
        step(**_args(tp_overlap="forward"))
