#!/usr/bin/env python3
"""Time whole training steps of GPT- and Llama-shaped models on one GPU, as a table costmodel validate reads.

    python benchmarks/gpu_step.py --out steps --attention cudnn  # all of CONFIGS on GPU 0
    costmodel validate steps/steps.csv --gpu h200                # predicted against measured
    costmodel validate steps/steps.csv --gpu compute.toml        # with a `calibrate compute` profile

Each configuration is a decoder-only transformer built from PyTorch's own kernels as Megatron-LM runs a
layer on one GPU, so that what is timed is what ``costmodel step`` prices (costmodel/step/ops.py):

* bf16 weights; fp32 main gradients that the weight-gradient products accumulate into (Megatron-LM's
  gradient accumulation fusion: ``torch.addmm`` with ``out_dtype`` where this PyTorch has it, else a bf16
  product added in, which the JSON records); the other gradients (embedding, norms, biases) added into
  their main gradients after the backward;
* flash attention through ``F.scaled_dot_product_attention`` (causal, FlashAttention's kernel forced, or
  cuDNN's with ``--attention cudnn``), or with ``--attention unfused`` attention as Megatron-LM ran it
  before FlashAttention: two batched products with a fused scale-mask-softmax (compiled) and a dropout
  on the probabilities (GPT's rows) between them;
* with ``--recompute full``, each layer checkpointed (``torch.utils.checkpoint``): its forward runs
  again in its backward, as Megatron-LM's full recomputation of one layer at a time.  The unfused path
  is PyTorch's, not Megatron-LM's CUDA kernels: on an H200 (PyTorch 2.11) the compiled scale-mask-softmax
  ran at 17 % of the memory bandwidth forward and 41 % backward over rows of 2048, and the products of
  transposed heads add copies, so its step times measure this code, not the model's unfused pricing;
* ``F.layer_norm`` (GPT) or ``F.rms_norm`` (Llama); a GeLU FFN (GPT) or SwiGLU (Llama); the
  bias-dropout-add after attention and after the FFN and the SwiGLU product fused by ``torch.compile``
  (Megatron-LM fuses them with TorchScript; ``--no-compile`` or a PyTorch without a working compiler
  leaves them as PyTorch's separate kernels, which the JSON records);
* the logits through the input embedding's weight (tied), and a cross entropy in fp32;
* the optimizer step of Megatron-LM's mixed-precision optimizer: the gradient norm (clipping at 1.0,
  read back as Megatron-LM reads it), a fused Adam over fp32 master weights, the master weights copied
  to the bf16 ones, and the main gradients zeroed for the next step.

A step is ``microbatches`` forward and backward passes of ``micro_batch`` sequences, then the
optimizer.  Each configuration runs ``--warmup`` steps, then ``--steps`` timed ones; a step's time is
CUDA events around it (the host waits for the GPU only at the gradient norm, as Megatron-LM does), and
the table keeps the median step.  The configurations are fixed in :data:`CONFIGS`, chosen for their
shapes (hidden sizes 1024 to 8192, sequences 2048 to 8192, heads of 64 to 128 channels, GQA, one
configuration with two micro-batches) and to fit a GPU of 80 GB; none was chosen or changed after
looking at a prediction.

Writes, in ``--out``:

* ``steps.csv``: the validation table (``costmodel validate``'s format, costmodel/validation), one
  row per configuration with the measured ``iteration_s``;
* ``steps.json``: each configuration's phases (forward, backward, gradient fold, norm, Adam, copy,
  zeroing: medians in seconds), every step's time, and how the step ran (the kernels it could use).

On a CPU (``--device cpu``, no compiler) it runs the same code on the tiny configuration, so that
the suite covers it; its times say nothing about a GPU.  Needs PyTorch, not costmodel.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Config:
    """One model and its batch; ``ffn`` is the FFN width over the hidden size, ``kv_groups`` 0 for none."""

    label: str
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int
    ffn: float = 4
    kv_groups: int = 0
    gated: bool = False
    micro_batch: int = 1
    microbatches: int = 1
    dropout: bool = True

    @property
    def llama(self) -> bool:
        return self.gated


CONFIGS = (
    Config("gpt-350m", 24, 1024, 16, 2048, 50304, micro_batch=8),
    Config("gpt-1.3b", 24, 2048, 16, 2048, 50304, micro_batch=4),
    Config("gpt-2.7b", 32, 2560, 32, 2048, 50304, micro_batch=2, microbatches=2),
    Config("gpt-h4096-l8", 8, 4096, 32, 2048, 50304, micro_batch=4),
    Config("gpt-h8192-l2", 2, 8192, 64, 2048, 50304, micro_batch=2),
    Config("gpt-1.3b-s8192", 24, 2048, 16, 8192, 50304, micro_batch=1),
    Config(
        "llama-1b", 16, 2048, 32, 4096, 128256, ffn=4, kv_groups=8, gated=True, micro_batch=2, dropout=False
    ),
    Config(
        "llama-h4096-l4",
        4,
        4096,
        32,
        8192,
        128256,
        ffn=3.5,
        kv_groups=8,
        gated=True,
        micro_batch=1,
        dropout=False,
    ),
)
"""The configurations timed on a GPU, in order."""

TINY = (
    Config("tiny-gpt", 2, 64, 4, 32, 128, micro_batch=2, microbatches=2),
    Config("tiny-llama", 2, 64, 4, 32, 128, ffn=3, kv_groups=2, gated=True, micro_batch=2, dropout=False),
)
"""The configurations of a CPU run."""

DROPOUT = 0.1
"""GPT's hidden dropout (after attention and after the FFN); no dropout on the attention probabilities."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True, help="folder for steps.csv and steps.json")
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    p.add_argument("--configs", default="", help="comma-separated labels (default: all)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument(
        "--no-compile", action="store_true", help="leave the fused elementwise kernels to eager PyTorch"
    )
    p.add_argument(
        "--attention",
        choices=("flash", "cudnn", "unfused"),
        default="flash",
        help="SDPA's kernel: FlashAttention-2 (default) or cuDNN's fused attention; or unfused: two batched "
        "products with a fused scale-mask-softmax and a dropout between them, as Megatron-LM ran attention "
        "before FlashAttention",
    )
    p.add_argument(
        "--recompute",
        choices=("none", "full"),
        default="none",
        help="full: each layer's forward run again in its backward (torch.utils.checkpoint per layer, as "
        "Megatron-LM's --recompute-granularity full --recompute-method uniform --recompute-num-layers 1)",
    )
    p.add_argument(
        "--gpu",
        default="",
        help="the costmodel GPU preset or file the table is priced on "
        "(a '# default: gpu = NAME' line; default: none, give costmodel validate --gpu)",
    )
    p.add_argument(
        "--profile", action="store_true", help="one more step under torch.profiler: kernel time by kind"
    )
    p.add_argument(
        "--limit", type=float, default=600.0, help="seconds: stop before a configuration past this"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import torch

    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    if on_gpu and not torch.cuda.is_available():
        print("error: no CUDA device is visible; pass --device cpu for a dry run", file=sys.stderr)
        return 2
    dtype = torch.bfloat16
    pool = CONFIGS if on_gpu else TINY
    chosen = [c for c in pool if not args.configs or c.label in args.configs.split(",")]
    if not chosen:
        print(
            f"error: no configuration is named {args.configs!r}; known: {', '.join(c.label for c in pool)}",
            file=sys.stderr,
        )
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    kernels = _Kernels(
        torch,
        device,
        dtype,
        compile_=on_gpu and not args.no_compile,
        attention=args.attention,
        recompute=args.recompute == "full",
    )
    started = time.monotonic()
    results = []
    for config in chosen:
        if time.monotonic() - started > args.limit:
            print(f"stopping before {config.label}: past --limit {args.limit:g} s", file=sys.stderr)
            break
        results.append(
            _measure(
                torch,
                config,
                device,
                dtype,
                kernels,
                warmup=args.warmup,
                steps=args.steps,
                profile=args.profile,
            )
        )
        r = results[-1]
        print(
            f"{config.label:16} step {r['iteration_s'] * 1e3:9.3f} ms"
            f"  forward {r['phases']['forward'] * 1e3:8.3f}"
            f"  backward {r['phases']['backward'] * 1e3:8.3f}  optimizer {r['optimizer_s'] * 1e3:7.3f}"
            f"  ({r['spread']:.1%} p90/p10)",
            flush=True,
        )
        if on_gpu:
            torch.cuda.empty_cache()
    about = _about(torch, device, kernels)
    (args.out / "steps.json").write_text(json.dumps({"about": about, "runs": results}, indent=1) + "\n")
    _write_csv(args.out / "steps.csv", about, results, gpu=args.gpu)
    print(f"wrote {args.out / 'steps.csv'} and {args.out / 'steps.json'}")
    return 0


class _Kernels:
    """How this PyTorch runs the pieces: probed once on small tensors, recorded in the JSON."""

    def __init__(
        self, torch, device, dtype, *, compile_: bool, attention: str = "flash", recompute: bool = False
    ):
        import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

        self.torch, self.F = torch, F
        self.fused_wgrad = self._probe_wgrad(torch, device, dtype)
        self.compiled = False
        self.bias_dropout_add = _bias_dropout_add
        self.swiglu = _swiglu
        self.masked_softmax = _masked_softmax
        self.recompute = recompute
        if compile_:
            try:
                import torch._dynamo

                for limit in ("cache_size_limit", "recompile_limit"):  # a compile per shape and bias: many
                    if hasattr(torch._dynamo.config, limit):
                        setattr(torch._dynamo.config, limit, 256)
                bda = torch.compile(_bias_dropout_add)
                swi = torch.compile(_swiglu)
                msm = torch.compile(_masked_softmax)
                x = torch.randn(8, 16, device=device, dtype=dtype, requires_grad=True)
                bda(x, None, x.detach(), 0.1, True).sum().backward()
                swi(torch.randn(8, 32, device=device, dtype=dtype, requires_grad=True)).sum().backward()
                scores = torch.randn(1, 2, 16, 16, device=device, dtype=dtype, requires_grad=True)
                msm(scores, 0.25).sum().backward()
                self.bias_dropout_add, self.swiglu, self.masked_softmax = bda, swi, msm
                self.compiled = True
            except Exception as exc:  # no working compiler: PyTorch's own kernels, said in the JSON
                self.compile_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        self.flash = device.type == "cuda" and attention != "unfused"
        self.backend = attention
        self.gqa = self._probe_gqa(torch, device, dtype)

    @staticmethod
    def _probe_wgrad(torch, device, dtype) -> bool:
        a = torch.randn(64, 32, device=device, dtype=dtype)
        b = torch.randn(64, 48, device=device, dtype=dtype)
        main = torch.ones(32, 48, device=device, dtype=torch.float32)
        try:
            torch.addmm(main, a.t(), b, out_dtype=torch.float32, out=main)
        except Exception:
            return False
        want = 1 + a.t().float() @ b.float()
        return bool(torch.allclose(main, want, rtol=2e-2, atol=2e-1))

    def _probe_gqa(self, torch, device, dtype) -> bool:
        q = torch.randn(1, 4, 16, 64, device=device, dtype=dtype)
        kv = torch.randn(1, 2, 16, 64, device=device, dtype=dtype)
        try:
            with self._sdpa_context():
                self.F.scaled_dot_product_attention(q, kv, kv, is_causal=True, enable_gqa=True)
        except Exception:
            return False
        return True

    def _sdpa_context(self):
        import contextlib

        if not self.flash:
            return contextlib.nullcontext()
        from torch.nn.attention import SDPBackend, sdpa_kernel

        return sdpa_kernel(
            SDPBackend.CUDNN_ATTENTION if self.backend == "cudnn" else SDPBackend.FLASH_ATTENTION
        )

    def accumulate(self, main, a, b) -> None:
        """main += a·b in fp32 (a weight gradient into its main gradient)."""
        if self.fused_wgrad:
            self.torch.addmm(main, a, b, out_dtype=self.torch.float32, out=main)
        else:
            main.add_(a @ b)

    def attention(self, q, k, v, p_drop: float = 0.0):
        """The causal attention of q, k and v ([b, heads, s, d]); *p_drop*: the unfused path's dropout on the
        probabilities (the fused kernels run none, as the steps priced with them have none)."""
        groups = q.shape[1] // k.shape[1]
        if self.backend == "unfused":
            if groups > 1:  # Megatron-LM repeats the key-value heads for the products
                k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            scores = self.torch.matmul(q, k.transpose(-1, -2))
            probs = self.masked_softmax(scores, 1.0 / math.sqrt(q.shape[-1]))
            if p_drop:
                probs = self.F.dropout(probs, p=p_drop, training=True)
            return self.torch.matmul(probs, v)
        if groups > 1 and not self.gqa:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        with self._sdpa_context():
            if groups > 1 and self.gqa:
                return self.F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            return self.F.scaled_dot_product_attention(q, k, v, is_causal=True)


def _bias_dropout_add(x, bias, residual, p: float, training: bool):
    import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

    if bias is not None:
        x = x + bias
    return residual + F.dropout(x, p=p, training=training)


def _masked_softmax(scores, scale: float):
    """Megatron-LM's fused scale, causal mask and softmax over the last dimension (one kernel each way when
    compiled: the scores read, the probabilities written; backward, the probabilities and their gradient
    read, the scores' gradient written)."""
    import torch

    s = scores.shape[-1]
    above = torch.ones(s, s, dtype=torch.bool, device=scores.device).triu(1)
    return torch.softmax((scores * scale).masked_fill(above, float("-inf")), dim=-1)


def _swiglu(x):
    import torch.nn.functional as F  # noqa: N812 (torch's own spelling)

    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def _linear_function(torch, kernels):
    class Linear(torch.autograd.Function):
        """y = x·Wᵀ (+ b); the weight's gradient goes into ``weight.main_grad`` (fp32), not ``.grad``."""

        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            ctx.has_bias = bias is not None
            ctx.main_grad = weight.main_grad  # (a recomputed layer's saved weight is another tensor object)
            x2 = x.reshape(-1, x.shape[-1])
            y = torch.addmm(bias, x2, weight.t()) if bias is not None else x2 @ weight.t()
            return y.view(*x.shape[:-1], weight.shape[0])

        @staticmethod
        def backward(ctx, dy):
            x, weight = ctx.saved_tensors
            dy2 = dy.reshape(-1, dy.shape[-1])
            dx = (dy2 @ weight).view(x.shape)
            kernels.accumulate(ctx.main_grad, dy2.t(), x.reshape(-1, x.shape[-1]))
            return dx, None, (dy2.sum(0) if ctx.has_bias else None)

    return Linear.apply


def _model(torch, config: Config, device, dtype, kernels):
    """The parameters (bf16, each with an fp32 ``main_grad``) and the forward function of one micro-batch."""
    F = torch.nn.functional  # noqa: N806 (torch's own spelling)
    h, a = config.hidden, config.heads
    d = h // a
    g = config.kv_groups or a
    f = round(config.ffn * h)
    gpt = not config.gated
    from torch.utils.checkpoint import checkpoint

    linear = _linear_function(torch, kernels)
    std = 0.02

    def weight(*shape):
        return (torch.randn(*shape, device=device, dtype=torch.float32) * std).to(dtype).requires_grad_()

    def vector(n, value=0.0):
        return torch.full((n,), value, device=device, dtype=dtype).requires_grad_()

    embedding = weight(config.vocab, h)
    layers = []
    for _ in range(config.layers):
        layer = {
            "norm1": vector(h, 1.0),
            "qkv": weight((a + 2 * g) * d, h),
            "proj": weight(h, a * d),
            "norm2": vector(h, 1.0),
            "fc1": weight((2 if config.gated else 1) * f, h),
            "fc2": weight(h, f),
        }
        if gpt:
            layer |= {
                "norm1_b": vector(h),
                "norm2_b": vector(h),
                "qkv_b": vector((a + 2 * g) * d),
                "proj_b": vector(h),
                "fc1_b": vector(f),
                "fc2_b": vector(h),
            }
        layers.append(layer)
    final = {"norm": vector(h, 1.0)} | ({"norm_b": vector(h)} if gpt else {})
    params = [embedding, *(p for layer in layers for p in layer.values()), *final.values()]
    for p in params:
        p.main_grad = torch.zeros(p.shape, device=device, dtype=torch.float32)
    p_drop = DROPOUT if config.dropout else 0.0

    def norm(x, w, b):
        return F.layer_norm(x, (h,), w, b) if gpt else F.rms_norm(x, (h,), w)

    def forward(tokens, labels):
        b, s = tokens.shape
        x = F.embedding(tokens, embedding)
        if p_drop:
            x = F.dropout(x, p=p_drop, training=True)
        def layer(x, L):  # noqa: N803 (a layer's weights)
            y = norm(x, L["norm1"], L.get("norm1_b"))
            qkv = linear(y, L["qkv"], L.get("qkv_b"))
            q, k, v = qkv.split([a * d, g * d, g * d], dim=-1)
            q = q.view(b, s, a, d).transpose(1, 2)
            k = k.view(b, s, g, d).transpose(1, 2)
            v = v.view(b, s, g, d).transpose(1, 2)
            context = kernels.attention(q, k, v, p_drop).transpose(1, 2).reshape(b, s, a * d)
            out = linear(context, L["proj"], None)
            x = kernels.bias_dropout_add(out, L.get("proj_b"), x, p_drop, True)
            y = norm(x, L["norm2"], L.get("norm2_b"))
            if gpt:
                y = F.gelu(linear(y, L["fc1"], L["fc1_b"]), approximate="tanh")
            else:
                y = kernels.swiglu(linear(y, L["fc1"], None))
            out = linear(y, L["fc2"], None)
            return kernels.bias_dropout_add(out, L.get("fc2_b"), x, p_drop, True)

        for L in layers:  # noqa: N806 (a layer's weights)
            # with recomputation the layer's input is kept and its forward run again in the backward
            x = checkpoint(layer, x, L, use_reentrant=False) if kernels.recompute else layer(x, L)
        x = norm(x, final["norm"], final.get("norm_b"))
        logits = linear(x, embedding, None)
        return F.cross_entropy(logits.float().view(-1, config.vocab), labels.view(-1))

    return params, forward


def _measure(  # noqa: PLR0915 (one step's phases, timed in place)
    torch, config: Config, device, dtype, kernels, *, warmup: int, steps: int, profile: bool = False
) -> dict:
    torch.manual_seed(0)
    params, forward = _model(torch, config, device, dtype, kernels)
    master = [p.detach().float().clone() for p in params]
    for m, p in zip(master, params, strict=True):
        m.grad = p.main_grad
    on_gpu = device.type == "cuda"
    optimizer = torch.optim.Adam(master, lr=1e-4, **({"fused": True} if on_gpu else {"foreach": True}))
    grads = [p.main_grad for p in params]
    batches = [
        (
            torch.randint(0, config.vocab, (config.micro_batch, config.seq), device=device),
            torch.randint(0, config.vocab, (config.micro_batch, config.seq), device=device),
        )
        for _ in range(config.microbatches)
    ]
    phases = ("forward", "backward", "fold", "norm", "adam", "copy", "zero")

    def clock():
        if on_gpu:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def seconds(a, b):
        return a.elapsed_time(b) / 1e3 if on_gpu else b - a

    def step():
        marks = {"start": clock()}
        fwd = bwd = 0.0
        for tokens, labels in batches:
            t0 = clock()
            loss = forward(tokens, labels) / config.microbatches
            t1 = clock()
            loss.backward()
            t2 = clock()
            marks.setdefault("passes", []).append((t0, t1, t2))
        for p in params:  # the gradients that no fused product accumulated: embedding, norms, biases
            if p.grad is not None:
                p.main_grad.add_(p.grad)
                p.grad = None
        marks["fold"] = clock()
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        coefficient = 1.0 / (float(norm) + 1e-6)  # the host reads the norm, as Megatron-LM does
        if coefficient < 1.0:
            torch._foreach_mul_(grads, coefficient)
        marks["norm"] = clock()
        optimizer.step()
        marks["adam"] = clock()
        with torch.no_grad():
            torch._foreach_copy_(params, master)
        marks["copy"] = clock()
        torch._foreach_zero_(grads)
        marks["zero"] = clock()
        if on_gpu:
            marks["zero"].synchronize()
        for t0, t1, t2 in marks["passes"]:
            fwd += seconds(t0, t1)
            bwd += seconds(t1, t2)
        last = marks["passes"][-1][2]
        times = {
            "forward": fwd,
            "backward": bwd,
            "fold": seconds(last, marks["fold"]),
            "norm": seconds(marks["fold"], marks["norm"]),
            "adam": seconds(marks["norm"], marks["adam"]),
            "copy": seconds(marks["adam"], marks["copy"]),
            "zero": seconds(marks["copy"], marks["zero"]),
        }
        times["step"] = seconds(marks["start"], marks["zero"])
        return times

    for _ in range(warmup):
        step()
    samples = [step() for _ in range(steps)]
    kernels_by_kind = _profile(torch, step, on_gpu=on_gpu) if profile else None
    totals = sorted(s["step"] for s in samples)
    median = statistics.median(totals)
    p10, p90 = totals[len(totals) // 10], totals[min(len(totals) - 1, math.ceil(len(totals) * 9 / 10) - 1)]
    n_params = sum(p.numel() for p in params)
    peak = torch.cuda.max_memory_allocated(device) if on_gpu else 0
    if on_gpu:
        torch.cuda.reset_peak_memory_stats(device)
    phase_medians = {k: statistics.median(s[k] for s in samples) for k in phases}
    return {
        "config": asdict(config),
        "parameters": n_params,
        "iteration_s": median,
        "steps_s": [s["step"] for s in samples],
        "spread": p90 / p10 - 1,
        "phases": phase_medians,
        "optimizer_s": sum(phase_medians[k] for k in ("fold", "norm", "adam", "copy", "zero")),
        "peak_memory_bytes": peak,
        **({"kernels": kernels_by_kind} if profile else {}),
    }


KINDS = (
    ("attention", ("flash", "fmha", "cudnn")),  # first: FlashAttention's kernels name their CUTLASS templates
    ("gemm", ("gemm", "nvjet", "cutlass", "xmma", "cublas", "aten::mm", "aten::addmm", "aten::bmm")),
    ("optimizer", ("adam", "multi_tensor", "foreach")),
    ("norm", ("layer_norm", "rms_norm", "layernorm")),
    ("cross entropy", ("log_softmax", "nll_loss", "softmax")),
    ("compiled", ("triton",)),
    ("embedding", ("embedding", "index", "indexing")),
    ("dropout", ("dropout", "fused_dropout")),
)
"""Kernel kinds by the words in their names (the first kind whose word a name holds); the rest: other."""


def _profile(torch, step, *, on_gpu: bool) -> dict:
    """One more step under torch.profiler: the GPU time of its kernels by kind, and the largest kernels (on a
    CPU, the operators' own CPU time)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA if on_gpu else ProfilerActivity.CPU]) as prof:
        step()
    kinds: dict[str, float] = {}
    names: dict[str, list] = {}
    for event in prof.events():
        if on_gpu and event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        seconds = (event.device_time_total if on_gpu else event.self_cpu_time_total) / 1e6
        lower = event.name.lower()
        kind = next((k for k, words in KINDS if any(w in lower for w in words)), "other")
        kinds[kind] = kinds.get(kind, 0.0) + seconds
        entry = names.setdefault(event.name[:120], [kind, 0, 0.0])
        entry[1] += 1
        entry[2] += seconds
    top = sorted(names.items(), key=lambda kv: -kv[1][2])[:25]
    return {
        "by_kind_s": kinds,
        "kernels": sum(v[1] for v in names.values()),
        "largest": [{"name": n, "kind": k, "calls": c, "s": t} for n, (k, c, t) in top],
    }


def _about(torch, device, kernels) -> dict:
    about = {
        "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "fused_weight_gradient": kernels.fused_wgrad,
        "compiled": kernels.compiled,
        "flash_attention": kernels.flash,
        "attention_kernel": kernels.backend if kernels.flash or kernels.backend == "unfused" else "math",
        "recompute": "full" if kernels.recompute else "none",
        "gqa_in_kernel": kernels.gqa,
    }
    if device.type == "cuda":
        prop = torch.cuda.get_device_properties(device)
        about |= {
            "gpu": prop.name,
            "sms": prop.multi_processor_count,
            "memory_bytes": prop.total_memory,
            "cuda": torch.version.cuda,
        }
    else:
        about["gpu"] = platform.processor() or platform.machine()
    if hasattr(kernels, "compile_error"):
        about["compile_error"] = kernels.compile_error
    return about


def _write_csv(path: Path, about: dict, results: list[dict], *, gpu: str = "") -> None:
    attention = (
        "unfused attention (two batched products, a scale-mask-softmax"
        + (" compiled" if about["compiled"] else "")
        + ", dropout on the probabilities in GPT's rows)"
        if about["attention_kernel"] == "unfused"
        else f"{about['attention_kernel']} attention through SDPA (causal)"
    )
    ways = ", ".join(
        [
            "weight gradients accumulated in fp32 by the product"
            if about["fused_weight_gradient"]
            else "weight gradients in bf16 added into fp32",
            "bias-dropout-add and SwiGLU compiled" if about["compiled"] else "elementwise kernels unfused",
            "GQA in the attention kernel"
            if about["gqa_in_kernel"] and about["attention_kernel"] != "unfused"
            else "GQA's keys and values repeated",
        ]
    )
    lines = [
        f"# title: training steps on one {about['gpu']}, timed with benchmarks/gpu_step.py",
        f"# source: measured with benchmarks/gpu_step.py on one {about['gpu']} ({about['date']}, PyTorch "
        f"{about['torch']}{', CUDA ' + about['cuda'] if about.get('cuda') else ''}): "
        "the median of the timed steps",
        f"# setup: {ways}; {attention}, tied embeddings, fp32 master weights, fused Adam"
        + ("; each layer's forward recomputed in its backward" if about["recompute"] == "full" else ""),
        "# default: causal = yes",
        f"# default: attention = {'unfused' if about['attention_kernel'] == 'unfused' else 'flash'}",
        *(["# default: recompute = full"] if about["recompute"] == "full" else []),
        *([f"# default: gpu = {gpu}"] if gpu else []),
        "label,layers,hidden,heads,seq,vocab,ffn,kv_groups,gated,gpus,batch,micro_batch,dropout,dtype,iteration_s",
    ]
    for r in results:
        c = r["config"]
        lines.append(
            ",".join(
                str(v)
                for v in (
                    c["label"],
                    c["layers"],
                    c["hidden"],
                    c["heads"],
                    c["seq"],
                    c["vocab"],
                    round(c["ffn"] * c["hidden"]),
                    c["kv_groups"] or "",
                    "yes" if c["gated"] else "",
                    1,
                    c["micro_batch"] * c["microbatches"],
                    c["micro_batch"],
                    "yes" if c["dropout"] else "no",
                    "bf16",
                    f"{r['iteration_s']:.6g}",
                )
            )
        )
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
