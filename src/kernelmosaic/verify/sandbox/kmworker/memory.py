"""Peak device memory of one forward, beyond what was allocated before it (inputs, weights, the worker's own buffers).

CUDA only: the caching allocator's peak counter, reset just before the call. A figure from the worker's process, so a
candidate's native code could lower it; it is reported as a metric, never used to accept or reject. The reference's
figure (measured in the reference worker, where no candidate code runs) sizes a judgement's memory admission
(`verify/device_memory.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["forward_peak_bytes", "peak_into"]


@contextlib.contextmanager
def peak_into(device: str, into: dict | None) -> Iterator[None]:
    """With `into` on CUDA: the block's peak device memory beyond what was allocated before it (the forward's
    intermediates and outputs) as `into["peak_bytes"]`. Nothing is measured on the CPU or without `into`."""
    if into is None or not device.startswith("cuda"):
        yield
        return
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    yield
    torch.cuda.synchronize()
    into["peak_bytes"] = max(int(torch.cuda.max_memory_allocated() - base), 0)


@torch.no_grad()
def forward_peak_bytes(model, inputs: list, device: str) -> int | None:
    if not device.startswith("cuda"):
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = model(*inputs)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return max(int(peak), 0)
