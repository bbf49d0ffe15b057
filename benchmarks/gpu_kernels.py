#!/usr/bin/env python3
"""The kernels behind each memory-bound kind ``calibrate compute`` times, one by one, on a GPU.

    python benchmarks/gpu_kernels.py            # GPU 0; --device cpu runs the same on small tensors

``calibrate compute`` times each kind of memory-bound kernel (costmodel.calibration.compute.KERNELS: a
norm, a softmax, a dropout, an activation, a cross entropy, an optimizer step) as one forward and
backward call, and divides the bytes it counts for that call by the time: the kind's achieved share of
the memory bandwidth.  The share is only right if the count is what the call's kernels move.  This
script runs the same calls under torch.profiler and prints every kernel they launch, with its time per
call and, for the kernels the count names, the bandwidth the count implies: a kernel that reads its
input twice shows up as a second kernel (or as a bandwidth above the copy's).

Prints, per kind: the counted bytes per element, the call's total GPU time, each kernel's name and share
of it; and the streaming copy's bandwidth for reference.  Needs PyTorch, not a GPU (on a CPU the
operators' CPU times, which say nothing of a GPU's kernels).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    p.add_argument("--calls", type=int, default=5, help="calls profiled per kind (after two untimed)")
    args = p.parse_args(argv)
    import torch

    from costmodel.calibration.compute import KERNELS

    device = torch.device(args.device)
    gpu = device.type == "cuda"
    if gpu and not torch.cuda.is_available():
        print("error: no CUDA device is visible; pass --device cpu for a dry run", file=sys.stderr)
        return 2
    print(f"torch {torch.__version__}" + (f", {torch.cuda.get_device_name(device)}" if gpu else ", CPU"))
    _copy(torch, device, args.calls, gpu)
    for kind in KERNELS:
        _show(torch, kind, device, args.calls, gpu)
        if gpu:
            torch.cuda.empty_cache()
    return 0


def _copy(torch, device, calls: int, gpu: bool) -> None:
    """Profile a streaming copy of float32 buffers larger than the caches and print its bandwidth."""
    x = torch.empty(1 << (28 if gpu else 22), dtype=torch.float32, device=device)
    y = torch.empty_like(x)
    seconds = _profiled(torch, lambda: y.copy_(x), calls, gpu)[0]
    moved = 2 * x.numel() * 4
    print(f"copy: {moved / seconds / 1e9:.0f} GB/s ({moved / 2**30:.2f} GiB read and written in "
          f"{seconds * 1e6:.0f} us)\n")


def _show(torch, kind: str, device, calls: int, gpu: bool) -> None:
    """Profile *kind*'s call (calibrate compute's own) and print its kernels."""
    from costmodel.calibration.compute import _ELEMENT, KERNELS, _kernel_call, _kernel_shape

    what, per_element = KERNELS[kind]
    shape, dtype = _kernel_shape(kind, "bf16" if gpu else "fp32", gpu=gpu, quick=False)
    seconds, rows = _profiled(torch, _kernel_call(torch, kind, shape, dtype, device, gpu=gpu), calls, gpu)
    elements = 1
    for n in shape:
        elements *= n
    e = _ELEMENT[dtype]
    counted = elements * per_element(e)
    print(f"{kind}: {what}")
    rate = counted / seconds / 1e9
    print(f"  {dtype} {'x'.join(map(str, shape))}: counted {per_element(e) / e:g} elements' bytes per "
          f"element, {counted / 2**30:.3f} GiB in {seconds * 1e6:.0f} us = {rate:.0f} GB/s")
    for name, launches, s in rows:
        share = s / calls / seconds
        print(f"  {launches / calls:4.1f} x {s / calls * 1e6:8.1f} us {share:6.1%}  {name[:100]}")
    print()


def _profiled(torch, call, calls: int, gpu: bool) -> tuple[float, list[tuple[str, int, float]]]:
    """*call* run twice untimed, then *calls* times under torch.profiler: the seconds a call and its
    kernels (:func:`_kernels`)."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(2):
        call()
    if gpu:
        torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA if gpu else ProfilerActivity.CPU]) as prof:
        for _ in range(calls):
            call()
        if gpu:
            torch.cuda.synchronize()
    total, rows = _kernels(prof, torch, gpu)
    return total / calls, rows


def _kernels(prof, torch, gpu: bool) -> tuple[float, list[tuple[str, int, float]]]:
    """The total time of the profiled kernels (CPU operators on a CPU) and each one's name, launches and
    seconds, largest first."""
    names: dict[str, list] = {}
    for event in prof.events():
        if gpu and event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        seconds = (event.device_time_total if gpu else event.self_cpu_time_total) / 1e6
        entry = names.setdefault(event.name, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds
    rows = sorted(((n, c, s) for n, (c, s) in names.items()), key=lambda r: -r[2])
    return sum(s for _, _, s in rows), rows


if __name__ == "__main__":
    sys.exit(main())
